"""Grouping (user, queue, size, accuracy class), weighting, report shape and errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from schedlab.errors import UnknownComponentError, UsageError
from schedlab.measure import (
    compute_metrics,
    grouped_statistics,
    size_class_index,
    size_class_label,
)
from schedlab.model import Header, Workload

NAN = float("nan")


def golden_workload(header: Header | None = None) -> Workload:
    """The five-job workload of test_metrics_job.py."""
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


def accuracy_workload() -> Workload:
    """Users with known accuracy classes (window 10):

    user 1: three jobs of accuracy 0.1 -> a1; waits 100, 200, 300
    user 2: one job of accuracy 0.9 -> a5; wait 10
    user 3: accuracies 0.85 and 0.95 -> 0.9 -> a5; waits 20, 40
    user 4: accuracy 0.3 (ends at 500) and 0.5 (ends at 200) -> mean 0.4 -> a3;
            with window=1 the last completed job is the first row -> a2
    user 5: no requested time -> accuracy unknown -> group "unknown"
    """
    return Workload.from_arrays(
        {
            "submit_time": [0, 0, 0, 0, 0, 0, 100, 0, 0],
            "wait_time": [100, 200, 300, 10, 20, 40, 100, 100, 5],
            "run_time": [10, 10, 10, 90, 85, 95, 300, 100, 5],
            "requested_time": [100, 100, 100, 100, 100, 100, 1000, 200, NAN],
            "user_id": [1, 1, 1, 2, 3, 3, 4, 4, 5],
            "allocated_processors": [1] * 9,
        }
    )


def test_by_user_golden():
    report = compute_metrics(golden_workload(), names=["wait"], by="user")
    # Group keys keep their type: user ids are ints (a text key still finds a row).
    assert [r["group"] for r in report.rows] == [1, 2, 3, "all"]
    assert [r["jobs"] for r in report.rows] == [2, 2, 1, 5]
    assert report.column("wait") == {1: 5.0, 2: 55.0, 3: None, "all": 30.0}
    assert report.row(3)["wait"]["unknown"] == 1
    assert report.row("3")["wait"]["count"] == 0


def test_by_queue_unknown_group_last():
    report = compute_metrics(golden_workload(), names=["wait", "fairness"], by="queue")
    assert [r["group"] for r in report.rows] == [1, 2, "unknown", "all"]
    assert report.column("wait", "max") == {1: 10.0, 2: 90.0, "unknown": 20.0, "all": 90.0}
    # Fairness is a whole-schedule metric: in the "all" row only, and a note says so.
    assert "fairness" not in report.row(1) and report.value("fairness") is not None
    assert any("fairness: whole-schedule" in note for note in report.notes)


def test_by_size_power_of_two_classes():
    report = compute_metrics(golden_workload(), names=["wait"], by="size")
    assert [r["group"] for r in report.rows] == ["1", "2-3", "4-7", "8-15", "all"]
    assert [r["jobs"] for r in report.rows] == [2, 1, 1, 1, 5]


def test_size_classes():
    sizes = np.array([1, 2, 3, 4, 7, 8, 1024, 1025, 0, NAN, 0.5])
    assert size_class_index(sizes).tolist() == [0, 1, 1, 2, 2, 3, 10, 10, -1, -1, -1]
    assert [size_class_label(k) for k in range(4)] == ["1", "2-3", "4-7", "8-15"]


def test_size_falls_back_to_requested_processors():
    w = Workload.from_arrays(
        {"allocated_processors": [NAN, 0, 5], "requested_processors": [16, 3, 64]}
    )
    report = compute_metrics(w, names=["accuracy"], by="size", total=False)
    assert [(r["group"], r["jobs"]) for r in report.rows] == [("2-3", 1), ("4-7", 1), ("16-31", 1)]


def test_by_accuracy_class_golden():
    report = compute_metrics(accuracy_workload(), names=["wait"], by="accuracy-class")
    groups = [r["group"] for r in report.rows]
    # Every class is listed, empty ones too (Table 3 shows empty classes).
    assert groups == ["a1", "a2", "a3", "a4", "a5", "unknown", "all"]
    assert [r["jobs"] for r in report.rows] == [3, 0, 2, 0, 3, 1, 9]
    assert [r["users"] for r in report.rows] == [1, 0, 1, 0, 2, 1, 5]
    waits = report.column("wait")
    assert waits["a1"] == 200.0
    assert waits["a2"] is None and waits["a4"] is None
    assert waits["a3"] == 100.0
    assert waits["a5"] == pytest.approx(70 / 3)  # job-weighted: (10 + 20 + 40) / 3
    assert waits["unknown"] == 5.0


def test_accuracy_class_mean_of_user_means():
    report = compute_metrics(
        accuracy_workload(), names=["wait"], by="accuracy-class", weight="users"
    )
    waits = report.column("wait")
    assert waits["a5"] == pytest.approx(20.0)  # mean(10, (20 + 40) / 2)
    assert waits["a1"] == 200.0
    assert report.row("a5")["wait"]["count"] == 2  # two users
    assert any("weight=users" in n for n in report.notes)


def test_accuracy_class_window_by_completion_time():
    report = compute_metrics(accuracy_workload(), names=["accuracy"], by="accuracy-class", window=1)
    # User 4's last job by completion (row 7 ends at 500, row 8 at 200) has accuracy 0.3.
    assert report.row("a2")["jobs"] == 2
    assert report.row("a3")["jobs"] == 0
    assert report.row("a5")["jobs"] == 3


def test_accuracy_class_custom_edges():
    report = compute_metrics(accuracy_workload(), names=["wait"], by="accuracy-class", edges="0.5")
    assert [r["group"] for r in report.rows] == ["a1", "a2", "unknown", "all"]
    assert [r["jobs"] for r in report.rows] == [5, 3, 1, 9]


def test_weight_users_equals_jobs_when_grouping_by_user():
    jobs = compute_metrics(golden_workload(), names=["wait"], by="user", total=False)
    users = compute_metrics(
        golden_workload(), names=["wait"], by="user", total=False, weight="users"
    )
    assert jobs.column("wait") == users.column("wait")


def test_user_names_from_header():
    header = Header()
    header.set_names("User", {1: "alice", 2: "bob"})
    report = compute_metrics(golden_workload(header), names=["wait"], by="user")
    assert report.row(1)["name"] == "alice"
    assert "name" not in report.row(3)


def test_grouped_statistics_match_numpy():
    rng = np.random.default_rng(7)
    values = rng.exponential(100, 1000)
    values[rng.random(1000) < 0.1] = np.nan
    codes = rng.integers(0, 5, 1000)
    stats, counts = grouped_statistics(codes, values, 6)
    for g in range(5):
        v = values[(codes == g) & ~np.isnan(values)]
        assert counts[g] == len(v)
        assert stats["mean"][g] == pytest.approx(np.mean(v), rel=1e-12)
        assert stats["median"][g] == pytest.approx(np.median(v), rel=1e-12)
        assert stats["p90"][g] == pytest.approx(np.percentile(v, 90), rel=1e-12)
        assert stats["p99"][g] == pytest.approx(np.percentile(v, 99), rel=1e-12)
        assert stats["max"][g] == np.max(v)
    assert counts[5] == 0 and np.isnan(stats["mean"][5]) and np.isnan(stats["max"][5])


def test_report_json_is_deterministic_and_has_no_nan():
    a = compute_metrics(golden_workload(), by="accuracy-class", procs=10).to_json()
    b = compute_metrics(golden_workload(), by="accuracy-class", procs=10).to_json()
    assert a == b
    data = json.loads(a)
    assert data["by"] == "accuracy-class"
    assert data["rows"][-1]["group"] == "all"
    assert "NaN" not in a


def test_report_renders_text():
    report = compute_metrics(golden_workload(), procs=10)
    text = str(report)
    assert "bounded-slowdown" in text and "utilization" in text and "note:" in text
    grouped = compute_metrics(golden_workload(), names=["wait"], by="queue").render(
        stats=["mean", "p90"], time_unit="min"
    )
    assert "wait p90 (min)" in grouped


def test_metric_order_and_selection():
    report = compute_metrics(golden_workload(), names=["fairness", "wait", "jain"])
    assert report.metric_names() == ["fairness", "wait"]
    default = compute_metrics(golden_workload(), procs=10).metric_names()
    assert default[:5] == ["wait", "response", "slowdown", "bounded-slowdown", "accuracy"]
    assert {"makespan", "utilization", "throughput", "loss-of-capacity", "fairness"} <= set(default)


def test_errors_are_one_line_usage_errors():
    with pytest.raises(UsageError, match="unknown grouping 'colour'"):
        compute_metrics(golden_workload(), by="colour")
    with pytest.raises(UsageError, match="unknown option 'tresh'"):
        compute_metrics(golden_workload(), tresh=3)
    with pytest.raises(UsageError, match="window"):
        compute_metrics(golden_workload(), window="many")
    with pytest.raises(UsageError, match="edges"):
        compute_metrics(golden_workload(), by="accuracy-class", edges="0.5/0.3")
    with pytest.raises(UsageError, match="weight"):
        compute_metrics(golden_workload(), weight="queues")
    with pytest.raises(UnknownComponentError, match="unknown metric 'latency'"):
        compute_metrics(golden_workload(), names=["latency"])
    with pytest.raises(UsageError, match="Workload"):
        compute_metrics([1, 2, 3])


def test_result_like_object():
    """A simulation Result: its workload, machine size and excluded jobs are used."""

    class FakeResult:
        workload = golden_workload()
        procs = 10
        excluded = {"larger_than_machine": np.array([7, 9]), "no_size": np.array([], int)}

    report = compute_metrics(FakeResult(), names=["utilization"])
    assert report.procs == 10
    assert report.value("utilization") == pytest.approx(0.54)
    assert report.notes[0].startswith("2 jobs were excluded by the simulator")


def test_empty_workload():
    report = compute_metrics(Workload.from_arrays({"submit_time": []}), procs=4)
    assert report.jobs == 0
    assert report.value("wait") is None
    assert report.value("makespan") is None
