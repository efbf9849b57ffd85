"""Parsing one v3 shard into a columnar frame.

A *frame* is a ``dict`` of equal-length numpy arrays, one per column the reducer
needs: integer columns are ``int64`` with :data:`~.schema.NULL_INT` for null or
missing, float columns ``float64`` with NaN, text and repeated fields ``object``.
Two extra columns, ``_shard`` and ``_line``, record where each row came from; they
break ties between events with equal times, so the result never depends on the
order in which shards are read (in-process or on a Dask cluster).

Two parsers produce the same frames:

* the exact parser reads line by line with :func:`json.loads` (CSV rows and
  Parquet exports go through the same record conversion) and reports bad input
  with the shard and line number;
* the fast parser (:mod:`.arrow_parse`, when pyarrow is installed) hands blocks
  of a JSON shard to ``pyarrow.json`` with an explicit schema of the needed
  fields and converts whole columns; anything irregular (a parse error, an
  unknown enum name, a key of another table in the sample, a column of two
  types) sends the shard back to the exact parser, which then names the
  offending line.
"""

from __future__ import annotations

import csv
import json
import os
import re
import zlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, BinaryIO, cast

import numpy as np
from schedlab.errors import FormatError
from schedlab.io import open_binary

from . import arrow_numpy
from .schema import NULL_INT, V3_ENUMS, V3_KEYSETS, by_name, guess_table

INT, ENUM, FLOAT, STR, LIST_INT, RAW, BOOL = range(7)

#: Columns kept per table: (frame column, key path in the record, kind).
COLUMNS: dict[str, tuple[tuple[str, tuple[str, ...], int], ...]] = {
    "collection_events": (
        ("time", ("time",), INT),
        ("type", ("type",), ENUM),
        ("collection_id", ("collection_id",), INT),
        ("scheduling_class", ("scheduling_class",), ENUM),
        ("missing_type", ("missing_type",), ENUM),
        ("collection_type", ("collection_type",), ENUM),
        ("priority", ("priority",), INT),
        ("alloc_collection_id", ("alloc_collection_id",), INT),
        ("user", ("user",), STR),
        ("collection_name", ("collection_name",), STR),
        ("collection_logical_name", ("collection_logical_name",), STR),
        ("parent_collection_id", ("parent_collection_id",), INT),
        ("start_after_collection_ids", ("start_after_collection_ids",), LIST_INT),
        ("max_per_machine", ("max_per_machine",), INT),
        ("max_per_switch", ("max_per_switch",), INT),
        ("vertical_scaling", ("vertical_scaling",), ENUM),
        ("scheduler", ("scheduler",), ENUM),
    ),
    "instance_events": (
        ("time", ("time",), INT),
        ("type", ("type",), ENUM),
        ("collection_id", ("collection_id",), INT),
        ("scheduling_class", ("scheduling_class",), ENUM),
        ("missing_type", ("missing_type",), ENUM),
        ("collection_type", ("collection_type",), ENUM),
        ("priority", ("priority",), INT),
        ("alloc_collection_id", ("alloc_collection_id",), INT),
        ("instance_index", ("instance_index",), INT),
        ("machine_id", ("machine_id",), INT),
        ("alloc_instance_index", ("alloc_instance_index",), INT),
        ("cpus", ("resource_request", "cpus"), FLOAT),
        ("memory", ("resource_request", "memory"), FLOAT),
        ("constraint", ("constraint",), RAW),
    ),
    "instance_usage": (
        ("start_time", ("start_time",), INT),
        ("end_time", ("end_time",), INT),
        ("collection_id", ("collection_id",), INT),
        ("instance_index", ("instance_index",), INT),
        ("machine_id", ("machine_id",), INT),
        ("collection_type", ("collection_type",), ENUM),
        ("avg_cpus", ("average_usage", "cpus"), FLOAT),
        ("avg_memory", ("average_usage", "memory"), FLOAT),
        ("max_cpus", ("maximum_usage", "cpus"), FLOAT),
        ("max_memory", ("maximum_usage", "memory"), FLOAT),
    ),
    "machine_events": (
        ("time", ("time",), INT),
        ("machine_id", ("machine_id",), INT),
        ("type", ("type",), ENUM),
        ("switch_id", ("switch_id",), STR),
        ("cpus", ("capacity", "cpus"), FLOAT),
        ("memory", ("capacity", "memory"), FLOAT),
        ("platform_id", ("platform_id",), STR),
        ("missing_data_reason", ("missing_data_reason",), ENUM),
    ),
    "machine_attributes": (
        ("time", ("time",), INT),
        ("machine_id", ("machine_id",), INT),
        ("name", ("name",), STR),
        ("deleted", ("deleted",), BOOL),
    ),
}

_DTYPES = {INT: np.int64, ENUM: np.int64, BOOL: np.int64, FLOAT: np.float64}

INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1
#: Largest normalized value (CPU or memory request, usage, machine capacity) read:
#: 1.0 is the largest machine of the cell, so a million machines' worth is not a
#: value of a real trace; the bound keeps sums of them times ``cpu_scale`` exact
#: in 64-bit integers.
MAX_NORMALIZED = 1e6
_TIME = (0, INT64_MAX)  # 0 = before the trace, 2^63-1 = after it
_ID = (0, INT64_MAX)  # ids of the published traces are never negative; 0 = none
_INDEX = (0, INT32_MAX)  # int32 in the proto
_NORMALIZED = (0.0, MAX_NORMALIZED)
#: Values accepted in each numeric frame column (both ends included), for every
#: table and trace version; anything else (negative, too large, NaN, infinite) is
#: a :class:`FormatError`, or a skipped record in lenient mode. Enum columns are
#: checked against their tables instead.
LIMITS: dict[str, tuple[int, int] | tuple[float, float]] = {
    "time": _TIME,
    "start_time": _TIME,
    "end_time": _TIME,
    "collection_id": _ID,
    "alloc_collection_id": _ID,
    "parent_collection_id": _ID,
    "start_after_collection_ids": _ID,
    "machine_id": _ID,
    "priority": _INDEX,
    "instance_index": _INDEX,
    "alloc_instance_index": (-1, INT32_MAX),  # -1 = not in an alloc set
    "max_per_machine": _INDEX,
    "max_per_switch": _INDEX,
    "cpus": _NORMALIZED,
    "memory": _NORMALIZED,
    "avg_cpus": _NORMALIZED,
    "avg_memory": _NORMALIZED,
    "max_cpus": _NORMALIZED,
    "max_memory": _NORMALIZED,
}

#: Ranges of one table that differ from :data:`LIMITS`: an instance's ``machine_id``
#: may be -1, the proto's ``DEDICATED_MACHINE`` ("the thing is bound to a dedicated
#: machine"), a placement whose machine the trace does not name (the host is
#: unknown); a machine event's id is a machine's, never -1.
TABLE_LIMITS: dict[tuple[str, str], tuple[int, int]] = {
    ("instance_events", "machine_id"): (-1, INT64_MAX),
    ("instance_usage", "machine_id"): (-1, INT64_MAX),
}


def limits_of(table: str, name: str) -> tuple[int, int] | tuple[float, float] | None:
    """The values accepted in column ``name`` of ``table`` (``None``: not checked)."""
    return TABLE_LIMITS.get((table, name)) or LIMITS.get(name)


#: Frame columns every record of a table must have: its times, the ids that say
#: what it is about, its event type. A null or missing one is a
#: :class:`FormatError` (a skipped record in lenient mode), never "unknown": the
#: record would otherwise become an event at an invented time or of an invented
#: collection (the v2 reader applies the same rule to the 2011 columns).
REQUIRED: dict[str, frozenset[str]] = {
    "collection_events": frozenset({"time", "type", "collection_id"}),
    "instance_events": frozenset({"time", "type", "collection_id", "instance_index"}),
    "instance_usage": frozenset({"start_time", "end_time", "collection_id", "instance_index"}),
    "machine_events": frozenset({"time", "machine_id", "type"}),
    "machine_attributes": frozenset({"time", "machine_id"}),
}
#: Largest integer a JSON float may stand for in an integer field (JavaScript's
#: ``Number.MAX_SAFE_INTEGER``): beyond it, several integers share one double, so
#: ``1234567890123456789.0`` cannot say which id it was.
MAX_SAFE_FLOAT_INT = 2**53 - 1
#: Longest line (its line end included) of a JSON or CSV shard or of a 2011 table:
#: a trace record is a few KiB, so a longer line is damage (or a decompression
#: bomb), reported by itself without holding it in memory.
MAX_LINE_BYTES = 64 << 20


def missing_message(table: str) -> str:
    """The error message of a required field that is null or missing."""
    return f"null or missing, but every {table} record needs it"


class Rejects:
    """Counts (and remembers the first few of) the records skipped in lenient mode."""

    LIMIT = 1000

    def __init__(self) -> None:
        self.count = 0
        self.by_reason: dict[str, int] = {}
        self.messages: list[str] = []

    def add(self, error: FormatError, reason: str) -> None:
        """Count one skipped record (or unreadable rest of a shard)."""
        self.count += 1
        self.by_reason[reason] = self.by_reason.get(reason, 0) + 1
        if len(self.messages) < self.LIMIT:
            self.messages.append(str(error))

    def merge(self, other: Rejects) -> None:
        """Add the counts of another collector."""
        self.count += other.count
        for key, value in other.by_reason.items():
            self.by_reason[key] = self.by_reason.get(key, 0) + value
        room = self.LIMIT - len(self.messages)
        self.messages.extend(other.messages[: max(room, 0)])

    def as_dict(self) -> dict[str, Any]:
        """``{"total": n, "by_reason": {...}}`` for ``workload.meta["skipped"]``."""
        return {"total": self.count, "by_reason": dict(sorted(self.by_reason.items()))}


def empty_frame(table: str) -> dict[str, np.ndarray]:
    """A frame with no rows."""
    frame = {name: np.empty(0, dtype=_DTYPES.get(kind, object)) for name, _, kind in COLUMNS[table]}
    frame["_shard"] = np.empty(0, dtype=np.int64)
    frame["_line"] = np.empty(0, dtype=np.int64)
    return frame


def frame_length(frame: Mapping[str, np.ndarray]) -> int:
    """Number of rows."""
    return len(frame["_line"])


def concat_frames(table: str, frames: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Join frames of one table."""
    frames = [f for f in frames if frame_length(f)]
    if not frames:
        return empty_frame(table)
    if len(frames) == 1:
        return frames[0]
    return {name: np.concatenate([f[name] for f in frames]) for name in frames[0]}


# --------------------------------------------------------------------------- values


def _enum_lookup(table: Mapping[int, str]) -> tuple[dict[str, int], frozenset[int]]:
    return by_name(table), frozenset(table)


def show(value: Any, limit: int = 40) -> str:
    """``repr(value)``, shortened to about ``limit`` characters for an error message."""
    text = repr(value) if not isinstance(value, int) or value.bit_length() < 200 else "<huge>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def range_message(value: Any, low: float, high: float) -> str:
    """What an out-of-range value should have been."""
    if isinstance(low, float):
        return f"expected a finite number from {low:g} to {high:g}, got {show(value)}"
    return f"out of range: expected an integer from {low} to {high}, got {show(value)}"


def _is_null(value: Any) -> bool:
    return value is None or (type(value) is str and not value.strip())


#: A UTF-16 surrogate code point (U+D800 to U+DFFF). JSON may write one alone
#: (``"\ud800"``) and Python's :mod:`json` reads it, but it is half of a pair, not a
#: character: no UTF-8 text can hold it, so every writer would fail on it.
_SURROGATE_RE = re.compile(r"[\ud800-\udfff]")


def _surrogate_problem(text: str) -> str | None:
    """Why ``text`` is not Unicode text (a lone surrogate in it), or ``None``."""
    match = _SURROGATE_RE.search(text)
    if match is None:
        return None
    return (
        f"lone UTF-16 surrogate U+{ord(match[0]):04X} in {show(text)} (half of a pair, "
        "written alone): not a character, no UTF-8 text can hold it"
    )


def not_utf8_message(raw: bytes, start: int) -> str:
    """The error message of a line ``raw`` that is not UTF-8 from byte ``start`` on
    (the bytes of an encoded surrogate, ``ED A0 80``, are named as such)."""
    three = raw[start : start + 3]
    if len(three) == 3 and three[0] == 0xED and 0xA0 <= three[1] <= 0xBF and three[2] >> 6 == 2:
        code = 0xD000 | (three[1] & 0x3F) << 6 | three[2] & 0x3F
        return (
            f"not UTF-8 text (bytes {three!r} at column {start + 1} encode the lone "
            f"UTF-16 surrogate U+{code:04X}, which UTF-8 does not allow)"
        )
    return (
        f"not UTF-8 text (byte {raw[start : start + 1]!r} at column {start + 1}): "
        "a binary or damaged file?"
    )


class _LongDigits(str):
    """A JSON integer of more digits than :func:`int` reads from text (4300, see
    :func:`sys.set_int_max_str_digits`), kept as its digits: beyond the range of
    every field, so the field's converter names it (its ``repr`` is the number)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


class _TooManyDigits(ValueError):
    """An integer (text of ASCII digits) beyond the digits :func:`int` reads."""


def _int_or_digits(text: str) -> int | str:
    """``parse_int`` of the JSON decoders: the integer, or a :class:`_LongDigits`
    when it has more digits than :func:`int` reads."""
    try:
        return int(text)
    except ValueError:
        return _LongDigits(text)


def _beyond_digit_limit(exc: BaseException) -> bool:
    """True for the :class:`ValueError` of :func:`int` refusing too many digits."""
    return "set_int_max_str_digits" in str(exc)


def _int_text(text: str) -> int:
    """``int(text)`` of an ASCII text; an integer of more digits than :func:`int`
    reads (4300 by default) is :class:`_TooManyDigits` (leading zeros do not count)."""
    try:
        return int(text)
    except ValueError as exc:
        if not _beyond_digit_limit(exc):
            raise
    body = text.strip()
    sign = body[0] if body[:1] in ("+", "-") else ""
    digits = body[len(sign) :].lstrip("0") or "0"
    if not (digits.isascii() and digits.isdigit()):
        # int() says "too many digits" of any long text, numbers or not
        raise ValueError(f"expected an integer, got {show(text)}")
    try:
        return int(sign + digits)
    except ValueError:
        raise _TooManyDigits(f"a number of {len(digits)} digits") from None


def _small_int(text: str) -> int | None:
    """``int(text)``, or ``None`` for an integer of more digits than :func:`int`
    reads (other text raises :func:`int`'s :class:`ValueError`)."""
    try:
        return _int_text(text)
    except _TooManyDigits:
        return None


def _text_problem(value: Any) -> str | None:
    """What a decoded JSON value holds that no field may: a lone surrogate in a
    string or key, or an integer of thousands of digits (``None``: nothing)."""
    if isinstance(value, str):
        if type(value) is _LongDigits:
            return f"out of range: a number of {len(value.lstrip('-'))} digits, got {show(value)}"
        return None if value.isascii() else _surrogate_problem(value)
    if isinstance(value, list):
        for item in value:
            problem = _text_problem(item)
            if problem:
                return problem
    elif isinstance(value, dict):
        for key, item in value.items():
            problem = _text_problem(key) or _text_problem(item)
            if problem:
                return problem
    return None


def plain_number(text: str) -> bool:
    """True when a number's text may go to :func:`int` or :func:`float`: ASCII only
    and no underscore. Python also reads ``"١"``, ``"２００"`` (other scripts'
    digits) and ``"601_000_000"`` (digit grouping), which no trace writes and
    pyarrow refuses; the reader refuses them too, in every engine."""
    return text.isascii() and "_" not in text


def _to_int(value: Any) -> int:
    kind = type(value)
    if kind is int:
        return value
    if value is None:
        return NULL_INT
    if kind is str:
        text = value.strip()
        if not text:
            return NULL_INT
        if text.isascii() and "_" not in text:  # plain_number(), inlined: every row
            try:
                return int(text)
            except ValueError:
                return _int_text(text)  # the error, or thousands of leading zeros
        raise ValueError(f"expected an integer in ASCII digits, got {show(value)}")
    if kind is float and value.is_integer():
        if -MAX_SAFE_FLOAT_INT <= value <= MAX_SAFE_FLOAT_INT:
            return int(value)
        raise ValueError(
            f"the float {show(value)} is beyond 2^53-1, where it cannot say which integer "
            "it was (write ids and times as integers or strings)"
        )
    if kind is _LongDigits:
        raise _TooManyDigits(f"a number of {len(value.lstrip('-'))} digits")
    raise ValueError(f"expected an integer, got {show(value)}")


def _to_float(value: Any) -> float:
    if value is None:
        return np.nan
    kind = type(value)
    try:
        if kind is float or kind is int:
            return float(value)
        if kind is str or kind is _LongDigits:
            text = value.strip()
            if not text:
                return np.nan
            if text.isascii() and "_" not in text:  # plain_number(), inlined
                return float(text)
            raise ValueError(f"expected a number in ASCII digits, got {show(value)}")
    except OverflowError:  # an integer beyond a double
        return np.inf
    raise ValueError(f"expected a number, got {show(value)}")


def int_converter(low: int, high: int, required: str | None = None) -> Callable[[Any], int]:
    """:func:`_to_int` that also rejects values outside ``low..high``, and a null
    when ``required`` (the error message) is given."""

    def convert(value: Any) -> int:
        try:
            number = _to_int(value)
        except _TooManyDigits:
            raise ValueError(range_message(value, low, high)) from None
        if low <= number <= high:
            return number
        if number == NULL_INT and _is_null(value):
            if required:
                raise ValueError(required)
            return NULL_INT
        raise ValueError(range_message(value, low, high))

    return convert


def float_converter(low: float, high: float) -> Callable[[Any], float]:
    """:func:`_to_float` that also rejects NaN, infinities and values outside
    ``low..high`` (a null stays NaN)."""

    def convert(value: Any) -> float:
        number = _to_float(value)
        if low <= number <= high:
            return number
        if number != number and _is_null(value):
            return number
        raise ValueError(range_message(value, low, high))

    return convert


def _to_str(value: Any) -> str | None:
    if value is None:
        return None
    if type(value) is str:
        if not value.isascii():
            problem = _surrogate_problem(value)
            if problem:
                raise ValueError(problem)
        return value
    if isinstance(value, str):  # a _LongDigits: the number's digits, as an int's str()
        return str(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"expected a string, got {show(value)}")


def _to_bool(value: Any) -> int:
    if value is None:
        return NULL_INT
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    if isinstance(value, str):
        low = value.strip().lower()
        if low in {"true", "1"}:
            return 1
        if low in {"false", "0"}:
            return 0
        if not low:
            return NULL_INT
    raise ValueError(f"expected true or false, got {show(value)}")


_to_id = int_converter(*_ID)


def _to_list_int(value: Any) -> list[int]:
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        value = loads_unique(text) if text else []
    if not isinstance(value, list):
        raise ValueError(f"expected a list of integers, got {show(value)}")
    out = [_to_id(v) for v in value]
    if NULL_INT in out:
        raise ValueError(f"expected a list of integers, got {show(value)}")
    return out


def _to_raw(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        value = loads_unique(text) if text else None
    if value is None or value == []:
        return None
    if not isinstance(value, list):
        raise ValueError(f"expected a list, got {show(value)}")
    problem = _text_problem(value)  # kept whole: a writer would meet it
    if problem:
        raise ValueError(problem)
    return value


def _make_enum(names: Mapping[int, str], required: str | None = None) -> Callable[[Any], int]:
    numbers_by_name, valid = _enum_lookup(names)

    def convert(value: Any) -> int:
        if value is None:
            if required:
                raise ValueError(required)
            return NULL_INT
        if type(value) is int:
            if value in valid:
                return value
            raise ValueError(f"unknown value {show(value)} (expected one of {sorted(valid)})")
        if isinstance(value, str):
            text = value.strip()
            if not text:
                if required:
                    raise ValueError(required)
                return NULL_INT
            if text in numbers_by_name:
                return numbers_by_name[text]
            if text.isascii() and text.lstrip("-").isdigit():
                number = _small_int(text)
                if number in valid:
                    return number
                raise ValueError(f"unknown value {show(value)} (expected one of {sorted(valid)})")
            choices = ", ".join(names.values())
            raise ValueError(f"unknown name {show(value)} (expected one of {choices})")
        raise ValueError(f"expected an enum number or name, got {show(value)}")

    return convert


def _converters(table: str) -> list[tuple[str, tuple[str, ...], Callable[[Any], Any]]]:
    enums = V3_ENUMS[table]
    out = []
    for name, path, kind in COLUMNS[table]:
        required = missing_message(table) if name in REQUIRED[table] else None
        if kind == ENUM:
            func: Callable[[Any], Any] = _make_enum(enums[path[0]], required)
        elif kind == INT:
            low, high = cast("tuple[int, int]", limits_of(table, name))  # ints for an INT field
            func = int_converter(low, high, required)
        elif kind == FLOAT:
            func = float_converter(*cast("tuple[float, float]", limits_of(table, name)))
        else:
            func = {
                INT: _to_int,
                FLOAT: _to_float,
                STR: _to_str,
                LIST_INT: _to_list_int,
                RAW: _to_raw,
                BOOL: _to_bool,
            }[kind]
        out.append((name, path, func))
    return out


# --------------------------------------------------------------------------- exact parser


class _ColumnBuilder:
    """Appends converted records to per-column lists."""

    def __init__(self, table: str, source: str, shard_index: int) -> None:
        self.table = table
        self.source = source
        self.shard_index = shard_index
        self.allowed = V3_KEYSETS[table]
        self.converters = _converters(table)
        self.columns: dict[str, list[Any]] = {name: [] for name, _, _ in self.converters}
        self.lines: list[int] = []
        #: reject a record with a key outside the table (else such keys are ignored)
        self.check_keys = True

    def add(self, record: Any, line: int) -> None:
        """Convert and append one record; raise :class:`FormatError` if it is bad."""
        if not isinstance(record, dict):
            kind = "int" if type(record) is _LongDigits else type(record).__name__
            raise FormatError(
                f"expected a JSON object, got {kind}",
                source=self.source,
                line=line,
            )
        if self.check_keys and not record.keys() <= self.allowed:
            alien = sorted(set(record) - self.allowed)
            other = guess_table(frozenset(record))
            hint = f"; this looks like a {other} record" if other else ""
            raise FormatError(
                f"key {show(alien[0])} is not a field of {self.table}{hint} "
                "(a shard of another table in the directory?)",
                source=self.source,
                line=line,
            )
        values = []
        for _, path, func in self.converters:
            value = record.get(path[0])
            if len(path) == 2 and value is not None:
                if not isinstance(value, dict):
                    raise FormatError(
                        f"expected an object with {path[1]!r}, got {show(value)}",
                        source=self.source,
                        line=line,
                        field=path[0],
                    )
                value = value.get(path[1])
            try:
                values.append(func(value))
            except (ValueError, TypeError, OverflowError, RecursionError) as exc:
                raise FormatError(
                    str(exc), source=self.source, line=line, field=".".join(path)
                ) from None
        for (name, _, _), value in zip(self.converters, values, strict=True):
            self.columns[name].append(value)
        self.lines.append(line)

    def frame(self) -> dict[str, np.ndarray]:
        """The rows added so far as a frame."""
        out: dict[str, np.ndarray] = {}
        for name, _, kind in COLUMNS[self.table]:
            values = self.columns[name]
            dtype = _DTYPES.get(kind)
            if dtype is None:
                arr = np.empty(len(values), dtype=object)
                arr[:] = values
            else:
                arr = np.array(values, dtype=dtype)
            out[name] = arr
        out["_shard"] = np.full(len(self.lines), self.shard_index, dtype=np.int64)
        out["_line"] = np.array(self.lines, dtype=np.int64)
        return out


#: What reading a damaged compressed stream raises (``schedlab.io`` turns most of
#: it into a :class:`FormatError` without a line, which the parsers complete).
_STREAM_ERRORS = (OSError, EOFError, zlib.error, FormatError)


class LineTooLong(Exception):
    """A line longer than :data:`MAX_LINE_BYTES` (its rest has been skipped)."""


def line_too_long() -> str:
    """The error message of a line longer than :data:`MAX_LINE_BYTES`."""
    cap = MAX_LINE_BYTES
    size = f"{cap >> 20} MiB" if cap >= 1 << 20 and not cap % (1 << 20) else f"{cap} bytes"
    return f"line longer than {size}: not a trace record (a damaged file?)"


def _skip_line(fh: Any) -> int:
    """Read past the rest of the current line (in bounded pieces); the bytes read."""
    skipped = 0
    while True:
        piece = fh.readline(1 << 20)
        skipped += len(piece)
        if not piece or piece.endswith(b"\n"):
            return skipped


def _detail(exc: BaseException) -> str:
    return exc.message if isinstance(exc, FormatError) else str(exc)


#: Decompressed bytes at the head of a JSON-lines shard whose records must have only
#: keys of the shard's table (the pyarrow parser's sample: see :func:`parse_exact`).
KEY_CHECK_BYTES = 1 << 16


# --------------------------------------------------------------------------- duplicate keys


class DuplicateKey(ValueError):
    """A JSON object names one key twice (Python's :mod:`json` would keep the last)."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    record = dict(pairs)
    if len(record) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(f"key {show(key)} given twice in one object")
            seen.add(key)
    return record


_UNIQUE_DECODE = json.JSONDecoder(object_pairs_hook=_unique_pairs).decode
#: The decoders of a text with an integer of more digits than :func:`int` reads
#: (used only once the plain decoder refused it: a hook per integer is slower).
_LONG_DECODE = json.JSONDecoder(parse_int=_int_or_digits).decode
_LONG_UNIQUE_DECODE = json.JSONDecoder(
    object_pairs_hook=_unique_pairs, parse_int=_int_or_digits
).decode


def _text(raw: str | bytes | bytearray) -> str:
    """A JSON text as ``str``: bytes are decoded strictly (the encoding :mod:`json`
    detects, UTF-8 in practice), so the bytes of a lone surrogate are an error
    (:func:`json.loads` lets them through)."""
    return raw if isinstance(raw, str) else bytes(raw).decode(json.detect_encoding(raw))


def loads_long(raw: str | bytes | bytearray) -> Any:
    """:func:`json.loads` of ``raw`` (strictly decoded, see :func:`_text`); an
    integer of more digits than :func:`int` reads is kept as its digits (a
    :class:`_LongDigits`), so that the field it is in says it is out of range."""
    text = _text(raw)
    try:
        return json.loads(text)
    except ValueError as exc:
        if not _beyond_digit_limit(exc):
            raise
    return _LONG_DECODE(text)


def loads_unique(text: str | bytes | bytearray) -> Any:
    """:func:`json.loads` that raises :class:`DuplicateKey` for an object naming a key
    twice (a decoder made once: ``json.loads(..., object_pairs_hook=...)`` would make
    one per call); bytes are decoded strictly and long integers kept as in
    :func:`loads_long`."""
    text = _text(text)
    try:
        return _UNIQUE_DECODE(text)
    except ValueError as exc:
        if not _beyond_digit_limit(exc):
            raise
    return _LONG_UNIQUE_DECODE(text)


class _Pairs(list):  # type: ignore[type-arg]
    """A JSON object as its list of ``(key, value)`` pairs, duplicates kept."""


_PAIRS_DECODE = json.JSONDecoder(object_pairs_hook=_Pairs, parse_int=_int_or_digits).decode


def _read_keys(table: str) -> dict[str, tuple[str, ...] | None]:
    keys: dict[str, tuple[str, ...] | None] = {}
    for _, path, kind in COLUMNS[table]:
        if kind in (RAW, LIST_INT):
            keys[path[0]] = None
        else:
            keys[path[0]] = (*(keys.get(path[0]) or ()), *path[1:])
    return keys


#: Per table, the keys the reader reads: ``()`` for a scalar, the inner keys of a
#: nested object (``resource_request``: ``cpus``, ``memory``), or ``None`` for a
#: repeated field, which is kept whole (``constraint``) or read item by item.
READ_KEYS: dict[str, dict[str, tuple[str, ...] | None]] = {t: _read_keys(t) for t in COLUMNS}


def _has_duplicates(value: Any) -> bool:
    if type(value) is _Pairs:
        keys = [k for k, _ in value]
        return len(set(keys)) != len(keys) or any(_has_duplicates(v) for _, v in value)
    if type(value) is list:
        return any(_has_duplicates(v) for v in value)
    return False


def duplicated_field(text: str | bytes | bytearray, table: str) -> str | None:
    """The field (``collection_id``, ``resource_request.cpus``) of a JSON record that
    names a key the reader reads twice, or ``None``.

    A duplicate key is an error only where it makes a value the reader uses
    ambiguous: a field of the table's columns, an inner key of a nested field it
    reads, anything inside a repeated field it keeps. A key it does not read given
    twice changes nothing it reads; pyarrow's parser (which skips such keys) could
    not see it without a slower parse, so no engine checks it."""
    record = _PAIRS_DECODE(_text(text))
    if type(record) is not _Pairs:
        return None
    read = READ_KEYS[table]
    counts: dict[str, int] = {}
    for key, _ in record:
        counts[key] = counts.get(key, 0) + 1
    for key, value in record:
        if key not in read:
            continue
        if counts[key] > 1:
            return key
        inner = read[key]
        if inner is None:
            if _has_duplicates(value):
                return key
        elif inner and type(value) is _Pairs:
            names = [k for k, _ in value]
            for name in inner:
                if names.count(name) > 1:
                    return f"{key}.{name}"
    return None


#: Per table, the fields whose values are objects, and those whose values are lists
#: of objects (for the colon count of :func:`_json_records`).
_OBJECT_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "collection_events": ((), ()),
    "instance_events": (("resource_request",), ("constraint",)),
    "instance_usage": (("average_usage", "maximum_usage", "random_sample_usage"), ()),
    "machine_events": (("capacity",), ()),
    "machine_attributes": ((), ()),
}


def _with_duplicate(raw: bytes, table: str | None, source: str, line: int) -> Any:
    """A JSON line in which some object names a key twice: the
    :class:`FormatError` of a key the reader reads given twice (see
    :func:`duplicated_field`), else the line decoded (the last value of the unread
    key, as :mod:`json` keeps it)."""
    field = duplicated_field(raw, table) if table else None
    if field is not None or not table:
        raise FormatError(
            "given twice in one record (which value is meant?)",
            source=source,
            line=line,
            field=field,
        )
    return loads_long(raw)


def _json_records(
    fh: BinaryIO,
    source: str,
    start: int = 0,
    offset: list[int] | None = None,
    table: str | None = None,
) -> Iterator[tuple[int, Any]]:
    """``(line number, decoded value)`` for each non-blank line after line ``start``;
    ``offset[0]`` is kept at the byte offset of the end of the line read last.
    ``table``: a key of the table's records given twice is an error (see
    :func:`duplicated_field`; ``None``: not checked)."""
    loads = json.loads
    objects, object_lists = _OBJECT_FIELDS.get(table or "", ((), ()))
    line_no = start
    offset = offset if offset is not None else [0]
    while True:
        try:
            raw = fh.readline(MAX_LINE_BYTES + 1)
            if len(raw) > MAX_LINE_BYTES:
                offset[0] += len(raw) + _skip_line(fh)
                raise LineTooLong
        except LineTooLong:
            line_no += 1
            raise FormatError(line_too_long(), source=source, line=line_no) from None
        except _STREAM_ERRORS as exc:
            raise FormatError(
                f"unreadable compressed data after line {line_no} ({_detail(exc)})",
                source=source,
                line=line_no + 1,
            ) from None
        if not raw:
            return
        line_no += 1
        offset[0] += len(raw)
        if not raw.strip():
            continue
        try:
            if not raw.isascii():
                _check_utf8(raw, source, line_no)
            try:
                value = loads(raw)
            except ValueError as exc:
                if not _beyond_digit_limit(exc):
                    raise
                value = loads_long(raw)  # an integer of thousands of digits: its field says
            if type(value) is dict and table:
                # Python's json keeps the last value of a key given twice. Every key
                # has one colon, so when the line holds as many colons as the record
                # has keys (counted here in the objects of a record; the few colons
                # inside strings or deeper objects fail the test), no key is there
                # twice; otherwise the objects are checked one by one (1/8 of the
                # line parser's time for every line, saved in nearly all)
                keys = len(value)
                for name in objects:
                    inner = value.get(name)
                    if type(inner) is dict:
                        keys += len(inner)
                for name in object_lists:
                    items = value.get(name)
                    if type(items) is list:
                        for inner in items:
                            if type(inner) is dict:
                                keys += len(inner)
                if raw.count(b":") != keys:
                    try:
                        loads_unique(raw)
                    except DuplicateKey:
                        value = _with_duplicate(raw, table, source, line_no)
        except FormatError:
            raise
        except ValueError as exc:  # UnicodeDecodeError included
            # cut short: no line end, or the parser ran off the end of the text
            end = len(raw.rstrip(b"\r\n"))
            truncated = not raw.endswith(b"\n") or getattr(exc, "pos", -1) >= end
            what = "truncated JSON line" if truncated else "invalid JSON"
            detail = show(str(exc), 120)[1:-1]
            raise FormatError(f"{what} ({detail})", source=source, line=line_no) from None
        except RecursionError:
            raise FormatError(
                "JSON nested too deeply to be a trace record", source=source, line=line_no
            ) from None
        yield line_no, value


def _check_utf8(raw: bytes, source: str, line: int) -> None:
    """Raise the :class:`FormatError` of a JSON line that is not UTF-8 (the bytes of
    a lone surrogate included, which :func:`json.loads` would let through), naming
    the field that holds the bad bytes when the line can say it."""
    if json.detect_encoding(raw) not in ("utf-8", "utf-8-sig"):
        return  # UTF-16 or -32 by its NUL bytes: json.loads says what is wrong
    try:
        raw.decode("utf-8")
        return
    except UnicodeDecodeError as exc:
        position = exc.start
    raise FormatError(
        not_utf8_message(raw, position), source=source, line=line, field=_undecodable_field(raw)
    )


def _holds_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return _SURROGATE_RE.search(value) is not None
    if isinstance(value, list):
        return any(_holds_surrogate(item) for item in value)
    if isinstance(value, dict):
        return any(_holds_surrogate(k) or _holds_surrogate(v) for k, v in value.items())
    return False


def _undecodable_field(raw: bytes) -> str | None:
    """The field (``user``, ``resource_request.x``) of a JSON record line holding the
    bytes that are not UTF-8, or ``None`` when the line does not say (the bytes
    decode to surrogates with ``surrogateescape``, found in the decoded record)."""
    text = raw.decode("utf-8", "surrogateescape").removeprefix("\ufeff")
    try:
        value = _LONG_DECODE(text)
    except (ValueError, RecursionError):
        return None
    path: list[str] = []
    while isinstance(value, dict):
        for key, item in value.items():
            if _holds_surrogate(key):
                return ".".join([*path, ascii(key)])
            if _holds_surrogate(item):
                path.append(key)
                value = item
                break
        else:
            break
    return ".".join(path) or None


#: Nested fields a CSV export may flatten as ``<field>_cpus`` / ``<field>_memory``.
_FLAT_NESTED = (
    "resource_request",
    "average_usage",
    "maximum_usage",
    "capacity",
    "random_sample_usage",
)


def column_path(key: str) -> tuple[str, ...]:
    """The record field of a CSV header column: ``("resource_request", "cpus")`` for
    ``resource_request.cpus``, ``resource_request__cpus`` or
    ``resource_request_cpus``; ``(key,)`` for a plain column."""
    for sep in (".", "__"):
        if sep in key:
            outer, inner = key.split(sep, 1)
            return outer, inner
    for outer in _FLAT_NESTED:
        prefix = outer + "_"
        if key.startswith(prefix) and key[len(prefix) :] in ("cpus", "memory"):
            return outer, key[len(prefix) :]
    return (key,)


def _unflatten(row: Mapping[str, str | None]) -> dict[str, Any]:
    """A CSV export row as a record: ``resource_request.cpus`` (or ``_cpus``) columns
    are folded back into nested objects; empty cells are nulls."""
    record: dict[str, Any] = {}
    for key, value in row.items():
        cell = None if value in ("", None) else value
        path = column_path(key)
        if len(path) == 2:
            _nested(record, path[0], key)[path[1]] = cell
        else:
            if isinstance(record.get(key), dict):
                raise ValueError(_CLASH.format(key=key, outer=key))
            record[key] = cell
    return {
        k: (None if isinstance(v, dict) and not v else _drop_nulls(v)) for k, v in record.items()
    }


def check_header(header: list[str], table: str | None, source: str, line: int) -> None:
    """Raise :class:`FormatError` when two columns of a CSV header give one field of
    ``table`` (the same name twice, or ``resource_request.cpus`` beside
    ``resource_request_cpus``): which one a record means would be a guess. (A column
    that is not a field of the table is an error of every row already.)"""
    allowed = V3_KEYSETS[table] if table else None
    seen: dict[tuple[str, ...], str] = {}
    for name in header:
        path = column_path(name)
        if allowed is not None and path[0] not in allowed:
            continue
        first = seen.get(path)
        seen[path] = name
        if first is not None:
            what = (
                "column given twice in the header"
                if first == name
                else f"columns {show(first)} and {show(name)} of the header both give it"
            )
            raise FormatError(
                f"{what} (which one is meant?)", source=source, line=line, field=".".join(path)
            )


#: A header whose columns clash (a nested column and a plain one of the same name).
_CLASH = (
    "header column {key!r} and column {outer!r} clash (not the header row of a v3 CSV "
    "export: a 2011 v2 trace is read with --from google-v2)"
)


def _nested(record: dict[str, Any], outer: str, key: str) -> dict[str, Any]:
    """The nested object ``outer`` of a CSV record (made on first use); an error if
    ``outer`` is a plain column too."""
    nested = record.setdefault(outer, {})
    if not isinstance(nested, dict):
        raise ValueError(_CLASH.format(key=key, outer=outer))
    return nested


def _drop_nulls(value: Any) -> Any:
    """A nested object without its empty cells (``None`` when all are empty)."""
    if not isinstance(value, dict):
        return value
    kept = {k: v for k, v in value.items() if v is not None}
    return kept or None


BOM = b"\xef\xbb\xbf"


class TextLines:
    """The lines of a binary stream decoded as UTF-8, numbered, for :mod:`csv`
    (a byte-order mark at the start is dropped).

    A line that is not UTF-8, or longer than :data:`MAX_LINE_BYTES` (read past in
    bounded pieces, never held whole), is handed on as an empty line and its
    :class:`FormatError` is queued in :attr:`bad`, so that the caller can reject
    that line and read on (decoding a whole text stream would fail at some 8 KiB
    chunk, with no line number)."""

    def __init__(self, fh: BinaryIO, source: str) -> None:
        self._readline = fh.readline
        self._fh = fh
        self.source = source
        self.number = 0
        self.bad: list[FormatError] = []

    def __iter__(self) -> TextLines:
        return self

    def __next__(self) -> str:
        raw = self._readline(MAX_LINE_BYTES + 1)
        if not raw:
            raise StopIteration
        self.number += 1
        if len(raw) > MAX_LINE_BYTES:
            _skip_line(self._fh)
            self.bad.append(FormatError(line_too_long(), source=self.source, line=self.number))
            return "\n"
        if self.number == 1 and raw.startswith(BOM):
            raw = raw[len(BOM) :]  # a UTF-8 byte-order mark is not data
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.bad.append(
                FormatError(not_utf8_message(raw, exc.start), source=self.source, line=self.number)
            )
            return "\n"


def csv_cells(text: str) -> list[str]:
    """The cells of one CSV line (``[]`` for a blank one). A record is one line: a
    quoted cell that does not end on its line is a :class:`csv.Error` here (read
    across lines, an unterminated quote would swallow the rest of the file), and
    so is text after a closing quote (``"a"b``)."""
    return next(csv.reader((text,), strict=True), [])


def _csv_records(fh: BinaryIO, source: str, table: str | None = None) -> Iterator[tuple[int, Any]]:
    """``(line, record)`` per CSV row, or ``(line, FormatError)`` for a bad line (the
    rows after it are still read); damaged compressed data and a header giving a
    field of ``table`` twice raise. The first line with content is the header; a
    row with fewer or more cells than it has columns is a bad line (its missing
    cells are not nulls)."""
    lines = TextLines(fh, source)
    header: list[str] | None = None
    while True:
        try:
            text = next(lines)
        except StopIteration:
            break
        except _STREAM_ERRORS as exc:
            raise FormatError(
                f"unreadable compressed data after line {lines.number} ({_detail(exc)})",
                source=source,
                line=lines.number + 1,
            ) from None
        if lines.bad:
            yield from ((e.line or 0, e) for e in lines.bad)
            lines.bad.clear()
        number = lines.number
        if not text.strip():
            continue
        try:
            cells = csv_cells(text)
        except csv.Error as exc:
            yield number, FormatError(f"bad CSV ({exc})", source=source, line=number)
            continue
        if header is None:
            check_header(cells, table, source, number)
            header = cells
            continue
        if len(cells) != len(header):
            yield (
                number,
                FormatError(
                    f"{len(cells)} cells, but the header has {len(header)} columns",
                    source=source,
                    line=number,
                ),
            )
            continue
        try:
            record: Any = _unflatten(dict(zip(header, cells, strict=True)))
        except ValueError as exc:
            record = FormatError(str(exc), source=source, line=number)
        yield number, record


def parse_exact(
    path: str | os.PathLike[str],
    table: str,
    kind: str,
    shard_index: int,
    rejects: Rejects | None = None,
) -> dict[str, np.ndarray]:
    """Parse a JSON-lines or CSV shard record by record.

    Bad input raises :class:`FormatError` naming the shard and line; with
    ``rejects`` (lenient mode) bad records are counted and skipped instead, and an
    unreadable compressed tail ends the shard (counted once).
    """
    source = os.fspath(path)
    builder = _ColumnBuilder(table, source, shard_index)
    try:
        fh = open_binary(path)
    except _STREAM_ERRORS as exc:
        raise FormatError(f"cannot open shard ({_detail(exc)})", source=source) from None
    stream_sound = False  # the whole stream was checked once: bad lines are bad lines
    # JSON lines: keys outside the table are errors in the first KEY_CHECK_BYTES, and
    # everywhere once one was found there (a shard of another table); elsewhere they
    # are ignored, as the pyarrow parser does (its explicit schema skips them)
    offset = [0]
    keys_everywhere = kind == "csv"
    with fh:
        records = (
            _csv_records(fh, source, table)
            if kind == "csv"
            else _json_records(fh, source, 0, offset, table)
        )
        while True:
            try:
                line, record = next(records)
            except StopIteration:
                break
            except FormatError as exc:
                if "compressed" not in exc.message and not stream_sound:
                    checked = _check_compression(path, exc)
                    stream_sound = checked is exc
                    exc = checked
                if rejects is None:
                    raise exc from None
                reason = "unreadable" if "compressed" in exc.message else "invalid"
                rejects.add(exc, reason)
                if reason == "unreadable" or kind == "csv":
                    break
                # a generator is finished once it raised: resume after the bad line
                records = _json_records(fh, source, exc.line or 0, offset, table)
                continue
            in_head = offset[0] <= KEY_CHECK_BYTES
            builder.check_keys = keys_everywhere or in_head
            try:
                if isinstance(record, FormatError):
                    raise record
                builder.add(record, line)
            except FormatError as exc:
                other_table = "not a field of" in exc.message
                keys_everywhere = keys_everywhere or (other_table and in_head)
                if rejects is None:
                    raise
                rejects.add(exc, "other_table" if other_table else "invalid")
    return builder.frame()


def _check_compression(path: str | os.PathLike[str], error: FormatError) -> FormatError:
    """A bad line in a compressed shard may be garbage from a damaged stream: read the
    whole stream once (gzip checks its CRC) and, if it is damaged, say so."""
    with open(path, "rb") as raw:
        magic = raw.read(3)
    if not (magic.startswith(b"\x1f\x8b") or magic == b"BZh"):
        return error
    try:
        with open_binary(path) as fh:
            while fh.read(1 << 20):
                pass
    except _STREAM_ERRORS as exc:
        return FormatError(
            f"corrupt compressed data ({_detail(exc)}); lines from here on cannot be trusted",
            source=error.source,
            line=error.line,
        )
    return error


def parse_parquet(
    path: str | os.PathLike[str], table: str, shard_index: int, rejects: Rejects | None = None
) -> dict[str, np.ndarray]:
    """Parse a Parquet export (needs pyarrow) through the fast column conversion, or
    record by record when the columns are irregular."""
    pq = _require_pyarrow_parquet()
    source = os.fspath(path)
    try:
        arrow_table = pq.read_table(source)
    except Exception as exc:  # pyarrow raises many kinds on a damaged file
        detail = show(str(exc), 200)[1:-1]
        error = FormatError(f"unreadable Parquet shard ({detail})", source=source)
        if rejects is None:
            raise error from None
        rejects.add(error, "unreadable")
        return empty_frame(table)
    twice = _duplicate_field_name(arrow_table.schema)
    if twice is not None:
        error = FormatError("column given twice (which one is meant?)", source=source, field=twice)
        if rejects is None:
            raise error
        rejects.add(error, "invalid")
        return empty_frame(table)
    frame = _frame_from_arrow(arrow_table, table, shard_index)
    if frame is not None:
        return frame
    builder = _ColumnBuilder(table, source, shard_index)
    try:
        records = arrow_table.to_pylist()
    except Exception as exc:  # pyarrow cannot make some columns Python values
        detail = show(str(exc), 200)[1:-1]
        error = FormatError(f"unreadable Parquet shard ({detail})", source=source)
        if rejects is None:
            raise error from None
        rejects.add(error, "unreadable")
        return empty_frame(table)
    for i, record in enumerate(records, start=1):
        try:
            builder.add(record, i)
        except FormatError as exc:
            if rejects is None:
                raise
            rejects.add(exc, "invalid")
    return builder.frame()


def _duplicate_field_name(schema: Any) -> str | None:
    """A column (or a field of a struct column, ``resource_request.cpus``) that a
    Parquet schema names twice, or ``None``."""
    import pyarrow as pa

    names = list(schema.names)
    for field in schema:
        if names.count(field.name) > 1:
            return str(field.name)
        if pa.types.is_struct(field.type):
            inner = [field.type.field(i).name for i in range(field.type.num_fields)]
            for name in inner:
                if inner.count(name) > 1:
                    return f"{field.name}.{name}"
    return None


def _require_pyarrow_parquet() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        from schedlab.errors import UsageError

        raise UsageError(
            "reading Parquet exports needs pyarrow: pip install 'schedlab[parquet]'"
        ) from None
    return pq


# --------------------------------------------------------------------------- fast parser


def pyarrow_available() -> bool:
    """True when ``pyarrow`` can be imported."""
    try:
        import pyarrow.json  # noqa: F401
    except ImportError:
        return False
    return True


def parse_fast(
    path: str | os.PathLike[str], table: str, shard_index: int, use_threads: bool = True
) -> dict[str, np.ndarray] | None:
    """Parse a JSON-lines shard with ``pyarrow.json``; ``None`` if anything about it
    is irregular (the caller then uses :func:`parse_exact`). See
    :mod:`.arrow_parse`: decompressed blocks, an explicit schema of the needed
    fields typed from the first 64 KiB, repeated fields decoded only where set."""
    from .arrow_parse import parse_json_shard

    return parse_json_shard(path, table, shard_index, use_threads)


def parse_fast_pieces(
    path: str | os.PathLike[str], table: str, shard_index: int, use_threads: bool = True
) -> list[dict[str, np.ndarray]] | None:
    """:func:`parse_fast` as a list of frames (one per block) that
    :func:`concat_frames` joins into its result."""
    from .arrow_parse import parse_json_pieces

    return parse_json_pieces(path, table, shard_index, use_threads)


def _frame_from_arrow(
    arrow_table: Any, table: str, shard_index: int
) -> dict[str, np.ndarray] | None:
    import pyarrow as pa

    names = set(arrow_table.column_names)
    if not names <= V3_KEYSETS[table]:
        return None
    n = arrow_table.num_rows
    enums = V3_ENUMS[table]
    frame: dict[str, np.ndarray] = {}
    try:
        for name, path, kind in COLUMNS[table]:
            if path[0] not in names:
                column = None
            else:
                column = arrow_table.column(path[0])
                if len(path) == 2:
                    column = _struct_field(column, path[1])
                    if column is None:
                        return None
            arr = _convert_arrow(
                column,
                kind,
                n,
                enums.get(path[0]),
                pa,
                limits_of(table, name),
                name in REQUIRED[table],
            )
            if arr is None:
                return None
            frame[name] = arr
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, ValueError):
        return None
    frame["_shard"] = np.full(n, shard_index, dtype=np.int64)
    frame["_line"] = np.arange(1, n + 1, dtype=np.int64)
    return frame


def _struct_field(column: Any, field: str) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_null(column.type):
        return column
    if not pa.types.is_struct(column.type):
        return None
    if column.type.get_field_index(field) < 0:
        return pa.nulls(len(column))
    return pc.struct_field(column, field)


def _convert_arrow(
    column: Any,
    kind: int,
    n: int,
    enum: Mapping[int, str] | None,
    pa: Any,
    limits: tuple[float, float] | None = None,
    required: bool = False,
) -> Any:
    """One Arrow column as a frame column, or ``None`` when it needs the exact
    parser: a type it cannot take, an unknown enum value, a value outside
    ``limits`` (NaN and infinities included), a null in a ``required`` column, an
    integer written as a float beyond 2^53-1 or as hexadecimal text."""
    import pyarrow.compute as pc

    if column is None or pa.types.is_null(column.type):
        if required and n:
            return None
        if kind in (INT, ENUM, BOOL):
            return np.full(n, NULL_INT, dtype=np.int64)
        if kind == FLOAT:
            return np.full(n, np.nan)
        arr = np.empty(n, dtype=object)
        arr[:] = [[] for _ in range(n)] if kind == LIST_INT else None
        return arr
    ctype = column.type
    if kind in (INT, ENUM):
        from_floats = False
        if kind == ENUM and pa.types.is_string(ctype):
            return _enum_from_strings(column, enum or {}, required)
        if pa.types.is_string(ctype):
            if _has_hex_marker(column):
                return None  # pyarrow reads "0x10" as 16; Python's int() refuses it
            column = _int_from_strings(column, pa, pc)
        elif pa.types.is_floating(ctype):
            if kind == ENUM:
                return None  # an enum is a number or a name, not 3.0
            column = pc.cast(column, pa.int64())  # safe cast: fails on fractions
            from_floats = True
        elif not pa.types.is_integer(ctype):
            return None
        if required and column.null_count:
            return None
        if column.type == pa.int64():
            values = arrow_numpy.to_numpy(column, NULL_INT)  # without importing pandas
        else:
            values = column.fill_null(NULL_INT).to_numpy().astype(np.int64, copy=False)
        if kind == ENUM and not _known_enum_values(values, enum or {}):
            return None
        if limits is not None and not _within(values, limits, column.null_count):
            return None
        if from_floats and not _within(
            values, (-MAX_SAFE_FLOAT_INT, MAX_SAFE_FLOAT_INT), column.null_count
        ):
            return None
        return values
    if kind == FLOAT:
        if pa.types.is_string(ctype):
            column = pc.cast(column, pa.float64())
        elif not (pa.types.is_floating(ctype) or pa.types.is_integer(ctype)):
            return None
        column = pc.cast(column, pa.float64())
        values = arrow_numpy.to_numpy(column, np.nan)  # fill_null(nan), without pandas
        if limits is not None and not _within(values, limits, column.null_count):
            return None
        return values
    if kind == BOOL:
        if not pa.types.is_boolean(ctype):
            return None
        return arrow_numpy.booleans(column, NULL_INT)  # without importing pandas
    if kind == STR:
        if not (pa.types.is_string(ctype) or pa.types.is_integer(ctype)):
            return None
        if pa.types.is_integer(ctype):
            column = pc.cast(column, pa.string())
        arr = np.empty(n, dtype=object)
        arr[:] = column.to_pylist()  # the strings and None, as to_numpy gives them
        return arr
    if kind == LIST_INT:
        if not pa.types.is_list(ctype):
            return None
        arr = np.empty(n, dtype=object)
        arr[:] = [_to_list_int(v) for v in column.to_pylist()]
        return arr
    if kind == RAW:
        if not pa.types.is_list(ctype):
            return None
        lengths = pc.list_value_length(column).fill_null(0)
        arr = np.empty(n, dtype=object)
        if pc.max(lengths).as_py():
            arr[:] = [v if v else None for v in column.to_pylist()]
        return arr
    return None


def _int_from_strings(column: Any, pa: Any, pc: Any) -> Any:
    """A string column (int64 written as JSON strings) as int64, ``""`` as null.
    Cast as it is first (no empty string in nearly every column: one pass instead
    of three); only when that fails, with the empty strings made null first (a
    value that is not a number still fails there)."""
    try:
        return pc.cast(column, pa.int64())
    except pa.ArrowInvalid:
        return pc.cast(pc.if_else(pc.equal(column, ""), None, column), pa.int64())


def _has_hex_marker(column: Any) -> bool:
    """True when some string of a column holds an ``x`` or ``X`` (pyarrow's cast to
    int64 reads ``"0x1f"`` as hexadecimal): one numpy pass over the string bytes."""
    chunks = column.chunks if hasattr(column, "chunks") else [column]
    for chunk in chunks:
        n = len(chunk)
        if not n:
            continue
        _, offsets, data = chunk.buffers()[:3]
        if data is None:
            continue
        bounds = np.frombuffer(offsets, dtype=np.int32, count=chunk.offset + n + 1)
        text = np.frombuffer(data, dtype=np.uint8)[bounds[chunk.offset] : bounds[-1]]
        if np.count_nonzero((text | 0x20) == ord("x")):
            return True
    return False


def _within(values: np.ndarray, limits: tuple[float, float], nulls: int) -> bool:
    """True when every value but the ``nulls`` null markers (``NULL_INT`` or NaN,
    both outside any limits) lies within ``limits``."""
    low, high = limits
    inside = np.count_nonzero((values >= low) & (values <= high))
    return inside + nulls == len(values)


def _known_enum_values(values: np.ndarray, enum: Mapping[int, str]) -> bool:
    """True when every non-null value is a number of ``enum``."""
    present = values[values != NULL_INT]
    if not present.size:
        return True
    low, high = int(present.min()), int(present.max())
    if low < 0 or high > max(enum, default=-1):
        return False
    seen = np.flatnonzero(np.bincount(present))
    return all(int(v) in enum for v in seen)


def _enum_from_strings(
    column: Any, enum: Mapping[int, str], required: bool = False
) -> np.ndarray | None:
    numbers_by_name = by_name(enum)
    values = column.to_pylist()
    mapping: dict[Any, int] = {None: NULL_INT, "": NULL_INT}
    for value in set(values):
        if value in mapping:
            if required:
                return None  # a null where every record has a value
            continue
        if value in numbers_by_name:
            mapping[value] = numbers_by_name[value]
        elif value.isascii() and value.lstrip("-").isdigit() and _small_int(value) in enum:
            mapping[value] = int(value)
        else:
            return None
    return np.fromiter((mapping[v] for v in values), dtype=np.int64, count=len(values))
