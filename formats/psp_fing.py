"""``psp-fing``: synthetic Cluster FING workloads for the Penalty Scheduling Policy study.

Rocchetti, Iturriaga and Nesmachnow ("Including accurate user estimates in HPC
schedulers: an empirical analysis", section 5) evaluate PSP on synthetic workloads
modelled on Cluster FING, in six user-behaviour scenarios. This generator builds
those workloads. Use it wherever a trace file is accepted::

    schedlab simulate psp-fing:scenario=CF,seed=3 --policy psp --backfill easy
    schedlab.read("psp-fing:scenario=DI,seed=1")

What the paper states is reproduced exactly: 1000 jobs from 20 users; cores a power
of two from 1 to 16 with 44.2 % sequential jobs; run times up to 10 days with 49.3 %
under a minute; the accuracy groups g1..g6 and their shares; the six scenarios of
Table 2 and the learning rule of DI/HDI. Everything the paper leaves open is an
option whose default and reason are in ``docs/experiments.md``:

* the parallel sizes 2..16 get geometric weights (``size_ratio``);
* run times over a minute are log-normal (``long_median``, ``long_sigma``), at most
  ``max_run_time``;
* arrivals are a Poisson process whose rate gives the offered ``load`` on a machine
  of ``procs`` cores;
* users' activity follows a Zipf law (``user_zipf``);
* each job's accuracy is a Beta draw around its user's (``accuracy_concentration``);
* requested time = run time / accuracy, rounded to the nearest second (halves to
  even), at least the run time and capped at the queue limit (``queue_limit``).

The job stream (arrivals, users, sizes, run times) depends only on ``seed`` and the
job options, so the six scenarios of one seed share the same jobs and differ only in
requested times: the comparison between scenarios is not blurred by different job
mixes. The same options always give the same workload, to the byte once written.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from schedlab import GeneratorSpec, OptionSpec, hookimpl
from schedlab.errors import UsageError
from schedlab.model import Header, Workload
from schedlab.validation import MAX_SECONDS

#: The six scenarios of the paper's Table 2.
SCENARIOS: tuple[str, ...] = ("BE", "GE", "CF", "CFG", "DI", "HDI")

#: Accuracy groups g1..g6 of section 5.1: (low, high) bounds of a user's mean accuracy.
GROUP_BOUNDS: tuple[tuple[float, float], ...] = (
    (0.0, 0.05),
    (0.05, 0.15),
    (0.15, 0.25),
    (0.25, 0.35),
    (0.35, 0.60),
    (0.60, 1.0),
)
#: Share of Cluster FING users in g1..g6 (section 5.1, 117 regular users).
CF_SHARES: tuple[float, ...] = (0.21, 0.21, 0.18, 0.17, 0.19, 0.04)
#: Shares of the CFG scenario ("Cluster FING with good estimates", section 5.2).
CFG_SHARES: tuple[float, ...] = (0.12, 0.12, 0.09, 0.08, 0.10, 0.49)
#: Accuracy range of every user in BE (class a1) and GE (class a5).
BE_RANGE: tuple[float, float] = (0.0, 0.2)
GE_RANGE: tuple[float, float] = (0.8, 1.0)

DAY = 86_400


def _scenario(text: str) -> str:
    value = str(text).strip().upper()
    if value not in SCENARIOS:
        raise ValueError(f"expected one of {', '.join(SCENARIOS)}")
    return value


#: Upper bounds of the integer options (the paper's workloads are far below them).
MAX_JOBS = 1_000_000
MAX_USERS = 100_000
MAX_PROCS = 10_000_000
#: 9999-12-31 23:59:59 UTC: the last second a date can show.
MAX_START = 253_402_300_799
#: Longest ``max_run_time``, s (about 31 years), and other bounds that keep the
#: model's arithmetic finite: ``long_sigma``, ``size_ratio`` (its 23rd power at most
#: 10**138), ``user_zipf`` (100,000 users to its power) and ``min_accuracy`` (a
#: requested time is a run time over an accuracy).
MAX_RUN_TIME = 1e9
MAX_SIGMA = 100.0
MAX_SIZE_RATIO = 1e6
MAX_ZIPF = 50.0
MIN_ACCURACY = 1e-9
#: Longest span of the submissions and largest ``queue_limit``, s: the longest time
#: an SWF file holds (1e12 s), so every workload can be written and read back.
MAX_SPAN = MAX_SECONDS


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("scenario", _scenario, "CF", "User behaviour: BE, GE, CF, CFG, DI or HDI."),
    OptionSpec("seed", int, 0, "Random seed (>= 0); the job stream depends on it alone.", min=0),
    OptionSpec(
        "jobs", int, 1000, f"Number of jobs (paper: 1000; 1..{MAX_JOBS}).", min=1, max=MAX_JOBS
    ),
    OptionSpec(
        "users", int, 20, f"Number of users (paper: 20; 1..{MAX_USERS}).", min=1, max=MAX_USERS
    ),
    OptionSpec(
        "procs",
        int,
        32,
        f"Cores of the simulated machine (MaxProcs; 1..{MAX_PROCS}).",
        min=1,
        max=MAX_PROCS,
    ),
    OptionSpec("load", float, 0.85, "Offered load: core-seconds asked / (procs x span)."),
    OptionSpec(
        "max_cores", int, 16, "Largest job, a power of two (paper: 16; at most procs).", min=1
    ),
    OptionSpec("sequential", float, 0.442, "Share of 1-core jobs (paper: 44.2 %)."),
    OptionSpec("size_ratio", float, 0.7, "Weight ratio of successive parallel sizes 2, 4, 8, 16."),
    OptionSpec("short", float, 0.493, "Share of jobs under a minute (paper: 49.3 %)."),
    OptionSpec(
        "long_median",
        float,
        21600.0,
        "Median of the log-normal of jobs over a minute before the max_run_time cut-off, s.",
    ),
    OptionSpec("long_sigma", float, 2.0, "Log-normal sigma of run times over a minute."),
    OptionSpec("max_run_time", float, 10 * DAY, "Longest run time, s (paper: 10 days)."),
    OptionSpec("queue_limit", float, 10 * DAY, "Cap on requested time, s (queue limit)."),
    OptionSpec("user_zipf", float, 1.0, "Zipf exponent of the jobs per user (0 = equal)."),
    OptionSpec(
        "accuracy_concentration",
        float,
        50.0,
        "Beta concentration of a job's accuracy around its user's (higher = closer).",
    ),
    OptionSpec("min_accuracy", float, 0.005, "Smallest accuracy drawn (avoids run/0)."),
    OptionSpec(
        "improve_every",
        int,
        5,
        f"DI/HDI: improve after every N submitted jobs (1..{MAX_JOBS}).",
        min=1,
        max=MAX_JOBS,
    ),
    OptionSpec("improve_rate", float, 0.1, "DI/HDI: the 0.1 of the learning rule."),
    OptionSpec("dynamic_base", _scenario, "CF", "DI/HDI: scenario giving the starting accuracies."),
    OptionSpec(
        "start",
        int,
        1_420_070_400,
        "UnixStartTime of the workload (2015-01-01 UTC; 0 .. year 9999).",
        min=0,
        max=MAX_START,
    ),
)


# --------------------------------------------------------------------------- users


def quota_counts(shares: Sequence[float], total: int) -> list[int]:
    """Split ``total`` users over groups by ``shares`` (largest remainder, ties to the
    lower group), so a 20-user workload holds the paper's mix as closely as it can."""
    weights = np.asarray(shares, dtype=float)
    exact = weights / weights.sum() * total
    counts = np.floor(exact).astype(int)
    remainder = exact - counts
    order = sorted(range(len(shares)), key=lambda i: (-round(remainder[i], 12), i))
    for i in order[: total - int(counts.sum())]:
        counts[i] += 1
    return [int(c) for c in counts]


def improve(accuracy: float, rate: float = 0.1) -> float:
    """One learning step of DI/HDI (section 5.2): ``accuracy <= 0.5`` grows by
    ``(1 - accuracy) x rate``, otherwise by ``accuracy x rate``; capped at 1."""
    if accuracy <= 0.5:
        accuracy += (1.0 - accuracy) * rate
    else:
        accuracy += accuracy * rate
    return min(accuracy, 1.0)


def _user_accuracies(
    scenario: str, users: int, seed: int, min_accuracy: float
) -> tuple[np.ndarray, list[str]]:
    """Each user's initial mean accuracy and the name of the group it was drawn from."""
    rng = np.random.default_rng([seed, 0x5053, SCENARIOS.index(scenario)])
    if scenario in ("BE", "GE"):
        low, high = BE_RANGE if scenario == "BE" else GE_RANGE
        # a min_accuracy above the range: every user at the range's top (the jobs'
        # accuracies are clipped up to min_accuracy afterwards)
        low = min(max(low, min_accuracy), high)
        return rng.uniform(low, high, users), [scenario.lower()] * users
    shares = CF_SHARES if scenario == "CF" else CFG_SHARES
    counts = quota_counts(shares, users)
    groups = np.repeat(np.arange(len(counts)), counts)
    rng.shuffle(groups)
    bounds = np.array(GROUP_BOUNDS)[groups]
    low = np.minimum(np.maximum(bounds[:, 0], min_accuracy), bounds[:, 1])
    return rng.uniform(low, bounds[:, 1]), [f"g{g + 1}" for g in groups]


def _improving_users(scenario: str, base: np.ndarray, seed: int) -> np.ndarray:
    """Which users learn: all in DI; in HDI one of each pair of users adjacent in
    initial accuracy (chosen at random), so both halves span the same accuracies."""
    users = len(base)
    if scenario == "DI":
        return np.ones(users, dtype=bool)
    if scenario != "HDI":
        return np.zeros(users, dtype=bool)
    rng = np.random.default_rng([seed, 0x4844])
    order = np.argsort(base, kind="stable")
    improving = np.zeros(users, dtype=bool)
    for start in range(0, users - 1, 2):
        improving[order[start + rng.integers(2)]] = True
    return improving


# --------------------------------------------------------------------------- jobs


def _truncated_lognormal(
    rng: np.random.Generator, n: int, median: float, sigma: float, low: float, high: float
) -> np.ndarray:
    """Whole seconds from a log-normal truncated to [low, high] (values outside are
    drawn again, so no spike of jobs sits exactly at a bound)."""
    values = np.ceil(median * np.exp(sigma * rng.standard_normal(n)))
    for _ in range(1000):
        outside = (values < low) | (values > high)
        if not outside.any():
            break
        values[outside] = np.ceil(median * np.exp(sigma * rng.standard_normal(outside.sum())))
    return np.clip(values, low, high)


def _job_stream(opts: dict[str, Any]) -> dict[str, np.ndarray]:
    """Submit times, users, cores and run times: the part every scenario shares."""
    n, users = opts["jobs"], opts["users"]
    rng = np.random.default_rng([opts["seed"], 0x4A4F42])
    # Cores: 1 with probability `sequential`, else 2, 4, ... max_cores with geometric
    # weights size_ratio**k.
    max_exp = int(math.log2(opts["max_cores"]))
    sizes = 2 ** np.arange(1, max_exp + 1)
    weights = opts["size_ratio"] ** np.arange(len(sizes))
    sequential = rng.random(n) < opts["sequential"]
    parallel = rng.choice(sizes, size=n, p=weights / weights.sum()) if len(sizes) else 1
    cores = np.where(sequential, 1, parallel).astype(float)
    # Run times: `short` of the jobs log-uniform in [1, 60) s; the rest log-normal
    # (median long_median, sigma long_sigma) truncated to [60 s, max_run_time]; whole
    # seconds.
    short = rng.random(n) < opts["short"]
    short_rt = np.floor(np.exp(rng.random(n) * math.log(60.0)))
    long_rt = _truncated_lognormal(
        rng, n, opts["long_median"], opts["long_sigma"], 60.0, opts["max_run_time"]
    )
    run = np.clip(np.where(short, short_rt, long_rt), 1.0, opts["max_run_time"])
    # Users: Zipf-like activity, user i (1-based) submits with weight i**-user_zipf;
    # ranks are shuffled against user numbers.
    activity = np.arange(1, users + 1, dtype=float) ** -opts["user_zipf"]
    activity = rng.permutation(activity)
    user = rng.choice(users, size=n, p=activity / activity.sum()) + 1
    # Arrivals: Poisson process conditioned on n arrivals in [0, span], with the span
    # set by the offered load.
    work = float(np.sum(cores * run))
    span = work / (opts["procs"] * opts["load"])
    if not span <= MAX_SPAN:
        raise UsageError(
            f"generator psp-fing: load={opts['load']} spreads the jobs over {span:.3g} s, "
            "beyond the longest time an SWF file holds (1e12 s after the start): give a "
            "larger load"
        )
    submit = np.floor(np.sort(rng.uniform(0.0, span, n)))
    submit -= submit[0]
    return {"submit": submit, "user": user.astype(float), "cores": cores, "run": run}


def _job_accuracies(
    opts: dict[str, Any], user: np.ndarray, base: np.ndarray, improving: np.ndarray
) -> np.ndarray:
    """Each job's accuracy: a Beta draw whose mean is its user's accuracy at submission
    (after the learning steps of DI/HDI), clipped below at min_accuracy."""
    n = len(user)
    rng = np.random.default_rng([opts["seed"], 0x41434331])
    codes = user.astype(int) - 1
    if improving.any():
        current = base.copy()
        submitted = np.zeros(len(base), dtype=int)
        accuracy = np.empty(n)
        for i, u in enumerate(codes):
            accuracy[i] = current[u]
            submitted[u] += 1
            if improving[u] and submitted[u] % opts["improve_every"] == 0:
                current[u] = improve(current[u], opts["improve_rate"])
    else:  # nobody learns: every job has its user's starting accuracy
        accuracy = base[codes]
    k = opts["accuracy_concentration"]
    if math.isinf(k):
        drawn = accuracy
    else:
        mean = np.clip(accuracy, 1e-6, 1.0 - 1e-6)
        drawn = rng.beta(mean * k, (1.0 - mean) * k)
    return np.clip(drawn, opts["min_accuracy"], 1.0)


def _check(opts: dict[str, Any]) -> None:
    def bad(message: str) -> UsageError:
        return UsageError(f"generator psp-fing: {message}")

    if opts["max_cores"] & (opts["max_cores"] - 1):
        raise bad(f"max_cores={opts['max_cores']} is not a power of two")
    if opts["max_cores"] > opts["procs"]:
        raise bad(f"max_cores={opts['max_cores']} exceeds procs={opts['procs']}")
    for name in ("sequential", "short"):
        if not 0.0 <= opts[name] <= 1.0:
            raise bad(f"{name}={opts[name]} is not a share in [0, 1]")
    if not (opts["load"] > 0 and math.isfinite(opts["load"])):
        raise bad(f"load={opts['load']} must be positive and finite")
    if not 0.0 <= opts["improve_rate"] <= 1.0:
        raise bad(f"improve_rate={opts['improve_rate']} must be in [0, 1] (a learning rate)")
    if not opts["size_ratio"] > 0:
        raise bad(f"size_ratio={opts['size_ratio']} must be positive")
    if opts["max_run_time"] < 60:
        raise bad("max_run_time must be at least 60 s")
    if opts["queue_limit"] < opts["max_run_time"]:
        raise bad("queue_limit must be at least max_run_time (no job may be killed)")
    if not 0.0 < opts["min_accuracy"] <= 1.0:
        raise bad(f"min_accuracy={opts['min_accuracy']} must be in (0, 1]")
    if not opts["accuracy_concentration"] > 0:
        raise bad("accuracy_concentration must be positive (inf = no per-job variation)")
    if not (opts["long_median"] >= 60 and opts["long_sigma"] >= 0):
        raise bad("long_median must be at least 60 s and long_sigma not negative")
    # Bounds that keep every draw finite (and the redraw loop short): beyond them
    # the arithmetic overflowed (an internal error, or inf run times).
    if opts["max_run_time"] > MAX_RUN_TIME:
        raise bad(f"max_run_time={opts['max_run_time']} must be at most {MAX_RUN_TIME:.0f} s")
    if opts["queue_limit"] > MAX_SPAN:
        raise bad(
            f"queue_limit={opts['queue_limit']:g} must be at most 1e12 s (the longest "
            "time an SWF file holds)"
        )
    if opts["long_median"] > opts["max_run_time"]:
        raise bad(
            f"long_median={opts['long_median']} must be at most max_run_time={opts['max_run_time']}"
        )
    if opts["long_sigma"] > MAX_SIGMA:
        raise bad(f"long_sigma={opts['long_sigma']} must be at most {MAX_SIGMA}")
    if opts["size_ratio"] > MAX_SIZE_RATIO:
        raise bad(f"size_ratio={opts['size_ratio']} must be at most {MAX_SIZE_RATIO:g}")
    if not -MAX_ZIPF <= opts["user_zipf"] <= MAX_ZIPF:
        raise bad(f"user_zipf={opts['user_zipf']} must be in [-{MAX_ZIPF}, {MAX_ZIPF}]")
    if opts["min_accuracy"] < MIN_ACCURACY:
        raise bad(f"min_accuracy={opts['min_accuracy']} must be at least {MIN_ACCURACY:g}")
    if opts["dynamic_base"] in ("DI", "HDI"):
        raise bad("dynamic_base must be a static scenario (BE, GE, CF or CFG)")


def defaults() -> dict[str, Any]:
    """Every option with its default value."""
    return {o.name: o.default for o in OPTIONS}


def spec_string(**options: Any) -> str:
    """The ``psp-fing:...`` source string that regenerates a workload (non-defaults only)."""
    base = defaults()
    parts = [f"{k}={v}" for k, v in options.items() if k in base and v != base[k]]
    return "psp-fing:" + ",".join(parts) if parts else "psp-fing"


def generate(**options: Any) -> Workload:
    """Generate one Cluster FING workload (see the module docstring).

    Options are those of :data:`OPTIONS`; unknown names are a :class:`UsageError`.
    The result holds columns; ``meta["users"]`` describes every user (group, jobs,
    initial accuracy, ``final_accuracy`` = the accuracy the user's last job was
    submitted with, whether it learns) and the header notes repeat it.
    """
    spec = GeneratorSpec(name="psp-fing", generate=generate, options=OPTIONS)
    opts = spec.parse_options(options, "generator")
    _check(opts)
    scenario = opts["scenario"]
    stream = _job_stream(opts)
    dynamic = scenario in ("DI", "HDI")
    source = opts["dynamic_base"] if dynamic else scenario
    base, groups = _user_accuracies(source, opts["users"], opts["seed"], opts["min_accuracy"])
    improving = _improving_users(scenario, base, opts["seed"])
    accuracy = _job_accuracies(opts, stream["user"], base, improving)
    requested = np.minimum(np.round(stream["run"] / accuracy), opts["queue_limit"])
    requested = np.maximum(requested, stream["run"])
    n = opts["jobs"]
    columns = {
        "job_number": np.arange(1, n + 1, dtype=float),
        "submit_time": stream["submit"],
        "run_time": stream["run"],
        "allocated_processors": stream["cores"],
        "requested_processors": stream["cores"],
        "requested_time": requested,
        "status": np.ones(n),
        "user_id": stream["user"],
        "queue_number": np.ones(n),
        "partition_number": np.ones(n),
    }
    users = _describe_users(opts, stream["user"], base, groups, improving)
    header = _header(opts, users, float(np.max(stream["submit"] + stream["run"])))
    workload = Workload.from_arrays(columns, header)
    workload.meta.update(
        {
            "generator": "psp-fing",
            "source": spec_string(**options),
            "options": opts,
            "users": users,
        }
    )
    return workload


def _describe_users(
    opts: dict[str, Any],
    user: np.ndarray,
    base: np.ndarray,
    groups: list[str],
    improving: np.ndarray,
) -> list[dict[str, Any]]:
    counts = np.bincount(user.astype(int), minlength=opts["users"] + 1)[1:]
    out = []
    for u in range(opts["users"]):
        final = float(base[u])
        if improving[u] and counts[u]:
            # The accuracy the user's last job was submitted with.
            for _ in range((int(counts[u]) - 1) // opts["improve_every"]):
                final = improve(final, opts["improve_rate"])
        out.append(
            {
                "user": u + 1,
                "group": groups[u],
                "jobs": int(counts[u]),
                "accuracy": round(float(base[u]), 4),
                "final_accuracy": round(final, 4),
                "improves": bool(improving[u]),
            }
        )
    return out


def _header(opts: dict[str, Any], users: list[dict[str, Any]], end: float) -> Header:
    header = Header()
    header.set("Version", "2.2")
    header.set("Computer", "Cluster FING (synthetic model)")
    header.set("Installation", "Facultad de Ingenieria, Universidad de la Republica, Uruguay")
    header.set(
        "Information",
        "Rocchetti, Iturriaga, Nesmachnow: Including accurate user estimates in HPC "
        "schedulers: an empirical analysis",
    )
    header.set("Conversion", f"schedlab {spec_string(**opts)}")
    header.set("MaxJobs", opts["jobs"])
    header.set("MaxRecords", opts["jobs"])
    header.set("Preemption", "No")
    header.set("UnixStartTime", opts["start"])
    header.set("TimeZoneString", "America/Montevideo")
    header.set("MaxProcs", opts["procs"])
    header.set("MaxRuntime", int(opts["queue_limit"]))
    header.set("MaxQueues", 1)
    header.set("Queues", "one batch queue whose limit caps requested times")
    header.add("Queue", "1 batch")
    header.set("MaxPartitions", 1)
    header.add("Partition", "1 cluster")
    header.add(
        "Note",
        f"psp-fing scenario {opts['scenario']} seed {opts['seed']}: requested time = run time "
        "/ accuracy, capped at MaxRuntime; last arrival + run ends at "
        f"{int(end)} s",
    )
    for info in users:
        header.add(
            "Note",
            f"user {info['user']} group {info['group']} jobs {info['jobs']} accuracy "
            f"{info['accuracy']:.4f} final {info['final_accuracy']:.4f} "
            f"improves {'yes' if info['improves'] else 'no'}",
        )
    return header


@hookimpl
def schedlab_generators() -> list[GeneratorSpec]:
    """The ``psp-fing`` generator."""
    return [
        GeneratorSpec(
            name="psp-fing",
            description="Synthetic Cluster FING workloads of the PSP paper (6 scenarios).",
            generate=generate,
            options=OPTIONS,
        )
    ]
