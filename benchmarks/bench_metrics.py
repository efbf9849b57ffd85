"""Speed of the metrics engine: every built-in metric on a million-job workload, plus
RICC-2010 (447,794 jobs) from ../shared/data/swf, ungrouped and grouped.

Target: the main metrics of a million-job log in well under a second.

Run: .venv/bin/python benchmarks/bench_metrics.py [--jobs N] [--repeat R]
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np
import schedlab
from schedlab.measure import compute_metrics
from schedlab.model import Workload

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "swf"


def synthetic(n: int, seed: int = 1) -> Workload:
    """A plausible log: Poisson arrivals, exponential waits and runs, 500 users."""
    rng = np.random.default_rng(seed)
    run = rng.exponential(3600, n).round()
    return Workload.from_arrays(
        {
            "job_number": np.arange(1, n + 1),
            "submit_time": np.cumsum(rng.exponential(30, n)).round(),
            "wait_time": rng.exponential(1800, n).round(),
            "run_time": run,
            "allocated_processors": 2 ** rng.integers(0, 8, n),
            "requested_time": np.maximum(run, 1) * rng.uniform(1, 10, n).round(),
            "user_id": rng.integers(1, 501, n),
            "queue_number": rng.integers(1, 6, n),
        }
    )


def best_of(repeat: int, func) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        func()
        times.append(time.perf_counter() - began)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    workload = synthetic(args.jobs)
    workload.to_arrays()
    compute_metrics(synthetic(1000), procs=1024)  # build the registry outside the timing
    print(f"synthetic workload: {args.jobs:,} jobs (best of {args.repeat})")
    cases = [
        (
            "per-job metrics (wait, response, slowdown, bsld, accuracy)",
            {"names": ["wait", "response", "slowdown", "bounded-slowdown", "accuracy"]},
        ),
        ("all metrics", {}),
        ("all metrics by user", {"by": "user"}),
        ("all metrics by size", {"by": "size"}),
        ("all metrics by accuracy-class", {"by": "accuracy-class"}),
        (
            "wait by accuracy-class, weight=users",
            {"by": "accuracy-class", "names": ["wait"], "weight": "users"},
        ),
    ]
    for label, kwargs in cases:
        seconds = best_of(
            args.repeat, lambda kw=kwargs: compute_metrics(workload, procs=1024, **kw)
        )
        print(f"  {label:<62} {seconds:7.3f} s  ({args.jobs / seconds / 1e6:5.1f} M jobs/s)")
    ricc = DATA / "RICC-2010-2.swf.gz"
    if ricc.exists():
        log = schedlab.read(ricc)
        log.to_arrays()
        print(f"{ricc.name}: {len(log):,} jobs")
        for label, kwargs in cases[1:3] + cases[4:5]:
            seconds = best_of(args.repeat, lambda kw=kwargs: compute_metrics(log, **kw))
            print(f"  {label:<62} {seconds:7.3f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory: {peak:.0f} MB")


if __name__ == "__main__":
    main()
