"""The event-driven simulator: the engine's loop, and the public API backfilling
strategies are written against.

* :class:`SchedulerState`: what a strategy sees (clock, free processors, the queue
  in priority order, running jobs by estimated end) and may do (start jobs,
  reserve), every action checked (:class:`StrategyError`).
* :class:`Profile`: free processors over future time, for strategies that plan.
* :class:`Backfill`: the protocol a strategy implements; :class:`JobTable`: the
  jobs as plain lists.
* With a platform file: :class:`NodeMachine` (nodes and their free amounts,
  ``state.machine``), :class:`NodeProfile` (free amounts per node over time) and
  :mod:`schedlab.sim.resources` (demands, allocations, the allocation-policy
  protocol).
* :class:`WholeRun`, :class:`WholeRunOutcome`: a whole run offered to a strategy
  that can simulate it in one call of its own (:mod:`schedlab.sim.whole_run`);
  :class:`UserHistoryModel`, :class:`OnlineLinearModel`: the predictions an
  estimator may let such a run make (the latter's arithmetic in
  :mod:`schedlab.sim.online_linear`).
* :class:`Correction`, :func:`make_correction`: how predictors raise the estimate
  of a job that outlived it (``correction=tsafrir|requested|none``).
"""

from . import correction as _correction
from . import state as _state
from . import whole_run as _whole_run
from .correction import Correction, make_correction
from .machine import NodeMachine, PartitionNodes
from .node_profile import NodeProfile
from .profile import Profile
from .protocols import Backfill, Estimator, JobTable, Policy
from .state import SchedulerState, StrategyError, WaitingArrays
from .whole_run import (
    AllocationColumns,
    OnlineLinearModel,
    UserHistoryModel,
    WholeRun,
    WholeRunOutcome,
    check_allocations,
    check_outcome,
)

# The public constants, bound here with the doc comments that the API reference
# shows (autodoc reads them from this module, not from the one defining the value).

#: The corrections a predictor's ``correction=`` option accepts
#: (:func:`make_correction`): ``"tsafrir"``, ``"requested"``, ``"none"``.
CORRECTIONS: tuple[str, ...] = _correction.CORRECTIONS
#: Tsafrir et al.'s increments (seconds) added to the elapsed time at the first,
#: second ... miss of a prediction (``correction=tsafrir``); the last one repeats.
TSAFRIR_INCREMENTS: tuple[float, ...] = _correction.TSAFRIR_INCREMENTS
#: Size marking a job that is not waiting in :class:`WaitingArrays` (``size[j]``
#: of a job not submitted yet, or started).
NOT_WAITING: int = _state.NOT_WAITING
#: The shortest estimate the scheduler uses, in seconds. A job must hold its
#: processors for some time in the availability profile, even one that asks for 0 s.
MIN_ESTIMATE: float = _whole_run.MIN_ESTIMATE
#: The statistics of a run (``result.stats``, and the ``stats`` of a simulated
#: workload's ``meta["simulation"]``) that measure the machine it ran on, not the
#: schedule, so they differ between two runs of the same input: ``simulate
#: --no-timings`` leaves them out of its ``--json``, and a writer that records the
#: run's statistics in its output leaves them out so that output is the same bytes
#: on every run.
TIMING_STATS: tuple[str, ...] = (
    "wall_time_s",
    "cpu_time_s",
    "total_time_s",
    "jobs_per_second",
    "peak_memory_bytes",
)

__all__ = [
    "CORRECTIONS",
    "MIN_ESTIMATE",
    "NOT_WAITING",
    "TIMING_STATS",
    "TSAFRIR_INCREMENTS",
    "AllocationColumns",
    "Backfill",
    "Correction",
    "Estimator",
    "JobTable",
    "NodeMachine",
    "NodeProfile",
    "OnlineLinearModel",
    "PartitionNodes",
    "Policy",
    "Profile",
    "SchedulerState",
    "StrategyError",
    "UserHistoryModel",
    "WaitingArrays",
    "WholeRun",
    "WholeRunOutcome",
    "check_allocations",
    "check_outcome",
    "make_correction",
]
