"""Is a difference between policies real? Intervals, paired tests and rank stability.

One trace: the jobs of each finished schedule are cut into *blocks* by submit time
(every job submitted in the same window, a week by default, shares a block, because
jobs in one queue are not independent). A block bootstrap resamples whole blocks of
the schedules that were simulated once per policy (no simulation is rerun), giving a
confidence interval of each metric's mean and of every paired difference; a
Wilcoxon signed-rank test on the blocks' paired differences gives a p-value, and
Holm's method corrects the p-values of the whole table for multiple comparisons.
Rank stability ranks the policies in each (longer) time window, 30 days by default.

Every metric is treated by what its ``MetricSpec.aggregation`` declares (core names
no metric): the mean and percentiles of a per-job metric are block-bootstrapped
over its jobs (a percentile of the jobs of the drawn blocks, each repeated as often
as drawn); a ratio of sums over time such as utilization over the same windows,
each giving its numerator and denominator (``MetricSpec.window_terms``: busy
processor-seconds clipped to the window, and its capacity); an extreme of the
whole schedule such as the makespan, an extreme statistic (``max``) and a scalar
metric that declares nothing are listed with their value, no interval and the
reason.

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

from .errors import PluginRuntimeWarning, UsageError

#: Fewer blocks or seeds than this: no interval and no test (the reason is given).
MIN_UNITS = 10
#: Up to this many paired units that differ, the Wilcoxon test's p-value is exact
#: (the exact null distribution of the signed-rank sum, ties included); above, the
#: normal approximation with tie and continuity corrections, and a note says so.
_EXACT_UNITS = 200
#: Default block length (jobs submitted in the same week share a block).
DEFAULT_WINDOW = "7d"
#: Default window of the per-window ranking (rank stability).
DEFAULT_RANK_WINDOW = "30d"


def default_metrics() -> list[str]:
    """The metrics assessed by default: those of the comparison table's columns (per-job
    means, and the whole-schedule metrics: those without a block interval are listed
    with the reason)."""
    from .comparison import TABLE_COLUMNS

    return list(dict.fromkeys(metric for _, metric, _ in TABLE_COLUMNS))


def default_stats() -> list[str]:
    """The statistics of per-job metrics assessed by default: those of the comparison
    table's columns that can have a block interval (the mean and percentiles; not
    the maximum, an extreme)."""
    from .comparison import TABLE_COLUMNS

    return list(
        dict.fromkeys(
            stat
            for _, _, stat in TABLE_COLUMNS
            if stat is not None and (stat == "mean" or _resampled_quantile(stat) is not None)
        )
    )


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
    """A policy's metric with its confidence interval: the statistic ``stat`` of a
    per-job metric over the jobs (``mean``, ``median``, ``p90`` ...), or the
    ``value`` of a whole-schedule metric (utilization ...); across seeds, the mean
    over seeds of either.

    ``low``/``high`` are ``None`` when no interval is available; ``reason`` says why."""

    policy: str
    metric: str
    estimate: float | None
    low: float | None
    high: float | None
    units: int
    reason: str = ""
    stat: str = "mean"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return attrs.asdict(self)


@attrs.frozen
class Difference:
    """``first - second`` of one metric, with its interval, the Wilcoxon signed-rank
    p-value over the paired units (those where the two differ: ``tested``), the
    Holm-adjusted p-value and the verdict at the chosen level (``None`` when no test
    was possible; ``reason`` says why)."""

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
    #: The statistic compared (as :attr:`Interval.stat`).
    stat: str = "mean"
    #: The units in the Wilcoxon test: ``units`` without those where the two
    #: values are equal (Wilcoxon's treatment of zeros); ``None`` without a test.
    tested: int | None = None

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
    #: The statistic ranked (as :attr:`Interval.stat`).
    stat: str = "mean"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "metric": self.metric,
            "stat": self.stat,
            "overall": self.overall,
            "firsts": self.firsts,
            "mean_tau": self.mean_tau,
            "windows": [w.to_dict() for w in self.windows],
        }


@attrs.define
class Significance:
    """Intervals, paired differences and rank stability of a comparison.

    ``unit`` is ``"block"`` (block bootstrap over one trace) or ``"seed"``;
    ``stats`` are the statistics of the per-job metrics assessed (``mean``,
    ``median``, ``pNN``); a whole-schedule metric's statistic is ``value``."""

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
    stats: list[str] = attrs.field(factory=lambda: ["mean"])

    def interval(self, policy: str, metric: str, stat: str | None = None) -> Interval:
        """The interval of ``policy``'s ``metric`` (its ``stat``; by default the mean
        of a per-job metric, the value of a whole-schedule one)."""
        for item in self.intervals:
            if item.policy == policy and item.metric == metric and _is_stat(item.stat, stat):
                return item
        raise UsageError(f"no interval of {_label(metric, stat or 'mean')} for {policy}")

    def difference(
        self, first: str, second: str, metric: str, stat: str | None = None
    ) -> Difference:
        """The paired difference ``first - second`` of ``metric`` (its ``stat``, as in
        :meth:`interval`)."""
        for item in self.differences:
            if (
                item.metric == metric
                and (item.first, item.second) == (first, second)
                and _is_stat(item.stat, stat)
            ):
                return item
        raise UsageError(
            f"no paired difference {first} - {second} of {_label(metric, stat or 'mean')}"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "unit": self.unit,
            "policies": self.policies,
            "metrics": self.metrics,
            "stats": self.stats,
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

        ci = Table(title=f"Metrics with {pct} intervals ({self._how()})", title_justify="left")
        for name in ("policy", "metric", "estimate", "low", "high", units):
            ci.add_column(name, justify="left" if name in ("policy", "metric") else "right")
        unavailable: dict[str, str] = {}
        for i in self.intervals:
            label = _label(i.metric, i.stat)
            if i.reason and i.estimate is not None:
                unavailable.setdefault(label, i.reason)
            ci.add_row(i.policy, label, num(i.estimate), num(i.low), num(i.high), str(i.units))
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
                _label(d.metric, d.stat),
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
                title=f"Rank stability of {_label(r.metric, r.stat)}: {len(r.windows)} {what}s, "
                "mean Kendall's "
                f"tau vs overall ranking {num(r.mean_tau)}",
                title_justify="left",
            )
            table.add_column("policy")
            table.add_column("overall rank", justify="right")
            table.add_column(f"first in ({what}s)", justify="right")
            for policy in self.policies:
                table.add_row(policy, str(r.overall[policy]), str(r.firsts[policy]))
            out.append(table)
        lines = [f"no interval of {label}: {why}" for label, why in unavailable.items()]
        lines += self.notes
        if lines:
            from rich.text import Text

            out.append(Text("\n".join(f"note: {n}" for n in lines)))
        return out

    def _how(self) -> str:
        if self.unit == "seed":
            return f"bootstrap over seeds, {self.resamples} resamples, {self.method}"
        days = (self.window_s or 0) / 86400.0
        return f"block bootstrap, {days:g}-day blocks, {self.resamples} resamples, {self.method}"

    def plot(self, path: Any, **kwargs: Any) -> list[Any]:
        """Save :func:`significance_figure` to ``path``; returns the files written.
        The caller's matplotlib style is left as it was."""
        from .plotting import kept_style, save_figure

        with kept_style():
            return save_figure(significance_figure(self, **kwargs), path)


def _is_stat(stat: str, wanted: str | None) -> bool:
    return stat in ("mean", "value") if wanted is None else stat == wanted


def _label(metric: str, stat: str) -> str:
    """``wait mean``, ``wait p90``, ``utilization`` (a whole-schedule value)."""
    return metric if stat == "value" else f"{metric} {stat}"


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
    means (two-sided, the units of difference 0 dropped, exact up to
    ``_EXACT_UNITS`` others: :func:`_wilcoxon`; 1.0 where every difference is 0).

    Returns ``(estimate, low, high, p_value)``."""
    sa, ca, sb, cb = (np.asarray(x, dtype=np.float64) for x in (sums_a, counts_a, sums_b, counts_b))
    low, high = _bootstrap(
        (sa, ca, sb, cb), _ratio_difference, level, resamples, np.random.default_rng(rng), method
    )
    d = np.asarray(sa / ca - sb / cb)
    # One test per problem: each drops its own zero differences (see _wilcoxon).
    rows = d.reshape(-1, d.shape[-1]) if d.ndim else d.reshape(1, 1)
    p = np.array([_wilcoxon(row)[0] for row in rows], dtype=np.float64).reshape(d.shape[:-1])
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
    stats: Mapping[str, str] | None = None,
    streams: Mapping[str, int] | None = None,
) -> tuple[list[Interval], list[dict[str, Any]]]:
    """Intervals and pending paired differences (see :func:`_differences`) from
    per-unit sums and counts (``sums[metric][policy]`` has one entry per unit; the
    mean is sum / count). ``stats`` names each metric's statistic (default
    ``mean``), ``streams`` its random stream (default its position)."""
    scipy_stats()  # fail before any work when scipy is missing
    intervals: list[Interval] = []
    pending: list[dict[str, Any]] = []
    for position, metric in enumerate(metrics):
        m_index = position if streams is None else streams[metric]
        stat = "mean" if stats is None else stats[metric]
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
            intervals.append(Interval(policy, metric, estimate, low, high, n, reason, stat))
        for i, first in enumerate(policies):
            for j in range(i + 1, len(policies)):
                second = policies[j]
                sa, ca = sums[metric][first], counts[metric][first]
                sb, cb = sums[metric][second], counts[metric][second]
                both = (ca > 0) & (cb > 0)
                n = int(both.sum())
                entry = _entry(first, second, metric, stat, n)
                if n:
                    entry["estimate"] = float(_ratio(sa, ca) - _ratio(sb, cb))
                if n < MIN_UNITS:
                    entry["reason"] = _too_few(n, unit)
                else:
                    rng = np.random.default_rng([seed, m_index, 1000 + i, j])
                    _, lo, hi, _ = paired_difference(
                        sa[both], ca[both], sb[both], cb[both], level, resamples, rng, method
                    )
                    entry["low"], entry["high"], entry["reason"] = _bounds(lo, hi)
                    d = sa[both] / ca[both] - sb[both] / cb[both]
                    entry["p_value"], entry["tested"], entry["exact"] = _wilcoxon(d)
                pending.append(entry)
    return intervals, pending


def _entry(first: str, second: str, metric: str, stat: str, units: int) -> dict[str, Any]:
    """A paired difference not yet Holm-corrected (no estimate, interval or test)."""
    return {
        "first": first,
        "second": second,
        "metric": metric,
        "stat": stat,
        "estimate": None,
        "low": None,
        "high": None,
        "p_value": None,
        "units": units,
        "reason": "",
        "tested": None,
        "exact": True,
    }


def _differences(pending: Sequence[Mapping[str, Any]], level: float) -> list[Difference]:
    """The paired differences with Holm's correction over every test among them."""
    adjusted = holm([e["p_value"] for e in pending])
    alpha = 1.0 - level
    return [
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
            stat=e["stat"],
            tested=e.get("tested"),
        )
        for e, p in zip(pending, adjusted, strict=True)
    ]


def _test_notes(pending: Sequence[Mapping[str, Any]], unit: str) -> list[str]:
    """What the reader of the p-values should know: the tests that left out units
    where the two values are equal (how many of how many), and the tests over so
    many units that their p-value is the normal approximation, not exact."""
    notes: list[str] = []
    dropped = [e for e in pending if e.get("tested") is not None and e["tested"] < e["units"]]
    if dropped:
        shown = [
            f"{e['units'] - e['tested']} of {e['units']} {unit}s in {e['first']} - "
            f"{e['second']} {_label(e['metric'], e['stat'])}"
            for e in dropped[:5]
        ]
        more = f", and {len(dropped) - 5} more tests" if len(dropped) > 5 else ""
        notes.append(
            f"the Wilcoxon tests leave out the {unit}s where the two values are equal "
            f"(Wilcoxon's treatment of zeros; `tested` in the JSON): {'; '.join(shown)}{more}"
        )
    approximate = [e for e in pending if e.get("tested") is not None and not e["exact"]]
    if approximate:
        notes.append(
            f"{len(approximate)} of the Wilcoxon tests compare more than {_EXACT_UNITS} "
            f"{unit}s that differ: their p-values are the normal approximation (with tie "
            f"and continuity corrections), the others' are exact"
        )
    return notes


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
    stat: str = "mean",
) -> RankStability | None:
    """The rank stability of one metric, or ``None`` when a policy has no overall
    value (a metric unavailable for the workload, e.g. fairness without user ids):
    there is no overall ranking to compare the windows with."""
    if any(math.isnan(overall[p]) for p in policies):
        return None
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
    return RankStability(metric, overall_ranks, rows, firsts, mean_tau, stat)


def _no_ranking(label: str, policies: Sequence[str], overall: Mapping[str, float]) -> str:
    """The note of a metric left out of the rank stability (no overall value)."""
    missing = [p for p in policies if math.isnan(overall[p])]
    return f"no ranking of {label}: no value for {', '.join(missing)}"


#: Most bootstrap resamples allowed (``--resamples``, ``resamples=``): beyond it a
#: run takes hours and gigabytes for no visible gain in the interval's precision.
MAX_RESAMPLES = 1_000_000


def _check_level(level: float, resamples: int, seed: object = 0) -> None:
    """:class:`UsageError` naming the argument for a ``level``, ``resamples`` or
    ``seed`` of the wrong type or out of range (``resamples="100"``, ``seed=-1``)."""
    if isinstance(level, bool) or not isinstance(level, (int, float, np.integer, np.floating)):
        raise UsageError(f"level must be a number between 0 and 1, got {level!r}")
    if not 0.0 < level < 1.0:
        raise UsageError(f"level {level}: must be between 0 and 1 (e.g. 0.95)")
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)):
        raise UsageError(f"resamples must be a whole number, got {resamples!r}")
    if not 100 <= resamples <= MAX_RESAMPLES:
        raise UsageError(f"resamples {resamples}: must be between 100 and {MAX_RESAMPLES:,}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise UsageError(f"seed must be a whole number >= 0, got {seed!r}")


# ----------------------------------------------------------------- percentiles

#: Largest blocks x distinct values table kept for the quantiles of resampled blocks
#: (beyond it, counts are looked up by binary search instead: same results).
_TABLE_LIMIT = 4_000_000


class _BlockQuantiles:
    """The known values of one per-job metric of one schedule, by block, ready for
    the quantiles of resampled blocks.

    A resample is a count per block (how often it was drawn); its quantile is the
    quantile of the jobs of the drawn blocks, each block's jobs repeated as often as
    it was drawn, interpolated linearly like :func:`numpy.quantile` (and the metrics
    engine). It is found by binary search over the distinct values, counting the
    resampled jobs at or below a value from each block's cumulative counts: no
    resampled data set is ever built."""

    def __init__(self, values: np.ndarray, blocks: np.ndarray, n_blocks: int) -> None:
        self.unique, rank = np.unique(values, return_inverse=True)
        self.n_blocks = n_blocks
        n_unique = len(self.unique)
        rank = rank.astype(np.int64).ravel()
        blocks = blocks.astype(np.int64)
        self.table: np.ndarray | None = None
        if n_blocks * n_unique <= _TABLE_LIMIT:
            # Distinct value x block (one contiguous row per value, for the look-ups).
            flat = np.bincount(rank * n_blocks + blocks, minlength=n_blocks * n_unique)
            self.table = np.cumsum(flat.reshape(n_unique, n_blocks), axis=0)
            self.sizes = self.table[-1].astype(np.int64)
        else:
            self.stride = n_unique + 1
            self.keys = np.sort(blocks * self.stride + rank)
            self.starts = np.searchsorted(self.keys, np.arange(n_blocks) * self.stride)
            self.sizes = np.bincount(blocks, minlength=n_blocks).astype(np.int64)

    def _at_or_below(self, counts: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Resampled jobs with a value at or below ``unique[u]`` (one u per row)."""
        if self.table is not None:
            per_block = self.table[u]
        else:
            query = np.arange(self.n_blocks) * self.stride + u[:, None]
            per_block = np.searchsorted(self.keys, query, side="right") - self.starts
        return np.einsum("rb,rb->r", counts, per_block)

    def _order_statistic(self, counts: np.ndarray, k: np.ndarray) -> np.ndarray:
        """The value at 0-based position ``k`` of each row's sorted resampled jobs."""
        lo = np.zeros(len(k), dtype=np.int64)
        hi = np.full(len(k), len(self.unique) - 1, dtype=np.int64)
        while np.any(lo < hi):
            mid = (lo + hi) // 2
            above = self._at_or_below(counts, mid) > k
            hi = np.where(above, mid, hi)
            lo = np.where(above, lo, mid + 1)
        return self.unique[lo]

    def quantile(self, counts: np.ndarray, q: float) -> np.ndarray:
        """The ``q`` quantile of every resample (``counts``: resamples x blocks)."""
        total = counts @ self.sizes
        out = np.full(len(total), np.nan)
        ok = total > 0
        if not ok.any():
            return out
        counts, total = counts[ok], total[ok]
        position = q * (total - 1)
        below = np.floor(position).astype(np.int64)
        above = np.minimum(below + 1, total - 1)
        values = self._order_statistic(np.vstack([counts, counts]), np.concatenate([below, above]))
        a, b = values[: len(total)], values[len(total) :]
        with np.errstate(invalid="ignore"):  # inf - inf when both are inf
            out[ok] = np.where(a == b, a, a + (b - a) * (position - below))
        return out


def _quantile_statistic(
    terms: Sequence[tuple[_BlockQuantiles, float]], q: float, n_blocks: int
) -> Any:
    """A vectorised statistic of resampled block indices for ``scipy.stats.bootstrap``:
    the sum of sign x quantile over ``terms`` (one term: a quantile; two: a paired
    difference of quantiles over the same resampled blocks)."""

    def statistic(index: np.ndarray, axis: int = -1) -> np.ndarray:
        index = np.asarray(index)
        shape = index.shape[:-1]
        rows = index.reshape(-1, index.shape[-1]).astype(np.int64)
        out = np.empty(len(rows))
        step = max(1, 20_000 // n_blocks)
        for lo in range(0, len(rows), step):
            part = rows[lo : lo + step]
            offsets = np.arange(len(part))[:, None] * n_blocks
            counts = np.bincount((part + offsets).ravel(), minlength=len(part) * n_blocks)
            counts = counts.reshape(len(part), n_blocks)
            out[lo : lo + step] = sum(sign * t.quantile(counts, q) for t, sign in terms)
        return out.reshape(shape)

    return statistic


def _positions(bins: np.ndarray, used: np.ndarray) -> np.ndarray:
    """Position of each job's block among the ``used`` blocks (sorted bin numbers)."""
    return np.searchsorted(used, bins)


class _BlockCache:
    """:class:`_BlockQuantiles` and per-block percentiles of one per-job metric,
    built once per policy and set of blocks (shared by its statistics and pairs)."""

    def __init__(self, data: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> None:
        self.data = data
        self._quantiles: dict[tuple[str, bytes], _BlockQuantiles] = {}
        self._subsets: dict[tuple[str, bytes], tuple[np.ndarray, np.ndarray]] = {}
        self._per_block: dict[tuple[str, bytes, str], np.ndarray] = {}

    def subset(self, policy: str, used: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Block positions (among ``used``) and values of the policy's jobs in them."""
        key = (policy, used.tobytes())
        if key not in self._subsets:
            bins, values = self.data[policy]
            keep = np.isin(bins, used)
            self._subsets[key] = (_positions(bins[keep], used), values[keep])
        return self._subsets[key]

    def per_block(self, policy: str, used: np.ndarray, stat: str) -> np.ndarray:
        """Each used block's own ``stat`` (a percentile of its jobs alone)."""
        from .measure import grouped_statistics

        key = (policy, used.tobytes(), stat)
        if key not in self._per_block:
            positions, values = self.subset(policy, used)
            self._per_block[key] = grouped_statistics(positions, values, len(used), (stat,))[0][
                stat
            ]
        return self._per_block[key]

    def quantiles(self, policy: str, used: np.ndarray) -> _BlockQuantiles:
        key = (policy, used.tobytes())
        if key not in self._quantiles:
            positions, values = self.subset(policy, used)
            self._quantiles[key] = _BlockQuantiles(values, positions, len(used))
        return self._quantiles[key]


def _quantile_assess(
    metric: str,
    stat: str,
    q: float,
    cache: _BlockCache,
    policies: Sequence[str],
    level: float,
    resamples: int,
    seed: int,
    method: str,
    stream: int,
) -> tuple[list[Interval], list[dict[str, Any]]]:
    """Intervals and pending paired differences of a percentile of a per-job metric:
    ``cache.data[policy]`` holds the block number and value of each job with a
    value."""
    scipy_stats()
    intervals: list[Interval] = []
    pending: list[dict[str, Any]] = []
    full: dict[str, float | None] = {}
    for p_index, policy in enumerate(policies):
        bins, values = cache.data[policy]
        used = np.unique(bins)
        n = len(used)
        # The engine's percentile (numpy's linear interpolation).
        full[policy] = float(np.quantile(values, q)) if len(values) else None
        low = high = None
        if n < MIN_UNITS:
            reason = _too_few(n, "block")
        else:
            lo, hi = _bootstrap(
                (np.arange(n, dtype=np.float64),),
                _quantile_statistic([(cache.quantiles(policy, used), 1.0)], q, n),
                level,
                resamples,
                np.random.default_rng([seed, stream, p_index]),
                method,
            )
            low, high, reason = _bounds(lo, hi)
        intervals.append(Interval(policy, metric, full[policy], low, high, n, reason, stat))
    for i, first in enumerate(policies):
        for j in range(i + 1, len(policies)):
            second = policies[j]
            used = np.intersect1d(cache.data[first][0], cache.data[second][0])
            n = len(used)
            entry = _entry(first, second, metric, stat, n)
            fa, fb = full[first], full[second]
            if fa is not None and fb is not None:
                entry["estimate"] = fa - fb
            if n < MIN_UNITS:
                entry["reason"] = _too_few(n, "block")
                pending.append(entry)
                continue
            terms = [(cache.quantiles(first, used), 1.0), (cache.quantiles(second, used), -1.0)]
            lo, hi = _bootstrap(
                (np.arange(n, dtype=np.float64),),
                _quantile_statistic(terms, q, n),
                level,
                resamples,
                np.random.default_rng([seed, stream, 1000 + i, j]),
                method,
            )
            entry["low"], entry["high"], entry["reason"] = _bounds(lo, hi)
            # Wilcoxon over the blocks' own percentiles (each block's jobs alone).
            d = cache.per_block(first, used, stat) - cache.per_block(second, used, stat)
            entry["p_value"], entry["tested"], entry["exact"] = _wilcoxon(d)
            pending.append(entry)
    return intervals, pending


def _wilcoxon(d: np.ndarray) -> tuple[float, int, bool]:
    """Two-sided Wilcoxon signed-rank test of paired differences ``d``:
    ``(p_value, tested, exact)``.

    The differences of 0 are dropped first (Wilcoxon's treatment of zeros), and
    ``tested`` counts the others (p = 1.0 when none is left). Up to
    ``_EXACT_UNITS`` of them the p-value is exact: twice the smaller tail of the
    exact null distribution of the sum of the positive differences' ranks (every
    sign equally likely, ties given their mid-rank: the exact permutation test,
    which is scipy's exact test when no magnitudes tie). Above, it is the normal
    approximation with tie and continuity corrections (``exact`` False). A NaN
    difference gives a NaN p-value."""
    d = np.asarray(d, dtype=np.float64).ravel()
    if np.isnan(d).any():
        return float("nan"), int(np.count_nonzero(d != 0)), True
    d = d[d != 0]
    n = len(d)
    if n == 0:
        return 1.0, 0, True
    stats = scipy_stats()
    if n > _EXACT_UNITS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = stats.wilcoxon(d, method="asymptotic", correction=True)
        return float(result.pvalue), n, False
    # Mid-ranks are multiples of 1/2: doubled, every rank sum is an integer.
    doubled = np.rint(2.0 * stats.rankdata(np.abs(d))).astype(np.int64)
    observed = int(doubled[d > 0].sum())
    probability = np.zeros(int(doubled.sum()) + 1, dtype=np.float64)
    probability[0] = 1.0
    top = 0
    for rank in sorted(doubled.tolist()):
        top += rank
        shifted = probability[: top + 1 - rank].copy()
        probability[: top + 1] *= 0.5
        probability[rank : top + 1] += 0.5 * shifted
    lower = float(probability[: observed + 1].sum())
    upper = float(probability[observed:].sum())
    return min(1.0, 2.0 * min(lower, upper)), n, True


# ----------------------------------------------------------------- one trace

#: Why a whole-schedule extreme (``MetricSpec.aggregation == "extreme"``) has no
#: interval on one trace.
EXTREME_REASON = "an extreme of the whole schedule has no block-bootstrap interval"
#: Why an extreme statistic of a per-job metric (``max``, ``min``, ``p100``, ``p0``)
#: has none.
EXTREME_STAT_REASON = "an extreme of the jobs has no block-bootstrap interval"


def _resampled_quantile(stat: str) -> float | None:
    """The quantile of a percentile statistic that gets a block-bootstrap interval:
    ``None`` for other names and for ``p0`` and ``p100``, which are the minimum and
    the maximum (extremes, like ``min`` and ``max``)."""
    from .measure import quantile_of

    q = quantile_of(stat)
    return None if q is None or q in (0.0, 1.0) else q


def _extreme_stat(stat: str) -> bool:
    """Whether a statistic of a per-job metric is an extreme of the jobs."""
    from .measure import quantile_of

    return stat in ("max", "min") or quantile_of(stat) in (0.0, 1.0)


def _undeclared_reason(name: str) -> str:
    return (
        f"{name} does not declare how it combines over time windows "
        "(MetricSpec.aggregation), so it has no block-bootstrap interval"
    )


@attrs.define
class _Schedule:
    """One policy's finished schedule: its job columns and machine size."""

    columns: Any
    procs: float | None


def _schedule(source: Any) -> _Schedule:
    from .measure import _unwrap
    from .model import _read_only

    try:
        unwrapped = _unwrap(source)
    except UsageError:
        raise UsageError(
            f"significance needs simulation Results or Workloads, got {type(source).__name__}"
        ) from None
    procs = unwrapped.procs
    if procs is None and unwrapped.header is not None:
        procs = unwrapped.header.machine_size()
    # Read only: a metric writing into its columns cannot change the other metrics.
    return _Schedule(_read_only(unwrapped.columns), float(procs) if procs else None)


def _metric_kwargs(spec: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    return {
        o.name: o.convert(options[o.name], f"metric {spec.name}")
        if o.name in options
        else o.default
        for o in spec.options
    }


def _metric_values(
    schedule: _Schedule, spec: Any, registry: Any, options: Mapping[str, Any]
) -> np.ndarray:
    """One per-job metric of a schedule."""
    with registry.blame(spec):
        values = spec.compute(schedule.columns, **_metric_kwargs(spec, options))
    return np.asarray(values, dtype=np.float64)


def _scalar(
    schedule: _Schedule, spec: Any, registry: Any, options: Mapping[str, Any]
) -> tuple[float | None, str]:
    """A whole-schedule metric's value, or ``None`` and why it is unavailable."""
    from .measure import _accepts_procs, _scalar_value

    kwargs = _metric_kwargs(spec, options)
    if _accepts_procs(spec.compute):
        kwargs["procs"] = schedule.procs
    return _scalar_value(spec, registry, schedule.columns, kwargs, None)


def _window_terms(
    schedule: _Schedule,
    spec: Any,
    registry: Any,
    options: Mapping[str, Any],
    t0: float,
    length: float,
    n_windows: int,
) -> tuple[np.ndarray, np.ndarray] | str:
    """A ratio metric's numerators and denominators in each of ``n_windows`` windows
    of ``length`` from ``t0``, the first and last windows cut to the schedule's period
    (first submit to last end), so that they add up to the whole-schedule value; or
    why they are unavailable."""
    from .measure import MetricUnavailable, _accepts_procs, _schedule_period

    period = _schedule_period(schedule.columns)
    if period is None:
        return "no job has a known submit, wait and run time"
    first, last = period
    inner = np.clip(t0 + length * np.arange(1, n_windows), first, last)
    edges = np.concatenate(([first], inner, [last]))
    kwargs = _metric_kwargs(spec, options)
    if _accepts_procs(spec.window_terms):
        kwargs["procs"] = schedule.procs
    try:
        with registry.blame(spec):
            numerators, denominators = spec.window_terms(schedule.columns, edges, **kwargs)
    except MetricUnavailable as exc:
        return str(exc)
    numerators = np.asarray(numerators, dtype=np.float64)
    denominators = np.asarray(denominators, dtype=np.float64)
    if numerators.shape != (n_windows,) or denominators.shape != (n_windows,):
        raise UsageError(
            f"metric {spec.name}: window_terms returned arrays of shape {numerators.shape} "
            f"and {denominators.shape}, expected one value per window ({n_windows})"
        )
    return numerators, denominators


def _inconsistent_terms(
    spec: Any,
    registry: Any,
    options: Mapping[str, Any],
    schedules: Mapping[str, _Schedule],
    terms: Mapping[str, tuple[np.ndarray, np.ndarray] | str],
) -> str | None:
    """Why a ratio metric's window terms cannot be used, or None: for some policy the
    pooled ratio of its terms (sum of numerators over sum of denominators, which must
    be the metric over the whole schedule) differs from what its ``compute`` gives.
    The first mismatch is warned about once (a
    :class:`~schedlab.errors.PluginRuntimeWarning` naming the metric's plugin), so
    the interval, which would describe another number than the one shown, is left
    out."""
    for policy, got in terms.items():
        if isinstance(got, str):
            continue
        value, _ = _scalar(schedules[policy], spec, registry, options)
        if value is None:
            continue
        pooled = float(_ratio(got[0], got[1]))
        if math.isclose(pooled, value, rel_tol=1e-6, abs_tol=1e-12) or (
            math.isnan(pooled) and math.isnan(value)
        ):
            continue
        reason = (
            f"its window_terms add up to {pooled:.6g} for {policy}, but compute() gives "
            f"{value:.6g}: the terms must add up to the metric over the whole schedule"
        )
        info = registry.plugin_of(spec)
        who = info.describe() if info is not None else "metric"
        block = f"; SCHEDLAB_BLOCK_PLUGINS={info.name} disables it" if info is not None else ""
        warnings.warn(
            PluginRuntimeWarning(
                f"{who}: metric {spec.name!r}: {reason}; its interval is left out (a bug in "
                f"that plugin: report it to its authors{block})",
                plugin=info.name if info is not None else "",
                component=f"metric {spec.name}",
            ),
            stacklevel=3,
        )
        return f"window_terms inconsistent with the metric ({reason})"
    return None


#: Most windows of either kind over a trace: bootstrap blocks (``--window``) and
#: ranking windows (``--rank-window``). The BCa interval's jackknife costs the square
#: of the blocks (some 30 s for 10,000 blocks of a 2,000-job trace), and every window
#: holds memory per metric and policy: a shorter window is refused. One-hour blocks
#: of a whole year (8,760) fit.
MAX_WINDOWS = 10_000


def _windows(
    submits: np.ndarray, window: str | float, rank_window: str | float | None
) -> tuple[float, float, float, float, list[str]]:
    """``(t0, span, window_s, rank_window_s, notes)`` of :func:`block_significance`
    from the submit times: windows longer than the trace, or giving more than
    :data:`MAX_WINDOWS` windows over it, are a :class:`UsageError`."""
    submits = np.asarray(submits, dtype=np.float64)
    submits = submits[~np.isnan(submits)]
    if not len(submits):
        raise UsageError("significance: no job has a submit time")
    t0, t1 = float(submits.min()), float(submits.max())
    span = t1 - t0
    notes: list[str] = []
    window_s = parse_window(window, "window")
    # (the CLI's --block: the bootstrap's block length)
    checked: list[tuple[Any, float, str, bool]] = [(window, window_s, "block", True)]
    if rank_window is None:
        rank_window_s = parse_window(DEFAULT_RANK_WINDOW)
        if rank_window_s > span:
            # One window holding the whole trace (not a window the user gave: no error).
            rank_window_s = span + 1.0
            notes.append("the trace spans less than 30 days: one ranking window")
        checked.append((DEFAULT_RANK_WINDOW, rank_window_s, "rank window", False))
    else:
        rank_window_s = parse_window(rank_window, "rank window")
        checked.append((rank_window, rank_window_s, "rank window", True))
    days = f"{span / 86400.0:.1f} days between the first and the last submission"
    for text, seconds, what, given in checked:
        if given and seconds > span:
            raise UsageError(f"{what} {text!r} is longer than the trace ({days})")
        ratio = span / seconds
        count = math.floor(ratio) + 1 if math.isfinite(ratio) else math.inf
        if count > MAX_WINDOWS:
            if not math.isfinite(count):
                shown = "too many"
            elif count < 10**15:
                shown = f"{count:,}"
            else:
                shown = f"about {ratio:.3g}"
            flag = "--block" if what == "block" else "--rank-window"
            raise UsageError(
                f"{what} {text!r} gives {shown} windows over the trace ({days}); at most "
                f"{MAX_WINDOWS:,}: give a longer {flag}"
            )
    return t0, span, window_s, rank_window_s, notes


def check_windows(
    workload: Any, window: str | float = DEFAULT_WINDOW, rank_window: str | float | None = None
) -> None:
    """Check the windows of :func:`block_significance` against ``workload`` (a
    ``Workload`` or simulation ``Result``) before simulating it: a window longer than
    the trace, or giving more than :data:`MAX_WINDOWS` windows over it, is a
    :class:`UsageError` naming it."""
    _windows(_schedule(workload).columns["submit_time"], window, rank_window)


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
    stats: Iterable[str] | str | None = None,
) -> Significance:
    """Intervals, paired tests and rank stability of policies simulated on one trace.

    ``results`` maps a label (``"fcfs+easy"``) to that policy's simulation ``Result``
    (or a simulated ``Workload``); every schedule must be of the same trace.
    ``metrics`` default to :func:`default_metrics`. How a metric is resampled follows
    its ``MetricSpec.aggregation``: a per-job metric's ``stats`` (default:
    :func:`default_stats`, the mean and the 90th percentile; ``median`` and any
    percentile ``pNN`` too) are block-bootstrapped over
    its jobs; a ratio of sums over time (utilization) over the same windows, each
    window giving its numerator and denominator; an extreme of the whole schedule
    (makespan), an extreme statistic (``max``, ``min``, ``p100``, ``p0``) and a
    metric that declares nothing get their value with no interval and the reason.
    ``window`` is the block length (``"7d"``, ``"2w"``, seconds), ``rank_window``
    the window of the per-window ranking (default 30 days, or the whole trace when
    it is shorter; a given window longer than the trace, or a block window, is an
    error).
    ``metric_options`` are metric options such as ``threshold``. Each schedule is
    resampled as it is: no simulation is rerun (see docs/metrics.md for what that
    assumes).
    """
    from .measure import grouped_statistics, parse_stats, quantile_of
    from .registry import get_registry

    registry = registry or get_registry()
    _check_level(level, resamples, seed)
    policies = list(results)
    if not policies:
        raise UsageError("significance: give at least one simulated policy")
    names: list[str] = []
    specs: dict[str, Any] = {}
    for name in default_metrics() if metrics is None else list(metrics):
        try:
            spec = registry.metric(name)
        except UsageError:
            if metrics is None:  # a default metric that is not installed: left out
                continue
            raise
        if spec.name not in specs:
            specs[spec.name] = spec
            names.append(spec.name)
    if not names:
        raise UsageError("significance: give at least one metric")
    stat_names, stat_plugins = parse_stats(default_stats() if stats is None else stats, registry)
    options = dict(metric_options or {})
    schedules = {p: _schedule(results[p]) for p in policies}
    submits = np.concatenate(
        [np.asarray(schedules[p].columns["submit_time"], dtype=np.float64) for p in policies]
    )
    t0, span, window_s, rank_window_s, notes = _windows(submits, window, rank_window)
    n_blocks = int(span // window_s) + 1
    n_rank = int(span // rank_window_s) + 1

    def bins_of(p: str, length: float) -> np.ndarray:
        submit = np.asarray(schedules[p].columns["submit_time"], dtype=np.float64)
        with np.errstate(invalid="ignore"):
            return np.where(np.isnan(submit), -1, (submit - t0) // length).astype(np.int64)

    block_bins = {p: bins_of(p, window_s) for p in policies}
    rank_bins = {p: bins_of(p, rank_window_s) for p in policies}
    jobs_per_rank_window = np.bincount(
        rank_bins[policies[0]][rank_bins[policies[0]] >= 0], minlength=n_rank
    )

    # What each metric is, and its per-job values (computed once per schedule).
    kinds = {m: specs[m].combines_as for m in names}
    per_job = [m for m in names if kinds[m] == "mean"]
    values = {
        m: {p: _metric_values(schedules[p], specs[m], registry, options) for p in policies}
        for m in per_job
    }
    # (metric, stat) in report order; the means keep the random streams they had when
    # only means were assessed (their order among the means).
    items: list[tuple[str, str]] = []
    for m in names:
        items += [(m, st) for st in stat_names] if kinds[m] == "mean" else [(m, "value")]
    mean_streams = {m: k for k, m in enumerate(per_job)}
    intervals: list[Interval] = []
    pending: list[dict[str, Any]] = []
    ranks: list[RankStability] = []

    # Per-job means: block sums and counts (windows where no policy has a job with a
    # value of any per-job metric are not blocks).
    mean_metrics = [m for m in per_job if "mean" in stat_names]
    sums: dict[str, dict[str, np.ndarray]] = {m: {} for m in per_job}
    counts: dict[str, dict[str, np.ndarray]] = {m: {} for m in per_job}
    occupied = np.zeros(n_blocks, dtype=bool)
    for m in per_job:
        for p in policies:
            bins, v = block_bins[p], values[m][p]
            known = (bins >= 0) & ~np.isnan(v)
            sums[m][p] = np.bincount(bins[known], weights=v[known], minlength=n_blocks)
            counts[m][p] = np.bincount(bins[known], minlength=n_blocks).astype(np.float64)
            occupied |= counts[m][p] > 0
    results_by_item: dict[tuple[str, str], tuple[list[Interval], list[dict[str, Any]]]] = {}
    if mean_metrics:
        got_i, got_d = _assess(
            "block",
            {m: {p: v[occupied] for p, v in sums[m].items()} for m in mean_metrics},
            {m: {p: v[occupied] for p, v in counts[m].items()} for m in mean_metrics},
            mean_metrics,
            policies,
            level,
            resamples,
            seed,
            method,
            streams=mean_streams,
        )
        for m in mean_metrics:
            results_by_item[(m, "mean")] = (
                [x for x in got_i if x.metric == m],
                [x for x in got_d if x["metric"] == m],
            )

    caches: dict[str, _BlockCache] = {}
    inconsistent: set[str] = set()  # ratio metrics whose window terms disagree
    for position, (m, st) in enumerate(items):
        if (m, st) in results_by_item:
            continue
        spec = specs[m]
        stream = 100 + position
        if kinds[m] == "mean":
            q = _resampled_quantile(st)
            if m not in caches:
                known_values = {}
                for p in policies:
                    bins, v = block_bins[p], values[m][p]
                    known = (bins >= 0) & ~np.isnan(v)
                    known_values[p] = (bins[known], v[known])
                caches[m] = _BlockCache(known_values)
            data = caches[m].data
            if q is not None:
                results_by_item[(m, st)] = _quantile_assess(
                    m, st, q, caches[m], policies, level, resamples, seed, method, stream
                )
                continue
            # max, min, p100, p0, a plugin statistic: its value, no interval.
            why = (
                EXTREME_STAT_REASON
                if _extreme_stat(st)
                else ("only the mean and percentiles of a per-job metric are block-bootstrapped")
            )
            found: dict[str, float | None] = {}
            for p in policies:
                _, v = data[p]
                if len(v):
                    got = grouped_statistics(np.zeros(len(v), np.int64), v, 1, (st,), stat_plugins)
                    number = float(got[0][st][0])
                    found[p] = None if math.isnan(number) else number
                else:
                    found[p] = None
            results_by_item[(m, st)] = _unavailable(m, st, found, policies, why, 0)
        elif kinds[m] == "ratio":
            terms = {
                p: _window_terms(schedules[p], spec, registry, options, t0, window_s, n_blocks)
                for p in policies
            }
            failed = [t for t in terms.values() if isinstance(t, str)]
            if failed:
                scalar = {p: _scalar(schedules[p], spec, registry, options)[0] for p in policies}
                results_by_item[(m, st)] = _unavailable(m, st, scalar, policies, failed[0], 0)
                continue
            mismatch = _inconsistent_terms(spec, registry, options, schedules, terms)
            if mismatch is not None:
                inconsistent.add(m)
                scalar = {p: _scalar(schedules[p], spec, registry, options)[0] for p in policies}
                results_by_item[(m, st)] = _unavailable(m, st, scalar, policies, mismatch, 0)
                continue
            num = {m: {p: t[0] for p, t in terms.items() if not isinstance(t, str)}}
            den = {m: {p: t[1] for p, t in terms.items() if not isinstance(t, str)}}
            got_i, got_d = _assess(
                "block",
                num,
                den,
                [m],
                policies,
                level,
                resamples,
                seed,
                method,
                stats={m: "value"},
                streams={m: stream},
            )
            results_by_item[(m, st)] = (got_i, got_d)
        else:
            why = EXTREME_REASON if kinds[m] == "extreme" else _undeclared_reason(m)
            found = {}
            for p in policies:
                value, unavailable = _scalar(schedules[p], spec, registry, options)
                found[p] = value
                if value is None and unavailable and kinds[m] == "extreme":
                    why = unavailable
            results_by_item[(m, st)] = _unavailable(m, st, found, policies, why, 0)

    for item in items:
        got_i, got_d = results_by_item[item]
        intervals += got_i
        pending += got_d

    # Rank stability: every metric and statistic with an interval, per rank window.
    for m, st in items:
        spec = specs[m]
        better = spec.better or "lower"
        per_window: dict[str, np.ndarray] = {}
        overall: dict[str, float] = {}
        if kinds[m] == "mean" and (st == "mean" or _resampled_quantile(st) is not None):
            for p in policies:
                bins, v = rank_bins[p], values[m][p]
                known = (bins >= 0) & ~np.isnan(v)
                by_window, _ = grouped_statistics(bins[known], v[known], n_rank, (st,))
                per_window[p] = by_window[st]
                q = quantile_of(st)
                kept = v[known]
                overall[p] = (
                    math.nan
                    if not len(kept)
                    else float(np.mean(kept) if q is None else np.quantile(kept, q))
                )
        elif kinds[m] == "ratio":
            if m in inconsistent:
                continue
            terms = {
                p: _window_terms(schedules[p], spec, registry, options, t0, rank_window_s, n_rank)
                for p in policies
            }
            if any(isinstance(t, str) for t in terms.values()):
                continue
            for p, t in terms.items():
                assert not isinstance(t, str)
                per_window[p] = _ratio(t[0][:, None], t[1][:, None])
                overall[p] = float(_ratio(t[0], t[1]))
        else:
            continue
        windows = []
        for k in range(n_rank):
            row = {p: float(per_window[p][k]) for p in policies}
            if all(math.isnan(x) for x in row.values()):
                continue
            start = t0 + k * rank_window_s
            windows.append(
                (f"{k + 1}", start, start + rank_window_s, int(jobs_per_rank_window[k]), row)
            )
        stability = _stability(m, better, policies, overall, windows, st)
        if stability is None:
            notes.append(_no_ranking(_label(m, st), policies, overall))
        else:
            ranks.append(stability)
    notes += _test_notes(pending, "block")
    notes.append(
        "blocks resample the jobs of each finished schedule (one simulation per policy); "
        "see docs/metrics.md for the assumption this makes"
    )
    return Significance(
        unit="block",
        policies=policies,
        metrics=names,
        level=level,
        resamples=resamples,
        seed=seed,
        method=method,
        window_s=window_s,
        rank_window_s=rank_window_s,
        intervals=intervals,
        differences=_differences(pending, level),
        ranks=ranks,
        notes=notes,
        stats=list(stat_names),
    )


def _unavailable(
    metric: str,
    stat: str,
    found: Mapping[str, float | None],
    policies: Sequence[str],
    reason: str,
    units: int,
) -> tuple[list[Interval], list[dict[str, Any]]]:
    """Values with no interval and no test, and the reason."""
    intervals = [Interval(p, metric, found[p], None, None, units, reason, stat) for p in policies]
    pending = []
    for i, first in enumerate(policies):
        for second in policies[i + 1 :]:
            entry = _entry(first, second, metric, stat, units)
            a, b = found[first], found[second]
            if a is not None and b is not None:
                entry["estimate"] = a - b
            entry["reason"] = reason
            pending.append(entry)
    return intervals, pending


# ----------------------------------------------------------------- seeds


def seed_significance(
    values: Mapping[str, Mapping[str, Sequence[float]]],
    level: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
    method: str = "BCa",
    better: Mapping[str, str] | None = None,
    labels: Sequence[Any] | None = None,
    stats: Mapping[str, str] | None = None,
) -> Significance:
    """The same assessment across seeds of generated workloads.

    ``values[policy][metric]`` holds one value per seed (the seeds in the same order
    for every policy: seed k of every policy ran on the same generated workload).
    ``better`` maps a metric to ``"lower"`` (the default) or ``"higher"``. Each seed
    is one unit: the interval is a bootstrap of the mean over seeds, the test a
    Wilcoxon signed-rank test over the seeds' paired differences, and rank stability
    ranks the policies in every seed. ``labels`` name the seeds (default 0, 1, ...).
    ``stats`` maps a metric to what its per-seed value is (``mean`` of a per-job
    metric, the default; ``value`` of a whole-schedule one): a label only. Every
    metric gets an interval across seeds, whole-schedule extremes such as the
    makespan too (the seeds are independent runs).
    """
    _check_level(level, resamples, seed)
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
    labelled = {m: (stats or {}).get(m, "mean") for m in metrics}
    intervals, pending = _assess(
        "seed", sums, counts, metrics, policies, level, resamples, seed, method, labelled
    )
    ranks = []
    notes: list[str] = []
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
        stability = _stability(m, better.get(m, "lower"), policies, overall, windows, labelled[m])
        if stability is None:
            notes.append(_no_ranking(_label(m, labelled[m]), policies, overall))
        else:
            ranks.append(stability)
    notes += _test_notes(pending, "seed")
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
        differences=_differences(pending, level),
        ranks=ranks,
        notes=notes,
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
    kinds: dict[str, str] = {}
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
        kinds[metric] = str(row["stat"])
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
            values,
            level,
            resamples,
            seed,
            method,
            better,
            labels=order,
            stats={m: kinds[m] for m in names},
        )
    return out


# ----------------------------------------------------------------- figure


def significance_figure(significance: Significance, width: float | None = None) -> Any:
    """Each metric with its intervals as error bars (one panel per metric and
    statistic that has an interval, at most three panels a row) and, below, each
    policy's rank in every window as a heat map (first metric). Drawn in
    schedlab's style; the caller's matplotlib style is left as it was."""
    from .plotting import kept_style

    with kept_style():
        return _draw_significance(significance, width)


def _draw_significance(significance: Significance, width: float | None) -> Any:
    from .plotting import PAGE_WIDTH, new_figure

    policies = significance.policies
    panels = list(
        dict.fromkeys((i.metric, i.stat) for i in significance.intervals if i.low is not None)
    )
    if not panels and significance.intervals:
        first = significance.intervals[0]
        panels = [(first.metric, first.stat)]
    width = width or PAGE_WIDTH
    ncols = max(1, min(3, len(panels)))
    rows = max(1, -(-len(panels) // ncols))
    panel_height = 0.6 + 0.35 * len(policies)
    fig, axes = new_figure(
        width,
        rows * panel_height + 1.6 + 0.6,
        nrows=rows + 1,
        ncols=ncols,
        squeeze=False,
        gridspec_kw={"height_ratios": [1] * rows + [max(1.0, 1.6 / panel_height)]},
    )
    positions = list(range(len(policies)))
    for k in range(rows * ncols):
        ax = axes[k // ncols][k % ncols]
        if k >= len(panels):
            ax.remove()
            continue
        metric, stat = panels[k]
        for y, policy in enumerate(policies):
            item = significance.interval(policy, metric, stat)
            if item.estimate is None:
                continue
            if item.low is not None and item.high is not None:
                err = [[item.estimate - item.low], [item.high - item.estimate]]
                ax.errorbar(item.estimate, y, xerr=err, fmt="o", color="#4477AA", capsize=3, ms=4)
            else:
                ax.plot(item.estimate, y, "o", color="#BBBBBB", ms=4)
        ax.set_yticks(positions, policies if k % ncols == 0 else [""] * len(policies))
        ax.set_ylim(len(policies) - 0.5, -0.5)
        ax.set_xlabel(_label(metric, stat))
        ax.grid(axis="y", visible=False)
    axes = axes[rows:]
    fig.suptitle(
        f"Metrics with {significance.level * 100:g}% intervals", x=0.01, ha="left", fontsize=9
    )
    gs = axes[0][0].get_gridspec()
    for ax in axes[0]:
        ax.remove()
    heat = fig.add_subplot(gs[rows, :])
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
        heat.set_title(f"Rank by {_label(stability.metric, stability.stat)} (1 = best)", loc="left")
        heat.grid(False)
        bar = fig.colorbar(image, ax=heat, ticks=list(range(1, len(policies) + 1)))
        bar.set_label("rank")
    return fig
