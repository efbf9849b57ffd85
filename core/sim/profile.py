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

    def _split(self, t: float) -> int:
        """Index of the slice starting at ``t`` (split one if needed); ``t >= times[0]``."""
        times = self.times
        i = bisect_left(times, t)
        if i < len(times) and times[i] == t:
            return i
        times.insert(i, t)
        self.free.insert(i, self.free[i - 1])
        return i

    def reserve(self, start: float, end: float, size: int) -> None:
        """Take ``size`` processors over ``[start, end)`` (``start >= times[0]``)."""
        if end <= start or size <= 0:
            return
        i = self._split(start)
        k = self._split(end)
        free = self.free
        for x in range(i, k):
            free[x] -= size

    def release(self, start: float, end: float, size: int) -> None:
        """Give back ``size`` processors over ``[start, end)`` (clipped to the present),
        merging slices that become equal."""
        times = self.times
        if start < times[0]:
            start = times[0]
        if end <= start or size <= 0:
            return
        i = self._split(start)
        k = self._split(end)
        free = self.free
        for x in range(i, k):
            free[x] += size
        # Merge at the two boundaries (the inside kept its shape).
        if k < len(times) and free[k] == free[k - 1]:
            del times[k]
            del free[k]
        if i > 0 and free[i] == free[i - 1]:
            del times[i]
            del free[i]

    def earliest(self, size: int, duration: float) -> float:
        """The earliest time ``>= times[0]`` at which ``size`` processors stay free for
        ``duration`` seconds."""
        times, free = self.times, self.free
        n = len(times)
        i = 0
        while True:
            while free[i] < size:
                i += 1
                if i == n:  # cannot happen while size <= procs: the end is all free
                    raise ValueError(f"{size} processors never free in {self!r}")
            start = times[i]
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

    def max_free_before(self, t: float) -> int:
        """The most processors free in any slice starting before ``t`` (``-1`` if none)."""
        idx = bisect_left(self.times, t)
        if idx == 0:
            return -1
        return max(self.free[:idx])
