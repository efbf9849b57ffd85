"""Conservative backfilling on a multi-resource machine (a platform file).

Every waiting job holds a reservation: a start time *and* an allocation (the nodes
and amounts it will get), planned on a :class:`~schedlab.sim.NodeProfile` of
every node's free amounts over time by the running jobs' estimates and the other
reservations. At every pass:

1. when a job ended (or a prediction correction raised a running job's
   estimate) since the last pass, every reservation is planned again in the
   current priority order, each job released from the profile and given its
   earliest allocation: its old one is still free (nothing else moved into it),
   so a reservation never moves later (compression). A re-sort of the queue alone
   (a policy with ``dynamic = True``, an online ``decide(order=...)``) plans
   nothing again, as on the single pool: the new order applies to the jobs
   planned from then on and to the next re-plan;
2. each new job, in priority order, gets its earliest reservation that delays no
   existing one;
3. every job whose reservation has come starts on its reserved nodes, if they are
   really free. A job running past its estimate may still hold them: that
   reservation is *stale* and is planned again from scratch (released, so it may
   move later) at the next pass after a job ends.

Partitions: a job's allocations come from its partition's nodes only; partitions
that share nodes see each other's reservations through the profile.

Option ``kernel`` (as for the single pool): ``auto`` runs the compiled pass
(:mod:`.conservative_nodes_compiled`, numba) on long runs it covers
(:func:`compiled_covers`: partitions that share no node, of shared or exclusive
nodes, an allocation policy
declaring its ``node_order``, no ``max_nodes`` limit), ``python`` always this
pass, ``compiled`` the compiled pass or an error saying why it cannot. Both give
the same schedule, allocations and reservations.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import Any

import numpy as np
from schedlab.errors import SimulationError, UsageError
from schedlab.sim import NodeProfile, SchedulerState
from schedlab.sim.resources import Allocation

from .easy_nodes_cover import disjoint
from .kernel_choice import kernel_label, use_compiled

#: With ``kernel=auto``, runs of at least this many jobs use the compiled pass
#: (once numba is loaded in the process; before, loading it costs about half a
#: second, so only runs of ``COMPILED_COLD_MIN_JOBS``).
COMPILED_MIN_JOBS = 200
COMPILED_COLD_MIN_JOBS = 1_000
#: ``node_order`` values the compiled pass knows, with its code for each.
ORDERS = {"index": 0, "fewest-free-cores": 1, "most-free-cores": 2}
KERNELS = ("auto", "python", "compiled")


def compiled_covers(state: SchedulerState) -> bool:
    """Whether the compiled pass covers this run: partitions that share no node
    (one, or several: one pass each, :mod:`.conservative_nodes_partitions`), of
    shared nodes, or of exclusive ones (a job then takes its nodes whole), an allocation policy
    declaring a ``node_order`` it knows, no job with a ``max_nodes`` limit
    (importable without numba)."""
    machine = state.machine
    if machine is None or not disjoint(machine.partitions):
        return False
    if getattr(machine.allocator, "node_order", None) not in ORDERS:
        return False
    demand = state.demand
    assert demand is not None
    return not any(d is not None and d.max_nodes for d in demand)


class NodeConservative:
    """Conservative backfilling on a platform (see the module docstring); built by
    :meth:`schedlab.policies.backfill.conservative.Conservative.for_platform`."""

    name = "conservative"
    wants_running = True
    monotone_reservations = True
    supports_platform = True

    #: The compiled pass chosen when bound (``None``: the Python pass).
    _compiled: Any = None

    @property
    def kernel_name(self) -> str:
        """The implementation that ran: ``"python"``, ``"compiled"``, or
        ``"compiled, then python from t=T"`` when the compiled pass handed the rest
        of the run to the Python pass at time ``T`` (a stepping simulation's manual
        start or held reservation, or a priority key it cannot compare)."""
        return kernel_label(self._compiled)

    def __init__(self, kernel: str = "auto") -> None:
        if kernel not in KERNELS:
            raise UsageError(
                f"backfill conservative: option kernel={kernel!r}: expected one of "
                f"{', '.join(KERNELS)}"
            )
        self.kernel = kernel

    def bind(self, state: SchedulerState) -> None:
        """Keep the state and an empty reservation book; choose the pass (option
        ``kernel``)."""
        if state.machine is None:
            raise SimulationError("the node-level conservative backfilling needs a platform")
        self.state = state
        #: Waiting job -> (reserved start, reserved allocation).
        self.book: dict[int, tuple[float, Allocation]] = {}
        self.stale: set[int] = set()
        #: Whether a job ended or a running job's estimate was raised since the
        #: last pass (step 1 then plans every reservation again).
        self.replan = False
        # Forget the routing to an earlier run's compiled pass.
        for name in getattr(self, "_routed", ()):
            self.__dict__.pop(name, None)
        self._routed: tuple[str, ...] = ()
        self._compiled = None
        if self.kernel == "python":
            return
        covered = compiled_covers(state)
        if self.kernel == "compiled" and not covered:
            raise SimulationError(
                "backfill conservative: option kernel=compiled: the compiled node-level "
                "pass covers partitions that share no node (shared or exclusive nodes), an "
                "allocation policy with a node_order and no max_nodes limit"
            )
        if covered and use_compiled(
            self.kernel, state.n, COMPILED_MIN_JOBS, COMPILED_COLD_MIN_JOBS,
            "conservative_nodes_kernels", "node-level conservative backfilling",
        ):  # fmt: skip
            python = NodeConservative(kernel="python")
            python.bind(state)
            impl: Any
            if len(state.machine.partitions) == 1:
                from .conservative_nodes_compiled import CompiledNodeConservative

                impl = CompiledNodeConservative(state, python)
            else:
                from .conservative_nodes_partitions import CompiledPartitions

                impl = CompiledPartitions(state, python)
            self._compiled = impl
            self.schedule = impl.schedule  # type: ignore[method-assign]
            self.next_wakeup = impl.next_wakeup  # type: ignore[method-assign]
            self.on_finish = impl.on_finish  # type: ignore[method-assign]
            self.on_reorder = impl.on_reorder
            self.on_estimate_raised = impl.on_estimate_raised  # type: ignore[method-assign]
            self._routed = (
                "schedule", "next_wakeup", "on_finish", "on_reorder", "on_estimate_raised",
            )  # fmt: skip

    def on_finish(self, j: int, now: float) -> None:
        """A job ended: the next pass plans every reservation again."""
        self.replan = True

    def on_hold(self, now: float) -> None:
        """A stepping simulation's caller starts nothing at ``now`` (``decide()``).
        The Python pass needs nothing: its wake-ups are the reservations after now,
        and the next pass starts a held job whose reservation passed if it fits,
        and plans it again from then at a job end. The compiled pass, if a
        reservation is due now, hands the rest of the run to the Python pass
        (with the reservation book: the same schedule)."""
        impl = getattr(self, "_compiled", None)
        if impl is not None and not impl.left and impl.next_wakeup() <= now:
            impl.leave()

    def on_estimate_raised(self, job: int, old_end: float, now: float) -> None:
        """A correction raised a running job's estimate: the next pass plans every
        reservation again."""
        self.replan = True

    def _profile(self, now: float, without: int = -1) -> NodeProfile:
        state = self.state
        machine = state.machine
        assert machine is not None and state.running is not None
        profile = NodeProfile(machine.free, now)
        held = machine.held
        # A running job's amounts come back at its estimated end; one past its
        # estimate is believed to end now.
        for e, r in state.running:
            profile.add(e if e > now else now, math.inf, held[r], +1)
        est = state.estimate
        for j, (t, alloc) in self.book.items():
            if j != without:
                profile.add(t, t + est[j], alloc)
        return profile

    def _plan(self, profile: NodeProfile, j: int) -> tuple[float, Allocation]:
        state = self.state
        demand = state.demand[j]  # type: ignore[index]
        t, alloc = profile.earliest(
            lambda free: state.allocation_for(j, free),
            state.estimate[j],
            need=demand.total.tolist(),
        )
        profile.add(t, t + state.estimate[j], alloc)
        return t, alloc

    def schedule(self, now: float) -> None:
        """One pass."""
        state = self.state
        book = self.book
        est = state.estimate
        order = state.tier_order()
        # Only at job ends and corrections: ``state.finished_since_pass`` is also
        # set by a re-sort of the queue, which plans nothing again.
        due, self.replan = self.replan, False
        if due and book:  # 1.
            replan = [j for j in order if j in book]
            profile = self._profile(now)
            for j in replan:
                t0, a0 = book.pop(j)
                profile.add(t0, t0 + est[j], a0, +1)
                # A reservation already past (its job held back by a stepping
                # simulation's caller) is planned again from now.
                keep = (
                    t0 >= now and j not in self.stale and self._still_free(profile, t0, est[j], a0)
                )
                t, alloc = self._plan(profile, j)
                if t > t0 and keep:
                    # The allocation policy found nothing as early (a policy need
                    # not find every allocation), but the old one is still free:
                    # keep it, a reservation never moves later.
                    profile.add(t, t + est[j], alloc, +1)
                    profile.add(t0, t0 + est[j], a0)
                    t, alloc = t0, a0
                if t > t0 or j in self.stale:
                    state.release(j)
                    self.stale.discard(j)
                book[j] = (t, alloc)
                state.reserve(j, t)
        new = [j for j in order if j not in book]  # 2.
        if new:
            profile = self._profile(now)
            for j in new:
                t, alloc = self._plan(profile, j)
                book[j] = (t, alloc)
                state.reserve(j, t)
        machine = state.machine
        assert machine is not None
        free = machine.free
        for j in order:  # 3.
            t, alloc = book[j]
            if t > now:
                continue
            if (free[alloc.nodes] >= alloc.amounts).all() and self._idle_ok(j, alloc):
                del book[j]
                state.start(j, alloc)
            else:
                self.stale.add(j)

    @staticmethod
    def _still_free(profile: NodeProfile, t0: float, duration: float, alloc: Allocation) -> bool:
        """Whether ``alloc``'s amounts are free in ``profile`` over
        ``[t0, t0 + duration)`` (from the profile's start if ``t0`` is past)."""
        times = profile.times
        start = max(t0, times[0])
        i = bisect_right(times, start) - 1
        least = profile.window(i, start + duration)
        return bool((least[alloc.nodes] >= alloc.amounts).all())

    def _idle_ok(self, j: int, alloc: Allocation) -> bool:
        machine = self.state.machine
        assert machine is not None and self.state.partition_of is not None
        if not machine.partitions[self.state.partition_of[j]].exclusive:
            return True
        nodes = alloc.nodes
        return bool(np.array_equal(machine.free[nodes], machine.capacity[nodes]))

    def next_wakeup(self) -> float:
        """The next reservation coming due (a pass must start it then)."""
        now = self.state.now
        due = [t for t, _ in self.book.values() if t > now]
        return min(due) if due else math.inf


__all__ = ["COMPILED_MIN_JOBS", "ORDERS", "NodeConservative", "compiled_covers"]
