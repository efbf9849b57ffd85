"""Audit "embed" (schedlab used as a library): one source of truth for a
workload's jobs (Job objects or columns, never both), policy objects reusable
across runs, streaming workloads that pickle, and a short ``repr(JobColumns)``."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Iterator

import numpy as np
import pytest
import schedlab
from schedlab import Job, JobColumns, Workload

# Two 4-processor jobs on a 4-processor machine: job 2 waits for job 1.
TWO_JOBS = {
    "job_number": [1, 2],
    "submit_time": [0, 10],
    "wait_time": [0, 90],
    "run_time": [100, 100],
    "allocated_processors": [4, 4],
    "requested_processors": [4, 4],
    "requested_time": [100, 100],
    "user_id": [1, 2],
    "status": [1, 1],
}


def _two_job_objects() -> list[Job]:
    return list(Workload.from_arrays(TWO_JOBS).to_arrays().to_jobs())


def _wait_of_job_2(workload: Workload) -> float:
    result = schedlab.simulate(workload, procs=4, backfill="none", progress=False)
    return float(result.workload.to_arrays()["wait_time"][1])


def _written_run_times(workload: Workload, path) -> list[float]:
    schedlab.write(workload, path)
    return schedlab.read(path).to_arrays()["run_time"].tolist()


# --------------------------------------------------------------------------- finding 1


def test_edits_to_the_jobs_of_a_columnar_workload_are_seen_by_every_consumer(tmp_path):
    workload = Workload.from_arrays(TWO_JOBS)  # columns, as a reader returns them
    assert _wait_of_job_2(workload) == 90.0
    for job in workload.jobs:
        job.run_time *= 10
        job.requested_time *= 10
    assert workload.to_arrays()["run_time"].tolist() == [1000.0, 1000.0]
    assert _wait_of_job_2(workload) == 990.0
    work = schedlab.compute_metrics(workload, "work").value("work")  # processor-hours
    assert work == pytest.approx(2 * 4 * 1000 / 3600)
    assert _written_run_times(workload, tmp_path / "w.swf") == [1000.0, 1000.0]
    assert [job.run_time for job in workload] == [1000, 1000]
    pandas = pytest.importorskip("pandas")
    assert workload.to_pandas()["run_time"].tolist() == [1000.0, 1000.0]
    assert isinstance(workload.to_pandas(), pandas.DataFrame)


def test_edits_to_held_job_objects_after_a_simulation_are_seen(tmp_path):
    """The audit's mut2.py: job 1 made 10 times longer after one simulation, through
    the list given to ``from_jobs`` and through ``w.jobs`` read earlier."""
    jobs = _two_job_objects()
    workload = Workload.from_jobs(jobs)
    held = workload.jobs
    assert _wait_of_job_2(workload) == 90.0
    jobs[0].run_time = jobs[0].requested_time = 1000
    assert _wait_of_job_2(workload) == 990.0
    held[1].run_time = 7
    assert workload.to_arrays()["run_time"].tolist() == [1000.0, 7.0]
    assert _written_run_times(workload, tmp_path / "w.swf") == [1000.0, 7.0]


def test_jobs_added_or_removed_through_the_list_are_seen():
    workload = Workload.from_arrays(TWO_JOBS)
    workload.to_arrays()
    workload.jobs.append(Job(job_number=3, submit_time=20, run_time=5, requested_processors=1))
    assert len(workload) == 3
    assert workload.to_arrays()["job_number"].tolist() == [1.0, 2.0, 3.0]
    del workload.jobs[0]
    assert workload.to_arrays()["job_number"].tolist() == [2.0, 3.0]
    extras = workload.to_arrays().extras
    assert extras is None
    workload.jobs[0].extras["site"] = "a"
    assert workload.to_arrays().extras == [{"site": "a"}, {}]


def test_columns_of_a_workload_holding_job_objects_are_a_read_only_snapshot():
    workload = Workload.from_jobs(_two_job_objects())
    columns = workload.to_arrays()
    assert not columns["run_time"].flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        columns["run_time"][0] = 5.0
    workload.jobs[0].run_time = 5
    assert columns["run_time"][0] == 100.0  # a snapshot: the next call has the edit
    assert workload.to_arrays()["run_time"][0] == 5.0


def test_columns_handed_out_before_jobs_was_read_become_read_only():
    """Once ``jobs`` is read the Job objects are the data: an array got earlier from
    ``to_arrays()`` can no longer be written (the write would be ignored)."""
    workload = Workload.from_arrays(TWO_JOBS)
    earlier = workload.to_arrays()
    earlier["run_time"][0] = 50.0  # the columns are the data: the owner may write
    assert workload.jobs[0].run_time == 50
    with pytest.raises(ValueError, match="read-only"):
        earlier["run_time"][0] = 60.0
    assert workload.jobs[0].run_time == 50


def test_a_columnar_workload_keeps_its_columns_when_nobody_asks_for_jobs():
    """No conversion to Job objects and back when nobody asked for ``jobs``: the
    speed of ``simulate`` on a large read trace depends on it."""
    workload = Workload.from_arrays(TWO_JOBS)
    columns = workload.to_arrays()
    _wait_of_job_2(workload)
    schedlab.compute_metrics(workload, "work")
    list(workload)  # iterating gives new Job objects, it does not convert
    assert not workload.has_job_objects()
    assert workload.to_arrays() is columns
    assert columns["run_time"].flags.writeable


# --------------------------------------------------------------------------- finding 3


def _contended() -> Workload:
    """Enough jobs of several users with bad and good estimates to make PSP classes
    and fair-share usage matter."""
    rng = np.random.default_rng(7)
    n = 400
    run = rng.integers(10, 1000, n).astype(float)
    requested = run * rng.choice([1.0, 1.5, 4.0, 20.0], n)
    return Workload.from_arrays(
        {
            "job_number": np.arange(1, n + 1),
            "submit_time": np.sort(rng.integers(0, 20_000, n)).astype(float),
            "run_time": run,
            "requested_time": requested,
            "requested_processors": rng.integers(1, 9, n),
            "user_id": rng.integers(1, 9, n),
        }
    )


@pytest.mark.parametrize(
    "name, options",
    [
        ("psp", {}),
        ("multifactor", {}),
        ("multifactor", {"weight_psp": 2000.0, "half_life": 3600.0}),
    ],
    ids=["psp", "multifactor", "multifactor-psp"],
)
def test_a_policy_object_reused_gives_the_same_schedule_as_by_name(name, options):
    workload = _contended()
    registry = schedlab.get_registry()
    by_name = schedlab.simulate(
        workload, procs=8, policy=name, policy_options=options or None, progress=False
    )
    policy = registry.policy(name).factory(**options)
    first = schedlab.simulate(workload, procs=8, policy=policy, progress=False)
    second = schedlab.simulate(workload, procs=8, policy=policy, progress=False)
    assert np.array_equal(first.start, by_name.start)
    assert np.array_equal(second.start, first.start)


# --------------------------------------------------------------------------- finding 4


def _streaming() -> Workload:
    columns = Workload.from_arrays(TWO_JOBS).to_arrays()

    def chunks() -> Iterator[JobColumns]:  # a closure, as readers make
        yield columns.take(np.array([0]))
        yield columns.take(np.array([1]))

    return Workload.streaming(schedlab.Header(), chunks, meta={"source": "closure"})


def test_a_streaming_workload_pickles_and_copies():
    for copied in (
        lambda w: pickle.loads(pickle.dumps(w)),
        copy.deepcopy,
        copy.copy,
    ):
        workload = _streaming()
        assert workload.is_streaming
        back = copied(workload)
        assert isinstance(back, Workload) and not back.is_streaming
        assert back.to_arrays()["run_time"].tolist() == [100.0, 100.0]
        assert back.meta == {"source": "closure"}
        assert _wait_of_job_2(back) == 90.0


def test_streaming_reads_pickle(tmp_path):
    source = Workload.from_arrays(TWO_JOBS)
    schedlab.write(source, tmp_path / "t.swf")
    schedlab.write(source, tmp_path / "t.xml", "sss")
    for workload in (
        schedlab.read(tmp_path / "t.swf", stream=True),
        schedlab.read(tmp_path / "t.xml"),  # SSS always streams
    ):
        back = pickle.loads(pickle.dumps(workload))
        assert type(back) is type(workload)
        assert back.to_arrays()["job_number"].tolist() == [1.0, 2.0]
        assert back.meta == workload.meta


def test_workloads_with_job_objects_still_pickle():
    workload = Workload.from_jobs(_two_job_objects())
    back = pickle.loads(pickle.dumps(workload))
    assert back.jobs == workload.jobs and back.has_job_objects()


# --------------------------------------------------------------------------- finding 5


def test_repr_of_job_columns_is_one_short_line():
    n = 5_000
    columns = Workload.from_arrays(
        {"job_number": np.arange(1, n + 1)}, extras=[{"note": "x" * 100}] * n
    ).to_arrays()
    assert repr(columns) == "<JobColumns 5,000 jobs, 18 fields, extras>"
    assert repr(JobColumns.empty(1)) == "<JobColumns 1 job, 18 fields>"
    assert repr(JobColumns({"run_time": np.zeros(3)})) == "<JobColumns 3 jobs, 1 field>"
