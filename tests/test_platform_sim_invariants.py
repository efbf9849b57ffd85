"""Hypothesis invariants of the node-level simulator on random small platforms
(node groups with cores, memory, GPUs and a consumable; overlapping partitions,
exclusive or shared, limits and tiers) and random workloads (memory per core,
GPUs, node counts, partitions, unknown partitions, overruns):

* no node is over-committed in any dimension at any instant, no job runs outside
  its partition, every job starts after its submission and is either simulated
  or excluded with one reason (:func:`platform_sim_check.check_node_schedule`);
* EASY never delays its head's reservation and conservative never moves a
  reservation later, unless a job ran past its estimate before (the only thing
  that may legitimately push a reservation back); with no overrun at all
  (jobs killed at their requested time) every reserved job starts no later than
  its first reservation;
* the same input gives the same schedule, allocations included.
"""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from schedlab.platform import NodeGroup, Partition, Platform

_spec = importlib.util.spec_from_file_location(
    "platform_sim_check", Path(__file__).with_name("platform_sim_check.py")
)
assert _spec is not None and _spec.loader is not None
check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check)

GIB = 2**30
ALLOCATIONS = ("first-fit", "best-fit", "spread", "contiguous")


@st.composite
def platforms(draw: Any, tiers: bool = True) -> Platform:
    n_groups = draw(st.integers(1, 3))
    groups = []
    for g in range(n_groups):
        groups.append(
            NodeGroup(
                f"g{g}",
                count=draw(st.integers(1, 3)),
                cores=draw(st.integers(1, 4)),
                memory=draw(st.sampled_from([None, 2 * GIB, 4 * GIB, 8 * GIB])),
                gpus=draw(st.integers(0, 2)),
                consumables={"lic": draw(st.integers(0, 2))},
            )
        )
    names = [g.name for g in groups]
    n_parts = draw(st.integers(1, 3))
    parts = []
    used: set[str] = set()
    for p in range(n_parts):
        nodes = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
        if p == n_parts - 1:  # every group used by some partition
            nodes = sorted(set(nodes) | (set(names) - used))
        used |= set(nodes)
        count = sum(g.count for g in groups if g.name in nodes)
        parts.append(
            Partition(
                f"p{p}",
                tuple(nodes),
                max_time=draw(st.sampled_from([None, None, None, 60])),
                max_nodes=draw(st.sampled_from([None, None, *range(1, count + 1)])),
                priority_tier=draw(st.integers(0, 1)) if tiers else 0,
                sharing=draw(st.sampled_from(["shared", "exclusive"])),
            )
        )
    return Platform(tuple(groups), tuple(parts))


@st.composite
def workloads(draw: Any, platform: Platform) -> Any:
    """Jobs sized for ``platform`` (most fit; a few are excluded for a reason)."""
    n_partitions = len(platform.partitions)
    cores = max(g.cores * g.count for g in platform.node_groups)
    gpus = any(g.gpus for g in platform.node_groups)
    lic = any(g.consumables.get("lic") for g in platform.node_groups)
    n = draw(st.integers(3, 14))
    jobs = []
    for i in range(n):
        run = draw(st.integers(0, 40))
        extras: dict[str, Any] = {}
        partition = draw(st.sampled_from([None, *range(n_partitions), *range(n_partitions)]))
        if draw(st.integers(0, 19)) == 0:
            extras["partition"] = "nowhere"
        elif partition is not None:
            extras["partition"] = f"p{partition}"
        if gpus and draw(st.booleans()):
            extras["gpus"] = draw(st.integers(1, 2))
        if lic and draw(st.integers(0, 3)) == 0:
            extras["lic"] = 1
        if draw(st.integers(0, 3)) == 0:
            extras["nodes"] = draw(st.integers(1, 2))
        jobs.append(
            check.job(
                i + 1,
                draw(st.integers(0, 50)),
                draw(st.integers(1, cores)),
                run,
                memory_gib=draw(st.sampled_from([None, 0.5, 1, 2])),
                requested_time=max(1, run + draw(st.integers(-10, 30))),
                **extras,
            )
        )
    note(
        "jobs (number, submit, cores, run, requested, memory KB/core, extras): "
        + repr(
            [
                (j.job_number, j.submit_time, j.requested_processors, j.run_time,
                 j.requested_time, j.requested_memory, j.extras)
                for j in jobs
            ]
        )
    )  # fmt: skip
    return check.workload(*jobs)


def pass_times(run_: Any) -> dict[int, float]:
    return run_.engine.pass_time  # type: ignore[no-any-return]


def logged_run(workload: Any, platform: Platform, backfill: str, allocation: str, kill: bool):
    """A run with the reservation log and the time of every pass recorded."""
    times: dict[int, float] = {}
    original = check.run

    result = original(
        workload,
        platform,
        backfill,
        allocation=allocation,
        kill=kill,
        log_reservations=True,
        on_pass=times,
    )
    result.engine.pass_time = times
    return result


def overran_before(run_: Any, t: float) -> bool:
    """Whether some job was running past its estimate before time ``t``."""
    state = run_.state
    for j in range(len(state.table)):
        e = state.estimated_end[j]
        if e == e and e < t and state.end_time[j] > e:
            return True
    return False


def check_reservations(run_: Any, kill: bool) -> None:
    """Reservations never move later unless a job overran before the move; with
    no overrun possible (kill), every reserved job starts by its first one."""
    state = run_.state
    times = pass_times(run_)
    for j, moves in (state.reservation_log or {}).items():
        for (_, a), (p, b) in itertools.pairwise(moves):
            if b > a + 1e-9:
                assert not kill, f"job index {j}: reservation moved later {a} -> {b}"
                assert overran_before(run_, times[p] + 1e-9), (
                    f"job index {j}: reservation moved later {a} -> {b} at t={times[p]} "
                    "with no job past its estimate"
                )
        if kill:
            assert state.start_time[j] <= moves[0][1] + 1e-9, (
                f"job index {j} started at {state.start_time[j]}, after its first "
                f"reservation {moves[0][1]}"
            )


SETTINGS = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@SETTINGS
@given(data=st.data())
def test_node_schedules_are_feasible_for_every_strategy_and_allocation(data: Any) -> None:
    platform = data.draw(platforms())
    workload = data.draw(workloads(platform))
    allocation = data.draw(st.sampled_from(ALLOCATIONS))
    kill = data.draw(st.booleans())
    for backfill in ("none", "easy", "conservative"):
        first = check.run(workload, platform, backfill, allocation=allocation, kill=kill)
        check.check_node_schedule(first)
        again = check.run(workload, platform, backfill, allocation=allocation, kill=kill)
        assert first.starts() == again.starts(), f"{backfill}: not deterministic"
        assert {j: a[0].tolist() for j, a in first.allocations.items()} == {
            j: a[0].tolist() for j, a in again.allocations.items()
        }, f"{backfill}: allocations not deterministic"


@SETTINGS
@given(data=st.data())
def test_easy_never_delays_its_heads_and_conservative_keeps_its_reservations(
    data: Any,
) -> None:
    # One tier: a later job of a higher tier may legitimately become EASY's head.
    platform = data.draw(platforms(tiers=False))
    workload = data.draw(workloads(platform))
    allocation = data.draw(st.sampled_from(ALLOCATIONS))
    kill = data.draw(st.booleans())
    for backfill in ("easy", "conservative"):
        r = logged_run(workload, platform, backfill, allocation, kill)
        check.check_node_schedule(r)
        check_reservations(r, kill)
        if backfill == "conservative" and kill:
            # No overrun: every job starts exactly at its last reservation.
            for j, moves in (r.state.reservation_log or {}).items():
                assert r.state.start_time[j] == moves[-1][1], f"job index {j}"


def test_the_strategies_do_reserve_on_these_platforms() -> None:
    """The reservation checks above are not vacuous: a crowded platform gives
    EASY heads and conservative reservations, some moving earlier."""
    platform = Platform(
        (NodeGroup("n", 2, 2, memory=4 * GIB, gpus=1),),
        (Partition("p", ("n",), sharing="shared"),),
    )
    rng = np.random.default_rng(5)
    jobs = [
        check.job(
            i + 1,
            int(rng.integers(0, 20)),
            int(rng.integers(1, 4)),
            int(run),
            memory_gib=1,
            requested_time=int(run) + int(rng.integers(0, 20)),
        )
        for i, run in enumerate(rng.integers(1, 30, 20))
    ]
    w = check.workload(*jobs)
    for backfill in ("easy", "conservative"):
        r = logged_run(w, platform, backfill, "first-fit", True)
        log = r.state.reservation_log
        assert len(log) >= 5, backfill
        if backfill == "conservative":  # jobs end early: reservations move earlier
            assert any(m[-1][1] < m[0][1] for m in log.values())
        check_reservations(r, True)


class Fussy:
    """A third-party-like allocation policy that does not find every allocation:
    first-fit, but only while no node of the partition is partly used (so more
    free cores can make it find nothing)."""

    name = "fussy"

    def allocate(self, view: Any, demand: Any) -> Any:
        from schedlab.sim.resources import CORES, take

        free = view.free[view.nodes, CORES]
        cap = view.capacity[view.nodes, CORES]
        if ((free > 0) & (free < cap)).any():
            return None
        return take(view, demand, view.nodes[view.usable(demand)])


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_conservative_keeps_a_reservation_its_allocation_policy_cannot_find_again(
    data: Any,
) -> None:
    groups = (NodeGroup("n", data.draw(st.integers(2, 3)), data.draw(st.integers(1, 3))),)
    platform = Platform(groups, (Partition("p0", ("n",), sharing="shared"),))
    workload = data.draw(workloads(platform))
    times: dict[int, float] = {}
    r = check.run(
        workload, platform, "conservative", allocation=Fussy(), kill=True,
        log_reservations=True, on_pass=times,
    )  # fmt: skip
    r.engine.pass_time = times
    check.check_node_schedule(r)
    check_reservations(r, True)
