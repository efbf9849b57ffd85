"""The tree profile (``benchmarks/tree_profile_kernels.py``) against the array
profile of the compiled conservative kernels, on compressions captured from a real
run.

1. Runs FCFS + conservative backfilling (``kernel=compiled``) on one log and, every
   ``--every``-th pass that compresses, copies the profile and the queue (each
   waiting job's reservation, processors and estimate) as the kernels see them at
   the compression. Prints a digest of the run's start times.
2. Replays each captured compression on both profiles: the array kernels'
   ``compress`` (every screen, the kept first fits starting empty) and the tree's
   ``compress`` (a search per job past its O(1) screens), checking that both move
   the same jobs to the same starts and leave the same profile. CPU time of the
   compression calls only (best of ``--repeat``).
3. The profile operations in isolation on the captured profiles: for each queued
   job, a first-fit search from the start, the booking of the window found (two
   boundaries, a range add), and at the end the release of every window booked,
   each phase in one compiled loop, on both profiles.

Run: .venv/bin/python benchmarks/tree_profile_replay.py [--log RICC] [--every 200]
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import math
import sys
import time
from pathlib import Path

import numpy as np
import schedlab
from numba import njit
from schedlab.policies.backfill import kernels as arr
from swf_logs import DATA, LOGS

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tree_profile_kernels as tree


def capture(path: Path, every: int) -> tuple[list[tuple], int, str, float]:
    """Run the log and capture every ``every``-th compression; returns the
    snapshots, the machine's processors, the digest of the start times and the
    run's sim CPU."""
    snaps: list[tuple] = []
    original = arr.CompiledConservative.step
    passes = [0]
    procs = [0]

    def step(self, now, horizon, stale, new, positions, earliest=-math.inf):  # type: ignore[no-untyped-def]
        if not stale and horizon > now and self.meta[1] > 0:
            passes[0] += 1
            if passes[0] % every == 0:
                self.advance(now)
                if self.unsynced:
                    self.resync()
                n = int(self.meta[0])
                q = int(self.meta[1])
                shape = self.ints[arr.QUEUED_SHAPE][:q]
                snaps.append(
                    (
                        now,
                        horizon,
                        self.times[:n].copy(),
                        self.free[:n].copy(),
                        self.floats[arr.QUEUED_AT][:q].copy(),
                        self.ints[arr.SIZE][shape].copy(),
                        self.floats[arr.ESTIMATE][shape].copy(),
                    )
                )
        return original(self, now, horizon, stale, new, positions, earliest)

    arr.CompiledConservative.step = step
    try:
        workload = schedlab.read(path)
        result = schedlab.simulate(
            workload,
            policy="fcfs",
            backfill="conservative",
            progress=False,
            backfill_options={"kernel": "compiled"},
        )
    finally:
        arr.CompiledConservative.step = original
    a = result.workload.to_arrays()
    starts = np.asarray(a["submit_time"], float) + np.asarray(a["wait_time"], float)
    digest = hashlib.sha1(starts.tobytes()).hexdigest()[:12]
    return snaps, procs[0], digest, result.stats["cpu_time_s"]


def _shapes(size: np.ndarray, est: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shape ids per queue position, and each shape's processors and estimate."""
    pairs = np.stack([size.astype(np.float64), est])
    uniq, ids = np.unique(pairs, axis=1, return_inverse=True)
    return ids.astype(np.int64).ravel(), uniq[0].astype(np.int64), uniq[1].copy()


def _merged(times: np.ndarray, free: np.ndarray) -> list[tuple[float, int]]:
    out: list[tuple[float, int]] = []
    for t, f in zip(times.tolist(), free.tolist(), strict=True):
        if not out or out[-1][1] != f:
            out.append((t, f))
    return out


def replay_array(snap: tuple, procs: int) -> tuple[float, np.ndarray, list]:
    """One compression on the array kernels: CPU seconds, reservations, profile."""
    now, horizon, times, free, queued_at, size, est = snap
    q = len(queued_at)
    n = len(times)
    kernel = arr.CompiledConservative(q + n + 16, procs, now, size.tolist())
    for j in range(q):
        kernel.arrive(j, float(est[j]))
    kernel.times[:n] = times
    kernel.free[:n] = free
    kernel.meta[0] = n
    kernel.meta[4] = n
    kernel.reservation[:q] = queued_at
    kernel.set_queue(list(range(q)))
    kernel.resync()
    t0 = time.process_time()
    kernel.compress(now, horizon)
    cpu = time.process_time() - t0
    m = int(kernel.meta[0])
    return cpu, kernel.reservation[:q].copy(), _merged(kernel.times[:m], kernel.free[:m])


def replay_tree(snap: tuple, procs: int) -> tuple[float, np.ndarray, list]:
    """One compression on the tree: CPU seconds, reservations, profile."""
    now, horizon, times, free, queued_at, size, est = snap
    profile = tree.TreeProfile.from_slices(procs, times, free)
    profile._room(4 * len(queued_at) + 16)  # up to four new slices a move
    ids, sizes, ests = _shapes(size, est)
    seen_at = np.full(len(sizes), -1.0)
    seen_epoch = np.full(len(sizes), -1, dtype=np.int64)
    at = queued_at.copy()
    moved = np.zeros(len(at), dtype=np.int64)
    t0 = time.process_time()
    tree.compress(
        profile.key, profile.node, profile.meta, at, ids, sizes, ests, seen_at, seen_epoch,
        now, horizon, moved,
    )  # fmt: skip
    cpu = time.process_time() - t0
    slices = profile.slices()
    return cpu, at, _merged(np.array([t for t, _ in slices]), np.array([f for _, f in slices]))


@njit(cache=False)
def _array_fits(times, free, meta, size, est, ats):  # type: ignore[no-untyped-def]
    for j in range(size.shape[0]):
        ats[j] = arr.first_fit(times, free, meta, size[j], est[j])


@njit(cache=False)
def _array_add(times, free, meta, size, est, ats, sign):  # type: ignore[no-untyped-def]
    for j in range(size.shape[0]):
        arr.add(times, free, meta, ats[j], ats[j] + est[j], sign * size[j], True)


@njit(cache=False)
def _tree_fits(key, node, meta, size, est, ats):  # type: ignore[no-untyped-def]
    for j in range(size.shape[0]):
        ats[j] = tree.first_fit(key, node, meta, size[j], est[j])


@njit(cache=False)
def _gaps_and_slices(times, free, n, size, est):  # type: ignore[no-untyped-def]
    """The gaps each first fit rejects (too short) and the slices it passes, summed
    over the jobs (the same walk as ``Profile.first_fit``)."""
    gaps = 0
    passed = 0
    for j in range(size.shape[0]):
        s = size[j]
        start = 0.0
        inside = False
        for k in range(n):
            passed += 1
            if inside:
                if times[k] >= start + est[j]:
                    break
                if free[k] < s:
                    inside = False
                    gaps += 1
            elif free[k] >= s:
                start = times[k]
                inside = True
    return gaps, passed


@njit(cache=False)
def _tree_add(key, node, meta, size, est, ats, sign):  # type: ignore[no-untyped-def]
    for j in range(size.shape[0]):
        tree.add(key, node, meta, ats[j], ats[j] + est[j], sign * size[j])


def isolated(snaps: list[tuple], procs: int) -> dict[str, float]:
    """The three operations on both profiles, summed over the snapshots: every
    queued job's first fit on the captured profile (searches), then the same
    windows booked one after the other, then released (profiles compared)."""
    total = dict.fromkeys(["array fit", "array book", "array release"], 0.0)
    total.update(dict.fromkeys(["tree fit", "tree book", "tree release"], 0.0))
    ops = 0
    gaps = passed = 0
    for snap in snaps:
        _now, _h, times, free, _queued_at, size, est = snap
        size = size.astype(np.int64)
        n = len(times)
        q = len(size)
        ops += q
        cap = n + 2 * q + 16
        t = np.zeros(cap)
        f = np.zeros(cap, dtype=np.int64)
        t[:n] = times
        f[:n] = free
        meta = np.array([n, 0, 0, 0, n, 0, 0, -1], dtype=np.int64)
        arr._compact(t, f, meta)
        profile = tree.TreeProfile.from_slices(procs, times, free)
        profile._room(2 * q + 16)
        key, node, tmeta = profile.key, profile.node, profile.meta
        ats = np.zeros(q)
        ats2 = np.zeros(q)
        c = time.process_time()
        _array_fits(t, f, meta, size, est, ats)
        total["array fit"] += time.process_time() - c
        c = time.process_time()
        _tree_fits(key, node, tmeta, size, est, ats2)
        total["tree fit"] += time.process_time() - c
        assert np.array_equal(ats, ats2)
        g, p = _gaps_and_slices(t, f, int(meta[0]), size, est)
        gaps += g
        passed += p
        c = time.process_time()
        _array_add(t, f, meta, size, est, ats, -1)
        total["array book"] += time.process_time() - c
        c = time.process_time()
        _tree_add(key, node, tmeta, size, est, ats, -1)
        total["tree book"] += time.process_time() - c
        m = int(meta[0])
        assert _merged(t[:m], f[:m]) == _merged(*map(np.array, zip(*profile.slices(), strict=True)))
        c = time.process_time()
        _array_add(t, f, meta, size, est, ats, 1)
        total["array release"] += time.process_time() - c
        c = time.process_time()
        _tree_add(key, node, tmeta, size, est, ats, 1)
        total["tree release"] += time.process_time() - c
        m = int(meta[0])
        assert _merged(t[:m], f[:m]) == _merged(*map(np.array, zip(*profile.slices(), strict=True)))
    total["operations"] = float(ops)
    total["gaps"] = float(gaps)
    total["passed"] = float(passed)
    return total


def scaling(lengths: list[int], procs: int = 1024, jobs: int = 2000) -> None:
    """The three operations on synthetic profiles of ``lengths`` slices (random
    starts over a week, random free processors), ``jobs`` random jobs each: where
    the tree's O(log n) overtakes the array's O(n)."""
    rng = np.random.default_rng(17)
    print(f"synthetic profiles ({jobs:,} jobs each; ns per operation):")
    print("     slices  gaps a fit  array fit   tree fit   array book   tree book")
    for n in lengths:
        times = np.sort(rng.choice(np.arange(1, 50 * n), size=n - 1, replace=False).astype(float))
        times = np.concatenate([[0.0], times * (7 * 86400 / (50 * n))])
        free = rng.integers(0, procs + 1, size=n).astype(np.int64)
        free[-1] = procs
        size = rng.integers(1, procs // 4, size=jobs).astype(np.int64)
        est = rng.choice([600.0, 3600.0, 14400.0, 86400.0], size=jobs)
        snap = (0.0, 0.0, times, free, np.zeros(jobs), size, est)
        isolated([snap], procs)  # (compiled on the first call)
        res = isolated([snap], procs)
        ops = res["operations"]
        print(
            f"  {n:>9,} {res['gaps'] / ops:>11.1f} {res['array fit'] / ops * 1e9:>10.0f}"
            f" {res['tree fit'] / ops * 1e9:>10.0f}"
            f" {res['array book'] / ops * 1e9:>12.0f} {res['tree book'] / ops * 1e9:>11.0f}"
        )


def main() -> None:
    """Capture, replay, print."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", choices=sorted(LOGS), default="RICC")
    ap.add_argument("--every", type=int, default=200, help="capture every n-th compression")
    ap.add_argument("--repeat", type=int, default=3, help="replays per compression (best kept)")
    ap.add_argument(
        "--scaling", action="store_true", help="only the synthetic profiles of growing length"
    )
    args = ap.parse_args()
    if args.scaling:
        scaling([250, 1000, 4000, 16000, 64000, 256000])
        return
    snaps, procs, digest, simcpu = capture(DATA / LOGS[args.log], args.every)
    procs = max(procs, max(int(s[3].max()) for s in snaps))
    print(f"{args.log}: starts sha1 {digest}, sim cpu {simcpu:.2f} s (with the captures)")
    print(f"{len(snaps)} compressions captured (every {args.every}th)")
    print(
        f"  mean profile slices {np.mean([len(s[2]) for s in snaps]):,.0f}, "
        f"mean queue {np.mean([len(s[4]) for s in snaps]):,.0f}"
    )
    # compile both before timing
    replay_array(snaps[0], procs)
    replay_tree(snaps[0], procs)
    a_cpu = t_cpu = 0.0
    moves = 0
    rows = []
    for snap in snaps:
        best_a = best_t = math.inf
        for _ in range(args.repeat):
            ca, ra, pa = replay_array(snap, procs)
            ct, rt, pt = replay_tree(snap, procs)
            best_a = min(best_a, ca)
            best_t = min(best_t, ct)
        same = np.array_equal(ra, rt, equal_nan=True)
        assert same, "the two compressions disagree"
        assert pa == pt, "the two profiles disagree"
        moves += int(np.sum(ra != snap[4]))
        a_cpu += best_a
        t_cpu += best_t
        rows.append((len(snap[2]), best_a, best_t))
    print(f"compressions replayed: identical reservations and profiles; {moves:,} jobs moved")
    print(f"  array kernels' compress: {a_cpu:8.3f} s CPU")
    print(f"  tree compress:           {t_cpu:8.3f} s CPU  ({t_cpu / a_cpu:.2f}x)")
    print("  by profile length (slices): compressions, array s, tree s")
    bounds = [0, 250, 1000, 4000, 16000, math.inf]
    for lo, hi in itertools.pairwise(bounds):
        part = [r for r in rows if lo <= r[0] < hi]
        if part:
            a = sum(r[1] for r in part)
            t = sum(r[2] for r in part)
            ratio = t / max(a, 1e-9)
            print(f"    [{lo:>6}, {hi:>6}): {len(part):>5} {a:8.3f} {t:8.3f}  ({ratio:.2f}x)")
    iso = isolated(snaps[:1], procs)  # compile
    iso = isolated(snaps, procs)
    ops = iso.pop("operations")
    gaps = iso.pop("gaps")
    passed = iso.pop("passed")
    print(f"operations in isolation ({ops:,.0f} of each; ns per operation):")
    print(f"  (a first fit rejects {gaps / ops:.1f} gaps and passes {passed / ops:.0f} slices)")
    for what in ("fit", "book", "release"):
        a = iso[f"array {what}"] / ops * 1e9
        t = iso[f"tree {what}"] / ops * 1e9
        print(f"  {what:<8} array {a:9.0f}   tree {t:9.0f}   ({t / a:.2f}x)")


if __name__ == "__main__":
    main()
