"""Fixes of the SSS Job Object conformance audit (sss3).

1. JobDefaults merged into a job with several Requested/Delivered blocks: the job's
   own values win, every inherited block is applied.
2. A Delivered StartTime/EndTime besides the job-level one is kept and written back.
3. A schedlab-written document edited (a new name, a trailing JobDefaults, defaults
   with an unknown name) is read like any other: no users merged, defaults applied.
4. Group properties and group Extensions survive SSS -> SSS.
5. CPU time is consumptionRate x the consumable's wallDuration when it has one.
6. Requests with op NE/LT/GT/Match are not read as amounts.
7. Credentials, Queue and Partition inside Requested/Delivered are mapped.
8. Group text properties keep their whitespace exactly.
9. The writer writes no EndTime the source did not state or imply.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import schedlab


def doc(tmp_path: Path, body: str, name: str = "in.xml", group: str = "g") -> Path:
    path = tmp_path / name
    path.write_text(
        f'<?xml version="1.0"?>\n<JobGroup><JobGroupId>{group}</JobGroupId>\n{body}\n</JobGroup>\n'
    )
    return path


def jobs(path: Path) -> list:
    return list(schedlab.read(path))


def sss_again(tmp_path: Path, path: Path, name: str = "out.sss.xml") -> ET.Element:
    out = schedlab.write(schedlab.read(path), tmp_path / name)
    return ET.parse(out).getroot()


SWF = (
    "; UnixStartTime: 1000\n"
    "1 0 10 100 4 -1 -1 4 200 -1 1 12 3 7 1 1 -1 -1\n"
    "2 5 10 100 4 -1 -1 4 200 -1 1 13 3 7 1 1 -1 -1\n"
)


def schedlab_doc(tmp_path: Path) -> str:
    swf = tmp_path / "t.swf"
    swf.write_text(SWF)
    out = schedlab.write(schedlab.read(swf), tmp_path / "t.sss.xml")
    return out.read_text()


# ------------------------------------------------------------------ 1. defaults


def test_job_value_beats_default_with_several_requested_blocks(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        "<JobDefaults><Requested><Processors>2</Processors></Requested></JobDefaults>"
        "<Job><JobId>1</JobId><Requested><WallDuration>600</WallDuration></Requested>"
        "<Requested><Processors>8</Processors></Requested></Job>",
    )
    (job,) = jobs(path)
    assert job.requested_processors == 8
    assert job.requested_time == 600


def test_every_default_block_is_inherited(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        "<JobDefaults><Requested><WallDuration>60</WallDuration></Requested>"
        "<Requested><Memory>1024</Memory></Requested></JobDefaults>"
        "<Job><JobId>1</JobId><Requested><Processors>4</Processors></Requested></Job>",
    )
    (job,) = jobs(path)
    assert job.requested_processors == 4
    assert job.requested_time == 60
    assert job.requested_memory == 1024 * 1024 / 4


def test_task_group_defaults_with_repeated_blocks() -> None:
    from schedlab.formats.sss.defaults import apply_inner_defaults

    job = ET.fromstring(
        "<Job><JobId>1</JobId><TaskGroupDefaults><Requested><Processors>2</Processors>"
        "</Requested><Requested><Memory>5</Memory></Requested></TaskGroupDefaults>"
        "<TaskGroup><Requested><WallDuration>60</WallDuration></Requested>"
        "<Requested><Processors>8</Processors></Requested></TaskGroup></Job>"
    )
    group = apply_inner_defaults(job).find("TaskGroup")
    assert [p.text for p in group.iter("Processors")] == ["8"]
    assert [m.text for m in group.iter("Memory")] == ["5"]


# ------------------------------------------------------------------ 2. Delivered times


def test_delivered_start_and_end_besides_job_level_are_kept(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        "<Job><JobId>1</JobId><SubmissionTime>900</SubmissionTime><JobState>Completed</JobState>"
        "<StartTime>950</StartTime><EndTime>1000</EndTime>"
        "<Delivered><StartTime>960</StartTime><EndTime>990</EndTime></Delivered></Job>",
    )
    (job,) = jobs(path)
    assert job.wait_time == 50
    assert job.run_time == 50
    root = sss_again(tmp_path, path)
    assert root.findtext("Job/Delivered/StartTime") == "960"
    assert root.findtext("Job/Delivered/EndTime") == "990"
    assert root.findtext("Job/StartTime") == "950"
    assert root.findtext("Job/EndTime") == "1000"


# ------------------------------------------------------------------ 3. edited documents


@pytest.mark.parametrize("lenient", [False, True])
def test_new_user_name_in_schedlab_document_is_not_merged(tmp_path: Path, lenient: bool) -> None:
    text = schedlab_doc(tmp_path)
    text = text.replace("<UserId>12</UserId>", "<UserId>alice</UserId>")
    text = text.replace("<UserId>13</UserId>", "<UserId>1</UserId>")
    path = tmp_path / "e.sss.xml"
    path.write_text(text)
    first, second = list(schedlab.read(path, lenient=lenient))
    assert second.user_id == 1
    assert first.user_id not in (None, 1)
    root = sss_again(tmp_path, path)
    assert [u.text for u in root.iter("UserId")] == ["alice", "1"]


def test_trailing_job_defaults_in_schedlab_document_are_applied(tmp_path: Path) -> None:
    text = schedlab_doc(tmp_path).replace(
        "</JobGroup>",
        "<JobDefaults><JobName>nightly</JobName><Executable>foo</Executable></JobDefaults>"
        "</JobGroup>",
    )
    path = tmp_path / "e.sss.xml"
    path.write_text(text)
    got = jobs(path)
    assert [j.name for j in got] == ["nightly", "nightly"]
    root = sss_again(tmp_path, path)
    assert [e.text for e in root.iter("Executable")] == ["7", "7"]  # own values win
    assert [e.text for e in root.iter("JobName")] == ["nightly", "nightly"]


def test_unedited_schedlab_document_is_still_read_in_one_pass(tmp_path: Path) -> None:
    schedlab_doc(tmp_path)
    workload = schedlab.read(tmp_path / "t.sss.xml")
    assert workload.meta["sss"]["single_pass"]
    assert [j.user_id for j in workload] == [12, 13]


def test_defaults_name_before_jobs_is_written_back(tmp_path: Path) -> None:
    text = schedlab_doc(tmp_path).replace("<Executable>7</Executable>", "")
    text = text.replace("<Job>", "<JobDefaults><Executable>foo</Executable></JobDefaults><Job>", 1)
    path = tmp_path / "e.sss.xml"
    path.write_text(text)
    root = sss_again(tmp_path, path)
    assert [e.text for e in root.iter("Executable")] == ["foo", "foo"]


# ------------------------------------------------------------------ 4. group properties


def test_group_properties_survive_sss_to_sss(tmp_path: Path) -> None:
    text = schedlab_doc(tmp_path)
    root = sss_again(tmp_path, tmp_path / "t.sss.xml", "other.sss.xml")
    assert root.findtext("JobGroupId") == "t"
    text = text.replace(
        "<JobGroupId>t</JobGroupId>",
        "<JobGroupId>MYGROUP</JobGroupId><JobGroupName>Nightly</JobGroupName>"
        '<CreationTime>1000</CreationTime><Extension name="site" type="Scheduler">LANL'
        "</Extension>",
    )
    path = tmp_path / "e1.sss.xml"
    path.write_text(text)
    root = sss_again(tmp_path, path, "e2.sss.xml")
    assert root.findtext("JobGroupId") == "MYGROUP"
    assert root.findtext("JobGroupName") == "Nightly"
    assert root.findtext("CreationTime") == "1000"
    assert [e.text for e in root.findall("Extension[@name='site']")] == ["LANL"]


# ------------------------------------------------------------------ 5. wallDuration


def test_cpu_time_uses_consumable_wall_duration(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        "<Job><JobId>1</JobId><JobState>Completed</JobState><SubmissionTime>0</SubmissionTime>"
        "<StartTime>0</StartTime><Delivered><WallDuration>2000</WallDuration>"
        '<Processors wallDuration="1234" consumptionRate="0.63">4</Processors></Delivered></Job>',
    )
    (job,) = jobs(path)
    assert job.run_time == 2000
    assert job.average_cpu_time == pytest.approx(0.63 * 1234)
    root = sss_again(tmp_path, path)
    procs = root.find("Job/Delivered/Processors")
    assert procs.get("wallDuration") == "1234"
    assert float(procs.get("consumptionRate")) == pytest.approx(0.63)


# ------------------------------------------------------------------ 6. op


@pytest.mark.parametrize("op", ["NE", "LT", "GT", "Match"])
def test_inexact_op_is_not_an_amount(tmp_path: Path, op: str) -> None:
    path = doc(
        tmp_path,
        f'<Job><JobId>1</JobId><Requested><Processors op="{op}">4</Processors>'
        f'<WallDuration op="{op}">60</WallDuration></Requested></Job>',
    )
    (job,) = jobs(path)
    assert job.requested_processors is None
    assert job.requested_time is None
    kept = [n["tag"] for n in job.extras["sss:Requested"]]
    assert kept == ["Processors", "WallDuration"]


def test_bound_op_is_still_read(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        '<Job><JobId>1</JobId><Requested><Processors op="GE">4</Processors></Requested></Job>',
    )
    assert jobs(path)[0].requested_processors == 4


# ------------------------------------------------------------------ 7. credentials


def test_credentials_inside_delivered_are_mapped(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        "<Job><JobId>1</JobId><JobState>Completed</JobState><Delivered><UserId>scottmo</UserId>"
        "<AccountName>mscfops</AccountName><Queue>batch</Queue><Processors>12</Processors>"
        "</Delivered></Job>",
    )
    workload = schedlab.read(path)
    (job,) = list(workload)
    assert job.user_id == 1
    assert job.account == "mscfops"
    assert job.queue_number == 1
    assert workload.header.names("User") == {1: "scottmo"}
    assert "sss:Delivered" not in job.extras


def test_credentials_inside_requested_and_job_level_wins(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        "<Job><JobId>1</JobId><UserId>bob</UserId><Requested><Partition>gpu</Partition>"
        "<UserId>alice</UserId><ProjectId>p1</ProjectId><Processors>2</Processors>"
        "</Requested></Job>",
    )
    workload = schedlab.read(path)
    (job,) = list(workload)
    assert workload.header.names("User")[job.user_id] == "bob"
    assert workload.header.names("Partition")[job.partition_number] == "gpu"
    assert job.account == "p1"
    assert [n.get("text") for n in job.extras["sss:Requested"]] == ["alice"]


def test_job_level_account_name_beats_delivered_project(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        "<Job><JobId>1</JobId><AccountName>acct</AccountName>"
        "<Delivered><ProjectId>proj</ProjectId></Delivered></Job>",
    )
    (job,) = jobs(path)
    assert job.account == "acct"
    assert [n.get("text") for n in job.extras["sss:Delivered"]] == ["proj"]


# ------------------------------------------------------------------ 8. whitespace


def test_group_text_whitespace_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "b1.xml"
    path.write_text(
        "<JobGroup><JobGroupId>g</JobGroupId><JobGroupName>Shuttle  Takeoff</JobGroupName>"
        "<Description>line one\nline two</Description>"
        "<Job><JobId>1</JobId><Processors>1</Processors></Job></JobGroup>"
    )
    root = sss_again(tmp_path, path)
    assert root.findtext("JobGroupName") == "Shuttle  Takeoff"
    assert root.findtext("Description") == "line one\nline two"


# ------------------------------------------------------------------ 9. invented EndTime


def test_no_end_time_invented_with_suspension(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        "<Job><JobId>1</JobId><JobState>Completed</JobState><SubmissionTime>900</SubmissionTime>"
        "<StartTime>950</StartTime><SuspendDuration>100</SuspendDuration>"
        "<Delivered><WallDuration>30</WallDuration></Delivered></Job>",
    )
    root = sss_again(tmp_path, path)
    assert root.find("Job/EndTime") is None
    assert root.findtext("Job/Delivered/WallDuration") == "30"


def test_no_wall_duration_invented_for_suspended_job(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        "<Job><JobId>1</JobId><JobState>Completed</JobState><SubmissionTime>900</SubmissionTime>"
        "<StartTime>950</StartTime><EndTime>1000</EndTime><SuspendDuration>10</SuspendDuration>"
        "</Job>",
    )
    before = jobs(path)[0]
    assert before.run_time == 50
    root = sss_again(tmp_path, path)
    assert root.findtext("Job/EndTime") == "1000"
    assert root.find("Job/Delivered/WallDuration") is None
    back = tmp_path / "back.sss.xml"
    ET.ElementTree(root).write(back)
    assert jobs(back)[0] == before
