"""Fixes of the allocation-policies audit (/tmp/audits/alloc/REPORT.md):

1. the ``max_nodes`` limit counts only the nodes that give a flexible job
   something, and whether a job fits does not depend on the policy's order
   (``take``'s fallback), under every backfill, the compiled node kernels
   declining such platforms (they fall back to the Python pass);
2. ``contiguous`` with ``max_nodes`` picks the lowest run of consecutive nodes that
   holds the job (against a plain reference written here);
3. the output workload of a workload read from a file (columns) carries the nodes
   as ``Job.hosts``, so writers with a host field (Grid Engine) write them.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from schedlab.errors import SimulationError
from schedlab.model import Job, Workload
from schedlab.platform import platform_from_dict
from schedlab.sim.resources import Demand, NodeView, take

ALLOCATIONS = ("first-fit", "best-fit", "spread", "contiguous")


def _gpu_platform(cpu_nodes: int, sharing: str = "shared", cpu_cores: int = 8) -> Any:
    return platform_from_dict(
        {
            "platform": {"sharing": sharing},
            "node_groups": {
                "cpu": {"count": cpu_nodes, "cores": cpu_cores},
                "gpu": {"count": 1, "cores": 4, "gpus": 1},
            },
            "partitions": {"p": {"nodes": ["cpu", "gpu"], "max_nodes": 2}},
        }
    )


def _one_job(cores: int, gpus: int) -> Workload:
    return Workload.from_jobs(
        [
            Job(
                job_number=1,
                submit_time=0,
                run_time=10,
                requested_processors=cores,
                requested_time=10,
                extras={"request.gpus": gpus},
            )
        ]
    )


# -- finding 1: max_nodes counts only the nodes that give the job something


@pytest.mark.parametrize("backfill", ["none", "easy", "conservative"])
@pytest.mark.parametrize("allocation", ALLOCATIONS)
@pytest.mark.parametrize("cpu_nodes", [1, 2, 3])
@pytest.mark.parametrize("sharing", ["shared", "exclusive"])
def test_max_nodes_counts_only_nodes_giving_something(
    backfill: str, allocation: str, cpu_nodes: int, sharing: str
) -> None:
    """4 cores and 1 GPU, max_nodes 2: cpu[0] + gpu[0] hold it, however many idle
    CPU nodes come first (the audit's repro: 2 or 3 CPU nodes gave never_fits)."""
    r = schedlab.simulate(
        _one_job(4, 1),
        platform=_gpu_platform(cpu_nodes, sharing),
        backfill=backfill,
        allocation=allocation,
        progress=False,
    )
    assert not any(len(v) for v in r.excluded.values())
    if allocation == "contiguous" and cpu_nodes > 1:
        # Contiguous: cpu[last] + gpu[0] is the lowest consecutive run holding it.
        assert list(r.allocations) == [(f"cpu[{cpu_nodes - 1}]", "gpu[0]")]
    elif allocation == "best-fit":
        # Fewest free cores first: the GPU node alone holds it.
        assert list(r.allocations) == [("gpu[0]",)]
    else:
        assert list(r.allocations) == [("cpu[0]", "gpu[0]")]


@pytest.mark.parametrize("backfill", ["none", "easy", "conservative"])
@pytest.mark.parametrize("allocation", ["first-fit", "best-fit", "spread"])
def test_fit_does_not_depend_on_order_cores_on_two_kinds(backfill: str, allocation: str) -> None:
    """12 cores and 1 GPU, max_nodes 2, on two 8-core nodes and a 4-core GPU node:
    cpu[0] (8) + gpu[0] (4 and the GPU) hold it, although the most-cores order
    places the cores on the two CPU nodes first."""
    r = schedlab.simulate(
        _one_job(12, 1),
        platform=_gpu_platform(2),
        backfill=backfill,
        allocation=allocation,
        progress=False,
    )
    assert not any(len(v) for v in r.excluded.values())
    assert list(r.allocations) == [("cpu[0]", "gpu[0]")]


def test_max_nodes_still_excludes_what_never_fits() -> None:
    """12 cores and 1 GPU, max_nodes 2, but the CPU nodes have 4 cores: no two nodes
    hold it, so the job is never_fits (the fix does not let everything through)."""
    r = schedlab.simulate(
        _one_job(12, 1),
        platform=_gpu_platform(3, cpu_cores=4),
        backfill="none",
        allocation="first-fit",
        progress=False,
    )
    assert list(r.excluded["never_fits"]) == [0]


def _view(free: np.ndarray, exclusive: bool = False) -> NodeView:
    return NodeView(free, free.copy(), np.arange(len(free)), exclusive)


def _fits_somehow(free: np.ndarray, total: np.ndarray, k: int) -> bool:
    """Whether some k nodes hold the flexible demand (cores and GPUs, no memory)."""
    n = len(free)
    for size in range(1, min(k, n) + 1):
        for subset in itertools.combinations(range(n), size):
            if (free[list(subset)].sum(axis=0)[[0, 2]] >= total[[0, 2]]).all():
                return True
    return False


def test_take_fit_independent_of_order_random() -> None:
    """Random small machines (cores, GPUs), flexible demands with max_nodes: take
    gives an allocation under every order of the nodes or under none; it is within
    the limit and covers the demand; and when the cores alone are asked, exactly
    when some max_nodes nodes hold them (with GPUs: the greedy step, checked
    against brute force where it must succeed, a single GPU node)."""
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(2, 6))
        free = np.zeros((n, 3), dtype=np.int64)
        free[:, 0] = rng.integers(0, 9, n)
        free[:, 1] = 2**42
        free[:, 2] = rng.integers(0, 3, n) * (rng.random(n) < 0.4)
        k = int(rng.integers(1, n + 1))
        gpus = int(rng.integers(0, 3))
        cores = int(rng.integers(1, 20))
        total = np.array([cores, 0, gpus], dtype=np.int64)
        demand = Demand(total, 0, 0, None, k)
        view = _view(free)
        usable = np.flatnonzero((free[:, 0] >= 1) | ((free[:, 2] > 0) & (gpus > 0)))
        results = []
        for perm in itertools.permutations(usable.tolist()):
            alloc = take(view, demand, np.array(perm, dtype=np.int64))
            results.append(alloc is not None)
            if alloc is not None:
                assert len(alloc) <= k
                assert (alloc.amounts <= free[alloc.nodes]).all()
                assert alloc.amounts[:, 0].sum() == cores
                assert alloc.amounts[:, 2].sum() == gpus
                assert alloc.amounts.any(axis=1).all()
        assert len(set(results)) <= 1, (free.tolist(), total.tolist(), k)
        truth = _fits_somehow(free, total, k)
        if results and (gpus == 0 or (free[:, 2] > 0).sum() == 1):
            assert results[0] == truth, (free.tolist(), total.tolist(), k)
        elif results and results[0]:
            assert truth


@pytest.mark.parametrize("backfill", ["easy", "conservative"])
def test_compiled_kernels_decline_max_nodes(backfill: str) -> None:
    """The compiled node kernels do not cover max_nodes demands: kernel=auto takes
    the Python pass (same schedule as kernel=python), kernel=compiled is an error."""
    jobs = [
        Job(
            job_number=i + 1,
            submit_time=i,
            run_time=10 + i % 7,
            requested_processors=1 + i % 12,
            requested_time=20,
            extras={"request.gpus": i % 2},
        )
        for i in range(600)
    ]
    w = Workload.from_jobs(jobs)
    plat = _gpu_platform(3)
    runs = [
        schedlab.simulate(
            w,
            platform=plat,
            backfill=backfill,
            backfill_options={"kernel": kernel},
            progress=False,
        )
        for kernel in ("auto", "python")
    ]
    assert runs[0].stats["kernel"] == "python"
    assert list(runs[0].allocations) == list(runs[1].allocations)
    assert not any(len(v) for v in runs[0].excluded.values())
    with pytest.raises(SimulationError, match="kernel=compiled"):
        schedlab.simulate(
            w,
            platform=plat,
            backfill=backfill,
            backfill_options={"kernel": "compiled"},
            progress=False,
        )


# -- finding 2: contiguous with max_nodes, the lowest run that holds the job

CONTIG = {
    "platform": {"sharing": "shared"},
    "node_groups": {
        "a": {"count": 3, "cores": 1},
        "b": {"count": 2, "cores": 4},
        "c": {"count": 1, "cores": 8},
    },
    "partitions": {"p": {"nodes": ["a", "b", "c"], "max_nodes": 2}},
}


@pytest.mark.parametrize("backfill", ["none", "easy", "conservative"])
def test_contiguous_lowest_run_with_max_nodes(backfill: str, tmp_path: Path) -> None:
    """The audit's rc/contig.toml and rc/one5.swf: a 5-processor job gets a[2]+b[0]
    (the lowest run of at most 2 consecutive nodes), not the far c[0]."""
    swf = tmp_path / "one5.swf"
    swf.write_text("; one job, 5 processors\n1 0 -1 10 5 -1 -1 5 10 -1 1 -1 -1 -1 -1 -1 -1 -1\n")
    r = schedlab.simulate(
        schedlab.read(swf),
        platform=platform_from_dict(CONTIG),
        backfill=backfill,
        allocation="contiguous",
        progress=False,
    )
    assert list(r.allocations) == [("a[2]", "b[0]")]


def _ref_contiguous(
    free: np.ndarray, part: list[int], total: np.ndarray, mpc: int, k: int
) -> tuple[int, ...] | None:
    """Plain reference: for each start (partition positions ascending), the shortest
    run of consecutive usable nodes (consecutive machine indices, at most ``k``
    when ``k``) in which the first-fit fill holds the job with every node giving
    something; the first such run."""
    gpus = int(total[2])

    def usable(i: int) -> bool:
        core_ok = free[i, 0] >= 1 and (mpc == 0 or free[i, 1] >= mpc)
        return bool(core_ok or (gpus > 0 and free[i, 2] > 0))

    def gives(i: int) -> int:
        c = int(free[i, 0])
        if mpc:
            c = min(c, int(free[i, 1]) // mpc)
        return max(c, 0)

    for s in range(len(part)):
        need_c, need_g = int(total[0]), gpus
        run: list[int] = []
        for pos in range(s, len(part)):
            node = part[pos]
            if not usable(node) or (run and node != run[-1] + 1):
                break
            if k and len(run) == k:
                break
            give_c = min(gives(node), need_c)
            give_g = min(max(int(free[node, 2]), 0), need_g)
            if give_c == 0 and give_g == 0:
                break
            need_c -= give_c
            need_g -= give_g
            run.append(node)
            if need_c == 0 and need_g == 0:
                return tuple(run)
    return None


def test_contiguous_against_reference_random() -> None:
    """A few hundred random shared machines (cores, memory, GPUs), partitions with
    gaps, flexible demands with and without max_nodes: contiguous picks the
    reference's run."""
    from schedlab.policies.allocation.contiguous import Contiguous

    rng = np.random.default_rng(11)
    policy = Contiguous()
    for case in range(400):
        n = int(rng.integers(3, 13))
        free = np.zeros((n, 3), dtype=np.int64)
        free[:, 0] = rng.choice([0, 1, 1, 2, 4, 8], n)
        free[:, 1] = rng.integers(0, 9, n) * 2**30 if rng.random() < 0.3 else 2**42
        free[:, 2] = rng.integers(0, 3, n) * (rng.random(n) < 0.3)
        size = int(rng.integers(n // 2 + 1, n + 1))
        part = sorted(rng.choice(n, size=size, replace=False).tolist())
        k = int(rng.choice([0, 1, 2, 2, 3, 4]))
        gpus = int(rng.integers(0, 3)) if rng.random() < 0.4 else 0
        mpc = int(rng.choice([0, 2**30]))
        cores = int(rng.integers(1, 16))
        total = np.array([cores, cores * mpc, gpus], dtype=np.int64)
        demand = Demand(total, mpc, 0, None, k)
        view = NodeView(free, free.copy(), np.array(part, dtype=np.int64), False)
        alloc = policy.allocate(view, demand)
        got = None if alloc is None else tuple(alloc.nodes.tolist())
        want = _ref_contiguous(free, part, total, mpc, k)
        assert got == want, (case, free.tolist(), part, total.tolist(), mpc, k)


# -- finding 3: Job.hosts on the output of a workload read from a file

P3 = """[platform]
sharing = "shared"
[node_groups.g0]
count = 2
cores = 2
[node_groups.g1]
count = 2
cores = 4
[partitions.all]
nodes = ["g0", "g1"]
"""

SWF = """; three jobs
1 0 -1 10 1 -1 -1 1 10 -1 1 -1 -1 -1 -1 -1 -1 -1
2 1 -1 10 3 -1 -1 3 10 -1 1 -1 -1 -1 -1 -1 -1 -1
3 2 -1 10 6 -1 -1 6 10 -1 1 -1 -1 -1 -1 -1 -1 -1
"""


def test_file_workload_output_carries_hosts(tmp_path: Path) -> None:
    """A workload read from SWF (columns): the output's jobs carry their nodes as
    Job.hosts, as job-object workloads do, and the Grid Engine writer writes them
    (no UNKNOWN hostname)."""
    swf = tmp_path / "w.swf"
    swf.write_text(SWF)
    plat = tmp_path / "p.toml"
    plat.write_text(P3)
    w = schedlab.read(swf)
    assert not w.has_job_objects()
    r = schedlab.simulate(w, platform=str(plat), backfill="none", progress=False)
    jobs = list(r.workload)
    assert [j.hosts for j in jobs] == [tuple(a) for a in r.allocations]
    assert all(j.hosts for j in jobs)
    assert [j.extras["schedlab.nodes"] for j in jobs] == [" ".join(a) for a in r.allocations]
    # The same jobs as job objects give the same hosts.
    w2 = Workload.from_jobs(list(schedlab.read(swf)), header=w.header)
    r2 = schedlab.simulate(w2, platform=str(plat), backfill="none", progress=False)
    assert [j.hosts for j in r2.workload] == [j.hosts for j in jobs]
    out = tmp_path / "out.sge"
    schedlab.write(r.workload, out, format="sge")
    records = [line.split(":") for line in out.read_text().splitlines() if line[:1] != "#"]
    # The colon layout's second field is the hostname: the job's first node.
    assert [rec[1] for rec in records] == [a[0] for a in r.allocations]
