"""Intervals of whole-schedule metrics and of percentiles on one trace
(schedlab.significance; MetricSpec.aggregation and window_terms)."""

from __future__ import annotations

import itertools
import json
import types

import numpy as np
import pytest
import schedlab
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab import compute_metrics, read, simulate
from schedlab.cli import cli, main
from schedlab.metrics.system import (
    loss_of_capacity,
    loss_of_capacity_terms,
    throughput,
    throughput_terms,
    utilization,
    utilization_terms,
)
from schedlab.model import JobColumns
from schedlab.plugin_types import MetricSpec
from schedlab.registry import build_registry, get_registry
from schedlab.significance import (
    EXTREME_REASON,
    EXTREME_STAT_REASON,
    MIN_UNITS,
    _BlockQuantiles,
    block_significance,
    mean_interval,
    paired_difference,
    seed_significance,
)

pytest.importorskip("scipy")

HPC2N = "HPC2N-2002_excerpt-3170jobs_alea.swf"  # 3,170 jobs over 57 days, 240 processors
WEEK = 7 * 86400.0


def _columns(submit, wait, run, size) -> JobColumns:
    submit = np.asarray(submit, dtype=np.float64)
    n = len(submit)
    return JobColumns(
        {
            "job_number": np.arange(1, n + 1, dtype=np.float64),
            "submit_time": submit,
            "wait_time": np.asarray(wait, dtype=np.float64),
            "run_time": np.asarray(run, dtype=np.float64),
            "allocated_processors": np.asarray(size, dtype=np.float64),
            "requested_processors": np.asarray(size, dtype=np.float64),
        }
    )


@pytest.fixture(scope="module")
def schedules(swf_dir):
    workload = read(str(swf_dir / HPC2N))
    return {f"{p}+easy": simulate(workload, policy=p, backfill="easy") for p in ("fcfs", "sjf")}


# ----------------------------------------------------------- the block terms


def _plain_busy(columns: JobColumns, edges) -> list[float]:
    """Busy processor-seconds per window, written out job by job: each job's run is
    clipped to the window."""
    out = []
    for a, b in itertools.pairwise(edges):
        total = 0.0
        for k in range(len(columns)):
            start = columns["submit_time"][k] + columns["wait_time"][k]
            end = start + columns["run_time"][k]
            size = columns["allocated_processors"][k]
            if np.isnan(end) or np.isnan(size):
                continue
            total += size * max(0.0, min(end, b) - max(start, a))
        out.append(total)
    return out


jobs = st.lists(
    st.tuples(
        st.integers(0, 1000),  # submit
        st.integers(0, 300),  # wait
        st.integers(0, 400),  # run
        st.integers(1, 8),  # processors
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(jobs=jobs, cuts=st.lists(st.integers(0, 1700), max_size=6))
def test_block_terms_match_a_plain_reference(jobs, cuts):
    """Utilization per window against a job-by-job loop; loss of capacity and
    throughput per window against the metrics computed over that window alone; the
    windows add up to the whole-schedule value."""
    submit, wait, run, size = (np.array(c, dtype=np.float64) for c in zip(*jobs, strict=True))
    columns = _columns(1e9 + submit, wait, run, size)  # epoch-sized times
    first, last = float(columns["submit_time"].min()), float((1e9 + submit + wait + run).max())
    inner = np.clip(1e9 + np.sort(np.array(cuts, dtype=np.float64)), first, last)
    edges = np.concatenate(([first], inner, [last]))
    busy, capacity = utilization_terms(columns, edges, procs=8)
    assert busy == pytest.approx(_plain_busy(columns, edges), abs=1e-6)
    assert capacity == pytest.approx(8 * np.diff(edges))
    lost, capacity2 = loss_of_capacity_terms(columns, edges, procs=8)
    assert capacity2 == pytest.approx(capacity)
    ended, hours = throughput_terms(columns, edges)
    assert hours == pytest.approx(np.diff(edges) / 3600)
    assert ended.sum() == len(columns)  # every job ends in exactly one window
    for k in range(len(edges) - 1):
        if edges[k + 1] > edges[k]:
            window = (edges[k], edges[k + 1])
            assert lost[k] / capacity[k] == pytest.approx(
                loss_of_capacity(columns, procs=8, period=window), abs=1e-9
            )
    if last > first:
        assert busy.sum() / capacity.sum() == pytest.approx(utilization(columns, procs=8))
        assert lost.sum() / capacity.sum() == pytest.approx(
            loss_of_capacity(columns, procs=8), abs=1e-12
        )
        assert ended.sum() / hours.sum() == pytest.approx(throughput(columns))


def test_a_job_across_a_boundary_counts_in_both_windows_for_its_part():
    columns = _columns([0.0], [50.0], [100.0], [4])  # runs 50-150 on 4 processors
    busy, capacity = utilization_terms(columns, np.array([0.0, 100.0, 150.0]), procs=10)
    assert busy.tolist() == [200.0, 200.0]
    assert capacity.tolist() == [1000.0, 500.0]


# ----------------------------------------------------------- calibration


def _utilization_traces(seed: int, reps: int = 400, weeks: int = 52, procs: float = 4.0):
    """``reps`` generated one-year traces with no queue (every job starts at its
    submission), weekly load effects shared by the jobs of a week (a gamma factor of
    mean 1), 1 + Poisson(30 x load) jobs a week of 1-7 processors and exponential run
    times of mean 3 h. Policy A runs them as they are; B runs each job 1.2 x U(0.5,
    1.5) times as long (true utilization difference +20% of A's); C U(0.5, 1.5)
    times as long (no true difference). Returns the true utilization of A and each
    policy's weekly busy and capacity terms (from ``utilization_terms``)."""
    rng = np.random.default_rng(seed)
    true_u = (30 + 1) * (4.0 * 3 * 3600.0) / (WEEK * procs)
    busy = np.zeros((3, reps, weeks))
    capacity = np.zeros((3, reps, weeks))
    for r in range(reps):
        counts = rng.poisson(30 * rng.gamma(4.0, 0.25, size=weeks)) + 1
        submit = np.sort((np.repeat(np.arange(weeks), counts) + rng.random(counts.sum())) * WEEK)
        size = rng.integers(1, 8, len(submit)).astype(np.float64)
        run = rng.exponential(3 * 3600.0, len(submit))
        variants = (
            run,
            run * 1.2 * rng.uniform(0.5, 1.5, len(run)),
            run * rng.uniform(0.5, 1.5, len(run)),
        )
        for k, length in enumerate(variants):
            columns = _columns(submit, np.zeros(len(submit)), length, size)
            first, last = float(submit[0]), float((submit + length).max())
            inner = np.clip(WEEK * np.arange(1, weeks), first, last)
            edges = np.concatenate(([first], inner, [last]))
            busy[k, r], capacity[k, r] = utilization_terms(columns, edges, procs=procs)
    return true_u, busy, capacity


def test_utilization_interval_calibration():
    """400 seeded generated traces (52 weekly blocks): the 95% intervals of the
    utilization, of a true utilization difference and of no difference cover the
    truth in 92-97% of them; the block-level Wilcoxon test finds the real
    difference and rejects the true null in at most 6%."""
    true_u, busy, capacity = _utilization_traces(seed=3)
    _, low, high = mean_interval(busy[0], capacity[0], rng=1)
    assert 0.92 <= np.mean((low <= true_u) & (true_u <= high)) <= 0.97
    _, low, high, p = paired_difference(busy[1], capacity[1], busy[0], capacity[0], rng=1)
    assert 0.92 <= np.mean((low <= 0.2 * true_u) & (0.2 * true_u <= high)) <= 0.97
    assert np.mean(p < 0.05) >= 0.99
    _, low, high, p = paired_difference(busy[2], capacity[2], busy[0], capacity[0], rng=1)
    assert 0.92 <= np.mean((low <= 0.0) & (0.0 <= high)) <= 0.97
    assert np.mean(p < 0.05) <= 0.06


# ----------------------------------------------------------- percentiles


@pytest.mark.parametrize("table", [True, False])
def test_quantile_of_resampled_blocks_is_numpys_on_the_repeated_jobs(monkeypatch, table):
    """Both ways of counting (cumulative table, binary search) against
    ``numpy.quantile`` of the jobs of the drawn blocks, each repeated as drawn."""
    import schedlab.significance as significance

    if not table:
        monkeypatch.setattr(significance, "_TABLE_LIMIT", 0)
    rng = np.random.default_rng(5)
    values = np.round(rng.exponential(100, 400))  # ties, and many zeros
    values[:60] = 0.0
    blocks = rng.integers(0, 15, 400)
    quantiles = _BlockQuantiles(values, blocks, 15)
    assert (quantiles.table is not None) == table
    counts = rng.integers(0, 3, (30, 15))
    counts[0] = 0  # nothing drawn: NaN
    for q in (0.0, 0.5, 0.9, 0.99, 1.0):
        expected = [
            np.quantile(np.repeat(values, row[blocks]), q) if row.any() else np.nan
            for row in counts
        ]
        assert quantiles.quantile(counts, q) == pytest.approx(expected, nan_ok=True)


def test_percentile_intervals_on_a_real_trace(schedules):
    sig = block_significance(
        schedules, metrics=["wait"], stats="p90,median,max,std", window="2d", rank_window="7d"
    )
    report = compute_metrics(schedules["fcfs+easy"], "wait", stats="p90,median,max")
    p90 = sig.interval("fcfs+easy", "wait", "p90")
    assert p90.estimate == pytest.approx(report.value("wait", "p90"))  # the engine's p90
    assert p90.low < p90.estimate < p90.high and p90.units >= MIN_UNITS
    diff = sig.difference("fcfs+easy", "sjf+easy", "wait", "p90")
    assert diff.estimate == pytest.approx(
        p90.estimate - sig.interval("sjf+easy", "wait", "p90").estimate
    )
    assert diff.low < diff.estimate < diff.high and 0 < diff.p_value <= diff.p_holm <= 1
    worst = sig.interval("fcfs+easy", "wait", "max")
    assert worst.estimate == pytest.approx(report.value("wait", "max"))
    assert (worst.low, worst.high, worst.reason) == (None, None, EXTREME_STAT_REASON)
    spread = sig.interval("fcfs+easy", "wait", "std")  # a plugin statistic
    assert spread.low is None and "only the mean and percentiles" in spread.reason
    assert spread.estimate == pytest.approx(
        np.std(schedules["fcfs+easy"].workload.to_arrays()["wait_time"], ddof=1)
    )
    assert sig.stats == ["p90", "median", "max", "std"]
    assert [r.stat for r in sig.ranks] == ["p90", "median"]  # max has no ranking


# ----------------------------------------------------------- one real trace


def test_utilization_interval_on_a_real_trace(schedules):
    sig = block_significance(
        schedules, metrics=["utilization", "wait"], stats="mean", window="2d", rank_window="7d"
    )
    assert sig.metrics == ["utilization", "wait"]
    for policy, result in schedules.items():
        item = sig.interval(policy, "utilization")
        assert item.stat == "value"
        # The point estimate is the reported utilization: the blocks only split it.
        assert item.estimate == pytest.approx(compute_metrics(result).value("utilization"))
        assert item.low < item.estimate < item.high and item.reason == ""
        assert item.units == 29  # every 2-day window of the 57 days, idle ones too
    diff = sig.difference("fcfs+easy", "sjf+easy", "utilization")
    assert diff.units == 29 and diff.low <= diff.estimate <= diff.high
    assert diff.p_value is not None and diff.p_holm is not None
    # Holm covers every test of the table: 2 here (utilization and wait).
    p = [d.p_value for d in sig.differences]
    assert sorted(d.p_holm for d in sig.differences) == pytest.approx(
        sorted([min(1, 2 * min(p)), max(min(1, 2 * min(p)), max(p))])
    )
    ranks = next(r for r in sig.ranks if r.metric == "utilization")
    assert ranks.stat == "value"
    for window in ranks.windows:  # higher utilization ranks first
        best = max(window.values.values())
        assert {q for q, r in window.ranks.items() if r == 1} == {
            q for q, v in window.values.items() if v == best
        }
    again = block_significance(
        schedules, metrics=["utilization", "wait"], stats="mean", window="2d", rank_window="7d"
    )
    assert again.to_json() == sig.to_json()  # deterministic for a seed


def test_makespan_has_no_interval_and_says_why(schedules):
    sig = block_significance(schedules, metrics=["makespan", "wait"], window="2d", resamples=200)
    item = sig.interval("sjf+easy", "makespan")
    expected = compute_metrics(schedules["sjf+easy"], "makespan").value("makespan")
    assert item.estimate == pytest.approx(expected)
    assert (item.low, item.high, item.units) == (None, None, 0)
    assert item.reason == EXTREME_REASON
    assert EXTREME_REASON == "an extreme of the whole schedule has no block-bootstrap interval"
    diff = sig.difference("fcfs+easy", "sjf+easy", "makespan")
    assert (diff.p_value, diff.p_holm, diff.significant) == (None, None, None)
    assert diff.reason == EXTREME_REASON and diff.estimate is not None
    assert all(r.metric != "makespan" for r in sig.ranks)
    text = "\n".join(t.plain for t in sig.tables() if hasattr(t, "plain"))
    assert f"no interval of makespan: {EXTREME_REASON}" in text


def test_default_assesses_every_column_of_the_comparison_table(schedules):
    sig = block_significance(schedules, window="2d", rank_window="7d", resamples=200)
    assert sig.metrics == [
        "wait",
        "bounded-slowdown",
        "utilization",
        "loss-of-capacity",
        "fairness",
        "makespan",
    ]
    assert sig.stats == ["mean", "p90"]
    with_interval = {(i.metric, i.stat) for i in sig.intervals if i.low is not None}
    assert with_interval == {
        ("wait", "mean"),
        ("wait", "p90"),
        ("bounded-slowdown", "mean"),
        ("bounded-slowdown", "p90"),
        ("utilization", "value"),
        ("loss-of-capacity", "value"),
    }
    fairness = sig.interval("fcfs+easy", "fairness")
    assert "MetricSpec.aggregation" in fairness.reason and fairness.estimate is not None


def test_a_machine_size_is_needed_for_utilization(schedules):
    workload = schedules["fcfs+easy"].workload  # no procs given, but the header has it
    sig = block_significance(
        {"a": workload, "b": workload}, metrics=["utilization"], window="2d", resamples=200
    )
    assert sig.interval("a", "utilization").low is not None
    columns = workload.to_arrays()  # bare columns: no machine size
    sig = block_significance(
        {"a": columns, "b": columns}, metrics=["utilization"], window="2d", resamples=200
    )
    item = sig.interval("a", "utilization")
    assert item.estimate is None and item.low is None and "machine size" in item.reason


# ----------------------------------------------------------- third-party metrics


def _plugin(*specs: MetricSpec) -> types.ModuleType:
    module = types.ModuleType("third_party_metrics")

    @schedlab.hookimpl
    def schedlab_metrics():
        return list(specs)

    module.schedlab_metrics = schedlab_metrics
    return module


#: A made-up busy share that varies over time: 0.5 + 0.25 sin(t / _PERIOD).
_PERIOD = 86400.0


def _busy_integral(a, b):
    """The busy share integrated from ``a`` to ``b``: additive over windows."""
    return 0.5 * (b - a) + 0.25 * _PERIOD * (np.cos(a / _PERIOD) - np.cos(b / _PERIOD))


def _busy_share(columns, **_):
    # Consistent with its window terms (block_significance checks it): the same
    # integral over the schedule's period, first submission to last end.
    submit = columns["submit_time"]
    end = submit + columns["wait_time"] + columns["run_time"]
    timed = ~np.isnan(end)
    first, last = float(submit[timed].min()), float(end[timed].max())
    return float(_busy_integral(first, last) / (last - first))


def _busy_share_terms(columns, edges, **_):
    return _busy_integral(edges[:-1], edges[1:]), np.diff(edges)


def test_third_party_metrics_declare_how_they_combine(schedules):
    registry = build_registry(
        plugins=[
            (
                "third",
                _plugin(
                    MetricSpec(name="undeclared", compute=lambda c, **_: 1.0),
                    MetricSpec(name="spread", compute=lambda c, **_: 2.0, aggregation="extreme"),
                    MetricSpec(
                        name="share",
                        compute=_busy_share,
                        aggregation="ratio",
                        window_terms=_busy_share_terms,
                        better="higher",
                    ),
                ),
            )
        ]
    )
    sig = block_significance(
        schedules,
        metrics=["undeclared", "spread", "share"],
        window="2d",
        resamples=200,
        registry=registry,
    )
    undeclared = sig.interval("fcfs+easy", "undeclared")
    assert undeclared.estimate == 1.0 and undeclared.low is None
    assert undeclared.reason == (
        "undeclared does not declare how it combines over time windows "
        "(MetricSpec.aggregation), so it has no block-bootstrap interval"
    )
    assert sig.interval("fcfs+easy", "spread").reason == EXTREME_REASON
    share = sig.interval("fcfs+easy", "share")
    assert share.low is not None and share.low < share.estimate < share.high
    assert share.units == 29


def test_metric_spec_checks_its_aggregation():
    def compute(columns, **_):
        return 1.0

    with pytest.raises(ValueError, match="aggregation"):
        MetricSpec(name="x", compute=compute, aggregation="median")
    with pytest.raises(ValueError, match="window_terms is required"):
        MetricSpec(name="x", compute=compute, aggregation="ratio")
    with pytest.raises(ValueError, match="window_terms is required"):
        MetricSpec(name="x", compute=compute, window_terms=_busy_share_terms)
    with pytest.raises(ValueError, match="per_job=True"):
        MetricSpec(name="x", compute=compute, aggregation="mean")
    with pytest.raises(ValueError, match="scalar"):
        MetricSpec(name="x", compute=compute, per_job=True, aggregation="extreme")
    assert MetricSpec(name="x", compute=compute, per_job=True).combines_as == "mean"
    assert MetricSpec(name="x", compute=compute).combines_as == ""


def test_builtin_system_metrics_declare_their_aggregation():
    registry = get_registry()
    assert registry.metric("utilization").aggregation == "ratio"
    assert registry.metric("loss-of-capacity").aggregation == "ratio"
    assert registry.metric("throughput").aggregation == "ratio"
    assert registry.metric("makespan").aggregation == "extreme"
    assert registry.metric("wait").combines_as == "mean"


# ----------------------------------------------------------- across seeds


def test_whole_schedule_metrics_get_intervals_across_seeds(tmp_path):
    """Generated workloads: every seed is one unit, so utilization and the makespan
    get intervals like the per-job means (a sweep's ``value`` rows)."""
    args = ["sweep", "-w", "psp-fing:scenario=CF,jobs=200", "-p", "fcfs,sjf", "--seeds", "1-10"]
    args += ["-m", "wait,utilization,makespan", "--out", str(tmp_path), "--no-progress"]
    args += ["--ci", "--workers", "1"]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    sig = json.loads((tmp_path / "significance.json").read_text())["psp-fing:scenario=CF,jobs=200"]
    by_key = {(i["policy"], i["metric"]): i for i in sig["intervals"]}
    for metric, stat in (("wait", "mean"), ("utilization", "value"), ("makespan", "value")):
        item = by_key[("fcfs+easy", metric)]
        assert item["stat"] == stat and item["units"] == 10 and item["reason"] == ""
        assert item["low"] <= item["estimate"] <= item["high"]
    makespan = next(d for d in sig["differences"] if d["metric"] == "makespan")
    assert makespan["units"] == 10 and makespan["p_value"] is not None


def test_seed_intervals_of_a_makespan_cover_a_known_mean():
    rng = np.random.default_rng(11)
    values = {
        "a": {"makespan": list(1000 + rng.normal(0, 10, 30))},
        "b": {"makespan": list(1000 + rng.normal(0, 10, 30))},
    }
    sig = seed_significance(values, stats={"makespan": "value"})
    item = sig.interval("a", "makespan")
    assert item.stat == "value" and item.low < 1000 < item.high


# ----------------------------------------------------------- CLI


def test_compare_ci_stat_and_whole_schedule_metrics(swf_dir, capsys):
    args = ["compare", str(swf_dir / HPC2N), "-p", "fcfs,sjf", "--ci", "--block", "2d"]
    args += ["--rank-window", "7d", "--resamples", "200", "-m", "wait,utilization,makespan"]
    args += ["--stat", "mean,p95"]
    out = CliRunner().invoke(cli, [*args, "--json"])
    assert out.exit_code == 0, out.output
    sig = json.loads(out.output)["significance"]
    assert sig["metrics"] == ["wait", "utilization", "makespan"]
    assert sig["stats"] == ["mean", "p95"]
    assert [(i["metric"], i["stat"]) for i in sig["intervals"][::2]] == [
        ("wait", "mean"),
        ("wait", "p95"),
        ("utilization", "value"),
        ("makespan", "value"),
    ]
    assert CliRunner().invoke(cli, [*args, "--json"]).output == out.output  # byte for byte
    text = CliRunner().invoke(cli, args, terminal_width=200)
    assert text.exit_code == 0, text.output
    assert f"note: no interval of makespan: {EXTREME_REASON}" in text.output
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--stat", "p101"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "schedlab: error: statistic 'p101': a percentile is between p0 and p100"
    ]
