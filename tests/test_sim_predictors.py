"""Run-time predictors (``easy++``, ``learned``), the correction of predictions that
prove too short (``correction=tsafrir|requested|none``) and the prediction-quality
metrics: golden cases computed by hand, no look-ahead, bad options, workloads
without user ids."""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.errors import UsageError
from schedlab.invariants import ShortPredictions
from schedlab.invariants import random_workload as random_workload_for_tests
from schedlab.model import Header, Workload
from schedlab.policies.backfill.reference import ReferenceConservative
from schedlab.policies.easypp import EasyPlusPlus
from schedlab.policies.learned import Learned
from schedlab.sim import TSAFRIR_INCREMENTS, Correction, SchedulerState, make_correction

SWF = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "swf"


def workload(rows: list[tuple[float, ...]], procs: int) -> Workload:
    """Jobs ``(submit, run, requested, size, user)``, numbered from 1."""
    a = np.array(rows, dtype=np.float64)
    header = Header()
    header.set("MaxProcs", procs)
    return Workload.from_arrays(
        {
            "job_number": np.arange(1, len(rows) + 1),
            "submit_time": a[:, 0],
            "run_time": a[:, 1],
            "requested_time": a[:, 2],
            "requested_processors": a[:, 3],
            "user_id": np.where(a[:, 4] < 0, np.nan, a[:, 4]),
            "status": np.ones(len(rows)),
        },
        header=header,
    )


# Every job fits at once (size 1 on 8 processors): starts = submissions.
GOLDEN = [
    (0, 10, 100, 1, 1),  # 1: no history -> requested 100
    (5, 20, 100, 1, 1),  # 2: job 1 still running -> 100
    (10, 30, 100, 1, 1),  # 3: job 1 ended at 10 (ends before arrivals) -> 10
    (30, 40, 100, 1, 1),  # 4: jobs 1, 2 ended -> (10 + 20) / 2 = 15
    (50, 5, 12, 1, 1),  # 5: jobs 2, 3 are the last two -> 25, capped at 12
    (50, 7, 50, 1, 2),  # 6: user 2 has no history -> 50
    (0, 3, 9, 1, -1),  # 7: no user id, no history -> 9
    (60, 1, 100, 1, -1),  # 8: the no-user history holds job 7 -> 3
]
GOLDEN_PREDICTIONS = [100, 100, 10, 15, 12, 50, 9, 3]


def test_easypp_predictions_golden() -> None:
    r = schedlab.simulate(workload(GOLDEN, 8), backfill="none", estimator="easy++", progress=False)
    assert r.estimate.tolist() == GOLDEN_PREDICTIONS
    assert r.start.tolist() == [row[0] for row in GOLDEN]
    # Job 3 (predicted 10, runs 30) is raised at 20 to 10 + 60 s; job 4 (15, runs 40)
    # at 45: two raises, two jobs. Predictions stay those made at submission.
    assert r.stats["corrections"] == 2 and r.stats["jobs_corrected"] == 2
    assert r.stats["estimator"] == {"no_user_predictions": 2}
    assert r.stats["notes"] == [
        "easy++: 2 jobs have no user id: predicted from the shared history of the "
        "workload's jobs without user id"
    ]


def test_easypp_window_option_and_user_average_agree() -> None:
    w = workload(GOLDEN, 8)
    one = schedlab.simulate(w, backfill="none", estimator="easy++:window=1", progress=False)
    assert one.estimate.tolist() == [100, 100, 10, 20, 12, 50, 9, 3]
    plain = schedlab.simulate(w, backfill="none", estimator="user-average", progress=False)
    assert plain.estimate.tolist() == GOLDEN_PREDICTIONS
    assert "corrections" not in plain.stats  # user-average: correction=none by default


def test_prediction_metrics_golden() -> None:
    r = schedlab.simulate(workload(GOLDEN, 8), backfill="none", estimator="easy++", progress=False)
    run = np.array([row[1] for row in GOLDEN], dtype=float)
    pred = np.array(GOLDEN_PREDICTIONS, dtype=float)
    report = schedlab.compute_metrics(
        r, names=["prediction-error", "under-prediction", "prediction-accuracy"]
    )
    assert report.value("prediction-error") == pytest.approx(np.abs(pred - run).mean())
    # Under-predicted: job 3 (10 < 30), job 4 (15 < 40).
    assert report.value("under-prediction") == pytest.approx(2 / 8)
    assert report.value("prediction-accuracy") == pytest.approx(np.minimum(run / pred, 1).mean())
    by_user = schedlab.compute_metrics(r, names=["under-prediction"], by="user")
    assert by_user.column("under-prediction") == {
        1: pytest.approx(2 / 5),
        2: 0.0,
        "unknown": 0.0,
        "all": pytest.approx(2 / 8),
    }
    # A trace carries no predictions: no value, said in the notes.
    trace = schedlab.compute_metrics(workload(GOLDEN, 8), names=["prediction-error"])
    assert trace.value("prediction-error") is None
    assert any("prediction-error" in note for note in trace.notes)


# ------------------------------------------------------------------ corrections


def test_tsafrir_correction_steps() -> None:
    class Table:
        requested_time = [1000.0, math.nan, 50.0]

    c = Correction("tsafrir")
    c.bind(Table())
    assert TSAFRIR_INCREMENTS[:4] == (60, 300, 900, 1800)
    assert c.correct(0, 10) == 70  # elapsed + 1 min
    assert c.correct(0, 70) == 370  # + 5 min
    assert c.correct(0, 370) == 1000  # 370 + 15 min, capped by the request
    # Unknown request: no cap; the increments go on, the last one repeats.
    got = [c.correct(1, 0) for _ in range(13)]
    assert got == [*TSAFRIR_INCREMENTS, TSAFRIR_INCREMENTS[-1], TSAFRIR_INCREMENTS[-1]]
    assert c.correct(2, 50) == 50  # at its request: nothing more (treated as ending now)
    r = Correction("requested")
    r.bind(Table())
    assert r.correct(0, 10) == 1000
    assert r.correct(1, 10) == 70  # unknown request: stepwise
    assert make_correction("estimator x", "none") is None


class Static:
    """Fixed predictions with a correction (a third party's estimator)."""

    def __init__(self, predictions: list[float], mode: str) -> None:
        self.predictions = predictions
        self.correction = make_correction("estimator static", mode)
        self.correct = self.correction.correct if self.correction else None

    def bind(self, table: Any) -> None:
        if self.correction:
            self.correction.bind(table)

    def estimates(self, table: Any) -> list[float]:
        return list(self.predictions)


class Recording:
    """``none`` backfilling that records every raised estimate."""

    name = "recording"

    def __init__(self) -> None:
        self.raised: list[tuple[float, float, float]] = []

    def bind(self, state: SchedulerState) -> None:
        self.state = state

    def schedule(self, now: float) -> None:
        self.state.start_from_head()

    def on_estimate_raised(self, job: int, old_end: float, now: float) -> None:
        self.raised.append((now, old_end, self.state.estimated_end[job]))


@pytest.mark.parametrize(
    ("mode", "kill", "raises"),
    [
        ("tsafrir", True, [(10, 10, 70), (70, 70, 370), (370, 370, 1000)]),
        ("requested", True, [(10, 10, 1000)]),
        ("none", True, []),
        # Past its request (no kill): no further raise, treated as ending now.
        ("tsafrir", False, [(10, 10, 70), (70, 70, 370), (370, 370, 1000)]),
    ],
)
def test_the_engine_raises_estimates(mode: str, kill: bool, raises: list) -> None:
    run = 500 if kill else 1500
    strategy = Recording()
    r = schedlab.simulate(
        workload([(0, run, 1000, 1, 1)], 1),
        backfill=strategy,
        estimator=Static([10], mode),
        kill=kill,
        progress=False,
    )
    assert strategy.raised == raises
    assert r.end.tolist() == [run]
    assert r.estimate.tolist() == [10]  # the prediction made at submission
    assert r.stats.get("corrections", 0) == len(raises)


@pytest.mark.parametrize("backfill", ["easy", "depth", "conservative", "slurm"])
@pytest.mark.parametrize("mode", ["tsafrir", "requested", "none"])
def test_a_raised_estimate_lets_jobs_backfill(backfill: str, mode: str) -> None:
    """A (1 proc, predicted 10, runs 100) holds the head B (2 procs) back; C (1 proc,
    30 s) arrives at 20. Without correction A "ends now" at 20: B's shadow is now
    and C cannot backfill under EASY (it starts after B, at 130; conservative
    re-plans B's stale reservation and C gets the slot after it, 50). Raised to 70
    (or to its request), A ends after C would: C starts at 20 under every strategy."""
    if backfill == "slurm":
        backfill = "slurm:bf_interval=1,bf_resolution=1"
    rows = [(0, 100, 1000, 1, 1), (1, 30, 30, 2, 1), (20, 30, 30, 1, 1)]
    r = schedlab.simulate(
        workload(rows, 2),
        backfill=backfill,
        estimator=Static([10, 30, 30], mode),
        progress=False,
    )
    uncorrected = 50.0 if backfill == "conservative" else 130.0
    assert r.start.tolist() == [0, 100, 20.0 if mode != "none" else uncorrected]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), mode=st.sampled_from(["tsafrir", "requested"]))
def test_conservative_fast_paths_equal_the_reference_with_corrections(seed: int, mode: str) -> None:
    w = random_workload_for_tests(seed, jobs=40)
    starts = []
    backfills: list[Any] = ["conservative:kernel=python", ReferenceConservative()]
    if importlib.util.find_spec("numba") is not None:
        backfills.append("conservative:kernel=compiled")
    for backfill in backfills:
        r = schedlab.simulate(
            w, backfill=backfill, estimator=ShortPredictions(mode), progress=False
        )
        starts.append(r.start.tolist())
    assert all(other == starts[0] for other in starts[1:])


# ------------------------------------------------------------------ learned


def test_learned_unit_golden() -> None:
    """Until the first batch the prediction is the request; after it, the model's
    constant starts at the batch's mean target and one AdaGrad step follows."""

    class Table:
        procs = 4
        requested_time = [100.0, 100.0, 100.0, 50.0, 1e9]
        size = [1, 1, 1, 1, 1]
        submit = [0.0, 0.0, 10.0, 20.0, 30.0]
        user = [1, 1, 1, 2, -1]
        run_time = [math.e**10 - 1, math.e**10 - 1, 5.0, 5.0, 5.0]

        def __len__(self) -> int:
            return 5

    est = Learned(batch=2, rate=0.5)
    est.bind(Table())
    assert est.estimate(0, 0) == 100 and est.estimate(1, 0) == 100
    est.on_finish(0, 5)
    assert est.trained == 0 and est.estimate(2, 10) == 100
    est.on_finish(1, 6)
    assert est.trained == 2
    # Target log1p(run) / 10 = 1 for both: the constant starts at 1, the errors of
    # the step are then those of the other features, which are all >= 0 here, so
    # the prediction for an identical job is e^10 - 1 or less, capped by the request.
    assert est.estimate(3, 20) == 50
    assert 0 < est.estimate(4, 30) <= math.e**10
    assert est.no_user == 1


def _kth(jobs: int = 2500) -> Workload:
    from schedlab.model import JobColumns

    w = schedlab.read(SWF / "KTH-SP2-1996-2.1-cln.swf.gz")
    cols = w.to_arrays()
    part = cols.take(np.arange(jobs))
    return Workload(w.header, columns=JobColumns(dict(part.data), part.extras))


@pytest.mark.realdata
@pytest.mark.parametrize("estimator", ["learned", "easy++", "learned:correction=none"])
def test_no_look_ahead(estimator: str) -> None:
    """A prediction depends only on jobs finished before the job's submission:
    lengthening every job that ends after time T changes no prediction of a job
    submitted by T (nor, as the scheduler saw no real run time, any start by T)."""
    w = _kth()
    base = schedlab.simulate(w, backfill="easy", estimator=estimator, progress=False)
    submit = base.workload.to_arrays()["submit_time"]
    cut = float(np.median(submit))
    later = base.end > cut
    cols = w.to_arrays()
    data = dict(cols.data)
    run = data["run_time"].copy()
    rows = base.rows[later]
    run[rows] = run[rows] * 3 + 100
    data["run_time"] = run
    from schedlab.model import JobColumns

    perturbed = Workload(w.header, columns=JobColumns(data, cols.extras))
    other = schedlab.simulate(perturbed, backfill="easy", estimator=estimator, progress=False)
    early = submit <= cut
    assert early.sum() > 1000 and later.sum() > 1000
    assert np.array_equal(base.estimate[early], other.estimate[early])
    started = base.start <= cut
    assert np.array_equal(base.start[started], other.start[started])
    # The perturbation is real: later predictions do change.
    assert not np.array_equal(base.estimate[~early], other.estimate[~early])


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("easy++:window=-1", r"^estimator easy\+\+: option window='-1': must be in 1\.\.10000$"),
        (
            "easy++:correction=later",
            r"^estimator easy\+\+: option correction='later': expected one of "
            r"tsafrir, requested, none$",
        ),
        ("learned:window=-3", r"^estimator learned: option window='-3': must be in 2\.\.10000$"),
        ("learned:rate=0", r"^estimator learned: option rate='0': must be in \(0, 10\]$"),
        ("learned:under_weight=0.5", r"^estimator learned: option under_weight='0.5'"),
        ("learned:batch=0", r"^estimator learned: option batch='0': must be in 1\.\.100000$"),
        ("user-average:correction=x", r"^estimator user-average: option correction='x'"),
    ],
)
def test_bad_options_are_one_line_errors(spec: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        schedlab.simulate(workload(GOLDEN, 8), estimator=spec, progress=False)


def test_bad_option_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "w.swf"
    schedlab.write(workload(GOLDEN, 8), path)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "schedlab",
            "simulate",
            str(path),
            "--estimator",
            "easy++",
            "--estimator-option",
            "correction=x",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "schedlab: error: estimator easy++: option correction='x': expected one of "
        "tsafrir, requested, none"
    ]


@pytest.mark.parametrize("estimator", ["easy++", "learned", "user-average"])
def test_a_workload_without_user_ids_uses_the_workload_history(estimator: str) -> None:
    rows = [(10 * i, 5 + i, 100, 1, -1) for i in range(40)]
    r = schedlab.simulate(workload(rows, 4), estimator=estimator, progress=False)
    assert r.stats["estimator"]["no_user_predictions"] == 40
    assert any("40 jobs have no user id" in note for note in r.stats["notes"])
    if estimator == "easy++":
        # Each job ends before the next arrives: the mean of the two previous runs.
        assert r.estimate.tolist()[2:5] == [5.5, 6.5, 7.5]


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    mode=st.sampled_from(["tsafrir", "requested"]),
    order=st.sampled_from(["priority", "sjbf"]),
    walk=st.sampled_from([0, 1, 32]),
)
def test_easy_equals_its_plain_reference_with_corrections(
    seed: int, mode: str, order: str, walk: int
) -> None:
    """EASY's shortcuts (a pass after corrections only; the chunked shadow-time walk,
    forced from the first running job with walk=0) change nothing: same schedule as
    the plainly written DepthReference(1) under raised estimates."""
    from schedlab.policies.backfill import easy as easy_module

    with pytest.MonkeyPatch.context() as patch:
        # The chunked shadow walk these patched is gone (the compiled-EASY merge);
        # the parameters stay harmless so the examples keep their coverage.
        patch.setattr(easy_module, "WALK", walk, raising=False)
        patch.setattr(easy_module, "CHUNK", 3, raising=False)
        _compare_easy(seed, mode, order, patch)


def _compare_easy(seed: int, mode: str, order: str, patch: pytest.MonkeyPatch) -> None:
    from schedlab.policies.backfill import easy as easy_module
    from schedlab.policies.backfill.depth import DepthReference as Depth

    w = random_workload_for_tests(seed, jobs=60)
    fast = schedlab.simulate(
        w, backfill=f"easy:order={order}", estimator=ShortPredictions(mode), progress=False
    )
    if order == "priority":
        plain = schedlab.simulate(
            w, backfill=Depth(1), estimator=ShortPredictions(mode), progress=False
        )
        assert fast.start.tolist() == plain.start.tolist()
    patch.setattr(easy_module, "WALK", 10**9)
    again = schedlab.simulate(
        w, backfill=f"easy:order={order}", estimator=ShortPredictions(mode), progress=False
    )
    assert fast.start.tolist() == again.start.tolist()
    assert fast.stats["corrections"] > 0


class _Table:
    """The job-table lists a predictor reads."""

    def __init__(
        self, submit: list[float], run: list[float], user: list[int], requested: list[float]
    ) -> None:
        self.procs = 8
        self.submit = submit
        self.run_time = run
        self.requested_time = requested
        self.size = [1 + (j % 4) for j in range(len(run))]
        self.user = user

    def __len__(self) -> int:
        return len(self.submit)


def _predictions(
    factory: Any, submit: list[float], run: list[float], user: list[int], requested: list[float]
) -> list:
    """Replay jobs that start at submission: ends (in time order) before the
    submissions of the same instant, as the engine orders them."""
    table = _Table(submit, run, user, requested)
    est = factory()
    est.bind(table)
    events = sorted(
        [(s + r, 0, j) for j, (s, r) in enumerate(zip(submit, run, strict=True))]
        + [(s, 1, j) for j, s in enumerate(submit)]
    )
    out: list[float] = [math.nan] * len(submit)
    for t, kind, j in events:
        if kind == 0:
            est.on_finish(j, t)
        else:
            out[j] = est.estimate(j, t)
    return out


@settings(max_examples=60, deadline=None)
@given(
    jobs=st.lists(
        st.tuples(st.integers(0, 500), st.integers(0, 300), st.integers(-1, 3)),
        min_size=2,
        max_size=40,
    ),
    cut=st.integers(0, 500),
    factor=st.integers(2, 5),
)
@pytest.mark.parametrize(
    "factory",
    [lambda: Learned(batch=2), lambda: Learned(batch=1, window=3), lambda: EasyPlusPlus()],
)
def test_no_look_ahead_property(
    factory: Any, jobs: list[tuple[int, int, int]], cut: int, factor: int
) -> None:
    """Changing the run time of every job that ends after ``cut`` changes no
    prediction of a job submitted by ``cut``."""
    jobs = sorted(jobs)
    submit = [float(s) for s, _, _ in jobs]
    run = [float(r) for _, r, _ in jobs]
    user = [u for _, _, u in jobs]
    requested = [r * 2 + 60 for r in run]  # the requests stay: only run times change
    base = _predictions(factory, submit, run, user, requested)
    later = [r * factor + 1 if s + r > cut else r for s, r in zip(submit, run, strict=True)]
    other = _predictions(factory, submit, later, user, requested)
    for j, s in enumerate(submit):
        if s <= cut:
            assert base[j] == other[j] or (base[j] != base[j] and other[j] != other[j])
