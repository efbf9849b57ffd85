"""The interactive report as a person sees it: opened in headless Chromium.

The page's script sets ``<body data-status>`` to ``ok`` once every chart is drawn
without an exception (``error`` and ``data-error`` otherwise) and marks every
canvas ``data-drawn``; the test reads the DOM Chromium dumps after the script ran,
fails on any console message Chromium logs for the page, and writes a screenshot
into the test's temporary directory.

Chromium is Debian's ``chromium`` package (``apt-get install chromium``). Without
the ``chromium`` binary these tests are skipped, unless the environment variable
``SCHEDLAB_REQUIRE_BROWSER`` is set (to anything non-empty): then they fail, so a
CI job that is meant to check the browser cannot pass by skipping.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab.report import write_report
from schedlab.report_data import unpack

CHARTS = 8  # overview, 4 series, Gantt, 2 CDFs


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
        "--virtual-time-budget=20000",
        "--window-size=1000,2800",
        *args,
        page.resolve().as_uri() + fragment,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def rendered(page: Path, fragment: str = "", charts: int = CHARTS) -> str:
    result = run_chromium(page, "--dump-dom", "--enable-logging=stderr", "--v=0", fragment=fragment)
    assert "<body" in result.stdout, result.stderr[-2000:]
    # The page writes nothing to the console: any message (an uncaught error, a
    # warning, a log) is a failure.
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, console
    body = re.search(r"<body[^>]*>", result.stdout).group(0)
    assert 'data-status="ok"' in body, body
    canvases = re.findall(r"<canvas[^>]*>", result.stdout)
    assert len(canvases) == charts
    assert all('data-drawn="true"' in c for c in canvases), canvases
    return result.stdout


def text_of(dom: str, element: str) -> str:
    """The text the script wrote into the span ``#element``."""
    return re.search(rf'<span id="{element}">([^<]*)</span>', dom).group(1)


@pytest.fixture(scope="module")
def small_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workload = schedlab.read("psp-fing:scenario=CFG,seed=2,jobs=300")
    result = schedlab.simulate(workload, policy="psp", backfill="easy", progress=False)
    return write_report(result, tmp_path_factory.mktemp("browser") / "small.html")


def test_small_schedule_renders_every_chart_and_its_gantt(small_page: Path, tmp_path: Path):
    dom = rendered(small_page)
    assert text_of(dom, "gantt-info").startswith("300 jobs in the window, one row each")
    shot = tmp_path / "small.png"
    run_chromium(small_page, f"--screenshot={shot}")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000


def test_a_real_trace_renders_overview_and_a_one_day_window(tmp_path: Path):
    workload = schedlab.read("../shared/data/swf/KTH-SP2-1996-2.1-cln.swf.gz")
    page = write_report(workload, tmp_path / "kth.html")
    dom = rendered(page)
    assert text_of(dom, "gantt-info") == "28,476 jobs in the window: too many to draw."
    one_day = rendered(page, "#window=8640000:8726400")
    match = re.match(r"([\d,]+) jobs in the window, one row each", text_of(one_day, "gantt-info"))
    assert match and 0 < int(match.group(1).replace(",", "")) < 3000
    # A day is drawn from a finer resolution than the whole schedule.
    coarse = re.match(r"bin width ([\dd :]+) ", text_of(dom, "bin-info")).group(1)
    fine = re.match(r"bin width ([\dd :]+) ", text_of(one_day, "bin-info")).group(1)
    assert fine != coarse and fine.startswith("00:")
    shot = tmp_path / "kth-day.png"
    run_chromium(page, f"--screenshot={shot}", fragment="#window=8640000:8726400")
    assert shot.stat().st_size > 50_000


def test_a_script_error_is_reported_not_hidden(small_page: Path, tmp_path: Path):
    broken = tmp_path / "broken.html"
    broken.write_text(small_page.read_text().replace('"levels":', '"levelz":', 1))
    result = run_chromium(broken, "--dump-dom", "--enable-logging=stderr", "--v=0")
    body = re.search(r"<body[^>]*>", result.stdout).group(0)
    assert 'data-status="error"' in body
    # ... and reaches the console, which rendered() checks on every page.
    assert any(":CONSOLE" in line and "Uncaught" in line for line in result.stderr.splitlines())


def test_a_comparison_page_renders(tmp_path: Path):
    from schedlab.report import write_report as write

    workload = schedlab.read("psp-fing:scenario=CFG,seed=3,jobs=200")
    runs = [
        (f"{p} + easy", schedlab.simulate(workload, policy=p, backfill="easy", progress=False))
        for p in ("fcfs", "psp")
    ]
    page = write(runs, tmp_path / "cmp.html")
    dom = rendered(page)
    assert text_of(dom, "gantt-info").startswith("200 jobs in the window, one row each")
    shot = tmp_path / "cmp.png"
    run_chromium(page, f"--screenshot={shot}")
    assert shot.stat().st_size > 50_000


def test_a_generated_100k_job_schedule_renders(tmp_path: Path):
    workload = schedlab.read("psp-fing:scenario=CFG,seed=1,jobs=100000")
    result = schedlab.simulate(workload, policy="fcfs", backfill="easy", progress=False)
    page = write_report(result, tmp_path / "100k.html")
    assert page.stat().st_size < 8_000_000  # measured 4.6 MB
    dom = rendered(page)
    assert text_of(dom, "gantt-info") == "100,000 jobs in the window: too many to draw."
    window = rendered(page, "#window=3000000:3003600")  # one hour
    assert re.match(r"[\d,]+ jobs in the window, one row each", text_of(window, "gantt-info"))


def test_the_ricc_2010_schedule_renders(ricc_report: Path, tmp_path: Path):
    """The real 447,794-job RICC-2010 log simulated with fcfs+easy (the page of
    ``benchmarks/bench_report.py``): the whole schedule, then a six-hour window whose
    Gantt chart draws real jobs. Measured about 13 s, 5.5 s of it the shared
    simulation and write (fixture ``ricc_report``), 2.5 s each Chromium run."""
    dom = rendered(ricc_report)
    assert text_of(dom, "gantt-info") == "447,794 jobs in the window: too many to draw."
    # 153 days over about 600 bins: 6.1 h, rounded up to the clock-friendly 8 h.
    assert text_of(dom, "bin-info").startswith("bin width 08:00:00 (459 bins shown;")
    window = rendered(ricc_report, "#window=8640000:8661600")  # day 100, six hours
    match = re.match(r"([\d,]+) jobs in the window, one row each", text_of(window, "gantt-info"))
    # The rows are the jobs of the embedded table that overlap the window.
    (data,) = json.loads(
        re.search(r'id="schedlab-data">(.*?)</script>', ricc_report.read_text()).group(1)
    )["schedules"]
    submit = unpack(data["jobs"]["submit"]).astype(float)
    end = submit + unpack(data["jobs"]["waited"]) + unpack(data["jobs"]["run"])
    expected = int(((submit < 8661600) & (end > 8640000)).sum())
    assert match and int(match.group(1).replace(",", "")) == expected > 0
    assert text_of(window, "bin-info").startswith("bin width 00:")


#: Appended to a copy of a page: plays a user's gestures with synthetic events and
#: writes what the page showed into attributes of <body>.
GESTURES = """<script>
(function () {
  var body = document.body;
  function at(el, type, fx, fy, extra) {
    var box = el.getBoundingClientRect(), init = {
      bubbles: true, cancelable: true,
      clientX: box.left + fx * box.width, clientY: box.top + fy * box.height };
    for (var k in extra || {}) init[k] = extra[k];
    el.dispatchEvent(type === "wheel" ? new WheelEvent(type, init) : new MouseEvent(type, init));
  }
  var info = function (id) { return document.getElementById(id).textContent; };
  body.setAttribute("data-bins-before", info("bin-info"));
  var series = document.querySelector("canvas[data-series]");
  for (var i = 0; i < 12; i++) at(series, "wheel", 0.5, 0.5, { deltaY: -100 });
  body.setAttribute("data-bins-zoomed", info("bin-info"));
  var overview = document.getElementById("overview");
  at(overview, "mousedown", 0.40, 0.5); at(overview, "mouseup", 0.45, 0.5);
  body.setAttribute("data-gantt-brushed", info("gantt-info"));
  var gantt = document.getElementById("gantt"), tip = document.getElementById("tip");
  for (var y = 0.02; y < 1 && tip.style.display !== "block"; y += 0.01) {
    for (var x = 0.1; x < 1 && tip.style.display !== "block"; x += 0.02) {
      at(gantt, "mousemove", x, y);
    }
  }
  body.setAttribute("data-tip", tip.style.display === "block" ? tip.textContent : "none");
})();
</script></body>"""


def test_zoom_brush_and_hover_work(small_page: Path, tmp_path: Path):
    page = tmp_path / "gestures.html"
    page.write_text(small_page.read_text().replace("</body>", GESTURES))
    dom = rendered(page)
    body = re.search(r"<body[^>]*>", dom).group(0)
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body))
    assert attrs["status"] == "ok"
    # The wheel zoomed in: fewer seconds per bin.
    assert attrs["bins-before"] != attrs["bins-zoomed"]
    # A brush on the overview selected a window with fewer jobs than the whole.
    brushed = re.match(r"([\d,]+) jobs in the window, one row each", attrs["gantt-brushed"])
    assert brushed and 0 < int(brushed.group(1).replace(",", "")) < 300
    # Hovering a job shows its details.
    assert re.match(
        r"job \d+ · user \d+ · \d+ procs · submit .* · wait .* · run .* · requested ",
        attrs["tip"],
    ), attrs["tip"]


def test_a_comparison_page_with_intervals_renders(tmp_path: Path):
    pytest.importorskip("scipy")
    from schedlab.report import write_report as write
    from schedlab.significance import block_significance

    workload = schedlab.read("psp-fing:scenario=CFG,seed=3,jobs=600")
    runs = [
        (f"{p} + easy", schedlab.simulate(workload, policy=p, backfill="easy", progress=False))
        for p in ("fcfs", "sjf")
    ]
    significance = block_significance(dict(runs), window=3600.0, resamples=200)
    page = write(runs, tmp_path / "cmp-ci.html", significance=significance)
    dom = rendered(page)  # every chart drawn, no console message, with the new section
    assert "Is the difference real?" in dom
    assert 'alt="means with intervals and ranks"' in dom


#: Appended to a platform page: zooms and hovers the node Gantt chart.
NODE_GESTURES = """<script>
(function () {
  var body = document.body, nodes = document.getElementById("node-gantt");
  var tip = document.getElementById("tip");
  function at(el, type, fx, fy, extra) {
    var box = el.getBoundingClientRect(), init = {
      bubbles: true, cancelable: true,
      clientX: box.left + fx * box.width, clientY: box.top + fy * box.height };
    for (var k in extra || {}) init[k] = extra[k];
    el.dispatchEvent(type === "wheel" ? new WheelEvent(type, init) : new MouseEvent(type, init));
  }
  var info = function (id) { return document.getElementById(id).textContent; };
  body.setAttribute("data-nodes-before", info("node-info"));
  for (var i = 0; i < 10; i++) at(nodes, "wheel", 0.3, 0.5, { deltaY: -100 });
  body.setAttribute("data-nodes-zoomed", info("node-info"));
  var hits = [];
  for (var y = 0.03; y < 0.9; y += 0.04) {
    for (var x = 0.1; x < 1; x += 0.05) {
      at(nodes, "mousemove", x, y);
      if (tip.style.display === "block") hits.push(tip.textContent);
    }
  }
  body.setAttribute("data-tips", hits.join("|"));
})();
</script></body>"""


def test_a_platform_page_draws_nodes_and_hovers_jobs(tmp_path: Path):
    """The node Gantt chart of a platform run (8 nodes, 300 KTH-SP2 jobs): drawn for
    the whole schedule, zoomed with the wheel, and hovering a bar shows the job's
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
    dom = rendered(page, charts=CHARTS + 1)
    assert text_of(dom, "node-info") == "300 jobs running in the window."
    shot = tmp_path / "nodes.png"
    run_chromium(page, f"--screenshot={shot}")
    assert shot.stat().st_size > 50_000

    played = tmp_path / "node-gestures.html"
    played.write_text(page.read_text().replace("</body>", NODE_GESTURES))
    body = re.search(r"<body[^>]*>", rendered(played, charts=CHARTS + 1)).group(0)
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body))
    assert attrs["status"] == "ok"
    zoomed = re.match(r"(\d+) jobs running in the window\.", attrs["nodes-zoomed"])
    assert zoomed and 0 < int(zoomed.group(1)) < 300
    tips = attrs["tips"].split("|")
    assert len(tips) > 10 and any(" nodes: " in t for t in tips)  # some on several nodes
    cols = result.workload.to_arrays()
    origin = cols["submit_time"].min()
    by_id = {int(n): k for k, n in enumerate(cols["job_number"])}

    def clock(seconds: float) -> str:
        d, rest = divmod(round(seconds), 86400)
        h, rest = divmod(rest, 3600)
        return (f"{d}d " if d else "") + f"{h:02d}:{rest // 60:02d}:{rest % 60:02d}"

    for tip in tips:
        match = re.fullmatch(
            r"job (\d+) · user (\d+) · (\d+) nodes?: ([^·]+) · start (.+) · end (.+)", tip
        )
        assert match, tip
        k = by_id[int(match.group(1))]
        assert match.group(2) == str(int(cols["user_id"][k]))
        assert int(match.group(3)) == len(result.allocations[k])
        assert match.group(4).strip() == " ".join(result.allocations[k])
        start = cols["submit_time"][k] + cols["wait_time"][k] - origin
        assert match.group(5) == clock(start)
        assert match.group(6) == clock(start + cols["run_time"][k])
