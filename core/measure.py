"""The metrics engine behind :func:`schedlab.compute_metrics` and ``schedlab metrics``.

Metrics are plugins (:class:`~schedlab.plugin_types.MetricSpec`): *per-job* metrics
return one value per job and are summarised here by :data:`STATS` (mean, median,
90th and 99th percentile, max), overall and per group; *scalar* metrics (makespan,
utilization, fairness ...) return one number for the whole workload. Everything is
vectorised over the workload's columns: no Python loop runs per job.

Groupings (``by=``):

``user`` / ``queue``
    one group per user id / queue number (SWF fields 12 / 15), in numeric order.
``size``
    job size classes by powers of two of the processors used (allocated, else
    requested): ``1``, ``2-3``, ``4-7``, ``8-15`` ...
``accuracy-class``
    the PSP paper's Table 3: each user is placed in the accuracy class (``a1`` ..
    ``a5``) of the mean estimate accuracy of their last ``window`` (default 10) jobs
    by completion time, and all their jobs count in that class. Every class is
    listed, empty ones too.

Jobs whose group is unknown go to a last group ``unknown``. A grouped report ends
with an ``all`` row (``total=False`` drops it); scalar metrics are system-wide and
appear in the ``all`` row only.

Jobs without a value for a metric (unknown wait in a trace, run time 0 for the
slowdown ...) are left out of that metric's statistics and counted: each statistic
block has ``count`` (jobs used) and ``unknown`` (jobs left out), and the report's
``notes`` say it in words.
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
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
from .errors import SchedlabError, UsageError
from .model import Header, JobColumns, Workload
from .plugin_types import MetricSpec, OptionSpec

#: Statistics of every per-job metric, in report order.
STATS: tuple[str, ...] = ("mean", "median", "p90", "p99", "max")
#: Quantile of each percentile statistic.
QUANTILES: dict[str, float] = {"median": 0.5, "p90": 0.9, "p99": 0.99}
#: The groupings ``by=`` accepts.
GROUPINGS: tuple[str, ...] = ("user", "queue", "size", "accuracy-class")
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
)


# --------------------------------------------------------------------------- helpers


def job_processors(columns: JobColumns) -> np.ndarray:
    """Processors each job used: allocated, else requested (NaN when both unknown)."""
    allocated = columns["allocated_processors"]
    requested = columns["requested_processors"]
    use_alloc = allocated > 0  # NaN compares False
    return np.where(use_alloc, allocated, np.where(requested > 0, requested, np.nan))


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
    codes: np.ndarray, values: np.ndarray, n_groups: int
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Per-group :data:`STATS` of ``values`` (NaN values ignored).

    ``codes`` are group numbers in ``[0, n_groups)``. Percentiles interpolate
    linearly between order statistics (numpy's default ``linear`` method). Returns
    ``(stats, counts)``: each statistic is an array of ``n_groups`` floats (NaN for a
    group without values) and ``counts`` the number of values per group.
    """
    known = ~np.isnan(values)
    c, v = sort_by_group(np.asarray(codes)[known], np.asarray(values, np.float64)[known], n_groups)
    counts = np.bincount(c, minlength=n_groups)[:n_groups]
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    has = counts > 0
    out: dict[str, np.ndarray] = {}
    sums = np.bincount(c, weights=v, minlength=n_groups)[:n_groups]
    mean = np.full(n_groups, np.nan)
    np.divide(sums, counts, out=mean, where=has)
    out["mean"] = mean
    for name in STATS:
        if name == "mean":
            continue
        result = np.full(n_groups, np.nan)
        if name == "max":
            result[has] = v[starts[has] + counts[has] - 1]
        else:
            pos = QUANTILES[name] * (counts[has] - 1)
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


def _number_label(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


# --------------------------------------------------------------------------- grouping


@attrs.define(slots=True)
class Grouping:
    """Jobs assigned to groups: ``codes[i]`` is job ``i``'s group number."""

    codes: np.ndarray
    labels: list[str]
    #: Optional display names per group (user / queue names from the header).
    names: dict[str, str] = attrs.field(factory=dict)
    description: str = ""


def _by_number(values: np.ndarray) -> tuple[np.ndarray, list[str], np.ndarray]:
    known = ~np.isnan(values)
    uniq, inverse = np.unique(values[known], return_inverse=True)
    codes = np.full(len(values), len(uniq), dtype=np.int64)
    codes[known] = np.asarray(inverse).reshape(-1)
    labels = [_number_label(v) for v in uniq.tolist()]
    if not known.all():
        labels.append(UNKNOWN)
    return codes, labels, uniq


def group_jobs(
    columns: JobColumns,
    by: str,
    header: Header | None = None,
    window: int = PSP_WINDOW,
    edges: Sequence[float] = PSP_EDGES,
) -> Grouping:
    """Assign each job to a group of ``by`` (one of :data:`GROUPINGS`)."""
    if by in ("user", "queue"):
        field = "user_id" if by == "user" else "queue_number"
        codes, labels, uniq = _by_number(columns[field])
        names: dict[str, str] = {}
        if header is not None:
            table = header.names("User" if by == "user" else "Queue")
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
            "(allocated, else requested): 1, 2-3, 4-7, ...",
        )
    if by == "accuracy-class":
        acc = estimate_accuracy(columns["run_time"], columns["requested_time"])
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
            f"user's last {window} jobs by completion time ({intervals})",
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
    order: ``group``, optional ``name``, ``jobs``, ``users``, then for each per-job
    metric a dict of :data:`STATS` plus ``count`` / ``unknown``, and for each scalar
    metric its value (``None`` when unavailable; in the ``all`` row only). Values are
    in the metric's unit (seconds for times).
    """

    by: str | None
    metrics: tuple[MetricInfo, ...]
    rows: list[dict[str, Any]]
    notes: list[str]
    jobs: int
    procs: float | None
    options: dict[str, Any]
    stats: tuple[str, ...] = STATS

    # -- access
    def row(self, group: str = ALL) -> dict[str, Any]:
        """The row of ``group`` (``"all"`` by default)."""
        for row in self.rows:
            if row["group"] == group:
                return row
        known = ", ".join(str(r["group"]) for r in self.rows)
        raise KeyError(f"no group {group!r} in the report (groups: {known})")

    def value(self, metric: str, stat: str = "mean", group: str = ALL) -> float | None:
        """One number: ``stat`` of per-job ``metric`` (ignored for scalar metrics) in
        ``group``; ``None`` when unknown."""
        entry = self.row(group).get(metric)
        if isinstance(entry, dict):
            return _clean(entry.get(stat))
        return _clean(entry)

    def column(self, metric: str, stat: str = "mean") -> dict[str, float | None]:
        """``{group: value}`` for every row (the ``all`` row included)."""
        return {row["group"]: self.value(metric, stat, row["group"]) for row in self.rows}

    def metric_names(self, per_job: bool | None = None) -> list[str]:
        """Names of the metrics in the report (optionally only per-job or scalar ones)."""
        return [m.name for m in self.metrics if per_job is None or m.per_job == per_job]

    # -- serialisation
    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready: NaN becomes ``None``), in a fixed key order."""
        return {
            "by": self.by,
            "jobs": self.jobs,
            "procs": _clean(self.procs),
            "options": _clean(dict(self.options)),
            "stats": list(self.stats),
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
        per group with ``stats`` (default: mean) of each per-job metric. Times are
        shown in ``time_unit`` (``s``, ``min`` or ``h``).
        """
        from rich.markup import escape
        from rich.table import Table

        if time_unit not in TIME_UNITS:
            raise UsageError(f"time unit must be one of {', '.join(TIME_UNITS)}")
        scale = TIME_UNITS[time_unit]

        def shown(info: MetricInfo, value: Any) -> str:
            if value is None:
                return "-"
            if info.unit == "s" and isinstance(value, (int, float)):
                value = value / scale
            return format_number(value)

        def unit_of(info: MetricInfo) -> str:
            return time_unit if info.unit == "s" else info.unit

        per_job = [m for m in self.metrics if m.per_job]
        scalar = [m for m in self.metrics if not m.per_job]
        out = []
        if per_job and self.by is None:
            table = Table(title=f"Per-job metrics ({self.jobs:,} jobs)", title_justify="left")
            table.add_column("metric")
            table.add_column("unit")
            for stat in (*self.stats, "count", "unknown"):
                table.add_column(stat, justify="right")
            row = self.rows[0]
            for info in per_job:
                entry = row[info.name]
                cells = [shown(info, entry[s]) for s in self.stats]
                cells += [format_number(entry["count"]), format_number(entry["unknown"])]
                table.add_row(info.name, unit_of(info), *cells)
            out.append(table)
        elif self.by is not None:
            chosen = tuple(stats) if stats else ("mean",)
            bad = [s for s in chosen if s not in self.stats]
            if bad:
                raise UsageError(f"unknown statistic {bad[0]!r} (choose from {', '.join(STATS)})")
            table = Table(title=f"Metrics by {self.by} ({self.jobs:,} jobs)", title_justify="left")
            table.add_column(self.by)
            with_names = any("name" in r for r in self.rows)
            if with_names:
                table.add_column("name")
            table.add_column("jobs", justify="right")
            table.add_column("users", justify="right")
            for info in per_job:
                for stat in chosen:
                    unit = unit_of(info)
                    label = f"{info.name} {stat}" + (f" ({unit})" if unit else "")
                    table.add_column(label, justify="right")
            for row in self.rows:
                cells = [escape(str(row["group"]))]
                if with_names:
                    cells.append(escape(row.get("name", "")))
                cells += [format_number(row["jobs"]), format_number(row["users"])]
                for info in per_job:
                    for stat in chosen:
                        cells.append(shown(info, row[info.name][stat]))
                table.add_row(*cells, end_section=row["group"] == ALL)
            out.append(table)
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

        console = Console(width=width, record=True, file=_NullFile(), color_system=None)
        for table in self.tables(stats, time_unit):
            console.print(table)
        for note in self.notes:
            console.print(f"note: {note}", markup=False)
        return console.export_text()

    def __str__(self) -> str:
        return self.render()


class _NullFile:
    def write(self, _: str) -> int:
        return 0

    def flush(self) -> None:
        pass


# --------------------------------------------------------------------------- engine


@lru_cache(maxsize=256)
def _accepts_procs(function: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.kind is p.VAR_KEYWORD or p.name == "procs" for p in params)


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


def _unwrap(obj: Any) -> _Source:
    if isinstance(obj, Workload):
        return _Source(obj.to_arrays(), obj.header, None, None)
    if isinstance(obj, JobColumns):
        return _Source(obj, None, None, None)
    inner = getattr(obj, "workload", None)
    if isinstance(inner, Workload):
        excluded = _count_excluded(getattr(obj, "excluded", None))
        procs = getattr(obj, "procs", None)
        columns = inner.to_arrays()
        estimate = getattr(obj, "estimate", None)
        if isinstance(estimate, np.ndarray) and estimate.shape == (len(columns),):
            # A simulation result: each job's prediction at submission, for the
            # prediction-quality metrics (column "estimate").
            columns = JobColumns({**columns.data, "estimate": estimate}, columns.extras)
        return _Source(columns, inner.header, procs, excluded)
    raise UsageError(
        f"compute_metrics needs a Workload, a simulation Result or JobColumns, "
        f"got {type(obj).__name__}"
    )


def _resolve_metrics(names: Iterable[str] | str | None, registry: Any) -> list[MetricSpec]:
    if isinstance(names, str):
        names = [names]
    if names is None:
        specs = registry.all("metric")
    else:
        specs = []
        seen: set[str] = set()
        for name in names:
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
            engine[name] = known[name].convert(given[name], "metrics")
    engine["edges"] = parse_edges(engine["edges"])
    if engine["window"] < 1:
        raise UsageError(f"metrics: option window={engine['window']}: must be at least 1")
    return engine, known


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
    ``names`` selects metrics (default: every installed metric); ``by`` groups the
    per-job statistics (one of :data:`GROUPINGS`); ``procs`` is the machine size
    (default: the result's, else the header's MaxProcs / MaxNodes) needed by
    utilization and loss of capacity. ``options`` are metric options (``threshold=``
    of the bounded slowdown, ...) and engine options: ``window`` and ``edges`` for
    ``accuracy-class``, ``weight="users"`` to average per-user means instead of jobs,
    ``total=False`` to drop the ``all`` row of a grouped report.

    >>> report = compute_metrics(schedule, names=["wait"], by="accuracy-class")
    >>> report.column("wait")            # {"a1": ..., ..., "all": ...}
    """
    from .registry import get_registry

    registry = registry or get_registry()
    if by is not None and by not in GROUPINGS:
        raise UsageError(f"unknown grouping {by!r} (choose from {', '.join(GROUPINGS)})")
    engine, known_options = _parse_options(options, registry)
    specs = _resolve_metrics(names, registry)
    source = _unwrap(workload_or_result)
    columns = source.columns
    n = len(columns)
    if procs is None:
        procs = source.procs
    if procs is None and source.header is not None:
        procs = source.header.machine_size()
    if procs is not None and not float(procs) > 0:
        raise UsageError(f"procs must be a positive number of processors, got {procs}")

    notes: list[str] = []
    if source.excluded:
        notes.append(
            f"{source.excluded:,} jobs were excluded by the simulator and are not in these metrics"
        )

    # Groups.
    if by is None:
        grouping = Grouping(np.zeros(n, dtype=np.int64), [ALL])
    else:
        grouping = group_jobs(columns, by, source.header, engine["window"], engine["edges"])
        notes.append(f"by {by}: {grouping.description}")
    n_groups = len(grouping.labels)
    codes = grouping.codes
    with_total = by is not None and engine["total"]
    users = columns["user_id"]

    job_counts = np.bincount(codes, minlength=n_groups)[:n_groups]
    user_codes, n_users = code_users(users)
    known_user = user_codes < n_users
    if by is None:
        user_counts = np.array([n_users])
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
            "jobs": n,
            "users": n_users,
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
            stats, counts = grouped_statistics(groups_of_pairs, means, groups)
        else:
            stats, counts = grouped_statistics(group_codes, values, groups)
        unknown = np.bincount(group_codes[np.isnan(values)], minlength=groups)[:groups]
        return [
            {
                **{s: _clean(stats[s][g]) for s in STATS},
                "count": int(counts[g]),
                "unknown": int(unknown[g]),
            }
            for g in range(groups)
        ]

    infos: list[MetricInfo] = []
    for spec in specs:
        infos.append(MetricInfo(spec.name, spec.unit, spec.description, spec.per_job, spec.better))
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
        if spec.per_job:
            with registry.blame(spec):  # a third-party metric's bug names its plugin
                values = np.asarray(spec.compute(columns, **kwargs), dtype=np.float64)
            if values.shape != (n,):
                raise SchedlabError(
                    f"metric {spec.name} ({spec.provider}) returned shape {values.shape}, "
                    f"expected ({n},)"
                )
            blocks = summarise(values, codes, n_groups)
            for row, block in zip(rows, blocks, strict=True):
                row[spec.name] = block
            if with_total:
                assert total_row is not None
                total_row[spec.name] = summarise(values, np.zeros(n, dtype=np.int64), 1)[0]
            missing = int(np.isnan(values).sum())
            if missing:
                notes.append(
                    f"{spec.name}: {missing:,} of {n:,} jobs have no value (unknown inputs) "
                    "and are left out of its statistics"
                )
        else:
            try:
                with registry.blame(spec):
                    raw = spec.compute(columns, **kwargs)
                    value = _clean(float(raw)) if raw is not None else None
            except MetricUnavailable as exc:
                value = None
                notes.append(f"{spec.name}: unavailable: {exc}")
            assert total_row is not None
            total_row[spec.name] = value

    if any(not s.per_job for s in specs) and n:
        timed = ~np.isnan(completion_time(columns))
        left_out = int(n - timed.sum())
        if left_out and timed.any():
            notes.append(
                f"system metrics use the {int(timed.sum()):,} jobs with known submit, wait "
                f"and run time ({left_out:,} left out)"
            )
    if with_total:
        assert total_row is not None
        rows.append(total_row)

    report_options = {k: (list(v) if isinstance(v, tuple) else v) for k, v in engine.items()}
    for spec in specs:
        for option in spec.options:
            raw = options.get(option.name, option.default)
            report_options[option.name] = option.convert(raw, f"metric {spec.name}")
    return MetricsReport(
        by=by,
        metrics=tuple(infos),
        rows=rows,
        notes=notes,
        jobs=n,
        procs=float(procs) if procs is not None else None,
        options=report_options,
    )
