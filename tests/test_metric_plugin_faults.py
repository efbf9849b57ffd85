"""An installed metric plugin that fails never stops the default commands, and the
metrics named with ``-m`` all reach the ``compare`` table.

The faulty plugins are fake installed distributions in
``tests/fixtures/faulty_metric_site`` (a ``*.dist-info`` folder with
``entry_points.txt``, found on ``PYTHONPATH`` by the entry-point discovery a real
``pip install`` feeds):

``schedlab-raising-metric`` 0.7.0 (entry point ``raising-metric``)
    the per-job metric ``bad-metric``, whose ``compute`` raises ``RuntimeError``;
``schedlab-shapeless-metric`` 0.8.0 (entry point ``shapeless-metric``)
    the per-job metric ``bad-shape``, which returns one value too few.

Decision (docs/metrics.md): a failing metric of the default set is left out with one
warning line naming the plugin and the metric, once per command; a metric asked for
by name (``-m``) stops the command with a one-line error naming the plugin (exit 3).
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import warnings
from importlib import metadata
from pathlib import Path

import pytest
import schedlab
from schedlab.errors import PluginRuntimeError, PluginRuntimeWarning
from schedlab.registry import build_registry
from schedlab.testing import builtin_entry_points, run_cli

SITE = Path(__file__).parent / "fixtures" / "faulty_metric_site"
CONTROLS = (
    "SCHEDLAB_STRICT_PLUGINS",
    "SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD",
    "SCHEDLAB_ALLOW_PLUGINS",
    "SCHEDLAB_BLOCK_PLUGINS",
)
TRACE = "HPC2N-2002_excerpt-3170jobs_alea.swf"  # 3,170 jobs: a second per command
RAISING = (
    "schedlab: warning: plugin 'raising-metric' (schedlab-raising-metric 0.7.0) "
    "failed in metric 'bad-metric': RuntimeError: metric table has no column "
    "'energy'; the metric is left out (a bug in that plugin: report it to its "
    "authors; SCHEDLAB_BLOCK_PLUGINS=raising-metric disables it)"
)
RAISING_ERROR = (
    "schedlab: error: plugin 'raising-metric' (schedlab-raising-metric 0.7.0) "
    "failed in metric 'bad-metric': RuntimeError: metric table has no column "
    "'energy'"
)


@pytest.fixture()
def trace(swf_dir) -> Path:
    return swf_dir / TRACE


def _cli(*args: str, plugin: str = "raising-metric", **env: str) -> subprocess.CompletedProcess:
    """``schedlab ARGS`` in a new process with ``plugin`` of the fake site installed
    (and no other third-party plugin of the environment)."""
    clean = {k: v for k, v in os.environ.items() if k not in CONTROLS}
    clean["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SITE), clean.get("PYTHONPATH")]))
    clean["SCHEDLAB_ALLOW_PLUGINS"] = plugin
    return subprocess.run(
        [sys.executable, "-m", "schedlab", *args],
        capture_output=True,
        text=True,
        env={**clean, **env},
        timeout=300,
    )


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("schedlab: warning: ")]


def _one_line_error(run: subprocess.CompletedProcess, start: str) -> None:
    assert run.returncode == 3, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(start), run.stderr
    assert "SCHEDLAB_BLOCK_PLUGINS=" in lines[0] and "Traceback" not in run.stderr


# ------------------------------------------------- a failing metric of the default set


def test_simulate_leaves_the_metric_out_with_one_warning_and_writes_the_schedule(trace, tmp_path):
    out = tmp_path / "out.swf"
    run = _cli("simulate", str(trace), "-b", "easy", "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert _warnings(run.stderr) == [RAISING]
    assert "error" not in run.stderr
    for shown in ("Per-job metrics", "bounded-slowdown", "System metrics", "utilization"):
        assert shown in run.stdout
    assert "bad-metric" not in run.stdout
    # the schedule written is the one written without the plugin
    plain = tmp_path / "plain.swf"
    blocked = _cli(
        "simulate",
        str(trace),
        "-b",
        "easy",
        "-o",
        str(plain),
        SCHEDLAB_BLOCK_PLUGINS="raising-metric",
    )
    assert blocked.returncode == 0 and _warnings(blocked.stderr) == []
    assert out.read_bytes() == plain.read_bytes()


def test_metrics_leaves_it_out_but_stops_when_it_is_asked_for(trace):
    run = _cli("metrics", str(trace))
    assert run.returncode == 0, run.stderr
    assert _warnings(run.stderr) == [RAISING]
    assert "wait" in run.stdout and "makespan" in run.stdout and "bad-metric" not in run.stdout
    data = _cli("metrics", str(trace), "--json")
    assert data.returncode == 0 and _warnings(data.stderr) == [RAISING]
    assert '"name": "wait"' in data.stdout and "bad-metric" not in data.stdout
    # asked for by name: the plugin's bug is an error naming it, as before
    _one_line_error(_cli("metrics", str(trace), "-m", "wait,bad-metric"), RAISING_ERROR)
    # strict mode makes every plugin fault an error
    _one_line_error(_cli("metrics", str(trace), SCHEDLAB_STRICT_PLUGINS="1"), RAISING_ERROR)


def test_compare_warns_once_for_all_its_combinations(trace):
    run = _cli("compare", str(trace), "-p", "fcfs+easy,sjf+easy,sjf+none")
    assert run.returncode == 0, run.stderr
    assert _warnings(run.stderr) == [RAISING]  # one line, not one per combination
    lines = run.stdout.splitlines()
    assert "wait mean (s)" in run.stdout and "bsld mean" in run.stdout
    for policy, backfill in (("fcfs", "easy"), ("sjf", "easy"), ("sjf", "none")):
        assert any(f" {policy} " in line and f" {backfill} " in line for line in lines)
    _one_line_error(
        _cli("compare", str(trace), "-p", "fcfs+easy", "-m", "bad-metric"), RAISING_ERROR
    )


def test_sweep_warns_once_for_all_its_cells_and_workers(trace, tmp_path):
    out = tmp_path / "sweep"
    args = (
        "sweep",
        "-w",
        str(trace),
        "-p",
        "fcfs,sjf",
        "-b",
        "easy,none",
        "--workers",
        "2",
        "--no-progress",
        "--out",
        str(out),
    )
    run = _cli(*args)
    assert run.returncode == 0, run.stderr
    assert _warnings(run.stderr) == [RAISING]
    assert "4 cells: 4 run" in run.stderr
    with open(out / "results.csv", newline="") as handle:
        metrics = {row["metric"] for row in csv.DictReader(handle)}
    assert {"wait", "bounded-slowdown", "utilization"} <= metrics
    assert "bad-metric" not in metrics
    # resumed: the finished cells still say why the metric is missing
    again = _cli(*args)
    assert again.returncode == 0 and "4 already finished" in again.stderr
    assert _warnings(again.stderr) == [RAISING]
    asked = _cli(
        "sweep",
        "-w",
        str(trace),
        "-p",
        "fcfs",
        "-m",
        "wait,bad-metric",
        "--workers",
        "1",
        "--no-progress",
        "--out",
        str(tmp_path / "asked"),
    )
    _one_line_error(asked, RAISING_ERROR)


def test_report_of_several_schedules_warns_once(trace, tmp_path):
    page = tmp_path / "page.html"
    # two schedules on one page (--simulate given twice was the last one alone)
    run = _cli("report", str(trace), "--simulate", "fcfs+easy,sjf+easy", "-o", str(page))
    assert run.returncode == 0, run.stderr
    assert _warnings(run.stderr) == [RAISING]
    text = page.read_text(encoding="utf-8")
    assert "fcfs + easy" in text and "sjf + easy" in text
    assert "bounded-slowdown" in text and "bad-metric" not in text


def test_a_metric_of_the_wrong_shape_is_blamed_on_its_plugin(trace):
    run = _cli("metrics", str(trace), plugin="shapeless-metric")
    assert run.returncode == 0, run.stderr
    (line,) = _warnings(run.stderr)
    assert line.startswith(
        "schedlab: warning: plugin 'shapeless-metric' (schedlab-shapeless-metric 0.8.0) "
        "failed in metric 'bad-shape': ValueError: metric bad-shape returned an array of "
        "shape (3169,), expected one value per job (3170,); the metric is left out"
    )
    assert "wait" in run.stdout and "bad-shape" not in run.stdout
    # asked for: the plugin's bug (exit 3), not a usage error (exit 2)
    _one_line_error(
        _cli("metrics", str(trace), "-m", "bad-shape", plugin="shapeless-metric"),
        "schedlab: error: plugin 'shapeless-metric' (schedlab-shapeless-metric 0.8.0) "
        "failed in metric 'bad-shape': ValueError: metric bad-shape returned an array",
    )


def test_compute_metrics_leaves_out_a_failing_default_metric(trace, monkeypatch):
    for name in CONTROLS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.syspath_prepend(str(SITE))
    monkeypatch.delitem(sys.modules, "faulty_raising_metric", raising=False)
    (dist,) = metadata.distributions(name="schedlab-raising-metric", path=[str(SITE)])
    fake = [ep for ep in dist.entry_points if ep.group == "schedlab"]
    registry = build_registry(entry_points=[*builtin_entry_points(), *fake])
    workload = schedlab.read(trace, registry=registry)
    with pytest.warns(PluginRuntimeWarning) as caught:
        report = schedlab.compute_metrics(workload, registry=registry)
    (warning,) = [w.message for w in caught if isinstance(w.message, PluginRuntimeWarning)]
    assert (warning.plugin, warning.component) == ("raising-metric", "metric bad-metric")
    assert "bad-metric" not in report.metric_names()
    assert {"wait", "utilization"} <= set(report.metric_names())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # asked for by name: no warning, the error
        with pytest.raises(PluginRuntimeError, match="failed in metric 'bad-metric'"):
            schedlab.compute_metrics(workload, names=["wait", "bad-metric"], registry=registry)


# --------------------------------------------- every metric named has a compare column


def _header(out: str) -> list[str]:
    """The column titles of the comparison table (its first line with ``policy``)."""
    line = next(line for line in out.splitlines() if " policy " in line)
    return [cell.strip() for cell in line.strip("┃│ ").split("┃")]


def test_compare_shows_a_column_for_each_metric_named(capsys, trace):
    code, out, err = run_cli(
        capsys,
        "compare",
        str(trace),
        "-p",
        "fcfs+easy,sjf+easy",
        "-m",
        "slowdown,response,utilization",
    )
    assert code == 0, err
    assert _header(out) == [
        "policy",
        "backfill",
        "jobs",
        "excluded",
        "util",
        "slowdown mean",
        "response mean (s)",
        "sim (s)",
    ]
    # the chosen statistic, when the mean is not computed; the unit follows --time-unit
    code, out, err = run_cli(
        capsys,
        "compare",
        str(trace),
        "-p",
        "fcfs+easy",
        "-m",
        "wait,throughput",
        "-M",
        "stats=median",
        "--time-unit",
        "min",
    )
    assert code == 0, err
    assert _header(out) == [
        "policy",
        "backfill",
        "jobs",
        "excluded",
        "wait median (min)",
        "throughput (jobs/h)",
        "sim (s)",
    ]
    # no -m: the usual columns, unchanged
    code, out, err = run_cli(capsys, "compare", str(trace), "-p", "fcfs+easy,sjf+easy")
    assert code == 0, err
    assert _header(out) == [
        "policy",
        "backfill",
        "jobs",
        "excluded",
        "wait mean (s)",
        "wait p90 (s)",
        "wait max (s)",
        "bsld mean",
        "bsld p90",
        "util",
        "LoC",
        "fairness",
        "makespan (s)",
        "sim (s)",
    ]
