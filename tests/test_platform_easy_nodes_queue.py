"""Node-level EASY's compiled queue (``easy_nodes_kernels``): started jobs leave
holes, arrivals fill the hole before their rank, the queue is compacted when holes
outnumber jobs, and the backfilling scan skips blocks (16 slots) and super-blocks
(256 slots) whose bounds (fewest cores, shortest estimate) hold no candidate. On
long queues (hundreds of waiting jobs) on random shared platforms with memory, the
whole run and the pass-by-pass run give the Python pass's schedule and
allocations, job for job."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from schedlab.platform import Platform

pytest.importorskip("numba")


import platform_sim_check as check
import test_platform_whole_run as whole_tests
from platform_strategies import COVERED, GIB, shared_platforms


def long_queue_workload(platform: Platform, seed: int, n: int) -> Any:
    """``n`` jobs arriving much faster than they run (the queue grows to hundreds):
    small and large, short and long estimates, some with GPUs or node counts."""
    rng = np.random.default_rng(seed)
    cores = sum(g.cores * g.count for g in platform.node_groups)
    gpus = any(g.gpus for g in platform.node_groups)
    jobs = []
    t = 0
    for i in range(n):
        t += int(rng.integers(0, 2))
        run = int(rng.integers(1, 300))
        extras: dict[str, Any] = {}
        if gpus and rng.integers(0, 8) == 0:
            extras["gpus"] = 1
        if rng.integers(0, 8) == 0:
            extras["nodes"] = int(rng.integers(1, 3))
        size = (
            int(rng.integers(1, cores + 1)) if rng.integers(0, 3) == 0 else int(rng.integers(1, 3))
        )
        jobs.append(
            check.job(
                i + 1, float(t), size, run,
                memory_gib=[None, 0.25, 0.5, 1][int(rng.integers(0, 4))],
                requested_time=max(1, run + int(rng.integers(-20, 400))), **extras,
            )
        )  # fmt: skip
    return check.workload(*jobs)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_long_queues_give_the_python_schedule_whole_and_pass_by_pass(data: Any) -> None:
    platform = data.draw(shared_platforms(3, (2 * GIB, 4 * GIB, 8 * GIB), 2))
    seed = data.draw(st.integers(0, 2**32 - 1))
    n = data.draw(st.integers(300, 450))
    allocation = data.draw(st.sampled_from(COVERED))
    policy = data.draw(st.sampled_from(("fcfs", "sjf", "smallest")))
    kill = data.draw(st.booleans())
    workload = long_queue_workload(platform, seed, n)
    python, per_pass, whole = whole_tests.three(
        workload, platform, allocation, kill=kill, policy=policy
    )
    # The longest queue: the jobs submitted by a start time and not started before.
    submit = np.sort(np.asarray(python.state.table.submit, dtype=float))
    start = np.sort(np.asarray(python.state.start_time, dtype=float))
    waiting = np.searchsorted(submit, start, side="right") - np.searchsorted(start, start)
    note(f"longest queue {int(waiting.max())}")
    assert waiting.max() > 2 * 16  # more than two blocks wait at once
    whole_tests.assert_same_run(python, whole)
    whole_tests.assert_same_run(python, per_pass)
    check.check_node_schedule(whole)
