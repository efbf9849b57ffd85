"""Correcting run-time predictions that prove too short.

A predictor (``easy++``, ``learned``, ``user-average`` ...) may predict less than a
job really runs. Tsafrir, Etsion and Feitelson (2007, "Backfilling using
system-generated predictions rather than user runtime estimates", IEEE TPDS 18(6))
keep the kill time (the requested time) apart from the prediction, and *correct* a
prediction once the job outlives it: the scheduler's estimate is raised, and
planning goes on with the new value. Without a correction EASY's shadow time of a
job past its prediction is "now" until the job really ends.

Two sides:

* :class:`Correction` is the rule an estimator applies (``correction=`` option of
  every predictor; :data:`CORRECTIONS`):

  ``tsafrir``
      stepwise, as in the paper: at the k-th miss the estimate becomes the elapsed
      time plus the k-th of :data:`TSAFRIR_INCREMENTS` (1 min, 5 min, 15 min, 30 min,
      1 h, 2 h, 5 h, 10 h, 20 h, 50 h, 100 h, then 100 h at every further miss),
      never beyond the requested time;
  ``requested``
      straight to the requested time (stepwise, as ``tsafrir``, when the requested
      time is unknown);
  ``none``
      no correction: the job is treated as ending "now" until it ends.

  A job already at its requested time (it runs past it only with ``kill=False``)
  is not raised any more: it is then treated as ending now. A requested time of 0
  is a request, as for the kill rule: such a job is at its requested time from its
  start (only an unknown or negative request means no cap).

* :class:`CorrectionLoop` is the engine's side: it keeps a heap of the running jobs'
  estimated ends and, when a job reaches its estimated end still running, asks the
  estimator's ``correct(job, elapsed)`` for a new estimate, moves the job in
  ``state.running``, updates ``state.estimated_end`` and tells the strategy
  (``on_estimate_raised(job, old_end, now)``); a scheduling pass follows at that
  instant. A third-party ``correct()`` whose new estimate ends less than
  :data:`~schedlab.sim.MIN_ESTIMATE` (1 ms) after that instant gets
  1 ms, counted in :attr:`CorrectionLoop.corrections_raised`.
  ``state.estimate[job]`` keeps the prediction made at submission (what
  :attr:`Result.estimate <schedlab.sim.result.Result>` reports).
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections.abc import Callable
from heapq import heappop, heappush
from typing import Any

from ..errors import SimulationError, UsageError
from .whole_run import MIN_ESTIMATE

#: The corrections a predictor's ``correction=`` option accepts.
CORRECTIONS: tuple[str, ...] = ("tsafrir", "requested", "none")

_MIN = 60.0
_HOUR = 3600.0
#: Tsafrir et al.'s increments (seconds) added to the elapsed time at the first,
#: second ... miss of a prediction; the last one repeats.
TSAFRIR_INCREMENTS: tuple[float, ...] = (
    1 * _MIN,
    5 * _MIN,
    15 * _MIN,
    30 * _MIN,
    1 * _HOUR,
    2 * _HOUR,
    5 * _HOUR,
    10 * _HOUR,
    20 * _HOUR,
    50 * _HOUR,
    100 * _HOUR,
)

INF = math.inf


def check_correction(owner: str, value: str) -> str:
    """``value`` if it names a correction, else a one-line :class:`UsageError`
    naming ``owner`` (e.g. ``"estimator easy++"``) and the option."""
    if value not in CORRECTIONS:
        raise UsageError(
            f"{owner}: option correction={value!r}: expected one of {', '.join(CORRECTIONS)}"
        )
    return value


class Correction:
    """How an estimator raises the estimate of a job that outlived it (see the
    module docstring). ``mode`` is ``"tsafrir"`` or ``"requested"``; ``bind`` it to
    the run's job table before use."""

    def __init__(self, mode: str, owner: str = "estimator") -> None:
        mode = check_correction(owner, mode)
        if mode == "none":
            raise ValueError("Correction('none'): use no correction object instead")
        self.mode = mode
        self.requested: list[float] = []
        #: How many times each job's estimate was raised.
        self.misses: dict[int, int] = {}

    def bind(self, table: Any) -> None:
        """Keep the requested times of the run (and forget an earlier run)."""
        self.requested = table.requested_time
        self.misses = {}

    def correct(self, job: int, elapsed: float) -> float:
        """The new estimate (seconds from the job's start) of ``job``, running for
        ``elapsed`` seconds, at or past its current estimate."""
        cap = self.requested[job]
        if not cap >= 0:  # unknown (NaN, or negative): no cap; 0 is a request of 0
            cap = INF
        if self.mode == "requested" and cap < INF:
            return cap
        k = self.misses.get(job, 0)
        self.misses[job] = k + 1
        step = TSAFRIR_INCREMENTS[min(k, len(TSAFRIR_INCREMENTS) - 1)]
        new = elapsed + step
        return cap if new > cap else new


def make_correction(owner: str, mode: str) -> Correction | None:
    """A :class:`Correction` for ``mode``, ``None`` for ``"none"``; a one-line
    :class:`UsageError` naming ``owner`` for an unknown mode."""
    mode = check_correction(owner, mode)
    return None if mode == "none" else Correction(mode, owner)


class CorrectionLoop:
    """The engine's side of corrections (see the module docstring). Built only when
    the estimator has a ``correct`` method, so runs without one are untouched."""

    def __init__(self, correct: Callable[[int, float], float], state: Any, strategy: Any) -> None:
        self.correct = correct
        self.state = state
        #: The estimator's name for errors (the engine sets the registered name;
        #: default: its ``name`` attribute, else its class).
        self.name = ""
        #: ``(estimated end, job)`` of every started job; entries whose job ended or
        #: whose estimate moved are skipped.
        self.heap: list[tuple[float, int]] = []
        state.expiry = self.heap
        self.notify = getattr(strategy, "on_estimate_raised", None)
        #: Estimates raised, and jobs raised at least once.
        self.corrections = 0
        self.raised: set[int] = set()
        #: Jobs a whole run raised at least once (it counts them: a set of
        #: every such job cost 25 ms on RICC-2010's 158,513, for one ``len``).
        self.whole_raised = 0
        #: Corrections of a third-party ``correct()`` that ended sooner than
        #: :data:`~schedlab.sim.MIN_ESTIMATE` after the instant of the
        #: correction, raised to it (without that floor, a hook returning
        #: ``elapsed + 1e-12`` would be asked again millions of times). The
        #: built-in rules (:class:`Correction`) are exempt: they step by a
        #: minute at least, or end at the requested time.
        self.corrections_raised = 0
        owner = getattr(correct, "__self__", None)
        self._floor = owner is None or not type(owner).__module__.startswith("schedlab.")

    @property
    def jobs_raised(self) -> int:
        """How many jobs had their estimate raised at least once."""
        return len(self.raised) + self.whole_raised

    def next_time(self) -> float:
        """The earliest estimated end of a job that will still be running then."""
        heap = self.heap
        est_end = self.state.estimated_end
        end = self.state.end_time
        while heap:
            e, j = heap[0]
            if est_end[j] == e and end[j] > e:
                return e
            heappop(heap)
        return INF

    def apply(self, now: float) -> None:
        """Raise the estimate of every job reaching its estimated end at ``now``
        while still running (the finishes of ``now`` are already processed)."""
        heap = self.heap
        state = self.state
        est_end = state.estimated_end
        end = state.end_time
        start = state.start_time
        running = state.running
        while heap and heap[0][0] <= now:
            old, j = heappop(heap)
            if est_end[j] != old or not end[j] > now:
                continue
            began = start[j]
            value = self.correct(j, now - began)
            new = began + float(value)
            if not -math.inf < new < math.inf:  # inf, -inf or NaN
                owner = getattr(self.correct, "__self__", self.correct)
                name = self.name or getattr(owner, "name", None) or type(owner).__name__
                raise SimulationError(
                    f"estimator {name}: correct({j}, {now - began:g}) returned {value!r}: "
                    "a corrected estimate must be a finite number of seconds"
                )
            if not new > now:
                continue  # nothing more to say: the job is treated as ending now
            if self._floor and new < now + MIN_ESTIMATE:
                new = now + MIN_ESTIMATE
                self.corrections_raised += 1
            est_end[j] = new
            if running is not None:
                del running[bisect_left(running, (old, j))]
                insort(running, (new, j))
            heappush(heap, (new, j))
            if self.notify is not None:
                self.notify(j, old, now)
            state.finished_since_pass = True
            self.raised.add(j)
            self.corrections += 1


__all__ = [
    "CORRECTIONS",
    "TSAFRIR_INCREMENTS",
    "Correction",
    "CorrectionLoop",
    "check_correction",
    "make_correction",
]
