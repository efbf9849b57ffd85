"""The Google v3 reader: real rows, generated multi-shard traces with known facts,
every encoding, special times, alloc sets, dependencies, capacity, exports."""

from __future__ import annotations

import gzip
import json
import math
import shutil
from pathlib import Path

import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.formats.google import frames as F
from schedlab.formats.google.fixtures import generate_trace
from schedlab.formats.google.schema import (
    EVENT_TYPES,
    TERMINAL_STATUS,
    TIME_AFTER_TRACE,
    TIME_BEFORE_TRACE,
    TIME_OFFSET_US,
    tier_of,
)
from schedlab.formats.google.v3_reader import discover, sniff_v3
from schedlab.model import Dependency


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """A 2000-collection trace in 3 shards per table, in all three encodings."""
    directory = tmp_path_factory.mktemp("google") / "trace"
    return generate_trace(directory, collections=2000, shards=3, seed=7, keep_truth=True)


@pytest.fixture(scope="module")
def workload(trace):
    return schedlab.read(trace.directory)


def _by_collection(workload):
    return {j.extras["collection_id"]: j for j in workload.jobs}


# --------------------------------------------------------------------------- real rows


def test_real_doc_rows(shared_data: Path):
    directory = shared_data / "google" / "clusterdata2019_v3_sample"
    w = schedlab.read(directory)
    assert w.meta["reader"] == "google"
    (job,) = w.jobs  # the collection_events row is a JOB; the instance row is an alloc set's
    assert job.extras["collection_id"] == 394454435790
    assert job.priority == 200 and job.extras["tier"] == "prod" and job.queue_number == 4
    assert job.extras["scheduling_class"] == 1
    assert job.extras["start_raw"] == 1965263509076
    assert job.submit_time is None  # no SUBMIT event in the sample
    assert job.dependencies == (Dependency("394454434726", "parent"),)
    assert job.extras["vertical_scaling"] == 3 and job.extras["scheduler"] == 0
    assert w.header.names("User") == {1: "+OVSEukSmo6ma+28nY4raBvhviWrpQLsc+DWQcTGV4E="}
    (alloc,) = w.meta["alloc_sets"]
    assert alloc["collection_id"] == 380676713775 and alloc["instances"] == 1
    assert w.meta["summary"]["tables"] == {
        "collection_events": {"shards": 1, "rows": 1},
        "instance_events": {"shards": 1, "rows": 1},
    }


def test_real_instance_row_alone(shared_data: Path):
    path = (
        shared_data / "google" / "clusterdata2019_v3_sample" / "instance_events-doc-example.jsonl"
    )
    w = schedlab.read(path, format="google")
    assert len(w) == 0
    (alloc,) = w.meta["alloc_sets"]
    assert alloc["events"] == []  # known only from its instance
    assert w.meta["summary"]["collections"] == {"ALLOC_SET": 1}


# --------------------------------------------------------------------------- generated


def test_detected_as_google(trace):
    assert sniff_v3(b"", str(trace.directory))
    assert schedlab.read(trace.directory).meta["reader"] == "google"
    shards = discover(trace.directory)
    assert len(shards) == 15 and [s.index for s in shards] == list(range(15))


def test_counts_match_generated_rows(trace, workload):
    tables = workload.meta["summary"]["tables"]
    assert {t: v["rows"] for t, v in tables.items()} == trace.rows
    assert all(v["shards"] == 3 for v in tables.values())
    jobs = [c for c in trace.truth.values() if c["collection_type"] == 0]
    assert len(workload) == len(jobs)
    assert len(workload.meta["alloc_sets"]) == len(trace.truth) - len(jobs)
    assert workload.meta["skipped"] == 0


def test_every_job_matches_the_generated_facts(trace, workload):
    jobs = _by_collection(workload)
    numbers = {cid: j.job_number for cid, j in jobs.items()}
    for cid, facts in trace.truth.items():
        if facts["collection_type"] != 0:
            continue
        job = jobs[cid]
        assert job.extras["submit_raw"] == facts["submit"]
        assert job.extras["start_raw"] == facts["start"]
        assert job.extras["end_raw"] == facts["end"]
        if facts["end_type"] is None:
            assert job.status is None and job.extras["end_event"] is None
        else:
            assert job.status == TERMINAL_STATUS[facts["end_type"]]
            assert job.extras["end_event"] == EVENT_TYPES[facts["end_type"]]
        assert len(job.tasks) == facts["instances"] == job.nodes
        assert job.priority == facts["priority"]
        assert job.extras["tier"] == tier_of(facts["priority"])
        assert job.requested_processors == math.ceil(
            facts["cpus"] * facts["instances"] * 100 - 1e-9
        )
        assert job.extras["alloc_collection_id"] == (facts["alloc"] or 0)
        expected = [Dependency(numbers.get(p, str(p)), "end") for p in facts["start_after"]]
        if facts["parent"] is not None:
            expected.append(Dependency(numbers[facts["parent"]], "parent"))
        assert list(job.dependencies) == expected
        task_status = [t.status for t in job.tasks]
        assert task_status == [TERMINAL_STATUS.get(e) for e in facts["instance_end_types"]]


def test_times_and_special_values(trace, workload):
    for job in workload.jobs:
        raw = job.extras["submit_raw"]
        if raw == TIME_BEFORE_TRACE:
            assert job.submit_time is None and job.extras["submit_special"] == "before_trace"
            assert job.wait_time is None
        elif raw is not None:
            assert job.submit_time == (raw - TIME_OFFSET_US) / 1e6
        end = job.extras["end_raw"]
        if end == TIME_AFTER_TRACE:
            assert job.run_time is None and job.extras["end_special"] == "after_trace"
            assert job.status is not None  # the end event is known, its time is not
        if job.run_time is not None:
            assert job.run_time == pytest.approx((end - job.extras["start_raw"]) / 1e6)
    specials = workload.meta["summary"]["special_times"]
    assert specials["submit_before_trace"] > 0 and specials["end_after_trace"] > 0


def test_clip_mode_maps_special_times_to_the_trace_bounds(trace, workload):
    clipped = schedlab.read(trace.directory, special_times="clip")
    end = max(j.end_time for j in workload.jobs if j.end_time is not None)
    for a, b in zip(workload.jobs, clipped.jobs, strict=True):
        if a.extras["submit_raw"] == TIME_BEFORE_TRACE:
            assert b.submit_time == -600.0
        elif a.submit_time is not None:
            assert b.submit_time == a.submit_time
        if a.extras["end_raw"] == TIME_AFTER_TRACE:
            assert (
                b.start_time is None
                or b.end_time == pytest.approx(end, abs=1e-6)
                or (b.end_time >= end)
            )


def test_task_events_are_kept_in_time_order(workload):
    job = next(j for j in workload.jobs if len(j.tasks) > 2)
    for task in job.tasks:
        times = [e[0] for e in task.extras["events"]]
        assert times == sorted(times)
        assert task.extras["events"][0][1] == 0  # SUBMIT first


def test_usage_aggregated(trace, workload):
    with_usage = [j for j in workload.jobs if j.extras["usage_windows"]]
    assert with_usage
    job = with_usage[0]
    cpu_seconds = sum(t.extras["usage"]["cpu_seconds"] for t in job.tasks if t.extras["usage"])
    assert job.extras["used_cpu_seconds_ncu"] == pytest.approx(cpu_seconds)
    assert job.average_cpu_time == pytest.approx(cpu_seconds * 100 / job.allocated_processors)
    assert job.used_memory > 0


def test_capacity_and_max_procs(trace, workload):
    capacity = workload.meta["capacity"]
    assert capacity["peak_machines"] <= 40 and capacity["machines"][0] >= 30
    assert workload.header.max_procs == math.floor(capacity["peak_cpus"] * 100 + 1e-9)
    assert workload.header.machine_size() == workload.header.max_procs
    assert workload.meta["summary"]["max_procs"] == workload.header.max_procs


def test_names_numbered_in_job_order(workload):
    users = workload.header.names("User")
    first_user = workload.jobs[0].user_id
    assert first_user == 1 and users[1] == workload.jobs[0].extras["user"]
    for job in workload.jobs[:50]:
        assert users[job.user_id] == job.extras["user"]
    assert workload.meta["names"]["user"] == users


def test_alloc_sets_are_linked_from_jobs(workload):
    jobs = {j.job_number: j for j in workload.jobs}
    linked = [a for a in workload.meta["alloc_sets"] if a["jobs"]]
    assert linked
    for alloc in linked:
        for number in alloc["jobs"]:
            assert jobs[number].extras["alloc_collection_id"] == alloc["collection_id"]


def test_engines_agree(trace, workload):
    python = schedlab.read(trace.directory, engine="python")
    assert python.jobs == workload.jobs
    assert python.meta["summary"] == workload.meta["summary"]
    assert python.meta["engine"] == "python"


def test_shard_order_does_not_change_the_result(trace, workload, tmp_path):
    copy = tmp_path / "renamed"
    copy.mkdir()
    for table, paths in trace.shards.items():
        for i, path in enumerate(reversed(paths)):
            shutil.copy(path, copy / f"{table}-{i:012d}.json.gz")
    other = schedlab.read(copy)
    assert [j.extras["collection_id"] for j in other.jobs] == [
        j.extras["collection_id"] for j in workload.jobs
    ]
    assert [j.swf_values() for j in other.jobs] == [j.swf_values() for j in workload.jobs]


def test_subdirectory_per_table_and_plain_json(trace, workload, tmp_path):
    for table, paths in trace.shards.items():
        (tmp_path / table).mkdir()
        for path in paths:
            with gzip.open(path) as src:
                (tmp_path / table / path.name.removesuffix(".gz")).write_bytes(src.read())
    assert schedlab.read(tmp_path).jobs == workload.jobs


def test_parquet_and_csv_exports(tmp_path):
    pytest.importorskip("pyarrow")
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [
        {
            "time": "700000000",
            "type": "SUBMIT",
            "collection_id": "5",
            "collection_type": 0,
            "priority": 110,
            "user": "u1",
            "start_after_collection_ids": [],
        },
        {
            "time": 800000000,
            "type": 3,
            "collection_id": 5,
            "collection_type": 0,
            "priority": 110,
            "user": "u1",
            "start_after_collection_ids": [],
        },
        {
            "time": 900000000,
            "type": "FINISH",
            "collection_id": 5,
            "collection_type": 0,
            "priority": 110,
            "user": "u1",
            "start_after_collection_ids": [],
        },
    ]
    instance = {
        "time": 800000000,
        "type": 3,
        "collection_id": 5,
        "instance_index": 0,
        "machine_id": 9,
        "resource_request": {"cpus": 0.5, "memory": 0.25},
    }
    json_dir = tmp_path / "json"
    json_dir.mkdir()
    (json_dir / "collection_events-000000000000.json").write_text(
        "".join(json.dumps(r) + "\n" for r in rows)
    )
    (json_dir / "instance_events-000000000000.json").write_text(json.dumps(instance) + "\n")
    expected = schedlab.read(json_dir)
    (job,) = expected.jobs
    assert (job.submit_time, job.wait_time, job.run_time) == (100.0, 100.0, 100.0)
    assert job.status == 1 and job.requested_processors == 50 and job.extras["tier"] == "beb"

    pq_dir = tmp_path / "parquet"
    pq_dir.mkdir()
    normalized = [
        {
            "time": int(r["time"]),
            "type": {"SUBMIT": 0, "FINISH": 6}.get(r["type"], r["type"]),
            "collection_id": 5,
            "collection_type": 0,
            "priority": 110,
            "user": "u1",
            "start_after_collection_ids": [],
        }
        for r in rows
    ]
    pq.write_table(
        pa.Table.from_pylist(normalized), pq_dir / "collection_events-000000000000.parquet"
    )
    pq.write_table(
        pa.Table.from_pylist([instance]), pq_dir / "instance_events-000000000000.parquet"
    )
    assert schedlab.read(pq_dir).jobs == expected.jobs

    csv_dir = tmp_path / "csv"
    csv_dir.mkdir()
    (csv_dir / "collection_events-000000000000.csv").write_text(
        "time,type,collection_id,collection_type,priority,user,start_after_collection_ids\n"
        "700000000,SUBMIT,5,0,110,u1,[]\n800000000,3,5,0,110,u1,\n900000000,6,5,0,110,u1,[]\n"
    )
    (csv_dir / "instance_events-000000000000.csv").write_text(
        "time,type,collection_id,instance_index,machine_id,resource_request.cpus,"
        "resource_request.memory\n800000000,3,5,0,9,0.5,0.25\n"
    )
    assert schedlab.read(csv_dir).jobs == expected.jobs


def test_tasks_option_off_keeps_totals(trace, workload):
    light = schedlab.read(trace.directory, tasks=False)
    assert all(not j.tasks for j in light.jobs)
    assert [j.swf_values() for j in light.jobs] == [j.swf_values() for j in workload.jobs]


def test_cpu_scale_changes_sizes_and_machine(trace, workload):
    coarse = schedlab.read(trace.directory, cpu_scale=10)
    assert coarse.header.max_procs == math.floor(workload.meta["capacity"]["peak_cpus"] * 10)
    assert coarse.meta["normalization"]["cpu_scale"] == 10
    for a, b in zip(workload.jobs[:100], coarse.jobs[:100], strict=True):
        if a.requested_processors is not None:
            assert b.requested_processors == max(
                1, math.ceil(a.extras["requested_cpus"] * 10 - 1e-9)
            )


def test_bad_options(trace):
    with pytest.raises(schedlab.UsageError, match="special_times"):
        schedlab.read(trace.directory, special_times="maybe")
    with pytest.raises(schedlab.UsageError, match="cpu_scale"):
        schedlab.read(trace.directory, cpu_scale=0)


# --------------------------------------------------------------------------- properties

_int64 = st.integers(min_value=0, max_value=2**63 - 1)


@st.composite
def _collection_row(draw):
    row = {
        "time": draw(st.sampled_from([0, 2**63 - 1]) | _int64),
        "type": draw(st.integers(0, 10)),
        "collection_id": draw(_int64),
        "priority": draw(st.none() | st.integers(0, 500)),
        "user": draw(st.none() | st.text(min_size=1, max_size=8)),
        "start_after_collection_ids": draw(st.lists(_int64, max_size=3)),
        "scheduler": draw(st.none() | st.integers(0, 1)),
    }
    style = draw(st.sampled_from(["str", "num", "name"]))
    encoded = {}
    for key, value in row.items():
        if value is None and draw(st.booleans()):
            continue  # a missing key means the same as null
        if style == "str" and key in ("time", "collection_id"):
            value = str(value)
        elif style == "str" and key == "start_after_collection_ids":
            value = [str(v) for v in value]
        elif style == "name" and key == "type":
            value = EVENT_TYPES[value]
        encoded[key] = value
    return row, encoded


@settings(max_examples=60, deadline=None)
@given(st.lists(_collection_row(), min_size=1, max_size=8))
def test_any_encoding_parses_to_the_same_values(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("prop") / "collection_events-000000000000.json"
    path.write_text("".join(json.dumps(enc) + "\n" for _, enc in rows))
    exact = F.parse_exact(path, "collection_events", "json", 0)
    for i, (row, _) in enumerate(rows):
        assert exact["time"][i] == row["time"]
        assert exact["type"][i] == row["type"]
        assert exact["collection_id"][i] == row["collection_id"]
        assert exact["user"][i] == row["user"]
        assert exact["start_after_collection_ids"][i] == row["start_after_collection_ids"]
        assert exact["priority"][i] == (F.NULL_INT if row["priority"] is None else row["priority"])
    if F.pyarrow_available():
        fast = F.parse_fast(path, "collection_events", 0)
        if fast is not None:  # irregular shards go to the exact parser
            for name in exact:
                assert list(fast[name]) == list(exact[name]), name


def test_single_files_are_detected(trace, shared_data: Path):
    from schedlab.api import detect_reader

    shard = trace.shards["instance_usage"][1]
    assert detect_reader(shard).name == "google"
    sample = (
        shared_data / "google" / "clusterdata2019_v3_sample" / "instance_events-doc-example.jsonl"
    )
    assert detect_reader(sample).name == "google"
    v2 = shared_data / "google" / "clusterdata2011_v2_sample"
    assert detect_reader(v2 / "task_events-sample.csv").name == "google-v2"
    assert detect_reader(v2).name == "google-v2"
    one = schedlab.read(trace.shards["collection_events"][0])
    assert one.meta["summary"]["tables"] == {
        "collection_events": {
            "shards": 1,
            "rows": one.meta["summary"]["tables"]["collection_events"]["rows"],
        }
    }
    assert len(one) > 0


def test_instances_known_only_from_usage(tmp_path):
    (tmp_path / "collection_events-000000000000.json").write_text(
        '{"time": "700000000", "type": 0, "collection_id": "8", "collection_type": 0}\n'
    )
    (tmp_path / "instance_usage-000000000000.json").write_text(
        '{"start_time": "700000000", "end_time": "1000000000", "collection_id": "8", '
        '"instance_index": 3, "average_usage": {"cpus": 0.5, "memory": 0.25}, '
        '"maximum_usage": {"cpus": 0.75, "memory": 0.5}}\n'
    )
    (job,) = schedlab.read(tmp_path).jobs
    (task,) = job.tasks
    assert task.task_id == "3" and task.extras["events"] == [] and task.start_time is None
    assert task.extras["usage"] == {
        "windows": 1,
        "seconds": 300.0,
        "cpu_seconds": 150.0,
        "memory_seconds": 75.0,
        "max_cpus": 0.75,
        "max_memory": 0.5,
    }
    assert job.extras["used_cpu_seconds_ncu"] == 150.0
    assert job.allocated_processors is None and job.average_cpu_time is None
