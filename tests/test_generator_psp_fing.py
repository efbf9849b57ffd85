"""The psp-fing generator: the paper's Cluster FING model, its scenarios, determinism
and the SWF round trip."""

from __future__ import annotations

import math

import numpy as np
import pytest
import schedlab
from schedlab.errors import UsageError
from schedlab.formats import psp_fing
from schedlab.formats.psp_fing import SCENARIOS, generate, improve, quota_counts

STREAM_FIELDS = ("submit_time", "run_time", "requested_processors", "user_id")


@pytest.fixture(scope="module")
def workloads():
    """Every scenario for seed 3."""
    return {s: generate(scenario=s, seed=3) for s in SCENARIOS}


def test_model_facts_of_section_5(workloads):
    c = workloads["CF"].to_arrays()
    assert len(c) == 1000
    assert set(np.unique(c["user_id"]).astype(int)) == set(range(1, 21))
    cores = c["requested_processors"]
    assert set(np.unique(cores).astype(int)) <= {1, 2, 4, 8, 16}
    assert np.array_equal(cores, c["allocated_processors"])
    # 44.2 % sequential and 49.3 % under a minute, within sampling error of 1000 jobs.
    assert abs((cores == 1).mean() - 0.442) < 0.05
    assert abs((c["run_time"] < 60).mean() - 0.493) < 0.05
    assert c["run_time"].min() >= 1 and c["run_time"].max() <= 10 * 86400
    assert np.all(c["requested_time"] >= c["run_time"])
    assert np.all(c["requested_time"] <= 10 * 86400)
    assert np.all(np.diff(c["submit_time"]) >= 0) and c["submit_time"][0] == 0
    assert np.isnan(c["wait_time"]).all()
    assert workloads["CF"].header.max_procs == 32
    assert workloads["CF"].header.max_runtime == 864000


def test_offered_load_matches_the_option():
    c = generate(seed=4, load=0.7, procs=64).to_arrays()
    work = float(np.sum(c["run_time"] * c["requested_processors"]))
    span = c["submit_time"].max()
    # The last of n uniform arrivals lands close to the span: load within a few %.
    assert work / (64 * span) == pytest.approx(0.7, rel=0.05)


def test_scenarios_of_one_seed_share_their_jobs(workloads):
    base = workloads["CF"].to_arrays()
    for scenario, workload in workloads.items():
        c = workload.to_arrays()
        for field in STREAM_FIELDS:
            assert np.array_equal(c[field], base[field]), (scenario, field)
    # ... and differ only in the requested times.
    assert not np.array_equal(
        workloads["BE"].to_arrays()["requested_time"], workloads["GE"].to_arrays()["requested_time"]
    )


def test_same_options_same_workload_other_seed_other_workload():
    a = generate(scenario="HDI", seed=11).to_arrays()
    b = generate(scenario="HDI", seed=11).to_arrays()
    c = generate(scenario="HDI", seed=12).to_arrays()
    for field in schedlab.SWF_FIELDS:
        assert np.array_equal(a[field], b[field], equal_nan=True)
    assert not np.array_equal(a["run_time"], c["run_time"])


def test_swf_round_trip_and_identical_bytes(tmp_path):
    workload = schedlab.read("psp-fing:scenario=DI,seed=2")
    first = schedlab.write(workload, tmp_path / "a.swf")
    again = schedlab.write(schedlab.read("psp-fing:scenario=DI,seed=2"), tmp_path / "b.swf")
    assert first.read_bytes() == again.read_bytes()
    back = schedlab.read(first)
    original, read_back = workload.to_arrays(), back.to_arrays()
    for field in schedlab.SWF_FIELDS:
        assert np.array_equal(original[field], read_back[field], equal_nan=True), field
    assert back.header.max_procs == 32
    notes = back.header.notes
    assert notes[0].startswith("psp-fing scenario DI seed 2")
    assert len(notes) == 21  # one per user
    assert "improves yes" in notes[1]


def test_generator_is_a_plugin_usable_as_a_source(registry):
    spec = registry.generator("psp-fing")
    assert {o.name for o in spec.options} >= {"scenario", "seed", "jobs", "users", "procs"}
    w = schedlab.read("psp-fing:scenario=cfg,seed=5,jobs=200", registry=registry)
    assert len(w) == 200
    assert w.meta["options"]["scenario"] == "CFG"
    assert w.meta["source"] == "psp-fing:scenario=CFG,seed=5,jobs=200"


def test_quota_counts_follow_the_papers_shares():
    assert quota_counts(psp_fing.CF_SHARES, 20) == [4, 4, 4, 3, 4, 1]
    assert quota_counts(psp_fing.CFG_SHARES, 20) == [2, 2, 2, 2, 2, 10]
    # 117 x shares = 24.57 24.57 21.06 19.89 22.23 4.68: the three largest remainders
    # (g4, g6, then g1 before g2 on the tie) get the 3 users left.
    assert quota_counts(psp_fing.CF_SHARES, 117) == [25, 24, 21, 20, 22, 5]
    assert sum(quota_counts(psp_fing.CFG_SHARES, 7)) == 7


@pytest.mark.parametrize(
    ("scenario", "low", "high"),
    [("BE", 0.0, 0.2), ("GE", 0.8, 1.0)],
)
def test_be_and_ge_users_are_in_their_range(workloads, scenario, low, high):
    users = workloads[scenario].meta["users"]
    accuracies = [u["accuracy"] for u in users]
    assert all(low <= a <= high for a in accuracies)
    assert all(not u["improves"] for u in users)
    assert all(u["accuracy"] == u["final_accuracy"] for u in users)


@pytest.mark.parametrize(
    ("scenario", "counts"), [("CF", [4, 4, 4, 3, 4, 1]), ("CFG", [2, 2, 2, 2, 2, 10])]
)
def test_cf_and_cfg_users_are_spread_over_the_groups(workloads, scenario, counts):
    users = workloads[scenario].meta["users"]
    got = [sum(u["group"] == f"g{k}" for u in users) for k in range(1, 7)]
    assert got == counts
    for u in users:
        low, high = psp_fing.GROUP_BOUNDS[int(u["group"][1]) - 1]
        assert low <= u["accuracy"] <= high


def test_learning_rule_golden_values():
    assert improve(0.0) == pytest.approx(0.1)
    assert improve(0.2) == pytest.approx(0.28)
    assert improve(0.5) == pytest.approx(0.55)  # <= 0.5 uses (1 - accuracy) x 0.1
    assert improve(0.6) == pytest.approx(0.66)  # > 0.5 uses accuracy x 0.1
    assert improve(0.95) == 1.0  # capped
    assert improve(1.0) == 1.0


def test_di_users_improve_every_five_jobs_exactly():
    # Without per-job variation, a job's accuracy is its user's accuracy after
    # floor(k / 5) learning steps, k = the user's earlier submissions.
    w = generate(scenario="DI", seed=8, accuracy_concentration=math.inf)
    c = w.to_arrays()
    checked = 0
    for info in w.meta["users"]:
        rows = np.flatnonzero(c["user_id"] == info["user"])
        expected = info["accuracy"]
        for k, row in enumerate(rows):
            if k and k % 5 == 0:
                expected = improve(expected)
            run, req = c["run_time"][row], c["requested_time"][row]
            if run >= 600 and req < 864000:  # not dominated by rounding, not capped
                assert run / req == pytest.approx(expected, rel=2e-3, abs=1e-3)
                checked += 1
        # The reported final accuracy is the one after the user's last step.
        assert info["final_accuracy"] == pytest.approx(expected, abs=1e-4)
    assert checked > 100


@pytest.mark.parametrize("scenario", ["CF", "BE"])
def test_users_who_do_not_learn_keep_their_accuracy_on_every_job(scenario):
    # Without per-job variation every job of a non-learning user has its accuracy.
    w = generate(scenario=scenario, seed=4, accuracy_concentration=math.inf)
    c = w.to_arrays()
    checked = 0
    for info in w.meta["users"]:
        assert not info["improves"]
        rows = np.flatnonzero(c["user_id"] == info["user"])
        run, req = c["run_time"][rows], c["requested_time"][rows]
        usable = (run >= 600) & (req < 864000)  # not dominated by rounding, not capped
        assert run[usable] / req[usable] == pytest.approx(info["accuracy"], rel=2e-3, abs=1e-3)
        checked += int(usable.sum())
    assert checked > 100


def test_hdi_half_of_the_users_learn_and_both_halves_span_the_accuracies():
    users = generate(scenario="HDI", seed=6).meta["users"]
    learners = [u for u in users if u["improves"]]
    assert len(learners) == 10
    ranked = sorted(users, key=lambda u: u["accuracy"])
    for pair in zip(ranked[::2], ranked[1::2], strict=True):
        assert sum(u["improves"] for u in pair) == 1
    # HDI starts from the same accuracies as CF (and DI): only the learning differs.
    cf = generate(scenario="CF", seed=6).meta["users"]
    assert [u["accuracy"] for u in users] == [u["accuracy"] for u in cf]


def test_static_scenarios_measure_close_to_their_users_accuracy(workloads):
    c = workloads["GE"].to_arrays()
    accuracy = c["run_time"] / c["requested_time"]
    for info in workloads["GE"].meta["users"]:
        mine = accuracy[c["user_id"] == info["user"]]
        # Beta variation around the user's accuracy, mean preserved (jobs < 10 s are
        # coarsened by whole-second requests).
        assert mine.mean() == pytest.approx(info["accuracy"], abs=0.08)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"scenario": "XX"}, "scenario"),
        ({"max_cores": 12}, "power of two"),
        ({"max_cores": 64}, "exceeds procs"),
        ({"sequential": 1.5}, "sequential"),
        ({"queue_limit": 3600}, "queue_limit"),
        ({"dynamic_base": "DI"}, "dynamic_base"),
        ({"colour": "red"}, "unknown option"),
        ({"jobs": "0"}, "jobs"),
    ],
)
def test_bad_options_are_one_line_usage_errors(options, message):
    with pytest.raises(UsageError, match=message) as info:
        generate(**options)
    assert "\n" not in str(info.value)


def test_cli_accepts_a_generator_spec_as_the_trace():
    from click.testing import CliRunner
    from schedlab.cli import cli

    result = CliRunner().invoke(
        cli,
        ["compare", "psp-fing:scenario=CF,seed=1,jobs=300", "-p", "fcfs+easy,psp+easy", "--json"],
    )
    assert result.exit_code == 0, result.output
    import json

    rows = json.loads(result.output)["rows"]
    assert [(r["policy"], r["backfill"], r["jobs"]) for r in rows] == [
        ("fcfs", "easy", 300),
        ("psp", "easy", 300),
    ]
