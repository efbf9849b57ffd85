"""``schedlab report``: a self-contained HTML page with the schedule's figures."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab.errors import UsageError
from schedlab.model import Header, Workload
from schedlab.report import build_report, step_series, usage_over_time
from schedlab.report_charts import embedded_sources

PNG = re.compile(r'<img alt="([^"]+)" src="data:image/png;base64,([A-Za-z0-9+/=]+)">')


@pytest.fixture(scope="module")
def small_schedule():
    workload = schedlab.read("psp-fing:scenario=CFG,seed=2,jobs=80")
    return schedlab.simulate(workload, policy="psp", backfill="easy", progress=False)


def hand_made() -> Workload:
    # Three jobs on 4 processors: 1 and 2 run at once, 3 waits for 1.
    header = Header()
    header.set("MaxProcs", 4)
    return Workload.from_arrays(
        {
            "job_number": [1, 2, 3],
            "submit_time": [0, 0, 10],
            "wait_time": [0, 0, 90],
            "run_time": [100, 50, 20],
            "allocated_processors": [3, 1, 2],
            "requested_time": [100, 500, 40],
            "user_id": [1, 2, 1],
        },
        header,
    )


def test_step_series_and_usage_golden():
    times, values = step_series(np.array([0.0, 5.0, 5.0, 9.0]), np.array([2.0, 1.0, -2.0, -1.0]))
    assert times.tolist() == [0.0, 5.0, 9.0]
    assert values.tolist() == [2.0, 1.0, 0.0]
    series = usage_over_time(hand_made().to_arrays())
    t, busy = series["busy"]
    assert t.tolist() == [0.0, 50.0, 100.0, 120.0]
    assert busy.tolist() == [4.0, 3.0, 2.0, 0.0]
    t, queued = series["queued"]
    assert t.tolist() == [0.0, 10.0, 100.0]
    assert queued.tolist() == [0.0, 1.0, 0.0]


def test_static_report_is_self_contained_with_every_figure(small_schedule):
    page = build_report(small_schedule, title="CFG under PSP", static=True)
    alts = [m.group(1) for m in PNG.finditer(page)]
    assert alts == [
        "utilization and queue length",
        "wait distribution",
        "mean wait per user",
        "mean wait per accuracy class",
        "Gantt chart",
    ]
    import base64

    for match in PNG.finditer(page):
        assert base64.b64decode(match.group(2))[:8] == b"\x89PNG\r\n\x1a\n"
    # Nothing is loaded from elsewhere.
    assert not re.search(r'(src|href)="(?!data:)', page)
    assert "<h1>CFG under PSP</h1>" in page
    for metric in ("wait", "bounded-slowdown", "utilization", "makespan"):
        assert f">{metric}</td>" in page
    assert page == build_report(small_schedule, title="CFG under PSP", static=True)
    assert "<script" not in page


def test_large_schedules_get_no_gantt_chart(small_schedule):
    page = build_report(small_schedule, gantt_max_jobs=50, static=True)
    assert 'Gantt chart"' not in page
    assert "too many to draw" in page


def test_a_workload_without_waits_is_refused():
    with pytest.raises(UsageError, match="simulate"):
        build_report(schedlab.read("psp-fing:jobs=50"))


def test_recorded_trace_without_requested_times_has_no_class_chart():
    workload = hand_made()
    workload.to_arrays()["requested_time"][:] = np.nan
    page = build_report(workload)
    assert '"mean-wait-per-accuracy-class"' not in page
    assert '"mean-wait-per-user"' in page
    static = build_report(workload, static=True)
    assert "mean wait per accuracy class" not in static and "mean wait per user" in static


def test_cli_report_on_a_simulated_swf_and_with_simulate(tmp_path, small_schedule):
    from click.testing import CliRunner
    from schedlab.cli import cli

    swf = schedlab.write(small_schedule.workload, tmp_path / "schedule.swf")
    out = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["report", str(swf), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"wrote {out}"
    assert not PNG.findall(out.read_text())  # everything is drawn by Bokeh
    jobs = embedded_sources(out.read_text())["jobs-0"]
    assert len(jobs["id"]) == 80
    out3 = tmp_path / "r3.html"
    result = CliRunner().invoke(cli, ["report", str(swf), "--static", "-o", str(out3)])
    assert result.exit_code == 0, result.output
    assert len(PNG.findall(out3.read_text())) == 5
    out2 = tmp_path / "r2.html"
    result = CliRunner().invoke(
        cli, ["report", "psp-fing:scenario=CF,jobs=60", "--simulate", "fcfs+easy", "-o", str(out2)]
    )
    assert result.exit_code == 0, result.output
    assert "under fcfs + easy" in out2.read_text()


def test_comparison_page_puts_schedules_side_by_side(tmp_path, small_schedule, capsys):

    from click.testing import CliRunner
    from schedlab.cli import cli

    out = tmp_path / "cmp.html"
    spec = "psp-fing:scenario=CF,jobs=60"
    result = CliRunner().invoke(
        cli, ["report", spec, "--simulate", "fcfs+easy,psp+easy", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "<th style='color:#3b528b'>fcfs + easy</th>" in page
    assert "<th style='color:#e07b00'>psp + easy</th>" in page
    assert (
        "<span style='color:#3b528b'>■</span> fcfs + easy "
        "<span style='color:#e07b00'>■</span> psp + easy</p>" in page
    )
    sources = embedded_sources(page)
    assert len(sources["jobs-0"]["id"]) == len(sources["jobs-1"]["id"]) == 60
    # One clock: the same bins for both schedules, at every resolution.
    levels = sorted(name for name in sources if name.startswith("level-0-"))
    assert len(levels) > 1
    for level in levels:
        other = sources[level.replace("level-0-", "level-1-")]
        assert sources[level]["x"].tolist() == other["x"].tolist()
    # Two schedule files with different machine sizes; the table lists both sizes.
    a = schedlab.write(small_schedule.workload, tmp_path / "a.swf")
    other = schedlab.simulate(
        schedlab.read("psp-fing:scenario=CFG,seed=2,jobs=80"),
        policy="fcfs",
        backfill="easy",
        procs=64,
        progress=False,
    )
    b = schedlab.write(other.workload, tmp_path / "b.swf")
    out2 = tmp_path / "files.html"
    result = CliRunner().invoke(cli, ["report", str(a), str(b), "-o", str(out2)])
    assert result.exit_code == 0, result.output
    assert "<td>processors</td><td></td><td>32</td><td>64</td>" in out2.read_text()
    from schedlab.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["report", str(a), str(b), "--static", "-o", str(out2)])
    assert exit_.value.code == 2
    assert "one schedule" in capsys.readouterr().err


def test_an_empty_comparison_or_one_without_waits_is_refused():
    from schedlab.report import build_comparison

    with pytest.raises(UsageError, match="no schedule"):
        build_comparison([])
    pair = [("a", hand_made()), ("b", hand_made())]
    assert build_comparison(pair) == build_comparison(pair)  # same input, same bytes
    with pytest.raises(UsageError, match=r"raw: .*simulate"):
        build_comparison([("ok", hand_made()), ("raw", schedlab.read("psp-fing:jobs=50"))])


def test_mean_wait_per_queue_when_there_are_several_queues():
    workload = hand_made()
    assert "mean wait per queue" not in build_report(workload)  # no queue known
    workload.to_arrays()["queue_number"][:] = [1, 2, 1]
    page = build_report(workload)
    assert "<h2>Mean wait per queue</h2>" in page
    assert '"mean-wait-per-queue"' in page


def test_compare_writes_a_comparison_page(tmp_path, small_schedule):

    from click.testing import CliRunner
    from schedlab.cli import cli

    swf = schedlab.write(small_schedule.workload, tmp_path / "trace.swf")
    out = tmp_path / "cmp.html"
    result = CliRunner().invoke(
        cli, ["compare", str(swf), "--policies", "fcfs+easy,sjf+easy", "--report", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.output
    page = out.read_text()
    assert "<h1>Comparison on trace.swf</h1>" in page
    assert "■</span> fcfs + easy <span style='color:#e07b00'>■</span> sjf + easy</p>" in page
    sources = embedded_sources(page)
    assert sorted(name for name in sources if name.startswith("jobs-")) == ["jobs-0", "jobs-1"]
    assert all(len(sources[f"jobs-{s}"]["id"]) == 80 for s in (0, 1))


def test_compare_report_with_ci_shows_intervals_tests_and_ranks(tmp_path: Path) -> None:
    """``compare --ci --report`` puts the significance tables and figure in the page."""
    import base64
    import re

    import pytest

    pytest.importorskip("scipy")
    from schedlab.cli import main

    page = tmp_path / "cmp.html"
    try:
        main(
            [
                "compare",
                "psp-fing:scenario=CFG,seed=3,jobs=600",
                "-p",
                "fcfs+easy,sjf+easy",
                "--ci",
                "--window",
                "1h",
                "--resamples",
                "200",
                "--report",
                str(page),
            ]
        )
    except SystemExit as exc:
        assert exc.code in (0, None)
    text = page.read_text()
    assert "Is the difference real?" in text
    assert "Paired differences (first - second)" in text
    assert "[bold]" not in text  # console markup removed
    (png,) = re.findall(
        r'alt="means with intervals and ranks" src="data:image/png;base64,([^"]+)"', text
    )
    assert base64.b64decode(png).startswith(b"\x89PNG")


def test_without_bokeh_the_page_is_refused_in_one_line_and_static_still_works(
    tmp_path, small_schedule, monkeypatch, capsys
):
    import sys

    from schedlab.cli import main
    from schedlab.report_charts import INSTALL_HINT

    monkeypatch.setitem(sys.modules, "bokeh", None)  # import bokeh raises ImportError
    with pytest.raises(UsageError, match=r"schedlab\[report\].*--static"):
        build_report(small_schedule)
    swf = schedlab.write(small_schedule.workload, tmp_path / "schedule.swf")
    with pytest.raises(SystemExit) as exit_:
        main(["report", str(swf), "-o", str(tmp_path / "r.html")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"schedlab: error: {INSTALL_HINT}"]
    assert not (tmp_path / "r.html").exists()
    main(["report", str(swf), "--static", "-o", str(tmp_path / "s.html")])
    assert capsys.readouterr().err.startswith("wrote ")  # the status line, on stderr
    assert len(PNG.findall((tmp_path / "s.html").read_text())) == 5
    # compare --report says so before it simulates anything
    with pytest.raises(SystemExit) as exit_:
        main(["compare", str(swf), "--policies", "fcfs+easy", "--report", str(tmp_path / "c.html")])
    assert exit_.value.code == 2
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [f"schedlab: error: {INSTALL_HINT}"]
    assert "fcfs" not in captured.out  # no table: nothing was simulated
    assert not (tmp_path / "c.html").exists()


def test_help_does_not_import_bokeh():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from schedlab.cli import main\n"
        "for args in (['--help'], ['report', '--help']):\n"
        "    try:\n"
        "        main(args)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print('bokeh' in sys.modules, 'schedlab.report_charts' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "False False"


def test_the_interactive_page_loads_nothing_and_logs_nothing(small_schedule):
    page = build_report(small_schedule)
    # Bokeh's JavaScript and CSS are inline: no script, style or image from elsewhere.
    scripts = list(re.finditer(r"(<script[^>]*>).*?</script>", page, re.S))
    assert len(scripts) >= 3  # Bokeh, its widgets, the document
    assert not [m.group(1) for m in scripts if "src=" in m.group(1)]
    outside = re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.S)
    assert not re.search(r"<(link|img|iframe)[^>]+(src|href)=", outside)
    assert "cdn.bokeh.org" not in page
    # The log level is set without the console line of Bokeh.set_log_level.
    assert 'Bokeh.logger.set_level("warn");' in page and 'Bokeh.set_log_level("' not in page
    # Ids are numbered in order: the same schedule gives the same bytes.
    assert page == build_report(small_schedule)
    assert not re.search(r'"p\d+"', page.rpartition("<!-- end of Bokeh's resources -->")[2])


def test_an_empty_schedule_is_an_error_not_an_empty_page(tmp_path):
    from schedlab.report import write_report

    empty = Workload.from_arrays(
        {"job_number": [], "submit_time": [], "wait_time": [], "run_time": []}, Header()
    )
    for static in (False, True):
        with pytest.raises(UsageError, match="no job with known submit, wait and run times"):
            write_report(empty, tmp_path / "empty.html", static=static)
    assert not (tmp_path / "empty.html").exists()
