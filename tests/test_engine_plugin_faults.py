"""Faults of third-party components the engine must stop, naming the component:
a wake-up in the past or NaN, a strategy that keeps waking up on an idle machine
and starts nothing, a NaN inside a tuple key, infinite estimates, a wrong number
of estimates."""

from __future__ import annotations

import math

import pytest
import schedlab
from schedlab.errors import SimulationError
from schedlab.sim import engine
from schedlab.sim.state import StrategyError
from workload_rows import workload_from_rows

ROWS = [(0.0, 100.0, 200.0, 2, 1), (10.0, 50.0, 100.0, 2, 1), (20.0, 30.0, 60.0, 4, 2)]


def workload():
    return workload_from_rows(ROWS, 4)


class TimeTravel:
    """Asks for a wake-up 1,000 s in the past when jobs arrive."""

    name = "time-travel"

    def __init__(self, wake: float = -1000.0) -> None:
        self.wake = wake
        self.want: float | None = None

    def bind(self, state):
        self.state = state

    def schedule(self, now):
        if self.state.new_jobs and self.want is None:
            self.want = now + self.wake
            return
        self.want = None
        self.state.start_from_head()

    def next_wakeup(self):
        return self.want if self.want is not None else math.inf


@pytest.mark.parametrize(("wake", "shown"), [(-1000.0, "-1000"), (math.nan, "nan")])
def test_a_wakeup_before_now_or_nan_stops_the_run(wake, shown):
    with pytest.raises(StrategyError) as info:
        schedlab.simulate(workload(), backfill=TimeTravel(wake))
    message = str(info.value)
    assert message.startswith("backfill 'time-travel': next_wakeup() returned")
    assert shown in message and "t=0" in message


def test_a_wakeup_now_or_later_is_fine():
    result = schedlab.simulate(workload(), backfill=TimeTravel(5.0))
    starts = [j.start_time for j in result.workload.jobs]
    assert all(s >= j.submit_time for s, j in zip(starts, result.workload.jobs, strict=True))


class WakeForever:
    """Never starts anything, always asks to be woken a second later."""

    name = "wake-forever"

    def bind(self, state):
        self.state = state

    def schedule(self, now):
        pass

    def next_wakeup(self):
        return self.state.now + 1.0


class WakeWhileWaiting(WakeForever):
    """Wakes up every second while jobs wait, and starts nothing."""

    name = "wake-forever"

    def next_wakeup(self):
        return self.state.now + 1.0 if self.state.queue else math.inf


class WakeAtOnce(WakeForever):
    """Asks for a wake-up now, again and again."""

    name = "wake-at-once"

    def next_wakeup(self):
        return self.state.now


def test_waking_forever_on_an_idle_machine_is_stopped():
    # From t=20 nothing runs and nothing will arrive; the strategy wakes up every
    # second and starts nothing.
    with pytest.raises(StrategyError) as info:
        schedlab.simulate(workload(), backfill=WakeWhileWaiting())
    assert str(info.value) == (
        f"backfill 'wake-forever': 3 jobs waiting at t={20 + engine.IDLE_WAKEUP_LIMIT + 1:g}, "
        f"and {engine.IDLE_WAKEUP_LIMIT:,} wake-ups in a row started none of them on an "
        "idle machine (nothing else would happen)"
    )


@pytest.mark.parametrize("strategy", [WakeForever(), WakeAtOnce()])
def test_waking_up_with_the_clock_standing_still_is_stopped(strategy):
    # Before the first event the clock is -inf, and -inf + 1 is -inf: the old loop
    # spun there forever without a pass.
    rows = [(5.0, 10.0, 10.0, 1, 1)]
    with pytest.raises(StrategyError, match="with the clock standing still"):
        schedlab.simulate(workload_from_rows(rows, 1), backfill=strategy)


class Patient:
    """Waits on an idle machine until t=500, one wake-up a second, then starts
    jobs from the head: a slow strategy, not a broken one."""

    name = "patient"

    def bind(self, state):
        self.state = state

    def schedule(self, now):
        if now >= 500.0:
            self.state.start_from_head()

    def next_wakeup(self):
        return self.state.now + 1.0 if self.state.queue else math.inf


def test_a_strategy_waiting_a_while_on_an_idle_machine_is_not_stopped():
    result = schedlab.simulate(workload(), backfill=Patient())
    assert [j.start_time for j in result.workload.jobs] == [500.0, 500.0, 600.0]


class TupleKeys:
    """A policy whose keys are tuples, one with a NaN inside."""

    name = "tuple-nan"

    def key(self, job, now):
        return (math.nan if job == 1 else float(job), (job,))


class NestedNaN:
    name = "nested-nan"

    def key(self, job, now):
        return (0.0, (math.nan,)) if job == 2 else (0.0, (float(job),))


@pytest.mark.parametrize("backfill", ["none", "easy", "conservative"])
@pytest.mark.parametrize(("policy", "job"), [(TupleKeys(), 1), (NestedNaN(), 2)])
def test_a_nan_inside_a_tuple_key_names_the_policy(policy, job, backfill):
    with pytest.raises(SimulationError) as info:
        schedlab.simulate(workload(), policy=policy, backfill=backfill)
    assert str(info.value).startswith(f"policy {policy.name}: key({job}, ")
    assert "broke an invariant" not in str(info.value)


class Infinite:
    name = "infinite"

    def estimates(self, table):
        return [100.0, math.inf, 100.0]


class InfiniteOne:
    name = "infinite-one"

    def estimate(self, job, now):
        return math.inf if job == 2 else 100.0


@pytest.mark.parametrize("backfill", ["none", "easy", "conservative", "slurm"])
@pytest.mark.parametrize(("estimator", "job"), [(Infinite(), 2), (InfiniteOne(), 3)])
def test_an_infinite_estimate_names_the_estimator(estimator, job, backfill):
    with pytest.raises(SimulationError) as info:
        schedlab.simulate(workload(), estimator=estimator, backfill=backfill)
    assert str(info.value).startswith(
        f"estimator {estimator.name}: job {job} (index {job - 1}): the estimate is infinite"
    )


class RaisedToInfinity:
    name = "to-infinity"

    def estimates(self, table):
        return [10.0] * len(table.size)

    def correct(self, job, elapsed):
        return math.inf


def test_a_correction_to_infinity_names_the_estimator():
    with pytest.raises(SimulationError, match=r"^estimator to-infinity: correct\(0, 10\)"):
        schedlab.simulate(workload(), estimator=RaisedToInfinity(), backfill="slurm")


class Short:
    name = "short-est"

    def estimates(self, table):
        return [10.0]


def test_a_wrong_number_of_estimates_names_the_estimator():
    with pytest.raises(SimulationError, match=r"^estimator short-est: returned 1 estimates for 3"):
        schedlab.simulate(workload(), estimator=Short())


def test_registered_names_are_used_in_messages():
    # A registered estimator is named as the run was given it.
    registry = schedlab.build_registry(plugins=[("faulty", _FaultyPlugin)])
    with pytest.raises(SimulationError, match=r"^estimator faulty-est: job 2"):
        schedlab.simulate(workload(), estimator="faulty-est", registry=registry)


class _FaultyPlugin:
    """A plugin module stand-in registering an estimator with no ``name``."""

    class Nameless:
        def estimates(self, table):
            return [1.0, math.inf, 1.0]

    @staticmethod
    @schedlab.hookimpl
    def schedlab_estimators():
        return [
            schedlab.EstimatorSpec(
                name="faulty-est", description="test", factory=_FaultyPlugin.Nameless
            )
        ]
