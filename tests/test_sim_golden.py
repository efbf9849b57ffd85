"""Golden schedules: small hand-made workloads whose expected start and end of every
job were worked out by hand (the reasoning is in each docstring).

A job is ``(submit, run, requested, processors)`` plus optional keyword fields;
expected schedules are ``[(start, end), ...]`` in input order.
"""

from __future__ import annotations

from typing import Any

import pytest
import schedlab
from schedlab.model import Header, Workload


def workload(jobs: list[tuple], procs: int | None = None, **columns: list[Any]) -> Workload:
    header = Header()
    if procs is not None:
        header.set("MaxProcs", procs)
    arrays: dict[str, list[Any]] = {
        "job_number": [i + 1 for i in range(len(jobs))],
        "submit_time": [j[0] for j in jobs],
        "run_time": [j[1] for j in jobs],
        "requested_time": [j[2] for j in jobs],
        "requested_processors": [j[3] for j in jobs],
        "status": [1] * len(jobs),
    }
    arrays.update(columns)
    return Workload.from_arrays(arrays, header=header)


def schedule(
    jobs: list[tuple], procs: int, policy: Any = "fcfs", backfill: str = "easy", **options: Any
) -> list[tuple[float, float]]:
    columns = options.pop("columns", {})
    result = schedlab.simulate(
        workload(jobs, procs, **columns),
        policy=policy,
        backfill=backfill,
        progress=False,
        **options,
    )
    return list(zip(result.start.tolist(), result.end.tolist(), strict=True))


# ----------------------------------------------------------------------------- FCFS


def test_single_job_starts_at_submission():
    assert schedule([(5, 10, 10, 2)], 4) == [(5, 10 + 5)]


def test_fcfs_without_backfilling_runs_in_arrival_order():
    """J1 takes the machine; J2 and J3 (2 procs each) start together when it ends."""
    jobs = [(0, 10, 10, 4), (1, 5, 5, 2), (2, 5, 5, 2)]
    assert schedule(jobs, 4, backfill="none") == [(0, 10), (10, 15), (10, 15)]


def test_no_backfilling_blocks_a_small_job_behind_the_head():
    """J2 (2 procs) does not fit beside J1 (3 of 4); J3 (1 proc) would fit but
    waits behind J2 and starts with it at 10."""
    jobs = [(0, 10, 10, 3), (1, 5, 5, 2), (2, 3, 3, 1)]
    assert schedule(jobs, 4, backfill="none") == [(0, 10), (10, 15), (10, 13)]


def test_depth_zero_is_no_backfilling():
    jobs = [(0, 10, 10, 3), (1, 5, 5, 2), (2, 3, 3, 1)]
    assert schedule(jobs, 4, backfill="depth", backfill_options={"depth": "0"}) == [
        (0, 10),
        (10, 15),
        (10, 13),
    ]


# ----------------------------------------------------------------------------- EASY


def test_easy_backfills_a_job_that_fits_beside_the_head():
    """Same workload as above: J3 (1 proc, ends at 5) ends before J2's reservation
    at 10, so EASY starts it at 2."""
    jobs = [(0, 10, 10, 3), (1, 5, 5, 2), (2, 3, 3, 1)]
    assert schedule(jobs, 4) == [(0, 10), (10, 15), (2, 5)]


def test_easy_backfills_a_job_ending_before_the_reservation():
    """10 procs. J1 6 procs until 100; J2 (8) reserved at 100; J3 (4 procs,
    estimate 40) ends by 42 <= 100: backfilled at 2, really ends at 32."""
    jobs = [(0, 100, 100, 6), (1, 50, 50, 8), (2, 30, 40, 4)]
    assert schedule(jobs, 10) == [(0, 100), (100, 150), (2, 32)]


def test_easy_backfills_on_processors_left_over_at_the_reservation():
    """J2 needs 8 of the 10 free at 100, leaving 2 extra: J3 (2 procs, 200 s) ends
    after the shadow time but only uses the extra processors."""
    jobs = [(0, 100, 100, 6), (1, 50, 50, 8), (2, 200, 200, 2)]
    assert schedule(jobs, 10) == [(0, 100), (100, 150), (2, 202)]


def test_easy_refuses_a_job_that_would_delay_the_head():
    """J3 (3 procs, 200 s) fits now (4 free) but would hold 3 > 2 extra processors
    past J2's reservation: refused; it runs after J2."""
    jobs = [(0, 100, 100, 6), (1, 50, 50, 8), (2, 200, 200, 3)]
    assert schedule(jobs, 10) == [(0, 100), (100, 150), (150, 350)]


def test_easy_extra_processors_are_used_up():
    """J3 (1 proc) takes one of the 2 extra processors; J4 (2 procs, long) no
    longer fits in the remaining extra one and waits."""
    jobs = [(0, 100, 100, 6), (1, 50, 50, 8), (2, 200, 200, 1), (3, 200, 200, 2)]
    assert schedule(jobs, 10) == [(0, 100), (100, 150), (2, 202), (150, 350)]


def test_easy_several_backfills_and_a_recomputed_reservation():
    """J3 ends before the shadow, J4 uses the extra processors, J5 finds no free
    processor at 4 and is backfilled when J3 ends at 22 (reservation still 100,
    extra now 0, J5 ends by 32)."""
    jobs = [
        (0, 100, 100, 6),
        (1, 50, 50, 8),
        (2, 20, 30, 2),
        (3, 200, 200, 2),
        (4, 10, 10, 1),
    ]
    assert schedule(jobs, 10) == [(0, 100), (100, 150), (2, 22), (3, 203), (22, 32)]


def test_easy_head_starts_early_when_a_job_ends_before_its_estimate():
    """J1 asks 100 s but ends at 20: J2 starts at 20, J3 after it."""
    jobs = [(0, 20, 100, 4), (1, 10, 10, 4), (5, 10, 10, 2)]
    assert schedule(jobs, 4) == [(0, 20), (20, 30), (30, 40)]


# ----------------------------------------------------------------------- conservative

EASY_VS_CONSERVATIVE = [(0, 100, 100, 6), (1, 50, 50, 8), (2, 10, 10, 10), (3, 200, 200, 2)]


def test_easy_backfills_a_job_that_delays_the_second_waiting_job():
    """EASY protects J2 only: J4 (2 procs, 200 s) uses the extra processors at 3
    and J3 (the whole machine) waits for it until 203."""
    assert schedule(EASY_VS_CONSERVATIVE, 10) == [(0, 100), (100, 150), (203, 213), (3, 203)]


def test_conservative_refuses_a_job_that_would_delay_any_reservation():
    """Conservative also protects J3, reserved at 150: J4 would hold 2 processors
    over [150, 160) where none are free, so it is reserved at 160."""
    assert schedule(EASY_VS_CONSERVATIVE, 10, backfill="conservative") == [
        (0, 100),
        (100, 150),
        (150, 160),
        (160, 360),
    ]


def test_depth_two_protects_the_first_two_waiting_jobs():
    """With two reservations J2 and J3 are both protected, as under conservative."""
    assert schedule(
        EASY_VS_CONSERVATIVE, 10, backfill="depth", backfill_options={"depth": "2"}
    ) == [(0, 100), (100, 150), (150, 160), (160, 360)]


def test_depth_all_is_conservative():
    assert schedule(
        EASY_VS_CONSERVATIVE, 10, backfill="depth", backfill_options={"depth": "all"}
    ) == [(0, 100), (100, 150), (150, 160), (160, 360)]


def test_conservative_backfills_a_job_that_delays_nobody():
    """J3 (4 procs, 90 s) fits in [2, 92) beside J1 without touching J2's slot."""
    jobs = [(0, 100, 100, 6), (1, 50, 50, 8), (2, 90, 90, 4)]
    assert schedule(jobs, 10, backfill="conservative") == [(0, 100), (100, 150), (2, 92)]


def test_conservative_compresses_the_schedule_when_a_job_ends_early():
    """J1 asks 100 s but ends at 20: J2 (reserved at 100) moves to 20 and J3
    (reserved at 150) to J2's end at 70."""
    jobs = [(0, 20, 100, 6), (1, 50, 50, 8), (2, 10, 10, 10)]
    assert schedule(jobs, 10, backfill="conservative") == [(0, 20), (20, 70), (70, 80)]


def test_conservative_compression_moves_two_jobs_to_the_same_instant():
    """J2 (5 procs) and J3 (5 procs) are both reserved at 100 behind J1 (the whole
    machine, asks 100 s); J1 ends at 50 and both move to 50."""
    jobs = [(0, 50, 100, 10), (1, 100, 100, 5), (2, 10, 10, 5)]
    assert schedule(jobs, 10, backfill="conservative") == [(0, 50), (50, 150), (50, 60)]


def test_conservative_compression_keeps_priority_order():
    """J1 (whole machine) ends early at 10 instead of 100. J2 (6 procs, 50 s) and J3
    (6 procs, 10 s) were reserved at 100 and 150; J2 moves first (to 10), then J3
    moves to J2's end at 60, not before it."""
    jobs = [(0, 10, 100, 10), (1, 50, 50, 6), (2, 10, 10, 6)]
    assert schedule(jobs, 10, backfill="conservative") == [(0, 10), (10, 60), (60, 70)]


def test_conservative_reservation_at_the_end_of_a_running_job():
    """A job reserved at a running job's estimated end starts right then."""
    jobs = [(0, 30, 30, 8), (1, 10, 10, 4)]
    assert schedule(jobs, 10, backfill="conservative") == [(0, 30), (30, 40)]


# ------------------------------------------------------------------- kills, overruns


def test_a_job_is_killed_at_its_requested_time():
    result = schedlab.simulate(workload([(0, 100, 50, 4), (1, 10, 10, 4)], 4), progress=False)
    assert list(zip(result.start, result.end, strict=True)) == [(0, 50), (50, 60)]
    assert result.killed.tolist() == [True, False]
    cols = result.workload.to_arrays()
    assert cols["status"].tolist() == [0, 1]
    assert cols["run_time"].tolist() == [50, 10]
    assert result.stats["killed"] == 1


def test_no_kill_lets_a_job_run_past_its_request():
    """J1 asks 50 s and runs 100 s: J2 (whole machine) starts when it really ends."""
    jobs = [(0, 100, 50, 4), (1, 10, 10, 4)]
    assert schedule(jobs, 4, kill=False) == [(0, 100), (100, 110)]


def test_a_job_past_its_estimate_counts_as_ending_now():
    """J1 (2 procs) asks 50 s, runs 100 s (no kill). At 60 the scheduler believes J1
    ends "now", so J2's reservation is now and J3 (2 procs, 5 s) may not run in the
    2 free processors: it would end after the reservation, with no extra left."""
    jobs = [(0, 100, 50, 2), (1, 10, 10, 4), (60, 5, 5, 2)]
    assert schedule(jobs, 4, kill=False) == [(0, 100), (100, 110), (110, 115)]


def test_conservative_with_a_job_past_its_estimate_replaces_stale_reservations():
    """J2 is reserved at J1's estimated end (50) but J1 runs to 100: the reservation
    goes stale and J2 starts when J1 really ends."""
    jobs = [(0, 100, 50, 4), (1, 10, 10, 4), (2, 5, 5, 4)]
    assert schedule(jobs, 4, backfill="conservative", kill=False) == [
        (0, 100),
        (100, 110),
        (110, 115),
    ]


def test_actual_estimator_gives_perfect_estimates():
    """With perfect estimates J3 (runs 30, asks 300) is known to end by 32 < 100
    and is backfilled; with requested times it would end at 302 and is refused."""
    jobs = [(0, 100, 100, 6), (1, 50, 50, 8), (2, 30, 300, 3)]
    assert schedule(jobs, 10, estimator="actual") == [(0, 100), (100, 150), (2, 32)]
    assert schedule(jobs, 10) == [(0, 100), (100, 150), (150, 180)]


# ----------------------------------------------------------------- same instant


def test_a_finish_is_processed_before_a_submission_at_the_same_time():
    assert schedule([(0, 10, 10, 4), (10, 5, 5, 4)], 4) == [(0, 10), (10, 15)]


def test_simultaneous_submissions_keep_workload_order():
    assert schedule([(0, 10, 10, 4), (0, 10, 10, 4)], 4) == [(0, 10), (10, 20)]


def test_jobs_are_simulated_in_submit_order_whatever_the_input_order():
    """The second row is submitted first; results stay in input order."""
    assert schedule([(5, 10, 10, 4), (0, 10, 10, 4)], 4) == [(10, 20), (0, 10)]


def test_a_zero_length_job_frees_its_processors_at_the_same_instant():
    assert schedule([(0, 0, 10, 2), (0, 5, 5, 2)], 2) == [(0, 0), (0, 5)]


def test_two_finishes_at_one_instant_free_room_for_the_head():
    jobs = [(0, 10, 10, 2), (0, 10, 10, 2), (1, 5, 5, 4)]
    assert schedule(jobs, 4) == [(0, 10), (0, 10), (10, 15)]


# ----------------------------------------------------------------- priority policies

SHORT_AND_LONG = [(0, 10, 10, 1), (1, 5, 8, 1), (2, 3, 8, 1), (3, 1, 2, 1)]


def test_sjf_orders_by_estimate_with_ties_by_job_order():
    assert schedule(SHORT_AND_LONG, 1, policy="sjf") == [(0, 10), (11, 16), (16, 19), (10, 11)]


def test_ljf_orders_by_longest_estimate():
    assert schedule(SHORT_AND_LONG, 1, policy="ljf") == [(0, 10), (10, 15), (15, 18), (18, 19)]


SIZES = [(0, 10, 10, 4), (1, 5, 5, 3), (2, 5, 5, 1), (3, 5, 5, 2)]


def test_smallest_first():
    assert schedule(SIZES, 4, policy="smallest", backfill="none") == [
        (0, 10),
        (15, 20),
        (10, 15),
        (10, 15),
    ]


def test_largest_first():
    """J2 (3) first at 10; J4 (2) is next but only 1 is free, and without
    backfilling J3 waits behind it; both start at 15."""
    assert schedule(SIZES, 4, policy="largest", backfill="none") == [
        (0, 10),
        (10, 15),
        (15, 20),
        (15, 20),
    ]


def test_wfp3_prefers_the_job_that_waited_longest_relative_to_its_estimate():
    """At 100: J2 waited 99 s for a 100 s estimate (0.99^3), J3 50 s for 10 s
    (5^3): J3 runs first."""
    jobs = [(0, 100, 100, 1), (1, 100, 100, 1), (50, 10, 10, 1)]
    assert schedule(jobs, 1, policy="wfp3") == [(0, 100), (110, 210), (100, 110)]


def test_unicef_prefers_small_short_jobs():
    """At 100: J2 (4 procs) scores 90 / (2 * 10) = 4.5, J3 (serial, counted as 2
    procs) 80 / (1 * 10) = 8: J3 first; J2 then waits for the whole machine."""
    jobs = [(0, 100, 100, 4), (10, 10, 10, 4), (20, 10, 10, 1)]
    assert schedule(jobs, 4, policy="unicef", backfill="none") == [
        (0, 100),
        (110, 120),
        (100, 110),
    ]


PSP_JOBS = [(0, 10, 100, 1), (0, 10, 10, 1), (1, 5, 5, 1), (2, 5, 5, 1)]
PSP_USERS = {"user_id": [1, 2, 1, 2]}


def test_psp_runs_accurate_users_first():
    """User 1's first job used 10 of 100 s (accuracy 0.1, class a1); user 2's used
    all its time (a5). At 20, user 2's J4 overtakes user 1's J3."""
    assert schedule(PSP_JOBS, 1, policy="psp", columns=PSP_USERS) == [
        (0, 10),
        (10, 20),
        (25, 30),
        (20, 25),
    ]
    assert schedule(PSP_JOBS, 1, policy="fcfs", columns=PSP_USERS) == [
        (0, 10),
        (10, 20),
        (20, 25),
        (25, 30),
    ]


def test_psp_new_users_get_the_configured_class():
    """At 10 user 1 has accuracy 0.5 (a3) and user 2 no history. By default the
    newcomer gets a5 and goes first; with new_user_class=1 user 1 goes first."""
    jobs = [(0, 10, 20, 1), (1, 5, 5, 1), (2, 5, 5, 1)]
    users = {"user_id": [1, 2, 1]}
    assert schedule(jobs, 1, policy="psp", columns=users) == [(0, 10), (10, 15), (15, 20)]
    assert schedule(
        jobs, 1, policy="psp", columns=users, policy_options={"new_user_class": "1"}
    ) == [(0, 10), (15, 20), (10, 15)]


# ----------------------------------------------------------------- dependencies


def test_dependent_job_is_submitted_think_time_after_its_predecessor_ends():
    """J2 depends on J1 with 3 s think time: submitted at 10 + 3 = 13."""
    jobs = [(0, 10, 10, 4), (5, 5, 5, 1)]
    columns = {"preceding_job_number": [-1, 1], "think_time": [-1, 3]}
    assert schedule(jobs, 4, dependencies=True, columns=columns) == [(0, 10), (13, 18)]
    assert schedule(jobs, 4, columns=columns) == [(0, 10), (10, 15)]


def test_unknown_think_time_is_the_recorded_gap():
    """J3 depends on J2, recorded to end at 10 and J3 submitted at 12 (gap 2). In
    the simulation J2 waits for J1 and ends at 30, so J3 is submitted at 32."""
    jobs = [(0, 20, 20, 4), (0, 10, 10, 4), (12, 5, 5, 1)]
    columns = {
        "preceding_job_number": [-1, -1, 2],
        "think_time": [-1, -1, -1],
        "wait_time": [0, 0, 0],
    }
    result = schedlab.simulate(workload(jobs, 4, **columns), dependencies=True, progress=False)
    assert list(zip(result.start, result.end, strict=True)) == [(0, 20), (20, 30), (32, 37)]
    out = result.workload.to_arrays()
    assert out["submit_time"].tolist() == [0, 0, 32]
    assert out["wait_time"].tolist() == [0, 20, 0]
    assert result.original_submit.tolist() == [0, 0, 12]
    assert result.stats["dependencies_honoured"] == 1


def test_dependency_on_a_missing_job_is_ignored_and_counted():
    jobs = [(0, 10, 10, 4), (5, 5, 5, 1)]
    columns = {"preceding_job_number": [-1, 99], "think_time": [-1, 3]}
    result = schedlab.simulate(workload(jobs, 4, **columns), dependencies=True, progress=False)
    assert result.start.tolist() == [0, 10]
    assert result.stats["dependencies_ignored"] == 1


@pytest.mark.parametrize("backfill", ["none", "easy", "conservative"])
def test_every_backfill_gives_the_same_schedule_when_nothing_can_jump(backfill):
    """Jobs that each need the whole machine run back to back whatever the strategy."""
    jobs = [(0, 10, 10, 4), (1, 10, 20, 4), (2, 10, 10, 4)]
    assert schedule(jobs, 4, backfill=backfill) == [(0, 10), (10, 20), (20, 30)]
