"""Fixes of the report audit (findings 1, 3-7, 12, 13 of the "report" audit).

1. Job ids up to 2**53 and times up to 1e12 s (what the readers accept) give a
   page: the job table falls back to a wider type instead of crashing.
3, 4. ``--window`` (seconds since the first submission, as the page's address
   ``#window=``) is the window the page opens on, with or without ``--platform``;
   a window outside the schedule's span is a one-line usage error naming the span.
5. Unknown processors and requested times stay unknown: such jobs are left out of
   the series that need them, counted in a note, and the tooltip says "unknown".
6. ``report --simulate`` and ``compare --report`` show the simulation's notes
   (estimate fallbacks, platform notes, exclusion reasons).
7. A simulation that excluded every job says so, with the reasons.
12. ``--bins`` with ``--bin-width`` is a usage error; the bin width text carries
   seconds into minutes.
13. Zero-length jobs at the window's start are in the Gantt chart.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab.report import build_report
from schedlab.report_charts import embedded_objects, embedded_sources
from schedlab.report_data import compact_int
from schedlab.testing import run_cli

HEADER = "; MaxProcs: 4\n"
TAIL = " -1 1 {u} 1 -1 1 -1 -1 -1\n"


def swf(path: Path, *lines: str) -> str:
    path.write_text(HEADER + "".join(lines), encoding="utf-8")
    return str(path)


def job(number: int, submit: float, wait: float, run: float, procs: int, req: float, u: int = 1):
    return f"{number} {submit:g} {wait:g} {run:g} {procs} -1 -1 {procs} {req:g}" + TAIL.format(u=u)


def ready_args(page: str) -> dict:
    """The arguments of the window script run when the page is ready."""
    (args,) = [
        dict(js["args"]["entries"])
        for js in embedded_objects(page, "CustomJS")
        if dict(js["args"]["entries"]).get("ready") is True
    ]
    return args


def notes(page: str) -> list[str]:
    return [html.unescape(n) for n in re.findall(r"<p class='note'>note[^:]*: (.*?)</p>", page)]


# ----------------------------------------------------------------------------- 1


def test_compact_int_falls_back_to_a_wider_type():
    big = compact_int(np.array([3_000_000_000.0, 2.0**53]))
    assert big.tolist() == [3_000_000_000, 2**53]
    assert compact_int(np.array([0.0, 1e12])).tolist() == [0, 10**12]
    assert compact_int(np.array([-1.0, 5.0])).dtype == np.int16


@pytest.mark.parametrize(
    "line, column, value",
    [
        (job(3_000_000_000, 0, 0, 100, 1, 200), "id", 3_000_000_000),
        (job(1, 0, 0, 3e9, 1, 200), "run", 3_000_000_000),
        (job(1, 9e11, 0, 100, 1, 200), "submit", 900_000_000_000),
        (job(2**53 - 1, 0, 0, 100, 1, 200), "id", 2**53 - 1),
        (job(1, 0, 0, 100, 1, 1e12), "req", 10**12),
    ],
)
def test_large_ids_and_times_give_a_page(capsys, tmp_path: Path, line, column, value):
    trace = swf(tmp_path / "big.swf", job(7, 0, 5, 30, 1, 60), line)
    out = tmp_path / "big.html"
    code, _, err = run_cli(capsys, "report", trace, "-o", str(out))
    assert code == 0, err
    jobs = embedded_sources(out.read_text(encoding="utf-8"))["jobs-0"]
    assert value in [int(v) for v in jobs[column]]


def test_large_ids_in_a_comparison_page(capsys, tmp_path: Path):
    trace = swf(
        tmp_path / "ids.swf",
        job(3_000_000_000, 0, -1, 100, 1, 200),
        job(3_000_000_001, 10, -1, 30, 1, 60),
    )
    out = tmp_path / "cmp.html"
    code, _, err = run_cli(
        capsys, "compare", trace, "--policies", "fcfs+easy,sjf+easy", "--report", str(out)
    )
    assert code == 0, err
    jobs = embedded_sources(out.read_text(encoding="utf-8"))["jobs-0"]
    assert sorted(int(v) for v in jobs["id"]) == [3_000_000_000, 3_000_000_001]


# ----------------------------------------------------------------------------- 3, 4


@pytest.fixture
def late(tmp_path: Path) -> str:
    """Jobs on a clock that starts at 600,000 s; span 2,000 s."""
    return swf(
        tmp_path / "late.swf",
        job(1, 600_000, 0, 1000, 1, 2000),
        job(2, 600_100, 0, 1900, 2, 2000),
        job(3, 600_500, 0, 100, 1, 200),
    )


@pytest.mark.parametrize("simulate", [(), ("--simulate", "fcfs+easy")])
def test_window_without_platform_opens_the_page_on_it(capsys, tmp_path, late, simulate):
    out = tmp_path / "w.html"
    code, _, err = run_cli(capsys, "report", late, *simulate, "--window=100:700", "-o", str(out))
    assert code == 0, err
    view = ready_args(out.read_text(encoding="utf-8"))["view"]
    assert [round(v * 86400, 6) for v in view] == [100.0, 700.0]


def test_window_with_platform_is_on_the_same_clock(capsys, tmp_path, late):
    platform = tmp_path / "p.toml"
    platform.write_text(
        '[node_groups.n]\ncount = 2\ncores = 2\n[partitions.all]\nnodes = ["n"]\n',
        encoding="utf-8",
    )
    out = tmp_path / "w.html"
    code, _, err = run_cli(
        capsys, "report", late, "--simulate", "fcfs+easy", "--platform", str(platform),
        "--window=100:700", "-o", str(out),
    )  # fmt: skip
    assert code == 0, err
    view = ready_args(out.read_text(encoding="utf-8"))["view"]
    assert [round(v * 86400, 6) for v in view] == [100.0, 700.0]


@pytest.mark.parametrize("window", ["2500:3000", "1e30:1e31", "-500:-100"])
@pytest.mark.parametrize("simulate", [(), ("--simulate", "fcfs+easy")])
def test_window_outside_the_span_is_a_usage_error(capsys, tmp_path, late, window, simulate):
    out = tmp_path / "w.html"
    code, _, err = run_cli(capsys, "report", late, *simulate, f"--window={window}", "-o", str(out))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "--window" in err and "0 to 2,000 s" in err
    assert not out.exists()


def test_static_window_is_on_the_same_clock(tmp_path, late):
    workload = schedlab.read(late)
    result = schedlab.simulate(workload, policy="fcfs", backfill="easy", progress=False)
    with pytest.raises(schedlab.errors.UsageError, match="0 to 2,000 s"):
        build_report(result, node_window=(600_000.0, 600_100.0), static=True)


# ----------------------------------------------------------------------------- 5


@pytest.fixture
def unknown(tmp_path: Path) -> str:
    """Job 1: unknown processors; job 3: unknown requested time."""
    return swf(
        tmp_path / "unk.swf",
        "1 0 0 100 -1 -1 -1 -1 200" + TAIL.format(u=1),
        job(2, 10, 0, 100, 2, 200, 2),
        job(3, 20, 0, 50, 1, -1, 2),
    )


def test_unknown_processors_and_requested_times_stay_unknown(unknown):
    workload = schedlab.read(unknown)
    page = build_report(workload)
    sources = embedded_sources(page)
    jobs = sources["jobs-0"]
    assert int(jobs["size"][0]) < 0  # unknown, not 1
    assert int(jobs["req"][2]) < 0
    level = sources["level-0-0"]
    width, span = ready_args(page)["widths"][0], ready_args(page)["span"]
    busy = level["busy_mean"][:-1].astype(float)
    # each bin's mean is over its part before the end of the schedule (the last is cut)
    covered = np.diff(np.minimum(np.arange(len(busy) + 1) * width, span))
    # 2 procs x 100 s + 1 proc x 50 s on 4 procs; job 1 is left out
    assert float(busy @ covered) / 100 * 4 == pytest.approx(250.0)
    said = " ".join(notes(page))
    assert "1 job with unknown processors" in said
    assert "1 job with unknown requested time" in said


def test_queued_work_leaves_out_unknown_requested_times(tmp_path):
    trace = swf(
        tmp_path / "q.swf",
        job(1, 0, 0, 100, 4, 200),
        job(2, 10, 90, 100, 2, 200),  # waits 90 s: 2 x 200 s asked
        job(3, 10, 90, 100, 2, -1),  # waits 90 s, requested time unknown
    )
    page = build_report(schedlab.read(trace))
    level = embedded_sources(page)["level-0-0"]
    width = ready_args(page)["widths"][0]
    demand = level["demand_mean"][:-1].astype(float)
    assert demand.sum() * width == pytest.approx(2 * 200 / 3600 * 90, rel=1e-4)


# ----------------------------------------------------------------------------- 6, 7


def test_report_simulate_shows_the_simulations_notes(capsys, tmp_path):
    out = tmp_path / "lub.html"
    code, _, err = run_cli(
        capsys, "report", "lublin:jobs=50,seed=1", "--simulate", "fcfs+easy", "-o", str(out)
    )
    assert code == 0, err
    assert any("estimates fell back for 50 of 50 jobs" in n for n in notes(out.read_text()))


def test_compare_report_shows_the_simulations_notes(capsys, tmp_path):
    out = tmp_path / "cmp.html"
    code, _, err = run_cli(
        capsys, "compare", "lublin:jobs=50,seed=1", "--policies", "fcfs+easy,sjf+easy",
        "--report", str(out),
    )  # fmt: skip
    assert code == 0, err
    assert any("estimates fell back for 50 of 50 jobs" in n for n in notes(out.read_text()))


def test_exclusion_note_gives_the_reasons(capsys, tmp_path):
    trace = swf(tmp_path / "ex.swf", job(1, 0, -1, 100, 8, 200), job(2, 5, -1, 10, 1, 20))
    out = tmp_path / "ex.html"
    code, _, err = run_cli(capsys, "report", trace, "--simulate", "fcfs+easy", "-o", str(out))
    assert code == 0, err
    assert any("larger_than_machine=1" in n for n in notes(out.read_text()))


def test_platform_notes_on_the_page(capsys, tmp_path):
    trace = swf(tmp_path / "two.swf", job(1, 0, -1, 100, 1, 200), job(2, 5, -1, 10, 1, 20))
    platform = tmp_path / "p.toml"
    platform.write_text(
        '[platform]\nsharing = "shared"\n[node_groups.n]\ncount = 1\ncores = 4\n'
        'memory = "4G"\n[partitions.p]\nnodes = ["n"]\n',
        encoding="utf-8",
    )
    out = tmp_path / "p.html"
    code, _, err = run_cli(
        capsys, "report", trace, "--simulate", "fcfs+easy", "--platform", str(platform),
        "-o", str(out),
    )  # fmt: skip
    assert code == 0, err
    assert any("memory" in n for n in notes(out.read_text()))


def test_every_job_excluded_says_so(capsys, tmp_path):
    trace = swf(tmp_path / "big.swf", job(1, 0, -1, 100, 8, 200))
    out = tmp_path / "x.html"
    code, _, err = run_cli(capsys, "report", trace, "--simulate", "fcfs+easy", "-o", str(out))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "the simulation excluded all 1 job (larger_than_machine=1)" in err
    assert "simulate the trace first" not in err
    # the schedule file `simulate` wrote (its header's Note)
    sched = tmp_path / "sched.swf"
    assert run_cli(capsys, "simulate", trace, "-p", "fcfs", "-o", str(sched))[0] == 0
    code, _, err = run_cli(capsys, "report", str(sched), "-o", str(out))
    assert code == 2 and "the simulation excluded all 1 job (larger_than_machine=1)" in err
    code, _, err = run_cli(
        capsys, "report", trace, "--simulate", "fcfs+easy,sjf+easy", "-o", str(out)
    )
    assert code == 2 and "the simulation excluded all 1 job (larger_than_machine=1)" in err


# ----------------------------------------------------------------------------- 12


def test_bins_with_bin_width_is_a_usage_error(capsys, tmp_path, late):
    out = tmp_path / "b.html"
    code, _, err = run_cli(
        capsys, "report", late, "--bins", "10", "--bin-width", "60", "-o", str(out)
    )
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "--bins" in err and "--bin-width" in err
    assert not out.exists()


# ----------------------------------------------------------------------------- browser


def test_in_the_browser(capsys, tmp_path, late):
    """3, 4 (the page opens on --window), 5 (the tooltip says unknown), 12 (the
    bin width carries into minutes), 13 (zero-length jobs at the window start)."""
    from test_report_browser import probe

    page = tmp_path / "late.html"
    assert run_cli(capsys, "report", late, "--window=100:700", "-o", str(page))[0] == 0
    (state,) = probe(page, [{"do": "state"}])["states"]
    assert [round(v) for v in state["window"]] == [100, 700]
    assert state["gantt"].startswith("3 jobs in the window")

    page = tmp_path / "width.html"
    assert run_cli(capsys, "report", late, "--bin-width", "59.96", "-o", str(page))[0] == 0
    (state,) = probe(page, [{"do": "state"}])["states"]
    assert state["bins"].startswith("bin width 00:01:00 "), state["bins"]

    zero = swf(tmp_path / "zero.swf", job(1, 0, 0, 0, 1, 1), job(2, 0, 0, 0, 1, 1, 2))
    page = tmp_path / "zero.html"
    assert run_cli(capsys, "report", zero, "-o", str(page))[0] == 0
    (state,) = probe(page, [{"do": "state"}])["states"]
    assert state["gantt"].startswith("2 jobs in the window"), state["gantt"]

    unk = swf(
        tmp_path / "unk.swf",
        "1 0 0 100 -1 -1 -1 -1 -1" + TAIL.format(u=1),
        job(2, 10, 0, 100, 2, 200, 2),
    )
    page = tmp_path / "unk.html"
    assert run_cli(capsys, "report", unk, "-o", str(page))[0] == 0
    tips = probe(page, [{"do": "hover", "chart": "gantt", "count": 2}])["tips"]
    (first,) = [t["tip"] for t in tips if t["id"] == 1]
    assert "processors: unknown" in first and "requested: unknown" in first


# ----------------------------------------------------------------------------- 14


def test_queue_chart_is_capped_like_the_users_and_counts_one_job(tmp_path: Path) -> None:
    """800 queues made an unreadable block of "1 jobs" labels: the chart shows the 40
    queues with most jobs and says so; a queue of one job reads "1 job"."""
    lines = []
    for n in range(1, 51):
        queue = n if n <= 45 else 46  # queues 1-45 of one job, queue 46 of five
        lines.append(
            f"{n} {10 * n} {n % 7} 100 1 -1 -1 1 200 -1 1 {n % 3 + 1} 1 -1 {queue} -1 -1 -1\n"
        )
    page = build_report(schedlab.read(swf(tmp_path / "q.swf", *lines)))
    assert "<h2>Mean wait per queue (the 40 queues with most jobs of 46)</h2>" in page
    assert "1 jobs" not in page
    assert "5 jobs" in page and "1 job" in page
