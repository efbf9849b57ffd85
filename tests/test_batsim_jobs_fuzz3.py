"""Batsim jobs.csv (``batsim-jobs``), audit fuzz3: fields longer than Python csv's
default limit read back (the writer makes them), a negative ``execution_time`` and a
``starting_time`` before ``submission_time`` are errors (and never written),
contradicting columns (``success`` / ``final_state``, ``workload_name`` / the id's
workload) are warning findings, and an error names the first line of a row that
spans several lines (a quoted multi-line ``metadata``)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import schedlab
from schedlab.errors import FormatError
from schedlab.losses import collect_losses
from schedlab.model import Job, Workload
from schedlab.testing import run_cli as run
from schedlab.validation import BAD_RECORD, WARNING, check_workload

HEADER = (
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
    "requested_time,success,final_state,starting_time,execution_time,finish_time,"
    "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata\n"
)


def row(
    job: object,
    *,
    workload: str = "",
    submit: str = "0",
    start: str = "0",
    run_time: str = "50",
    success: str = "1",
    state: str = "COMPLETED_SUCCESSFULLY",
    alloc: str = "0-3",
    metadata: str = "",
) -> str:
    return (
        f"{job},{workload},,{submit},4,100,{success},{state},{start},{run_time},50,0,50,1,"
        f"{alloc},,{metadata}\n"
    )


def _write(tmp_path: Path, *rows: str, name: str = "out_jobs.csv") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + "".join(rows))
    return path


def _error(path: Path) -> str:
    with pytest.raises(FormatError) as info:
        schedlab.read(path, format="batsim-jobs")
    return str(info.value)


# ------------------------------------------------- 2: fields past csv's default limit


def _scattered(count: int) -> str:
    return " ".join(str(2 * i) for i in range(count))


def test_a_25000_id_allocation_reads_and_round_trips(tmp_path: Path) -> None:
    ids = _scattered(25_000)
    assert len(ids) > csv.field_size_limit()  # (131072 by default)
    path = _write(tmp_path, row(1, alloc=ids), row(2, alloc="0-3"))
    limit = csv.field_size_limit()
    (job, other) = schedlab.read(path, order="file")
    assert csv.field_size_limit() == limit  # the process-wide limit is left alone
    assert job.allocated_processors == 25_000 and other.allocated_processors == 4
    assert job.extras["batsim.allocated_resources"] == ids
    out = tmp_path / "back_jobs.csv"
    schedlab.write(schedlab.read(path, order="file"), out, format="batsim-jobs")
    back = schedlab.read(out, order="file")
    assert [j.allocated_processors for j in back] == [25_000, 4]
    assert back.jobs[0].extras["batsim.allocated_resources"] == ids


def test_the_writers_own_scattered_allocation_reads_back(tmp_path: Path) -> None:
    # 2n one-processor jobs at 0 (the odd ids end at 10), then one job of n at 20:
    # it gets the n scattered odd ids, a field longer than 131072 characters
    n = 25_000
    jobs = [
        Job(job_number=i + 1, submit_time=0.0, wait_time=0.0,
            run_time=10.0 if i % 2 else 1000.0, allocated_processors=1,
            requested_processors=1, status=1)
        for i in range(2 * n)
    ]  # fmt: skip
    jobs.append(
        Job(job_number=2 * n + 1, submit_time=20.0, wait_time=0.0, run_time=100.0,
            allocated_processors=n, requested_processors=n, status=1)
    )  # fmt: skip
    out = tmp_path / "frag_jobs.csv"
    with collect_losses(strict=False):
        schedlab.write(Workload.from_jobs(jobs), out, format="batsim-jobs")
    back = schedlab.read(out, order="file")
    last = back.jobs[-1]
    assert last.allocated_processors == n
    assert len(last.extras["batsim.allocated_resources"]) > 131072


def test_the_limit_is_restored_after_a_failed_read(tmp_path: Path) -> None:
    limit = csv.field_size_limit()
    path = _write(tmp_path, row(1, alloc=_scattered(25_000)), row(2, submit="x"))
    assert _error(path).endswith("field submission_time: expected a number, got 'x'")
    assert csv.field_size_limit() == limit


# ------------------------------------------------- 3: negative run, start before submit


@pytest.mark.parametrize("value", ["-1", "-50", "-0.5", "-1.000000"])
def test_negative_execution_time_is_an_error(tmp_path: Path, value: str) -> None:
    path = _write(tmp_path, row(1), row(2, run_time=value), row(3))
    assert _error(path) == f"{path}:3: field execution_time: expected a number >= 0, got {value!r}"
    lenient = schedlab.read(path, lenient=True, order="file")
    assert [j.job_number for j in lenient] == [1, 3] and lenient.meta["skipped"] == 1
    (bad,) = [f for f in lenient.meta["findings"] if f.check == BAD_RECORD]
    assert (bad.line, bad.field) == (3, "execution_time")


def test_zero_and_empty_execution_times_still_read(tmp_path: Path) -> None:
    path = _write(tmp_path, row(1, run_time="0"), row(2, run_time="-0"), row(3, run_time=""))
    assert [j.run_time for j in schedlab.read(path, order="file")] == [0.0, 0.0, None]


def test_starting_time_before_submission_time_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, row(1), row(2, submit="10", start="5"))
    assert _error(path) == (
        f"{path}:3: field starting_time: expected a number >= submission_time (10), "
        "got '5' (a job cannot start before its submission)"
    )
    lenient = schedlab.read(path, lenient=True)
    assert [j.job_number for j in lenient] == [1] and lenient.meta["skipped"] == 1


def test_negative_starting_time_with_an_unknown_submission_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, row(1, submit="", start="-6"))
    assert _error(path) == f"{path}:2: field starting_time: expected a number >= 0, got '-6'"


def test_start_equal_to_submit_reads(tmp_path: Path) -> None:
    path = _write(tmp_path, row(1, submit="10.5", start="10.5"))
    assert schedlab.read(path).jobs[0].wait_time == 0.0


def test_convert_refuses_the_audit_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = _write(
        tmp_path,
        "1,,,0,4,100,1,COMPLETED_SUCCESSFULLY,0,-50,-50,0,-50,1,0-3,,\n",
        "2,,,10,4,100,1,COMPLETED_SUCCESSFULLY,5,-1,4,-5,-6,1,0-3,,\n",
        name="negrun_jobs.csv",
    )
    code, out, err = run(capsys, "convert", str(path), str(tmp_path / "negrun.swf"))
    assert code == 2, (out, err)
    assert err.strip() == (
        f"schedlab: error: {path}:2: field execution_time: expected a number >= 0, got '-50'"
    )
    assert not (tmp_path / "negrun.swf").exists()


def test_writer_never_writes_a_negative_run_or_wait(tmp_path: Path) -> None:
    jobs = [
        Job(job_number=1, submit_time=0.0, wait_time=0.0, run_time=-50.0,
            allocated_processors=4, requested_processors=4, status=1),
        Job(job_number=2, submit_time=10.0, wait_time=-5.0, run_time=30.0,
            allocated_processors=4, requested_processors=4, status=1),
    ]  # fmt: skip
    out = tmp_path / "w_jobs.csv"
    with collect_losses(strict=False) as losses:
        schedlab.write(Workload.from_jobs(jobs), out, format="batsim-jobs")
    assert losses.count("run_time") == 1
    assert losses.count("wait_time") == 1
    back = schedlab.read(out, order="file")
    assert [j.run_time for j in back] == [None, 30.0]
    assert [j.wait_time for j in back] == [0.0, None]


def test_a_negative_one_held_as_a_number_is_not_called_unknown() -> None:
    w = Workload.from_jobs([Job(job_number=1, submit_time=0.0, run_time=-1.0)])
    (finding,) = [f for f in check_workload(w) if f.check == "negative-value"]
    assert "only -1, unknown, may be negative" not in finding.message
    assert finding.message.startswith("negative value -1 ")


# ------------------------------------------------- 4: contradicting columns


def test_success_contradicting_final_state_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = _write(
        tmp_path,
        row(2, success="0"),
        row(3, success="1", state="COMPLETED_FAILED", alloc="4-7"),
        row(4, success="0", state="COMPLETED_KILLED", alloc="8"),
        name="sc_jobs.csv",
    )
    w = schedlab.read(path, order="file")
    assert [j.status for j in w] == [1, 0, 5]  # final_state wins, as documented
    (finding,) = [f for f in w.meta["findings"] if f.field == "success"]
    assert finding.severity == WARNING and finding.line == 2
    assert finding.message == (
        "2 row(s) have a success contradicting their final_state, the first success 0 "
        "with final_state 'COMPLETED_SUCCESSFULLY' (Batsim writes success 1 exactly for "
        "COMPLETED_SUCCESSFULLY): final_state kept"
    )
    code, out, _ = run(capsys, "validate", "--strict", str(path))
    assert code == 1 and "[conflicting-columns]" in out, out
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 0, out


def test_success_not_0_or_1_beside_final_state_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, row(1, success="yes"))
    assert _error(path) == f"{path}:2: field success: expected 0 or 1, got 'yes'"


def test_consistent_success_and_final_state_have_no_finding(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        row(1),
        row(2, success="0", state="COMPLETED_WALLTIME_REACHED"),
        row(3, success="", state="REJECTED", start="", run_time="", alloc=""),
    )
    assert schedlab.read(path).meta["findings"] == []


def test_workload_name_contradicting_the_id_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = _write(
        tmp_path,
        row("w0!1", workload="w1"),
        row("w0!2", workload="w0"),
        row("3", workload="w7"),
        name="workload_conflict_jobs.csv",
    )
    w = schedlab.read(path, order="file")
    assert [j.extras["batsim.workload"] for j in w] == ["w1", "w0", "w7"]
    (finding,) = w.meta["findings"]
    assert (finding.line, finding.field, finding.severity, finding.check) == (
        2,
        "workload_name",
        WARNING,
        "conflicting-columns",
    )
    assert finding.message == (
        "1 row(s) have a workload_name that is not the workload of their job_id, the "
        "first workload_name 'w1' with job_id 'w0!1': workload_name kept"
    )
    code, out, _ = run(capsys, "validate", "--strict", str(path))
    assert code == 1 and "[conflicting-columns]" in out, out


# ------------------------------------------------- 6: multi-line rows


def test_an_error_after_a_multiline_metadata_names_the_rows_first_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        row(1, metadata='"a\nb\nc"'),
        row(2, submit="-5", metadata='"x\ny"'),
    )
    assert _error(path) == f"{path}:5: field submission_time: expected a number >= 0, got '-5'"
    lenient = schedlab.read(path, lenient=True)
    assert lenient.meta["rejects"][0][0] == 5
    assert [f.line for f in lenient.meta["findings"]] == [5]
    (job,) = lenient
    assert job.extras["batsim.metadata"] == "a\nb\nc"


def test_rows_after_a_blank_line_keep_their_line(tmp_path: Path) -> None:
    path = _write(tmp_path, row(1), "\n", row(2, submit="-5"))
    assert _error(path).startswith(f"{path}:4: field submission_time")
