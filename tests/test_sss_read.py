"""Reading SSS job objects: the specification's examples, defaults, units,
requested/delivered, dependencies, errors, lenient mode and detection."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
import schedlab
from schedlab.errors import FormatError
from schedlab.formats.sss.reader import SSSValidationError, read

DATA = Path(__file__).parent / "data" / "sss"


def jobs_of(workload) -> list:
    # Iterate (not list(workload)/workload.jobs, which go through columns).
    return [job for job in workload]


def write_doc(tmp_path: Path, body: str, name: str = "doc.xml") -> Path:
    path = tmp_path / name
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n' + body, encoding="utf-8")
    return path


# ------------------------------------------------------------------ the spec examples


def test_very_simple_example() -> None:
    workload = read(DATA / "example-1-simple.xml")
    (job,) = jobs_of(workload)
    assert job.job_number == 1
    assert job.extras["sss:JobId"] == "PBS.1234.0"
    assert job.extras["sss:JobState"] == "Idle"
    assert job.status is None
    # An idle job: its uncategorised Processors and WallDuration are requests.
    assert job.requested_processors == 16
    assert job.requested_time == 3600
    assert job.allocated_processors is None and job.run_time is None
    assert workload.header.names("User") == {1: "scottmo"}
    assert workload.header.names("Executable") == {1: "/bin/hostname"}
    assert job.user_id == 1 and job.executable_number == 1


def test_moderate_example_requested_delivered_and_units() -> None:
    (job,) = jobs_of(read(DATA / "example-2-moderate.xml"))
    assert job.name == "Heavy Water"
    assert job.account == "nwchemdev"
    assert job.status == 1
    assert job.requested_processors == 12
    assert job.requested_time == 3600
    # 2 GB for the job, over 12 requested processors, in KB per processor.
    assert job.requested_memory == pytest.approx(2 * 2**20 / 12)
    assert job.allocated_processors == 16
    assert job.run_time == 1155
    assert job.used_memory == pytest.approx(1.89 * 2**20 / 16)
    # op / metric are kept so that a round trip loses nothing.
    assert job.extras["sss:attrs"] == {
        "requested_processors": {"op": "GE"},
        "requested_memory": {"op": "GE"},
        "used_memory": {"metric": "Average"},
    }
    assert job.extras["sss:Charge"] == 25410.0
    assert job.extras["sss:Application"] == "NWChem"
    # No SubmissionTime: the absolute StartTime is kept.
    assert job.submit_time is None and job.extras["sss:StartTime"] == 1051557713
    env = job.extras["sss:elements"][0]
    assert env == {
        "tag": "Environment",
        "children": [
            {"tag": "Variable", "attrib": {"name": "PATH"}, "text": "/usr/bin:/home/peterk"}
        ],
    }


def test_memory_per_processor_option() -> None:
    (job,) = jobs_of(read(DATA / "example-2-moderate.xml", memory="processor"))
    assert job.requested_memory == 2 * 2**20


def test_elaborate_example_group_defaults_and_task_groups() -> None:
    workload = read(DATA / "example-3-elaborate.xml")
    first, second = jobs_of(workload)
    header = workload.header
    assert header.unix_start_time == 1051556734  # the earliest SubmissionTime
    assert header.get("SSSJobGroupId") == "fr15n05.1234"
    assert header.get("SSSJobGroupName") == "ShuttleTakeoff"
    assert header.names("User") == {1: "keith"}
    assert header.names("Queue") == {1: "batch", 2: "batch_normal"}
    # JobDefaults are inherited by both jobs.
    for job in (first, second):
        assert job.account == "GrandChallenge18"
        assert job.user_id == 1
        assert job.submit_time == 0
        assert job.extras["sss:SubmitHost"] == "asteroid.lbl.gov"
        assert job.extras["sss:StagedTime"] == 1051557859
        env = [e for e in job.extras["sss:elements"] if e["tag"] == "Environment"]
        assert [v["attrib"]["name"] for v in env[0]["children"]] == ["LD_LIBRARY_PATH", "PATH"]
    assert (first.job_number, second.job_number) == (1, 2)
    assert first.extras["sss:JobId"] == "fr15n05.1234.0"
    assert first.wait_time == 1051557713 - 1051556734
    assert first.run_time == 1155
    assert first.requested_memory == 1024 * 1024 / 2  # default unit MB, 2 processors
    assert first.used_memory == 975 * 1024 / 2
    assert first.average_cpu_time == pytest.approx(0.78 * 1155)
    assert first.extras["sss:attrs"] == {"used_memory": {"metric": "Max"}}
    assert first.queue_number == 1 and second.queue_number == 2
    assert second.status is None and second.extras["sss:JobState"] == "Idle"
    assert second.priority == 1032847
    assert second.requested_time == 43200
    groups = [e for e in second.extras["sss:elements"] if e["tag"] == "TaskGroup"]
    assert [g["children"][0]["text"] for g in groups] == ["1", "Slave"]
    slave_requested = groups[1]["children"][-1]
    assert slave_requested["children"][1] == {
        "tag": "Processors",
        "attrib": {"conj": "Or", "group": "1"},
        "text": "16",
    }


def test_default_unit_option() -> None:
    (first, _) = jobs_of(read(DATA / "example-3-elaborate.xml", default_unit="GB"))
    assert first.requested_memory == 1024 * 2**20 / 2


# ------------------------------------------------------------------ defaults inheritance

DEFAULTS_DOC = """<JobGroup>
  <JobGroupId>g</JobGroupId>
  <JobDefaults>
    <UserId>ann</UserId>
    <Queue>short</Queue>
    <SubmissionTime>1000</SubmissionTime>
    <Requested><WallDuration>600</WallDuration><Processors>2</Processors></Requested>
    <Environment><Variable name="A">a</Variable><Variable name="B">b</Variable></Environment>
  </JobDefaults>
  <Job><JobId>base</JobId></Job>
  <Job>
    <JobId>j2</JobId>
    <UserId>bob</UserId>
    <Requested><Processors>8</Processors></Requested>
    <Environment><Variable name="B">own</Variable></Environment>
    <TaskGroupDefaults>
      <Executable>/bin/worker</Executable>
      <TaskDefaults><Node>n0</Node></TaskDefaults>
    </TaskGroupDefaults>
    <TaskGroup><TaskGroupName>a</TaskGroupName><Task><TaskId>1</TaskId></Task>
      <Task><TaskId>2</TaskId><Node>n9</Node></Task></TaskGroup>
    <TaskGroup><TaskGroupName>b</TaskGroupName><Executable>/bin/other</Executable></TaskGroup>
  </Job>
</JobGroup>"""


def test_defaults_are_inherited_and_overridden(tmp_path: Path) -> None:
    workload = read(write_doc(tmp_path, DEFAULTS_DOC))
    base, job = jobs_of(workload)
    assert workload.header.names("User") == {1: "ann", 2: "bob"}
    assert (base.user_id, job.user_id) == (1, 2)
    assert base.queue_number == job.queue_number == 1
    assert base.requested_processors == 2 and base.requested_time == 600
    assert job.requested_processors == 8  # own value overrides
    assert job.requested_time == 600  # inherited inside Requested
    env = next(e for e in job.extras["sss:elements"] if e["tag"] == "Environment")
    assert {v["attrib"]["name"]: v["text"] for v in env["children"]} == {"B": "own", "A": "a"}
    groups = [e for e in job.extras["sss:elements"] if e["tag"] == "TaskGroup"]
    assert not [e for e in job.extras["sss:elements"] if e["tag"] == "TaskGroupDefaults"]

    def child(node: dict, tag: str) -> list:
        return [c for c in node.get("children", []) if c["tag"] == tag]

    assert child(groups[0], "Executable")[0]["text"] == "/bin/worker"
    assert child(groups[1], "Executable")[0]["text"] == "/bin/other"
    tasks = child(groups[0], "Task")
    assert [child(t, "Node")[0]["text"] for t in tasks] == ["n0", "n9"]


def test_dependencies_of_defaults_are_inherited(tmp_path: Path) -> None:
    doc = DEFAULTS_DOC.replace("</JobDefaults>", "<Dependency>base</Dependency></JobDefaults>")
    doc = doc.replace(
        "<Job><JobId>base</JobId></Job>",
        "<Job><JobId>base</JobId></Job>"
        "<Job><JobId>j1</JobId><Dependency type='OnFailure'>j2</Dependency>"
        "</Job>",
    )
    # Every job now depends on "base", base itself included: a cycle.
    path = write_doc(tmp_path, doc)
    with pytest.raises(FormatError, match=r"cycle \(base -> base\)"):
        jobs_of(read(path))


# ------------------------------------------------------------------ dependencies

DEPS_DOC = """<JobGroup>
  <JobGroupId>dag</JobGroupId>
  <Job><JobId>a</JobId></Job>
  <Job><JobId>b</JobId><Dependency>a</Dependency></Job>
  <Job><JobId>c</JobId><Dependency type="OnFailure">b</Dependency>
       <Dependency type="OnExit" code="3">a</Dependency>
       <Dependency type="OnExit">outside.1</Dependency></Job>
</JobGroup>"""


def test_dependencies_with_their_type_and_code(tmp_path: Path) -> None:
    a, b, c = jobs_of(read(write_doc(tmp_path, DEPS_DOC)))
    assert a.dependencies == ()
    assert [(d.job, d.kind, d.code) for d in b.dependencies] == [(1, "success", None)]
    assert [(d.job, d.kind, d.code) for d in c.dependencies] == [
        (2, "failure", None),
        (1, "exit", 3),
        ("outside.1", "exit", None),
    ]


def test_dependency_cycle_is_a_clear_error(tmp_path: Path) -> None:
    doc = DEPS_DOC.replace(
        "<Job><JobId>a</JobId></Job>", "<Job><JobId>a</JobId><Dependency>c</Dependency></Job>"
    )
    with pytest.raises(FormatError, match=r"cycle \(a -> c -> (b -> )?a\).*acyclic"):
        read(write_doc(tmp_path, doc))


def test_numeric_job_ids_are_job_numbers(tmp_path: Path) -> None:
    doc = """<JobGroup><JobGroupId>n</JobGroupId>
      <Job><JobId>17</JobId></Job><Job><JobId>42</JobId><Dependency>17</Dependency></Job>
    </JobGroup>"""
    first, second = jobs_of(read(write_doc(tmp_path, doc)))
    assert (first.job_number, second.job_number) == (17, 42)
    assert second.dependencies[0].job == 17
    assert "sss:JobId" not in first.extras


# ------------------------------------------------------------------ errors


def test_uncorrected_moderate_example_names_line_and_problem() -> None:
    with pytest.raises(FormatError) as caught:
        read(DATA / "example-2-moderate-original.xml")
    error = caught.value
    assert error.line == 20
    text = str(error)
    assert "example-2-moderate-original.xml:20" in text
    assert "not well-formed" in text and "typographic quotes" in text
    assert "line(s) 20, 21, 26, 30" in text


def test_uncorrected_elaborate_example_names_line_and_problem() -> None:
    with pytest.raises(FormatError) as caught:
        read(DATA / "example-3-elaborate-original.xml")
    text = str(caught.value)
    assert caught.value.line == 15
    assert "typographic quotes" in text
    # The unclosed <Environment> is the next problem once quotes are fixed.
    assert "line 18: mismatched tag" in text


def test_quote_corrected_but_still_broken_elaborate_reports_the_tag(tmp_path: Path) -> None:
    text = (DATA / "example-3-elaborate-original.xml").read_text(encoding="utf-8")
    path = write_doc(tmp_path, text.replace("\u201d", '"').split("\n", 1)[1])
    with pytest.raises(FormatError) as caught:
        read(path)
    assert caught.value.line == 18
    assert "mismatched tag" in str(caught.value)


def test_several_problems_are_all_reported_with_lines() -> None:
    with pytest.raises(SSSValidationError) as caught:
        read(DATA / "invalid-several-problems.xml")
    found = {(p.line, p.path) for p in caught.value.problems}
    assert found == {
        (5, "/JobGroup/Job[1]"),  # UserId twice
        (7, "/JobGroup/Job[1]/Processors"),
        (11, "/JobGroup/Job[2]"),  # no JobId
        (14, "/JobGroup/Job[2]/Requested/Memory"),
        (15, "/JobGroup/Job[2]/Requested/WallDuration"),
        (20, "/JobGroup/Job[3]/Colour"),
        (21, "/JobGroup/Job[3]/Dependency"),
    }
    text = str(caught.value)
    assert text.startswith(str(DATA / "invalid-several-problems.xml") + ": 7 problems")
    assert "'sixteen' is not an integer" in text
    assert "units='QB'" in text and "<Colour>" in text and "<JobId> is missing" in text


def test_group_level_problems(tmp_path: Path) -> None:
    path = write_doc(
        tmp_path, "<JobGroup><JobGroupName>x</JobGroupName><Job><JobId>1</JobId></Job></JobGroup>"
    )
    with pytest.raises(SSSValidationError, match="<JobGroupId> is missing"):
        read(path)
    path = write_doc(tmp_path, "<Jobs><Job><JobId>1</JobId></Job></Jobs>")
    with pytest.raises(FormatError, match="root element <Jobs> is not an SSS job object"):
        read(path)


def test_lenient_skips_and_counts_bad_jobs(tmp_path: Path) -> None:
    doc = """<JobGroup><JobGroupId>l</JobGroupId>
      <Job><JobId>1</JobId><Processors>4</Processors></Job>
      <Job><JobId>2</JobId><Processors>four</Processors></Job>
      <Job><JobId>3</JobId></Job></JobGroup>"""
    path = write_doc(tmp_path, doc)
    with pytest.raises(SSSValidationError):
        read(path)
    workload = read(path, lenient=True)
    assert [j.job_number for j in jobs_of(workload)] == [1, 3]
    assert workload.meta["skipped"] == 1
    ((position, text),) = workload.meta["rejects"]
    assert position == 2
    assert text.startswith("<!-- Job[2]: /JobGroup/Job[2]/Processors:")  # problems first
    assert "'four' is not an integer" in text
    assert text.endswith("<Job><JobId>2</JobId><Processors>four</Processors></Job>")


def test_full_validation_mode_reads_the_examples_the_same() -> None:
    for name in ("example-2-moderate.xml", "example-3-elaborate.xml"):
        fast = jobs_of(read(DATA / name))
        full = jobs_of(read(DATA / name, validate="full"))
        assert fast == full


# ------------------------------------------------------------------ sources and detection


def test_detected_by_content_and_by_suffix(tmp_path: Path) -> None:
    source = (DATA / "example-2-moderate.xml").read_bytes()
    plain = tmp_path / "job.xml"
    plain.write_bytes(source)
    assert schedlab.read(plain).meta["reader"] == "sss"
    named = tmp_path / "job.sss.xml.gz"
    named.write_bytes(gzip.compress(source))
    workload = schedlab.read(named)
    assert workload.meta["reader"] == "sss"
    assert jobs_of(workload)[0].name == "Heavy Water"


def test_reads_open_binary_files() -> None:
    source = io.BytesIO((DATA / "example-3-elaborate.xml").read_bytes())
    workload = read(source)
    assert len(jobs_of(workload)) == 2
    assert len(jobs_of(workload)) == 2  # a second pass re-reads the stream


def test_registered_as_sss_reader_and_writer(registry) -> None:
    reader, writer = registry.reader("sss"), registry.writer("sss")
    assert reader.suffixes == (".sss.xml", ".sss") == writer.suffixes
    assert reader.sniff is not None
    options = reader.parse_options({"awareness": "warn", "validate": "full"}, "reader")
    assert options["awareness"] == "Warn" and options["lenient"] is False
    with pytest.raises(schedlab.UsageError, match="awareness"):
        reader.parse_options({"awareness": "sometimes"}, "reader")
    assert writer.parse_options({"layout": "jobs"}, "writer")["layout"] == "jobs"


def test_disk_and_swap_are_kept_in_kilobytes(tmp_path: Path) -> None:
    doc = """<Job><JobId>1</JobId><Disk units="GB">2</Disk><Swap>3</Swap>
      <Requested><Disk units="TB">1</Disk></Requested></Job>"""
    (job,) = jobs_of(read(write_doc(tmp_path, doc)))
    assert job.extras["sss:Disk"] == 2 * 2**20
    assert job.extras["sss:Swap"] == 3 * 1024  # default unit MB
    # Categorised amounts keep their own units in the element dicts.
    assert job.extras["sss:Requested"] == [{"tag": "Disk", "attrib": {"units": "TB"}, "text": "1"}]
    from schedlab.formats.sss.writer import write

    out = tmp_path / "out.sss.xml"
    write(read(write_doc(tmp_path, doc)), out)
    assert '<Disk units="KB">2097152</Disk>' in out.read_text(encoding="utf-8")
    assert jobs_of(read(out)) == [job]
