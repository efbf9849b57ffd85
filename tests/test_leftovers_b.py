"""Known leftovers (group B): Batsim ``res``/``nb_res`` beyond 32 bits, profile types
schedlab does not map, the Batsim writer's own loss lines, and SSS documents of a
workload whose time origin is before 1970."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import schedlab
from schedlab.formats.batsim.workload import write_workload
from schedlab.losses import Losses, collect_losses
from schedlab.model import Header, Job, Workload
from schedlab.testing import run_cli as run

BIG = 2**31  # one past Batsim's largest res (rapidjson IsInt: 32 bits)


def _doc(tmp_path: Path, doc: dict[str, Any], name: str = "w.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def _lines(losses: Losses) -> list[str]:
    return [str(loss) for loss in losses]


def _messages(w: Workload) -> list[str]:
    return [f.message for f in w.meta["findings"]]


# ------------------------------------------------------ 1. res beyond 2**31 - 1


def test_writer_never_writes_a_res_batsim_refuses(tmp_path: Path) -> None:
    jobs = [
        Job(job_number=1, submit_time=0.0, run_time=5.0, requested_processors=BIG),
        Job(
            job_number=2,
            submit_time=1.0,
            run_time=5.0,
            requested_processors=BIG + 5,
            allocated_processors=4,
        ),
        Job(job_number=3, submit_time=2.0, run_time=5.0, requested_processors=2**31 - 1),
    ]
    out = tmp_path / "out.json"
    losses = write_workload(Workload.from_jobs(jobs, Header()), out)
    doc = json.loads(out.read_text())
    assert [j["res"] for j in doc["jobs"]] == [1, 4, 2**31 - 1]
    assert doc["nb_res"] <= 2**31 - 1
    lines = _lines(losses)
    assert (
        "requested_processors: 1 record, above 2**31 - 1 (Batsim reads res as a 32-bit "
        "integer), written as 1 (Batsim requires res >= 1)"
    ) in lines, lines
    assert any(
        line.startswith("requested_processors: 1 record, above 2**31 - 1")
        and "written as the allocated count" in line
        for line in lines
    ), lines


def test_writer_never_writes_an_nb_res_batsim_refuses(tmp_path: Path) -> None:
    header = Header()
    header.set("MaxProcs", str(BIG))
    jobs = [Job(job_number=1, submit_time=0.0, run_time=5.0, requested_processors=3)]
    out = tmp_path / "out.json"
    losses = write_workload(Workload.from_jobs(jobs, header), out)
    assert json.loads(out.read_text())["nb_res"] == 3
    assert any(line.startswith("header.MaxProcs: 1 record, ") for line in _lines(losses))


def test_reader_warns_about_a_res_batsim_refuses(tmp_path: Path) -> None:
    path = _doc(
        tmp_path,
        {
            "nb_res": BIG,
            "jobs": [
                {"id": 1, "subtime": 0, "res": 2, "profile": "d"},
                {"id": 2, "subtime": 1, "res": BIG, "profile": "d"},
                {"id": 3, "subtime": 2, "res": BIG + 1, "profile": "d"},
            ],
            "profiles": {"d": {"type": "delay", "delay": 10}},
        },
    )
    w = schedlab.read(path)
    assert [j.requested_processors for j in w.jobs] == [2, BIG, BIG + 1]  # as written
    warnings = [f for f in w.meta["findings"] if f.check == "refused-by-batsim"]
    fields = {f.field: f.message for f in warnings}
    assert "2 job(s) have a res above 2**31 - 1, the first jobs[1] (id 2)" in fields["res"]
    assert "nb_res" in fields and "above 2**31 - 1" in fields["nb_res"]


# ------------------------------------------------------ 2. profile types not mapped

UNMAPPED = {
    "nb_res": 4,
    "jobs": [
        {"id": 1, "subtime": 0, "res": 2, "profile": "s"},
        {"id": 2, "subtime": 1, "res": 2, "profile": "pht"},
        {"id": 3, "subtime": 2, "res": 2, "profile": "c"},
        {"id": 4, "subtime": 3, "res": 2, "profile": "sq"},
        {"id": 5, "subtime": 4, "res": 2, "profile": "tr"},
        {"id": 6, "subtime": 5, "res": 2, "profile": "mix"},
        {"id": 7, "subtime": 6, "res": 2, "profile": "s"},
    ],
    "profiles": {
        "s": {"type": "smpi", "trace": "traces/x.txt"},
        "pht": {"type": "parallel_homogeneous_total", "cpu": 1e9, "com": 0},
        "c": {"type": "composed", "seq": ["d", "d"]},
        "sq": {"type": "SequentialCompositionProfile", "seq": ["d"], "repeat": 2},
        "tr": {"type": "TraceReplayProfile", "trace_type": "SMPI", "filename": "t.txt"},
        "mix": {"type": "composed", "seq": ["d", "u"]},
        "u": {"type": "usage_trace", "trace": "u.txt"},
        "d": {"type": "delay", "delay": 10},
        "spare": {"type": "sequential_composition", "seq": ["d"]},
    },
}


def test_mapped_profile_types_give_run_times(tmp_path: Path) -> None:
    w = schedlab.read(_doc(tmp_path, UNMAPPED))
    runs = {j.job_number: j.run_time for j in w.jobs}
    assert runs[3] == 20 and runs[4] == 20  # composed, SequentialCompositionProfile
    assert runs[2] is None  # a parallel task: its duration depends on the platform


def test_unmapped_profile_types_are_a_counted_warning(tmp_path: Path) -> None:
    w = schedlab.read(_doc(tmp_path, UNMAPPED))
    found = [f for f in w.meta["findings"] if f.check == "unmapped-profile"]
    assert len(found) == 1, _messages(w)
    message = found[0].message
    # smpi, TraceReplayProfile, usage_trace (inside a sequence) and the spare profile
    assert message.startswith("4 profile(s) of a type schedlab does not map"), message
    for kind in ("smpi", "TraceReplayProfile", "usage_trace", "sequential_composition"):
        assert kind in message, message
    assert "4 job(s)" in message, message  # jobs 1, 5, 6, 7
    assert found[0].severity == "warning"
    for job in w.jobs:
        if job.job_number in (1, 7):
            assert job.extras["batsim.profile_def"]["s"] == UNMAPPED["profiles"]["s"]
            assert job.run_time is None


def test_unmapped_profile_types_are_written_back_as_read(tmp_path: Path) -> None:
    w = schedlab.read(_doc(tmp_path, UNMAPPED))
    out = tmp_path / "out.json"
    write_workload(w, out, profile_types="batsim4")
    profiles = json.loads(out.read_text())["profiles"]
    for name in ("s", "u", "spare", "tr"):
        assert profiles[name] == UNMAPPED["profiles"][name]


def test_validate_lists_the_unmapped_profile_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _doc(tmp_path, UNMAPPED)
    code, out, err = run(capsys, "validate", str(path))
    assert code == 0, err
    assert "[unmapped-profile]" in out + err


# --------------------------------------------- 3. the writer's loss lines not folded


def test_profile_notes_get_loss_lines_of_their_own_in_the_summary(tmp_path: Path) -> None:
    doc = {
        "nb_res": 4,
        "jobs": [
            {"id": 1, "subtime": 0, "res": 2, "profile": "s"},
            {"id": 2, "subtime": 1, "res": 2, "profile": "d"},
            {"id": 3, "subtime": 2, "res": 2, "profile": "d"},
        ],
        "profiles": {
            "s": {"type": "smpi", "trace": "traces/x.txt"},
            "d": {"type": "delay", "delay": 10},
        },
    }
    w = schedlab.read(_doc(tmp_path, doc))
    for job in w.jobs:
        if job.job_number in (2, 3):
            job.run_time = 99.0  # the kept profile no longer fixes it
    with collect_losses() as losses:
        schedlab.write(w, tmp_path / "out.json")
    summary = losses.summary()
    assert (
        "extras.batsim.profile_def: 2 records, the run time changed: written as a delay "
        "profile instead"
    ) in summary, summary
    assert any(
        line.startswith("extras.batsim.profile_def: 1 record, profile type kept in Batsim 4's")
        for line in summary
    ), summary
    assert not any(line.startswith("extras: ") for line in summary), summary


def test_not_written_extras_still_fold() -> None:
    losses = Losses()
    losses.add("extras.a", "not written", 4)
    losses.add("extras.b", "not written", 7)
    losses.add("extras.c", "written as 0", 2)
    assert losses.summary() == [
        "extras.c: 2 records, written as 0",
        "extras: 2 source field(s) (a, b) in up to 7 records, not carried",
    ]


# ------------------------------------------------------------ 6. SSS before 1970

SWF_BEFORE_1970 = """; UnixStartTime: -86400
; MaxProcs: 8
1 0 5 100 2 -1 -1 2 200 -1 1 1 1 1 1 1 -1 -1
2 50 5 100 2 -1 -1 2 200 -1 1 1 1 1 1 1 -1 -1
"""


def test_sss_group_before_1970_is_reported_and_reads_back(tmp_path: Path) -> None:
    src = tmp_path / "neg.swf"
    src.write_text(SWF_BEFORE_1970)
    w = schedlab.read(src)
    out = tmp_path / "neg.xml"
    with collect_losses() as losses:
        schedlab.write(w, out, format="sss")
    lines = _lines(losses)
    assert any(line.startswith("header.UnixStartTime: 1 record, before 1970") for line in lines), (
        lines
    )
    back = schedlab.read(out)
    assert back.header.unix_start_time == -86400
    assert [j.swf_values() for j in back] == [j.swf_values() for j in w]


def test_sss_group_from_1970_on_has_no_such_loss(tmp_path: Path) -> None:
    src = tmp_path / "pos.swf"
    src.write_text(SWF_BEFORE_1970.replace("-86400", "86400"))
    with collect_losses() as losses:
        schedlab.write(schedlab.read(src), tmp_path / "pos.xml", format="sss")
    assert "header.UnixStartTime" not in losses, _lines(losses)
