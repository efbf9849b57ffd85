"""Run-time bugs found while clearing mypy's "to fix" overrides (second round)."""

from __future__ import annotations

import pytest
from schedlab.testing import simulated_starts, workload_from_rows


def _row(number: int | None, submit: float) -> dict[str, float | int | None]:
    return {
        "job_number": number,
        "submit_time": submit,
        "run_time": 10,
        "requested_processors": 4,
        "requested_time": 10,
    }


def test_simulated_starts_names_a_job_without_a_number():
    # was a TypeError from int(None): the starts are keyed by job number
    w = workload_from_rows([_row(1, 0), _row(None, 3)], procs=4)
    with pytest.raises(ValueError, match="no job number"):
        simulated_starts(w, policy="fcfs", backfill="none")


def test_simulated_starts_refuses_a_job_number_used_twice():
    # was {1: 10}: the first job's start silently overwritten by the second's
    w = workload_from_rows([_row(1, 0), _row(1, 1)], procs=4)
    with pytest.raises(ValueError, match="job number 1 is used by more than one job"):
        simulated_starts(w, policy="fcfs", backfill="none")


def test_simulated_starts_still_maps_numbers_to_starts():
    w = workload_from_rows([_row(1, 0), _row(2, 1)], procs=4)
    assert simulated_starts(w, policy="fcfs", backfill="none") == {1: 0, 2: 10}
