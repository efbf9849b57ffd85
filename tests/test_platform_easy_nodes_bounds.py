"""Node-level EASY's compiled pass keeps, per block of ``kn.BLOCK`` queue slots and
per super-block of ``kn.SUPER``, lower bounds of the cores and estimates asked in
it (``B_CORES``/``B_EST``, ``S_CORES``/``S_EST``) and, per block, the one demand
of its waiting jobs (``B_CLASS``). Step 3 skips a block or super-block on them, so
a bound set too high (or a demand set for a block holding another) would skip a
job that may start. After every pass each one holds against the waiting jobs in
it, on bursts long enough for queues of several super-blocks; the schedules match
the Python pass's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

import platform_sim_check as check
from queue_bounds_checks import assert_group_bounds
from schedlab.policies.backfill import easy_nodes_kernels as kn
from test_platform_easy_nodes_capacity import run_with_pass_check, small_platform
from test_platform_easy_nodes_incremental import burst_workload


def assert_bounds(meta: np.ndarray, ints: np.ndarray, floats: np.ndarray) -> int:
    """Every block's and super-block's bounds, and every block's demand, hold
    for the queue's slots in use; returns how many super-blocks holding waiting
    jobs were checked."""
    first, end = int(meta[kn.M_FIRST]), int(meta[kn.M_END])
    if end <= first:
        return 0
    cores, est = ints[kn.Q_CORES], floats[kn.Q_EST]
    supers = assert_group_bounds(
        first, end, kn.SUPER, kn.HOLE, cores, est, ints[kn.S_CORES], floats[kn.S_EST]
    )
    assert_group_bounds(
        first, end, kn.BLOCK, kn.HOLE, cores, est, ints[kn.B_CORES], floats[kn.B_EST]
    )
    for b in range(first // kn.BLOCK, -(-end // kn.BLOCK)):
        x0, x1 = max(b * kn.BLOCK, first), min(b * kn.BLOCK + kn.BLOCK, end)
        held = ints[kn.Q_CORES, x0:x1] != kn.HOLE
        demands = set(ints[kn.Q_CLASS, x0:x1][held].tolist())
        cls = int(ints[kn.B_CLASS, b])
        if cls >= 0:
            assert demands <= {cls}, (b, cls, demands)
        elif cls == kn.NO_CLASS:
            assert not demands, (b, demands)
    return supers


@pytest.mark.parametrize("policy", ["fcfs", "sjf"])
def test_queue_bounds_hold_after_every_pass(policy: str, monkeypatch: Any) -> None:
    platform = small_platform()
    supers = 0
    for seed in range(2):
        workload = burst_workload(platform, seed, 800)

        def after(a: tuple[Any, ...], out: Any) -> int:
            # node_easy_pass(meta, free, ints, floats, ...)
            return assert_bounds(a[0], a[2], a[3])

        n, compiled = run_with_pass_check(
            workload, platform, monkeypatch, after, allocation="first-fit", policy=policy
        )
        python = check.run(
            workload, platform, "easy", backfill_options={"kernel": "python"}, policy=policy
        )
        assert compiled.result.start.tolist() == python.result.start.tolist()
        assert compiled.allocations.keys() == python.allocations.keys()
        supers += n
    assert supers > 100  # queues of several super-blocks were checked
