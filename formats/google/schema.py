"""The Google cluster-usage trace layouts: tables, fields, enums and special values.

Version 3 (``clusterdata-2019``) follows ``clusterdata_trace_format_v3.proto``
(authoritative) with the column names of the published BigQuery tables; version 2
(``clusterdata-2011-2``) is the headerless CSV layout of the 2011 trace. Everything
here is data: the readers and the writer import these tables so that the numbers of
an enum are written down exactly once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

#: Raw time meaning "before the trace started" (both versions).
TIME_BEFORE_TRACE = 0
#: Raw time meaning "after the trace ended": 2^63 - 1.
TIME_AFTER_TRACE = 2**63 - 1
#: Raw timestamps count microseconds from 600 s before the trace start.
TIME_OFFSET_US = 600_000_000
#: Microseconds per second.
US = 1_000_000
#: Marker used in integer columns for "null or missing" (never a valid trace value).
NULL_INT = -(2**63)

#: int64 fields that the BigQuery export writes as JSON strings (times and ids).
INT64_FIELDS = frozenset(
    {
        "time",
        "collection_id",
        "alloc_collection_id",
        "parent_collection_id",
        "machine_id",
        "start_time",
        "end_time",
    }
)

#: Default conversion of normalized CPU units (NCU) to integer processors.
DEFAULT_CPU_SCALE = 100.0
#: Default conversion of normalized memory to the SWF memory field (KB per processor).
DEFAULT_MEMORY_SCALE = 1_000_000.0

# --------------------------------------------------------------------------- enums
#: ``EventType`` of CollectionEvent and InstanceEvent (v3).
EVENT_TYPES: dict[int, str] = {
    0: "SUBMIT",
    1: "QUEUE",
    2: "ENABLE",
    3: "SCHEDULE",
    4: "EVICT",
    5: "FAIL",
    6: "FINISH",
    7: "KILL",
    8: "LOST",
    9: "UPDATE_PENDING",
    10: "UPDATE_RUNNING",
}
SUBMIT, QUEUE, ENABLE, SCHEDULE, EVICT, FAIL, FINISH, KILL, LOST = range(9)
UPDATE_PENDING, UPDATE_RUNNING = 9, 10
#: Event types that end a collection or an instance.
TERMINAL_EVENTS = frozenset({EVICT, FAIL, FINISH, KILL, LOST})
#: Event types after which an earlier terminal event is not the end: the collection
#: or instance was resubmitted or pending again (from any end) ...
RESUBMIT_EVENTS = frozenset({SUBMIT, QUEUE, ENABLE})
#: ... or placed again straight after one of these ends (Borg puts an evicted,
#: failed or lost instance back in the queue; FINISH and KILL leave it dead, so a
#: SCHEDULE after them alone is out of order, not a new start).
REQUEUED_ENDS = frozenset({EVICT, FAIL, LOST})
#: SWF status for each terminal event: 1 completed, 0 failed, 5 cancelled.
TERMINAL_STATUS: dict[int, int] = {FINISH: 1, FAIL: 0, LOST: 0, KILL: 5, EVICT: 5}

MISSING_TYPES: dict[int, str] = {
    0: "MISSING_TYPE_NONE",
    1: "SNAPSHOT_BUT_NO_TRANSITION",
    2: "NO_SNAPSHOT_OR_TRANSITION",
    3: "EXISTS_BUT_NO_CREATION",
    4: "TRANSITION_MISSING_STEP",
    5: "TOO_MANY_EVENTS",
}
COLLECTION_TYPES: dict[int, str] = {0: "JOB", 1: "ALLOC_SET"}
JOB, ALLOC_SET = 0, 1
SCHEDULING_CLASSES: dict[int, str] = {
    0: "MOST_INSENSITIVE",
    1: "INSENSITIVE",
    2: "SENSITIVE",
    3: "MOST_SENSITIVE",
}
SCHEDULERS: dict[int, str] = {0: "SCHEDULER_DEFAULT", 1: "SCHEDULER_BATCH"}
VERTICAL_SCALING: dict[int, str] = {
    0: "VERTICAL_SCALING_SETTING_UNKNOWN",
    1: "VERTICAL_SCALING_OFF",
    2: "VERTICAL_SCALING_CONSTRAINED",
    3: "VERTICAL_SCALING_FULLY_AUTOMATED",
}
MACHINE_EVENT_TYPES: dict[int, str] = {0: "EVENT_TYPE_UNKNOWN", 1: "ADD", 2: "REMOVE", 3: "UPDATE"}
MACHINE_ADD, MACHINE_REMOVE, MACHINE_UPDATE = 1, 2, 3
MISSING_DATA_REASONS: dict[int, str] = {
    0: "MISSING_DATA_REASON_NONE",
    1: "SNAPSHOT_BUT_NO_TRANSITION",
}
RELATIONS: dict[int, str] = {
    0: "EQUAL",
    1: "NOT_EQUAL",
    2: "LESS_THAN",
    3: "GREATER_THAN",
    4: "LESS_THAN_EQUAL",
    5: "GREATER_THAN_EQUAL",
    6: "PRESENT",
    7: "NOT_PRESENT",
}


def by_name(enum: Mapping[int, str]) -> dict[str, int]:
    """The reverse of an enum table: ``{"SUBMIT": 0, ...}``."""
    return {name: number for number, name in enum.items()}


# --------------------------------------------------------------------------- tiers
#: Priority tiers of the 2019 trace: (name, lowest priority, highest priority).
TIERS: tuple[tuple[str, int, int], ...] = (
    ("free", 0, 99),
    ("beb", 100, 115),
    ("mid", 116, 119),
    ("prod", 120, 359),
    ("monitoring", 360, 2**31 - 1),
)
#: SWF queue number of each tier (``Queue:`` table in the header).
TIER_QUEUE: dict[str, int] = {name: i + 1 for i, (name, _, _) in enumerate(TIERS)}


def tier_of(priority: int | None) -> str | None:
    """The tier name (free, beb, mid, prod, monitoring) of a v3 priority."""
    if priority is None:
        return None
    for name, low, high in TIERS:
        if low <= priority <= high:
            return name
    return None


def tier_of_v2(priority: int | None) -> str | None:
    """The tier of a 2011 priority, following the 2011 trace notes: 0-1 free, 9-11
    production, 12 and above monitoring; 2-8 (batch and middle priorities, which
    the notes do not split) are reported as ``beb``."""
    if priority is None:
        return None
    if priority <= 1:
        return "free"
    if priority >= 12:
        return "monitoring"
    if priority >= 9:
        return "prod"
    return "beb"


# --------------------------------------------------------------------------- v3 tables
#: Every key a record of each v3 table may have (flattened names are not keys).
V3_TABLES: dict[str, tuple[str, ...]] = {
    "collection_events": (
        "time",
        "type",
        "collection_id",
        "scheduling_class",
        "missing_type",
        "collection_type",
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
    ),
    "instance_events": (
        "time",
        "type",
        "collection_id",
        "scheduling_class",
        "missing_type",
        "collection_type",
        "priority",
        "alloc_collection_id",
        "instance_index",
        "machine_id",
        "alloc_instance_index",
        "resource_request",
        "constraint",
    ),
    "instance_usage": (
        "start_time",
        "end_time",
        "collection_id",
        "instance_index",
        "machine_id",
        "alloc_collection_id",
        "alloc_instance_index",
        "collection_type",
        "average_usage",
        "maximum_usage",
        "random_sample_usage",
        "random_sampled_usage",
        "assigned_memory",
        "page_cache_memory",
        "cycles_per_instruction",
        "memory_accesses_per_instruction",
        "sample_rate",
        "cpu_usage_distribution",
        "tail_cpu_usage_distribution",
    ),
    "machine_events": (
        "time",
        "machine_id",
        "type",
        "switch_id",
        "capacity",
        "platform_id",
        "missing_data_reason",
    ),
    "machine_attributes": ("time", "machine_id", "name", "value", "deleted"),
}
V3_TABLE_NAMES: tuple[str, ...] = tuple(V3_TABLES)
V3_KEYSETS: dict[str, frozenset[str]] = {t: frozenset(k) for t, k in V3_TABLES.items()}

#: Enum columns of each table, with their table of names.
V3_ENUMS: dict[str, dict[str, Mapping[int, str]]] = {
    "collection_events": {
        "type": EVENT_TYPES,
        "scheduling_class": SCHEDULING_CLASSES,
        "missing_type": MISSING_TYPES,
        "collection_type": COLLECTION_TYPES,
        "vertical_scaling": VERTICAL_SCALING,
        "scheduler": SCHEDULERS,
    },
    "instance_events": {
        "type": EVENT_TYPES,
        "scheduling_class": SCHEDULING_CLASSES,
        "missing_type": MISSING_TYPES,
        "collection_type": COLLECTION_TYPES,
    },
    "instance_usage": {"collection_type": COLLECTION_TYPES},
    "machine_events": {"type": MACHINE_EVENT_TYPES, "missing_data_reason": MISSING_DATA_REASONS},
    "machine_attributes": {},
}


def guess_table(keys: frozenset[str] | set[str]) -> str | None:
    """The v3 table whose fields include every key of a record, if exactly one does."""
    matches = [t for t, allowed in V3_KEYSETS.items() if keys <= allowed]
    return matches[0] if len(matches) == 1 else None


# --------------------------------------------------------------------------- v2 tables
#: Column names of the headerless 2011 CSV tables, in file order.
V2_TABLES: dict[str, tuple[str, ...]] = {
    "job_events": (
        "time",
        "missing_info",
        "job_id",
        "event_type",
        "user",
        "scheduling_class",
        "job_name",
        "logical_job_name",
    ),
    "task_events": (
        "time",
        "missing_info",
        "job_id",
        "task_index",
        "machine_id",
        "event_type",
        "user",
        "scheduling_class",
        "priority",
        "cpu_request",
        "memory_request",
        "disk_space_request",
        "different_machines_restriction",
    ),
    "task_usage": (
        "start_time",
        "end_time",
        "job_id",
        "task_index",
        "machine_id",
        "cpu_rate",
        "canonical_memory_usage",
        "assigned_memory_usage",
        "unmapped_page_cache",
        "total_page_cache",
        "maximum_memory_usage",
        "disk_io_time",
        "local_disk_space_usage",
        "maximum_cpu_rate",
        "maximum_disk_io_time",
        "cycles_per_instruction",
        "memory_accesses_per_instruction",
        "sample_portion",
        "aggregation_type",
        "sampled_cpu_usage",
    ),
    "machine_events": ("time", "machine_id", "event_type", "platform_id", "cpus", "memory"),
    "machine_attributes": (
        "time",
        "machine_id",
        "attribute_name",
        "attribute_value",
        "attribute_deleted",
    ),
}
V2_TABLE_NAMES: tuple[str, ...] = tuple(V2_TABLES)
#: The 2011 event types (jobs and tasks): different numbers from v3.
V2_EVENT_TYPES: dict[int, str] = {
    0: "SUBMIT",
    1: "SCHEDULE",
    2: "EVICT",
    3: "FAIL",
    4: "FINISH",
    5: "KILL",
    6: "LOST",
    7: "UPDATE_PENDING",
    8: "UPDATE_RUNNING",
}
#: v2 event number -> v3 event number (so one mapping serves both versions).
V2_TO_V3_EVENT: dict[int, int] = {
    0: SUBMIT,
    1: SCHEDULE,
    2: EVICT,
    3: FAIL,
    4: FINISH,
    5: KILL,
    6: LOST,
    7: UPDATE_PENDING,
    8: UPDATE_RUNNING,
}
V2_MISSING_INFO: dict[int, str] = {
    0: "SNAPSHOT_BUT_NO_TRANSITION",
    1: "NO_SNAPSHOT_OR_TRANSITION",
    2: "EXISTS_BUT_NO_CREATION",
}
#: v2 machine events: 0 ADD, 1 REMOVE, 2 UPDATE.
V2_MACHINE_EVENTS: dict[int, int] = {0: MACHINE_ADD, 1: MACHINE_REMOVE, 2: MACHINE_UPDATE}
#: The 2011 trace starts at 19:00 EDT on 1 May 2011 (= raw time 600 s).
V2_UNIX_START = 1304290800
V2_TIME_ZONE = "America/New_York"

# --------------------------------------------------------------------------- file names
_EXT_RE = re.compile(r"\.(?P<ext>json|jsonl|ndjson|parquet|csv)(?:\.(?:gz|bz2|xz))?$")
_V2_PART_RE = re.compile(r"^part-\d+-of-\d+\.csv(?:\.gz)?$")


def shard_table(name: str) -> tuple[str, str] | None:
    """``(table, kind)`` for a v3 shard file name, kind being json, parquet or csv.

    ``collection_events-000000000000.json.gz``, ``instance_events.parquet`` and
    ``machine_events-0001.csv`` all match; v2 table names match only with ``.csv``
    (see :func:`v2_shard_table`).
    """
    match = _EXT_RE.search(name)
    if not match:
        return None
    stem = name[: match.start()]
    for table in V3_TABLES:
        if stem == table or (stem.startswith(table) and stem[len(table)] in "-_."):
            ext = match.group("ext")
            return table, ("json" if ext in {"json", "jsonl", "ndjson"} else ext)
    return None


def v2_shard_table(name: str, parent: str = "") -> str | None:
    """The v2 table of a CSV file: ``task_events-sample.csv``, ``job_events.csv.gz``,
    or ``part-00000-of-00500.csv.gz`` inside a folder named after the table."""
    base = name
    for suffix in (".gz", ".bz2", ".xz"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    if not base.endswith(".csv"):
        return None
    if _V2_PART_RE.match(name) and parent in V2_TABLES:
        return parent
    stem = base[: -len(".csv")]
    for table in V2_TABLES:
        if stem == table or stem.startswith((table + "-", table + "_", table + ".")):
            return table
    return None
