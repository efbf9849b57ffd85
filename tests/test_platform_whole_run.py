"""Whole runs on a platform (:mod:`schedlab.sim.whole_run`): node-level EASY's one
numba call (``easy_nodes_kernels.node_easy_run``) gives exactly the start times,
allocations (nodes and amounts) and pass count of the pass-by-pass runs, compiled
and Python, on random shared platforms and on the first RICC jobs cut into nodes;
the engine refuses a whole run whose allocations over-commit a node, leave a
partition or miss cores; and runs in which something can change while they run
(or that the kernel does not cover) are not whole runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
import schedlab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedlab.platform import NodeGroup, Partition, Platform
from schedlab.sim import StrategyError, WholeRun, WholeRunOutcome
from schedlab.sim.runner import run_simulation
from schedlab.sim.state import SchedulerState

pytest.importorskip("numba")


import platform_sim_check as check

# The random shared platforms and workloads of the pass-by-pass differential test.
import test_platform_easy_compiled as compiled_tests
from platform_strategies import COVERED, GIB

STATIC_POLICIES = ("fcfs", "sjf", "ljf", "smallest", "largest")


def three(workload: Any, platform: Any, allocation: str, **kwargs: Any) -> tuple[Any, Any, Any]:
    """The Python run, the compiled run pass by pass, and the compiled whole run."""
    python = check.run(
        workload, platform, "easy", allocation=allocation,
        backfill_options={"kernel": "python"}, **kwargs,
    )  # fmt: skip
    per_pass = check.run(
        workload, platform, "easy", allocation=allocation,
        backfill_options={"kernel": "compiled"}, whole=False, **kwargs,
    )  # fmt: skip
    whole = check.run(
        workload, platform, "easy", allocation=allocation,
        backfill_options={"kernel": "compiled"}, **kwargs,
    )  # fmt: skip
    assert not python.engine.whole_run and not per_pass.engine.whole_run
    if whole.engine.n:  # (every job excluded: nothing to run)
        assert whole.engine.whole_run and whole.result.stats["whole_run"] is True
    return python, per_pass, whole


def assert_same_run(a: Any, b: Any) -> None:
    """Same start times, allocations (nodes and amounts), passes and output."""
    assert b.starts() == a.starts()
    assert b.allocations.keys() == a.allocations.keys()
    for j, (nodes, amounts) in a.allocations.items():
        got_nodes, got_amounts = b.allocations[j]
        assert got_nodes.tolist() == nodes.tolist(), f"job index {j}: nodes"
        assert got_amounts.tolist() == amounts.tolist(), f"job index {j}: amounts"
    assert b.result.stats["passes"] == a.result.stats["passes"]
    assert b.result.allocations == a.result.allocations
    for key in ("utilization_by_dimension", "utilization_by_partition", "idle_while_waiting"):
        assert b.result.stats["platform"][key] == a.result.stats["platform"][key], key
    extras_a = a.result.workload.to_arrays().extras
    extras_b = b.result.workload.to_arrays().extras
    assert extras_b == extras_a  # schedlab.nodes / .partition / .held
    for key in ("corrections", "jobs_corrected", "estimate_fallbacks"):
        assert b.result.stats.get(key) == a.result.stats.get(key), key
    cols_a = a.result.workload.to_arrays()
    cols_b = b.result.workload.to_arrays()
    for name in ("wait_time", "run_time", "requested_time"):
        assert np.array_equal(cols_b[name], cols_a[name], equal_nan=True), name
    est_a, est_b = a.engine.state.estimate, b.engine.state.estimate
    assert list(est_b) == list(est_a)  # the predictions, bit for bit


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_whole_run_gives_the_pass_by_pass_schedule_and_allocations(data: Any) -> None:
    platform = data.draw(compiled_tests.shared_platforms())
    workload = data.draw(compiled_tests.workloads(platform))
    allocation = data.draw(st.sampled_from(COVERED))
    policy = data.draw(st.sampled_from(STATIC_POLICIES))
    # kill=False: jobs overrun their estimates (the shadow times are wrong).
    kill = data.draw(st.booleans())
    # Predictions made during the run, corrections raising running jobs' estimates
    # (with a policy whose keys do not depend on them: sjf's and ljf's keys are the
    # predictions, known only at submission, so no whole run is offered).
    estimator = "requested"
    if policy in ("fcfs", "smallest", "largest"):
        estimator = data.draw(st.sampled_from(["requested", "requested", "easy++", "learned"]))
    python, per_pass, whole = three(
        workload, platform, allocation, kill=kill, policy=policy, estimator=estimator
    )
    assert_same_run(python, per_pass)
    assert_same_run(python, whole)
    check.check_node_schedule(whole)


@pytest.mark.parametrize("seed", range(4))
def test_long_whole_runs_on_a_small_machine(seed: int) -> None:
    """Hundreds of jobs with GPUs, node counts and memory on 3 nodes: long queues,
    the allocation pool compacted many times, zero run times (a second round at
    the same instant) and bursts of equal submit times."""
    rng = np.random.default_rng(100 + seed)
    platform = Platform(
        (NodeGroup("a", 2, 4, memory=8 * GIB, gpus=1), NodeGroup("b", 1, 2, memory=4 * GIB)),
        (Partition("p", ("a", "b"), sharing="shared"),),
    )
    jobs = []
    for i in range(300):
        run = int(rng.integers(0, 50))
        extras: dict[str, Any] = {}
        if rng.integers(0, 6) == 0:
            extras["gpus"] = 1
        if rng.integers(0, 6) == 0:
            extras["nodes"] = int(rng.integers(1, 3))
        jobs.append(
            check.job(
                i + 1, float(i // 4 * 5), int(rng.integers(1, 9)), run,
                memory_gib=[None, 0.5, 1, 2][int(rng.integers(0, 4))],
                requested_time=max(1, run + int(rng.integers(-10, 40))), **extras,
            )
        )  # fmt: skip
    w = check.workload(*jobs)
    python, per_pass, whole = three(
        w, platform, COVERED[seed % 3], policy=STATIC_POLICIES[seed], kill=seed % 2 == 0
    )
    assert_same_run(python, whole)
    assert_same_run(per_pass, whole)
    check.check_node_schedule(whole)


@pytest.mark.parametrize("seed", range(3))
def test_whole_runs_with_wide_rows_keep_every_rows_cores(seed: int) -> None:
    """Rows of up to 255 cores are kept packed until the gather (the node and the
    cores in one 32-bit number, 8 bits of cores), wider ones as full rows: nodes of
    300 cores and jobs asking around that edge give both, in one run."""
    rng = np.random.default_rng(200 + seed)
    platform = Platform(
        (NodeGroup("w", 3, 300, memory=600 * GIB), NodeGroup("s", 2, 8, memory=16 * GIB)),
        (Partition("p", ("w", "s"), sharing="shared"),),
    )
    sizes = (1, 7, 128, 200, 254, 255, 256, 257, 299, 300, 310, 450, 600)
    jobs = []
    for i in range(80):
        run = int(rng.integers(0, 60))
        jobs.append(
            check.job(
                i + 1, float(i // 3 * 7), int(sizes[int(rng.integers(0, len(sizes)))]), run,
                memory_gib=[None, 1][int(rng.integers(0, 2))],
                requested_time=max(1, run + int(rng.integers(-5, 30))),
            )
        )  # fmt: skip
    w = check.workload(*jobs)
    _python, per_pass, whole = three(w, platform, COVERED[seed % 3], policy="fcfs")
    assert_same_run(per_pass, whole)
    cores = [int(a[:, 0].max()) for _nodes, a in whole.allocations.values() if len(a)]
    assert min(cores) < 256 <= max(cores)  # packed rows and full ones
    check.check_node_schedule(whole)


LAZY_LISTS = ("start_time", "end_time", "estimated_end")


@pytest.mark.parametrize("kill", [False, True])
def test_the_state_lists_of_a_whole_run_are_built_when_read(kill: bool) -> None:
    """After a whole run the state keeps ``start_time``, ``end_time`` and
    ``estimated_end`` as the run's arrays (``SchedulerState.keep_columns``): the
    output reads them as arrays and builds no list; a list read afterwards is
    the pass-by-pass run's list, float for float."""
    rng = np.random.default_rng(7)
    platform = Platform(
        (NodeGroup("a", 3, 4, memory=8 * GIB),),
        (Partition("p", ("a",), sharing="shared"),),
    )
    jobs = []
    for i in range(120):
        run = int(rng.integers(0, 40))
        jobs.append(
            check.job(
                i + 1, float(i // 3 * 4), int(rng.integers(1, 9)), run,
                memory_gib=[None, 1, 3][int(rng.integers(0, 3))],
                requested_time=max(1, run + int(rng.integers(-10, 30))),
            )
        )  # fmt: skip
    w = check.workload(*jobs)
    per_pass = check.run(
        w, platform, "easy", backfill_options={"kernel": "compiled"}, whole=False, kill=kill
    )
    seen: list[Any] = []
    result = run_simulation(
        w, policy="fcfs", backfill="easy", procs=None, estimator="requested", kill=kill,
        dependencies=False, policy_options=None, backfill_options={"kernel": "compiled"},
        estimator_options=None, registry=None, progress=False, inspect=seen.append,
        platform=platform, allocation="first-fit",
    )  # fmt: skip
    engine = seen[0]
    assert engine.whole_run and not per_pass.engine.whole_run
    state = engine.state
    # Only the whole run's state joins the subclass with the building hook; the
    # pass-by-pass state stays a plain SchedulerState (no ``__getattr__``).
    assert type(per_pass.engine.state) is SchedulerState
    assert isinstance(state, SchedulerState) and type(state) is not SchedulerState
    assert type(state).__name__ == "SchedulerState"
    assert not any(name in vars(state) for name in LAZY_LISTS)  # the output built none
    for name in LAZY_LISTS:
        expected = getattr(per_pass.engine.state, name)
        array = state.column(name)
        assert array.dtype == np.float64 and array.tolist() == expected, name
        got = getattr(state, name)
        assert type(got) is list and got == expected, name
        assert all(type(x) is float for x in got), name
        assert getattr(state, name) is got  # built once
        assert state.column(name).tolist() == expected  # from the list now
    with pytest.raises(AttributeError):
        _ = state.no_such_list
    # The output read from the arrays: every column as the pass-by-pass run's.
    got_columns = result.workload.to_arrays()
    expected_columns = per_pass.result.workload.to_arrays()
    assert got_columns.data.keys() == expected_columns.data.keys()
    for name, values in expected_columns.data.items():
        assert got_columns.data[name].dtype == values.dtype, name
        assert got_columns.data[name].tobytes() == values.tobytes(), name
    assert got_columns.extras == expected_columns.extras
    assert result.stats["platform"] == per_pass.result.stats["platform"]
    assert result.stats["makespan"] == per_pass.result.stats["makespan"]
    assert result.stats["overran_estimate"] == per_pass.result.stats["overran_estimate"]


@pytest.mark.parametrize("estimator", ["requested", "actual"])
@pytest.mark.parametrize("kill", [False, True])
def test_an_estimates_column_gives_the_estimates_of_the_list(estimator: str, kill: bool) -> None:
    """An estimator declaring ``estimates_column`` hands the whole run the
    prepared array of that column: the plan's estimates (fallbacks and the
    minimum applied), the table's estimates and the schedule are those of the
    same estimator without the declaration (its list converted), bit for bit."""
    from schedlab.policies import estimators

    rng = np.random.default_rng(11)
    platform = Platform(
        (NodeGroup("a", 3, 4, memory=8 * GIB),), (Partition("p", ("a",), sharing="shared"),)
    )
    jobs = []
    for i in range(80):
        run = [0, 0.0004, 3.5, int(rng.integers(1, 40))][int(rng.integers(0, 4))]
        requested = [-1, 0, 0.0002, run, run + 7.25][int(rng.integers(0, 5))]
        jobs.append(
            check.job(i + 1, float(i // 2 * 3), int(rng.integers(1, 9)), run,
                      requested_time=requested)
        )  # fmt: skip
    w = check.workload(*jobs)
    w.header.set("MaxRuntime", 50)

    def whole_run(column: bool) -> tuple[Any, Any, Any]:
        plans: list[Any] = []

        def inspect(engine: Any) -> None:
            run_whole = engine.strategy.run_whole

            def kept(plan: Any) -> Any:
                plans.append(plan)
                return run_whole(plan)

            engine.strategy.run_whole = kept
            plans.append(engine)

        cls = estimators.RequestedTime if estimator == "requested" else estimators.ActualRunTime
        with mock.patch.object(cls, "estimates_column", cls.estimates_column if column else None):
            result = run_simulation(
                w, policy="fcfs", backfill="easy", procs=None, estimator=estimator, kill=kill,
                dependencies=False, policy_options=None, backfill_options={"kernel": "compiled"},
                estimator_options=None, registry=None, progress=False, inspect=inspect,
                platform=platform, allocation="first-fit",
            )  # fmt: skip
        engine, plan = plans
        assert engine.whole_run
        return plan, engine, result

    plan, engine, result = whole_run(True)
    plain_plan, plain_engine, plain_result = whole_run(False)
    assert plan.estimate.dtype == np.float64
    assert plan.estimate.tobytes() == plain_plan.estimate.tobytes()
    table, plain_table = engine.table, plain_engine.table
    assert np.array(table.estimate).tobytes() == np.array(plain_table.estimate).tobytes()
    assert engine.estimate_fallbacks == plain_engine.estimate_fallbacks
    assert result.stats["estimate_fallbacks"] > 0 or estimator == "actual"
    assert result.workload.to_arrays()["wait_time"].tolist() == (
        plain_result.workload.to_arrays()["wait_time"].tolist()
    )


@pytest.mark.realdata
@pytest.mark.parametrize(
    ("allocation", "policy"), [("first-fit", "fcfs"), ("best-fit", "sjf"), ("spread", "fcfs")]
)
def test_ricc_jobs_cut_into_nodes_whole_run_equals_python(
    swf_dir: Path, allocation: str, policy: str
) -> None:
    ricc = schedlab.read(swf_dir / "RICC-2010-2.swf.gz")
    w = schedlab.Workload(ricc.header.copy(), columns=ricc.to_arrays().take(np.arange(3000)))
    platform = Platform(
        (NodeGroup("node", 1024, 8, memory=12 * GIB),),
        (Partition("all", ("node",), sharing="shared"),),
    )
    python = check.run(
        w, platform, "easy", allocation=allocation, policy=policy,
        backfill_options={"kernel": "python"},
    )  # fmt: skip
    whole = check.run(
        w, platform, "easy", allocation=allocation, policy=policy,
        backfill_options={"kernel": "compiled"},
    )  # fmt: skip
    assert whole.engine.whole_run
    assert_same_run(python, whole)
    waits = whole.result.workload.to_arrays()["wait_time"]
    assert (waits > 0).sum() > 100  # a queue formed: backfilling was exercised


# ------------------------------------------------------------ refused outcomes
class Liar:
    """A node-level strategy whose whole run returns the outcome it is given."""

    name = "liar"
    supports_platform = True

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome

    def bind(self, state: Any) -> None:
        self.state = state

    def schedule(self, now: float) -> None:
        self.state.start_from_head()

    def run_whole(self, plan: WholeRun) -> Any:
        assert plan.machine is self.state.machine and plan.demand is not None
        return self.outcome(plan)


def two_nodes() -> tuple[Platform, Any]:
    """Nodes a[0], a[1] of 4 cores and 4 GiB (partition p), b[0] (partition q);
    jobs 1 and 2 (3 cores, partition p) at t=0 for 10 s, job 3 (1 core) at t=5."""
    platform = Platform(
        (NodeGroup("a", 2, 4, memory=4 * GIB), NodeGroup("b", 1, 4, memory=4 * GIB)),
        (
            Partition("p", ("a",), sharing="shared"),
            Partition("q", ("b",), sharing="shared"),
        ),
    )
    w = check.workload(
        check.job(1, 0, 3, 10, partition="p"),
        check.job(2, 0, 3, 10, partition="p"),
        check.job(3, 5, 1, 10, partition="p"),
    )
    return platform, w


def outcome(start: list[float], nodes: list[list[int]], amounts: list[list[list[int]]]) -> Any:
    offset = np.cumsum([0] + [len(x) for x in nodes])
    return lambda plan: WholeRunOutcome(
        start=np.array(start),
        passes=2,
        node_offset=offset,
        nodes=np.array([n for x in nodes for n in x], dtype=np.int64),
        amounts=np.array([a for x in amounts for a in x], dtype=np.int64).reshape(-1, 3),
    )


def test_the_engine_accepts_a_valid_whole_run_on_a_platform() -> None:
    platform, w = two_nodes()
    good = outcome([0, 0, 5], [[0], [1], [0]], [[[3, 3, 0]], [[3, 3, 0]], [[1, GIB, 0]]])
    result = schedlab.simulate(w, backfill=Liar(good), platform=platform, progress=False)
    assert result.stats["whole_run"] is True
    assert result.allocations == [("a[0]",), ("a[1]",), ("a[0]",)]


@pytest.mark.parametrize(
    ("nodes", "amounts", "message"),
    [
        # Job 3's core on node a[0], beside job 1's 3 cores: 4 of 4, but 4 GiB
        # of memory asked where 3 GiB are left.
        (
            [[0], [1], [0]],
            [[[3, 3, 0]], [[3, 3, 0]], [[1, 4 * GIB, 0]]],
            "job 3 (index 2) over-committed node index 0 (a[0])",
        ),
        # Job 3 on two cores of a[1] beside job 2's three.
        (
            [[0], [1], [1]],
            [[[3, 3, 0]], [[3, 3, 0]], [[2, 1, 0]]],
            "job 3 (index 2) over-committed node index 1 (a[1])",
        ),
        # Job 2 on b[0], a node of partition q.
        (
            [[0], [2], [1]],
            [[[3, 3, 0]], [[3, 3, 0]], [[1, 1, 0]]],
            "job 2 (index 1) got nodes outside its partition",
        ),
        # Job 1 short of a core.
        (
            [[0], [1], [1]],
            [[[2, 3, 0]], [[3, 3, 0]], [[1, 1, 0]]],
            "job 1 (index 0) got 2 cores for 3",
        ),
        # Job 2's nodes out of order.
        (
            [[0], [1, 0], [1]],
            [[[3, 3, 0]], [[1, 1, 0], [2, 2, 0]], [[1, 1, 0]]],
            "job 2 (index 1) got nodes outside its partition, not ascending",
        ),
    ],
)
def test_the_engine_refuses_a_whole_run_that_over_commits_a_node(
    nodes: list[list[int]], amounts: list[list[list[int]]], message: str
) -> None:
    platform, w = two_nodes()
    bad = outcome([0, 0, 5], nodes, amounts)
    with pytest.raises(StrategyError, match="liar") as caught:
        schedlab.simulate(w, backfill=Liar(bad), platform=platform, progress=False)
    assert message in str(caught.value)


def test_a_whole_run_on_a_platform_must_give_allocations() -> None:
    platform, w = two_nodes()
    bare = Liar(lambda plan: WholeRunOutcome(start=np.array([0.0, 0.0, 5.0]), passes=2))
    with pytest.raises(StrategyError, match="gave no allocations"):
        schedlab.simulate(w, backfill=bare, platform=platform, progress=False)


# ------------------------------------------------------------ not whole runs
def small_run() -> tuple[Platform, Any]:
    platform = Platform(
        (NodeGroup("n", 3, 4, memory=8 * GIB, gpus=1),),
        (Partition("p", ("n",), sharing="shared"),),
    )
    rng = np.random.default_rng(7)
    jobs = [
        check.job(
            i + 1, float(i * 2), int(rng.integers(1, 9)), int(rng.integers(1, 40)),
            memory_gib=1, requested_time=int(rng.integers(1, 30)),
        )
        for i in range(80)
    ]  # fmt: skip
    return platform, check.workload(*jobs)


@pytest.mark.realdata
@pytest.mark.parametrize("estimator", ["easy++", "learned", "user-average"])
def test_whole_runs_with_predictions_on_a_real_log(swf_dir: Path, estimator: str) -> None:
    """Predictions at submission, learning at each end, corrections raising running
    jobs (``easy++``, ``learned``), in the whole run: the pass-by-pass run's
    schedule, allocations, estimates and counts, and the Python pass's."""
    ricc = schedlab.read(swf_dir / "RICC-2010-2.swf.gz")
    w = schedlab.Workload(ricc.header.copy(), columns=ricc.to_arrays().take(np.arange(2500)))
    platform = Platform(
        (NodeGroup("node", 1024, 8, memory=12 * GIB),),
        (Partition("all", ("node",), sharing="shared"),),
    )
    python, per_pass, whole = three(w, platform, "first-fit", estimator=estimator)
    assert_same_run(per_pass, whole)
    assert_same_run(python, whole)
    if estimator != "user-average":  # (no correction by default)
        assert whole.result.stats["corrections"] > 1000


@pytest.mark.parametrize(
    ("kw", "why"),
    [({"policy": "wfp3"}, "dynamic keys")],
)
def test_no_whole_run_when_inputs_change_during_the_run(kw: dict, why: str) -> None:
    platform, w = small_run()
    runs = [
        schedlab.simulate(
            w, backfill="easy", backfill_options={"kernel": kernel}, platform=platform,
            progress=False, **kw,
        )
        for kernel in ("python", "compiled")
    ]  # fmt: skip
    assert runs[1].stats["kernel"] == "compiled"
    assert runs[1].stats["whole_run"] is False, why
    a, b = (r.workload.to_arrays() for r in runs)
    assert np.array_equal(a["wait_time"], b["wait_time"])
    assert runs[0].allocations == runs[1].allocations
    # The same run without what changes is a whole run.
    plain = schedlab.simulate(
        w, backfill="easy", backfill_options={"kernel": "compiled"}, platform=platform,
        progress=False,
    )  # fmt: skip
    assert plain.stats["whole_run"] is True


def test_no_whole_run_outside_the_kernels_cover() -> None:
    """Several partitions, an allocation policy without a node order: the Python
    pass, in the engine's loop."""
    _, w = small_run()
    several = Platform(
        (NodeGroup("n", 3, 4, memory=8 * GIB),),
        (Partition("p", ("n",), sharing="shared"), Partition("q", ("n",), sharing="shared")),
    )
    shared = Platform(
        (NodeGroup("n", 3, 4, memory=8 * GIB),), (Partition("p", ("n",), sharing="shared"),)
    )
    for platform, allocation in ((several, "first-fit"), (shared, "contiguous")):
        r = schedlab.simulate(
            w, backfill="easy", platform=platform, allocation=allocation, progress=False
        )
        assert r.stats["kernel"] == "python"
        assert r.stats["whole_run"] is False


# ------------------------------------------------------------ the check itself
def over_committed(plan: WholeRun, outcome: WholeRunOutcome) -> bool:
    """Plain reference: walk the events in time order (ends first at the same
    instant) and add each row's amounts to its node."""
    capacity = plan.machine.capacity
    off = outcome.node_offset
    events = []
    for j in range(len(plan.submit)):
        s = float(outcome.start[j])
        events.append((s + float(plan.run_time[j]), 0, j))
        events.append((s, 1, j))
    used = np.zeros_like(capacity)
    for _, kind, j in sorted(events):
        for k in range(off[j], off[j + 1]):
            node = outcome.nodes[k]
            used[node] += outcome.amounts[k] if kind else -outcome.amounts[k]
            if kind and (used[node] > capacity[node]).any():
                return True
    return False


@pytest.mark.parametrize("path", ["numpy", "compiled"])
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_the_outcome_check_refuses_exactly_the_over_committed_allocations(
    path: str, data: Any
) -> None:
    """check_allocations against the plain reference on random allocations (jobs
    at random times on random nodes with random amounts, zero run times and
    equal instants included), on nodes of unequal capacities: with the per-node
    sort of numpy alone, and with the compiled sweep that answers first when
    numba is loaded (`schedlab.sim.overcommit`)."""
    import schedlab.sim.whole_run as whole_run_module

    if path == "compiled":
        pytest.importorskip("numba")
        sweep = whole_run_module._compiled_sweep()
        assert sweep is not None  # numba is loaded: the check uses the sweep
    else:
        sweep = None
    with mock.patch.object(whole_run_module, "_compiled_sweep", lambda: sweep):
        plan, outcome, expected = _check_random_allocations(data)
    if sweep is not None:
        # The sweep's own answer (a "no" alone would fall back to the sort).
        n = len(plan.submit)
        start = np.asarray(outcome.start, dtype=np.float64)
        by_time = np.argsort(np.concatenate((start + plan.run_time, start)), kind="stable")
        assert sweep(
            by_time, n, outcome.node_offset, outcome.nodes, outcome.amounts,
            plan.machine.capacity,
        ) is not expected  # fmt: skip


def _check_random_allocations(data: Any) -> tuple[WholeRun, WholeRunOutcome, bool]:
    platform = Platform(
        (NodeGroup("a", 2, 4, memory=4, gpus=1), NodeGroup("b", 2, 2, memory=8)),
        (Partition("p", ("a", "b"), sharing="shared"),),
    )
    from schedlab.sim import NodeMachine, check_allocations

    machine = NodeMachine(platform, object())
    n = data.draw(st.integers(1, 8))
    start = np.array([data.draw(st.integers(0, 6)) for _ in range(n)], dtype=np.float64)
    run = np.array([data.draw(st.integers(0, 4)) for _ in range(n)], dtype=np.float64)
    nodes: list[int] = []
    amounts: list[list[int]] = []
    offset = [0]
    for _ in range(n):
        chosen = sorted(data.draw(st.sets(st.integers(0, 3), min_size=1, max_size=3)))
        for node in chosen:
            nodes.append(node)
            amounts.append([data.draw(st.integers(1, 3)), data.draw(st.integers(0, 5)),
                            data.draw(st.integers(0, 1))])  # fmt: skip
        offset.append(len(nodes))
    size = np.array(
        [sum(a[0] for a in amounts[offset[j] : offset[j + 1]]) for j in range(n)], dtype=np.int64
    )
    plan = WholeRun(
        procs=12, submit=np.zeros(n), size=size, run_time=run, estimate=run + 1,
        key=np.zeros(n), strategy_name="random", machine=machine,
        partition_of=np.zeros(n, dtype=np.int64),
    )  # fmt: skip
    outcome = WholeRunOutcome(
        start=start, passes=1, node_offset=np.array(offset, dtype=np.int64),
        nodes=np.array(nodes, dtype=np.int64), amounts=np.array(amounts, dtype=np.int64),
    )  # fmt: skip
    expected = over_committed(plan, outcome)
    if expected:
        with pytest.raises(StrategyError, match="over-committed node"):
            check_allocations(plan, outcome, list(range(1, n + 1)))
    else:
        check_allocations(plan, outcome, list(range(1, n + 1)))
    return plan, outcome, expected
