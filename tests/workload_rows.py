"""Test helper: a workload from plain rows, for the hypothesis strategies of the
simulator's tests (importable by name: ``tests/`` is on ``sys.path``, see
``conftest.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from schedlab.model import Header, Workload


def workload_from_rows(
    rows: Sequence[tuple[float, float, float, int, int]], procs: int, **columns: list[Any]
) -> Workload:
    """Jobs numbered from 1 in row order, each row ``(submit, run, requested,
    processors, user)``, completed (status 1), on a machine of ``procs``
    processors (``MaxProcs``); ``columns`` adds or replaces whole columns."""
    header = Header()
    header.set("MaxProcs", procs)
    n = len(rows)
    return Workload.from_arrays(
        {
            "job_number": list(range(1, n + 1)),
            "submit_time": [r[0] for r in rows],
            "run_time": [r[1] for r in rows],
            "requested_time": [r[2] for r in rows],
            "requested_processors": [r[3] for r in rows],
            "user_id": [r[4] for r in rows],
            "status": [1] * n,
            **columns,
        },
        header=header,
    )
