"""A dependent job released after later jobs started lies below the waiting
arrays' ``lo`` (``WaitingArrays.first_waiting`` had moved past it while it was not
yet submitted): the numpy screens of a long queue (EASY's, depth's, conservative's
compression) must still see it. The Python EASY pass missed it, so it waited while
it could backfill (hypothesis found it under unicef with dependencies)."""

from __future__ import annotations

import pytest
import schedlab
from schedlab.policies.backfill.depth import DepthReference
from schedlab.policies.backfill.easy import Easy
from workload_rows import workload_from_rows


def workload() -> schedlab.Workload:
    # 3 processors. Job 1 (1 proc, 10 s) and job 3 (1 proc, 1000 s) start at 0; job 4
    # (3 procs) heads the queue until 1000; 70 more jobs of 3 processors make the
    # queue long enough for the screen. Job 2 depends on job 1: released at 10, it
    # backfills at once (it ends long before the head's shadow time).
    rows = [(0, 10, 10, 1, 1), (0, 5, 5, 1, 1), (0, 1000, 1000, 1, 1)]
    rows += [(0, 10, 10, 3, 1)] * 71
    preceding = [-1, 1] + [-1] * (len(rows) - 2)
    return workload_from_rows(rows, 3, preceding_job_number=preceding, think_time=[0] * len(rows))


@pytest.mark.parametrize(
    "backfill", [Easy(kernel="python"), Easy(kernel="compiled"), DepthReference(1)]
)
def test_a_released_dependent_job_is_screened(backfill: object) -> None:
    r = schedlab.simulate(workload(), backfill=backfill, dependencies=True, progress=False)
    starts = r.start.tolist()
    assert starts[:4] == [0.0, 10.0, 0.0, 1000.0]


@pytest.mark.parametrize("backfill", ["depth", "conservative"])
def test_the_other_screens_see_it_too(backfill: str) -> None:
    r = schedlab.simulate(workload(), backfill=backfill, dependencies=True, progress=False)
    assert r.start.tolist()[1] == 10.0
