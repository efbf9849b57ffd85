"""Writing a :class:`schedlab.Workload` as ``sacct --parsable2`` output.

Columns: the ``columns`` option, else the columns the workload was read with
(``workload.meta["slurm_columns"]`` or the order of the ``slurm.*`` extras), else
:data:`~schedlab_slurm.layout.DEFAULT_COLUMNS` (with ``header=False``:
:data:`~schedlab_slurm.layout.XDMOD_COLUMNS`, the order the reader assumes for a
file without header line). Without a header line, columns in any other order are
reported (``meta.slurm_columns``, with the ``-R columns=...`` that reads the file
back): the reader's defaults would misread or refuse the file.

Column names in ``columns=`` are sacct's, matched without regard to case as ``sacct
--format`` matches them (``elapsed`` is written ``Elapsed``); a name sacct does not
know (nor the file the workload was read from), or one named twice (``JobID,jobid``:
the reader refuses a header with a column twice), is an error naming it; empty
names (``JobID,,Submit``) are skipped. So that every file written reads back, the
list (and the columns a workload was read with, when it is the one used) must name
``JobID`` or ``JobIDRaw`` (the reader needs a job id in every record; a list naming
no column at all, ``columns=,``, is refused too) and, without a header line, only
sacct's columns (the ``-R columns=`` that reads the file back takes no other):
otherwise :class:`schedlab.FormatError` naming the option ``columns``. A one-column
list (``columns=JobID``) is written as sacct prints it, and read back. When both
``Timelimit`` and ``TimelimitRaw`` are written from the model, ``Timelimit`` is
rounded up to whole minutes too, as sacct prints both from one number of minutes.

A job read by the ``slurm`` reader keeps its raw column texts; each is written
back unchanged as long as the model value it was turned into is unchanged (so
read-then-write reproduces the records, and editing e.g. ``run_time`` rewrites
``Elapsed``, ``ElapsedRaw`` and ``End``).
Other columns are produced from the model: times from the header's
``UnixStartTime``, ``ReqMem`` per CPU (``Mc``/``Kc``), states
``COMPLETED``/``FAILED``/``CANCELLED`` from the SWF status, names from the header
tables. Steps (the job's tasks that came from step records) follow their job; when
every record remembers its place in the file it was read from (``slurm.record``),
the records are written in that order.

Time zone: sacct prints local times without naming their zone, and the ``slurm``
reader takes them as UTC unless told otherwise (``timezone=``). So that a written
file reads back at the same instants with the reader's defaults, times are printed
in UTC, whatever the header's ``TimeZoneString`` (a label other than UTC is
reported as ``header.TimeZoneString``: the file cannot hold it). Two exceptions:
``timezone=`` names another zone, or the workload was read by the ``slurm`` reader
in another zone (its records are then written back in that zone, unchanged). In
both, ``submit_time`` is reported for every job with a known submit time, with the
``-R timezone=...`` that reads the file back. Raw time columns (and steps' times)
printed in another zone than the one written are re-printed in it.

Simulated schedules (docs/platform.md, "Output"): a job carrying the extras
``schedlab.partition`` and ``schedlab.nodes`` is written with that partition in
``Partition`` and those nodes in ``NodeList`` (platform names ``thin[3]`` in Slurm's
notation: the host ``thin3``; after a group name ending in a digit, ``rack1[0]`` is
``rack1-0``, so that it cannot be ``rack[10]``), not the trace's values; sacct has
no other column for the trace's, so a trace partition (or host list) that differs is
reported as replaced (an unknown trace partition too: it would read back as the
simulated one), and the node names' change of form is reported under
``hosts`` (and so are nodes that would still share a host name: merged).

What the columns cannot hold is reported through ``schedlab.writer_losses`` (so
``schedlab convert`` prints it and ``--strict-lossless`` refuses it): a model field
none of the chosen columns carries, the fields sacct has no column for (preceding
job, think time, dependencies), tasks that
are not steps, extras of other formats, the header labels the records do not
hold and free-text header comments (``header.comment``). A known ``UnixStartTime``
is reported when no record written holds a time (the reader then leaves the
origin unknown). Beyond that, every job record written is read back with the ``slurm``
reader's own rules (:class:`_ReadBack`), and each field that would not come back
as it was is reported: fractions of a second (sacct prints whole seconds:
``wait_time`` 0.5 is read back as 0), limits rounded up to whole minutes
(``TimelimitRaw``), memory rounded to whole kilobytes, SWF statuses sacct has no
state for (2, 3 and 4 are written as ``REQUEUED``, ``COMPLETED`` and ``FAILED`` and
read back as 0, 1 and 0), job numbers the reader's default does not give back (it
numbers jobs 1, 2, 3 ... in submit order; the loss names ``-R job_numbers=raw``
when that reads them back), values the reader derives differently (allocated
processors of a job that never started ...), values containing ``|`` in a way the
reader cannot tell apart, and times sacct cannot print (beyond the year 9999,
written as ``Unknown``). A value the reader would refuse (a negative wait time, a
fractional priority, a host name with a bracket, ``|`` or a line break in a column
that cannot hold one ...) is not written: its column is left unknown and the loss reported, so the
output always reads back; a job number sacct cannot print (unknown, negative) is
written as a new number above all others (the lowest unused one when that would
pass 2**53 - 1). User, group, queue, partition and
executable numbers come back renumbered in order of first appearance, which is no
loss as long as they group the jobs alike; a record whose number does not map one
to one onto the name written for it is reported, and so is a header table entry
whose name is empty (``; Queue: 1`` with no name), written as its number (the
reader reads an empty name as unknown), once per entry as the Grid Engine writer
reports it.

Used memory is written as the job line's ``MaxRSS`` (the reader reads ``MaxRSS x
NTasks / AllocCPUS`` of the job line and its steps, the largest), in kilobytes
(``8192K``, with decimals when the value has them), so that it reads back exactly;
a job read from sacct keeps its raw ``MaxRSS`` (usually empty on the job line, the
steps carrying it). Requested processors are carried by ``ReqCPUS``, else by
``NCPUS`` (the reader's fallback, which prints the allocated processors): without
``ReqCPUS`` only the jobs whose requested count is not the allocated one are
reported.

An unknown run time is written as an empty ``Elapsed`` and an unknown status as an
empty ``State``; the reader reads both back as unknown (a job with an ``End`` time
but no state has ended), so neither is lost.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import itertools
import math
import os
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from schedlab import FormatError, Job, Losses, Workload, open_output, writer_losses
from schedlab.losses import note_table_entries
from schedlab.model import NODES_EXTRA, PARTITION_EXTRA

from .layout import (
    DEFAULT_COLUMNS,
    FREE_TEXT,
    SACCT_COLUMNS,
    XDMOD_COLUMNS,
    AlignmentError,
    align,
    physical_records,
    sacct_column,
)
from .reader import (
    _HEADER_TOKEN,
    _ID_COLUMNS,
    DERIVED_KEY,
    PREFIX,
    RECORD_KEY,
    _line_break_allowed,
    _Parser,
    _Record,
    _Rejected,
    _timezone,
    derived_values,
    first_partition,
)
from .values import (
    compress_nodelist,
    format_duration,
    format_memory,
    format_state,
    format_time,
    parse_int,
    parse_jobid,
    parse_time,
)

#: Extras of a job simulated on a platform (schedlab's docs/platform.md, "Output"):
#: the nodes it ran on (space-separated) and the partition it ran in. They are
#: what the ``NodeList`` and ``Partition`` columns print, over the trace's values.
SIM_NODES = NODES_EXTRA
SIM_PARTITION = PARTITION_EXTRA
#: Key, in the reader's saved derived values, of the zone the raw times are in.
ZONE_KEY = "timezone"
_PLATFORM_NODE = re.compile(r"(.*?)\[(\d+)\]")


#: tzdata's names of UTC itself (aliases of ``Etc/UTC`` and ``Etc/GMT``, at offset 0
#: at every instant): times printed in one of them are UTC times, which the reader's
#: default reads back at the same instants.
_UTC_ZONE_NAMES = frozenset(
    (
        "UTC", "Etc/UTC", "UCT", "Etc/UCT", "Universal", "Etc/Universal", "Zulu",
        "Etc/Zulu", "GMT", "Etc/GMT", "GMT0", "Etc/GMT0", "GMT+0", "Etc/GMT+0",
        "GMT-0", "Etc/GMT-0", "Greenwich", "Etc/Greenwich",
    )
)  # fmt: skip
#: Instants at which a zone named in :data:`_UTC_ZONE_NAMES` is checked to be UTC.
_UTC_CHECKS = tuple(
    _dt.datetime(year, month, 1, tzinfo=_dt.timezone.utc)
    for year in (1900, 1970, 2000, 2038)
    for month in (1, 7)
)


def _zone_name(zone: Any) -> str:
    """The writer's name of ``zone`` (``None``: UTC): ``UTC`` for a zone that is UTC
    under another name (:data:`_UTC_ZONE_NAMES`, offset 0 at every instant checked),
    else its key."""
    if zone is None:
        return "UTC"
    key = getattr(zone, "key", "UTC")
    if key in _UTC_ZONE_NAMES and all(
        zone.utcoffset(at.replace(tzinfo=None)) == _dt.timedelta(0) for at in _UTC_CHECKS
    ):
        return "UTC"
    return str(key)


def slurm_host(node: str) -> str:
    """The Slurm host name of a platform node: schedlab names nodes ``group[i]``,
    a form Slurm's bracket notation reads as the host ``groupi`` (``thin[3]`` ->
    ``thin3``); after a group name that ends in a digit a ``-`` keeps the index
    apart (``rack1[0]`` -> ``rack1-0``, not ``rack10``, the name of ``rack[10]``);
    other names are kept."""
    match = _PLATFORM_NODE.fullmatch(node)
    if match is None:
        return node
    group, index = match.group(1), match.group(2)
    return f"{group}-{index}" if group[-1:].isdigit() else group + index


def merged_hosts(workload: Workload) -> set[str]:
    """The Slurm host names (:func:`slurm_host`) that more than one platform node of
    the simulated jobs of ``workload`` would be written as (empty unless node names
    collide, e.g. a group named ``rack1-`` beside one named ``rack1``)."""
    node_of: dict[str, str] = {}
    merged: set[str] = set()
    for job in workload.jobs:
        for node in simulated_nodes(job) or ():
            host = slurm_host(node)
            if node_of.setdefault(host, node) != node:
                merged.add(host)
    return merged


def simulated_nodes(job: Job) -> tuple[str, ...] | None:
    """The platform nodes a simulated job ran on (the extra ``schedlab.nodes``), or
    ``None`` for a job that was not simulated on a platform."""
    nodes = job.extras.get(SIM_NODES)
    return None if nodes is None else tuple(str(nodes).split())


class _Context:
    """What the column formatters need besides the job."""

    def __init__(self, workload: Workload, tz: Any) -> None:
        header = workload.header
        self.origin = header.unix_start_time or 0
        self.tz = tz
        self.zone = _zone_name(tz)
        #: zone name -> zone of the raw texts of jobs read in another zone
        self.zones: dict[str, Any] = {}
        #: column -> raw times re-printed from an ambiguous local time
        self.ambiguous: dict[str, int] = {}
        self.users = header.names("User")
        self.groups = header.names("Group")
        self.queues = header.names("Queue")
        self.partitions = header.names("Partition")
        self.executables = header.names("Executable")
        self.cluster = header.installation or ""
        #: ``Timelimit`` printed in whole minutes, as ``TimelimitRaw`` beside it
        #: (sacct prints both from one number of minutes)
        self.whole_minutes = False
        #: Slurm host names that several platform nodes would be written as
        self.merged_hosts: set[str] = set()
        #: (header table, number) whose empty name was written as the number
        self.made_up: set[tuple[str, int]] = set()


def _num(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else str(value)


def _abs(ctx: _Context, rel: float | None) -> float | None:
    return None if rel is None else ctx.origin + rel


def _name(table: dict[int, str], number: int | None) -> str:
    if number is None:
        return ""
    return table.get(number) or str(number)  # an empty name would read as unknown


def _table_name(ctx: _Context, label: str, number: int | None) -> str:
    """The name written for ``number`` of the header table ``label`` (``User``,
    ``Group``, ``Queue``, ``Partition``): its name, else the number; an entry whose
    name is empty (which the reader would read back as unknown) is noted in
    ``ctx.made_up``, to be reported."""
    table = {
        "User": ctx.users,
        "Group": ctx.groups,
        "Queue": ctx.queues,
        "Partition": ctx.partitions,
    }[label]
    if number is not None and number in table and not table[number]:
        ctx.made_up.add((label, number))
    return _name(table, number)


def _limit_minutes(job: Job, ctx: _Context) -> str:
    if job.requested_time is None:
        return ""
    return str(-(-int(job.requested_time) // 60))


def _elapsed(job: Job, ctx: _Context) -> int | None:
    """The run time in whole seconds, at most the printed ``End - Start`` (sacct
    prints ``End - Start - Suspended``, and the reader refuses more): a run time
    and times with fractions of a second may round apart."""
    if job.run_time is None:
        return None
    seconds = round(job.run_time)
    start, end = _abs(ctx, job.start_time), _abs(ctx, job.end_time)
    if start is not None and end is not None:
        seconds = min(seconds, max(0, round(end) - round(start)))
    return seconds


def _limit(job: Job, ctx: _Context) -> str:
    if job.requested_time is None or not ctx.whole_minutes:
        return format_duration(job.requested_time)
    return format_duration(int(_limit_minutes(job, ctx)) * 60)


def _avg_total_cpu(job: Job, ctx: _Context) -> str:
    if job.average_cpu_time is None or not job.allocated_processors:
        return ""
    return format_duration(job.average_cpu_time * job.allocated_processors)


def _exit(job: Job, ctx: _Context) -> str:
    # sacct prints exit codes as unsigned numbers: a negative one is not written
    # (the read-back reports it)
    if job.exit_code is None or job.exit_code < 0:
        return ""
    return f"{job.exit_code}:0"


def _nodelist(job: Job, ctx: _Context) -> str:
    return _nodelist_of(job, job.hosts)


def _nodelist_of(job: Job, hosts: tuple[str, ...]) -> str:
    if hosts:
        return compress_nodelist(hosts)
    # "None assigned" (the job never started) only when nothing says it ran
    never_ran = job.wait_time is None and not job.run_time and job.status is not None
    return "None assigned" if never_ran else ""


#: Column -> (derived value it depends on, formatter from the model).
FORMATTERS: dict[str, tuple[str | None, Callable[[Job, _Context], str]]] = {
    "JobID": ("job_number", lambda j, c: _num(j.job_number)),
    "JobIDRaw": ("job_number", lambda j, c: _num(j.job_number)),
    "Submit": ("submit", lambda j, c: format_time(_abs(c, j.submit_time), c.tz)),
    "Eligible": ("submit", lambda j, c: format_time(_abs(c, j.submit_time), c.tz)),
    "Start": ("start", lambda j, c: format_time(_abs(c, j.start_time), c.tz)),
    "End": ("end", lambda j, c: format_time(_abs(c, j.end_time), c.tz)),
    "Elapsed": ("run_time", lambda j, c: format_duration(_elapsed(j, c))),
    "ElapsedRaw": ("run_time", lambda j, c: _num(_elapsed(j, c))),
    "AllocCPUS": ("allocated", lambda j, c: _num(j.allocated_processors)),
    "NCPUS": ("allocated", lambda j, c: _num(j.allocated_processors)),
    "ReqCPUS": ("requested_processors", lambda j, c: _num(j.requested_processors)),
    "Timelimit": ("requested_time", _limit),
    "TimelimitRaw": ("requested_time", _limit_minutes),
    "ReqMem": ("requested_memory", lambda j, c: format_memory(j.requested_memory, "c")),
    "State": ("status", lambda j, c: format_state(j.status)),
    "ExitCode": ("exit_code", _exit),
    "JobName": ("name", lambda j, c: j.name or _name(c.executables, j.executable_number)),
    "Account": ("account", lambda j, c: j.account or ""),
    "NNodes": ("nodes", lambda j, c: _num(j.nodes)),
    "AllocNodes": ("nodes", lambda j, c: _num(j.nodes)),
    "NodeList": ("hosts", _nodelist),
    "User": ("user", lambda j, c: _table_name(c, "User", j.user_id)),
    "UID": ("user", lambda j, c: _num(j.user_id)),
    "Group": ("group", lambda j, c: _table_name(c, "Group", j.group_id)),
    "GID": ("group", lambda j, c: _num(j.group_id)),
    "QOS": ("qos", lambda j, c: _table_name(c, "Queue", j.queue_number)),
    "Partition": ("partition", lambda j, c: _table_name(c, "Partition", j.partition_number)),
    "TotalCPU": ("average_cpu_time", _avg_total_cpu),
    "Priority": (None, lambda j, c: _num(j.priority)),
    "Cluster": (None, lambda j, c: c.cluster),
}


def _raw_zone(job: Job) -> str:
    """The zone the raw time columns of ``job`` (and of its steps) are printed in."""
    saved = job.extras.get(DERIVED_KEY)
    return str(saved.get(ZONE_KEY, "UTC")) if isinstance(saved, dict) else "UTC"


def _rezone(text: str, column: str, source: str, ctx: _Context) -> str:
    """A raw time ``text`` printed in zone ``source``, printed in the writer's zone."""
    if source == ctx.zone or column not in _TIME_COLUMNS:
        return text
    if source not in ctx.zones:
        ctx.zones[source] = _timezone(source)
    zone = ctx.zones[source]
    try:
        first, second = parse_time(text, zone), parse_time(text, zone, fold=1)
    except ValueError:
        return text  # not a time the reader reads: the read-back deals with it
    if first is None:
        return text
    if first != second:  # the hour repeated when daylight saving time ends
        ctx.ambiguous[column] = ctx.ambiguous.get(column, 0) + 1
    return format_time(first, ctx.tz)


def job_values(job: Job, columns: list[str], ctx: _Context) -> list[str]:
    """The column texts of one job record."""
    extras = job.extras
    saved = extras.get(DERIVED_KEY)
    current = derived_values(job, ctx.origin) if saved is not None else None
    source = _raw_zone(job)
    nodes = simulated_nodes(job)
    out = []
    for column in columns:
        if column == "NodeList" and nodes is not None:
            out.append(_nodelist_of(job, tuple(slurm_host(n) for n in nodes)))
            continue
        if column == "Partition" and SIM_PARTITION in extras:
            out.append(str(extras[SIM_PARTITION]))
            continue
        raw = extras.get(PREFIX + column)
        entry = FORMATTERS.get(column)
        if raw is not None:
            depends = entry[0] if entry else None
            # job_number is renumbered freely (sequence numbers): JobID stays raw.
            if (
                depends is None
                or depends == "job_number"
                or (current is not None and saved.get(depends) == current.get(depends))
            ):
                if source == ctx.zone or column not in _TIME_COLUMNS:
                    out.append(str(raw))
                elif entry is not None and column != "Eligible":
                    out.append(entry[1](job, ctx))  # the exact model time, re-printed
                else:
                    out.append(_rezone(str(raw), column, source, ctx))
                continue
        out.append(entry[1](job, ctx) if entry else "")
    if "MaxRSS" in columns and extras.get(PREFIX + "MaxRSS") is None:
        out[columns.index("MaxRSS")] = _max_rss(job, dict(zip(columns, out, strict=True)))
    return out


def _count(text: str | None) -> int | None:
    """A count column's text as the reader reads it (``None``: empty or refused)."""
    try:
        return parse_int(text or "")
    except ValueError:
        return None


def _max_rss(job: Job, written: dict[str, str]) -> str:
    """The job line's ``MaxRSS`` that the reader reads back as ``job.used_memory``
    (KB per CPU): it reads ``MaxRSS x NTasks / CPUs`` (``AllocCPUS``, else
    ``NCPUS``, else 1, as ``written``), so the used memory times the CPUs over the
    tasks, in kilobytes (``K``, with the decimals a float needs). Empty when the
    used memory is unknown; a value the reader refuses (negative, beyond 2**53 - 1
    KB) is left to the read-back, which blanks and reports it."""
    used = job.used_memory
    if used is None or not math.isfinite(used):
        return ""
    cpus = _count(written.get("AllocCPUS")) or _count(written.get("NCPUS")) or 1
    tasks = _count(written.get("NTasks")) or 1
    kilobytes = used * cpus / tasks
    if float(kilobytes).is_integer():
        return f"{int(kilobytes)}K"
    return f"{format(Decimal(repr(float(kilobytes))), 'f')}K"


def step_values(
    task: Any, columns: list[str], ctx: _Context | None = None, source: str = "UTC"
) -> list[str]:
    """The column texts of one step record (kept verbatim from the file; its times
    re-printed when the writer prints another zone than ``source``, its job's)."""
    values = [str(task.extras.get(PREFIX + c, "")) for c in columns]
    if ctx is None or source == ctx.zone:
        return values
    return [_rezone(v, c, source, ctx) for c, v in zip(columns, values, strict=True)]


def _columns(
    workload: Workload, option: str | None, header: bool, source: str = "<output>"
) -> list[str]:
    """The columns to write: the ``columns`` option, else the columns the workload
    was read with, else :data:`DEFAULT_COLUMNS` (with a header line) or the
    reader's order for a file without one, Open XDMoD's (:data:`XDMOD_COLUMNS`).

    Names in the option are sacct's, matched without regard to case as ``sacct
    --format`` does (``elapsed`` is written ``Elapsed``), or columns the workload
    was read with; any other name is an error naming it (``source``: the file to
    write), never an empty column of a header sacct would not print."""
    default = list(DEFAULT_COLUMNS if header else XDMOD_COLUMNS)
    read_with = _read_columns(workload)
    if option is not None:
        names: list[str] = []
        for given in (c.strip() for c in re.split(r"[|,]", option)):
            if not given:
                continue
            name = sacct_column(given, read_with or ())
            if name is None:
                raise FormatError(
                    f"unknown sacct column {given!r} (sacct's names, in any case: "
                    "JobID, Submit, Elapsed, NCPUS ...)",
                    source=source,
                    field="columns",
                )
            if name in names:
                spelled = "" if given == name else f" (as {given!r}: names match in any case)"
                raise FormatError(
                    f"column {name!r} appears twice in the columns option{spelled}: "
                    "the reader refuses a file with a column twice",
                    source=source,
                    field="columns",
                )
            names.append(name)
        _check_readable(names, header, source, "the columns option")
        return names
    if read_with:
        _check_readable(read_with, header, source, "the columns the workload was read with")
    return read_with or default


def _check_readable(columns: list[str], header: bool, source: str, what: str) -> None:
    """Refuse columns whose file the reader could not read back (a
    :class:`FormatError` naming ``source`` and the option ``columns``): none at all
    (every record would be an empty line), no job id column (``JobID``,
    ``JobIDRaw``: the reader needs one in every record, and a header line without
    one is not taken as a header), a name that is no header name (with a header
    line) or, without a header line, a name the reader's ``-R columns=`` does not
    take (a column sacct does not know, kept from the file read)."""
    if not columns:
        problem = "names no column"
    elif not any(c in columns for c in _ID_COLUMNS):
        problem = (
            f"({','.join(columns)}) has no JobID or JobIDRaw column: the reader "
            "needs a job id in every record"
        )
    else:
        if header:
            bad = [c for c in columns if not _HEADER_TOKEN.match(c)]
            why = "not a name a sacct header line can hold"
        else:
            bad = [c for c in columns if c not in SACCT_COLUMNS]
            why = (
                "not a sacct column: without a header line the reader's -R columns= "
                "cannot name it (write the header line)"
            )
        if not bad:
            return
        problem = f"names {bad[0]!r}, {why}"
    raise FormatError(
        f"{what} {problem}, so the file would not read back", source=source, field="columns"
    )


def _read_columns(workload: Workload) -> list[str] | None:
    """The columns the workload was read with (``meta["slurm_columns"]``, else the
    ``slurm.*`` extras of its first job), ``None`` when it was not read from sacct."""
    if workload.meta.get("slurm_columns"):
        return list(workload.meta["slurm_columns"])
    for job in workload:
        keys = [
            k[len(PREFIX) :]
            for k in job.extras
            if k.startswith(PREFIX) and k not in (RECORD_KEY, DERIVED_KEY)
        ]
        return keys or None
    return None


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
    "requested_processors": ("ReqCPUS", "NCPUS"),  # the reader: ReqCPUS, else NCPUS
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
    "used_memory": ("MaxRSS",),  # on the job line (see _max_rss)
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
#: Simulation extras -> the column that prints them (read back as ``hosts`` and as
#: the partition's name, ``request.partition``).
SIM_CARRIERS: dict[str, str] = {SIM_NODES: "NodeList", SIM_PARTITION: "Partition"}
#: Header labels the records or the reader carry (``TimeZoneString``: see ``_note_zone``).
_HEADER_KEPT = frozenset(
    ("UnixStartTime", "TimeZoneString", "Installation", "User", "Group", "Queue", "Partition")
)
#: What writing the simulated partition of a job whose trace partition is unknown
#: is reported as (unknown stays unknown otherwise).
_PARTITION_MADE = "unknown in the trace, written as the one the job ran in (schedlab.partition)"
#: What an empty name of a header table written as its number is reported as (one
#: count per table entry, as the Grid Engine writer counts them).
_EMPTY_NAME = (
    "an empty name, written as a made-up one: its number (the reader reads an empty "
    "name as unknown)"
)
#: What replacing the trace's partition with the simulated one is reported as.
_PARTITION_REPLACED = (
    "the trace's partition replaced by the one the job ran in (schedlab.partition)"
)


def _note_job(job: Job, columns: set[str], losses: Losses) -> set[str]:
    """Count what the chosen columns cannot hold of one job; returns the fields
    reported (the read-back does not report them again)."""
    reported: set[str] = set()
    for field, carriers in CARRIERS.items():
        value = getattr(job, field)
        if value is None or value == ():
            continue
        if not carriers:
            losses.add(field, "not written (sacct has no column for it)")
            reported.add(field)
        elif not columns.intersection(carriers):
            losses.add(field, f"not written (no {' or '.join(carriers)} column)")
            reported.add(field)
    step_keys = (PREFIX + "JobID", PREFIX + "JobIDRaw")
    if any(not any(k in t.extras for k in step_keys) for t in job.tasks):
        losses.add("tasks", "tasks that are not sacct steps not written")
    simulated = job.extras.get(SIM_PARTITION) if "Partition" in columns else None
    for key in job.extras:
        if key.startswith(PREFIX):
            continue
        if SIM_CARRIERS.get(key) in columns:  # printed in NodeList / Partition
            continue
        if key == "request.partition" and simulated is not None:
            if job.extras[key] != simulated:
                losses.add(f"extras.{key}", _PARTITION_REPLACED)
            continue
        # request extras the reader derived from columns written back verbatim
        carriers = REQUEST_CARRIERS.get(key, ())
        if any(c in columns and PREFIX + c in job.extras for c in carriers):
            continue
        losses.add(f"extras.{key}", "not written")
    return reported


def _trace_partition(job: Job, ctx: _Context) -> str:
    """The partition the trace gives ``job`` (as the writer would print it)."""
    raw = job.extras.get(PREFIX + "Partition")
    saved = job.extras.get(DERIVED_KEY)
    if raw is not None and isinstance(saved, dict):
        if saved.get("partition") == job.partition_number:
            return str(raw)
    return _name(ctx.partitions, job.partition_number)


def _note_simulated(job: Job, columns: set[str], ctx: _Context, losses: Losses) -> set[str]:
    """Report the trace's values that the simulated ones replace (a simulated job's
    ``Partition`` and ``NodeList`` print where it ran on the platform, and sacct has
    no other column for the trace's); returns the fields reported."""
    reported: set[str] = set()
    if "Partition" in columns and SIM_PARTITION in job.extras:
        trace = _trace_partition(job, ctx)
        simulated = str(job.extras[SIM_PARTITION])
        if trace != simulated:
            # unknown in the trace too: read back as the simulated one
            losses.add("partition_number", _PARTITION_REPLACED if trace else _PARTITION_MADE)
            reported.add("partition_number")
    nodes = simulated_nodes(job)
    if "NodeList" in columns and nodes is not None and job.hosts and tuple(job.hosts) != nodes:
        losses.add(
            "hosts", "the trace's hosts replaced by the nodes the job ran on (schedlab.nodes)"
        )
        reported.add("hosts")
    if "NodeList" in columns and any(slurm_host(n) in ctx.merged_hosts for n in nodes or ()):
        losses.add(
            "hosts",
            "distinct platform nodes written under one Slurm host name (read back as one host)",
        )
        reported.add("hosts")
    return reported


#: Column -> the model field it feeds (for a record the reader would reject).
_FIELD_OF: dict[str, str] = {}
for _field, _carriers in CARRIERS.items():
    for _column in _carriers:
        _FIELD_OF.setdefault(_column, _field)

#: Fields compared with what the reader makes of the written record.
COMPARED = (
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_processors",
    "average_cpu_time",
    "used_memory",
    "requested_processors",
    "requested_time",
    "requested_memory",
    "status",
    "name",
    "account",
    "nodes",
    "hosts",
    "exit_code",
    "priority",
)
_TIMES = frozenset(("submit_time", "wait_time", "run_time"))


#: Columns holding times: blanked as ``Unknown`` (else as empty).
_TIME_COLUMNS = frozenset(("Submit", "Eligible", "Start", "End"))


#: The highest job id the reader takes (2**53 - 1, as every schedlab reader).
_MAX_ID = 2**53 - 1


def _digest(values: list[str]) -> bytes:
    """A digest of a record's values (a set of them stays small for large files)."""
    return hashlib.blake2b(
        "\x00".join(values).encode("utf-8", "surrogatepass"), digest_size=16
    ).digest()


class _ReadBack:
    """Reads each written job record back with the reader's rules: a value the
    reader would reject is not written (its column is left unknown, and the loss
    reported), so the output always reads back; then every field that would not come
    back as it is in the model is reported."""

    def __init__(
        self,
        source: str,
        columns: list[str],
        tz: Any,
        origin: float,
        workload: Workload,
        header: bool = True,
    ) -> None:
        self.parser = _Parser(source, tz, False, "sequence", "file")
        # the records are read in the order written: what the header line says, or,
        # without one, the reader's default order (what _note_headerless checks) or
        # the -R columns= it reports
        self.parser.has_header = header
        self.parser.columns = columns
        self.columns = columns
        self.free = [c in FREE_TEXT for c in columns]
        self.origin = origin
        #: the earliest submission read back (epoch seconds): the reader's origin
        self.first: float | None = None
        #: the earliest step time read back: the reader's origin when no job has a
        #: submission
        self.first_step: float | None = None
        self.ids = [c for c in ("JobID", "JobIDRaw") if c in columns]
        known = [j.job_number for j in workload.jobs if isinstance(j.job_number, int)]
        #: numbers for jobs whose number sacct cannot print: above every other while
        #: the reader takes them (at most 2**53 - 1), then the lowest unused from 1
        taken = set(known)
        #: digests of the job records written: the reader refuses a copy of one
        self.written: set[bytes] = set()
        #: ``(submit time read back, job number, number -R job_numbers=raw reads)``
        #: of each job record written, in the order written
        self.numbers: list[tuple[float | None, int | None, int | None]] = []
        self.fresh = itertools.chain(
            range(max([0, *known]) + 1, _MAX_ID + 1),
            (n for n in range(1, _MAX_ID + 1) if n not in taken),
        )

    def check(
        self,
        job: Job,
        values: list[str],
        steps: list[list[str]],
        skip: set[str],
        losses: Losses,
    ) -> list[str]:
        """The values to write for ``job`` (``values``, with what the reader would
        reject blanked), after reporting what of ``job`` they do not carry (with its
        step records ``steps``); ``skip``: fields already reported."""
        values = list(values)
        reported = set(skip)
        self.check_ids(values, reported, losses)
        for _ in range(len(values) + 1):
            got = self.readable(values, reported, losses)
            records = [_Record(0, 0, got, parse_jobid(got.get("JobID") or got["JobIDRaw"]))]
            for index, fields in enumerate(steps, 1):
                step = dict(zip(self.columns, fields, strict=True))
                try:
                    jobid = parse_jobid(step.get("JobID") or step.get("JobIDRaw") or "")
                except ValueError:
                    continue
                records.append(_Record(index, 0, step, jobid))
            try:
                back, _ = self.parser.job(records[0], records[1:])
            except (_Rejected, FormatError) as exc:
                error = exc.error if isinstance(exc, _Rejected) else exc
                if error.field not in self.columns or records[0].line != error.line:
                    raise  # not a column of the job record: a bug, not a value
                self.blank(
                    values, error.field, f"the reader rejects it: {error.message}", reported, losses
                )
                continue
            finally:
                self.parser.unknown_states.clear()
            self.compare(job, back, reported, losses)
            self.check_copy(values, losses)
            self.numbers.append((back.submit_time, job.job_number, self.raw_number(values)))
            return values
        raise AssertionError("a record with every column blank reads back")

    def raw_number(self, values: list[str]) -> int | None:
        """The job number ``-R job_numbers=raw`` reads from a written record:
        ``JobIDRaw`` when it is a plain number, else the base of ``JobID``."""
        got = dict(zip(self.columns, values, strict=True))
        for column in ("JobIDRaw", "JobID"):
            try:
                jobid = parse_jobid(got.get(column, ""))
            except ValueError:
                continue
            if column == "JobID" or (not jobid.kind and jobid.step is None):
                return jobid.base
        return None

    def report_numbers(self, losses: Losses) -> None:
        """Report the job numbers the reader's default (``job_numbers=sequence``: 1,
        2, 3 ... in submit order) does not give back, with the option that does when
        the numbers written are the job numbers."""
        order = sorted(
            range(len(self.numbers)),
            key=lambda i: (self.numbers[i][0] is None, self.numbers[i][0] or 0),
        )
        wrong = [
            i for position, i in enumerate(order, 1) if self.numbers[i][1] not in (None, position)
        ]
        if not wrong:
            return
        raw = all(self.numbers[i][2] == self.numbers[i][1] for i in wrong)
        losses.add(
            "job_number",
            "read back as the job's place in submit order (1, 2, 3 ..., the reader's "
            "default)" + (": read back with -R job_numbers=raw" if raw else ""),
            len(wrong),
        )

    def check_copy(self, values: list[str], losses: Losses) -> None:
        """A job record equal field for field to one written before (two identical
        jobs, e.g. an SWF job line given twice) is one the reader refuses as a copy:
        it is written with a new job number (reported)."""
        digest = _digest(values)
        if digest in self.written:
            fresh = str(next(self.fresh))
            for column in self.ids:
                values[self.columns.index(column)] = fresh
            losses.add(
                "job_number",
                "repeats a job record written before field for field (the reader refuses "
                "a copy): written as a new number",
            )
            digest = _digest(values)
        self.written.add(digest)

    def check_ids(self, values: list[str], reported: set[str], losses: Losses) -> None:
        """A job record needs a job id the reader takes for a job (not a step): an
        unknown job number, or one sacct cannot print, is written as a new number
        above every other (and reported)."""
        fresh = None
        for column in self.ids:
            index = self.columns.index(column)
            try:
                ok = parse_jobid(values[index]).step is None
            except ValueError:
                ok = False
            if ok:
                continue
            if "job_number" not in reported:
                losses.add(
                    "job_number",
                    f"{_shorten(values[index])} cannot be a Slurm job id: written as a new number",
                )
                reported.add("job_number")
            if fresh is None:
                fresh = next(self.fresh)
            values[index] = str(fresh)

    def readable(self, values: list[str], reported: set[str], losses: Losses) -> dict[str, str]:
        """The values the reader would find in the record; values it could not tell
        apart from separators are blanked first (and reported)."""
        for index, value in enumerate(values):
            if ("\n" in value or "\r" in value) and not _line_break_allowed(self.columns[index]):
                self.blank(
                    values,
                    self.columns[index],
                    "it holds a line break, which sacct prints in free-text columns only",
                    reported,
                    losses,
                )
        for index, value in enumerate(values):
            if "\n" in value or "\r" in value:
                text = "|".join(values)
                lines = iter(text.splitlines(keepends=True))
                if list(physical_records(lines, len(self.columns))) == [(1, text)]:
                    break
                self.blank(values, self.columns[index], "it holds line breaks", reported, losses)
        for index, value in enumerate(values):
            if "|" in value and not self.free[index]:
                self.blank(values, self.columns[index], "it holds '|'", reported, losses)
        while True:
            try:
                got = align("|".join(values).split("|"), self.columns)
                break
            except AlignmentError:
                index = max(i for i, v in enumerate(values) if "|" in v)
                self.blank(
                    values,
                    self.columns[index],
                    "its '|' cannot be told from separators",
                    reported,
                    losses,
                )
        for column, value, other in zip(self.columns, values, got, strict=True):
            if value != other:
                field = _FIELD_OF.get(column, f"extras.{PREFIX}{column}")
                if field not in reported:
                    losses.add(
                        field, "read back differently (its '|' cannot be told from separators)"
                    )
                    reported.add(field)
        record = dict(zip(self.columns, got, strict=True))
        if not (record.get("JobID") or record.get("JobIDRaw")):
            raise AssertionError("job records are written with a job id")
        return record

    def blank(
        self, values: list[str], column: str, why: str, reported: set[str], losses: Losses
    ) -> None:
        """Leave ``column`` unknown in ``values`` (``Unknown`` for a time, else
        empty), reporting the loss."""
        index = self.columns.index(column)
        if column in ("JobID", "JobIDRaw"):
            raise AssertionError(f"job id {values[index]!r} does not read back ({why})")
        field = _FIELD_OF.get(column, f"extras.{PREFIX}{column}")
        if field not in reported:
            losses.add(field, f"not written ({column} {_shorten(values[index])}: {why})")
            reported.add(field)
        values[index] = "Unknown" if column in _TIME_COLUMNS else ""

    def compare(self, job: Job, back: Job, reported: set[str], losses: Losses) -> None:
        """Report each field of ``job`` that ``back`` (what the reader made of the
        written record) does not hold."""
        if back.submit_time is not None:
            if self.first is None or back.submit_time < self.first:
                self.first = back.submit_time
            back.submit_time -= self.origin
        for task in back.tasks:
            for time in (task.start_time, task.end_time):
                if time is not None and (self.first_step is None or time < self.first_step):
                    self.first_step = time
        nodes = simulated_nodes(job) if "NodeList" in self.columns else None
        for field in COMPARED:
            if field in reported:
                continue
            before, after = getattr(job, field), getattr(back, field)
            if field == "hosts":
                before, after = tuple(before), tuple(after)
                if nodes is not None:  # what the simulation decided
                    before = nodes
                    if before != after and after == tuple(slurm_host(n) for n in nodes):
                        losses.add(
                            field,
                            "platform node names written in Slurm's "
                            "notation (a[0] is read back as the host a0, a1[0] as a1-0)",
                        )
                        continue
            if before == after:
                continue
            if field == "name" and before is None and job.executable_number is not None:
                # JobName carries the executable number (the reader numbers names)
                losses.add(
                    field, "unknown, written as the executable number (read back as the name)"
                )
                continue
            losses.add(field, _difference(field, before, after, self.columns))


#: Numbered fields -> the columns whose text the reader numbers them by (in order
#: of first appearance), first non-empty one wins.
NUMBERED: dict[str, tuple[str, ...]] = {
    "user_id": ("User", "UID"),
    "group_id": ("Group", "GID"),
    "queue_number": ("QOS",),
    "partition_number": ("Partition",),
    "executable_number": ("JobName",),
}


class _Numbering:
    """Checks that each numbered field (user, group, queue, partition, executable)
    maps one to one onto the text the reader will number it by: the numbers read back
    differ (the reader numbers names in order of first appearance) but group the jobs
    alike. A record in a group that does not is reported."""

    def __init__(self, columns: list[str]) -> None:
        self.fields = {
            field: [c for c in carriers if c in columns]
            for field, carriers in NUMBERED.items()
            if any(c in columns for c in carriers)
        }
        self.pairs: dict[str, list[tuple[Any, Any]]] = {f: [] for f in self.fields}

    def add(self, job: Job, values: dict[str, str], trace_partition: str = "") -> None:
        """Note what ``job`` was written with (``values``: column -> text;
        ``trace_partition``: the partition the trace gives a simulated job)."""
        for field, carriers in self.fields.items():
            key = next((values[c] for c in carriers if values[c]), None)
            if field == "partition_number":  # the reader numbers the first of a list
                key = first_partition(key)
            number = getattr(job, field)
            if field == "partition_number" and SIM_PARTITION in job.extras:
                # the simulated partition (its name) replaces the trace's number
                # where they differ (reported by _note_simulated)
                if key is None or trace_partition != key:
                    number = None if key is None else ("simulated", key)
            self.pairs[field].append((number, key))

    def report(self, losses: Losses) -> None:
        """Report the records whose number would not group the jobs as before."""
        for field, pairs in self.pairs.items():
            forward: dict[Any, set[Any]] = {}
            backward: dict[Any, set[Any]] = {}
            for number, key in pairs:
                if number is not None and key is not None:
                    forward.setdefault(number, set()).add(key)
                    backward.setdefault(key, set()).add(number)
            invented = lost = merged = 0
            for number, key in pairs:
                if number is None and key is not None:
                    invented += 1
                elif number is not None and key is None:
                    lost += 1
                elif number is not None and (len(forward[number]) > 1 or len(backward[key]) > 1):
                    merged += 1
            what = "name" if field == "executable_number" else "name or number written"
            losses.add(field, f"unknown, read back as the number of its {what}", invented)
            losses.add(field, "read back as unknown", lost)
            losses.add(field, f"not one to one with the {what} the reader numbers", merged)


def _shorten(text: str) -> str:
    return repr(text) if len(text) <= 30 else repr(text[:27] + "...")


def _difference(field: str, before: Any, after: Any, columns: list[str]) -> str:
    """What a loss of ``field`` read back as ``after`` (instead of ``before``) is."""
    if field == "requested_processors" and "ReqCPUS" not in columns:
        # read back from NCPUS, which prints the allocated processors
        what = _difference(field, before, after, [*columns, "ReqCPUS"])
        return f"{what} (no ReqCPUS column: read back from NCPUS, the allocated count)"
    if before is None:
        return "unknown, read back as 0" if after == 0 else "unknown, read back as a value"
    if after is None:
        return "read back as unknown"
    if field == "status":
        state = format_state(before) or "no state"
        return f"status {before} written as {state!r}, read back as {after}"
    numeric = all(isinstance(v, (int, float)) for v in (before, after))
    if numeric and abs(before - after) < 1:
        if field in _TIMES:
            return "rounded to whole seconds (sacct times have no fractions)"
        if field == "requested_memory":
            return "rounded to whole kilobytes"
        if field == "average_cpu_time":
            return "rounded (TotalCPU holds whole seconds)"
        return "rounded"
    if field == "requested_time" and numeric and abs(before - after) < 60:
        if "TimelimitRaw" in columns:
            return "rounded up to whole minutes (TimelimitRaw)"
        return "rounded"
    return "read back as a different value"


def write(
    workload: Workload,
    path: str | os.PathLike[str],
    header: bool | None = None,
    columns: str | None = None,
    timezone: str | None = None,
) -> Losses:
    """Write ``workload`` to ``path`` as ``sacct --parsable2`` output (see the module
    docstring). ``header`` defaults to what the file was read with (True otherwise;
    ``False`` with columns other than Open XDMoD's order is reported, see above);
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
    if header is None:
        header = bool(workload.meta.get("slurm_has_header", True))
    column_list = _columns(workload, columns, header, os.fspath(path))
    zone = _timezone(timezone or _default_zone(workload), os.fspath(path))
    ctx = _Context(workload, zone)
    chosen = set(column_list)
    ctx.whole_minutes = "TimelimitRaw" in chosen
    if "NodeList" in chosen:
        ctx.merged_hosts = merged_hosts(workload)
    if workload.meta.get("reader") != "slurm":
        for label in workload.header.labels():
            if label not in _HEADER_KEPT:
                losses.add(f"header.{label}", "not written (sacct output has no header)")
        _note_unused_entries(workload, losses)
    # free-text comments (no label, e.g. a column legend): the reader makes none
    comments = sum(1 for entry in workload.header.entries if entry.label is None)
    losses.add("header.comment", "not written (sacct output has no header)", comments)
    _note_zone(workload, ctx, chosen, losses)
    _note_headerless(column_list, header, losses)
    check = _ReadBack(os.fspath(path), column_list, zone, ctx.origin, workload, header)
    numbering = _Numbering(column_list)
    zone_of: dict[int, str] = {}  # step (by id) -> the zone of its raw times
    with open_output(path) as fh:
        if header:
            fh.write("|".join(column_list) + "\n")
        for item, is_step in _records(workload):
            if is_step:
                values = step_values(item, column_list, ctx, zone_of[id(item)])
            else:
                reported = _note_job(item, chosen, losses)
                reported |= _note_simulated(item, chosen, ctx, losses)
                source = _raw_zone(item)
                steps = []
                for task in item.tasks:
                    if PREFIX + "JobID" in task.extras or PREFIX + "JobIDRaw" in task.extras:
                        zone_of[id(task)] = source
                        steps.append(step_values(task, column_list, ctx, source))
                values = check.check(
                    item, job_values(item, column_list, ctx), steps, reported, losses
                )
                numbering.add(
                    item, dict(zip(column_list, values, strict=True)), _trace_partition(item, ctx)
                )
            fh.write("|".join(values) + "\n")
    numbering.report(losses)
    for label, _number in sorted(ctx.made_up):
        losses.add(f"header.{label}", _EMPTY_NAME)
    check.report_numbers(losses)
    first = check.first if check.first is not None else check.first_step
    _note_origin(workload, ctx, first, losses)
    for column, count in ctx.ambiguous.items():
        field = f"extras.{PREFIX}{column}" if column == "Eligible" else "tasks"
        losses.add(
            field,
            f"{column} in the hour repeated when daylight saving time ends, "
            "re-printed as its first occurrence",
            count,
        )


#: The header tables whose names the records print, and the field naming the entry.
_TABLE_FIELDS = (
    ("User", "user_id"),
    ("Group", "group_id"),
    ("Queue", "queue_number"),
    ("Partition", "partition_number"),
)


def _note_unused_entries(workload: Workload, losses: Losses) -> None:
    """Report the entries of the name tables (``User``, ``Group``, ``Queue``,
    ``Partition``) that no record gives back: those no job uses, and text after a
    name (the records print the name only; the reader makes its tables from them)."""
    columns = workload.to_arrays()
    for label, field in _TABLE_FIELDS:
        if not workload.header.table(label):
            continue
        used = {int(v) for v in set(columns[field].tolist()) if math.isfinite(v) and v == int(v)}
        note_table_entries(
            losses,
            workload.header,
            label,
            used,
            "entries no job uses, and text after a name, not written "
            "(the reader makes the table from the records' names)",
        )


def _note_headerless(columns: list[str], header: bool, losses: Losses) -> None:
    """Without a header line the reader takes the columns in Open XDMoD's order
    unless told otherwise (``-R columns=``): a file written in another order does not
    read back with the reader's defaults, which is reported with the option that
    reads it back (as for ``timezone=``)."""
    if header or columns == list(XDMOD_COLUMNS):
        return
    losses.add(
        "meta.slurm_columns",
        "not written (no header line, and the reader takes a file without one in "
        f"Open XDMoD's column order): read back with -R columns={','.join(columns)}",
    )


def _note_origin(workload: Workload, ctx: _Context, first: float | None, losses: Losses) -> None:
    """Report the origin the reader will not give back, as the SGE writers do: times
    are printed from the header's ``UnixStartTime`` (from 0, 1970-01-01, when it is
    unknown), and the reader counts them from the first submission read back (else
    the first step time; ``first``), so relative times shift unless that is the
    origin. When no record read back holds a time, the reader leaves the origin
    unknown: a known one is lost."""
    if first is None:
        if workload.header.unix_start_time is not None:
            losses.add(
                "header.UnixStartTime",
                "not written (no record written holds a time): read back as unknown",
            )
        return
    if workload.header.unix_start_time is None:
        losses.add("header.UnixStartTime", "unknown, times written from 0 (1970-01-01)")
    shift = int(first) - ctx.origin
    if shift:
        losses.add(
            "header.UnixStartTime",
            f"read back as the first submission: relative times shift by {shift:g} s",
        )


def _default_zone(workload: Workload) -> str:
    """The zone times are printed in without ``timezone=``: the zone of the raw texts
    of a workload read by the ``slurm`` reader (so that they are written back as
    they were read), else UTC, the reader's default."""
    for job in workload.jobs:
        if isinstance(job.extras.get(DERIVED_KEY), dict):
            return _raw_zone(job)
    return "UTC"


def _note_zone(workload: Workload, ctx: _Context, columns: set[str], losses: Losses) -> None:
    """sacct prints local times without naming their zone, and the ``slurm`` reader
    takes them as UTC unless told otherwise: times printed in another zone are
    reported (they come back at other instants unless read with ``-R timezone=``),
    and so is a ``TimeZoneString`` label the reader would not give back."""
    label = workload.header.time_zone_string
    if ctx.zone != "UTC" and columns.intersection(CARRIERS["submit_time"]):
        known = sum(1 for job in workload.jobs if job.submit_time is not None)
        losses.add(
            "submit_time",
            f"printed as local time in {ctx.zone}, which sacct "
            "output does not name: read back with -R "
            f"timezone={ctx.zone} (the default, UTC, moves it)",
            known,
        )
    if label and _timezone_name(label) != ctx.zone:
        losses.add("header.TimeZoneString", f"not written (times printed in {ctx.zone})")


def _timezone_name(name: str) -> str:
    try:
        return _zone_name(_timezone(name))
    except FormatError:  # a zone name schedlab-slurm does not know
        return name
