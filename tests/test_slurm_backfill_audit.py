"""The ``slurm`` strategy's cycle skipping and options, and ``depth``'s booleans
(audit slurmbf): a skipped cycle must change no schedule, ``bf_continue`` must not
lose work that arrives while a cycle is continued, ``bf_max_job_user`` counts per
cycle and does not lump unknown users together, and boolean options mean what
their messages say.

A row is ``(submit, run, processors, requested time)`` (``schedlab.testing``); job
numbers run from 1 in row order.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
import schedlab
from schedlab.errors import UsageError
from schedlab.policies.backfill.slurm import SlurmBackfill
from schedlab.testing import simulated_starts, workload_from_rows


class EveryCycle(SlurmBackfill):
    """``slurm`` with no cycle skipped: every tick at which jobs wait runs a cycle
    (the plain rule the skip must not change)."""

    def next_wakeup(self) -> float:
        """Always new work: wake at every backfill tick."""
        self._dirty = True
        return super().next_wakeup()


def with_users(rows: list[tuple], users: list[int]) -> Any:
    """A workload of ``rows`` with user ids."""
    return workload_from_rows(
        [
            dict(submit_time=s, run_time=r, requested_processors=p, requested_time=t, user_id=u)
            for (s, r, p, t), u in zip(rows, users, strict=True)
        ],
        procs=10,
    )


BLOCKED = [(0, 1000, 8, 1000), (1, 100, 10, 100), (2, 100, 10, 100), (3, 100, 10, 100)]


def test_work_arriving_during_a_continued_cycle_gets_a_fresh_cycle() -> None:
    """Job 1 (8 of 10 processors) runs; jobs 2-4 (10 processors) wait; job 5 (2
    processors, 100 s) arrives at 40. The cycle at 30 tests 2 and 3, its
    continuation at 60 tests 4; the list is exhausted, so the tick at 90 is a fresh
    cycle (job 5 arrived since the cycle began): it tests 2 and 3, and its
    continuation at 120 tests 4 and starts 5."""
    w = workload_from_rows(
        [*BLOCKED, (40, 100, 2, 100)],
        procs=10,
    )
    opts = {"bf_max_job_test": 2, "bf_continue": True}
    starts = simulated_starts(w, backfill="slurm", backfill_options=opts)
    assert starts[5] == 120
    assert starts == simulated_starts(w, backfill=EveryCycle(**opts))


def test_a_job_running_past_its_estimate_is_new_work() -> None:
    """kill=False: jobs 1 and 2 (4 processors) pass their estimates (60 s, 120 s)
    and run on. At 120 both are due (free from the instant after now): head job 3
    (6 processors) is planned there and job 4 (2 processors) fits beside it, so the
    cycle at 120 starts job 4, although no job was submitted, started or ended."""
    w = workload_from_rows(
        [(0, 100000, 4, 60), (0, 100000, 4, 120), (1, 1000, 6, 1000), (2, 10, 2, 100000)],
        procs=10,
    )
    starts = simulated_starts(w, backfill="slurm", kill=False)
    assert starts[4] == 120
    assert starts == simulated_starts(w, backfill=EveryCycle(), kill=False)


@pytest.mark.parametrize(("options", "job3"), [({}, 90), ({"sched_interval": 3600}, 90)])
def test_a_time_dependent_priority_gets_its_cycles(options: dict[str, int], job3: int) -> None:
    """Job 1 (8 of 10 processors) runs; job 2 (whole machine) heads the queue
    until t=70, then the priority (a key function of now) puts job 3 (2 processors,
    2,000 s) first: the cycle at 90 (the first tick after the change) starts it."""
    w = workload_from_rows([(0, 1000, 8, 1000), (1, 100, 10, 100), (2, 2000, 2, 2000)], procs=10)

    def key(job: int, now: float) -> int:
        return job if now < 70 else -job

    starts = simulated_starts(w, policy=key, backfill="slurm", backfill_options=options)
    assert starts[3] == job3
    assert starts == simulated_starts(w, policy=key, backfill=EveryCycle(**options))


def test_skipped_cycles_change_no_schedule() -> None:
    """Random small workloads (jobs past their estimates with kill=False, due
    within a resolution step, a dynamic priority, a short window that jobs enter as
    time passes, per-user limits): the same starts with and without the skip.
    (With bf_continue, skipping a fresh cycle also shifts where the later cycles'
    parts fall: that is the documented rule, checked by the tests above.)"""
    rng = random.Random(7)
    option_sets: list[dict[str, Any]] = [
        {},
        {"bf_max_job_test": 2},
        {"bf_resolution": 7, "bf_interval": 13, "bf_window": 1},
        {"sched_interval": 300, "bf_interval": 45, "bf_max_job_user": 2},
    ]
    for seed in range(60):
        rows = []
        t = 0
        for _ in range(18):
            t += rng.choice([0, 1, 5, 30, 45, 60, 200])
            run = rng.choice([0, 10, 60, 100, 500, 2000])
            est = rng.choice([1, 60, 90, 120, 600, 3000, run + 1])
            rows.append((t, run, rng.randint(1, 10), est))
        w = with_users(rows, [rng.randint(1, 3) for _ in rows])
        for opts in option_sets:
            for kill in (True, False):
                for policy in ("fcfs", "wfp3"):
                    got = simulated_starts(
                        w, policy=policy, backfill="slurm", backfill_options=opts, kill=kill
                    )
                    want = simulated_starts(
                        w, policy=policy, backfill=EveryCycle(**opts), kill=kill
                    )
                    assert got == want, (seed, opts, kill, policy)


def test_unknown_users_are_not_limited_by_bf_max_job_user() -> None:
    """Without user ids, bf_max_job_user=1 does not treat every job as one user's:
    jobs 3-5 (1 processor, 100 s) backfill beside blocked job 2 at 30."""
    rows = [(0, 1000, 6, 1000), (1, 100, 10, 100), (2, 100, 1, 100), (3, 100, 1, 100)]
    rows.append((4, 100, 1, 100))
    unknown = workload_from_rows(rows, procs=10)
    opts = {"bf_max_job_user": 1}
    starts = simulated_starts(unknown, backfill="slurm", backfill_options=opts)
    assert [starts[j] for j in (3, 4, 5)] == [30, 30, 30]
    # Known users are limited: jobs 3-5 of user 1 (like the blocked job 2) wait.
    known = with_users(rows, [9, 1, 1, 1, 1])
    starts = simulated_starts(known, backfill="slurm", backfill_options=opts)
    assert [starts[j] for j in (3, 4, 5)] == [1100, 1100, 1100]


def test_bf_max_job_user_counts_over_a_whole_continued_cycle() -> None:
    """bf_max_job_test=1, bf_max_job_user=1, bf_continue: the cycle at 30 tests job
    2 (user 1, blocked); its continuation at 60 skips user 1's jobs 3 and 4 (that
    user's one test of this cycle is used) and starts user 2's job 5."""
    rows = [(0, 1000, 8, 1000), (1, 100, 10, 100), (2, 100, 1, 100), (3, 100, 1, 100)]
    rows.append((4, 100, 1, 100))
    w = with_users(rows, [9, 1, 1, 1, 2])
    opts = {"bf_max_job_user": 1, "bf_max_job_test": 1, "bf_continue": True}
    starts = simulated_starts(w, backfill="slurm", backfill_options=opts)
    assert starts == {1: 0, 2: 1000, 3: 1100, 4: 1100, 5: 60}


ROWS = [(0, 100, 5, 100), (1, 100, 10, 100), (2, 10, 5, 10), (3, 50, 5, 50)]


@pytest.mark.parametrize("flag", [True, False])
def test_depth_refuses_a_boolean(flag: bool) -> None:
    """depth=True/False is a mistake (not EASY / none): one-line UsageError."""
    w = workload_from_rows(ROWS, procs=10)
    with pytest.raises(UsageError, match=r"^backfill depth: option depth=(True|False): "):
        schedlab.simulate(w, backfill="depth", backfill_options={"depth": flag})


def test_bf_continue_takes_what_its_message_lists() -> None:
    """bf_continue accepts 1/0 (as its message says) like true/false; other
    integers are refused with that message."""
    w = workload_from_rows(ROWS, procs=10)
    for one, true in ((1, True), (0, False), ("1", True), ("off", False)):
        got = simulated_starts(w, backfill="slurm", backfill_options={"bf_continue": one})
        assert got == simulated_starts(w, backfill="slurm", backfill_options={"bf_continue": true})
        if not isinstance(one, str):  # (the class takes no text: that is the options')
            assert SlurmBackfill(bf_continue=one).bf_continue is true
    with pytest.raises(UsageError, match=r"bf_continue=2: expected .*1/0"):
        schedlab.simulate(w, backfill="slurm", backfill_options={"bf_continue": 2})
    with pytest.raises(UsageError, match=r"bf_continue=2: expected .*1/0"):
        SlurmBackfill(bf_continue=2)
