"""``lublin``: the Lublin-Feitelson model of rigid parallel jobs.

Uri Lublin and Dror G. Feitelson, "The workload on parallel supercomputers: modeling
the characteristics of rigid jobs", J. Parallel and Distributed Computing 63(11),
pp. 1105-1122, 2003. Usable wherever a trace file is accepted::

    schedlab simulate lublin:jobs=10000,procs=256,seed=3 --backfill easy
    schedlab.read("lublin:jobs=1000000,seed=1,estimates=tsafrir")

The model, as its authors' reference program (``m_lublin99``) implements it:

* **Job size.** A job is serial with probability ``serial_prob``. Otherwise ``x`` is
  drawn from a two-stage uniform distribution (uniform on ``[ulow, umed]`` with
  probability ``uprob``, else uniform on ``[umed, uhi]``) and the size is
  ``round(2**x)``; with probability ``pow2_prob`` (counted over all jobs) ``x`` is
  first rounded to an integer, which gives the power-of-two emphasis.
* **Run time,** correlated with size. ``log(run time)`` follows a hyper-Gamma
  distribution: Gamma(``a1``, ``b1``) with probability ``p = pa * size + pb``
  (clipped to [0, 1]), else Gamma(``a2``, ``b2``); ``pa < 0`` so larger jobs draw the
  long branch more often. A ``log(run time)`` above ``max_log_runtime`` (12, about
  45 hours) is drawn again, branch choice included (the reference program's
  ``do hyper_gamma(...) while (hg > TOO_MUCH_TIME)``), so ``log(run time)`` follows
  the hyper-Gamma mixture conditioned on the cut-off. Whole seconds, rounded down.
* **Arrivals** with the daily cycle. ``log(inter-arrival time)`` is Gamma(``aarr *
  arar``, ``barr``), values above ``max_log_interarrival`` (13) drawn again. The day
  has 48 half-hour buckets whose weights are the probability mass that Gamma(``anum``,
  ``bnum``) puts on ``[i - 0.5, i + 0.5]`` for ``i = 11 .. 58``, moved cyclically
  onto the day and normalised to mean 1. Inter-arrival times are spent in "points":
  one second of a bucket of weight ``w`` costs ``w / 1800`` points, so more jobs
  arrive in heavy buckets. The clock starts at ``start_hour``, a UTC hour: a
  ``start`` (UnixStartTime) must be at ``start_hour`` o'clock UTC.
* **Two classes** (``types=yes``, the reference program's default): interactive and
  batch jobs each have their own parameters and their own arrival stream; the merged
  streams give the workload. Each job's class is its SWF queue number (0 interactive,
  1 batch, the SWF convention). With ``types=no`` the "whole sample" parameters are
  used and every job is interactive (queue 0), as in the reference program.

Every parameter is an option. Names without suffix belong to the whole-sample model
(``types=no``); ``_batch`` and ``_inter`` ones to the two classes (``types=yes``).
Giving an option of the model that is not in use is an error, not ignored. The
defaults are the published ones for the paper's 128-node machine; ``uhi`` and
``umed`` follow ``procs`` unless given (whole sample: ``uhi = log2(procs)``, ``umed =
uhi - 2.5``; batch: ``uhi = log2(procs)``, ``umed = uhi - 2``; interactive: ``uhi =
log2(procs) - 1.5``, ``umed = uhi - 2.5``), which reproduces the published values at
``procs=128`` and follows the reference program's advice ("Umed = Uhi - 2.5") for
other machines.

The model says nothing of users or of requested times: user ids stay unknown, and so
do requested times unless ``estimates=tsafrir`` adds the Tsafrir-Etsion-Feitelson
estimates (see :mod:`schedlab.formats.tsafrir_estimates`). Everything is vectorised
numpy; the same options give the same workload, to the byte once written. Each part
(arrivals of each class, sizes, run times, estimates) draws from its own seeded
stream, so changing ``estimates`` does not change the jobs.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import numpy as np
from schedlab import GeneratorSpec, OptionSpec, hookimpl
from schedlab.errors import UsageError
from schedlab.model import Header, Workload

NAME = "lublin"

#: The per-class parameters of the model, in the reference program's order.
CLASS_PARAMETERS: tuple[str, ...] = (
    "serial_prob",
    "pow2_prob",
    "ulow",
    "umed",
    "uhi",
    "uprob",
    "a1",
    "b1",
    "a2",
    "b2",
    "pa",
    "pb",
    "aarr",
    "barr",
    "anum",
    "bnum",
    "arar",
)

#: The published parameters (``uhi``/``umed`` here are those of 128 nodes; by default
#: they follow ``procs``, see the module docstring).
WHOLE: dict[str, float] = {
    "serial_prob": 0.244,
    "pow2_prob": 0.576,
    "ulow": 0.8,
    "umed": 4.5,
    "uhi": 7.0,
    "uprob": 0.86,
    "a1": 4.2,
    "b1": 0.94,
    "a2": 312.0,
    "b2": 0.03,
    "pa": -0.0054,
    "pb": 0.78,
    "aarr": 10.2303,
    "barr": 0.4871,
    "anum": 8.1737,
    "bnum": 3.9631,
    "arar": 1.0225,
}
BATCH: dict[str, float] = {
    "serial_prob": 0.2927,
    "pow2_prob": 0.6686,
    "ulow": 1.2,
    "umed": 5.0,
    "uhi": 7.0,
    "uprob": 0.875,
    "a1": 6.57,
    "b1": 0.823,
    "a2": 639.1,
    "b2": 0.0156,
    "pa": -0.003,
    "pb": 0.6986,
    "aarr": 6.0415,
    "barr": 0.8531,
    "anum": 6.1271,
    "bnum": 5.2740,
    "arar": 1.0519,
}
INTERACTIVE: dict[str, float] = {
    "serial_prob": 0.1541,
    "pow2_prob": 0.625,
    "ulow": 1.0,
    "umed": 3.0,
    "uhi": 5.5,
    "uprob": 0.705,
    "a1": 3.8351,
    "b1": 0.6605,
    "a2": 7.073,
    "b2": 0.6856,
    "pa": -0.0118,
    "pb": 0.9156,
    "aarr": 6.5510,
    "barr": 0.6621,
    "anum": 8.9186,
    "bnum": 3.6680,
    "arar": 0.9797,
}
#: (suffix, published parameters, uhi offset from log2(procs), umed offset from uhi).
CLASSES: dict[str, tuple[str, dict[str, float], float, float]] = {
    "whole": ("", WHOLE, 0.0, -2.5),
    "inter": ("_inter", INTERACTIVE, -1.5, -2.5),
    "batch": ("_batch", BATCH, 0.0, -2.0),
}
#: SWF queue number of each class (0 = interactive, the SWF convention).
QUEUE = {"whole": 0, "inter": 0, "batch": 1}

BUCKETS = 48
BUCKET_SECONDS = 86_400 // BUCKETS
#: The reference program's cyclic day start: bucket weights are taken from the
#: Gamma(anum, bnum) mass around i = 11 .. 58 (in half hours).
CYCLIC_DAY_START = 11

ESTIMATES = ("none", "tsafrir")

#: Largest ``procs``: 2**31 - 1, the largest processor count an SWF field holds in
#: the 32-bit integers of the archive's tools (sizes are up to ``procs``).
MAX_PROCS = 2**31 - 1
#: Largest ``jobs``: 2**31 - 1 (job numbers of a 32-bit SWF field).
MAX_JOBS = 2**31 - 1
#: Latest ``start`` (UnixStartTime): the last second of year 9999, as psp-fing's.
MAX_START = 253_402_300_799


def _options() -> tuple[OptionSpec, ...]:
    common = [
        OptionSpec("jobs", int, 1000, "Number of jobs (reference program: 1000).", min=1),
        OptionSpec("seed", int, 0, "Random seed."),
        OptionSpec("procs", int, 128, "Nodes of the machine (paper: 128).", min=1),
        OptionSpec(
            "types", bool, True, "Interactive and batch classes (yes) or the whole sample (no)."
        ),
        OptionSpec("start_hour", int, 0, "Hour of the day (UTC) the clock starts at (0-23)."),
        OptionSpec("start", int, 0, "UnixStartTime (0: unknown date), at start_hour o'clock UTC."),
        OptionSpec(
            "max_log_runtime", float, 12.0, "Largest log(run time); larger draws are redrawn."
        ),
        OptionSpec(
            "max_log_interarrival",
            float,
            13.0,
            "Largest log(inter-arrival time); larger draws are redrawn.",
        ),
        OptionSpec(
            "estimates",
            str,
            "none",
            "Requested times: none (unknown) or tsafrir (Tsafrir et al. 2005, defaults).",
            choices=ESTIMATES,
        ),
    ]
    per_class = []
    for label, (suffix, values, _, _) in CLASSES.items():
        for name in CLASS_PARAMETERS:
            default = None if name in ("uhi", "umed") else values[name]
            where = {"whole": "whole sample", "inter": "interactive", "batch": "batch"}[label]
            text = f"{where}: {name} (published {values[name]:g}"
            text += "; default follows procs)." if default is None else ")."
            per_class.append(OptionSpec(name + suffix, float, default, text))
    return (*common, *per_class)


OPTIONS: tuple[OptionSpec, ...] = _options()


def defaults() -> dict[str, Any]:
    """Every option with its default value (``None``: derived from ``procs``)."""
    return {o.name: o.default for o in OPTIONS}


def _bad(message: str) -> UsageError:
    return UsageError(f"generator {NAME}: {message}")


def class_parameters(opts: dict[str, Any], label: str) -> dict[str, float]:
    """The parameters of class ``label`` ("whole", "inter" or "batch") for ``opts``,
    with ``uhi`` and ``umed`` derived from ``procs`` where not given."""
    suffix, _, uhi_offset, umed_offset = CLASSES[label]
    params = {name: opts[name + suffix] for name in CLASS_PARAMETERS}
    if params["uhi"] is None:
        params["uhi"] = math.log2(opts["procs"]) + uhi_offset
    if params["umed"] is None:
        params["umed"] = params["uhi"] + umed_offset
    return params


def _check(opts: dict[str, Any]) -> list[str]:
    """Check option ranges; return the classes in use."""
    base = defaults()
    classes = ["inter", "batch"] if opts["types"] else ["whole"]
    unused = [c for c in CLASSES if c not in classes]
    for label in unused:
        suffix = CLASSES[label][0]
        for name in CLASS_PARAMETERS:
            if opts[name + suffix] != base[name + suffix]:
                mode = "types=yes" if opts["types"] else "types=no"  # the mode given
                raise _bad(f"option {name + suffix} does not apply with {mode}")
    for name, most in (("jobs", MAX_JOBS), ("procs", MAX_PROCS)):
        if opts[name] > most:
            raise _bad(f"option {name}={opts[name]}: must be at most {most} (2**31 - 1)")
    if opts["seed"] < 0:
        raise _bad(f"option seed={opts['seed']}: must not be negative")
    if not 0 <= opts["start_hour"] <= 23:
        raise _bad(f"option start_hour={opts['start_hour']}: must be 0..23")
    if opts["start"] < 0:
        raise _bad(f"option start={opts['start']}: must not be negative")
    if opts["start"] > MAX_START:
        raise _bad(
            f"option start={opts['start']}: must be at most {MAX_START} (9999-12-31 23:59:59 UTC)"
        )
    _check_start_hour(opts["start"], opts["start_hour"])
    for name in ("max_log_runtime", "max_log_interarrival"):
        if not 0 < opts[name] < 30:
            raise _bad(f"option {name}={opts[name]}: must be in (0, 30)")
    log_procs = math.log2(opts["procs"])
    for label in classes:
        suffix = CLASSES[label][0]
        p = class_parameters(opts, label)
        for name, value in p.items():
            if not math.isfinite(value):
                raise _bad(f"option {name + suffix}={value}: must be finite")
        for name in ("serial_prob", "pow2_prob", "uprob"):
            if not 0.0 <= p[name] <= 1.0:
                raise _bad(f"option {name + suffix}={p[name]:g}: must be a share in [0, 1]")
        if p["serial_prob"] + p["pow2_prob"] > 1.0 + 1e-12:
            raise _bad(
                f"options serial_prob{suffix} + pow2_prob{suffix} = "
                f"{p['serial_prob'] + p['pow2_prob']:g}: must not exceed 1"
            )
        for name in ("a1", "b1", "a2", "b2", "aarr", "barr", "anum", "bnum", "arar"):
            if not p[name] > 0:
                raise _bad(f"option {name + suffix}={p[name]:g}: must be positive")
        if not 0 <= p["ulow"] <= p["umed"] <= p["uhi"]:
            _check_procs_large_enough(opts, classes, label, p)
            raise _bad(
                f"options ulow{suffix}={p['ulow']:g}, umed{suffix}={p['umed']:g}, "
                f"uhi{suffix}={p['uhi']:g}: need 0 <= ulow <= umed <= uhi"
            )
        if p["uhi"] > log_procs + 1e-9:
            raise _bad(
                f"option uhi{suffix}={p['uhi']:g}: jobs of 2**uhi nodes exceed "
                f"procs={opts['procs']} (uhi at most {log_procs:g})"
            )
        _check_run_time_cutoff(opts, label, p)
        _check_arrival_parameters(opts, label, p)
    return classes


#: Smallest share of inter-arrival draws at most ``max_log_interarrival`` allowed:
#: below it the redraws would not end (as :data:`MIN_RUN_TIME_ACCEPTANCE`).
MIN_ARRIVAL_ACCEPTANCE = 1e-3


def _check_start_hour(start: int, start_hour: int) -> None:
    """Refuse a ``start`` (a date) that is not at ``start_hour`` o'clock UTC: the
    daily cycle starts at ``start_hour``, in UTC, and the header's UnixStartTime
    must not say another time of day. ``start=0`` (no date) takes any hour."""
    if not start or (start % 3600 == 0 and (start // 3600) % 24 == start_hour):
        return
    stamp = _dt.datetime.fromtimestamp(start, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    same_day = start - start % 86400 + start_hour * 3600
    hour_start = start - start % 3600
    hour = (hour_start // 3600) % 24
    raise _bad(
        f"option start={start} ({stamp} UTC) is not at start_hour={start_hour} o'clock UTC "
        f"(start_hour is the UTC hour the clock starts at): give start={same_day}, or "
        f"start={hour_start} with start_hour={hour}"
    )


def _blamed(opts: dict[str, Any], names: list[str]) -> str:
    """``name=value`` of the options of ``names`` the user changed from their
    defaults (all of them when none was changed), for an error message."""
    base = defaults()
    given = [name for name in names if opts[name] != base[name]] or names
    return ", ".join(f"{name}={opts[name]:g}" for name in given)


_T = TypeVar("_T")


def _computable(opts: dict[str, Any], names: list[str], compute: Callable[[], _T]) -> _T:
    """``compute()``, or a one-line error naming the options of ``names`` (those
    changed from their defaults) when their values are beyond what the model's
    floating-point arithmetic can evaluate (a Gamma shape near the float maximum:
    ``lgamma`` or ``exp`` overflows)."""
    try:
        return compute()
    except (OverflowError, ValueError):
        raise _bad(
            f"option {_blamed(opts, names)}: beyond the floating-point range of the "
            "model's Gamma probabilities (they overflow)"
        ) from None


def _check_arrival_parameters(opts: dict[str, Any], label: str, params: dict[str, float]) -> None:
    """Error when class ``label``'s arrival parameters cannot give arrivals: the
    daily cycle Gamma(``anum``, ``bnum``) puts no computable weight on the day's
    half hours (every weight 0, or not a number: the class would have no submit
    times), or the log inter-arrival Gamma(``aarr * arar``, ``barr``) is so rarely
    at most ``max_log_interarrival`` that its redraws would not end. The message
    names the options given (not ``max_log_interarrival`` unless it alone was)."""
    suffix = CLASSES[label][0]
    mass = _computable(
        opts,
        ["anum" + suffix, "bnum" + suffix],
        lambda: bucket_mass(params["anum"], params["bnum"]),
    )
    if not (np.isfinite(mass).all() and mass.sum() > 0):
        raise _bad(
            f"option {_blamed(opts, ['anum' + suffix, 'bnum' + suffix])}: the daily cycle "
            f"Gamma(anum{suffix}, bnum{suffix}) puts no weight on the half hours "
            f"{CYCLIC_DAY_START}..{BUCKETS + CYCLIC_DAY_START - 1} of the day, so the class "
            "would get no arrivals"
        )
    shape = params["aarr"] * params["arar"]
    cut = opts["max_log_interarrival"]
    names = [n + suffix for n in ("aarr", "arar", "barr")]
    share = (
        _computable(opts, names, lambda: gamma_cdf(shape, params["barr"], cut))
        if math.isfinite(shape)
        else 0.0
    )
    if share >= MIN_ARRIVAL_ACCEPTANCE:
        return
    raise _bad(
        f"option {_blamed(opts, [*names, 'max_log_interarrival'])}: the log inter-arrival "
        f"time Gamma(aarr{suffix}*arar{suffix}={shape:g}, barr{suffix}={params['barr']:g}) "
        f"is at most max_log_interarrival={cut:g} with probability {share:.3g}, below "
        f"{MIN_ARRIVAL_ACCEPTANCE:g} (draws above it are drawn again)"
    )


#: Smallest share of hyper-Gamma draws at most ``max_log_runtime`` allowed for any job
#: size: below it the redraws (a thousand per job on average) would not end in
#: reasonable time, and the cut-off is an error.
MIN_RUN_TIME_ACCEPTANCE = 1e-3


def gamma_cdf(shape: float, scale: float, x: float) -> float:
    """P(X <= x) for X ~ Gamma(``shape``, ``scale``): the regularised lower incomplete
    gamma function, by its series below ``shape + 1`` and its continued fraction
    (modified Lentz) above, with the prefactor in logarithms (no overflow)."""
    z = x / scale
    if not z > 0:
        return 0.0
    if z == math.inf:
        return 1.0
    log_front = shape * math.log(z) - z - math.lgamma(shape)
    if log_front != log_front:  # inf - inf: beyond the float range
        raise OverflowError("gamma_cdf: out of the float range")
    if z < shape + 1:
        term = total = 1.0 / shape
        for k in range(1, 100_000):
            term *= z / (shape + k)
            total += term
            if term < total * 1e-16:
                break
        return min(1.0, math.exp(log_front) * total)
    tiny = 1e-300
    b = z + 1.0 - shape
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 100_000):
        an = -i * (i - shape)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return max(0.0, 1.0 - math.exp(log_front) * h)


def largest_size(params: dict[str, float], procs: int) -> int:
    """The largest job size class ``params`` can draw on ``procs`` nodes (as
    :func:`job_sizes` rounds: ``round(2**uhi)``, or ``2**round(uhi)`` for the
    power-of-two jobs, which becomes the largest power of two that fits if above
    ``procs``)."""
    largest = 1
    for x in (params["uhi"], math.floor(params["uhi"] + 0.5)):
        nodes = math.floor(2.0**x + 0.5)
        if nodes > procs:
            nodes = 2 ** math.floor(math.log2(procs))
        largest = max(largest, nodes)
    return largest


def run_time_acceptance(params: dict[str, float], nodes: int, max_log: float) -> float:
    """Probability that one hyper-Gamma draw of a job of ``nodes`` nodes is at most
    ``max_log`` (the branch chosen with its probability, then the Gamma)."""
    p = min(1.0, max(0.0, params["pa"] * nodes + params["pb"]))
    first = gamma_cdf(params["a1"], params["b1"], max_log)
    second = gamma_cdf(params["a2"], params["b2"], max_log)
    return p * first + (1.0 - p) * second


def _check_run_time_cutoff(opts: dict[str, Any], label: str, params: dict[str, float]) -> None:
    """Error when, for some job size class ``label`` can draw, so few hyper-Gamma
    draws (branch and Gamma) are at most ``max_log_runtime`` that the redraws would
    not end: neither branch open to that job can meet the cut-off. The share is
    linear in the branch probability, itself monotone in the size, so the smallest
    and the largest size are the extremes."""
    suffix = CLASSES[label][0]
    cut = opts["max_log_runtime"]
    for a, b in (("a1", "b1"), ("a2", "b2")):
        _computable(opts, [a + suffix, b + suffix], partial(gamma_cdf, params[a], params[b], cut))
    largest = largest_size(params, opts["procs"])
    worst = min((1, largest), key=lambda nodes: run_time_acceptance(params, nodes, cut))
    share = run_time_acceptance(params, worst, cut)
    if share >= MIN_RUN_TIME_ACCEPTANCE:
        return
    p = min(1.0, max(0.0, params["pa"] * worst + params["pb"]))
    names = [n + suffix for n in ("a1", "b1", "a2", "b2", "pa", "pb")]
    first = gamma_cdf(params["a1"], params["b1"], cut)
    second = gamma_cdf(params["a2"], params["b2"], cut)
    raise _bad(
        f"option max_log_runtime={cut:g} is too small for the run-time parameters: "
        f"log(run time) of a job of {worst} node{'s' if worst != 1 else ''} is at most "
        f"{cut:g} with probability {share:.3g} (branch Gamma({names[0]}={params['a1']:g}, "
        f"{names[1]}={params['b1']:g}) taken with probability {p:.3g}: {first:.3g}; "
        f"branch Gamma({names[2]}={params['a2']:g}, {names[3]}={params['b2']:g}): "
        f"{second:.3g}), below {MIN_RUN_TIME_ACCEPTANCE:g}; raise max_log_runtime or "
        f"change {', '.join(names)}"
    )


def _smallest_procs(opts: dict[str, Any], label: str) -> int | None:
    """The smallest ``procs`` for which class ``label``'s ``umed`` and ``uhi``, where
    they follow ``procs`` (not given), reach its ``ulow`` (and a given ``umed``);
    ``None`` when ``procs`` does not decide it (both given, or ``ulow`` itself out of
    range)."""
    suffix, _, uhi_offset, umed_offset = CLASSES[label]
    ulow, umed, uhi = (opts[name + suffix] for name in ("ulow", "umed", "uhi"))
    if uhi is not None or not ulow >= 0:
        return None
    if umed is None:
        need = ulow - uhi_offset - umed_offset  # log2(procs) + offsets >= ulow
    elif umed >= ulow:
        need = umed - uhi_offset  # log2(procs) + uhi offset >= umed
    else:
        return None
    if need > math.log2(MAX_PROCS):
        return MAX_PROCS + 1
    procs = max(1, math.ceil(2.0**need - 1e-9))
    while math.log2(procs) + uhi_offset + (umed_offset if umed is None else 0) < (
        ulow if umed is None else umed
    ):
        procs += 1
    return procs


def _check_procs_large_enough(
    opts: dict[str, Any], classes: list[str], label: str, params: dict[str, float]
) -> None:
    """A direct error naming ``procs`` when class ``label``'s size range is empty
    only because ``umed``/``uhi`` follow a ``procs`` too small for them."""
    here = _smallest_procs(opts, label)
    if here is None or here <= opts["procs"]:
        return
    need = max(x for x in (_smallest_procs(opts, c) for c in classes) if x is not None)
    suffix = CLASSES[label][0]
    derived = [n for n in ("uhi", "umed") if opts[n + suffix] is None]
    floor = "umed" if len(derived) == 1 else "ulow"
    # Only the derived values actually below the floor (umed, below uhi, first).
    below = [n for n in derived if params[n] < params[floor]] or derived
    values = " and ".join(f"{n}{suffix}={params[n]:g}" for n in below)
    follow = "it follows procs" if len(below) == 1 else "they follow procs"
    fix = (
        f"procs must be at least {need}"
        if need <= MAX_PROCS
        else f"no procs up to {MAX_PROCS} is enough"
    )
    given = ", ".join(f"{n}{suffix}" for n in ("ulow", *derived))
    raise _bad(
        f"option procs={opts['procs']}: too small for the model: the default {values} "
        f"({follow}) {'falls' if len(below) == 1 else 'fall'} below "
        f"{floor}{suffix}={params[floor]:g}; {fix} (or give {given})"
    )


# --------------------------------------------------------------------------- sampling


def streams(*key: int, count: int) -> list[np.random.Generator]:
    """``count`` independent generators seeded by ``key`` (one per drawn quantity, so
    the first jobs of a longer workload are those of a shorter one, unless a job
    needs a second redraw over a cut-off: see :func:`_gamma_below`)."""
    return [np.random.default_rng([*key, i]) for i in range(count)]


def _gamma_below(
    rng: np.random.Generator,
    retry: np.random.Generator,
    shape: np.ndarray | float,
    scale: np.ndarray | float,
    n: int,
    limit: float,
    option: str,
) -> np.ndarray:
    """Gamma draws, each redrawn while above ``limit`` (the reference program's rule
    for the inter-arrival times; run times redraw the branch too, see :func:`run_times`).

    First draws come from ``rng`` in job order, redraws from ``retry`` in rounds, each
    in job order: a job's second redraw depends on how many jobs needed a first one,
    so with second redraws a longer workload need not start with the jobs of a
    shorter one (docs/models.md, "Random streams"). Up to :data:`MAX_REDRAW_ROUNDS`
    rounds, as run times.
    """
    shape_a = np.broadcast_to(np.asarray(shape, dtype=float), (n,))
    scale_a = np.broadcast_to(np.asarray(scale, dtype=float), (n,))
    out = rng.gamma(shape_a, scale_a)
    # The budget of run times: :func:`_check` has refused an acceptance below
    # MIN_ARRIVAL_ACCEPTANCE, so a draw survives all rounds with probability at most
    # (1 - 1e-3) ** 100000 (e-100): the error below does not depend on ``n``.
    for _ in range(MAX_REDRAW_ROUNDS):
        over = np.flatnonzero(out > limit)
        if not len(over):
            return out
        out[over] = retry.gamma(shape_a[over], scale_a[over])
    if not (out > limit).any():
        return out
    raise _bad(
        f"option {option}={limit:g}: draws still above it after {MAX_REDRAW_ROUNDS} "
        f"redraws; raise {option}"
    )


def regularized_gamma(a: float, x: float) -> float:
    """P(a, x), the regularised lower incomplete gamma function (the Gamma(a, 1) CDF).

    Series expansion ``x**a e**-x / Gamma(a+1) * sum x**k / ((a+1)...(a+k))``, which
    converges for every ``x`` (quickly for the small arguments of the daily cycle).
    """
    if x <= 0:
        return 0.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if log_front != log_front:  # inf - inf: beyond the float range
        raise OverflowError("regularized_gamma: out of the float range")
    term = 1.0 / a
    total = term
    k = 0
    while k < 10_000:
        k += 1
        term *= x / (a + k)
        total += term
        if term < total * 1e-17:
            break
    return min(1.0, math.exp(log_front) * total)


def bucket_mass(anum: float, bnum: float) -> np.ndarray:
    """The Gamma(``anum``, ``bnum``) mass of each of the 48 half-hour buckets of the
    daily cycle (bucket 0 = 00:00-00:30), not normalised."""
    weights = np.zeros(BUCKETS)
    for i in range(CYCLIC_DAY_START, BUCKETS + CYCLIC_DAY_START):
        mass = regularized_gamma(anum, (i + 0.5) / bnum) - regularized_gamma(anum, (i - 0.5) / bnum)
        weights[(i - 1) % BUCKETS] = mass
    return weights


def bucket_weights(anum: float, bnum: float) -> np.ndarray:
    """The 48 half-hour weights of the daily cycle (bucket 0 = 00:00-00:30), mean 1.
    :class:`UsageError` when there is no weight to normalise (see
    :func:`_check_arrival_parameters`, which names the options)."""
    weights = bucket_mass(anum, bnum)
    if not (np.isfinite(weights).all() and weights.sum() > 0):
        raise _bad(f"options anum={anum:g}, bnum={bnum:g}: the daily cycle has no weight")
    return weights / weights.mean()


def arrival_times(
    rngs: list[np.random.Generator],
    n: int,
    params: dict[str, float],
    start_hour: int,
    max_log: float,
) -> np.ndarray:
    """``n`` arrival times (seconds since the start, not rounded) of one class.

    The inter-arrival draws are summed as points; the clock runs through the day's
    buckets paying each bucket's weight per 1800 s (a piecewise-linear time warp,
    inverted with one ``searchsorted``).
    """
    gam = _gamma_below(
        rngs[0],
        rngs[1],
        params["aarr"] * params["arar"],
        params["barr"],
        n,
        max_log,
        "max_log_interarrival",
    )
    points = np.cumsum(np.exp(gam) / BUCKET_SECONDS)
    weights = np.roll(bucket_weights(params["anum"], params["bnum"]), -2 * start_hour)
    edges = np.concatenate(([0.0], np.cumsum(weights)))
    per_day = edges[-1]
    days = np.floor(points / per_day)
    rest = points - days * per_day
    bucket = np.clip(np.searchsorted(edges, rest, side="right") - 1, 0, BUCKETS - 1)
    fraction = (rest - edges[bucket]) / weights[bucket]
    return days * 86_400.0 + (bucket + fraction) * BUCKET_SECONDS


def job_sizes(
    rng: np.random.Generator, kind: np.ndarray, table: dict[str, np.ndarray], procs: int
) -> np.ndarray:
    """Nodes of each job: serial, power-of-two or other (two-stage uniform on log2).

    On a machine whose size is not a power of two, rounding ``x`` up can give a
    power of two above ``procs``; such a job gets the largest power of two that fits.
    """
    draws = rng.random((len(kind), 3))  # row by row: job i's draws come first
    u, v = draws[:, 0], draws[:, 2]
    first = draws[:, 1] <= table["uprob"][kind]
    low = np.where(first, table["ulow"][kind], table["umed"][kind])
    high = np.where(first, table["umed"][kind], table["uhi"][kind])
    par = low + v * (high - low)
    serial = u <= table["serial_prob"][kind]
    pow2 = u <= table["serial_prob"][kind] + table["pow2_prob"][kind]
    par = np.where(pow2, np.floor(par + 0.5), par)
    nodes = np.floor(np.exp2(par) + 0.5)
    nodes = np.where(nodes > procs, 2.0 ** math.floor(math.log2(procs)), nodes)
    return np.where(serial, 1.0, nodes)


def run_times(
    rngs: list[np.random.Generator],
    kind: np.ndarray,
    nodes: np.ndarray,
    table: dict[str, np.ndarray],
    max_log: float,
) -> np.ndarray:
    """Run time of each job: exp of a hyper-Gamma draw whose mix depends on its size.

    A draw above ``max_log`` is redrawn whole, the branch chosen again (the reference
    program's ``do { hg = hyper_gamma(...); } while (hg > TOO_MUCH_TIME)``), so the
    result is the mixture conditioned on the cut-off, not each branch conditioned
    alone. ``rngs``: first branch choices, first Gamma draws, then the redraws'
    Gamma draws and branch choices, each stream in job order. :func:`_check` has
    made sure every job size meets the cut-off often enough for this to end.
    """
    # A huge |pa| overflows pa * size to +-inf, which the clip makes 1 or 0 (pb is
    # finite): the right branch probability, so the overflow is not reported.
    with np.errstate(over="ignore"):
        p = np.clip(table["pa"][kind] * nodes + table["pb"][kind], 0.0, 1.0)
    first = rngs[0].random(len(kind)) <= p
    shape = np.where(first, table["a1"][kind], table["a2"][kind])
    scale = np.where(first, table["b1"][kind], table["b2"][kind])
    hg = rngs[1].gamma(shape, scale)
    over = np.flatnonzero(hg > max_log)
    rounds = 0
    while len(over):
        rounds += 1
        if rounds > MAX_REDRAW_ROUNDS:  # (1 - 1e-3) ** 100000: never in practice
            raise _bad(
                f"option max_log_runtime={max_log:g}: run times still above it after "
                f"{MAX_REDRAW_ROUNDS} redraws; raise max_log_runtime"
            )
        k = kind[over]
        again = rngs[3].random(len(over)) <= p[over]
        hg[over] = rngs[2].gamma(
            np.where(again, table["a1"][k], table["a2"][k]),
            np.where(again, table["b1"][k], table["b2"][k]),
        )
        over = over[hg[over] > max_log]
    return np.floor(np.exp(hg))


#: Rounds of run-time redraws before giving up (each job meets the cut-off with
#: probability at least MIN_RUN_TIME_ACCEPTANCE per draw).
MAX_REDRAW_ROUNDS = 100_000


# --------------------------------------------------------------------------- workload


def spec_string(**options: Any) -> str:
    """The ``lublin:...`` source string that regenerates a workload (non-defaults only)."""
    base = defaults()
    parts = []
    for key, value in options.items():
        if key in base and value != base[key]:
            text = ("yes" if value else "no") if isinstance(value, bool) else f"{value}"
            parts.append(f"{key}={text}")
    return f"{NAME}:" + ",".join(parts) if parts else NAME


def generate(**options: Any) -> Workload:
    """Generate a Lublin-Feitelson workload (see the module docstring).

    Options are those of :data:`OPTIONS`; out-of-range values are a one-line
    :class:`UsageError` naming the generator and the option.
    """
    spec = GeneratorSpec(name=NAME, generate=generate, options=OPTIONS)
    opts = spec.parse_options(options, "generator")
    classes = _check(opts)
    try:
        return _generate(opts, classes, options)
    except MemoryError:
        raise _bad(
            f"option jobs={opts['jobs']}: not enough memory to generate so many jobs"
        ) from None


def _generate(opts: dict[str, Any], classes: list[str], options: dict[str, Any]) -> Workload:
    """The workload of checked options ``opts`` (``options``: as given, for the
    source string)."""
    n = opts["jobs"]
    seed = opts["seed"]
    params = [class_parameters(opts, label) for label in classes]
    # Arrivals: each class has its own stream; with two classes, n arrivals of each
    # always cover the first n of the merged stream.
    times = []
    kinds = []
    for k, p in enumerate(params):
        rngs = streams(seed, 0x4C55, k, count=2)
        times.append(arrival_times(rngs, n, p, opts["start_hour"], opts["max_log_interarrival"]))
        kinds.append(np.full(n, k, dtype=np.int64))
    all_times = np.concatenate(times)
    all_kinds = np.concatenate(kinds)
    order = np.argsort(all_times, kind="stable")[:n]
    submit = np.floor(all_times[order])
    kind = all_kinds[order]
    table = {name: np.array([p[name] for p in params], dtype=float) for name in CLASS_PARAMETERS}
    nodes = job_sizes(np.random.default_rng([seed, 0x53495A45]), kind, table, opts["procs"])
    run = run_times(streams(seed, 0x52554E, count=4), kind, nodes, table, opts["max_log_runtime"])
    queue = np.array([QUEUE[c] for c in classes], dtype=float)[kind]
    columns: dict[str, np.ndarray] = {
        "job_number": np.arange(1, n + 1, dtype=float),
        "submit_time": submit,
        "run_time": run,
        "allocated_processors": nodes,
        "requested_processors": nodes,
        "status": np.ones(n),
        "queue_number": queue,
    }
    notes = []
    # MaxRuntime, the most the system allows: the cut-off, or the largest estimate
    # the site allows (M, the most popular) when estimates are given.
    max_runtime = int(math.exp(opts["max_log_runtime"]))
    if opts["estimates"] == "tsafrir":
        from schedlab.formats.tsafrir_estimates import assign, default_max_estimate

        max_estimate = default_max_estimate(run)
        estimates, info = assign(run, seed=seed, max_estimate=max_estimate)
        columns["requested_time"] = estimates
        notes.append(info)
        top = max(max_estimate, float(estimates.max())) if len(estimates) else max_estimate
        max_runtime = max(max_runtime, int(top))
    header = _header(opts, classes, notes, max_runtime)
    workload = Workload.from_arrays(columns, header)
    workload.meta.update({"generator": NAME, "source": spec_string(**options), "options": opts})
    return workload


def _header(opts: dict[str, Any], classes: list[str], notes: list[str], max_runtime: int) -> Header:
    header = Header()
    header.set("Version", "2.2")
    header.set("Computer", f"Lublin-Feitelson model, {opts['procs']} nodes")
    header.set(
        "Information",
        "Lublin and Feitelson: The workload on parallel supercomputers: modeling the "
        "characteristics of rigid jobs, JPDC 63(11), 2003",
    )
    header.set("Conversion", f"schedlab {spec_string(**opts)}")
    header.set("MaxJobs", opts["jobs"])
    header.set("MaxRecords", opts["jobs"])
    header.set("Preemption", "No")
    if opts["start"]:
        header.set("UnixStartTime", opts["start"])
    header.set("MaxNodes", opts["procs"])
    header.set("MaxProcs", opts["procs"])
    header.set("MaxRuntime", max_runtime)
    header.set("MaxQueues", len(classes))
    if opts["types"]:
        header.add("Queue", "0 interactive jobs")
        header.add("Queue", "1 batch jobs")
    else:
        header.add("Queue", "0 all jobs (whole-sample model)")
    zone = " (UTC)" if opts["start"] else ""  # (no date: an hour of no zone)
    header.add(
        "Note",
        f"lublin seed {opts['seed']}: clock starts at hour {opts['start_hour']}{zone}; "
        "user ids unknown (not in the model)",
    )
    for note in notes:
        header.add("Note", note)
    return header


@hookimpl
def schedlab_generators() -> list[GeneratorSpec]:
    """The ``lublin`` generator."""
    return [
        GeneratorSpec(
            name=NAME,
            description="Lublin and Feitelson 2003 model of rigid jobs (daily cycle).",
            generate=generate,
            options=OPTIONS,
        )
    ]
