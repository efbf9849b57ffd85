"""Conservative backfilling on the compiled kernels (:mod:`.kernels`, numba): the
same decisions as :class:`~.conservative.PythonConservative`; the jobs due are read
from the kernels' reservations instead of timers, and early ends, arrivals and
starts reach the kernels with the next pass (one call per pass, not per job)."""

from __future__ import annotations

import math
from bisect import bisect_left

import numpy as np
from schedlab.errors import SimulationError
from schedlab.sim import SchedulerState, WholeRun, WholeRunOutcome

from . import kernels as kn
from .kernels import CompiledConservative, warm_up

INF = math.inf


class CompiledConservativePass:
    """The conservative strategy's pass, finish, arrival and re-sort on the kernels."""

    def __init__(self, state: SchedulerState) -> None:
        warm_up()
        self.state = state
        self.kernel = CompiledConservative(state.n, state.procs, -INF, state.size)
        self.arrive = self.kernel.arrive
        self.estimate = state.estimate
        self.horizon = -INF
        self.stale: set[int] = set()
        #: The earliest reservation ahead.
        self.next_due = INF
        #: The time a stepping simulation's caller held back the jobs due then
        #: (:meth:`on_hold`), or ``None``.
        self.held: float | None = None

    def next_wakeup(self) -> float:
        """The earliest reservation ahead (after the time the caller held back the
        jobs due, if it did)."""
        held = self.held
        if held is not None and self.next_due <= held:
            return float(self.kernel.next_due(held))
        return self.next_due

    def on_hold(self, now: float) -> None:
        """A stepping simulation's caller starts nothing at ``now`` (``decide()``):
        if a reservation is due now, it wakes nobody until the next event, whose
        pass finds it past and plans every reservation again (as
        :meth:`.conservative.PythonConservative.on_hold`)."""
        if self.next_due <= now:
            self.held = now

    def run_whole(self, plan: WholeRun) -> WholeRunOutcome | None:
        """The whole simulation in one kernel call (:func:`.kernels.conservative_run`:
        the engine's loop around this pass), when the engine offers it
        (:mod:`schedlab.sim.whole_run`). Declined (``None``: the engine runs its
        own loop) with predictions, on a platform, and when a job can outlive its
        estimate (a stale reservation, re-planned at the next real event, which
        the compiled loop does not do); also, should a due job not fit after
        all, the run is thrown away and declined."""
        if plan.prediction is not None or plan.machine is not None:
            return None
        n = len(plan.submit)
        size = np.ascontiguousarray(plan.size, dtype=np.int64)
        run_time = np.ascontiguousarray(plan.run_time, dtype=np.float64)
        estimate = np.ascontiguousarray(plan.estimate, dtype=np.float64)
        if n == 0 or np.any(run_time > estimate) or np.any(size > plan.procs):
            return None
        # The pass's own arrays, untouched so far (the engine offers a whole run
        # before any pass): no second copy of them.
        kernel = self.kernel
        # Job shapes (processors, estimate) numbered in order of first arrival,
        # as CompiledConservative.arrive numbers them.
        order = np.lexsort((np.arange(n), estimate, size))
        first = np.ones(n, dtype=bool)
        first[1:] = (size[order][1:] != size[order][:-1]) | (
            estimate[order][1:] != estimate[order][:-1]
        )
        group = np.cumsum(first) - 1  # by sorted position
        leader = order[first]  # the first job of each shape (job index)
        rank = np.empty(len(leader), dtype=np.int64)
        rank[np.argsort(leader, kind="stable")] = np.arange(len(leader))
        shape = np.empty(n, dtype=np.int64)
        shape[order] = rank[group]
        kernel.shape[:n] = shape
        kernel.size[rank] = size[leader]
        kernel.estimate[rank] = estimate[leader]
        # The shape numbering's arrays go before the run (RICC-2010: 11 MB of the
        # peak memory, which issue 17 holds under 400 MB).
        del order, first, group, leader, rank, shape
        start = np.full(n, np.nan)
        heap_t = np.empty(n + 1, dtype=np.float64)
        heap_j = np.empty(n + 1, dtype=np.int64)
        passes, status = kn.conservative_run(
            kernel.times,
            kernel.free,
            kernel.meta,
            kernel.floats,
            kernel.ints,
            np.ascontiguousarray(plan.submit, dtype=np.float64),
            run_time,
            size,
            estimate,
            np.ascontiguousarray(plan.key, dtype=np.float64),
            plan.procs,
            start,
            heap_t,
            heap_j,
        )
        if status == kn.RUN_STALE:
            # Fresh arrays for the engine's own loop.
            self.kernel = CompiledConservative(n, plan.procs, -INF, self.state.size)
            self.arrive = self.kernel.arrive
            return None
        if status:
            raise SimulationError(
                f"backfill {plan.strategy_name!r}: the compiled conservative run "
                + (
                    "left jobs waiting with no event left"
                    if status == kn.RUN_STUCK
                    else "found no slot for a new job"
                )
                + " (please report this)"
            )
        # The run is over: its arrays (about 200 bytes a job) are not kept
        # through the engine's output.
        self.kernel = CompiledConservative(0, plan.procs, -INF, [])
        self.arrive = self.kernel.arrive
        return WholeRunOutcome(start=start, passes=int(passes))

    def on_submit(self, j: int, now: float) -> None:
        """A job arrived (it enters the kernels' queue at the next pass)."""
        self.arrive(j, self.estimate[j])

    def on_reorder(self, now: float) -> None:
        """The queue was re-sorted: the kernels take the new order (the jobs that
        arrived at this instant enter at the pass)."""
        new = set(self.state.new_jobs)
        self.kernel.set_queue([j for _, j in self.state.queue if j not in new])

    def on_finish(self, j: int, now: float) -> None:
        """A job ended: an early end frees capacity up to its estimated end."""
        e = self.state.estimated_end[j]
        if now < e:
            self.kernel.finish(now, e, self.state.size[j])
            if e > self.horizon:
                self.horizon = e

    def on_estimate_raised(self, j: int, old_end: float, now: float) -> None:
        """A running job's estimate was raised: it holds its processors up to its
        new estimated end, and every reservation is planned again at this pass."""
        self.kernel.release(now, self.state.estimated_end[j], -self.state.size[j])
        self.stale.add(-1)

    def schedule(self, now: float) -> None:
        """One pass (see :meth:`.conservative.PythonConservative.schedule`)."""
        state = self.state
        held, self.held = self.held, None
        if held is not None and held < now:
            self.stale.add(-1)  # a reservation held back by the caller is past
        new_jobs = state.new_jobs
        if not new_jobs and self.horizon <= now and now < self.next_due and not self.stale:
            self.horizon = -INF
            return  # nothing to compress, place or start: the kernels would change nothing
        kernel = self.kernel
        log = state.reservation_log
        key_of = state.key_of
        queue = state.queue
        if len(new_jobs) > 1:
            new_jobs = sorted(new_jobs, key=lambda j: (key_of[j], j))
        positions = [bisect_left(queue, (key_of[j], j)) for j in new_jobs]
        count, ahead = kernel.step(
            now, self.horizon, bool(self.stale), new_jobs, positions, self.next_due
        )
        if count >= 0:
            due = kernel.due_now(count) if count else None
            if log is not None:
                reservation = kernel.reservation
                for j in kernel.moved() + new_jobs:
                    state.log_reservation(j, float(reservation[j]))
        else:
            due = self._stale_pass(now, new_jobs)
        self.horizon = -INF
        if due:
            size = state.size
            reservation = kernel.reservation
            started = False
            for j in due:  # priority order
                if size[j] <= state.free:
                    reservation[j] = math.nan
                    state.start(j)
                    started = True
                else:
                    # The processors are still held by a job past its estimate.
                    self.stale.add(j)
            if started:
                kernel.drop_started()
        self.next_due = ahead if count >= 0 else kernel.next_due(now)

    def _stale_pass(self, now: float, new_jobs: list[int]) -> list[int]:
        """The pass when a reservation is stale (a job ran past its estimate).
        Returns the jobs due."""
        state = self.state
        kernel = self.kernel
        log = state.reservation_log
        due, _ = kernel.due(now)
        if not state.real_event:
            # Only a timer woke us: wait for a job to really end (or arrive).
            self.stale.update(j for j in due if state.size[j] > state.free)
            if not self.stale:
                self.stale.add(-1)
            if self.horizon > now and state.queue and kernel.compress(now, self.horizon):
                if log is not None:
                    reservation = kernel.reservation
                    for j in kernel.moved():
                        state.log_reservation(j, float(reservation[j]))
        else:
            # Plan every reservation again in priority order.
            self.stale = set()
            new = set(new_jobs)
            waiting = [j for _, j in state.queue if j not in new]
            reservation = kernel.reservation
            for j in waiting:
                r = float(reservation[j])
                kernel.release(r, r + state.estimate[j], state.size[j])
            for j in waiting:
                at = kernel.place(j)
                state.log_reservation(j, at)
        for j in new_jobs:
            at = kernel.place(j)
            state.log_reservation(j, at)
        due, _ = kernel.due(now)
        return due
