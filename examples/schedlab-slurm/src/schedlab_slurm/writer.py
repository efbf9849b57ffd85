"""Writing a :class:`schedlab.Workload` as ``sacct --parsable2`` output.

Columns: the ``columns`` option, else the columns the workload was read with
(``workload.meta["slurm_columns"]`` or the order of the ``slurm.*`` extras), else
:data:`~schedlab_slurm.layout.DEFAULT_COLUMNS`. A job read by the ``slurm`` reader
keeps its raw column texts; each is written back unchanged as long as the model
value it was turned into is unchanged (so read-then-write reproduces the records,
and editing e.g. ``run_time`` rewrites ``Elapsed``, ``ElapsedRaw`` and ``End``).
Other columns are produced from the model: times from the header's
``UnixStartTime`` in the zone of ``TimeZoneString`` (or ``timezone=``), ``ReqMem``
per CPU (``Mc``/``Kc``), states ``COMPLETED``/``FAILED``/``CANCELLED`` from the
SWF status, names from the header tables. Steps (the job's tasks that came from
step records) follow their job; when every record remembers its place in the file
it was read from (``slurm.record``), the records are written in that order.

What the columns cannot hold is reported through ``schedlab.writer_losses`` (so
``schedlab convert`` prints it and ``--strict-lossless`` refuses it): a model field
none of the chosen columns carries, the fields sacct has no column for (used
memory, preceding job, think time, dependencies), tasks that are not steps, extras
of other formats and the header labels the records do not hold.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from schedlab import FormatError, Job, Losses, Workload, open_output, writer_losses

from .layout import DEFAULT_COLUMNS
from .reader import DERIVED_KEY, PREFIX, RECORD_KEY, _timezone, derived_values
from .values import (
    compress_nodelist,
    format_duration,
    format_memory,
    format_state,
    format_time,
)


class _Context:
    """What the column formatters need besides the job."""

    def __init__(self, workload: Workload, tz: Any) -> None:
        header = workload.header
        self.origin = header.unix_start_time or 0
        self.tz = tz
        self.users = header.names("User")
        self.groups = header.names("Group")
        self.queues = header.names("Queue")
        self.partitions = header.names("Partition")
        self.executables = header.names("Executable")
        self.cluster = header.installation or ""


def _num(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else str(value)


def _abs(ctx: _Context, rel: float | None) -> float | None:
    return None if rel is None else ctx.origin + rel


def _name(table: dict[int, str], number: int | None) -> str:
    if number is None:
        return ""
    return table.get(number, str(number))


def _limit_minutes(job: Job, ctx: _Context) -> str:
    if job.requested_time is None:
        return ""
    return str(-(-int(job.requested_time) // 60))


def _avg_total_cpu(job: Job, ctx: _Context) -> str:
    if job.average_cpu_time is None or not job.allocated_processors:
        return ""
    return format_duration(job.average_cpu_time * job.allocated_processors)


def _exit(job: Job, ctx: _Context) -> str:
    return "" if job.exit_code is None else f"{job.exit_code}:0"


def _nodelist(job: Job, ctx: _Context) -> str:
    if job.hosts:
        return compress_nodelist(job.hosts)
    return "None assigned" if job.wait_time is None and job.status is not None else ""


#: Column -> (derived value it depends on, formatter from the model).
FORMATTERS: dict[str, tuple[str | None, Callable[[Job, _Context], str]]] = {
    "JobID": ("job_number", lambda j, c: _num(j.job_number)),
    "JobIDRaw": ("job_number", lambda j, c: _num(j.job_number)),
    "Submit": ("submit", lambda j, c: format_time(_abs(c, j.submit_time), c.tz)),
    "Eligible": ("submit", lambda j, c: format_time(_abs(c, j.submit_time), c.tz)),
    "Start": ("start", lambda j, c: format_time(_abs(c, j.start_time), c.tz)),
    "End": ("end", lambda j, c: format_time(_abs(c, j.end_time), c.tz)),
    "Elapsed": ("run_time", lambda j, c: format_duration(j.run_time)),
    "ElapsedRaw": ("run_time", lambda j, c: _num(None if j.run_time is None else
                                                 round(j.run_time))),
    "AllocCPUS": ("allocated", lambda j, c: _num(j.allocated_processors)),
    "NCPUS": ("allocated", lambda j, c: _num(j.allocated_processors)),
    "ReqCPUS": ("requested_processors", lambda j, c: _num(j.requested_processors)),
    "Timelimit": ("requested_time", lambda j, c: format_duration(j.requested_time)),
    "TimelimitRaw": ("requested_time", _limit_minutes),
    "ReqMem": ("requested_memory", lambda j, c: format_memory(j.requested_memory, "c")),
    "State": ("status", lambda j, c: format_state(j.status)),
    "ExitCode": ("exit_code", _exit),
    "JobName": ("name", lambda j, c: j.name or _name(c.executables, j.executable_number)),
    "Account": ("account", lambda j, c: j.account or ""),
    "NNodes": ("nodes", lambda j, c: _num(j.nodes)),
    "AllocNodes": ("nodes", lambda j, c: _num(j.nodes)),
    "NodeList": ("hosts", _nodelist),
    "User": ("user", lambda j, c: _name(c.users, j.user_id)),
    "UID": ("user", lambda j, c: _num(j.user_id)),
    "Group": ("group", lambda j, c: _name(c.groups, j.group_id)),
    "GID": ("group", lambda j, c: _num(j.group_id)),
    "QOS": ("qos", lambda j, c: _name(c.queues, j.queue_number)),
    "Partition": ("partition", lambda j, c: _name(c.partitions, j.partition_number)),
    "TotalCPU": ("average_cpu_time", _avg_total_cpu),
    "Priority": (None, lambda j, c: _num(j.priority)),
    "Cluster": (None, lambda j, c: c.cluster),
}


def job_values(job: Job, columns: list[str], ctx: _Context) -> list[str]:
    """The column texts of one job record."""
    extras = job.extras
    saved = extras.get(DERIVED_KEY)
    current = derived_values(job, ctx.origin) if saved is not None else None
    out = []
    for column in columns:
        raw = extras.get(PREFIX + column)
        entry = FORMATTERS.get(column)
        if raw is not None:
            depends = entry[0] if entry else None
            # job_number is renumbered freely (sequence numbers): JobID stays raw.
            if depends is None or depends == "job_number" or (
                current is not None and saved.get(depends) == current.get(depends)
            ):
                out.append(str(raw))
                continue
        out.append(entry[1](job, ctx) if entry else "")
    return out


def step_values(task: Any, columns: list[str]) -> list[str]:
    """The column texts of one step record (kept verbatim from the file)."""
    return [str(task.extras.get(PREFIX + c, "")) for c in columns]


def _columns(workload: Workload, option: str | None) -> list[str]:
    if option:
        return [c.strip() for c in re.split(r"[|,]", option) if c.strip()]
    if workload.meta.get("slurm_columns"):
        return list(workload.meta["slurm_columns"])
    for job in workload:
        keys = [
            k[len(PREFIX):] for k in job.extras
            if k.startswith(PREFIX) and k not in (RECORD_KEY, DERIVED_KEY)
        ]
        return keys or list(DEFAULT_COLUMNS)
    return list(DEFAULT_COLUMNS)


def _records(workload: Workload) -> list[tuple[Any, bool]]:
    """``(job or task, is_step)`` in output order: each job followed by its steps,
    or, when every record remembers its place in the file it was read from, the
    records in that original order."""
    pairs: list[tuple[Any, bool]] = []
    for job in workload.jobs:
        pairs.append((job, False))
        pairs.extend(
            (task, True)
            for task in job.tasks
            if PREFIX + "JobID" in task.extras or PREFIX + "JobIDRaw" in task.extras
        )
    indices = [item.extras.get(RECORD_KEY) for item, _ in pairs]
    if all(isinstance(i, int) for i in indices) and len(set(indices)) == len(indices):
        pairs.sort(key=lambda pair: pair[0].extras[RECORD_KEY])
    return pairs


#: Model field -> the columns that carry it (a field with none is always lost).
CARRIERS: dict[str, tuple[str, ...]] = {
    "job_number": ("JobID", "JobIDRaw"),
    "submit_time": ("Submit", "Eligible"),
    "wait_time": ("Start",),
    "run_time": ("Elapsed", "ElapsedRaw", "End"),
    "allocated_processors": ("AllocCPUS", "NCPUS"),
    "requested_processors": ("ReqCPUS",),
    "requested_time": ("Timelimit", "TimelimitRaw"),
    "requested_memory": ("ReqMem",),
    "status": ("State",),
    "exit_code": ("ExitCode",),
    "name": ("JobName",),
    "account": ("Account",),
    "nodes": ("NNodes", "AllocNodes"),
    "hosts": ("NodeList",),
    "user_id": ("User", "UID"),
    "group_id": ("Group", "GID"),
    "queue_number": ("QOS",),
    "partition_number": ("Partition",),
    "average_cpu_time": ("TotalCPU",),
    "priority": ("Priority",),
    "executable_number": ("JobName",),  # numbered by job name on reading
    "used_memory": (),
    "preceding_job_number": (),
    "think_time": (),
    "dependencies": (),
}
#: Request extras (set by the reader) -> the columns they are read from.
REQUEST_CARRIERS: dict[str, tuple[str, ...]] = {
    "request.partition": ("Partition",),
    "request.memory": ("ReqMem",),
    "request.gpus": ("ReqTRES", "AllocTRES"),
}
#: Header labels the records or the reader carry.
_HEADER_KEPT = frozenset(
    ("UnixStartTime", "TimeZoneString", "Installation", "User", "Group", "Queue", "Partition")
)


def _note_job(job: Job, columns: set[str], losses: Losses) -> None:
    """Count what the chosen columns cannot hold of one job."""
    for field, carriers in CARRIERS.items():
        value = getattr(job, field)
        if value is None or value == ():
            continue
        if not carriers:
            losses.add(field, "not written (sacct has no column for it)")
        elif not columns.intersection(carriers):
            losses.add(field, f"not written (no {' or '.join(carriers)} column)")
    if job.status is not None and not format_state(job.status) and "State" in columns:
        losses.add("status", f"status {job.status} not written (no sacct state)")
    step_keys = (PREFIX + "JobID", PREFIX + "JobIDRaw")
    if any(not any(k in t.extras for k in step_keys) for t in job.tasks):
        losses.add("tasks", "tasks that are not sacct steps not written")
    for key in job.extras:
        if key.startswith(PREFIX):
            continue
        # request extras the reader derived from columns written back verbatim
        carriers = REQUEST_CARRIERS.get(key, ())
        if any(c in columns and PREFIX + c in job.extras for c in carriers):
            continue
        losses.add(f"extras.{key}", "not written")


def write(
    workload: Workload,
    path: str | os.PathLike[str],
    header: bool | None = None,
    columns: str | None = None,
    timezone: str | None = None,
) -> Losses:
    """Write ``workload`` to ``path`` as ``sacct --parsable2`` output (see the module
    docstring). ``header`` defaults to what the file was read with (True otherwise);
    compression follows the suffix (``.gz``, ``.bz2``, ``.xz``). Returns what the
    columns could not hold."""
    with writer_losses() as losses:
        _write(workload, path, header, columns, timezone, losses)
    return losses


def _write(
    workload: Workload,
    path: str | os.PathLike[str],
    header: bool | None,
    columns: str | None,
    timezone: str | None,
    losses: Losses,
) -> None:
    column_list = _columns(workload, columns)
    if header is None:
        header = bool(workload.meta.get("slurm_has_header", True))
    if timezone:
        zone = _timezone(timezone)
    else:
        try:
            zone = _timezone(workload.header.time_zone_string or "UTC")
        except FormatError:  # a zone name schedlab-slurm does not know: print UTC
            zone = None
    ctx = _Context(workload, zone)
    chosen = set(column_list)
    if workload.meta.get("reader") != "slurm":
        for label in workload.header.labels():
            if label not in _HEADER_KEPT:
                losses.add(f"header.{label}", "not written (sacct output has no header)")
    with open_output(path) as fh:
        if header:
            fh.write("|".join(column_list) + "\n")
        for item, is_step in _records(workload):
            if not is_step:
                _note_job(item, chosen, losses)
            values = step_values(item, column_list) if is_step else job_values(
                item, column_list, ctx
            )
            fh.write("|".join(values) + "\n")
