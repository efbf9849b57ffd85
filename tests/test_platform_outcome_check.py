"""The compiled check of a node-level whole run's outcome
(:func:`schedlab.sim.overcommit.outcome_ok`, through
:func:`schedlab.sim.whole_run.check_node_outcome`): on random outcomes, valid and
broken in every way the engine refuses (never started, started before its
submission, processors over the machine, no rows, nodes out of range, repeated,
descending or outside the partition, negative amounts, short of cores, a node
over-committed in any dimension, zero and negative run times, equal instants),
it accepts exactly what a plain reference accepts, and ``check_node_outcome``
raises exactly the error of the numpy checks (``check_outcome`` then
``check_allocations``); a real run takes the compiled answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.platform import NodeGroup, Partition, Platform
from schedlab.sim import StrategyError, WholeRun, WholeRunOutcome

pytest.importorskip("numba")

import schedlab.sim.whole_run as whole_run_module
from schedlab.sim import NodeMachine
from schedlab.sim.overcommit import outcome_ok

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "swf"


def plain_ok(plan: WholeRun, outcome: WholeRunOutcome) -> bool:
    """What the engine accepts, written out job by job and event by event."""
    machine = plan.machine
    capacity = machine.capacity
    n = len(plan.submit)
    start = outcome.start
    off = outcome.node_offset
    for j in range(n):
        if not start[j] >= plan.submit[j]:
            return False
    for j in range(n):
        rows = range(off[j], off[j + 1])
        if not len(rows):
            return False
        chosen = [int(outcome.nodes[r]) for r in rows]
        if any(not 0 <= node < len(capacity) for node in chosen):
            return False
        part = machine.partitions[int(plan.partition_of[j])]
        if any(node not in part.nodes for node in chosen):
            return False
        if chosen != sorted(set(chosen)):
            return False
        if any((outcome.amounts[r] < 0).any() for r in rows):
            return False
        if sum(int(outcome.amounts[r][0]) for r in rows) < plan.size[j]:
            return False
    events = []
    for j in range(n):
        s = float(start[j])
        events.append((s + float(plan.run_time[j]), 0, j))  # ends first
        events.append((s, 1, j))
    procs = 0
    used = np.zeros_like(capacity)
    for _, kind, j in sorted(events):
        sign = 1 if kind else -1
        procs += sign * int(plan.size[j])
        if procs > plan.procs:
            return False
        for r in range(off[j], off[j + 1]):
            used[outcome.nodes[r]] += sign * outcome.amounts[r]
            if (used[outcome.nodes[r]] > capacity[outcome.nodes[r]]).any():
                return False
    return True


def random_outcome(data: Any, partitions: int) -> tuple[WholeRun, WholeRunOutcome]:
    """Jobs at random times (equal instants, zero run times) on random node
    lists with random amounts, on nodes of unequal capacities in one partition
    of every node or two partitions of some, with at most one fault of one job
    (a missing or early start, a negative run time, no rows, a repeated,
    swapped or out-of-range node, a node outside its partition, a negative
    amount, a core short), so that each fault alone decides some examples."""
    if partitions == 1:
        parts: tuple[Partition, ...] = (Partition("p", ("a", "b"), sharing="shared"),)
    else:
        parts = (
            Partition("p", ("a",), sharing="shared"),
            Partition("q", ("b",), sharing="shared"),
        )
    platform = Platform(
        (NodeGroup("a", 2, 4, memory=4, gpus=1), NodeGroup("b", 2, 2, memory=8)), parts
    )
    machine = NodeMachine(platform, object())
    n = data.draw(st.integers(1, 6))
    faults = ["start", "run", "empty", "repeat", "swap", "range", "negative", "cores"]
    if partitions > 1:
        faults.append("partition")
    fault = data.draw(st.sampled_from(["none", *faults]))
    bad = data.draw(st.integers(0, n - 1))
    submit = np.array([data.draw(st.integers(0, 3)) for _ in range(n)], dtype=np.float64)
    start = submit + np.array([data.draw(st.integers(0, 6)) for _ in range(n)], dtype=np.float64)
    if fault == "start":
        start[bad] = data.draw(st.sampled_from([np.nan, submit[bad] - 1]))
    run = np.array([data.draw(st.integers(0, 4)) for _ in range(n)], dtype=np.float64)
    if fault == "run":
        run[bad] = -data.draw(st.integers(1, 3))
    part_of = np.array([data.draw(st.integers(0, partitions - 1)) for _ in range(n)], np.int64)
    nodes: list[int] = []
    amounts: list[list[int]] = []
    offset = [0]
    size = []
    for j in range(n):
        faulty = j == bad
        pool = list(machine.partitions[part_of[j]].nodes)
        if faulty and fault == "partition":
            pool = [node for node in range(4) if node not in pool]
        chosen = sorted(data.draw(st.sets(st.sampled_from(pool), min_size=1, max_size=3)))
        if faulty and fault == "empty":
            chosen = []
        elif faulty and fault == "repeat":
            chosen = [*chosen, chosen[-1]]
        elif faulty and fault == "swap" and len(chosen) > 1:
            chosen[0], chosen[1] = chosen[1], chosen[0]
        elif faulty and fault == "range":
            chosen[-1] = data.draw(st.sampled_from([-1, 4, 7]))
        for node in chosen:
            nodes.append(node)
            amounts.append([data.draw(st.integers(1, 2)), data.draw(st.integers(0, 3)),
                            data.draw(st.integers(0, 1))])  # fmt: skip
        if faulty and fault == "negative" and chosen:
            amounts[-1][data.draw(st.integers(0, 2))] = -1
        offset.append(len(nodes))
        held = sum(a[0] for a in amounts[offset[j] : offset[j + 1]])
        size.append(max(0, held - data.draw(st.integers(0, 1))) + (faulty and fault == "cores"))
    plan = WholeRun(
        procs=data.draw(st.integers(4, 12)), submit=submit, size=np.array(size, dtype=np.int64),
        run_time=run, estimate=np.abs(run) + 1, key=np.zeros(n), strategy_name="random",
        machine=machine, partition_of=part_of,
    )  # fmt: skip
    outcome = WholeRunOutcome(
        start=start, passes=1, node_offset=np.array(offset, dtype=np.int64),
        nodes=np.array(nodes, dtype=np.int64),
        amounts=np.array(amounts, dtype=np.int64).reshape(-1, 3),
    )  # fmt: skip
    return plan, outcome


def numpy_error(plan: WholeRun, outcome: WholeRunOutcome) -> str | None:
    """The numpy checks alone (no compiled sweep): the error they raise."""
    with mock.patch.object(whole_run_module, "_compiled_sweep", lambda: None):
        try:
            whole_run_module.check_outcome(plan, outcome, list(range(1, len(plan.submit) + 1)))
            whole_run_module.check_allocations(
                plan, outcome, list(range(1, len(plan.submit) + 1))
            )
        except StrategyError as exc:
            return str(exc)
    return None


@pytest.mark.parametrize("partitions", [1, 2])
@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_the_compiled_check_accepts_exactly_what_the_engine_accepts(
    partitions: int, data: Any
) -> None:
    plan, outcome = random_outcome(data, partitions)
    expected = plain_ok(plan, outcome)
    args = whole_run_module._outcome_ok_args(plan, outcome)
    assert args is not None
    assert bool(outcome_ok(*args)) is expected
    error = numpy_error(plan, outcome)
    assert (error is None) is expected  # the plain reference is the numpy checks'
    try:
        whole_run_module.check_node_outcome(plan, outcome, list(range(1, len(plan.submit) + 1)))
    except StrategyError as exc:
        assert str(exc) == error
    else:
        assert error is None


def test_columns_of_other_types_go_to_the_numpy_checks() -> None:
    """Columns the compiled check does not take (lists, other dtypes, wrong
    shapes) are checked by numpy alone, with its errors."""
    platform = Platform(
        (NodeGroup("a", 2, 4, memory=4),), (Partition("p", ("a",), sharing="shared"),)
    )
    machine = NodeMachine(platform, object())
    dims = len(machine.dims)
    plan = WholeRun(
        procs=8, submit=np.zeros(2), size=np.array([2, 2]), run_time=np.ones(2),
        estimate=np.ones(2), key=np.zeros(2), machine=machine,
        partition_of=np.zeros(2, dtype=np.int64),
    )  # fmt: skip
    good = WholeRunOutcome(
        start=np.zeros(2), passes=1, node_offset=np.array([0, 1, 2]),
        nodes=np.array([0, 0]), amounts=np.array([[2, 1] + [0] * (dims - 2)] * 2),
    )  # fmt: skip
    assert whole_run_module._outcome_ok_args(plan, good) is not None
    for changed in (
        {"nodes": np.array([0, 0], dtype=np.int32)},
        {"start": [0.0, 0.0]},
        {"node_offset": np.array([0, 1, 2, 2])},
        {"amounts": np.array([[2, 1] + [0] * (dims - 1)] * 2)},
        {"amounts": np.array([[2, 1] + [0] * (dims - 2)] * 2, dtype=np.float64)},
    ):
        columns: dict[str, Any] = {
            "start": good.start, "node_offset": good.node_offset, "nodes": good.nodes,
            "amounts": good.amounts, **changed,
        }  # fmt: skip
        other = WholeRunOutcome(passes=1, **columns)
        assert whole_run_module._outcome_ok_args(plan, other) is None
    whole_run_module.check_node_outcome(plan, good, [1, 2])
    over = WholeRunOutcome(
        start=np.zeros(2), passes=1, node_offset=np.array([0, 1, 2]),
        nodes=np.array([0, 0]),
        amounts=np.array([[3, 1] + [0] * (dims - 2), [2, 1] + [0] * (dims - 2)]),
    )  # fmt: skip
    with pytest.raises(StrategyError, match=r"job 2 \(index 1\) over-committed node index 0"):
        whole_run_module.check_node_outcome(plan, over, [1, 2])


def test_a_whole_run_takes_the_compiled_answer() -> None:
    """On the first RICC jobs cut into nodes, the engine's check is answered by
    the compiled pass: the numpy checks never run."""
    w = schedlab.read(DATA / "RICC-2010-2.swf.gz")
    cols = w.to_arrays()
    w = schedlab.Workload(w.header, columns=cols.take(np.arange(3000)))
    platform = Platform(
        (NodeGroup("node", 1024, 8, memory=12 * 2**30),),
        (Partition("all", ("node",), sharing="shared"),),
    )
    calls: list[str] = []
    real_ok = whole_run_module._compiled_check()
    assert real_ok is not None

    def counted(*args: Any) -> bool:
        calls.append("compiled")
        return bool(real_ok(*args))

    def refused(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the numpy check ran")

    with (
        mock.patch.object(whole_run_module, "_compiled_check", lambda: counted),
        mock.patch.object(whole_run_module, "check_outcome", refused),
        mock.patch.object(whole_run_module, "check_allocations", refused),
    ):
        result = schedlab.simulate(
            w, backfill="easy", platform=platform, backfill_options={"kernel": "compiled"},
            progress=False,
        )  # fmt: skip
    assert result.stats["whole_run"] is True
    assert calls == ["compiled"]
