"""Confidence intervals, paired tests and rank stability (schedlab.significance)."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from schedlab import read, simulate
from schedlab.cli import cli, main
from schedlab.errors import UsageError
from schedlab.significance import (
    MIN_UNITS,
    block_significance,
    holm,
    mean_interval,
    paired_difference,
    parse_window,
    seed_significance,
    sweep_significance,
)

pytest.importorskip("scipy")

HPC2N = "HPC2N-2002_excerpt-3170jobs_alea.swf"  # 3,170 jobs over 57 days


@pytest.fixture(scope="module")
def schedules(swf_dir):
    workload = read(str(swf_dir / HPC2N))
    return {f"{p}+easy": simulate(workload, policy=p, backfill="easy") for p in ("fcfs", "sjf")}


# ------------------------------------------------------------------ calibration


def _synthetic(seed: int, reps: int = 400, blocks: int = 52):
    """``reps`` independent traces of ``blocks`` weekly blocks: block sums and job
    counts of a policy A (true mean 100, weekly load effects shared by every job of a
    week), B = A + 5 per job (true difference 5) and C = A + noise (no difference)."""
    rng = np.random.default_rng(seed)
    n = (rng.poisson(30, size=(reps, blocks)) + 1).astype(np.float64)
    week = rng.normal(0, 20, size=(reps, blocks))
    a = n * 100.0 + n * week + np.sqrt(n) * 50 * rng.standard_normal((reps, blocks))
    b = a + n * 5.0 + np.sqrt(n) * 30 * rng.standard_normal((reps, blocks))
    c = a + np.sqrt(n) * 30 * rng.standard_normal((reps, blocks))
    return n, a, b, c


def test_calibration_coverage_and_false_positives():
    """400 seeded repetitions at once (the leading axis is a batch): 95% intervals
    cover the true mean and the true differences (5 and 0) in 93-97% of them, the
    Wilcoxon test rejects a true null in at most 6% and a real difference always."""
    n, a, b, c = _synthetic(seed=1)
    _, low, high = mean_interval(a, n, rng=1)
    coverage = np.mean((low <= 100.0) & (100.0 <= high))
    assert 0.93 <= coverage <= 0.97, coverage
    _, low, high, p = paired_difference(b, n, a, n, rng=1)
    assert 0.93 <= np.mean((low <= 5.0) & (5.0 <= high)) <= 0.97
    assert np.mean(p < 0.05) >= 0.99  # a real difference of 5 is found
    _, low, high, p = paired_difference(c, n, a, n, rng=1)
    assert 0.93 <= np.mean((low <= 0.0) & (0.0 <= high)) <= 0.97
    assert np.mean(p < 0.05) <= 0.06  # false-positive rate with no difference


def test_holm_known_values():
    # m = 4: sorted 0.01*4, 0.02*3, 0.03*2, 0.04*1 -> 0.04, 0.06, 0.06 (monotone), 0.06
    assert holm([0.03, 0.01, None, 0.04, 0.02]) == pytest.approx([0.06, 0.04, None, 0.06, 0.06])
    assert holm([0.9, 0.8]) == [1.0, 1.0]
    assert holm([]) == []


def test_parse_window():
    assert parse_window("7d") == 7 * 86400
    assert parse_window("2w") == 14 * 86400
    assert parse_window("90min") == 5400
    assert parse_window(3600) == 3600
    for bad in ("0d", "week", "-1h"):
        with pytest.raises(UsageError, match="window"):
            parse_window(bad)


# ------------------------------------------------------------------ one real trace


def test_block_significance_on_a_real_trace(schedules):
    sig = block_significance(
        schedules, ["wait", "bounded-slowdown"], "2d", rank_window="7d", resamples=500, stats="mean"
    )
    assert sig.unit == "block" and sig.policies == ["fcfs+easy", "sjf+easy"]
    assert sig.metrics == ["wait", "bounded-slowdown"]
    for policy, result in schedules.items():
        wait = result.workload.to_arrays()["wait_time"]
        item = sig.interval(policy, "wait")
        # The point estimate is the plain mean over the jobs: blocks only regroup them.
        assert item.estimate == pytest.approx(np.nanmean(wait))
        assert item.low < item.estimate < item.high
        assert item.units >= MIN_UNITS and item.reason == ""
    diff = sig.difference("fcfs+easy", "sjf+easy", "wait")
    assert diff.estimate == pytest.approx(
        sig.interval("fcfs+easy", "wait").estimate - sig.interval("sjf+easy", "wait").estimate
    )
    assert diff.low < diff.estimate < diff.high
    assert 0.0 <= diff.p_value <= diff.p_holm <= 1.0
    assert diff.significant == (diff.p_holm < 0.05)
    ranks = sig.ranks[0]
    assert ranks.metric == "wait"
    assert sum(ranks.firsts.values()) >= len(ranks.windows)  # ties count for each
    assert sum(w.jobs for w in ranks.windows) == len(schedules["fcfs+easy"].workload)
    for window in ranks.windows:
        best = min(window.values.values())
        assert {p for p, r in window.ranks.items() if r == 1} == {
            p for p, v in window.values.items() if v == best
        }
        assert window.tau in (-1.0, 1.0, None)  # two policies: agree or swap
    # Deterministic for a seed, different for another.
    again = block_significance(
        schedules, ["wait", "bounded-slowdown"], "2d", rank_window="7d", resamples=500, stats="mean"
    )
    assert again.to_json() == sig.to_json()
    other = block_significance(
        schedules,
        ["wait", "bounded-slowdown"],
        "2d",
        rank_window="7d",
        resamples=500,
        stats="mean",
        seed=1,
    )
    assert other.to_json() != sig.to_json()


def test_too_few_blocks_gives_no_interval_and_says_why(schedules):
    sig = block_significance(schedules, window="7d", resamples=200)  # 57 days: 9 blocks
    item = sig.interval("sjf+easy", "wait")
    assert item.low is None and item.high is None and item.estimate is not None
    assert item.reason == f"only 9 blocks with values (at least {MIN_UNITS} are needed)"
    diff = sig.differences[0]
    assert diff.p_value is None and diff.significant is None and "only 9 blocks" in diff.reason


def test_window_longer_than_the_trace_is_a_one_line_error(schedules):
    with pytest.raises(UsageError, match=r"block '90d' is longer than the trace \(57.3 days"):
        block_significance(schedules, window="90d")


def test_whole_schedule_metric_gets_a_block_interval(schedules):
    # Utilization is a ratio of sums over time windows (tests/test_significance_schedule.py).
    sig = block_significance(
        schedules, metrics=["utilization", "wait"], stats="mean", window="2d", resamples=200
    )
    assert sig.metrics == ["utilization", "wait"]
    assert sig.interval("fcfs+easy", "utilization").low is not None


# ------------------------------------------------------------------ seeds


def test_seed_significance():
    rng = np.random.default_rng(7)
    base = rng.normal(1000, 100, size=12)
    values = {
        "fcfs": {"wait": list(base + 200 + rng.normal(0, 10, 12))},
        "sjf": {"wait": list(base)},
    }
    sig = seed_significance(values, resamples=500)
    diff = sig.difference("fcfs", "sjf", "wait")
    assert diff.units == 12 and diff.significant
    fcfs, sjf = np.array(values["fcfs"]["wait"]), np.array(values["sjf"]["wait"])
    assert diff.estimate == pytest.approx(np.mean(fcfs - sjf))
    assert 150 < diff.low < diff.estimate < diff.high < 250
    assert sig.ranks[0].firsts == {"fcfs": 0, "sjf": 12}
    assert sig.ranks[0].mean_tau == 1.0
    few = seed_significance({k: {"wait": v["wait"][:5]} for k, v in values.items()})
    assert few.interval("sjf", "wait").reason == "only 5 seeds with values (at least 10 are needed)"
    with pytest.raises(UsageError, match="same seeds"):
        seed_significance({"a": {"wait": [1.0, 2.0]}, "b": {"wait": [1.0]}})


def test_missing_scipy_names_the_extra(monkeypatch):
    from schedlab.significance import scipy_stats

    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.stats", None)
    with pytest.raises(UsageError, match=r"pip install 'schedlab\[stats\]'"):
        scipy_stats()


# ------------------------------------------------------------------ CLI


def test_compare_ci_json(swf_dir):
    args = ["compare", str(swf_dir / HPC2N), "-p", "fcfs+easy,sjf+easy", "--ci"]
    args += ["--block", "2d", "--rank-window", "7d", "--resamples", "200", "--json", "-m", "wait"]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    sig = data["significance"]
    assert sig["metrics"] == ["wait"] and sig["resamples"] == 200
    assert sig["stats"] == ["mean", "p90"]  # the comparison table's, by default
    assert [(d["first"], d["stat"]) for d in sig["differences"]] == [
        ("fcfs+easy", "mean"),
        ("fcfs+easy", "p90"),
    ]
    assert CliRunner().invoke(cli, args).output == out.output  # byte for byte


def test_compare_ci_window_too_long_exits_2(swf_dir, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", str(swf_dir / HPC2N), "-p", "fcfs,sjf", "--ci", "--block", "9w"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines() == [
        "schedlab: error: block '9w' is longer than the trace (57.3 days between the "
        "first and the last submission)"
    ]


def test_sweep_significance_pairs_seeds_by_number():
    rows = []
    for seed in range(1, 13):
        for policy, wait in (("fcfs", 1000.0 + 10 * seed), ("sjf", 500.0 + 12 * seed)):
            common = {"workload": "gen", "policy": policy, "backfill": "easy", "seed": seed}
            rows.append({**common, "group": "all", "metric": "wait", "stat": "mean", "value": wait})
            rows.append({**common, "group": "all", "metric": "wait", "stat": "p90", "value": 0.0})
            rows.append(
                {**common, "group": "all", "metric": "utilization", "stat": "value", "value": 0.5}
            )
    rows.append({**rows[0], "seed": 13})  # a seed only fcfs finished: left out
    sig = sweep_significance(reversed(rows), metrics=["wait", "utilization"])["gen"]
    diff = sig.difference("fcfs+easy", "sjf+easy", "wait")
    assert diff.units == 12
    assert diff.estimate == pytest.approx(np.mean([500 - 2 * s for s in range(1, 13)]))
    assert diff.significant
    same = sig.difference("fcfs+easy", "sjf+easy", "utilization")
    assert same.p_value == 1.0 and not same.significant
    assert [w.label for w in sig.ranks[0].windows][:2] == ["seed 1", "seed 2"]


def test_sweep_ci_writes_significance_json(tmp_path):
    args = ["sweep", "-w", "psp-fing:scenario=CF,jobs=200", "-p", "fcfs,sjf", "--seeds", "1-10"]
    args += ["-m", "wait", "--out", str(tmp_path), "--no-progress", "--ci", "--workers", "1"]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    data = json.loads((tmp_path / "significance.json").read_text())
    sig = data["psp-fing:scenario=CF,jobs=200"]
    assert sig["unit"] == "seed" and sig["differences"][0]["units"] == 10


def test_compare_ci_plot_writes_both_figures(swf_dir, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "cmp.png"
    args = ["compare", str(swf_dir / HPC2N), "-p", "fcfs,sjf", "--ci", "--block", "2d"]
    args += ["--rank-window", "7d", "--resamples", "200", "--plot", str(target)]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    assert f"wrote {tmp_path / 'cmp-ci.png'}" in out.output
    assert (tmp_path / "cmp-ci.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
