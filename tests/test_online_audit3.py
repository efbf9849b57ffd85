"""Audit online3: stepping after points the caller settled without a strategy pass,
conservative holding a due reservation, the kernel that ran, and integer columns of
``Workload.from_arrays``."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
import schedlab
from schedlab import Workload
from schedlab.errors import UsageError

#: One 10-core node, one partition.
SINGLE = "[node_groups.n]\ncount = 1\ncores = 10\n[partitions.p]\nnodes = ['n']\n"
#: Two 10-core nodes, partitions p=[n] and q=[m] (disjoint: the compiled
#: multi-partition passes apply).
TWO = (
    "[node_groups.n]\ncount = 1\ncores = 10\n[node_groups.m]\ncount = 1\ncores = 10\n"
    "[partitions.p]\nnodes = ['n']\n[partitions.q]\nnodes = ['m']\n"
)
#: p=[n] and q=[n, m]: partitions sharing a node (the Python passes only).
SHARETWO = (
    "[node_groups.n]\ncount = 1\ncores = 10\n[node_groups.m]\ncount = 1\ncores = 10\n"
    "[partitions.p]\nnodes = ['n']\n[partitions.q]\nnodes = ['n', 'm']\n"
)
#: cpu and gpu nodes in two disjoint partitions (the audit's disj.toml, no memory).
DISJ = (
    "[node_groups.cpu]\ncount = 6\ncores = 16\n[node_groups.gpu]\ncount = 2\ncores = 16\n"
    "[partitions.batch]\nnodes = ['cpu']\n[partitions.gpu]\nnodes = ['gpu']\n"
)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text("[platform]\nsharing = 'shared'\n" + text)
    return path


@pytest.fixture()
def platforms(tmp_path: Path) -> dict[str, Path]:
    return {
        name: _write(tmp_path, name, text)
        for name, text in [("single", SINGLE), ("two", TWO), ("sharetwo", SHARETWO)]
    }


def _settings(platforms: dict[str, Path], shared: bool = True) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for where in [{"procs": 10}, {"platform": platforms["single"]}, {"platform": platforms["two"]}]:
        for kernel in ["python", "compiled"]:
            out.append({**where, "backfill_options": {"kernel": kernel}})
    if shared:
        out.append({"platform": platforms["sharetwo"], "backfill_options": {"kernel": "python"}})
    return out


def _arrays(**columns: list[float]) -> Workload:
    return Workload.from_arrays(
        {"allocated_processors": columns["requested_processors"], **columns}
    )


# ------------------------------------------------------------------ finding 1
def test_nothing_where_easy_starts_nothing_keeps_simulates_schedule(
    platforms: dict[str, Path],
) -> None:
    """Job 2 ends at 50; the head (job 3) does not fit then, so EASY starts nothing:
    a decide() there must not let job 4 backfill against the stale shadow time."""
    w = _arrays(
        job_number=[1, 2, 3, 4],
        submit_time=[0, 0, 1, 60],
        run_time=[200, 50, 100, 500],
        requested_processors=[4, 6, 8, 6],
        requested_time=[200, 1000, 100, 500],
    )
    for opts in _settings(platforms, shared=False):
        ref = schedlab.simulate(w, backfill="easy", progress=False, **opts).start.tolist()
        assert ref == [0.0, 0.0, 200.0, 300.0]
        sim = schedlab.Simulation(w, backfill="easy", **opts)
        while (p := sim.pending_decision()) is not None:
            if p.now == 50:
                assert not any(p.fits(j) for j in p.queue)
                sim.decide()
            else:
                sim.decide(order=p.queue)
        assert sim.result().start.tolist() == ref, opts


def _start_then_nothing_fits() -> Workload:
    return _arrays(
        job_number=[1, 2, 3, 4, 5],
        submit_time=[0, 0, 1, 2, 60],
        run_time=[200, 50, 100, 100, 500],
        requested_processors=[4, 6, 8, 1, 5],
        requested_time=[200, 1000, 100, 100, 500],
    )


@pytest.mark.parametrize("by_hand_at_zero", [False, True])
def test_manual_start_after_which_nothing_fits_keeps_simulates_schedule(
    platforms: dict[str, Path], by_hand_at_zero: bool
) -> None:
    """At t=50 the caller starts job 4, as EASY's own pass would; nothing else fits,
    so the point ends without a pass: the next pass must know job 2 ended."""
    w = _start_then_nothing_fits()
    for opts in _settings(platforms):
        ref = schedlab.simulate(w, backfill="easy", progress=False, **opts).start.tolist()
        assert ref == [0.0, 0.0, 200.0, 50.0, 300.0]
        sim = schedlab.Simulation(w, backfill="easy", **opts)
        while (p := sim.pending_decision()) is not None:
            fit = [j for j in p.queue if p.fits(j)]
            if p.now == 50 and 3 in fit:
                sim.decide(start=3)
            elif by_hand_at_zero and p.now == 0 and fit:
                sim.decide(start=fit[0])
            else:
                sim.decide(order=p.queue)
        assert sim.result().start.tolist() == ref, opts


def test_head_held_once_starts_before_a_later_arrival(platforms: dict[str, Path]) -> None:
    """The head fits at 50 and the caller holds it once; at 60 a 1-processor job
    arrives: EASY must start the head (it fits) before the newcomer."""
    w = _arrays(
        job_number=[1, 2, 3, 4],
        submit_time=[0, 0, 1, 60],
        run_time=[50, 200, 100, 10],
        requested_processors=[6, 4, 6, 1],
        requested_time=[1000, 200, 100, 10],
    )
    for opts in _settings(platforms):
        sim = schedlab.Simulation(w, backfill="easy", **opts)
        held = False
        while (p := sim.pending_decision()) is not None:
            if p.now == 50 and not held:
                held = True
                sim.decide()
            else:
                sim.decide(order=p.queue)
        assert sim.result().start.tolist() == [0.0, 0.0, 60.0, 160.0], opts


def _kth_platform(swf_dir: Path, n: int) -> Workload:
    """``n`` KTH-SP2 jobs, 30 % in partition ``gpu`` (at most 32 processors), the
    rest in ``batch`` (at most 64)."""
    w = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    rng = random.Random(1)
    jobs = []
    for j in list(w)[:n]:
        gpu = rng.random() < 0.3
        procs = min(j.requested_processors or 1, 32 if gpu else 64)
        extras = {**j.extras, "request.partition": "gpu" if gpu else "batch"}
        jobs.append(
            attrs.evolve(j, requested_processors=procs, allocated_processors=procs, extras=extras)
        )
    return Workload.from_jobs(jobs, header=w.header)


def _twin(w: Workload, **opts: Any) -> tuple[int, list[float], list[float]]:
    """Simulation A replays simulate (order=point.queue); B, in lockstep, says
    decide() exactly where A's pass started nothing. Returns the decide() count and
    both schedules."""
    a = schedlab.Simulation(w, backfill="easy", **opts)
    b = schedlab.Simulation(w, backfill="easy", **opts)
    nothing = 0
    while (pa := a.pending_decision()) is not None:
        pb = b.pending_decision()
        assert pb is not None and (pb.now, pb.queue) == (pa.now, pa.queue)
        queue = pa.queue
        a.decide(order=queue)
        start = pa.state.start_time
        if all(start[j] != start[j] for j in queue):
            b.decide()
            nothing += 1
        else:
            b.decide(order=queue)
    assert b.pending_decision() is None
    return nothing, a.result().start.tolist(), b.result().start.tolist()


@pytest.mark.parametrize("kernel", ["python", "compiled"])
def test_twin_oracle_on_kth_pool(swf_dir: Path, kernel: str) -> None:
    kth = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    w = Workload.from_jobs(list(kth)[:800], header=kth.header)
    nothing, a, b = _twin(w, procs=128, backfill_options={"kernel": kernel})
    assert nothing > 100
    assert a == b
    assert a == schedlab.simulate(w, procs=128, backfill="easy", progress=False).start.tolist()


@pytest.mark.parametrize("kernel", ["python", "compiled"])
def test_twin_oracle_on_kth_platform(swf_dir: Path, tmp_path: Path, kernel: str) -> None:
    w = _kth_platform(swf_dir, 1200)
    plat = _write(tmp_path, "disj", DISJ)
    nothing, a, b = _twin(w, platform=plat, backfill_options={"kernel": kernel})
    assert nothing > 100
    assert a == b


# ------------------------------------------------------------------ finding 2
def _due_at_100(third: bool = True) -> Workload:
    """Job 1 (10 procs) runs 0-100; job 2 (10 procs, submitted at 1) is reserved
    at 100; job 3 (1 proc) arrives at 150."""
    n = 3 if third else 2
    return _arrays(
        job_number=[1, 2, 3][:n],
        submit_time=[0, 1, 150][:n],
        run_time=[100, 100, 10][:n],
        requested_processors=[10, 10, 1][:n],
        requested_time=[100, 100, 10][:n],
    )


def test_conservative_holding_a_due_reservation_runs_to_the_next_event(
    platforms: dict[str, Path],
) -> None:
    """decide() where job 2's reservation is due: no point again at t=100, the
    held job is planned again and starts at the next event (the arrival at 150)."""
    w = _due_at_100()
    for opts in _settings(platforms):
        sim = schedlab.Simulation(w, backfill="conservative", **opts)
        times = []
        while (p := sim.pending_decision()) is not None:
            times.append(p.now)
            if p.now == 100:
                sim.decide()
            else:
                sim.decide(order=p.queue)
        assert times.count(100.0) == 1, opts
        assert sim.result().start.tolist() == [0.0, 150.0, 250.0], opts


def test_conservative_hold_with_no_event_left_is_refused_and_the_point_kept(
    platforms: dict[str, Path],
) -> None:
    """At t=100 nothing runs and nothing is to come: holding job 2 (due) has no next
    event, so decide() is a UsageError; the point stays and an order starts it."""
    w = _due_at_100(third=False)
    for opts in _settings(platforms):
        sim = schedlab.Simulation(w, backfill="conservative", **opts)
        while (p := sim.pending_decision()) is not None:
            if p.now == 100:
                with pytest.raises(UsageError, match="no event is left at t=100"):
                    sim.decide()
                assert sim.pending_decision() is p
            sim.decide(order=p.queue)
        expected = schedlab.simulate(w, backfill="conservative", progress=False, **opts)
        assert sim.result().start.tolist() == expected.start.tolist() == [0.0, 100.0]


@pytest.mark.parametrize("backfill", ["conservative", "easy"])
def test_random_holds_on_kth_same_schedule_with_both_kernels(
    swf_dir: Path, tmp_path: Path, backfill: str
) -> None:
    """decide() at half the points, on a pool and on disjoint partitions: the run
    ends (no StrategyError), every job starts once, never before it arrives, and
    both kernels give the same schedule."""
    kth = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    pool = Workload.from_jobs(list(kth)[:500], header=kth.header)
    plat = _write(tmp_path, "disj", DISJ)
    for w, where in [(pool, {"procs": 100}), (_kth_platform(swf_dir, 500), {"platform": plat})]:
        starts = []
        for kernel in ["python", "compiled"]:
            rng = random.Random(3)
            sim = schedlab.Simulation(
                w, backfill=backfill, backfill_options={"kernel": kernel}, **where
            )
            holds = 0
            while (p := sim.pending_decision()) is not None:
                if rng.random() < 0.5:
                    try:
                        sim.decide()
                        holds += 1
                        continue
                    except UsageError:
                        pass
                sim.decide(order=p.queue)
            start = np.asarray(sim.result().start)
            assert holds > 100
            assert not np.isnan(start).any()
            assert (start >= np.asarray(w.to_arrays()["submit_time"])).all()
            starts.append(start.tolist())
        assert starts[0] == starts[1], where


# ------------------------------------------------------------------ finding 3
@pytest.mark.parametrize("where", ["single", "two"])
def test_kernel_says_the_python_pass_took_over(platforms: dict[str, Path], where: str) -> None:
    """A manual start hands the compiled node-level EASY pass over to the Python
    pass: stats["kernel"] says so, with the time; without one it says compiled."""
    w = _start_then_nothing_fits()
    opts = {"platform": platforms[where], "backfill_options": {"kernel": "compiled"}}
    sim = schedlab.Simulation(w, backfill="easy", **opts)
    while (p := sim.pending_decision()) is not None:
        if p.now == 50 and p.fits(3):
            sim.decide(start=3)
        else:
            sim.decide(order=p.queue)
    assert sim.result().stats["kernel"] == "compiled, then python from t=50"
    assert schedlab.Simulation(w, backfill="easy", **opts).result().stats["kernel"] == "compiled"
    python = {"platform": platforms[where], "backfill_options": {"kernel": "python"}}
    assert schedlab.Simulation(w, backfill="easy", **python).result().stats["kernel"] == "python"


@pytest.mark.parametrize("where", ["single", "two"])
def test_kernel_after_a_held_conservative_reservation(
    platforms: dict[str, Path], where: str
) -> None:
    w = _due_at_100()
    opts = {"platform": platforms[where], "backfill_options": {"kernel": "compiled"}}
    sim = schedlab.Simulation(w, backfill="conservative", **opts)
    while (p := sim.pending_decision()) is not None:
        if p.now == 100:
            sim.decide()
        else:
            sim.decide(order=p.queue)
    assert sim.result().stats["kernel"] == "compiled, then python from t=100"


# ------------------------------------------------------------------ finding 4
def _four(**column: list[float]) -> dict[str, list[float]]:
    return {
        "job_number": [1, 2, 3, 4],
        "submit_time": [0, 100, 200, 300],
        "run_time": [10, 10, 10, 10],
        "requested_processors": [1, 1, 1, 1],
        "requested_time": [1000, 1000, 1000, 1000],
        **column,
    }


@pytest.mark.parametrize(
    ("name", "values", "row"),
    [
        ("user_id", [3, 3, 3, 3.5], 3),
        ("user_id", [1e300, 1e300, 1e300, 2e300], 0),
        ("group_id", [1, float("inf"), 1, 1], 1),
        ("job_number", [1, 2, 3, 2.0**63], 3),
        ("requested_processors", [1, 2.5, 1, 1], 1),
        ("allocated_processors", [1, 1, 1, -0.5], 3),
        ("status", [1, 1, 0.5, 1], 2),
        ("preceding_job_number", [-1, -1, 1.25, -1], 2),
    ],
)
def test_from_arrays_refuses_non_integral_or_huge_integer_fields(
    name: str, values: list[float], row: int
) -> None:
    with pytest.raises(UsageError, match=f"column {name}: .* at row {row} ") as info:
        Workload.from_arrays(_four(**{name: values}))
    assert "\n" not in str(info.value)
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in _four(**{name: values}).items()}
    with pytest.raises(UsageError, match=f"column {name}"):
        Workload.from_arrays(arrays)


def test_from_arrays_takes_whole_floats_negatives_and_unknown_ids() -> None:
    w = Workload.from_arrays(_four(user_id=[1.0, -5, float("nan"), 2.0**62], status=[1, 0, -1, 5]))
    users = w.to_arrays()["user_id"]
    assert users[:2].tolist() == [1.0, -5.0] and np.isnan(users[2]) and users[3] == 2.0**62
    r = schedlab.simulate(w, procs=4, estimator="easy++", progress=False)
    assert r.estimate.tolist() == [1000.0, 1000.0, 1000.0, 1000.0]
