"""Findings and the format-independent consistency checks of a workload.

A :class:`Finding` is one problem found in a trace: where it is (line number when the
reader knows it, else the job number), which field, what is wrong, and how bad it is.
Readers put the findings of their own format rules in ``workload.meta["findings"]``
(and set ``workload.meta["checked"] = True`` when they already ran the checks below);
``schedlab validate`` adds the checks of :class:`ColumnChecker` for every other input.

The checks follow the consistency rules of the Standard Workload Format (which are
the rules of the common model, so they apply to any format converted to it):

* ``negative-value`` (error): a negative value in any field; only ``-1`` (unknown,
  ``NaN`` in the columns) may be negative.
* ``out-of-range`` (error): a value no reader accepts into the model (see
  :func:`out_of_range`): not a finite number (infinity), beyond
  :data:`MAX_MAGNITUDE`, or a time (:data:`SECONDS_FIELDS`) beyond :data:`MAX_SECONDS`.
  Only a workload built in memory or by a plugin reader can hold one; the SWF
  writer refuses to write it.
* ``exceeds-machine`` (error): more allocated processors than the machine has
  (``MaxProcs``, else ``MaxNodes``). Requested processors are not checked, as the
  SWF definition says.
* ``unsorted-submit`` (error): a submit time earlier than that of the job before it.
* ``duplicate-job`` (error): a job number used twice.
* ``unknown-status`` (warning): a status code SWF does not define.
* ``unknown-preceding-job`` / ``later-preceding-job`` (warning): a preceding-job
  reference to a job that is absent, or that does not come earlier.
* ``header-count`` (warning): ``MaxJobs`` / ``MaxRecords`` disagreeing with the body
  (the archive's cleaned logs keep the original counts, so this is common and not an
  error).

Severities: ``error`` breaks the format's rules, ``warning`` is suspicious but
common in real logs, ``info`` is only reported (e.g. an ignored blank line).
``schedlab validate`` exits 1 on errors, and with ``--strict`` on warnings too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from .model import SWF_FIELDS, Header, JobColumns, Workload

#: Severity of a :class:`Finding` that fails validation (``schedlab validate``
#: exits 1).
ERROR = "error"
#: Severity of a :class:`Finding` that fails validation only when strict
#: (``schedlab validate --strict``).
WARNING = "warning"
#: Severity of a :class:`Finding` that is information only, never failing validation.
INFO = "info"
SEVERITIES: tuple[str, ...] = (ERROR, WARNING, INFO)
#: Check name of the findings on values beyond the model's bounds (:func:`out_of_range`).
OUT_OF_RANGE = "out-of-range"

#: SWF status codes (field 11) that are defined; -1 (unknown) is NaN in the columns.
KNOWN_STATUS: frozenset[int] = frozenset({0, 1, 2, 3, 4, 5})

#: Largest magnitude of any number a reader accepts into the model: 2**53 - 1.
#: Every integer up to it is held exactly by the model's float64 columns (and fits
#: int64), and any integer text from 2**53 on parses to a float of at least 2**53,
#: so comparing the parsed float is exact. A larger value could not be read without
#: changing it, so readers reject it (a :class:`~schedlab.errors.FormatError` naming
#: line and field; a skipped record in lenient mode) instead of keeping a rounded
#: 1e+30.
MAX_MAGNITUDE: float = float(2**53 - 1)

#: Largest magnitude of a time, in seconds, a reader accepts (time stamps and
#: durations alike): 10**12 s, about 31,700 years. Real traces stay far below
#: (Unix time is about 1.8e9 s; ``2**31 - 1`` is a common "no limit" requested
#: time); anything above is a corrupt or mis-scaled value.
MAX_SECONDS: float = 1e12

#: The fields holding seconds (time stamps and durations), bounded by
#: :data:`MAX_SECONDS`; every field is bounded by :data:`MAX_MAGNITUDE`.
SECONDS_FIELDS: tuple[str, ...] = (
    "submit_time",
    "wait_time",
    "run_time",
    "average_cpu_time",
    "requested_time",
    "think_time",
)


def out_of_range(value: float, seconds: bool = False) -> str | None:
    """Why ``value`` may not be read into the model, to be followed by the value
    (``"out of range (at most 2**53 - 1)"``), or ``None`` if it may: not finite, beyond
    :data:`MAX_MAGNITUDE`, or (``seconds``) beyond :data:`MAX_SECONDS`."""
    if value != value or value in (float("inf"), float("-inf")):
        return "expected a finite number"
    if seconds:
        if abs(value) > MAX_SECONDS:
            return "out of range (a time of at most 1e12 seconds)"
    elif abs(value) > MAX_MAGNITUDE:
        return "out of range (at most 2**53 - 1)"
    return None


@attrs.define(frozen=True, slots=True)
class Finding:
    """One problem in a trace.

    ``line`` is the 1-based line number in the source file (``None`` when the reader
    has no lines, e.g. a job from a JSON trace: ``job`` then says which job);
    ``field`` the field name (``"run_time"``) or ``None`` for a whole line or the
    header; ``severity`` one of ``"error"``, ``"warning"``, ``"info"``; ``check`` a
    short stable name of the rule (``"negative-value"``) for filtering and JSON.
    """

    line: int | None
    field: str | None
    message: str
    severity: str = ERROR
    check: str = ""
    job: int | None = None

    def render(self, source: str | None = None) -> str:
        """One line: ``source:line: severity: field F: message [check]``."""
        where = source or "<input>"
        if self.line is not None:
            where += f":{self.line}"
        elif self.job is not None:
            where += f": job {self.job}"
        text = f"{where}: {self.severity}: "
        if self.field:
            text += f"field {field_label(self.field)}: "
        text += self.message
        if self.check:
            text += f" [{self.check}]"
        return text

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return attrs.asdict(self)


def field_label(field: str) -> str:
    """``"run_time"`` -> ``"4 (run_time)"``: the SWF field number and name."""
    if field in SWF_FIELDS:
        return f"{SWF_FIELDS.index(field) + 1} ({field})"
    return field


def count_by_severity(findings: Iterable[Finding]) -> dict[str, int]:
    """``{"error": n, "warning": n, "info": n}``."""
    counts = dict.fromkeys(SEVERITIES, 0)
    for finding in findings:
        counts[finding.severity] = counts.get(finding.severity, 0) + 1
    return counts


def failing(findings: Iterable[Finding], strict: bool = False) -> list[Finding]:
    """The findings that make validation fail: errors, plus warnings when strict."""
    bad = {ERROR, WARNING} if strict else {ERROR}
    return [f for f in findings if f.severity in bad]


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _job_of(value: float) -> int | None:
    return None if value != value else int(value)


class ColumnChecker:
    """The consistency checks of the common model, fed chunk by chunk.

    Call :meth:`feed` for every chunk of columns in order (with the source line of
    each row when known), then :meth:`finish` once. Memory is one number per job for
    the whole-workload rules (duplicates, preceding jobs), so a streamed trace is
    checked without holding its rows.
    """

    def __init__(
        self,
        header: Header | None = None,
        *,
        machine_size: int | None = None,
        header_lines: dict[str, int] | None = None,
    ) -> None:
        self.header = header if header is not None else Header()
        #: Source line of the first entry of each header label, when known.
        self.header_lines = header_lines or {}
        self.machine_size = (
            machine_size if machine_size is not None else (self.header.machine_size())
        )
        self.jobs = 0
        self._last_submit = np.nan
        self._job_numbers: list[np.ndarray] = []
        self._lines: list[np.ndarray] = []
        self._preceding: list[np.ndarray] = []

    def feed(self, columns: JobColumns, lines: np.ndarray | None = None) -> list[Finding]:
        """Check one chunk of rows; returns the findings local to these rows."""
        n = len(columns)
        if lines is None:
            lines_arr = np.full(n, -1, dtype=np.int64)
        else:
            lines_arr = np.asarray(lines, dtype=np.int64)
        findings: list[Finding] = []
        jobs = columns["job_number"]

        def where(i: int) -> tuple[int | None, int | None]:
            line = int(lines_arr[i])
            return (line if line >= 0 else None), _job_of(jobs[i])

        # Negative values other than -1 (which the columns hold as NaN), and values
        # no reader accepts (infinity, beyond the bounds). fmin and fmax skip NaN:
        # a column with neither costs these two passes.
        for name in SWF_FIELDS:
            col = columns[name]
            if not len(col):
                continue
            low, high = np.fmin.reduce(col), np.fmax.reduce(col)
            if low < 0:
                for i in np.flatnonzero(col < 0).tolist():
                    line, job = where(i)
                    findings.append(
                        Finding(
                            line,
                            name,
                            f"negative value {_num(col[i])} "
                            + (
                                "(a number here, not unknown; the SWF writer would "
                                "write it as -1, unknown)"
                                if col[i] == -1
                                else "(only -1, unknown, may be negative)"
                            ),
                            ERROR,
                            "negative-value",
                            job,
                        )
                    )
            seconds = name in SECONDS_FIELDS
            limit = MAX_SECONDS if seconds else MAX_MAGNITUDE
            if not (high > limit or low < -limit):
                continue
            for i in np.flatnonzero(np.abs(col) > limit).tolist():
                line, job = where(i)
                findings.append(
                    Finding(
                        line,
                        name,
                        f"{out_of_range(float(col[i]), seconds)}, got {_num(col[i])} "
                        "(schedlab's readers refuse it, and so does the SWF writer)",
                        ERROR,
                        OUT_OF_RANGE,
                        job,
                    )
                )
        # Allocated processors above the machine size.
        if self.machine_size:
            alloc = columns["allocated_processors"]
            procs = self.header.max_procs
            label = "MaxProcs" if procs is not None and procs >= 1 else "MaxNodes"
            for i in np.flatnonzero(alloc > self.machine_size).tolist():
                line, job = where(i)
                findings.append(
                    Finding(
                        line,
                        "allocated_processors",
                        f"{_num(alloc[i])} processors exceed {label} {self.machine_size}",
                        ERROR,
                        "exceeds-machine",
                        job,
                    )
                )
        # Submit times must not decrease (unknown times are skipped).
        submit = columns["submit_time"]
        known = np.flatnonzero(~np.isnan(submit))
        if len(known):
            values = submit[known]
            previous = np.concatenate(([self._last_submit], values[:-1]))
            for k in np.flatnonzero(values < previous).tolist():
                line, job = where(int(known[k]))
                findings.append(
                    Finding(
                        line,
                        "submit_time",
                        f"submit time {_num(values[k])} is earlier than the previous "
                        f"job's {_num(previous[k])} (jobs must be sorted by submit time)",
                        ERROR,
                        "unsorted-submit",
                        job,
                    )
                )
            self._last_submit = values[-1]
        # Status codes SWF does not define.
        status = columns["status"]
        odd = ~np.isnan(status) & ~np.isin(status, list(KNOWN_STATUS))
        for i in np.flatnonzero(odd).tolist():
            line, job = where(i)
            findings.append(
                Finding(
                    line,
                    "status",
                    f"status {_num(status[i])} is not an SWF code (0, 1, 2, 3, 4, 5 or -1)",
                    WARNING,
                    "unknown-status",
                    job,
                )
            )
        self.jobs += n
        # Copies: a chunk's columns may be views of its whole value matrix, which a
        # kept view would hold for the rest of the stream (18 numbers a job, not 3).
        self._job_numbers.append(np.array(jobs, dtype=np.float64))
        self._lines.append(np.array(lines_arr, dtype=np.int64))
        self._preceding.append(np.array(columns["preceding_job_number"], dtype=np.float64))
        return findings

    def finish(self, records: int | None = None, jobs: int | None = None) -> list[Finding]:
        """The whole-workload rules. ``jobs`` (default: the rows fed) is compared
        with ``MaxJobs``, ``records`` (every SWF line including checkpoint/swap
        records; default ``jobs``) with ``MaxRecords``."""
        findings: list[Finding] = []
        numbers = np.concatenate(self._job_numbers) if self._job_numbers else np.empty(0)
        lines = np.concatenate(self._lines) if self._lines else np.empty(0, dtype=np.int64)
        preceding = np.concatenate(self._preceding) if self._preceding else np.empty(0)
        self._job_numbers, self._lines, self._preceding = [], [], []

        def at(i: int) -> int | None:
            line = int(lines[i])
            return line if line >= 0 else None

        if len(numbers) and not np.isnan(numbers).any() and (np.diff(numbers) > 0).all():
            order = np.arange(len(numbers))  # already strictly increasing: no duplicates
        else:
            known = np.flatnonzero(~np.isnan(numbers))
            order = known[np.argsort(numbers[known], kind="stable")]
        sorted_jobs = numbers[order]
        if len(order) > 1:
            same = np.flatnonzero(sorted_jobs[1:] == sorted_jobs[:-1])
            # For each duplicate, name the first row with that number.
            first_of_run = np.maximum.accumulate(
                np.where(np.r_[True, sorted_jobs[1:] != sorted_jobs[:-1]], np.arange(len(order)), 0)
            )
            for k in same.tolist():
                i = int(order[k + 1])
                first = int(order[first_of_run[k + 1]])
                first_where = f"line {at(first)}" if at(first) is not None else "an earlier job"
                findings.append(
                    Finding(
                        at(i),
                        "job_number",
                        f"job number {_num(numbers[i])} already used ({first_where})",
                        ERROR,
                        "duplicate-job",
                        _job_of(numbers[i]),
                    )
                )
        refs = np.flatnonzero(~np.isnan(preceding))
        if len(refs):
            targets = preceding[refs]
            pos = np.searchsorted(sorted_jobs, targets)
            pos_clipped = np.minimum(pos, max(len(sorted_jobs) - 1, 0))
            found = (pos < len(sorted_jobs)) & (
                sorted_jobs[pos_clipped] == targets if len(sorted_jobs) else False
            )
            for k in np.flatnonzero(~found).tolist():
                i = int(refs[k])
                findings.append(
                    Finding(
                        at(i),
                        "preceding_job_number",
                        f"preceding job {_num(targets[k])} does not appear in the workload",
                        WARNING,
                        "unknown-preceding-job",
                        _job_of(numbers[i]),
                    )
                )
            ok = np.flatnonzero(found)
            if len(ok):
                target_rows = order[pos_clipped[ok]]
                for k in np.flatnonzero(target_rows >= refs[ok]).tolist():
                    i = int(refs[ok[k]])
                    findings.append(
                        Finding(
                            at(i),
                            "preceding_job_number",
                            f"preceding job {_num(preceding[i])} does not come before this job",
                            WARNING,
                            "later-preceding-job",
                            _job_of(numbers[i]),
                        )
                    )
        findings.extend(self.header_counts(self.jobs if jobs is None else jobs, records))
        return findings

    def header_counts(self, jobs: int, records: int | None = None) -> list[Finding]:
        """``MaxJobs`` / ``MaxRecords`` against the counted jobs and records."""
        out = []
        records = jobs if records is None else records
        for label, value, counted, what in (
            ("MaxJobs", self.header.max_jobs, jobs, "jobs"),
            ("MaxRecords", self.header.max_records, records, "records"),
        ):
            if value is not None and value != -1 and value != counted:  # -1: unknown
                out.append(
                    Finding(
                        self.header_lines.get(label),
                        None,
                        f"header {label}: {value} but the body has {counted} {what}",
                        WARNING,
                        "header-count",
                    )
                )
        return out


def check_columns(
    columns: JobColumns,
    header: Header | None = None,
    lines: np.ndarray | None = None,
    records: int | None = None,
) -> list[Finding]:
    """Every generic check on one set of columns (see the module docstring)."""
    checker = ColumnChecker(header)
    return checker.feed(columns, lines) + checker.finish(records)


def check_workload(workload: Workload) -> list[Finding]:
    """The reader's findings plus the generic checks (unless the reader ran them),
    streaming through the workload chunk by chunk, plus one ``skipped-record`` error
    for every record a lenient read skipped without reporting it (see
    :func:`skipped_findings`)."""
    checker = ColumnChecker(workload.header)
    findings: list[Finding] = []
    for chunk in workload.iter_column_chunks():
        if not workload.meta.get("checked"):
            findings.extend(checker.feed(chunk))
    reader_findings = list(workload.meta.get("findings", ()))
    if not workload.meta.get("checked"):
        findings.extend(checker.finish(workload.meta.get("records")))
    findings.extend(skipped_findings(workload.meta, reader_findings))
    return sort_findings(reader_findings + findings)


#: Check name of the findings :func:`skipped_findings` adds.
SKIPPED_RECORD = "skipped-record"
#: Check name readers give the error finding of each record they skip.
BAD_RECORD = "bad-record"


def skipped_count(meta: Mapping[str, Any]) -> int:
    """Records a lenient read skipped: ``meta["skipped"]`` (a number, or a mapping
    with a ``"total"``), else the length of ``meta["rejects"]``."""
    value: Any = meta.get("skipped")
    if isinstance(value, Mapping):
        value = value.get("total")
    if value is None:
        return len(meta.get("rejects") or ())
    try:
        return max(int(value), 0)
    except (TypeError, ValueError):
        return len(meta.get("rejects") or ())


def _excerpt(text: object, width: int = 80) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def skipped_findings(meta: Mapping[str, Any], findings: Sequence[Finding]) -> list[Finding]:
    """An error finding (check ``skipped-record``) for every record that a lenient
    read skipped and did not already report as an error finding, so that
    ``schedlab validate`` never says ok about a trace the strict reader rejects.

    The convention for readers (any format, any plugin): ``meta["skipped"]``
    counts the skipped records; ``meta["rejects"]`` lists them as ``(line, text)``
    pairs (1-based source line), as plain message strings, or as ``(position,
    text)`` with ``meta["reject_position"]`` naming the unit of the position (e.g.
    ``"job"``); a third item, ``(line, text, reason)``, says why the record was
    skipped and is shown in the finding; ``findings`` are the reader's own. A
    ``(line, text)`` reject is already reported when the reader has an error
    finding on that line; other rejects when the reader has at least as many
    ``bad-record`` errors as skipped records. Skipped records counted but not
    listed give one summary finding.
    """
    count = skipped_count(meta)
    if count == 0:
        return []
    rejects = list(meta.get("rejects") or ())[:count]
    unit = str(meta.get("reject_position") or "line")
    error_lines = {f.line for f in findings if f.severity == ERROR and f.line is not None}
    reported = sum(1 for f in findings if f.severity == ERROR and f.check == BAD_RECORD)
    unreported = max(count - reported, 0)  # budget for rejects that cannot be matched
    out: list[Finding] = []
    for item in rejects:
        position: object = None
        text: object = item
        reason = ""
        if isinstance(item, (tuple, list)) and len(item) in (2, 3):
            position, text = item[0], item[1]
            if len(item) == 3 and str(item[2]).strip():
                reason = f" ({_excerpt(item[2])})"
        line = position if unit == "line" and isinstance(position, int) else None
        if line is not None:
            if line not in error_lines:
                out.append(
                    Finding(
                        line,
                        None,
                        f"record skipped by the lenient read{reason}: {_excerpt(text)}",
                        ERROR,
                        SKIPPED_RECORD,
                    )
                )
            continue
        if unreported <= 0:
            continue
        unreported -= 1
        where = f" ({unit} {position})" if position is not None else ""
        out.append(
            Finding(
                None,
                None,
                f"record skipped by the lenient read{where}{reason}: {_excerpt(text)}",
                ERROR,
                SKIPPED_RECORD,
            )
        )
    unlisted = count - len(rejects)
    if unlisted > 0 and reported < count:
        out.append(
            Finding(
                None,
                None,
                f"{unlisted} record(s) skipped by the lenient read"
                + (" (more than listed)" if rejects else ""),
                ERROR,
                SKIPPED_RECORD,
            )
        )
    return out


def sort_findings(findings: Sequence[Finding]) -> list[Finding]:
    """Findings in file order (header findings and line-less ones first, stable)."""
    return sorted(findings, key=lambda f: -1 if f.line is None else f.line)


# Public (plugin toolkit, ``schedlab.compat.PLUGIN_TOOLKIT``); the other names may change.
__all__ = [
    "BAD_RECORD",
    "ERROR",
    "INFO",
    "MAX_MAGNITUDE",
    "MAX_SECONDS",
    "SECONDS_FIELDS",
    "WARNING",
    "ColumnChecker",
    "Finding",
    "out_of_range",
]
