"""PSP as one factor of ``multifactor`` (issue 13): the factor, its options, its
equivalence with the issue's hand-written key."""

from __future__ import annotations

import numpy as np
import pytest
import schedlab
from schedlab.errors import UsageError
from schedlab.policies.multifactor import Multifactor
from schedlab.policies.psp import PenaltyScheduling
from schedlab.sim.protocols import JobTable

WEEK = 7 * 86400.0
PSP_AND_AGE = {
    "weight_age": 1000,
    "weight_psp": 1000,
    "weight_size": 0,
    "weight_fairshare": 0,
    "weight_queue": 0,
}


def _table(users: list[int], run: list[float], requested: list[float]) -> JobTable:
    n = len(users)
    return JobTable(
        procs=8,
        row=list(range(n)),
        job_number=list(range(1, n + 1)),
        submit=[0.0] * n,
        size=[1] * n,
        requested_time=requested,
        run_time=run,
        estimate=requested,
        user=users,
        group=[-1] * n,
        queue=[-1] * n,
        partition=[-1] * n,
    )


def test_psp_factor_is_the_class_over_the_number_of_classes():
    # User 1 finished a job at accuracy 0.1 (a1), user 2 at 0.9 (a5); user 3 has no
    # history and gets the highest class.
    t = _table([1, 2, 1, 2, 3], [10.0, 90.0, 1.0, 1.0, 1.0], [100.0] * 5)
    policy = Multifactor(**PSP_AND_AGE)
    policy.bind(t)
    policy.on_finish(0, 10.0)
    policy.on_finish(1, 90.0)
    assert policy.psp_factor(1) == pytest.approx(1 / 5)
    assert policy.psp_factor(2) == pytest.approx(5 / 5)
    assert policy.psp_factor(3) == pytest.approx(5 / 5)
    # Key: minus (1000 x class/5 + 1000 x age); age 1 day of 7.
    now = 86400.0
    assert policy.key(2, now) == pytest.approx(-(200.0 + 1000.0 / 7))
    assert policy.key(3, now) == pytest.approx(-(1000.0 + 1000.0 / 7))
    assert policy.keys([2, 3, 4], now) == [policy.key(j, now) for j in (2, 3, 4)]


def test_age_outweighs_a_class_gap_of_more_than_its_share_of_max_age():
    # a1 (0.2) and a5 (1.0) differ by 800 points: 800/1000 of max_age = 5.6 days of
    # waiting. An a1 job waiting since 0 passes an a5 job submitted 5.7 days later,
    # never one submitted 5.5 days later; once the a1 job's age saturates (7 days)
    # the later a5 job catches up and passes it again.
    t = _table([1, 2, 1, 2, 2], [10.0, 90.0, 1.0, 1.0, 1.0], [100.0] * 5)
    t.submit[3] = 5.5 * 86400
    t.submit[4] = 5.7 * 86400
    policy = Multifactor(**PSP_AND_AGE)
    policy.bind(t)
    policy.on_finish(0, 10.0)
    policy.on_finish(1, 90.0)
    for days in (5.8, 6.5, 6.9):
        now = days * 86400
        assert policy.key(3, now) < policy.key(2, now) < policy.key(4, now), days
    for days in (7.2, 9.0, 12.0):
        now = days * 86400
        assert policy.key(3, now) < policy.key(4, now) < policy.key(2, now), days


def test_weight_psp_zero_keeps_the_factor_out():
    t = _table([1, 2], [10.0, 90.0], [100.0, 100.0])
    plain, off = Multifactor(), Multifactor(weight_psp=0)
    for p in (plain, off):
        p.bind(t)
        p.on_finish(0, 10.0)
    assert off.psp is None
    assert off.key(1, 500.0) == plain.key(1, 500.0)


class IssueKey:
    """The issue's quick check: 1000 x class/5 + 1000 x min(wait, 7 days)/7 days."""

    dynamic = True

    def __init__(self) -> None:
        self.psp = PenaltyScheduling()

    def bind(self, table: JobTable) -> None:
        self.psp.bind(table)
        self.submit = table.submit

    def key(self, job: int, now: float) -> float:
        wait = now - self.submit[job]
        return -(1000 * self.psp.priority(job) / 5 + 1000 * min(wait, WEEK) / WEEK)

    def on_finish(self, job: int, now: float) -> bool:
        return self.psp.on_finish(job, now)


@pytest.mark.parametrize("scenario", ["CF", "HDI"])
def test_multifactor_with_psp_gives_the_issues_schedule(scenario):
    workload = schedlab.read(f"psp-fing:scenario={scenario},seed=1,jobs=300")
    by_hand = schedlab.simulate(workload, policy=IssueKey(), backfill="easy", progress=False)
    ours = schedlab.simulate(
        workload, policy="multifactor", policy_options=PSP_AND_AGE, backfill="easy", progress=False
    )
    a = by_hand.workload.to_arrays()["wait_time"]
    b = ours.workload.to_arrays()["wait_time"]
    assert np.array_equal(a, b)
    # And the PSP factor matters: without it the schedule is another one.
    age_only = schedlab.simulate(
        workload,
        policy="multifactor",
        policy_options={**PSP_AND_AGE, "weight_psp": 0},
        backfill="easy",
        progress=False,
    )
    assert not np.array_equal(age_only.workload.to_arrays()["wait_time"], b)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"weight_psp": -1}, "policy multifactor: option weight_psp=-1.0: must be >= 0"),
        ({"weight_psp": "nan"}, "policy multifactor: option weight_psp='nan': must be a number"),
        ({"psp_window": 0}, "policy multifactor: option psp_window=0: must be in 1..10000"),
        ({"psp_new_user_class": 6}, "option psp_new_user_class=6: expected 1..5"),
        ({"psp_edges": "0.5,0.2"}, "psp_edges"),
        ({"weight_pps": 1}, "weight_pps"),
    ],
)
def test_bad_psp_options_are_one_line_errors(options, message):
    workload = schedlab.read("psp-fing:scenario=CF,seed=1,jobs=20")
    with pytest.raises(UsageError) as info:
        schedlab.simulate(workload, policy="multifactor", policy_options=options, progress=False)
    text = str(info.value)
    assert message in text and "\n" not in text
