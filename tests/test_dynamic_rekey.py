"""Re-keying the queue of a dynamic policy: the numpy path (``key_array``, used
from ``ARRAY_REKEY_MIN`` waiting jobs on) gives the order the tuple path gives, and
``multifactor``'s ``calc_period`` recalculates priorities on a timer as Slurm's
``PriorityCalcPeriod`` does."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np
import pytest
import schedlab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedlab.errors import SimulationError, UsageError
from schedlab.policies.multifactor import Multifactor
from schedlab.policies.unicef import UNICEF
from schedlab.policies.wfp3 import WFP3
from schedlab.sim import engine
from workload_rows import workload_from_rows

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "swf"

#: (policy name, class, options): the built-in policies with ``key_array``.
POLICIES = [
    ("multifactor", Multifactor, {}),
    ("multifactor", Multifactor, {"weight_psp": 700.0, "favor_small": True, "half_life": 0.0}),
    ("multifactor", Multifactor, {"queue_priorities": "1:10,2:5", "max_age": 500.0}),
    ("wfp3", WFP3, {}),
    ("unicef", UNICEF, {}),
]


def starts(workload, policy, options, backfill="easy", **kw):
    result = schedlab.simulate(
        workload, policy=policy, backfill=backfill, policy_options=options, **kw
    )
    return [j.start_time for j in result.workload.jobs]


def both_ways(workload, policy, cls, options, backfill="easy", **kw):
    """Start times with the numpy path on every re-key, and with the tuple path."""
    calls = []
    original = cls.key_array

    def counted(self, jobs, now):
        calls.append(len(jobs))
        return original(self, jobs, now)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "ARRAY_REKEY_MIN", 0)
        mp.setattr(cls, "key_array", counted)
        fast = starts(workload, policy, options, backfill, **kw)
        mp.setattr(cls, "key_array", None)
        plain = starts(workload, policy, options, backfill, **kw)
    return fast, plain, calls


rows = st.lists(
    st.tuples(
        st.integers(0, 2_000).map(float),  # submit
        st.integers(1, 400).map(float),  # run time
        st.integers(1, 800).map(float),  # requested time
        st.integers(1, 8),  # processors
        st.integers(1, 4),  # user
    ),
    min_size=1,
    max_size=40,
).map(lambda r: sorted(r, key=lambda x: x[0]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=rows,
    which=st.sampled_from(range(len(POLICIES))),
    backfill=st.sampled_from(["none", "easy", "conservative"]),
    kill=st.booleans(),
    queues=st.lists(st.integers(1, 3), min_size=40, max_size=40),
    before=st.lists(st.integers(0, 3), min_size=40, max_size=40),
    dependencies=st.booleans(),
)
def test_array_rekey_gives_the_tuple_order(
    rows, which, backfill, kill, queues, before, dependencies
):
    policy, cls, options = POLICIES[which]
    n = len(rows)
    # With dependencies, job i may follow job i - before[i] (a dependent job's
    # submit time is set at its release: the arrays must see it).
    preceding = [i + 1 - b if 0 < b <= i else -1 for i, b in enumerate(before[:n])]
    workload = workload_from_rows(
        rows,
        8,
        queue_number=queues[:n],
        preceding_job_number=preceding,
        think_time=[30.0 if p > 0 else -1.0 for p in preceding],
    )
    fast, plain, _ = both_ways(
        workload, policy, cls, options, backfill, kill=kill, dependencies=dependencies
    )
    assert fast == plain


def kth_head(n: int, stretch: float = 1.0):
    """The first ``n`` KTH-SP2 jobs, run and requested times times ``stretch``."""
    with gzip.open(DATA / "KTH-SP2-1996-2.1-cln.swf.gz", "rt") as f:
        lines = [line for line in f if not line.startswith(";")][:n]
    rows = []
    for line in lines:
        v = line.split()
        run, req = float(v[3]) * stretch, float(v[8]) * stretch
        rows.append((float(v[1]), run, req, int(v[4]), int(v[11])))
    return workload_from_rows(rows, 100)


@pytest.mark.parametrize(("policy", "cls", "options"), POLICIES)
def test_array_rekey_on_a_long_real_queue(policy, cls, options):
    # The first 3,000 KTH jobs, four times as long: queues of hundreds.
    workload = kth_head(3_000, stretch=4.0)
    fast, plain, calls = both_ways(workload, policy, cls, options)
    assert max(calls) >= engine.ARRAY_REKEY_MIN  # the long queues took the numpy path
    assert fast == plain


@pytest.mark.parametrize(("policy", "cls", "options"), POLICIES)
def test_key_array_equals_key_bit_for_bit(policy, cls, options):
    workload = kth_head(600)
    p = schedlab.get_registry().get("policy", policy).factory(**options)
    from schedlab.sim.prepare import prepare

    table = prepare(workload, 100, kill=True, dependencies=False)[0].table
    p.bind(table)
    rng = np.random.default_rng(5)
    for j in range(600):  # as the engine does at each submission
        p.on_submit(j, table.submit[j])
    if isinstance(p, Multifactor):  # usage and PSP history for the per-user factors
        for j in range(200):
            p.on_finish(j, table.submit[j] + 10.0 * j)
    for now in (table.submit[599], table.submit[599] + 12_345.678, 3.5e7):
        jobs = np.sort(rng.choice(600, size=300, replace=False)).astype(np.int64)
        fast = p.key_array(jobs, now)
        plain = np.array([p.key(j, now) for j in jobs.tolist()], dtype=np.float64)
        assert fast.dtype == np.float64
        assert fast.tobytes() == plain.tobytes()


def fairshare_case():
    # One processor. A (user 1) runs 0..100; B (user 1) and C (user 2) wait. At
    # their submission nobody has usage: equal priorities, B first by job order.
    # A's end charges user 1, so a recalculation at 100 puts C (user 2) first.
    rows = [(0.0, 100.0, 100.0, 1, 1), (1.0, 10.0, 10.0, 1, 1), (2.0, 10.0, 10.0, 1, 2)]
    return workload_from_rows(rows, 1)


OPTIONS = {"weight_age": 0.0, "weight_size": 0.0, "weight_queue": 0.0}


@pytest.mark.parametrize(
    ("period", "b", "c"),
    [
        (0.0, 110.0, 100.0),  # every pass: recalculated at 100, C first
        (50.0, 110.0, 100.0),  # last at 0, due again from 50: recalculated at 100
        (100.0, 110.0, 100.0),  # due at exactly 100
        (100.5, 100.0, 110.0),  # not due at 100: B keeps its place
        (1000.0, 100.0, 110.0),
    ],
)
def test_calc_period_recalculates_on_a_timer(period, b, c):
    got = starts(fairshare_case(), "multifactor", {**OPTIONS, "calc_period": period})
    assert got == [0.0, b, c]


def test_calc_period_zero_is_the_default():
    workload = kth_head(1_500, stretch=3.0)
    assert starts(workload, "multifactor", {"calc_period": 0}) == starts(
        workload, "multifactor", {}
    )


def test_calc_period_changes_a_real_schedule_and_stays_valid():
    workload = kth_head(1_500, stretch=3.0)
    periodic = schedlab.simulate(
        workload, policy="multifactor", policy_options={"calc_period": 300}
    ).workload.jobs
    every = starts(workload, "multifactor", {})
    assert [j.start_time for j in periodic] != every
    assert len(periodic) == len(every) == 1_500
    assert all(j.start_time >= j.submit_time for j in periodic)


@pytest.mark.parametrize("bad", ["-1", "inf", "nan", "x"])
def test_calc_period_out_of_range_is_a_one_line_error(bad, capsys):
    from schedlab.cli import main

    path = DATA / "HPC2N-2002_excerpt-3170jobs_alea.swf"
    with pytest.raises(SystemExit) as exit_info:
        main(["simulate", str(path), "-p", "multifactor", "-P", f"calc_period={bad}"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "calc_period" in err and "multifactor" in err
    assert len(err.splitlines()) == 1


def test_calc_period_api_check():
    with pytest.raises(UsageError, match="calc_period"):
        Multifactor(calc_period=float("inf"))


class BadArray:
    """A dynamic policy whose ``key_array`` returns a list."""

    name = "bad-array"
    dynamic = True

    def key(self, job, now):
        return float(job)

    def key_array(self, jobs, now):
        return [float(j) for j in jobs]


class NaNArray(BadArray):
    name = "nan-array"

    def key_array(self, jobs, now):
        keys = jobs.astype(np.float64)
        keys[-1] = np.nan
        return keys


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        (BadArray(), "policy bad-array: key_array(jobs, 0) returned list: expected a float64"),
        (NaNArray(), "policy nan-array: key_array(jobs, 0) returned NaN for job 0"),
    ],
)
def test_a_bad_key_array_stops_the_run_naming_the_policy(policy, message):
    rows = [(0.0, 10.0, 10.0, 1, 1), (1.0, 10.0, 10.0, 1, 1), (1.0, 10.0, 10.0, 1, 1)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "ARRAY_REKEY_MIN", 0)
        with pytest.raises(SimulationError) as info:
            schedlab.simulate(workload_from_rows(rows, 1), policy=policy)
    assert message in str(info.value)


def test_every_builtin_dynamic_policy_has_key_array():
    registry = schedlab.get_registry()
    names = registry.names("policy")
    dynamic = [n for n in names if getattr(registry.get("policy", n).factory(), "dynamic", False)]
    assert {"multifactor", "wfp3", "unicef"} <= set(dynamic)
    for name in dynamic:
        policy = registry.get("policy", name).factory()
        assert callable(getattr(policy, "key_array", None)), name


@pytest.mark.parametrize(
    ("policy", "cls", "options"),
    [
        ("multifactor", Multifactor, {**OPTIONS, "weight_age": 1.0, "weight_fairshare": 0.0}),
        ("wfp3", WFP3, {}),
        ("unicef", UNICEF, {}),
    ],
)
def test_a_released_dependent_job_waits_from_its_release(policy, cls, options):
    # One processor. Job 2 follows job 1 (think time 0): its trace submit time is
    # 1 but it is submitted at 100, when job 1 ends. Job 3 has waited since 50, so
    # it goes first; a key from the trace's submit time would put job 2 first.
    rows = [(0.0, 100.0, 100.0, 1, 1), (1.0, 10.0, 10.0, 1, 1), (50.0, 10.0, 10.0, 1, 1)]
    workload = workload_from_rows(
        rows, 1, preceding_job_number=[-1, 1, -1], think_time=[-1.0, 0.0, -1.0]
    )
    fast, plain, calls = both_ways(workload, policy, cls, options, dependencies=True)
    assert calls
    assert fast == plain == [0.0, 110.0, 100.0]


class Periodic(BadArray):
    """A dynamic policy (oldest first, by wait) with a given ``rekey_period``."""

    name = "periodic"

    def __init__(self, period):
        self.rekey_period = period

    def bind(self, table):
        self.submit = table.submit

    def key(self, job, now):
        return -(now - self.submit[job])

    key_array = None


@pytest.mark.parametrize("period", [math.nan, math.inf, -1.0, "abc", True, [1]])
def test_a_bad_rekey_period_stops_the_run_naming_the_policy(period):
    with pytest.raises(SimulationError, match=r"^policy periodic: rekey_period=.*expected a"):
        schedlab.simulate(fairshare_case(), policy=Periodic(period))


@pytest.mark.parametrize("period", [0, 0.0, 50, None])
def test_a_good_rekey_period_runs(period):
    result = schedlab.simulate(fairshare_case(), policy=Periodic(period))
    assert len(result.workload.jobs) == 3
