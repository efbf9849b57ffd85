"""Invariants, and how ``selective`` relates to schedlab's built-in strategies at the
two ends of its threshold.

* ``threshold=1``: every job's expansion factor is 1 at its submission, so every job
  is protected from its first pass, in priority order, and the compression after
  early ends and the re-planning after an overrun are conservative backfilling's:
  the schedules are exactly ``conservative``'s, for every policy and estimator,
  overruns included.
* a huge threshold: no job is ever protected. The profile then holds only the running
  jobs (by estimate) and the jobs started in this pass, and on it no time ahead has
  fewer free processors than now, so "fits without entering a reserved slot" is "fits
  now": every waiting job that fits starts, in priority order. That is greedy list
  scheduling, with no reservation at all; it is *not* ``none`` (which stops at the
  first job that does not fit) nor ``easy`` (which protects the head of the queue).
"""

from __future__ import annotations

import pytest
import schedlab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedlab import UsageError
from schedlab.sim import SchedulerState
from schedlab.testing import check_backfill, check_schedule, using_registry, workload_from_rows

from schedlab_selective.strategy import Selective, expansion_factor, parse_threshold

POLICIES = ("fcfs", "sjf", "largest", "wfp3")


@st.composite
def workloads(draw):
    procs = draw(st.integers(1, 16))
    n = draw(st.integers(1, 40))
    rows = []
    for _ in range(n):
        run = draw(st.integers(0, 60))
        over = draw(st.sampled_from([0, 0, 1, 7, 30, 100]))
        rows.append((draw(st.integers(0, 120)), run, draw(st.integers(1, procs)),
                     max(run + over, 1)))
    rows.sort(key=lambda r: r[0])
    return workload_from_rows(rows, procs=procs)


class Greedy:
    """Start every waiting job that fits, in priority order; no reservation."""

    def bind(self, state: SchedulerState) -> None:
        self.state = state

    def schedule(self, now: float) -> None:
        state = self.state
        for _, job in list(state.queue):
            if state.size[job] <= state.free:
                state.start(job)


RUNS = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def starts(workload, registry, **options):
    result = schedlab.simulate(workload, registry=registry, progress=False, **options)
    return result.start.tolist()


@pytest.mark.parametrize("threshold", [1, 1.5, 2, 4, 1e9, "adaptive"])
def test_invariants(threshold):
    check_backfill(lambda: Selective(threshold))


def test_invariants_of_the_registered_strategy(registry):
    with using_registry(registry):
        check_backfill("selective", seeds=range(10))


@RUNS
@given(workload=workloads(), policy=st.sampled_from(POLICIES),
       kill=st.booleans(), estimator=st.sampled_from(["requested", "user-average"]))
def test_threshold_one_is_conservative(registry, workload, policy, kill, estimator):
    options = {"policy": policy, "kill": kill, "estimator": estimator}
    expected = starts(workload, registry, backfill="conservative", **options)
    got = starts(workload, registry, backfill="selective",
                 backfill_options={"threshold": 1}, **options)
    assert got == expected


@RUNS
@given(workload=workloads(), policy=st.sampled_from(POLICIES), kill=st.booleans())
def test_a_huge_threshold_is_greedy_with_no_reservation(registry, workload, policy, kill):
    options = {"policy": policy, "kill": kill, "estimator": "user-average"}
    got = starts(workload, registry, backfill="selective",
                 backfill_options={"threshold": 1e12}, **options)
    assert got == starts(workload, registry, backfill=Greedy(), **options)


def test_a_huge_threshold_is_neither_none_nor_easy(registry):
    # 4 processors: job 1 holds 2 until 100, job 2 needs all 4, job 3 (2 processors,
    # 200 s) arrives at 5. none and EASY keep job 3 behind job 2; selective with a
    # huge threshold starts it at once.
    workload = workload_from_rows([(0, 100, 2, 100), (0, 10, 4, 10), (5, 200, 2, 200)],
                                  procs=4)
    greedy = starts(workload, registry, backfill="selective",
                    backfill_options={"threshold": 1e12})
    assert greedy == [0, 205, 5]
    assert starts(workload, registry, backfill="none") == [0, 100, 110]
    assert starts(workload, registry, backfill="easy") == [0, 100, 110]


@RUNS
@given(workload=workloads(), policy=st.sampled_from(POLICIES),
       threshold=st.sampled_from([1, 1.2, 2, 3, 10, "adaptive"]), kill=st.booleans())
def test_schedules_are_feasible(registry, workload, policy, threshold, kill):
    result = schedlab.simulate(workload, policy=policy, backfill="selective",
                               backfill_options={"threshold": threshold}, kill=kill,
                               estimator="user-average", registry=registry, progress=False)
    check_schedule(result, int(workload.header.machine_size()))
    assert len(result) == len(workload)


def test_expansion_factor():
    assert expansion_factor(0, 10) == 1
    assert expansion_factor(10, 10) == 2
    assert expansion_factor(0, 0) == 1
    assert expansion_factor(1, 0) == float("inf")


@pytest.mark.parametrize(("text", "value"), [
    ("1", 1.0), ("2.5", 2.5), (" adaptive ", "adaptive"), ("ADAPTIVE", "adaptive"),
    (3, 3.0), (1e9, 1e9),
])
def test_parse_threshold(text, value):
    assert parse_threshold(text) == value


@pytest.mark.parametrize(("value", "why"), [
    (0.5, "0.5 is below 1"), (-1, "-1 is below 1"), (float("nan"), "nan is not finite"),
    (float("inf"), "inf is not finite"), ("abc", "'abc' is neither a number nor 'adaptive'"),
    (True, "True is neither"), (None, "None is neither"),
])
def test_bad_thresholds_from_python(registry, value, why):
    with pytest.raises(UsageError) as caught:
        Selective(value)
    message = str(caught.value)
    assert message.startswith(f"backfill selective: option threshold={value!r}: ")
    assert why in message and "\n" not in message
    workload = workload_from_rows([(0, 10, 1, 10)], procs=1)
    with pytest.raises(UsageError, match="backfill selective: option threshold"):
        schedlab.simulate(workload, backfill="selective",
                          backfill_options={"threshold": value}, registry=registry)


def test_unknown_option_from_python(registry):
    workload = workload_from_rows([(0, 10, 1, 10)], procs=1)
    with pytest.raises(UsageError, match=r"backfill selective: unknown option 'depth' "
                                         r"\(options: threshold\)"):
        schedlab.simulate(workload, backfill="selective", backfill_options={"depth": 2},
                          registry=registry)
