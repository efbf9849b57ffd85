"""Cost of one Gymnasium step (issue 19's target: under 50 microseconds on average
on KTH-SP2 windows of 256 jobs), against a plain ``simulate`` of the same windows,
in one run.

Run: .venv/bin/python benchmarks/bench_rl.py [--episodes 20] (needs the extra ``rl``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import schedlab
from schedlab.rl import SchedulingEnv

TRACE = Path(__file__).resolve().parents[2] / "shared/data/swf/KTH-SP2-1996-2.1-cln.swf.gz"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20)
    args = parser.parse_args()
    trace = schedlab.read(TRACE)
    env = SchedulingEnv(trace, episode_jobs=256, backfill="easy")
    steps = 0
    env_time = sim_time = 0.0
    for seed in range(args.episodes):
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
    print(f"{args.episodes} episodes of 256 KTH-SP2 jobs, {steps:,} steps")
    print(f"environment: {env_time:.3f} s, {env_time / steps * 1e6:.0f} us per step")
    print(f"plain simulate of the same windows: {sim_time:.3f} s")
    print(f"ratio environment / simulate: {env_time / sim_time:.1f}x")


if __name__ == "__main__":
    main()
