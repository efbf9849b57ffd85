"""The common data model: :class:`Job`, :class:`Header`, :class:`Workload` and
:class:`JobColumns`.

The 18 fields of the Standard Workload Format are the lingua franca: every reader
fills them as well as its source allows (``None`` where unknown, SWF's ``-1``), and
every writer and metric accepts them. Richer fields that other formats carry (job
name, account, hosts, exit code, tasks, typed dependencies, priority) are optional
attributes, and ``extras`` keeps every source field that has no place in the model so
that a read-then-write in the same format is lossless.

Times are seconds relative to the workload's origin (floats allowed); the header
keeps the absolute origin (``UnixStartTime``, epoch seconds) and the time zone.
"""

from __future__ import annotations

import datetime as _dt
import numbers
import re
import sys
import threading
from collections.abc import (
    Callable,
    ItemsView,
    Iterable,
    Iterator,
    KeysView,
    Mapping,
    Sequence,
    ValuesView,
)
from typing import Any

import attrs
import numpy as np

from .errors import UsageError

#: The 18 SWF 2.2 fields, in file order, with their attribute names.
SWF_FIELDS: tuple[str, ...] = (
    "job_number",
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
    "user_id",
    "group_id",
    "executable_number",
    "queue_number",
    "partition_number",
    "preceding_job_number",
    "think_time",
)

#: SWF status codes (field 11).
STATUS_FAILED = 0
STATUS_COMPLETED = 1
STATUS_PARTIAL_CONTINUED = 2
STATUS_PARTIAL_LAST_COMPLETED = 3
STATUS_PARTIAL_LAST_FAILED = 4
STATUS_CANCELLED = 5


@attrs.define(slots=True, frozen=True)
class Dependency:
    """A job that must reach a state before this one may start.

    ``kind`` is one of ``"end"`` (any termination; SWF's preceding job), ``"success"``,
    ``"failure"``, ``"exit"`` (exit with ``code``) or ``"start"``. ``think_time`` is the
    delay in seconds after the condition holds before this job is submitted (SWF
    field 18).
    """

    #: The job depended on: its job number, or the source's id as text when no job
    #: number is known for it (a job outside the trace, an id several jobs share).
    job: int | str
    #: The condition: ``"end"``, ``"success"``, ``"failure"``, ``"exit"`` or
    #: ``"start"`` (see above); a reader may keep its own, as Google's ``"parent"``.
    kind: str = "end"
    #: The exit code a ``"exit"`` dependency waits for; ``None`` otherwise or unknown.
    code: int | None = None
    #: Seconds between the condition holding and this job's submission (SWF
    #: field 18); ``None`` = unknown.
    think_time: float | None = None


@attrs.define(slots=True)
class Task:
    """One part of a job: an array task, a parallel task, an instance, an attempt."""

    #: The task's id within its job, as text (an array index, an instance number ...).
    task_id: str
    #: When the task started, in seconds from the workload origin; ``None`` =
    #: unknown or never started.
    start_time: float | None = None
    #: When the task ended, in seconds from the workload origin; ``None`` =
    #: unknown or still running.
    end_time: float | None = None
    #: Processors the task held (fractional for a share of a machine, as in
    #: Google traces); ``None`` = unknown.
    processors: float | None = None
    #: The machine the task ran on, as the source names it; ``None`` = unknown.
    host: str | None = None
    #: How the task ended, as an SWF status code (1 completed, 0 failed, 5
    #: cancelled ...); ``None`` = unknown or still running.
    status: int | None = None
    #: Every source field of the task without a place above (Google's raw
    #: events, usage ...), for lossless round trips.
    extras: dict[str, Any] = attrs.field(factory=dict)


@attrs.define(slots=True, eq=True)
class Job:
    """One job. The first 18 attributes are the SWF fields (``None`` = unknown).

    Times are in seconds relative to the workload origin; memory in kilobytes per
    processor; ``average_cpu_time`` in seconds per processor, as SWF defines them.
    """

    #: SWF field 1: the job's number, a counter (1, 2, ... in an SWF file);
    #: ``None`` = unknown.
    job_number: int | None = None
    #: SWF field 2: when the job was submitted, in seconds from the workload origin
    #: (the header's ``UnixStartTime``); ``None`` = unknown.
    submit_time: float | None = None
    #: SWF field 3: seconds from submission to start; ``None`` = unknown.
    wait_time: float | None = None
    #: SWF field 4: seconds from start to end (wall clock); ``None`` = unknown.
    run_time: float | None = None
    #: SWF field 5: the number of processors the job ran on; ``None`` = unknown.
    allocated_processors: int | None = None
    #: SWF field 6: CPU time used (user and system), in seconds per processor,
    #: averaged over the job's processors; ``None`` = unknown.
    average_cpu_time: float | None = None
    #: SWF field 7: memory used, in kilobytes per processor (the average over the
    #: processors); ``None`` = unknown.
    used_memory: float | None = None
    #: SWF field 8: the number of processors the job asked for; ``None`` = unknown.
    requested_processors: int | None = None
    #: SWF field 9: the time the job asked for (its limit, the user's estimate), in
    #: seconds; ``None`` = unknown.
    requested_time: float | None = None
    #: SWF field 10: memory asked for, in kilobytes per processor; ``None`` = unknown.
    requested_memory: float | None = None
    #: SWF field 11: 1 completed, 0 failed, 5 cancelled; 2, 3 and 4 for the parts of
    #: a checkpointed or swapped job; ``None`` = unknown.
    status: int | None = None
    #: SWF field 12: the user, a number from 1 (the header's ``User:`` table may name
    #: it); ``None`` = unknown.
    user_id: int | None = None
    #: SWF field 13: the user's group, a number from 1 (``Group:`` may name it);
    #: ``None`` = unknown.
    group_id: int | None = None
    #: SWF field 14: the application (executable), a number from 1 (``Executable:``
    #: may name it); ``None`` = unknown.
    executable_number: int | None = None
    #: SWF field 15: the queue, a number (0 = interactive by convention; ``Queue:``
    #: names them); ``None`` = unknown.
    queue_number: int | None = None
    #: SWF field 16: the partition, a number from 1 (``Partition:`` names them);
    #: ``None`` = unknown.
    partition_number: int | None = None
    #: SWF field 17: the number of a job that must end before this one is submitted
    #: (see :attr:`dependencies`); ``None`` = none or unknown.
    preceding_job_number: int | None = None
    #: SWF field 18: seconds from the preceding job's end to this job's submission;
    #: ``None`` = unknown.
    think_time: float | None = None
    # Richer, optional fields carried by formats other than SWF.
    #: The job's name (Slurm ``JobName``, Grid Engine ``job_name`` ...); ``None`` =
    #: unknown.
    name: str | None = None
    #: The account (project) the job is charged to; ``None`` = unknown.
    account: str | None = None
    #: The number of nodes the job asked for (Google: its instances), a *fixed*
    #: request in a platform simulation; ``None`` = unknown (a flexible request).
    nodes: int | None = None
    #: The names of the machines (nodes) the job ran on, as the source names
    #: them; empty = unknown (a platform simulation sets them).
    hosts: tuple[str, ...] = ()
    #: The job's exit code (its process's exit status); ``None`` = unknown.
    exit_code: int | None = None
    #: The job's priority as the source gives it (its scale and direction are
    #: the format's); ``None`` = unknown.
    priority: float | None = None
    #: The job's parts (array tasks, instances, attempts) as :class:`Task`
    #: objects; empty = none known (not that the job had none).
    tasks: tuple[Task, ...] = ()
    #: The jobs this one waits for, as typed :class:`Dependency` objects (SWF's
    #: preceding job is one of kind ``end``); empty = none known.
    dependencies: tuple[Dependency, ...] = ()
    #: Every source field without a place above, for lossless round trips.
    extras: dict[str, Any] = attrs.field(factory=dict)

    @property
    def start_time(self) -> float | None:
        """Submit time plus wait time, or ``None`` if either is unknown."""
        if self.submit_time is None or self.wait_time is None:
            return None
        return self.submit_time + self.wait_time

    @property
    def end_time(self) -> float | None:
        """Start time plus run time, or ``None`` if unknown."""
        start = self.start_time
        if start is None or self.run_time is None:
            return None
        return start + self.run_time

    def swf_values(self) -> tuple[Any, ...]:
        """The 18 SWF field values in file order."""
        return tuple(getattr(self, name) for name in SWF_FIELDS)


# --------------------------------------------------------------------------- header

#: The 26 header labels defined by SWF 2.2, in the order the definition lists them.
SWF_HEADER_LABELS: tuple[str, ...] = (
    "Version",
    "Computer",
    "Installation",
    "Acknowledge",
    "Information",
    "Conversion",
    "MaxJobs",
    "MaxRecords",
    "Preemption",
    "UnixStartTime",
    "TimeZone",
    "TimeZoneString",
    "StartTime",
    "EndTime",
    "MaxNodes",
    "MaxProcs",
    "MaxRuntime",
    "MaxMemory",
    "AllowOveruse",
    "MaxQueues",
    "Queues",
    "Queue",
    "MaxPartitions",
    "Partitions",
    "Partition",
    "Note",
)

#: Labels schedlab adds (not part of SWF 2.2) to keep name tables of other formats
#: through an SWF file; written like ``Queue:`` entries (``number name``).
SCHEDLAB_NAME_LABELS: tuple[str, ...] = ("User", "Group", "Executable", "Account")

#: A header value read as an integer: the integer in ASCII digits, alone or followed
#: by a remark in parentheses (the Parallel Workloads Archive's ``MaxNodes: 1024
#: (512 256 256)``); ``1e3``, ``64.9`` or ``6 4`` are no integer: the typed
#: property gives ``None``.
_INT_RE = re.compile(r"\s*([+-]?[0-9]+)\s*(?:\(.*\)\s*)?")


@attrs.define(slots=True)
class HeaderEntry:
    """One header item: ``; Label: value`` plus its continuation lines.

    ``label`` is ``None`` for a comment that is not a ``Label: value`` pair (a bare
    ``;`` or free text), whose text is then in ``value``. ``lines`` holds the original
    lines verbatim when the entry was read from a file and not changed since, so
    writing it back reproduces the file exactly.
    """

    #: The label before the colon (``MaxProcs``); ``None`` for a comment that is
    #: no ``Label: value`` pair.
    label: str | None
    #: The text after the label's colon, stripped (a comment's whole text).
    value: str
    #: The values of the entry's continuation lines, in order (empty: none).
    continuation: tuple[str, ...] = ()
    #: The entry's original lines, verbatim, while it is unchanged since it was
    #: read; ``None`` for an entry made or changed in memory.
    lines: tuple[str, ...] | None = None


@attrs.define(slots=True, frozen=True)
class NamedEntry:
    """A numbered item of a ``Queue:``/``Partition:`` (or schedlab ``User:``) table."""

    number: int
    name: str
    details: str = ""


#: The largest magnitude of a header number (2**53 - 1, the bound every reader holds
#: numbers to: ``schedlab.validation.MAX_MAGNITUDE``); beyond it a number reads as
#: unknown (the reader reports it as out of range).
_MAX_HEADER_INT = 2**53 - 1


def _int_or_none(text: str | None) -> int | None:
    """The integer of a header value (``None``: absent, not an integer, or beyond
    :data:`_MAX_HEADER_INT`; a value of thousands of digits is never given to
    ``int``)."""
    if text is None:
        return None
    match = _INT_RE.fullmatch(text)
    if match is None:
        return None
    digits = match.group(1)
    if len(digits.lstrip("+-").lstrip("0")) > len(str(_MAX_HEADER_INT)):
        return None
    value = int(digits)
    return value if abs(value) <= _MAX_HEADER_INT else None


@attrs.define(slots=True)
class Header:
    """The workload header: an ordered list of entries with typed accessors.

    The order of entries, free-text comments and unknown labels are preserved; the
    typed properties (``max_procs``, ``queues`` ...) parse the entries on access, and
    :meth:`set` / :meth:`add` change them.
    """

    #: Every entry in file order, comments and unknown labels included.
    entries: list[HeaderEntry] = attrs.field(factory=list)

    # -- generic access
    def get(self, label: str) -> str | None:
        """The value of the first entry with ``label`` (continuations joined by newlines)."""
        for entry in self.entries:
            if entry.label == label:
                return "\n".join((entry.value, *entry.continuation)).strip()
        return None

    def get_all(self, label: str) -> list[str]:
        """The values of every entry with ``label``, in order."""
        return [
            "\n".join((e.value, *e.continuation)).strip() for e in self.entries if e.label == label
        ]

    def set(self, label: str, value: object) -> None:
        """Replace the first entry with ``label`` (or append one) with ``value``."""
        text = str(value)
        for i, entry in enumerate(self.entries):
            if entry.label == label:
                self.entries[i] = HeaderEntry(label, text)
                return
        self.entries.append(HeaderEntry(label, text))

    def add(self, label: str | None, value: object) -> None:
        """Append an entry (repeatable labels: ``Queue``, ``Partition``, ``Note`` ...)."""
        self.entries.append(HeaderEntry(label, str(value)))

    def remove(self, label: str) -> None:
        """Drop every entry with ``label``."""
        self.entries = [e for e in self.entries if e.label != label]

    def labels(self) -> list[str]:
        """Labels present, in order of first appearance."""
        seen: dict[str, None] = {}
        for entry in self.entries:
            if entry.label is not None:
                seen.setdefault(entry.label, None)
        return list(seen)

    def unknown_labels(self) -> list[str]:
        """Labels that are neither SWF 2.2 nor schedlab extensions, in order."""
        known = set(SWF_HEADER_LABELS) | set(SCHEDLAB_NAME_LABELS)
        return [label for label in self.labels() if label not in known]

    def copy(self) -> Header:
        """An independent copy."""
        return Header([attrs.evolve(e) for e in self.entries])

    # -- numbered name tables (Queue:, Partition:, and schedlab's User:, Group: ...)
    def table(self, label: str) -> list[NamedEntry]:
        """Parse every ``label: number name (details)`` entry."""
        out = []
        for value in self.get_all(label):
            parts = value.split(None, 1)
            if not parts or _int_or_none(parts[0]) is None:
                continue
            rest = parts[1] if len(parts) > 1 else ""
            name, _, details = rest.partition(" ")
            out.append(NamedEntry(int(parts[0]), name.strip(), details.strip()))
        return out

    def names(self, label: str) -> dict[int, str]:
        """``{number: name}`` for a table label such as ``Queue`` or ``User`` (a number
        given twice: the first entry, as :meth:`get` gives the first value)."""
        out: dict[int, str] = {}
        for entry in self.table(label):
            out.setdefault(entry.number, entry.name)
        return out

    def set_names(self, label: str, names: Mapping[int, str]) -> None:
        """Replace a name table; names must not contain blanks (they are replaced by _)."""
        self.remove(label)
        for number in sorted(names):
            name = re.sub(r"\s+", "_", str(names[number])) or "-"
            self.add(label, f"{number} {name}")

    # -- typed SWF labels
    version = property(lambda self: self.get("Version"), doc="``Version`` (string).")
    computer = property(lambda self: self.get("Computer"), doc="``Computer``.")
    installation = property(lambda self: self.get("Installation"), doc="``Installation``.")
    acknowledge = property(lambda self: self.get("Acknowledge"), doc="``Acknowledge``.")
    information = property(lambda self: self.get("Information"), doc="``Information``.")
    conversion = property(lambda self: self.get("Conversion"), doc="``Conversion``.")
    max_jobs = property(lambda self: _int_or_none(self.get("MaxJobs")), doc="``MaxJobs``.")
    max_records = property(lambda self: _int_or_none(self.get("MaxRecords")), doc="``MaxRecords``.")
    preemption = property(lambda self: self.get("Preemption"), doc="No, Yes, Double or TS.")
    unix_start_time = property(
        lambda self: _int_or_none(self.get("UnixStartTime")),
        doc="``UnixStartTime``: the origin of all times, epoch seconds.",
    )
    time_zone = property(
        lambda self: _int_or_none(self.get("TimeZone")), doc="Deprecated ``TimeZone``."
    )
    time_zone_string = property(
        lambda self: self.get("TimeZoneString"), doc="``TimeZoneString``, e.g. Europe/Paris."
    )
    start_time = property(lambda self: self.get("StartTime"), doc="``StartTime`` (text).")
    end_time = property(lambda self: self.get("EndTime"), doc="``EndTime`` (text).")
    max_nodes = property(lambda self: _int_or_none(self.get("MaxNodes")), doc="``MaxNodes``.")
    max_procs = property(lambda self: _int_or_none(self.get("MaxProcs")), doc="``MaxProcs``.")
    max_runtime = property(
        lambda self: _int_or_none(self.get("MaxRuntime")), doc="``MaxRuntime`` (s)."
    )
    max_memory = property(
        lambda self: _int_or_none(self.get("MaxMemory")), doc="``MaxMemory`` (KB)."
    )
    allow_overuse = property(
        lambda self: v.lower().startswith("y") if (v := self.get("AllowOveruse")) else None,
        doc="``AllowOveruse`` as a boolean.",
    )
    max_queues = property(lambda self: _int_or_none(self.get("MaxQueues")), doc="``MaxQueues``.")
    queues_description = property(lambda self: self.get("Queues"), doc="``Queues`` text.")
    queues = property(lambda self: self.table("Queue"), doc="Every ``Queue:`` entry.")
    max_partitions = property(
        lambda self: _int_or_none(self.get("MaxPartitions")), doc="``MaxPartitions``."
    )
    partitions_description = property(
        lambda self: self.get("Partitions"), doc="``Partitions`` text."
    )
    partitions = property(lambda self: self.table("Partition"), doc="Every ``Partition:``.")
    notes = property(lambda self: self.get_all("Note"), doc="Every ``Note:``, in order.")

    def machine_size(self) -> int | None:
        """Processors of the machine: ``MaxProcs``, else ``MaxNodes``, else ``None``
        (a value below 1, such as -1 for unknown, counts as not given)."""
        for value in (self.max_procs, self.max_nodes):
            if value is not None and value >= 1:
                return value
        return None


# --------------------------------------------------------------------------- columns


#: The extra in which a simulation on a platform names each job's nodes
#: (space-separated, as ``Result.allocations``); :meth:`JobColumns.to_jobs` turns it
#: into :attr:`Job.hosts`, and writers that hold hosts write it.
NODES_EXTRA = "schedlab.nodes"
#: The extra in which a simulation on a platform names the partition each job ran in.
PARTITION_EXTRA = "schedlab.partition"
#: The extra in which a simulation on a platform gives what each job held on its
#: nodes (``cores=8 memory=...``).
HELD_EXTRA = "schedlab.held"


@attrs.define(slots=True)
class JobColumns:
    """A workload's jobs as one float64 numpy array per SWF field (NaN = unknown).

    ``extras`` (optional) holds one dict per job with the fields that have no column,
    so converting columns back to :class:`Job` objects loses nothing.

    A read-only mapping of field name to array, as a pandas DataFrame is of column
    name to column: ``cols["run_time"]``, ``"run_time" in cols``, iteration,
    :meth:`keys`, :meth:`values`, :meth:`items` and :meth:`get` are over the fields
    (``dict(cols)``, ``pandas.DataFrame(dict(cols))``), while ``len(cols)`` is the
    number of jobs. That is why it is not a :class:`collections.abc.Mapping`, whose
    length is its number of keys.

    >>> cols = Workload.from_jobs([Job(job_number=1, run_time=10)]).to_arrays()
    >>> len(cols), "run_time" in cols, list(cols)[:2], cols.get("nope")
    (1, True, ['job_number', 'submit_time'], None)
    """

    #: One float64 array per SWF field, keyed by :data:`SWF_FIELDS` names, one
    #: value per job (``NaN`` = unknown).
    data: dict[str, np.ndarray]
    #: One dict per job of the fields without a column (:attr:`Job.extras`);
    #: ``None`` when no job has any.
    extras: list[dict[str, Any]] | None = None

    def __len__(self) -> int:
        return len(self.data["job_number"])

    def __repr__(self) -> str:
        """One short line, whatever the size: ``<JobColumns 28,475 jobs, 18 fields,
        extras>`` (``extras`` when the columns carry per-job extras). The arrays are
        ``cols[field]``; ``schedlab.Workload.from_arrays(cols).to_pandas()`` shows them
        as a table."""
        try:
            arrays = list(self.data.values())
            first = self.data["job_number"] if "job_number" in self.data else None
            rows = len(first if first is not None else arrays[0]) if arrays else 0
            fields = len(arrays)
            jobs = f"{rows:,} job{'' if rows == 1 else 's'}"
            text = f"{jobs}, {fields} field{'' if fields == 1 else 's'}"
        except (AttributeError, IndexError, KeyError, TypeError):  # faulty columns
            text = f"data of type {type(self.data).__name__}"
        if self.extras is not None:
            text += ", extras"
        return f"<JobColumns {text}>"

    def __getitem__(self, field: str) -> np.ndarray:
        return self.data[field]

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __contains__(self, field: object) -> bool:
        return field in self.data

    def keys(self) -> KeysView[str]:
        """The field names, in column order."""
        return self.data.keys()

    def values(self) -> ValuesView[np.ndarray]:
        """The arrays, in column order."""
        return self.data.values()

    def items(self) -> ItemsView[str, np.ndarray]:
        """``(field, array)`` pairs, in column order."""
        return self.data.items()

    def get(self, field: str, default: Any = None) -> Any:
        """The array of ``field``, or ``default`` when there is no such column."""
        return self.data.get(field, default)

    @classmethod
    def empty(cls, n: int = 0) -> JobColumns:
        """Columns for ``n`` jobs, every value unknown."""
        return cls({name: np.full(n, np.nan) for name in SWF_FIELDS})

    @classmethod
    def from_matrix(cls, matrix: np.ndarray, extras: list[dict] | None = None) -> JobColumns:
        """Columns from an ``(n, 18)`` array in SWF order, where ``-1`` means unknown."""
        matrix = np.asarray(matrix, dtype=np.float64)
        data = {}
        for i, name in enumerate(SWF_FIELDS):
            col = np.array(matrix[:, i], dtype=np.float64)
            col[col == -1] = np.nan
            data[name] = col
        return cls(data, extras)

    @classmethod
    def from_jobs(cls, jobs: Sequence[Job]) -> JobColumns:
        """Columns from Job objects (the rich fields go to ``extras`` only if present)."""
        n = len(jobs)
        data = {}
        for name in SWF_FIELDS:
            data[name] = np.fromiter(
                (np.nan if (v := getattr(j, name)) is None else v for j in jobs),
                dtype=np.float64,
                count=n,
            )
        return cls(data)

    @classmethod
    def concatenate(cls, parts: Sequence[JobColumns]) -> JobColumns:
        """Join chunks in order."""
        if not parts:
            return cls.empty()
        data = {name: np.concatenate([p.data[name] for p in parts]) for name in SWF_FIELDS}
        extras = None
        if any(p.extras is not None for p in parts):
            extras = []
            for p in parts:
                extras.extend(p.extras if p.extras is not None else [{}] * len(p))
        return cls(data, extras)

    def to_jobs(self) -> Iterator[Job]:
        """Job objects, one per row (``NaN`` -> ``None``, integral values -> int); a
        row whose extras name the nodes a simulation gave it (``schedlab.nodes``,
        space-separated) gets them as :attr:`Job.hosts`."""
        cols = [self.data[name] for name in SWF_FIELDS]
        rows = zip(*(c.tolist() for c in cols), strict=True)
        extras = self.extras
        for i, row in enumerate(rows):
            # the 18 SWF fields, Job's first parameters in order
            values: list[Any] = [None if v != v else (int(v) if v.is_integer() else v) for v in row]
            job = Job(*values)
            if extras is not None and extras[i]:
                job.extras = dict(extras[i])
                # A simulated job's nodes (schedlab.simulate's output on a platform)
                # are its hosts, as on job-object workloads (docs/platform.md).
                nodes = job.extras.get(NODES_EXTRA)
                if isinstance(nodes, str) and nodes:
                    job.hosts = tuple(nodes.split())
            yield job

    def to_matrix(self) -> np.ndarray:
        """An ``(n, 18)`` float array in SWF order with ``-1`` for unknown."""
        matrix = np.column_stack([self.data[name] for name in SWF_FIELDS])
        return np.where(np.isnan(matrix), -1.0, matrix)

    def take(self, index: np.ndarray) -> JobColumns:
        """The rows selected by an index or boolean mask, as new columns."""
        extras = None
        if self.extras is not None:
            positions = np.arange(len(self))[index]
            extras = [self.extras[i] for i in positions]
        return JobColumns({k: v[index] for k, v in self.data.items()}, extras)


def _read_only_view(array: np.ndarray) -> np.ndarray:
    """A view of ``array`` that cannot be written through (no copy)."""
    view = array.view()
    view.flags.writeable = False
    return view


def _freeze(columns: JobColumns) -> None:
    """Make every numpy array of ``columns`` read only, in place (not a copy): a
    write into one of them, by whoever holds it, raises ``ValueError``."""
    if isinstance(columns.data, dict):
        for array in columns.data.values():
            if isinstance(array, np.ndarray):
                array.flags.writeable = False


def _read_only(columns: JobColumns) -> JobColumns:
    """``columns`` with every array replaced by a read-only view of it (no copy): a
    write into one raises ``ValueError``, the owner's arrays stay writeable. Handed
    to third-party code (writers, metrics) so that a bug there cannot change the data
    everything after it reads. Arrays that are not numpy arrays are left as they are
    (a reader's faulty columns are reported by :mod:`schedlab.returned`)."""
    if not isinstance(columns.data, dict):
        return columns
    data: dict[str, Any] = {}
    for name, array in columns.data.items():
        data[name] = _read_only_view(array) if isinstance(array, np.ndarray) else array
    return JobColumns(data, columns.extras)


# --------------------------------------------------------------------------- from_arrays checks

#: The SWF fields that are times (seconds): the only ones that take durations.
_TIME_FIELDS = frozenset(
    ("submit_time", "wait_time", "run_time", "average_cpu_time", "requested_time", "think_time")
)


class _ArraysError(UsageError, ValueError):
    """Columns :meth:`Workload.from_arrays` cannot read exactly (a :class:`UsageError`,
    and a ``ValueError`` as before)."""


def _refuse(message: str) -> _ArraysError:
    return _ArraysError(f"Workload.from_arrays: {message}")


#: Integer fields hold whole numbers below this magnitude (int64, as simulated).
_INT_LIMIT = 2.0**63


def _check_integers(data: Mapping[str, np.ndarray]) -> None:
    """Refuse a value of an integer SWF field (ids, processor counts, status ...)
    that is not a whole number within int64's range (the simulator would truncate
    or wrap it, merging distinct ids); ``NaN`` (unknown) and whole floats pass."""
    from .frames import INTEGER_FIELDS

    for name in INTEGER_FIELDS:
        values = data.get(name)
        if values is None or not len(values):
            continue
        with np.errstate(invalid="ignore"):
            bad = ~np.isnan(values) & (
                (np.abs(values) >= _INT_LIMIT) | (values != np.trunc(values))
            )
        if bad.any():
            row = int(np.argmax(bad))
            raise _refuse(
                f"column {name}: {float(values[row])!r} at row {row} is not a whole number "
                "within int64's range (an integer SWF field; NaN for unknown)"
            )


def _datetimes(name: str, what: str) -> _ArraysError:
    return _refuse(
        f"column {name} holds datetimes ({what}), not numbers of seconds: times are "
        "seconds since the workload's origin (the header's UnixStartTime), so convert "
        "them first, e.g. (column - origin).dt.total_seconds()"
    )


def _durations(name: str, values: np.ndarray) -> np.ndarray:
    """Seconds of a ``timedelta64`` column of a time field (``NaT`` -> ``NaN``)."""
    if name not in _TIME_FIELDS:
        raise _refuse(
            f"column {name} holds durations ({values.dtype}); only the time fields "
            f"({', '.join(f for f in SWF_FIELDS if f in _TIME_FIELDS)}) take durations"
        )
    try:
        return np.asarray(values / np.timedelta64(1, "s"), dtype=np.float64)
    except TypeError:  # months or years: not a fixed number of seconds
        raise _refuse(
            f"column {name} holds durations of no fixed length ({values.dtype})"
        ) from None


def _is_missing(value: Any) -> bool:
    """``None``, ``NaN``, pandas' ``NA`` or ``NaT``, numpy's ``NaT``."""
    if value is None:
        return True
    if type(value).__name__ in ("NAType", "NaTType"):
        return True
    if isinstance(value, (np.datetime64, np.timedelta64)):
        return bool(np.isnat(value))
    return False


def _object_column(name: str, values: np.ndarray) -> np.ndarray:
    """A column of Python objects read value by value: numbers, unknowns (``None``,
    ``NaN``, ``NA``, ``NaT``) and, in a time field, durations."""
    out = np.empty(len(values), dtype=np.float64)
    for row, value in enumerate(values.tolist()):
        if isinstance(value, (bool, np.bool_)):
            raise _refuse(f"column {name} holds booleans ({value!r} at row {row}), not numbers")
        if isinstance(value, numbers.Real):
            out[row] = float(value)
        elif _is_missing(value):
            out[row] = np.nan
        elif isinstance(value, (_dt.timedelta, np.timedelta64)):
            seconds = _durations(name, np.array([value], dtype="timedelta64[us]"))
            out[row] = seconds[0]
        elif isinstance(value, (str, bytes)):
            raise _refuse(f"column {name} holds text ({value!r} at row {row}), not numbers")
        elif isinstance(value, (_dt.date, _dt.time, np.datetime64)):
            raise _datetimes(name, f"{type(value).__name__} at row {row}")
        else:
            kind = type(value).__name__
            raise _refuse(f"column {name} holds a {kind} at row {row}, not a number")
    return out


def _column(name: str, values: Any) -> np.ndarray:
    """``values`` as a new 1-D float64 array (``NaN`` = unknown), or a one-line
    :class:`UsageError` naming the column: numbers (numpy or pandas, nullable ones
    with ``<NA>``) and, in the time fields, durations (``timedelta64``, as seconds)
    are taken; datetimes, booleans, text, categoricals and anything else are not."""
    dtype = getattr(values, "dtype", None)
    if (
        dtype is not None
        and not isinstance(dtype, np.dtype)
        and hasattr(dtype, "kind")
        and hasattr(values, "to_numpy")
    ):  # a pandas extension array (nullable, Arrow, categorical ...)
        kind, label = dtype.kind, str(dtype)
        if type(dtype).__name__ == "CategoricalDtype":
            raise _refuse(
                f"column {name} is categorical ({label}), not numbers: convert it first "
                "(.astype(float) for numeric categories, .cat.codes for the codes)"
            )
        if kind in "iuf":
            return np.array(values.to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)
        if kind == "m":
            return _durations(name, np.asarray(values.to_numpy()))
        if kind == "M":
            raise _datetimes(name, label)
        if kind == "b":
            raise _refuse(f"column {name} holds booleans ({label}), not numbers")
        if type(dtype).__name__ == "StringDtype":
            raise _refuse(f"column {name} holds text ({label}), not numbers")
        raise _refuse(f"column {name} holds {label} values, not numbers")
    try:
        array = np.asarray(values)
    except (ValueError, TypeError) as error:
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise _refuse(f"column {name} is not a 1-D column of numbers ({detail})") from None
    if array.ndim == 0:
        raise _refuse(f"column {name} is one value, not a column (one value per job)")
    if array.ndim != 1:
        raise _refuse(
            f"column {name} is {array.ndim}-dimensional (shape {array.shape}); a column "
            "is 1-D, one value per job"
        )
    kind = array.dtype.kind
    if isinstance(values, (list, tuple)) and (
        kind in "bUSaT" or (kind in "iu" and not {bool, np.bool_}.isdisjoint(map(type, values)))
    ):  # numpy made text of the numbers or numbers of the booleans: name the value
        return _object_column(name, np.array(values, dtype=object))
    if kind in "iuf":
        return array.astype(np.float64)
    if kind == "m":
        return _durations(name, array)
    if kind == "M":
        raise _datetimes(name, str(array.dtype))
    if kind == "b":
        raise _refuse(f"column {name} holds booleans ({array.dtype}), not numbers")
    if kind in "USaT":
        raise _refuse(f"column {name} holds text ({array.dtype}), not numbers")
    if kind == "c":
        raise _refuse(f"column {name} holds complex numbers ({array.dtype})")
    if kind == "O":
        return _object_column(name, array)
    raise _refuse(f"column {name} holds {array.dtype} values, not numbers")


def _extras_list(extras: Any, n: int) -> list[dict[str, Any]]:
    """``extras`` checked: one dict per job (``None`` -> ``{}``); the list itself when
    it is already a list of dicts."""
    if isinstance(extras, (str, bytes, Mapping)) or not isinstance(extras, Iterable):
        raise _refuse(
            f"extras is a list with one dict per job ({{}} for none), got {type(extras).__name__}"
        )
    entries = extras if isinstance(extras, list) else list(extras)
    if len(entries) != n:
        count = f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
        raise _refuse(f"extras has {count} for {n} jobs (one dict per job, {{}} for none)")
    if all(type(entry) is dict for entry in entries):
        return entries
    out: list[dict[str, Any]] = []
    for row, entry in enumerate(entries):
        if entry is None:
            out.append({})
        elif isinstance(entry, Mapping):
            out.append(dict(entry))
        else:
            raise _refuse(f"extras[{row}] is a {type(entry).__name__}, not a dict of extras")
    return out


def _as_field_mapping(arrays: Any) -> Mapping[Any, Any]:
    """The columns of a pandas DataFrame or a mapping, by name."""
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(arrays, pandas.DataFrame):
        twice = arrays.columns[arrays.columns.duplicated()]
        if len(twice):
            raise _refuse(f"the frame has column {twice[0]} twice")
        return {name: arrays[name] for name in arrays.columns}
    if isinstance(arrays, Mapping):
        return arrays
    raise _refuse(
        "takes a pandas DataFrame, a mapping of SWF field name to column, or JobColumns; "
        f"got {type(arrays).__name__}"
    )


# --------------------------------------------------------------------------- workload

ChunkSource = Callable[[], Iterator["JobColumns | list[Job]"]]

#: Held while a workload held as columns turns into Job objects (:attr:`Workload.jobs`).
_CONVERTING = threading.Lock()


class Workload:
    """A header and its jobs, held as Job objects, as columns, or streamed in chunks.

    Build one with :meth:`from_jobs`, :meth:`from_arrays` or :meth:`streaming` (what
    readers return for large files: the chunks are produced on demand, each time the
    workload is iterated, so converting a file needs memory for one chunk only).

    >>> w = Workload.from_jobs([Job(job_number=1, submit_time=0, run_time=10)])
    >>> len(w), w.to_arrays()["run_time"].tolist()
    (1, [10.0])
    """

    __slots__ = ("_chunks", "_columns", "_jobs", "header", "meta")

    def __init__(
        self,
        header: Header | None = None,
        *,
        jobs: list[Job] | None = None,
        columns: JobColumns | None = None,
        chunks: ChunkSource | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        if sum(x is not None for x in (jobs, columns, chunks)) > 1:
            raise ValueError("give jobs, columns or chunks, not several")
        #: The workload's header (an empty :class:`Header` when none was given);
        #: writers write it.
        self.header = header if header is not None else Header()
        self._jobs = jobs
        self._columns = columns
        self._chunks = chunks
        if jobs is None and columns is None and chunks is None:
            self._jobs = []
        #: Information about how the workload was obtained (reader, counts of skipped
        #: records, source name ...); not written by writers.
        self.meta: dict[str, Any] = meta if meta is not None else {}

    # -- constructors
    @classmethod
    def from_jobs(cls, jobs: Iterable[Job], header: Header | None = None) -> Workload:
        """A workload holding ``jobs`` (materialised into a list)."""
        return cls(header, jobs=list(jobs))

    @classmethod
    def from_arrays(
        cls,
        arrays: Any,
        header: Header | None = None,
        extras: list[dict[str, Any]] | None = None,
    ) -> Workload:
        """A workload from columns: one array per SWF field (missing fields unknown).

        ``arrays`` is a pandas DataFrame (such as one of :meth:`to_pandas`, the way
        back from a frame), a mapping of SWF field name to column (lists, numpy
        arrays, pandas Series), or :class:`JobColumns` (taken as they are when every
        column is a 1-D float64 array: they become the workload's own columns, the
        ones :meth:`to_arrays` returns, so reading :attr:`jobs` later makes those
        arrays read only, in the caller's hands too; pass a copy to keep them
        writeable). A column holds numbers, nullable ones with
        ``<NA>`` or ``None`` for unknown (read as ``NaN``); the time fields also take
        durations (``timedelta64``, read as seconds, ``NaT`` unknown). Datetimes
        (times are seconds since the header's ``UnixStartTime``), booleans, text,
        categoricals, columns that are not 1-D or of different lengths, names that
        are not SWF fields, and an ``extras`` list (one dict per job) of another
        length are refused with a one-line :class:`~schedlab.UsageError` (also a
        ``ValueError``) naming the column; so is a value of an integer field (ids,
        processor counts, status: ``schedlab.frames.INTEGER_FIELDS``) that is not a
        whole number within int64's range (``3.5``, ``1e300``: the simulator would
        truncate or wrap it). Whole floats and ``NaN`` (unknown) are taken.
        """
        if header is not None and not isinstance(header, Header):
            raise _refuse(f"header is a schedlab.Header, got {type(header).__name__}")
        if isinstance(arrays, JobColumns):
            if extras is not None and arrays.extras is not None:
                raise _refuse("extras given twice: in the JobColumns and as extras=")
            given: Mapping[Any, Any] = arrays.data
            if extras is None:
                extras = arrays.extras
        else:
            given = _as_field_mapping(arrays)
        unknown = [name for name in given if name not in SWF_FIELDS]
        if unknown:
            raise _refuse(
                f"not SWF fields: {', '.join(sorted(str(name) for name in unknown))} (the "
                "columns are schedlab.SWF_FIELDS: drop the others, e.g. "
                "df[[c for c in df.columns if c in schedlab.SWF_FIELDS]]; per-job values "
                "without a field go in extras=, one dict per job)"
            )
        data: dict[str, np.ndarray] = {}
        as_is = isinstance(arrays, JobColumns)
        for name in SWF_FIELDS:
            if name not in given:
                as_is = False
                continue
            values = given[name]
            if isinstance(values, np.ndarray) and values.dtype == np.float64 and values.ndim == 1:
                data[name] = values if as_is else values.copy()
            else:
                as_is = False
                data[name] = _column(name, values)
        lengths = {name: len(values) for name, values in data.items()}
        if len(set(lengths.values())) > 1:
            listed = ", ".join(f"{name} {length}" for name, length in lengths.items())
            raise _refuse(f"columns have different lengths: {listed}")
        n = next(iter(lengths.values()), 0)
        _check_integers(data)
        if extras is not None:
            checked = _extras_list(extras, n)
            as_is = as_is and checked is arrays.extras
            extras = checked
        if as_is:
            return cls(header, columns=arrays)
        for name in SWF_FIELDS:
            if name not in data:
                data[name] = np.full(n, np.nan)
        return cls(header, columns=JobColumns({name: data[name] for name in SWF_FIELDS}, extras))

    @classmethod
    def streaming(cls, header: Header, chunks: ChunkSource, meta: dict | None = None) -> Workload:
        """A workload whose jobs are produced by ``chunks()`` each time it is iterated."""
        return cls(header, chunks=chunks, meta=meta)

    # -- access
    @property
    def is_streaming(self) -> bool:
        """True while the jobs have not been materialised."""
        return self._chunks is not None and self._columns is None and self._jobs is None

    def iter_chunks(self) -> Iterator[JobColumns | list[Job]]:
        """The jobs in order, as chunks of columns or lists of Job objects.

        Chunks of columns are read only (views whose ``flags.writeable`` is False):
        a writer or any other consumer that writes into one gets numpy's
        ``ValueError`` instead of silently changing the workload for everyone after
        it (``simulate -o`` prints metrics of the schedule it wrote). Copy a column
        (``chunk["run_time"].copy()``) to transform it.
        """
        if self._jobs is not None:
            yield self._jobs
        elif self._columns is not None:
            yield _read_only(self._columns)
        else:
            assert self._chunks is not None
            for chunk in self._chunks():
                yield _read_only(chunk) if isinstance(chunk, JobColumns) else chunk

    def iter_column_chunks(self) -> Iterator[JobColumns]:
        """The jobs in order as chunks of columns (read only, see :meth:`iter_chunks`)."""
        for chunk in self.iter_chunks():
            yield chunk if isinstance(chunk, JobColumns) else JobColumns.from_jobs(chunk)

    def __iter__(self) -> Iterator[Job]:
        for chunk in self.iter_chunks():
            if isinstance(chunk, JobColumns):
                yield from chunk.to_jobs()
            else:
                yield from chunk

    def _materialise(self) -> None:
        """Read the chunks once and keep them: as columns when every chunk is
        columns, else as Job objects (so rich fields and extras survive)."""
        if self._jobs is not None or self._columns is not None:
            return
        assert self._chunks is not None
        chunks = list(self._chunks())
        if all(isinstance(c, JobColumns) for c in chunks):
            self._columns = JobColumns.concatenate(chunks)  # type: ignore[arg-type]
        else:
            jobs: list[Job] = []
            for chunk in chunks:
                jobs.extend(chunk.to_jobs() if isinstance(chunk, JobColumns) else chunk)
            self._jobs = jobs
        self._chunks = None

    @property
    def jobs(self) -> list[Job]:
        """Every job as a :class:`Job`: the workload's own list, to read and edit.

        A workload holds its jobs one way at a time. Reading ``jobs`` from one held
        as columns converts it: from then on the Job objects (and this list) are its
        data, which :meth:`to_arrays`, ``simulate``, the metrics, pandas and the
        writers all read, so an edit (``w.jobs[0].run_time = 60``, a job appended)
        is seen by everything that runs after it. The columns handed out before by
        :meth:`to_arrays` are made read only (a write into them would be ignored).
        """
        self._materialise()
        jobs = self._jobs
        if jobs is None:
            with _CONVERTING:  # two threads converting at once hand out one list
                jobs = self._jobs
                if jobs is None:
                    columns = self._columns
                    assert columns is not None
                    jobs = self._jobs = list(columns.to_jobs())
                    self._columns = None  # after _jobs is set: see to_arrays
                    _freeze(columns)
        return jobs

    def to_arrays(self) -> JobColumns:
        """The jobs as columns (per-job extras included).

        A workload held as columns (what the readers of SWF, SSS and Grid Engine
        return, and :meth:`from_arrays`) returns its own columns, the same object at
        every call: writing into an array changes the workload. A workload holding
        Job objects (:meth:`from_jobs`, or once :attr:`jobs` has been read) builds
        them from its jobs at every call, so an edit to a job is always seen: a
        snapshot whose arrays are read only (keep it in a variable rather than
        calling ``to_arrays()`` in a loop; edit the jobs, or make a new workload
        with :meth:`from_arrays`, to change the data)."""
        self._materialise()
        # The columns before the jobs: a conversion in another thread sets the jobs
        # before it drops the columns, so one of the two is always found.
        held = self._columns
        jobs = self._jobs
        if jobs is None:
            assert held is not None
            return held
        columns = JobColumns.from_jobs(jobs)
        if any(j.extras for j in jobs):
            columns.extras = [j.extras for j in jobs]
        _freeze(columns)
        return columns

    def has_job_objects(self) -> bool:
        """True if the jobs are held as Job objects (rich fields may be present)."""
        return self._jobs is not None

    def __len__(self) -> int:
        if self._jobs is not None:
            return len(self._jobs)
        return len(self.to_arrays())

    def __getstate__(self) -> dict[str, Any]:
        """The state pickle and :mod:`copy` keep. A streaming workload is materialised
        first (its chunks are read once and kept, as :func:`len` does), since the
        function producing its chunks cannot be pickled: the copy holds every job,
        and can go to another process (``multiprocessing``)."""
        self._materialise()
        state: dict[str, Any] = {}
        for cls in type(self).__mro__:
            for name in getattr(cls, "__slots__", ()):
                if name != "_chunks" and hasattr(self, name):
                    state[name] = getattr(self, name)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore :meth:`__getstate__`'s state (never streaming)."""
        self._chunks = None
        self._jobs = None
        self._columns = None
        for name, value in state.items():
            setattr(self, name, value)

    def __repr__(self) -> str:
        state = "streaming" if self.is_streaming else f"{len(self)} jobs"
        return f"<Workload {state}>"

    # -- tables for pandas, Arrow and notebooks (see schedlab.frames)
    def to_pandas(self, extras: Any = False) -> Any:
        """The jobs as a :class:`pandas.DataFrame`, one row per job and one column per
        SWF field (needs the ``pandas`` extra). Integer fields (ids, processors,
        status) are nullable ``Int64`` with ``<NA>`` for unknown, the others
        ``float64`` with ``NaN``.

        ``extras``: per-job extras to add as columns after the SWF fields: ``False``
        (the default) none, ``True`` every key some job has, or a list of keys (e.g.
        the source's job ids: ``["collection_id"]`` for Google, ``["batsim.id"]``,
        ``["slurm.JobID"]``); a job without a key has ``<NA>``. Text columns are
        pandas ``string``, integers ``Int64``, other numbers ``float64``, anything
        else ``object`` (see :func:`schedlab.frames.extras_frame_columns`)."""
        from .frames import jobs_frame

        return jobs_frame(self.to_arrays(), extras=extras)

    def to_arrow(self) -> Any:
        """The jobs as a :class:`pyarrow.Table` (needs pyarrow, extra ``parquet``):
        the columns of :meth:`to_pandas`, unknown values as nulls."""
        from .frames import jobs_table

        return jobs_table(self.to_arrays())

    def _repr_html_(self) -> str:
        from .frames import workload_html

        return workload_html(self)


# Public (plugin toolkit, ``schedlab.compat.PLUGIN_TOOLKIT``); the other names may change.
__all__ = [
    "HELD_EXTRA",
    "NODES_EXTRA",
    "PARTITION_EXTRA",
    "SCHEDLAB_NAME_LABELS",
    "SWF_FIELDS",
    "SWF_HEADER_LABELS",
    "Dependency",
    "Header",
    "HeaderEntry",
    "Job",
    "JobColumns",
    "NamedEntry",
    "Task",
    "Workload",
]
