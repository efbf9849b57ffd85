"""The formulas of the priority policies and estimators, on hand-computed values."""

from __future__ import annotations

import math

import pytest
import schedlab
from schedlab.model import Header, Workload
from schedlab.policies.multifactor import Multifactor
from schedlab.policies.psp import PenaltyScheduling, accuracy_class
from schedlab.policies.unicef import UNICEF
from schedlab.policies.wfp3 import WFP3
from schedlab.sim.protocols import JobTable


def table(**lists) -> JobTable:
    n = len(next(iter(lists.values())))
    base = {
        "procs": 8,
        "row": list(range(n)),
        "job_number": list(range(1, n + 1)),
        "submit": [0.0] * n,
        "size": [1] * n,
        "requested_time": [100.0] * n,
        "run_time": [50.0] * n,
        "estimate": [100.0] * n,
        "user": [1] * n,
        "group": [-1] * n,
        "queue": [-1] * n,
        "partition": [-1] * n,
    }
    base.update(lists)
    return JobTable(**base)


@pytest.mark.parametrize(
    ("accuracy", "cls"),
    [(0.0, 1), (0.19, 1), (0.2, 2), (0.35, 2), (0.4, 3), (0.6, 4), (0.79, 4), (0.8, 5), (1.0, 5)],
)
def test_psp_classes_follow_table_1_of_the_paper(accuracy, cls):
    assert accuracy_class(accuracy) == cls


def test_psp_accuracy_is_the_mean_over_the_last_window_jobs():
    t = table(run_time=[10.0, 90.0, 100.0, 200.0], requested_time=[100.0] * 4)
    psp = PenaltyScheduling(window=2)
    psp.bind(t)
    assert psp.priority(0) == 5  # no history: the highest class by default
    assert psp.on_finish(0, 10.0) is True  # 0.1 -> a1
    assert psp.priority(0) == 1
    psp.on_finish(1, 20.0)  # mean(0.1, 0.9) = 0.5 -> a3
    assert psp.accuracy(1) == pytest.approx(0.5)
    assert psp.priority(2) == 3
    psp.on_finish(2, 30.0)  # window 2: mean(0.9, 1.0) -> a5
    assert psp.priority(2) == 5
    assert psp.on_finish(3, 40.0) is False  # ratio capped at 1: still a5
    assert psp.accuracy(1) == pytest.approx(1.0)


def test_psp_custom_edges_and_unknown_requests():
    t = table(run_time=[30.0, 5.0], requested_time=[100.0, math.nan])
    psp = PenaltyScheduling(edges="0.5", new_user_class=1)
    psp.bind(t)
    assert psp.priority(0) == 1
    assert psp.on_finish(1, 1.0) is False  # unknown request: not in the history
    psp.on_finish(0, 1.0)  # 0.3 < 0.5 -> class 1 of 2
    assert psp.priority(0) == 1


def test_wfp3_and_unicef_scores():
    t = table(submit=[0.0, 0.0], estimate=[10.0, 0.0], size=[4, 1])
    wfp3 = WFP3()
    wfp3.bind(t)
    assert wfp3.key(0, 20.0) == -((20.0 / 10.0) ** 3) * 4
    assert wfp3.key(1, 20.0) == -((20.0 / 1.0) ** 3) * 1  # estimate floored at 1 s
    unicef = UNICEF()
    unicef.bind(t)
    assert unicef.key(0, 20.0) == -20.0 / (2.0 * 10.0)
    assert unicef.key(1, 20.0) == -20.0 / (1.0 * 1.0)  # serial counted as 2 procs


def test_multifactor_weights_and_fairshare():
    t = table(
        submit=[0.0, 0.0, 0.0],
        size=[8, 1, 1],
        user=[1, 2, 2],
        queue=[1, 2, 3],
        run_time=[100.0, 100.0, 100.0],
    )
    mf = Multifactor(
        weight_age=100,
        weight_size=10,
        weight_fairshare=1000,
        weight_queue=50,
        max_age=100,
        half_life=0,
        queue_priorities="1:10,2:5",
    )
    mf.bind(t)
    for j in range(3):
        mf.on_submit(j, 0.0)
    # No usage yet: fair-share factor 1 for everyone.
    assert mf.key(0, 50.0) == -(10 * 1.0 + 50 * 1.0 + 100 * 0.5 + 1000 * 1.0)
    assert mf.key(2, 200.0) == -(10 * (1 / 8) + 50 * 0.0 + 100 * 1.0 + 1000 * 1.0)
    mf.on_finish(0, 100.0)  # user 1 has all the usage: 2 ** (-1 / (1/2)) = 0.25
    assert mf.fairshare(1) == pytest.approx(0.25)
    assert mf.fairshare(2) == pytest.approx(1.0)
    assert mf.keys([0, 1], 50.0) == [mf.key(0, 50.0), mf.key(1, 50.0)]


def test_multifactor_usage_decays_with_the_half_life():
    t = table(user=[1, 2], size=[1, 1], run_time=[100.0, 100.0])
    mf = Multifactor(half_life=10.0)
    mf.bind(t)
    mf.on_submit(0, 0.0)
    mf.on_submit(1, 0.0)
    mf.on_finish(0, 0.0)
    mf.on_finish(1, 10.0)  # user 1's usage halved by then: shares 1/3 vs 2/3
    assert mf.usage[2] / mf.total_usage == pytest.approx(2 / 3)


def test_user_average_estimator_predicts_from_the_last_two_jobs():
    header = Header()
    header.set("MaxProcs", 1)
    w = Workload.from_arrays(
        {
            "submit_time": [0, 0, 0, 0],
            "run_time": [10, 20, 30, 5],
            "requested_time": [100, 100, 100, 12],
            "requested_processors": [1, 1, 1, 1],
            "user_id": [1, 1, 1, 1],
        },
        header=header,
    )
    result = schedlab.simulate(w, estimator="user-average", backfill="none", progress=False)
    # All submitted at 0, before any job ended: every estimate is the request.
    assert result.estimate.tolist() == [100, 100, 100, 12]
    late = Workload.from_arrays(
        {
            "submit_time": [0, 0, 100, 100],
            "run_time": [10, 20, 30, 5],
            "requested_time": [100, 100, 100, 12],
            "requested_processors": [1, 1, 1, 1],
            "user_id": [1, 1, 1, 1],
        },
        header=header,
    )
    result = schedlab.simulate(late, estimator="user-average", backfill="none", progress=False)
    assert result.estimate.tolist() == [100, 100, 15, 12]  # mean(10, 20); capped by 12
