"""Fixes of the fourth report audit (multi-partition runs): the platform and its
partitions on the pages (1), queue names on the per-queue bars (2), partitions on
the node Gantt chart (3), the finest bin width as documented (4), plain numbers on
the queued-work axis (5) and no legend over the comparison's CDFs (6)."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest
import schedlab

pytest.importorskip("bokeh")

from schedlab.report import build_comparison, build_report
from schedlab.report_charts import embedded_objects
from schedlab.report_data import bin_levels

# Two exclusive partitions of 4-core nodes, one queue each.
PLATFORM = """[platform]
name = "two parts"
sharing = "exclusive"
[node_groups.a]
count = 1
cores = 4
[node_groups.b]
count = 2
cores = 4
[partitions.small]
nodes = ["a"]
queues = ["qs"]
[partitions.big]
nodes = ["b"]
queues = ["qb"]
"""
JOBS = """; MaxProcs: 8
; Computer: Some Other Machine
; Queue: 1 qs
; Queue: 2 qb
1 0 -1 1000 4 -1 -1 4 1000 -1 1 1 1 -1 1 -1 -1 -1
2 10 -1 500 4 -1 -1 4 600 -1 1 2 1 -1 1 -1 -1 -1
3 20 -1 300 4 -1 -1 4 400 -1 1 3 1 -1 2 -1 -1 -1
4 30 -1 200 4 -1 -1 4 200 -1 1 1 1 -1 2 -1 -1 -1
5 40 -1 200 4 -1 -1 4 200 -1 1 1 1 -1 2 -1 -1 -1
"""


def _simulate(tmp_path: Path, policy: str = "fcfs") -> Any:
    (tmp_path / "p.toml").write_text(PLATFORM)
    (tmp_path / "j.swf").write_text(JOBS)
    return schedlab.simulate(
        schedlab.read(str(tmp_path / "j.swf")),
        policy=policy,
        backfill="easy",
        platform=str(tmp_path / "p.toml"),
        progress=False,
    )


def _text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


# Finding 1: the platform and its partitions on the pages.


@pytest.mark.parametrize("static", [False, True])
def test_report_page_names_the_platform_and_its_partitions(tmp_path: Path, static: bool) -> None:
    result = _simulate(tmp_path)
    machine = result.stats["platform"]
    page = build_report(result, title="t", static=static)
    facts = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", page))
    assert facts["platform"] == "two parts (3 nodes, 12 cores)"
    assert "computer" not in facts  # the trace's machine is not the one simulated
    assert facts["trace recorded on"] == "Some Other Machine"
    table = re.search(r"<table class='partitions'>.*?</table>", page, re.S)
    assert table is not None
    rows = [
        [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td>(.*?)</td>", r)]
        for r in re.findall(r"<tr>(.*?)</tr>", table.group(0), re.S)
    ]
    rows = [r for r in rows if r]
    held = machine["utilization_by_partition"]
    wait = machine["mean_wait_by_partition"]
    assert rows == [
        ["small", "2", f"{held['small']:.3f}", f"{wait['small'] / 60:,.1f}", "1 qs"],
        ["big", "3", f"{held['big']:.3f}", f"{wait['big'] / 60:,.1f}", "2 qb"],
    ]
    assert machine["utilization_by_partition"]["small"] > 0


def test_compare_page_has_partition_rows(tmp_path: Path) -> None:
    first = _simulate(tmp_path)
    second = _simulate(tmp_path, policy="sjf")
    page = build_comparison([("fcfs", first), ("sjf", second)])
    text = _text(page)
    assert "two parts (3 nodes, 12 cores)" in text
    for name in ("small", "big"):
        held = first.stats["platform"]["utilization_by_partition"][name]
        line = rf"partition {name}: cores held by its jobs\s+share\s+{held:.3f}"
        assert re.search(line, text), name
        assert f"partition {name}: mean wait" in text


# Finding 2: the per-queue bars are labelled with the header's queue names.


def test_queue_bars_carry_the_queue_names(tmp_path: Path) -> None:
    result = _simulate(tmp_path)
    page = build_report(result, title="t")
    (fig,) = [f for f in embedded_objects(page, "Figure") if f.get("name") == "mean-wait-per-queue"]
    assert fig["x_range"]["attributes"]["factors"] == ["1 qs", "2 qb"]


# Finding 3: the node Gantt chart marks and names each partition.


def test_node_gantt_marks_partitions(tmp_path: Path) -> None:
    result = _simulate(tmp_path)
    page = build_report(result, title="t")
    (fig,) = [f for f in embedded_objects(page, "Figure") if f.get("name") == "node-gantt"]
    (axis,) = [
        a for a in embedded_objects(page, "LinearAxis") if a.get("name") == "node-partitions"
    ]
    labels = dict(axis["major_label_overrides"]["entries"])
    assert sorted(labels.values()) == ["big", "small"]  # a[0] is small, b[0] b[1] big
    assert "Span" in str(fig["center"])  # the line between the two blocks
    (hover,) = [h for h in embedded_objects(page, "HoverTool") if h.get("name") == "node-hover"]
    assert "partition" in str(hover["tooltips"])
    assert "@partition" in str(hover["tooltips"])


# Finding 4: the finest bins as docs/experiments.md says.


def test_bin_levels_reach_the_floor() -> None:
    assert bin_levels(28_765_020)[-1] == 600.0  # KTH-SP2: 10 minutes
    assert bin_levels(7_593_388)[-1] == 300.0  # 88 days: 5 minutes
    assert bin_levels(86_400)[-1] == 60.0


# Finding 5: the series' y axes in plain grouped numbers.


def test_series_axes_use_plain_numbers(tmp_path: Path) -> None:
    page = build_report(_simulate(tmp_path), title="t")
    figs = {f.get("name"): f for f in embedded_objects(page, "Figure")}
    for name in ("series-busy", "series-running", "series-queued", "series-demand"):
        assert "NumeralTickFormatter" in str(figs[name]["left"]), name


# Finding 6: no legend inside the comparison's CDF charts.


def test_comparison_cdfs_have_no_legend_inside(tmp_path: Path) -> None:
    first = _simulate(tmp_path)
    second = _simulate(tmp_path, policy="sjf")
    page = build_comparison([("fcfs", first), ("sjf", second)])
    cdfs = [f for f in embedded_objects(page, "Figure") if str(f.get("name", "")).startswith("cdf")]
    assert cdfs
    for fig in cdfs:
        assert not [m for m in fig.get("center", []) if m.get("name") == "Legend"]
        assert not [m for m in fig.get("right", []) if m.get("name") == "Legend"]


def test_partition_blocks_group_consecutive_nodes() -> None:
    from schedlab.report_nodes import partition_blocks

    nodes = {"nodes": ["a", "b", "c", "d"], "partitions": {"x": [0, 1], "y": [1, 2]}}
    assert partition_blocks(nodes) == [
        (0, 1, "x"),
        (1, 2, "x, y"),
        (2, 3, "y"),
        (3, 4, "no partition"),
    ]
    assert partition_blocks({"nodes": ["a"], "partitions": {"x": [0]}}) == []


def test_node_hover_names_the_partition_in_the_browser(tmp_path: Path) -> None:
    from schedlab.report import write_report
    from test_report_browser import probe

    result = _simulate(tmp_path)
    page = write_report(result, tmp_path / "r.html")
    found = probe(page, [{"do": "hover", "chart": "node-gantt", "count": 5}])  # no console error
    numbers = result.workload.to_arrays()["job_number"]
    placed = dict(zip(numbers, result.workload.meta["partitions"], strict=True))
    tips = found["tips"]
    assert len(tips) == 5
    for entry in tips:
        shown = re.search(r"partition: (\w+)", entry["tip"])
        assert shown and shown.group(1) == placed[entry["id"]], entry["tip"]


def test_cores_held_per_partition_over_time(tmp_path: Path) -> None:
    import numpy as np
    from schedlab.report_nodes import dimension_steps, node_schedule

    result = _simulate(tmp_path)
    nodes = node_schedule(result.workload)
    assert nodes is not None
    steps = dimension_steps(result.workload.to_arrays(), nodes)
    assert {"cores", "cores of small", "cores of big"} <= set(steps)
    cols = result.workload.to_arrays()
    span = float((cols["submit_time"] + cols["wait_time"] + cols["run_time"]).max())
    for name, share in result.stats["platform"]["utilization_by_partition"].items():
        t, level = steps[f"cores of {name}"]
        area = float(np.sum(level[:-1] * np.diff(t))) / 100  # core-time share x span
        assert area / span == pytest.approx(share), name  # simulate's figure, over time
    page = build_report(result, title="t")
    (legend,) = [g for g in embedded_objects(page, "Legend")
                 if "cores of small" in str(g)]  # fmt: skip
    assert "cores of big" in str(legend)
