"""Simulator speed: FCFS with no backfilling, EASY and conservative backfilling on
KTH-SP2 (28,476 jobs), LANL-CM5 (122,060) and RICC-2010 (447,794) from
../shared/data/swf, plus the per-run overhead of a small (1,000-job) PSP run.

Targets (2-core machine): EASY on KTH-SP2 < 1 s of simulation time; EASY on RICC
< 20 s; conservative within 3x of EASY on the same log; peak memory < 1 GB on RICC.

Each run happens in its own process so that its peak memory (max RSS: reading the
log, the simulation and the output workload) is its own. "sim s" is the event loop
only (``stats["wall_time_s"]``), "sim cpu" its CPU time (``stats["cpu_time_s"]``: what
a busy machine changes least), "total s" the whole ``simulate`` call, "cpu s" the
CPU time of that call (the machine is shared: compare CPU times too). The
conservative line ends with the kernel it ran on (``compiled``: numba, the
``fast`` extra; ``python`` otherwise or with ``SCHEDLAB_JIT=0``) and its ratio to
EASY on the same log (event loop times, then CPU times). Loading the compiled
kernels (importing numba, reading their cached machine code: about 0.5 s once per
process) counts in "total s" and "cpu s", not in "sim s".

With ``--against PYTHON`` (the interpreter of another installation, e.g. a
checkout of an earlier commit in its own venv), every run is made with both
interpreters, alternating, ``--repeat`` times each; the table shows the best of
each and the ratios this/baseline for event-loop and CPU time, and whether the
schedules agree (mean wait to the second).

Run: .venv/bin/python benchmarks/bench_simulate.py [--logs KTH,LANL,RICC]
     [--backfills none,easy,conservative] [--timeout 900]
     [--against /path/to/other/.venv/bin/python --repeat 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from swf_logs import DATA, LOGS

CHILD = """
import json, sys, time, resource, schedlab
w = schedlab.read(sys.argv[1])
w.to_arrays()
cpu = time.process_time()
r = schedlab.simulate(w, policy="fcfs", backfill=sys.argv[2], progress=False)
cpu = time.process_time() - cpu
s = r.stats
print(json.dumps({"jobs": s["jobs_simulated"], "sim": s["wall_time_s"],
                  "simcpu": s.get("cpu_time_s", float("nan")), "whole": s.get("whole_run", False),
                  "total": s["total_time_s"], "cpu": cpu, "rss": s["peak_memory_bytes"],
                  "events": s["events"], "kernel": s["kernel"],
                  "mean_wait": float(r.workload.to_arrays()["wait_time"].mean())}))
"""


WARM = """
try:
    from schedlab.policies.backfill import kernels
except ImportError:
    from schedlab.sim import jit as kernels  # schedlab 0.1
kernels.warm_up()
"""


def run_child(
    path: Path, backfill: str, timeout: float, python: str = sys.executable
) -> dict | None:
    try:
        done = subprocess.run(
            [python, "-c", CHILD, str(path), backfill],
            # Not the checkout: its metadata folder would shadow another install's.
            cwd=tempfile.gettempdir(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def small_runs(repeat: int = 200) -> None:
    """Per-run overhead on a 1,000-job workload (what a PSP reproduction sweeps)."""
    import numpy as np
    import schedlab
    from schedlab.model import Header, Workload

    rng = np.random.default_rng(1)
    n = 1000
    run = rng.exponential(3600, n).round() + 1
    header = Header()
    header.set("MaxProcs", 128)
    w = Workload.from_arrays(
        {
            "job_number": np.arange(1, n + 1),
            "submit_time": np.cumsum(rng.exponential(120, n)).round(),
            "run_time": run,
            "requested_time": run * rng.uniform(1, 10, n).round(),
            "requested_processors": 2 ** rng.integers(0, 5, n),
            "user_id": rng.integers(1, 21, n),
        },
        header=header,
    )
    schedlab.simulate(w, policy="psp", backfill="easy", progress=False)  # warm up
    began = time.perf_counter()
    for _ in range(repeat):
        schedlab.simulate(w, policy="psp", backfill="easy", progress=False)
    each = (time.perf_counter() - began) / repeat
    print(f"psp+easy on 1,000 jobs: {each * 1000:.1f} ms per run ({1 / each:.0f} runs/s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", default="KTH,LANL,RICC")
    parser.add_argument("--backfills", default="none,easy,conservative")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--against", help="baseline interpreter to compare with")
    parser.add_argument("--repeat", type=int, default=1, help="runs per interpreter (best kept)")
    args = parser.parse_args()
    if args.against:
        compare(args)
        return
    # Compile (or load) the conservative kernels once, so that no run below pays
    # numba's first compilation; each run still loads them (counted in total s,
    # not in sim s, the event loop).
    warm = subprocess.run([sys.executable, "-c", WARM], capture_output=True, text=True)
    if warm.returncode:
        print("numba not installed: conservative backfilling runs in Python")
    print(
        f"{'log':<6} {'backfill':<13} {'jobs':>8} {'sim s':>8} {'sim cpu':>8} {'total s':>8} "
        f"{'cpu s':>8} {'jobs/s':>9} {'peak MB':>8} {'mean wait s':>12}"
    )
    easy_time: dict[str, tuple[float, float]] = {}
    for log in args.logs.split(","):
        path = DATA / LOGS[log]
        for backfill in args.backfills.split(","):
            out = run_child(path, backfill, args.timeout)
            if out is None:
                print(f"{log:<6} {backfill:<13} timed out after {args.timeout:.0f} s")
                continue
            if backfill == "easy":
                easy_time[log] = (out["sim"], out["cpu"])
            ratio = ""
            if backfill == "conservative" and log in easy_time:
                sim, cpu = easy_time[log]
                ratio = f"  ({out['sim'] / sim:.1f}x EASY, cpu {out['cpu'] / cpu:.1f}x)"
            print(
                f"{log:<6} {backfill:<13} {out['jobs']:>8,} {out['sim']:>8.2f} "
                f"{out['simcpu']:>8.2f} {out['total']:>8.2f} {out['cpu']:>8.2f} "
                f"{out['jobs'] / out['sim']:>9,.0f} "
                f"{out['rss'] / 1e6:>8.0f} {out['mean_wait']:>12.0f}"
                f"{' [' + out['kernel'] + ']' if backfill != 'none' else ''}"
                f"{' [whole run]' if out['whole'] else ''}{ratio}",
                flush=True,
            )
    small_runs()


def compare(args: argparse.Namespace) -> None:
    """Every run with this interpreter and with ``args.against``, alternating."""
    for python in (sys.executable, args.against):
        subprocess.run(
            [python, "-c", WARM], capture_output=True, text=True, cwd=tempfile.gettempdir()
        )
    print(
        f"{'log':<6} {'backfill':<13} {'sim s':>8} {'base sim':>9} {'ratio':>6} "
        f"{'cpu s':>7} {'base cpu':>9} {'ratio':>6} {'jobs/s':>9} {'base jobs/s':>11} "
        f"{'MB':>5} {'base MB':>7}  same schedule"
    )
    for log in args.logs.split(","):
        path = DATA / LOGS[log]
        for backfill in args.backfills.split(","):
            best: dict[str, dict] = {}
            for _ in range(args.repeat):
                for label, python in (("new", sys.executable), ("base", args.against)):
                    out = run_child(path, backfill, args.timeout, python)
                    if out is None:
                        continue
                    old = best.get(label)
                    if old is None or out["cpu"] < old["cpu"]:
                        best[label] = out
            if len(best) < 2:
                print(f"{log:<6} {backfill:<13} timed out")
                continue
            new, base = best["new"], best["base"]
            same = abs(new["mean_wait"] - base["mean_wait"]) < 1e-6
            print(
                f"{log:<6} {backfill:<13} {new['sim']:>8.2f} {base['sim']:>9.2f} "
                f"{new['sim'] / base['sim']:>6.2f} {new['cpu']:>7.2f} {base['cpu']:>9.2f} "
                f"{new['cpu'] / base['cpu']:>6.2f} {new['jobs'] / new['sim']:>9,.0f} "
                f"{base['jobs'] / base['sim']:>11,.0f} {new['rss'] / 1e6:>5.0f} "
                f"{base['rss'] / 1e6:>7.0f}  {'yes' if same else 'NO'}",
                flush=True,
            )


if __name__ == "__main__":
    main()
