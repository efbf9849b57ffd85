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

:func:`header_enum_findings` and :func:`check_spec_rules` make the definition's
other rules warnings: ``Preemption`` and ``AllowOveruse`` values it does not
list (``header-enum``), checkpoint/swap records in a ``Preemption: No`` log
(``partial-not-preempted``), jobs beyond ``MaxRuntime`` / ``MaxMemory``
(``exceeds-max-runtime``, ``exceeds-max-memory``) and, with ``AllowOveruse:
No``, jobs using more than they requested (``overuse``). What is read does not
change.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from schedlab.model import SWF_FIELDS, Header
from schedlab.validation import ERROR, INFO, WARNING, Finding


def check_partial_records(
    values: np.ndarray,
    lines: np.ndarray,
    grouped: np.ndarray,
    heads: np.ndarray,
    *,
    summarized: bool = False,
) -> list[Finding]:
    """Findings for checkpoint/swap records.

    ``values`` is the ``(18, n)`` block (NaN = unknown), ``grouped`` marks
    records attached to a summary line, ``heads`` marks partial records that start
    a run without a summary line. ``summarized``: the read replaces each such run
    by one summary row (``summary_only``), which the finding then says.
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
                "line for its job "
                + (
                    "(summary_only: its job is one summary row built from its records)"
                    if summarized
                    else "(kept as a row)"
                ),
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


#: The values the definition lists for the enumerated header labels.
ENUMERATED = {"Preemption": ("No", "Yes", "Double", "TS"), "AllowOveruse": ("Yes", "No")}


def header_enum_findings(header: Header, header_lines: Mapping[str, int]) -> list[Finding]:
    """A ``header-enum`` warning for a ``Preemption`` or ``AllowOveruse`` value that
    is not one the definition lists (compared without case): ``AllowOveruse: True``
    is read as no overuse allowed, as any value not starting with ``y`` is."""
    out = []
    for label, allowed in ENUMERATED.items():
        value = header.get(label)
        if value is None or value.strip().lower() in {a.lower() for a in allowed}:
            continue
        out.append(
            Finding(
                header_lines.get(label),
                None,
                f"header {label}: {_quoted(value)} is not one of {', '.join(allowed)}",
                WARNING,
                "header-enum",
            )
        )
    return out


def _quoted(text: str, width: int = 40) -> str:
    return repr(text if len(text) <= width else text[: width - 3] + "...")


def spec_limits(header: Header) -> dict[str, object]:
    """What :func:`check_spec_rules` checks against: ``MaxRuntime`` and ``MaxMemory``
    when known (-1 or absent: not checked), whether ``AllowOveruse`` is ``No``
    and whether ``Preemption`` is ``No``."""
    limits: dict[str, object] = {}
    for label, value in (("MaxRuntime", header.max_runtime), ("MaxMemory", header.max_memory)):
        if value is not None and value >= 0:
            limits[label] = float(value)
    overuse = header.get("AllowOveruse")
    limits["no_overuse"] = overuse is not None and overuse.strip().lower() == "no"
    preemption = header.get("Preemption")
    limits["no_preemption"] = preemption is not None and preemption.strip().lower() == "no"
    return limits


_RULES = (
    ("MaxRuntime", ("run_time", "requested_time"), "exceeds-max-runtime", "s"),
    ("MaxMemory", ("used_memory", "requested_memory"), "exceeds-max-memory", "KB"),
)
_OVERUSE = (("run_time", "requested_time", "s"), ("used_memory", "requested_memory", "KB"))


def check_spec_rules(
    values: np.ndarray, lines: np.ndarray, limits: Mapping[str, object]
) -> list[Finding]:
    """Warnings for the records of an ``(18, n)`` block (NaN = unknown; every
    record, checkpoint/swap ones included) that break a rule of the header
    (:func:`spec_limits`): a run or requested time above ``MaxRuntime``, a used or
    requested memory above ``MaxMemory`` (the most the system allowed), with
    ``AllowOveruse: No`` a run time above the requested time or a used memory above
    the requested memory, and with ``Preemption: No`` a record of status 2, 3 or 4."""
    findings: list[Finding] = []
    if values.ndim != 2 or values.shape[1] == 0:
        return findings
    index = {name: i for i, name in enumerate(SWF_FIELDS)}
    job = values[0]
    with np.errstate(invalid="ignore"):
        for label, fields, check, unit in _RULES:
            limit = limits.get(label)
            if not isinstance(limit, float):
                continue
            for field in fields:
                column = values[index[field]]
                for i in np.flatnonzero(column > limit).tolist():
                    findings.append(
                        Finding(
                            int(lines[i]),
                            field,
                            f"{_shown(column[i])} {unit} is above the header's "
                            f"{label}: {_shown(limit)} (the most the system allowed)",
                            WARNING,
                            check,
                            _job_number(job[i]),
                        )
                    )
        if limits.get("no_overuse"):
            for used, asked, unit in _OVERUSE:
                u, a = values[index[used]], values[index[asked]]
                for i in np.flatnonzero(u > a).tolist():
                    findings.append(
                        Finding(
                            int(lines[i]),
                            used,
                            f"{_shown(u[i])} {unit} used, above the {_shown(a[i])} {unit} "
                            "requested, but the header says AllowOveruse: No",
                            WARNING,
                            "overuse",
                            _job_number(job[i]),
                        )
                    )
    if limits.get("no_preemption"):
        status = values[index["status"]]
        for i in np.flatnonzero(np.isin(status, (2, 3, 4))).tolist():
            findings.append(
                Finding(
                    int(lines[i]),
                    "status",
                    f"checkpoint/swap record (status {_shown(status[i])}) in a log whose "
                    "header says Preemption: No (jobs run to completion, one line each)",
                    WARNING,
                    "partial-not-preempted",
                    _job_number(job[i]),
                )
            )
    return findings
