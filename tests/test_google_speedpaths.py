"""The fast paths of the Google v3 reader give exactly what the careful paths give:
the block-wise pyarrow JSON parser (buffer reuse, type changes, repeated fields,
gzip members, ISA-L or zlib), the columnar reduction (in one piece, per table while
shards are parsed, or per Dask bucket), the vectorised time mapping and the
pyarrow sort."""

from __future__ import annotations

import gzip
import json
import math

import numpy as np
import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.formats.google import arrow_parse as A
from schedlab.formats.google import frames as F
from schedlab.formats.google import reduce as R
from schedlab.formats.google.assemble import TimeMapper
from schedlab.formats.google.fixtures import generate_trace
from schedlab.formats.google.schema import TIME_AFTER_TRACE, TIME_BEFORE_TRACE
from schedlab.formats.google.v3_reader import (
    V3_HEADER_INFO,
    discover,
    load_frames,
    reduce_in_process,
)

pa = pytest.importorskip("pyarrow", reason="the fast paths need pyarrow (dev installs it)")


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """Regular encodings only (the "mixed" style goes to the exact parser)."""
    return generate_trace(
        tmp_path_factory.mktemp("speed") / "trace",
        collections=1200,
        shards=3,
        seed=3,
        styles=("bigquery", "numbers"),
    )


def _same_frames(fast, exact):
    assert fast is not None
    assert list(fast) == list(exact)
    for name in exact:
        a, b = exact[name], fast[name]
        assert a.dtype == b.dtype, name
        if a.dtype == object:
            assert list(a) == list(b), name
        else:
            assert np.array_equal(a, b, equal_nan=True), name


@pytest.mark.parametrize("isal", [True, False])
def test_fast_parser_equals_exact_parser_block_by_block(trace, monkeypatch, isal):
    monkeypatch.setattr(A, "BLOCK_BYTES", 1 << 15)  # many blocks: the buffer is reused
    monkeypatch.setattr(A, "_PIECE_BYTES", 1 << 12)
    monkeypatch.setattr(A, "USE_ISAL", isal)
    for shard in discover(trace.directory):
        exact = F.parse_exact(shard.path, shard.table, shard.kind, shard.index)
        _same_frames(A.parse_json_shard(shard.path, shard.table, shard.index, False), exact)


def _write(path, rows, compress=False):
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)
    if compress:
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return path


def _event(i, **extra):
    row = {"time": str(700_000_000 + i), "type": 0, "collection_id": str(5 + i % 3)}
    row.update(extra)
    return row


def test_repeated_fields_are_decoded_exactly(tmp_path):
    rows = [_event(i, instance_index=i, constraint=[]) for i in range(50)]
    rows[3]["constraint"] = [{"name": "a]b", "value": "[x]", "relation": 2}]
    rows[7]["constraint"] = [{"name": "n", "relation": "EQUAL"}, {"value": "1"}]
    rows[9]["constraint"] = None
    del rows[11]["constraint"]
    rows[12]["constraint"] = [[1, [2]]]
    path = _write(tmp_path / "instance_events-000000000000.json", rows)
    exact = F.parse_exact(path, "instance_events", "json", 0)
    assert exact["constraint"][7] == [{"name": "n", "relation": "EQUAL"}, {"value": "1"}]
    _same_frames(F.parse_fast(path, "instance_events", 0), exact)

    rows = [_event(i, start_after_collection_ids=[]) for i in range(40)]
    rows[5]["start_after_collection_ids"] = ["12", 13]
    rows[6]["start_after_collection_ids"] = [" 14 "]
    path = _write(tmp_path / "collection_events-000000000000.json", rows)
    exact = F.parse_exact(path, "collection_events", "json", 0)
    assert exact["start_after_collection_ids"][5] == [12, 13]
    _same_frames(F.parse_fast(path, "collection_events", 0), exact)


def test_fields_missing_from_the_sample_are_typed_later(tmp_path):
    # int64 values are strings here, so a field the 64 KiB sample never shows is
    # first guessed to be a string too: right for one shard, wrong for the other
    # (pyarrow names the column, the block is parsed again with a number type)
    for index, late in enumerate(("77", 77)):
        rows = [_event(i) for i in range(3000)]
        rows[2900]["parent_collection_id"] = late
        rows[2950]["parent_collection_id"] = late
        path = _write(tmp_path / f"collection_events-00000000000{index}.json", rows)
        exact = F.parse_exact(path, "collection_events", "json", index)
        assert exact["parent_collection_id"][2900] == 77
        _same_frames(F.parse_fast(path, "collection_events", index), exact)


def test_a_column_of_two_types_in_one_block_goes_to_the_exact_parser(tmp_path):
    rows = [_event(i, priority=100 + i % 5) for i in range(3000)]
    for row in rows[2500:]:
        row["priority"] = str(row["priority"])
    path = _write(tmp_path / "collection_events-000000000000.json.gz", rows, compress=True)
    assert F.parse_fast(path, "collection_events", 0) is None
    assert schedlab.read(path, format="google").meta["summary"]["tables"] == {
        "collection_events": {"shards": 1, "rows": 3000}
    }


def test_irregular_shards_go_to_the_exact_parser(tmp_path):
    rows = [_event(i) for i in range(20)]
    blank = _write(tmp_path / "collection_events-000000000000.json", [*rows[:5], "", *rows[5:]])
    assert F.parse_fast(blank, "collection_events", 0) is None
    mixed = [_event(i, priority=i) for i in range(20)]
    mixed[3]["priority"] = "3"  # both types inside the sample
    path = _write(tmp_path / "collection_events-000000000001.json", mixed)
    assert F.parse_fast(path, "collection_events", 1) is None
    # the reader still reads both, with the exact parser's line numbers
    w = schedlab.read(tmp_path)
    assert w.meta["summary"]["tables"]["collection_events"]["rows"] == 40


def test_gzip_members_and_a_missing_final_newline(tmp_path):
    rows = [_event(i, priority=i) for i in range(30)]
    path = tmp_path / "collection_events-000000000000.json.gz"
    with open(path, "wb") as fh:
        fh.write(gzip.compress(("\n".join(json.dumps(r) for r in rows[:10]) + "\n").encode()))
        fh.write(gzip.compress("\n".join(json.dumps(r) for r in rows[10:]).encode()))
    exact = F.parse_exact(path, "collection_events", "json", 0)
    assert len(exact["_line"]) == 30
    _same_frames(F.parse_fast(path, "collection_events", 0), exact)


def _workload(reduced, counts, capacity, trace_end, tasks=True, **options):
    from schedlab.formats.google.assemble import build_workload

    return build_workload(
        reduced,
        header_info=V3_HEADER_INFO,
        capacity=capacity,
        table_counts=counts,
        cpu_scale=100.0,
        memory_scale=1e6,
        tasks=tasks,
        trace_end=trace_end,
        **options,
    )


@pytest.fixture(scope="module")
def whole(trace):
    frames, counts, _ = load_frames(discover(trace.directory))
    reduced = R.reduce_collections(
        frames["collection_events"], frames["instance_events"], frames["instance_usage"]
    )
    return frames, counts, reduced


def test_pipelined_reduction_equals_one_shot(trace, whole):
    _, counts, reduced = whole
    for threads in (1, 2):
        piped, piped_counts, _, capacity, trace_end = reduce_in_process(
            discover(trace.directory), threads=threads
        )
        assert piped_counts == counts
        assert sorted(piped) == sorted(reduced)
        for key in reduced:
            assert np.array_equal(piped[key], reduced[key], equal_nan=reduced[key].dtype != object)
    expected = schedlab.read(trace.directory)
    assert _workload(piped, counts, capacity, trace_end).jobs == expected.jobs


@pytest.mark.parametrize("buckets", [2, 5])
def test_bucket_reductions_join_to_the_whole(trace, whole, buckets):
    from schedlab.formats.google.dask_reader import bucket_of

    frames, counts, reduced = whole
    parts = []
    for b in range(buckets):
        picked = []
        for table in ("collection_events", "instance_events", "instance_usage"):
            frame = frames[table]
            keep = bucket_of(frame["collection_id"], buckets) == b
            picked.append({name: column[keep] for name, column in frame.items()})
        parts.append(R.reduce_collections(*picked))
    joined = R.concat_reduced(parts)
    assert R.collection_count(joined) == R.collection_count(reduced)
    capacity = {"cpus": []}
    a = _workload(joined, counts, capacity, None)
    b = _workload(reduced, counts, capacity, None)
    assert a.jobs == b.jobs and a.meta["summary"] == b.meta["summary"]
    assert a.meta["alloc_sets"] == b.meta["alloc_sets"]


def test_without_tasks_the_jobs_are_the_same(trace):
    full = schedlab.read(trace.directory)
    light = schedlab.read(trace.directory, tasks=False)
    for a, b in zip(full.jobs, light.jobs, strict=True):
        assert not b.tasks
        b.tasks = a.tasks
        assert a == b
    assert light.meta["summary"] == full.meta["summary"]


def test_arrow_sort_equals_lexsort(whole, monkeypatch):
    frames, _, _ = whole
    keys = ("collection_id", "instance_index", "time", "_rank")
    with_arrow = R._order(frames["instance_events"], keys)
    monkeypatch.setattr(R, "_ARROW", [None])
    assert np.array_equal(with_arrow, R._order(frames["instance_events"], keys))


_raw_times = st.one_of(
    st.sampled_from([TIME_BEFORE_TRACE, TIME_AFTER_TRACE, 600_000_000, 2**53, -(2**53)]),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.integers(min_value=0, max_value=10**13),
)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(_raw_times, st.booleans()), max_size=20),
    st.sampled_from(["unknown", "clip"]),
    st.one_of(st.none(), st.floats(min_value=0, max_value=1e7)),
)
def test_vectorised_times_equal_the_scalar_mapping(values, mode, trace_end):
    mapper = TimeMapper(mode, trace_end)
    raw = np.array([v for v, _ in values], dtype=np.int64)
    has = np.array([h for _, h in values], dtype=bool)
    got = mapper.many(raw, has)
    want = [mapper(v) if h else None for v, h in values]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert (g is None and w is None) or (g == w or (math.isnan(g) and math.isnan(w)))


def test_tasks_made_early_equal_the_tasks_made_at_the_end(trace, tmp_path):
    """The in-process reader makes the tasks while the collection events are parsed
    (:class:`EarlyTasks`); an instance known only from its usage (the union of
    instance rows is then not the instance events' rows) and a collection known
    only from instances must come out as when the tasks are made last."""
    import shutil

    from schedlab.formats.google.assemble import EarlyTasks

    directory = tmp_path / "trace"
    shutil.copytree(trace.directory, directory)
    usage = {
        "start_time": "700000000",
        "end_time": "700300000",
        "instance_index": 3,
        "average_usage": {"cpus": 0.125, "memory": 0.25},
        "maximum_usage": {"cpus": 0.5, "memory": 0.375},
    }
    some_job = str(schedlab.read(trace.directory).jobs[5].extras["collection_id"])
    _write(
        directory / "instance_usage-000000000099.json",
        [{**usage, "collection_id": "999999"}, {**usage, "collection_id": some_job}],
    )
    for threads in (1, 2):
        early = EarlyTasks(TimeMapper("unknown"), 100.0)
        reduced, counts, _, capacity, trace_end = reduce_in_process(
            discover(directory), threads=threads, early=early
        )
        assert early.tasks is not None and not early.lists
        late = _workload(reduced, counts, capacity, trace_end)
        made_early = _workload(reduced, counts, capacity, trace_end, prebuilt_tasks=early.tasks)
        assert made_early.jobs == late.jobs
    jobs = {job.extras["collection_id"]: job for job in late.jobs}
    for cid in (999999, int(some_job)):
        (task,) = [t for t in jobs[cid].tasks if t.task_id == "3"]
        assert task.extras["events"] == [] and task.extras["usage"]["windows"] == 1
        assert task.extras["usage"]["seconds"] == 0.3
    assert schedlab.read(directory).jobs == late.jobs


def test_lenient_rejects_are_listed_in_shard_order(tmp_path):
    """Tables are parsed instance events first, but the rejects keep the order of
    the shards in the directory."""
    good = [_event(i) for i in range(12)]
    bad_ce = [*good[:3], "{not json", *good[3:]]
    good = [_event(i, instance_index=0) for i in range(12)]
    bad_ie = [*good[:5], '{"time": "1", "bogus_key": 2}', *good[5:]]
    _write(tmp_path / "collection_events-000000000000.json", [*bad_ce, "{also bad"])
    _write(tmp_path / "instance_events-000000000000.json", bad_ie)
    w = schedlab.read(tmp_path, lenient=True)
    assert w.meta["skipped"] == 3
    sources = [m.split(":")[0] for m in w.meta["rejects"]]
    assert [s.rsplit("/", 1)[-1].split("-")[0] for s in sources] == [
        "collection_events",
        "collection_events",
        "instance_events",
    ]


_texts = st.text(alphabet='ab[]{}":, \\\t', max_size=6)
_constraint = st.one_of(
    st.none(),
    st.just([]),
    st.lists(
        st.fixed_dictionaries(
            {"name": _texts, "value": _texts},
            optional={"relation": st.sampled_from([0, 1, "EQUAL", "LESS_THAN"])},
        ),
        max_size=3,
    ),
    st.lists(st.lists(st.integers(0, 9), max_size=2), min_size=1, max_size=2),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_constraint, min_size=1, max_size=30), st.sampled_from([", ", ",", " , "]))
def test_repeated_field_values_equal_the_exact_parser(tmp_path_factory, values, separator):
    """Lists with brackets, quotes and escapes inside strings, nested lists, nulls
    and missing keys, written with varying spacing: the block parser's column of a
    repeated field is the exact parser's."""
    rows = []
    for i, value in enumerate(values):
        row = _event(i, instance_index=i)
        if value is not None or i % 2:
            row["constraint"] = value
        rows.append(json.dumps(row, separators=(separator, ": " if i % 3 else ":")))
    path = _write(tmp_path_factory.mktemp("sparse") / "instance_events-000000000000.json", rows)
    exact = F.parse_exact(path, "instance_events", "json", 0)
    _same_frames(F.parse_fast(path, "instance_events", 0), exact)
