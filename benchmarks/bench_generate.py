"""Speed of the workload generators: 1,000,000 Lublin-Feitelson jobs (both classes,
the whole-sample model, and with Tsafrir estimates), against psp-fing per job as the
baseline measured in the same run.

Target: 1,000,000 Lublin jobs in under 5 seconds.

Run: .venv/bin/python benchmarks/bench_generate.py [--jobs N] [--repeat R]
"""

from __future__ import annotations

import argparse
import resource
import time

import schedlab

TARGET_S = 5.0


def best_of(repeat: int, spec: str) -> float:
    """Best wall time of ``repeat`` generations of ``spec`` (columns materialised)."""
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        workload = schedlab.read(spec)
        workload.to_arrays()
        times.append(time.perf_counter() - began)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args, _ = parser.parse_known_args()
    n = args.jobs
    schedlab.read("lublin:jobs=10")  # registry and imports outside the timing
    baseline_jobs = min(n, 100_000)
    baseline = best_of(args.repeat, f"psp-fing:jobs={baseline_jobs},users=200")
    per_job_baseline = baseline / baseline_jobs
    print(f"generators, best of {args.repeat}")
    print(f"  psp-fing  {baseline_jobs:>9,} jobs  {baseline:6.2f} s  "
          f"{per_job_baseline * 1e6:6.2f} us/job  (baseline)")  # fmt: skip
    worst = 0.0
    for spec in (
        f"lublin:jobs={n}",
        f"lublin:jobs={n},types=no,procs=256",
        f"lublin:jobs={n},estimates=tsafrir",
    ):
        took = best_of(args.repeat, spec)
        worst = max(worst, took)
        per_job = took / n
        print(f"  {spec:<40} {took:6.2f} s  {per_job * 1e6:6.2f} us/job  "
              f"{per_job_baseline / per_job:5.1f}x psp-fing's speed per job")  # fmt: skip
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    verdict = "ok" if worst < TARGET_S * n / 1_000_000 else "SLOW"
    print(f"  slowest lublin: {worst:.2f} s for {n:,} jobs (target < {TARGET_S:g} s per "
          f"million): {verdict}; peak memory {peak:.0f} MB")  # fmt: skip
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    raise SystemExit(main())
