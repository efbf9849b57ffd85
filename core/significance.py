"""Is a difference between policies real? Intervals, paired tests and rank stability.

One trace: the jobs of each finished schedule are cut into *blocks* by submit time
(every job submitted in the same window, a week by default, shares a block, because
jobs in one queue are not independent). A block bootstrap resamples whole blocks of
the schedules that were simulated once per policy (no simulation is rerun), giving a
confidence interval of each metric's mean and of every paired difference; a
Wilcoxon signed-rank test on the blocks' paired differences gives a p-value, and
Holm's method corrects the p-values of the whole table for multiple comparisons.
Rank stability ranks the policies in each (longer) time window, 30 days by default.

Generated workloads: :func:`seed_significance` does the same across seeds (one
value per seed and policy; each seed is one unit).

scipy (``pip install 'schedlab[stats]'``) is imported on first use:
``scipy.stats.bootstrap`` (BCa by default), ``scipy.stats.wilcoxon`` and
``scipy.stats.kendalltau``. Results are deterministic for a given ``seed``.
See docs/metrics.md ("Confidence intervals and paired tests").
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from .errors import UsageError

#: Fewer blocks or seeds than this: no interval and no test (the reason is given).
MIN_UNITS = 10
#: Default block length (jobs submitted in the same week share a block).
DEFAULT_WINDOW = "7d"
#: Default window of the per-window ranking (rank stability).
DEFAULT_RANK_WINDOW = "30d"


def default_metrics() -> list[str]:
    """The metrics assessed by default: those whose mean is a column of the
    comparison table (wait and bounded slowdown)."""
    from .comparison import TABLE_COLUMNS

    return list(dict.fromkeys(metric for _, metric, stat in TABLE_COLUMNS if stat == "mean"))


_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}
_SPAN_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|min|h|d|w)?\s*$")


def scipy_stats() -> Any:
    """Import ``scipy.stats`` or explain which extra installs it."""
    try:
        import scipy.stats
    except ImportError:
        raise UsageError(
            "confidence intervals and paired tests need scipy: pip install 'schedlab[stats]'"
        ) from None
    return scipy.stats


def parse_window(text: str | float, option: str = "window") -> float:
    """Seconds of a window: a number of seconds, ``90min``, ``12h``, ``7d`` or ``2w``."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
    else:
        match = _SPAN_RE.match(str(text))
        if match is None:
            raise UsageError(f"{option} {text!r}: expected seconds, 90min, 12h, 7d or 2w")
        seconds = float(match[1]) * _UNITS[match[2] or "s"]
    if not seconds > 0 or math.isinf(seconds):
        raise UsageError(f"{option} {text!r}: must be a positive, finite length of time")
    return seconds


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (``None`` stays ``None``): the i-th smallest
    of m p-values is multiplied by m - i + 1, then made non-decreasing and capped at 1.
    Holm, S. (1979), *A simple sequentially rejective multiple test procedure*."""
    known = [(p, i) for i, p in enumerate(p_values) if p is not None]
    m = len(known)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(known)):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


@attrs.frozen
class Interval:
    """A policy's metric (mean over jobs, or over seeds) with its confidence interval.

    ``low``/``high`` are ``None`` when no interval is available; ``reason`` says why."""

    policy: str
    metric: str
    estimate: float | None
    low: float | None
    high: float | None
    units: int
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return attrs.asdict(self)


@attrs.frozen
class Difference:
    """``first - second`` of one metric, with its interval, the Wilcoxon signed-rank
    p-value over the paired units, the Holm-adjusted p-value and the verdict at the
    chosen level (``None`` when no test was possible; ``reason`` says why)."""

    first: str
    second: str
    metric: str
    estimate: float | None
    low: float | None
    high: float | None
    p_value: float | None
    p_holm: float | None
    significant: bool | None
    units: int
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return attrs.asdict(self)


@attrs.frozen
class WindowRanking:
    """The ranking (1 = best, ties share the lower rank) in one window or seed, with
    Kendall's tau against the overall ranking (``None`` when undefined: all tied)."""

    label: str
    start: float | None
    end: float | None
    jobs: int
    values: dict[str, float]
    ranks: dict[str, int]
    tau: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return attrs.asdict(self)


@attrs.frozen
class RankStability:
    """Per-window rankings of one metric, how often each policy ranks first (ties
    count for every tied policy) and the mean Kendall's tau against the overall
    ranking."""

    metric: str
    overall: dict[str, int]
    windows: list[WindowRanking]
    firsts: dict[str, int]
    mean_tau: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "metric": self.metric,
            "overall": self.overall,
            "firsts": self.firsts,
            "mean_tau": self.mean_tau,
            "windows": [w.to_dict() for w in self.windows],
        }


@attrs.define
class Significance:
    """Intervals, paired differences and rank stability of a comparison.

    ``unit`` is ``"block"`` (block bootstrap over one trace) or ``"seed"``."""

    unit: str
    policies: list[str]
    metrics: list[str]
    level: float
    resamples: int
    seed: int
    method: str
    window_s: float | None
    rank_window_s: float | None
    intervals: list[Interval]
    differences: list[Difference]
    ranks: list[RankStability]
    notes: list[str] = attrs.field(factory=list)

    def interval(self, policy: str, metric: str) -> Interval:
        """The interval of ``policy``'s ``metric``."""
        for item in self.intervals:
            if item.policy == policy and item.metric == metric:
                return item
        raise UsageError(f"no interval of {metric} for {policy}")

    def difference(self, first: str, second: str, metric: str) -> Difference:
        """The paired difference ``first - second`` of ``metric``."""
        for item in self.differences:
            if item.metric == metric and (item.first, item.second) == (first, second):
                return item
        raise UsageError(f"no paired difference {first} - {second} of {metric}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "unit": self.unit,
            "policies": self.policies,
            "metrics": self.metrics,
            "level": self.level,
            "resamples": self.resamples,
            "seed": self.seed,
            "method": self.method,
            "window_s": self.window_s,
            "rank_window_s": self.rank_window_s,
            "intervals": [i.to_dict() for i in self.intervals],
            "differences": [d.to_dict() for d in self.differences],
            "ranks": [r.to_dict() for r in self.ranks],
            "notes": self.notes,
        }

    def to_json(self, indent: int | None = 2) -> str:
        """Deterministic JSON text."""
        from .measure import _clean

        return json.dumps(_clean(self.to_dict()), indent=indent, allow_nan=False)

    def tables(self) -> list[Any]:
        """Rich tables: intervals, paired differences, and first places per window."""
        from rich.table import Table

        from .measure import format_number

        pct = f"{self.level * 100:g}%"
        units = f"{self.unit}s"

        def num(value: float | None) -> str:
            return "-" if value is None else format_number(value)

        ci = Table(title=f"Means with {pct} intervals ({self._how()})", title_justify="left")
        for name in ("policy", "metric", "mean", "low", "high", units):
            ci.add_column(name, justify="left" if name in ("policy", "metric") else "right")
        for i in self.intervals:
            ci.add_row(i.policy, i.metric, num(i.estimate), num(i.low), num(i.high), str(i.units))
        diff = Table(
            title=f"Paired differences (first - second), Wilcoxon signed-rank over {units}, "
            f"Holm-corrected at {pct}",
            title_justify="left",
        )
        for name in ("first", "second", "metric", "diff", "low", "high", "p", "p (Holm)", units):
            diff.add_column(
                name, justify="left" if name in ("first", "second", "metric") else "right"
            )
        diff.add_column("significant")
        for d in self.differences:
            verdict = (
                "-" if d.significant is None else ("[bold]yes[/bold]" if d.significant else "no")
            )
            diff.add_row(
                d.first,
                d.second,
                d.metric,
                num(d.estimate),
                num(d.low),
                num(d.high),
                _p_text(d.p_value),
                _p_text(d.p_holm),
                str(d.units),
                verdict,
            )
        out: list[Any] = [ci, diff]
        for r in self.ranks:
            what = "seed" if self.unit == "seed" else "window"
            table = Table(
                title=f"Rank stability of {r.metric}: {len(r.windows)} {what}s, mean Kendall's "
                f"tau vs overall ranking {num(r.mean_tau)}",
                title_justify="left",
            )
            table.add_column("policy")
            table.add_column("overall rank", justify="right")
            table.add_column(f"first in ({what}s)", justify="right")
            for policy in self.policies:
                table.add_row(policy, str(r.overall[policy]), str(r.firsts[policy]))
            out.append(table)
        if self.notes:
            from rich.text import Text

            out.append(Text("\n".join(f"note: {n}" for n in self.notes)))
        return out

    def _how(self) -> str:
        if self.unit == "seed":
            return f"bootstrap over seeds, {self.resamples} resamples, {self.method}"
        days = (self.window_s or 0) / 86400.0
        return f"block bootstrap, {days:g}-day blocks, {self.resamples} resamples, {self.method}"

    def plot(self, path: Any, **kwargs: Any) -> list[Any]:
        """Save :func:`significance_figure` to ``path``; returns the files written."""
        from .plotting import save_figure

        return save_figure(significance_figure(self, **kwargs), path)


def _p_text(p: float | None) -> str:
    if p is None:
        return "-"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


# --------------------------------------------------------------------------- core


def _units_arrays(
    sums: Mapping[str, np.ndarray], counts: Mapping[str, np.ndarray]
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    return {k: np.asarray(v, dtype=np.float64) for k, v in sums.items()}, {
        k: np.asarray(v, dtype=np.float64) for k, v in counts.items()
    }


def _ratio(s: np.ndarray, c: np.ndarray, axis: int = -1) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sum(s, axis=axis) / np.sum(c, axis=axis)


def _ratio_difference(
    sa: np.ndarray, ca: np.ndarray, sb: np.ndarray, cb: np.ndarray, axis: int = -1
) -> np.ndarray:
    return _ratio(sa, ca, axis) - _ratio(sb, cb, axis)


def _bootstrap(
    data: tuple[np.ndarray, ...],
    statistic: Any,
    level: float,
    resamples: int,
    rng: np.random.Generator,
    method: str,
) -> tuple[np.ndarray, np.ndarray]:
    """``scipy.stats.bootstrap`` over the last axis (leading axes are a batch)."""
    stats = scipy_stats()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate data is reported by the caller
        res = stats.bootstrap(
            data,
            statistic,
            paired=True,
            vectorized=True,
            n_resamples=resamples,
            batch=max(1, 100_000 // max(1, data[0].size)),
            confidence_level=level,
            method=method,
            rng=rng,
            axis=-1,
        )
    low = np.asarray(res.confidence_interval.low, dtype=np.float64)
    high = np.asarray(res.confidence_interval.high, dtype=np.float64)
    return low, high


def mean_interval(
    sums: np.ndarray,
    counts: np.ndarray,
    level: float = 0.95,
    resamples: int = 1000,
    rng: np.random.Generator | int | None = 0,
    method: str = "BCa",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bootstrap interval of the mean sum(sums) / sum(counts) over units (blocks or
    seeds, the last axis; leading axes are independent problems solved at once).

    Returns ``(estimate, low, high)``; NaN bounds where the resamples are degenerate."""
    sums = np.asarray(sums, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    low, high = _bootstrap(
        (sums, counts), _ratio, level, resamples, np.random.default_rng(rng), method
    )
    return _ratio(sums, counts), low, high


def paired_difference(
    sums_a: np.ndarray,
    counts_a: np.ndarray,
    sums_b: np.ndarray,
    counts_b: np.ndarray,
    level: float = 0.95,
    resamples: int = 1000,
    rng: np.random.Generator | int | None = 0,
    method: str = "BCa",
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Paired difference of means a - b over the same units (last axis; every unit
    needs a count > 0 in both): a paired bootstrap interval (units resampled
    together) and the Wilcoxon signed-rank p-value of the units' differences of
    means (two-sided; 1.0 where every difference is 0).

    Returns ``(estimate, low, high, p_value)``."""
    sa, ca, sb, cb = (np.asarray(x, dtype=np.float64) for x in (sums_a, counts_a, sums_b, counts_b))
    low, high = _bootstrap(
        (sa, ca, sb, cb), _ratio_difference, level, resamples, np.random.default_rng(rng), method
    )
    d = sa / ca - sb / cb
    stats = scipy_stats()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = np.asarray(stats.wilcoxon(d, axis=-1).pvalue, dtype=np.float64)
    p = np.where(np.any(d != 0, axis=-1), p, 1.0)
    return _ratio_difference(sa, ca, sb, cb), low, high, p


def _bounds(low: np.ndarray, high: np.ndarray) -> tuple[float | None, float | None, str]:
    lo, hi = float(low), float(high)
    if math.isnan(lo) or math.isnan(hi):
        return None, None, "degenerate resamples (every resample gives the same value)"
    return lo, hi, ""


def _too_few(n: int, unit: str) -> str:
    plural = "" if n == 1 else "s"
    return f"only {n} {unit}{plural} with values (at least {MIN_UNITS} are needed)"


def _assess(
    unit: str,
    sums: Mapping[str, Mapping[str, np.ndarray]],
    counts: Mapping[str, Mapping[str, np.ndarray]],
    metrics: Sequence[str],
    policies: Sequence[str],
    level: float,
    resamples: int,
    seed: int,
    method: str,
) -> tuple[list[Interval], list[Difference]]:
    """Intervals and paired differences from per-unit sums and counts
    (``sums[metric][policy]`` has one entry per unit; the mean is sum / count)."""
    scipy_stats()  # fail before any work when scipy is missing
    intervals: list[Interval] = []
    pending: list[dict[str, Any]] = []
    for m_index, metric in enumerate(metrics):
        for p_index, policy in enumerate(policies):
            s, c = sums[metric][policy], counts[metric][policy]
            used = c > 0
            n = int(used.sum())
            estimate = float(_ratio(s, c)) if n else None
            low = high = None
            reason = ""
            if n < MIN_UNITS:
                reason = _too_few(n, unit)
            else:
                rng = np.random.default_rng([seed, m_index, p_index])
                _, lo, hi = mean_interval(s[used], c[used], level, resamples, rng, method)
                low, high, reason = _bounds(lo, hi)
            intervals.append(Interval(policy, metric, estimate, low, high, n, reason))
        for i, first in enumerate(policies):
            for j in range(i + 1, len(policies)):
                second = policies[j]
                sa, ca = sums[metric][first], counts[metric][first]
                sb, cb = sums[metric][second], counts[metric][second]
                both = (ca > 0) & (cb > 0)
                n = int(both.sum())
                entry: dict[str, Any] = {
                    "first": first,
                    "second": second,
                    "metric": metric,
                    "estimate": float(_ratio(sa, ca) - _ratio(sb, cb)) if n else None,
                    "low": None,
                    "high": None,
                    "p_value": None,
                    "units": n,
                    "reason": "",
                }
                if n < MIN_UNITS:
                    entry["reason"] = _too_few(n, unit)
                else:
                    rng = np.random.default_rng([seed, m_index, 1000 + i, j])
                    _, lo, hi, p = paired_difference(
                        sa[both], ca[both], sb[both], cb[both], level, resamples, rng, method
                    )
                    entry["low"], entry["high"], entry["reason"] = _bounds(lo, hi)
                    entry["p_value"] = float(p)
                pending.append(entry)
    adjusted = holm([e["p_value"] for e in pending])
    alpha = 1.0 - level
    differences = [
        Difference(
            first=e["first"],
            second=e["second"],
            metric=e["metric"],
            estimate=e["estimate"],
            low=e["low"],
            high=e["high"],
            p_value=e["p_value"],
            p_holm=p,
            significant=None if p is None else bool(p < alpha),
            units=e["units"],
            reason=e["reason"],
        )
        for e, p in zip(pending, adjusted, strict=True)
    ]
    return intervals, differences


def _ranking(values: Mapping[str, float], better: str) -> dict[str, int]:
    stats = scipy_stats()
    keys = list(values)
    data = np.array([values[k] for k in keys], dtype=np.float64)
    if better == "higher":
        data = -data
    ranks = stats.rankdata(data, method="min")
    return {k: int(r) for k, r in zip(keys, ranks, strict=True)}


def _stability(
    metric: str,
    better: str,
    policies: Sequence[str],
    overall: Mapping[str, float],
    windows: Sequence[tuple[str, float | None, float | None, int, dict[str, float]]],
) -> RankStability:
    stats = scipy_stats()
    overall_ranks = _ranking(overall, better)
    firsts = dict.fromkeys(policies, 0)
    rows: list[WindowRanking] = []
    taus: list[float] = []
    for label, start, end, jobs, values in windows:
        if any(math.isnan(values[p]) for p in policies):
            continue
        ranks = _ranking(values, better)
        for p in policies:
            if ranks[p] == 1:
                firsts[p] += 1
        tau: float | None = None
        if len(policies) > 1:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = float(
                    stats.kendalltau(
                        [ranks[p] for p in policies], [overall_ranks[p] for p in policies]
                    ).statistic
                )
            tau = None if math.isnan(t) else t
            if tau is not None:
                taus.append(tau)
        rows.append(WindowRanking(label, start, end, jobs, dict(values), ranks, tau))
    mean_tau = float(np.mean(taus)) if taus else None
    return RankStability(metric, overall_ranks, rows, firsts, mean_tau)


def _check_level(level: float, resamples: int) -> None:
    if not 0.0 < level < 1.0:
        raise UsageError(f"level {level}: must be between 0 and 1 (e.g. 0.95)")
    if resamples < 100:
        raise UsageError(f"resamples {resamples}: at least 100 are needed")


# ----------------------------------------------------------------- one trace


def _metric_values(
    source: Any, metric: str, registry: Any, options: Mapping[str, Any]
) -> tuple[np.ndarray, np.ndarray]:
    """Submit times and one per-job metric of a Result or Workload."""
    from .model import JobColumns, Workload

    workload = getattr(source, "workload", source)
    if isinstance(workload, Workload):
        columns = workload.to_arrays()
    elif isinstance(workload, JobColumns):
        columns = workload
    else:
        raise UsageError(
            f"significance needs simulation Results or Workloads, got {type(source).__name__}"
        )
    spec = registry.metric(metric)
    kwargs = {
        o.name: o.convert(options[o.name], f"metric {spec.name}")
        if o.name in options
        else o.default
        for o in spec.options
    }
    with registry.blame(spec):
        values = np.asarray(spec.compute(columns, **kwargs), dtype=np.float64)
    return np.asarray(columns["submit_time"], dtype=np.float64), values


def block_significance(
    results: Mapping[str, Any],
    metrics: Iterable[str] | None = None,
    window: str | float = DEFAULT_WINDOW,
    level: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
    rank_window: str | float | None = None,
    method: str = "BCa",
    metric_options: Mapping[str, Any] | None = None,
    registry: Any = None,
) -> Significance:
    """Intervals, paired tests and rank stability of policies simulated on one trace.

    ``results`` maps a label (``"fcfs+easy"``) to that policy's simulation ``Result``
    (or a simulated ``Workload``); every schedule must be of the same trace.
    ``metrics`` are per-job metrics (default: :func:`default_metrics`); their
    means are compared. ``window`` is the block length (``"7d"``, ``"2w"``,
    seconds), ``rank_window`` the window of the per-window ranking (default 30 days,
    or the whole trace when it is shorter; a given window longer than the trace, or
    a block window, is an error).
    ``metric_options`` are metric options such as ``threshold``. Each schedule is
    resampled as it is: no simulation is rerun (see docs/metrics.md for what that
    assumes).
    """
    from .registry import get_registry

    registry = registry or get_registry()
    _check_level(level, resamples)
    policies = list(results)
    if not policies:
        raise UsageError("significance: give at least one simulated policy")
    names = default_metrics() if metrics is None else list(metrics)
    notes: list[str] = []
    per_job: list[str] = []
    for name in names:
        spec = registry.metric(name)
        if not spec.per_job:
            notes.append(
                f"{spec.name}: a whole-schedule metric; the block bootstrap resamples "
                "per-job metrics only, so it has no interval here"
            )
        elif spec.name not in per_job:
            per_job.append(spec.name)
    if not per_job:
        raise UsageError("significance: none of the metrics is a per-job metric")
    options = dict(metric_options or {})
    data = {
        m: {p: _metric_values(results[p], m, registry, options) for p in policies} for m in per_job
    }
    submits = np.concatenate([data[per_job[0]][p][0] for p in policies])
    submits = submits[~np.isnan(submits)]
    if not len(submits):
        raise UsageError("significance: no job has a submit time")
    t0, t1 = float(submits.min()), float(submits.max())
    span = t1 - t0
    window_s = parse_window(window, "window")
    given: list[tuple[Any, float, str]] = [(window, window_s, "window")]
    if rank_window is None:
        rank_window_s = parse_window(DEFAULT_RANK_WINDOW)
        if rank_window_s > span:
            # One window holding the whole trace (not a window the user gave: no error).
            rank_window_s = span + 1.0
            notes.append("the trace spans less than 30 days: one ranking window")
        rank_window = rank_window_s
    else:
        rank_window_s = parse_window(rank_window, "rank window")
        given.append((rank_window, rank_window_s, "rank window"))
    for text, seconds, what in given:
        if seconds > span:
            raise UsageError(
                f"{what} {text!r} is longer than the trace ({span / 86400.0:.1f} days "
                "between the first and the last submission)"
            )

    def binned(length: float) -> tuple[dict[str, dict[str, np.ndarray]], ...]:
        n_bins = int(span // length) + 1
        sums: dict[str, dict[str, np.ndarray]] = {m: {} for m in per_job}
        counts: dict[str, dict[str, np.ndarray]] = {m: {} for m in per_job}
        jobs: dict[str, dict[str, np.ndarray]] = {m: {} for m in per_job}
        for m in per_job:
            for p in policies:
                submit, values = data[m][p]
                ok = ~np.isnan(submit)
                bins = ((submit[ok] - t0) // length).astype(np.int64)
                v = values[ok]
                known = ~np.isnan(v)
                sums[m][p] = np.bincount(bins[known], weights=v[known], minlength=n_bins)
                counts[m][p] = np.bincount(bins[known], minlength=n_bins).astype(np.float64)
                jobs[m][p] = np.bincount(bins, minlength=n_bins)
        return sums, counts, jobs

    sums, counts, _ = binned(window_s)
    # Windows with no job of any policy are not blocks.
    occupied = np.zeros_like(next(iter(counts[per_job[0]].values())), dtype=bool)
    for m in per_job:
        for p in policies:
            occupied |= counts[m][p] > 0
    sums = {m: {p: v[occupied] for p, v in d.items()} for m, d in sums.items()}
    counts = {m: {p: v[occupied] for p, v in d.items()} for m, d in counts.items()}
    intervals, differences = _assess(
        "block", sums, counts, per_job, policies, level, resamples, seed, method
    )

    rsums, rcounts, rjobs = binned(rank_window_s)
    ranks = []
    for m in per_job:
        spec = registry.metric(m)
        overall = {p: float(_ratio(rsums[m][p], rcounts[m][p])) for p in policies}
        windows = []
        for k in range(len(rcounts[m][policies[0]])):
            if not any(rcounts[m][p][k] > 0 for p in policies):
                continue
            with np.errstate(invalid="ignore", divide="ignore"):
                values = {
                    p: float(rsums[m][p][k] / rcounts[m][p][k]) if rcounts[m][p][k] else math.nan
                    for p in policies
                }
            start = t0 + k * rank_window_s
            windows.append(
                (f"{k + 1}", start, start + rank_window_s, int(rjobs[m][policies[0]][k]), values)
            )
        ranks.append(_stability(m, spec.better, policies, overall, windows))
    notes.append(
        "blocks resample the jobs of each finished schedule (one simulation per policy); "
        "see docs/metrics.md for the assumption this makes"
    )
    return Significance(
        unit="block",
        policies=policies,
        metrics=per_job,
        level=level,
        resamples=resamples,
        seed=seed,
        method=method,
        window_s=window_s,
        rank_window_s=rank_window_s,
        intervals=intervals,
        differences=differences,
        ranks=ranks,
        notes=notes,
    )


# ----------------------------------------------------------------- seeds


def seed_significance(
    values: Mapping[str, Mapping[str, Sequence[float]]],
    level: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
    method: str = "BCa",
    better: Mapping[str, str] | None = None,
    labels: Sequence[Any] | None = None,
) -> Significance:
    """The same assessment across seeds of generated workloads.

    ``values[policy][metric]`` holds one value per seed (the seeds in the same order
    for every policy: seed k of every policy ran on the same generated workload).
    ``better`` maps a metric to ``"lower"`` (the default) or ``"higher"``. Each seed
    is one unit: the interval is a bootstrap of the mean over seeds, the test a
    Wilcoxon signed-rank test over the seeds' paired differences, and rank stability
    ranks the policies in every seed. ``labels`` name the seeds (default 0, 1, ...).
    """
    _check_level(level, resamples)
    policies = list(values)
    if not policies:
        raise UsageError("significance: give at least one policy")
    metrics = list(values[policies[0]])
    better = dict(better or {})
    sums: dict[str, dict[str, np.ndarray]] = {m: {} for m in metrics}
    counts: dict[str, dict[str, np.ndarray]] = {m: {} for m in metrics}
    n_seeds = None
    for p in policies:
        if list(values[p]) != metrics:
            raise UsageError(
                f"significance: policy {p} has metrics {list(values[p])}, expected {metrics}"
            )
        for m in metrics:
            v = np.asarray(values[p][m], dtype=np.float64)
            if n_seeds is None:
                n_seeds = len(v)
            elif len(v) != n_seeds:
                raise UsageError(
                    f"significance: {p} has {len(v)} seeds of {m}, expected {n_seeds} "
                    "(every policy needs the same seeds)"
                )
            known = ~np.isnan(v)
            sums[m][p] = np.where(known, v, 0.0)
            counts[m][p] = known.astype(np.float64)
    intervals, differences = _assess(
        "seed", sums, counts, metrics, policies, level, resamples, seed, method
    )
    ranks = []
    for m in metrics:
        overall = {p: float(_ratio(sums[m][p], counts[m][p])) for p in policies}
        windows = [
            (
                f"seed {labels[k] if labels is not None else k}",
                None,
                None,
                1,
                {p: float(values[p][m][k]) for p in policies},
            )
            for k in range(n_seeds or 0)
        ]
        ranks.append(_stability(m, better.get(m, "lower"), policies, overall, windows))
    return Significance(
        unit="seed",
        policies=policies,
        metrics=metrics,
        level=level,
        resamples=resamples,
        seed=seed,
        method=method,
        window_s=None,
        rank_window_s=None,
        intervals=intervals,
        differences=differences,
        ranks=ranks,
    )


def _seed_key(seed: Any) -> tuple[int, float, str]:
    """Seeds in numeric order (a CSV table holds them as text); others after."""
    try:
        return (0, float(seed), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(seed))


def sweep_significance(
    rows: Iterable[Mapping[str, Any]],
    metrics: Iterable[str] | None = None,
    level: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
    method: str = "BCa",
    registry: Any = None,
) -> dict[str, Significance]:
    """:func:`seed_significance` of every workload of a sweep's tidy rows
    (the ``rows`` of ``schedlab.experiment.run_sweep`` or a read results table).

    Policies are ``policy+backfill`` (with their options when a sweep varies them);
    the value of a per-job metric is its ``mean``, of a system metric its ``value``,
    from the ungrouped (``all``) rows. Only seeds that every policy of the workload
    finished are used. Returns ``{workload: Significance}`` in the rows' order.
    """
    from .measure import ALL
    from .registry import get_registry

    registry = registry or get_registry()
    wanted = None if metrics is None else list(metrics)
    table: dict[str, dict[str, dict[str, dict[Any, float]]]] = {}
    for row in rows:
        if str(row.get("group")) != str(ALL) or row.get("stat") not in ("mean", "value"):
            continue
        metric = str(row["metric"])
        if wanted is not None and metric not in wanted:
            continue
        label = f"{row['policy']}+{row['backfill']}"
        if row.get("options"):
            label += f" ({row['options']})"
        value = row.get("value")
        number = math.nan if value in (None, "") else float(value)
        cell = table.setdefault(str(row["workload"]), {}).setdefault(label, {})
        cell.setdefault(metric, {})[row.get("seed")] = number
    out: dict[str, Significance] = {}
    for workload, per_policy in table.items():
        names = wanted or sorted({m for v in per_policy.values() for m in v})
        names = [m for m in names if all(m in v for v in per_policy.values())]
        if not names:
            continue
        seeds: set[Any] | None = None
        for v in per_policy.values():
            for m in names:
                seeds = set(v[m]) if seeds is None else seeds & set(v[m])
        order = sorted(seeds or (), key=_seed_key)
        values = {
            label: {m: [v[m][s] for s in order] for m in names} for label, v in per_policy.items()
        }
        better = {}
        for m in names:
            try:
                better[m] = registry.metric(m).better or "lower"
            except Exception:  # a metric no longer installed: assume lower is better
                better[m] = "lower"
        out[workload] = seed_significance(
            values, level, resamples, seed, method, better, labels=order
        )
    return out


# ----------------------------------------------------------------- figure


def significance_figure(significance: Significance, width: float | None = None) -> Any:
    """Means with their intervals as error bars (one panel per metric) and, below,
    each policy's rank in every window as a heat map (first metric)."""
    from .plotting import PAGE_WIDTH, new_figure

    policies = significance.policies
    metrics = significance.metrics
    width = width or PAGE_WIDTH
    n = len(metrics)
    fig, axes = new_figure(
        width,
        1.2 + 0.35 * len(policies) + 1.6,
        nrows=2,
        ncols=n,
        squeeze=False,
        gridspec_kw={"height_ratios": [1, 1]},
    )
    positions = list(range(len(policies)))
    for col, metric in enumerate(metrics):
        ax = axes[0][col]
        for y, policy in enumerate(policies):
            item = significance.interval(policy, metric)
            if item.estimate is None:
                continue
            if item.low is not None and item.high is not None:
                err = [[item.estimate - item.low], [item.high - item.estimate]]
                ax.errorbar(item.estimate, y, xerr=err, fmt="o", color="#4477AA", capsize=3, ms=4)
            else:
                ax.plot(item.estimate, y, "o", color="#BBBBBB", ms=4)
        ax.set_yticks(positions, policies if col == 0 else [""] * len(policies))
        ax.set_ylim(len(policies) - 0.5, -0.5)
        ax.set_xlabel(f"mean {metric} ({significance.level * 100:g}% interval)")
        ax.grid(axis="y", visible=False)
    gs = axes[1][0].get_gridspec()
    for ax in axes[1]:
        ax.remove()
    heat = fig.add_subplot(gs[1, :])
    if significance.ranks:
        stability = significance.ranks[0]
        matrix = np.array(
            [[w.ranks[p] for w in stability.windows] for p in policies], dtype=np.float64
        )
        image = heat.imshow(
            matrix,
            aspect="auto",
            cmap="viridis_r",
            interpolation="nearest",
            vmin=1,
            vmax=max(len(policies), 2),
        )
        heat.set_yticks(positions, policies)
        step = max(1, len(stability.windows) // 12)
        ticks = list(range(0, len(stability.windows), step))
        heat.set_xticks(ticks, [stability.windows[k].label for k in ticks])
        if matrix.size <= 400:
            for (y, x), rank in np.ndenumerate(matrix):
                light = (rank - 1) < (max(len(policies), 2) - 1) / 2  # yellow end of viridis_r
                heat.text(
                    x,
                    y,
                    f"{rank:g}",
                    ha="center",
                    va="center",
                    fontsize=6,
                    color="black" if light else "white",
                )
        what = "seed" if significance.unit == "seed" else "window"
        heat.set_xlabel(
            f"{what} ({len(stability.windows)}; "
            + (
                f"{(significance.rank_window_s or 0) / 86400:g} days each; "
                if what == "window"
                else ""
            )
            + f"mean Kendall's tau {stability.mean_tau:.2f})"
            if stability.mean_tau is not None
            else f"{what}"
        )
        heat.set_title(f"Rank by mean {stability.metric} (1 = best)", loc="left")
        heat.grid(False)
        bar = fig.colorbar(image, ax=heat, ticks=list(range(1, len(policies) + 1)))
        bar.set_label("rank")
    return fig
