"""Multi-resource simulation speed: EASY and conservative backfilling on a
node-level platform against the single-pool simulator on the same log, in one run.

The platform is the log's machine cut into nodes: ``MaxProcs / cores`` nodes of
``--cores`` cores (default 8) with ``--memory`` each (default 12GiB, what a RICC
node had), shared (jobs take cores from any nodes, memory by SWF's requested
memory per processor). Issue 14's target: on RICC-2010 (447,794 jobs) each
node-level strategy within 3x of its single-pool time, peak memory under 1.5 GB.

Each run is its own process (its peak RSS is its own). ``sim s`` is the
simulation's wall time (``stats["wall_time_s"]``), ``sim cpu s`` its CPU time
(the engine's run, which the load of a shared machine inflates less), ``cpu s``
the CPU time of the whole ``simulate`` call (requests, output included);
``whole``: the strategy simulated the whole run in one call. ``--jobs N`` simulates only
the first N jobs of the log (for a quick look; the targets are on the whole log);
``--timeout`` stops a run that takes too long and reports it. ``--estimator``
runs both machines with a predictor (``easy++``, ``learned``: node-level EASY then
runs pass by pass on its compiled pass, corrections included); ``--sharing
exclusive`` gives the nodes to jobs whole (what ``schedlab platform infer`` writes
for an SWF log). ``--split S`` cuts the nodes into two partitions that share no node: jobs of at
most S processors (queue 1) on ``--split-share`` of the nodes (default 1/8),
the others (queue 2) on the rest; the pool runs the same log. ``--repeat N`` runs
the pair N times in N interleaved rounds (pool, nodes, pool, nodes, ...) and keeps
each machine's run of least simulation CPU (this 2-core machine's single runs move
by 20-40 %); the line ``rounds`` then lists every round's CPU ratio.

Run: .venv/bin/python benchmarks/bench_platform.py [--log RICC] [--jobs N]
     [--backfills easy,conservative] [--cores 8] [--memory 12GiB] [--timeout 1800]
     [--repeat 1] [--estimator requested] [--sharing shared] [--split 0]
     [--split-share 0.125]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from swf_logs import DATA, LOGS

CHILD = """
import json, sys, time, resource, schedlab
from schedlab.sim.engine import Engine
loop_cpu = []
engine_run = Engine.run
def timed_run(self):
    c = time.process_time()
    try:
        engine_run(self)
    finally:
        loop_cpu.append(time.process_time() - c)
Engine.run = timed_run
w = schedlab.read(sys.argv[1])
n = int(sys.argv[4])
if n:
    cols = w.to_arrays()
    import numpy as np
    w = schedlab.Workload(w.header, columns=cols.take(np.arange(min(n, len(cols)))))
split = int(sys.argv[6])
if split:  # queue 1: jobs of at most ``split`` processors, queue 2: the others
    cols = w.to_arrays()
    cols["queue_number"][:] = 2
    cols["queue_number"][cols["requested_processors"] <= split] = 1
    w = schedlab.Workload(w.header, columns=cols)
w.to_arrays()
platform = sys.argv[3] or None
procs = None if platform else w.header.machine_size()
cpu = time.process_time()
r = schedlab.simulate(w, backfill=sys.argv[2], procs=procs, platform=platform,
                      estimator=sys.argv[5], progress=False)
cpu = time.process_time() - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"sim": r.stats["wall_time_s"], "sim_cpu": loop_cpu[0], "cpu": cpu,
                  "jobs": len(r), "whole": r.stats.get("whole_run", False),
                  "peak": peak, "wait": float(r.workload.to_arrays()["wait_time"].mean())}))
"""


def run(
    python: str,
    log: Path,
    backfill: str,
    platform: str,
    jobs: int,
    timeout: float,
    estimator: str = "requested",
    split: int = 0,
) -> dict:
    """One simulation in a child process."""
    try:
        out = subprocess.run(
            [python, "-c", CHILD, str(log), backfill, platform, str(jobs), estimator, str(split)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    except subprocess.CalledProcessError as exc:
        return {"error": exc.stderr.strip().splitlines()[-1] if exc.stderr else "failed"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def best(results: list[dict]) -> dict:
    """The run of least simulation CPU (a failed or timed-out run only when all are)."""
    done = [r for r in results if "sim_cpu" in r]
    return min(done, key=lambda r: r["sim_cpu"]) if done else results[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", default="RICC", choices=sorted(LOGS))
    parser.add_argument("--jobs", type=int, default=0, help="first N jobs only (0: all)")
    parser.add_argument("--backfills", default="easy,conservative")
    parser.add_argument("--cores", type=int, default=8)
    parser.add_argument("--memory", default="12GiB")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--repeat", type=int, default=1, help="interleaved rounds (best kept)")
    parser.add_argument("--estimator", default="requested", help="e.g. easy++ or learned")
    parser.add_argument("--sharing", default="shared", choices=["shared", "exclusive"])
    parser.add_argument(
        "--split", type=int, default=0,
        help="two partitions: jobs of at most SPLIT processors on their own nodes",
    )  # fmt: skip
    parser.add_argument(
        "--split-share", type=float, default=0.125, help="the small jobs' share of the nodes"
    )
    args = parser.parse_args()
    import schedlab

    log = DATA / LOGS[args.log]
    procs = schedlab.read(log).header.machine_size() or 0
    nodes = -(-procs // args.cores)
    with tempfile.TemporaryDirectory() as tmp:
        platform = Path(tmp) / "platform.toml"
        if args.split:
            small = max(1, round(nodes * args.split_share))
            text = f'[platform]\nsharing = "{args.sharing}"\n'
            for name, count in (("small", small), ("large", nodes - small)):
                text += (
                    f"[node_groups.{name}]\ncount = {count}\ncores = {args.cores}\n"
                    f'memory = "{args.memory}"\n'
                )
            for name, queue in (("small", 1), ("large", 2)):
                text += f'[partitions.{name}]\nnodes = ["{name}"]\nqueues = ["{queue}"]\n'
            platform.write_text(text)
        else:
            platform.write_text(
                f'[platform]\nsharing = "{args.sharing}"\n[node_groups.node]\n'
                f'count = {nodes}\ncores = {args.cores}\nmemory = "{args.memory}"\n'
                '[partitions.all]\nnodes = ["node"]\n'
            )
        what = f"first {args.jobs:,} jobs of " if args.jobs else ""
        if args.split:
            what += f"(two partitions: jobs of <= {args.split} processors on {small:,} nodes) "
        print(
            f"{what}{args.log}: single pool of {procs:,} processors vs {nodes:,} nodes x "
            f"{args.cores} cores, {args.memory} each ({args.sharing}), "
            f"estimator {args.estimator}"
        )
        print(
            f"{'backfill':<14}{'machine':<10}{'sim s':>10}{'sim cpu s':>11}{'cpu s':>10}"
            f"{'peak MB':>9}{'mean wait s':>14}{'ratio':>8}{'cpu ratio':>10}{'whole':>7}"
        )
        for backfill in args.backfills.split(","):
            rounds = []
            for _ in range(max(1, args.repeat)):
                pair = (
                    run(
                        sys.executable, log, backfill, "", args.jobs, args.timeout,
                        args.estimator, args.split,
                    ),
                    run(
                        sys.executable, log, backfill, str(platform), args.jobs, args.timeout,
                        args.estimator, args.split,
                    ),
                )  # fmt: skip
                rounds.append(pair)
            base, nodal = (best([pair[k] for pair in rounds]) for k in (0, 1))
            for label, res in (("pool", base), ("nodes", nodal)):
                if "sim" not in res:
                    print(f"{backfill:<14}{label:<10}  {res}")
                    continue
                ratio = cpu_ratio = ""
                if label == "nodes" and "sim" in base and base["sim"] > 0:
                    ratio = f"{res['sim'] / base['sim']:.1f}x"
                    cpu_ratio = f"{res['sim_cpu'] / max(base['sim_cpu'], 1e-9):.1f}x"
                print(
                    f"{backfill:<14}{label:<10}{res['sim']:>10.2f}{res['sim_cpu']:>11.2f}"
                    f"{res['cpu']:>10.2f}{res['peak'] / 1e6:>9.0f}{res['wait']:>14,.0f}"
                    f"{ratio:>8}{cpu_ratio:>10}{'yes' if res['whole'] else 'no':>7}"
                )
            if len(rounds) > 1:
                ratios = [
                    f"{n['sim_cpu'] / max(b['sim_cpu'], 1e-9):.1f}x"
                    for b, n in rounds
                    if "sim_cpu" in b and "sim_cpu" in n
                ]
                print(f"{backfill:<14}rounds    cpu ratio per round: {', '.join(ratios)}")


if __name__ == "__main__":
    main()
