"""EASY on a node-level machine, on the compiled pass (:mod:`.easy_nodes_kernels`):
the same decisions as :class:`~.easy_nodes.NodeEasy`, job for job, for a platform
of one partition (shared or exclusive nodes), an allocation policy that declares its
``node_order`` and demands without a ``max_nodes`` limit (:func:`applies` says
whether a run qualifies).

The kernel keeps copies of the wait queue and of the running jobs with their
allocations; what changes them reaches it with the next call (arrivals, ends, and a
re-sorted queue, copied again whole), or at once (a prediction correction raising
a running job's estimate moves the job among the kernel's running jobs). When the
run leaves what the kernel covers (a priority key that is not a plain number, or a
job started by the caller of a stepping simulation), it goes on with the Python
pass, which needs no history: the schedule is the same.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from schedlab.errors import SimulationError
from schedlab.sim import MIN_ESTIMATE, SchedulerState, WholeRun, WholeRunOutcome
from schedlab.sim.resources import Allocation

from . import easy_nodes_kernels as kn
from .easy_compiled import prediction_arrays, prediction_outcome
from .easy_nodes_cover import ORDERS, pool_rows
from .numeric_keys import copy_numeric_keys


class CompiledNodeEasy:
    """NodeEasy's pass on the compiled kernel (see the module docstring)."""

    def __init__(self, state: SchedulerState, fallback: Any, partition: int | None = None) -> None:
        machine = state.machine
        assert machine is not None and state.demand is not None
        self.state = state
        self.machine = machine
        #: The Python pass the run goes on with when it leaves the kernel's cover.
        self.fallback = fallback
        self.left = False
        #: When the run went on with the Python pass (``nan``: it did not).
        self.left_at = math.nan
        #: The partition this pass schedules: ``None`` on a platform of one
        #: partition, else its index (one pass per partition,
        #: :class:`~.easy_nodes_partitions.CompiledPartitions`).
        self.partition = partition
        n = state.n
        dims = len(machine.dims)
        nodes = len(machine.capacity)
        self.kind = ORDERS[machine.allocator.node_order]
        p = partition or 0
        pnodes = machine.partitions[p].nodes
        self.meta = np.zeros(kn.N_META, dtype=np.int64)
        self.meta[kn.M_HEAD] = -1
        self.meta[kn.M_PNODES] = len(pnodes)
        self.meta[kn.M_EXCLUSIVE] = int(machine.partitions[p].exclusive)
        self.nodes = np.zeros((kn.N_NODE_ROWS, nodes), dtype=np.int64)
        self.nodes[kn.P_NODES, : len(pnodes)] = pnodes
        self.mats = np.zeros((2, nodes, dims), dtype=np.int64)
        self.demands = np.zeros((3, n + 1, dims), dtype=np.int64)
        self.ints = ints = np.zeros((kn.N_INT_ROWS, n + 1), dtype=np.int64)
        self.floats = floats = np.zeros((kn.N_FLOAT_ROWS, n + 1), dtype=np.float64)
        ints[kn.J_MC] = -1
        # Jobs asking the same demand object share a class: the per-demand work is
        # done once per class (in order of first appearance), then spread by job.
        demand: list[Any] = state.demand
        if partition is not None:  # the other partitions' jobs are not this pass's
            part_of = state.partition_of
            assert part_of is not None
            demand = [d if part_of[j] == partition else None for j, d in enumerate(demand)]
        ids = np.fromiter((id(d) for d in demand), dtype=np.uint64, count=len(demand))
        _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
        by_appearance = np.argsort(first, kind="stable")
        rank = np.empty(len(first), dtype=np.int64)
        rank[by_appearance] = np.arange(len(first))
        job_class = rank[inverse.reshape(-1)]
        reps = [demand[int(j)] for j in first[by_appearance]]
        n_classes = len(reps)
        c_total = np.zeros((n_classes, dims), dtype=np.int64)
        c_chunk = np.zeros((n_classes, dims), dtype=np.int64)
        c_mpc = np.zeros(n_classes, dtype=np.int64)
        c_nodes = np.zeros(n_classes, dtype=np.int64)
        c_mc = np.full(n_classes, -1, dtype=np.int64)
        real = np.ones(n_classes, dtype=bool)
        mpcs: dict[int, int] = {}
        for c, d in enumerate(reps):
            if d is None:
                real[c] = False
                continue
            c_total[c] = d.total
            c_mpc[c] = d.memory_per_core
            c_nodes[c] = d.nodes
            if d.chunk is not None:
                c_chunk[c] = d.chunk
            elif not d.total[2:].any():
                # Cores and memory only (flexible): the kernel's capacity test.
                c_mc[c] = mpcs.setdefault(int(d.memory_per_core), len(mpcs))
        # Classes numbered without the missing demands (``None``: class 0, as before).
        c_index = np.cumsum(real) - 1
        c_index[~real] = 0
        has = real[job_class]
        #: Whether every job has a demand (a whole run needs it).
        self.all_placed = bool(has.all())
        jobs = np.flatnonzero(has)
        cls = job_class[jobs]
        ints[kn.J_CLASS, jobs] = c_index[cls]
        ints[kn.J_MPC, jobs] = c_mpc[cls]
        ints[kn.J_NODES, jobs] = c_nodes[cls]
        ints[kn.J_MC, jobs] = c_mc[cls]
        self.demands[0, jobs] = c_total[cls]
        self.demands[1, jobs] = c_chunk[cls]
        n_real = int(real.sum())
        min_cores = int(c_total[real, 0].min()) if n_real else 0
        self.meta[kn.M_MIN_CORES] = min_cores
        self.memo = np.full((kn.N_MEMO_ROWS, max(n_real, len(mpcs)) + 1), -1, np.int64)
        self.j_est = floats[kn.J_EST]
        self.j_key = floats[kn.J_KEY]
        self.arrivals = ints[kn.ARRIVALS]
        self.finished = ints[kn.FINISHED]
        self.n_finished = 0
        self.out = ints[kn.OUT]
        self.a_off = ints[kn.A_OFF]
        self.a_len = ints[kn.A_LEN]
        rows = pool_rows(machine, p)
        self.pool_nodes = np.zeros(rows, dtype=np.int64)
        self.pool_amt = np.zeros((rows, dims), dtype=np.int64)
        # Room for a candidate's rows and the head's trial rows after them.
        self.s_nodes = np.zeros(2 * nodes + 2, dtype=np.int64)
        self.s_amt = np.zeros((2 * nodes + 2, dims), dtype=np.int64)
        # What each node gives each memory per core in the capacities kept from the
        # log of changes (``_log_capacity``), then a bit mask per block of
        # ``SNAP_BLOCK`` nodes (those giving something); none past 16 M entries
        # (full sums, first fit walks).
        width = nodes + -(-nodes // kn.SNAP_BLOCK)
        self.snap = np.zeros((len(mpcs) if len(mpcs) * width <= 1 << 24 else 0, width), np.int64)
        self.rebuild = False
        #: The kernel's array arguments, in order.
        self.arrays = (
            self.meta, machine.free, self.ints, self.floats, self.demands, self.mats,
            self.nodes, self.memo, self.pool_nodes, self.pool_amt, self.s_nodes, self.s_amt,
            self.snap,
        )  # fmt: skip
        kn.load(self.arrays, self.kind)

    def run_whole(self, plan: WholeRun) -> WholeRunOutcome | None:
        """The whole simulation in one kernel call (:func:`.easy_nodes_kernels.
        node_easy_run`) when the engine offers it (:mod:`schedlab.sim.whole_run`):
        the same start times and allocations as the pass-by-pass run, predictions
        and corrections included (the single pool's prediction steps,
        :func:`.easy_compiled.prediction_arrays`). ``None`` (decline) unless the plan
        is on this state's machine, untouched, with a prediction the kernel knows
        (or none)."""
        machine = self.machine
        n = len(plan.submit)
        if (
            plan.machine is not machine
            or self.left
            or self.meta[kn.M_SYNCED]
            or machine.held
            or n != self.state.n
            or not self.all_placed
            or self.partition is not None
        ):
            return None
        run = prediction_arrays(plan)
        if run is None:
            return None
        if plan.prediction is None:
            self.j_est[:n] = plan.estimate
        self.j_key[:n] = plan.key
        # The heap of estimated ends for corrections (empty without them).
        corr = n + 1 if run.model[kn.MODEL_CORRECTION] else 1
        predicting = (
            *run.arguments(MIN_ESTIMATE), np.empty(corr), np.empty(corr, dtype=np.int64)
        )  # fmt: skip
        passes, status, offset, *rows = kn.node_easy_run(
            *self.arrays, self.kind, plan.submit, plan.run_time, *predicting
        )
        if status:
            what = {
                -1: "lost track of a running job",
                -2: "found a head with no allocation even with every running job ended",
                1: "left jobs waiting with no event left",
            }.get(status, f"failed ({status})")
            raise SimulationError(
                f"backfill {self.state.strategy_name!r}: the compiled node-level EASY run "
                f"{what} (please report this)"
            )
        nodes, amounts = kn.allocation_rows(self.arrays[2], offset, *rows)
        return WholeRunOutcome(
            start=run.start,
            passes=passes,
            node_offset=offset,
            nodes=nodes,
            amounts=amounts,
            **prediction_outcome(plan, run, self.j_est[:n], self.floats[kn.J_END, :n]),
        )

    # ------------------------------------------------------------- engine calls
    def on_finish(self, j: int, now: float) -> None:
        """A job ended: it leaves the kernel's running jobs at the next call."""
        if not self.left:
            self.finished[self.n_finished] = j
            self.n_finished += 1

    def on_reorder(self, now: float) -> None:
        """The queue was re-sorted: the kernel copies it again at the next call."""
        self.rebuild = True

    def on_estimate_raised(self, job: int, old_end: float, now: float) -> None:
        """A correction raised a running job's estimate: the job moves in the
        kernel's running jobs (:func:`.easy_nodes_kernels.move_running`), and the
        next pass finds the head's shadow time again."""
        if self.left:
            return
        new_end = float(self.state.estimated_end[job])
        if not kn.move_running(
            self.meta, self.ints, self.floats, self.demands, self.mats, self.pool_nodes,
            self.pool_amt, job, new_end,
        ):  # fmt: skip
            raise SimulationError(
                f"backfill {self.state.strategy_name!r}: the compiled node-level EASY pass "
                f"lost track of running job index {job} (raised to {new_end:g})"
            )

    def on_manual_start(self, job: int, now: float) -> None:
        """The caller of a stepping simulation (:class:`schedlab.Simulation`) started
        ``job`` outside the pass: the run goes on with the Python pass (:meth:`leave`),
        which keeps no copy of the free nodes or the running jobs, so the schedule is
        the one ``kernel=python`` gives. (The kernel's copies, kept incrementally
        across passes, are not patched from outside.)"""
        self.leave()

    def leave(self) -> None:
        """Go on with the Python pass (it keeps no history: same schedule)."""
        self.left = True
        self.left_at = self.state.now

    def _numeric(self, jobs: list[int]) -> bool:
        return copy_numeric_keys(self.state.key_of, jobs, self.j_key)

    def schedule(self, now: float) -> None:
        """One EASY pass."""
        if self.left:
            self.fallback.schedule(now)
            return
        state = self.state
        if self.rebuild:
            jobs = [j for _, j in state.queue]
            self.meta[kn.M_QUEUE] = 0
            self.meta[kn.M_FIRST] = 0
            self.meta[kn.M_END] = 0
            self.rebuild = False
        else:
            jobs = state.new_jobs
        if self.partition is not None:
            part_of = state.partition_of
            assert part_of is not None
            p = self.partition
            jobs = [j for j in jobs if part_of[j] == p]
        if len(jobs) == 1 and type(state.key_of[jobs[0]]) is float:
            j = jobs[0]
            k = state.key_of[j]
            if k == k:
                self.j_key[j] = k
                self.j_est[j] = state.estimate[j]
                self.arrivals[0] = j
            else:
                self.leave()
                self.fallback.schedule(now)
                return
        elif jobs:
            if not self._numeric(jobs):
                self.leave()
                self.fallback.schedule(now)
                return
            estimate = state.estimate
            j_est = self.j_est
            for j in jobs:
                j_est[j] = estimate[j]
            self.arrivals[: len(jobs)] = jobs
        n_finished = self.n_finished
        self.n_finished = 0
        started, _from_head, head, shadow = kn.node_easy_pass(
            *self.arrays, self.kind, len(jobs), n_finished, state.finished_since_pass, now
        )
        if started < 0:
            what = (
                "lost track of a running job"
                if started == -1
                else f"found no allocation for job index {head} even with every running job ended"
            )
            raise SimulationError(
                f"backfill {state.strategy_name!r}: the compiled node-level EASY pass {what}"
            )
        if started:
            start = state.start
            a_off, a_len = self.a_off, self.a_len
            pool_nodes, pool_amt = self.pool_nodes, self.pool_amt
            for j in self.out[:started].tolist():
                o = a_off[j]
                e = o + a_len[j]
                start(j, Allocation(pool_nodes[o:e].copy(), pool_amt[o:e].copy()))
        if head >= 0 and state.reservation_log is not None:
            state.log_reservation(head, shadow)


__all__ = ["CompiledNodeEasy"]
