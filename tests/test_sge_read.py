"""Reading Grid Engine / OCS accounting files: the real files of ../shared/data/sge,
golden values computed by hand from their records, layout detection and sniffing."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab.formats.sge import sniff_colon, sniff_jsonl
from schedlab.io import read_head

pytestmark = pytest.mark.realdata

#: file -> (layout, records, jobs)
FILES = {
    "apel_test_sge_accounting.txt": ("colon", 4, 4),
    "apel_test_uge82_ms_accounting.txt": ("colon", 1, 1),
    "gbsc_utils_ogetools_test_data.accounting": ("colon", 133, 133),
    "go-clusterscheduler_ocs900_accounting.jsonl": ("jsonl", 1, 1),
    "ocs-9.0.0_release-notes_accounting.jsonl": ("jsonl", 1, 1),
    "pretty-accounting_sge6x_accounting.txt": ("colon", 4, 4),
    "pretty-accounting_uge8x_ms_accounting.txt": ("colon", 6, 6),
    "xdmod_sge_accounting-logs.log": ("colon", 2, 1),
    "xdmod_uge_accounting-logs.log": ("colon", 2, 2),
}


@pytest.fixture(scope="module")
def sge_dir(shared_data: Path) -> Path:
    return shared_data / "sge"


def test_every_real_file_is_listed(sge_dir: Path) -> None:
    assert {p.name for p in sge_dir.iterdir() if p.is_file()} == set(FILES)


@pytest.mark.parametrize("name", sorted(FILES))
def test_real_file_reads(sge_dir: Path, name: str) -> None:
    layout, records, jobs = FILES[name]
    workload = schedlab.read(sge_dir / name)
    assert workload.meta["reader"] == ("sge-jsonl" if layout == "jsonl" else "sge")
    assert workload.meta["layout"] == layout
    assert workload.meta["records"] == records
    assert workload.meta["skipped"] == 0
    assert len(workload) == jobs
    cols = workload.to_arrays()
    assert cols["job_number"].tolist() == list(range(1, jobs + 1))
    submit = cols["submit_time"][~np.isnan(cols["submit_time"])]
    assert (np.diff(submit) >= 0).all()
    assert submit.min() < 1.0  # relative to the earliest submission
    header = workload.header
    assert name in header.conversion
    assert header.unix_start_time > 1_000_000_000


@pytest.mark.parametrize("name", sorted(FILES))
def test_both_reader_names_read_both_layouts(sge_dir: Path, name: str) -> None:
    a = schedlab.read(sge_dir / name, format="sge")
    b = schedlab.read(sge_dir / name, format="sge-jsonl")
    assert np.array_equal(a.to_arrays().to_matrix(), b.to_arrays().to_matrix())


@pytest.mark.parametrize("name", sorted(FILES))
def test_detection_by_content_not_name(sge_dir: Path, tmp_path: Path, name: str) -> None:
    copy = tmp_path / "trace.data"
    shutil.copy(sge_dir / name, copy)
    layout = FILES[name][0]
    assert schedlab.read(copy).meta["reader"] == ("sge-jsonl" if layout == "jsonl" else "sge")
    head = read_head(copy)
    assert sniff_colon(head, "x") is (layout == "colon")
    assert sniff_jsonl(head, "x") is (layout == "jsonl")


def test_sniffers_do_not_claim_other_formats(shared_data: Path) -> None:
    others = [
        p
        for folder in ("swf", "google", "slurm")
        for p in sorted((shared_data / folder).rglob("*"))
        if p.is_file() and not p.name.endswith((".md", ".proto", ".txt"))
    ]
    assert len(others) > 10
    for path in others:
        head = read_head(path)
        assert not sniff_colon(head, path.name), path
        assert not sniff_jsonl(head, path.name), path


def _job(workload: schedlab.Workload, index: int) -> schedlab.Job:
    return workload.jobs[index]


def test_golden_sge62_parallel_job_killed(sge_dir: Path) -> None:
    """apel line 2: CSIC, 9 slots, failed 100 / exit 138 (signal), h_rt=180300,
    h_vmem=1124M; every value below is computed by hand from the record."""
    w = schedlab.read(sge_dir / "apel_test_sge_accounting.txt", order="file")
    job = _job(w, 1)
    origin = 1200093286  # submission time of the first record, the earliest
    assert w.header.unix_start_time == origin
    assert job.submit_time == 1318560244 - origin
    assert job.wait_time == 10
    assert job.run_time == 1318740255 - 1318560254
    assert job.allocated_processors == 9
    assert job.average_cpu_time == pytest.approx(1026706.54 / 9)
    assert job.used_memory == pytest.approx(821923840 / 1024 / 9)
    assert job.requested_time == 180300
    assert job.requested_memory == 1124 * 1024
    assert job.requested_processors == 9  # "-pe mpi 9"
    assert job.status == 5
    assert w.header.names("Queue")[job.queue_number] == "large"
    assert w.header.names("User")[job.user_id] == "csfiylfl"
    assert w.header.names("Group")[job.group_id] == "csic"


def test_golden_43_and_46_fields_and_statuses(sge_dir: Path) -> None:
    w = schedlab.read(sge_dir / "apel_test_sge_accounting.txt", order="file")
    first, _, third, fourth = w.jobs
    assert first.used_memory == pytest.approx(30171136 / 1024)  # 43-field record
    assert first.status == 1
    assert third.status == 0  # failed 0, exit 1
    assert third.average_cpu_time == pytest.approx(1272.61884123)
    assert fourth.run_time == 359  # 46 fields, trailing NONE kept in the record
    assert w.jobs[3].extras["sge_record"].endswith(":0:0:NONE")


def test_golden_colons_inside_category(sge_dir: Path) -> None:
    w = schedlab.read(sge_dir / "pretty-accounting_sge6x_accounting.txt", order="file")
    job = w.jobs[3]  # category "-l cpu=24:00:00"
    assert job.used_memory == pytest.approx(12754944 / 1024)
    assert job.run_time == 300
    assert math.isclose(job.average_cpu_time, 0.004998)
    assert job.requested_time is None  # cpu= is not a wall-time request
    sge60 = w.jobs[0]  # SGE 6.0u8: submission time 0
    assert sge60.submit_time == 0 and sge60.wait_time is None and sge60.run_time == 10
    assert w.jobs[1].status == 5 and w.jobs[1].requested_time == 864000


def test_golden_univa_milliseconds(sge_dir: Path) -> None:
    w = schedlab.read(sge_dir / "apel_test_uge82_ms_accounting.txt")
    job = w.jobs[0]
    assert w.header.unix_start_time == 1412932860
    assert job.submit_time == pytest.approx(0.657)
    assert job.wait_time == pytest.approx(4.484)
    assert job.run_time == pytest.approx(220.488)
    assert job.used_memory == pytest.approx(1291231232 / 1024)


def test_golden_never_started_jobs(sge_dir: Path) -> None:
    w = schedlab.read(sge_dir / "pretty-accounting_uge8x_ms_accounting.txt", order="file")
    for job in w.jobs[4:]:  # hosts UNKNOWN / (null), all-zero times
        assert job.status == 5
        assert job.wait_time is None and job.run_time is None
        assert job.allocated_processors is None
        assert job.queue_number is None
    assert w.jobs[5].requested_processors == 4
    assert w.jobs[5].requested_time == 1080000
    assert w.jobs[0].status == 5  # failed 100, exit 137
    assert w.jobs[0].requested_processors == 5  # "-pe smp 1-10": the granted slots
    assert set(w.header.names("Queue").values()) == {"all.q", "ideve_120"}


def test_golden_jsonl_old_usage_layout(sge_dir: Path) -> None:
    w = schedlab.read(sge_dir / "go-clusterscheduler_ocs900_accounting.jsonl")
    job = w.jobs[0]
    assert w.header.unix_start_time == 1730532912
    assert job.submit_time == pytest.approx(0.874519)
    assert job.wait_time == pytest.approx(0.554896)
    assert job.run_time == pytest.approx(0.549601)
    assert job.average_cpu_time == pytest.approx(0.51713)
    assert job.used_memory == pytest.approx(21049344 / 1024)
    assert job.status == 1
    rss = schedlab.read(sge_dir / "go-clusterscheduler_ocs900_accounting.jsonl", memory="maxrss")
    assert rss.jobs[0].used_memory == pytest.approx(10530816 / 1024)


def test_grouping_records_of_one_job(sge_dir: Path) -> None:
    path = sge_dir / "xdmod_sge_accounting-logs.log"
    grouped = schedlab.read(path)
    (job,) = grouped.jobs
    assert len(job.extras["sge_records"]) == 2 and job.extras["sge_lines"] == (1, 2)
    assert "mem_free=1.000T" in job.extras["sge_records"][1]
    assert job.requested_memory == pytest.approx(1.024e12 / 1024)  # s_vmem=1.024t, the main
    separate = schedlab.read(path, group=False)
    assert len(separate) == 2 and separate.jobs[0].requested_memory is None


def test_sge_job_numbers_option(sge_dir: Path) -> None:
    w = schedlab.read(sge_dir / "apel_test_sge_accounting.txt", job_numbers="sge", order="file")
    assert [j.job_number for j in w.jobs] == [43, 6972834, 1630912, 3294013]


def test_record_fields_helper(sge_dir: Path) -> None:
    from schedlab.formats.sge import record_fields

    (job,) = schedlab.read(sge_dir / "xdmod_sge_accounting-logs.log").jobs
    first, second = record_fields(job)
    assert first["job_number"] == second["job_number"] == 22947
    assert first["hostname"] == "testhost" and first["granted_pe"] == "mype"
    assert first["submission_time"] == 1310761621 * 1_000_000
    assert "mem_free=1.000T" in second["category"]
    (ocs,) = schedlab.read(sge_dir / "ocs-9.0.0_release-notes_accounting.jsonl").jobs
    assert record_fields(ocs)[0]["usage"]["usage"]["maxvmem"] == 222384128.0
    assert record_fields({}) == []
