"""Batsim's formats: JSON workloads (``batsim``) and the jobs output file
(``batsim-jobs``). Round trips on real traces, both profile spellings, unknown
profile types kept, both jobs.csv layouts, malformed input as one-line errors."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.cli import main
from schedlab.errors import FormatError
from schedlab.formats.batsim.jobs import allocate, format_intervals, parse_intervals
from schedlab.formats.batsim.workload import profile_kind, respell
from schedlab.losses import collect_losses
from schedlab.model import Header, Job, Workload

# A workload in Batsim 4's spelling: every kind of profile, an unknown type with
# its own fields, a sequence of delays (run time fixed: 2 x (10 + 5)), string ids
# with a workload prefix, a job without walltime, a user field, a profile no job uses.
BATSIM4 = {
    "nb_res": 8,
    "description": "hand-made, every profile kind",
    "jobs": [
        {"id": "w0!1", "subtime": 0, "walltime": 100, "res": 4, "profile": "d10"},
        {"id": "w0!2", "subtime": 5.5, "walltime": -1, "res": 2, "profile": "par"},
        {"id": "w0!3", "subtime": 7, "res": 1, "profile": "seq", "extra_data": '{"u": 3}'},
        {"id": "w0!4", "subtime": 9, "walltime": 50, "res": 8, "profile": "hgtot"},
        {"id": "w0!5", "subtime": 11, "walltime": 60, "res": 2, "profile": "trace"},
        {"id": "w0!6", "subtime": 12, "walltime": 60, "res": 3, "profile": "hg"},
    ],
    "profiles": {
        "d10": {"type": "delay", "delay": 10},
        "d5": {"type": "delay", "delay": 5.0},
        "par": {"type": "parallel", "cpu": [1e9, 1e9], "com": [0, 1e6, 1e6, 0]},
        "seq": {"type": "composed", "repeat": 2, "seq": ["d10", "d5"]},
        "hgtot": {"type": "parallel_homogeneous_total", "cpu": 5e9, "com": 0},
        "hg": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e5},
        "trace": {"type": "smpi", "trace": "traces/a.txt", "ret": 0, "x": [1, {"y": 2}]},
        "spare": {"type": "delay", "delay": 1},
    },
}


def _write_json(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc))
    return path


def _profile(workload: Workload, job_index: int) -> dict[str, Any]:
    job = workload.jobs[job_index]
    return job.extras["batsim.profile_def"][job.extras["batsim.profile"]]


# ----------------------------------------------------------------- workload: reading


def test_reads_batsim4_spelling(tmp_path: Path) -> None:
    w = schedlab.read(_write_json(tmp_path / "w.json", BATSIM4))
    assert w.meta["reader"] == "batsim" and w.meta["batsim_spellings"] == ["batsim4"]
    assert w.header.machine_size() == 8
    numbers = [j.job_number for j in w]
    assert numbers == [1, 2, 3, 4, 5, 6]
    # run times: delay 10; parallel tasks depend on the platform (unknown); a
    # sequence of delays: 2 x (10 + 5)
    assert [j.run_time for j in w] == [10.0, None, 30.0, None, None, None]
    assert [j.requested_time for j in w] == [100.0, None, None, 50.0, 60.0, 60.0]
    assert [j.requested_processors for j in w] == [4, 2, 1, 8, 2, 3]
    assert w.jobs[1].submit_time == 5.5
    assert w.jobs[2].extras["batsim.job_fields"] == {"extra_data": '{"u": 3}'}
    assert w.jobs[0].extras["batsim.id"] == "w0!1"
    assert w.jobs[0].extras["batsim.workload"] == "w0"


def test_reads_batsim5_spelling_the_same(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(BATSIM4))
    for profile in doc["profiles"].values():
        profile.update(respell(profile, "batsim5"))
    assert doc["profiles"]["d10"]["type"] == "DelayProfile"
    assert doc["profiles"]["hgtot"] == {
        "type": "ParallelTaskHomogeneousProfile",
        "cpu": 5e9,
        "com": 0,
        "generation_strategy": "DefinedAmountsSpreadUniformly",
    }
    assert doc["profiles"]["seq"]["type"] == "SequentialCompositionProfile"
    assert doc["profiles"]["trace"]["type"] == "smpi"  # unknown: as it is
    four = schedlab.read(_write_json(tmp_path / "four.json", BATSIM4))
    five = schedlab.read(_write_json(tmp_path / "five.json", doc))
    assert five.meta["batsim_spellings"] == ["batsim5"]
    for a, b in zip(four, five, strict=True):
        assert a.swf_values() == b.swf_values()
        assert profile_kind(_profile(four, four.jobs.index(a))) == profile_kind(
            _profile(five, five.jobs.index(b))
        )


def test_batsim5_homogeneous_strategy_decides_the_kind() -> None:
    base = {"type": "ParallelTaskHomogeneousProfile", "cpu": 1, "com": 0}
    assert profile_kind(base) == "parallel_homogeneous"
    per_value = {**base, "generation_strategy": "DefinedAmountsUsedForEachValue"}
    assert profile_kind(per_value) == "parallel_homogeneous"
    assert respell(per_value, "batsim4") == {"type": "parallel_homogeneous", "cpu": 1, "com": 0}
    spread = {**base, "generation_strategy": "DefinedAmountsSpreadUniformly"}
    assert respell(spread, "batsim4")["type"] == "parallel_homogeneous_total"
    assert profile_kind({"type": "TraceReplayProfile"}) is None


# ----------------------------------------------------------------- workload: round trips


@pytest.mark.parametrize("spelling", ["batsim5", "batsim4"])
def test_workload_round_trip_is_exact(tmp_path: Path, spelling: str) -> None:
    src = schedlab.read(_write_json(tmp_path / "w.json", BATSIM4))
    with collect_losses() as losses:
        schedlab.write(src, tmp_path / "out.json", profile_types=spelling)
    if spelling == "batsim5":  # smpi has no Batsim 5 type of the same fields: said
        assert [str(loss) for loss in losses] == [
            "extras.batsim.profile_def: 1 record, profile type kept in Batsim 4's spelling "
            "(no equivalent of the same fields in the other): a file that mixes the two"
        ]
    else:
        assert not losses, losses.summary()
    out = json.loads((tmp_path / "out.json").read_text())
    back = schedlab.read(tmp_path / "out.json")
    assert [j.swf_values() for j in back] == [j.swf_values() for j in src]
    assert [j.extras for j in back] == [
        {
            **j.extras,
            "batsim.profile_def": {
                k: respell(v, spelling) for k, v in j.extras["batsim.profile_def"].items()
            },
        }
        for j in src
    ]
    # the unknown profile type, every field of it, and the profile no job uses
    assert out["profiles"]["trace"] == BATSIM4["profiles"]["trace"]
    assert out["profiles"]["spare"]["delay"] == 1
    assert out["description"] == BATSIM4["description"]
    assert [j["id"] for j in out["jobs"]] == [j["id"] for j in BATSIM4["jobs"]]
    assert out["jobs"][1]["walltime"] == -1 and "walltime" not in out["jobs"][2]
    assert out["jobs"][2]["extra_data"] == '{"u": 3}'
    types = {p["type"] for p in out["profiles"].values()}
    if spelling == "batsim5":
        assert types == {
            "DelayProfile",
            "ParallelTaskProfile",
            "SequentialCompositionProfile",
            "ParallelTaskHomogeneousProfile",
            "smpi",
        }
    else:
        assert types == {
            "delay",
            "parallel",
            "composed",
            "parallel_homogeneous_total",
            "parallel_homogeneous",
            "smpi",
        }
    # the same spelling again: byte for byte
    schedlab.write(back, tmp_path / "again.json", profile_types=spelling)
    assert (tmp_path / "again.json").read_bytes() == (tmp_path / "out.json").read_bytes()


def test_changed_run_time_becomes_a_delay(tmp_path: Path) -> None:
    src = schedlab.read(_write_json(tmp_path / "w.json", BATSIM4))
    src.jobs[0].run_time = 42.0
    src.jobs[1].run_time = 7.0  # a parallel task given a run time
    with collect_losses() as losses:
        schedlab.write(src, tmp_path / "out.json")
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["profiles"][out["jobs"][0]["profile"]] == {"type": "DelayProfile", "delay": 42}
    changed = [loss for loss in losses if loss.action.startswith("the run time changed")]
    assert [loss.records for loss in changed] == [2]
    back = schedlab.read(tmp_path / "out.json")
    assert [j.run_time for j in back][:2] == [42.0, 7.0]


def test_swf_to_batsim_to_swf_keeps_what_batsim_carries(shared_data: Path, tmp_path: Path) -> None:
    source = shared_data / "swf" / "HPC2N-2002_excerpt-3170jobs_alea.swf"
    src = schedlab.read(source)
    with collect_losses() as losses:
        schedlab.write(src, tmp_path / "w.json")
    doc = json.loads((tmp_path / "w.json").read_text())
    assert doc["nb_res"] == src.header.machine_size()
    assert len(doc["jobs"]) == len(src) == 3170
    assert all(p["type"] == "DelayProfile" for p in doc["profiles"].values())
    schedlab.write(schedlab.read(tmp_path / "w.json"), tmp_path / "back.swf")
    back = schedlab.read(tmp_path / "back.swf")
    carried = ("job_number", "submit_time", "run_time", "requested_processors", "requested_time")
    for a, b in zip(src, back, strict=True):
        for field in carried:
            if field == "requested_processors" and a.requested_processors is None:
                assert b.requested_processors == a.allocated_processors
            elif field == "run_time" and (a.run_time is None or a.run_time <= 0):
                assert b.run_time == 0.001  # Batsim requires delay > 0 (reported)
            else:
                assert getattr(b, field) == getattr(a, field), (a.job_number, field)
    # the report names every field Batsim has no place for, with its count
    for field in ("wait_time", "allocated_processors", "user_id", "group_id"):
        known = sum(getattr(j, field) is not None for j in src)
        assert losses.count(field) == known > 0, field
    # success and failure are carried (a profile's ret); other statuses reported
    assert [b.status for a, b in zip(src, back, strict=True) if a.status in (0, 1)] == [
        a.status for a in src if a.status in (0, 1)
    ]
    assert losses.count("status") == sum(j.status not in (0, 1) for j in src)
    unknown_requested = sum(j.requested_processors is None for j in src)
    assert losses.count("requested_processors") == unknown_requested
    assert "header.MaxProcs" not in losses and losses.count("header.Version") == 1


# ----------------------------------------------------------------- workload: errors


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d["jobs"][2].pop("res"), "w.json: jobs[2] (id 'w0!3'): field res: missing"),
        (
            lambda d: d["jobs"][1].update(subtime="soon"),
            "w.json: jobs[1] (id 'w0!2'): field subtime: expected a number, got 'soon'",
        ),
        (
            lambda d: d["jobs"][0].update(res=2.5),
            "w.json: jobs[0] (id 'w0!1'): field res: expected an integer, got 2.5",
        ),
        (
            lambda d: d["jobs"][0].update(id=[1]),
            "w.json: jobs[0]: field id: expected a string or an integer, got [1]",
        ),
        (
            lambda d: d["jobs"][3].update(profile="nope"),
            "w.json: jobs[3] (id 'w0!4'): field profile: profile 'nope' is not defined",
        ),
        (
            lambda d: d["profiles"]["d10"].pop("delay"),
            "w.json: profiles.d10: field delay: expected a number, got None",
        ),
        (
            lambda d: d["profiles"]["seq"].update(seq=["d10", "gone"]),
            "w.json: profiles.seq: field seq: profile 'gone' is not defined",
        ),
        (lambda d: d.pop("jobs"), "w.json: field jobs: missing"),
        (
            lambda d: d["jobs"][0].update(walltime=-5),
            "w.json: jobs[0] (id 'w0!1'): field walltime: expected a number >= 0 (or -1: none)",
        ),
    ],
)
def test_malformed_workloads_are_one_line_errors(
    tmp_path: Path, mutate: Any, expected: str
) -> None:
    doc = json.loads(json.dumps(BATSIM4))
    mutate(doc)
    path = _write_json(tmp_path / "w.json", doc)
    with pytest.raises(FormatError) as info:
        schedlab.read(path, format="batsim")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(str(tmp_path))
    assert expected in message, message


def test_bad_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text('{\n "nb_res": 4,\n "jobs": [\n  {"id": 1,}\n ]\n}\n')
    with pytest.raises(FormatError) as info:
        schedlab.read(path, format="batsim")
    assert info.value.line == 4 and str(info.value).startswith(f"{path}:4: not JSON")


def test_lenient_skips_and_counts_bad_jobs(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(BATSIM4))
    doc["jobs"][1]["res"] = 0
    doc["jobs"][4].pop("subtime")
    w = schedlab.read(_write_json(tmp_path / "w.json", doc), lenient=True)
    assert len(w) == 4 and w.meta["skipped"] == 2
    assert [i for i, _ in w.meta["rejects"]] == [1, 4]
    assert "field res" in w.meta["reject_reasons"][0]


def test_cli_convert_bad_workload_exits_2_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    doc = json.loads(json.dumps(BATSIM4))
    doc["jobs"][2]["res"] = "many"
    path = _write_json(tmp_path / "w.json", doc)
    with pytest.raises(SystemExit) as info:
        main(["convert", str(path), str(tmp_path / "o.swf")])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"schedlab: error: {path}: jobs[2] (id 'w0!3'): field res: expected a number, got 'many'"
    ]
    assert not (tmp_path / "o.swf").exists()


def test_cli_convert_writes_the_chosen_spelling(
    tmp_path: Path, swf_dir: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "w.json"
    main_args = [
        "convert",
        str(swf_dir / "lublin_256.swf"),
        str(out),
        "-w",
        "profile_types=batsim4",
    ]
    try:
        main(main_args)
    except SystemExit as exc:  # pragma: no cover - success returns normally
        assert exc.code in (0, None)
    err = capsys.readouterr().err
    assert "what w.json could not carry" in err and "allocated_processors" in err
    doc = json.loads(out.read_text())
    assert {p["type"] for p in doc["profiles"].values()} == {"delay"}
    assert doc["nb_res"] == 256


# ----------------------------------------------------------------- jobs.csv

CURRENT = (
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
    "requested_time,success,final_state,starting_time,execution_time,finish_time,"
    "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata\n"
    "1,w0,d10,0.000000,4,100.000000,1,COMPLETED_SUCCESSFULLY,0.000000,10.000000,"
    "10.000000,0.000000,10.000000,1.000000,0-3,-1.000000,\n"
    "2,w0,par,5.500000,2,-1.000000,0,COMPLETED_WALLTIME_REACHED,10.000000,20.000000,"
    '30.000000,4.500000,24.500000,1.225000,2 5,-1.000000,"{""k"": 1}"\n'
    "3,w0,seq,7.000000,1,60.000000,0,COMPLETED_KILLED,10.000000,3.000000,13.000000,"
    "3.000000,6.000000,2.000000,4,-1.000000,\n"
    "4,w0,hg,9.000000,8,50.000000,0,REJECTED,,,,,,,,,\n"
    "5,w0,d10,9.500000,1,50.000000,0,COMPLETED_FAILED,30.000000,1.000000,31.000000,"
    "20.500000,21.500000,21.500000,7,-1.000000,\n"
)
# Batsim 1.x: jobID and *_processors, no profile, no final state.
OLDER = (
    "jobID,workload_name,submission_time,requested_number_of_processors,requested_time,"
    "success,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,"
    "consumed_energy,allocated_processors\n"
    "0,87cf57,0.000000,1,149.000000,1,0.000000,88.510000,88.510000,0.000000,88.510000,"
    "1.000000,8408.450000,0\n"
    "1,87cf57,4.709164,2,399.000000,1,4.709164,265.800000,270.509164,0.000000,265.800000,"
    "1.000000,50502.000000,1-2\n"
    "2,87cf57,16.003927,1,420.000000,0,16.003927,279.990000,295.993927,0.000000,279.990000,"
    "1.000000,26599.050000,3\n"
)
# Batsim 2.x: job_id with hacky_job_id, still *_processors.
V2 = (
    "job_id,hacky_job_id,workload_name,submission_time,requested_number_of_processors,"
    "requested_time,success,starting_time,execution_time,finish_time,waiting_time,"
    "turnaround_time,stretch,consumed_energy,allocated_processors\n"
    "6,60,87cf57,95.448861,4,77.000000,1,95.448861,16.684000,112.132861,0.000000,"
    "16.684000,1.000000,6339.920000,0 4-6\n"
)


def test_reads_the_current_layout(tmp_path: Path) -> None:
    path = tmp_path / "out_jobs.csv"
    path.write_text(CURRENT)
    w = schedlab.read(path)
    assert w.meta["reader"] == "batsim-jobs" and w.meta["batsim_layout"] == "current"
    assert w.header.machine_size() == 8  # highest resource id + 1
    by = {j.job_number: j for j in w}
    assert [by[n].status for n in (1, 2, 3, 4, 5)] == [1, 0, 5, 5, 0]
    two = by[2]
    assert (two.submit_time, two.wait_time, two.run_time) == (5.5, 4.5, 20.0)
    assert two.requested_time is None  # -1: no walltime
    assert two.allocated_processors == 2 and two.requested_processors == 2
    assert two.extras["batsim.metadata"] == '{"k": 1}'
    assert two.extras["batsim.final_state"] == "COMPLETED_WALLTIME_REACHED"
    rejected = by[4]
    assert (rejected.wait_time, rejected.run_time, rejected.allocated_processors) == (
        None,
        None,
        None,
    )


@pytest.mark.parametrize("text", [OLDER, V2])
def test_reads_the_older_layouts(tmp_path: Path, text: str) -> None:
    path = tmp_path / "out_jobs.csv"
    path.write_text(text)
    w = schedlab.read(path)
    assert w.meta["batsim_layout"] == "older"
    first = w.jobs[0]
    assert first.allocated_processors == (1 if text is OLDER else 4)
    assert first.extras["batsim.workload"] == "87cf57"
    assert first.extras["batsim.consumed_energy"] > 0
    if text is OLDER:
        assert [j.status for j in w] == [1, 1, 0]
        assert w.jobs[1].wait_time == 0 and w.jobs[1].run_time == 265.8
        assert w.jobs[1].requested_processors == 2 and w.jobs[1].allocated_processors == 2
    else:
        assert first.extras["batsim.csv"] == {"hacky_job_id": "60"}


@pytest.mark.parametrize("text", [CURRENT, OLDER, V2])
def test_jobs_round_trip_writes_the_current_layout(tmp_path: Path, text: str) -> None:
    path = tmp_path / "in_jobs.csv"
    path.write_text(text)
    src = schedlab.read(path)
    with collect_losses() as losses:
        schedlab.write(src, tmp_path / "out_jobs.csv")
    assert not losses, losses.summary()
    rows = list(csv.DictReader((tmp_path / "out_jobs.csv").open()))
    header = (tmp_path / "out_jobs.csv").read_text().splitlines()[0].split(",")
    assert header[:17] == [
        "job_id",
        "workload_name",
        "profile",
        "submission_time",
        "requested_number_of_resources",
        "requested_time",
        "success",
        "final_state",
        "starting_time",
        "execution_time",
        "finish_time",
        "waiting_time",
        "turnaround_time",
        "stretch",
        "allocated_resources",
        "consumed_energy",
        "metadata",
    ]
    back = schedlab.read(tmp_path / "out_jobs.csv")
    assert len(back) == len(src)
    for a, b in zip(src, back, strict=True):
        assert b.swf_values() == pytest.approx(a.swf_values(), nan_ok=True)
        # an older file has no final state: the one written is derived from success
        added = {"batsim.final_state"} if text is not CURRENT else set()
        assert set(b.extras) - set(a.extras) == added
        assert {k: v for k, v in b.extras.items() if k not in added} == a.extras
    # what evalys derives: finish = start + execution, stretch = turnaround / execution
    for row in rows:
        if row["starting_time"]:
            start, run = float(row["starting_time"]), float(row["execution_time"])
            assert float(row["finish_time"]) == pytest.approx(start + run)
            assert float(row["waiting_time"]) == pytest.approx(
                start - float(row["submission_time"])
            )


def test_malformed_jobs_files_are_one_line_errors(tmp_path: Path) -> None:
    path = tmp_path / "out_jobs.csv"
    lines = CURRENT.splitlines()
    cases = {
        3: (
            lines[3].replace("7.000000", "x", 1),
            "out_jobs.csv:4: field submission_time: expected a number, got 'x'",
        ),
        2: (lines[2].replace("2 5", "5-2"), "out_jobs.csv:3: field allocated_resources: "),
        1: (
            lines[1].replace("COMPLETED_SUCCESSFULLY", "DONE"),
            "out_jobs.csv:2: field final_state: unknown final state 'DONE'",
        ),
        5: (lines[5][:40], "out_jobs.csv:6: expected 17 columns, found"),
    }
    for index, (bad, expected) in cases.items():
        text = "\n".join([*lines[:index], bad, *lines[index + 1 :]]) + "\n"
        path.write_text(text)
        with pytest.raises(FormatError) as info:
            schedlab.read(path)
        assert "\n" not in str(info.value) and expected in str(info.value), str(info.value)
        lenient = schedlab.read(path, lenient=True)
        assert lenient.meta["skipped"] == 1 and len(lenient) == 4
        assert lenient.meta["rejects"][0][0] == index + 1
    path.write_text("id,when\n1,2\n")
    with pytest.raises(FormatError, match="missing column 'job_id'"):
        schedlab.read(path, format="batsim-jobs")


def test_cli_convert_bad_jobs_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "out_jobs.csv"
    path.write_text(CURRENT.replace("9.500000", "-", 1))
    with pytest.raises(SystemExit) as info:
        main(["convert", str(path), str(tmp_path / "o.swf")])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"schedlab: error: {path}:6: field submission_time: expected a number, got '-'"]


def test_swf_schedule_to_jobs_csv_has_no_overlaps(shared_data: Path, tmp_path: Path) -> None:
    src = schedlab.read(shared_data / "swf" / "HPC2N-2002_excerpt-3170jobs_alea.swf")
    schedlab.write(src, tmp_path / "out_jobs.csv")
    rows = list(csv.DictReader((tmp_path / "out_jobs.csv").open()))
    assert len(rows) == len(src)
    # every job that ran has as many resources as processors; no resource is used
    # by two jobs at once (the trace fits its 240 processors)
    busy: list[tuple[float, float, set[int]]] = []
    for row, job in zip(rows, src, strict=True):
        ids = {i for a, b in parse_intervals(row["allocated_resources"]) for i in range(a, b + 1)}
        assert len(ids) == (job.allocated_processors or 0)
        assert all(0 <= i < 240 for i in ids)
        if ids and row["finish_time"]:
            busy.append((float(row["starting_time"]), float(row["finish_time"]), ids))
    busy.sort(key=lambda x: x[0])
    for i, (_start, end, ids) in enumerate(busy):
        for other_start, _, other in busy[i + 1 :]:
            if other_start >= end:
                break
            assert not ids & other
    back = schedlab.read(tmp_path / "out_jobs.csv")
    for a, b in zip(src, back, strict=True):
        for field in ("submit_time", "wait_time", "run_time", "allocated_processors", "status"):
            assert getattr(b, field) == getattr(a, field), field


def test_intervals() -> None:
    assert parse_intervals("0-3 7 10-12") == [(0, 3), (7, 7), (10, 12)]
    assert format_intervals([12, 0, 1, 2, 3, 7, 10, 11]) == "0-3 7 10-12"
    assert format_intervals([]) == ""
    for bad in ("a", "3-1", "1,2", "-1"):
        with pytest.raises(ValueError):
            parse_intervals(bad)


def _reference_allocate(jobs: list[Job]) -> list[set[int] | None]:
    """Plain reference: one id at a time from a heap of free ids."""
    import heapq

    events = []
    for i, job in enumerate(jobs):
        count = job.allocated_processors or 0
        if job.start_time is None or count <= 0:
            continue
        events.append((job.start_time, 1, i))
        if job.end_time is not None and job.end_time > job.start_time:
            events.append((job.end_time, 0, i))
    events.sort()
    free: list[int] = []
    top = 0
    out: list[set[int] | None] = [None] * len(jobs)
    for _, kind, i in events:
        if kind == 0:
            for rid in out[i] or ():
                heapq.heappush(free, rid)
            continue
        got = set()
        for _ in range(jobs[i].allocated_processors or 0):
            if free:
                got.add(heapq.heappop(free))
            else:
                got.add(top)
                top += 1
        out[i] = got
        end = jobs[i].end_time
        if end is None or end <= (jobs[i].start_time or 0):
            for rid in got:
                heapq.heappush(free, rid)
    return out


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 40),
            st.one_of(st.none(), st.integers(-2, 15)),
            st.integers(1, 9),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_allocation_equals_the_plain_reference(spec: list[tuple[int, Any, int]]) -> None:
    jobs = [
        Job(
            job_number=i,
            submit_time=float(s),
            wait_time=0.0,
            run_time=None if r is None else float(r),
            allocated_processors=n,
        )
        for i, (s, r, n) in enumerate(spec)
    ]
    fast = [
        None if got is None else {r for low, high in got for r in range(low, high + 1)}
        for got in allocate(jobs)
    ]
    assert fast == _reference_allocate(jobs)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 50), st.integers(0, 20), st.integers(1, 6)),
        min_size=1,
        max_size=30,
    )
)
def test_allocation_never_overlaps(spec: list[tuple[int, int, int]]) -> None:
    jobs = [
        Job(
            job_number=i,
            submit_time=float(s),
            wait_time=0.0,
            run_time=float(r),
            allocated_processors=n,
        )
        for i, (s, r, n) in enumerate(spec)
    ]
    ids = [
        None if got is None else [r for low, high in got for r in range(low, high + 1)]
        for got in allocate(jobs)
    ]
    for i, a in enumerate(jobs):
        assert ids[i] is not None and len(set(ids[i] or [])) == a.allocated_processors
        for j in range(i + 1, len(jobs)):
            b = jobs[j]
            overlap = max(a.submit_time or 0, b.submit_time or 0) < min(
                a.end_time or 0, b.end_time or 0
            )
            if overlap:
                assert not set(ids[i] or []) & set(ids[j] or [])


def test_unknown_values_stay_unknown_in_jobs_csv(tmp_path: Path) -> None:
    w = Workload.from_jobs(
        [
            Job(job_number=1, submit_time=0.0),
            Job(
                job_number=2,
                submit_time=3.0,
                wait_time=1.0,
                run_time=2.0,
                allocated_processors=2,
                requested_processors=2,
                status=1,
            ),
        ],
        Header(),
    )
    with collect_losses() as losses:
        schedlab.write(w, tmp_path / "out_jobs.csv")
    assert not losses
    back = schedlab.read(tmp_path / "out_jobs.csv")
    assert back.jobs[0].swf_values() == w.jobs[0].swf_values()
    assert math.isclose(back.jobs[1].run_time or 0, 2.0)


# ----------------------------------------------------------------- detection, hostile input


def test_detected_by_content_and_compressed(tmp_path: Path) -> None:
    plain = _write_json(tmp_path / "workload.txt", BATSIM4)
    assert schedlab.read(plain).meta["reader"] == "batsim"
    schedlab.write(schedlab.read(plain), tmp_path / "w.json.gz")
    assert (tmp_path / "w.json.gz").read_bytes()[:2] == b"\x1f\x8b"
    assert len(schedlab.read(tmp_path / "w.json.gz")) == 6
    jobs = tmp_path / "run.csv"
    jobs.write_text(OLDER)
    assert schedlab.read(jobs).meta["reader"] == "batsim-jobs"
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + CURRENT.encode())
    assert len(schedlab.read(bom, format="batsim-jobs")) == 5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"nb_res": 4, "jobs": [], "profiles": {"p": {"type": "delay", "delay": NaN}}}',
            "profiles.p: field delay: expected a finite number, got nan",
        ),
        (
            '{"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p", '
            '"x": [Infinity]}], "profiles": {"p": {"type": "delay", "delay": 1}}}',
            "jobs[0] (id 1): field x[0]: expected a finite number, got inf",
        ),
        ("[" * 100000 + "]" * 100000, "not JSON: nested too deeply"),
        (
            '{"nb_res": 0, "jobs": [], "profiles": {}}',
            "nb_res: field nb_res: expected a number >= 1",
        ),
        ("[1, 2]", "expected a JSON object, got list"),
        (
            '{"nb_res": 4, "jobs": [], "profiles": {}, "meta": {"a": [1, -Infinity]}}',
            "w.json: field meta.a[1]: expected a finite number, got -inf",
        ),
        ("\xff\xfe{}", "not UTF-8 text"),
    ],
)
def test_hostile_workloads(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "w.json"
    path.write_bytes(text.encode("latin-1") if text.startswith("\xff") else text.encode())
    with pytest.raises(FormatError) as info:
        schedlab.read(path, format="batsim")
    assert "\n" not in str(info.value) and expected in str(info.value), str(info.value)
