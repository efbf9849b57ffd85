"""The whole run of compiled conservative backfilling
(``kernels.conservative_run``, :mod:`schedlab.sim.whole_run`): exactly the
schedule, pass count and statistics of the pass-by-pass runs (compiled and
Python), and declined where a reservation can go stale (a job outliving its
estimate), with predictions and on a platform."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.model import Workload
from whole_run_checks import long_queues, same_result, simulate_run, workloads
from workload_rows import workload_from_rows

pytest.importorskip("numba")

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "swf"
STATIC_POLICIES = ["fcfs", "sjf", "ljf", "smallest", "largest"]


def simulate(w: Workload, policy: str, kernel: str, per_pass: bool = False, **kw: Any) -> Any:
    """Simulate with conservative backfilling on ``kernel``; ``per_pass`` keeps
    the engine's loop."""
    return simulate_run(w, policy, "conservative", {"kernel": kernel}, per_pass, **kw)


def starts(result: Any) -> np.ndarray:
    return result.workload.to_arrays()["wait_time"]


def same_run(a: Any, b: Any) -> None:
    """The same schedule, estimates and every statistic but how it was computed."""
    same_result(a, b)


def overran(w: Workload, kill: bool) -> bool:
    """Whether a job runs past its estimate (requested time) in the simulation."""
    cols = w.to_arrays()
    run = np.asarray(cols["run_time"], dtype=float)
    req = np.asarray(cols["requested_time"], dtype=float)
    known = req >= 0
    return bool(not kill and np.any(known & (run > np.maximum(req, 1e-3))))


@settings(max_examples=200, deadline=None)
@given(workloads(many_covering=True), st.sampled_from(STATIC_POLICIES), st.booleans())
def test_whole_run_equals_pass_by_pass(w: Workload, policy: str, kill: bool) -> None:
    whole = simulate(w, policy, "compiled", kill=kill)
    per_pass = simulate(w, policy, "compiled", per_pass=True, kill=kill)
    python = simulate(w, policy, "python", kill=kill)
    assert per_pass.stats["whole_run"] is False and python.stats["whole_run"] is False
    # Taken unless a job outlives its estimate (then declined: stale reservations).
    assert whole.stats["whole_run"] is (not overran(w, kill))
    same_run(whole, per_pass)
    same_run(whole, python)


@settings(max_examples=40, deadline=None)
@given(long_queues(estimates_cover_runs=True), st.sampled_from(STATIC_POLICIES), st.booleans())
def test_long_queues_whole_run_equals_pass_by_pass(w: Workload, policy: str, kill: bool) -> None:
    whole = simulate(w, policy, "compiled", kill=kill)
    per_pass = simulate(w, policy, "compiled", per_pass=True, kill=kill)
    python = simulate(w, policy, "python", kill=kill)
    assert whole.stats["whole_run"] is True
    same_run(whole, per_pass)
    same_run(whole, python)


def test_timer_only_passes_are_counted() -> None:
    """A reservation coming due with no end or arrival at its instant: the engine
    wakes the strategy (a pass), and so does the whole run. Job 1 ends early at
    t=10 but job 2's reservation (t=100, behind job 1's estimate) only moves to
    10 by compression; job 3, placed behind job 2's estimated end, comes due at
    a timer of its own."""
    rows = [
        (0, 10, 100, 2, 1),  # ends early at 10, estimated 100
        (0, 50, 50, 1, 1),  # runs 0-50 on the third processor
        (1, 5, 200, 2, 1),  # reserved at 100, compressed to 10; ends at 15
        (2, 30, 30, 3, 1),  # the whole machine: after job 2's and job 1's ends
    ]
    w = workload_from_rows(rows, 3)
    whole = simulate(w, "fcfs", "compiled")
    per_pass = simulate(w, "fcfs", "compiled", per_pass=True)
    python = simulate(w, "fcfs", "python")
    assert whole.stats["whole_run"] is True
    same_run(whole, per_pass)
    same_run(whole, python)


def test_declined_when_a_job_outlives_its_estimate() -> None:
    rows = [(0, 100, 10, 1, 1), (0, 5, 5, 2, 1), (1, 5, 5, 2, 1)]
    w = workload_from_rows(rows, 2)
    whole = simulate(w, "fcfs", "compiled", kill=False)
    assert whole.stats["whole_run"] is False
    same_run(whole, simulate(w, "fcfs", "python", kill=False))
    assert simulate(w, "fcfs", "compiled", kill=True).stats["whole_run"] is True


def test_declined_with_predictions() -> None:
    rows = [(i, 10 + i, 100, 1 + i % 2, i % 3) for i in range(30)]
    w = workload_from_rows(rows, 2)
    whole = simulate(w, "fcfs", "compiled", estimator="user-average")
    assert whole.stats["whole_run"] is False


@pytest.mark.parametrize(
    "log", ["KTH-SP2-1996-2.1-cln.swf.gz", "LANL-CM5-1994-4.1-cln.swf.gz", "RICC-2010-2.swf.gz"]
)
def test_real_logs_whole_run_equals_pass_by_pass(log: str) -> None:
    """KTH-SP2 and LANL-CM5 whole, the first 20,000 jobs of RICC-2010 (fcfs,
    requested times, the kill rule on: every one is covered)."""
    w = schedlab.read(DATA / log)
    if log.startswith("RICC"):
        w = Workload(w.header, columns=w.to_arrays().take(np.arange(20_000)))
    whole = simulate(w, "fcfs", "compiled")
    per_pass = simulate(w, "fcfs", "compiled", per_pass=True)
    assert whole.stats["whole_run"] and not per_pass.stats["whole_run"]
    assert whole.stats["kernel"] == per_pass.stats["kernel"] == "compiled"
    same_run(whole, per_pass)


def test_a_stale_reservation_declines_with_fresh_arrays(monkeypatch: pytest.MonkeyPatch) -> None:
    """Should the compiled loop meet a due job that does not fit (it cannot
    without a job outliving its estimate), the whole run is declined and the
    engine's loop runs on fresh arrays: the same schedule as the Python run."""
    from schedlab.policies.backfill import compiled

    real = compiled.kn.conservative_run

    def stale(*args: Any) -> tuple[int, int]:
        passes, _ = real(*args)  # (leaves the arrays as a finished run does)
        return passes, compiled.kn.RUN_STALE

    monkeypatch.setattr(compiled.kn, "conservative_run", stale)
    rows = [(i // 3, 5 + i % 7, 20, 1 + i % 3, 1) for i in range(60)]
    w = workload_from_rows(rows, 4)
    declined = simulate(w, "sjf", "compiled")
    assert declined.stats["whole_run"] is False
    same_run(declined, simulate(w, "sjf", "python"))
