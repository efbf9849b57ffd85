"""Selective-reservation backfilling (Srinivasan, Kettimuthu, Subramani and
Sadayappan, "Selective reservation strategies for backfill job scheduling", JSSPP
2002, LNCS 2537, doi:10.1007/3-540-36180-4_4).

EASY gives a reservation to the first blocked job only, conservative backfilling to
every waiting job. Selective reservation gives one to a waiting job only once it has
waited "long enough" relative to its length: once its *expansion factor*

    xf = (wait so far + estimate) / estimate

reaches a threshold. Below it, a job may be overtaken by any job that fits; at or
above it, its start is protected like a job's under conservative backfilling.

At every scheduling pass, on a profile of free processors built from the running
jobs' estimated ends (:meth:`schedlab.sim.SchedulerState.running_profile`):

1. the jobs that hold reservations (*protected* jobs) are entered at their reserved
   slots, in the order they got them;
2. when jobs ended before their estimates since the last pass, each protected job,
   in priority order, moves to the earliest slot free for it (its own slot counting
   as free for it) before its reservation: the textbook compression, which
   schedlab's conservative backfilling computes too, so a reservation only ever
   moves earlier, and with ``threshold=1`` the schedules are conservative's;
3. every other waiting job, in priority order: if its expansion factor has reached
   the threshold it becomes protected, at the earliest slot the profile has for it
   (now, if it fits now); otherwise it starts now if it fits without entering any
   reserved slot (nor taking the processors of a protected job due now). Jobs
   protected in the same pass are placed in priority order;
4. the protected jobs whose reserved time is now start, in priority order.

Decisions where the paper leaves a choice to the implementation (see README.md):

* The expansion factor is evaluated at scheduling passes (submissions, completions
  and the wake-ups the strategy asks for at its reservations' times), as a real
  scheduler does, not at the exact instant it crosses the threshold.
* ``threshold`` defaults to 2: a job is protected once it has waited as long as its
  own estimate. ``threshold=adaptive`` uses, at each pass, the mean expansion factor
  (by estimate) with which the jobs completed so far had started, and 1 before the
  first completion (every job is protected until there is history).
* A job running past its estimate (``--no-kill``, or an estimator other than
  ``requested``) is taken by the profile as ending now; when a protected job cannot
  start at its time because of it, the next pass that follows a real event plans
  every protected job again from scratch, in priority order (as schedlab's
  conservative backfilling does): the only way a reservation moves later, and never
  because of backfilling.
"""

from __future__ import annotations

import math
from heapq import heappop, heappush
from typing import Any

from schedlab import UsageError
from schedlab.sim import Profile, SchedulerState

INF = math.inf
#: The value of ``threshold`` that selects the adaptive threshold.
ADAPTIVE = "adaptive"


def parse_threshold(text: Any) -> float | str:
    """A threshold from the command line or Python: a finite number >= 1 or
    ``"adaptive"``. A ``ValueError`` says what is wrong."""
    if isinstance(text, str):
        cleaned = text.strip().lower()
        if cleaned == ADAPTIVE:
            return ADAPTIVE
        try:
            value = float(cleaned)
        except ValueError:
            raise ValueError(f"{text!r} is neither a number nor 'adaptive'") from None
    elif isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        raise ValueError(f"{text!r} is neither a number nor 'adaptive'")
    if value != value or value == math.inf:
        raise ValueError(f"{value:g} is not finite; for no reservations give a large number")
    if value < 1.0:
        raise ValueError(f"{value:g} is below 1, and an expansion factor never is")
    return value


parse_threshold.__name__ = "number >= 1 or 'adaptive'"


def expansion_factor(wait: float, estimate: float) -> float:
    """``(wait + estimate) / estimate``: 1 for a job that has not waited; a job with
    no estimate (0) that has waited at all has an infinite one."""
    if estimate > 0:
        return 1.0 + wait / estimate
    return 1.0 if wait <= 0 else INF


class Selective:
    """Selective-reservation backfilling; ``threshold`` is the expansion factor at
    which a waiting job gets its reservation (a number >= 1, or ``"adaptive"``)."""

    wants_running = True
    #: Reservations never move later (the state checks it), except that a job whose
    #: reservation a running job's overrun made impossible is released and placed
    #: again.
    monotone_reservations = True

    def __init__(self, threshold: float | str = 2.0) -> None:
        try:
            self.threshold = parse_threshold(threshold)
        except ValueError as exc:
            raise UsageError(
                f"backfill selective: option threshold={threshold!r}: {exc}"
            ) from None
        self.adaptive = self.threshold == ADAPTIVE
        self.name = "selective"

    def bind(self, state: SchedulerState) -> None:
        """Keep the state; no job is protected yet."""
        self.state = state
        #: Protected jobs -> reserved start, in the order they got them.
        self.book: dict[int, float] = {}
        #: The latest estimated end of the jobs that ended early since the last pass
        #: (a compression is due when it is ahead).
        self.horizon = -INF
        #: Set when a protected job could not start at its time.
        self.replan = False
        #: (reserved start, job) for the wake-ups; entries no longer in the book
        #: are skipped.
        self.timers: list[tuple[float, int]] = []
        #: Adaptive threshold: expansion factors at start of running jobs, and the
        #: sum and count over completed ones.
        self.started_xf: dict[int, float] = {}
        self.done_xf = 0.0
        self.done = 0

    # ------------------------------------------------------------ notifications
    def on_finish(self, job: int, now: float) -> None:
        """Note an early end (room freed up to its estimated end) and count the
        completed job's expansion factor (adaptive threshold)."""
        e = self.state.estimated_end[job]
        if now < e and e > self.horizon:
            self.horizon = e
        if self.adaptive:
            xf = self.started_xf.pop(job, None)
            if xf is not None and xf < INF:
                self.done_xf += xf
                self.done += 1

    def next_wakeup(self) -> float:
        """The earliest reserved start still ahead (a pass is due then even if no
        job ends at that time)."""
        timers = self.timers
        book = self.book
        now = self.state.now
        while timers:
            at, job = timers[0]
            if at > now and book.get(job) == at:
                return at
            heappop(timers)
        return INF

    def current_threshold(self) -> float:
        """The threshold in force: the fixed one, or the adaptive mean."""
        if not self.adaptive:
            return float(self.threshold)
        return self.done_xf / self.done if self.done else 1.0

    # ------------------------------------------------------------------- a pass
    def schedule(self, now: float) -> None:
        """One scheduling pass (the steps of the module docstring)."""
        state = self.state
        size, est, submit = state.size, state.estimate, state.submit
        key_of = state.key_of
        book = self.book
        profile = state.running_profile()

        # 1. the protected jobs at their slots (the part still ahead of a slot whose
        # time passed without a start: a running job overran its estimate).
        for j, at in book.items():
            profile.reserve(at if at > now else now, at + est[j], size[j])

        horizon = self.horizon
        self.horizon = -INF
        if self.replan and state.real_event:
            # A protected job could not start at its time: every protected job is
            # planned again from scratch, in priority order.
            self.replan = False
            jobs = sorted(book, key=lambda j: (key_of[j], j))
            for j in jobs:
                at = book[j]
                profile.release(at if at > now else now, at + est[j], size[j])
                state.release(j)
            book.clear()
            for j in jobs:
                self._protect(j, profile)
        elif book and horizon > now:
            # 2. compression after early ends: each protected job, in priority
            # order, moves to its earliest start before its reservation.
            for j in sorted(book, key=lambda j: (key_of[j], j)):
                r = book[j]
                if r <= now:
                    continue
                s, d = size[j], est[j]
                at = profile.earlier_start(s, d, r, r)
                if at is not None:
                    profile.release(r, r + d, s)
                    profile.reserve(at, at + d, s)
                    self._book(j, at)

        # 3. the other waiting jobs, in priority order: protected from the threshold
        # on, else started if they fit without entering a reserved slot (nor taking
        # the processors of a protected job due now).
        threshold = self.current_threshold()
        due_size = sum(size[j] for j, at in book.items() if at == now)
        for _, j in list(state.queue):
            if j in book:
                continue
            s, d = size[j], est[j]
            if expansion_factor(now - submit[j], d) >= threshold:
                if self._protect(j, profile) == now:
                    due_size += s
            elif s <= state.free - due_size and profile.fits_now(s, d):
                profile.reserve(now, now + d, s)
                self._start(j, now)

        # 4. protected jobs whose time has come start, in priority order; one that
        # does not fit (a running job overran its estimate) makes the next pass
        # that follows a real event plan every protected job again.
        if book:
            for j in sorted((j for j, at in book.items() if at == now),
                            key=lambda j: (key_of[j], j)):
                if size[j] <= state.free:
                    del book[j]
                    self._start(j, now)
                else:
                    self.replan = True

    # ------------------------------------------------------------------ helpers
    def _protect(self, j: int, profile: Profile) -> float:
        """Reserve the earliest slot of ``profile`` for ``j``; returns its start."""
        state = self.state
        s, d = state.size[j], state.estimate[j]
        at = profile.earliest(s, d)
        profile.reserve(at, at + d, s)
        self._book(j, at)
        return at

    def _book(self, j: int, at: float) -> None:
        """Record ``j``'s reservation at ``at`` (checked by the state)."""
        self.state.reserve(j, at)
        self.book[j] = at
        heappush(self.timers, (at, j))

    def _start(self, j: int, now: float) -> None:
        state = self.state
        if self.adaptive:
            self.started_xf[j] = expansion_factor(now - state.submit[j], state.estimate[j])
        state.start(j)
