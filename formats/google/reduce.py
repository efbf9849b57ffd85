"""The per-collection reduction: frames of events and usage -> columnar results.

The result of :func:`reduce_collections` is a :data:`Reduced`: a ``dict`` of numpy
arrays in four groups that depend only on the rows of their own collections, so
any partition of the rows by collection id (a Dask shuffle) reduces to pieces
that :func:`concat_reduced` joins into the same thing as reducing everything at
once. That is what makes the Dask path equal to the in-process reader.

* ``c_*``, one row per collection (any order): id, first SUBMIT / SCHEDULE time and
  last terminal event of its collection events, the last non-null value of each
  attribute, instance totals (requested CPUs and memory, usage), what the job
  mapping falls back on (earliest instance start, highest instance priority,
  instance collection type, first event), ``c_ev_count`` (its collection
  events), ``c_inst_count`` (its instances) and ``c_host_count`` (its machines);
* ``e_*``: the collection events, grouped by collection (``c_ev_count`` each),
  ordered by time, lifecycle order of the type (SUBMIT, QUEUE, ENABLE,
  UPDATE_PENDING, SCHEDULE, UPDATE_RUNNING, terminal events; after the first
  time, a terminal event before a resubmission of its time), then (shard, line);
  ``c_sched_after_end`` counts the SCHEDULE events after a FINISH or KILL (and
  ``c_instances_sched_after_end`` the instances with one);
* ``h_machine``: the distinct machines (> 0) of each collection's instances' last
  placements, ascending, grouped by collection;
* ``i_*`` and ``f_*``, optional (:func:`drop_instances` removes them): one row per
  instance (grouped by collection, ascending index) with its first SUBMIT /
  SCHEDULE, last terminal event, last placement and attributes, and usage totals;
  ``f_*`` holds the instance events grouped by instance (``i_ev_count`` each);
* ``a_*``: the instance events (index, time, type, machine, missing type) of the
  alloc sets known only from their instances, grouped by collection
  (``c_alloc_ev_count`` each), as in ``f_*``; kept by :func:`drop_instances`.

Times are raw; a value that may be absent has a ``*_has`` mask beside it; integer
attributes use :data:`~.schema.NULL_INT` for "none", floats NaN.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from . import arrow_numpy
from .schema import (
    ALLOC_SET,
    FINISH,
    KILL,
    NULL_INT,
    REQUEUED_ENDS,
    RESUBMIT_EVENTS,
    SCHEDULE,
    SUBMIT,
    TERMINAL_EVENTS,
    TIME_AFTER_TRACE,
    TIME_BEFORE_TRACE,
    US,
)

Frame = Mapping[str, np.ndarray]
#: Columnar result of the reduction (see the module docstring).
Reduced = dict[str, np.ndarray]

#: Collection attributes kept as "last non-null value": integers, then objects.
COLLECTION_INT_ATTRIBUTES: tuple[str, ...] = (
    "collection_type",
    "scheduling_class",
    "priority",
    "alloc_collection_id",
    "parent_collection_id",
    "max_per_machine",
    "max_per_switch",
    "vertical_scaling",
    "scheduler",
)
COLLECTION_OBJECT_ATTRIBUTES: tuple[str, ...] = (
    "user",
    "collection_name",
    "collection_logical_name",
)
#: Instance attributes kept as "last non-null value".
INSTANCE_INT_ATTRIBUTES: tuple[str, ...] = (
    "collection_type",
    "priority",
    "scheduling_class",
    "alloc_collection_id",
    "alloc_instance_index",
)
INSTANCE_FLOAT_ATTRIBUTES: tuple[str, ...] = ("cpus", "memory")
#: Per-instance counts of usage windows (``i_<name>``, and ``c_<name>`` summed over
#: a collection's instances): exact duplicates (counted once in ``windows``), windows
#: beginning before the previous one of the instance ends, windows whose time is
#: not a real interval, and timed windows without a mean CPU or memory.
USAGE_COUNTS: tuple[str, ...] = (
    "duplicate_windows",
    "overlapping_windows",
    "time_unknown_windows",
    "average_unknown_windows",
)
#: Per-instance usage totals (``i_<name>``).
USAGE_FIELDS: tuple[str, ...] = (
    "windows",
    "seconds",
    "cpu_seconds",
    "memory_seconds",
    "max_cpus",
    "max_memory",
    *USAGE_COUNTS,
)
#: The usage columns compared (after the times) to find a window given twice.
_USAGE_VALUES = ("avg_cpus", "avg_memory", "max_cpus", "max_memory")
#: Per-collection totals over instances (``c_<name>``).
TOTAL_FIELDS: tuple[str, ...] = (
    "instances",
    "cpus_known",
    "cpus",
    "memory_known",
    "memory",
    "scheduled_cpus_known",
    "scheduled_cpus",
    "scheduled_instances",
    "usage_instances",
    "usage_windows",
    "cpu_seconds",
    "memory_mean",
    "max_memory",
    "scheduled_without_usage",
    "instances_sched_after_end",
    *USAGE_COUNTS,
)
_TERMINAL = np.array(sorted(TERMINAL_EVENTS), dtype=np.int64)
_RESUBMIT = np.array(sorted(RESUBMIT_EVENTS), dtype=np.int64)
_REQUEUED = np.array(sorted(REQUEUED_ENDS), dtype=np.int64)
#: Ends that leave a thing dead: a SCHEDULE after one is events out of order.
_DEAD_ENDS = np.array(sorted({FINISH, KILL}), dtype=np.int64)
_INT_MAX = np.iinfo(np.int64).max
_INT_MIN = np.iinfo(np.int64).min

#: Order of event types that share a timestamp (notably 0, "before the trace").
_LIFECYCLE_RANK = np.array([0, 1, 2, 4, 6, 6, 6, 6, 6, 3, 5, 7], dtype=np.int64)


def _lifecycle_rank(kind: np.ndarray) -> np.ndarray:
    index = np.where((kind >= 0) & (kind <= 10), kind, 11)
    return _LIFECYCLE_RANK[index]


def _order(frame: Frame, keys: Sequence[str]) -> np.ndarray:
    """Row order by ``keys`` (``"_rank"`` is the lifecycle rank of ``type``), then
    by (shard, line). pyarrow's multi-column sort is used when it is installed
    (three times faster than ``numpy.lexsort``, and it releases the GIL)."""
    columns = [frame[k] if k != "_rank" else _lifecycle_rank(frame["type"]) for k in keys]
    columns += [frame["_shard"], frame["_line"]]
    if len(columns[0]) > 1 and _arrow_compute() is not None:
        pa, pc = _arrow_compute()
        names = [f"k{i}" for i in range(len(columns))]
        if all(arrow_numpy.has_number_dtype(c) for c in columns):
            # through the buffers: pa.table() and to_numpy() would import pandas
            table = pa.Table.from_arrays([arrow_numpy.from_numpy(c, pa) for c in columns], names)
            order = pc.sort_indices(table, sort_keys=[(k, "ascending") for k in names])
            return arrow_numpy.to_numpy(order, 0).astype(np.int64, copy=False)
        table = pa.table(dict(zip(names, columns, strict=True)))
        order = pc.sort_indices(table, sort_keys=[(k, "ascending") for k in names])
        return order.to_numpy().astype(np.int64, copy=False)
    return np.lexsort(tuple(reversed(columns)))


def _lifecycle_order(frame: Frame, groups: Sequence[str]) -> np.ndarray:
    """Row order by ``groups``, time and lifecycle rank, then (shard, line); except
    that at a time after a group's first one, a terminal event comes before a
    SUBMIT, QUEUE or ENABLE of the same time: the thing existed before, so that is
    its resubmission after the end (an evicted task put back in the queue at
    once), not a submission the end follows. At the group's first time (notably 0,
    before the trace) the lifecycle order stays: SUBMIT, ..., terminal events."""
    order = _order(frame, (*groups, "time", "_rank"))
    n = len(order)
    if n < 2:
        return order
    kind = frame["type"][order]
    terminal = np.isin(kind, _TERMINAL)
    resubmit = np.isin(kind, _RESUBMIT)
    if not (terminal.any() and resubmit.any()):
        return order
    keys = [frame[g][order] for g in groups]
    time = frame["time"][order]
    runs = _group_starts([*keys, time])
    both = (np.add.reduceat(terminal.astype(np.int64), runs) > 0) & (
        np.add.reduceat(resubmit.astype(np.int64), runs) > 0
    )
    group_starts = _group_starts(keys)
    first_time = time[group_starts[np.searchsorted(group_starts, runs, side="right") - 1]]
    flagged = both & (time[runs] != first_time)
    if not flagged.any():
        return order
    rank = np.where(np.repeat(flagged, _counts(runs, n)) & terminal, -1, _lifecycle_rank(kind))
    resort = np.lexsort(
        (frame["_line"][order], frame["_shard"][order], rank, time, *reversed(keys))
    )
    return order[resort]


def _schedules_after_end(kind: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per group (events in order): the SCHEDULE events whose last terminal or
    resubmission event before them is a FINISH or KILL (which leave the thing
    dead: events out of order, not a new start) of a thing that had started."""
    n = len(kind)
    if not len(starts):
        return np.empty(0, dtype=np.int64)
    marks = np.isin(kind, _TERMINAL) | np.isin(kind, _RESUBMIT)
    last = np.maximum.accumulate(np.where(marks, np.arange(n), -1))
    first_row = np.repeat(starts, _counts(starts, n))
    dead = (last >= first_row) & np.isin(kind[np.maximum(last, 0)], _DEAD_ENDS)
    # ... of a thing that had started before that end (a first SCHEDULE after the
    # end is "ended before its start", counted as such)
    first_start = np.repeat(_first_pos(kind == SCHEDULE, starts), _counts(starts, n))
    again = (first_start >= 0) & (first_start < last)
    return np.add.reduceat(((kind == SCHEDULE) & dead & again).astype(np.int64), starts)


_ARROW: list[Any] = []


def _arrow_compute() -> Any:
    """``(pyarrow, pyarrow.compute)`` or ``None`` without pyarrow."""
    if not _ARROW:
        try:
            import pyarrow as pa
            import pyarrow.compute as pc

            _ARROW.append((pa, pc))
        except ImportError:
            _ARROW.append(None)
    return _ARROW[0]


def _group_starts(keys: Sequence[np.ndarray]) -> np.ndarray:
    """Start positions of runs of equal keys (rows already sorted)."""
    n = len(keys[0])
    if n == 0:
        return np.empty(0, dtype=np.int64)
    change = np.zeros(n - 1, dtype=bool)
    for key in keys:
        change |= key[1:] != key[:-1]
    return np.concatenate(([0], np.flatnonzero(change) + 1)).astype(np.int64)


def _counts(starts: np.ndarray, n: int) -> np.ndarray:
    return np.diff(np.append(starts, n)).astype(np.int64)


def _first_pos(mask: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Position of the first true row of each group, -1 if none."""
    if not len(starts):
        return np.empty(0, dtype=np.int64)
    n = len(mask)
    pos = np.minimum.reduceat(np.where(mask, np.arange(n), n), starts)
    return np.where(pos < n, pos, -1)


def _last_pos(mask: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Position of the last true row of each group, -1 if none."""
    if not len(starts):
        return np.empty(0, dtype=np.int64)
    positions = np.arange(len(mask), dtype=np.int64)
    positions[~mask] = -1
    return np.maximum.reduceat(positions, starts)


def _end_pos(terminal: np.ndarray, kind: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Position of the end of each group (events in lifecycle order): its last
    terminal event, unless it was revived after it (then it was still pending or
    running at the trace end: -1, no end): a later SUBMIT, QUEUE or ENABLE, or a
    later SCHEDULE after an EVICT, FAIL or LOST (see ``schema.REQUEUED_ENDS``)."""
    end = _last_pos(terminal, starts)
    resubmitted = _last_pos(np.isin(kind, _RESUBMIT), starts)
    scheduled = _last_pos(kind == SCHEDULE, starts)
    requeued = np.isin(kind[np.maximum(end, 0)], _REQUEUED) if len(kind) else end >= 0
    revived = (resubmitted > end) | (requeued & (scheduled > end))
    return np.where(revived, -1, end)


def _take(values: np.ndarray, pos: np.ndarray, default: Any) -> np.ndarray:
    """``values[pos]``, ``default`` where ``pos`` is -1."""
    out = values[np.maximum(pos, 0)] if len(values) else np.empty(len(pos), values.dtype)
    if values.dtype == object:
        out = out.copy()
        out[pos < 0] = default
        return out
    return np.where(pos >= 0, out, default)


def _valid(column: np.ndarray) -> np.ndarray:
    """Rows holding a value: not null, not NaN; for objects ``bool(v)`` (None, ""
    and [] are not values)."""
    if column.dtype == np.int64:
        return column != NULL_INT
    if column.dtype == np.float64:
        return ~np.isnan(column)
    return column.astype(bool)


def _empty_objects(n: int, value: Any = None) -> np.ndarray:
    out = np.empty(n, dtype=object)
    out[:] = [value] * n if value is not None else None
    return out


# --------------------------------------------------------------------------- usage


def reduce_usage(usage: Frame) -> dict[str, np.ndarray]:
    """Aggregate instance_usage rows per instance (sorted by collection, index).

    Returns columns ``collection_id``, ``instance_index``, ``windows`` (distinct
    windows), ``seconds`` (measured time), ``cpu_seconds`` (NCU-seconds: mean CPU x
    window), ``memory_seconds`` (normalized memory x window), ``max_cpus`` and
    ``max_memory`` (largest maxima), the counts of :data:`USAGE_COUNTS`, and the
    ``collection_type`` its rows give (the lowest; :data:`NULL_INT` if none).

    Unknown stays unknown: a window whose time is not a real interval (a null or
    special end point, or an end before its start) makes the instance's
    ``seconds``, ``cpu_seconds`` and ``memory_seconds`` NaN; a window without a
    mean CPU (memory) makes ``cpu_seconds`` (``memory_seconds``) NaN. A window
    given twice (every field the reduction reads equal) counts once; windows that
    begin before the previous window of the instance ends are counted (and summed).
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
            **{name: empty_i for name in USAGE_COUNTS},
            "collection_type": empty_i,
        }
    keys = ("collection_id", "instance_index", "start_time", "end_time", *_USAGE_VALUES)
    order = _order(usage, keys)
    cid = usage["collection_id"][order]
    idx = usage["instance_index"][order]
    start = usage["start_time"][order]
    end = usage["end_time"][order]
    ctype = usage["collection_type"][order]
    values = [usage[name][order] for name in _USAGE_VALUES]
    same = (cid[1:] == cid[:-1]) & (idx[1:] == idx[:-1])
    # exact duplicates are adjacent (sorted by every field compared)
    dup = same & (start[1:] == start[:-1]) & (end[1:] == end[:-1])
    for column in values:
        a, b = column[1:], column[:-1]
        dup &= (a == b) | (np.isnan(a) & np.isnan(b))
    duplicate = np.concatenate(([False], dup))
    if duplicate.any():
        keep = ~duplicate
        starts_all = _group_starts([cid, idx])
        duplicates = np.add.reduceat(duplicate.astype(np.int64), starts_all)
        cid, idx, start, end, ctype = cid[keep], idx[keep], start[keep], end[keep], ctype[keep]
        values = [column[keep] for column in values]
        same = (cid[1:] == cid[:-1]) & (idx[1:] == idx[:-1])
    else:
        duplicates = None
    avg_cpus, avg_memory, max_cpus, max_memory = values
    m = len(cid)
    starts = _group_starts([cid, idx])
    timed = (
        (start != NULL_INT)
        & (end != NULL_INT)
        & (start != TIME_BEFORE_TRACE)
        & (end != TIME_AFTER_TRACE)
        & (end >= start)
    )
    overlapping = np.concatenate(([False], same & timed[1:] & timed[:-1] & (start[1:] < end[:-1])))
    micros = np.where(timed, end - np.where(timed, start, 0), 0)
    seconds = micros / US
    cpu_known = timed & ~np.isnan(avg_cpus)
    mem_known = timed & ~np.isnan(avg_memory)
    cpu = np.where(cpu_known, avg_cpus, 0.0) * seconds
    mem = np.where(mem_known, avg_memory, 0.0) * seconds

    def count(mask: np.ndarray) -> np.ndarray:
        return np.add.reduceat(mask.astype(np.int64), starts)

    def unless(total: np.ndarray, unknown: np.ndarray) -> np.ndarray:
        return np.where(count(unknown) > 0, np.nan, total)

    return {
        "collection_id": cid[starts],
        "instance_index": idx[starts],
        "windows": _counts(starts, m),
        # summed as doubles: exact for real windows, no int64 wrap-around for absurd ones
        "seconds": unless(np.add.reduceat(micros.astype(np.float64), starts) / US, ~timed),
        "cpu_seconds": unless(np.add.reduceat(cpu, starts), ~cpu_known),
        "memory_seconds": unless(np.add.reduceat(mem, starts), ~mem_known),
        "max_cpus": np.fmax.reduceat(max_cpus, starts),
        "max_memory": np.fmax.reduceat(max_memory, starts),
        "duplicate_windows": duplicates
        if duplicates is not None
        else np.zeros(len(starts), dtype=np.int64),
        "overlapping_windows": count(overlapping),
        "time_unknown_windows": count(~timed),
        "average_unknown_windows": count(timed & ~(cpu_known & mem_known)),
        "collection_type": _grouped(ctype, ctype != NULL_INT, starts, np.minimum, NULL_INT)[0],
    }


# --------------------------------------------------------------------------- events


def _last_values(
    events: Frame, names: Sequence[str], order: np.ndarray, starts: np.ndarray
) -> dict[str, np.ndarray]:
    """Per group, the last non-null value of each column (rows in ``order``)."""
    out = {}
    for name in names:
        column = events[name]
        pos = _last_pos(_valid(column)[order], starts)
        rows = np.where(pos >= 0, order[np.maximum(pos, 0)], -1)
        out[name] = _take(column, rows, _missing(column))
    return out


def reduce_collection_events(events: Frame) -> dict[str, np.ndarray]:
    """Per collection (ascending id): first SUBMIT and SCHEDULE, last terminal event,
    last non-null attributes; plus the sorted events (``e_*``)."""
    n = len(events["_line"])
    order = _lifecycle_order(events, ("collection_id",))
    cid = events["collection_id"][order]
    kind = events["type"][order]
    time = events["time"][order]
    starts = _group_starts([cid])
    out: dict[str, np.ndarray] = {
        "cid": cid[starts],
        "ev_count": _counts(starts, n),
        "first_event": time[starts] if n else np.empty(0, dtype=np.int64),
        "e_time": time,
        "e_type": kind,
        "e_missing": events["missing_type"][order],
        "sched_after_end": _schedules_after_end(kind, starts),
    }
    for name, mask, first in (
        ("submit", kind == SUBMIT, True),
        ("schedule", kind == SCHEDULE, True),
        ("end", np.isin(kind, _TERMINAL), False),
    ):
        pos = _first_pos(mask, starts) if first else _end_pos(mask, kind, starts)
        out[name] = _take(time, pos, 0)
        out[name + "_has"] = pos >= 0
        if name == "end":
            out["end_type"] = _take(kind, pos, NULL_INT)
    names = (
        *COLLECTION_INT_ATTRIBUTES,
        *COLLECTION_OBJECT_ATTRIBUTES,
        "start_after_collection_ids",
    )
    out.update(_last_values(events, names, order, starts))
    # a collection id given two collection types (two collections sharing an id?)
    ctype = events["collection_type"][order]
    valid = ctype != NULL_INT
    if len(starts):
        out["type_min"] = np.minimum.reduceat(np.where(valid, ctype, _INT_MAX), starts)
        out["type_max"] = np.maximum.reduceat(np.where(valid, ctype, _INT_MIN), starts)
        out["type_min"][out["type_min"] == _INT_MAX] = NULL_INT
        out["type_max"][out["type_max"] == _INT_MIN] = NULL_INT
    else:
        out["type_min"] = out["type_max"] = np.empty(0, dtype=np.int64)
    return out


def _missing(column: np.ndarray) -> Any:
    if column.dtype == np.int64:
        return NULL_INT
    return np.nan if column.dtype == np.float64 else None


def reduce_instance_events(events: Frame) -> dict[str, np.ndarray]:
    """Per instance (ascending collection id, index): first SUBMIT and SCHEDULE,
    last terminal event and placement, last non-null attributes; plus the sorted
    events (``f_*``)."""
    n = len(events["_line"])
    order = _lifecycle_order(events, ("collection_id", "instance_index"))
    cid = events["collection_id"][order]
    idx = events["instance_index"][order]
    kind = events["type"][order]
    time = events["time"][order]
    machine = events["machine_id"][order]
    starts = _group_starts([cid, idx])
    out: dict[str, np.ndarray] = {
        "cid": cid[starts],
        "idx": idx[starts],
        "ev_count": _counts(starts, n),
        "first_event": time[starts] if n else np.empty(0, dtype=np.int64),
        "f_time": time,
        "f_type": kind,
        "f_machine": machine,
        "f_missing": events["missing_type"][order],
        "sched_after_end": _schedules_after_end(kind, starts),
    }
    end_pos = np.empty(0, dtype=np.int64)
    for name, mask, first in (
        ("submit_raw", kind == SUBMIT, True),
        ("start_raw", kind == SCHEDULE, True),
        ("end_raw", np.isin(kind, _TERMINAL), False),
    ):
        pos = _first_pos(mask, starts) if first else _end_pos(mask, kind, starts)
        out[name] = _take(time, pos, 0)
        out[name + "_has"] = pos >= 0
        if name == "end_raw":
            out["end_type"] = _take(kind, pos, NULL_INT)
            end_pos = pos
    # the last placement (machine 0 is none; -1, a dedicated machine, is one whose
    # id the trace does not give), up to the end when the instance ended: one after
    # a FINISH or KILL is out of order, not where it ran
    placed = (machine != NULL_INT) & (machine != 0)
    place_pos = _last_pos(placed, starts)
    if n:
        upto = np.maximum.accumulate(np.where(placed, np.arange(n), -1))[np.maximum(end_pos, 0)]
        upto = np.where(upto >= starts, upto, -1)
        place_pos = np.where(end_pos >= 0, upto, place_pos)
    out["machine_id"] = _take(machine, place_pos, NULL_INT)
    names = (*INSTANCE_INT_ATTRIBUTES, *INSTANCE_FLOAT_ATTRIBUTES, "constraint")
    out.update(_last_values(events, names, order, starts))
    return out


def _merge_pairs(
    a_cid: np.ndarray, a_idx: np.ndarray, b_cid: np.ndarray, b_idx: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Union of two sorted sets of unique (collection, index) keys, sorted, with the
    position of each key in ``a`` and in ``b`` (-1 where absent)."""
    n_a = len(a_cid)
    cid = np.concatenate((a_cid, b_cid))
    idx = np.concatenate((a_idx, b_idx))
    if not len(cid):
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty, empty
    order = np.lexsort((idx, cid))
    cid, idx, src = cid[order], idx[order], order
    new = np.concatenate(([True], (cid[1:] != cid[:-1]) | (idx[1:] != idx[:-1])))
    gid = np.cumsum(new) - 1
    count = int(gid[-1]) + 1
    a_of = np.full(count, -1, dtype=np.int64)
    b_of = np.full(count, -1, dtype=np.int64)
    in_a = src < n_a
    a_of[gid[in_a]] = src[in_a]
    b_of[gid[~in_a]] = src[~in_a] - n_a
    return cid[new], idx[new], a_of, b_of


def _pick(values: np.ndarray, of: np.ndarray, default: Any) -> np.ndarray:
    """``values[of]`` with ``default`` where ``of`` is -1."""
    return _take(values, of, default)


# --------------------------------------------------------------------------- collections


def reduce_collections(
    collection_events: Frame,
    instance_events: Frame,
    instance_usage: Frame,
    keep_instances: bool = True,
) -> Reduced:
    """The :data:`Reduced` of the rows of whole collections.

    Every collection seen in any of the three tables gets a row; ``c_has_events``
    is false for one known only from its instances. ``keep_instances=False``
    leaves out the per-instance arrays (the totals stay).
    """
    return combine(
        reduce_collection_events(collection_events),
        reduce_instance_events(instance_events),
        reduce_usage(instance_usage),
        keep_instances,
    )


def merge_instances(
    ie: Mapping[str, np.ndarray], usage: Mapping[str, np.ndarray]
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The instance rows of :func:`combine` (the union of the instances with events
    and with usage, sorted by collection and index; the ``i_*`` arrays without
    their prefix, plus ``cid``), and for each row its row in ``ie`` (-1 for an
    instance known only from its usage). Needs no collection events, so the
    in-process reader runs it (and makes the tasks) while those are parsed."""
    ucid, uidx, a_of, b_of = _merge_pairs(
        ie["cid"], ie["idx"], usage["collection_id"], usage["instance_index"]
    )
    inst: dict[str, np.ndarray] = {"cid": ucid, "idx": uidx}
    for name in ("submit_raw", "start_raw", "end_raw"):
        inst[name] = _pick(ie[name], a_of, 0)
        inst[name + "_has"] = _pick(ie[name + "_has"], a_of, False)
    inst["end_type"] = _pick(ie["end_type"], a_of, NULL_INT)
    inst["machine_id"] = _pick(ie["machine_id"], a_of, NULL_INT)
    for name in INSTANCE_INT_ATTRIBUTES:
        inst[name] = _pick(ie[name], a_of, NULL_INT)
    for name in INSTANCE_FLOAT_ATTRIBUTES:
        inst[name] = _pick(ie[name], a_of, np.nan)
    inst["constraint"] = _pick(ie["constraint"], a_of, None)
    inst["ev_count"] = _pick(ie["ev_count"], a_of, 0)
    inst["sched_after_end"] = _pick(ie["sched_after_end"], a_of, 0)
    inst["first_event"] = _pick(ie["first_event"], a_of, 0)
    has_usage = b_of >= 0
    inst["has_usage"] = has_usage
    inst["usage_type"] = _pick(usage["collection_type"], b_of, NULL_INT)
    for name in USAGE_FIELDS:
        default = (
            0
            if name == "windows" or name in USAGE_COUNTS
            else (np.nan if name.startswith("max") else 0.0)
        )
        inst[name] = _pick(usage[name], b_of, default)
    # instances with events keep the order of ``ie``'s groups in the (sorted) union,
    # so the sorted instance events stay grouped as the union's rows need them
    return inst, a_of


def combine(
    ce: Mapping[str, np.ndarray],
    ie: Mapping[str, np.ndarray],
    usage: Mapping[str, np.ndarray],
    keep_instances: bool = True,
    instances: Mapping[str, np.ndarray] | None = None,
) -> Reduced:
    """The :data:`Reduced` of the three per-table reductions of the same collections
    (:func:`reduce_collection_events`, :func:`reduce_instance_events`,
    :func:`reduce_usage`): each can run as soon as its table is read.
    ``instances``: the result of :func:`merge_instances` when already made."""
    inst = merge_instances(ie, usage)[0] if instances is None else instances
    ucid = inst["cid"]
    out: Reduced = {}
    # ---- collections (union of collection events and instance collections)
    inst_starts = _group_starts([ucid])
    inst_cids = ucid[inst_starts] if len(ucid) else np.empty(0, dtype=np.int64)
    all_cids = np.union1d(ce["cid"], inst_cids)
    count = len(all_cids)
    ce_at = np.searchsorted(all_cids, ce["cid"])
    in_at = np.searchsorted(all_cids, inst_cids)
    col: dict[str, np.ndarray] = {"cid": all_cids}
    has_events = np.zeros(count, dtype=bool)
    has_events[ce_at] = True
    col["has_events"] = has_events

    def spread(values: np.ndarray, at: np.ndarray, default: Any) -> np.ndarray:
        if values.dtype == object:
            arr = _empty_objects(count)
            if default is not None:
                arr[:] = [default] * count
        else:
            arr = np.full(count, default, dtype=values.dtype)
        arr[at] = values
        return arr

    col["ev_count"] = spread(ce["ev_count"], ce_at, 0)
    for name in ("submit", "schedule", "end"):
        col[name] = spread(ce[name], ce_at, 0)
        col[name + "_has"] = spread(ce[name + "_has"], ce_at, False)
    col["end_type"] = spread(ce["end_type"], ce_at, NULL_INT)
    col["sched_after_end"] = spread(ce["sched_after_end"], ce_at, 0)
    for name in ("type_min", "type_max"):
        col[name] = spread(ce[name], ce_at, NULL_INT)
    for name in COLLECTION_INT_ATTRIBUTES:
        col[name] = spread(ce[name], ce_at, NULL_INT)
    for name in COLLECTION_OBJECT_ATTRIBUTES:
        col[name] = spread(ce[name], ce_at, None)
    col["start_after_collection_ids"] = spread(ce["start_after_collection_ids"], ce_at, None)
    # ---- totals over instances
    totals = _instance_totals(inst, inst_starts)
    for name in TOTAL_FIELDS:
        default = np.nan if name == "max_memory" else 0
        col[name] = spread(totals[name], in_at, default)
    col["inst_count"] = col["instances"]
    # what the job mapping falls back on when the collection events say nothing
    for name, values, has, reducer in (
        ("inst_start", inst["start_raw"], inst["start_raw_has"], np.minimum),
        ("inst_priority", inst["priority"], inst["priority"] != NULL_INT, np.maximum),
        ("inst_type", inst["collection_type"], inst["collection_type"] != NULL_INT, np.minimum),
        ("usage_type", inst["usage_type"], inst["usage_type"] != NULL_INT, np.minimum),
        (
            "inst_class",
            inst["scheduling_class"],
            inst["scheduling_class"] != NULL_INT,
            np.maximum,
        ),
        ("inst_first_event", inst["first_event"], inst["ev_count"] > 0, np.minimum),
    ):
        value, present = _grouped(values, has, inst_starts, reducer)
        col[name] = spread(value, in_at, 0)
        col[name + "_has"] = spread(present, in_at, False)
    col["first_event"] = spread(ce["first_event"], ce_at, 0)
    # machines of the instances' last placements
    host_count, machines = _hosts(inst, count, np.searchsorted(all_cids, ucid))
    col["host_count"] = host_count
    for name, values in col.items():
        out["c_" + name] = values
    for name in ("e_time", "e_type", "e_missing"):
        out[name] = ce[name]
    out["h_machine"] = machines
    out.update(_alloc_instance_events(out, inst, ie))
    if keep_instances:
        for name, values in inst.items():
            if name != "cid":
                out["i_" + name] = values
        for name in ("f_time", "f_type", "f_machine", "f_missing"):
            out[name] = ie[name]
    return out


def _alloc_instance_events(
    col: Reduced, inst: Mapping[str, np.ndarray], ie: Mapping[str, np.ndarray]
) -> Reduced:
    """The instance events (``a_*``) of the alloc sets known only from their
    instances (no collection events), grouped by collection (``c_alloc_ev_count``
    each) in the order of ``f_*``: kept without the per-instance arrays, so a writer
    can give them back as read."""
    count = len(col["c_cid"])
    keep_set = (collection_type_of(col) == ALLOC_SET) & ~col["c_has_events"]
    # the events of ``inst``'s rows are ``ie``'s, in row order (see merge_instances)
    owner = np.searchsorted(col["c_cid"], inst["cid"])
    row_kept = keep_set[owner] if len(owner) else np.zeros(0, dtype=bool)
    kept_events = np.where(row_kept, inst["ev_count"], 0)
    keep = np.repeat(row_kept, inst["ev_count"])
    return {
        "c_alloc_ev_count": np.bincount(owner, weights=kept_events, minlength=count).astype(
            np.int64
        ),
        "a_idx": np.repeat(inst["idx"][row_kept], inst["ev_count"][row_kept]),
        "a_time": ie["f_time"][keep],
        "a_type": ie["f_type"][keep],
        "a_machine": ie["f_machine"][keep],
        "a_missing": ie["f_missing"][keep],
    }


def _grouped(
    values: np.ndarray, has: np.ndarray, starts: np.ndarray, reducer: Any, missing: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per group: ``reducer`` of the values where ``has``, and whether any was
    (``missing``, when given, is the value of a group without one)."""
    if not len(starts):
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=bool)
    fill = _INT_MAX if reducer is np.minimum else _INT_MIN
    value = reducer.reduceat(np.where(has, values, fill), starts)
    present = np.add.reduceat(has.astype(np.int64), starts) > 0
    if missing is not None:
        value = np.where(present, value, missing)
    return value, present


def _instance_totals(inst: Mapping[str, np.ndarray], starts: np.ndarray) -> dict[str, np.ndarray]:
    """Per-collection sums over instances: requested and scheduled CPUs and memory
    (with counts of known values) and usage totals."""
    n = len(inst["idx"])
    if not len(starts):
        return {
            name: np.empty(0, dtype=np.float64 if name in _FLOAT_TOTALS else np.int64)
            for name in TOTAL_FIELDS
        }
    cpus, memory = inst["cpus"], inst["memory"]
    has_usage = inst["has_usage"]
    seconds = np.where(has_usage, inst["seconds"], 0.0)
    mem_seconds = np.where(has_usage, inst["memory_seconds"], 0.0)
    mean_memory = np.divide(mem_seconds, seconds, out=np.zeros_like(seconds), where=seconds > 0)
    mean_memory[np.isnan(mem_seconds) | np.isnan(seconds)] = np.nan  # unknown stays unknown
    known_cpu = ~np.isnan(cpus)
    known_mem = ~np.isnan(memory)
    sched_cpu = known_cpu & inst["start_raw_has"]
    return {
        "instances": _counts(starts, n),
        "cpus_known": np.add.reduceat(known_cpu.astype(np.int64), starts),
        "cpus": np.add.reduceat(np.where(known_cpu, cpus, 0.0), starts),
        "memory_known": np.add.reduceat(known_mem.astype(np.int64), starts),
        "memory": np.add.reduceat(np.where(known_mem, memory, 0.0), starts),
        "scheduled_cpus_known": np.add.reduceat(sched_cpu.astype(np.int64), starts),
        "scheduled_cpus": np.add.reduceat(np.where(sched_cpu, cpus, 0.0), starts),
        "scheduled_instances": np.add.reduceat(inst["start_raw_has"].astype(np.int64), starts),
        "usage_instances": np.add.reduceat(has_usage.astype(np.int64), starts),
        "usage_windows": np.add.reduceat(np.where(has_usage, inst["windows"], 0), starts),
        "cpu_seconds": np.add.reduceat(np.where(has_usage, inst["cpu_seconds"], 0.0), starts),
        "memory_mean": np.add.reduceat(mean_memory, starts),
        "max_memory": np.fmax.reduceat(np.where(has_usage, inst["max_memory"], np.nan), starts),
        "scheduled_without_usage": np.add.reduceat(
            (inst["start_raw_has"] & ~has_usage).astype(np.int64), starts
        ),
        "instances_sched_after_end": np.add.reduceat(
            (inst["sched_after_end"] > 0).astype(np.int64), starts
        ),
        **{
            name: np.add.reduceat(np.where(has_usage, inst[name], 0), starts)
            for name in USAGE_COUNTS
        },
    }


_FLOAT_TOTALS = frozenset(
    {"cpus", "memory", "scheduled_cpus", "cpu_seconds", "memory_mean", "max_memory"}
)


def _hosts(
    inst: Mapping[str, np.ndarray], count: int, collection_of: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct machines (> 0) of each collection's instances, ascending."""
    machine = inst["machine_id"]
    keep = (machine != NULL_INT) & (machine > 0)
    owner, machine = collection_of[keep], machine[keep]
    if len(owner):
        order = np.lexsort((machine, owner))
        owner, machine = owner[order], machine[order]
        new = np.concatenate(([True], (owner[1:] != owner[:-1]) | (machine[1:] != machine[:-1])))
        owner, machine = owner[new], machine[new]
    return np.bincount(owner, minlength=count).astype(np.int64), machine


# --------------------------------------------------------------------------- pieces


def drop_instances(reduced: Reduced) -> Reduced:
    """The same result without the per-instance arrays (``i_*``, ``f_*``)."""
    return {k: v for k, v in reduced.items() if not k.startswith(("i_", "f_"))}


def concat_reduced(parts: Sequence[Reduced]) -> Reduced:
    """Join the results of disjoint sets of collections (e.g. Dask buckets)."""
    parts = [p for p in parts if p]
    if not parts:
        return _empty_reduced()
    if len(parts) == 1:
        return parts[0]
    keys = [k for k in parts[0] if all(k in p for p in parts)]
    return {k: np.concatenate([p[k] for p in parts]) for k in keys}


def _empty_reduced() -> Reduced:
    from .frames import empty_frame

    return reduce_collections(
        empty_frame("collection_events"),
        empty_frame("instance_events"),
        empty_frame("instance_usage"),
    )


def collection_count(reduced: Reduced) -> int:
    """Number of collections."""
    return len(reduced["c_cid"])


# --------------------------------------------------------------------------- rules


def collection_type_of(reduced: Reduced) -> np.ndarray:
    """Per collection: its type (:data:`NULL_INT` if unknown): the last one its
    collection events give, else the one of its instance events, else the one of
    its usage rows (a collection whose events fall outside the sample; the usage
    table holds alloc instances too)."""
    r = reduced
    fallback = np.where(
        r["c_inst_type_has"],
        r["c_inst_type"],
        np.where(r["c_usage_type_has"], r["c_usage_type"], NULL_INT),
    )
    return np.where(r["c_collection_type"] != NULL_INT, r["c_collection_type"], fallback)


def all_known(known: Any, total: Any) -> Any:
    """A total over instances is known when every instance's value is (a sum over
    some of them would understate it): ``known == total > 0``."""
    return (known == total) & (total > 0)


def usage_known(reduced: Reduced) -> np.ndarray:
    """Per collection: whether its measured usage totals (``c_cpu_seconds``,
    ``c_memory_mean``) stand for all of it: it has usage windows and every
    scheduled instance has some (NaN in a total, from a window of unknown time or
    mean, is unknown too)."""
    return (reduced["c_usage_windows"] > 0) & (reduced["c_scheduled_without_usage"] == 0)
