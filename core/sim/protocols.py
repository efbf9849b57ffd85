"""The contracts between the simulator engine and the components it drives.

The engine never calls pluggy while it runs: the registry is consulted once per
simulation to build a policy, a backfilling strategy and an estimator from their
plugin records (:class:`~schedlab.plugin_types.PolicySpec` ...), and the engine then
calls the objects below directly.

Jobs are identified by an ``int`` index into the :class:`JobTable` given to
``bind``: index 0 is the first simulated job in submission order (ties broken by the
order of the jobs in the workload). All times are seconds on the workload's clock.

A minimal priority policy, usable without any entry point::

    class Widest:
        '''Largest job first.'''
        def bind(self, jobs):
            self.size = jobs.size
        def key(self, job, now):
            return -self.size[job]

    schedlab.simulate(workload, policy=Widest(), backfill="easy")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs
import numpy as np


@attrs.define(slots=True, eq=False)
class JobTable:
    """The simulated jobs as plain Python lists, indexed by job index.

    Built once per run from the workload's columns; policies and estimators read
    these lists in their hot paths (list indexing is much cheaper than numpy scalar
    access). ``submit`` is the time the job enters the queue in the simulation (equal
    to the trace's submit time unless a dependency delays it; the engine updates it
    when the job is released). ``run_time`` is what the job will really run
    (after the kill rule); a policy must only look at it for finished jobs.
    """

    #: Machine size (processors).
    procs: int
    #: Row of each job in the input workload (a compact ``array('q')`` when built by
    #: the simulator).
    row: Sequence[int]
    #: SWF job number (``-1`` when unknown; a compact ``array('q')`` when built by
    #: the simulator).
    job_number: Sequence[int]
    #: Time each job enters the queue in the simulation, in seconds: the trace's
    #: submit time unless a dependency delays it (updated when it is released).
    submit: list[float]
    #: Processors the job occupies (requested processors, else allocated).
    size: list[int]
    #: Requested time (``nan`` when unknown).
    requested_time: list[float]
    #: Run time in the simulation (after the kill rule).
    run_time: list[float]
    #: The scheduler's estimate, filled when the job is submitted (``nan`` before).
    estimate: list[float]
    #: User number of each job (``-1`` when unknown).
    user: list[int]
    #: Group number of each job (``-1`` when unknown).
    group: list[int]
    #: Queue number of each job (``-1`` when unknown).
    queue: list[int]
    #: Partition number of each job (``-1`` when unknown).
    partition: list[int]
    #: Every SWF column of the simulated jobs, in job-index order (numpy float64,
    #: ``nan`` = unknown), for components that want more than the lists above (a
    #: read-only mapping: the simulator gathers each column on first access).
    columns: Mapping[str, np.ndarray] = attrs.field(factory=dict)

    def __len__(self) -> int:
        return len(self.submit)

    def keep_estimates(self, values: np.ndarray) -> None:
        """After a whole run that made its own predictions: keep the run's
        estimates (float64, by job index) as ``values`` instead of filling
        :attr:`estimate` now. :meth:`estimate_array` reads them as they are;
        the list :attr:`estimate` is filled from them the first time it is read,
        in place, so the references to it taken at ``bind`` (the state's,
        policies' and estimators') see the estimates once it has been read.
        (Filling the list costs a Python float per job, about 10 ms on
        RICC-2010's 447,794 jobs, which the output does not need.)"""
        if type(self) is not JobTable and type(self) is not _JobTableKeptEstimates:
            self.estimate[:] = values.tolist()  # a subclass keeps its own class
            return
        raw = _ESTIMATE_SLOT.__get__(self, JobTable)
        target = raw.target if type(raw) is _KeptEstimates else raw
        _ESTIMATE_SLOT.__set__(self, _KeptEstimates(target, values))
        self.__class__ = _JobTableKeptEstimates

    def estimate_array(self) -> np.ndarray:
        """:attr:`estimate` as a float64 array by job index: the array
        :meth:`keep_estimates` kept while the list was never read (not a copy:
        read it, do not change it), else the list converted."""
        raw = _ESTIMATE_SLOT.__get__(self, JobTable)
        if type(raw) is _KeptEstimates:
            return raw.values
        return np.asarray(raw, dtype=np.float64)


#: The slot that holds :attr:`JobTable.estimate` (the list, or the estimates a
#: whole run kept).
_ESTIMATE_SLOT: Any = JobTable.__dict__["estimate"]


class _KeptEstimates:
    """A whole run's estimates (``values``) waiting to fill a table's list
    (``target``) when it is first read."""

    __slots__ = ("target", "values")

    def __init__(self, target: list[float], values: np.ndarray) -> None:
        self.target = target
        self.values = values


class _JobTableKeptEstimates(JobTable):
    """A :class:`JobTable` whose estimates a whole run kept as an array
    (:meth:`JobTable.keep_estimates`): the first read of :attr:`estimate` fills
    the list and makes the table a plain :class:`JobTable` again (no property
    on the attribute reads of the pass-by-pass loop)."""

    __slots__ = ()

    @property  # type: ignore[override]
    def estimate(self) -> list[float]:
        raw = _ESTIMATE_SLOT.__get__(self, JobTable)
        if type(raw) is _KeptEstimates:
            target = raw.target
            target[:] = raw.values.tolist()
            _ESTIMATE_SLOT.__set__(self, target)
            raw = target
        self.__class__ = JobTable  # type: ignore[assignment]
        return raw  # type: ignore[no-any-return]

    @estimate.setter
    def estimate(self, values: list[float]) -> None:
        _ESTIMATE_SLOT.__set__(self, values)
        self.__class__ = JobTable  # type: ignore[assignment]

    def __reduce_ex__(self, protocol: Any) -> Any:
        # Pickled and copied as the plain table it becomes once the list is read.
        self.estimate  # noqa: B018
        return object.__reduce_ex__(self, protocol)


@runtime_checkable
class Policy(Protocol):
    """A priority policy: orders the wait queue.

    Required:

    ``key(job, now) -> sortable``
        The job's sort key; the queue runs **lowest key first**, ties broken by job
        index (submission order). Called when the job is submitted and whenever the
        engine re-sorts the queue.

    Optional (looked up with ``getattr`` once per run):

    ``dynamic: bool``
        True when keys depend on ``now`` (e.g. waiting-time based policies): the
        queue is re-keyed at every scheduling pass. Default False: a key is computed
        once per job unless a notification below returns True.
    ``rekey_period: float``
        With ``dynamic``: recalculate the keys only at a pass at least this many
        seconds after the previous recalculation, as a production scheduler does
        on a timer (Slurm's ``PriorityCalcPeriod``); a job submitted in between
        gets its key at submission. Default 0: at every pass.
    ``keys(jobs, now) -> sequence``
        Batch version of ``key`` for a list of job indices (vectorise it if you can).
    ``key_array(jobs: numpy int64 array, now) -> numpy float64 array``
        Batch version of ``key`` for a policy whose keys are plain numbers: one
        float64 key per job, equal to ``key(job, now)``. With it the engine
        re-sorts a dynamic policy's queue with numpy (by key, then job index)
        instead of sorting ``(key, job)`` tuples, which counts on long queues;
        preferred over ``keys`` when both exist. Anything but a float64 array of
        the right length, or a NaN key, stops the run with an error naming the
        policy.
    ``static_keys(table: JobTable) -> array``
        Every job's key at its submission at once, as plain numbers (a numpy array
        is best), for a policy whose key depends on the job alone. Used only for
        whole runs (:mod:`schedlab.sim.whole_run`: no dependencies, estimates
        already in ``table.estimate``); without it the engine calls
        ``key(job, submit[job])`` for every job.
    ``bind(table: JobTable) -> None``
        Called once before the run with the job table.
    ``on_submit(job, now)``, ``on_start(job, now)``, ``on_finish(job, now)``
        Notifications. Return True when the keys of jobs already waiting may have
        changed (PSP's user classes do on completions): the engine then re-keys and
        re-sorts the queue before its next scheduling pass.
    """

    def key(self, job: int, now: float) -> Any:
        """Sort key of ``job`` at time ``now`` (lower runs first)."""
        ...


@runtime_checkable
class Estimator(Protocol):
    """A run-time estimator: what the scheduler believes a job will run.

    One of:

    ``estimates(table: JobTable) -> sequence of float``
        Every job's estimate at once, before the run (static estimators).
    ``estimate(job, now) -> float``
        Called once when the job is submitted (history-based estimators may use
        ``on_finish(job, now)`` notifications and ``bind(table)``).

    Optional:

    ``correct(job, elapsed) -> float``
        Called when running ``job`` reaches its estimated end still running,
        ``elapsed`` seconds after its start: the new estimate (seconds from the
        start). The engine raises ``state.estimated_end``, re-sorts
        ``state.running``, tells the strategy (``on_estimate_raised``) and runs a
        pass. :func:`schedlab.sim.make_correction` gives the built-in rules
        (:mod:`schedlab.sim.correction`).
    ``run_stats() -> dict``, ``notes() -> list[str]``
        Counters and sentences for the result (``stats["estimator"]``,
        ``stats["notes"]``).
    ``estimates_column`` (with ``estimates``)
        ``"requested_time"`` or ``"run_time"``: ``estimates(table)`` is exactly
        that column of the table, value for value; a whole run
        (:mod:`schedlab.sim.whole_run`) then takes the array the column was
        prepared from instead of converting the list.

    Without ``correct`` (or when it returns no more than ``elapsed``) a job still
    running after its estimate (an under-estimate, or ``kill=False``) is treated by
    the scheduler as ending "now" until it really ends.
    """


@runtime_checkable
class Backfill(Protocol):
    """A backfilling strategy: decides, at each scheduling pass, which waiting jobs
    start, against the public :class:`~schedlab.sim.state.SchedulerState`.

    Required:

    ``bind(state: SchedulerState) -> None``
        Called once before the run with the state of this simulation (keep it).
    ``schedule(now: float) -> None``
        One scheduling pass at time ``now``: start jobs with ``state.start(job)``
        (the state checks that they wait and fit). Called after the finishes and
        submissions of an instant, when the queue is not empty (or always, with
        ``idle_passes``).

    Optional (looked up once, after ``bind``):

    ``name: str``
        The name results and errors use (default: the plugin's name).
    ``on_submit(job, now)``, ``on_finish(job, now)``
        A job entered the queue (its estimate is known) / ended (its processors are
        free again; an early end leaves ``now < state.estimated_end[job]``).
    ``on_reorder(now)``
        The queue was re-sorted (a dynamic policy, a policy notification, or the
        caller's order in a stepping simulation, and again after that pass).
    ``on_manual_start(job, now)``
        In a stepping simulation (:class:`schedlab.Simulation`), the caller started
        waiting ``job`` outside the strategy's pass: a strategy keeping its own view
        of the queue or of the running jobs updates it.
    ``on_estimate_raised(job, old_end, now)``
        An estimator corrected running ``job``: ``state.estimated_end[job]`` (and
        ``state.running``) now hold its new, later end; a strategy keeping its own
        view of the running jobs updates it (a pass follows at ``now``).
    ``next_wakeup() -> float``
        The earliest time the strategy wants a pass even if nothing happens then (a
        reservation coming due, a periodic pass); ``inf`` for none. Called at every
        event: keep it cheap.
    ``wants_running: bool``
        The state keeps ``state.running`` (running jobs by estimated end) and
        ``state.running_profile()`` works.
    ``wants_arrays: bool``
        The state keeps ``state.arrays`` (numpy views of the waiting jobs).
    ``idle_passes: bool``
        Pass even when the queue is empty.
    ``monotone_reservations: bool``
        The strategy's contract is that a reservation never moves later:
        ``state.reserve`` then refuses a later time (unless released first).
    ``keeps_reservations: bool | str``
        What the strategy promises of the reservations it records
        (``state.reserve``, ``state.log_reservation``), checked with FCFS by
        ``schedlab.testing.check_backfill`` (the simulator does not read it):
        ``True`` (the default), a reserved job starts no later than its first
        reservation, also when jobs end before their estimates (EASY,
        conservative); ``"exact"``, only while no job ends before its estimate
        (``depth`` with ``k >= 2``: re-planning several reservations in priority
        order at every pass, an earlier job may take the slot of a later one when
        a job ends early); ``False``, no promise (``slurm``: starts come at its
        cycles, and its reservations are rounded).
    ``accepts_manual_starts: bool``
        In a stepping simulation (:class:`schedlab.Simulation`) the caller may
        start a job itself (``decide(start=job)``): the strategy follows such
        starts (told through ``on_manual_start``). Without it, such a decision is
        a :class:`~schedlab.errors.UsageError` (strategies that keep reservation
        books, such as ``conservative``, would lose track); ``none`` and ``easy``
        declare it.
    ``run_whole(plan: WholeRun) -> WholeRunOutcome | None``
        Simulate the whole run in one call of its own (a compiled loop), offered
        by the engine only when every input is known before the run (see
        :mod:`schedlab.sim.whole_run`); ``None`` declines (the engine runs its
        loop). The engine checks the outcome as a whole before it accepts it.

    Optional, read before ``bind``, on a platform (a multi-resource machine:
    ``platform=``, ``--platform``) only:

    ``supports_platform: bool``
        The strategy runs on a platform: it sees ``state.machine``,
        ``state.demand`` and ``state.partition_of``, asks
        ``state.allocation_for(job)`` for the allocation policy's choice (``None``:
        the job does not fit now) and starts a job with ``state.start(job,
        allocation)``; ``state.free`` and ``state.size`` count cores only.
    ``for_platform() -> Backfill``
        A method without arguments, called once (before ``bind``) when the
        strategy does not declare ``supports_platform``: returns the strategy
        object to run on the platform instead, written for one as above (``easy``
        returns its node-level EASY and ``conservative`` its node-level
        conservative, each with the options it was made with).

    A strategy with neither is refused on a platform with a one-line
    :class:`~schedlab.errors.UsageError`.

    A strategy that starts a job that does not fit or is not waiting, or breaks
    its reservation contract, stops the run with a
    :class:`~schedlab.sim.state.StrategyError` naming it, the job and the time.
    ``schedlab.testing.check_backfill`` runs the invariant tests on any strategy.
    """

    def bind(self, state: Any) -> None:
        """Keep the scheduler state of this run."""
        ...

    def schedule(self, now: float) -> None:
        """One scheduling pass at ``now``."""
        ...


def as_backfill(strategy: object, name: str = "") -> Any:
    """``strategy`` as a :class:`Backfill`; an object of the schedlab 0.1 protocol
    (a ``reservation_depth`` attribute only) is translated to the built-in strategy
    of that depth, with a deprecation warning."""
    if callable(getattr(strategy, "schedule", None)) and callable(getattr(strategy, "bind", None)):
        return strategy
    if hasattr(strategy, "reservation_depth"):
        depth = strategy.reservation_depth
        if depth is not None and (not isinstance(depth, int) or depth < 0):
            raise ValueError(f"reservation_depth must be a non-negative int or None, got {depth!r}")
        from ..compat import warn_deprecated

        warn_deprecated(
            f"backfilling strategy {name or type(strategy).__name__!r} describes itself by "
            "reservation_depth (the schedlab 0.1 protocol)",
            "bind(state) and schedule(now) (see schedlab.sim.protocols.Backfill), "
            "or the built-in 'depth' strategy,",
            since="0.1",
            removal="0.3",
        )
        from ..registry import get_registry

        return get_registry().get("backfill", "depth").factory(depth=depth)
    raise TypeError(
        f"{type(strategy).__name__} is not a backfilling strategy: it needs bind(state) "
        "and schedule(now) methods (see schedlab.sim.protocols.Backfill)"
    )


class KeyFunctionPolicy:
    """Adapts a plain function ``f(job, now) -> key`` (or ``f(job, now, table)``)
    to the :class:`Policy` protocol, so ``simulate(w, policy=my_function)`` works."""

    dynamic = True

    def __init__(self, function: Any) -> None:
        self.function = function
        self.table: JobTable | None = None
        import inspect

        try:
            self._wants_table = len(inspect.signature(function).parameters) >= 3
        except (TypeError, ValueError):
            self._wants_table = False
        self.name = getattr(function, "__name__", "function")

    def bind(self, table: JobTable) -> None:
        self.table = table

    def key(self, job: int, now: float) -> Any:
        if self._wants_table:
            return self.function(job, now, self.table)
        return self.function(job, now)


def static_sequence(values: Sequence[float]) -> list[float]:
    """Estimates as a list of floats (helper for ``Estimator.estimates``)."""
    return [float(v) for v in values]
