"""Batsim's jobs output file (``PREFIX_jobs.csv``): reader and writer ``batsim-jobs``.

One CSV row per job of a finished Batsim run, with a header naming the columns.
Columns are found by name, so both layouts read:

* the current one (Batsim >= 3.0): ``job_id, workload_name, profile,
  submission_time, requested_number_of_resources, requested_time, success,
  final_state, starting_time, execution_time, finish_time, waiting_time,
  turnaround_time, stretch, allocated_resources, consumed_energy, metadata``;
* the older one (Batsim 1.x and 2.x): ``jobID`` (or ``job_id`` with
  ``hacky_job_id``), ``requested_number_of_processors`` and
  ``allocated_processors`` instead, no ``profile`` and no ``final_state``.

The writer writes the current layout, which evalys's ``JobSet.from_csv`` reads.
Everything without a place in :class:`~schedlab.model.Job` is kept in ``extras``
(keys ``batsim.*``). See docs/formats/batsim.md for the mapping and decisions.
"""

from __future__ import annotations

import bisect
import csv
import io
import itertools
import math
import os
from collections.abc import Iterator
from typing import Any

from schedlab.errors import FormatError
from schedlab.io import open_binary, open_output, source_name
from schedlab.losses import RICH_FIELDS, Losses, note_extras, note_fields, writer_losses
from schedlab.model import Header, Job, Workload
from schedlab.validation import (
    BAD_RECORD,
    ERROR,
    MAX_MAGNITUDE,
    WARNING,
    Finding,
    out_of_range,
)

from .common import (
    EXTRA_ALLOCATED,
    EXTRA_CSV,
    EXTRA_FINAL_STATE,
    EXTRA_ID,
    EXTRA_NUMBER,
    EXTRA_PROFILE,
    EXTRA_WORKLOAD,
    carries,
    header_size,
    note_read_back,
    number_jobs,
    plain,
    shown,
    split_id,
)

#: Extras keys of the columns kept as read.
EXTRA_ENERGY = "batsim.consumed_energy"
#: ``consumed_energy`` of a run without an energy model: Batsim sets every job's
#: energy to -1 when it reads the job and only measures it with energy enabled
#: (``Job::from_json``), and writes the column either way. Unknown, not a number
#: of joules.
NO_ENERGY = -1
#: ``requested_time`` of a job without a walltime (Batsim writes -1): unknown.
NO_WALLTIME = -1
EXTRA_METADATA = "batsim.metadata"

#: The current layout, in Batsim's order (what the writer writes).
COLUMNS = (
    "job_id",
    "workload_name",
    "profile",
    "submission_time",
    "requested_number_of_resources",
    "requested_time",
    "success",
    "final_state",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "allocated_resources",
    "consumed_energy",
    "metadata",
)
#: Older column names -> current ones.
ALIASES = {
    "jobID": "job_id",
    "requested_number_of_processors": "requested_number_of_resources",
    "allocated_processors": "allocated_resources",
}
#: The final state Batsim writes ``success`` 1 for (and 0 for every other one).
_SUCCESS_STATE = "COMPLETED_SUCCESSFULLY"
#: Check name of the reader's findings about columns that contradict each other.
CONFLICTING = "conflicting-columns"

#: Columns computed from others (checked to parse, never kept).
DERIVED = ("finish_time", "waiting_time", "turnaround_time", "stretch")
#: Older columns without a meaning today (kept as read).
IGNORED = ("hacky_job_id",)

#: ``final_state`` -> SWF status: completed 1; failed or killed at its walltime 0
#: (killed by the system); killed by the scheduler or rejected 5 (cancelled).
FINAL_STATES = {
    "COMPLETED_SUCCESSFULLY": 1,
    "COMPLETED_FAILED": 0,
    "COMPLETED_WALLTIME_REACHED": 0,
    "COMPLETED_KILLED": 5,
    "REJECTED": 5,
}

_NOT_CARRIED = (
    "average_cpu_time",
    "used_memory",
    "requested_memory",
    "user_id",
    "group_id",
    "executable_number",
    "queue_number",
    "partition_number",
    "preceding_job_number",
    "think_time",
)
_KEPT = frozenset(
    (
        EXTRA_ID,
        EXTRA_NUMBER,
        EXTRA_WORKLOAD,
        EXTRA_PROFILE,
        EXTRA_FINAL_STATE,
        EXTRA_ALLOCATED,
        EXTRA_ENERGY,
        EXTRA_METADATA,
        EXTRA_CSV,
    )
)


# ----------------------------------------------------------------- interval sets


def parse_intervals(text: str) -> list[tuple[int, int]]:
    """Batsim's interval-set text (``"0-3 7 10-12"``) as ``[(0, 3), (7, 7), (10, 12)]``;
    ``ValueError`` for anything else."""
    out: list[tuple[int, int]] = []
    for part in text.split():
        low, dash, high = part.partition("-")
        if not (low.isdigit() and low.isascii()) or (
            dash and not (high.isdigit() and high.isascii())
        ):
            raise ValueError(f"expected resource ids like '0-3 7', got {shown(text)}")
        try:
            a, b = int(low), int(high) if dash else int(low)
        except ValueError:  # more digits than Python converts
            raise ValueError(f"expected resource ids like '0-3 7', got {shown(text)}") from None
        if b < a:
            raise ValueError(f"expected resource ids like '0-3 7', got {shown(text)}")
        out.append((a, b))
    return out


def format_intervals(ids: list[int]) -> str:
    """Sorted resource ids as Batsim's interval-set text: ``[0, 1, 2, 5]`` -> ``0-2 5``."""
    parts: list[str] = []
    ids = sorted(ids)
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        parts.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return " ".join(parts)


def _count(intervals: list[tuple[int, int]]) -> int:
    """The number of resources in an interval set: the size of the union of its
    intervals, which Batsim lets overlap or repeat (``1-2 1-3 5 7`` is
    {1, 2, 3, 5, 7}: 5, as Batsim's intervalset library and evalys count it)."""
    total = 0
    reach = -1  # the highest id counted so far
    for a, b in sorted(intervals):
        if b > reach:
            total += b - max(a, reach + 1) + 1
            reach = b
    return total


# --------------------------------------------------------------------- reading


class _Skip(Exception):
    def __init__(self, error: FormatError) -> None:
        super().__init__(str(error))
        self.error = error


#: The highest ``csv.field_size_limit`` every platform takes (a C ``long``).
_LIMIT_MAX = 2**31 - 1


def _rows(source: Any, name: str) -> Iterator[tuple[int, list[str]]]:
    """``(first line, cells)`` of each CSV row of ``source`` (blank lines as ``[]``)."""
    fh = open_binary(source, normalize=True, name=name)
    try:
        data = fh.read()
    finally:
        if isinstance(source, (str, os.PathLike)):
            fh.close()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 text (byte {exc.start})", source=name) from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    # No field is longer than the text: the limit that reads every field the writer
    # writes (an interval set of 25,000 scattered ids passes csv's default 131072).
    # csv's limit is process-wide: raised around each row only, and put back.
    limit = min(len(text) + 1, _LIMIT_MAX)
    ended = 0  # the line the previous row ended on
    while True:
        previous = csv.field_size_limit(max(limit, csv.field_size_limit()))
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise FormatError(f"not CSV: {exc}", source=name, line=reader.line_num) from None
        finally:
            csv.field_size_limit(previous)
        # the row's first line (a quoted field may hold line breaks: csv's line_num
        # is the line where the row ends)
        yield ended + 1, row
        ended = reader.line_num


def read_jobs(source: Any, lenient: bool = False, order: str = "submit") -> Workload:
    """Read a Batsim jobs file (either layout, plain or compressed).

    A value that does not parse, or lies beyond the limits of every reader (times
    1e12 s, counts, resource ids and ``consumed_energy`` 2**53 - 1), a negative
    ``submission_time`` or ``execution_time``, a ``starting_time`` before the
    ``submission_time``, and a negative ``requested_time`` or ``consumed_energy``
    other than -1 (no walltime, no energy model: kept as unknown) raise
    :class:`FormatError` naming the file, the row's first line and the column
    (fields of any length are read); ``lenient=True``
    skips such rows instead, counted in ``meta["skipped"]`` (``meta["rejects"]``:
    ``(line, text)``, ``meta["reject_reasons"]`` the messages), each with a
    ``bad-record`` error finding on its line and column in ``meta["findings"]`` (so
    ``schedlab validate`` says why it was skipped). A job whose ``job_id`` carries
    no number, or the number of an earlier row (``w0!1`` and ``w1!1`` of a run
    with two workloads), gets a new number above the highest, in file order, its
    id kept in ``extras["batsim.id"]`` (and written back), with a warning finding
    (check ``renumbered-job``). Columns that contradict each other (``success``
    and ``final_state``, ``workload_name`` and the workload in ``job_id``) keep
    ``final_state`` and ``workload_name``, with one warning finding per pair (check
    ``conflicting-columns``). Jobs are sorted by submit time (stable) unless
    ``order="file"``.
    """
    if order not in ("submit", "file"):
        raise FormatError(f"order must be 'submit' or 'file', got {order!r}")
    name = source_name(source)
    rows = _rows(source, name)
    first = next(rows, None)
    if first is None:
        raise FormatError("empty file: expected a header line", source=name, line=1)
    columns = [ALIASES.get(c.strip(), c.strip()) for c in first[1]]
    columns[0] = columns[0].lstrip("\ufeff")
    seen: set[str] = set()
    for column in columns:
        if column in seen:  # (an older name counts as the current one)
            raise FormatError(
                f"{'column' if column else 'a column without a name'} given twice in the "
                "header (which one is meant?)",
                source=name,
                line=1,
                field=column or None,
            )
        seen.add(column)
    for needed in ("job_id", "submission_time"):
        if needed not in columns:
            raise FormatError(
                f"missing column {needed!r} (is this a Batsim jobs file?)",
                source=name,
                line=1,
                field=needed,
            )
    layout = "current" if "requested_number_of_resources" in first[1] else "older"
    jobs: list[Job] = []
    lines: list[int] = []
    rejects: list[tuple[int, str]] = []
    reasons: list[str] = []
    skipped: list[Finding] = []
    highest = [-1]  # the highest resource id allocated
    conflicts: dict[str, list[tuple[int, str]]] = {}  # column -> (line, detail)
    for line, row in rows:
        if not row or all(not cell.strip() for cell in row):
            continue
        try:
            if len(row) != len(columns):
                raise _Skip(
                    FormatError(
                        f"expected {len(columns)} columns, found {len(row)}", source=name, line=line
                    )
                )
            found: list[tuple[str, str]] = []
            jobs.append(_job(dict(zip(columns, row, strict=True)), name, line, highest, found))
            lines.append(line)
            for column, detail in found:
                conflicts.setdefault(column, []).append((line, detail))
        except _Skip as skip:
            if not lenient:
                raise skip.error from None
            rejects.append((line, ",".join(row)))
            reasons.append(str(skip.error))
            error = skip.error
            skipped.append(
                Finding(line, error.field, f"{error.message} (record skipped)", ERROR, BAD_RECORD)
            )
    findings = skipped + _renumber(jobs, lines) + _conflict_findings(conflicts)
    if order == "submit":
        jobs.sort(key=lambda j: j.submit_time if j.submit_time is not None else math.inf)
    header = Header()
    if highest[0] >= 0:
        header.set("MaxProcs", highest[0] + 1)
    workload = Workload.from_jobs(jobs, header)
    workload.meta.update(
        {
            "batsim_layout": layout,
            "skipped": len(rejects),
            "rejects": rejects,
            "reject_reasons": reasons,
            "findings": findings,
        }
    )
    return workload


#: What each contradicting column is, and which column's value is kept.
_CONFLICTS = {
    "success": (
        "a success contradicting their final_state",
        " (Batsim writes success 1 exactly for COMPLETED_SUCCESSFULLY): final_state kept",
    ),
    "workload_name": (
        "a workload_name that is not the workload of their job_id",
        ": workload_name kept",
    ),
}


def _conflict_findings(conflicts: dict[str, list[tuple[int, str]]]) -> list[Finding]:
    """One warning finding (check ``conflicting-columns``) per column whose value
    contradicts another column in some rows, on the first such row's line."""
    findings: list[Finding] = []
    for column, (what, outcome) in _CONFLICTS.items():
        found = conflicts.get(column)
        if not found:
            continue
        line, detail = found[0]
        findings.append(
            Finding(
                line,
                column,
                f"{len(found)} row(s) have {what}, the first {detail}{outcome}",
                WARNING,
                CONFLICTING,
            )
        )
    return findings


def _renumber(jobs: list[Job], lines: list[int]) -> list[Finding]:
    """Give the jobs (file order) whose id carries no job number, or the number of
    an earlier one (``w0!1`` and ``w1!1`` of a run with two workloads), a new number
    above the highest; the warning findings saying so."""
    assigned, findings = number_jobs(
        [job.job_number for job in jobs],
        lambda at: f"line {lines[at]} (id {jobs[at].extras.get(EXTRA_ID, jobs[at].job_number)!r})",
    )
    for at, new in assigned.items():
        job = jobs[at]
        job.extras.setdefault(EXTRA_ID, str(job.job_number))
        job.extras[EXTRA_NUMBER] = new
        job.job_number = new
    return findings


def _job(
    row: dict[str, str],
    name: str,
    line: int,
    highest: list[int],
    conflicts: list[tuple[str, str]],
) -> Job:
    """The job of one row (``line``: its first line); columns that contradict each
    other are appended to ``conflicts`` as ``(column, detail)``."""

    def fail(what: str, column: str) -> _Skip:
        return _Skip(FormatError(what, source=name, line=line, field=column))

    def num(
        column: str,
        integer: bool = False,
        minimum: float | None = None,
        seconds: bool | None = None,
    ) -> Any:
        """The column's number (``None``: empty or NaN); ``seconds`` not ``None``:
        within the limits of every reader (a time with ``seconds=True``)."""
        text = row.get(column, "").strip()
        if text == "" or text.lower() == "nan":
            return None
        try:
            value = float(text)
        except ValueError:
            raise fail(f"expected a number, got {shown(text)}", column) from None
        if not math.isfinite(value):
            if column == "stretch":
                return None  # a job that ran for 0 s
            raise fail(f"expected a finite number, got {shown(text)}", column)
        if seconds is not None:
            why = out_of_range(value, seconds)
            if why is not None:
                raise fail(f"{why}, got {shown(text)}", column)
        if integer:
            if not value.is_integer():
                raise fail(f"expected an integer, got {text!r}", column)
            value = int(value)
        if minimum is not None and value < minimum:
            raise fail(f"expected a number >= {minimum:g}, got {text!r}", column)
        return value

    raw_id = row["job_id"].strip()
    if raw_id == "":
        raise fail("missing", "job_id")
    workload_name, job_number = split_id(raw_id)
    extras: dict[str, Any] = {}
    if str(job_number) != raw_id:
        extras[EXTRA_ID] = raw_id
    if row.get("workload_name"):
        extras[EXTRA_WORKLOAD] = row["workload_name"]
        if workload_name is not None and workload_name != row["workload_name"].strip():
            conflicts.append(
                (
                    "workload_name",
                    f"workload_name {shown(row['workload_name'])} with job_id {shown(raw_id)}",
                )
            )
    elif workload_name is not None:
        extras[EXTRA_WORKLOAD] = workload_name
    if row.get("profile"):
        extras[EXTRA_PROFILE] = row["profile"]
    submit = num("submission_time", minimum=0, seconds=True)  # empty: unknown
    requested = num("requested_number_of_resources", integer=True, minimum=0, seconds=False)
    limit = num("requested_time", seconds=True)
    if limit is not None and limit < 0:
        if limit != NO_WALLTIME:
            text = row["requested_time"].strip()
            raise fail(
                f"expected a number >= 0 (or -1: no walltime), got {shown(text)}",
                "requested_time",
            )
        limit = None  # -1: no walltime
    start = num("starting_time", minimum=0, seconds=True)
    if start is not None and submit is not None and start < submit:
        text = row["starting_time"].strip()
        raise fail(
            f"expected a number >= submission_time ({plain(submit)}), got {shown(text)} "
            "(a job cannot start before its submission)",
            "starting_time",
        )
    # (Batsim leaves the column empty for a rejected job and never writes -1 in it:
    # a negative run time is an error, not unknown)
    run = num("execution_time", minimum=0, seconds=True)
    for column in DERIVED:
        num(column)
    status: int | None = None
    state = row.get("final_state", "").strip()
    success = row.get("success", "").strip()
    if success not in ("", "0", "1"):
        raise fail(f"expected 0 or 1, got {success!r}", "success")
    if state:
        if state not in FINAL_STATES:
            known = ", ".join(FINAL_STATES)
            raise fail(f"unknown final state {state!r} (known: {known})", "final_state")
        status = FINAL_STATES[state]
        extras[EXTRA_FINAL_STATE] = state
        if success and (success == "1") != (state == _SUCCESS_STATE):
            # Batsim writes both from one outcome; the final state is the finer one
            conflicts.append(("success", f"success {success} with final_state {state!r}"))
    else:
        status = int(success) if success else None
    allocated: int | None = None
    alloc_text = row.get("allocated_resources", "").strip()
    if alloc_text:
        try:
            intervals = parse_intervals(alloc_text)
        except ValueError as exc:
            raise fail(str(exc), "allocated_resources") from None
        top = max(b for _, b in intervals)
        if top >= MAX_MAGNITUDE:
            raise fail(f"out of range (ids of at most 2**53 - 2), got {top}", "allocated_resources")
        allocated = _count(intervals)
        highest[0] = max(highest[0], top)
        extras[EXTRA_ALLOCATED] = alloc_text
    energy = num("consumed_energy", seconds=False)  # (empty or NaN: unknown)
    if energy is not None:
        if energy < 0 and energy != NO_ENERGY:
            text = row["consumed_energy"].strip()
            raise fail(
                f"expected a number >= 0 (or -1: no energy model), got {shown(text)}",
                "consumed_energy",
            )
        # (-1, no energy model: kept as Batsim wrote it, and written back)
        extras[EXTRA_ENERGY] = plain(energy)
    if row.get("metadata"):
        extras[EXTRA_METADATA] = row["metadata"]
    others = {k: v for k, v in row.items() if k not in COLUMNS}
    if others:
        extras[EXTRA_CSV] = others
    wait = None if start is None or submit is None else start - submit
    return Job(
        job_number=job_number,
        submit_time=submit,
        wait_time=wait,
        run_time=run,
        allocated_processors=allocated or None,
        requested_processors=requested or None,
        requested_time=limit,
        status=status,
        extras=extras,
    )


# --------------------------------------------------------------------- writing


def _requested(count: float | None, losses: Losses) -> str:
    """``requested_number_of_resources`` as the reader takes it (an integer >= 0):
    a fractional count rounded down, one that cannot be written (below 1 and not
    whole, negative, past 2**53 - 1) left empty, read back as unknown; reported."""
    if count is None:
        return ""
    why = None
    if math.isnan(count):
        why = "not a number"
    elif count < 0:
        why = "negative"
    elif count > MAX_MAGNITUDE:
        why = "above 2**53 - 1"
    elif float(count).is_integer():
        return _number(count)
    elif count < 1:
        why = "below 1"
    else:
        losses.add("requested_processors", "not an integer, rounded down to whole resources")
        return str(math.floor(count))
    losses.add("requested_processors", f"{why}, not written (read back as unknown)")
    return ""


def _number(value: float | None) -> str:
    """A time or count as Batsim's jobs file shows it: integral values as integers,
    others in the shortest form that reads back to the same float; empty = unknown."""
    if value is None:
        return ""
    if float(value).is_integer() and abs(value) < 2.0**53:
        return str(int(value))
    return repr(float(value))


def _start(submit: float, wait: float, losses: Losses) -> float:
    """The ``starting_time`` to write, ``submit + wait``; ``wait_time`` is reported
    when the reader's ``starting_time - submission_time`` does not give it back
    exactly (the sum rounds to the precision of the start time: at 3.5e7 s a wait
    of 0.265 s comes back as 0.26500000059604645; no neighbouring double of the sum
    gives it back either, as the difference is then exact)."""
    start = submit + wait
    if start - submit != wait:
        losses.add(
            "wait_time",
            "changed in the last digits (starting_time - submission_time cannot give "
            "it back exactly in floating point)",
        )
    return start


def _reached_walltime(job: Job) -> bool:
    """Whether ``job`` ran for (at least) its requested time: a failed job (status
    0) that did is Batsim's ``COMPLETED_WALLTIME_REACHED`` (killed at its walltime,
    as the simulator's killed jobs are: their run time is their requested time)."""
    limit, run = job.requested_time, job.run_time
    return limit is not None and run is not None and 0 < limit <= run


def _final_state(job: Job, started: bool, losses: Losses) -> str:
    kept = job.extras.get(EXTRA_FINAL_STATE) if job.extras else None
    if kept in FINAL_STATES and FINAL_STATES[kept] == job.status:
        return str(kept)
    status = job.status
    if status == 1:
        return "COMPLETED_SUCCESSFULLY"
    if status == 0:
        return "COMPLETED_WALLTIME_REACHED" if _reached_walltime(job) else "COMPLETED_FAILED"
    if status == 5:
        return "COMPLETED_KILLED" if started else "REJECTED"
    if status is not None:
        losses.add("status", f"status {status} (partial execution) not written: no final state")
    return ""


#: The end of the free-id list: ids are never exhausted (a trace that overlaps
#: beyond its machine gets ids above it).
_NO_END = 2**62


def _take(free: list[list[int]], count: int) -> list[tuple[int, int]]:
    """Remove the ``count`` lowest ids from ``free`` (sorted, merged intervals)."""
    taken: list[tuple[int, int]] = []
    used = 0
    while count:
        low, high = free[used]
        size = high - low + 1
        if size <= count:
            taken.append((low, high))
            count -= size
            used += 1
        else:
            taken.append((low, low + count - 1))
            free[used][0] = low + count
            count = 0
    del free[:used]
    return taken


def _give_back(free: list[list[int]], intervals: list[tuple[int, int]]) -> None:
    """Return ``intervals`` (not free now) to ``free``, merging neighbours."""
    for low, high in intervals:
        at = bisect.bisect_left(free, [low, low])
        free.insert(at, [low, high])
        if at + 1 < len(free) and free[at + 1][0] == high + 1:
            free[at][1] = free[at + 1][1]
            del free[at + 1]
        if at > 0 and free[at - 1][1] + 1 == low:
            free[at - 1][1] = free[at][1]
            del free[at]


def allocate(jobs: list[Job], size: int | None = None) -> list[list[tuple[int, int]] | None]:
    """Resource ids (as intervals) for each job that ran, ``None`` for the others,
    as a Batsim scheduler would have given them: at each start, the lowest-numbered
    ids free at that time (ends before starts at equal times), from 0 on. Jobs that
    overlap beyond the machine (a trace whose log over-subscribes it) get ids above
    it. A job whose run time is unknown, 0 or negative gets ids but holds them for
    no time. ``size`` is accepted for symmetry with the header and not needed."""
    events: list[tuple[float, int, int]] = []  # (time, 0 = end / 1 = start, job)
    counts: list[int] = []
    holds: list[bool] = []
    for i, job in enumerate(jobs):
        count = job.allocated_processors
        if count is None:
            count = job.requested_processors or 0
        counts.append(int(count))
        start = job.start_time
        end = job.end_time
        # an unknown run time, a run of 0 s or a negative one (an error in the source
        # log) holds nothing: its ids are free again at once
        holds.append(end is not None and start is not None and end > start)
        if start is None or count <= 0:
            continue
        events.append((start, 1, i))
        if end is not None and end > start:
            events.append((end, 0, i))
    events.sort()
    free: list[list[int]] = [[0, _NO_END]]
    out: list[list[tuple[int, int]] | None] = [None] * len(jobs)
    for _, kind, i in events:
        if kind == 0:
            held = out[i]
            if held is not None:
                _give_back(free, held)
            continue
        taken = _take(free, counts[i])
        out[i] = taken
        if not holds[i]:
            _give_back(free, taken)
    return out


def _intervals_text(intervals: list[tuple[int, int]]) -> str:
    return " ".join(str(a) if a == b else f"{a}-{b}" for a, b in intervals)


def write_jobs(workload: Workload, path: str | os.PathLike[str]) -> Losses:
    """Write ``workload`` as a Batsim jobs file, current layout.

    Times are written as Batsim computes them (``starting_time = submission_time +
    waiting_time``, ``finish_time``, ``turnaround_time``, ``stretch``); unknown values
    are left empty. ``allocated_resources`` is the kept set of a job read from a
    jobs file while its count is unchanged, else ids assigned by
    :func:`allocate` (lowest free ids at each start), so that evalys's Gantt charts
    show a schedule without overlaps within the machine. Returns the loss report.
    """
    jobs = list(workload)  # (reading .jobs would convert a columnar workload)
    with writer_losses() as losses:
        size_text = workload.header.get("MaxProcs")
        size = header_size(size_text)
        assigned = allocate(jobs)
        extra_columns: dict[str, None] = {}
        for job in jobs:
            for key in (job.extras or {}).get(EXTRA_CSV) or {}:
                extra_columns.setdefault(key, None)
        buffer = io.StringIO()
        out = csv.writer(buffer, lineterminator="\n")
        out.writerow([*COLUMNS, *extra_columns])
        highest = -1
        written: list[str] = []
        written_set: set[str] = set()
        reported: list[bool] = []  # job number changes already reported
        top = max((j.job_number for j in jobs if j.job_number is not None), default=0)
        fresh = itertools.count(max(top, len(jobs)) + 1)
        for position, (job, ids) in enumerate(zip(jobs, assigned, strict=True), start=1):
            row, last = _row(job, ids, position, extra_columns, losses)
            highest = max(highest, last)
            changed = job.job_number is None  # reported by _row
            if row[0] in written_set:
                # the same id twice would name one job: a fresh number instead
                row[0] = str(next(fresh))
                if not changed:
                    losses.add("job_number", "a duplicate, written as a fresh number")
                    changed = True
            written.append(row[0])
            written_set.add(row[0])
            reported.append(changed)
            out.writerow(row)
        note_read_back(written, [j.job_number for j in jobs], reported, losses)
        derived = highest + 1 if highest >= 0 else None
        for entry in workload.header.entries:
            if entry.label == "MaxProcs" and size is not None and derived == size:
                continue  # read back from the highest resource id
            losses.add(f"header.{entry.label or 'comment'}", "not written (no header)")
        with open_output(path) as fh:
            fh.write(buffer.getvalue())
    return losses


def _row(
    job: Job,
    ids: list[tuple[int, int]] | None,
    position: int,
    extra_columns: dict[str, None],
    losses: Losses,
) -> tuple[list[str], int]:
    """The CSV row of ``job`` and the highest resource id in it (-1: none)."""
    extras = job.extras or {}
    job_id: Any = extras.get(EXTRA_ID, job.job_number)
    if EXTRA_ID in extras and not carries(extras, job.job_number):
        job_id = job.job_number
    if job_id is None:
        job_id = position
        losses.add("job_number", "unknown, written as its position (1..N)")
    submit = job.submit_time
    if submit is not None and submit < 0:
        # (an error in the source log; the reader refuses a negative submission_time)
        losses.add("submit_time", "negative, not written (read back as unknown)")
        submit = None
    limit = job.requested_time
    if limit is not None and limit < 0:
        # -1 is Batsim's "no walltime"; the reader refuses other negative values
        losses.add("requested_time", "negative, written as -1 (read back as no walltime)")
        limit = NO_WALLTIME
    wait, run = job.wait_time, job.run_time
    # (errors in the source log; the reader refuses a negative execution_time and a
    # starting_time before submission_time)
    if run is not None and run < 0:
        losses.add("run_time", "negative, not written (read back as unknown)")
        run = None
    if wait is not None and wait < 0:
        losses.add("wait_time", "negative, starting_time not written (read back as unknown)")
        wait = None
        ids = None  # (no start: no ids, as for a job whose start is unknown)
    start = None if submit is None or wait is None else _start(submit, wait, losses)
    finish = None if start is None or run is None else start + run
    turnaround = None if wait is None or run is None else wait + run
    stretch = turnaround / run if turnaround is not None and run else None
    if start is None and wait is not None:
        losses.add("wait_time", "not written: the submit time is unknown")
    kept_alloc = extras.get(EXTRA_ALLOCATED)
    kept = parse_intervals(kept_alloc) if isinstance(kept_alloc, str) else None
    alloc_text = ""
    highest = -1
    if kept is not None and _count(kept) == (job.allocated_processors or 0):
        alloc_text = str(kept_alloc)
        highest = max((b for _, b in kept), default=-1)
    elif ids is not None:
        alloc_text = _intervals_text(ids)
        highest = max((b for _, b in ids), default=-1)
        alloc = job.allocated_processors
        if alloc is None:
            losses.add("allocated_processors", "unknown, written as the requested count")
        elif math.isfinite(alloc) and not float(alloc).is_integer():
            losses.add("allocated_processors", "not an integer, rounded down to whole resources")
    elif job.allocated_processors is not None:
        losses.add("allocated_processors", "not written: the start time is unknown")
    status = job.status
    success = "" if status not in (0, 1, 5) else ("1" if status == 1 else "0")
    energy = extras.get(EXTRA_ENERGY)
    row = [
        str(job_id),
        str(extras.get(EXTRA_WORKLOAD, "")),
        str(extras.get(EXTRA_PROFILE, "")),
        _number(submit),
        _requested(job.requested_processors, losses),
        _number(limit),
        success,
        _final_state(job, start is not None, losses),
        _number(start),
        _number(run),
        _number(finish),
        _number(wait if start is not None else None),
        _number(turnaround if start is not None else None),
        _number(stretch if start is not None else None),
        alloc_text,
        "" if energy is None else _number(energy),
        str(extras.get(EXTRA_METADATA, "")),
    ]
    others = extras.get(EXTRA_CSV) or {}
    row.extend(str(others.get(key, "")) for key in extra_columns)
    if job.requested_processors == 0:
        losses.add("requested_processors", "0: read back as unknown")
    if job.allocated_processors == 0:
        losses.add("allocated_processors", "0: read back as unknown")
    note_fields(losses, job, _NOT_CARRIED)
    note_fields(losses, job, RICH_FIELDS)
    note_extras(losses, extras, kept=_KEPT)
    return row, highest
