"""Leftovers of the hostile-input audit of Batsim's formats: a job with a negative
``subtime`` in a workload, and the ``consumed_energy`` column of a jobs file,
which was read without a check (any negative number, any magnitude). Each bad
value is one line naming the file, the job (JSON place and id, or line) and the
field (exit 2 on the CLI), or a skipped and counted job when lenient; Batsim's -1
(no energy model) stays unknown: kept as -1 and written back."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import schedlab
from schedlab.errors import FormatError
from schedlab.testing import run_cli as run

WORKLOAD: dict[str, Any] = {
    "nb_res": 4,
    "jobs": [
        {"id": 1, "subtime": 0, "walltime": 100, "res": 2, "profile": "p1"},
        {"id": "w0!2", "subtime": -5, "walltime": 50, "res": 1, "profile": "p1"},
        {"id": 3, "subtime": 10, "res": 1, "profile": "p1"},
    ],
    "profiles": {"p1": {"type": "delay", "delay": 30}},
}


def _workload(tmp_path: Path) -> Path:
    path = tmp_path / "w.json"
    path.write_text(json.dumps(WORKLOAD))
    return path


def test_negative_subtime_names_file_job_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = _workload(tmp_path)
    with pytest.raises(FormatError) as info:
        schedlab.read(path, format="batsim")
    assert str(info.value) == (
        f"{path}: jobs[1] (id 'w0!2'): field subtime: expected a number >= 0, got -5"
    )
    assert info.value.field == "subtime"
    code, _, err = run(capsys, "info", "--from", "batsim", str(path))
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "jobs[1] (id 'w0!2'): field subtime" in err, err


def test_negative_subtime_is_skipped_and_counted_when_lenient(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = _workload(tmp_path)
    w = schedlab.read(path, format="batsim", lenient=True)
    assert [j.job_number for j in w] == [1, 3]
    assert w.meta["skipped"] == 1
    assert [position for position, _ in w.meta["rejects"]] == [1]
    assert json.loads(w.meta["rejects"][0][1])["subtime"] == -5
    bad = [f for f in w.meta["findings"] if f.check == "bad-record"]
    assert [f.message for f in bad] == [
        "jobs[1] (id 'w0!2'): field subtime: expected a number >= 0, got -5 (job skipped)"
    ]
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 1
    assert "jobs[1] (id 'w0!2'): field subtime: expected a number >= 0, got -5" in out, out


def test_subtime_zero_is_still_read(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(WORKLOAD))
    doc["jobs"][1]["subtime"] = 0
    path = tmp_path / "w.json"
    path.write_text(json.dumps(doc))
    assert [j.submit_time for j in schedlab.read(path, format="batsim", order="file")] == [
        0.0,
        0.0,
        10.0,
    ]


# ------------------------------------------------------------ consumed_energy

HEADER = (
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
    "requested_time,success,final_state,starting_time,execution_time,finish_time,"
    "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata\n"
)


def _row(job: int, energy: str) -> str:
    start = 10 * job
    return (
        f"{job},w0,d10,{start},1,100,1,COMPLETED_SUCCESSFULLY,{start},10,{start + 10},"
        f"0,10,1,{job - 1},{energy},\n"
    )


def _jobs_file(tmp_path: Path, *energies: str) -> Path:
    path = tmp_path / "out_jobs.csv"
    path.write_text(HEADER + "".join(_row(i, e) for i, e in enumerate(energies, start=1)))
    return path


@pytest.mark.parametrize(
    ("energy", "expected"),
    [
        ("-5", "expected a number >= 0 (or -1: no energy model), got '-5'"),
        ("-1.5", "expected a number >= 0 (or -1: no energy model), got '-1.5'"),
        ("-2.000000", "expected a number >= 0 (or -1: no energy model), got '-2.000000'"),
        ("1e300", "out of range (at most 2**53 - 1), got '1e300'"),
        (str(2**53 + 2), f"out of range (at most 2**53 - 1), got '{2**53 + 2}'"),
    ],
)
def test_bad_consumed_energy_names_file_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture, energy: str, expected: str
) -> None:
    path = _jobs_file(tmp_path, "1200.5", energy)
    with pytest.raises(FormatError) as info:
        schedlab.read(path)
    assert str(info.value) == f"{path}:3: field consumed_energy: {expected}"
    assert (info.value.line, info.value.field) == (3, "consumed_energy")
    code, _, err = run(capsys, "info", str(path))
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{path}:3: field consumed_energy" in err, err


def test_bad_consumed_energy_is_skipped_when_lenient_and_no_energy_stays_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = _jobs_file(tmp_path, "-1.000000", "-7", "", "1200.5")
    w = schedlab.read(path, lenient=True, order="file")
    assert [j.job_number for j in w] == [1, 3, 4]
    assert w.meta["skipped"] == 1
    assert w.meta["rejects"] == [(3, _row(2, "-7").rstrip("\n"))]
    assert w.meta["reject_reasons"] == [
        f"{path}:3: field consumed_energy: expected a number >= 0 (or -1: no energy model), "
        "got '-7'"
    ]
    # -1 (no energy model) and an empty cell stay unknown: never joules
    assert [j.extras.get("batsim.consumed_energy") for j in w] == [-1, None, 1200.5]
    out = tmp_path / "back_jobs.csv"
    schedlab.write(w, out)
    assert [row["consumed_energy"] for row in csv.DictReader(out.open())] == ["-1", "", "1200.5"]
    code, out_text, _ = run(capsys, "validate", str(path))
    assert code == 1 and f"{path}:3: error" in out_text, out_text
