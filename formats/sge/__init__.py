"""Grid Engine / Open Cluster Scheduler accounting files: plugin ``sge``.

Readers ``sge`` and ``sge-jsonl`` read both layouts (the colon-separated
``accounting`` file of SGE, Son of Grid Engine, Univa and OCS, and OCS 9's
``accounting.jsonl``), telling them apart by the first record; writers ``sge``
(colon, 45 fields, seconds) and ``sge-jsonl`` (JSONL) pick the layout. The field
mapping and every decision is documented in docs/formats/sge.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

from schedlab import OptionSpec, ReaderSpec, WriterSpec, hookimpl

_READ_OPTIONS = (
    OptionSpec("lenient", bool, False, "skip bad records and count them in meta['skipped']"),
    OptionSpec(
        "group",
        bool,
        True,
        "one job per job/task number and submission time (restarts, "
        "parallel tasks); false keeps every record as its own job",
    ),
    OptionSpec(
        "order", str, "submit", "job order: by submit time, or as in the file", ("submit", "file")
    ),
    OptionSpec(
        "job_numbers",
        str,
        "sequence",
        "SWF job numbers 1..N, or Grid Engine's",
        ("sequence", "sge"),
    ),
    OptionSpec("memory", str, "maxvmem", "usage value for used memory", ("maxvmem", "maxrss")),
    OptionSpec(
        "workers",
        int,
        0,
        "processes for a large plain file: 1, 2, or 0 = two from 32 MB on with two cores",
        (0, 1, 2),
    ),
)
_ORDER = OptionSpec(
    "order",
    str,
    "source",
    "record order: as in the source file when known, or job order",
    ("source", "workload"),
)

_COLON_HEAD = re.compile(
    r"[^:\n]*:[^:\n]*:[^:\n]*:[^:\n]*:[^:\n]*:\d+:[^:\n]*:-?\d+:\d+:\d+:\d+:-?\d+:-?\d+:"
)
_JSON_HEAD = re.compile(r'\{\s*"(?:job_number|time)"\s*:\s*\d+\s*,')


def _first_record_line(head: bytes) -> str | None:
    """The first line that is neither a comment nor (almost) empty."""
    text = head.decode("utf-8", errors="replace")
    for line in text.splitlines():
        if len(line.strip()) <= 1 or line.startswith("#"):
            continue
        return line
    return None


def sniff_colon(head: bytes, name: str = "") -> bool:
    """True if the first record is a colon accounting record: at least 43 fields
    with a numeric job number, submission/start/end times and failed/exit status."""
    line = _first_record_line(head)
    return line is not None and line.count(":") >= 42 and _COLON_HEAD.match(line) is not None


def sniff_jsonl(head: bytes, name: str = "") -> bool:
    """True if the first record is an OCS JSON accounting (or reporting) record: a
    JSON object with an integer ``job_number`` and either the accounting keys
    (``submission_time``, ``start_time``, ``end_time``) or ``time``/``type``."""
    line = _first_record_line(head)
    if line is None or not line.lstrip().startswith("{"):
        return False
    try:
        record: Any = json.loads(line)
    except RecursionError:
        return False
    except ValueError:
        # A first line longer than the sniffed head: judge by its start.
        return _JSON_HEAD.match(line.lstrip()) is not None and '"job_number"' in line
    if not isinstance(record, dict) or not isinstance(record.get("job_number"), int):
        return False
    accounting = all(k in record for k in ("submission_time", "start_time", "end_time"))
    reporting = isinstance(record.get("time"), int) and isinstance(record.get("type"), str)
    return accounting or reporting


def _read(source: Any, **options: Any) -> Any:
    from .reader import read_accounting

    return read_accounting(source, **options)


def _write_colon(workload: Any, path: Any, **options: Any) -> None:
    from .writer import write_accounting

    write_accounting(workload, path, layout="colon", **options)


def _write_jsonl(workload: Any, path: Any, **options: Any) -> None:
    from .writer import write_accounting

    write_accounting(workload, path, layout="jsonl", **options)


@hookimpl
def schedlab_readers() -> list[ReaderSpec]:
    """The two accounting readers (each reads both layouts)."""
    return [
        ReaderSpec(
            name="sge",
            description="Grid Engine / OCS accounting, colon layout (reads JSONL too)",
            read=_read,
            suffixes=("accounting",),
            sniff=sniff_colon,
            options=_READ_OPTIONS,
        ),
        ReaderSpec(
            name="sge-jsonl",
            description="Open Cluster Scheduler accounting.jsonl (reads the colon layout too)",
            read=_read,
            suffixes=("accounting.jsonl",),
            sniff=sniff_jsonl,
            options=_READ_OPTIONS,
        ),
    ]


@hookimpl
def schedlab_writers() -> list[WriterSpec]:
    """The colon writer ``sge`` and the JSONL writer ``sge-jsonl``."""
    return [
        WriterSpec(
            name="sge",
            description="Grid Engine accounting, colon layout (45 fields, seconds)",
            write=_write_colon,
            suffixes=("accounting",),
            options=(_ORDER,),
        ),
        WriterSpec(
            name="sge-jsonl",
            description="Open Cluster Scheduler accounting.jsonl (9.0.6+ layout by default)",
            write=_write_jsonl,
            suffixes=("accounting.jsonl",),
            options=(
                OptionSpec(
                    "usage_key",
                    str,
                    "keep",
                    "execd usage container: keep the source's (new records: eusage), "
                    "eusage (OCS >= 9.0.6) or usage (OCS 9.0.0-9.0.5)",
                    ("keep", "eusage", "usage"),
                ),
                _ORDER,
            ),
        ),
    ]


def record_fields(job: Any) -> list[dict[str, Any]]:
    """The source records of a job read by this plugin, as JSON-shaped dicts (keys
    and nesting of OCS's ``accounting.jsonl``; colon records are converted, times
    in microseconds), in file order: attempts and parallel tasks included.

    ``job`` is a :class:`~schedlab.model.Job` or its ``extras`` dict; a job without
    source records gives ``[]``.
    """
    from .colon import split_record, to_json_record
    from .jsonl import parse_record
    from .names import EXTRA_RECORD, EXTRA_RECORDS

    extras = job if isinstance(job, dict) else job.extras
    records = extras.get(EXTRA_RECORDS) or (
        (extras[EXTRA_RECORD],) if EXTRA_RECORD in extras else ()
    )
    return [
        parse_record(r) if r.startswith("{") else to_json_record(split_record(r)) for r in records
    ]
