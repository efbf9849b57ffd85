"""Whole-process overhead of ``schedlab simulate``: how much of a command's time is
spent outside the simulation itself.

The command measured (default): ``schedlab simulate KTH-SP2 --backfill
conservative -o OUT`` (the summary and metrics tables printed, as a user runs it),
run ``--repeat`` times in fresh processes after one
warm-up run (so Python's bytecode cache and numba's on-disk kernel cache are warm,
as for a user's second run). Three tables, all from this one run:

1. whole process: wall and CPU time (user + sys of the child) against the
   simulation's event loop (``stats["wall_time_s"]``), best of the repeats, and the
   difference (the target: within 0.15 s); then ("run w-s", "run c-s") the best
   of each run's own differences, wall minus the loop's wall and CPU minus the
   loop's CPU (``stats["cpu_time_s"]``): steadier under load, where the best
   wall, CPU and loop times may come from different runs;
2. phases: the same command in one process with its steps timed (wall and CPU):
   interpreter start and ``schedlab.cli`` import, reading the trace, preparing the
   run (components, job table, kernels), the event loop, the output workload,
   writing the schedule, the metrics, printing, and the interpreter's exit after
   the last line (wall time only, seen from the parent);
3. imports: ``python -X importtime`` of the command, the modules costing most
   (self time, and cumulative time of top-level packages).

The children run without ``PYTHONDONTWRITEBYTECODE`` (some sandboxes set it: every
run would then compile every module again, ~0.3 s of CPU, which no installed
schedlab pays).

Run: .venv/bin/python benchmarks/bench_process.py [--log KTH] [--backfill conservative]
     [--repeat 5] [--against /path/to/other/.venv/bin/python]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from swf_logs import DATA, LOGS

#: The summary table's row "simulation time | 0.123 s (0.120 s CPU)"
#: (stats["wall_time_s"], stats["cpu_time_s"]).
SIM_TIME = re.compile(r"simulation time\W+([0-9.]+) s(?: \(([0-9.]+) s CPU\))?")

# The command in one process, its steps timed by wrapping the functions the CLI
# calls (looked up at call time, so the wrappers are seen).
PHASES = r"""
import json, sys, time
t0w, t0c = float(sys.argv[1]), 0.0
marks = []
def mark(name):
    marks.append((name, time.perf_counter(), time.process_time()))
import schedlab.cli
mark("start + import cli")
# What main() does before anything imports numpy (one BLAS thread), if it does.
getattr(schedlab.cli, "_one_blas_thread", lambda: None)()
import schedlab.api as api, schedlab.sim.runner as runner, schedlab.sim.engine as engine
real_read, real_write = api.read, api.write
def read(*a, **k):
    mark("command: parse options, imports")
    out = real_read(*a, **k); mark("read trace"); return out
def write(*a, **k):
    mark("metrics, result")
    out = real_write(*a, **k); mark("write schedule"); return out
api.read, api.write = read, write
real_run = engine.Engine.run
def run(self):
    mark("prepare run (components, table, kernels)")
    out = real_run(self); mark("event loop"); return out
engine.Engine.run = run
real_build = runner.build_result
def build(*a, **k):
    out = real_build(*a, **k); mark("output workload, stats"); return out
runner.build_result = build
sys.argv = ["schedlab", *sys.argv[2:]]
try:
    schedlab.cli.main()
except SystemExit:
    pass
mark("metrics, print")
print("PHASES " + json.dumps(marks), file=sys.stderr)
print("END " + repr(time.time()), file=sys.stderr, flush=True)
"""


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def command(log: str, backfill: str, out: str) -> list[str]:
    return ["simulate", str(DATA / LOGS[log]), "--backfill", backfill, "-o", out]


def whole_process(python: str, args: list[str]) -> tuple[float, float, float, float]:
    """(wall, cpu, simulation loop's wall, its CPU) of one run of the CLI in a fresh
    process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(
        [python, "-c", "import schedlab.cli; schedlab.cli.main()", *args],
        capture_output=True,
        text=True,
        check=True,
        env=child_env(),
        cwd=tempfile.gettempdir(),
    )
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    found = SIM_TIME.search(done.stdout)
    if found is None:
        raise SystemExit(f"no simulation time in the output:\n{done.stdout}")
    loop = float(found.group(1))
    return wall, cpu, loop, float(found.group(2) or loop)


def phases(python: str, args: list[str]) -> list[tuple[str, float, float]]:
    done = subprocess.run(
        [python, "-c", PHASES, "0", *args],
        capture_output=True,
        text=True,
        check=True,
        env=child_env(),
        cwd=tempfile.gettempdir(),
    )
    ended = time.time()
    line = next(x for x in done.stderr.splitlines() if x.startswith("PHASES "))
    marks = json.loads(line[len("PHASES ") :])
    last = next(x for x in done.stderr.splitlines() if x.startswith("END "))
    out = []
    last_wall, last_cpu = None, 0.0
    for name, wall, cpu in marks:
        # The first step starts with the interpreter: its CPU time is the
        # process's CPU so far; its wall time is not known from inside.
        out.append(
            (name, wall - last_wall if last_wall is not None else float("nan"), cpu - last_cpu)
        )
        last_wall, last_cpu = wall, cpu
    # From the last line to the parent seeing the child gone: the interpreter's
    # finalisation (wall only; its CPU is not seen from inside).
    out.append(("exit (finalisation; wall only)", ended - float(last.split()[1]), float("nan")))
    return out


def import_table(python: str, args: list[str], top: int) -> list[tuple[int, int, str]]:
    done = subprocess.run(
        [python, "-X", "importtime", "-c", "import schedlab.cli; schedlab.cli.main()", *args],
        capture_output=True,
        text=True,
        check=True,
        env=child_env(),
        cwd=tempfile.gettempdir(),
    )
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        parts = line[len("import time:") :].split("|")
        self_us, cumulative, name = int(parts[0]), int(parts[1]), parts[2].rstrip()
        rows.append((self_us, cumulative, name))
    total = sum(r[0] for r in rows)
    print(f"\nimports: {len(rows)} modules, {total / 1e3:.0f} ms in all (self times)")
    print(f"{'self ms':>8} {'cumul ms':>9}  module")
    for self_us, cumulative, name in sorted(rows, reverse=True)[:top]:
        print(f"{self_us / 1e3:8.1f} {cumulative / 1e3:9.1f}  {name.strip()}")
    tops = [r for r in rows if not r[2].startswith("  ")]
    print(f"\n{'cumul ms':>9}  top-level import")
    for _, cumulative, name in sorted(tops, key=lambda r: -r[1])[:top]:
        print(f"{cumulative / 1e3:9.1f}  {name.strip()}")
    return rows


def report(python: str, label: str, args: list[str], repeat: int) -> tuple[float, float, float]:
    whole_process(python, args)  # warm-up: bytecode and numba caches
    best_wall = best_cpu = best_sim = float("inf")
    # Also the best of each run's own differences: under load the best wall, CPU
    # and loop times may come from different runs.
    own_wall = own_cpu = float("inf")
    for _ in range(repeat):
        wall, cpu, sim, sim_cpu = whole_process(python, args)
        best_wall = min(best_wall, wall)
        best_cpu = min(best_cpu, cpu)
        best_sim = min(best_sim, sim)
        own_wall = min(own_wall, wall - sim)
        own_cpu = min(own_cpu, cpu - sim_cpu)
    print(
        f"{label:<10} {best_wall:9.3f} {best_cpu:9.3f} {best_sim:9.3f} "
        f"{best_wall - best_sim:12.3f} {best_cpu - best_sim:12.3f} {own_wall:9.3f} {own_cpu:9.3f}"
    )
    return best_wall, best_cpu, best_sim


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", default="KTH", choices=sorted(LOGS))
    parser.add_argument("--backfill", default="conservative")
    parser.add_argument("--repeat", type=int, default=5, help="runs (best kept)")
    parser.add_argument("--top", type=int, default=15, help="rows of the import table")
    parser.add_argument("--against", help="baseline interpreter to compare with")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cli_args = command(args.log, args.backfill, str(Path(tmp) / "out.swf"))
        print(
            f"schedlab simulate {args.log} --backfill {args.backfill} -o OUT: "
            f"best of {args.repeat} fresh processes (after a warm-up run)"
        )
        print(
            f"{'':<10} {'wall s':>9} {'cpu s':>9} {'sim s':>9} {'wall - sim':>12} "
            f"{'cpu - sim':>12} {'run w-s':>9} {'run c-s':>9}"
        )
        mine = report(sys.executable, "this", cli_args, args.repeat)
        if args.against:
            base = report(args.against, "baseline", cli_args, args.repeat)
            print(
                f"{'ratio':<10} {mine[0] / base[0]:9.2f} {mine[1] / base[1]:9.2f} "
                f"{mine[2] / base[2]:9.2f} {(mine[0] - mine[2]) / (base[0] - base[2]):12.2f} "
                f"{(mine[1] - mine[2]) / (base[1] - base[2]):12.2f}"
            )
        order = "this, then baseline" if args.against else "this"
        print(f"\nphases of one run in one process ({order})")
        for python in [sys.executable, *([args.against] if args.against else [])]:
            print(f"{'step':<44} {'wall ms':>8} {'cpu ms':>8}")
            for name, wall, cpu in phases(python, cli_args):
                shown = "-" if wall != wall else f"{wall * 1e3:8.0f}"
                shown_cpu = "-" if cpu != cpu else f"{cpu * 1e3:8.0f}"
                print(f"{name:<44} {shown:>8} {shown_cpu:>8}")
        import_table(sys.executable, cli_args, args.top)


if __name__ == "__main__":
    main()
