"""The multi-resource machine the simulator runs on when a platform is given.

:class:`NodeMachine` turns a :class:`schedlab.platform.Platform` into matrices
(one row per node, one column per dimension, see :mod:`schedlab.sim.resources`),
keeps what every running job holds, and asks the allocation policy which nodes a
starting job gets, checking its answer: a policy that returns nodes outside the
job's partition, over-commits a node or returns an allocation that does not hold
exactly the job's demand (see :meth:`NodeMachine.check`) gets a
:class:`~schedlab.errors.SimulationError` naming it.

Nodes are numbered group by group in the platform's order; node ``i`` of group
``thin`` is called ``thin[i]`` (``node_names``). A partition's nodes are those of
its groups, ascending.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from operator import itemgetter
from typing import Any

import attrs
import numpy as np

from ..errors import SimulationError
from ..model import _read_only_view
from ..platform import Platform, check_limits
from .resources import CORES, MEMORY, UNBOUNDED, Allocation, Demand, NodeView, take


@attrs.define(frozen=True, slots=True, eq=False)
class PartitionNodes:
    """A partition as the simulator sees it: its position, its nodes (machine
    indices, ascending) and its limits (see :class:`schedlab.platform.Partition`)."""

    index: int
    name: str
    nodes: np.ndarray
    exclusive: bool
    max_time: int | None
    max_nodes: int | None
    priority_tier: int
    groups: frozenset[str]

    def overlaps(self, other: PartitionNodes) -> bool:
        """Whether the two partitions share a node group."""
        return bool(self.groups & other.groups)


class NodeMachine:
    """Nodes, their free amounts, and the allocations of running jobs."""

    def __init__(self, platform: Platform, allocator: Any, allocator_name: str = "") -> None:
        # A Platform built in Python has not been checked as a file is: out-of-range
        # counts or amounts would overflow the int64 matrices (or fill the memory).
        check_limits(platform)
        self.platform = platform
        self.allocator = allocator
        self.allocator_name = allocator_name or type(allocator).__name__
        #: Built-in policies (tested against the invariants) declare
        #: ``trusted = True`` and skip the per-call check; every other policy's
        #: answer is checked.
        self.trusted = getattr(allocator, "trusted", False) is True and type(
            allocator
        ).__module__.startswith("schedlab.policies.allocation.")
        order = getattr(allocator, "node_order", None)
        try:
            hash(order)
        except Exception:  # a list: the strategies look it up in their tables of orders
            raise SimulationError(
                f"allocation policy {self.allocator_name!r}: node_order={order!r}: expected "
                "a string such as 'index' (see schedlab.sim.resources)"
            ) from None
        consumables: list[str] = []
        for group in platform.node_groups:
            for name in group.consumables:
                if name not in consumables:
                    consumables.append(name)
        #: The dimensions, in column order.
        self.dims: tuple[str, ...] = ("cores", "memory", "gpus", *consumables)
        groups = platform.node_groups
        per_group = np.array(
            [
                [
                    int(group.cores),
                    UNBOUNDED if group.memory is None else int(group.memory),
                    int(group.gpus),
                    *(int(group.consumables.get(c, 0)) for c in consumables),
                ]
                for group in groups
            ],
            dtype=np.int64,
        ).reshape(len(groups), len(self.dims))
        counts = [int(group.count) for group in groups]
        first: dict[str, int] = {}
        n_nodes = 0
        for group, count in zip(groups, counts, strict=True):
            first[group.name] = n_nodes
            n_nodes += count
        names = [
            f"{group.name}[{i}]"
            for group, count in zip(groups, counts, strict=True)
            for i in range(count)
        ]
        #: ``(nodes, dims)`` capacity and free amounts (each group's row repeated).
        self.capacity = np.repeat(per_group, counts, axis=0)
        self.free = self.capacity.copy()
        #: Read-only views of ``free`` and ``capacity`` (made once) for the views
        #: an allocation policy that is not trusted gets: a write raises.
        self._free_ro = _read_only_view(self.free)
        self._capacity_ro = _read_only_view(self.capacity)
        self.node_names = names
        self.partitions: list[PartitionNodes] = []
        #: Per partition: a node mask, and the free totals over its nodes (kept up
        #: to date; a cheap necessary test before asking the allocation policy).
        self.inside: list[np.ndarray] = []
        for i, part in enumerate(platform.partitions):
            member = np.zeros(len(names), dtype=bool)
            for g in part.nodes:
                member[first[g] : first[g] + int(platform.node_group(g).count)] = True
            self.inside.append(member)
            # Read only: a policy's view and a strategy's plan hand this very array
            # out, and the machine's own checks read it (a write would move nodes
            # into the partition for the rest of the run).
            nodes = np.flatnonzero(member)
            nodes.flags.writeable = False
            self.partitions.append(
                PartitionNodes(
                    index=i,
                    name=part.name,
                    nodes=nodes,
                    exclusive=part.sharing == "exclusive",
                    max_time=part.max_time,
                    max_nodes=part.max_nodes,
                    priority_tier=part.priority_tier,
                    groups=frozenset(part.nodes),
                )
            )
        self.free_total = [self.capacity[p.nodes].sum(axis=0) for p in self.partitions]
        self._single = len(self.partitions) == 1
        self._rows: list[slice | np.ndarray] = [
            slice(int(p.nodes[0]), int(p.nodes[-1]) + 1)
            if len(p.nodes) and p.nodes[-1] - p.nodes[0] + 1 == len(p.nodes)
            else p.nodes
            for p in self.partitions
        ]
        #: Per partition: whether it holds every node of the machine.
        self._whole = [len(p.nodes) == len(names) for p in self.partitions]
        #: On a single partition: each running job's amounts summed over its nodes.
        self._sums: dict[int, np.ndarray] = {}
        #: The allocation of each running job.
        self.held: dict[int, Allocation] = {}
        #: The allocation every job got (kept after it ends), by job index (after
        #: a whole run, :class:`schedlab.sim.whole_run.AllocationColumns`).
        self.given: MutableMapping[int, Allocation] = {}

    # ------------------------------------------------------------------ queries
    @property
    def total_cores(self) -> int:
        """Cores of every node."""
        return int(self.capacity[:, CORES].sum())

    def free_cores(self) -> int:
        """Cores free now, machine-wide."""
        return int(self.free[:, CORES].sum())

    def view(self, partition: int, free: np.ndarray | None = None) -> NodeView:
        """The view an allocation policy gets for a job of ``partition`` (on the
        current free amounts, or on ``free`` for a look into the future). For a
        policy that is not trusted its matrices are read only."""
        part = self.partitions[partition]
        if self.trusted:
            return NodeView(
                self.free if free is None else free, self.capacity, part.nodes, part.exclusive
            )
        return NodeView(
            self._free_ro if free is None else _read_only_view(free),
            self._capacity_ro,
            part.nodes,
            part.exclusive,
        )

    def allocate(
        self, demand: Demand, partition: int, free: np.ndarray | None = None
    ) -> Allocation | None:
        """The allocation policy's choice for ``demand`` now (or on ``free``), checked;
        ``None`` when the job does not fit."""
        if free is None:
            if (self.free_total[partition] < demand.total).any():
                return None
        else:
            part = free[self.partitions[partition].nodes]
            # A node over-committed in a profile (a running job's estimate raised
            # under reservations planned before) gives nothing and takes nothing
            # from the others: its amounts count from zero (looked at only when
            # the plain sums refuse).
            total = demand.total
            if (part.sum(axis=0) < total).any() and (np.maximum(part, 0).sum(axis=0) < total).any():
                return None
        view = self.view(partition, free)
        if self.trusted:
            return self.allocator.allocate(view, demand)  # type: ignore[no-any-return]
        try:
            alloc = self.allocator.allocate(view, demand)
        except ValueError as exc:
            if "read-only" not in str(exc):
                raise
            raise SimulationError(
                f"allocation policy {self.allocator_name!r} wrote into its node view, which "
                f"is read only ({exc})"
            ) from exc
        if alloc is not None:
            # Against the machine's own matrices, not the view the policy held.
            part = self.partitions[partition]
            self.check(
                alloc,
                demand,
                NodeView(
                    self.free if free is None else free, self.capacity, part.nodes, part.exclusive
                ),
            )
            # What was checked is what the run keeps: a policy may return views of
            # a buffer it rewrites at its next call (a few rows: cheap).
            alloc = _copied(alloc)
        return alloc  # type: ignore[no-any-return]

    def holds_now(self, alloc: Allocation, partition: int) -> bool:
        """Whether ``alloc``'s amounts are free now (and its nodes idle on an
        exclusive partition): the test before starting a job on a reservation
        planned earlier."""
        return self._left_if_free(alloc, partition) is not None

    def commit_if_free(self, job: int, alloc: Allocation, partition: int) -> int:
        """:meth:`commit` ``alloc`` to ``job`` if :meth:`holds_now`; returns the
        cores it takes, or -1 (nothing changed) if its amounts are not free."""
        left = self._left_if_free(alloc, partition)
        if left is None:
            return -1
        # The strategy's allocation, copied once: one it changes after the start
        # (or a buffer it reuses) cannot change what the machine holds.
        alloc = _copied(alloc)
        self.free[alloc.nodes] = left
        return self._hold(job, alloc)

    def _left_if_free(self, alloc: Allocation, partition: int) -> np.ndarray | None:
        """What ``alloc``'s nodes would have left once it is committed, or ``None``
        if it does not fit them now (one gather serves the test and the commit)."""
        nodes = alloc.nodes
        free = self.free[nodes]
        left: np.ndarray = free - alloc.amounts
        if (left < 0).any():
            return None
        if self.partitions[partition].exclusive and not (free == self.capacity[nodes]).all():
            return None
        return left

    def inside_partition(self, alloc: Allocation, partition: int) -> bool:
        """Whether ``alloc``'s nodes are nodes of ``partition``, each once, ascending."""
        nodes = alloc.nodes
        if len(nodes) == 0:
            return False
        if len(nodes) > 1 and not (nodes[1:] > nodes[:-1]).all():
            return False
        if self._whole[partition]:
            return 0 <= int(nodes[0]) and int(nodes[-1]) < len(self.capacity)
        part = self.partitions[partition].nodes
        return bool((part[np.searchsorted(part, nodes) % len(part)] == nodes).all())

    def fits_empty(self, demand: Demand, partition: int) -> bool:
        """Whether ``demand`` fits ``partition`` when every node is idle: a
        trusted (built-in) allocation policy's answer; for any other policy the
        library's own rule (:func:`~schedlab.sim.resources.take` over the usable
        nodes in node order), so that a policy's bug is never taken for a job
        that does not fit (a run where the policy refuses such a job on the idle
        machine ends with an error naming it)."""
        if self.trusted:
            return self.allocate(demand, partition, self.capacity.copy()) is not None
        part = self.partitions[partition]
        if (self.capacity[part.nodes].sum(axis=0) < demand.total).any():
            return False
        view = NodeView(self.capacity, self.capacity, part.nodes, part.exclusive)
        return take(view, demand, part.nodes[view.usable(demand)]) is not None

    def check(self, alloc: Allocation, demand: Demand, view: NodeView) -> None:
        """A :class:`SimulationError` naming the allocation policy unless ``alloc``
        lies in the partition, fits the free amounts and holds exactly the demand:
        on a shared partition a fixed demand gets exactly its node count, each node
        exactly its chunk, and a flexible one exactly its total in every dimension
        (each node's memory its cores times the memory per core, every node giving
        it something, at most ``max_nodes`` nodes); on an exclusive partition the
        job holds each node whole, a fixed demand exactly its node count and a
        flexible one nodes that hold its demand (``SchedulerState.start`` applies
        the same rule to an allocation a strategy gives it)."""
        problem = self._form_problem(alloc)
        if problem:
            raise SimulationError(f"allocation policy {self.allocator_name!r} returned {problem}")
        nodes = alloc.nodes
        if len(nodes) > 1 and not (nodes[1:] > nodes[:-1]).all():
            problem = "returned nodes out of order or a node twice"
        elif not (view.nodes[np.searchsorted(view.nodes, nodes) % len(view.nodes)] == nodes).all():
            problem = "returned a node outside the job's partition"
        elif (alloc.amounts < 0).any():
            bad = int(nodes[int(np.flatnonzero((alloc.amounts < 0).any(axis=1))[0])])
            problem = f"returned a negative amount on node {self.node_names[bad]}"
        elif (view.free[nodes] < alloc.amounts).any():
            problem = "over-committed a node"
        elif view.exclusive and not (view.free[nodes] == view.capacity[nodes]).all():
            problem = "placed a job on a busy node of an exclusive partition"
        else:
            wrong = self._demand_problem_on(alloc, demand, view.exclusive)
            if wrong:
                problem = f"returned an allocation that does not hold the demand: {wrong}"
        if problem:
            raise SimulationError(f"allocation policy {self.allocator_name!r} {problem}")

    def _form_problem(self, alloc: Any) -> str:
        """What keeps ``alloc`` from being an allocation on this machine at all (not
        an :class:`Allocation`, not integer numpy arrays, amounts of the wrong
        shape, no node), as words following "returned" or "started on"; ``""``
        when it is one. O(1) but for the dtype test."""
        if not isinstance(alloc, Allocation):
            return f"a {type(alloc).__name__}, not an Allocation"
        nodes, amounts = alloc.nodes, alloc.amounts
        if not (isinstance(nodes, np.ndarray) and isinstance(amounts, np.ndarray)):
            return "nodes or amounts that are not numpy arrays"
        if nodes.dtype.kind not in "iu" or amounts.dtype.kind not in "iu":
            # NaN or fractional amounts would pass every comparison of the checks
            return "nodes or amounts that are not whole numbers"
        if nodes.ndim != 1 or amounts.shape != (len(nodes), len(self.dims)):
            return (
                f"amounts of shape {amounts.shape} for {len(nodes)} nodes "
                f"of {len(self.dims)} dimensions"
            )
        if len(nodes) == 0:
            return "no nodes"
        return ""

    def _demand_problem(self, alloc: Allocation, demand: Demand, partition: int) -> str:
        """What keeps ``alloc`` (an allocation of the right form, on nodes of
        ``partition``) from holding exactly ``demand``, in words (``""``: nothing).

        On a shared partition a fixed demand gets exactly its node count, each
        node exactly its chunk; a flexible one exactly its total in every
        dimension (cores, memory, GPUs, consumables), each node's memory being its
        cores times the memory per core, every node giving it something, and no
        more nodes than the partition's ``max_nodes``. On an exclusive partition
        the job holds each of its nodes whole (every dimension of the node): a
        fixed demand exactly its node count, each node holding its chunk; a
        flexible one nodes that together hold its demand (cores counted as
        :func:`~schedlab.sim.resources.cores_given` counts them), within
        ``max_nodes``. O(size of the allocation)."""
        return self._demand_problem_on(alloc, demand, self.partitions[partition].exclusive)

    def _demand_problem_on(self, alloc: Allocation, demand: Demand, exclusive: bool) -> str:
        # On Python lists: an allocation holds a few rows of a few dimensions, where
        # numpy's per-call overhead would cost more than the work (this runs at
        # every start a strategy makes with an allocation of its own).
        nodes = alloc.nodes.tolist()
        rows: list[list[int]] = alloc.amounts.tolist()
        k = len(nodes)
        chunk = None if demand.chunk is None else demand.chunk.tolist()
        if chunk is not None and k != demand.nodes:
            return f"{k} nodes for {demand.nodes}"
        names = self.node_names
        dims = self.dims
        if exclusive:
            capacity: list[list[int]] = self.capacity[alloc.nodes].tolist()
            for node, row, cap in zip(nodes, rows, capacity, strict=True):
                if row != cap:
                    return (
                        f"it holds part of node {names[node]} on an exclusive partition "
                        "(nodes are held whole)"
                    )
            if chunk is not None:
                for node, cap in zip(nodes, capacity, strict=True):
                    for d, (c, want) in enumerate(zip(cap, chunk, strict=True)):
                        if c < want:
                            return f"node {names[node]} has {dims[d]} {c} for a chunk of {want}"
                return ""
            have = [sum(column) for column in zip(*capacity, strict=True)]
            mpc = demand.memory_per_core
            if mpc:
                # a node gives the cores its memory holds (cores_given); the
                # memory comes with them
                have[CORES] = sum(min(cap[CORES], cap[MEMORY] // mpc) for cap in capacity)
                have[MEMORY] = int(demand.total[MEMORY])
            return self._over_nodes(k, demand) or _differs(
                dims, have, demand.total.tolist(), short=True
            )
        for node, row in zip(nodes, rows, strict=True):
            if min(row) < 0:
                return f"a negative amount on node {names[node]}"
        if chunk is not None:
            for node, row in zip(nodes, rows, strict=True):
                if row != chunk:
                    d = next(d for d, (a, b) in enumerate(zip(row, chunk, strict=True)) if a != b)
                    return f"node {names[node]} gets {dims[d]} {row[d]} for a chunk of {chunk[d]}"
            return ""
        sums = rows[0] if k == 1 else [sum(column) for column in zip(*rows, strict=True)]
        wrong = _differs(dims, sums, demand.total.tolist(), short=False)
        if wrong:
            return wrong
        mpc = demand.memory_per_core
        for node, row in zip(nodes, rows, strict=True):
            if k > 1 and not any(row):
                return f"node {names[node]} gives it nothing"
            if mpc and row[MEMORY] != row[CORES] * mpc:
                return (
                    f"memory {row[MEMORY]} on node {names[node]} for its {row[CORES]} cores "
                    f"at {mpc} per core"
                )
        return self._over_nodes(k, demand)

    @staticmethod
    def _over_nodes(k: int, demand: Demand) -> str:
        """A flexible demand spread over more nodes than ``max_nodes`` allows."""
        if demand.max_nodes and k > demand.max_nodes:
            return f"{k} nodes, over the partition's max_nodes {demand.max_nodes}"
        return ""

    # ------------------------------------------------------------------ changes
    def commit(self, job: int, alloc: Allocation) -> int:
        """Give ``alloc`` to ``job``; returns the cores it takes."""
        self.free[alloc.nodes] -= alloc.amounts
        return self._hold(job, alloc)

    def _hold(self, job: int, alloc: Allocation) -> int:
        """Record ``alloc`` as ``job``'s (its amounts already taken from ``free``);
        returns its cores."""
        self.held[job] = alloc
        self.given[job] = alloc
        return self._count(alloc, -1, job)

    def release(self, job: int) -> int:
        """Free what ``job`` held; returns the cores freed."""
        alloc = self.held.pop(job)
        self.free[alloc.nodes] += alloc.amounts
        if self._single:
            total = self._sums.pop(job)
            self.free_total[0] += total
            return int(total[CORES])
        return self._count(alloc, 1)

    def _count(self, alloc: Allocation, sign: int, job: int = -1) -> int:
        """Move ``alloc``'s amounts into (``sign=1``) or out of the partitions' free
        totals; returns its cores. On a single partition, a committed ``job``'s
        sums are kept for its release."""
        amounts = alloc.amounts
        if self._single:
            total = amounts.sum(axis=0)
            if sign < 0:
                self.free_total[0] -= total
                self._sums[job] = total
            else:
                self.free_total[0] += total
            return int(total[CORES])
        for p, mask in enumerate(self.inside):
            hit = mask[alloc.nodes]
            if hit.any():
                self.free_total[p] += sign * amounts[hit].sum(axis=0)
        return int(amounts[:, CORES].sum())

    def node_list(self, alloc: Allocation) -> tuple[str, ...]:
        """The names of an allocation's nodes."""
        names = self.node_names
        nodes = alloc.nodes.tolist()
        if len(nodes) == 1:
            return (names[nodes[0]],)
        return itemgetter(*nodes)(names)  # type: ignore[no-any-return]


def _copied(alloc: Allocation) -> Allocation:
    """A copy of ``alloc`` (int64 arrays of its own), for the machine to keep."""
    return Allocation(alloc.nodes.astype(np.int64), alloc.amounts.astype(np.int64))


def _differs(dims: tuple[str, ...], have: list[int], want: list[int], short: bool) -> str:
    """The first dimension where ``have`` is below ``want`` (``short``) or differs
    from it, as "DIM HAVE for WANT"; ``""`` when none."""
    for d, (a, b) in enumerate(zip(have, want, strict=True)):
        if (a < b) if short else (a != b):
            return f"{dims[d]} {a} for {b}"
    return ""


__all__ = ["NodeMachine", "PartitionNodes"]
