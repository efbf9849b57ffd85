"""Collection records -> a :class:`~schedlab.model.Workload` (the mapping table of
``docs/formats/google.md`` in code).

Both trace versions and both engines (in-process and Dask) end here, so the model
a user gets never depends on how the rows were read.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from schedlab.model import Dependency, Header, Job, Task, Workload

from .capacity import processors_from_cpus
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


def special_label(raw: int | None) -> str | None:
    """``"before_trace"``, ``"after_trace"`` or ``None``."""
    if raw == TIME_BEFORE_TRACE:
        return "before_trace"
    if raw == TIME_AFTER_TRACE:
        return "after_trace"
    return None


def _ceil_procs(cpus: float, scale: float) -> int:
    return max(1, math.ceil(cpus * scale - 1e-9))


def _number(table: dict[str, int], value: str | None) -> int | None:
    if value is None:
        return None
    number = table.get(value)
    if number is None:
        number = table[value] = len(table) + 1
    return number


def _order_key(record: Mapping[str, Any]) -> tuple[int, int]:
    times = [record["submit"]] if record["submit"] is not None else []
    if not times:
        times = [e[0] for e in record["events"]]
        times += [ev[0] for inst in record["instances"] for ev in inst["events"][:1]]
    first = min(times) if times else TIME_AFTER_TRACE
    return first, record["collection_id"]


def build_workload(
    records: Sequence[dict[str, Any]],
    *,
    header_info: Mapping[str, Any],
    capacity: Mapping[str, Any] | None,
    table_counts: Mapping[str, Mapping[str, int]],
    cpu_scale: float,
    memory_scale: float,
    special_times: str = "unknown",
    tasks: bool = True,
    tier: Any = tier_of,
    event_names: Mapping[int, str] = EVENT_TYPES,
    trace_end: float | None = None,
) -> Workload:
    """The workload of the jobs (collections of type JOB) of ``records``.

    ``header_info`` gives the header texts (``computer``, ``information``,
    ``version_label``, optional ``unix_start_time`` and ``time_zone``);
    ``capacity`` is the timeline of :func:`.capacity.capacity_timeline`.
    """
    to_s = TimeMapper(special_times, trace_end)
    ordered = sorted(records, key=_order_key)
    jobs_records = [r for r in ordered if r["collection_type"] != ALLOC_SET]
    alloc_records = [r for r in ordered if r["collection_type"] == ALLOC_SET]
    job_number = {r["collection_id"]: i for i, r in enumerate(jobs_records, start=1)}
    users: dict[str, int] = {}
    logical: dict[str, int] = {}
    names: dict[str, int] = {}
    jobs: list[Job] = []
    status_counts: Counter[str] = Counter()
    tier_counts: Counter[str] = Counter()
    specials: Counter[str] = Counter()
    instances_total = 0
    for record in jobs_records:
        job = _job(record, job_number, to_s, cpu_scale, memory_scale, tasks, tier, event_names)
        job.user_id = _number(users, record["user"])
        job.executable_number = _number(logical, record["collection_logical_name"])
        job.extras["collection_name_number"] = _number(names, record["collection_name"])
        jobs.append(job)
        instances_total += len(record["instances"])
        status_counts[str(job.extras.get("end_event") or "none")] += 1
        tier_counts[str(job.extras.get("tier"))] += 1
        for key in ("submit", "start", "end"):
            label = job.extras.get(f"{key}_special")
            if label:
                specials[f"{key}_{label}"] += 1
    jobs_in_alloc: dict[int, list[int]] = {}
    for r in jobs_records:
        if r["alloc_collection_id"]:
            jobs_in_alloc.setdefault(r["alloc_collection_id"], []).append(
                job_number[r["collection_id"]]
            )
    alloc_sets = [
        _alloc_set(r, to_s, users, tier, event_names, jobs_in_alloc) for r in alloc_records
    ]
    header = _header(header_info, jobs, users, logical, capacity, cpu_scale, memory_scale)
    summary = _summary(
        header_info,
        table_counts,
        jobs,
        alloc_sets,
        instances_total,
        users,
        status_counts,
        tier_counts,
        specials,
        capacity,
        cpu_scale,
        header,
        records,
    )
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
            "collection_logical_name": {v: k for k, v in logical.items()},
            "collection_name": {v: k for k, v in names.items()},
        },
        "trace_version": header_info.get("trace_version"),
    }
    return Workload(header, jobs=jobs, meta=meta)


def _job(
    record: Mapping[str, Any],
    job_number: Mapping[int, int],
    to_s: TimeMapper,
    cpu_scale: float,
    memory_scale: float,
    with_tasks: bool,
    tier: Any,
    event_names: Mapping[int, str],
) -> Job:
    cid = record["collection_id"]
    instances = record["instances"]
    submit_raw = record["submit"]
    start_raw = record["schedule"]
    start_from = "collection"
    if start_raw is None:
        scheduled = [i["start_raw"] for i in instances if i["start_raw"] is not None]
        start_raw = min(scheduled) if scheduled else None
        start_from = "instances" if scheduled else None
    end_raw = record["end"]
    submit, start, end = to_s(submit_raw), to_s(start_raw), to_s(end_raw)
    wait = start - submit if submit is not None and start is not None else None
    run = end - start if start is not None and end is not None else None
    if run is not None and run < 0:
        run = None
    if wait is not None and wait < 0:
        wait = None
    totals = record["totals"]
    req_cpus = totals["cpus"] if totals["cpus_known"] else None
    req_mem = totals["memory"] if totals["memory_known"] else None
    requested = _ceil_procs(req_cpus, cpu_scale) if req_cpus is not None else None
    allocated = (
        _ceil_procs(totals["scheduled_cpus"], cpu_scale) if totals["scheduled_cpus_known"] else None
    )
    windows = totals["usage_windows"]
    cpu_seconds, used_mem, max_mem = (
        totals["cpu_seconds"],
        totals["memory_mean"],
        totals["max_memory"],
    )
    priority = record["priority"]
    if priority is None:
        known = [i["priority"] for i in instances if i["priority"] is not None]
        priority = max(known) if known else None
    tier_name = tier(priority)
    end_type = record["end_type"]
    deps: list[Dependency] = []
    for pred in record["start_after_collection_ids"]:
        deps.append(Dependency(job_number.get(pred, str(pred)), "end"))
    parent = record["parent_collection_id"]
    if parent is not None and parent != 0:
        deps.append(Dependency(job_number.get(parent, str(parent)), "parent"))
    in_trace = [d.job for d in deps if d.kind == "end" and isinstance(d.job, int)]
    preceding = max(in_trace) if in_trace else None  # SWF keeps one: the latest job
    machines = {i["machine_id"] for i in instances}
    hosts = [str(m) for m in sorted(m for m in machines if m is not None and m > 0)]
    extras: dict[str, Any] = {
        "collection_id": cid,
        "collection_type": record["collection_type"],
        "has_collection_events": record["has_collection_events"],
        "scheduling_class": record["scheduling_class"],
        "tier": tier_name,
        "alloc_collection_id": record["alloc_collection_id"],
        "parent_collection_id": parent,
        "start_after_collection_ids": list(record["start_after_collection_ids"]),
        "user": record["user"],
        "collection_logical_name": record["collection_logical_name"],
        "max_per_machine": record["max_per_machine"],
        "max_per_switch": record["max_per_switch"],
        "vertical_scaling": record["vertical_scaling"],
        "scheduler": record["scheduler"],
        "submit_raw": submit_raw,
        "start_raw": start_raw,
        "start_from": start_from,
        "end_raw": end_raw,
        "end_event": event_names.get(end_type) if end_type is not None else None,
        "events": record["events"],
        "instances": len(instances),
        "requested_cpus": req_cpus,
        "requested_memory_normalized": req_mem,
        "used_cpu_seconds_ncu": cpu_seconds if windows else None,
        "used_memory_normalized": used_mem if windows else None,
        "max_memory_normalized": max_mem,
        "usage_windows": windows,
    }
    for key, raw in (("submit", submit_raw), ("start", start_raw), ("end", end_raw)):
        label = special_label(raw)
        if label:
            extras[f"{key}_special"] = label
    job = Job(
        job_number=job_number[cid],
        submit_time=submit,
        wait_time=wait,
        run_time=run,
        allocated_processors=allocated,
        average_cpu_time=(cpu_seconds * cpu_scale / allocated) if windows and allocated else None,
        used_memory=(used_mem * memory_scale / allocated) if windows and allocated else None,
        requested_processors=requested,
        requested_memory=(req_mem * memory_scale / requested)
        if req_mem is not None and requested
        else None,
        status=TERMINAL_STATUS.get(end_type) if end_type is not None else None,
        queue_number=TIER_QUEUE.get(tier_name) if tier_name else None,
        preceding_job_number=preceding,
        name=record["collection_name"],
        nodes=len(instances) or None,
        hosts=tuple(hosts),
        priority=priority,
        dependencies=tuple(deps),
        extras=extras,
    )
    if with_tasks:
        job.tasks = tuple([_task(i, to_s, cpu_scale, event_names) for i in instances])
    return job


def _task(
    inst: dict[str, Any], to_s: TimeMapper, cpu_scale: float, event_names: Mapping[int, str]
) -> Task:
    """The task of one instance; its ``extras`` is the instance record itself (raw
    times, events, request, placement and usage), not a copy."""
    end_type = inst["end_type"]
    machine = inst["machine_id"]
    inst["end_event"] = event_names.get(end_type) if end_type is not None else None
    return Task(
        str(inst["instance_index"]),
        to_s(inst["start_raw"]),
        to_s(inst["end_raw"]),
        inst["cpus"] * cpu_scale if inst["cpus"] is not None else None,
        str(machine) if machine is not None else None,
        TERMINAL_STATUS.get(end_type) if end_type is not None else None,
        inst,
    )


def _alloc_set(
    record: Mapping[str, Any],
    to_s: TimeMapper,
    users: dict[str, int],
    tier: Any,
    event_names: Mapping[int, str],
    jobs_in_alloc: Mapping[int, list[int]],
) -> dict[str, Any]:
    cid = record["collection_id"]
    totals = record["totals"]
    end_type = record["end_type"]
    return {
        "collection_id": cid,
        "user_id": _number(users, record["user"]),
        "user": record["user"],
        "collection_name": record["collection_name"],
        "priority": record["priority"],
        "tier": tier(record["priority"]),
        "scheduling_class": record["scheduling_class"],
        "submit_time": to_s(record["submit"]),
        "start_time": to_s(record["schedule"]),
        "end_time": to_s(record["end"]),
        "submit_raw": record["submit"],
        "start_raw": record["schedule"],
        "end_raw": record["end"],
        "end_event": event_names.get(end_type) if end_type is not None else None,
        "instances": len(record["instances"]),
        "requested_cpus": totals["cpus"] if totals["cpus_known"] else None,
        "requested_memory_normalized": totals["memory"] if totals["memory_known"] else None,
        "jobs": list(jobs_in_alloc.get(cid, [])),
        "events": [tuple(e) for e in record["events"]],
    }


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
    header.set_names("User", {v: k for k, v in users.items()})
    header.set_names("Executable", {v: k for k, v in logical.items()})
    return header


def _summary(
    info: Mapping[str, Any],
    table_counts: Mapping[str, Mapping[str, int]],
    jobs: Sequence[Job],
    alloc_sets: Sequence[Mapping[str, Any]],
    instances_total: int,
    users: Mapping[str, int],
    status_counts: Counter[str],
    tier_counts: Counter[str],
    specials: Counter[str],
    capacity: Mapping[str, Any] | None,
    cpu_scale: float,
    header: Header,
    records: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    submits = [j.submit_time for j in jobs if j.submit_time is not None]
    ends = [j.end_time for j in jobs if j.end_time is not None]
    coll_types: Counter[str] = Counter()
    event_types: Counter[str] = Counter()
    missing: Counter[str] = Counter()
    names = info.get("event_names", EVENT_TYPES)
    for record in records:
        coll_types[COLLECTION_TYPES.get(record["collection_type"], "unknown")] += 1
        for event in record["events"]:
            event_types[names.get(event[1], str(event[1]))] += 1
            if event[2]:
                missing[info.get("missing_names", MISSING_TYPES).get(event[2], str(event[2]))] += 1
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
        "first_submit_s": min(submits) if submits else None,
        "last_end_s": max(ends) if ends else None,
        "jobs_with_dependencies": sum(1 for j in jobs if j.dependencies),
    }
    if capacity and capacity.get("cpus"):
        summary["machines_peak"] = capacity["peak_machines"]
        summary["capacity_peak_ncu"] = capacity["peak_cpus"]
        summary["capacity_mean_ncu"] = capacity["mean_cpus"]
        summary["max_procs"] = header.max_procs
        summary["cpu_scale"] = cpu_scale
    return summary
