"""The interactive report page (issue 20, drawn with Bokeh): write time, page size
and the time headless Chromium takes to load it and draw every chart.

Schedules: RICC-2010 (447,794 jobs) simulated with fcfs+easy, and a generated
100,000-job schedule (``psp-fing:scenario=CFG,seed=1,jobs=100000``, fcfs+easy).
Targets (issue 20, on RICC): written in under 10 s, a page under 30 MB, loaded and
drawn by headless Chromium in under 5 s.

Baselines measured in the same run:

* write: the ``--static`` page of PNG images of the same schedule (matplotlib);
* browser: Chromium loading an empty page with the same flags (its start-up and
  shutdown, paid by any page), and a page of one Bokeh figure (one line of 100
  points, BokehJS inline: what any Bokeh page pays), whose in-page time is the
  yardstick for the report page's under the same load.

The browser time is measured three ways, each the median of ``--repeat`` runs:
*wall*, the whole ``chromium --headless --screenshot`` process (start, load, draw,
paint, capture, exit: what a person waits for, plus the start-up); *in page*,
``performance.now()`` read by a probe appended to a copy of the page once Bokeh's
document is idle and every root view has finished drawing (the time from
navigation start to every chart drawn), read from the DOM that ``--dump-dom``
prints; and the wall time of that ``--dump-dom`` process, which is what the
browser tests pay. A page the probe never saw drawn is an error, not a time.
The probe polls every 5 ms, so the in-page time is late by at most that.

Run: .venv/bin/python benchmarks/bench_report.py [--repeat 3] [--only ricc|100k]
"""

from __future__ import annotations

import argparse
import re
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import schedlab
from schedlab.report import write_report

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "swf"
TARGET_WRITE_S, TARGET_PAGE_MB, TARGET_RENDER_S = 10.0, 30.0, 5.0

#: Appended to a copy of the page (before its last ``</body>``: Bokeh's JavaScript
#: holds the string too): the time at which every chart is drawn.
PROBE = """<script>(function () { var timer = setInterval(function () {
  if (!window.Bokeh || !Bokeh.documents.length || !Bokeh.documents[0].is_idle) return;
  var roots = Array.from(Bokeh.index.roots);
  if (!roots.length || !roots.every(function (v) { return v.has_finished(); })) return;
  clearInterval(timer);
  document.body.setAttribute("data-ready-ms", String(Math.round(performance.now())));
}, 5); })();</script>"""
READY = (
    "<script>document.body.setAttribute('data-ready-ms', "
    "String(Math.round(performance.now())));</script>"
)


def chromium_run(binary: str, page: Path, action: str = "--dump-dom") -> tuple[float, str]:
    """Wall seconds of one headless Chromium that loads ``page`` and does ``action``
    (``--dump-dom``: its standard output is the DOM; or ``--screenshot=FILE``)."""
    command = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--window-size=1000,2800",
        action,
        page.resolve().as_uri(),
    ]
    began = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    return time.perf_counter() - began, out.stdout


def browser_times(binary: str, page: Path, repeat: int) -> tuple[float, float, float]:
    """Medians of: the screenshot wall seconds, the in-page seconds to every chart
    drawn, and the dump-DOM wall seconds, of ``page``."""
    probe = page.with_name(page.stem + "-probe.html")
    head, sep, tail = page.read_text(encoding="utf-8").rpartition("</body>")
    script = PROBE if "Bokeh" in head else READY  # the empty baseline draws nothing
    probe.write_text(head + script + sep + tail, "utf-8")
    shot = page.with_name(page.stem + ".png")
    shots, inside, dumps = [], [], []
    for _ in range(repeat):
        wall, dom = chromium_run(binary, probe)
        ready = re.search(r'<body[^>]*data-ready-ms="(\d+)"', dom)
        if ready is None:
            raise SystemExit(f"{page.name}: the page did not draw: {dom[-300:]!r}")
        dumps.append(wall)
        inside.append(float(ready.group(1)) / 1e3)
        wall, _ = chromium_run(binary, page, f"--screenshot={shot}")
        if not shot.exists():
            raise SystemExit(f"{page.name}: Chromium wrote no screenshot")
        shot.unlink()
        shots.append(wall)
    return statistics.median(shots), statistics.median(inside), statistics.median(dumps)


def one_figure(tmp: Path) -> Path:
    """A page of one Bokeh figure (a line of 100 points), written like the report
    (:func:`schedlab.report_charts.render_page`: the same template, BokehJS and
    its widgets inline)."""
    from bokeh.plotting import figure
    from schedlab.report_charts import render_page

    path = tmp / "one-figure.html"
    if not path.exists():
        fig = figure(width=900, height=200)
        fig.line(list(range(100)), [i % 7 for i in range(100)])
        path.write_text(render_page("one figure", "", [fig]), "utf-8")
    return path


def measure(
    name: str, result: object, tmp: Path, binary: str | None, repeat: int
) -> dict[str, str]:
    """Print the write time, page size and browser times of one schedule's report;
    the row of the summary table."""
    began = time.perf_counter()
    page = write_report(result, tmp / f"{name}.html")
    write_s = time.perf_counter() - began
    began = time.perf_counter()
    static = write_report(result, tmp / f"{name}-static.html", static=True)
    static_s = time.perf_counter() - began
    size_mb = page.stat().st_size / 1e6
    jobs = len(result.workload)  # type: ignore[attr-defined]
    print(f"\n{name}: {jobs:,} jobs")
    print(
        f"  write: {write_s:.2f} s (target < {TARGET_WRITE_S:g} s); static PNG page "
        f"{static_s:.2f} s; ratio {write_s / static_s:.2f}"
    )
    print(
        f"  page: {size_mb:.1f} MB (target < {TARGET_PAGE_MB:g} MB), "
        f"{page.stat().st_size / jobs:.1f} bytes a job; static page "
        f"{static.stat().st_size / 1e6:.2f} MB"
    )
    row = {
        "schedule": f"{name}, {jobs:,} jobs",
        "write (static page)": f"{write_s:.2f} s ({static_s:.2f} s)",
        "page": f"{size_mb:.1f} MB",
    }
    if binary is None:
        print("  browser: no chromium binary, not measured")
        return row
    empty = tmp / "empty.html"
    empty.write_text("<!DOCTYPE html><html><body></body></html>\n")
    base_wall, _, base_dump = browser_times(binary, empty, repeat)
    one_wall, one_inside, _ = browser_times(binary, one_figure(tmp), repeat)
    wall, inside, dump = browser_times(binary, page, repeat)
    print(
        f"  browser (median of {repeat}): start, load, draw and screenshot {wall:.2f} s wall "
        f"(target < {TARGET_RENDER_S:g} s), empty page {base_wall:.2f} s, ratio "
        f"{wall / base_wall:.2f}, the page's own share {wall - base_wall:.2f} s"
    )
    print(
        f"  in page: navigation start to every chart drawn {inside:.2f} s; "
        f"--dump-dom (as the tests run it) {dump:.2f} s wall, empty page {base_dump:.2f} s"
    )
    print(
        f"  one Bokeh figure: {one_inside:.2f} s in page, {one_wall:.2f} s wall; the report "
        f"page takes {inside / one_inside:.1f}x its in-page time"
    )
    ok = write_s < TARGET_WRITE_S and size_mb < TARGET_PAGE_MB and wall < TARGET_RENDER_S
    print(f"  verdict: {'OK' if ok else 'MISSES A TARGET'}")
    row["Chromium start, load, draw, screenshot (empty page)"] = f"{wall:.2f} s ({base_wall:.2f} s)"
    row["in page: navigation to every chart drawn (one Bokeh figure)"] = (
        f"{inside:.2f} s ({one_inside:.2f} s)"
    )
    row["--dump-dom (empty page)"] = f"{dump:.2f} s ({base_dump:.2f} s)"
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=("ricc", "100k"))
    args = parser.parse_args()
    binary = shutil.which("chromium")
    schedules = {
        "ricc": str(DATA / "RICC-2010-2.swf.gz"),
        "100k": "psp-fing:scenario=CFG,seed=1,jobs=100000",
    }
    began = time.perf_counter()
    import bokeh.embed
    import bokeh.plotting

    print(
        f"import bokeh {bokeh.__version__}: {time.perf_counter() - began:.2f} s "
        "(once per process, not in the write times)"
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, source in schedules.items():
            if args.only and name != args.only:
                continue
            began = time.perf_counter()
            result = schedlab.simulate(
                schedlab.read(source), policy="fcfs", backfill="easy", progress=False
            )
            print(f"simulate {name} fcfs+easy: {time.perf_counter() - began:.1f} s (not counted)")
            rows.append(measure(name, result, Path(tmp), binary, args.repeat))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak memory of this process (simulations included): {peak:.0f} MB")
    print(f"\n(one run; browser times the median of {args.repeat})\n")
    print("| " + " | ".join(rows[0]) + " |")
    print("|" + " --- |" * len(rows[0]))
    for row in rows:
        print("| " + " | ".join(row.get(key, "-") for key in rows[0]) + " |")


if __name__ == "__main__":
    main()
