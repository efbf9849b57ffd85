"""Writing workloads as SSS job objects.

``layout="group"`` (the default) writes one ``<JobGroup>`` document holding every
job; it is the lossless layout: reading it back gives the same header and the same
jobs, field for field, values of the same types (see :mod:`.mapping` for how). The
group carries schedlab's bookkeeping in ``<Extension type="schedlab"
awarenessPolicy="Ignore">`` elements written before the first job, so other SSS
implementations may skip them: ``origin`` (the epoch time of time 0), ``header``
(the workload header as JSON), ``memory`` (``processor`` when Memory is written per
processor, so the reader reads it so) and ``meta`` (the source's ``workload.meta``
entries that describe the source, not the read, as typed JSON, :mod:`.typed`: a
Slurm dump's columns and header line, a Google trace's machines and names ...).

``layout="jobs"`` writes a folder with one standalone ``<Job>`` document per job
(``job-<JobId>.xml``), for feeding SSS components one job object at a time. Those
documents hold the natural mapping only (absolute times, names, requested and
delivered amounts, dependencies, the kept SSS properties); values SSS cannot express
and the header are not written, so this layout is not lossless.

Output is deterministic: the same workload gives the same bytes. Every document
written validates against the XSD (tests check this with xmlschema).

Losses (:mod:`schedlab.losses`): the group layout has none, except header entries
the reader refuses (a numeric label such as ``MaxProcs`` that is not one integer in
range, or given twice with different values: possible after a lenient SWF read),
which are left out and reported (``header.LABEL``), values no JSON form gives
back (a set or an object in ``extras``: ``extras.KEY``; in ``workload.meta``:
``meta.KEY``), and an unknown origin (no ``UnixStartTime``): the DateTimes are then
written from 0 and would claim 1970 dates, reported in both layouts as
``header.UnixStartTime`` (schedlab reads the origin back as unknown); so is an
origin before 1970 in the group layout (SSS DateTimes are unsigned: they are
written from 0, and schedlab reads the real origin back from the ``header``
extension). Fractional
times are written as DateTimes rounded to whole seconds, each time on its own,
with the exact values in extensions (see :mod:`.mapping`). The jobs layout
checks each document by reading it back with the same mapping and the reader's
default options (Memory per job) and reports every field that would not come back
equal (a rounded time as rounded), every per-job extra it drops, every header label
and every free-text header comment (``header.comment``).
"""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import attrs
from schedlab.errors import FormatError, UsageError
from schedlab.io import open_output, strip_compression_suffix
from schedlab.losses import Losses, writer_losses
from schedlab.model import SWF_FIELDS, Header, Job, Workload
from schedlab.sim import TIMING_STATS

from . import typed as typed_json
from .context import DocumentContext
from .mapping import _UINT32_MAX, OVERRIDE_TYPE, RICH_FIELDS, JobDecoder, JobEncoder, _whole
from .values import READ_META, header_value_problems

LAYOUTS = ("group", "jobs")
_GROUP_PROPERTIES = ("JobGroupName", "JobGroupState", "Description", "CreationTime")


def _group_value(header: Header, read: dict[str, Any], tag: str) -> str | None:
    """A group property: the exact text of the SSS document the workload was read
    from (``meta["sss"]["group"]``) unless the header's ``SSS<tag>`` (one line, its
    blanks collapsed) now says something else; else the header's."""
    stored = header.get(f"SSS{tag}")
    exact = read.get(tag)
    if isinstance(exact, str) and (stored is None or " ".join(exact.split()) == stored):
        return exact
    return stored


def _read_group(meta: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The group properties and group Extensions of the SSS document the workload
    was read from (``meta["sss"]``), else empty."""
    sss = meta.get("sss")
    if not isinstance(sss, dict):
        return {}, []
    group = sss.get("group")
    extensions = sss.get("extensions")
    return (
        group if isinstance(group, dict) else {},
        extensions if isinstance(extensions, list) else [],
    )


def _group_id(header: Header, path: Path, given: str | None, read: dict[str, Any]) -> str:
    if given:
        return given
    stored = _group_value(header, read, "JobGroupId")
    if stored and stored.strip():
        return stored
    name = strip_compression_suffix(path.name)
    for suffix in (".sss.xml", ".xml", ".sss"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return name or "schedlab"


def _header_json(header: Header) -> str:
    entries = []
    for entry in header.entries:
        item: dict[str, Any] = {"label": entry.label, "value": entry.value}
        if entry.continuation:
            item["continuation"] = list(entry.continuation)
        if entry.lines is not None:
            item["lines"] = list(entry.lines)
        entries.append(item)
    return json.dumps(entries, ensure_ascii=False)


def _leaf(tag: str, text: str, attrib: dict[str, str] | None = None) -> str:
    elem = ET.Element(tag, attrib or {})
    elem.text = text
    return ET.tostring(elem, encoding="unicode")


def _written_header(header: Header, losses: Losses) -> Header:
    """``header`` without the entries the reader refuses (a numeric label that is
    not one integer in range, or a second value of one; the SWF header rules,
    :func:`.values.header_value_problems`), each reported as lost. Such entries
    come from a lenient SWF read (``header-value`` findings)."""
    entries = [{"label": e.label, "value": e.value} for e in header.entries]
    problems = header_value_problems(entries)
    if not problems:
        return header
    dropped = set()
    for index, label, what in problems:
        dropped.add(index - 1)
        losses.add(f"header.{label}", f"not written ({what}; the reader refuses it)")
    kept = header.copy()
    kept.entries = [e for i, e in enumerate(kept.entries) if i not in dropped]
    return kept


def _context(header: Header, memory: str, group: bool = True) -> DocumentContext:
    """The document context, its origin the header's ``UnixStartTime`` (``header``
    holds no entry the reader refuses, see :func:`_written_header`).

    SSS DateTimes are unsigned, and the reader takes an ``origin`` from 0 only: a
    group (``group``) whose ``UnixStartTime`` is before 1970 gets origin 0, so its
    DateTimes are seconds since time 0, not epoch times; the ``header`` extension
    keeps ``UnixStartTime``, so the same times and header are read back. A
    standalone Job document (``group=False``) has absolute times only: those
    before 1970 are not written (reported by the jobs layout's check)."""
    ctx = DocumentContext.from_header(header, memory_per=memory)
    origin = header.unix_start_time or 0
    ctx.origin = max(origin, 0) if group else origin
    return ctx


#: How an unknown origin is reported (as the Slurm and Grid Engine writers do).
_UNKNOWN_ORIGIN = "unknown, times written from 0 (1970-01-01)"
#: How jobs whose DateTimes would pass 2106 are reported in the group layout.
_PAST_2106 = (
    "no SubmissionTime/StartTime/EndTime written: past 2106-02-07 (SSS DateTimes are "
    "unsigned 32-bit epoch seconds); schedlab reads the times back from its extensions"
)
#: How an origin before 1970 is reported in the group layout (the DateTimes are
#: unsigned epoch seconds, so they cannot hold the real dates).
_ORIGIN_BEFORE_1970 = (
    "before 1970, DateTimes written from 0 (1970-01-01: SSS DateTimes are unsigned "
    "epoch seconds); schedlab reads the real origin back from the header extension"
)


def _invents_dates(header: Header, elem: ET.Element) -> bool:
    """Whether the job element ``elem`` holds a DateTime made up from origin 0: the
    header has no ``UnixStartTime`` (the origin is unknown) and a SubmissionTime
    was written (StartTime and EndTime follow from it; a StartTime kept from an SSS
    document without SubmissionTime is a real date)."""
    return header.unix_start_time is None and elem.find("SubmissionTime") is not None


def write(
    workload: Workload,
    path: str | os.PathLike[str],
    *,
    layout: str = "group",
    memory: str = "job",
    job_group_id: str | None = None,
) -> Losses:
    """Write ``workload`` to ``path`` as SSS XML.

    ``layout`` is ``"group"`` (one JobGroup document, lossless) or ``"jobs"`` (a
    folder of standalone Job documents). ``memory`` says whether Memory is written as
    the job's total (``"job"``: the model's per-processor kilobytes times the
    processors) or per processor. ``job_group_id`` names the group (default: the
    JobGroupId of the SSS document read, ``meta["sss"]["group"]``, or the header's
    ``SSSJobGroupId``, else the file name without suffixes). Returns what
    the documents could not hold (also reported to :func:`schedlab.collect_losses`).
    """
    if layout not in LAYOUTS:
        raise UsageError(f"writer sss: option layout={layout!r}: expected group or jobs")
    if memory not in ("job", "processor"):
        raise UsageError(f"writer sss: option memory={memory!r}: expected job or processor")
    target = Path(path)
    with writer_losses() as losses:
        if layout == "jobs":
            _write_jobs(workload, target, memory, losses)
        else:
            _write_group(workload, target, memory, job_group_id, losses)
    return losses


_NATURAL = "not written (layout=jobs holds the natural SSS mapping only; layout=group keeps it)"
_ROUNDED = "rounded to whole seconds (SSS DateTimes; layout=group keeps the exact value)"
#: The times a standalone Job document gives back rounded (each on its own).
_TIMES = ("submit_time", "wait_time", "run_time")


def _near(again: object, value: object) -> bool:
    """Whether ``again`` is ``value`` rounded to a whole second."""
    if not isinstance(again, (int, float)) or not isinstance(value, (int, float)):
        return False
    return abs(again - value) <= 0.5


def _note_natural(
    encoder: JobEncoder,
    elem: ET.Element,
    job: Job,
    position: int,
    losses: Losses,
    default: JobDecoder | None = None,
) -> None:
    """Count the fields of ``job`` that its standalone document does not give back
    when read with the reader's defaults (``default``: the decoder of the default
    memory mode, when the documents are written with another)."""
    back = encoder.decoder.decode(elem, position)
    plain = default.decode(elem, position) if default is not None else back
    for field in (*SWF_FIELDS, *RICH_FIELDS):
        value = getattr(job, field)
        again = getattr(back, field)
        if again != value:
            rounded = field in _TIMES and _near(again, value)
            losses.add(field, _ROUNDED if rounded else _NATURAL)
        elif getattr(plain, field) != value:
            losses.add(field, _PER_PROCESSOR)
    for key, value in job.extras.items():
        if back.extras.get(key) != value:
            losses.add(f"extras.{key}", _NATURAL)


def _write_group(
    workload: Workload, target: Path, memory: str, job_group_id: str | None, losses: Losses
) -> None:
    header = _written_header(workload.header, losses)
    ctx = _context(header, memory)
    encoder = JobEncoder(ctx)
    count = 0
    with open_output(target) as out:
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n<JobGroup>\n')
        read, read_extensions = _read_group(workload.meta)
        group_id = _group_id(header, target, job_group_id, read)
        out.write("  " + _leaf("JobGroupId", group_id) + "\n")
        for tag in _GROUP_PROPERTIES:
            value = _group_value(header, read, tag)
            if value is not None and (tag != "CreationTime" or value.strip().isdigit()):
                out.write("  " + _leaf(tag, value) + "\n")
        # The header's group Extensions (a document from elsewhere), else those of
        # the schedlab document read (its header extension does not list them).
        extensions = header.get_all("SSSExtension") or [
            json.dumps(ext, ensure_ascii=False) for ext in read_extensions
        ]
        for text in extensions:
            try:
                ext = json.loads(text)
                attrib = {"name": str(ext["name"])}
                if ext.get("type") is not None:
                    attrib["type"] = str(ext["type"])
                out.write("  " + _leaf("Extension", str(ext.get("value", "")), attrib) + "\n")
            except (ValueError, KeyError, TypeError):
                continue
        bookkeeping = {"type": OVERRIDE_TYPE, "awarenessPolicy": "Ignore"}
        origin = ctx.origin
        out.write(
            "  " + _leaf("Extension", json.dumps(origin), {**bookkeeping, "name": "origin"}) + "\n"
        )
        out.write(
            "  "
            + _leaf("Extension", _header_json(header), {**bookkeeping, "name": "header"})
            + "\n"
        )
        if memory != "job":
            out.write("  " + _leaf("Extension", memory, {**bookkeeping, "name": "memory"}) + "\n")
        meta = _meta_json(workload.meta, losses)
        if meta is not None:
            out.write("  " + _leaf("Extension", meta, {**bookkeeping, "name": "meta"}) + "\n")
        invented = shifted = False
        before_1970 = (header.unix_start_time or 0) < 0
        past_2106 = 0
        origin = encoder.ctx.origin
        for position, job in enumerate(workload, start=1):
            elem = encoder.encode(job, position)
            _note_approximated(encoder, losses)
            invented = invented or _invents_dates(header, elem)
            shifted = shifted or (before_1970 and elem.find("SubmissionTime") is not None)
            rel = _whole(job.submit_time)
            if rel is not None and origin + rel > _UINT32_MAX:
                past_2106 += 1
            ET.indent(elem, space="  ", level=1)
            out.write("  " + ET.tostring(elem, encoding="unicode") + "\n")
            count = position
        out.write("</JobGroup>\n")
    if invented:
        # The DateTimes claim 1970 dates the source never had (schedlab reads the
        # origin back as unknown from the header extension; other tools cannot).
        losses.add("header.UnixStartTime", _UNKNOWN_ORIGIN)
    losses.add("submit_time", _PAST_2106, past_2106)
    if shifted:
        # The DateTimes are seconds since time 0, not the dates of the source
        # (schedlab reads them back exactly; other SSS tools see 1970 dates).
        losses.add("header.UnixStartTime", _ORIGIN_BEFORE_1970)
    if not count:
        raise FormatError(
            "an SSS JobGroup must contain at least one Job; the workload is empty",
            source=str(target),
        )


def _meta_json(meta: dict[str, Any], losses: Losses) -> str | None:
    """The ``meta`` extension's text: the entries of ``workload.meta`` that describe
    the source (not :data:`.values.READ_META`) as typed JSON, so that writers which look
    at them (a Slurm dump's columns and header line, a Google trace's machines)
    treat the SSS copy as they treat the source; ``None`` when there are none. An
    entry JSON cannot hold (an object, a set) is left out and reported as
    ``meta.KEY``."""
    carried: dict[str, Any] = {}
    for key, value in meta.items():
        if key in READ_META:
            continue
        if not isinstance(key, str):
            losses.add(f"meta.{key}", "not written (the key is not text)")
            continue
        if key == "simulation" and isinstance(value, dict) and isinstance(value.get("stats"), dict):
            # the run's statistics without those measuring the machine: the same
            # schedule gives the same document on every run
            stats = {k: v for k, v in value["stats"].items() if k not in TIMING_STATS}
            value = {**value, "stats": stats}
        try:
            typed_json.encode(value)
        except TypeError as error:
            losses.add(f"meta.{key}", f"not written ({error})")
            continue
        carried[key] = value
    return typed_json.dumps(carried) if carried else None


def _note_approximated(encoder: JobEncoder, losses: Losses) -> None:
    """Report (and forget) the values of the last job that no JSON form gives back."""
    for field in encoder.approximated:
        losses.add(field, "written as the nearest JSON (a value JSON cannot hold, such as a set)")
    encoder.approximated.clear()


_PER_PROCESSOR = (
    "written per processor (memory=processor): a Job document cannot say so, and the "
    "reader divides it by the processors again unless read with -R memory=processor"
)


def _write_jobs(workload: Workload, target: Path, memory: str, losses: Losses) -> None:
    ctx = _context(_written_header(workload.header, Losses()), memory, group=False)
    encoder = JobEncoder(ctx)
    for label in workload.header.labels():
        losses.add(f"header.{label}", _NATURAL)
    comments = sum(1 for entry in workload.header.entries if entry.label is None)
    losses.add("header.comment", _NATURAL, comments)
    # The documents are checked as the reader reads them by default (memory=job).
    default = JobDecoder(attrs.evolve(ctx, memory_per="job")) if memory != "job" else None
    target.mkdir(parents=True, exist_ok=True)
    used: set[str] = set()
    invented = False
    for position, job in enumerate(workload, start=1):
        elem = encoder.encode(job, position, exact=False)
        _note_natural(encoder, elem, job, position, losses, default)
        invented = invented or _invents_dates(workload.header, elem)
        job_id = elem.findtext("JobId") or str(position)
        stem = "job-" + re.sub(r"[^A-Za-z0-9._-]", "_", job_id)
        if stem in used:
            stem = f"{stem}-{position}"
        used.add(stem)
        ET.indent(elem, space="  ")
        with open_output(target / f"{stem}.xml") as out:
            out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
            out.write(ET.tostring(elem, encoding="unicode") + "\n")
    if invented:
        losses.add("header.UnixStartTime", _UNKNOWN_ORIGIN)
