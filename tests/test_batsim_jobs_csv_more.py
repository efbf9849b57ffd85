"""Batsim jobs.csv: a negative ``submission_time`` is an error, a negative
``requested_time`` other than Batsim's ``-1`` (no walltime) too, and a row a
lenient read skips is reported with its reason (a ``bad-record`` finding), as the
workload.json reader does."""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from schedlab.errors import FormatError
from schedlab.losses import collect_losses
from schedlab.model import Job, Workload
from schedlab.testing import run_cli as run
from schedlab.validation import BAD_RECORD, ERROR, SKIPPED_RECORD, check_workload

HEADER = (
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
    "requested_time,success,final_state,starting_time,execution_time,finish_time,"
    "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata\n"
)


def row(job: int, submit: str = "0.000000", walltime: str = "100.000000") -> str:
    return (
        f"{job},w0,d10,{submit},1,{walltime},1,COMPLETED_SUCCESSFULLY,20.000000,10.000000,"
        f"30.000000,0.000000,10.000000,1.000000,{job - 1},-1.000000,\n"
    )


def _write(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "out_jobs.csv"
    path.write_text(HEADER + "".join(rows))
    return path


def _error(path: Path) -> str:
    with pytest.raises(FormatError) as info:
        schedlab.read(path)
    return str(info.value)


# ------------------------------------------------------------ submission_time


@pytest.mark.parametrize("value", ["-1", "-0.5", "-1.000000", "-1e3"])
def test_negative_submission_time_is_an_error(tmp_path: Path, value: str) -> None:
    path = _write(tmp_path, row(1), row(2, submit=value), row(3))
    assert _error(path) == (
        f"{path}:3: field submission_time: expected a number >= 0, got {value!r}"
    )


def test_negative_submission_time_is_a_skipped_row_when_lenient(tmp_path: Path) -> None:
    path = _write(tmp_path, row(1), row(2, submit="-5"), row(3))
    w = schedlab.read(path, lenient=True)
    assert [j.job_number for j in w] == [1, 3]
    assert w.meta["skipped"] == 1
    assert w.meta["rejects"] == [(3, row(2, submit="-5").rstrip("\n"))]


def test_zero_and_empty_submission_times_still_read(tmp_path: Path) -> None:
    path = _write(tmp_path, row(1, submit="0"), row(2, submit="-0"), row(3, submit=""))
    w = schedlab.read(path, order="file")
    assert [j.submit_time for j in w] == [0.0, 0.0, None]


# ------------------------------------------------------------ requested_time


@pytest.mark.parametrize("value", ["-1", "-1.000000", "-1.0", "-1e0"])
def test_batsim_no_walltime_marker_is_unknown(tmp_path: Path, value: str) -> None:
    (job,) = schedlab.read(_write(tmp_path, row(1, walltime=value))).jobs
    assert job.requested_time is None


@pytest.mark.parametrize("value", ["-2", "-0.5", "-1.5", "-3600.000000", "-1e3"])
def test_other_negative_walltimes_are_errors(tmp_path: Path, value: str) -> None:
    path = _write(tmp_path, row(1), row(2, walltime=value))
    assert _error(path) == (
        f"{path}:3: field requested_time: expected a number >= 0 (or -1: no walltime), "
        f"got {value!r}"
    )
    lenient = schedlab.read(path, lenient=True)
    assert [j.job_number for j in lenient] == [1] and lenient.meta["skipped"] == 1


# ------------------------------------------------------------ lenient findings


def test_lenient_skips_carry_a_bad_record_finding_with_the_reason(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        row(1),
        row(2, submit="-5"),
        row(3, walltime="-7"),
        row(4, submit="x"),
        "5,w0,too,few\n",
        row(6),
    )
    w = schedlab.read(path, lenient=True)
    assert [j.job_number for j in w] == [1, 6]
    bad = [f for f in w.meta["findings"] if f.check == BAD_RECORD]
    assert [(f.line, f.field, f.message, f.severity) for f in bad] == [
        (3, "submission_time", "expected a number >= 0, got '-5' (record skipped)", ERROR),
        (
            4,
            "requested_time",
            "expected a number >= 0 (or -1: no walltime), got '-7' (record skipped)",
            ERROR,
        ),
        (5, "submission_time", "expected a number, got 'x' (record skipped)", ERROR),
        (6, None, "expected 17 columns, found 4 (record skipped)", ERROR),
    ]
    assert len(w.meta["reject_reasons"]) == 4
    # the generic "skipped-record" finding (text, no reason) is no longer needed
    findings = check_workload(w)
    assert not [f for f in findings if f.check == SKIPPED_RECORD]
    assert sorted(f.line for f in findings if f.check == BAD_RECORD) == [3, 4, 5, 6]


def test_validate_shows_why_a_row_was_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = _write(tmp_path, row(1), row(2, submit="-5"))
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 1
    assert (
        f"{path}:3: error: field submission_time: expected a number >= 0, got '-5' "
        "(record skipped) [bad-record]"
    ) in out, out
    assert SKIPPED_RECORD not in out


def test_renumbering_warnings_are_kept_beside_the_skips(tmp_path: Path) -> None:
    path = _write(tmp_path, row(1), row(1), row(2, submit="-5"))
    w = schedlab.read(path, lenient=True)
    checks = sorted(f.check for f in w.meta["findings"])
    assert checks == [BAD_RECORD, "renumbered-job"]


# ------------------------------------------------------------ writing


def test_writer_never_writes_what_the_reader_refuses(tmp_path: Path) -> None:
    jobs = [
        Job(job_number=1, submit_time=-5.0, wait_time=1.0, run_time=2.0,
            requested_processors=1, allocated_processors=1, requested_time=-7.0, status=1),
        Job(job_number=2, submit_time=0.0, wait_time=1.0, run_time=2.0,
            requested_processors=1, allocated_processors=1, requested_time=-1.0, status=1),
    ]  # fmt: skip
    out = tmp_path / "w_jobs.csv"
    with collect_losses(strict=False) as losses:
        schedlab.write(Workload.from_jobs(jobs), out, format="batsim-jobs")
    assert losses.count("submit_time") == 1
    assert losses.count("requested_time") == 2
    back = schedlab.read(out, format="batsim-jobs", order="file")
    assert [j.submit_time for j in back] == [None, 0.0]
    assert [j.requested_time for j in back] == [None, None]
