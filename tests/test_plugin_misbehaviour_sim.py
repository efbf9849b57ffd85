"""Third-party simulation components that misbehave on shared state (the
"plugins" audit, findings 1-4 and 14): a policy or estimator writing into the
job table, a backfilling strategy reassigning the state's counters or dropping
jobs from the queue, an allocation policy writing into its node view or refusing
jobs an idle machine holds, and edge values (``-inf`` estimates, NaN
corrections, NaN or past wake-ups). Each is an error naming the component, never
a silently different schedule."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import schedlab
from schedlab.errors import SimulationError
from schedlab.sim.resources import Allocation, take
from schedlab.sim.state import StrategyError
from workload_rows import workload_from_rows

# Four processors; jobs 1 and 2 (3 processors each) cannot run together.
ROWS = [
    (0.0, 100.0, 200.0, 3, 1),
    (10.0, 100.0, 200.0, 3, 1),
    (20.0, 50.0, 100.0, 2, 2),
    (30.0, 50.0, 100.0, 1, 2),
    (40.0, 60.0, 100.0, 4, 3),
    (50.0, 10.0, 100.0, 2, 3),
]


def workload():
    return workload_from_rows(ROWS, 4)


# ----------------------------------------------------------------- components
class SizeWriter:
    """A policy writing into the table's sizes from ``key``."""

    def bind(self, table):
        self.table = table

    def key(self, job, now):
        self.table.size[job] = 1
        return float(job)


class RunTimeWriter:
    """A policy making every job 1 s long in ``bind``."""

    def bind(self, table):
        for i in range(len(table.run_time)):
            table.run_time[i] = 1.0

    def key(self, job, now):
        return float(job)


class SubmitWriter:
    """A policy moving every later job's submission to 0 in ``bind``."""

    def bind(self, table):
        for i in range(len(table.submit)):
            table.submit[i] = 0.0

    def key(self, job, now):
        return float(job)


class RunTimeEstimator:
    """An estimator writing into the table's run times in ``bind``."""

    def bind(self, table):
        self.table = table
        table.run_time[2] = 1.0

    def estimates(self, table):
        return list(table.requested_time)


class Base:
    def bind(self, state):
        self.state = state

    def schedule(self, now):
        self.state.start_from_head()


class FreeWriter(Base):
    """Claims ten machines' worth of free processors, then starts everything."""

    def schedule(self, now):
        s = self.state
        s.free = s.procs * 10
        for _, job in list(s.queue):
            if s.size[job] <= s.free:
                s.start(job)


class StateSizeWriter(Base):
    """Makes every waiting job one processor wide, then starts from the head."""

    def schedule(self, now):
        s = self.state
        for _, job in s.queue:
            s.size[job] = 1
        s.start_from_head()


class QueueDropper(Base):
    """Deletes waiting jobs from the queue: they would never run."""

    def schedule(self, now):
        s = self.state
        if len(s.queue) > 1:
            del s.queue[1:]
        s.start_from_head()


class WakeNaN(Base):
    def next_wakeup(self):
        return math.nan


class WakeBeforeEverything(Base):
    def next_wakeup(self):
        return -5.0


class MinusInfinity:
    def estimates(self, table):
        return [100.0, -math.inf, 100.0, 100.0, 100.0, 100.0]


class MinusInfinityOne:
    def estimate(self, job, now):
        return -math.inf if job == 3 else 100.0


class ShortCorrecting:
    """Under-estimates every job, then corrects with ``value``."""

    value = math.nan

    def estimates(self, table):
        return [5.0] * len(table.size)

    def correct(self, job, elapsed):
        return self.value


class CorrectNaN(ShortCorrecting):
    value = math.nan


class CorrectInf(ShortCorrecting):
    value = math.inf


class ViewWriter:
    """Makes every node look huge in the view, then fills the job in node order."""

    def allocate(self, view, demand):
        view.free[:, 0] = 10**6
        return take(view, demand, view.nodes[view.usable(demand)])


class ViewReplacer:
    """Replaces the view's matrix by a huge one (no write into the machine's)."""

    def allocate(self, view, demand):
        view.free = np.full_like(view.free, 10**6)
        return take(view, demand, view.nodes[view.usable(demand)])


class NanAmounts:
    """Gives the right nodes with NaN (float) amounts: every comparison passes."""

    def allocate(self, view, demand):
        alloc = take(view, demand, view.nodes[view.usable(demand)])
        if alloc is None:
            return None
        return Allocation(alloc.nodes, np.full(alloc.amounts.shape, np.nan))


class RefuseBig:
    """Refuses any job asking more than 2 cores, even on an idle machine."""

    def allocate(self, view, demand):
        if demand.total[0] > 2:
            return None
        return take(view, demand, view.nodes[view.usable(demand)])


class NeverFits:
    def allocate(self, view, demand):
        return None


class _Plugin:
    """A plugin module stand-in registering the components above."""

    @staticmethod
    @schedlab.hookimpl
    def schedlab_policies():
        return [
            schedlab.PolicySpec(name=n, description="test", factory=f)
            for n, f in [
                ("size-writer", SizeWriter),
                ("runtime-writer", RunTimeWriter),
                ("submit-writer", SubmitWriter),
            ]
        ]

    @staticmethod
    @schedlab.hookimpl
    def schedlab_estimators():
        return [
            schedlab.EstimatorSpec(name=n, description="test", factory=f)
            for n, f in [
                ("runtime-est", RunTimeEstimator),
                ("minus-inf", MinusInfinity),
                ("minus-inf-one", MinusInfinityOne),
                ("correct-nan", CorrectNaN),
                ("correct-inf", CorrectInf),
            ]
        ]

    @staticmethod
    @schedlab.hookimpl
    def schedlab_backfills():
        return [
            schedlab.BackfillSpec(name=n, description="test", factory=f)
            for n, f in [
                ("free-writer", FreeWriter),
                ("size-writer-bf", StateSizeWriter),
                ("queue-dropper", QueueDropper),
                ("wake-nan", WakeNaN),
                ("wake-early", WakeBeforeEverything),
            ]
        ]

    @staticmethod
    @schedlab.hookimpl
    def schedlab_allocations():
        return [
            schedlab.AllocationSpec(name=n, description="test", factory=f)
            for n, f in [
                ("view-writer", ViewWriter),
                ("view-replacer", ViewReplacer),
                ("refuse-big", RefuseBig),
                ("nan-amounts", NanAmounts),
                ("never-fits", NeverFits),
            ]
        ]


@pytest.fixture(scope="module")
def registry():
    return schedlab.build_registry(plugins=[("misbehaving", _Plugin)])


def run(registry, **options):
    return schedlab.simulate(workload(), registry=registry, progress=False, **options)


# ------------------------------------------------------ 1. the job table
@pytest.mark.parametrize("backfill", ["none", "easy", "conservative"])
def test_a_policy_writing_sizes_during_the_run_is_an_error_naming_it(registry, backfill):
    with pytest.raises(SimulationError) as info:
        run(registry, policy="size-writer", backfill=backfill)
    message = str(info.value)
    assert "job table" in message and "size" in message
    assert "policy 'size-writer'" in message
    assert "\n" not in message


@pytest.mark.parametrize("backfill", ["none", "easy", "conservative"])
@pytest.mark.parametrize(
    ("policy", "field"), [("runtime-writer", "run_time"), ("submit-writer", "submit")]
)
def test_a_policy_writing_the_table_in_bind_is_an_error_naming_it(
    registry, policy, field, backfill
):
    with pytest.raises(SimulationError) as info:
        run(registry, policy=policy, backfill=backfill)
    message = str(info.value)
    assert f"policy {policy!r}" in message and field in message and "bind" in message
    assert "estimator" not in message  # the built-in estimator is not suspected


def test_an_estimator_writing_the_table_in_bind_is_an_error_naming_it(registry):
    with pytest.raises(SimulationError) as info:
        run(registry, estimator="runtime-est", backfill="easy")
    message = str(info.value)
    assert "estimator 'runtime-est'" in message and "run_time" in message
    assert "job 3 (index 2)" in message
    assert "policy" not in message  # fcfs is built in


@pytest.mark.parametrize(
    ("backfill", "starts"),
    [
        ("none", [0, 100, 200, 200, 250, 310]),
        ("easy", [0, 100, 200, 30, 250, 200]),
        ("conservative", [0, 100, 200, 30, 250, 200]),
    ],
)
def test_the_built_in_components_run_as_before(registry, backfill, starts):
    result = run(registry, backfill=backfill)
    assert [j.start_time for j in result.workload.jobs] == starts


# ------------------------------------------------------ 2. the scheduler state
def test_a_strategy_reassigning_free_cannot_over_commit(registry):
    with pytest.raises(StrategyError) as info:
        run(registry, backfill="free-writer")
    message = str(info.value)
    assert message.startswith("backfill 'free-writer' broke an invariant at t=10")
    assert "only 1 are free" in message


def test_a_strategy_writing_sizes_is_an_error_naming_it(registry):
    with pytest.raises(SimulationError) as info:
        run(registry, backfill="size-writer-bf")
    message = str(info.value)
    assert "backfill 'size-writer-bf'" in message and "size" in message
    assert "policy" not in message and "estimator" not in message


def test_a_strategy_dropping_jobs_from_the_queue_is_an_error_naming_it(registry):
    with pytest.raises(StrategyError) as info:
        run(registry, backfill="queue-dropper")
    message = str(info.value)
    assert message.startswith("backfill 'queue-dropper':")
    assert "never started" in message


# ------------------------------------------------------ 3. and 4. allocation
PLATFORM = """\
[platform]
sharing = "shared"
[node_groups.n]
count = 4
cores = 2
[partitions.batch]
nodes = ["n"]
"""


@pytest.fixture
def platform(tmp_path):
    path = tmp_path / "plat.toml"
    path.write_text(PLATFORM, encoding="utf-8")
    return str(path)


def platform_workload():
    # 8 cores; jobs 1 and 2 (6 cores each) cannot run together.
    rows = [(0.0, 100.0, 200.0, 6, 1), (10.0, 100.0, 200.0, 6, 1), (20.0, 50.0, 100.0, 2, 2)]
    return workload_from_rows(rows, 8)


def test_an_allocation_policy_writing_its_view_is_an_error_naming_it(registry, platform):
    with pytest.raises(SimulationError) as info:
        schedlab.simulate(
            platform_workload(), registry=registry, platform=platform, allocation="view-writer"
        )
    message = str(info.value)
    assert message.startswith("allocation policy 'view-writer'")
    assert "read only" in message


def test_an_allocation_policy_replacing_its_view_is_checked_on_the_machine(registry, platform):
    with pytest.raises(SimulationError, match=r"^allocation policy 'view-replacer' over-committed"):
        schedlab.simulate(
            platform_workload(), registry=registry, platform=platform, allocation="view-replacer"
        )


def test_an_allocation_of_nan_amounts_is_an_error_naming_the_policy(registry, platform):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy RuntimeWarning either
        with pytest.raises(SimulationError, match=r"^allocation policy 'nan-amounts' .*whole"):
            schedlab.simulate(
                platform_workload(), registry=registry, platform=platform, allocation="nan-amounts"
            )


@pytest.mark.parametrize("allocation", ["refuse-big", "never-fits"])
def test_an_allocation_policy_refusing_what_the_idle_machine_holds_is_named(
    registry, platform, allocation
):
    with pytest.raises(SimulationError) as info:
        schedlab.simulate(
            platform_workload(), registry=registry, platform=platform, allocation=allocation
        )
    message = str(info.value)
    assert message.startswith(f"allocation policy {allocation!r}")
    assert "idle" in message and "job 1 (index 0)" in message


# ------------------------------------------------------ 14. edge values
@pytest.mark.parametrize("backfill", ["none", "easy", "conservative"])
@pytest.mark.parametrize(("estimator", "job"), [("minus-inf", 2), ("minus-inf-one", 4)])
def test_an_estimate_of_minus_infinity_is_an_error_naming_the_estimator(
    registry, estimator, job, backfill
):
    with pytest.raises(SimulationError) as info:
        run(registry, estimator=estimator, backfill=backfill)
    assert str(info.value).startswith(
        f"estimator {estimator}: job {job} (index {job - 1}): the estimate is -inf"
    )


@pytest.mark.parametrize(("estimator", "what"), [("correct-nan", "nan"), ("correct-inf", "inf")])
def test_a_correction_to_nan_or_infinity_names_the_registered_estimator(registry, estimator, what):
    with pytest.raises(SimulationError) as info:
        run(registry, estimator=estimator, backfill="easy")
    message = str(info.value)
    assert message.startswith(f"estimator {estimator}: correct(0, 5) returned {what}")
    assert "\n" not in message


def test_a_wakeup_of_nan_before_the_first_event_is_an_error_naming_the_strategy(registry):
    with pytest.raises(StrategyError) as info:
        run(registry, backfill="wake-nan")
    assert str(info.value) == (
        "backfill 'wake-nan': next_wakeup() returned nan before the first event: a "
        "wake-up must be a time not before the current one (inf for none)"
    )


def test_a_wakeup_for_no_pass_repeated_at_once_is_an_error_naming_the_strategy(registry):
    with pytest.raises(StrategyError) as info:
        run(registry, backfill="wake-early")
    assert str(info.value) == (
        "backfill 'wake-early': next_wakeup() returned -5 again at t=-5 with the clock "
        "standing still and no job waiting (the next job arrives at t=0): it would wake "
        "up forever"
    )
