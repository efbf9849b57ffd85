"""The column-wise requests (core/sim/requests_columns.py) against the row-by-row
reading of the rules (``Requests.fill_by_rows``) on random workloads and
platforms: same partition, reasons, masks and demands (one shared object per
distinct request, as the row-by-row reading shares them), and the same error for a
bad ``request.*`` value."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import schedlab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedlab.errors import SimulationError
from schedlab.model import JobColumns
from schedlab.platform import NodeGroup, Partition, Platform
from schedlab.sim.machine import NodeMachine
from schedlab.sim.requests import Requests
from schedlab.sim.requests_columns import fill_by_columns

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
NAMES = ("batch", "debug", "gpu", "7", "long")


class FirstFit:
    """Ascending node index (the built-in first-fit's order)."""

    def allocate(self, view: Any, demand: Any) -> Any:
        return view.take(demand, view.nodes[view.usable(demand)])


@st.composite
def platforms(draw: Any) -> Platform:
    groups = []
    for g in range(draw(st.integers(1, 3))):
        groups.append(
            NodeGroup(
                f"g{g}",
                count=draw(st.integers(1, 4)),
                cores=draw(st.integers(1, 8)),
                memory=draw(st.sampled_from([None, 2**30, 2**33])),
                gpus=draw(st.integers(0, 2)),
                consumables=draw(st.sampled_from([{}, {"licence": 3}])),
            )
        )
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
    parts = []
    used: set[str] = set()  # a queue maps to one partition (check_limits refuses more)
    for name in names:
        chosen = draw(st.lists(st.sampled_from([g.name for g in groups]), min_size=1, unique=True))
        queues = [
            q
            for q in draw(st.lists(st.sampled_from(["1", "2", "q3"]), max_size=2, unique=True))
            if q not in used
        ]
        used.update(queues)
        parts.append(
            Partition(
                name,
                tuple(chosen),
                max_time=draw(st.sampled_from([None, 100, 1000])),
                max_nodes=draw(st.sampled_from([None, 0, 1, 2, 5])),
                queues=tuple(queues),
                sharing=draw(st.sampled_from(["shared", "exclusive"])),
            )
        )
    return Platform(tuple(groups), tuple(parts))


AMOUNTS = st.one_of(
    st.none(),
    st.integers(0, 20),
    st.floats(0, 40, allow_nan=False),
    st.sampled_from([2**31, 2**61, 1e30, "3", 2.5]),
)
BAD = st.sampled_from([-1, "x", math.inf, math.nan, [1]])
#: Node counts: whole numbers only (a fraction is an error, see AMOUNTS with ``bad``).
NODE_COUNTS = st.one_of(
    st.none(),
    st.integers(0, 20),
    st.integers(0, 40).map(float),
    st.sampled_from([2**31, 2**61, 1e30, "3"]),
)


@st.composite
def workloads(draw: Any, bad: bool = False) -> schedlab.Workload:
    jobs = []
    n = draw(st.integers(0, 25))
    for i in range(n):
        extras: dict[str, Any] = {}
        for key, values in (
            ("request.partition", st.sampled_from([*NAMES, "nowhere", 7])),
            ("request.nodes", AMOUNTS if bad else NODE_COUNTS),
            ("request.memory", AMOUNTS),
            ("request.gpus", AMOUNTS),
            ("request.licence", AMOUNTS),
        ):
            if draw(st.booleans()):
                value = draw(values)
                if value is not None:
                    extras[key] = value
        if bad and draw(st.integers(0, 4)) == 0:
            extras[draw(st.sampled_from(["request.nodes", "request.memory", "request.gpus"]))] = (
                draw(BAD)
            )
        jobs.append(
            schedlab.Job(
                job_number=i + 1,
                submit_time=float(i),
                wait_time=0.0,
                run_time=10.0,
                requested_processors=draw(st.sampled_from([None, 0, 1, 2, 3, 8, 17, 40])),
                allocated_processors=draw(st.sampled_from([None, 1, 4])),
                requested_time=draw(st.sampled_from([None, 50.0, 500.0, 5000.0])),
                requested_memory=draw(st.sampled_from([None, -1.0, 0.0, 1000.0, 2.5e6, 1e300])),
                queue_number=draw(st.sampled_from([None, 1, 2, 3, 9])),
                partition_number=draw(st.sampled_from([None, 1, 2, 4])),
                nodes=draw(st.sampled_from([None, 0, 1, 2, 3, 10])),
                extras=extras,
            )
        )
    w = schedlab.Workload.from_jobs(jobs)
    if draw(st.booleans()):
        w.header.set_names("Queue", {1: "batch", 3: "q3", 9: "unmapped"})
    if draw(st.booleans()):
        w.header.set_names("Partition", {1: "debug", 2: "gpu", 4: "absent"})
    return w


def _sizes(w: schedlab.Workload) -> np.ndarray:
    cols = w.to_arrays()
    req, alloc = cols["requested_processors"], cols["allocated_processors"]
    with np.errstate(invalid="ignore"):
        size = np.ceil(np.where(req > 0, req, alloc))
    return np.where(size > 0, size, np.nan)


def _by_rows(w: schedlab.Workload, machine: NodeMachine) -> Requests:
    plain = Requests.__new__(Requests)
    plain.reset(len(w), machine)
    plain.fill_by_rows(w, w.to_arrays(), _sizes(w))
    return plain


def _same(a: Requests, b: Requests) -> None:
    assert a.partition.tolist() == b.partition.tolist()
    for reason in b.reasons:
        assert a.reasons[reason].tolist() == b.reasons[reason].tolist(), reason
    assert a.defaulted_mask.tolist() == b.defaulted_mask.tolist()
    assert a.memory_unknown_mask.tolist() == b.memory_unknown_mask.tolist()
    pairs: dict[int, int] = {}
    back: dict[int, int] = {}
    for x, y in zip(a.demand, b.demand, strict=True):
        assert (x is None) == (y is None)
        if x is None or y is None:
            continue
        assert x.total.tolist() == y.total.tolist() and x.total.dtype == y.total.dtype
        assert type(x.memory_per_core) is type(y.memory_per_core)
        assert (x.memory_per_core, x.nodes, x.max_nodes) == (
            y.memory_per_core,
            y.nodes,
            y.max_nodes,
        )
        assert (None if x.chunk is None else x.chunk.tolist()) == (
            None if y.chunk is None else y.chunk.tolist()
        )
        # one object per distinct request, in both
        assert pairs.setdefault(id(x), id(y)) == id(y)
        assert back.setdefault(id(y), id(x)) == id(x)


@SETTINGS
@given(data=st.data())
def test_columns_decide_as_rows_do(data: Any) -> None:
    platform = data.draw(platforms())
    w = data.draw(workloads())
    machine = NodeMachine(platform, FirstFit())
    plain = _by_rows(w, machine)
    fast = Requests.__new__(Requests)
    fast.reset(len(w), machine)
    if fill_by_columns(fast, w, w.to_arrays(), _sizes(w)):
        _same(fast, plain)
    _same(Requests(w, w.to_arrays(), machine, _sizes(w)), plain)


@SETTINGS
@given(data=st.data())
def test_bad_requests_fail_as_rows_do(data: Any) -> None:
    platform = data.draw(platforms())
    w = data.draw(workloads(bad=True))
    machine = NodeMachine(platform, FirstFit())
    try:
        plain = _by_rows(w, machine)
    except (SimulationError, OverflowError) as exc:
        with pytest.raises(type(exc)) as got:
            Requests(w, w.to_arrays(), machine, _sizes(w))
        assert str(got.value) == str(exc)
    else:
        _same(Requests(w, w.to_arrays(), machine, _sizes(w)), plain)


def test_column_workloads_without_extras_decide_as_rows_do() -> None:
    rng = np.random.default_rng(14)
    n = 3000
    matrix = np.full((n, 18), -1.0)
    matrix[:, 0] = np.arange(1, n + 1)
    matrix[:, 1] = np.arange(n)
    matrix[:, 3] = 10
    matrix[:, 7] = rng.integers(1, 64, n)
    matrix[:, 8] = rng.choice([-1, 100, 5000], n)
    matrix[:, 9] = rng.choice([-1, 1000, 3e6], n)
    matrix[:, 14] = rng.choice([-1, 1, 2], n)
    matrix[:, 15] = rng.choice([-1, 1, 2], n)
    w = schedlab.Workload.from_arrays(JobColumns.from_matrix(matrix))
    platform = Platform(
        (NodeGroup("n", 16, 8, memory=2**34),),
        (Partition("a", ("n",), max_time=1000), Partition("b", ("n",), queues=("2",))),
    )
    machine = NodeMachine(platform, FirstFit())
    fast = Requests.__new__(Requests)
    fast.reset(n, machine)
    assert fill_by_columns(fast, w, w.to_arrays(), _sizes(w))
    _same(fast, _by_rows(w, machine))
