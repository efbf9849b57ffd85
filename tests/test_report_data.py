"""The data of the interactive report: binning of step functions against a plain
reference, the compact integer columns and the data embedded in the Bokeh page,
read back."""

from __future__ import annotations

import numpy as np
import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.report import build_report, job_size, step_series
from schedlab.report_charts import embedded_objects, embedded_sources
from schedlab.report_data import (
    MAX_FINE_BINS,
    bin_levels,
    bin_step,
    cdf_points,
    compact_int,
    nice_width,
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
def test_compact_int_keeps_every_value_in_the_smallest_type(values):
    array = compact_int(np.array(values, dtype=np.int64))
    assert array.tolist() == values
    low, high = min(values, default=0), max(values, default=0)
    expected = (
        "uint8" if 0 <= low and high <= 255
        else "uint16" if 0 <= low and high <= 65535
        else "int16" if -32768 <= low and high <= 32767
        else "int32"
    )  # fmt: skip
    assert array.dtype == np.dtype(expected)
    assert compact_int(np.array([0.4, 1.6, 2.5])).tolist() == [0, 2, 2]  # rounded
    # beyond int32 (report audit 1): float64, exact up to 2**53; beyond is an error
    assert compact_int(np.array([2.0**31])).dtype == np.float64
    with pytest.raises(ValueError, match="64-bit floats"):
        compact_int(np.array([2.0**54]))


def test_cdf_points_golden():
    c = cdf_points(np.array([0.0, 0.0, 10.0, 100.0, np.nan]))
    assert c == {"x": [10.0, 100.0], "p": [0.75, 1.0], "zero": 0.5}
    thin = cdf_points(np.arange(1.0, 10001.0), points=100)
    assert len(thin["x"]) <= 101 and thin["p"][-1] == 1.0 and thin["x"][-1] == 10000.0


@pytest.fixture(scope="module")
def kth():
    workload = schedlab.read("../shared/data/swf/KTH-SP2-1996-2.1-cln.swf.gz")
    return workload


def callback_args(page: str) -> dict:
    """The arguments of the page's window script (the CustomJS run when the page is
    ready), as embedded: plain values only."""
    (args,) = [
        dict(js["args"]["entries"])
        for js in embedded_objects(page, "CustomJS")
        if dict(js["args"]["entries"]).get("ready") is True
    ]
    return args


def test_page_data_round_trip_on_a_real_trace(kth):
    page = build_report(kth, title="KTH")
    sources = embedded_sources(page)
    jobs = sources["jobs-0"]
    columns = kth.to_arrays()
    ok = ~np.isnan(columns["submit_time"] + columns["wait_time"] + columns["run_time"])
    origin = columns["submit_time"][ok].min()
    assert int(ok.sum()) == len(jobs["submit"])
    assert jobs["submit"].tolist() == np.round(columns["submit_time"][ok] - origin).tolist()
    assert jobs["waited"].tolist() == np.round(columns["wait_time"][ok]).tolist()
    assert jobs["id"].tolist() == columns["job_number"][ok].tolist()
    (users,) = callback_args(page)["users"]
    assert [users[u] for u in jobs["user"]] == [str(int(u)) for u in columns["user_id"][ok]]
    # The coarsest busy level integrates to the processor-seconds used.
    args = callback_args(page)
    level = sources["level-0-0"]
    mean = level["busy_mean"][:-1].astype(float)  # the last value repeats: the step's end
    assert level["x"][-1] * 86400 == pytest.approx(len(mean) * args["widths"][0])
    used = float(np.nansum(columns["run_time"][ok] * job_size(columns)[ok]))  # unknown size: out
    procs = kth.header.machine_size()
    assert mean.sum() * args["widths"][0] / 100 * procs == pytest.approx(used, rel=1e-3)
    # Every resolution is embedded, coarsest first, and the page opens on the coarsest.
    widths = args["widths"]
    assert widths == sorted(widths, reverse=True) and len(widths) > 1
    assert [len(sources[f"level-0-{i}"]["x"]) for i in range(len(widths))] == [
        int(np.ceil(args["span"] / w)) + 1 for w in widths
    ]
    assert sources["series-0"]["busy_max"].tolist() == level["busy_max"].tolist()
    assert page == build_report(kth, title="KTH")  # same input, same bytes


def test_page_size_of_a_400k_job_schedule(ricc_report):
    """RICC-2010 (447,794 jobs) under fcfs+easy: the page stays under 30 MB
    (measured 6.2 MB: about 14 bytes a job; Bokeh gzips the embedded arrays)."""
    size = ricc_report.stat().st_size
    assert size < 30_000_000
    assert size / 447_794 < 20


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


def test_node_page_data_golden():
    from schedlab.report_nodes import node_page_data

    nodes = {"nodes": ["n0", "n1", "n2"], "allocations": [[0, 2], [1], [], [2, 1, 0]]}
    data = node_page_data(nodes, np.array([True, False, True, True]))
    assert data["names"] == ["n0", "n1", "n2"]
    assert data["count"].tolist() == [2, 0, 3]
    assert data["node"].tolist() == [0, 2, 2, 1, 0]
    assert data["count"].dtype == np.uint8  # the smallest type that holds them


def test_a_platform_page_carries_every_jobs_nodes(platform_run):
    page = build_report(platform_run, title="nodes")
    sources = embedded_sources(page)
    names = platform_run.workload.meta["platform"]["nodes"]
    args = callback_args(page)
    assert args["node_names"] == names == [f"a[{i}]" for i in range(6)] + ["g[0]", "g[1]"]
    count, flat = sources["jobs-0"]["nodes"], sources["node-alloc"]["node"]
    first = np.r_[0, np.cumsum(count)]
    table = [[names[n] for n in flat[first[k] : first[k + 1]]] for k in range(len(count))]
    # Row k of the page's job table is job k of the schedule, with the nodes it held.
    assert (
        sources["jobs-0"]["id"].tolist() == platform_run.workload.to_arrays()["job_number"].tolist()
    )
    assert table == [list(a) for a in platform_run.allocations]
    # Queue 2 ran on the GPU nodes only, queue 1 on the others.
    queues = platform_run.workload.to_arrays()["queue_number"]
    assert all(
        all(n.startswith("g") == (q == 2) for n in t) for t, q in zip(table, queues, strict=True)
    )
    assert '"node-gantt"' in page and 'alt="node Gantt chart"' not in page
    assert args["view"] is None  # opens on the whole schedule
    # The utilization per resource: the cores of the 8 nodes (memory is unbounded).
    assert '"resources"' in page and 'alt="utilization per resource"' not in page
    assert page == build_report(platform_run, title="nodes")  # same bytes


def test_a_node_window_is_where_the_page_opens(platform_run):
    # seconds since the first submission, as the page's address (report audit 3)
    page = build_report(platform_run, node_window=(3600.0, 7200.0))
    assert [v * 86400 for v in callback_args(page)["view"]] == pytest.approx([3600.0, 7200.0])
    static = build_report(platform_run, node_window=(3600.0, 7200.0), static=True)
    assert 'alt="node Gantt chart"' in static and "<script" not in static


def test_a_page_without_a_platform_has_no_node_chart(kth):
    page = build_report(kth)
    assert "nodes" not in embedded_sources(page)["jobs-0"]
    assert '"node-gantt"' not in page and callback_args(page)["node_src"] is None
