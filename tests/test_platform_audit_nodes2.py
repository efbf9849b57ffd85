"""The node-level audit's second round (nodes2), its confirmed findings:

1. node-level EASY treats every running job past its estimated end as ending
   *now* (EASY's shadow time is then "now" and all of them count as free at it),
   as the single pool does, also when their estimated ends differ: on one shared
   node of N cores, or N one-core exclusive nodes, EASY gives the single-pool
   schedule with ``kill=False`` and with ``user-average`` (both passes);
2. node-level conservative re-plans its reservations at job ends (and prediction
   corrections), not at a re-sort of the queue: a policy that re-sorts every
   pass (``dynamic = True``) with the same order as a static one gives the same
   schedule (both passes);
3. a node count (``request.nodes``, ``Job.nodes``) that is not a whole number, or
   a bool, is a one-line error naming the job and the key;
4. docs/online.md says that ``schedlab.Simulation`` refuses ``progress=``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import schedlab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedlab.errors import SimulationError, UsageError
from schedlab.model import Job, Workload
from schedlab.platform import NodeGroup, Partition, Platform, platform_from_dict

_spec = importlib.util.spec_from_file_location(
    "platform_sim_check", Path(__file__).with_name("platform_sim_check.py")
)
assert _spec is not None and _spec.loader is not None
check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check)

ROOT = Path(__file__).resolve().parents[1]


def _job(i: int, submit: float, run: float, requested: float, cores: int, user: int = 1) -> Job:
    return Job(
        job_number=i,
        submit_time=submit,
        run_time=run,
        requested_time=requested,
        requested_processors=cores,
        user_id=user,
    )


def one_shared_node(n: int) -> Platform:
    return Platform((NodeGroup("n", 1, n),), (Partition("p", ("n",), sharing="shared"),))


def one_core_nodes(n: int) -> Platform:
    return Platform((NodeGroup("n", n, 1),), (Partition("p", ("n",), sharing="exclusive"),))


SHAPES = {"one shared node": one_shared_node, "one-core exclusive nodes": one_core_nodes}


def starts_of(result: Any) -> dict[int, float]:
    return {j.job_number: j.submit_time + j.wait_time for j in result.workload}


def node_starts(w: Workload, platform: Platform, kernel: str, whole: bool, **kw: Any) -> dict:
    """Start times by job number of node-level EASY on ``platform`` with the pass
    ``kernel`` (pass by pass, or a whole run)."""
    if kernel == "compiled":
        pytest.importorskip("numba")
    run = check.run(w, platform, "easy", backfill_options={"kernel": kernel}, whole=whole, **kw)
    assert run.engine.strategy.kernel_name == kernel
    return run.starts()


# ----------------------------------------------------------------- finding 1
#: The audit's repro_overdue2.py: 3 cores; two running jobs outlive estimates
#: that differ; a 2-core head waits; a 1-core job arriving after both estimated
#: ends backfills at once in the single pool (both running jobs are treated as
#: ending now: all 3 cores are free at the shadow time "now", 2 with it started).
OVERDUE = {
    "requested, kill=False": (
        {"kill": False},
        [_job(1, 0, 100, 5, 1), _job(2, 0, 100, 8, 1), _job(3, 20, 10, 10, 2),
         _job(4, 21, 50, 50, 1)],
        {1: 0, 2: 0, 3: 100, 4: 21},
    ),
    "user-average": (
        {"estimator": "user-average", "kill": True},
        [_job(1, 0, 2, 100, 1), _job(2, 10, 100, 100, 1), _job(3, 11, 100, 100, 1),
         _job(4, 20, 10, 10, 2, user=2), _job(5, 21, 50, 50, 1, user=3)],
        {1: 0, 2: 10, 3: 11, 4: 110, 5: 21},
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(OVERDUE))
def test_overdue_jobs_with_different_estimated_ends_single_pool(case: str) -> None:
    options, jobs, expected = OVERDUE[case]
    result = schedlab.simulate(
        Workload.from_jobs(jobs), procs=3, backfill="easy", progress=False, **options
    )
    assert starts_of(result) == expected


@pytest.mark.parametrize("case", list(OVERDUE))
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize(
    ("kernel", "whole"), [("python", False), ("compiled", False), ("compiled", True)]
)
def test_overdue_jobs_with_different_estimated_ends_end_now_on_nodes(
    case: str, shape: str, kernel: str, whole: bool
) -> None:
    options, jobs, expected = OVERDUE[case]
    got = node_starts(Workload.from_jobs(jobs), SHAPES[shape](3), kernel, whole, **options)
    assert got == expected


@pytest.mark.parametrize("kernel", ["python", "compiled"])
def test_overdue_jobs_end_now_on_two_shared_nodes(kernel: str) -> None:
    # repro_overdue3.py: 2 shared nodes of 2 cores; jobs 1 and 2 (1 core each,
    # estimates 5 and 8) run on n[0] for 100 s; the 3-core head (job 3) waits. At
    # 21 both are past their estimates, so at the shadow time "now" all 4 cores
    # are free for the head, and job 4 (1 core, on n[1]) leaves it 3: it starts.
    plat = platform_from_dict(
        {
            "platform": {"sharing": "shared"},
            "node_groups": {"n": {"count": 2, "cores": 2}},
            "partitions": {"p": {"nodes": ["n"]}},
        }
    )
    jobs = [_job(1, 0, 100, 5, 1), _job(2, 0, 100, 8, 1), _job(3, 20, 10, 10, 3),
            _job(4, 21, 50, 50, 1)]  # fmt: skip
    got = node_starts(Workload.from_jobs(jobs), plat, kernel, whole=False, kill=False)
    assert got == {1: 0, 2: 0, 3: 100, 4: 21}


@st.composite
def overdue_workloads(draw: Any, procs: int) -> Workload:
    """3 to 16 jobs, mostly of 1 core, on 3 users, whose requested times are at
    most their run times and often much shorter (with ``kill=False``, or
    ``user-average``'s estimates, running jobs outlive their estimated ends)."""
    n = draw(st.integers(3, 16))
    submits = sorted(draw(st.lists(st.integers(0, 40), min_size=n, max_size=n)))
    jobs = []
    for i, s in enumerate(submits):
        run = draw(st.integers(5, 60))
        requested = draw(st.one_of(st.integers(1, 5), st.integers(1, run)))
        cores = draw(st.one_of(st.just(1), st.integers(1, procs)))
        user = draw(st.integers(1, 3))
        jobs.append(_job(i + 1, s, run, requested, cores, user))
    return Workload.from_jobs(jobs)


@st.composite
def overdue_cases(draw: Any) -> tuple[Workload, int, dict[str, Any]]:
    procs = draw(st.integers(2, 5))
    w = draw(overdue_workloads(procs))
    options = draw(
        st.sampled_from([
            {"kill": False},
            {"estimator": "user-average", "kill": True},
            {"estimator": "user-average", "kill": False},
        ])
    )  # fmt: skip
    return w, procs, options


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=overdue_cases(), shape=st.sampled_from(list(SHAPES)))
def test_easy_on_single_pool_platforms_equals_the_single_pool_with_overdue_jobs_python(
    case: tuple[Workload, int, dict[str, Any]], shape: str
) -> None:
    w, procs, options = case
    pool = schedlab.simulate(w, procs=procs, backfill="easy", progress=False, **options)
    got = node_starts(w, SHAPES[shape](procs), "python", whole=False, **options)
    assert got == starts_of(pool)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=overdue_cases(), shape=st.sampled_from(list(SHAPES)), whole=st.booleans())
def test_easy_on_single_pool_platforms_equals_the_single_pool_with_overdue_jobs_compiled(
    case: tuple[Workload, int, dict[str, Any]], shape: str, whole: bool
) -> None:
    w, procs, options = case
    pool = schedlab.simulate(w, procs=procs, backfill="easy", progress=False, **options)
    got = node_starts(w, SHAPES[shape](procs), "compiled", whole=whole, **options)
    assert got == starts_of(pool)


@pytest.mark.realdata
@pytest.mark.parametrize("kernel", ["python", "compiled"])
@pytest.mark.parametrize(
    "options", [{"kill": False}, {"estimator": "user-average", "kill": True}], ids=str
)
def test_kth_on_one_core_nodes_equals_the_single_pool_with_overdue_jobs(
    swf_dir: Path, kernel: str, options: dict[str, Any]
) -> None:
    # The audit's kth_ua.py (5,000 jobs there): 3,577 jobs started at another time
    # with user-average, 5 with kill=False.
    w = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    w = Workload.from_jobs(list(w)[:1500])
    pool = schedlab.simulate(w, procs=100, backfill="easy", progress=False, **options)
    got = node_starts(w, one_core_nodes(100), kernel, whole=True, **options)
    assert got == starts_of(pool)


# ----------------------------------------------------------------- finding 2
class LatestFirst:
    """The latest submitted job first (a fixed key)."""

    def key(self, job: int, now: float) -> int:
        return -int(job)


class LatestFirstDynamic(LatestFirst):
    """The same keys, re-sorted at every pass."""

    dynamic = True


class Smallest:
    """Fewest processors first (a fixed key)."""

    def bind(self, table: Any) -> None:
        self.size = table.size

    def key(self, job: int, now: float) -> Any:
        return self.size[job]


class SmallestDynamic(Smallest):
    """The same keys, re-sorted at every pass."""

    dynamic = True


def _rows(rows: list[tuple[int, ...]]) -> Workload:
    return Workload.from_jobs(
        [
            Job(job_number=i, submit_time=s, run_time=r, requested_time=q,
                requested_processors=c, nodes=(n[0] if n else None))
            for i, s, r, q, c, *n in rows
        ]
    )  # fmt: skip


def schedule_of(result: Any) -> list[tuple[int, float, Any]]:
    """(job number, start, nodes) of every simulated job."""
    return [
        (j.job_number, j.submit_time + j.wait_time, a)
        for j, a in zip(result.workload, result.allocations, strict=True)
    ]


def conservative_schedule(w: Workload, platform: Any, policy: Any, kernel: str, **kw: Any) -> list:
    if kernel == "compiled":
        pytest.importorskip("numba")
    r = schedlab.simulate(
        w, policy=policy, platform=platform, backfill="conservative",
        backfill_options={"kernel": kernel}, progress=False, **kw,
    )  # fmt: skip
    assert r.stats["kernel"] == kernel
    return schedule_of(r)


#: repro_dyn2.py: one exclusive 3-core node.
DYN2 = (
    {"node_groups": {"g0": {"count": 1, "cores": 3}}, "partitions": {"p0": {"nodes": ["g0"]}}},
    [(1, 4, 6, 9, 1), (2, 4, 6, 14, 2), (3, 9, 7, 15, 3), (4, 11, 6, 6, 3)],
)
#: repro_dyn.py / repro_mf.py: two exclusive 4-core nodes, one job asking 2 nodes.
DYN = (
    {
        "platform": {"sharing": "exclusive"},
        "node_groups": {"g0": {"count": 2, "cores": 4}},
        "partitions": {"p0": {"nodes": ["g0"]}},
    },
    [(2, 4, 5, 13, 4), (4, 4, 10, 18, 1, 2), (5, 7, 5, 8, 4), (7, 12, 10, 11, 3),
     (9, 17, 5, 8, 4)],
)  # fmt: skip


@pytest.mark.parametrize("kernel", ["python", "compiled"])
def test_conservative_re_sorting_the_same_order_keeps_the_schedule(kernel: str) -> None:
    plat, rows = DYN2
    w = _rows(rows)
    static = conservative_schedule(w, platform_from_dict(plat), LatestFirst(), kernel)
    dynamic = conservative_schedule(w, platform_from_dict(plat), LatestFirstDynamic(), kernel)
    assert [s for _, s, _ in static] == [10, 4, 22, 16]
    assert dynamic == static


@pytest.mark.parametrize("kernel", ["python", "compiled"])
def test_conservative_online_order_equal_to_the_policy_keeps_the_schedule(kernel: str) -> None:
    if kernel == "compiled":
        pytest.importorskip("numba")
    plat, rows = DYN2
    w = _rows(rows)
    static = conservative_schedule(w, platform_from_dict(plat), LatestFirst(), kernel)
    sim = schedlab.Simulation(
        w, platform=platform_from_dict(plat), backfill="conservative",
        backfill_options={"kernel": kernel},
    )  # fmt: skip
    while (point := sim.pending_decision()) is not None:
        sim.decide(order=sorted(point.queue, key=lambda j: -int(j)))
    assert schedule_of(sim.result()) == static


@pytest.mark.parametrize("kernel", ["python", "compiled"])
def test_conservative_multifactor_size_only_equals_smallest(kernel: str) -> None:
    plat, rows = DYN
    w = _rows(rows)
    mf = {"weight_age": 0, "weight_fairshare": 0, "weight_queue": 0, "weight_size": 100,
          "favor_small": True}  # fmt: skip
    base = conservative_schedule(w, platform_from_dict(plat), "smallest", kernel)
    assert conservative_schedule(w, platform_from_dict(plat), Smallest(), kernel) == base
    assert conservative_schedule(w, platform_from_dict(plat), SmallestDynamic(), kernel) == base
    got = conservative_schedule(
        w, platform_from_dict(plat), "multifactor", kernel, policy_options=mf
    )
    assert got == base


@st.composite
def small_platform_cases(draw: Any) -> tuple[dict[str, Any], list[tuple[int, ...]]]:
    sharing = draw(st.sampled_from(["shared", "exclusive"]))
    count = draw(st.integers(1, 3))
    cores = draw(st.integers(1, 4))
    plat = {
        "platform": {"sharing": sharing},
        "node_groups": {"g": {"count": count, "cores": cores}},
        "partitions": {"p": {"nodes": ["g"]}},
    }
    n = draw(st.integers(1, 10))
    submits = sorted(draw(st.lists(st.integers(0, 30), min_size=n, max_size=n)))
    rows: list[tuple[int, ...]] = []
    for i, s in enumerate(submits):
        run = draw(st.integers(1, 20))
        requested = draw(st.integers(run, 25))
        c = draw(st.integers(1, count * cores))
        rows.append((i + 1, s, run, requested, c))
    return plat, rows


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=small_platform_cases(), kernel=st.sampled_from(["python", "compiled"]))
def test_conservative_dynamic_policy_with_static_keys_gives_the_static_schedule(
    case: tuple[dict[str, Any], list[tuple[int, ...]]], kernel: str
) -> None:
    plat, rows = case
    w = _rows(rows)
    for static, dynamic in ((LatestFirst(), LatestFirstDynamic()), (Smallest(), SmallestDynamic())):
        a = conservative_schedule(w, platform_from_dict(plat), static, kernel)
        b = conservative_schedule(w, platform_from_dict(plat), dynamic, kernel)
        assert a == b


# ----------------------------------------------------------------- finding 3
def _nodes_run(nodes: Any = None, **extras: Any) -> Any:
    plat = platform_from_dict(
        {
            "platform": {"sharing": "shared"},
            "node_groups": {"g": {"count": 3, "cores": 4, "gpus": 2}},
            "partitions": {"p": {"nodes": ["g"]}},
        }
    )
    w = Workload.from_jobs(
        [Job(job_number=7, submit_time=0, run_time=5, requested_time=5,
             requested_processors=6, nodes=nodes, extras=extras)]
    )  # fmt: skip
    return schedlab.simulate(w, platform=plat, backfill="easy", progress=False)


@pytest.mark.parametrize("value", [1.5, 2.5, 0.5, True, False])
def test_fractional_or_bool_request_nodes_is_an_error(value: Any) -> None:
    with pytest.raises(SimulationError) as info:
        _nodes_run(**{"request.nodes": value})
    message = str(info.value)
    assert "job 7" in message and "request.nodes" in message and "\n" not in message


@pytest.mark.parametrize("value", [1.5, True])
def test_fractional_or_bool_job_nodes_is_an_error(value: Any) -> None:
    with pytest.raises(SimulationError) as info:
        _nodes_run(nodes=value)
    message = str(info.value)
    assert "job 7" in message and "nodes" in message and "\n" not in message


@pytest.mark.parametrize("value", [2, 2.0, "2"])
def test_whole_node_counts_are_taken(value: Any) -> None:
    r = _nodes_run(**{"request.nodes": value})
    assert [len(a) for a in r.allocations] == [2]
    r = _nodes_run(nodes=2)
    assert [len(a) for a in r.allocations] == [2]


def test_bool_request_amount_is_an_error() -> None:
    with pytest.raises(SimulationError, match=r"job 7: extra request.gpus=True"):
        _nodes_run(**{"request.gpus": True})


def test_fractional_request_nodes_from_columns_is_an_error() -> None:
    # A workload without Job objects (columns with extras) takes the same rule.
    w = Workload.from_jobs(
        [Job(job_number=3, submit_time=0, run_time=5, requested_time=5,
             requested_processors=6, extras={"request.nodes": 1.5})]
    )  # fmt: skip
    columns = schedlab.Workload(w.header.copy(), columns=w.to_arrays())
    assert not columns.has_job_objects()
    plat = platform_from_dict(
        {"node_groups": {"g": {"count": 3, "cores": 4}}, "partitions": {"p": {"nodes": ["g"]}}}
    )
    with pytest.raises(SimulationError, match=r"job 3: extra request.nodes=1.5"):
        schedlab.simulate(columns, platform=plat, progress=False)


# ----------------------------------------------------------------- finding 4
def test_simulation_refuses_progress_and_the_docs_say_so() -> None:
    w = Workload.from_jobs([_job(1, 0, 5, 5, 1)])
    with pytest.raises(UsageError, match="progress"):
        schedlab.Simulation(w, procs=2, progress=False)
    text = (ROOT / "docs" / "online.md").read_text()
    intro = text.split("```", 1)[0]
    assert "progress" in intro and "UsageError" in intro
