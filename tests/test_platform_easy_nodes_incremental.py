"""Node-level EASY's compiled kernel keeps work from one pass to the next
(``easy_nodes_kernels``): a pass after arrivals only skips the queue slots the
last pass left settled (after its last backfill, before the first arrival) until
a job starts; the free amounts at the shadow time (``fat``) follow every start and
end, and the shadow search starts from the last shadow time (groups of equal
estimated ends taken back while the head fits, or added until it does); the list
of open nodes is merged lazily; a block of queue slots whose waiting jobs all ask
one refused demand is skipped. On memory-bound random workloads with coarse
estimates (many equal estimated ends), early ends and overruns, and on bursts of
identical jobs, the whole run and
the pass-by-pass run give the Python pass's schedule and allocations, job for
job, and the incremental paths are taken."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedlab.platform import NodeGroup, Partition, Platform

pytest.importorskip("numba")

import platform_sim_check as check
import test_platform_whole_run as whole_tests
from platform_strategies import COVERED, GIB, shared_platforms
from schedlab.policies.backfill import easy_nodes_kernels as kn


def memory_workload(platform: Platform, seed: int, n: int) -> Any:
    """``n`` jobs, many asking much memory per core, arriving in bursts and gaps
    (passes after arrivals only while the head waits), run times and estimates in
    steps of 10 s (many jobs share an estimated end), most ending early, some
    running past their estimate."""
    rng = np.random.default_rng(seed)
    cores = sum(g.cores * g.count for g in platform.node_groups)
    gpus = any(g.gpus for g in platform.node_groups)
    jobs = []
    t = 0
    for i in range(n):
        t += int(rng.choice([0, 1, 3, 10, 40]))
        run = 10 * int(rng.integers(0, 30))
        extras: dict[str, Any] = {}
        if gpus and rng.integers(0, 10) == 0:
            extras["gpus"] = 1
        if rng.integers(0, 10) == 0:
            extras["nodes"] = int(rng.integers(1, 3))
        size = (
            int(rng.integers(1, cores + 1)) if rng.integers(0, 3) == 0 else int(rng.integers(1, 4))
        )
        over = 10 * int(rng.integers(-3, 20))
        jobs.append(
            check.job(
                i + 1, float(t), size, run,
                memory_gib=[None, 0.25, 0.5, 1, 1.5, 3][int(rng.integers(0, 6))],
                requested_time=max(10, run + over), **extras,
            )
        )  # fmt: skip
    return check.workload(*jobs)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_incremental_passes_give_the_python_schedule_whole_and_pass_by_pass(data: Any) -> None:
    platform = data.draw(shared_platforms(4, (2 * GIB, 3 * GIB, 6 * GIB), 3))
    seed = data.draw(st.integers(0, 2**32 - 1))
    n = data.draw(st.integers(40, 220))
    allocation = data.draw(st.sampled_from(COVERED))
    policy = data.draw(st.sampled_from(("fcfs", "sjf", "largest")))
    kill = data.draw(st.booleans())
    workload = memory_workload(platform, seed, n)
    python, per_pass, whole = whole_tests.three(
        workload, platform, allocation, kill=kill, policy=policy
    )
    whole_tests.assert_same_run(python, whole)
    whole_tests.assert_same_run(python, per_pass)
    check.check_node_schedule(whole)


@pytest.mark.parametrize("policy", ["fcfs", "sjf"])
def test_the_incremental_paths_are_taken(policy: str) -> None:
    """Over a few fixed runs: passes skip settled slots, shadow times are searched
    from the kept ``fat`` (and groups taken back), and the schedules match."""
    platform = Platform(
        (
            NodeGroup("a", count=3, cores=4, memory=3 * GIB),
            NodeGroup("b", count=2, cores=8, memory=6 * GIB),
        ),
        (Partition("all", ("a", "b"), sharing="shared"),),
    )
    skipped = from_fat = 0
    for seed in range(6):
        workload = memory_workload(platform, seed, 200)
        python, per_pass, whole = whole_tests.three(workload, platform, "first-fit", policy=policy)
        whole_tests.assert_same_run(python, whole)
        whole_tests.assert_same_run(python, per_pass)
        meta = per_pass.engine.strategy._compiled.meta
        skipped += int(meta[kn.M_SKIPPED])
        from_fat += int(meta[kn.M_FROM_FAT])
    assert skipped > 0
    assert from_fat > 0


def test_a_job_refused_for_the_head_is_looked_at_again_after_a_later_backfill() -> None:
    """X is refused at 10 (first fit puts it on n0, which the head needs at its
    shadow time 100); Y, after it, then backfills onto n0 (it ends by 100). At the
    pass after Z's arrival (arrivals only) X gets n1 and starts: the slots before
    the last pass's last backfill are looked at again."""
    platform = Platform(
        (NodeGroup("n", count=3, cores=4),), (Partition("all", ("n",), sharing="shared"),)
    )
    jobs = [
        check.job(1, 0.0, 4, 5),  # A: n0 until 5
        check.job(2, 0.0, 2, 1000),  # B: 2 cores of n1
        check.job(3, 0.0, 4, 100, nodes=1),  # C: n2 until 100
        check.job(4, 10.0, 8, 50, nodes=2),  # H: two whole nodes (n0 and n2 at 100)
        check.job(5, 10.0, 2, 1000),  # X
        check.job(6, 10.0, 4, 50),  # Y: n0 until 60
        check.job(7, 10.0, 12, 10),  # W: waits (Z does not take Y's slot)
        check.job(8, 20.0, 12, 10),  # Z: waits
    ]
    workload = check.workload(*jobs)
    python, per_pass, whole = whole_tests.three(workload, platform, "first-fit")
    assert python.starts()[5] == 20.0
    assert per_pass.engine.strategy._compiled.meta[kn.M_SKIPPED] > 0
    whole_tests.assert_same_run(python, whole)
    whole_tests.assert_same_run(python, per_pass)


def burst_workload(platform: Platform, seed: int, n: int) -> Any:
    """About ``n`` jobs in bursts of identical jobs (one demand each, like job
    arrays) of 1 to 40 copies: many asking more memory or cores than the machine
    often has free, long queues whose blocks hold one demand, or several."""
    rng = np.random.default_rng(seed)
    cores = sum(g.cores * g.count for g in platform.node_groups)
    jobs = []
    t = 0
    while len(jobs) < n:
        t += int(rng.choice([0, 5, 30, 200]))
        size = (
            int(rng.integers(1, cores + 1)) if rng.integers(0, 3) == 0 else int(rng.integers(1, 5))
        )
        memory = [None, 0.5, 1, 1.5, 3][int(rng.integers(0, 5))]
        run = 10 * int(rng.integers(1, 40))
        estimate = max(10, run + 10 * int(rng.integers(-3, 30)))
        for _ in range(int(rng.choice([1, 1, 2, 8, 20, 40]))):
            jobs.append(
                check.job(
                    len(jobs) + 1, float(t), size, run, memory_gib=memory,
                    requested_time=estimate,
                )
            )  # fmt: skip
            t += int(rng.choice([0, 0, 0, 1]))
    return check.workload(*jobs)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_blocks_of_one_refused_demand_are_skipped_with_the_python_schedule(data: Any) -> None:
    """A block of queue slots whose waiting jobs all ask one demand refused in the
    epoch (no allocation, or, when none of them ends by the shadow time, one that
    would delay the head) is skipped whole: the whole run and the pass-by-pass run
    still give the Python pass's schedule and allocations."""
    platform = data.draw(shared_platforms(4, (2 * GIB, 3 * GIB, 6 * GIB), 3))
    seed = data.draw(st.integers(0, 2**32 - 1))
    n = data.draw(st.integers(100, 400))
    allocation = data.draw(st.sampled_from(COVERED))
    policy = data.draw(st.sampled_from(("fcfs", "sjf")))
    workload = burst_workload(platform, seed, n)
    python, per_pass, whole = whole_tests.three(workload, platform, allocation, policy=policy)
    whole_tests.assert_same_run(python, whole)
    whole_tests.assert_same_run(python, per_pass)


def test_the_block_demand_skip_is_taken() -> None:
    """Over a few fixed runs of bursts the scan skips blocks by their demand, with
    the Python pass's schedule."""
    platform = Platform(
        (
            NodeGroup("a", count=3, cores=4, memory=3 * GIB),
            NodeGroup("b", count=2, cores=8, memory=6 * GIB),
        ),
        (Partition("all", ("a", "b"), sharing="shared"),),
    )
    skips = 0
    for seed in range(4):
        workload = burst_workload(platform, seed, 400)
        python, per_pass, whole = whole_tests.three(workload, platform, "first-fit")
        whole_tests.assert_same_run(python, whole)
        whole_tests.assert_same_run(python, per_pass)
        skips += int(per_pass.engine.strategy._compiled.meta[kn.M_CLASS_SKIPS])
    assert skips > 0


def assert_block_demands(meta: np.ndarray, ints: np.ndarray) -> None:
    """Each block's ``B_CLASS`` holds for its waiting jobs: one demand, all of
    them asking it; ``NO_CLASS``, none waiting; or ``MIXED``."""
    first, end = int(meta[kn.M_FIRST]), int(meta[kn.M_END])
    for b in range(first // kn.BLOCK, (end - 1) // kn.BLOCK + 1 if end > first else 0):
        lo, hi = max(b * kn.BLOCK, first), min((b + 1) * kn.BLOCK, end)
        waiting = [x for x in range(lo, hi) if ints[kn.Q_CORES, x] != kn.HOLE]
        cls = int(ints[kn.B_CLASS, b])
        if cls >= 0:
            assert all(ints[kn.Q_CLASS, x] == cls for x in waiting), (b, cls)
        elif cls == kn.NO_CLASS:
            assert not waiting, b
        else:
            assert cls == kn.MIXED, cls


@pytest.mark.parametrize("policy", ["fcfs", "sjf"])
def test_block_demands_hold_after_every_pass(policy: str, monkeypatch: Any) -> None:
    """After every compiled pass of runs of bursts, each block's demand is that of
    all its waiting jobs (or mixed, or none): arrivals into holes, compactions and
    appended slots keep it."""
    platform = Platform(
        (
            NodeGroup("a", count=3, cores=4, memory=3 * GIB),
            NodeGroup("b", count=2, cores=8, memory=6 * GIB),
        ),
        (Partition("all", ("a", "b"), sharing="shared"),),
    )
    original = kn.node_easy_pass
    passes = []

    def checked(meta: np.ndarray, free: np.ndarray, ints: np.ndarray, *rest: Any) -> Any:
        out = original(meta, free, ints, *rest)
        assert_block_demands(meta, ints)
        passes.append(1)
        return out

    monkeypatch.setattr(kn, "node_easy_pass", checked)
    for seed in range(3):
        workload = burst_workload(platform, seed, 300)
        check.run(
            workload, platform, "easy", allocation="first-fit", policy=policy,
            backfill_options={"kernel": "compiled"}, whole=False,
        )  # fmt: skip
    assert len(passes) > 100
