"""Metrics on the real logs of ../shared/data/swf: recorded waits and simulated ones."""

from __future__ import annotations

import numpy as np
import pytest
import schedlab
from schedlab.measure import compute_metrics

pytestmark = pytest.mark.realdata


@pytest.fixture(scope="module")
def kth(swf_dir):
    return schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")


def test_kth_recorded_schedule(kth):
    report = compute_metrics(kth)
    assert report.jobs == 28_476
    assert report.procs == 100  # the header's MaxProcs
    columns = kth.to_arrays()
    wait = columns["wait_time"]
    # Independent check of the aggregates against plain numpy.
    assert report.value("wait", "mean") == pytest.approx(np.nanmean(wait), rel=1e-9)
    assert report.value("wait", "median") == pytest.approx(np.nanmedian(wait), rel=1e-9)
    assert report.value("wait", "p99") == pytest.approx(np.nanpercentile(wait, 99), rel=1e-9)
    assert report.value("wait", "max") == np.nanmax(wait)
    # The KTH SP2 ran at about 70% utilization (the Parallel Workloads Archive says
    # 70.4% over the log's duration; the period here starts at the first submit).
    assert 0.68 < report.value("utilization") < 0.72
    assert 0 < report.value("loss-of-capacity") < 1 - report.value("utilization")
    assert 0 < report.value("fairness") <= 1
    assert report.value("bounded-slowdown", "mean") >= 1


def test_kth_accuracy_classes_cover_every_user(kth):
    report = compute_metrics(kth, names=["wait", "accuracy"], by="accuracy-class")
    groups = [r["group"] for r in report.rows]
    assert groups[:5] == ["a1", "a2", "a3", "a4", "a5"]
    assert groups[-1] == "all"
    users = len(np.unique(kth.to_arrays()["user_id"]))
    assert sum(r["users"] for r in report.rows[:-1]) == users
    assert sum(r["jobs"] for r in report.rows[:-1]) == report.jobs
    # Job-weighted and user-weighted means differ on a real log.
    by_users = compute_metrics(kth, names=["wait"], by="accuracy-class", weight="users")
    assert by_users.column("wait") != report.column("wait")


def test_unknown_waits_are_counted_not_dropped(swf_dir):
    """lublin_256 is a model output: no waits, no requested times, so wait-based and
    system metrics are unavailable and say so."""
    workload = schedlab.read(swf_dir / "lublin_256.swf")
    report = compute_metrics(workload)
    assert report.row()["wait"]["count"] == 0
    assert report.row()["wait"]["unknown"] == 10_000
    assert report.value("utilization") is None
    assert any(n.startswith("wait: 10,000 of 10,000 jobs") for n in report.notes)
    assert any(n.startswith("utilization: unavailable") for n in report.notes)


def test_simulated_schedule_of_a_model_workload(swf_dir):
    workload = schedlab.read(swf_dir / "lublin_256.swf")
    result = schedlab.simulate(workload, policy="fcfs", backfill="easy", progress=False)
    report = compute_metrics(result)
    assert report.procs == result.procs == 256
    assert report.row()["wait"]["unknown"] == 0
    assert report.row()["wait"]["count"] == len(result.workload)
    assert 0 < report.value("utilization") <= 1
    assert report.value("utilization") + report.value("loss-of-capacity") <= 1 + 1e-9


def test_simulated_kth_against_recorded(kth):
    result = schedlab.simulate(kth, policy="fcfs", backfill="easy", progress=False)
    simulated = compute_metrics(result, names=["wait", "work", "utilization"])
    recorded = compute_metrics(kth, names=["wait", "work", "utilization"])
    excluded = sum(len(v) for v in result.excluded.values())
    assert excluded > 0  # KTH has a job the simulator cannot run
    assert simulated.jobs == recorded.jobs - excluded
    assert simulated.notes[0] == (
        "1 job was excluded by the simulator and is not in these metrics"
        if excluded == 1
        else f"{excluded} jobs were excluded by the simulator and are not in these metrics"
    )
    assert simulated.row()["wait"]["unknown"] == 0
    # The same jobs do (nearly) the same work: only killed overruns are cut short.
    assert simulated.value("work") <= recorded.value("work") * 1.0001
    assert simulated.value("work") > recorded.value("work") * 0.95
