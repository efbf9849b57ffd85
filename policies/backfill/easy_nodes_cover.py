"""Which node-level EASY runs the compiled pass (:mod:`.easy_nodes_compiled`)
covers: partitions that share no node (one, or several: one pass each,
:mod:`.easy_nodes_partitions`), of shared nodes or of exclusive ones (a job then
takes its nodes whole), an allocation policy declaring its
``node_order``, no job with a ``max_nodes`` limit, ``order=priority``, and a pool
of allocation rows within :data:`POOL_LIMIT`. Importable without numba (the
strategy asks before it loads the kernel)."""

from __future__ import annotations

from typing import Any

from schedlab.sim import SchedulerState

from .numeric_keys import EXACT_INT  # re-exported: the cover's bound on keys

#: ``node_order`` values the kernel knows, with its code for each.
ORDERS = {"index": 0, "fewest-free-cores": 1, "most-free-cores": 2}

#: The pool of allocation rows is at most this many rows (else: the Python pass).
POOL_LIMIT = 50_000_000


def applies(state: SchedulerState, order: str) -> bool:
    """Whether the compiled pass covers this run (see the module docstring)."""
    machine = state.machine
    if machine is None or order != "priority" or not disjoint(machine.partitions):
        return False
    if getattr(machine.allocator, "node_order", None) not in ORDERS:
        return False
    demand = state.demand
    assert demand is not None
    if any(d is not None and d.max_nodes for d in demand):
        return False
    return all(pool_rows(machine, p) <= POOL_LIMIT for p in range(len(machine.partitions)))


def disjoint(partitions: list[Any]) -> bool:
    """Whether no two partitions share a node (each is a machine of its own)."""
    return not any(
        partitions[a].overlaps(partitions[b])
        for a in range(len(partitions))
        for b in range(a + 1, len(partitions))
    )


def pool_rows(machine: Any, partition: int = 0) -> int:
    """Pool rows enough for every running job's allocation on ``partition``
    twice over: each row holds at least one core, GPU or consumable of its node."""
    cap = machine.capacity[machine.partitions[partition].nodes]
    units = int(cap[:, 0].sum()) + (int(cap[:, 2:].sum()) if cap.shape[1] > 2 else 0)
    return 2 * units + 4 * len(cap) + 16


__all__ = ["EXACT_INT", "ORDERS", "POOL_LIMIT", "applies", "disjoint", "pool_rows"]
