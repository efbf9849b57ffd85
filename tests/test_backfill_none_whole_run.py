"""The ``none`` strategy's whole run (:mod:`schedlab.policies.backfill.none_run`)
gives exactly the engine's pass-by-pass schedule, pass and event counts and
estimates, on random workloads and on real logs; the engine offers it only on a
single pool without predictions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.policies.backfill.none_run import none_run
from whole_run_checks import same_result, simulate_run, workloads
from workload_rows import workload_from_rows

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "swf"


def simulate(w: Any, policy: str, per_pass: bool, **kw: Any) -> Any:
    """``none`` backfilling; ``per_pass`` keeps the engine's loop."""
    return simulate_run(w, policy, "none", None, per_pass, **kw)


@settings(max_examples=200, deadline=None)
@given(workloads(), st.sampled_from(["fcfs", "sjf", "ljf", "smallest", "largest"]), st.booleans())
def test_whole_run_equals_pass_by_pass(w: Any, policy: str, kill: bool) -> None:
    whole = simulate(w, policy, False, kill=kill)
    per_pass = simulate(w, policy, True, kill=kill)
    assert whole.stats["whole_run"] is True and per_pass.stats["whole_run"] is False
    same_result(whole, per_pass)


@pytest.mark.parametrize("log", ["KTH-SP2-1996-2.1-cln.swf.gz", "LANL-CM5-1994-4.1-cln.swf.gz"])
def test_real_logs_whole_run_equals_pass_by_pass(log: str) -> None:
    w = schedlab.read(DATA / log)
    whole = simulate(w, "fcfs", False)
    per_pass = simulate(w, "fcfs", True)
    assert whole.stats["whole_run"] is True
    same_result(whole, per_pass)


def test_declined_with_predictions() -> None:
    w = workload_from_rows([(0, 10, 20, 1, 1), (0, 5, 20, 2, 1), (3, 5, 20, 1, 2)], 2)
    assert simulate(w, "fcfs", False, estimator="easy++").stats["whole_run"] is False


def test_a_blocked_head_blocks_the_queue() -> None:
    """Golden: 4 processors; job 0 takes 3 until t=10, job 1 (4) waits and
    blocks job 2 (1) although one processor is free; both start at 10 and 20."""
    submit = np.array([0.0, 1.0, 2.0])
    start, passes, left = none_run(
        submit, np.array([3, 4, 1]), np.array([10.0, 10.0, 5.0]), submit, 4
    )
    assert start.tolist() == [0.0, 10.0, 20.0] and left == 0
    # Passes at t=0 (start 0), 1 and 2 (blocked), 10 (start 1), 20 (start 2).
    assert passes == 5


def test_a_job_larger_than_the_machine_is_left_waiting() -> None:
    start, _, left = none_run(np.array([0.0]), np.array([5]), np.array([1.0]), np.array([0.0]), 4)
    assert left == 1 and np.isnan(start[0])
