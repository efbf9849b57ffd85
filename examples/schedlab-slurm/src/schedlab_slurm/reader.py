"""Reading ``sacct --parsable2`` output into a :class:`schedlab.Workload`.

One job per job record (``123``, ``123_4``, ``123_[1-3]``, ``123+0``); step records
(``123.batch``, ``123.extern``, ``123.0``) are folded into their job as
:class:`schedlab.Task` objects (a step joins the latest record of its job printed
before it, else the first one after it). Jobs are sorted by submit time, as SWF
requires (``order="file"`` keeps the file order); the writer puts every record back
in its original place. The SWF fields are filled as follows (``None`` is
SWF's -1):

===================== ==================================================================
SWF field             from
===================== ==================================================================
job_number            1, 2, 3 ... in submit order (``job_numbers="raw"``: ``JobIDRaw``
                      when it is a plain number, else the base of ``JobID``)
submit_time           ``Submit`` minus the origin (the earliest ``Submit``, see below)
wait_time             ``Start - Submit``; ``None`` if the job never started or either
                      time is ``Unknown``
run_time              ``ElapsedRaw``/``Elapsed`` (both printed: they must agree, and
                      an ended job's may not exceed ``End - Start``); 0 if it never
                      started; ``None`` while it has not ended (``RUNNING``,
                      ``SUSPENDED`` ...) and when ``Elapsed`` is printed empty
allocated_processors  ``AllocCPUS`` (else ``NCPUS``; both printed: they must agree);
                      ``None`` if 0 or never started
average_cpu_time      ``TotalCPU`` (else the sum over steps) / allocated processors
used_memory           max over steps of ``MaxRSS * NTasks / AllocCPUS`` (KB per CPU;
                      a ``MaxRSS`` without unit is bytes, as sacct prints it)
requested_processors  ``ReqCPUS`` (else ``NCPUS``)
requested_time        ``TimelimitRaw`` (minutes) or ``Timelimit`` (both printed: they
                      must agree); ``None`` when ``UNLIMITED`` / ``Partition_Limit``
requested_memory      ``ReqMem`` in KB per CPU: ``Mc`` as is, ``Mn`` divided by the CPUs
                      per node, no suffix (sacct >= 21.08: the job's total) divided by
                      the requested CPUs; ``0`` (all of a node's memory) is ``None``
status                ``State``: 1 ``COMPLETED``; 0 ``FAILED``, ``TIMEOUT``,
                      ``NODE_FAIL``, ``OUT_OF_MEMORY``, ``BOOT_FAIL``, ``DEADLINE``,
                      ``PREEMPTED``, and ``REQUEUED``/``RESIZING`` (the closed record
                      of a run ended by a requeue or a resize; the job goes on in a
                      later record), and ``REQUEUE_HOLD``/``REQUEUE_FED`` records with
                      an ``End`` (read as ``REQUEUED``); 5 ``CANCELLED [by N]``;
                      ``None`` for ``PENDING``, ``RUNNING`` and other states of jobs
                      that have not ended, and for a state sacct does not document
                      (a warning, see below)
user_id, group_id     1, 2 ... by first appearance of ``User`` (else ``UID``) and
                      ``Group`` (else ``GID``); names in header tables ``User``/``Group``
executable_number     1, 2 ... by ``JobName`` (header table ``Executable``)
queue_number          1, 2 ... by ``QOS`` (header ``Queue:`` entries)
partition_number      1, 2 ... by ``Partition`` (header ``Partition:`` entries); of the
                      list a job that never ran asked for (``batch,gpu``), the first
preceding_job, think  ``None`` (sacct does not print dependencies)
===================== ==================================================================

Rich fields: ``name`` (``JobName``), ``account``, ``nodes`` (``AllocNodes``/``NNodes``),
``hosts`` (``NodeList`` expanded; none for a job that never started), ``exit_code``
(the code of ``ExitCode``, the signal stays in the raw value), ``priority``. Every
column is also kept verbatim in ``job.extras["slurm.<Column>"]`` (and in each step's
``Task.extras``), so writing the workload back with the ``slurm`` writer reproduces
the records.

Requests on a platform (README, "Requests on a platform"): ``Partition`` ->
``request.partition`` (of a list, ``batch,gpu``, the first; the whole list stays in
``slurm.Partition``); a per-node ``ReqMem`` (``Mn``) -> ``request.memory`` (bytes
per node); ``gres/gpu`` of ``ReqTRES`` (else ``AllocTRES``) -> ``request.gpus``.

An unknown job state (a word that is none of sacct's documented states, e.g. from a
newer Slurm or a site patch) is not an error: the job's status stays unknown
(``None``), the raw state is kept (and written back), its run time is taken when the
record has an ``End`` time, and one :class:`SlurmStateWarning` per file lists the
records (also in ``workload.meta["unknown_states"]``: ``(line, state)`` pairs).

Times: sacct prints local time without a zone; ``timezone=`` names it (default UTC).
The header records the origin as ``UnixStartTime`` and the zone as ``TimeZoneString``.
The origin is the earliest ``Submit``; when no job has one, the earliest time of a
step (step times are counted from it); when no record holds a time at all, it is
unknown (no ``UnixStartTime``), not 0 (1970).
A local time that occurs twice (the hour repeated when daylight saving time ends)
is its first occurrence, unless only the second one is not before the time it
follows (``Start`` after ``Submit``, ``End`` after ``Start``).

Started or not: a job never started when its state is ``PENDING``, its node list
``None assigned``, it was cancelled with no elapsed time and no CPUs, it was
cancelled with no elapsed time and ``Start`` = ``End`` in a record without a
``NodeList`` column and with no allocation (``AllocTRES`` absent or empty: sacct
prints a job cancelled while pending so, with ``AllocCPUS`` = the CPUs it asked
for), or its ``Start`` is ``Unknown``/``None`` and its elapsed time 0 (as sacct
prints a job that never ran). A job that never started has no allocated processors,
wait time or hosts (a node list printed for it is what it asked for, kept in
``slurm.NodeList``). A ``Start`` of ``Unknown`` with an elapsed time above 0 is a job that ran
at a time sacct does not know: its run time and CPUs are kept, its wait is unknown.
An empty ``State`` (sacct always prints one; the ``slurm`` writer leaves it empty
for an unknown status) keeps the status unknown and the times and CPUs as printed.

Exact reading: every value is read as sacct prints it, or the record is an error
(:class:`schedlab.FormatError` naming file, line and column; skipped and counted
with ``lenient=True``, never repaired): numbers are ASCII digits (no sign, ``_``,
blank or other scripts' digits such as ``²``), up to ``2**53 - 1``; dates and
clock times exist (``2021-02-31``, ``14:10:99`` and an ``Elapsed`` of ``00:99:99``
are errors); durations stay below ``10**12`` s and memory below ``2**53`` KB; a
job does not start before it was submitted nor end before it started; bytes that
are not UTF-8 are an error naming their line and column (lenient: the record is
skipped and counted in ``meta["decode_errors"]``, nothing is replaced); a column
named twice in the header (or ``columns=``), and a ``columns=`` naming no column or
no job id column (``JobID``, ``JobIDRaw``), are errors even when lenient; a
``MaxRSS`` with ReqMem's per-CPU or per-node suffix (``1Mc``, ``1Mn``: sacct prints
none on usage columns) is an error; a line break is read only in a free-text column
(a multi-line ``SubmitLine``; :data:`~schedlab_slurm.layout.FREE_TEXT`) or a column
sacct does not know, and is an error naming the line the value starts on in any
other (``Partition``, ``User`` ...: sacct prints none there); a TRES
list (``ReqTRES``, ``AllocTRES``) is comma-separated ``name=count`` items with no
key given twice (:func:`~schedlab_slurm.values.tres_gpus`); columns sacct prints
from one value agree (``Elapsed``/``ElapsedRaw``, ``Timelimit``/``TimelimitRaw``,
``AllocCPUS``/``NCPUS``), and an ended job's elapsed time is not above ``End -
Start`` (sacct prints ``End - Start - Suspended``; the records of jobs still running
or in an undocumented state are not compared with ``End``). Long records with many
``|`` and files of many short lines are read in linear time.

Repeated jobs: a job is a ``JobID`` on one ``Cluster``. A job or step record that
repeats an earlier one field for field is an error (lenient: the copy is skipped).
The same job printed again with other fields (``sacct --duplicates``: the runs of a
requeued job) is read as ``duplicates=`` says: ``all`` (default: each record a job,
one :class:`SlurmRepeatWarning` per file), ``last`` (the last run is the job, the
earlier ones listed in ``meta["superseded_runs"]``) or ``error``.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterator
from typing import Any, BinaryIO

from schedlab import FormatError, Header, Job, Task, Workload, open_binary
from schedlab.errors import SchedlabWarning
from schedlab.validation import out_of_range

from . import __version__
from .layout import (
    FREE_TEXT,
    SACCT_COLUMNS,
    XDMOD_COLUMNS,
    AlignmentError,
    align,
    physical_records,
    sacct_column,
)
from .values import (
    BYTES,
    ENDED_STATES,
    OPEN_STATES,
    REQUEUE_STATES,
    UNLIMITED_WORDS,
    Memory,
    expand_nodelist,
    parse_duration,
    parse_exit_code,
    parse_int,
    parse_jobid,
    parse_memory,
    parse_minutes,
    parse_state,
    parse_time,
    state_word,
    tres_gpus,
)

PREFIX = "slurm."
#: Extras key of the record's position in the file (restores the original order).
RECORD_KEY = "slurm.record"
#: Extras key of the values derived from the raw columns when the file was read; the
#: writer re-uses a raw column only while the model value it feeds is unchanged.
DERIVED_KEY = "slurm.derived"

_HEADER_TOKEN = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_ISO = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")


#: The columns that hold a record's job id; every record needs one of them.
_ID_COLUMNS = ("JobID", "JobIDRaw")


def looks_like_header(tokens: list[str]) -> bool:
    """True for a ``sacct`` header line (column names, one of them ``JobID`` or
    ``JobIDRaw``; ``sacct --format=JobID`` prints a header of that one name, which
    no record can be: a job id starts with a digit)."""
    return all(_HEADER_TOKEN.match(t) for t in tokens) and any(c in tokens for c in _ID_COLUMNS)


def sniff(head: bytes, name: str = "") -> bool:
    """True when ``head`` starts like ``sacct --parsable2`` output: a header line
    naming ``JobID``, or a headerless record of at least 20 ``|``-separated fields
    that starts with a job id and contains a sacct time stamp."""
    first = b""
    for line in head.splitlines():
        if line.strip():
            first = line
            break
    if b"|" not in first:
        return False
    try:
        tokens = first.decode("utf-8").split("|")
    except UnicodeDecodeError:
        return False
    if looks_like_header(tokens):
        return True
    if len(tokens) < 20 or _ISO.search(first) is None:
        return False
    try:
        parse_jobid(tokens[0])
    except ValueError:
        return False
    return True


def _timezone(name: str | None, source: str | None = None) -> Any:
    """The zone named ``name`` (``None`` for UTC); an unknown name is a
    :class:`FormatError` naming ``source`` (the file read or written) and the option."""
    if name in (None, "", "UTC", "utc", "Z"):
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise FormatError(f"unknown time zone {name!r}", source=source, field="timezone") from None


def _line_break_allowed(column: str) -> bool:
    """True when a value of ``column`` may hold a line break: a free-text column
    (:data:`~schedlab_slurm.layout.FREE_TEXT`, such as ``SubmitLine``) or a column
    sacct does not know (kept verbatim, unknown stays unknown). sacct prints none in
    its other columns (``Partition``, ``User`` ...)."""
    return column in FREE_TEXT or column not in SACCT_COLUMNS


def _usage_memory(text: str) -> Memory | None:
    """A usage column's memory (``MaxRSS``): a bare number is bytes; the per-CPU and
    per-node suffixes (``c``, ``n``) belong to ``ReqMem``, and sacct never prints
    them on a usage column, so one is a :class:`ValueError`."""
    memory = parse_memory(text, BYTES)
    if memory is not None and memory.per:
        raise ValueError(
            f"expected a memory size like 1024K or 3.5G, got {text[:30]!r} (the per-CPU "
            "'c' and per-node 'n' suffixes are ReqMem's: sacct prints none on usage columns)"
        )
    return memory


def first_partition(text: str | None) -> str | None:
    """The partition a job is read in: ``Partition`` as printed, or, for the list of
    partitions a job that never ran asked for (``batch,gpu``: sacct prints the
    request of a pending job), its first one (``None`` for none)."""
    if not text:
        return None
    return next((name for name in text.split(",") if name), None)


class SlurmStateWarning(SchedlabWarning):
    """Records with a job state sacct does not document: read with an unknown status."""


class SlurmRepeatWarning(SchedlabWarning):
    """Jobs printed more than once with other fields (``sacct --duplicates``: the runs
    of a requeued job), each record read as a job (``duplicates="all"``)."""


#: Unknown states listed in the warning (the rest are counted).
MAX_LISTED_STATES = 5


class _Rejected(Exception):
    """One record could not be read (raised with the FormatError to report)."""

    def __init__(self, error: FormatError) -> None:
        super().__init__(str(error))
        self.error = error


def _lines(fh: BinaryIO) -> Iterator[str]:
    """The file's lines as text. Bytes that are not UTF-8 become lone surrogates
    (``surrogateescape``), which :meth:`_Parser.records` finds in the record and
    reports with the column they are in; nothing is replaced."""
    for raw in fh:
        yield raw.decode("utf-8", errors="surrogateescape")


#: A character decoded from a byte that is not UTF-8 (see :func:`_lines`).
_UNDECODED = re.compile("[\udc80-\udcff]")


class _Record:
    """One job or step record: its values by column, where it was, its parsed id."""

    __slots__ = ("index", "jobid", "line", "values")

    def __init__(self, index: int, line: int, values: dict[str, str], jobid: Any) -> None:
        self.index, self.line, self.values, self.jobid = index, line, values, jobid


class _Entry:
    """A job record with the step records folded into it; ``rejected`` when the job
    record was skipped (lenient mode), its steps then skipped with it."""

    __slots__ = ("copies", "record", "rejected", "steps")

    def __init__(self, record: _Record) -> None:
        self.record = record
        self.steps: list[_Record] = []
        self.rejected = False
        #: the values of each step record folded in -> its line (finds copies in
        #: constant time, even for a job of many steps)
        self.copies: dict[tuple[str, ...], int] = {}


def _text(record: _Record) -> str:
    """The record as it was printed (for ``meta["rejects"]``)."""
    return "|".join(record.values.values())


def _display_id(record: _Record) -> str:
    """``123``, ``123_4`` or ``123.batch``: the record's job id with its step."""
    step = record.jobid.step
    return record.jobid.job if step is None else f"{record.jobid.job}.{step}"


class _Parser:
    """Reads one file: records, folding of steps, then the SWF mapping."""

    def __init__(
        self,
        source: str,
        tz: Any,
        lenient: bool,
        job_numbers: str,
        order: str,
        duplicates: str = "all",
    ) -> None:
        self.source = source
        self.order = order
        #: How a job printed again with other fields is read: ``all``, ``last``, ``error``.
        self.duplicates = duplicates
        #: ``(line, job id)`` of the records of earlier runs dropped (``duplicates="last"``).
        self.superseded: list[tuple[int, str]] = []
        #: ``(line, job id, line of its first record)`` of every job record read as a
        #: job although its job was printed before (``duplicates="all"``).
        self.repeats: list[tuple[int, str, int]] = []
        self.tz = tz
        self.lenient = lenient
        self.job_numbers = job_numbers
        #: ``(line, record text, reason)`` of every skipped record (``schedlab
        #: convert --rejects FILE`` writes the texts, ``schedlab validate`` shows
        #: the reasons), and ``(line, column, reason)``.
        self.rejects: list[tuple[int, str, str]] = []
        self.reasons: list[tuple[int, str | None, str]] = []
        self.counts: dict[str, int] = {}
        #: ``(line, state)`` of every record whose state is not a known sacct state.
        self.unknown_states: list[tuple[int, str]] = []

    def error(self, message: str, line: int, field: str | None = None) -> FormatError:
        return FormatError(message, source=self.source, line=line, field=field)

    def reject(self, error: FormatError, line: int, text: str) -> None:
        if not self.lenient:
            raise error
        why = f"field {error.field}: {error.message}" if error.field else error.message
        self.rejects.append((line, text, why))
        self.reasons.append((line, error.field, error.message))

    # -- field access with errors naming the column
    def value(self, record: _Record, column: str, parse: Any, *args: Any) -> Any:
        text = record.values.get(column)
        if text is None:
            return None
        try:
            return parse(text, *args)
        except ValueError as exc:
            raise _Rejected(self.error(str(exc), record.line, column)) from None

    def state(self, record: _Record) -> int | None:
        """The SWF status of a record's ``State``; an unknown state is noted (for the
        warning) and gives ``None``, like a job that has not ended."""
        text = record.values.get("State")
        if text is None:
            return None
        try:
            return parse_state(text)
        except ValueError:
            self.unknown_states.append((record.line, text))
            return None

    def later(
        self, record: _Record, column: str, before: int | None, before_column: str
    ) -> int | None:
        """The time of ``column``, which may not be earlier than ``before`` (the time
        of ``before_column``): a job cannot start before it was submitted nor end
        before it started, so such a record is an error (skipped when lenient), never
        a negative wait or run time. A local time that occurs twice (the hour
        repeated when daylight saving time ends) is its first occurrence, unless
        only the second one comes after ``before``."""
        text = record.values.get(column)
        if text is None:
            return None
        value = self.value(record, column, parse_time, self.tz)
        if value is None or before is None or value >= before:
            return value
        if self.tz is not None:
            second = parse_time(text, self.tz, fold=1)
            if second is not None and second >= before:
                return second
        raise _Rejected(
            self.error(
                f"{column} {text} is before {before_column} {record.values.get(before_column)}",
                record.line,
                column,
            )
        )

    def elapsed(
        self, record: _Record, start: int | None, end: int | None, word: str
    ) -> float | None:
        """The run time of ``ElapsedRaw``, else ``Elapsed``. sacct prints both from one
        value, End - Start - Suspended, so a record where they disagree, or where an
        ended job (a documented ended state) ran longer than End - Start, cannot come
        from sacct: an error naming the column (the records of jobs still running,
        or in a state sacct does not document, are not compared with End)."""
        raw = self.value(record, "ElapsedRaw", parse_int)
        shown = self.value(record, "Elapsed", parse_duration)
        if raw is not None and shown is not None and raw != shown:
            raise _Rejected(
                self.error(
                    f"ElapsedRaw {raw} disagrees with Elapsed {record.values['Elapsed']} "
                    f"({shown:g} s): sacct prints both from one value",
                    record.line,
                    "ElapsedRaw",
                )
            )
        elapsed, column = (raw, "ElapsedRaw") if raw is not None else (shown, "Elapsed")
        if elapsed is None or start is None or end is None or word not in ENDED_STATES:
            return elapsed
        if elapsed <= end - start or self.fits_another_fold(record, elapsed):
            return elapsed
        raise _Rejected(
            self.error(
                f"{column} {record.values[column]} is longer than End - Start "
                f"({end - start:g} s; sacct prints End - Start - Suspended)",
                record.line,
                column,
            )
        )

    def fits_another_fold(self, record: _Record, elapsed: float) -> bool:
        """True when ``Start`` or ``End`` in the hour repeated when daylight saving time
        ends, read as its other occurrence, leaves ``elapsed`` within End - Start."""
        if self.tz is None:
            return False
        starts = {parse_time(record.values["Start"], self.tz, fold) for fold in (0, 1)}
        ends = {parse_time(record.values["End"], self.tz, fold) for fold in (0, 1)}
        return any(
            e - s >= elapsed for s in starts for e in ends if s is not None and e is not None
        )

    def limit(self, record: _Record) -> int | float | None:
        """The requested time of ``TimelimitRaw`` (minutes), else ``Timelimit``;
        ``None`` for ``UNLIMITED``/``Partition_Limit``. sacct prints both columns from
        one field, so a record where they disagree (another number, or a number and a
        word) is an error naming ``TimelimitRaw``."""
        shown_text = record.values.get("Timelimit", "")
        shown = self.value(record, "Timelimit", parse_duration)
        raw_text = record.values.get("TimelimitRaw", "")
        if raw_text == "":
            return shown
        raw_word = raw_text in UNLIMITED_WORDS
        raw = None if raw_word else self.value(record, "TimelimitRaw", parse_minutes)
        if shown_text != "":
            shown_word = shown_text in UNLIMITED_WORDS
            if (raw_word, raw) != (shown_word, shown) or (
                raw_word and shown_word and raw_text != shown_text
            ):
                raise _Rejected(
                    self.error(
                        f"TimelimitRaw {raw_text} disagrees with Timelimit {shown_text} "
                        "(sacct prints both from one limit)",
                        record.line,
                        "TimelimitRaw",
                    )
                )
        return shown if raw_word else raw

    # -- pass 1: records
    def records(self, lines: Iterator[str], columns: list[str] | None) -> Iterator[_Record]:
        iterator = iter(lines)
        offset = 0  # lines before the first record: blank lines and the header
        for raw in iterator:
            offset += 1
            if raw.strip() == "":
                continue
            tokens = raw.rstrip("\r\n").split("|")
            if looks_like_header(tokens):
                columns = tokens  # a header line wins over the columns option
                self.has_header = True
                self.check_columns(columns, offset)
            else:
                iterator = _chain(raw, iterator)
                offset -= 1
            break
        if columns is None:
            columns = list(XDMOD_COLUMNS)
        if not self.has_header:
            self.check_columns(columns, None)
        self.columns = columns
        index = 0
        for number, text in physical_records(iterator, len(columns)):
            line = number + offset
            try:
                values = align(text.split("|"), columns)
            except AlignmentError as exc:
                bad = self.undecoded(text, line)
                if bad is not None:
                    self.counts["decode_errors"] = self.counts.get("decode_errors", 0) + 1
                self.reject(bad or self.error(str(exc), line), line, text)
                continue
            bad = self.undecoded(text, line, columns, values)
            if bad is not None:
                self.counts["decode_errors"] = self.counts.get("decode_errors", 0) + 1
                self.reject(bad, line, text)
                continue
            bad = self.line_break(columns, values, line)
            if bad is not None:
                self.reject(bad, line, text)
                continue
            record = dict(zip(columns, values, strict=True))
            id_text = record.get("JobID") or record.get("JobIDRaw") or ""
            try:
                jobid = parse_jobid(id_text)
            except ValueError as exc:
                column = "JobID" if "JobID" in record else "JobIDRaw"
                self.reject(self.error(str(exc), line, column), line, text)
                continue
            yield _Record(index, line, record, jobid)
            index += 1

    def line_break(self, columns: list[str], values: list[str], line: int) -> FormatError | None:
        """The error for a line break in a column that cannot hold one (``None`` if
        there is none, see :func:`_line_break_allowed`): the line joining is meant
        for free-text columns such as a multi-line ``SubmitLine``; a break in
        ``Partition`` or ``User`` is no value sacct prints (a damaged or truncated
        line). The error names the line the value starts on."""
        for column, value in zip(columns, values, strict=True):
            if ("\n" in value or "\r" in value) and not _line_break_allowed(column):
                return self.error(
                    f"line break inside {column} ({value[:30]!r}): sacct prints one only "
                    "in free-text columns (SubmitLine, JobName, Comment ...)",
                    line,
                    column,
                )
            line += value.count("\n")
        return None

    def check_columns(self, columns: list[str], header_line: int | None) -> None:
        """A column named twice is an error (which of the two values would be meant
        cannot be known), even in lenient mode: it concerns every record; so is a
        ``columns`` option naming no column or no job id column (``JobID``,
        ``JobIDRaw``: no record could be read)."""
        if header_line is None and not any(c in columns for c in _ID_COLUMNS):
            what = (
                "no column" if not columns else f"no JobID or JobIDRaw column ({','.join(columns)})"
            )
            raise FormatError(
                f"the columns option names {what}: every record needs a job id",
                source=self.source,
                field="columns",
            )
        seen: set[str] = set()
        for column in columns:
            if column in seen:
                if header_line is not None:
                    raise self.error(
                        f"column {column!r} appears twice in the header line",
                        header_line,
                        column,
                    )
                raise FormatError(
                    f"column {column!r} appears twice in the columns option",
                    source=self.source,
                    field="columns",
                )
            seen.add(column)

    def undecoded(
        self,
        text: str,
        line: int,
        columns: list[str] | None = None,
        values: list[str] | None = None,
    ) -> FormatError | None:
        """The error for bytes of the record ``text`` that are not UTF-8 (``None``
        if there are none): it names the physical line they are on and, when the
        record's values are known, their column."""
        found = _UNDECODED.search(text)
        if found is None:
            return None
        at = found.start()
        where = line + text.count("\n", 0, at)
        byte = ord(found.group()) - 0xDC00
        message = f"not UTF-8 text (invalid byte 0x{byte:02x})"
        column = None
        if columns is not None and values is not None:
            pos = 0
            for name, value in zip(columns, values, strict=True):
                if pos + len(value) > at:
                    column = name
                    break
                pos += len(value) + 1
        return self.error(message, where, column)

    def read(self, fh: BinaryIO, columns: list[str] | None) -> Workload:
        self.has_header = False
        entries: list[_Entry] = []
        # (cluster, job id) -> positions of its job records in entries (several for
        # the runs of a requeued job); job ids are unique within one cluster only
        runs: dict[tuple[str, str], list[int]] = {}
        latest: dict[tuple[str, str], int] = {}
        raw_ids: dict[tuple[str, str], int] = {}
        # the values of each job record -> its line (a copy has the same JobID and
        # Cluster, hence the same key)
        copies: dict[tuple[str, ...], int] = {}
        orphans: list[_Record] = []
        for record in self.records(_lines(fh), columns):
            cluster = record.values.get("Cluster", "")
            key = (cluster, record.jobid.job)
            if record.jobid.step is None:
                entry = _Entry(record)
                earlier = runs.setdefault(key, [])
                values = tuple(record.values.values())
                first_at = entries[earlier[0]].record.line if earlier else None
                error = self.repeated(record, first_at, copies.setdefault(values, record.line))
                if error is not None:
                    self.reject(error, record.line, _text(record))
                    entry.rejected = True  # its steps are rejected with it
                earlier.append(len(entries))
                latest[key] = len(entries)
                raw = record.values.get("JobIDRaw", "")
                if raw:
                    raw_ids[(cluster, raw)] = len(entries)
                entries.append(entry)
                continue
            parent = latest.get(key)
            if parent is None:
                raw_parent = record.values.get("JobIDRaw", "").split(".", 1)[0]
                parent = raw_ids.get((cluster, raw_parent))
            if parent is None:
                orphans.append(record)
            else:
                self.add_step(entries[parent], record)
        for record in orphans:  # a step printed before its job: the first one after it
            first = runs.get((record.values.get("Cluster", ""), record.jobid.job))
            if not first:
                error = self.error(
                    f"step {record.jobid.job}.{record.jobid.step} has no job record "
                    f"{record.jobid.job} in this file",
                    record.line,
                    "JobID",
                )
                self.reject(error, record.line, _text(record))
                continue
            self.add_step(entries[first[0]], record)
        built: list[tuple[Job, dict[str, Any]] | None] = []
        last_run: dict[tuple[str, str], tuple[int, _Entry]] = {}  # key -> (position, entry)
        first_line: dict[tuple[str, str], int] = {}
        for entry in entries:
            record, steps = entry.record, entry.steps
            steps.sort(key=lambda r: r.index)
            if entry.rejected:
                self.reject_steps(steps)
                continue
            try:
                built.append(self.job(record, steps))
            except _Rejected as rejected:
                self.reject(rejected.error, record.line, _text(record))
                self.reject_steps(steps)
                continue
            key = (record.values.get("Cluster", ""), record.jobid.job)
            if key in last_run:  # another run of a requeued job
                position, previous = last_run[key]
                if self.duplicates == "last":  # the last one is the job
                    built[position] = None
                    for item in (previous.record, *previous.steps):
                        self.superseded.append((item.line, _display_id(item)))
                else:
                    self.repeats.append((record.line, record.jobid.job, first_line[key]))
            else:
                first_line[key] = record.line
            last_run[key] = (len(built) - 1, entry)
        self.superseded.sort()
        return self.workload([pair for pair in built if pair is not None])

    def add_step(self, entry: _Entry, record: _Record) -> None:
        """Fold the step ``record`` into ``entry``'s job; a step record that repeats
        one of that job's steps field for field is an error (a copy, not a step)."""
        if not entry.rejected:
            line = entry.copies.setdefault(tuple(record.values.values()), record.line)
            if line != record.line:
                error = self.error(
                    f"step {record.jobid.job}.{record.jobid.step} printed twice: this "
                    f"record repeats line {line} field for field",
                    record.line,
                    "JobID",
                )
                self.reject(error, record.line, _text(record))
                return
        entry.steps.append(record)

    def reject_steps(self, steps: list[_Record]) -> None:
        """Skip the steps of a job record that was rejected (lenient mode)."""
        for step in steps:
            orphan = "its job record was rejected"
            self.rejects.append((step.line, _text(step), orphan))
            self.reasons.append((step.line, None, orphan))

    def repeated(self, record: _Record, first: int | None, copy: int) -> FormatError | None:
        """The error for a job record whose job (same ``JobID`` on the same
        ``Cluster``) was printed before (first at line ``first``), or ``None``;
        ``copy`` is the line of the first record with the same values (``record``'s
        own line if none). A copy of an earlier record (every field equal) is always
        an error; other fields are another run of a requeued job (``sacct
        --duplicates``), an error when ``duplicates`` is ``error``."""
        if first is None:
            return None
        name = record.jobid.job
        if copy != record.line:
            return self.error(
                f"job {name} printed twice: this record repeats line {copy} field for field",
                record.line,
                "JobID",
            )
        if self.duplicates != "error":
            return None  # another run: see read()
        return self.error(
            f"job {name} printed again (line {first}) with other fields "
            "(sacct --duplicates: another run of a requeued job), refused as "
            "duplicates=error asks (duplicates=last keeps the last run, all each one)",
            record.line,
            "JobID",
        )

    # -- pass 2: one job
    def job(self, record: _Record, steps: list[_Record]) -> tuple[Job, dict[str, Any]]:
        v = self.value
        tz = self.tz
        submit = v(record, "Submit", parse_time, tz)
        start = self.later(record, "Start", submit, "Submit")
        end = self.later(record, "End", start, "Start")
        v(record, "Eligible", parse_time, tz)
        state_text = record.values.get("State", "")
        status = self.state(record)
        word = state_word(state_text)
        if word in REQUEUE_STATES and end is not None:
            # a held or federated requeue printed with an End: the closed record of
            # a run ended by the requeue (the job goes on in a later record)
            word = "REQUEUED"
            status = ENDED_STATES[word]
        elapsed = self.elapsed(record, start, end, word)
        # an Elapsed column printed empty (sacct never does; the slurm writer does
        # for an unknown run time) says the run time is unknown
        elapsed_column = "ElapsedRaw" in record.values or "Elapsed" in record.values
        alloc = v(record, "AllocCPUS", parse_int)
        ncpus = v(record, "NCPUS", parse_int)
        if alloc is None:
            alloc = ncpus
        elif ncpus is not None and ncpus != alloc:  # one field, printed twice
            raise _Rejected(
                self.error(
                    f"NCPUS {ncpus} disagrees with AllocCPUS {alloc} (sacct prints both "
                    "from the job's allocated CPUs)",
                    record.line,
                    "NCPUS",
                )
            )
        req_cpus = v(record, "ReqCPUS", parse_int)
        if req_cpus is None:
            req_cpus = v(record, "NCPUS", parse_int)
        nodes = v(record, "AllocNodes", parse_int)
        if nodes is None:
            nodes = v(record, "NNodes", parse_int)
        req_nodes = v(record, "ReqNodes", parse_int) or nodes
        node_text = record.values.get("NodeList", "")
        hosts = v(record, "NodeList", expand_nodelist) or ()
        limit = self.limit(record)
        memory = v(record, "ReqMem", parse_memory)
        exit_pair = v(record, "ExitCode", parse_exit_code)
        priority = v(record, "Priority", parse_int)
        raw_id = v(record, "JobIDRaw", parse_jobid)

        # Start Unknown/None: the job never started, unless it ran for a known time
        # (Elapsed > 0: it started at a time sacct does not know)
        never_started = (
            (start is None and not elapsed)
            or word == "PENDING"
            or node_text == "None assigned"
            or (status == 5 and not elapsed and not alloc)
            # cancelled while pending, as sacct prints it: Start = End = the time
            # of the cancellation, no elapsed time, AllocCPUS = the CPUs asked for;
            # without a NodeList column (which says "None assigned" then), only an
            # allocation (AllocTRES) says that it did start
            or (
                status == 5
                and not elapsed
                and start is not None
                and start == end
                and "NodeList" not in record.values
                and not record.values.get("AllocTRES")
            )
        )
        # a job in an unknown state, or without a State column, has ended when sacct
        # printed its end time
        ended = status is not None or (word not in OPEN_STATES and end is not None)
        if "State" in record.values and state_text == "":
            # no state printed: sacct always prints one, the slurm writer leaves it
            # empty for an unknown status; the times and CPUs are what it printed
            wait = None if submit is None or start is None else start - submit
            run = elapsed
            alloc_swf = None if node_text == "None assigned" else alloc or None
        elif never_started:
            wait = None
            run = (None if elapsed is None and elapsed_column else 0) if ended else None
            alloc_swf = None
            hosts = ()  # a node list printed for a job that never ran: what it asked for
        else:
            wait = None if submit is None or start is None else start - submit
            run = elapsed if ended else None
            alloc_swf = alloc or None

        requested_memory = None
        if memory is not None and memory.kilobytes > 0:
            if memory.per == "c":
                requested_memory = memory.kilobytes
            elif memory.per == "n":
                per_node = (req_cpus or alloc or 0) / (req_nodes or 1)
                requested_memory = memory.kilobytes / per_node if per_node else None
            elif req_cpus or alloc:
                requested_memory = memory.kilobytes / (req_cpus or alloc)

        total_cpu = v(record, "TotalCPU", parse_duration)
        if total_cpu is None and steps:
            parts = [v(s, "TotalCPU", parse_duration) for s in steps]
            if any(p is not None for p in parts):
                total_cpu = sum(p for p in parts if p is not None)
        avg_cpu = None
        if total_cpu is not None and alloc_swf:
            avg_cpu = total_cpu / alloc_swf

        used_memory = None
        for item in (record, *steps):
            rss = v(item, "MaxRSS", _usage_memory)
            if rss is None:
                continue
            tasks = v(item, "NTasks", parse_int) or 1
            cpus = v(item, "AllocCPUS", parse_int) or v(item, "NCPUS", parse_int) or 1
            per_cpu = rss.kilobytes * tasks / cpus
            if out_of_range(per_cpu) is not None:
                raise _Rejected(
                    self.error(
                        f"{out_of_range(per_cpu)}: memory per CPU of MaxRSS "
                        f"{item.values['MaxRSS']!r} x NTasks",
                        item.line,
                        "MaxRSS",
                    )
                )
            used_memory = per_cpu if used_memory is None else max(used_memory, per_cpu)

        tasks = []
        for step in steps:
            try:
                tasks.append(self.task(step))
            except _Rejected as rejected:
                self.reject(rejected.error, step.line, "|".join(step.values.values()))
        job = Job(
            submit_time=submit,
            wait_time=wait,
            run_time=run,
            allocated_processors=alloc_swf,
            average_cpu_time=avg_cpu,
            used_memory=used_memory,
            requested_processors=req_cpus or None,
            requested_time=limit,
            requested_memory=requested_memory,
            status=status,
            name=record.values.get("JobName") or None,
            account=record.values.get("Account") or None,
            nodes=nodes or None,
            hosts=hosts,
            exit_code=exit_pair[0] if exit_pair else None,
            priority=priority,
            tasks=tuple(tasks),
            extras={f"{PREFIX}{k}": val for k, val in record.values.items()},
        )
        job.extras[RECORD_KEY] = record.index
        job.extras.update(self.requests(record, memory))
        plain_raw = raw_id is not None and not raw_id.kind and raw_id.step is None
        keys = {
            "user": record.values.get("User") or record.values.get("UID") or None,
            "group": record.values.get("Group") or record.values.get("GID") or None,
            "qos": record.values.get("QOS") or None,
            "partition": first_partition(record.values.get("Partition")),
            "cluster": record.values.get("Cluster") or None,
            "raw_number": raw_id.base if plain_raw else None,
            "base_id": record.jobid.base,
        }
        return job, keys

    def requests(self, record: _Record, memory: Memory | None) -> dict[str, Any]:
        """The request extras the simulator reads on a platform (see
        docs/platform.md): ``request.partition`` (``Partition``), ``request.memory``
        (bytes per node, only for a per-node ``ReqMem`` ``...n``; per-CPU memory is
        the SWF requested memory) and ``request.gpus`` (``gres/gpu`` of
        ``ReqTRES``, else of ``AllocTRES``). Nothing is added for what the record
        does not say."""
        extras: dict[str, Any] = {}
        partition = first_partition(record.values.get("Partition"))
        if partition is not None:
            extras["request.partition"] = partition
        if memory is not None and memory.per == "n" and memory.kilobytes > 0:
            extras["request.memory"] = round(memory.kilobytes * 1024)
        gpus = None
        for column in ("ReqTRES", "AllocTRES"):  # both checked, the first naming GPUs read
            found = self.value(record, column, tres_gpus)
            if gpus is None:
                gpus = found
        if gpus is not None:
            extras["request.gpus"] = gpus
        return extras

    def task(self, record: _Record) -> Task:
        v = self.value
        start = v(record, "Start", parse_time, self.tz)
        end = v(record, "End", parse_time, self.tz)
        cpus = v(record, "AllocCPUS", parse_int) or v(record, "NCPUS", parse_int)
        extras: dict[str, Any] = {f"{PREFIX}{k}": val for k, val in record.values.items()}
        extras[RECORD_KEY] = record.index
        return Task(
            task_id=record.jobid.step or "",
            start_time=start,
            end_time=end,
            processors=cpus,
            host=record.values.get("NodeList") or None,
            status=self.state(record),
            extras=extras,
        )

    # -- pass 3: numbering, origin, header
    def workload(self, built: list[tuple[Job, dict[str, Any]]]) -> Workload:
        origin = _origin(built)
        shift = origin or 0  # the times are absolute: none is known when it is None
        zone = getattr(self.tz, "key", "UTC")
        tables: dict[str, dict[str, int]] = {
            "user": {},
            "group": {},
            "qos": {},
            "partition": {},
            "name": {},
        }

        def number(table: str, key: str | None) -> int | None:
            if key is None:
                return None
            found = tables[table]
            if key not in found:
                found[key] = len(found) + 1
            return found[key]

        if self.order == "submit":  # SWF order; stable, so ties keep the file order
            built.sort(key=lambda pair: (pair[0].submit_time is None, pair[0].submit_time or 0))
        jobs = []
        clusters: dict[str, None] = {}
        for position, (job, keys) in enumerate(built, 1):
            if self.job_numbers == "raw":
                raw = keys["raw_number"]
                job.job_number = raw if raw is not None else keys["base_id"]
            else:
                job.job_number = position
            if job.submit_time is not None:
                job.submit_time -= shift
            for task in job.tasks:
                task.start_time = None if task.start_time is None else task.start_time - shift
                task.end_time = None if task.end_time is None else task.end_time - shift
            job.user_id = number("user", keys["user"])
            job.group_id = number("group", keys["group"])
            job.queue_number = number("qos", keys["qos"])
            job.partition_number = number("partition", keys["partition"])
            job.executable_number = number("name", job.name)
            if keys["cluster"]:
                clusters.setdefault(keys["cluster"], None)
            # the zone the raw time columns are printed in (the writer re-prints
            # them when it writes in another zone)
            job.extras[DERIVED_KEY] = {**derived_values(job, shift), "timezone": zone}
            jobs.append(job)

        header = Header()
        header.set("Version", "2.2")
        if clusters:
            header.set("Installation", ", ".join(clusters))
        header.set("Conversion", f"schedlab-slurm {__version__} from sacct --parsable2 output")
        header.set("MaxJobs", len(jobs))
        header.set("MaxRecords", len(jobs))
        if origin is not None:  # no record holds a time: the origin stays unknown
            header.set("UnixStartTime", origin)
        header.set("TimeZoneString", zone)
        if tables["qos"]:
            header.set("MaxQueues", len(tables["qos"]))
            for qos, num in tables["qos"].items():
                header.add("Queue", f"{num} {_blankless(qos)}")
        if tables["partition"]:
            header.set("MaxPartitions", len(tables["partition"]))
            for part, num in tables["partition"].items():
                header.add("Partition", f"{num} {_blankless(part)}")
        header.set_names("User", {n: k for k, n in tables["user"].items()})
        header.set_names("Group", {n: k for k, n in tables["group"].items()})
        header.set_names("Executable", {n: k for k, n in tables["name"].items()})
        workload = Workload.from_jobs(jobs, header)
        workload.meta.update(
            {
                "slurm_columns": list(self.columns),
                "slurm_has_header": self.has_header,
                "skipped": len(self.rejects),
                "rejects": self.rejects,
                "reject_reasons": self.reasons,
                "steps": sum(len(j.tasks) for j in jobs),
                "unknown_states": list(self.unknown_states),
                "superseded_runs": list(self.superseded),
                "repeated_jobs": list(self.repeats),
                **self.counts,
            }
        )
        self.warn_unknown_states()
        self.warn_repeats()
        return workload

    def warn_repeats(self) -> None:
        """One warning per file listing the jobs read more than once (the runs of a
        requeued job printed by ``sacct --duplicates``, ``duplicates="all"``)."""
        found = self.repeats
        if not found:
            return
        head = found[:MAX_LISTED_STATES]
        listed = ", ".join(
            f"job {job} line {line} (first: line {first})" for line, job, first in head
        )
        more = f" and {len(found) - len(head)} more" if len(found) > len(head) else ""
        warnings.warn(
            SlurmRepeatWarning(
                f"{self.source}: {len(found)} record(s) of a job printed before with other "
                f"fields (sacct --duplicates: the runs of a requeued job), each read as a "
                f"job: {listed}{more}; -R duplicates=last keeps the last run only"
            ),
            stacklevel=5,
        )

    def warn_unknown_states(self) -> None:
        """One warning per file listing the records with an unknown state."""
        found = self.unknown_states
        if not found:
            return
        head = found[:MAX_LISTED_STATES]
        listed = ", ".join(f"{state!r} (line {line})" for line, state in head)
        more = f" and {len(found) - len(head)} more" if len(found) > len(head) else ""
        warnings.warn(
            SlurmStateWarning(
                f"{self.source}: {len(found)} record(s) with an unknown job state, read "
                f"with status unknown: {listed}{more}"
            ),
            stacklevel=5,
        )


def _origin(built: list[tuple[Job, dict[str, Any]]]) -> int | None:
    """The origin of the times (epoch seconds): the earliest ``Submit``; without one,
    the earliest time of a step (the only other times the model holds, as a job's
    start is relative to its submission); ``None`` (unknown) when no record holds a
    time."""
    submits = [job.submit_time for job, _ in built if job.submit_time is not None]
    if submits:
        return int(min(submits))
    steps = [
        time
        for job, _ in built
        for task in job.tasks
        for time in (task.start_time, task.end_time)
        if time is not None
    ]
    return int(min(steps)) if steps else None


def _blankless(name: str) -> str:
    return re.sub(r"\s+", "_", name) or "-"


def _chain(first: str, rest: Iterator[str]) -> Iterator[str]:
    yield first
    yield from rest


def derived_values(job: Job, origin: float) -> dict[str, Any]:
    """The model values the raw columns were turned into (absolute times), which the
    writer compares with the job's current values to decide whether a raw column is
    still true."""
    start = job.start_time
    end = job.end_time
    return {
        "submit": None if job.submit_time is None else job.submit_time + origin,
        "start": None if start is None else start + origin,
        "end": None if end is None else end + origin,
        "run_time": job.run_time,
        "allocated": job.allocated_processors,
        "requested_processors": job.requested_processors,
        "requested_time": job.requested_time,
        "requested_memory": job.requested_memory,
        "status": job.status,
        "exit_code": job.exit_code,
        "name": job.name,
        "account": job.account,
        "nodes": job.nodes,
        "hosts": tuple(job.hosts),
        "user": job.user_id,
        "group": job.group_id,
        "qos": job.queue_number,
        "partition": job.partition_number,
        "average_cpu_time": job.average_cpu_time,
        "job_number": job.job_number,
    }


def read(
    source: str | os.PathLike[str] | BinaryIO,
    lenient: bool = False,
    columns: str | None = None,
    timezone: str = "UTC",
    job_numbers: str = "sequence",
    order: str = "submit",
    duplicates: str = "all",
) -> Workload:
    """Read ``sacct --parsable2`` output (plain or compressed) into a workload.

    ``lenient=True`` skips records that cannot be read and counts them in
    ``workload.meta["skipped"]`` (``meta["rejects"]``: ``(line, text, reason)`` of each,
    ``meta["reject_reasons"]``: ``(line, column, reason)``); otherwise the first
    bad record raises :class:`schedlab.FormatError` naming the line and column.
    ``columns`` gives the column order of a file without header line
    (``"JobID|Submit|..."``, separated by ``|`` or ``,``; default: Open XDMoD's
    order): sacct's names, in any case (``elapsed`` is ``Elapsed``); a name sacct
    does not know is an error naming it, and so is a list naming no column or no
    ``JobID``/``JobIDRaw`` (no record could be read) when the file has no header
    line (a header line wins over the option; ``sacct --format=JobID`` prints a
    one-column header, which is read as one). ``timezone`` is the zone of
    the printed times. ``order`` is ``"submit"`` (jobs sorted by submit time, as SWF
    wants them; ties keep the file order) or ``"file"``. ``job_numbers`` is
    ``"sequence"`` (1, 2, 3 ... in that order) or ``"raw"`` (Slurm's ``JobIDRaw``,
    not unique for pending array ranges).

    A job record printed twice with every field equal is an error (lenient: the
    copy is skipped and counted), and so is a step record repeating one of its
    job's steps. The same job (``JobID`` on the same ``Cluster``) printed again with
    other fields is another run of a requeued job (``sacct --duplicates``), read
    as ``duplicates`` says: ``"all"`` (each run is a job, as printed; one
    :class:`SlurmRepeatWarning` lists them, ``meta["repeated_jobs"]`` holds
    ``(line, job id, line of the first record)``), ``"last"`` (the last run is the
    job; the records of the earlier runs and their steps are checked, then dropped
    and listed in ``meta["superseded_runs"]`` as ``(line, job id)``) or
    ``"error"`` (refused; lenient: the later records skipped).
    """
    name = _source_name(source)
    if job_numbers not in ("sequence", "raw"):
        raise FormatError(
            f"job_numbers must be 'sequence' or 'raw', got {job_numbers!r}", source=name
        )
    column_list = None
    if columns is not None:
        column_list = []
        for given in (c.strip() for c in re.split(r"[|,]", columns)):
            if not given:
                continue
            known = sacct_column(given)
            if known is None:  # a typo would silently leave a column unread
                raise FormatError(
                    f"option columns: unknown sacct column {given!r} (sacct's names, in "
                    "any case: JobID, Submit, Elapsed, NCPUS ...)",
                    source=name,
                    field="columns",
                )
            column_list.append(known)
    if order not in ("submit", "file"):
        raise FormatError(f"order must be 'submit' or 'file', got {order!r}", source=name)
    if duplicates not in ("error", "last", "all"):
        raise FormatError(
            f"duplicates must be 'all', 'last' or 'error', got {duplicates!r}", source=name
        )
    parser = _Parser(name, _timezone(timezone, name), lenient, job_numbers, order, duplicates)
    fh = open_binary(source)
    try:
        return parser.read(fh, column_list)
    finally:
        if fh is not source:
            fh.close()


def _source_name(source: object) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))
