"""Whole runs: a backfilling strategy that can simulate a whole run by itself.

The engine's event loop (:mod:`schedlab.sim.engine`) calls the strategy once per
scheduling pass, in Python. For the common case of a run whose every input is
known before it starts, a strategy may offer to run the whole simulation in one
call of its own (a compiled loop), with exactly the engine's semantics:

* at each instant, the jobs ending then free their processors, then the jobs
  submitted then join the queue in job order, then one scheduling pass follows
  when jobs wait; a job started with a run time of 0 ends at the same instant,
  which gives a second round at that time;
* a job's estimate and priority key are those given in the plan below.

The engine offers a :class:`WholeRun` only when nothing in the run can change
during it but what the plan describes: a single pool of processors (no platform
file), no dependencies, a policy that is not ``dynamic`` and has no
notifications (``on_submit``, ``on_start``, ``on_finish``) and whose keys are
plain numbers known at submission (``static_keys``), no reservation log (tests),
and an estimator that either has static ``estimates`` (and no ``correct`` or
``on_finish``) or says, with ``history_model()``, that its predictions are
exactly a :class:`UserHistoryModel` (the plan's ``prediction``: the strategy
then predicts at submission and corrects as the model says, or declines).
The strategy's ``run_whole(plan)`` returns ``None`` to decline (the engine then
runs its own loop) or a :class:`WholeRunOutcome`.

The state cannot check each start of a whole run as it happens, so the engine
checks the outcome as a whole with :func:`check_outcome` (every job started, none
before its submission, the machine never over-committed) before it accepts it;
the strategy answers for its own contract (EASY's head reservation), as its
differential tests against its per-pass implementation do.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np

from .state import StrategyError


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
      :data:`schedlab.sim.engine.MIN_ESTIMATE`;
    * a job reaching its estimated end still running is corrected by the rule
      ``correction`` of :mod:`schedlab.sim.correction` (``"none"``: never),
      after the ends of that instant and before its arrivals.
    """

    window: int
    correction: str = "none"


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
    #: (fallbacks applied, at least :data:`schedlab.sim.engine.MIN_ESTIMATE`);
    #: with a ``prediction``, the estimates to take where a prediction is unknown.
    estimate: np.ndarray
    #: Priority keys (lowest first, ties by job index), as the policy gives them
    #: at submission (float64, no NaN).
    key: np.ndarray
    #: The strategy's name (for errors).
    strategy_name: str = ""
    #: Estimates predicted during the run (``None``: ``estimate`` as given).
    prediction: UserHistoryModel | None = None
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
    #: With a prediction: the estimate each job got at submission, its estimated
    #: end at the end of the run (after corrections), whether it was corrected
    #: (bool), the corrections made and the predictions that fell back.
    estimate: np.ndarray | None = None
    estimated_end: np.ndarray | None = None
    corrected: np.ndarray | None = None
    corrections: int = 0
    estimate_fallbacks: int = 0


def check_outcome(plan: WholeRun, outcome: WholeRunOutcome, job_number: Sequence[int]) -> None:
    """A :class:`~schedlab.sim.state.StrategyError` unless every job started, at
    or after its submission, and the processors in use never exceed the machine
    (ends before starts at the same instant)."""
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
    bad = np.flatnonzero(~(start >= plan.submit))
    if len(bad):
        j = int(bad[0])
        what = "never started" if start[j] != start[j] else "started before its submission"
        raise fail(j, what, float(start[j]) if start[j] == start[j] else float(plan.submit[j]))
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


__all__ = ["UserHistoryModel", "WholeRun", "WholeRunOutcome", "check_outcome"]
