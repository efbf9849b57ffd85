"""The cell's capacity over time, from machine_events.

Each machine contributes its capacity (normalized CPUs and memory) from its ADD
event until its REMOVE event; UPDATE changes the capacity of a live machine. The
result is a step function sampled at every time where something changed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .schema import (
    MACHINE_ADD,
    MACHINE_REMOVE,
    MACHINE_UPDATE,
    NULL_INT,
    TIME_AFTER_TRACE,
    TIME_BEFORE_TRACE,
    TIME_OFFSET_US,
    US,
)


def capacity_timeline(machine_events: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """Live machines and their summed capacity after each change.

    Returns ``time_raw`` (raw microseconds, 0 = before the trace), ``time``
    (seconds since the trace start; ``None`` before the trace), ``machines``,
    ``cpus`` and ``memory`` (normalized sums), one entry per distinct time, plus the
    ``peak_*`` values and the time-weighted ``mean_cpus`` over the trace, and
    ``peak_by_size``: ``[cpus, peak]`` pairs, ascending by CPU capacity, the most
    live machines of that (known) CPU capacity at once (``platform infer`` makes one
    node group of each).

    A machine whose CPU capacity is not known (yet) is not counted in ``machines``
    and adds nothing to the sums (nor an unknown memory to ``memory``): the
    machines that ever had an unknown capacity while live are counted in
    ``unknown_capacity_machines``. Events of type 0 (``EVENT_TYPE_UNKNOWN``, "should
    never happen" in the proto) change nothing and are counted in
    ``unknown_type_events``. Both keys are present only when not 0.
    """
    n = len(machine_events["_line"])
    out: dict[str, Any] = {
        "time_raw": [],
        "time": [],
        "machines": [],
        "cpus": [],
        "memory": [],
        "peak_machines": 0,
        "peak_cpus": 0.0,
        "peak_memory": 0.0,
        "mean_cpus": None,
        "peak_by_size": [],
    }
    if n == 0:
        return out
    order = np.lexsort((machine_events["_line"], machine_events["_shard"], machine_events["time"]))
    times = machine_events["time"][order].tolist()
    ids = machine_events["machine_id"][order].tolist()
    kinds = machine_events["type"][order].tolist()
    cpus_l = machine_events["cpus"][order].tolist()
    mem_l = machine_events["memory"][order].tolist()
    # per machine: its latest known capacity (NaN while unknown), and for the live
    # ones what they add to the sums (a capacity that is unknown adds nothing)
    known: dict[int, list[float]] = {}
    live: dict[int, tuple[float, float]] = {}
    counted: set[int] = set()  # live machines of known CPU capacity
    size_of: dict[int, float] = {}  # their CPU capacity
    by_size: dict[float, int] = {}  # live machines of each CPU capacity
    peak_size: dict[float, int] = {}
    touched: set[float] = set()

    def uncount(mid: int) -> None:
        size = size_of.pop(mid, None)
        if size is not None:
            by_size[size] -= 1

    unknown_machines: set[int] = set()
    unknown_type = 0
    total_cpu = total_mem = 0.0
    changed = False
    nan = float("nan")
    for i in range(n):
        mid, kind, t = ids[i], kinds[i], times[i]
        if mid == NULL_INT or t == NULL_INT or t == TIME_AFTER_TRACE:
            pass
        elif kind not in (MACHINE_ADD, MACHINE_REMOVE, MACHINE_UPDATE):
            # EVENT_TYPE_UNKNOWN (0, "should never happen"): neither an addition, a
            # removal nor an update; its capacity is not the machine's either
            unknown_type += 1
        else:
            changed = True
            cap = known.setdefault(mid, [nan, nan])
            if cpus_l[i] == cpus_l[i]:  # not NaN: a missing capacity keeps the old one
                cap[0] = cpus_l[i]
            if mem_l[i] == mem_l[i]:
                cap[1] = mem_l[i]
            new = (cap[0] if cap[0] == cap[0] else 0.0, cap[1] if cap[1] == cap[1] else 0.0)
            old = live.get(mid)
            if kind == MACHINE_REMOVE:
                if old is not None:
                    del live[mid]
                    total_cpu -= old[0]
                    total_mem -= old[1]
                    counted.discard(mid)
                    uncount(mid)
            else:
                if old is None:
                    total_cpu += new[0]
                    total_mem += new[1]
                elif kind == MACHINE_ADD:
                    total_cpu -= old[0]
                    total_mem -= old[1]
                    total_cpu += new[0]
                    total_mem += new[1]
                else:
                    total_cpu += new[0] - old[0]
                    total_mem += new[1] - old[1]
                live[mid] = new
                uncount(mid)
                if cap[0] == cap[0]:
                    counted.add(mid)
                    size_of[mid] = cap[0]
                    by_size[cap[0]] = by_size.get(cap[0], 0) + 1
                    touched.add(cap[0])
                else:
                    counted.discard(mid)
                if cap[0] != cap[0] or cap[1] != cap[1]:
                    unknown_machines.add(mid)
        if not changed or (i + 1 < n and times[i + 1] == t):
            continue
        changed = False
        for size in touched:
            peak_size[size] = max(peak_size.get(size, 0), by_size[size])
        touched.clear()
        out["time_raw"].append(t)
        out["time"].append(None if t == TIME_BEFORE_TRACE else (t - TIME_OFFSET_US) / US)
        out["machines"].append(len(counted))
        out["cpus"].append(round(total_cpu, 9))
        out["memory"].append(round(total_mem, 9))
    if out["cpus"]:
        out["peak_machines"] = max(out["machines"])
        out["peak_cpus"] = max(out["cpus"])
        out["peak_memory"] = max(out["memory"])
        out["mean_cpus"] = _time_weighted_mean(out["time_raw"], out["cpus"])
        out["peak_by_size"] = [[size, peak] for size, peak in sorted(peak_size.items()) if peak]
    # only when there are any (a clean trace's timeline has no such keys)
    if unknown_type:
        out["unknown_type_events"] = unknown_type
    if unknown_machines:
        out["unknown_capacity_machines"] = len(unknown_machines)
    return out


def _time_weighted_mean(times: list[int], values: list[float]) -> float:
    """Mean of a step function from its first real time to its last change."""
    start = max(times[0], TIME_OFFSET_US) if times[0] == TIME_BEFORE_TRACE else times[0]
    end = times[-1]
    if end <= start:
        return values[-1]
    area = 0.0
    for i in range(len(times) - 1):
        a = max(times[i], start)
        b = times[i + 1]
        if b > a:
            area += values[i] * (b - a)
    return area / (end - start)


def processors_from_cpus(cpus: float, cpu_scale: float) -> int:
    """Whole processors for a normalized CPU capacity: ``floor(cpus x cpu_scale)``."""
    return math.floor(cpus * cpu_scale + 1e-9)
