"""Fixes of the second report audit (findings 1, 4, 6, 7 and 8): negative times are
unknown in the page data as in the metrics, utilization without any known size is
unavailable, the queued-work series has no float residue, the last partial bin is
averaged the same way in every chart, and the page's labels read right on tiny
spans and single jobs."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import schedlab

pytest.importorskip("bokeh")

from schedlab.report import build_report, timed_jobs, write_report
from schedlab.report_charts import embedded_sources
from schedlab.report_data import bin_step, page_data, series_steps

# Finding 1: negative waits and run times other than -1 are unknown in the page.

NEG = """; MaxProcs: 4
1 0 10 100 2 -1 -1 2 200 -1 1 1 1 -1 1 1 -1 -1
2 0 -5 30 2 -1 -1 2 100 -1 1 2 1 -1 1 1 -1 -1
3 0 0 -2 2 -1 -1 2 100 -1 1 3 1 -1 1 1 -1 -1
"""
UNK = """; MaxProcs: 8
1 0 10 100 2 -1 -1 2 200 -1 1 1 1 -1 1 1 -1 -1
2 5 -1 50 1 -1 -1 1 100 -1 1 2 1 -1 1 1 -1 -1
3 10 20 -1 4 -1 -1 4 300 -1 1 1 1 -1 1 1 -1 -1
4 20 -5 30 2 -1 -1 2 100 -1 1 2 1 -1 1 1 -1 -1
5 30 0 -2 2 -1 -1 2 100 -1 1 3 1 -1 1 1 -1 -1
6 40 15 60 -3 -1 -1 -3 100 -1 1 3 1 -1 1 1 -1 -1
7 50 5 40 2 -1 -1 2 -7 -1 1 1 1 -1 1 1 -1 -1
8 60 0 80 1 -1 -1 1 100 -1 1 2 1 -1 1 1 -1 -1
"""


def _read(tmp_path: Path, name: str, text: str) -> schedlab.Workload:
    path = tmp_path / name
    path.write_text(text)
    return schedlab.read(str(path))


def _as_minus_one(text: str) -> str:
    """The trace with every negative value written as -1 (SWF's unknown)."""
    lines = []
    for line in text.splitlines():
        if line.startswith(";"):
            lines.append(line)
        else:
            lines.append(" ".join("-1" if float(v) < 0 else v for v in line.split()))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name,text", [("neg.swf", NEG), ("unk.swf", UNK)])
def test_negative_values_are_unknown_in_the_page_data(tmp_path: Path, name: str, text: str):
    """The page of a trace with negative values carries exactly the data of the same
    trace with -1 in their place: job table, series, CDFs."""
    raw = _read(tmp_path, name, text)
    clean = _read(tmp_path, "clean-" + name, _as_minus_one(text))
    pages = [build_report(w, title="t") for w in (raw, clean)]
    sources = [embedded_sources(p) for p in pages]
    assert sorted(sources[0]) == sorted(sources[1])
    for key in sources[0]:
        if not isinstance(sources[0][key], dict):
            continue
        for column, values in sources[0][key].items():
            np.testing.assert_array_equal(
                np.asarray(values), np.asarray(sources[1][key][column]), err_msg=f"{key}.{column}"
            )


def test_neg_trace_page_leaves_the_invalid_jobs_out(tmp_path: Path):
    workload = _read(tmp_path, "neg.swf", NEG)
    page = build_report(workload, title="neg")
    src = embedded_sources(page)
    jobs = src["jobs-0"]
    assert jobs["id"].tolist() == [1]
    assert jobs["waited"].tolist() == [10] and jobs["run"].tolist() == [100]
    first = src["level-0-0"]
    # job 1 alone: 2 of 4 processors from 10 s to 110 s
    assert float(first["busy_mean"][0]) == pytest.approx(50 * 50 / 60, rel=1e-6)
    assert float(first["busy_max"][0]) == 50.0
    assert "3 (1 with known times)" in page
    assert "left out of the metrics and the charts that need it" in page


def test_unk_trace_series_integral_is_the_utilization_metric(tmp_path: Path):
    """The busy series of the page integrates to the utilization the metrics give,
    and the wait CDF uses the waits the metrics use (of the jobs with known times)."""
    workload = _read(tmp_path, "unk.swf", UNK)
    report = schedlab.compute_metrics(workload, names=["utilization", "makespan"])
    columns = workload.to_arrays()
    assert timed_jobs(columns).tolist() == [True, False, False, False, False, True, True, True]
    data = page_data(columns, 8.0, np.zeros(len(columns), dtype=int))
    t, busy = series_steps(columns, 8.0)["busy"]
    area = float(np.sum(busy[:-1] * np.diff(t)))  # % x s
    makespan = report.value("makespan")
    assert area / 100 / makespan == pytest.approx(report.value("utilization"))
    assert data["jobs"]["id"].tolist() == [1, 6, 7, 8]
    assert data["cdf"]["waited"]["zero"] == pytest.approx(0.25)  # waits 10, 15, 5, 0


def test_static_page_leaves_negative_jobs_out(tmp_path: Path):
    page = build_report(_read(tmp_path, "neg.swf", NEG), title="neg", static=True)
    assert "3 (1 with known times)" in page


# Finding 4: utilization without any job of known size is unavailable.

ALLUNK = """; MaxProcs: 4
1 0 10 100 -1 -1 -1 -1 200 -1 1 1 1 -1 1 1 -1 -1
2 5 0 50 -1 -1 -1 -1 100 -1 1 2 1 -1 1 1 -1 -1
"""


def test_utilization_without_known_sizes_is_unavailable(tmp_path: Path):
    workload = _read(tmp_path, "allunk.swf", ALLUNK)
    report = schedlab.compute_metrics(workload, names=["utilization", "work"])
    assert report.value("utilization") is None
    assert report.value("work") is None
    assert any(n.startswith("utilization: unavailable: no job has a known") for n in report.notes)
    page = build_report(workload, title="allunk")
    assert "utilization: unavailable" in page
    assert ">utilization</td><td>-</td>" in page


def test_utilization_with_known_sizes_outside_a_window_is_zero():
    from schedlab.metrics.system import utilization

    columns = schedlab.Workload.from_jobs(
        [schedlab.Job(job_number=1, submit_time=0, wait_time=0, run_time=10,
                      allocated_processors=2)]
    ).to_arrays()  # fmt: skip
    assert utilization(columns, procs=4.0, period=(100.0, 200.0)) == 0.0


# Finding 6: no float residue in the queued work when nothing queues.


def test_queued_work_is_exactly_zero_when_nothing_queues():
    rng = np.random.default_rng(7)
    n = 4000
    submit = np.sort(rng.integers(0, 10**7, n)).astype(float)
    jobs = [
        schedlab.Job(job_number=i + 1, submit_time=float(submit[i]), wait_time=0.0,
                     run_time=float(rng.integers(1, 5000)),
                     allocated_processors=float(rng.integers(1, 64)),
                     requested_time=float(rng.integers(1, 10**5)) + 0.1 * (i % 3))
        for i in range(n)
    ]  # fmt: skip
    columns = schedlab.Workload.from_jobs(jobs).to_arrays()
    _, demand = series_steps(columns, 1024.0)["demand"]
    assert np.all(demand == 0.0)
    data = page_data(columns, 1024.0, np.zeros(n, dtype=int))
    for level in data["levels"]:
        mean, maximum = level["demand"]
        assert np.all(mean == 0.0) and np.all(maximum == 0.0)


def test_queued_work_is_exact_while_jobs_queue():
    jobs = [
        schedlab.Job(job_number=1, submit_time=0.0, wait_time=100.0, run_time=10.0,
                     allocated_processors=3.0, requested_time=7.0),
        schedlab.Job(job_number=2, submit_time=50.0, wait_time=10.0, run_time=10.0,
                     allocated_processors=5.0, requested_time=11.0),
    ]  # fmt: skip
    columns = schedlab.Workload.from_jobs(jobs).to_arrays()
    t, demand = series_steps(columns, 8.0)["demand"]
    assert t.tolist() == [0.0, 50.0, 60.0, 100.0]
    assert demand.tolist() == [21 / 3600, 76 / 3600, 21 / 3600, 0.0]


# Finding 7: the last, partial bin is averaged over the part of it the schedule covers,
# in the series and in the per-resource chart alike.

PLATFORM = """[node_groups.n]
count = 4
cores = 1
[partitions.p]
nodes = ["n"]
"""
JOBS = """; MaxProcs: 4
1 0 -1 1000 1 -1 -1 1 1000 -1 1 1 1 -1 1 -1 -1 -1
2 100 -1 100 2 -1 -1 2 100 -1 1 2 1 -1 1 -1 -1 -1
3 130 -1 840 3 -1 -1 3 900 -1 1 2 1 -1 1 -1 -1 -1
"""


def test_bin_step_averages_the_last_bin_over_the_covered_part():
    times, values = np.array([0.0, 50.0, 90.0]), np.array([2.0, 4.0, 0.0])
    mean, top = bin_step(times, values, 0.0, 40.0, 3, stop=90.0)
    assert mean.tolist() == pytest.approx([2.0, 3.5, 4.0])  # 80-90 s: level 4
    assert top.tolist() == [2.0, 4.0, 4.0]
    mean, _ = bin_step(times, values, 0.0, 40.0, 3)
    assert mean.tolist() == pytest.approx([2.0, 3.5, 1.0])  # the whole width


def test_resources_chart_last_bin_equals_the_series(tmp_path: Path):
    (tmp_path / "p.toml").write_text(PLATFORM)
    (tmp_path / "j.swf").write_text(JOBS)
    result = schedlab.simulate(
        schedlab.read(str(tmp_path / "j.swf")),
        policy="fcfs",
        backfill="easy",
        platform=str(tmp_path / "p.toml"),
        progress=False,
    )
    src = embedded_sources(build_report(result, title="p"))
    levels = sorted(k for k in src if k.startswith("resources-level-"))
    assert levels
    for k, name in enumerate(levels):
        resources, series = src[name], src[f"level-0-{k}"]
        np.testing.assert_allclose(resources["mean0"], series["busy_mean"], rtol=1e-6)
        np.testing.assert_allclose(resources["max0"], series["busy_max"], rtol=1e-6)
    # job 3 (3 cores) runs from 200 s to 1,040 s, job 1 (1 core) to 1,000 s: the
    # last 60 s bin (1,020-1,080 s) is cut at 1,040 s, where 3 of 4 cores are held
    last = src[levels[-1]]
    assert float(last["mean0"][-2]) == pytest.approx(75.0)
    assert float(src[f"level-0-{len(levels) - 1}"]["busy_mean"][-2]) == pytest.approx(75.0)


# Finding 8: tick labels on tiny spans, and "1 job".


def _labels(ticks_days: list[float]) -> list[str]:
    from schedlab.report_charts import _CLOCK_LABELS

    node = shutil.which("node")
    if node is None:
        pytest.skip("no node binary to run the tick formatter")
    script = (
        "function f(tick, index, ticks) {" + _CLOCK_LABELS + "}\n"
        f"const ticks = {json.dumps(ticks_days)};\n"
        "console.log(JSON.stringify(ticks.map((t, i) => f(t, i, ticks))));"
    )
    done = subprocess.run([node, "-e", script], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("step_s", [0.125, 0.25, 0.1, 0.5, 0.01, 6.25, 12.5, 0.002])
def test_clock_labels_on_sub_second_steps_are_distinct_and_exact(step_s: float):
    ticks = [k * step_s / 86400 for k in range(9)]
    labels = _labels(ticks)
    assert len(set(labels)) == len(labels), labels
    for k, label in enumerate(labels):
        seconds = float(label.split(":")[-1])
        assert seconds == pytest.approx((k * step_s) % 60, abs=1e-9), labels


def test_clock_labels_of_tenths_read_as_tenths():
    assert _labels([k * 0.5 / 86400 for k in range(3)]) == [
        "0d 00:00:00.0", "0d 00:00:00.5", "0d 00:00:01.0",
    ]  # fmt: skip
    assert _labels([k * 20 / 86400 for k in range(2)]) == ["0d 00:00:00", "0d 00:00:20"]


SINGLE = """; MaxProcs: 4
1 100 10 50 2 -1 -1 2 100 -1 1 1 1 -1 1 1 -1 -1
"""
INSTANT0 = """; MaxProcs: 4
1 100 0 0 2 -1 -1 2 100 -1 1 1 1 -1 1 1 -1 -1
2 100 0 0 2 -1 -1 2 100 -1 1 2 1 -1 1 1 -1 -1
3 100 0 0 4 -1 -1 4 100 -1 1 1 1 -1 1 1 -1 -1
"""


def test_a_single_job_page_says_one_job(tmp_path: Path):
    from test_report_browser import probe

    page = write_report(_read(tmp_path, "single.swf", SINGLE), tmp_path / "single.html")
    (state,) = probe(page, [{"do": "state"}])["states"]
    assert state["gantt"].startswith("1 job in the window"), state["gantt"]
    assert state["rows"] == 1
    assert "(1 bin shown;" in state["bins"], state["bins"]


def test_a_page_of_one_instant_renders(tmp_path: Path):
    from test_report_browser import probe

    page = write_report(_read(tmp_path, "instant0.swf", INSTANT0), tmp_path / "i0.html")
    (state,) = probe(page, [{"do": "state"}])["states"]
    assert state["gantt"].startswith("3 jobs in the window"), state["gantt"]
