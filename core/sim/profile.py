"""The availability profile: free processors over future time, as few slices.

``times[i]`` is the start of slice ``i`` and ``free[i]`` the processors free from
``times[i]`` until ``times[i + 1]`` (the last slice lasts forever). Running jobs
occupy their processors until their *estimated* end, reservations from their
reserved start to start + estimate. Used by conservative backfilling (kept between
scheduling passes) and by reservation depths above 1 (rebuilt at every pass).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right


class Profile:
    """Free processors per time slice, starting at the current time."""

    __slots__ = ("free", "procs", "times")

    def __init__(self, procs: int, now: float) -> None:
        self.procs = procs
        self.times: list[float] = [now]
        self.free: list[int] = [procs]

    def __repr__(self) -> str:
        slices = ", ".join(f"{t:g}:{f}" for t, f in zip(self.times, self.free, strict=True))
        return f"<Profile {slices}>"

    def advance(self, now: float) -> None:
        """Forget the past: the profile now starts at ``now``."""
        times = self.times
        if now <= times[0]:
            return
        i = bisect_right(times, now) - 1
        if i > 0:
            del times[:i]
            del self.free[:i]
        times[0] = now

    def reserve(self, start: float, end: float, size: int, merge: bool = False) -> None:
        """Take ``size`` processors over ``[start, end)`` (``start >= times[0]``); with
        ``merge``, merge slices that become equal at the two boundaries."""
        if size > 0:
            self._add(start, end, -size, merge)

    def release(self, start: float, end: float, size: int) -> None:
        """Give back ``size`` processors over ``[start, end)`` (clipped to the present),
        merging slices that become equal."""
        if start < self.times[0]:
            start = self.times[0]
        if size > 0:
            self._add(start, end, size, True)

    def _add(self, start: float, end: float, delta: int, merge: bool) -> None:
        """Add ``delta`` free processors over ``[start, end)``, splitting slices at the
        two ends; with ``merge``, merge slices that become equal there (the inside
        kept its shape)."""
        if end <= start:
            return
        times, free = self.times, self.free
        i = bisect_left(times, start)
        if i == len(times) or times[i] != start:
            times.insert(i, start)
            free.insert(i, free[i - 1])
        k = bisect_left(times, end, i)
        if k == len(times) or times[k] != end:
            times.insert(k, end)
            free.insert(k, free[k - 1])
        for x in range(i, k):
            free[x] += delta
        if merge:
            if k < len(times) and free[k] == free[k - 1]:
                del times[k]
                del free[k]
            if i > 0 and free[i] == free[i - 1]:
                del times[i]
                del free[i]

    def move(self, old: float, new: float, duration: float, size: int) -> None:
        """Move a reservation of ``size`` processors for ``duration`` from ``old`` to
        ``new < old``: the same free processors as ``release(old, old + duration,
        size)`` then ``reserve(new, new + duration, size)``, touching only the parts
        that change when the two slots overlap, and merging equal slices."""
        new_end = new + duration
        if new_end <= old:
            self.release(old, old + duration, size)
            self.reserve(new, new_end, size, True)
        else:
            self.reserve(new, old, size, True)
            self.release(new_end, old + duration, size)

    def merge_at(self, t: float) -> None:
        """Merge the slice starting at ``t`` into the previous one if both have as
        many processors free (the profile stays as short as it can)."""
        times, free = self.times, self.free
        k = bisect_left(times, t)
        if 0 < k < len(times) and times[k] == t and free[k] == free[k - 1]:
            del times[k]
            del free[k]

    def earliest(
        self, size: int, duration: float, after: float | None = None, limit: float = math.inf
    ) -> float:
        """The earliest time ``>= times[0]`` at which ``size`` processors stay free for
        ``duration`` seconds. ``after``: a known lower bound of the answer (the walk
        starts at its slice); ``limit``: ``inf`` is returned when the answer is later
        (the walk stops there)."""
        times, free = self.times, self.free
        n = len(times)
        i = 0
        if after is not None and after > times[0]:
            if after > limit:
                return math.inf
            i = bisect_right(times, after) - 1
        while True:
            while free[i] < size:
                i += 1
                if i == n:  # cannot happen while size <= procs: the end is all free
                    raise ValueError(f"{size} processors never free in {self!r}")
            start = times[i]
            if start > limit:
                return math.inf
            end = start + duration
            k = i + 1
            while k < n and times[k] < end:
                if free[k] < size:
                    break
                k += 1
            else:
                return start
            i = k + 1
            if i == n:
                raise ValueError(f"{size} processors never free in {self!r}")

    def first_fit(self, size: int, duration: float) -> float:
        """:meth:`earliest` in one walk over the slices (same result): the start of
        the first gap (run of slices with at least ``size`` processors free) that
        lasts ``duration`` (no slice too full before its start + ``duration``)."""
        times, free = self.times, self.free
        start = end = 0.0
        inside = False
        for k in range(len(times)):
            if inside:
                if times[k] >= end:
                    return start
                if free[k] < size:
                    inside = False
            elif free[k] >= size:
                start = times[k]
                end = start + duration
                inside = True
        if inside:
            return start
        raise ValueError(f"{size} processors never free in {self!r}")

    def refit(self, size: int, duration: float, fit: float, lo: float, hi: float) -> float:
        """The :meth:`first_fit` of ``size`` processors for ``duration`` after free
        processors were added over ``[lo, hi)`` only, given ``fit``, the first fit
        before (still valid: nothing was taken from its window). Only a gap that
        reaches into ``[lo, hi)`` can have become long enough, so only those that
        start before ``fit`` are walked."""
        times, free = self.times, self.free
        n = len(times)
        k = bisect_right(times, lo) - 1
        if k < 0:
            k = 0
        while k > 0 and free[k] >= size and free[k - 1] >= size:
            k -= 1  # back to the start of the gap holding lo
        stop = hi if hi < fit else fit
        start = end = 0.0
        inside = False
        while k < n:
            t = times[k]
            if inside:
                if t >= end:
                    return start if start < fit else fit
                if free[k] < size:
                    inside = False
            if not inside:
                if t >= stop:
                    return fit
                if free[k] >= size:
                    start = t
                    end = t + duration
                    inside = True
            k += 1
        return start if inside and start < fit else fit

    def earlier_start(
        self, size: int, duration: float, current: float, limit: float | None = None
    ) -> float | None:
        """The earliest start before ``limit`` (default ``current``) for a job that
        holds ``size`` processors over ``[current, current + duration)`` (its own
        reservation, which counts as free for it), or ``None`` if there is none. The
        profile is not changed."""
        times, free = self.times, self.free
        n = len(times)
        own_end = current + duration
        if limit is None or limit > current:
            limit = current
        i = 0
        while i < n and times[i] < limit:
            if free[i] < size:
                i += 1
                continue
            start = times[i]
            end = start + duration
            k = i + 1
            while k < n and times[k] < end:
                f = free[k]
                if times[k] >= current:
                    # Inside its own reservation only if the slice's part in the
                    # window lies within [current, own_end).
                    stop = times[k + 1] if k + 1 < n else math.inf
                    if (stop if stop < end else end) <= own_end:
                        f += size
                if f < size:
                    break
                k += 1
            else:
                return start
            i = k + 1
        return None

    def first_start_before(
        self, size: int, duration: float, current: float, limit: float
    ) -> float | None:
        """:meth:`earlier_start` in one walk over the slices (same result).

        The earliest start is the start ``a`` of the first *gap* (run of slices with
        at least ``size`` processors free) that begins before ``limit`` and either
        lasts ``duration`` (no slice too full before ``a + duration``) or reaches
        ``current`` (from there the job's own reservation makes room for it)."""
        times, free = self.times, self.free
        start = -1.0
        inside = False
        for k in range(len(times)):
            t = times[k]
            if inside:
                if t >= current or t >= start + duration:
                    return start
                if free[k] < size:
                    inside = False
            else:
                if t >= limit:
                    return None
                if free[k] >= size:
                    start = t
                    inside = True
        return start if inside else None

    def fits_now(self, size: int, duration: float) -> bool:
        """True if ``size`` processors stay free from ``times[0]`` for ``duration``."""
        times, free = self.times, self.free
        if free[0] < size:
            return False
        end = times[0] + duration
        k = 1
        n = len(times)
        while k < n and times[k] < end:
            if free[k] < size:
                return False
            k += 1
        return True

    def min_free_over(self, start: float, end: float) -> int:
        """The fewest processors free over ``[start, end)``."""
        times = self.times
        i = bisect_right(times, start) - 1
        k = bisect_left(times, end, i)
        return min(self.free[i:k]) if k > i else self.procs

    def max_free_before(self, t: float) -> int:
        """The most processors free in any slice starting before ``t`` (``-1`` if none)."""
        idx = bisect_left(self.times, t)
        if idx == 0:
            return -1
        return max(self.free[:idx])
