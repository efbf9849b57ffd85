"""Conformance with what sacct(1) prints (audit "slurmconf"): units of usage
columns, closed records of requeued and resized jobs, jobs cancelled while pending,
requested partition lists, columns that contradict each other, and the writer's
host names, job numbers and options."""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from schedlab import FormatError
from schedlab.platform import infer_platform

from schedlab_slurm.reader import read
from schedlab_slurm.writer import slurm_host, write

HEAD = (
    "JobID|JobIDRaw|Partition|User|Submit|Start|End|Elapsed|ElapsedRaw|Timelimit|"
    "TimelimitRaw|State|ExitCode|NNodes|AllocCPUS|NCPUS|ReqCPUS|ReqMem|NodeList|JobName"
)
GOOD = (
    "10|10|p|u|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:10|00:01:00|60|"
    "00:10:00|10|COMPLETED|0:0|1|4|4|4|4000M|n01|j"
)


def dump(tmp_path: Path, *lines: str, name: str = "d.sacct") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def good(**changes: str) -> str:
    """GOOD with some columns changed."""
    values = dict(zip(HEAD.split("|"), GOOD.split("|"), strict=True))
    values.update(changes)
    return "|".join(values.values())


# ---------------------------------------------------------------- 1. MaxRSS units

RSS_HEAD = "JobID|JobIDRaw|Submit|Start|End|Elapsed|State|AllocCPUS|ReqCPUS|ReqMem|NTasks|MaxRSS"
RSS_JOB = (
    "10|10|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:10|00:01:00|"
    "COMPLETED|1|1|4000M||"
)
RSS_STEP = (
    "10.batch|10.batch|2024-01-01T00:00:10|2024-01-01T00:00:10|2024-01-01T00:01:10|"
    "00:01:00|COMPLETED|1|||1|{rss}"
)


@pytest.mark.parametrize(
    ("rss", "kilobytes"), [("512", 0.5), ("1048576", 1024), ("512K", 512), ("3M", 3072)]
)
def test_maxrss_without_a_unit_is_bytes(tmp_path, rss, kilobytes):
    """sacct prints MaxRSS in bytes when no unit applies (--noconvert, or a count not
    a multiple of 1024); ReqMem's bare number stays MiB."""
    path = dump(tmp_path, RSS_HEAD, RSS_JOB, RSS_STEP.format(rss=rss))
    (job,) = read(path).jobs
    assert job.used_memory == kilobytes
    assert job.requested_memory == 4000 * 1024  # ReqMem 4000: MiB (job total, 1 CPU)


# ---------------------------------------------------- 2. REQUEUED and RESIZING runs


@pytest.mark.parametrize("state", ["REQUEUED", "RESIZING"])
def test_requeued_and_resized_records_are_ended_runs(tmp_path, state):
    path = dump(tmp_path, HEAD, good(State=state))
    (job,) = read(path).jobs
    assert (job.wait_time, job.run_time, job.allocated_processors) == (10, 60, 4)
    assert job.status == 0  # ended without completing (like PREEMPTED)


def test_requeued_runs_are_all_simulated(tmp_path):
    second = good(
        Submit="2024-01-01T00:01:10", Start="2024-01-01T00:02:00", End="2024-01-01T00:03:00"
    )
    path = dump(tmp_path, HEAD, good(State="REQUEUED"), second)
    workload = read(path)
    assert [j.run_time for j in workload.jobs] == [60, 60]
    result = schedlab.simulate(workload, procs=8, progress=False)
    assert result.stats["jobs_excluded"] == 0


# --------------------------------------------- 3. cancelled while pending, no NodeList

PENDING_HEAD = (
    "JobID|JobIDRaw|User|Partition|Submit|Eligible|Start|End|Elapsed|State|AllocCPUS|"
    "ReqCPUS|Timelimit"
)
PENDING = (
    "4744528_255|4745200|user003|general-compute|2020-12-18T22:12:16|2020-12-18T22:14:17|"
    "2021-01-06T14:09:15|2021-01-06T14:09:15|00:00:00|CANCELLED by 89200431|12|12|2-00:00:00"
)


def test_cancelled_while_pending_without_nodelist_never_started(tmp_path):
    (job,) = read(dump(tmp_path, PENDING_HEAD, PENDING)).jobs
    assert job.wait_time is None and job.allocated_processors is None
    assert (job.run_time, job.status, job.requested_processors) == (0, 5, 12)


def test_cancelled_with_nodes_and_no_elapsed_time_started(tmp_path):
    head = PENDING_HEAD + "|NodeList"
    (job,) = read(dump(tmp_path, head, PENDING + "|n01")).jobs
    assert job.allocated_processors == 12 and job.wait_time is not None
    head = PENDING_HEAD + "|AllocTRES"
    (job,) = read(dump(tmp_path, head, PENDING + "|cpu=12,node=1")).jobs
    assert job.allocated_processors == 12 and job.wait_time is not None
    (job,) = read(dump(tmp_path, head, PENDING + "|")).jobs
    assert job.allocated_processors is None and job.wait_time is None


def test_a_cancelled_swf_job_of_no_run_time_writes_back_as_started(tmp_path):
    """The writer prints NodeList (empty for a job without hosts): a job cancelled
    after a known wait, with processors, keeps them."""
    (tmp_path / "c.swf").write_text(
        "; UnixStartTime: 1000000000\n1 0 5 0 4 -1 -1 4 100 -1 5 1 1 -1 -1 -1 -1 -1\n"
    )
    out = tmp_path / "c.sacct"
    losses = write(schedlab.read(tmp_path / "c.swf"), out)
    (job,) = read(out).jobs
    assert (job.wait_time, job.run_time, job.allocated_processors) == (5, 0, 4)
    assert not {"wait_time", "allocated_processors"} & set(losses.fields())


# ---------------------------------------------------- 4. requested partition lists

MULTI = [
    "JobID|JobIDRaw|Partition|User|Submit|Start|End|Elapsed|ElapsedRaw|Timelimit|State|"
    "ExitCode|NNodes|AllocCPUS|ReqCPUS|ReqMem|NodeList|JobName",
    "10|10|batch|u|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:10|00:01:00|60|"
    "00:10:00|COMPLETED|0:0|1|4|4|4000M|n01|j",
    "11|11|gpu|u|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:10|00:01:00|60|"
    "00:10:00|COMPLETED|0:0|1|4|4|4000M|n02|j",
    "12|12|batch,gpu|u|2024-01-01T00:00:00|Unknown|2024-01-01T00:05:00|00:00:00|0|00:10:00|"
    "CANCELLED by 1000|0:0|1|0|4|4000M|None assigned|j",
]


def test_a_partition_list_is_read_as_its_first_partition(tmp_path):
    path = dump(tmp_path, *MULTI)
    workload = schedlab.read(path)
    pending = workload.jobs[2]
    assert pending.extras["request.partition"] == "batch"
    assert pending.extras["slurm.Partition"] == "batch,gpu"  # the whole list kept
    assert pending.partition_number == workload.jobs[0].partition_number
    assert workload.header.names("Partition") == {1: "batch", 2: "gpu"}
    names = {p.name for p in infer_platform(workload).platform.partitions}
    assert names == {"batch", "gpu"}
    out = tmp_path / "back.sacct"
    losses = write(workload, out)
    assert out.read_text() == path.read_text() and not list(losses)


# ------------------------------------------- 5. jobs that never started have no hosts


def test_a_pending_job_contributes_no_hosts(slurm_dir):
    workload = read(slurm_dir / "xdmod_non-ended-job-state.log")
    running, pending = workload.jobs
    assert running.hosts == ("cpn-k07-02-01",) and pending.hosts == ()
    assert pending.extras["slurm.NodeList"] == "cpn-k07-02-01"  # kept verbatim
    group = infer_platform(workload).platform.node_groups[0]
    assert (group.count, group.cores) == (1, 12)


# ------------------------------------------------ 6. columns that contradict each other


@pytest.mark.parametrize(
    ("changes", "column"),
    [
        ({"ElapsedRaw": "36000"}, "ElapsedRaw"),
        ({"Elapsed": "10:00:00", "ElapsedRaw": "36000"}, "ElapsedRaw"),
        ({"TimelimitRaw": "600"}, "TimelimitRaw"),
        ({"TimelimitRaw": "UNLIMITED"}, "TimelimitRaw"),
        ({"NCPUS": "64"}, "NCPUS"),
    ],
)
def test_contradicting_columns_are_refused(tmp_path, changes, column):
    path = dump(tmp_path, HEAD, good(**changes))
    with pytest.raises(FormatError) as info:
        read(path)
    assert (info.value.source, info.value.line, info.value.field) == (str(path), 2, column)
    lenient = read(
        dump(tmp_path, HEAD, good(**changes), GOOD.replace("10|10", "11|11", 1)), lenient=True
    )
    assert len(lenient.jobs) == 1 and lenient.meta["skipped"] == 1


def test_elapsed_beyond_end_minus_start_without_raw_is_refused(tmp_path):
    head = HEAD.replace("|ElapsedRaw", "")
    row = good(Elapsed="10:00:00").split("|")
    del row[8]
    with pytest.raises(FormatError) as info:
        read(dump(tmp_path, head, "|".join(row)))
    assert (info.value.line, info.value.field) == (2, "Elapsed")


def test_consistent_columns_and_suspended_time_are_read(tmp_path):
    # Elapsed below End - Start: the job was suspended for part of it
    path = dump(tmp_path, HEAD, good(Elapsed="00:00:40", ElapsedRaw="40"))
    assert read(path).jobs[0].run_time == 40
    path = dump(tmp_path, HEAD, good(Timelimit="UNLIMITED", TimelimitRaw="UNLIMITED"))
    assert read(path).jobs[0].requested_time is None


@pytest.mark.filterwarnings("ignore")
def test_real_dumps_still_read(slurm_dir):
    for path in sorted(slurm_dir.glob("*.log")):
        lenient = "dump2101" in path.name  # its line 16 is truncated
        workload = read(path, lenient=lenient)
        assert workload.jobs and workload.meta["skipped"] == (1 if lenient else 0)


def test_a_written_time_limit_of_seconds_reads_back_with_both_columns(tmp_path):
    workload = schedlab.read(dump(tmp_path, HEAD, GOOD))
    workload.jobs[0].requested_time = 90
    out = tmp_path / "w.sacct"
    losses = write(workload, out)
    assert read(out).jobs[0].requested_time == 120
    assert "rounded up to whole minutes" in " ".join(
        loss.action for loss in losses if loss.field == "requested_time"
    )


# ----------------------------------------------------- 7. simulated node host names


def test_simulated_nodes_keep_distinct_host_names(tmp_path):
    (tmp_path / "col.toml").write_text(
        '[platform]\nsharing = "exclusive"\n[node_groups.rack]\ncount = 12\ncores = 1\n'
        '[node_groups.rack1]\ncount = 2\ncores = 1\n[partitions.all]\nnodes = ["rack", "rack1"]\n'
    )
    lines = [f"{n:5d} 0 -1 100 -1 -1 -1 1 100 -1 -1 -1 -1 -1 -1 -1 -1 -1" for n in range(1, 15)]
    (tmp_path / "col.swf").write_text("\n".join(lines) + "\n")
    result = schedlab.simulate(
        schedlab.read(tmp_path / "col.swf"), platform=str(tmp_path / "col.toml"), progress=False
    )
    out = tmp_path / "col.sacct"
    write(result.workload, out)
    back = read(out)
    hosts = [h for job in back.jobs for h in job.hosts]
    assert len(hosts) == len(set(hosts)) == 14
    assert slurm_host("rack[10]") != slurm_host("rack1[0]")
    assert slurm_host("thin[3]") == "thin3"


# ------------------------------------------------------------------- 8. job numbers


def test_swf_job_numbers_that_do_not_read_back_are_reported(tmp_path):
    (tmp_path / "jn.swf").write_text(
        "; UnixStartTime: 820454400\n"
        "   15        0 192180   3477    4 -1 -1    4  53940 -1  1  1  1 -1 -1 -1 -1 -1\n"
        "   16      172  11940   2488   25 -1 -1   25   3600 -1  1  2  2 -1 -1 -1 -1 -1\n"
        "   17      626 364560 215337    5 -1 -1    5 215400 -1  0  3  3 -1 -1 -1 -1 -1\n"
    )
    out = tmp_path / "jn.sacct"
    losses = write(schedlab.read(tmp_path / "jn.swf"), out)
    assert losses.count("job_number") == 3
    (reason,) = {loss.action for loss in losses if loss.field == "job_number"}
    assert "job_numbers=raw" in reason
    assert [j.job_number for j in read(out, job_numbers="raw").jobs] == [15, 16, 17]


def test_job_numbers_in_submit_order_are_no_loss(tmp_path, slurm_dir):
    lines = [f"{n:5d} {n} 1 10 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1" for n in (1, 2, 3)]
    (tmp_path / "s.swf").write_text("; UnixStartTime: 820454400\n" + "\n".join(lines) + "\n")
    assert write(schedlab.read(tmp_path / "s.swf"), tmp_path / "s.sacct").count("job_number") == 0
    source = read(slurm_dir / "xdmod_accounting-logs.log")
    assert write(source, tmp_path / "x.sacct").count("job_number") == 0


# ------------------------------------------------------------------------ 9. options


def test_a_bad_time_zone_names_the_file(tmp_path):
    path = dump(tmp_path, HEAD, GOOD)
    with pytest.raises(FormatError) as info:
        read(path, timezone="Bad/Zone")
    assert str(info.value).startswith(f"{path}: field timezone: unknown time zone")
    out = tmp_path / "o.sacct"
    with pytest.raises(FormatError) as info:
        write(read(path), out, timezone="Bad/Zone")
    assert str(info.value).startswith(f"{out}: field timezone: unknown time zone")


def test_writer_columns_match_sacct_names_without_regard_to_case(tmp_path):
    path = dump(tmp_path, HEAD, GOOD)
    out = tmp_path / "o.sacct"
    write(read(path), out, columns="JobID,elapsed,ncpus")
    assert out.read_text().splitlines() == ["JobID|Elapsed|NCPUS", "10|00:01:00|4"]


def test_writer_refuses_unknown_column_names(tmp_path):
    path = dump(tmp_path, HEAD, GOOD)
    out = tmp_path / "o.sacct"
    with pytest.raises(FormatError) as info:
        write(read(path), out, columns="JobID,Elapsd")
    assert info.value.field == "columns" and "'Elapsd'" in str(info.value)
    assert "\n" not in str(info.value)
    assert not out.exists()


def test_cli_refuses_contradicting_columns_in_one_line(tmp_path):
    import subprocess
    import sys

    path = dump(tmp_path, HEAD, good(NCPUS="64"))
    run = subprocess.run(
        [sys.executable, "-m", "schedlab", "convert", str(path), "-", "--to", "swf"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2
    assert run.stderr.strip().count("\n") == 0
    assert f"{path}:2: field NCPUS:" in run.stderr


def test_fractional_times_are_written_within_end_minus_start(tmp_path):
    """Start 0.6 s and run 0.8 s round to Start = End: Elapsed is written 0 (a
    rounding, reported), not 1 s, which sacct cannot print and the reader refuses."""
    (tmp_path / "fr.swf").write_text(
        "; UnixStartTime: 1000000000\n1 0 0.6 0.8 1 -1 -1 1 100 -1 1 1 1 -1 -1 -1 -1 -1\n"
    )
    out = tmp_path / "fr.sacct"
    losses = write(schedlab.read(tmp_path / "fr.swf"), out)
    assert read(out).jobs[0].run_time == 0
    (reason,) = {loss.action for loss in losses if loss.field == "run_time"}
    assert "rounded" in reason
