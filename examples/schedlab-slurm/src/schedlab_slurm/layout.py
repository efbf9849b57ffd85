"""Records of ``sacct --parsable2`` output: columns, line joining and pipe alignment.

``--parsable2`` separates fields with ``|`` and escapes nothing, so a job name, a
constraint list or a submit line that contains ``|`` yields more fields than there
are columns, and a submit line that contains a newline spans several lines. This
module puts such records back together:

* a physical line with fewer fields than columns is joined with the following
  lines (with the newline kept) as long as those are not complete records
  themselves;
* a record with too many fields is aligned with the columns: only free-text columns
  (:data:`FREE_TEXT`) may hold ``|``; every other column must match the pattern of
  its kind (a time, a duration, a number ...). Among the alignments that fit, the
  one chosen has the fewest free-text values that begin with ``|`` (counted twice)
  or end with ``|``, then the fewest free-text values containing ``|``, then puts
  the ``|`` in the earliest column. When the record is still ambiguous (a ``|``
  beside empty fields), this rule is what decides; it is deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

#: The columns that identify a job and its times and outcome, first in both layouts.
_JOB_COLUMNS: tuple[str, ...] = (
    "JobID",
    "JobIDRaw",
    "Cluster",
    "Partition",
    "QOS",
    "Account",
    "Group",
    "GID",
    "User",
    "UID",
    "Submit",
    "Eligible",
    "Start",
    "End",
    "Elapsed",
    "ExitCode",
    "State",
)

#: The column order of headerless dumps, as Open XDMoD's Slurm helper asks sacct
#: for them (``--format jobid,jobidraw,cluster,...``).
XDMOD_COLUMNS: tuple[str, ...] = (
    *_JOB_COLUMNS,
    "NNodes",
    "NCPUS",
    "ReqCPUS",
    "ReqMem",
    "ReqTRES",
    "AllocTRES",
    "Timelimit",
    "NodeList",
    "JobName",
)

#: Columns written for a workload that did not come from sacct (no column list known).
DEFAULT_COLUMNS: tuple[str, ...] = (
    *_JOB_COLUMNS,
    "NNodes",
    "AllocCPUS",
    "ReqCPUS",
    "ReqMem",
    "Timelimit",
    "TotalCPU",
    "MaxRSS",
    "NodeList",
    "JobName",
)

#: Columns whose text is chosen by users or admins and may contain ``|`` or newlines.
FREE_TEXT = frozenset(
    {
        "AdminComment",
        "Comment",
        "Constraints",
        "Container",
        "Extra",
        "FailedNode",
        "JobName",
        "Licenses",
        "McsLabel",
        "Reservation",
        "StdErr",
        "StdIn",
        "StdOut",
        "SubmitLine",
        "SystemComment",
        "WCKey",
        "WorkDir",
    }
)

_P = {
    "time": r"[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]|Unknown|None|N/A",
    "duration": r"(?:[0-9]+-)?(?:[0-9]+:)?[0-9]+:[0-9]+(?:\.[0-9]+)?"
    r"|UNLIMITED|Partition_Limit|INVALID|NONE",
    "int": r"-?[0-9]+",
    "jobid": r"[0-9]+(?:[_+](?:[0-9]+|\[[^\]|]*\]))?(?:\.[^.|\s]+)?",
    "exit": r"[0-9]+:[0-9]+",
    "state": r"[A-Z_]+\+?(?: by -?[0-9]+)?",
    "mem": r"[0-9]+(?:\.[0-9]+)?[KMGTP]?[cn]?",
    "tres": r"[\w/:.-]+=[^,|]*(?:,[\w/:.-]+=[^,|]*)*",
    "nodes": r"[^|\s]+|None assigned|\(null\)",
    "word": r"[^|\s]+(?: [^|\s]+)*",
    "layout": r"(?:Block|Cyclic|Plane|Arbitrary|Unknown|Pack|NoPack)(?:[:,][A-Za-z]+)*",
    "amount": r"[0-9]+(?:\.[0-9]+)?[KMGTP]?",
}
_KIND_OF: dict[str, str] = {}
for _name in ("Submit", "Eligible", "Start", "End"):
    _KIND_OF[_name] = "time"
for _name in (
    "Elapsed",
    "Timelimit",
    "TotalCPU",
    "UserCPU",
    "SystemCPU",
    "CPUTime",
    "Suspended",
    "AveCPU",
    "MinCPU",
    "ResvCPU",
    "Reserved",
    "PlannedCPU",
    "Planned",
    "TimelimitRaw",
):
    _KIND_OF[_name] = "duration"
for _name in (
    "AllocCPUS",
    "AllocNodes",
    "NCPUS",
    "NNodes",
    "NTasks",
    "ReqCPUS",
    "ReqNodes",
    "UID",
    "GID",
    "ElapsedRaw",
    "CPUTimeRAW",
    "ResvCPURAW",
    "DBIndex",
    "AssocID",
    "QOSRAW",
    "Priority",
    "WCKeyID",
    "ConsumedEnergyRaw",
):
    _KIND_OF[_name] = "int"
_KIND_OF.update(
    {
        "JobID": "jobid",
        "JobIDRaw": "jobid",
        "ExitCode": "exit",
        "DerivedExitCode": "exit",
        "State": "state",
        "ReqMem": "mem",
        "MaxRSS": "mem",
        "AveRSS": "mem",
        "MaxVMSize": "mem",
        "AveVMSize": "mem",
        "AllocTRES": "tres",
        "ReqTRES": "tres",
        "NodeList": "nodes",
        "Layout": "layout",
        "Reason": "word",
        "Flags": "word",
    }
)
for _name in (
    "ConsumedEnergy",
    "AveCPUFreq",
    "AveDiskRead",
    "AveDiskWrite",
    "MaxDiskRead",
    "MaxDiskWrite",
    "AvePages",
    "MaxPages",
):
    _KIND_OF[_name] = "amount"
# TimelimitRaw is minutes (an int) but UNLIMITED is allowed: the duration pattern
# covers plain numbers only via int, so give it its own.
_PATTERNS = {kind: re.compile(rf"(?:{p})?\Z") for kind, p in _P.items()}
_PATTERNS["limitraw"] = re.compile(r"(?:[0-9]+|UNLIMITED|Partition_Limit|INVALID)?\Z")
_KIND_OF["TimelimitRaw"] = "limitraw"


def column_pattern(column: str) -> re.Pattern[str] | None:
    """The pattern a value of ``column`` must match (``None``: anything without ``|``)."""
    kind = _KIND_OF.get(column)
    return _PATTERNS[kind] if kind else None


class AlignmentError(ValueError):
    """A record's fields cannot be matched with the columns."""


def align(tokens: Sequence[str], columns: Sequence[str]) -> list[str]:
    """Assign the ``|``-separated ``tokens`` of one record to ``columns``.

    Returns one value per column. With as many tokens as columns the tokens are the
    values (the fast path); with more, free-text columns absorb the extra tokens (see
    the module docstring for the rule); with fewer, :class:`AlignmentError`.

    The time is linear in the number of tokens (times the number of columns): the
    cost of giving a free-text column ``k`` extra tokens depends on ``k`` only
    through terms of the position it ends at, so the best choice for every start is
    a suffix minimum (see :func:`_best_placement`).
    """
    n, m = len(columns), len(tokens)
    if m == n:
        return list(tokens)
    if m < n:
        raise AlignmentError(f"expected {n} fields, found {m}")
    extra = m - n
    free = [c in FREE_TEXT for c in columns]
    if not any(free):
        raise AlignmentError(f"expected {n} fields, found {m}, and no column may contain '|'")
    patterns = [column_pattern(c) for c in columns]
    counts = _best_placement(tokens, free, patterns, extra)
    if counts is None:
        raise AlignmentError(
            f"expected {n} fields, found {m}, and no placement of the extra '|' in the "
            "free-text columns fits the other columns"
        )
    values, pos = [], 0
    for k in counts:
        values.append("|".join(tokens[pos : pos + k + 1]))
        pos += k + 1
    return values


#: Extra tokens from which :func:`_best_placement` works on numpy arrays (below,
#: plain lists are faster than numpy's per-call overhead).
NUMPY_FROM = 64
_INF = 1 << 62


def _best_placement(
    tokens: Sequence[str],
    free: Sequence[bool],
    patterns: Sequence[re.Pattern[str] | None],
    extra: int,
    use_numpy: bool | None = None,
) -> list[int] | None:
    """How many extra tokens each column takes (0 for every column that is not free
    text), by the rule of the module docstring; ``None`` when nothing fits.

    A placement's cost is the tuple (edge pipes, free-text values with ``|``, sum of
    column index x extra tokens), compared in that order; it is encoded as one
    integer with weights ``w0 > w1 > 1`` larger than any total of the terms below
    them, so that sums and comparisons of the integers are those of the tuples.
    ``best[e]`` is the least cost of the columns from ``i`` on when ``e`` extra
    tokens were used before column ``i`` (filled from the last column back). A free
    column ``i`` that takes ``k >= 1`` extra tokens, ending at token ``i + j``
    (``j = e + k``), costs ``best_next[j] + w0 * (token i+j empty) + w1 + i * j``
    (a term of ``j`` alone) plus ``2 * w0 * (token i+e empty) - i * e`` (a term of
    ``e`` alone): the best ``k`` for every ``e`` is a suffix minimum over ``j``.
    Ties go to the fewest extra tokens, as when every ``k`` is tried in order.
    """
    n = len(free)
    w1 = n * extra + 1
    w0 = w1 * (sum(free) + 1)
    if use_numpy is None:
        use_numpy = extra >= NUMPY_FROM
    if use_numpy:
        saved = _placement_numpy(tokens, free, patterns, extra, w0, w1)
    else:
        saved = _placement_lists(tokens, free, patterns, extra, w0, w1)
    if saved is None:
        return None
    counts, e = [], 0
    for i in range(n):
        k = 0
        if free[i]:
            suffix, take_none = saved[i]
            if not take_none[e]:
                j = suffix[e + 1]
                k = j - e
        counts.append(k)
        e += k
    return counts


def _matches(
    pattern: re.Pattern[str], tokens: Sequence[str], cache: dict[Any, list[bool]]
) -> list[bool]:
    """Whether each token matches ``pattern`` (each distinct token tried once)."""
    found = cache.get(pattern)
    if found is None:
        seen: dict[str, bool] = {}
        found = []
        for token in tokens:
            ok = seen.get(token)
            if ok is None:
                ok = seen[token] = pattern.match(token) is not None
            found.append(ok)
        cache[pattern] = found
    return found


def _placement_lists(
    tokens: Sequence[str],
    free: Sequence[bool],
    patterns: Sequence[re.Pattern[str] | None],
    extra: int,
    w0: int,
    w1: int,
) -> dict[int, tuple[Sequence[int], Sequence[bool]]] | None:
    """:func:`_best_placement` on lists. Returns, for each free column, the position
    of the best end ``j > e`` for every ``e`` (``suffix[e + 1]``) and whether taking
    no extra token is at least as good (``take_none[e]``); ``None`` if nothing fits."""
    n, width = len(free), extra + 1
    inf = _INF
    cache: dict[Any, list[bool]] = {}
    best = [inf] * width
    best[extra] = 0
    saved: dict[int, tuple[Sequence[int], Sequence[bool]]] = {}
    for i in range(n - 1, -1, -1):
        pattern = patterns[i]
        if pattern is None:
            none = best
        else:
            ok = _matches(pattern, tokens, cache)[i : i + width]
            none = [b if o else inf for b, o in zip(best, ok, strict=True)]
        if not free[i]:
            best = none
            continue
        window = tokens[i : i + width]
        # run / where: the least g(j) over j >= e and its first position
        suffix = [0] * (width + 1)
        run, where = inf, width
        new = list(none)
        take_none = [True] * width
        for e in range(extra, -1, -1):
            if run < inf:
                cost = run + (2 * w0 if window[e] == "" else 0) - i * e
                if cost < new[e]:
                    new[e] = cost
                    take_none[e] = False
            suffix[e + 1] = where
            b = best[e]
            if b < inf:
                g = b + (w0 if window[e] == "" else 0) + w1 + i * e
                if g <= run:
                    run, where = g, e
        saved[i] = (suffix, take_none)
        best = new
    return saved if best[0] < inf else None


def _placement_numpy(
    tokens: Sequence[str],
    free: Sequence[bool],
    patterns: Sequence[re.Pattern[str] | None],
    extra: int,
    w0: int,
    w1: int,
) -> dict[int, tuple[Sequence[int], Sequence[bool]]] | None:
    """:func:`_placement_lists` on numpy arrays, for records with many ``|``."""
    import numpy as np

    n, width, m = len(free), extra + 1, len(tokens)
    inf = np.int64(_INF)
    empty = np.fromiter((t == "" for t in tokens), dtype=bool, count=m)
    index = np.arange(width, dtype=np.int64)
    cache: dict[Any, list[bool]] = {}
    arrays: dict[Any, Any] = {}
    best = np.full(width, inf, dtype=np.int64)
    best[extra] = 0
    saved: dict[int, tuple[Any, Any]] = {}  # numpy rows (indexed as sequences)
    for i in range(n - 1, -1, -1):
        pattern = patterns[i]
        if pattern is None:
            none = best
        else:
            ok = arrays.get(pattern)
            if ok is None:
                ok = arrays[pattern] = np.array(_matches(pattern, tokens, cache), dtype=bool)
            none = np.where(ok[i : i + width], best, inf)
        if not free[i]:
            best = none
            continue
        window_empty = empty[i : i + width]
        g = np.where(best < inf, best + w0 * window_empty + w1 + i * index, inf)
        # the least g over j >= e, and its first position
        least = np.minimum.accumulate(g[::-1])[::-1]
        # first j >= e with g[j] == least[e]: positions where g reaches the suffix
        # minimum, then the next such position at or after e
        hit = np.where(g == least, index, width)
        first = np.minimum.accumulate(hit[::-1])[::-1]
        after = np.append(least[1:], inf)
        cost = np.where(after < inf, after + 2 * w0 * window_empty - i * index, inf)
        take_none = none <= cost
        saved[i] = (first, take_none)  # first[e + 1]: the best end j > e
        best = np.minimum(none, cost)
    return saved if best[0] < inf else None


def check_values(values: Sequence[str], columns: Sequence[str]) -> str | None:
    """The first column whose value does not match its pattern, or ``None``."""
    for value, column in zip(values, columns, strict=True):
        pattern = column_pattern(column)
        if pattern is not None and pattern.match(value) is None:
            return column
    return None


def physical_records(lines: Iterator[str], width: int) -> Iterator[tuple[int, str]]:
    """Join physical lines into records of at least ``width`` fields.

    Yields ``(first line number, record text)``; newlines inside a record are kept as
    ``\\n``. Blank lines between records are skipped. A short line is joined with the
    next ones only while those are short themselves (a line with ``width`` fields or
    more starts a new record), so one truncated line cannot swallow the next record;
    it is yielded alone and the caller reports it.
    """
    # The pending record is a list of its lines and its count of '|', so that
    # joining many short lines stays linear (no repeated concatenation or count).
    pending: list[str] = []
    pipes = 0
    start = 0
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        count = line.count("|")
        if not pending:
            if line.strip() == "":
                continue
            if count + 1 >= width:
                yield number, line
                continue
            pending, pipes, start = [line], count, number
            continue
        if count + 1 >= width:
            yield start, "\n".join(pending)
            pending = []
            yield number, line
            continue
        pending.append(line)
        pipes += count
        if pipes + 1 >= width:
            yield start, "\n".join(pending)
            pending = []
    if pending:
        yield start, "\n".join(pending)


#: The columns ``sacct --format`` knows (``sacct --helpformat``, Slurm 25.11), and
#: names older versions printed (``AllocGRES``, ``ReqGRES``, ``Reserved``,
#: ``ResvCPU``, ``ResvCPURAW``). sacct matches them without regard to case.
SACCT_COLUMNS: tuple[str, ...] = (
    "Account", "AdminComment", "AllocCPUS", "AllocGRES", "AllocNodes", "AllocTRES",
    "AssocID", "AveCPU", "AveCPUFreq", "AveDiskRead", "AveDiskWrite", "AvePages",
    "AveRSS", "AveVMSize", "BlockID", "Cluster", "Comment", "Constraints",
    "ConsumedEnergy", "ConsumedEnergyRaw", "Container", "CPUTime", "CPUTimeRAW",
    "DBIndex", "DerivedExitCode", "Elapsed", "ElapsedRaw", "Eligible", "End",
    "ExitCode", "Extra", "FailedNode", "Flags", "GID", "Group", "JobID", "JobIDRaw",
    "JobName", "Layout", "Licenses", "MaxDiskRead", "MaxDiskReadNode",
    "MaxDiskReadTask", "MaxDiskWrite", "MaxDiskWriteNode", "MaxDiskWriteTask",
    "MaxPages", "MaxPagesNode", "MaxPagesTask", "MaxRSS", "MaxRSSNode", "MaxRSSTask",
    "MaxVMSize", "MaxVMSizeNode", "MaxVMSizeTask", "McsLabel", "MinCPU", "MinCPUNode",
    "MinCPUTask", "NCPUS", "NNodes", "NodeList", "NTasks", "Partition", "Planned",
    "PlannedCPU", "PlannedCPURAW", "Priority", "QOS", "QOSRAW", "QOSREQ", "Reason",
    "ReqCPUFreq", "ReqCPUFreqGov", "ReqCPUFreqMax", "ReqCPUFreqMin", "ReqCPUS",
    "ReqGRES", "ReqMem", "ReqNodes", "ReqTRES", "Reservation", "ReservationId",
    "Reserved", "ResvCPU", "ResvCPURAW", "Restarts", "SegmentSize", "SLUID", "Start",
    "State", "StdErr", "StdIn", "StdOut", "Submit", "SubmitLine", "Suspended",
    "SystemComment", "SystemCPU", "Timelimit", "TimelimitRaw", "TotalCPU",
    "TRESUsageInAve", "TRESUsageInMax", "TRESUsageInMaxNode", "TRESUsageInMaxTask",
    "TRESUsageInMin", "TRESUsageInMinNode", "TRESUsageInMinTask", "TRESUsageInTot",
    "TRESUsageOutAve", "TRESUsageOutMax", "TRESUsageOutMaxNode", "TRESUsageOutMaxTask",
    "TRESUsageOutMin", "TRESUsageOutMinNode", "TRESUsageOutMinTask", "TRESUsageOutTot",
    "UID", "User", "UserCPU", "WCKey", "WCKeyID", "WorkDir",
)  # fmt: skip


def sacct_column(name: str, also: Sequence[str] = ()) -> str | None:
    """``name`` spelled as sacct prints it in its header (``elapsed`` -> ``Elapsed``,
    ``ncpus`` -> ``NCPUS``: sacct matches ``--format`` names without regard to case),
    ``None`` for a name it does not know. ``also``: more names taken as they are
    (columns of the file a workload was read from)."""
    if name in also or name in SACCT_COLUMNS:
        return name
    folded = name.casefold()
    for known in (*also, *SACCT_COLUMNS):
        if known.casefold() == folded:
            return known
    return None
