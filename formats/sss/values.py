"""Range checks of the numbers the SSS mapping reads, and of schedlab's bookkeeping.

The XSD types say what a number looks like; they allow ``<Processors>-16</Processors>``
(an ``xs:integer``) or ``<Memory>INF</Memory>`` (an ``xs:double``). What a value
may be is decided here, with common sense where the specification is silent (see
docs/formats/sss.md, "Value ranges"):

* counts, ``Processors`` and ``NodeCount`` (job level, Requested, Delivered): whole
  numbers from 1 to :data:`MAX_COUNT`;
* sizes, ``Memory``, ``Disk`` and ``Swap``: finite, not negative, at most
  :data:`MAX_BYTES` bytes in their unit;
* ``consumptionRate`` (the delivered fraction of a processor): finite, 0 to
  :data:`MAX_RATE`;
* times: DateTime and Duration are unsigned 32-bit by the XSD already; in addition a
  job may not start before it was submitted nor end before it started or was
  submitted (so no wait or run time is negative);
* integers the mapping reads into the model (``ExitCode``, ``Priority``,
  Dependency ``code``): at most 2**53 - 1 in magnitude (:data:`MAX_EXACT`), the limit
  of every schedlab reader, so that a job read here can be written in any format;
* other integers kept in extras (``StartCount``, ``SuspendDuration``, ``SessionId``,
  ``ProcessId``): signed 64-bit; ``StartCount`` and ``SuspendDuration`` not
  negative; other doubles (``Charge``): finite.

Bookkeeping extensions (``<Extension type="schedlab">``) are schedlab's own: their
JSON must parse and have the type of the field they carry (:func:`decode_override`),
and the group's ``origin``, ``header``, ``memory`` and ``meta`` must have their
documented shape (:func:`decode_origin`, :func:`decode_header`,
:func:`decode_memory`, :func:`decode_meta`); ``type="schedlab.typed"`` and
``"schedlab.extras.typed"`` hold typed JSON (:mod:`.typed`). They carry model values verbatim
(e.g. the negative run time of an SWF trace), so they are type-checked, not
range-checked, except the ``origin`` (an epoch time from 0) and the numeric
entries of ``header``, held to the SWF header rules (:func:`header_value_problems`)
so that a document that reads converts to an SWF trace that reads back.

Every function here raises nothing but :class:`ValueError` (the caller turns it into
a problem naming the file, XML path and field).
"""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET
from typing import Any

from schedlab.formats.swf.header import header_problems
from schedlab.model import SWF_FIELDS, Dependency, Header, HeaderEntry, Task

from . import typed as typed_json
from .checking import CheckReport, Problem, shown
from .units import BYTE_UNITS

#: Largest processor or node count accepted (a 32-bit signed integer's maximum;
#: no machine has a thousandth of it).
MAX_COUNT = 2**31 - 1
#: Largest Memory, Disk or Swap accepted, in bytes (1 EiB, about a hundred times the
#: memory of the largest machine).
MAX_BYTES = 2**60
#: Largest ``consumptionRate`` accepted (a fraction of one processor; generous for
#: hardware threads and accounting noise).
MAX_RATE = 1024.0
#: Range of the integers the mapping keeps in extras.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: Largest magnitude of an integer the mapping reads into the model (``ExitCode``,
#: ``Priority``, Dependency ``code``): 2**53 - 1, the limit of every schedlab reader.
MAX_EXACT = 2**53 - 1
#: Largest magnitude of a number in a bookkeeping extension.
MAX_MAGNITUDE = 2**63 - 1

_COUNTS = ("Processors", "NodeCount")
_SIZES = ("Memory", "Disk", "Swap")
_NON_NEGATIVE_INTEGERS = frozenset({"StartCount", "SuspendDuration"})
_INTEGERS = frozenset({"SessionId", "ProcessId"})
#: Integers read into the model: within :data:`MAX_EXACT`.
_EXACT_INTEGERS = frozenset({"ExitCode", "Priority", "code"})
_FLOATS = frozenset({"Charge", "Network"})

#: Bookkeeping override fields whose values are whole numbers / numbers / text.
_INT_FIELDS = frozenset(
    {
        "job_number",
        "allocated_processors",
        "requested_processors",
        "status",
        "user_id",
        "group_id",
        "executable_number",
        "queue_number",
        "partition_number",
        "preceding_job_number",
        "nodes",
        "exit_code",
    }
)
_NUMBER_FIELDS = (frozenset(SWF_FIELDS) - _INT_FIELDS) | {"priority"}
_TEXT_FIELDS = frozenset({"name", "account"})
_TASK_KEYS = frozenset(attr.name for attr in Task.__attrs_attrs__)  # type: ignore[attr-defined]
_DEPENDENCY_KEYS = frozenset(attr.name for attr in Dependency.__attrs_attrs__)  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- elements


def _line(elem: ET.Element) -> int | None:
    return getattr(elem, "sourceline", None)


def _count(text: str) -> str | None:
    value = int(text)
    what = str(value) if len(text.strip()) <= 40 else shown(text)
    if value < 1:
        return f"{what} is not a count (at least 1)"
    if value > MAX_COUNT:
        return f"{what} is absurdly large (at most {MAX_COUNT})"
    return None


def _size(elem: ET.Element, default_unit: str) -> str | None:
    text = (elem.text or "").strip()
    amount = float(text) if not text.endswith("INF") else math.inf
    if not math.isfinite(amount):
        return f"{shown(text)} is not a finite size"
    if amount < 0:
        return f"{shown(text)} is negative"
    unit = (elem.get("units") or default_unit).strip()
    factor = BYTE_UNITS.get(unit, BYTE_UNITS.get(default_unit, 1))
    if amount * factor > MAX_BYTES:
        return f"{shown(text)} {unit} is absurdly large (at most 1 EiB)"
    return None


def _rate(text: str) -> str | None:
    text = text.strip()
    rate = float(text) if not text.endswith("INF") else math.inf
    if not math.isfinite(rate) or not 0 <= rate <= MAX_RATE:
        expected = f"expected a fraction of a processor from 0 to {MAX_RATE:g}"
        return f"consumptionRate={shown(text)}: {expected}"
    return None


def _integer(tag: str, text: str) -> str | None:
    value = int(text)
    if tag in _EXACT_INTEGERS:
        if abs(value) > MAX_EXACT:
            return (
                f"{shown(text)} is out of range (at most 2**53 - 1 in magnitude, "
                "the limit of every schedlab reader)"
            )
        return None
    if not INT64_MIN <= value <= INT64_MAX:
        return f"{shown(text)} does not fit a 64-bit integer"
    if tag in _NON_NEGATIVE_INTEGERS and value < 0:
        return f"{value} is negative"
    return None


def _finite(text: str) -> str | None:
    text = text.strip()
    value = float(text) if not text.endswith("INF") else math.inf
    if not math.isfinite(value):
        return f"{shown(text)} is not a finite number"
    return None


def check_values(elem: ET.Element, path: str, report: CheckReport, default_unit: str) -> None:
    """Add a problem to ``report`` for each value of ``elem`` (a ``Job`` or
    ``JobDefaults`` that passed the schema check) outside its range, and for each
    bookkeeping extension that does not decode."""
    times: dict[str, tuple[int, ET.Element]] = {}
    for child in elem:
        tag = child.tag
        if tag in ("Requested", "Delivered"):
            for item in child:
                check_leaf(item, f"{path}/{tag}/{item.tag}", report, default_unit)
                if tag == "Delivered" and item.tag in ("StartTime", "EndTime"):
                    times.setdefault(item.tag, (int(item.text or ""), item))
            continue
        if tag in ("SubmissionTime", "StartTime", "EndTime"):
            times[tag] = (int(child.text or ""), child)
            continue
        if tag == "Extension":
            kind = child.get("type")
            if kind in _BOOKKEEPING_KINDS:
                where = f"{path}/Extension[@name={child.get('name', '')!r}]"
                typed = kind.endswith(".typed")
                try:
                    if kind.startswith("schedlab.extras"):
                        _value(child.text or "", child.get("name", ""), typed)
                    else:
                        decode_override(child.get("name", ""), child.text or "", typed)
                except ValueError as error:
                    report.error(Problem(where, str(error), _line(child), "value"))
            continue
        if tag == "Dependency":
            code = child.get("code")
            if code is not None:
                try:
                    problem = _integer("code", code)
                except ValueError as error:
                    problem = str(error)
                if problem:
                    report.error(
                        Problem(f"{path}/Dependency", f"code={problem}", _line(child), "value")
                    )
            continue
        check_leaf(child, f"{path}/{tag}", report, default_unit)
    _check_times(times, path, report)


def check_leaf(child: ET.Element, path: str, report: CheckReport, default_unit: str) -> None:
    try:
        problem = _leaf_problem(child, default_unit)
    except ValueError as error:  # e.g. an integer of more digits than int() takes
        problem = f"{shown(child.text or '')}: {error}"
    if problem:
        report.error(Problem(path, problem, _line(child), "value"))


def _leaf_problem(child: ET.Element, default_unit: str) -> str | None:
    tag = child.tag
    problem = None
    if tag in _COUNTS:
        problem = _count(child.text or "")
        rate = child.get("consumptionRate")
        if problem is None and rate is not None:
            problem = _rate(rate)
    elif tag in _SIZES:
        problem = _size(child, default_unit)
    elif tag in _INTEGERS or tag in _EXACT_INTEGERS or tag in _NON_NEGATIVE_INTEGERS:
        problem = _integer(tag, child.text or "")
    elif tag in _FLOATS:
        problem = _finite(child.text or "")
    return problem


def _check_times(times: dict[str, tuple[int, ET.Element]], path: str, report: CheckReport) -> None:
    submission = times.get("SubmissionTime")
    start = times.get("StartTime")
    end = times.get("EndTime")
    if submission and start and start[0] < submission[0]:
        message = f"{start[0]} is before the SubmissionTime {submission[0]} (negative wait)"
        report.error(Problem(f"{path}/StartTime", message, _line(start[1]), "value"))
    if start and end and end[0] < start[0]:
        message = f"{end[0]} is before the StartTime {start[0]} (negative run time)"
        report.error(Problem(f"{path}/EndTime", message, _line(end[1]), "value"))
    elif submission and end and not start and end[0] < submission[0]:
        message = f"{end[0]} is before the SubmissionTime {submission[0]}"
        report.error(Problem(f"{path}/EndTime", message, _line(end[1]), "value"))


# --------------------------------------------------------------------------- bookkeeping


#: The ``type`` of the job-level bookkeeping extensions (see :mod:`.mapping`).
_BOOKKEEPING_KINDS = frozenset(
    {"schedlab", "schedlab.extras", "schedlab.typed", "schedlab.extras.typed"}
)


def _value(text: str, field: str, typed: bool) -> Any:
    """The value of a bookkeeping extension's JSON text (``typed``: typed JSON)."""
    return typed_json.loads(text, field) if typed else _json(text, field)


def _json(text: str, field: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise ValueError(f"{field}: not valid JSON ({error})") from None


def _number(value: Any, field: str, whole: bool = False) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{field}: expected a number or null, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{field}: {value} is not a finite number")
    if abs(value) > MAX_MAGNITUDE:
        raise ValueError(f"{field}: {value} is out of range")
    if whole and isinstance(value, float) and not value.is_integer():
        raise ValueError(f"{field}: expected a whole number, got {value}")


def _text(value: Any, field: str, optional: bool = True) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise ValueError(f"{field}: expected text, got {type(value).__name__}")


def _items(value: Any, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{field}: expected a list, got {type(value).__name__}")
    return value


def _mapping(value: Any, field: str, keys: frozenset[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{field}: expected an object, got {type(value).__name__}")
    unknown = set(value) - keys
    if unknown:
        raise ValueError(f"{field}: unknown key(s) {', '.join(sorted(map(repr, unknown)))}")
    return value


def decode_override(field: str, text: str, typed: bool = False) -> Any:
    """The model value of a ``<Extension type="schedlab" name=field>``: JSON of the
    field's type (typed JSON, :mod:`.typed`, for ``type="schedlab.typed"``:
    ``typed``). Raises :class:`ValueError` for an unknown field, bad JSON or a
    value of the wrong type (the caller names file and path)."""
    value = _value(text, field, typed)
    if field in _INT_FIELDS:
        _number(value, field, whole=True)
    elif field in _NUMBER_FIELDS:
        _number(value, field)
    elif field in _TEXT_FIELDS:
        _text(value, field)
    elif field == "hosts":
        for host in _items(value, field):
            _text(host, "hosts[]", optional=False)
    elif field == "dependencies":
        for item in _items(value, field):
            dep = _mapping(item, "dependencies[]", _DEPENDENCY_KEYS)
            if "job" not in dep:
                raise ValueError("dependencies[]: 'job' is missing")
            if not isinstance(dep["job"], str):
                _number(dep["job"], "dependencies[].job", whole=True)
                if dep["job"] is None:
                    raise ValueError("dependencies[].job: expected a job number or a JobId")
            _text(dep.get("kind", "end"), "dependencies[].kind", optional=False)
            _number(dep.get("code"), "dependencies[].code", whole=True)
            _number(dep.get("think_time"), "dependencies[].think_time")
    elif field == "tasks":
        for item in _items(value, field):
            task = _mapping(item, "tasks[]", _TASK_KEYS)
            if "task_id" not in task:
                raise ValueError("tasks[]: 'task_id' is missing")
            _text(task["task_id"], "tasks[].task_id", optional=False)
            for key in ("start_time", "end_time", "processors"):
                _number(task.get(key), f"tasks[].{key}")
            _number(task.get("status"), "tasks[].status", whole=True)
            _text(task.get("host"), "tasks[].host")
            if not isinstance(task.get("extras", {}), dict):
                raise ValueError("tasks[].extras: expected an object")
    elif field == "extras":
        if not isinstance(value, dict):
            raise ValueError(f"extras: expected an object, got {type(value).__name__}")
    else:
        raise ValueError(f"unknown bookkeeping field {field!r}")
    return value


def decode_origin(text: str) -> int | float:
    """The group's ``origin`` extension: the epoch second of time 0."""
    value = _json(text, "origin")
    _number(value, "origin")
    if value is None:
        raise ValueError("origin: expected a number, got null")
    if not 0 <= value < 2**53:
        raise ValueError(f"origin: {value} is not an epoch time")
    return value


#: ``workload.meta`` entries that describe a read, not its source (who read what,
#: what was skipped, found or counted): the reader of the document makes its own,
#: so the ``meta`` extension does not carry them.
READ_META = frozenset(
    {
        "reader",
        "source",
        "sss",
        "skipped",
        "skipped_by_reason",
        "rejects",
        "reject_reasons",
        "reject_position",
        "findings",
        "warnings",
        "warned",
        "ignored",
        "records",
        "jobs",
        "steps",
        "checked",
        "partial_records",
        "dropped_partial_records",
        "decode_errors",
        "unknown_states",
        "engine",
        "summary",
    }
)


#: The memory modes a group's ``memory`` extension may record.
MEMORY_MODES = ("job", "processor")


def decode_memory(text: str) -> str:
    """The group's ``memory`` extension: how its Memory amounts were written
    (``job`` totals or per ``processor``), which the reader then uses."""
    value = text.strip(" \t\n\r")
    if value not in MEMORY_MODES:
        raise ValueError(f"memory: expected job or processor, got {shown(value)}")
    return value


def decode_meta(text: str) -> dict[str, Any]:
    """The group's ``meta`` extension: the source's ``workload.meta`` entries the
    writer carried, as typed JSON of a dictionary keyed by text."""
    value = typed_json.loads(text, "meta")
    if not isinstance(value, dict):
        raise ValueError(f"meta: expected a dictionary, got {type(value).__name__}")
    for key in value:
        if not isinstance(key, str):
            raise ValueError(f"meta: expected text keys, got a {type(key).__name__}")
    return value


def header_value_problems(entries: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    """``(index, label, what)`` (``index`` 1-based) of every entry of a
    ``header`` extension that the SWF reader refuses: the numeric labels
    (``MaxProcs``, ``UnixStartTime`` ...) must be one integer in range, and a numeric
    label given twice must have the same value (the rules of
    :func:`~schedlab.formats.swf.header.header_problems`, docs/formats/swf.md,
    "Numeric header values")."""
    header = Header([HeaderEntry(e.get("label"), str(e.get("value", ""))) for e in entries])
    out = []
    for index, label, message in header_problems(header, range(len(header.entries))):
        detail = message.removeprefix(f"header {label}: ")
        detail = re.sub(r" on line ([0-9]+)\Z", r" in entry \1", detail)
        out.append((index, label, detail))
    return out


def decode_header(text: str) -> list[dict[str, Any]]:
    """The group's ``header`` extension: a list of header entries (objects with
    ``label`` (text or null), ``value`` (text), optional ``continuation`` and
    ``lines`` (lists of text))."""
    entries = _items(_json(text, "header"), "header")
    keys = frozenset({"label", "value", "continuation", "lines"})
    for entry in entries:
        item = _mapping(entry, "header[]", keys)
        _text(item.get("label"), "header[].label")
        _text(item.get("value", ""), "header[].value", optional=False)
        for key in ("continuation", "lines"):
            if item.get(key) is not None:
                for line in _items(item[key], f"header[].{key}"):
                    _text(line, f"header[].{key}[]", optional=False)
    problems = header_value_problems(entries)
    if problems:
        index, label, what = problems[0]
        raise ValueError(f"header: entry {index} ({label}): {what}")
    return entries
