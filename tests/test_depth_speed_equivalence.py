"""Reservation depth ``k``: the fast :class:`~schedlab.policies.backfill.depth.Depth`
gives every job the start the plainly written pass gives it, and does less work.

The plain pass is copied below as it was before the fast one (``PlainDepth``: a
profile of the running jobs at every pass, then every waiting job in priority
order with one profile query each), so the comparison does not lean on the module
under test; the module's own :class:`DepthReference` is compared too.

* hypothesis: random workloads, ``k`` in 1..5, FCFS, SJF and two policies whose
  keys numpy cannot hold (tuples, integers past 2**53), kill on and off (off:
  jobs outlive their estimates, so the profile has more processors free now than
  the machine), with the numpy screen from one waiting job on or at its default;
* the first jobs of two real logs, submit times halved (long queues);
* the work: a pass builds no profile when no waiting job fits in the free
  processors, and the exact profile test runs only on the jobs the screen keeps
  (the pass before tested every waiting job that fit in the free processors).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedlab.model import Workload
from schedlab.policies.backfill import depth as depth_module
from schedlab.policies.backfill.depth import Depth, DepthReference
from schedlab.sim import Profile, SchedulerState
from workload_rows import workload_from_rows


class PlainDepth:
    """The depth-``k`` pass as written before the fast one (the reference)."""

    wants_running = True

    def __init__(self, k: int) -> None:
        self.k = k
        self.name = f"plain-depth{k}"

    def bind(self, state: SchedulerState) -> None:
        self.state = state

    def schedule(self, now: float) -> None:
        state = self.state
        size = state.size
        est = state.estimate
        profile = state.running_profile()
        reserved = 0
        for _, j in list(state.queue):
            s = size[j]
            d = est[j]
            if reserved < self.k:
                at = profile.earliest(s, d)
                if at <= now and s <= state.free:
                    profile.reserve(now, now + d, s)
                    state.start(j)
                else:
                    profile.reserve(at, at + d, s)
                    reserved += 1
            elif s <= state.free and profile.fits_now(s, d):
                profile.reserve(now, now + d, s)
                state.start(j)
            if not state.free and reserved >= self.k:
                break


class TupleKeys:
    """Shortest estimate first with tuple keys (numpy cannot screen the order)."""

    name = "tuple-keys"

    def bind(self, table: Any) -> None:
        self.estimate = table.estimate
        self.size = table.size

    def key(self, job: int, now: float) -> tuple[float, int]:
        return (self.estimate[job], -self.size[job])


class HugeKeys:
    """Integer keys past 2**53, some equal once made float64 (the order is exact)."""

    name = "huge-keys"

    def bind(self, table: Any) -> None:
        self.size = table.size

    def key(self, job: int, now: float) -> int:
        return 2**60 + (job * 7919) % 13 - self.size[job]


POLICIES: list[Any] = ["fcfs", "sjf", TupleKeys, HugeKeys]


def starts(w: Workload, policy: Any, backfill: Any, kill: bool) -> list[float]:
    if isinstance(policy, type):
        policy = policy()
    result = schedlab.simulate(w, policy=policy, backfill=backfill, kill=kill, progress=False)
    return result.start.tolist()  # type: ignore[no-any-return]


@st.composite
def workloads(draw: Any) -> Workload:
    procs = draw(st.integers(1, 16))
    n = draw(st.integers(1, 120))
    span = draw(st.sampled_from([5, 40, 400]))
    rows = []
    for _ in range(n):
        submit = draw(st.integers(0, span))
        run = draw(st.sampled_from([0, 1, 5, 10, 30, 60, 90]))
        requested = draw(st.one_of(st.just(run), st.sampled_from([1, 10, 30, 60, 120])))
        size = draw(st.integers(1, procs))
        rows.append((submit, run, requested, size, 1))
    return workload_from_rows(rows, procs)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    w=workloads(),
    k=st.integers(1, 5),
    policy=st.sampled_from(POLICIES),
    kill=st.booleans(),
    screen_from=st.sampled_from([1, 2, depth_module.SCREEN_MIN_QUEUE]),
)
def test_depth_starts_every_job_when_the_plain_pass_does(
    w: Workload, k: int, policy: Any, kill: bool, screen_from: int
) -> None:
    expected = starts(w, policy, PlainDepth(k), kill)
    saved = depth_module.SCREEN_MIN_QUEUE
    depth_module.SCREEN_MIN_QUEUE = screen_from
    try:
        got = starts(w, policy, Depth(k), kill)
    finally:
        depth_module.SCREEN_MIN_QUEUE = saved
    assert got == expected
    assert starts(w, policy, DepthReference(k), kill) == expected


def halved(path: Path, n: int) -> Workload:
    """The first ``n`` jobs of a log, submit times halved (twice the load)."""
    w = schedlab.read(path)
    cols = w.to_arrays().take(np.arange(n))
    names = [
        "job_number",
        "submit_time",
        "run_time",
        "allocated_processors",
        "requested_processors",
        "requested_time",
        "status",
        "user_id",
    ]
    data = {name: cols[name].copy() for name in names}
    data["submit_time"] = np.floor(data["submit_time"] / 2)
    return Workload.from_arrays(data, w.header.copy())


@pytest.mark.parametrize(
    ("log", "jobs", "policy", "k"),
    [
        ("KTH-SP2-1996-2.1-cln.swf.gz", 3000, "fcfs", 2),
        ("HPC2N-2002_excerpt-3170jobs_alea.swf", 3000, "sjf", 4),
    ],
)
def test_depth_matches_the_plain_pass_on_real_logs(
    swf_dir: Path, monkeypatch: pytest.MonkeyPatch, log: str, jobs: int, policy: str, k: int
) -> None:
    w = halved(swf_dir / log, jobs)
    screened = []
    screen = Depth._screened

    def counted(self: Depth, *args: Any) -> None:
        screened.append(1)
        screen(self, *args)

    monkeypatch.setattr(Depth, "_screened", counted)
    got = starts(w, policy, Depth(k), True)
    assert screened, "the numpy screen never ran: the queue is too short to test it"
    assert got == starts(w, policy, PlainDepth(k), True)
    assert not any(t != t for t in got)


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    calls = [0]
    method = getattr(owner, name)

    def counted(*args: Any) -> Any:
        calls[0] += 1
        return method(*args)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_no_profile_when_no_waiting_job_fits_the_free_processors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A 9-processor job holds a 10-processor machine for 1000 s; 300 jobs of 2
    # processors arrive one a second: each arrival is a pass with 1 processor
    # free, where nothing can start.
    rows = [(0, 1000, 1000, 9, 1)] + [(t, 10, 10, 2, 1) for t in range(1, 301)]
    w = workload_from_rows(rows, 10)
    builds = count_calls(monkeypatch, SchedulerState, "running_profile")
    got = starts(w, "fcfs", Depth(2), True)
    assert builds[0] <= 2, f"{builds[0]} profiles built"
    monkeypatch.undo()
    assert got == starts(w, "fcfs", PlainDepth(2), True)


def test_the_exact_test_runs_only_on_jobs_the_screen_keeps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An 8-processor job runs until 1000 on 10 processors; a 10-processor job
    # (reserved at 1000), then 100 one-processor jobs of 5000 s at once and 200
    # more one a second arrive: each fits in the 2 free processors but would
    # delay the reservation, so none starts before 1000.
    rows = [(0, 1000, 1000, 8, 1), (1, 100, 100, 10, 1)]
    rows += [(2, 5000, 5000, 1, 1)] * 100 + [(t, 5000, 5000, 1, 1) for t in range(3, 203)]
    w = workload_from_rows(rows, 10)
    queries = count_calls(monkeypatch, Profile, "fits_now")
    got = starts(w, "fcfs", Depth(2), True)
    assert queries[0] <= 20, f"{queries[0]} exact profile tests"
    monkeypatch.undo()
    assert got == starts(w, "fcfs", PlainDepth(2), True)


def drive(w: Workload, backfill: Any) -> list[float]:
    """A stepping simulation whose caller, at every fourth point where a job runs,
    starts nothing (the strategy's pass is skipped: its arrivals come at its next
    pass), else passes the queue longest estimate first."""
    sim = schedlab.Simulation(w, policy="fcfs", backfill=backfill)
    asked = 0
    while (point := sim.pending_decision()) is not None:
        asked += 1
        if asked % 4 == 0 and point.state.finish_heap:
            sim.decide()
        else:
            estimate = point.state.estimate
            sim.decide(order=sorted(point.queue, key=lambda j: (-estimate[j], j)))
    return sim.result().start.tolist()  # type: ignore[no-any-return]


def test_depth_matches_the_plain_pass_in_a_stepping_simulation(
    swf_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = halved(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz", 1500)
    monkeypatch.setattr(depth_module, "SCREEN_MIN_QUEUE", 2)
    assert drive(w, Depth(2)) == drive(w, PlainDepth(2))


class Forgetful:
    """Depth, told of no arrival at every other pass (its list of waiting jobs
    misses them: it must list them again from the state's arrays)."""

    wants_running = True
    wants_arrays = True

    def __init__(self, k: int) -> None:
        self.inner = Depth(k)
        self.name = "forgetful"
        self.passes = 0

    def bind(self, state: SchedulerState) -> None:
        self.state = state
        self.inner.bind(state)

    def schedule(self, now: float) -> None:
        self.passes += 1
        if self.passes % 2:
            self.state.new_jobs.clear()
        self.inner.schedule(now)


def test_depth_lists_the_waiting_jobs_again_when_arrivals_were_missed(
    swf_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = halved(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz", 1500)
    monkeypatch.setattr(depth_module, "SCREEN_MIN_QUEUE", 2)
    relisted = []
    listed_sizes = Depth._listed_sizes

    def counted(self: Depth) -> Any:
        before = self.count
        sizes = listed_sizes(self)
        relisted.append(self.count > before)  # (a compaction only shortens the list)
        return sizes

    monkeypatch.setattr(Depth, "_listed_sizes", counted)
    got = starts(w, "fcfs", Forgetful(2), True)
    assert any(relisted), "no pass listed the waiting jobs again"
    assert got == starts(w, "fcfs", PlainDepth(2), True)
