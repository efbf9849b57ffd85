"""Writing sacct output: read-then-write reproduces the records, edits rewrite the
columns they feed, workloads from other formats get every column from the model."""

from __future__ import annotations

import gzip

import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab import Header, Job, Workload

from schedlab_slurm.reader import read
from schedlab_slurm.writer import write

STRICT_FILES = [
    "slurm_sim_tools_sacct_dump2110.log",
    "slurm_sim_tools_sacct_simple.log",
    "slurm_sim_tools_sacct_submitline_multiline.log",
    "xdmod_accounting-logs-with-job-arrays.log",
    "xdmod_accounting-logs.log",
    "xdmod_non-ended-job-state.log",
    "xdmod_utf8-multibyte-chars.log",
]


def records(text: str) -> str:
    """The file without trailing blank lines (which carry no record)."""
    return text.rstrip("\n") + "\n"


@pytest.mark.parametrize("name", STRICT_FILES)
def test_read_then_write_reproduces_the_file(slurm_dir, tmp_path, name):
    source = slurm_dir / name
    out = tmp_path / "out.sacct"
    write(read(source), out)
    assert out.read_text(encoding="utf-8") == records(source.read_text(encoding="utf-8"))


def test_lenient_round_trip_drops_only_the_rejected_record(slurm_dir, tmp_path):
    source = slurm_dir / "slurm_sim_tools_sacct_dump2101.log"
    w = read(source, lenient=True)
    out = tmp_path / "out.sacct"
    write(w, out)
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    assert w.meta["rejects"][0][0] == 16
    assert out.read_text(encoding="utf-8") == "".join(lines[:15])


def test_round_trip_through_schedlab_write(slurm_dir, tmp_path, registry):
    source = slurm_dir / "slurm_sim_tools_sacct_submitline_multiline.log"
    w = schedlab.read(source, registry=registry)
    out = schedlab.write(w, tmp_path / "copy.sacct.gz", registry=registry)
    text = gzip.decompress(out.read_bytes()).decode("utf-8")
    assert text == records(source.read_text(encoding="utf-8"))
    (tmp_path / "again").mkdir()
    again = schedlab.write(w, tmp_path / "again" / "copy.sacct.gz", registry=registry)
    assert again.read_bytes() == out.read_bytes()  # deterministic, gzip included


def test_editing_a_job_rewrites_the_columns_it_feeds(slurm_dir, tmp_path):
    source = slurm_dir / "xdmod_accounting-logs.log"
    w = read(source)
    job = w.jobs[2]  # 4107219: COMPLETED after 14:00:49
    job.run_time = 3600
    job.status = 0
    job.requested_memory = 1024 * 1024
    out = tmp_path / "edited.sacct"
    write(w, out)
    before = source.read_text(encoding="utf-8").splitlines()[2].split("|")
    after = out.read_text(encoding="utf-8").splitlines()[2].split("|")
    changed = {i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b}
    columns = w.meta["slurm_columns"]
    assert {columns[i] for i in changed} == {"End", "Elapsed", "State", "ReqMem"}
    values = dict(zip(columns, after, strict=True))
    assert values["Elapsed"] == "01:00:00" and values["State"] == "FAILED"
    assert values["End"] == "2015-06-30T13:04:04" and values["ReqMem"] == "1024Mc"
    again = read(out).jobs[2]
    assert (again.run_time, again.status, again.requested_memory) == (3600, 0, 1024 * 1024)


def _swf_workload() -> Workload:
    header = Header()
    header.set("UnixStartTime", 1700000000)
    header.set("TimeZoneString", "Europe/Paris")
    header.set_names("User", {1: "ann", 2: "bob"})
    header.add("Queue", "1 short")
    jobs = [
        Job(job_number=1, submit_time=0, wait_time=5, run_time=100, allocated_processors=4,
            requested_processors=4, requested_time=600, requested_memory=2048, status=1,
            user_id=1, group_id=1, queue_number=1, name="sim", hosts=("n01", "n02")),
        Job(job_number=2, submit_time=30, wait_time=None, run_time=0, requested_processors=8,
            requested_time=None, status=5, user_id=2, group_id=1, queue_number=1),
        Job(job_number=3, submit_time=90, wait_time=10, run_time=7200.0,
            allocated_processors=1, requested_processors=1, requested_time=3600, status=0,
            user_id=1, exit_code=137),
    ]
    return Workload.from_jobs(jobs, header)


def test_workload_from_another_format(tmp_path):
    out = tmp_path / "fromswf.sacct"
    write(_swf_workload(), out)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("JobID|JobIDRaw|Cluster|Partition|QOS|")
    first = dict(zip(lines[0].split("|"), lines[1].split("|"), strict=True))
    assert first["Submit"] == "2023-11-14T23:13:20"  # 1700000000 in Paris (UTC+1)
    assert first["Start"] == "2023-11-14T23:13:25" and first["Elapsed"] == "00:01:40"
    assert first["User"] == "ann" and first["QOS"] == "short" and first["State"] == "COMPLETED"
    assert first["ReqMem"] == "2Mc" and first["NodeList"] == "n[01-02]"
    second = dict(zip(lines[0].split("|"), lines[2].split("|"), strict=True))
    assert second["Start"] == "Unknown" and second["State"] == "CANCELLED"
    assert second["NodeList"] == "None assigned" and second["Timelimit"] == ""
    back = read(out, timezone="Europe/Paris")
    keep = ("submit_time", "wait_time", "run_time", "allocated_processors",
            "requested_processors", "requested_time", "requested_memory", "status")
    for a, b in zip(_swf_workload().jobs, back.jobs, strict=True):
        assert [getattr(a, f) for f in keep] == [getattr(b, f) for f in keep]
    assert [j.exit_code for j in back] == [None, None, 137]
    assert back.header.unix_start_time == 1700000000


def test_writer_options(slurm_dir, tmp_path):
    w = read(slurm_dir / "slurm_sim_tools_sacct_simple.log")
    out = tmp_path / "few.sacct"
    write(w, out, header=False, columns="JobID,State,JobName")
    assert out.read_text(encoding="utf-8").splitlines() == [
        "1|COMPLETED|job_00001",
        "2|COMPLETED|job_0||0002",
        "3|COMPLETED|job_0|0003",
        "4|COMPLETED|job_|00004",
    ]
    # A header-less file with pipes in the last column still reads back.
    back = read(out, columns="JobID|State|JobName")
    assert [j.name for j in back] == [j.name for j in w]


_name = st.text(
    st.characters(codec="utf-8", exclude_characters="\n\r"), min_size=1, max_size=12
).filter(lambda s: s.strip() == s and not s.startswith("|") and not s.endswith("|"))


@settings(max_examples=60, deadline=None)
@given(
    names=st.lists(_name, min_size=1, max_size=5),
    runs=st.lists(st.integers(0, 10**6), min_size=5, max_size=5),
    sizes=st.lists(st.integers(1, 4096), min_size=5, max_size=5),
    gaps=st.lists(st.integers(0, 10**5), min_size=5, max_size=5),
)
def test_property_write_read_preserves_the_model(tmp_path_factory, names, runs, sizes, gaps):
    header = Header()
    header.set("UnixStartTime", 1600000000)
    jobs, submit = [], 0
    for i, name in enumerate(names):
        submit += gaps[i] if i else 0  # the first job defines the origin
        jobs.append(Job(job_number=i + 1, submit_time=submit, wait_time=gaps[-i - 1],
                        run_time=runs[i], allocated_processors=sizes[i],
                        requested_processors=sizes[i], requested_time=runs[i] + 60,
                        status=1, name=name))
    out = tmp_path_factory.mktemp("prop") / "p.sacct"
    write(Workload.from_jobs(jobs, header), out)
    back = read(out)
    assert [j.name for j in back] == names
    for a, b in zip(jobs, back, strict=True):
        assert (a.submit_time, a.wait_time, a.run_time, a.allocated_processors) == (
            b.submit_time, b.wait_time, b.run_time, b.allocated_processors)
        assert b.requested_time == a.requested_time
