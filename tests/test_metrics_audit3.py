"""Fixes of the third metrics audit: the prediction metrics leave the estimates the
simulator filled in (no estimator value) unknown, and loss of capacity divides by
the makespan period of every job with known times."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from schedlab import compute_metrics, read, simulate
from schedlab.cli import cli
from schedlab.metrics.system import loss_of_capacity_terms

PREDICTION_METRICS = ("prediction-error", "under-prediction", "prediction-accuracy")

# Jobs 2 and 4 have no requested time: the requested estimator gives NaN and the
# simulator falls back (to the run time, or to the header's MaxRuntime).
NO_REQUEST = """\
; MaxProcs: 4
1 0 -1 100 2 -1 -1 2 200 -1 1 1 1 -1 1 1 -1 -1
2 5 -1 50 4 -1 -1 4 -1 -1 1 2 1 -1 1 1 -1 -1
3 10 -1 30 2 -1 -1 2 20 -1 1 1 1 -1 1 1 -1 -1
4 20 -1 40 2 -1 -1 2 -1 -1 1 3 1 -1 1 1 -1 -1
5 30 -1 10 1 -1 -1 1 100 -1 1 2 1 -1 1 1 -1 -1
"""


def _write(tmp_path: Path, text: str, name: str = "w.swf") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# ------------------------------------- 1. fallback estimates are not predictions


@pytest.mark.parametrize("kernel", ["python", "compiled"])
@pytest.mark.parametrize("header", ["", "; MaxRuntime: 500\n"])
def test_fallback_estimates_are_unknown_predictions(tmp_path, kernel, header):
    workload = read(str(_write(tmp_path, header + NO_REQUEST)))
    result = simulate(workload, policy="fcfs", backfill="easy", backfill_options={"kernel": kernel})
    assert result.stats["estimate_fallbacks"] == 2
    assert result.estimate_fell_back.tolist() == [False, True, False, True, False]
    # the scheduler's estimates stay what it used
    fallback = 500.0 if header else np.nan
    assert result.estimate[1] == (fallback if header else 50.0)
    report = compute_metrics(result, ["accuracy", *PREDICTION_METRICS], stats="mean")
    for name in PREDICTION_METRICS:
        assert report.value(name, "unknown") == 2, name
        assert report.value(name, "count") == 3, name
    # With the requested estimator the prediction is the request: the same ratio.
    assert report.value("prediction-accuracy", "mean") == pytest.approx(
        report.value("accuracy", "mean")
    )
    # jobs 1, 3, 5: |200 - 100|, |20 - 20| (killed at its request), |100 - 10|
    assert report.value("prediction-error", "mean") == pytest.approx((100 + 0 + 90) / 3)
    notes = [n for n in report.notes if n.startswith("prediction-error:")]
    assert len(notes) == 1
    assert "2 of 5 jobs have no value" in notes[0]
    assert "estimate fell back" in notes[0] and "prediction is unknown" in notes[0]


def test_the_note_tells_fallbacks_from_other_unknown_predictions(tmp_path):
    result = simulate(read(str(_write(tmp_path, NO_REQUEST))), policy="fcfs", backfill="easy")
    result.estimate[0] = np.nan  # a job with no prediction for another reason
    report = compute_metrics(result, ["prediction-accuracy"])
    assert report.value("prediction-accuracy", "unknown") == 3
    (note,) = [n for n in report.notes if n.startswith("prediction-accuracy:")]
    assert "3 of 5 jobs have no value (2 whose estimate fell back: " in note
    assert "; 1 with unknown inputs)" in note


def test_simulate_json_metrics_notes_say_the_predictions_are_unknown(tmp_path):
    path = _write(tmp_path, NO_REQUEST)
    out = CliRunner().invoke(cli, ["simulate", str(path), "--json"], catch_exceptions=False)
    assert out.exit_code == 0
    data = json.loads(out.stdout)
    notes = data["metrics"]["notes"]
    for name in PREDICTION_METRICS:
        assert any(n.startswith(f"{name}: 2 of 5 jobs") and "fell back" in n for n in notes), name


def test_real_predictions_are_kept(tmp_path):
    """Estimators with a value for every job: nothing is made unknown."""
    workload = read(str(_write(tmp_path, NO_REQUEST)))
    result = simulate(workload, policy="fcfs", backfill="easy", estimator="actual")
    assert not result.estimate_fell_back.any()
    report = compute_metrics(result, ["prediction-error"], stats="mean")
    assert report.value("prediction-error", "unknown") == 0
    assert report.value("prediction-error", "mean") == 0


def _random_swf(seed: int, n: int = 80) -> str:
    rng = np.random.default_rng(seed)
    submit = np.sort(rng.integers(0, 1500, n))
    run = rng.integers(0, 300, n)
    run[rng.random(n) < 0.1] = 0
    size = rng.integers(1, 5, n)
    requested = np.where(rng.random(n) < 0.5, -1, run + rng.integers(-50, 300, n))
    requested = np.where(requested < -1, 0, requested)
    user = rng.choice([-1, 1, 2, 3, 4, 5, 6, 7], n)
    lines = ["; MaxProcs: 8"]
    for i in range(n):
        lines.append(
            f"{i + 1} {submit[i]} -1 {run[i]} {size[i]} -1 -1 {size[i]} {requested[i]} -1 1 "
            f"{user[i]} 1 -1 1 1 -1 -1"
        )
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize(
    ("estimator", "options"),
    [("user-average", None), ("easy++", None), ("learned", {"batch": 4})],
)
def test_whole_runs_mark_the_same_fallbacks_as_the_loop(tmp_path, seed, estimator, options):
    """A whole run with predictions counts its fallbacks only: the engine marks
    which jobs they were, as the pass-by-pass loop does."""
    workload = read(str(_write(tmp_path, _random_swf(seed))))
    got = {}
    for kernel in ("python", "compiled"):
        result = simulate(
            workload,
            policy="fcfs",
            backfill="easy",
            estimator=estimator,
            estimator_options=options,
            backfill_options={"kernel": kernel},
        )
        assert result.stats["whole_run"] == (kernel == "compiled")
        assert int(result.estimate_fell_back.sum()) == result.stats["estimate_fallbacks"]
        got[kernel] = result.estimate_fell_back.tolist()
    assert got["python"] == got["compiled"]
    assert any(got["python"])


@pytest.mark.realdata
def test_lanl_prediction_accuracy_equals_accuracy_with_requested_times(swf_dir):
    workload = read(str(swf_dir / "LANL-CM5-1994-4.1-cln.swf.gz"))
    result = simulate(workload, policy="fcfs", backfill="easy")
    report = compute_metrics(
        result, ["accuracy", "prediction-accuracy", "prediction-error"], stats="mean"
    )
    fell_back = int(result.estimate_fell_back.sum())
    assert fell_back == result.stats["estimate_fallbacks"] == 11_287
    assert report.value("prediction-accuracy", "mean") == pytest.approx(
        report.value("accuracy", "mean"), rel=1e-12
    )
    assert report.value("prediction-error", "unknown") == fell_back
    frame = result.to_pandas()
    real = ~result.estimate_fell_back
    mae = np.abs(frame.estimate.values - frame.run_time.values.astype(float))[real].mean()
    assert report.value("prediction-error", "mean") == pytest.approx(mae)


# ------------------------------------------ 2. loss of capacity over the makespan

# Job 2 has no size but known times (0 to 100 s): it is in the period.
LOC_SPAN = """\
; MaxProcs: 10
1 0 5 5 2 -1 -1 2 100 -1 1 1 1 -1 1 1 -1 -1
2 0 0 100 -1 -1 -1 -1 200 -1 1 2 1 -1 1 1 -1 -1
"""


def test_loss_of_capacity_divides_by_the_makespan_period(tmp_path):
    report = compute_metrics(
        read(str(_write(tmp_path, LOC_SPAN))),
        ["makespan", "utilization", "loss-of-capacity"],
    )
    assert report.value("makespan") == 100
    assert report.value("utilization") == pytest.approx(10 / (10 * 100))
    # 10 idle processors x 5 s while job 1 waits, over 10 x 100 processor-seconds
    assert report.value("loss-of-capacity") == pytest.approx(50 / (10 * 100))
    # the bootstrap's window terms tile the same period: their ratio is the table's
    columns = read(str(_write(tmp_path, LOC_SPAN))).to_arrays()
    lost, capacity = loss_of_capacity_terms(columns, np.linspace(0.0, 100.0, 11), procs=10)
    assert lost.sum() / capacity.sum() == pytest.approx(report.value("loss-of-capacity"))


def test_loss_of_capacity_bootstrap_terms_agree_with_the_table(tmp_path):
    pytest.importorskip("scipy")
    from schedlab.significance import block_significance

    # Sized jobs waiting in the first hours; a job of unknown size runs on to 14 h.
    lines = ["; MaxProcs: 10"]
    for i in range(12):
        lines.append(f"{i + 1} {i * 3600} 600 1200 4 -1 -1 4 2000 -1 1 1 1 -1 1 1 -1 -1")
    lines.append("13 0 0 50400 -1 -1 -1 -1 60000 -1 1 2 1 -1 1 1 -1 -1")
    schedule = read(str(_write(tmp_path, "\n".join(lines) + "\n")))
    table = compute_metrics(schedule, ["loss-of-capacity"]).value("loss-of-capacity")
    # each sized job waits 600 s on an idle machine (the job of unknown size holds
    # no known processors): 10 x 600 processor-seconds lost each
    assert table == pytest.approx(12 * 10 * 600 / (10 * 50400))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sig = block_significance(
            {"a": schedule, "b": schedule},
            metrics=["loss-of-capacity"],
            window="1h",
            rank_window="7h",
            resamples=200,
        )
    interval = sig.interval("a", "loss-of-capacity", "value")
    assert interval.reason == "" and interval.low is not None
    assert interval.estimate == pytest.approx(table)
    assert interval.units >= 10
