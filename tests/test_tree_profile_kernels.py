"""The tree profile (``benchmarks/tree_profile_kernels.py``, numba, an experiment
kept beside its benchmark, not part of the package): the same slices, first fits
and earlier starts as
:class:`schedlab.sim.profile.Profile` and the array kernels of
:mod:`schedlab.policies.backfill.kernels` under random bookings, releases and
advances, and the same compressions (moves and profile) as the array kernels'
``compress`` on random queues, small and mid-size with job arrays."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.sim.profile import Profile

pytest.importorskip("numba", reason="numba is not installed")
from schedlab.policies.backfill import kernels as arr

KERNELS = Path(__file__).resolve().parent.parent / "benchmarks" / "tree_profile_kernels.py"


def _load_tree():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("tree_profile_kernels", KERNELS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Registered under its own name, as the benchmark imports it, so numba's cached
    # kernels name a module that can be imported again.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


tree = _load_tree()


def _merged(slices: list[tuple[float, int]]) -> list[tuple[float, int]]:
    out: list[tuple[float, int]] = []
    for t, f in slices:
        if not out or out[-1][1] != f:
            out.append((t, f))
    return out


@settings(max_examples=300, deadline=None)
@given(
    procs=st.integers(1, 12),
    ops=st.lists(
        st.tuples(st.integers(0, 60), st.integers(1, 40), st.integers(1, 12), st.integers(0, 3)),
        max_size=40,
    ),
    probes=st.lists(
        st.tuples(st.integers(1, 12), st.integers(1, 50), st.integers(0, 90), st.integers(0, 90)),
        max_size=8,
    ),
)
def test_tree_profile_agrees_with_profile_and_the_array_kernels(
    procs: int, ops: list[tuple[int, int, int, int]], probes: list[tuple[int, int, int, int]]
) -> None:
    """Bookings at the first fit, partial and whole releases and advances leave
    exactly the slices of :class:`Profile` (both merge equal slices at the ends of
    each change) and the free processors of the array kernels; first fits (of all
    three), earlier starts and the most free before an instant agree."""
    python = Profile(procs, 0.0)
    t = tree.TreeProfile(procs, 0.0, capacity=4)  # grows
    kernel = arr.CompiledConservative(64, procs, 0.0, [1] * 64)
    now = 0.0
    booked: list[tuple[float, float, int]] = []
    for start, length, size, kind in ops:
        if kind == 0:
            now = max(now, float(start) / 2)
            python.advance(now)
            t.advance(now)
            kernel.advance(now)
        elif kind == 3 and booked:  # give back a whole booking
            at, end, s = booked.pop(start % len(booked))
            python.release(at, end, s)
            t.release(at, end, s)
            arr.add(kernel.times, kernel.free, kernel.meta, at, end, s, True)
        else:
            s = min(size, procs)
            at = python.first_fit(s, float(length))
            assert t.first_fit(s, float(length)) == at
            assert arr.first_fit(kernel.times, kernel.free, kernel.meta, s, float(length)) == at
            python.reserve(at, at + length, s, True)
            t.reserve(at, at + length, s)
            arr.add(kernel.times, kernel.free, kernel.meta, at, at + length, -s, True)
            booked.append((at, at + length, s))
            if kind == 2:  # give part of it back (before the present too)
                lo = at - start / 4
                python.release(lo, at + length / 2, s)
                t.release(lo, at + length / 2, s)
                arr.add(kernel.times, kernel.free, kernel.meta, lo, at + length / 2, s, True)
        assert t.slices() == list(zip(python.times, python.free, strict=True))
        assert _merged(t.slices()) == _merged(kernel.slices())
    for size, d, current, limit in probes:
        s = min(size, procs)
        assert t.first_fit(s, float(d)) == python.first_fit(s, float(d))
        assert t.first_fit(s, float(d)) == arr.first_fit(
            kernel.times, kernel.free, kernel.meta, s, float(d)
        )
        assert t.first_start_before(s, float(d), float(current), float(limit)) == (
            python.first_start_before(s, float(d), float(current), float(limit))
        )
        assert t.max_free_before(float(limit)) == python.max_free_before(float(limit))


def _compare_compressions(
    procs: int,
    running: list[tuple[int, float]],
    queued: list[tuple[int, float]],
    ends: list[int],
    now: float,
) -> int:
    """Build the same state on both profiles (running jobs from 0, queued jobs
    placed in order), end the running jobs ``ends`` (indices, modulo) early at
    ``now``, compress both and compare; return how many jobs moved."""
    q = len(queued)
    kernel = arr.CompiledConservative(q + 2 * len(running) + 8, procs, 0.0, [s for s, _ in queued])
    for s, d in running:
        arr.add(kernel.times, kernel.free, kernel.meta, 0.0, d, -s, True)
    for j, (_, d) in enumerate(queued):
        kernel.arrive(j, d)
    for j in range(q):
        kernel.place(j)
    kernel.set_queue(list(range(q)))
    kernel.resync()
    slices = kernel.slices()
    profile = tree.TreeProfile.from_slices(
        procs, np.array([x for x, _ in slices]), np.array([f for _, f in slices])
    )
    horizon = -np.inf
    for k in sorted({k % len(running) for k in ends}):
        s, d = running[k]
        if now < d:
            kernel.finish(now, d, s)
            profile.advance(now)
            profile.release(now, d, s)
            horizon = max(horizon, d)
    kernel.advance(now)
    profile.advance(now)
    before = kernel.reservation[:q].copy()
    moved = kernel.compress(now, horizon)

    sizes = np.array([s for s, _ in queued], dtype=np.int64)
    estimates = np.array([d for _, d in queued])
    at = before.copy()
    profile._room(4 * q + 16)
    count = tree.compress(
        profile.key, profile.node, profile.meta, at, np.arange(q), sizes, estimates,
        np.full(q, -1.0), np.full(q, -1, dtype=np.int64), now, horizon, np.zeros(q, np.int64),
    )  # fmt: skip
    assert count == moved
    assert at.tolist() == kernel.reservation[:q].tolist()
    assert _merged(profile.slices()) == _merged(kernel.slices())
    return moved


@settings(max_examples=300, deadline=None)
@given(
    procs=st.integers(1, 10),
    running=st.lists(st.tuples(st.integers(1, 10), st.integers(1, 60)), min_size=1, max_size=6),
    queued=st.lists(st.tuples(st.integers(1, 10), st.integers(1, 40)), max_size=14),
    ends=st.lists(st.integers(0, 5), min_size=1, max_size=3),
    now=st.integers(0, 30),
)
def test_tree_compress_agrees_with_the_array_kernels(
    procs: int,
    running: list[tuple[int, int]],
    queued: list[tuple[int, int]],
    ends: list[int],
    now: int,
) -> None:
    """After early ends, the tree's compression moves the same jobs to the same
    starts as the array kernels' (every screen and kept fit) and leaves the same
    free processors."""
    running_ = [(min(s, procs), float(d)) for s, d in running]
    queued_ = [(min(s, procs), float(d)) for s, d in queued]
    _compare_compressions(procs, running_, queued_, ends, float(now))


@pytest.mark.parametrize("seed", range(4))
def test_tree_compress_on_mid_size_queues_with_job_arrays(seed: int) -> None:
    """Long queues with runs of identical jobs (job arrays), as on real logs."""
    rng = np.random.default_rng(seed)
    procs = 128
    running = [
        (int(rng.choice([1, 4, 16, 32])), float(rng.choice([600, 3600, 7200]))) for _ in range(12)
    ]
    queued: list[tuple[int, float]] = []
    while len(queued) < 300:
        shape = (int(rng.choice([1, 2, 8, 16, 64])), float(rng.choice([60, 600, 3600, 86400])))
        queued.extend([shape] * int(rng.choice([1, 1, 5, 20])))
    ends = [int(k) for k in rng.choice(len(running), size=4, replace=False)]
    assert _compare_compressions(procs, running, queued, ends, 300.0) > 0
