"""Resource vectors on a multi-resource machine: what a job asks for
(:class:`Demand`), what it gets (:class:`Allocation`), and the view an allocation
policy works on (:class:`NodeView`).

A machine built from a platform file (:class:`schedlab.sim.machine.NodeMachine`)
has one row per node and one column per *dimension*: ``cores``, ``memory``
(bytes), ``gpus``, then every named consumable of the platform, in the platform's
order (:attr:`NodeMachine.dims`). Amounts are integers; memory a node does not
declare is :data:`UNBOUNDED`.

A job's demand takes one of two shapes (decisions, also in docs/platform.md):

*fixed nodes* (``nodes > 0``, the source named a node count)
    each of ``nodes`` distinct nodes gives an equal *chunk*: ``ceil(cores/nodes)``
    cores, that many times the memory per core (or the memory asked per node),
    ``ceil(gpus/nodes)`` GPUs and
    ``ceil(x/nodes)`` of each consumable;
*flexible* (``nodes == 0``, only a processor count is known, as in SWF)
    the cores may come from any number of nodes: in the allocator's node order,
    each node gives as many cores as it has free (and memory for), until the job's
    cores are placed; GPUs and consumables are taken, in the same order, from the
    nodes used, continuing to further nodes if the cores are placed first (a node
    with no free core may still give a GPU or consumable). With a ``max_nodes``
    limit (counting only the nodes that give the job something) the policy's order
    is kept when it places the job on few enough nodes, else the nodes giving the
    most cores come first (see :func:`take`).

On an *exclusive* partition a job only gets idle nodes and holds each whole
(every dimension of the node), whatever its chunk.

An allocation policy (``schedlab plugins`` lists them under *allocation*) is an
object with ``allocate(view, demand) -> Allocation | None``; most only choose a node
order and let :meth:`NodeView.take` do the filling.

A policy whose allocation is exactly ``take(view, demand, order)`` over the usable
nodes (:meth:`NodeView.usable`) in one of these orders may say so with a
``node_order`` attribute, and compiled strategy passes (node-level EASY) then
compute its allocations themselves, without calling it:

``"index"``
    ascending node index (``first-fit``);
``"fewest-free-cores"``
    fewest free cores first, ties by node index (``best-fit``);
``"most-free-cores"``
    most free cores first, ties by node index (``spread``).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import attrs
import numpy as np

#: The amount standing for "no limit" (memory a node does not declare): 4 TiB,
#: above what a job asks of one node in the traces, small enough that sums over a
#: partition's nodes stay within int64 up to two million nodes (with 2**48, a
#: machine of over 32,768 such nodes overflowed and every job looked too big).
UNBOUNDED = 2**42
#: Column of each built-in dimension in a machine's matrices.
CORES, MEMORY, GPUS = 0, 1, 2


@attrs.define(frozen=True, slots=True, eq=False)
class Demand:
    """What one job asks for (see the module docstring for the two shapes).

    ``total`` is the whole job's vector over the machine's dimensions (cores,
    memory, GPUs, consumables); ``memory_per_core`` the memory each core brings
    (bytes; 0 when unknown, or when a fixed demand asks its memory per node: then
    ``chunk`` holds it); ``nodes`` the node count (0: flexible); ``chunk`` the
    per-node vector of a fixed-nodes demand (``None`` when flexible);
    ``max_nodes`` the most nodes the job may spread over (0: no limit).
    """

    total: np.ndarray
    memory_per_core: int
    nodes: int = 0
    chunk: np.ndarray | None = None
    max_nodes: int = 0


@attrs.define(frozen=True, slots=True, eq=False)
class Allocation:
    """Which nodes a job holds (``nodes``: machine node indices, ascending) and
    how much of each dimension on each (``amounts``: one row per node)."""

    nodes: np.ndarray
    amounts: np.ndarray

    def __len__(self) -> int:
        return len(self.nodes)


class NodeView:
    """The nodes an allocation policy may choose from, and their free amounts.

    ``free`` and ``capacity`` are the machine's whole ``(nodes, dims)`` matrices
    (read them, never write: a third-party policy gets read-only views, and a
    write stops the run with an error naming it); ``nodes`` the indices of the job's partition's
    nodes (ascending); ``exclusive`` whether jobs take whole idle nodes there.
    """

    __slots__ = ("_rows", "capacity", "exclusive", "free", "nodes")

    def __init__(
        self,
        free: np.ndarray,
        capacity: np.ndarray,
        nodes: np.ndarray,
        exclusive: bool,
        rows: slice | np.ndarray | None = None,
    ) -> None:
        self.free = free
        self.capacity = capacity
        self.nodes = nodes
        self.exclusive = exclusive
        # A partition of consecutive nodes is read through a slice (a view, no copy).
        self._rows = nodes if rows is None else rows

    def usable(self, demand: Demand) -> np.ndarray:
        """Boolean mask over :attr:`nodes`: the nodes that can give this job
        something now (fixed: its whole chunk; flexible: at least one core and
        memory for it, or a GPU or consumable it asks for; exclusive: an idle
        node)."""
        rows = self._rows
        free = self.free[rows]
        if self.exclusive:
            idle: np.ndarray = (free == self.capacity[rows]).all(axis=1)
            if demand.chunk is not None:
                return idle & (self.capacity[rows] >= demand.chunk).all(axis=1)
            return idle
        if demand.chunk is not None:
            return np.asarray((free >= demand.chunk).all(axis=1))
        ok: np.ndarray = free[:, CORES] >= 1
        if demand.memory_per_core:
            ok &= free[:, MEMORY] >= demand.memory_per_core
        # A flexible job may take GPUs and consumables from nodes where it places
        # no core (see take): such nodes are usable too, so whether a job fits
        # never depends on another job holding the last core of a node whose GPU
        # it could use.
        wanted = np.flatnonzero(demand.total[GPUS:]) + GPUS
        if len(wanted):
            ok |= (free[:, wanted] > 0).any(axis=1)
        return ok

    def take(self, demand: Demand, order: np.ndarray) -> Allocation | None:
        """Fill ``demand`` from the usable nodes ``order`` in that order (see
        :func:`take`)."""
        return take(self, demand, order)


def take(view: NodeView, demand: Demand, order: np.ndarray) -> Allocation | None:
    """Fill ``demand`` from the usable nodes ``order`` (machine node indices) in that
    order; ``None`` if they cannot hold it. Allocation policies call this after
    choosing an order (see the module docstring for how each shape is filled).

    A flexible demand with a ``max_nodes`` limit that the policy's order would
    spread over too many nodes is filled again from the nodes that give the most
    cores first (ties in the policy's order): whenever some ``max_nodes`` of the
    nodes hold the job's cores, the job gets an allocation, so whether a job fits
    never depends on the order a policy prefers. The limit counts only the nodes
    that give the job something. When that order fails too and the job also asks
    GPUs or consumables, the nodes are picked greedily, each time the one covering
    the largest share of what is still missing (ties by node index), so a job whose
    GPUs sit on a node with few cores still fits; that last step is a heuristic (an
    exact choice is a covering problem), decided on the usable nodes alone."""
    alloc = fill_in_order(view, demand, order)
    if (
        alloc is None
        and demand.chunk is None
        and demand.max_nodes
        and len(order) > demand.max_nodes
    ):
        gives = cores_given(view, demand, order)
        alloc = fill_in_order(view, demand, order[np.argsort(-gives, kind="stable")])
        if alloc is None and demand.total[GPUS:].any():
            picked = _greedy_cover(view, demand, np.sort(order), gives[np.argsort(order)])
            if picked is not None:
                alloc = fill_in_order(view, demand, picked)
    return alloc


def _greedy_cover(
    view: NodeView, demand: Demand, nodes: np.ndarray, cores: np.ndarray
) -> np.ndarray | None:
    """At most ``demand.max_nodes`` of ``nodes`` (ascending machine indices, giving
    ``cores`` cores each) that together hold every core, GPU and consumable the
    flexible ``demand`` asks, picked greedily (each time the node covering the
    largest share of what is still missing, ties by lowest index); ``None`` if the
    greedy pick does not cover it."""
    total = demand.total
    dims = [CORES, *(int(d) for d in np.flatnonzero(total[GPUS:]) + GPUS)]
    want = np.array([int(total[d]) for d in dims], dtype=np.float64)
    src = view.capacity if view.exclusive else view.free
    give = np.maximum(src[nodes][:, dims], 0).astype(np.float64)
    give[:, 0] = cores
    missing = want.copy()
    taken = np.zeros(len(nodes), dtype=bool)
    picked: list[int] = []
    for _ in range(demand.max_nodes):
        if not (missing > 0).any():
            break
        share = (np.minimum(give, missing) / np.maximum(want, 1)).sum(axis=1)
        share[taken] = -1.0
        best = int(np.argmax(share))  # the first maximum: the lowest index
        if share[best] <= 0:
            return None
        taken[best] = True
        picked.append(best)
        missing = np.maximum(missing - give[best], 0)
    if (missing > 0).any():
        return None
    return nodes[np.array(picked, dtype=np.int64)]


def cores_given(view: NodeView, demand: Demand, order: np.ndarray) -> np.ndarray:
    """Per node of ``order`` (machine node indices), the cores a flexible demand may
    take there (an int64 array): the free
    cores (all of an idle node's on an exclusive partition), fewer when the node's
    memory holds fewer of the job's memory per core."""
    free = view.free[order] if not view.exclusive else view.capacity[order]
    cores = free[:, CORES]
    mpc = demand.memory_per_core
    if mpc:
        cores = np.minimum(cores, free[:, MEMORY] // mpc)
    # A node over-committed in a profile's free amounts (a running job's estimate
    # raised under reservations planned before) may be usable for a GPU: it gives
    # no core (nor a negative number of them).
    return np.maximum(cores, 0)


def fill_in_order(view: NodeView, demand: Demand, order: np.ndarray) -> Allocation | None:
    """:func:`take` in exactly the given order, without its fallbacks: for a policy
    whose allocation must be the nodes it names in that order (``contiguous``
    trying each run of nodes; ``None`` when they cannot hold the job)."""
    capacity = view.capacity
    if demand.chunk is not None:
        k = demand.nodes
        if len(order) < k:
            return None
        chosen = np.sort(order[:k])
        if view.exclusive:
            amounts = capacity[chosen].copy()
        else:
            amounts = np.broadcast_to(demand.chunk, (k, len(demand.chunk))).copy()
        return Allocation(chosen, amounts)
    # On an exclusive partition a node gives what it has (it is idle), memory
    # included: a job whose memory per core exceeds a node's share spreads over
    # more nodes, exactly as on shared nodes.
    free = view.free[order] if not view.exclusive else capacity[order]
    total = demand.total
    mpc = demand.memory_per_core
    cores = cores_given(view, demand, order)
    need = int(total[CORES])
    cum = np.cumsum(cores)
    if len(cum) == 0 or cum[-1] < need:
        return None
    last = int(np.searchsorted(cum, need))  # first prefix holding every core
    for d in range(GPUS, len(total)):
        want = int(total[d])
        if want:
            have = np.cumsum(np.maximum(free[:, d], 0))
            if have[-1] < want:
                return None
            last = max(last, int(np.searchsorted(have, want)))
    m = last + 1
    # The limit counts only the nodes that give the job something (tested below,
    # after dropping the others): a node of the prefix that gives nothing (its
    # cores were not needed, it has no GPU the job still wants) is not held.
    chosen = order[:m]
    amounts = np.zeros((m, len(total)), dtype=np.int64)
    got = np.minimum(cores[:m], np.maximum(need - (cum[:m] - cores[:m]), 0))
    amounts[:, CORES] = got
    amounts[:, MEMORY] = got * mpc
    for d in range(GPUS, len(total)):
        want = int(total[d])
        if want:
            col = np.maximum(free[:m, d], 0)
            before = np.cumsum(col) - col
            amounts[:, d] = np.minimum(col, np.maximum(want - before, 0))
    keep = amounts.any(axis=1)
    chosen = chosen[keep]
    amounts = capacity[chosen].copy() if view.exclusive else amounts[keep]
    if demand.max_nodes and len(chosen) > demand.max_nodes:
        return None
    sort = np.argsort(chosen, kind="stable")
    return Allocation(chosen[sort], amounts[sort])


@runtime_checkable
class Allocator(Protocol):
    """An allocation policy: chooses the nodes a starting job gets.

    ``allocate(view, demand)`` returns an :class:`Allocation` of nodes among
    ``view.nodes`` whose free amounts cover it, or ``None`` when the job does not
    fit now. It must not modify the view's matrices (read only for a policy that
    is not built in); the machine checks the result against its own matrices (a
    policy that over-commits a node is an error naming it).
    """

    def allocate(self, view: NodeView, demand: Demand) -> Allocation | None:
        """The nodes ``demand`` gets now, or ``None``."""
        ...


__all__ = [
    "CORES",
    "GPUS",
    "MEMORY",
    "UNBOUNDED",
    "Allocation",
    "Allocator",
    "Demand",
    "NodeView",
    "cores_given",
    "fill_in_order",
    "take",
]
