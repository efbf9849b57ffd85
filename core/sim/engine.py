"""The event-driven simulation loop.

One loop over event times. At each time ``now``:

1. every job ending at ``now`` finishes (in job order) and frees its processors;
   the backfilling strategy and the policy are told; dependent jobs are released
   (submitted after their think time); with an estimator that corrects its
   predictions (``correct``), running jobs reaching their estimated end have it
   raised (:mod:`schedlab.sim.correction`);
2. every job submitted at ``now`` enters the wait queue (in job order) with its
   estimate and its priority key;
3. one scheduling pass: the backfilling strategy
   (:class:`~schedlab.sim.protocols.Backfill`) starts what it decides, through the
   :class:`~schedlab.sim.state.SchedulerState`, which checks every action.

A job started with a run time of 0 finishes at the same instant, which gives a
second round (finishes, then a pass) at that time. A strategy may ask for a pass at
a time of its own (``next_wakeup``: a reservation coming due, a periodic pass).

The loop knows no backfilling algorithm: everything per job lives in plain lists
indexed by job (in the state); no per-job objects and no plugin-manager calls
happen inside the loop.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, insort
from collections.abc import Callable
from heapq import heappop, heappush
from typing import Any, cast

import numpy as np

from ..errors import SimulationError
from .correction import CorrectionLoop
from .prepare import Prepared
from .state import SchedulerState, StrategyError, list_print
from .whole_run import (
    MIN_ESTIMATE,
    AllocationColumns,
    OnlineLinearModel,
    UserHistoryModel,
    WholeRun,
    WholeRunOutcome,
    check_node_outcome,
    check_outcome,
)

INF = math.inf
#: Queue length from which a policy's ``key_array`` re-sorts the queue (numpy's
#: fixed cost per call outweighs its speed on shorter queues; both ways give the
#: same order).
ARRAY_REKEY_MIN = 256

# MIN_ESTIMATE (imported above): the shortest estimate the scheduler uses.


def _array(given: np.ndarray | None, values: Any, dtype: type) -> np.ndarray:
    """``given`` (a column :func:`~.prepare.prepare` kept as an array), else
    ``values`` (the table's list) as an array of ``dtype``."""
    return np.array(values, dtype=dtype) if given is None else given


#: The components that may have written into the job table during a run.
_ALL_KINDS = ("policy", "estimator", "backfill")

#: Passes in a row on an idle machine with nothing left to arrive that start
#: nothing, after which a strategy that keeps asking for wake-ups is stopped.
IDLE_WAKEUP_LIMIT = 100_000


def _holds_nan(key: tuple[Any, ...]) -> bool:
    """Whether a tuple key holds a NaN (at any depth): tuples compare their items
    by identity first, so ``key != key`` does not see it."""
    for item in key:
        if item != item or (type(item) is tuple and _holds_nan(item)):
            return True
    return False


def _has_predecessors(predecessor: Any) -> bool:
    """Whether any job waits for another (``predecessor`` is a list, or a
    compact ``array('b')`` of ``-1`` without dependencies: read as numpy)."""
    if isinstance(predecessor, array) and predecessor.typecode == "b":
        return bool(len(predecessor)) and int(np.frombuffer(predecessor, np.int8).max()) >= 0
    return bool(len(predecessor)) and max(predecessor) >= 0


def _prediction_fallbacks(
    prediction: UserHistoryModel | OnlineLinearModel,
    plan: WholeRun,
    start: np.ndarray,
) -> np.ndarray:
    """Which jobs' predictions a whole run with ``prediction`` found unknown (and
    replaced by their fallback): the run counts them only, so they are found from
    its schedule by the model's rules (:mod:`schedlab.sim.whole_run`). A prediction
    is unknown only for a job without a requested time, and only before the
    model has something to predict from: for a :class:`UserHistoryModel`, no job
    of the user (jobs without user id share one history) had ended when it
    arrived; for an :class:`OnlineLinearModel`, fewer than ``batch`` jobs had ended
    (no learning step yet). A job has ended for an arrival at ``t`` when it ended
    before ``t``, or at ``t`` having started before ``t`` (the ends of an instant
    come before its arrivals; a job started at ``t`` ends after them)."""
    n = len(plan.submit)
    fell_back = np.zeros(n, dtype=bool)
    requested = plan.requested
    if requested is None:
        return fell_back
    candidates = np.flatnonzero(np.isnan(np.asarray(requested, dtype=np.float64)))
    if not len(candidates):
        return fell_back
    submit = np.asarray(plan.submit, dtype=np.float64)
    end = start + np.asarray(plan.run_time, dtype=np.float64)
    lasting = start < end  # ended by an arrival at its own end time
    arrival = submit[candidates]
    if isinstance(prediction, OnlineLinearModel):
        # Only whether ``batch`` jobs had ended counts: the ``batch`` earliest ends
        # of each kind (a partition, not a sort of every end) say it.
        batch = int(prediction.batch)
        ended = np.zeros(len(candidates), dtype=np.int64)
        for ends, right in ((end[lasting], True), (end[~lasting], False)):
            if len(ends) > batch:
                ends = np.partition(ends, batch - 1)[:batch] if batch > 0 else ends[:0]
            ended += np.searchsorted(np.sort(ends), arrival, side="right" if right else "left")
        fell_back[candidates[ended < batch]] = True
        return fell_back
    user = np.asarray(plan.user, dtype=np.int64)
    # The candidates' users' jobs only (a run has few jobs without a request).
    theirs = np.isin(user, user[candidates])
    ids, code = np.unique(user[theirs], return_inverse=True)
    first_lasting = np.full(len(ids), np.inf)
    first_instant = np.full(len(ids), np.inf)
    lasting_t, end_t = lasting[theirs], end[theirs]
    np.minimum.at(first_lasting, code[lasting_t], end_t[lasting_t])
    np.minimum.at(first_instant, code[~lasting_t], end_t[~lasting_t])
    mine = np.searchsorted(ids, user[candidates])
    seen = (first_lasting[mine] <= arrival) | (first_instant[mine] < arrival)
    fell_back[candidates[~seen]] = True
    return fell_back


class Engine:
    """One simulation run. Build it, call :meth:`setup` then :meth:`run`, read the
    state's per-job lists (``engine.state.start_time`` ...)."""

    def __init__(
        self,
        prepared: Prepared,
        policy: Any,
        strategy: Any,
        estimator: Any,
        strategy_name: str = "",
        policy_name: str = "",
        estimator_name: str = "",
        estimate_fallback: Callable[[int], float] | None = None,
        estimate_fallbacks: Callable[[], np.ndarray] | None = None,
        progress: Callable[[int, int], None] | None = None,
        progress_every: int = 4096,
        machine: Any = None,
    ) -> None:
        table = prepared.table
        self.table = table
        self.n = len(table)
        self.prepared = prepared
        self.policy = policy
        self.strategy = strategy
        self.estimator = estimator
        #: The names the run was given (a registered component's name), for errors.
        self.policy_name = policy_name
        self.estimator_name = estimator_name
        self.estimate_fallback = estimate_fallback
        #: Every job's ``estimate_fallback`` at once (whole runs).
        self.estimate_fallback_all = estimate_fallbacks
        self.progress = progress
        self.progress_every = progress_every
        self.state = SchedulerState(
            table,
            policy,
            strategy_name or str(getattr(strategy, "name", type(strategy).__name__)),
            wants_running=bool(getattr(strategy, "wants_running", False)),
            wants_arrays=bool(getattr(strategy, "wants_arrays", False)),
            monotone_reservations=bool(getattr(strategy, "monotone_reservations", False)),
            machine=machine,
            demand=prepared.demand,
            partition_of=prepared.partition_of,
        )
        self.events = 0
        self.estimate_fallbacks = 0
        #: Per job (by job index): whether its estimate fell back (the estimator
        #: gave ``NaN``; ``estimate_fallbacks`` counts them).
        self.estimate_fell_back: np.ndarray | None = np.zeros(self.n, dtype=bool)
        #: Of the fallbacks, the jobs whose requested time is known (the estimator
        #: gave ``NaN`` for a reason of its own).
        self.estimate_fallbacks_requested_known = 0
        #: Estimates (after any fallback) below :data:`MIN_ESTIMATE`, raised to it,
        #: and how many of them were negative.
        self.estimates_raised = 0
        self.estimates_raised_negative = 0
        self.dependencies_honoured = 0
        #: Prediction corrections (None unless the estimator has ``correct``).
        self.correction: CorrectionLoop | None = None
        #: Whether the strategy ran the whole simulation in one call of its own
        #: (:mod:`schedlab.sim.whole_run`).
        self.whole_run = False
        self._bound = False

    def setup(self) -> None:
        """Bind the strategy to the state (a strategy loads what it needs here, e.g.
        compiled kernels: a one-time cost kept out of the measured event loop)."""
        if not self._bound:
            self._bound = True
            self.strategy.bind(self.state)

    # ------------------------------------------------------------------ helpers
    def _rekey_queue(self, now: float) -> None:
        """Recompute every waiting job's key and re-sort the queue."""
        state = self.state
        queue = state.queue
        key_array = getattr(self.policy, "key_array", None)
        if key_array is not None and len(queue) >= ARRAY_REKEY_MIN:
            self._rekey_arrays(now, key_array)
            return
        jobs = [j for _, j in queue]
        policy_keys = getattr(self.policy, "keys", None)
        if policy_keys is not None:
            keys = list(policy_keys(jobs, now))
        else:
            key = self.policy.key
            keys = [key(j, now) for j in jobs]
        key_of = state.key_of
        for j, k in zip(jobs, keys, strict=True):
            if k is None or k != k or (type(k) is tuple and _holds_nan(k)):
                raise self._bad_key(j, k, now)
            key_of[j] = k
        queue[:] = sorted(zip(keys, jobs, strict=True))
        arrays = state.arrays
        if arrays is not None and arrays.numeric_keys and jobs:
            try:
                arrays.key[jobs] = keys
            except (TypeError, ValueError):
                arrays.numeric_keys = False
        on_reorder = getattr(self.strategy, "on_reorder", None)
        if on_reorder is not None:
            on_reorder(now)

    def _rekey_arrays(self, now: float, key_array: Callable[[np.ndarray, float], Any]) -> None:
        """:meth:`_rekey_queue` for a policy with ``key_array``: the keys come as
        one float64 array and the queue is sorted by numpy (``lexsort`` on key,
        then job: the order ``sorted`` gives the ``(key, job)`` pairs)."""
        state = self.state
        queue = state.queue
        jobs = np.fromiter([j for _, j in queue], dtype=np.int64, count=len(queue))
        keys = key_array(jobs, now)
        if not isinstance(keys, np.ndarray) or keys.shape != jobs.shape or keys.dtype != np.float64:
            got = (
                f"shape {keys.shape}, dtype {keys.dtype}"
                if isinstance(keys, np.ndarray)
                else type(keys).__name__
            )
            raise SimulationError(
                f"policy {self._policy_name()}: key_array(jobs, {now:g}) returned {got}: "
                "expected a "
                f"float64 array of {len(jobs)} keys, one per job"
            )
        bad = np.isnan(keys)
        if bad.any():
            raise SimulationError(
                f"policy {self._policy_name()}: key_array(jobs, {now:g}) returned NaN for "
                f"job {int(jobs[int(np.argmax(bad))])}: a key must sort"
            )
        order = np.lexsort((jobs, keys))
        jobs = jobs[order]
        keys = keys[order]
        job_list = jobs.tolist()
        key_list = keys.tolist()
        key_of = state.key_of
        for j, k in zip(job_list, key_list, strict=True):
            key_of[j] = k
        queue[:] = zip(key_list, job_list, strict=True)
        arrays = state.arrays
        if arrays is not None and arrays.numeric_keys:
            arrays.key[jobs] = keys
        state.sorted_keys = (jobs, keys)
        on_reorder = getattr(self.strategy, "on_reorder", None)
        if on_reorder is not None:
            on_reorder(now)
        state.sorted_keys = None

    def _static_estimates(self) -> list[float] | None:
        estimates = getattr(self.estimator, "estimates", None)
        if estimates is None:
            if getattr(self.estimator, "estimate", None) is None:
                raise SimulationError(
                    f"{type(self.estimator).__name__} is not an estimator: it needs an "
                    "estimates(table) or estimate(job, now) method"
                )
            return None
        static = estimates(self.table)
        if type(static) is not list:  # (a list is only read: no copy)
            static = list(static)
        if len(static) != self.n:
            raise SimulationError(
                f"estimator {self._estimator_name()}: returned {len(static)} estimates for "
                f"{self.n} jobs"
            )
        return static

    def _whole_run(self, static_est: list[float] | None) -> bool:
        """Offer the whole run to the strategy (:mod:`schedlab.sim.whole_run`)
        when nothing in it can change while it runs but what the plan says;
        ``True`` if it was run."""
        run_whole = getattr(self.strategy, "run_whole", None)
        state = self.state
        policy = self.policy
        estimator = self.estimator
        prepared = self.prepared
        if (
            run_whole is None
            or state.reservation_log is not None
            or getattr(policy, "dynamic", False)
            or any(
                getattr(policy, hook, None) is not None
                for hook in ("on_submit", "on_start", "on_finish")
            )
            or _has_predecessors(prepared.predecessor)
        ):
            return False
        prediction: UserHistoryModel | OnlineLinearModel | None = None
        if static_est is None or getattr(estimator, "correct", None) is not None:
            history_model = getattr(estimator, "history_model", None)
            prediction = history_model() if history_model is not None else None
            if not isinstance(prediction, (UserHistoryModel, OnlineLinearModel)):
                return False
            if isinstance(prediction, OnlineLinearModel) and (
                prediction.static.ndim != 2
                or prediction.static.shape[0] != self.n
                or prediction.static.shape[1] < 1
            ):
                raise SimulationError(
                    f"{type(estimator).__name__}.history_model(): static features of shape "
                    f"{prediction.static.shape} for {self.n} jobs"
                )
        elif getattr(estimator, "on_finish", None) is not None:
            return False
        table = self.table
        # Jobs are in submit order (prepare sorts them); only dependencies move a
        # submission, and they are excluded above.
        submit = prepared.original_submit
        fallback = self.estimate_fallback
        run_time = state._run_time
        if prediction is None:
            assert static_est is not None
            # An estimator whose estimates are a column of the table says so
            # (``estimates_column``): the array that column was prepared from, as
            # np.array(static_est) would give it (no conversion of the list).
            column = getattr(estimator, "estimates_column", None)
            given = (
                prepared.requested_array
                if column == "requested_time"
                else prepared.run_time_array
                if column == "run_time"
                else None
            )
            if given is not None and given.shape == (self.n,) and given.dtype == np.float64:
                estimate = given.copy()
            else:
                estimate = np.array(static_est, dtype=np.float64)
            infinite = np.flatnonzero(np.isinf(estimate))
            if len(infinite):
                j = int(infinite[0])
                raise self._infinite_estimate(j, float(estimate[j]))
            unknown = np.flatnonzero(np.isnan(estimate))
            # The estimates the loop below would change (unknown or under the
            # minimum); the others stay the estimator's own objects in the table,
            # as the engine's loop keeps them (no second float per job: 11 MB on
            # RICC-2010).
            changed = np.flatnonzero(~(estimate >= MIN_ESTIMATE)).tolist()
            for j in unknown.tolist():
                estimate[j] = fallback(j) if fallback is not None else run_time[j]
            # What the loop would count (set once the whole run is done): fallbacks
            # with a known requested time, estimates raised after the fallbacks.
            counted = (0, 0, 0)
            if changed:
                requested = _array(prepared.requested_array, table.requested_time, np.float64)
                low = estimate[changed]
                counted = (
                    int(np.count_nonzero(~np.isnan(requested[unknown]))),
                    int(np.count_nonzero(low < MIN_ESTIMATE)),
                    int(np.count_nonzero(low < 0)),
                )
            np.maximum(estimate, MIN_ESTIMATE, out=estimate)
            table_estimate = table.estimate
            table_estimate[:] = static_est
            for j in changed:
                table_estimate[j] = float(estimate[j])
        else:
            # What an unknown prediction falls back to (the engine's fallback).
            every = self.estimate_fallback_all
            if every is not None:
                estimate = np.asarray(every(), dtype=np.float64)
            elif fallback is not None:
                estimate = np.array([fallback(j) for j in range(self.n)], dtype=np.float64)
            else:
                estimate = np.array(run_time, dtype=np.float64)
        # With predictions, no estimate is in the table yet: a policy's ``key`` is
        # not called before its job's estimate is known (docs/plugins.md), so only
        # a declared ``static_keys`` can give the keys (it sees the NaN estimates
        # and declines for keys that depend on them).
        key_array = self._static_keys(submit, probe=prediction is None)
        if key_array is None:
            return False
        size = prepared.size_array
        run_time_array = prepared.run_time_array
        plan = WholeRun(
            procs=state.procs,
            submit=np.asarray(submit, dtype=np.float64),
            size=np.array(state._size, dtype=np.int64) if size is None else size,
            run_time=(
                np.array(run_time, dtype=np.float64) if run_time_array is None else run_time_array
            ),
            estimate=estimate,
            key=key_array,
            strategy_name=state.strategy_name,
            machine=state.machine,
            demand=prepared.demand if state.machine is not None else None,
            partition_of=(
                None
                if state.machine is None
                else np.asarray(prepared.partition_of, dtype=np.int64)
                if prepared.partition_array is None
                else prepared.partition_array
            ),
            prediction=prediction,
            user=None if prediction is None else _array(prepared.user_array, table.user, np.int64),
            requested=(
                None
                if prediction is None
                else _array(prepared.requested_array, table.requested_time, np.float64)
            ),
        )
        outcome = run_whole(plan)
        if outcome is None:
            return False
        if not isinstance(outcome, WholeRunOutcome):
            raise SimulationError(
                f"backfill {state.strategy_name!r}: run_whole() returned "
                f"{type(outcome).__name__}, not a WholeRunOutcome or None"
            )
        machine = state.machine
        if machine is None:
            check_outcome(plan, outcome, table.job_number)
        else:
            # check_outcome and check_allocations, a compiled pass answering first
            check_node_outcome(plan, outcome, table.job_number)
            # Every job has ended: the machine is idle again, and keeps what each
            # job got (as the pass-by-pass run leaves it).
            offset, nodes, amounts = outcome.node_offset, outcome.nodes, outcome.amounts
            assert offset is not None and nodes is not None and amounts is not None
            machine.given = AllocationColumns(offset, nodes, amounts)
        start = np.asarray(outcome.start, dtype=np.float64)
        if prediction is not None:
            if outcome.estimate is None or outcome.estimated_end is None:
                raise SimulationError(
                    f"backfill {state.strategy_name!r}: its whole run with predictions "
                    "gave no estimates"
                )
            estimate = np.asarray(outcome.estimate, dtype=np.float64)
            # The table's list (and the state's) is filled when first read.
            table.keep_estimates(estimate)
            self.estimate_fallbacks = int(outcome.estimate_fallbacks)
            fell_back = _prediction_fallbacks(prediction, plan, start)
            # Found again from the schedule by the model's rules: should they ever
            # disagree with the run's own count, which jobs fell back is left
            # unknown (``None``: the metrics then take every estimate as given)
            # rather than failing a run whose schedule is right.
            self.estimate_fell_back = (
                fell_back if int(fell_back.sum()) == self.estimate_fallbacks else None
            )
            # A prediction is unknown only without a requested time (no fallback
            # with a known one), and is never negative (requested and run times are
            # not). One below MIN_ESTIMATE was raised to it: the whole run counts
            # those (``estimates_raised``, as the loop does: strictly below, so an
            # estimate of exactly 1 ms is not raised). A whole run that does not
            # count them leaves only the estimates at submission, where a raised
            # one and one of exactly MIN_ESTIMATE look the same: both are counted.
            raised = outcome.estimates_raised
            self.estimates_raised = (
                int(raised)
                if raised is not None
                else int(np.count_nonzero(estimate <= MIN_ESTIMATE))
            )
            correct = getattr(estimator, "correct", None)
            if correct is not None:
                loop = self.correction = CorrectionLoop(correct, state, self.strategy)
                loop.name = self._estimator_name()
                loop.corrections = int(outcome.corrections)
                if outcome.corrected is not None:
                    loop.whole_raised = int(np.count_nonzero(outcome.corrected))
            estimated_end = np.asarray(outcome.estimated_end, dtype=np.float64)
        else:
            self.estimate_fallbacks = len(unknown)
            marked = np.zeros(self.n, dtype=bool)
            marked[unknown] = True
            self.estimate_fell_back = marked
            (
                self.estimate_fallbacks_requested_known,
                self.estimates_raised,
                self.estimates_raised_negative,
            ) = counted
            estimated_end = start + estimate
        # The state's per-job lists, built only if read (the output reads arrays).
        state.keep_columns(
            start_time=start,
            end_time=start + plan.run_time,
            estimated_end=estimated_end,
            estimate=estimate,
        )
        state.passes = int(outcome.passes)
        self.events = 2 * self.n
        self.whole_run = True
        done = getattr(estimator, "on_whole_run", None)
        if done is not None:
            done(plan, outcome)
        if self.progress is not None:
            self.progress(self.n, self.n)
        return True

    def _policy_name(self) -> str:
        policy = self.policy
        return self.policy_name or str(getattr(policy, "name", None) or type(policy).__name__)

    def _estimator_name(self) -> str:
        estimator = self.estimator
        return self.estimator_name or str(
            getattr(estimator, "name", None) or type(estimator).__name__
        )

    def _infinite_estimate(self, job: int, value: float = INF) -> SimulationError:
        number = self.table.job_number[job]
        what = "infinite" if value > 0 else "-inf"
        return SimulationError(
            f"estimator {self._estimator_name()}: job {number} (index {job}): the estimate "
            f"is {what}: an estimate must be a finite number of seconds (nan for unknown)"
        )

    def _rekey_period(self) -> float:
        """The policy's ``rekey_period``: a finite number of seconds >= 0 (NaN
        would never re-sort the queue again)."""
        period = getattr(self.policy, "rekey_period", 0.0)
        if period is None:
            return 0.0
        try:
            value = float(period)
        except (TypeError, ValueError):
            value = math.nan
        if isinstance(period, bool) or not 0.0 <= value < math.inf:
            raise SimulationError(
                f"policy {self._policy_name()}: rekey_period={period!r}: expected a finite "
                "number of seconds >= 0"
            )
        return value

    def _bad_wakeup(self, w: Any) -> StrategyError:
        state = self.state
        when = "before the first event" if state.now == -INF else f"at t={state.now:g}"
        return StrategyError(
            f"backfill {state.strategy_name!r}: next_wakeup() returned {w!r} {when}: a "
            "wake-up must be a time not before the current one (inf for none)"
        )

    def _wakeup_for_nothing(self, now: float, arrival: float) -> StrategyError:
        """The error for a wake-up asked again at the current time with no job
        waiting and no idle passes: no pass runs, nothing changes, so the
        strategy would be woken at that instant forever."""
        state = self.state
        when = "before the first event" if now == -INF else f"at t={now:g}"
        nxt = f" (the next job arrives at t={arrival:g})" if arrival < INF else ""
        return StrategyError(
            f"backfill {state.strategy_name!r}: next_wakeup() returned {now:g} again {when} "
            f"with the clock standing still and no job waiting{nxt}: it would wake up "
            "forever"
        )

    # ------------------------------------------------------------ table checks
    def _suspects(self, *kinds: str) -> str:
        """The components of ``kinds`` (policy, estimator, backfill) that could
        have written into the job table, as ``"policy 'x' or backfill 'y'"``:
        the third-party ones (not schedlab's own modules) when there are any."""
        named: list[tuple[str, Any, str]] = []
        for kind in kinds:
            if kind == "policy":
                # a plain function given as the policy is the suspect, not its wrapper
                named.append(
                    (kind, getattr(self.policy, "function", self.policy), self._policy_name())
                )
            elif kind == "estimator":
                named.append((kind, self.estimator, self._estimator_name()))
            else:
                strategy = self.strategy
                if type(strategy).__module__ == "schedlab.sim.stepping":
                    strategy = strategy.inner  # a stepping simulation's hand-over
                named.append((kind, strategy, self.state.strategy_name))
        third = [
            c
            for c in named
            if not str(getattr(c[1], "__module__", None) or "").startswith("schedlab.")
        ]
        return " or ".join(f"{kind} {name!r}" for kind, _, name in third or named)

    def check_table(self, when: str = "during the run") -> None:
        """A :class:`SimulationError` naming the components that could have done
        it if the job table's ``size``, ``run_time`` or ``submit`` no longer hold
        what the engine runs with (the lists it took, with their fingerprints
        from before any component saw them): ``when`` is ``"in bind"`` (the
        policy or the estimator) or ``"during the run"`` (any of them). O(n):
        once after ``bind``, once at the end."""
        state = self.state
        table = self.table
        for field, mine in (
            ("size", state._size),
            ("run_time", state._run_time),
            ("submit", state._submit),
        ):
            theirs = getattr(table, field)
            if theirs is not mine:
                change = f"{field} was replaced by another {type(theirs).__name__}"
                first = self._first_change(field, theirs) if isinstance(theirs, list) else None
                if first is not None:
                    change = f"{change} ({first})"
            elif field == "submit" and state._submit_copy is not None:
                copy = state._submit_copy
                if theirs == copy:
                    continue
                i = next(i for i, (a, b) in enumerate(zip(theirs, copy, strict=True)) if a != b)
                number = table.job_number[i]
                change = f"{field} of job {number} (index {i}) is {theirs[i]!r}, was {copy[i]!r}"
            elif list_print(theirs) == state._prints[field]:
                continue
            else:
                change = self._first_change(field, theirs) or f"a value of {field} was changed"
            kinds = ("policy", "estimator") if when == "in bind" else _ALL_KINDS
            raise SimulationError(
                f"{self._suspects(*kinds)} changed the job table {when}: {change} "
                "(components must only read the JobTable's lists)"
            )

    def _reference(self, field: str) -> np.ndarray | None:
        """The values of ``field`` the table was built with, by job index: the
        prepared arrays, or, once the event loop dropped them (memory), the same
        arrays rebuilt from the workload's columns as ``prepare`` built them,
        trusted only when they give the fingerprint taken
        before any component saw the table (``None`` otherwise). Only an error
        calls this, so the rebuilding costs nothing in a run."""
        prepared = self.prepared
        kept = {
            "size": prepared.size_array,
            "run_time": prepared.run_time_array,
            "submit": prepared.original_submit,
        }[field]
        if kept is not None:
            return kept
        try:
            columns = self.table.columns
            with np.errstate(invalid="ignore"):
                if field == "size":
                    requested = columns["requested_processors"]
                    values = np.ceil(
                        np.where(requested > 0, requested, columns["allocated_processors"])
                    ).astype(np.int64)
                else:
                    limit = columns["requested_time"]
                    limit = np.where(limit >= 0, limit, np.nan)
                    values = np.where(prepared.killed, limit, columns["run_time"])
            if len(values) != self.n or list_print(values.tolist()) != self.state._prints[field]:
                return None
        except (KeyError, TypeError, ValueError, OverflowError):
            return None
        return values

    def _first_change(self, field: str, theirs: list[Any]) -> str | None:
        """Which job's ``field`` a component changed, found against the values the
        table was built with (:meth:`_reference`; ``None`` when they are not known
        or no value differs)."""
        ref = self._reference(field)
        if ref is None or len(ref) != len(theirs):
            return None
        try:
            got = np.asarray(theirs, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            return None
        with np.errstate(invalid="ignore"):
            same = (got == ref) | (np.isnan(got) & np.isnan(ref))
        changed = np.flatnonzero(~same)
        if not len(changed):
            return None
        i = int(changed[0])
        number = self.table.job_number[i]
        return f"{field} of job {number} (index {i}) is {theirs[i]!r}, was {ref[i].item()!r}"

    def _never_started(self) -> SimulationError:
        """The error for jobs that left the queue without starting (a strategy
        deleting entries of ``state.queue``)."""
        state = self.state
        start = state.start_time
        missing = [j for j in range(self.n) if start[j] != start[j]]
        j = missing[0]
        number = self.table.job_number[j]
        label = f"job {number}" if number >= 0 else f"job index {j}"
        return StrategyError(
            f"backfill {state.strategy_name!r}: {len(missing):,} jobs never started "
            f"({label} (index {j}) first) and are not waiting: a job leaves the queue "
            "only by start()"
        )

    def _refused_on_idle(self) -> SimulationError | None:
        """With a platform and an allocation policy that is not trusted, when a run
        leaves jobs waiting (or a strategy found one that fits nothing): the error
        naming the policy if it refuses a waiting job on the idle partition that
        holds it (by the built-in rules, :meth:`NodeMachine.fits_empty`), else
        ``None``."""
        state = self.state
        machine = state.machine
        if machine is None or machine.trusted:
            return None
        assert state.demand is not None and state.partition_of is not None
        asked: set[tuple[int, int]] = set()  # jobs share their demand objects
        for _, j in state.queue:
            demand, p = state.demand[j], state.partition_of[j]
            if (id(demand), p) in asked:
                continue
            asked.add((id(demand), p))
            idle = machine.capacity.copy()
            if machine.fits_empty(demand, p) and machine.allocate(demand, p, idle) is None:
                number = self.table.job_number[j]
                label = f"job {number}" if number >= 0 else f"job index {j}"
                return SimulationError(
                    f"allocation policy {machine.allocator_name!r} refused {label} (index "
                    f"{j}) on its idle partition {machine.partitions[p].name!r}, which holds "
                    "it: the job could never start"
                )
        return None

    def _spinning(self, now: float, still: bool) -> StrategyError:
        state = self.state
        where = "with the clock standing still" if still else "on an idle machine"
        return StrategyError(
            f"backfill {state.strategy_name!r}: {len(state.queue):,} jobs waiting at "
            f"t={now:g}, and {IDLE_WAKEUP_LIMIT:,} wake-ups in a row started none of "
            f"them {where} (nothing else would happen)"
        )

    def _bad_key(self, job: int, key: Any, now: float) -> SimulationError:
        """The error for a key the queue cannot sort by (``None``, NaN): it named
        the backfilling strategy, which found the queue out of order."""
        return SimulationError(
            f"policy {self._policy_name()}: key({job}, {now:g}) returned {key!r}: a key "
            "must sort (a number or a tuple of numbers), not None or NaN (nor hold NaN)"
        )

    def _static_keys(self, submit: np.ndarray, probe: bool = True) -> np.ndarray | None:
        """Every job's key at its submission as float64 (the policy's
        ``static_keys(table)``, else, with ``probe``, ``key(job, submit)`` job by
        job: the table's estimates must then be filled), or ``None`` when they are
        not all plain numbers exact in float64."""
        policy = self.policy
        static_keys = getattr(policy, "static_keys", None)
        if static_keys is not None:
            keys = np.asarray(static_keys(self.table))
            if keys.shape != (self.n,) or keys.dtype.kind not in "iuf":
                return None
        elif not probe:
            return None
        else:
            key = policy.key
            listed = [key(j, t) for j, t in enumerate(submit.tolist())]
            if not all(type(k) is float or type(k) is int for k in listed):
                return None
            keys = np.array(listed)
            if keys.dtype.kind not in "iuf":
                return None
        key_array = np.asarray(keys, dtype=np.float64)
        if np.isnan(key_array).any() or (np.abs(key_array) >= 2.0**53).any():
            return None
        return key_array

    # ------------------------------------------------------------------ main loop
    def run(self) -> None:
        """Simulate every job, then check that no component wrote into the job
        table (:meth:`check_table`)."""
        try:
            self._run()
        except SimulationError:
            # A strategy refused by the state after a component changed the
            # table (sizes), or stopped by an allocation policy refusing a job
            # the idle machine holds: that is the cause, named instead.
            self.check_table()
            refused = self._refused_on_idle()
            if refused is not None:
                raise refused from None
            raise
        self.check_table()

    def _run(self) -> None:
        n = self.n
        if n == 0:
            return
        self.setup()
        static_est = self._static_estimates()
        if self._whole_run(static_est):
            return
        # The arrays only a whole run reads: not kept through the loop (memory).
        prepared = self.prepared
        prepared.size_array = prepared.run_time_array = None
        prepared.user_array = prepared.requested_array = prepared.partition_array = None
        state = self.state
        strategy = self.strategy
        table = self.table
        # The engine's own copies (the table's lists are the components' to read).
        submit = state._submit
        table_submit = table.submit
        size = state._size
        est = table.estimate
        run_time = state._run_time
        requested = table.requested_time
        fell_back = self.estimate_fell_back
        assert fell_back is not None
        predecessor = self.prepared.predecessor
        think_time = self.prepared.think_time
        # Independent jobs arrive from a stream sorted by job index (= submit order);
        # dependent ones are released into a heap when their predecessor ends.
        stream: range | list[int] = range(n)  # no dependencies: every job, no list
        dependents: dict[int, list[int]] = {}
        if max(predecessor) >= 0:
            # The engine writes release times into ``submit``: from here on the
            # table is checked against a copy that gets the same writes.
            self.check_table()
            state._submit_copy = submit = list(table_submit)
            stream = [j for j in range(n) if predecessor[j] < 0]
            for j in range(n):
                p = predecessor[j]
                if p >= 0:
                    dependents.setdefault(p, []).append(j)
        release_heap: list[tuple[float, int]] = []
        n_stream = len(stream)
        si = 0

        # Present whenever static_est is None (checked by _static_estimates).
        estimate_one = cast(
            Callable[[int, float], float], getattr(self.estimator, "estimate", None)
        )
        fallback = self.estimate_fallback

        schedule = strategy.schedule
        wakeup = getattr(strategy, "next_wakeup", None)
        strategy_finish = getattr(strategy, "on_finish", None)
        strategy_submit = getattr(strategy, "on_submit", None)
        idle_passes = bool(getattr(strategy, "idle_passes", False))

        policy = self.policy
        policy_key = policy.key
        dynamic = bool(getattr(policy, "dynamic", False))
        # A dynamic policy's keys are recalculated at a pass at least this long
        # after the previous recalculation (0: at every pass).
        rekey_period = self._rekey_period()
        next_rekey = -math.inf
        on_submit = getattr(policy, "on_submit", None)
        on_finish = getattr(policy, "on_finish", None)
        est_on_finish = getattr(self.estimator, "on_finish", None)
        correct = getattr(self.estimator, "correct", None)
        watch = None
        if correct is not None:
            watch = self.correction = CorrectionLoop(correct, state, strategy)
            watch.name = self._estimator_name()

        machine = state.machine
        fh = state.finish_heap
        queue = state.queue
        key_of = state.key_of
        running = state.running
        est_end = state.estimated_end
        new_jobs = state.new_jobs
        arrays = state.arrays
        if arrays is not None:
            a_size, a_est, a_key = arrays.size, arrays.estimate, arrays.key
        progress = self.progress
        every = self.progress_every
        done = 0
        tick = 0
        idle_wakeups = 0

        while True:
            t = fh[0][0] if fh else INF
            if si < n_stream:
                ts = submit[stream[si]]
                if ts < t:
                    t = ts
            if release_heap and release_heap[0][0] < t:
                t = release_heap[0][0]
            woken = False
            if wakeup is not None:
                w = wakeup()
                if w < t:
                    if not w >= state.now:
                        raise self._bad_wakeup(w)
                    t = w
                    woken = True
                elif w != w:
                    raise self._bad_wakeup(w)
            if watch is not None:
                w = watch.next_time()
                if w < t:
                    t = w
                    woken = False
            if t == INF:
                break
            still = t == state.now
            if woken and (still or (not fh and si >= n_stream and not release_heap)):
                # Only a wake-up brings this pass, and either the clock stands
                # still or nothing runs and nothing will arrive: a strategy that
                # starts nothing here would wake up forever.
                if still and not queue and not idle_passes:
                    # No pass runs at all: nothing can change.
                    arrival = submit[stream[si]] if si < n_stream else INF
                    raise self._wakeup_for_nothing(t, arrival)
                waiting = len(queue)
            else:
                waiting = -1
                idle_wakeups = 0
            now = t
            state.now = now

            # 1. finishes
            while fh and fh[0][0] == now:
                _, j = heappop(fh)
                if machine is None:
                    state.free = state._free = state._free + size[j]
                else:
                    state.free = state._free = state._free + machine.release(j)
                if running is not None:
                    del running[bisect_left(running, (est_end[j], j))]
                state.finished_since_pass = True
                self.events += 1
                done += 1
                if strategy_finish is not None:
                    strategy_finish(j, now)
                if on_finish is not None and on_finish(j, now):
                    state.rekey = True
                if est_on_finish is not None:
                    est_on_finish(j, now)
                deps = dependents.get(j)
                if deps:
                    for d in deps:
                        heappush(release_heap, (now + think_time[d], d))
            if watch is not None:
                watch.apply(now)  # estimates of jobs that outlived them are raised

            # 2. submissions, in job order
            arriving: list[int] | None = None
            while si < n_stream and submit[stream[si]] == now:
                if arriving is None:
                    arriving = []
                arriving.append(stream[si])
                si += 1
            if release_heap and release_heap[0][0] == now:
                if arriving is None:
                    arriving = []
                while release_heap and release_heap[0][0] == now:
                    _, d = heappop(release_heap)
                    submit[d] = table_submit[d] = now
                    self.dependencies_honoured += 1
                    arriving.append(d)
                arriving.sort()
            if arriving is not None:
                for j in arriving:
                    self.events += 1
                    e = static_est[j] if static_est is not None else estimate_one(j, now)
                    if e != e:
                        self.estimate_fallbacks += 1
                        fell_back[j] = True
                        if requested[j] == requested[j]:
                            self.estimate_fallbacks_requested_known += 1
                        e = fallback(j) if fallback is not None else run_time[j]
                    elif e == INF:
                        raise self._infinite_estimate(j)
                    if e < MIN_ESTIMATE:
                        if e == -INF:
                            raise self._infinite_estimate(j, e)
                        self.estimates_raised += 1
                        if e < 0:
                            self.estimates_raised_negative += 1
                        e = MIN_ESTIMATE
                    est[j] = e
                    if on_submit is not None and on_submit(j, now):
                        state.rekey = True
                    k = policy_key(j, now)
                    # None, or NaN: the queue could not sort
                    if k is None or k != k or (type(k) is tuple and _holds_nan(k)):
                        raise self._bad_key(j, k, now)
                    key_of[j] = k
                    insort(queue, (k, j))
                    new_jobs.append(j)
                    if arrays is not None:
                        a_size[j] = size[j]
                        a_est[j] = e
                        if type(k) is float or type(k) is int:
                            a_key[j] = k
                        else:
                            arrays.numeric_keys = False
                        if j >= arrays.hi:
                            arrays.hi = j + 1
                        if j < arrays.lo:  # a dependent job released late
                            arrays.lo = j
                    if strategy_submit is not None:
                        strategy_submit(j, now)

            # 3. one scheduling pass
            state.real_event = state.finished_since_pass or arriving is not None
            if (dynamic and now >= next_rekey) or state.rekey:
                if queue:
                    self._rekey_queue(now)
                if dynamic:
                    next_rekey = now + rekey_period
                state.rekey = False
                state.finished_since_pass = True
            if queue or idle_passes:
                state.passes += 1
                schedule(now)
            if waiting >= 0:
                if len(queue) < waiting:
                    idle_wakeups = 0
                else:
                    idle_wakeups += 1
                    if idle_wakeups > IDLE_WAKEUP_LIMIT:
                        raise self._spinning(now, still)
            new_jobs.clear()
            state.finished_since_pass = False

            if progress is not None:
                tick += 1
                if tick >= every:
                    tick = 0
                    progress(done, n)

        if queue:
            refused = self._refused_on_idle()
            if refused is not None:
                raise refused
            raise SimulationError(
                f"backfill {state.strategy_name!r}: {len(queue)} jobs still waiting with no "
                "event left (the strategy never started them and asked for no wake-up)"
            )
        if done < n:
            raise self._never_started()
        if progress is not None:
            progress(done, n)
