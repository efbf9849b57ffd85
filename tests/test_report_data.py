"""The data of the interactive report: binning of step functions against a plain
reference, the packed arrays and the embedded page data round trip."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.report import build_report, job_size, step_series
from schedlab.report_data import (
    MAX_FINE_BINS,
    bin_levels,
    bin_step,
    cdf_points,
    embed_json,
    nice_width,
    pack,
    unpack,
)


def reference_bins(times, values, start, width, count):
    """Mean and maximum per bin by walking every segment of every bin."""
    bounds = [*times, float("inf")]
    segments = [(-float("inf"), times[0] if len(times) else float("inf"), 0.0)]
    segments += [(bounds[i], bounds[i + 1], values[i]) for i in range(len(times))]
    means, maxima = [], []
    for k in range(count):
        lo, hi = start + k * width, start + (k + 1) * width
        area, top = 0.0, None
        for a, b, v in segments:
            overlap = min(b, hi) - max(a, lo)
            if overlap > 0:
                area += v * overlap
                top = v if top is None else max(top, v)
        means.append(area / width)
        maxima.append(top)
    return means, maxima


def test_bin_step_golden():
    # Level 2 on [0, 5), 1 on [5, 9), 0 after; bins of 4 from 0.
    mean, maximum = bin_step(np.array([0.0, 5.0, 9.0]), np.array([2.0, 1.0, 0.0]), 0.0, 4.0, 3)
    assert mean.tolist() == [2.0, (2 * 1 + 1 * 3) / 4, (1 * 1 + 0 * 3) / 4]
    assert maximum.tolist() == [2.0, 2.0, 1.0]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 500), st.integers(-5, 5)), min_size=1, max_size=40),
    st.integers(-50, 100),
    st.integers(1, 90),
    st.integers(1, 30),
)
def test_bin_step_matches_the_plain_reference(events, start, width, count):
    times, deltas = np.array([float(t) for t, _ in events]), np.array([float(d) for _, d in events])
    t, v = step_series(times, deltas)
    mean, maximum = bin_step(t, v, float(start), float(width), count)
    ref_mean, ref_max = reference_bins(t.tolist(), v.tolist(), start, width, count)
    assert mean == pytest.approx(ref_mean, abs=1e-9)
    assert maximum.tolist() == ref_max


@given(st.floats(1.0, 1e9))
def test_levels_go_from_coarse_to_fine_within_the_bound(span):
    levels = bin_levels(span)
    assert levels == sorted(levels, reverse=True)
    assert levels[0] >= span / 600
    assert all(w >= 60 for w in levels)
    assert span / levels[-1] <= max(MAX_FINE_BINS, span / 60)
    assert bin_levels(span, width=3600.0)[0] == 3600.0
    assert nice_width(61) == 120


@given(st.lists(st.integers(-(2**31), 2**31 - 1), max_size=50))
def test_pack_round_trip(values):
    array = np.array(values, dtype=np.int64)
    assert unpack(json.loads(json.dumps(pack(array, "i4")))).tolist() == values


def test_cdf_points_golden():
    c = cdf_points(np.array([0.0, 0.0, 10.0, 100.0, np.nan]))
    assert c == {"x": [10.0, 100.0], "p": [0.75, 1.0], "zero": 0.5}
    thin = cdf_points(np.arange(1.0, 10001.0), points=100)
    assert len(thin["x"]) <= 101 and thin["p"][-1] == 1.0 and thin["x"][-1] == 10000.0


def test_embedded_json_cannot_close_the_script():
    assert "</script" not in embed_json({"a": "</script><b>"})
    assert json.loads(embed_json({"a": "</script>"})) == {"a": "</script>"}


@pytest.fixture(scope="module")
def kth():
    workload = schedlab.read("../shared/data/swf/KTH-SP2-1996-2.1-cln.swf.gz")
    return workload


def test_page_data_round_trip_on_a_real_trace(kth):
    page = build_report(kth, title="KTH")
    match = re.search(r'<script type="application/json" id="schedlab-data">(.*?)</script>', page)
    bundle = json.loads(match.group(1))
    (data,) = bundle["schedules"]
    assert data["label"] == "KTH" and bundle["span"] == data["span"]
    columns = kth.to_arrays()
    ok = ~np.isnan(columns["submit_time"] + columns["wait_time"] + columns["run_time"])
    origin = columns["submit_time"][ok].min()
    assert data["n"] == int(ok.sum()) == len(unpack(data["jobs"]["submit"]))
    assert (
        unpack(data["jobs"]["submit"]).tolist()
        == np.round(columns["submit_time"][ok] - origin).astype(int).tolist()
    )
    assert unpack(data["jobs"]["waited"]).tolist() == np.round(columns["wait_time"][ok]).tolist()
    assert unpack(data["jobs"]["id"]).tolist() == columns["job_number"][ok].tolist()
    users = [data["users"][u] for u in unpack(data["jobs"]["user"])]
    assert users == [str(int(u)) for u in columns["user_id"][ok]]
    # The coarsest busy level integrates to the processor-seconds used.
    level = data["levels"][0]
    mean = unpack(level["busy"][0]).astype(float)
    used = float((columns["run_time"][ok] * job_size(columns)[ok]).sum())
    procs = data["procs"]
    assert mean.sum() * level["w"] / 100 * procs == pytest.approx(used, rel=1e-3)
    assert page == build_report(kth, title="KTH")  # same input, same bytes


def test_page_size_of_a_400k_job_schedule(ricc_report):
    """RICC-2010 (447,794 jobs) under fcfs+easy: the page stays under 30 MB
    (measured 16.3 MB: about 36 bytes a job, the series about 2 MB)."""
    size = ricc_report.stat().st_size
    assert size < 30_000_000
    assert size / 447_794 < 45


PLATFORM = """
[node_groups.a]
count = 6
cores = 4
memory = "8GiB"
[node_groups.g]
count = 2
cores = 4
gpus = 2
[partitions.cpu]
nodes = ["a"]
queues = ["1"]
[partitions.gpu]
nodes = ["g"]
queues = ["2"]
"""


@pytest.fixture(scope="module")
def platform_run(tmp_path_factory):
    """The first 300 jobs of KTH-SP2 (queues 1 and 2 alternating, at most 8
    processors) simulated with fcfs+easy on 6 CPU nodes and 2 GPU nodes."""
    toml = tmp_path_factory.mktemp("platform") / "cluster.toml"
    toml.write_text(PLATFORM)
    w = schedlab.read("../shared/data/swf/KTH-SP2-1996-2.1-cln.swf.gz")
    cols = w.to_arrays().take(np.arange(300))
    cols.data["queue_number"] = np.where(np.arange(300) % 2 == 0, 1.0, 2.0)
    cols.data["requested_processors"] = np.minimum(cols.data["requested_processors"], 8)
    return schedlab.simulate(
        schedlab.Workload(w.header, columns=cols),
        policy="fcfs",
        backfill="easy",
        platform=str(toml),
        progress=False,
    )


def embedded(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="schedlab-data">(.*?)</script>', page)
    return json.loads(match.group(1))


def test_node_page_data_golden():
    from schedlab.report_nodes import node_page_data

    nodes = {"nodes": ["n0", "n1", "n2"], "allocations": [[0, 2], [1], [], [2, 1, 0]]}
    data = node_page_data(nodes, np.array([True, False, True, True]))
    assert data["names"] == ["n0", "n1", "n2"]
    assert unpack(data["count"]).tolist() == [2, 0, 3]
    assert unpack(data["node"]).tolist() == [0, 2, 2, 1, 0]
    assert data["count"]["t"] == "u1"  # the smallest type that holds them


def test_a_platform_page_carries_every_jobs_nodes(platform_run):
    page = build_report(platform_run, title="nodes")
    (data,) = embedded(page)["schedules"]
    names = platform_run.workload.meta["platform"]["nodes"]
    assert data["nodes"]["names"] == names == [f"a[{i}]" for i in range(6)] + ["g[0]", "g[1]"]
    count, flat = unpack(data["nodes"]["count"]), unpack(data["nodes"]["node"])
    first = np.r_[0, np.cumsum(count)]
    table = [[names[n] for n in flat[first[k] : first[k + 1]]] for k in range(len(count))]
    # Row k of the page's job table is job k of the schedule, with the nodes it held.
    assert (
        unpack(data["jobs"]["id"]).tolist()
        == platform_run.workload.to_arrays()["job_number"].tolist()
    )
    assert table == [list(a) for a in platform_run.allocations]
    # Queue 2 ran on the GPU nodes only, queue 1 on the others.
    queues = platform_run.workload.to_arrays()["queue_number"]
    assert all(
        all(n.startswith("g") == (q == 2) for n in t) for t, q in zip(table, queues, strict=True)
    )
    assert '<canvas id="node-gantt"' in page and 'alt="node Gantt chart"' not in page
    assert "view" not in embedded(page)  # opens on the whole schedule
    assert page == build_report(platform_run, title="nodes")  # same bytes


def test_a_node_window_is_where_the_page_opens(platform_run):
    origin = float(platform_run.workload.to_arrays()["submit_time"].min())
    page = build_report(platform_run, node_window=(origin + 3600.0, origin + 7200.0))
    assert embedded(page)["view"] == [3600.0, 7200.0]
    static = build_report(platform_run, node_window=(origin + 3600.0, origin + 7200.0), static=True)
    assert 'alt="node Gantt chart"' in static and "<script" not in static


def test_a_page_without_a_platform_has_no_node_chart(kth):
    page = build_report(kth)
    (data,) = embedded(page)["schedules"]
    assert "nodes" not in data and 'id="node-gantt"' not in page
