"""The Google 2011 (v2) reader on the real samples."""

from __future__ import annotations

import csv
import gzip
import shutil
from pathlib import Path

import pytest
import schedlab
from schedlab.formats.google.v2_reader import sniff_v2


@pytest.fixture(scope="module")
def sample(shared_data: Path) -> Path:
    return shared_data / "google" / "clusterdata2011_v2_sample"


@pytest.fixture(scope="module")
def workload(sample):
    return schedlab.read(sample)


def _csv(path: Path) -> list[list[str]]:
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


def test_detected_and_counted(sample, workload):
    assert workload.meta["reader"] == "google-v2"
    assert sniff_v2(b"", str(sample))
    tables = workload.meta["summary"]["tables"]
    for table in (
        "job_events",
        "task_events",
        "task_usage",
        "machine_events",
        "machine_attributes",
    ):
        assert tables[table] == {"shards": 1, "rows": len(_csv(sample / f"{table}-sample.csv"))}
    job_ids = {row[2] for row in _csv(sample / "job_events-sample.csv")}
    assert len(workload) == len(job_ids) == 670


def test_job_fields_from_the_rows(sample, workload):
    jobs = {j.extras["collection_id"]: j for j in workload.jobs}
    job_rows = {int(r[2]): r for r in _csv(sample / "job_events-sample.csv")}
    tasks_by_job: dict[int, list[list[str]]] = {}
    for row in _csv(sample / "task_events-sample.csv"):
        tasks_by_job.setdefault(int(row[2]), []).append(row)
    users = workload.header.names("User")
    for job_id, row in job_rows.items():
        job = jobs[job_id]
        assert users[job.user_id] == row[4]
        assert job.name == row[6] and job.extras["collection_logical_name"] == row[7]
        assert job.extras["scheduling_class"] == int(row[5])
        assert job.extras["submit_raw"] == int(row[0]) == 0  # the samples start before the trace
        assert job.submit_time is None and job.extras["submit_special"] == "before_trace"
        rows = tasks_by_job.get(job_id, [])
        assert len(job.tasks) == len({r[3] for r in rows})
    # job 3418314: two tasks asking 0.125 normalized CPUs and 0.07446 memory each
    job = jobs[3418314]
    assert [t.extras["cpus"] for t in job.tasks] == [0.125, 0.125]
    assert job.requested_processors == 25  # ceil(0.25 x 100)
    assert job.requested_memory == pytest.approx(2 * 0.07446 * 1e6 / 25)
    assert job.priority == 9 and job.extras["tier"] == "prod" and job.queue_number == 4
    assert [t.host for t in job.tasks] == ["3938719206", "351618647"]


def test_usage_and_machines(sample, workload):
    jobs = {j.extras["collection_id"]: j for j in workload.jobs}
    job = jobs[3418309]
    usage = [r for r in _csv(sample / "task_usage-sample.csv") if r[2] == "3418309"]
    assert job.extras["usage_windows"] == len(usage)
    expected = sum(float(r[5]) * (int(r[1]) - int(r[0])) / 1e6 for r in usage)
    assert job.extras["used_cpu_seconds_ncu"] == pytest.approx(expected)
    machines = _csv(sample / "machine_events-sample.csv")
    added = {r[1]: float(r[4]) for r in machines if r[2] == "0" and r[4]}
    capacity = workload.meta["capacity"]
    assert capacity["peak_machines"] == len(added)
    assert capacity["peak_cpus"] == pytest.approx(sum(added.values()))
    assert workload.header.max_procs == int(sum(added.values()) * 100 + 1e-9)
    assert workload.header.unix_start_time == 1304290800
    assert workload.header.time_zone_string == "America/New_York"


def test_part_files_in_table_folders(sample, workload, tmp_path):
    for table in (
        "job_events",
        "task_events",
        "task_usage",
        "machine_events",
        "machine_attributes",
    ):
        (tmp_path / table).mkdir()
        data = (sample / f"{table}-sample.csv").read_bytes()
        half = data.index(b"\n", len(data) // 2) + 1
        with gzip.open(tmp_path / table / "part-00000-of-00002.csv.gz", "wb") as fh:
            fh.write(data[:half])
        with gzip.open(tmp_path / table / "part-00001-of-00002.csv.gz", "wb") as fh:
            fh.write(data[half:])
    again = schedlab.read(tmp_path)
    assert again.meta["reader"] == "google-v2"
    assert [j.swf_values() for j in again.jobs] == [j.swf_values() for j in workload.jobs]


def test_bad_row_names_file_line_and_field(sample, tmp_path):
    copy = tmp_path / "trace"
    shutil.copytree(sample, copy)
    path = copy / "task_events-sample.csv"
    lines = path.read_text().splitlines(keepends=True)
    fields = lines[10].split(",")
    fields[9] = "lots"
    lines[10] = ",".join(fields)
    lines[20] = "1,2,3\n"
    path.write_text("".join(lines))
    with pytest.raises(schedlab.FormatError) as info:
        schedlab.read(copy)
    assert str(info.value).startswith(f"{path}:11: field 10 (cpu_request): expected a number")
    lenient = schedlab.read(copy, lenient=True)
    assert lenient.meta["skipped"] == 2
    assert any(":21: expected 13 comma-separated fields" in m for m in lenient.meta["rejects"])


def test_convert_to_swf(sample, tmp_path):
    out = tmp_path / "google2011.swf"
    schedlab.write(schedlab.read(sample), out)
    back = schedlab.read(out)
    assert len(back) == 670
    assert back.header.max_procs == schedlab.read(sample).header.max_procs
