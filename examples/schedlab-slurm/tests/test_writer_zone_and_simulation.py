"""The writer's time zone (a written file reads back at the same instants with the
reader's default options, or the zone is reported) and simulated schedules (the
``Partition`` and ``NodeList`` columns print where the simulation ran each job)."""

from __future__ import annotations

import pytest
import schedlab
from schedlab import Header, Job, LossError, Workload, collect_losses

from schedlab_slurm.reader import read
from schedlab_slurm.values import parse_time
from schedlab_slurm.writer import write

HPC2N = "HPC2N-2002_excerpt-3170jobs_alea.swf"
MULTILINE = "slurm_sim_tools_sacct_submitline_multiline.log"


def _instants(workload: Workload) -> list[float | None]:
    origin = workload.header.unix_start_time or 0
    return [None if j.submit_time is None else j.submit_time + origin for j in workload.jobs]


def _task_instants(workload: Workload) -> list[tuple[float | None, float | None]]:
    origin = workload.header.unix_start_time or 0
    return [
        tuple(None if t is None else t + origin for t in (task.start_time, task.end_time))
        for job in workload.jobs
        for task in job.tasks
    ]


# ------------------------------------------------------------------ time zone


def test_a_trace_with_a_zone_reads_back_at_the_same_instants(slurm_dir, tmp_path):
    """Finding: HPC2N (TimeZoneString Europe/Stockholm) was printed in local time and
    read back as UTC, every absolute time 2 h later, with nothing reported."""
    source = schedlab.read(slurm_dir.parent / "swf" / HPC2N, format="swf")
    assert source.header.time_zone_string == "Europe/Stockholm"
    out = tmp_path / "h.sacct"
    losses = write(source, out)
    first = dict(zip(*(line.split("|") for line in out.read_text().splitlines()[:2]), strict=True))
    assert first["Submit"] == "2002-07-28T07:04:05"  # UTC; 09:04:05 in Stockholm
    back = read(out)  # the reader's default options
    assert back.header.unix_start_time == source.header.unix_start_time == 1027839845
    assert _instants(back) == _instants(source)
    assert [j.wait_time for j in back] == [j.wait_time for j in source]
    # the label is not in the file: reported, not silently replaced by "UTC"
    assert back.header.time_zone_string == "UTC"
    assert losses.count("header.TimeZoneString") == 1
    assert losses.count("submit_time") == 0


def test_printing_another_zone_is_reported(tmp_path):
    header = Header()
    header.set("UnixStartTime", 1700000000)
    jobs = [
        Job(
            job_number=i,
            submit_time=10 * i,
            wait_time=1,
            run_time=5,
            status=1,
            allocated_processors=1,
            requested_processors=1,
        )
        for i in (1, 2, 3)
    ]
    workload = Workload.from_jobs(jobs, header)
    out = tmp_path / "paris.sacct"
    losses = write(workload, out, timezone="Europe/Paris")
    lines = out.read_text().splitlines()
    row = dict(zip(lines[0].split("|"), lines[1].split("|"), strict=True))
    assert row["Submit"] == "2023-11-14T23:13:30"  # Paris, UTC+1
    (line,) = [str(loss) for loss in losses if loss.field == "submit_time"]
    assert "3 records" in line and "timezone=Europe/Paris" in line
    assert losses.count("header.TimeZoneString") == 0  # the header had no label
    # what the report says is true: the default read moves them, the named zone not
    assert _instants(read(out)) != _instants(workload)
    assert _instants(read(out, timezone="Europe/Paris")) == _instants(workload)
    with pytest.raises(LossError), collect_losses(strict=True):
        schedlab.write(workload, tmp_path / "strict.sacct", format="slurm", timezone="Europe/Paris")


def test_a_dump_read_in_a_zone_keeps_it_and_says_so(slurm_dir, tmp_path):
    """Written back as read (same zone, same bytes), with the zone reported, since
    the reader's default (UTC) would read other instants."""
    source = slurm_dir / MULTILINE
    paris = read(source, timezone="Europe/Paris")
    out = tmp_path / "same.sacct"
    losses = write(paris, out)
    assert out.read_text(encoding="utf-8") == source.read_text(encoding="utf-8").rstrip("\n") + "\n"
    assert losses.count("submit_time") == len(paris.jobs)
    assert losses.count("header.TimeZoneString") == 0
    # read in UTC (the default) it is written back as it was, nothing reported
    losses = write(read(source), tmp_path / "utc.sacct")
    assert [x.field for x in losses if not x.field.startswith("header.")] == []


def test_a_dump_read_in_a_zone_is_reprinted_in_utc(slurm_dir, tmp_path):
    """With timezone=UTC, every time column (job records, Eligible and the steps
    kept verbatim) is re-printed, so the default read gives the same instants."""
    source = slurm_dir / MULTILINE
    paris = read(source, timezone="Europe/Paris")
    out = tmp_path / "utc.sacct"
    losses = write(paris, out, timezone="UTC")
    assert losses.count("submit_time") == 0
    back = read(out)
    assert _instants(back) == _instants(paris)
    assert [j.wait_time for j in back] == [j.wait_time for j in paris]
    assert _task_instants(back) == _task_instants(paris)
    assert len(_task_instants(back)) == 7
    for a, b in zip(paris.jobs, back.jobs, strict=True):
        before = parse_time(a.extras["slurm.Eligible"], _paris())
        assert parse_time(b.extras["slurm.Eligible"]) == before
    # and the printed texts moved by the offset (CEST: 2 h)
    first = source.read_text(encoding="utf-8").splitlines()[1].split("|")
    again = out.read_text(encoding="utf-8").splitlines()[1].split("|")
    columns = paris.meta["slurm_columns"]
    assert first[columns.index("Submit")] == "2021-10-05T11:26:12"
    assert again[columns.index("Submit")] == "2021-10-05T09:26:12"


def _paris():
    from zoneinfo import ZoneInfo

    return ZoneInfo("Europe/Paris")


# ----------------------------------------------------------- simulated schedules

PLATFORM = """\
[node_groups.a]
count = 2
cores = 2
[node_groups.b]
count = 2
cores = 2
[partitions.batch]
nodes = ["a"]
queues = ["short"]
[partitions.big]
nodes = ["b"]
queues = ["long"]
"""

SWF = """\
; MaxProcs: 8
; Queue: 1 short
; Queue: 2 long
; Partition: 2 gpu
1 0 -1 100 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1
4 3 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 2 -1 -1
5 4 -1 100 2 -1 -1 2 100 -1 1 1 1 -1 2 -1 -1 -1
"""


def _columns(path) -> list[dict[str, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    head = lines[0].split("|")
    return [dict(zip(head, line.split("|"), strict=True)) for line in lines[1:]]


@pytest.mark.parametrize("objects", [False, True], ids=["columns", "job-objects"])
def test_a_simulated_schedule_prints_where_jobs_ran(tmp_path, objects):
    """Finding: Partition held the trace's partition (``gpu``, not on the platform)
    and, from the columnar workload the CLI simulates, NodeList was empty."""
    (tmp_path / "p.toml").write_text(PLATFORM)
    (tmp_path / "w.swf").write_text(SWF)
    source = schedlab.read(tmp_path / "w.swf")
    if objects:
        source = Workload(source.header, jobs=list(source.jobs))
    result = schedlab.simulate(source, platform=str(tmp_path / "p.toml"))
    ran = {
        j.job_number: (j.extras["schedlab.partition"], j.extras["schedlab.nodes"])
        for j in result.workload.jobs
    }
    assert ran == {1: ("batch", "a[0]"), 4: ("batch", "a[1]"), 5: ("big", "b[0]")}
    out = tmp_path / "out.sacct"
    losses = write(result.workload, out)
    rows = {int(r["JobID"]): (r["Partition"], r["NodeList"]) for r in _columns(out)}
    assert rows == {1: ("batch", "a0"), 4: ("batch", "a1"), 5: ("big", "b0")}
    # the trace's partition of job 4 ("gpu") is replaced: said so, once; jobs 1
    # and 5 have none in the trace (unknown), now the simulated one: said so too
    parts = sorted(str(x) for x in losses if x.field == "partition_number")
    assert parts == [
        "partition_number: 1 record, the trace's partition replaced by the one the job "
        "ran in (schedlab.partition)",
        "partition_number: 2 records, unknown in the trace, written as the one the job "
        "ran in (schedlab.partition)",
    ]
    # the node names change form (a[0] -> a0): said so; the extras are printed
    assert losses.count("hosts") == 3
    assert losses.count("extras.schedlab.nodes") == 0
    assert losses.count("extras.schedlab.partition") == 0
    back = read(out, order="file", job_numbers="raw")
    assert [j.hosts for j in back.jobs] == [("a0",), ("a1",), ("b0",)]
    assert [j.extras["request.partition"] for j in back.jobs] == ["batch", "batch", "big"]


def test_a_simulated_slurm_dump_replaces_the_trace_values(tmp_path):
    """A job read from sacct keeps its raw Partition/NodeList texts; simulated, the
    columns print the simulation's, and the trace's (lost) are reported."""
    head = (
        "JobID|JobIDRaw|Partition|Submit|Start|End|Elapsed|State|NNodes|AllocCPUS|ReqCPUS|NodeList"
    )
    rows = [
        "7|7|debug|2024-01-01T00:00:00|2024-01-01T00:00:05|2024-01-01T00:01:45|"
        "00:01:40|COMPLETED|1|2|2|c01"
    ]
    (tmp_path / "d.sacct").write_text("\n".join([head, *rows]) + "\n")
    (tmp_path / "one.toml").write_text(
        '[node_groups.n]\ncount = 2\ncores = 2\n[partitions.main]\nnodes = ["n"]\n'
    )
    source = schedlab.read(tmp_path / "d.sacct")
    result = schedlab.simulate(
        Workload(source.header, jobs=list(source.jobs)), platform=str(tmp_path / "one.toml")
    )
    (job,) = result.workload.jobs
    part = job.extras["schedlab.partition"]
    assert part != "debug" and job.extras["schedlab.nodes"] == "n[0]"
    out = tmp_path / "sim.sacct"
    losses = write(result.workload, out)
    (row,) = _columns(out)
    assert (row["Partition"], row["NodeList"]) == (part, "n0")
    assert losses.count("partition_number") == 1
    assert losses.count("extras.request.partition") == 1
    # columnar simulation keeps the trace's hosts in Job.hosts: replaced, reported
    result = schedlab.simulate(source, platform=str(tmp_path / "one.toml"))
    losses = write(result.workload, tmp_path / "cols.sacct")
    (row,) = _columns(tmp_path / "cols.sacct")
    assert (row["Partition"], row["NodeList"]) == (part, "n0")
    assert losses.count("hosts") >= 1 and losses.count("partition_number") == 1
