"""Fixes of the second audit of the Google readers (/tmp/audits/google2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import schedlab
from schedlab.formats.google.frames import empty_frame
from schedlab.formats.google.reduce import reduce_usage


def _t(seconds: float) -> str:
    return str(int(600_000_000 + seconds * 1_000_000))


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _evict_trace(directory: Path, collection: list, instance: list) -> None:
    _write(
        directory / "collection_events-000000000000.json",
        [
            {
                "time": _t(t),
                "type": ty,
                "collection_id": "103",
                "collection_type": 0,
                "priority": 200,
            }
            for t, ty in collection
        ],
    )
    _write(
        directory / "instance_events-000000000000.json",
        [
            {
                "time": _t(t),
                "type": ty,
                "collection_id": "103",
                "instance_index": 0,
                "machine_id": m,
                "resource_request": {"cpus": 0.1, "memory": 0.1},
            }
            for t, ty, m in instance
        ],
    )


# ----------------------------------------------------------------- 1: evict, scheduled again


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_evicted_and_scheduled_again_is_still_running(tmp_path, engine):
    _evict_trace(
        tmp_path,
        [(400, 0), (410, 3), (450, 4), (460, 3)],
        [(400, 0, None), (410, 3, "15"), (450, 4, "15"), (460, 3, "16")],
    )
    w = schedlab.read(tmp_path, engine=engine)
    (job,) = w.jobs
    (task,) = job.tasks
    assert job.wait_time == 10.0
    assert job.run_time is None and job.status is None
    assert job.extras["end_event"] is None and job.extras["end_raw"] is None
    assert job.hosts == ("16",)
    assert task.start_time == 410.0 and task.end_time is None and task.status is None
    assert task.host == "16"
    # without tasks the same job
    light = schedlab.read(tmp_path, engine=engine, tasks=False)
    assert light.jobs[0].run_time is None and light.jobs[0].status is None


def test_evicted_scheduled_again_then_finished_ends_at_the_finish(tmp_path):
    _evict_trace(
        tmp_path,
        [(400, 0), (410, 3), (450, 4), (460, 3), (500, 6)],
        [(400, 0, None), (410, 3, "15"), (450, 4, "15"), (460, 3, "16"), (500, 6, "16")],
    )
    (job,) = schedlab.read(tmp_path).jobs
    assert job.run_time == 90.0 and job.status == 1
    assert job.tasks[0].end_time == 500.0 and job.tasks[0].status == 1


def test_failed_then_resubmitted_is_not_ended(tmp_path):
    # FAIL, then SUBMIT again (pending at the trace end): not ended either
    _evict_trace(
        tmp_path,
        [(400, 0), (410, 3), (450, 5), (460, 0)],
        [(400, 0, None), (410, 3, "15"), (450, 5, "15"), (460, 0, None)],
    )
    (job,) = schedlab.read(tmp_path).jobs
    assert job.run_time is None and job.status is None
    assert job.tasks[0].end_time is None and job.tasks[0].status is None


def _v2_evict(directory: Path) -> None:
    s = lambda x: int(600_000_000 + x * 1_000_000)  # noqa: E731
    je = [(s(200), "", 2, 0, "uB", 0, "nB", "lB"), (s(210), "", 2, 1, "uB", 0, "nB", "lB")]
    je += [(s(250), "", 2, 2, "uB", 0, "nB", "lB"), (s(260), "", 2, 0, "uB", 0, "nB", "lB")]
    je += [(s(270), "", 2, 1, "uB", 0, "nB", "lB")]
    te = [
        (s(200), "", 2, 0, "", 0, "uB", 0, 0, 0.5, 0.25, 0, 0),
        (s(210), "", 2, 0, 103, 1, "uB", 0, 0, "", "", "", ""),
        (s(250), "", 2, 0, 103, 2, "uB", 0, 0, "", "", "", ""),
        (s(260), "", 2, 0, "", 0, "uB", 0, 0, 0.5, 0.25, 0, 0),
        (s(270), "", 2, 0, 104, 1, "uB", 0, 0, "", "", "", ""),
    ]
    fmt = lambda r: ",".join(str(v) for v in r) + "\n"  # noqa: E731
    (directory / "job_events-part-00000-of-00001.csv").write_text("".join(map(fmt, je)))
    (directory / "task_events-part-00000-of-00001.csv").write_text("".join(map(fmt, te)))


def test_v2_evicted_and_rescheduled_is_still_running(tmp_path):
    _v2_evict(tmp_path)
    (job,) = schedlab.read(tmp_path).jobs
    assert job.run_time is None and job.status is None
    (task,) = job.tasks
    assert task.end_time is None and task.status is None and task.host == "104"


# ----------------------------------------------------------------- 2: usage windows


def _usage_trace(directory: Path, usage: list[dict]) -> None:
    _write(
        directory / "collection_events-000000000000.json",
        [
            {"time": _t(t), "type": ty, "collection_id": "100", "collection_type": 0}
            for t, ty in ((100, 0), (110, 3), (200, 6))
        ],
    )
    _write(
        directory / "instance_events-000000000000.json",
        [
            {
                "time": _t(t),
                "type": ty,
                "collection_id": "100",
                "instance_index": 0,
                "machine_id": m,
                "resource_request": {"cpus": 0.01, "memory": 0.01},
            }
            for t, ty, m in ((100, 0, None), (110, 3, "11"), (200, 6, "11"))
        ],
    )
    _write(directory / "instance_usage-000000000000.json", usage)


_WIN = {"collection_id": "100", "instance_index": 0, "machine_id": "11"}
_AVG = {"average_usage": {"cpus": 0.01, "memory": 0.005}}


def test_usage_one_window_reference(tmp_path):
    _usage_trace(tmp_path, [dict(_WIN, start_time=_t(110), end_time=_t(200), **_AVG)])
    w = schedlab.read(tmp_path)
    assert w.jobs[0].average_cpu_time == pytest.approx(90.0)
    assert w.meta["summary"]["usage_windows"] == {}


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_null_average_usage_is_unknown(tmp_path, engine):
    _usage_trace(tmp_path, [dict(_WIN, start_time=_t(110), end_time=_t(200))])
    w = schedlab.read(tmp_path, engine=engine)
    job = w.jobs[0]
    assert job.average_cpu_time is None and job.used_memory is None
    assert job.extras["used_cpu_seconds_ncu"] is None
    usage = job.tasks[0].extras["usage"]
    assert usage["cpu_seconds"] is None and usage["memory_seconds"] is None
    assert usage["unknown_windows"] == 1
    assert w.meta["summary"]["usage_windows"] == {"average_unknown": 1}
    assert any("usage windows" in n for n in w.header.get_all("Note"))


@pytest.mark.parametrize(
    "start,end",
    [(_t(200), _t(110)), ("0", _t(200)), (_t(110), str(2**63 - 1))],
    ids=["end_before_start", "start_zero", "end_max"],
)
def test_window_of_unknown_time_is_unknown(tmp_path, start, end):
    _usage_trace(tmp_path, [dict(_WIN, start_time=start, end_time=end, **_AVG)])
    w = schedlab.read(tmp_path)
    job = w.jobs[0]
    assert job.average_cpu_time is None and job.used_memory is None
    assert job.tasks[0].extras["usage"]["seconds"] is None
    assert w.meta["summary"]["usage_windows"] == {"time_unknown": 1}


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_duplicate_window_counted_once(tmp_path, engine):
    _usage_trace(tmp_path, [dict(_WIN, start_time=_t(110), end_time=_t(200), **_AVG)] * 2)
    w = schedlab.read(tmp_path, engine=engine)
    job = w.jobs[0]
    assert job.average_cpu_time == pytest.approx(90.0)
    usage = job.tasks[0].extras["usage"]
    assert usage["windows"] == 1 and usage["seconds"] == 90.0
    assert usage["duplicate_windows"] == 1
    assert job.extras["usage_windows"] == 1
    assert w.meta["summary"]["usage_windows"] == {"duplicate": 1}


def test_overlapping_windows_are_counted(tmp_path):
    _usage_trace(
        tmp_path,
        [
            dict(_WIN, start_time=_t(110), end_time=_t(200), **_AVG),
            dict(_WIN, start_time=_t(150), end_time=_t(200), **_AVG),
        ],
    )
    w = schedlab.read(tmp_path)
    assert w.meta["summary"]["usage_windows"] == {"overlapping": 1}
    assert w.jobs[0].tasks[0].extras["usage"]["overlapping_windows"] == 1


def test_reduce_usage_dedupes_null_windows_and_counts_them():
    """Two identical windows without a mean (NaN) are one window, of unknown usage."""
    import numpy as np

    frame = dict(empty_frame("instance_usage"))
    rows = 3
    for name, column in frame.items():
        frame[name] = np.resize(column, rows) if len(column) else np.zeros(rows, column.dtype)
    frame["collection_id"] = np.array([5, 5, 5], dtype=np.int64)
    frame["instance_index"] = np.array([0, 0, 1], dtype=np.int64)
    frame["start_time"] = np.array([700_000_000] * 3, dtype=np.int64)
    frame["end_time"] = np.array([710_000_000] * 3, dtype=np.int64)
    for name in ("avg_cpus", "avg_memory", "max_cpus", "max_memory"):
        frame[name] = np.array([np.nan, np.nan, 0.5])
    frame["_line"] = np.arange(rows, dtype=np.int64)
    frame["_shard"] = np.zeros(rows, dtype=np.int64)
    out = reduce_usage(frame)
    assert out["windows"].tolist() == [1, 1]
    assert out["duplicate_windows"].tolist() == [1, 0]
    assert out["average_unknown_windows"].tolist() == [1, 0]
    assert np.isnan(out["cpu_seconds"][0]) and out["cpu_seconds"][1] == 5.0
    assert out["seconds"].tolist() == [10.0, 10.0]


# ----------------------------------------------------------------- 3: v2 task user


def test_v2_task_user_and_class_for_job_known_only_from_tasks(tmp_path):
    (tmp_path / "task_events-part-00000-of-00001.csv").write_text(
        "700000000,,7,0,,0,userHASH,2,9,0.0625,0.03,0.001,0\n"
        "710000000,,7,0,101,1,userHASH,2,9,,,,\n"
    )
    w = schedlab.read(tmp_path)
    (job,) = w.jobs
    assert job.extras["user"] == "userHASH" and job.user_id == 1
    assert job.extras["scheduling_class"] == 2
    assert job.priority == 9
    assert w.meta["names"]["user"] == {1: "userHASH"}


def test_v2_job_event_user_wins_over_task_user(tmp_path):
    (tmp_path / "job_events-part-00000-of-00001.csv").write_text("700000000,,7,0,jobUSER,1,n,l\n")
    (tmp_path / "task_events-part-00000-of-00001.csv").write_text(
        "700000000,,7,0,,0,taskUSER,2,9,0.0625,0.03,0.001,0\n"
    )
    (job,) = schedlab.read(tmp_path).jobs
    assert job.extras["user"] == "jobUSER" and job.extras["scheduling_class"] == 1


# ----------------------------------------------------------------- 4, 5: google-dask CLI

AUDIT = Path("/tmp/audits/google2")


def _dask_cli(source: Path, out: Path) -> subprocess.CompletedProcess:
    pytest.importorskip("distributed")
    return subprocess.run(
        [sys.executable, "-m", "schedlab", "google-dask", str(source), str(out), "--workers", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _bad_v3(directory: Path) -> None:
    _evict_trace(directory, [(400, 0), (410, 3)], [(400, 0, None)])
    path = directory / "collection_events-000000000000.json"
    lines = path.read_text().splitlines()
    record = json.loads(lines[1])
    record["type"] = 77
    lines[1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")


def test_google_dask_bad_input_one_line(tmp_path):
    (tmp_path / "bad").mkdir()
    _bad_v3(tmp_path / "bad")
    result = _dask_cli(tmp_path / "bad", tmp_path / "out.swf")
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "unknown value 77" in lines[0] and "Traceback" not in result.stderr


def test_google_dask_refuses_a_2011_trace(tmp_path):
    _v2_evict(tmp_path)
    (tmp_path / "machine_events-sample.csv").write_text("0,5,0,p,0.5,0.5\n")
    result = _dask_cli(tmp_path, tmp_path / "out.swf")
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "2019 (v3)" in lines[0] and "2011" in lines[0]
    assert "--from google-v2" in lines[0] and "schedlab convert" in lines[0]


# ----------------------------------------------------------------- 6: partial requests


def test_partly_known_requests_are_unknown_and_counted(tmp_path):
    (tmp_path / "task_events-part-00000-of-00001.csv").write_text(
        "0,,7,0,,0,u,2,9,0.0625,0.09277,0,0\n0,2,7,1,,0,u,2,9,,,,\n"
    )
    w = schedlab.read(tmp_path)
    (job,) = w.jobs
    assert job.nodes == 2
    assert job.requested_processors is None and job.requested_memory is None
    assert job.extras["requested_cpus"] is None
    assert job.extras["request_unknown"] == "instances_without_request"
    assert w.meta["summary"]["requests_partial"] == 1
    assert any("requests" in n and "unknown" in n for n in w.header.get_all("Note"))


# ----------------------------------------------------------------- 7: two types, one id


def test_job_then_alloc_set_with_one_id_is_counted(tmp_path):
    _write(
        tmp_path / "collection_events-000000000000.json",
        [
            {"time": _t(t), "type": ty, "collection_id": "306", "collection_type": ct}
            for t, ty, ct in ((90, 0, 0), (91, 3, 0), (92, 6, 0), (93, 0, 1), (94, 3, 1))
        ],
    )
    w = schedlab.read(tmp_path)
    assert w.meta["summary"]["collections_of_two_types"] == 1
    assert any("two collection types" in n for n in w.header.get_all("Note"))
    (alloc,) = w.meta["alloc_sets"]
    assert alloc["collection_types"] == ["JOB", "ALLOC_SET"]


@pytest.mark.parametrize("status", [None, 0, 1])
def test_an_end_before_the_submit_is_reported_as_read_back_unknown(
    tmp_path: Path, status: int | None
) -> None:
    """A job started (and ended) before its submission (negative wait) is written with
    its end event before its SUBMIT, which the reader reads as a resubmission: the run
    time (and a known status) come back unknown, and the writer says so (hypothesis
    found the run time unreported)."""
    from schedlab import Job, Workload, collect_losses

    job = Job(submit_time=0, wait_time=-3, run_time=0, status=status)
    with collect_losses() as losses:
        schedlab.write(Workload.from_jobs([job]), tmp_path / "g", format="google")
    back = schedlab.read(tmp_path / "g", format="google").jobs[0]
    assert back.run_time is None and losses.count("run_time") == 1
    if status is not None:
        assert back.status is None and losses.count("status") >= 1
