"""Workload models, audit "predict2" (findings 2-6): the documented figures of
``psp-fing`` and of Tsafrir estimates on Lublin workloads match measurement, the
estimate histogram below 200 jobs has the documented number of values, a
``psp-fing`` load whose workload SWF cannot hold is refused naming ``load``, and a
huge Lublin ``pa`` prints no numpy warning."""

from __future__ import annotations

import hashlib
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab.cli import main
from schedlab.errors import UsageError
from schedlab.formats import lublin, psp_fing
from schedlab.formats import tsafrir_estimates as ts
from schedlab.validation import MAX_SECONDS

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Exit status and stderr of ``schedlab ARGS``."""
    with pytest.raises(SystemExit) as info:
        main([str(a) for a in args])
        raise SystemExit(0)
    return int(info.value.code or 0), capsys.readouterr().err


# ------------------------------------------------------------- 2. psp-fing long jobs


@pytest.fixture(scope="module")
def long_run_times() -> np.ndarray:
    """Run times of the jobs over a minute of 200,000 psp-fing jobs."""
    run = np.asarray(psp_fing.generate(jobs=200_000, seed=1).to_arrays()["run_time"], float)
    return run[run >= 60]


def test_experiments_md_share_beyond_five_days_is_the_measured_one(long_run_times):
    text = (DOCS / "experiments.md").read_text(encoding="utf-8")
    found = re.search(r"about ([\d.]+) % of them beyond 5 days", text)
    assert found, "experiments.md no longer states the share beyond 5 days"
    documented = float(found.group(1)) / 100
    measured = float(np.mean(long_run_times > 5 * 86_400))
    assert measured == pytest.approx(documented, abs=0.003)  # 3.6 %, not 7 %


def test_long_median_is_documented_as_the_median_before_the_cut_off(long_run_times):
    # The jobs over a minute have a median below long_median (the 10-day cut-off
    # removes the top of the log-normal): about 19,970 s for 21,600 s.
    assert float(np.median(long_run_times)) == pytest.approx(19_970, rel=0.01)
    helps = {o.name: o.help for o in psp_fing.OPTIONS}
    assert "Median run time of jobs over a minute" not in helps["long_median"]
    assert "cut-off" in helps["long_median"]
    text = (DOCS / "experiments.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `long_median`"))
    assert "19,9" in row and "before" in row


# ------------------------------------------------- 3. Lublin with Tsafrir estimates


def test_models_md_lublin_median_and_accuracy_are_of_the_default_setting():
    text = " ".join((DOCS / "models.md").read_text(encoding="utf-8").split())
    found = re.search(
        r"On default Lublin workloads, whose median run time is about (\d+) s while `M` is "
        r"(\d+) hours, the mean accuracy is about ([\d.]+)",
        text,
    )
    assert found, "models.md no longer states the Lublin median and accuracy"
    median, hours, accuracy = int(found[1]), int(found[2]), float(found[3])
    cols = schedlab.read("lublin:jobs=20000,estimates=tsafrir,seed=1").to_arrays()
    run = np.asarray(cols["run_time"], float)
    requested = np.asarray(cols["requested_time"], float)
    assert float(np.median(run)) == median
    assert requested.max() == hours * 3600
    assert float(np.mean(run / requested)) == pytest.approx(accuracy, abs=0.005)


# ------------------------------------- 4. tsafrir-estimates: values below 200 jobs


@pytest.mark.parametrize("jobs", [1, 2, 5, 20, 50, 100, 150, 199])
@pytest.mark.parametrize("top", [3600, 4 * 3600, 48 * 3600])
def test_histogram_below_200_jobs_has_at_most_the_models_values(jobs, top):
    hist = ts.histogram(jobs, top, seed=3)
    assert sum(hist.values()) == jobs
    assert len(hist) <= max(ts.default_bins(jobs), 1)
    assert top in hist  # M, the most popular value, is always kept


def test_assign_on_20_jobs_uses_the_models_10_values():
    run = np.asarray(schedlab.read("lublin:jobs=20,seed=3").to_arrays()["run_time"], float)
    for seed in range(1, 6):
        estimates, note = ts.assign(run, seed=seed)
        assert len(np.unique(estimates)) <= 10
        assert (estimates >= run).all()
        assert " 10 values up to " in note


def test_head_kept_below_200_jobs_is_the_most_popular_values():
    # 50 jobs: 12 values, the 12 most popular of the 20-value head, so each kept
    # value has at least as many jobs as any dropped value would have had.
    full = ts.histogram(50, 48 * 3600, seed=3, bins=20)
    cut = ts.histogram(50, 48 * 3600, seed=3)
    assert set(cut) <= set(full) and len(cut) <= 12
    dropped = set(full) - set(cut)
    assert dropped
    assert min(full[v] for v in cut) >= max(full[v] for v in dropped)
    assert len(ts.histogram(10_000, 48 * 3600, seed=3)) == 90


@pytest.mark.parametrize(("jobs", "longest"), [(2, 5000.0), (500, 172_790.0)])
def test_max_share_0_jobs_longer_than_every_value_get_m(jobs, longest):
    # max_share=0 gives M no job; a job longer than every other value gets M as the
    # excess of the long values (it was an internal error, "a job got no estimate").
    run = np.array([longest] + [10.0] * (jobs - 1))
    estimates, note = ts.assign(run, max_estimate=172800, max_share=0)
    assert estimates[0] == 172800 and (estimates >= run).all()
    assert "1 given the maximum for want of long values" in note


@pytest.mark.parametrize("jobs", [20, 500])
def test_options_giving_every_value_a_share_of_0_are_a_usage_error(jobs):
    options = {"max_share": 0, "head_a": 0, "head_c": 0, "head_share": 1}
    with pytest.raises(UsageError, match="share of 0: raise max_share") as info:
        ts.histogram(jobs, 172800, **options)
    assert "\n" not in str(info.value)


def _digest(hist: dict[int, int]) -> str:
    return hashlib.sha256(repr(sorted(hist.items())).encode()).hexdigest()[:16]


@pytest.mark.parametrize(
    ("jobs", "top", "digest"),
    [
        (199, 3600, "76c37bc2390cdea4"),
        (200, 3600, "1419de5da5b598b2"),
        (200, 172800, "9182a9fc573696d6"),
        (201, 14400, "fb32237eaaf55dfb"),
        (1000, 172800, "39e36e95bd2c2637"),
        (5000, 3600, "a6dcfc75414f8020"),
        (5000, 14400, "52f68da922275c44"),
        (100, 3600, "f54f1aedbf37484b"),  # 14 bins, 12 head values: not cut
        (150, 3600, "43ce908f10078f55"),
    ],
)
def test_histograms_that_were_already_right_are_unchanged(jobs, top, digest):
    assert _digest(ts.histogram(jobs, top, seed=3)) == digest


def test_estimates_of_200_jobs_and_more_are_unchanged():
    for jobs, digest in ((200, "81202a76f6193311"), (1000, "3847dd4dc7fa3afc")):
        spec = f"lublin:jobs={jobs},seed=3"
        run = np.asarray(schedlab.read(spec).to_arrays()["run_time"], float)
        estimates, _ = ts.assign(run, seed=1)
        assert hashlib.sha256(estimates.tobytes()).hexdigest()[:16] == digest
    cols = schedlab.read("lublin:jobs=500,seed=2,estimates=tsafrir").to_arrays()
    requested = np.asarray(cols["requested_time"], float)
    assert hashlib.sha256(requested.tobytes()).hexdigest()[:16] == "1c1a308dbe6b7bcb"


# ----------------------------------------- 5. psp-fing: loads SWF cannot hold


def test_psp_fing_refuses_a_load_beyond_the_swf_times(capsys, tmp_path):
    with pytest.raises(UsageError, match=r"load=1e-09 spreads the jobs over") as info:
        psp_fing.generate(load=1e-9)
    assert "\n" not in str(info.value)
    assert "1e12" in str(info.value)
    out = tmp_path / "g9.swf"
    code, err = _cli(capsys, "convert", "psp-fing:load=1e-9", out)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "load=1e-09" in lines[0] and "give a larger load" in lines[0]
    assert not out.exists()


def test_psp_fing_span_up_to_the_limit_is_written_and_read_back(tmp_path):
    work_span = psp_fing.generate(jobs=50, seed=2, load=1.0).to_arrays()
    cores = np.asarray(work_span["allocated_processors"], float)
    work = float(np.sum(cores * np.asarray(work_span["run_time"], float)))
    load = work / (32 * 0.9 * MAX_SECONDS)  # a span of 0.9e12 s
    workload = psp_fing.generate(jobs=50, seed=2, load=load)
    assert np.nanmax(np.asarray(workload.to_arrays()["submit_time"], float)) > 5e11
    path = tmp_path / "far.swf"
    schedlab.write(workload, path)
    again = schedlab.read(path).to_arrays()
    assert np.array_equal(
        np.asarray(again["submit_time"], float),
        np.asarray(workload.to_arrays()["submit_time"], float),
    )


def test_psp_fing_queue_limit_beyond_the_swf_times_is_refused():
    with pytest.raises(UsageError, match=r"queue_limit=2e\+12 must be at most 1e12 s"):
        psp_fing.generate(queue_limit=2e12)
    cols = psp_fing.generate(
        jobs=30, queue_limit=1e12, max_run_time=1e9, min_accuracy=1e-9
    ).to_arrays()
    assert np.nanmax(np.asarray(cols["requested_time"], float)) <= MAX_SECONDS


# ----------------------------------------------- 6. lublin: a huge pa, no warning


@pytest.mark.parametrize(
    ("huge", "same"),
    [
        ({"pa": 1e308, "types": False}, {"pa": 0.0, "pb": 1.0, "types": False}),
        ({"pa": -1e308, "types": False}, {"pa": 0.0, "pb": 0.0, "types": False}),
        ({"pa_batch": 1e308}, {"pa_batch": 0.0, "pb_batch": 1.0}),
    ],
)
def test_lublin_huge_pa_clips_without_a_warning(huge, same):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = lublin.generate(jobs=300, seed=4, **huge).to_arrays()["run_time"]
    assert [str(w.message) for w in caught] == []
    expected = lublin.generate(jobs=300, seed=4, **same).to_arrays()["run_time"]
    assert np.array_equal(np.asarray(run, float), np.asarray(expected, float))
