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

:func:`outcome_ok` answers the whole check of a node-level outcome in one call
(``schedlab.sim.whole_run.check_node_outcome``): every job started at or after
its submission; the processors in use never over the machine (the same running
sums over the same event order as ``check_outcome``'s); each job's allocation
rows non-empty, on nodes in range, ascending, inside its partition, with no
negative amount and at least its cores (``check_allocations``'s row checks);
and :func:`node_sweep_ok`'s sweep. It is one pass over the events in time
order: a job's rows are checked at its start event, as they are taken into the
nodes' amounts in use (every job starts once), so they are read once there and
once at its end, not in a pass of their own first; an end reached before its
job's start (a run time of 0 or less) checks what it reads (its rows' range and
nodes) and leaves the rest to that start. It reads every index it follows only
after checking it is in range (numba does not check bounds), and answers
``False`` at the first thing it refuses: the numpy checks then run and name it,
as before.

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
    in_use = np.zeros(capacity.shape, dtype=np.int64)
    for e in range(by_time.shape[0]):
        k = by_time[e]
        if k < n:
            _give_back(in_use, k, offset, nodes, amounts)
        elif not _take(in_use, k - n, offset, nodes, amounts, capacity):
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _give_back(
    in_use: np.ndarray, k: int, offset: np.ndarray, nodes: np.ndarray, amounts: np.ndarray
) -> None:
    """Job ``k`` ends: its rows leave ``in_use``."""
    for r in range(offset[k], offset[k + 1]):
        node = nodes[r]
        for d in range(in_use.shape[1]):
            in_use[node, d] -= amounts[r, d]


@njit(cache=True, nogil=True, inline="always")
def _take(
    in_use: np.ndarray,
    j: int,
    offset: np.ndarray,
    nodes: np.ndarray,
    amounts: np.ndarray,
    capacity: np.ndarray,
) -> bool:
    """Job ``j`` starts: its rows join ``in_use``; ``False`` as soon as a node
    is over its capacity in a dimension."""
    for r in range(offset[j], offset[j + 1]):
        node = nodes[r]
        for d in range(in_use.shape[1]):
            v = in_use[node, d] + amounts[r, d]
            in_use[node, d] = v
            if v > capacity[node, d]:
                return False
    return True


@njit(cache=True, nogil=True)
def outcome_ok(
    start: np.ndarray,
    submit: np.ndarray,
    size: np.ndarray,
    procs: int,
    end: np.ndarray,
    by_end: np.ndarray,
    by_start: np.ndarray,
    offset: np.ndarray,
    nodes: np.ndarray,
    amounts: np.ndarray,
    capacity: np.ndarray,
    inside: np.ndarray,
    partition_of: np.ndarray,
) -> bool:
    """``True`` when a node-level whole run's outcome passes every check of
    ``check_outcome`` and ``check_allocations`` (see the module docstring).
    ``end`` is ``start + run_time``, ``by_end`` and ``by_start`` the stable
    argsorts of ``end`` and ``start``: merged with ends first at equal times,
    they give the events in the order of the stable argsort of
    ``concatenate((end, start))``, the order both numpy checks sweep; ``inside``
    is ``(partitions, nodes)`` (bool), or ``(0, 0)`` when every partition holds
    every node (no partition test, as in the numpy check);
    ``offset`` has ``len(start) + 1`` entries and ``amounts`` as many rows as
    ``nodes`` and as many columns as ``capacity`` (the caller checks the shapes).
    Integers are int64, times float64."""
    n = start.shape[0]
    rows = nodes.shape[0]
    n_nodes = capacity.shape[0]
    dims = capacity.shape[1]
    if offset[0] != 0 or offset[n] != rows:
        return False
    n_parts = inside.shape[0]
    in_use = np.zeros(capacity.shape, dtype=np.int64)
    used = 0
    ie = 0
    i_s = 0
    for _ in range(2 * n):
        if ie < n and (i_s >= n or end[by_end[ie]] <= start[by_start[i_s]]):
            k = by_end[ie]
            ie += 1
            used -= size[k]
            if used > procs:
                return False
            # (a job with a run time of 0 or less ends before it starts: its rows
            # are not checked yet, so only what is read is checked here)
            a = offset[k]
            b = offset[k + 1]
            if not 0 <= a < b <= rows:
                return False
            for r in range(a, b):
                node = nodes[r]
                if node < 0 or node >= n_nodes:
                    return False
                for d in range(dims):
                    in_use[node, d] -= amounts[r, d]
            continue
        j = by_start[i_s]
        i_s += 1
        if not start[j] >= submit[j]:  # NaN: never started
            return False
        used += size[j]
        if used > procs:
            return False
        # Every job starts once: its rows are checked here, as they are taken.
        a = offset[j]
        b = offset[j + 1]
        if not 0 <= a < b <= rows:
            return False
        p = -1
        if n_parts:
            p = partition_of[j]
            if p < 0 or p >= n_parts:
                return False
        cores = 0
        last = -1
        for r in range(a, b):
            node = nodes[r]
            if node <= last or node >= n_nodes:
                return False  # not ascending, out of range (last >= -1: none < 0)
            if n_parts and not inside[p, node]:
                return False
            last = node
            for d in range(dims):
                x = amounts[r, d]
                if x < 0:
                    return False
                v = in_use[node, d] + x
                in_use[node, d] = v
                if v > capacity[node, d]:
                    return False
            cores += amounts[r, 0]
        if cores < size[j]:
            return False
    return True


__all__ = ["node_sweep_ok", "outcome_ok"]
