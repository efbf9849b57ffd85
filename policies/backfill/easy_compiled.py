"""EASY backfilling on the compiled pass (:mod:`.easy_kernels`, numba): the same
decisions as :class:`~.easy.PythonEasy`, job for job.

The kernel keeps copies of the wait queue and of the running jobs; what changes
them outside a full pass reaches it with the next call: arrivals (inserted by
their numeric keys, or at the positions the queue gives them when keys are not
plain numbers), ends, jobs started by the arrivals-only shortcut, and a re-sorted
queue (copied again whole). Passes after arrivals only, with the same head, run
in Python as in :class:`~.easy.PythonEasy` (only the arrivals may backfill): they
cost less than a call.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

import numpy as np
from schedlab.errors import SimulationError
from schedlab.sim import (
    MIN_ESTIMATE,
    TSAFRIR_INCREMENTS,
    OnlineLinearModel,
    SchedulerState,
    UserHistoryModel,
    WholeRun,
    WholeRunOutcome,
)
from schedlab.sim.online_linear import log_targets

from . import easy_kernels as kn

# The kernel counts a job's corrections in a byte, up to the number of increments.
assert len(TSAFRIR_INCREMENTS) <= 255, "easy_kernels.RunArrays.misses: a byte per job"

#: Numeric keys are compared as float64: integers beyond 2**53 are not exact.
EXACT_INT = 2**53
#: The correction rules the whole run knows (schedlab.sim.correction), by code.
CORRECTION_CODES = {"none": 0, "tsafrir": 1, "requested": 2}


def dense_users(user: np.ndarray) -> tuple[np.ndarray, int]:
    """Every job's user as a row of the kernel's histories, and the rows: the id
    minus the smallest when the ids span at most the jobs and 1,024 more (no sort),
    else the rank among the distinct ids. Jobs of one id share a row, and no two
    ids do (ids with no job may hold a row: it stays empty)."""
    n = len(user)
    if n == 0:
        return np.zeros(0, dtype=np.int64), 1
    lo = int(user.min())
    span = int(user.max()) - lo + 1
    if span <= n + 1024:
        return np.asarray(user, dtype=np.int64) - lo, span
    ids, inverse = np.unique(user, return_inverse=True)
    return inverse.astype(np.int64), len(ids)


def prediction_arrays(plan: WholeRun) -> kn.RunArrays | None:
    """The arrays a whole run predicts with (:class:`.easy_kernels.RunArrays`, its
    ``model`` set) for ``plan``: its prediction's model and correction, or none (the
    estimates as given); ``None`` (decline) for a model or a correction rule the
    kernels do not know. The single pool's and the node-level whole runs share it."""
    n = len(plan.submit)
    model = plan.prediction
    if model is None:
        return kn.RunArrays(n, 1, 1)
    if not isinstance(model, (UserHistoryModel, OnlineLinearModel)):
        return None
    if model.correction not in CORRECTION_CODES or model.window < 1:
        return None
    if isinstance(model, OnlineLinearModel) and (
        model.batch < 1
        or model.static.ndim != 2
        or model.static.shape[0] != n
        or (model.targets is not None and np.shape(model.targets) != (n,))
    ):
        return None
    assert plan.user is not None and plan.requested is not None
    user, users = dense_users(plan.user)
    run = kn.RunArrays(n, users, model.window)
    code = CORRECTION_CODES[model.correction]
    if isinstance(model, OnlineLinearModel):
        run.model[:] = (kn.PREDICT_LINEAR, model.window, code, model.batch)
        # Without the model's own targets, as the model defines them (a third
        # party's estimator computing its own otherwise risks a last-bit drift: see
        # OnlineLinearModel).
        targets = model.targets
        if targets is None:
            targets = log_targets(plan.run_time, model.scale)
        run.linear(
            np.asarray(model.static, dtype=np.float64),
            model.batch,
            model.rate,
            model.under_weight,
            model.scale,
            targets,
        )
    else:
        run.model[:] = (kn.PREDICT_HISTORY, model.window, code, 1)
    # Read only by the kernel: the plan's arrays themselves (no copies).
    run.user = user
    run.requested = np.ascontiguousarray(plan.requested, dtype=np.float64)
    run.fallback = np.ascontiguousarray(plan.estimate, dtype=np.float64)
    run.increments = np.array(TSAFRIR_INCREMENTS, dtype=np.float64)
    return run


def prediction_outcome(
    plan: WholeRun, run: kn.RunArrays, estimate: np.ndarray, estimated_end: np.ndarray
) -> dict[str, Any]:
    """The fields of a :class:`~schedlab.sim.WholeRunOutcome` that a run with a
    prediction fills (none without one): every job's last estimate and estimated
    end (copies of the kernel's rows), the jobs raised, the counts, the weights."""
    if plan.prediction is None:
        return {}
    return {
        "estimate": estimate.copy(),
        "estimated_end": estimated_end.copy(),
        "corrected": run.corrected.view(np.bool_),
        "corrections": int(run.counts[kn.COUNT_CORRECTIONS]),
        "estimate_fallbacks": int(run.counts[kn.COUNT_FALLBACKS]),
        "trained": int(run.counts[kn.COUNT_TRAINED]),
        "estimates_raised": int(run.counts[kn.COUNT_RAISED]),
        "weights": (run.lin_w.copy() if isinstance(plan.prediction, OnlineLinearModel) else None),
    }


class CompiledEasy:
    """EASY's pass, ends, arrivals and re-sorts on the compiled kernel."""

    def __init__(self, state: SchedulerState) -> None:
        kn.warm_up()
        self.state = state
        self.meta, self.ints, self.floats, self.rints, self.rend = kn.new_arrays(
            state.n, state.size
        )
        self.pending_row = self.ints[kn.PENDING]
        self.pending_at = self.ints[kn.PENDING_AT]
        self.run_new = self.ints[kn.RUN_NEW]
        self.finished = self.ints[kn.FINISHED]
        self.out = self.ints[kn.OUT]
        self.job_estimate = self.floats[kn.JOB_ESTIMATE]
        self.job_key = self.floats[kn.JOB_KEY]
        self.job_end = self.floats[kn.JOB_END]
        self.numeric = True
        #: Arrivals not yet in the kernel's queue (still waiting).
        self.pending: list[int] = []
        self.n_run_new = 0
        self.n_finished = 0
        self.rebuild = False
        #: (head, shadow time, extra processors) of the last pass.
        self.last: tuple[int, float, int] | None = None

    def running_jobs(self) -> list[tuple[float, int]]:
        """The running jobs as ``(estimated end, job)``, sorted, as of the last
        full pass and the ends and starts since."""
        jobs = {}
        for b in self.rints[kn.B_ORDER][: self.meta[kn.M_BLOCKS]].tolist():
            slots = slice(b * kn.RUN_BLOCK, b * kn.RUN_BLOCK + int(self.rints[kn.B_COUNT, b]))
            ends = self.rend[slots].tolist()
            for e, j in zip(ends, self.rints[kn.R_JOB, slots].tolist(), strict=True):
                jobs[j] = e
        for j in self.run_new[: self.n_run_new].tolist():
            jobs[j] = float(self.job_end[j])
        for j in self.finished[: self.n_finished].tolist():
            jobs.pop(j, None)
        return sorted((e, j) for j, e in jobs.items())

    def run_whole(self, plan: WholeRun) -> WholeRunOutcome | None:
        """The whole simulation in one kernel call (:func:`.easy_kernels.easy_run`),
        when the engine offers it (:mod:`schedlab.sim.whole_run`): the same
        decisions as the pass-by-pass run, predictions (a
        :class:`~schedlab.sim.UserHistoryModel` or an
        :class:`~schedlab.sim.OnlineLinearModel`, whose learning steps it makes
        too) and corrections included (``None``, declined, for a model or a
        correction rule it does not know)."""
        n = len(plan.submit)
        run = prediction_arrays(plan)
        if run is None:
            return None
        meta, ints, floats, rints, rend = kn.new_arrays(n, plan.size)
        floats[kn.JOB_KEY, :n] = plan.key
        if plan.prediction is None:
            floats[kn.JOB_ESTIMATE, :n] = plan.estimate
        passes, status = kn.easy_run(
            meta,
            ints,
            floats,
            rints,
            rend,
            plan.submit,
            plan.run_time,
            plan.procs,
            *run.arguments(MIN_ESTIMATE),
        )
        if status:
            raise SimulationError(
                f"backfill {self.state.strategy_name!r}: the compiled EASY run "
                + (
                    "left jobs waiting with no event left"
                    if status == 1
                    else "lost track of a running job"
                )
                + " (please report this)"
            )
        return WholeRunOutcome(
            start=run.start,
            passes=passes,
            **prediction_outcome(plan, run, floats[kn.JOB_ESTIMATE, :n], floats[kn.JOB_END, :n]),
        )

    def on_finish(self, j: int, now: float) -> None:
        """A job ended: it leaves the kernel's running jobs at the next call."""
        self.finished[self.n_finished] = j
        self.n_finished += 1

    def on_estimate_raised(self, job: int, old_end: float, now: float) -> None:
        """A prediction correction raised a running job's estimate: the kernel's
        running jobs take its new estimated end (at the next call if the job is
        still among the starts it has not seen), and the next pass is a full one."""
        new_end = self.state.estimated_end[job]
        n = self.n_run_new
        if n and job in self.run_new[:n].tolist():
            self.job_end[job] = new_end
        elif not kn.move_running(
            self.meta, self.ints, self.floats, self.rints, self.rend, job, old_end, new_end
        ):
            raise SimulationError(
                f"backfill {self.state.strategy_name!r}: the compiled EASY pass lost track "
                f"of running job index {job} (please report this)"
            )
        self.last = None

    def on_manual_start(self, job: int, now: float) -> None:
        """``job`` was started outside the pass (a stepping simulation's caller):
        it joins the kernel's running jobs and the kernel copies the queue again
        at the next call."""
        self.job_end[job] = self.state.estimated_end[job]
        self.run_new[self.n_run_new] = job
        self.n_run_new += 1
        self.rebuild = True
        self.last = None

    def on_reorder(self, now: float) -> None:
        """The queue was re-sorted: the kernel copies it again at the next call."""
        self.rebuild = True

    def _arrivals(self, new_jobs: list[int]) -> None:
        state = self.state
        estimate = state.estimate
        job_estimate = self.job_estimate
        if self.numeric:
            key_of = state.key_of
            job_key = self.job_key
            for j in new_jobs:
                job_estimate[j] = estimate[j]
                k = key_of[j]
                kind = type(k)
                if (kind is float and k == k) or (kind is int and -EXACT_INT < k < EXACT_INT):
                    job_key[j] = k
                else:
                    self.numeric = False
        else:
            for j in new_jobs:
                job_estimate[j] = estimate[j]
        self.pending.extend(new_jobs)

    def _shortcut(self, head: int, shadow: float, extra: int, now: float) -> None:
        """Nothing ended and the head is the same: only the arrivals may backfill."""
        state = self.state
        size = state.size
        est = state.estimate
        new_jobs = state.new_jobs
        if len(new_jobs) > 1:
            key_of = state.key_of
            new_jobs = sorted(new_jobs, key=lambda j: (key_of[j], j))
        for j in new_jobs:
            s = size[j]
            if s > state.free:
                continue
            if now + est[j] <= shadow:
                pass
            elif s <= extra:
                extra -= s
            else:
                continue
            state.start(j)
            self.pending.remove(j)
            self.job_end[j] = state.estimated_end[j]
            self.run_new[self.n_run_new] = j
            self.n_run_new += 1
            if not state.free:
                break
        self.last = (head, shadow, extra)

    def _rebuild(self) -> int:
        """Give the kernel the whole queue (after a re-sort); returns its length."""
        queue = self.state.queue
        jobs = [j for _, j in queue]
        self.pending_row[: len(jobs)] = jobs
        if self.numeric:
            keys = np.array([k for k, _ in queue])
            if (keys.dtype.kind == "f" and not np.isnan(keys).any()) or (
                keys.dtype.kind == "i" and (len(keys) == 0 or np.abs(keys).max() < EXACT_INT)
            ):
                self.job_key[jobs] = keys
            else:
                self.numeric = False
        self.pending = []
        self.rebuild = False
        return len(jobs)

    def schedule(self, now: float) -> None:
        """One EASY pass (see :meth:`.easy.PythonEasy.schedule`)."""
        state = self.state
        queue = state.queue
        new_jobs = state.new_jobs
        if new_jobs:
            if len(new_jobs) == 1 and self.numeric:
                j = new_jobs[0]
                self.job_estimate[j] = state.estimate[j]
                k = state.key_of[j]
                if type(k) is float and k == k:
                    self.job_key[j] = k
                    self.pending.append(j)
                else:
                    self._arrivals(new_jobs)
            else:
                self._arrivals(new_jobs)
        last = self.last
        if (
            last is not None
            and not state.finished_since_pass
            and queue[0][1] == last[0]
            and last[1] >= now
        ):
            if state.reservation_log is not None:
                state.log_reservation(last[0], last[1])
            if state.free and new_jobs:
                self._shortcut(last[0], last[1], last[2], now)
            return

        rebuild = self.rebuild
        pending = self.pending
        if rebuild:
            count = self._rebuild()
        elif pending:
            count = len(pending)
            if not self.numeric:
                key_of = state.key_of
                if count > 1:
                    pending = sorted(pending, key=lambda j: (key_of[j], j))
                self.pending_at[:count] = [bisect_left(queue, (key_of[j], j)) for j in pending]
            if count == 1:
                self.pending_row[0] = pending[0]
            else:
                self.pending_row[:count] = pending
            self.pending = []
        else:
            count = 0
        started, from_head, head, extra, shadow = kn.easy_pass(
            self.meta,
            self.ints,
            self.floats,
            self.rints,
            self.rend,
            now,
            state.free,
            count,
            rebuild,
            not self.numeric,
            self.n_run_new,
            self.n_finished,
        )
        self.n_run_new = 0
        self.n_finished = 0
        if started < 0:
            raise SimulationError(
                f"backfill {state.strategy_name!r}: the compiled EASY pass lost track of a "
                "running job (please report this)"
            )
        if from_head and state.start_from_head() != from_head:
            raise SimulationError(
                f"backfill {state.strategy_name!r}: the compiled EASY pass and the queue "
                "disagree on the jobs that fit at the head (please report this)"
            )
        if started > from_head:
            start = state.start
            if started == from_head + 1:
                start(int(self.out[from_head]))
            else:
                for j in self.out[from_head:started].tolist():
                    start(j)
        if head < 0:
            self.last = None
            return
        if state.reservation_log is not None:
            state.log_reservation(head, shadow)
        self.last = (head, shadow, extra)


__all__ = ["CompiledEasy"]
