"""The one-line JSON layout of Open Cluster Scheduler (``accounting.jsonl``):
checking a parsed record, naming its execd usage container, writing it back.

The reader (:mod:`.reader`) parses lines itself, in bulk, and checks the types of
the values it maps; :func:`check_record` is the full check, used whenever a stored
record has to be rewritten or converted.
"""

from __future__ import annotations

import json
from typing import Any

from .colon import RecordError
from .names import JSON_INT_KEYS, JSON_STRING_KEYS

_REQUIRED = ("job_number", "submission_time", "start_time", "end_time")
_NUMBER = (int, float)


def check_record(record: Any) -> None:
    """Raise :class:`RecordError` if a parsed record has a value of the wrong type."""
    if not isinstance(record, dict):
        raise RecordError(None, f"expected a JSON object, got {type(record).__name__}")
    for key, value in record.items():
        if key in JSON_INT_KEYS:
            if isinstance(value, bool) or not isinstance(value, _NUMBER):
                raise RecordError(key, f"expected an integer, got {json.dumps(value)}")
            if isinstance(value, float) and not value.is_integer():
                raise RecordError(key, f"expected an integer, got {json.dumps(value)}")
        elif key in JSON_STRING_KEYS:
            if not isinstance(value, str):
                raise RecordError(key, f"expected a string, got {json.dumps(value)}")
        elif key == "usage":
            if not isinstance(value, dict):
                raise RecordError(key, f"expected an object, got {json.dumps(value)}")
            for name, container in value.items():
                if not isinstance(container, dict):
                    raise RecordError(
                        f"usage.{name}", f"expected an object, got {json.dumps(container)}"
                    )
                for item, number in container.items():
                    if isinstance(number, (dict, list, bool)) or number is None:
                        raise RecordError(
                            f"usage.{name}.{item}",
                            f"expected a number or string, got {json.dumps(number)}",
                        )
                    if name in ("rusage", "eusage", "usage") and not isinstance(number, _NUMBER):
                        raise RecordError(
                            f"usage.{name}.{item}", f"expected a number, got {json.dumps(number)}"
                        )
        elif isinstance(value, (dict, list)) or value is None:
            # Unknown keys are kept, but only with scalar values we can write back.
            raise RecordError(key, f"unexpected value type {json.dumps(value)[:40]}")
    for key in _REQUIRED:
        if key not in record:
            raise RecordError(key, "missing")


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
