"""Fixes from the third-party plugin audit (simulator side): the ``depth`` strategy's
reservations under ``check_backfill`` (finding 2), the job named when a component
changes the job table during a run (4), the optional strategy attributes in the
``Backfill`` protocol (6), reproducible ``check_backfill`` failures (7) and
``SchedulerState``'s attributes in the API reference (8)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import schedlab
import schedlab.testing
from schedlab.errors import SimulationError
from schedlab.invariants import ExactEstimates, _run, random_workload
from schedlab.policies.backfill.depth import Depth, DepthReference
from schedlab.sim import Backfill, SchedulerState
from schedlab.testing import check_backfill, workload_from_rows


class PlainDepth:
    """The documented ``depth`` rule written plainly by a third party: the first
    ``k`` blocked jobs get reservations (``state.reserve``) in a profile of the
    running jobs rebuilt at every pass; any other job starts if it fits now
    without delaying them. With ``ignore=True`` it backfills past its own
    reservations (a broken strategy)."""

    name = "plain-depth"
    wants_running = True
    keeps_reservations: Any = "exact"

    def __init__(self, k: int = 3, ignore: bool = False) -> None:
        self.k = k
        self.ignore = ignore

    def bind(self, state: SchedulerState) -> None:
        self.state = state

    def schedule(self, now: float) -> None:
        state = self.state
        state.start_from_head()
        if not state.queue:
            return
        profile = state.running_profile()
        reserved = 0
        for _, j in list(state.queue):
            s, d = state.size[j], state.estimate[j]
            if reserved < self.k:
                at = profile.earliest(s, d)
                if at <= now and s <= state.free:
                    profile.reserve(now, now + d, s)
                    state.start(j)
                else:
                    profile.reserve(at, at + d, s)
                    state.reserve(j, at)
                    reserved += 1
            elif s <= state.free and (self.ignore or profile.fits_now(s, d)):
                profile.reserve(now, now + d, s)
                state.start(j)


def make_plain() -> PlainDepth:
    return PlainDepth(3)


def claiming(strategy: Any, keeps: Any) -> Any:
    strategy.keeps_reservations = keeps
    return strategy


# --------------------------------------------------------------- finding 2


def test_builtin_depth_logs_its_reservations_like_a_plain_copy() -> None:
    for seed in (3, 7):
        w = random_workload(seed, 30)
        for k in (2, 3, 5):
            for estimator in ("requested", ExactEstimates()):
                _, mine, _ = _run(w, "fcfs", Depth(k), True, estimator)
                _, ref, _ = _run(w, "fcfs", DepthReference(k), True, estimator)
                _, theirs, _ = _run(w, "fcfs", PlainDepth(k), True, estimator)
                assert mine.reservation_log, f"depth {k} logged no reservation"
                # the fast pass logs the plain rule's reservations, job for job
                assert mine.reservation_log == ref.reservation_log
                assert ref.reservation_log == theirs.reservation_log


def test_depth_declares_what_it_keeps() -> None:
    assert Depth(1).keeps_reservations is True
    assert Depth(2).keeps_reservations == "exact"
    assert DepthReference(4).keeps_reservations == "exact"
    depth = schedlab.get_registry().backfill("depth")
    assert depth.factory(depth=3).keeps_reservations == "exact"


def test_depth_moves_reservations_later_under_over_estimates() -> None:
    """Why ``depth`` declares ``"exact"``: with requested times (jobs ending early),
    re-planning in priority order starts some reserved job after its first
    reservation; with exact estimates none."""
    late_requested = late_exact = 0
    for seed in range(40):
        w = random_workload(seed, 30)
        for estimator in ("requested", ExactEstimates()):
            _, state, _ = _run(w, "fcfs", Depth(3), True, estimator)
            late = sum(
                state.start_time[j] > moves[0][1] + 1e-9
                for j, moves in state.reservation_log.items()
            )
            if estimator == "requested":
                late_requested += late
            else:
                late_exact += late
    assert late_requested > 0
    assert late_exact == 0


@pytest.mark.parametrize("k", [3, 5])
def test_builtin_and_plain_copy_are_treated_alike(k: int) -> None:
    def builtin() -> Any:
        return schedlab.get_registry().backfill("depth").factory(depth=k)

    def plain() -> Any:
        return PlainDepth(k)

    # as declared ("exact"): both pass, both checked under exact estimates
    check_backfill(builtin, seeds=range(12))
    check_backfill(plain, seeds=range(12))
    # claiming more (reservations kept under over-estimates too): both fail alike
    messages = []
    for factory in (builtin, plain):
        with pytest.raises(AssertionError, match="after its first reservation") as info:
            check_backfill(
                lambda f=factory: claiming(f(), True), seeds=range(40), policies=["fcfs"]
            )
        messages.append(str(info.value))
    # the same seed, run, job, start and reservation
    assert messages[0] == messages[1]


def test_exact_claim_is_checked_under_exact_estimates() -> None:
    with pytest.raises(AssertionError, match=r"estimator exact.*after its first reservation"):
        check_backfill(lambda: PlainDepth(2, ignore=True), seeds=range(25))


def test_a_strategy_keeping_no_reservations_is_not_held_to_them() -> None:
    check_backfill(lambda: claiming(PlainDepth(2, ignore=True), False), seeds=range(6))


def test_a_bad_keeps_reservations_value_is_refused() -> None:
    with pytest.raises(ValueError, match=r"keeps_reservations='always'.*True, False or 'exact'"):
        check_backfill(lambda: claiming(PlainDepth(2), "always"), seeds=range(1))


# --------------------------------------------------------------- finding 7


def test_a_failure_names_the_seed_and_a_public_reproduction() -> None:
    with pytest.raises(AssertionError) as info:
        check_backfill(lambda: claiming(make_plain(), True), seeds=range(25))
    first = str(info.value)
    assert "\n" not in first
    # the lambda cannot be named: a placeholder
    assert "backfill=<your strategy>" in first

    class Claims(PlainDepth):
        keeps_reservations = True

    def make_claims() -> Claims:
        return Claims(3)

    with pytest.raises(AssertionError) as info:
        check_backfill(make_claims, seeds=range(25))
    message = str(info.value)
    seed = int(re.match(r"seed (\d+), policy fcfs", message).group(1))  # type: ignore[union-attr]
    found = re.search(r"job (\d+) \(index (\d+)\) started at (\S+), after", message)
    assert found, message
    job, start = int(found.group(1)), float(found.group(3).rstrip(","))
    recipe = re.search(r"reproduce: (schedlab\.simulate\(.*?\)); or ", message)
    assert recipe, message
    assert f"schedlab.testing.random_workload({seed}, 30)" in recipe.group(1)
    again_call = f"schedlab.testing.check_backfill(make_claims, seeds=[{seed}], jobs=30, "
    assert again_call + "policies=['fcfs'])" in message
    # the recipe uses public names only and gives the failing start
    result = eval(recipe.group(1), {"schedlab": schedlab, "make_claims": make_claims})
    numbers = result.workload.to_arrays()["job_number"].tolist()
    starts = dict(zip(numbers, result.start.tolist(), strict=True))
    assert starts[job] == pytest.approx(start)
    # and the check_backfill call fails the same way
    with pytest.raises(AssertionError) as again:
        check_backfill(make_claims, seeds=[seed], jobs=30, policies=["fcfs"])
    assert str(again.value) == message


def test_random_workload_is_public() -> None:
    assert "random_workload" in schedlab.testing.__all__
    w = schedlab.testing.random_workload(3, 30)
    assert len(w) == 30


# --------------------------------------------------------------- finding 4


class Writer:
    """Writes into the job table during the run."""

    name = "writer"

    def bind(self, state: SchedulerState) -> None:
        self.state = state

    def schedule(self, now: float) -> None:
        self.state.size[1] = 1
        self.state.start_from_head()


class KeyWriter:
    def bind(self, table: Any) -> None:
        self.table = table

    def key(self, job: int, now: float) -> int:
        self.table.size[0] = 3
        return job


class RunTimeWriter:
    def bind(self, table: Any) -> None:
        self.table = table

    def key(self, job: int, now: float) -> int:
        self.table.run_time[2] = 7.5
        return job


ROWS = [(0, 10, 2, 10), (1, 10, 3, 10), (2, 20, 1, 30), (3, 5, 1, 5)]


@pytest.mark.parametrize(
    ("policy", "backfill", "expected"),
    [
        (
            "fcfs",
            Writer(),
            r"backfill 'writer' .*during the run: size of job 2 \(index 1\) is 1, was 3",
        ),
        (
            KeyWriter(),
            "easy",
            r"policy 'KeyWriter' .*during the run: size of job 1 \(index 0\) is 3, was 2",
        ),
        (
            RunTimeWriter(),
            "easy",
            r"during the run: run_time of job 3 \(index 2\) is 7\.5, was 20\.0",
        ),
    ],
)
def test_a_change_during_the_run_names_the_job_and_both_values(
    policy: Any, backfill: Any, expected: str
) -> None:
    w = workload_from_rows(ROWS, procs=4)
    with pytest.raises(SimulationError, match=expected):
        schedlab.simulate(w, policy=policy, backfill=backfill, progress=False)


def test_a_killed_job_is_named_with_its_effective_run_time() -> None:
    rows = [(0, 10, 2, 10), (1, 50, 3, 20), (2, 20, 1, 30), (3, 5, 1, 5)]

    class KilledWriter(RunTimeWriter):
        def key(self, job: int, now: float) -> int:
            self.table.run_time[1] = 99.0
            return job

    w = workload_from_rows(rows, procs=4)
    with pytest.raises(SimulationError, match=r"run_time of job 2 \(index 1\) is 99\.0, was 20\.0"):
        schedlab.simulate(w, policy=KilledWriter(), backfill="easy", progress=False)


# --------------------------------------------------------------- finding 6


@pytest.mark.parametrize(
    "attribute",
    ["keeps_reservations", "supports_platform", "for_platform()", "accepts_manual_starts"],
)
def test_the_backfill_protocol_lists_the_optional_attributes(attribute: str) -> None:
    doc = Backfill.__doc__ or ""
    assert f"``{attribute}" in doc


def test_plugins_guide_lists_the_optional_attributes() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "plugins.md").read_text("utf-8")
    for attribute in (
        "keeps_reservations",
        "supports_platform",
        "for_platform()",
        "accepts_manual_starts",
        "monotone_reservations",
    ):
        assert f"`{attribute}" in text, attribute


# --------------------------------------------------------------- finding 8


STATE_ATTRIBUTES = (
    "now procs free queue key_of size estimate submit estimated_end start_time end_time "
    "running arrays new_jobs finished_since_pass real_event passes sorted_keys machine "
    "demand partition_of reservation reservation_log"
).split()


def test_scheduler_state_attributes_have_doc_comments_autodoc_renders() -> None:
    """The API reference (autodoc of ``schedlab.sim``) renders an instance
    attribute of ``SchedulerState`` when ``__init__`` gives it a ``#:`` comment."""
    pycode = pytest.importorskip("sphinx.pycode")
    docs = pycode.ModuleAnalyzer.for_module("schedlab.sim.state").find_attr_docs()
    missing = [a for a in STATE_ATTRIBUTES if ("SchedulerState", a) not in docs]
    assert not missing
    assert "module docstring" not in (SchedulerState.__doc__ or "")


def test_a_change_is_named_when_sizes_come_from_allocated_processors() -> None:
    rows = [
        {"submit_time": 0, "run_time": 10, "allocated_processors": 2, "requested_time": 10},
        {"submit_time": 1, "run_time": 10, "allocated_processors": 3, "requested_time": 10},
        {"submit_time": 2, "run_time": 20, "allocated_processors": 1, "requested_time": 30},
    ]
    w = workload_from_rows(rows, procs=4)
    with pytest.raises(SimulationError, match=r"size of job 2 \(index 1\) is 1, was 3"):
        schedlab.simulate(w, policy="fcfs", backfill=Writer(), progress=False)
