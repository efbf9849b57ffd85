"""The scheduler state: what a backfilling strategy sees of a simulation, and what
it may do.

The engine (:mod:`schedlab.sim.engine`) runs the event loop; at every scheduling
pass it calls the backfilling strategy (:class:`schedlab.sim.protocols.Backfill`),
which reads this state and acts on it through :meth:`SchedulerState.start` and the
reservation methods. The state checks every action against the invariants of the
machine: a strategy that starts a job that is not waiting or does not fit, reserves
in the past, or moves a reservation later when its contract forbids it gets a
:class:`StrategyError` naming the strategy, the job and the time, never a corrupted
schedule.

What a strategy reads is documented attribute by attribute on
:class:`SchedulerState` (doc comments, which the API reference renders): the clock
``now``; ``procs`` and ``free``; ``queue`` (waiting jobs as ``(key, job)`` in
priority order) and ``key_of``; the per-job lists ``size``, ``estimate``,
``submit``, ``estimated_end``, ``start_time`` and ``end_time``; ``running`` and
``arrays`` (kept on request); ``new_jobs``, ``finished_since_pass``,
``real_event``, ``passes`` and ``sorted_keys``; with a platform ``machine``,
``demand`` and ``partition_of``; the reservation book ``reservation`` and
``reservation_log``. Lists are indexed by job index (see
:class:`~schedlab.sim.protocols.JobTable`) and plain lists for speed: read-only
except through the methods.

Helpers: :meth:`~SchedulerState.running_profile` (free processors over time by
the running jobs' estimates, a :class:`~schedlab.sim.profile.Profile`),
:meth:`~SchedulerState.reserve`, :meth:`~SchedulerState.release` and
``reservation[job]`` (the reservation book, checked), and
:meth:`~SchedulerState.violation` for a strategy's own checks.
"""

from __future__ import annotations

import math
import numbers
from bisect import bisect_left, insort
from heapq import heappush
from typing import Any

import numpy as np

from ..errors import SimulationError
from .machine import NodeMachine
from .profile import Profile
from .protocols import JobTable
from .resources import Allocation

#: Size marking a job that is not waiting in :class:`WaitingArrays`.
NOT_WAITING = 2**62


class StrategyError(SimulationError):
    """A backfilling strategy broke an invariant of the machine (started a job that
    does not fit, moved a reservation later against its contract ...). The message
    names the strategy, the job and the simulated time."""


class WaitingArrays:
    """Numpy arrays by job index for vectorised screens of the wait queue.

    ``size[j]`` is the size of waiting job ``j`` and :data:`NOT_WAITING` for every job
    not waiting (not submitted yet, or started); ``estimate[j]`` and ``key[j]`` its
    estimate and priority key (``key`` is meaningful only while ``numeric_keys`` is
    true: the policy's keys are plain numbers). Every waiting job lies in
    ``[lo, hi)``: ``hi`` is one past the highest submitted job, and
    :meth:`first_waiting` advances ``lo`` past started jobs (and jobs not yet
    submitted: an arrival below ``lo``, a dependent job released after later jobs
    started, moves ``lo`` back to it).
    """

    __slots__ = ("estimate", "hi", "key", "lo", "numeric_keys", "size")

    def __init__(self, n: int) -> None:
        self.size = np.full(n, NOT_WAITING, dtype=np.int64)
        self.estimate = np.zeros(n, dtype=np.float64)
        self.key = np.zeros(n, dtype=np.float64)
        self.numeric_keys = True
        self.lo = 0
        self.hi = 0

    def first_waiting(self) -> int:
        """Advance ``lo`` to the first waiting job (the queue must not be empty)."""
        sizes = self.size
        lo = self.lo
        while sizes[lo] == NOT_WAITING:
            lo += 1
        self.lo = lo
        return lo

    def in_priority_order(self, found: np.ndarray) -> np.ndarray:
        """Job indices ``found`` (ascending) sorted by key, ties by job index."""
        if len(found) > 1:
            keys = self.key[found]
            if (keys[1:] < keys[:-1]).any():
                found = found[np.lexsort((found, keys))]
        return found


def _time(value: float) -> str:
    """A time for a repr: whole seconds without decimals, with thousands separators."""
    value = float(value)
    return f"{value:,.0f}" if value.is_integer() else f"{value:,}"


def list_print(values: list[Any]) -> int:
    """A fingerprint of a job table list's values (``hash`` of the tuple: equal
    lists of the same objects give equal prints; a write of another value, or of
    another NaN object, changes it)."""
    return hash(tuple(values))


class SchedulerState:
    """The state of one simulation as a backfilling strategy sees it. Built by the
    engine; strategies receive it in ``bind``.

    Every attribute a strategy reads is documented below. The per-job lists
    (``size``, ``estimate``, ``submit``, ``key_of``, ``estimated_end``,
    ``start_time``, ``end_time``, ``reservation``) are indexed by job index (see
    :class:`~schedlab.sim.protocols.JobTable`) and are plain lists for speed:
    read them, and act only through the methods (:meth:`start`,
    :meth:`start_from_head`, :meth:`reserve`, :meth:`release`,
    :meth:`log_reservation`). The state checks every action against counters of
    its own, so writing into them changes nothing but is an error at the end of
    the run (the job table's lists) or is ignored (``free``)."""

    def __init__(
        self,
        table: JobTable,
        policy: Any,
        strategy_name: str,
        wants_running: bool = False,
        wants_arrays: bool = False,
        monotone_reservations: bool = False,
        machine: NodeMachine | None = None,
        demand: list[Any] | None = None,
        partition_of: list[int] | None = None,
    ) -> None:
        n = len(table)
        #: With a platform: the machine (nodes, free amounts, allocations), each
        #: job's :class:`~schedlab.sim.resources.Demand` and partition index
        #: (``machine.partitions[partition_of[job]]``). ``None`` on a single pool.
        self.machine = machine
        #: With a platform: each job's :class:`~schedlab.sim.resources.Demand`
        #: (``None`` on a single pool).
        self.demand = demand
        #: With a platform: each job's partition index (``None`` on a single pool).
        self.partition_of = partition_of
        #: The run's :class:`~schedlab.sim.protocols.JobTable` (read only).
        self.table = table
        #: The strategy's name, as errors give it.
        self.strategy_name = strategy_name
        #: Machine size: processors (cores, with a platform).
        self.procs = table.procs if machine is None else machine.total_cores
        #: Number of jobs (job indices run from 0 to ``n - 1``).
        self.n = n
        #: Processors each job occupies (the table's list).
        self.size = table.size
        #: The scheduler's estimate of each job's run time, known from its
        #: submission on (the table's list). The real run time is not visible.
        self.estimate = table.estimate
        #: Each job's submit time (the table's list; with dependencies, the
        #: time the job was released).
        self.submit = table.submit
        # What decides the schedule, as the engine runs with it: the table's lists
        # (a component replacing a list does not change these), with a
        # fingerprint of each taken before any component sees the table. The
        # engine compares the table with them after ``bind`` and at the end of
        # the run (:meth:`Engine.check_table`): a component that wrote into them
        # is an error naming the components that could have done it, never a
        # silently different schedule. Fingerprints, not copies: three copies of
        # RICC-2010's lists held 11 MB through the run. A run with dependencies,
        # whose release times the engine writes into ``submit``, keeps a copy of
        # ``submit`` instead (``_submit_copy``).
        self._size = table.size
        self._run_time = table.run_time
        self._submit = table.submit
        self._prints = {
            "size": list_print(table.size),
            "run_time": list_print(table.run_time),
            "submit": list_print(table.submit),
        }
        self._submit_copy: list[float] | None = None
        #: The clock: the time of the current pass (``-inf`` before the first).
        self.now = -math.inf
        #: Processors free now (a copy for the strategy to read: writing it
        #: changes nothing the state checks).
        self.free = self.procs
        #: Processors free now as the state counts them (``free`` is its public
        #: copy, which a strategy may overwrite without effect).
        self._free = self.procs
        #: The waiting jobs as ``(key, job)`` tuples in priority order (lowest key
        #: first, ties by job index). A job leaves it only through :meth:`start`
        #: (or :meth:`start_from_head`).
        self.queue: list[tuple[Any, int]] = []
        #: ``key_of[job]``: a waiting job's current priority key (its entry in
        #: ``queue`` is ``(key_of[job], job)``).
        self.key_of: list[Any] = [None] * n
        #: When each job started (``nan`` until it starts). After a whole run
        #: (:mod:`schedlab.sim.whole_run`) this list, ``end_time`` and
        #: ``estimated_end`` are built from the run's columns when first read
        #: (:meth:`keep_columns`); :meth:`column` gives them as arrays.
        self.start_time = [math.nan] * n
        #: When each job ends: start + real run time (``nan`` until it starts).
        self.end_time = [math.nan] * n
        #: For a started job, start + estimate, what the scheduler believes
        #: (``nan`` until it starts); raised when the estimator corrects a job
        #: that outlived its estimate (:mod:`schedlab.sim.correction`).
        self.estimated_end = [math.nan] * n
        #: The running jobs as ``(estimated end, job)`` sorted by estimated end,
        #: kept only for strategies that declare ``wants_running = True``
        #: (``None`` otherwise). A job past its estimated end is still listed with
        #: its (past) estimated end: treat it as ending now.
        self.running: list[tuple[float, int]] | None = [] if wants_running else None
        #: Numpy views of the waiting jobs for vectorised screens
        #: (:class:`WaitingArrays`), kept for strategies that declare
        #: ``wants_arrays = True`` (``None`` otherwise).
        self.arrays: WaitingArrays | None = WaitingArrays(n) if wants_arrays else None
        #: The jobs submitted since the previous pass, in job order.
        self.new_jobs: list[int] = []
        #: Whether a job ended (or the queue was re-sorted) since the previous pass.
        self.finished_since_pass = True
        #: Whether this pass follows a finish or a submission (``False``: only a
        #: wake-up the strategy asked for, ``Backfill.next_wakeup``).
        self.real_event = True
        #: Passes so far, the current one included.
        self.passes = 0
        #: The reservation book: ``reservation[job]`` is the start reserved for a
        #: waiting job through :meth:`reserve` (``nan``: none).
        self.reservation = [math.nan] * n
        #: With ``True``, a reservation may only move earlier (conservative
        #: backfilling's contract) unless released first.
        self.monotone_reservations = monotone_reservations
        #: Tests set this to a dict to record every reservation a job held:
        #: ``job -> [(pass, time), ...]``. Strategies with their own books append
        #: to it too (:meth:`log_reservation`).
        self.reservation_log: dict[int, list[tuple[int, float]]] | None = None
        #: The engine's event heap of real ends ``(end, job)``.
        self.finish_heap: list[tuple[float, int]] = []
        #: With prediction corrections on, ``(estimated end, job)`` of started jobs
        #: (see :mod:`schedlab.sim.correction`); ``None`` otherwise.
        self.expiry: list[tuple[float, int]] | None = None
        self._on_start = getattr(policy, "on_start", None)
        #: Set when a policy notification asked for the queue to be re-keyed.
        self.rekey = False
        #: During a strategy's ``on_reorder`` after a re-sort by a policy with
        #: ``key_array`` (see :class:`~schedlab.sim.protocols.Policy`): the queue
        #: as two numpy arrays ``(jobs, keys)`` (int64 and float64, in queue
        #: order), so the strategy can take the new keys without walking
        #: ``queue``; ``None`` otherwise.
        self.sorted_keys: tuple[np.ndarray, np.ndarray] | None = None

    def __repr__(self) -> str:
        # Free of object addresses, so a notebook shows the same on every run.
        return (
            f"<SchedulerState now={_time(self.now)}: {len(self.queue):,} waiting, "
            f"{len(self.finish_heap):,} running; {self.free:,} of {self.procs:,} "
            f"processors free>"
        )

    # ------------------------------------------------------------- whole runs
    #: The per-job lists :meth:`keep_columns` may hold as arrays.
    COLUMNS = ("start_time", "end_time", "estimated_end", "estimate")

    def keep_columns(self, **columns: np.ndarray) -> None:
        """After a whole run: keep ``start_time``, ``end_time``,
        ``estimated_end`` and ``estimate`` as the run's float64 arrays (by job
        index) instead of the lists; each list is built from its array the first
        time it is read (the output reads the arrays through :meth:`column` and
        builds none). The lists filled so far (all ``nan``) are dropped, so a
        reference taken to one of them before the run no longer follows the state.

        ``estimate`` is the table's list again when first read (a run that made
        its predictions has the table keep them too, ``JobTable.keep_estimates``:
        the table fills its list then, in place)."""
        kept = self.__dict__.setdefault("_columns", {})
        for name, values in columns.items():
            if name not in self.COLUMNS:
                raise ValueError(f"keep_columns: no per-job list {name!r}")
            self.__dict__.pop(name, None)
            kept[name] = values
        # The hook that builds a kept list when first read lives on a subclass
        # the state joins only now: a class defining ``__getattr__`` makes every
        # attribute read of its instances several times slower (CPython's
        # specialised attribute loads require the generic lookup), and the
        # pass-by-pass loop reads the state's attributes at every event.
        self.__class__ = _with_kept_columns(type(self))

    def column(self, name: str) -> np.ndarray:
        """``start_time``, ``end_time``, ``estimated_end`` or ``estimate`` as a
        float64 array by job index: the whole run's array when its list was never
        built (not a copy: read it, do not change it), else the list converted."""
        kept = self.__dict__.get("_columns")
        if kept is not None and name in kept:
            return kept[name]  # type: ignore[no-any-return]
        return np.asarray(getattr(self, name), dtype=np.float64)

    # ------------------------------------------------------------------ actions
    def start(self, job: int, allocation: Allocation | None = None) -> None:
        """Start waiting job ``job`` now on ``size[job]`` of the free processors;
        it leaves the queue. A :class:`StrategyError` if it is not waiting (not
        submitted yet, or started already), does not fit, or is not a job index
        (an integer from 0 to ``n - 1``; a bool, a float or a negative index is
        refused, never taken for another job).

        With a platform, the job gets ``allocation`` or, by default, the
        allocation policy's choice. A given allocation is checked: nodes of the
        job's partition (ascending, each once), amounts free now (idle nodes on
        an exclusive partition), and exactly the job's demand (as
        the machine's check (``NodeMachine.check``) holds an allocation policy
        to it: not another job's allocation, no dimension short or over)."""
        if type(job) is not int:
            job = self._job_index(job, "start")
        queue = self.queue
        if queue and queue[0][1] == job:
            i = 0
        else:
            if not 0 <= job < self.n:
                raise self._not_a_job(job, "start")
            key = self.key_of[job]
            if key is None:
                raise self._not_waiting(job)
            i = bisect_left(queue, (key, job))
            if i == len(queue) or queue[i][1] != job:
                raise self._not_waiting(job)
        machine = self.machine
        if machine is not None:
            alloc = self.allocation_for(job) if allocation is None else allocation
            if alloc is None:
                raise self.violation(job, "started but no allocation of its demand is free")
            if allocation is not None:
                p = self.partition_of[job]  # type: ignore[index]
                form = machine._form_problem(alloc)
                if form:
                    raise self.violation(job, f"started on {form}")
                if not machine.inside_partition(alloc, p):
                    raise self.violation(
                        job, "started on nodes outside its partition (or not ascending, once each)"
                    )
                wrong = machine._demand_problem(alloc, self.demand[job], p)  # type: ignore[index]
                if wrong:
                    raise self.violation(
                        job, f"started on an allocation that does not hold its demand: {wrong}"
                    )
                cores = machine.commit_if_free(job, alloc, p)
                if cores < 0:
                    raise self.violation(job, "started on nodes that are not free")
            else:
                cores = machine.commit(job, alloc)
            del queue[i]
            self.free = self._free = self._free - cores
            self._launch(job)
            return
        s = self._size[job]
        free = self._free
        if s > free:
            raise self.violation(job, f"started with {s} processors but only {free} are free")
        del queue[i]
        self.free = self._free = free - s
        self._launch(job)

    def _job_index(self, job: Any, method: str) -> int:
        """``job`` as a job index (a Python or numpy integer in range), else the
        :class:`StrategyError` naming ``method``."""
        if isinstance(job, (bool, np.bool_)) or not isinstance(job, numbers.Integral):
            raise self._not_a_job(job, method)
        index = int(job)
        if not 0 <= index < self.n:
            raise self._not_a_job(index, method)
        return index

    def _not_a_job(self, job: Any, method: str) -> StrategyError:
        """The error for ``method(job)`` where ``job`` is no job index."""
        where = f"job indices run from 0 to {self.n - 1}" if self.n else "there are no jobs"
        return StrategyError(
            f"backfill {self.strategy_name!r} broke an invariant at t={self.now:g}: "
            f"{method}(): {job!r} is not a job index ({where})"
        )

    def _not_waiting(self, job: int) -> StrategyError:
        """The error for starting job ``job`` (an index in range) that is not in
        the queue, saying why when the state knows."""
        started = self.start_time[job]
        if started == started:
            why = f" (it started at t={started:g})"
        elif self.key_of[job] is None:
            arrives = self.submit[job]
            why = (
                f" (not submitted yet: it arrives at t={arrives:g})"
                if arrives > self.now
                else " (not submitted yet)"
            )
        else:
            why = ""
        return self.violation(job, f"started but it is not waiting{why}")

    def allocation_for(self, job: int, free: Any = None) -> Allocation | None:
        """With a platform: the allocation policy's choice for ``job`` on the free
        amounts now (or on ``free``, a ``(nodes, dims)`` matrix), or ``None``.
        A policy's wrong answer is a :class:`~schedlab.errors.SimulationError`
        naming the policy (``NodeMachine.check``)."""
        machine = self.machine
        if machine is None:
            raise SimulationError("allocation_for() needs a platform")
        if type(job) is not int or not 0 <= job < self.n:
            job = self._job_index(job, "allocation_for")
        return machine.allocate(self.demand[job], self.partition_of[job], free)  # type: ignore[index]

    def _launch(self, job: int) -> None:
        """Start ``job`` (checked, out of the queue, its processors taken)."""
        now = self.now
        self.start_time[job] = now
        end = now + self._run_time[job]
        self.end_time[job] = end
        heappush(self.finish_heap, (end, job))
        e = now + self.estimate[job]
        self.estimated_end[job] = e
        if self.running is not None:
            insort(self.running, (e, job))
        if self.expiry is not None:
            heappush(self.expiry, (e, job))
        if self._on_start is not None and self._on_start(job, now):
            self.rekey = True
        if self.arrays is not None:
            self.arrays.size[job] = NOT_WAITING
        r = self.reservation[job]
        if r == r:
            self.reservation[job] = math.nan

    def start_from_head(self) -> int:
        """Start jobs from the head of the queue, in priority order, while they fit
        (every strategy's first step; the whole of ``none``). Returns how many
        started.

        With a platform, partitions schedule their own queues: a job that does not
        fit blocks only the jobs of its partition (and of partitions sharing a
        node group with it); higher ``priority_tier`` partitions go first."""
        if self.machine is not None:
            return self._start_from_head_nodes()
        queue = self.queue
        size = self._size
        count = 0
        for _, j in queue:
            s = size[j]
            free = self._free
            if s > free:
                break
            count += 1
            self.free = self._free = free - s
            self._launch(j)
        if count:
            del queue[:count]
        return count

    def tier_order(self) -> list[int]:
        """The waiting jobs in scheduling order: priority order, jobs of higher
        ``priority_tier`` partitions first (the plain queue order on a single pool
        or when every partition has the same tier)."""
        machine = self.machine
        jobs = [j for _, j in self.queue]
        if machine is None or len({p.priority_tier for p in machine.partitions}) < 2:
            return jobs
        tier = [-p.priority_tier for p in machine.partitions]
        part = self.partition_of
        assert part is not None
        return sorted(jobs, key=lambda j: tier[part[j]])

    def _start_from_head_nodes(self) -> int:
        machine = self.machine
        assert machine is not None and self.partition_of is not None
        parts = machine.partitions
        part_of = self.partition_of
        blocked: list[int] = []
        started = 0
        for j in self.tier_order():
            p = part_of[j]
            if p in blocked or any(parts[p].overlaps(parts[b]) for b in blocked):
                continue
            alloc = self.allocation_for(j)
            if alloc is None:
                blocked.append(p)
                if len(blocked) == len(parts):
                    break
                continue
            self.start(j, alloc)
            started += 1
        return started

    def reserve(self, job: int, at: float) -> None:
        """Record that waiting job ``job`` is reserved to start at ``at``.

        A :class:`StrategyError` if ``at`` is in the past or, for a strategy whose
        contract is that reservations never move later (``monotone_reservations``),
        if ``at`` is later than the job's current reservation (call
        :meth:`release` first to re-plan a job from scratch, as a strategy must
        when a job runs past its estimate). Anything but a job index is a
        :class:`StrategyError` too."""
        if not (type(job) is int and 0 <= job < self.n):
            job = self._job_index(job, "reserve")
        if not at >= self.now:
            raise self.violation(job, f"reserved at {at:g}, in the past")
        old = self.reservation[job]
        if self.monotone_reservations and old == old and at > old:
            raise self.violation(
                job, f"reservation moved later, from {old:g} to {at:g}, against its contract"
            )
        self.reservation[job] = at
        if self.reservation_log is not None:
            self.reservation_log.setdefault(job, []).append((self.passes, at))

    def release(self, job: int) -> None:
        """Forget ``job``'s reservation (it will be planned again); anything but a
        job index is a :class:`StrategyError`."""
        if not (type(job) is int and 0 <= job < self.n):
            job = self._job_index(job, "release")
        self.reservation[job] = math.nan

    def log_reservation(self, job: int, at: float) -> None:
        """Record a reservation a strategy keeps in its own book (tests read the log);
        no-op unless ``reservation_log`` is set."""
        if self.reservation_log is not None:
            self.reservation_log.setdefault(job, []).append((self.passes, at))

    # ------------------------------------------------------------------ helpers
    def running_profile(self) -> Profile:
        """Free processors over future time by the running jobs' estimated ends
        (needs ``wants_running``): a fresh :class:`~schedlab.sim.profile.Profile`."""
        now = self.now
        profile = Profile(self.procs, now)
        free = self._free
        times = profile.times
        frees = profile.free
        frees[0] = free
        size = self._size
        running = self.running
        if running is None:
            raise SimulationError(
                f"backfill {self.strategy_name!r}: running_profile() needs wants_running = True"
            )
        for e, r in running:
            free += size[r]
            if e <= now:
                frees[0] = free
            elif e == times[-1]:
                frees[-1] = free
            else:
                times.append(e)
                frees.append(free)
        return profile

    def is_waiting(self, job: int) -> bool:
        """Whether ``job`` is in the wait queue (``False`` for a job not submitted
        yet; a :class:`StrategyError` for something that is not a job index)."""
        if type(job) is not int or not 0 <= job < self.n:
            job = self._job_index(job, "is_waiting")
        key = self.key_of[job]
        if key is None:
            return False
        queue = self.queue
        i = bisect_left(queue, (key, job))
        return i < len(queue) and queue[i][1] == job

    def violation(self, job: int, what: str) -> StrategyError:
        """The error for a broken invariant: names the strategy, the job (its index
        and SWF job number) and the time."""
        number = self.table.job_number[job] if 0 <= job < self.n else -1
        label = f"job {number}" if number >= 0 else f"job index {job}"
        return StrategyError(
            f"backfill {self.strategy_name!r} broke an invariant at t={self.now:g}: "
            f"{label} (index {job}) {what}"
        )


#: The subclasses :func:`_with_kept_columns` made, by the class they extend.
_KEPT_COLUMN_CLASSES: dict[type[SchedulerState], type[SchedulerState]] = {}


def _with_kept_columns(cls: type[SchedulerState]) -> type[SchedulerState]:
    """``cls`` with a ``__getattr__`` that builds a list :meth:`SchedulerState.
    keep_columns` kept as an array, once, when first read (``cls`` itself when it
    has that hook already). The subclass keeps ``cls``'s name."""
    if cls in _KEPT_COLUMN_CLASSES.values():  # a state that joined already
        return cls
    made = _KEPT_COLUMN_CLASSES.get(cls)
    if made is not None:
        return made

    def _build_kept_column(self: SchedulerState, name: str) -> Any:
        # Reached only for a missing attribute: a list a whole run kept as an
        # array (keep_columns), built once, when first read.
        kept = self.__dict__.get("_columns")
        if kept is not None and name in kept:
            array = kept.pop(name)
            # The estimates are the table's list (shared with the components
            # that read it), filled from the same array when first read.
            values = self.table.estimate if name == "estimate" else array.tolist()
            self.__dict__[name] = values
            return values
        raise AttributeError(f"{cls.__name__!r} object has no attribute {name!r}")

    namespace = {
        "__getattr__": _build_kept_column,
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__doc__": cls.__doc__,
    }
    made = type(cls.__name__, (cls,), namespace)
    _KEPT_COLUMN_CLASSES[cls] = made
    return made


__all__ = ["NOT_WAITING", "SchedulerState", "StrategyError", "WaitingArrays"]
