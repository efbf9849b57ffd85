"""The per-collection reduction: frames of events and usage -> collection records.

A *collection record* is a plain dict describing one collection (a job or an alloc
set) with everything the trace says about it: its events, the times of its first
SUBMIT and SCHEDULE and of its last terminal event, its attributes (the last
non-null value of each), and its instances, each with its own events, placement,
resource request and aggregated usage. Records depend only on the rows of their
own collection, so any partition of the rows by collection id (a Dask shuffle)
gives the same records as reducing everything at once: that is what makes the Dask
path equal to the in-process reader.

Ties between events with the same time are broken by the lifecycle order of their
types, then by (shard, line), never by the
order in which rows arrive.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np

from .schema import (
    NULL_INT,
    SCHEDULE,
    SUBMIT,
    TERMINAL_EVENTS,
    TIME_AFTER_TRACE,
    TIME_BEFORE_TRACE,
    US,
)

Frame = Mapping[str, np.ndarray]

#: Collection attributes kept as "last non-null value" (frame column -> record key).
COLLECTION_ATTRIBUTES: tuple[str, ...] = (
    "collection_type",
    "scheduling_class",
    "priority",
    "alloc_collection_id",
    "user",
    "collection_name",
    "collection_logical_name",
    "parent_collection_id",
    "start_after_collection_ids",
    "max_per_machine",
    "max_per_switch",
    "vertical_scaling",
    "scheduler",
)
#: Instance attributes kept as "last non-null value".
INSTANCE_ATTRIBUTES: tuple[str, ...] = (
    "collection_type",
    "priority",
    "scheduling_class",
    "alloc_collection_id",
    "alloc_instance_index",
    "cpus",
    "memory",
    "constraint",
)
#: Totals of a collection without instances.
EMPTY_TOTALS: dict[str, Any] = {
    "instances": 0,
    "cpus_known": 0,
    "cpus": 0.0,
    "memory_known": 0,
    "memory": 0.0,
    "scheduled_cpus_known": 0,
    "scheduled_cpus": 0.0,
    "usage_instances": 0,
    "usage_windows": 0,
    "cpu_seconds": 0.0,
    "memory_mean": 0.0,
    "max_memory": None,
}
_TERMINAL = np.array(sorted(TERMINAL_EVENTS), dtype=np.int64)


def _int_list(arr: np.ndarray) -> list[Any]:
    """Values as Python ints, ``None`` for nulls."""
    values = arr.tolist()
    if (arr == NULL_INT).any():
        return [None if v == NULL_INT else v for v in values]
    return values


def _float_list(arr: np.ndarray) -> list[Any]:
    values = arr.tolist()
    if np.isnan(arr).any():
        return [None if v != v else v for v in values]
    return values


def _valid(arr: np.ndarray) -> np.ndarray:
    if arr.dtype == np.int64:
        return arr != NULL_INT
    if arr.dtype == np.float64:
        return ~np.isnan(arr)
    return _truthy(arr).astype(bool)


#: ``bool(v)`` element-wise on object arrays: None, "" and [] are not values.
_truthy = np.frompyfunc(bool, 1, 1)


def _record_maker(keys: list[str]) -> Any:
    """A function building a dict with ``keys`` from positional values (a dict
    display is much faster than ``dict(zip(...))`` for millions of records)."""
    body = ", ".join(f"{key!r}: v{i}" for i, key in enumerate(keys))
    args = ", ".join(f"v{i}" for i in range(len(keys)))
    return eval(f"lambda {args}: {{{body}}}")  # keys are our own column names


def _groups(keys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Start and end positions of runs of equal keys (rows already sorted)."""
    n = len(keys[0])
    change = np.zeros(max(n - 1, 0), dtype=bool)
    for key in keys:
        change |= key[1:] != key[:-1]
    starts = np.concatenate(([0], np.nonzero(change)[0] + 1)).astype(np.int64)
    ends = np.concatenate((starts[1:], [n])).astype(np.int64)
    return starts, ends


def _last_valid_pos(mask: np.ndarray, starts: np.ndarray) -> np.ndarray:
    pos = np.where(mask, np.arange(len(mask)), -1)
    return np.maximum.reduceat(pos, starts)


def _first_pos(mask: np.ndarray, starts: np.ndarray) -> np.ndarray:
    n = len(mask)
    pos = np.where(mask, np.arange(n), n)
    return np.minimum.reduceat(pos, starts)


#: Order of event types that share a timestamp (notably 0, "before the trace"):
#: the lifecycle order SUBMIT, QUEUE, ENABLE, UPDATE_PENDING, SCHEDULE,
#: UPDATE_RUNNING, then the terminal events.
_LIFECYCLE_RANK = np.array([0, 1, 2, 4, 6, 6, 6, 6, 6, 3, 5, 7], dtype=np.int64)


def _lifecycle_rank(kind: np.ndarray) -> np.ndarray:
    index = np.where((kind >= 0) & (kind <= 10), kind, 11)
    return _LIFECYCLE_RANK[index]


def _sorted(frame: Frame, keys: tuple[str, ...]) -> dict[str, np.ndarray]:
    columns = [frame[k] if k != "_rank" else _lifecycle_rank(frame["type"]) for k in keys]
    order = np.lexsort(tuple(reversed(columns)))
    return {name: col[order] for name, col in frame.items()}


def _merge_pairs(
    a_cid: np.ndarray, a_idx: np.ndarray, b_cid: np.ndarray, b_idx: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Union of two sets of unique (collection, index) keys, sorted, with the position
    of each key in ``a`` and in ``b`` (-1 where absent)."""
    n_a = len(a_cid)
    cid = np.concatenate((a_cid, b_cid))
    idx = np.concatenate((a_idx, b_idx))
    src = np.arange(len(cid))
    order = np.lexsort((idx, cid))
    cid, idx, src = cid[order], idx[order], src[order]
    if not len(cid):
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty, empty
    new = np.concatenate(([True], (cid[1:] != cid[:-1]) | (idx[1:] != idx[:-1])))
    gid = np.cumsum(new) - 1
    count = int(gid[-1]) + 1
    a_of = np.full(count, -1, dtype=np.int64)
    b_of = np.full(count, -1, dtype=np.int64)
    in_a = src < n_a
    a_of[gid[in_a]] = src[in_a]
    b_of[gid[~in_a]] = src[~in_a] - n_a
    return cid[new], idx[new], a_of, b_of


# --------------------------------------------------------------------------- usage


def reduce_usage(usage: Frame) -> dict[str, np.ndarray]:
    """Aggregate instance_usage rows per instance.

    Returns columns ``collection_id``, ``instance_index``, ``windows`` (rows),
    ``seconds`` (measured time), ``cpu_seconds`` (NCU-seconds: mean CPU x window),
    ``memory_seconds`` (normalized memory x window), ``max_cpus`` and
    ``max_memory`` (largest maxima). Windows with a special or missing end point
    count as rows but add no time.
    """
    n = len(usage["_line"])
    if n == 0:
        empty_i = np.empty(0, dtype=np.int64)
        empty_f = np.empty(0)
        return {
            "collection_id": empty_i,
            "instance_index": empty_i,
            "windows": empty_i,
            "seconds": empty_f,
            "cpu_seconds": empty_f,
            "memory_seconds": empty_f,
            "max_cpus": empty_f,
            "max_memory": empty_f,
        }
    rows = _sorted(usage, ("collection_id", "instance_index", "start_time", "_shard", "_line"))
    starts, _ = _groups([rows["collection_id"], rows["instance_index"]])
    start, end = rows["start_time"], rows["end_time"]
    real = (
        (start != NULL_INT)
        & (end != NULL_INT)
        & (start != TIME_BEFORE_TRACE)
        & (end != TIME_AFTER_TRACE)
        & (end >= start)
    )
    micros = np.where(real, end - np.where(real, start, 0), 0)
    seconds = micros / US
    cpu = np.nan_to_num(rows["avg_cpus"]) * seconds
    mem = np.nan_to_num(rows["avg_memory"]) * seconds
    return {
        "collection_id": rows["collection_id"][starts],
        "instance_index": rows["instance_index"][starts],
        "windows": np.diff(np.concatenate((starts, [n]))),
        "seconds": np.add.reduceat(micros, starts) / US,
        "cpu_seconds": np.add.reduceat(cpu, starts),
        "memory_seconds": np.add.reduceat(mem, starts),
        "max_cpus": np.fmax.reduceat(rows["max_cpus"], starts),
        "max_memory": np.fmax.reduceat(rows["max_memory"], starts),
    }


# --------------------------------------------------------------------------- instances


def _instance_groups(events: Frame) -> dict[str, Any]:
    """Per-instance reductions of instance_events, vectorised."""
    rows = _sorted(events, ("collection_id", "instance_index", "time", "_rank", "_shard", "_line"))
    starts, ends = _groups([rows["collection_id"], rows["instance_index"]])
    kind = rows["type"]
    out: dict[str, Any] = {
        "rows": rows,
        "starts": starts,
        "ends": ends,
        "collection_id": rows["collection_id"][starts],
        "instance_index": rows["instance_index"][starts],
        "first_schedule": _first_pos(kind == SCHEDULE, starts),
        "first_submit": _first_pos(kind == SUBMIT, starts),
        "last_terminal": _last_valid_pos(np.isin(kind, _TERMINAL), starts),
        "last_machine": _last_valid_pos(
            (rows["machine_id"] != NULL_INT) & (rows["machine_id"] != 0), starts
        ),
    }
    for name in INSTANCE_ATTRIBUTES:
        out["last_" + name] = _last_valid_pos(_valid(rows[name]), starts)
    return out


def _take(values: list[Any], positions: np.ndarray) -> list[Any]:
    """``values[p]`` for each position, ``None`` where the position is -1."""
    return [values[p] if p >= 0 else None for p in positions.tolist()]


def _per_union(group_pos: np.ndarray, a_of: np.ndarray) -> np.ndarray:
    """Row positions of a per-instance-group quantity, for each union instance."""
    return np.where(a_of >= 0, group_pos[np.maximum(a_of, 0)], -1)


def _instance_records(
    groups: dict[str, Any] | None,
    usage: Mapping[str, np.ndarray],
    a_of: np.ndarray,
    b_of: np.ndarray,
    uidx: np.ndarray,
) -> tuple[list[dict[str, Any]], dict[str, np.ndarray]]:
    """One dict per instance (union of instances with events and with usage), built
    from whole columns rather than instance by instance, and the numeric columns the
    collection totals need."""
    count = len(uidx)
    columns: dict[str, list[Any]] = {"instance_index": uidx.tolist()}
    if groups is not None:
        rows = groups["rows"]
        n = len(rows["time"])
        time_l = rows["time"].tolist()
        type_l = rows["type"].tolist()
        machine_l = _int_list(rows["machine_id"])
        all_events = list(
            zip(time_l, type_l, machine_l, _int_list(rows["missing_type"]), strict=True)
        )
        safe_a = np.maximum(a_of, 0)
        starts = np.where(a_of >= 0, groups["starts"][safe_a], 0).tolist()
        ends = np.where(a_of >= 0, groups["ends"][safe_a], 0).tolist()
        columns["events"] = [all_events[s:e] for s, e in zip(starts, ends, strict=True)]
        first_submit = groups["first_submit"].copy()
        first_submit[first_submit >= n] = -1
        first_sched = groups["first_schedule"].copy()
        first_sched[first_sched >= n] = -1
        columns["submit_raw"] = _take(time_l, _per_union(first_submit, a_of))
        columns["start_raw"] = _take(time_l, _per_union(first_sched, a_of))
        last_term = _per_union(groups["last_terminal"], a_of)
        columns["end_raw"] = _take(time_l, last_term)
        columns["end_type"] = _take(type_l, last_term)
        columns["machine_id"] = _take(machine_l, _per_union(groups["last_machine"], a_of))
        cpu_pos = _per_union(groups["last_cpus"], a_of)
        mem_pos = _per_union(groups["last_memory"], a_of)
        cpus_arr = np.where(cpu_pos >= 0, rows["cpus"][np.maximum(cpu_pos, 0)], np.nan)
        memory_arr = np.where(mem_pos >= 0, rows["memory"][np.maximum(mem_pos, 0)], np.nan)
        scheduled_arr = _per_union(first_sched, a_of) >= 0
        for name in INSTANCE_ATTRIBUTES:
            col = rows[name]
            values = (
                _int_list(col)
                if col.dtype == np.int64
                else _float_list(col)
                if col.dtype == np.float64
                else col.tolist()
            )
            columns[name] = _take(values, _per_union(groups["last_" + name], a_of))
    else:
        for name in ("events",):
            columns[name] = [[] for _ in range(count)]
        for name in (
            "submit_raw",
            "start_raw",
            "end_raw",
            "end_type",
            "machine_id",
            *INSTANCE_ATTRIBUTES,
        ):
            columns[name] = [None] * count
        cpus_arr = np.full(count, np.nan)
        memory_arr = np.full(count, np.nan)
        scheduled_arr = np.zeros(count, dtype=bool)
    has_usage = (b_of >= 0).tolist()
    safe_b = np.maximum(b_of, 0)
    usage_cols = {
        k: (usage[k][safe_b].tolist() if len(usage[k]) else [0] * count)
        for k in ("windows", "seconds", "cpu_seconds", "memory_seconds", "max_cpus", "max_memory")
    }
    columns["usage"] = [
        {
            "windows": w,
            "seconds": sec,
            "cpu_seconds": cs,
            "memory_seconds": ms,
            "max_cpus": None if mc != mc else mc,
            "max_memory": None if mm != mm else mm,
        }
        if has
        else None
        for has, w, sec, cs, ms, mc, mm in zip(
            has_usage,
            usage_cols["windows"],
            usage_cols["seconds"],
            usage_cols["cpu_seconds"],
            usage_cols["memory_seconds"],
            usage_cols["max_cpus"],
            usage_cols["max_memory"],
            strict=True,
        )
    ]
    make = _record_maker(list(columns))
    records = list(itertools.starmap(make, zip(*columns.values(), strict=True)))
    numbers = {
        "cpus": cpus_arr,
        "memory": memory_arr,
        "scheduled": scheduled_arr,
        "has_usage": b_of >= 0,
        **{
            k: (usage[k][safe_b] if len(usage[k]) else np.zeros(count))
            for k in ("windows", "seconds", "cpu_seconds", "memory_seconds", "max_memory")
        },
    }
    return records, numbers


def _collection_totals(
    ucid: np.ndarray, numbers: Mapping[str, np.ndarray]
) -> dict[int, dict[str, Any]]:
    """Per-collection sums over instances, vectorised: requested and scheduled CPUs
    and memory (with counts of known values) and usage totals."""
    if not len(ucid):
        return {}
    cpus, memory, scheduled = numbers["cpus"], numbers["memory"], numbers["scheduled"]
    has_usage = numbers["has_usage"]
    windows = np.where(has_usage, numbers["windows"], 0).astype(np.int64)
    cpu_seconds = np.where(has_usage, numbers["cpu_seconds"], 0.0)
    seconds = np.where(has_usage, numbers["seconds"], 0.0)
    mem_seconds = np.where(has_usage, numbers["memory_seconds"], 0.0)
    max_memory = np.where(has_usage, numbers["max_memory"], np.nan)
    mean_memory = np.divide(mem_seconds, seconds, out=np.zeros_like(seconds), where=seconds > 0)
    starts, _ = _groups([ucid])
    known_cpu = ~np.isnan(cpus)
    known_mem = ~np.isnan(memory)
    sched_cpu = known_cpu & scheduled
    sums = {
        "instances": np.diff(np.concatenate((starts, [len(ucid)]))),
        "cpus_known": np.add.reduceat(known_cpu.astype(np.int64), starts),
        "cpus": np.add.reduceat(np.where(known_cpu, cpus, 0.0), starts),
        "memory_known": np.add.reduceat(known_mem.astype(np.int64), starts),
        "memory": np.add.reduceat(np.where(known_mem, memory, 0.0), starts),
        "scheduled_cpus_known": np.add.reduceat(sched_cpu.astype(np.int64), starts),
        "scheduled_cpus": np.add.reduceat(np.where(sched_cpu, cpus, 0.0), starts),
        "usage_instances": np.add.reduceat(has_usage.astype(np.int64), starts),
        "usage_windows": np.add.reduceat(windows, starts),
        "cpu_seconds": np.add.reduceat(cpu_seconds, starts),
        "memory_mean": np.add.reduceat(mean_memory, starts),
        "max_memory": np.fmax.reduceat(max_memory, starts),
    }
    lists = {k: v.tolist() for k, v in sums.items()}
    make = _record_maker(list(lists))
    out = {}
    for cid, values in zip(ucid[starts].tolist(), zip(*lists.values(), strict=True), strict=True):
        totals = make(*values)
        if totals["max_memory"] != totals["max_memory"]:
            totals["max_memory"] = None
        out[cid] = totals
    return out


def _none_if_nan(value: float) -> float | None:
    return None if value != value else value


# --------------------------------------------------------------------------- collections


def _collection_parts(events: Frame) -> dict[int, dict[str, Any]]:
    """Per-collection reduction of collection_events, vectorised like the instances:
    first SUBMIT, first SCHEDULE, last terminal event, last non-null attributes."""
    if not len(events["_line"]):
        return {}
    rows = _sorted(events, ("collection_id", "time", "_rank", "_shard", "_line"))
    starts, ends = _groups([rows["collection_id"]])
    n = len(rows["time"])
    kind = rows["type"]
    time_l = rows["time"].tolist()
    type_l = kind.tolist()
    all_events = list(zip(time_l, type_l, _int_list(rows["missing_type"]), strict=True))
    columns: dict[str, list[Any]] = {
        "collection_id": rows["collection_id"][starts].tolist(),
        "events": [all_events[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)],
    }
    first_submit = _first_pos(kind == SUBMIT, starts)
    first_submit[first_submit >= n] = -1
    first_sched = _first_pos(kind == SCHEDULE, starts)
    first_sched[first_sched >= n] = -1
    last_term = _last_valid_pos(np.isin(kind, _TERMINAL), starts)
    columns["submit"] = _take(time_l, first_submit)
    columns["schedule"] = _take(time_l, first_sched)
    columns["end"] = _take(time_l, last_term)
    columns["end_type"] = _take(type_l, last_term)
    for name in COLLECTION_ATTRIBUTES:
        col = rows[name]
        values = _int_list(col) if col.dtype == np.int64 else col.tolist()
        columns[name] = _take(values, _last_valid_pos(_valid(col), starts))
    columns["start_after_collection_ids"] = [
        v if v is not None else [] for v in columns["start_after_collection_ids"]
    ]
    make = _record_maker(list(columns))
    out = {}
    for values in zip(*columns.values(), strict=True):
        record = make(*values)
        out[record["collection_id"]] = record
    return out


def reduce_collections(
    collection_events: Frame, instance_events: Frame, instance_usage: Frame
) -> list[dict[str, Any]]:
    """Collection records, sorted by collection id, from the rows of whole collections.

    Every collection seen in any of the three tables gets a record;
    ``has_collection_events`` is false for one known only from its instances.
    """
    collections = _collection_parts(collection_events)
    usage = reduce_usage(instance_usage)
    groups = _instance_groups(instance_events) if len(instance_events["_line"]) else None
    if groups is not None:
        a_cid, a_idx = groups["collection_id"], groups["instance_index"]
    else:
        a_cid = a_idx = np.empty(0, dtype=np.int64)
    ucid, uidx, a_of, b_of = _merge_pairs(
        a_cid, a_idx, usage["collection_id"], usage["instance_index"]
    )
    instances, numbers = _instance_records(groups, usage, a_of, b_of, uidx)
    totals = _collection_totals(ucid, numbers)
    by_collection: dict[int, list[dict[str, Any]]] = {}
    if len(ucid):
        starts, ends = _groups([ucid])
        for s, e, cid in zip(starts.tolist(), ends.tolist(), ucid[starts].tolist(), strict=True):
            by_collection[cid] = instances[s:e]
    records = []
    for cid in sorted(set(collections) | set(by_collection)):
        record = collections.get(cid)
        if record is None:
            record = {
                "collection_id": cid,
                "events": [],
                "submit": None,
                "schedule": None,
                "end": None,
                "end_type": None,
                **dict.fromkeys(COLLECTION_ATTRIBUTES),
                "start_after_collection_ids": [],
            }
            record["has_collection_events"] = False
        else:
            record["has_collection_events"] = True
        insts = by_collection.get(cid, [])
        record["instances"] = insts
        record["totals"] = totals.get(cid, EMPTY_TOTALS)
        if record["collection_type"] is None:
            types = {i["collection_type"] for i in insts} - {None}
            record["collection_type"] = min(types) if types else None
        records.append(record)
    return records
