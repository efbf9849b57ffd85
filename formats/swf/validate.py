"""SWF-specific checks that the generic :class:`~schedlab.validation.ColumnChecker`
cannot make because they concern records that are not job rows.

Checkpoint/swap records (status 2, 3, 4) grouped with their job's summary line are
kept in the job's extras rather than as rows, so their values are checked here.
Partial records without a summary line are legal (``Preemption: Yes`` logs) and
reported as ``info``.

:func:`check_references` makes the checks that need the header or concern one
record's fields together: a think time without a preceding job
(``think-without-preceding``), and a queue or partition number that a declared
``Queue:`` / ``Partition:`` table does not list (``unknown-queue``,
``unknown-partition``); all warnings (see docs/formats/swf.md).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from schedlab.model import SWF_FIELDS, Header
from schedlab.validation import ERROR, INFO, WARNING, Finding


def check_partial_records(
    values: np.ndarray, lines: np.ndarray, grouped: np.ndarray, heads: np.ndarray
) -> list[Finding]:
    """Findings for checkpoint/swap records.

    ``values`` is the ``(18, n)`` block (NaN = unknown), ``grouped`` marks
    records attached to a summary line, ``heads`` marks partial records that start
    a run without a summary line.
    """
    findings: list[Finding] = []
    rows = np.flatnonzero(grouped)
    if len(rows):
        sub = values[:, rows]
        bad_field, bad_row = np.nonzero(sub < 0)
        for f, r in zip(bad_field.tolist(), bad_row.tolist(), strict=True):
            i = int(rows[r])
            value = values[f, i]
            text = str(int(value)) if float(value).is_integer() else repr(float(value))
            findings.append(
                Finding(
                    int(lines[i]),
                    SWF_FIELDS[f],
                    f"negative value {text} in a checkpoint/swap record "
                    "(only -1, unknown, may be negative)",
                    ERROR,
                    "negative-value",
                    _job_number(values[0, i]),
                )
            )
    for i in np.flatnonzero(heads).tolist():
        findings.append(
            Finding(
                int(lines[i]),
                "status",
                f"checkpoint/swap record (status {_job_number(values[10, i])}) without a summary "
                "line for its job (kept as a row)",
                INFO,
                "partial-without-summary",
                _job_number(values[0, i]),
            )
        )
    return findings


def _job_number(value: float) -> int | None:
    """A field as an int, ``None`` when unknown (NaN)."""
    return None if value != value else int(value)


def declared_tables(header: Header) -> dict[str, np.ndarray]:
    """``{field: numbers}`` of the ``Queue:`` and ``Partition:`` tables the header
    declares (a field without a table is absent): the numbers a job may use. Queue
    0 (interactive jobs, by the SWF convention) is always allowed."""
    out: dict[str, np.ndarray] = {}
    for label, field, always in (
        ("Queue", "queue_number", (0,)),
        ("Partition", "partition_number", ()),
    ):
        numbers = {entry.number for entry in header.table(label)}
        if numbers:
            out[field] = np.array(sorted(numbers | set(always)), dtype=np.float64)
    return out


def check_references(
    data: Mapping[str, np.ndarray], lines: np.ndarray, tables: Mapping[str, np.ndarray]
) -> list[Finding]:
    """Warnings for the job rows ``data`` (columns, NaN = unknown; ``lines`` their
    line numbers): a think time given without a preceding job (the definition
    says -1 then), and queue or partition numbers absent from the declared
    ``tables`` (:func:`declared_tables`)."""
    findings: list[Finding] = []
    think = data["think_time"]
    rows = np.flatnonzero(~np.isnan(think) & np.isnan(data["preceding_job_number"]))
    for i in rows.tolist():
        findings.append(
            Finding(
                int(lines[i]),
                "think_time",
                f"think time {_shown(think[i])} but no preceding job (field 17 is -1)",
                WARNING,
                "think-without-preceding",
                _job_number(data["job_number"][i]),
            )
        )
    for field, what in (("queue_number", "queue"), ("partition_number", "partition")):
        listed = tables.get(field)
        if listed is None:
            continue
        column = data[field]
        rows = np.flatnonzero(~np.isnan(column) & ~np.isin(column, listed))
        for i in rows.tolist():
            findings.append(
                Finding(
                    int(lines[i]),
                    field,
                    f"{what} {_shown(column[i])} is not in the header's {what.capitalize()}: table",
                    WARNING,
                    f"unknown-{what}",
                    _job_number(data["job_number"][i]),
                )
            )
    return findings


def _shown(value: float) -> str:
    """A field value for a message: integral values without ``.0``."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))
