"""The allocations of a run on a platform as the result writes them: each job's
node names (``Result.allocations``, the extra ``schedlab.nodes``) and the amounts
it held, summed over its nodes (the extra ``schedlab.held``,
``cores=8 memory=... gpus=0``).

Computed for all jobs at once from the allocations in columns (a whole run's
:class:`~schedlab.sim.whole_run.AllocationColumns`, or the machine's mapping
gathered into them); the held amounts are written once per distinct sum.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise

import numpy as np

from .grouping import group_rows
from .resources import Allocation
from .whole_run import AllocationColumns


def node_lists(given: Mapping[int, Allocation], names: list[str], n: int) -> list[tuple[str, ...]]:
    """The names of the nodes of jobs ``0..n-1`` (each job's nodes in its
    allocation's order)."""
    if isinstance(given, AllocationColumns):
        offset, nodes = given.node_offset, given.nodes
    else:
        allocs = [given[j] for j in range(n)]
        offset = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(a.nodes) for a in allocs], out=offset[1:])
        nodes = np.concatenate([a.nodes for a in allocs]) if n else np.zeros(0, np.int64)
    flat = np.array(names, dtype=object)[np.asarray(nodes, dtype=np.int64)].tolist()
    bounds = np.asarray(offset).tolist()
    return [tuple(flat[a:b]) for a, b in pairwise(bounds)]


def held_texts(
    given: Mapping[int, Allocation],
    dims: tuple[str, ...],
    n: int,
    unbounded: np.ndarray | None = None,
) -> list[str]:
    """``"cores=8 memory=1024 gpus=0"``: what each of jobs ``0..n-1`` held,
    summed over its nodes, dimension by dimension. ``unbounded`` (``(nodes, dims)``
    booleans: the dimensions a node does not bound, such as the memory of a node
    group declaring none) leaves a dimension out of the text of every job holding
    such a node: its amount there is no quantity (a sentinel), so it is unknown."""
    sums = _held_sums(given, len(dims), n)
    if sums is None:  # amounts not all signed integers: summed job by job
        rows = np.array(
            [given[j].amounts.sum(axis=0).tolist() for j in range(n)], dtype=np.float64
        ).reshape(n, len(dims))
    else:
        rows = sums
    if unbounded is not None and np.asarray(unbounded).any():
        unknown = _touches(given, np.asarray(unbounded, dtype=bool), n)
        rows = np.where(unknown, -1, rows)  # -1: left out (no amount is negative)
    if rows.dtype.kind == "i":
        first, which = group_rows(list(rows.T))
        distinct = [_text(dims, row) for row in rows[first].tolist()]
        return [distinct[k] for k in which.tolist()]
    return [_text(dims, row) for row in rows.tolist()]


def _text(dims: tuple[str, ...], row: list[int | float]) -> str:
    return " ".join(f"{d}={int(v)}" for d, v in zip(dims, row, strict=True) if v >= 0)


def _touches(given: Mapping[int, Allocation], unbounded: np.ndarray, n: int) -> np.ndarray:
    """``(n, dims)`` booleans: job ``j`` holds a node that does not bound dimension
    ``d``."""
    if isinstance(given, AllocationColumns):
        offset, nodes = np.asarray(given.node_offset, dtype=np.int64), given.nodes
    else:
        allocs = [given[j] for j in range(n)]
        offset = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(a.nodes) for a in allocs], out=offset[1:])
        nodes = np.concatenate([a.nodes for a in allocs]) if n else np.zeros(0, np.int64)
    flags = unbounded[np.asarray(nodes, dtype=np.int64)].astype(np.int64)
    out = np.zeros((n, unbounded.shape[1]), dtype=bool)
    has = np.flatnonzero(np.diff(offset) > 0)
    if len(has):
        out[has] = np.add.reduceat(flags, offset[:-1][has], axis=0) > 0
    return out


def _held_sums(given: Mapping[int, Allocation], width: int, n: int) -> np.ndarray | None:
    """Every job's amounts summed over its nodes as int64 ``(n, dims)`` (as a
    job's ``amounts.sum(axis=0)`` gives them), or ``None`` when some amounts are
    not signed integers."""
    if isinstance(given, AllocationColumns):
        offset, amounts = given.node_offset, given.amounts
        if (
            amounts.dtype == np.int64
            and np.asarray(offset).dtype == np.int64
            and amounts.shape[1:] == (width,)
            and len(given) == n
        ):
            return given.held_sums()  # the same sums, computed once for the output
        if amounts.dtype.kind != "i":
            return None
    else:
        allocs = [given[j] for j in range(n)]
        if any(a.amounts.dtype.kind != "i" for a in allocs):
            return None
        offset = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(a.amounts) for a in allocs], out=offset[1:])
        amounts = (
            np.concatenate([a.amounts for a in allocs]) if n else np.zeros((0, width), np.int64)
        )
    amounts = np.asarray(amounts, dtype=np.int64)
    out = np.zeros((n, width), dtype=np.int64)
    offset = np.asarray(offset, dtype=np.int64)
    has = np.flatnonzero(np.diff(offset) > 0)
    if len(has):
        out[has] = np.add.reduceat(amounts, offset[:-1][has], axis=0)
    return out


__all__ = ["held_texts", "node_lists"]
