"""Node-level EASY's compiled kernel keeps, per memory per core, the cores a
cores-and-memory demand can get on the free amounts (``memo[CAP]``), brought up to
date from a ring of the nodes whose free amounts changed (``nodes[LOG]``) and what
each node gave at the last sum (``snap``, with a bit mask per block of nodes)
instead of summed again over the open nodes; a first fit reads ``snap``. After
every pass each capacity marked current equals the full sum, and ``snap`` what
every node gives; the schedules match the Python pass's (on small platforms,
where the ring of one entry per node overflows often, and on platforms of several
blocks of nodes)."""

from __future__ import annotations

from collections.abc import Callable
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
from test_platform_easy_nodes_incremental import burst_workload, memory_workload


def gives(cores: int, memory: int, mpc: int) -> int:
    """Plain reference of ``kn._gives``."""
    if cores <= 0:
        return 0
    return min(cores, memory // mpc) if mpc else cores


def assert_capacities(meta: np.ndarray, ints: np.ndarray, mats: np.ndarray, memo: np.ndarray,
                      nodes: np.ndarray, snap: np.ndarray) -> int:  # fmt: skip
    """Every capacity kept current is the sum over the partition's nodes, and its
    ``snap`` row what each node gives; the number checked."""
    work = mats[0]
    pnodes = nodes[kn.P_NODES][: meta[kn.M_PNODES]]
    checked = 0
    mcs, first = np.unique(ints[kn.J_MC], return_index=True)
    for mc, j in zip(mcs.tolist(), first.tolist(), strict=True):
        if mc < 0 or memo[kn.CAP_EPOCH, mc] != meta[kn.M_LOG]:
            continue
        mpc = int(ints[kn.J_MPC, j])
        each = [gives(int(work[n, 0]), int(work[n, 1]), mpc) for n in pnodes]
        assert memo[kn.CAP, mc] == sum(each), (mc, memo[kn.CAP, mc], sum(each))
        if mc < snap.shape[0]:
            assert snap[mc, pnodes].tolist() == each, mc
            nn = nodes.shape[1]
            # Past the nodes, one bit mask per block of nodes: bit i set exactly
            # when the block's node i gives something.
            masks = [
                sum(1 << i for i in range(min(kn.SNAP_BLOCK, nn - b)) if snap[mc, b + i] > 0)
                for b in range(0, nn, kn.SNAP_BLOCK)
            ]
            assert snap[mc, nn:].tolist() == masks, mc
        checked += 1
    return checked


def run_with_pass_check(
    workload: Any,
    platform: Platform,
    monkeypatch: Any,
    after: Callable[[tuple[Any, ...], Any], int],
    **kw: Any,
) -> tuple[int, Any]:
    """A pass-by-pass compiled run calling ``after(arguments, result)`` after every
    ``node_easy_pass`` (it returns how many things it checked): the total checked
    and the run's result."""
    original = kn.node_easy_pass
    checked = [0]

    def pass_(*args):  # type: ignore[no-untyped-def]
        out = original(*args)
        checked[0] += after(args, out)
        return out

    monkeypatch.setattr(kn, "node_easy_pass", pass_)
    try:
        result = check.run(
            workload, platform, "easy", backfill_options={"kernel": "compiled"}, whole=False, **kw
        )
    finally:
        monkeypatch.setattr(kn, "node_easy_pass", original)
    return checked[0], result


def run_checked(workload: Any, platform: Platform, monkeypatch: Any, **kw: Any) -> tuple[int, Any]:
    """A pass-by-pass compiled run with the capacities checked after every pass
    (``node_easy_pass(meta, free, ints, floats, demands, mats, nodes, memo, ...)``,
    the pool's nodes its thirteenth argument)."""

    def after(a: tuple[Any, ...], out: Any) -> int:
        return assert_capacities(a[0], a[2], a[5], a[7], a[6], a[12])

    return run_with_pass_check(workload, platform, monkeypatch, after, **kw)


def small_platform() -> Platform:
    return Platform(
        (
            NodeGroup("a", count=3, cores=4, memory=3 * GIB),
            NodeGroup("b", count=2, cores=8, memory=6 * GIB),
        ),
        (Partition("all", ("a", "b"), sharing="shared"),),
    )


@pytest.mark.parametrize("policy", ["fcfs", "sjf"])
def test_kept_capacities_are_the_full_sums_after_every_pass(policy: str, monkeypatch: Any) -> None:
    platform = small_platform()
    checked = 0
    for seed in range(4):
        n, _ = run_checked(
            memory_workload(platform, seed, 200), platform, monkeypatch,
            allocation="first-fit", policy=policy,
        )  # fmt: skip
        checked += n
    assert checked > 50


def test_capacities_come_from_the_log() -> None:
    """Most capacities are brought up to date from the log, not summed again."""
    platform = small_platform()
    logged = full = 0
    for seed in range(4):
        workload = burst_workload(platform, seed, 300)
        python, per_pass, whole = whole_tests.three(workload, platform, "first-fit")
        whole_tests.assert_same_run(python, whole)
        whole_tests.assert_same_run(python, per_pass)
        meta = per_pass.engine.strategy._compiled.meta
        full += int(meta[kn.M_CAP_FULL])
        logged += int(meta[kn.M_CAPACITIES] - meta[kn.M_CAP_FULL])
    assert logged > full > 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_logged_capacities_give_the_python_schedule(data: Any) -> None:
    platform = data.draw(shared_platforms(4, (2 * GIB, 3 * GIB, 6 * GIB), 3))
    seed = data.draw(st.integers(0, 2**32 - 1))
    n = data.draw(st.integers(40, 200))
    allocation = data.draw(st.sampled_from(COVERED))
    workload = data.draw(st.sampled_from((memory_workload, burst_workload)))(platform, seed, n)
    python, per_pass, whole = whole_tests.three(workload, platform, allocation)
    whole_tests.assert_same_run(python, whole)
    whole_tests.assert_same_run(python, per_pass)


@settings(max_examples=300, deadline=None)
@given(
    cores=st.integers(-4, 64),
    memory=st.one_of(st.integers(-(2**40), 2**40), st.integers(-8, 64)),
    mpc=st.one_of(st.integers(0, 2**36), st.integers(0, 9)),
)
def test_gives_is_the_plain_formula(cores: int, memory: int, mpc: int) -> None:
    """``_gives`` (no division for a node short of one core's memory, an unsigned
    one otherwise) is ``min(cores, memory // mpc)``, and 0 for a node giving none."""
    want = max(gives(cores, memory, mpc), 0)
    assert kn._gives(cores, memory, mpc) == want


@pytest.mark.parametrize("seed", range(3))
def test_first_fit_from_snap_over_blocks_of_nodes(seed: int, monkeypatch: Any) -> None:
    """Platforms of several blocks of ``SNAP_BLOCK`` nodes (blocks skipped by the
    first fit from ``snap``): the Python pass's schedule, ``snap`` checked after
    every pass."""
    platform = Platform(
        (
            NodeGroup("a", count=40, cores=4, memory=3 * GIB),
            NodeGroup("b", count=33, cores=8, memory=6 * GIB),
        ),
        (Partition("all", ("a", "b"), sharing="shared"),),
    )
    workload = memory_workload(platform, seed, 400)
    python, _, whole = whole_tests.three(workload, platform, "first-fit")
    whole_tests.assert_same_run(python, whole)
    checked, per_pass = run_checked(workload, platform, monkeypatch, allocation="first-fit")
    whole_tests.assert_same_run(python, per_pass)
    assert checked > 50
