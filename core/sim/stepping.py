"""A simulation that stops at every scheduling point and asks (issue 19).

::

    sim = schedlab.Simulation(workload, policy="fcfs", backfill="easy")
    while (point := sim.pending_decision()) is not None:
        sim.decide(order=sorted(point.queue, key=my_score))   # or start=job, or nothing
    result = sim.result()            # the same Result as schedlab.simulate

At each scheduling pass of the engine (after the finishes and submissions of an
instant, see docs/simulation.md) the simulation stops and returns a
:class:`DecisionPoint`: the clock, the waiting jobs in the current priority order,
and the public :class:`~schedlab.sim.SchedulerState` (free processors or node
amounts, running jobs, estimates). :meth:`Simulation.decide` then applies one of:

``order=[jobs]``
    a priority order for the waiting jobs (every waiting job once); the
    backfilling strategy runs its pass with it. The order holds for this pass;
    the jobs still waiting then get the policy's keys again. Giving the queue's own order
    (``point.queue``) is exactly :func:`schedlab.simulate`: a differential test
    checks that on real logs.
``start=job``
    start this waiting job now (it must fit); the simulation stops again at the
    same instant while some waiting job fits, else it runs to the next event. The
    backfilling strategy does not run at such points; it must be ``none``,
    ``easy`` or a strategy declaring ``accepts_manual_starts = True`` (strategies
    that keep reservation books, such as conservative, would lose track).
nothing (``decide()``)
    start nothing now; run to the next event.

An invalid decision (a job that is not waiting, does not fit, an order that is
not a permutation of the queue) raises :class:`~schedlab.errors.UsageError` and
leaves the simulation where it was: decide again.

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

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from ..errors import UsageError
from ..model import Workload
from .result import Result
from .state import SchedulerState, _time


@attrs.define(frozen=True, slots=True, eq=False)
class DecisionPoint:
    """A scheduling point: ``now``, the waiting jobs in priority order
    (``queue``, job indices of ``state.table``) and the scheduler ``state``
    (read it; act only through :meth:`Simulation.decide`)."""

    now: float
    queue: tuple[int, ...]
    state: SchedulerState

    def fits(self, job: int) -> bool:
        """Whether waiting job ``job`` could start now."""
        return _fits(self.state, job)

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
    """The backfilling strategy the engine drives: hands every pass to the caller."""

    #: Every pass goes to the caller: never a whole run of the inner strategy.
    run_whole = None

    def __init__(self, inner: Any, channel: Simulation) -> None:
        self.inner = inner
        self.channel = channel
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
        self.inner.bind(state)

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
        self.inner.schedule(now)

    def schedule(self, now: float) -> None:
        state = self.state
        while state.queue:
            action = self.channel._ask(DecisionPoint(now, tuple(j for _, j in state.queue), state))
            kind, value = action
            if kind == "order":
                if list(value) == [j for _, j in state.queue]:
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
        self.unseen.extend(state.new_jobs)


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
    :func:`schedlab.simulate` (``policy`` orders the queue shown at each point)."""

    def __init__(self, workload: Workload, **options: Any) -> None:
        from ..registry import get_registry
        from .protocols import as_backfill
        from .runner import resolve_component

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
            inner = for_platform()
        inner.name = name
        self._strategy_name = name
        self._manual_starts = name in ("none", "easy") or bool(
            getattr(inner, "accepts_manual_starts", False)
        )
        self._pending: DecisionPoint | None = None
        self._result: Result | None = None
        self._error: BaseException | None = None
        self._finished = False
        strategy = _Handover(inner, self)
        self._link = _link(lambda: self._run(workload, strategy, options))

    # ------------------------------------------------------------------ engine
    def _run(
        self, workload: Workload, strategy: _Handover, options: dict[str, Any]
    ) -> tuple[str, Any]:
        from .api import simulate

        try:
            result = simulate(workload, backfill=strategy, progress=False, **options)
        except BaseException as exc:  # handed to the caller
            return ("error", exc)
        return ("done", result)

    def _ask(self, point: DecisionPoint) -> tuple[str, Any]:
        message = self._link.ask(("point", point))
        if message[0] == "stop":
            raise _Stopped
        return message

    # ------------------------------------------------------------------ caller
    def _wait(self, message: tuple[str, Any] | None = None) -> None:
        """Hand ``message`` (``None``: start) to the engine and take its next point,
        or its end."""
        kind, value = self._link.call(message)
        if kind == "point":
            self._pending = value
            return
        self._finished = True
        self._pending = None
        if kind == "done":
            self._result = value
        elif not isinstance(value, _Stopped):
            # An interrupt (Ctrl-C, a notebook's "interrupt kernel") that landed in
            # the engine ends it: raised once, then a plain error, not the same
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
        """The current scheduling point, or ``None`` when the simulation is over."""
        if self._error is not None:
            raise self._error
        if self._pending is None and not self._finished:
            self._wait()
        return self._pending

    def decide(self, start: int | None = None, order: Sequence[int] | None = None) -> None:
        """Apply a decision at the pending point and run to the next one (see the
        module docstring). A :class:`UsageError` for an invalid decision, which
        leaves the simulation unchanged."""
        point = self.pending_decision()
        if point is None:
            raise UsageError("the simulation is over: no decision is pending")
        if start is not None and order is not None:
            raise UsageError("decide either start= or order=, not both")
        action: tuple[str, Any]
        if start is not None:
            if not self._manual_starts:
                raise UsageError(
                    f"start= decisions need backfill 'none' or 'easy' (the strategy "
                    f"{self._strategy_name!r} keeps its own reservations); give order= instead"
                )
            if start not in point.queue:
                raise UsageError(f"job {start!r} is not waiting at t={point.now:g}")
            if not point.fits(start):
                raise UsageError(f"job {start} does not fit at t={point.now:g}")
            action = ("start", int(start))
        elif order is not None:
            ordered = [int(j) for j in order]
            if sorted(ordered) != sorted(point.queue):
                raise UsageError(
                    f"order must list every waiting job once ({len(point.queue)} jobs) at "
                    f"t={point.now:g}"
                )
            action = ("order", ordered)
        else:
            action = ("nothing", None)
        self._pending = None
        self._wait(action)

    def result(self) -> Result:
        """The finished simulation's :class:`~schedlab.sim.result.Result` (runs the
        remaining points with the policy's own order if decisions are pending)."""
        while (point := self.pending_decision()) is not None:
            self.decide(order=point.queue)
        assert self._result is not None
        return self._result

    def close(self) -> None:
        """Abandon the simulation (its engine ends)."""
        if self._pending is not None:
            self._pending = None
            self._link.call(("stop", None))
            self._finished = True


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


class _ThreadLink:
    """The engine in a worker thread; messages cross by :class:`_Handoff`."""

    def __init__(self, target: Callable[[], tuple[str, Any]]) -> None:
        self._to_caller = _Handoff()
        self._to_engine = _Handoff()
        self._thread = threading.Thread(target=lambda: self._to_caller.put(target()), daemon=True)
        self._started = False

    def ask(self, message: tuple[str, Any]) -> tuple[str, Any]:
        """Engine side: give the caller ``message``; its reply."""
        self._to_caller.put(message)
        return self._to_engine.get()

    def call(self, message: tuple[str, Any] | None) -> tuple[str, Any]:
        """Caller side: give the engine ``message`` (``None``: start it); its next
        message."""
        if not self._started:
            self._started = True
            self._thread.start()
        elif message is not None:
            self._to_engine.put(message)
        return self._to_caller.get()


class _GreenletLink:
    """The engine in a greenlet of the caller's thread; a message is a switch."""

    def __init__(self, target: Callable[[], tuple[str, Any]]) -> None:
        from greenlet import greenlet  # type: ignore[import-untyped,unused-ignore]

        self._engine = greenlet(target)

    def ask(self, message: tuple[str, Any]) -> tuple[str, Any]:
        """Engine side: give the caller ``message``; its reply."""
        parent = self._engine.parent
        assert parent is not None
        reply: tuple[str, Any] = parent.switch(message)
        return reply

    def call(self, message: tuple[str, Any] | None) -> tuple[str, Any]:
        """Caller side: give the engine ``message`` (``None``: start it); its next
        message (the engine's result when it ends)."""
        reply: tuple[str, Any] = (
            self._engine.switch() if message is None else self._engine.switch(message)
        )
        return reply


def _link(target: Callable[[], tuple[str, Any]]) -> _ThreadLink | _GreenletLink:
    """A greenlet link when greenlet is installed (and ``SCHEDLAB_STEPPING`` is not
    ``thread``), else a thread link."""
    if os.environ.get("SCHEDLAB_STEPPING", "") != "thread":
        try:
            return _GreenletLink(target)
        except ImportError:
            pass
    return _ThreadLink(target)


class _Stopped(Exception):
    """The caller abandoned the simulation."""


__all__ = ["DecisionPoint", "Simulation"]
