"""Batsim's formats: plugin ``batsim``.

Reader and writer ``batsim`` for Batsim JSON workloads (``nb_res``, ``jobs``,
``profiles``; profile types in Batsim 4's and Batsim 5's spellings), and reader and
writer ``batsim-jobs`` for the jobs file Batsim writes after a run (``*_jobs.csv``,
both its older and its current column layout; the current one is written, which is
what evalys's ``JobSet.from_csv`` reads). docs/formats/batsim.md has the mapping
tables and every decision; :mod:`.workload` and :mod:`.jobs` hold the code,
imported only when used.
"""

from __future__ import annotations

import re
from typing import Any

from schedlab import OptionSpec, ReaderSpec, WriterSpec, hookimpl

_LENIENT = OptionSpec("lenient", bool, False, "skip bad jobs and count them in meta['skipped']")
_ORDER = OptionSpec(
    "order", str, "submit", "job order: by submit time, or as in the file", ("submit", "file")
)

_WORKLOAD_HEAD = re.compile(rb'"(?:jobs|profiles|nb_res)"\s*:')
_JOBS_HEAD = re.compile(r"^\ufeff?(?:job_id|jobID),(?:[A-Za-z_]+,)*submission_time(?:,|$)")


def sniff_workload(head: bytes, name: str = "") -> bool:
    """True for a JSON object whose first keys include ``jobs``, ``profiles`` or
    ``nb_res`` and that mentions the two others or ``subtime``."""
    text = head.lstrip()
    if not text.startswith(b"{"):
        return False
    keys = set(re.findall(rb'"(jobs|profiles|nb_res|subtime)"\s*:', text))
    return _WORKLOAD_HEAD.search(text) is not None and len(keys) >= 2


def sniff_jobs(head: bytes, name: str = "") -> bool:
    """True when the first line is a Batsim jobs header (``job_id`` or ``jobID``
    first, ``submission_time`` among the columns)."""
    first = head.split(b"\n", 1)[0].decode("utf-8", errors="replace").strip()
    return _JOBS_HEAD.match(first) is not None


def read_workload(source: Any, **options: Any) -> Any:
    """Read a Batsim workload: see :func:`schedlab.formats.batsim.workload.read_workload`."""
    from .workload import read_workload as read

    return read(source, **options)


def write_workload(workload: Any, path: Any, **options: Any) -> Any:
    """Write a Batsim workload: see :func:`schedlab.formats.batsim.workload.write_workload`."""
    from .workload import write_workload as write

    return write(workload, path, **options)


def read_jobs(source: Any, **options: Any) -> Any:
    """Read a Batsim jobs file: see :func:`schedlab.formats.batsim.jobs.read_jobs`."""
    from .jobs import read_jobs as read

    return read(source, **options)


def write_jobs(workload: Any, path: Any, **options: Any) -> Any:
    """Write a Batsim jobs file: see :func:`schedlab.formats.batsim.jobs.write_jobs`."""
    from .jobs import write_jobs as write

    return write(workload, path, **options)


@hookimpl
def schedlab_readers() -> list[ReaderSpec]:
    """Readers ``batsim`` (JSON workloads) and ``batsim-jobs`` (``jobs.csv``)."""
    return [
        ReaderSpec(
            name="batsim",
            description="Batsim JSON workload (profile types of Batsim 4 and 5)",
            read=read_workload,
            # by content only: ".json" is also the suffix of Google trace shards
            sniff=sniff_workload,
            options=(_LENIENT, _ORDER),
        ),
        ReaderSpec(
            name="batsim-jobs",
            description="Batsim's output jobs.csv (older and current columns)",
            read=read_jobs,
            suffixes=("jobs.csv",),
            sniff=sniff_jobs,
            options=(_LENIENT, _ORDER),
        ),
    ]


@hookimpl
def schedlab_writers() -> list[WriterSpec]:
    """Writers ``batsim`` and ``batsim-jobs``."""
    return [
        WriterSpec(
            name="batsim",
            description="Batsim JSON workload (delay profiles from run times)",
            write=write_workload,
            suffixes=(".json",),
            options=(
                OptionSpec(
                    "profile_types",
                    str,
                    "batsim5",
                    "spelling of profile types: Batsim 5 (DelayProfile ...) or 4 (delay ...)",
                    ("batsim5", "batsim4"),
                ),
            ),
        ),
        WriterSpec(
            name="batsim-jobs",
            description="Batsim's jobs.csv, current columns (what evalys reads)",
            write=write_jobs,
            suffixes=("jobs.csv",),
        ),
    ]
