"""The fast conservative compression, in Python and on the compiled kernels
(``policies/backfill/kernels.py`` and ``compiled.py``), gives exactly the schedules
and reservation histories of the reference implementation (``ReferenceConservative``
in ``policies/backfill/reference.py``: the original compression and timers), on
random workloads (hypothesis) and on the start of real logs, and the profile's
one-walk searches agree with the original ones. Tests of the compiled kernels alone
are in ``test_sim_conservative_compiled.py``."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedlab.model import Header, Workload
from schedlab.policies.backfill import compression as engine_module
from schedlab.sim.profile import Profile
from workload_rows import workload_from_rows


@st.composite
def workloads(draw: Any) -> Workload:
    """Random workloads, with job arrays (runs of identical jobs) and estimates that
    are often far above the run time, so that compression has work to do."""
    procs = draw(st.integers(1, 16))
    rows = []
    submit = 0
    while len(rows) < draw(st.integers(1, 40)):
        submit += draw(st.integers(0, 20))
        size = draw(st.integers(1, procs))
        requested = draw(st.integers(1, 80))
        copies = draw(st.one_of(st.just(1), st.integers(1, 6)))
        for _ in range(copies):
            run = draw(st.integers(0, requested + 10))
            rows.append((submit, run, requested, size, draw(st.integers(1, 3))))
    return workload_from_rows(rows, procs)


KERNELS = ["python", "compiled"]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("policy", ["fcfs", "sjf", "largest", "wfp3", "psp"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(w=workloads())
def test_fast_compression_equals_reference(
    kernel: str, policy: str, w: Workload, conservative: Any
) -> None:
    conservative.assert_same(w, policy, kernel)


@pytest.mark.parametrize("screen", [0, 10**9], ids=["screen", "walk"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(w=workloads())
def test_every_fast_path_equals_reference(
    screen: int, w: Workload, monkeypatch_module: Any, conservative: Any
) -> None:
    """The numpy screen of long queues (forced on small cases here) changes
    nothing either."""
    monkeypatch_module.setattr(engine_module, "SCREEN_COMPRESS_QUEUE", screen)
    try:
        conservative.assert_same(w, "fcfs")
    finally:
        monkeypatch_module.undo()


@pytest.mark.parametrize("kernel", KERNELS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    w=workloads(),
    kill=st.booleans(),
    estimator=st.sampled_from(["requested", "actual", "user-average"]),
)
def test_fast_compression_equals_reference_without_kills(
    kernel: str, w: Workload, kill: bool, estimator: str, conservative: Any
) -> None:
    """Jobs running past their estimate (no kill, user-average estimates: stale
    reservations, which the compiled pass hands to its Python path) and perfect
    estimates."""
    conservative.assert_same(w, "fcfs", kernel, kill=kill, estimator=estimator)


def test_depth_all_uses_the_same_compression(conservative: Any) -> None:
    rng = np.random.default_rng(3)
    n = 300
    header = Header()
    header.set("MaxProcs", 64)
    run = rng.integers(1, 2000, n)
    w = Workload.from_arrays(
        {
            "job_number": np.arange(1, n + 1),
            "submit_time": np.cumsum(rng.integers(0, 60, n)),
            "run_time": run,
            "requested_time": run * rng.integers(1, 6, n),
            "requested_processors": rng.integers(1, 33, n),
        },
        header=header,
    )
    fast, _ = conservative.run(w, "python")
    depth_all, _ = conservative.run(
        w, "python", backfill="depth", backfill_options={"depth": "all"}
    )
    reference, _ = conservative.run(w, "reference")
    assert depth_all.start.tolist() == fast.start.tolist() == reference.start.tolist()


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


# ------------------------------------------------------------------------ real logs

HEADS = {
    "KTH-SP2-1996-2.1-cln.swf.gz": 3000,
    "LANL-CM5-1994-4.1-cln.swf.gz": 3000,
    "RICC-2010-2.swf.gz": 2500,
}


@pytest.mark.realdata
@pytest.mark.parametrize("name", sorted(HEADS))
def test_fast_compression_equals_reference_on_real_logs(
    swf_dir: Path, name: str, conservative: Any
) -> None:
    """The first few thousand jobs of KTH-SP2, LANL-CM5 and RICC-2010 (RICC's job
    arrays exercise the bundles, its long queues the numpy screen)."""
    full = schedlab.read(swf_dir / name)
    cols = full.to_arrays().take(np.arange(HEADS[name]))
    w = Workload(full.header.copy(), columns=cols)
    for policy in ["fcfs", "sjf"]:
        ref, _ = conservative.run(w, "reference", policy)
        fast, _ = conservative.run(w, "python", policy)
        assert fast.start.tolist() == ref.start.tolist(), (name, policy)


# -------------------------------------------------------------------------- profile


def random_profile(rng: random.Random) -> tuple[Profile, list[tuple[float, float, int]]]:
    procs = rng.randint(1, 10)
    profile = Profile(procs, 0.0)
    slots = []
    for _ in range(rng.randint(0, 10)):
        size = rng.randint(1, procs)
        duration = rng.choice([0.5, 1, 2, 3, 5, 10])
        at = profile.earliest(size, duration)
        profile.reserve(at, at + duration, size)
        slots.append((at, duration, size))
    return profile, slots


def free_at(profile: Profile, t: float) -> int:
    i = max(0, np.searchsorted(profile.times, t, "right") - 1)
    return profile.free[i]


def test_one_walk_searches_equal_the_original_ones() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        profile, slots = random_profile(rng)
        size = rng.randint(1, profile.procs)
        duration = rng.choice([0.5, 1, 2, 4, 7])
        assert profile.first_fit(size, duration) == profile.earliest(size, duration)
        if slots:
            at, duration, size = rng.choice(slots)
            if at > 0:
                limit = rng.choice([at, at * rng.random() + 1e-9])
                assert profile.first_start_before(
                    size, duration, at, limit
                ) == profile.earlier_start(size, duration, at, limit)


def test_move_and_refit() -> None:
    """``move`` leaves the free processors of a release then a reserve; ``refit``
    finds the new first fit after processors are given back."""
    rng = random.Random(11)
    for _ in range(2000):
        profile, slots = random_profile(rng)
        if not slots:
            continue
        at, duration, size = rng.choice(slots)
        if at <= 0:
            continue
        shapes = [(s, d) for s in range(1, profile.procs + 1) for d in (0.5, 1, 3, 6)]
        fits = {shape: profile.first_fit(*shape) for shape in shapes}
        new = rng.choice([0.0, at / 2, at - 0.5]) if at > 0.5 else 0.0
        twin = Profile(profile.procs, 0.0)
        twin.times[:] = profile.times
        twin.free[:] = profile.free
        twin.release(at, at + duration, size)
        twin.reserve(new, new + duration, size)
        profile.move(at, new, duration, size)
        probes = sorted(set(twin.times) | set(profile.times) | {at + duration + 1})
        assert [free_at(profile, t) for t in probes] == [free_at(twin, t) for t in probes]
        took_end = min(new + duration, at)
        gave = max(at, new + duration)
        for (s, d), fit in fits.items():
            if new < fit + d and took_end > fit:
                continue  # the window of the old fit lost processors: not refitted
            if gave < fit:
                fit = profile.refit(s, d, fit, gave, at + duration)
            assert fit == profile.first_fit(s, d), (s, d)


def test_a_window_that_ends_exactly_where_the_next_slot_begins(conservative: Any) -> None:
    """D and A hold one processor each from 0 (D until 10, A asks 10 but ends at 5);
    B (both processors) is reserved at 10 and C (one processor, 5 s) behind it at 20.
    When A ends, C moves to 5: its window [5, 10) ends exactly where B's slot begins
    (the boundary case of the rejection tests)."""
    jobs = [(0, 10, 10, 1), (0, 5, 10, 1), (1, 10, 10, 2), (1, 5, 5, 1)]
    header = Header()
    header.set("MaxProcs", 2)
    w = Workload.from_arrays(
        {
            "job_number": [1, 2, 3, 4],
            "submit_time": [j[0] for j in jobs],
            "run_time": [j[1] for j in jobs],
            "requested_time": [j[2] for j in jobs],
            "requested_processors": [j[3] for j in jobs],
        },
        header=header,
    )
    for reference in (True, False):
        result, _ = conservative.run(w, "reference" if reference else "python")
        assert result.start.tolist() == [0, 0, 10, 5]
