"""Batsim JSON workloads: reader and writer ``batsim``.

A workload is one JSON object: ``nb_res`` (machine size), ``jobs`` (``id``,
``subtime``, ``walltime``, ``res``, ``profile`` and any user field) and
``profiles`` (name -> ``{"type": ..., ...}``). Profile types are read in both
spellings (Batsim 4's ``delay``/``parallel``/... and Batsim 5's
``DelayProfile``/``ParallelTaskProfile``/...); the run time comes from delay
profiles (and sequences made only of delays, each profile's duration computed
once; a sequence that refers back to itself is an error). Everything without a
place in :class:`~schedlab.model.Job` is kept in ``extras`` (keys ``batsim.*``) so
that batsim -> batsim is lossless.

Decisions (docs/formats/batsim.md has the mapping table and the others): numbers
must be JSON numbers (a string such as ``"30"`` is an error, as for Batsim), finite
and within the limits of every reader (counts 2**53 - 1, times and a sequence's
whole duration 1e12 s); job ids that carry no job number of their own, or the
number of an earlier job, get new numbers with a warning finding (check
``renumbered-job``), the ids kept and written back.
"""

from __future__ import annotations

import itertools
import json
import math
import operator
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, BinaryIO

from schedlab.errors import FormatError, UsageError
from schedlab.io import open_binary, open_output, source_name
from schedlab.losses import RICH_FIELDS, Losses, note_extras, note_fields, writer_losses
from schedlab.model import Header, Job, Workload
from schedlab.validation import (
    BAD_RECORD,
    ERROR,
    MAX_MAGNITUDE,
    MAX_SECONDS,
    WARNING,
    Finding,
)

from .common import (
    EXTRA_ID,
    EXTRA_JOB_FIELDS,
    EXTRA_NUMBER,
    EXTRA_PROFILE,
    EXTRA_PROFILE_DEF,
    EXTRA_WALLTIME,
    EXTRA_WORKLOAD,
    HugeInteger,
    carries,
    escaped,
    header_size,
    note_read_back,
    number,
    number_jobs,
    plain,
    shown,
    split_id,
    text_problem,
)

#: Profile type spellings -> schedlab's kind name (Batsim 4's names).
PROFILE_KINDS: dict[str, str] = {
    "delay": "delay",
    "parallel": "parallel",
    "parallel_homogeneous": "parallel_homogeneous",
    "parallel_homogeneous_total": "parallel_homogeneous_total",
    "composed": "composed",
    "parallel_homogeneous_pfs": "parallel_homogeneous_pfs",
    "data_staging": "data_staging",
    "DelayProfile": "delay",
    "ParallelTaskProfile": "parallel",
    "ParallelTaskHomogeneousProfile": "parallel_homogeneous",
    "SequentialCompositionProfile": "composed",
    "ParallelTaskOnStorageHomogeneousProfile": "parallel_homogeneous_pfs",
    "ParallelTaskDataStagingBetweenStoragesProfile": "data_staging",
}
#: Batsim 5's type per kind (a "total" homogeneous task is a homogeneous one whose
#: amounts are spread uniformly).
BATSIM5_TYPES = {
    "delay": "DelayProfile",
    "parallel": "ParallelTaskProfile",
    "parallel_homogeneous": "ParallelTaskHomogeneousProfile",
    "parallel_homogeneous_total": "ParallelTaskHomogeneousProfile",
    "composed": "SequentialCompositionProfile",
    "parallel_homogeneous_pfs": "ParallelTaskOnStorageHomogeneousProfile",
    "data_staging": "ParallelTaskDataStagingBetweenStoragesProfile",
}
#: Batsim 5's ``generation_strategy`` of homogeneous parallel tasks.
STRATEGY = "generation_strategy"
SPREAD = "DefinedAmountsSpreadUniformly"
PER_VALUE = "DefinedAmountsUsedForEachValue"
#: The strategy each kind stands for (Batsim 5 types that take one).
_KIND_STRATEGY = {
    "parallel_homogeneous": PER_VALUE,
    "parallel_homogeneous_total": SPREAD,
    "parallel_homogeneous_pfs": PER_VALUE,
}
#: Types of one spelling only, with no equivalent of the same fields in the other:
#: written as they are, and reported (a file in the other spelling mixes them).
_BATSIM5_ONLY = frozenset(
    (
        "ForkJoinCompositionProfile",
        "ParallelTaskMergeCompositionProfile",
        "TraceReplayProfile",
        *BATSIM5_TYPES.values(),  # with a strategy no Batsim 4 type has
    )
)
_BATSIM4_ONLY = frozenset(("smpi", "usage_trace"))
#: Batsim refuses a delay of 0 or less: a run time that is 0, unknown or negative
#: is written as this delay (seconds), reported.
_MIN_DELAY = 0.001
#: Batsim's largest integer id (``IsInt``: 32 bits); larger ids are written as text.
_MAX_INT_ID = 2**31 - 1
#: Batsim's largest ``res`` and ``nb_res`` (read with rapidjson's ``IsInt``/``GetInt``:
#: a signed 32-bit integer; a larger one stops Batsim on loading the workload).
_MAX_RES = 2**31 - 1
#: Check name of the reader's warning about profiles of types it does not map.
_UNMAPPED = "unmapped-profile"
#: Check name of the reader's warnings about values Batsim refuses.
_REFUSED = "refused-by-batsim"
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
    a profile, ``None`` when its type is not one of the known spellings
    (:data:`PROFILE_KINDS`). A Batsim 5 homogeneous task with ``generation_strategy``
    ``DefinedAmountsSpreadUniformly`` is Batsim 4's ``parallel_homogeneous_total``;
    a Batsim 5 type with a strategy that is neither of Batsim's two values (or a
    spread storage transfer, which no Batsim 4 type is) has no kind either: it is
    kept as written. Batsim 4 types ignore the field (Batsim 4 has none)."""
    kind_type = str(profile.get("type"))
    kind = PROFILE_KINDS.get(kind_type)
    if kind in _KIND_STRATEGY and STRATEGY in profile and kind_type in BATSIM5_TYPES.values():
        strategy = profile[STRATEGY]
        if strategy == SPREAD and kind == "parallel_homogeneous":
            return "parallel_homogeneous_total"
        if strategy != PER_VALUE:
            return None
    return kind


def spelling_of(profile: dict[str, Any]) -> str | None:
    """``batsim5`` or ``batsim4`` for a known profile type, ``None`` otherwise."""
    kind_type = str(profile.get("type"))
    if kind_type not in PROFILE_KINDS:
        return None
    return "batsim5" if kind_type in BATSIM5_TYPES.values() else "batsim4"


def respell(
    profile: dict[str, Any], spelling: str, notes: set[str] | None = None
) -> dict[str, Any]:
    """``profile`` with its type in ``spelling`` (every other field kept); profiles of
    unknown types, and those already in ``spelling``, are returned unchanged.

    Batsim 4 -> 5: ``parallel_homogeneous_total`` becomes
    ``ParallelTaskHomogeneousProfile`` with ``generation_strategy``
    ``DefinedAmountsSpreadUniformly``; a ``generation_strategy`` field that
    contradicts the Batsim 4 type (which Batsim 4 ignores) is replaced by the
    type's. Batsim 5 -> 4: the strategy picks ``parallel_homogeneous_total`` or
    ``parallel_homogeneous`` and is dropped. With ``notes``, what is not exact
    is added to it: a replaced strategy, and a type kept in the other spelling
    (one with no equivalent of the same fields).
    """
    kind_type = str(profile.get("type"))
    current = spelling_of(profile)
    kind = profile_kind(profile)
    if current == spelling:
        return profile
    if kind is None or current is None:
        other = kind_type in _BATSIM5_ONLY if spelling == "batsim4" else kind_type in _BATSIM4_ONLY
        if notes is not None and other:
            name = "Batsim 5's" if spelling == "batsim4" else "Batsim 4's"
            notes.add(
                f"profile type kept in {name} spelling (no equivalent of the same fields "
                "in the other): a file that mixes the two"
            )
        return profile
    out = dict(profile)
    if spelling == "batsim5":
        out["type"] = BATSIM5_TYPES[kind]
        strategy = _KIND_STRATEGY.get(kind)
        if strategy is not None and STRATEGY in profile and profile[STRATEGY] != strategy:
            out[STRATEGY] = strategy
            if notes is not None:
                notes.add(
                    "generation_strategy replaced by the one its Batsim 4 type stands for "
                    "(Batsim 4 ignores the field)"
                )
        elif kind == "parallel_homogeneous_total":
            out[STRATEGY] = SPREAD
    else:
        out["type"] = kind
        if kind in _KIND_STRATEGY:
            out.pop(STRATEGY, None)
    return out


def profile_run_time(name: str, profiles: Mapping[str, Any]) -> float | None:
    """The run time a profile fixes: a delay's ``delay``; a sequence made only of
    delays (at any depth): ``repeat`` times the sum of its parts. ``None`` for any
    profile whose duration depends on the platform (parallel tasks, traces ...), a
    sequence that refers back to itself, and anything malformed. Each profile's
    duration is computed once (a sequence using another one twice, at every level,
    takes linear time)."""
    memo: dict[str, float | None] = {}
    _durations(profiles, (name,), memo, None)
    return memo.get(name)


def _repeat(profile: Mapping[str, Any]) -> int | None:
    """A sequence's ``repeat`` (default 1) as an integer >= 1, else ``None``."""
    repeat = profile.get("repeat", 1)
    if isinstance(repeat, float) and repeat.is_integer():
        repeat = int(repeat)
    if type(repeat) is not int or repeat < 1:
        return None
    return repeat


def _durations(
    profiles: Mapping[str, Any],
    roots: Iterable[str],
    memo: dict[str, float | None],
    errors: dict[str, tuple[str, str]] | None,
) -> None:
    """Fill ``memo`` with the run time (see :func:`profile_run_time`) of each root
    and every profile it uses: one depth-first walk (no recursion: a chain of
    100,000 sequences is fine), each profile finished once.

    With ``errors`` (the reader's check; ``name -> (field, message)``, holding the
    profiles already found bad, which are not walked into), a sequence that refers
    back to itself, lasts more than 1e12 s or uses a bad profile is added to it.
    """
    for root in roots:
        if root in memo:
            continue
        # frames: [name, next part, total so far (None: not fixed)]
        stack: list[list[Any]] = [[root, 0, 0.0]]
        on_stack: dict[str, int] = {root: 0}
        while stack:
            frame = stack[-1]
            current, i, total = frame
            profile = profiles.get(current)
            kind: str | None = None
            seq: Any = None
            if isinstance(profile, dict):
                kind = profile_kind(profile)
                seq = profile.get("seq") if kind == "composed" else None
            bad = errors is not None and current in errors
            if isinstance(seq, list) and i < len(seq) and not bad:
                part = seq[i]
                if not isinstance(part, str) or part not in profiles:
                    frame[1], frame[2] = i + 1, None
                    continue
                if part in on_stack:  # back to a sequence still being walked
                    frame[1], frame[2] = i + 1, None
                    if errors is not None:
                        cycle = [f[0] for f in stack[on_stack[part] :]]
                        for k, member in enumerate(cycle):
                            path = " -> ".join([*cycle[k:], *cycle[:k], member])
                            errors.setdefault(
                                member, ("seq", f"the sequence refers back to itself: {path}")
                            )
                    continue
                if part not in memo:
                    on_stack[part] = len(stack)
                    stack.append([part, 0, 0.0])
                    continue
                frame[1] = i + 1
                value = memo[part]
                if errors is not None and part in errors:
                    errors.setdefault(
                        current, ("seq", f"profile {part!r} of the sequence cannot be read")
                    )
                frame[2] = None if value is None or total is None else total + value
                continue
            result: float | None = None
            if bad:
                result = None
            elif kind == "delay":
                delay = profile.get("delay") if isinstance(profile, dict) else None
                if type(delay) is int or type(delay) is float:
                    result = float(delay)
            elif isinstance(seq, list) and total is not None and isinstance(profile, dict):
                repeat = _repeat(profile)
                if repeat is not None:
                    result = total * repeat
                    if errors is not None and not result <= MAX_SECONDS:
                        field = "repeat" if repeat > 1 else "seq"
                        errors.setdefault(
                            current,
                            (
                                field,
                                "out of range (a time of at most 1e12 seconds): the sequence"
                                f" lasts {result:.6g} s",
                            ),
                        )
                        result = None
            memo[current] = result
            del on_stack[current]
            stack.pop()


def _unreadable(value: Any, path: str = "") -> tuple[str, str] | None:
    """The path (``key``, ``key[2].sub``) of the first NaN, infinity (Python's
    parser accepts them; they are not JSON), integer too long to convert, lone
    surrogate (in a string or a key) or key given twice in one object in a JSON
    value, and the message, else ``None``."""
    if isinstance(value, str):
        problem = text_problem(value)
        return None if problem is None else (path, problem)
    if isinstance(value, float) and not math.isfinite(value):
        return path, f"expected a finite number, got {value!r}"
    if isinstance(value, HugeInteger):
        return path, f"out of range (at most 2**53 - 1), got {value!r}"
    if isinstance(value, dict):
        if isinstance(value, _Twice):
            return _joined(path, value.twice), _TWICE
        for key, item in value.items():
            where = _joined(path, key)
            problem = text_problem(key)
            if problem is not None:
                return where, problem
            found = _unreadable(item, where)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _unreadable(item, f"{path}[{index}]")
            if found:
                return found
    return None


def _joined(path: str, key: str) -> str:
    """The place of ``key`` inside ``path`` (``key``, ``path.key``), printable."""
    return f"{path}.{escaped(key)}" if path else escaped(key)


def _check_finite(value: Any, fail: Any) -> None:
    """Raise ``fail(message, field)`` for the first NaN, infinity, integer too long
    to convert, lone surrogate or key given twice in ``value`` (see
    :func:`_unreadable`)."""
    found = _unreadable(value)
    if found is not None:
        raise fail(found[1], found[0])


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
        try:
            return _DECODE(text)
        except json.JSONDecodeError:
            raise
        except ValueError:
            # an integer of more digits than Python converts: parse again, keeping
            # such integers as markers that the checks reject naming their place
            # (only then: a Python parse_int hook would slow every read down)
            return _DECODE_LONG(text)
    except json.JSONDecodeError as exc:
        raise FormatError(
            f"not JSON: {exc.msg} (column {exc.colno})", source=name, line=exc.lineno
        ) from None
    except RecursionError:
        raise FormatError("not JSON: nested too deeply", source=name) from None


def _parse_int(text: str) -> int | HugeInteger:
    try:
        return int(text)
    except ValueError:
        return HugeInteger(text)


#: The message of a key given twice in one JSON object.
_TWICE = "given twice in one object (which value is meant?)"


class _Twice(dict[str, Any]):
    """A JSON object that names a key more than once: :mod:`json` keeps the last
    value, so which one the file means is unknown. Read as this marker (the first
    such key in ``twice``) so that the checks reject it naming its place."""

    __slots__ = ("twice",)

    twice: str


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The ``object_pairs_hook`` of the reader: a dict, or a :class:`_Twice` when a
    key is given twice (everything in a workload is kept, so every key counts)."""
    record = dict(pairs)
    if len(record) == len(pairs):
        return record
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            break
        seen.add(key)
    marked = _Twice(record)
    marked.twice = key
    return marked


_DECODE = json.JSONDecoder(object_pairs_hook=_pairs).decode
_DECODE_LONG = json.JSONDecoder(object_pairs_hook=_pairs, parse_int=_parse_int).decode


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


def _closure(name: str, profiles: dict[str, Any], bad: Mapping[str, Any]) -> dict[str, Any]:
    """The profile ``name`` and every profile it refers to, transitively (those
    that cannot be read left out)."""
    out: dict[str, Any] = {}
    todo = [name]
    while todo:
        current = todo.pop()
        if current in out or current in bad:
            continue
        out[current] = profiles[current]
        todo.extend(_references(profiles[current], profiles))
    return out


class _Skip(Exception):
    """A job that cannot be read (lenient mode: skipped and counted)."""

    def __init__(self, error: FormatError) -> None:
        super().__init__(str(error))
        self.error = error


def _check_profile(pname: str, profile: Any, profiles: dict[str, Any], name: str) -> None:
    """Raise a :class:`FormatError` for what is wrong in one profile on its own."""
    where = f"profiles.{escaped(pname)}"

    def pfail(what: str, field: str = "type") -> FormatError:
        return FormatError(what, source=name, path=where, field=field or None)

    problem = text_problem(pname)
    if problem is not None:
        raise pfail(problem, field="")
    if not isinstance(profile, dict):
        raise pfail(f"expected an object, got {type(profile).__name__}", field="")
    if isinstance(profile, _Twice):
        raise pfail(_TWICE, field=escaped(profile.twice))
    if not isinstance(profile.get("type"), str):
        raise pfail("missing" if "type" not in profile else "expected a string")
    _check_finite(profile, pfail)
    if "ret" in profile:  # the job's return code: 0 success, else failure
        number(profile["ret"], source=name, where=where, field="ret", minimum=None, integer=True)
    kind = profile_kind(profile)
    if kind == "delay":
        number(profile.get("delay"), source=name, where=where, field="delay", seconds=True)
    elif kind == "composed":
        seq = profile.get("seq")
        if not isinstance(seq, list) or not all(isinstance(x, str) for x in seq):
            raise pfail("expected a list of profile names", field="seq")
        for part in seq:
            if part not in profiles:
                raise pfail(f"profile {part!r} is not defined in profiles", field="seq")
        if "repeat" in profile:
            number(
                profile["repeat"], source=name, where=where, field="repeat", minimum=1, integer=True
            )


def _check_profiles(
    profiles: dict[str, Any], name: str, lenient: bool
) -> tuple[dict[str, float | None], dict[str, FormatError]]:
    """The run time each profile fixes (see :func:`profile_run_time`), and the
    profiles that cannot be read with why: a malformed one, a sequence that refers
    back to itself, lasts more than 1e12 s or uses one that cannot be read. Raises
    the first of them unless ``lenient``."""
    problems: dict[str, tuple[str, str]] = {}
    for pname, profile in profiles.items():
        try:
            _check_profile(pname, profile, profiles, name)
        except FormatError as exc:
            if not lenient:
                raise
            problems[pname] = (exc.field or "", exc.message)
    durations: dict[str, float | None] = {}
    _durations(profiles, profiles, durations, problems)
    errors = {
        pname: FormatError(
            message, source=name, path=f"profiles.{escaped(pname)}", field=field or None
        )
        for pname, (field, message) in problems.items()
    }
    if errors and not lenient:
        raise next(iter(errors.values()))
    return durations, errors


def _where(index: int, raw: Any) -> str:
    """``jobs[3]``, with the job's id when it has one: ``jobs[3] (id 'w0!4')``."""
    where = f"jobs[{index}]"
    if isinstance(raw, dict):
        job_id = raw.get("id")
        if isinstance(job_id, (int, str)):
            text = repr(job_id)
            where += f" (id {text if len(text) <= 40 else shown(job_id)})"
    return where


def _job(
    raw: Any,
    index: int,
    name: str,
    profiles: dict[str, Any],
    run_times: dict[str, Any],
    durations: Mapping[str, float | None],
    bad: Mapping[str, FormatError],
) -> tuple[Job, dict[str, Any]]:
    """One job of the ``jobs`` list, and the profiles it uses (by name)."""
    where = _where(index, raw)

    def fail(what: str, field: str) -> _Skip:
        return _Skip(FormatError(what, source=name, path=where, field=field or None))

    def num(key: str, **kw: Any) -> float | int:
        try:
            return number(raw[key], source=name, where=where, field=key, **kw)
        except FormatError as exc:
            raise _Skip(exc) from None

    if not isinstance(raw, dict):
        raise fail(f"expected an object, got {type(raw).__name__}", "")
    if isinstance(raw, _Twice):
        raise fail(_TWICE, escaped(raw.twice))
    for key in ("id", "subtime", "res", "profile"):
        if key not in raw:
            raise fail("missing", key)
    job_id = raw["id"]
    if not isinstance(job_id, (int, str)) or isinstance(job_id, bool):
        if isinstance(job_id, HugeInteger):
            raise fail(f"expected a string or an integer, got {job_id!r} (too long to read)", "id")
        raise fail(f"expected a string or an integer, got {shown(job_id)}", "id")
    problem = text_problem(job_id) if isinstance(job_id, str) else None
    if problem is not None:
        raise fail(problem, "id")
    workload_name, job_number = split_id(job_id)
    subtime = num("subtime", minimum=0, seconds=True)
    res = num("res", minimum=1, integer=True)
    extras: dict[str, Any] = {}
    if not (isinstance(job_id, int) and job_id == job_number):
        extras[EXTRA_ID] = job_id
    if workload_name is not None:
        extras[EXTRA_WORKLOAD] = workload_name
    requested_time: float | None = None
    if "walltime" in raw:
        wall = num("walltime", minimum=None, seconds=True)
        if wall == -1:  # Batsim's "no walltime"
            extras[EXTRA_WALLTIME] = -1
        elif wall < 0:
            raise fail(f"expected a number >= 0 (or -1: none), got {wall!r}", "walltime")
        else:
            requested_time = float(wall)
    pname = raw["profile"]
    if not isinstance(pname, str):
        raise fail(f"expected a profile name, got {shown(pname)}", "profile")
    if pname not in profiles:
        raise fail(f"profile {pname!r} is not defined in profiles", "profile")
    if pname in bad:
        error = bad[pname]
        field = f"field {error.field}: " if error.field else ""
        raise fail(
            f"profile {pname!r} cannot be read ({error.path}: {field}{error.message})",
            "profile",
        )
    if pname not in run_times:
        run_times[pname] = (durations.get(pname), _closure(pname, profiles, bad))
    run_time, used = run_times[pname]
    extras[EXTRA_PROFILE] = pname
    extras[EXTRA_PROFILE_DEF] = used
    others = {k: v for k, v in raw.items() if k not in _KNOWN_JOB_KEYS}
    if others:
        _check_finite(others, fail)
        extras[EXTRA_JOB_FIELDS] = others
    # Batsim's return code of the profile (default 0): success, else failure
    ret = profiles[pname].get("ret", 0)
    job = Job(
        job_number=job_number,
        submit_time=float(subtime),
        run_time=run_time,
        requested_processors=int(res),
        requested_time=requested_time,
        status=1 if ret == 0 else 0,
        extras=extras,
    )
    return job, used


def _skipped(error: FormatError, what: str) -> Finding:
    """The error finding (check ``bad-record``) of a job or profile a lenient read
    skipped: its JSON place, field and message."""
    field = f"field {error.field}: " if error.field else ""
    message = f"{error.path}: {field}{error.message} ({what} skipped)"
    return Finding(None, None, message, ERROR, BAD_RECORD)


def read_workload(source: Any, lenient: bool = False, order: str = "submit") -> Workload:
    """Read a Batsim JSON workload (plain or compressed).

    Raises :class:`FormatError` naming the file, the job (``jobs[i]`` and its id) or
    profile and the field for anything that does not follow the format: bad JSON
    (with its line), a missing ``id``/``subtime``/``res``/``profile``, a wrong type
    (a string where a number belongs, ``"30"``, included), negative (a ``subtime``
    included) or non-finite numbers, numbers beyond the limits of every reader
    (2**53 - 1; times: 1e12 s), a profile that is not defined or has no ``type``,
    a sequence that refers back to itself or lasts more than 1e12 s.

    ``lenient=True`` skips what cannot be read instead, counted in
    ``meta["skipped"]``: bad jobs, jobs whose profile cannot be read, and each
    profile that cannot be read (whether a job uses it or not). ``meta["rejects"]``
    lists them as ``(index in jobs, job as JSON)`` and ``("profiles.NAME", {NAME:
    profile} as JSON)``, ``meta["reject_reasons"]`` the messages, and
    ``meta["findings"]`` has one ``bad-record`` error naming each (``jobs[1] (id
    2): field res: ...``). Errors in the document itself are always fatal.

    Job numbers: see :func:`schedlab.formats.batsim.common.split_id`. A job whose
    id carries no number, or the number of an earlier job (``"w0!1"`` and
    ``"w1!1"``), gets a new one above the highest, in file order (its id kept in
    ``extras["batsim.id"]``, the number given in ``extras["batsim.number"]``, so
    that the batsim writers write the id back), and the read says so with a
    warning finding (check ``renumbered-job``). Jobs are sorted by submit time
    (stable: ties keep the file order) unless ``order="file"``.

    A job's ``status`` is its profile's ``ret`` (Batsim's return code, default
    0): 1 (success) for 0, else 0 (failure). Values read as written that Batsim
    refuses (a delay of 0, a walltime of 0, a ``res`` or ``nb_res`` above
    2**31 - 1) get a warning finding per kind (check ``refused-by-batsim``), and
    profiles of a type schedlab does not map (``smpi``, ``TraceReplayProfile`` ...:
    kept as written, no run time from them) one warning counting them and the jobs
    using them (check ``unmapped-profile``).
    """
    if order not in ("submit", "file"):
        raise FormatError(f"order must be 'submit' or 'file', got {order!r}")
    name = source_name(source)
    doc = _load(source, name)
    if not isinstance(doc, dict):
        raise FormatError(f"expected a JSON object, got {type(doc).__name__}", source=name)
    if isinstance(doc, _Twice):
        raise FormatError(_TWICE, source=name, field=escaped(doc.twice))
    jobs_raw = doc.get("jobs")
    if not isinstance(jobs_raw, list):
        raise FormatError(
            "expected a list of jobs" if "jobs" in doc else "missing", source=name, field="jobs"
        )
    profiles = doc.get("profiles", {})
    if not isinstance(profiles, dict):
        raise FormatError("expected an object", source=name, field="profiles")
    if isinstance(profiles, _Twice):
        raise FormatError(_TWICE, source=name, field=f"profiles.{escaped(profiles.twice)}")
    durations, bad = _check_profiles(profiles, name, lenient)

    header = Header()
    nb_res = doc.get("nb_res")
    findings: list[Finding] = []
    if nb_res is not None:
        size = number(nb_res, source=name, where="nb_res", field="nb_res", minimum=1, integer=True)
        header.set("MaxProcs", size)
        if size > _MAX_RES:
            findings.append(
                Finding(
                    None,
                    "nb_res",
                    f"nb_res {size} is above 2**31 - 1: Batsim refuses it (it reads nb_res "
                    "as a 32-bit integer); read as written",
                    WARNING,
                    _REFUSED,
                )
            )
    rest = {k: v for k, v in doc.items() if k not in ("nb_res", "jobs", "profiles")}
    used: set[str] = set()
    run_times: dict[str, Any] = {}
    jobs: list[Job] = []
    indices: list[int] = []
    rejects: list[tuple[int | str, str]] = []
    reasons: list[str] = []
    for index, raw in enumerate(jobs_raw):
        try:
            job, closure = _job(raw, index, name, profiles, run_times, durations, bad)
        except _Skip as skip:
            if not lenient:
                raise skip.error from None
            rejects.append((index, json.dumps(raw, sort_keys=True, default=repr)))
            reasons.append(skip.error.message if skip.error.field is None else str(skip.error))
            findings.append(_skipped(skip.error, "job"))
            continue
        used.update(closure)
        jobs.append(job)
        indices.append(index)
    for pname, error in bad.items():
        profile = profiles[pname]
        rejects.append((f"profiles.{escaped(pname)}", json.dumps({pname: profile}, default=repr)))
        reasons.append(str(error))
        findings.append(_skipped(error, "profile"))
    findings.extend(_renumber(jobs, indices, jobs_raw))
    findings.extend(_refused(jobs, indices, jobs_raw, profiles, bad))
    findings.extend(_unmapped(jobs, indices, jobs_raw, profiles, bad))
    unused = {k: v for k, v in profiles.items() if k not in used and k not in bad}
    if unused:
        rest["profiles"] = unused
    if rest:
        _check_finite(rest, lambda what, field: FormatError(what, source=name, field=field))
        header.set(HEADER_LABEL, json.dumps(rest, separators=(",", ":")))
    if order == "submit":
        jobs.sort(key=lambda j: j.submit_time or 0.0)
    spellings = sorted(
        {s for p in profiles.values() if isinstance(p, dict) and (s := spelling_of(p))}
    )
    workload = Workload.from_jobs(jobs, header)
    workload.meta.update(
        {
            "batsim_spellings": spellings,
            "skipped": len(rejects),
            "rejects": rejects,
            "reject_reasons": reasons,
            # positions in rejects: a job's index in the jobs list (0-based), or
            # "profiles.NAME"; each is named by a bad-record finding as well
            "reject_position": "index in jobs",
            "findings": findings,
        }
    )
    return workload


def _refused(
    jobs: list[Job],
    indices: list[int],
    jobs_raw: list[Any],
    profiles: dict[str, Any],
    bad: Mapping[str, Any],
) -> list[Finding]:
    """Warnings (check ``refused-by-batsim``) about values read as written that
    Batsim refuses: delays of 0 (Batsim requires ``delay`` > 0), ``res`` above
    2**31 - 1 (Batsim reads it as a 32-bit integer) and walltimes of 0 (Batsim
    requires ``walltime`` > 0, or -1 for none); one per kind, counting them and
    naming the first (jobs in file order)."""
    findings: list[Finding] = []
    zero_delays = [
        pname
        for pname, profile in profiles.items()
        if pname not in bad and profile_kind(profile) == "delay" and profile.get("delay") == 0
    ]
    if zero_delays:
        findings.append(
            Finding(
                None,
                "delay",
                f"{len(zero_delays)} profile(s) have a delay of 0, the first "
                f"profiles.{escaped(zero_delays[0])}: Batsim refuses them (a delay must be "
                "> 0); read as a run time of 0",
                WARNING,
                _REFUSED,
            )
        )
    huge = [at for at, job in enumerate(jobs) if (job.requested_processors or 0) > _MAX_RES]
    if huge:
        first = indices[huge[0]]
        findings.append(
            Finding(
                None,
                "res",
                f"{len(huge)} job(s) have a res above 2**31 - 1, the first "
                f"{_where(first, jobs_raw[first])}: Batsim refuses it (it reads res as a "
                "32-bit integer); read as written",
                WARNING,
                _REFUSED,
            )
        )
    zero_walls = [at for at, job in enumerate(jobs) if job.requested_time == 0]
    if zero_walls:
        first = indices[zero_walls[0]]
        findings.append(
            Finding(
                None,
                "walltime",
                f"{len(zero_walls)} job(s) have a walltime of 0, the first "
                f"{_where(first, jobs_raw[first])}: Batsim refuses it (a walltime must be "
                "> 0, or -1: none); read as a requested time of 0",
                WARNING,
                _REFUSED,
            )
        )
    return findings


def _unmapped(
    jobs: list[Job],
    indices: list[int],
    jobs_raw: list[Any],
    profiles: dict[str, Any],
    bad: Mapping[str, Any],
) -> list[Finding]:
    """One warning (check ``unmapped-profile``) about the profiles whose type
    schedlab does not map (:func:`profile_kind` is ``None``: ``smpi``,
    ``usage_trace``, ``TraceReplayProfile``, a site's own, a Batsim 5 type with a
    ``generation_strategy`` Batsim does not have ...): kept as written and written
    back unchanged, but no run time comes from them. It counts them and the jobs
    using one (directly or in a sequence), and names their types and the first of
    each (profiles and jobs in file order)."""
    odd = [
        pname
        for pname, profile in profiles.items()
        if pname not in bad and isinstance(profile, dict) and profile_kind(profile) is None
    ]
    if not odd:
        return []
    odd_set = set(odd)
    users = [
        at
        for at, job in enumerate(jobs)
        if not odd_set.isdisjoint((job.extras or {}).get(EXTRA_PROFILE_DEF) or ())
    ]
    types = list(dict.fromkeys(escaped(str(profiles[p]["type"])) for p in odd))
    named = ", ".join(types[:6]) + (f" and {len(types) - 6} more" if len(types) > 6 else "")
    if users:
        first = indices[min(users, key=lambda at: indices[at])]
        used = (
            f"{len(users)} job(s) use one, the first {_where(first, jobs_raw[first])}: "
            "their run time is unknown"
        )
    else:
        used = "no job uses one (kept in the header's Batsim entry)"
    message = (
        f"{len(odd)} profile(s) of a type schedlab does not map ({named}), the first "
        f"profiles.{escaped(odd[0])}: kept as written (extras['batsim.profile_def']) and "
        f"written back unchanged; {used}"
    )
    return [Finding(None, "type", message, WARNING, _UNMAPPED)]


def _renumber(jobs: list[Job], indices: list[int], jobs_raw: list[Any]) -> list[Finding]:
    """Give the jobs (file order) whose id carries no job number, or the number of
    an earlier one, a new number (see :func:`read_workload`); the findings."""
    assigned, findings = number_jobs(
        [job.job_number for job in jobs],
        lambda at: _where(indices[at], jobs_raw[indices[at]]),
    )
    for at, new in assigned.items():
        job = jobs[at]
        extras = job.extras
        extras.setdefault(EXTRA_ID, job.job_number)  # a plain integer id
        extras[EXTRA_NUMBER] = new
        job.job_number = new
    return findings


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
    """New job numbers that no job has and the readers take (as
    :func:`~.common.number_jobs` gives them): above the highest number while they
    stay at most 2**53 - 1, then the lowest unused from 0."""
    numbers = [j.job_number for j in jobs if j.job_number is not None]
    # a fractional number (SWF allows one) is no id, but the fresh ones stay above it
    finite = [n for n in numbers if math.isfinite(n) and abs(n) <= MAX_MAGNITUDE]
    taken = {int(n) for n in finite if float(n).is_integer()}
    top = math.floor(max(finite, default=0))
    yield from range(max(top, 0) + 1, int(MAX_MAGNITUDE) + 1)
    yield from (k for k in itertools.count(0) if k not in taken)


def _whole(count: float | None) -> int | None:
    """``count`` as a Batsim ``res`` (rounded down to a whole number of resources),
    or ``None`` when it cannot be one: unknown, below 1, not finite or past
    2**31 - 1 (Batsim reads ``res`` as a 32-bit integer)."""
    if count is None or not 1 <= count < _MAX_RES + 1:  # NaN compares False
        return None
    return math.floor(count)


def _res(job: Job, losses: Losses) -> int:
    """The ``res`` of ``job``: its requested processors, rounded down to a whole
    number; else (unknown, below 1 ...) its allocated processors, else 1; every
    change reported as a loss of ``requested_processors``."""
    requested = job.requested_processors
    res = _whole(requested)
    if res is not None:
        if res != requested:
            losses.add("requested_processors", "not an integer, rounded down to whole resources")
        return res
    if requested is None:
        what = "unknown"
    elif requested == 0:
        what = "0"
    elif requested < 0:
        what = "negative"
    elif 0 < requested < 1:
        what = "below 1"
    elif math.isnan(requested):
        what = "not a number"
    else:
        what = "above 2**31 - 1 (Batsim reads res as a 32-bit integer)"
    alloc = job.allocated_processors
    res = _whole(alloc)
    if res is None:
        res, how = 1, "1"
    elif res != alloc:
        how = "the allocated count rounded down to whole resources"
    else:
        how = "the allocated count"
    losses.add("requested_processors", f"{what}, written as {how} (Batsim requires res >= 1)")
    return res


def _writable_id(value: Any) -> tuple[Any, str | None]:
    """``(id, None)``: ``value`` as a Batsim job id (text or an integer; an integral
    float, such as a job number computed in numpy, as that integer); ``(None, why)``
    when no id can hold it (unknown, or a fractional SWF job number such as 2.5,
    which the reader refuses)."""
    if value is None:
        return None, "unknown"
    if isinstance(value, str):
        return value, None
    if not isinstance(value, bool):
        try:
            return operator.index(value), None
        except TypeError:
            pass
        if isinstance(value, float) and value.is_integer():
            return int(value), None
    return None, "not an integer (a Batsim id is an integer or text)"


def _loadable(kept: Mapping[str, Any]) -> bool:
    """Whether Batsim loads every delay profile of ``kept``: a delay of 0 (read
    with a warning) is refused by Batsim."""
    return not any(
        isinstance(p, dict) and profile_kind(p) == "delay" and p.get("delay") == 0
        for p in kept.values()
    )


#: Why a job's profile is written under another name than the one it had.
_RENAMED_PROFILE = (
    "a delay profile for a changed run time, or a profile of that name that "
    "differs from another job's"
)


def _in_workload(job_id: Any, workload: Any) -> Any:
    """``job_id`` as the id of a job of ``workload`` (Batsim's ``"w0!12"``), when
    ``workload`` is a name and the id names none of its own; else ``job_id``."""
    if not isinstance(workload, str) or not workload or split_id(job_id)[0] is not None:
        return job_id
    return f"{workload}!{job_id}"


def _status_note(status: Any, written: str) -> str:
    """The loss action of a status a workload cannot hold (only success or
    failure have a place: a profile's ``ret``)."""
    what = "unknown" if status is None else f"{plain(status)} (neither success nor failure)"
    return f"{what}, written as {written}"


def _document(workload: Workload, spelling: str, losses: Losses) -> dict[str, Any]:
    jobs = list(workload)  # (reading .jobs would convert a columnar workload)
    profiles: dict[str, Any] = {}
    out_jobs: list[dict[str, Any]] = []
    max_res = 0
    delay_names: dict[tuple[float, bool], str] = {}
    seen_ids: set[str] = set()
    written_ids: list[Any] = []
    reported: list[bool] = []  # job number changes already reported
    fresh = _fresh_numbers(jobs)
    # run times of kept profile sets (jobs read from one file share them), by the
    # set's identity: each profile's duration is computed once per set
    run_memo: dict[int, tuple[Any, dict[str, float | None], bool]] = {}
    notes: set[str] = set()  # respelling notes of the current job
    profile_field = f"extras.{EXTRA_PROFILE_DEF}"

    def kept_entry(kept: dict[str, Any]) -> tuple[Any, dict[str, float | None], bool]:
        entry = run_memo.get(id(kept))
        if entry is None or entry[0] is not kept:
            entry = run_memo[id(kept)] = (kept, {}, _loadable(kept))
        return entry

    def kept_run_time(pname: str, kept: dict[str, Any]) -> float | None:
        memo = kept_entry(kept)[1]
        if pname not in memo:
            _durations(kept, (pname,), memo, None)
        return memo.get(pname)

    def add_profile(pname: str, definition: dict[str, Any]) -> str:
        """Add a profile; a different one of the same name gets a suffix."""
        definition = respell(definition, spelling, notes)
        candidate, n = pname, 1
        while candidate in profiles and profiles[candidate] != definition:
            n += 1
            candidate = f"{pname}~{n}"
        profiles[candidate] = definition
        return candidate

    def delay_profile(run: float, failed: bool) -> str:
        key = (run, failed)
        if key not in delay_names:
            definition: dict[str, Any] = {"type": "delay", "delay": plain(run)}
            name = f"delay_{plain(run)}"
            if failed:
                definition["ret"] = 1
                name += "_ret1"
            delay_names[key] = add_profile(name, definition)
        return delay_names[key]

    def flush_notes(records: int = 1) -> None:
        for note in sorted(notes):
            losses.add(profile_field, note, records)
        notes.clear()

    for job in jobs:
        extras = job.extras or {}
        job_id: Any = extras.get(EXTRA_ID, job.job_number)
        if EXTRA_ID in extras and not carries(extras, job.job_number):
            job_id = job.job_number  # renumbered since it was read
        job_id, what = _writable_id(job_id)
        workload_name = extras.get(EXTRA_WORKLOAD)
        if what is None:
            job_id = _in_workload(job_id, workload_name)
        if what is None and str(job_id) in seen_ids:
            what = "a duplicate"
        changed = what is not None
        if changed:
            job_id = _in_workload(next(fresh), workload_name)
            while str(job_id) in seen_ids:
                job_id = _in_workload(next(fresh), workload_name)
            losses.add("job_number", f"{what}, written as a fresh number no other job has")
        seen_ids.add(str(job_id))
        if isinstance(job_id, int) and not -_MAX_INT_ID - 1 <= job_id <= _MAX_INT_ID:
            job_id = str(job_id)  # Batsim reads an id as text or a 32-bit integer
        if workload_name is not None and split_id(job_id)[0] != workload_name:
            losses.add(
                f"extras.{EXTRA_WORKLOAD}",
                "not the workload of the job's id, which is written (the id names the workload)",
            )
        written_ids.append(job_id)
        reported.append(changed)
        submit = job.submit_time
        if submit is None:
            losses.add("submit_time", "unknown, written as 0 (Batsim requires subtime)")
            submit = 0.0
        elif submit < 0:
            # an error in the source log (the SWF reader reports it); the reader
            # refuses a negative subtime
            losses.add("submit_time", "negative, written as 0 (Batsim requires subtime >= 0)")
            submit = 0.0
        res = _res(job, losses)
        max_res = max(max_res, res)
        entry: dict[str, Any] = {"id": job_id, "subtime": plain(submit)}
        limit = job.requested_time
        if limit is not None and limit > 0:
            entry["walltime"] = plain(limit)
        elif limit == 0:
            losses.add(
                "requested_time",
                "0, written as no walltime (-1; Batsim requires walltime > 0 or -1)",
            )
            entry["walltime"] = -1
        elif limit is not None:
            losses.add("requested_time", "negative, written as no walltime")
            entry["walltime"] = -1
        elif EXTRA_WALLTIME in extras:
            entry["walltime"] = extras[EXTRA_WALLTIME]
        entry["res"] = res
        status = job.status
        kept_name = extras.get(EXTRA_PROFILE)
        kept = extras.get(EXTRA_PROFILE_DEF) or {}
        own = kept.get(kept_name) if isinstance(kept_name, str) else None
        same_run = (
            isinstance(own, dict)
            and isinstance(kept_name, str)
            and kept_run_time(kept_name, kept) == job.run_time
        )
        if same_run and kept_entry(kept)[2]:
            assert isinstance(own, dict) and isinstance(kept_name, str)
            for sub_name, sub in kept.items():
                if sub_name != kept_name:
                    add_profile(sub_name, sub)
            ret = own.get("ret", 0)
            if status == 1 and ret != 0:
                own = {k: v for k, v in own.items() if k != "ret"}
            elif status == 0 and ret == 0:
                own = {**own, "ret": 1}
            elif status not in (0, 1):
                written = "failure (the profile's ret)" if ret != 0 else "success (no ret)"
                losses.add("status", _status_note(status, written))
            entry["profile"] = add_profile(kept_name, own)
        else:
            if own is not None:
                losses.add(
                    profile_field,
                    "the run time changed: written as a delay profile instead"
                    if not same_run
                    else "a delay of 0 in it (Batsim refuses it): written as a delay "
                    "profile instead",
                )
            run = job.run_time
            if run is None or run <= 0:
                what = "unknown" if run is None else "0" if run == 0 else "negative"
                losses.add(
                    "run_time",
                    f"{what}, written as a delay of {_MIN_DELAY:g} s (Batsim requires delay > 0)",
                )
                run = _MIN_DELAY
            if status not in (0, 1):
                losses.add("status", _status_note(status, "success (no ret: Batsim's default)"))
            if own is None and not kept and isinstance(kept_name, str) and kept_name:
                # a profile name with no definition (a Batsim jobs file): a delay
                # profile of that name
                definition: dict[str, Any] = {"type": "delay", "delay": plain(float(run))}
                if status == 0:
                    definition["ret"] = 1
                entry["profile"] = add_profile(kept_name, definition)
            else:
                entry["profile"] = delay_profile(float(run), status == 0)
        if kept_name is not None and entry["profile"] != kept_name:
            losses.add(
                f"extras.{EXTRA_PROFILE}",
                f"written as another profile name ({_RENAMED_PROFILE})",
            )
        for key, value in (extras.get(EXTRA_JOB_FIELDS) or {}).items():
            entry.setdefault(key, value)
        out_jobs.append(entry)
        flush_notes()
        note_fields(losses, job, _NOT_CARRIED)
        note_fields(losses, job, RICH_FIELDS)
        note_extras(losses, extras, kept=_KEPT_EXTRAS)
    note_read_back(written_ids, [j.job_number for j in jobs], reported, losses)
    doc: dict[str, Any] = {}
    nb_res = workload.header.get("MaxProcs")
    size = header_size(nb_res)  # ASCII digits, within the reader's bounds
    if size is None or size > _MAX_RES:
        what = (
            "not a positive integer of at most 2**53 - 1"
            if size is None
            else "above 2**31 - 1 (Batsim reads nb_res as a 32-bit integer)"
        )
        size = max(max_res, 1)
        if nb_res is not None:
            losses.add("header.MaxProcs", f"{what}, nb_res written as {size}")
    doc["nb_res"] = size
    rest_text = workload.header.get(HEADER_LABEL)
    rest: dict[str, Any] = json.loads(rest_text) if rest_text else {}
    unused = rest.pop("profiles", None) or {}
    for pname, definition in unused.items():
        add_profile(pname, definition)
    if unused and not _loadable(unused):
        notes.add("a profile no job uses has a delay of 0, written as read (Batsim refuses it)")
    for note in sorted(notes):
        losses.add(f"header.{HEADER_LABEL}", note)
    notes.clear()
    doc.update({k: v for k, v in rest.items() if k not in ("nb_res", "jobs", "profiles")})
    for header_entry in workload.header.entries:
        if header_entry.label not in (HEADER_LABEL, "MaxProcs"):
            losses.add(f"header.{header_entry.label or 'comment'}", "not written")
    doc["jobs"] = out_jobs
    doc["profiles"] = profiles
    return doc


#: Extras this writer carries back into the JSON.
_KEPT_EXTRAS = frozenset(
    (
        EXTRA_ID,
        EXTRA_NUMBER,
        EXTRA_WORKLOAD,  # in the id ("w0!12"), reported when it cannot be
        EXTRA_PROFILE,  # the job's profile name, reported when it changes
        EXTRA_PROFILE_DEF,
        EXTRA_JOB_FIELDS,
        EXTRA_WALLTIME,
    )
)
