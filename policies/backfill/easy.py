"""EASY backfilling (the Extensible Argonne Scheduling sYstem; Lifka 1995, as
analysed by Mu'alem and Feitelson 2001).

At every scheduling pass:

1. start jobs from the head of the queue while they fit;
2. the first job that does not fit (the *head*) gets a reservation at the *shadow
   time*: the earliest time enough processors are free by the running jobs'
   estimates; the processors free then beyond what the head needs are the *extra*
   processors;
3. every later job, in priority order, starts now if it fits and either ends (by
   its estimate) by the shadow time, or uses only extra processors (which it then
   takes from the extra).

Only the head's reservation is protected: later jobs may be delayed by backfilled
ones. Option ``order``: the order in which backfill candidates are tried,
``priority`` (the queue's order, the classic EASY) or ``sjbf`` (shortest estimated
job first, as EASY++ does; Tsafrir, Etsion and Feitelson 2007).

Two shortcuts change nothing in the result (the differential tests compare this
module with the plainly written :class:`schedlab.policies.backfill.depth.DepthReference`
at depth 1): when nothing ended since the last pass and the head is the same job,
only the new arrivals can backfill (free processors, shadow time and extra are
unchanged for the others); and a long queue is first screened with numpy for the
jobs that pass step 3's test at the start of the scan (free processors and extra
only shrink during a scan, so a job failing then fails at its turn too).

Option ``kernel``: ``auto`` (default), ``python`` (:class:`PythonEasy`) or
``compiled`` (:class:`~schedlab.policies.backfill.easy_compiled.CompiledEasy`, the
whole pass in one numba call, ``order=priority`` only); the same schedule job for
job, only the speed differs (``tests/test_sim_easy_compiled.py``). ``auto`` takes
the compiled pass for runs of at least :data:`COMPILED_COLD_MIN_JOBS` jobs, or
:data:`COMPILED_MIN_JOBS` once numba is loaded in the process, when numba is
installed and ``SCHEDLAB_JIT`` is not ``0``. Both keep their own running jobs
(by estimated end), so the engine keeps none for EASY.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from typing import Any

import numpy as np
from schedlab import BackfillSpec, OptionSpec, hookimpl
from schedlab.errors import SimulationError, UsageError
from schedlab.sim import NOT_WAITING, SchedulerState, WaitingArrays, WholeRun, WholeRunOutcome

from .kernel_choice import use_compiled

#: Queue length above which backfill candidates are screened with numpy.
SCREEN_MIN_QUEUE = 48
ORDERS = ("priority", "sjbf")
KERNELS = ("auto", "python", "compiled")
#: With ``kernel=auto``, runs of at least this many jobs use the compiled pass
#: when numba is already loaded in the process (an earlier conservative run);
#: below, the queue is rarely long enough for it to win (a 1,000-job PSP run
#: takes 12 ms in Python, 14 ms compiled) ...
COMPILED_MIN_JOBS = 20_000
#: ... and runs of at least this many when it is not (loading numba and the
#: kernel costs about half a second, more than the compiled pass saves below).
COMPILED_COLD_MIN_JOBS = 200_000


def shadow_time(
    state: SchedulerState, need: int, running: list[tuple[float, int]] | None = None
) -> tuple[float, int]:
    """When ``need`` processors are free by the running jobs' estimates (never
    before now), and how many more than ``need`` are free then (jobs ending at the
    shadow time too count). ``running``: the running jobs as ``(estimated end,
    job)`` sorted (default ``state.running``)."""
    now = state.now
    size = state.size
    if running is None:
        running = state.running
    assert running is not None
    avail = state.free
    for i, (e, r) in enumerate(running):
        avail += size[r]
        if avail >= need:
            shadow = e if e > now else now
            k = i + 1
            n_running = len(running)
            while k < n_running and running[k][0] <= shadow:
                avail += size[running[k][1]]
                k += 1
            return shadow, avail - need
    return now, 0


class Easy:
    """The ``easy`` strategy (see the module docstring): picks its implementation
    when bound (option ``kernel``, as for ``conservative``)."""

    name = "easy"
    #: A stepping simulation's caller may start jobs itself: each implementation
    #: is told (``on_manual_start``) and follows.
    accepts_manual_starts = True
    # Both implementations keep their own running jobs and queue arrays (the
    # compiled one in its kernel's arrays), so the engine keeps neither.
    wants_running = False
    wants_arrays = False

    def __init__(self, order: str = "priority", kernel: str = "auto") -> None:
        if order not in ORDERS:
            raise UsageError(
                f"backfill easy: option order={order!r}: expected one of {', '.join(ORDERS)}"
            )
        if kernel not in KERNELS:
            raise UsageError(
                f"backfill easy: option kernel={kernel!r}: expected one of {', '.join(KERNELS)}"
            )
        if kernel == "compiled" and order != "priority":
            raise UsageError(
                "backfill easy: option kernel=compiled: the compiled pass has order=priority only"
            )
        self.order = order
        self.kernel = kernel
        #: The implementation that ran: "python" or "compiled".
        self.kernel_name = "python"
        self.impl: PythonEasy | Any = None

    @property
    def last(self) -> tuple[int, float, int] | None:
        """(head, shadow time, extra processors) after the last pass."""
        return None if self.impl is None else self.impl.last

    def running(self) -> list[tuple[float, int]]:
        """The running jobs as ``(estimated end, job)``, sorted (for tests)."""
        return [] if self.impl is None else self.impl.running_jobs()

    def for_platform(self) -> Any:
        """The same strategy on a multi-resource machine
        (:class:`~schedlab.policies.backfill.easy_nodes.NodeEasy`)."""
        from .easy_nodes import NodeEasy

        return NodeEasy(order=self.order, kernel=self.kernel)

    def on_estimate_raised(self, job: int, old_end: float, now: float) -> None:
        """A predictor raised a running job's estimate (schedlab.sim.correction):
        the implementation moves the job among its running jobs (the compiled pass
        in its kernel's copy) and makes the next pass a full one."""
        self.impl.on_estimate_raised(job, old_end, now)

    def on_manual_start(self, job: int, now: float) -> None:
        """The caller of a stepping simulation started ``job``: the implementation
        takes it among its running jobs and out of its queue."""
        self.impl.on_manual_start(job, now)

    def run_whole(self, plan: WholeRun) -> WholeRunOutcome | None:
        """The whole run in one compiled call when the compiled pass was chosen
        (:mod:`schedlab.sim.whole_run`); ``None`` (the engine's loop) otherwise."""
        run_whole = getattr(self.impl, "run_whole", None)
        return None if run_whole is None else run_whole(plan)

    def bind(self, state: SchedulerState) -> None:
        """Choose the implementation (and forget any earlier run's) and route the
        engine's calls to it."""
        impl: Any
        if self._use_compiled(state.n):
            from .easy_compiled import CompiledEasy

            impl = CompiledEasy(state)
            self.kernel_name = "compiled"
        else:
            impl = PythonEasy(state, self.order)
            self.kernel_name = "python"
        self.impl = impl
        self.state = state
        # Both implementations follow raised estimates themselves (the compiled one
        # in its kernel's running jobs), so the engine may hold their methods.
        self.schedule = impl.schedule  # type: ignore[method-assign]
        self.on_finish = impl.on_finish
        self.on_reorder = impl.on_reorder

    def _use_compiled(self, n: int) -> bool:
        if self.order != "priority":
            return False
        return use_compiled(
            self.kernel,
            n,
            COMPILED_MIN_JOBS,
            COMPILED_COLD_MIN_JOBS,
            "easy_kernels",
            "EASY backfilling",
        )

    def schedule(self, now: float) -> None:
        """One EASY pass (replaced by the implementation's pass when bound)."""
        raise SimulationError("backfill easy: schedule() called before bind()")


class PythonEasy:
    """EASY in Python: keeps the running jobs sorted by estimated end and numpy
    arrays of the waiting jobs (for the screen of long queues)."""

    def __init__(self, state: SchedulerState, order: str = "priority") -> None:
        self.state = state
        self.order = order
        #: (head, shadow time, extra processors) of the last pass.
        self.last: tuple[int, float, int] | None = None
        #: The running jobs as ``(estimated end, job)``, sorted.
        self.running: list[tuple[float, int]] = []
        self.arrays = WaitingArrays(state.n)
        self.estimated_end = state.estimated_end

    def running_jobs(self) -> list[tuple[float, int]]:
        """The running jobs as ``(estimated end, job)``, sorted."""
        return list(self.running)

    def _arrivals(self, new_jobs: list[int]) -> None:
        """The jobs arrived since the last pass enter the arrays."""
        arrays = self.arrays
        state = self.state
        size = state.size
        estimate = state.estimate
        key_of = state.key_of
        a_size = arrays.size
        a_estimate = arrays.estimate
        a_key = arrays.key
        for j in new_jobs:
            a_size[j] = size[j]
            a_estimate[j] = estimate[j]
            k = key_of[j]
            if type(k) is float or type(k) is int:
                a_key[j] = k
            else:
                arrays.numeric_keys = False
        hi = max(new_jobs) + 1
        if hi > arrays.hi:
            arrays.hi = hi
        lo = min(new_jobs)
        if lo < arrays.lo:  # a dependent job released after later jobs started
            arrays.lo = lo

    def on_finish(self, j: int, now: float) -> None:
        """A job ended: it leaves the running jobs."""
        running = self.running
        del running[bisect_left(running, (self.estimated_end[j], j))]

    def on_estimate_raised(self, job: int, old_end: float, now: float) -> None:
        """A running job's estimate was raised: move it in the running list and
        forget the last pass (its shadow time may have moved)."""
        running = self.running
        i = bisect_left(running, (old_end, job))
        if i < len(running) and running[i][1] == job:
            del running[i]
        insort(running, (self.estimated_end[job], job))
        self.last = None

    def on_manual_start(self, job: int, now: float) -> None:
        """``job`` was started outside the pass (a stepping simulation's caller)."""
        insort(self.running, (self.estimated_end[job], job))
        self.arrays.size[job] = NOT_WAITING
        self.last = None

    def on_reorder(self, now: float) -> None:
        """The queue was re-sorted: the arrays take the new keys."""
        arrays = self.arrays
        queue = self.state.queue
        if arrays.numeric_keys and queue:
            ready = self.state.sorted_keys
            if ready is not None:
                arrays.key[ready[0]] = ready[1]
                return
            try:
                arrays.key[[j for _, j in queue]] = [k for k, _ in queue]
            except (TypeError, ValueError):
                arrays.numeric_keys = False

    def _start(self, j: int) -> None:
        state = self.state
        state.start(j)
        insort(self.running, (state.estimated_end[j], j))
        self.arrays.size[j] = NOT_WAITING

    def _start_from_head(self) -> None:
        state = self.state
        queue = state.queue
        size = state.size
        free = state.free
        count = 0
        for _, j in queue:
            s = size[j]
            if s > free:
                break
            free -= s
            count += 1
        if count:
            jobs = [j for _, j in queue[:count]]
            state.start_from_head()
            estimated_end = state.estimated_end
            running = self.running
            sizes = self.arrays.size
            for j in jobs:
                insort(running, (estimated_end[j], j))
                sizes[j] = NOT_WAITING

    def schedule(self, now: float) -> None:
        """One EASY pass."""
        state = self.state
        queue = state.queue
        if state.new_jobs:
            self._arrivals(state.new_jobs)
        last = self.last
        if (
            last is not None
            and not state.finished_since_pass
            and queue
            and queue[0][1] == last[0]
            and last[1] >= now
        ):
            # Nothing ended and the same head: only the new arrivals can backfill.
            head, shadow, extra = last
            state.log_reservation(head, shadow)
            if state.free and state.new_jobs:
                key_of = state.key_of
                candidates = sorted((key_of[j], j) for j in state.new_jobs)
                extra = self.backfill([j for _, j in candidates], shadow, extra)
                self.last = (head, shadow, extra)
            return

        if state.size[queue[0][1]] <= state.free:
            self._start_from_head()  # 1.
        if not queue:
            self.last = None
            return
        head = queue[0][1]  # 2.
        shadow, extra = shadow_time(state, state.size[head], self.running)
        state.log_reservation(head, shadow)
        if state.free and len(queue) > 1:  # 3.
            if len(queue) > SCREEN_MIN_QUEUE and self.arrays.numeric_keys:
                extra = self.backfill_screened(shadow, extra)
            else:
                extra = self.backfill([j for _, j in queue[1:]], shadow, extra)
        self.last = (head, shadow, extra)

    def backfill(self, candidates: list[int], shadow: float, extra: int) -> int:
        """Step 3 over ``candidates`` (in priority order); returns the extra left."""
        state = self.state
        size = state.size
        est = state.estimate
        now = state.now
        if self.order == "sjbf":
            candidates = sorted(candidates, key=lambda j: (est[j], j))
        for j in candidates:
            s = size[j]
            if s > state.free:
                continue
            if now + est[j] <= shadow:
                pass
            elif s <= extra:
                extra -= s
            else:
                continue
            self._start(j)
            if not state.free:
                break
        return extra

    def backfill_screened(self, shadow: float, extra: int) -> int:
        """Step 3 on a long queue: the numpy screen proposes, the exact test decides."""
        state = self.state
        size = state.size
        est = state.estimate
        now = state.now
        window = shadow - now
        found = self._screen(window, extra)
        if self.order == "sjbf":
            return self.backfill([int(j) for j in found], shadow, extra)
        i = 0
        while i < len(found):
            j = int(found[i])
            s = size[j]
            if s <= state.free and (now + est[j] <= shadow or s <= extra):
                if now + est[j] > shadow:
                    extra -= s
                self._start(j)
                if not state.free:
                    break
                i += 1
            else:
                # Free processors or extra shrank since the screen: screen the rest.
                found = self._screen(window, extra, found[i + 1 :])
                i = 0
        return extra

    def _screen(self, window: float, extra: int, among: Any = None) -> np.ndarray:
        """Waiting jobs (all, or ``among``) passing step 3's test with the free
        processors now, in priority order; a superset by a rounding tolerance."""
        arrays = self.arrays
        free = self.state.free
        sizes = arrays.size
        window += 1e-9 + abs(window) * 1e-12
        if among is not None:
            seg_size = sizes[among]
            mask = (seg_size <= free) & ((arrays.estimate[among] <= window) | (seg_size <= extra))
            return among[mask]
        lo = arrays.first_waiting()
        hi = arrays.hi
        seg_size = sizes[lo:hi]
        mask = (seg_size <= free) & ((arrays.estimate[lo:hi] <= window) | (seg_size <= extra))
        found = np.flatnonzero(mask)
        found += lo
        return arrays.in_priority_order(found)


@hookimpl
def schedlab_backfills() -> list[BackfillSpec]:
    """The ``easy`` strategy."""
    return [
        BackfillSpec(
            name="easy",
            aliases=("aggressive",),
            description="EASY: a reservation for the first blocked job only.",
            factory=Easy,
            options=(
                OptionSpec(
                    "order",
                    str,
                    "priority",
                    "order of backfill candidates: priority (queue order) or sjbf "
                    "(shortest estimate first, EASY++)",
                ),
                OptionSpec(
                    "kernel",
                    str,
                    "auto",
                    "implementation: auto (compiled for long runs when numba is "
                    "installed), python or compiled (order=priority only)",
                ),
            ),
        )
    ]
