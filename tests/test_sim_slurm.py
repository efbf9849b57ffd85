"""The ``slurm`` backfilling strategy: golden schedules worked out by hand (the
reasoning is in each docstring), its options and their errors, determinism, and its
shortcut (planning stops after the last job that could start) against the full plan.

A job is ``(submit, run, requested, processors)``; schedules are ``[(start, end)]``
in input order. Unless a test says otherwise the options are Slurm's defaults:
backfill cycles at the clock's multiples of 30 s, a main-scheduler run every 60 s,
times planned to 60 s, a window of 1,440 minutes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from schedlab.errors import UsageError
from schedlab.model import Header, Workload
from schedlab.policies.backfill.slurm import SlurmBackfill
from schedlab.sim.runner import run_simulation
from schedlab.testing import check_schedule


def workload(jobs: list[tuple], procs: int, users: list[int] | None = None) -> Workload:
    header = Header()
    header.set("MaxProcs", procs)
    arrays: dict[str, Any] = {
        "job_number": [i + 1 for i in range(len(jobs))],
        "submit_time": [j[0] for j in jobs],
        "run_time": [j[1] for j in jobs],
        "requested_time": [j[2] for j in jobs],
        "requested_processors": [j[3] for j in jobs],
        "status": [1] * len(jobs),
    }
    if users is not None:
        arrays["user_id"] = users
    return Workload.from_arrays(arrays, header=header)


def run(
    jobs: list[tuple],
    procs: int,
    backfill: Any = "slurm",
    users: list[int] | None = None,
    **options: Any,
) -> tuple[list[tuple[float, float]], dict[int, list[float]]]:
    """The schedule and every reservation each job got (``{job index: [times]}``)."""
    seen: dict[str, Any] = {}

    def inspect(engine: Any) -> None:
        engine.state.reservation_log = {}
        seen["state"] = engine.state

    result = run_simulation(
        workload(jobs, procs, users),
        policy="fcfs",
        backfill=backfill,
        procs=None,
        estimator="requested",
        kill=True,
        dependencies=False,
        policy_options=None,
        backfill_options=options or None,
        estimator_options=None,
        registry=None,
        progress=False,
        inspect=inspect,
    )
    log = {j: [t for _, t in moves] for j, moves in seen["state"].reservation_log.items()}
    return list(zip(result.start.tolist(), result.end.tolist(), strict=True)), log


def schedule(jobs: list[tuple], procs: int, backfill: Any = "slurm", **options: Any) -> list:
    return run(jobs, procs, backfill, **options)[0]


# A 3-processor job runs 0-100 on a 4-processor machine; a 4-processor job waits
# behind it; a 1-processor job could use the free processor meanwhile.
BLOCKED = [(0, 100, 100, 3), (10, 50, 50, 4), (10, 20, 20, 1)]


# ------------------------------------------------------------------ periodic cycles


def test_a_job_that_could_backfill_waits_for_the_next_cycle() -> None:
    """At t=10 the main scheduler stops at J2 (4 processors, 1 free): J3 waits, although
    EASY starts it at once (it ends at 30, before J2's shadow time 100). J4 arrives
    at 20: a pass, but no cycle (20 is not a multiple of 30). The cycle at 30 plans
    J1's end at 60 (100 rounded down to 60 s), reserves J2 over [60, 120), and starts
    J3 (one processor over [30, 50), clear of the reservation); J4 is reserved after
    J2. J1 ends at 100: J2 starts (main scheduler), ends at 150, then J4 starts."""
    jobs = [*BLOCKED, (20, 10, 10, 4)]
    assert schedule(jobs, 4) == [(0, 100), (100, 150), (30, 50), (150, 160)]
    assert schedule(jobs, 4, backfill="easy") == [(0, 100), (100, 150), (10, 30), (150, 160)]


def test_cycles_come_at_the_multiples_of_bf_interval() -> None:
    """With bf_interval=20 the cycles come at 0, 20, 40 ...: J3 starts at 20; with
    bf_interval=10, at 10 (the cycle right after the submissions at that instant).
    With 45, the cycle at 45 finds that J3 would run into J2's reservation at 60, and
    at 90 that J2 is due at once (J1's planned end, 60, has passed): J3 runs after J2."""
    assert schedule(BLOCKED, 4, bf_interval=20)[2] == (20, 40)
    assert schedule(BLOCKED, 4, bf_interval=45)[2] == (150, 170)
    assert schedule(BLOCKED, 4, bf_interval=10)[2] == (10, 30)


def test_the_main_scheduler_looks_at_default_queue_depth_jobs() -> None:
    """Two 1-processor jobs arrive at 5 on an empty machine. With default_queue_depth=1
    the event starts J1 only; J2 starts at the backfill cycle at 30 (or, with no
    cycle before, at the main scheduler's full run at 60, or 90)."""
    jobs = [(5, 100, 100, 1), (5, 10, 10, 1)]
    assert schedule(jobs, 4) == [(5, 105), (5, 15)]
    assert schedule(jobs, 4, default_queue_depth=1) == [(5, 105), (30, 40)]
    assert schedule(jobs, 4, default_queue_depth=1, bf_interval=10800) == [(5, 105), (60, 70)]
    assert schedule(jobs, 4, default_queue_depth=1, bf_interval=10800, sched_interval=90) == [
        (5, 105),
        (90, 100),
    ]


class Overtake:
    """A dynamic priority: job index 2 goes first from t=50 on (as an age factor
    would let a job overtake), otherwise submission order."""

    dynamic = True

    def key(self, job: int, now: float) -> int:
        return 0 if job == 2 and now >= 50 else job + 1


def test_the_periodic_main_scheduler_starts_a_job_the_queue_order_moved_up() -> None:
    """J1 holds 3 of 4 processors until 200; J2 (2 processors) blocks the queue, J3
    (1 processor) waits behind it. No backfill cycle comes before 10800. From 50 on
    the priority puts J3 first: the main scheduler's periodic run at 60 starts it.
    With FCFS it waits for J1's end (200)."""
    jobs = [(0, 200, 200, 3), (5, 10, 10, 2), (5, 10, 10, 1)]
    w = workload(jobs, 4)
    dynamic = schedlab.simulate(w, policy=Overtake(), backfill=SlurmBackfill(bf_interval=10800))
    assert dynamic.start.tolist() == [0, 200, 60]
    fcfs = schedlab.simulate(w, backfill=SlurmBackfill(bf_interval=10800))
    assert fcfs.start.tolist() == [0, 200, 200]


# ------------------------------------------------------------------------ bf_window


def test_a_job_beyond_the_window_gets_no_reservation_and_is_overtaken() -> None:
    """J1 holds 2 of 4 processors until 1000 (planned 960); J2 needs all 4, J3 2 for
    2000 s. With bf_window=1 (minute) the cycle at 30 looks up to 90: J2's start
    (960) is beyond, so it gets no reservation, and J3 starts at once; J2 waits for
    J3 (2030). With the default window J2 is reserved over [960, 1020), J3 would
    overlap it, so J3 waits; J2 starts at 1000, J3 when it ends (1100)."""
    jobs = [(0, 1000, 1000, 2), (5, 100, 100, 4), (5, 2000, 2000, 2)]
    narrow, narrow_log = run(jobs, 4, bf_window=1)
    assert narrow == [(0, 1000), (2030, 2130), (30, 2030)]
    # (J2 is reserved only once its start, J3's planned end 1980, is within the window)
    assert min(narrow_log[1]) == 1980
    wide, wide_log = run(jobs, 4)
    assert wide == [(0, 1000), (1000, 1100), (1100, 3100)]
    assert wide_log[1][0] == 960


# ------------------------------------------------------------------ bf_max_job_test


def test_jobs_beyond_bf_max_job_test_are_not_considered() -> None:
    """With bf_max_job_test=1 every cycle tests J2 only: J3 is never backfilled and
    starts when J2 ends (150). With 2 it starts at the first cycle (30)."""
    one, log = run(BLOCKED, 4, bf_max_job_test=1)
    assert one == [(0, 100), (100, 150), (150, 170)]
    assert min(log[2]) > 100  # first tested when J2 no longer waited
    assert schedule(BLOCKED, 4, bf_max_job_test=2)[2] == (30, 50)


def test_bf_max_job_user_skips_a_users_further_jobs() -> None:
    """J2 and J3 belong to user 2, J4 (like J3) to user 3. With bf_max_job_user=1 the
    cycle at 30 tests J2, skips J3 and starts J4 on the free processor; J3 waits until
    J2 ends (150). Without the limit J3 takes the processor at 30, and J4 is blocked
    by J2's reservation (from the instant after 60, when J1's planned end is due)."""
    jobs = [*BLOCKED, (10, 20, 20, 1)]
    users = [1, 2, 2, 3]
    limited, _ = run(jobs, 4, users=users, bf_max_job_user=1)
    assert limited == [(0, 100), (100, 150), (150, 170), (30, 50)]
    free, _ = run(jobs, 4, users=users)
    assert free == [(0, 100), (100, 150), (30, 50), (150, 170)]


# -------------------------------------------------------------------- bf_resolution


def test_planned_times_are_rounded_down_to_bf_resolution() -> None:
    """J3 (1 processor, 40 s) at the cycle at 30: with bf_resolution=1 J1 ends at 100,
    J2 is reserved at 100, and J3 ([30, 70)) starts. With the default 60 s, J1's end
    is planned at 60, J2 reserved at 60, J3 would overlap it and waits: nothing changes
    until J1 ends (the cycles in between have no new work), J2 runs 100-150, then J3."""
    jobs = [(0, 100, 100, 3), (5, 50, 50, 4), (5, 40, 40, 1)]
    exact, exact_log = run(jobs, 4, bf_resolution=1)
    assert exact == [(0, 100), (100, 150), (30, 70)]
    assert exact_log[1][0] == 100
    rounded, rounded_log = run(jobs, 4)
    assert rounded == [(0, 100), (100, 150), (150, 190)]
    assert rounded_log[1][0] == 60
    assert rounded_log[2][0] == 120  # after J2's reservation [60, 120)
    assert schedule(jobs, 4, bf_resolution=3600)[2] == (150, 190)


def test_a_reservation_lasts_at_least_one_resolution_step() -> None:
    """J2 (4 processors, 10 s) is reserved at 60 (J1's planned end): its end (70)
    rounds down to 60, so it holds [60, 120) instead of nothing. J3 (1 processor,
    80 s) would run [30, 110), into it: it is reserved at 120 and waits. J1 ends at
    100, J2 runs 100-110, then J3 starts. (An empty reservation would have let J3 start
    at 30.)"""
    jobs = [(0, 100, 100, 3), (5, 10, 10, 4), (5, 80, 80, 1)]
    sched, log = run(jobs, 4)
    assert log[1][0] == 60 and log[2][0] == 120
    assert sched == [(0, 100), (100, 110), (110, 190)]


# -------------------------------------------------------------------------- bf_continue


def test_bf_continue_continues_the_job_list_at_the_next_cycle() -> None:
    """J1 holds 3 of 4 processors until 200 (planned 180). With bf_max_job_test=1 a
    cycle tests J2 only; J3 is never backfilled and runs after J2 (250). With
    bf_continue the cycle at 30 stops after J2 (reserved over [180, 240)) and is
    continued at 60 with J3, which fits before the reservation and starts then."""
    jobs = [(0, 200, 200, 3), (10, 50, 50, 4), (10, 20, 20, 1)]
    assert schedule(jobs, 4, bf_max_job_test=1) == [(0, 200), (200, 250), (250, 270)]
    assert schedule(jobs, 4, bf_max_job_test=1, bf_continue=True) == [
        (0, 200),
        (200, 250),
        (60, 80),
    ]
    assert schedule(jobs, 4, bf_max_job_test=2)[2] == (30, 50)


# ---------------------------------------------------------------------------- options


def test_defaults_are_slurms() -> None:
    s = SlurmBackfill()
    assert (s.bf_interval, s.bf_window, s.bf_resolution, s.bf_max_job_test) == (30, 1440, 60, 500)
    assert (s.sched_interval, s.default_queue_depth, s.bf_max_job_user) == (60, 100, 0)
    assert s.bf_continue is False


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("bf_interval", "0"),
        ("bf_interval", "10801"),
        ("bf_window", "0"),
        ("bf_window", "43201"),
        ("bf_resolution", "0"),
        ("bf_resolution", "3601"),
        ("bf_max_job_test", "0"),
        ("bf_max_job_user", "-1"),
        ("sched_interval", "0"),
        ("default_queue_depth", "0"),
        ("bf_interval", "1.5"),
        ("bf_window", "day"),
        ("bf_continue", "maybe"),
    ],
)
def test_a_bad_option_value_is_one_line_naming_the_strategy_and_option(
    option: str, value: str
) -> None:
    with pytest.raises(UsageError) as info:
        schedlab.simulate(workload(BLOCKED, 4), backfill="slurm", backfill_options={option: value})
    message = str(info.value)
    assert "\n" not in message
    assert "slurm" in message and f"option {option}=" in message


def test_bad_values_given_as_python_objects_are_refused_too() -> None:
    for kwargs in ({"bf_window": 0}, {"bf_interval": 2.5}, {"bf_continue": "yes"}):
        with pytest.raises(UsageError, match=r"backfill slurm: option \w+="):
            SlurmBackfill(**kwargs)


def test_an_unknown_option_is_named() -> None:
    with pytest.raises(UsageError, match=r"backfill slurm: unknown option 'bf_windwo'"):
        schedlab.simulate(workload(BLOCKED, 4), backfill="slurm", backfill_options={"bf_windwo": 5})


def test_the_cli_prints_one_line_and_exits_2(tmp_path: Path) -> None:
    log = tmp_path / "jobs.swf"
    schedlab.write(workload(BLOCKED, 4), log)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "schedlab",
            "simulate",
            str(log),
            "-b",
            "slurm",
            "--backfill-option",
            "bf_resolution=0",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "bf_resolution" in lines[0] and "slurm" in lines[0], done.stderr


# ----------------------------------------------------------------------- real logs


def first_jobs(path: Path, n: int) -> Workload:
    w = schedlab.read(path)
    return Workload.from_arrays(w.to_arrays().take(np.arange(n)), header=w.header)


@pytest.mark.parametrize(
    "options", [{}, {"bf_continue": True, "bf_max_job_test": 20}, {"bf_max_job_user": 2}]
)
def test_deterministic_feasible_and_the_shortcut_changes_nothing(
    swf_dir: Path, options: dict[str, Any]
) -> None:
    """On 4,000 jobs of LANL-CM5: the same input gives the same schedule, the schedule
    is feasible, and stopping each cycle after the last job that could still start
    gives the schedule of planning every tested job (what runs when reservations are
    logged)."""
    w = first_jobs(swf_dir / "LANL-CM5-1994-4.1-cln.swf.gz", 4000)
    procs = int(w.header.machine_size() or 0)
    first = schedlab.simulate(w, backfill=SlurmBackfill(**options), progress=False)
    again = schedlab.simulate(w, backfill=SlurmBackfill(**options), progress=False)
    assert first.start.tolist() == again.start.tolist()
    check_schedule(first, procs)

    class Planned(SlurmBackfill):
        def bind(self, state: Any) -> None:
            super().bind(state)
            state.reservation_log = {}

    full = schedlab.simulate(w, backfill=Planned(**options), progress=False)
    assert full.start.tolist() == first.start.tolist()


def test_differs_from_easy_and_conservative_on_a_real_log(swf_dir: Path) -> None:
    """Periodic cycles and rounded plans give another schedule than EASY's and
    conservative's on KTH-SP2's first 3,000 jobs; no job starts before a cycle or
    event could start it (every start is at a submission, an end, or a multiple of 30
    or 60 s)."""
    w = first_jobs(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz", 3000)
    slurm = schedlab.simulate(w, backfill="slurm", progress=False)
    for other in ("easy", "conservative"):
        assert schedlab.simulate(w, backfill=other, progress=False).start.tolist() != (
            slurm.start.tolist()
        )
    cols = w.to_arrays()
    events = set(cols["submit_time"].tolist()) | set(slurm.end.tolist())
    for t in slurm.start.tolist():
        assert t in events or t % 30 == 0, t


@pytest.mark.parametrize(
    ("log", "jobs"),
    [("KTH-SP2-1996-2.1-cln.swf.gz", 3000), ("LANL-CM5-1994-4.1-cln.swf.gz", 3000)],
)
def test_a_cycle_every_second_on_exact_times_is_depth_all_replanned(
    swf_dir: Path, log: str, jobs: int
) -> None:
    """With a cycle every second (the logs' times are whole seconds, so a cycle follows
    every event at once), times planned to the second, a 30-day window and no test
    limit, a cycle plans every waiting job from scratch in priority order: the
    schedule of ``Depth(k)`` with k beyond the queue length, which re-plans every
    blocked job at every pass (written independently, in ``depth.py``). Jobs that
    run 0 s are left out: one that starts ends at the same instant, which gives a
    second pass then, where Depth plans again but Slurm's cycle of that second has
    already run."""
    from schedlab.policies.backfill.depth import Depth

    w = first_jobs(swf_dir / log, jobs)
    cols = w.to_arrays()
    w = Workload.from_arrays(cols.take(np.flatnonzero(cols["run_time"] > 0)), header=w.header)
    every = SlurmBackfill(
        bf_interval=1, bf_resolution=1, bf_window=43200, bf_max_job_test=1_000_000
    )
    slurm = schedlab.simulate(w, backfill=every, progress=False)
    depth = schedlab.simulate(w, backfill=Depth(1_000_000), progress=False)
    assert slurm.start.tolist() == depth.start.tolist()
    default = schedlab.simulate(w, backfill="slurm", progress=False)
    assert default.start.tolist() != depth.start.tolist()


@pytest.mark.parametrize("seed", range(20))
def test_the_shortcut_changes_nothing_on_random_workloads(seed: int) -> None:
    """Random small workloads and options (seeded): the schedule with the planning
    shortcut is the schedule of the full plan, and it is feasible."""
    from schedlab.invariants import random_workload

    rng = np.random.default_rng(seed)
    w = random_workload(seed, jobs=60, procs=int(rng.integers(2, 17)))
    options = {
        "bf_interval": int(rng.choice([1, 7, 30])),
        "bf_resolution": int(rng.choice([1, 5, 60])),
        "bf_window": int(rng.choice([1, 2, 1440])),
        "bf_max_job_test": int(rng.choice([1, 3, 500])),
        "bf_max_job_user": int(rng.choice([0, 0, 2])),
        "default_queue_depth": int(rng.choice([1, 100])),
    }

    class Planned(SlurmBackfill):
        def bind(self, state: Any) -> None:
            super().bind(state)
            state.reservation_log = {}

    for policy in ("fcfs", "sjf", "largest"):
        quick = schedlab.simulate(w, policy=policy, backfill=SlurmBackfill(**options))
        full = schedlab.simulate(w, policy=policy, backfill=Planned(**options))
        assert quick.start.tolist() == full.start.tolist(), (policy, options)
        check_schedule(quick, int(w.header.machine_size() or 0))
