"""Hand-made node-level schedules whose answers are worked out by hand (issue 14's
correctness evidence): memory and GPUs as the bottleneck, partitions that do not
share nodes, exclusive and shared nodes, priority tiers, each allocation policy's
node choice, and the exclusions a platform adds, with their reasons."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from schedlab.errors import SimulationError
from schedlab.platform import NodeGroup, Partition, Platform
from schedlab.sim.resources import Demand, NodeView

_spec = importlib.util.spec_from_file_location(
    "platform_sim_check", Path(__file__).with_name("platform_sim_check.py")
)
assert _spec is not None and _spec.loader is not None
check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check)
job, workload, run = check.job, check.workload, check.run

GIB = 2**30


def one_partition(*groups: NodeGroup, sharing: str = "shared", **limits: Any) -> Platform:
    names = tuple(g.name for g in groups)
    return Platform(groups, (Partition("p", names, sharing=sharing, **limits),))


# --------------------------------------------------------------------- memory
#: One node of 8 cores and 8 GiB; A holds 6 GiB, so the head B (7 GiB) waits for A.
MEMORY_NODE = one_partition(NodeGroup("n", 1, 8, memory=8 * GIB))
MEMORY_JOBS = workload(
    job(1, 0, 4, 100, memory_gib=1.5),  # A: 4 cores, 6 GiB, until 100
    job(2, 1, 2, 100, memory_gib=3.5),  # B (head): 7 GiB, only 2 GiB free -> waits
    job(3, 2, 1, 200, memory_gib=1.5),  # C: fits now, but leaves 6.5 GiB at 100
    job(4, 3, 1, 50, memory_gib=0.5),  # D: ends by the shadow time 100
    job(5, 4, 1, 300, memory_gib=0.5),  # E: past 100, but B still has 7 GiB then
)


def test_easy_does_not_backfill_a_job_whose_memory_would_delay_the_head() -> None:
    r = run(MEMORY_JOBS, MEMORY_NODE, "easy")
    check.check_node_schedule(r)
    # C fits at t=2 (1 core, 1.5 of 2 GiB free) but at B's reservation (100) it would
    # leave 6.5 GiB < 7: EASY keeps it waiting until B ends; D and E backfill.
    assert r.starts() == {1: 0, 2: 100, 3: 200, 4: 3, 5: 4}


def test_the_single_pool_easy_backfills_it_because_it_sees_cores_only() -> None:
    single = schedlab.simulate(MEMORY_JOBS, backfill="easy", procs=8, progress=False)
    # Memory ignored: B starts at once, C too; E waits for cores only (D ends at 53).
    assert single.start.tolist() == [0, 1, 2, 3, 53]


def test_without_backfilling_the_memory_bound_head_blocks_the_queue() -> None:
    r = run(MEMORY_JOBS, MEMORY_NODE, "none")
    check.check_node_schedule(r)
    # B starts at 100 (7 GiB); C needs 1.5 of the 0.5 GiB left: it and the jobs
    # behind it wait for B's end.
    assert r.starts() == {1: 0, 2: 100, 3: 200, 4: 200, 5: 200}


def test_conservative_keeps_the_memory_reservations() -> None:
    r = run(MEMORY_JOBS, MEMORY_NODE, "conservative")
    check.check_node_schedule(r)
    # B reserved at 100 with 7 GiB; C (1.5 GiB for 200 s) cannot run beside A and B
    # from 100 on, so it is reserved after B; D and E fit beside every reservation.
    assert r.starts() == {1: 0, 2: 100, 3: 200, 4: 3, 5: 4}


# ----------------------------------------------------------------------- GPUs
GPU_NODE = one_partition(NodeGroup("g", 1, 8, gpus=2))
GPU_JOBS = workload(
    job(1, 0, 2, 100, gpus=2),  # A: both GPUs until 100
    job(2, 1, 1, 50, gpus=1),  # B: waits for a GPU while 6 cores are free
    job(3, 2, 4, 10),  # C: cores only
    job(4, 3, 1, 500, gpus=1),  # D: another GPU job
)


@pytest.mark.parametrize("backfill", ["easy", "conservative"])
def test_a_gpu_job_waits_while_cores_are_free_and_cpu_jobs_backfill(backfill: str) -> None:
    r = run(GPU_JOBS, GPU_NODE, backfill)
    check.check_node_schedule(r)
    assert r.starts() == {1: 0, 2: 100, 3: 2, 4: 100}
    assert r.state.machine.capacity[0].tolist()[:3] == [8, schedlab.sim.resources.UNBOUNDED, 2]


def test_without_backfilling_the_cpu_job_waits_behind_the_gpu_job() -> None:
    r = run(GPU_JOBS, GPU_NODE, "none")
    check.check_node_schedule(r)
    assert r.starts() == {1: 0, 2: 100, 3: 100, 4: 100}


# ----------------------------------------------------------------- partitions
TWO_PARTITIONS = """
[node_groups.a]
count = 1
cores = 4

[node_groups.b]
count = 1
cores = 4

[partitions.pa]
nodes = ["a"]
sharing = "shared"

[partitions.pb]
nodes = ["b"]
sharing = "shared"
"""

PARTITION_JOBS = workload(
    job(1, 0, 4, 100, partition="pa"),  # fills pa
    job(2, 1, 2, 10, partition="pa"),  # blocked in pa until 100
    job(3, 2, 4, 50, partition="pb"),  # pb is free: starts although pa is blocked
    job(4, 3, 1, 10, partition="pb"),  # waits for pb's job (ends 52)
    job(5, 4, 1, 10, partition="pa"),  # behind job 2 in pa
)


@pytest.mark.parametrize("backfill", ["none", "easy", "conservative"])
def test_two_partitions_without_shared_nodes_schedule_their_own_queues(
    tmp_path: Path, backfill: str
) -> None:
    platform = check.write_platform(tmp_path, TWO_PARTITIONS)
    r = run(PARTITION_JOBS, platform, backfill)
    check.check_node_schedule(r)
    assert r.starts() == {1: 0, 2: 100, 3: 2, 4: 52, 5: 100}
    for number in (1, 2, 5):
        assert r.nodes(number) == ["a[0]"]
    for number in (3, 4):
        assert r.nodes(number) == ["b[0]"]


def test_on_one_pool_the_blocked_job_would_block_the_other_partitions_jobs() -> None:
    single = schedlab.simulate(PARTITION_JOBS, backfill="none", procs=8, progress=False)
    # One FCFS queue of 8 processors: job 2 fits beside job 1, and so on: the
    # partitions above are what keeps job 2 waiting and job 3 running.
    assert single.start.tolist() == [0, 1, 11, 61, 61]


def test_queues_map_jobs_to_partitions(tmp_path: Path) -> None:
    text = TWO_PARTITIONS.replace(
        '[partitions.pb]\nnodes = ["b"]', '[partitions.pb]\nnodes = ["b"]\nqueues = ["fast"]'
    )
    platform = check.write_platform(tmp_path, text)
    header = schedlab.Header()
    header.add("Queue", "1 fast")
    header.add("Queue", "2 pa")
    jobs = [
        schedlab.Job(job_number=1, submit_time=0, run_time=10, requested_time=10,
                     requested_processors=4, queue_number=1),
        schedlab.Job(job_number=2, submit_time=0, run_time=10, requested_time=10,
                     requested_processors=4, queue_number=2),
        schedlab.Job(job_number=3, submit_time=0, run_time=10, requested_time=10,
                     requested_processors=4, queue_number=1),
    ]  # fmt: skip
    r = run(schedlab.Workload.from_jobs(jobs, header=header), platform, "easy")
    check.check_node_schedule(r)
    assert r.nodes(1) == ["b[0]"] and r.nodes(2) == ["a[0]"] and r.nodes(3) == ["b[0]"]
    assert r.starts() == {1: 0, 2: 0, 3: 10}


# ------------------------------------------------------------ exclusive/shared
@pytest.mark.parametrize(
    ("sharing", "starts", "nodes"),
    [
        ("shared", {1: 0, 2: 0, 3: 0}, {1: ["n[0]"], 2: ["n[0]"], 3: ["n[0]"]}),
        ("exclusive", {1: 0, 2: 0, 3: 100}, {1: ["n[0]"], 2: ["n[1]"], 3: ["n[0]"]}),
    ],
)
def test_exclusive_nodes_take_one_job_each_shared_nodes_pack(
    sharing: str, starts: dict[int, int], nodes: dict[int, list[str]]
) -> None:
    platform = one_partition(NodeGroup("n", 2, 4), sharing=sharing)
    w = workload(job(1, 0, 1, 100), job(2, 0, 1, 100), job(3, 0, 1, 100))
    for backfill in ("none", "easy", "conservative"):
        r = run(w, platform, backfill)
        check.check_node_schedule(r)
        assert r.starts() == starts, backfill
        assert {n: r.nodes(n) for n in (1, 2, 3)} == nodes, backfill


def test_an_exclusive_job_holds_every_dimension_of_its_nodes() -> None:
    platform = one_partition(NodeGroup("n", 2, 4, memory=8 * GIB, gpus=1), sharing="exclusive")
    r = run(workload(job(1, 0, 1, 10, memory_gib=1)), platform, "easy")
    check.check_node_schedule(r)
    nodes, amounts = r.allocations[0]
    assert nodes.tolist() == [0] and amounts[0, :3].tolist() == [4, 8 * GIB, 1]


def test_exclusive_nodes_respect_memory_per_core() -> None:
    # 4 cores at 4 GiB each need 16 GiB: two whole 8-GiB nodes, not one.
    platform = one_partition(NodeGroup("n", 3, 4, memory=8 * GIB), sharing="exclusive")
    w = workload(job(1, 0, 4, 10, memory_gib=4), job(2, 0, 4, 10, memory_gib=1))
    r = run(w, platform, "easy")
    check.check_node_schedule(r)
    assert r.nodes(1) == ["n[0]", "n[1]"]
    assert r.nodes(2) == ["n[2]"]
    assert r.starts() == {1: 0, 2: 0}


# ---------------------------------------------------------------- priority tiers
def test_a_higher_tier_partition_goes_first_on_shared_nodes() -> None:
    platform = Platform(
        (NodeGroup("n", 1, 4),),
        (
            Partition("low", ("n",), sharing="shared"),
            Partition("high", ("n",), sharing="shared", priority_tier=1),
        ),
    )
    w = workload(
        job(1, 0, 4, 100, partition="low"),
        job(2, 1, 4, 10, partition="low"),  # first in FCFS order
        job(3, 2, 4, 10, partition="high"),  # but its partition's tier is higher
    )
    for backfill in ("none", "easy"):
        r = run(w, platform, backfill)
        check.check_node_schedule(r)
        assert r.starts() == {1: 0, 2: 110, 3: 100}, backfill
    # Conservative backfilling never delays a reservation: job 2 was promised 100 at
    # its arrival, before job 3 came; the tier orders the planning, not a preemption.
    r = run(w, platform, "conservative")
    check.check_node_schedule(r)
    assert r.starts() == {1: 0, 2: 100, 3: 110}
    flat = Platform(
        platform.node_groups,
        (Partition("low", ("n",), sharing="shared"), Partition("high", ("n",), sharing="shared")),
    )
    assert run(w, flat, "easy").starts() == {1: 0, 2: 100, 3: 110}


# ----------------------------------------------------------- allocation policies
#: Free cores [1, 3, 4, 2] on four 4-core nodes.
FREE = np.array([[1, 0, 0], [3, 0, 0], [4, 0, 0], [2, 0, 0]], dtype=np.int64)
CAPACITY = np.array([[4, 0, 0]] * 4, dtype=np.int64)


def allocate(name: str, demand: Demand, free: np.ndarray = FREE) -> tuple[list[int], list[int]]:
    factory = schedlab.registry.get_registry().get("allocation", name).factory
    view = NodeView(free, CAPACITY, np.arange(4), exclusive=False)
    alloc = factory().allocate(view, demand)
    assert alloc is not None
    return alloc.nodes.tolist(), alloc.amounts[:, 0].tolist()


def flexible(cores: int) -> Demand:
    return Demand(np.array([cores, 0, 0]), 0)


def fixed(nodes: int, per_node: int) -> Demand:
    return Demand(np.array([nodes * per_node, 0, 0]), 0, nodes, np.array([per_node, 0, 0]))


@pytest.mark.parametrize(
    ("policy", "flex", "one_node"),
    [
        ("first-fit", ([0, 1], [1, 2]), [1]),  # lowest nodes first
        ("best-fit", ([0, 3], [1, 2]), [1]),  # fullest nodes first (1, then 2 free)
        ("spread", ([2], [3]), [2]),  # emptiest node first
        ("contiguous", ([0, 1], [1, 2]), [1]),  # lowest consecutive run
    ],
)
def test_each_allocation_policy_chooses_its_nodes(
    policy: str, flex: tuple[list[int], list[int]], one_node: list[int]
) -> None:
    assert allocate(policy, flexible(3)) == flex
    assert allocate(policy, fixed(1, 3))[0] == one_node


def test_contiguous_skips_a_gap_first_fit_does_not() -> None:
    free = np.array([[4, 0, 0], [0, 0, 0], [4, 0, 0], [4, 0, 0]], dtype=np.int64)
    assert allocate("first-fit", flexible(8), free) == ([0, 2], [4, 4])
    assert allocate("contiguous", flexible(8), free) == ([2, 3], [4, 4])
    assert allocate("contiguous", fixed(2, 4), free)[0] == [2, 3]


@pytest.mark.parametrize(
    ("policy", "node"),
    [("first-fit", "b[0]"), ("best-fit", "d[0]"), ("spread", "c[0]"), ("contiguous", "b[0]")],
)
def test_each_allocation_policy_in_a_simulation(policy: str, node: str) -> None:
    # Nodes of 2, 4, 8 and 3 cores; a one-node job of 3 cores.
    groups = (
        NodeGroup("a", 1, 2),
        NodeGroup("b", 1, 4),
        NodeGroup("c", 1, 8),
        NodeGroup("d", 1, 3),
    )
    platform = one_partition(*groups)
    r = run(workload(job(1, 0, 3, 10, nodes=1)), platform, "easy", allocation=policy)
    check.check_node_schedule(r)
    assert r.nodes(1) == [node]


def test_max_nodes_picks_the_nodes_that_can_hold_the_job() -> None:
    # Small nodes come first, but max_nodes = 1 leaves only the fat node.
    platform = one_partition(NodeGroup("small", 4, 2), NodeGroup("fat", 1, 64), max_nodes=1)
    for policy in ("first-fit", "best-fit", "spread", "contiguous"):
        r = run(workload(job(1, 0, 32, 10)), platform, "easy", allocation=policy)
        check.check_node_schedule(r)
        assert r.excluded == {}, policy
        assert r.nodes(1) == ["fat[0]"], policy


@pytest.mark.parametrize("policy", ["first-fit", "best-fit", "spread", "contiguous"])
def test_max_nodes_never_hides_an_allocation_that_exists(policy: str) -> None:
    # 4 cores on at most 2 nodes: greedy in node order (1 + 2 + 2) would need 3;
    # node 3 alone holds them.
    free = np.array([[1, 0, 0], [2, 0, 0], [2, 0, 0], [4, 0, 0]], dtype=np.int64)
    factory = schedlab.registry.get_registry().get("allocation", policy).factory
    view = NodeView(free, CAPACITY, np.arange(4), exclusive=False)
    alloc = factory().allocate(view, Demand(np.array([4, 0, 0]), 0, max_nodes=2))
    assert alloc is not None and len(alloc) <= 2
    assert alloc.amounts[:, 0].sum() == 4 and (alloc.amounts <= free[alloc.nodes]).all()


# ------------------------------------------------------------------ exclusions
EXCLUDING = """
[node_groups.n]
count = 2
cores = 4
memory = "8GiB"
gpus = 2

[partitions.batch]
nodes = ["n"]
max_time = 1000
max_nodes = 2
sharing = "shared"

# A second partition, so that a partition name the platform lacks is unknown (on a
# one-partition platform it runs in that partition, see test_platform_requests.py).
[partitions.debug]
nodes = ["n"]
sharing = "shared"
"""


def test_jobs_that_cannot_run_are_excluded_with_their_reason(tmp_path: Path) -> None:
    platform = check.write_platform(tmp_path, EXCLUDING)
    w = workload(
        job(1, 0, 1, 10, memory_gib=16),  # more memory than any node
        job(2, 0, 1, 10, partition="gpu"),  # no such partition
        job(3, 0, 1, 10, requested_time=2000),  # over max_time
        job(4, 0, 3, 10, nodes=3),  # over max_nodes
        job(5, 0, 1, 10, nodes=1, gpus=3),  # 3 GPUs on one node of 2
        job(6, 0, 12, 10),  # more cores than the machine: a base reason
        job(7, 0, 8, 10, memory_gib=1),  # fits: 8 cores, 8 GiB over both nodes
        job(8, 0, 1, 10, gpus=3),  # fits: flexible, GPUs from both nodes
    )
    for backfill in ("none", "easy", "conservative"):
        r = run(w, platform, backfill)
        check.check_node_schedule(r)
        assert r.excluded == {
            "never_fits": [1, 5],
            "unknown_partition": [2],
            "over_partition_limit": [3, 4],
            "larger_than_machine": [6],
        }, backfill
        assert r.starts() == {7: 0, 8: 10}, backfill
        assert r.nodes(8) == ["n[0]", "n[1]"]


def test_a_job_of_unknown_requested_time_is_not_held_to_max_time(tmp_path: Path) -> None:
    # docs/platform.md: nothing says it asked for more than max_time (1000 s), so it
    # runs for its recorded 5000 s; a known request over the limit is excluded.
    platform = check.write_platform(tmp_path, EXCLUDING)
    w = workload(
        job(1, 0, 1, 5000, requested_time=-1),
        job(2, 0, 1, 10, requested_time=2000),
    )
    for backfill in ("none", "easy", "conservative"):
        r = run(w, platform, backfill)
        check.check_node_schedule(r)
        assert r.excluded == {"over_partition_limit": [2]}, backfill
        assert r.starts() == {1: 0}, backfill


def test_a_request_extra_that_is_not_a_number_is_an_error_naming_job_and_key() -> None:
    platform = one_partition(NodeGroup("n", 1, 4))
    with pytest.raises(SimulationError, match=r"job 1: extra request.gpus='two'"):
        run(workload(job(1, 0, 1, 10, gpus="two")), platform, "easy")


def test_a_machine_of_many_nodes_without_declared_memory_runs_its_jobs() -> None:
    # 40,000 nodes of unbounded memory: the partition's memory total must not
    # overflow (it did, and every job was excluded as never_fits).
    w = workload(job(1, 0, 4, 10, memory_gib=2), job(2, 0, 39_000, 10))
    r = run(w, Platform.single_pool(40_000), "easy")
    check.check_node_schedule(r)
    assert r.excluded == {} and r.starts() == {1: 0, 2: 0}


@pytest.mark.parametrize(
    "request_",
    [
        {"requested_memory": 1e16},  # KB per processor: beyond int64 in bytes
        {"extras": {"request.gpus": 1e30}},
        {"extras": {"request.memory": 1e30}},
        {"extras": {"request.nodes": 1e30}},
        {"extras": {"request.nodes": 3}},  # more nodes than the partition has
    ],
)
def test_a_request_no_machine_holds_is_never_fits_not_a_crash(request_: dict[str, Any]) -> None:
    platform = one_partition(NodeGroup("n", 2, 4))
    w = schedlab.Workload.from_jobs(
        [
            schedlab.Job(job_number=1, submit_time=0, run_time=10, requested_time=10,
                         requested_processors=4, **request_),
            schedlab.Job(job_number=2, submit_time=0, run_time=10, requested_time=10,
                         requested_processors=4),
        ]
    )  # fmt: skip
    r = run(w, platform, "easy")
    check.check_node_schedule(r)
    assert r.excluded == {"never_fits": [1]} and r.starts() == {2: 0}


class Greedy:
    """A broken allocation policy: always node 0, whatever is free there."""

    name = "greedy"

    def allocate(self, view: Any, demand: Any) -> Any:
        from schedlab.sim.resources import Allocation

        return Allocation(np.array([view.nodes[0]]), demand.total.reshape(1, -1).copy())


@pytest.mark.parametrize("backfill", ["none", "easy", "conservative"])
def test_an_allocation_policy_that_over_commits_a_node_is_named(backfill: str) -> None:
    platform = one_partition(NodeGroup("n", 2, 4))
    w = workload(job(1, 0, 3, 10), job(2, 0, 3, 10))
    with pytest.raises(SimulationError, match=r"allocation policy 'greedy' over-committed a node"):
        run(w, platform, backfill, allocation=Greedy())


def test_node_level_easy_runs_without_numba(tmp_path: Path) -> None:
    """Without numba (extra ``fast``) node-level EASY takes its Python pass;
    ``kernel=compiled`` is then a one-line error naming the extra."""
    import subprocess
    import sys

    code = """
import sys
sys.modules["numba"] = None  # as if not installed
import schedlab
from schedlab.errors import SimulationError
from schedlab.platform import NodeGroup, Partition, Platform
platform = Platform((NodeGroup("n", 2, 4),), (Partition("p", ("n",), sharing="shared"),))
jobs = [schedlab.Job(job_number=i + 1, submit_time=i, run_time=10, requested_time=20,
                     requested_processors=3, status=1, user_id=1) for i in range(6)]
w = schedlab.Workload.from_jobs(jobs)
r = schedlab.simulate(w, backfill="easy", platform=platform, progress=False)
print(r.start.tolist())
try:
    schedlab.simulate(w, backfill="easy", backfill_options={"kernel": "compiled"},
                      platform=platform, progress=False)
except SimulationError as exc:
    print(exc)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == "[0.0, 1.0, 10.0, 11.0, 20.0, 21.0]"
    assert "schedlab[fast]" in out[1]
