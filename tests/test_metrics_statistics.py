"""Extensible statistics, per-group system metrics, the warm-up/cool-down window, and
the cross-check with metrics computed independently from an SWF file (the evalys
comparison of docs/metrics.md)."""

from __future__ import annotations

import numpy as np
import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab import StatisticSpec, hookimpl
from schedlab.measure import compute_metrics, grouped_statistics, quantile_of

pytestmark = pytest.mark.realdata


@pytest.fixture(scope="module")
def hpc2n(swf_dir):
    return schedlab.read(swf_dir / "HPC2N-2002_excerpt-3170jobs_alea.swf")


@pytest.fixture(scope="module")
def schedule(hpc2n):
    """A real simulated schedule: HPC2N's 3,170 jobs under FCFS + EASY."""
    return schedlab.simulate(hpc2n, policy="fcfs", backfill="easy")


# --------------------------------------------------------------------------- statistics


def test_percentile_names():
    assert quantile_of("p95") == 0.95
    assert quantile_of("p99.9") == pytest.approx(0.999)
    assert quantile_of("median") == 0.5
    assert quantile_of("p0") == 0.0 and quantile_of("p100") == 1.0
    assert quantile_of("mean") is None
    with pytest.raises(schedlab.UsageError, match="between p0 and p100"):
        quantile_of("p101")


def test_any_percentile_matches_numpy(schedule):
    report = compute_metrics(schedule, names=["wait", "bsld"], stats="mean,p95,p99.9,min,max")
    assert report.stats == ("mean", "p95", "p99.9", "min", "max")
    wait = schedule.workload.to_arrays()["wait_time"]
    assert report.value("wait", "p95") == pytest.approx(np.percentile(wait, 95), rel=1e-12)
    assert report.value("wait", "p99.9") == pytest.approx(np.percentile(wait, 99.9), rel=1e-12)
    assert report.value("wait", "min") == wait.min()
    # Only the requested statistics are in the report.
    assert set(report.row()["wait"]) == {"mean", "p95", "p99.9", "min", "max", "count", "unknown"}


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=60),
    st.floats(0, 100),
)
def test_grouped_percentiles_equal_numpy(values, q):
    values = np.array(values)
    codes = np.arange(len(values)) % 3
    name = f"p{q:.4f}".rstrip("0").rstrip(".")
    stats, counts = grouped_statistics(codes, values, 3, (name, "min"))
    for g in range(3):
        mine = values[codes == g]
        if len(mine) == 0:
            assert np.isnan(stats[name][g]) and counts[g] == 0
            continue
        expected = np.percentile(mine, float(name[1:]))
        assert stats[name][g] == pytest.approx(expected, rel=1e-9, abs=1e-9)
        assert stats["min"][g] == mine.min()


def test_builtin_statistic_plugin_std_and_gmean(schedule):
    report = compute_metrics(schedule, names=["wait", "slowdown"], stats="mean,std,gmean")
    cols = schedule.workload.to_arrays()
    assert report.value("wait", "std") == pytest.approx(np.std(cols["wait_time"], ddof=1))
    run, wait = cols["run_time"], cols["wait_time"]
    slowdown = ((wait + run) / run)[run > 0]
    assert report.value("slowdown", "gmean") == pytest.approx(np.exp(np.log(slowdown).mean()))
    # Waits of 0 s exist, so their geometric mean is undefined: unknown, not 0.
    assert (wait == 0).any() and report.value("wait", "gmean") is None
    # The alias names the same statistic.
    alias = compute_metrics(schedule, names=["wait"], stats="stdev")
    assert alias.stats == ("std",)


def test_third_party_statistic_through_the_hook(schedule):
    from schedlab.testing import plugin_registry

    class Plugin:
        @staticmethod
        @hookimpl
        def schedlab_statistics():
            return [StatisticSpec(name="iqr", description="p75 - p25", compute=iqr)]

    def iqr(values):
        calls.append(len(values))
        return float(np.percentile(values, 75) - np.percentile(values, 25))

    calls: list[int] = []
    registry = plugin_registry(("iqr-plugin", Plugin()))
    report = compute_metrics(
        schedule, names=["wait"], by="user", stats="mean,iqr", registry=registry
    )
    wait = schedule.workload.to_arrays()["wait_time"]
    expected = np.percentile(wait, 75) - np.percentile(wait, 25)
    assert report.value("wait", "iqr") == pytest.approx(expected)
    # Called once per group (and once for the "all" row), never per job.
    assert len(calls) == len(report.rows)


def test_reserved_statistic_names_disable_the_plugin():
    with pytest.raises(ValueError, match="reserved"):
        StatisticSpec(name="p95", compute=np.mean)
    with pytest.raises(ValueError, match="reserved"):
        StatisticSpec(name="mine", aliases=("count",), compute=np.mean)


def test_unknown_statistic_lists_the_valid_ones(schedule):
    with pytest.raises(schedlab.UsageError, match=r"unknown statistic 'avg' \(statistics: mean"):
        compute_metrics(schedule, names=["wait"], stats="mean,avg")


# --------------------------------------------------------------------------- per group


@pytest.mark.parametrize("by", ["user", "queue", "partition"])
def test_system_metrics_per_group_add_up(schedule, by):
    report = compute_metrics(
        schedule, names=["wait", "utilization", "throughput", "work", "makespan"], by=by
    )
    groups = [r for r in report.rows if r["group"] != "all"]
    total = report.row("all")
    for metric in ("utilization", "throughput", "work"):
        assert sum(r[metric] for r in groups) == pytest.approx(total[metric], rel=1e-9)
    cols = schedule.workload.to_arrays()
    field = {"user": "user_id", "queue": "queue_number", "partition": "partition_number"}[by]
    for row in groups:
        key = row["group"]
        mine = np.isnan(cols[field]) if key == "unknown" else cols[field] == key
        end = (cols["submit_time"] + cols["wait_time"] + cols["run_time"])[mine]
        # makespan is the group's own span.
        assert row["makespan"] == pytest.approx(end.max() - cols["submit_time"][mine].min())
    assert "whole-schedule" not in " ".join(report.notes)


def test_group_keys_keep_their_types(schedule):
    report = compute_metrics(schedule, names=["wait"], by="user")
    keys = [r["group"] for r in report.rows]
    assert all(type(k) is int for k in keys[:-1]) and keys[-1] == "all"
    assert keys[:-1] == sorted(np.unique(schedule.workload.to_arrays()["user_id"]).astype(int))
    user = keys[0]
    assert report.row(user) is report.row(str(user))
    data = report.to_dict()
    assert data["rows"][0]["group"] == user  # JSON keeps the number


# --------------------------------------------------------------------------- warm-up


def test_warmup_and_cooldown_against_numpy(schedule):
    cols = schedule.workload.to_arrays()
    submit, wait, run = cols["submit_time"], cols["wait_time"], cols["run_time"]
    procs = cols["allocated_processors"]
    first, last = submit.min(), submit.max()
    lo, hi = first + 0.1 * (last - first), last - 86400.0
    report = compute_metrics(
        schedule,
        names=["wait", "utilization", "throughput", "makespan"],
        warmup="10%",
        cooldown="1d",
    )
    keep = (submit >= lo) & (submit <= hi)
    assert report.jobs == keep.sum() < len(submit)
    assert report.value("wait") == pytest.approx(wait[keep].mean(), rel=1e-12)
    assert report.value("wait", "count") == keep.sum()
    start, end = submit + wait, submit + wait + run
    inside = np.clip(np.minimum(end, hi) - np.maximum(start, lo), 0, None)
    expected = (procs * inside).sum() / (schedule.procs * (hi - lo))
    assert report.value("utilization") == pytest.approx(expected, rel=1e-12)
    ended = ((end >= lo) & (end <= hi)).sum()
    assert report.value("throughput") == pytest.approx(ended / (hi - lo) * 3600)
    # makespan stays the whole schedule's, and a note says the window does not apply.
    assert report.value("makespan") == pytest.approx(end.max() - first)
    assert any("makespan: measured over the whole schedule" in n for n in report.notes)
    assert any("warm-up/cool-down" in n for n in report.notes)


def test_steady_state_utilization_tells_policies_apart(swf_dir):
    """Over the whole span, utilization is work / (machine x makespan): on KTH it is
    0.697 whatever the policy. Over a steady-state window (10% warm-up and cool-down)
    it shows that a scheduler without backfilling keeps the machine busier only
    because its queue never empties."""
    kth = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    whole, window = {}, {}
    for backfill in ("none", "easy"):
        result = schedlab.simulate(kth, policy="fcfs", backfill=backfill)
        whole[backfill] = compute_metrics(result, names=["utilization"]).value("utilization")
        window[backfill] = compute_metrics(
            result, names=["utilization"], warmup="10%", cooldown="10%"
        ).value("utilization")
    assert whole["none"] == pytest.approx(whole["easy"], abs=1e-3)
    assert whole["none"] == pytest.approx(0.697, abs=1e-3)
    assert window["none"] - window["easy"] > 3e-3
    assert all(window[b] > whole[b] for b in window)  # the drain is left out


@pytest.mark.parametrize(
    ("warmup", "cooldown", "message"),
    [
        ("60%", "50%", "leave no time"),
        ("-5", "0", "expected seconds"),
        ("1 week", "0", "expected seconds"),
        ("200%", "0", "at most 100%"),
    ],
)
def test_bad_windows_are_one_line_errors(schedule, warmup, cooldown, message):
    with pytest.raises(schedlab.UsageError, match=message):
        compute_metrics(schedule, names=["wait"], warmup=warmup, cooldown=cooldown)


def test_cli_warmup_and_any_statistic(swf_dir, capsys):
    from schedlab.cli import main

    path = str(swf_dir / "HPC2N-2002_excerpt-3170jobs_alea.swf")
    code = main(["metrics", path, "-m", "wait", "--stat", "p99.9", "--warmup", "2d", "--json"])
    assert code in (0, None)
    import json

    data = json.loads(capsys.readouterr().out)
    assert data["stats"] == ["mean", "median", "p90", "p99", "max", "p99.9"]
    assert data["options"]["warmup"] == "2d"
    assert data["rows"][0]["wait"]["p99.9"] is not None
    with pytest.raises(SystemExit) as exit_info:
        main(["metrics", path, "--stat", "p95x"])
    assert exit_info.value.code == 2
    assert "unknown statistic 'p95x'" in capsys.readouterr().err


# --------------------------------------------------------------------------- evalys


def test_metrics_equal_an_independent_numpy_reading_of_the_swf(schedule, tmp_path):
    """The comparison docs/metrics.md describes: write the schedule as SWF, read the
    file back with plain numpy (no schedlab), compute the metrics with the textbook
    formulas evalys uses, and compare."""
    path = tmp_path / "schedule.swf"
    schedlab.write(schedule.workload, path)
    rows = np.loadtxt(path, comments=";", ndmin=2)
    submit, wait, run, procs = rows[:, 1], rows[:, 2], rows[:, 3], rows[:, 4]
    assert len(rows) == len(schedule) == 3145  # 25 of the 3,170 jobs cannot run
    start = submit + wait
    finish = start + run
    turnaround = finish - submit
    with np.errstate(divide="ignore", invalid="ignore"):
        stretch = np.where(run > 0, turnaround / run, np.nan)
    bsld = np.maximum(turnaround / np.maximum(run, 10.0), 1.0)
    makespan = finish.max() - submit.min()
    utilization = (procs * run).sum() / (schedule.procs * makespan)

    report = compute_metrics(schedlab.read(path), procs=schedule.procs)
    assert report.value("wait") == pytest.approx(wait.mean(), rel=1e-12)
    assert report.value("wait", "max") == wait.max()
    assert report.value("response") == pytest.approx(turnaround.mean(), rel=1e-12)
    assert report.value("slowdown") == pytest.approx(np.nanmean(stretch), rel=1e-12)
    assert report.value("slowdown", "count") == int((run > 0).sum())
    assert report.value("bounded-slowdown") == pytest.approx(bsld.mean(), rel=1e-12)
    assert report.value("makespan") == pytest.approx(makespan, rel=1e-12)
    assert report.value("utilization") == pytest.approx(utilization, rel=1e-12)
    assert report.value("throughput") == pytest.approx(len(rows) / makespan * 3600, rel=1e-12)
    # The same numbers straight from the Result.
    direct = compute_metrics(schedule)
    for metric in ("wait", "bounded-slowdown", "utilization", "makespan"):
        assert direct.value(metric) == pytest.approx(report.value(metric), rel=1e-12)


def test_grouped_without_total_keeps_per_group_system_metrics(schedule):
    """total=False used to fail on any scalar metric (it had no row to go to)."""
    report = compute_metrics(
        schedule, names=["wait", "utilization", "fairness"], by="user", total=False
    )
    assert all(r["group"] != "all" for r in report.rows)
    assert all(r["utilization"] is not None for r in report.rows)
    assert "fairness" not in report.rows[0]
    assert any(
        "fairness: whole-schedule metrics, left out with total=False" in n for n in report.notes
    )


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 45), st.integers(0, 45))
def test_window_invariants(schedule, warm, cool):
    """For any window: the users' utilization shares add up to the total, and busy
    plus idle-while-jobs-wait capacity never exceeds the window's capacity."""
    report = compute_metrics(
        schedule,
        names=["wait", "utilization", "loss-of-capacity"],
        by="user",
        warmup=f"{warm}%",
        cooldown=f"{cool}%",
    )
    total = report.row("all")
    shares = [r["utilization"] for r in report.rows if r["group"] != "all"]
    assert sum(v for v in shares if v is not None) == pytest.approx(total["utilization"])
    assert 0 <= total["utilization"] <= 1
    assert total["utilization"] + total["loss-of-capacity"] <= 1 + 1e-9
    assert report.jobs == sum(r["jobs"] for r in report.rows if r["group"] != "all")
