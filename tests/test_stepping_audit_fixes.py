"""The stepping simulation after the "online" audit: manual starts only where the
running strategy follows them, interrupts in both hand-overs, misuse from another
thread, holding back with no event left, freeing, close() and decision types."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from schedlab.errors import UsageError
from schedlab.sim import stepping

pytest.importorskip("greenlet")

MODES = ["greenlet", "thread"]


@pytest.fixture(scope="module")
def kth(swf_dir: Path) -> schedlab.Workload:
    w = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    return schedlab.Workload(w.header, columns=w.to_arrays().take(np.arange(300)))


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "thread":
        monkeypatch.setenv("SCHEDLAB_STEPPING", "thread")
    else:
        monkeypatch.delenv("SCHEDLAB_STEPPING", raising=False)
    yield request.param


def bounded(fn: Callable[[], Any], seconds: float = 20.0) -> Any:
    """Run ``fn`` in a thread; fail (not hang) if it takes longer than ``seconds``."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "hung"
    if "error" in out:
        raise out["error"]
    return out.get("value")


def same_schedule(a: schedlab.Result, b: schedlab.Result) -> bool:
    return bool(np.array_equal(a.start, b.start, equal_nan=True))


# 1. manual starts on a platform with the compiled node-level EASY
def test_manual_start_needs_a_strategy_that_follows_it(
    kth: schedlab.Workload, tmp_path: Path
) -> None:
    """Only a strategy declaring ``accepts_manual_starts`` takes ``start=`` (it was
    allowed by the name "easy", whatever ran); the point stays pending."""
    plat = tmp_path / "p.toml"
    plat.write_text("[node_groups.n]\ncount = 25\ncores = 4\n[partitions.all]\nnodes = ['n']\n")
    for options in ({}, {"platform": plat}):
        sim = schedlab.Simulation(kth, backfill="conservative", **options)
        point = sim.pending_decision()
        assert point is not None
        with pytest.raises(UsageError, match="start= decisions"):
            sim.decide(start=point.queue[0])
        assert sim.pending_decision() is point
        sim.decide(order=point.queue)
        ref = schedlab.simulate(kth, backfill="conservative", **options)
        assert same_schedule(sim.result(), ref)
    for kernel in ("python", "compiled"):
        sim = schedlab.Simulation(
            kth, backfill="easy", backfill_options={"kernel": kernel}, platform=plat
        )
        point = sim.pending_decision()
        assert point is not None
        sim.decide(start=point.queue[0])  # followed by both node-level passes


def test_manual_start_on_the_python_node_easy_still_works(
    kth: schedlab.Workload, tmp_path: Path
) -> None:
    plat = tmp_path / "p.toml"
    plat.write_text("[node_groups.n]\ncount = 25\ncores = 4\n[partitions.all]\nnodes = ['n']\n")
    sim = schedlab.Simulation(
        kth, backfill="easy", backfill_options={"kernel": "python"}, platform=plat
    )
    point = sim.pending_decision()
    assert point is not None
    sim.decide(start=point.queue[0])
    assert not np.isnan(sim.result().start[0])


# 2. Ctrl-C in either hand-over: raised once, later calls a UsageError, no hang
INTERRUPT_SCRIPT = textwrap.dedent(
    """
    import _thread, faulthandler, sys, threading, time
    import numpy as np, schedlab
    faulthandler.dump_traceback_later(60, exit=True)
    w = schedlab.read(sys.argv[1])
    w = schedlab.Workload(w.header, columns=w.to_arrays().take(np.arange(1500)))
    for delay in (0.0, 0.002, 0.005, 0.01, 0.02):
        sim = schedlab.Simulation(w)
        timer = threading.Timer(delay, _thread.interrupt_main)
        try:
            timer.start()
            while (p := sim.pending_decision()) is not None:
                sim.decide(order=p.queue)
            r = sim.result()
            timer.join()
            time.sleep(0.05)   # the interrupt lands here if the run was faster
        except KeyboardInterrupt:
            pass
        try:
            r = sim.result()          # continued (the interrupt hit the caller) or refused
            assert len(r.start) == 1500
            print("continued")
        except schedlab.UsageError as e:
            assert "interrupted" in str(e), e
            try:
                sim.pending_decision()
            except schedlab.UsageError:
                print("refused")
    print("ok")
    """
)


@pytest.mark.parametrize("how", MODES)
def test_interrupt_never_hangs(swf_dir: Path, how: str, tmp_path: Path) -> None:
    script = tmp_path / "interrupt.py"
    script.write_text(INTERRUPT_SCRIPT)
    env = {"SCHEDLAB_STEPPING": "thread"} if how == "thread" else {}
    import os

    run = subprocess.run(
        [sys.executable, str(script), str(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")],
        capture_output=True,
        text=True,
        timeout=90,
        env={**{k: v for k, v in os.environ.items() if k != "SCHEDLAB_STEPPING"}, **env},
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().endswith("ok")


def test_an_interrupted_hand_over_is_reported_not_corrupting(
    kth: schedlab.Workload, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = schedlab.Simulation(kth)
    point = sim.pending_decision()
    assert point is not None
    link = type(sim._link)
    real = link.call
    calls = {"n": 0}

    def cut(self: Any, message: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            real(self, message)  # the engine took the decision; its reply is lost
            raise KeyboardInterrupt
        return real(self, message)

    monkeypatch.setattr(link, "call", cut)
    with pytest.raises(KeyboardInterrupt):
        sim.decide(order=point.queue)
    for call in (sim.pending_decision, sim.result, lambda: sim.decide()):
        with pytest.raises(UsageError, match="interrupted"):
            bounded(call)


# 3. decide() from another thread in greenlet mode
def test_deciding_from_another_thread_is_refused_and_harmless(kth: schedlab.Workload) -> None:
    sim = schedlab.Simulation(kth)
    if not isinstance(sim._link, stepping._GreenletLink):
        pytest.skip("greenlet mode only")
    point = sim.pending_decision()
    assert point is not None
    with pytest.raises(UsageError, match="thread that created it") as info:
        bounded(lambda: sim.decide(order=point.queue))
    assert "\n" not in str(info.value) and "0x" not in str(info.value)
    assert sim.pending_decision() is point
    while (p := sim.pending_decision()) is not None:
        sim.decide(order=p.queue)
    assert same_schedule(sim.result(), schedlab.simulate(kth))


# 4. holding back when no event is left
def test_nothing_with_no_event_left_is_a_usage_error(kth: schedlab.Workload, mode: str) -> None:
    w = schedlab.Workload(kth.header, columns=kth.to_arrays().take(np.arange(3)))
    sim = schedlab.Simulation(w)
    refused = None
    for _ in range(100):
        point = sim.pending_decision()
        assert point is not None
        try:
            sim.decide()
        except UsageError as exc:
            refused = exc
            break
    assert refused is not None and "no event is left" in str(refused)
    assert sim.pending_decision() is point and len(point.queue) == 3
    while (p := sim.pending_decision()) is not None:
        sim.decide(order=p.queue)
    assert not np.isnan(sim.result().start).any()


# 5. an abandoned simulation is freed
def test_an_abandoned_simulation_is_freed(kth: schedlab.Workload, mode: str) -> None:
    sim = schedlab.Simulation(kth)
    for _ in range(5):
        point = sim.pending_decision()
        assert point is not None
        sim.decide(order=point.queue)
    link = sim._link
    engine = getattr(link, "_engine", None) or getattr(link, "_thread", None)
    del sim, point
    gc.collect()
    if isinstance(engine, threading.Thread):
        engine.join(10)
        assert not engine.is_alive()
    else:
        assert engine is not None and engine.dead


def test_with_closes_the_simulation(kth: schedlab.Workload, mode: str) -> None:
    with pytest.raises(RuntimeError, match="caller"):
        with schedlab.Simulation(kth) as sim:
            point = sim.pending_decision()
            assert point is not None
            raise RuntimeError("caller")
    with pytest.raises(UsageError, match="closed"):
        sim.result()
    with schedlab.Simulation(kth) as sim2:
        r = sim2.result()
    assert same_schedule(r, schedlab.simulate(kth))


# 6. close()
def test_close_rough_edges(kth: schedlab.Workload, mode: str) -> None:
    sim = schedlab.Simulation(kth)
    assert sim.pending_decision() is not None
    sim.close()
    with pytest.raises(UsageError, match="closed"):
        sim.result()
    with pytest.raises(UsageError, match="closed"):
        sim.decide()
    assert sim.pending_decision() is None  # a loop on it ends
    sim.close()  # twice is fine
    early = schedlab.Simulation(kth)
    early.close()
    assert early.pending_decision() is None
    with pytest.raises(UsageError, match="closed"):
        early.decide()
    with pytest.raises(UsageError, match="closed"):
        early.result()
    done = schedlab.Simulation(kth)
    r = done.result()
    done.close()
    assert done.result() is r


# 7. decisions are job indices (integers)
@pytest.mark.parametrize("bad", [False, True, 0.0, "0", float("nan")])
def test_start_takes_integers_only(kth: schedlab.Workload, bad: Any) -> None:
    sim = schedlab.Simulation(kth)
    point = sim.pending_decision()
    assert point is not None and point.queue == (0,)
    with pytest.raises(UsageError):
        sim.decide(start=bad)
    assert sim.pending_decision() is point


@pytest.mark.parametrize(
    "bad",
    [5, "012", [0.0], ["0"], [None], [float("nan")], [True]],
)
def test_order_takes_integers_only(kth: schedlab.Workload, bad: Any) -> None:
    sim = schedlab.Simulation(kth)
    point = sim.pending_decision()
    assert point is not None and point.queue == (0,)
    with pytest.raises(UsageError):
        sim.decide(order=bad)
    assert sim.pending_decision() is point
    sim.decide(order=np.array(point.queue, dtype=np.int64))  # numpy integers are fine
    assert sim.pending_decision() is not point


# 12. fits() answers for waiting jobs only
def test_fits_is_false_for_jobs_not_waiting(kth: schedlab.Workload) -> None:
    sim = schedlab.Simulation(kth)
    first = sim.pending_decision()
    assert first is not None and first.fits(0)
    sim.decide(start=0)
    assert not first.fits(0)  # started since: the point's state is live
    assert not first.fits(-1) and not first.fits(len(kth)) and not first.fits(True)
    assert not first.fits(len(kth) - 1)  # not submitted yet
