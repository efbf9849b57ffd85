"""``schedlab metrics`` and ``schedlab compare`` end to end."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner
from schedlab.cli import cli, main

# The five-job workload of test_metrics_job.py as SWF (job 4's wait unknown), 10 procs.
GOLDEN_SWF = """\
; Version: 2.2
; MaxProcs: 10
1 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1
2 0 10 5 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1
3 10 90 50 8 -1 -1 8 50 -1 1 2 1 -1 2 -1 -1 -1
4 20 -1 30 1 -1 -1 1 300 -1 1 3 1 -1 2 -1 -1 -1
5 30 20 0 1 -1 -1 1 60 -1 1 2 1 -1 -1 -1 -1 -1
"""

# A 4-processor machine: job 2 needs the whole machine, job 3 fits beside job 1.
# FCFS without backfilling: starts 0, 100, 110 (waits 0, 99, 108).
# EASY: job 2 has a reservation at 100; job 3 ends at 52 and backfills at 2.
BACKFILL_SWF = """\
; MaxProcs: 4
1 0 -1 100 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1
2 1 -1 10 4 -1 -1 4 10 -1 1 2 1 -1 1 -1 -1 -1
3 2 -1 50 2 -1 -1 2 50 -1 1 3 1 -1 1 -1 -1 -1
"""


@pytest.fixture()
def golden(tmp_path):
    path = tmp_path / "golden.swf"
    path.write_text(GOLDEN_SWF)
    return str(path)


@pytest.fixture()
def backfill(tmp_path):
    path = tmp_path / "backfill.swf"
    path.write_text(BACKFILL_SWF)
    return str(path)


def run(*args: str):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


# ---------------------------------------------------------------- metrics


def test_metrics_json_golden(golden):
    data = json.loads(run("metrics", golden, "--json"))
    assert data["jobs"] == 5 and data["procs"] == 10.0  # MaxProcs from the header
    [row] = data["rows"]
    assert row["wait"]["mean"] == 30.0 and row["wait"]["unknown"] == 1
    assert row["utilization"] == pytest.approx(0.54)
    assert row["loss-of-capacity"] == pytest.approx(590 / 1500)
    assert any(n.startswith("wait: 1 of 5 jobs") for n in data["notes"])


def test_metrics_procs_overrides_header(golden):
    data = json.loads(run("metrics", golden, "--procs", "20", "-m", "utilization", "--json"))
    assert data["rows"][0]["utilization"] == pytest.approx(0.27)
    assert [m["name"] for m in data["metrics"]] == ["utilization"]


def test_metrics_by_accuracy_class(golden):
    data = json.loads(run("metrics", golden, "--by", "accuracy-class", "-m", "wait", "--json"))
    groups = {r["group"]: r for r in data["rows"]}
    # Users 1 and 2 both have mean accuracy 0.5 (a3); user 3's only job has no end.
    assert groups["a3"]["jobs"] == 4 and groups["a3"]["wait"]["mean"] == 30.0
    assert groups["unknown"]["jobs"] == 1
    assert groups["a1"]["jobs"] == 0


def test_metrics_options_and_metric_list(golden):
    data = json.loads(
        run("metrics", golden, "--metric", "wait,bsld", "-M", "threshold=60", "--json")
    )
    assert [m["name"] for m in data["metrics"]] == ["wait", "bounded-slowdown"]
    assert data["rows"][0]["bounded-slowdown"]["max"] == pytest.approx(140 / 60)
    data = json.loads(
        run("metrics", golden, "--by", "accuracy-class", "-M", "window=1,weight=users", "--json")
    )
    assert data["options"]["window"] == 1 and data["options"]["weight"] == "users"


def test_metrics_table(golden):
    out = run("metrics", golden)
    assert "Per-job metrics (5 jobs)" in out
    for name in ("wait", "bounded-slowdown", "accuracy", "utilization", "loss-of-capacity"):
        assert name in out
    assert "note: wait: 1 of 5 jobs" in out
    grouped = run(
        "metrics", golden, "--by", "user", "-m", "wait", "--stat", "p90", "--time-unit", "min"
    )
    assert "wait p90 (min)" in grouped
    assert "Metrics by user" in grouped


def test_metrics_json_is_deterministic(golden):
    assert run("metrics", golden, "--by", "size", "--json") == run(
        "metrics", golden, "--by", "size", "--json"
    )


def test_metrics_errors_are_one_line(golden, capsys):
    code, out, err = run_main(capsys, "metrics", golden, "-M", "bogus=1")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("schedlab: error: metrics: unknown option")
    code, _, err = run_main(capsys, "metrics", golden, "-m", "latency")
    assert code == 2 and "unknown metric 'latency'" in err and err.count("\n") == 1
    code, _, err = run_main(capsys, "metrics", golden + ".missing")
    assert code == 2 and err.count("\n") == 1


# ---------------------------------------------------------------- compare


def test_compare_golden_schedules(backfill):
    data = json.loads(
        run("compare", backfill, "--policies", "fcfs+none,fcfs+easy", "-p", "sjf", "--json")
    )
    rows = data["rows"]
    assert [(r["policy"], r["backfill"]) for r in rows] == [
        ("fcfs", "none"),
        ("fcfs", "easy"),
        ("sjf", "easy"),
    ]
    waits = [r["metrics"]["rows"][0]["wait"] for r in rows]
    assert waits[0]["mean"] == pytest.approx((0 + 99 + 108) / 3)
    assert waits[0]["max"] == 108
    assert waits[1]["mean"] == pytest.approx(99 / 3)
    assert waits[1]["max"] == 99
    assert waits[2]["mean"] == pytest.approx(99 / 3)
    assert all(r["procs"] == 4 and r["jobs"] == 3 and r["excluded"] == 0 for r in rows)


def test_compare_table_and_plot(backfill, tmp_path):
    png = tmp_path / "out" / "compare.png"
    out = run(
        "compare",
        backfill,
        "--policies",
        "fcfs+none,fcfs+easy,sjf+conservative",
        "--plot",
        str(png),
    )
    assert "Policy comparison on backfill.swf" in out
    assert "conservative" in out and "wait mean (s)" in out and "bsld mean" in out
    assert f"wrote {png}" in out
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_compare_json_deterministic(backfill):
    args = ("compare", backfill, "--policies", "fcfs+easy,psp+conservative", "--json")
    assert run(*args) == run(*args)


def test_compare_errors(backfill, capsys):
    code, _, err = run_main(capsys, "compare", backfill, "--policies", "fcfs+easy,nosuch+easy")
    assert code == 2 and "unknown policy 'nosuch'" in err and err.count("\n") == 1
    code, _, err = run_main(capsys, "compare", backfill, "--policies", "fcfs+")
    assert code == 2 and "POLICY+BACKFILL" in err
    code, _, err = run_main(capsys, "compare", backfill, "--policies", "fcfs,fcfs+easy")
    assert code == 2 and "given twice" in err


def test_cli_subprocess_smoke(golden):
    """The installed entry point: one JSON document on stdout, nothing on stderr."""
    proc = subprocess.run(
        [sys.executable, "-m", "schedlab", "metrics", golden, "--json", "-m", "wait"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["rows"][0]["wait"]["median"] == 15.0


def test_compare_plot_adds_the_plotted_metrics(backfill, tmp_path):
    svg = tmp_path / "compare.svg"
    data = json.loads(
        run(
            "compare",
            backfill,
            "-p",
            "fcfs+none,fcfs+easy",
            "-m",
            "utilization",
            "--plot",
            str(svg),
            "--json",
        )
    )
    names = [m["name"] for m in data["rows"][0]["metrics"]["metrics"]]
    assert names == ["utilization", "wait", "bounded-slowdown"]
    assert svg.read_text().startswith("<?xml")
