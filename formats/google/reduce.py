"""The per-collection reduction: frames of events and usage -> collection records.

A *collection record* is a plain dict describing one collection (a job or an alloc
set) with everything the trace says about it: its events, the times of its first
SUBMIT and SCHEDULE and of its last terminal event, its attributes (the last
non-null value of each), and its instances, each with its own events, placement,
resource request and aggregated usage. Records depend only on the rows of their
own collection, so any partition of the rows by collection id (a Dask shuffle)
gives the same records as reducing everything at once: that is what makes the Dask
path equal to the in-process reader.

Ties between events with the same time are broken by (shard, line), never by the
order in which rows arrive.
"""

from __future__ import annotations

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
        return [None if v != v else v for v in values]  # noqa: PLR0124
    return values


def _valid(arr: np.ndarray) -> np.ndarray:
    if arr.dtype == np.int64:
        return arr != NULL_INT
    if arr.dtype == np.float64:
        return ~np.isnan(arr)
    return np.fromiter((v is not None and v != [] for v in arr), dtype=bool, count=len(arr))


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


def _sorted(frame: Frame, keys: tuple[str, ...]) -> dict[str, np.ndarray]:
    order = np.lexsort(tuple(frame[k] for k in reversed(keys)))
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
    seconds = np.where(real, (end - np.where(real, start, 0)) / US, 0.0)
    cpu = np.nan_to_num(rows["avg_cpus"]) * seconds
    mem = np.nan_to_num(rows["avg_memory"]) * seconds
    return {
        "collection_id": rows["collection_id"][starts],
        "instance_index": rows["instance_index"][starts],
        "windows": np.diff(np.concatenate((starts, [n]))),
        "seconds": np.add.reduceat(seconds, starts),
        "cpu_seconds": np.add.reduceat(cpu, starts),
        "memory_seconds": np.add.reduceat(mem, starts),
        "max_cpus": np.fmax.reduceat(rows["max_cpus"], starts),
        "max_memory": np.fmax.reduceat(rows["max_memory"], starts),
    }


# --------------------------------------------------------------------------- instances


def _instance_groups(events: Frame) -> dict[str, Any]:
    """Per-instance reductions of instance_events, vectorised."""
    rows = _sorted(events, ("collection_id", "instance_index", "time", "_shard", "_line"))
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


def _instance_records(
    groups: dict[str, Any] | None,
    usage: Mapping[str, np.ndarray],
    ucid: np.ndarray,
    a_of: np.ndarray,
    b_of: np.ndarray,
    uidx: np.ndarray,
) -> list[dict[str, Any]]:
    """One dict per instance (union of instances with events and with usage)."""
    records: list[dict[str, Any]] = []
    if groups is not None:
        rows = groups["rows"]
        n = len(rows["time"])
        time_l = rows["time"].tolist()
        type_l = rows["type"].tolist()
        machine_l = _int_list(rows["machine_id"])
        missing_l = _int_list(rows["missing_type"])
        attr_values = {
            name: (
                _int_list(rows[name])
                if rows[name].dtype == np.int64
                else _float_list(rows[name])
                if rows[name].dtype == np.float64
                else rows[name].tolist()
            )
            for name in INSTANCE_ATTRIBUTES
        }
        starts_l = groups["starts"].tolist()
        ends_l = groups["ends"].tolist()
        first_sched = groups["first_schedule"].tolist()
        first_submit = groups["first_submit"].tolist()
        last_term = groups["last_terminal"].tolist()
        last_machine = groups["last_machine"].tolist()
        last_attr = {name: groups["last_" + name].tolist() for name in INSTANCE_ATTRIBUTES}
    usage_cols = {k: v.tolist() for k, v in usage.items()}
    for u in range(len(ucid)):
        a = int(a_of[u])
        record: dict[str, Any] = {"index": int(uidx[u])}
        if a >= 0:
            s, e = starts_l[a], ends_l[a]
            record["events"] = list(
                zip(time_l[s:e], type_l[s:e], machine_l[s:e], missing_l[s:e], strict=True)
            )
            p = first_submit[a]
            record["submit"] = time_l[p] if p < n else None
            p = first_sched[a]
            record["first_schedule"] = time_l[p] if p < n else None
            p = last_term[a]
            record["end"] = time_l[p] if p >= 0 else None
            record["end_type"] = type_l[p] if p >= 0 else None
            p = last_machine[a]
            record["machine_id"] = machine_l[p] if p >= 0 else None
            for name in INSTANCE_ATTRIBUTES:
                p = last_attr[name][a]
                record[name] = attr_values[name][p] if p >= 0 else None
        else:
            record.update(
                events=[], submit=None, first_schedule=None, end=None, end_type=None,
                machine_id=None,
            )
            record.update(dict.fromkeys(INSTANCE_ATTRIBUTES))
        b = int(b_of[u])
        if b >= 0:
            record["usage"] = {
                "windows": usage_cols["windows"][b],
                "seconds": usage_cols["seconds"][b],
                "cpu_seconds": usage_cols["cpu_seconds"][b],
                "memory_seconds": usage_cols["memory_seconds"][b],
                "max_cpus": _none_if_nan(usage_cols["max_cpus"][b]),
                "max_memory": _none_if_nan(usage_cols["max_memory"][b]),
            }
        else:
            record["usage"] = None
        records.append(record)
    return records


def _none_if_nan(value: float) -> float | None:
    return None if value != value else value  # noqa: PLR0124


# --------------------------------------------------------------------------- collections


def _collection_parts(events: Frame) -> dict[int, dict[str, Any]]:
    """Per-collection reduction of collection_events (a Python loop: few rows)."""
    out: dict[int, dict[str, Any]] = {}
    if not len(events["_line"]):
        return out
    rows = _sorted(events, ("collection_id", "time", "_shard", "_line"))
    starts, ends = _groups([rows["collection_id"]])
    cid_l = rows["collection_id"].tolist()
    time_l = rows["time"].tolist()
    type_l = rows["type"].tolist()
    missing_l = _int_list(rows["missing_type"])
    attrs = {}
    for name in COLLECTION_ATTRIBUTES:
        col = rows[name]
        attrs[name] = _int_list(col) if col.dtype == np.int64 else col.tolist()
    terminal = TERMINAL_EVENTS
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        record: dict[str, Any] = {
            "collection_id": cid_l[s],
            "events": list(zip(time_l[s:e], type_l[s:e], missing_l[s:e], strict=True)),
            "submit": None,
            "schedule": None,
            "end": None,
            "end_type": None,
        }
        for i in range(s, e):
            kind = type_l[i]
            if kind == SUBMIT and record["submit"] is None:
                record["submit"] = time_l[i]
            elif kind == SCHEDULE and record["schedule"] is None:
                record["schedule"] = time_l[i]
            elif kind in terminal:
                record["end"] = time_l[i]
                record["end_type"] = kind
        for name in COLLECTION_ATTRIBUTES:
            values = attrs[name]
            value = None
            for i in range(e - 1, s - 1, -1):
                v = values[i]
                if v is not None and v != []:
                    value = v
                    break
            record[name] = value
        if record["start_after_collection_ids"] is None:
            record["start_after_collection_ids"] = []
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
    instances = _instance_records(groups, usage, ucid, a_of, b_of, uidx)
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
        if record["collection_type"] is None:
            types = {i["collection_type"] for i in insts} - {None}
            record["collection_type"] = min(types) if types else None
        records.append(record)
    return records
