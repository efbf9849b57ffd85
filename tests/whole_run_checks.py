"""Shared pieces of the whole-run differential tests (:mod:`schedlab.sim.whole_run`):
random workloads and the comparison of two results."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from schedlab.model import Header, Workload
from schedlab.sim.runner import run_simulation
from workload_rows import workload_from_rows

#: The stats that say how a result was computed (timings, kernel), not what.
HOW_STATS = (
    "wall_time_s",
    "cpu_time_s",
    "total_time_s",
    "jobs_per_second",
    "peak_memory_bytes",
    "whole_run",
    "kernel",
)


def same_result(a: Any, b: Any) -> None:
    """Same schedule, estimates and stats (counters, notes, corrections)."""
    for column in ("wait_time", "run_time", "requested_time"):
        np.testing.assert_array_equal(
            a.workload.to_arrays()[column], b.workload.to_arrays()[column], column
        )
    np.testing.assert_array_equal(a.estimate, b.estimate)
    assert {k: v for k, v in a.stats.items() if k not in HOW_STATS} == {
        k: v for k, v in b.stats.items() if k not in HOW_STATS
    }


@st.composite
def workloads(draw: Any, many_covering: bool = False) -> Workload:
    """Random workloads with bursts of equal submit times, zero run times, under-
    and over-estimates and unknown requested times, a few users (and jobs without
    one), long enough for queues longer than the kernels' 16-slot blocks. Run
    times reach 20 h, so that Tsafrir's corrections (1 min, 5 min ... steps) reach
    their later steps. ``many_covering``: up to 150 jobs, more requested times at
    or just above the run time (a run with no job outliving its estimate, which
    conservative's whole run needs) and requested times of 0."""
    procs = draw(st.integers(1, 16))
    n = draw(st.integers(1, 150 if many_covering else 120))
    scale = draw(st.sampled_from([1, 60, 600]))
    burst = draw(st.integers(0, 300)) * scale
    rows = []
    for _ in range(n):
        run = draw(st.integers(0, 120)) * scale
        lowest = 0 if many_covering else 1
        choices = [st.just(run), st.integers(lowest, 200).map(lambda x: x * scale)]
        if many_covering:
            choices.append(st.integers(run // scale, run // scale + 50).map(lambda x: x * scale))
        requested = draw(st.one_of(*choices, st.just(-1)))
        rows.append(
            (
                draw(st.integers(0, burst)),
                run,
                requested,
                draw(st.integers(1, procs)),
                draw(st.integers(-1, 3)),
            )
        )
    return workload_from_rows(rows, procs)


def simulate_run(
    w: Workload,
    policy: str,
    backfill: str,
    backfill_options: dict[str, Any] | None = None,
    per_pass: bool = False,
    **kw: Any,
) -> Any:
    """Simulate ``w``; ``per_pass`` keeps the engine's loop (a reservation log
    makes the engine offer no whole run). ``kw``: ``estimator``,
    ``estimator_options``, ``kill``, ``dependencies``."""

    def inspect(engine: Any) -> None:
        if per_pass:
            engine.state.reservation_log = {}

    return run_simulation(
        w,
        policy=policy,
        backfill=backfill,
        procs=None,
        estimator=kw.pop("estimator", "requested"),
        kill=kw.pop("kill", True),
        dependencies=kw.pop("dependencies", False),
        policy_options=None,
        backfill_options=backfill_options,
        estimator_options=kw.pop("estimator_options", None),
        registry=None,
        progress=False,
        inspect=inspect,
    )


@st.composite
def long_queues(draw: Any, estimates_cover_runs: bool = False) -> Workload:
    """Bursts of hundreds of jobs on a small machine: queues of more than 256
    jobs, so that the kernels' blocks and super-blocks are screened, skipped and
    tightened, and arrivals land in every part of the queue (``sjf``). Half the
    jobs request their run time; the others a random time, or with
    ``estimates_cover_runs`` their run time plus up to 150 s (no job outlives its
    estimate)."""
    procs = draw(st.integers(2, 16))
    n = draw(st.integers(300, 700))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    run = rng.integers(0, 100, n)
    other = run + rng.integers(0, 150, n) if estimates_cover_runs else rng.integers(1, 150, n)
    header = Header()
    header.set("MaxProcs", procs)
    return Workload.from_arrays(
        {
            "job_number": np.arange(1, n + 1),
            "submit_time": np.sort(rng.integers(0, draw(st.integers(1, 400)), n)),
            "run_time": run,
            "requested_time": np.where(rng.random(n) < 0.5, run, other),
            "requested_processors": rng.integers(1, procs + 1, n),
            "user_id": rng.integers(-1, 4, n),
            "status": np.ones(n),
        },
        header=header,
    )
