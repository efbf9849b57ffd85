"""Invariant checks for backfilling strategies, schedlab's own and third parties'.

:func:`check_backfill` runs a strategy on random workloads (seeded, so a failure
reproduces) with several priority policies and checks what every schedule must
satisfy, whatever the algorithm:

* every job starts at or after its submission and runs for its (simulated) run
  time; no more processors are in use at any instant than the machine has;
* every job runs (no job is left waiting with no event ahead), also when estimates
  are raised while jobs run (predictions of half the run time, corrected stepwise
  and to the requested time: :mod:`schedlab.sim.correction`; a strategy that keeps
  its own view of the running jobs implements ``on_estimate_raised``);
* the same input gives the same schedule (determinism);
* with FCFS and exact estimates killed at the requested time, a job that was given
  a reservation (``state.reserve`` or ``state.log_reservation``) starts no later
  than the first one it got, unless the strategy says otherwise
  (``keeps_reservations = False``); with ``monotone_reservations`` no
  reservation ever moves later.

The same checks run in schedlab's test suite for every registered strategy;
:func:`check_schedule` is the feasibility part alone, for a result of your own.
Use it in a plugin's tests::

    from schedlab.testing import check_backfill

    def test_my_strategy_keeps_the_invariants():
        check_backfill(MyStrategy)             # or the registered name: "mine"
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .model import Header, Workload


class LargestFirst:
    """A priority policy for the checks: widest job first (no plugin needed)."""

    name = "largest-first"

    def bind(self, table: Any) -> None:
        self.size = table.size

    def key(self, job: int, now: float) -> int:
        return -self.size[job]


class ShortestEstimateFirst:
    """A priority policy for the checks: shortest estimate first."""

    name = "shortest-estimate-first"

    def bind(self, table: Any) -> None:
        self.estimate = table.estimate

    def key(self, job: int, now: float) -> float:
        return float(self.estimate[job])


class ExactEstimates:
    """A run-time estimator for the checks: the real run times (perfect estimates)."""

    name = "exact"

    def estimates(self, table: Any) -> list[float]:
        return list(table.run_time)


class ShortPredictions:
    """A predictor for the checks: half the real run time, corrected by ``mode``
    (``tsafrir`` or ``requested``) when a job outlives it, so that running jobs'
    estimates are raised during the run."""

    def __init__(self, mode: str) -> None:
        from .sim.correction import Correction

        self.name = f"short-{mode}"
        self.correction = Correction(mode)
        self.correct = self.correction.correct

    def bind(self, table: Any) -> None:
        self.correction.bind(table)

    def estimates(self, table: Any) -> list[float]:
        return [r / 2 for r in table.run_time]

    def __str__(self) -> str:
        return self.name


#: FCFS (the default policy, by name) and two orders that let jobs overtake.
DEFAULT_POLICIES: tuple[Any, ...] = ("fcfs", LargestFirst(), ShortestEstimateFirst())


def random_workload(seed: int, jobs: int = 30, procs: int | None = None) -> Workload:
    """A small random workload (seeded): bursts of arrivals, sizes up to the machine,
    requested times that are sometimes exact and sometimes over-estimated."""
    rng = np.random.default_rng(seed)
    machine = int(procs if procs is not None else rng.integers(1, 17))
    submit = np.sort(rng.integers(0, 80, jobs))
    run = rng.integers(0, 50, jobs)
    over = rng.integers(0, 40, jobs)
    exact = rng.random(jobs) < 0.3
    requested = np.where(exact, np.maximum(run, 1), run + over + 1)
    size = rng.integers(1, machine + 1, jobs)
    header = Header()
    header.set("MaxProcs", machine)
    return Workload.from_arrays(
        {
            "job_number": np.arange(1, jobs + 1),
            "submit_time": submit,
            "run_time": run,
            "requested_time": requested,
            "requested_processors": size,
            "user_id": rng.integers(1, 4, jobs),
            "status": np.ones(jobs, dtype=np.int64),
        },
        header=header,
    )


def check_schedule(result: Any, procs: int) -> None:
    """Feasibility of a simulated schedule (a :class:`~schedlab.sim.result.Result`):
    starts after submissions, run times kept, never more processors in use than
    ``procs``. An ``AssertionError`` says what broke."""
    cols = result.workload.to_arrays()
    start, end = result.start, result.end
    submit = cols["submit_time"]
    size = cols["allocated_processors"]
    late = np.flatnonzero(~(start >= submit))
    assert not len(late), f"job rows {late.tolist()} started before their submission"
    assert np.allclose(end - start, cols["run_time"]), "a job ran for other than its run time"
    # Ends before starts at equal times: a job ending at t frees its processors for
    # one starting at t.
    events = sorted(
        [(e, 0, -s) for e, s in zip(end.tolist(), size.tolist(), strict=True)]
        + [(b, 1, s) for b, s in zip(start.tolist(), size.tolist(), strict=True)]
    )
    used = 0
    for t, _, delta in events:
        used += delta
        assert used <= procs, f"{used} processors in use at t={t:g} on a machine of {procs}"


def _run(workload: Workload, policy: Any, backfill: Any, kill: bool, estimator: Any) -> Any:
    from .sim.runner import run_simulation

    seen: dict[str, Any] = {}

    def inspect(engine: Any) -> None:
        engine.state.reservation_log = {}
        seen["state"] = engine.state
        seen["strategy"] = engine.strategy

    result = run_simulation(
        workload,
        policy=policy,
        backfill=backfill,
        procs=None,
        estimator=estimator,
        kill=kill,
        dependencies=False,
        policy_options=None,
        backfill_options=None,
        estimator_options=None,
        registry=None,
        progress=False,
        inspect=inspect,
    )
    return result, seen["state"], seen["strategy"]


def check_backfill(
    strategy: Callable[[], Any] | str,
    *,
    seeds: Iterable[int] = range(25),
    jobs: int = 30,
    policies: Iterable[Any] = DEFAULT_POLICIES,
) -> None:
    """Run ``strategy`` (a factory returning a fresh strategy object, or a registered
    name) on ``len(seeds)`` random workloads of ``jobs`` jobs under each policy and
    check every invariant in the module docstring. An ``AssertionError`` names the
    seed, the policy and what broke."""

    def fresh() -> Any:
        return strategy if isinstance(strategy, str) else strategy()

    for seed in seeds:
        workload = random_workload(seed, jobs)
        procs = int(workload.header.machine_size() or 0)
        for policy in policies:
            where = f"seed {seed}, policy {getattr(policy, 'name', policy)}"
            configurations = (
                (True, "requested"),
                (False, "requested"),
                (True, ExactEstimates()),
                (True, ShortPredictions("tsafrir")),
                (False, ShortPredictions("requested")),
            )
            for kill, estimator in configurations:
                result, state, _ = _run(workload, policy, fresh(), kill, estimator)
                try:
                    check_schedule(result, procs)
                except AssertionError as exc:
                    raise AssertionError(f"{where}, kill={kill}, {estimator}: {exc}") from None
                assert len(result) == len(workload), f"{where}: jobs lost"
            first, state, used = _run(workload, policy, fresh(), True, "requested")
            again, _, _ = _run(workload, policy, fresh(), True, "requested")
            assert first.start.tolist() == again.start.tolist(), f"{where}: not deterministic"
            _check_reservations(where, policy, state, used)


def _check_reservations(where: str, policy: Any, state: Any, strategy: Any) -> None:
    log = state.reservation_log or {}
    if getattr(strategy, "monotone_reservations", False):
        for job, moves in log.items():
            times = [t for _, t in moves]
            assert all(b <= a for a, b in itertools.pairwise(times)), (
                f"{where}: job index {job} had its reservation moved later: {times}"
            )
    if policy == "fcfs" and getattr(strategy, "keeps_reservations", True):
        for job, moves in log.items():
            assert state.start_time[job] <= moves[0][1] + 1e-9, (
                f"{where}: job index {job} started at {state.start_time[job]:g}, after "
                f"its first reservation at {moves[0][1]:g}"
            )


__all__ = ["check_backfill", "check_schedule", "random_workload"]
