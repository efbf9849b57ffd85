"""Property tests: generated accounting records survive read-then-write unchanged and
map to the model as documented; jobs known only by their SWF fields survive a trip
through both layouts."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import schedlab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedlab.model import Header, Job, Workload

NAME = st.text("abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=10).filter(
    lambda s: s not in ("NONE",)
)
TEXT = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters=":"), max_size=20
)
SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@st.composite
def colon_record(draw: st.DrawFn) -> tuple[str, dict]:
    ms = draw(st.booleans())
    scale = 1000 if ms else 1
    sub = draw(st.integers(1_000_000_000, 1_900_000_000)) * scale + (
        draw(st.integers(0, 999)) if ms else 0
    )
    wait = draw(st.integers(0, 10**6 * scale))
    run = draw(st.integers(0, 10**6 * scale))
    started = draw(st.integers(0, 9)) > 0
    start, end = (sub + wait, sub + wait + run) if started else (0, 0)
    slots = draw(st.integers(1, 64))
    h_rt = draw(st.one_of(st.none(), st.integers(1, 10**6)))
    hms = draw(st.booleans())
    request = ""
    if h_rt is not None:
        text = f"{h_rt // 3600}:{h_rt // 60 % 60:02d}:{h_rt % 60:02d}" if hms else str(h_rt)
        request = f"-l h_rt={text}"
    category = f"{draw(TEXT).strip()} {request}".replace("\n", " ").strip()
    cpu = draw(st.floats(0, 1e7, allow_nan=False))
    maxvmem = draw(st.integers(0, 2**40))
    failed = draw(st.sampled_from([0, 0, 0, 1, 26, 37, 100]))
    exit_status = draw(st.sampled_from([0, 0, 1, 2, 137, 143]))
    fields = [
        draw(NAME),
        draw(NAME),
        draw(NAME),
        draw(NAME),
        draw(TEXT.map(str.strip)),
        str(draw(st.integers(1, 10**7))),
        "sge",
        str(draw(st.integers(-1023, 1024))),
        str(sub),
        str(start),
        str(end),
        str(failed),
        str(exit_status),
        str(run // scale),
        *[f"{draw(st.floats(0, 1e6)):f}" for _ in range(17)],
        "NONE",
        "defaultdepartment",
        "NONE" if slots == 1 else "mpi",
        str(slots),
        str(draw(st.integers(0, 5000))),
        f"{cpu:f}",
        "0.000000",
        "0.000000",
        category,
        "0.000000",
        "NONE",
        f"{maxvmem}.000000",
    ]
    kind = draw(st.sampled_from(["43", "45", "univa"]))
    if kind != "43":
        fields += ["0", "0"]
    if kind == "univa":
        fields += ["NONE", "NONE", str(maxvmem), "host:with:colons", "qsub job.sh"]
    truth = {
        "run": (end - start) / scale if started else None,
        "wait": (start - sub) / scale if started else None,
        "slots": slots if started else None,
        "h_rt": h_rt,
        "memory": maxvmem / 1024 / slots if started else None,
        "status": 5
        if not started or (failed in (37, 100) and exit_status > 128)
        else (1 if failed == 0 and exit_status == 0 else 0),
    }
    return ":".join(fields), truth


@st.composite
def json_record(draw: st.DrawFn) -> str:
    sub = draw(st.integers(10**15, 2 * 10**15))
    start = sub + draw(st.integers(0, 10**12))
    end = start + draw(st.integers(0, 10**12))
    record: dict = {}
    if draw(st.booleans()):
        record.update({"time": end + 5, "type": "acct"})
    record.update(
        {
            "job_number": draw(st.integers(1, 10**7)),
            "task_number": draw(st.integers(0, 100)),
            "start_time": start,
            "end_time": end,
            "owner": draw(NAME),
            "group": draw(NAME),
            "account": draw(TEXT),
            "qname": draw(NAME),
            "hostname": draw(NAME),
        }
    )
    if draw(st.booleans()):
        record["project"] = draw(TEXT)
    record["department"] = "defaultdepartment"
    if draw(st.booleans()):
        record["granted_pe"] = "smp"
    record["slots"] = draw(st.integers(1, 128))
    if draw(st.booleans()):
        record["arid"] = draw(st.integers(1, 1000))
    record.update(
        {
            "job_name": draw(TEXT),
            "priority": 0,
            "submission_time": sub,
            "submit_cmd_line": draw(TEXT),
        }
    )
    if "arid" in record:
        record["ar_submission_time"] = sub - 100
    if draw(st.booleans()):
        record["pe_taskid"] = draw(st.sampled_from(["NONE", "1.node1"]))
    record.update(
        {
            "category": draw(TEXT),
            "failed": draw(st.sampled_from([0, 1, 100])),
            "exit_status": draw(st.integers(0, 255)),
        }
    )
    if draw(st.booleans()):
        record["deleted_by"] = "alice@login"
    numbers = st.floats(0, 1e12, allow_nan=False)
    execd = {"wallclock": draw(numbers), "cpu": draw(numbers), "mem": draw(numbers), "io": 0.0}
    if draw(st.booleans()):
        execd["ioops"] = draw(st.integers(0, 10**6))
    execd.update({"iow": 0.0, "maxvmem": draw(numbers), "maxrss": draw(numbers)})
    usage = {
        "rusage": {"ru_wallclock": draw(st.integers(0, 10**6)), "ru_utime": draw(numbers)},
        draw(st.sampled_from(["usage", "eusage"])): execd,
    }
    if draw(st.booleans()):
        usage["gpu"] = {"util": draw(numbers), "model": draw(TEXT)}
    record["usage"] = usage
    return json.dumps(record, separators=(",", ":"), ensure_ascii=draw(st.booleans()))


@SETTINGS
@given(st.lists(colon_record(), min_size=1, max_size=8))
def test_colon_records_round_trip_and_map(records: list[tuple[str, dict]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "accounting"
        path.write_text("".join(line + "\n" for line, _ in records))
        workload = schedlab.read(path, group=False, order="file")
        assert len(workload) == len(records)
        for job, (_, truth) in zip(workload.jobs, records, strict=True):
            assert job.run_time == truth["run"] or abs(job.run_time - truth["run"]) < 1e-6
            assert job.wait_time == truth["wait"] or abs(job.wait_time - truth["wait"]) < 1e-6
            assert job.allocated_processors == truth["slots"]
            assert job.requested_time == truth["h_rt"]
            assert job.status == truth["status"]
            if truth["memory"] is not None:
                assert abs(job.used_memory - truth["memory"]) <= 1e-9 * truth["memory"]
        out = Path(tmp) / "out.accounting"
        schedlab.write(workload, out)
        assert out.read_text() == path.read_text()


@SETTINGS
@given(st.lists(json_record(), min_size=1, max_size=8))
def test_json_records_round_trip(records: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "accounting.jsonl"
        path.write_text("".join(line + "\n" for line in records), encoding="utf-8")
        workload = schedlab.read(path)
        assert workload.meta["records"] == len(records)
        out = Path(tmp) / "out.accounting.jsonl"
        schedlab.write(workload, out)
        assert out.read_text(encoding="utf-8") == path.read_text(encoding="utf-8")
        for line, job in zip(
            records, schedlab.read(path, group=False, order="file").jobs, strict=True
        ):
            record = json.loads(line)
            assert job.run_time == (record["end_time"] - record["start_time"]) / 1e6
            assert job.allocated_processors == record["slots"]
            if "deleted_by" in record:
                assert job.status == 5


@st.composite
def swf_job(draw: st.DrawFn, number: int) -> Job:
    run = draw(st.one_of(st.none(), st.integers(0, 10**6)))
    wait = draw(st.integers(0, 10**5)) if run is not None else None
    procs = draw(st.integers(1, 512))
    return Job(
        job_number=number,
        submit_time=draw(st.integers(0, 10**7)),
        wait_time=wait,
        run_time=run,
        allocated_processors=procs if run is not None else None,
        average_cpu_time=draw(st.one_of(st.none(), st.integers(0, 10**6)))
        if run is not None
        else None,
        used_memory=draw(st.one_of(st.none(), st.integers(1, 10**8))) if run is not None else None,
        requested_processors=draw(st.integers(1, 512)),
        requested_time=draw(st.one_of(st.none(), st.integers(1, 10**6))),
        requested_memory=draw(st.one_of(st.none(), st.integers(1, 10**8))),
        status=draw(st.sampled_from([0, 1, 5])) if run is not None else 5,
        user_id=draw(st.integers(1, 5)),
        group_id=draw(st.integers(1, 3)),
        queue_number=draw(st.integers(1, 4)),
    )


@SETTINGS
@given(st.data())
def test_swf_jobs_survive_both_layouts(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 12))
    jobs = [data.draw(swf_job(i + 1)) for i in range(n)]
    jobs.sort(key=lambda j: j.submit_time)
    for i, job in enumerate(jobs):
        job.job_number = i + 1
    header = Header()
    header.set("UnixStartTime", 1_500_000_000)
    header.set_names("User", {i: f"user{i}" for i in range(1, 6)})
    header.set_names("Group", {i: f"grp{i}" for i in range(1, 4)})
    header.set_names("Queue", {i: f"q{i}.q" for i in range(1, 5)})
    source = Workload.from_jobs(jobs, header)
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("accounting", "accounting.jsonl"):
            path = Path(tmp) / name
            schedlab.write(source, path)
            back = schedlab.read(path, group=False)
            assert len(back) == n
            shift = back.header.unix_start_time - 1_500_000_000  # origin: first submission
            users = back.header.names("User")
            queues = back.header.names("Queue")
            for before, after in zip(jobs, back.jobs, strict=True):
                assert after.submit_time + shift == before.submit_time
                assert after.wait_time == before.wait_time
                assert after.run_time == before.run_time
                assert after.status == before.status
                assert after.allocated_processors == before.allocated_processors
                assert after.requested_time == before.requested_time
                assert after.requested_memory == before.requested_memory
                if before.run_time is not None:
                    # documented: unknown usage stays unknown in JSONL, is 0 in colon
                    unknown = None if name.endswith(".jsonl") else 0
                    cpu, memory = before.average_cpu_time, before.used_memory
                    assert after.average_cpu_time == (unknown if cpu is None else cpu)
                    assert after.used_memory == (unknown if memory is None else memory)
                assert users[after.user_id] == f"user{before.user_id}"
                assert queues[after.queue_number] == f"q{before.queue_number}.q"
                if before.requested_processors != before.allocated_processors:
                    assert after.requested_processors == before.requested_processors
