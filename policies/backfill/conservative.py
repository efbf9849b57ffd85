"""Conservative backfilling (Mu'alem and Feitelson 2001): every waiting job holds a
reservation.

* An arriving job gets the earliest reservation that delays no existing one (in
  priority order among jobs arriving at the same instant).
* A job starts when its reservation comes, if its processors are really free; when
  a job running past its estimate still holds them, the reservation is *stale* and
  every reservation is planned again, in priority order, at the next real event.
* When a running job's estimate is raised (a predictor's correction), it holds its
  processors up to the new estimated end and every reservation is planned again,
  in priority order, at that instant.
* When a job ends before its estimate, the schedule is *compressed* as the
  textbook does: every waiting job, in priority order, moves to its earliest start
  that delays no other reservation (searched only before a horizon that bounds
  where capacity came free since the job was last offered some: see
  :class:`~schedlab.policies.backfill.compression.FastCompression`). A reservation
  never moves later.

Option ``kernel``: ``auto`` (default: the compiled kernels of
:mod:`~schedlab.policies.backfill.kernels` for runs of at least
:data:`COMPILED_MIN_JOBS` jobs when numba is installed and already loaded, of
:data:`COMPILED_COLD_MIN_JOBS` when it is not, and ``SCHEDLAB_JIT`` is not ``0``),
``python`` or ``compiled``. Both compute exactly what the plainly written
:class:`~schedlab.policies.backfill.reference.ReferenceConservative` computes (the
tests compare every reservation each job held); only the speed differs.
"""

from __future__ import annotations

import math
from heapq import heappop
from typing import Any

from schedlab import BackfillSpec, OptionSpec, hookimpl
from schedlab.errors import SimulationError, UsageError
from schedlab.sim import Profile, SchedulerState, WholeRun, WholeRunOutcome

from .compression import FastCompression
from .kernel_choice import use_compiled

INF = math.inf
#: Runs of at least this many jobs use the compiled kernels when numba is
#: installed and already loaded in the process (a sweep, an earlier run): below,
#: loading the kernels costs more than they save ...
COMPILED_MIN_JOBS = 2000
#: ... and runs of at least this many when numba is not loaded yet: importing it
#: and loading the cached kernels costs about 0.4 s of CPU in a fresh process
#: (numba's own start, even for a trivial cached function). Since the textbook
#: compression (2026-11-28) the compiled kernels win it back on KTH-SP2 (28,475
#: jobs: whole ``schedlab simulate`` 0.78 s of CPU compiled, 0.88 s in Python),
#: not on HPC2N's 3,170 jobs (0.70 s against 0.33 s); it was 50,000.
COMPILED_COLD_MIN_JOBS = 20_000
#: ... or when the run is crowded, whatever its length: a queue of at least this
#: many jobs builds up in the fluid model of :func:`peak_backlog`. The Python
#: pass's compressions grow with the queue, not the jobs: 1,000 jobs submitted at
#: once took 13 s in Python (0.9 s compiled), lublin_256 (10,000 jobs, a backlog of
#: 906) 12.4 s (1.0 s), 3,000 jobs at one instant inside 15,000 at low load 96 s
#: (6.5 s), numba's load included; HPC2N (3,170 jobs, a backlog of 198) takes
#: 0.33 s in Python, 0.70 s compiled.
CROWDED_JOBS = 500
KERNELS = ("auto", "python", "compiled")


def peak_backlog(state: SchedulerState) -> float:
    """The longest queue, in jobs, of the run's fluid model: the jobs' requested
    work (size x requested time, the run time when the request is unknown, as the
    engine's fallback; the estimates themselves are made at submission) arrives at
    the submissions and the whole machine drains it (Lindley's recursion); the
    peak backlog over the mean work of a job."""
    import numpy as np

    submit = np.asarray(state.submit, dtype=np.float64)
    if not len(submit):
        return 0.0
    requested = np.asarray(state.table.requested_time, dtype=np.float64)
    run_time = np.asarray(state.table.run_time, dtype=np.float64)
    requested = np.where(requested > 0, requested, run_time)
    work = np.nan_to_num(np.asarray(state.size, dtype=np.float64) * requested)
    order = np.argsort(submit, kind="stable")
    t, work = submit[order], work[order]
    done = np.cumsum(work)
    # backlog after job i: max over k <= i of (work of jobs k..i) - procs x (t_i - t_k)
    backlog = (done - state.procs * t) - np.minimum.accumulate(done - work - state.procs * t)
    positive = work > 0
    if not positive.any():
        return 0.0
    return float(backlog.max() / work[positive].mean())


class Conservative:
    """The ``conservative`` strategy: picks its implementation when bound."""

    name = "conservative"
    wants_arrays = True
    idle_passes = True

    def __init__(self, kernel: str = "auto") -> None:
        if kernel not in KERNELS:
            raise UsageError(
                f"backfill conservative: option kernel={kernel!r}: expected one of "
                f"{', '.join(KERNELS)}"
            )
        self.kernel = kernel
        #: The implementation that ran: "python" or "compiled".
        self.kernel_name = "python"
        self.impl: Any = None

    def for_platform(self) -> Any:
        """The same strategy on a multi-resource machine
        (:class:`~schedlab.policies.backfill.conservative_nodes.NodeConservative`,
        with the same ``kernel`` option)."""
        from .conservative_nodes import NodeConservative

        return NodeConservative(kernel=self.kernel)

    def run_whole(self, plan: WholeRun) -> WholeRunOutcome | None:
        """The whole run in one compiled call when the compiled pass was chosen
        (:meth:`.compiled.CompiledConservativePass.run_whole`); ``None`` (the
        engine's loop) otherwise."""
        run_whole = getattr(self.impl, "run_whole", None)
        return None if run_whole is None else run_whole(plan)

    def bind(self, state: SchedulerState) -> None:
        """Choose the implementation and route the engine's calls to it."""
        impl: Any
        if self._use_compiled(state):
            from .compiled import CompiledConservativePass

            impl = CompiledConservativePass(state)
            # The waiting-job arrays serve only the Python implementation's
            # screens: the engine reads them after binding, so dropping them here
            # spares it their upkeep at every arrival and their 24 bytes a job.
            state.arrays = None
            self.on_submit = impl.on_submit
            self.on_reorder = impl.on_reorder
            self.kernel_name = "compiled"
        else:
            impl = PythonConservative(state)
            self.kernel_name = "python"
        self.impl = impl
        # The implementation's bound methods, called directly (no delegation per call).
        self.schedule = impl.schedule  # type: ignore[method-assign]
        self.on_finish = impl.on_finish
        self.on_estimate_raised = impl.on_estimate_raised
        self.next_wakeup = impl.next_wakeup
        self.on_hold = impl.on_hold

    def _use_compiled(self, state: SchedulerState) -> bool:
        n = state.n
        if (
            self.kernel == "auto"
            and CROWDED_JOBS <= n < COMPILED_COLD_MIN_JOBS
            and peak_backlog(state) >= CROWDED_JOBS
        ):
            n = COMPILED_COLD_MIN_JOBS  # a long queue ahead: as a long run
        return use_compiled(
            self.kernel,
            n,
            COMPILED_MIN_JOBS,
            COMPILED_COLD_MIN_JOBS,
            "kernels",
            "conservative backfilling",
        )

    def schedule(self, now: float) -> None:
        """Replaced by the implementation's pass when bound."""
        raise SimulationError("backfill conservative: schedule() called before bind()")


class PythonConservative(FastCompression):
    """Conservative backfilling in Python on a :class:`~schedlab.sim.Profile` kept
    between passes (the compression is in :class:`FastCompression`)."""

    def __init__(self, state: SchedulerState) -> None:
        self.state = state
        self.profile: Profile | None = None
        #: Timers ``(reserved start, job)``; a timer whose job moved is skipped.
        self.due_heap: list[tuple[float, int]] = []
        #: End of the capacity freed by early finishes since the last pass.
        self.horizon = -INF
        #: End of the last slot a move vacated in the last compression (the next
        #: one offers it to the jobs before the mover, see FastCompression).
        self.carry = -INF
        #: Jobs whose reservation came while their processors were still held.
        self.stale: set[int] = set()
        #: A stepping simulation's caller held back the jobs due at this time
        #: (:meth:`on_hold`; ``-inf``: none held).
        self.held = -INF
        #: Timers of reservations the caller held back, taken off ``due_heap``.
        self.overdue: list[tuple[float, int]] = []
        self.res = state.reservation
        arrays = state.arrays
        #: The reservation of each waiting job as a numpy array (vectorised screens).
        self.res_array = None
        if arrays is not None:
            import numpy as np

            self.res_array = np.full(state.n, math.nan)

    def next_wakeup(self) -> float:
        """The earliest reservation ahead (timers of moved reservations wake nobody;
        those of reservations the caller held back wait for the next pass)."""
        dh = self.due_heap
        res = self.res
        held = self.held
        while dh:
            t, j = dh[0]
            if res[j] != t:
                heappop(dh)
            elif t <= held:
                self.overdue.append(heappop(dh))
            else:
                break
        return dh[0][0] if dh else INF

    def on_hold(self, now: float) -> None:
        """A stepping simulation's caller starts nothing at ``now`` (``decide()``):
        reservations due now wake nobody until the next event, whose pass finds
        them past and plans every reservation again (as for a stale reservation,
        at the next job end or arrival)."""
        self.held = now

    def on_finish(self, j: int, now: float) -> None:
        """A job ended: what it held beyond ``now`` by its estimate is free again."""
        profile = self.profile
        if profile is None:
            return
        e = self.state.estimated_end[j]
        if now < e:
            profile.advance(now)
            profile.release(now, e, self.state.size[j])
            if e > self.horizon:
                self.horizon = e

    def on_estimate_raised(self, j: int, old_end: float, now: float) -> None:
        """A running job's estimate was raised (a corrected prediction): it holds
        its processors up to its new estimated end, which may overlap reservations,
        so every reservation is planned again at this instant's pass (as for a stale
        reservation)."""
        profile = self.profile
        if profile is None:
            return
        profile.advance(now)
        profile.reserve(now, self.state.estimated_end[j], self.state.size[j])
        self.stale.add(-1)

    def _place(self, j: int, now: float, due: list[int]) -> None:
        """Reserve the earliest slot for ``j`` (due now, or a timer at its start)."""
        state = self.state
        s = state.size[j]
        d = state.estimate[j]
        profile = self.profile
        assert profile is not None
        at = profile.first_fit(s, d)
        profile.reserve(at, at + d, s, True)
        self._set_reservation(j, at, now, due)

    def schedule(self, now: float) -> None:
        """One pass: timers due, re-planning or compression, new arrivals, starts."""
        state = self.state
        profile = self.profile
        if profile is None:
            profile = self.profile = Profile(state.procs, now)
        profile.advance(now)
        res = self.res
        key_of = state.key_of
        size = state.size
        due: list[int] = []

        # Reservations that came due (timers); a reservation whose time passed
        # without the job starting is stale (a job ran past its estimate).
        stale = bool(self.stale)
        dh = self.due_heap
        while dh and dh[0][0] <= now:
            t, j = heappop(dh)
            if res[j] == t:
                if t == now:
                    due.append(j)
                else:
                    stale = True
        if self.overdue:
            # Held back by a stepping simulation's caller: past now (or due again
            # if the caller decided otherwise at the same instant).
            for t, j in self.overdue:
                if res[j] == t:
                    if t == now:
                        due.append(j)
                    else:
                        stale = True
            self.overdue = []
        self.held = -INF
        if stale and not state.real_event:
            # Only a timer woke us: wait for a job to really end (or arrive) before
            # planning again, instead of creeping forward timer by timer.
            self.stale.update(j for j in due if size[j] > state.free)
            due = [j for j in due if size[j] <= state.free]
            stale = False
            if not self.stale:
                self.stale.add(-1)  # remember that a re-planning is due
        if stale:
            # Plan every reservation again in priority order: the stale jobs keep
            # their rank.
            self.stale = set()
            new = set(state.new_jobs)
            waiting = [j for _, j in state.queue if j not in new]
            for j in waiting:
                r = res[j]
                profile.release(r, r + state.estimate[j], size[j])
            due = []
            for j in waiting:
                self._place(j, now, due)
        elif self.horizon > now and state.queue:
            self._compress(now, due)
        self.horizon = -INF

        new_jobs = state.new_jobs
        if new_jobs:
            if len(new_jobs) > 1:
                new_jobs = sorted(new_jobs, key=lambda j: (key_of[j], j))
            for j in new_jobs:
                self._place(j, now, due)

        if due:
            if len(due) > 1:
                due = sorted(set(due), key=lambda j: (key_of[j], j))
            res_array = self.res_array
            for j in due:
                if size[j] <= state.free:
                    if res_array is not None:
                        res_array[j] = math.nan
                    state.start(j)
                else:
                    # The processors are still held by a job past its estimate.
                    self.stale.add(j)


@hookimpl
def schedlab_backfills() -> list[BackfillSpec]:
    """The ``conservative`` strategy."""
    return [
        BackfillSpec(
            name="conservative",
            description="A reservation for every waiting job, compressed when jobs end early.",
            factory=Conservative,
            options=(
                OptionSpec(
                    "kernel",
                    str,
                    "auto",
                    "implementation: auto (compiled for long runs when numba is "
                    "installed), python or compiled",
                ),
            ),
        )
    ]
