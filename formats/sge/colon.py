"""The colon-separated accounting layout: splitting records, converting to and from
the JSON-shaped record dict used for cross-layout writing.

Variants handled (see docs/formats/sge.md):

* 43 fields (SGE 6.0: no ``arid`` / ``ar_submission_time``), 45 documented fields,
  46 and more (Son of Grid Engine 8 and Univa add trailing fields, kept verbatim);
* colons inside ``category`` (``-l cpu=24:00:00``): the record is re-split so that
  the fields after the category have the documented types (``iow`` and ``maxvmem``
  numbers, ``arid`` and ``ar_submission_time`` integers); the fewest colons inside
  the category that give a consistent record win;
* millisecond timestamps (Univa >= 8.2), detected per record by magnitude.
"""

from __future__ import annotations

import re
from typing import Any

from .names import (
    CATEGORY,
    COLON_FIELDS,
    COLON_FULL_FIELDS,
    COLON_MIN_FIELDS,
    EUSAGE_FIELDS,
    MS_THRESHOLD,
    NONE_STRINGS,
    RUSAGE_FIELDS,
)

_INT_RE = re.compile(r"-?\d+\Z")
_FLOAT_RE = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\Z")


class RecordError(ValueError):
    """A record that does not follow its layout; ``field`` names the culprit."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _is_number(text: str) -> bool:
    return _FLOAT_RE.match(text) is not None


def _tail_problem(tail: list[str]) -> tuple[str, str] | None:
    """Why the fields after the category (``iow`` onwards) are not consistent."""
    if len(tail) == 4 or len(tail) < 3:
        return "arid", f"expected 43, 45 or more fields, got {len(tail) + CATEGORY + 1}"
    if not _is_number(tail[0]):
        return "iow", f"expected a number, got {tail[0]!r}"
    if not _is_number(tail[2]):
        return "maxvmem", f"expected a number, got {tail[2]!r}"
    if len(tail) >= 5:
        if _INT_RE.match(tail[3]) is None:
            return "arid", f"expected an integer, got {tail[3]!r}"
        if _INT_RE.match(tail[4]) is None:
            return "ar_submission_time", f"expected an integer, got {tail[4]!r}"
    return None


def split_record(line: str) -> list[str]:
    """Split one colon record into its fields, re-joining colons inside ``category``.

    The result has 43 fields (SGE 6.0), 45, or more (trailing fields of later
    versions). Raises :class:`RecordError` for a record with too few fields or
    whose fields after the category cannot be made consistent.
    """
    fields = line.split(":")
    n = len(fields)
    if (
        n == COLON_FULL_FIELDS
        and fields[43].isdigit()
        and fields[44].isdigit()
        and _is_number(fields[40])
        and _is_number(fields[42])
    ):
        return fields
    if n < COLON_MIN_FIELDS:
        raise RecordError(
            COLON_FIELDS[n - 1] if n else None,
            f"truncated record: {n} fields, expected 43, 45 or more",
        )
    first_problem = None
    for inside in range(n - COLON_MIN_FIELDS + 1):
        tail = fields[CATEGORY + 1 + inside :]
        problem = _tail_problem(tail)
        if problem is None:
            if inside == 0:
                return fields
            category = ":".join(fields[CATEGORY : CATEGORY + 1 + inside])
            return [*fields[:CATEGORY], category, *tail]
        if first_problem is None:
            first_problem = problem
    assert first_problem is not None
    raise RecordError(*first_problem)


def time_scale(fields: list[str]) -> float:
    """Units per second of the record's timestamps: 1 or 1000 (Univa milliseconds).

    Decided per record from the largest of submission, start and end time: a value
    of 1e11 or more cannot be seconds (that is the year 5138) and is milliseconds.
    """
    largest = max(float(fields[8]), float(fields[9]), float(fields[10]))
    return 1000.0 if largest >= MS_THRESHOLD else 1.0


def _number(text: str) -> int | float:
    if _INT_RE.match(text):
        return int(text)
    return float(text)


def _int(text: str, field: str) -> int:
    try:
        return int(float(text)) if not _INT_RE.match(text) else int(text)
    except ValueError:
        raise RecordError(field, f"expected an integer, got {text!r}") from None


def to_json_record(fields: list[str]) -> dict[str, Any]:
    """The JSON-shaped record (keys in OCS order) for a split colon record.

    Timestamps become microseconds; ``NONE`` project / PE / PE task id and empty
    strings are omitted, as OCS does; ``usage.eusage.wallclock`` is end minus
    start and ``maxrss`` is ``ru_maxrss`` (KB) times 1024 (the colon layout has no
    execd maxrss). Trailing fields beyond the 45 documented ones are dropped.
    """
    scale = time_scale(fields)
    to_us = 1_000_000 // int(scale)

    def text(i: int) -> str | None:
        value = fields[i]
        if value == "" or (COLON_FIELDS[i] in NONE_STRINGS and value == "NONE"):
            return None
        return value

    def stamp(i: int) -> int:
        return _int(fields[i], COLON_FIELDS[i]) * to_us

    record: dict[str, Any] = {
        "job_number": _int(fields[5], "job_number"),
        "task_number": _int(fields[35], "task_number"),
        "start_time": stamp(9),
        "end_time": stamp(10),
    }
    for key, i in (
        ("owner", 3),
        ("group", 2),
        ("account", 6),
        ("qname", 0),
        ("hostname", 1),
        ("project", 31),
        ("department", 32),
        ("granted_pe", 33),
    ):
        value = text(i)
        if value is not None:
            record[key] = value
    record["slots"] = _int(fields[34], "slots")
    arid = _int(fields[43], "arid") if len(fields) > 43 else 0
    if arid:
        record["arid"] = arid
    if (name := text(4)) is not None:
        record["job_name"] = name
    record["priority"] = _int(fields[7], "priority")
    record["submission_time"] = stamp(8)
    if arid:
        record["ar_submission_time"] = stamp(44)
    if (pe_taskid := text(41)) is not None:
        record["pe_taskid"] = pe_taskid
    record["category"] = fields[CATEGORY]
    record["failed"] = _int(fields[11], "failed")
    record["exit_status"] = _int(fields[12], "exit_status")
    rusage = {name: _number(fields[13 + i]) for i, name in enumerate(RUSAGE_FIELDS)}
    started = record["start_time"] > 0
    wallclock = (record["end_time"] - record["start_time"]) / 1e6 if started else 0.0
    eusage = {
        "wallclock": float(wallclock),
        "cpu": float(fields[36]),
        "mem": float(fields[37]),
        "io": float(fields[38]),
        "iow": float(fields[40]),
        "maxvmem": float(fields[42]),
        "maxrss": float(rusage["ru_maxrss"]) * 1024.0,
    }
    record["usage"] = {"rusage": rusage, "eusage": eusage}
    return record


def format_number(value: Any) -> str:
    """A number as Grid Engine writes it: integers plain, floats ``%f`` unless that
    loses precision (then the shortest exact representation)."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    value = float(value)
    text = f"{value:f}"
    if float(text) != value:
        text = repr(value)
    return text


def _clean(text: Any) -> str:
    return str(text).replace("\r", " ").replace("\n", " ")


def from_json_record(record: dict[str, Any]) -> list[str]:
    """The 45 colon fields (timestamps in seconds) of a JSON-shaped record.

    Microseconds are truncated to whole seconds, as Grid Engine's own colon writer
    does; JSON-only keys (``submit_cmd_line``, ``deleted_by``, ``wallclock``,
    ``maxrss``, ``ioops``, ``maxpss``, custom usage) have no colon field.
    """
    usage = record.get("usage") or {}
    rusage = usage.get("rusage") or {}
    eusage = usage.get("eusage") or usage.get("usage") or {}

    def seconds(key: str) -> str:
        return str(int(record.get(key, 0)) // 1_000_000)

    def text(key: str, default: str = "") -> str:
        value = record.get(key)
        return _clean(value) if value not in (None, "") else default

    fields = [
        text("qname", "UNKNOWN"),
        text("hostname", "UNKNOWN"),
        text("group"),
        text("owner"),
        text("job_name"),
        str(int(record["job_number"])),
        text("account", "sge"),
        str(int(record.get("priority", 0))),
        seconds("submission_time"),
        seconds("start_time"),
        seconds("end_time"),
        str(int(record.get("failed", 0))),
        str(int(record.get("exit_status", 0))),
    ]
    fields.extend(format_number(rusage.get(name, 0)) for name in RUSAGE_FIELDS)
    fields.extend(
        [
            text("project", "NONE"),
            text("department", "defaultdepartment"),
            text("granted_pe", "NONE"),
            str(int(record.get("slots", 1))),
            str(int(record.get("task_number", 0))),
            format_number(eusage.get("cpu", 0.0)),
            format_number(eusage.get("mem", 0.0)),
            format_number(eusage.get("io", 0.0)),
            _clean(record.get("category", "")),
            format_number(eusage.get("iow", 0.0)),
            text("pe_taskid", "NONE"),
            format_number(eusage.get("maxvmem", 0.0)),
            str(int(record.get("arid", 0))),
            seconds("ar_submission_time"),
        ]
    )
    return fields


__all__ = [
    "EUSAGE_FIELDS",
    "RecordError",
    "format_number",
    "from_json_record",
    "split_record",
    "time_scale",
    "to_json_record",
]
