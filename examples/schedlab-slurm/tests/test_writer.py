"""Writing sacct output: read-then-write reproduces the records, edits rewrite the
columns they feed, workloads from other formats get every column from the model."""

from __future__ import annotations

import gzip
import itertools

import pytest
import schedlab
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from schedlab import Header, Job, LossError, Workload, collect_losses

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
        Job(
            job_number=1,
            submit_time=0,
            wait_time=5,
            run_time=100,
            allocated_processors=4,
            requested_processors=4,
            requested_time=600,
            requested_memory=2048,
            status=1,
            user_id=1,
            group_id=1,
            queue_number=1,
            name="sim",
            hosts=("n01", "n02"),
        ),
        Job(
            job_number=2,
            submit_time=30,
            wait_time=None,
            run_time=0,
            requested_processors=8,
            requested_time=None,
            status=5,
            user_id=2,
            group_id=1,
            queue_number=1,
        ),
        Job(
            job_number=3,
            submit_time=90,
            wait_time=10,
            run_time=7200.0,
            allocated_processors=1,
            requested_processors=1,
            requested_time=3600,
            status=0,
            user_id=1,
            exit_code=137,
        ),
    ]
    return Workload.from_jobs(jobs, header)


def test_workload_from_another_format(tmp_path):
    out = tmp_path / "fromswf.sacct"
    write(_swf_workload(), out)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("JobID|JobIDRaw|Cluster|Partition|QOS|")
    first = dict(zip(lines[0].split("|"), lines[1].split("|"), strict=True))
    assert first["Submit"] == "2023-11-14T22:13:20"  # 1700000000 in UTC, the reader's default
    assert first["Start"] == "2023-11-14T22:13:25" and first["Elapsed"] == "00:01:40"
    assert first["User"] == "ann" and first["QOS"] == "short" and first["State"] == "COMPLETED"
    assert first["ReqMem"] == "2Mc" and first["NodeList"] == "n[01-02]"
    second = dict(zip(lines[0].split("|"), lines[2].split("|"), strict=True))
    assert second["Start"] == "Unknown" and second["State"] == "CANCELLED"
    assert second["NodeList"] == "None assigned" and second["Timelimit"] == ""
    back = read(out)
    keep = (
        "submit_time",
        "wait_time",
        "run_time",
        "allocated_processors",
        "requested_processors",
        "requested_time",
        "requested_memory",
        "status",
    )
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
        jobs.append(
            Job(
                job_number=i + 1,
                submit_time=submit,
                wait_time=gaps[-i - 1],
                run_time=runs[i],
                allocated_processors=sizes[i],
                requested_processors=sizes[i],
                requested_time=runs[i] + 60,
                status=1,
                name=name,
            )
        )
    out = tmp_path_factory.mktemp("prop") / "p.sacct"
    write(Workload.from_jobs(jobs, header), out)
    back = read(out)
    assert [j.name for j in back] == names
    for a, b in zip(jobs, back, strict=True):
        assert (a.submit_time, a.wait_time, a.run_time, a.allocated_processors) == (
            b.submit_time,
            b.wait_time,
            b.run_time,
            b.allocated_processors,
        )
        assert b.requested_time == a.requested_time


# ------------------------------------- audit fixes: exact or reported (the losses)


def _rt_min() -> Workload:
    """The audit's rt_min.swf: fractional times, an unknown run time of a cancelled
    job, a run time of 0 with an unknown status, status 3."""
    jobs = [
        Job(
            job_number=1,
            submit_time=0,
            wait_time=0.5,
            run_time=99.75,
            allocated_processors=2,
            requested_processors=2,
            status=1,
            user_id=1,
            group_id=1,
            executable_number=1,
            queue_number=1,
            partition_number=1,
        ),
        Job(
            job_number=2,
            submit_time=5,
            requested_processors=8,
            requested_time=300,
            status=5,
            user_id=1,
            group_id=1,
            executable_number=1,
            queue_number=1,
            partition_number=1,
        ),
        Job(
            job_number=3,
            submit_time=20,
            wait_time=30,
            run_time=0,
            allocated_processors=1,
            requested_processors=1,
            user_id=1,
            group_id=1,
            executable_number=1,
            queue_number=1,
            partition_number=1,
        ),
        Job(
            job_number=4,
            submit_time=30,
            wait_time=0,
            run_time=60,
            allocated_processors=3,
            requested_processors=3,
            requested_time=60,
            status=3,
            user_id=1,
            group_id=1,
            executable_number=1,
            queue_number=1,
            partition_number=1,
        ),
    ]
    return Workload.from_jobs(jobs, Header())


def test_what_sacct_cannot_hold_is_reported(tmp_path):
    """The audit's losses: each was silent (the conversion exited 0 under
    --strict-lossless); now each is reported, or carried exactly."""
    out = tmp_path / "rt.sacct"
    losses = write(_rt_min(), out)
    report = {(loss.field, loss.action): loss.records for loss in losses}
    assert report[("wait_time", "rounded to whole seconds (sacct times have no fractions)")] == 1
    assert report[("run_time", "rounded to whole seconds (sacct times have no fractions)")] == 1
    assert report[("status", "status 3 written as 'COMPLETED', read back as 1")] == 1
    assert losses.count("wait_time") == 1 and losses.count("run_time") == 1
    back = read(out, order="file", job_numbers="raw")
    # carried exactly: the unknown run time of the cancelled job (an empty Elapsed),
    # the run time 0 of the job whose status is unknown (an empty State)
    assert [(j.wait_time, j.run_time, j.status) for j in back.jobs[1:3]] == [
        (None, None, 5),
        (30, 0, None),
    ]
    with pytest.raises(LossError):
        with collect_losses(strict=True):
            schedlab.write(_rt_min(), tmp_path / "strict.sacct", format="slurm")
    assert not (tmp_path / "strict.sacct").exists()


def test_values_the_reader_would_reject_are_not_written(tmp_path):
    """A record the reader would refuse is never written: the value is left
    unknown and reported (a negative wait, a fractional priority, a host list
    with an unbalanced bracket, a '|' in a column that cannot hold one)."""
    jobs = [
        Job(
            job_number=1,
            submit_time=100,
            wait_time=-3,
            run_time=10,
            status=1,
            allocated_processors=1,
            priority=1.5,
            hosts=("n[1",),
            account="a|b",
        ),
        Job(job_number=None, submit_time=200, wait_time=1, run_time=-7, status=0, exit_code=-1),
    ]
    out = tmp_path / "bad.sacct"
    losses = write(Workload.from_jobs(jobs, Header()), out)
    back = read(out, order="file", job_numbers="raw")  # reads: no error
    a, b = back.jobs
    assert (a.wait_time, a.run_time, a.priority, a.hosts, a.account) == (None, 10, None, (), None)
    assert (b.job_number, b.wait_time, b.run_time, b.exit_code) == (2, 1, None, None)
    for field in (
        "wait_time",
        "priority",
        "hosts",
        "account",
        "job_number",
        "run_time",
        "exit_code",
    ):
        assert losses.count(field) == 1, (field, losses)


_COMPARED = (
    "wait_time",
    "run_time",
    "allocated_processors",
    "average_cpu_time",
    "used_memory",
    "requested_processors",
    "requested_time",
    "requested_memory",
    "status",
    "name",
    "account",
    "nodes",
    "hosts",
    "exit_code",
    "priority",
    "preceding_job_number",
    "think_time",
)
_GROUPED = ("user_id", "group_id", "queue_number", "partition_number", "executable_number")


def _unreported(src: Workload, back: Workload, losses) -> dict[str, tuple[int, int]]:
    """Fields that differ in more records than the report says (names compared as
    groupings, since the reader numbers them; times absolute)."""
    from collections import Counter

    diff: Counter[str] = Counter()
    origin = (src.header.unix_start_time or 0, back.header.unix_start_time or 0)
    for a, b in zip(src.jobs, back.jobs, strict=True):
        if a.job_number != b.job_number:
            diff["job_number"] += 1
        sa = None if a.submit_time is None else a.submit_time + origin[0]
        sb = None if b.submit_time is None else b.submit_time + origin[1]
        if sa != sb:
            diff["submit_time"] += 1
        for field in _COMPARED:
            x, y = getattr(a, field), getattr(b, field)
            if x in (None, ()) and y in (None, ()):
                continue
            if x != y:
                diff[field] += 1
    for field in _GROUPED:
        forward: dict = {}
        backward: dict = {}
        for a, b in zip(src.jobs, back.jobs, strict=True):
            x, y = getattr(a, field), getattr(b, field)
            if (x is None) != (y is None) or (
                x is not None and (forward.setdefault(x, y) != y or backward.setdefault(y, x) != x)
            ):
                diff[field] += 1
    return {f: (n, losses.count(f)) for f, n in diff.items() if losses.count(f) < n}


_opt = st.none().__or__
_secs = st.integers(0, 10**6) | st.floats(0, 10**6, allow_nan=False).map(lambda x: round(x, 3))


@st.composite
def _workloads(draw):
    jobs = []
    for i in range(draw(st.integers(1, 5))):
        jobs.append(
            Job(
                job_number=draw(st.one_of(st.none(), st.integers(-2, 10**6), st.just(i + 1))),
                submit_time=draw(_opt(_secs)),
                wait_time=draw(_opt(_secs | st.just(-3))),
                run_time=draw(_opt(_secs | st.just(-7))),
                allocated_processors=draw(_opt(st.integers(0, 512))),
                average_cpu_time=draw(_opt(_secs)),
                used_memory=draw(_opt(st.integers(0, 10**7))),
                requested_processors=draw(_opt(st.integers(0, 512))),
                requested_time=draw(_opt(st.integers(0, 10**6))),
                requested_memory=draw(_opt(st.integers(1, 10**7) | st.floats(1, 10**7))),
                status=draw(_opt(st.sampled_from([0, 1, 2, 3, 4, 5, 7]))),
                user_id=draw(_opt(st.integers(1, 20))),
                group_id=draw(_opt(st.integers(1, 20))),
                executable_number=draw(_opt(st.integers(1, 20))),
                queue_number=draw(_opt(st.integers(1, 5))),
                partition_number=draw(_opt(st.integers(1, 5))),
                think_time=draw(_opt(st.integers(0, 100))),
                name=draw(_opt(st.sampled_from(["a", "b c", "x|y", "|z", "l\nm", "é"]))),
                account=draw(_opt(st.sampled_from(["acct", "p|q"]))),
                nodes=draw(_opt(st.integers(0, 8))),
                hosts=draw(st.sampled_from([(), ("n1",), ("n1", "n2"), ("a,b",), ("n01", "n1")])),
                exit_code=draw(_opt(st.integers(-2, 255))),
                priority=draw(_opt(st.integers(0, 10**6) | st.just(2.5))),
            )
        )
    header = Header()
    if draw(st.booleans()):
        # around 2024-10-27 00:00 UTC: Paris repeats 02:00-03:00 local time that night
        header.set("UnixStartTime", draw(st.integers(10**8, 2 * 10**9) | st.just(1729987200)))
    if draw(st.booleans()):
        header.set("TimeZoneString", "Europe/Paris")
    return Workload.from_jobs(jobs, header)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(workload=_workloads())
def test_random_workloads_are_exact_or_reported(tmp_path_factory, workload):
    """Every field either reads back as it was or is in the loss report (with at
    least as many records as differ), and the written file always reads back."""
    out = tmp_path_factory.mktemp("p") / "w.sacct"
    losses = write(workload, out)
    back = read(out, order="file", job_numbers="raw")  # the reader's default zone
    note(f"{out.read_text()}\n{losses!r}")
    assert len(back.jobs) == len(workload.jobs) and back.meta["skipped"] == 0
    assert not _unreported(workload, back, losses)


@pytest.mark.parametrize(
    "name",
    [
        "HPC2N-2002_excerpt-3170jobs_alea.swf",
        "KTH-SP2-1996-2.1-cln.swf.gz",
        "LANL-CM5-1994-4.1-cln.swf.gz",
        "LCG-2005-1.swf.gz",
        "NASA-iPSC-1993-3.1-cln.swf.gz",
        "RICC-2010-2.swf.gz",
        "lublin_256.swf",
    ],
)
def test_real_swf_traces_are_exact_or_reported(slurm_dir, tmp_path, name):
    """The head of each shared SWF trace, written as sacct and read back."""
    source = schedlab.read(slurm_dir.parent / "swf" / name, format="swf", lenient=True)
    head = Workload.from_jobs(list(itertools.islice(source, 1000)), source.header)
    out = tmp_path / "out.sacct"
    losses = write(head, out)
    # the writer prints UTC, which the reader reads by default
    back = read(out, order="file", job_numbers="raw")
    assert not _unreported(head, back, losses), losses.summary()
