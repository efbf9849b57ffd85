"""The compiled node-level EASY pass (:mod:`schedlab.policies.backfill.easy_nodes_kernels`)
against the Python pass (:class:`~schedlab.policies.backfill.easy_nodes.NodeEasy`):
the same start time and the same allocation (nodes and amounts) for every job,
on random platforms (shared, or exclusive) with memory, GPUs and a consumable and
random workloads (node counts, memory per core, GPUs, overruns), under each
allocation policy the kernel covers, with given estimates or predictions (whose
corrections move running jobs in the kernel), and on real logs cut into nodes; the
compiled schedules also pass the machine invariants and EASY's head-reservation
check. Runs outside the kernel's cover take the Python pass, and
``kernel=compiled`` there is an error.
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
from schedlab.errors import SimulationError
from schedlab.platform import NodeGroup, Partition, Platform

pytest.importorskip("numba")

_spec = importlib.util.spec_from_file_location(
    "platform_sim_check", Path(__file__).with_name("platform_sim_check.py")
)
assert _spec is not None and _spec.loader is not None
check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check)

GIB = 2**30
COVERED = ("first-fit", "best-fit", "spread")


def both(workload: Any, platform: Any, allocation: str, **kwargs: Any) -> tuple[Any, Any]:
    """The Python and the compiled run of the same input, pass by pass (whole runs
    are compared in test_platform_whole_run.py)."""
    runs = [
        check.run(
            workload, platform, "easy", allocation=allocation,
            backfill_options={"kernel": kernel}, whole=False, **kwargs,
        )
        for kernel in ("python", "compiled")
    ]  # fmt: skip
    assert runs[1].engine.strategy.kernel_name == "compiled"
    assert not runs[1].engine.whole_run
    return runs[0], runs[1]


def assert_same(python: Any, compiled: Any) -> None:
    assert compiled.starts() == python.starts()
    assert compiled.allocations.keys() == python.allocations.keys()
    for j, (nodes, amounts) in python.allocations.items():
        got_nodes, got_amounts = compiled.allocations[j]
        assert got_nodes.tolist() == nodes.tolist(), f"job index {j}: nodes"
        assert got_amounts.tolist() == amounts.tolist(), f"job index {j}: amounts"


@st.composite
def shared_platforms(draw: Any) -> Platform:
    """One partition of random node groups, shared, or now and then exclusive (jobs
    take their nodes whole)."""
    groups = tuple(
        NodeGroup(
            f"g{g}",
            count=draw(st.integers(1, 4)),
            cores=draw(st.integers(1, 4)),
            memory=draw(st.sampled_from([None, 2 * GIB, 4 * GIB])),
            gpus=draw(st.integers(0, 2)),
            consumables={"lic": draw(st.integers(0, 2))},
        )
        for g in range(draw(st.integers(1, 3)))
    )
    sharing = draw(st.sampled_from(["shared", "shared", "exclusive"]))
    return Platform(groups, (Partition("all", tuple(g.name for g in groups), sharing=sharing),))


@st.composite
def workloads(draw: Any, platform: Platform) -> Any:
    cores = sum(g.cores * g.count for g in platform.node_groups)
    gpus = any(g.gpus for g in platform.node_groups)
    lic = any(g.consumables.get("lic") for g in platform.node_groups)
    jobs = []
    for i in range(draw(st.integers(3, 30))):
        run = draw(st.integers(0, 40))
        extras: dict[str, Any] = {}
        if gpus and draw(st.integers(0, 3)) == 0:
            extras["gpus"] = draw(st.integers(1, 2))
        if lic and draw(st.integers(0, 4)) == 0:
            extras["lic"] = 1
        if draw(st.integers(0, 4)) == 0:
            extras["nodes"] = draw(st.integers(1, 2))
        memory_gib = draw(st.sampled_from([None, 0.5, 1, 2]))
        if memory_gib is None and draw(st.integers(0, 2)) == 0:
            # request.memory: per node (exactly that on each node) when the node
            # count is given, else a job total spread over the cores
            extras["memory"] = draw(st.sampled_from([GIB // 2, 3 * GIB // 2, 3 * GIB]))
        jobs.append(
            check.job(
                i + 1,
                draw(st.integers(0, 60)),
                draw(st.integers(1, cores)),
                run,
                memory_gib=memory_gib,
                requested_time=max(1, run + draw(st.integers(-10, 30))),
                **extras,
            )
        )
    note(repr([(j.submit_time, j.requested_processors, j.run_time, j.extras) for j in jobs]))
    return check.workload(*jobs)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_compiled_pass_gives_the_python_schedule_and_allocations(data: Any) -> None:
    platform = data.draw(shared_platforms())
    workload = data.draw(workloads(platform))
    allocation = data.draw(st.sampled_from(COVERED))
    kill = data.draw(st.booleans())
    # Policies whose arrivals land in the middle of the queue, and one that re-keys.
    policy = data.draw(st.sampled_from(["fcfs", "sjf", "ljf", "wfp3"]))
    # Predictors whose corrections raise running jobs' estimates during the run.
    estimator = data.draw(st.sampled_from(["requested", "requested", "easy++", "learned"]))
    python, compiled = both(
        workload, platform, allocation, kill=kill, log_reservations=True, policy=policy,
        estimator=estimator,
    )  # fmt: skip
    assert_same(python, compiled)
    check.check_node_schedule(compiled)
    assert compiled.state.reservation_log == python.state.reservation_log


def test_a_memory_bound_head_is_not_delayed_by_the_compiled_pass() -> None:
    """Golden: two nodes of 4 cores and 4 GiB; job 1 holds node 0's memory; the
    head (job 2) needs a whole node's memory; job 3 (short) backfills, job 4 (long,
    memory on node 1) must not."""
    platform = Platform(
        (NodeGroup("n", 2, 4, memory=4 * GIB),), (Partition("p", ("n",), sharing="shared"),)
    )
    w = check.workload(
        check.job(1, 0, 4, 100, memory_gib=1),
        check.job(2, 1, 4, 10, memory_gib=1.5),  # 6 GiB: no node holds it
        check.job(3, 2, 2, 5, memory_gib=1),
        check.job(4, 3, 2, 500, memory_gib=1),
    )
    python, compiled = both(w, platform, "first-fit")
    assert_same(python, compiled)
    # Job 2 never fits (6 GiB on 4 GiB nodes over at most 4 cores... it spreads):
    # whatever its start, job 4 may not delay it.
    assert compiled.start(4) >= compiled.start(2) or compiled.start(4) + 500 <= compiled.start(2)


@pytest.mark.realdata
@pytest.mark.parametrize(
    ("allocation", "policy"),
    [("first-fit", "fcfs"), ("best-fit", "fcfs"), ("spread", "fcfs"), ("first-fit", "sjf")],
)
def test_real_logs_cut_into_nodes_give_the_same_schedule(
    swf_dir: Path, allocation: str, policy: str
) -> None:
    ricc = schedlab.read(swf_dir / "RICC-2010-2.swf.gz")
    w = schedlab.Workload(ricc.header.copy(), columns=ricc.to_arrays().take(np.arange(2500)))
    platform = Platform(
        (NodeGroup("node", 1024, 8, memory=12 * GIB),),
        (Partition("all", ("node",), sharing="shared"),),
    )
    python, compiled = both(w, platform, allocation, policy=policy)
    assert_same(python, compiled)
    waits = compiled.result.workload.to_arrays()["wait_time"]
    assert (waits > 0).sum() > 100  # a queue formed: the scan was exercised


@pytest.mark.realdata
@pytest.mark.parametrize(
    ("log", "jobs", "group"),
    [
        ("RICC-2010-2.swf.gz", 2000, NodeGroup("nodes", 1024, 8)),
        ("lublin_256.swf", 1000, NodeGroup("nodes", 256, 1)),
        ("KTH-SP2-1996-2.1-cln.swf.gz", 3000, NodeGroup("nodes", 25, 4, memory=8 * GIB)),
    ],
)
def test_exclusive_nodes_on_real_logs_give_the_same_schedule(
    swf_dir: Path, log: str, jobs: int, group: NodeGroup
) -> None:
    """Exclusive nodes (what ``schedlab platform infer`` writes for an SWF log, the
    first two): the compiled pass takes each job's nodes whole, with the Python
    pass's schedule, nodes and amounts."""
    w, platform = check.first_jobs_on_exclusive_nodes(swf_dir / log, jobs, group)
    python, compiled = both(w, platform, "first-fit")
    assert_same(python, compiled)
    check.assert_whole_nodes_and_a_queue(compiled)


@pytest.mark.realdata
@pytest.mark.parametrize("estimator", ["easy++", "learned"])
@pytest.mark.parametrize(
    ("log", "jobs"), [("KTH-SP2-1996-2.1-cln.swf.gz", 1500), ("RICC-2010-2.swf.gz", 3000)]
)
def test_prediction_corrections_stay_on_the_compiled_pass(
    swf_dir: Path, estimator: str, log: str, jobs: int
) -> None:
    """A correction raising a running job's estimate moves the job among the
    kernel's running jobs (``move_running``): the compiled pass carries on, with the
    Python pass's schedule and allocations."""
    trace = schedlab.read(swf_dir / log)
    w = schedlab.Workload(trace.header.copy(), columns=trace.to_arrays().take(np.arange(jobs)))
    if log.startswith("KTH"):
        group = NodeGroup("node", 25, 4, memory=8 * GIB)
    else:
        group = NodeGroup("node", 1024, 8, memory=12 * GIB)
    platform = Platform((group,), (Partition("all", ("node",), sharing="shared"),))
    python, compiled = both(w, platform, "first-fit", estimator=estimator)
    assert_same(python, compiled)
    impl = compiled.engine.strategy._compiled
    assert not impl.left  # never handed over to the Python pass
    assert compiled.result.stats["corrections"] > 1000
    assert compiled.result.stats["corrections"] == python.result.stats["corrections"]


def test_runs_outside_the_cover_take_the_python_pass() -> None:
    two = Platform(
        (NodeGroup("n", 2, 2),),
        (Partition("p", ("n",), sharing="shared"), Partition("q", ("n",), sharing="shared")),
    )
    w = check.workload(*(check.job(i + 1, i, 2, 10) for i in range(6)))
    with pytest.raises(SimulationError, match="kernel=compiled"):
        check.run(w, two, "easy", backfill_options={"kernel": "compiled"})
    r = check.run(w, two, "easy")
    assert r.engine.strategy.kernel_name == "python"
    shared = Platform((NodeGroup("n", 2, 2),), (Partition("p", ("n",), sharing="shared"),))
    with pytest.raises(SimulationError, match="kernel=compiled"):
        check.run(
            w, shared, "easy", allocation="contiguous", backfill_options={"kernel": "compiled"}
        )


@pytest.mark.parametrize("seed", range(6))
def test_long_random_runs_on_a_small_machine_reuse_the_allocation_pool(seed: int) -> None:
    """Hundreds of jobs on 3 nodes: the kernel's pool of allocation rows fills and
    is compacted many times over; the schedule stays the Python one."""
    rng = np.random.default_rng(seed)
    platform = Platform(
        (NodeGroup("a", 2, 4, memory=8 * GIB, gpus=1), NodeGroup("b", 1, 2, memory=4 * GIB)),
        (Partition("p", ("a", "b"), sharing="shared"),),
    )
    jobs = []
    for i in range(300):
        run = int(rng.integers(1, 50))
        extras: dict[str, Any] = {}
        if rng.integers(0, 6) == 0:
            extras["gpus"] = 1
        if rng.integers(0, 6) == 0:
            extras["nodes"] = int(rng.integers(1, 3))
        jobs.append(
            check.job(
                i + 1, float(i * 3), int(rng.integers(1, 9)), run,
                memory_gib=[None, 0.5, 1, 2][int(rng.integers(0, 4))],
                requested_time=run + int(rng.integers(0, 40)), **extras,
            )
        )  # fmt: skip
    w = check.workload(*jobs)
    python, compiled = both(w, platform, COVERED[seed % 3])
    assert_same(python, compiled)
    check.check_node_schedule(compiled)


def test_the_allocation_pool_keeps_every_running_jobs_rows_when_compacted() -> None:
    """A full pool moves the running jobs' rows to its front (``_pool_front``, then
    ``_store`` keeps the new job's rows, as ``_launch`` does); rows of a job ending
    early may lie after rows of one ending late, and none may be overwritten."""
    from schedlab.policies.backfill import easy_nodes_kernels as kn

    dims = 2
    pool_nodes = np.full(12, -1, dtype=np.int64)
    pool_amt = np.zeros((12, dims), dtype=np.int64)
    a_off = np.zeros(4, dtype=np.int64)
    a_len = np.zeros(4, dtype=np.int64)
    meta = np.zeros(kn.N_META, dtype=np.int64)
    # Job 0 (ends first) holds rows 6..8, job 1 rows 2..4; rows 0, 1 and 5 are stale.
    rows = {0: (6, [10, 11, 12]), 1: (2, [20, 21, 22])}
    for j, (off, nodes) in rows.items():
        a_off[j], a_len[j] = off, len(nodes)
        pool_nodes[off : off + len(nodes)] = nodes
        pool_amt[off : off + len(nodes)] = [[n, -n] for n in nodes]
    meta[kn.M_POOL] = 9
    meta[kn.M_RUNNING] = 2
    r_job = np.array([0, 1, 0, 0], dtype=np.int64)  # by estimated end
    new_nodes = np.array([30, 31, 32, 33], dtype=np.int64)
    new_amt = np.array([[30, -30], [31, -31], [32, -32], [33, -33]], dtype=np.int64)
    assert meta[kn.M_POOL] + 4 > len(pool_nodes)  # full: ``_launch`` moves the rows first
    keys = np.zeros(4, dtype=np.int64)  # scratch
    meta[kn.M_POOL] = kn._pool_front(pool_nodes, pool_amt, a_off, a_len, 2, r_job, keys)
    kn._store(pool_nodes, pool_amt, a_off, a_len, meta, 2, 4, new_nodes, new_amt)
    for j, (_, nodes) in rows.items():
        o, n = a_off[j], a_len[j]
        assert pool_nodes[o : o + n].tolist() == nodes
        assert pool_amt[o : o + n].tolist() == [[v, -v] for v in nodes]
    o = a_off[2]
    assert pool_nodes[o : o + 4].tolist() == [30, 31, 32, 33]
    assert meta[kn.M_POOL] == 10
