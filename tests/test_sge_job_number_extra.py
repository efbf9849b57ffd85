"""Grid Engine's own job and task numbers as extras (``sge.job_number``,
``sge.task_number``): the reader numbers jobs 1..N by default, and these are what
joins a result (``to_pandas(extras=[...])``) back to the accounting file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import schedlab
from schedlab.formats.sge import reader as sge_reader
from schedlab.model import Job, Workload

JOB, TASK = "sge.job_number", "sge.task_number"


def colon(job: int, task: int, sub: int, *, pe_task: str = "NONE", owner: str = "alice") -> str:
    """A 45-field colon record of one (array) task that ran for 60 s."""
    start, end = sub + 10, sub + 70
    return (
        f"all.q:node1:grp:{owner}:job{job}:{job}:sge:0:{sub}:{start}:{end}:0:0:60:"
        "1.0:0.5:1024:0:0:0:0:10:0:0:0:0:0:0:0:1:1:NONE:defaultdepartment:NONE:1:"
        f"{task}:1.5:0.1:0.0:-l h_rt=3600:0.0:{pe_task}:1048576:0:0"
    )


def jsonl(job: int, task: int | None, sub: int) -> str:
    record: dict = {"job_number": job}
    if task is not None:  # OCS omits task_number for a job that is not an array
        record["task_number"] = task
    record.update(
        {
            "start_time": (sub + 10) * 10**6,
            "end_time": (sub + 70) * 10**6,
            "owner": "alice",
            "group": "grp",
            "qname": "all.q",
            "slots": 1,
            "submission_time": sub * 10**6,
            "category": "-l h_rt=3600",
            "failed": 0,
            "exit_status": 0,
        }
    )
    return json.dumps(record)


#: (job number, task number, submission) in file order; jobs are sorted by
#: submission, so the 1..N numbers follow another order than the file's.
RECORDS = [(9001, 3, 1_700_000_300), (9001, 1, 1_700_000_100), (42, 0, 1_700_000_200),
           (9001, 2, 1_700_000_050), (7, 0, 1_700_000_000)]  # fmt: skip


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


@pytest.fixture(params=["colon", "jsonl"])
def accounting(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    if request.param == "colon":
        return _write(tmp_path / "accounting", [colon(*r) for r in RECORDS])
    return _write(tmp_path / "accounting.jsonl", [jsonl(*r) for r in RECORDS])


def _numbers(workload: Workload) -> list[tuple[int, int]]:
    return [(job.extras[JOB], job.extras[TASK]) for job in workload.jobs]


def test_renumbered_jobs_keep_their_job_and_task_numbers(accounting: Path) -> None:
    workload = schedlab.read(accounting)
    assert [job.job_number for job in workload.jobs] == [1, 2, 3, 4, 5]
    by_submit = sorted(RECORDS, key=lambda r: r[2])
    assert _numbers(workload) == [(job, task) for job, task, _ in by_submit]
    for job in workload.jobs:  # plain integers, not floats
        assert type(job.extras[JOB]) is int and type(job.extras[TASK]) is int


def test_to_pandas_joins_back_to_the_accounting_file(accounting: Path) -> None:
    pd = pytest.importorskip("pandas")
    workload = schedlab.read(accounting)
    frame = workload.to_pandas(extras=[JOB, TASK])
    assert str(frame[JOB].dtype) == "Int64" and str(frame[TASK].dtype) == "Int64"
    source = pd.DataFrame(RECORDS, columns=[JOB, TASK, "submission"])
    joined = frame.merge(source, on=[JOB, TASK], how="left", validate="one_to_one")
    assert joined["submission"].notna().all()
    origin = source["submission"].min()
    assert (joined["submit_time"] == joined["submission"] - origin).all()


def test_file_order_and_sge_job_numbers(accounting: Path) -> None:
    in_file = schedlab.read(accounting, order="file")
    assert _numbers(in_file) == [(job, task) for job, task, _ in RECORDS]
    kept = schedlab.read(accounting, job_numbers="sge")
    assert [job.job_number for job in kept.jobs] == [job.extras[JOB] for job in kept.jobs]


def test_task_number_is_zero_when_jsonl_omits_it(tmp_path: Path) -> None:
    path = _write(tmp_path / "accounting.jsonl", [jsonl(5, None, 1_700_000_000)])
    (job,) = schedlab.read(path).jobs
    assert (job.extras[JOB], job.extras[TASK]) == (5, 0)


def test_grouped_records_give_one_pair(tmp_path: Path) -> None:
    """A restart and a parallel task share the job's key: one job, one pair."""
    lines = [
        colon(77, 4, 1_700_000_000),
        colon(77, 4, 1_700_000_000, pe_task="1.node2"),
        colon(77, 4, 1_700_000_000),
        colon(78, 0, 1_700_000_001),
    ]
    workload = schedlab.read(_write(tmp_path / "accounting", lines))
    assert _numbers(workload) == [(77, 4), (78, 0)]
    assert len(workload.jobs[0].extras["sge_records"]) == 3
    ungrouped = schedlab.read(tmp_path / "accounting", group=False)
    assert _numbers(ungrouped) == [(77, 4)] * 3 + [(78, 0)]


def test_lenient_read_numbers_the_jobs_it_keeps(tmp_path: Path) -> None:
    lines = [colon(1, 0, 1_700_000_000), "bad:record", colon(3, 0, 1_700_000_002)]
    workload = schedlab.read(_write(tmp_path / "accounting", lines), lenient=True)
    assert workload.meta["skipped"] == 1
    assert _numbers(workload) == [(1, 0), (3, 0)]


def test_bulk_careful_and_two_process_reads_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [colon(100 + i // 3, i % 3, 1_700_000_000 + i, owner=f"u{i % 7}") for i in range(900)]
    path = _write(tmp_path / "accounting", lines)
    expected = [(100 + i // 3, i % 3) for i in range(900)]
    assert _numbers(schedlab.read(path)) == expected
    assert _numbers(schedlab.read(path, workers=2)) == expected
    monkeypatch.setattr(sge_reader, "BULK", False)
    assert _numbers(schedlab.read(path)) == expected


# ----------------------------------------------------------------- writing


@pytest.mark.parametrize("layout", ["colon", "jsonl"])
def test_same_layout_round_trip_is_byte_identical_and_lossless(tmp_path: Path, layout: str) -> None:
    if layout == "colon":
        source = _write(tmp_path / "in.accounting", [colon(*r) for r in RECORDS])
        out, fmt = tmp_path / "out.accounting", "sge"
    else:
        source = _write(tmp_path / "in.accounting.jsonl", [jsonl(*r) for r in RECORDS])
        out, fmt = tmp_path / "out.accounting.jsonl", "sge-jsonl"
    workload = schedlab.read(source)
    with schedlab.collect_losses(strict=False) as losses:
        schedlab.write(workload, out, format=fmt)
    assert list(losses) == []
    assert out.read_bytes() == source.read_bytes()
    # through Job objects too
    again = tmp_path / "again"
    with schedlab.collect_losses(strict=False) as losses:
        schedlab.write(Workload.from_jobs(workload.jobs, workload.header), again, format=fmt)
    # (without the reader's meta the header's Note is reported: not about extras)
    assert [loss.field for loss in losses if not loss.field.startswith("header.")] == []
    assert again.read_bytes() == source.read_bytes()


def test_other_layout_does_not_report_the_numbers(tmp_path: Path) -> None:
    source = _write(tmp_path / "in.accounting", [colon(*r) for r in RECORDS])
    out = tmp_path / "out.accounting.jsonl"
    with schedlab.collect_losses(strict=False) as losses:
        schedlab.write(schedlab.read(source), out, format="sge-jsonl")
    assert not [loss for loss in losses if loss.field.startswith("extras.sge.")]
    assert _numbers(schedlab.read(out, order="file")) == [(j, t) for j, t, _ in RECORDS]


@pytest.mark.parametrize("target", ["swf", "batsim-jobs", "google"])
def test_other_formats_report_the_numbers_as_lost_extras(tmp_path: Path, target: str) -> None:
    source = _write(tmp_path / "in.accounting", [colon(*r) for r in RECORDS])
    with schedlab.collect_losses(strict=False) as losses:
        schedlab.write(schedlab.read(source), tmp_path / "out", format=target)
    assert losses.count(f"extras.{JOB}") == len(RECORDS)
    assert losses.count(f"extras.{TASK}") == len(RECORDS)


def test_a_job_without_its_record_reports_the_numbers_lost(tmp_path: Path) -> None:
    """Synthesised from the model, the record gets the job's (1..N) number: the
    kept Grid Engine numbers are not written, and the writer says so."""
    job = Job(job_number=1, submit_time=0, wait_time=1, run_time=5, allocated_processors=1,
              requested_processors=1, status=1, extras={JOB: 9001, TASK: 3})  # fmt: skip
    with schedlab.collect_losses(strict=False) as losses:
        schedlab.write(Workload.from_jobs([job]), tmp_path / "out.accounting", format="sge")
    assert losses.count(f"extras.{JOB}") == 1 and losses.count(f"extras.{TASK}") == 1


@pytest.mark.realdata
def test_real_files_carry_the_numbers(shared_data: Path) -> None:
    for path in sorted((shared_data / "sge").iterdir()):
        if not path.is_file():
            continue
        workload = schedlab.read(path, job_numbers="sge")
        for job in workload.jobs:
            assert job.extras[JOB] == job.job_number, path.name
            assert isinstance(job.extras[TASK], int), path.name
