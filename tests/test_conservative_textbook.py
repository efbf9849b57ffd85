"""Conservative backfilling compresses as the textbook does (Mu'alem and Feitelson
2001): at every early end, every waiting job, in priority order, moves to its
earliest start that delays no other reservation.

The built-in strategy bounds that search by a horizon; the room a moving job
vacates must reach the jobs before it in priority order at the next compression.
It did not: the case below, found by an outside audit, left all four processors
idle from 99 to 111 while the only waiting job, which needed four, waited for its
old reservation at 111 (in every implementation, the reference included)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedlab.policies.backfill.reference import ReferenceConservative
from schedlab.testing import simulated_starts, workload_from_rows

# (submit, run, processors, requested) on 4 processors.
IDLE_MACHINE = [(58, 41, 4, 41), (59, 15, 2, 15), (41, 53, 2, 55), (30, 54, 1, 128), (35, 4, 1, 4)]


@pytest.mark.parametrize(
    ("backfill", "options"),
    [
        ("conservative", {"kernel": "python"}),
        ("conservative", {"kernel": "compiled"}),
        ("depth", {"depth": "all"}),
        (ReferenceConservative(), None),
    ],
    ids=["python", "compiled", "depth-all", "reference"],
)
def test_a_slot_vacated_by_a_later_job_reaches_the_earlier_one(backfill: Any, options: Any) -> None:
    # Job 4 (1 proc, run 54, requested 128) starts at 30; job 3 (2 procs, 53 of 55 s)
    # at 41; job 1 (4 procs) arrives at 58 and is reserved at 158 (job 4's estimated
    # end), job 2 (2 procs, 15 s) at 59 in [96, 111). At 84 job 4 ends early: job 1
    # moves to 111 (behind job 2's reservation), then job 2 starts at 84, vacating
    # [96, 111). At 94 job 3 ends early: job 1's earliest start is now 99 (job 2 holds
    # two processors until then), and nothing else waits or is reserved.
    w = workload_from_rows(IDLE_MACHINE, procs=4)
    kwargs = {"backfill_options": options} if options else {}
    starts = simulated_starts(w, policy="fcfs", backfill=backfill, kill=True, **kwargs)
    assert starts == {1: 99.0, 2: 84.0, 3: 41.0, 4: 30.0, 5: 35.0}


def _textbook_starts(
    rows: list[tuple[int, int, int, int]], procs: int, policy: str
) -> dict[int, float]:
    """Conservative backfilling written from the textbook, independently of
    schedlab's profile and strategies: requested times as estimates, jobs killed at
    them, ``fcfs`` or ``sjf`` (shortest request first, ties by job order). At each
    instant: the ends; after an early end every waiting job, in priority order,
    moves to its earliest start before its reservation; the arrivals take their
    earliest starts in priority order; the jobs whose reservation has come start."""
    jobs = {n: row for n, row in enumerate(rows, 1)}  # (submit, run, size, requested)

    def key(n: int) -> tuple[int, int]:
        return (jobs[n][3] if policy == "sjf" else jobs[n][0], n)

    planned: dict[int, tuple[int, int]] = {}  # job -> (start, size): running or reserved
    running: dict[int, int] = {}  # job -> actual end
    start: dict[int, float] = {}

    def free_at(t: int, skip: int) -> int:
        used = sum(
            jobs[n][2] for n, (b, _) in planned.items() if n != skip and b <= t < b + jobs[n][3]
        )
        return procs - used

    def earliest(n: int, now: int) -> int:
        size, length = jobs[n][2], jobs[n][3]
        bounds = {now} | {b + jobs[m][3] for m, (b, _) in planned.items() if m != n}
        for c in sorted(t for t in bounds if t >= now):
            inside = {c} | {
                t
                for m, (b, _) in planned.items()
                if m != n
                for t in (b, b + jobs[m][3])
                if c < t < c + length
            }
            if all(free_at(t, n) >= size for t in inside):
                return c
        raise AssertionError("no start found")

    waiting: list[int] = []
    now = min(r[0] for r in rows)
    while True:
        early = False
        for n, end in list(running.items()):
            if end == now:
                del running[n]
                early |= planned[n][0] + jobs[n][3] > now
                del planned[n]
        if early:
            for n in sorted(waiting, key=key):
                if planned[n][0] > now:
                    del planned[n]
                    at = earliest(n, now)
                    planned[n] = (at, jobs[n][2])
        for n in sorted((m for m in jobs if jobs[m][0] == now), key=key):
            planned[n] = (earliest(n, now), jobs[n][2])
            waiting.append(n)
        for n in sorted(waiting, key=key):
            if planned[n][0] == now:
                waiting.remove(n)
                start[n] = float(now)
                running[n] = now + min(jobs[n][1], jobs[n][3])
        times = [jobs[n][0] for n in jobs if jobs[n][0] > now]
        times += list(running.values()) + [planned[n][0] for n in waiting]
        if not times:
            return start
        now = min(times)


def test_the_textbook_oracle_gives_the_hand_derived_case() -> None:
    assert _textbook_starts(IDLE_MACHINE, 4, "fcfs") == {1: 99, 2: 84, 3: 41, 4: 30, 5: 35}


@st.composite
def _crowded(draw: Any) -> tuple[list[tuple[int, int, int, int]], int]:
    # A small machine, requests well above run times: early ends and moves are common.
    procs = draw(st.integers(2, 6))
    rows = []
    submit = 0
    for _ in range(draw(st.integers(3, 25))):
        submit += draw(st.integers(0, 15))
        requested = draw(st.integers(2, 60))
        run = draw(st.integers(1, requested))
        rows.append((submit, run, draw(st.integers(1, procs)), requested))
    return rows, procs


@pytest.mark.parametrize(
    "backfill", ["python", "compiled", "reference"], ids=["python", "compiled", "reference"]
)
@pytest.mark.parametrize("policy", ["fcfs", "sjf"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_crowded())
def test_every_conservative_is_the_textbook_one(
    case: tuple[list[tuple[int, int, int, int]], int], policy: str, backfill: str
) -> None:
    rows, procs = case
    w = workload_from_rows(rows, procs=procs)
    if backfill == "reference":
        got = simulated_starts(w, policy=policy, backfill=ReferenceConservative(), kill=True)
    else:
        options = {"kernel": backfill}
        got = simulated_starts(
            w, policy=policy, backfill="conservative", backfill_options=options, kill=True
        )
    assert got == _textbook_starts(rows, procs, policy)
