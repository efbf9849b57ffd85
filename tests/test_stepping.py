"""The stepping simulation (``schedlab.Simulation``): the caller decides at every
scheduling point; keeping the policy's order reproduces ``simulate`` exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab.testing import check_schedule


@pytest.fixture(scope="module")
def kth(swf_dir: Path) -> schedlab.Workload:
    w = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    return schedlab.Workload(w.header, columns=w.to_arrays().take(np.arange(2500)))


def replay(workload: schedlab.Workload, **options: object) -> schedlab.Result:
    sim = schedlab.Simulation(workload, **options)
    while (point := sim.pending_decision()) is not None:
        sim.decide(order=point.queue)
    return sim.result()


@pytest.mark.parametrize(
    ("policy", "backfill"),
    [
        ("fcfs", "none"),
        ("fcfs", "easy"),
        ("sjf", "easy"),
        ("psp", "easy"),
        ("fcfs", "conservative"),
        ("wfp3", "depth"),
    ],
)
def test_keeping_the_policys_order_is_simulate(
    kth: schedlab.Workload, policy: str, backfill: str
) -> None:
    expected = schedlab.simulate(kth, policy=policy, backfill=backfill, progress=False)
    got = replay(kth, policy=policy, backfill=backfill)
    assert np.array_equal(got.start, expected.start)
    assert got.stats["jobs_simulated"] == expected.stats["jobs_simulated"]


def test_lublin_trace_too(swf_dir: Path) -> None:
    w = schedlab.read(swf_dir / "lublin_256.swf")
    w = schedlab.Workload(w.header, columns=w.to_arrays().take(np.arange(1500)))
    expected = schedlab.simulate(w, backfill="easy", progress=False)
    assert np.array_equal(replay(w, backfill="easy").start, expected.start)


def test_another_order_gives_a_valid_different_schedule(kth: schedlab.Workload) -> None:
    sim = schedlab.Simulation(kth, policy="fcfs", backfill="easy")
    while (point := sim.pending_decision()) is not None:
        sim.decide(order=sorted(point.queue, key=lambda j: point.state.estimate[j]))
    result = sim.result()
    assert not np.isnan(result.start).any()
    check_schedule(result, result.procs)  # no over-commitment, nothing before submission
    fcfs = schedlab.simulate(kth, policy="fcfs", backfill="easy", progress=False)
    assert not np.array_equal(result.start, fcfs.start)


def drive(workload: schedlab.Workload, kernel: str) -> tuple[schedlab.Result, int]:
    """Every third point start the last waiting job that fits, else pass the queue
    in longest-estimate-first order to EASY on ``kernel``."""
    sim = schedlab.Simulation(workload, backfill="easy", backfill_options={"kernel": kernel})
    asked = 0
    while (point := sim.pending_decision()) is not None:
        asked += 1
        fitting = [j for j in point.queue if point.fits(j)]
        if asked % 3 == 0 and fitting:
            sim.decide(start=fitting[-1])
        else:
            sim.decide(order=sorted(point.queue, key=lambda j: -point.state.estimate[j]))
    return sim.result(), asked


def test_easy_follows_the_callers_starts_and_orders_on_both_kernels(
    kth: schedlab.Workload,
) -> None:
    """The caller's starts and orders reach EASY's own copies of the queue and of
    the running jobs (``on_manual_start``, ``on_reorder``): both kernels make the
    same valid schedule, and the compiled one never runs the whole simulation past
    the caller."""
    pytest.importorskip("numba")
    python, asked = drive(kth, "python")
    compiled, asked_compiled = drive(kth, "compiled")
    assert asked > 500 and asked == asked_compiled
    assert compiled.stats["whole_run"] is False
    check_schedule(compiled, compiled.procs)
    check_schedule(python, python.procs)
    np.testing.assert_array_equal(compiled.start, python.start)
    plain = schedlab.simulate(kth, backfill="easy", backfill_options={"kernel": "compiled"})
    assert plain.stats["whole_run"] is True
    assert not np.array_equal(compiled.start, plain.start)


def test_start_decisions_build_a_schedule(kth: schedlab.Workload) -> None:
    small = schedlab.Workload(kth.header, columns=kth.to_arrays().take(np.arange(300)))
    sim = schedlab.Simulation(small, backfill="none")
    starts = 0
    while (point := sim.pending_decision()) is not None:
        fitting = [j for j in point.queue if point.fits(j)]
        if fitting:  # smallest job that fits first
            sim.decide(start=min(fitting, key=lambda j: point.state.size[j]))
            starts += 1
        else:
            sim.decide()
    result = sim.result()
    assert starts == len(result) == 300
    check_schedule(result, result.procs)


def test_invalid_decisions_leave_the_simulation_unchanged(kth: schedlab.Workload) -> None:
    sim = schedlab.Simulation(kth, backfill="none")
    point = sim.pending_decision()
    assert point is not None
    with pytest.raises(schedlab.UsageError, match="not waiting"):
        sim.decide(start=10**9)
    big = [j for j in point.queue if not point.fits(j)]
    with pytest.raises(schedlab.UsageError, match="every waiting job"):
        sim.decide(order=list(point.queue)[:-1] if len(point.queue) > 1 else [])
    with pytest.raises(schedlab.UsageError, match="not both"):
        sim.decide(start=point.queue[0], order=point.queue)
    assert sim.pending_decision() is point
    if big:
        with pytest.raises(schedlab.UsageError, match="does not fit"):
            sim.decide(start=big[0])
    sim.close()


def test_start_needs_a_strategy_without_its_own_book(kth: schedlab.Workload) -> None:
    sim = schedlab.Simulation(kth, backfill="conservative")
    point = sim.pending_decision()
    assert point is not None
    with pytest.raises(schedlab.UsageError, match="order="):
        sim.decide(start=point.queue[0])
    sim.close()


def test_result_finishes_a_simulation_with_the_policys_order(kth: schedlab.Workload) -> None:
    sim = schedlab.Simulation(kth, backfill="easy")
    expected = schedlab.simulate(kth, backfill="easy", progress=False)
    assert np.array_equal(sim.result().start, expected.start)
    assert sim.pending_decision() is None
    with pytest.raises(schedlab.UsageError, match="over"):
        sim.decide()


def test_on_a_platform(kth: schedlab.Workload, tmp_path: Path) -> None:
    platform = tmp_path / "p.toml"
    platform.write_text("[node_groups.n]\ncount = 25\ncores = 4\n[partitions.all]\nnodes = ['n']\n")
    small = schedlab.Workload(kth.header, columns=kth.to_arrays().take(np.arange(400)))
    expected = schedlab.simulate(small, backfill="easy", platform=platform, progress=False)
    got = replay(small, backfill="easy", platform=platform)
    assert np.array_equal(got.start, expected.start)
    assert got.allocations == expected.allocations


@pytest.mark.parametrize("link", ["greenlet", "thread"])
def test_both_hand_overs_give_the_same_decisions_and_schedule(
    kth: schedlab.Workload, link: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine beside the caller as a greenlet (when installed) or a worker
    thread: the same points, the same schedule; abandoning a run ends it."""
    from schedlab.sim import stepping

    if link == "greenlet":
        pytest.importorskip("greenlet")
    else:
        monkeypatch.setenv("SCHEDLAB_STEPPING", "thread")
    small = schedlab.Workload(kth.header, columns=kth.to_arrays().take(np.arange(400)))
    sim = schedlab.Simulation(small, backfill="easy")
    kind = type(sim._link).__name__
    assert kind == ("_GreenletLink" if link == "greenlet" else "_ThreadLink")
    nows = []
    while (point := sim.pending_decision()) is not None:
        nows.append(point.now)
        sim.decide(order=sorted(point.queue, key=lambda j: point.state.estimate[j]))
    got = sim.result()
    monkeypatch.setenv("SCHEDLAB_STEPPING", "thread")
    other = schedlab.Simulation(small, backfill="easy")
    other_nows = []
    while (point := other.pending_decision()) is not None:
        other_nows.append(point.now)
        other.decide(order=sorted(point.queue, key=lambda j: point.state.estimate[j]))
    assert nows == other_nows
    assert np.array_equal(got.start, other.result().start)
    # Abandoned in mid-run: the engine ends and no decision is pending.
    monkeypatch.delenv("SCHEDLAB_STEPPING")
    if link == "thread":
        monkeypatch.setenv("SCHEDLAB_STEPPING", "thread")
    left = schedlab.Simulation(small, backfill="easy")
    assert left.pending_decision() is not None
    left.close()
    assert left.pending_decision() is None
    assert stepping.Simulation is schedlab.Simulation
