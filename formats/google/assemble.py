"""Reduced collections -> a :class:`~schedlab.model.Workload` (the mapping table of
``docs/formats/google.md`` in code).

Both trace versions and both engines (in-process and Dask) end here, so the model
a user gets never depends on how the rows were read. The per-job quantities are
computed on whole columns (numpy), then the :class:`~schedlab.model.Job` and
:class:`~schedlab.model.Task` objects are made in one pass each.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import numpy as np
from schedlab.errors import UsageError
from schedlab.model import Dependency, Header, Job, Task, Workload

from .capacity import processors_from_cpus
from .reduce import NULL_INT, Reduced, all_known, collection_type_of, usage_known
from .schema import (
    ALLOC_SET,
    COLLECTION_TYPES,
    EVENT_TYPES,
    MISSING_TYPES,
    TERMINAL_STATUS,
    TIER_QUEUE,
    TIERS,
    TIME_AFTER_TRACE,
    TIME_BEFORE_TRACE,
    TIME_OFFSET_US,
    US,
    tier_of,
)

#: Values of the ``special_times`` option.
SPECIAL_TIME_MODES = ("unknown", "clip")


class TimeMapper:
    """Raw trace times (microseconds) -> seconds since the trace start.

    ``0`` (before the trace) and ``2^63-1`` (after it) are never real times: with
    ``mode="unknown"`` they map to ``None``; with ``mode="clip"`` before-trace
    maps to ``-600`` s (the earliest representable instant) and after-trace to
    ``trace_end`` (the last real time seen in the trace).
    """

    def __init__(self, mode: str = "unknown", trace_end: float | None = None) -> None:
        self.mode = mode
        self.trace_end = trace_end

    def __call__(self, raw: int | None) -> float | None:
        if raw is None:
            return None
        if raw == TIME_BEFORE_TRACE:
            return -TIME_OFFSET_US / US if self.mode == "clip" else None
        if raw == TIME_AFTER_TRACE:
            return self.trace_end if self.mode == "clip" else None
        return (raw - TIME_OFFSET_US) / US

    def many(self, raw: np.ndarray, has: np.ndarray) -> list[float | None]:
        """``[self(v) if h else None for v, h in zip(raw, has)]`` on a column: the same
        floats, since ``(raw - offset) / US`` is exact in float64 below 2^53."""
        raw = np.asarray(raw, dtype=np.int64)
        plain = has & (raw < 2**53) & (raw > -(2**53)) & (raw != TIME_BEFORE_TRACE)
        values = ((np.where(plain, raw, TIME_OFFSET_US) - TIME_OFFSET_US) / US).tolist()
        for i in np.flatnonzero(~plain).tolist():
            values[i] = self(int(raw[i])) if has[i] else None
        return values


def special_label(raw: int | None) -> str | None:
    """``"before_trace"``, ``"after_trace"`` or ``None``."""
    if raw == TIME_BEFORE_TRACE:
        return "before_trace"
    if raw == TIME_AFTER_TRACE:
        return "after_trace"
    return None


def _number(table: dict[str, int], value: str | None) -> int | None:
    if value is None:
        return None
    number = table.get(value)
    if number is None:
        number = table[value] = len(table) + 1
    return number


def _numbers(table: dict[str, int], values: list[str | None]) -> list[int | None]:
    """Number each value in order of first appearance (continuing ``table``)."""
    setdefault = table.setdefault
    return [None if v is None else setdefault(v, len(table) + 1) for v in values]


def _none_where(values: np.ndarray, missing: np.ndarray) -> list[Any]:
    """``values.tolist()`` with ``None`` where ``missing`` (the same Python objects,
    made and masked by numpy rather than by a loop)."""
    if not missing.any():
        return values.tolist()
    out = values.astype(object)
    out[missing] = None
    return out.tolist()


def _ints(values: np.ndarray) -> list[int | None]:
    """Python ints, ``None`` for :data:`NULL_INT`."""
    return _none_where(values, values == NULL_INT)


def _floats(values: np.ndarray) -> list[float | None]:
    """Python floats, ``None`` for NaN."""
    return _none_where(values, np.isnan(values))


def _masked(values: list[Any], has: np.ndarray) -> list[Any]:
    """``values`` with ``None`` where ``has`` is false."""
    if len(has) and not has.all():
        for i in np.flatnonzero(~has).tolist():
            values[i] = None
    return values


def _offsets(counts: np.ndarray) -> list[int]:
    return np.concatenate(([0], np.cumsum(counts))).astype(np.int64).tolist()


def _record_maker(keys: Sequence[str]) -> Callable[..., dict[str, Any]]:
    """A function building a dict with ``keys`` from positional values (a dict
    display is much faster than ``dict(zip(...))`` for millions of records)."""
    body = ", ".join(f"{key!r}: v{i}" for i, key in enumerate(keys))
    args = ", ".join(f"v{i}" for i in range(len(keys)))
    return eval(f"lambda {args}: {{{body}}}")  # keys are our own names


#: Largest processor count made from normalized CPUs (integers beyond it are not
#: exact in a double, and a cast to int64 would wrap around).
MAX_PROCS = 2**53


def _ceil_procs(cpus: np.ndarray, scale: float) -> np.ndarray:
    """``max(1, ceil(cpus x scale))`` per value (a hair of tolerance for rounding).

    The reader bounds each normalized value (``frames.MAX_NORMALIZED``), so only an
    enormous ``cpu_scale`` can push a count past :data:`MAX_PROCS`: a
    :class:`UsageError` then, never a wrapped-around number."""
    scaled = np.ceil(cpus * scale - 1e-9)
    too_many = scaled >= MAX_PROCS
    if too_many.any():
        worst = float(cpus[too_many].max())
        raise UsageError(
            f"google: cpu_scale={scale:g} makes a job of {worst:g} NCU need more than "
            "2^53 processors; choose a smaller cpu_scale"
        )
    return np.maximum(1, scaled).astype(np.int64)


def _safe_int_procs(cpus: np.ndarray, known: np.ndarray, scale: float) -> list[int | None]:
    procs = _ceil_procs(np.where(known, cpus, 0.0), scale)
    return _none_where(procs, ~known)


_INSTANCE_KEYS = (
    "instance_index",
    "events",
    "submit_raw",
    "start_raw",
    "end_raw",
    "end_type",
    "machine_id",
    "collection_type",
    "priority",
    "scheduling_class",
    "alloc_collection_id",
    "alloc_instance_index",
    "cpus",
    "memory",
    "constraint",
    "usage",
    "end_event",
)
_USAGE_KEYS = ("windows", "seconds", "cpu_seconds", "memory_seconds", "max_cpus", "max_memory")
_JOB_EXTRA_KEYS = (
    "collection_id",
    "collection_type",
    "has_collection_events",
    "scheduling_class",
    "tier",
    "alloc_collection_id",
    "parent_collection_id",
    "start_after_collection_ids",
    "user",
    "collection_logical_name",
    "max_per_machine",
    "max_per_switch",
    "vertical_scaling",
    "scheduler",
    "submit_raw",
    "start_raw",
    "start_from",
    "end_raw",
    "end_event",
    "events",
    "instances",
    "requested_cpus",
    "requested_memory_normalized",
    "used_cpu_seconds_ncu",
    "used_memory_normalized",
    "max_memory_normalized",
    "usage_windows",
)


def _alloc_instance_events(r: Reduced) -> list[tuple[Any, ...]]:
    """The kept instance events of alloc sets known only from their instances as
    ``(instance_index, time, type, machine_id, missing_type)``, grouped
    (``c_alloc_ev_count`` each)."""
    return list(
        zip(
            r["a_idx"].tolist(),
            r["a_time"].tolist(),
            r["a_type"].tolist(),
            _ints(r["a_machine"]),
            _ints(r["a_missing"]),
            strict=True,
        )
    )


def _collection_events(r: Reduced) -> list[tuple[Any, ...]]:
    """Every collection event as ``(time, type, missing_type)``, grouped."""
    return list(zip(r["e_time"].tolist(), r["e_type"].tolist(), _ints(r["e_missing"]), strict=True))


def event_lists(
    time: np.ndarray,
    kind: np.ndarray,
    machine: np.ndarray,
    missing: np.ndarray,
    counts: np.ndarray,
) -> list[list[tuple[Any, ...]]]:
    """The instance events as ``(time, type, machine_id, missing_type)`` tuples, one
    list per instance (``counts`` events each, in order)."""
    events = list(zip(time.tolist(), kind.tolist(), _ints(machine), _ints(missing), strict=True))
    return [events[a:b] for a, b in itertools.pairwise(_offsets(counts))]


def _shared_strings(values: list[int], limit: int) -> list[str]:
    """``[str(v) for v in values]`` for small non-negative ints, with one string
    object per distinct value (instance indices repeat across collections)."""
    texts = [str(v) for v in range(limit)]
    return [texts[v] if 0 <= v < limit else str(v) for v in values]


def _int_names(values: np.ndarray) -> tuple[list[int | None], list[str | None]]:
    """``(_ints(values), [str(v) or None])`` with one int and one string object per
    distinct value (machine ids repeat over many instances); a negative value has
    no name."""
    if not len(values):
        return [], []
    distinct, inverse = np.unique(values, return_inverse=True)
    numbers = _ints(distinct)
    # -1 (DEDICATED_MACHINE) is a placement on a machine the trace does not name
    texts = [None if v is None or v < 0 else str(v) for v in numbers]
    at = inverse.reshape(-1).tolist()
    return list(map(numbers.__getitem__, at)), list(map(texts.__getitem__, at))


def build_tasks(
    inst: Mapping[str, np.ndarray],
    per_instance: list[list[tuple[Any, ...]]],
    to_s: TimeMapper,
    cpu_scale: float,
    event_names: Mapping[int, str] = EVENT_TYPES,
) -> list[Task]:
    """One :class:`Task` per instance row of ``inst`` (the ``i_*`` arrays of a
    :data:`Reduced` without their prefix, see :func:`.reduce.merge_instances`),
    with the events ``per_instance`` (:func:`event_lists`). ``Task.extras`` is
    the instance record: events, raw times, placement, last attributes and usage."""
    n = len(inst["idx"])
    if len(per_instance) != n:
        raise AssertionError("one event list per instance")
    raw = {
        name: _none_where(inst[name], ~inst[f"{name}_has"])
        for name in ("submit_raw", "start_raw", "end_raw")
    }
    end_type = _none_where(inst["end_type"], ~inst["end_raw_has"])
    machine, hosts = _int_names(inst["machine_id"])
    cpus = _floats(inst["cpus"])
    has_usage = inst["has_usage"]
    usage_cols = [inst[k].tolist() if k == "windows" else _floats(inst[k]) for k in _USAGE_KEYS]
    usage: list[Any] = list(
        itertools.starmap(_record_maker(_USAGE_KEYS), zip(*usage_cols, strict=True))
    )
    _masked(usage, has_usage)
    _usage_counts(usage, inst, has_usage)
    end_event_of = {t: event_names.get(t) if t is not None else None for t in set(end_type)}
    end_event = list(map(end_event_of.__getitem__, end_type))
    index = inst["idx"].tolist()
    columns = [
        index,
        per_instance,
        raw["submit_raw"],
        raw["start_raw"],
        raw["end_raw"],
        end_type,
        machine,
        _ints(inst["collection_type"]),
        _ints(inst["priority"]),
        _ints(inst["scheduling_class"]),
        _ints(inst["alloc_collection_id"]),
        _ints(inst["alloc_instance_index"]),
        cpus,
        _floats(inst["memory"]),
        inst["constraint"].tolist(),
        usage,
        end_event,
    ]
    records = list(itertools.starmap(_record_maker(_INSTANCE_KEYS), zip(*columns, strict=True)))
    start = to_s.many(inst["start_raw"], inst["start_raw_has"])
    end = to_s.many(inst["end_raw"], inst["end_raw_has"])
    procs = _floats(inst["cpus"] * cpu_scale)
    status_of = {t: TERMINAL_STATUS.get(t) if t is not None else None for t in set(end_type)}
    status = list(map(status_of.__getitem__, end_type))
    ids = _shared_strings(index, min(int(inst["idx"].max(initial=0)) + 1, 2 * n + 1))
    tasks = list(map(Task, ids, start, end, procs, hosts, status, records))
    if len(tasks) != n:
        raise AssertionError("one task per instance")
    return tasks


#: Keys of a task's ``extras["usage"]`` for the window counts of
#: :data:`.reduce.USAGE_COUNTS`, each present only when not 0.
USAGE_COUNT_KEYS = {
    "duplicate_windows": "duplicate_windows",
    "overlapping_windows": "overlapping_windows",
    "time_unknown_windows": "unknown_windows",
    "average_unknown_windows": "unknown_windows",
}


def _usage_counts(usage: list[Any], inst: Mapping[str, np.ndarray], has_usage: np.ndarray) -> None:
    """Add the window counts that are not 0 to the usage records (few instances):
    ``duplicate_windows``, ``overlapping_windows`` and ``unknown_windows`` (time
    or mean usage unknown)."""
    flagged = np.zeros(len(has_usage), dtype=bool)
    for name in USAGE_COUNT_KEYS:
        flagged |= inst[name] > 0
    for i in np.flatnonzero(flagged & has_usage).tolist():
        record = usage[i]
        for name, key in USAGE_COUNT_KEYS.items():
            value = int(inst[name][i])
            if value:
                record[key] = record.get(key, 0) + value


class EarlyTasks:
    """Makes the tasks while the rest of the trace is still being parsed: the
    in-process reader calls :meth:`instance_events` once the instance events are
    reduced and :meth:`instances` once they are merged with the usage (neither
    needs the collection events); :func:`build_workload` then takes
    :attr:`tasks`. The result is the one :func:`build_workload` makes itself."""

    def __init__(
        self, to_s: TimeMapper, cpu_scale: float, event_names: Mapping[int, str] = EVENT_TYPES
    ) -> None:
        self.to_s = to_s
        self.cpu_scale = cpu_scale
        self.event_names = event_names
        self.lists: list[list[tuple[Any, ...]]] = []
        self.tasks: list[Task] | None = None

    def instance_events(self, ie: Mapping[str, np.ndarray]) -> None:
        """The event lists of the instances with events (``ie`` is the result of
        :func:`.reduce.reduce_instance_events`)."""
        self.lists = event_lists(
            ie["f_time"], ie["f_type"], ie["f_machine"], ie["f_missing"], ie["ev_count"]
        )

    def instances(self, inst: Mapping[str, np.ndarray], ie_rows: np.ndarray) -> None:
        """The tasks of the merged instance rows (:func:`.reduce.merge_instances`)."""
        lists = self.lists
        if len(ie_rows) != len(lists) or (ie_rows < 0).any():
            lists = [lists[a] if a >= 0 else [] for a in ie_rows.tolist()]
        self.lists = []
        self.tasks = build_tasks(inst, lists, self.to_s, self.cpu_scale, self.event_names)


def _tasks_by_collection(
    r: Reduced, to_s: TimeMapper, cpu_scale: float, event_names: Mapping[int, str]
) -> tuple[list[Task], list[int]]:
    """One :class:`Task` per instance (all collections, grouped), and the offsets of
    each collection's tasks."""
    inst = {k[2:]: v for k, v in r.items() if k.startswith("i_")}
    per_instance = event_lists(
        r["f_time"], r["f_type"], r["f_machine"], r["f_missing"], r["i_ev_count"]
    )
    tasks = build_tasks(inst, per_instance, to_s, cpu_scale, event_names)
    return tasks, _offsets(r["c_inst_count"])


def build_workload(
    reduced: Reduced,
    *,
    header_info: Mapping[str, Any],
    capacity: Mapping[str, Any] | None,
    table_counts: Mapping[str, Mapping[str, int]],
    cpu_scale: float,
    memory_scale: float,
    special_times: str = "unknown",
    tasks: bool = True,
    tier: Callable[[int | None], str | None] = tier_of,
    event_names: Mapping[int, str] = EVENT_TYPES,
    trace_end: float | None = None,
    prebuilt_tasks: Sequence[Task] | None = None,
) -> Workload:
    """The workload of the jobs (collections of type JOB) of ``reduced``.

    ``header_info`` gives the header texts (``computer``, ``information``,
    ``version_label``, optional ``unix_start_time`` and ``time_zone``);
    ``capacity`` is the timeline of :func:`.capacity.capacity_timeline`. Tasks
    need the per-instance arrays (see :func:`.reduce.drop_instances`), or
    ``prebuilt_tasks``: the tasks of all instance rows, made by :func:`build_tasks`
    with the same time mapping (the in-process reader makes them early).
    """
    r = reduced
    to_s = TimeMapper(special_times, trace_end)
    cid = r["c_cid"]
    ctype = collection_type_of(r)
    # job order: (SUBMIT time, id); without SUBMIT, the earliest event of the
    # collection or of its instances (after the trace if there is none)
    first = np.minimum(
        np.where(r["c_ev_count"] > 0, r["c_first_event"], TIME_AFTER_TRACE),
        np.where(r["c_inst_first_event_has"], r["c_inst_first_event"], TIME_AFTER_TRACE),
    )
    key = np.where(r["c_submit_has"], r["c_submit"], first)
    order = np.lexsort((cid, key))
    is_job = ctype[order] != ALLOC_SET
    job_rows = order[is_job]
    alloc_rows = order[~is_job]
    job_cids = cid[job_rows].tolist()
    job_number = dict(zip(job_cids, range(1, len(job_cids) + 1), strict=True))

    all_events = _collection_events(r)
    ev_off = _offsets(r["c_ev_count"])
    host_off = _offsets(r["c_host_count"])
    host_names = _int_names(r["h_machine"])[1]
    task_lists: list[Task] | None = None
    inst_off: list[int] = []
    if tasks and prebuilt_tasks is not None:
        task_lists, inst_off = list(prebuilt_tasks), _offsets(r["c_inst_count"])
    elif tasks:
        task_lists, inst_off = _tasks_by_collection(r, to_s, cpu_scale, event_names)

    # ---- per-job columns
    j = job_rows
    submit_has = r["c_submit_has"][j]
    sched_has = r["c_schedule_has"][j]
    start_has = sched_has | r["c_inst_start_has"][j]
    start_raw_arr = np.where(sched_has, r["c_schedule"][j], r["c_inst_start"][j])
    end_has = r["c_end_has"][j]
    submit_raw = _none_where(r["c_submit"][j], ~submit_has)
    start_raw = _none_where(start_raw_arr, ~start_has)
    end_raw = _none_where(r["c_end"][j], ~end_has)
    submit_s = np.array(
        [np.nan if v is None else v for v in to_s.many(r["c_submit"][j], submit_has)]
    )
    start_s = np.array([np.nan if v is None else v for v in to_s.many(start_raw_arr, start_has)])
    end_s = np.array([np.nan if v is None else v for v in to_s.many(r["c_end"][j], end_has)])
    wait = start_s - submit_s
    run = end_s - start_s
    wait_l = _floats(np.where(wait < 0, np.nan, wait))
    run_l = _floats(np.where(run < 0, np.nan, run))
    submit_l = _floats(submit_s)
    start_from = [
        "collection" if s else ("instances" if i else None)
        for s, i in zip(sched_has.tolist(), r["c_inst_start_has"][j].tolist(), strict=True)
    ]
    # a sum over some of the instances would understate the request: a request
    # is known when every instance's is (every scheduled one's for allocated)
    n_inst = r["c_instances"][j]
    n_sched = r["c_scheduled_instances"][j]
    cpus_known = all_known(r["c_cpus_known"][j], n_inst)
    mem_known = all_known(r["c_memory_known"][j], n_inst)
    sched_known = all_known(r["c_scheduled_cpus_known"][j], n_sched)
    partial = (
        ((r["c_cpus_known"][j] > 0) & ~cpus_known)
        | ((r["c_memory_known"][j] > 0) & ~mem_known)
        | ((r["c_scheduled_cpus_known"][j] > 0) & ~sched_known)
    )
    req_cpus = np.where(cpus_known, r["c_cpus"][j], np.nan)
    req_mem = np.where(mem_known, r["c_memory"][j], np.nan)
    requested = _safe_int_procs(r["c_cpus"][j], cpus_known, cpu_scale)
    allocated_arr = np.where(
        sched_known, _ceil_procs(np.where(sched_known, r["c_scheduled_cpus"][j], 0.0), cpu_scale), 0
    )
    allocated = _none_where(allocated_arr, ~sched_known)
    requested_arr = np.where(
        cpus_known, _ceil_procs(np.where(cpus_known, r["c_cpus"][j], 0.0), cpu_scale), 0
    )
    windows_arr = r["c_usage_windows"][j]
    # usage over some of the scheduled instances would understate the job's
    measured = usage_known(r)[j]
    usage_partial = (windows_arr > 0) & ~measured
    with_usage = measured & sched_known & (allocated_arr > 0)
    denominator = np.where(with_usage, allocated_arr, 1).astype(np.float64)
    cpu_seconds = r["c_cpu_seconds"][j]
    used_mem = r["c_memory_mean"][j]
    avg_cpu = _floats(np.where(with_usage, cpu_seconds * cpu_scale / denominator, np.nan))
    used_memory = _floats(np.where(with_usage, used_mem * memory_scale / denominator, np.nan))
    with_req_mem = mem_known & cpus_known & (requested_arr > 0)
    req_den = np.where(with_req_mem, requested_arr, 1).astype(np.float64)
    requested_memory = _floats(np.where(with_req_mem, req_mem * memory_scale / req_den, np.nan))
    has_windows = measured
    used_cpu_ncu = _floats(np.where(has_windows, cpu_seconds, np.nan))
    used_mem_ncu = _floats(np.where(has_windows, used_mem, np.nan))
    prio_arr = r["c_priority"][j]
    prio_arr = np.where(
        prio_arr != NULL_INT,
        prio_arr,
        np.where(r["c_inst_priority_has"][j], r["c_inst_priority"][j], NULL_INT),
    )
    priority = _ints(prio_arr)
    tiers = {p: tier(p) for p in set(priority)}
    end_type = _none_where(r["c_end_type"][j], ~end_has)
    user = r["c_user"][j].tolist()
    logical = r["c_collection_logical_name"][j].tolist()
    name = r["c_collection_name"][j].tolist()
    parent = _ints(r["c_parent_collection_id"][j])
    after = r["c_start_after_collection_ids"][j].tolist()
    alloc_id = _ints(r["c_alloc_collection_id"][j])
    instances = r["c_inst_count"][j].tolist()
    rows = j.tolist()
    # the name number is the last key: a job with special times gets its
    # ``*_special`` keys before it (below)
    make_extras = _record_maker((*_JOB_EXTRA_KEYS, "collection_name_number"))
    attrs_cols = {
        name_: _ints(r[f"c_{name_}"][j])
        for name_ in (
            "max_per_machine",
            "max_per_switch",
            "vertical_scaling",
            "scheduler",
        )
    }
    # the instances' scheduling class (the highest) if the collection has none
    sched_class = r["c_scheduling_class"][j]
    attrs_cols["scheduling_class"] = _ints(
        np.where(
            sched_class != NULL_INT,
            sched_class,
            np.where(r["c_inst_class_has"][j], r["c_inst_class"][j], NULL_INT),
        )
    )
    ctype_l = _ints(ctype[j])
    has_events = r["c_has_events"][j].tolist()
    req_cpus_l = _floats(req_cpus)
    req_mem_l = _floats(req_mem)
    max_mem_l = _floats(r["c_max_memory"][j])
    windows_l = windows_arr.tolist()

    users: dict[str, int] = {}
    logicals: dict[str, int] = {}
    names: dict[str, int] = {}
    count = len(rows)
    # dependencies (a quarter of the jobs at most): start-after, then parent
    deps: list[tuple[Dependency, ...]] = [()] * count
    preceding: list[int | None] = [None] * count
    for k in np.flatnonzero(
        (r["c_parent_collection_id"][j] != NULL_INT) & (r["c_parent_collection_id"][j] != 0)
        | np.fromiter((bool(a) for a in after), dtype=bool, count=count)
    ).tolist():
        found = [Dependency(job_number.get(p, str(p)), "end") for p in after[k] or ()]
        par = parent[k]
        if par is not None and par != 0:
            found.append(Dependency(job_number.get(par, str(par)), "parent"))
        in_trace = [d.job for d in found if d.kind == "end" and isinstance(d.job, int)]
        preceding[k] = max(in_trace) if in_trace else None
        deps[k] = tuple(found)
    with_deps = sum(1 for d in deps if d)
    end_event_of = {t: event_names.get(t) for t in set(end_type)}
    end_event = [end_event_of[t] for t in end_type]
    status_of = {t: TERMINAL_STATUS.get(t) for t in set(end_type)}
    tier_name = [tiers[p] for p in priority]
    queue_of = {t: TIER_QUEUE.get(t) if t else None for t in set(tier_name)}
    ev_a = [ev_off[row] for row in rows]
    ev_b = [ev_off[row + 1] for row in rows]
    extras_list = list(
        itertools.starmap(
            make_extras,
            zip(
                job_cids,
                ctype_l,
                has_events,
                attrs_cols["scheduling_class"],
                tier_name,
                alloc_id,
                parent,
                [list(a) if a else [] for a in after],
                user,
                logical,
                attrs_cols["max_per_machine"],
                attrs_cols["max_per_switch"],
                attrs_cols["vertical_scaling"],
                attrs_cols["scheduler"],
                submit_raw,
                start_raw,
                start_from,
                end_raw,
                end_event,
                [all_events[a:b] for a, b in zip(ev_a, ev_b, strict=True)],
                instances,
                req_cpus_l,
                req_mem_l,
                used_cpu_ncu,
                used_mem_ncu,
                max_mem_l,
                windows_l,
                _numbers(names, name),
                strict=True,
            ),
        )
    )
    specials: Counter[str] = Counter()
    special_masks = []
    for label, values, present in (
        ("submit", r["c_submit"][j], submit_has),
        ("start", start_raw_arr, start_has),
        ("end", r["c_end"][j], end_has),
    ):
        before = present & (values == TIME_BEFORE_TRACE)
        after_trace = present & (values == TIME_AFTER_TRACE)
        special_masks.append((label, before, after_trace))
    for k in np.flatnonzero(
        np.logical_or.reduce([m for _, b, a in special_masks for m in (b, a)])
    ).tolist():
        extras = extras_list[k]
        number = extras.pop("collection_name_number")
        for label, before, after_trace in special_masks:
            if before[k] or after_trace[k]:
                special = "before_trace" if before[k] else "after_trace"
                extras[f"{label}_special"] = special
                specials[f"{label}_{special}"] += 1
        extras["collection_name_number"] = number
    out_of_order = _flag_out_of_order(extras_list, wait, run)
    # a SCHEDULE after a FINISH or KILL (of the collection or of an instance)
    sched_after_end = (r["c_sched_after_end"][j] > 0) | (r["c_instances_sched_after_end"][j] > 0)
    _flag(extras_list, sched_after_end, "events_out_of_order", "schedule_after_end")
    if sched_after_end.any():
        out_of_order["schedule_after_end"] = int(sched_after_end.sum())
    _flag(extras_list, partial, "request_unknown", "instances_without_request")
    _flag(extras_list, usage_partial, "usage_unknown", "instances_without_usage")
    type_names = _type_names(r)
    for k in np.flatnonzero(type_names[j] != None).tolist():  # noqa: E711
        _flag(extras_list, np.arange(count) == k, "collection_types", type_names[j][k])
    hosts = [tuple(host_names[host_off[row] : host_off[row + 1]]) for row in rows]
    if task_lists is not None:
        task_tuples: Any = [tuple(task_lists[inst_off[row] : inst_off[row + 1]]) for row in rows]
    else:
        task_tuples = itertools.repeat(())
    none = itertools.repeat(None)
    jobs: list[Job] = list(
        map(
            Job,
            range(1, count + 1),
            submit_l,
            wait_l,
            run_l,
            allocated,
            avg_cpu,
            used_memory,
            requested,
            none,
            requested_memory,
            [status_of[t] for t in end_type],
            _numbers(users, user),
            none,
            _numbers(logicals, logical),
            [queue_of[t] for t in tier_name],
            none,
            preceding,
            none,
            name,
            none,
            [n or None for n in instances],
            hosts,
            none,
            priority,
            task_tuples,
            deps,
            extras_list,
        )
    )
    status_counts: Counter[str] = Counter(str(e or "none") for e in end_event)
    tier_counts: Counter[str] = Counter(str(t) for t in tier_name)
    jobs_in_alloc: dict[int, list[int]] = {}
    alloc_ids = cast("list[int]", alloc_id)  # read only where not NULL_INT (None)
    for k in np.flatnonzero(
        (r["c_alloc_collection_id"][j] != NULL_INT) & (r["c_alloc_collection_id"][j] != 0)
    ).tolist():
        jobs_in_alloc.setdefault(alloc_ids[k], []).append(k + 1)
    alloc_events = (_alloc_instance_events(r), _offsets(r["c_alloc_ev_count"]))
    alloc_sets = [
        _alloc_set(
            r, row, all_events, ev_off, alloc_events, to_s, users, tier, event_names, jobs_in_alloc
        )
        for row in alloc_rows.tolist()
    ]
    for record, row in zip(alloc_sets, alloc_rows.tolist(), strict=True):
        if type_names[row] is not None:
            record["collection_types"] = type_names[row]
    alloc_partial = sum(1 for a in alloc_sets if "request_unknown" in a)
    findings = {
        "requests_partial": int(partial.sum()),
        **({"alloc_sets_requests_partial": alloc_partial} if alloc_partial else {}),
        "collections_of_two_types": int((type_names != None).sum()),  # noqa: E711
        "usage_windows": {
            label: int(r[f"c_{name}"].sum())
            for name, label in (
                ("duplicate_windows", "duplicate"),
                ("overlapping_windows", "overlapping"),
                ("time_unknown_windows", "time_unknown"),
                ("average_unknown_windows", "average_unknown"),
            )
            if r[f"c_{name}"].sum()
        },
    }
    unmeasured = int(r["c_scheduled_without_usage"][j][usage_partial].sum())
    if unmeasured:
        cast("dict[str, int]", findings["usage_windows"])["instances_without_usage"] = unmeasured
    header = _header(header_info, jobs, users, logicals, capacity, cpu_scale, memory_scale)
    if out_of_order:
        header.add("Note", _out_of_order_note(out_of_order))
    for note in _finding_notes(findings):
        header.add("Note", note)
    # Job.end_time is submit + wait + run (None unless all three are known)
    ends = (submit_s + np.where(wait < 0, np.nan, wait)) + np.where(run < 0, np.nan, run)
    summary = _summary(
        header_info,
        table_counts,
        r,
        ctype,
        jobs,
        alloc_sets,
        int(r["c_inst_count"][j].sum()),
        users,
        status_counts,
        tier_counts,
        specials,
        out_of_order,
        capacity,
        cpu_scale,
        header,
        submit_s,
        ends,
        with_deps,
    )
    summary.update(findings)
    meta = {
        "summary": summary,
        "capacity": dict(capacity) if capacity else None,
        "normalization": {
            "cpu_unit": "normalized compute units (NCU): 1.0 = the largest machine",
            "memory_unit": "normalized bytes: 1.0 = the largest machine's memory",
            "cpu_scale": cpu_scale,
            "memory_scale": memory_scale,
            "processors": f"ceil(sum of instance CPU requests x {cpu_scale:g}), at least 1",
            "memory": f"normalized memory x {memory_scale:g} per processor",
        },
        "alloc_sets": alloc_sets,
        "names": {
            "user": {v: k for k, v in users.items()},
            "collection_logical_name": {v: k for k, v in logicals.items()},
            "collection_name": {v: k for k, v in names.items()},
        },
        "trace_version": header_info.get("trace_version"),
    }
    return Workload(header, jobs=jobs, meta=meta)


#: Why a job's wait or run time is unknown although its times are: the events are
#: out of order (``extras`` key, label counted in ``summary["times_out_of_order"]``).
OUT_OF_ORDER = (
    ("wait_unknown", "start_before_submit"),
    ("run_unknown", "end_before_start"),
)


def _flag_out_of_order(
    extras_list: list[dict[str, Any]], wait: np.ndarray, run: np.ndarray
) -> Counter[str]:
    """Flag the jobs whose first SCHEDULE precedes their SUBMIT (a negative wait) or
    whose end precedes their start (a negative run): those times become unknown
    (never a negative or invented duration), the raw times stay in the extras, and
    ``extras["wait_unknown"]`` / ``["run_unknown"]`` say why. Returns the counts."""
    counts: Counter[str] = Counter()
    masks = [wait < 0, run < 0]  # NaN (a time unknown) is not out of order
    for k in np.flatnonzero(masks[0] | masks[1]).tolist():
        extras = extras_list[k]
        number = extras.pop("collection_name_number")  # stays the last key
        for (key, label), mask in zip(OUT_OF_ORDER, masks, strict=True):
            if mask[k]:
                extras[key] = label
                counts[label] += 1
        extras["collection_name_number"] = number
    return counts


def _flag(extras_list: list[dict[str, Any]], mask: np.ndarray, key: str, value: Any) -> None:
    """Set ``extras[key] = value`` for the jobs of ``mask`` (before the name number,
    which stays the last key)."""
    for k in np.flatnonzero(mask).tolist():
        extras = extras_list[k]
        number = extras.pop("collection_name_number")
        extras[key] = value
        extras["collection_name_number"] = number


def _type_names(r: Reduced) -> np.ndarray:
    """Per collection: ``None``, or the names of the two collection types its
    events gave (by number) when they gave two."""
    low, high = r["c_type_min"], r["c_type_max"]
    out = np.empty(len(low), dtype=object)
    for k in np.flatnonzero((low != NULL_INT) & (low != high)).tolist():
        out[k] = [COLLECTION_TYPES.get(int(t), str(int(t))) for t in (low[k], high[k])]
    return out


def _finding_notes(findings: Mapping[str, Any]) -> list[str]:
    """Header notes for what the reader found and did not guess around."""
    notes = []
    if findings["requests_partial"]:
        notes.append(
            f"{findings['requests_partial']} jobs have instances without a CPU or memory "
            "request: their requests are unknown (-1), not partial sums"
        )
    if findings["collections_of_two_types"]:
        notes.append(
            f"{findings['collections_of_two_types']} collection ids were given two "
            "collection types (two collections sharing an id?): each is read as its last type"
        )
    if findings.get("alloc_sets_requests_partial"):
        notes.append(
            f"{findings['alloc_sets_requests_partial']} alloc sets have instances without a "
            "CPU or memory request: their requests are unknown, not partial sums"
        )
    usage = dict(findings["usage_windows"])
    unmeasured = usage.pop("instances_without_usage", 0)
    if unmeasured:
        notes.append(
            f"{unmeasured} scheduled instances without usage windows, in jobs whose other "
            "instances have some: those jobs' CPU time and memory are unknown (-1), not "
            "partial sums"
        )
    if usage:
        parts = [f"{n} {label.replace('_', ' ')}" for label, n in usage.items()]
        notes.append(
            "usage windows: "
            + ", ".join(parts)
            + " (duplicates counted once; a job with a window of unknown time or mean "
            "usage has unknown CPU time and memory)"
        )
    return notes


def _out_of_order_note(counts: Counter[str]) -> str:
    parts = []
    if counts["start_before_submit"]:
        parts.append(f"{counts['start_before_submit']} scheduled before their submit (wait -1)")
    if counts["end_before_start"]:
        parts.append(f"{counts['end_before_start']} ended before their start (run -1)")
    if counts["schedule_after_end"]:
        parts.append(
            f"{counts['schedule_after_end']} scheduled again after their FINISH or KILL "
            "(not a new start)"
        )
    return "events out of order: jobs " + "; ".join(parts) + "; the raw times are kept"


def _alloc_set(
    r: Reduced,
    row: int,
    all_events: list[tuple[Any, ...]],
    ev_off: list[int],
    alloc_events: tuple[list[tuple[Any, ...]], list[int]],
    to_s: TimeMapper,
    users: dict[str, int],
    tier: Callable[[int | None], str | None],
    event_names: Mapping[int, str],
    jobs_in_alloc: Mapping[int, list[int]],
) -> dict[str, Any]:
    cid = int(r["c_cid"][row])

    def raw(name: str) -> int | None:
        return int(r[f"c_{name}"][row]) if r[f"c_{name}_has"][row] else None

    def attr(name: str) -> Any:
        value = r[f"c_{name}"][row]
        if isinstance(value, np.integer):
            return None if value == NULL_INT else int(value)
        return value

    end_type = int(r["c_end_type"][row]) if r["c_end_has"][row] else None
    priority = attr("priority")
    user = attr("user")
    submit, start, end = raw("submit"), raw("schedule"), raw("end")
    # as for jobs: a sum over some of the instances would understate the request
    instances = int(r["c_inst_count"][row])
    cpus_known = bool(all_known(r["c_cpus_known"][row], instances))
    memory_known = bool(all_known(r["c_memory_known"][row], instances))
    record: dict[str, Any] = {
        "collection_id": cid,
        "user_id": _number(users, user),
        "user": user,
        "collection_name": attr("collection_name"),
        "priority": priority,
        "tier": tier(priority),
        "scheduling_class": attr("scheduling_class"),
        "submit_time": to_s(submit),
        "start_time": to_s(start),
        "end_time": to_s(end),
        "submit_raw": submit,
        "start_raw": start,
        "end_raw": end,
        "end_event": event_names.get(end_type) if end_type is not None else None,
        "instances": int(r["c_inst_count"][row]),
        "requested_cpus": float(r["c_cpus"][row]) if cpus_known else None,
        "requested_memory_normalized": float(r["c_memory"][row]) if memory_known else None,
        "jobs": list(jobs_in_alloc.get(cid, [])),
        "events": [tuple(e) for e in all_events[ev_off[row] : ev_off[row + 1]]],
    }
    if (r["c_cpus_known"][row] > 0 and not cpus_known) or (
        r["c_memory_known"][row] > 0 and not memory_known
    ):
        record["request_unknown"] = "instances_without_request"
    if not r["c_has_events"][row]:
        # known only from its instances: their events are all there is of its times
        events, off = alloc_events
        record["instance_events"] = events[off[row] : off[row + 1]]
    return record


def written_names(numbers: Mapping[str, int]) -> dict[int, str]:
    """The header name table of ``numbers`` (name -> number), one to one: a header
    name has no blanks, so a name with whitespace is written with each run of it as
    ``_`` (an empty one as ``-``), as :meth:`Header.set_names` does; when that gives
    a name another entry already has (``"a b"`` beside ``"a_b"``), the smallest free
    suffix ``-2``, ``-3`` ... is added (names without whitespace keep theirs; in
    number order). ``meta["names"]`` keeps the names as read."""
    table = {number: name for name, number in numbers.items()}
    plain = {n: name for n, name in table.items() if name and not re.search(r"\s", name)}
    taken = set(plain.values())
    out: dict[int, str] = {}
    for number in sorted(table):
        name = plain.get(number)
        if name is None:
            base = re.sub(r"\s+", "_", str(table[number])) or "-"
            name, k = base, 1
            while name in taken:
                k += 1
                name = f"{base}-{k}"
            taken.add(name)
        out[number] = name
    return out


def _header(
    info: Mapping[str, Any],
    jobs: Sequence[Job],
    users: Mapping[str, int],
    logical: Mapping[str, int],
    capacity: Mapping[str, Any] | None,
    cpu_scale: float,
    memory_scale: float,
) -> Header:
    header = Header()
    header.set("Version", "2.2")
    header.set("Computer", info.get("computer", "Google Borg cell"))
    if info.get("installation"):
        header.set("Installation", info["installation"])
    header.set("Information", info.get("information", "Google cluster-usage traces"))
    header.set(
        "Conversion",
        f"schedlab google reader ({info.get('version_label', 'v3')}); one job per collection "
        "of type JOB; processors = ceil(normalized CPU request x "
        f"{cpu_scale:g}); memory = normalized memory x {memory_scale:g} per processor",
    )
    header.set("MaxJobs", len(jobs))
    header.set("MaxRecords", len(jobs))
    if info.get("unix_start_time") is not None:
        header.set("UnixStartTime", int(info["unix_start_time"]))
    if info.get("time_zone"):
        header.set("TimeZoneString", info["time_zone"])
    header.set("Preemption", "Yes")
    if capacity and capacity.get("cpus"):
        header.set("MaxNodes", capacity["peak_machines"])
        header.set("MaxProcs", processors_from_cpus(capacity["peak_cpus"], cpu_scale))
    header.set("MaxQueues", len(TIERS))
    header.set("Queues", "priority tiers of the Borg trace (queue number = tier)")
    texts = info.get("tier_texts")
    for number, (name, low, high) in enumerate(TIERS, start=1):
        upper = "+" if name == "monitoring" else f"-{high}"
        text = texts[number - 1] if texts else f"{name} priority {low}{upper}"
        header.add("Queue", f"{number} {text}")
    header.add("Note", "times are seconds since the trace start (raw microseconds - 600 s)")
    header.add(
        "Note",
        "special times 0 (before the trace) and 2^63-1 (after it) are unknown (-1); "
        "the raw values are kept",
    )
    if capacity and capacity.get("cpus"):
        header.add(
            "Note",
            f"MaxProcs = floor(peak sum of normalized CPUs of live machines "
            f"{capacity['peak_cpus']:.6g} x {cpu_scale:g})",
        )
    if capacity and capacity.get("unknown_capacity_machines"):
        header.add(
            "Note",
            f"{capacity['unknown_capacity_machines']} machines of unknown capacity (CPU or "
            "memory) are left out of the capacity sums, MaxProcs and MaxNodes while it is "
            "unknown",
        )
    if capacity and capacity.get("unknown_type_events"):
        header.add(
            "Note",
            f"{capacity['unknown_type_events']} machine events of type 0 "
            "(EVENT_TYPE_UNKNOWN) are ignored: they change no machine's capacity",
        )
    header.set_names("User", written_names(users))
    header.set_names("Executable", written_names(logical))
    return header


def _summary(
    info: Mapping[str, Any],
    table_counts: Mapping[str, Mapping[str, int]],
    r: Reduced,
    ctype: np.ndarray,
    jobs: Sequence[Job],
    alloc_sets: Sequence[Mapping[str, Any]],
    instances_total: int,
    users: Mapping[str, int],
    status_counts: Counter[str],
    tier_counts: Counter[str],
    specials: Counter[str],
    out_of_order: Counter[str],
    capacity: Mapping[str, Any] | None,
    cpu_scale: float,
    header: Header,
    submits: np.ndarray,
    ends: np.ndarray,
    with_deps: int,
) -> dict[str, Any]:
    names = info.get("event_names", EVENT_TYPES)
    missing_names = info.get("missing_names", MISSING_TYPES)
    coll_types: Counter[str] = Counter()
    kinds, counts = np.unique(ctype, return_counts=True)
    for kind, n in zip(kinds.tolist(), counts.tolist(), strict=True):
        label = COLLECTION_TYPES.get(kind, "unknown") if kind != NULL_INT else "unknown"
        coll_types[label] += n
    event_types: Counter[str] = Counter()
    kinds, counts = np.unique(r["e_type"], return_counts=True)
    for kind, n in zip(kinds.tolist(), counts.tolist(), strict=True):
        event_types[names.get(kind, str(kind))] += n
    missing: Counter[str] = Counter()
    flagged = r["e_missing"][(r["e_missing"] != NULL_INT) & (r["e_missing"] != 0)]
    kinds, counts = np.unique(flagged, return_counts=True)
    for kind, n in zip(kinds.tolist(), counts.tolist(), strict=True):
        missing[missing_names.get(kind, str(kind))] += n
    real_submits = submits[~np.isnan(submits)]
    real_ends = ends[~np.isnan(ends)]
    summary: dict[str, Any] = {
        "trace": info.get("information", "Google cluster-usage traces"),
        "tables": {k: dict(v) for k, v in table_counts.items()},
        "collections": dict(sorted(coll_types.items())),
        "jobs": len(jobs),
        "alloc_sets": len(alloc_sets),
        "instances": instances_total,
        "users": len(users),
        "collection_event_types": dict(sorted(event_types.items())),
        "collection_missing_types": dict(sorted(missing.items())),
        "jobs_by_end_event": dict(sorted(status_counts.items())),
        "jobs_by_tier": dict(sorted(tier_counts.items())),
        "special_times": dict(sorted(specials.items())),
        "times_out_of_order": dict(sorted(out_of_order.items())),
        "first_submit_s": float(real_submits.min()) if len(real_submits) else None,
        "last_end_s": float(real_ends.max()) if len(real_ends) else None,
        "jobs_with_dependencies": with_deps,
    }
    if capacity and capacity.get("cpus"):
        summary["machines_peak"] = capacity["peak_machines"]
        summary["capacity_peak_ncu"] = capacity["peak_cpus"]
        summary["capacity_mean_ncu"] = capacity["mean_cpus"]
        summary["max_procs"] = header.max_procs
        summary["cpu_scale"] = cpu_scale
    return summary
