"""The colon-separated accounting layout: splitting records, converting to and from
the JSON-shaped record dict used for cross-layout writing.

Variants handled (see docs/formats/sge.md):

* 43 fields (SGE 6.0: no ``arid`` / ``ar_submission_time``), 45 documented fields,
  46 and more (Son of Grid Engine 8 and Univa add trailing fields, kept verbatim);
* colons inside ``category`` (``-l cpu=24:00:00``): the record is re-split so that
  the fields after the category have the documented types (``iow`` and ``maxvmem``
  numbers, ``arid`` and ``ar_submission_time`` integers); the fewest colons inside
  the category that give a consistent record win. A colon is taken into the
  category only inside a time value of a resource request (``NAME=H:M:S`` or
  ``NAME=M:S``, the only colons Grid Engine writes there, see sge_types(1)): a
  record whose later field is malformed is an error naming that field, never
  re-split into a "consistent" one with other fields shifted;
* millisecond timestamps (Univa >= 8.2), detected per record by magnitude.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from .names import (
    CATEGORY,
    COLON_FIELDS,
    COLON_FULL_FIELDS,
    COLON_MIN_FIELDS,
    COLON_SUBSTITUTE,
    EUSAGE_FIELDS,
    MS_THRESHOLD,
    NONE_STRINGS,
    RUSAGE_FIELDS,
    shown,
)

#: The documented syntax of the colon number fields (ASCII digits only: Python's
#: ``int``/``float`` also take ``+5``, `` 5``, ``1_000`` and other scripts' digits):
#: integers (a ``-`` allowed here; the reader refuses a negative value where none
#: is meaningful, ``arid`` and ``ar_submission_time`` take digits alone), and
#: decimal numbers (``-``, ``.``, an exponent).
_INT_RE = re.compile(r"-?[0-9]+\Z")
_UINT_RE = re.compile(r"[0-9]+\Z")
_NUMBER = r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"  # (unambiguous)
_FLOAT_RE = re.compile(_NUMBER + r"\Z")
#: Every field of a block at once (joined with ``:``): one linear C-level match.
_INTS_RE = re.compile(r"-?[0-9]+(?::-?[0-9]+)*\Z")
_NUMBERS_RE = re.compile(f"{_NUMBER}(?::{_NUMBER})*\\Z")
#: Digits of the largest integer read (2**53 - 1 has 16).
_MAX_DIGITS = 15
_MAX_INTEGER = 2**53 - 1


class RecordError(ValueError):
    """A record that does not follow its layout; ``field`` names the culprit."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _is_number(text: str) -> bool:
    return _FLOAT_RE.match(text) is not None


def number_problem(text: str, integer: bool, unsigned: bool = False) -> str | None:
    """Why ``text`` is not a number field's value as documented (ASCII digits, a
    ``-`` only where the value may be negative, no spaces; an integer field no
    fraction nor exponent, at most 2**53 - 1), or ``None``. Only the syntax and the
    bound of an unsigned integer are looked at here; finiteness and the ranges of
    other fields are the reader's checks."""
    if integer:
        if _INT_RE.match(text) is None:
            return f"expected an integer, got {shown(text)}"
        if unsigned and text[0] == "-":
            return f"expected an integer >= 0, got {shown(text)}"
        return None
    if _FLOAT_RE.match(text) is None:
        return f"expected a number, got {shown(text)}"
    return None


def numbers_problems(column: Sequence[str], integer: bool) -> dict[int, str]:
    """:func:`number_problem` of each value of a column that has one, by position
    (the whole column is matched at once first: nearly always all good)."""
    if (_INTS_RE if integer else _NUMBERS_RE).match(":".join(column)) is not None:
        return {}
    found = {}
    for i, text in enumerate(column):
        problem = number_problem(text, integer)
        if problem is not None:
            found[i] = problem
    return found


def _unsigned_problem(text: str) -> str | None:
    """Why ``text`` is not a non-negative integer within 2**53 - 1 (``arid``,
    ``ar_submission_time``), or ``None``."""
    problem = number_problem(text, True, True)
    if problem is None and len(text) > _MAX_DIGITS and int(text) > _MAX_INTEGER:
        problem = f"out of range (at most 2**53 - 1), got {shown(text)}"
    return problem


#: A time value with colons in a resource request (sge_types(1):
#: ``[[hours:]minutes:]seconds``, a number that is 0 may be left out: ``1::1``) as
#: Grid Engine copies it into the category, e.g. ``-l h_rt=24:00:00``.
_TIME_VALUE = re.compile(r"=(?=[0-9:]*[0-9])[0-9]*(?::[0-9]*){1,2}(?=[, ]|\Z)")


def category_colons_ok(category: str) -> bool:
    """Whether every colon of a (re-joined) category is inside a time value of a
    resource request (``h_rt=24:00:00``, ``s_rt=90:00``): the only colons Grid
    Engine writes into a category. Anything else (``-pe mpi 9:0.000000:NONE``) means
    the record's later fields are malformed, not that the category holds them."""
    return ":" not in _TIME_VALUE.sub("=", category)


def _tail_problem(tail: list[str]) -> tuple[str, str] | None:
    """Why the fields after the category (``iow`` onwards) are not consistent."""
    if len(tail) == 4 or len(tail) < 3:
        return "arid", f"expected 43, 45 or more fields, got {len(tail) + CATEGORY + 1}"
    if not _is_number(tail[0]):
        return "iow", f"expected a number, got {shown(tail[0])}"
    if not _is_number(tail[2]):
        return "maxvmem", f"expected a number, got {shown(tail[2])}"
    if len(tail) >= 5:
        problem = _unsigned_problem(tail[3])
        if problem is not None:
            return "arid", problem
        problem = _unsigned_problem(tail[4])
        if problem is not None:
            return "ar_submission_time", problem
    return None


def _plain_digits(text: str) -> bool:
    """ASCII digits, at most 15 (``str.isdigit`` takes other scripts' digits)."""
    return text.isdigit() and text.isascii() and len(text) <= _MAX_DIGITS


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
        and _plain_digits(fields[43])
        and _plain_digits(fields[44])
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
            if category_colons_ok(category):
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


def _float(text: str, field: str) -> float:
    """A number field as a float; :class:`RecordError` if it is not a finite number
    (the reader refuses such records, so only a record that did not come from it
    gets here)."""
    try:
        value = float(text)
    except ValueError:
        raise RecordError(field, f"expected a number, got {shown(text)}") from None
    if not math.isfinite(value):
        raise RecordError(field, f"expected a number, got {shown(text)}")
    return value


def _whole(text: str, field: str) -> int:
    """An integer field's value (a run of digits too long for :func:`int` is not
    one the reader accepts: an error, not a crash)."""
    try:
        return int(text)
    except ValueError:
        raise RecordError(field, f"expected an integer, got {shown(text)}") from None


def _number(text: str, field: str) -> int | float:
    if _INT_RE.match(text):
        return _whole(text, field)
    return _float(text, field)


def _int(text: str, field: str) -> int:
    if _INT_RE.match(text):
        return _whole(text, field)
    value = _float(text, field)
    if not value.is_integer():
        raise RecordError(field, f"expected an integer, got {shown(text)}")
    return int(value)


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
    rusage = {name: _number(fields[13 + i], name) for i, name in enumerate(RUSAGE_FIELDS)}
    started = record["start_time"] > 0
    wallclock = (record["end_time"] - record["start_time"]) / 1e6 if started else 0.0
    eusage = {
        "wallclock": float(wallclock),
        "cpu": _float(fields[36], "cpu"),
        "mem": _float(fields[37], "mem"),
        "io": _float(fields[38], "io"),
        "iow": _float(fields[40], "iow"),
        "maxvmem": _float(fields[42], "maxvmem"),
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


#: ``report(key, action)``: told of every value the colon layout cannot carry as
#: it is (``key`` is the JSONL key, ``usage.rusage.NAME`` for a usage value).
Report = Callable[[str, str], None]

_NEWLINE = "newline written as a space (a record is one line)"
_COLON = f"':' written as '{COLON_SUBSTITUTE}' (the colon layout has no escape for ':')"


def _text(value: Any, key: str, report: Report | None) -> str:
    """A name or text as a colon field: newlines become spaces and colons
    :data:`~.names.COLON_SUBSTITUTE` (except in the category, see
    :func:`from_json_record`), each change reported."""
    text = str(value)
    if "\n" in text or "\r" in text:
        text = text.replace("\r", " ").replace("\n", " ")
        if report is not None:
            report(key, _NEWLINE)
    if ":" in text and key != "category":
        text = text.replace(":", COLON_SUBSTITUTE)
        if report is not None:
            report(key, _COLON)
    return text


def _usage_number(value: Any, key: str, report: Report | None) -> str:
    """A usage value as a colon field; a value that is not a finite number (a JSON
    ``1e999`` read as infinity) is written as 0, reported."""
    if isinstance(value, float) and not math.isfinite(value):
        if report is not None:
            report(key, "not a finite number, written as 0")
        return "0"
    return format_number(value)


def from_json_record(record: dict[str, Any], report: Report | None = None) -> list[str]:
    """The 45 colon fields (timestamps in seconds) of a JSON-shaped record.

    Microseconds are truncated to whole seconds, as Grid Engine's own colon writer
    does; JSON-only keys (``submit_cmd_line``, ``deleted_by``, ``wallclock``,
    ``maxrss``, ``ioops``, ``maxpss``, custom usage) have no colon field.

    The colon layout has no escape, and the reader must read the line back as the
    same fields: a newline in a name or text is written as a space, a ``:`` as
    :data:`~.names.COLON_SUBSTITUTE` (``_``), a leading ``#`` of the queue name
    (which would make the line a comment) as ``_``, a usage value that is not a
    finite number as 0. Colons of the category are kept when they are time values
    (``-l h_rt=24:00:00``) and the line splits back into the same fields; else the
    time values are written in seconds and any other colon as ``;`` (the requests
    read back are the same). ``report(key, action)`` is told of every change.
    """
    usage = record.get("usage") or {}
    rusage = usage.get("rusage") or {}
    eusage = usage.get("eusage") or usage.get("usage") or {}
    execd = "eusage" if usage.get("eusage") else "usage"

    def seconds(key: str) -> str:
        return str(int(record.get(key, 0)) // 1_000_000)

    def text(key: str, default: str = "") -> str:
        value = record.get(key)
        return _text(value, key, report) if value not in (None, "") else default

    def number(container: dict[str, Any], prefix: str, name: str, default: Any) -> str:
        return _usage_number(container.get(name, default), f"{prefix}.{name}", report)

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
    fields.extend(number(rusage, "usage.rusage", name, 0) for name in RUSAGE_FIELDS)
    fields.extend(
        [
            text("project", "NONE"),
            text("department", "defaultdepartment"),
            text("granted_pe", "NONE"),
            str(int(record.get("slots", 1))),
            str(int(record.get("task_number", 0))),
            number(eusage, f"usage.{execd}", "cpu", 0.0),
            number(eusage, f"usage.{execd}", "mem", 0.0),
            number(eusage, f"usage.{execd}", "io", 0.0),
            _text(record.get("category", ""), "category", report),
            number(eusage, f"usage.{execd}", "iow", 0.0),
            text("pe_taskid", "NONE"),
            number(eusage, f"usage.{execd}", "maxvmem", 0.0),
            str(int(record.get("arid", 0))),
            seconds("ar_submission_time"),
        ]
    )
    if fields[0].startswith("#"):
        fields[0] = COLON_SUBSTITUTE + fields[0][1:]
        if report is not None:
            report("qname", "a leading '#' written as '_' (a line starting with '#' is a comment)")
    category = fields[CATEGORY]
    if ":" in category:
        try:
            same = split_record(":".join(fields)) == fields
        except RecordError:
            same = False
        if not same:
            fields[CATEGORY] = _category_without_colons(category)
            if report is not None:
                report(
                    "category",
                    "time values written in seconds, any other ':' as ';' (a ':' there"
                    " would not read back)",
                )
    return fields


def _seconds(match: re.Match[str]) -> str:
    parts = match.group(0)[1:].split(":")
    if any(len(part) > 30 for part in parts):  # (no time: left as it is, ':' -> ';')
        return match.group(0)
    total = 0
    for part in parts:
        total = total * 60 + int(part or 0)
    return f"={total}"


def _category_without_colons(category: str) -> str:
    """A category with the same requests and no colon: time values in seconds
    (``h_rt=1:30:00`` -> ``h_rt=5400``), any other colon ``;`` (which no request
    value reads as a number or a name)."""
    return _TIME_VALUE.sub(_seconds, category).replace(":", ";")


__all__ = [
    "EUSAGE_FIELDS",
    "RecordError",
    "Report",
    "category_colons_ok",
    "format_number",
    "from_json_record",
    "split_record",
    "time_scale",
    "to_json_record",
]
