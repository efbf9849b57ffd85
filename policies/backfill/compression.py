"""The fast compression of conservative backfilling (pure Python).

When jobs end before their estimates, :meth:`FastCompression._compress` moves
reservations earlier exactly as the plainly written (textbook)
:class:`~schedlab.policies.backfill.reference.ReferenceConservative` does, with less
work (see its docstring). Mixed into
:class:`~schedlab.policies.backfill.conservative.PythonConservative`, whose fields
it uses: ``state``, ``profile``, ``res`` (the state's reservation book),
``res_array``, ``horizon`` and ``due_heap``.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from heapq import heappush
from typing import TYPE_CHECKING

import numpy as np
from schedlab.errors import SimulationError

from .movable import movable

if TYPE_CHECKING:
    from schedlab.sim import Profile, SchedulerState

INF = math.inf

#: Queue length above which compression first skips, with one numpy screen, the
#: jobs before the first one that can move.
SCREEN_COMPRESS_QUEUE = 256


class FastCompression:
    """Compression of the reservations into capacity freed by early ends."""

    state: SchedulerState
    profile: Profile | None
    res: list[float]
    res_array: np.ndarray | None
    horizon: float
    carry: float
    due_heap: list[tuple[float, int]]

    def _compress(self, now: float, due: list[int]) -> None:
        """Move reservations earlier into the capacity freed before ``horizon``.

        In priority order, every waiting job whose reservation ``r`` is still ahead
        moves to its earliest start before ``min(r, horizon)`` (its own reservation
        counting as free for it), if there is one; a move widens the horizon to the
        end of the slot it vacated. The jobs before a mover are offered the slot it
        vacated at the next compression, whose horizon starts at least at the end of
        the last slot vacated in this one (``carry``). This is exactly the textbook
        compression of
        :class:`~schedlab.policies.backfill.reference.ReferenceConservative` (every
        waiting job to its earliest start before its reservation), with less work:

        * the horizon bounds every search: a job can start earlier only in a window
          that meets capacity freed since it was last offered some (by an early
          end, or a slot vacated by a move after it in the last compression or
          before it in this one), and all of that lies before the horizon;
        * jobs that cannot move are rejected in O(log slices) by necessary
          conditions before any search: larger than every slice before the horizon;
          the slice at the horizon too full for a job whose window must cover it;
          the slice just before ``r`` too full and no gap before it long enough;
        * in a long queue, the jobs before the first one that can move are skipped
          with one vectorised screen (:func:`schedlab.sim.compress.movable`);
        * the jobs right after a moving job in priority order that are identical to
          it (job arrays) move as one bundle (:meth:`_move_bundle`);
        * a move updates only the part of the profile that changes.
        """
        profile = self.profile
        assert profile is not None
        times = profile.times
        frees = profile.free
        queue = self.state.queue
        size = self.state.size
        est = self.state.estimate
        res_start = self.res
        qkey = self.state.key_of
        horizon = max(self.horizon, self.carry)
        self.carry = -INF  # the end of the last slot vacated by this compression
        n_queue = len(queue)
        start = 0
        arrays = self.state.arrays
        if (
            self.res_array is not None
            and arrays is not None
            and arrays.numeric_keys
            and n_queue > SCREEN_COMPRESS_QUEUE
        ):
            first = self._first_movable(now, horizon)
            if first < 0:
                return
            start = bisect_left(queue, (qkey[first], first))
        # An upper bound of the free processors before the horizon (moves only add
        # capacity in the slots they vacate and where the horizon grows): larger
        # jobs cannot move.
        most = max(frees[: bisect_left(times, horizon)])
        candidates = [j for _, j in (queue[start:] if start else queue) if size[j] <= most]
        idx = 0
        n_candidates = len(candidates)
        while idx < n_candidates:
            j = candidates[idx]
            idx += 1
            r = res_start[j]
            if not r > now:
                continue  # due, stale (NaN) or new (NaN): handled by the caller
            s = size[j]
            d = est[j]
            reach = now + d  # every window ends at least here (or at r)
            i = bisect_left(times, r) - 1  # the slice just before r
            before = times[i]
            open_before = frees[i] >= s
            if not open_before and reach > before:
                # Every gap before r ends by `before`, too early for a window of d.
                continue
            if r > horizon:
                limit = horizon
                if reach > horizon and frees[bisect_right(times, horizon) - 1] < s:
                    continue  # every window covers the instant horizon, which is full
            else:
                limit = r
            if limit == r and max(frees[: i + 1]) < s:
                continue  # no slice before r has room
            found = profile.first_start_before(s, d, r, limit)
            if found is None:
                continue
            at = found
            if idx < n_candidates:
                k = candidates[idx]
                twin = res_start[k] == r and size[k] == s and est[k] == d
            else:
                twin = False
            if twin:
                # Identical jobs may follow j in priority order (a job array).
                after = bisect_left(queue, (qkey[j], j)) + 1
                pos = self._move_bundle(j, at, after, now, due)
                idx += pos - after
            else:
                profile.move(r, at, d, s)
                self._set_reservation(j, at, now, due)
                pos = -1
            if r + d > self.carry:
                self.carry = r + d
            low = r if r < horizon else horizon
            if r + d > horizon:
                horizon = r + d
            lo = bisect_right(times, low) - 1
            hi = bisect_left(times, horizon)
            if hi > lo:
                more = max(frees[lo:hi])
                if more > most:
                    # Larger jobs after this one may fit now.
                    most = more
                    if pos < 0:
                        pos = bisect_left(queue, (qkey[j], j)) + 1
                    candidates = [k for _, k in queue[pos:] if size[k] <= most]
                    n_candidates = len(candidates)
                    idx = 0

    def _first_movable(self, now: float, horizon: float) -> int:
        """The first waiting job in priority order that may move earlier (see
        :mod:`schedlab.policies.backfill.movable`), ``-1`` if none."""
        arrays = self.state.arrays
        assert arrays is not None and self.res_array is not None
        sizes = arrays.size
        lo = arrays.first_waiting()
        hi = arrays.hi
        res = self.res_array[lo:hi]
        found = np.flatnonzero(res > now)
        if not len(found):
            return -1
        profile = self.profile
        assert profile is not None
        mask = movable(
            np.array(profile.times),
            np.array(profile.free),
            horizon,
            sizes[lo:hi][found],
            arrays.estimate[lo:hi][found],
            res[found],
        )
        found = found[mask]
        if not len(found):
            return -1
        keys = arrays.key[lo:hi][found]
        best = int(np.lexsort((found, keys))[0]) if len(found) > 1 else 0
        return int(found[best]) + lo

    def _move_bundle(self, j: int, at: float, pos: int, now: float, due: list[int]) -> int:
        """Move ``j`` to ``at`` and the jobs identical to it that follow it in
        priority order (``queue[pos:]``) to their earliest starts; return the queue
        position after the last of them.

        Identical jobs (same size ``s``, estimate ``d`` and reservation ``r``) are what
        job arrays leave in the queue. Processing them one by one would give the same
        result as this: each one's search looks only at the profile before ``r``
        (the slots they vacate lie after it), the horizon already covers ``r`` after
        the first move, and once one cannot move none of the next can (the slots of
        those that moved are given back before the next search, as they would be one
        by one, so that it never sees a slot held twice). So they fill the earliest
        start found while it has room (``s`` processors per job over the window
        ``[t, min(t + d, r))``), then the next earliest start, and so on."""
        queue = self.state.queue
        size = self.state.size
        est = self.state.estimate
        res_start = self.res
        profile = self.profile
        assert profile is not None
        s = size[j]
        d = est[j]
        r = res_start[j]
        n_queue = len(queue)
        if pos >= n_queue or res_start[queue[pos][1]] != r:
            profile.move(r, at, d, s)
            self._set_reservation(j, at, now, due)
            return pos
        members = [j]
        while pos < n_queue:
            k = queue[pos][1]
            if res_start[k] != r or size[k] != s or est[k] != d:
                break
            members.append(k)
            pos += 1
        done = 0
        total = len(members)
        while True:
            stop = at + d
            room = profile.min_free_over(at, stop if stop < r else r) // s
            count = min(room, total - done)
            if count <= 0:  # cannot happen: the search found room for one
                raise SimulationError(f"internal error: no room at {at} for job {j}")
            profile.move(r, at, d, count * s)
            for k in members[done : done + count]:
                self._set_reservation(k, at, now, due)
            done += count
            if done == total:
                break
            nxt = profile.first_start_before(s, d, r, r)
            if nxt is None:
                break
            at = nxt
        return pos

    def _set_reservation(self, j: int, at: float, now: float, due: list[int]) -> None:
        """Job ``j`` is reserved from ``at``: due now, or a timer at ``at``."""
        self.res[j] = at
        if self.res_array is not None:
            self.res_array[j] = at
        self.state.log_reservation(j, at)
        if at == now:
            due.append(j)
        else:
            heappush(self.due_heap, (at, j))
