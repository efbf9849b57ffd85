"""What the report page costs drawn with Plotly or Bokeh (issue 20 asked for one of
them, bundled inline): the measurements behind the decision written down in
docs/experiments.md, section 4. schedlab's page was drawn by its own canvas
script when this was first run; it is now drawn with Bokeh, and this script
times it the same way as the single-figure pages below.

On RICC-2010 simulated with fcfs+easy (447,794 jobs), it writes schedlab's page
and pages of the same data drawn by each library that is installed, with the
library's JavaScript inline (as an offline page needs): an empty figure (the
library alone), the series at the finest embedded resolution (mean as a line,
maximum as a filled band, step shape; Plotly: the four series, and at the
coarsest resolution too; Bokeh: utilization), and horizontal-bar Gantt charts
(one bar per job) of a one-day window cut to 3,000 jobs (what schedlab's page
draws at most), of 100,000 jobs and of every job (Plotly: only with
``--all-bars``, it does not finish). For each page: write time, size, the wall
time of ``chromium --headless --screenshot`` and the in-page time from navigation
start to the end of drawing (``performance.now()`` read after schedlab's script;
in Plotly's ``post_script``, which runs once ``Plotly.newPlot`` resolved; for
Bokeh when every view reports ``has_finished()``), with an empty page as the
browser's start-up baseline. A run that does not finish within ``--timeout``
seconds is reported as such.

Neither library is a dependency of schedlab: ``.venv/bin/pip install plotly bokeh``
first (a missing one is skipped).

Run: .venv/bin/python benchmarks/compare_report_libraries.py [--all-bars] [--timeout 300]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import schedlab
from schedlab.report import timed_jobs, write_report
from schedlab.report_data import bin_levels, bin_step, clock_of, series_steps

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "swf"
READY = "document.body.setAttribute('data-ready-ms', String(Math.round(performance.now())));"
#: With this address fragment the probe also removes the charts once timed, so
#: that dumping the DOM does not serialise 100,000 SVG elements.
STRIP = (
    "if (location.hash === '#strip') document.querySelectorAll('.plotly-graph-div')"
    ".forEach(function (e) { e.remove(); });"
)
#: Appended to a Bokeh page: the time at which every view has finished drawing.
BOKEH_PROBE = (
    "<script>(function () { var t = setInterval(function () {"
    " if (!window.Bokeh || !Bokeh.index) return;"
    " var views = Array.from(Bokeh.index.roots || Bokeh.index);"
    " if (views.length && views.every(function (v) { return v.has_finished(); })) {"
    " clearInterval(t); " + READY + " } }, 5); })();</script>"
)


def with_probe(text: str, probe: str) -> str:
    """``text`` with ``probe`` before its last ``</body>`` (Bokeh's own JavaScript
    holds the string too)."""
    head, sep, tail = text.rpartition("</body>")
    return head + probe + sep + tail


def chromium_times(binary: str, page: Path, timeout: float) -> tuple[str, str]:
    """(screenshot wall seconds, in-page seconds) as text; "> timeout" when not done."""
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--window-size=1000,2800",
        "--virtual-time-budget=120000",
    ]
    shot = page.with_suffix(".png")
    began = time.perf_counter()
    try:
        subprocess.run(
            [binary, *flags, f"--screenshot={shot}", page.resolve().as_uri()],
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"> {timeout:g}", "-"
    wall = f"{time.perf_counter() - began:.2f}"
    try:
        out = subprocess.run(
            [binary, *flags, "--dump-dom", page.resolve().as_uri() + "#strip"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        ).stdout
    except subprocess.TimeoutExpired:
        return wall, f"> {timeout:g}"
    found = re.search(r'data-ready-ms="(\d+)"', out)
    return wall, f"{int(found.group(1)) / 1e3:.2f}" if found else "not drawn"


def bokeh_pages(result: Any, tmp: Path) -> dict[str, tuple[Path, float]]:
    """Bokeh pages of the schedule (canvas output): name -> (path, write seconds)."""
    from bokeh.core.validation import silence
    from bokeh.core.validation.warnings import MISSING_RENDERERS
    from bokeh.embed import file_html
    from bokeh.models import ColumnDataSource, HoverTool
    from bokeh.plotting import figure
    from bokeh.resources import INLINE

    silence(MISSING_RENDERERS, True)  # the empty figure is empty on purpose
    columns = result.workload.to_arrays()
    ok = timed_jobs(columns)
    origin, stop = clock_of(columns)
    span = stop - origin
    t, v = series_steps(columns, float(result.procs))["busy"]
    submit = columns["submit_time"][ok] - origin
    start = submit + columns["wait_time"][ok]
    end = start + columns["run_time"][ok]

    def series() -> Any:
        width = bin_levels(span)[-1]
        count = int(np.ceil(span / width))
        mean, maximum = bin_step(t, v, origin, width, count)
        x = np.arange(count) * width / 86400
        fig = figure(width=950, height=200)
        fig.varea_step(x=x, y1=0, y2=maximum, step_mode="after", alpha=0.3)
        fig.step(x, mean, mode="after")
        return fig

    def gantt(rows: np.ndarray) -> Any:
        source = ColumnDataSource(
            {
                "y": np.arange(len(rows)),
                "left": start[rows] / 86400,
                "right": end[rows] / 86400,
                "id": columns["job_number"][ok][rows],
                "user": columns["user_id"][ok][rows],
            }
        )
        fig = figure(width=950, height=500, tools="xwheel_zoom,xpan,reset")
        fig.hbar(y="y", left="left", right="right", height=1, source=source)
        fig.add_tools(HoverTool(tooltips=[("job", "@id"), ("user", "@user")]))
        return fig

    day = 100 * 86400.0
    in_day = np.flatnonzero((submit < day + 86400) & (end > day))[:3000]
    n = int(ok.sum())
    figures = {
        "bokeh: empty figure (BokehJS alone)": lambda: figure(width=950, height=200),
        f"bokeh: utilization, finest bins ({bin_levels(span)[-1]:g} s)": series,
        f"bokeh: Gantt of a day, {len(in_day):,} bars": lambda: gantt(in_day),
        "bokeh: Gantt, 100,000 bars": lambda: gantt(np.arange(100_000)),
        f"bokeh: Gantt, {n:,} bars": lambda: gantt(np.arange(n)),
    }
    pages = {}
    for i, (name, make) in enumerate(figures.items()):
        began = time.perf_counter()
        text = with_probe(file_html(make(), INLINE, "schedule"), BOKEH_PROBE)
        path = tmp / f"bokeh-{i}.html"
        path.write_text(text, encoding="utf-8")
        pages[name] = (path, time.perf_counter() - began)
    return pages


def plotly_pages(result: Any, tmp: Path, all_bars: bool) -> dict[str, tuple[Path, float]]:
    """Plotly pages of the schedule: name -> (path, write seconds)."""
    import plotly.graph_objects as go
    import plotly.io as pio
    from plotly.subplots import make_subplots

    columns = result.workload.to_arrays()
    ok = timed_jobs(columns)
    origin, stop = clock_of(columns)
    span = stop - origin
    steps = series_steps(columns, float(result.procs))
    submit = columns["submit_time"][ok] - origin
    start = submit + columns["wait_time"][ok]
    end = start + columns["run_time"][ok]
    user, number = columns["user_id"][ok], columns["job_number"][ok]

    def series(width: float) -> Any:
        count = int(np.ceil(span / width))
        fig = make_subplots(rows=4, cols=1, shared_xaxes=True)
        x = np.arange(count) * width / 86400
        for row, (t, v) in enumerate(steps.values(), start=1):
            mean, maximum = bin_step(t, v, origin, width, count)
            band = go.Scatter(
                x=x, y=maximum, line_shape="hv", fill="tozeroy", mode="lines", line_width=0
            )
            fig.add_trace(band, row=row, col=1)
            fig.add_trace(go.Scatter(x=x, y=mean, line_shape="hv", mode="lines"), row=row, col=1)
        fig.update_layout(height=800, width=950, showlegend=False)
        return fig

    def gantt(rows: np.ndarray) -> Any:
        bars = go.Bar(
            y=np.arange(len(rows)),
            base=start[rows] / 86400,
            x=(end[rows] - start[rows]) / 86400,
            orientation="h",
            marker={"color": np.nan_to_num(user[rows]) % 12, "line_width": 0},
            customdata=np.c_[number[rows], user[rows]],
            hovertemplate="job %{customdata[0]} user %{customdata[1]}<extra></extra>",
        )
        fig = go.Figure(bars)
        fig.update_layout(height=500, width=950, bargap=0)
        return fig

    day = 100 * 86400.0
    in_day = np.flatnonzero((submit < day + 86400) & (end > day))[:3000]
    levels = bin_levels(span)
    figures = {
        "plotly: empty figure (plotly.js alone)": lambda: go.Figure(),
        f"plotly: 4 series, coarsest bins ({levels[0]:g} s)": lambda: series(levels[0]),
        f"plotly: 4 series, finest bins ({levels[-1]:g} s)": lambda: series(levels[-1]),
        f"plotly: Gantt of a day, {len(in_day):,} bars": lambda: gantt(in_day),
        "plotly: Gantt, 100,000 bars": lambda: gantt(np.arange(100_000)),
    }
    if all_bars:
        figures[f"plotly: Gantt, {int(ok.sum()):,} bars"] = lambda: gantt(np.arange(int(ok.sum())))
    pages = {}
    for i, (name, make) in enumerate(figures.items()):
        began = time.perf_counter()
        text = pio.to_html(make(), include_plotlyjs=True, full_html=True, post_script=READY + STRIP)
        path = tmp / f"plotly-{i}.html"
        path.write_text(text, encoding="utf-8")
        pages[name] = (path, time.perf_counter() - began)
    return pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all-bars", action="store_true", help="also every job as a bar")
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    import importlib.util

    have = {name: importlib.util.find_spec(name) is not None for name in ("plotly", "bokeh")}
    if not any(have.values()):
        raise SystemExit(
            "neither plotly nor bokeh is installed: .venv/bin/pip install plotly bokeh"
        )
    binary = shutil.which("chromium")
    if binary is None:
        raise SystemExit("no chromium binary")
    workload = schedlab.read(str(DATA / "RICC-2010-2.swf.gz"))
    result = schedlab.simulate(workload, policy="fcfs", backfill="easy", progress=False)
    from importlib.metadata import version

    libraries = ", ".join(f"{name} {version(name)}" for name, there in have.items() if there)
    print(f"RICC-2010 fcfs+easy: {len(workload):,} jobs; {libraries}")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        empty = tmp / "empty.html"
        empty.write_text(f"<!DOCTYPE html><html><body><script>{READY}</script></body></html>\n")
        began = time.perf_counter()
        ours = write_report(result, tmp / "schedlab.html")
        written = time.perf_counter() - began
        ours.write_text(with_probe(ours.read_text(encoding="utf-8"), BOKEH_PROBE), "utf-8")
        pages = {
            "empty page (browser start-up)": (empty, 0.0),
            "schedlab page (everything)": (ours, written),
        }
        if have["plotly"]:
            pages.update(plotly_pages(result, tmp, args.all_bars))
        if have["bokeh"]:
            pages.update(bokeh_pages(result, tmp))
        print(f"{'page':48} {'write s':>8} {'MB':>7} {'wall s':>8} {'in page s':>10}")
        for name, (path, seconds) in pages.items():
            wall, inside = chromium_times(binary, path, args.timeout)
            size = path.stat().st_size / 1e6
            print(f"{name:48} {seconds:8.2f} {size:7.2f} {wall:>8} {inside:>10}", flush=True)


if __name__ == "__main__":
    main()
