"""The tsafrir-estimates model: the histogram's published structure (head values,
shares, number of values), the modal statistics the paper reports, estimate >= run
time, the assignment against a plain sequential reference, the generator wrapper on
real traces, and bad options."""

from __future__ import annotations

import random

import numpy as np
import pytest
import schedlab
from schedlab.errors import UsageError
from schedlab.formats import tsafrir_estimates as T

H, M = 3600, 60


def test_head_values_follow_the_models_construction():
    # 18 h maximum: the 14 joint values below it, then multiples of 5 h, 2 h, 1 h
    # counted down from 18 h until there are 20.
    assert T.head_values(18 * H) == [
        18 * H, 5 * M, 10 * M, 15 * M, 20 * M, 30 * M, 1 * H, 2 * H, 3 * H, 4 * H, 5 * H,
        6 * H, 8 * H, 10 * H, 12 * H, 13 * H, 14 * H, 15 * H, 16 * H, 17 * H,
    ]  # fmt: skip
    # One hour: the joint values below it, then every 5 minutes (12 values only).
    assert T.head_values(H) == [H, *range(5 * M, H, 5 * M)]


def test_number_of_values_is_the_published_piecewise_line():
    assert [T.default_bins(n) for n in (20, 200, 1000, 10_000, 70_000, 250_000)] == [
        10, 20, 35, 90, 340, 565,
    ]  # fmt: skip
    assert T.default_bins(5_500) == 35 + round(4_500 * 55 / 9_000)
    assert T.default_bins(10**6) == 565


def test_histogram_shares():
    n = 100_000
    hist = T.histogram(n, 18 * H, seed=3)
    assert sum(hist.values()) == n
    assert len(hist) == T.default_bins(n)
    counts = sorted(hist.values(), reverse=True)
    # The maximum is the most popular value: 89 % minus ranks 2..20 of the
    # exponential head model = 21.73 %.
    ranks = np.arange(2, 21)
    expected_max = 0.89 - np.sum(14.0491 * np.exp(-0.177531 * ranks) + 0.462513) / 100
    assert hist[18 * H] == counts[0]
    assert hist[18 * H] / n == pytest.approx(expected_max, abs=2 / n)
    # "About 20 values are used for about 90 % of the jobs": the head holds 89 %.
    assert sum(counts[:20]) / n == pytest.approx(0.89, abs=20 / n)
    # Head shares by popularity rank, as published.
    shares = np.array(counts[1:20]) / n
    assert np.allclose(shares, (14.0491 * np.exp(-0.177531 * ranks) + 0.462513) / 100, atol=2 / n)
    assert max(hist) == 18 * H and min(hist) > 0


def test_max_share_option_rescales_the_head():
    hist = T.histogram(50_000, 36 * H, seed=1, max_share=0.4)
    counts = sorted(hist.values(), reverse=True)
    assert hist[36 * H] / 50_000 == pytest.approx(0.4, abs=1e-4)
    assert sum(counts[:20]) / 50_000 == pytest.approx(0.89, abs=1e-3)


@pytest.fixture(scope="module")
def lublin_jobs():
    return schedlab.read("lublin:jobs=200000,seed=8,estimates=tsafrir").to_arrays()


def test_estimates_on_a_lublin_workload(lublin_jobs):
    run, est = lublin_jobs["run_time"], lublin_jobs["requested_time"]
    assert np.all(est >= run)
    values, counts = np.unique(est, return_counts=True)
    order = np.argsort(-counts)
    assert values[order[0]] == est.max() == 48 * H  # longest run 45 h -> 48 h
    assert counts[order[0]] / len(est) == pytest.approx(0.2173, abs=0.001)
    assert counts[order[:20]].sum() / len(est) == pytest.approx(0.89, abs=0.001)
    assert len(values) == T.default_bins(200_000) == 502
    # Modes are round: the 20 most popular values are whole multiples of 5 minutes.
    assert np.all(values[order[:20]] % 300 == 0)


def test_deterministic_and_seeded():
    run = schedlab.read("lublin:jobs=3000,seed=2").to_arrays()["run_time"]
    a, _ = T.assign(run, seed=4)
    b, _ = T.assign(run, seed=4)
    c, _ = T.assign(run, seed=5)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def reference_assign(run: list[float], estimates: list[float], rng: random.Random) -> list[float]:
    """The paper's assignment, job by job: longest first, an estimate drawn uniformly
    among the remaining ones that are at least the run time."""
    order = sorted(range(len(run)), key=lambda i: -run[i])
    pool = sorted(estimates, reverse=True)
    out = [0.0] * len(run)
    for i in order:
        feasible = [k for k, e in enumerate(pool) if e >= run[i]]
        k = rng.choice(feasible)
        out[i] = pool.pop(k)
    return out


def test_assignment_matches_the_sequential_reference_in_distribution():
    rng = np.random.default_rng(0)
    run = np.floor(np.exp(rng.gamma(4.0, 1.5, 400)))
    run = np.minimum(run, 3 * H - 1)
    ours, ref = [], []
    py = random.Random(1)
    for rep in range(150):
        hist = T.histogram(len(run), 3 * H, seed=rep)
        pool = [float(v) for v, c in hist.items() for _ in range(c)]
        est, _ = T.assign(run, seed=rep, max_estimate=3 * H)
        assert sorted(est) == sorted(pool)  # the histogram, exactly, when feasible
        ours.append(est)
        ref.append(reference_assign(list(run), pool, py))
    ours_a, ref_a = np.array(ours), np.array(ref)
    assert np.all(ours_a >= run) and np.all(ref_a >= run)
    # Same distribution: per-job mean estimate and mean accuracy agree.
    assert np.mean(run / ours_a) == pytest.approx(np.mean(run / ref_a), rel=0.03)
    short = run < np.percentile(run, 25)
    assert ours_a[:, short].mean() == pytest.approx(ref_a[:, short].mean(), rel=0.05)
    longest = np.argsort(run)[-20:]
    assert ours_a[:, longest].mean() == pytest.approx(ref_a[:, longest].mean(), rel=0.05)


def test_jobs_longer_than_the_maximum_keep_their_run_time():
    run = np.array([10.0, 100.0, 5000.0, 4000.0] * 50)
    est, note = T.assign(run, seed=1, max_estimate=H)
    assert np.all(est >= run)
    assert np.all(est[run > H] == np.ceil(run[run > H] / M) * M)
    assert "100 jobs longer than the maximum" in note


@pytest.mark.realdata
def test_generator_wraps_a_trace_without_estimates(swf_dir):
    path = swf_dir / "lublin_256.swf"
    w = schedlab.read(f"tsafrir-estimates:base={path},seed=3")
    c = w.to_arrays()
    assert np.isnan(schedlab.read(path).to_arrays()["requested_time"]).all()
    assert np.all(c["requested_time"] >= c["run_time"])
    assert "10000 of 10000 jobs given an estimate" in w.header.notes[-1]
    assert w.meta["source"] == f"tsafrir-estimates:base={path},seed=3"


@pytest.mark.realdata
def test_generator_keeps_known_estimates_unless_replace(swf_dir):
    path = swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz"
    original = schedlab.read(path).to_arrays()
    kept = schedlab.read(f"tsafrir-estimates:base={path}").to_arrays()
    known = ~np.isnan(original["requested_time"])
    assert np.array_equal(kept["requested_time"][known], original["requested_time"][known])
    redone = schedlab.read(f"tsafrir-estimates:base={path},replace=yes").to_arrays()
    assert not np.array_equal(redone["requested_time"], original["requested_time"])
    ok = original["run_time"] >= 0
    assert np.all(redone["requested_time"][ok] >= redone["run_time"][ok])


def test_generator_wraps_a_generator_spec():
    w = schedlab.read("tsafrir-estimates:base=lublin:jobs=2000;procs=256;types=no,seed=2")
    c = w.to_arrays()
    plain = schedlab.read("lublin:jobs=2000,procs=256,types=no").to_arrays()
    assert np.array_equal(c["run_time"], plain["run_time"])
    assert np.all(c["requested_time"] >= c["run_time"])
    assert w.header.max_procs == 256


@pytest.mark.parametrize(
    ("spec", "option"),
    [
        ("tsafrir-estimates:base=lublin,max_share=2", "max_share"),
        ("tsafrir-estimates:base=lublin,max_estimate=600", "max_estimate"),
        ("tsafrir-estimates:base=lublin,bins=5", "bins"),
        ("tsafrir-estimates:base=lublin,head_share=0", "head_share"),
        ("tsafrir-estimates:base=lublin,head_share=0.3", "head_share"),
        ("tsafrir-estimates:base=lublin,time_shape=0.5", "time_shape"),
        ("tsafrir-estimates:base=lublin,replace=maybe", "replace"),
        ("tsafrir-estimates:seed=1", "base"),
    ],
)
def test_bad_options_are_one_line_usage_errors(spec, option):
    with pytest.raises(UsageError) as info:
        schedlab.read(spec)
    message = str(info.value)
    assert "\n" not in message and "tsafrir-estimates" in message and option in message
