"""TRES lists read exactly (a key given twice, malformed items, typed and untyped GPU
counts) and job records printed more than once (identical copies, the runs of a
requeued job printed by ``sacct --duplicates``, the same id on two clusters)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from schedlab import FormatError

from schedlab_slurm.reader import SlurmRepeatWarning, read
from schedlab_slurm.values import tres_gpus

# ------------------------------------------------------------------------------ TRES


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("gres/gpu=2,gres/gpu=3", "gres/gpu"),  # was 3 (last one won)
        ("gres/gpu:a100=2,gres/gpu:a100=3", "gres/gpu:a100"),  # was 5 (added)
        ("cpu=4,mem=1G,cpu=4", "cpu"),
    ],
)
def test_a_tres_key_given_twice_is_an_error(text, key):
    with pytest.raises(ValueError, match=f"^{key} given twice"):
        tres_gpus(text)


@pytest.mark.parametrize(
    "text",
    [
        "=2,gres/gpu=1",  # empty name
        "gres/gpu=2,,",  # empty items
        "gres/gpu=2,",
        ",gres/gpu=2",
        "gres/gpu:=2",  # empty type (was 2 GPUs)
        "billing=32;gres/gpu=2",  # not sacct's separator (was no GPU)
        "gres/gpu",  # no count
        "cpu=",
        "gres/=1",
        "gres/gpu:a100:x=1",
        "cpu=4, gres/gpu=1",
        "gres/gpu=1=2",
    ],
)
def test_malformed_tres_items_are_errors(text):
    with pytest.raises(ValueError, match="TRES"):
        tres_gpus(text)


def test_typed_and_untyped_gpu_counts():
    assert tres_gpus("gres/gpu:a100=2,gres/gpu:v100=1") == 3  # types add up
    assert tres_gpus("cpu=4,gres/gpu=3,gres/gpu:a100=2,gres/gpu:v100=1") == 3
    # the untyped total wins; fewer typed GPUs: not every type is tracked
    assert tres_gpus("gres/gpu=4,gres/gpu:a100=1") == 4
    assert tres_gpus("gres/gpu:nvidia_a100_3g.20gb=1,gres/gpumem=20G") == 1
    assert tres_gpus("license/matlab@flex=1,fs/disk=0,gres/gpu=0") == 0
    with pytest.raises(ValueError, match="add up to 3, more than the gres/gpu total 2"):
        tres_gpus("gres/gpu=2,gres/gpu:a100=2,gres/gpu:v100=1")


HEAD = "JobID|JobIDRaw|Submit|Start|End|Elapsed|State|NCPUS|ReqCPUS|ReqTRES|NodeList"
F7 = (
    "7|7|2021-12-10T14:23:28|2021-12-10T14:23:30|2021-12-10T14:33:30|00:10:00|"
    "COMPLETED|4|4|gres/gpu=2,gres/gpu=3|b001"
)


def test_reader_names_file_line_and_column_of_a_repeated_tres_key(tmp_path):
    path = tmp_path / "f7.log"
    ok = F7.replace("7|7|", "8|8|").replace("gres/gpu=2,gres/gpu=3", "gres/gpu=2")
    path.write_text(f"{HEAD}\n{F7}\n{ok}\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        read(path)
    assert str(info.value) == f"{path}:2: field ReqTRES: gres/gpu given twice in " + repr(
        "gres/gpu=2,gres/gpu=3"
    )
    workload = read(path, lenient=True)
    assert len(workload) == 1 and workload.meta["skipped"] == 1
    assert workload.jobs[0].extras["request.gpus"] == 2


def test_alloc_tres_is_checked_even_when_req_tres_names_gpus(tmp_path):
    path = tmp_path / "a.log"
    record = F7.replace("gres/gpu=2,gres/gpu=3", "gres/gpu=2") + "|gres/gpu=1,,"
    path.write_text(f"{HEAD}|AllocTRES\n{record}\n", encoding="utf-8")
    with pytest.raises(FormatError, match=":2: field AllocTRES: "):
        read(path)


# --------------------------------------------------------------------- repeated jobs

H8 = (
    "JobID|JobIDRaw|Cluster|Partition|User|Submit|Start|End|Elapsed|State|NCPUS|"
    "ReqCPUS|NodeList|JobName"
)


def job8(
    jobid="1",
    cluster="ubhpc",
    start="2021-12-10T14:23:30",
    end="2021-12-10T15:23:30",
    elapsed="01:00:00",
    state="COMPLETED",
    name="job_1",
):
    return (
        f"{jobid}|{jobid}|{cluster}|general|user001|2021-12-10T14:23:28|{start}|{end}|"
        f"{elapsed}|{state}|32|32|b001|{name}"
    )


def step8(
    jobid="1",
    step="batch",
    cluster="ubhpc",
    start="2021-12-10T14:23:30",
    end="2021-12-10T15:23:30",
    elapsed="01:00:00",
    state="COMPLETED",
):
    return (
        f"{jobid}.{step}|{jobid}.{step}|{cluster}||||{start}|{end}|{elapsed}|{state}|32||b001|"
        f"{step}"
    )


REQUEUED = job8(end="2021-12-10T14:53:30", elapsed="00:30:00", state="REQUEUED")
REQUEUED_STEP = step8(end="2021-12-10T14:53:30", elapsed="00:30:00", state="CANCELLED")
LAST = job8(start="2021-12-10T15:00:00", end="2021-12-10T16:00:00")
LAST_STEP = step8(start="2021-12-10T15:00:00", end="2021-12-10T16:00:00")
OTHER = job8(jobid="2", name="job_2")


def dump(tmp_path, *records, name="dump.log"):
    path = tmp_path / name
    path.write_text("\n".join([H8, *records]) + "\n", encoding="utf-8")
    return path


def test_an_identical_repeated_record_is_an_error(tmp_path):
    path = dump(tmp_path, job8(), job8(), OTHER)  # was 3 jobs, no finding
    with pytest.raises(FormatError) as info:
        read(path)
    assert str(info.value).startswith(f"{path}:3: field JobID: job 1 printed twice: ")
    assert "repeats line 2" in str(info.value)
    for duplicates in ("error", "last", "all"):  # an identical copy is never a run
        with pytest.raises(FormatError, match="repeats line 2"):
            read(path, duplicates=duplicates)
    workload = read(path, lenient=True)
    assert [j.name for j in workload] == ["job_1", "job_2"]
    assert workload.meta["skipped"] == 1
    assert [line for line, _, _ in workload.meta["rejects"]] == [3]


def test_a_dump_printed_twice_is_read_once_when_lenient(tmp_path):
    path = dump(tmp_path, job8(), step8(), OTHER, job8(), step8(), OTHER)
    workload = read(path, lenient=True)
    assert [j.name for j in workload] == ["job_1", "job_2"]
    assert [len(j.tasks) for j in workload] == [1, 0]  # the step's copy is not a task
    assert sorted(line for line, _, _ in workload.meta["rejects"]) == [5, 6, 7]


def test_a_step_printed_twice_is_an_error(tmp_path):
    path = dump(tmp_path, job8(), step8(), step8())
    with pytest.raises(FormatError, match=r":4: field JobID: step 1\.batch printed twice"):
        read(path)
    workload = read(path, lenient=True)
    assert len(workload.jobs[0].tasks) == 1 and workload.meta["skipped"] == 1


def test_requeued_runs_are_each_a_job_with_a_warning_by_default(tmp_path):
    path = dump(tmp_path, REQUEUED, REQUEUED_STEP, LAST, LAST_STEP, OTHER)
    with pytest.warns(SlurmRepeatWarning) as caught:  # was 2 jobs 1, no finding
        workload = read(path, order="file")
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith(f"{path}: 1 record(s) of a job printed before with other fields")
    assert "job 1 line 4 (first: line 2)" in message and "duplicates=last" in message
    assert [j.extras["slurm.State"] for j in workload] == ["REQUEUED", "COMPLETED", "COMPLETED"]
    assert [[t.extras["slurm.State"] for t in j.tasks] for j in workload] == [
        ["CANCELLED"],
        ["COMPLETED"],
        [],
    ]
    assert workload.meta["repeated_jobs"] == [(4, "1", 2)]
    assert workload.meta["superseded_runs"] == []
    with pytest.warns(SlurmRepeatWarning):
        assert len(read(path, duplicates="all")) == 3


def test_duplicates_error_refuses_requeued_runs(tmp_path):
    path = dump(tmp_path, REQUEUED, REQUEUED_STEP, LAST, LAST_STEP, OTHER)
    with pytest.raises(FormatError) as info:
        read(path, duplicates="error")
    message = str(info.value)
    assert message.startswith(f"{path}:4: field JobID: job 1 printed again (line 2)")
    assert "duplicates=last" in message
    lenient = read(path, lenient=True, duplicates="error")  # the later run: skipped
    assert len(lenient) == 2 and lenient.meta["skipped"] == 2  # with its step
    assert [line for line, _, _ in lenient.meta["rejects"]] == [4, 5]


def test_duplicates_last_keeps_the_last_run_and_lists_the_earlier_ones(tmp_path):
    path = dump(tmp_path, REQUEUED, REQUEUED_STEP, LAST, LAST_STEP, OTHER)
    workload = read(path, duplicates="last", order="file")
    assert [j.name for j in workload] == ["job_1", "job_2"]
    first = workload.jobs[0]
    assert first.run_time == 3600 and first.status == 1
    assert first.extras["slurm.Start"] == "2021-12-10T15:00:00"
    assert [t.extras["slurm.State"] for t in first.tasks] == ["COMPLETED"]
    assert workload.meta["superseded_runs"] == [(2, "1"), (3, "1.batch")]
    assert workload.meta["skipped"] == 0


def test_bad_duplicates_option(tmp_path):
    with pytest.raises(FormatError, match="duplicates must be"):
        read(dump(tmp_path, OTHER), duplicates="first")


def test_the_same_job_id_on_two_clusters_is_two_jobs(tmp_path):
    path = dump(
        tmp_path,
        job8(cluster="a"),
        job8(cluster="b", name="job_b"),
        step8(cluster="a"),
        step8(cluster="b", state="FAILED"),
    )
    workload = read(path, order="file")
    assert [j.name for j in workload] == ["job_1", "job_b"]
    assert [[t.extras["slurm.State"] for t in j.tasks] for j in workload] == [
        ["COMPLETED"],
        ["FAILED"],
    ]


def schedlab_cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEDLAB_")}
    return subprocess.run(
        [sys.executable, "-m", "schedlab", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_cli_repeats_are_one_line_exit_2_and_the_option_reads_them(tmp_path):
    copy = dump(tmp_path, job8(), job8(), OTHER, name="f8.sacct")
    result = schedlab_cli("validate", "--strict", str(copy))  # was "ok: 3 jobs"
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{copy}:3: error: " in result.stdout and "repeats line 2" in result.stdout
    assert "FAILED: 2 jobs; 1 error(s)" in result.stdout
    result = schedlab_cli("convert", str(copy), str(tmp_path / "o.swf"))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{copy}:3: field JobID: job 1 printed twice" in lines[0]
    runs = dump(tmp_path, REQUEUED, LAST, OTHER, name="runs.sacct")
    result = schedlab_cli("convert", str(runs), str(tmp_path / "o.swf"))
    assert result.returncode == 0, result.stderr
    warned = [x for x in result.stderr.splitlines() if x.startswith("schedlab: warning: ")]
    assert len(warned) == 1 and "job 1 line 3 (first: line 2)" in warned[0]
    result = schedlab_cli("convert", str(runs), str(tmp_path / "o.swf"), "-R", "duplicates=error")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    result = schedlab_cli("convert", str(runs), str(tmp_path / "o.swf"), "-R", "duplicates=last")
    assert result.returncode == 0, result.stderr
    jobs = [
        line
        for line in (tmp_path / "o.swf").read_text().splitlines()
        if line.strip() and not line.startswith(";")
    ]
    assert len(jobs) == 2


def test_a_real_dump_with_a_job_printed_five_times(slurm_dir):
    # slurm_sim_tools' dump prints job 7957382 five times, with other Constraints
    path = slurm_dir / "slurm_sim_tools_sacct_dump2110.log"
    with pytest.warns(SlurmRepeatWarning, match="4 record"):
        every = read(path)
    assert len(every) == 5
    assert every.meta["repeated_jobs"] == [(line, "7957382", 2) for line in (5, 6, 7, 8)]
    last = read(path, duplicates="last")
    assert len(last) == 1 and last.jobs[0].extras["slurm.Constraints"] == "cpu-a|cpu-b|gpu|"
    assert [line for line, _ in last.meta["superseded_runs"]] == [2, 3, 4, 5, 6, 7]
    with pytest.raises(FormatError, match=r":5: field JobID: job 7957382 printed again"):
        read(path, duplicates="error")


def test_the_writer_does_not_write_a_copy_its_reader_refuses(tmp_path):
    swf = tmp_path / "d.swf"
    line = "    1        0    1  10    2  -1  -1    2   -1  -1  1  1  1  1  1  1 -1 -1\n"
    swf.write_text(line + line, encoding="utf-8")
    out = tmp_path / "d.sacct"
    result = schedlab_cli("convert", str(swf), str(out))
    assert result.returncode == 0, result.stderr
    assert "job_number: 1 record, repeats a job record written before" in result.stderr
    back = read(out)  # was refused: "job 1 printed twice"
    assert len(back) == 2
    assert [j.extras["slurm.JobID"] for j in back] == ["1", "2"]
