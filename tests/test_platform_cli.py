"""The platform on the command line and in the report: simulate --platform with
--allocations-out, compare and sweep with a platform, report's node figures."""

from __future__ import annotations

import base64
import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab.cli import main

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


def run(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out + err


@pytest.fixture
def trace(tmp_path: Path, swf_dir: Path) -> Path:
    """The first 300 jobs of KTH-SP2, half in queue 1 and half in queue 2."""
    w = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    cols = w.to_arrays().take(np.arange(300))
    cols.data["queue_number"] = np.where(np.arange(300) % 2 == 0, 1.0, 2.0)
    cols.data["requested_processors"] = np.minimum(cols.data["requested_processors"], 8)
    path = tmp_path / "kth300.swf"
    schedlab.write(schedlab.Workload(w.header, columns=cols), path)
    return path


@pytest.fixture
def platform(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.toml"
    path.write_text(PLATFORM)
    return path


def test_simulate_writes_every_jobs_nodes_inside_its_partition(
    capsys: pytest.CaptureFixture, trace: Path, platform: Path, tmp_path: Path
) -> None:
    out = tmp_path / "nodes.csv"
    code, text = run(
        capsys,
        "simulate",
        str(trace),
        "--platform",
        str(platform),
        "--backfill",
        "easy",
        "--allocation",
        "best-fit",
        "--allocations-out",
        str(out),
    )
    assert code == 0, text
    assert "utilization of cores" in text
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert len(rows) == 300
    for row in rows:
        group = "a" if row["partition"] == "cpu" else "g"
        nodes = row["nodes"].split()
        assert nodes and all(n.startswith(group + "[") for n in nodes)
        number = int(row["job_number"])
        assert (number % 2 == 1) == (row["partition"] == "cpu")  # job numbers start at 1


def test_allocations_out_without_platform_is_a_usage_error(
    capsys: pytest.CaptureFixture, trace: Path, tmp_path: Path
) -> None:
    code, text = run(capsys, "simulate", str(trace), "--allocations-out", str(tmp_path / "x.csv"))
    assert code == 2
    assert "--platform" in text
    assert "Traceback" not in text


def test_procs_and_platform_together_are_refused(
    capsys: pytest.CaptureFixture, trace: Path, platform: Path
) -> None:
    code, text = run(capsys, "simulate", str(trace), "--platform", str(platform), "--procs", "8")
    assert code == 2
    assert "not both" in text


def test_a_bad_platform_names_the_key(
    capsys: pytest.CaptureFixture, trace: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[node_groups.a]\ncount = 0\ncores = 4\n[partitions.p]\nnodes = ['a']\n")
    code, text = run(capsys, "simulate", str(trace), "--platform", str(bad))
    assert code == 2
    assert "node_groups.a.count" in text
    assert "Traceback" not in text


def test_compare_and_sweep_take_a_platform(
    capsys: pytest.CaptureFixture, trace: Path, platform: Path, tmp_path: Path
) -> None:
    code, text = run(
        capsys,
        "compare",
        str(trace),
        "--policies",
        "fcfs+none,fcfs+easy",
        "--platform",
        str(platform),
        "--json",
    )
    assert code == 0, text
    rows = json.loads(text[: text.rindex("}") + 1])["rows"]
    direct = schedlab.simulate(schedlab.read(trace), backfill="easy", platform=platform)
    assert [r["backfill"] for r in rows] == ["none", "easy"]
    assert rows[1]["procs"] == 32 and rows[1]["jobs"] == len(direct)
    out = tmp_path / "sweep"
    code, text = run(
        capsys,
        "sweep",
        "--workload",
        str(trace),
        "--backfill",
        "none,easy",
        "--platform",
        str(platform),
        "--out",
        str(out),
    )
    assert code == 0, text
    table = list(csv.DictReader(io.StringIO((out / "results.csv").read_text())))
    (easy,) = [
        r
        for r in table
        if (r["backfill"], r["group"], r["metric"], r["stat"]) == ("easy", "all", "wait", "mean")
    ]
    mean_wait = float(direct.workload.to_arrays()["wait_time"].mean())
    assert float(easy["value"]) == pytest.approx(mean_wait)
    assert easy["procs"] == "32"


def test_report_draws_nodes_and_dimensions(
    capsys: pytest.CaptureFixture, trace: Path, platform: Path, tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")
    page = tmp_path / "report.html"
    code, out = run(
        capsys,
        "report",
        str(trace),
        "--simulate",
        "fcfs+easy",
        "--platform",
        str(platform),
        "-o",
        str(page),
    )
    assert code == 0, out
    text = page.read_text()
    # The interactive page draws the node Gantt chart and the utilization per
    # dimension with Bokeh (charts named node-gantt and resources), no images.
    assert not re.findall(r'<img alt="([^"]+)" src="data:image/png', text)
    assert '"node-gantt"' in text and '"resources"' in text
    assert "Nodes over time" in text and "Utilization per resource" in text
    static = tmp_path / "static.html"
    code, out = run(
        capsys,
        "report",
        str(trace),
        "--simulate",
        "fcfs+easy",
        "--platform",
        str(platform),
        "--static",
        "-o",
        str(static),
    )
    assert code == 0, out
    text = static.read_text()
    images = dict(re.findall(r'<img alt="([^"]+)" src="data:image/png;base64,([^"]+)"', text))
    for alt in ("node Gantt chart", "utilization per resource"):
        png = base64.b64decode(images[alt])
        assert png.startswith(b"\x89PNG") and len(png) > 5000
    assert "<canvas" not in text and "Nodes over time" in text


def test_report_window_must_be_start_before_end(
    capsys: pytest.CaptureFixture, trace: Path, platform: Path, tmp_path: Path
) -> None:
    code, text = run(
        capsys,
        "report",
        str(trace),
        "--simulate",
        "fcfs+easy",
        "--platform",
        str(platform),
        "--window",
        "10:5",
        "-o",
        str(tmp_path / "r.html"),
    )
    assert code == 2
    assert "--window" in text
