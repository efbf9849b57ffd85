"""A simulation that stops at every scheduling point and asks (issue 19).

::

    sim = schedlab.Simulation(workload, policy="fcfs", backfill="easy")
    while (point := sim.pending_decision()) is not None:
        sim.decide(order=sorted(point.queue, key=my_score))   # or start=job, or nothing
    result = sim.result()            # the same Result as schedlab.simulate

At each scheduling pass of the engine (after the finishes and submissions of an
instant, see docs/simulation.md) the simulation stops and returns a
:class:`DecisionPoint`: the clock, the waiting jobs in the order the pass walks
them (the current priority order; on a platform with ``priority_tier``
partitions, higher tiers first and that order within a tier), and the public
:class:`~schedlab.sim.SchedulerState` (free processors or node amounts, running
jobs, estimates). :meth:`Simulation.decide` then applies one of:

``order=[jobs]``
    a priority order for the waiting jobs (every waiting job once); the
    backfilling strategy runs its pass with it. The order holds for this pass;
    the jobs still waiting then get the policy's keys again. Priority tiers
    outrank it, as Slurm's tiers outrank job priority: the pass walks higher
    tiers first and the given order within each tier. Giving the queue's own order
    (``point.queue``) is exactly :func:`schedlab.simulate`: a differential test
    checks that on real logs.
``start=job``
    start this waiting job now (it must fit); the simulation stops again at the
    same instant while some waiting job fits, else it runs to the next event. The
    backfilling strategy does not run at such points; it must declare
    ``accepts_manual_starts = True``, as ``none`` and ``easy`` do (strategies that
    keep reservation books, such as conservative, would lose track).
nothing (``decide()``)
    start nothing now; run to the next event. A strategy with an ``on_hold(now)``
    method is told first (conservative lets the reservations due now wake nobody
    and plans them again at the next event).

A point settled without the strategy's pass (``start=`` or nothing) does not hide
its ends, arrivals and starts: the strategy's next pass runs with
``state.finished_since_pass`` (and ``real_event``) set, so it reuses nothing kept
from its own last pass.

An invalid decision (a job that is not waiting, does not fit, an order that is
not a permutation of the queue, a job that is not an integer, nothing when no
event is left, ``start=`` where the implementation that runs cannot follow it)
raises :class:`~schedlab.errors.UsageError` and leaves the simulation where it
was: decide again.

``close()`` (or the end of a ``with Simulation(...) as sim:`` block, or the
simulation being freed unclosed) ends the engine. An interrupt during a
hand-over or in the engine ends the simulation: raised once, then a
``UsageError`` (never a hang or a half-handed-over state). A point's ``state`` is
live (see :class:`DecisionPoint`), and the result's times include the caller's.

How it works: the engine runs as a coroutine beside the caller, and its
backfilling strategy hands each pass over to the caller and waits; exactly one of
the two runs at any time, so the run is deterministic and the engine is the same
one :func:`schedlab.simulate` uses (no second simulator to keep in step). The
coroutine is a `greenlet <https://greenlet.readthedocs.io>`_ when the package is
installed (extra ``rl``): a hand-over then costs about a microsecond, and the
simulation must be driven from the thread that created it. Without greenlet (or
with ``SCHEDLAB_STEPPING=thread``) it is a worker thread with a lock hand-over,
the same schedule at some tens of microseconds a step.
"""

from __future__ import annotations

import functools
import numbers
import os
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ..errors import UsageError
from ..model import Workload
from .result import Result
from .state import SchedulerState, _time


@attrs.define(frozen=True, slots=True, eq=False)
class DecisionPoint:
    """A scheduling point: ``now``, the waiting jobs in the order the pass
    walks them (``queue``, job indices of ``state.table``: priority order, and on a
    platform with ``priority_tier`` partitions higher tiers first) and the
    scheduler ``state`` (read it; act only through :meth:`Simulation.decide`).

    ``now`` and ``queue`` are fixed, but ``state`` is the simulation's live
    state (a copy per point would cost more than the step): once the simulation
    has moved on, a stored point's ``state``, ``fits`` and repr show the
    present, not the point's time. Keep what you need from a point (its free
    processors, say) before deciding."""

    #: The simulated time of the point, in seconds from the workload origin.
    now: float
    #: The waiting jobs as job indices of ``state.table``, in the order the pass walks
    #: them (priority order; higher ``priority_tier`` partitions first on a platform).
    queue: tuple[int, ...]
    #: The scheduler's live state (not a copy: it shows the present once the
    #: simulation has moved on); read it, act through :meth:`Simulation.decide`.
    state: SchedulerState

    def fits(self, job: int) -> bool:
        """Whether ``job`` is waiting and could start, on the state as it is now
        (``state`` is live: see the class docstring); ``False`` for a job that is
        not waiting (started, not yet submitted, not a job index)."""
        state = self.state
        if isinstance(job, bool) or not isinstance(job, numbers.Integral):
            return False
        if not 0 <= job < state.n or state.key_of[job] is None:
            return False
        start = state.start_time[job]
        return start != start and _fits(state, int(job))

    def __repr__(self) -> str:
        # Short and free of object addresses (a notebook stores it): the queue can
        # hold thousands of jobs.
        head = ", ".join(str(j) for j in self.queue[:_QUEUE_SHOWN])
        more = ", ..." if len(self.queue) > _QUEUE_SHOWN else ""
        return (
            f"<DecisionPoint now={_time(self.now)}: {len(self.queue):,} waiting [{head}{more}]; "
            f"{self.state.free:,} of {self.state.procs:,} processors free>"
        )


#: Waiting jobs the repr of a :class:`DecisionPoint` lists.
_QUEUE_SHOWN = 10


def _fits(state: SchedulerState, job: int) -> bool:
    if state.machine is not None:
        return state.allocation_for(job) is not None
    return state._size[job] <= state._free  # the state's own counters


class _Handover:
    """The backfilling strategy the engine drives: hands every pass to the caller.

    It holds ``ask`` (the link's engine side), never the :class:`Simulation`, so an
    abandoned simulation is not kept alive by its own engine."""

    #: Every pass goes to the caller: never a whole run of the inner strategy.
    run_whole = None

    def __init__(self, inner: Any, ask: Callable[[tuple[str, Any]], tuple[str, Any]]) -> None:
        self.inner = inner
        self.ask = ask
        self.name = getattr(inner, "name", type(inner).__name__)
        self.supports_platform = True

    def __getattr__(self, name: str) -> Any:
        # wants_running, next_wakeup, on_finish ... are the inner strategy's.
        return getattr(self.inner, name)

    def bind(self, state: SchedulerState) -> None:
        self.state = state
        #: Jobs that arrived at passes the inner strategy did not run (the
        #: caller started a job or nothing): it is told of them at its next pass.
        self.unseen: list[int] = []
        #: Whether a pass the inner strategy did not run followed an end, an
        #: arrival, a re-sort or a manual start: its next pass must not reuse
        #: what it kept from its own last pass (``finished_since_pass``).
        self.missed = False
        self.inner.bind(state)

    def _ask(self, point: DecisionPoint) -> tuple[str, Any]:
        message = self.ask(("point", point))
        if message[0] == "stop":
            raise _Stopped
        return message

    def _inner_pass(self, now: float) -> None:
        """The inner strategy's pass; its ``new_jobs`` are every job arrived since
        its previous pass and still waiting."""
        state = self.state
        if self.unseen:
            start = state.start_time
            waiting = sorted(j for j in {*self.unseen, *state.new_jobs} if start[j] != start[j])
            state.new_jobs[:] = waiting
            state.finished_since_pass = True
            self.unseen = []
        if self.missed:
            # The engine resets these flags after every pass, the settled ones
            # too: the strategy learns here that jobs ended (or started, or the
            # queue was re-sorted) since its own last pass.
            state.finished_since_pass = True
            state.real_event = True
            self.missed = False
        self.inner.schedule(now)

    def schedule(self, now: float) -> None:
        state = self.state
        while state.queue:
            # The queue in the order the pass walks it: on a platform with
            # priority tiers, higher tiers first (the policy's order within a tier).
            shown = state.tier_order()
            action = self._ask(DecisionPoint(now, tuple(shown), state))
            kind, value = action
            if kind == "order":
                if list(value) == shown:  # the pass's own order: simulate's pass
                    self._inner_pass(now)
                    return
                saved = {j: state.key_of[j] for _, j in state.queue}
                numeric = state.arrays.numeric_keys if state.arrays is not None else False
                _reorder(state, value)
                reordered = getattr(self.inner, "on_reorder", None)
                if reordered is not None:
                    reordered(now)
                self._inner_pass(now)
                _restore(state, saved, numeric)
                if reordered is not None:
                    reordered(now)
                return
            if kind == "start":
                state.start(value)
                state.finished_since_pass = True  # the strategy's last pass is stale
                started = getattr(self.inner, "on_manual_start", None)
                if started is not None:
                    started(value, now)
                if not any(_fits(state, j) for _, j in state.queue):
                    break
                continue
            break  # nothing
        # Settled without the inner strategy: remember what it missed.
        if state.finished_since_pass or state.real_event or state.new_jobs:
            self.missed = True
        self.unseen.extend(state.new_jobs)


def _follows_manual_starts(inner: Any) -> bool:
    """Whether the strategy that runs follows the caller's ``start=`` decisions: it
    declares ``accepts_manual_starts = True`` (after ``bind``: true of the
    implementation it chose; it is told of each start through ``on_manual_start``
    when it has that method). Strategies that keep reservation books, such as
    conservative, would lose track and do not declare it."""
    return bool(getattr(inner, "accepts_manual_starts", False))


def _job_index(value: Any, what: str) -> int:
    """``value`` as a job index: an integer (Python or numpy), not a bool, float
    or string (a UsageError naming ``what``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise UsageError(
            f"{what}: {value!r} is not a job index (give an integer, such as an entry "
            "of point.queue)"
        )
    return int(value)


def _reorder(state: SchedulerState, order: Sequence[int]) -> None:
    """Give the waiting jobs the keys 0, 1, 2 ... of ``order`` and re-sort."""
    key_of = state.key_of
    for rank, j in enumerate(order):
        key_of[j] = rank
    state.queue[:] = [(rank, j) for rank, j in enumerate(order)]
    arrays = state.arrays
    if arrays is not None:
        arrays.numeric_keys = True
        for rank, j in enumerate(order):
            arrays.key[j] = rank
    state.finished_since_pass = True  # strategies must not reuse the last pass


def _restore(state: SchedulerState, saved: dict[int, Any], numeric: bool) -> None:
    """After a pass in the caller's order: the policy's keys again for the jobs
    still waiting (an order holds for one pass)."""
    key_of = state.key_of
    waiting = [j for _, j in state.queue]
    for j in waiting:
        key_of[j] = saved[j]
    state.queue[:] = sorted((saved[j], j) for j in waiting)
    arrays = state.arrays
    if arrays is not None:
        arrays.numeric_keys = numeric
        if numeric:
            for j in waiting:
                arrays.key[j] = saved[j]
    state.finished_since_pass = True


class Simulation:
    """A stepping simulation (see the module docstring). Takes the arguments of
    :func:`schedlab.simulate` (``policy`` orders the queue shown at each point).

    A context manager: ``with Simulation(...) as sim:`` closes it on the way out;
    a simulation that is dropped unclosed is closed when it is freed."""

    def __init__(self, workload: Workload, **options: Any) -> None:
        from ..registry import get_registry
        from .protocols import as_backfill
        from .runner import _platform_strategy, resolve_component

        if "progress" in options:
            raise UsageError("Simulation takes no progress option")
        backfill = options.pop("backfill", "easy")
        backfill_options: Mapping[str, Any] | None = options.pop("backfill_options", None)
        registry = options.get("registry") or get_registry()
        inner, name, _ = resolve_component("backfill", backfill, backfill_options, registry)
        inner = as_backfill(inner, name)
        if options.get("platform") is not None and not getattr(inner, "supports_platform", False):
            for_platform = getattr(inner, "for_platform", None)
            if for_platform is None:
                raise UsageError(f"backfill {name!r} does not run on a platform yet")
            inner = _platform_strategy(for_platform(), name)
        inner.name = name
        self._strategy_name = name
        self._inner = inner
        self._pending: DecisionPoint | None = None
        self._result: Result | None = None
        self._error: BaseException | None = None
        self._started = False
        self._finished = False
        self._closed = False
        self._thread = threading.get_ident()
        link = _link()
        # The engine side holds the link's ``ask`` only (never ``self``): dropping
        # the simulation frees it, and the finalizer ends its engine.
        strategy = _Handover(inner, link.ask)
        link.target(functools.partial(_run_engine, workload, strategy, options))
        self._link = link
        self._finalizer = weakref.finalize(self, link.close)
        self._finalizer.atexit = False  # at exit the engine just goes with the process

    def __enter__(self) -> Simulation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ caller
    def _check(self) -> None:
        """Refuse a broken or cross-thread use before touching anything."""
        if self._error is not None:
            raise self._error
        if self._link.thread_bound and threading.get_ident() != self._thread:
            raise UsageError(
                "drive a Simulation from the thread that created it (its engine is a "
                "greenlet of that thread; SCHEDLAB_STEPPING=thread lifts this)"
            )

    def _broken(self, exc: BaseException) -> None:
        """A hand-over was cut (an interrupt, an error of the link): the engine's
        state is unknown, so the simulation ends; ``exc`` goes up once."""
        self._pending = None
        self._finished = True
        self._error = UsageError(
            f"the simulation was interrupted ({type(exc).__name__}) and cannot go on: "
            "start a new Simulation"
        )
        self._link.close()

    def _wait(self, message: tuple[str, Any] | None = None) -> None:
        """Hand ``message`` (``None``: start) to the engine and take its next point,
        or its end. The pending point stays until the engine answers."""
        try:
            self._started = True
            kind, value = self._link.call(message)
            if kind == "point":
                self._pending = value
                return
        except BaseException as exc:
            self._broken(exc)
            raise
        self._finished = True
        self._pending = None
        if kind == "done":
            self._result = value
            return
        # An interrupt (Ctrl-C, a notebook's "interrupt kernel") that landed in the
        # engine ends it: raised once, then a plain error, not the same
        # KeyboardInterrupt again at every later call.
        self._error = (
            value
            if isinstance(value, Exception)
            else UsageError(
                f"the simulation was interrupted ({type(value).__name__}) and "
                "cannot go on: start a new Simulation"
            )
        )
        raise value

    def pending_decision(self) -> DecisionPoint | None:
        """The current scheduling point, or ``None`` when the simulation is over
        (finished, or closed: :meth:`decide` and :meth:`result` then say so)."""
        self._check()
        if self._closed:
            return None
        if not self._started:
            self._wait()
        return self._pending

    def decide(self, start: int | None = None, order: Sequence[int] | None = None) -> None:
        """Apply a decision at the pending point and run to the next one (see the
        module docstring). A :class:`UsageError` for an invalid decision, which
        leaves the simulation unchanged."""
        point = self.pending_decision()
        if point is None:
            if self._closed:
                raise _closed()
            raise UsageError("the simulation is over: no decision is pending")
        if start is not None and order is not None:
            raise UsageError("decide either start= or order=, not both")
        action: tuple[str, Any]
        if start is not None:
            job = _job_index(start, "decide(start=)")
            if not _follows_manual_starts(self._inner):
                raise UsageError(
                    "start= decisions need a backfilling strategy that follows them "
                    f"(accepts_manual_starts); backfill {self._strategy_name!r} keeps its "
                    "own view of the machine: give order= instead"
                )
            if job not in point.queue:
                raise UsageError(f"job {job} is not waiting at t={point.now:g}")
            if not point.fits(job):
                raise UsageError(f"job {job} does not fit at t={point.now:g}")
            action = ("start", job)
        elif order is not None:
            if isinstance(order, (str, bytes)) or not isinstance(order, (Sequence, np.ndarray)):
                raise UsageError(f"decide(order=): {order!r} is not a sequence of job indices")
            if isinstance(order, np.ndarray) and order.dtype.kind in "iu":
                order = order.tolist()
            ordered = [j if type(j) is int else _job_index(j, "decide(order=)") for j in order]
            if sorted(ordered) != sorted(point.queue):
                raise UsageError(
                    f"order must list every waiting job once ({len(point.queue)} jobs) at "
                    f"t={point.now:g}"
                )
            action = ("order", ordered)
        else:
            # A strategy with reservations due now lets them wake nobody until the
            # next event (conservative plans them again then); held back at this
            # point only, so the check below sees the events after it.
            hold = getattr(self._inner, "on_hold", None)
            if hold is not None:
                hold(point.now)
            if not _event_left(point, self._inner):
                raise UsageError(
                    f"decide(): nothing would start and no event is left at t={point.now:g} "
                    f"({len(point.queue)} jobs waiting, none running or to come): start a job "
                    "or give an order"
                )
            action = ("nothing", None)
        self._wait(action)

    def result(self) -> Result:
        """The finished simulation's :class:`~schedlab.sim.result.Result` (runs the
        remaining points with the policy's own order if decisions are pending)."""
        if self._result is not None:
            return self._result
        if self._closed:
            raise _closed()
        while (point := self.pending_decision()) is not None:
            self.decide(order=point.queue)
        if self._result is None:  # pragma: no cover - an end is a result or an error
            raise UsageError("the simulation ended without a result")
        return self._result

    def close(self) -> None:
        """Abandon the simulation (its engine ends); later calls raise a
        UsageError. A finished simulation keeps its result. Closing twice is fine."""
        if self._finished or self._closed:
            self._finalizer.detach()
            self._link.close()
            return
        self._closed = True
        self._pending = None
        self._finalizer.detach()
        self._link.close()


def _closed() -> UsageError:
    return UsageError(
        "the simulation was closed (close() or the end of its with block): start a new Simulation"
    )


def _event_left(point: DecisionPoint, inner: Any) -> bool:
    """Whether the engine has an event after ``point``: a running job, a job still
    to arrive, or a wake-up the strategy asked for."""
    state = point.state
    if state.finish_heap:
        return True
    start = state.start_time
    started = sum(1 for s in start if s == s)
    if started + len(state.queue) < state.n:
        return True
    wakeup = getattr(inner, "next_wakeup", None)
    return wakeup is not None and wakeup() < float("inf")


def _run_engine(
    workload: Workload, strategy: _Handover, options: dict[str, Any]
) -> tuple[str, Any]:
    """The engine's whole run: ``("done", result)`` or ``("error", exception)``."""
    from .api import simulate

    try:
        result = simulate(workload, backfill=strategy, progress=False, **options)
    except BaseException as exc:  # handed to the caller
        return ("error", exc)
    return ("done", result)


class _Handoff:
    """A one-slot channel between two threads: ``put`` leaves a message and wakes
    the reader, ``get`` waits for one. Plain locks (a released lock is the signal)
    cost less per step than :class:`queue.Queue`'s condition variable, and only one
    message is ever in flight each way."""

    __slots__ = ("_ready", "_value")

    def __init__(self) -> None:
        self._ready = threading.Lock()
        self._ready.acquire()
        self._value: tuple[str, Any] = ("", None)

    def put(self, value: tuple[str, Any]) -> None:
        self._value = value
        self._ready.release()

    def get(self) -> tuple[str, Any]:
        self._ready.acquire()
        return self._value

    def wake(self) -> None:
        """Release a reader whatever the state (closing: the message is read from
        elsewhere)."""
        try:
            self._ready.release()
        except RuntimeError:  # already released: the reader will not wait
            pass


class _ThreadLink:
    """The engine in a worker thread; messages cross by :class:`_Handoff`. Closing
    sets ``_stop`` and wakes the engine, which ends at its next question (never
    waited for: closing cannot hang, even in a finalizer or after Ctrl-C)."""

    thread_bound = False

    def __init__(self) -> None:
        self._to_caller = _Handoff()
        self._to_engine = _Handoff()
        self._stop = False
        self._thread: threading.Thread | None = None
        self._started = False

    def target(self, target: Callable[[], tuple[str, Any]]) -> None:
        """The engine's run (started by the first :meth:`call`)."""
        self._thread = threading.Thread(target=self._main, args=(target,), daemon=True)

    def _main(self, target: Callable[[], tuple[str, Any]]) -> None:
        end = target()
        if not self._stop:
            try:
                self._to_caller.put(end)
            except RuntimeError:  # closed meanwhile: nobody reads it
                if not self._stop:
                    raise

    def ask(self, message: tuple[str, Any]) -> tuple[str, Any]:
        """Engine side: give the caller ``message``; its reply (``stop`` once closed)."""
        if self._stop:
            return ("stop", None)
        try:
            self._to_caller.put(message)
        except RuntimeError:
            if not self._stop:
                raise
        reply = self._to_engine.get()
        return ("stop", None) if self._stop else reply

    def call(self, message: tuple[str, Any] | None) -> tuple[str, Any]:
        """Caller side: give the engine ``message`` (``None``: start it); its next
        message."""
        if not self._started:
            self._started = True
            assert self._thread is not None
            self._thread.start()
        elif message is not None:
            self._to_engine.put(message)
        return self._to_caller.get()

    def close(self) -> None:
        """End the engine (at its next question); returns at once."""
        if self._stop:
            return
        self._stop = True
        if self._started:
            self._to_engine.wake()


def _greenlet_ask(message: tuple[str, Any]) -> tuple[str, Any]:
    """Engine side of a greenlet link: give the caller ``message``; its reply."""
    from greenlet import getcurrent  # type: ignore[import-untyped,unused-ignore]

    parent = getcurrent().parent
    assert parent is not None
    reply: tuple[str, Any] = parent.switch(message)
    return reply


class _GreenletLink:
    """The engine in a greenlet of the caller's thread; a message is a switch."""

    thread_bound = True
    ask = staticmethod(_greenlet_ask)

    def __init__(self) -> None:
        from greenlet import greenlet  # type: ignore[import-untyped,unused-ignore]

        self._greenlet = greenlet
        self._engine: Any = None
        self._thread = threading.get_ident()

    def target(self, target: Callable[[], tuple[str, Any]]) -> None:
        """The engine's run (started by the first :meth:`call`)."""
        self._engine = self._greenlet(target)

    def call(self, message: tuple[str, Any] | None) -> tuple[str, Any]:
        """Caller side: give the engine ``message`` (``None``: start it); its next
        message (the engine's result when it ends)."""
        reply: tuple[str, Any] = (
            self._engine.switch() if message is None else self._engine.switch(message)
        )
        return reply

    def close(self) -> None:
        """End a started engine (it raises at its question and unwinds). From another
        thread (a finalizer run there) nothing is done: the greenlet is ended when it
        is freed."""
        engine = self._engine
        if engine is None or not engine or engine.dead:
            return
        if threading.get_ident() != self._thread:
            return
        try:
            engine.switch(("stop", None))
        except BaseException:
            pass


def _link() -> _ThreadLink | _GreenletLink:
    """A greenlet link when greenlet is installed (and ``SCHEDLAB_STEPPING`` is not
    ``thread``), else a thread link."""
    if os.environ.get("SCHEDLAB_STEPPING", "") != "thread":
        try:
            return _GreenletLink()
        except ImportError:
            pass
    return _ThreadLink()


class _Stopped(Exception):
    """The caller abandoned the simulation."""


__all__ = ["DecisionPoint", "Simulation"]
