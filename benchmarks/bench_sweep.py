"""Sweep speed: ``schedlab sweep`` over 1,000 seeds of ``psp-fing:jobs=1000`` with
FCFS + EASY, end to end (a fresh process: start, imports, workers, runs, cell files,
``results.csv`` and ``results.json``), against the same 1,000 runs made one by one
in one process (``run_cell`` in a loop, nothing written) as the baseline measured in
the same run.

Target (issue 17, 2-core machine): the whole command in under 20 s, its table byte
for byte the table of the runs made one by one.

Printed, one run:

* ``one by one``: the baseline, wall and CPU seconds, and its time per run split
  into generation (``schedlab.read`` of the spec), simulation, metrics, and the
  rest of ``run_cell`` (rows) over the first ``--phases`` runs;
* ``process``: ``schedlab --help`` (interpreter start and the CLI's imports);
* ``sweep``: the command, wall and CPU (the command and its workers), the seconds
  ``run_sweep`` reported, and the ratio to the baseline's wall time; the table is
  compared with the baseline's, byte for byte;
* ``resume``: the same command again (every cell finished: reading 1,000 cell files
  and writing the tables), the I/O share of the sweep.

The machine is shared: the load average is printed before and after, and CPU times
next to wall times (a ratio near 1.0 with two workers means the second core was busy
with someone else's work).

With ``--against PYTHON`` (the interpreter of another installation, e.g. the main
checkout's venv before a change), the sweep and resume lines are measured with both
interpreters, alternating, best of ``--repeat``.

Run: .venv/bin/python benchmarks/bench_sweep.py [--runs 1000] [--jobs 1000]
     [--workers N] [--against /path/to/other/.venv/bin/python] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 20.0

BASELINE = """
import json, sys, time
began = time.perf_counter()
cpu = time.process_time()
import schedlab
from schedlab.experiment.config import SweepConfig
from schedlab.experiment.sweep import run_cell, write_table
from schedlab.measure import compute_metrics
runs, jobs, phases, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
cells = SweepConfig(workloads=[f"psp-fing:jobs={jobs}"], seeds=list(range(1, runs + 1))).cells()
run_cell(cells[0])  # imports and first-call costs, as a warm worker has paid them
split = {"generation": 0.0, "simulation": 0.0, "metrics": 0.0, "run_cell": 0.0}
for cell in cells[:phases]:
    t0 = time.perf_counter()
    workload = schedlab.read(cell.source())
    t1 = time.perf_counter()
    result = schedlab.simulate(workload, policy=cell.policy, backfill=cell.backfill,
                               progress=False)
    t2 = time.perf_counter()
    compute_metrics(result)
    t3 = time.perf_counter()
    run_cell(cell)
    t4 = time.perf_counter()
    split["generation"] += t1 - t0
    split["simulation"] += t2 - t1
    split["metrics"] += t3 - t2
    split["run_cell"] += t4 - t3
loop = time.perf_counter()
loop_cpu = time.process_time()
rows = [row for cell in cells for row in run_cell(cell)["rows"]]
loop = time.perf_counter() - loop
loop_cpu = time.process_time() - loop_cpu
write_table(rows, out)
print(json.dumps({"loop": loop, "loop_cpu": loop_cpu, "split": split, "phases": phases,
                  "total": time.perf_counter() - began}))
"""


def children_cpu() -> float:
    """CPU seconds of every finished child process so far (user + system)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], cwd: str) -> tuple[float, float, str]:
    """Run ``command``; return its wall and CPU seconds and its standard output."""
    cpu = children_cpu()
    began = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - began
    if done.returncode:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr}")
    return wall, children_cpu() - cpu, done.stdout


def sweep_command(python: str, args: argparse.Namespace, out: Path) -> list[str]:
    command = [python, "-m", "schedlab", "sweep", "-w", f"psp-fing:jobs={args.jobs}"]
    command += ["--seeds", f"1-{args.runs}", "-p", "fcfs", "-b", "easy"]
    command += ["--out", str(out), "--no-progress"]
    if args.workers:
        command += ["--workers", str(args.workers)]
    return command


def sweep(python: str, args: argparse.Namespace, work: Path, name: str) -> dict[str, float]:
    """One fresh sweep and one resumed sweep with ``python``; its table's bytes."""
    out = work / name
    shutil.rmtree(out, ignore_errors=True)
    wall, cpu, stdout = timed(sweep_command(python, args, out), str(work))
    reported = re.search(r"; ([0-9.]+) s", stdout)
    again, again_cpu, _ = timed(sweep_command(python, args, out), str(work))
    return {
        "wall": wall,
        "cpu": cpu,
        "run_sweep": float(reported.group(1)) if reported else float("nan"),
        "resume": again,
        "resume_cpu": again_cpu,
        "table": (out / "results.csv").read_bytes(),  # type: ignore[dict-item]
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="seeds (simulations)")
    parser.add_argument("--jobs", type=int, default=1000, help="jobs per workload")
    parser.add_argument("--phases", type=int, default=100, help="runs timed phase by phase")
    parser.add_argument("--workers", type=int, help="the sweep's --workers (default: cores)")
    parser.add_argument("--against", help="baseline interpreter to compare the sweep with")
    parser.add_argument("--repeat", type=int, default=1, help="sweeps per interpreter (best)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        work = Path(tmp)
        # One by one, in one process: the baseline.
        base_table = work / "one-by-one.csv"
        wall, _cpu, stdout = timed(
            [
                sys.executable,
                "-c",
                BASELINE,
                str(args.runs),
                str(args.jobs),
                str(args.phases),
                str(base_table),
            ],
            tmp,
        )
        base = json.loads(stdout.strip().splitlines()[-1])
        per = {k: v / base["phases"] * 1e3 for k, v in base["split"].items()}
        rows_ms = per["run_cell"] - per["generation"] - per["simulation"] - per["metrics"]
        print(
            f"one by one   {args.runs} runs: loop {base['loop']:.2f} s "
            f"(cpu {base['loop_cpu']:.2f} s, {base['loop'] / args.runs * 1e3:.2f} ms per run); "
            f"process {wall:.2f} s"
        )
        print(
            f"  per run (first {base['phases']}): generation {per['generation']:.2f} ms, "
            f"simulation {per['simulation']:.2f} ms, metrics {per['metrics']:.2f} ms, "
            f"rows {max(rows_ms, 0.0):.2f} ms; run_cell {per['run_cell']:.2f} ms"
        )
        help_wall, _, _ = timed([sys.executable, "-m", "schedlab", "--help"], tmp)
        print(f"process      schedlab --help: {help_wall:.2f} s")
        pythons = [("this", sys.executable)]
        if args.against:
            pythons.append(("against", args.against))
        best: dict[str, dict[str, float]] = {}
        for _ in range(args.repeat):
            for label, python in pythons:
                out = sweep(python, args, work, label)
                if label not in best or out["wall"] < best[label]["wall"]:
                    best[label] = out
        for label, _python in pythons:
            out = best[label]
            same = out["table"] == base_table.read_bytes()
            verdict = "OK" if out["wall"] < TARGET_S else "over"
            print(
                f"sweep  {label:<8} wall {out['wall']:.2f} s (cpu {out['cpu']:.2f} s, "
                f"run_sweep {out['run_sweep']:.1f} s), {out['wall'] / base['loop']:.2f}x "
                f"one by one, target < {TARGET_S:.0f} s: {verdict}; "
                f"table {'identical' if same else 'DIFFERENT'} to one by one"
            )
            print(f"resume {label:<8} wall {out['resume']:.2f} s (cpu {out['resume_cpu']:.2f} s)")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
