"""Writing SSS: round trips (SSS -> SSS, SWF -> SSS -> SWF, generated jobs), schema
validity of the output, determinism and the one-document-per-job layout."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import schedlab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedlab.errors import FormatError
from schedlab.formats.sss.reader import read
from schedlab.formats.sss.schema import load_schema
from schedlab.formats.sss.writer import write
from schedlab.model import SWF_FIELDS, Dependency, Header, Job, Task, Workload

DATA = Path(__file__).parent / "data" / "sss"
EXAMPLES = ["example-1-simple.xml", "example-2-moderate.xml", "example-3-elaborate.xml"]


def jobs_of(workload) -> list[Job]:
    return [job for job in workload]


def assert_valid(path: Path) -> None:
    root = ET.parse(path).getroot()
    errors = [f"{e.path}: {e.reason}" for e in load_schema().iter_errors(root)]
    assert errors == []


@pytest.mark.parametrize("name", EXAMPLES)
def test_spec_examples_round_trip(tmp_path: Path, name: str) -> None:
    first = read(DATA / name)
    out = tmp_path / "out.sss.xml"
    write(first, out)
    assert_valid(out)
    second = read(out)
    assert second.meta["sss"]["single_pass"]
    assert jobs_of(second) == jobs_of(first)
    assert second.header == first.header
    # and once more: the written document is a fixed point
    again = tmp_path / "again" / "out.sss.xml"
    again.parent.mkdir()
    write(second, again)
    assert again.read_bytes() == out.read_bytes()


def test_written_document_keeps_sss_meaning(tmp_path: Path) -> None:
    out = tmp_path / "moderate.sss.xml"
    write(read(DATA / "example-2-moderate.xml"), out)
    root = ET.parse(out).getroot()
    job = root.find("Job")
    assert job.findtext("JobId") == "PBS.1234.0"
    assert job.findtext("UserId") == "peterk"
    assert job.findtext("Queue") == "batch_normal"
    requested = job.find("Requested/Processors")
    assert (requested.text, requested.get("op")) == ("12", "GE")
    memory = job.find("Requested/Memory")
    assert (memory.text, memory.get("units"), memory.get("op")) == ("2097152", "KB", "GE")
    assert job.find("Delivered/Memory").get("metric") == "Average"
    assert job.findtext("Environment/Variable") == "/usr/bin:/home/peterk"


def test_schedlab_read_write_by_suffix(tmp_path: Path) -> None:
    workload = schedlab.read(DATA / "example-3-elaborate.xml")
    out = schedlab.write(workload, tmp_path / "group.sss.xml.gz")
    back = schedlab.read(out)
    assert back.meta["reader"] == "sss"
    assert jobs_of(back) == jobs_of(read(DATA / "example-3-elaborate.xml"))


# ------------------------------------------------------------------ SWF conversions


@pytest.mark.realdata
@pytest.mark.parametrize("name", ["HPC2N-2002_excerpt-3170jobs_alea.swf", "lublin_256.swf"])
def test_swf_to_sss_to_swf_loses_no_field(tmp_path: Path, swf_dir: Path, name: str) -> None:
    original = schedlab.read(swf_dir / name)
    jobs = jobs_of(original)
    sss = schedlab.write(original, tmp_path / "trace.sss.xml")
    back = schedlab.read(sss)
    assert back.meta["reader"] == "sss"
    back_jobs = jobs_of(back)
    assert len(back_jobs) == len(jobs)
    for before, after in zip(jobs, back_jobs, strict=True):
        assert before.swf_values() == after.swf_values()
    assert back.header == original.header
    # Written again as SWF, the file is the same as the original converted directly.
    direct = schedlab.write(original, tmp_path / "direct.swf")
    via_sss = schedlab.write(back, tmp_path / "via_sss.swf")
    assert via_sss.read_bytes() == direct.read_bytes()


@pytest.mark.realdata
def test_swf_conversion_output_validates(tmp_path: Path, swf_dir: Path) -> None:
    original = schedlab.read(swf_dir / "HPC2N-2002_excerpt-3170jobs_alea.swf")
    out = schedlab.write(original, tmp_path / "hpc2n.sss.xml")
    root = ET.parse(out).getroot()
    # Validate the group with a sample of jobs (xmlschema is slow on thousands).
    for job in root.findall("Job")[100:]:
        root.remove(job)
    assert list(load_schema().iter_errors(root)) == []
    first = root.find("Job")
    assert first.findtext("SubmissionTime") == str(original.header.unix_start_time)


# ------------------------------------------------------------------ generated jobs

_names = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12
)
_maybe_time = st.none() | st.integers(0, 10**8) | st.floats(0, 1e8, allow_nan=False)
_maybe_count = st.none() | st.integers(-1, 5000)
_maybe_float = st.none() | st.floats(-1e9, 1e12, allow_nan=False, allow_infinity=False)


@st.composite
def generated_jobs(draw: st.DrawFn) -> Job:
    """Jobs with SWF fields (whole, fractional, negative or unknown), rich fields and
    extras of other formats."""
    number = draw(st.integers(1, 10**6))
    # Dependencies point at earlier job numbers (or at names that are not numbers), so
    # a generated group is always a DAG: the reader rightly rejects cycles.
    earlier = st.integers(1, number - 1) if number > 1 else st.nothing()
    deps = draw(
        st.lists(
            st.builds(
                Dependency,
                earlier | _names.filter(lambda n: bool(n) and not n.strip().isdigit()),
                st.sampled_from(["end", "success", "failure", "exit", "start"]),
                st.none() | st.integers(-5, 255),
                st.none() | st.integers(0, 100),
            ),
            max_size=2,
        )
    )
    return Job(
        job_number=number,
        submit_time=draw(_maybe_time),
        wait_time=draw(st.none() | st.integers(-10, 10**6) | st.floats(0, 1e6)),
        run_time=draw(_maybe_time),
        allocated_processors=draw(_maybe_count),
        average_cpu_time=draw(_maybe_float),
        used_memory=draw(_maybe_float),
        requested_processors=draw(_maybe_count),
        requested_time=draw(_maybe_time),
        requested_memory=draw(_maybe_float),
        status=draw(st.none() | st.integers(0, 5)),
        user_id=draw(st.none() | st.integers(0, 50)),
        group_id=draw(st.none() | st.integers(0, 50)),
        executable_number=draw(st.none() | st.integers(0, 50)),
        queue_number=draw(st.none() | st.integers(0, 9)),
        partition_number=draw(st.none() | st.integers(0, 9)),
        preceding_job_number=draw(st.none() | earlier),
        think_time=draw(st.none() | st.integers(0, 1000)),
        name=draw(st.none() | _names),
        account=draw(st.none() | _names),
        nodes=draw(st.none() | st.integers(0, 100)),
        hosts=tuple(draw(st.lists(_names, max_size=3))),
        exit_code=draw(st.none() | st.integers(-255, 255)),
        priority=draw(st.none() | st.integers(-100, 10**6) | st.floats(0, 10)),
        tasks=tuple(
            draw(st.lists(st.builds(Task, _names, st.none() | st.floats(0, 100)), max_size=2))
        ),
        dependencies=tuple(deps),
        extras=draw(
            st.dictionaries(
                st.sampled_from(["sge.qname", "google.priority", "note"]),
                st.none() | st.integers() | _names,
                max_size=2,
            )
        ),
    )


@st.composite
def generated_workloads(draw: st.DrawFn) -> Workload:
    jobs = draw(st.lists(generated_jobs(), min_size=1, max_size=6))
    header = Header()
    if draw(st.booleans()):
        header.set("UnixStartTime", draw(st.integers(0, 1_600_000_000)))
    if draw(st.booleans()):
        header.set_names("User", {1: "alice", 2: "bob smith", 3: "7"})
    if draw(st.booleans()):
        header.set_names("Queue", {1: "batch", 2: "long"})
    header.add("Note", draw(_names))
    return Workload.from_jobs(jobs, header)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(workload=generated_workloads())
def test_generated_workloads_round_trip(tmp_path: Path, workload: Workload) -> None:
    out = tmp_path / "gen.sss.xml"
    write(workload, out)
    assert_valid(out)
    back = read(out)
    assert back.header == workload.header
    assert jobs_of(back) == workload.jobs


def test_a_foreign_document_round_trips_after_reading(tmp_path: Path) -> None:
    """A document that was not written by schedlab: odd names, fractional memory."""
    path = tmp_path / "foreign.xml"
    path.write_text(
        "<JobGroup><JobGroupId>f</JobGroupId>"
        "<Job><JobId>a</JobId><UserId>Keith Jackson</UserId><GroupId>42</GroupId>"
        "<JobState>Completed</JobState><SubmissionTime>100</SubmissionTime>"
        "<StartTime>150</StartTime><EndTime>400</EndTime>"
        "<Delivered><Processors consumptionRate='0.5' dedicated='true'>3</Processors>"
        "<Memory units='MB'>1</Memory></Delivered></Job>"
        "<Job><JobId>b</JobId><UserId>ann</UserId><Dependency type='OnExit' code='2'>a"
        "</Dependency></Job></JobGroup>",
        encoding="utf-8",
    )
    first = read(path)
    jobs = jobs_of(first)
    assert jobs[0].run_time == 250 and jobs[0].average_cpu_time == 125
    assert jobs[0].used_memory == pytest.approx(1024 / 3)
    assert first.header.names("User") == {1: "Keith_Jackson", 2: "ann"}
    assert first.header.names("Group") == {1: "42"}  # numbered, not taken literally
    assert jobs[0].extras["sss:UserId"] == "Keith Jackson"
    out = tmp_path / "out.sss.xml"
    write(first, out)
    assert_valid(out)
    assert jobs_of(read(out)) == jobs
    assert ET.parse(out).getroot().find("Job/UserId").text == "Keith Jackson"


# ------------------------------------------------------------------ options and edge cases


def test_output_is_deterministic(tmp_path: Path) -> None:
    workload = read(DATA / "example-3-elaborate.xml")
    write(workload, tmp_path / "a.sss.xml", job_group_id="same")
    write(workload, tmp_path / "b.sss.xml", job_group_id="same")
    assert (tmp_path / "a.sss.xml").read_bytes() == (tmp_path / "b.sss.xml").read_bytes()
    assert b"<JobGroupId>same</JobGroupId>" in (tmp_path / "a.sss.xml").read_bytes()


def test_one_document_per_job_layout(tmp_path: Path) -> None:
    workload = read(DATA / "example-3-elaborate.xml")
    out = schedlab.write(workload, tmp_path / "jobs.sss", layout="jobs")
    files = sorted(out.iterdir())
    assert [f.name for f in files] == ["job-fr15n05.1234.0.xml", "job-fr15n05.1234.1.xml"]
    for path in files:
        assert_valid(path)
        assert ET.parse(path).getroot().tag == "Job"
    (job,) = jobs_of(read(files[0]))
    assert job.extras["sss:JobId"] == "fr15n05.1234.0"
    # Absolute times are kept: the standalone job starts when it started.
    assert ET.parse(files[0]).getroot().findtext("StartTime") == "1051557713"


def test_empty_workload_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="at least one Job"):
        write(Workload.from_jobs([]), tmp_path / "empty.sss.xml")


def test_illegal_xml_characters_are_refused(tmp_path: Path) -> None:
    job = Job(job_number=1, name="bell\x07")
    with pytest.raises(FormatError, match=r"characters XML 1\.0 cannot hold"):
        write(Workload.from_jobs([job]), tmp_path / "bad.sss.xml")


def test_names_from_header_tables(tmp_path: Path) -> None:
    header = Header()
    header.set_names("User", {3: "carol"})
    jobs = [Job(job_number=1, user_id=3), Job(job_number=2, user_id=9)]
    out = tmp_path / "names.sss.xml"
    write(Workload.from_jobs(jobs, header), out)
    users = [e.text for e in ET.parse(out).getroot().iter("UserId")]
    assert users == ["carol", "9"]
    assert [j.user_id for j in read(out)] == [3, 9]


def test_swf_fields_survive_for_every_field(tmp_path: Path) -> None:
    values = dict(
        zip(
            SWF_FIELDS,
            [7, 10.5, -3, 100, 4, 50.25, 1000.5, 8, 120, 2048, 3, 5, 6, 2, 1, 1, 6, 30],
            strict=True,
        )
    )
    job = Job(**values)
    out = tmp_path / "one.sss.xml"
    write(Workload.from_jobs([job]), out)
    (back,) = jobs_of(read(out))
    assert back.swf_values() == job.swf_values()
