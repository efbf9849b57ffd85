"""Invariants of every schedule, checked with hypothesis on random workloads for
every priority policy x backfilling strategy."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedlab.model import Workload
from schedlab.policies.backfill import easy as easy_module
from schedlab.policies.backfill.depth import DepthReference as Depth
from schedlab.policies.backfill.easy import PythonEasy
from schedlab.sim.runner import run_simulation
from workload_rows import workload_from_rows

POLICIES = ["fcfs", "sjf", "ljf", "smallest", "largest", "wfp3", "unicef", "psp", "multifactor"]
BACKFILLS = ["none", "easy", "conservative", "depth"]


@st.composite
def workloads(draw: Any) -> tuple[Workload, int]:
    procs = draw(st.integers(1, 12))
    n = draw(st.integers(1, 25))
    rows = []
    for _ in range(n):
        submit = draw(st.integers(0, 60))
        run = draw(st.integers(0, 40))
        requested = draw(st.one_of(st.just(run), st.integers(1, 60)))
        size = draw(st.integers(1, procs))
        user = draw(st.integers(1, 3))
        rows.append((submit, run, requested, size, user))
    return workload_from_rows(rows, procs), procs


def simulate(w: Workload, policy: str, backfill: str, **kw: Any) -> tuple[Any, Any]:
    seen: dict[str, Any] = {}

    def inspect(engine: Any) -> None:
        engine.state.reservation_log = {}
        seen["engine"] = engine

    result = run_simulation(
        w,
        policy=policy,
        backfill=backfill,
        procs=None,
        estimator=kw.pop("estimator", "requested"),
        kill=kw.pop("kill", True),
        dependencies=False,
        policy_options=None,
        backfill_options=kw.pop("backfill_options", None),
        estimator_options=None,
        registry=None,
        progress=False,
        inspect=inspect,
        **kw,
    )
    return result, seen["engine"].state


def check_common(result: Any, procs: int) -> None:
    cols = result.workload.to_arrays()
    start, end = result.start, result.end
    submit = cols["submit_time"]
    size = cols["allocated_processors"]
    assert np.all(start >= submit), "a job started before its submission"
    assert np.allclose(end - start, cols["run_time"])
    assert np.allclose(cols["wait_time"], start - submit)
    # Processors in use never exceed the machine: sweep the events (ends first at
    # equal times, since a job ending at t frees its processors for one starting at t).
    events = sorted(
        [(e, 0, -s) for e, s in zip(end.tolist(), size.tolist(), strict=True)]
        + [(b, 1, s) for b, s in zip(start.tolist(), size.tolist(), strict=True)]
    )
    used = 0
    for _, _, delta in events:
        used += delta
        assert used <= procs, "more processors in use than the machine has"


@pytest.mark.parametrize("backfill", BACKFILLS)
@pytest.mark.parametrize("policy", POLICIES)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=workloads())
def test_schedule_is_feasible(policy: str, backfill: str, case: tuple[Workload, int]) -> None:
    w, procs = case
    result, _ = simulate(w, policy, backfill)
    check_common(result, procs)
    assert len(result) == len(w)


@settings(max_examples=80, deadline=None)
@given(case=workloads())
def test_fcfs_without_backfilling_starts_jobs_in_order(case: tuple[Workload, int]) -> None:
    w, _ = case
    _result, engine = simulate(w, "fcfs", "none")
    starts = [engine.start_time[j] for j in range(len(w))]  # job index = submit order
    assert starts == sorted(starts)


def shadow_of(state: Any, running: list, head: int, now: float) -> float:
    """The head's reservation recomputed from the running jobs."""
    avail = state.free
    for e, r in running:
        avail += state.size[r]
        if avail >= state.size[head]:
            return max(e, now)
    raise AssertionError("head never fits")


@pytest.mark.parametrize("kernel", ["python", "compiled"])
@pytest.mark.parametrize("policy", POLICIES)
@settings(max_examples=20, deadline=None)
@given(case=workloads())
def test_easy_backfilling_never_delays_the_head_reservation(
    policy: str, kernel: str, case: tuple[Workload, int]
) -> None:
    """After every EASY pass (on either implementation), the running jobs it keeps
    are the machine's, and the head's reservation recomputed with the jobs just
    backfilled is no later than the one the pass computed before backfilling."""
    impl: Any = PythonEasy
    if kernel == "compiled":
        pytest.importorskip("numba")
        from schedlab.policies.backfill.easy_compiled import CompiledEasy

        impl = CompiledEasy
    w, _ = case
    checked = []
    original = impl.schedule

    def checked_pass(self: Any, now: float) -> None:
        original(self, now)
        last = self.last
        queue = self.state.queue
        if last is not None and queue and queue[0][1] == last[0]:
            running = self.running_jobs()
            assert sorted((self.state.estimated_end[j], j) for _, j in running) == running
            assert {j for _, j in running} == {j for _, j in self.state.finish_heap}
            assert shadow_of(self.state, running, last[0], now) <= last[1] + 1e-9
            checked.append(last[0])

    impl.schedule = checked_pass
    try:
        result, _ = simulate(w, policy, "easy", backfill_options={"kernel": kernel})
        assert result.stats["kernel"] == kernel
    finally:
        impl.schedule = original


@pytest.mark.parametrize("policy", POLICIES)
@settings(max_examples=20, deadline=None)
@given(case=workloads())
def test_conservative_never_delays_a_reservation(policy: str, case: tuple[Workload, int]) -> None:
    w, procs = case
    result, engine = simulate(w, policy, "conservative")
    check_common(result, procs)
    for job, log in engine.reservation_log.items():
        times = [t for _, t in log]
        assert all(b <= a for a, b in itertools.pairwise(times)), (job, times)
        assert engine.start_time[job] == times[-1]


@settings(max_examples=20, deadline=None)
@given(case=workloads())
def test_fcfs_easy_head_starts_by_its_first_reservation(case: tuple[Workload, int]) -> None:
    """Under FCFS nobody can overtake the head: it starts no later than the first
    reservation it got."""
    w, _ = case
    _result, engine = simulate(w, "fcfs", "easy")
    for job, log in engine.reservation_log.items():
        assert engine.start_time[job] <= log[0][1] + 1e-9


@pytest.mark.parametrize("policy", POLICIES)
@settings(max_examples=20, deadline=None)
@given(case=workloads())
def test_generic_depth_one_equals_easy(policy: str, case: tuple[Workload, int]) -> None:
    """The profile-based reservation-depth code with depth 1 and the specialised
    EASY code give the same schedule."""
    w, _ = case
    fast, _ = simulate(w, policy, "easy")
    generic, _ = simulate(w, policy, Depth(1))
    assert fast.start.tolist() == generic.start.tolist()


@pytest.mark.parametrize("backfill", ["easy", "conservative"])
@settings(max_examples=20, deadline=None)
@given(case=workloads())
def test_numpy_screen_equals_plain_scan(
    backfill: str, case: tuple[Workload, int], monkeypatch_module: Any
) -> None:
    """The numpy candidate screen used for long queues changes nothing."""
    w, _ = case
    plain, _ = simulate(w, "sjf", backfill)
    monkeypatch_module.setattr(easy_module, "SCREEN_MIN_QUEUE", 0)
    try:
        screened, _ = simulate(w, "sjf", backfill)
    finally:
        monkeypatch_module.undo()
    assert plain.start.tolist() == screened.start.tolist()


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


@pytest.mark.parametrize("backfill", ["none", "easy", "conservative"])
@settings(max_examples=20, deadline=None)
@given(case=workloads())
def test_no_kill_schedules_are_feasible(backfill: str, case: tuple[Workload, int]) -> None:
    w, procs = case
    result, _ = simulate(w, "fcfs", backfill, kill=False)
    check_common(result, procs)
    assert result.stats["killed"] == 0


@settings(max_examples=20, deadline=None)
@given(case=workloads())
def test_simulation_is_deterministic(case: tuple[Workload, int]) -> None:
    w, _ = case
    a, _ = simulate(w, "psp", "conservative")
    b, _ = simulate(w, "psp", "conservative")
    assert a.start.tolist() == b.start.tolist()
