"""The one-line JSON layout of Open Cluster Scheduler (``accounting.jsonl``).

Reading a record yields a *row*: the handful of values the mapping to the common
model needs, in a fixed order (see :data:`ROW_FIELDS`). Two paths produce rows:

* a fast path, one anchored regular expression that matches a record written the
  way OCS writes it (compact, keys in the documented order, the optional keys
  where OCS puts them, no custom usage containers); the values it captures are
  exactly what :func:`json.loads` would give;
* the reference path, :func:`json.loads` plus type checks, for every other line
  (other key orders, blanks, custom usage containers, reporting records ...).

Both paths are compared against each other on generated records in the tests.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .colon import RecordError
from .names import JSON_INT_KEYS, JSON_STRING_KEYS

#: The values of a row, in order.
ROW_FIELDS: tuple[str, ...] = (
    "job_number",
    "task_number",
    "submission_time",
    "start_time",
    "end_time",
    "failed",
    "exit_status",
    "slots",
    "cpu",
    "memory",
    "qname",
    "owner",
    "group",
    "category",
    "pe_taskid",
    "deleted_by",
    "submit_cmd_line",
)

_CHARS = r'[^"\\\x00-\x1f]*'
_ESCAPE = r'\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})'
_S = rf'"({_CHARS}(?:{_ESCAPE}{_CHARS})*)"'  # captured string (unrolled loop)
_SX = rf'"{_CHARS}(?:{_ESCAPE}{_CHARS})*"'  # skipped string
_I = r"(-?(?:0|[1-9]\d*))"
_IX = r"-?(?:0|[1-9]\d*)"
_N = r"(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?)"
_NX = r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?"

_RUSAGE = ",".join(
    f'"{k}":{_NX}'
    for k in (
        "ru_wallclock ru_utime ru_stime ru_maxrss ru_ixrss ru_ismrss ru_idrss ru_isrss "
        "ru_minflt ru_majflt ru_nswap ru_inblock ru_oublock ru_msgsnd ru_msgrcv "
        "ru_nsignals ru_nvcsw ru_nivcsw"
    ).split()
)

_FAST = re.compile(
    r"\{"
    rf'(?:"time":{_IX},"type":"acct",)?'
    rf'"job_number":{_I},"task_number":{_I},"start_time":{_I},"end_time":{_I},'
    rf'(?:"owner":{_S},)?(?:"group":{_S},)?(?:"account":{_SX},)?(?:"qname":{_S},)?'
    rf'(?:"hostname":{_SX},)?(?:"project":{_SX},)?(?:"department":{_SX},)?'
    rf'(?:"granted_pe":{_SX},)?"slots":{_I},(?:"arid":{_IX},)?(?:"job_name":{_SX},)?'
    rf'"priority":{_IX},"submission_time":{_I},(?:"submit_cmd_line":{_S},)?'
    rf'(?:"ar_submission_time":{_IX},)?(?:"pe_taskid":{_S},)?(?:"category":{_S},)?'
    rf'"failed":{_I},"exit_status":{_I},(?:"deleted_by":{_S},)?'
    rf'"usage":\{{"rusage":\{{{_RUSAGE}\}},"e?usage":\{{'
    rf'"wallclock":{_NX},"cpu":{_N},"mem":{_NX},"io":{_NX},(?:"ioops":{_NX},)?'
    rf'"iow":{_NX},"maxvmem":{_N},"maxrss":{_N}(?:,"maxpss":{_NX})?\}}\}}\}}'
)
# Group numbers of _FAST, in row order (pe_taskid, deleted_by, cmd line handled apart).
(
    _G_JOB,
    _G_TASK,
    _G_START,
    _G_END,
    _G_OWNER,
    _G_GROUP,
    _G_QNAME,
    _G_SLOTS,
    _G_SUB,
    _G_CMD,
    _G_PE,
    _G_CAT,
    _G_FAILED,
    _G_EXIT,
    _G_DELETED,
    _G_CPU,
    _G_VMEM,
    _G_RSS,
) = range(1, 19)


def _unescape(text: str | None) -> str | None:
    if text is None or "\\" not in text:
        return text
    return json.loads(f'"{text}"')


def fast_row(line: str, use_rss: bool) -> tuple | None:
    """The row of a record written the way OCS writes it, else ``None``.

    Numbers are returned as their JSON text (converted in bulk by the reader).
    """
    m = _FAST.fullmatch(line)
    if m is None:
        return None
    g = m.group
    category = g(_G_CAT)
    return (
        g(_G_JOB),
        g(_G_TASK),
        g(_G_SUB),
        g(_G_START),
        g(_G_END),
        g(_G_FAILED),
        g(_G_EXIT),
        g(_G_SLOTS),
        g(_G_CPU),
        g(_G_RSS) if use_rss else g(_G_VMEM),
        _unescape(g(_G_QNAME)) or "",
        _unescape(g(_G_OWNER)) or "",
        _unescape(g(_G_GROUP)) or "",
        "" if category is None else _unescape(category),
        _unescape(g(_G_PE)) or "",
        g(_G_DELETED) is not None,
        _unescape(g(_G_CMD)) or "",
    )


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
    check_record(record)
    return record


def execd_usage(record: dict[str, Any]) -> dict[str, Any]:
    """The execd usage container: ``usage.eusage`` (OCS >= 9.0.6) or ``usage.usage``."""
    usage = record.get("usage") or {}
    found = usage.get("eusage")
    if found is None:
        found = usage.get("usage")
    return found or {}


def record_row(record: dict[str, Any], use_rss: bool) -> tuple:
    """The row of a checked record dict (the reference for :func:`fast_row`)."""
    eusage = execd_usage(record)
    return (
        record["job_number"],
        record.get("task_number", 0),
        record["submission_time"],
        record["start_time"],
        record["end_time"],
        record.get("failed", 0),
        record.get("exit_status", 0),
        record.get("slots", 1),
        eusage.get("cpu", float("nan")),
        eusage.get("maxrss" if use_rss else "maxvmem", float("nan")),
        record.get("qname", ""),
        record.get("owner", ""),
        record.get("group", ""),
        record.get("category", ""),
        record.get("pe_taskid", ""),
        "deleted_by" in record,
        record.get("submit_cmd_line", ""),
    )


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
