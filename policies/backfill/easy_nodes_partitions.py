"""Node-level EASY on a platform of several partitions that share no node, on the
compiled pass: one :class:`~.easy_nodes_compiled.CompiledNodeEasy` per partition.

Partitions that share no node are machines of their own (docs/platform.md): a job
that does not fit blocks only its own partition, each partition's first waiting
job is the head of its own queue, and what one partition's jobs hold never
changes what another's can get. So the Python pass's decisions
(:class:`~.easy_nodes.NodeEasy`) are those of one EASY pass per partition over the
partition's own jobs, in partition order, which is what this class runs: each
engine call goes to every partition's compiled pass with the arrivals, ends and
corrections of its own jobs. The schedule is the Python pass's, job for job
(``tests/test_easy_nodes_partitions.py``).

The whole run in one kernel call (``run_whole``) is declined: the engine runs its
own loop and calls the passes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from schedlab.sim import SchedulerState, WholeRun, WholeRunOutcome

from .easy_nodes_compiled import CompiledNodeEasy
from .numeric_keys import new_keys_numeric


class CompiledPartitions:
    """One compiled node-level EASY pass per partition (see the module docstring)."""

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
            CompiledNodeEasy(state, None, partition=p) for p in range(len(machine.partitions))
        ]
        self._keys = np.empty(state.n + 1, dtype=np.float64)

    def run_whole(self, plan: WholeRun) -> WholeRunOutcome | None:
        """Declined (``None``): the engine runs its loop (see the module docstring)."""
        return None

    def on_finish(self, j: int, now: float) -> None:
        """A job ended: its partition's pass hears of it."""
        if not self.left:
            self.passes[self.part_of[j]].on_finish(j, now)

    def on_reorder(self, now: float) -> None:
        """The queue was re-sorted: every partition's pass copies it again."""
        for one in self.passes:
            one.on_reorder(now)

    def on_estimate_raised(self, job: int, old_end: float, now: float) -> None:
        """A correction raised a running job's estimate: its partition's pass moves it."""
        if not self.left:
            self.passes[self.part_of[job]].on_estimate_raised(job, old_end, now)

    def on_manual_start(self, job: int, now: float) -> None:
        """The caller of a stepping simulation started ``job``: go on with the
        Python pass (as :meth:`.CompiledNodeEasy.on_manual_start`)."""
        self.left = True
        self.left_at = self.state.now

    def schedule(self, now: float) -> None:
        """One EASY pass: each partition's, in partition order."""
        # A key the compiled passes cannot compare sends the whole run to the Python
        # pass before any partition's pass runs (a partition's pass would otherwise
        # leave alone, after others started jobs).
        if not self.left and not new_keys_numeric(self.state, self.passes[0].rebuild, self._keys):
            self.left = True
            self.left_at = self.state.now
        if self.left:
            self.fallback.schedule(now)
            return
        for one in self.passes:
            one.schedule(now)


__all__ = ["CompiledPartitions"]
