"""Each job's request on a multi-resource machine: its :class:`Demand` vector and
its partition, read from what the workload carries (decisions, also in
docs/platform.md):

* **cores**: the job's size as without a platform (requested processors, else
  allocated);
* **nodes**: ``Job.nodes`` or the extra ``request.nodes`` when a reader knows the
  node count (a whole number: ``2`` or ``2.0``; a fraction, a bool or a negative
  count is an error naming the job and the key, never rounded); otherwise 0
  (flexible: cores from any nodes);
* **memory**: SWF's requested memory (KB per processor) times 1024 as a memory
  per core when known (> 0), a node being charged the job's cores there times
  it; else the extra ``request.memory`` M (bytes, meant per node): exactly M on
  each node of a fixed request, and for a flexible one (no node count) a job
  total, ``ceil(M / cores)`` per core (a known limitation, see
  docs/platform.md); else none (counted as unknown, never invented);
* **GPUs** and consumables: the extras ``request.gpus`` and ``request.NAME`` (job
  totals), else 0;
* **partition**: the extra ``request.partition`` (a name: the partition of that
  name, else of its valid platform name, as ``schedlab platform infer`` writes
  it, see ``PartitionRule._named_index``); else the partition the
  job's SWF partition number names, when the platform has it: the header's name
  for the number, or that name made a valid platform name, or ``partitionN`` when
  the header names none (:func:`schedlab.platform.trace_partition_name`, the names
  ``schedlab platform infer`` writes); else the
  partition whose ``queues`` list the job's queue (its header name, or the number
  written as text), or the partition named like the queue; else the platform's
  first partition (the default, as in Slurm), counted (``default_partition``).
  An unmapped partition number falls through to the queue, and an unmapped queue
  number without a header name to the default.

Jobs that cannot run are excluded with a reason: ``unknown_partition`` (on a
platform of several partitions: a ``request.partition`` it does not have, or a
queue with a ``Queue:`` header name that no partition maps or is named like, when
the partition number did not decide), ``over_partition_limit``
(requested time over the partition's ``max_time``, or more nodes than its
``max_nodes``) and ``never_fits`` (more than the partition holds in some
dimension, even idle).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import SimulationError
from ..model import JobColumns, Workload
from ..platform import _safe_name, trace_partition_name
from .machine import NodeMachine
from .resources import CORES, GPUS, MEMORY, Demand

#: Exclusion reasons a platform adds, in the order they are checked.
PLATFORM_EXCLUSION_REASONS: tuple[str, ...] = (
    "unknown_partition",
    "over_partition_limit",
    "never_fits",
)

#: Requests above this (in any unit) cannot fit any machine: ``never_fits``.
_HUGE = 2**60


def _rich(workload: Workload, cols: JobColumns) -> tuple[list[Any], list[dict[str, Any]]]:
    """Node counts (``Job.nodes`` as given, checked by :func:`_node_count`) and
    extras per row (0 / {} where absent)."""
    n = len(cols)
    if workload.has_job_objects():
        jobs = workload.jobs
        nodes = [j.nodes or 0 for j in jobs]
        extras = [j.extras for j in jobs]
    else:
        nodes = [0] * n
        extras = cols.extras if cols.extras is not None else [{}] * n
    return nodes, extras


def _number(value: Any) -> float:
    """``value`` as a float; ``nan`` for a bool (not a number here) or anything
    ``float()`` refuses."""
    if isinstance(value, (bool, np.bool_)):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _amount(extra: dict[str, Any], key: str, job: float) -> float:
    """A request extra as a non-negative number; ``nan`` when absent; a
    :class:`~schedlab.errors.SimulationError` naming the job and key otherwise (a
    bool is not a number here)."""
    value = extra.get(key)
    if value is None:
        return math.nan
    v = _number(value)
    if not v >= 0 or v == math.inf:
        number = int(job) if job == job else "?"
        raise SimulationError(f"job {number}: extra {key}={value!r} is not a non-negative number")
    return v


def _node_count(value: Any, key: str, job: float) -> int:
    """A node count (``key``: ``extra request.nodes`` or ``Job.nodes``) as a whole
    non-negative number, 0 for ``None``; a
    :class:`~schedlab.errors.SimulationError` naming the job and key for a
    fraction, a bool, a negative or a non-numeric value (a node count is never
    rounded)."""
    if value is None:
        return 0
    v = _number(value)
    if not (0 <= v < math.inf and v == math.floor(v)):
        number = int(job) if job == job else "?"
        raise SimulationError(
            f"job {number}: {key}={value!r} is not a node count (a whole non-negative number)"
        )
    return int(v)


class PartitionRule:
    """How a row's partition is found (the module docstring's order), from its
    extra ``request.partition``, its SWF partition number and its queue number."""

    def __init__(self, workload: Workload, machine: NodeMachine) -> None:
        self.platform = machine.platform
        self.by_name = {p.name: p.index for p in machine.partitions}
        self.several = len(machine.partitions) > 1
        self.queue_names = workload.header.names("Queue")
        self.partition_names = workload.header.names("Partition")

    def _named_index(self, name: str, part_no: float) -> int:
        """The index of the partition a job asks for by ``name``
        (``request.partition``): the partition of that name, else of its valid
        platform name (the name ``schedlab platform infer`` writes for it: other
        characters become ``_``, and a name keeping none is ``partition``, or
        ``partitionN`` when the job's partition number ``N`` has this header
        name); else ``-2`` (excluded) on a platform of several partitions, ``-1``
        (the only partition) on one."""
        by_name = self.by_name
        p = by_name.get(name)
        if p is None:
            p = by_name.get(_safe_name(name, "partition"))
        if p is None and part_no == part_no and self.partition_names.get(int(part_no)) == name:
            p = by_name.get(trace_partition_name(int(part_no), name))
        if p is None:
            # unknown: excluded when the platform has several partitions (as
            # for queues), else the only partition
            p = -2 if self.several else -1
        return p

    def index(self, named: Any, part_no: float, queue: float) -> int:
        """The partition index; ``-1``: none named (the default partition);
        ``-2``: a name the platform does not have (excluded)."""
        by_name = self.by_name
        p = -1
        if named is not None:
            p = self._named_index(str(named), part_no)
        elif part_no == part_no:
            number = int(part_no)
            header_name = self.partition_names.get(number)
            if header_name is not None:
                p = by_name.get(header_name, -1)
            if p == -1:
                # the name infer gives the number (header name made valid, or partitionN)
                p = by_name.get(trace_partition_name(number, header_name), -1)
        if p == -1 and queue == queue:
            q = int(queue)
            qname = self.queue_names.get(q, str(q))
            hit = self.platform.partition_of_queue(qname)
            if hit is None and str(q) != qname:
                hit = self.platform.partition_of_queue(str(q))
            if hit is not None:
                p = by_name[hit.name]
            elif qname in by_name:
                p = by_name[qname]
            elif self.queue_names.get(q) is not None and self.several:
                p = -2  # a named queue the platform does not map
        return p


def make_demand(nodes: int, mpc: int, max_nodes: int, total: list[int]) -> Demand:
    """The :class:`Demand` of a job asking ``total`` (one amount per dimension)
    on ``nodes`` nodes (0: flexible) with ``mpc`` bytes of memory per core.

    A fixed request (``nodes`` > 0) with memory but ``mpc`` 0 asked its memory per
    node: ``total``'s memory is then ``nodes`` times it, and each node holds exactly
    that much (``request.memory``), whatever its share of the cores."""
    vec = np.array(total, dtype=np.int64)
    chunk = None
    if nodes:
        chunk = -(-vec // nodes)
        if mpc:
            chunk[MEMORY] = chunk[CORES] * mpc
        if chunk[GPUS] < 0:
            chunk[GPUS] = 0
    return Demand(vec, mpc, nodes, chunk, max_nodes)


class Requests:
    """The demands and partitions of a workload's rows on one machine.

    Built column-wise (:func:`schedlab.sim.requests_columns.fill_by_columns`);
    rows the column-wise pass does not take (values out of the ordinary, a bad
    request, which is then reported as here) are read row by row
    (:meth:`fill_by_rows`), with the same results."""

    def __init__(
        self, workload: Workload, cols: JobColumns, machine: NodeMachine, size: np.ndarray
    ) -> None:
        from .requests_columns import fill_by_columns

        self.reset(len(cols), machine)
        if not fill_by_columns(self, workload, cols, size):
            self.reset(len(cols), machine)
            self.fill_by_rows(workload, cols, size)

    def reset(self, n: int, machine: NodeMachine) -> None:
        """Every row undecided (no demand, no partition, no reason)."""
        self.machine = machine
        #: Per row: the demand (``None`` for excluded rows) and partition index.
        self.demand: list[Demand | None] = [None] * n
        self.partition = np.full(n, -1, dtype=np.int64)
        self.reasons = {r: np.zeros(n, dtype=bool) for r in PLATFORM_EXCLUSION_REASONS}
        #: Rows placed in the default partition, and rows whose memory is unknown.
        self.defaulted_mask = np.zeros(n, dtype=bool)
        self.memory_unknown_mask = np.zeros(n, dtype=bool)

    def fill_by_rows(self, workload: Workload, cols: JobColumns, size: np.ndarray) -> None:
        """Decide every row, one at a time (the plain reading of the rules)."""
        machine = self.machine
        n = len(cols)
        parts = machine.partitions
        rule = PartitionRule(workload, machine)
        nodes_of, extras = _rich(workload, cols)
        req_mem = cols["requested_memory"]
        req_time = cols["requested_time"]
        queue = cols["queue_number"]
        part_no = cols["partition_number"]
        job_number = cols["job_number"]
        dims = machine.dims
        cache: dict[tuple[Any, ...], Demand] = {}
        fits: dict[tuple[int, int], bool] = {}
        for r in range(n):
            cores = size[r]
            if not cores > 0:
                continue  # excluded before (no size)
            extra = extras[r] or {}
            p = rule.index(extra.get("request.partition"), part_no[r], queue[r])
            if p == -2:
                self.reasons["unknown_partition"][r] = True
                continue
            if p == -1:
                p = 0
                self.defaulted_mask[r] = len(parts) > 1
            part = parts[p]
            # demand
            c = int(cores)
            number = job_number[r]
            given = extra.get("request.nodes")
            if given is not None:
                nodes = _node_count(given, "extra request.nodes", number)
            else:
                nodes = _node_count(nodes_of[r], "Job.nodes", number)
            mpc = 0
            memory = 0  # the job's total memory
            if req_mem[r] > 0:
                mpc = round(req_mem[r] * 1024)
                memory = c * mpc
            else:
                per_node = _amount(extra, "request.memory", number)
                if per_node > 0 and nodes:
                    memory = math.ceil(per_node) * nodes  # exactly that on each node
                elif per_node > 0:
                    mpc = math.ceil(per_node / c)
                    memory = c * mpc
                else:
                    self.memory_unknown_mask[r] = True
            total = [c, memory]
            for name in dims[2:]:
                v = _amount(extra, f"request.{name}", number)
                total.append(math.ceil(v) if v == v else 0)
            if part.max_time is not None and req_time[r] > part.max_time:
                self.reasons["over_partition_limit"][r] = True
                continue
            if part.max_nodes is not None and nodes > part.max_nodes:
                self.reasons["over_partition_limit"][r] = True
                continue
            if mpc > _HUGE or max(total) > _HUGE or nodes > len(part.nodes):
                # More than the partition holds (a garbage request may exceed
                # what int64 counts): excluded, never a crash.
                self.reasons["never_fits"][r] = True
                continue
            key = (nodes, mpc, part.max_nodes or 0, *total)
            demand = cache.get(key)
            if demand is None:
                demand = cache[key] = make_demand(nodes, mpc, part.max_nodes or 0, total)
            fk = (id(demand), p)
            ok = fits.get(fk)
            if ok is None:
                ok = fits[fk] = machine.fits_empty(demand, p)
            if not ok:
                self.reasons["never_fits"][r] = True
                continue
            self.demand[r] = demand
            self.partition[r] = p


__all__ = ["PLATFORM_EXCLUSION_REASONS", "PartitionRule", "Requests", "make_demand"]
