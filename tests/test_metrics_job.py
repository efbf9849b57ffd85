"""Per-job metrics and system metrics on a hand-made workload with exact answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from schedlab.errors import UsageError
from schedlab.measure import MetricUnavailable, compute_metrics
from schedlab.metrics import aggregate, fairness, job, system
from schedlab.model import Header, JobColumns, Workload

NAN = float("nan")


def golden_workload(header: Header | None = None) -> Workload:
    """Five jobs on a 10-processor machine (job 4's wait is unknown, job 5 ran 0 s).

    job submit wait run procs requested user queue
    1   0      0    100 4     200       1    1
    2   0      10   5   2     10        1    1
    3   10     90   50  8     50        2    2
    4   20     ?    30  1     300       3    2
    5   30     20   0   1     60        2    ?
    """
    return Workload.from_arrays(
        {
            "job_number": [1, 2, 3, 4, 5],
            "submit_time": [0, 0, 10, 20, 30],
            "wait_time": [0, 10, 90, NAN, 20],
            "run_time": [100, 5, 50, 30, 0],
            "allocated_processors": [4, 2, 8, 1, 1],
            "requested_time": [200, 10, 50, 300, 60],
            "user_id": [1, 1, 2, 3, 2],
            "queue_number": [1, 1, 2, 2, NAN],
        },
        header=header,
    )


def cols() -> JobColumns:
    return golden_workload().to_arrays()


def assert_array(actual: np.ndarray, expected: list[float]) -> None:
    np.testing.assert_allclose(actual, np.array(expected, dtype=float), rtol=1e-12, atol=0)


def test_wait_response():
    assert_array(job.wait(cols()), [0, 10, 90, NAN, 20])
    assert_array(job.response(cols()), [100, 15, 140, NAN, 20])


def test_slowdown_excludes_zero_run_time():
    assert_array(job.slowdown(cols()), [1, 3, 2.8, NAN, NAN])


def test_bounded_slowdown_default_threshold_10s():
    assert_array(job.bounded_slowdown(cols()), [1, 1.5, 2.8, NAN, 2.0])


def test_bounded_slowdown_threshold_option():
    assert_array(job.bounded_slowdown(cols(), threshold=60), [1, 1, 140 / 60, NAN, 1])


def test_bounded_slowdown_rejects_bad_threshold():
    with pytest.raises(UsageError, match="threshold"):
        job.bounded_slowdown(cols(), threshold=0)


def test_accuracy_clipped_and_unknown():
    columns = Workload.from_arrays(
        {
            "run_time": [50, 300, 10, NAN, 10, 10, 0],
            "requested_time": [100, 200, NAN, 100, 0, -5, 100],
        }
    ).to_arrays()
    assert_array(job.accuracy(columns), [0.5, 1.0, NAN, NAN, NAN, NAN, 0.0])
    assert_array(job.accuracy(cols()), [0.5, 0.5, 1.0, 0.1, 0.0])


def test_makespan_utilization_throughput():
    c = cols()
    # Jobs 1, 2, 3, 5 have known times: first submit 0, last end 150 (job 3).
    assert system.makespan(c) == 150
    # (4*100 + 2*5 + 8*50 + 1*0) / (10 * 150)
    assert system.utilization(c, procs=10) == pytest.approx(810 / 1500, rel=1e-12)
    assert system.throughput(c) == pytest.approx(4 / 150 * 3600, rel=1e-12)


def test_loss_of_capacity_golden():
    # Busy: 4 on [0,10), 6 on [10,15), 4 on [15,100), 8 on [100,150).
    # Waiting: job 2 on [0,10), job 3 on [10,100), job 5 on [30,50).
    # Idle while waiting: 6*10 + 4*5 + 6*85 = 590 over capacity 10*150.
    assert system.loss_of_capacity(cols(), procs=10) == pytest.approx(590 / 1500, rel=1e-12)


def test_loss_of_capacity_zero_when_nobody_waits():
    c = Workload.from_arrays(
        {
            "submit_time": [0, 5],
            "wait_time": [0, 0],
            "run_time": [10, 10],
            "allocated_processors": [1, 1],
        }
    ).to_arrays()
    assert system.loss_of_capacity(c, procs=4) == 0.0
    assert system.utilization(c, procs=4) == pytest.approx(20 / 60)


def test_system_metrics_need_machine_size():
    with pytest.raises(MetricUnavailable, match="machine size"):
        system.utilization(cols())
    with pytest.raises(MetricUnavailable, match="machine size"):
        system.loss_of_capacity(cols(), procs=None)


def test_system_metrics_without_known_times():
    c = Workload.from_arrays({"submit_time": [0, 1], "run_time": [5, 5]}).to_arrays()
    with pytest.raises(MetricUnavailable, match="no job"):
        system.makespan(c)


def test_fairness_golden():
    # Mean waits: user 1 (0+10)/2 = 5, user 2 (90+20)/2 = 55; user 3 unknown.
    assert fairness.fairness(cols()) == pytest.approx(60**2 / (2 * (25 + 3025)), rel=1e-12)


def test_jain_index_edge_cases():
    assert fairness.jain_index(np.array([3.0, 3.0, 3.0])) == pytest.approx(1.0)
    assert fairness.jain_index(np.array([0.0, 0.0])) == 1.0
    assert fairness.jain_index(np.array([7.0, 0.0, 0.0, 0.0])) == pytest.approx(0.25)
    assert math.isnan(fairness.jain_index(np.array([])))


def test_work_in_processor_hours():
    # Job 4's wait is unknown (its size and run time are known, 30 proc-s): it is not
    # in the schedule every system metric uses, and the report's note counts it.
    assert aggregate.work(cols()) == pytest.approx(810 / 3600)


def test_compute_metrics_golden_report():
    report = compute_metrics(golden_workload(), procs=10)
    assert report.by is None and report.jobs == 5
    [row] = report.rows
    assert row["group"] == "all" and row["jobs"] == 5 and row["users"] == 3
    # Waits known: 0, 10, 20, 90.
    assert row["wait"] == {
        "mean": 30.0,
        "median": 15.0,
        "p90": pytest.approx(69.0),
        "p99": pytest.approx(87.9),
        "max": 90.0,
        "count": 4,
        "unknown": 1,
    }
    assert row["slowdown"]["count"] == 3 and row["slowdown"]["unknown"] == 2
    assert row["bounded-slowdown"]["mean"] == pytest.approx((1 + 1.5 + 2.8 + 2.0) / 4)
    assert row["accuracy"]["mean"] == pytest.approx((0.5 + 0.5 + 1 + 0.1 + 0) / 5)
    assert row["makespan"] == 150
    assert row["utilization"] == pytest.approx(0.54)
    assert row["loss-of-capacity"] == pytest.approx(590 / 1500)
    assert row["throughput"] == pytest.approx(96.0)
    assert row["fairness"] == pytest.approx(3600 / 6100)
    # Nothing is dropped silently: every exclusion is in the notes.
    notes = "\n".join(report.notes)
    assert "wait: 1 of 5 jobs has no value" in notes
    assert "slowdown: 2 of 5 jobs" in notes
    assert "system metrics use the 4 jobs" in notes


def test_threshold_option_reaches_bounded_slowdown():
    report = compute_metrics(golden_workload(), names=["bsld"], threshold="60")
    assert report.value("bounded-slowdown", "max") == pytest.approx(140 / 60)
    assert report.options["threshold"] == 60.0


def test_machine_size_from_header_and_unavailable_without():
    header = Header()
    header.set("MaxProcs", 10)
    with_header = compute_metrics(golden_workload(header), names=["utilization"])
    assert with_header.procs == 10
    assert with_header.value("utilization") == pytest.approx(0.54)
    header_nodes = Header()
    header_nodes.set("MaxNodes", 20)
    assert compute_metrics(golden_workload(header_nodes), names=["utilization"]).value(
        "utilization"
    ) == pytest.approx(0.27)
    without = compute_metrics(golden_workload(), names=["utilization", "loc"])
    assert without.value("utilization") is None
    assert without.value("loss-of-capacity") is None
    assert any("utilization: unavailable" in n and "machine size" in n for n in without.notes)


def test_work_uses_the_jobs_every_system_metric_uses() -> None:
    # Job 2's wait is unknown: the note says system metrics leave it out, and work
    # (which counted it) now does too, as utilization does.
    from schedlab.testing import workload_from_rows

    w = workload_from_rows(
        [
            {"submit_time": 0, "wait_time": 0, "run_time": 100, "allocated_processors": 2},
            {"submit_time": 30, "run_time": 50, "allocated_processors": 1},
        ],
        procs=4,
    )
    report = compute_metrics(w, names=["work", "utilization"])
    assert report.value("work") == pytest.approx(200 / 3600)
    assert report.value("utilization") == pytest.approx(200 / (4 * 100))
    assert "system metrics use the 1 job with known submit, wait and run time (1 left out)" in (
        report.notes
    )
