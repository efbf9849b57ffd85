"""Infinite submit or run times in a hand-made (or plugin-made) workload are
excluded with their reason, not a strategy blamed for a job that never started
(infinite submit) nor an internal error (infinite run time without kill)."""

from __future__ import annotations

import math
import warnings

import pytest
import schedlab


@pytest.mark.parametrize(
    ("submit", "run", "reason"),
    [
        (math.inf, 10.0, "no_submit_time"),
        (-math.inf, 10.0, "no_submit_time"),
        (0.0, math.inf, "no_run_time"),
    ],
)
@pytest.mark.parametrize("kill", [True, False])
@pytest.mark.parametrize("backfill", ["none", "easy", "conservative"])
def test_infinite_times_are_excluded_with_their_reason(submit, run, reason, kill, backfill):
    jobs = [
        schedlab.Job(
            job_number=1, submit_time=submit, run_time=run, requested_processors=1,
            requested_time=20,
        ),
        schedlab.Job(
            job_number=2, submit_time=0, run_time=10, requested_processors=1, requested_time=20
        ),
    ]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = schedlab.simulate(
            schedlab.Workload.from_jobs(jobs), procs=4, kill=kill, backfill=backfill
        )
    assert {k: v for k, v in result.stats["excluded"].items() if v} == {reason: 1}
    started = {j.job_number: j.wait_time for j in result.workload.jobs}
    assert started[2] == 0
