"""The ``swf`` plugin: reader and writer for the Standard Workload Format 2.2.

The format of the Parallel Workloads Archive: ``;`` header comments, then one line
of 18 numbers per job (``-1`` = unknown). See docs/formats/swf.md for the field
table and every decision; :mod:`.reader`, :mod:`.writer`, :mod:`.header`,
:mod:`.parse` and :mod:`.validate` hold the code, imported only when used.
"""

from __future__ import annotations

from typing import Any

from schedlab import OptionSpec, ReaderSpec, WriterSpec, hookimpl


def read(source: Any, **options: Any) -> Any:
    """Read an SWF file: see :func:`schedlab.formats.swf.reader.read_swf`."""
    from .reader import read_swf

    return read_swf(source, **options)


def write(workload: Any, path: Any, **options: Any) -> None:
    """Write SWF: see :func:`schedlab.formats.swf.writer.write_swf`."""
    from .writer import write_swf

    write_swf(workload, path, **options)


def sniff(head: bytes, name: str) -> bool:
    """SWF content test: see :func:`schedlab.formats.swf.reader.sniff_swf`."""
    from .reader import sniff_swf

    return sniff_swf(head, name)


def _stream(text: str) -> bool | None:
    lowered = text.strip().lower()
    if lowered in {"", "auto", "none"}:
        return None
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ValueError("expected auto, yes or no")


READ_OPTIONS = (
    OptionSpec("lenient", bool, False, "skip (count, report) bad lines; keep columns past 18"),
    OptionSpec("summary_only", bool, False, "drop checkpoint/swap records (status 2, 3, 4)"),
    OptionSpec("validate", bool, True, "run the consistency checks (meta['findings'])"),
    OptionSpec("stream", _stream, None, "read chunk by chunk: auto (by size), yes or no"),
    OptionSpec(
        "workers", int, 0, "processes for the fast parser (0 = automatic, 1 or 2)", min=0, max=2
    ),
    OptionSpec("chunk_bytes", int, 16 << 20, "bytes of job lines per chunk when streaming"),
)

WRITE_OPTIONS = (
    OptionSpec("extra_columns", bool, False, "write columns kept beyond the 18th (non-standard)"),
    OptionSpec(
        "integer_times",
        bool,
        False,
        "whole seconds: submit rounded down, durations to nearest, requested time up "
        "(AccaSim drops records with fractional times)",
    ),
    OptionSpec(
        "integer_memory",
        bool,
        False,
        "memory in whole KB, rounded to nearest (AccaSim drops fractional values too)",
    ),
)


@hookimpl
def schedlab_readers() -> list[ReaderSpec]:
    """The SWF reader."""
    return [
        ReaderSpec(
            name="swf",
            description="Standard Workload Format 2.2 (Parallel Workloads Archive)",
            read=read,
            suffixes=(".swf",),
            sniff=sniff,
            options=READ_OPTIONS,
        )
    ]


@hookimpl
def schedlab_writers() -> list[WriterSpec]:
    """The SWF writer."""
    return [
        WriterSpec(
            name="swf",
            description="Standard Workload Format 2.2 (18 fields, -1 = unknown)",
            write=write,
            suffixes=(".swf",),
            options=WRITE_OPTIONS,
        )
    ]
