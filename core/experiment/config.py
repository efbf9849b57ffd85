"""Sweep definitions: a small TOML (or JSON) file, or the same keys as options.

Example ``sweep.toml`` (every name is a registered plugin's, looked up when the
sweep runs; ``docs/experiments.md`` has one with the built-in plugins)::

    workloads = ["mygen:kind=a", "mygen:kind=b", "traces/site.swf"]
    policies = ["mypolicy", "otherpolicy"]
    backfill = ["mybackfill"]
    seeds = [1, 2, 3, 4]          # or "1-4"; applied to generator workloads only
    procs = 32                    # optional machine size (default: from the workload)
    platform = "cluster.toml"     # or a platform file instead (docs/platform.md)
    allocation = "best-fit"       # with a platform: the allocation policy
    metrics = ["mymetric"]        # default: every metric
    by = "accuracy-class"         # optional grouping
    out = "sweep-out"             # optional output folder (the CLI's --out wins)

    [policy_options.mypolicy]
    window = 10

    [metric_options]
    weight = "jobs"

    [read_options]                # options of the readers of trace files (-R)
    lenient = true

``policies`` and ``backfill`` default to :data:`~schedlab.experiment.DEFAULT_POLICY`
and :data:`~schedlab.experiment.DEFAULT_BACKFILL` (names, resolved through the
registry like any other).

A workload that is a generator spec (``NAME:...`` naming an installed generator)
gets one cell per seed; a trace file gets one cell (seed ``None``). TOML needs
Python 3.11's ``tomllib`` (or the ``tomli`` package on 3.10); JSON files with the
same keys always work.
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

from ..errors import UsageError
from .sweep import DEFAULT_BACKFILL, DEFAULT_POLICY, Cell

KNOWN_KEYS = frozenset(
    {
        "workloads",
        "policies",
        "backfill",
        "backfills",
        "seeds",
        "procs",
        "platform",
        "allocation",
        "metrics",
        "by",
        "out",
        "policy_options",
        "metric_options",
        "read_options",
    }
)


def _seed(value: Any) -> int:
    """One seed: a whole number >= 0 (text, an int, or a float with no fraction)."""
    if isinstance(value, str):
        try:
            number = int(value)
        except ValueError:
            raise UsageError(f"seeds: expected whole numbers, got {value!r}") from None
    elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
        number = int(value)
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        number = int(value)
    else:
        raise UsageError(f"seeds: expected whole numbers, got {value!r}")
    if number < 0:
        raise UsageError(f"seeds: a seed must not be negative, got {value!r}")
    return number


def parse_seeds(value: Any) -> list[int]:
    """Seeds from a list, an int, or text such as ``"1-4"`` / ``"1,2,7"`` / ``"1-3,9"``:
    whole numbers >= 0 (what every generator's ``seed`` takes); more than
    :data:`MAX_CELLS` are refused before a range is expanded."""
    if value is None:
        return []
    check_seed_count(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return [_seed(value)]
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
                    f"seeds: expected numbers or ranges like 1-4, got {part!r}"
                ) from None
        return [_seed(seed) for seed in out]
    if isinstance(value, Sequence):
        return [_seed(v) for v in value]
    raise UsageError(f"seeds: expected a list or a range like 1-4, got {value!r}")


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


def _names(value: Any, key: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()] if key != "workloads" else [value]
    if isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        return list(value)
    raise UsageError(f"{key}: expected a list of names, got {value!r}")


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

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], origin: str = "sweep") -> SweepConfig:
        """Build from parsed TOML/JSON, with one-line errors for unknown or bad keys."""
        unknown = sorted(set(data) - KNOWN_KEYS)
        if unknown:
            raise UsageError(
                f"{origin}: unknown key {unknown[0]!r} (keys: {', '.join(sorted(KNOWN_KEYS))})"
            )
        workloads = _names(data.get("workloads"), "workloads")
        if not workloads:
            raise UsageError(f"{origin}: give at least one workload")
        policies = _names(data.get("policies"), "policies") or [DEFAULT_POLICY]
        backfill = data.get("backfill", data.get("backfills"))
        backfills = _names(backfill, "backfill") or [DEFAULT_BACKFILL]
        procs = data.get("procs")
        if procs is not None and (not isinstance(procs, int) or procs <= 0):
            raise UsageError(f"{origin}: procs must be a positive whole number, got {procs!r}")
        policy_options = data.get("policy_options") or {}
        if not isinstance(policy_options, Mapping) or not all(
            isinstance(v, Mapping) for v in policy_options.values()
        ):
            raise UsageError(f"{origin}: policy_options must be tables keyed by policy name")
        metric_options = data.get("metric_options") or {}
        if not isinstance(metric_options, Mapping):
            raise UsageError(f"{origin}: metric_options must be a table")
        read_options = data.get("read_options") or {}
        if not isinstance(read_options, Mapping):
            raise UsageError(f"{origin}: read_options must be a table")
        metrics = data.get("metrics")
        for key in ("platform", "allocation"):
            if data.get(key) is not None and not isinstance(data.get(key), str):
                raise UsageError(f"{origin}: {key} must be a string, got {data.get(key)!r}")
        if data.get("platform") is not None and procs is not None:
            raise UsageError(f"{origin}: give procs or platform, not both")
        check_seed_count(data.get("seeds"), f"{origin}: seeds")
        return cls(
            workloads=workloads,
            policies=policies,
            backfills=backfills,
            seeds=parse_seeds(data.get("seeds")),
            procs=procs,
            platform=data.get("platform"),
            allocation=data.get("allocation"),
            metrics=None if metrics is None else _names(metrics, "metrics"),
            by=data.get("by"),
            out=data.get("out"),
            policy_options={k: dict(v) for k, v in policy_options.items()},
            metric_options=dict(metric_options),
            read_options=dict(read_options),
        )

    def cells(self, registry: Any = None) -> list[Cell]:
        """The cells: workloads x seeds x policies x backfilling, in that nesting order.

        More than :data:`MAX_CELLS` cells are a :class:`UsageError` (counted before
        any cell is made)."""
        from ..api import generator_source
        from ..registry import get_registry

        registry = registry or get_registry()
        generated = [generator_source(w, registry) is not None for w in self.workloads]
        per_workload = len(self.policies) * len(self.backfills)
        count = sum(
            (len(self.seeds) if gen and self.seeds else 1) * per_workload for gen in generated
        )
        if count > MAX_CELLS:
            raise UsageError(
                f"the sweep has {count:,} cells ({len(self.workloads)} workloads, "
                f"{len(self.seeds):,} seeds, {len(self.policies)} policies, "
                f"{len(self.backfills)} backfilling strategies); at most {MAX_CELLS:,}: "
                "give fewer seeds, workloads, policies or backfilling strategies"
            )
        out = []
        for workload, gen in zip(self.workloads, generated, strict=True):
            seeds: list[int | None] = list(self.seeds) if gen and self.seeds else [None]
            for seed in seeds:
                for policy in self.policies:
                    for backfill in self.backfills:
                        out.append(
                            Cell(
                                workload=workload,
                                policy=policy,
                                backfill=backfill,
                                seed=seed,
                                procs=self.procs,
                                platform=self.platform,
                                allocation=self.allocation,
                                policy_options=self.policy_options.get(policy),
                                metrics=self.metrics,
                                by=self.by,
                                metric_options=self.metric_options,
                                read_options=self.read_options,
                            )
                        )
        return out


def load_config(path: str | os.PathLike[str]) -> SweepConfig:
    """Read a sweep file: ``.toml`` (tomllib / tomli) or ``.json``."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror or exc}") from None
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
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
            data = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise UsageError(f"{path}: not valid TOML: {exc}") from None
    if not isinstance(data, Mapping):
        raise UsageError(f"{path}: expected a table of settings at the top level")
    return SweepConfig.from_mapping(data, origin=str(path))
