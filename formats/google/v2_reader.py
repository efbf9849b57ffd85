"""Reader of the Google cluster-usage trace v2 (clusterdata-2011-2).

The 2011 trace has five headerless CSV tables: ``job_events``, ``task_events``,
``task_usage``, ``machine_events``, ``machine_attributes``, published as
``<table>/part-NNNNN-of-NNNNN.csv.gz``. A source is a directory holding them
(files named after their table, or one sub-directory per table) or one table file.

Rows are converted to the v3 columns (jobs are collections of type JOB, tasks are
instances, event numbers are renumbered to v3's) and then reduced and mapped
exactly like a v3 trace, so both versions give the same kind of workload.
"""

from __future__ import annotations

import csv
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from schedlab.errors import FormatError, UsageError
from schedlab.io import open_binary
from schedlab.model import Workload

from .assemble import build_workload
from .capacity import capacity_timeline
from .frames import (
    COLUMNS,
    LIMITS,
    RAW,
    REQUIRED,
    Rejects,
    TextLines,
    _int_text,
    _small_int,
    _TooManyDigits,
    concat_frames,
    csv_cells,
    empty_frame,
    frame_length,
    missing_message,
    plain_number,
    range_message,
    show,
)
from .reduce import _group_starts, _last_values, _order, reduce_collections
from .schema import (
    DEFAULT_CPU_SCALE,
    DEFAULT_MEMORY_SCALE,
    NULL_INT,
    SCHEDULING_CLASSES,
    V2_MACHINE_EVENTS,
    V2_MISSING_INFO,
    V2_TABLE_NAMES,
    V2_TABLES,
    V2_TIME_ZONE,
    V2_TO_V3_EVENT,
    V2_UNIX_START,
    tier_of_v2,
    v2_shard_table,
)
from .v3_reader import check_options, finish_meta, no_gc, trace_end_seconds


def discover_v2(source: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """``(table, path)`` of every v2 table file, sorted by table then name."""
    path = Path(source)
    found: list[tuple[str, str]] = []
    if path.is_dir():
        for entry in sorted(path.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_dir() and entry.name in V2_TABLES:
                for inner in sorted(entry.iterdir()):
                    table = v2_shard_table(inner.name, entry.name)
                    if inner.is_file() and table:
                        found.append((table, str(inner)))
            elif entry.is_file():
                table = v2_shard_table(entry.name)
                if table:
                    found.append((table, str(entry)))
    else:
        table = v2_shard_table(path.name, path.parent.name)
        if table is None:
            raise FormatError(
                "cannot tell which v2 table this file holds; name it like "
                "task_events-part-00000.csv.gz",
                source=str(path),
            )
        found.append((table, str(path)))
    found.sort(key=lambda item: (V2_TABLE_NAMES.index(item[0]), item[1]))
    return found


def sniff_v2(head: bytes, name: str) -> bool:
    """True for a directory of 2011 tables (job_events or task_events present), or a
    file named after a 2011 table whose first row has that table's column count."""
    if name and os.path.isdir(name):
        return any(t in ("job_events", "task_events") for t, _ in discover_v2(name))
    table = v2_shard_table(os.path.basename(name), os.path.basename(os.path.dirname(name)))
    if table is None:
        return False
    first = head.split(b"\n", 1)[0].decode("utf-8", "replace")
    return len(next(csv.reader([first]), [])) == len(V2_TABLES[table])


# --------------------------------------------------------------------------- rows


class _Bad(ValueError):
    """A value of the right kind but not allowed (its message says why)."""


def _digits(text: str) -> str:
    """``text`` when :func:`int` or :func:`float` may read it (ASCII, no underscore:
    see :func:`.frames.plain_number`); a :class:`ValueError` otherwise."""
    if plain_number(text):
        return text
    raise ValueError(f"not a plain number: {text!r}")


def _int(text: str) -> int:
    return int(_digits(text)) if text else NULL_INT


def _str(text: str) -> str | None:
    return text or None


def _bool(text: str) -> int:
    if text not in ("", "0", "1"):
        raise _Bad(f"expected 0 or 1, got {show(text)}")
    return _int(text)


def _ranged_int(column: str) -> Callable[[str], int]:
    """:func:`_int` limited to the range of the v3 ``column`` (see ``frames.LIMITS``)."""
    low, high = LIMITS[column]

    def convert(text: str) -> int:
        if not text:
            return NULL_INT
        try:
            number = _int_text(_digits(text))
        except _TooManyDigits:
            raise _Bad(range_message(text, low, high)) from None
        if not low <= number <= high:
            raise _Bad(range_message(text, low, high))
        return number

    return convert


def _ranged_float(column: str) -> Callable[[str], float]:
    """:func:`_float` limited to the range of the v3 ``column``: no NaN, no infinity."""
    low, high = LIMITS[column]

    def convert(text: str) -> float:
        if not text:
            return np.nan
        number = float(_digits(text))
        if not low <= number <= high:
            raise _Bad(range_message(text, low, high))
        return number

    return convert


def _required(func: Callable[[str], Any], table: str) -> Callable[[str], Any]:
    """``func`` for a column every row of ``table`` has: an empty cell is an error."""
    message = missing_message(table)

    def convert(text: str) -> Any:
        if not text:
            raise _Bad(message)
        return func(text)

    return convert


def _scheduling_class(text: str) -> int:
    if not text:
        return NULL_INT
    number = _small_int(_digits(text))  # None: thousands of digits, unknown
    if number is None or number not in SCHEDULING_CLASSES:
        raise _Bad(f"unknown scheduling class {show(text)} (expected 0-3)")
    return number


def _event(text: str) -> int:
    if not text:
        return NULL_INT
    number = _small_int(_digits(text))  # None: thousands of digits, unknown
    if number is None or number not in V2_TO_V3_EVENT:
        raise _Bad(f"unknown event type {show(text)} (expected 0-8)")
    return V2_TO_V3_EVENT[number]


def _missing(text: str) -> int:
    if not text:
        return NULL_INT
    number = _small_int(_digits(text))  # None: thousands of digits, unknown
    if number is None or number not in V2_MISSING_INFO:
        raise _Bad(f"unknown missing info {show(text)} (expected 0-2)")
    return number + 1  # v3 numbers the same reasons from 1


def _machine_event(text: str) -> int:
    if not text:
        return NULL_INT
    number = _small_int(_digits(text))  # None: thousands of digits, unknown
    if number is None or number not in V2_MACHINE_EVENTS:
        raise _Bad(f"unknown machine event {show(text)} (expected 0-2)")
    return V2_MACHINE_EVENTS[number]


#: v3 frame -> (v2 table, {v3 column: (v2 column, converter)}); others are null.
_MAPPING: dict[str, tuple[str, dict[str, tuple[str, Callable[[str], Any]]]]] = {
    "collection_events": (
        "job_events",
        {
            "time": ("time", _ranged_int("time")),
            "type": ("event_type", _event),
            "collection_id": ("job_id", _ranged_int("collection_id")),
            "scheduling_class": ("scheduling_class", _scheduling_class),
            "missing_type": ("missing_info", _missing),
            "user": ("user", _str),
            "collection_name": ("job_name", _str),
            "collection_logical_name": ("logical_job_name", _str),
        },
    ),
    "instance_events": (
        "task_events",
        {
            "time": ("time", _ranged_int("time")),
            "type": ("event_type", _event),
            "collection_id": ("job_id", _ranged_int("collection_id")),
            "scheduling_class": ("scheduling_class", _scheduling_class),
            "missing_type": ("missing_info", _missing),
            "priority": ("priority", _ranged_int("priority")),
            "instance_index": ("task_index", _ranged_int("instance_index")),
            "user": ("user", _str),  # not a v3 instance column: the job's fallback
            "machine_id": ("machine_id", _ranged_int("machine_id")),
            "cpus": ("cpu_request", _ranged_float("cpus")),
            "memory": ("memory_request", _ranged_float("memory")),
        },
    ),
    "instance_usage": (
        "task_usage",
        {
            "start_time": ("start_time", _ranged_int("start_time")),
            "end_time": ("end_time", _ranged_int("end_time")),
            "collection_id": ("job_id", _ranged_int("collection_id")),
            "instance_index": ("task_index", _ranged_int("instance_index")),
            "machine_id": ("machine_id", _ranged_int("machine_id")),
            "avg_cpus": ("cpu_rate", _ranged_float("avg_cpus")),
            "avg_memory": ("canonical_memory_usage", _ranged_float("avg_memory")),
            "max_cpus": ("maximum_cpu_rate", _ranged_float("max_cpus")),
            "max_memory": ("maximum_memory_usage", _ranged_float("max_memory")),
        },
    ),
    "machine_events": (
        "machine_events",
        {
            "time": ("time", _ranged_int("time")),
            "machine_id": ("machine_id", _ranged_int("machine_id")),
            "type": ("event_type", _machine_event),
            "platform_id": ("platform_id", _str),
            "cpus": ("cpus", _ranged_float("cpus")),
            "memory": ("memory", _ranged_float("memory")),
        },
    ),
    "machine_attributes": (
        "machine_attributes",
        {
            "time": ("time", _ranged_int("time")),
            "machine_id": ("machine_id", _ranged_int("machine_id")),
            "name": ("attribute_name", _str),
            "deleted": ("attribute_deleted", _bool),
        },
    ),
}
_V3_OF_V2 = {v2: v3 for v3, (v2, _) in _MAPPING.items()}
#: Constant columns of the converted frames (v2 has one collection type: jobs).
_CONSTANTS = {
    "collection_events": {"collection_type": 0},
    "instance_events": {"collection_type": 0},
    "instance_usage": {"collection_type": 0},
}


def parse_v2_table(
    path: str, table: str, shard_index: int, rejects: Rejects | None
) -> dict[str, np.ndarray]:
    """One v2 CSV file as a frame of the corresponding v3 table."""
    v3_table = _V3_OF_V2[table]
    mapping = _MAPPING[v3_table][1]
    names = V2_TABLES[table]
    width = len(names)
    required = REQUIRED[v3_table]
    plan = [
        (
            v3_col,
            names.index(v2_col),
            _required(func, table) if v3_col in required else func,
            v2_col,
        )
        for v3_col, (v2_col, func) in mapping.items()
    ]
    columns: dict[str, list[Any]] = {c: [] for c in mapping}
    lines: list[int] = []
    try:
        fh = open_binary(path)
    except OSError as exc:
        raise FormatError(f"cannot open ({exc})", source=path) from None

    def reject(error: FormatError) -> None:
        if rejects is None:
            raise error
        rejects.add(error, "invalid")

    with fh:
        text = TextLines(fh, path)
        while True:
            try:
                row = csv_cells(next(text))  # a record is one line (see csv_cells)
            except StopIteration:
                break
            except (OSError, EOFError, zlib.error, FormatError) as exc:
                detail = exc.message if isinstance(exc, FormatError) else str(exc)
                error = FormatError(
                    f"unreadable data after line {text.number} ({detail})",
                    source=path,
                    line=text.number + 1,
                )
                if rejects is None:
                    raise error from None
                rejects.add(error, "unreadable")
                break
            except csv.Error as exc:
                for error in text.bad:
                    reject(error)
                text.bad.clear()
                reject(FormatError(f"bad CSV ({exc})", source=path, line=text.number))
                continue
            for error in text.bad:
                reject(error)
            text.bad.clear()
            line_no = text.number
            if not row:
                continue
            if len(row) != width:
                reject(
                    FormatError(
                        f"expected {width} comma-separated fields of {table}, got {len(row)}",
                        source=path,
                        line=line_no,
                    )
                )
                continue
            values: list[Any] = []
            for _, position, func, v2_col in plan:
                try:
                    values.append(func(row[position].strip()))
                except ValueError as exc:
                    message = (
                        str(exc)
                        if isinstance(exc, _Bad)
                        else f"expected a number, got {show(row[position])}"
                    )
                    reject(
                        FormatError(
                            message, source=path, line=line_no, field=f"{position + 1} ({v2_col})"
                        )
                    )
                    break
            else:  # every field read: the record is kept
                for (v3_col, _, _, _), value in zip(plan, values, strict=True):
                    columns[v3_col].append(value)
                lines.append(line_no)
        for error in text.bad:
            reject(error)
    n = len(lines)
    frame = empty_frame(v3_table)
    out: dict[str, np.ndarray] = {}
    for name, _, kind in COLUMNS[v3_table]:
        template = frame[name]
        if name in columns:
            if template.dtype == object:
                arr = np.empty(n, dtype=object)
                arr[:] = columns[name]
            else:
                arr = np.array(columns[name], dtype=template.dtype)
        elif name in _CONSTANTS.get(v3_table, {}):
            arr = np.full(n, _CONSTANTS[v3_table][name], dtype=np.int64)
        elif template.dtype == np.int64:
            arr = np.full(n, NULL_INT, dtype=np.int64)
        elif template.dtype == np.float64:
            arr = np.full(n, np.nan)
        else:
            arr = np.empty(n, dtype=object)
            if kind != RAW and name == "start_after_collection_ids":
                arr[:] = [[] for _ in range(n)]
        out[name] = arr
    for name in columns.keys() - out.keys():  # v2 columns v3 lacks (the task user)
        arr = np.empty(n, dtype=object)
        arr[:] = columns[name]
        out[name] = arr
    out["_shard"] = np.full(n, shard_index, dtype=np.int64)
    out["_line"] = np.array(lines, dtype=np.int64)
    return out


def _task_user_fallback(reduced: dict[str, np.ndarray], tasks: dict[str, np.ndarray]) -> None:
    """Give a job without a user (no job_events, or none naming one) the user of its
    tasks (the last non-null one, in event order), as its priority falls back on
    theirs: task_events carry the user hash too (column 7)."""
    users = tasks.get("user")
    if users is None or not len(users):
        return
    order = _order(tasks, ("collection_id", "time", "_rank"))
    starts = _group_starts([tasks["collection_id"][order]])
    last = _last_values(tasks, ("user",), order, starts)["user"]
    cids = tasks["collection_id"][order][starts]
    at = np.searchsorted(reduced["c_cid"], cids)
    missing = reduced["c_user"][at] == None  # noqa: E711 (an object array)
    reduced["c_user"][at[missing]] = last[missing]


V2_HEADER_INFO: dict[str, Any] = {
    "computer": "Google Borg cell (about 12.5k machines)",
    "information": "Google cluster-usage traces v2 (clusterdata-2011-2)",
    "version_label": "trace format v2 (2011)",
    "trace_version": 2,
    "unix_start_time": V2_UNIX_START,
    "time_zone": V2_TIME_ZONE,
    "tier_texts": (
        "free priority 0-1",
        "beb priority 2-8",
        "mid (none in v2)",
        "prod priority 9-11",
        "monitoring priority 12+",
    ),
}


def read_v2(
    source: str | os.PathLike[str],
    *,
    lenient: bool = False,
    cpu_scale: float = DEFAULT_CPU_SCALE,
    memory_scale: float = DEFAULT_MEMORY_SCALE,
    special_times: str = "unknown",
    tasks: bool = True,
) -> Workload:
    """Read a 2011 (v2) trace directory or table file into a workload."""
    check_options(cpu_scale, memory_scale, special_times, "python")
    if not isinstance(source, (str, os.PathLike)):
        raise UsageError("google-v2: the reader needs a path (a directory or a table file)")
    files = discover_v2(source)
    if not files:
        raise FormatError(
            "no v2 tables found (expected job_events, task_events ... CSV files)",
            source=os.fspath(source),
        )
    rejects = Rejects()
    parts: dict[str, list[dict[str, np.ndarray]]] = {t: [] for t in _MAPPING}
    counts: dict[str, dict[str, int]] = {}
    for index, (table, path) in enumerate(files):
        frame = parse_v2_table(path, table, index, rejects if lenient else None)
        parts[_V3_OF_V2[table]].append(frame)
        entry = counts.setdefault(table, {"shards": 0, "rows": 0})
        entry["shards"] += 1
        entry["rows"] += frame_length(frame)
    frames = {t: concat_frames(t, p) if p else empty_frame(t) for t, p in parts.items()}
    with no_gc():
        reduced = reduce_collections(
            frames["collection_events"],
            frames["instance_events"],
            frames["instance_usage"],
            keep_instances=tasks,
        )
        _task_user_fallback(reduced, frames["instance_events"])
        workload = build_workload(
            reduced,
            header_info=V2_HEADER_INFO,
            capacity=capacity_timeline(frames["machine_events"]),
            table_counts=counts,
            cpu_scale=cpu_scale,
            memory_scale=memory_scale,
            special_times=special_times,
            tasks=tasks,
            tier=tier_of_v2,
            trace_end=trace_end_seconds(frames),
        )
    finish_meta(workload, rejects, "python")
    return workload
