"""The node lists and held amounts of a platform run, built for all jobs at once
(core/sim/allocation_text.py), against the per-job formulas they replace (each
job's ``Allocation``: its node names, its amounts summed over its nodes), for
the machine's mapping and for a whole run's allocation columns."""

from __future__ import annotations

from operator import itemgetter
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.sim.allocation_text import held_texts, node_lists
from schedlab.sim.resources import Allocation
from schedlab.sim.whole_run import AllocationColumns


def plain_node_list(names: list[str], alloc: Allocation) -> tuple[str, ...]:
    nodes = alloc.nodes.tolist()
    if len(nodes) == 1:
        return (names[nodes[0]],)
    return itemgetter(*nodes)(names)  # type: ignore[no-any-return]


def plain_held(dims: tuple[str, ...], alloc: Allocation) -> str:
    sums = alloc.amounts.sum(axis=0).tolist()
    return " ".join(f"{d}={int(v)}" for d, v in zip(dims, sums, strict=True))


@st.composite
def runs(draw: Any) -> tuple[list[str], tuple[str, ...], dict[int, Allocation]]:
    machine_nodes = draw(st.integers(1, 12))
    names = [f"n{draw(st.sampled_from(['a', 'b']))}[{i}]" for i in range(machine_nodes)]
    dims = ("cores", "memory", "gpus", *draw(st.sampled_from([(), ("licence",)])))
    dtype = draw(st.sampled_from([np.int64, np.int32, np.float64]))
    given_: dict[int, Allocation] = {}
    for j in range(draw(st.integers(0, 20))):
        nodes = sorted(draw(st.sets(st.integers(0, machine_nodes - 1), min_size=1)))
        amounts = [[draw(st.sampled_from([0, 1, 3, 2**30])) for _ in dims] for _ in nodes]
        given_[j] = Allocation(np.array(nodes, np.int64), np.array(amounts, dtype=dtype))
    return names, dims, given_


@settings(max_examples=200, deadline=None)
@given(run=runs())
def test_texts_match_the_per_job_formulas(run: Any) -> None:
    names, dims, allocs = run
    n = len(allocs)
    want_nodes = [plain_node_list(names, allocs[j]) for j in range(n)]
    want_held = [plain_held(dims, allocs[j]) for j in range(n)]
    assert node_lists(allocs, names, n) == want_nodes
    assert held_texts(allocs, dims, n) == want_held
    if n and all(a.amounts.dtype == allocs[0].amounts.dtype for a in allocs.values()):
        offset = np.zeros(n + 1, np.int64)
        np.cumsum([len(allocs[j].nodes) for j in range(n)], out=offset[1:])
        columns = AllocationColumns(
            offset,
            np.concatenate([allocs[j].nodes for j in range(n)]),
            np.concatenate([allocs[j].amounts for j in range(n)]),
        )
        assert node_lists(columns, names, n) == want_nodes
        assert held_texts(columns, dims, n) == want_held
        # The columns' sums, computed once and shared (held texts, machine usage).
        sums = columns.held_sums()
        assert not sums.flags.writeable and columns.held_sums() is sums
        for j in range(n):
            assert sums[j].tolist() == allocs[j].amounts.sum(axis=0).astype(np.int64).tolist()
        assert held_texts(columns, dims, n) == want_held
