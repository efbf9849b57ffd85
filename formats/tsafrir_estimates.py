"""``tsafrir-estimates``: modal user run-time estimates for workloads that lack them.

After Dan Tsafrir, Yoav Etsion and Dror G. Feitelson, "Modeling user runtime
estimates", JSSPP 2005 (LNCS 3834, pp. 1-35). Their analysis of real logs found that
users' estimates are *modal*: a handful of round values (about 20) account for about
90 % of the jobs, the most popular being the largest estimate the site allows; and
that given only that maximum and the share of jobs using it, a model reproduces the
rest. This module builds such estimates for any list of run times:

1. **Modes.** The maximum ``max_estimate`` (default: the smallest round value at
   least the longest run time) plus ``modes - 1`` other round values below it
   (minutes, quarter and half hours, hours ...), spread evenly in log scale.
2. **Popularity.** ``max_share`` of the jobs get the maximum; ``modal_share`` in all
   get a mode; the other modes share the rest by a Zipf law of exponent ``zipf`` over
   a seeded random ranking; the remaining ``1 - modal_share`` of the jobs get a
   non-modal value (log-uniform between the run time and the maximum, rounded up to
   a whole minute).
3. **Assignment, estimate >= run time.** Jobs are taken from the longest to the
   shortest; each group of jobs with the same smallest feasible mode is spread over
   the feasible modes in proportion to their remaining places (a multivariate
   hypergeometric draw), so long jobs get the long modes they need and short jobs get
   what is left, as in real logs where short jobs carry the worst estimates. When the
   long modes are full, the excess goes to the maximum. A job longer than the maximum
   gets its own run time rounded up to a minute (counted in the note).

Every number above is an option. It is vectorised: a million jobs take a fraction of
a second. Use it three ways:

* ``lublin:...,estimates=tsafrir`` (the defaults);
* the generator ``tsafrir-estimates:base=SOURCE,...`` wraps any source, a trace file
  or a generator spec; inside ``base`` write ``;`` for the ``,`` of the inner spec:
  ``tsafrir-estimates:base=lublin:jobs=5000;procs=256,seed=2,max_share=0.3``. By
  default only jobs whose requested time is unknown get one (``replace=yes`` redoes
  every job);
* from Python, :func:`apply` on a :class:`~schedlab.model.Workload`, or :func:`assign`
  on an array of run times.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import schedlab
from schedlab import hookimpl
from schedlab.errors import UsageError
from schedlab.model import Workload
from schedlab.plugin_types import GeneratorSpec, OptionSpec

NAME = "tsafrir-estimates"

MINUTE = 60
HOUR = 3600
#: Round values users pick, in seconds: 1..45 minutes, 1..18 hours, 1..7 days.
ROUND_VALUES: tuple[int, ...] = (
    1 * MINUTE, 2 * MINUTE, 5 * MINUTE, 10 * MINUTE, 15 * MINUTE, 20 * MINUTE,
    30 * MINUTE, 45 * MINUTE, 1 * HOUR, 90 * MINUTE, 2 * HOUR, 3 * HOUR, 4 * HOUR,
    5 * HOUR, 6 * HOUR, 8 * HOUR, 10 * HOUR, 12 * HOUR, 15 * HOUR, 18 * HOUR,
    24 * HOUR, 36 * HOUR, 48 * HOUR, 72 * HOUR, 96 * HOUR, 120 * HOUR, 168 * HOUR,
)  # fmt: skip


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError("must be positive")
    return value


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("base", str, "", "Workload to give estimates: a path or a spec (';' for ',')."),
    OptionSpec("seed", int, 0, "Random seed."),
    OptionSpec(
        "max_estimate", float, 0.0, "Largest estimate, s (0: smallest round value >= longest run)."
    ),
    OptionSpec("max_share", float, 0.2, "Share of jobs whose estimate is the maximum."),
    OptionSpec("modes", _positive_int, 20, "Number of popular values, the maximum included."),
    OptionSpec("modal_share", float, 0.9, "Share of jobs whose estimate is a popular value."),
    OptionSpec("zipf", float, 1.0, "Zipf exponent of the popularity of the other modes."),
    OptionSpec("replace", bool, False, "Redo every job's estimate, not only unknown ones."),
)


def _bad(message: str) -> UsageError:
    return UsageError(f"generator {NAME}: {message}")


def defaults() -> dict[str, Any]:
    """Every option with its default value."""
    return {o.name: o.default for o in OPTIONS}


def default_max_estimate(run: np.ndarray) -> float:
    """The smallest round value at least the longest run time (whole hours beyond)."""
    longest = float(np.nanmax(run)) if len(run) else 0.0
    for value in ROUND_VALUES:
        if value >= longest:
            return float(value)
    return float(math.ceil(longest / HOUR) * HOUR)


def choose_modes(max_estimate: float, modes: int) -> np.ndarray:
    """The popular values, ascending: ``modes - 1`` round values below the maximum,
    evenly spread in log scale over the round values available, then the maximum."""
    below = np.array([v for v in ROUND_VALUES if v < max_estimate], dtype=float)
    if modes - 1 >= len(below):
        chosen = below
    else:
        picks = np.unique(np.round(np.linspace(0, len(below) - 1, modes - 1)).astype(int))
        chosen = below[picks]
    return np.append(chosen, float(max_estimate))


def quotas(weights: np.ndarray, total: int) -> np.ndarray:
    """Split ``total`` by ``weights`` (largest remainder, ties to the lower index)."""
    if total <= 0 or len(weights) == 0:
        return np.zeros(len(weights), dtype=np.int64)
    exact = weights / weights.sum() * total
    counts = np.floor(exact).astype(np.int64)
    order = np.lexsort((np.arange(len(weights)), -(exact - counts)))
    counts[order[: total - int(counts.sum())]] += 1
    return counts


def _check(opts: dict[str, Any]) -> None:
    for name in ("max_share", "modal_share"):
        if not 0.0 <= opts[name] <= 1.0:
            raise _bad(f"option {name}={opts[name]:g}: must be a share in [0, 1]")
    if opts["max_share"] > opts["modal_share"]:
        raise _bad(
            f"option max_share={opts['max_share']:g}: must not exceed "
            f"modal_share={opts['modal_share']:g} (the maximum is one of the modes)"
        )
    if not opts["max_estimate"] >= 0 or not math.isfinite(opts["max_estimate"]):
        raise _bad(f"option max_estimate={opts['max_estimate']:g}: must be >= 0 s (0 = auto)")
    if not (opts["zipf"] >= 0 and math.isfinite(opts["zipf"])):
        raise _bad(f"option zipf={opts['zipf']:g}: must not be negative")


def assign(
    run: np.ndarray,
    *,
    seed: int = 0,
    max_estimate: float = 0.0,
    max_share: float = 0.2,
    modes: int = 20,
    modal_share: float = 0.9,
    zipf: float = 1.0,
) -> tuple[np.ndarray, str]:
    """Estimates (whole seconds) for the run times ``run``, and a one-line note.

    See the module docstring for the model; options as in :data:`OPTIONS`. Every
    estimate is at least its run time; at most ``max_estimate`` unless the run time
    itself is longer.
    """
    opts = {
        "max_share": max_share,
        "modal_share": modal_share,
        "max_estimate": max_estimate,
        "zipf": zipf,
    }
    _check(opts)
    if modes < 1:
        raise _bad(f"option modes={modes}: must be positive")
    run = np.asarray(run, dtype=float)
    if np.isnan(run).any():
        raise _bad("every job needs a known run time")
    n = len(run)
    top = float(max_estimate) if max_estimate > 0 else default_max_estimate(run)
    values = choose_modes(top, modes)
    k = len(values)
    rng = np.random.default_rng([seed, 0x545346])
    estimate = np.empty(n)
    # Jobs longer than the maximum: their own run time, rounded up to a minute.
    longer = run > top
    estimate[longer] = np.ceil(run[longer] / MINUTE) * MINUTE
    # Non-modal jobs: log-uniform between the run time and the maximum.
    rest = np.flatnonzero(~longer)
    nonmodal_count = min(len(rest), round((1.0 - modal_share) * n))
    pick = rng.permutation(len(rest))
    nonmodal = rest[np.sort(pick[:nonmodal_count])]
    modal = rest[np.sort(pick[nonmodal_count:])]
    low = np.maximum(run[nonmodal], 1.0)
    drawn = low * np.exp(rng.random(len(nonmodal)) * np.log(top / low))
    estimate[nonmodal] = np.clip(np.ceil(drawn / MINUTE) * MINUTE, run[nonmodal], top)
    # Places of each mode: max_share of all jobs at the maximum, Zipf for the others.
    m = len(modal)
    capacity = np.zeros(k, dtype=np.int64)
    capacity[-1] = min(m, round(max_share * n))
    if k > 1:
        ranks = rng.permutation(k - 1) + 1.0
        capacity[:-1] = quotas(ranks ** -float(zipf), m - int(capacity[-1]))
    else:
        capacity[-1] = m
    # Longest first: each group (same smallest feasible mode) over the feasible modes.
    first_mode = np.searchsorted(values, run[modal], side="left")
    overflow = 0
    for g in range(k - 1, -1, -1):
        jobs = modal[first_mode == g]
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
        extra = len(jobs) - taken
        if extra:
            overflow += extra
            labels = np.concatenate([labels, np.full(extra, k - 1)])
        estimate[jobs] = values[rng.permutation(labels)]
    note = (
        f"requested times: Tsafrir-Etsion-Feitelson 2005 model, seed {seed}, "
        f"{k} modes up to {int(top)} s, max share {max_share:g}, modal share "
        f"{modal_share:g}; {int(longer.sum())} jobs longer than the maximum, "
        f"{overflow} over their mode's places"
    )
    return estimate, note


def apply(workload: Workload, **options: Any) -> Workload:
    """A copy of ``workload`` whose unknown requested times (or all, with
    ``replace=True``) are model estimates; the header gains a note.

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
    target &= run >= 0
    estimates, note = assign(
        run[target],
        seed=opts["seed"],
        max_estimate=opts["max_estimate"] or default_max_estimate(run[run >= 0]),
        max_share=opts["max_share"],
        modes=opts["modes"],
        modal_share=opts["modal_share"],
        zipf=opts["zipf"],
    )
    requested[target] = estimates
    header = workload.header.copy()
    header.add("Note", f"{note}; {int(target.sum())} of {len(run)} jobs given an estimate")
    if unknown_run.any():
        header.add("Note", f"{int(unknown_run.sum())} jobs of unknown run time keep no estimate")
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
    import os

    source = base if os.path.exists(base) else base.replace(";", ",")
    workload = apply(schedlab.read(source), **opts)
    parts = [f"{k}={v}" for k, v in options.items() if k != "base" and v != defaults()[k]]
    workload.meta.update(
        {
            "generator": NAME,
            "source": f"{NAME}:" + ",".join([f"base={base}", *parts]),
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
