"""Converting one SSS ``<Job>`` element to a :class:`~schedlab.model.Job` and back.

The field mapping is tabulated in ``docs/formats/sss.md``. In short:

* ``Requested`` Processors / WallDuration / Memory -> ``requested_processors`` /
  ``requested_time`` / ``requested_memory``; ``Delivered`` ones -> ``allocated_processors``
  / ``run_time`` / ``used_memory``, and ``Delivered/Processors@consumptionRate`` x its
  ``wallDuration`` (else the run time) -> ``average_cpu_time``. Only the first
  element of each name is mapped (a request with ``op`` NE, LT, GT or Match states no
  amount and is not); its other attributes (op, conj, group, preference, metric ...)
  are kept in ``extras["sss:attrs"][field]``; every other Requested/Delivered element
  is kept in ``extras["sss:Requested"]`` / ``extras["sss:Delivered"]``.
* An uncategorised Processors / WallDuration / Memory describes the job in its
  current phase: it is a request while the job has not started and a delivered
  amount afterwards (explicit categories win).
* Memory is a job total converted to kilobytes; the common model (SWF) holds
  kilobytes *per processor*, so it is divided by the processors of its category
  (option ``memory="processor"`` reads it as per-processor already).
* Names (UserId, GroupId, Executable, Queue, Partition) become numbers through the
  name tables of the :class:`~.context.DocumentContext`; names and ProjectId /
  AccountName inside Delivered (else Requested) count when the job level has none.
* DateTimes are epoch seconds; ``submit_time`` is relative to the document origin.
  They are whole seconds: the writer rounds the submit, wait and run times, each on
  its own (half to even), and adds the DateTimes up from them.
* Every other property is kept in ``extras``: simple ones as typed values under
  ``"sss:<Element>"``, structured ones (Environment, TaskGroup, Resource ...) as
  element dictionaries in ``extras["sss:elements"]``.

The writer checks each job it writes by converting the element back with the same
code; any field that would not come back identical (a fractional time, a negative
wait, an SWF status the SSS states cannot say, a think time ...) is written as an
``<Extension type="schedlab" name="FIELD">`` holding its exact JSON value, which the
reader applies last; a value plain JSON would change (a tuple, a dictionary keyed by
numbers) is written in typed JSON (:mod:`.typed`, ``type="schedlab.typed"``, or
``"schedlab.extras.typed"`` for an extra). So model -> SSS -> model is exact for
every field, values of the same types.
"""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET
from typing import Any

from schedlab.errors import FormatError
from schedlab.model import SWF_FIELDS, Dependency, Job, Task

from . import typed as typed_json
from .checking import CheckReport
from .context import NAME_KINDS, DocumentContext, table_name
from .schema import rules
from .units import to_kilobytes
from .values import MAX_BYTES, MAX_COUNT, MAX_EXACT, MAX_RATE, check_leaf

#: JobState (lower case) -> SWF status.
STATUS_OF_STATE = {
    "completed": 1,
    "failed": 0,
    "cancelled": 5,
    "canceled": 5,
    "removed": 5,
}
#: SWF status -> the JobState schedlab writes.
STATE_OF_STATUS = {
    1: "Completed",
    0: "Failed",
    5: "Cancelled",
    2: "Suspended",
    3: "Completed",
    4: "Failed",
}
#: States meaning the job has started (besides having a StartTime or a final state).
_STARTED_STATES = frozenset(
    {
        "running",
        "suspended",
        "completed",
        "failed",
        "cancelled",
        "canceled",
        "removed",
        "exiting",
        "vacated",
    }
)

DEPENDENCY_KINDS = {"OnSuccess": "success", "OnFailure": "failure", "OnExit": "exit"}
_DEPENDENCY_TYPES = {
    "success": "OnSuccess",
    "failure": "OnFailure",
    "exit": "OnExit",
    "end": "OnExit",
}

#: Rich Job attributes (beyond the 18 SWF fields) the writer guarantees.
RICH_FIELDS = (
    "name",
    "account",
    "nodes",
    "hosts",
    "exit_code",
    "priority",
    "tasks",
    "dependencies",
)

#: Extension types schedlab writes for its own bookkeeping.
OVERRIDE_TYPE = "schedlab"
EXTRAS_TYPE = "schedlab.extras"
#: The same in typed JSON (:mod:`.typed`), for values plain JSON does not give
#: back (tuples, dictionary keys that are not text).
TYPED_OVERRIDE_TYPE = "schedlab.typed"
TYPED_EXTRAS_TYPE = "schedlab.extras.typed"
_OVERRIDE_TYPES = frozenset({OVERRIDE_TYPE, TYPED_OVERRIDE_TYPE})
_EXTRAS_TYPES = frozenset({EXTRAS_TYPE, TYPED_EXTRAS_TYPE})

_MAPPED_CONSUMABLES = ("Processors", "WallDuration", "Memory")
#: Requests that do not state an amount (EQ, LE, GE are read as the amount).
_INEXACT_OPS = frozenset({"NE", "LT", "GT", "Match"})
#: Names and credentials also read from inside Delivered / Requested.
_CATEGORISED_NAMES = ("UserId", "GroupId", "Queue", "Partition", "ProjectId", "AccountName")
#: Job-level byte amounts kept in extras in kilobytes.
_BYTE_PROPERTIES = ("Disk", "Swap")
_BYTE_ATTRIBUTES = frozenset({"units", "awarenessPolicy"})
_INT_TYPES = frozenset({"IntegerValue", "DateTimeValue", "DurationValue"})
_UINT32_MAX = 4294967295
_SPACE_RE = re.compile(r"\s")
_XML_ILLEGAL = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

#: extras keys with a fixed meaning (not written back as simple properties).
_SPECIAL_KEYS = frozenset(
    {
        "sss:JobId",
        "sss:JobState",
        "sss:StartTime",
        "sss:EndTime",
        "sss:elements",
        "sss:Requested",
        "sss:Delivered",
        "sss:attrs",
    }
    | {f"sss:{tag}" for tag in NAME_KINDS}
)


# --------------------------------------------------------------------------- helpers


def _plain(elem: ET.Element) -> bool:
    """No attributes other than awarenessPolicy, no children."""
    attrib = elem.attrib
    return not len(elem) and (not attrib or (len(attrib) == 1 and "awarenessPolicy" in attrib))


def _kept_attributes(elem: ET.Element, *skip: str) -> dict[str, str]:
    if not elem.attrib:
        return {}
    return {k: v for k, v in elem.attrib.items() if k != "awarenessPolicy" and k not in skip}


def _first_plain(children: list[ET.Element], tag: str) -> ET.Element | None:
    """The first ``tag`` among ``children`` when it has no attributes (other than
    awarenessPolicy) and no children, else ``None``."""
    for child in children:
        if child.tag == tag:
            return child if _plain(child) else None
    return None


def categorised_name(job: ET.Element, tag: str) -> str | None:
    """The text of the ``tag`` inside ``job``'s Delivered (else Requested) elements
    that the decoder maps when the job level has none (see :class:`JobDecoder`)."""
    for container in ("Delivered", "Requested"):
        found = _first_plain([c for block in job.findall(container) for c in block], tag)
        if found is not None:
            return found.text or ""
    return None


def _suspended(value: object) -> bool:
    """True when a SuspendDuration (text or extras value) is a positive number."""
    try:
        return int(str(value).strip()) > 0 if value is not None else False
    except ValueError:
        return False


def _inexact(elem: ET.Element) -> bool:
    """True for a request qualified by an op that is not an amount or a bound."""
    return (elem.get("op") or "").strip() in _INEXACT_OPS


def _parse_float(text: str) -> float:
    text = text.strip()
    if text.endswith("INF"):
        return -math.inf if text.startswith("-") else math.inf
    return float(text)


def _parse_bool(text: str) -> bool:
    return text.strip() in ("true", "True", "1")


def _typed(text: str, type_name: str) -> Any:
    if type_name in _INT_TYPES:
        return int(text)
    if type_name == "FloatValue":
        return _parse_float(text)
    if type_name == "BooleanValue":
        return _parse_bool(text)
    return text


def to_node(elem: ET.Element) -> dict[str, Any]:
    """An element as a JSON-ready dict: ``tag``, and when present ``attrib``, ``text``,
    ``children`` (awarenessPolicy attributes are not kept: they direct reading)."""
    node: dict[str, Any] = {"tag": elem.tag}
    attrib = _kept_attributes(elem)
    if attrib:
        node["attrib"] = attrib
    if len(elem):
        node["children"] = [to_node(child) for child in elem]
    elif elem.text is not None:
        node["text"] = elem.text
    return node


def from_node(node: dict[str, Any]) -> ET.Element:
    """The element :func:`to_node` described."""
    elem = ET.Element(node["tag"], dict(node.get("attrib", {})))
    if "text" in node:
        elem.text = node["text"]
    for child in node.get("children", ()):
        elem.append(from_node(child))
    return elem


def format_number(value: float) -> str:
    """A number as XSD lexical text: integral values without a decimal point."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "INF" if value > 0 else "-INF"
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


def _integral(value: float | None, low: float = -math.inf, high: float = math.inf) -> int | None:
    """``value`` as an int if it is a whole number within bounds, else ``None``."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    number = int(value)
    return number if low <= number <= high else None


def _whole(value: float | None) -> int | None:
    """``value`` rounded to a whole number, half to even (``2.5`` -> 2, ``3.5`` -> 4),
    or ``None`` when unknown or not finite."""
    if value is None or isinstance(value, bool) or not math.isfinite(value):
        return None
    return round(value)


def _rounded(value: float | None, low: float, high: float) -> int | None:
    """``value`` rounded to a whole number (:func:`_whole`) if that is within bounds,
    else ``None``."""
    number = _whole(value)
    return number if number is not None and low <= number <= high else None


def _format_typed(value: Any, type_name: str) -> str | None:
    """Text for a typed extras value, or ``None`` if the type cannot hold it."""
    if type_name in _INT_TYPES:
        number = _integral(value) if isinstance(value, (int, float)) else None
        if number is None:
            return None
        if type_name != "IntegerValue" and not 0 <= number <= _UINT32_MAX:
            return None
        return str(number)
    if type_name == "FloatValue":
        return format_number(value) if isinstance(value, (int, float)) else None
    if type_name == "BooleanValue":
        return ("true" if value else "false") if isinstance(value, bool) else None
    return value if isinstance(value, str) else None


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalar
        return value.item()
    if isinstance(value, (tuple, set, frozenset)):
        return list(value)
    return str(value)


def _dump(value: Any) -> str:
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(value, default=_json_default, sort_keys=False, ensure_ascii=False)


def _encode_field(field: str, value: Any) -> Any:
    if field == "dependencies":
        return [
            {"job": d.job, "kind": d.kind, "code": d.code, "think_time": d.think_time}
            for d in value
        ]
    if field == "tasks":
        return [
            {
                "task_id": t.task_id,
                "start_time": t.start_time,
                "end_time": t.end_time,
                "processors": t.processors,
                "host": t.host,
                "status": t.status,
                "extras": t.extras,
            }
            for t in value
        ]
    if field == "hosts":
        return list(value)
    return value


def _decode_field(field: str, value: Any) -> Any:
    if field == "dependencies":
        return tuple(Dependency(**d) for d in value)
    if field == "tasks":
        return tuple(Task(**t) for t in value)
    if field == "hosts":
        return tuple(value)
    return value


# --------------------------------------------------------------------------- reading


class JobDecoder:
    """Converts checked ``<Job>`` elements (defaults already applied) to Jobs."""

    def __init__(self, ctx: DocumentContext, source: str = "<input>") -> None:
        self.ctx = ctx
        self.source = source
        job_rule = rules()["Job"]
        self.simple_types: dict[str, str] = {
            tag: rule.text.type_name
            for tag, rule in job_rule.children.items()
            if rule.text is not None
        }
        #: Memory amounts left unknown because their job gives no processor count
        #: (``memory="job"``), the jobs that have them, and the first such job.
        self.memory_unknown = 0
        self.memory_unknown_jobs = 0
        self.first_memory_unknown: int | None = None
        #: Simple properties read as text when they have no attributes.
        self.plain_simple = frozenset(self.simple_types) - {
            "Dependency",
            "Extension",
            *_MAPPED_CONSUMABLES,
            *_BYTE_PROPERTIES,
        }

    def decode(self, elem: ET.Element, position: int, path: str = "/Job") -> Job:
        """The Job described by ``elem``, the ``position``-th job (1-based) of its
        document."""
        try:
            return self._decode(elem, position)
        except (ValueError, TypeError, KeyError, OverflowError) as exc:
            raise FormatError(f"cannot convert job: {exc}", source=self.source, path=path) from None

    def _decode(self, elem: ET.Element, position: int) -> Job:
        ctx = self.ctx
        simple_types = self.simple_types
        simple: dict[str, str] = {}
        loose: dict[str, ET.Element] = {}
        byte_amounts: dict[str, ET.Element] = {}
        others: list[ET.Element] = []
        requested: list[ET.Element] = []
        delivered: list[ET.Element] = []
        dependencies: list[ET.Element] = []
        overrides: dict[str, tuple[str, bool]] = {}
        foreign: dict[str, tuple[str, bool]] = {}
        plain_simple = self.plain_simple
        for child in elem:
            tag = child.tag
            if tag in plain_simple and not child.attrib and tag not in simple:
                simple[tag] = child.text or ""
            elif tag == "Requested":
                requested.extend(child)
            elif tag == "Delivered":
                delivered.extend(child)
            elif tag == "Dependency":
                dependencies.append(child)
            elif tag in _MAPPED_CONSUMABLES and tag not in loose:
                loose[tag] = child
            elif (
                tag in _BYTE_PROPERTIES
                and tag not in byte_amounts
                and _BYTE_ATTRIBUTES.issuperset(child.attrib)
            ):
                byte_amounts[tag] = child
            elif tag == "Extension" and child.get("type") in _OVERRIDE_TYPES:
                typed = child.get("type") == TYPED_OVERRIDE_TYPE
                overrides[child.get("name", "")] = (child.text or "", typed)
            elif tag == "Extension" and child.get("type") in _EXTRAS_TYPES:
                typed = child.get("type") == TYPED_EXTRAS_TYPE
                foreign[child.get("name", "")] = (child.text or "", typed)
            elif tag in simple_types and tag not in simple and _plain(child):
                simple[tag] = child.text or ""
            else:
                others.append(child)

        # Credentials, Queue and Partition inside Delivered (else Requested) count
        # when the job level has none (the job level wins; the others are kept).
        account_given = "ProjectId" in simple or "AccountName" in simple
        for tag in _CATEGORISED_NAMES:
            if tag in simple or (account_given and tag in ("ProjectId", "AccountName")):
                continue
            for block in (delivered, requested):
                chosen = _first_plain(block, tag)
                if chosen is not None:
                    simple[tag] = chosen.text or ""
                    block.remove(chosen)
                    break

        extras: dict[str, Any] = {}
        attrs_kept: dict[str, dict[str, str]] = {}
        job = Job()

        job_id = simple.pop("JobId", "").strip()
        job.job_number = ctx.job_number(job_id, position)
        if job_id != str(job.job_number):
            extras["sss:JobId"] = job_id
        job.name = simple.pop("JobName", None)
        account = simple.pop("ProjectId", None)
        if account is None:
            account = simple.pop("AccountName", None)
        job.account = account
        for tag, (_label, attribute) in NAME_KINDS.items():
            text = simple.pop(tag, None)
            if text is None:
                continue
            # The exact text (xs:string keeps whitespace): " u " and "u" are two names.
            name = text
            setattr(job, attribute, ctx.tables[tag].number(name))
            if (not name or _SPACE_RE.search(name)) and table_name(name) != name:
                extras[f"sss:{tag}"] = name
        state = simple.pop("JobState", None)
        if state is not None:
            job.status = STATUS_OF_STATE.get(state.strip().lower())
            if job.status is None or STATE_OF_STATUS[job.status] != state:
                extras["sss:JobState"] = state
        if "ExitCode" in simple:
            job.exit_code = int(simple.pop("ExitCode"))
        if "Priority" in simple:
            job.priority = int(simple.pop("Priority"))
        if "NodeCount" in simple:
            job.nodes = int(simple.pop("NodeCount"))

        # Requested / Delivered: the first element of each mapped name.
        req: dict[str, ET.Element] = {}
        req_rest: list[ET.Element] = []
        for child in requested:
            if child.tag in _MAPPED_CONSUMABLES and child.tag not in req and not _inexact(child):
                req[child.tag] = child
            else:
                req_rest.append(child)
        dlv: dict[str, ET.Element] = {}
        dlv_rest: list[ET.Element] = []
        for child in delivered:
            tag = child.tag
            if tag not in dlv and (
                tag in _MAPPED_CONSUMABLES
                or (tag in ("StartTime", "EndTime") and _plain(child))
                or (
                    tag == "NodeList"
                    and not _kept_attributes(child)
                    and all(_plain(node) for node in child)
                )
            ):
                dlv[tag] = child
            else:
                dlv_rest.append(child)

        submission = int(simple.pop("SubmissionTime")) if "SubmissionTime" in simple else None
        # The job-level StartTime/EndTime wins; a Delivered one besides it is kept
        # (extras["sss:Delivered"]), as a second WallDuration is.
        start_text = simple.pop("StartTime", None)
        if "StartTime" in dlv:
            if start_text is None:
                start_text = dlv.pop("StartTime").text or ""
            else:
                dlv_rest.append(dlv.pop("StartTime"))
        start = int(start_text) if start_text is not None else None
        end_text = simple.pop("EndTime", None)
        if "EndTime" in dlv:
            if end_text is None:
                end_text = dlv.pop("EndTime").text or ""
            else:
                dlv_rest.append(dlv.pop("EndTime"))
        end = int(end_text) if end_text is not None else None

        started = (
            start is not None
            or job.status is not None
            or (state is not None and state.strip().lower() in _STARTED_STATES)
        )
        target = dlv if started else req
        for tag, element in loose.items():
            if tag not in target and not _inexact(element):
                target[tag] = element
            else:
                others.append(element)

        default_unit = ctx.default_unit
        per_job = ctx.memory_per == "job"
        given = req.get("Processors")
        if given is not None:
            job.requested_processors = int(given.text or "")
            kept = _kept_attributes(given)
            if kept:
                attrs_kept["requested_processors"] = kept
        given = req.get("WallDuration")
        if given is not None:
            job.requested_time = int(given.text or "")
            kept = _kept_attributes(given)
            if kept:
                attrs_kept["requested_time"] = kept
        given = dlv.get("WallDuration")
        if given is not None:
            job.run_time = int(given.text or "")
            kept = _kept_attributes(given)
            if kept:
                attrs_kept["run_time"] = kept
        elif start is not None and end is not None:
            job.run_time = end - start
        given = dlv.get("Processors")
        if given is not None:
            job.allocated_processors = int(given.text or "")
            rate = given.get("consumptionRate")
            # The rate is over the consumable's own wallDuration when it has one
            # (spec 5.1.7), else over the job's.
            used = given.get("wallDuration")
            duration = int(used) if used is not None else job.run_time
            if rate is not None and duration is not None:
                job.average_cpu_time = _parse_float(rate) * duration
                kept = _kept_attributes(given, "consumptionRate")
            else:
                kept = _kept_attributes(given)
            if kept:
                attrs_kept["allocated_processors"] = kept
        # Memory is the job's total: the model holds KB per processor, divided by the
        # count the simulator sizes the job by (requested, else delivered processors)
        # for the request, and by the delivered (else requested) count for the use.
        # Without any count the total cannot be divided: the field stays unknown and
        # the element is kept (and counted in ``memory_unknown``).
        requested_count = job.requested_processors or job.allocated_processors
        delivered_count = job.allocated_processors or job.requested_processors
        unknown = 0
        for field, found, procs, rest in (
            ("requested_memory", req, requested_count, req_rest),
            ("used_memory", dlv, delivered_count, dlv_rest),
        ):
            given = found.get("Memory")
            if given is None:
                continue
            if per_job and not procs:
                rest.append(given)
                unknown += 1
                continue
            kb = to_kilobytes(_parse_float(given.text or ""), given.get("units"), default_unit)
            setattr(job, field, kb / procs if per_job and procs else kb)
            kept = _kept_attributes(given, "units")
            if kept:
                attrs_kept[field] = kept
        if unknown:
            self.memory_unknown += unknown
            self.memory_unknown_jobs += 1
            if self.first_memory_unknown is None:
                self.first_memory_unknown = position
        given = dlv.get("NodeList")
        if given is not None:
            job.hosts = tuple(node.text or "" for node in given)

        origin = ctx.origin
        if submission is not None:
            job.submit_time = submission - origin
            if start is not None:
                job.wait_time = start - submission
        elif start is not None:
            extras["sss:StartTime"] = start
        if end is not None:
            derived = None
            if start is not None and job.run_time is not None:
                derived = start + job.run_time
            # A suspended job's EndTime is not StartTime + WallDuration (the running
            # time), so the writer derives none: the stated one is always kept.
            if derived != end or _suspended(simple.get("SuspendDuration")):
                extras["sss:EndTime"] = end

        deps = []
        for dep in dependencies:
            kind = DEPENDENCY_KINDS[dep.get("type", "OnSuccess").strip()]
            code = dep.get("code")
            deps.append(
                Dependency(
                    ctx.dependency_target((dep.text or "").strip()),
                    kind,
                    int(code) if code is not None else None,
                )
            )
        job.dependencies = tuple(deps)

        for tag, text in simple.items():
            extras[f"sss:{tag}"] = _typed(text, simple_types[tag])
        for tag, child in byte_amounts.items():
            extras[f"sss:{tag}"] = to_kilobytes(
                _parse_float(child.text or ""), child.get("units"), default_unit
            )
        if others:
            extras["sss:elements"] = [to_node(e) for e in others]
        if req_rest:
            extras["sss:Requested"] = [to_node(e) for e in req_rest]
        if dlv_rest:
            extras["sss:Delivered"] = [to_node(e) for e in dlv_rest]
        if attrs_kept:
            extras["sss:attrs"] = attrs_kept
        for key, (text, typed) in foreign.items():
            extras[key] = typed_json.loads(text, key) if typed else json.loads(text)
        job.extras = extras
        for field, (text, typed) in overrides.items():
            value = typed_json.loads(text, field) if typed else json.loads(text)
            if field == "extras":
                job.extras = value
            elif field in SWF_FIELDS or field in RICH_FIELDS:
                setattr(job, field, _decode_field(field, value))
        return job


# --------------------------------------------------------------------------- writing


def _total_memory(
    per_processor: float | None, counts: tuple[float | None, float | None], per_job: bool
) -> float | None:
    """The Memory amount written (KB, the job's total with ``per_job``), or ``None``
    when it cannot be written as the reader reads it: outside the range the reader
    accepts, or a total without a processor count to divide it by (the reader leaves
    such a Memory unknown). The count is the first of ``counts`` that is written as a
    Processors element, as the reader divides by it. The bookkeeping carries the
    value whenever the element is not written."""
    if per_processor is None or isinstance(per_processor, bool):
        return None
    procs = next((n for n in map(_written_count, counts) if n is not None), None)
    if per_job and procs is None:
        return None
    total = per_processor * procs if per_job and procs else per_processor
    if not math.isfinite(total) or not 0 <= total <= MAX_BYTES / 1024:
        return None
    return total


def _written_count(value: float | None) -> int | None:
    """A processor count as the writer writes it (a whole number in range), else
    ``None`` (not written)."""
    return _integral(value, 1, MAX_COUNT)


def _wall_duration(text: object) -> int | None:
    """A kept ``wallDuration`` attribute as the reader reads it, else ``None``."""
    try:
        return int(str(text))
    except ValueError:
        return None


def _in_range(tag: str, text: str) -> bool:
    """True when a simple property's text passes the reader's range checks."""
    probe = ET.Element(tag, {"units": "KB"} if tag in _BYTE_PROPERTIES else {})
    probe.text = text
    report = CheckReport()
    check_leaf(probe, tag, report, "KB")
    return not report.failed


def _check_text(text: str, job: Job, field: str) -> str:
    if _XML_ILLEGAL.search(text):
        raise FormatError(
            f"job {job.job_number}: {field} contains characters XML 1.0 cannot hold: {text[:40]!r}"
        )
    return text


class JobEncoder:
    """Converts Jobs to ``<Job>`` elements that read back to equal Jobs."""

    def __init__(self, ctx: DocumentContext, verify: bool = True) -> None:
        self.ctx = ctx
        self.verify = verify
        self.decoder = JobDecoder(ctx)
        self.simple_types = self.decoder.simple_types
        self._job_ids: dict[int, str] = {}
        #: Fields (``extras.KEY`` for an extra) of the jobs encoded so far whose
        #: value no JSON form gives back exactly (a set, an object): written as the
        #: nearest JSON, to be reported by the writer.
        self.approximated: list[str] = []

    def encode(self, job: Job, position: int, exact: bool = True) -> ET.Element:
        """The ``<Job>`` element for ``job`` (the ``position``-th, 1-based). With
        ``exact`` (the default), bookkeeping extensions make it read back equal."""
        elem = self._natural(job, position)
        if job.job_number is not None:
            job_id = elem[0].text or ""
            if job_id != str(job.job_number):
                self._job_ids[int(job.job_number)] = job_id
        if not exact:
            return elem
        back = self.decoder.decode(elem, position)
        for field in (*SWF_FIELDS, *RICH_FIELDS):
            value = getattr(job, field)
            if getattr(back, field) != value:
                self._keep(elem, field, _encode_field(field, value), field, extras=False)
        if back.extras != job.extras:
            own = {k: v for k, v in job.extras.items() if k.startswith("sss:")}
            if {k: v for k, v in back.extras.items() if k.startswith("sss:")} != own:
                self._keep(elem, "extras", job.extras, "extras", extras=False)
            else:
                for key, value in job.extras.items():
                    if not key.startswith("sss:"):
                        self._keep(elem, key, value, f"extras.{key}", extras=True)
        return elem

    def _keep(self, elem: ET.Element, name: str, value: Any, field: str, extras: bool) -> None:
        """Add the bookkeeping extension holding ``value``: plain JSON when that gives
        it back, else typed JSON (:mod:`.typed`), else (a value neither can hold,
        such as a set) plain JSON of its nearest form, with ``field`` recorded in
        :attr:`approximated`."""
        if typed_json.is_plain(value):
            kind, text = (EXTRAS_TYPE if extras else OVERRIDE_TYPE), _dump(value)
        else:
            try:
                text = typed_json.dumps(value)
                kind = TYPED_EXTRAS_TYPE if extras else TYPED_OVERRIDE_TYPE
            except TypeError:
                kind, text = (EXTRAS_TYPE if extras else OVERRIDE_TYPE), _dump(value)
                self.approximated.append(field)
        self._extension(elem, kind, name, text)

    @staticmethod
    def _extension(parent: ET.Element, kind: str, name: str, text: str) -> None:
        ext = ET.SubElement(parent, "Extension", {"type": kind, "name": name})
        ext.text = text

    def _natural(self, job: Job, position: int) -> ET.Element:
        ctx = self.ctx
        extras = job.extras
        elem = ET.Element("Job")

        def sub(parent: ET.Element, tag: str, text: str, attrib: dict | None = None) -> None:
            child = ET.SubElement(parent, tag, attrib or {})
            child.text = _check_text(text, job, tag)

        job_id = extras.get("sss:JobId")
        if not isinstance(job_id, str) or not job_id.strip():
            job_id = str(job.job_number) if job.job_number is not None else str(position)
        sub(elem, "JobId", job_id)
        if isinstance(job.name, str):
            sub(elem, "JobName", job.name)
        if isinstance(job.account, str):
            sub(elem, "ProjectId", job.account)
        for tag, (_label, attribute) in NAME_KINDS.items():
            number = _integral(getattr(job, attribute))
            if number is None:
                continue
            exact = extras.get(f"sss:{tag}")
            name = exact if isinstance(exact, str) else ctx.tables[tag].name(number)
            sub(elem, tag, name)
        state = extras.get("sss:JobState")
        if not isinstance(state, str):
            state = STATE_OF_STATUS.get(job.status) if job.status is not None else None
        if state is not None:
            sub(elem, "JobState", state)
        # Values outside the ranges the reader accepts (see .values) are not written
        # as elements; the bookkeeping extension carries them.
        for tag, value, low, high in (
            ("ExitCode", job.exit_code, -MAX_EXACT, MAX_EXACT),
            ("Priority", job.priority, -MAX_EXACT, MAX_EXACT),
            ("NodeCount", job.nodes, 1, MAX_COUNT),
        ):
            number = _integral(value, low, high)
            if number is not None:
                sub(elem, tag, str(number))

        # DateTimes are whole seconds (the XSD type): the submit, wait and run times
        # are each rounded on their own (half to even) and the DateTimes added up
        # from them, so End - Start is the WallDuration written; the exact values
        # go to the bookkeeping extension (written when they differ), which wins.
        origin = ctx.origin
        submission = start = None
        rel = _whole(job.submit_time)
        if rel is not None:
            submission = _rounded(origin + rel, 0, _UINT32_MAX)
        if submission is not None:
            sub(elem, "SubmissionTime", str(submission))
        # A job starts no earlier than it was submitted and ends no earlier than it
        # started (or was submitted): other times go to the bookkeeping extension.
        start_extra = extras.get("sss:StartTime")
        wait = _whole(job.wait_time)
        run = _whole(job.run_time)
        if isinstance(start_extra, int) and submission is None:
            start = _integral(start_extra, 0, _UINT32_MAX)
        elif submission is not None and wait is not None:
            start = _integral(submission + wait, submission, _UINT32_MAX)
        if start is not None:
            sub(elem, "StartTime", str(start))
        end_extra = extras.get("sss:EndTime")
        end = None
        earliest = start if start is not None else submission
        # WallDuration is the running time: with a suspension, EndTime is not
        # StartTime + run time, and a run time equal to End - Start was derived from
        # them (not a stated WallDuration), so neither is written.
        suspended = _suspended(extras.get("sss:SuspendDuration"))
        if isinstance(end_extra, int):
            end = _integral(end_extra, earliest or 0, _UINT32_MAX)
        elif start is not None and run is not None and not suspended:
            end = _integral(start + run, start, _UINT32_MAX)
        derived_run = (
            suspended
            and end is not None
            and start is not None
            and job.run_time is not None
            and start + job.run_time == end
        )
        if end is not None:
            sub(elem, "EndTime", str(end))

        simple_types = self.simple_types
        for key, value in extras.items():
            if not key.startswith("sss:") or key in _SPECIAL_KEYS:
                continue
            tag = key[4:]
            type_name = simple_types.get(tag)
            if type_name is None:
                continue
            text = _format_typed(value, type_name)
            if text is not None and _in_range(tag, text):
                sub(elem, tag, text, {"units": "KB"} if tag in _BYTE_PROPERTIES else None)

        kept = extras.get("sss:attrs") or {}
        per_job = ctx.memory_per == "job"

        def attributes(field: str, **extra: str) -> dict[str, str]:
            out = dict(kept.get(field, {})) if isinstance(kept, dict) else {}
            out.update(extra)
            return out

        requested = ET.Element("Requested")
        number = _integral(job.requested_processors, 1, MAX_COUNT)
        if number is not None:
            sub(requested, "Processors", str(number), attributes("requested_processors"))
        number = _integral(job.requested_time, 0, _UINT32_MAX)
        if number is not None:
            sub(requested, "WallDuration", str(number), attributes("requested_time"))
        total = _total_memory(
            job.requested_memory, (job.requested_processors, job.allocated_processors), per_job
        )
        if total is not None:
            sub(
                requested,
                "Memory",
                format_number(total),
                attributes("requested_memory", units="KB"),
            )
        for node in extras.get("sss:Requested") or ():
            requested.append(from_node(node))
        if len(requested):
            elem.append(requested)

        delivered = ET.Element("Delivered")
        number = _integral(job.allocated_processors, 1, MAX_COUNT)
        if number is not None:
            extra = {}
            used = attributes("allocated_processors").get("wallDuration")
            duration = _wall_duration(used) if used is not None else job.run_time
            if job.average_cpu_time is not None and duration:
                rate = job.average_cpu_time / duration
                if math.isfinite(rate) and 0 <= rate <= MAX_RATE:
                    extra["consumptionRate"] = format_number(rate)
            sub(delivered, "Processors", str(number), attributes("allocated_processors", **extra))
        number = _rounded(job.run_time, 0, _UINT32_MAX)
        if number is not None and not derived_run:
            sub(delivered, "WallDuration", str(number), attributes("run_time"))
        total = _total_memory(
            job.used_memory, (job.allocated_processors, job.requested_processors), per_job
        )
        if total is not None:
            sub(delivered, "Memory", format_number(total), attributes("used_memory", units="KB"))
        if job.hosts:
            node_list = ET.SubElement(delivered, "NodeList")
            for host in job.hosts:
                sub(node_list, "Node", str(host))
        for node in extras.get("sss:Delivered") or ():
            delivered.append(from_node(node))
        if len(delivered):
            elem.append(delivered)

        for dep in job.dependencies:
            kind = _DEPENDENCY_TYPES.get(dep.kind)
            if kind is None:
                continue
            attrib = {"type": kind}
            code = _integral(dep.code, -MAX_EXACT, MAX_EXACT)
            if dep.kind == "exit" and code is not None:
                attrib["code"] = str(code)
            target = dep.job
            if isinstance(target, int):
                target = self._job_ids.get(target, str(target))
            sub(elem, "Dependency", str(target), attrib)

        for node in extras.get("sss:elements") or ():
            elem.append(from_node(node))
        return elem
