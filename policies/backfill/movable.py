"""Vectorised screen of conservative compression: which waiting jobs can move earlier.

During a compression pass (see :meth:`schedlab.sim.engine.Engine._compress`) a
waiting job of ``s`` processors, estimate ``d`` and reservation ``r`` moves to the
earliest start ``t < limit = min(r, horizon)`` such that at least ``s`` processors
are free over ``[t, min(t + d, r))`` (its own reservation counts as free for it:
from ``r`` on it always fits). Call a slice *blocked* for ``s`` when fewer than
``s`` processors are free in it, and a *gap* a maximal run of slices that are not
blocked, from ``a`` (a slice start) to ``b`` (the start of the next blocked slice,
infinity if none). Starting at a gap's start is best within that gap, so a job can
move exactly when some gap starting before ``limit``

* is at least ``d`` long (``b >= a + d``), or
* reaches ``r`` (``b >= r``): it is the gap that holds the instant just before ``r``.

:func:`movable` evaluates this test for every waiting job at once with numpy: one
row of gap data per distinct job size (blocked masks, next blocked slice, gap
starts, running maximum of gap lengths), then two gathers per job. Lengths are
compared with a small tolerance, so the result is a superset of the jobs that can
move (the engine checks each candidate exactly, in priority order, and screens
again after every move).
"""

from __future__ import annotations

import numpy as np


def movable(
    times: np.ndarray,
    free: np.ndarray,
    horizon: float,
    size: np.ndarray,
    estimate: np.ndarray,
    reservation: np.ndarray,
) -> np.ndarray:
    """Boolean mask: which jobs (``size``, ``estimate``, ``reservation`` arrays, every
    reservation after ``times[0]``) may have an earlier start before ``min(reservation,
    horizon)`` in the profile ``times``/``free`` (slice starts, free processors)."""
    n = len(size)
    out = np.zeros(n, dtype=bool)
    if n == 0:
        return out
    limit = np.minimum(reservation, horizon)
    # Slices starting at or after the last reservation never matter: cut there (the
    # gap that reaches the cut reaches every reservation, which the second test sees).
    m = int(np.searchsorted(times, reservation.max(), "left")) + 1
    if m < len(times):
        times = times[:m]
        free = free[:m]
    else:
        m = len(times)
    # A job larger than every slice before its limit cannot move.
    il = np.searchsorted(times, limit, "left") - 1  # last slice starting before limit
    prefix_max = np.maximum.accumulate(free)
    fits = size <= prefix_max[il]
    if not fits.any():
        return out
    pick = np.flatnonzero(fits)
    size = size[pick]
    estimate = estimate[pick]
    reservation = reservation[pick]
    limit = limit[pick]
    il = il[pick]
    ir = np.searchsorted(times, reservation, "left") - 1  # slice holding r - epsilon

    sizes, row = np.unique(size, return_inverse=True)
    blocked = free[None, :] < sizes[:, None]  # distinct sizes x slices
    index = np.arange(m)
    nxt = np.where(blocked, index, m)
    nxt = np.minimum.accumulate(nxt[:, ::-1], axis=1)[:, ::-1]  # next blocked slice
    ends = np.append(times, np.inf)[nxt]  # start of the next blocked slice (gap end)
    starts = ~blocked
    starts[:, 1:] &= blocked[:, :-1]  # gap starts
    longest = np.maximum.accumulate(np.where(starts, ends - times, -np.inf), axis=1)
    gap_of = np.maximum.accumulate(np.where(starts, index, 0), axis=1)

    tolerance = 1e-9 + 1e-12 * (abs(float(times[-1])) + float(estimate.max()))
    long_enough = longest[row, il] >= estimate - tolerance
    reaches = ~blocked[row, ir] & (times[gap_of[row, ir]] < limit)
    out[pick] = long_enough | reaches
    return out
