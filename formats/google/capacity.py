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
    ``peak_*`` values and the time-weighted ``mean_cpus`` over the trace.
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
    }
    if n == 0:
        return out
    order = np.lexsort((machine_events["_line"], machine_events["_shard"], machine_events["time"]))
    times = machine_events["time"][order].tolist()
    ids = machine_events["machine_id"][order].tolist()
    kinds = machine_events["type"][order].tolist()
    cpus_l = machine_events["cpus"][order].tolist()
    mem_l = machine_events["memory"][order].tolist()
    live: dict[int, list[float]] = {}
    known: dict[int, list[float]] = {}
    total_cpu = total_mem = 0.0
    for i in range(n):
        mid, kind, t = ids[i], kinds[i], times[i]
        if mid == NULL_INT or t == NULL_INT or t == TIME_AFTER_TRACE:
            continue
        cap = known.setdefault(mid, [0.0, 0.0])
        old = list(cap)
        if cpus_l[i] == cpus_l[i]:  # not NaN: a missing capacity keeps the old one
            cap[0] = cpus_l[i]
        if mem_l[i] == mem_l[i]:
            cap[1] = mem_l[i]
        if kind == MACHINE_ADD or (kind == MACHINE_UPDATE and mid not in live):
            if mid in live:
                total_cpu -= old[0]
                total_mem -= old[1]
            live[mid] = cap
            total_cpu += cap[0]
            total_mem += cap[1]
        elif kind == MACHINE_UPDATE:
            total_cpu += cap[0] - old[0]
            total_mem += cap[1] - old[1]
        elif kind == MACHINE_REMOVE and mid in live:
            del live[mid]
            total_cpu -= old[0]
            total_mem -= old[1]
        if i + 1 < n and times[i + 1] == t:
            continue
        out["time_raw"].append(t)
        out["time"].append(None if t == TIME_BEFORE_TRACE else (t - TIME_OFFSET_US) / US)
        out["machines"].append(len(live))
        out["cpus"].append(round(total_cpu, 9))
        out["memory"].append(round(total_mem, 9))
    if out["cpus"]:
        out["peak_machines"] = max(out["machines"])
        out["peak_cpus"] = max(out["cpus"])
        out["peak_memory"] = max(out["memory"])
        out["mean_cpus"] = _time_weighted_mean(out["time_raw"], out["cpus"])
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
