"""Cost of one Gymnasium step (issue 19's target: under 50 microseconds on average
on KTH-SP2 windows of 256 jobs), against a plain ``simulate`` of the same windows,
in one run.

Both hand-overs of the stepping simulation are measured in the same run: the
greenlet (the default when installed) and the worker thread
(``SCHEDLAB_STEPPING=thread``).

Run: .venv/bin/python benchmarks/bench_rl.py [--episodes 20] (needs the extra ``rl``).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import schedlab
from schedlab.rl import SchedulingEnv

TRACE = Path(__file__).resolve().parents[2] / "shared/data/swf/KTH-SP2-1996-2.1-cln.swf.gz"


def episodes(trace: schedlab.Workload, count: int) -> tuple[int, float, float]:
    """Steps, environment seconds and plain-simulate seconds over ``count`` episodes."""
    env = SchedulingEnv(trace, episode_jobs=256, backfill="easy")
    steps = 0
    env_time = sim_time = 0.0
    for seed in range(count):
        env.reset(seed=seed)
        began = time.perf_counter()
        done = False
        while not done:
            _, _, done, _, _ = env.step(0)
            steps += 1
        env_time += time.perf_counter() - began
        began = time.perf_counter()
        schedlab.simulate(env.episode, backfill="easy", progress=False)
        sim_time += time.perf_counter() - began
    return steps, env_time, sim_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20)
    args = parser.parse_args()
    trace = schedlab.read(TRACE)
    rows = []
    for link in ("greenlet", "thread"):
        # The stepping simulation reads SCHEDLAB_STEPPING when it is created.
        os.environ["SCHEDLAB_STEPPING"] = link
        rows.append((link, *episodes(trace, args.episodes)))
    os.environ.pop("SCHEDLAB_STEPPING")
    steps = rows[0][1]
    print(f"{args.episodes} episodes of 256 KTH-SP2 jobs, {steps:,} steps")
    print(f"{'hand-over':<11}{'us per step':>12}{'env s':>9}{'simulate s':>12}{'env/simulate':>14}")
    for link, n, env_time, sim_time in rows:
        print(
            f"{link:<11}{env_time / n * 1e6:>12.0f}{env_time:>9.3f}{sim_time:>12.3f}"
            f"{env_time / sim_time:>13.1f}x"
        )
    print(f"greenlet / thread per step: {rows[0][2] / rows[1][2]:.2f}x")


if __name__ == "__main__":
    main()
