"""Side-by-side comparison of scheduling policies on one workload (``schedlab compare``).

A *combination* is a priority policy and a backfilling strategy written
``POLICY+BACKFILL`` (``fcfs+easy``, ``sjf+none``, ``psp+conservative``); a bare
``POLICY`` uses EASY backfilling, the default of :func:`schedlab.simulate`. Each
combination is simulated on the same workload and machine, then measured with
:func:`schedlab.compute_metrics`; the result is one row per combination.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .errors import UsageError
from .measure import MetricsReport, _clean, compute_metrics, format_number

#: Backfilling used when a combination names only the policy.
DEFAULT_BACKFILL = "easy"

#: Columns of the comparison table: (title, metric, statistic or None for scalars).
TABLE_COLUMNS: tuple[tuple[str, str, str | None], ...] = (
    ("wait mean", "wait", "mean"),
    ("wait p90", "wait", "p90"),
    ("wait max", "wait", "max"),
    ("bsld mean", "bounded-slowdown", "mean"),
    ("bsld p90", "bounded-slowdown", "p90"),
    ("util", "utilization", None),
    ("LoC", "loss-of-capacity", None),
    ("fairness", "fairness", None),
    ("makespan", "makespan", None),
)


def parse_combinations(spec: str | Iterable[str]) -> list[tuple[str, str]]:
    """``"fcfs+easy,sjf"`` (or a list of such items) -> ``[("fcfs", "easy"), ("sjf",
    "easy")]``. Duplicates are an error (they would give identical rows)."""
    items = [spec] if isinstance(spec, str) else list(spec)
    out: list[tuple[str, str]] = []
    for item in items:
        for part in filter(None, (p.strip() for p in item.split(","))):
            policy, sep, backfill = part.partition("+")
            policy, backfill = policy.strip(), backfill.strip()
            if not policy or (sep and not backfill) or "+" in backfill:
                raise UsageError(f"policy combination {part!r}: expected POLICY or POLICY+BACKFILL")
            combo = (policy, backfill or DEFAULT_BACKFILL)
            if combo in out:
                raise UsageError(f"policy combination {'+'.join(combo)} is given twice")
            out.append(combo)
    if not out:
        raise UsageError("give at least one policy combination, e.g. fcfs+easy,sjf+easy")
    return out


@attrs.define(slots=True)
class ComparisonRow:
    """One simulated combination: its names, run statistics and metrics report."""

    policy: str
    backfill: str
    procs: int
    jobs: int
    excluded: int
    report: MetricsReport
    wall_time_s: float = float("nan")
    #: The simulation ``Result`` (kept for :meth:`Comparison.significance`).
    result: Any = attrs.field(default=None, repr=False, eq=False)

    @property
    def label(self) -> str:
        """``policy+backfill``."""
        return f"{self.policy}+{self.backfill}"

    def value(self, metric: str, stat: str | None = "mean") -> float | None:
        """A number of the report's ``all`` row (``stat`` ignored for scalar metrics)."""
        return self.report.value(metric, stat or "mean")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the wall time is left out so the output is deterministic)."""
        return {
            "policy": self.policy,
            "backfill": self.backfill,
            "procs": self.procs,
            "jobs": self.jobs,
            "excluded": self.excluded,
            "metrics": self.report.to_dict(),
        }


@attrs.define(slots=True)
class Comparison:
    """The rows of a comparison, in the order the combinations were given."""

    rows: list[ComparisonRow]
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: one entry per combination with its full metrics report."""
        return {"source": self.source, "rows": [row.to_dict() for row in self.rows]}

    def to_json(self, indent: int | None = 2) -> str:
        """Deterministic JSON text."""
        return json.dumps(_clean(self.to_dict()), indent=indent, allow_nan=False)

    def table(self, time_unit: str = "s", timing: bool = True) -> Any:
        """A rich table: one line per combination, metrics side by side (best value of
        each column in bold)."""
        from rich.table import Table

        from .measure import TIME_UNITS

        if time_unit not in TIME_UNITS:
            raise UsageError(f"time unit must be one of {', '.join(TIME_UNITS)}")
        scale = TIME_UNITS[time_unit]
        title = "Policy comparison" + (f" on {self.source}" if self.source else "")
        table = Table(title=title, title_justify="left")
        table.add_column("policy", no_wrap=True)
        table.add_column("backfill", no_wrap=True)
        table.add_column("jobs", justify="right")
        show_excluded = any(r.excluded for r in self.rows)
        if show_excluded:
            table.add_column("excluded", justify="right")
        columns = []
        for title_text, metric, stat in TABLE_COLUMNS:
            info = self._info(metric)
            if info is None:
                continue
            if stat is not None and self.rows and stat not in self.rows[0].report.stats:
                continue  # a statistic this comparison was not asked to compute
            unit = time_unit if info.unit == "s" else info.unit
            table.add_column(f"{title_text}" + (f" ({unit})" if unit else ""), justify="right")
            columns.append((metric, stat, info))
        if timing:
            table.add_column("sim (s)", justify="right")
        best = {}
        for metric, stat, info in columns:
            values = [r.value(metric, stat) for r in self.rows]
            known = [v for v in values if v is not None]
            if known and info.better in ("lower", "higher") and len(self.rows) > 1:
                best[(metric, stat)] = min(known) if info.better == "lower" else max(known)
        for row in self.rows:
            cells = [row.policy, row.backfill, format_number(row.jobs)]
            if show_excluded:
                cells.append(format_number(row.excluded))
            for metric, stat, info in columns:
                value = row.value(metric, stat)
                text = (
                    "-"
                    if value is None
                    else format_number(value / scale if info.unit == "s" else value)
                )
                if value is not None and best.get((metric, stat)) == value:
                    text = f"[bold]{text}[/bold]"
                cells.append(text)
            if timing:
                cells.append(format_number(row.wall_time_s))
            table.add_row(*cells)
        return table

    def _info(self, metric: str) -> Any:
        for row in self.rows:
            for info in row.report.metrics:
                if info.name == metric:
                    return info
        return None

    def significance(self, **kwargs: Any) -> Any:
        """Intervals, paired tests and rank stability of these rows
        (:func:`schedlab.significance.block_significance`; ``kwargs`` are its options).
        Needs the rows' simulation results, which :func:`compare_policies` keeps."""
        from .significance import block_significance

        missing = [row.label for row in self.rows if row.result is None]
        if missing:
            raise UsageError(f"significance: no simulation result kept for {', '.join(missing)}")
        return block_significance({row.label: row.result for row in self.rows}, **kwargs)

    def plot(self, path: str | Path, **kwargs: Any) -> list[Path]:
        """Save :func:`comparison_figure` to ``path``; returns the files written."""
        from .plotting import save_figure

        return save_figure(comparison_figure(self, **kwargs), path)


def compare_policies(
    workload: Any,
    combinations: str | Iterable[str] | Sequence[tuple[str, str]],
    procs: int | None = None,
    estimator: str = "requested",
    kill: bool = True,
    dependencies: bool = False,
    names: Iterable[str] | None = None,
    metric_options: Mapping[str, Any] | None = None,
    registry: Any = None,
    progress: Any = None,
    source: str = "",
    on_row: Callable[[ComparisonRow], None] | None = None,
    platform: Any = None,
    allocation: Any = None,
) -> Comparison:
    """Simulate every combination on ``workload`` and measure it.

    ``combinations`` is ``"fcfs+easy,sjf+easy"``, a list of such strings or of
    ``(policy, backfill)`` pairs. Names are checked against the registry before any
    simulation runs. ``names`` and ``metric_options`` go to
    :func:`~schedlab.compute_metrics`; ``on_row`` is called after each simulation.
    ``platform`` and ``allocation`` run every combination on a multi-resource
    machine (see :func:`schedlab.simulate`).
    """
    from .registry import get_registry
    from .sim.api import simulate

    registry = registry or get_registry()
    if isinstance(combinations, str) or (
        not isinstance(combinations, Sequence) or any(isinstance(c, str) for c in combinations)
    ):
        combos = parse_combinations(combinations)  # type: ignore[arg-type]
    else:
        combos = [tuple(c) for c in combinations]  # type: ignore[misc]
    for policy, backfill in combos:
        registry.policy(policy)
        registry.backfill(backfill)
    names = list(names) if names is not None else None
    rows = []
    for policy, backfill in combos:
        began = time.perf_counter()
        result = simulate(
            workload,
            policy=policy,
            backfill=backfill,
            procs=procs,
            estimator=estimator,
            kill=kill,
            dependencies=dependencies,
            registry=registry,
            progress=progress,
            platform=platform,
            allocation=allocation,
        )
        wall = result.stats.get("wall_time_s", time.perf_counter() - began)
        report = compute_metrics(
            result, names=names, registry=registry, **dict(metric_options or {})
        )
        row = ComparisonRow(
            policy=policy,
            backfill=backfill,
            procs=int(result.procs),
            jobs=len(result.workload),
            excluded=int(sum(len(v) for v in result.excluded.values())),
            report=report,
            wall_time_s=float(wall),
            result=result,
        )
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return Comparison(rows, source)


#: Bars use a logarithmic axis when the largest value exceeds the smallest this many times.
LOG_SCALE_RATIO = 30.0


def _time_scale(max_seconds: float) -> tuple[float, str]:
    if max_seconds >= 2 * 3600:
        return 3600.0, "h"
    if max_seconds >= 120:
        return 60.0, "min"
    return 1.0, "s"


def comparison_figure(comparison: Comparison, width: float | None = None) -> Any:
    """Two panels sharing the policy axis: mean wait and mean bounded slowdown per
    combination, one bar each, coloured by backfilling strategy (legend)."""
    from .plotting import COLUMN_WIDTH, new_figure

    rows = comparison.rows
    if not rows:
        raise UsageError("nothing to plot: the comparison has no rows")
    width = width or COLUMN_WIDTH
    height = max(1.8, 0.9 + 0.22 * len(rows))
    fig, (ax_wait, ax_bsld) = new_figure(width, height, ncols=2, sharey=True)
    waits = [r.value("wait", "mean") for r in rows]
    bslds = [r.value("bounded-slowdown", "mean") for r in rows]
    scale, unit = _time_scale(max((w for w in waits if w is not None), default=0.0))
    backfills = list(dict.fromkeys(r.backfill for r in rows))
    palette = ["#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB"]
    colour = {b: palette[i % len(palette)] for i, b in enumerate(backfills)}
    positions = list(range(len(rows)))
    labels = [r.policy for r in rows]
    threshold = rows[0].report.options.get("threshold")
    bsld_detail = [f"τ = {threshold:g} s"] if isinstance(threshold, (int, float)) else []
    panels = (
        (ax_wait, [None if w is None else w / scale for w in waits], "Mean wait", [unit]),
        (ax_bsld, bslds, "Mean bounded slowdown", bsld_detail),
    )
    for ax, values, name, details in panels:
        known = [v for v in values if v is not None and v > 0]
        log = bool(known) and max(known) / min(known) > LOG_SCALE_RATIO
        base = min(known) / 2 if log else 0.0
        ax.barh(
            positions,
            [base if v is None or (log and v <= base) else v - base for v in values],
            left=base,
            color=[colour[r.backfill] for r in rows],
            height=0.7,
            edgecolor="none",
        )
        for y, v in zip(positions, values, strict=True):
            text = "n/a" if v is None else format_number(v)
            ax.annotate(
                text,
                (base if v is None else max(v, base), y),
                xytext=(2, 0),
                textcoords="offset points",
                va="center",
                fontsize=6,
            )
        if log:
            ax.set_xscale("log")
            details = [*details, "log scale"]
            ax.set_xlim(left=base)
        else:
            ax.set_xlim(left=0)
        ax.set_xlabel(name + (f"\n({', '.join(details)})" if details else ""))
        ax.grid(axis="y", visible=False)
        ax.margins(x=0.25)
    ax_wait.set_yticks(positions, labels)
    ax_wait.invert_yaxis()
    ax_wait.set_ylabel("Priority policy")
    from matplotlib.patches import Patch

    handles = [Patch(color=colour[b], label=b) for b in backfills]
    fig.legend(
        handles=handles,
        title="Backfilling",
        loc="outside upper center",
        ncols=min(len(backfills), 4),
        frameon=False,
    )
    return fig
