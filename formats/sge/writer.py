"""Writing workloads as accounting files, colon (``sge``) or JSONL (``sge-jsonl``).

A job that carries its source records (``extras["sge_record"]`` or
``extras["sge_records"]``, as the reader leaves them) is written from them:

* in the layout it was read from, byte for byte, unless the job's times or slots no
  longer match its record (a simulated schedule): then the submission, start and
  end time and the slots of its main record are replaced, in the record's units;
* in the other layout, converted field by field (see :mod:`.colon`).

A job without source records (read from SWF, generated, simulated from scratch) is
synthesised from its 18 fields, the header's ``Queue``/``User``/``Group`` name
tables and ``UnixStartTime``, and the rich fields of :class:`~schedlab.model.Job`
(name, account, hosts, exit code, priority) when present. No two numbers get the
same name (the reader numbers names): see :class:`_Names`; a table name not
written as it is (empty, taken, read as unknown) is reported.

Records are written in source-file order when every job carries its source line
numbers (``order="source"``, the default), else in workload order.

What an accounting record cannot say is reported through :mod:`schedlab.losses`
(docs/formats/conversions.md has the table): an unknown or partial status (written
as completed), an unknown wait or run time of a job that ran (written as 0), a
negative run or wait time (written as 0, so that no record ends before it starts),
an unknown submit time, an unknown processor count that the reader would read as
the other one, the SWF fields Grid Engine has no place for (executable, partition,
preceding job, think time), the rich fields it cannot hold, the header labels and
free-text header comments (``header.comment``), and a known origin that no record
written holds a time to carry (the reader then leaves the origin unknown).
Unknown CPU time and memory stay unknown in JSONL (the keys are left out of
``eusage``); the colon layout must write a number there and writes 0 (reported).
A value the reader would refuse is never written: a negative CPU time or memory,
or a total beyond the reader's bounds, is unknown (JSONL) or 0 (colon); a
negative processor count or request is unknown; an origin from which a time
stamp would not be positive or would go past what the layout's reader reads as
seconds (colon: 1e11) or microseconds (JSONL: 2**53 - 1) is replaced (times
spanning more than any origin allows are an error); all reported. A CPU time or
memory the reader's division by the slots does not give back exactly, and a time
finer than the layout's unit, are reported as rounded.
Job numbers are written as they are (the reader numbers jobs 1..N unless read with
``job_numbers=sge``); a job without one, or with one beyond 2**53 - 1 (which the
readers refuse), gets a new number (reported); a priority beyond 2**53 - 1 is
written as 0 (reported).
The colon layout has no escape: a ``:`` or newline in a name or text is substituted
so that the file reads back as the same records (:func:`.colon.from_json_record`),
each change reported under the model field it stands for (``user_id``, ``name``
...) or ``extras.sge_record.KEY``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from typing import Any

import numpy as np
from schedlab.errors import FormatError
from schedlab.io import open_output
from schedlab.losses import (
    Losses,
    note_extras,
    note_fields,
    note_table_entries,
    writer_losses,
)
from schedlab.model import NODES_EXTRA, SWF_FIELDS, Job, JobColumns, Workload
from schedlab.validation import MAX_MAGNITUDE, MAX_SECONDS

from . import colon as colon_layout
from . import jsonl as json_layout
from .colon import RecordError
from .mapping import COMMENT_NOTE, RUNNING_EXIT_STATUS, category_consumables, format_date
from .names import (
    COLON_FULL_FIELDS,
    COLON_SUBSTITUTE,
    EXTRA_LINE,
    EXTRA_LINES,
    EXTRA_RECORD,
    EXTRA_RECORDS,
    MS_THRESHOLD,
    NO_NAME,
)


def _jobs(workload: Workload) -> Iterator[tuple[dict[str, Any], dict[str, Any], Job | None]]:
    """``(swf values, extras, Job or None)`` for every job, without building Job
    objects for columnar workloads."""
    for chunk in workload.iter_chunks():
        if isinstance(chunk, JobColumns):
            cols = [chunk.data[name].tolist() for name in SWF_FIELDS]
            extras = chunk.extras
            for i, row in enumerate(zip(*cols, strict=True)):
                values = {
                    name: (None if v != v else v) for name, v in zip(SWF_FIELDS, row, strict=True)
                }
                yield values, (extras[i] if extras is not None else {}) or {}, None
        else:
            for job in chunk:
                values = {name: getattr(job, name) for name in SWF_FIELDS}
                yield values, job.extras or {}, job


def _hostname(job: Job | None, extras: dict[str, Any] | None) -> str:
    """The record's host: the job's first host, else (a columnar workload, whose
    jobs are not built) the first node a simulation gave it (``schedlab.nodes``),
    else ``UNKNOWN``."""
    if job is not None:
        return job.hosts[0] if job.hosts else "UNKNOWN"
    nodes = (extras or {}).get(NODES_EXTRA)
    if isinstance(nodes, str) and nodes.split():
        return nodes.split()[0]
    return "UNKNOWN"


def _records_of(extras: dict[str, Any]) -> tuple[tuple[str, ...], tuple[int, ...] | None]:
    if EXTRA_RECORDS in extras:
        return tuple(extras[EXTRA_RECORDS]), extras.get(EXTRA_LINES)
    if EXTRA_RECORD in extras:
        line = extras.get(EXTRA_LINE)
        return (extras[EXTRA_RECORD],), (line,) if line is not None else None
    return (), None


#: The origin (epoch seconds) of a workload whose header has no ``UnixStartTime``:
#: 2000-01-01 00:00 UTC. Time stamps must be positive (0 means "never started"), so
#: relative times cannot be written from the epoch itself.
DEFAULT_ORIGIN = 946_684_800

#: The latest time stamp (epoch seconds) each layout's reader reads back as
#: written: colon seconds from 1e11 on are read as milliseconds (Univa); JSONL
#: microseconds are at most 2**53 - 1 (the reader's bound for integers).
LATEST_STAMP = {"colon": int(MS_THRESHOLD) - 1, "jsonl": (MAX_MAGNITUDE // 1_000_000) - 1}
#: What each layout's latest time stamp is, for messages.
_LATEST_WHY = {
    "colon": "colon time stamps of 1e11 s and more are read as milliseconds",
    "jsonl": "JSONL time stamps are at most 2**53 - 1 microseconds, the year 2255",
}


def _time_span(workload: Workload) -> tuple[float, float] | None:
    """The earliest and latest time (seconds from the origin) the records of the
    workload's jobs would carry, as :func:`_stamps` writes them: the submission
    (0 for a job that started at an unknown submission) and the end (a negative
    wait or run counts as 0); ``None`` when no job has a time."""
    low, high = math.inf, -math.inf
    for chunk in workload.iter_chunks():
        if isinstance(chunk, JobColumns):
            submit = np.asarray(chunk.data["submit_time"], dtype=np.float64)
            wait = np.asarray(chunk.data["wait_time"], dtype=np.float64)
            run = np.asarray(chunk.data["run_time"], dtype=np.float64)
        else:
            rows = [(j.submit_time, j.wait_time, j.run_time) for j in chunk]
            table = np.array(
                [[math.nan if v is None else v for v in row] for row in rows], dtype=np.float64
            ).reshape(-1, 3)
            submit, wait, run = table[:, 0], table[:, 1], table[:, 2]
        started = ~np.isnan(wait) | ~np.isnan(run)
        has = started | ~np.isnan(submit)
        if not has.any():
            continue
        base = np.where(np.isnan(submit), 0.0, submit)[has]
        end = (
            base
            + np.where(np.isnan(wait), 0.0, np.maximum(wait, 0.0))[has]
            + np.where(np.isnan(run), 0.0, np.maximum(run, 0.0))[has]
        )
        low, high = min(low, float(base.min())), max(high, float(end.max()))
    return (low, high) if math.isfinite(low) else None


def _fits(origin: int, span: tuple[float, float] | None, layout: str) -> bool:
    if span is None:
        return True  # no job has a time: no time stamp is written from it
    return origin + span[0] >= 1 and origin + span[1] <= LATEST_STAMP[layout]


class _Context:
    """What the writer needs from the workload header."""

    def __init__(self, workload: Workload, layout: str = "colon") -> None:
        header = workload.header
        #: True when the header has no origin and :data:`DEFAULT_ORIGIN` is used.
        self.invented_origin = header.unix_start_time is None
        #: ``colon`` or ``jsonl``: the unit synthesised time stamps are rounded to.
        self.layout = layout
        given = header.unix_start_time
        self.origin = DEFAULT_ORIGIN if given is None else int(given)
        #: Why the header's origin is not used (``None``: it is, or there is none).
        self.replaced: str | None = None
        span = _time_span(workload)
        if not _fits(self.origin, span, layout):
            self.origin, self.replaced = _substitute_origin(given, span, layout)
        self.queues = _Names(header.names("Queue"), "queue", layout)
        self.users = _Names(header.names("User"), "user", layout)
        self.groups = _Names(header.names("Group"), "group", layout)
        #: The ``#`` comment lines the reader kept, as they were (trailing blanks too).
        self.comments = [
            note[len(COMMENT_NOTE) :]
            for note in map(_note_text, header.entries)
            if note is not None and note.startswith(COMMENT_NOTE)
        ]


def _note_text(entry: Any) -> str | None:
    """The text of a ``Note`` header entry without its leading blanks (trailing
    blanks kept: a ``#`` comment line is written back byte for byte), else ``None``."""
    if entry.label != "Note":
        return None
    if entry.continuation:
        return "\n".join((entry.value, *entry.continuation)).strip()
    return str(entry.value).lstrip()


#: Why a name of a header table is not written as it is (see :class:`_Names`).
_EMPTY_NAME = "an empty name, written as a made-up one (the reader reads an empty name as unknown)"
_UNKNOWN_NAME = (
    "a name the reader reads as no queue (UNKNOWN, NONE, (null)), written as a made-up one"
)
_TAKEN_NAME = (
    "a name another number has (as the layout writes it), written as a made-up one"
    " (the reader numbers names: the two would merge)"
)


class _Names:
    """The names a synthesised record gives the numbers of a user, group or queue
    table (the reader numbers the names it reads, so they must be one to one with
    the numbers): a number keeps its name from the header table unless the name is
    empty, one the reader reads as unknown (a queue ``UNKNOWN``, ``NONE``,
    ``(null)``), or one a lower number of the table has as the layout writes it
    (colon: ``:`` as ``_``); the others get ``<prefix><number>`` (a number that is
    not whole as written, ``user1.5``), with a suffix ``-2``, ``-3`` ... while that
    is a name the table keeps. Made-up names differ from each other by their
    numbers, so no two numbers share a name."""

    def __init__(self, table: dict[int, str], prefix: str, layout: str) -> None:
        self.prefix = prefix
        self.layout = layout
        unknown = NO_NAME if prefix == "queue" else frozenset(("",))
        #: The header's name of each number that keeps it.
        self.kept: dict[int, str] = {}
        #: Why each other number of the table does not keep its name.
        self.renamed: dict[int, str] = {}
        taken: set[str] = set()
        for number in sorted(table):
            name = table[number]
            form = self._form(name)
            if not name:
                self.renamed[number] = _EMPTY_NAME
            elif form in unknown:
                self.renamed[number] = _UNKNOWN_NAME
            elif form in taken:
                self.renamed[number] = _TAKEN_NAME
            else:
                self.kept[number] = name
                taken.add(form)
        self._taken = taken
        self._made: dict[str, str] = {}

    def _form(self, name: str) -> str:
        """``name`` as the layout writes it (see :func:`.colon.from_json_record`)."""
        if self.layout != "colon":
            return name
        text = name.replace("\r", " ").replace("\n", " ").replace(":", COLON_SUBSTITUTE)
        if self.prefix == "queue" and text.startswith("#"):
            text = COLON_SUBSTITUTE + text[1:]
        return text

    def name(self, number: Any) -> str:
        """The name written for ``number`` (``None``: ``UNKNOWN`` for a queue, else
        empty, both read back as unknown)."""
        if number is None:
            return "UNKNOWN" if self.prefix == "queue" else ""
        whole = float(number).is_integer()
        if whole:
            kept = self.kept.get(int(number))
            if kept is not None:
                return kept
        text = str(int(number)) if whole else _number_text(number)
        made = self._made.get(text)
        if made is None:
            made, suffix = f"{self.prefix}{text}", 2
            while made in self._taken:
                made, suffix = f"{self.prefix}{text}-{suffix}", suffix + 1
            self._made[text] = made
        return made

    def note(self, label: str, used: set[int], losses: Losses) -> None:
        """Report the table entries of the numbers in ``used`` whose name is not
        written as it is (one count per entry)."""
        for number, why in self.renamed.items():
            if number in used:
                losses.add(f"header.{label}", why)


def _substitute_origin(
    given: int | None, span: tuple[float, float] | None, layout: str
) -> tuple[int, str | None]:
    """An origin from which every time stamp of the workload reads back as written
    (positive, within :data:`LATEST_STAMP`): :data:`DEFAULT_ORIGIN` if it does,
    else the closest one that does; and why the header's origin ``given`` is not
    used. Raises :class:`ValueError` when no origin does (the times span more
    than the layout's time stamps can hold)."""
    latest = LATEST_STAMP[layout]
    low, high = span if span is not None else (0.0, 0.0)
    first, last = math.ceil(1 - low), math.floor(latest - high)
    if first > last:
        raise ValueError(
            f"the jobs' times span {high - low:.6g} s (first submission to last end),"
            f" more than an accounting file can hold ({_LATEST_WHY[layout]})"
        )
    origin = min(max(DEFAULT_ORIGIN, first), last)
    if given is None:
        return origin, None
    if given + low < 1:
        why = f"time stamps from {given} would not be positive"
    else:
        why = f"time stamps from {given} would reach {given + high:.6g} s ({_LATEST_WHY[layout]})"
    return origin, f"{why}: times written from {origin} (absolute times not kept)"


# ----------------------------------------------------------------- source records


def _is_json(record: str) -> bool:
    return record[:1] == "{"


def _parsed(record: str) -> tuple[list[str] | None, dict[str, Any] | None]:
    if _is_json(record):
        return None, json_layout.parse_record(record)
    return colon_layout.split_record(record), None


def _main_index(parsed: list[tuple[list[str] | None, dict[str, Any] | None]]) -> int:
    """The record that describes the job, as the reader picks it: the last one that
    is not a parallel task, a final record before an intermediate one of the job
    still running (exit status :data:`.mapping.RUNNING_EXIT_STATUS`)."""
    main = final = len(parsed) - 1
    found_final = False
    for i, (fields, record) in enumerate(parsed):
        pe = fields[41] if fields is not None else (record or {}).get("pe_taskid", "")
        if pe in ("", "NONE"):
            main = i
            if not _still_running(fields, record):
                final, found_final = i, True
    return final if found_final else main


def _still_running(fields: list[str] | None, record: dict[str, Any] | None) -> bool:
    """Whether a record is an intermediate record of a job still running (started,
    exit status :data:`.mapping.RUNNING_EXIT_STATUS`), whose end the reader leaves
    unknown."""
    if fields is not None:
        return int(fields[12]) == RUNNING_EXIT_STATUS and float(fields[9]) > 0
    assert record is not None
    return (
        record.get("exit_status") == RUNNING_EXIT_STATUS and float(record.get("start_time", 0)) > 0
    )


def _close(a: float | None, b: float | None, tolerance: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= tolerance


def _patch(
    fields: list[str] | None, record: dict[str, Any] | None, values: dict[str, Any], origin: int
) -> tuple[list[str] | None, dict[str, Any] | None, bool]:
    """Replace times and slots that no longer match the job's values."""
    if fields is not None:
        stamps = [float(fields[8]), float(fields[9]), float(fields[10])]
        scale = 1000.0 if max(stamps) >= MS_THRESHOLD else 1.0
        slots = float(fields[34])
    else:
        assert record is not None
        stamps = [
            float(record["submission_time"]),
            float(record["start_time"]),
            float(record["end_time"]),
        ]
        scale = 1e6
        slots = float(record.get("slots", 1))
    sub, start, end = stamps
    started = start > 0
    o = origin * scale
    running = _still_running(fields, record)  # (the reader leaves the end unknown)
    have = {
        "submit_time": (sub - o) / scale if sub > 0 else ((start - o) / scale if started else None),
        "wait_time": (start - sub) / scale if started and sub > 0 else None,
        "run_time": (end - start) / scale if started and not running else None,
    }
    tolerance = 0.5 / scale
    if all(_close(have[k], values[k], tolerance) for k in have) and (
        not started or values["allocated_processors"] in (None, slots)
    ):
        return fields, record, False
    new_sub, new_start, new_end = _stamps(values, origin, scale)
    new_slots = values["allocated_processors"]
    if fields is not None:
        fields = list(fields)
        fields[8], fields[9], fields[10] = (str(v) for v in (new_sub, new_start, new_end))
        if new_slots is not None:
            fields[34] = str(int(new_slots))
        return fields, None, True
    assert record is not None
    record = dict(record)
    record["submission_time"], record["start_time"], record["end_time"] = (
        new_sub,
        new_start,
        new_end,
    )
    if new_slots is not None:
        record["slots"] = int(new_slots)
    return None, record, True


def _holds_time(fields: list[str] | None, record: dict[str, Any] | None, target: str) -> bool:
    """Whether a record (colon ``fields`` or a JSONL ``record``) written in the
    ``target`` layout has a submission or start time stamp (the reader takes the
    origin from them; the colon layout truncates microseconds to seconds)."""
    if fields is not None:
        return float(fields[8]) > 0 or float(fields[9]) > 0
    assert record is not None
    unit = 1_000_000 if target == "colon" else 1
    return any(int(record.get(key, 0)) // unit > 0 for key in ("submission_time", "start_time"))


def _stamps(values: dict[str, Any], origin: int, scale: float) -> tuple[int, int, int]:
    """Submission, start and end time stamps (in ``scale`` units per second).

    Unknown wait with a known run time counts as no wait; unknown run time with a
    known wait gives a job that ended when it started; neither known gives a job
    that never started (start and end 0). Each time is rounded to the unit on its
    own and the stamps are added up in integers, so that the reader's differences
    give back every time the unit can hold exactly (``123.98`` s, not
    ``123.97999999999999``).
    """
    units = int(scale)
    submit = values["submit_time"]
    wait = values["wait_time"]
    run = values["run_time"]
    if submit is None:
        if wait is None and run is None:
            return 0, 0, 0
        submit = 0.0
    sub = int(origin) * units + round(submit * units)
    if run is None and wait is None:
        return sub, 0, 0
    # a negative wait or run (an error in the source log) would give a record that
    # ends before it starts, which no reader accepts: it counts as 0 (reported)
    start = sub + round(max(wait or 0.0, 0.0) * units)
    end = start + round(max(run or 0.0, 0.0) * units)
    return sub, start, end


#: JSONL keys the colon layout has no field for (reported first, in this order).
_JSON_ONLY = ("submit_cmd_line", "deleted_by")
#: Top-level JSONL keys the colon layout has a field for.
_COLON_KEYS = frozenset(
    (
        "qname", "hostname", "group", "owner", "job_name", "job_number", "account",
        "priority", "submission_time", "start_time", "end_time", "failed",
        "exit_status", "project", "department", "granted_pe", "slots", "task_number",
        "category", "pe_taskid", "arid", "ar_submission_time", "usage",
    )
)  # fmt: skip
#: Execd usage values the colon layout has a field for.
_COLON_EXECD = frozenset(("cpu", "mem", "io", "iow", "maxvmem"))
_STAMPS = ("submission_time", "start_time", "end_time")
_NO_COLON_FIELD = "not written (the colon layout has no field)"


def _note_json_to_colon(obj: dict[str, Any], main: bool, losses: Losses) -> None:
    """Count what a JSONL record loses in the colon layout: every key and usage
    value without a colon field (``eusage.wallclock`` and ``maxrss`` only when the
    way back, end - start and ``ru_maxrss`` x 1024, would not give them again)."""
    for key in _JSON_ONLY:
        if key in obj:
            losses.add(f"extras.sge_record.{key}", _NO_COLON_FIELD)
    for key in obj:
        if key not in _COLON_KEYS and key not in _JSON_ONLY:
            losses.add(f"extras.sge_record.{key}", _NO_COLON_FIELD)
    usage = obj.get("usage")
    if isinstance(usage, dict) and usage:
        _note_usage_to_colon(obj, usage, losses)
    if "deleted_by" in obj and main:
        losses.add("status", "deleted_by not written: a deleted job may read back as not 5")
    if not main:
        return
    sub, start, end = (int(obj.get(k, 0)) % 1_000_000 for k in _STAMPS)
    for field, fraction in (
        ("submit_time", sub),
        ("wait_time", sub or start),
        ("run_time", start or end),
    ):
        if fraction:
            losses.add(field, "microseconds truncated to whole seconds (the colon layout)")


def _note_usage_to_colon(obj: dict[str, Any], usage: dict[str, Any], losses: Losses) -> None:
    """The usage part of :func:`_note_json_to_colon` (containers chosen as
    :func:`.colon.from_json_record` chooses them)."""
    execd_name = "eusage" if usage.get("eusage") else "usage"
    rusage = usage.get("rusage") or {}
    for name, container in usage.items():
        if name in ("rusage", execd_name) or container in ({}, None):
            continue
        losses.add(f"extras.sge_record.usage.{name}", _NO_COLON_FIELD)
    if isinstance(rusage, dict):
        for key in rusage:
            if key not in colon_layout.RUSAGE_FIELDS:
                losses.add(f"extras.sge_record.usage.rusage.{key}", _NO_COLON_FIELD)
    execd = usage.get(execd_name) or {}
    if not isinstance(execd, dict):
        return
    start = int(obj.get("start_time", 0)) // 1_000_000
    end = int(obj.get("end_time", 0)) // 1_000_000
    again = {  # what the colon -> JSONL conversion gives back
        "wallclock": float(end - start) if start > 0 else 0.0,
        "maxrss": float(rusage.get("ru_maxrss", 0)) * 1024.0 if isinstance(rusage, dict) else 0.0,
    }
    prefix = f"extras.sge_record.usage.{execd_name}"
    for key, value in execd.items():
        if key in _COLON_EXECD:
            continue
        if key in again:
            if value == again[key]:
                continue
            how = "end - start" if key == "wallclock" else "ru_maxrss x 1024, another quantity"
            losses.add(f"{prefix}.{key}", f"{_NO_COLON_FIELD}; read back as {how}")
        else:
            losses.add(f"{prefix}.{key}", _NO_COLON_FIELD)


#: What the colon -> JSONL conversion says of the ``maxrss`` it fills in.
_MAXRSS_FILLED = (
    "filled from usage.rusage.ru_maxrss x 1024 (the colon layout has no execd maxrss; "
    "ru_maxrss is the largest process's peak, not the job's)"
)


def _source_lines(
    records: tuple[str, ...],
    values: dict[str, Any],
    ctx: _Context,
    target: str,
    usage_key: str,
    losses: Losses | None = None,
    timed: list[bool] | None = None,
) -> list[str]:
    """The lines of a job written from its source records (see the module). When a
    line written holds a time (a submission or start time stamp the reader reads
    as one), ``True`` is appended to ``timed``."""
    parsed = [_parsed(r) for r in records]
    main = _main_index(parsed)
    out = []
    for i, record in enumerate(records):
        fields, obj = parsed[i]
        changed = False
        if i == main:
            fields, obj, changed = _patch(fields, obj, values, ctx.origin)
            if target == "colon" and obj is not None and losses is not None:
                # a JSONL record without cpu/maxvmem (unknown) gets the colon's 0
                started = float(obj.get("start_time", 0)) > 0
                _note_colon_zeros(values, started, int(obj.get("slots", 1)), losses)
        if timed is not None and not timed and _holds_time(fields, obj, target):
            timed.append(True)
        if target == "colon":
            if fields is not None:
                out.append(":".join(fields) if changed else record)
            else:
                assert obj is not None
                if losses is not None:
                    _note_json_to_colon(obj, i == main, losses)
                out.append(":".join(colon_layout.from_json_record(obj, _reporter(losses))))
        else:
            if obj is not None:
                keyed = obj if usage_key == "keep" else json_layout.with_usage_key(obj, usage_key)
                if keyed is obj and not changed:
                    out.append(record)
                else:
                    out.append(json_layout.dumps(keyed))
            else:
                assert fields is not None
                if losses is not None and len(fields) > COLON_FULL_FIELDS:
                    losses.add(
                        "extras.sge_record.trailing_fields",
                        "not written (fields after the 45th have no JSONL key)",
                    )
                converted = colon_layout.to_json_record(fields)
                if losses is not None:
                    execd = "usage" if usage_key == "usage" else "eusage"
                    losses.add(f"extras.sge_record.usage.{execd}.maxrss", _MAXRSS_FILLED)
                if usage_key == "usage":
                    converted = json_layout.with_usage_key(converted, "usage")
                out.append(json_layout.dumps(converted))
    return out


# ----------------------------------------------------------------- synthesis


def _int_or(value: Any, default: int) -> int:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return default
    return int(value)


def _exact_integer(value: Any) -> bool:
    """True when ``value`` is known and within 2**53 - 1 in magnitude, the bound the
    readers hold job numbers and priorities to (a larger one is not written)."""
    return value is not None and abs(value) <= MAX_MAGNITUDE


def _number_text(number: Any) -> str:
    """A number that is not whole as a plain decimal, the shortest that reads back
    as the same float (``1.5``; never ``1e-05``)."""
    return np.format_float_positional(float(number), unique=True, trim="-")


def _readable_exit(code: Any) -> bool:
    """Whether an exit code is one the readers take as ``exit_status`` (from 0 to
    2**53 - 1)."""
    return 0 <= code <= MAX_MAGNITUDE


def _whole(value: Any) -> bool:
    """Whether a known number is whole (a job number of 2.5 is not one)."""
    return value is None or float(value).is_integer()


def _duration(seconds: float) -> str:
    """A request value as a plain decimal (never ``1e-05``: the reader reads no
    exponent in a memory size), the shortest that reads back as the same float."""
    value = float(seconds)
    if value.is_integer():
        return str(int(value))
    return np.format_float_positional(value, unique=True, trim="-")


#: Why a CPU time or memory total cannot be written as the reader reads it back.
NEGATIVE, TOO_LARGE, ROUNDED = "negative", "too large", "rounded"


def _usage_total(
    per_slot: float | None, slots: int, factor: float, bound: float
) -> tuple[float | None, str | None]:
    """The job total (``cpu`` seconds: ``factor`` 1; ``maxvmem`` bytes from KB:
    1024) of a per-slot value, and why the reader does not read it back as written:
    :data:`NEGATIVE` or :data:`TOO_LARGE` (the reader refuses it: the total is
    ``None``), :data:`ROUNDED` (the reader's ``total / factor / slots`` is off by a
    unit in the last place, e.g. 123.98 x 40: no float total gives it back)."""
    if per_slot is None:
        return None, None
    per_slot = float(per_slot)
    total = per_slot * factor * slots
    if slots <= 0:  # (read back as unknown: reported as such)
        return abs(total), None
    if per_slot < 0:
        return None, NEGATIVE
    if not total <= bound:
        return None, TOO_LARGE
    return total, (None if total / factor / slots == per_slot else ROUNDED)


def _requested_slots(values: dict[str, Any]) -> int:
    """The slots the reader multiplies per-slot consumables by: the requested
    processors (written as ``-pe`` when they differ), else the granted slots."""
    slots = _int_or(values["allocated_processors"], _int_or(values["requested_processors"], 1))
    return _int_or(values["requested_processors"], slots)


def synthesise(
    values: dict[str, Any],
    ctx: _Context,
    job: Job | None,
    index: int,
    extras: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A JSON-shaped record for a job known only by its SWF fields (and rich fields).

    Unknown CPU time and memory are left out of ``eusage`` (the JSONL reader reads
    them as unknown; the colon layout writes 0 for them). The ``request.gpus`` and
    ``request.NAME`` extras are written per slot into the category (``gpu=N``),
    as the reader reads them back. Negative processor counts and requests (errors
    in the source log, which the reader refuses or ignores) are written as unknown."""
    values = _without_negatives(values)[0]
    # The record is JSON-shaped (microseconds); the colon layout holds whole
    # seconds, so its times are rounded to the second here (each on its own, half
    # to even), not cut down when the record becomes colon fields.
    if ctx.layout == "colon":
        sub, start, end = (stamp * 1_000_000 for stamp in _stamps(values, ctx.origin, 1.0))
    else:
        sub, start, end = _stamps(values, ctx.origin, 1e6)
    started = start > 0
    slots = _int_or(values["allocated_processors"], _int_or(values["requested_processors"], 1))
    status = values["status"]
    failed, exit_status = 0, 0
    if status == 0:
        exit_status = 1
    elif status == 5 and started:
        failed, exit_status = 100, 137
    if job is not None and job.exit_code is not None and status != 5:
        code = int(job.exit_code)
        # the status wins where the exit code would contradict it (reported), and
        # over one the readers refuse (reported)
        if _readable_exit(code) and not (
            (status == 1 and code != 0) or (status == 0 and code == 0)
        ):
            exit_status = code
    requests = []
    if values["requested_time"] is not None:
        requests.append(f"h_rt={_duration(values['requested_time'])}")
    if values["requested_memory"] is not None:
        requests.append(f"h_vmem={_duration(values['requested_memory'])}K")
    if extras:
        requests.extend(category_consumables(extras, _requested_slots(values)).values())
    category = f"-l {','.join(requests)}" if requests else ""
    req_procs = values["requested_processors"]
    if req_procs is not None and int(req_procs) != slots:
        category = f"{category} -pe pe {int(req_procs)}".strip()
    run = (end - start) / 1e6 if started else 0.0
    cpu = _usage_total(values["average_cpu_time"], slots, 1.0, MAX_SECONDS)[0]
    memory = _usage_total(values["used_memory"], slots, 1024.0, MAX_MAGNITUDE)[0]
    record: dict[str, Any] = {
        "job_number": _int_or(values["job_number"], index + 1),
        "task_number": 0,
        "start_time": start,
        "end_time": end,
        "owner": ctx.users.name(values["user_id"]),
        "group": ctx.groups.name(values["group_id"]),
        "account": (job.account if job is not None else None) or "sge",
        "qname": ctx.queues.name(values["queue_number"]),
        "hostname": _hostname(job, extras),
        "department": "defaultdepartment",
        "slots": slots,
    }
    if job is not None and job.name:
        record["job_name"] = job.name
    # a priority the reader refuses (beyond 2**53 - 1) is written as 0 (reported)
    priority = job.priority if job is not None else None
    record["priority"] = _int_or(priority if _exact_integer(priority) else None, 0)
    record["submission_time"] = sub
    record["category"] = category
    record["failed"] = failed
    record["exit_status"] = exit_status
    wallclock = int(run) if float(run).is_integer() else run
    rusage: dict[str, int | float] = {name: 0 for name in colon_layout.RUSAGE_FIELDS}
    rusage["ru_wallclock"] = wallclock
    rusage["ru_utime"] = 0.0
    rusage["ru_stime"] = 0.0
    record["usage"] = {
        "rusage": rusage,
        "eusage": {
            "wallclock": float(run),
            "cpu": cpu,
            "mem": 0.0,
            "io": 0.0,
            "iow": 0.0,
            "maxvmem": memory,
        },
    }
    eusage = record["usage"]["eusage"]
    for key in ("cpu", "maxvmem"):
        if eusage[key] is None:
            del eusage[key]
    return record


#: Header labels an accounting file carries (name tables, origin, comments).
_HEADER_KEPT = frozenset(("Queue", "User", "Group", "UnixStartTime"))
#: Header labels the reader makes again from the records.
_HEADER_REMADE = frozenset(
    (
        "Version",
        "Computer",
        "Conversion",
        "MaxJobs",
        "MaxRecords",
        "StartTime",
        "EndTime",
        "MaxQueues",
        "Queues",
    )
)
#: Per-job extras a record carries.
_KEPT_EXTRAS = frozenset((EXTRA_RECORD, EXTRA_RECORDS, EXTRA_LINE, EXTRA_LINES))
_NO_FIELD = "not written (an accounting record has no such field)"
_RECORD_ONLY = "written in the record only (the sge reader does not map it back)"


def _note_colon_zeros(values: dict[str, Any], started: bool, slots: int, losses: Losses) -> None:
    """Count the unknown CPU time and memory a colon record writes as 0 and the
    reader reads back as 0: only of a job that started on some slots (for a job that
    never started, or per slot of 0 slots, the reader reads them as unknown again)."""
    if not started or slots <= 0:
        return
    for field, name in (("average_cpu_time", "cpu"), ("used_memory", "maxvmem")):
        if values[field] is None:
            losses.add(field, f"unknown, written as {name} 0 (the colon layout needs a number)")


#: Fields a record cannot carry a negative value of: ``slots`` must not be
#: negative; the reader reads no negative ``-pe``, ``h_rt`` or ``h_vmem``.
_NOT_NEGATIVE = (
    "allocated_processors",
    "requested_processors",
    "requested_time",
    "requested_memory",
)


def _without_negatives(values: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``values`` with the negative :data:`_NOT_NEGATIVE` fields unknown, and those
    fields."""
    negative = [f for f in _NOT_NEGATIVE if values[f] is not None and values[f] < 0]
    if not negative:
        return values, negative
    return {**values, **dict.fromkeys(negative)}, negative


def _note_negatives(values: dict[str, Any], negative: list[str], losses: Losses) -> None:
    """Count the negative counts and requests :func:`synthesise` writes as unknown
    (``values`` already without them)."""
    started = values["wait_time"] is not None or values["run_time"] is not None
    for field in negative:
        if field == "allocated_processors":
            if not started:
                losses.add(field, "not read back (the job never started)")
            elif values["requested_processors"] is not None:
                losses.add(
                    field, "negative (the reader refuses it), written as the requested count"
                )
            else:
                losses.add(field, "negative (the reader refuses it), written as 1")
        elif field == "requested_processors":
            losses.add(field, "negative, not written (read back as the allocated count)")
        else:
            losses.add(field, "negative, not written (read back as unknown)")


def _note_usage(values: dict[str, Any], slots: int, layout: str, losses: Losses) -> None:
    """Count the CPU time and memory of a job that ran on ``slots`` > 0 slots that
    its record cannot carry as the reader reads it back (see :func:`_usage_total`)."""
    for field, key, factor, bound, limit in (
        ("average_cpu_time", "cpu", 1.0, MAX_SECONDS, "1e12 s"),
        ("used_memory", "maxvmem", 1024.0, MAX_MAGNITUDE, "2**53 - 1 bytes"),
    ):
        problem = _usage_total(values[field], slots, factor, bound)[1]
        if problem is None:
            continue
        instead = (
            f"written as {key} 0 (the colon layout needs a number)"
            if layout == "colon"
            else f"{key} left out (read back as unknown)"
        )
        if problem == NEGATIVE:
            losses.add(field, f"negative (the reader refuses it), {instead}")
        elif problem == TOO_LARGE:
            losses.add(field, f"{key} (x {slots} slots) above the reader's {limit}, {instead}")
        else:
            losses.add(field, f"rounded in the last digit ({key} is a total: divided by the slots)")


def _note_rounded_times(values: dict[str, Any], layout: str, losses: Losses) -> None:
    """Count the submit, wait and run times the layout's time stamps cannot hold
    exactly (colon: whole seconds; JSONL: whole microseconds). A negative wait or
    run is written as 0 (reported elsewhere)."""
    units = 1 if layout == "colon" else 1_000_000
    for field in ("submit_time", "wait_time", "run_time"):
        value = values[field]
        if value is None or (field != "submit_time" and value < 0):
            continue
        if round(value * units) / units != value:
            if layout == "colon":
                losses.add(field, "rounded to whole seconds (the colon layout)")
            else:
                losses.add(field, "rounded to whole microseconds (JSONL time stamps)")


def _note_synthesised(
    values: dict[str, Any], job: Job | None, extras: dict[str, Any], layout: str, losses: Losses
) -> None:
    """Count what a record synthesised from the model cannot say."""
    values, negative = _without_negatives(values)
    _note_negatives(values, negative, losses)
    status, wait, run = values["status"], values["wait_time"], values["run_time"]
    alloc, req = values["allocated_processors"], values["requested_processors"]
    started = wait is not None or run is not None
    slots = _int_or(alloc, _int_or(req, 1))  # as synthesise() writes them
    if values["submit_time"] is None and started:
        losses.add("submit_time", "unknown, written as the origin (UnixStartTime)")
    if status is None:
        if started:
            losses.add("status", "unknown, written as completed (read back as 1)")
        else:
            losses.add("status", "unknown, read back as 5 (the job never started)")
    elif status in (2, 3, 4):
        losses.add("status", f"partial-execution status {status} written as completed")
    elif status in (0, 1) and not started:
        losses.add("status", f"{status} of a job that never started: read back as 5")
    if not started:
        for field in ("allocated_processors", "average_cpu_time", "used_memory"):
            if values[field] is not None:
                losses.add(field, "not read back (the job never started)")
    elif slots == 0:
        for field in ("average_cpu_time", "used_memory"):
            if values[field] is not None:
                losses.add(field, "not read back (per slot of 0 slots)")
    else:
        _note_usage(values, slots, layout, losses)
    for field, value in (("allocated_processors", alloc), ("requested_processors", req)):
        if value is None or (field == "allocated_processors" and not started):
            continue
        if math.isfinite(value) and not float(value).is_integer():
            losses.add(field, "rounded down to whole slots")
    if started:
        if wait is None:
            losses.add("wait_time", "unknown, written as 0 (the job started on submission)")
        elif wait < 0:
            losses.add("wait_time", "negative, written as 0")
        if run is None:
            losses.add("run_time", "unknown, written as 0 (the job ended when it started)")
        elif run < 0:
            losses.add("run_time", "negative, written as 0")
    if layout == "colon":
        _note_colon_zeros(values, started, slots, losses)
    if req is None and alloc is not None and "requested_processors" not in negative:
        losses.add("requested_processors", "unknown, read back as the allocated count")
    if alloc is None and started and "allocated_processors" not in negative:
        losses.add(
            "allocated_processors",
            "unknown, written as the requested count"
            if req is not None
            else "unknown, written as 1",
        )
    for field in ("executable_number", "partition_number", "preceding_job_number", "think_time"):
        if values[field] is not None:
            losses.add(field, _NO_FIELD)
    if req is None and alloc is None and "requested_processors" not in negative:
        losses.add("requested_processors", "unknown, written as 1 slot")
    _note_rounded_times(values, layout, losses)
    if job is not None:
        note_fields(losses, job, ("nodes", "tasks", "dependencies"), _NO_FIELD)
        # written into the record (job_name, account, hostname, priority, exit
        # status), which the sge reader keeps as the record only
        note_fields(losses, job, ("name", "account", "hosts", "priority"), _RECORD_ONLY)
        if job.priority is not None and not _exact_integer(job.priority):
            losses.add(
                "priority", "out of range (at most 2**53 - 1, the reader refuses it), written as 0"
            )
        if job.exit_code is not None and not _readable_exit(job.exit_code) and status != 5:
            losses.add(
                "exit_code",
                "negative or beyond 2**53 - 1 (the readers refuse it), written from the status",
            )
        elif job.exit_code is not None:
            losses.add("exit_code", "written as 137 (killed)" if status == 5 else _RECORD_ONLY)
            if status is None or status in (2, 3, 4):
                if job.exit_code != 0:
                    losses.add("status", "unknown, read back as 0 (failed) from the exit code")
    kept = _KEPT_EXTRAS.union(category_consumables(extras, _requested_slots(values)))
    note_extras(losses, extras, kept)


def _note_origin(workload: Workload, ctx: _Context, losses: Losses, timed: bool) -> None:
    """Report an unknown or replaced origin. When no record written holds a time
    (``timed`` false: no job was submitted or started at a known time, or there is
    no job), the reader leaves the origin unknown: a known one is lost, an unknown
    one stays unknown (no time is written from the one chosen)."""
    if not timed:
        if workload.header.unix_start_time is not None:
            losses.add(
                "header.UnixStartTime",
                "not written (no record written holds a time): read back as unknown",
            )
        return
    if workload.header.unix_start_time is None:
        losses.add("header.UnixStartTime", f"unknown, times written from {ctx.origin}")
    elif ctx.replaced is not None:
        losses.add("header.UnixStartTime", ctx.replaced)


def _note_header(workload: Workload, ctx: _Context, losses: Losses) -> None:
    """Report the header labels an accounting file does not carry, and the
    free-text header comments (no label, e.g. a column legend; one count each):
    only the ``#`` comments the reader kept are written back."""
    comments = sum(1 for entry in workload.header.entries if entry.label is None)
    losses.add("header.comment", "not written (an accounting file has no header)", comments)
    if workload.meta.get("reader") in ("sge", "sge-jsonl"):
        return
    for label in workload.header.labels():
        if label in _HEADER_KEPT or label in _HEADER_REMADE:
            continue
        if label == "Note" and all(n.startswith(COMMENT_NOTE) for n in workload.header.notes):
            continue
        losses.add(f"header.{label}", "not written (an accounting file has no header)")


#: What the reader makes of the header labels it makes again (besides the counts
#: and times): a source value that differs is lost.
_REMADE_AS = {
    "Version": "2.2",
    "Computer": "Grid Engine / Open Cluster Scheduler cluster",
    "Queues": "Grid Engine cluster queues (qname), numbered in name order",
}


def _note_remade(
    workload: Workload,
    ctx: _Context,
    losses: Losses,
    jobs: int,
    queues: set[str],
    first: float,
    last_end: float,
) -> None:
    """Report the header labels the reader makes again from the records
    (:data:`_HEADER_REMADE`) with another value than the source's (``queues``: the
    queue names written): an accounting file has no header, so only what the
    records give comes back."""
    if workload.meta.get("reader") in ("sge", "sge-jsonl"):
        return  # the reader's own labels: made again alike
    header = workload.header
    start = math.floor(ctx.origin + first) if math.isfinite(first) else None
    again: dict[str, str | None] = {
        **_REMADE_AS,
        "Conversion": None,  # names the reader and the file: never the source's
        "MaxJobs": str(jobs),
        "MaxRecords": str(jobs),
        "StartTime": None if start is None else format_date(start),
        "EndTime": format_date(ctx.origin + last_end) if math.isfinite(last_end) else None,
        "MaxQueues": str(len(queues)) if queues else None,
    }
    for label in header.labels():
        if label in again and header.get(label) != again[label]:
            losses.add(f"header.{label}", "not written (the reader makes its own from the records)")


def _note_unused_entries(workload: Workload, losses: Losses, numbers: dict[str, set[Any]]) -> None:
    """Report the entries of the name tables (``Queue``, ``User``, ``Group``: the
    keys of ``numbers``, each the jobs' numbers in that table) that no record gives
    back (:func:`schedlab.losses.note_table_entries`). The reader makes these
    tables from the names in the records. (A used entry whose name is not written
    as it is: reported by ``_Names.note``.)"""
    if workload.meta.get("reader") in ("sge", "sge-jsonl"):
        return  # the reader's own tables: made again alike
    for label, used in numbers.items():
        noun = label.lower()
        note_table_entries(
            losses,
            workload.header,
            label,
            used,
            f"entries of {noun}s no job uses, and text after a {noun}'s name, not written",
        )


# ----------------------------------------------------------------- entry points


def write_accounting(
    workload: Workload,
    path: str | os.PathLike[str],
    *,
    layout: str = "colon",
    usage_key: str = "keep",
    order: str = "source",
) -> Losses:
    """Write ``workload`` as an accounting file in ``layout`` (``colon``/``jsonl``).

    ``usage_key`` (JSONL): ``"keep"`` writes source records with the container name
    they had and new records with ``eusage`` (OCS >= 9.0.6); ``"eusage"`` or
    ``"usage"`` (OCS 9.0.0-9.0.5) forces one name. ``order``: ``"source"`` restores
    the source file's record order when every job carries it, ``"workload"`` keeps
    the workload's job order. Returns what the records could not say (also reported
    to :func:`schedlab.collect_losses`).
    """
    with writer_losses() as losses:
        _write_accounting(workload, path, layout, usage_key, order, losses)
    return losses


#: The model field each name or text of a record stands for (its number, for
#: names), for loss reports; other keys are reported as ``extras.sge_record.KEY``.
_MODEL_FIELD = {
    "owner": "user_id",
    "group": "group_id",
    "qname": "queue_number",
    "job_name": "name",
    "account": "account",
    "hostname": "hosts",
}


def _reporter(losses: Losses | None) -> colon_layout.Report | None:
    """A :data:`.colon.Report` counting what the colon layout has to change (a
    ``:`` or newline in a name, see :func:`.colon.from_json_record`) as losses."""
    if losses is None:
        return None

    def report(key: str, action: str) -> None:
        losses.add(_MODEL_FIELD.get(key, f"extras.sge_record.{key}"), action)

    return report


def _record_text(
    record: dict[str, Any], layout: str, usage_key: str, losses: Losses | None = None
) -> str:
    if layout == "colon":
        return ":".join(colon_layout.from_json_record(record, _reporter(losses)))
    if usage_key == "usage":
        record = json_layout.with_usage_key(record, "usage")
    return json_layout.dumps(record)


def _fresh_numbers(highest: int, taken: set[int]) -> Iterator[int]:
    """New job numbers that no job has and the readers take: above ``highest``
    while they stay at most 2**53 - 1, then the lowest unused from 1."""
    top = int(MAX_MAGNITUDE)
    yield from range(max(highest, 0) + 1, top + 1)
    yield from (n for n in range(1, top + 1) if n not in taken)


def _write_accounting(
    workload: Workload,
    path: str | os.PathLike[str],
    layout: str,
    usage_key: str,
    order: str,
    losses: Losses,
) -> None:
    try:
        ctx = _Context(workload, layout)
    except ValueError as exc:
        raise FormatError(f"cannot be written: {exc}", source=os.fspath(path)) from None
    _note_header(workload, ctx, losses)
    placed: list[tuple[int, int, str]] = []  # (source line, sequence, text)
    all_have_lines = order == "source"
    sequence = 0
    first = math.inf
    used: set[tuple[int, int]] = set()
    highest = 0
    stored: set[int] = set()  # numbers of the jobs written from their source records
    renumber: list[tuple[int, dict[str, Any], Job | None, int, dict[str, Any]]] = []
    written_queues: set[str] = set()  # queue names written (the reader counts them)
    last_end = -math.inf
    jobs_written = 0
    timed: list[bool] = []  # (not empty once a record written holds a time)
    queue_numbers: set[Any] = set()  # queue numbers of the jobs
    user_numbers: set[Any] = set()  # user and group numbers of the jobs
    group_numbers: set[Any] = set()
    # the user, group and queue numbers of the synthesised records (named by ctx)
    named: dict[str, set[Any]] = {"user_id": set(), "group_id": set(), "queue_number": set()}
    for index, (values, extras, job) in enumerate(_jobs(workload)):
        jobs_written = index + 1
        records, lines = _records_of(extras)
        if values["submit_time"] is not None:
            submitted = values["submit_time"]
            end = None
            if values["wait_time"] is not None and values["run_time"] is not None:
                end = values["submit_time"] + values["wait_time"] + values["run_time"]
            if layout == "colon" and not records:
                # as synthesise() writes them: each time rounded to the second
                sub_s, _start_s, end_s = _stamps(_without_negatives(values)[0], 0, 1.0)
                submitted = sub_s
                end = end_s if end is not None else None
            first = min(first, submitted)
            if end is not None:
                last_end = max(last_end, end)
        if values["queue_number"] is not None:
            written_queues.add(ctx.queues.name(values["queue_number"]))
            queue_numbers.add(values["queue_number"])
        user_numbers.add(values["user_id"])
        group_numbers.add(values["group_id"])
        if records:
            highest = max(highest, _int_or(values["job_number"], 0))
            stored.add(_int_or(values["job_number"], 0))
            try:
                texts = _source_lines(records, values, ctx, layout, usage_key, losses, timed)
            except RecordError as exc:
                raise FormatError(
                    f"job {index + 1}: its stored source record is not valid: {exc.message}",
                    source=os.fspath(path),
                    field=exc.field,
                ) from None
        else:
            _note_synthesised(values, job, extras, layout, losses)
            record = synthesise(values, ctx, job, index, extras)
            if record["submission_time"] > 0 or record["start_time"] > 0:
                timed.append(True)
            for field, names in named.items():
                if values[field] is not None:
                    names.add(values[field])
            number = values["job_number"]
            out_of_range = number is not None and not _exact_integer(number)
            fraction = not out_of_range and not _whole(number)
            negative = number is not None and number < 0
            if out_of_range or fraction or negative:
                number = None  # the reader refuses it: a fresh number, as for none
            stamp = record["submission_time"]
            key = (_int_or(number, -1), stamp // 1_000_000 if layout == "colon" else stamp)
            if number is None or key in used:
                # the reader would merge it with the record of the same number
                # and submission (or it has none): a fresh number, after the loop
                renumber.append((len(placed), values, job, index, extras))
                what = "unknown" if number is None else "duplicate"
                if out_of_range:
                    what = "out of range (at most 2**53 - 1, the reader refuses it)"
                elif fraction:
                    what = f"not a whole number ({_number_text(values['job_number'])})"
                elif negative:
                    what = "negative (the readers refuse it)"
                losses.add("job_number", f"{what}, written as a new job number")
            used.add(key)
            highest = max(highest, key[0])
            # (a record renumbered below is written then, and reported then)
            report = None if renumber and renumber[-1][0] == len(placed) else losses
            texts = [_record_text(record, layout, usage_key, report)]
            lines = None
        if lines is None or len(lines) != len(texts):
            all_have_lines = False
            lines = (-1,) * len(texts)
        for line, text in zip(lines, texts, strict=True):
            placed.append((line, sequence, text))
            sequence += 1
    fresh = _fresh_numbers(highest, {key[0] for key in used} | stored)
    for at, values, job, index, extras in renumber:
        record = synthesise({**values, "job_number": next(fresh)}, ctx, job, index, extras)
        line, seq, _ = placed[at]
        placed[at] = (line, seq, _record_text(record, layout, usage_key, losses))
    if all_have_lines:
        placed.sort()
    _note_origin(workload, ctx, losses, bool(timed))
    for field, label, table in (
        ("user_id", "User", ctx.users),
        ("group_id", "Group", ctx.groups),
        ("queue_number", "Queue", ctx.queues),
    ):
        table.note(label, named[field], losses)
    _note_remade(workload, ctx, losses, jobs_written, written_queues, first, last_end)
    _note_unused_entries(
        workload, losses, {"Queue": queue_numbers, "User": user_numbers, "Group": group_numbers}
    )
    if math.isfinite(first):
        # the reader counts times from the first submission (whole seconds)
        shift = math.floor(ctx.origin + first) - ctx.origin
        if shift:
            losses.add(
                "header.UnixStartTime",
                f"read back as the first submission: relative times shift by {shift:g} s",
            )
    with open_output(path) as fh:
        for comment in ctx.comments:
            fh.write(comment + "\n")
        for _line, _seq, text in placed:
            fh.write(text)
            fh.write("\n")


__all__ = ["synthesise", "write_accounting"]
