"""The availability profile of a multi-resource machine: every node's free amounts
over future time, as slices (the node-level counterpart of
:class:`~schedlab.sim.profile.Profile`).

``times[i]`` is the start of slice ``i`` and ``free[i]`` a ``(nodes, dims)``
matrix of what is free from ``times[i]`` until ``times[i + 1]`` (the last slice
lasts forever). :meth:`NodeProfile.earliest` finds the first slice start from
which a job has an allocation for its whole estimate: on each node, the least
free over the window is what the allocation policy may use, so the allocation it
returns is free at every instant of the window.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import SimulationError
from .resources import Allocation


class NodeProfile:
    """Free amounts per node per time slice, from ``now`` on."""

    __slots__ = ("_slices", "times", "totals")

    def __init__(self, free_now: np.ndarray, now: float) -> None:
        self.times: list[float] = [now]
        # One (nodes, dims) matrix per slice, in a 3-D array with room to grow
        # (a window's minimum and an allocation over many slices are then one
        # numpy operation each).
        self._slices = np.empty((16, *free_now.shape), dtype=free_now.dtype)
        self._slices[0] = free_now
        #: Per slice, the free amounts summed over every node, each node's counted
        #: from zero (a necessary test before the per-node window: no allocation
        #: takes more than them; an over-committed node gives nothing).
        self.totals: list[list[int]] = [np.maximum(free_now, 0).sum(axis=0).tolist()]

    @property
    def free(self) -> np.ndarray:
        """``free[i]``: the ``(nodes, dims)`` free amounts of slice ``i`` (read it)."""
        return self._slices[: len(self.times)]

    def __len__(self) -> int:
        return len(self.times)

    def _split(self, t: float) -> int:
        """Index of the slice starting at ``t`` (made if needed)."""
        times = self.times
        i = bisect_left(times, t)
        if i < len(times) and times[i] == t:
            return i
        n = len(times)
        if n == len(self._slices):
            grown = np.empty((2 * n, *self._slices.shape[1:]), dtype=self._slices.dtype)
            grown[:n] = self._slices
            self._slices = grown
        slices = self._slices
        if i < n:
            slices[i + 1 : n + 1] = slices[i:n]  # numpy copies overlapping ranges safely
        slices[i] = slices[i - 1]
        times.insert(i, t)
        self.totals.insert(i, list(self.totals[i - 1]))
        return i

    def add(self, start: float, end: float, alloc: Allocation, sign: int = -1) -> None:
        """Take (``sign=-1``) or give back (``+1``) ``alloc``'s amounts over
        ``[start, end)`` (``start`` is clipped to the profile's start)."""
        if start < self.times[0]:
            start = self.times[0]
        if not end > start:
            return
        i = self._split(start)
        k = self._split(end) if end != math.inf else len(self.times)
        nodes, amounts = alloc.nodes, alloc.amounts * sign
        before = self._slices[i:k, nodes]
        after = before + amounts
        self._slices[i:k, nodes] = after
        totals = self.totals
        if before.size and (before.min() < 0 or after.min() < 0):
            # An over-committed node (negative free, after a prediction correction
            # raised a running job's estimate) gives nothing: the totals count
            # each node's free amounts from zero, slice by slice.
            changes = (np.maximum(after, 0) - np.maximum(before, 0)).sum(axis=1).tolist()
            for s, change in zip(range(i, k), changes, strict=True):
                row = totals[s]
                for d, c in enumerate(change):
                    row[d] += c
            return
        change = amounts.sum(axis=0).tolist()
        dims = range(len(change))
        for s in range(i, k):
            row = totals[s]
            for d in dims:
                row[d] += change[d]

    def window(self, i: int, end: float) -> np.ndarray:
        """Per node, the least free from slice ``i``'s start until ``end``."""
        times = self.times
        k = max(bisect_left(times, end, i + 1), i + 1)
        if k == i + 1:
            return self._slices[i].copy()
        least: np.ndarray = self._slices[i:k].min(axis=0)
        return least

    def earliest(
        self,
        allocate: Any,
        duration: float,
        after: float | None = None,
        need: Sequence[int] | None = None,
    ) -> tuple[float, Allocation]:
        """The first slice start (not before ``after``) from which
        ``allocate(free_matrix)`` finds an allocation free for ``duration``, and
        that allocation. The last slice lasts forever, so a job that fits the idle
        machine always gets one (else a :class:`~schedlab.errors.SimulationError`:
        the allocation policy refuses it even there).

        ``need`` (the demand's total per dimension, optional) skips the starts at
        which some slice of the window has less free than that in total over
        every node: no allocation exists there, so ``allocate`` is not asked."""
        times = self.times
        totals = self.totals
        i = 0 if after is None else max(bisect_left(times, after), 0)
        n = len(times)
        dims = range(len(need)) if need is not None else range(0)
        while i < n:
            end = times[i] + duration
            if need is not None:
                short = -1  # the last slice of the window short of ``need``
                k = i
                while k < n and (k == i or times[k] < end):
                    row = totals[k]
                    for d in dims:
                        if row[d] < need[d]:
                            short = k
                            break
                    k += 1
                if short >= 0:
                    i = short + 1  # every start up to it has it in its window
                    continue
            alloc = allocate(self.window(i, end))
            if alloc is not None:
                return times[i], alloc
            i += 1
        # Only an allocation policy refusing a job that the idle machine holds
        # gets here: a SimulationError, which the engine replaces by the error
        # naming that policy (``Engine._refused_on_idle``).
        raise SimulationError(
            "no allocation even on the last slice of the profile: the allocation policy "
            "refuses the job when every other job has ended"
        )


__all__ = ["NodeProfile"]
