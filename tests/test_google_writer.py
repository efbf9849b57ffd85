"""The Google v3 writer: read -> write -> read gives the same jobs; other workloads
and changed schedules get synthesized events."""

from __future__ import annotations

import gzip
import hashlib
import json
import math

import attrs
import pytest
import schedlab
from schedlab.formats.google.fixtures import generate_trace
from schedlab.model import Dependency, Job, Task, Workload


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    return generate_trace(tmp_path_factory.mktemp("w") / "trace", collections=800, seed=11)


@pytest.fixture(scope="module")
def workload(trace):
    return schedlab.read(trace.directory)


def _rows(directory, table):
    out = []
    for path in sorted(directory.glob(f"{table}-*.json.gz")):
        with gzip.open(path, "rt") as fh:
            out.extend(json.loads(line) for line in fh)
    return out


def test_round_trip_gives_the_same_jobs(workload, tmp_path):
    out = tmp_path / "copy"
    schedlab.write(workload, out, format="google")
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "collection_events-000000000000.json.gz",
        "instance_events-000000000000.json.gz",
        "instance_usage-000000000000.json.gz",
    ]
    again = schedlab.read(out)
    assert again.jobs == workload.jobs  # exact, including tasks, events and usage
    assert again.header.names("User") == workload.header.names("User")
    assert [a["collection_id"] for a in again.meta["alloc_sets"]] == [
        a["collection_id"] for a in workload.meta["alloc_sets"]
    ]


def test_written_rows_follow_the_export_style(workload, tmp_path):
    out = tmp_path / "copy"
    schedlab.write(workload, out, format="google", shard_rows=1000)
    assert len(list(out.glob("instance_events-*.json.gz"))) > 1
    row = _rows(out, "instance_events")[0]
    assert isinstance(row["time"], str) and isinstance(row["collection_id"], str)
    assert isinstance(row["type"], int)
    assert None not in row.values()
    assert schedlab.read(out).jobs == workload.jobs


def test_output_is_deterministic(workload, tmp_path):
    digests = []
    for name in ("a", "b"):
        schedlab.write(workload, tmp_path / name, format="google")
        digests.append(
            [
                hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted((tmp_path / name).iterdir())
            ]
        )
    assert digests[0] == digests[1]


def test_changed_schedule_is_written_with_new_times(workload, tmp_path):
    jobs = [attrs.evolve(j) for j in workload.jobs]
    changed = next(
        j for j in jobs if j.wait_time is not None and j.run_time is not None and j.tasks
    )
    changed.wait_time += 1000.0
    schedlab.write(Workload.from_jobs(jobs, workload.header), tmp_path / "sim", format="google")
    again = {j.extras["collection_id"]: j for j in schedlab.read(tmp_path / "sim").jobs}
    job = again[changed.extras["collection_id"]]
    assert job.submit_time == changed.submit_time
    assert job.wait_time == pytest.approx(changed.wait_time, abs=1e-6)
    assert job.run_time == pytest.approx(changed.run_time, abs=1e-6)
    assert job.status == changed.status
    assert len(job.tasks) == len(changed.tasks)


def test_swf_like_jobs_are_synthesized(tmp_path):
    jobs = [
        Job(
            job_number=1,
            submit_time=0.0,
            wait_time=5.0,
            run_time=100.0,
            status=1,
            requested_processors=4,
            user_id=1,
            priority=200,
        ),
        Job(
            job_number=2,
            submit_time=10.0,
            wait_time=0.0,
            run_time=50.0,
            status=0,
            requested_processors=1,
            user_id=2,
            dependencies=(Dependency(1, "end"),),
            preceding_job_number=1,
        ),
        Job(
            job_number=3,
            submit_time=20.0,
            wait_time=1.0,
            run_time=7.0,
            status=5,
            tasks=(Task("0", processors=2.0), Task("1", processors=2.0)),
        ),
    ]
    workload = Workload.from_jobs(jobs)
    workload.header.set_names("User", {1: "alice", 2: "bob"})
    schedlab.write(workload, tmp_path / "out", format="google")
    again = schedlab.read(tmp_path / "out")
    assert [j.swf_values()[:4] for j in again.jobs] == [
        (1, 0.0, 5.0, 100.0),
        (2, 10.0, 0.0, 50.0),
        (3, 20.0, 1.0, 7.0),
    ]
    assert [j.status for j in again.jobs] == [1, 0, 5]
    assert [j.requested_processors for j in again.jobs] == [4, 1, 4]
    assert [len(j.tasks) for j in again.jobs] == [1, 1, 2]
    assert again.jobs[1].dependencies == (Dependency(1, "end"),)
    assert again.jobs[1].preceding_job_number == 1
    assert again.header.names("User") == {1: "alice", 2: "bob"}
    assert again.jobs[0].extras["tier"] == "prod"
    rows = _rows(tmp_path / "out", "collection_events")
    assert [r["type"] for r in rows[:3]] == [0, 3, 6]  # SUBMIT, SCHEDULE, FINISH


def test_special_times_survive(workload, tmp_path):
    special = [j for j in workload.jobs if j.extras.get("submit_special")]
    assert special
    schedlab.write(workload, tmp_path / "out", format="google")
    again = {j.extras["collection_id"]: j for j in schedlab.read(tmp_path / "out").jobs}
    for job in special:
        copy = again[job.extras["collection_id"]]
        assert copy.submit_time is None and copy.extras["submit_raw"] == 0
        assert copy.extras["submit_special"] == "before_trace"


def test_usage_windows_reproduce_totals(workload):
    from schedlab.formats.google.v3_writer import _usage_rows

    usage = {
        "windows": 3,
        "seconds": 617.25,
        "cpu_seconds": 31.5651,
        "memory_seconds": 7.9517999999999995,
        "max_cpus": 0.2,
        "max_memory": None,
    }
    rows = list(_usage_rows(9, 0, 700_000_000, usage, 0))
    assert len(rows) == 3
    seconds = sum(r["end_time"] - r["start_time"] for r in rows) / 1e6
    assert seconds == usage["seconds"]
    cpu = sum(
        r.get("average_usage", {}).get("cpus", 0.0) * (r["end_time"] - r["start_time"]) / 1e6
        for r in rows
    )
    assert cpu == usage["cpu_seconds"]
    assert math.isclose(cpu, 31.5651)
