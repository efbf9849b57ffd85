"""Writer of a workload as Google trace v3 tables (a directory of JSON-lines shards).

Writes ``collection_events``, ``instance_events`` and, when the jobs carry usage,
``instance_usage``, named like the BigQuery export
(``collection_events-000000000000.json.gz``) with int64 values as JSON strings, as
the export writes them. Reading the directory back with the ``google`` reader
gives the same jobs.

Jobs read from a Google trace keep their events in ``extras``; they are written
verbatim when they still agree with the job's submit, wait and run times. Jobs
from other formats, and simulated schedules whose times changed, get synthesized
events: SUBMIT at the submit time, SCHEDULE at the start, and FINISH / FAIL /
KILL at the end by SWF status (1 / 0 / 5), one instance per task (or one instance
per job with the job's processors as its CPU request).

What the tables cannot hold is reported through :mod:`schedlab.losses` (see
docs/formats/conversions.md): the header (only ``MaxProcs``/``MaxNodes`` are
carried, as synthesized ``machine_events``, for workloads not read from a Google
trace), SWF fields Borg has no place for (requested time, group, partition, think
time, exit code, account), a run time or wait whose start is unknown, an unknown or
partial status (written as FINISH), and average CPU time and used memory of jobs
without kept usage unless both are known (then one synthesized usage window
carries them). Collection ids are the job numbers (``extras["collection_id"]``
after reading back, since the reader numbers jobs 1..N by submit time); a duplicate
or missing number gets a fresh id above every other, reported as a loss of
``job_number``. A job without a submit time gets a SUBMIT "before the trace" (time
0), which the reader reads back as unknown, so no job vanishes. Processors: the
instance's CPU request is the allocated count of a job that started (else the
requested count); a requested count that differs from it is reported lost. A job
with tasks gets one instance per task, each with a distinct instance index; what
the reader derives from them (processor counts, memory, nodes, hosts, usage, the
tasks themselves) is compared with the job and every difference reported. A job
read without its tasks (reader option ``tasks=False``) whose kept events are
written gets ``nodes`` instances rebuilt from its totals: the first asks for the
CPU and memory request (the kept ``requested_cpus`` and
``requested_memory_normalized`` while they still give the job's) and carries the
kept usage totals, a second never scheduled one asks for the processors that
were requested but not allocated, instance ``k`` is placed on the ``k``-th host
(at its SUBMIT when it never started); what the reader derives from them (the
fields above and those extras) is compared with the job and every difference
reported. A job written from its fields is one instance: its ``nodes`` and
``tasks`` are compared with what the reader gives back (1, and one task). User and
logical names are written one to one with the numbers (:func:`_name_table`), so
the reader's numbering keeps the grouping; what of the header name tables is not
written as it is, and free-text header comments, are reported.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any, overload

import numpy as np
from schedlab.io import open_output
from schedlab.losses import Losses, note_extras, note_fields, writer_losses
from schedlab.model import Job, Task, Workload

from .assemble import _INSTANCE_KEYS, _JOB_EXTRA_KEYS, _header
from .frames import INT32_MAX, MAX_NORMALIZED
from .reduce import _LIFECYCLE_RANK
from .schema import (
    ALLOC_SET,
    DEFAULT_CPU_SCALE,
    DEFAULT_MEMORY_SCALE,
    EVENT_TYPES,
    FAIL,
    FINISH,
    INT64_FIELDS,
    JOB,
    KILL,
    MACHINE_ADD,
    REQUEUED_ENDS,
    RESUBMIT_EVENTS,
    SCHEDULE,
    SUBMIT,
    TERMINAL_EVENTS,
    TERMINAL_STATUS,
    TIER_QUEUE,
    TIME_AFTER_TRACE,
    TIME_BEFORE_TRACE,
    TIME_OFFSET_US,
    US,
    by_name,
    tier_of,
)
from .v3_reader import V3_HEADER_INFO

_STATUS_EVENT = {1: FINISH, 0: FAIL, 5: KILL}
_EVENT_NUMBER = by_name(EVENT_TYPES)


class _ShardWriter:
    """Rows of one table, split into shard files of ``shard_rows`` rows."""

    def __init__(self, directory: Path, table: str, compress: bool, shard_rows: int) -> None:
        self.directory = directory
        self.table = table
        self.suffix = ".json.gz" if compress else ".json"
        self.shard_rows = max(1, shard_rows)
        self.index = 0
        self.rows_in_shard = 0
        self.fh: IO[str] | None = None
        self.rows = 0

    def write(self, record: Mapping[str, Any]) -> None:
        if self.fh is None or self.rows_in_shard >= self.shard_rows:
            self._next()
        out = {}
        for key, value in record.items():
            if value is None:
                continue
            out[key] = str(value) if key in INT64_FIELDS else value
        assert self.fh is not None
        self.fh.write(json.dumps(out, separators=(",", ":")) + "\n")
        self.rows_in_shard += 1
        self.rows += 1

    def _next(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.index += 1
        name = f"{self.table}-{self.index:012d}{self.suffix}"
        self.fh = open_output(self.directory / name)
        self.rows_in_shard = 0

    def close(self, always: bool = False) -> None:
        if self.fh is None and always:
            self._next()
        if self.fh is not None:
            self.fh.close()
            self.fh = None


@overload
def _raw(seconds: float) -> int: ...
@overload
def _raw(seconds: float | None, special: str | None = None) -> int | None: ...
def _raw(seconds: float | None, special: str | None = None) -> int | None:
    """The raw time (microseconds from the trace's offset) of ``seconds``; the
    special "before" or "after the trace" time; ``None`` when unknown."""
    if special == "before_trace":
        return TIME_BEFORE_TRACE
    if special == "after_trace":
        return TIME_AFTER_TRACE
    if seconds is None:
        return None
    return round(seconds * US) + TIME_OFFSET_US


def _seconds(raw: int | None) -> float | None:
    if raw is None or raw in (TIME_BEFORE_TRACE, TIME_AFTER_TRACE):
        return None
    return (raw - TIME_OFFSET_US) / US


def _events_agree(job: Job) -> bool:
    """True when the kept raw times still give the job's submit, start and end."""
    extras = job.extras
    if "events" not in extras or "submit_raw" not in extras:
        return False
    submit = _seconds(extras.get("submit_raw"))
    start = _seconds(extras.get("start_raw"))
    end = _seconds(extras.get("end_raw"))
    if job.submit_time is not None and submit != job.submit_time:
        return False
    # (exact: the reader computes the wait and the run time as these differences)
    if job.wait_time is not None and (
        start is None or submit is None or start - submit != job.wait_time
    ):
        return False
    return not (
        job.run_time is not None and (end is None or start is None or end - start != job.run_time)
    )


#: The name tables written as a collection field: (job field, the extra keeping the
#: name read from a trace, header label, prefix of a made-up name, what is named).
_NAMED = (
    ("user_id", "user", "User", "user", "users"),
    ("executable_number", "collection_logical_name", "Executable", "executable", "executables"),
)


def _kept_name(job: Job, key: str) -> Any:
    """The name a job read from a trace keeps in ``extras[key]``; ``None`` when it
    keeps none (or an empty one, which the reader reads as unknown)."""
    value = job.extras.get(key)
    return None if value is None or value == "" else value


def _name_table(
    jobs: list[Job], field: str, key: str, table: Mapping[int, str], prefix: str
) -> dict[int, str]:
    """The name written for each number of ``field`` that a job without a kept name
    has. The reader numbers the names it reads, so the names must be one to one
    with the numbers: a number keeps its name from the header ``table`` unless the
    name is empty or another number has it (a kept name, or an earlier number of
    the table); the others get ``<prefix><number>``, with a suffix ``-2``, ``-3``
    ... where that is a name already written."""
    owners: dict[Any, set[int | None]] = {}
    for job in jobs:
        kept = _kept_name(job, key)
        if kept is not None:
            owners.setdefault(kept, set()).add(getattr(job, field))
    needed = sorted(
        {
            number
            for job in jobs
            if _kept_name(job, key) is None and (number := getattr(job, field)) is not None
        }
    )
    names: dict[int, str] = {}
    for number in needed:
        real = table.get(number)
        if real and owners.setdefault(real, {number}) == {number}:
            names[number] = real
    for number in needed:
        if number in names:
            continue
        name, suffix = f"{prefix}{number}", 2
        while name in owners:
            name, suffix = f"{prefix}{number}-{suffix}", suffix + 1
        owners[name] = {number}
        names[number] = name
    return names


def _note_names(
    workload: Workload,
    jobs: list[Job],
    tables: Mapping[str, Mapping[int, str]],
    losses: Losses,
) -> None:
    """Report what the written names do not give back: jobs whose number and name
    are not one to one (the reader numbers the names, so such jobs merge or split),
    a kept name without a number, and entries of the header name tables that are
    not written as they are (entries no job uses, a name written as another one,
    text after the name)."""
    alloc_users = {a.get("user") for a in workload.meta.get("alloc_sets") or ()}
    for field, key, label, _, what in _NAMED:
        names = tables[field]
        pairs = []
        for job in jobs:
            number, kept = getattr(job, field), _kept_name(job, key)
            pairs.append((number, kept if kept is not None else names.get(number)))
        forward: dict[Any, set[Any]] = {}
        backward: dict[Any, set[Any]] = {}
        for number, name in pairs:
            if number is not None and name is not None:
                forward.setdefault(number, set()).add(name)
                backward.setdefault(name, set()).add(number)
        invented = sum(1 for number, name in pairs if number is None and name is not None)
        merged = sum(
            1
            for number, name in pairs
            if number is not None
            and name is not None
            and (len(forward[number]) > 1 or len(backward[name]) > 1)
        )
        losses.add(field, "unknown, read back as the number of its kept name", invented)
        losses.add(
            field, "not one to one with the names written (the reader numbers names)", merged
        )
        unused = renamed = empty = details = 0
        for entry in workload.header.table(label):
            written = forward.get(entry.number)
            if written is None:
                if label != "User" or entry.name not in alloc_users:
                    unused += 1
                continue
            if not entry.name:
                empty += 1
            elif {re.sub(r"\s+", "_", str(n)) for n in written} != {entry.name}:
                renamed += 1
            if entry.details:
                details += 1
        losses.add(f"header.{label}", f"entries of {what} no job uses, not written", unused)
        losses.add(
            f"header.{label}",
            "a name written as another one (a name that another number has, or not "
            "the jobs' kept name)",
            renamed,
        )
        losses.add(
            f"header.{label}",
            "an empty name, written as a made-up one (the reader reads an empty name as unknown)",
            empty,
        )
        losses.add(f"header.{label}", "text after a name not written", details)


def _collection_attributes(
    job: Job,
    cid: int,
    collection_ids: Mapping[int, int],
    header_users: Mapping[int, str],
    header_programs: Mapping[int, str] | None = None,
) -> dict[str, Any]:
    extras = job.extras
    after = extras.get("start_after_collection_ids")
    parent = extras.get("parent_collection_id")
    if after is None:
        after = []
        for dep in job.dependencies:
            if dep.kind in ("end", "success") and isinstance(dep.job, int):
                after.append(collection_ids.get(dep.job, dep.job))
        if not after and job.preceding_job_number:
            after = [collection_ids.get(job.preceding_job_number, job.preceding_job_number)]
        # a negative job number (an error in the source log) is no collection id:
        # the reader refuses it (reported by _note_links)
        after = [a for a in after if a >= 0]
    if parent is None and "parent_collection_id" not in extras:
        for dep in job.dependencies:
            if dep.kind == "parent":
                parent = (
                    collection_ids.get(dep.job, dep.job)
                    if isinstance(dep.job, int)
                    else int(dep.job)
                    if str(dep.job).isdigit()
                    else None
                )
        if parent is not None and parent < 0:
            parent = None  # (reported by _note_links)
    # the names of :func:`_name_table`: the reader numbers them in job order, so
    # the grouping survives
    user = _kept_name(job, "user")
    if user is None and job.user_id is not None:
        user = header_users.get(job.user_id, f"user{job.user_id}")
    logical = _kept_name(job, "collection_logical_name")
    if logical is None and job.executable_number is not None:
        logical = (header_programs or {}).get(
            job.executable_number, f"executable{job.executable_number}"
        )
    return {
        "collection_id": cid,
        "scheduling_class": extras.get("scheduling_class"),
        "collection_type": JOB,
        "priority": None if job.priority is None else int(job.priority),
        "alloc_collection_id": extras.get("alloc_collection_id"),
        "user": user,
        "collection_name": job.name,
        "collection_logical_name": logical,
        "parent_collection_id": parent,
        "start_after_collection_ids": list(after),
        "max_per_machine": extras.get("max_per_machine"),
        "max_per_switch": extras.get("max_per_switch"),
        "vertical_scaling": extras.get("vertical_scaling"),
        "scheduler": extras.get("scheduler"),
    }


def _ran(job: Job) -> bool:
    """True when the job started: its start is known, or it has a run time (a start
    at a time the trace does not know, such as every LCG-2005 job's)."""
    return job.start_time is not None or job.run_time is not None


def _in_trace(seconds: float | None) -> float | None:
    """``seconds`` when the trace can hold it as a real time (after -600 s), else
    ``None`` (the raw value would be 0, "before the trace", or negative)."""
    if seconds is None or _raw(seconds) <= 0:
        return None
    return seconds


def _synthetic_times(job: Job) -> tuple[int | None, int | None, int | None, int | None]:
    extras = job.extras
    submit_s = _in_trace(job.submit_time)
    submit = _raw(submit_s, extras.get("submit_special") if job.submit_time is None else None)
    if submit is None:
        # an unknown submit time: "before the trace" is what the reader reads as
        # unknown, and a collection without any event would vanish
        submit = TIME_BEFORE_TRACE
    start_s = _in_trace(job.start_time)
    start = _raw(start_s, extras.get("start_special") if job.start_time is None else None)
    if start is None and job.start_time is None and job.run_time is not None:
        # it ran, from a time the trace does not know: SCHEDULE "after the trace"
        # (read back as unknown) keeps the fact and the allocated processors
        start = TIME_AFTER_TRACE
    end_s = _in_trace(job.end_time)
    end = _raw(end_s, extras.get("end_special") if job.end_time is None else None)
    end_type = _STATUS_EVENT.get(job.status) if job.status is not None else None
    if end_type is None and end is not None:
        end_type = FINISH
    if end_type is not None and end is None:
        # the job ended, at a time that is not known (no start): "after the trace"
        # is the unknown time, and the event keeps the status
        end = TIME_AFTER_TRACE
    return submit, start, end, end_type


def _note_times(job: Job, times: tuple[int | None, ...], losses: Losses) -> None:
    """Report the submit, wait and run times that the reader's arithmetic does not
    give back exactly from the written raw times (whole microseconds since the
    trace start; the wait and the run time are read as differences of times in
    seconds, in floating point). Times not written are reported by
    :func:`_note_job`."""
    submit, start, end = (_seconds(t) for t in times[:3])
    pairs = (
        ("submit_time", job.submit_time, submit),
        ("wait_time", job.wait_time, None if start is None or submit is None else start - submit),
        ("run_time", job.run_time, None if end is None or start is None else end - start),
    )
    for field, value, again in pairs:
        if value is None or again is None or value < 0 or again == value:
            continue
        if round(value * US) / US == value:
            losses.add(field, "changed in the last digits (the reader subtracts times in seconds)")
        else:
            losses.add(field, "rounded to whole microseconds (the trace's time unit)")


def _read_procs(cpus: float, cpu_scale: float) -> int:
    """The processor count the reader makes of a total CPU request (NCU)."""
    return max(1, math.ceil(cpus * cpu_scale - 1e-9))


def _rebuilt_instances(
    job: Job, started: bool, cpu_scale: float, memory_scale: float
) -> tuple[Task, ...]:
    """The instances of a job without tasks whose kept events are written (a job
    read with ``tasks=False``), as tasks for :func:`_instance_rows`.

    ``nodes`` instances (when ``nodes`` is unknown: none if the job had no
    instance or has no processors, else one), with the job's events. The first asks
    for the CPU request (the kept ``requested_cpus`` while it still gives the job's
    processors) and the whole memory request (the kept
    ``requested_memory_normalized`` while it still gives the job's), and carries
    the kept usage totals while they still give the job's average CPU time and used
    memory (else the synthesized usage, if any); the other scheduled instances get
    one empty window each of its count (the reader's usage is unknown where a
    scheduled instance has none). When fewer processors were
    allocated than requested, the second asks for the rest and is never scheduled.
    Instance ``k`` is placed on the ``k``-th host. What the reader will not give
    back is reported by :func:`_note_instances`."""
    ex = job.extras
    alloc, req = job.allocated_processors, job.requested_processors
    if job.nodes is not None and job.nodes > 0:
        count = min(int(job.nodes), INT32_MAX + 1)
    elif ex.get("instances") == 0 or (alloc is None and req is None):
        count = 0
    else:
        count = 1
    if count == 0:
        return ()
    kept_cpus = ex.get("requested_cpus")
    if not (isinstance(kept_cpus, float) and 0 <= kept_cpus <= MAX_NORMALIZED):
        kept_cpus = None
    cpus: float | None = None
    pending: float | None = None
    memory: float | None = None
    if (alloc is not None or req is not None) and _cpus_in_bounds(job, cpu_scale):
        cpus = _instance_processors(job) / cpu_scale
        if kept_cpus is not None and _read_procs(kept_cpus, cpu_scale) == _read_procs(
            cpus, cpu_scale
        ):
            cpus = kept_cpus
    if started and count >= 2 and alloc is not None and req is not None and 0 < alloc < req:
        # some instances never started: the second asks for the rest, unscheduled
        first = alloc / cpu_scale
        rests = [(req - alloc) / cpu_scale]
        if kept_cpus is not None and kept_cpus > first:
            rests.insert(0, kept_cpus - first)
        for rest in rests:
            if (
                _read_procs(first, cpu_scale) == alloc
                and _read_procs(first + rest, cpu_scale) == req
            ):
                cpus, pending = first, rest
                break
    if cpus is not None and job.requested_memory is not None:
        requested = _read_procs(cpus + (pending or 0.0), cpu_scale)
        memory = job.requested_memory * requested / memory_scale
        kept = ex.get("requested_memory_normalized")
        if isinstance(kept, float) and kept * memory_scale / requested == job.requested_memory:
            memory = kept
        if not 0 <= memory <= MAX_NORMALIZED:
            memory = None  # the reader accepts no such request (reported)
    allocated = _read_procs(cpus, cpu_scale) if started and cpus is not None else None
    usage = _kept_usage(job, allocated, cpu_scale, memory_scale)
    if usage is None:
        usage = _synthetic_usage(job, cpu_scale, memory_scale)
    # every scheduled instance has usage windows (the reader makes the usage of a
    # job with a scheduled instance without any unknown): the others get one empty
    # window each, taken from the count when it has enough (else the count read
    # back is larger: reported)
    others = [k for k in range(1, count) if started and not (k == 1 and pending is not None)]
    empty: dict[str, Any] | None = None
    if usage is not None and others:
        if int(usage["windows"]) > len(others):
            usage = {**usage, "windows": int(usage["windows"]) - len(others)}
        empty = {
            "windows": 1,
            "seconds": 1.0,
            "cpu_seconds": 0.0,
            "memory_seconds": 0.0,
            "max_cpus": None,
            "max_memory": None,
        }
    hosts = job.hosts or ()
    out = []
    # the other instances ask for 0 (not for nothing: the reader makes a request of
    # which some instances' are unknown unknown, never a partial sum)
    rest_cpus = None if cpus is None else 0.0
    rest_memory = None if memory is None else 0.0
    for k in range(count):
        extras: dict[str, Any] = {"cpus": rest_cpus, "memory": rest_memory}
        if k == 0:
            extras = {"cpus": cpus, "memory": memory}
            if usage is not None:
                extras["usage"] = usage
        elif k == 1 and pending is not None:
            extras = {"cpus": pending, "memory": rest_memory, "pending": True}
        elif empty is not None:
            extras["usage"] = empty
        host = hosts[k] if k < len(hosts) else None
        out.append(Task(str(k), processors=None, host=host, extras=extras))
    return tuple(out)


def _cpus_in_bounds(job: Job, cpu_scale: float) -> bool:
    """Whether the CPU request of a job's one instance (its processors over
    ``cpu_scale``) is one the reader accepts (at most 10^6 normalized CPUs)."""
    return _instance_processors(job) / cpu_scale <= MAX_NORMALIZED


def _kept_usage(
    job: Job, allocated: int | None, cpu_scale: float, memory_scale: float
) -> dict[str, Any] | None:
    """The kept usage totals of a job read without its tasks (``usage_windows``,
    ``used_cpu_seconds_ncu``, ``used_memory_normalized``, ``max_memory_normalized``)
    as the usage of one instance, when the reader gives the job's average CPU time
    and used memory back from them (on ``allocated`` processors), else ``None``.
    The measured time is not kept: the windows span a power of two seconds (so the
    sums come back exactly) that keeps the CPU rate within the reader's bound."""
    ex = job.extras
    windows = ex.get("usage_windows")
    cpu, memory = ex.get("used_cpu_seconds_ncu"), ex.get("used_memory_normalized")
    peak = ex.get("max_memory_normalized")
    if not isinstance(windows, int) or isinstance(windows, bool) or windows <= 0:
        return None
    if not (isinstance(cpu, float) and isinstance(memory, float)):
        return None
    if not all(math.isfinite(v) and v >= 0 for v in (cpu, memory)):
        return None
    if peak is not None and not (isinstance(peak, float) and 0 <= peak <= MAX_NORMALIZED):
        return None
    if memory > MAX_NORMALIZED:
        return None
    back: tuple[float | None, float | None] = (None, None)
    if allocated:
        back = (cpu * cpu_scale / allocated, memory * memory_scale / allocated)
    for source, again in zip((job.average_cpu_time, job.used_memory), back, strict=True):
        if _differs(source, again, True):
            return None
    seconds = 1.0
    while cpu / seconds > MAX_NORMALIZED:
        seconds *= 2
        if seconds > 2.0**40:  # windows beyond the trace's times
            return None
    return {
        "windows": windows,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "memory_seconds": memory * seconds,
        "max_cpus": None,
        "max_memory": peak,
    }


def _instance_processors(job: Job) -> float:
    """The CPU request (in processors) of the one instance of a job without tasks:
    the allocated count once the job started (the reader reads it back as both the
    allocated and the requested count), else the requested count."""
    started = _ran(job)
    first, second = (
        (job.allocated_processors, job.requested_processors)
        if started
        else (job.requested_processors, job.allocated_processors)
    )
    value = first if first is not None else second
    return float(value) if value is not None else 1.0


def _synthetic_usage(job: Job, cpu_scale: float, memory_scale: float) -> dict[str, Any] | None:
    """Usage totals for the one instance of a job without tasks, so the reader gives
    back its average CPU time and used memory: written only when both are known
    (a usage record cannot leave one of them unknown), the job ran for a positive
    time from a known start on a known number of processors, and the rates are
    within what the reader accepts."""
    alloc, run = job.allocated_processors, job.run_time
    cpu, memory = job.average_cpu_time, job.used_memory
    if job.tasks or _in_trace(job.start_time) is None or _in_trace(job.end_time) is None:
        return None
    if alloc is None or run is None or cpu is None or memory is None:
        return None
    if alloc <= 0 or run <= 0 or cpu < 0 or memory < 0:
        return None
    seconds = round(run * US) / US
    usage: dict[str, Any] = {
        "windows": 1,
        "seconds": seconds,
        "cpu_seconds": cpu * alloc / cpu_scale,
        "memory_seconds": memory * alloc / memory_scale * run,
        "max_cpus": None,
        "max_memory": None,
    }
    rates = (usage["cpu_seconds"] / seconds, memory * alloc / memory_scale)
    if seconds <= 0 or not all(0 <= r <= MAX_NORMALIZED for r in rates):
        return None
    # the rates of the one window, nudged by a few ulps where that makes the
    # reader's arithmetic give the job's values back exactly
    allocated = _read_procs(_instance_processors(job) / cpu_scale, cpu_scale)
    rate_cpu = _nudged(
        rates[0], lambda r: r * seconds * cpu_scale / allocated, job.average_cpu_time
    )
    rate_mem = _nudged(
        usage["memory_seconds"] / seconds,
        lambda r: r * seconds / seconds * memory_scale / allocated,
        job.used_memory,
    )
    if not all(0 <= r <= MAX_NORMALIZED for r in (rate_cpu, rate_mem)):
        return None
    usage["rates"] = (rate_cpu, rate_mem)
    usage["back"] = (
        rate_cpu * seconds * cpu_scale / allocated,
        rate_mem * seconds / seconds * memory_scale / allocated,
    )
    return usage


#: ulps either side of a first guess tried by :func:`_nudged`.
_NUDGES = 8


def _nudged(guess: float, back: Any, value: Any) -> float:
    """``guess``, or the nearest double within a few ulps of it for which
    ``back(x) == value`` (the reader's arithmetic gives the value back exactly);
    ``guess`` when there is none."""
    if back(guess) == value:
        return guess
    up = down = guess
    for _ in range(_NUDGES):
        up, down = math.nextafter(up, math.inf), math.nextafter(down, -math.inf)
        for candidate in (up, down):
            if back(candidate) == value:
                return candidate
    return guess


def _instance_indices(tasks: tuple[Task, ...]) -> list[int]:
    """One distinct instance index per task (the key of an instance is (collection,
    index), so tasks sharing one would be merged by the reader): the kept
    ``instance_index``, else the task id when it is a canonical index; a task
    without one, or whose index an earlier task took, gets the smallest free one."""
    wanted: list[int | None] = []
    for task in tasks:
        index = task.extras.get("instance_index")
        if index is None:
            tid = str(task.task_id)
            index = int(tid) if tid.isascii() and tid.isdigit() and str(int(tid)) == tid else None
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index <= INT32_MAX:
            wanted.append(index)
        else:
            wanted.append(None)
    used: set[int] = set()
    kept: list[int | None] = []
    for index in wanted:
        if index is not None and index not in used:
            used.add(index)
            kept.append(index)
        else:
            kept.append(None)
    out = []
    fresh = 0
    for index in kept:
        if index is None:
            while fresh in used:
                fresh += 1
            index = fresh
            used.add(index)
        out.append(index)
    return out


def _machine_id(host: str | None) -> int | None:
    """The machine id a task host names (a canonical positive integer), else None."""
    if host is None:
        return None
    text = str(host)
    if not (text.isascii() and text.isdigit()) or str(int(text)) != text:
        return None
    machine = int(text)
    return machine if 0 < machine < TIME_AFTER_TRACE else None


def _scaled(value: float | None, scale: float) -> float | None:
    """``value / scale`` as a normalized request, chosen so that the reader's
    ``request x scale`` gives ``value`` back where a double can; ``None`` when the
    request would be beyond what the reader accepts."""
    if value is None or not math.isfinite(value):
        return None
    request = value / scale
    if request * scale != value:
        for near in (math.nextafter(request, math.inf), math.nextafter(request, -math.inf)):
            if near * scale == value:
                request = near
                break
    return request if 0 <= request <= MAX_NORMALIZED else None


def _task_cpus(task: Task, cpu_scale: float) -> float | None:
    """The CPU request of a task's instance: the kept one while it still gives the
    task's processors, else the processors scaled."""
    ex = task.extras
    if "cpus" in ex:
        kept = ex["cpus"]
        if kept is None and task.processors is None:
            return None
        if kept is not None and task.processors is not None and kept * cpu_scale == task.processors:
            return float(kept)
    return _scaled(task.processors, cpu_scale)


def _task_raw(seconds: float | None, fallback: int | None) -> int | None:
    """The raw time of a task's event: ``fallback`` (the job's) when unknown, a
    special time (read back as unknown) when the trace cannot hold it."""
    if seconds is None:
        return fallback
    if _in_trace(seconds) is None:
        return TIME_BEFORE_TRACE
    raw = _raw(seconds)
    return raw if raw is not None and raw < TIME_AFTER_TRACE else TIME_AFTER_TRACE


def _instance_rows(
    job: Job,
    cid: int,
    base: Mapping[str, Any],
    verbatim: bool,
    times: tuple[int | None, int | None, int | None, int | None],
    cpu_scale: float,
    memory_scale: float,
) -> Iterator[tuple[int, list[dict[str, Any]], dict[str, Any] | None]]:
    """(instance index, instance event rows, usage) per instance."""
    tasks: tuple[Task, ...] = job.tasks
    if not tasks and verbatim:
        tasks = _rebuilt_instances(job, times[1] is not None, cpu_scale, memory_scale)
        indices = list(range(len(tasks)))
    elif not tasks:
        if job.extras.get("instances") == 0 or (
            job.requested_processors is None and job.allocated_processors is None
        ):
            return
        procs = _instance_processors(job)
        memory = (
            job.requested_memory * procs / memory_scale
            if job.requested_memory is not None
            else None
        )
        if memory is not None and not 0 <= memory <= MAX_NORMALIZED:
            memory = None  # the reader accepts no such request (reported)
        request = procs / cpu_scale
        if not request <= MAX_NORMALIZED:
            # the reader accepts no such request (reported by _note_job): the
            # instance asks for nothing, as the memory per processor and the
            # usage need the processor count
            extras: dict[str, Any] = {"memory": None, "cpus": None}
        else:
            extras = {"memory": memory, "cpus": request}
            usage = _synthetic_usage(job, cpu_scale, memory_scale)
            if usage is not None:
                extras["usage"] = usage
        tasks = (Task("0", processors=float(procs), extras=extras),)
        indices = [0]
    else:
        indices = _instance_indices(tasks)
    # tasks without a memory request of their own (not read from a Google trace)
    # ask for the job's memory per processor
    per_processor = (
        job.requested_memory if job.tasks and not any("memory" in t.extras for t in tasks) else None
    )
    submit, start, end, end_type = times
    for task, index in zip(tasks, indices, strict=True):
        ex = task.extras
        cpus = ex["cpus"] if not job.tasks else _task_cpus(task, cpu_scale)
        memory = ex.get("memory")
        if per_processor is not None and cpus is not None:
            memory = _scaled(per_processor * cpus * cpu_scale, memory_scale)
        row_base = {
            "collection_id": cid,
            "scheduling_class": ex.get("scheduling_class", base["scheduling_class"]),
            "collection_type": ex.get("collection_type", base["collection_type"]),
            "priority": ex.get("priority", base["priority"]),
            "alloc_collection_id": ex.get("alloc_collection_id", base["alloc_collection_id"]),
            "instance_index": index,
            "alloc_instance_index": ex.get("alloc_instance_index"),
            "resource_request": None
            if cpus is None and memory is None
            else {k: v for k, v in (("cpus", cpus), ("memory", memory)) if v is not None},
            "constraint": ex.get("constraint") or None,
        }
        if verbatim and "events" in ex:
            events = [tuple(e) for e in ex["events"]]
        else:
            host = _machine_id(task.host)
            events = []
            if submit is not None:
                events.append((submit, SUBMIT, 0, None))
            pending = not job.tasks and ex.get("pending")  # a rebuilt instance never started
            t_start = None if pending else _task_raw(task.start_time, start)
            if t_start is not None:
                events.append((t_start, SCHEDULE, host, None))
            t_end = None if pending else _task_raw(task.end_time, end)
            t_type = _STATUS_EVENT.get(task.status) if task.status is not None else end_type
            if t_end is not None and t_type is not None:
                events.append((t_end, t_type, host, None))
            elif t_start is None and events and not job.tasks:
                # a rebuilt instance that never started: placed at its SUBMIT, as
                # the trace has instances already placed when it begins
                events[0] = (submit, SUBMIT, host or 0, None)
        rows = []
        for time, kind, machine, missing in events:
            rows.append(
                {
                    "time": time,
                    "type": kind,
                    "missing_type": missing,
                    "machine_id": machine,
                    **row_base,
                }
            )
        # kept usage while the events are kept; synthesized usage for the one
        # instance of a job without tasks
        yield index, rows, ex.get("usage") if (verbatim or not job.tasks) else None


def _kept_alloc_events(alloc: Mapping[str, Any], count: int) -> list[tuple[Any, ...]]:
    """The instance events the reader keeps for an alloc set known only from its
    instances (``alloc["instance_events"]``: ``(instance_index, time, type,
    machine_id, missing_type)``), or ``[]`` where there are none or they do not fit
    the set (more instances than ``count``, a value that is not an integer)."""
    kept = alloc.get("instance_events")
    if not isinstance(kept, (list, tuple)):
        return []

    def whole(value: Any, optional: bool = False) -> bool:
        if value is None:
            return optional
        return isinstance(value, (int, np.integer)) and not isinstance(value, bool)

    out = []
    for event in kept:
        if not isinstance(event, (list, tuple)) or len(event) != 5:
            return []
        index, time, kind, machine, missing = event
        if not (whole(index) and 0 <= index <= INT32_MAX and whole(time) and whole(kind)):
            return []
        if not (whole(machine, True) and whole(missing, True)):
            return []
        out.append((int(index), int(time), int(kind), machine, missing))
    return out if len({e[0] for e in out}) <= count else []


def _alloc_instance_rows(alloc: Mapping[str, Any], losses: Losses) -> Iterator[dict[str, Any]]:
    """The instances of an alloc set (``meta["alloc_sets"]`` keeps their count and
    request totals, and for a set known only from its instances their events):
    the kept instance events as read, then, up to ``instances``, one SUBMIT each at
    the alloc set's first event (before the trace, reported, for a set known only
    from its instances). The first instance asks for the whole request (on its
    first event) and the others for 0 (for nothing where the request is unknown),
    so the reader gives the same count and totals back. What that cannot give back
    is reported."""
    count = alloc.get("instances")
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        return
    count = min(count, INT32_MAX + 1)
    kept = _kept_alloc_events(alloc, count)
    taken = {e[0] for e in kept}
    # the instances without kept events get the smallest free indices
    free: list[int] = []
    index = 0
    while len(free) < count - len(taken):
        if index not in taken:
            free.append(index)
        index += 1
    events = alloc.get("events") or ()
    time = TIME_BEFORE_TRACE
    if events:
        time = min(int(e[0]) for e in events)
    elif free:
        losses.add(
            "alloc_sets",
            "an alloc set known only from its instances: their event times are not kept "
            "(written as a SUBMIT before the trace)",
        )
    if alloc.get("request_unknown"):
        losses.add(
            "alloc_sets.request_unknown",
            "a partly known request is written as unknown for every instance",
        )

    def bounded(value: Any) -> float | None:
        return float(value) if isinstance(value, float) and 0 <= value <= MAX_NORMALIZED else None

    request = {
        "cpus": bounded(alloc.get("requested_cpus")),
        "memory": bounded(alloc.get("requested_memory_normalized")),
    }
    rest = {k: None if v is None else 0.0 for k, v in request.items()}
    rows = [(i, t, kind, machine, missing) for i, t, kind, machine, missing in kept]
    rows += [(i, time, SUBMIT, None, None) for i in free]
    first = rows[0][0] if rows else None
    asked: set[int] = set()
    for index, at, kind, machine, missing in rows:
        ask = None
        if index not in asked:
            asked.add(index)
            ask = request if index == first else rest
        yield {
            "time": at,
            "type": kind,
            "missing_type": missing,
            "machine_id": machine,
            "collection_id": alloc["collection_id"],
            "scheduling_class": alloc.get("scheduling_class"),
            "collection_type": ALLOC_SET,
            "priority": alloc.get("priority"),
            "alloc_collection_id": None,
            "instance_index": index,
            "alloc_instance_index": None,
            "resource_request": {k: v for k, v in (ask or {}).items() if v is not None} or None,
            "constraint": None,
        }


def _schedule_after_end(rows: list[dict[str, Any]]) -> bool:
    """Whether the reader flags these events of one collection or instance as a
    SCHEDULE after a FINISH or KILL of a thing that had started
    (``reduce._schedules_after_end``)."""
    started = ended_started = False
    last_mark: int | None = None
    for r in _lifecycle_sorted(rows):
        kind = r["type"]
        if kind == SCHEDULE:
            if ended_started and last_mark in (FINISH, KILL):
                return True
            started = True
        elif kind in TERMINAL_EVENTS or kind in RESUBMIT_EVENTS:
            # the mark, and whether the thing had started before it
            last_mark, ended_started = kind, started
    return False


def _note_out_of_order(
    job: Job,
    events: list[tuple[Any, ...]],
    written: list[tuple[int, list[dict[str, Any]], dict[str, Any] | None]],
    losses: Losses,
) -> None:
    """Report a job whose ``events_out_of_order`` flag (a SCHEDULE after a FINISH or
    KILL) the written events do not give back, or give where it had none."""
    rows = [{"time": e[0], "type": e[1]} for e in events]
    again = _schedule_after_end(rows) or any(_schedule_after_end(r) for _, r, _ in written)
    if (job.extras.get("events_out_of_order") == "schedule_after_end") != again:
        losses.add(
            "extras.events_out_of_order",
            "not carried (derived again from the written events)",
        )


def _rank(kind: int) -> int:
    return int(_LIFECYCLE_RANK[kind if 0 <= kind <= 10 else 11])


def _lifecycle_sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events of one instance in the reader's order (``reduce._lifecycle_order``):
    time, lifecycle rank, row order; at a time after the first one, a terminal
    event before a resubmission (SUBMIT, QUEUE, ENABLE) of the same time."""
    if not rows:
        return []
    first = min(r["time"] for r in rows)
    kinds_at: dict[int, set[int]] = {}
    for r in rows:
        kinds_at.setdefault(r["time"], set()).add(r["type"])
    resubmitted = {
        t
        for t, kinds in kinds_at.items()
        if t != first and kinds & TERMINAL_EVENTS and kinds & RESUBMIT_EVENTS
    }

    def key(p: tuple[int, dict[str, Any]]) -> tuple[int, int, int]:
        time, kind = p[1]["time"], p[1]["type"]
        rank = -1 if time in resubmitted and kind in TERMINAL_EVENTS else _rank(kind)
        return (time, rank, p[0])

    return [r for _, r in sorted(enumerate(rows), key=key)]


def _sum(values: list[float | None]) -> float:
    """The sum of a group of values as the reader adds it (``numpy.add.reduceat``,
    in instance order): the same values in the same order give the same double
    (NaN when one is unknown)."""
    known = [math.nan if v is None else float(v) for v in values]
    if len(known) <= 2:  # (the same double, without numpy's cost per call)
        return known[0] + known[1] if len(known) == 2 else known[0] if known else 0.0
    return float(np.add.reduceat(np.asarray(known, dtype=np.float64), [0])[0])


def _usage_back(start: int | None, usage: Mapping[str, Any]) -> tuple[int, float, float]:
    """The windows, CPU-seconds and mean memory (normalized; NaN when unknown) that
    the reader (``reduce.reduce_usage``) makes of the usage windows
    :func:`_usage_rows` writes for one instance: rate x window, summed."""
    rows = list(_usage_rows(0, 0, start, usage, JOB))
    micros, cpu, memory = 0, 0.0, 0.0
    time_unknown = cpu_unknown = memory_unknown = False
    # (at most one window has a non-zero rate: the order of the sums does not matter)
    for row in rows:
        begin, end = row["start_time"], row["end_time"]
        average = row.get("average_usage") or {}
        timed = begin != TIME_BEFORE_TRACE and end != TIME_AFTER_TRACE and end >= begin
        if not timed:
            time_unknown = cpu_unknown = memory_unknown = True
            continue
        seconds = (end - begin) / US
        micros += end - begin
        if average.get("cpus") is None:
            cpu_unknown = True
        else:
            cpu += average["cpus"] * seconds
        if average.get("memory") is None:
            memory_unknown = True
        else:
            memory += average["memory"] * seconds
    total = math.nan if time_unknown else float(micros) / US
    mean = math.nan if memory_unknown or time_unknown else memory / total if total > 0 else 0.0
    return len(rows), math.nan if cpu_unknown else cpu, mean


def _read_back(
    instances: list[tuple[int, list[dict[str, Any]], dict[str, Any] | None]],
    cpu_scale: float,
    memory_scale: float,
) -> tuple[dict[str, Any], dict[int, Task]]:
    """What the reader makes of the written instances of one job: the job fields it
    derives from them (with the reader's arithmetic, so that a value that does not
    come back identical is seen), and the task of each instance (by index)."""
    tasks: dict[int, Task] = {}
    cpus_of: list[tuple[float | None, float | None, bool]] = []
    machines: set[int] = set()
    windows = 0
    # per instance in index order, 0 where the instance has no usage (NaN: unknown)
    cpu_values: list[float | None] = []
    memory_values: list[float | None] = []
    peaks: list[float] = []
    unmeasured = False  # a scheduled instance without usage: the job's is unknown
    for index, rows, usage in sorted(instances, key=lambda i: i[0]):
        if not rows and not usage:
            continue  # no row: no instance
        ranked = _lifecycle_sorted(rows)
        start = next((r["time"] for r in ranked if r["type"] == SCHEDULE), None)
        # the last terminal event, unless revived after it (reduce._end_pos)
        end, end_type, end_at = None, None, len(ranked)
        later: set[int] = set()
        for at, r in reversed(list(enumerate(ranked))):
            if r["type"] in TERMINAL_EVENTS:
                if not later & RESUBMIT_EVENTS and not (
                    r["type"] in REQUEUED_ENDS and SCHEDULE in later
                ):
                    end, end_type, end_at = r["time"], r["type"], at + 1
                break
            later.add(r["type"])
        # the last placement up to the end (-1, a dedicated machine, names no host)
        placed = [r["machine_id"] for r in ranked[:end_at] if r.get("machine_id") not in (None, 0)]
        machine = placed[-1] if placed and placed[-1] > 0 else None
        request = (rows[-1].get("resource_request") if rows else None) or {}
        cpus, memory = request.get("cpus"), request.get("memory")
        cpus_of.append((cpus, memory, start is not None))
        if machine is not None and machine > 0:
            machines.add(machine)
        if usage:
            count, instance_cpu, instance_memory = _usage_back(start, usage)
            windows += count
            cpu_values.append(instance_cpu)
            memory_values.append(instance_memory)
            if usage.get("max_memory") is not None:
                peaks.append(usage["max_memory"])
        else:
            cpu_values.append(0.0)
            memory_values.append(0.0)
            unmeasured = unmeasured or start is not None
        tasks[index] = Task(
            str(index),
            _seconds(start),
            _seconds(end),
            None if cpus is None else cpus * cpu_scale,
            None if machine is None else str(machine),
            None if end_type is None else TERMINAL_STATUS.get(end_type),
        )

    def procs(total: float) -> int:
        return max(1, math.ceil(total * cpu_scale - 1e-9))

    def known(value: float) -> float | None:
        return None if math.isnan(value) else value

    # a request is known when every instance's is (every scheduled one's for allocated)
    cpus_known = bool(cpus_of) and all(c is not None for c, _, _ in cpus_of)
    cpus_total = _sum([c for c, _, _ in cpus_of]) if cpus_known else None
    requested = None if cpus_total is None else procs(cpus_total)
    scheduled = [c for c, _, started in cpus_of if started]
    allocated = (
        procs(_sum([c if started else 0.0 for c, _, started in cpus_of]))
        if scheduled and None not in scheduled
        else None
    )
    memory_known = bool(cpus_of) and all(m is not None for _, m, _ in cpus_of)
    memory_total = _sum([m for _, m, _ in cpus_of]) if memory_known else None
    measured = windows > 0 and not unmeasured
    with_usage = measured and allocated is not None and allocated > 0
    cpu_seconds = known(_sum(cpu_values)) if measured else None
    mean_memory = known(_sum(memory_values)) if measured else None
    fields = {
        "requested_processors": requested,
        "allocated_processors": allocated,
        "requested_memory": memory_total * memory_scale / requested
        if memory_total is not None and requested
        else None,
        "nodes": len(cpus_of) or None,
        "hosts": tuple(str(m) for m in sorted(machines)),
        "average_cpu_time": cpu_seconds * cpu_scale / allocated
        if with_usage and allocated and cpu_seconds is not None
        else None,
        "used_memory": mean_memory * memory_scale / allocated
        if with_usage and allocated and mean_memory is not None
        else None,
        # the extras the reader derives from the instances
        "extras.instances": len(cpus_of),
        "extras.requested_cpus": cpus_total,
        "extras.requested_memory_normalized": memory_total,
        "extras.usage_windows": windows,
        "extras.used_cpu_seconds_ncu": cpu_seconds,
        "extras.used_memory_normalized": mean_memory,
        "extras.max_memory_normalized": max(peaks) if peaks else None,
        "extras.usage_unknown": "instances_without_usage" if windows and unmeasured else None,
    }
    return fields, tasks


#: What the reader derives a job field from when the job's tasks are its instances,
#: and why it reads nothing back.
_FROM_INSTANCES = {
    "requested_processors": ("the instances' total CPU request", "no instance with a CPU request"),
    "allocated_processors": (
        "the scheduled instances' total CPU request",
        "no scheduled instance with a CPU request",
    ),
    "requested_memory": (
        "the instances' total memory request per processor",
        "no instance with a memory request",
    ),
    "nodes": ("the number of instances", "no instance"),
    "hosts": ("the machines of the instances", "machine ids come from instance placements"),
    "average_cpu_time": ("the instances' usage", "no usage record"),
    "used_memory": ("the instances' usage", "no usage record"),
}
_TASK_FIELDS = ("start_time", "end_time", "processors", "host", "status")


def _differs(a: Any, b: Any, tolerance: bool) -> bool:
    if a is None or b is None:
        return (a is None) != (b is None)
    if tolerance:
        return not math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    return bool(a != b)


def _note_derived(job: Job, fields: Mapping[str, Any], losses: Losses, how: str) -> None:
    """Report each job field derived from the instances that ``fields`` (from
    :func:`_read_back`) does not give back; ``how`` says why they differ."""
    for field, (what, why) in _FROM_INSTANCES.items():
        source, again = getattr(job, field), fields[field]
        if field == "hosts":
            source, again = source or None, again or None
        if not _differs(source, again, False):
            continue
        if field in ("requested_memory", "average_cpu_time", "used_memory") and not _differs(
            source, again, True
        ):
            losses.add(field, f"changed in the last digits (read back from {what})")
        elif source is None:
            losses.add(field, f"unknown, read back as {what}")
        elif again is None:
            losses.add(field, f"not written ({why})")
        else:
            losses.add(field, f"read back as {what} ({how})")


def _note_one_instance(
    job: Job,
    instances: list[tuple[int, list[dict[str, Any]], dict[str, Any] | None]],
    losses: Losses,
    cpu_scale: float,
    memory_scale: float,
) -> None:
    """Report, for a job written from its fields (no tasks, no kept events: one
    instance, or none without processors), ``nodes`` and ``tasks`` as the reader
    gives them back (the number of instances, and one task per instance), and the
    requested memory that the reader's arithmetic (the instances' normalized total
    x the scale / the processors) gives back changed in its last digits; other
    differences are reported by :func:`_note_job`."""
    written = sum(1 for _, rows, usage in instances if rows or usage)
    if job.extras.get("usage_unknown"):
        losses.add("extras.usage_unknown", "not carried (derived again from the instances)")
    nodes = written or None
    if job.nodes != nodes:
        if job.nodes is None:
            losses.add("nodes", "unknown, read back as 1 (the job's one instance)")
        elif nodes is None:
            alloc, req = job.allocated_processors, job.requested_processors
            why = " without processors" if alloc is None and req is None else ""
            losses.add("nodes", f"not written (no instance{why})")
        else:
            losses.add("nodes", "written as 1 instance")
    if written:
        losses.add("tasks", "none, read back as one task (the job's one instance)")
    value = job.requested_memory
    if value is None:
        return
    again = _read_back(instances, cpu_scale, memory_scale)[0]["requested_memory"]
    if again is not None and again != value and not _differs(value, again, True):
        losses.add(
            "requested_memory",
            "changed in the last digits (read back as a total request per processor)",
        )


#: Per-job extras the reader derives from the instances (compared for a job whose
#: instances are rebuilt without its tasks, see :func:`_note_instances`).
_EXTRAS_FROM_INSTANCES = (
    "instances",
    "requested_cpus",
    "requested_memory_normalized",
    "usage_windows",
    "used_cpu_seconds_ncu",
    "used_memory_normalized",
    "max_memory_normalized",
)


def _note_instances(
    job: Job,
    instances: list[tuple[int, list[dict[str, Any]], dict[str, Any] | None]],
    losses: Losses,
    cpu_scale: float,
    memory_scale: float,
) -> None:
    """Compare a job without tasks whose kept events are written (read with
    ``tasks=False``) with what the reader makes of the instances rebuilt for it
    (:func:`_rebuilt_instances`), and report every job field and every kept extra
    derived from the instances that comes back different."""
    fields, _ = _read_back(instances, cpu_scale, memory_scale)
    _note_derived(job, fields, losses, "instances rebuilt without their tasks")
    _note_usage_flag(job, fields, losses)
    for key in _EXTRAS_FROM_INSTANCES:
        if key not in job.extras:
            continue
        source, again = job.extras[key], fields[f"extras.{key}"]
        if key in ("instances", "usage_windows"):
            differs = source != again
        else:
            differs = _differs(source, again, False)
        if differs:
            losses.add(f"extras.{key}", "not carried (derived again from the rebuilt instances)")


def _note_usage_flag(job: Job, fields: Mapping[str, Any], losses: Losses) -> None:
    """Report a job whose ``usage_unknown`` flag (a scheduled instance without usage)
    the written instances do not give back, or give where it had none."""
    if job.extras.get("usage_unknown") != fields["extras.usage_unknown"]:
        losses.add("extras.usage_unknown", "not carried (derived again from the instances)")


def _note_tasks(
    job: Job,
    instances: list[tuple[int, list[dict[str, Any]], dict[str, Any] | None]],
    losses: Losses,
    cpu_scale: float,
    memory_scale: float,
) -> None:
    """Compare a job with tasks with what the reader makes of its instances, and
    report every field that comes back different (job fields derived from the
    instances, and the tasks themselves)."""
    fields, back = _read_back(instances, cpu_scale, memory_scale)
    _note_derived(job, fields, losses, "tasks are written as instances")
    _note_usage_flag(job, fields, losses)
    # one action per job, naming what of its tasks does not come back
    lost: list[str] = []
    indices = [index for index, _, _ in instances]
    if [back[i].task_id for i in sorted(back)] != [str(t.task_id) for t in job.tasks]:
        if any(str(t.task_id) != str(i) for t, i in zip(job.tasks, indices, strict=True)):
            lost.append("ids renumbered (not distinct instance indices)")
        elif len(back) == len(job.tasks):
            lost.append("order changed (read back by instance index)")
    kinds: dict[str, str] = {}
    for task, (index, _, usage) in zip(job.tasks, instances, strict=True):
        again = back.get(index)
        if again is None:
            kinds.setdefault("vanished", "a task without events or usage not written")
            continue
        for field in _TASK_FIELDS:
            source, value = getattr(task, field), getattr(again, field)
            if not _differs(source, value, False):
                continue
            if source is None:
                kinds.setdefault(field, f"{field} unknown, read back as the job's")
            elif value is None:
                why = " (not a machine id)" if field == "host" else ""
                kinds.setdefault(field, f"{field} not written{why}")
            else:
                kinds.setdefault(field, f"{field} changed")
        if task.extras.get("usage") and not usage:
            kinds.setdefault("usage", "usage not written (events synthesized)")
    lost.extend(kinds[k] for k in ("vanished", *_TASK_FIELDS, "usage") if k in kinds)
    if any(set(t.extras) - _KEPT_TASK_EXTRAS for t in job.tasks):
        lost.append("fields without an instance column not written")
    if lost:
        losses.add("tasks", "task " + "; ".join(lost))


def _usage_rows(
    cid: int, index: int, start: int | None, usage: Mapping[str, Any], collection_type: int
) -> Iterator[dict[str, Any]]:
    """Usage aggregates as windows that the reader sums back to the same totals.

    The reader adds whole microseconds for the measured time, and rate x window
    for CPU- and memory-seconds. A window of 2^j seconds carries the usage (a
    multiplication by a power of two is exact), a window without usage carries the
    rest of the time, and empty windows make up the count. With a single window
    the rate is ``total / seconds``, exact to the last bit or so.
    """
    seconds = usage["seconds"]
    windows = int(usage["windows"])
    first = start if start not in (None, TIME_BEFORE_TRACE, TIME_AFTER_TRACE) else TIME_OFFSET_US
    total = round(seconds * US)
    common = {"collection_id": cid, "instance_index": index, "collection_type": collection_type}
    maximum = {
        k: v
        for k, v in (("cpus", usage.get("max_cpus")), ("memory", usage.get("max_memory")))
        if v is not None
    } or None
    rows = []
    cpu_total, memory_total = usage["cpu_seconds"], usage["memory_seconds"]
    if seconds is None or cpu_total is None or memory_total is None:
        # unknown usage stays unknown: one window of unknown time (starting before
        # the trace) or without the unknown mean
        total = 0 if seconds is None else total
        average = {
            k: v / seconds
            for k, v in (("cpus", cpu_total), ("memory", memory_total))
            if v is not None and seconds
        }
        rows.append(
            {
                "start_time": TIME_BEFORE_TRACE if seconds is None else first,
                "end_time": first + total,
                **common,
                **({"average_usage": average} if average else {}),
                "maximum_usage": maximum,
            }
        )
    elif windows >= 2 and seconds >= 2.0**-6:
        power = 2.0 ** math.floor(math.log2(seconds))
        carrier = int(power * US)
        rest = total - carrier
        rows.append(
            {
                "start_time": first,
                "end_time": first + rest,
                **common,
                "average_usage": {"cpus": 0.0, "memory": 0.0},
            }
        )
        rows.append(
            {
                "start_time": first + rest,
                "end_time": first + total,
                **common,
                "average_usage": {
                    "cpus": usage["cpu_seconds"] / power,
                    "memory": usage["memory_seconds"] / power,
                },
                "maximum_usage": maximum,
            }
        )
    else:
        rate_cpu = usage["cpu_seconds"] / seconds if seconds > 0 else 0.0
        rate_mem = usage["memory_seconds"] / seconds if seconds > 0 else 0.0
        rate_cpu, rate_mem = usage.get("rates", (rate_cpu, rate_mem))
        rows.append(
            {
                "start_time": first,
                "end_time": first + total,
                **common,
                "average_usage": {"cpus": rate_cpu, "memory": rate_mem},
                "maximum_usage": maximum,
            }
        )
    yield from rows
    # empty windows, each at its own microsecond (the reader counts a window given
    # twice once), with a mean of 0 (a window without one is unknown usage)
    for k in range(windows - len(rows)):
        at = first + total + 1 + k
        yield {
            "start_time": at,
            "end_time": at,
            **common,
            "average_usage": {"cpus": 0.0, "memory": 0.0},
        }


#: Per-job extras the tables carry (written, or derived again by the reader).
_KEPT_EXTRAS = frozenset(
    (
        *_JOB_EXTRA_KEYS,
        "collection_name_number",
        "submit_special",
        "start_special",
        "end_special",
        "wait_unknown",
        "run_unknown",
        "request_unknown",
        "usage_unknown",
        "events_out_of_order",
    )
)
#: Per-task extras the instance tables carry.
_KEPT_TASK_EXTRAS = frozenset((*_INSTANCE_KEYS, "usage", "cpus", "memory"))
#: Header labels the reader makes again from the jobs (names of users and programs).
_HEADER_FROM_JOBS = frozenset(("User", "Executable"))
_NO_FIELD = "not written (Google v3 has no such field)"
_BEYOND_CPUS = "not written (a CPU request above 10^6, the reader's bound)"


def _note_job(
    job: Job, losses: Losses, verbatim: bool, cpu_scale: float, memory_scale: float
) -> None:
    """Count what the tables cannot hold of one job."""
    note_fields(
        losses,
        job,
        ("requested_time", "group_id", "partition_number", "think_time"),
        _NO_FIELD,
    )
    note_fields(losses, job, ("exit_code", "account"), _NO_FIELD)
    note_extras(losses, job.extras, _KEPT_EXTRAS)
    if job.queue_number is not None and job.queue_number != TIER_QUEUE.get(
        tier_of(None if job.priority is None else int(job.priority)) or ""
    ):
        losses.add("queue_number", "not written (queues are the tiers of the priority)")
    if job.priority is not None and not float(job.priority).is_integer():
        losses.add("priority", "rounded to an integer")
    odd = [d for d in job.dependencies if d.kind not in ("end", "parent") or d.think_time]
    if odd:
        losses.add("dependencies", "written as start-after (kind and think time lost)")
    if verbatim:
        return
    for field in ("wait_time", "run_time"):
        value = getattr(job, field)
        if value is not None and value < 0:
            losses.add(field, "negative, read back as unknown")
    if job.end_time is None and job.status is not None and job.status not in _STATUS_EVENT:
        losses.add("status", f"status {job.status} not written (no end event for it)")
    submit_raw, start_raw, end_raw, end_type = _synthetic_times(job)
    if end_raw is not None and (
        (submit_raw is not None and end_raw < submit_raw)
        # at the SUBMIT's instant after a SCHEDULE before it (a negative wait), the
        # end event comes first too (an instant's terminal events precede its SUBMIT)
        or (
            submit_raw is not None
            and end_raw == submit_raw
            and start_raw is not None
            and start_raw < submit_raw
        )
        or (end_type in REQUEUED_ENDS and start_raw is not None and end_raw < start_raw)
    ):
        # the reader reads a SUBMIT (or a SCHEDULE after EVICT/FAIL/LOST) after the
        # end event as a job revived after it: no end, so no status and no run time
        why = "read back as unknown (its end event precedes its start)"
        if job.status is not None:
            losses.add("status", why)
        if job.run_time is not None and job.run_time >= 0:
            losses.add("run_time", why)
    # an instant before the trace is not written, and the reader cannot give back
    # what it is needed for: the wait (submit and start), the run time (start and
    # end) and the allocated processors (the SCHEDULE event)
    submit_out, start_out, end_out = (
        t is not None and _in_trace(t) is None
        for t in (job.submit_time, job.start_time, job.end_time)
    )
    edge = "before the earliest time of the trace, -600 s"
    for field, out, why in (
        ("submit_time", submit_out, edge),
        ("wait_time", start_out, edge),
        ("wait_time", submit_out and not start_out, f"submitted {edge}"),
        ("run_time", end_out, edge),
        ("run_time", start_out and not end_out, f"started {edge}"),
        ("allocated_processors", start_out, f"started {edge}"),
    ):
        value = getattr(job, field)
        if out and value is not None and (field == "submit_time" or value >= 0):
            losses.add(field, f"not written ({why})")
    if job.submit_time is None:
        if job.wait_time is not None:
            losses.add("wait_time", "not written (submit time unknown)")
        if job.run_time is not None:
            losses.add("run_time", "not written (submit time unknown)")
    elif job.wait_time is None and job.run_time is not None:
        losses.add("run_time", "not written (start unknown: events need a start time)")
    if job.end_time is not None and job.status not in _STATUS_EVENT:
        what = "unknown" if job.status is None else f"status {job.status}"
        losses.add("status", f"{what} written as FINISH (read back as 1)")
    if job.tasks:
        return  # compared with what the reader makes of the instances (_note_tasks)
    if not _cpus_in_bounds(job, cpu_scale):
        for field in (
            "allocated_processors",
            "requested_processors",
            "requested_memory",
            "average_cpu_time",
            "used_memory",
        ):
            if getattr(job, field) is not None:
                losses.add(field, _BEYOND_CPUS)
        if job.hosts:
            losses.add("hosts", "not written (machine ids come from instance placements)")
        return  # nodes: reported by _note_one_instance
    synthetic = _synthetic_usage(job, cpu_scale, memory_scale)
    for field, again in zip(
        ("average_cpu_time", "used_memory"),
        synthetic["back"] if synthetic else (None, None),
        strict=True,
    ):
        value = getattr(job, field)
        if value is None:
            continue
        if synthetic is None:
            losses.add(field, "not written (no usage record)")
        elif again != value:
            losses.add(field, "changed in the last digits (read back as usage rate x time)")
    if job.hosts:
        losses.add("hosts", "not written (machine ids come from instance placements)")
    alloc, req = job.allocated_processors, job.requested_processors
    # nodes: reported by _note_one_instance
    if alloc is None and req is None:
        if job.requested_memory is not None:
            losses.add("requested_memory", "not written (no instance without processors)")
        return
    if _ran(job):
        if alloc is None:
            losses.add("allocated_processors", "unknown, read back as the requested count")
        elif req is None:
            losses.add("requested_processors", "unknown, read back as the allocated count")
        elif req != alloc:
            losses.add("requested_processors", "written as the allocated count")
    else:
        if alloc is not None:
            losses.add("allocated_processors", "not written (the job never started)")
        if req is None:
            losses.add("requested_processors", "unknown, read back as the allocated count")
    if job.requested_memory is not None:
        memory = job.requested_memory * _instance_processors(job) / memory_scale
        if not 0 <= memory <= MAX_NORMALIZED:
            losses.add("requested_memory", "not written (beyond a normalized request)")
    if _instance_processors(job) <= 0:
        # the reader reads a request for 0 CPUs as 1 processor, requested and (once
        # the job started) allocated; a count that is not 0 is reported above
        for field in ("allocated_processors", "requested_processors"):
            if getattr(job, field) == 0 and (_ran(job) or field == "requested_processors"):
                losses.add(field, "0 processors read back as 1")
        if job.requested_memory:
            losses.add("requested_memory", "read back as 0 (a request for 0 processors)")


def _note_links(job: Job, collection_ids: Mapping[int, int], losses: Losses) -> None:
    """Report the dependencies the start-after and parent ids cannot give back: a
    negative job number (an error in the source log; the reader refuses negative
    ids, so it is not written) and a preceding job that is not in the workload (its
    number is written, and read back as a dependency on a collection the trace does
    not have, not as the preceding job)."""
    if "start_after_collection_ids" in job.extras:
        return
    ints = [d.job for d in job.dependencies if isinstance(d.job, int)]
    if any(number < 0 for number in ints):
        losses.add("dependencies", "negative job number not written (no such collection id)")
    if job.dependencies:
        return
    preceding = job.preceding_job_number
    if preceding is None:
        return
    if preceding == 0:
        losses.add("preceding_job_number", "0, not written (taken as no preceding job)")
    elif preceding < 0:
        losses.add("preceding_job_number", "negative, not written (no such collection id)")
    elif preceding not in collection_ids:
        losses.add(
            "preceding_job_number",
            "not in the workload: written as a start-after id, read back as a "
            "dependency on an unknown collection",
        )


def _collection_ids(jobs: list[Job], losses: Losses) -> list[int]:
    """One distinct collection id per job: its kept id, else its job number; a
    duplicate or missing one gets a fresh id above every other (reported)."""
    wanted: list[int | None] = []
    for job in jobs:
        cid = job.extras.get("collection_id")
        if cid is None:
            cid = job.job_number
        wanted.append(int(cid) if cid is not None else None)
    fresh = max((c for c in wanted if c is not None), default=0) + 1
    used: set[int] = set()
    out = []
    for cid in wanted:
        if cid is None or cid in used or cid < 0:
            what = "missing" if cid is None else "negative" if cid < 0 else "duplicate"
            losses.add("job_number", f"{what}, written as a new collection id")
            cid = fresh
            fresh += 1
        used.add(cid)
        out.append(cid)
    return out


def _write_machines(out: Path, header: Any, compress: bool, cpu_scale: float) -> bool:
    """``MaxProcs`` (and ``MaxNodes``) as machines added before the trace, so the
    reader gives them back; False when the header has no ``MaxProcs``."""
    procs = header.max_procs
    if procs is None or procs <= 0:
        return False
    nodes = header.max_nodes if header.max_nodes and header.max_nodes > 0 else 1
    # half a processor of slack: floor() in the reader gives back exactly ``procs``
    each = (procs + 0.5) / cpu_scale / nodes
    if each > MAX_NORMALIZED or nodes > MAX_MACHINES:
        return False  # not written (reported by _note_header)
    machines = _ShardWriter(out, "machine_events", compress, 1 << 62)
    try:
        for machine in range(1, nodes + 1):
            machines.write(
                {
                    "time": TIME_BEFORE_TRACE,
                    "machine_id": machine,
                    "type": MACHINE_ADD,
                    "capacity": {"cpus": each},
                }
            )
    finally:
        machines.close()
    return True


#: The most machines synthesized from ``MaxNodes`` (one ``machine_events`` row
#: each): the largest machines have some 160,000 nodes; a header asking for more
#: (``MaxNodes: 9007199254740991``) would write rows without end.
MAX_MACHINES = 1_000_000


def _capacity_too_large(header: Any, cpu_scale: float) -> bool:
    """Whether ``MaxProcs`` over ``MaxNodes`` machines is a capacity per machine
    the reader refuses (above 10^6 normalized CPUs), so no machine is written."""
    procs = header.max_procs
    if procs is None or procs <= 0:
        return False
    nodes = header.max_nodes if header.max_nodes and header.max_nodes > 0 else 1
    return (procs + 0.5) / cpu_scale / nodes > MAX_NORMALIZED


def _note_header(
    workload: Workload,
    losses: Losses,
    machines: bool,
    cpu_scale: float = DEFAULT_CPU_SCALE,
    memory_scale: float = DEFAULT_MEMORY_SCALE,
) -> None:
    """Report the header entries that the tables do not give back: every label but
    the name tables (which :func:`_note_names` compares) and the machines'
    ``MaxProcs``/``MaxNodes``, free-text comments, and, for a workload read from a
    trace, every label whose entries the v3 reader makes differently."""
    header = workload.header
    from_google = "capacity" in workload.meta
    # the header the v3 reader makes again of a workload read from a trace (no
    # machines are written for it)
    again = (
        _header(V3_HEADER_INFO, list(workload), {}, {}, None, cpu_scale, memory_scale)
        if from_google
        else None
    )
    for label in header.labels():
        if label in ("UnixStartTime", "TimeZoneString"):
            losses.add(f"header.{label}", "not written (times are relative to the trace)")
        elif label in ("MaxProcs", "MaxNodes"):
            if machines and (label == "MaxProcs" or header.max_nodes):
                continue
            if not from_google and _capacity_too_large(header, cpu_scale):
                losses.add(
                    f"header.{label}",
                    "not written (a machine capacity above 10^6, the reader's bound)",
                )
                continue
            if not from_google and (header.max_nodes or 0) > MAX_MACHINES:
                losses.add(
                    f"header.{label}",
                    f"not written (more than {MAX_MACHINES:,} machines to synthesize)",
                )
                continue
            losses.add(f"header.{label}", "not written (machine tables are not written)")
        elif label in _HEADER_FROM_JOBS:
            continue  # reported by _note_names
        elif again is None or label not in again.labels():
            losses.add(f"header.{label}", "not written (v3 tables have no header)")
        elif header.get_all(label) != again.get_all(label):
            # the reader writes its own v3 header (a v2 trace's texts differ)
            losses.add(
                f"header.{label}",
                "not written (v3 tables have no header; read back as the v3 reader's own)",
            )
    for entry in header.entries:
        if entry.label is None:
            losses.add("header.comment", "not written (v3 tables have no header)")
    if machines and not header.max_nodes:
        losses.add("header.MaxNodes", "unknown, read back as 1 (one machine holds MaxProcs)")


def write_v3(
    workload: Workload,
    path: str | os.PathLike[str],
    *,
    compress: bool = True,
    shard_rows: int = 1_000_000,
    cpu_scale: float = DEFAULT_CPU_SCALE,
    memory_scale: float = DEFAULT_MEMORY_SCALE,
) -> Losses:
    """Write ``workload`` as v3 tables into the directory ``path`` (created); returns
    what the tables could not hold (also reported to :func:`schedlab.collect_losses`)."""
    with writer_losses() as losses:
        _write_v3(workload, Path(path), losses, compress, shard_rows, cpu_scale, memory_scale)
    return losses


def _write_v3(
    workload: Workload,
    out: Path,
    losses: Losses,
    compress: bool,
    shard_rows: int,
    cpu_scale: float,
    memory_scale: float,
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    collections = _ShardWriter(out, "collection_events", compress, shard_rows)
    instances = _ShardWriter(out, "instance_events", compress, shard_rows)
    usage_out = _ShardWriter(out, "instance_usage", compress, shard_rows)
    jobs = list(workload)
    cids = _collection_ids(jobs, losses)
    collection_ids: dict[int, int] = {}
    for job, cid in zip(jobs, cids, strict=True):
        if job.job_number is not None:
            collection_ids.setdefault(job.job_number, cid)
    tables = {
        field: _name_table(jobs, field, key, workload.header.names(label), prefix)
        for field, key, label, prefix, _ in _NAMED
    }
    _note_names(workload, jobs, tables, losses)
    header_users, header_programs = tables["user_id"], tables["executable_number"]
    machines = "capacity" not in workload.meta and _write_machines(
        out, workload.header, compress, cpu_scale
    )
    _note_header(workload, losses, machines, cpu_scale, memory_scale)
    try:
        for job, cid in zip(jobs, cids, strict=True):
            base = _collection_attributes(job, cid, collection_ids, header_users, header_programs)
            _note_links(job, collection_ids, losses)
            verbatim = _events_agree(job)
            _note_job(job, losses, verbatim, cpu_scale, memory_scale)
            if verbatim:
                events = [tuple(e) for e in job.extras["events"]]
                times = (
                    job.extras.get("submit_raw"),
                    job.extras.get("start_raw"),
                    job.extras.get("end_raw"),
                    _EVENT_NUMBER.get(job.extras.get("end_event") or ""),
                )
            else:
                times = _synthetic_times(job)
                _note_times(job, times, losses)
                submit, start, end, end_type = times
                events = []
                if submit is not None:
                    events.append((submit, SUBMIT, None))
                if start is not None:
                    events.append((start, SCHEDULE, None))
                if end is not None and end_type is not None:
                    events.append((end, end_type, None))
            written = list(_instance_rows(job, cid, base, verbatim, times, cpu_scale, memory_scale))
            if job.tasks:
                _note_tasks(job, written, losses, cpu_scale, memory_scale)
            elif verbatim:
                _note_instances(job, written, losses, cpu_scale, memory_scale)
            else:
                _note_one_instance(job, written, losses, cpu_scale, memory_scale)
            _note_out_of_order(job, events, written, losses)
            for time, kind, missing in events:
                collections.write({"time": time, "type": kind, "missing_type": missing, **base})
            for index, rows, usage in written:
                for row in rows:
                    instances.write(row)
                if usage:
                    start_raw = next((r["time"] for r in rows if r["type"] == SCHEDULE), None)
                    for row in _usage_rows(cid, index, start_raw, usage, base["collection_type"]):
                        usage_out.write(row)
        for alloc in workload.meta.get("alloc_sets") or ():
            base = {
                "collection_id": alloc["collection_id"],
                "scheduling_class": alloc.get("scheduling_class"),
                "collection_type": ALLOC_SET,
                "priority": alloc.get("priority"),
                "user": alloc.get("user"),
                "collection_name": alloc.get("collection_name"),
            }
            for time, kind, missing in alloc.get("events") or ():
                collections.write({"time": time, "type": kind, "missing_type": missing, **base})
            for row in _alloc_instance_rows(alloc, losses):
                instances.write(row)
    finally:
        collections.close(always=True)
        instances.close(always=True)
        usage_out.close()
