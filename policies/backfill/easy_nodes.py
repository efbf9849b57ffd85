"""EASY backfilling on a multi-resource machine (a platform file).

The single-pool algorithm (:mod:`schedlab.policies.backfill.easy`) carried over to
nodes with cores, memory, GPUs and consumables, and to partitions:

1. start jobs in scheduling order while they fit, each partition on its own
   (:meth:`schedlab.sim.SchedulerState.start_from_head`);
2. the first waiting job of each *node set* (partitions sharing a node group form
   one set; disjoint partitions are independent machines) is its *head*; it gets a
   reservation at the *shadow time*: the earliest time, by the running jobs'
   estimated ends, at which the allocation policy finds it an allocation; the free
   amounts of every node at that time are kept;
3. every other waiting job, in priority order (or shortest estimate first with
   ``order=sjbf``), starts now if an allocation is free and it does not delay its
   set's head: it ends by the shadow time, or the head still has an allocation at
   the shadow time with this job's nodes taken (then the kept amounts shrink).

A reservation is feasible only if an allocation exists at that time, over every
dimension, which is what issue 14 asks of EASY on a real machine.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from schedlab.errors import SimulationError
from schedlab.sim import SchedulerState
from schedlab.sim.resources import CORES


def node_sets(partitions: list[Any]) -> list[int]:
    """For each partition, the index of its node set (partitions linked by a shared
    node group are one set)."""
    parent = list(range(len(partitions)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for a in range(len(partitions)):
        for b in range(a + 1, len(partitions)):
            if partitions[a].overlaps(partitions[b]):
                parent[root(b)] = root(a)
    return [root(i) for i in range(len(partitions))]


def shadow(state: SchedulerState, head: int) -> tuple[float, np.ndarray]:
    """The earliest time (never before now) at which ``head`` has an allocation by
    the running jobs' estimated ends, and every node's free amounts then.

    The running jobs are walked in estimated-end order with plain sums first (the
    partition's free totals must cover the demand, a necessary condition); only
    then are their node amounts added and the allocation policy asked."""
    machine = state.machine
    running = state.running
    assert machine is not None and running is not None
    demand = state.demand[head]  # type: ignore[index]
    p = state.partition_of[head]  # type: ignore[index]
    inside = machine.inside[p]
    need = demand.total.tolist()
    have = machine.free_total[p].tolist()
    dims = range(len(need))
    free: np.ndarray | None = None
    added = 0  # running jobs whose amounts are in ``free``
    now = state.now
    held = machine.held
    n = len(running)
    i = 0
    while i < n:
        t = running[i][0]
        while i < n and running[i][0] <= t:  # every job ending by t
            alloc = held[running[i][1]]
            hit = inside[alloc.nodes]
            if hit.all():
                got = alloc.amounts.sum(axis=0).tolist()
            else:
                got = alloc.amounts[hit].sum(axis=0).tolist()
            for d in dims:
                have[d] += got[d]
            i += 1
        if all(have[d] >= need[d] for d in dims):
            if free is None:
                free = machine.free.copy()
            while added < i:
                alloc = held[running[added][1]]
                free[alloc.nodes] += alloc.amounts
                added += 1
            if state.allocation_for(head, free) is not None:
                return (t if t > now else now), free
    raise SimulationError(
        f"backfill 'easy': job index {head} fits no allocation even with every "
        "running job ended"
    )


class NodeEasy:
    """EASY on a platform (see the module docstring); built by
    :meth:`schedlab.policies.backfill.easy.Easy.for_platform`."""

    name = "easy"
    wants_running = True
    supports_platform = True

    def __init__(self, order: str = "priority") -> None:
        self.order = order

    def bind(self, state: SchedulerState) -> None:
        """Keep the state; find the node sets."""
        if state.machine is None:
            raise SimulationError("the node-level EASY needs a platform")
        self.state = state
        self.set_of = node_sets(state.machine.partitions)
        #: The reservations of the last pass, by node set (see ``schedule``).
        self.last: dict[int, tuple[int, float, np.ndarray]] | None = None

    def schedule(self, now: float) -> None:
        """One pass."""
        state = self.state
        part_of = state.partition_of
        assert part_of is not None
        set_of = self.set_of
        last = self.last
        if last is not None and not state.finished_since_pass and state.queue:
            # Nothing ended: the heads' shadows and kept amounts still hold (starts
            # since then were subtracted); if the heads are the same jobs, only the
            # new arrivals can start.
            heads = self._heads()
            if all(last.get(s, (-1,))[0] == j for s, j in heads.items()):
                for s, j in heads.items():
                    state.log_reservation(j, last[s][1])
                new = sorted(state.new_jobs, key=lambda j: (state.key_of[j], j))
                self._backfill(new, last, now)
                return
        state.start_from_head()  # 1.
        self.last = None
        if not state.queue:
            return
        reserved: dict[int, tuple[int, float, np.ndarray]] = {}
        others: list[int] = []
        for j in state.tier_order():  # 2.
            s = set_of[part_of[j]]
            if s in reserved:
                others.append(j)
                continue
            t, free_at = shadow(state, j)
            reserved[s] = (j, t, free_at)
            state.log_reservation(j, t)
        self.last = reserved
        self._backfill(others, reserved, now)

    def _heads(self) -> dict[int, int]:
        """The first waiting job of each node set."""
        state = self.state
        part_of = state.partition_of
        assert part_of is not None
        heads: dict[int, int] = {}
        wanted = len(set(self.set_of))
        for j in state.tier_order():
            s = self.set_of[part_of[j]]
            if s not in heads:
                heads[s] = j
                if len(heads) == wanted:
                    break
        return heads

    def _backfill(
        self, jobs: list[int], reserved: dict[int, tuple[int, float, np.ndarray]], now: float
    ) -> None:
        """3.: start the jobs that fit and delay no head."""
        state = self.state
        part_of = state.partition_of
        machine = state.machine
        assert part_of is not None and machine is not None
        if self.order == "sjbf":
            est = state.estimate
            jobs = sorted(jobs, key=lambda j: est[j])
        estimate = state.estimate
        demand = state.demand
        assert demand is not None
        free_total = machine.free_total
        set_of = self.set_of
        size = state.size
        # Free cores per partition as plain ints: the cheap first screen.
        cores = [int(t[CORES]) for t in free_total]
        for j in jobs:
            p = part_of[j]
            if size[j] > cores[p] or (free_total[p] < demand[j].total).any():
                continue
            entry = reserved.get(set_of[p])
            if entry is None:
                continue
            alloc = state.allocation_for(j)
            if alloc is None:
                continue
            head, t, free_at = entry
            if head == j:
                continue
            if now + estimate[j] > t:
                trial = free_at.copy()
                trial[alloc.nodes] -= alloc.amounts
                if (trial[alloc.nodes] < 0).any() or state.allocation_for(head, trial) is None:
                    continue
                free_at[alloc.nodes] = trial[alloc.nodes]
            state.start(j, alloc)
            cores = [int(t[CORES]) for t in free_total]
            if not any(cores):
                return


__all__ = ["NodeEasy", "node_sets", "shadow"]
