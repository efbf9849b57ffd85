"""Side-by-side comparison of scheduling policies on one workload (``schedlab compare``).

A *combination* is a priority policy and a backfilling strategy written
``POLICY+BACKFILL`` (``fcfs+easy``, ``sjf+none``, ``psp+conservative``); a bare
``POLICY`` uses EASY backfilling, the default of :func:`schedlab.simulate`. Either
component may carry options in the ``name:key=value,...`` spelling of
:func:`schedlab.simulate` (``fcfs+easy:order=sjbf``, ``psp:window=5+easy``). Each
combination is simulated on the same workload and machine, then measured with
:func:`schedlab.compute_metrics`; the result is one row per combination.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .errors import UsageError
from .measure import MetricsReport, _clean, compute_metrics, format_number, metrics_left_out

#: Backfilling used when a combination names only the policy.
DEFAULT_BACKFILL = "easy"

#: Estimator of :func:`compare_policies` (and ``schedlab compare``) unless one is given.
DEFAULT_ESTIMATOR = "requested"

#: Allocation policy of :func:`compare_policies` on a platform unless one is given.
DEFAULT_ALLOCATION = "first-fit"

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


def _continues_options(piece: str) -> bool:
    """True when ``piece`` (text between commas) is a further ``key=value`` of the
    previous component's options (``psp:a=1,b=2``) rather than a new combination: its
    ``=`` comes before any ``:`` or ``+`` (component names hold no ``=``)."""
    equals = piece.find("=")
    if equals < 0:
        return False
    ends = [i for i in (piece.find(":"), piece.find("+")) if i >= 0]
    return equals < min(ends, default=len(piece))


def _split_components(text: str, keep_empty: bool = False) -> list[str]:
    """``text`` split at its commas, except a comma followed by ``key=value``, which
    continues the options of the part before it (see :func:`_continues_options`).
    Empty parts are left out, or kept as ``""`` with ``keep_empty`` (for a caller
    that refuses them); an option never continues an empty part."""
    parts: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if parts and piece and parts[-1] and _continues_options(piece):
            parts[-1] += "," + piece
        elif piece or keep_empty:
            parts.append(piece)
    return parts


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def split_combinations(item: str) -> list[str]:
    """``"psp:window=5,order=x+easy,sjf"`` -> ``["psp:window=5,order=x+easy", "sjf"]``:
    commas separate combinations, except inside a component's ``key=value`` list."""
    return _split_components(item)


def parse_combinations(spec: str | Iterable[str]) -> list[tuple[str, str]]:
    """``"fcfs+easy,sjf"`` (or a list of such items) -> ``[("fcfs", "easy"), ("sjf",
    "easy")]``. A component may carry options, ``name:key=value,...``
    (``"psp:window=5+easy:order=sjbf"`` -> ``[("psp:window=5", "easy:order=sjbf")]``).
    Duplicates are an error (they would give identical rows)."""
    items = [spec] if isinstance(spec, str) else list(spec)
    out: list[tuple[str, str]] = []
    for item in items:
        for part in split_combinations(item):
            policy, sep, backfill = part.partition("+")
            policy, backfill = policy.strip(), backfill.strip()
            if not policy or (sep and not backfill) or "+" in backfill:
                raise UsageError(f"policy combination {part!r}: expected POLICY or POLICY+BACKFILL")
            if _is_number(policy):
                raise UsageError(
                    f"policy combination {part!r} is a number: a list value inside a "
                    "component's options is written with '/' (e.g. psp:edges=0.2/0.4)"
                )
            combo = (policy, backfill or DEFAULT_BACKFILL)
            if combo in out:
                raise UsageError(f"policy combination {'+'.join(combo)} is given twice")
            out.append(combo)
    if not out:
        raise UsageError("give at least one policy combination, e.g. fcfs+easy,sjf+easy")
    return out


def _combinations(combinations: object) -> list[tuple[str, str]]:
    """The ``combinations`` argument of :func:`compare_policies` as ``(policy,
    backfill)`` pairs: a string or strings as :func:`parse_combinations`, or pairs of
    names (of components, each possibly ``name:key=value,...``); anything else is a
    one-line :class:`UsageError`."""
    if isinstance(combinations, str):
        return parse_combinations(combinations)
    if not isinstance(combinations, Iterable):
        raise UsageError(
            "combinations must be a string such as 'fcfs+easy,sjf+easy', or a list of "
            f"such strings or of (policy, backfill) pairs, got {type(combinations).__name__}"
        )
    items = list(combinations)
    if all(isinstance(item, str) for item in items):
        return parse_combinations(items)  # also: an empty list is an error
    out: list[tuple[str, str]] = []
    for item in items:
        if isinstance(item, str):
            out.extend(parse_combinations(item))
        elif (
            isinstance(item, (tuple, list))
            and len(item) == 2
            and all(isinstance(name, str) and name.strip() for name in item)
        ):
            out.append((item[0], item[1]))
        else:
            raise UsageError(
                f"policy combination {item!r}: expected 'POLICY+BACKFILL' or a "
                "(policy, backfill) pair of names"
            )
    return out


def _check_compare_arguments(on_row: object, **mappings: object) -> None:
    """A one-line :class:`UsageError` for an ``on_row`` that is not callable, or an
    option argument of :func:`compare_policies` that is not a mapping (a
    ``"window=3"`` string, a list of pairs), before any simulation runs."""
    if on_row is not None and not callable(on_row):
        raise UsageError(f"on_row must be a function of a ComparisonRow, got {on_row!r}")
    for name, value in mappings.items():
        if value is not None and not isinstance(value, Mapping):
            raise UsageError(
                f"{name} must be a mapping of option names to values (a dict), "
                f"got {type(value).__name__}"
            )


def _check_component(
    registry: Any, kind: str, value: str, options: Mapping[str, Any] | None
) -> None:
    """A one-line :class:`UsageError` now, before any simulation, for an unknown
    component or an option it does not take (as :func:`schedlab.simulate` would
    raise for that combination): ``value`` is ``name`` or ``name:key=value,...``
    and ``options`` apply on top of the spec's."""
    from .api import parse_spec

    name, spec_options = parse_spec(value)
    registry.get(kind, name).parse_options({**spec_options, **(options or {})}, kind)


def simulation_notes(result: Any) -> list[str]:
    """The notes of a simulation result, as ``schedlab simulate`` prints them: the
    records the lenient read of its input skipped
    (:func:`schedlab.sim.result.skipped_notes`), the components' own
    (``stats["notes"]``), then estimates that fell back, then a platform run's
    counts (:func:`schedlab.sim.result.platform_notes`)."""
    from .sim.result import estimate_notes, platform_notes, skipped_notes

    return [
        *skipped_notes(result),
        *(str(n) for n in result.stats.get("notes", ()) or ()),
        *estimate_notes(result),
        *platform_notes(result),
    ]


def held_note(result: Any, report: Any) -> str | None:
    """On a platform, a note when the report's ``utilization`` or
    ``loss-of-capacity`` (the processors the jobs asked for) differ from the
    platform's figures (the cores the jobs held: whole nodes on exclusive nodes),
    giving those; ``None`` without a platform or when they agree
    (docs/metrics.md). A report measured over a warm-up/cool-down window is
    compared with the platform's figures over the same window (the run's
    ``stats["platform"]`` are over the whole run)."""
    machine = (getattr(result, "stats", None) or {}).get("platform")
    if not machine or report is None:
        return None
    held = (machine.get("utilization_by_dimension") or {}).get("cores")
    free = machine.get("idle_while_waiting")
    window = _report_window(result, report)
    over = ""
    if window is not None:
        windowed = _held_over(result, window)
        if windowed is None:  # the jobs' cores held are not recorded: no comparison
            return None
        held, free = windowed
        over = ", over the same warm-up/cool-down window"
    names = {info.name for info in report.metrics}
    pairs = []
    if "utilization" in names:
        pairs.append((report.value("utilization"), held))
    if "loss-of-capacity" in names:
        pairs.append((report.value("loss-of-capacity"), free))
    if not any(
        a is not None and b is not None and not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        for a, b in pairs
    ):
        return None
    figures = []
    if held is not None:
        figures.append(f"cores held {held:.3f} of the core-time")
    if free is not None:
        figures.append(f"not held while jobs waited {free:.3f}")
    return (
        "utilization and loss-of-capacity count the processors the jobs asked for; the "
        "platform's figures count the cores the jobs held (whole nodes on exclusive "
        f"nodes){over}: {', '.join(figures)}"
    )


def _report_window(result: Any, report: Any) -> tuple[float, float] | None:
    """The warm-up/cool-down window ``report`` was measured over (as
    :func:`compute_metrics` finds it on the result's jobs), or ``None``."""
    from .measure import _measurement_window, _unwrap

    options = getattr(report, "options", None) or {}
    warmup, cooldown = options.get("warmup", 0), options.get("cooldown", 0)
    if warmup in ("0", 0, None) and cooldown in ("0", 0, None):
        return None
    try:
        columns = _unwrap(result).columns
        found = _measurement_window(columns, warmup, cooldown) if len(columns) else None
    except (UsageError, TypeError, ValueError):
        return None
    return None if found is None else (found.start, found.end)


def _held_over(
    result: Any, period: tuple[float, float]
) -> tuple[float | None, float | None] | None:
    """The platform's cores held and core-time not held while jobs waited over
    ``period``, from the result's jobs (the cores of their ``schedlab.held``);
    ``None`` when a job's cores held are not recorded."""
    import numpy as np

    from .model import HELD_EXTRA
    from .sim.usage import cores_over_period

    workload = result.workload
    meta = workload.meta.get("platform") or {}
    try:
        capacity = float(meta["capacity"][list(meta["dims"]).index("cores")])
    except (KeyError, ValueError, IndexError, TypeError):
        return None
    columns = workload.to_arrays()
    extras = [j.extras for j in workload.jobs] if workload.has_job_objects() else columns.extras
    if extras is None or len(extras) != len(columns):
        return None
    cores = np.full(len(columns), np.nan)
    for i, extra in enumerate(extras):
        for part in str((extra or {}).get(HELD_EXTRA, "")).split():
            key, _, value = part.partition("=")
            if key == "cores":
                cores[i] = float(value)
    if np.isnan(cores).any():
        return None
    submit = columns["submit_time"]
    start = submit + columns["wait_time"]
    end = start + columns["run_time"]
    return cores_over_period(cores, submit, start, end, capacity, period)


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
    #: What the simulation says its numbers rest on (estimates that fell back ...),
    #: as ``schedlab simulate`` prints them; the metrics' own notes are in ``report``.
    notes: list[str] = attrs.field(factory=list)
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
            "notes": list(self.notes),
            "metrics": self.report.to_dict(),
        }


@attrs.define(slots=True)
class Comparison:
    """The rows of a comparison, in the order the combinations were given."""

    rows: list[ComparisonRow]
    source: str = ""
    #: What every combination shared: the machine (``procs``: the size given, ``None``
    #: when it came from the trace's header or a platform, each row's ``procs`` being
    #: the size used; ``platform``: the platform file's name without its directory,
    #: ``None`` without one; ``allocation``: the allocation policy, ``first-fit`` unless
    #: one was given, ``None`` without a platform), the ``estimator``, whether jobs were
    #: killed at their requested time (``kill``), whether SWF dependencies were
    #: honoured (``dependencies``) and the options given to every policy, backfilling,
    #: estimator and allocation (``policy_options`` ...).
    settings: dict[str, Any] = attrs.field(factory=dict)
    #: The metrics asked for by name (``None``: the default set). Each gets a column
    #: of the table: those of :data:`TABLE_COLUMNS`, else one of its own.
    metrics: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: one entry per combination with its full metrics report."""
        return {
            "source": self.source,
            "settings": self.settings,
            "rows": [row.to_dict() for row in self.rows],
        }

    def shared_options(self) -> str:
        """The options every combination was given, ``backfill options order=sjbf;
        ...`` (empty when none): the rows' names do not show them."""
        parts = []
        for kind in ("policy", "backfill", "estimator", "allocation"):
            given = self.settings.get(f"{kind}_options") or {}
            if given:
                text = ",".join(f"{k}={v}" for k, v in given.items())
                parts.append(f"{kind} options {text}")
        return "; ".join(parts)

    def shared_settings(self) -> str:
        """What the table's title adds after the source: every setting shared by all
        combinations that differs from :func:`compare_policies`' defaults, since the
        rows' names do not show it (``procs 64; estimator actual; backfill options
        order=sjbf; jobs not killed; dependencies honoured``, or ``platform
        cluster.toml; allocation best-fit; ...``; empty when all are the defaults)."""
        parts = []
        if self.settings.get("procs") is not None:
            parts.append(f"procs {self.settings['procs']}")
        if self.settings.get("platform") is not None:
            parts.append(f"platform {self.settings['platform']}")
        allocation = self.settings.get("allocation")
        if allocation is not None and allocation != DEFAULT_ALLOCATION:
            parts.append(f"allocation {allocation}")
        estimator = self.settings.get("estimator", DEFAULT_ESTIMATOR)
        if estimator != DEFAULT_ESTIMATOR:
            parts.append(f"estimator {estimator}")
        if self.shared_options():
            parts.append(self.shared_options())
        if not self.settings.get("kill", True):
            parts.append("jobs not killed")
        if self.settings.get("dependencies", False):
            parts.append("dependencies honoured")
        return "; ".join(parts)

    def title(self, prefix: str = "Policy comparison") -> str:
        """``PREFIX on SOURCE (SETTINGS)``: the table's title (``schedlab compare
        --report`` gives its page ``Comparison on SOURCE (SETTINGS)``), naming the
        :meth:`shared_settings` when there are any."""
        title = prefix + (f" on {self.source}" if self.source else "")
        if self.shared_settings():
            title += f" ({self.shared_settings()})"
        return title

    def to_json(self, indent: int | None = 2) -> str:
        """Deterministic JSON text."""
        return json.dumps(_clean(self.to_dict()), indent=indent, allow_nan=False)

    def notes(self) -> list[tuple[str, list[str]]]:
        """Each distinct note of the rows, once, with the labels of the rows it
        concerns: the simulations' notes first, then the metrics' (in row order)."""
        seen: dict[str, list[str]] = {}
        for source in ("simulation", "metrics"):
            for row in self.rows:
                for note in row.notes if source == "simulation" else row.report.notes:
                    labels = seen.setdefault(note, [])
                    if row.label not in labels:
                        labels.append(row.label)
        return list(seen.items())

    def table(self, time_unit: str = "s", timing: bool = True) -> Any:
        """A rich table: one line per combination, metrics side by side (best value of
        each column whose metric has a better direction in bold: never makespan or
        work, which declare none)."""
        from rich.table import Table

        from .measure import TIME_UNITS

        if time_unit not in TIME_UNITS:
            raise UsageError(f"time unit must be one of {', '.join(TIME_UNITS)}")
        scale = TIME_UNITS[time_unit]
        table = Table(title=self.title(), title_justify="left")
        table.add_column("policy", no_wrap=True)
        table.add_column("backfill", no_wrap=True)
        table.add_column("jobs", justify="right")
        table.add_column("excluded", justify="right")  # always: one shape for every input
        columns: list[tuple[str, str, str | None, Any]] = []
        chosen = self._chosen_stats()
        for title_text, metric, stat in TABLE_COLUMNS:
            info = self._info(metric)
            if info is None:
                continue
            if stat is not None and chosen:
                # the statistics asked for (metric option ``stats``), each shown
                if not any(m == metric for _, m, _, _ in columns):
                    short = title_text.rsplit(" ", 1)[0]
                    columns += [(f"{short} {s}", metric, s, info) for s in chosen]
                continue
            if stat is not None and self.rows and stat not in self.rows[0].report.stats:
                continue  # a statistic this comparison was not asked to compute
            columns.append((title_text, metric, stat, info))
        columns += self._requested_columns({metric for _, metric, _, _ in columns})
        # statistics without a unit (a plugin's unitless=True): no unit, no scaling
        unitless = set(self.rows[0].report.unitless) if self.rows else set()
        for title_text, _, stat, info in columns:
            unit = "" if stat in unitless else time_unit if info.unit == "s" else info.unit
            table.add_column(f"{title_text}" + (f" ({unit})" if unit else ""), justify="right")
        if timing:
            table.add_column("sim (s)", justify="right")
        best = {}
        for _, metric, stat, info in columns:
            values = [r.value(metric, stat) for r in self.rows]
            known = [v for v in values if v is not None]
            if known and info.better in ("lower", "higher") and len(self.rows) > 1:
                best[(metric, stat)] = min(known) if info.better == "lower" else max(known)
        for row in self.rows:
            cells = [row.policy, row.backfill, format_number(row.jobs), format_number(row.excluded)]
            for _, metric, stat, info in columns:
                value = row.value(metric, stat)
                text = (
                    "-"
                    if value is None
                    else format_number(
                        value / scale if info.unit == "s" and stat not in unitless else value
                    )
                )
                if value is not None and best.get((metric, stat)) == value:
                    text = f"[bold]{text}[/bold]"
                cells.append(text)
            if timing:
                cells.append(format_number(row.wall_time_s))
            table.add_row(*cells)
        return table

    def _requested_columns(self, shown: set[str]) -> list[tuple[str, str, str | None, Any]]:
        """A column ``(title, metric, statistic, info)`` for each metric asked for by
        name that no column of :data:`TABLE_COLUMNS` shows, in the order asked:
        titled by its name and, for a per-job metric, its statistic (the mean, else
        the first one computed)."""
        if self.metrics is None or not self.rows:
            return []
        stats = self.rows[0].report.stats
        chosen = self._chosen_stats()
        columns: list[tuple[str, str, str | None, Any]] = []
        infos = {i.name: i for row in self.rows for i in row.report.metrics}
        for name, info in infos.items():
            if name in shown:
                continue
            if info.per_job and chosen:
                columns += [(f"{name} {s}", name, s, info) for s in chosen]
                continue
            stat = ("mean" if "mean" in stats else stats[0]) if info.per_job else None
            columns.append((f"{name} {stat}" if stat else name, name, stat, info))
        return columns

    def _chosen_stats(self) -> tuple[str, ...]:
        """The statistics the metric option ``stats`` asked for (each gets a column
        per per-job metric), or ``()`` for the default set (the table's usual
        columns)."""
        from .measure import STATS

        if not self.rows:
            return ()
        stats = tuple(self.rows[0].report.stats)
        return () if stats == tuple(STATS) else stats

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
        """Save :func:`comparison_figure` to ``path``; returns the files written.
        The caller's matplotlib style is left as it was."""
        from .plotting import kept_style, save_figure

        with kept_style():
            return save_figure(comparison_figure(self, **kwargs), path)


def compare_policies(
    workload: Any,
    combinations: str | Iterable[str] | Sequence[tuple[str, str]],
    procs: int | None = None,
    estimator: str = DEFAULT_ESTIMATOR,
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
    policy_options: Mapping[str, Any] | None = None,
    backfill_options: Mapping[str, Any] | None = None,
    estimator_options: Mapping[str, Any] | None = None,
    allocation_options: Mapping[str, Any] | None = None,
) -> Comparison:
    """Simulate every combination on ``workload`` and measure it.

    ``combinations`` is ``"fcfs+easy,sjf+easy"``, a list of such strings or of
    ``(policy, backfill)`` pairs. Names are checked against the registry before any
    simulation runs. ``names`` and ``metric_options`` go to
    :func:`~schedlab.compute_metrics`; ``on_row`` is called after each simulation.
    ``platform`` and ``allocation`` run every combination on a multi-resource
    machine (see :func:`schedlab.simulate`). A component of a combination may be
    written ``name:key=value,...``; ``policy_options``, ``backfill_options``,
    ``estimator_options`` and ``allocation_options`` apply to every combination (on
    top of those), and an option a component does not take is an error before any
    simulation runs. The result's ``settings`` record what every combination shared:
    ``procs`` (as given: ``None`` when the size came from the trace's header or the
    platform; each row's ``procs`` is the size used), ``platform`` (a file's name
    without its directory, a :class:`~schedlab.platform.Platform`'s ``name``, else
    ``"Platform"``; ``None`` without a platform), ``allocation`` (its name, or its
    type's for an object; :data:`DEFAULT_ALLOCATION` unless given; ``None`` without a
    platform), ``estimator``, ``kill``, ``dependencies`` and those options.
    """
    import numpy as np

    from .registry import get_registry
    from .sim.api import simulate

    for flag, value in (("kill", kill), ("dependencies", dependencies)):
        # as simulate(): a "no" from a configuration file would count as true
        if not isinstance(value, (bool, np.bool_)):
            raise UsageError(f"{flag} must be True or False, got {value!r}")
    _check_compare_arguments(
        on_row,
        metric_options=metric_options,
        policy_options=policy_options,
        backfill_options=backfill_options,
        estimator_options=estimator_options,
        allocation_options=allocation_options,
    )
    registry = registry or get_registry()
    combos = _combinations(combinations)
    for policy, backfill in combos:
        _check_component(registry, "policy", policy, policy_options)
        _check_component(registry, "backfill", backfill, backfill_options)
    if isinstance(estimator, str):
        _check_component(registry, "estimator", estimator, estimator_options)
    if platform is None and (allocation is not None or allocation_options):
        raise UsageError("an allocation policy needs a platform (--platform FILE)")
    if platform is not None and (allocation is None or isinstance(allocation, str)):
        _check_component(
            registry, "allocation", allocation or DEFAULT_ALLOCATION, allocation_options
        )
    names = list(names) if names is not None else None
    rows = []
    with metrics_left_out():  # a failing default metric: one warning, not one per row
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
                policy_options=policy_options or None,
                backfill_options=backfill_options or None,
                estimator_options=estimator_options or None,
                allocation_options=allocation_options or None,
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
                notes=[*simulation_notes(result), *filter(None, [held_note(result, report)])],
                result=result,
            )
            rows.append(row)
            if on_row is not None:
                on_row(row)
    settings = {
        "procs": None if procs is None else int(procs),
        "platform": _platform_name(platform),
        "allocation": _allocation_name(platform, allocation),
        "estimator": estimator if isinstance(estimator, str) else type(estimator).__name__,
        "kill": bool(kill),
        "dependencies": bool(dependencies),
        "policy_options": dict(policy_options or {}),
        "backfill_options": dict(backfill_options or {}),
        "estimator_options": dict(estimator_options or {}),
        "allocation_options": dict(allocation_options or {}),
    }
    return Comparison(rows, source, settings, None if names is None else tuple(names))


def _platform_name(platform: Any) -> str | None:
    """How ``settings["platform"]`` names ``platform``: a file's name without its
    directory (as the trace's ``source``: the same file by another path gives the same
    bytes), a :class:`~schedlab.platform.Platform`'s ``name``, else ``"Platform"``."""
    if platform is None:
        return None
    if isinstance(platform, (str, os.PathLike)):
        return Path(os.fspath(platform)).name
    return str(getattr(platform, "name", None) or type(platform).__name__)


def _allocation_name(platform: Any, allocation: Any) -> str | None:
    """How ``settings["allocation"]`` names ``allocation``: ``None`` without a
    platform, :data:`DEFAULT_ALLOCATION` when none is given, the name (spec) given,
    else the object's type name."""
    if platform is None:
        return None
    if allocation is None:
        return DEFAULT_ALLOCATION
    return allocation if isinstance(allocation, str) else type(allocation).__name__


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
    combination, one bar each, coloured by backfilling strategy (legend). Drawn in
    schedlab's style; the caller's matplotlib style is left as it was."""
    from .plotting import kept_style

    with kept_style():
        return _draw_comparison(comparison, width)


def _draw_comparison(comparison: Comparison, width: float | None) -> Any:
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
