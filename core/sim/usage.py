"""How a schedule used a multi-resource machine: utilization per dimension and per
partition, cores left idle while jobs waited (fragmentation), and waits per
partition. Computed once from the finished run, with numpy.

Definitions (docs/platform.md):

``utilization_by_dimension[d]``
    amount of dimension ``d`` held by jobs, integrated over time, divided by the
    machine's total of ``d`` times the span (first submission to last end);
    ``None`` for memory when some node declares none (unbounded), and for a
    dimension the machine does not have (GPUs on a CPU cluster). A span of zero
    length makes every figure here but the waits ``None``. Only the
    platform says which memory is unbounded: the matrices hold
    :data:`~.resources.UNBOUNDED` for it, which is also the most a node may
    declare (4 TiB, and 2**42 of a consumable), so a node at that limit is
    bounded. Exclusive nodes count whole: a job holding a node holds all of it.
``utilization_by_partition[p]``
    the same for cores, over the nodes of partition ``p`` and the jobs placed in it.
``idle_while_waiting``
    the share of the machine's core-time that was free while at least one job
    waited: capacity a scheduler could not use, through fragmentation across nodes,
    other dimensions (memory, GPUs) running out first, partitions, or a blocked
    queue head.
``mean_wait_by_partition[p]``
    mean wait of the jobs placed in ``p``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .machine import NodeMachine
from .resources import MEMORY
from .whole_run import AllocationColumns


def cores_over_period(
    cores: np.ndarray,
    submit: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    capacity: float,
    period: tuple[float, float],
) -> tuple[float | None, float | None]:
    """``(cores held, core-time not held while jobs waited)`` as shares of the
    machine's core-time over ``period`` (``capacity`` cores): the platform's
    ``utilization_by_dimension["cores"]`` and ``idle_while_waiting`` computed over
    another period (the metrics' warm-up/cool-down window), counting only the part
    of each run and of each interval inside it. ``None`` for a period of no length
    or a machine of no cores. Jobs with an unknown time are left out."""
    first, last = period
    if not (last > first) or not capacity > 0:
        return None, None
    known = ~(np.isnan(submit) | np.isnan(start) | np.isnan(end) | np.isnan(cores))
    cores, submit, start, end = cores[known], submit[known], start[known], end[known]
    n = len(cores)
    inside = np.maximum(np.minimum(end, last) - np.maximum(start, first), 0.0)
    held = float((cores * inside).sum() / (capacity * (last - first)))
    times = np.concatenate((submit, start, end))
    busy = np.concatenate((np.zeros(n), cores, -cores))
    waiting = np.concatenate((np.ones(n), -np.ones(n), np.zeros(n)))
    order = np.argsort(times, kind="stable")
    times = times[order]
    busy_now = np.cumsum(busy[order])[:-1]
    waits_now = np.cumsum(waiting[order])[:-1] > 0.5
    lengths = np.diff(np.clip(times, first, last))  # only the time inside the period
    idle = (capacity - busy_now) * lengths
    return held, float(idle[waits_now].sum() / (capacity * (last - first)))


def unbounded_nodes(machine: NodeMachine) -> np.ndarray:
    """``(nodes, dims)`` booleans: the dimensions each node does not bound (the
    memory of a node group that declares none; consumables a group does not
    declare are 0, never unbounded). The amounts held there are the sentinel
    :data:`~.resources.UNBOUNDED`, no quantity."""
    groups = machine.platform.node_groups
    per_group = np.zeros((len(groups), len(machine.dims)), dtype=bool)
    for g, group in enumerate(groups):
        per_group[g, MEMORY] = group.memory is None
    return np.repeat(per_group, [int(group.count) for group in groups], axis=0)


def machine_usage(
    machine: NodeMachine,
    partition_of: list[int] | np.ndarray,
    submit: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
) -> dict[str, Any]:
    """The statistics of the module docstring; arrays are by job index."""
    n = len(start)
    dims = machine.dims
    capacity = machine.capacity.sum(axis=0).astype(np.float64)
    # (not capacity >= UNBOUNDED: a node may declare exactly that much)
    unbounded_memory = any(
        group.memory is None and group.count > 0 for group in machine.platform.node_groups
    )
    # unbounded, or the machine has none of it: unknown, with or without jobs
    unknown = [(d == MEMORY and unbounded_memory) or capacity[d] <= 0 for d in range(len(dims))]
    if n == 0:
        return {
            "utilization_by_dimension": {
                name: None if unknown[d] else 0.0 for d, name in enumerate(dims)
            },
            "utilization_by_partition": {p.name: 0.0 for p in machine.partitions},
            "idle_while_waiting": 0.0,
            "mean_wait_by_partition": {},
        }
    held = np.zeros((n, len(dims)), dtype=np.float64)
    given = machine.given
    if isinstance(given, AllocationColumns):
        held[:] = given.held_sums()
    else:
        for j, alloc in given.items():
            held[j] = alloc.amounts.sum(axis=0, dtype=np.float64)
    run = end - start
    t0, t1 = float(submit.min()), float(end.max())
    span = t1 - t0
    by_dim: dict[str, float | None] = {}
    for d, name in enumerate(dims):
        if unknown[d]:
            by_dim[name] = None
        elif span <= 0:
            by_dim[name] = None  # a run of no length: no share of it is known
        else:
            by_dim[name] = float((held[:, d] * run).sum() / (capacity[d] * span))
    part = np.asarray(partition_of, dtype=np.int64)
    by_part: dict[str, float | None] = {}
    waits: dict[str, float] = {}
    wait = start - submit
    for p in machine.partitions:
        mine = part == p.index
        cores = float(machine.capacity[p.nodes, 0].sum())
        used = float((held[mine, 0] * run[mine]).sum())
        if span <= 0:
            by_part[p.name] = None
        else:
            by_part[p.name] = used / (cores * span) if cores > 0 else 0.0
        if mine.any():
            waits[p.name] = float(wait[mine].mean())
    # Free cores while some job waits: sweep the submit/start/end events.
    times = np.concatenate((submit, start, end))
    busy = np.concatenate((np.zeros(n), held[:, 0], -held[:, 0]))
    # Jobs waiting: +1 at a submission, -1 at a start, as int8 (the running count
    # is exact in any type: an eighth of the float64 temporaries' pages).
    waiting = np.zeros(3 * n, dtype=np.int8)
    waiting[:n] = 1
    waiting[n : 2 * n] = -1
    order = np.argsort(times, kind="stable")
    times, busy = times[order], np.cumsum(busy[order])
    waits_now = np.cumsum(waiting[order], dtype=np.int64)
    dt = np.diff(times)
    idle = (capacity[0] - busy[:-1]) * dt
    share = float(idle[waits_now[:-1] > 0].sum() / (capacity[0] * span)) if span > 0 else None
    return {
        "utilization_by_dimension": by_dim,
        "utilization_by_partition": by_part,
        "idle_while_waiting": share,
        "mean_wait_by_partition": waits,
    }


__all__ = ["cores_over_period", "machine_usage", "unbounded_nodes"]
