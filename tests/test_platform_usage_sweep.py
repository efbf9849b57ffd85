"""The machine usage statistics of a node-level run (:func:`schedlab.sim.usage.
machine_usage`) against the plain formulas they were first written with (float64
event columns): the same numbers, bit for bit, on random schedules with equal
instants, zero run times and jobs waiting at the start and the end."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.platform import NodeGroup, Partition, Platform
from schedlab.sim import NodeMachine
from schedlab.sim.usage import machine_usage
from schedlab.sim.whole_run import AllocationColumns


def plain_idle_while_waiting(
    capacity: float, held: np.ndarray, submit: np.ndarray, start: np.ndarray, end: np.ndarray
) -> float | None:
    """The share of core-time free while a job waits, with float64 columns (unknown,
    ``None``, for a run of zero length: audit pmetrics)."""
    n = len(start)
    span = float(end.max()) - float(submit.min())
    times = np.concatenate((submit, start, end))
    busy = np.concatenate((np.zeros(n), held, -held))
    waiting = np.concatenate((np.ones(n), -np.ones(n), np.zeros(n)))
    order = np.argsort(times, kind="stable")
    times, busy, waiting = times[order], np.cumsum(busy[order]), np.cumsum(waiting[order])
    idle = (capacity - busy[:-1]) * np.diff(times)
    return float(idle[waiting[:-1] > 0.5].sum() / (capacity * span)) if span > 0 else None


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_idle_while_waiting_is_the_plain_formula(data: Any) -> None:
    platform = Platform(
        (NodeGroup("a", 3, 4, memory=64), NodeGroup("b", 2, 2, memory=32)),
        (Partition("p", ("a",), sharing="shared"), Partition("q", ("b",), sharing="shared")),
    )
    machine = NodeMachine(platform, object())
    n = data.draw(st.integers(1, 40))
    times = st.integers(0, 30).map(float) | st.floats(0, 30, allow_nan=False)
    submit = np.sort(np.array([data.draw(times) for _ in range(n)]))
    start = submit + np.array([data.draw(times) for _ in range(n)])
    end = start + np.array([data.draw(times) for _ in range(n)])
    part = np.array([data.draw(st.integers(0, 1)) for _ in range(n)], dtype=np.int64)
    nodes: list[int] = []
    amounts: list[list[int]] = []
    offset = [0]
    for j in range(n):
        pool = list(machine.partitions[int(part[j])].nodes)
        for node in sorted(data.draw(st.sets(st.sampled_from(pool), min_size=1))):
            nodes.append(node)
            amounts.append([data.draw(st.integers(0, 2)), data.draw(st.integers(0, 9)), 0])
        offset.append(len(nodes))
    machine.given = AllocationColumns(
        np.array(offset, dtype=np.int64),
        np.array(nodes, dtype=np.int64),
        np.array(amounts, dtype=np.int64).reshape(-1, len(machine.dims)),
    )
    held = machine.given.held_sums()[:, 0].astype(np.float64)
    capacity = float(machine.capacity[:, 0].sum())
    expected = plain_idle_while_waiting(capacity, held, submit, start, end)
    for partition_of in (part, part.tolist()):
        usage = machine_usage(machine, partition_of, submit, start, end)
        assert usage["idle_while_waiting"] == expected
        assert usage == machine_usage(machine, part.tolist(), submit, start, end)
