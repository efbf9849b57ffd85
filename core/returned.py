"""Checks of what a third-party reader or generator returned, made where it can still
be blamed (:func:`schedlab.api.read`): every numeric field of its jobs holds a
number or None, its columns are 1-d float arrays of one length, no submit time is
infinite. A streaming workload's chunks are checked as they are produced."""

from __future__ import annotations

import itertools
import math
import numbers
import operator
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .errors import PluginRuntimeError
from .model import SWF_FIELDS, Job, JobColumns, Workload
from .plugin_types import GeneratorSpec
from .registry import Registry

#: The Job attributes that hold numbers (or None): the 18 SWF fields and the
#: numeric rich fields.
_NUMERIC_FIELDS: tuple[str, ...] = (*SWF_FIELDS, "nodes", "exit_code", "priority")
_PLAIN_TYPES = frozenset({int, float, type(None)})


def _number_or_none(kind: type) -> bool:
    return kind in _PLAIN_TYPES or (issubclass(kind, numbers.Real) and kind is not bool)


def _bad_jobs(jobs: Sequence[Any], before: int = 0) -> str | None:
    """What is wrong with the first job of ``jobs`` that is no :class:`Job`, or has
    a numeric field that is neither a number nor None (``"soon"``, ``b"1"``,
    ``Decimal``: what would fail, or be silently taken for a number, later); None
    when all are fine (jobs are numbered from ``before + 1``). One pass of C-level
    iteration when all are plain numbers."""
    kinds = set(map(type, jobs))
    if not all(issubclass(kind, Job) for kind in kinds):
        for i, job in enumerate(jobs):
            if not isinstance(job, Job):
                return f"job {before + i + 1} is a {type(job).__name__}, not a Job"
    values = operator.attrgetter(*_NUMERIC_FIELDS)
    kinds = set(map(type, itertools.chain.from_iterable(map(values, jobs))))
    if all(_number_or_none(kind) for kind in kinds):
        return None
    bad = {kind for kind in kinds if not _number_or_none(kind)}
    found = []  # (job index, field position, value): the first bad value of each field
    for position, field in enumerate(_NUMERIC_FIELDS):
        value_of = operator.attrgetter(field)
        if bad.isdisjoint(map(type, map(value_of, jobs))):
            continue
        for i, value in enumerate(map(value_of, jobs)):
            if type(value) in bad:
                found.append((i, position, value))
                break
    i, position, value = min(found, key=lambda item: item[:2])
    return (
        f"job {before + i + 1}, field {_NUMERIC_FIELDS[position]}: expected a number or None, "
        f"got {value!r:.60} ({type(value).__name__})"
    )


def _infinite_submit(submit: np.ndarray, before: int) -> str | None:
    """What is wrong with the first infinite submit time of ``submit`` (jobs numbered
    from ``before + 1``), or None: a job submitted at -inf or +inf has no place in
    any schedule (it would never run, or break every time computed from it)."""
    with np.errstate(invalid="ignore"):
        bad = np.flatnonzero(np.isinf(submit))
    if not len(bad):
        return None
    i = int(bad[0])
    return (
        f"job {before + i + 1}, field submit_time: expected a finite time, got {float(submit[i])!r}"
    )


def _bad_columns(columns: JobColumns) -> str | None:
    """What is wrong with columns a reader built itself: a missing SWF field, an
    array that does not hold numbers, or arrays of different lengths."""
    data = getattr(columns, "data", None)
    if not isinstance(data, Mapping):
        return f"columns: a {type(data).__name__}, not a dict of arrays"
    lengths = set()
    for field in SWF_FIELDS:
        column = data.get(field)
        if column is None:
            return f"column {field} is missing"
        if not isinstance(column, np.ndarray) or column.ndim != 1 or column.dtype.kind != "f":
            what = getattr(column, "dtype", type(column).__name__)
            return f"column {field}: expected a 1-d array of floats, got {what}"
        lengths.add(len(column))
    if len(lengths) > 1:
        return f"columns of different lengths: {sorted(lengths)}"
    extras = columns.extras
    if extras is not None and len(extras) != lengths.pop():
        return f"extras: {len(extras)} entries for {len(columns)} jobs"
    return None


def _bad_chunk(chunk: object, before: int) -> str | None:
    if isinstance(chunk, JobColumns):
        return _bad_columns(chunk) or _infinite_submit(chunk.data["submit_time"], before)
    if isinstance(chunk, list):
        return _bad_jobs(chunk, before) or _infinite_jobs(chunk, before)
    return f"a chunk of jobs is a {type(chunk).__name__}, not JobColumns or a list of Jobs"


def _infinite_jobs(jobs: Sequence[Job], before: int = 0) -> str | None:
    """:func:`_infinite_submit` of Job objects (their fields already checked to be
    numbers or None)."""
    submit = np.fromiter(
        (math.nan if job.submit_time is None else job.submit_time for job in jobs),
        dtype=np.float64,
        count=len(jobs),
    )
    return _infinite_submit(submit, before)


def _value_error(registry: Registry, reader: Any, problem: str) -> Exception:
    """The error for a third-party ``reader`` (or generator) whose workload holds
    what ``problem`` says: a :class:`PluginRuntimeError` naming the component and
    its plugin, as for a reader returning something else than a Workload."""
    kind = "generator" if isinstance(reader, GeneratorSpec) else "reader"
    info = registry.plugin_of(reader)
    if info is None or info.builtin:
        return TypeError(f"{kind} {reader.name!r} returned a bad Workload: {problem}")
    return PluginRuntimeError(
        f"{kind} {reader.name!r} of {info.describe()} returned a bad Workload: {problem} "
        f"(a bug in that plugin: report it to its authors; "
        f"SCHEDLAB_BLOCK_PLUGINS={info.name} disables it)",
        plugin=info.name,
        distribution=info.distribution,
        version=info.version,
    )


def check_values(registry: Registry, reader: Any, workload: Workload) -> None:
    """Check what a third-party reader (or generator) returned, where it can still be
    blamed: its jobs' numeric fields hold numbers or None, its columns are arrays of
    numbers, no submit time is infinite (other out-of-range values are left to
    ``schedlab validate`` and the writers, which name the field and the job).
    A streaming workload's chunks are checked as they are produced. Schedlab's own
    readers are trusted (their tests check them; the check costs time)."""
    info = registry.plugin_of(reader)
    if info is None or info.builtin:
        return
    if workload.is_streaming:
        chunks = workload._chunks
        assert chunks is not None

        def checked() -> Iterator[Any]:
            with registry.blame(reader):
                produced = iter(chunks())
            before = 0
            while True:
                with registry.blame(reader):
                    chunk = next(produced, _END)
                if chunk is _END:
                    return
                problem = _bad_chunk(chunk, before)
                if problem is not None:
                    raise _value_error(registry, reader, problem)
                before += len(chunk)  # type: ignore[arg-type]
                yield chunk

        workload._chunks = checked
        return
    if workload.has_job_objects():
        problem = _bad_jobs(workload.jobs) or _infinite_jobs(workload.jobs)
    else:
        columns = workload.to_arrays()
        problem = _bad_columns(columns) or _infinite_submit(columns.data["submit_time"], 0)
    if problem is not None:
        raise _value_error(registry, reader, problem)


_END = object()
