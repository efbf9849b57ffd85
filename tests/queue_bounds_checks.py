"""The check shared by the compiled EASY kernels' queue-bounds tests: each group
(block or super-block) of queue slots keeps at most the smallest size and the
shortest estimate of the waiting jobs in it."""

from __future__ import annotations

import numpy as np


def assert_group_bounds(
    first: int,
    end: int,
    width: int,
    hole: int,
    sizes: np.ndarray,
    estimates: np.ndarray,
    group_sizes: np.ndarray,
    group_estimates: np.ndarray,
) -> int:
    """Assert the bounds of the groups of ``width`` slots holding slots ``first ..
    end - 1`` (``sizes[x] == hole``: no job there); returns how many groups hold a
    waiting job."""
    lo, hi = first // width, -(-end // width)
    size = np.full((hi - lo) * width, hole, dtype=np.int64)
    est = np.full((hi - lo) * width, np.inf)
    size[first - lo * width : end - lo * width] = sizes[first:end]
    est[first - lo * width : end - lo * width] = estimates[first:end]
    est[size == hole] = np.inf
    least_size = size.reshape(-1, width).min(axis=1)
    least_est = est.reshape(-1, width).min(axis=1)
    waiting = least_size < hole
    bad = waiting & ((group_sizes[lo:hi] > least_size) | (group_estimates[lo:hi] > least_est))
    assert not bad.any(), (width, lo + np.flatnonzero(bad))
    return int(waiting.sum())
