"""Fixes from the independent metrics audit: negative values, grouped tables'
statistics, records skipped by a lenient read, sizes in the system metrics and the
slowdown's note."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from schedlab.api import read
from schedlab.cli import cli
from schedlab.measure import compute_metrics
from schedlab.model import Workload

NAN = float("nan")
TAIL = "-1 1 1 1 -1 1 1 -1 -1"  # fields 10-18 of the SWF lines below

# Job 1 ran -2 s (invalid: only -1 means unknown); job 2 is a normal job.
NEGRUN_SWF = f"; MaxProcs: 10\n1 0 5 -2 1 -1 -1 8 200 {TAIL}\n2 0 0 100 2 -1 -1 2 200 {TAIL}\n"
# Job 1 waited -5 s.
NEGWAIT_SWF = f"; MaxProcs: 10\n1 0 -5 100 1 -1 -1 8 200 {TAIL}\n2 0 0 100 2 -1 -1 2 200 {TAIL}\n"
# Job 1 has 0 allocated processors and 8 requested.
ALLOC0_SWF = f"; MaxProcs: 10\n1 0 0 100 0 -1 -1 8 200 {TAIL}\n2 0 0 100 2 -1 -1 2 200 {TAIL}\n"
# Job 1 waits 100 s with an unknown size while job 2 runs on 2 of 10 processors.
LOC_UNKNOWN_SWF = (
    "; MaxProcs: 10\n"
    "1 0 100 10 -1 -1 -1 -1 200 -1 1 1 1 -1 1 1 -1 -1\n"
    "2 0 0 50 2 -1 -1 2 200 -1 1 2 1 -1 1 1 -1 -1\n"
)
GRID_SWF = "; MaxProcs: 2\n" + "".join(
    f"{i + 1} {10 * i} 0 5 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n" for i in range(11)
)
BADLINE_SWF = GRID_SWF + "99 x 0 5 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n"
# Two partitions, waits 0/10 and 20/40.
PART_SWF = (
    "; MaxProcs: 10\n"
    "1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 1 1 -1 -1\n"
    "2 0 10 10 1 -1 -1 1 20 -1 1 1 1 -1 1 1 -1 -1\n"
    "3 0 20 10 1 -1 -1 1 20 -1 1 2 1 -1 1 2 -1 -1\n"
    "4 0 40 10 1 -1 -1 1 20 -1 1 2 1 -1 1 2 -1 -1\n"
)
# Job 2 ran 0 s (slowdown undefined), job 3's wait is unknown.
RUN0_SWF = (
    "; MaxProcs: 10\n"
    "1 0 10 10 1 -1 -1 1 20 -1 1 1 1 -1 1 1 -1 -1\n"
    "2 0 10 0 1 -1 -1 1 20 -1 1 1 1 -1 1 1 -1 -1\n"
    "3 0 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 1 1 -1 -1\n"
)


def swf(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


# ------------------------------------------------- 1. negative times are unknown


def test_negative_run_time_is_unknown_and_noted(tmp_path):
    report = compute_metrics(read(swf(tmp_path, "negrun.swf", NEGRUN_SWF)))
    assert report.value("response") == 100.0  # job 2 only
    assert report.value("response", "unknown") == 1
    assert report.value("accuracy", "count") == 1
    assert report.value("utilization") == pytest.approx(2 * 100 / (10 * 100))
    assert report.value("work") == pytest.approx(200 / 3600)
    assert any("1 job has a negative run time" in n for n in report.notes), report.notes
    # the system metrics' note counts it too
    assert any("system metrics use the 1 job" in n for n in report.notes), report.notes


def test_negative_wait_is_unknown_and_noted(tmp_path):
    report = compute_metrics(read(swf(tmp_path, "negwait.swf", NEGWAIT_SWF)))
    assert report.value("wait") == 0.0
    assert report.value("wait", "unknown") == 1
    assert any("1 job has a negative wait" in n for n in report.notes), report.notes


def test_negative_times_json_notes_cli(tmp_path):
    data = json.loads(run("metrics", swf(tmp_path, "negrun.swf", NEGRUN_SWF), "--json"))
    row = data["rows"][0]
    assert row["utilization"] >= 0
    assert row["response"]["count"] == 1
    assert any("negative run time" in n for n in data["notes"])


def test_trace_and_its_simulation_count_the_same_jobs(tmp_path):
    import schedlab

    trace = read(swf(tmp_path, "negrun.swf", NEGRUN_SWF))
    result = schedlab.simulate(trace, policy="fcfs", backfill="easy")
    assert result.stats["excluded"]["no_run_time"] == 1
    measured = compute_metrics(trace, names=["response"])
    simulated = compute_metrics(result, names=["response"])
    assert measured.value("response", "count") == simulated.value("response", "count") == 1


def test_minus_one_from_arrays_is_unknown_without_a_negative_note():
    work = Workload.from_arrays({"submit_time": [0, 0], "wait_time": [-1, 3], "run_time": [10, 10]})
    report = compute_metrics(work, names=["wait"])
    assert report.value("wait") == 3.0 and report.value("wait", "unknown") == 1
    assert not any("negative" in n for n in report.notes), report.notes


def test_negative_sizes_are_unknown():
    work = Workload.from_arrays(
        {
            "submit_time": [0, 0],
            "wait_time": [0, 0],
            "run_time": [100, 100],
            "allocated_processors": [-4, 2],
            "requested_processors": [-4, 2],
        }
    )
    report = compute_metrics(work, names=["work"])
    assert report.value("work") == pytest.approx(200 / 3600)
    assert any("negative allocated processor count" in n for n in report.notes), report.notes


# ------------------------------------------- 2./3. grouped tables' statistics


def test_grouped_report_without_mean_prints_its_statistics(tmp_path):
    report = compute_metrics(
        read(swf(tmp_path, "part.swf", PART_SWF)), names=["wait"], by="partition", stats="p90,max"
    )
    text = str(report)
    assert "wait p90" in text and "wait max" in text and "wait mean" not in text


def test_grouped_default_shows_the_mean_only(tmp_path):
    report = compute_metrics(read(swf(tmp_path, "part.swf", PART_SWF)), names=["wait"], by="user")
    text = str(report)
    assert "wait mean" in text and "wait p90" not in text


def test_cli_grouped_stats_without_mean(tmp_path):
    out = run(
        "metrics", swf(tmp_path, "part.swf", PART_SWF), "--by", "partition", "-m", "wait",
        "-M", "stats=max,p90",
    )  # fmt: skip
    assert "wait max" in out and "wait p90" in out and "wait mean" not in out


def test_cli_grouped_stat_adds_to_the_mean(tmp_path):
    out = run(
        "metrics", swf(tmp_path, "part.swf", PART_SWF), "--by", "partition", "-m", "wait",
        "--stat", "p90",
    )  # fmt: skip
    assert "wait mean" in out and "wait p90" in out and "wait max" not in out


def test_cli_grouped_stat_adds_to_given_stats(tmp_path):
    out = run(
        "metrics", swf(tmp_path, "part.swf", PART_SWF), "--by", "partition", "-m", "wait",
        "-M", "stats=max,p90", "--stat", "p99",
    )  # fmt: skip
    assert "wait max" in out and "wait p90" in out and "wait p99" in out


# ---------------------------------------------- 4. records a lenient read skipped


def test_skipped_records_noted_in_report(tmp_path):
    work = read(swf(tmp_path, "bad.swf", BADLINE_SWF), lenient=True)
    report = compute_metrics(work, names=["wait"])
    assert report.jobs == 11
    notes = [n for n in report.notes if "skipped" in n]
    assert len(notes) == 1 and "1 record" in notes[0], report.notes


def test_skipped_records_cli_metrics(tmp_path):
    path = swf(tmp_path, "bad.swf", BADLINE_SWF)
    out = run("metrics", path, "-m", "wait", "-R", "lenient=true")
    assert "skipped" in out
    data = json.loads(run("metrics", path, "-m", "wait", "-R", "lenient=true", "--json"))
    assert sum("skipped" in n for n in data["notes"]) == 1


def test_skipped_records_cli_simulate(tmp_path):
    path = swf(tmp_path, "bad.swf", BADLINE_SWF)
    out = run("simulate", path, "-R", "lenient=true", "--no-timings")
    assert sum("skipped" in line for line in out.splitlines()) == 1, out
    data = json.loads(run("simulate", path, "-R", "lenient=true", "--json", "--no-timings"))
    assert any("skipped" in n for n in data["notes"])


def test_no_skipped_note_without_skips(tmp_path):
    report = compute_metrics(read(swf(tmp_path, "grid.swf", GRID_SWF)), names=["wait"])
    assert not any("skipped" in n for n in report.notes)


# ------------------------------- 5. loss of capacity and jobs of unknown size


def test_loss_of_capacity_unknown_size_counted_in_note(tmp_path):
    report = compute_metrics(
        read(swf(tmp_path, "loc.swf", LOC_UNKNOWN_SWF)), names=["loss-of-capacity"]
    )
    assert report.value("loss-of-capacity") == 0.0  # kept: a job of no known size is left out
    notes = [n for n in report.notes if "size" in n]
    assert len(notes) == 1 and "1 of them" in notes[0], report.notes


# ------------------------------------------ 6. allocated 0 -> requested


def test_allocated_zero_uses_requested(tmp_path):
    report = compute_metrics(
        read(swf(tmp_path, "alloc0.swf", ALLOC0_SWF)), names=["work", "wait"], by="size"
    )
    assert report.value("work") == pytest.approx((8 + 2) * 100 / 3600)
    assert [r["group"] for r in report.rows] == ["2-3", "8-15", "all"]
    assert any("allocated when known and positive" in n for n in report.notes), report.notes


# ------------------------------------------------- 7. slowdown of run time 0


def test_slowdown_note_names_run_time_zero(tmp_path):
    report = compute_metrics(read(swf(tmp_path, "run0.swf", RUN0_SWF)), names=["slowdown"])
    [note] = [n for n in report.notes if n.startswith("slowdown:")]
    assert "2 of 3 jobs" in note
    assert "1 with run time 0" in note and "1 with unknown inputs" in note, note


def test_slowdown_note_run_time_zero_only(tmp_path):
    text = RUN0_SWF.replace("3 0 -1 10", "3 0 5 10")
    report = compute_metrics(read(swf(tmp_path, "run0.swf", text)), names=["slowdown"])
    [note] = [n for n in report.notes if n.startswith("slowdown:")]
    assert "run time 0" in note and "unknown inputs" not in note, note
    assert np.isclose(report.value("slowdown"), 1.75)  # (20/10 + 15/10) / 2
