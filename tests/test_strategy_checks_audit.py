"""Fixes of the third-party audit 2 (/tmp/audits/thirdparty2/REPORT.md), the
simulator's checks on strategies and allocation policies:

1. ``state.start(job, allocation)`` refuses an allocation that does not place
   exactly the job's demand (another job's allocation, cores, memory, GPUs or
   consumables off, the wrong node count, part of an exclusive node);
3. ``state.start`` of a job not submitted yet, or of something that is not a job
   index, is the one-line ``StrategyError``, also through ``check_backfill`` and the
   stepping ``schedlab.Simulation``;
4. ``check_backfill`` failures the simulator itself catches carry the seed, the
   configuration and a reproduction;
11. an allocation policy's answer must hold exactly the demand (no extra cores on
    a shared node).
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from schedlab import AllocationSpec, BackfillSpec, hookimpl
from schedlab.errors import SimulationError
from schedlab.model import Job, Workload
from schedlab.platform import platform_from_dict
from schedlab.sim.resources import Allocation, take
from schedlab.sim.state import StrategyError
from schedlab.testing import (
    check_backfill,
    plugin_registry,
    run_cli,
    using_registry,
    workload_from_rows,
)

MIB = 2**20


def _platform(sharing: str = "shared", max_nodes: int | None = None, count: int = 4) -> Any:
    partition: dict[str, Any] = {"nodes": ["n"]}
    if max_nodes is not None:
        partition["max_nodes"] = max_nodes
    return platform_from_dict(
        {
            "platform": {"sharing": sharing},
            "node_groups": {
                "n": {
                    "count": count,
                    "cores": 8,
                    "memory": "64MiB",
                    "gpus": 2,
                    "consumables": {"lic": 2},
                }
            },
            "partitions": {"batch": partition},
        }
    )


def _jobs(*specs: dict[str, Any]) -> Workload:
    """Jobs at t=0 of 100 s; each spec gives ``cores`` and optional ``nodes``,
    ``gpus``, ``lic``, ``mem_kb`` (requested memory per processor)."""
    jobs = []
    for i, spec in enumerate(specs):
        extras: dict[str, Any] = {}
        if spec.get("gpus"):
            extras["request.gpus"] = spec["gpus"]
        if spec.get("lic"):
            extras["request.lic"] = spec["lic"]
        if spec.get("nodes"):
            extras["request.nodes"] = spec["nodes"]
        jobs.append(
            Job(
                job_number=i + 1,
                submit_time=0,
                run_time=100,
                requested_processors=spec["cores"],
                requested_time=100,
                requested_memory=spec.get("mem_kb"),
                extras=extras,
            )
        )
    return Workload.from_jobs(jobs)


Mutation = Callable[[Allocation], Any]


class Tamper:
    """Starts each waiting job with the allocation policy's choice for it, passed
    through ``mutate`` first (the identity: a correct strategy)."""

    name = "tamper"
    supports_platform = True

    def __init__(self, mutate: Mutation = lambda a: a) -> None:
        self.mutate = mutate

    def bind(self, state: Any) -> None:
        self.state = state

    def schedule(self, now: float) -> None:
        state = self.state
        for _, job in list(state.queue):
            alloc = state.allocation_for(job)
            if alloc is not None:
                state.start(job, self.mutate(alloc))


def _add(alloc: Allocation, row: int, dim: int, delta: int) -> Allocation:
    amounts = np.array(alloc.amounts, copy=True)
    amounts[row, dim] += delta
    return Allocation(np.array(alloc.nodes, copy=True), amounts)


def _with_row(alloc: Allocation, row: list[int]) -> Allocation:
    """``alloc`` plus a row on the next node (assumed free)."""
    node = int(alloc.nodes[-1]) + 1
    nodes = np.append(alloc.nodes, node)
    amounts = np.vstack([alloc.amounts, np.array(row, dtype=np.int64)])
    return Allocation(nodes, amounts)


def _split(alloc: Allocation) -> Allocation:
    """One node's flexible allocation split over two nodes: half the cores (and
    their memory) on the next node, the GPUs and licences left where they were."""
    (node,) = alloc.nodes.tolist()
    row = alloc.amounts[0].copy()
    half = int(row[0]) // 2
    mpc = int(row[1]) // int(row[0])
    first = row.copy()
    first[0] -= half
    first[1] -= half * mpc
    second = np.zeros_like(row)
    second[0] = half
    second[1] = half * mpc
    return Allocation(np.array([node, node + 1]), np.vstack([first, second]))


def _run(workload: Workload, platform: Any, mutate: Mutation) -> Any:
    return schedlab.simulate(workload, platform=platform, backfill=Tamper(mutate), progress=False)


FLEX = {"cores": 4, "gpus": 1, "lic": 1, "mem_kb": 1024}  # 1 MiB per core

# --------------------------------------------------------------- finding 1


def test_a_correct_strategy_passes_every_dimension() -> None:
    r = _run(_jobs(FLEX, {"cores": 4, "nodes": 2, "gpus": 2}), _platform(), lambda a: a)
    assert r.start.tolist() == [0.0, 0.0]


def test_another_jobs_allocation_is_refused_naming_strategy_job_and_time() -> None:
    """The audit's repro: the 16-core job started with the 1-core job's allocation."""

    class WrongAlloc:
        name = "wrongalloc"
        supports_platform = True

        def bind(self, state: Any) -> None:
            self.state = state

        def schedule(self, now: float) -> None:
            st = self.state
            q = [j for _, j in st.queue]
            if len(q) >= 2:
                small = min(q, key=lambda j: st.size[j])
                big = max(q, key=lambda j: st.size[j])
                a = st.allocation_for(small)
                if a is not None and st.size[big] > st.size[small]:
                    st.start(big, a)
            st.start_from_head()

    w = workload_from_rows([(0, 100, 1, 100), (0, 100, 16, 100)], procs=32)
    plat = platform_from_dict(
        {"node_groups": {"n": {"count": 4, "cores": 8}}, "partitions": {"batch": {"nodes": ["n"]}}}
    )
    with pytest.raises(StrategyError) as info:
        schedlab.simulate(w, platform=plat, backfill=WrongAlloc(), progress=False)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(
        "backfill 'wrongalloc' broke an invariant at t=0: job 2 (index 1) started on an "
        "allocation that does not hold its demand: "
    ), message
    assert message.endswith("cores 8 for 16"), message  # exclusive: whole nodes


@pytest.mark.parametrize(
    ("mutate", "what"),
    [
        (lambda a: _add(a, 0, 0, -1), "cores 3 for 4"),
        (lambda a: _add(a, 0, 0, 1), "cores 5 for 4"),
        (lambda a: _add(a, 0, 1, 1), "memory"),
        (lambda a: _add(a, 0, 1, -MIB), "memory"),
        (lambda a: _add(a, 0, 2, 1), "gpus 2 for 1"),
        (lambda a: _add(a, 0, 2, -1), "gpus 0 for 1"),
        (lambda a: _add(a, 0, 3, 1), "lic 2 for 1"),
        (lambda a: _with_row(a, [0, 0, 0, 0]), "gives it nothing"),
        (lambda a: _with_row(_add(_add(a, 0, 0, 1), 0, 1, MIB), [-1, -MIB, 0, 0]), "negative"),
        (lambda a: Allocation(a.nodes, a.amounts.astype(np.float64)), "whole numbers"),
        (lambda a: Allocation(a.nodes, a.amounts[:, :2].copy()), "shape"),
        (lambda a: [int(n) for n in a.nodes], "not an Allocation"),
    ],
)
def test_a_flexible_allocation_off_in_any_dimension_is_refused(mutate: Mutation, what: str) -> None:
    with pytest.raises(StrategyError) as info:
        _run(_jobs(FLEX), _platform(), mutate)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("backfill 'tamper' broke an invariant at t=0: job 1 (index 0) ")
    assert what in message, message


def test_memory_moved_off_its_cores_is_refused() -> None:
    """The totals are right, but node 2's memory sits without its cores."""

    def move(a: Allocation) -> Allocation:
        split = _split(a)
        amounts = split.amounts.copy()
        amounts[0, 1] += amounts[1, 1]
        amounts[1, 1] = 0
        return Allocation(split.nodes, amounts)

    with pytest.raises(StrategyError, match=r"memory .* per core"):
        _run(_jobs(FLEX), _platform(), move)


def test_a_flexible_job_may_take_its_cores_from_other_nodes() -> None:
    """Not over-strict: another valid placement (cores split over two nodes, each
    with its memory) is accepted, unless the partition's max_nodes forbids it."""
    r = _run(_jobs(FLEX), _platform(), _split)
    assert list(r.allocations) == [("n[0]", "n[1]")]
    with pytest.raises(StrategyError, match=r"2 nodes, over the partition's max_nodes 1"):
        _run(_jobs(FLEX), _platform(max_nodes=1), _split)


@pytest.mark.parametrize(
    ("mutate", "what"),
    [
        (lambda a: Allocation(a.nodes[:1].copy(), a.amounts[:1].copy()), "1 nodes for 2"),
        (lambda a: _with_row(a, list(a.amounts[0])), "3 nodes for 2"),
        (lambda a: _add(_add(a, 0, 0, 1), 1, 0, -1), "node n[0] gets cores 3"),
    ],
)
def test_a_fixed_node_count_and_equal_chunks_are_checked(mutate: Mutation, what: str) -> None:
    with pytest.raises(StrategyError) as info:
        _run(_jobs({"cores": 4, "nodes": 2}), _platform(), mutate)
    assert what in str(info.value), str(info.value)


def test_an_exclusive_node_is_held_whole() -> None:
    def only_the_demand(a: Allocation) -> Allocation:
        amounts = np.zeros_like(a.amounts)
        amounts[0, 0] = 4
        return Allocation(a.nodes, amounts)

    r = _run(_jobs({"cores": 4}), _platform("exclusive"), lambda a: a)
    assert r.start.tolist() == [0.0]
    with pytest.raises(StrategyError, match=r"holds part of node n\[0\] on an exclusive"):
        _run(_jobs({"cores": 4}), _platform("exclusive"), only_the_demand)
    with pytest.raises(StrategyError, match=r"2 nodes for 1"):
        _run(
            _jobs({"cores": 4, "nodes": 1}),
            _platform("exclusive"),
            lambda a: _with_row(a, list(a.amounts[0])),
        )


def test_builtin_strategies_and_policies_pass_the_check() -> None:
    w = _jobs(FLEX, {"cores": 12, "mem_kb": 2048}, {"cores": 4, "nodes": 2, "gpus": 2}, FLEX)
    for sharing in ("shared", "exclusive"):
        for backfill in ("none", "easy", "conservative"):
            for allocation in ("first-fit", "best-fit", "spread", "contiguous"):
                r = schedlab.simulate(
                    w,
                    platform=_platform(sharing),
                    backfill=backfill,
                    allocation=allocation,
                    progress=False,
                )
                assert len(r) == 4


def _bf_module(name: str, factory: Any) -> types.ModuleType:
    module = types.ModuleType(f"{name.replace('-', '_')}_plugin")
    module.schedlab_backfills = hookimpl(  # type: ignore[attr-defined]
        lambda: [BackfillSpec(name=name, factory=factory)]
    )
    return module


def test_the_command_line_gives_one_line_and_exit_2(tmp_path: Path, capsys: Any) -> None:
    trace = tmp_path / "t.swf"
    schedlab.write(_jobs(FLEX), trace)
    plat = tmp_path / "p.toml"
    plat.write_text(
        '[node_groups.n]\ncount = 4\ncores = 8\nmemory = "64MiB"\ngpus = 2\n'
        'consumables = { lic = 2 }\n[partitions.batch]\nnodes = ["n"]\n'
    )

    def make() -> Tamper:
        return Tamper(lambda a: _add(a, 0, 0, 1))

    with using_registry(plugin_registry(_bf_module("tamper", make))):
        code, _, err = run_cli(
            capsys, "simulate", str(trace), "--platform", str(plat), "-b", "tamper"
        )
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith(
        "schedlab: error: backfill 'tamper' broke an invariant at t=0: job 1 (index 0)"
    ), lines


# --------------------------------------------------------------- finding 3


class Early:
    """Starts the first job not submitted yet."""

    name = "early"

    def bind(self, state: Any) -> None:
        self.state = state

    def schedule(self, now: float) -> None:
        st = self.state
        for j in range(st.n):
            if st.submit[j] > now:
                st.start(j)
                return
        st.start_from_head()


class Odd:
    """Calls ``state.start`` once with ``arg(state)``."""

    name = "odd"

    def __init__(self, arg: Callable[[Any], Any]) -> None:
        self.arg = arg
        self.done = False

    def bind(self, state: Any) -> None:
        self.state = state

    def schedule(self, now: float) -> None:
        if not self.done:
            self.done = True
            self.state.start(self.arg(self.state))
        self.state.start_from_head()


ROWS = [(0, 10, 1, 10), (8, 10, 1, 10), (9, 10, 1, 10)]


def test_starting_a_job_not_submitted_yet_is_the_invariant_error() -> None:
    with pytest.raises(StrategyError) as info:
        schedlab.simulate(workload_from_rows(ROWS, procs=4), backfill=Early(), progress=False)
    assert str(info.value) == (
        "backfill 'early' broke an invariant at t=0: job 2 (index 1) started but it is not "
        "waiting (not submitted yet: it arrives at t=8)"
    )


def test_starting_a_running_job_says_so() -> None:
    class Twice:
        name = "twice"

        def bind(self, state: Any) -> None:
            self.state = state

        def schedule(self, now: float) -> None:
            j = self.state.queue[0][1]
            self.state.start(j)
            self.state.start(j)

    with pytest.raises(
        StrategyError,
        match=r"job 1 \(index 0\) started but it is not waiting "
        r"\(it started at t=0\)",
    ):
        schedlab.simulate(workload_from_rows(ROWS, procs=4), backfill=Twice(), progress=False)


@pytest.mark.parametrize(
    ("arg", "what"),
    [
        (lambda st: True, "True is not a job index"),
        (lambda st: 0.0, "0.0 is not a job index"),
        (lambda st: "0", "'0' is not a job index"),
        (lambda st: None, "None is not a job index"),
        (lambda st: -1, "-1 is not a job index"),
        (lambda st: st.n, "3 is not a job index"),
        (lambda st: 10**30, "is not a job index"),
    ],
)
def test_start_of_something_that_is_not_a_job_is_one_line(
    arg: Callable[[Any], Any], what: str
) -> None:
    with pytest.raises(StrategyError) as info:
        schedlab.simulate(workload_from_rows(ROWS, procs=4), backfill=Odd(arg), progress=False)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("backfill 'odd' broke an invariant at t=0: start(): "), message
    assert what in message and "(job indices run from 0 to 2)" in message, message


def test_a_numpy_integer_is_a_job_index() -> None:
    r = schedlab.simulate(
        workload_from_rows(ROWS, procs=4), backfill=Odd(lambda st: np.int64(0)), progress=False
    )
    assert r.start.tolist() == [0.0, 8.0, 9.0]


def test_is_waiting_of_a_job_not_submitted_yet_is_false() -> None:
    seen: list[bool] = []

    class Ask:
        name = "ask"

        def bind(self, state: Any) -> None:
            self.state = state

        def schedule(self, now: float) -> None:
            if not seen:
                seen.append(self.state.is_waiting(2))
            self.state.start_from_head()

    schedlab.simulate(workload_from_rows(ROWS, procs=4), backfill=Ask(), progress=False)
    assert seen == [False]


def test_the_stepping_simulation_gives_the_same_error() -> None:
    w = workload_from_rows(ROWS, procs=4)
    with pytest.raises(StrategyError, match=r"'early' broke an invariant.*not submitted yet"):
        with schedlab.Simulation(w, policy="fcfs", backfill=Early()) as sim:
            while (p := sim.pending_decision()) is not None:
                sim.decide(order=p.queue)


# --------------------------------------------------------------- finding 4


def test_check_backfill_names_the_seed_of_a_failure_the_state_catches() -> None:
    class NoFit:
        """Starts every waiting job, whether it fits or not."""

        def bind(self, state: Any) -> None:
            self.state = state

        def schedule(self, now: float) -> None:
            for _, job in list(self.state.queue):
                self.state.start(job)

    with pytest.raises(StrategyError) as info:
        check_backfill(NoFit)
    message = str(info.value)
    assert "\n" not in message
    found = re.match(r"seed (\d+), policy fcfs, estimator requested, kill=True: backfill ", message)
    assert found, message
    seed = int(found.group(1))
    assert "started with" in message and "but only" in message
    recipe = re.search(r"reproduce: (schedlab\.simulate\(.*?\)); or ", message)
    assert recipe, message
    assert f"random_workload({seed}, 30)" in recipe.group(1)
    assert f"check_backfill(NoFit, seeds=[{seed}], jobs=30, policies=['fcfs'])" in message
    # the reproduction fails the same way
    with pytest.raises(StrategyError) as again:
        eval(recipe.group(1), {"schedlab": schedlab, "NoFit": NoFit})
    assert str(again.value) in message
    assert isinstance(info.value.__cause__, StrategyError)


def test_check_backfill_names_the_seed_of_a_job_left_waiting() -> None:
    class Never:
        name = "never"

        def bind(self, state: Any) -> None:
            self.state = state

        def schedule(self, now: float) -> None:
            pass

    with pytest.raises(SimulationError, match=r"^seed 0, policy fcfs, .*still waiting.*reproduce"):
        check_backfill(Never, seeds=range(1))


def test_check_backfill_notes_the_configuration_on_a_plugin_crash() -> None:
    class Crash:
        def bind(self, state: Any) -> None:
            self.state = state

        def schedule(self, now: float) -> None:
            raise ZeroDivisionError("boom")

    with pytest.raises(ZeroDivisionError) as info:
        check_backfill(Crash, seeds=[4])
    notes = getattr(info.value, "__notes__", [])
    assert len(notes) == 1 and notes[0].startswith(
        "check_backfill: seed 4, policy fcfs, estimator requested, kill=True; reproduce: "
    ), notes


def test_check_backfill_through_a_registered_name_early_start() -> None:
    with using_registry(plugin_registry(_bf_module("early", Early))):
        with pytest.raises(StrategyError, match=r"^seed 0, .*not submitted yet.*reproduce"):
            check_backfill("early", seeds=[0])


# --------------------------------------------------------------- finding 11


class Greedy:
    """Gives each job every free core of the nodes ``take`` picked."""

    def allocate(self, view: Any, demand: Any) -> Allocation | None:
        a = take(view, demand, view.nodes[view.usable(demand)])
        if a is None:
            return None
        amounts = np.array(a.amounts, copy=True)
        amounts[:, 0] = np.asarray(view.free)[a.nodes][:, 0]
        return Allocation(nodes=a.nodes, amounts=amounts)


class Partial:
    """On an exclusive partition, holds only the cores of each node."""

    def allocate(self, view: Any, demand: Any) -> Allocation | None:
        a = take(view, demand, view.nodes[view.usable(demand)])
        if a is None:
            return None
        amounts = np.zeros_like(a.amounts)
        amounts[:, 0] = a.amounts[:, 0]
        return Allocation(nodes=a.nodes, amounts=amounts)


def _alloc_module(name: str, factory: Any) -> types.ModuleType:
    module = types.ModuleType(f"{name.replace('-', '_')}_alloc")
    module.schedlab_allocations = hookimpl(  # type: ignore[attr-defined]
        lambda: [AllocationSpec(name=name, factory=factory)]
    )
    return module


@pytest.mark.parametrize("backfill", ["none", "easy", "conservative"])
def test_an_allocation_policy_giving_more_than_the_demand_is_refused(backfill: str) -> None:
    w = workload_from_rows([(0, 100, 1, 100)] * 4, procs=8)
    plat = _platform(count=1)
    with using_registry(plugin_registry(_alloc_module("greedy-alloc", Greedy))):
        first = schedlab.simulate(w, platform=plat, allocation="first-fit", progress=False)
        assert first.start.tolist() == [0.0] * 4
        with pytest.raises(SimulationError) as info:
            schedlab.simulate(
                w, platform=plat, allocation="greedy-alloc", backfill=backfill, progress=False
            )
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(
        "allocation policy 'greedy-alloc' returned an allocation that does not hold the demand: "
        "cores 8 for 1"
    ), message


def test_an_allocation_policy_holding_part_of_an_exclusive_node_is_refused() -> None:
    w = workload_from_rows([(0, 100, 1, 100)], procs=8)
    with using_registry(plugin_registry(_alloc_module("partial", Partial))):
        with pytest.raises(SimulationError, match=r"'partial'.*holds part of node n\[0\]"):
            schedlab.simulate(
                w, platform=_platform("exclusive", count=1), allocation="partial", progress=False
            )


def test_the_allocation_policy_error_is_one_line_exit_2(tmp_path: Path, capsys: Any) -> None:
    trace = tmp_path / "t.swf"
    schedlab.write(workload_from_rows([(0, 100, 1, 100)] * 2, procs=8), trace)
    plat = tmp_path / "p.toml"
    plat.write_text(
        '[platform]\nsharing = "shared"\n[node_groups.n]\ncount = 1\ncores = 8\n'
        '[partitions.batch]\nnodes = ["n"]\n'
    )
    with using_registry(plugin_registry(_alloc_module("greedy-alloc", Greedy))):
        code, _, err = run_cli(
            capsys, "simulate", str(trace), "--platform", str(plat), "--allocation", "greedy-alloc"
        )
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1 and "allocation policy 'greedy-alloc'" in lines[0], lines


@pytest.mark.parametrize("method", ["reserve", "release"])
@pytest.mark.parametrize("job", [-1, 3, True, 1.0])
def test_reserve_and_release_of_something_that_is_not_a_job_is_one_line(
    method: str, job: Any
) -> None:
    # reserve(-1, t) used to write the last job's reservation.
    class Book:
        name = "book"

        def bind(self, state: Any) -> None:
            self.state = state

        def schedule(self, now: float) -> None:
            if method == "reserve":
                self.state.reserve(job, now + 1)
            else:
                self.state.release(job)
            self.state.start_from_head()

    with pytest.raises(StrategyError) as info:
        schedlab.simulate(workload_from_rows(ROWS, procs=4), backfill=Book(), progress=False)
    message = str(info.value)
    assert "\n" not in message
    assert f"{method}(): " in message and "is not a job index" in message, message
