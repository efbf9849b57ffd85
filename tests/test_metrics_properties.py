"""Property tests of the metrics on random workloads (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.measure import compute_metrics
from schedlab.metrics import fairness, job, system
from schedlab.model import Workload

NAN = float("nan")

maybe_time = st.one_of(st.just(NAN), st.floats(0, 1e6))
job_rows = st.lists(
    st.tuples(
        st.floats(0, 1e6),  # submit
        maybe_time,  # wait
        maybe_time,  # run
        st.integers(1, 64),  # processors
        maybe_time,  # requested
        st.one_of(st.just(NAN), st.integers(1, 6).map(float)),  # user
    ),
    min_size=1,
    max_size=40,
)


def workload_of(rows) -> Workload:
    columns = (np.array(c, dtype=float) for c in zip(*rows, strict=True))
    submit, wait, run, procs, req, user = columns
    return Workload.from_arrays(
        {
            "submit_time": submit,
            "wait_time": wait,
            "run_time": run,
            "allocated_processors": procs,
            "requested_time": req,
            "user_id": user,
        }
    )


@given(job_rows, st.floats(0.1, 1000))
def test_per_job_definitions(rows, threshold):
    c = workload_of(rows).to_arrays()
    wait, run = c["wait_time"], c["run_time"]
    response = job.response(c)
    known = ~np.isnan(wait + run)
    # response = wait + run, and unknown exactly when an input is unknown
    np.testing.assert_array_equal(np.isnan(response), ~known)
    np.testing.assert_allclose(response[known], (wait + run)[known])
    bsld = job.bounded_slowdown(c, threshold=threshold)
    assert np.all(bsld[known] >= 1.0)
    np.testing.assert_array_equal(np.isnan(bsld), ~known)
    sld = job.slowdown(c)
    positive = known & (run > 0)
    assert np.all(np.isnan(sld[~positive]))
    assert np.all(sld[positive] >= 1.0 - 1e-12)
    # the bounded slowdown never exceeds the plain slowdown
    assert np.all(bsld[positive] <= np.maximum(sld[positive], 1.0) * (1 + 1e-12))
    acc = job.accuracy(c)
    finite = acc[~np.isnan(acc)]
    assert np.all((finite >= 0) & (finite <= 1))


@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=50))
def test_jain_index_bounds(values):
    x = np.array(values)
    index = fairness.jain_index(x)
    assert 1 / len(x) - 1e-9 <= index <= 1 + 1e-9


@given(st.floats(0.001, 1e6), st.integers(1, 30))
def test_jain_index_equal_values_is_one(value, n):
    assert abs(fairness.jain_index(np.full(n, value)) - 1.0) < 1e-9


@settings(deadline=None)
@given(job_rows)
def test_used_plus_lost_capacity_never_exceeds_capacity(rows):
    w = workload_of(rows)
    c = w.to_arrays()
    procs = float(np.nansum(c["allocated_processors"]))  # a machine no schedule overfills
    try:
        used = system.utilization(c, procs=procs)
        lost = system.loss_of_capacity(c, procs=procs)
    except system.MetricUnavailable:
        return
    assert 0 <= used <= 1 + 1e-9
    assert 0 <= lost <= 1 + 1e-9
    assert used + lost <= 1 + 1e-9


@settings(deadline=None, max_examples=60)
@given(job_rows, st.sampled_from(["user", "size", "accuracy-class"]))
def test_groups_partition_the_jobs(rows, by):
    w = workload_of(rows)
    report = compute_metrics(w, names=["wait", "accuracy"], by=by)
    groups, total = report.rows[:-1], report.rows[-1]
    assert total["group"] == "all" and total["jobs"] == len(rows)
    assert sum(r["jobs"] for r in groups) == len(rows)
    for name in ("wait", "accuracy"):
        assert sum(r[name]["count"] for r in groups) == total[name]["count"]
        assert sum(r[name]["unknown"] for r in groups) == total[name]["unknown"]
        assert total[name]["count"] + total[name]["unknown"] == len(rows)
        for r in report.rows:
            block = r[name]
            if block["count"]:
                tol = 1e-9 * max(1.0, abs(block["max"]))
                assert block["median"] <= block["p90"] + tol
                assert block["p90"] <= block["p99"] + tol <= block["max"] + 2 * tol
                assert block["mean"] <= block["max"] + tol
            else:
                assert block["mean"] is None and block["max"] is None


@settings(deadline=None, max_examples=40)
@given(job_rows)
def test_report_is_deterministic(rows):
    w = workload_of(rows)
    a = compute_metrics(w, by="user", procs=64).to_json()
    b = compute_metrics(workload_of(rows), by="user", procs=64).to_json()
    assert a == b
