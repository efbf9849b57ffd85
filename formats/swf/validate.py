"""SWF-specific checks that the generic :class:`~schedlab.validation.ColumnChecker`
cannot make because they concern records that are not job rows.

Checkpoint/swap records (status 2, 3, 4) grouped with their job's summary line are
kept in the job's extras rather than as rows, so their values are checked here.
Partial records without a summary line are legal (``Preemption: Yes`` logs) and
reported as ``info``.
"""

from __future__ import annotations

import numpy as np
from schedlab.model import SWF_FIELDS
from schedlab.validation import ERROR, INFO, Finding


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
