"""Whole runs: a backfilling strategy that can simulate a whole run by itself.

The engine's event loop (``schedlab.sim.engine``) calls the strategy once per
scheduling pass, in Python. For the common case of a run whose every input is
known before it starts, a strategy may offer to run the whole simulation in one
call of its own (a compiled loop), with exactly the engine's semantics:

* at each instant, the jobs ending then free their processors, then the jobs
  submitted then join the queue in job order, then one scheduling pass follows
  when jobs wait; a job started with a run time of 0 ends at the same instant,
  which gives a second round at that time;
* a job's estimate and priority key are those given in the plan below.

The engine offers a :class:`WholeRun` only when nothing in the run can change
during it but what the plan describes: no dependencies, a policy that is not
``dynamic`` and has no notifications (``on_submit``, ``on_start``,
``on_finish``) and whose keys are plain numbers known at submission
(``static_keys``), no reservation log (tests), and an estimator that either has
static ``estimates`` (and no ``correct`` or ``on_finish``) or says, with
``history_model()``, that its predictions are exactly a
:class:`UserHistoryModel` or an :class:`OnlineLinearModel` (the plan's
``prediction``: the strategy then predicts at submission, learns from the jobs
that end and corrects as the model says, or declines; a strategy that knows
neither kind declines a plan with a ``prediction``).
The strategy's ``run_whole(plan)`` returns ``None`` to decline (the engine then
runs its own loop) or a :class:`WholeRunOutcome`.

The state cannot check each start of a whole run as it happens, so the engine
checks the outcome as a whole with :func:`check_outcome` (every job started, none
before its submission, the machine never over-committed) before it accepts it;
the strategy answers for its own contract (EASY's head reservation), as its
differential tests against its per-pass implementation do.

On a platform (a :class:`~schedlab.sim.machine.NodeMachine`), the plan also
carries the machine, each job's demand and partition; a strategy that cannot
place jobs on nodes declines (returns ``None``). The outcome then gives every
job's allocation in columns (:attr:`WholeRunOutcome.node_offset`, ``nodes``,
``amounts``: job ``j`` held ``amounts[k]`` on node ``nodes[k]`` for ``k`` in
``node_offset[j]:node_offset[j + 1]``, nodes ascending), which the engine checks
with :func:`check_allocations` (each job's nodes inside its partition, at least
its cores, no node over-committed in any dimension at any time) and keeps as the
machine's record of what every job got (:class:`AllocationColumns`). On a
platform the engine calls :func:`check_node_outcome`, which answers both checks
with one compiled pass when numba is loaded (:mod:`schedlab.sim.overcommit`) and
leaves a "no" to the numpy checks, which name what is wrong.

An :class:`OnlineLinearModel` (the ``learned`` kind of predictor: a linear
regression trained online on the run times of the jobs that end) is defined by
its arithmetic as much as by its formulas: a whole run must give the very
floating-point estimates of the estimator's pass-by-pass run, so both compute
them with the functions of :mod:`schedlab.sim.online_linear` (plain loops, which
a compiled strategy compiles as they are), at the same points of the run:

* at job ``j``'s submission, its features are ``static[j]`` followed by the
  :func:`~schedlab.sim.online_linear.history_features` of its user's ring of
  the targets (:func:`~schedlab.sim.online_linear.log_target` of the run time)
  of the last ``window`` of the user's jobs that ended before, or at, that
  instant (jobs without user id share one ring); its prediction is the
  requested time (``NaN``: unknown) until the first learning step, then
  :func:`~schedlab.sim.online_linear.linear_prediction` of the features under
  the current weights (zeros at the start), capped by the requested time; an
  unknown prediction takes the plan's ``estimate[j]`` (a fallback), and every
  estimate is at least :data:`MIN_ESTIMATE`;
* when job ``j`` ends (ends of one instant in job order, before its
  corrections and arrivals), unless its run time is ``NaN`` or negative, its
  target joins its user's ring (:func:`~schedlab.sim.online_linear.ring_push`)
  and, with its features at submission, the pending batch; when ``batch``
  jobs are pending, one :func:`~schedlab.sim.online_linear.adagrad_step` (the
  first one with ``first=True``) updates the weights and the batch empties;
* the correction as for a :class:`UserHistoryModel`.

The outcome then also gives the jobs trained on (:attr:`WholeRunOutcome.trained`)
and the weights at the end (:attr:`WholeRunOutcome.weights`), for the
estimator's statistics.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from typing import Any

import attrs
import numpy as np

from .online_linear import HISTORY_FEATURES
from .resources import Allocation
from .state import StrategyError

#: The shortest estimate the scheduler uses (s): a job must hold its processors for
#: some time in the availability profile, even one that asks for 0 s.
MIN_ESTIMATE = 1e-3


@attrs.frozen
class UserHistoryModel:
    """Run-time predictions made at submission from the user's history (Tsafrir,
    Etsion and Feitelson 2007), as ``user-average`` and ``easy++`` make them:

    * the prediction of job ``j`` is the mean of the run times of the last
      ``window`` jobs of its user (jobs without user id, ``-1``, share one
      history) that ended before ``j``'s submission or at the same instant,
      summed oldest first; never more than its requested time; the requested
      time while the user has no completed job;
    * an unknown prediction (no history and no requested time) takes the plan's
      ``estimate[j]`` (counted as a fallback); every estimate is at least
      :data:`MIN_ESTIMATE`;
    * a job reaching its estimated end still running is corrected by the rule
      ``correction`` of :mod:`schedlab.sim.correction` (``"none"``: never),
      after the ends of that instant and before its arrivals.
    """

    window: int
    correction: str = "none"


def _positive_scale(_model: Any, _attribute: Any, value: Any) -> None:
    """The targets are ``log1p(run) / scale``: a scale of 0, below 0, NaN or
    infinity would divide by zero or give no target at all."""
    try:
        ok = 0.0 < float(value) < math.inf
    except (TypeError, ValueError):
        ok = False
    if not ok or isinstance(value, bool):
        raise ValueError(f"OnlineLinearModel: scale={value!r}: expected a positive finite number")


@attrs.frozen(eq=False)
class OnlineLinearModel:
    """Run-time predictions of an online linear regression, as ``learned`` makes
    them (see the module docstring for the run and
    :mod:`schedlab.sim.online_linear` for the arithmetic): per job, ``static``
    features (a float64 array, one row per job in job order, the first column
    conventionally a constant ``1.0``: its weight starts at the first batch's
    mean target) followed by
    :data:`~schedlab.sim.online_linear.HISTORY_FEATURES` history features of the
    user's last ``window`` targets; one AdaGrad step (``rate``,
    ``under_weight``) every ``batch`` jobs that end; targets
    ``log1p(run) / scale``; corrected by the rule ``correction`` of
    :mod:`schedlab.sim.correction` (``"none"``: never).

    ``targets``: every job's target in job order, as the estimator learns from
    them (:func:`~schedlab.sim.online_linear.log_targets` of the run times in the
    simulation, ``NaN`` for an unknown one), so that a whole run learns from the
    very same numbers, made before the run rather than at each end; ``None``: the
    whole run makes them with :func:`~schedlab.sim.online_linear.log_targets`
    from the plan's run times (an estimator computing its targets otherwise then
    risks a last-bit drift)."""

    static: np.ndarray
    window: int
    batch: int
    rate: float
    under_weight: float
    scale: float = attrs.field(validator=_positive_scale)
    correction: str = "none"
    targets: np.ndarray | None = None

    @property
    def features(self) -> int:
        """Features per job: the static ones and the history ones."""
        return int(self.static.shape[1]) + HISTORY_FEATURES


@attrs.frozen(eq=False)
class WholeRun:
    """A whole simulation offered to a strategy's ``run_whole(plan)`` (read-only
    arrays indexed by job index, jobs in submission order)."""

    #: Machine size (processors).
    procs: int
    #: Submit times, non-decreasing (float64).
    submit: np.ndarray
    #: Processors each job occupies (int64).
    size: np.ndarray
    #: Run times in the simulation, after the kill rule (float64).
    run_time: np.ndarray
    #: The scheduler's estimates, as the engine would set them at submission
    #: (fallbacks applied, at least :data:`MIN_ESTIMATE`);
    #: with a ``prediction``, the estimates to take where a prediction is unknown.
    estimate: np.ndarray
    #: Priority keys (lowest first, ties by job index), as the policy gives them
    #: at submission (float64, no NaN).
    key: np.ndarray
    #: The strategy's name (for errors).
    strategy_name: str = ""
    #: On a platform: the :class:`~schedlab.sim.machine.NodeMachine` (all nodes
    #: idle; read it, never change it), each job's
    #: :class:`~schedlab.sim.resources.Demand` and partition index (int64);
    #: ``None`` on a single pool.
    machine: Any = None
    demand: list[Any] | None = None
    partition_of: np.ndarray | None = None
    #: Estimates predicted during the run (``None``: ``estimate`` as given).
    prediction: UserHistoryModel | OnlineLinearModel | None = None
    #: With a prediction: user ids (int64, -1 unknown) and requested times
    #: (float64, NaN unknown) of the jobs.
    user: np.ndarray | None = None
    requested: np.ndarray | None = None


@attrs.frozen(eq=False)
class WholeRunOutcome:
    """What a strategy's whole run decided."""

    #: Start time of every job (float64, by job index).
    start: np.ndarray
    #: Scheduling passes made (as the engine would count them).
    passes: int
    #: On a platform: every job's allocation in columns (see the module
    #: docstring): ``node_offset`` (``n + 1``, int64), ``nodes`` (int64) and
    #: ``amounts`` (one row per entry of ``nodes``, one column per dimension).
    node_offset: np.ndarray | None = None
    nodes: np.ndarray | None = None
    amounts: np.ndarray | None = None
    #: With a prediction: the estimate each job got at submission, its estimated
    #: end at the end of the run (after corrections), whether it was corrected
    #: (bool), the corrections made and the predictions that fell back.
    estimate: np.ndarray | None = None
    estimated_end: np.ndarray | None = None
    corrected: np.ndarray | None = None
    corrections: int = 0
    estimate_fallbacks: int = 0
    #: With a prediction: the predictions below
    #: :data:`~schedlab.sim.MIN_ESTIMATE` that were raised to it (strictly below:
    #: one of exactly 1 ms is not raised). ``None``: not counted, and the engine
    #: counts the estimates at submission of at most ``MIN_ESTIMATE`` instead.
    estimates_raised: int | None = None
    #: With an :class:`OnlineLinearModel`: the jobs its learning steps took and
    #: its weights at the end of the run (float64).
    trained: int = 0
    weights: np.ndarray | None = None


def check_outcome(plan: WholeRun, outcome: WholeRunOutcome, job_number: Sequence[int]) -> None:
    """A :class:`~schedlab.sim.state.StrategyError` unless every job started (a
    finite start time: NaN or infinity is a job that never started), at or after
    its submission, and the processors in use never exceed the machine (ends
    before starts at the same instant). Once checked, the outcome's arrays and the
    plan's are read only (see :func:`_freeze_checked`)."""
    start = np.asarray(outcome.start, dtype=np.float64)
    n = len(plan.submit)
    name = plan.strategy_name or "?"

    def fail(j: int, what: str, t: float) -> StrategyError:
        number = job_number[j] if 0 <= j < len(job_number) else -1
        label = f"job {number}" if number >= 0 else f"job index {j}"
        return StrategyError(
            f"backfill {name!r} broke an invariant at t={t:g}: {label} (index {j}) {what}"
        )

    if start.shape != (n,):
        raise StrategyError(f"backfill {name!r}: its whole run gave {start.shape} start times")
    # A start of NaN or infinity is a job that never started (inf >= submit holds).
    finite = np.isfinite(start)
    bad = np.flatnonzero(~(finite & (start >= plan.submit)))
    if len(bad):
        j = int(bad[0])
        if finite[j]:
            raise fail(j, "started before its submission", float(start[j]))
        raise fail(
            j, f"never started (its start time is {float(start[j])!r})", float(plan.submit[j])
        )
    end = start + plan.run_time
    # Ends (-size) come first in ``times``: a stable sort keeps them before the
    # starts (+size) of the same instant.
    times = np.concatenate((end, start))
    change = np.concatenate((-plan.size, plan.size))
    order = np.argsort(times, kind="stable")
    in_use = np.cumsum(change[order])
    over = np.flatnonzero(in_use > plan.procs)
    if len(over):
        k = int(order[over[0]])
        j = k - n if k >= n else k
        raise fail(
            j,
            f"started with {int(plan.size[j])} processors when only "
            f"{plan.procs - int(in_use[over[0]]) + int(plan.size[j])} were free",
            float(times[k]),
        )
    _freeze_checked(plan, outcome)


def _freeze_checked(plan: WholeRun, outcome: WholeRunOutcome) -> None:
    """Make the arrays of a checked outcome, and the plan's, read only in place:
    the engine builds the result from them after handing both to the estimator's
    ``on_whole_run(plan, outcome)``, so a write there raises instead of changing
    a schedule already checked (no copy)."""
    for holder, fields in (
        (outcome, ("start", "node_offset", "nodes", "amounts", "estimate", "estimated_end",
                   "corrected", "weights")),
        (plan, ("submit", "size", "run_time", "estimate", "key", "partition_of", "user",
                "requested")),
    ):  # fmt: skip
        for field in fields:
            array = getattr(holder, field, None)
            if isinstance(array, np.ndarray):
                array.flags.writeable = False


def _overcommit(name: str) -> Callable[..., bool] | None:
    """The compiled check ``name`` of :mod:`schedlab.sim.overcommit` when numba is
    already loaded (a compiled strategy ran), else ``None``: the checks never
    import numba by themselves."""
    if "numba" not in sys.modules:
        return None
    try:
        from schedlab.sim import overcommit
    except Exception:  # a broken numba installation: the numpy checks stand alone
        return None
    return getattr(overcommit, name)  # type: ignore[no-any-return]


def _compiled_sweep() -> Callable[..., bool] | None:
    """:func:`schedlab.sim.overcommit.node_sweep_ok`, or ``None`` (:func:`_overcommit`)."""
    return _overcommit("node_sweep_ok")


def check_allocations(plan: WholeRun, outcome: WholeRunOutcome, job_number: Sequence[int]) -> None:
    """On a platform: a :class:`~schedlab.sim.state.StrategyError` unless every
    job holds at least its cores on nodes of its partition (ascending, each
    once, no negative amount) and no node is over-committed in any dimension at
    any time (ends before starts at the same instant). Vectorised: every
    allocation row gives a start and an end event on its node; sorted by node,
    then time with ends first, the running sums are each node's amounts in use
    (a node's events sum to zero, so a node starts from zero)."""
    machine = plan.machine
    name = plan.strategy_name or "?"
    n = len(plan.submit)
    offset, nodes, amounts = outcome.node_offset, outcome.nodes, outcome.amounts
    if offset is None or nodes is None or amounts is None:
        raise StrategyError(f"backfill {name!r}: its whole run on a platform gave no allocations")
    offset = np.asarray(offset, dtype=np.int64)
    nodes = np.asarray(nodes, dtype=np.int64)
    amounts = np.asarray(amounts, dtype=np.int64)
    capacity = machine.capacity
    rows = len(nodes)
    if (
        offset.shape != (n + 1,)
        or offset[0] != 0
        or offset[-1] != rows
        or amounts.shape != (rows, capacity.shape[1])
    ):
        raise StrategyError(f"backfill {name!r}: its whole run gave allocations of the wrong shape")
    count = np.diff(offset)
    job = np.repeat(np.arange(n, dtype=np.int64), count)
    start = np.asarray(outcome.start, dtype=np.float64)

    def fail(j: int, what: str, t: float) -> StrategyError:
        number = job_number[j] if 0 <= j < len(job_number) else -1
        label = f"job {number}" if number >= 0 else f"job index {j}"
        return StrategyError(
            f"backfill {name!r} broke an invariant at t={t:g}: {label} (index {j}) {what}"
        )

    bad = np.flatnonzero(count <= 0)
    if len(bad):
        j = int(bad[0])
        raise fail(j, "got no nodes", float(start[j]))
    inside = (nodes >= 0) & (nodes < len(capacity))
    if inside.all() and not all(len(p.nodes) == len(capacity) for p in machine.partitions):
        # (a partition of every node holds every node in range)
        mask = np.stack([machine.inside[p] for p in range(len(machine.partitions))])
        part = np.asarray(plan.partition_of, dtype=np.int64)
        inside = mask[part[job], nodes]
    ascending = np.ones(rows, dtype=bool)
    ascending[1:] = (nodes[1:] > nodes[:-1]) | (job[1:] != job[:-1])
    good = inside & ascending
    if (amounts < 0).any():
        good &= (amounts >= 0).all(axis=1)
    bad = np.flatnonzero(~good)
    if len(bad):
        j = int(job[bad[0]])
        raise fail(
            j,
            "got nodes outside its partition, not ascending, or a negative amount",
            float(start[j]),
        )
    cores = np.add.reduceat(amounts[:, 0], offset[:-1]) if rows else np.zeros(n, np.int64)
    bad = np.flatnonzero(cores < plan.size)
    if len(bad):
        j = int(bad[0])
        raise fail(j, f"got {int(cores[j])} cores for {int(plan.size[j])}", float(start[j]))
    # Events: each job's end and start, in time order with ends first at the
    # same instant (sorted per job, 2n of them, not per row), expanded to their
    # allocation rows, then stably sorted by node: per node, time order with
    # ends before starts.
    end = start + plan.run_time
    by_time = np.argsort(np.concatenate((end, start)), kind="stable")
    sweep = _compiled_sweep()
    if sweep is not None and sweep(
        by_time.astype(np.int64, copy=False),
        n,
        offset,
        nodes,
        np.ascontiguousarray(amounts),
        np.ascontiguousarray(capacity, dtype=np.int64),
    ):
        return  # no node over-committed (the per-node sort below names the first one)
    ev_job = by_time % n if n else by_time
    ev_count = count[ev_job]
    total = 2 * rows
    before = np.cumsum(ev_count) - ev_count
    row = np.repeat(offset[:-1][ev_job] - before, ev_count) + np.arange(total, dtype=np.int64)
    sign = np.repeat(np.where(by_time >= n, 1, -1), ev_count)
    node_ev = nodes[row]
    small = np.int16 if len(capacity) <= np.iinfo(np.int16).max else np.int64
    order = np.argsort(node_ev.astype(small), kind="stable")
    row = row[order]
    sign = sign[order]
    node_sorted = node_ev[order]
    first: tuple[int, int] | None = None  # (sorted position, dimension) of the first excess
    # Dimension by dimension (one column gathered at a time; a dimension no job
    # holds, GPUs on a CPU cluster, is skipped).
    for d in range(capacity.shape[1]):
        column = amounts[:, d]
        if not column.any():
            continue
        in_use = np.cumsum(column[row] * sign)
        limit = capacity[:, d]
        bound = limit[0] if (limit == limit[0]).all() else limit[node_sorted]
        over = np.flatnonzero(in_use > bound)
        if len(over) and (first is None or over[0] < first[0]):
            first = (int(over[0]), d)
    if first is not None:
        r = int(row[first[0]])
        j = int(job[r])
        raise fail(
            j,
            f"over-committed node index {int(nodes[r])} ({machine.node_names[int(nodes[r])]}) "
            f"in {machine.dims[first[1]]}",
            float(start[j]),
        )


def _compiled_check() -> Callable[..., bool] | None:
    """:func:`schedlab.sim.overcommit.outcome_ok`, or ``None`` (:func:`_overcommit`)."""
    return _overcommit("outcome_ok")


def check_node_outcome(plan: WholeRun, outcome: WholeRunOutcome, job_number: Sequence[int]) -> None:
    """On a platform: :func:`check_outcome` then :func:`check_allocations`, the
    same answer and the same error. When numba is already loaded, one compiled
    pass (:func:`schedlab.sim.overcommit.outcome_ok`, over one sort of the
    events shared by both checks) answers first; only a "no" (or columns of
    unexpected shapes or types) goes on to the numpy checks, which name the
    first thing wrong."""
    check = _compiled_check()
    if check is not None and _all_finite(outcome.start):
        args = _outcome_ok_args(plan, outcome)
        if args is not None and check(*args):
            _freeze_checked(plan, outcome)
            return
    check_outcome(plan, outcome, job_number)
    check_allocations(plan, outcome, job_number)
    _freeze_checked(plan, outcome)


def _all_finite(start: Any) -> bool:
    """Whether ``start`` is a float array of finite times only (else the numpy
    checks answer, which refuse a start of NaN or infinity)."""
    return (
        isinstance(start, np.ndarray) and start.dtype.kind == "f" and bool(np.isfinite(start).all())
    )


def _outcome_ok_args(plan: WholeRun, outcome: WholeRunOutcome) -> tuple[Any, ...] | None:
    """The arguments of :func:`schedlab.sim.overcommit.outcome_ok`, or ``None``
    when a column is not an array of the type and shape it takes."""
    n = len(plan.submit)
    machine = plan.machine
    capacity = machine.capacity
    start: Any = outcome.start
    offset: Any = outcome.node_offset
    nodes: Any = outcome.nodes
    amounts: Any = outcome.amounts
    columns = (
        (start, np.float64, (n,)),
        (plan.submit, np.float64, (n,)),
        (plan.size, np.int64, (n,)),
        (plan.run_time, np.float64, (n,)),
        (offset, np.int64, (n + 1,)),
        (nodes, np.int64, None),
        (amounts, np.int64, None),
    )
    if not all(
        isinstance(a, np.ndarray) and a.dtype == dtype and (shape is None or a.shape == shape)
        for a, dtype, shape in columns
    ):
        return None
    if nodes.ndim != 1 or amounts.shape != (len(nodes), capacity.shape[1]):
        return None
    if all(len(p.nodes) == len(capacity) for p in machine.partitions):
        # (a partition of every node holds every node in range: no mask)
        inside = np.zeros((0, 0), dtype=np.bool_)
        part = np.zeros(0, dtype=np.int64)
    else:
        inside = np.stack([machine.inside[p] for p in range(len(machine.partitions))])
        part = np.asarray(plan.partition_of, dtype=np.int64)
        if part.shape != (n,):
            return None
    end = start + plan.run_time
    by_end = np.argsort(end, kind="stable").astype(np.int64, copy=False)
    by_start = np.argsort(start, kind="stable").astype(np.int64, copy=False)
    return (
        start, plan.submit, plan.size, int(plan.procs), end, by_end, by_start, offset, nodes,
        np.ascontiguousarray(amounts),
        np.ascontiguousarray(capacity, dtype=np.int64), inside, part,
    )  # fmt: skip


class AllocationColumns(MutableMapping[int, Allocation]):
    """The allocations of a whole run on a platform, kept in columns (see the
    module docstring) and read as the machine's mapping from job index to
    :class:`~schedlab.sim.resources.Allocation` (``NodeMachine.given``), each
    built when asked for. Read-only: a whole run's allocations are final."""

    def __init__(self, node_offset: np.ndarray, nodes: np.ndarray, amounts: np.ndarray) -> None:
        self.node_offset = node_offset
        self.nodes = nodes
        self.amounts = amounts
        self._held: np.ndarray | None = None

    def __getitem__(self, job: int) -> Allocation:
        if not 0 <= job < len(self.node_offset) - 1:
            raise KeyError(job)
        a, b = int(self.node_offset[job]), int(self.node_offset[job + 1])
        return Allocation(self.nodes[a:b], self.amounts[a:b])

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.node_offset) - 1))

    def __len__(self) -> int:
        return len(self.node_offset) - 1

    def __setitem__(self, job: int, alloc: Allocation) -> None:
        raise TypeError("the allocations of a whole run are read-only")

    def __delitem__(self, job: int) -> None:
        raise TypeError("the allocations of a whole run are read-only")

    def held_sums(self) -> np.ndarray:
        """Every job's amounts summed over its nodes, ``(jobs, dims)`` (int64,
        read-only: computed once, as the output's held texts and the machine usage
        both read it)."""
        if self._held is None:
            out = np.zeros((len(self), self.amounts.shape[1]), dtype=np.int64)
            counts = np.diff(self.node_offset)
            has = counts > 0
            if has.any():
                out[has] = np.add.reduceat(self.amounts, self.node_offset[:-1][has], axis=0)
            out.flags.writeable = False
            self._held = out
        return self._held


__all__ = [
    "MIN_ESTIMATE",
    "AllocationColumns",
    "OnlineLinearModel",
    "UserHistoryModel",
    "WholeRun",
    "WholeRunOutcome",
    "check_allocations",
    "check_node_outcome",
    "check_outcome",
]
