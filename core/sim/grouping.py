"""Rows of equal values grouped with numpy: what the column-wise passes over a
run's jobs (:mod:`schedlab.sim.requests_columns`, :mod:`schedlab.sim.allocation_text`)
use to compute something once per distinct value instead of once per job."""

from __future__ import annotations

import numpy as np


def group_rows(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Rows equal in every column (1-D arrays of one length, NaNs equal), grouped:
    the first row of each group, and each row's group (``0..groups-1``). One 1-D
    sort per column, faster than ``np.unique(axis=0)``'s sort of whole rows."""
    code = np.zeros(len(columns[0]) if columns else 0, dtype=np.int64)
    groups = 1
    for column in columns:
        count, inverse = _codes(column)
        if count == 1:
            continue  # one value: no column to group by
        if groups * count >= 2**62:
            distinct, renumbered = np.unique(code, return_inverse=True)
            groups, code = len(distinct), renumbered.reshape(-1)
        code = code * count + inverse
        groups *= count
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def _codes(column: np.ndarray) -> tuple[int, np.ndarray]:
    """A code per row, equal for equal values (``0..count-1``), and ``count``:
    integers of a small range are their offset from the smallest (no sort)."""
    if len(column) and column.dtype.kind in "iu":
        low, high = int(column.min()), int(column.max())
        if high - low < 2 * len(column) + 1024:
            return high - low + 1, column.astype(np.int64) - low
    values, inverse = np.unique(column, return_inverse=True)
    return len(values), inverse.reshape(-1)


__all__ = ["group_rows"]
