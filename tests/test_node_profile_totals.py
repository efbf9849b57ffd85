"""The node profile's per-slice totals, the screen before every per-node window
in node-level conservative backfilling: the free amounts summed over the nodes,
each node counted from zero (a node over-committed by a prediction correction
gives nothing, so its negative free amount must not hide the others' room).
Checked on random sequences of additions for the Python profile
(:class:`schedlab.sim.NodeProfile`) and for the compiled pass's profile
(:mod:`schedlab.policies.backfill.conservative_nodes_kernels`), which must keep
the same slices, totals and per-node amounts."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.sim import NodeProfile
from schedlab.sim.resources import Allocation


def alloc(nodes: list[int], amounts: list[list[int]]) -> Allocation:
    return Allocation(np.array(nodes, dtype=np.int64), np.array(amounts, dtype=np.int64))


def clamped_totals(profile: NodeProfile) -> list[list[int]]:
    return np.maximum(profile.free, 0).sum(axis=1).tolist()


Addition = tuple[float, float, list[int], list[list[int]], int]


@st.composite
def additions(draw: Any) -> tuple[np.ndarray, list[Addition]]:
    """A machine's free amounts and additions that may over-commit its nodes."""
    nodes = draw(st.integers(1, 5))
    dims = draw(st.integers(1, 3))
    free = np.array(
        [[draw(st.integers(0, 6)) for _ in range(dims)] for _ in range(nodes)], dtype=np.int64
    )
    ops = []
    for _ in range(draw(st.integers(1, 12))):
        start = float(draw(st.integers(0, 20)))
        end = draw(st.one_of(st.just(math.inf), st.integers(0, 30).map(float)))
        chosen = sorted(draw(st.sets(st.integers(0, nodes - 1), min_size=1)))
        amounts = [[draw(st.integers(0, 5)) for _ in range(dims)] for _ in chosen]
        ops.append((start, end, chosen, amounts, draw(st.sampled_from([-1, -1, 1]))))
    return free, ops


@settings(max_examples=200, deadline=None)
@given(additions())
def test_python_totals_count_each_node_from_zero(case: Any) -> None:
    free, ops = case
    profile = NodeProfile(free, 0.0)
    for start, end, nodes, amounts, sign in ops:
        profile.add(start, end, alloc(nodes, amounts), sign)
        assert profile.totals == clamped_totals(profile)


def kernel_values(kn: Any, arrays: dict[str, np.ndarray], node: int, t: float) -> list[int]:
    """``node``'s free amounts at ``t`` in the kernel's timeline (a plain walk)."""
    e_time, e_link, e_val = arrays["e_time"], arrays["e_link"], arrays["e_val"]
    p = node
    q = e_link[0, p]
    while q != -1 and e_time[q] <= t:
        p = q
        q = e_link[0, q]
    return e_val[p].tolist()


@settings(max_examples=200, deadline=None)
@given(additions())
def test_the_compiled_profile_keeps_the_same_slices_totals_and_amounts(case: Any) -> None:
    pytest.importorskip("numba")
    from schedlab.policies.backfill import conservative_nodes_kernels as kn

    free, ops = case
    nodes, dims = free.shape
    profile = NodeProfile(free, 0.0)
    size = 4 * len(ops) + 4
    a = {
        "meta": np.zeros(kn.N_META, dtype=np.int64),
        "times": np.zeros(size, dtype=np.float64),
        "tot": np.zeros((size, dims + 1), dtype=np.int64),
        "e_time": np.zeros(nodes * size, dtype=np.float64),
        "e_link": np.zeros((3, nodes * size), dtype=np.int64),
        "e_val": np.zeros((nodes * size, dims), dtype=np.int64),
    }
    args = (a["meta"], a["times"], a["tot"], a["e_time"], a["e_link"], a["e_val"])
    kn._reset(*args, free, 0.0)
    for start, end, chosen, amounts, sign in ops:
        profile.add(start, end, alloc(chosen, amounts), sign)
        pool_nodes = np.array(chosen, dtype=np.int64)
        pool_amt = np.array(amounts, dtype=np.int64)
        assert kn._add(*args, start, end, pool_nodes, pool_amt, 0, len(chosen), sign)
        n = int(a["meta"][kn.M_SLICES])
        assert a["times"][:n].tolist() == profile.times
        assert a["tot"][:n, :dims].tolist() == profile.totals
        for s, t in enumerate(profile.times):
            for node in range(nodes):
                assert kernel_values(kn, a, node, t) == profile.free[s, node].tolist()


def test_an_over_committed_node_does_not_hide_a_start_from_the_screen() -> None:
    """Node 0 is over-committed by 3 cores over [0, 10) (a reservation planned
    before a running job's estimate was raised); node 1 has 4 cores free from 0.
    A 4-core job fits node 1 at once: summing node 0's -3 would make the total 1
    and skip that start for the one at 10."""
    profile = NodeProfile(np.array([[0], [4]], dtype=np.int64), 0.0)
    profile.add(0.0, 10.0, alloc([0], [[3]]))
    assert profile.free[0].tolist() == [[-3], [4]]
    assert profile.totals[0] == [4]

    def first_fit(window: np.ndarray) -> Allocation | None:
        for node in range(len(window)):
            if window[node, 0] >= 4:
                return alloc([node], [[4]])
        return None

    t, got = profile.earliest(first_fit, 5.0, need=[4])
    assert t == 0.0 and got.nodes.tolist() == [1]
    # Giving the over-committed amounts back restores the plain sums.
    profile.add(0.0, 10.0, alloc([0], [[3]]), +1)
    assert profile.totals == clamped_totals(profile) == [[4], [4]]
