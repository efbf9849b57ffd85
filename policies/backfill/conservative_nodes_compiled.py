"""Conservative backfilling on a node-level machine, on the compiled pass
(:mod:`.conservative_nodes_kernels`): the same decisions as
:class:`~.conservative_nodes.NodeConservative` (start times, allocations and every
reservation), for the runs :func:`.conservative_nodes.compiled_covers` accepts.

The kernel keeps copies of the wait queue, the running jobs and the reservation
book; what changes them reaches it with the next call: arrivals, ends, and a
re-sorted queue (copied again whole), and a prediction correction raising a
running job's estimate (its estimated end, from which the kernel builds its
profile). When the run leaves what the kernel covers (a priority key that is not
a plain number), the Python pass takes over with the kernel's book (each waiting
job's reservation and allocation, and which are stale): the schedule is the
same.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from schedlab.errors import SimulationError
from schedlab.sim import SchedulerState
from schedlab.sim.resources import Allocation

from . import conservative_nodes_kernels as kn
from .conservative_nodes import ORDERS
from .numeric_keys import EXACT_INT, copy_numeric_keys


class CompiledNodeConservative:
    """NodeConservative's pass on the compiled kernel (see the module docstring)."""

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
        #: The partition this pass plans: ``None`` on a platform of one partition,
        #: else its index (one pass per partition,
        #: :class:`~.conservative_nodes_partitions.CompiledPartitions`).
        self.partition = partition
        p = partition or 0
        part_of = state.partition_of
        self.handed_over = (0, 0)
        n = state.n
        dims = len(machine.dims)
        nodes = len(machine.capacity)
        self.nodes = nodes
        self.kind = ORDERS[machine.allocator.node_order]
        self.pnodes = np.ascontiguousarray(machine.partitions[p].nodes, dtype=np.int64)
        self.meta = np.zeros(kn.N_META, dtype=np.int64)
        self.meta[kn.M_EXCLUSIVE] = int(machine.partitions[p].exclusive)
        self.ints = ints = np.zeros((kn.N_INT_ROWS, n + 1), dtype=np.int64)
        self.floats = floats = np.zeros((kn.N_FLOAT_ROWS, n + 1), dtype=np.float64)
        ints[kn.R_POS] = -1
        floats[kn.SCALARS, 0] = np.inf
        self.demands = np.zeros((2, n + 1, dims), dtype=np.int64)
        total, chunk = self.demands[0], self.demands[1]
        #: Per job: the most pool rows its allocation can take (each row gives a
        #: core, a GPU or a consumable, or is one of its fixed nodes).
        self.rows_of = rows_of = np.zeros(n + 1, dtype=np.int64)
        for j, d in enumerate(state.demand):
            if d is None or (partition is not None and part_of[j] != partition):  # type: ignore[index]
                continue
            total[j] = d.total
            ints[kn.J_MPC, j] = d.memory_per_core
            ints[kn.J_NODES, j] = d.nodes
            if d.chunk is not None:
                chunk[j] = d.chunk
                rows_of[j] = d.nodes
            else:
                if not d.total[2:].any():
                    ints[kn.J_SIMPLE, j] = 1
                rows_of[j] = min(nodes, int(d.total[0]) + int(d.total[2:].sum()))
        self.j_est = floats[kn.J_EST]
        self.j_key = floats[kn.J_KEY]
        self.arrivals = ints[kn.ARRIVALS]
        self.finished = ints[kn.FINISHED]
        self.n_finished = 0
        cap = machine.capacity[self.pnodes]
        units = int(cap[:, 0].sum()) + (int(cap[:, 2:].sum()) if cap.shape[1] > 2 else 0)
        #: Pool rows enough for the running jobs' allocations (each row holds at
        #: least one unit of its node), with those of the waiting jobs added.
        self.running_rows = units + nodes + 16
        self.waiting_rows = 0
        self.pool_nodes = np.zeros(self.running_rows + nodes + 1024, dtype=np.int64)
        self.pool_amt = np.zeros((len(self.pool_nodes), dims), dtype=np.int64)
        self._profile_arrays(64, 4 * nodes + 64)
        self.window = np.zeros((nodes, dims), dtype=np.int64)
        self.gv = np.zeros(nodes, dtype=np.int64)
        self.stamp = np.zeros(nodes, dtype=np.int64)
        self.scratch = np.zeros((3, nodes + 1), dtype=np.int64)
        self.s_nodes = np.zeros(nodes + 1, dtype=np.int64)
        self.s_amt = np.zeros((nodes + 1, dims), dtype=np.int64)
        self.rebuild = False
        #: A prediction correction raised a running job's estimate since the last
        #: call (with a job end, what makes the kernel plan every reservation again).
        self.raised = False

    def _profile_arrays(self, slices: int, entries: int) -> None:
        dims = len(self.machine.dims)
        if slices:
            self.times = np.zeros(slices, dtype=np.float64)
            # The totals per dimension, then the slice's bucket of timeline entries.
            self.tot = np.zeros((slices, dims + 1), dtype=np.int64)
        if entries:
            self.e_time = np.zeros(entries, dtype=np.float64)
            self.e_link = np.zeros((3, entries), dtype=np.int64)
            self.e_val = np.zeros((entries, dims), dtype=np.int64)

    def _room(self, queued: int) -> None:
        """Grow the profile and the pool so that this pass cannot run out."""
        running = self.meta[kn.M_RUNNING]
        need = 1 + int(running) + 4 * queued + 8
        rows = self.running_rows + self.waiting_rows + self.nodes + 16
        # Entries: one per node, two per row of every addition in a pass.
        entries = self.nodes + 4 * rows
        self._profile_arrays(
            need + need // 2 if len(self.times) < need else 0,
            entries + entries // 2 if len(self.e_time) < entries else 0,
        )
        if len(self.pool_nodes) < rows:
            size = 2 * rows
            top = int(self.meta[kn.M_POOL])
            nodes = np.zeros(size, dtype=np.int64)
            amt = np.zeros((size, self.pool_amt.shape[1]), dtype=np.int64)
            nodes[:top] = self.pool_nodes[:top]
            amt[:top] = self.pool_amt[:top]
            self.pool_nodes, self.pool_amt = nodes, amt

    # ------------------------------------------------------------- engine calls
    def on_finish(self, j: int, now: float) -> None:
        """A job ended: it leaves the kernel's running jobs at the next call."""
        if self.left:
            self.fallback.on_finish(j, now)
            return
        self.finished[self.n_finished] = j
        self.n_finished += 1

    def on_reorder(self, now: float) -> None:
        """The queue was re-sorted: the kernel copies it again at the next call
        (and plans no reservation again for it)."""
        self.rebuild = True

    def on_estimate_raised(self, job: int, old_end: float, now: float) -> None:
        """A correction raised a running job's estimate: the kernel's copy of its
        estimated end follows (the next pass builds its profile from it, as the
        Python pass builds its own from ``state.running``; the engine marks the
        pass as one after an end, so every reservation is planned again). Until
        then a node may be over-committed in the profile (a reservation planned
        on the raised job's amounts): it gives nothing, on both passes."""
        if self.left:
            self.fallback.on_estimate_raised(job, old_end, now)
            return
        self.raised = True
        self.floats[kn.J_END, job] = self.state.estimated_end[job]

    def next_wakeup(self) -> float:
        """The next reservation coming due."""
        if self.left:
            return float(self.fallback.next_wakeup())
        return float(self.floats[kn.SCALARS, 0])

    def leave(self) -> None:
        """Go on with the Python pass, handing it the reservation book."""
        if self.left:
            return
        self.left = True
        self.left_at = self.state.now
        # Ends and corrections since the last call are the Python pass's to act on.
        self.fallback.replan = self.n_finished > 0 or self.raised
        ints, floats = self.ints, self.floats
        book = self.fallback.book
        stale = self.fallback.stale
        for x in range(int(self.meta[kn.M_QUEUE])):
            j = int(ints[kn.Q_JOB, x])
            if not ints[kn.BOOKED, j]:
                continue
            o = ints[kn.A_OFF, j]
            e = o + ints[kn.A_LEN, j]
            book[j] = (
                float(floats[kn.B_T, j]),
                Allocation(self.pool_nodes[o:e].copy(), self.pool_amt[o:e].copy()),
            )
            if ints[kn.STALE, j]:
                stale.add(j)
        #: Reservations handed to the Python pass (tests read it).
        self.handed_over = (len(book), len(stale))

    def _numeric(self, jobs: list[int]) -> bool:
        return copy_numeric_keys(self.state.key_of, jobs, self.j_key)

    def _mine(self, jobs: list[int]) -> list[int]:
        """``jobs`` of this pass's partition (all on a platform of one)."""
        p = self.partition
        if p is None:
            return jobs
        part_of = self.state.partition_of
        assert part_of is not None
        return [j for j in jobs if part_of[j] == p]

    def schedule(self, now: float, replan_all: bool = False) -> None:
        """One conservative pass (``replan_all``: plan every reservation again, as
        after an end, whatever ended: another partition's job, for
        :class:`~.conservative_nodes_partitions.CompiledPartitions`)."""
        if self.left:
            self.fallback.schedule(now)
            return
        state = self.state
        new = self._mine(state.new_jobs)
        estimate = state.estimate
        j_est = self.j_est
        rows_of = self.rows_of
        if self.rebuild:
            jobs = self._mine([j for _, j in state.queue])
            if not self._numeric(jobs):
                self.leave()
                self.fallback.schedule(now)
                return
            self.ints[kn.Q_JOB, : len(jobs)] = jobs
            self.floats[kn.Q_KEY, : len(jobs)] = self.j_key[jobs]
            self.meta[kn.M_QUEUE] = len(jobs)
            self.rebuild = False
            n_arrivals = 0
        else:
            if not self._numeric(new):
                self.leave()
                self.fallback.schedule(now)
                return
            n_arrivals = len(new)
            if n_arrivals:
                self.arrivals[:n_arrivals] = new
        for j in new:
            j_est[j] = estimate[j]
            self.waiting_rows += int(rows_of[j])
        self._room(len(state.queue))
        n_finished = self.n_finished
        self.n_finished = 0
        # Every reservation is planned again after a job end or a correction only,
        # not after a re-sort (``state.finished_since_pass`` says either).
        replan = n_finished > 0 or self.raised or replan_all
        self.raised = False
        # Tests log every reservation: the kernel then reports each, not only changes.
        self.meta[kn.M_LOG_ALL] = state.reservation_log is not None
        started, info = kn.node_conservative_pass(
            self.meta, self.machine.free, self.ints, self.floats, self.demands, self.pnodes,
            self.pool_nodes, self.pool_amt, self.times, self.tot, self.e_time, self.e_link,
            self.e_val,
            self.window, self.gv, self.stamp, self.scratch, self.s_nodes, self.s_amt, self.kind,
            n_arrivals, n_finished, replan, now,
        )  # fmt: skip
        if started < 0:
            what = {
                kn.ERR_LOST: "lost track of a running job",
                kn.ERR_NO_FIT: f"found no allocation for job index {info} even on the "
                "profile's last slice",
                kn.ERR_ROOM: "ran out of profile room",
            }[started]
            raise SimulationError(
                f"backfill {state.strategy_name!r}: the compiled node-level conservative "
                f"pass {what}"
            )
        ints = self.ints
        b_t = self.floats[kn.B_T]
        changed = ints[kn.CHANGED, : self.meta[kn.M_CHANGES]].tolist()
        if changed:
            released = ints[kn.RELEASED]
            for x, j in enumerate(changed):
                if released[x]:
                    state.release(j)
                state.reserve(j, float(b_t[j]))
        if started:
            start = state.start
            a_off, a_len = ints[kn.A_OFF], ints[kn.A_LEN]
            pool_nodes, pool_amt = self.pool_nodes, self.pool_amt
            for j in ints[kn.OUT, :started].tolist():
                o = a_off[j]
                e = o + a_len[j]
                start(j, Allocation(pool_nodes[o:e].copy(), pool_amt[o:e].copy()))
                self.waiting_rows -= int(rows_of[j])


__all__ = ["EXACT_INT", "CompiledNodeConservative"]
