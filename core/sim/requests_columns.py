"""The requests of :mod:`schedlab.sim.requests` decided column by column.

The rules are those of that module's docstring, applied with numpy to every row
at once: a row's partition is found once per distinct combination of named
partition, SWF partition number and queue number, and its :class:`Demand` once
per distinct request (as the row-by-row reading shares them: one object per
distinct request), each checked against the idle partition once. Only the rows
that carry extras are read one at a time, for their ``request.*`` values.

:func:`fill_by_columns` declines (returns ``False``) whatever is out of the
ordinary, for :meth:`Requests.fill_by_rows <schedlab.sim.requests.Requests.fill_by_rows>`
to read row by row with the same results: infinite partition, queue or memory
numbers, node counts that are negative, not plain ints or beyond int64 (or a
``request.nodes`` that is not a whole number), a memory request whose
share per core overflows, and a bad ``request.*`` value (whose error the
row-by-row reading reports, naming the job and the key).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import SimulationError
from ..model import JobColumns, Workload
from .grouping import group_rows
from .requests import _HUGE, PartitionRule, Requests, _amount, _node_count, _rich, make_demand


def _partitions(
    rule: PartitionRule, named: list[Any], part_no: np.ndarray, queue: np.ndarray
) -> np.ndarray:
    """:meth:`PartitionRule.index` of each row, computed once per distinct
    (named, partition number, queue number)."""
    names = sorted({str(v) for v in named if v is not None})
    named_code = np.full(len(named), -1, dtype=np.int64)
    if names:
        code = {name: i for i, name in enumerate(names)}
        named_code[:] = [-1 if v is None else code[str(v)] for v in named]
    parts, part_inv = np.unique(part_no, return_inverse=True)
    queues, queue_inv = np.unique(queue, return_inverse=True)
    combined = (
        (named_code + 1) * (len(parts) * len(queues))
        + part_inv.reshape(-1) * len(queues)
        + queue_inv.reshape(-1)
    )
    distinct, inverse = np.unique(combined, return_inverse=True)
    found = []
    for value in distinct.tolist():
        n_code, rest = divmod(value, len(parts) * len(queues))
        p_code, q_code = divmod(rest, len(queues))
        found.append(
            rule.index(
                None if n_code == 0 else names[n_code - 1],
                float(parts[p_code]),
                float(queues[q_code]),
            )
        )
    return np.array(found, dtype=np.int64)[inverse.reshape(-1)]


def fill_by_columns(req: Requests, workload: Workload, cols: JobColumns, size: np.ndarray) -> bool:
    """Decide every row of ``req`` (freshly reset) as
    :meth:`Requests.fill_by_rows <schedlab.sim.requests.Requests.fill_by_rows>`
    would; ``False`` (``req`` partly written) for rows out of the ordinary (see
    the module docstring)."""
    machine = req.machine
    parts = machine.partitions
    dims = machine.dims
    with np.errstate(invalid="ignore"):
        rows = np.flatnonzero(size > 0)
    if len(rows) == 0:
        return True
    part_no = cols["partition_number"][rows]
    queue = cols["queue_number"][rows]
    req_mem = cols["requested_memory"][rows]
    if np.isinf(part_no).any() or np.isinf(queue).any() or (req_mem == np.inf).any():
        return False
    row_list = rows.tolist()
    if workload.has_job_objects() or cols.extras is not None:
        nodes_of, extras = _rich(workload, cols)
        if any(type(v) is not int for v in nodes_of):
            # A node count given as anything but an int (2.0, 1.5, True ...): read
            # row by row, which takes a whole number and reports the others.
            return False
        try:
            nodes_known = np.array(nodes_of, dtype=np.int64)[rows]
        except (OverflowError, TypeError, ValueError):
            return False
        if (nodes_known < 0).any():
            return False
        # The rows with extras, in row order (their request.* values are read below).
        rich = [i for i, r in enumerate(row_list) if extras[r]]
    else:
        extras, nodes_known, rich = [], np.zeros(len(rows), dtype=np.int64), []
    named: list[Any] = [None] * len(rows)
    for i in rich:
        named[i] = extras[row_list[i]].get("request.partition")

    # partition
    p = _partitions(PartitionRule(workload, machine), named, part_no, queue)
    unknown = p == -2
    req.reasons["unknown_partition"][rows[unknown]] = True
    defaulted = p == -1
    if len(parts) > 1:
        req.defaulted_mask[rows[defaulted]] = True
    p[defaulted] = 0

    # request.* extras (NaN: absent), read as the row-by-row pass reads them
    given = np.full(len(rows), np.nan)
    per_node = np.full(len(rows), np.nan)
    more = np.full((len(dims) - 2, len(rows)), np.nan)
    keys = [f"request.{name}" for name in dims[2:]]
    with_memory = ~(req_mem > 0)
    try:
        for i in rich:
            if unknown[i]:
                continue
            extra = extras[row_list[i]]
            if extra.get("request.nodes") is not None:
                given[i] = _node_count(extra["request.nodes"], "extra request.nodes", np.nan)
            if with_memory[i] and extra.get("request.memory") is not None:
                per_node[i] = _amount(extra, "request.memory", np.nan)
            for k, key in enumerate(keys):
                if extra.get(key) is not None:
                    more[k, i] = _amount(extra, key, np.nan)
    except SimulationError:
        return False  # reported by the row-by-row pass, at its row

    keep = np.flatnonzero(~unknown)
    rows, p = rows[keep], p[keep]
    given, per_node, more = given[keep], per_node[keep], more[:, keep]
    req_mem, with_memory = req_mem[keep], with_memory[keep]
    cores = size[rows]
    nodes = np.where(given == given, np.floor(given), nodes_known[keep].astype(np.float64))
    # memory per core
    by_memory = ~with_memory
    mpc = np.zeros(len(rows))
    mpc[by_memory] = np.rint(req_mem[by_memory] * 1024)
    each_node = np.zeros(len(rows))  # a fixed request's memory on each node
    per_node_known = with_memory & (per_node > 0)
    req.memory_unknown_mask[rows[with_memory & ~per_node_known]] = True
    if per_node_known.any():
        # fixed: exactly M on each node; flexible: M over the cores
        fixed = per_node_known & (nodes != 0)
        flexible = per_node_known & (nodes == 0)
        each_node[fixed] = np.ceil(per_node[fixed])
        mpc[flexible] = np.ceil(per_node[flexible] / cores[flexible])
        if not np.isfinite(mpc).all():
            return False  # the row-by-row pass fails on it
    more = np.where(more == more, np.ceil(more), 0.0)

    # limits, then what can never fit
    def per_partition(values: list[Any], absent: float) -> np.ndarray:
        return np.array([absent if v is None else v for v in values], dtype=np.float64)[p]

    with np.errstate(invalid="ignore"):
        over = cols["requested_time"][rows] > per_partition([q.max_time for q in parts], np.inf)
        over |= nodes > per_partition([q.max_nodes for q in parts], np.inf)
    req.reasons["over_partition_limit"][rows[over]] = True
    huge = (mpc > _HUGE) | (cores > _HUGE) | (more > _HUGE).any(axis=0) | (each_node > _HUGE)
    huge |= nodes > per_partition([len(q.nodes) for q in parts], 0)
    mpc_int = np.where(huge, 0, mpc).astype(np.int64)
    cores_int = np.where(huge, 1, cores).astype(np.int64)
    each_int = np.where(huge, 0, each_node).astype(np.int64)
    nodes_int = np.where(huge, 1, np.maximum(nodes, 1)).astype(np.int64)
    huge |= mpc_int > _HUGE // cores_int  # cores * mpc > _HUGE
    huge |= each_int > _HUGE // nodes_int  # nodes * M > _HUGE
    memory_int = cores_int * mpc_int + nodes_int * each_int  # one of them is 0
    never = ~over & huge
    req.reasons["never_fits"][rows[never]] = True

    # one Demand per distinct request, tested once per partition it is asked in
    ok = np.flatnonzero(~over & ~huge)
    if len(ok) == 0:
        return True
    rows, p = rows[ok], p[ok]
    max_nodes = np.array([q.max_nodes or 0 for q in parts], dtype=np.int64)[p]
    request = [
        nodes[ok].astype(np.int64),
        mpc_int[ok],
        max_nodes,
        cores_int[ok],
        memory_int[ok],
        *more[:, ok].astype(np.int64),
    ]
    first, which = group_rows(request)
    distinct = np.column_stack([column[first] for column in request])
    demands = np.empty(len(distinct), dtype=object)
    for k, (n_k, mpc_k, max_k, *total) in enumerate(distinct.tolist()):
        demands[k] = make_demand(n_k, mpc_k, max_k, total)
    asked, first = np.unique(which * len(parts) + p, return_index=True)
    fits = np.zeros(len(distinct) * len(parts), dtype=bool)
    for a, j in zip(asked.tolist(), first.tolist(), strict=True):
        fits[a] = machine.fits_empty(demands[a // len(parts)], int(p[j]))
    good = fits[which * len(parts) + p]
    req.reasons["never_fits"][rows[~good]] = True
    placed = np.full(len(req.demand), None, dtype=object)
    placed[rows[good]] = demands[which[good]]
    req.demand = placed.tolist()
    req.partition[rows[good]] = p[good]
    return True


__all__ = ["fill_by_columns"]
