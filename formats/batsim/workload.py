"""Batsim JSON workloads: reader and writer ``batsim``.

A workload is one JSON object: ``nb_res`` (machine size), ``jobs`` (``id``,
``subtime``, ``walltime``, ``res``, ``profile`` and any user field) and
``profiles`` (name -> ``{"type": ..., ...}``). Profile types are read in both
spellings (Batsim 4's ``delay``/``parallel``/... and Batsim 5's
``DelayProfile``/``ParallelTaskProfile``/...); the run time comes from delay
profiles (and sequences made only of delays). Everything without a place in
:class:`~schedlab.model.Job` is kept in ``extras`` (keys ``batsim.*``) so that
batsim -> batsim is lossless. See
docs/formats/batsim.md for the mapping table and the decisions.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, BinaryIO

from schedlab.errors import FormatError, UsageError
from schedlab.io import open_binary, open_output, source_name
from schedlab.losses import RICH_FIELDS, Losses, note_extras, note_fields, writer_losses
from schedlab.model import Header, Job, Workload

from .common import (
    EXTRA_ID,
    EXTRA_JOB_FIELDS,
    EXTRA_PROFILE,
    EXTRA_PROFILE_DEF,
    EXTRA_WALLTIME,
    EXTRA_WORKLOAD,
    number,
    plain,
    split_id,
)

#: Profile type spellings -> schedlab's kind name (Batsim 4's names).
PROFILE_KINDS: dict[str, str] = {
    "delay": "delay",
    "parallel": "parallel",
    "parallel_homogeneous": "parallel_homogeneous",
    "parallel_homogeneous_total": "parallel_homogeneous_total",
    "composed": "composed",
    "DelayProfile": "delay",
    "ParallelTaskProfile": "parallel",
    "ParallelTaskHomogeneousProfile": "parallel_homogeneous",
    "SequentialCompositionProfile": "composed",
}
#: Batsim 5's type per kind (a "total" homogeneous task is a homogeneous one whose
#: amounts are spread uniformly).
BATSIM5_TYPES = {
    "delay": "DelayProfile",
    "parallel": "ParallelTaskProfile",
    "parallel_homogeneous": "ParallelTaskHomogeneousProfile",
    "parallel_homogeneous_total": "ParallelTaskHomogeneousProfile",
    "composed": "SequentialCompositionProfile",
}
#: Batsim 5's ``generation_strategy`` of homogeneous parallel tasks.
STRATEGY = "generation_strategy"
SPREAD = "DefinedAmountsSpreadUniformly"
PER_VALUE = "DefinedAmountsUsedForEachValue"
#: The write option's values.
SPELLINGS = ("batsim5", "batsim4")
#: The header label keeping top-level keys other than nb_res/jobs/profiles and
#: profiles no job uses (a JSON object), for lossless round trips.
HEADER_LABEL = "Batsim"

_KNOWN_JOB_KEYS = ("id", "subtime", "walltime", "res", "profile")
#: SWF fields Batsim has no place for (reported as losses when known).
_NOT_CARRIED = (
    "wait_time",
    "allocated_processors",
    "average_cpu_time",
    "used_memory",
    "requested_memory",
    "status",
    "user_id",
    "group_id",
    "executable_number",
    "queue_number",
    "partition_number",
    "preceding_job_number",
    "think_time",
)


def profile_kind(profile: dict[str, Any]) -> str | None:
    """schedlab's kind (``delay``, ``parallel``, ``parallel_homogeneous_total`` ...) of
    a profile, ``None`` when its type is not one of the nine known spellings. A
    Batsim 5 homogeneous task with ``generation_strategy``
    ``DefinedAmountsSpreadUniformly`` is Batsim 4's ``parallel_homogeneous_total``."""
    kind = PROFILE_KINDS.get(str(profile.get("type")))
    if kind == "parallel_homogeneous" and profile.get(STRATEGY) == SPREAD:
        return "parallel_homogeneous_total"
    return kind


def spelling_of(profile: dict[str, Any]) -> str | None:
    """``batsim5`` or ``batsim4`` for a known profile type, ``None`` otherwise."""
    kind_type = str(profile.get("type"))
    if kind_type not in PROFILE_KINDS:
        return None
    return "batsim5" if kind_type in BATSIM5_TYPES.values() else "batsim4"


def respell(profile: dict[str, Any], spelling: str) -> dict[str, Any]:
    """``profile`` with its type in ``spelling`` (every other field kept); profiles of
    unknown types, and those already in ``spelling``, are returned unchanged.

    Batsim 4 -> 5: ``parallel_homogeneous_total`` becomes
    ``ParallelTaskHomogeneousProfile`` with ``generation_strategy``
    ``DefinedAmountsSpreadUniformly``. Batsim 5 -> 4: the strategy picks
    ``parallel_homogeneous_total`` or ``parallel_homogeneous`` and is dropped.
    """
    current = spelling_of(profile)
    kind = profile_kind(profile)
    if current is None or kind is None or current == spelling:
        return profile
    out = dict(profile)
    if spelling == "batsim5":
        out["type"] = BATSIM5_TYPES[kind]
        if kind == "parallel_homogeneous_total":
            out[STRATEGY] = SPREAD
    else:
        out["type"] = kind
        if kind.startswith("parallel_homogeneous"):
            out.pop(STRATEGY, None)
    return out


def profile_run_time(name: str, profiles: dict[str, Any]) -> float | None:
    """The run time a profile fixes: a delay's ``delay``; a sequence made only of
    delays (at any depth): ``repeat`` times the sum of its parts. ``None`` for any
    profile whose duration depends on the platform (parallel tasks, traces ...)."""

    def walk(current: str, seen: tuple[str, ...]) -> float | None:
        profile = profiles.get(current)
        if not isinstance(profile, dict) or current in seen:
            return None
        kind = profile_kind(profile)
        if kind == "delay":
            value = profile.get("delay")
            return float(value) if isinstance(value, (int, float)) else None
        if kind != "composed":
            return None
        seq = profile.get("seq")
        repeat = profile.get("repeat", 1)
        if not isinstance(seq, list) or not isinstance(repeat, int) or isinstance(repeat, bool):
            return None
        total = 0.0
        for part in seq:
            if not isinstance(part, str):
                return None
            value = walk(part, (*seen, current))
            if value is None:
                return None
            total += value
        return total * repeat

    return walk(name, ())


def _non_finite(value: Any, path: str = "") -> tuple[str, float] | None:
    """The path (``key``, ``key[2].sub``) and value of the first NaN or infinity in
    a JSON value (Python's parser accepts them; they are not JSON), else ``None``."""
    if isinstance(value, float) and not math.isfinite(value):
        return path, value
    if isinstance(value, dict):
        for key, item in value.items():
            found = _non_finite(item, f"{path}.{key}" if path else str(key))
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _non_finite(item, f"{path}[{index}]")
            if found:
                return found
    return None


def _check_finite(value: Any, fail: Any) -> None:
    """Raise ``fail(message, field)`` for the first NaN or infinity in ``value``."""
    found = _non_finite(value)
    if found is not None:
        raise fail(f"expected a finite number, got {found[1]!r}", found[0])


def _load(source: Any, name: str) -> Any:
    fh: BinaryIO = open_binary(source, normalize=True, name=name)
    try:
        data = fh.read()
    finally:
        if isinstance(source, (str, os.PathLike)):
            fh.close()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 text (byte {exc.start})", source=name) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(
            f"not JSON: {exc.msg} (column {exc.colno})", source=name, line=exc.lineno
        ) from None
    except RecursionError:
        raise FormatError("not JSON: nested too deeply", source=name) from None


def _references(profile: dict[str, Any], known: Mapping[str, Any]) -> list[str]:
    """Names of other profiles a profile refers to (a composed profile's sequence):
    every string, or string in a list, that is a key of ``known``."""
    found: list[str] = []
    for key, value in profile.items():
        if key == "type":
            continue
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, str) and item in known and item not in found:
                found.append(item)
    return found


def _closure(name: str, profiles: dict[str, Any]) -> dict[str, Any]:
    """The profile ``name`` and every profile it refers to, transitively."""
    out: dict[str, Any] = {}
    todo = [name]
    while todo:
        current = todo.pop()
        if current in out:
            continue
        out[current] = profiles[current]
        todo.extend(_references(profiles[current], profiles))
    return out


class _Skip(Exception):
    """A job that cannot be read (lenient mode: skipped and counted)."""

    def __init__(self, error: FormatError) -> None:
        super().__init__(str(error))
        self.error = error


def _check_profiles(profiles: dict[str, Any], name: str) -> None:
    for pname, profile in profiles.items():

        def pfail(what: str, _p: str = pname, field: str = "type") -> FormatError:
            return FormatError(what, source=name, path=f"profiles.{_p}", field=field)

        if not isinstance(profile, dict):
            raise pfail(f"expected an object, got {type(profile).__name__}", field="")
        if not isinstance(profile.get("type"), str):
            raise pfail("missing" if "type" not in profile else "expected a string")
        _check_finite(profile, lambda what, field, _p=pname: pfail(what, _p, field))
        kind = profile_kind(profile)
        if kind == "delay":
            number(profile.get("delay"), source=name, where=f"profiles.{pname}", field="delay")
        elif kind == "composed":
            seq = profile.get("seq")
            if not isinstance(seq, list) or not all(isinstance(x, str) for x in seq):
                raise pfail("expected a list of profile names", field="seq")
            for part in seq:
                if part not in profiles:
                    raise pfail(f"profile {part!r} is not defined in profiles", field="seq")
            if "repeat" in profile:
                number(
                    profile["repeat"],
                    source=name,
                    where=f"profiles.{pname}",
                    field="repeat",
                    minimum=1,
                    integer=True,
                )


def _job(
    raw: Any, index: int, name: str, profiles: dict[str, Any], run_times: dict[str, Any]
) -> tuple[Job, dict[str, Any]]:
    """One job of the ``jobs`` list, and the profiles it uses (by name)."""
    where = f"jobs[{index}]"
    if isinstance(raw, dict) and isinstance(raw.get("id"), (int, str)):
        where += f" (id {raw['id']!r})"

    def fail(what: str, field: str) -> _Skip:
        return _Skip(FormatError(what, source=name, path=where, field=field or None))

    def num(key: str, **kw: Any) -> float | int:
        try:
            return number(raw[key], source=name, where=where, field=key, **kw)
        except FormatError as exc:
            raise _Skip(exc) from None

    if not isinstance(raw, dict):
        raise fail(f"expected an object, got {type(raw).__name__}", "")
    for key in ("id", "subtime", "res", "profile"):
        if key not in raw:
            raise fail("missing", key)
    job_id = raw["id"]
    if not isinstance(job_id, (int, str)) or isinstance(job_id, bool):
        raise fail(f"expected a string or an integer, got {job_id!r}", "id")
    workload_name, job_number = split_id(job_id)
    subtime = num("subtime", minimum=None)
    res = num("res", minimum=1, integer=True)
    extras: dict[str, Any] = {}
    if not (isinstance(job_id, int) and job_id == job_number):
        extras[EXTRA_ID] = job_id
    if workload_name is not None:
        extras[EXTRA_WORKLOAD] = workload_name
    requested_time: float | None = None
    if "walltime" in raw:
        wall = num("walltime", minimum=None)
        if wall == -1:  # Batsim's "no walltime"
            extras[EXTRA_WALLTIME] = -1
        elif wall < 0:
            raise fail(f"expected a number >= 0 (or -1: none), got {wall!r}", "walltime")
        else:
            requested_time = float(wall)
    pname = raw["profile"]
    if not isinstance(pname, str):
        raise fail(f"expected a profile name, got {pname!r}", "profile")
    if pname not in profiles:
        raise fail(f"profile {pname!r} is not defined in profiles", "profile")
    if pname not in run_times:
        run_times[pname] = (profile_run_time(pname, profiles), _closure(pname, profiles))
    run_time, used = run_times[pname]
    extras[EXTRA_PROFILE] = pname
    extras[EXTRA_PROFILE_DEF] = used
    others = {k: v for k, v in raw.items() if k not in _KNOWN_JOB_KEYS}
    if others:
        _check_finite(others, lambda what, field: fail(what, field).error)
        extras[EXTRA_JOB_FIELDS] = others
    job = Job(
        job_number=job_number,
        submit_time=float(subtime),
        run_time=run_time,
        requested_processors=int(res),
        requested_time=requested_time,
        extras=extras,
    )
    return job, used


def read_workload(source: Any, lenient: bool = False, order: str = "submit") -> Workload:
    """Read a Batsim JSON workload (plain or compressed).

    Raises :class:`FormatError` naming the file, the job (``jobs[i]`` and its id) or
    profile and the field for anything that does not follow the format: bad JSON
    (with its line), a missing ``id``/``subtime``/``res``/``profile``, a wrong type,
    negative or non-finite numbers, a profile that is not defined or has no
    ``type``. ``lenient=True`` skips bad jobs instead, counted in
    ``meta["skipped"]`` (``meta["rejects"]``: ``(index, job as JSON)``,
    ``meta["reject_reasons"]``: the messages); errors in the profiles or the
    document itself are always fatal. Jobs are sorted by submit time (stable:
    ties keep the file order) unless ``order="file"``.
    """
    if order not in ("submit", "file"):
        raise FormatError(f"order must be 'submit' or 'file', got {order!r}")
    name = source_name(source)
    doc = _load(source, name)
    if not isinstance(doc, dict):
        raise FormatError(f"expected a JSON object, got {type(doc).__name__}", source=name)
    jobs_raw = doc.get("jobs")
    if not isinstance(jobs_raw, list):
        raise FormatError(
            "expected a list of jobs" if "jobs" in doc else "missing", source=name, field="jobs"
        )
    profiles = doc.get("profiles", {})
    if not isinstance(profiles, dict):
        raise FormatError("expected an object", source=name, field="profiles")
    _check_profiles(profiles, name)

    header = Header()
    nb_res = doc.get("nb_res")
    if nb_res is not None:
        header.set(
            "MaxProcs",
            number(nb_res, source=name, where="nb_res", field="nb_res", minimum=1, integer=True),
        )
    rest = {k: v for k, v in doc.items() if k not in ("nb_res", "jobs", "profiles")}
    used: set[str] = set()
    run_times: dict[str, Any] = {}
    jobs: list[Job] = []
    rejects: list[tuple[int, str]] = []
    reasons: list[str] = []
    for index, raw in enumerate(jobs_raw):
        try:
            job, closure = _job(raw, index, name, profiles, run_times)
        except _Skip as skip:
            if not lenient:
                raise skip.error from None
            rejects.append((index, json.dumps(raw, sort_keys=True, default=str)))
            reasons.append(skip.error.message if skip.error.field is None else str(skip.error))
            continue
        used.update(closure)
        jobs.append(job)
    unused = {k: v for k, v in profiles.items() if k not in used}
    if unused:
        rest["profiles"] = unused
    if rest:
        _check_finite(rest, lambda what, field: FormatError(what, source=name, field=field))
        header.set(HEADER_LABEL, json.dumps(rest, separators=(",", ":")))
    if order == "submit":
        jobs.sort(key=lambda j: j.submit_time or 0.0)
    spellings = sorted({s for p in profiles.values() if (s := spelling_of(p)) is not None})
    workload = Workload.from_jobs(jobs, header)
    workload.meta.update(
        {
            "batsim_spellings": spellings,
            "skipped": len(rejects),
            "rejects": rejects,
            "reject_reasons": reasons,
        }
    )
    return workload


def write_workload(
    workload: Workload, path: str | os.PathLike[str], profile_types: str = "batsim5"
) -> Losses:
    """Write ``workload`` as a Batsim JSON workload.

    Every profile of a known type is written in ``profile_types``'s spelling
    (``batsim5``: ``DelayProfile`` ...; ``batsim4``: ``delay`` ...); profiles of
    other types are written as read, with all their fields. Jobs read from a
    Batsim workload keep their profile while their run time is the one it fixes;
    other jobs get a shared delay profile per distinct run time
    (``delay_<seconds>``). What Batsim cannot hold is counted in the returned loss
    report (see :mod:`schedlab.losses`); see docs/formats/batsim.md.
    """
    if profile_types not in SPELLINGS:
        raise UsageError(f"profile_types must be batsim5 or batsim4, got {profile_types!r}")
    with writer_losses() as losses:
        doc = _document(workload, profile_types, losses)
        with open_output(path) as fh:
            json.dump(doc, fh, indent=1, allow_nan=False)
            fh.write("\n")
    return losses


def _fresh_numbers(jobs: Iterable[Job]) -> Iterator[int]:
    top = max((j.job_number for j in jobs if j.job_number is not None), default=0)
    yield from itertools.count(max(top, 0) + 1)


def _document(workload: Workload, spelling: str, losses: Losses) -> dict[str, Any]:
    jobs = workload.jobs
    profiles: dict[str, Any] = {}
    out_jobs: list[dict[str, Any]] = []
    max_res = 0
    delay_names: dict[float, str] = {}
    seen_ids: set[str] = set()
    fresh = _fresh_numbers(jobs)

    def add_profile(pname: str, definition: dict[str, Any]) -> str:
        """Add a profile; a different one of the same name gets a suffix."""
        definition = respell(definition, spelling)
        candidate, n = pname, 1
        while candidate in profiles and profiles[candidate] != definition:
            n += 1
            candidate = f"{pname}~{n}"
        profiles[candidate] = definition
        return candidate

    def delay_profile(run: float) -> str:
        if run not in delay_names:
            delay_names[run] = add_profile(
                f"delay_{plain(run)}", {"type": "delay", "delay": plain(run)}
            )
        return delay_names[run]

    for job in jobs:
        extras = job.extras or {}
        job_id: Any = extras.get(EXTRA_ID, job.job_number)
        if EXTRA_ID in extras and split_id(job_id)[1] != job.job_number:
            job_id = job.job_number  # renumbered since it was read
        if job_id is None or str(job_id) in seen_ids:
            what = "unknown" if job_id is None else "a duplicate"
            job_id = next(fresh)
            while str(job_id) in seen_ids:
                job_id = next(fresh)
            losses.add("job_number", f"{what}, written as a fresh number above the others")
        seen_ids.add(str(job_id))
        submit = job.submit_time
        if submit is None:
            losses.add("submit_time", "unknown, written as 0 (Batsim requires subtime)")
            submit = 0.0
        res = job.requested_processors
        if res is None or res < 1:
            alloc = job.allocated_processors
            if alloc is not None and alloc >= 1:
                res = alloc
                losses.add("requested_processors", "unknown, written as the allocated count")
            else:
                res = 1
                losses.add(
                    "requested_processors", "unknown or 0, written as 1 (Batsim requires res >= 1)"
                )
        res = int(res)
        max_res = max(max_res, res)
        entry: dict[str, Any] = {"id": job_id, "subtime": plain(submit)}
        if job.requested_time is not None and job.requested_time >= 0:
            entry["walltime"] = plain(job.requested_time)
        elif job.requested_time is not None:
            losses.add("requested_time", "negative, written as no walltime")
            entry["walltime"] = -1
        elif EXTRA_WALLTIME in extras:
            entry["walltime"] = extras[EXTRA_WALLTIME]
        entry["res"] = res
        kept_name = extras.get(EXTRA_PROFILE)
        kept = extras.get(EXTRA_PROFILE_DEF) or {}
        own = kept.get(kept_name) if isinstance(kept_name, str) else None
        if isinstance(own, dict) and profile_run_time(kept_name, kept) == job.run_time:
            for sub_name, sub in kept.items():
                if sub_name != kept_name:
                    add_profile(sub_name, sub)
            entry["profile"] = add_profile(kept_name, own)
        else:
            if own is not None:
                losses.add(
                    f"extras.{EXTRA_PROFILE_DEF}",
                    "the run time changed: written as a delay profile instead",
                )
            run = job.run_time
            if run is None:
                losses.add("run_time", "unknown, written as a delay of 0")
                run = 0.0
            elif run < 0:
                losses.add("run_time", "negative, written as a delay of 0")
                run = 0.0
            entry["profile"] = delay_profile(float(run))
        for key, value in (extras.get(EXTRA_JOB_FIELDS) or {}).items():
            entry.setdefault(key, value)
        out_jobs.append(entry)
        note_fields(losses, job, _NOT_CARRIED)
        note_fields(losses, job, RICH_FIELDS)
        note_extras(losses, extras, kept=_KEPT_EXTRAS)
    doc: dict[str, Any] = {}
    nb_res = workload.header.get("MaxProcs")
    size = int(nb_res) if nb_res is not None and nb_res.strip().isdigit() else None
    if size is None or size < 1:
        size = max(max_res, 1)
        if nb_res is not None:
            losses.add("header.MaxProcs", f"not a positive integer, nb_res written as {size}")
    doc["nb_res"] = size
    rest_text = workload.header.get(HEADER_LABEL)
    rest: dict[str, Any] = json.loads(rest_text) if rest_text else {}
    for pname, definition in (rest.pop("profiles", None) or {}).items():
        add_profile(pname, definition)
    doc.update({k: v for k, v in rest.items() if k not in ("nb_res", "jobs", "profiles")})
    for entry in workload.header.entries:
        if entry.label not in (HEADER_LABEL, "MaxProcs"):
            losses.add(f"header.{entry.label or 'comment'}", "not written")
    doc["jobs"] = out_jobs
    doc["profiles"] = profiles
    return doc


#: Extras this writer carries back into the JSON.
_KEPT_EXTRAS = frozenset(
    (EXTRA_ID, EXTRA_WORKLOAD, EXTRA_PROFILE, EXTRA_PROFILE_DEF, EXTRA_JOB_FIELDS, EXTRA_WALLTIME)
)
