"""The Google v3 writer and jobs with tasks: one distinct instance per task, and
every field the instances give back differently is reported (audit convert,
findings 1 and 5)."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import attrs
import schedlab
from schedlab.formats.google.fixtures import generate_trace
from schedlab.losses import Losses
from schedlab.model import Header, Job, Task, Workload

#: Job fields the writer derives from the instances of a job with tasks.
_DERIVED = (
    "allocated_processors",
    "requested_processors",
    "requested_memory",
    "nodes",
    "hosts",
    "average_cpu_time",
    "used_memory",
)
_TASK_FIELDS = ("task_id", "start_time", "end_time", "processors", "host", "status")


def _write_read(jobs: list[Job], tmp_path: Path) -> tuple[Workload, Losses]:
    out = tmp_path / "cell"
    with schedlab.collect_losses() as losses:
        schedlab.write(Workload.from_jobs(jobs, Header()), out, format="google")
    return schedlab.read(out, format="google"), losses


def _instance_keys(directory: Path) -> list[tuple[str, int]]:
    keys = set()
    for path in sorted(directory.glob("instance_events-*.json.gz")):
        with gzip.open(path, "rt") as fh:
            for line in fh:
                row = json.loads(line)
                keys.add((row["collection_id"], row["instance_index"]))
    return sorted(keys)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float | int) and isinstance(b, float | int):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def _differences(source: Job, back: Job) -> set[str]:
    """The fields of ``_DERIVED`` (and ``tasks``) that ``back`` gives differently."""
    out = {f for f in _DERIVED if not _same(getattr(source, f), getattr(back, f))}
    mine = [tuple(getattr(t, f) for f in _TASK_FIELDS) for t in source.tasks]
    again = [tuple(getattr(t, f) for f in _TASK_FIELDS) for t in back.tasks]
    if len(mine) != len(again) or not all(
        _same(a, b) for x, y in zip(mine, again, strict=True) for a, b in zip(x, y, strict=True)
    ):
        out.add("tasks")
    return out


def _reported(losses: Losses) -> set[str]:
    return {f for f in losses.fields() if f in (*_DERIVED, "tasks")}


def _slurm_like_job() -> Job:
    # a 16-processor job on 2 nodes with two steps (batch + one srun step), as the
    # Slurm reader gives it: step ids that are not instance indices, host names
    return Job(
        job_number=7,
        submit_time=0,
        wait_time=10,
        run_time=100,
        allocated_processors=16,
        requested_processors=16,
        requested_memory=1024,
        status=1,
        nodes=2,
        hosts=("n1", "n2"),
        tasks=(
            Task("batch", start_time=10, end_time=110, processors=8, host="n1", status=1),
            Task("0", start_time=11, end_time=109, processors=16, host="n1,n2", status=1),
        ),
    )


def test_tasks_become_distinct_instances_and_every_change_is_reported(tmp_path: Path) -> None:
    job = _slurm_like_job()
    back, losses = _write_read([job], tmp_path)
    # one instance per task: two keys, not one merged instance
    assert _instance_keys(tmp_path / "cell") == [("7", 0), ("7", 1)]
    (again,) = back.jobs
    assert len(again.tasks) == 2
    assert [t.processors for t in again.tasks] == [16.0, 8.0]  # step "0" keeps index 0
    assert again.nodes == 2
    assert again.requested_memory == 1024  # the job's request per processor, per instance
    # the instances add up to 24 processors: said, not silent
    assert (again.allocated_processors, again.requested_processors) == (24, 24)
    assert losses.count("allocated_processors") == 1
    assert losses.count("requested_processors") == 1
    assert again.hosts == ()
    assert losses.count("hosts") == 1
    (tasks_loss,) = [loss for loss in losses if loss.field == "tasks"]
    assert tasks_loss.records == 1
    assert "ids renumbered" in tasks_loss.action
    assert "host not written" in tasks_loss.action
    assert _differences(job, again) == _reported(losses)


def test_tasks_that_fit_the_instances_come_back_unchanged_and_unreported(tmp_path: Path) -> None:
    job = Job(
        job_number=3,
        submit_time=100,
        wait_time=5,
        run_time=50,
        allocated_processors=6,
        requested_processors=6,
        requested_memory=2048,
        status=1,
        nodes=3,
        hosts=("11", "12"),
        tasks=(
            Task("0", start_time=105, end_time=155, processors=2, host="11", status=1),
            Task("1", start_time=105, end_time=150, processors=2, host="12", status=0),
            Task("2", start_time=106, end_time=155, processors=2, host="12", status=5),
        ),
    )
    back, losses = _write_read([job], tmp_path)
    (again,) = back.jobs
    assert _differences(job, again) == set()
    assert _reported(losses) == set()
    assert [(t.task_id, t.host, t.status) for t in again.tasks] == [
        ("0", "11", 1),
        ("1", "12", 0),
        ("2", "12", 5),
    ]


def test_duplicate_and_unordered_task_ids(tmp_path: Path) -> None:
    dup = Job(
        job_number=1,
        submit_time=0,
        wait_time=0,
        run_time=10,
        allocated_processors=2,
        requested_processors=2,
        status=1,
        nodes=2,
        tasks=(Task("0", 0, 10, 1, status=1), Task("0", 0, 10, 1, status=1)),
    )
    unordered = attrs.evolve(
        dup, job_number=2, tasks=(Task("1", 0, 10, 1, status=1), Task("0", 0, 9, 1, status=1))
    )
    back, losses = _write_read([dup, unordered], tmp_path)
    assert _instance_keys(tmp_path / "cell") == [("1", 0), ("1", 1), ("2", 0), ("2", 1)]
    assert [len(j.tasks) for j in back.jobs] == [2, 2]
    assert [(j.allocated_processors, j.nodes) for j in back.jobs] == [(2, 2), (2, 2)]
    actions = sorted(loss.action for loss in losses if loss.field == "tasks")
    assert actions == [
        "task ids renumbered (not distinct instance indices)",
        "task order changed (read back by instance index)",
    ]
    for job, again in zip((dup, unordered), back.jobs, strict=True):
        assert _differences(job, again) == {"tasks"}


def test_unknown_job_counts_filled_from_tasks_are_reported(tmp_path: Path) -> None:
    job = Job(
        job_number=4,
        submit_time=20.0,
        wait_time=1.0,
        run_time=7.0,
        status=5,
        tasks=(Task("0", processors=2.0), Task("1", processors=2.0)),
    )
    back, losses = _write_read([job], tmp_path)
    (again,) = back.jobs
    assert (again.requested_processors, again.allocated_processors, again.nodes) == (4, 4, 2)
    assert _differences(job, again) == _reported(losses)
    for field in ("requested_processors", "allocated_processors", "nodes"):
        assert losses.count(field) == 1


def test_changed_schedule_of_a_google_trace_reports_the_usage_it_drops(tmp_path: Path) -> None:
    trace = generate_trace(tmp_path / "trace", collections=60, seed=3)
    workload = schedlab.read(trace.directory)
    with schedlab.collect_losses() as losses:
        schedlab.write(workload, tmp_path / "same", format="google")
    assert _reported(losses) == set()  # kept events: nothing changes, nothing claimed
    # every job 1000 s later: the events (and the usage kept with them) are made anew
    shifted = [
        attrs.evolve(
            j,
            submit_time=j.submit_time + 1000,
            tasks=tuple(
                attrs.evolve(
                    t,
                    start_time=None if t.start_time is None else t.start_time + 1000,
                    end_time=None if t.end_time is None else t.end_time + 1000,
                )
                for t in j.tasks
            ),
        )
        for j in workload.jobs
        if j.submit_time is not None
    ]
    with schedlab.collect_losses() as losses:
        schedlab.write(Workload(workload.header, jobs=shifted), tmp_path / "moved", format="google")
    back = {j.extras["collection_id"]: j for j in schedlab.read(tmp_path / "moved").jobs}
    lost_cpu = sum(
        1
        for j in shifted
        if j.average_cpu_time is not None
        and back[j.extras["collection_id"]].average_cpu_time is None
    )
    assert lost_cpu > 0
    assert losses.count("average_cpu_time") == lost_cpu


def test_zero_processors_report_both_counts_and_no_false_memory_claim(tmp_path: Path) -> None:
    ran = Job(
        job_number=2,
        submit_time=5,
        wait_time=0,
        run_time=0,
        allocated_processors=0,
        requested_processors=0,
        status=1,
    )
    with_memory = attrs.evolve(ran, job_number=3, requested_memory=0)
    back, losses = _write_read([ran, with_memory], tmp_path)
    assert [(j.allocated_processors, j.requested_processors) for j in back.jobs] == [(1, 1)] * 2
    assert losses.count("allocated_processors") == 2
    assert losses.count("requested_processors") == 2
    assert [j.requested_memory for j in back.jobs] == [None, 0]
    assert "requested_memory" not in losses  # 0 read back as 0: nothing lost


def test_zero_processors_with_memory_reports_the_memory(tmp_path: Path) -> None:
    job = Job(
        job_number=2,
        submit_time=5,
        wait_time=0,
        run_time=0,
        allocated_processors=0,
        requested_processors=0,
        requested_memory=512,
        status=1,
    )
    back, losses = _write_read([job], tmp_path)
    assert back.jobs[0].requested_memory == 0
    assert losses.count("requested_memory") == 1
