"""Agents on schedlab's Gymnasium environment, next to the classic policies.

A random agent and a greedy one (shortest estimate first among the waiting jobs)
each play a few episodes of 256 KTH-SP2 jobs; every episode's window is then
replayed with fcfs+easy and sjf+easy, and the mean bounded slowdowns are printed
side by side. Nothing is trained: this shows the interface.

Run: .venv/bin/python examples/rl_baselines.py [TRACE] (needs the extra ``rl``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import schedlab
from schedlab.rl import SchedulingEnv

TRACE = Path(__file__).resolve().parents[2] / "shared/data/swf/KTH-SP2-1996-2.1-cln.swf.gz"


def bsld(result: schedlab.Result) -> float:
    """Mean bounded slowdown (10 s threshold)."""
    cols = result.workload.to_arrays()
    wait, run = cols["wait_time"], cols["run_time"]
    return float(np.maximum((wait + run) / np.maximum(run, 10.0), 1.0).mean())


def play(env: SchedulingEnv, seed: int, agent: str) -> schedlab.Result:
    """One episode; returns its schedule."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    done, info = False, {}
    while not done:
        waiting = int(obs["mask"].sum())
        if agent == "random":
            action = int(rng.integers(0, max(waiting, 1)))
        else:  # greedy: the shortest estimate among the waiting rows
            action = int(np.argmin(obs["jobs"][:waiting, 1])) if waiting else 0
        obs, _, done, _, info = env.step(action)
    return info["result"]


def main() -> None:
    trace = schedlab.read(sys.argv[1] if len(sys.argv) > 1 else TRACE)
    env = SchedulingEnv(trace, episode_jobs=256, backfill="easy")
    print(f"{'episode':>8}{'random':>10}{'greedy':>10}{'fcfs+easy':>11}{'sjf+easy':>10}")
    for seed in range(5):
        random_run = play(env, seed, "random")
        greedy_run = play(env, seed, "greedy")
        window = env.episode  # the same window for both agents (same seed)
        fcfs = schedlab.simulate(window, policy="fcfs", backfill="easy", progress=False)
        sjf = schedlab.simulate(window, policy="sjf", backfill="easy", progress=False)
        print(
            f"{seed:>8}{bsld(random_run):>10.1f}{bsld(greedy_run):>10.1f}"
            f"{bsld(fcfs):>11.1f}{bsld(sjf):>10.1f}"
        )


if __name__ == "__main__":
    main()
