"""Plainly written backfilling algorithms, the references the fast built-in
strategies are tested against (not registered as plugins; construct them and pass
the object: ``simulate(w, backfill=ReferenceConservative())``).

* EASY's reference is :class:`~schedlab.policies.backfill.depth.DepthReference`
  with ``k = 1`` (reservations on a profile rebuilt at every pass).
* :class:`ReferenceConservative` is conservative backfilling with the obvious
  algorithms: earliest fits by walking the profile, and the textbook compression
  after early ends: every waiting job, in priority order, to its earliest start. It keeps its
  reservations in the scheduler state's checked book
  (:meth:`schedlab.sim.SchedulerState.reserve`), so the state verifies that no
  reservation ever moves later.
"""

from __future__ import annotations

import math
from heapq import heappop, heappush

from schedlab.sim import Profile, SchedulerState

INF = math.inf


class ReferenceConservative:
    """Conservative backfilling, plainly (see
    :mod:`~schedlab.policies.backfill.conservative` for the rules)."""

    name = "conservative-reference"
    idle_passes = True
    monotone_reservations = True

    def bind(self, state: SchedulerState) -> None:
        """Start with an empty profile."""
        self.state = state
        self.profile: Profile | None = None
        self.due_heap: list[tuple[float, int]] = []
        self.horizon = -INF
        self.stale: set[int] = set()

    def next_wakeup(self) -> float:
        """The earliest timer (a reservation's start; moved ones wake us too)."""
        return self.due_heap[0][0] if self.due_heap else INF

    def on_finish(self, j: int, now: float) -> None:
        """An early end frees its processors until its estimated end."""
        profile = self.profile
        e = self.state.estimated_end[j]
        if profile is not None and now < e:
            profile.advance(now)
            profile.release(now, e, self.state.size[j])
            self.horizon = max(self.horizon, e)

    def on_estimate_raised(self, j: int, old_end: float, now: float) -> None:
        """A running job's estimate was raised: it holds its processors up to its
        new estimated end; every reservation is planned again at this pass."""
        profile = self.profile
        if profile is not None:
            profile.advance(now)
            profile.reserve(now, self.state.estimated_end[j], self.state.size[j])
            self.stale.add(-1)

    def _place(self, j: int, now: float, due: list[int]) -> None:
        """Reserve the earliest slot for ``j`` that delays nobody."""
        state = self.state
        assert self.profile is not None
        s, d = state.size[j], state.estimate[j]
        at = self.profile.earliest(s, d)
        self.profile.reserve(at, at + d, s)
        self._reserve(j, at, now, due)

    def _reserve(self, j: int, at: float, now: float, due: list[int]) -> None:
        self.state.reserve(j, at)
        if at == now:
            due.append(j)
        else:
            heappush(self.due_heap, (at, j))

    def schedule(self, now: float) -> None:
        """One pass: timers due, re-planning or compression, arrivals, starts."""
        state = self.state
        if self.profile is None:
            self.profile = Profile(state.procs, now)
        profile = self.profile
        profile.advance(now)
        res = state.reservation
        key_of = state.key_of
        due: list[int] = []
        stale = bool(self.stale)
        while self.due_heap and self.due_heap[0][0] <= now:
            t, j = heappop(self.due_heap)
            if res[j] == t:
                if t == now:
                    due.append(j)
                else:
                    stale = True
        if stale and not state.real_event:
            self.stale.update(j for j in due if state.size[j] > state.free)
            due = [j for j in due if state.size[j] <= state.free]
            stale = False
            if not self.stale:
                self.stale.add(-1)
        if stale:
            self.stale = set()
            new = set(state.new_jobs)
            waiting = [j for _, j in state.queue if j not in new]
            for j in waiting:
                r = res[j]
                profile.release(r, r + state.estimate[j], state.size[j])
                state.release(j)
            due = []
            for j in waiting:
                self._place(j, now, due)
        elif self.horizon > now and state.queue:
            self._compress(now, due)
        self.horizon = -INF

        for j in sorted(state.new_jobs, key=lambda j: (key_of[j], j)):
            self._place(j, now, due)
        for j in sorted(set(due), key=lambda j: (key_of[j], j)):
            if state.size[j] <= state.free:
                state.start(j)
            else:
                self.stale.add(j)

    def _compress(self, now: float, due: list[int]) -> None:
        """The textbook compression after early ends (Mu'alem and Feitelson 2001):
        every waiting job, in priority order, moves to its earliest start before its
        reservation ``r`` (its own reservation counting as free for it) given every
        other reservation, if there is one. (The fast strategies bound the search by
        a horizon; this one searches every job's whole profile before ``r``.)"""
        state = self.state
        profile = self.profile
        assert profile is not None
        size, est, res = state.size, state.estimate, state.reservation
        new = state.new_jobs
        for _, j in list(state.queue):
            r, s = res[j], size[j]
            if r <= now or r != r or j in new:
                continue  # due, stale or new: handled by the pass
            d = est[j]
            at = profile.earlier_start(s, d, r, r)
            if at is None:
                continue
            profile.release(r, r + d, s)
            profile.reserve(at, at + d, s)
            self._reserve(j, at, now, due)
