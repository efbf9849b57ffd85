"""Reservation depth ``k`` (``-b depth -B depth=k``, k >= 2): the plainly written
pass (:class:`~schedlab.policies.backfill.depth.DepthReference`: the profile of the
running jobs rebuilt at every pass, then one profile query per waiting job) against
the pass ``depth`` runs (:class:`~schedlab.policies.backfill.depth.Depth`: starts
from the head without a profile, no profile when no waiting job fits the free
processors, numpy screen of the queue behind the reservations), on the first N jobs
of a log for growing N, in the same process, interleaved (before, after, before,
after ...).

Prints, per N and k: the CPU time of each simulation (``time.process_time``
around ``schedlab.simulate``, event loop and output), the speed-up, the growth
ratio to the previous N (measured in this run) and whether every job got the same
start from both.

By default the submit times are halved (``--squeeze 2``: twice the load, so the
queue grows long, where the plain pass costs most); ``--squeeze 1`` runs the log's
own prefix.

Run: .venv/bin/python benchmarks/bench_depth.py [--log RICC] [--jobs 5000,10000,20000,40000]
     [--depths 2,4] [--squeeze 2] [--policy fcfs]
"""

from __future__ import annotations

import argparse
import gc
import time

import numpy as np
import schedlab
from schedlab.model import Workload
from schedlab.policies.backfill.depth import Depth, DepthReference
from swf_logs import DATA, LOGS, first_jobs


def timed(workload: Workload, policy: str, strategy: object) -> tuple[float, np.ndarray]:
    gc.collect()
    cpu = time.process_time()
    result = schedlab.simulate(workload, policy=policy, backfill=strategy, progress=False)
    return time.process_time() - cpu, result.start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", default="RICC", choices=sorted(LOGS))
    parser.add_argument("--jobs", default="5000,10000,20000,40000")
    parser.add_argument("--depths", default="2,4")
    parser.add_argument("--squeeze", type=float, default=2.0)
    parser.add_argument("--policy", default="fcfs")
    args = parser.parse_args()
    sizes = [int(x) for x in args.jobs.split(",")]
    depths = [int(x) for x in args.depths.split(",")]

    log = schedlab.read(DATA / LOGS[args.log])
    print(
        f"{args.log} ({LOGS[args.log]}), first N jobs, submit times / {args.squeeze:g}, "
        f"policy {args.policy}; CPU seconds per simulation, before = DepthReference, "
        "after = Depth, interleaved"
    )
    header = (
        f"{'N':>7} {'k':>2} {'before s':>9} {'after s':>8} {'speed-up':>8} "
        f"{'before x':>9} {'after x':>8}  same starts"
    )
    print(header)
    print("-" * len(header))
    previous: dict[int, tuple[float, float]] = {}
    for n in sizes:
        workload = first_jobs(log, n, args.squeeze)
        for k in depths:
            before, start_before = timed(workload, args.policy, DepthReference(k))
            after, start_after = timed(workload, args.policy, Depth(k))
            same = np.array_equal(start_before, start_after, equal_nan=True)
            growth = ("", "")
            if k in previous:
                b0, a0 = previous[k]
                growth = (f"{before / b0:.2f}x", f"{after / a0:.2f}x")
            previous[k] = (before, after)
            print(
                f"{n:>7,} {k:>2} {before:>9.2f} {after:>8.2f} {before / after:>7.1f}x "
                f"{growth[0]:>9} {growth[1]:>8}  {'yes' if same else 'NO'}",
                flush=True,
            )


if __name__ == "__main__":
    main()
