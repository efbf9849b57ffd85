"""Node-level conservative backfilling on platforms of several partitions that
share no node, on the compiled pass (one kernel per partition,
:mod:`schedlab.policies.backfill.conservative_nodes_partitions`) against the
Python pass (:class:`~schedlab.policies.backfill.conservative_nodes.NodeConservative`):
the same start time, nodes and amounts for every job and the same reservations
in every pass, on random platforms and workloads (jobs naming a partition, or
none), with policies that re-key the queue and predictors whose corrections
re-plan; a hand-over to the Python pass mid-run keeps every partition's
reservations; partitions sharing a node group stay on the Python pass.
"""

from __future__ import annotations

import importlib.util
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
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
            workload, platform, "conservative", allocation=allocation,
            backfill_options={"kernel": kernel}, **kwargs,
        )
        for kernel in ("python", "compiled")
    ]  # fmt: skip
    assert runs[1].engine.strategy.kernel_name.startswith("compiled")  # may hand over
    assert type(impl(runs[1])).__name__ == "CompiledPartitions"
    return runs[0], runs[1]


def impl(run: Any) -> Any:
    """The compiled pass of a run (the strategy routes ``schedule`` to it)."""
    return run.engine.strategy.schedule.__self__


@st.composite
def workloads(draw: Any, platform: Platform) -> Any:
    jobs = []
    for i in range(draw(st.integers(3, 40))):
        p = draw(st.integers(-1, len(platform.partitions) - 1))
        part = platform.partitions[max(p, 0)]
        extras: dict[str, Any] = {}
        if p >= 0:
            extras["partition"] = part.name
        mine = [g for g in platform.node_groups if g.name in part.nodes]
        if any(g.gpus for g in mine) and draw(st.integers(0, 3)) == 0:
            extras["gpus"] = 1
        if draw(st.integers(0, 4)) == 0:
            extras["nodes"] = 1
        run = draw(st.integers(0, 40))
        jobs.append(
            check.job(
                i + 1,
                draw(st.integers(0, 12)) * 5,
                draw(st.integers(1, sum(g.cores * g.count for g in mine))),
                run,
                memory_gib=draw(st.sampled_from([None, 0.5, 1])),
                requested_time=max(1, run + draw(st.sampled_from([-5, 0, 5, 20, 60]))),
                **extras,
            )
        )
    note(repr([(j.submit_time, j.requested_processors, j.run_time, j.extras) for j in jobs]))
    return check.workload(*jobs)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_one_compiled_pass_per_partition_gives_the_python_schedule_and_reservations(
    data: Any,
) -> None:
    platform = data.draw(st.composite(check.disjoint_platforms)())
    workload = data.draw(workloads(platform))
    allocation = data.draw(st.sampled_from(COVERED))
    kill = data.draw(st.booleans())
    policy = data.draw(st.sampled_from(["fcfs", "sjf", "ljf", "wfp3"]))
    estimator = data.draw(st.sampled_from(["requested", "requested", "easy++"]))
    python, compiled = both(
        workload, platform, allocation, kill=kill, log_reservations=True, policy=policy,
        estimator=estimator,
    )  # fmt: skip
    check.assert_same_schedule(python, compiled)
    check.check_node_schedule(compiled)
    # Every job's reservations, pass by pass (a dict by job: the order of jobs
    # within a pass, partition by partition here, in tier order there, is not kept).
    assert compiled.state.reservation_log == python.state.reservation_log


class LateFractions:
    """FCFS whose keys turn into ``Fraction`` (not a plain number) from a job on:
    the compiled passes hand the run to the Python pass there."""

    name = "late-fractions"

    def __init__(self, first: int) -> None:
        self.first = first

    def bind(self, table: Any) -> None:
        self.submit = table.submit

    def key(self, job: int, now: float) -> Any:
        s = self.submit[job]
        return Fraction(s) if job >= self.first else s


@pytest.mark.parametrize("seed", range(3))
def test_a_hand_over_mid_run_keeps_every_partitions_reservations(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    platform = Platform(
        (NodeGroup("a", 2, 4, memory=8 * GIB), NodeGroup("b", 2, 2)),
        (Partition("p", ("a",), sharing="shared"), Partition("q", ("b",), sharing="shared")),
    )
    jobs = []
    for i in range(120):
        run = int(rng.integers(1, 60))
        part = "pq"[int(rng.integers(0, 2))]
        jobs.append(
            check.job(
                i + 1, float(i * 2), int(rng.integers(1, 9 if part == "p" else 5)), run,
                memory_gib=[None, 0.5, 1][int(rng.integers(0, 3))] if part == "p" else None,
                requested_time=max(1, run + int(rng.integers(-20, 40))), partition=part,
            )
        )  # fmt: skip
    w = check.workload(*jobs)
    python, compiled = both(
        w, platform, COVERED[seed], log_reservations=True, policy=LateFractions(80)
    )
    check.assert_same_schedule(python, compiled)
    assert compiled.state.reservation_log == python.state.reservation_log
    got = impl(compiled)
    assert got.left
    assert sum(one.handed_over[0] for one in got.passes) > 5


@pytest.mark.realdata
def test_a_real_log_on_two_partitions_gives_the_python_schedule(swf_dir: Path) -> None:
    """RICC's first 400 jobs, the small ones (at most 8 processors) on 6 nodes of
    their own and the others on 120: a queue in both partitions."""
    w, platform = check.split_by_size(swf_dir / "RICC-2010-2.swf.gz", 400, 6, 120)
    python, compiled = both(w, platform)
    check.assert_same_schedule(python, compiled)
    assert check.queued_in_both(compiled, 20)


def test_partitions_sharing_a_node_group_stay_on_the_python_pass() -> None:
    two = check.overlapping_platform()
    w = check.workload(*(check.job(i + 1, i, 2, 10) for i in range(6)))
    with pytest.raises(SimulationError, match="share no node"):
        check.run(w, two, "conservative", backfill_options={"kernel": "compiled"})
    assert check.run(w, two, "conservative").engine.strategy.kernel_name == "python"
