"""EASY backfilling on a multi-resource machine (a platform file).

The single-pool algorithm (:mod:`schedlab.policies.backfill.easy`) carried over to
nodes with cores, memory, GPUs and consumables, and to partitions:

1. start jobs in scheduling order while they fit
   (:meth:`schedlab.sim.SchedulerState.start_from_head`): a job that does not fit
   blocks its partition and the partitions sharing a node group with it directly
   (not those linked only through another partition: docs/platform.md, "partitions
   in a chain", a known limitation);
2. the first waiting job of each *node set* (partitions sharing a node group form
   one set; disjoint partitions are independent machines) is its *head*; it gets a
   reservation at the *shadow time*: the earliest time, by the running jobs'
   estimated ends (never before now: the jobs past their estimates all end now),
   at which the allocation policy finds it an allocation; the free amounts of
   every node at that time are kept;
3. every other waiting job, in priority order (or shortest estimate first with
   ``order=sjbf``), starts now if an allocation is free and it does not delay its
   set's head: it ends by the shadow time, or the head still has an allocation at
   the shadow time with this job's nodes taken (then the kept amounts shrink).

A reservation is feasible only if an allocation exists at that time, over every
dimension, which is what issue 14 asks of EASY on a real machine.

Option ``kernel`` (as for the single pool): ``auto`` runs the compiled pass
(:mod:`.easy_nodes_compiled`, numba) on long runs it covers (partitions that
share no node, an allocation policy declaring its ``node_order``, no ``max_nodes``
limit), ``python`` always this pass, ``compiled`` the compiled pass or an error
saying why it cannot. Both give the same schedule, job for job.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from schedlab.errors import SimulationError
from schedlab.sim import SchedulerState, WholeRun, WholeRunOutcome
from schedlab.sim.resources import CORES

from .kernel_choice import kernel_label, use_compiled

#: With ``kernel=auto``, runs of at least this many jobs use the compiled pass
#: (once numba is loaded in the process; before, loading it costs about half a
#: second, so only runs of ``COMPILED_COLD_MIN_JOBS``).
COMPILED_MIN_JOBS = 500
COMPILED_COLD_MIN_JOBS = 2_000


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
    then are their node amounts added and the allocation policy asked. A job past
    its estimated end is treated as ending now (docs/simulation.md): every such job
    counts as free at a shadow time of now, whatever its estimated end, as on the
    single pool."""
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
        if t < now:
            t = now  # past its estimate: ending now, with every other such job
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
                return t, free
    raise SimulationError(
        f"backfill 'easy': job index {head} fits no allocation even with every running job ended"
    )


class NodeEasy:
    """EASY on a platform (see the module docstring); built by
    :meth:`schedlab.policies.backfill.easy.Easy.for_platform`."""

    name = "easy"
    #: A stepping simulation's caller may start jobs itself: each implementation
    #: is told (``on_manual_start``) and follows.
    accepts_manual_starts = True
    wants_running = True
    supports_platform = True

    #: The compiled pass chosen when bound (``None``: the Python pass).
    _compiled: Any = None

    @property
    def kernel_name(self) -> str:
        """The implementation that ran: ``"python"``, ``"compiled"``, or
        ``"compiled, then python from t=T"`` when the compiled pass handed the rest
        of the run to the Python pass at time ``T`` (a stepping simulation's manual
        start, or a priority key it cannot compare)."""
        return kernel_label(self._compiled)

    def __init__(self, order: str = "priority", kernel: str = "auto") -> None:
        self.order = order
        self.kernel = kernel

    def bind(self, state: SchedulerState) -> None:
        """Keep the state; find the node sets; choose the pass (option ``kernel``)."""
        if state.machine is None:
            raise SimulationError("the node-level EASY needs a platform")
        self.state = state
        self.set_of = node_sets(state.machine.partitions)
        #: The heads of the last pass: node set -> (head, shadow time, free amounts
        #: then, less what step 3 backfilled past it).
        self.last: dict[int, tuple[int, float, np.ndarray]] = {}
        # Forget the routing to an earlier run's compiled pass (only that: a caller
        # may have wrapped ``schedule`` itself).
        for name in getattr(self, "_routed", ()):
            self.__dict__.pop(name, None)
        self._routed: tuple[str, ...] = ()
        self._compiled = None
        if self.kernel == "python":
            return
        from .easy_nodes_cover import applies

        covered = applies(state, self.order)
        if self.kernel == "compiled" and not covered:
            raise SimulationError(
                "backfill easy: option kernel=compiled: the compiled node-level pass covers "
                "partitions that share no node (shared or exclusive nodes), an allocation "
                "policy with a node_order and no max_nodes limit, with order=priority"
            )
        if covered and use_compiled(
            self.kernel, state.n, COMPILED_MIN_JOBS, COMPILED_COLD_MIN_JOBS,
            "easy_nodes_kernels", "node-level EASY backfilling",
        ):  # fmt: skip
            python = NodeEasy(self.order, kernel="python")
            python.bind(state)
            impl: Any
            if len(state.machine.partitions) == 1:
                from .easy_nodes_compiled import CompiledNodeEasy

                impl = CompiledNodeEasy(state, python)
            else:
                from .easy_nodes_partitions import CompiledPartitions

                impl = CompiledPartitions(state, python)
            self._compiled = impl
            self.schedule = impl.schedule  # type: ignore[method-assign]
            self.on_finish = impl.on_finish
            self.on_reorder = impl.on_reorder
            self.on_estimate_raised = impl.on_estimate_raised
            self._routed = ("schedule", "on_finish", "on_reorder", "on_estimate_raised")

    def on_manual_start(self, job: int, now: float) -> None:
        """The caller of a stepping simulation started ``job``: the compiled pass, if
        it runs, hands over to the Python one. The Python pass needs nothing here: the
        stepping hand-over sets ``state.finished_since_pass`` at the next pass this
        strategy runs, so it keeps no head or shadow time from before the start."""
        impl = getattr(self, "_compiled", None)
        if impl is not None:
            impl.on_manual_start(job, now)

    def run_whole(self, plan: WholeRun) -> WholeRunOutcome | None:
        """The whole run in one compiled call when the compiled pass was chosen
        (:mod:`schedlab.sim.whole_run`): the same start times and allocations as
        the pass-by-pass run; ``None`` (the engine's loop) otherwise."""
        impl = getattr(self, "_compiled", None)
        return None if impl is None else impl.run_whole(plan)

    def schedule(self, now: float) -> None:
        """One pass."""
        state = self.state
        started = state.start_from_head()  # 1.
        if not state.queue:
            self.last = {}
            return
        # With no job ended or started since the last pass (only arrivals), a head
        # that is still the head keeps its shadow time and amounts: the running
        # jobs are the same, and those step 3 started are already taken from the
        # kept amounts (unless the shadow time has passed: then recompute).
        last = self.last if not (state.finished_since_pass or started) else {}
        part_of = state.partition_of
        assert part_of is not None
        set_of = self.set_of
        heads: dict[int, tuple[int, float, np.ndarray]] = {}
        others: list[int] = []
        for j in state.tier_order():  # 2.
            s = set_of[part_of[j]]
            if s in heads:
                others.append(j)
                continue
            kept = last.get(s)
            if kept is not None and kept[0] == j and now <= kept[1]:
                t, free_at = kept[1], kept[2]
            else:
                t, free_at = shadow(state, j)
            heads[s] = (j, t, free_at)
            state.log_reservation(j, t)
        self.last = heads
        if not others:
            return
        if self.order == "sjbf":
            est = state.estimate
            others.sort(key=lambda j: (est[j], j))  # ties: job order, as on a pool
        estimate = state.estimate
        demand = state.demand
        machine = state.machine
        assert demand is not None and machine is not None
        free_total = machine.free_total
        # Demands (per partition) with no allocation now: jobs asking the same are
        # skipped until a start changes the free amounts (Requests shares one
        # Demand object between jobs asking the same).
        no_fit: set[tuple[int, int]] = set()
        for j in others:  # 3.
            d = demand[j]
            p = part_of[j]
            if d.total[CORES] > free_total[p][CORES]:
                continue  # not enough free cores in its partition: cheap skip
            key = (id(d), p)
            if key in no_fit:
                continue
            alloc = state.allocation_for(j)
            if alloc is None:
                no_fit.add(key)
                continue
            head, t, free_at = heads[set_of[p]]
            if now + estimate[j] > t:
                trial = free_at.copy()
                trial[alloc.nodes] -= alloc.amounts
                if (trial[alloc.nodes] < 0).any() or state.allocation_for(head, trial) is None:
                    continue
                free_at[alloc.nodes] = trial[alloc.nodes]
            state.start(j, alloc)
            no_fit.clear()


__all__ = ["NodeEasy", "node_sets", "shadow"]
