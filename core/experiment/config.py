"""Sweep definitions: a small TOML (or JSON) file, or the same keys as options.

Example ``sweep.toml`` (every name is a registered plugin's, looked up when the
sweep runs; ``docs/experiments.md`` has one with the built-in plugins)::

    workloads = ["mygen:kind=a", "mygen:kind=b", "traces/site.swf"]
    policies = ["mypolicy", "otherpolicy"]
    backfill = ["mybackfill"]
    estimators = ["requested", "myestimator"]
    seeds = [1, 2, 3, 4]          # or "1-4"; applied to generator workloads only
    procs = 32                    # optional machine size (default: from the workload)
    platform = "cluster.toml"     # or a platform file instead (docs/platform.md)
    allocation = "best-fit"       # with a platform: the allocation policy
    kill = false                  # let jobs run past their requested time (--no-kill)
    dependencies = true           # honour SWF dependencies (--dependencies)
    from = "swf"                  # the reader of the trace files (--from)
    metrics = ["mymetric"]        # default: every metric
    by = "accuracy-class"         # optional grouping
    out = "sweep-out"             # optional output folder (the CLI's --out wins)

    [policy_options.mypolicy]     # options of one policy (-P: of every policy)
    window = 10

    [backfill_options.mybackfill] # options of one backfilling strategy (-B)
    depth = 2

    [estimator_options.myestimator]  # options of one estimator (-E)
    correction = "requested"

    [allocation_options]          # options of the allocation policy
    myoption = 1

    [metric_options]
    weight = "jobs"

    [read_options]                # options of the readers of trace files (-R)
    lenient = true

``policies``, ``backfill`` and ``estimators`` default to
:data:`~schedlab.experiment.DEFAULT_POLICY`,
:data:`~schedlab.experiment.DEFAULT_BACKFILL` and
:data:`~schedlab.experiment.sweep.DEFAULT_ESTIMATOR` (names, resolved through the
registry like any other); ``backfills`` and ``estimator`` are accepted for
``backfill`` and ``estimators``.

A workload that is a generator spec (``NAME:...`` naming an installed generator)
gets one cell per seed; a trace file gets one cell (seed ``None``). Relative paths
of a sweep file (traces, ``platform``, ``out``, files inside a generator spec) are
taken from the file's folder, and ``~`` is the home folder (:func:`load_config`).
Seeds are whole numbers from 0 to 2**63 - 1; written as text, in ASCII digits with
no underscores (as ``--seeds``: ``"1_0"`` and ``"١"`` are refused, naming the file
and key; TOML's own ``1_0`` is the number 10). An empty list of seeds, or an entry
given twice on an axis, is a :class:`~schedlab.errors.UsageError` naming the key.
TOML needs Python 3.11's ``tomllib`` (or the ``tomli`` package on 3.10); JSON files
with the same keys always work.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ..api import parse_spec
from ..errors import UsageError
from .sweep import DEFAULT_BACKFILL, DEFAULT_ESTIMATOR, DEFAULT_POLICY, Cell, _looks_like_path

KNOWN_KEYS = frozenset(
    {
        "workloads",
        "policies",
        "backfill",
        "backfills",
        "estimators",
        "estimator",
        "seeds",
        "procs",
        "platform",
        "allocation",
        "kill",
        "dependencies",
        "from",
        "metrics",
        "by",
        "out",
        "policy_options",
        "backfill_options",
        "estimator_options",
        "allocation_options",
        "metric_options",
        "read_options",
    }
)

#: The keyed option tables: ``[policy_options.NAME]`` ... (options of one component).
_OPTION_TABLES = ("policy_options", "backfill_options", "estimator_options")


#: The largest seed of a sweep (and of its ``seed`` column): 2**63 - 1, the largest
#: value of the int64 column of a Parquet table.
_MAX_SEED = 2**63 - 1


def _refuse_unplain(text: str, option: str) -> None:
    """Refuse seeds written with other than ASCII characters or with an underscore
    (``"1_0"``, ``"١"``, ``"１"``), which Python's ``int()`` reads: as ``--seeds``
    and every integer option of the command line do, a :class:`UsageError` naming
    ``option`` (``--seeds``, ``FILE: seeds``)."""
    if not (text.isascii() and "_" not in text):
        raise UsageError(f"{option} {text!r}: expected numbers in ASCII digits, no underscores")


def _seed(value: Any, option: str = "seeds") -> int:
    """One seed: a whole number from 0 to 2**63 - 1 (text in ASCII digits, an int,
    or a float with no fraction)."""
    if isinstance(value, str):
        _refuse_unplain(value, option)
        try:
            number = int(value)
        except ValueError:
            raise UsageError(f"{option}: expected whole numbers, got {value!r}") from None
    elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
        number = int(value)
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        number = int(value)
    else:
        raise UsageError(f"{option}: expected whole numbers, got {value!r}")
    if number < 0:
        raise UsageError(f"{option}: a seed must not be negative, got {value!r}")
    if number > _MAX_SEED:
        shown = str(number)
        shown = shown if len(shown) <= 40 else f"{shown[:20]}... ({len(shown)} digits)"
        raise UsageError(f"{option}: a seed must be at most 2**63 - 1 ({_MAX_SEED}), got {shown}")
    return number


def parse_seeds(value: Any) -> list[int]:
    """Seeds from a list, an int, or text such as ``"1-4"`` / ``"1,2,7"`` / ``"1-3,9"``:
    whole numbers from 0 (what every generator's ``seed`` takes) to 2**63 - 1 (what
    the ``seed`` column of a Parquet table holds); more than
    :data:`MAX_CELLS` are refused before a range is expanded. Text is in ASCII
    digits with no underscores (``"1_0"``, ``"١"`` are refused, as by ``--seeds``).

    ``None`` (no seeds given) is no seeds: each generator's own default seed. A value
    naming no seed (``""``, ``[]``, ``" , "``) or a seed twice is a
    :class:`UsageError` (an empty list would silently mean the default seed, a seed
    twice the same cells twice)."""
    return _parse_seeds(value)


def _parse_seeds(value: Any, option: str = "seeds") -> list[int]:
    """:func:`parse_seeds`, its errors naming ``option`` (``--seeds``, ``FILE:
    seeds``)."""
    if value is None:
        return []
    if isinstance(value, str):  # before any part is counted or read
        _refuse_unplain(value, option)
    check_seed_count(value, option)
    if isinstance(value, int) and not isinstance(value, bool):
        return [_seed(value, option)]
    if isinstance(value, str):
        out: list[int] = []
        for part in filter(None, (p.strip() for p in value.split(","))):
            lo, sep, hi = part.partition("-")
            try:
                if sep and lo:
                    start, stop = int(lo), int(hi)
                    if stop < start:
                        raise ValueError
                    out.extend(range(start, stop + 1))
                else:
                    out.append(int(part))
            except ValueError:
                raise UsageError(
                    f"{option}: expected numbers or ranges like 1-4, got {part!r}"
                ) from None
        seeds = [_seed(seed, option) for seed in out]
    elif isinstance(value, Sequence):
        seeds = [_seed(v, option) for v in value]
    else:
        raise UsageError(f"{option}: expected a list or a range like 1-4, got {value!r}")
    if not seeds:
        raise UsageError(
            f"{option}: expected at least one seed, got {value!r} (leave it out for each "
            "generator's default seed)"
        )
    _check_unique(seeds, option)
    return seeds


def _check_unique(values: Sequence[Any], what: str) -> None:
    """A :class:`UsageError` ``WHAT: VALUE is given twice`` for the first entry of
    ``values`` (an axis of a sweep) that repeats an earlier one: it would give the
    same cells twice."""
    seen: set[Any] = set()
    for value in values:
        if value in seen:
            raise UsageError(f"{what}: {value!r} is given twice")
        seen.add(value)


#: Most cells of a sweep (workloads x seeds x policies x backfilling), and so most
#: seeds: a larger sweep is refused before anything is expanded or run (each cell
#: is an object here, and a file and rows in the output).
MAX_CELLS = 100_000


def check_seed_count(value: Any, option: str = "seeds") -> None:
    """Refuse more than :data:`MAX_CELLS` seeds in ``value`` (as :func:`parse_seeds`
    takes it), counting a range such as ``"1-100000000"`` without expanding it: a
    :class:`UsageError` naming ``option``. Malformed parts are left to
    :func:`parse_seeds`."""
    if isinstance(value, str):
        count = 0
        for part in filter(None, (p.strip() for p in value.split(","))):
            lo, sep, hi = part.partition("-")
            try:
                count += int(hi) - int(lo) + 1 if sep and lo else 1
            except ValueError:
                count += 1
    elif isinstance(value, Sequence):
        count = len(value)
    else:
        return
    if count > MAX_CELLS:
        shown = f" {value!r}" if isinstance(value, str) else ""
        raise UsageError(
            f"{option}{shown}: {count:,} seeds; a sweep has at most {MAX_CELLS:,} cells"
        )


#: The axes of components, whose entries may carry options (``NAME:key=value,...``).
_COMPONENT_AXES = ("policies", "backfill", "estimators")


def _split_components(text: str) -> list[str]:
    """``"NAME:a=1,b=2,OTHER"`` -> ``["NAME:a=1,b=2", "OTHER"]``: commas separate
    components, except that a comma followed by ``key=value`` continues the
    options of the component before it (as ``schedlab compare -p`` reads its
    combinations). Empty parts are kept (as ``""``), for the caller to refuse."""
    from ..comparison import _split_components as split

    return split(text, keep_empty=True)


def _names(value: Any, key: str, origin: str = "sweep") -> list[str]:
    """The names of an axis (or of ``metrics``): a list of non-empty strings, or one
    comma-separated string (``workloads``: one string is one workload; a component
    axis: a comma followed by ``key=value`` continues a component's options). An
    empty list or name is an error: it would silently mean the default; so is a name
    given twice (the same cells twice)."""
    if value is None:
        return []
    if isinstance(value, str):
        if key == "workloads":
            names = [value.strip()]
        elif key in _COMPONENT_AXES:
            names = _split_components(value)
        else:
            names = [v.strip() for v in value.split(",")]
    elif isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        names = [v.strip() for v in value]
    else:
        raise UsageError(f"{origin}: {key}: expected a list of names, got {value!r}")
    if not names or not all(names):
        raise UsageError(
            f"{origin}: {key}: expected non-empty names, got {value!r}"
            + ("" if key == "workloads" else " (leave the key out for the default)")
        )
    if key != "metrics":
        _check_unique(names, f"{origin}: {key}")
    return names


@attrs.define(slots=True)
class SweepConfig:
    """The axes and settings of a sweep (see the module docstring)."""

    workloads: list[str]
    policies: list[str] = attrs.field(factory=lambda: [DEFAULT_POLICY])
    backfills: list[str] = attrs.field(factory=lambda: [DEFAULT_BACKFILL])
    seeds: list[int] = attrs.field(factory=list)
    procs: int | None = None
    platform: str | None = None
    allocation: str | None = None
    metrics: list[str] | None = None
    by: str | None = None
    out: str | None = None
    policy_options: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    metric_options: dict[str, Any] = attrs.field(factory=dict)
    read_options: dict[str, Any] = attrs.field(factory=dict)
    estimators: list[str] = attrs.field(factory=lambda: [DEFAULT_ESTIMATOR])
    backfill_options: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    estimator_options: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    allocation_options: dict[str, Any] = attrs.field(factory=dict)
    kill: bool = True
    dependencies: bool = False
    #: The reader of trace files (``from`` in a file, ``--from``); None: detected.
    reader: str | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], origin: str = "sweep") -> SweepConfig:
        """Build from parsed TOML/JSON, with one-line errors for unknown or bad keys."""
        unknown = sorted(set(data) - KNOWN_KEYS)
        if unknown:
            raise UsageError(
                f"{origin}: unknown key {unknown[0]!r} (keys: {', '.join(sorted(KNOWN_KEYS))})"
            )
        workloads = _names(data.get("workloads"), "workloads", origin)
        if not workloads:
            raise UsageError(f"{origin}: give at least one workload")
        policies = _names(data.get("policies"), "policies", origin) or [DEFAULT_POLICY]
        for one, other in (("backfill", "backfills"), ("estimators", "estimator")):
            if one in data and other in data:
                raise UsageError(f"{origin}: give {one} or {other}, not both")
        backfill = data.get("backfill", data.get("backfills"))
        backfills = _names(backfill, "backfill", origin) or [DEFAULT_BACKFILL]
        estimator = data.get("estimators", data.get("estimator"))
        estimators = _names(estimator, "estimators", origin) or [DEFAULT_ESTIMATOR]
        procs = data.get("procs")
        if procs is not None and (
            not isinstance(procs, int) or isinstance(procs, bool) or procs <= 0
        ):
            raise UsageError(f"{origin}: procs must be a positive whole number, got {procs!r}")
        if procs is not None:
            from ..sim.runner import MAX_PROCS

            if procs > MAX_PROCS:
                raise UsageError(f"{origin}: procs must be at most 2**53 - 1, got {procs!r}")
        keyed: dict[str, dict[str, dict[str, Any]]] = {}
        for key in _OPTION_TABLES:
            table = data.get(key) or {}
            if not isinstance(table, Mapping) or not all(
                isinstance(v, Mapping) for v in table.values()
            ):
                kind = key.removesuffix("_options")
                raise UsageError(f"{origin}: {key} must be tables keyed by {kind} name")
            keyed[key] = {str(k): dict(v) for k, v in table.items()}
        flat: dict[str, dict[str, Any]] = {}
        for key in ("metric_options", "read_options", "allocation_options"):
            table = data.get(key) or {}
            if not isinstance(table, Mapping):
                raise UsageError(f"{origin}: {key} must be a table")
            flat[key] = dict(table)
        metrics = data.get("metrics")
        for key in ("platform", "allocation", "from", "by", "out"):
            if data.get(key) is not None and not isinstance(data.get(key), str):
                raise UsageError(f"{origin}: {key} must be a string, got {data.get(key)!r}")
            if isinstance(data.get(key), str) and not data[key].strip():
                raise UsageError(
                    f"{origin}: {key} must not be empty (leave the key out for the default)"
                )
            if isinstance(data.get(key), str) and "\0" in data[key]:
                raise UsageError(f"{origin}: {key} {data[key]!r}: holds a NUL character")
        for key in ("kill", "dependencies"):
            if key in data and not isinstance(data[key], bool):
                raise UsageError(f"{origin}: {key} must be true or false, got {data[key]!r}")
        by = data.get("by")
        if by is not None:
            from ..measure import GROUPINGS

            if by not in GROUPINGS:
                raise UsageError(f"{origin}: by {by!r}: expected one of {', '.join(GROUPINGS)}")
        if data.get("platform") is not None and procs is not None:
            raise UsageError(f"{origin}: give procs or platform, not both")
        # An option table naming no component of its axis would be ignored.
        for key, axis in (
            ("policy_options", policies),
            ("backfill_options", backfills),
            ("estimator_options", estimators),
        ):
            named = {_base(spec) for spec in axis}
            for name in keyed[key]:
                if name not in named:
                    kind = key.removesuffix("_options")
                    raise UsageError(
                        f"{origin}: [{key}.{name}]: {name!r} is not a {kind} of the sweep "
                        f"({', '.join(sorted(named))})"
                    )
        seeds = _parse_seeds(data.get("seeds"), f"{origin}: seeds")
        return cls(
            workloads=workloads,
            policies=policies,
            backfills=backfills,
            seeds=seeds,
            procs=procs,
            platform=data.get("platform"),
            allocation=data.get("allocation"),
            metrics=None if metrics is None else _names(metrics, "metrics", origin),
            by=by,
            out=data.get("out"),
            policy_options=keyed["policy_options"],
            metric_options=flat["metric_options"],
            read_options=flat["read_options"],
            estimators=estimators,
            backfill_options=keyed["backfill_options"],
            estimator_options=keyed["estimator_options"],
            allocation_options=flat["allocation_options"],
            kill=data.get("kill", True),
            dependencies=data.get("dependencies", False),
            reader=data.get("from"),
        )

    def cells(self, registry: Any = None) -> list[Cell]:
        """The cells: workloads x seeds x policies x backfilling x estimators, in that
        nesting order.

        More than :data:`MAX_CELLS` cells are a :class:`UsageError` (counted before
        any cell is made), and so are two entries of an axis that are one spelled
        two ways (:meth:`_check_same_entries`)."""
        from ..api import generator_source
        from ..registry import get_registry

        registry = registry or get_registry()
        generated = [generator_source(w, registry) is not None for w in self.workloads]
        per_workload = len(self.policies) * len(self.backfills) * len(self.estimators)
        count = sum(
            (len(self.seeds) if gen and self.seeds else 1) * per_workload for gen in generated
        )
        if count > MAX_CELLS:
            estimators = f", {len(self.estimators)} estimators" if len(self.estimators) > 1 else ""
            raise UsageError(
                f"the sweep has {count:,} cells ({len(self.workloads)} workloads, "
                f"{len(self.seeds):,} seeds, {len(self.policies)} policies, "
                f"{len(self.backfills)} backfilling strategies{estimators}); at most "
                f"{MAX_CELLS:,}: give fewer seeds, workloads, policies or backfilling "
                "strategies"
            )
        self._check_same_entries(registry)
        out = []
        for workload, gen in zip(self.workloads, generated, strict=True):
            seeds: list[int | None] = list(self.seeds) if gen and self.seeds else [None]
            for seed in seeds:
                for policy in self.policies:
                    for backfill in self.backfills:
                        for estimator in self.estimators:
                            out.append(
                                Cell(
                                    workload=workload,
                                    policy=policy,
                                    backfill=backfill,
                                    seed=seed,
                                    procs=self.procs,
                                    platform=self.platform,
                                    allocation=self.allocation,
                                    policy_options=self.policy_options.get(_base(policy)),
                                    metrics=self.metrics,
                                    by=self.by,
                                    metric_options=self.metric_options,
                                    read_options=self.read_options,
                                    estimator=estimator,
                                    backfill_options=self.backfill_options.get(_base(backfill)),
                                    estimator_options=self.estimator_options.get(_base(estimator)),
                                    allocation_options=self.allocation_options,
                                    kill=self.kill,
                                    dependencies=self.dependencies,
                                    reader=self.reader,
                                )
                            )
        return out

    def _check_same_entries(self, registry: Any) -> None:
        """A :class:`UsageError` naming the axis and both entries when two entries of
        an axis are one entry spelled two ways, which would run the same cells
        twice: a component under an alias (``NAME`` and ``ALIAS``) or with the
        same options given inline or in its option table (``NAME:depth=5`` and
        ``NAME`` with ``depth = 5``, or with the option's default value), a trace
        under two paths of one file (``t.swf`` and ``./t.swf``), a generator spec
        with the same options (:func:`_canonical_workload`)."""
        for axis, entries, kind, tables in (
            ("policies", self.policies, "policy", self.policy_options),
            ("backfill", self.backfills, "backfill", self.backfill_options),
            ("estimators", self.estimators, "estimator", self.estimator_options),
        ):
            seen: dict[Any, str] = {}
            for entry in entries:
                same, described = _canonical_component(
                    kind, entry, tables.get(_base(entry)), registry
                )
                if same in seen:
                    raise UsageError(
                        f"{axis}: {seen[same]!r} and {entry!r} are the same {kind} "
                        f"({described}): it would run the same cells twice"
                    )
                seen[same] = entry
        workloads: dict[Any, str] = {}
        for workload in self.workloads:
            same = _canonical_workload(workload, registry)
            if same in workloads:
                raise UsageError(
                    f"workloads: {workloads[same]!r} and {workload!r} are the same workload: "
                    "it would run the same cells twice"
                )
            workloads[same] = workload


def _canonical_component(
    kind: str, spec: str, options: Mapping[str, Any] | None, registry: Any
) -> tuple[tuple[Any, ...], str]:
    """What tells two spellings of a component apart, and its description for an
    error: its registered name (an alias resolved) and every option's value once
    parsed, defaults filled in (the inline ones of ``NAME:key=value`` merged with
    ``options``, as :func:`schedlab.simulate` merges them); described as the name
    and the options given (``NAME depth=5``). A spelling that cannot be resolved
    here (an unknown name, a bad option, a key given both ways with two values) is
    only itself: its cell reports it when it runs."""
    from ..errors import SchedlabError

    try:
        name, inline = parse_spec(spec) if ":" in spec else (spec.strip(), {})
        for key, value in (options or {}).items():
            if key in inline and str(inline[key]) != str(value).strip():
                return ("as written", spec), spec
        component = registry.get(kind, name)
        merged = {**inline, **(options or {})}
        parsed = component.parse_options(merged, kind)
    except (SchedlabError, ValueError, TypeError):
        return ("as written", spec), spec
    given = ",".join(f"{k}={v}" for k, v in _freeze_text(merged))
    described = f"{component.name} {given}" if given else str(component.name)
    return (component.name, tuple(sorted((k, repr(v)) for k, v in parsed.items()))), described


def _freeze_text(options: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((str(k), str(v)) for k, v in options.items()))


def _canonical_workload(workload: str, registry: Any) -> tuple[Any, ...]:
    """What tells two spellings of a workload apart: a file that exists by its real
    path; a generator spec by the generator's name and its options (values naming a
    file by the file's real path); any other text by its normalized path."""
    from ..api import generator_source
    from ..errors import SchedlabError

    if os.path.exists(workload):
        return ("file", os.path.realpath(workload))
    try:
        found = generator_source(workload, registry)
        if found is not None:
            generator, options = found
            resolved = {
                k: os.path.realpath(v) if v and os.path.exists(v) else v for k, v in options.items()
            }
            return ("generator", generator.name, _freeze_text(resolved))
    except (SchedlabError, ValueError, TypeError):
        pass
    return ("path", os.path.normpath(workload))


def _base(spec: str) -> str:
    """The component name of an axis entry: ``NAME`` for ``NAME:key=value``; the key of
    its ``[policy_options.NAME]`` (...) table."""
    return spec.split(":", 1)[0].strip()


class _DuplicateKey(Exception):
    """A JSON object naming a key twice (``json`` keeps the last one silently)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def load_config(path: str | os.PathLike[str]) -> SweepConfig:
    """Read a sweep file: ``.toml`` (tomllib / tomli) or ``.json``.

    Relative paths in the file (trace ``workloads``, ``platform``, ``out``, and the
    files named inside a generator spec: :func:`_spec_paths_in`) are taken from the
    file's folder, as config files usually do: the returned config holds them
    joined to the folder of ``path`` as given (unchanged for a file in the current
    folder). A leading ``~`` is the home folder (:func:`_expand_home`). Generator
    specs and absolute paths are otherwise kept as written."""
    from ..platform import _parser_failure, read_config_bytes

    path = Path(path)
    raw = read_config_bytes(str(path), UsageError)
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(raw, object_pairs_hook=_unique_keys)
        except UnicodeDecodeError as exc:
            raise UsageError(
                f"{path}: not valid JSON: not {exc.encoding} text (byte {exc.start})"
            ) from None
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
        except _DuplicateKey as exc:
            raise UsageError(f"{path}: key {exc.args[0]!r} given twice") from None
        except (RecursionError, ValueError, MemoryError) as exc:
            raise UsageError(f"{path}: not valid JSON: {_parser_failure(exc)}") from None
    else:
        try:
            import tomllib
        except ImportError:  # Python 3.10
            try:
                import tomli as tomllib  # type: ignore[no-redef]
            except ImportError:
                raise UsageError(
                    f"{path}: reading TOML on Python 3.10 needs 'tomli' (pip install tomli), "
                    "or write the sweep as JSON"
                ) from None
        try:
            data = tomllib.loads(raw.decode("utf-8").removeprefix("\ufeff"))  # a BOM
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise UsageError(f"{path}: not valid TOML: {exc}") from None
        except (RecursionError, ValueError, MemoryError) as exc:
            # tomllib recurses per nested array or inline table, and its int()
            # refuses more than 4,300 digits.
            raise UsageError(f"{path}: not valid TOML: {_parser_failure(exc)}") from None
    if not isinstance(data, Mapping):
        raise UsageError(f"{path}: expected a table of settings at the top level")
    config = SweepConfig.from_mapping(data, origin=str(path))
    folder = os.path.dirname(str(path))
    config.workloads = [
        _workload_in(workload, folder, f"{path}: workloads") for workload in config.workloads
    ]
    if config.platform is not None:
        config.platform = _path_in(config.platform, folder, f"{path}: platform")
    if config.out is not None:
        config.out = _path_in(config.out, folder, f"{path}: out")
    return config


def _expand_home(path: str, what: str) -> str:
    """``path`` with a leading ``~`` or ``~user`` replaced by that home folder
    (:func:`os.path.expanduser`); a ``~user`` naming no known user is a
    :class:`UsageError` naming ``what`` (the option or key), rather than a folder
    literally named ``~user``."""
    if not path.startswith("~"):
        return path
    expanded = os.path.expanduser(path)
    if expanded.startswith("~"):
        user = path[1:].split("/", 1)[0].split(os.sep, 1)[0]
        raise UsageError(f"{what}: {path!r}: no home folder is known for user {user!r}")
    return expanded


def _path_in(path: str, folder: str, what: str = "path") -> str:
    """A path of a sweep file taken from the file's ``folder``: ``folder/path``,
    unless it is absolute; a leading ``~`` is the home folder (:func:`_expand_home`)."""
    path = _expand_home(path, what)
    if os.path.isabs(path) or not folder:
        return path
    return os.path.join(folder, path)


def _workload_in(workload: str, folder: str, what: str = "workloads") -> str:
    """A workload of a sweep file: a trace path is taken from the file's ``folder``
    (:func:`_path_in`); a generator spec (``NAME:key=value``) is left as it is but
    for its options naming files (:func:`_spec_paths_in`), as is any text with a
    ``:`` that names no file in the folder (an unknown generator's spec: its error
    names it as written)."""
    from ..api import generator_source
    from ..registry import get_registry

    joined = _path_in(workload, folder, what)
    if workload.startswith("~") or os.path.exists(joined):
        return joined
    if ":" in workload or generator_source(workload, get_registry()) is not None:
        return _spec_paths_in(workload, folder, what)
    return joined


def _spec_paths_in(workload: str, folder: str, what: str = "workloads") -> str:
    """A generator spec with its options that name files taken as the paths of a
    sweep file are (``tsafrir-estimates:base=traces/t.swf`` in ``proj/s.toml`` reads
    ``proj/traces/t.swf``): a value starting with ``~`` is in the home folder, and a
    relative value naming a file or folder in ``folder`` is joined to it. Generators
    do not declare which options are files, so only a value written as a path
    (:func:`~schedlab.experiment.sweep._looks_like_path`: ``traces/t.swf``,
    ``t.swf``, not ``CF``) counts, and one naming nothing there is left as it is
    (taken from the current folder, if at all). ``folder`` ``""``
    (the command line) only expands ``~``. Other workloads are returned as they
    are."""
    from ..api import generator_source
    from ..registry import get_registry

    if ":" not in workload or os.path.exists(workload):
        return workload
    try:
        if generator_source(workload, get_registry()) is None:
            return workload
        name, options = parse_spec(workload)
    except UsageError:
        return workload  # a malformed spec: its cell says so, as written
    changed = False
    for key, value in options.items():
        if not _looks_like_path(value):
            continue
        path = _expand_home(value, f"{what}: {workload!r}: {key}")
        if folder and not os.path.isabs(path) and os.path.exists(os.path.join(folder, path)):
            path = os.path.join(folder, path)
        if path != value:
            options[key] = path
            changed = True
    if not changed:
        return workload
    return f"{name}:" + ",".join(f"{k}={v}" for k, v in options.items())
