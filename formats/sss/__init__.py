"""The ``sss`` plugin: the Scalable Systems Software (SSS) XML Job Object.

Reads and writes ``<JobGroup>`` and ``<Job>`` documents of the SSS Job Object
specification (draft 3.0.3/3.1.0), validated against the XSD schedlab ships
(``sss-job-object.xsd``, the first published one). Files are recognised by the
suffixes ``.sss.xml`` and ``.sss`` and, for any other name (``.xml``), by content:
the root element is ``<JobGroup>`` or ``<Job>`` (no namespace: the specification
defines none) and a ``<JobGroupId>`` or ``<JobId>`` follows.

See docs/formats/sss.md for the field mapping and every decision; :mod:`.reader`,
:mod:`.writer`, :mod:`.mapping`, :mod:`.schema`, :mod:`.checking`,
:mod:`.defaults`, :mod:`.safexml` and :mod:`.units` hold the code, imported only
when used.
"""

from __future__ import annotations

import re
from typing import Any

from schedlab import OptionSpec, ReaderSpec, WriterSpec, hookimpl

SUFFIXES = (".sss.xml", ".sss")

_PROLOG_RE = re.compile(
    rb"\A(?:\xef\xbb\xbf)?(?:\s+|<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>)*<(JobGroup|Job)[\s/>]",
    re.DOTALL,
)
_PROPERTY_RE = re.compile(rb"<(JobGroupId|JobId)[\s>]")


def sniff(head: bytes, name: str = "") -> bool:
    """True when ``head`` starts an SSS job object: a ``JobGroup`` or ``Job`` root
    (after the XML declaration, comments and whitespace) with a ``JobGroupId`` or
    ``JobId`` element in the first bytes."""
    match = _PROLOG_RE.match(head)
    if match is None:
        return False
    return _PROPERTY_RE.search(head, match.end()) is not None


def read(source: Any, **options: Any) -> Any:
    """Read an SSS document: see :func:`schedlab.formats.sss.reader.read`."""
    from .reader import read as read_sss

    return read_sss(source, **options)


def write(workload: Any, path: Any, **options: Any) -> None:
    """Write SSS XML: see :func:`schedlab.formats.sss.writer.write`."""
    from .writer import write as write_sss

    write_sss(workload, path, **options)


def _policy(text: str) -> str:
    value = text.strip().capitalize()
    if value not in ("Reject", "Warn", "Ignore"):
        raise ValueError("expected Reject, Warn or Ignore")
    return value


_UNITS = ("B", "KB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB", "NB", "DB")

READ_OPTIONS = (
    OptionSpec(
        "awareness",
        _policy,
        "Reject",
        "awarenessPolicy where the document states none: Reject, Warn or Ignore",
    ),
    OptionSpec(
        "validate",
        str,
        "fast",
        "fast (rules compiled from the XSD) or full (xmlschema on every job)",
        choices=("fast", "full"),
    ),
    OptionSpec("lenient", bool, False, "skip (count, report) invalid jobs"),
    OptionSpec(
        "memory",
        str,
        "job",
        "Memory amounts are per job or per processor",
        choices=("job", "processor"),
    ),
    OptionSpec(
        "default_unit", str, "MB", "unit of Memory/Disk/Swap without units=", choices=_UNITS
    ),
    OptionSpec("chunk_size", int, 10000, "jobs per chunk while streaming"),
)

WRITE_OPTIONS = (
    OptionSpec(
        "layout",
        str,
        "group",
        "group: one JobGroup document (lossless); jobs: a folder of Job documents",
        choices=("group", "jobs"),
    ),
    OptionSpec(
        "memory",
        str,
        "job",
        "write Memory per job (total) or per processor",
        choices=("job", "processor"),
    ),
    OptionSpec("job_group_id", str, None, "JobGroupId (default: header or file name)"),
)


@hookimpl
def schedlab_readers() -> list[ReaderSpec]:
    """The SSS Job Object reader."""
    return [
        ReaderSpec(
            name="sss",
            description="Scalable Systems Software XML Job Object (JobGroup or Job)",
            read=read,
            suffixes=SUFFIXES,
            sniff=sniff,
            options=READ_OPTIONS,
        )
    ]


@hookimpl
def schedlab_writers() -> list[WriterSpec]:
    """The SSS Job Object writer."""
    return [
        WriterSpec(
            name="sss",
            description="Scalable Systems Software XML Job Object (one JobGroup document)",
            write=write,
            suffixes=SUFFIXES,
            options=WRITE_OPTIONS,
        )
    ]
