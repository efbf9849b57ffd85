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
* with FCFS, a job that was given a reservation (``state.reserve`` or
  ``state.log_reservation``) starts no later than the first one it got, as far
  as the strategy's ``keeps_reservations`` promises (checked on every job the
  log holds; a strategy that logs no reservation is checked for nothing here):

  - ``True`` (the default): with exact estimates (the real run times, so no job
    ends before its estimate) and with the requested times as estimates (jobs
    killed at their requested time, so over-estimates: jobs end early and the
    schedule is re-planned), both runs with ``kill=True``. EASY and
    conservative keep it;
  - ``"exact"``: with exact estimates only. A strategy that re-plans the
    reservations of several jobs in priority order at every pass, as ``depth``
    with ``k >= 2`` does, keeps no more: when a job ends early, an earlier job
    may take the slot a later job's reservation held;
  - ``False``: never (``slurm``, which starts jobs only at its cycles and rounds
    its reservations);

* with ``monotone_reservations``, no reservation ever moved later (under every
  policy, with the requested times as estimates and ``kill=True``).

A failure is an ``AssertionError`` of one line naming the seed, the policy, the
estimator and ``kill``, and how to reproduce it with public names: the workload is
``schedlab.testing.random_workload(seed, jobs)``, and the message gives the
``schedlab.testing.check_backfill`` call that fails the same way and, where the
configuration has public names (FCFS or a policy given by name, requested times
or exact estimates), the ``schedlab.simulate`` call of the failing run. What the
simulator itself stops a run for (a ``StrategyError`` of the scheduler state, jobs
left waiting: a :class:`~schedlab.errors.SimulationError`) keeps its class and gets
the same one-line message, the original chained; any other exception of the
strategy's code goes on unchanged, with a note giving the same seed,
configuration and reproduction.

The same checks run in schedlab's test suite for every registered strategy;
:func:`check_schedule` is the feasibility part alone, for a result of your own.
Use it in a plugin's tests::

    from schedlab.testing import check_backfill

    def test_my_strategy_keeps_the_invariants():
        check_backfill(MyStrategy)             # or the registered name: "mine"
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .errors import SchedlabError, SimulationError
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


def _keeps(strategy: Any) -> bool | str:
    """The strategy's ``keeps_reservations`` (default ``True``): ``True``, ``False``
    (a numpy bool too) or ``"exact"``; any other value is a ``ValueError`` (a
    truthy string such as ``"no"`` would otherwise read as a promise)."""
    value = getattr(strategy, "keeps_reservations", True)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and value == "exact":
        return "exact"
    name = getattr(strategy, "name", type(strategy).__name__)
    raise ValueError(
        f"backfill {name!r}: keeps_reservations={value!r}: expected True, False or 'exact'"
    )


def _label(value: Any) -> str:
    """A policy or estimator as the messages name it."""
    return str(getattr(value, "name", value))


def _factory_text(strategy: Callable[[], Any] | str) -> str:
    """How a reproduction names the strategy: the registered name, or the factory
    called (``<your strategy>`` for one without a usable name)."""
    if isinstance(strategy, str):
        return repr(strategy)
    name = getattr(strategy, "__name__", "")
    return name if name.isidentifier() else "<your strategy>"


def _recipe(
    strategy: Callable[[], Any] | str,
    seed: int,
    jobs: int,
    policy: Any,
    policies_given: bool,
    estimator: Any,
    kill: bool,
) -> str:
    """One line reproducing a failure with public names (see the module docstring)."""
    made = _factory_text(strategy)
    named = made if isinstance(strategy, str) else f"{made}()"
    check = f"schedlab.testing.check_backfill({made}, seeds=[{seed}], jobs={jobs}"
    if isinstance(policy, str):
        check += f", policies=[{policy!r}])"
    else:
        check += ", policies=[<your policy>])" if policies_given else ")"
    if not (isinstance(policy, str) and isinstance(estimator, str)):
        return f"reproduce: {check}"
    run = (
        f"schedlab.simulate(schedlab.testing.random_workload({seed}, {jobs}), "
        f"policy={policy!r}, backfill={named}, estimator={estimator!r}, kill={kill})"
    )
    return f"reproduce: {run}; or {check}"


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
    name) on ``len(seeds)`` random workloads of ``jobs`` jobs
    (:func:`random_workload`) under each policy and check every invariant in the
    module docstring: feasibility and no job lost under five estimate
    configurations, determinism, and the reservation guarantees the strategy
    declares (``keeps_reservations``: ``True`` by default, ``"exact"`` or
    ``False``; ``monotone_reservations``), with FCFS. A ``ValueError`` if
    ``keeps_reservations`` holds another value.

    An ``AssertionError`` of one line names the seed, the policy, the estimator,
    ``kill`` and what broke, and how to reproduce it with public names
    (``schedlab.testing.random_workload(seed, jobs)``, the failing
    ``schedlab.simulate`` call where its configuration has public names, and the
    ``check_backfill`` call that fails the same way). A ``SimulationError`` the
    simulator stops a run with (a ``StrategyError`` ...) is raised again as the
    same class with that one line; any other exception of the strategy's code
    gets it as a note."""

    def fresh() -> Any:
        return strategy if isinstance(strategy, str) else strategy()

    seeds, policies = list(seeds), tuple(policies)
    policies_given = policies != DEFAULT_POLICIES
    for seed in seeds:
        workload = random_workload(seed, jobs)
        procs = int(workload.header.machine_size() or 0)
        for policy in policies:
            case = functools.partial(_failure, strategy, seed, jobs, policy, policies_given)
            exact = ExactEstimates()
            configurations = (
                (True, "requested"),
                (False, "requested"),
                (True, exact),
                (True, ShortPredictions("tsafrir")),
                (False, ShortPredictions("requested")),
            )
            for kill, estimator in configurations:
                result, state, used = _checked_run(workload, policy, fresh(), kill, estimator, case)
                try:
                    check_schedule(result, procs)
                except AssertionError as exc:
                    raise case(estimator, kill, str(exc)) from None
                if len(result) != len(workload):
                    raise case(estimator, kill, f"{len(workload) - len(result)} jobs lost")
                if estimator is exact and _keeps(used) in (True, "exact"):
                    _check_kept(policy, state, functools.partial(case, exact, True))
            first, state, used = _checked_run(workload, policy, fresh(), True, "requested", case)
            again, _, _ = _checked_run(workload, policy, fresh(), True, "requested", case)
            if first.start.tolist() != again.start.tolist():
                raise case("requested", True, "not deterministic (two runs, other starts)")
            _check_reservations(policy, state, used, functools.partial(case, "requested", True))


def _checked_run(
    workload: Workload,
    policy: Any,
    backfill: Any,
    kill: bool,
    estimator: Any,
    case: Callable[[Any, bool, str], AssertionError],
) -> Any:
    """:func:`_run`, with what the simulator itself stops the run for (a
    :class:`~schedlab.errors.SimulationError`: an invariant the scheduler state
    refuses, jobs left waiting ...) raised again as the same class with the
    one-line message of a failed check (seed, policy, estimator, ``kill``, the
    reproduction), chained to the original; any other exception of the strategy
    (a bug in its code) goes on unchanged, with a note giving the same."""
    try:
        return _run(workload, policy, backfill, kill, estimator)
    except SimulationError as exc:
        message = str(case(estimator, kill, str(exc)))
        try:
            again = type(exc)(message)
        except Exception:  # a subclass taking other arguments
            again = SimulationError(message)
        raise again from exc
    except SchedlabError:
        raise  # the call's own problem (an unknown strategy name ...)
    except Exception as exc:
        exc.add_note(f"check_backfill: {case(estimator, kill, '')}")
        raise


def _failure(
    strategy: Callable[[], Any] | str,
    seed: int,
    jobs: int,
    policy: Any,
    policies_given: bool,
    estimator: Any,
    kill: bool,
    what: str,
) -> AssertionError:
    """The one-line error of a failed check: where, what (``""``: where and how
    only), and how to reproduce it."""
    recipe = _recipe(strategy, seed, jobs, policy, policies_given, estimator, kill)
    what = f": {what}" if what else ""
    return AssertionError(
        f"seed {seed}, policy {_label(policy)}, estimator {_label(estimator)}, kill={kill}"
        f"{what}; {recipe}"
    )


def _job(state: Any, job: int) -> str:
    """A job as the messages name it: its SWF number and index."""
    return f"job {state.table.job_number[job]} (index {job})"


def _check_kept(policy: Any, state: Any, fail: Callable[[str], AssertionError]) -> None:
    """With FCFS: every job the log holds started no later than its first reservation."""
    if policy != "fcfs":
        return
    for job, moves in (state.reservation_log or {}).items():
        if not state.start_time[job] <= moves[0][1] + 1e-9:
            raise fail(
                f"{_job(state, job)} started at {state.start_time[job]:g}, after its first "
                f"reservation at {moves[0][1]:g}"
            )


def _check_reservations(
    policy: Any, state: Any, strategy: Any, fail: Callable[[str], AssertionError]
) -> None:
    """The run with the requested times: ``monotone_reservations`` and, for
    ``keeps_reservations = True``, :func:`_check_kept`."""
    log = state.reservation_log or {}
    if getattr(strategy, "monotone_reservations", False):
        for job, moves in log.items():
            times = [t for _, t in moves]
            if not all(b <= a for a, b in itertools.pairwise(times)):
                raise fail(f"{_job(state, job)} had its reservation moved later: {times}")
    if _keeps(strategy) is True:
        _check_kept(policy, state, fail)


__all__ = ["check_backfill", "check_schedule", "random_workload"]
