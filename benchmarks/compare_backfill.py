"""EASY, conservative and Slurm's backfill on real logs, side by side.

Prints the Markdown table of ``docs/simulation.md`` ("Slurm's backfill"): for each
log and strategy, FCFS priority, the mean wait, the mean bounded slowdown (10 s
threshold), the utilization, and the event loop's wall time (``stats["wall_time_s"]``;
the machine is shared, so times vary by 5-25 % from run to run), plus the
Slurm strategy's count of backfill cycles.

    .venv/bin/python benchmarks/compare_backfill.py              # KTH-SP2 and LANL-CM5
    .venv/bin/python benchmarks/compare_backfill.py --log RICC-2010-2.swf.gz
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import schedlab

DATA = Path(
    os.environ.get(
        "SCHEDLAB_SHARED_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
    )
)
LOGS = ("KTH-SP2-1996-2.1-cln.swf.gz", "LANL-CM5-1994-4.1-cln.swf.gz")
#: (backfill, options): the last row shows how much of slurm's difference comes
#: from its periodic cycles and rounded plans (a cycle every second, exact times).
STRATEGIES: tuple[tuple[str, dict[str, int]], ...] = (
    ("easy", {}),
    ("conservative", {}),
    ("slurm", {}),
    ("slurm", {"bf_interval": 1, "bf_resolution": 1}),
)


def measure(workload: Any, backfill: str, options: dict[str, int]) -> dict[str, Any]:
    """One FCFS run: its metrics and its time."""
    from schedlab.policies.backfill.slurm import SlurmBackfill

    strategy: Any = SlurmBackfill(**options) if backfill == "slurm" else backfill
    result = schedlab.simulate(workload, policy="fcfs", backfill=strategy, progress=False)
    report = schedlab.compute_metrics(
        result, names=["wait", "bounded-slowdown", "utilization"], threshold=10.0
    )
    return {
        "wait": report.value("wait"),
        "bsld": report.value("bounded-slowdown"),
        "util": report.value("utilization"),
        "time": result.stats["wall_time_s"],
        "cycles": getattr(strategy, "cycles", None),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", action="append", help="SWF file name in shared/data/swf")
    args = parser.parse_args()
    print("| log | backfill | mean wait (s) | mean bounded slowdown | utilization | sim time (s) |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for name in args.log or LOGS:
        workload = schedlab.read(DATA / "swf" / name)
        label = f"{name.split('-cln')[0].split('.swf')[0]} ({len(workload):,} jobs)"
        for backfill, options in STRATEGIES:
            m = measure(workload, backfill, options)
            given = ", ".join(f"{k}={v}" for k, v in options.items())
            given = f" {given}" if given else ""
            cycles = f" ({m['cycles']:,} cycles)" if m["cycles"] is not None else ""
            print(
                f"| {label} | {backfill}{given}{cycles} | {m['wait']:,.0f} | {m['bsld']:.1f} | "
                f"{m['util']:.3f} | {m['time']:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
