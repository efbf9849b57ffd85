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
from collections.abc import Sequence
from itertools import chain, repeat
from typing import Any

from .colon import RecordError
from .mapping import JSON_MAPPED_KEYS
from .names import JSON_INT_KEYS, JSON_STRING_KEYS

_REQUIRED = ("job_number", "submission_time", "start_time", "end_time")
_NUMBER = (int, float)
#: The usage containers whose values must be numbers (custom ones, named after
#: ``reporting_params usage_patterns``, may hold strings too).
_NUMERIC_CONTAINERS = frozenset(("rusage", "eusage", "usage"))


def _shown(value: Any) -> str:
    """A JSON value for a message, at most about 60 characters."""
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(value)
        except (TypeError, ValueError, RecursionError):
            text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def key_problem(key: str, value: Any) -> tuple[str, str] | None:
    """``(field, message)`` if a record's top-level ``key`` holds a value of the
    wrong type, else ``None``: the integer keys an integer (a float only when
    integral), the string keys a string, ``usage`` an object of objects (the
    execd and rusage containers of numbers, custom ones of numbers or strings),
    any other key a scalar (kept, and written back)."""
    if key in JSON_INT_KEYS:
        if isinstance(value, bool) or not isinstance(value, _NUMBER):
            return key, f"expected an integer, got {_shown(value)}"
        if isinstance(value, float) and not value.is_integer():
            return key, f"expected an integer, got {_shown(value)}"
    elif key in JSON_STRING_KEYS:
        if not isinstance(value, str):
            return key, f"expected a string, got {_shown(value)}"
    elif key == "usage":
        if not isinstance(value, dict):
            return key, f"expected an object, got {_shown(value)}"
        for name, container in value.items():
            if not isinstance(container, dict):
                return f"usage.{name}", f"expected an object, got {_shown(container)}"
            numeric = name in _NUMERIC_CONTAINERS
            for item, number in container.items():
                if isinstance(number, (dict, list, bool)) or number is None:
                    what = "a number" if numeric else "a number or string"
                    return f"usage.{name}.{item}", f"expected {what}, got {_shown(number)}"
                if numeric and not isinstance(number, _NUMBER):
                    return f"usage.{name}.{item}", f"expected a number, got {_shown(number)}"
    elif isinstance(value, (dict, list)) or value is None:
        # Unknown keys are kept, but only with scalar values we can write back.
        return key, f"expected a string, number or boolean, got {_shown(value)}"
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
    if "usage" not in keys:
        return True
    usages = [u for u in map(dict.get, records, repeat("usage")) if u is not None]
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


def parse_record(line: str) -> dict[str, Any]:
    """Parse one JSON line into a checked record dict (raises :class:`RecordError`)."""
    try:
        record = json.loads(line, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise RecordError(None, f"invalid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise RecordError(None, "invalid JSON (nested too deeply)") from None
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
