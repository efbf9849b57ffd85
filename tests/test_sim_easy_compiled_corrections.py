"""The compiled EASY pass follows a predictor's raised estimates
(schedlab.sim.correction): it moves the job among its kernel's running jobs, and
the schedule is the Python pass's, job for job. An earlier version ignored every
raise in the compiled pass (KTH-SP2 with user-average: mean bounded slowdown 509.5
instead of 73.9); a later one handed the run over to the Python pass, which then
had to take the jobs already waiting (they could not backfill from a long queue
otherwise)."""

from __future__ import annotations

import numpy as np
import pytest
import schedlab

pytest.importorskip("numba")


def _starts(workload, kernel: str, estimator: str, correction: str):
    result = schedlab.simulate(
        workload,
        backfill="easy",
        backfill_options={"kernel": kernel},
        estimator=estimator,
        estimator_options={"correction": correction},
        progress=False,
    )
    return result


def _long_queue_at_the_first_raise() -> schedlab.Workload:
    """10 processors. User 1's second job (run 500 s) is predicted 10 s from the first
    and outlives it at t = 30 while a whole-machine job waits behind it and 60
    one-processor jobs (20 s requested) wait too: before the raise they end after
    the head's shadow time (30 s); after it (tsafrir: t = 90) they fit before it."""
    submit = [0.0, 20.0, 21.0, *[22.0 + k * 0.01 for k in range(60)]]
    run = [10.0, 500.0, 100.0, *[20.0] * 60]
    requested = [100.0, 1000.0, 100.0, *[20.0] * 60]
    procs = [1, 1, 10, *[1] * 60]
    users = [1, 1, 2, *[3] * 60]
    n = len(submit)
    header = schedlab.Header()
    header.set("MaxProcs", 10)
    return schedlab.Workload.from_arrays(
        {
            "job_number": np.arange(1, n + 1),
            "submit_time": submit,
            "run_time": run,
            "requested_time": requested,
            "requested_processors": procs,
            "allocated_processors": procs,
            "user_id": users,
            "status": [1] * n,
        },
        header=header,
    )


@pytest.mark.parametrize("correction", ["tsafrir", "requested"])
def test_jobs_waiting_at_the_hand_over_backfill_as_in_the_python_pass(correction):
    workload = _long_queue_at_the_first_raise()
    python = _starts(workload, "python", "user-average", correction)
    compiled = _starts(workload, "compiled", "user-average", correction)
    assert compiled.stats["corrections"] == python.stats["corrections"] >= 1
    assert np.array_equal(compiled.start, python.start)
    if correction == "tsafrir":
        # The raise moves the head's shadow to t = 90: some short jobs backfill
        # before the big job starts (it waits for the 500 s job, until t = 520).
        assert (python.start[3:] < python.start[2]).sum() >= 9


@pytest.mark.realdata
@pytest.mark.parametrize(
    ("estimator", "correction"),
    [("user-average", "tsafrir"), ("easy++", "requested"), ("learned", "tsafrir")],
)
def test_kth_with_a_predictor_is_the_same_schedule_with_either_pass(swf_dir, estimator, correction):
    full = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    workload = schedlab.Workload.from_jobs(list(full)[:8000], header=full.header)
    python = _starts(workload, "python", estimator, correction)
    compiled = _starts(workload, "compiled", estimator, correction)
    assert compiled.stats["corrections"] == python.stats["corrections"] > 100
    assert np.array_equal(compiled.start, python.start)


WARM_CHILD = r"""
import sys
from schedlab.policies.backfill import easy_kernels as kn
sys.path.insert(0, sys.argv[1])
from test_sim_easy_compiled_corrections import _long_queue_at_the_first_raise
from whole_run_checks import simulate_run
kn.warm_up()
kernels = (kn.easy_pass, kn.easy_run, kn.move_running)
print(*[len(k.signatures) for k in kernels])
for per_pass in (True, False):
    r = simulate_run(
        _long_queue_at_the_first_raise(), "fcfs", "easy", {"kernel": "compiled"}, per_pass,
        estimator="easy++", estimator_options={"correction": "tsafrir"},
    )
    assert r.stats["corrections"] > 0 and r.stats["whole_run"] != per_pass
print(*[len(k.signatures) for k in kernels])
"""


def test_warm_up_compiles_the_correction_s_move() -> None:
    """``warm_up`` compiles (or loads) every kernel a compiled EASY run calls,
    the pass-by-pass run's move of a raised job (``move_running``, which the
    whole run no longer calls) included: a run with corrections, pass by pass
    and whole, adds no compiled version (none loaded in the simulation's
    time)."""
    import subprocess
    import sys
    from pathlib import Path

    out = subprocess.run(
        [sys.executable, "-c", WARM_CHILD, str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    warm = [int(x) for x in out[0].split()]
    assert min(warm) >= 1 and out[1] == out[0]
