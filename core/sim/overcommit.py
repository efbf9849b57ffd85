"""A compiled sweep that tells whether a whole run's allocations over-commit a node.

``schedlab.sim.whole_run.check_allocations`` checks a whole run's node-level
allocations with numpy: every allocation row gives a start and an end event on its
node, sorted by node and then by time (ends first), and each node's running sums
are compared with its capacity. On a long log that is millions of events gathered
and sorted several times (RICC-2010 on 1,024 nodes: 2.5 million rows, about a
second of CPU). When numba is already loaded (a compiled strategy produced the
run), :func:`node_sweep_ok` answers the same question in one pass over the jobs'
events in time order, keeping each node's amounts in use in a small matrix: a
node's running sums in that pass are the same prefix sums, in the same order, as
in the per-node sort (each job holds a node at most once, which the check has
verified before), so both agree on whether a node is ever over its capacity.
Only a "no" needs the per-node sort, which names the first over-committed node
exactly as before.

Importing this module imports numba; ``schedlab.sim.whole_run.check_allocations``
does so only when numba is already in ``sys.modules``, so a run never pays for
loading numba just to be checked.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def node_sweep_ok(
    by_time: np.ndarray,
    n: int,
    offset: np.ndarray,
    nodes: np.ndarray,
    amounts: np.ndarray,
    capacity: np.ndarray,
) -> bool:
    """``True`` when no node's amounts in use exceed its capacity in any dimension
    at any event. ``by_time`` orders the ``2 n`` events (``k < n``: job ``k``
    ends; ``k >= n``: job ``k - n`` starts) by time, ends first at equal times;
    job ``j`` holds ``amounts[r]`` on ``nodes[r]`` for ``r`` in
    ``offset[j]:offset[j + 1]`` (int64 throughout; nodes in range)."""
    dims = capacity.shape[1]
    in_use = np.zeros(capacity.shape, dtype=np.int64)
    for e in range(by_time.shape[0]):
        k = by_time[e]
        if k < n:
            for r in range(offset[k], offset[k + 1]):
                node = nodes[r]
                for d in range(dims):
                    in_use[node, d] -= amounts[r, d]
        else:
            j = k - n
            for r in range(offset[j], offset[j + 1]):
                node = nodes[r]
                for d in range(dims):
                    v = in_use[node, d] + amounts[r, d]
                    in_use[node, d] = v
                    if v > capacity[node, d]:
                        return False
    return True


__all__ = ["node_sweep_ok"]
