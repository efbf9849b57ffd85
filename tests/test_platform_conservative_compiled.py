"""The compiled node-level conservative pass
(:mod:`schedlab.policies.backfill.conservative_nodes_kernels`) against the Python
pass (:class:`~schedlab.policies.backfill.conservative_nodes.NodeConservative`):
the same start time and allocation (nodes and amounts) for every job and the same
reservations, pass by pass, on random shared platforms with memory, GPUs and a
consumable and random workloads (node counts, memory per core, GPUs, overruns),
under each allocation policy the kernel covers and several priority policies, and
on the first jobs of RICC cut into nodes; the compiled schedules also pass the
machine invariants. Runs outside the kernel's cover take the Python pass, and
``kernel=compiled`` there is an error.
"""

from __future__ import annotations

import importlib.util
from fractions import Fraction
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
    """The Python and the compiled run of the same input."""
    runs = [
        check.run(
            workload, platform, "conservative", allocation=allocation,
            backfill_options={"kernel": kernel}, **kwargs,
        )
        for kernel in ("python", "compiled")
    ]  # fmt: skip
    assert runs[0].engine.strategy.kernel_name == "python"
    assert runs[1].engine.strategy.kernel_name.startswith("compiled")  # may hand over
    return runs[0], runs[1]


def assert_same(python: Any, compiled: Any) -> None:
    assert compiled.starts() == python.starts()
    assert compiled.allocations.keys() == python.allocations.keys()
    for j, (nodes, amounts) in python.allocations.items():
        got_nodes, got_amounts = compiled.allocations[j]
        assert got_nodes.tolist() == nodes.tolist(), f"job index {j}: nodes"
        assert got_amounts.tolist() == amounts.tolist(), f"job index {j}: amounts"


@st.composite
def shared_platforms(draw: Any, extras: bool = True) -> Platform:
    """One partition of random node groups, shared or now and then exclusive; with
    ``extras``, GPUs and a consumable too (else cores and memory only)."""
    groups = tuple(
        NodeGroup(
            f"g{g}",
            count=draw(st.integers(1, 4)),
            cores=draw(st.integers(1, 4)),
            memory=draw(st.sampled_from([None, 2 * GIB, 4 * GIB])),
            gpus=draw(st.integers(0, 2)) if extras else 0,
            consumables={"lic": draw(st.integers(0, 2))} if extras else {},
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


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_compiled_pass_gives_the_python_schedule_allocations_and_reservations(
    data: Any,
) -> None:
    platform = data.draw(shared_platforms())
    workload = data.draw(workloads(platform))
    allocation = data.draw(st.sampled_from(COVERED))
    kill = data.draw(st.booleans())
    # Policies whose arrivals land in the middle of the queue, and one that re-keys.
    policy = data.draw(st.sampled_from(["fcfs", "sjf", "ljf", "wfp3"]))
    python, compiled = both(
        workload, platform, allocation, kill=kill, log_reservations=True, policy=policy
    )
    assert_same(python, compiled)
    check.check_node_schedule(compiled)
    assert compiled.state.reservation_log == python.state.reservation_log


@st.composite
def long_queues(draw: Any, platform: Platform, flexible: bool = False) -> Any:
    """Many jobs arriving in bursts on a small machine, most ending well before
    their estimates (many passes after an end, long queues to compress), some
    overrunning them (stale reservations); with ``flexible``, jobs asking cores
    and memory only (no GPUs, no fixed node count)."""
    cores = sum(g.cores * g.count for g in platform.node_groups)
    gpus = any(g.gpus for g in platform.node_groups) and not flexible
    jobs = []
    for i in range(draw(st.integers(20, 60))):
        run = draw(st.integers(1, 30))
        extras: dict[str, Any] = {}
        if gpus and draw(st.integers(0, 4)) == 0:
            extras["gpus"] = 1
        if not flexible and draw(st.integers(0, 5)) == 0:
            extras["nodes"] = draw(st.integers(1, 2))
        slack = draw(st.sampled_from([0, 5, 20, 60, 200, -5]))
        jobs.append(
            check.job(
                i + 1,
                draw(st.integers(0, 8)) * 5,
                draw(st.integers(1, cores)),
                run,
                memory_gib=draw(st.sampled_from([None, 0.5, 2])),
                requested_time=max(1, run + slack),
                **extras,
            )
        )
    note(repr([(j.submit_time, j.requested_processors, j.run_time, j.extras) for j in jobs]))
    return check.workload(*jobs)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_long_queues_with_many_early_ends_compress_the_same(data: Any) -> None:
    """Long queues compressed after many early ends, with stale reservations:
    the compiled pass against the Python pass, schedules, allocations and every
    reservation made."""
    platform = data.draw(shared_platforms())
    workload = data.draw(long_queues(platform))
    allocation = data.draw(st.sampled_from(COVERED))
    policy = data.draw(st.sampled_from(["fcfs", "sjf", "wfp3"]))
    python, compiled = both(
        workload, platform, allocation, kill=data.draw(st.booleans()),
        log_reservations=True, policy=policy,
    )  # fmt: skip
    assert_same(python, compiled)
    check.check_node_schedule(compiled)
    assert compiled.state.reservation_log == python.state.reservation_log


@pytest.mark.parametrize("seed", range(4))
def test_long_random_runs_on_a_small_machine_reuse_the_allocation_pool(seed: int) -> None:
    """Hundreds of jobs on 3 nodes, many overrunning their estimates (stale
    reservations): the kernel's pool of allocation rows fills and is compacted
    many times over; the schedule and reservations stay the Python ones."""
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
                requested_time=max(1, run + int(rng.integers(-20, 40))), **extras,
            )
        )  # fmt: skip
    w = check.workload(*jobs)
    python, compiled = both(w, platform, COVERED[seed % 3], log_reservations=True)
    assert_same(python, compiled)
    assert compiled.state.reservation_log == python.state.reservation_log
    check.check_node_schedule(compiled)


class LateFractions:
    """FCFS whose keys turn into ``Fraction`` (not a plain number) from a job on:
    the compiled pass hands the run to the Python pass there, mid-queue."""

    name = "late-fractions"

    def __init__(self, first: int) -> None:
        self.first = first

    def bind(self, table: Any) -> None:
        self.submit = table.submit

    def key(self, job: int, now: float) -> Any:
        s = self.submit[job]
        return Fraction(s) if job >= self.first else s


@pytest.mark.parametrize("seed", range(3))
def test_a_hand_over_mid_run_keeps_the_reservations(seed: int) -> None:
    """The Python pass takes over the kernel's reservation book (starts,
    allocations, stale flags) and the schedule and reservations stay the Python
    ones."""
    rng = np.random.default_rng(100 + seed)
    platform = Platform(
        (NodeGroup("a", 3, 4, memory=8 * GIB),), (Partition("p", ("a",), sharing="shared"),)
    )
    jobs = []
    for i in range(120):
        run = int(rng.integers(1, 60))
        jobs.append(
            check.job(
                i + 1, float(i * 2), int(rng.integers(1, 9)), run,
                memory_gib=[None, 0.5, 1, 2][int(rng.integers(0, 4))],
                requested_time=max(1, run + int(rng.integers(-20, 40))),
            )
        )  # fmt: skip
    w = check.workload(*jobs)
    python, compiled = both(
        w, platform, COVERED[seed], log_reservations=True, policy=LateFractions(80)
    )
    assert_same(python, compiled)
    assert compiled.state.reservation_log == python.state.reservation_log
    impl = compiled_impl(compiled)
    assert impl.left
    booked, _stale = impl.handed_over
    assert booked > 5  # a queue with reservations was handed over


@pytest.mark.realdata
@pytest.mark.parametrize(
    ("allocation", "policy", "jobs", "nodes"),
    [
        # The first RICC jobs on RICC's 1,024 nodes (a queue forms after ~1,000):
        ("first-fit", "fcfs", 1100, 1024),
        # ... and on fewer nodes (a long queue at once; the Python pass is slow).
        ("best-fit", "fcfs", 150, 64),
        ("spread", "sjf", 150, 64),
    ],
)
def test_ricc_cut_into_nodes_gives_the_same_schedule(
    swf_dir: Path, allocation: str, policy: str, jobs: int, nodes: int
) -> None:
    ricc = schedlab.read(swf_dir / "RICC-2010-2.swf.gz")
    w = schedlab.Workload(ricc.header.copy(), columns=ricc.to_arrays().take(np.arange(jobs)))
    platform = Platform(
        (NodeGroup("node", nodes, 8, memory=12 * GIB),),
        (Partition("all", ("node",), sharing="shared"),),
    )
    python, compiled = both(w, platform, allocation, policy=policy)
    assert_same(python, compiled)
    waits = compiled.result.workload.to_arrays()["wait_time"]
    assert (waits > 0).sum() > 100  # a queue formed: reservations were planned


@pytest.mark.realdata
@pytest.mark.parametrize(
    ("log", "jobs", "group"),
    [
        ("lublin_256.swf", 600, NodeGroup("nodes", 256, 1)),
        ("KTH-SP2-1996-2.1-cln.swf.gz", 800, NodeGroup("nodes", 25, 4, memory=8 * GIB)),
    ],
)
def test_exclusive_nodes_on_real_logs_give_the_same_schedule(
    swf_dir: Path, log: str, jobs: int, group: NodeGroup
) -> None:
    """Exclusive nodes (``schedlab platform infer``'s guess for an SWF log): the
    compiled pass reserves whole nodes, with the Python pass's schedule, nodes and
    amounts."""
    w, platform = check.first_jobs_on_exclusive_nodes(swf_dir / log, jobs, group)
    python, compiled = both(w, platform, "first-fit")
    assert_same(python, compiled)
    check.assert_whole_nodes_and_a_queue(compiled)


def compiled_impl(run: Any) -> Any:
    """The compiled pass of a run (the strategy routes ``schedule`` to it)."""
    return run.engine.strategy.schedule.__self__


@pytest.mark.realdata
@pytest.mark.parametrize(
    ("estimator", "sharing"),
    [("easy++", "shared"), ("learned", "shared"), ("easy++", "exclusive")],
)
def test_prediction_corrections_stay_on_the_compiled_pass(
    swf_dir: Path, estimator: str, sharing: str
) -> None:
    """A correction raising a running job's estimate moves its end in the kernel's
    copy; the compiled pass goes on with the Python pass's schedule, allocations
    and reservations, pass by pass."""
    kth = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    w = schedlab.Workload(kth.header.copy(), columns=kth.to_arrays().take(np.arange(600)))
    platform = Platform(
        (NodeGroup("node", 25, 4, memory=8 * GIB),),
        (Partition("all", ("node",), sharing=sharing),),
    )
    python, compiled = both(w, platform, "first-fit", estimator=estimator, log_reservations=True)
    assert_same(python, compiled)
    assert compiled.state.reservation_log == python.state.reservation_log
    assert not compiled_impl(compiled).left
    corrections = compiled.result.stats["corrections"]
    assert corrections == python.result.stats["corrections"] > 50


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_corrections_on_random_platforms_stay_compiled_and_exact(data: Any) -> None:
    """Random platforms and long queues of cores-and-memory jobs under a predictor
    with Tsafrir's corrections: the compiled pass never leaves, and gives the
    Python pass's schedule, allocations and reservations."""
    platform = data.draw(shared_platforms(extras=False))
    workload = data.draw(long_queues(platform, flexible=True))
    allocation = data.draw(st.sampled_from(COVERED))
    estimator = data.draw(st.sampled_from(["easy++", "learned"]))
    python, compiled = both(
        workload, platform, allocation, estimator=estimator, log_reservations=True
    )
    assert_same(python, compiled)
    check.check_node_schedule(compiled)
    assert compiled.state.reservation_log == python.state.reservation_log
    assert not compiled_impl(compiled).left


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_corrections_with_gpus_or_node_counts_stay_compiled_and_exact(data: Any) -> None:
    """Platforms with GPUs and consumables, jobs with GPUs and fixed node counts,
    under a predictor with corrections: the compiled pass never leaves, with the
    Python pass's schedule, allocations and reservations (a node over-committed
    in the profile gives no core, GPU or consumable on either)."""
    platform = data.draw(shared_platforms())
    workload = data.draw(long_queues(platform))
    allocation = data.draw(st.sampled_from(COVERED))
    python, compiled = both(
        workload, platform, allocation, estimator="easy++", log_reservations=True
    )
    assert_same(python, compiled)
    check.check_node_schedule(compiled)
    assert compiled.state.reservation_log == python.state.reservation_log
    assert not compiled_impl(compiled).left


def test_an_over_committed_node_gives_nothing_and_hides_nothing() -> None:
    """On a profile's free amounts a node may be over-committed (a running job's
    estimate raised under reservations planned before): it gives nothing, and the
    other nodes' free amounts still hold the job (the screen by sums counts from
    zero then)."""
    from schedlab.policies.allocation.first_fit import FirstFit
    from schedlab.sim.machine import NodeMachine
    from schedlab.sim.resources import Demand

    platform = Platform((NodeGroup("n", 3, 4),), (Partition("p", ("n",), sharing="shared"),))
    machine = NodeMachine(platform, FirstFit())
    free = machine.free.copy()
    free[:, 0] = (-1, 2, 3)
    demand = Demand(total=np.array([5, 0, 0]), memory_per_core=0)
    alloc = machine.allocate(demand, 0, free)
    assert alloc is not None
    assert alloc.nodes.tolist() == [1, 2] and alloc.amounts[:, 0].tolist() == [2, 3]
    assert machine.allocate(Demand(total=np.array([6, 0, 0]), memory_per_core=0), 0, free) is None
    # A node over-committed in cores but with a free GPU is usable for a GPU job:
    # it gives the GPU and no core (never a negative number of them).
    gpus = Platform((NodeGroup("n", 3, 4, gpus=1),), (Partition("p", ("n",), sharing="shared"),))
    machine = NodeMachine(gpus, FirstFit())
    free = machine.free.copy()
    free[:, 0] = (-1, 2, 4)
    free[:, 2] = (1, 0, 0)
    alloc = machine.allocate(Demand(total=np.array([3, 0, 1]), memory_per_core=0), 0, free)
    assert alloc is not None
    assert alloc.nodes.tolist() == [0, 1, 2]
    assert alloc.amounts.tolist() == [[0, 0, 1], [2, 0, 0], [1, 0, 0]]


def test_runs_outside_the_cover_take_the_python_pass() -> None:
    two = Platform(
        (NodeGroup("n", 2, 2),),
        (Partition("p", ("n",), sharing="shared"), Partition("q", ("n",), sharing="shared")),
    )
    w = check.workload(*(check.job(i + 1, i, 2, 10) for i in range(6)))
    with pytest.raises(SimulationError, match="kernel=compiled"):
        check.run(w, two, "conservative", backfill_options={"kernel": "compiled"})
    r = check.run(w, two, "conservative")
    assert r.engine.strategy.kernel_name == "python"
    shared = Platform((NodeGroup("n", 2, 2),), (Partition("p", ("n",), sharing="shared"),))
    with pytest.raises(SimulationError, match="kernel=compiled"):
        check.run(
            w, shared, "conservative", allocation="contiguous",
            backfill_options={"kernel": "compiled"},
        )  # fmt: skip
