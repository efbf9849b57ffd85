"""The interactive report as a person sees it: opened in headless Chromium.

The page is drawn by Bokeh. A probe script appended to a copy of the page waits
until Bokeh's document is idle and every root view has finished drawing, then
reads what the page shows: for every chart (a Bokeh figure) its composed canvas
(how many pixels are drawn in colour, i.e. data rather than axes and text), the
texts of the page's information lines, the rows of the Gantt chart, the window.
It can also play steps a user would: set the window, turn the mouse wheel over a
chart and hover bars (real pointer events on Bokeh's event layer; the tooltip
Bokeh shows is read back). It writes its findings as JSON into
``<body data-result>``, which ``chromium --dump-dom`` prints. Any console message
of the page fails the test (the page logs nothing), and screenshots are written
into the test's temporary directory.

Chromium is Debian's ``chromium`` package (``apt-get install chromium``). Without
the ``chromium`` binary these tests are skipped, unless the environment variable
``SCHEDLAB_REQUIRE_BROWSER`` is set (to anything non-empty): then they fail, so a
CI job that is meant to check the browser cannot pass by skipping.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from schedlab.report import write_report
from schedlab.report_charts import embedded_sources

#: The charts of a one-schedule page without platform: overview, 4 series, Gantt,
#: 2 CDFs and the bars (per user and per accuracy class on the generated traces).
SERIES = ["overview", "series-busy", "series-running", "series-queued", "series-demand"]


def chromium() -> str:
    binary = shutil.which("chromium")
    if binary is None:
        if os.environ.get("SCHEDLAB_REQUIRE_BROWSER"):
            pytest.fail("SCHEDLAB_REQUIRE_BROWSER is set but there is no chromium binary")
        pytest.skip("no chromium binary (set SCHEDLAB_REQUIRE_BROWSER to make this a failure)")
    return binary


def run_chromium(page: Path, *args: str, fragment: str = "") -> subprocess.CompletedProcess:
    command = [
        chromium(),
        "--headless",
        "--no-sandbox",  # tests may run as root in containers
        "--disable-gpu",
        "--virtual-time-budget=30000",
        "--window-size=1000,2800",
        *args,
        page.resolve().as_uri() + fragment,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)


#: Appended to a copy of a page (before its last ``</body>``: Bokeh's own
#: JavaScript contains the string). ``__STEPS__`` is replaced by a JSON list.
PROBE = """<script>
(function () {
  "use strict";
  var STEPS = __STEPS__, result = {states: [], tips: []}, DAY = 86400;
  function views() { return Array.from(Bokeh.index.all_views()); }
  function figure(name) {
    return views().filter(function (v) {
      return v.model.type === "Figure" && v.model.name === name;
    })[0];
  }
  function model(type, name) {
    for (var m of Bokeh.documents[0].all_models) if (m.type === type && m.name === name) return m;
    return null;
  }
  function text(name) { var m = model("Div", name); return m ? m.text : null; }
  function idle() {
    if (!window.Bokeh || !Bokeh.documents.length || !Bokeh.documents[0].is_idle) return false;
    var roots = Array.from(Bokeh.index.roots);
    return roots.length > 0 && roots.every(function (v) { return v.has_finished(); });
  }
  function ink(view) {
    var canvas = view.canvas_view.compose().canvas;
    var data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    var colour = 0, drawn = 0;
    for (var i = 0; i < data.length; i += 4) {
      var r = data[i], g = data[i + 1], b = data[i + 2], a = data[i + 3];
      if (a < 128) continue;
      if (r < 235 || g < 235 || b < 235) drawn++;
      if (Math.max(r, g, b) - Math.min(r, g, b) > 40) colour++;
    }
    return {colour: colour, drawn: drawn, pixels: canvas.width * canvas.height};
  }
  function state() {
    var plots = {};
    views().forEach(function (v) {
      if (v.model.type === "Figure") plots[v.model.name] = ink(v);
    });
    var range = model("Range1d", "window"), gantt = model("ColumnDataSource", "gantt");
    var nodes = model("ColumnDataSource", "node-gantt");
    return {plots: plots, bins: text("bin-info"), gantt: text("gantt-info"),
            nodes: text("node-info"), rows: gantt.data.y.length,
            bars: nodes ? nodes.data.y.length : null,
            window: [range.start * DAY, range.end * DAY]};
  }
  function at(view, type, x, y, extra) {
    var box = view.canvas_view.events_el.getBoundingClientRect();
    var init = {bubbles: true, composed: true, cancelable: true, clientX: box.left + x,
                clientY: box.top + y, pointerType: "mouse", isPrimary: true, pointerId: 1};
    for (var k in extra || {}) init[k] = extra[k];
    var event = type === "wheel" ? new WheelEvent(type, init) : new PointerEvent(type, init);
    view.canvas_view.events_el.dispatchEvent(event);
  }
  function tooltip() {
    var shown = views().filter(function (v) {
      return v.model.type === "Tooltip" && v.el.isConnected &&
        getComputedStyle(v.el).display !== "none";
    });
    return shown.map(function (v) {
      return Array.from(v.shadow_el.childNodes).filter(function (n) {
        return n.nodeName !== "STYLE";
      }).map(function (n) { return n.textContent; }).join("").trim();
    }).filter(function (t) { return t; }).join(" || ");
  }
  function hover(step, done) {
    // Hover the middle of up to `count` bars of a Gantt chart, spread over its rows.
    var view = figure(step.chart), source = model("ColumnDataSource", step.chart);
    var n = source.data.y.length, picks = [], count = Math.min(step.count, n);
    for (var i = 0; i < count; i++) picks.push(Math.floor(i * n / count));
    var gantt = step.chart === "gantt", left = gantt ? "submit" : "left";
    var right = gantt ? "end" : "right";
    at(view, "pointerenter", 1, 1);
    function next(k) {
      if (k >= picks.length) { at(view, "pointerleave", 1, 1); return done(); }
      var j = picks[k], x = (Math.max(source.data[left][j], view.frame.x_range.start) +
                             Math.min(source.data[right][j], view.frame.x_range.end)) / 2;
      var sx = view.frame.x_scale.compute(x), sy = view.frame.y_scale.compute(source.data.y[j]);
      at(view, "pointermove", sx, sy);
      setTimeout(function () {
        result.tips.push({chart: step.chart, id: source.data.id[j], tip: tooltip()});
        next(k + 1);
      }, 30);
    }
    next(0);
  }
  function play(i) {
    if (i >= STEPS.length) {
      document.body.setAttribute("data-result", JSON.stringify(result));
      return;
    }
    var step = STEPS[i];
    if (step.do === "state") { result.states.push(state()); return wait(i + 1); }
    if (step.do === "window") {
      model("Range1d", "window").setv({start: step.a / DAY, end: step.b / DAY});
      return wait(i + 1);
    }
    if (step.do === "wheel") {
      var view = figure(step.chart), box = view.canvas_view.events_el.getBoundingClientRect();
      at(view, "pointerenter", box.width / 2, box.height / 2);
      for (var k = 0; k < step.times; k++) {
        at(view, "wheel", box.width / 2, box.height / 2, {deltaY: -100, deltaMode: 0});
      }
      return wait(i + 1);
    }
    if (step.do === "hover") return hover(step, function () { wait(i + 1); });
    throw new Error("unknown step " + step.do);
  }
  function wait(i) {
    var timer = setInterval(function () {
      if (idle()) { clearInterval(timer); setTimeout(function () { play(i); }, 50); }
    }, 20);
  }
  wait(0);
})();
</script>"""


def probe(page: Path, steps: list[dict[str, Any]], fragment: str = "") -> dict[str, Any]:
    """Open a copy of ``page`` with the probe playing ``steps``; its findings.
    Fails on any console message and when the probe did not finish."""
    text = page.read_text(encoding="utf-8")
    head, sep, tail = text.rpartition("</body>")
    assert sep, "no </body> in the page"
    played = page.with_name(page.stem + "-probe.html")
    played.write_text(
        head + PROBE.replace("__STEPS__", json.dumps(steps)) + sep + tail, encoding="utf-8"
    )
    result = run_chromium(
        played, "--dump-dom", "--enable-logging=stderr", "--v=0", fragment=fragment
    )
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, console
    found = re.search(r'<body[^>]*data-result="([^"]*)"', result.stdout)
    assert found, "the probe did not finish: " + result.stdout[-500:] + result.stderr[-2000:]
    return json.loads(html.unescape(found.group(1)))


def assert_every_chart_drawn(state: dict[str, Any], names: list[str], empty: tuple = ()) -> None:
    """Every figure ``names`` (and no other) is on the page with its canvas drawn:
    axes and text at least, and data in colour unless it is in ``empty``."""
    assert sorted(state["plots"]) == sorted(names)
    for name, ink in state["plots"].items():
        assert ink["drawn"] > 0.002 * ink["pixels"], (name, ink)
        if name not in empty:
            assert ink["colour"] > 0.001 * ink["pixels"], (name, ink)


def screenshot(page: Path, shot: Path, fragment: str = "") -> None:
    run_chromium(page, f"--screenshot={shot}", fragment=fragment)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000


def rows_in_window(page: Path, a: float, b: float, schedule: int = 0) -> int:
    """Jobs of the page's embedded job table overlapping ``[a, b)`` (seconds)."""
    jobs = embedded_sources(page.read_text(encoding="utf-8"))[f"jobs-{schedule}"]
    submit = jobs["submit"].astype(float)
    end = submit + jobs["waited"] + jobs["run"]
    return int(((submit < b) & (end > a)).sum())


ONE_SCHEDULE = [*SERIES, "gantt", "cdf-waited", "cdf-bounded"]


@pytest.fixture(scope="module")
def small_result():
    workload = schedlab.read("psp-fing:scenario=CFG,seed=2,jobs=300")
    return schedlab.simulate(workload, policy="psp", backfill="easy", progress=False)


@pytest.fixture(scope="module")
def small_page(small_result, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_report(small_result, tmp_path_factory.mktemp("browser") / "small.html")


def test_small_schedule_renders_every_chart_and_its_gantt(small_page: Path, tmp_path: Path):
    (state,) = probe(small_page, [{"do": "state"}])["states"]
    assert_every_chart_drawn(
        state, [*ONE_SCHEDULE, "mean-wait-per-user", "mean-wait-per-accuracy-class"]
    )
    assert state["gantt"].startswith("300 jobs in the window, one row each")
    assert state["rows"] == 300
    screenshot(small_page, tmp_path / "small.png")


def test_a_real_trace_renders_overview_and_a_one_day_window(tmp_path: Path):
    workload = schedlab.read("../shared/data/swf/KTH-SP2-1996-2.1-cln.swf.gz")
    page = write_report(workload, tmp_path / "kth.html")
    (whole,) = probe(page, [{"do": "state"}])["states"]
    charts = [*ONE_SCHEDULE, "mean-wait-per-user", "mean-wait-per-accuracy-class"]
    assert_every_chart_drawn(whole, charts, empty=("gantt",))
    assert whole["gantt"].startswith("28,476 jobs in the window: too many to draw")
    assert whole["rows"] == 0
    (day,) = probe(page, [{"do": "state"}], "#window=8640000:8726400")["states"]
    assert_every_chart_drawn(day, charts)
    expected = rows_in_window(page, 8640000, 8726400)
    assert day["gantt"].startswith(f"{expected:,} jobs in the window, one row each")
    assert day["rows"] == expected and 0 < expected <= 3000
    # A day is drawn from a finer resolution than the whole schedule.
    coarse = re.match(r"bin width ([\dd :]+) ", whole["bins"]).group(1)
    fine = re.match(r"bin width ([\dd :]+) ", day["bins"]).group(1)
    assert fine != coarse and fine.startswith("00:")
    screenshot(page, tmp_path / "kth-day.png", "#window=8640000:8726400")


def test_a_script_error_reaches_the_console(small_page: Path, tmp_path: Path):
    """The check of every page: a broken window script is an uncaught error in the
    console, which :func:`probe` fails on."""
    broken = tmp_path / "broken.html"
    text = small_page.read_text(encoding="utf-8")
    assert text.count("const DAY = 86400;") == 2  # the window script, twice (change, ready)
    broken.write_text(text.replace("const DAY = 86400;", "const DAY = 86400; noSuchThing();"))
    result = run_chromium(broken, "--dump-dom", "--enable-logging=stderr", "--v=0")
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    assert any("noSuchThing" in line for line in console), console


def test_a_comparison_page_renders(tmp_path: Path):
    workload = schedlab.read("psp-fing:scenario=CFG,seed=3,jobs=200")
    runs = [
        (f"{p} + easy", schedlab.simulate(workload, policy=p, backfill="easy", progress=False))
        for p in ("fcfs", "psp")
    ]
    page = write_report(runs, tmp_path / "cmp.html")
    (state,) = probe(page, [{"do": "state"}])["states"]
    assert_every_chart_drawn(state, ONE_SCHEDULE)
    assert state["gantt"].startswith("200 jobs in the window, one row each")
    screenshot(page, tmp_path / "cmp.png")


def test_a_generated_100k_job_schedule_renders(tmp_path: Path):
    workload = schedlab.read("psp-fing:scenario=CFG,seed=1,jobs=100000")
    result = schedlab.simulate(workload, policy="fcfs", backfill="easy", progress=False)
    page = write_report(result, tmp_path / "100k.html")
    assert page.stat().st_size < 8_000_000
    hour = (3000000, 3003600)
    whole, window = probe(page, [{"do": "state"}, {"do": "window", "a": hour[0], "b": hour[1]},
                                 {"do": "state"}])["states"]  # fmt: skip
    charts = [*ONE_SCHEDULE, "mean-wait-per-user", "mean-wait-per-accuracy-class"]
    assert_every_chart_drawn(whole, charts, empty=("gantt",))
    assert whole["gantt"].startswith("100,000 jobs in the window: too many to draw")
    expected = rows_in_window(page, *hour)
    assert window["rows"] == expected > 0
    assert window["gantt"].startswith(f"{expected:,} jobs in the window, one row each")
    assert_every_chart_drawn(window, charts)
    screenshot(page, tmp_path / "100k.png", "#window=3000000:3003600")


def test_the_ricc_2010_schedule_renders(ricc_report: Path, tmp_path: Path):
    """The real 447,794-job RICC-2010 log simulated with fcfs+easy (the page of
    ``benchmarks/bench_report.py``): the whole schedule, then a six-hour window
    (through the address) whose Gantt rows are the jobs of the embedded table that
    overlap it."""
    (whole,) = probe(ricc_report, [{"do": "state"}])["states"]
    charts = [*ONE_SCHEDULE, "mean-wait-per-user", "mean-wait-per-queue",
              "mean-wait-per-accuracy-class"]  # fmt: skip
    assert_every_chart_drawn(whole, charts, empty=("gantt",))
    assert whole["gantt"].startswith("447,794 jobs in the window: too many to draw")
    # 153 days over about 600 bins: 6.1 h, rounded up to the clock-friendly 8 h.
    assert whole["bins"].startswith("bin width 08:00:00 (459 bins shown;")
    (window,) = probe(ricc_report, [{"do": "state"}], "#window=8640000:8661600")["states"]
    expected = rows_in_window(ricc_report, 8640000, 8661600)
    assert window["rows"] == expected > 0
    assert window["gantt"].startswith(f"{expected:,} jobs in the window, one row each")
    assert window["bins"].startswith("bin width 00:")
    assert_every_chart_drawn(window, charts)
    screenshot(ricc_report, tmp_path / "ricc-window.png", "#window=8640000:8661600")


def job_lookup(result: Any) -> tuple[Any, float, dict[int, int]]:
    """A schedule's columns, its first submission and each job's row by number."""
    cols = result.workload.to_arrays()
    by_id = {int(n): k for k, n in enumerate(cols["job_number"])}
    return cols, float(cols["submit_time"].min()), by_id


def clock(seconds: float) -> str:
    """A duration as the page writes it: ``[Dd ]HH:MM:SS``."""
    d, rest = divmod(round(seconds), 86400)
    h, rest = divmod(rest, 3600)
    return (f"{d}d " if d else "") + f"{h:02d}:{rest // 60:02d}:{rest % 60:02d}"


def test_zoom_and_hover_show_the_simulations_data(small_page: Path, small_result):
    """The wheel over a series zooms every chart (a finer resolution, fewer Gantt
    rows); hovering Gantt bars shows each job's id, user, processors, submit, wait,
    run and requested time, checked against the simulation."""
    found = probe(
        small_page,
        [
            {"do": "state"},
            {"do": "wheel", "chart": "series-busy", "times": 14},
            {"do": "state"},
            {"do": "hover", "chart": "gantt", "count": 12},
        ],
    )
    before, zoomed = found["states"]
    assert (
        zoomed["window"][1] - zoomed["window"][0] < (before["window"][1] - before["window"][0]) / 2
    )
    assert zoomed["bins"] != before["bins"]
    assert 0 < zoomed["rows"] < before["rows"] == 300
    cols, origin, by_id = job_lookup(small_result)
    tips = found["tips"]
    assert len(tips) == 12
    for entry in tips:
        k = by_id[entry["id"]]
        expected = (
            f"job: {entry['id']} user: {int(cols['user_id'][k])} "
            f"processors: {int(cols['allocated_processors'][k])} "
            f"submit: {clock(cols['submit_time'][k] - origin)} "
            f"wait: {clock(cols['wait_time'][k])} run: {clock(cols['run_time'][k])} "
            f"requested: {clock(cols['requested_time'][k])}"
        )
        assert re.sub(r"\s+", " ", entry["tip"]) == expected


def test_a_comparison_page_with_intervals_renders(tmp_path: Path):
    pytest.importorskip("scipy")
    from schedlab.significance import block_significance

    workload = schedlab.read("psp-fing:scenario=CFG,seed=3,jobs=600")
    runs = [
        (f"{p} + easy", schedlab.simulate(workload, policy=p, backfill="easy", progress=False))
        for p in ("fcfs", "sjf")
    ]
    significance = block_significance(dict(runs), window=3600.0, resamples=200)
    page = write_report(runs, tmp_path / "cmp-ci.html", significance=significance)
    (state,) = probe(page, [{"do": "state"}])["states"]
    assert_every_chart_drawn(state, ONE_SCHEDULE)
    text = page.read_text(encoding="utf-8")
    assert "Is the difference real?" in text and 'alt="means with intervals and ranks"' in text


def test_a_platform_page_draws_nodes_and_hovers_jobs(tmp_path: Path):
    """The node Gantt chart of a platform run (8 nodes, 300 KTH-SP2 jobs): drawn for
    the whole schedule, zoomed with the wheel, and hovering bars shows the job's
    id, user, nodes, start and end, checked against the simulation's allocations."""
    toml = tmp_path / "cluster.toml"
    toml.write_text(
        "[node_groups.a]\ncount = 6\ncores = 4\n[node_groups.g]\ncount = 2\ncores = 4\n"
        '[partitions.all]\nnodes = ["a", "g"]\n'
    )
    w = schedlab.read("../shared/data/swf/KTH-SP2-1996-2.1-cln.swf.gz")
    columns = w.to_arrays().take(np.arange(300))
    columns.data["requested_processors"] = np.minimum(columns.data["requested_processors"], 8)
    result = schedlab.simulate(
        schedlab.Workload(w.header, columns=columns),
        policy="fcfs",
        backfill="easy",
        platform=str(toml),
        progress=False,
    )
    page = write_report(result, tmp_path / "nodes.html")
    found = probe(
        page,
        [
            {"do": "state"},
            {"do": "wheel", "chart": "node-gantt", "times": 10},
            {"do": "state"},
            {"do": "hover", "chart": "node-gantt", "count": 25},
        ],
    )
    whole, zoomed = found["states"]
    charts = [*ONE_SCHEDULE, "node-gantt", "resources", "mean-wait-per-user",
              "mean-wait-per-accuracy-class"]  # fmt: skip
    assert_every_chart_drawn(whole, charts)
    assert whole["nodes"] == "300 jobs running in the window."
    zoomed_jobs = re.fullmatch(r"(\d+) jobs running in the window\.", zoomed["nodes"])
    assert zoomed_jobs and 0 < int(zoomed_jobs.group(1)) < 300
    screenshot(page, tmp_path / "nodes.png")

    cols, origin, by_id = job_lookup(result)
    tips = found["tips"]
    assert len(tips) == 25 and any(" nodes: " in t["tip"] for t in tips)  # some on several
    for entry in tips:
        match = re.fullmatch(
            r"job: (\d+) user: (\d+) nodes: (\d+) nodes?: ([^:]+?) start: (\S+(?: \S+)?) "
            r"end: (\S+(?: \S+)?)",
            re.sub(r"\s+", " ", entry["tip"]),
        )
        assert match, entry["tip"]
        k = by_id[int(match.group(1))]
        assert int(match.group(1)) == entry["id"]
        assert match.group(2) == str(int(cols["user_id"][k]))
        assert int(match.group(3)) == len(result.allocations[k])
        assert match.group(4).strip() == " ".join(result.allocations[k][:8])
        start = cols["submit_time"][k] + cols["wait_time"][k] - origin
        assert match.group(5) == clock(start)
        assert match.group(6) == clock(start + cols["run_time"][k])
