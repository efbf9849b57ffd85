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
    "time": r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d|Unknown|None|N/A",
    "duration": r"(?:\d+-)?(?:\d+:)?\d+:\d+(?:\.\d+)?|UNLIMITED|Partition_Limit|INVALID|NONE",
    "int": r"-?\d+",
    "jobid": r"\d+(?:[_+](?:\d+|\[[^\]|]*\]))?(?:\.[^.|\s]+)?",
    "exit": r"\d+:\d+",
    "state": r"[A-Z_]+\+?(?: by -?\d+)?",
    "mem": r"\d+(?:\.\d+)?[KMGTP]?[cn]?",
    "tres": r"[\w/:.-]+=[^,|]*(?:,[\w/:.-]+=[^,|]*)*",
    "nodes": r"[^|\s]+|None assigned|\(null\)",
    "word": r"[^|\s]+(?: [^|\s]+)*",
    "layout": r"(?:Block|Cyclic|Plane|Arbitrary|Unknown|Pack|NoPack)(?:[:,][A-Za-z]+)*",
    "amount": r"\d+(?:\.\d+)?[KMGTP]?",
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
_PATTERNS["limitraw"] = re.compile(r"(?:\d+|UNLIMITED|Partition_Limit|INVALID)?\Z")
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
    inf = (1 << 30, 0, 0)
    # best[i][e]: cost of placing columns i.. given e extra tokens used before column i
    # (so column i starts at token i + e). Filled backwards.
    best: list[list[tuple[int, int, int]]] = [[inf] * (extra + 1) for _ in range(n + 1)]
    choice: list[list[int]] = [[0] * (extra + 1) for _ in range(n + 1)]
    best[n][extra] = (0, 0, 0)
    for i in range(n - 1, -1, -1):
        pattern = patterns[i]
        for e in range(extra + 1):
            start = i + e
            top = extra - e if free[i] else 0
            for k in range(top + 1):
                rest = best[i + 1][e + k]
                if rest[0] >= inf[0]:
                    continue
                if k == 0:
                    value_ok = pattern is None or pattern.match(tokens[start]) is not None
                    if not value_ok:
                        continue
                    cost = rest
                else:
                    pieces = tokens[start : start + k + 1]
                    edge = 2 * (pieces[0] == "") + (pieces[-1] == "")
                    # Later columns are preferred less: a tiny position term.
                    cost = (rest[0] + edge, rest[1] + 1, rest[2] + i * k)
                if cost < best[i][e]:
                    best[i][e] = cost
                    choice[i][e] = k
    if best[0][0][0] >= inf[0]:
        raise AlignmentError(
            f"expected {n} fields, found {m}, and no placement of the extra '|' in the "
            "free-text columns fits the other columns"
        )
    values, e, pos = [], 0, 0
    for i in range(n):
        k = choice[i][e]
        values.append("|".join(tokens[pos : pos + k + 1]))
        pos += k + 1
        e += k
    return values


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
    pending: str | None = None
    start = 0
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if pending is None:
            if line.strip() == "":
                continue
            if line.count("|") + 1 >= width:
                yield number, line
                continue
            pending, start = line, number
            continue
        if line.count("|") + 1 >= width:
            yield start, pending
            pending = None
            yield number, line
            continue
        pending = f"{pending}\n{line}"
        if pending.count("|") + 1 >= width:
            yield start, pending
            pending = None
    if pending is not None:
        yield start, pending
