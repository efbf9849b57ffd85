"""Fixes of the third report audit ("what a person sees"): the platform note on
report pages (1), numbers never cut in terminal tables (2), the psp experiment's
piped width (3), jobs of unknown user in the per-user and per-class charts (4),
the static node Gantt chart on the page's clock (5), the waiting colour kept out
of the user palette (6), no legend over the comparison's data (7) and the shared
node note only when a node is shared (8)."""

from __future__ import annotations

import html
import io
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from schedlab.testing import run_cli

pytest.importorskip("bokeh")

from schedlab.report import build_comparison, build_report
from schedlab.report_charts import embedded_objects

# Two exclusive 4-core nodes; every job asks for one core, so it holds a whole
# node: the metrics' utilization (processors asked) and the platform's (cores
# held) differ.
EXCLUSIVE = """[platform]
sharing = "exclusive"
[node_groups.n]
count = 2
cores = 4
[partitions.p]
nodes = ["n"]
"""
SHARED = EXCLUSIVE.replace('sharing = "exclusive"', 'sharing = "shared"')
JOBS = """; MaxProcs: 8
1 0 -1 1000 1 -1 -1 1 1000 -1 1 1 1 -1 1 -1 -1 -1
2 10 -1 500 1 -1 -1 1 600 -1 1 2 1 -1 1 -1 -1 -1
3 20 -1 300 1 -1 -1 1 400 -1 1 3 1 -1 1 -1 -1 -1
4 30 -1 200 1 -1 -1 1 200 -1 1 1 1 -1 1 -1 -1 -1
"""


def _simulate(tmp_path: Path, platform: str, policy: str = "fcfs") -> Any:
    (tmp_path / "p.toml").write_text(platform)
    (tmp_path / "j.swf").write_text(JOBS)
    return schedlab.simulate(
        schedlab.read(str(tmp_path / "j.swf")),
        policy=policy,
        backfill="easy",
        platform=str(tmp_path / "p.toml"),
        progress=False,
    )


def _notes(page: str) -> list[str]:
    return [html.unescape(n) for n in re.findall(r"<p class='note'>(.*?)</p>", page)]


# Finding 1: the "cores held" note of simulate/compare is on the pages too.


def test_report_page_has_the_held_note(tmp_path: Path) -> None:
    from schedlab.comparison import held_note

    result = _simulate(tmp_path, EXCLUSIVE)
    held = held_note(result, schedlab.compute_metrics(result))
    assert held and "cores held" in held
    for static in (False, True):
        page = build_report(result, title="t", static=static)
        assert f"note: {held}" in _notes(page), static


def test_compare_report_page_has_the_held_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "p.toml").write_text(EXCLUSIVE)
    (tmp_path / "j.swf").write_text(JOBS)
    page = tmp_path / "c.html"
    code, out, err = run_cli(
        capsys, "compare", str(tmp_path / "j.swf"), "-p", "fcfs+easy,sjf+easy",
        "--platform", str(tmp_path / "p.toml"), "--report", str(page), "--no-timings",
    )  # fmt: skip
    assert code == 0, err
    printed = [line for line in out.splitlines() if "cores held" in line]
    assert printed
    notes = [n for n in _notes(page.read_text(encoding="utf-8")) if "cores held" in n]
    assert notes
    # the page names the same figures the terminal printed
    for figure in re.findall(r"cores held [0-9.]+", "\n".join(printed)):
        assert any(figure in n for n in notes), figure


# Finding 2: in an 80-column terminal no number is cut.


def _right_cells(tables: list[Any]) -> list[str]:
    """The text of every cell of the tables' right-justified (numeric) columns."""
    from rich.text import Text

    out = []
    for table in tables:
        for column in table.columns:
            if column.justify == "right":
                out += [
                    c.plain if isinstance(c, Text) else Text.from_markup(str(c)).plain
                    for c in column.cells
                ]
    return [c for c in out if c]


def _narrow(monkeypatch: pytest.MonkeyPatch, module: str) -> io.StringIO:
    """``module``'s wide console made an 80-column terminal writing to a buffer."""
    from rich.console import Console

    buffer = io.StringIO()
    monkeypatch.setattr(
        module + ".wide_console", lambda: Console(width=80, file=buffer, force_terminal=False)
    )
    return buffer


def _assert_whole(text: str, cells: list[str]) -> None:
    assert "…" not in text
    assert all(len(line) <= 80 for line in text.splitlines())
    body = text.replace("│", " ").split()
    for cell in cells:
        assert cell in body, cell


def test_compare_table_keeps_numbers_at_80_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from schedlab.comparison import compare_policies

    trace = _long_trace(tmp_path / "long.swf")
    buffer = _narrow(monkeypatch, "schedlab.cli.compare")
    code, _, err = run_cli(
        capsys, "compare", str(trace), "-p", "fcfs+easy,sjf+easy", "--no-timings"
    )
    assert code == 0, err
    comparison = compare_policies(schedlab.read(str(trace)), "fcfs+easy,sjf+easy")
    text = buffer.getvalue()
    _assert_whole(text, _right_cells([comparison.table("s", timing=False)]))
    assert "fcfs" in text and "sjf" in text


def _long_trace(path: Path) -> Path:
    """40 jobs with waits and run times of days (six-digit seconds), 3 queues."""
    lines = ["; MaxProcs: 64"]
    for k in range(40):
        wait, run, size = 100_000 + 7_919 * k, 200_000 + 104_729 * (k % 7), 1 + k % 64
        lines.append(
            f"{k + 1} {k * 3_600} {wait} {run} {size} -1 -1 {size} {run + 50_000} -1 1 "
            f"{k % 5 + 1} 1 -1 {k % 3 + 1} -1 -1 -1"
        )
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("by", [None, "queue", "user"])
def test_metrics_tables_keep_numbers_at_80_columns(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    by: str | None,
) -> None:
    trace = _long_trace(tmp_path / "long.swf")
    buffer = _narrow(monkeypatch, "schedlab.cli.metrics")
    code, _, err = run_cli(capsys, "metrics", str(trace), *(["--by", by] if by else []))
    assert code == 0, err
    report = schedlab.compute_metrics(schedlab.read(str(trace)), by=by)
    _assert_whole(buffer.getvalue(), _right_cells(report.tables()))


def test_table_that_fits_is_unchanged() -> None:
    """A table that fits the console is printed as rich prints it."""
    from rich.console import Console
    from rich.table import Table
    from schedlab.cli._console import print_table

    table = Table(title="t")
    table.add_column("name")
    table.add_column("a long numeric header", justify="right")
    table.add_row("x", "12,345.6")
    plain, fitted = io.StringIO(), io.StringIO()
    Console(width=80, file=plain).print(table)
    print_table(Console(width=80, file=fitted), table)
    assert fitted.getvalue() == plain.getvalue()


def test_wide_table_is_split_with_its_key_columns() -> None:
    from rich.console import Console
    from rich.table import Table
    from schedlab.cli._console import print_table

    table = Table(title="wide")
    table.add_column("policy", no_wrap=True)
    for k in range(14):
        table.add_column(f"metric number {k} (min)", justify="right")
    table.add_row("fcfs", *[f"{123_456.789 * (k + 1):,.1f}" for k in range(14)])
    table.add_row("sjf", *[f"{0.001 * (k + 1):.3f}" for k in range(14)])
    buffer = io.StringIO()
    print_table(Console(width=80, file=buffer), table)
    text = buffer.getvalue()
    _assert_whole(text, _right_cells([table]))
    assert text.count("fcfs") >= 2  # the key column repeated in every part
    assert "wide (continued)" in text


# Finding 3: `experiment psp` piped is as wide as the other commands.


def test_psp_experiment_piped_is_not_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        capsys, "experiment", "psp", "--workloads", "1", "-G", "jobs=100", "--out",
        str(tmp_path / "psp"), "--workers", "1", "--config", "both",
    )  # fmt: skip
    assert code == 0, err
    assert "…" not in out
    assert "scenario" in out


# Finding 4: jobs of unknown user are in the per-user and per-class charts.

UNKNOWN_USER = """; MaxProcs: 4
1 0 0 100 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1
2 0 60 100 1 -1 -1 1 200 -1 1 2 1 -1 1 -1 -1 -1
3 0 120 100 1 -1 -1 1 100 -1 1 -1 1 -1 1 -1 -1 -1
4 0 600 100 1 -1 -1 1 100 -1 1 -1 1 -1 1 -1 -1 -1
"""


def _bars(page: str, name: str) -> dict[str, float]:
    """``{group: mean wait}`` of the bar chart ``name`` of a page."""
    (fig,) = [f for f in embedded_objects(page, "Figure") if f.get("name") == name]
    factors = fig["x_range"]["attributes"]["factors"]
    sources = [
        s for s in embedded_objects(page, "ColumnDataSource") if s.get("name") == f"{name}-bars"
    ]
    (source,) = sources
    data = dict(source["data"]["entries"])
    assert data["group"] == factors
    return dict(zip(data["group"], data["minutes"], strict=True))


def test_unknown_user_bar_in_user_and_class_charts(tmp_path: Path) -> None:
    path = tmp_path / "u.swf"
    path.write_text(UNKNOWN_USER)
    page = build_report(schedlab.read(str(path)), title="u")
    users = _bars(page, "mean-wait-per-user")
    assert users["unknown"] == pytest.approx((2 + 10) / 2)  # jobs 3 and 4, minutes
    assert users["1"] == 0 and users["2"] == 1
    classes = _bars(page, "mean-wait-per-accuracy-class")
    assert classes["unknown"] == pytest.approx(6.0)
    assert "2 jobs of unknown user" in html.unescape(page)


def test_unknown_user_bar_on_the_static_page(tmp_path: Path) -> None:
    path = tmp_path / "u.swf"
    path.write_text(UNKNOWN_USER)
    page = build_report(schedlab.read(str(path)), title="u", static=True)
    assert "2 jobs of unknown user" in html.unescape(page)


# Finding 5: the static node Gantt chart is on the page's clock.


def test_static_node_gantt_on_the_page_clock(tmp_path: Path) -> None:
    from schedlab.report_nodes import figure_node_gantt, node_schedule

    result = _simulate(tmp_path, EXCLUSIVE)
    shifted = result.workload.to_arrays()
    origin = float(np.nanmin(shifted["submit_time"]))
    page = build_report(result, title="n", static=True, node_window=(100.0, 900.0))
    assert "2 nodes from 100 s to 900 s since the first submission" in page
    fig = figure_node_gantt(
        shifted, node_schedule(result.workload), (origin + 100.0, origin + 900.0)
    )
    (ax,) = fig.axes
    assert ax.get_xlabel() == "Time since first submission (s)"
    assert ax.get_xlim() == pytest.approx((100.0, 900.0))


def test_static_node_gantt_on_a_shifted_clock(tmp_path: Path) -> None:
    """A trace whose first submission is not 0: the window is on the page's clock."""
    (tmp_path / "p.toml").write_text(EXCLUSIVE)
    text = "\n".join(
        line if line.startswith(";") else " ".join([line.split()[0], str(int(line.split()[1])
                                                    + 50_000), *line.split()[2:]])
        for line in JOBS.splitlines()
    )  # fmt: skip
    (tmp_path / "s.swf").write_text(text + "\n")
    result = schedlab.simulate(
        schedlab.read(str(tmp_path / "s.swf")),
        policy="fcfs",
        backfill="easy",
        platform=str(tmp_path / "p.toml"),
        progress=False,
    )
    page = build_report(result, title="n", static=True, node_window=(0.0, 600.0))
    assert "2 nodes from 0 s to 600 s since the first submission" in page
    assert "50,000" not in page


# Finding 6: no user colour is the waiting colour, or close to it.


def _rgb(colour: str) -> np.ndarray:
    return np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=float)


def test_waiting_colour_not_in_the_user_palette(tmp_path: Path) -> None:
    result = _simulate(tmp_path, EXCLUSIVE)
    page = build_report(result, title="c")
    (waiting,) = {
        g["fill_color"]["value"]
        for g in embedded_objects(page, "HBar")
        if g.get("left", {}).get("field") == "submit"
    }
    palettes = [
        dict(c["args"]["entries"])["palette"]
        for c in embedded_objects(page, "CustomJS")
        if "palette" in dict(c.get("args", {}).get("entries", []))
    ]
    assert palettes
    for palette in palettes:
        for colour in palette:
            assert np.linalg.norm(_rgb(colour) - _rgb(waiting)) > 100, colour


# Finding 7: no legend inside the comparison's "Processors used" chart.


def test_comparison_busy_chart_has_no_legend_over_the_data(tmp_path: Path) -> None:
    first = _simulate(tmp_path, EXCLUSIVE)
    second = _simulate(tmp_path, EXCLUSIVE, policy="sjf")
    page = build_comparison([("fcfs + easy", first), ("sjf + easy", second)])
    (busy,) = [f for f in embedded_objects(page, "Figure") if f.get("name") == "series-busy"]
    inside = [m for m in busy.get("center", []) if m.get("name") == "Legend"]
    assert not inside
    assert "fcfs + easy" in page and "sjf + easy" in page  # the key above the charts


# Finding 8: the shared-node note only when a node holds jobs together.


def _divs(page: str) -> list[str]:
    return [d.get("text") or "" for d in embedded_objects(page, "Div")]


def test_shared_node_note_only_when_a_node_is_shared(tmp_path: Path) -> None:
    from schedlab.report_charts import SHARED_NODE_NOTE

    exclusive = build_report(_simulate(tmp_path, EXCLUSIVE), title="e")
    assert SHARED_NODE_NOTE not in _divs(exclusive)
    shared = build_report(_simulate(tmp_path, SHARED), title="s")
    assert SHARED_NODE_NOTE in _divs(shared)


def test_shares_nodes_needs_two_jobs_at_once_on_one_node() -> None:
    from schedlab.report_nodes import _shares_nodes

    def shared(times: list[tuple[float, float]], allocations: list[list[int]]) -> bool:
        starts = np.array([t[0] for t in times], dtype=float)
        columns = {
            "submit_time": np.zeros(len(times)),
            "wait_time": starts,
            "run_time": np.array([t[1] for t in times], dtype=float) - starts,
        }
        return _shares_nodes(columns, {"allocations": allocations})  # type: ignore[arg-type]

    assert not shared([(0, 5), (5, 10)], [[0], [0]])  # back to back
    assert not shared([(0, 10), (1, 2)], [[0], [1]])  # at once, on other nodes
    assert shared([(0, 10), (1, 2), (5, 6)], [[0, 1], [1], [0]])  # 0-10 with 5-6 on node 0
    assert not shared([(0, 10), (3, 3)], [[0], [0]])  # a zero-length job holds nothing


def test_simulate_tables_keep_numbers_at_80_columns(tmp_path: Path) -> None:
    # simulate printed its metrics table with rich's own fitting, cutting numbers.
    import os
    import subprocess
    import sys

    trace = tmp_path / "t.swf"
    rows = [
        f"{i} {i * 5} -1 {100000 + 37 * i} 4 -1 -1 4 200000 -1 1 {i % 7} 1 -1 1 1 -1 -1"
        for i in range(1, 200)
    ]
    trace.write_text("; MaxProcs: 16\n" + "\n".join(rows) + "\n")
    env = {**os.environ, "COLUMNS": "80", "TERM": "xterm"}
    script = (
        "import sys, rich.console as rc\n"
        "rc.Console.is_terminal = property(lambda self: True)\n"
        "from schedlab.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, "simulate", str(trace)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    assert "…" not in out, out
