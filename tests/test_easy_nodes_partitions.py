"""Node-level EASY on platforms of several partitions that share no node, on the
compiled pass (one kernel per partition,
:mod:`schedlab.policies.backfill.easy_nodes_partitions`) against the Python pass
(:class:`~schedlab.policies.backfill.easy_nodes.NodeEasy`): the same start time,
nodes and amounts for every job, and the same reservations, on random platforms
and workloads (jobs naming a partition, or none: the first), with policies that
re-key the queue and predictors whose corrections move running jobs; partitions
that share a node group stay on the Python pass.
"""

from __future__ import annotations

import importlib.util
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
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


def both(workload: Any, platform: Any, allocation: str = "first-fit", **kwargs: Any) -> Any:
    runs = [
        check.run(
            workload, platform, "easy", allocation=allocation,
            backfill_options={"kernel": kernel}, whole=True, **kwargs,
        )
        for kernel in ("python", "compiled")
    ]  # fmt: skip
    assert runs[1].engine.strategy.kernel_name == "compiled"
    assert type(runs[1].engine.strategy._compiled).__name__ == "CompiledPartitions"
    return runs[0], runs[1]


@st.composite
def workloads(draw: Any, platform: Platform) -> Any:
    jobs = []
    for i in range(draw(st.integers(3, 40))):
        p = draw(st.integers(-1, len(platform.partitions) - 1))
        extras: dict[str, Any] = {}
        cores = 1
        if p >= 0:
            part = platform.partitions[p]
            extras["partition"] = part.name
            mine = [g for g in platform.node_groups if g.name in part.nodes]
            cores = sum(g.cores * g.count for g in mine)
            if any(g.gpus for g in mine) and draw(st.integers(0, 3)) == 0:
                extras["gpus"] = 1
        else:  # no partition named: the platform's first
            mine = [g for g in platform.node_groups if g.name in platform.partitions[0].nodes]
            cores = sum(g.cores * g.count for g in mine)
        if draw(st.integers(0, 4)) == 0:
            extras["nodes"] = 1
        run = draw(st.integers(0, 40))
        jobs.append(
            check.job(
                i + 1,
                draw(st.integers(0, 60)),
                draw(st.integers(1, cores)),
                run,
                memory_gib=draw(st.sampled_from([None, 0.5, 1])),
                requested_time=max(1, run + draw(st.integers(-10, 30))),
                **extras,
            )
        )
    note(repr([(j.submit_time, j.requested_processors, j.run_time, j.extras) for j in jobs]))
    return check.workload(*jobs)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_one_compiled_pass_per_partition_gives_the_python_schedule(data: Any) -> None:
    platform = data.draw(st.composite(check.disjoint_platforms)())
    workload = data.draw(workloads(platform))
    allocation = data.draw(st.sampled_from(COVERED))
    kill = data.draw(st.booleans())
    policy = data.draw(st.sampled_from(["fcfs", "sjf", "ljf", "wfp3"]))
    estimator = data.draw(st.sampled_from(["requested", "requested", "easy++", "learned"]))
    python, compiled = both(
        workload, platform, allocation, kill=kill, log_reservations=True, policy=policy,
        estimator=estimator,
    )  # fmt: skip
    check.assert_same_schedule(python, compiled)
    check.check_node_schedule(compiled)
    # The same reservations (each pass logs its partitions' heads in partition
    # order, the Python pass in tier order: compare them as sets per time).
    assert sorted(map(repr, compiled.state.reservation_log)) == sorted(
        map(repr, python.state.reservation_log)
    )


@pytest.mark.realdata
@pytest.mark.parametrize("estimator", ["requested", "easy++"])
def test_a_real_log_on_two_partitions_gives_the_python_schedule(
    swf_dir: Path, estimator: str
) -> None:
    """RICC's first 1,200 jobs, the small ones on 24 nodes of their own and the
    others on 1,000: the schedule, nodes and amounts of the Python pass, with a queue
    in both partitions."""
    w, platform = check.split_by_size(swf_dir / "RICC-2010-2.swf.gz", 1200, 24, 1000)
    python, compiled = both(w, platform, estimator=estimator)
    check.assert_same_schedule(python, compiled)
    assert not compiled.engine.strategy._compiled.left
    assert check.queued_in_both(compiled, 50)


def test_partitions_sharing_a_node_group_stay_on_the_python_pass() -> None:
    two = check.overlapping_platform()
    w = check.workload(*(check.job(i + 1, i, 2, 10) for i in range(6)))
    with pytest.raises(SimulationError, match="share no node"):
        check.run(w, two, "easy", backfill_options={"kernel": "compiled"})
    assert check.run(w, two, "easy").engine.strategy.kernel_name == "python"


def test_a_key_the_kernel_cannot_compare_sends_every_partition_to_the_python_pass() -> None:
    """A priority key that is not a plain number: the whole run goes on with the
    Python pass, from the pass that first sees it, with the Python schedule."""
    platform = Platform(
        (NodeGroup("a", 2, 2), NodeGroup("b", 2, 2)),
        (Partition("p", ("a",), sharing="shared"), Partition("q", ("b",), sharing="shared")),
    )
    jobs = [check.job(i + 1, i, 1 + i % 4, 10 + i % 7, partition="pq"[i % 2]) for i in range(30)]
    w = check.workload(*jobs)

    class FractionKeys:
        name = "fraction-keys"

        def bind(self, table: Any) -> None:
            pass

        def key(self, job: int, now: float) -> Any:
            # From job index 10 on, a Fraction: it sorts among floats, but is not a
            # plain number the kernels compare.
            return Fraction(job, 3) if job >= 10 else float(job) / 3

    python, compiled = (
        check.run(w, platform, "easy", policy=FractionKeys(), backfill_options={"kernel": k})
        for k in ("python", "compiled")
    )
    assert compiled.engine.strategy._compiled.left
    check.assert_same_schedule(python, compiled)
