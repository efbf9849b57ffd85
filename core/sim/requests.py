"""Each job's request on a multi-resource machine: its :class:`Demand` vector and
its partition, read from what the workload carries (decisions, also in
docs/platform.md):

* **cores**: the job's size as without a platform (requested processors, else
  allocated);
* **nodes**: ``Job.nodes`` or the extra ``request.nodes`` when a reader knows the
  node count; otherwise 0 (flexible: cores from any nodes);
* **memory**: SWF's requested memory (KB per processor) when known, else the extra
  ``request.memory`` (bytes per node, divided over the node's cores), else none
  (counted as unknown, never invented);
* **GPUs** and consumables: the extras ``request.gpus`` and ``request.NAME`` (job
  totals), else 0;
* **partition**: the extra ``request.partition`` (a name); else the header's name of
  the job's SWF partition number when the platform has that partition; else the
  partition whose ``queues`` list the job's queue (its header name, or the number
  written as text), or the partition named like the queue; else the platform's
  first partition (the default, as in Slurm), counted.

Jobs that cannot run are excluded with a reason: ``unknown_partition`` (a
partition or queue name the platform does not have), ``over_partition_limit``
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


def _rich(workload: Workload, cols: JobColumns) -> tuple[list[int], list[dict[str, Any]]]:
    """Node counts and extras per row (0 / {} where absent)."""
    n = len(cols)
    if workload.has_job_objects():
        jobs = workload.jobs
        nodes = [j.nodes or 0 for j in jobs]
        extras = [j.extras for j in jobs]
    else:
        nodes = [0] * n
        extras = cols.extras if cols.extras is not None else [{}] * n
    return nodes, extras


def _amount(extra: dict[str, Any], key: str, job: float) -> float:
    """A request extra as a non-negative number; ``nan`` when absent; a
    :class:`~schedlab.errors.SimulationError` naming the job and key otherwise."""
    value = extra.get(key)
    if value is None:
        return math.nan
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if not v >= 0 or v == math.inf:
        number = int(job) if job == job else "?"
        raise SimulationError(f"job {number}: extra {key}={value!r} is not a non-negative number")
    return v


class Requests:
    """The demands and partitions of a workload's rows on one machine."""

    def __init__(
        self, workload: Workload, cols: JobColumns, machine: NodeMachine, size: np.ndarray
    ) -> None:
        self.machine = machine
        n = len(cols)
        platform = machine.platform
        parts = machine.partitions
        by_name = {p.name: p.index for p in parts}
        queue_names = workload.header.names("Queue")
        partition_names = workload.header.names("Partition")
        nodes_of, extras = _rich(workload, cols)
        req_mem = cols["requested_memory"]
        req_time = cols["requested_time"]
        queue = cols["queue_number"]
        part_no = cols["partition_number"]
        job_number = cols["job_number"]
        dims = machine.dims
        cache: dict[tuple[Any, ...], Demand] = {}
        fits: dict[tuple[int, int], bool] = {}
        #: Per row: the demand (``None`` for excluded rows) and partition index.
        self.demand: list[Demand | None] = [None] * n
        self.partition = np.full(n, -1, dtype=np.int64)
        self.reasons = {r: np.zeros(n, dtype=bool) for r in PLATFORM_EXCLUSION_REASONS}
        #: Rows placed in the default partition, and rows whose memory is unknown.
        self.defaulted_mask = np.zeros(n, dtype=bool)
        self.memory_unknown_mask = np.zeros(n, dtype=bool)
        for r in range(n):
            cores = size[r]
            if not cores > 0:
                continue  # excluded before (no size)
            extra = extras[r] or {}
            # partition
            p = -1
            named = extra.get("request.partition")
            if named is not None:
                # unknown: excluded when the platform has several partitions (as
                # for queues), else the only partition
                p = by_name.get(str(named), -2 if len(parts) > 1 else -1)
            elif part_no[r] == part_no[r] and int(part_no[r]) in partition_names:
                p = by_name.get(partition_names[int(part_no[r])], -1)
            if p == -1 and queue[r] == queue[r]:
                q = int(queue[r])
                qname = queue_names.get(q, str(q))
                hit = platform.partition_of_queue(qname)
                if hit is None and str(q) != qname:
                    hit = platform.partition_of_queue(str(q))
                if hit is not None:
                    p = by_name[hit.name]
                elif qname in by_name:
                    p = by_name[qname]
                elif queue_names.get(q) is not None and len(parts) > 1:
                    p = -2  # a named queue the platform does not map
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
            given = _amount(extra, "request.nodes", number)
            nodes = int(given) if given == given else int(nodes_of[r] or 0)
            mpc = 0
            if req_mem[r] > 0:
                mpc = round(req_mem[r] * 1024)
            else:
                per_node = _amount(extra, "request.memory", number)
                if per_node > 0:
                    share = nodes if nodes else 1
                    mpc = math.ceil(per_node * share / c)
                else:
                    self.memory_unknown_mask[r] = True
            total = [c, c * mpc]
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
                vec = np.array(total, dtype=np.int64)
                chunk = None
                if nodes:
                    chunk = -(-vec // nodes)
                    chunk[MEMORY] = chunk[CORES] * mpc
                    if chunk[GPUS] < 0:
                        chunk[GPUS] = 0
                demand = Demand(vec, mpc, nodes, chunk, part.max_nodes or 0)
                cache[key] = demand
            fk = (id(demand), p)
            ok = fits.get(fk)
            if ok is None:
                ok = fits[fk] = machine.fits_empty(demand, p)
            if not ok:
                self.reasons["never_fits"][r] = True
                continue
            self.demand[r] = demand
            self.partition[r] = p


__all__ = ["PLATFORM_EXCLUSION_REASONS", "Requests"]
