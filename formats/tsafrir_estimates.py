"""``tsafrir-estimates``: modal user run-time estimates for workloads that lack them.

Dan Tsafrir, Yoav Etsion and Dror G. Feitelson, "Modeling user runtime estimates",
JSSPP 2005 (LNCS 3834, pp. 1-35). Users' estimates are *modal*: about 20 values
account for about 90 % of the jobs, the most popular being the largest estimate the
site allows. The model (as its authors' reference implementation ``m_tsafrir05``
builds it) has two steps.

**1. The estimate histogram** for ``n`` jobs and a maximal estimate ``M``:

* *Number of distinct values* ``bins``: piecewise linear in ``n`` through (0, 0),
  (20, 10), (200, 20), (1000, 35), (10000, 90), (70000, 340), (250000, 565), and 565
  beyond.
* *Head*: the 20 most popular values. ``M``; the 15 values popular in all four logs
  the authors studied (5, 10, 15, 20, 30 minutes; 1, 2, 3, 4, 5, 6, 8, 10, 12, 18
  hours) that are below ``M``; then round multiples (of 200, 100, 50, 10, 5, 2, 1
  hours, 20, 10, 5 minutes) counted down from ``M`` until there are 20. Their shares
  by popularity rank ``x`` = 2..20 are ``head_a * exp(head_b * x) + head_c`` percent;
  ``head_share`` minus their sum (21.7 % with the published parameters and 20 head
  values) is the share of ``M``, unless ``max_share`` sets it (the others are then
  scaled so that the head still holds ``head_share``); the shares, sorted, are those
  of ranks 1, 2, ... Which value gets which rank follows the time-rank to
  popularity-rank table of the four logs: ``M`` is first (rank 1), or, with
  ``max_share``, takes the rank where its share falls (a user-given bin of the
  reference); a rank is forced once every log has passed it (so rank 1 goes to 5
  minutes when ``M`` does not hold it); otherwise the more popular of two random
  picks among the ranks the logs show at that time rank.
  With ``bins`` below the number of head values (fewer than 200 jobs) only the
  ``bins`` most popular are kept (at least one), their shares scaled to all jobs.
* *Tail*: the other ``bins - 20`` values at ``M * (a - 1) x / (a - x)`` for ``x =
  i / (bins - 20)``, ``a = 1 + 12.1039 * bins ** -0.6026`` (``time_shape``), rounded
  to minutes (moved by 10-30 s where they would collide), with shares ``tail_a *
  rank ** tail_b`` (rank 21, 22 ...) scaled to ``1 - head_share`` (so ``tail_a``
  cancels, as in the reference) and matched to the values at random.
* Shares become job counts by largest remainder; every value of nonzero share gets
  at least one job, as in the reference (``max(1, round(...))``), the jobs this takes
  coming from the others in proportion to their counts. Only with fewer jobs than
  values (a ``bins`` above the number of jobs) do the least popular values get none.

**2. Assignment, estimate >= run time.** Jobs are taken from the longest to the
shortest; each gets an estimate drawn uniformly from the remaining ones that are at
least its run time (the reference's shuffle). Done here group by group: the jobs
whose smallest feasible value is the same draw a multivariate hypergeometric sample
of the remaining feasible estimates, in random order, which has the same
distribution.

``MaxRuntime`` in the header, the most the system allows, is raised to ``M`` (or
the largest estimate written) where it was lower, with a note; an absent one stays
absent.

Differences from the reference, all documented in ``docs/models.md``: a job longer
than ``M`` keeps its run time (the reference truncates the run time) and gets its run
time rounded up to a minute as estimate; when the long values run out (the reference
then stops with an error) the excess jobs get ``M``; both are counted in the note.
With fewer than 20 head values (small ``M``) the popularity ranks are renumbered
among those present. ``M`` must be at least an hour, as in the reference, and at
most 1e12 s (the longest time SWF readers accept). Every option is checked before
anything is computed (see :data:`MAX_FACTOR`): a value out of range is a one-line
error naming it.

Use it three ways:

* ``lublin:...,estimates=tsafrir`` (default parameters, ``M`` the smallest round value
  at least the longest run time);
* the generator ``tsafrir-estimates:base=SOURCE,...`` wraps any source, a trace file
  or a generator spec; inside ``base`` write ``;`` for the ``,`` of the inner spec:
  ``tsafrir-estimates:base=lublin:jobs=5000;procs=256,seed=2,max_share=0.3``. By
  default only jobs whose requested time is unknown get one (``replace=yes`` redoes
  every job: a job of unknown run time gets none, its requested time cleared);
* from Python, :func:`apply` on a :class:`~schedlab.model.Workload`, or :func:`assign`
  on an array of run times.
"""

from __future__ import annotations

import itertools
import math
import os
from typing import Any

import numpy as np
import schedlab
from schedlab import GeneratorSpec, OptionSpec, hookimpl
from schedlab.errors import UsageError
from schedlab.model import Workload
from schedlab.validation import MAX_SECONDS

NAME = "tsafrir-estimates"

MINUTE = 60
HOUR = 3600
#: Number of head (most popular) values.
TOP = 20
#: Estimates among the 20 most popular in all four logs of the paper (seconds).
JOINT: tuple[int, ...] = (
    5 * MINUTE, 15 * MINUTE, 10 * MINUTE, 20 * MINUTE, 30 * MINUTE, 1 * HOUR, 2 * HOUR,
    3 * HOUR, 4 * HOUR, 5 * HOUR, 6 * HOUR, 8 * HOUR, 10 * HOUR, 12 * HOUR, 18 * HOUR,
)  # fmt: skip
#: Steps of the round values that complete the head, tried in this order.
ROUND_STEPS: tuple[int, ...] = (
    200 * HOUR, 100 * HOUR, 50 * HOUR, 10 * HOUR, 5 * HOUR, 2 * HOUR, 1 * HOUR,
    20 * MINUTE, 10 * MINUTE, 5 * MINUTE,
)  # fmt: skip
#: Popularity rank of the head value of each time rank (0 = the maximum, then
#: ascending times) in the four logs of the paper: SDSC, CTC, KTH, SDSC Blue.
TIME_RANK_TO_POPULARITY: tuple[tuple[int, int, int, int], ...] = (
    (3, 1, 1, 1), (1, 3, 4, 6), (4, 4, 10, 5), (17, 2, 14, 3), (13, 12, 20, 7),
    (7, 9, 2, 2), (8, 8, 3, 18), (18, 18, 7, 19), (2, 6, 12, 4), (6, 7, 6, 11),
    (16, 11, 19, 20), (10, 20, 5, 9), (5, 16, 18, 10), (15, 5, 16, 14), (14, 14, 9, 13),
    (19, 13, 17, 16), (11, 10, 15, 15), (12, 15, 13, 17), (9, 17, 8, 8), (20, 19, 11, 12),
)  # fmt: skip
#: (jobs, distinct values) points of the model for the number of values.
BINS_BY_JOBS: tuple[tuple[int, int], ...] = (
    (0, 0), (20, 10), (200, 20), (1000, 35), (10000, 90), (70000, 340), (250000, 565),
)  # fmt: skip
#: Round values for the default maximum (the smallest at least the longest run).
ROUND_MAXIMA: tuple[int, ...] = (
    1 * HOUR, 2 * HOUR, 3 * HOUR, 4 * HOUR, 6 * HOUR, 8 * HOUR, 12 * HOUR, 18 * HOUR,
    24 * HOUR, 36 * HOUR, 48 * HOUR, 72 * HOUR, 96 * HOUR, 120 * HOUR, 168 * HOUR,
)  # fmt: skip


#: Largest ``bins``: the model's own number is at most 565 (from 250000 jobs on).
MAX_BINS = 10_000
#: Largest ``max_estimate`` (s): the longest time the SWF readers accept, held
#: exactly as a float and written as a whole number.
MAX_ESTIMATE = MAX_SECONDS
#: Bounds of the share parameters, so that the shares of up to :data:`MAX_BINS`
#: values stay finite and nonzero: ``head_a`` and ``head_c`` in [0, MAX_FACTOR],
#: ``tail_a`` in [1 / MAX_FACTOR, MAX_FACTOR], ``|head_b| <= MAX_HEAD_B`` and
#: ``|tail_b| <= MAX_EXPONENT`` (the published ones: 14.05, 0.4625, 795.6, -0.1775,
#: -2.267).
MAX_FACTOR = 1e100
MAX_HEAD_B = 10.0
MAX_EXPONENT = 50.0
#: Largest ``time_shape`` (the tail times are then ``M x``, to the second).
MAX_TIME_SHAPE = 1e6


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("base", str, "", "Workload to give estimates: a path or a spec (';' for ',')."),
    OptionSpec("seed", int, 0, "Random seed (>= 0).", min=0),
    OptionSpec(
        "max_estimate",
        float,
        0.0,
        "Largest estimate M, s, 3600..1e12 (0: smallest round value >= longest run).",
    ),
    OptionSpec(
        "max_share",
        float,
        -1.0,
        "Share of jobs whose estimate is M (-1: the model's, 21.7 % from M >= 2 h, more "
        "below: the rest of head_share).",
    ),
    OptionSpec("head_share", float, 0.89, "Share of jobs using the 20 most popular values."),
    OptionSpec(
        "bins",
        int,
        0,
        f"Number of distinct values, {TOP}..{MAX_BINS}, each given at least one job if "
        "there are as many jobs (0: the model's, from the jobs).",
        min=0,
        max=MAX_BINS,
    ),
    OptionSpec("head_a", float, 14.0491, "Head share of rank x: a * exp(b * x) + c, in %."),
    OptionSpec("head_b", float, -0.177531, "Head share: b, in [-10, 10]."),
    OptionSpec("head_c", float, 0.462513, "Head share: c."),
    OptionSpec(
        "tail_a",
        float,
        795.6,
        "Tail share of rank x: a * x ** b, scaled to 1 - head_share, so a has no effect "
        "(as in the reference); in [1e-100, 1e100].",
    ),
    OptionSpec("tail_b", float, -2.267, "Tail share: b, in [-50, 50]."),
    OptionSpec(
        "time_shape", float, 0.0, "Tail times' a in (1, 1e6] (0: 1 + 12.1039 * bins ** -0.6026)."
    ),
    OptionSpec(
        "replace",
        bool,
        False,
        "Redo every job's estimate, not only unknown ones (unknown run time: cleared).",
    ),
)

#: Options of the model itself (all but ``base`` and ``replace``).
MODEL_OPTIONS: tuple[str, ...] = tuple(o.name for o in OPTIONS if o.name not in ("base", "replace"))


def _bad(message: str) -> UsageError:
    return UsageError(f"generator {NAME}: {message}")


def defaults() -> dict[str, Any]:
    """Every option with its default value."""
    return {o.name: o.default for o in OPTIONS}


def default_max_estimate(run: np.ndarray) -> float:
    """The smallest round value at least the longest run time (at least an hour;
    whole days beyond a week)."""
    longest = float(np.nanmax(run)) if len(run) else 0.0
    for value in ROUND_MAXIMA:
        if value >= longest:
            return float(value)
    return float(math.ceil(longest / (24 * HOUR)) * 24 * HOUR)


def default_bins(jobs: int) -> int:
    """The model's number of distinct estimate values for ``jobs`` jobs."""
    points = BINS_BY_JOBS
    if jobs >= points[-1][0]:
        return points[-1][1]
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if jobs <= x1:
            return y0 + round((jobs - x0) * (y1 - y0) / (x1 - x0))
    raise AssertionError("unreachable")


def head_values(max_estimate: int) -> list[int]:
    """The head values: the maximum first, then the others in ascending order."""
    values = [max_estimate] + [v for v in JOINT if v < max_estimate]
    for step in ROUND_STEPS:
        value = (max_estimate // step) * step
        while value > 0 and len(values) < TOP:
            if value not in values:
                values.append(value)
            value -= step
        if len(values) >= TOP:
            break
    return [values[0], *sorted(values[1:])]


def head_shares(opts: dict[str, Any], count: int) -> np.ndarray:
    """Shares (fractions of all jobs) of popularity ranks 1..count, largest first.

    Ranks 2..count of the formula, and ``M``'s share: the rest of ``head_share``, or
    ``max_share`` (the others then scaled to keep ``head_share``); sorted, as the
    reference's ``gen_head_binsiz`` does. :func:`_max_rank` gives ``M``'s rank.
    """
    ranks = np.arange(2, count + 1, dtype=float)
    others = (opts["head_a"] * np.exp(opts["head_b"] * ranks) + opts["head_c"]) / 100.0
    head = opts["head_share"]
    if opts["max_share"] < 0:
        first = head - others.sum()
        if first <= 0:
            raise _bad(
                f"options head_a={opts['head_a']:g}, head_b={opts['head_b']:g}, "
                f"head_c={opts['head_c']:g} give ranks 2..{count} a share of "
                f"{others.sum():.4g}, which leaves nothing of head_share={head:g} for "
                "the maximum (rank 1); lower them, or set max_share"
            )
    else:
        first = opts["max_share"]
        rest = others.sum()
        others = others * ((head - first) / rest) if rest > 0 else others
    return -np.sort(-np.concatenate(([first], others)), kind="stable")


def _max_rank(opts: dict[str, Any], shares: np.ndarray) -> int:
    """Popularity rank of ``M`` among the head ``shares`` (of :func:`head_shares`).

    Without ``max_share``, ``M`` is the most popular (rank 1, the largest share). With
    it, ``M`` is a value of given size, as a user bin of the reference: it takes the
    rank where its share falls (the first of equal shares), and rank 1, the largest
    share left, goes to another value (the 5-minute one, which every log ranks at
    most 2nd, see :func:`popularity_ranks`).
    """
    if opts["max_share"] < 0:
        return 1
    return int(np.flatnonzero(shares == opts["max_share"])[0]) + 1


def popularity_ranks(rng: np.random.Generator, count: int, first: int = 1) -> list[int]:
    """Popularity rank (1 = most popular) of each head value by time rank (0 = max).

    ``first`` is the rank of ``M`` (time rank 0), 1 unless ``max_share`` places it
    (:func:`_max_rank`); it is then reserved, as a user bin in the reference's
    ``gen_head_timrnk_poprnk_map``, and rank 1 becomes due at time rank 1. With fewer
    than 20 values (``count``), the ranks of the other values are renumbered among
    those left, in their order, ``M`` keeping ``first``.
    """
    table = TIME_RANK_TO_POPULARITY
    last_seen: dict[int, int] = {}
    for t, row in enumerate(table):
        for p in row:
            last_seen[p] = t
    chosen: list[int] = []
    pool: list[int] = []
    for t, row in enumerate(table):
        pool.extend(p for p in row if p not in chosen and p != first)
        if t == 0:
            pick = first
        else:
            due = [p for p in range(1, TOP + 1) if last_seen[p] <= t and p not in chosen]
            if due:
                pick = due[0]
            else:
                a, b = rng.integers(len(pool), size=2)
                pick = min(pool[a], pool[b])
        chosen.append(pick)
        pool = [p for p in pool if p != pick]
    if count < TOP:  # renumber the others among the ranks left, M keeping its own
        others = chosen[1:count]
        free = [r for r in range(1, count + 1) if r != first]
        order = np.argsort(others, kind="stable")
        renumbered = [0] * len(others)
        for place, k in enumerate(order):
            renumbered[int(k)] = free[place]
        return [first, *renumbered]
    return chosen


def tail_values(max_estimate: int, count: int, taken: set[int], shape: float) -> list[int]:
    """``count`` tail values ``M (a-1) x / (a-x)``, in minutes, avoiding ``taken``."""
    out: list[int] = []
    used = set(taken)
    for i in range(1, count + 1):
        x = i / count
        seconds = round(max_estimate * (shape - 1) * x / (shape - x) / MINUTE) * MINUTE
        for offset in (0, 30, -30, 20, -20, 10, -10):
            s = seconds + offset
            if 0 < s < max_estimate and s not in used:
                out.append(s)
                used.add(s)
                break
    return sorted(out)


def quotas(shares: np.ndarray, total: int) -> np.ndarray:
    """Split ``total`` by ``shares`` (largest remainder, ties to the lower index)."""
    if total <= 0 or len(shares) == 0:
        return np.zeros(len(shares), dtype=np.int64)
    if not (np.isfinite(shares).all() and (shares >= 0).all() and shares.sum() > 0):
        raise AssertionError("quotas: the shares must be finite, not negative, not all 0")
    exact = shares / shares.sum() * total
    counts = np.floor(exact).astype(np.int64)
    order = np.lexsort((np.arange(len(shares)), -(exact - counts)))
    counts[order[: total - int(counts.sum())]] += 1
    return counts


def _quotas_at_least_one(shares: np.ndarray, total: int) -> np.ndarray:
    """:func:`quotas`, with every value of nonzero share given at least one job when
    there are jobs enough, as the reference's ``max(1, round(...))``: the values
    raised to one job are paid for by the others, in proportion to their jobs beyond
    the first (largest remainder), so the largest give the most, as the reference's
    ``adjust_njobs``. With fewer jobs than values of nonzero share, the plain quotas:
    the least popular values get none."""
    counts = quotas(shares, total)
    raise_to_one = (counts == 0) & (shares > 0)
    if not raise_to_one.any() or int((shares > 0).sum()) > total:
        return counts
    counts[raise_to_one] = 1
    beyond_first = np.maximum(counts - 1, 0).astype(float)
    return counts - quotas(beyond_first, int(raise_to_one.sum()))


def histogram(jobs: int, max_estimate: int, seed: int = 0, **options: Any) -> dict[int, int]:
    """The model's estimate histogram: value (s) -> number of jobs, summing to ``jobs``.

    ``options`` are the model options of :data:`OPTIONS` (defaults otherwise).
    """
    opts = {**{k: v for k, v in defaults().items() if k in MODEL_OPTIONS}, **options}
    _check_shape_options(opts)
    rng = np.random.default_rng([seed, 0x545346])
    bins = opts["bins"] or default_bins(jobs)
    heads = head_values(max_estimate)
    shares = head_shares(opts, len(heads))
    ranks = popularity_ranks(rng, len(heads), _max_rank(opts, shares))
    # Fewer values than the head (below 200 jobs): only the ``bins`` (at least 1) most
    # popular head values of nonzero share; quotas() scales their shares to all jobs.
    # A value of share 0 gets no job either way, so nothing changes from 200 jobs on.
    by_rank = sorted(zip(ranks, heads, strict=True))
    kept = [(r, v) for r, v in by_rank if shares[r - 1] > 0][: max(bins, 1)]
    hist_shares: dict[int, float] = {v: float(shares[r - 1]) for r, v in kept}
    tail_count = bins - len(heads)
    if tail_count > 0:
        shape = opts["time_shape"] or 1.0 + 12.1039 * bins**-0.6026
        tails = tail_values(max_estimate, tail_count, set(heads), shape)
        ranks_t = np.arange(TOP + 1, TOP + 1 + len(tails), dtype=float)
        weights = opts["tail_a"] * ranks_t ** opts["tail_b"]
        weights = weights / weights.sum() * (1.0 - opts["head_share"])
        matched = rng.permutation(len(tails))
        for value, k in zip(tails, matched, strict=True):
            hist_shares[value] = float(weights[k])
    if not any(share > 0 for share in hist_shares.values()):
        raise _bad(
            f"options max_share={opts['max_share']:g}, head_a={opts['head_a']:g}, "
            f"head_c={opts['head_c']:g}, head_share={opts['head_share']:g} give every "
            "estimate value a share of 0: raise max_share, head_a or head_c"
        )
    values = sorted(hist_shares)
    counts = _quotas_at_least_one(np.array([hist_shares[v] for v in values]), jobs)
    return {v: int(c) for v, c in zip(values, counts, strict=True) if c > 0}


def _check_shape_options(opts: dict[str, Any]) -> None:
    """The shares' and tail times' options: finite and within the bounds that keep
    the model's arithmetic finite (no overflow, no underflow to 0) for up to
    :data:`MAX_BINS` values, checked before any is computed."""
    if not 0.0 < opts["head_share"] <= 1.0:
        raise _bad(f"option head_share={opts['head_share']:g}: must be a share in (0, 1]")
    if opts["max_share"] != -1.0 and not 0.0 <= opts["max_share"] <= opts["head_share"]:
        raise _bad(
            f"option max_share={opts['max_share']:g}: must be in [0, head_share="
            f"{opts['head_share']:g}] (or -1 for the model's)"
        )
    if opts["bins"] < 0 or 0 < opts["bins"] < TOP or opts["bins"] > MAX_BINS:
        raise _bad(
            f"option bins={opts['bins']}: must be in {TOP}..{MAX_BINS} (or 0 for the model's)"
        )
    shape = opts["time_shape"]
    if shape != 0 and not 1 < shape <= MAX_TIME_SHAPE:
        raise _bad(
            f"option time_shape={shape:g}: must be > 1 and at most {MAX_TIME_SHAPE:g} (or 0)"
        )
    for name in ("head_a", "head_b", "head_c", "tail_a", "tail_b"):
        if not math.isfinite(opts[name]):
            raise _bad(f"option {name}={opts[name]}: must be finite")
    if opts["head_a"] < 0 or opts["head_c"] < 0 or opts["tail_a"] <= 0:
        raise _bad("options head_a, head_c must not be negative and tail_a must be positive")
    for name, low, high in (
        ("head_a", 0.0, MAX_FACTOR),
        ("head_c", 0.0, MAX_FACTOR),
        ("tail_a", 1.0 / MAX_FACTOR, MAX_FACTOR),
        ("head_b", -MAX_HEAD_B, MAX_HEAD_B),
        ("tail_b", -MAX_EXPONENT, MAX_EXPONENT),
    ):
        if not low <= opts[name] <= high:
            raise _bad(f"option {name}={opts[name]:g}: must be in [{low:g}, {high:g}]")


def _check(opts: dict[str, Any]) -> None:
    if opts.get("seed", 0) < 0:
        raise _bad(f"option seed={opts['seed']}: must not be negative")
    top = opts["max_estimate"]
    if top != 0 and not (math.isfinite(top) and HOUR <= top <= MAX_ESTIMATE):
        raise _bad(
            f"option max_estimate={top:g}: must be at least 3600 s and at most "
            f"{MAX_ESTIMATE:g} s (or 0)"
        )
    _check_shape_options(opts)


def assign(run: np.ndarray, *, seed: int = 0, **options: Any) -> tuple[np.ndarray, str]:
    """Estimates (whole seconds) for the run times ``run``, and a one-line note.

    ``options`` are the model options of :data:`OPTIONS` (``max_estimate=0`` picks
    the default maximum). Every estimate is at least its run time.
    """
    opts = {**{k: v for k, v in defaults().items() if k in MODEL_OPTIONS}, **options}
    opts["seed"] = seed
    _check(opts)
    run = np.asarray(run, dtype=float)
    if np.isnan(run).any() or (run < 0).any():
        raise _bad("every job needs a known run time")
    n = len(run)
    top = int(opts["max_estimate"]) if opts["max_estimate"] else int(default_max_estimate(run))
    estimate = np.full(n, np.nan)
    longer = run > top
    estimate[longer] = np.ceil(run[longer] / MINUTE) * MINUTE
    inside = np.flatnonzero(~longer)
    model = {k: v for k, v in opts.items() if k in MODEL_OPTIONS}
    for key in ("seed", "max_estimate"):
        model.pop(key)
    hist = histogram(len(inside), top, seed=seed, **model)
    # M is always a value, if of no job (max_share=0): a job longer than every
    # value of the histogram, and the excess when the long values run out, get M.
    values = np.array(sorted({*hist, top}), dtype=float)
    capacity = np.array([hist.get(int(v), 0) for v in values], dtype=np.int64)
    rng = np.random.default_rng([seed, 0x415353])
    # Longest first: the jobs whose smallest feasible value is values[g] draw from the
    # remaining estimates >= values[g] (a multivariate hypergeometric sample).
    first = np.searchsorted(values, run[inside], side="left")
    order = np.argsort(first, kind="stable")
    bounds = np.searchsorted(first[order], np.arange(len(values) + 1), side="left")
    overflow = 0
    k = len(values)
    for g in range(k - 1, -1, -1):
        jobs = inside[order[bounds[g] : bounds[g + 1]]]
        if not len(jobs):
            continue
        room = capacity[g:]
        taken = min(len(jobs), int(room.sum()))
        counts = (
            rng.multivariate_hypergeometric(room, taken)
            if taken
            else np.zeros(len(room), dtype=np.int64)
        )
        capacity[g:] -= counts
        labels = np.repeat(np.arange(g, k), counts)
        if len(jobs) > taken:
            overflow += len(jobs) - taken
            labels = np.concatenate([labels, np.full(len(jobs) - taken, k - 1)])
        estimate[jobs] = values[rng.permutation(labels)]
    if np.isnan(estimate).any():  # every job is in one group, or longer than M
        raise AssertionError("tsafrir-estimates: a job got no estimate")
    note = (
        f"requested times: Tsafrir-Etsion-Feitelson 2005 model, seed {seed}, "
        f"{len(hist)} values up to {top} s; {int(longer.sum())} jobs longer than the maximum "
        f"(run time rounded up), {overflow} given the maximum for want of long values"
    )
    return estimate, note


def apply(workload: Workload, **options: Any) -> Workload:
    """A copy of ``workload`` whose unknown requested times (or all, with
    ``replace=True``) are model estimates; the header gains a note.

    Jobs of unknown run time get no estimate (the model needs one); with
    ``replace=True`` a requested time they had is cleared to unknown, so no user
    estimate is left among the model's, and the note counts them.

    Options are those of :data:`OPTIONS` except ``base``.
    """
    spec = GeneratorSpec(name=NAME, generate=generate, options=OPTIONS)
    opts = spec.parse_options(options, "generator")
    _check(opts)
    cols = workload.to_arrays()
    data = {name: np.array(cols[name], dtype=float) for name in cols.data}
    run = data["run_time"]
    requested = data["requested_time"]
    target = np.ones(len(run), dtype=bool) if opts["replace"] else np.isnan(requested)
    unknown_run = target & ~(run >= 0)
    # The model needs a run time: such a job gets no estimate. With replace=yes no
    # user's estimate stays either (every estimate written is the model's): a
    # requested time it had is cleared to unknown, and counted.
    cleared = unknown_run & ~np.isnan(requested)
    requested[cleared] = np.nan
    target &= run >= 0
    model = {k: opts[k] for k in MODEL_OPTIONS if k != "seed"}
    if not model["max_estimate"] and (run >= 0).any():
        model["max_estimate"] = default_max_estimate(run[run >= 0])
    estimates, note = assign(run[target], seed=opts["seed"], **model)
    requested[target] = estimates
    header = workload.header.copy()
    base_defaults = defaults()
    changed = [
        f"{k}={opts[k]:g}"
        for k in MODEL_OPTIONS
        if k not in ("seed", "max_estimate") and opts[k] != base_defaults[k]
    ]
    if changed:
        note += f" (options {', '.join(changed)})"
    header.add("Note", f"{note}; {int(target.sum())} of {len(run)} jobs given an estimate")
    # MaxRuntime is the most the system allows: at least M, the largest estimate the
    # model's site allows, and every estimate written (jobs longer than M get theirs).
    old_max = header.max_runtime
    if target.any() and old_max is not None:
        new_max = int(max(model["max_estimate"], float(estimates.max())))
        if new_max > old_max:
            header.set("MaxRuntime", new_max)
            header.add(
                "Note",
                f"MaxRuntime raised from {old_max} to {new_max} s to cover the estimates "
                f"(largest model estimate M = {int(model['max_estimate'])} s)",
            )
    if unknown_run.any():
        text = (
            f"{int(unknown_run.sum())} jobs of unknown run time get no estimate "
            "(the model needs a run time)"
        )
        if cleared.any():
            text += f"; replace=yes cleared the requested time of {int(cleared.sum())} of them"
        header.add("Note", text)
    out = Workload.from_arrays(data, header, extras=cols.extras)
    out.meta.update(workload.meta)
    return out


def generate(**options: Any) -> Workload:
    """The ``base`` workload with model estimates (see the module docstring)."""
    spec = GeneratorSpec(name=NAME, generate=generate, options=OPTIONS)
    opts = spec.parse_options(options, "generator")
    base = opts.pop("base")
    if not base:
        raise _bad("option base is required: a trace path or a generator spec")
    source = base if os.path.exists(base) else base.replace(";", ",")
    workload = apply(schedlab.read(source), **opts)
    base_defaults = defaults()
    parts = [
        f"{k}={('yes' if v else 'no') if isinstance(v, bool) else v}"
        for k, v in opts.items()
        if v != base_defaults[k]
    ]
    source = f"{NAME}:" + ",".join([f"base={base}", *parts])
    # The header records this spec; the base's own Conversion line stays as a note.
    header = workload.header
    old_conversion = header.get("Conversion")
    header.set("Conversion", f"schedlab {source}")
    if old_conversion is not None:
        header.add("Note", f"base workload's Conversion: {old_conversion}")
    workload.meta.update(
        {
            "generator": NAME,
            "source": source,
            "options": {"base": base, **opts},
        }
    )
    return workload


@hookimpl
def schedlab_generators() -> list[GeneratorSpec]:
    """The ``tsafrir-estimates`` generator."""
    return [
        GeneratorSpec(
            name=NAME,
            description="Modal user estimates (Tsafrir et al. 2005) for any workload.",
            generate=generate,
            options=OPTIONS,
        )
    ]
