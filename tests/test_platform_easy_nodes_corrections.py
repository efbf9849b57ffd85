"""Prediction corrections on the compiled node-level EASY pass
(:mod:`schedlab.policies.backfill.easy_nodes_kernels`): a correction raising a
running job's estimate moves the job among the kernel's running jobs
(``move_running``). Each raise used to leave a hole and insert the job again, one
more slot in the running list per raise, until the slots outgrew their rows and
overwrote the next ones (the kept shadow time among them): the run stopped ("lost
track of a running job") or reserved the head later than the Python pass (audit
partitions2, finding 1). Here: ``move_running`` on its own, the audit's
reproductions (one partition, whole run and pass by pass; three disjoint
partitions) and a hypothesis differential with ``easy++`` on runs long enough for
many raises.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from schedlab.platform import NodeGroup, Partition, Platform

pytest.importorskip("numba")

_spec = importlib.util.spec_from_file_location(
    "platform_sim_check", Path(__file__).with_name("platform_sim_check.py")
)
assert _spec is not None and _spec.loader is not None
check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check)

Row = tuple[int, int, int, int, int, int, str | None, int | None, int | None, int]


def _workload(rows: list[Row]) -> schedlab.Workload:
    """Jobs from rows of (number, submit, run, requested time, cores, node count,
    ``request.partition``, queue, partition number, user), as the audit wrote them."""
    jobs = []
    for number, submit, run, requested, cores, nodes, part, queue, pnum, user in rows:
        extras: dict[str, Any] = {}
        if part is not None:
            extras["request.partition"] = part
        if nodes:
            extras["request.nodes"] = nodes
        jobs.append(
            schedlab.Job(
                job_number=number, submit_time=float(submit), run_time=float(run),
                requested_time=float(requested), requested_processors=cores,
                allocated_processors=cores, status=1, user_id=user, queue_number=queue,
                partition_number=pnum, extras=extras,
            )
        )  # fmt: skip
    return schedlab.Workload.from_jobs(jobs)


def _check_running_list(impl: Any) -> None:
    """The kernel's running list after a raise (``impl``: a
    :class:`~schedlab.policies.backfill.easy_nodes_compiled.CompiledNodeEasy`): no
    more slots than the jobs its partition started, sorted by (estimated end, job),
    and its jobs (less those ended since the last pass, which it learns at the
    next) those of ``state.running``, at the same estimated ends."""
    from schedlab.policies.backfill import easy_nodes_kernels as kn

    state = impl.state
    part = impl.partition
    starts = state.start_time
    mine = [
        j for j in range(state.n) if part is None or state.partition_of[j] == part
    ]  # fmt: skip
    slots = int(impl.meta[kn.M_RUNNING])
    assert slots <= sum(1 for j in mine if starts[j] == starts[j]), "slots past the starts"
    jobs = impl.ints[kn.R_JOB, :slots].tolist()
    ends = impl.floats[kn.R_END, :slots].tolist()
    ranks = [(e, j if j >= 0 else ~j) for e, j in zip(ends, jobs, strict=True)]
    assert ranks == sorted(ranks), "running list out of order"
    pending = set(impl.finished[: impl.n_finished].tolist())
    kept = [(e, j) for e, j in zip(ends, jobs, strict=True) if j >= 0 and j not in pending]
    assert state.running is not None
    ours = set(mine)
    assert kept == [(e, j) for e, j in state.running if j in ours]


def _runs(workload: Any, platform: Platform, *, whole: bool, **kwargs: Any) -> tuple[Any, Any]:
    """The Python and the compiled run (``whole``: a whole run in one kernel call
    when the engine offers it; reservations are logged only pass by pass, and the
    kernel's running list is checked after every raise, :func:`_check_running_list`)."""
    from schedlab.policies.backfill.easy_nodes_compiled import CompiledNodeEasy

    raised = CompiledNodeEasy.on_estimate_raised

    def checked(self: Any, job: int, old_end: float, now: float) -> None:
        raised(self, job, old_end, now)
        if not self.left:
            _check_running_list(self)

    runs = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(CompiledNodeEasy, "on_estimate_raised", checked)
        for kernel in ("python", "compiled"):
            runs.append(
                check.run(
                    workload, platform, "easy", estimator="easy++",
                    backfill_options={"kernel": kernel}, whole=whole,
                    log_reservations=not whole, **kwargs,
                )
            )  # fmt: skip
    assert runs[1].engine.strategy.kernel_name == "compiled"
    return runs[0], runs[1]


def _assert_same(python: Any, compiled: Any) -> None:
    """Same starts, allocations (nodes and amounts) and, when logged, reservations."""
    assert compiled.result.stats["corrections"] == python.result.stats["corrections"]
    check.assert_same_schedule(python, compiled)
    # Each compiled pass logs its partitions' heads in partition order, the Python
    # pass in tier order: compare them as sets.
    if python.state.reservation_log is not None:
        assert sorted(map(repr, compiled.state.reservation_log.items())) == sorted(
            map(repr, python.state.reservation_log.items())
        )
    check.check_node_schedule(compiled)


# ------------------------------------------------------------- move_running alone
def test_raising_estimates_keeps_the_running_list_within_its_rows() -> None:
    """Three running jobs sharing an estimated end, raised over and over (ties, and
    a raised job's old end equal to another's): the list keeps three slots, sorted
    by (estimated end, job), and the rows after it (the kept shadow time, the
    allocation offsets) are not written."""
    from schedlab.policies.backfill import easy_nodes_kernels as kn

    n = 3
    meta = np.zeros(kn.N_META, dtype=np.int64)
    ints = np.zeros((kn.N_INT_ROWS, n + 1), dtype=np.int64)
    floats = np.zeros((kn.N_FLOAT_ROWS, n + 1), dtype=np.float64)
    demands = np.zeros((3, n + 1, 2), dtype=np.int64)
    mats = np.zeros((2, 1, 2), dtype=np.int64)
    pool_nodes = np.zeros(1, dtype=np.int64)
    pool_amt = np.zeros((1, 2), dtype=np.int64)
    floats[kn.SCALARS] = [123.0, 456.0, -1.0, -1.0]  # the rows right after R_END / R_JOB
    ints[kn.A_OFF] = [7, 8, 9, 10]
    for j in range(n):
        floats[kn.J_END, j] = 10.0
        meta[kn.M_RUNNING] = kn._running_insert(
            floats[kn.R_END], ints[kn.R_JOB], meta[kn.M_RUNNING], 10.0, j, meta
        )
    rng = np.random.default_rng(0)
    for _ in range(200):
        j = int(rng.integers(0, n))
        raised = floats[kn.J_END, j] + float(rng.integers(0, 3))
        assert kn.move_running(meta, ints, floats, demands, mats, pool_nodes, pool_amt, j, raised)
        assert meta[kn.M_RUNNING] == n
        slots = [
            (float(floats[kn.R_END, x]), int(ints[kn.R_JOB, x])) for x in range(meta[kn.M_RUNNING])
        ]
        assert slots == sorted((float(floats[kn.J_END, r]), r) for r in range(n))
        assert floats[kn.SCALARS].tolist() == [123.0, 456.0, -1.0, -1.0]
        assert ints[kn.A_OFF].tolist() == [7, 8, 9, 10]
    # A job that is not running, or an earlier end: nothing changes.
    assert not kn.move_running(meta, ints, floats, demands, mats, pool_nodes, pool_amt, n, 99.0)
    low = floats[kn.J_END, 0] - 1
    assert not kn.move_running(meta, ints, floats, demands, mats, pool_nodes, pool_amt, 0, low)


# ------------------------------------------------------- the audit's reproductions
ONE = Platform(
    (NodeGroup("p0g0", 4, 5), NodeGroup("p0g1", 2, 2)),
    (Partition("partition1", ("p0g0", "p0g1"), max_time=60, sharing="shared"),),
)
ONE_JOBS: list[Row] = [
    (1, 0, 6, 18, 1, 0, None, None, 4, 2),
    (2, 5, 1, 12, 2, 0, "partition1", None, None, 4),
    (3, 10, 13, 24, 4, 3, "partition1", None, 4, 3),
    (4, 12, 36, 33, 5, 0, None, 2, None, 1),
    (5, 14, 7, 11, 7, 0, None, None, None, 2),
    (7, 15, 1, 9, 2, 0, "partition1", None, None, 2),
    (8, 25, 36, 37, 8, 2, "partition1", None, 4, 4),
    (9, 25, 26, 34, 4, 0, "partition1", None, None, 2),
    (10, 27, 39, 54, 2, 0, None, None, None, 3),
    (11, 27, 40, 45, 5, 1, "partition1", None, 1, 3),
    (12, 28, 40, 49, 3, 2, None, 1, None, 2),
    (13, 29, 15, 29, 4, 3, "partition1", None, None, 1),
    (14, 31, 4, 2, 2, 0, None, 2, 2, 4),
    (15, 32, 27, 41, 8, 0, None, 1, None, 4),
    (16, 37, 40, 54, 2, 0, "partition1", None, None, 4),
    (17, 39, 16, 12, 1, 0, "partition1", None, None, 2),
    (18, 41, 22, 38, 3, 2, "zz", None, None, 1),
    (19, 46, 5, 15, 2, 0, "partition1", None, None, 3),
    (20, 56, 3, 21, 3, 0, "partition1", None, None, 4),
    (23, 64, 35, 32, 1, 0, None, 2, None, 1),
    (24, 66, 40, 56, 8, 0, None, None, None, 2),
]

THREE = Platform(
    (
        NodeGroup("p0g0", 4, 4),
        NodeGroup("p0g1", 1, 4),
        NodeGroup("p1g0", 1, 4),
        NodeGroup("p1g1", 1, 4),
        NodeGroup("p2g0", 3, 6),
        NodeGroup("p2g1", 4, 5),
    ),
    (
        Partition("p0", ("p0g0", "p0g1"), priority_tier=1, queues=("1",), sharing="shared"),
        Partition("partition2", ("p1g0", "p1g1"), sharing="shared"),
        Partition("partition3", ("p2g0", "p2g1"), max_time=33, sharing="shared"),
    ),
)
THREE_JOBS: list[Row] = [
    (1, 0, 13, 22, 1, 1, None, 3, None, 2),
    (2, 1, 2, 13, 2, 0, "p0", None, None, 2),
    (3, 6, 17, 30, 4, 2, None, 1, None, 1),
    (4, 16, 8, 10, 1, 0, "p0", None, None, 3),
    (5, 16, 28, 27, 1, 1, None, 3, None, 3),
    (7, 36, 20, 33, 5, 0, None, None, None, 3),
    (8, 36, 15, 32, 8, 0, None, 3, None, 3),
    (9, 36, 7, 16, 4, 0, None, None, 4, 4),
    (10, 46, 37, 41, 4, 1, "p0", None, 3, 2),
    (11, 46, 33, 38, 5, 0, None, None, 5, 2),
    (12, 46, 40, 55, 1, 0, None, 3, 5, 2),
    (13, 47, 20, 29, 1, 0, None, None, 4, 1),
    (14, 48, 26, 44, 4, 0, None, 1, 4, 1),
    (15, 50, 29, 42, 5, 2, None, None, None, 1),
    (16, 50, 13, 23, 4, 1, "partition2", None, None, 1),
    (17, 51, 16, 36, 8, 0, None, 3, None, 4),
    (18, 51, 8, 25, 1, 0, None, None, 4, 3),
    (19, 53, 29, 30, 2, 0, None, 1, None, 4),
    (20, 55, 15, 11, 5, 0, "p0", None, 3, 2),
    (22, 55, 5, 15, 5, 2, None, 2, None, 1),
    (23, 56, 34, 38, 6, 0, None, 3, None, 1),
    (24, 58, 21, 22, 8, 3, None, None, None, 3),
    (26, 70, 15, 11, 5, 0, None, 2, None, 4),
    (27, 70, 2, 2, 4, 2, None, None, None, 2),
    (28, 75, 20, 38, 2, 0, "partition2", None, None, 2),
    (30, 81, 34, 32, 1, 0, None, 3, None, 2),
    (31, 86, 32, 35, 4, 0, None, None, 4, 1),
    (32, 96, 39, 39, 3, 0, "p0", None, None, 2),
    (34, 106, 32, 33, 2, 2, None, 2, None, 1),
    (35, 107, 38, 47, 5, 0, None, 3, 1, 3),
    (36, 108, 32, 31, 1, 0, "p0", None, 2, 1),
]
#: The 13 of them that stopped the run without ``kill`` (job 31's raise to 135).
THREE_NOKILL = {3, 4, 5, 7, 8, 10, 11, 15, 23, 24, 30, 31, 32}


@pytest.mark.parametrize("whole", [True, False], ids=["whole-run", "pass-by-pass"])
def test_one_partition_with_many_raises_gives_the_python_schedule(whole: bool) -> None:
    """21 jobs, ``kill``: the compiled run stopped ("lost track of a running job")."""
    python, compiled = _runs(_workload(ONE_JOBS), ONE, whole=whole, kill=True)
    assert compiled.engine.whole_run == whole
    assert compiled.result.stats["corrections"] > 10
    _assert_same(python, compiled)


@pytest.mark.parametrize("kill", [True, False])
def test_disjoint_partitions_with_many_raises_give_the_python_schedule(kill: bool) -> None:
    """Three disjoint partitions (one compiled pass each). With ``kill``, 31 jobs:
    after job 31's estimate was raised to 148 the compiled pass reserved head job 24
    at 148 instead of 143, backfilled job 35 onto the nodes the head needed at 143,
    and started the head at 145. Without, 13 of them: the pass stopped. (Runs on
    several partitions are pass by pass: they decline the whole run.)"""
    rows = THREE_JOBS if kill else [r for r in THREE_JOBS if r[0] in THREE_NOKILL]
    python, compiled = _runs(_workload(rows), THREE, whole=False, kill=kill)
    assert type(compiled.engine.strategy._compiled).__name__ == "CompiledPartitions"
    _assert_same(python, compiled)
    if kill:
        assert compiled.start(24) == 143.0
        assert compiled.nodes(24) == ["p0g0[0]", "p0g0[1]", "p0g1[0]"]
        head = compiled.index_of(24)
        assert max(t for _, t in compiled.state.reservation_log[head]) == 143.0


# ------------------------------------------------------------ random differential
@st.composite
def platforms(draw: Any) -> Platform:
    """One partition, or two or three that share no node; small nodes, so that few
    jobs run at once and a long run raises many of them."""
    groups: list[NodeGroup] = []
    partitions = []
    for p in range(draw(st.sampled_from([1, 1, 2, 3]))):
        names = []
        for g in range(draw(st.integers(1, 2))):
            name = f"p{p}g{g}"
            groups.append(NodeGroup(name, draw(st.integers(1, 4)), draw(st.integers(2, 6))))
            names.append(name)
        partitions.append(
            Partition(
                f"part{p}",
                tuple(names),
                sharing=draw(st.sampled_from(["shared", "shared", "exclusive"])),
                priority_tier=draw(st.integers(0, 1)),
            )
        )
    return Platform(tuple(groups), tuple(partitions))


@st.composite
def workloads(draw: Any, platform: Platform) -> Any:
    """20 to 80 jobs arriving over a few hundred seconds, many running past their
    requested times' predictions (``easy++`` then raises them)."""
    rows: list[Row] = []
    t = 0
    for i in range(draw(st.integers(20, 80))):
        t += draw(st.sampled_from([0, 0, 1, 2, 5, 10]))
        p = draw(st.integers(0, len(platform.partitions) - 1))
        part = platform.partitions[p]
        mine = [g for g in platform.node_groups if g.name in part.nodes]
        cores = draw(st.integers(1, min(8, sum(g.cores * g.count for g in mine))))
        nodes = draw(st.sampled_from([0, 0, 0, 1, 2]))
        if nodes > cores or nodes > sum(g.count for g in mine):
            nodes = 0
        run = draw(st.integers(1, 40))
        requested = max(1, run + draw(st.integers(-5, 20)))
        user = draw(st.integers(1, 4))
        rows.append((i + 1, t, run, requested, cores, nodes, part.name, None, None, user))
    note(repr(rows))
    return _workload(rows)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_long_runs_with_easy_plus_plus_give_the_python_schedule(data: Any) -> None:
    """The compiled pass (one partition: pass by pass or a whole run; several: one
    pass each) against the Python pass: starts, allocations and reservations, and
    pass by pass the kernel's running list after every raise. (The differential
    alone rarely saw the old fault: the slots outgrew their rows only on runs of
    about 40 jobs or fewer, the rows being ``n + 1`` long and the holes dropped past
    32, and what they overwrote seldom changed a decision.)"""
    platform = data.draw(platforms())
    workload = data.draw(workloads(platform))
    kill = data.draw(st.booleans())
    policy = data.draw(st.sampled_from(["fcfs", "fcfs", "sjf", "wfp3"]))
    whole = len(platform.partitions) == 1 and policy == "fcfs" and data.draw(st.booleans())
    python, compiled = _runs(workload, platform, whole=whole, kill=kill, policy=policy)
    _assert_same(python, compiled)
