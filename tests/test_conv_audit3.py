"""Conversion audit conv3, Batsim workload writer: the workload name and the
profile names a Batsim jobs file carries are written into the workload (or
reported), so that jobs.csv -> workload -> jobs.csv keeps them."""

from __future__ import annotations

import json
from pathlib import Path

import schedlab
from schedlab.formats.batsim.jobs import write_jobs
from schedlab.formats.batsim.workload import write_workload
from schedlab.losses import Losses
from schedlab.model import Header, Job, Workload

HEADER = (
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
    "requested_time,success,final_state,starting_time,execution_time,finish_time,"
    "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata\n"
)
ROWS = (
    "1,w0,p1,0,1,100,1,COMPLETED_SUCCESSFULLY,5,10,15,5,15,1.5,0,-1,\n"
    "2,w1,p2,1,1,100,1,COMPLETED_SUCCESSFULLY,5,10,15,4,14,1.4,1,-1,\n"
)


def _fields(losses: Losses) -> set[str]:
    return {loss.field for loss in losses}


def test_jobs_file_to_workload_keeps_workload_and_profile_names(tmp_path: Path) -> None:
    src = tmp_path / "wl_jobs.csv"
    src.write_text(HEADER + ROWS)
    w = schedlab.read(src, format="batsim-jobs")
    out = tmp_path / "wl.json"
    losses = write_workload(w, out)
    doc = json.loads(out.read_text())
    assert [j["id"] for j in doc["jobs"]] == ["w0!1", "w1!2"]
    assert [j["profile"] for j in doc["jobs"]] == ["p1", "p2"]
    assert doc["profiles"]["p1"]["delay"] == 10
    assert "extras.batsim.workload" not in _fields(losses)
    assert "extras.batsim.profile" not in _fields(losses)
    back = schedlab.read(out)
    assert [j.job_number for j in back] == [1, 2]
    assert [j.extras["batsim.workload"] for j in back] == ["w0", "w1"]
    assert [j.extras["batsim.profile"] for j in back] == ["p1", "p2"]
    assert [j.run_time for j in back] == [10, 10]
    # and on to a jobs file again: the names are the source's
    again = tmp_path / "back_jobs.csv"
    write_jobs(back, again)
    final = schedlab.read(again, format="batsim-jobs")
    assert [j.job_number for j in final] == [1, 2]
    assert [j.extras["batsim.workload"] for j in final] == ["w0", "w1"]
    assert [j.extras["batsim.profile"] for j in final] == ["p1", "p2"]


def test_same_id_in_two_workloads_is_no_duplicate(tmp_path: Path) -> None:
    src = tmp_path / "two_jobs.csv"
    src.write_text(
        HEADER
        + "1,w0,p,0,1,100,1,COMPLETED_SUCCESSFULLY,5,10,15,5,15,1.5,0,-1,\n"
        + "1,w1,p,1,1,100,1,COMPLETED_SUCCESSFULLY,5,10,15,4,14,1.4,1,-1,\n"
    )
    w = schedlab.read(src, format="batsim-jobs")
    out = tmp_path / "two.json"
    write_workload(w, out)
    doc = json.loads(out.read_text())
    assert [j["id"] for j in doc["jobs"]] == ["w0!1", "w1!1"]
    back = schedlab.read(out)
    assert [j.job_number for j in back] == [j.job_number for j in w]


def test_profile_name_shared_by_two_run_times_is_reported(tmp_path: Path) -> None:
    jobs = [
        Job(
            job_number=n,
            submit_time=0,
            run_time=run,
            requested_processors=1,
            extras={"batsim.profile": "p"},
        )
        for n, run in ((1, 10), (2, 20))
    ]
    out = tmp_path / "p.json"
    losses = write_workload(Workload.from_jobs(jobs, Header()), out)
    doc = json.loads(out.read_text())
    assert [j["profile"] for j in doc["jobs"]] == ["p", "p~2"]
    assert [(loss.field, loss.records) for loss in losses if "profile" in loss.field] == [
        ("extras.batsim.profile", 1)
    ]


def test_id_of_another_workload_reports_the_workload_name(tmp_path: Path) -> None:
    job = Job(
        job_number=1,
        submit_time=0,
        run_time=10,
        requested_processors=1,
        extras={"batsim.id": "a!1", "batsim.workload": "b"},
    )
    out = tmp_path / "a.json"
    losses = write_workload(Workload.from_jobs([job], Header()), out)
    assert json.loads(out.read_text())["jobs"][0]["id"] == "a!1"
    assert "extras.batsim.workload" in _fields(losses)
