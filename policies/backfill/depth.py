"""Reservation depth ``k``: the first ``k`` blocked jobs (in priority order) get
reservations, recomputed from the running jobs at every pass; any other job starts
if it fits now without delaying a reservation.

``depth=0`` is ``none``, ``depth=1`` is ``easy`` and ``depth=all`` is
``conservative`` (the plugin returns those strategies: the built-in ones, imported
as a dependency, so a run's ``registry=`` that blocks or replaces them does not
change what ``depth`` means). The :class:`Depth` class itself works for every
``k >= 1`` (with ``k = 1`` the tests compare it with the ``easy`` module);
:class:`DepthReference` is the same rule written plainly (a profile of the running
jobs rebuilt at every pass, then the whole queue in priority order, one profile
query per job), which :class:`Depth` is tested against job for job
(``tests/test_depth_speed_equivalence.py``).

:class:`Depth` gives every job the start :class:`DepthReference` gives it; it only
does less work per pass (``benchmarks/bench_depth.py``):

* with no processor free, or no waiting job needing at most the free processors,
  nothing can start, so the pass ends there (the reservations it would place
  decide nothing);
* jobs start from the head of the queue while they fit, without a profile (the
  running jobs alone never make a job that fits now wait);
* the profile is built at the first blocked job, from the running jobs (the jobs
  just started among them);
* once ``k`` jobs hold reservations, a job can start only if it needs at most the
  free processors and at most the fewest processors free in the profile before
  its estimated end; both only shrink while the pass starts jobs, so on a long
  queue numpy screens every waiting job against them at once (on arrays the
  engine keeps, ``wants_arrays``) and the exact test runs, in priority order, on
  the jobs the screen keeps.

A table with a job of no processors (not one the engine builds) gets the plain
pass: the shortcuts count on every job taking a processor at least.

**Reservations.** Both classes log the reservations of the first ``k`` blocked
jobs at every pass (``state.log_reservation``), the same log job for job; only
when a test set ``state.reservation_log``, so that a pass :class:`Depth` ends
early (nothing can start) then places the reservations it skips. Re-planning every pass in priority
order keeps a job's reservation only while no job ends before its estimate: when
one does, an earlier job may take the slot a later one held, so a reserved job
can start after its first reservation. Both declare ``keeps_reservations =
"exact"`` for ``k >= 2`` (kept with exact estimates, the guarantee
``check_backfill`` then checks) and ``True`` for ``k = 1`` (EASY's head keeps its
reservation under over-estimates too).
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np
from schedlab import BackfillSpec, OptionSpec, hookimpl
from schedlab.errors import UsageError
from schedlab.sim import NOT_WAITING, Profile, SchedulerState

#: Waiting jobs behind the ``k`` reservations from which :class:`Depth` screens
#: them with numpy (below, it tests each in turn, as :class:`DepthReference`).
SCREEN_MIN_QUEUE = 64


def _check_k(k: Any) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise UsageError(f"backfill depth: option depth={k!r}: expected an integer >= 1")


def keeps_reservations_of(k: int) -> bool | str:
    """What depth ``k`` guarantees of its reservations (``Backfill.keeps_reservations``):
    ``True`` for ``k = 1`` (EASY), ``"exact"`` beyond (see the module docstring)."""
    return True if k <= 1 else "exact"


def plain_pass(state: SchedulerState, k: int, now: float) -> None:
    """One pass of depth ``k``, plainly: the profile of the running jobs, then every
    waiting job in priority order (:class:`DepthReference`)."""
    size = state.size
    est = state.estimate
    log = state.reservation_log
    profile = state.running_profile()
    reserved = 0
    for _, j in list(state.queue):
        s = size[j]
        d = est[j]
        if reserved < k:
            at = profile.earliest(s, d)
            if at <= now and s <= state.free:
                profile.reserve(now, now + d, s)
                state.start(j)
            else:
                profile.reserve(at, at + d, s)
                reserved += 1
                if log is not None:
                    state.log_reservation(j, at)
        elif s <= state.free and profile.fits_now(s, d):
            profile.reserve(now, now + d, s)
            state.start(j)
        if not state.free and reserved >= k:
            break


class DepthReference:
    """Reservations for the first ``k`` blocked jobs, on an availability profile
    rebuilt at every pass, written plainly (the reference of :class:`Depth`)."""

    wants_running = True

    def __init__(self, k: int = 2) -> None:
        _check_k(k)
        self.k = k
        self.name = f"depth{k}-reference"
        self.keeps_reservations = keeps_reservations_of(k)

    def bind(self, state: SchedulerState) -> None:
        """Keep the state."""
        self.state = state

    def schedule(self, now: float) -> None:
        """One pass over the queue in priority order."""
        plain_pass(self.state, self.k, now)


def _staircase(profile: Profile, horizon: float, floor: int) -> tuple[list[float], list[int]]:
    """The fewest processors free from the profile's start up to each slice, as
    steps ``(times, values)``: a window ending at ``e`` (``fits_now``) sees
    ``values[q]`` for the last ``times[q] < e`` (``values[0]`` if none). Stops
    at ``horizon`` or once the value falls below ``floor``."""
    times, free = profile.times, profile.free
    least = free[0]
    step_times = [times[0]]
    step_values = [least]
    n = len(times)
    i = 1
    while i < n and least >= floor:
        t = times[i]
        if t >= horizon:
            break
        f = free[i]
        if f < least:
            least = f
            step_times.append(t)
            step_values.append(f)
        i += 1
    return step_times, step_values


def _below(values: np.ndarray) -> np.ndarray:
    """``values`` lowered by a rounding tolerance (infinite ones kept)."""
    lowered = values - (1e-9 + np.abs(values) * 1e-12)
    return np.where(np.isfinite(values), lowered, values)


class Depth:
    """Reservations for the first ``k`` blocked jobs: the schedule of
    :class:`DepthReference`, with less work per pass (see the module docstring)."""

    wants_running = True
    wants_arrays = True

    def __init__(self, k: int = 2) -> None:
        _check_k(k)
        self.k = k
        self.name = f"depth{k}"
        #: ``"exact"`` for ``k >= 2``: reservations are kept only while no job ends
        #: before its estimate (``check_backfill`` checks it with exact estimates).
        self.keeps_reservations = keeps_reservations_of(k)

    def for_platform(self) -> Any:
        """Refused on a platform (a multi-resource machine), naming the depths that
        run there: 0, 1 and all are the node-level none, easy and conservative."""
        raise UsageError(
            f"backfill depth: option depth={self.k}: only depth=0 (none), 1 (easy) or all "
            "(conservative) run on a platform (a multi-resource machine)"
        )

    def bind(self, state: SchedulerState) -> None:
        """Keep the state; start the list of waiting jobs the screen reads."""
        self.state = state
        # The shortcuts need every job to take a processor at least (the
        # engine's jobs do: a size is a positive whole number).
        self.plain = min(state.size, default=1) < 1
        n = state.n
        #: Job indices the screen reads, ``listed[:count]``: every waiting job, and
        #: jobs started since the last compaction (``NOT_WAITING`` in the arrays).
        self.listed = np.empty(n, dtype=np.int64)
        self.count = 0
        self.known = np.zeros(n, dtype=bool)

    def _note_arrivals(self) -> None:
        listed = self.listed
        known = self.known
        count = self.count
        for j in self.state.new_jobs:
            if not known[j]:
                known[j] = True
                listed[count] = j
                count += 1
        self.count = count

    def schedule(self, now: float) -> None:
        """One pass: the same starts as :class:`DepthReference`'s."""
        state = self.state
        if self.plain:
            plain_pass(state, self.k, now)
            return
        self._note_arrivals()
        log = state.reservation_log
        if not state.free:
            if log is not None:
                self._log_rest(None, 0, 0)
            return  # nothing fits
        queue = state.queue
        size = state.size
        start = state.start
        # Head jobs that fit start: the profile of the running jobs has at least
        # the free processors at every time from now on.
        while queue and size[queue[0][1]] <= state.free:
            start(queue[0][1])
        if not queue or not state.free:
            if queue and log is not None:
                self._log_rest(None, 0, 0)
            return
        # A job that starts takes at most the free processors: with none that
        # small waiting, nothing starts.
        sizes = None
        if len(queue) >= SCREEN_MIN_QUEUE and state.arrays is not None:
            sizes = self._listed_sizes()
        free = state.free
        if sizes is not None:
            fits = bool((sizes <= free).any())
        else:
            fits = any(size[j] <= free for _, j in queue)
        if not fits:
            if log is not None:
                self._log_rest(None, 0, 0)
            return
        est = state.estimate
        profile = state.running_profile()
        k = self.k
        reserved: list[int] = []
        i = 0
        while i < len(queue):
            j = queue[i][1]
            s = size[j]
            d = est[j]
            at = profile.earliest(s, d)
            if at <= now and s <= state.free:
                profile.reserve(now, now + d, s)
                start(j)
                if not state.free:
                    if log is not None:
                        self._log_rest(profile, i, len(reserved))
                    return
            else:
                profile.reserve(at, at + d, s)
                reserved.append(j)
                if log is not None:
                    state.log_reservation(j, at)
                i += 1
                if len(reserved) == k:
                    break
        rest = len(queue) - i
        if rest <= 0:
            return
        if sizes is None or rest < SCREEN_MIN_QUEUE:
            self._scan(profile, now, i)
        else:
            self._screened(profile, now, reserved, sizes)

    def _log_rest(self, profile: Profile | None, i: int, count: int) -> None:
        """With a reservation log: the reservations the plain pass still places
        when this one ends early, from queue position ``i`` on with ``count``
        placed (on ``profile``, else the running jobs' profile). No job can start
        there, so every job looked at is blocked, up to ``k`` reservations."""
        state = self.state
        if profile is None:
            profile = state.running_profile()
        queue = state.queue
        size = state.size
        est = state.estimate
        while count < self.k and i < len(queue):
            j = queue[i][1]
            s = size[j]
            d = est[j]
            at = profile.earliest(s, d)
            profile.reserve(at, at + d, s)
            state.log_reservation(j, at)
            count += 1
            i += 1

    def _scan(self, profile: Profile, now: float, i: int) -> None:
        """The waiting jobs from queue position ``i`` on, in priority order: each
        starts if it fits now without delaying a reservation."""
        state = self.state
        queue = state.queue
        size = state.size
        est = state.estimate
        while i < len(queue):
            j = queue[i][1]
            s = size[j]
            if s <= state.free and profile.fits_now(s, est[j]):
                d = est[j]
                profile.reserve(now, now + d, s)
                state.start(j)
                if not state.free:
                    return
            else:
                i += 1

    def _listed_sizes(self) -> np.ndarray | None:
        """``state.arrays.size`` of the listed jobs, once they are sure to cover
        the queue (listed again from the arrays if not); ``None`` if the arrays
        do not match the queue."""
        state = self.state
        arrays = state.arrays
        assert arrays is not None
        a_size = arrays.size
        listed = self.listed[: self.count]
        sizes = a_size[listed]
        live = sizes != NOT_WAITING
        waiting = int(np.count_nonzero(live))
        queued = len(state.queue)
        if waiting != queued:
            # Jobs wait that no pass was told of (``new_jobs`` missed them):
            # list every waiting job again.
            lo = arrays.first_waiting()
            found = np.flatnonzero(a_size[lo : arrays.hi] != NOT_WAITING)
            if len(found) != queued:
                return None
            found += lo
            self.known[found] = True
            self.listed[: len(found)] = found
            self.count = len(found)
            return a_size[found]
        if self.count > 2 * waiting + 64:
            kept = listed[live]
            self.listed[: len(kept)] = kept
            self.count = len(kept)
            return sizes[live]
        return sizes

    def _screened(
        self, profile: Profile, now: float, reserved: list[int], sizes: np.ndarray
    ) -> None:
        """The waiting jobs behind the reservations, on a long queue (``sizes``:
        :meth:`_listed_sizes`, read before the pass started any job; the jobs it
        started since are ``NOT_WAITING`` in the arrays).

        A job can start only with at most the free processors and at most the
        fewest free in the profile before its estimated end (``bound``, from the
        staircase of the profile). Numpy keeps the jobs passing both (a superset,
        by a rounding tolerance), in priority order; each is tested exactly at
        its turn. A start of ``s`` processors until ``e`` lowers the bound of the
        jobs ending by ``e`` by ``s``, and caps that of the jobs ending after
        ``e`` at its own bound minus ``s``; both stay upper bounds, so a job the
        screen drops would fail the exact test too."""
        state = self.state
        arrays = state.arrays
        assert arrays is not None
        jobs = self.listed[: self.count][sizes <= state.free]
        fit = arrays.size[jobs] <= state.free  # (not started by this pass)
        for r in reserved:
            fit &= jobs != r
        jobs = jobs[fit]
        if not len(jobs):
            return
        sizes = arrays.size[jobs]
        ends = now + arrays.estimate[jobs]
        last = float(ends.max())
        horizon = last + 1.0 + abs(last) * 1e-9
        step_times, step_values = _staircase(profile, horizon, int(sizes.min()))
        if len(step_times) > 1:
            step = np.searchsorted(np.array(step_times), _below(ends), side="left") - 1
            np.maximum(step, 0, out=step)
            bound = np.array(step_values, dtype=np.int64)[step]
        else:
            bound = np.full(len(jobs), step_values[0], dtype=np.int64)
        kept = sizes <= bound
        if not kept.all():
            jobs, sizes, ends, bound = jobs[kept], sizes[kept], ends[kept], bound[kept]
            if not len(jobs):
                return
        keys: np.ndarray | None
        if arrays.numeric_keys:
            keys = arrays.key[jobs]
            if np.abs(keys).max() >= 2.0**53:
                keys = None  # not all held exactly by float64
        else:
            keys = None
        if keys is None:
            # The queue's order, (key, job), as ranks.
            key_of = state.key_of
            listed = jobs.tolist()
            order = sorted(
                zip([key_of[j] for j in listed], listed, range(len(listed)), strict=True)
            )
            perm = np.array([p for _, _, p in order], dtype=np.int64)
            jobs, sizes, ends, bound = jobs[perm], sizes[perm], ends[perm], bound[perm]
            keys = np.arange(len(jobs), dtype=np.float64)
        self._start_screened(profile, now, jobs, keys, sizes, ends, bound)

    def _start_screened(
        self,
        profile: Profile,
        now: float,
        jobs: np.ndarray,
        keys: np.ndarray,
        sizes: np.ndarray,
        ends: np.ndarray,
        bound: np.ndarray,
    ) -> None:
        """The screened jobs, each tested exactly at its turn: the first in
        priority order (least key, then least job index) of those still passing
        the screen, until none passes (a job that fails the screen once fails it
        for the rest of the pass: the bounds and the free processors only
        shrink)."""
        state = self.state
        size = state.size
        est = state.estimate
        while True:
            passing = np.flatnonzero(sizes <= np.minimum(bound, state.free))
            if not len(passing):
                return
            if len(passing) > 1:
                held = keys[passing]
                tied = passing[held == held.min()]
                q = int(tied[jobs[tied].argmin()]) if len(tied) > 1 else int(tied[0])
            else:
                q = int(passing[0])
            j = int(jobs[q])
            s = size[j]
            d = est[j]
            if s <= state.free and profile.fits_now(s, d):
                profile.reserve(now, now + d, s)
                state.start(j)
                if not state.free:
                    return
                if d > 0:  # (else it took no time in the profile)
                    cap = bound[q] - s
                    inside = ends <= ends[q]
                    bound[inside] -= s
                    after = ~inside
                    bound[after] = np.minimum(bound[after], cap)
            bound[q] = -1  # tested


#: The parsed ``depth=all`` (conservative): kept as the word, so the run's Note and
#: JSON repeat it as given (``depth=all``, ``"all"``), and the run can be repeated.
ALL = "all"


def parse_depth(text: Any) -> int | str:
    """``"all"`` (also ``"inf"``, ``"conservative"``) -> :data:`ALL` (conservative),
    else a non-negative integer: a whole number written with a decimal point or an
    exponent (``"3.0"``, ``3.0``, ``"3e0"``) is one, as for an ``int`` option;
    ``3.5`` is refused, and so is a boolean (``depth=True`` is not EASY, nor ``False`` none)."""
    if isinstance(text, bool | np.bool_):
        raise ValueError("a whole number, not a boolean")
    if isinstance(text, int):
        value = text
    elif isinstance(text, float):
        if not (math.isfinite(text) and text.is_integer()):
            raise ValueError("a whole number")
        value = int(text)
    else:
        cleaned = str(text).strip().lower()
        if cleaned in {"all", "inf", "conservative"}:
            return ALL
        if not cleaned.isascii() or "_" in cleaned:  # int() reads "1_0" and "١"
            raise ValueError("a number in ASCII digits, no underscores")
        try:
            value = int(cleaned)
        except ValueError as exc:
            try:
                number = Decimal(cleaned)
            except InvalidOperation:
                raise exc from None
            if not (
                number.is_finite()
                and math.isfinite(float(number))
                and number == number.to_integral_value()
            ):
                raise ValueError("a whole number") from None
            value = int(number)
    if value < 0:
        raise ValueError("must be >= 0")
    return value


parse_depth.__name__ = "integer or 'all'"


def strategy_of_depth(depth: int | str | None = 2) -> Any:
    """The strategy of a reservation depth: ``none``, ``easy``, ``conservative``
    (``"all"``, or ``None`` as before) or :class:`Depth`."""
    from .conservative import Conservative
    from .easy import Easy
    from .none import NoBackfill

    if depth == ALL:
        depth = None
    if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool) or depth < 0):
        raise UsageError(f"backfill depth: option depth={depth!r}: expected an integer >= 0")
    if depth is None:
        return Conservative()
    if depth == 0:
        return NoBackfill()
    if depth == 1:
        return Easy()
    return Depth(depth)


@hookimpl
def schedlab_backfills() -> list[BackfillSpec]:
    """The ``depth`` strategy."""
    return [
        BackfillSpec(
            name="depth",
            description="Reservations for the first k blocked jobs (depth=k; 0 none, 1 EASY, all).",
            factory=strategy_of_depth,
            options=(
                OptionSpec(
                    "depth",
                    parse_depth,
                    2,
                    "number of blocked jobs holding a reservation, or 'all'",
                ),
            ),
        )
    ]
