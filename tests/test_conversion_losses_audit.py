"""Conversion audit findings 2-12: fresh job numbers that the formats' readers
take, every field the Google writer does not give back reported, the origin
change of the Slurm writer and the header labels of the SGE writers reported, and
the smaller messages and options around them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import schedlab
from schedlab.validation import MAX_MAGNITUDE

BIG_IDS = """\
; Version: 2.2
9007199254740990 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1
-1 1 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1
-1 2 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1
"""


def workload_of(tmp_path: Path, text: str, name: str = "in.swf") -> schedlab.Workload:
    path = tmp_path / name
    path.write_text(text)
    return schedlab.read(path)


def write_losses(workload: schedlab.Workload, path: Path, fmt: str, **options) -> list:
    with schedlab.collect_losses() as losses:
        schedlab.write(workload, path, format=fmt, **options)
    return list(losses)


READ_NUMBERS = {"sge": {"job_numbers": "sge"}, "sge-jsonl": {"job_numbers": "sge"}}


@pytest.mark.parametrize("fmt", ["sge", "sge-jsonl", "batsim"])
def test_fresh_job_numbers_fit_and_read_back(tmp_path, fmt):
    """Finding 2: with the highest number near 2**53 - 1, fresh numbers are unused
    numbers the reader takes (not 2**53), and the written file reads back."""
    out = tmp_path / f"out.{fmt}"
    write_losses(workload_of(tmp_path, BIG_IDS), out, fmt)
    back = schedlab.read(out, format=fmt, **READ_NUMBERS.get(fmt, {}))
    numbers = [job.job_number for job in back.jobs]
    assert len(back.jobs) == 3
    assert 9007199254740990 in numbers
    assert len(set(numbers)) == 3
    assert all(n is not None and 0 <= n <= MAX_MAGNITUDE for n in numbers)
    # the reader took the written numbers as they are (it renumbers none)
    assert not [f for f in back.meta.get("findings") or () if f.field == "job_number"]


def test_batsim_renumbering_message_says_what_happened(tmp_path):
    """Finding 10: numbers given below the highest (none is left above it) are not
    described as "numbered above the highest number"."""
    path = tmp_path / "w.json"
    path.write_text(
        '{"nb_res": 8, "jobs": [{"id": "abc", "subtime": 0, "res": 1, "profile": "p"},'
        ' {"id": 9007199254740991, "subtime": 1, "res": 1, "profile": "p"}],'
        ' "profiles": {"p": {"type": "delay", "delay": 1}}}'
    )
    findings = [f for f in schedlab.read(path).meta["findings"] if f.field == "job_number"]
    assert len(findings) == 1
    assert "now 0" in findings[0].message
    assert "above the highest number" not in findings[0].message


def _google_round_trip(tmp_path: Path, job: schedlab.Job) -> tuple[schedlab.Job, Any]:
    header = schedlab.Header()
    header.set("UnixStartTime", 1000000000)
    with schedlab.collect_losses() as losses:
        schedlab.write(
            schedlab.Workload(header=header, jobs=[job]), tmp_path / "c", format="google"
        )
    return schedlab.read(tmp_path / "c", format="google").jobs[0], losses


FIELDS = ("submit_time", "wait_time", "run_time", "allocated_processors", "requested_processors")


@pytest.mark.parametrize(
    ("submit", "wait"), [(-700, 100), (-700, 200), (-600, 0), (-601, 1), (-5000, None), (None, 5)]
)
def test_google_reports_every_time_field_lost_before_the_trace(tmp_path, submit, wait):
    """Finding 3: a job submitted (or started) before -600 s: every field that does
    not come back (wait, run time, allocated processors) is reported."""
    job = schedlab.Job(
        job_number=1, submit_time=submit, wait_time=wait, run_time=10,
        allocated_processors=2, requested_processors=2, status=1,
    )  # fmt: skip
    back, losses = _google_round_trip(tmp_path, job)
    for field in FIELDS:
        if getattr(back, field) != getattr(job, field):
            assert losses.count(field) >= 1, (field, [str(x) for x in losses])


@pytest.mark.parametrize(("memory", "procs"), [(100001.0, 40), (123.98, 40), (1048576.0, 7)])
def test_google_reports_memory_changed_in_the_last_digit(tmp_path, memory, procs):
    """Finding 7: a requested memory read back changed in its last digits is
    reported (no tolerance hides it); one read back exactly is not."""
    job = schedlab.Job(
        job_number=1, submit_time=0, wait_time=1, run_time=10, allocated_processors=procs,
        requested_processors=procs, requested_memory=memory, status=1,
    )  # fmt: skip
    back, losses = _google_round_trip(tmp_path, job)
    assert (losses.count("requested_memory") >= 1) == (back.requested_memory != memory)


HDR = """\
; Version: 2.2
; Computer: IBM SP2
; MaxJobs: 28490
; MaxRecords: 28476
; UnixStartTime: 1000000000
; StartTime: Mon Sep 23 14:00:31 CEST 1996
; MaxQueues: 3
; Queue: 1 short 15 minutes
; Queue: 2 long
; Queue: 3 unused
1 0 0 10 1 5 100 1 -1 -1 1 1 1 -1 1 -1 -1 -1
2 5 0 10 1 5 100 1 -1 -1 1 1 1 -1 2 -1 -1 -1
"""


@pytest.mark.parametrize("fmt", ["sge", "sge-jsonl"])
def test_sge_reports_header_labels_the_reader_remakes_otherwise(tmp_path, fmt):
    """Finding 5: Computer, MaxJobs, MaxRecords, StartTime, MaxQueues and the queue
    table's unused entry and description come back otherwise: reported; Version
    (2.2 again) is not lost."""
    out = tmp_path / "out"
    losses = write_losses(workload_of(tmp_path, HDR), out, fmt)
    back = schedlab.read(out, format=fmt).header
    source = workload_of(tmp_path, HDR).header
    reported = {loss.field for loss in losses}
    for label in ("Computer", "MaxJobs", "MaxRecords", "StartTime", "MaxQueues", "Queue"):
        assert source.get_all(label) != back.get_all(label)
        assert f"header.{label}" in reported, label
    assert back.get("Version") == "2.2" and "header.Version" not in reported


def test_sge_header_labels_that_come_back_are_no_loss(tmp_path):
    text = "; Version: 2.2\n; UnixStartTime: 1000000000\n; MaxJobs: 2\n; MaxRecords: 2\n"
    text += "; MaxQueues: 2\n; Queue: 1 short\n; Queue: 2 long\n" + HDR.split("unused\n")[1]
    losses = write_losses(workload_of(tmp_path, text), tmp_path / "out", "sge")
    assert not [loss for loss in losses if loss.field.startswith("header.")], [
        str(loss) for loss in losses
    ]


@pytest.mark.parametrize("fmt", ["sge", "sge-jsonl"])
def test_sge_unknown_status_of_a_job_that_never_started(tmp_path, fmt):
    """Finding 6: the report says what reads back (5), not "completed (1)"."""
    text = "; UnixStartTime: 1000000000\n4 30 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
    losses = write_losses(workload_of(tmp_path, text), tmp_path / "out", fmt)
    back = schedlab.read(tmp_path / "out", format=fmt).jobs[0]
    (status,) = [str(loss) for loss in losses if loss.field == "status"]
    assert back.status == 5 and "read back as 5" in status


@pytest.mark.parametrize("fmt", ["sge", "sge-jsonl"])
def test_sge_empty_workload_loses_no_origin(tmp_path, fmt):
    """Finding 9: no record, no time written: nothing lost (strict passes)."""
    empty = workload_of(tmp_path, "")
    with schedlab.collect_losses(strict=True) as losses:
        schedlab.write(empty, tmp_path / "out", format=fmt)
    assert not list(losses)
    one = workload_of(tmp_path, "1 0 0 10 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n", "one.swf")
    assert "header.UnixStartTime" in {x.field for x in write_losses(one, tmp_path / "o1", fmt)}
