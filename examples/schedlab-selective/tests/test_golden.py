"""Golden schedules worked out by hand.

The machine has 4 processors, the policy is FCFS and jobs are killed at their
requested time (which is exact here, so estimates are run times):

* job 1 (2 processors, 100 s) runs from 0 to 100;
* job 2 (4 processors, 10 s), submitted at 0, cannot start before job 1 ends; its
  expansion factor at time t is 1 + t / 10, so it reaches 2 at t = 10;
* job 3 (2 processors, 200 s), submitted at ``t3``, fits now on the 2 free
  processors but would hold them until ``t3 + 200``, past 100.

When job 3 arrives before t = 10, job 2 is below the threshold (xf = 1 + t3 / 10 < 2):
it has no reservation, job 3 overtakes it and job 2 waits until job 3 ends. From
t = 10 on (xf >= 2, the comparison is inclusive) job 2 is protected at 100 and job 3
waits behind it, until 110.
"""

from __future__ import annotations

import pytest
from schedlab.testing import assert_schedule, workload_from_rows


def scenario(t3: float, *more: tuple[float, float, int, float]):
    return workload_from_rows(
        [(0, 100, 2, 100), (0, 10, 4, 10), (t3, 200, 2, 200), *more], procs=4
    )


def selective(registry, **options):
    return {"policy": "fcfs", "backfill": "selective", "backfill_options": options,
            "registry": registry}


@pytest.mark.parametrize("t3", [5, 9, 9.99])
def test_below_the_threshold_a_job_is_overtaken(registry, t3):
    assert_schedule(scenario(t3), {1: 0, 2: t3 + 200, 3: t3}, **selective(registry, threshold=2))


@pytest.mark.parametrize("t3", [10, 20, 99])
def test_at_or_above_the_threshold_it_is_protected(registry, t3):
    assert_schedule(scenario(t3), {1: 0, 2: 100, 3: 110}, **selective(registry, threshold=2))


def test_a_protected_job_still_lets_jobs_through_that_do_not_delay_it(registry):
    # Job 4 (2 processors, 50 s) arrives at 30, ends at 80 <= 100: it backfills.
    # Job 5 (2 processors, 71 s) arrives at 30 too and would end at 101: it waits.
    workload = scenario(20, (30, 50, 2, 50), (30, 71, 2, 71))
    assert_schedule(workload, {1: 0, 2: 100, 3: 110, 4: 30, 5: 110},
                    **selective(registry, threshold=2))


def test_the_default_threshold_is_two(registry):
    assert_schedule(scenario(9), {1: 0, 2: 209, 3: 9}, **selective(registry))
    assert_schedule(scenario(10), {1: 0, 2: 100, 3: 110}, **selective(registry))


def test_a_lower_threshold_protects_earlier(registry):
    # At 5, job 2's expansion factor is 1.5.
    assert_schedule(scenario(5), {1: 0, 2: 100, 3: 110}, **selective(registry, threshold=1.5))
    assert_schedule(scenario(5), {1: 0, 2: 205, 3: 5}, **selective(registry, threshold=1.6))


def test_threshold_one_protects_every_job_from_its_submission(registry):
    assert_schedule(scenario(5), {1: 0, 2: 100, 3: 110}, **selective(registry, threshold=1))


def test_a_huge_threshold_protects_nobody(registry):
    assert_schedule(scenario(99), {1: 0, 2: 299, 3: 99}, **selective(registry, threshold=1e12))


def test_easy_and_none_for_comparison(registry):
    # EASY reserves job 2 as the head of the queue whatever its wait; so does none
    # by blocking the queue behind it.
    for backfill in ("easy", "none", "conservative"):
        assert_schedule(scenario(5), {1: 0, 2: 100, 3: 110}, policy="fcfs",
                        backfill=backfill, registry=registry)


def test_adaptive_protects_everybody_before_the_first_completion(registry):
    # No job has completed at 5: the adaptive threshold is 1.
    assert_schedule(scenario(5), {1: 0, 2: 100, 3: 110},
                    **selective(registry, threshold="adaptive"))


def test_adaptive_follows_the_completed_jobs(registry):
    rows = [
        (0, 10, 4, 10),     # 1: runs 0-10, started with xf 1
        (0, 10, 4, 10),     # 2: runs 10-20, started with xf 2
        (20, 100, 2, 100),  # 3: runs 20-120
        (20, 10, 4, 10),    # 4: blocked by job 3 until 120; xf at t: 1 + (t - 20) / 10
        (27, 200, 2, 200),  # 5: fits now, but would hold 2 processors past 120
        (30, 200, 2, 200),  # 6: likewise
    ]
    workload = workload_from_rows(rows, procs=4)
    # At 27 jobs 1 and 2 have completed: the adaptive threshold is (1 + 2) / 2 = 1.5,
    # job 4's xf is 1.7: protected at 120; jobs 5 and 6 wait for it to end.
    assert_schedule(workload, {1: 0, 2: 10, 3: 20, 4: 120, 5: 130, 6: 130},
                    **selective(registry, threshold="adaptive"))
    # With the fixed threshold 2, job 4 (xf 1.7) is overtaken by job 5 at 27; at 30
    # (xf 2) it is protected at 227, when job 5 ends, and job 6 waits behind it.
    assert_schedule(workload, {1: 0, 2: 10, 3: 20, 4: 227, 5: 27, 6: 237},
                    **selective(registry, threshold=2))
