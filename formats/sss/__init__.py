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

_SPACE_RE = re.compile(rb"\s*")
_ROOT_RE = re.compile(rb"<(JobGroup|Job)[\s/>]")
_PROPERTY_RE = re.compile(rb"<(JobGroupId|JobId)[\s>]")
#: The prolog items skipped before the root: (start, end) of a processing
#: instruction (the XML declaration included), a comment and a document type
#: declaration without internal subset.
_PROLOG_ITEMS = ((b"<?", b"?>"), (b"<!--", b"-->"), (b"<!DOCTYPE", b">"))


def _root_at(head: bytes) -> int | None:
    """Where the root start tag of ``head`` begins once the prolog (a UTF-8 BOM,
    whitespace, processing instructions, comments, a DOCTYPE) is skipped, else
    ``None``. One pass over the bytes: a regular expression repeating the prolog
    items backtracked exponentially over a run of blank lines, instructions or
    comments followed by anything else (the fuzz audit's hang)."""
    pos = 3 if head.startswith(b"\xef\xbb\xbf") else 0
    while True:
        space = _SPACE_RE.match(head, pos)  # always matches (maybe nothing)
        pos = space.end() if space else pos
        for start, end in _PROLOG_ITEMS:
            if head.startswith(start, pos):
                close = head.find(end, pos + len(start))
                if close < 0:
                    return None
                pos = close + len(end)
                break
        else:
            return pos if _ROOT_RE.match(head, pos) else None


def _as_utf8(head: bytes) -> bytes:
    """``head`` as UTF-8 when it is a UTF-16 or UTF-32 document (told by its byte
    order mark or its zero bytes, as the reader tells it: XML 1.0 appendix F), else
    unchanged. A character cut at the end of ``head`` is dropped."""
    first = head[:4]
    if not (first[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in first):
        return head  # UTF-8 or a single-byte encoding: the common case, one test
    from .safexml import _wide_encoding

    found = _wide_encoding(first)
    if found is None:
        return head
    codec, bom = found
    width = 4 if codec.startswith("utf-32") else 2
    body = head[bom:]
    body = body[: len(body) - len(body) % width]
    return body.decode(codec, errors="replace").encode("utf-8")


def sniff(head: bytes, name: str = "") -> bool:
    """True when ``head`` starts an SSS job object: a ``JobGroup`` or ``Job`` root
    (after the XML declaration, comments and whitespace) with a ``JobGroupId`` or
    ``JobId`` element in the first bytes. UTF-16 and UTF-32 documents are decoded
    first. Linear in the size of ``head``."""
    head = _as_utf8(head)
    root = _root_at(head)
    return root is not None and _PROPERTY_RE.search(head, root) is not None


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
        "Memory amounts are per job or per processor (unless the document records it)",
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
        "write Memory per job (total) or per processor (recorded in a group document)",
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
