"""Node-level conservative backfilling on a platform of several partitions that
share no node, on the compiled pass: one
:class:`~.conservative_nodes_compiled.CompiledNodeConservative` per partition.

A job's reservations come from its partition's nodes only, so on partitions that
share no node one job's plan never changes another partition's: the Python pass's
decisions (:class:`~.conservative_nodes.NodeConservative`, which plans every
partition's jobs on one profile, in tier and priority order) are those of one
pass per partition over its own jobs. Every reservation is planned again after
*any* job ended or a correction (as the Python pass does: a second compression
may move a reservation that the first left), so each partition's pass is told of
every end. The schedule, allocations and reservations are the Python pass's
(``tests/test_conservative_nodes_partitions.py``; the reservations of one pass
come partition by partition instead of in tier order).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from schedlab.sim import SchedulerState

from .conservative_nodes_compiled import CompiledNodeConservative
from .numeric_keys import new_keys_numeric


class CompiledPartitions:
    """One compiled node-level conservative pass per partition (see the module
    docstring)."""

    def __init__(self, state: SchedulerState, fallback: Any) -> None:
        machine = state.machine
        assert machine is not None and state.partition_of is not None
        self.state = state
        #: The Python pass the run goes on with when it leaves the compiled cover.
        self.fallback = fallback
        self.left = False
        #: When the run went on with the Python pass (``nan``: it did not).
        self.left_at = math.nan
        self.part_of = state.partition_of
        #: The compiled pass of each partition, in partition order.
        self.passes = [
            CompiledNodeConservative(state, fallback, partition=p)
            for p in range(len(machine.partitions))
        ]
        #: A job ended or a correction raised a running job's estimate since the
        #: last pass (every partition plans its reservations again).
        self.replan = False
        self._keys = np.empty(state.n + 1, dtype=np.float64)

    def on_finish(self, j: int, now: float) -> None:
        """A job ended: its partition's pass hears of it; every partition re-plans."""
        if self.left:
            self.fallback.on_finish(j, now)
            return
        self.passes[self.part_of[j]].on_finish(j, now)
        self.replan = True

    def on_reorder(self, now: float) -> None:
        """The queue was re-sorted: every partition's pass copies it again."""
        for one in self.passes:
            one.on_reorder(now)

    def on_estimate_raised(self, job: int, old_end: float, now: float) -> None:
        """A correction raised a running job's estimate: its partition's pass
        follows; every partition re-plans."""
        if self.left:
            self.fallback.on_estimate_raised(job, old_end, now)
            return
        self.passes[self.part_of[job]].on_estimate_raised(job, old_end, now)
        self.replan = True

    def next_wakeup(self) -> float:
        """The next reservation coming due, in any partition."""
        if self.left:
            return float(self.fallback.next_wakeup())
        return min((one.next_wakeup() for one in self.passes), default=math.inf)

    def leave(self) -> None:
        """Go on with the Python pass, handing it every partition's reservations."""
        if self.left:
            return
        replan = self.replan
        for one in self.passes:
            one.leave()
            replan = replan or self.fallback.replan
        self.fallback.replan = replan
        self.left = True
        self.left_at = self.state.now

    def schedule(self, now: float) -> None:
        """One conservative pass: each partition's, in partition order."""
        # A key the compiled passes cannot compare sends the whole run to the Python
        # pass before any partition's pass runs.
        if not self.left and not new_keys_numeric(self.state, self.passes[0].rebuild, self._keys):
            self.leave()
        if self.left:
            self.fallback.schedule(now)
            return
        replan, self.replan = self.replan, False
        for one in self.passes:
            one.schedule(now, replan_all=replan)


__all__ = ["CompiledPartitions"]
