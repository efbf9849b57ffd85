"""Batsim formats against Batsim's own documentation and source (audit batsim3):
interval sets that overlap, delays and walltimes Batsim refuses, jobs killed at
their walltime, a profile's ``ret``, ``generation_strategy`` when respelling,
the storage profile types of both spellings, and ids beyond 32 bits."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import schedlab
from schedlab.formats.batsim.jobs import write_jobs
from schedlab.formats.batsim.workload import write_workload
from schedlab.losses import Losses
from schedlab.model import Header, Job, Workload
from schedlab.testing import run_cli as run

HEADER = (
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
    "requested_time,success,final_state,starting_time,execution_time,finish_time,"
    "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata\n"
)


def _lines(losses: Losses) -> list[str]:
    return [str(loss) for loss in losses]


def _doc(tmp_path: Path, doc: dict[str, Any], name: str = "w.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def _write(tmp_path: Path, jobs: list[Job], **options: Any) -> tuple[dict[str, Any], Losses]:
    out = tmp_path / "out.json"
    losses = write_workload(Workload.from_jobs(jobs, Header()), out, **options)
    return json.loads(out.read_text()), losses


# ------------------------------------------------- 1. interval sets: their union


def test_overlapping_interval_sets_count_their_union(tmp_path: Path) -> None:
    path = tmp_path / "nc_jobs.csv"
    rows = [
        "w0!1,w0,p,0,5,-1,1,COMPLETED_SUCCESSFULLY,0,10,10,0,10,1,1-2 1-3 5 7,-1,",
        "w0!2,w0,p,0,5,-1,1,COMPLETED_SUCCESSFULLY,20,10,30,20,30,3,5 2-2 7 1-3,-1,",
        "w0!3,w0,p,0,2,-1,1,COMPLETED_SUCCESSFULLY,40,10,50,40,50,5,3-3 3,-1,",
        "w0!4,w0,p,0,4,-1,1,COMPLETED_SUCCESSFULLY,60,10,70,60,70,7,0-3 0-3,-1,",
    ]
    path.write_text(HEADER + "\n".join(rows) + "\n")
    w = schedlab.read(path, format="batsim-jobs")
    assert [j.allocated_processors for j in w] == [5, 5, 1, 4]
    # the kept set is written back: its size (the union) equals the count
    out = tmp_path / "back_jobs.csv"
    write_jobs(w, out)
    written = [r["allocated_resources"] for r in csv.DictReader(out.open())]
    assert written == ["1-2 1-3 5 7", "5 2-2 7 1-3", "3-3 3", "0-3 0-3"]


# ----------------------------------- 2. delays and walltimes Batsim refuses


def test_zero_run_time_is_never_written_as_delay_zero(tmp_path: Path) -> None:
    jobs = [
        Job(job_number=1, submit_time=0, run_time=0, requested_processors=1, requested_time=60),
        Job(job_number=2, submit_time=5, run_time=None, requested_processors=1),
        Job(job_number=3, submit_time=6, run_time=-1, requested_processors=1),
        Job(job_number=4, submit_time=7, run_time=30, requested_processors=1),
    ]
    doc, losses = _write(tmp_path, jobs)
    delays = [doc["profiles"][j["profile"]]["delay"] for j in doc["jobs"]]
    assert all(d > 0 for d in delays), delays
    assert delays == [0.001, 0.001, 0.001, 30]
    lines = _lines(losses)
    assert (
        "run_time: 1 record, 0, written as a delay of 0.001 s (Batsim requires delay > 0)"
    ) in lines
    assert (
        "run_time: 1 record, unknown, written as a delay of 0.001 s (Batsim requires delay > 0)"
    ) in lines
    assert (
        "run_time: 1 record, negative, written as a delay of 0.001 s (Batsim requires delay > 0)"
    ) in lines


def test_zero_walltime_is_written_as_no_walltime_and_reported(tmp_path: Path) -> None:
    jobs = [
        Job(job_number=1, submit_time=0, run_time=30, requested_processors=1, requested_time=0),
        Job(job_number=2, submit_time=0, run_time=30, requested_processors=1, requested_time=60),
    ]
    doc, losses = _write(tmp_path, jobs)
    assert [j.get("walltime") for j in doc["jobs"]] == [-1, 60]
    assert (
        "requested_time: 1 record, 0, written as no walltime (-1; Batsim requires "
        "walltime > 0 or -1)"
    ) in _lines(losses)


def test_delay_zero_and_walltime_zero_are_read_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = _doc(
        tmp_path,
        {
            "nb_res": 2,
            "jobs": [
                {"id": 1, "subtime": 0, "walltime": 0, "res": 1, "profile": "d0"},
                {"id": 2, "subtime": 0, "walltime": 10, "res": 1, "profile": "d0"},
                {"id": 3, "subtime": 0, "walltime": 0, "res": 1, "profile": "d5"},
            ],
            "profiles": {"d0": {"type": "delay", "delay": 0}, "d5": {"type": "delay", "delay": 5}},
        },
    )
    w = schedlab.read(path, format="batsim")
    assert [j.run_time for j in w] == [0, 0, 5]
    assert [j.requested_time for j in w] == [0, 10, 0]
    messages = [f.message for f in w.meta["findings"]]
    assert any(
        "1 profile(s) have a delay of 0, the first profiles.d0" in m and "Batsim refuses" in m
        for m in messages
    ), messages
    assert any(
        "2 job(s) have a walltime of 0, the first jobs[0] (id 1)" in m and "Batsim refuses" in m
        for m in messages
    ), messages
    code, out, err = run(capsys, "validate", "--strict", str(path))
    assert code != 0, out + err


# -------------------------------------- 3. killed at the walltime: WALLTIME_REACHED


def test_simulated_kill_is_completed_walltime_reached(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = _doc(
        tmp_path,
        {
            "nb_res": 2,
            "jobs": [
                {"id": "w0!1", "subtime": 0, "walltime": 5, "res": 1, "profile": "d10"},
                {"id": "w0!2", "subtime": 0, "walltime": 20, "res": 1, "profile": "d10"},
            ],
            "profiles": {"d10": {"type": "delay", "delay": 10}},
        },
    )
    out = tmp_path / "kill_jobs.csv"
    code, _, err = run(capsys, "simulate", str(path), "-b", "none", "--no-timings", "-o", str(out))
    assert code == 0, err
    rows = list(csv.DictReader(out.open()))
    assert [(r["success"], r["final_state"]) for r in rows] == [
        ("0", "COMPLETED_WALLTIME_REACHED"),
        ("1", "COMPLETED_SUCCESSFULLY"),
    ]
    back = schedlab.read(out, format="batsim-jobs")
    assert [j.status for j in back] == [0, 1]


def test_failed_job_within_its_walltime_stays_completed_failed(tmp_path: Path) -> None:
    jobs = [
        Job(job_number=1, submit_time=0, wait_time=0, run_time=5, requested_time=10, status=0),
        Job(job_number=2, submit_time=0, wait_time=0, run_time=10, requested_time=10, status=0),
        Job(job_number=3, submit_time=0, wait_time=0, run_time=12, requested_time=10, status=1),
    ]
    for job in jobs:
        job.requested_processors = 1
    out = tmp_path / "x_jobs.csv"
    write_jobs(Workload.from_jobs(jobs, Header()), out)
    states = [r["final_state"] for r in csv.DictReader(out.open())]
    assert states == ["COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED", "COMPLETED_SUCCESSFULLY"]


# ------------------------------------------------------------- 4. a profile's ret


def test_ret_gives_the_status_and_is_written_back(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    doc = {
        "nb_res": 2,
        "jobs": [
            {"id": 1, "subtime": 0, "walltime": 100, "res": 1, "profile": "fails"},
            {"id": 2, "subtime": 0, "walltime": 100, "res": 1, "profile": "ok"},
            {"id": 3, "subtime": 0, "walltime": 100, "res": 1, "profile": "zero"},
        ],
        "profiles": {
            "fails": {"type": "delay", "delay": 10, "ret": 1},
            "ok": {"type": "delay", "delay": 10},
            "zero": {"type": "delay", "delay": 10, "ret": 0},
        },
    }
    path = _doc(tmp_path, doc)
    w = schedlab.read(path, format="batsim")
    assert [j.status for j in w] == [0, 1, 1]
    # batsim -> batsim: the same document
    out = tmp_path / "copy.json"
    losses = write_workload(w, out)
    assert json.loads(out.read_text()) == {
        **doc,
        "profiles": {
            "fails": {"type": "DelayProfile", "delay": 10, "ret": 1},
            "ok": {"type": "DelayProfile", "delay": 10},
            "zero": {"type": "DelayProfile", "delay": 10, "ret": 0},
        },
    }
    assert "status" not in losses
    # simulated: Batsim's success and final state
    sched = tmp_path / "ret_jobs.csv"
    code, _, err = run(
        capsys, "simulate", str(path), "-b", "none", "--no-timings", "-o", str(sched)
    )
    assert code == 0, err
    rows = list(csv.DictReader(sched.open()))
    assert [(r["success"], r["final_state"]) for r in rows] == [
        ("0", "COMPLETED_FAILED"),
        ("1", "COMPLETED_SUCCESSFULLY"),
        ("1", "COMPLETED_SUCCESSFULLY"),
    ]


def test_status_is_written_as_ret(tmp_path: Path) -> None:
    jobs = [
        Job(job_number=1, submit_time=0, run_time=10, requested_processors=1, status=1),
        Job(job_number=2, submit_time=0, run_time=10, requested_processors=1, status=0),
        Job(job_number=3, submit_time=0, run_time=10, requested_processors=1, status=5),
        Job(job_number=4, submit_time=0, run_time=10, requested_processors=1),
    ]
    doc, losses = _write(tmp_path, jobs)
    rets = [doc["profiles"][j["profile"]].get("ret") for j in doc["jobs"]]
    assert rets == [None, 1, None, None]
    lines = _lines(losses)
    assert any(line.startswith("status: 1 record, 5 (") for line in lines), lines
    assert any(line.startswith("status: 1 record, unknown, written as success") for line in lines)
    back = schedlab.read(tmp_path / "out.json", format="batsim")
    assert [j.status for j in back] == [1, 0, 1, 1]


def test_changed_status_respells_the_kept_profile(tmp_path: Path) -> None:
    path = _doc(
        tmp_path,
        {
            "nb_res": 1,
            "jobs": [
                {"id": 1, "subtime": 0, "res": 1, "profile": "p"},
                {"id": 2, "subtime": 0, "res": 1, "profile": "p"},
            ],
            "profiles": {"p": {"type": "delay", "delay": 10, "ret": 2}},
        },
    )
    w = schedlab.read(path, format="batsim")
    w.jobs[0].status = 1
    out = tmp_path / "out.json"
    write_workload(w, out)
    doc = json.loads(out.read_text())
    profiles = doc["profiles"]
    used = [profiles[j["profile"]] for j in doc["jobs"]]
    assert [u.get("ret") for u in used] == [None, 2]
    assert all(u["delay"] == 10 for u in used)
    assert [j.status for j in schedlab.read(out, format="batsim")] == [1, 0]


# ------------------------------------------------------ 5. generation_strategy


def _gs_workload(tmp_path: Path) -> Path:
    return _doc(
        tmp_path,
        {
            "nb_res": 4,
            "jobs": [
                {"id": i, "subtime": 0, "res": 2, "profile": p}
                for i, p in enumerate("abcd", start=1)
            ],
            "profiles": {
                "a": {
                    "type": "ParallelTaskHomogeneousProfile",
                    "cpu": 1e6,
                    "com": 0,
                    "generation_strategy": "Bogus",
                },
                "b": {
                    "type": "ParallelTaskHomogeneousProfile",
                    "cpu": 1e6,
                    "com": 0,
                    "generation_strategy": 7,
                },
                "c": {
                    "type": "parallel_homogeneous_total",
                    "cpu": 1e6,
                    "com": 0,
                    "generation_strategy": "DefinedAmountsUsedForEachValue",
                },
                "d": {
                    "type": "parallel_homogeneous",
                    "cpu": 1e6,
                    "com": 0,
                    "generation_strategy": "DefinedAmountsSpreadUniformly",
                },
            },
        },
        "gs.json",
    )


def test_unknown_generation_strategy_is_kept_and_reported(tmp_path: Path) -> None:
    w = schedlab.read(_gs_workload(tmp_path), format="batsim")
    out = tmp_path / "gs4.json"
    losses = write_workload(w, out, profile_types="batsim4")
    profiles = json.loads(out.read_text())["profiles"]
    assert profiles["a"] == {
        "type": "ParallelTaskHomogeneousProfile",
        "cpu": 1e6,
        "com": 0,
        "generation_strategy": "Bogus",
    }
    assert profiles["b"]["generation_strategy"] == 7
    assert profiles["b"]["type"] == "ParallelTaskHomogeneousProfile"
    lines = _lines(losses)
    assert any(
        line.startswith("extras.batsim.profile_def: 2 records, profile type kept in Batsim 5's")
        for line in lines
    ), lines


def test_contradictory_generation_strategy_is_reported(tmp_path: Path) -> None:
    w = schedlab.read(_gs_workload(tmp_path), format="batsim")
    out = tmp_path / "gs5.json"
    losses = write_workload(w, out)
    profiles = json.loads(out.read_text())["profiles"]
    assert profiles["c"]["generation_strategy"] == "DefinedAmountsSpreadUniformly"
    assert profiles["d"]["generation_strategy"] == "DefinedAmountsUsedForEachValue"
    assert profiles["d"]["type"] == "ParallelTaskHomogeneousProfile"
    lines = _lines(losses)
    assert any(
        line.startswith("extras.batsim.profile_def: 2 records, generation_strategy replaced")
        for line in lines
    ), lines


# --------------------------------------------------- 6. storage types respelled


def test_storage_profile_types_are_respelled_both_ways(tmp_path: Path) -> None:
    doc = {
        "nb_res": 4,
        "jobs": [
            {"id": 1, "subtime": 0, "res": 2, "profile": "pfs"},
            {"id": 2, "subtime": 0, "res": 2, "profile": "stage"},
            {"id": 3, "subtime": 0, "res": 2, "profile": "spread"},
        ],
        "profiles": {
            "pfs": {
                "type": "ParallelTaskOnStorageHomogeneousProfile",
                "bytes_to_read": 1e6,
                "bytes_to_write": 0,
                "storage": "nfs",
            },
            "stage": {
                "type": "ParallelTaskDataStagingBetweenStoragesProfile",
                "nb_bytes": 1e5,
                "from": "pfs",
                "to": "nfs",
            },
            "spread": {
                "type": "ParallelTaskOnStorageHomogeneousProfile",
                "bytes_to_read": 1e6,
                "bytes_to_write": 0,
                "generation_strategy": "DefinedAmountsSpreadUniformly",
            },
        },
    }
    w = schedlab.read(_doc(tmp_path, doc), format="batsim")
    out4 = tmp_path / "w4.json"
    losses = write_workload(w, out4, profile_types="batsim4")
    p4 = json.loads(out4.read_text())["profiles"]
    assert p4["pfs"]["type"] == "parallel_homogeneous_pfs"
    assert p4["stage"] == {"type": "data_staging", "nb_bytes": 1e5, "from": "pfs", "to": "nfs"}
    # no Batsim 4 type spreads a storage transfer: kept, and said
    assert p4["spread"] == doc["profiles"]["spread"]
    assert any("profile type kept in Batsim 5's" in line for line in _lines(losses))
    back = schedlab.read(out4, format="batsim")
    out5 = tmp_path / "w5.json"
    write_workload(back, out5)
    assert json.loads(out5.read_text())["profiles"] == doc["profiles"]


# ------------------------------------------------------- 7. ids beyond 32 bits


def test_ids_beyond_32_bits_are_written_as_strings(tmp_path: Path) -> None:
    jobs = [
        Job(job_number=n, submit_time=0, run_time=30, requested_processors=1)
        for n in (1, 2**31 - 1, 2**31, 3_000_000_000)
    ]
    doc, _ = _write(tmp_path, jobs)
    assert [j["id"] for j in doc["jobs"]] == [1, 2**31 - 1, "2147483648", "3000000000"]
    back = schedlab.read(tmp_path / "out.json", format="batsim")
    assert [j.job_number for j in back] == [1, 2**31 - 1, 2**31, 3_000_000_000]
    assert not back.meta["findings"]
