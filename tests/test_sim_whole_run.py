"""Whole runs (:mod:`schedlab.sim.whole_run`): the compiled EASY loop
(``easy_kernels.easy_run``) gives exactly the schedule and pass count of the
pass-by-pass runs (compiled and Python), the engine offers a whole run only when
nothing in it can change while it runs, and the engine's check of the outcome
refuses a strategy whose whole run breaks the machine's invariants."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.errors import SimulationError
from schedlab.model import Header, Workload
from schedlab.policies.learned import Learned
from schedlab.sim import StrategyError, WholeRun, WholeRunOutcome, online_linear
from schedlab.sim.runner import run_simulation
from whole_run_checks import long_queues, same_result, simulate_run, workloads
from workload_rows import workload_from_rows

pytest.importorskip("numba")

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "swf"
STATIC_POLICIES = ["fcfs", "sjf", "ljf", "smallest", "largest"]


def simulate(w: Workload, policy: str, kernel: str, per_pass: bool = False, **kw: Any) -> Any:
    """Simulate with EASY on ``kernel``; ``per_pass`` keeps the engine's loop."""
    return simulate_run(w, policy, "easy", {"kernel": kernel}, per_pass, **kw)


def starts(result: Any) -> np.ndarray:
    return result.workload.to_arrays()["wait_time"]


@settings(max_examples=150, deadline=None)
@given(workloads(), st.sampled_from(STATIC_POLICIES), st.booleans())
def test_whole_run_equals_pass_by_pass(w: Workload, policy: str, kill: bool) -> None:
    whole = simulate(w, policy, "compiled", kill=kill)
    per_pass = simulate(w, policy, "compiled", per_pass=True, kill=kill)
    python = simulate(w, policy, "python", kill=kill)
    assert whole.stats["whole_run"] is True
    assert per_pass.stats["whole_run"] is False and python.stats["whole_run"] is False
    np.testing.assert_array_equal(starts(whole), starts(per_pass))
    np.testing.assert_array_equal(starts(whole), starts(python))
    for key in ("passes", "events", "estimate_fallbacks", "overran_estimate"):
        assert whole.stats[key] == python.stats[key], key


@settings(max_examples=40, deadline=None)
@given(long_queues(), st.sampled_from(STATIC_POLICIES), st.sampled_from(["none", "tsafrir"]))
def test_long_queues_whole_run_equals_pass_by_pass(
    w: Workload, policy: str, correction: str
) -> None:
    if correction == "none":
        whole = simulate(w, policy, "compiled", kill=False)
        python = simulate(w, policy, "python", kill=False)
    else:  # predictions (keys from them are not known before the run: fcfs only)
        kw: dict[str, Any] = {
            "estimator": "easy++",
            "estimator_options": {"correction": correction},
        }
        whole = simulate(w, "fcfs", "compiled", **kw)
        python = simulate(w, "fcfs", "python", **kw)
    assert whole.stats["whole_run"]
    np.testing.assert_array_equal(starts(whole), starts(python))
    assert whole.stats["passes"] == python.stats["passes"]


def whole_equals_pass_by_pass(w: Workload, estimator: str, options: Any, kill: bool) -> None:
    """The compiled whole run, the compiled pass-by-pass run and the Python run
    of FCFS + EASY with ``estimator`` (``options``) give the same result."""
    kw = {"estimator": estimator, "kill": kill}
    whole = simulate(w, "fcfs", "compiled", estimator_options=options, **kw)
    per_pass = simulate(w, "fcfs", "compiled", per_pass=True, estimator_options=options, **kw)
    python = simulate(w, "fcfs", "python", estimator_options=options, **kw)
    assert whole.stats["whole_run"] and not per_pass.stats["whole_run"]
    same_result(whole, per_pass)
    same_result(whole, python)


@settings(max_examples=150, deadline=None)
@given(
    workloads(),
    st.sampled_from(["user-average", "easy++"]),
    st.sampled_from(["none", "tsafrir", "requested"]),
    st.integers(1, 3),
    st.booleans(),
)
def test_whole_run_with_predictions_equals_pass_by_pass(
    w: Workload, estimator: str, correction: str, window: int, kill: bool
) -> None:
    options = {"correction": correction, "window": window}
    whole_equals_pass_by_pass(w, estimator, options, kill)


@st.composite
def many_running(draw: Any) -> Workload:
    """Hundreds of small jobs running at once (the kernel keeps its running jobs in
    blocks of 64: starts and ends split and merge blocks, corrections move jobs
    across them), on a minute grid, with a few users whose run times vary, so that
    predictions fall short and corrections come in numbers."""
    procs = draw(st.integers(100, 600))
    n = draw(st.integers(200, 700))
    rows = []
    for _ in range(n):
        run = draw(st.integers(0, 90)) * 60
        requested = draw(st.one_of(st.just(run), st.integers(1, 200).map(lambda x: x * 60)))
        rows.append(
            (
                draw(st.integers(0, 120)) * 60,
                run,
                requested,
                draw(st.integers(1, 3)),
                draw(st.integers(0, 4)),
            )
        )
    return workload_from_rows(rows, procs)


@settings(max_examples=25, deadline=None)
@given(many_running(), st.sampled_from(["tsafrir", "requested"]))
def test_many_running_jobs_whole_run_equals_pass_by_pass(w: Workload, correction: str) -> None:
    whole_equals_pass_by_pass(w, "easy++", {"correction": correction}, True)


@st.composite
def minute_grid_workloads(draw: Any) -> Workload:
    """Every time a whole number of minutes, as Tsafrir's steps are (1 min, 5 min
    ...): with ``window=1`` predictions are earlier run times, so estimated ends,
    corrections and ends fall on the same instants (several corrections at once,
    a correction at the instant of an end, a job ending exactly at its estimated
    end), and requested times below the run time (``kill=False``) leave jobs past
    their last correction. Whole runs keep one event per running job (its end or
    its estimated end, whichever comes first); this is where that ordering could
    slip."""
    procs = draw(st.integers(2, 12))
    n = draw(st.integers(2, 90))
    rows = []
    for _ in range(n):
        run = draw(st.integers(0, 40)) * 60
        requested = draw(
            st.one_of(st.just(run), st.integers(1, 45).map(lambda x: x * 60), st.just(-1))
        )
        rows.append(
            (
                draw(st.integers(0, 30)) * 60,
                run,
                requested,
                draw(st.integers(1, procs)),
                draw(st.integers(0, 2)),
            )
        )
    rows.sort()
    return workload_from_rows(rows, procs)


@settings(max_examples=200, deadline=None)
@given(
    minute_grid_workloads(),
    st.sampled_from(["easy++", "learned"]),
    st.sampled_from(["tsafrir", "requested", "none"]),
    st.booleans(),
)
def test_whole_run_events_on_a_minute_grid_equal_pass_by_pass(
    w: Workload, estimator: str, correction: str, kill: bool
) -> None:
    options: dict[str, Any] = {"correction": correction, "window": 1}
    if estimator == "learned":
        options = {"correction": correction, "batch": 1}
    whole_equals_pass_by_pass(w, estimator, options, kill)


def raised_many_rows(step: float, jitter: bool) -> list[tuple[float, float, float, int, int]]:
    """Rows (submit, run, requested, size, user) of 246 jobs on 24 processors
    whose predictions fall far short: each of six users' first job is short, the
    next ones long (up to 300 h), submitted in bursts on a grid of ``step``
    seconds; requested times unknown, equal, double or half the run time.
    ``jitter`` adds up to nine grid steps to the run times."""
    rows = []
    for u in range(6):
        rows.append((u * step, 60.0, 120.0, 1 + u % 3, u))
    for i in range(240):
        submit = (600 + (i // 8) * 37) * step
        run = 3600 + (i * 7919) % (300 * 3600) + ((i % 10) * step if jitter else 0.0)
        requested = [-1.0, run, run * 2, run / 2][i % 4]
        rows.append((submit, run, requested, 1 + (i * 13) % 7, i % 6))
    rows.sort()
    return rows


@pytest.mark.parametrize("kill", [True, False])
@pytest.mark.parametrize("step", [60.0, 0.1])
def test_jobs_raised_many_times_at_shared_instants_equal_pass_by_pass(
    step: float, kill: bool
) -> None:
    """The whole run takes its corrections from the front of the kernel's
    running jobs (sorted by estimated end) and keeps only the ends in its heap.
    Here each user's first job is short and the next ones long (up to 300 h:
    past the last increment, which repeats), so predictions fall far short and
    jobs are raised a dozen times or more; submissions in bursts make first and
    later corrections of several jobs fall on the same instants, with ends
    among them; requested times unknown or below the run time (``kill=False``)
    leave jobs past their last correction (overdue). On a grid of ``step``
    seconds (0.1: times that are not whole numbers)."""
    w = workload_from_rows(raised_many_rows(step, jitter=True), 24)
    whole_equals_pass_by_pass(w, "easy++", {"correction": "tsafrir", "window": 1}, kill)
    result = simulate(
        w, "fcfs", "compiled", estimator="easy++",
        estimator_options={"correction": "tsafrir", "window": 1}, kill=kill,
    )  # fmt: skip
    # About ten corrections a job.
    assert result.stats["corrections"] > 2000 and result.stats["jobs_corrected"] > 200


@pytest.mark.parametrize("correction", ["tsafrir", "requested"])
def test_the_whole_run_leaves_no_running_or_overdue_job(
    correction: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a whole run every job has left the kernel's running jobs: no block
    in use, no running job and no overdue processors (jobs whose estimate a
    correction did not raise, kept out of the blocks until they end). Requested
    times below the run times (no kill) make such jobs here."""
    from schedlab.policies.backfill import easy_compiled

    kn = easy_compiled.kn
    real = kn.easy_run
    calls: list[tuple[Any, ...]] = []

    def spy(*args: Any) -> Any:
        out = real(*args)
        calls.append(args)
        return out

    monkeypatch.setattr(kn, "easy_run", spy)
    rows = raised_many_rows(60.0, jitter=False)
    result = simulate(
        workload_from_rows(rows, 24), "fcfs", "compiled", estimator="easy++",
        estimator_options={"correction": correction}, kill=False,
    )  # fmt: skip
    assert result.stats["whole_run"] and result.stats["corrections"] > 100
    meta, _, floats, *_ = calls[-1]
    submit, run_time, _, start = calls[-1][5:9]
    assert len(submit) == len(rows)
    # Jobs past their last correction (their estimated end before their end).
    assert (floats[kn.JOB_END, : len(rows)] < start + run_time).sum() > 10
    assert meta[kn.M_BLOCKS] == 0 and meta[kn.M_RUNNING] == 0 and meta[kn.M_OVERDUE] == 0


@pytest.mark.parametrize("estimator", ["easy++", "learned"])
def test_the_kernel_only_reads_the_plans_per_job_arrays(
    estimator: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A predictor's whole run hands ``easy_run`` the plan's user ids (made
    dense), requested times and fallbacks themselves, not copies (the requested
    times are ``prepare``'s array): the kernel must never write into them. Each
    is compared with a copy taken before the call, after a run with many
    corrections (the same workload as above)."""
    from schedlab.policies.backfill import easy_compiled

    kn = easy_compiled.kn
    real = kn.easy_run
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    def spy(*args: Any) -> Any:
        given = args[12:15]  # user, requested, fallback
        before = [a.copy() for a in given]
        out = real(*args)
        seen.extend(zip(given, before, strict=True))
        return out

    monkeypatch.setattr(kn, "easy_run", spy)
    rows = raised_many_rows(60.0, jitter=False)
    options = {"batch": 1} if estimator == "learned" else {}
    result = simulate(
        workload_from_rows(rows, 24), "fcfs", "compiled",
        estimator=estimator, estimator_options=options,
    )  # fmt: skip
    assert result.stats["whole_run"] and result.stats["corrections"] > 100
    assert [len(a) for a, _ in seen[-3:]] == [len(rows)] * 3  # (before: warm-up calls)
    for after, before in seen:
        np.testing.assert_array_equal(after, before)


@pytest.mark.parametrize("correction", ["tsafrir", "requested"])
def test_kth_with_easy_plus_plus_whole_run_equals_pass_by_pass(correction: str) -> None:
    w = schedlab.read(DATA / "KTH-SP2-1996-2.1-cln.swf.gz")
    options = {"correction": correction}
    whole = simulate(w, "fcfs", "compiled", estimator="easy++", estimator_options=options)
    per_pass = simulate(
        w, "fcfs", "compiled", per_pass=True, estimator="easy++", estimator_options=options
    )
    assert whole.stats["whole_run"] and whole.stats["corrections"] > 10_000
    # Counted by the whole run, a set of the jobs in the pass-by-pass run.
    assert whole.stats["jobs_corrected"] == per_pass.stats["jobs_corrected"] > 1_000
    same_result(whole, per_pass)


@pytest.mark.parametrize("log", ["KTH-SP2-1996-2.1-cln.swf.gz", "LANL-CM5-1994-4.1-cln.swf.gz"])
def test_real_logs_whole_run_equals_python(log: str) -> None:
    w = schedlab.read(DATA / log)
    whole = simulate(w, "fcfs", "compiled")
    python = simulate(w, "fcfs", "python")
    assert whole.stats["whole_run"] and not python.stats["whole_run"]
    np.testing.assert_array_equal(starts(whole), starts(python))
    assert whole.stats["passes"] == python.stats["passes"]


def test_ricc_prefix_with_sjf_equals_python() -> None:
    w = schedlab.read(DATA / "RICC-2010-2.swf.gz")
    w = Workload(w.header, columns=w.to_arrays().take(np.arange(20_000)))
    whole = simulate(w, "sjf", "compiled")
    python = simulate(w, "sjf", "python")
    assert whole.stats["whole_run"]
    np.testing.assert_array_equal(starts(whole), starts(python))


@pytest.mark.parametrize(
    ("policy", "kw"),
    [
        ("wfp3", {}),  # dynamic keys
        ("psp", {}),  # notifications
        ("sjf", {"estimator": "easy++"}),  # keys from predictions not known yet
        ("sjf", {"estimator": "learned"}),  # the same with the online model
        ("fcfs", {"dependencies": True}),
    ],
)
def test_no_whole_run_when_inputs_change_during_the_run(policy: str, kw: dict) -> None:
    w = schedlab.read(DATA / "KTH-SP2-1996-2.1-cln.swf.gz")
    columns = w.to_arrays().take(np.arange(2_000))
    columns["preceding_job_number"][100] = columns["job_number"][90]
    w = Workload(w.header, columns=columns)
    result = simulate(w, policy, "compiled", **kw)
    assert result.stats["whole_run"] is False
    if kw.get("dependencies"):
        assert result.stats["dependencies_honoured"] == 1
    else:  # the same run without what changes during it is a whole run
        assert simulate(w, "fcfs", "compiled").stats["whole_run"] is True


class Liar:
    """A strategy whose whole run returns the start times it is given."""

    name = "liar"

    def __init__(self, start: Any) -> None:
        self.start = start

    def bind(self, state: Any) -> None:
        self.state = state

    def schedule(self, now: float) -> None:
        self.state.start_from_head()

    def run_whole(self, plan: WholeRun) -> Any:
        return self.start(plan)


def tiny() -> Workload:
    header = Header()
    header.set("MaxProcs", 4)
    return Workload.from_arrays(
        {
            "job_number": [1, 2, 3],
            "submit_time": [0, 0, 5],
            "run_time": [10, 10, 10],
            "requested_time": [10, 10, 10],
            "requested_processors": [3, 2, 1],
            "status": [1, 1, 1],
        },
        header=header,
    )


@pytest.mark.parametrize(
    ("start", "message"),
    [
        (lambda p: np.array([0.0, 0.0, 5.0]), "job 2 (index 1) started with 2 processors"),
        (lambda p: np.array([0.0, 10.0, 4.0]), "job 3 (index 2) started before its submission"),
        (lambda p: np.array([0.0, 10.0, np.nan]), "job 3 (index 2) never started"),
        (lambda p: np.array([0.0, 10.0]), "gave (2,) start times"),
    ],
)
def test_the_engine_refuses_a_whole_run_that_breaks_the_machine(start: Any, message: str) -> None:
    strategy = Liar(lambda p: WholeRunOutcome(start=start(p), passes=1))
    with pytest.raises(StrategyError, match="liar") as caught:
        schedlab.simulate(tiny(), "fcfs", strategy, progress=False)
    assert message in str(caught.value)


def test_a_whole_run_the_engine_accepts_and_one_declined() -> None:
    good = Liar(lambda p: WholeRunOutcome(start=np.array([0.0, 10.0, 5.0]), passes=3))
    result = schedlab.simulate(tiny(), "fcfs", good, progress=False)
    assert result.stats["whole_run"] is True
    assert result.stats["passes"] == 3
    np.testing.assert_array_equal(starts(result), [0.0, 10.0, 0.0])
    declined = schedlab.simulate(tiny(), "fcfs", Liar(lambda p: None), progress=False)
    assert declined.stats["whole_run"] is False
    np.testing.assert_array_equal(starts(declined), [0.0, 10.0, 5.0])
    with pytest.raises(SimulationError, match="not a WholeRunOutcome"):
        schedlab.simulate(tiny(), "fcfs", Liar(lambda p: [0, 10, 5]), progress=False)


@pytest.mark.parametrize("kernel", ["python", "compiled"])
def test_a_negative_requested_time_is_unknown(kernel: str) -> None:
    """SWF's -1 given through Workload.from_arrays kills nothing: the job runs its
    5 s (it once ran -1 s and the next job started before its submission)."""
    header = Header()
    header.set("MaxProcs", 1)
    w = Workload.from_arrays(
        {
            "job_number": [1, 2],
            "submit_time": [3, 3],
            "run_time": [5, 0],
            "requested_time": [-1, 4],
            "requested_processors": [1, 1],
            "status": [1, 1],
        },
        header=header,
    )
    result = simulate(w, "fcfs", kernel)
    np.testing.assert_array_equal(starts(result), [0.0, 5.0])
    assert result.stats["killed"] == 0 and result.stats["estimate_fallbacks"] == 1


@pytest.mark.parametrize(
    ("kernel", "per_pass"), [("python", True), ("compiled", True), ("compiled", False)]
)
def test_arrival_after_the_shadow_time_passed_uses_the_new_extra(
    kernel: str, per_pass: bool
) -> None:
    """Golden: A, B and C run past their estimates (kill off). The head H (5 of 6
    processors) has shadow time 20 and no extra processors at t=1. At t=25 nothing
    has ended; the arrival J (1 processor, 5 s) may not reuse that memo: the shadow
    time is now 25, when C (estimated end 22) is believed free too, so 1 extra
    processor is free and J starts at once."""
    header = Header()
    header.set("MaxProcs", 6)
    w = Workload.from_arrays(
        {
            "job_number": [1, 2, 3, 4, 5],
            "submit_time": [0, 0, 0, 1, 25],
            "run_time": [100, 100, 100, 10, 5],
            "requested_time": [10, 20, 22, 10, 5],
            "requested_processors": [2, 2, 1, 5, 1],
            "status": [1] * 5,
        },
        header=header,
    )
    result = simulate(w, "fcfs", kernel, per_pass=per_pass, kill=False)
    assert result.stats["whole_run"] is not per_pass
    np.testing.assert_array_equal(starts(result), [0.0, 0.0, 0.0, 99.0, 0.0])


# ------------------------------------------------------------------ learned
# The ``learned`` predictor in a whole run (schedlab.sim.OnlineLinearModel):
# compiled EASY's whole run makes the same predictions, learning steps and
# corrections as the estimator does pass by pass, bit for bit (the same functions
# of schedlab.sim.online_linear, compiled), so the schedule, the estimates, the
# pass counts, every stat and the final weights are those of the pass-by-pass
# runs (compiled and Python).

KTH = DATA / "KTH-SP2-1996-2.1-cln.swf.gz"


def simulate_learned(
    w: Workload, kernel: str, est: Learned, per_pass: bool = False, kill: bool = True
) -> Any:
    """FCFS + EASY on ``kernel`` with the estimator object ``est`` (whose state is
    read afterwards); ``per_pass`` keeps the engine's loop."""

    def inspect(engine: Any) -> None:
        if per_pass:
            engine.state.reservation_log = {}

    return run_simulation(
        w,
        policy="fcfs",
        backfill="easy",
        procs=None,
        estimator=est,
        kill=kill,
        dependencies=False,
        policy_options=None,
        backfill_options={"kernel": kernel},
        estimator_options=None,
        registry=None,
        progress=False,
        inspect=inspect,
    )


def three_runs(w: Workload, options: dict[str, Any], kill: bool = True) -> list[tuple[Any, Any]]:
    """(result, estimator) of the whole run, the compiled pass-by-pass run and the
    Python pass-by-pass run."""
    runs = []
    for kernel, per_pass in (("compiled", False), ("compiled", True), ("python", True)):
        est = Learned(**options)
        runs.append((simulate_learned(w, kernel, est, per_pass=per_pass, kill=kill), est))
    return runs


def check_same(runs: list[tuple[Any, Any]]) -> None:
    (whole, w_est), *others = runs
    assert whole.stats["whole_run"] is True
    for other, o_est in others:
        assert other.stats["whole_run"] is False
        same_result(whole, other)
        assert w_est.trained == o_est.trained
        assert w_est.w == o_est.w  # the final weights, bit for bit


@settings(max_examples=120, deadline=None)
@given(
    workloads(),
    st.sampled_from(["none", "tsafrir", "requested"]),
    st.sampled_from([2, 3, 5]),
    st.sampled_from([1, 2, 3, 16]),
    st.sampled_from([0.05, 0.5, 3.0]),
    st.sampled_from([1.0, 4.0]),
    st.booleans(),
)
def test_learned_whole_run_equals_pass_by_pass(
    w: Workload,
    correction: str,
    window: int,
    batch: int,
    rate: float,
    under_weight: float,
    kill: bool,
) -> None:
    options = {
        "correction": correction,
        "window": window,
        "batch": batch,
        "rate": rate,
        "under_weight": under_weight,
    }
    check_same(three_runs(w, options, kill=kill))


@pytest.mark.realdata
@pytest.mark.parametrize(
    "options",
    [{}, {"correction": "requested", "batch": 7, "window": 3}, {"correction": "none", "rate": 0.5}],
)
def test_kth_learned_whole_run_equals_pass_by_pass(options: dict[str, Any]) -> None:
    w = schedlab.read(KTH)
    runs = three_runs(w, options)
    whole, est = runs[0]
    assert est.trained > 20_000
    assert (whole.estimate != whole.workload.to_arrays()["requested_time"]).mean() > 0.5
    if options.get("correction", "tsafrir") != "none":
        assert whole.stats["corrections"] > 1_000
    check_same(runs)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.floats(min_value=0, max_value=1e9),
            st.floats(max_value=-1e-300),
            st.just(float("nan")),
        ),
        max_size=40,
    ),
    st.sampled_from([1.0, 10.0, 3.7]),
)
def test_log_targets_are_log_target_of_each_run_time(runs: list[float], scale: float) -> None:
    """The targets a learned run makes before it (and both of its paths read) are
    the very numbers of the scalar formula; unknown run times give NaN."""
    targets = online_linear.log_targets(runs, scale)
    assert targets.dtype == np.float64 and targets.shape == (len(runs),)
    for run, target in zip(runs, targets.tolist(), strict=True):
        if run >= 0:
            assert target == online_linear.log_target(run, scale)
        else:
            assert target != target


class TargetsGiven(Learned):
    """``learned`` whose model hands the whole run ``targets`` instead of its own."""

    def __init__(self, targets: Any, **options: Any) -> None:
        super().__init__(**options)
        self.given = targets

    def history_model(self) -> Any:
        import attrs

        return attrs.evolve(super().history_model(), targets=self.given)


@pytest.mark.realdata
def test_a_model_without_targets_gets_the_same_run() -> None:
    """An OnlineLinearModel without ``targets`` (a third party's): the whole run
    makes them from the plan's run times, the same numbers; targets of the wrong
    shape: the whole run declines (the engine's loop runs)."""
    w = schedlab.read(KTH)
    w = Workload(w.header, columns=w.to_arrays().take(np.arange(4000)))
    whole, est = three_runs(w, {})[0]
    none = TargetsGiven(None)
    same = simulate_learned(w, "compiled", none)
    assert same.stats["whole_run"] is True
    same_result(whole, same)
    assert none.w == est.w
    short = TargetsGiven(np.zeros(5))
    declined = simulate_learned(w, "compiled", short)
    assert declined.stats["whole_run"] is False
    same_result(whole, declined)


def test_the_kernel_records_the_online_model_source() -> None:
    """easy_run compiles in schedlab.sim.online_linear: numba's cache of easy_run
    does not track that file, so easy_kernels records its hash (a change there
    needs a new hash there, which invalidates the cache)."""
    from schedlab.policies.backfill import easy_kernels

    source = Path(online_linear.__file__).read_bytes()
    assert hashlib.sha256(source).hexdigest() == easy_kernels.ONLINE_LINEAR_SHA256, (
        "schedlab/sim/online_linear.py changed: set easy_kernels.ONLINE_LINEAR_SHA256 "
        "to its new SHA-256"
    )
    assert easy_kernels.ONLINE_LINEAR_CURRENT


def test_the_node_kernel_records_the_prediction_steps_source() -> None:
    """node_easy_run compiles in easy_kernels' prediction steps: numba's cache of
    node_easy_run does not track that file, so easy_nodes_kernels records its hash
    (a change there needs a new hash there, which invalidates the cache)."""
    from schedlab.policies.backfill import easy_kernels, easy_nodes_kernels

    source = Path(easy_kernels.__file__).read_bytes()
    assert hashlib.sha256(source).hexdigest() == easy_nodes_kernels.EASY_KERNELS_SHA256, (
        "policies/backfill/easy_kernels.py changed: set "
        "easy_nodes_kernels.EASY_KERNELS_SHA256 to its new SHA-256"
    )
    assert easy_nodes_kernels.PREDICTION_CURRENT


NO_NUMBA = """
import json, sys
sys.modules["numba"] = None  # import numba fails
import numpy as np, schedlab
from schedlab.model import Workload
w = schedlab.read(sys.argv[1])
w = Workload(w.header, columns=w.to_arrays().take(np.arange(3000)))
r = schedlab.simulate(w, backfill="easy", estimator="learned", progress=False)
assert "numba" not in [m for m, v in sys.modules.items() if v is not None]
print(json.dumps({"estimate": r.estimate.tolist(), "start": r.start.tolist(),
                  "whole": r.stats["whole_run"], "passes": r.stats["passes"]}))
"""


@pytest.mark.realdata
def test_learned_without_numba_gives_the_whole_run_s_schedule() -> None:
    """Without numba, learned runs pass by pass in pure Python: the same
    estimates and schedule as the compiled whole run."""
    done = subprocess.run(
        [sys.executable, "-c", NO_NUMBA, str(KTH)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["whole"] is False
    w = schedlab.read(KTH)
    w = Workload(w.header, columns=w.to_arrays().take(np.arange(3000)))
    whole = simulate_learned(w, "compiled", Learned())
    assert whole.stats["whole_run"] is True
    assert whole.estimate.tolist() == got["estimate"]
    assert whole.start.tolist() == got["start"]
    assert whole.stats["passes"] == got["passes"]


def test_dense_users_groups_jobs_by_user_id() -> None:
    """The kernel's history rows: one per user id, jobs of one id on one row,
    whether the ids are dense (no sort) or far apart (ranked)."""
    from schedlab.policies.backfill.easy_compiled import dense_users

    for ids in ([3, -1, 3, 7, -1], [10**9, -1, 10**9, 5, 2 * 10**9]):
        user = np.array(ids, dtype=np.int64)
        rows, count = dense_users(user)
        assert rows.min() >= 0 and rows.max() < count
        for a in range(len(ids)):
            for b in range(len(ids)):
                assert (rows[a] == rows[b]) == (ids[a] == ids[b])
    assert dense_users(np.array([10**9, 0, 2 * 10**9]))[1] == 3
    assert dense_users(np.zeros(0, dtype=np.int64))[0].shape == (0,)
