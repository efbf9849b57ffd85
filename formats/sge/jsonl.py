"""The one-line JSON layout of Open Cluster Scheduler (``accounting.jsonl``):
checking a parsed record, naming its execd usage container, writing it back.

The reader (:mod:`.reader`) parses lines itself, in bulk, and checks the types of
the values it maps as it converts them; the values of every other key (and all of
``usage``) it checks with :func:`unmapped_problems`, by the same rules as
:func:`check_record`, the full check used whenever a stored record has to be
rewritten or converted. So a record that is read can always be written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from itertools import chain, repeat
from typing import Any

from schedlab.validation import MAX_MAGNITUDE

from .colon import RecordError
from .mapping import JSON_MAPPED_KEYS
from .names import JSON_INT_KEYS, JSON_STRING_KEYS, SHOWN_CHARS, shown

_REQUIRED = ("job_number", "submission_time", "start_time", "end_time")
#: The integer keys the mapping does not use that cannot be negative (a colon
#: record's ``arid`` and ``ar_submission_time`` are digits alone; ``time`` is a
#: time stamp); ``priority`` can.
UNSIGNED_KEYS = frozenset(("time", "arid", "ar_submission_time"))
_BOTH_USAGE = "both usage.eusage and usage.usage given (which values are meant?)"
_NUMBER = (int, float)
#: The usage containers whose values must be numbers (custom ones, named after
#: ``reporting_params usage_patterns``, may hold strings too).
_NUMERIC_CONTAINERS = frozenset(("rusage", "eusage", "usage"))


def describe_json(value: Any) -> str:
    """A parsed JSON value for an error message: a string quoted as Python quotes
    it, anything else as JSON (``null``, ``true``, ``[1, 2]``), cut as
    :func:`.names.shown` cuts a value (about 40 characters)."""
    if isinstance(value, str) or (isinstance(value, int) and value.bit_length() > 256):
        return shown(value)
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):  # (too deep: shown says so)
        return shown(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def key_problem(key: str, value: Any) -> tuple[str, str] | None:
    """``(field, message)`` if a record's top-level ``key`` holds a value of the
    wrong type, else ``None``: the integer keys an integer (a float only when
    integral), the string keys a string, ``usage`` an object of objects (the
    execd and rusage containers of numbers, custom ones of numbers or strings),
    any other key a scalar (kept, and written back)."""
    if key in JSON_INT_KEYS:
        if isinstance(value, bool) or not isinstance(value, _NUMBER):
            return key, f"expected an integer, got {describe_json(value)}"
        if isinstance(value, float) and not value.is_integer():
            return key, f"expected an integer, got {describe_json(value)}"
        if abs(value) > MAX_MAGNITUDE:  # (as the colon reader bounds its integers)
            return key, f"out of range (at most 2**53 - 1), got {describe_json(value)}"
        if value < 0 and key in UNSIGNED_KEYS:  # (as in the colon layout)
            return key, f"expected an integer >= 0, got {describe_json(value)}"
    elif key in JSON_STRING_KEYS:
        if not isinstance(value, str):
            return key, f"expected a string, got {describe_json(value)}"
    elif key == "usage":
        if not isinstance(value, dict):
            return key, f"expected an object, got {describe_json(value)}"
        for name, container in value.items():
            if not isinstance(container, dict):
                return f"usage.{name}", f"expected an object, got {describe_json(container)}"
            numeric = name in _NUMERIC_CONTAINERS
            for item, number in container.items():
                if isinstance(number, (dict, list, bool)) or number is None:
                    what = "a number" if numeric else "a number or string"
                    return f"usage.{name}.{item}", f"expected {what}, got {describe_json(number)}"
                if numeric and not isinstance(number, _NUMBER):
                    return f"usage.{name}.{item}", f"expected a number, got {describe_json(number)}"
        if "eusage" in value and "usage" in value:
            # OCS writes one of them (9.0.6 on: eusage); two sets of values
            return key, _BOTH_USAGE
    elif isinstance(value, (dict, list)) or value is None:
        # Unknown keys are kept, but only with scalar values we can write back.
        return key, f"expected a string, number or boolean, got {describe_json(value)}"
    return None


def check_record(record: Any) -> None:
    """Raise :class:`RecordError` if a parsed record has a value of the wrong type
    (see :func:`key_problem`) or lacks a required key."""
    if not isinstance(record, dict):
        raise RecordError(None, f"expected a JSON object, got {type(record).__name__}")
    for key, value in record.items():
        problem = key_problem(key, value)
        if problem is not None:
            raise RecordError(*problem)
    for key in _REQUIRED:
        if key not in record:
            raise RecordError(key, "missing")


def unmapped_problem(record: dict[str, Any]) -> tuple[str, str] | None:
    """The first problem (in key order) of the values of a record's keys that the
    mapping does not use (see :data:`.mapping.JSON_MAPPED_KEYS`), by the rules of
    :func:`check_record`: ``(field, message)``, or ``None``."""
    for key, value in record.items():
        if key not in JSON_MAPPED_KEYS:
            problem = key_problem(key, value)
            if problem is not None:
                return problem
    return None


class _Absent:
    """The value of a key a record does not have (in the column checks)."""


_ABSENT = _Absent()
#: Value types that need no closer look, per key (the column checks).
_INT_OK = frozenset((int, _Absent))
_STR_OK = frozenset((str, _Absent))
_SCALAR_OK = frozenset((str, int, float, bool, _Absent))
_USAGE_OK = frozenset((dict, _Absent))
_NUMBERS_OK = frozenset((int, float))
_CUSTOM_OK = frozenset((int, float, str))


def unmapped_problems(records: Sequence[dict[str, Any]]) -> dict[int, tuple[str, str]]:
    """:func:`unmapped_problem` of each record that has one, by position. The
    values are looked at a key at a time (set operations on whole columns); only
    when one may be wrong are the records checked one by one."""
    if _columns_good(records):
        return {}
    found: dict[int, tuple[str, str]] = {}
    for i, record in enumerate(records):
        problem = unmapped_problem(record)
        if problem is not None:
            found[i] = problem
    return found


def _column_types(records: Sequence[dict[str, Any]], key: str) -> set[type]:
    return set(map(type, map(dict.get, records, repeat(key), repeat(_ABSENT))))


def _within_bounds(records: Sequence[dict[str, Any]], key: str) -> bool:
    """Whether the integers of ``key`` are within 2**53 - 1 in magnitude (and not
    negative, for :data:`UNSIGNED_KEYS`)."""
    values = [v for v in map(dict.get, records, repeat(key)) if type(v) is int]
    lowest = 0 if key in UNSIGNED_KEYS else -MAX_MAGNITUDE
    return not values or (max(values) <= MAX_MAGNITUDE and min(values) >= lowest)


def _columns_good(records: Sequence[dict[str, Any]]) -> bool:
    """Whether every unmapped value certainly follows the rules (``False``: maybe
    not, look record by record)."""
    keys = set(chain.from_iterable(map(dict.keys, records))) - JSON_MAPPED_KEYS
    for key in keys:
        if key in JSON_INT_KEYS:
            allowed = _INT_OK  # (an integral float is fine too: looked at closely)
        elif key in JSON_STRING_KEYS:
            allowed = _STR_OK
        elif key == "usage":
            allowed = _USAGE_OK
        else:
            allowed = _SCALAR_OK
        if not _column_types(records, key) <= allowed:
            return False
        if key in JSON_INT_KEYS and not _within_bounds(records, key):
            return False
    if "usage" not in keys:
        return True
    usages = [u for u in map(dict.get, records, repeat("usage")) if u is not None]
    if any("eusage" in u and "usage" in u for u in usages if type(u) is dict):
        return False
    for name in set(chain.from_iterable(map(dict.keys, usages))):
        containers = list(map(dict.get, usages, repeat(name), repeat(_ABSENT)))
        if not set(map(type, containers)) <= _USAGE_OK:
            return False
        present = [c for c in containers if c is not _ABSENT]
        types = set(map(type, chain.from_iterable(map(dict.values, present))))
        if not types <= (_NUMBERS_OK if name in _NUMERIC_CONTAINERS else _CUSTOM_OK):
            return False
    return True


def _reject_constant(name: str) -> Any:
    raise json.JSONDecodeError(f"{name} is not valid JSON", name, 0)


# ------------------------------------------------- values no parser should settle
#
# Two things a JSON parser settles silently, and differently from one parser to
# the next: a lone UTF-16 surrogate (``"\ud800"``: the standard library keeps it,
# a string that cannot be written as UTF-8; orjson and msgspec refuse the line),
# and a key given twice in one object (every parser keeps the last value; the
# stored source record keeps both). Either makes the record an error.

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_TWICE = "given twice in one record (which value is meant?)"


def _printable(text: str) -> str:
    """``text`` with its lone surrogates as ``\\udXXX`` escapes (printable)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _surrogate_in(value: Any, path: str) -> tuple[str, str] | None:
    """The first string under ``value`` (keys too, in document order) with a lone
    surrogate: ``(field, message)``. Iterative: a record may be nested deeply."""
    stack: list[tuple[Any, str, bool]] = [(value, path, False)]
    while stack:
        item, where, is_key = stack.pop()
        kind = type(item)
        if kind is str:
            found = _LONE_SURROGATE.search(item)
            if found is not None:
                code = _printable(found.group())
                if is_key:
                    return _printable(where), (
                        f"not text: the key holds a lone UTF-16 surrogate ({code}), "
                        "which has no UTF-8 form"
                    )
                return where, f"not text: a lone UTF-16 surrogate ({code}) has no UTF-8 form"
        elif kind is dict:
            for key, sub in reversed(item.items()):
                child = f"{where}.{key}" if where else key
                stack.append((sub, child, False))
                stack.append((key, child, True))
        elif kind is list:
            stack.extend((sub, where, False) for sub in reversed(item))
    return None


def _surrogate_problem(line: str, record: Any) -> tuple[str, str] | None:
    """``(field, message)`` for the first string of a record parsed from ``line``
    (a key or a value, at any depth) that holds a lone UTF-16 surrogate, else
    ``None``. Only an escape (``\\u``) can make one: the text is UTF-8."""
    if "\\u" not in line:
        return None
    return _surrogate_in(record, "")


class _Pairs(list):  # type: ignore[type-arg]
    """A JSON object as its ``(key, value)`` pairs, a key given twice kept twice."""


_PAIRS_DECODE = json.JSONDecoder(object_pairs_hook=_Pairs).decode


def _repeated(value: Any, path: str) -> str | None:
    """The first key given twice under ``value``: the keys of an object are looked
    at before those of the objects inside it. Iterative: a record may be nested
    deeply."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if type(item) is _Pairs:
            seen: set[str] = set()
            for key, _ in item:
                if key in seen:
                    return f"{where}.{key}" if where else key
                seen.add(key)
            stack.extend((sub, f"{where}.{key}" if where else key) for key, sub in reversed(item))
        elif type(item) is list:
            stack.extend((sub, where) for sub in reversed(item))
    return None


def _repeated_key(line: str) -> str | None:
    """The first key a JSON line names twice in one object, as a field path
    (``job_number``, ``usage.eusage.cpu``), or ``None`` (also for a line that is
    not JSON). Keys of one object come before those of the objects inside it."""
    try:
        value = _PAIRS_DECODE(line)
    except (ValueError, RecursionError):
        return None
    return _repeated(value, "")


def _counted_keys(record: Any) -> int:
    """The keys of a parsed record's top object, of ``usage`` and of the objects in
    it (each key once: a key given twice is counted once)."""
    if type(record) is not dict:
        return 0
    count = len(record)
    usage = record.get("usage")
    if type(usage) is dict:
        count += len(usage)
        for container in usage.values():
            if type(container) is dict:
                count += len(container)
    return count


def _census(value: Any) -> tuple[int, int]:
    """``(keys, colons)`` of a parsed value: the keys of all its objects (each once)
    and the colons of all its strings, keys included. Iterative: a record may be
    nested deeply."""
    keys = colons = 0
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            colons += item.count(":")
        elif kind is dict:
            keys += len(item)
            colons += "".join(item).count(":")
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
    return keys, colons


def _keys_once(line: str, record: Any, colons: int, counted: int) -> bool:
    """Whether no object of the record parsed from ``line`` names a key twice,
    decided from counts: every key of the text is followed by one colon, the only
    colons besides those inside strings. So when the colons outside strings are
    as many as the distinct keys, no key is there twice. ``False``: not certain
    (the objects are then read pair by pair)."""
    if colons == counted:
        return True
    if "\\u003" in line:  # (an escaped colon: the decoded strings have more)
        return False
    if type(record) is dict:  # (OCS's strings are all at the top: look there first)
        top = "".join([v for v in record.values() if type(v) is str]).count(":")
        if colons - top == counted:
            return True
    keys, inside = _census(record)
    return colons - inside == keys


def _repeated_key_problem(line: str, record: Any) -> tuple[str, str] | None:
    """``(field, message)`` if the record parsed from ``line`` names a key twice in
    one object, else ``None``."""
    if _keys_once(line, record, line.count(":"), _counted_keys(record)):
        return None
    key = _repeated_key(line)
    return None if key is None else (key, _TWICE)


def ambiguous_records(
    lines: Sequence[str], records: Sequence[Any], parsed_by_json: Iterable[int] | None = None
) -> dict[int, tuple[str, str]]:
    """The records (by position) holding a lone surrogate (see
    :func:`_surrogate_problem`) or naming a key twice in one object, each with its
    ``(field, message)``. ``parsed_by_json``: the positions of the records the
    standard library parsed (the others came from a parser that refuses a lone
    surrogate); ``None``: all of them. The keys are counted for the whole block
    first (nearly always enough: see :func:`_keys_once`), then for the lines that
    differ."""
    found: dict[int, tuple[str, str]] = {}
    suspects = range(len(lines)) if parsed_by_json is None else parsed_by_json
    for k in [k for k in suspects if "\\u" in lines[k]]:
        problem = _surrogate_problem(lines[k], records[k]) if type(records[k]) is dict else None
        if problem is not None:
            found[k] = problem
    colons = list(map(str.count, lines, repeat(":")))
    counted = list(map(_counted_keys, records))
    if sum(colons) != sum(counted):
        for k in [k for k in range(len(lines)) if colons[k] != counted[k]]:
            if k in found or type(records[k]) is not dict:
                continue  # (not an object: reported as such)
            if _keys_once(lines[k], records[k], colons[k], counted[k]):
                continue
            key = _repeated_key(lines[k])
            if key is not None:
                found[k] = (key, _TWICE)
    return found


def parse_record(line: str) -> dict[str, Any]:
    """Parse one JSON line into a checked record dict (raises :class:`RecordError`),
    refusing a lone surrogate and a key given twice as the reader does."""
    try:
        record = json.loads(line, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise RecordError(None, f"invalid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise RecordError(None, "invalid JSON (nested too deeply)") from None
    if isinstance(record, dict):
        problem = _surrogate_problem(line, record) or _repeated_key_problem(line, record)
        if problem is not None:
            raise RecordError(*problem)
    check_record(record)
    return record


def execd_usage(record: dict[str, Any]) -> dict[str, Any]:
    """The execd usage container: ``usage.eusage`` (OCS >= 9.0.6) or ``usage.usage``."""
    usage = record.get("usage") or {}
    found = usage.get("eusage")
    if found is None:
        found = usage.get("usage")
    return found or {}


def dumps(record: dict[str, Any]) -> str:
    """One compact JSON line, as OCS writes it (non-ASCII characters kept)."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


def with_usage_key(record: dict[str, Any], key: str) -> dict[str, Any]:
    """A copy of ``record`` whose execd usage container is named ``key``
    (``"eusage"`` for OCS >= 9.0.6, ``"usage"`` before), keeping key order."""
    usage = record.get("usage")
    if not isinstance(usage, dict):
        return record
    other = "usage" if key == "eusage" else "eusage"
    if other not in usage:
        return record
    renamed = {(key if k == other else k): v for k, v in usage.items()}
    return {**record, "usage": renamed}
