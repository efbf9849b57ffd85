"""Re-keying the queue of a dynamic policy (``multifactor``, ``wfp3``, ``unicef``):
the tuple path (``keys``, sorting ``(key, job)`` pairs), the numpy path
(``key_array``, from ``ARRAY_REKEY_MIN`` waiting jobs on) and ``multifactor``'s
``calc_period=300`` (Slurm's ``PriorityCalcPeriod``), with EASY on the first
``--jobs`` jobs of a log, in one run.

Every case runs in this process, ``--repeat`` interleaved rounds (each round runs
every case once), and keeps each case's best CPU time; "same schedule" compares
the start times of the tuple and numpy paths (they must be equal). ``--procs``
shrinks the machine (jobs wider than it are left out) to make the queue long.

Run: .venv/bin/python benchmarks/bench_rekey.py [--log RICC] [--jobs 30000]
     [--procs 5000] [--repeat 2]
"""

from __future__ import annotations

import argparse
import time

import schedlab
from schedlab.policies.multifactor import Multifactor
from schedlab.policies.unicef import UNICEF
from schedlab.policies.wfp3 import WFP3
from swf_logs import DATA, LOGS, first_jobs

CLASSES = {"multifactor": Multifactor, "wfp3": WFP3, "unicef": UNICEF}


def run(workload, policy: str, procs: int | None, options: dict, array: bool):
    cls = CLASSES[policy]
    saved = cls.__dict__["key_array"]
    if not array:
        cls.key_array = None  # type: ignore[assignment]
    try:
        t = time.process_time()
        result = schedlab.simulate(
            workload, policy=policy, backfill="easy", procs=procs, policy_options=options
        )
        cpu = time.process_time() - t
    finally:
        cls.key_array = saved  # type: ignore[method-assign]
    starts = [j.start_time for j in result.workload.jobs]
    waits = [j.wait_time for j in result.workload.jobs]
    return cpu, starts, sum(waits) / len(waits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", default="RICC")
    parser.add_argument("--jobs", type=int, default=30_000)
    parser.add_argument("--procs", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--policies", default="multifactor,wfp3,unicef")
    args = parser.parse_args()
    workload = first_jobs(schedlab.read(DATA / LOGS[args.log]), args.jobs)
    cases = []
    for policy in args.policies.split(","):
        cases.append((policy, "tuples (keys)", {}, False))
        cases.append((policy, "numpy (key_array)", {}, True))
        if policy == "multifactor":
            cases.append((policy, "numpy, calc_period=300", {"calc_period": 300.0}, True))
    best: dict[int, float] = {}
    seen: dict[int, tuple[list[float], float]] = {}
    for _ in range(args.repeat):
        for i, (policy, _, options, array) in enumerate(cases):
            cpu, starts, mean_wait = run(workload, policy, args.procs, options, array)
            best[i] = min(best.get(i, cpu), cpu)
            seen[i] = (starts, mean_wait)
    print(
        f"{args.log}, first {args.jobs:,} jobs, {args.procs:,} processors, EASY; "
        f"best CPU of {args.repeat} interleaved rounds"
    )
    print("| policy | re-key | CPU s | ratio to tuples | mean wait s | same schedule |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    base = 0
    for i, (policy, label, _, _) in enumerate(cases):
        if label.startswith("tuples"):
            base = i
        same = "" if i == base else ("yes" if seen[i][0] == seen[base][0] else "no")
        if "calc_period" in label:
            same = "(other schedule)"
        print(
            f"| {policy} | {label} | {best[i]:.2f} | {best[base] / best[i]:.2f}x | "
            f"{seen[i][1]:,.0f} | {same} |"
        )


if __name__ == "__main__":
    main()
