"""The metrics engine behind :func:`schedlab.compute_metrics` and ``schedlab metrics``.

Metrics are plugins (:class:`~schedlab.plugin_types.MetricSpec`): *per-job* metrics
return one value per job and are summarised here by statistics (by default
:data:`STATS`: mean, median, 90th and 99th percentile, max; ``stats=`` picks others:
``min``, any percentile ``pNN`` such as ``p95`` or ``p99.9``, and the statistics of
plugins, :class:`~schedlab.plugin_types.StatisticSpec`), overall and per group;
*scalar* metrics (makespan, utilization, fairness ...) return one number for the
whole schedule. Everything is vectorised over the workload's columns: no Python loop
runs per job (a plugin statistic is called once per group).

Groupings (``by=``):

``user`` / ``queue`` / ``partition``
    one group per user id / queue number / partition number (SWF fields 12, 15,
    16), in numeric order; the group keys are those numbers (``int``).
``size``
    job size classes by powers of two of the processors used (allocated when known
    and positive, else requested): ``1``, ``2-3``, ``4-7``, ``8-15`` ...
``accuracy-class``
    the PSP paper's Table 3: each user is placed in the accuracy class (``a1`` ..
    ``a5``) of the mean estimate accuracy of their last ``window`` (default 10) jobs
    by completion time, and all their jobs count in that class (with a warm-up or
    cool-down, the user's measured jobs decide the class). Every class is listed,
    empty ones too.

Jobs whose group is unknown go to a last group ``unknown``. A grouped report ends
with an ``all`` row (``total=False`` drops it). Scalar metrics declared
``per_group`` (makespan, utilization, throughput, work) are computed for each group
too, on the group's jobs: makespan over the group's own first submit to last end;
utilization and throughput over the period of the whole report (so the groups'
utilizations add up to the ``all`` row's); work is the group's processor-hours. The
other scalar metrics (loss of capacity, fairness, third-party ones) are whole-schedule
only: the ``all`` row, and a note says so.

Warm-up and cool-down (``warmup=``, ``cooldown=``: seconds, ``30min``, ``12h``,
``2d`` or a percentage ``10%`` of the span of submit times): jobs submitted in the
first ``warmup`` or the last ``cooldown`` of the trace are left out of the per-job
metrics, and the system metrics are measured over the window between (from first
submit + warm-up to last submit - cool-down: the drain after the last submission is
outside it), as the literature advises for steady-state results (Frachtenberg and
Feitelson, "Pitfalls in Parallel Job Scheduling Evaluation", JSSPP 2005; Feitelson,
"Workload Modeling for Computer Systems Performance Evaluation", 2015).

Jobs without a value for a metric (unknown wait in a trace, run time 0 for the
slowdown ...) are left out of that metric's statistics and counted: each statistic
block has ``count`` (jobs used) and ``unknown`` (jobs left out), and the report's
``notes`` say it in words. A negative wait, run time, requested time or processor
count other than -1 is invalid and counts as unknown (a note says how many), and
the records a lenient read skipped (``Workload.meta["skipped"]``) are counted in a
note too.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import io
import json
import math
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

import attrs
import numpy as np

from .accuracy import (
    PSP_EDGES,
    PSP_WINDOW,
    UNKNOWN_CLASS,
    class_intervals,
    class_labels,
    estimate_accuracy,
    parse_edges,
    user_accuracy_classes,
)
from .errors import PluginRuntimeError, PluginRuntimeWarning, SchedlabError, UsageError
from .model import Header, JobColumns, Workload, _read_only
from .plugin_types import MetricSpec, OptionSpec, StatisticSpec

#: Statistics of every per-job metric by default, in report order.
STATS: tuple[str, ...] = ("mean", "median", "p90", "p99", "max")
#: Statistics the engine computes itself, besides any percentile ``pNN``.
BUILTIN_STATS: tuple[str, ...] = ("mean", "median", "min", "max")
#: Quantile of each percentile statistic of :data:`STATS` (any ``pNN`` works).
QUANTILES: dict[str, float] = {"median": 0.5, "p90": 0.9, "p99": 0.99}
#: Keys of a statistics block that are not statistics (no statistic may take them).
BLOCK_KEYS: tuple[str, ...] = ("count", "unknown")
#: The groupings ``by=`` accepts.
GROUPINGS: tuple[str, ...] = ("user", "queue", "partition", "size", "accuracy-class")
_PERCENTILE_RE = re.compile(r"^p(\d+(?:\.\d+)?)$")
_NUMBER_GROUPINGS: dict[str, tuple[str, str]] = {
    "user": ("user_id", "User"),
    "queue": ("queue_number", "Queue"),
    "partition": ("partition_number", "Partition"),
}
#: Built-in metrics in the order reports list them; other metrics follow by name.
PREFERRED_ORDER: tuple[str, ...] = (
    "wait",
    "response",
    "slowdown",
    "bounded-slowdown",
    "accuracy",
    "prediction-error",
    "under-prediction",
    "prediction-accuracy",
    "makespan",
    "utilization",
    "throughput",
    "loss-of-capacity",
    "fairness",
)
#: Group label of the whole workload.
ALL = "all"
#: Group label of jobs whose group is unknown.
UNKNOWN = UNKNOWN_CLASS


class MetricUnavailable(SchedlabError):
    """Raised by a metric's ``compute`` when the data cannot give it a value (no
    machine size, no job with known times ...). The report shows the metric as
    unavailable with this message instead of failing."""


class UnknownNameError(UsageError, KeyError):
    """A metric, statistic or group a :class:`MetricsReport` does not hold; the
    message lists the ones it does. Both a :class:`~schedlab.UsageError` and a
    :class:`KeyError`."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def quantile_of(stat: str) -> float | None:
    """The quantile of a percentile statistic (``median`` -> 0.5, ``p95`` -> 0.95,
    ``p99.9`` -> 0.999), ``None`` for other names; a percentile above 100 raises
    :class:`~schedlab.UsageError`."""
    if stat == "median":
        return 0.5
    match = _PERCENTILE_RE.match(stat)
    if match is None:
        return None
    q = float(match[1])
    if q > 100:
        raise UsageError(f"statistic {stat!r}: a percentile is between p0 and p100")
    return q / 100.0


def statistic_plugins(registry: Any) -> dict[str, StatisticSpec]:
    """Name and alias -> record of every installed plugin statistic."""
    out: dict[str, StatisticSpec] = {}
    for spec in registry.all("statistic"):
        for name in (spec.name, *spec.aliases):
            out[name] = spec
    return out


def parse_stats(
    value: str | Iterable[str] | None, registry: Any = None
) -> tuple[tuple[str, ...], dict[str, StatisticSpec]]:
    """Statistic names (comma-separated text or a sequence) checked and without
    duplicates, with the plugin statistics among them (by name). A plugin alias
    becomes the plugin's name. Unknown names raise :class:`~schedlab.UsageError`
    listing the valid ones."""
    if value is None:
        return STATS, {}
    if not isinstance(value, (str, Iterable)):
        raise UsageError(f"stats: expected names ('mean,p95' or a list), got {value!r}")
    names = [n.strip() for n in value.split(",")] if isinstance(value, str) else list(value)
    names = [n for n in names if n]
    if not names:
        raise UsageError("stats: give at least one statistic")
    plugins: dict[str, StatisticSpec] | None = None
    out: list[str] = []
    used: dict[str, StatisticSpec] = {}
    for name in names:
        if not isinstance(name, str):
            raise UsageError(f"stats: a statistic is a name, got {name!r}")
        if name in BUILTIN_STATS or quantile_of(name) is not None:
            canonical = name
        else:
            if plugins is None:
                from .registry import get_registry

                plugins = statistic_plugins(registry or get_registry())
            spec = plugins.get(name)
            if spec is None:
                extra = sorted({s.name for s in plugins.values()})
                valid = ", ".join([*BUILTIN_STATS, "pNN (any percentile: p95, p99.9 ...)", *extra])
                raise UsageError(f"unknown statistic {name!r} (statistics: {valid})")
            canonical = spec.name
            used[canonical] = spec
        if canonical not in out:
            out.append(canonical)
    return tuple(out), used


_DURATION_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(%|s|min|h|d)?\s*$")


def parse_span_part(text: Any, span: float, option: str) -> float:
    """Seconds of a warm-up or cool-down: a number of seconds, ``30min``, ``12h``,
    ``2d``, or a percentage ``10%`` of ``span`` (the span of submit times)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
        if not seconds >= 0 or math.isinf(seconds):
            raise UsageError(f"metrics: option {option}={text!r}: expected seconds >= 0")
        return seconds
    match = _DURATION_RE.match(str(text))
    if match is None:
        raise UsageError(
            f"metrics: option {option}={text!r}: expected seconds, 30min, 12h, 2d or a "
            "percentage such as 10%"
        )
    number, unit = float(match[1]), match[2] or "s"
    if unit == "%":
        if number > 100:
            raise UsageError(f"metrics: option {option}={text!r}: at most 100%")
        return span * number / 100.0
    return number * _DURATION_UNITS[unit]


#: Options of the engine itself (metric plugins declare their own).
ENGINE_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("window", int, PSP_WINDOW, "accuracy-class: jobs in a user's accuracy window"),
    OptionSpec("edges", parse_edges, PSP_EDGES, "accuracy-class: class edges, e.g. 0.2/0.4/0.8"),
    OptionSpec(
        "weight",
        str,
        "jobs",
        "jobs: statistics over jobs; users: over per-user means (each user counts once)",
        ("jobs", "users"),
    ),
    OptionSpec("total", bool, True, "grouped reports end with an 'all' row"),
    OptionSpec(
        "stats",
        str,
        ",".join(STATS),
        "statistics of per-job metrics: mean, median, min, max, pNN (p95, p99.9) or a "
        "plugin statistic, comma-separated",
    ),
    OptionSpec(
        "warmup",
        str,
        "0",
        "leave out jobs submitted in the first part of the trace (seconds, 12h, 2d or 10%)",
    ),
    OptionSpec(
        "cooldown",
        str,
        "0",
        "leave out jobs submitted in the last part of the trace (seconds, 12h, 2d or 10%)",
    ),
)


# --------------------------------------------------------------------------- helpers


def job_processors(columns: JobColumns) -> np.ndarray:
    """Processors each job used: allocated when known and positive, else requested
    when known and positive, else NaN (SWF logs write an allocation of 0 when it was
    not recorded; no job that ran used 0 processors)."""
    allocated = columns["allocated_processors"]
    requested = columns["requested_processors"]
    use_alloc = allocated > 0  # NaN compares False
    return np.where(use_alloc, allocated, np.where(requested > 0, requested, np.nan))


def largest_job(columns: JobColumns) -> tuple[float, int] | None:
    """``(processors of the largest job, jobs of that size or more)`` of ``columns``
    (sizes as :func:`job_processors`); ``None`` when no size is known."""
    sizes = job_processors(columns)
    known = sizes[~np.isnan(sizes)]
    if not len(known):
        return None
    largest = float(known.max())
    return largest, int((known >= largest).sum())


def procs_note(columns: JobColumns, procs: float) -> str | None:
    """The note of a machine of ``procs`` processors smaller than some jobs (their
    area counts in full: utilization and loss of capacity may exceed 1, which no
    schedule on that machine could give), else ``None``."""
    sizes = job_processors(columns)
    over = int((sizes > procs).sum())  # NaN compares False
    if not over:
        return None
    return (
        f"{over:,} job(s) use more than the machine's {procs:,.0f} processors (the largest "
        f"{float(np.nanmax(sizes)):,.0f}): utilization and loss of capacity count them in "
        "full and may exceed 1"
    )


def size_class_index(size: np.ndarray) -> np.ndarray:
    """Power-of-two size class of each job: ``k`` for ``2**k <= size < 2**(k+1)``;
    -1 for unknown sizes or sizes below 1."""
    size = np.asarray(size, dtype=np.float64)
    out = np.full(len(size), -1, dtype=np.int64)
    ok = size >= 1
    out[ok] = np.floor(np.log2(size[ok]) + 1e-12).astype(np.int64)
    return out


def size_class_label(k: int) -> str:
    """Label of size class ``k``: ``"1"``, ``"2-3"``, ``"4-7"`` ..."""
    lo, hi = 2**k, 2 ** (k + 1) - 1
    return str(lo) if lo == hi else f"{lo}-{hi}"


def completion_time(columns: JobColumns) -> np.ndarray:
    """submit + wait + run of each job (NaN when any is unknown)."""
    return columns["submit_time"] + columns["wait_time"] + columns["run_time"]


def grouped_statistics(
    codes: np.ndarray,
    values: np.ndarray,
    n_groups: int,
    stats: Sequence[str] = STATS,
    plugins: Mapping[str, StatisticSpec] | None = None,
    registry: Any = None,
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Per-group statistics ``stats`` of ``values`` (NaN values ignored).

    ``codes`` are group numbers in ``[0, n_groups)``. ``stats`` are built-in names
    (:data:`BUILTIN_STATS`, any percentile ``pNN``) or names of ``plugins``, whose
    ``compute`` is called once per group with the group's values sorted ascending.
    Percentiles interpolate linearly between order statistics (numpy's default
    ``linear`` method). Returns ``(stats, counts)``: each statistic is an array of
    ``n_groups`` floats (NaN for a group without values) and ``counts`` the number of
    values per group. A plugin statistic that fails is blamed (a one-line
    :class:`~schedlab.errors.PluginRuntimeError` naming it) through ``registry``,
    the registry ``plugins`` came from (default: the process-wide one).
    """
    plugins = plugins or {}
    known = ~np.isnan(values)
    c, v = sort_by_group(np.asarray(codes)[known], np.asarray(values, np.float64)[known], n_groups)
    v.flags.writeable = False  # a plugin statistic writing its values must not change the rest
    counts = np.bincount(c, minlength=n_groups)[:n_groups]
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    has = counts > 0
    out: dict[str, np.ndarray] = {}
    sums = np.bincount(c, weights=v, minlength=n_groups)[:n_groups]
    mean = np.full(n_groups, np.nan)
    np.divide(sums, counts, out=mean, where=has)
    for name in stats:
        if name == "mean":
            out["mean"] = mean
            continue
        result = np.full(n_groups, np.nan)
        spec = plugins.get(name)
        if spec is not None:
            if registry is None:
                from .registry import get_registry

                registry = get_registry()
            with registry.blame(spec):  # a third-party statistic's bug names it
                for g in np.flatnonzero(has).tolist():
                    result[g] = float(spec.compute(v[starts[g] : starts[g] + counts[g]]))
        elif name == "max":
            result[has] = v[starts[has] + counts[has] - 1]
        elif name == "min":
            result[has] = v[starts[has]]
        else:
            quantile = quantile_of(name)
            if quantile is None:
                raise UsageError(f"unknown statistic {name!r}")
            pos = quantile * (counts[has] - 1)
            lo = np.floor(pos).astype(np.int64)
            hi = np.minimum(lo + 1, counts[has] - 1)
            frac = pos - lo
            a, b = v[starts[has] + lo], v[starts[has] + hi]
            with np.errstate(invalid="ignore"):  # inf - inf when both ends are inf
                result[has] = np.where(a == b, a, a + (b - a) * frac)
        out[name] = result
    return out, counts


def sort_by_group(
    codes: np.ndarray, values: np.ndarray, n_groups: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, values)`` sorted by group, then by value (no NaN allowed).

    One sort of the values, then a stable (radix, for fewer than 65,536 groups) sort
    by group: much faster than ``np.lexsort`` on a million jobs.
    """
    if n_groups <= 1:
        return codes, np.sort(values)
    order = np.argsort(values)
    c = codes[order]
    regroup = np.argsort(c.astype(np.uint16) if n_groups < 2**16 else c, kind="stable")
    return c[regroup], values[order[regroup]]


def code_users(users: np.ndarray) -> tuple[np.ndarray, int]:
    """Small-integer code of each job's user (``0 .. n-1`` in id order) and ``n``;
    jobs with an unknown user share the last code ``n`` (one pseudo-user)."""
    known = ~np.isnan(users)
    uniq, inverse = np.unique(users[known], return_inverse=True)
    codes = np.full(len(users), len(uniq), dtype=np.int64)
    codes[known] = np.asarray(inverse).reshape(-1)
    return codes, len(uniq)


def pair_codes(codes: np.ndarray, user_codes: np.ndarray, n_users: int) -> np.ndarray:
    """One int64 per (group, user) pair (``user_codes`` from :func:`code_users`)."""
    return codes.astype(np.int64) * (n_users + 1) + user_codes


def per_user_means(
    codes: np.ndarray, user_codes: np.ndarray, n_users: int, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Mean of ``values`` per (group, user) pair: returns ``(group of each pair,
    mean)``. NaN values are ignored and pairs without any value are dropped; jobs with
    an unknown user count as one pseudo-user per group."""
    known = ~np.isnan(values)
    keys = pair_codes(np.asarray(codes)[known], user_codes[known], n_users)
    unique, inverse = np.unique(keys, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    sums = np.bincount(inverse, weights=values[known], minlength=len(unique))
    counts = np.bincount(inverse, minlength=len(unique))
    return unique // (n_users + 1), sums / counts


def _number_label(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


# --------------------------------------------------------------------------- grouping


@attrs.define(slots=True)
class Grouping:
    """Jobs assigned to groups: ``codes[i]`` is job ``i``'s group number."""

    codes: np.ndarray
    #: Group keys: ``int`` user, queue and partition numbers; ``str`` otherwise.
    labels: list[Any]
    #: Optional display names per group (user / queue names from the header).
    names: dict[Any, str] = attrs.field(factory=dict)
    description: str = ""


def _by_number(values: np.ndarray) -> tuple[np.ndarray, list[Any], np.ndarray]:
    known = ~np.isnan(values)
    uniq, inverse = np.unique(values[known], return_inverse=True)
    codes = np.full(len(values), len(uniq), dtype=np.int64)
    codes[known] = np.asarray(inverse).reshape(-1)
    labels: list[Any] = [_number_label(v) for v in uniq.tolist()]
    if not known.all():
        labels.append(UNKNOWN)
    return codes, labels, uniq


def group_jobs(
    columns: JobColumns,
    by: str,
    header: Header | None = None,
    window: int = PSP_WINDOW,
    edges: Sequence[float] = PSP_EDGES,
    measured: np.ndarray | None = None,
) -> Grouping:
    """Assign each job to a group of ``by`` (one of :data:`GROUPINGS`).

    ``measured`` (a boolean mask, the jobs of a warm-up/cool-down window) makes
    ``accuracy-class`` class each user on their measured jobs only; the jobs of a
    user with no measured job of known accuracy go to ``unknown``."""
    if by in _NUMBER_GROUPINGS:
        field, header_label = _NUMBER_GROUPINGS[by]
        codes, labels, uniq = _by_number(columns[field])
        names: dict[Any, str] = {}
        if header is not None:
            table = header.names(header_label)
            for value, label in zip(uniq.tolist(), labels, strict=False):
                if float(value).is_integer() and int(value) in table:
                    names[label] = table[int(value)]
        return Grouping(codes, labels, names, f"one group per {by}")
    if by == "size":
        index = size_class_index(job_processors(columns))
        present = np.unique(index[index >= 0])
        codes = np.searchsorted(present, index)
        labels = [size_class_label(int(k)) for k in present.tolist()]
        if (index < 0).any():
            codes = np.where(index < 0, len(present), codes)
            labels.append(UNKNOWN)
        return Grouping(
            codes.astype(np.int64),
            labels,
            description="job size classes by powers of two of the processors used "
            "(allocated when known and positive, else requested): 1, 2-3, 4-7, ...",
        )
    if by == "accuracy-class":
        acc = estimate_accuracy(columns["run_time"], columns["requested_time"])
        if measured is not None:  # jobs left out of the window do not class their user
            acc = np.where(measured, acc, np.nan)
        klass = user_accuracy_classes(
            columns["user_id"], completion_time(columns), acc, window, edges
        )
        labels = class_labels(edges)
        codes = np.where(klass == 0, len(labels), klass - 1)
        if (klass == 0).any():
            labels.append(UNKNOWN)
        intervals = ", ".join(
            f"{label}={interval}"
            for label, interval in zip(class_labels(edges), class_intervals(edges), strict=True)
        )
        return Grouping(
            codes.astype(np.int64),
            labels,
            description=f"each user's jobs are in the class of the mean accuracy of the "
            f"user's last {window} {'measured ' if measured is not None else ''}jobs by "
            f"completion time ({intervals})",
        )
    raise UsageError(f"unknown grouping {by!r} (choose from {', '.join(GROUPINGS)})")


# --------------------------------------------------------------------------- report


@attrs.define(slots=True, frozen=True)
class MetricInfo:
    """Name, unit and meaning of a metric in a report."""

    name: str
    unit: str
    description: str
    per_job: bool
    better: str = ""
    #: A scalar metric also computed for each group of a grouped report.
    per_group: bool = False


def _clean(value: Any) -> Any:
    """NaN -> None and numpy scalars -> Python numbers, recursively (for JSON)."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return None if math.isnan(f) or math.isinf(f) else f
    return value


def _whole(value: Any) -> Any:
    """A float that is a whole number as an ``int`` (others unchanged)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


TIME_UNITS: dict[str, float] = {"s": 1.0, "min": 60.0, "h": 3600.0}


def format_number(value: Any) -> str:
    """A number for a table: thousands separators, fewer decimals for bigger values."""
    if value is None:
        return "-"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    v = float(value)
    if math.isnan(v):
        return "-"
    size = abs(round(v, 3))
    if size >= 100:
        return f"{v:,.0f}"
    if size >= 10:
        return f"{v:.1f}"
    if size >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


@attrs.define(slots=True)
class MetricsReport:
    """The result of :func:`compute_metrics`.

    ``rows`` holds one dict per group (one row ``all`` when not grouped), in group
    order: ``group`` (the group key: an ``int`` for users, queues and partitions, a
    ``str`` otherwise), optional ``name``, ``jobs``, ``users``, then for each per-job
    metric a dict of the report's :attr:`stats` plus ``count`` / ``unknown``, and for
    each scalar metric its value (``None`` when unavailable; in the ``all`` row, and
    in every row for ``per_group`` metrics). Values are in the metric's unit
    (seconds for times), except those of the statistics named in :attr:`unitless`
    (plugin statistics declaring ``unitless=True``), which have none.

    In a notebook the report shows as HTML tables; :meth:`to_pandas` and
    :meth:`to_arrow` give it as a table.
    """

    #: The grouping of the rows (``user``, ``queue``, ``partition``, ``size`` or
    #: ``accuracy-class``); ``None``: not grouped, one row ``all``.
    by: str | None
    #: What the report knows about each of its metrics (name, unit, per job or
    #: not ...), in column order.
    metrics: tuple[MetricInfo, ...]
    #: One dict per group, in group order (see above for its keys).
    rows: list[dict[str, Any]]
    #: Caveats about what was measured, one sentence each (skipped records, jobs
    #: excluded by the simulation, the warm-up/cool-down window ...).
    notes: list[str]
    #: The number of jobs the per-job metrics measured (those of the warm-up/
    #: cool-down window when one is set).
    jobs: int
    #: The machine size the system metrics used, in processors; ``None`` = unknown:
    #: the metrics that need it (utilization, loss of capacity) are unavailable.
    procs: float | None
    #: The engine and metric options as used, parsed (``stats`` as
    #: comma-separated text).
    options: dict[str, Any]
    #: The statistics of every per-job metric, in column order (``mean``,
    #: ``p90`` ...).
    stats: tuple[str, ...] = STATS
    #: Those of :attr:`stats` whose values have no unit (plugin statistics
    #: declaring ``unitless=True``).
    unitless: tuple[str, ...] = ()

    # -- access
    def row(self, group: Any = ALL) -> dict[str, Any]:
        """The row of ``group`` (``"all"`` by default). A group key may also be given
        as text (``"2"`` finds user 2); an unknown group raises
        :class:`UnknownNameError` listing the groups."""
        for row in self.rows:
            if row["group"] == group and type(row["group"]) is type(group):
                return row
        for row in self.rows:
            if str(row["group"]) == str(group):
                return row
        known = ", ".join(str(r["group"]) for r in self.rows)
        raise UnknownNameError(f"no group {group!r} in the report (groups: {known})")

    def info(self, metric: str) -> MetricInfo:
        """What the report knows about ``metric``; a metric it does not hold raises
        :class:`UnknownNameError` listing the ones it does."""
        for info in self.metrics:
            if info.name == metric:
                return info
        known = ", ".join(m.name for m in self.metrics) or "none"
        raise UnknownNameError(f"no metric {metric!r} in the report (metrics: {known})")

    def value(self, metric: str, stat: str | None = None, group: Any = ALL) -> float | None:
        """One number: ``stat`` (default ``mean``) of per-job ``metric`` in ``group``,
        or the value of a scalar metric; ``None`` when unknown (or, for a scalar
        metric not computed per group, in a group row).

        A metric, statistic or group the report does not hold raises
        :class:`UnknownNameError` (a :class:`~schedlab.UsageError` and a
        :class:`KeyError`) listing the valid ones: ``value("wiat")`` is an error,
        never ``None``. A scalar metric has no statistics (``stat`` must be
        ``None``, ``"mean"`` or ``"value"``)."""
        info = self.info(metric)
        row = self.row(group)
        entry = row.get(info.name)
        if info.per_job:
            stat = "mean" if stat is None else stat
            valid = (*self.stats, *BLOCK_KEYS)
            if stat not in valid:
                raise UnknownNameError(
                    f"no statistic {stat!r} of {metric} in the report (statistics: "
                    f"{', '.join(valid)}; compute others with stats=, e.g. "
                    f'stats="mean,p95")'
                )
            return _clean(entry.get(stat)) if isinstance(entry, dict) else None
        if stat not in (None, "mean", "value"):
            raise UnknownNameError(
                f"{metric} is a whole-schedule metric: it has one value, no statistic {stat!r}"
            )
        return _clean(entry)

    def column(self, metric: str, stat: str | None = None) -> dict[Any, float | None]:
        """``{group: value}`` for every row (the ``all`` row included)."""
        return {row["group"]: self.value(metric, stat, row["group"]) for row in self.rows}

    # -- tables for pandas, Arrow and notebooks
    def to_pandas(self, tidy: bool = False) -> Any:
        """The report as a :class:`pandas.DataFrame` (needs the ``pandas`` extra).

        Wide (default): one row per group, indexed by the group keys (index name:
        ``by``, or ``group``); columns ``name`` (when the header names groups),
        ``jobs``, ``users``, ``METRIC.STAT`` for each statistic of each per-job metric
        (plus ``METRIC.count`` and ``METRIC.unknown``), and one column per scalar
        metric. ``tidy=True``: one row per value, columns ``group``, ``metric``,
        ``statistic`` (``value`` for scalar metrics), ``value`` and ``unit``.
        """
        from .frames import report_frame

        return report_frame(self, tidy=tidy)

    def to_arrow(self, tidy: bool = False) -> Any:
        """The table of :meth:`to_pandas` as a :class:`pyarrow.Table` (needs pyarrow,
        extra ``parquet``); unknown values are nulls."""
        from .frames import report_table

        return report_table(self, tidy=tidy)

    def _repr_html_(self) -> str:
        from .frames import report_html

        return report_html(self)

    def __repr__(self) -> str:
        # Short on purpose (a notebook stores it next to the HTML): the rows are in
        # ``rows``, ``str(report)`` and ``to_pandas()``.
        groups = [r["group"] for r in self.rows if r["group"] != ALL]
        plural = "" if len(groups) == 1 else "s"
        grouping = f" by {self.by}: {len(groups):,} group{plural}" if self.by else ""
        return (
            f"<MetricsReport of {self.jobs:,} jobs{grouping}; "
            f"{len(self.metrics)} metrics: {', '.join(m.name for m in self.metrics)}>"
        )

    def metric_names(self, per_job: bool | None = None) -> list[str]:
        """Names of the metrics in the report (optionally only per-job or scalar ones)."""
        return [m.name for m in self.metrics if per_job is None or m.per_job == per_job]

    # -- serialisation
    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready: NaN becomes ``None``), in a fixed key order."""
        return {
            "by": self.by,
            "jobs": self.jobs,
            "procs": _whole(_clean(self.procs)),  # 100, not 100.0: a processor count
            "options": _clean(dict(self.options)),
            "stats": list(self.stats),
            **({"unitless": list(self.unitless)} if self.unitless else {}),
            "metrics": [attrs.asdict(m) for m in self.metrics],
            "rows": _clean(self.rows),
            "notes": list(self.notes),
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON text (deterministic)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    # -- rendering
    def tables(self, stats: Sequence[str] | None = None, time_unit: str = "s") -> list[Any]:
        """rich tables: per-job statistics, then the system-wide metrics.

        Ungrouped: one line per per-job metric with every statistic. Grouped: one line
        per group with ``stats`` of each per-job metric (default: the mean when the
        report has the default statistics, else the report's own :attr:`stats`).
        Times are shown in ``time_unit`` (``s``, ``min`` or ``h``).
        """
        from rich.markup import escape
        from rich.table import Table

        if time_unit not in TIME_UNITS:
            raise UsageError(f"time unit must be one of {', '.join(TIME_UNITS)}")
        scale = TIME_UNITS[time_unit]

        def shown(info: MetricInfo, value: Any, stat: str = "") -> str:
            if value is None:
                return "-"
            if info.unit == "s" and stat not in self.unitless and isinstance(value, (int, float)):
                value = value / scale
            return format_number(value)

        def unit_of(info: MetricInfo, stat: str = "") -> str:
            if stat in self.unitless:
                return ""
            return time_unit if info.unit == "s" else info.unit

        per_job = [m for m in self.metrics if m.per_job]
        scalar = [m for m in self.metrics if not m.per_job]
        out = []
        if per_job and self.by is None:
            table = Table(title=f"Per-job metrics ({self.jobs:,} jobs)", title_justify="left")
            table.add_column("metric")
            table.add_column("unit")
            for stat in (*self.stats, "count", "unknown"):
                label = f"{stat} (no unit)" if stat in self.unitless else stat
                table.add_column(label, justify="right")
            row = self.rows[0]
            for info in per_job:
                entry = row[info.name]
                cells = [shown(info, entry[s], s) for s in self.stats]
                cells += [format_number(entry["count"]), format_number(entry["unknown"])]
                table.add_row(info.name, unit_of(info), *cells)
            out.append(table)
        elif self.by is not None:
            if stats:
                chosen = tuple(stats)
            else:  # the mean of the default statistics, else the report's own
                chosen = ("mean",) if tuple(self.stats) == STATS else tuple(self.stats)
            bad = [s for s in chosen if s not in self.stats]
            if bad:
                raise UnknownNameError(
                    f"no statistic {bad[0]!r} in the report (statistics: {', '.join(self.stats)})"
                )
            table = Table(title=f"Metrics by {self.by} ({self.jobs:,} jobs)", title_justify="left")
            table.add_column(self.by)
            with_names = any("name" in r for r in self.rows)
            if with_names:
                table.add_column("name")
            table.add_column("jobs", justify="right")
            table.add_column("users", justify="right")
            for info in per_job:
                for stat in chosen:
                    unit = unit_of(info, stat)
                    label = f"{info.name} {stat}" + (f" ({unit})" if unit else "")
                    table.add_column(label, justify="right")
            grouped_scalar = [m for m in scalar if m.per_group]
            for info in grouped_scalar:
                unit = unit_of(info)
                table.add_column(info.name + (f" ({unit})" if unit else ""), justify="right")
            for row in self.rows:
                cells = [escape(str(row["group"]))]
                if with_names:
                    cells.append(escape(row.get("name", "")))
                cells += [format_number(row["jobs"]), format_number(row["users"])]
                for info in per_job:
                    for stat in chosen:
                        cells.append(shown(info, row[info.name][stat], stat))
                for info in grouped_scalar:
                    cells.append(shown(info, row.get(info.name)))
                table.add_row(*cells, end_section=row["group"] == ALL)
            out.append(table)
            scalar = [m for m in scalar if not m.per_group] if grouped_scalar else scalar
        if scalar:
            total = next((r for r in self.rows if r["group"] == ALL), None)
            table = Table(title="System metrics", title_justify="left")
            table.add_column("metric")
            table.add_column("value", justify="right")
            table.add_column("unit")
            for info in scalar:
                value = total.get(info.name) if total is not None else None
                table.add_row(info.name, shown(info, value), unit_of(info))
            out.append(table)
        return out

    def __rich_console__(self, console: Any, options: Any) -> Iterable[Any]:
        from rich.text import Text

        yield from self.tables()
        for note in self.notes:
            yield Text(f"note: {note}", style="dim")

    def render(
        self, stats: Sequence[str] | None = None, time_unit: str = "s", width: int = 120
    ) -> str:
        """The tables and notes as plain text."""
        from rich.console import Console

        # force_jupyter=False: in a notebook rich would otherwise also display the
        # tables as cell outputs, besides returning the text.
        console = Console(
            width=width,
            record=True,
            file=_NullFile(),
            color_system=None,
            force_jupyter=False,
        )
        for table in self.tables(stats, time_unit):
            console.print(table)
        for note in self.notes:
            console.print(f"note: {note}", markup=False)
        return console.export_text()

    def __str__(self) -> str:
        return self.render()


class _NullFile(io.StringIO):
    """A text file that drops what is written (the recording console keeps it)."""

    def write(self, text: str) -> int:
        return len(text)


# --------------------------------------------------------------------------- engine


@lru_cache(maxsize=256)
def _accepts(function: Callable[..., Any], name: str) -> bool:
    """Whether ``function`` takes the keyword ``name`` (explicitly; ``**kwargs``
    counts for ``procs`` only, which metrics have always been offered)."""
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return name == "procs"
    return any(p.name == name or (name == "procs" and p.kind is p.VAR_KEYWORD) for p in params)


def _accepts_procs(function: Callable[..., Any]) -> bool:
    return _accepts(function, "procs")


def _count_excluded(excluded: Any) -> int | None:
    if excluded is None:
        return None
    if isinstance(excluded, (int, np.integer)):
        return int(excluded)
    if isinstance(excluded, Mapping):
        total = 0
        for value in excluded.values():
            count = _count_excluded(value)
            total += count or 0
        return total
    try:
        return len(excluded)
    except TypeError:
        return None


@attrs.define(slots=True)
class _Source:
    columns: JobColumns
    header: Header | None
    procs: float | None
    excluded: int | None
    #: Jobs with a negative value (other than -1) per field label, made unknown.
    negative: dict[str, int] = attrs.field(factory=dict)
    #: Records the lenient read of the workload skipped (``meta["skipped"]``).
    skipped: int = 0
    #: What the skipped records are not in, for the note (a simulation result's
    #: were not simulated either: the note is then the one the result's consumers
    #: print, :func:`schedlab.sim.result.skipped_notes`, and shows once).
    skipped_where: str = "these metrics"
    #: A simulation result's jobs whose estimate fell back (the estimator had no
    #: value): their prediction is unknown (``NaN`` in the column ``estimate``).
    fell_back: np.ndarray | None = None


#: Fields whose negative values the metrics treat as unknown (``NaN``), with the
#: words their note uses. Only ``-1`` means unknown in SWF (readers make it ``NaN``);
#: any other negative value is invalid (``schedlab validate`` calls it an error and
#: the simulator excludes a job with a negative run time), so it is never averaged in.
_NON_NEGATIVE: tuple[tuple[str, str], ...] = (
    ("wait_time", "wait"),
    ("run_time", "run time"),
    ("requested_time", "requested time"),
    ("allocated_processors", "allocated processor count"),
    ("requested_processors", "requested processor count"),
)


def _negative_as_unknown(columns: JobColumns) -> tuple[JobColumns, dict[str, int]]:
    """``columns`` with every negative wait, run time, requested time and processor
    count made unknown (``NaN``; new arrays, the given ones are not changed), and the
    jobs per field whose value was negative but not -1 (SWF's "unknown", which
    :meth:`Workload.from_arrays` keeps as given): invalid values, for the notes."""
    if not isinstance(columns.data, dict):
        return columns, {}
    data: dict[str, Any] | None = None
    counts: dict[str, int] = {}
    for field, label in _NON_NEGATIVE:
        column = columns.data.get(field)
        if not isinstance(column, np.ndarray) or column.dtype.kind != "f":
            continue
        with np.errstate(invalid="ignore"):
            negative = column < 0
        if not negative.any():
            continue
        invalid = int((negative & (column != -1)).sum())
        if invalid:
            counts[label] = invalid
        if data is None:
            data = dict(columns.data)
        data[field] = np.where(negative, np.nan, column)
    if data is None:
        return columns, counts
    return JobColumns(data, columns.extras), counts


def _negative_note(counts: Mapping[str, int]) -> str:
    """The note of :func:`_negative_as_unknown`'s counts."""
    parts = [
        f"{count:,} job{' has' if count == 1 else 's have'} a negative {label}"
        if i == 0
        else f"{count:,} a negative {label}"
        for i, (label, count) in enumerate(counts.items())
    ]
    return (
        f"{', '.join(parts)} (invalid: only -1, unknown, may be negative): treated as "
        "unknown, so left out of the metrics that need it"
    )


def _skipped_records(meta: Mapping[str, Any]) -> int:
    """Records a lenient read skipped, from a workload's ``meta`` (0 when none)."""
    if not meta.get("skipped") and not meta.get("rejects"):
        return 0
    from .validation import skipped_count

    return skipped_count(meta)


def skipped_note(count: int, where: str = "these metrics") -> str:
    """The note of ``count`` records a lenient read skipped, not in ``where``."""
    if count == 1:
        return f"1 record was skipped by the lenient read and is not in {where}"
    return f"{count:,} records were skipped by the lenient read and are not in {where}"


def _platform_partitions(obj: Any, n: int) -> Grouping | None:
    """The grouping ``by="partition"`` of a schedule simulated on a platform (a
    ``Result`` or its workload): the partition each job ran in (the workload meta
    ``partitions``, the extra ``schedlab.partition``), groups in the platform's
    order; ``None`` for anything else (grouped by the SWF partition number)."""
    workload = obj if isinstance(obj, Workload) else getattr(obj, "workload", None)
    meta = getattr(workload, "meta", None)
    if not isinstance(meta, Mapping):
        return None
    placed = meta.get("partitions")
    if not isinstance(placed, list) or len(placed) != n or not n:
        return None
    platform = meta.get("platform")
    known = list((platform.get("partitions") or {}) if isinstance(platform, Mapping) else ())
    names = [str(p) for p in placed]
    labels = [p for p in known if p in set(names)]
    labels += sorted(set(names) - set(labels))
    code = {name: i for i, name in enumerate(labels)}
    codes = np.fromiter((code[p] for p in names), dtype=np.int64, count=n)
    return Grouping(
        codes,
        labels,
        description="one group per partition of the platform the job ran in (schedlab.partition)",
    )


def _header_exclusions(header: Header | None) -> tuple[int, str] | None:
    """``(jobs, reasons)`` of the ``Note`` that ``schedlab simulate`` writes into
    the header of a schedule when the simulation excluded jobs (they are not in the
    file, so not in its metrics; :func:`schedlab.sim.output.excluded_note`); None
    for any other header."""
    notes = header.get_all("Note") if header is not None else ()
    if not any(note.startswith("schedlab excluded ") for note in notes):
        return None  # (without importing the simulator)
    from .sim.output import excluded_note

    return excluded_note(header)


def excluded_jobs(workload_or_result: Any) -> int | None:
    """Jobs that the simulation which made this schedule excluded (they are in no
    metric): a simulation ``Result``'s count; for a schedule file written by
    ``schedlab simulate``, the count of its header's ``Note`` (0 when the header
    names the run and no exclusion); None for anything else (a recorded trace,
    :class:`~schedlab.model.JobColumns`: no simulation to ask)."""
    obj = workload_or_result
    if isinstance(obj, Workload):
        header = obj.header
    elif isinstance(getattr(obj, "workload", None), Workload):  # a simulation Result
        counted = _count_excluded(getattr(obj, "excluded", None))
        if counted is not None:
            return counted
        header = obj.workload.header
    else:
        return None
    found = _header_exclusions(header)
    if found is not None:
        return found[0]
    notes = header.get_all("Note") if header is not None else ()
    if any(note.startswith("Simulated by schedlab ") for note in notes):
        return 0
    return None


def _unwrap(obj: Any) -> _Source:
    """The columns (negative values made unknown: :func:`_negative_as_unknown`),
    header, machine size, excluded jobs and skipped records of ``obj``."""
    source = _unwrap_raw(obj)
    source.columns, source.negative = _negative_as_unknown(source.columns)
    return source


def _unwrap_raw(obj: Any) -> _Source:
    if isinstance(obj, Workload):
        meta = obj.meta if isinstance(obj.meta, Mapping) else {}
        return _Source(obj.to_arrays(), obj.header, None, None, skipped=_skipped_records(meta))
    if isinstance(obj, JobColumns):
        return _Source(obj, None, None, None)
    inner = getattr(obj, "workload", None)
    if isinstance(inner, Workload):
        excluded = _count_excluded(getattr(obj, "excluded", None))
        procs = getattr(obj, "procs", None)
        columns = inner.to_arrays()
        estimate = getattr(obj, "estimate", None)
        fell_back = None
        if isinstance(estimate, np.ndarray) and estimate.shape == (len(columns),):
            # A simulation result: each job's prediction at submission, for the
            # prediction-quality metrics (column "estimate"). An estimate the
            # simulator filled in (the estimator had no value: the run time, or the
            # header's MaxRuntime) is no prediction: unknown.
            marked = getattr(obj, "estimate_fell_back", None)
            if isinstance(marked, np.ndarray) and marked.shape == estimate.shape:
                fell_back = marked.astype(bool)
                if fell_back.any():
                    estimate = np.where(fell_back, np.nan, estimate)
            columns = JobColumns({**columns.data, "estimate": estimate}, columns.extras)
        meta = inner.meta if isinstance(inner.meta, Mapping) else {}
        return _Source(
            columns, inner.header, procs, excluded, skipped=_skipped_records(meta),
            skipped_where="the simulation or its metrics", fell_back=fell_back,
        )  # fmt: skip
    raise UsageError(
        f"compute_metrics needs a Workload, a simulation Result or JobColumns, "
        f"got {type(obj).__name__}"
    )


def _resolve_metrics(names: Iterable[str] | str | None, registry: Any) -> list[MetricSpec]:
    if isinstance(names, str):
        # Comma-separated, as ``stats=`` and the command line's ``-m a,b`` take them.
        given = names
        names = [n.strip() for n in given.split(",") if n.strip()]
        if not names:
            raise UsageError(f"metrics: names={given!r}: give at least one metric name")
    if names is None:
        specs = registry.all("metric")
    else:
        if not isinstance(names, Iterable):
            raise UsageError(f"metrics: expected names ('wait,bsld' or a list), got {names!r}")
        specs = []
        seen: set[str] = set()
        for name in names:
            if not isinstance(name, str):
                raise UsageError(f"metrics: a metric is a name, got {name!r}")
            spec = registry.metric(name)
            if spec.name not in seen:
                seen.add(spec.name)
                specs.append(spec)
        return specs
    rank = {name: i for i, name in enumerate(PREFERRED_ORDER)}
    return sorted(specs, key=lambda s: (not s.per_job, rank.get(s.name, len(rank)), s.name))


def _parse_options(
    given: Mapping[str, Any], registry: Any
) -> tuple[dict[str, Any], dict[str, OptionSpec]]:
    """Check every option against the engine's and every metric's declarations."""
    known: dict[str, OptionSpec] = {o.name: o for o in ENGINE_OPTIONS}
    for spec in registry.all("metric"):
        for option in spec.options:
            known.setdefault(option.name, option)
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise UsageError(
            f"metrics: unknown option {unknown[0]!r} (options: {', '.join(sorted(known))})"
        )
    engine = {o.name: o.default for o in ENGINE_OPTIONS}
    for name in engine:
        if name in given:
            raw = given[name]
            engine[name] = raw if name in ("stats",) else known[name].convert(raw, "metrics")
    engine["edges"] = parse_edges(engine["edges"])
    if engine["window"] < 1:
        raise UsageError(f"metrics: option window={engine['window']}: must be at least 1")
    return engine, known


@attrs.define(slots=True)
class _Window:
    """The measurement window of warm-up / cool-down."""

    start: float
    end: float
    keep: np.ndarray  # jobs whose metrics count
    before: int  # jobs left out, submitted in the warm-up
    after: int  # ... in the cool-down
    no_submit: int  # jobs with an unknown submit time, left out


def _measurement_window(columns: JobColumns, warmup: Any, cooldown: Any) -> _Window | None:
    submit = columns["submit_time"]
    known = ~np.isnan(submit)
    if not known.any():
        raise UsageError("metrics: warm-up and cool-down need jobs with known submit times")
    first, last = float(submit[known].min()), float(submit[known].max())
    span = last - first
    warm = parse_span_part(warmup, span, "warmup")
    cool = parse_span_part(cooldown, span, "cooldown")
    if warm == 0 and cool == 0:
        return None
    lo, hi = first + warm, last - cool
    if not hi > lo:
        raise UsageError(
            f"metrics: warm-up ({warm:,.0f} s) and cool-down ({cool:,.0f} s) leave no time of the "
            f"{span:,.0f} s between the first and the last submission"
        )
    with np.errstate(invalid="ignore"):
        keep = (submit >= lo) & (submit <= hi)
        before = int((submit < lo).sum())
        after = int((submit > hi).sum())
    return _Window(lo, hi, keep, before, after, int((~known).sum()))


def _schedule_period(columns: JobColumns) -> tuple[float, float] | None:
    """``[first submit, last end]`` of the jobs with known times (None: no such job)."""
    submit = columns["submit_time"]
    end = submit + columns["wait_time"] + columns["run_time"]
    timed = ~np.isnan(end)
    if not timed.any():
        return None
    return float(submit[timed].min()), float(end[timed].max())


def _split_by_group(columns: JobColumns, codes: np.ndarray, n_groups: int) -> list[JobColumns]:
    """Each group's jobs as columns, in input order: one sort and one copy, then a
    view (slice) per group."""
    order = np.argsort(codes, kind="stable")
    ordered = columns.take(order)
    bounds = np.searchsorted(codes[order], np.arange(n_groups + 1)).tolist()
    out = []
    for g in range(n_groups):
        lo, hi = bounds[g], bounds[g + 1]
        extras = ordered.extras[lo:hi] if ordered.extras is not None else None
        out.append(_read_only(JobColumns({k: v[lo:hi] for k, v in ordered.data.items()}, extras)))
    return out


def _scalar_value(
    spec: MetricSpec,
    registry: Any,
    columns: JobColumns,
    kwargs: dict[str, Any],
    period: tuple[float, float] | None,
) -> tuple[float | None, str]:
    """A scalar metric's value (``period`` given when the metric takes it) and, when
    it is unavailable, why."""
    extra = dict(kwargs)
    if period is not None and _accepts(spec.compute, "period"):
        extra["period"] = period
    try:
        with registry.blame(spec):  # a value that is no number is the metric's bug too
            raw = spec.compute(columns, **extra)
            value = float(raw) if raw is not None else None
        return (_clean(value) if value is not None else None), ""
    except MetricUnavailable as exc:
        return None, str(exc)


#: Inside :func:`metrics_left_out`: the warnings gathered so far and whether to warn.
_LEFT_OUT: contextvars.ContextVar[tuple[list[PluginRuntimeWarning], bool] | None] = (
    contextvars.ContextVar("schedlab_metrics_left_out", default=None)
)


@contextlib.contextmanager
def metrics_left_out(warn: bool = True) -> Iterator[list[PluginRuntimeWarning]]:
    """Inside the block, each third-party metric of the default set that
    :func:`compute_metrics` leaves out (it failed) is warned about once per plugin
    and metric, however many schedules are measured (``compare``, a report of
    several schedules); the block's list holds those warnings. ``warn=False`` only
    gathers them, for the caller to report (a sweep's worker hands them back to the
    process that prints)."""
    gathered: list[PluginRuntimeWarning] = []
    token = _LEFT_OUT.set((gathered, warn))
    try:
        yield gathered
    finally:
        _LEFT_OUT.reset(token)


def _leave_out(spec: MetricSpec, error: PluginRuntimeError, registry: Any) -> None:
    """Warn that ``spec``, a metric of the default set, is left out of the report
    because its plugin failed (``error``: the one-line error naming the plugin)."""
    from .registry import _one_line

    cause = error.__cause__ if error.__cause__ is not None else error
    info = registry.plugin_of(spec)
    who = info.describe() if info is not None else f"plugin {error.plugin!r}"
    warning = PluginRuntimeWarning(
        f"{who} failed in metric {spec.name!r}: {_one_line(cause)}; the metric is left out "
        f"(a bug in that plugin: report it to its authors; "
        f"SCHEDLAB_BLOCK_PLUGINS={error.plugin} disables it)",
        plugin=error.plugin,
        component=f"metric {spec.name}",
    )
    state = _LEFT_OUT.get()
    if state is not None:
        gathered, warn = state
        if any((w.plugin, w.component) == (error.plugin, warning.component) for w in gathered):
            return
        gathered.append(warning)
        if not warn:
            return
    warnings.warn(warning, stacklevel=3)


def _optional(spec: MetricSpec, registry: Any) -> bool:
    """Whether ``spec``, not asked for by name, may be left out when it fails: a
    third-party plugin's metric (installed, not registered by hand), outside strict
    mode (``SCHEDLAB_STRICT_PLUGINS``), as for faults while loading."""
    info = registry.plugin_of(spec)
    host = getattr(registry, "host", None)
    return info is not None and not info.protected and not getattr(host, "strict", False)


#: Built-in system metrics that use each job's size (jobs of unknown size are left
#: out of them, also while they wait, for the loss of capacity).
_SIZED: tuple[str, ...] = ("utilization", "loss-of-capacity", "work")


#: Built-in per-job metrics undefined for a run time of 0 (a ratio to it).
_UNDEFINED_AT_RUN_ZERO: frozenset[str] = frozenset({"slowdown"})


#: Built-in per-job metrics of the scheduler's predictions (column ``estimate``):
#: a job whose estimate fell back has none.
_PREDICTION_METRICS: frozenset[str] = frozenset(
    {"prediction-error", "under-prediction", "prediction-accuracy"}
)

#: Why a job whose estimate fell back has no prediction, in the notes.
_FELL_BACK_WHY = (
    "the estimator had no value and the simulator used the header's MaxRuntime or the "
    "run time, so the prediction is unknown"
)


def _missing_note(
    name: str,
    missing: np.ndarray,
    columns: JobColumns,
    keep: np.ndarray,
    fell_back: np.ndarray | None = None,
) -> str:
    """The note of per-job metric ``name``'s jobs without a value (``missing``, over
    the measured jobs ``keep``). For a metric undefined at run time 0 (the slowdown)
    the jobs with a run time of 0 and a known wait are told apart from the others
    (unknown inputs); for a prediction metric, the jobs whose estimate fell back
    (``fell_back``, over every job)."""
    total = len(missing)
    count = int(missing.sum())
    zero = 0
    if name in _UNDEFINED_AT_RUN_ZERO:
        run = columns["run_time"][keep]
        wait = columns["wait_time"][keep]
        zero = int((missing & (run == 0) & ~np.isnan(wait)).sum())
    fallen = 0
    if name in _PREDICTION_METRICS and fell_back is not None:
        fallen = int((missing & fell_back[keep]).sum())
    other = count - zero - fallen
    if fallen and other:
        why = f"{fallen:,} whose estimate fell back: {_FELL_BACK_WHY}; "
        why += f"{other:,} with unknown inputs"
    elif fallen:
        why = f"their estimate fell back: {_FELL_BACK_WHY}"
    elif zero and other:
        why = f"{zero:,} with run time 0, where it is undefined; {other:,} with unknown inputs"
    elif zero:
        why = f"run time 0: {name} is undefined"
    else:
        why = "unknown inputs"
    verb = "has" if count == 1 else "have"
    return (
        f"{name}: {count:,} of {total:,} jobs {verb} no value ({why}) and are left out of "
        "its statistics"
    )


def _system_note(columns: JobColumns, sized: Sequence[str]) -> str | None:
    """The note of the jobs the system metrics leave out: those without a known
    submit, wait and run time, and, for the metrics ``sized`` (those using the
    jobs' sizes), those of the others whose size is unknown (or 0)."""
    n = len(columns)
    timed = ~np.isnan(completion_time(columns))
    used = int(timed.sum())
    if not used:
        return None  # (each metric says it is unavailable)
    left_out = n - used
    no_size = int((timed & np.isnan(job_processors(columns))).sum()) if sized else 0
    if not left_out and not no_size:
        return None
    note = (
        f"system metrics use the {used:,} job{'' if used == 1 else 's'} with known "
        f"submit, wait and run time" + (f" ({left_out:,} left out)" if left_out else "")
    )
    if no_size:
        names = list(sized)
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        note += (
            f"; {no_size:,} of them {'has' if no_size == 1 else 'have'} no known size "
            f"(processors unknown or 0) and {'is' if no_size == 1 else 'are'} left out of "
            f"{listed}"
            + (" (its waiting included)" if no_size == 1 else " (their waiting included)")
            * ("loss-of-capacity" in names)
        )
    return note


def compute_metrics(
    workload_or_result: Any,
    names: Iterable[str] | str | None = None,
    by: str | None = None,
    procs: float | None = None,
    registry: Any = None,
    **options: Any,
) -> MetricsReport:
    """Compute metrics of a recorded trace or a simulated schedule.

    ``workload_or_result`` is a :class:`~schedlab.model.Workload` (a trace's real
    waits, or a simulated schedule), a simulation ``Result`` (its ``workload``,
    ``procs`` and ``excluded`` are used) or :class:`~schedlab.model.JobColumns`.
    The jobs a simulation excluded are counted in the first note: a ``Result``'s,
    or those of the header ``Note`` of a schedule written by ``schedlab simulate``
    (``"25 jobs were excluded by the simulation that wrote this schedule ..."``).
    ``names`` selects metrics (a list, or comma-separated text ``"wait,bsld"``;
    default: every installed metric); ``by`` groups the per-job statistics (one of
    :data:`GROUPINGS`); ``procs`` is the machine size (default: the result's, else
    the header's MaxProcs / MaxNodes) needed by utilization and loss of capacity.
    ``options`` are metric options (``threshold=`` of the bounded slowdown, ...)
    and engine options: ``stats`` (statistics of the per-job metrics, e.g.
    ``"mean,p95,p99.9"`` or a list), ``warmup`` and
    ``cooldown`` (the steady-state window: seconds, ``12h``, ``2d`` or ``10%``),
    ``window`` and ``edges`` for ``accuracy-class``, ``weight="users"`` to average
    per-user means instead of jobs, ``total=False`` to drop the ``all`` row of a
    grouped report.

    A third-party metric that fails (raises, returns the wrong shape or no number)
    is a :class:`~schedlab.errors.PluginRuntimeError` naming its plugin when
    ``names`` asks for it; in the default set (``names=None``) it is left out of the
    report with a :class:`~schedlab.errors.PluginRuntimeWarning` instead (an error
    still in strict mode and for plugins registered by hand).

    >>> report = compute_metrics(schedule, names=["wait"], by="accuracy-class")
    >>> report.column("wait")            # {"a1": ..., ..., "all": ...}
    """
    from .registry import get_registry

    registry = registry or get_registry()
    if by is not None and by not in GROUPINGS:
        raise UsageError(f"unknown grouping {by!r} (choose from {', '.join(GROUPINGS)})")
    engine, known_options = _parse_options(options, registry)
    stats, stat_plugins = parse_stats(engine["stats"], registry)
    specs = _resolve_metrics(names, registry)
    source = _unwrap(workload_or_result)
    # Read only: a metric that writes into its columns fails (and is named, or left
    # out) instead of changing what every metric after it reads.
    columns = _read_only(source.columns)
    n = len(columns)
    if procs is None:
        procs = source.procs
    if procs is None and source.header is not None:
        procs = source.header.machine_size()
    if procs is not None and (
        isinstance(procs, bool)
        or not isinstance(procs, (int, float, np.integer, np.floating))
        or not (math.isfinite(procs) and procs > 0)
    ):
        raise UsageError(f"procs must be a positive, finite number of processors, got {procs!r}")

    notes: list[str] = []
    if source.skipped:
        notes.append(skipped_note(source.skipped, source.skipped_where))
    if source.negative:
        notes.append(_negative_note(source.negative))
    if procs is not None and n and (too_big := procs_note(columns, float(procs))) is not None:
        notes.append(too_big)
    if source.excluded:
        notes.append(
            f"{source.excluded:,} job was excluded by the simulator and is not in these metrics"
            if source.excluded == 1
            else f"{source.excluded:,} jobs were excluded by the simulator and are not in "
            "these metrics"
        )
    elif source.excluded is None and (found := _header_exclusions(source.header)) is not None:
        # A schedule written by ``schedlab simulate`` (a Workload): its header's Note.
        count, reasons = found
        notes.append(
            f"{count:,} job{'s were' if count != 1 else ' was'} excluded by the simulation "
            f"that wrote this schedule ({reasons}; the header's Note) and "
            f"{'are' if count != 1 else 'is'} not in these metrics"
        )

    window = (
        _measurement_window(columns, engine["warmup"], engine["cooldown"])
        if (engine["warmup"] not in ("0", 0) or engine["cooldown"] not in ("0", 0)) and n
        else None
    )
    keep = window.keep if window is not None else np.ones(n, dtype=bool)
    measured = int(keep.sum())
    if window is not None:
        notes.append(
            f"warm-up/cool-down: per-job metrics use the {measured:,} jobs submitted between "
            f"{window.start:,.0f} s and {window.end:,.0f} s ({window.before:,} submitted "
            f"before and "
            f"{window.after:,} after are left out"
            + (f", and {window.no_submit:,} with no submit time" if window.no_submit else "")
            + "); system metrics are measured over that window"
        )

    # Groups (computed on every job, so that the left-out jobs have a group in the
    # per-group system metrics; a user's accuracy class is decided on the measured
    # jobs only).
    if by is None:
        grouping = Grouping(np.zeros(n, dtype=np.int64), [ALL])
    else:
        ran_in = _platform_partitions(workload_or_result, n) if by == "partition" else None
        # a platform run: the partition each job ran in (not the trace's field 16)
        grouping = ran_in or group_jobs(
            columns,
            by,
            source.header,
            engine["window"],
            engine["edges"],
            measured=keep if window is not None else None,
        )
        extra = ""
        if by == "accuracy-class" and window is not None:
            extra = "; the jobs left out by the warm-up/cool-down do not count in the classes"
            unclassed = int(((grouping.codes == len(class_labels(engine["edges"]))) & ~keep).sum())
            if unclassed:
                extra += (
                    f", and the {unclassed:,} left-out job{'s' if unclassed != 1 else ''} of "
                    f"users with no measured job of known accuracy "
                    f"{'are' if unclassed != 1 else 'is'} in '{UNKNOWN}' (counted only in its "
                    "system metrics)"
                )
        notes.append(f"by {by}: {grouping.description}{extra}")
    n_groups = len(grouping.labels)
    all_codes = grouping.codes
    codes = all_codes[keep]
    with_total = by is not None and engine["total"]
    users = columns["user_id"]

    job_counts = np.bincount(codes, minlength=n_groups)[:n_groups]
    all_user_codes, n_users = code_users(users)
    user_codes = all_user_codes[keep]
    known_user = user_codes < n_users
    # (counted with bincount: np.unique would import numpy.ma, 15 ms per process)
    measured_users = int(np.count_nonzero(np.bincount(user_codes[known_user], minlength=1)))
    if by is None:
        user_counts = np.array([measured_users])
    else:
        pairs = np.unique(pair_codes(codes[known_user], user_codes[known_user], n_users))
        user_counts = np.bincount(pairs // (n_users + 1), minlength=n_groups)[:n_groups]

    rows: list[dict[str, Any]] = []
    for i, label in enumerate(grouping.labels):
        row: dict[str, Any] = {"group": label}
        if label in grouping.names:
            row["name"] = grouping.names[label]
        row["jobs"] = int(job_counts[i])
        row["users"] = int(user_counts[i])
        rows.append(row)
    total_row: dict[str, Any] | None = None
    if with_total:
        total_row = {
            "group": ALL,
            "jobs": measured,
            "users": measured_users,
        }
    elif by is None:
        total_row = rows[0]

    if engine["weight"] == "users":
        notes.append(
            "weight=users: statistics are over per-user means (each user counts once; "
            "jobs with no user id count as one user)"
        )

    def summarise(values: np.ndarray, group_codes: np.ndarray, groups: int) -> list[dict]:
        if engine["weight"] == "users":
            groups_of_pairs, means = per_user_means(group_codes, user_codes, n_users, values)
            result, counts = grouped_statistics(
                groups_of_pairs, means, groups, stats, stat_plugins, registry
            )
        else:
            result, counts = grouped_statistics(
                group_codes, values, groups, stats, stat_plugins, registry
            )
        unknown = np.bincount(group_codes[np.isnan(values)], minlength=groups)[:groups]
        return [
            {
                **{s: _clean(result[s][g]) for s in stats},
                "count": int(counts[g]),
                "unknown": int(unknown[g]),
            }
            for g in range(groups)
        ]

    # The period of the system metrics: the window, else the whole schedule (given to
    # per-group computations so the groups' utilizations add up to the total).
    period: tuple[float, float] | None = (window.start, window.end) if window is not None else None
    whole = period if period is not None else _schedule_period(columns)
    group_columns: list[JobColumns] | None = None
    whole_only: list[str] = []
    no_period: list[str] = []

    infos: list[MetricInfo] = []
    kept: list[MetricSpec] = []
    for spec in specs:
        per_group = bool(getattr(spec, "per_group", False)) and not spec.per_job
        kwargs = {
            o.name: (
                known_options[o.name].convert(options[o.name], f"metric {spec.name}")
                if o.name in options
                else o.default
            )
            for o in spec.options
        }
        if _accepts_procs(spec.compute):
            kwargs["procs"] = procs
        # A third-party metric that fails (raises, or returns the wrong shape or no
        # number) is its plugin's bug: an error naming it when the metric was asked for
        # by name, else the metric is left out with one warning (the rest goes on).
        value: float | None = None
        why = ""
        group_values: list[float | None] | None = None
        try:
            if spec.per_job:
                with registry.blame(spec):  # a third-party metric's bug names its plugin
                    values = np.asarray(spec.compute(columns, **kwargs), dtype=np.float64)
                    if values.shape != (n,):
                        raise ValueError(
                            f"metric {spec.name} returned an array of shape {values.shape}, "
                            f"expected one value per job ({n},)"
                        )
            else:
                value, why = _scalar_value(spec, registry, columns, kwargs, period)
                if by is not None and per_group:
                    if group_columns is None:
                        group_columns = _split_by_group(columns, all_codes, n_groups)
                    group_values = [
                        _scalar_value(spec, registry, part, kwargs, whole)[0] if len(part) else None
                        for part in group_columns
                    ]
        except PluginRuntimeError as exc:
            if names is not None or not _optional(spec, registry):
                raise
            _leave_out(spec, exc, registry)
            continue
        kept.append(spec)
        infos.append(
            MetricInfo(spec.name, spec.unit, spec.description, spec.per_job, spec.better, per_group)
        )
        if spec.per_job:
            values = values[keep]
            blocks = summarise(values, codes, n_groups)
            for row, block in zip(rows, blocks, strict=True):
                row[spec.name] = block
            if with_total:
                assert total_row is not None
                total_row[spec.name] = summarise(values, np.zeros(len(values), dtype=np.int64), 1)[
                    0
                ]
            missing = np.isnan(values)
            if missing.any():
                notes.append(_missing_note(spec.name, missing, columns, keep, source.fell_back))
            continue

        if period is not None and not _accepts(spec.compute, "period"):
            no_period.append(spec.name)
        if why:
            notes.append(f"{spec.name}: unavailable: {why}")
        if total_row is not None:
            total_row[spec.name] = value
        if by is None:
            continue
        if group_values is None:
            whole_only.append(spec.name)
            continue
        for row, group_value in zip(rows, group_values, strict=True):
            row[spec.name] = group_value

    if whole_only:
        where = f"in the '{ALL}' row only" if with_total else "left out with total=False"
        notes.append(
            f"{', '.join(whole_only)}: whole-schedule metrics, {where} (not computed per group)"
        )
    if no_period:
        notes.append(
            f"{', '.join(no_period)}: measured over the whole schedule (the metric takes "
            "no period, so the warm-up/cool-down window does not apply to it)"
        )
    if any(not s.per_job for s in kept) and n:
        sized = [s.name for s in kept if s.name in _SIZED]
        note = _system_note(columns, sized)
        if note:
            notes.append(note)
    if with_total:
        assert total_row is not None
        rows.append(total_row)

    report_options = {k: (list(v) if isinstance(v, tuple) else v) for k, v in engine.items()}
    report_options["stats"] = ",".join(stats)
    for spec in kept:
        for option in spec.options:
            raw = options.get(option.name, option.default)
            report_options[option.name] = option.convert(raw, f"metric {spec.name}")
    return MetricsReport(
        by=by,
        metrics=tuple(infos),
        rows=rows,
        notes=notes,
        jobs=measured,
        procs=float(procs) if procs is not None else None,
        options=report_options,
        stats=stats,
        unitless=tuple(s for s in stats if s in stat_plugins and stat_plugins[s].unitless),
    )


# Public (plugin toolkit, ``schedlab.compat.PLUGIN_TOOLKIT``); the other names may change.
__all__ = [
    "MetricInfo",
    "MetricUnavailable",
    "MetricsReport",
    "UnknownNameError",
    "compute_metrics",
    "job_processors",
]
