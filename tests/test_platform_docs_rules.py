"""The rules docs/platform.md states for node-level simulation, pinned with their
minimal cases, so that the page cannot drift from the code unnoticed.

Each test is one documented rule (the node-level audit's findings 1-4, kept as
known limitations of the current model): a change of the simulator's behaviour
fails here and must come with a change of the docs page.

1. a flexible job's GPUs and consumables come from the first nodes in the
   policy's order that have them free, not from the nodes giving its cores;
2. ``request.memory`` M is held exactly on each node of a fixed request (no
   longer a known limitation), and is a job total for a flexible one
   (``ceil(M / cores)`` bytes a core);
3. node-level EASY first starts jobs in order, skipping only partitions that
   share a node group with a blocked one, then backfills against each node
   set's head;
4. which unmapped partition and queue names are ``unknown_partition`` and
   which fall back to the first partition (``default_partition``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import schedlab
from schedlab.model import Job, Workload
from schedlab.platform import platform_from_dict

DOCS = Path(__file__).resolve().parents[1] / "docs" / "platform.md"

#: (backfill, options): every node-level pass, compiled kernels included (the
#: compiled ones cover a single partition with a declared node order).
PASSES = [
    ("none", None),
    ("easy", {"kernel": "python"}),
    ("easy", {"kernel": "compiled"}),
    ("conservative", {"kernel": "python"}),
    ("conservative", {"kernel": "compiled"}),
]


def _job(
    number: int, submit: float, run: float, cores: int, nodes: int | None = None, **req: Any
) -> Job:
    return Job(
        job_number=number,
        submit_time=submit,
        run_time=run,
        requested_processors=cores,
        requested_time=run,
        nodes=nodes,
        extras={f"request.{key}": value for key, value in req.items()},
    )


def _simulate(
    platform: dict[str, Any],
    jobs: list[Job],
    backfill: str = "easy",
    options: Any = None,
    **kw: Any,
) -> tuple[dict[int, tuple[float, tuple[str, ...], str, str]], dict[str, list[int]], Any]:
    """``({job: (start, nodes, held, partition)}, {reason: job numbers}, result)``."""
    result = schedlab.simulate(
        Workload.from_jobs(jobs),
        platform=platform_from_dict(platform),
        backfill=backfill,
        backfill_options=options,
        progress=False,
        **kw,
    )
    jobs_out = {
        j.job_number: (
            j.submit_time + j.wait_time,
            tuple(nodes),
            j.extras["schedlab.held"],
            j.extras["schedlab.partition"],
        )
        for j, nodes in zip(result.workload, result.allocations, strict=True)
    }
    excluded = {
        reason: [jobs[r].job_number for r in rows.tolist()]
        for reason, rows in result.excluded.items()
        if len(rows)
    }
    return jobs_out, excluded, result


def _shared(count: int, cores: int, **node: Any) -> dict[str, Any]:
    return {
        "node_groups": {"g": {"count": count, "cores": cores, **node}},
        "partitions": {"p": {"nodes": ["g"], "sharing": "shared"}},
    }


# 1. A flexible job's GPUs ------------------------------------------------------


@pytest.mark.parametrize(("backfill", "options"), PASSES)
def test_flexible_gpus_come_from_the_first_nodes_with_free_gpus(
    backfill: str, options: Any
) -> None:
    """Job 2 (flexible, 3 cores, 2 GPUs) gets its cores on g[1] and its GPUs on
    g[0], where job 1 holds every core; g[1]'s GPUs stay free for job 3."""
    jobs = [
        _job(1, 0, 100, 4, nodes=1),
        _job(2, 1, 100, 3, gpus=2),
        _job(3, 2, 10, 1, nodes=1, gpus=2),
    ]
    out, excluded, _ = _simulate(_shared(2, 4, gpus=2), jobs, backfill, options)
    assert not excluded
    # (the nodes declare no memory: held leaves it out, audit pmetrics)
    assert out[1][:3] == (0, ("g[0]",), "cores=4 gpus=0")
    assert out[2][:3] == (1, ("g[0]", "g[1]"), "cores=3 gpus=2")
    # A per-node model would give job 2 g[1] alone and start job 3 at 100 on g[0].
    assert out[3][:3] == (2, ("g[1]",), "cores=1 gpus=2")


def test_spread_order_puts_the_gpus_with_the_cores() -> None:
    """With ``spread`` the policy's order starts with g[1] (most free cores), so
    the first node with free GPUs is the one giving the cores."""
    jobs = [
        _job(1, 0, 100, 4, nodes=1),
        _job(2, 1, 100, 3, gpus=2),
        _job(3, 2, 10, 1, nodes=1, gpus=2),
    ]
    out, _, _ = _simulate(_shared(2, 4, gpus=2), jobs, "easy", allocation="spread")
    assert out[2][:3] == (1, ("g[1]",), "cores=3 gpus=2")
    assert out[3][:2] == (100, ("g[0]",))


# 2. request.memory: per node for fixed requests, a job total for flexible ones ----


@pytest.mark.parametrize(("backfill", "options"), PASSES)
def test_request_memory_of_a_fixed_job_is_held_exactly_on_each_node(
    backfill: str, options: Any
) -> None:
    """A 4-core node of 2048 bytes, a 1-node job asking 2048 bytes fits with any
    core count (3 cores included: no rounding per core)."""
    node = {
        "node_groups": {"g": {"count": 1, "cores": 4, "memory": 2048}},
        "partitions": {"p": {"nodes": ["g"]}},
    }
    for cores in (1, 2, 3, 4):
        out, excluded, _ = _simulate(
            node, [_job(1, 0, 100, cores, nodes=1, memory=2048)], backfill, options
        )
        assert not excluded, cores
        assert out[1][2] == "cores=4 memory=2048 gpus=0"  # exclusive: the whole node
    _, excluded, _ = _simulate(node, [_job(1, 0, 100, 3, nodes=1, memory=2049)], backfill, options)
    assert excluded == {"never_fits": [1]}


@pytest.mark.parametrize(("backfill", "options"), PASSES)
def test_request_memory_of_a_fixed_job_ignores_the_core_spread(backfill: str, options: Any) -> None:
    """Each node of a fixed request holds M, however unevenly its cores divide
    (the cores are held ``ceil(cores / nodes)`` a node)."""
    two = _shared(2, 4, memory=2048)
    for cores, held in (
        (2, "cores=2 memory=4096 gpus=0"),
        (3, "cores=4 memory=4096 gpus=0"),
        (4, "cores=4 memory=4096 gpus=0"),
    ):
        out, excluded, _ = _simulate(
            two, [_job(1, 0, 100, cores, nodes=2, memory=2048)], backfill, options
        )
        assert not excluded and out[1][2] == held, cores
    three = _shared(3, 4, memory=4096)
    out, _, _ = _simulate(three, [_job(1, 0, 100, 2, nodes=3, memory=2048)], backfill, options)
    assert out[1][2] == "cores=3 memory=6144 gpus=0"  # 2048 on each of 3 nodes


@pytest.mark.parametrize(("backfill", "options"), PASSES)
def test_memory_per_node_keeps_a_job_waiting_while_cores_are_free(
    backfill: str, options: Any
) -> None:
    """Golden: one 4-core node of 4096 bytes; job 1 (1 core, 3000 bytes on its
    node) leaves 3 cores but 1096 bytes; job 2 (1 core, 2000 bytes) waits for it,
    and job 3 (1 core, 1000 bytes) backfills beside job 1 (without backfilling
    it waits behind job 2)."""
    jobs = [
        _job(1, 0, 100, 1, nodes=1, memory=3000),
        _job(2, 1, 10, 1, nodes=1, memory=2000),
        _job(3, 2, 10, 1, nodes=1, memory=1000),
    ]
    out, excluded, _ = _simulate(_shared(1, 4, memory=4096), jobs, backfill, options)
    assert not excluded
    assert out[1][:3] == (0, ("g[0]",), "cores=1 memory=3000 gpus=0")
    assert out[2][:3] == (100, ("g[0]",), "cores=1 memory=2000 gpus=0")
    start = 100 if backfill == "none" else 2
    assert out[3][:3] == (start, ("g[0]",), "cores=1 memory=1000 gpus=0")


@pytest.mark.parametrize(("backfill", "options"), PASSES)
def test_request_memory_of_a_flexible_job_is_a_job_total(backfill: str, options: Any) -> None:
    """A flexible job's ``request.memory`` is spread over its cores
    (``ceil(6000 / 6) = 1000`` a core): 4000 on g[0], 2000 on g[1], so job 2
    (6000 bytes on one node) starts at once on g[1]."""
    jobs = [_job(1, 0, 100, 6, memory=6000), _job(2, 1, 10, 2, nodes=1, memory=6000)]
    out, excluded, _ = _simulate(_shared(2, 4, memory=8192), jobs, backfill, options)
    assert not excluded
    assert out[1][:3] == (0, ("g[0]", "g[1]"), "cores=6 memory=6000 gpus=0")
    assert out[2][:3] == (1, ("g[1]",), "cores=2 memory=6000 gpus=0")
    # rounded up per core: 6001 bytes over 6 cores hold 6 * 1001
    out, _, _ = _simulate(
        _shared(2, 4, memory=8192), [_job(1, 0, 100, 6, memory=6001)], backfill, options
    )
    assert out[1][2] == "cores=6 memory=6006 gpus=0"


def test_swf_requested_memory_comes_before_request_memory() -> None:
    """SWF's requested memory (KB per processor: 1 KB = 1024 bytes a core) is used
    as is, and ``request.memory`` is then not read."""
    job = Job(
        job_number=1,
        submit_time=0,
        run_time=100,
        requested_processors=2,
        requested_time=100,
        requested_memory=1.0,
        nodes=1,
        extras={"request.memory": 10**9},
    )
    out, excluded, _ = _simulate(_shared(1, 4, memory=4096), [job])
    assert not excluded and out[1][2] == "cores=2 memory=2048 gpus=0"


# 3. Node-level EASY: start in order, then backfill against the node set's head ----

CHAIN = {
    "node_groups": {"a": {"count": 1, "cores": 1}, "b": {"count": 1, "cores": 1}},
    "partitions": {"X": {"nodes": ["a"]}, "Y": {"nodes": ["a", "b"]}, "Z": {"nodes": ["b"]}},
}


def _chain_jobs() -> list[Job]:
    return [
        _job(1, 0, 100, 1, partition="X"),
        _job(2, 1, 10, 1, partition="X"),
        _job(3, 2, 10, 1, partition="Y"),
        _job(4, 2, 10, 1, partition="Z"),
    ]


@pytest.mark.parametrize(
    ("backfill", "start3", "start4"), [("none", 100, 2), ("easy", 12, 2), ("conservative", 2, 12)]
)
def test_partitions_in_a_chain(backfill: str, start3: float, start4: float) -> None:
    """X=[a], Y=[a,b], Z=[b]; job 2 (X) is blocked behind job 1. The first phase
    skips job 3 (Y shares a with X) but starts job 4 (Z shares nothing with X),
    so under EASY job 3 cannot backfill on b[0] until job 4 ends."""
    out, excluded, _ = _simulate(CHAIN, _chain_jobs(), backfill)
    assert not excluded
    assert {n: (out[n][0], out[n][1], out[n][3]) for n in out} == {
        1: (0, ("a[0]",), "X"),
        2: (100, ("a[0]",), "X"),
        3: (start3, ("b[0]",), "Y"),
        4: (start4, ("b[0]",), "Z"),
    }


# 4. Unmapped partition and queue names -------------------------------------------------

MAP_SWF = """\
; MaxProcs: 8
; MaxNodes: 8
; Queue: 2 gpu
; Queue: 3 cpu
; Partition: 2 big
1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 2 -1 -1 -1
2 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 7 -1 -1 -1
3 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 -1 2 -1 -1
4 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 3 2 -1 -1
5 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 2 2 -1 -1
6 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 -1 9 -1 -1
7 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 3 -1 -1 -1
8 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 -1 -1 -1 -1
"""


def _map_run(tmp_path: Path, partitions: dict[str, Any]) -> tuple[dict[int, str], list[int], int]:
    trace = tmp_path / "map.swf"
    trace.write_text(MAP_SWF)
    platform = platform_from_dict(
        {"node_groups": {"n": {"count": 8, "cores": 1}}, "partitions": partitions}
    )
    result = schedlab.simulate(
        schedlab.read(trace), platform=platform, backfill="easy", progress=False
    )
    parts = {j.job_number: j.extras["schedlab.partition"] for j in result.workload}
    unknown = [r + 1 for r in result.excluded["unknown_partition"].tolist()]
    return parts, unknown, result.stats["platform"]["default_partition"]


def test_unmapped_names_with_several_partitions(tmp_path: Path) -> None:
    """Only a queue the header names (and no partition maps) is
    ``unknown_partition``; an unmapped partition number (named or not) falls
    through to the queue, and an unnamed queue number to the first partition."""
    parts, unknown, defaulted = _map_run(
        tmp_path, {"a": {"nodes": ["n"]}, "b": {"nodes": ["n"], "queues": ["cpu"]}}
    )
    assert unknown == [1, 5]  # queue 2 "gpu": named, mapped nowhere
    assert parts == {2: "a", 3: "a", 4: "b", 6: "a", 7: "b", 8: "a"}
    assert defaulted == 4  # jobs 2 (queue 7), 3 (partition 2 "big"), 6 (partition 9), 8 (none)


def test_unmapped_names_with_one_partition(tmp_path: Path) -> None:
    """On a single-partition platform nothing is excluded or counted."""
    parts, unknown, defaulted = _map_run(tmp_path, {"only": {"nodes": ["n"]}})
    assert unknown == [] and defaulted == 0
    assert set(parts.values()) == {"only"} and len(parts) == 8


def test_unknown_request_partition() -> None:
    """A ``request.partition`` the platform lacks is ``unknown_partition`` when
    there are several partitions, else the job runs in the only one."""
    two = {
        "node_groups": {"n": {"count": 2, "cores": 1}},
        "partitions": {"a": {"nodes": ["n"]}, "b": {"nodes": ["n"]}},
    }
    jobs = [_job(1, 0, 10, 1, partition="gpu"), _job(2, 0, 10, 1)]
    out, excluded, result = _simulate(two, jobs)
    assert excluded == {"unknown_partition": [1]}
    assert out[2][3] == "a" and result.stats["platform"]["default_partition"] == 1
    one = {"node_groups": {"n": {"count": 2, "cores": 1}}, "partitions": {"a": {"nodes": ["n"]}}}
    out, excluded, result = _simulate(one, jobs)
    assert not excluded and out[1][3] == "a" and result.stats["platform"]["default_partition"] == 0


# The page states these rules --------------------------------------------------------


def test_docs_state_the_pinned_rules() -> None:
    """docs/platform.md keeps the rules pinned above (edit both together)."""
    text = " ".join(DOCS.read_text(encoding="utf-8").split())
    for phrase in (
        "a fixed request (`nodes` > 0) holds exactly M on each of its nodes",
        "M is taken as a job total and divided over its cores (`ceil(M / cores)` each)",
        "from the first nodes in the policy's order that have them free",
        "Known limitation",
        "skipping the jobs of a partition that is blocked or shares a node group "
        "with a blocked one",
        "only a queue number that has a `Queue:` header name",
    ):
        assert phrase in text, phrase
