"""``Workload.from_arrays`` takes :class:`JobColumns` of float64 arrays as they are
(its docstring): they are the workload's own columns, so reading ``jobs`` makes
them read only in the caller's hands too, and a copy keeps the caller's writeable."""

from __future__ import annotations

import numpy as np
import pytest
import schedlab
from schedlab.model import JobColumns


def columns() -> JobColumns:
    n = 3
    data = {name: np.full(n, np.nan) for name in schedlab.SWF_FIELDS}
    data["job_number"] = np.arange(1.0, n + 1)
    data["submit_time"] = np.array([0.0, 1.0, 2.0])
    data["run_time"] = np.array([10.0, 20.0, 30.0])
    return JobColumns(data)


def test_columns_taken_as_they_are_freeze_with_the_conversion() -> None:
    cols = columns()
    w = schedlab.Workload.from_arrays(cols)
    assert w.to_arrays() is cols
    assert [j.run_time for j in w.jobs] == [10, 20, 30]
    with pytest.raises(ValueError):
        cols["run_time"][0] = 1.0


def test_a_copy_keeps_the_callers_columns_writeable() -> None:
    cols = columns()
    w = schedlab.Workload.from_arrays(cols.take(np.arange(3)))
    assert [j.run_time for j in w.jobs] == [10, 20, 30]
    cols["run_time"][0] = 1.0
    assert w.jobs[0].run_time == 10
