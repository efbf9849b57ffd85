"""The common data model: jobs, headers, columns, workloads, the cattrs converter."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from schedlab.converters import job_from_dict, job_to_dict
from schedlab.errors import FormatError
from schedlab.model import (
    SWF_FIELDS,
    SWF_HEADER_LABELS,
    Dependency,
    Header,
    HeaderEntry,
    Job,
    JobColumns,
    Task,
    Workload,
)


def test_the_model_has_the_18_swf_fields_and_26_header_labels():
    assert len(SWF_FIELDS) == 18
    assert len(SWF_HEADER_LABELS) == 26
    assert Job().swf_values() == (None,) * 18


def test_start_and_end_follow_from_submit_wait_run():
    job = Job(submit_time=10, wait_time=5, run_time=100)
    assert (job.start_time, job.end_time) == (15, 115)
    assert Job(submit_time=10).start_time is None


def test_header_typed_access_and_tables():
    header = Header(
        [
            HeaderEntry("Version", "2.2"),
            HeaderEntry("MaxNodes", "1024 (512 256 256)"),
            HeaderEntry("MaxProcs", "8192"),
            HeaderEntry("Queue", " 1  batch  (long jobs) "),
            HeaderEntry("Queue", " 2 0 "),
            HeaderEntry("Note", "first", continuation=("continued",)),
            HeaderEntry("Note", "second"),
            HeaderEntry("Custom", "kept"),
            HeaderEntry(None, "free text"),
        ]
    )
    assert header.max_procs == 8192 and header.max_nodes == 1024
    assert header.machine_size() == 8192
    assert [(q.number, q.name) for q in header.queues] == [(1, "batch"), (2, "0")]
    assert header.notes == ["first\ncontinued", "second"]
    assert header.unknown_labels() == ["Custom"]
    header.set("MaxProcs", 64)
    assert header.max_procs == 64
    header.set_names("User", {2: "bob", 1: "alice smith"})
    assert header.names("User") == {1: "alice_smith", 2: "bob"}


def test_columns_round_trip_jobs_with_unknowns_and_extras():
    jobs = [
        Job(job_number=1, submit_time=0.5, run_time=10, status=1, extras={"k": "v"}),
        Job(job_number=2, submit_time=3, run_time=None, user_id=7),
    ]
    workload = Workload.from_jobs(jobs)
    cols = workload.to_arrays()
    assert math.isnan(cols["run_time"][1]) and cols["user_id"][1] == 7
    back = list(Workload.from_arrays(cols))
    assert back[0].submit_time == 0.5 and back[0].extras == {"k": "v"}
    assert back[1].run_time is None and isinstance(back[1].job_number, int)


def test_from_matrix_maps_minus_one_to_unknown():
    matrix = np.full((2, 18), -1.0)
    matrix[:, 0] = [1, 2]
    cols = JobColumns.from_matrix(matrix)
    assert np.isnan(cols["submit_time"]).all()
    assert (cols.to_matrix() == matrix).all()


def test_streaming_workload_reiterates_its_chunks():
    calls = []

    def chunks():
        calls.append(1)
        yield JobColumns.from_jobs([Job(job_number=1)])
        yield [Job(job_number=2)]

    workload = Workload.streaming(Header(), chunks)
    assert workload.is_streaming
    assert [j.job_number for j in workload] == [1, 2]
    assert [j.job_number for j in workload] == [1, 2]
    assert len(calls) == 2
    assert workload.to_arrays()["job_number"].tolist() == [1.0, 2.0]
    assert not workload.is_streaming


def test_from_arrays_rejects_unknown_fields_and_ragged_columns():
    with pytest.raises(ValueError, match="not SWF fields"):
        Workload.from_arrays({"runtime": [1]})
    with pytest.raises(ValueError, match="different lengths"):
        Workload.from_arrays({"run_time": [1, 2], "submit_time": [0]})


numbers = st.one_of(st.none(), st.integers(0, 10**9), st.floats(0, 1e9, allow_nan=False))


@given(
    st.builds(
        Job,
        job_number=st.integers(1, 10**6),
        submit_time=numbers,
        run_time=numbers,
        name=st.one_of(st.none(), st.text(max_size=8)),
        hosts=st.tuples(st.text(max_size=5)),
        tasks=st.tuples(st.builds(Task, task_id=st.text(max_size=4))),
        dependencies=st.tuples(st.builds(Dependency, job=st.integers(1, 9))),
        extras=st.dictionaries(st.text(max_size=5), st.integers()),
    )
)
def test_converter_round_trips_jobs(job):
    assert job_from_dict(job_to_dict(job)) == job


def test_converter_rejects_bad_records_with_a_readable_error():
    with pytest.raises(FormatError, match="not a valid job record"):
        job_from_dict({"job_number": 1, "bogus": 2})


def test_materialising_a_streaming_workload_keeps_rich_fields_and_extras():
    def chunks():
        yield [Job(job_number=1, name="x", hosts=("n1",), extras={"a": 1})]

    workload = Workload.streaming(Header(), chunks)
    assert len(workload) == 1  # len() must not drop what columns cannot hold
    (job,) = workload.jobs
    assert (job.name, job.hosts, job.extras) == ("x", ("n1",), {"a": 1})
    assert next(iter(workload)).name == "x"
    assert workload.to_arrays().extras == [{"a": 1}]
