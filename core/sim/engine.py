"""The event-driven simulation loop.

One loop over event times. At each time ``now``:

1. every job ending at ``now`` finishes (in job order) and frees its processors;
   dependent jobs are released (submitted after their think time);
2. every job submitted at ``now`` enters the wait queue (in job order);
3. one scheduling pass starts what the policy and backfilling strategy allow.

A job started with a run time of 0 finishes at the same instant, which gives a
second round (finishes, then a pass) at that time.

The queue is a list of ``(key, job)`` tuples sorted by the policy's key, ties by
job index. Running jobs are kept in a heap by real end (the events) and in a sorted
list by *estimated* end (what the scheduler sees); a job past its estimated end is
treated as ending "now". Everything per job lives in plain lists indexed by job; no
per-job objects and no plugin-manager calls happen inside the loop.
"""

from __future__ import annotations

import math
import os
from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable
from heapq import heappop, heappush
from typing import Any

import numpy as np

from ..errors import SimulationError
from .compress import movable
from .prepare import Prepared
from .profile import Profile

INF = math.inf
#: The shortest estimate the scheduler uses (s): a job must hold its processors for
#: some time in the availability profile, even one that asks for 0 s.
MIN_ESTIMATE = 1e-3
#: Size marking a job that is not waiting in the EASY screen arrays.
SCREEN_GONE = 2**62
#: Queue length above which EASY screens backfill candidates with numpy.
SCREEN_MIN_QUEUE = 48
#: Profile length (slices) up to which conservative compression searches each
#: candidate directly instead of keeping first fits by job shape.
SHORT_PROFILE = 256
#: Queue length above which conservative compression first skips, with one numpy
#: screen, the jobs before the first one that can move.
SCREEN_COMPRESS_QUEUE = 256
#: Runs of at least this many jobs use the compiled conservative kernels
#: (:mod:`schedlab.sim.jit`) when numba is installed: below, loading them costs
#: more than they save.
COMPILED_MIN_JOBS = 2000


class Engine:
    """One simulation run. Build it, call :meth:`run`, read the per-job lists."""

    def __init__(
        self,
        prepared: Prepared,
        policy: Any,
        depth: int | None,
        estimator: Any,
        estimate_fallback: Callable[[int], float] | None = None,
        progress: Callable[[int, int], None] | None = None,
        progress_every: int = 4096,
        force_generic: bool = False,
        force_reference: bool = False,
    ) -> None:
        table = prepared.table
        self.table = table
        self.procs = table.procs
        self.n = len(table)
        self.policy = policy
        self.depth = depth
        self.estimator = estimator
        self.estimate_fallback = estimate_fallback
        self.progress = progress
        self.progress_every = progress_every
        self.force_generic = force_generic
        #: Tests: run conservative backfilling with the original (slow, simple)
        #: compression and timers, the reference the fast path is checked against.
        self.force_reference = force_reference

        self.size = table.size
        self.run_time = table.run_time
        self.submit = table.submit
        self.est = table.estimate
        self.predecessor = prepared.predecessor
        self.think_time = prepared.think_time

        n = self.n
        self.start = [math.nan] * n
        self.end = [math.nan] * n
        self.est_end = [math.nan] * n
        self.qkey: list[Any] = [None] * n
        self.free = self.procs
        self.queue: list[tuple[Any, int]] = []
        self.finish_heap: list[tuple[float, int]] = []
        #: The running jobs by estimated end, for EASY's shadow time and the
        #: profile of reservation depth k (conservative keeps its own profile).
        self.running_est: list[tuple[float, int]] | None = [] if depth is not None else None
        self.events = 0
        self.passes = 0
        self.estimate_fallbacks = 0
        self.dependencies_honoured = 0

        # Policy hooks, looked up once.
        self.policy_key = policy.key
        self.policy_keys = getattr(policy, "keys", None)
        self.dynamic = bool(getattr(policy, "dynamic", False))
        self.on_submit = getattr(policy, "on_submit", None)
        self.on_start = getattr(policy, "on_start", None)
        self.on_finish = getattr(policy, "on_finish", None)
        self.est_on_finish = getattr(estimator, "on_finish", None)
        self.rekey = False

        # EASY incremental state: (head job, shadow, extra) of the last pass.
        self.finished_since_pass = True
        self.new_jobs: list[int] = []
        self.easy_state: tuple[int, float, int] | None = None

        # EASY candidate screen for long queues: numpy arrays by job index holding
        # the size of each waiting job (SCREEN_GONE otherwise), its estimate and its
        # (numeric) key, so one vectorised test finds the jobs that could backfill.
        self.use_screen = (depth == 1 or depth is None) and not force_generic
        if self.use_screen:
            self.screen_size = np.full(n, SCREEN_GONE, dtype=np.int64)
            self.screen_est = np.zeros(n, dtype=np.float64)
            self.screen_key = np.zeros(n, dtype=np.float64)
        # Conservative: the reservation of each waiting job (NaN otherwise), for the
        # vectorised compression screen.
        self.screen_res = np.full(n, math.nan) if self.use_screen and depth is None else None
        self.numeric_keys = True
        self.screen_lo = 0
        self.screen_hi = 0

        # Conservative state.
        self.res_start = [math.nan] * n
        self.profile: Profile | None = None
        self.due_heap: list[tuple[float, int]] = []
        #: Tests set this to a dict to record every reservation: job -> [(pass, time)].
        self.reservation_log: dict[int, list[tuple[int, float]]] | None = None
        self.horizon = -INF  # end of the capacity freed by early finishes, to compress
        self.stale: set[int] = set()
        self.real_event = True
        #: Conservative backfilling with the compiled kernels: ``None`` decides by
        #: run length and ``SCHEDLAB_JIT`` (tests set True or False).
        self.compiled: bool | None = None
        self.kernel: Any = None
        self.next_due = INF  # compiled: the earliest reservation ahead

    # ------------------------------------------------------------------ helpers
    def _key(self, j: int, now: float) -> Any:
        return self.policy_key(j, now)

    def _rekey_queue(self, now: float) -> None:
        queue = self.queue
        jobs = [j for _, j in queue]
        if self.policy_keys is not None:
            keys = list(self.policy_keys(jobs, now))
        else:
            key = self.policy_key
            keys = [key(j, now) for j in jobs]
        qkey = self.qkey
        for j, k in zip(jobs, keys, strict=True):
            qkey[j] = k
        queue[:] = sorted(zip(keys, jobs, strict=True))
        if self.kernel is not None:
            # The new jobs enter the kernel's queue at the pass.
            new = set(self.new_jobs)
            self.kernel.set_queue([j for _, j in queue if j not in new])
        if self.use_screen and self.numeric_keys and jobs:
            try:
                self.screen_key[jobs] = keys
            except (TypeError, ValueError):
                self.numeric_keys = False

    def _start(self, j: int, now: float) -> None:
        self.start[j] = now
        end = now + self.run_time[j]
        self.end[j] = end
        heappush(self.finish_heap, (end, j))
        e = now + self.est[j]
        self.est_end[j] = e
        if self.running_est is not None:
            insort(self.running_est, (e, j))
        if self.on_start is not None and self.on_start(j, now):
            self.rekey = True
        if self.use_screen:
            self.screen_size[j] = SCREEN_GONE

    # ------------------------------------------------------------------ main loop
    def run(self) -> None:
        """Simulate every job."""
        n = self.n
        if n == 0:
            return
        depth = self.depth
        submit = self.submit
        predecessor = self.predecessor
        # Independent jobs arrive from a stream sorted by job index (= submit order);
        # dependent ones are released into a heap when their predecessor ends.
        stream = [j for j in range(n) if predecessor[j] < 0]
        dependents: dict[int, list[int]] = {}
        for j in range(n):
            p = predecessor[j]
            if p >= 0:
                dependents.setdefault(p, []).append(j)
        self.dependents = dependents
        release_heap: list[tuple[float, int]] = []
        n_stream = len(stream)
        si = 0

        static_est = None
        estimates = getattr(self.estimator, "estimates", None)
        if estimates is not None:
            static_est = list(estimates(self.table))
            if len(static_est) != n:
                raise SimulationError(
                    f"estimator returned {len(static_est)} estimates for {n} jobs"
                )
        estimate_one = getattr(self.estimator, "estimate", None)
        if static_est is None and estimate_one is None:
            raise SimulationError(
                f"{type(self.estimator).__name__} is not an estimator: it needs an "
                "estimates(table) or estimate(job, now) method"
            )
        fallback = self.estimate_fallback

        if depth is None:
            pass_ = self._pass_conservative
            self.setup()
            if self.kernel is not None:
                pass_ = self._pass_conservative_compiled
        elif depth == 0:
            pass_ = self._pass_none
        elif depth == 1 and not self.force_generic:
            pass_ = self._pass_easy
        else:
            pass_ = self._pass_depth

        fh = self.finish_heap
        dh = self.due_heap
        res_start = self.res_start
        skip_stale_timers = depth is None and not self.force_reference
        queue = self.queue
        size = self.size
        est = self.est
        qkey = self.qkey
        policy_key = self.policy_key
        on_submit = self.on_submit
        on_finish = self.on_finish
        est_on_finish = self.est_on_finish
        running_est = self.running_est
        est_end = self.est_end
        new_jobs = self.new_jobs
        dynamic = self.dynamic
        use_screen = self.use_screen
        progress = self.progress
        every = self.progress_every
        kernel = self.kernel
        done = 0
        tick = 0

        while True:
            t = fh[0][0] if fh else INF
            if si < n_stream:
                ts = submit[stream[si]]
                if ts < t:
                    t = ts
            if release_heap and release_heap[0][0] < t:
                t = release_heap[0][0]
            if dh:
                if skip_stale_timers:
                    # A timer of a reservation that moved (or started) wakes nobody.
                    while dh and res_start[dh[0][1]] != dh[0][0]:
                        heappop(dh)
                if dh and dh[0][0] < t:
                    t = dh[0][0]
            elif self.next_due < t:
                t = self.next_due
            if t == INF:
                break
            now = t

            # 1. finishes
            while fh and fh[0][0] == now:
                _, j = heappop(fh)
                self.free += size[j]
                if running_est is not None:
                    del running_est[bisect_left(running_est, (est_end[j], j))]
                self.finished_since_pass = True
                self.events += 1
                done += 1
                if depth is None:
                    self._conservative_finish(j, now)
                if on_finish is not None and on_finish(j, now):
                    self.rekey = True
                if est_on_finish is not None:
                    est_on_finish(j, now)
                deps = dependents.get(j)
                if deps:
                    for d in deps:
                        heappush(release_heap, (now + self.think_time[d], d))

            # 2. submissions, in job order
            arriving: list[int] | None = None
            while si < n_stream and submit[stream[si]] == now:
                if arriving is None:
                    arriving = []
                arriving.append(stream[si])
                si += 1
            if release_heap and release_heap[0][0] == now:
                if arriving is None:
                    arriving = []
                while release_heap and release_heap[0][0] == now:
                    _, d = heappop(release_heap)
                    submit[d] = now
                    self.dependencies_honoured += 1
                    arriving.append(d)
                arriving.sort()
            if arriving is not None:
                for j in arriving:
                    self.events += 1
                    if static_est is not None:
                        e = static_est[j]
                    else:
                        e = estimate_one(j, now)
                    if e != e:
                        self.estimate_fallbacks += 1
                        e = fallback(j) if fallback is not None else self.run_time[j]
                    if e < MIN_ESTIMATE:
                        e = MIN_ESTIMATE
                    est[j] = e
                    if on_submit is not None and on_submit(j, now):
                        self.rekey = True
                    k = policy_key(j, now)
                    qkey[j] = k
                    insort(queue, (k, j))
                    if kernel is not None:
                        kernel.arrive(j, e)
                    new_jobs.append(j)
                    if use_screen:
                        self.screen_size[j] = size[j]
                        self.screen_est[j] = e
                        if type(k) is float or type(k) is int:
                            self.screen_key[j] = k
                        else:
                            self.numeric_keys = False
                        if j >= self.screen_hi:
                            self.screen_hi = j + 1

            # 3. one scheduling pass
            self.real_event = self.finished_since_pass or arriving is not None
            if dynamic or self.rekey:
                if queue:
                    self._rekey_queue(now)
                self.rekey = False
                self.finished_since_pass = True
            if queue or depth is None:
                self.passes += 1
                pass_(now)
            new_jobs.clear()
            self.finished_since_pass = False

            if progress is not None:
                tick += 1
                if tick >= every:
                    tick = 0
                    progress(done, n)

        if queue:
            raise SimulationError(
                f"internal error: {len(queue)} jobs still waiting with no event left"
            )
        if progress is not None:
            progress(done, n)

    # ------------------------------------------------------------------ passes
    def _pass_none(self, now: float) -> None:
        """No backfilling: start jobs in queue order until one does not fit."""
        queue = self.queue
        size = self.size
        free = self.free
        count = 0
        for _, j in queue:
            s = size[j]
            if s > free:
                break
            free -= s
            self.free = free
            self._start(j, now)
            count += 1
        if count:
            del queue[:count]

    def _pass_easy(self, now: float) -> None:
        """EASY: start from the head while jobs fit; reserve for the first blocked job
        (the shadow time, when enough processors will be free by the estimates) and
        start later jobs that fit now and either end by the shadow time or use only
        processors the reservation leaves over (``extra``)."""
        queue = self.queue
        size = self.size
        est = self.est
        state = self.easy_state
        if (
            state is not None
            and not self.finished_since_pass
            and queue
            and queue[0][1] == state[0]
            and state[1] >= now
        ):
            # Nothing ended since the last pass and the head is the same job: the
            # jobs checked then would fail again (free processors, shadow time and
            # extra are unchanged, and ending by the shadow only gets harder), so only
            # the new arrivals are candidates.
            head, shadow, extra = state
            if self.reservation_log is not None:
                self.reservation_log.setdefault(head, []).append((self.passes, shadow))
            free = self.free
            if free == 0 or not self.new_jobs:
                return
            qkey = self.qkey
            candidates = sorted((qkey[j], j) for j in self.new_jobs)
            started, extra = self._backfill_scan(candidates, now, free, shadow, extra)
            for j in started:
                del queue[bisect_left(queue, (qkey[j], j))]
            self.easy_state = (head, shadow, extra)
            return

        self._pass_none(now)  # start from the head while jobs fit
        free = self.free
        if not queue:
            self.easy_state = None
            return
        head = queue[0][1]
        need = size[head]
        avail = free
        shadow = now
        extra = 0
        running = self.running_est
        assert running is not None
        for i, (e, r) in enumerate(running):
            avail += size[r]
            if avail >= need:
                shadow = e if e > now else now
                # Jobs ending at the shadow time too leave their processors extra.
                k = i + 1
                n_running = len(running)
                while k < n_running and running[k][0] <= shadow:
                    avail += size[running[k][1]]
                    k += 1
                extra = avail - need
                break
        if self.reservation_log is not None:
            self.reservation_log.setdefault(head, []).append((self.passes, shadow))
        if free > 0 and len(queue) > 1:
            # A long queue is first screened with numpy for the jobs that pass the
            # test below at the start of the scan; visiting only those, in priority
            # order, starts exactly what a scan of the whole queue would (free and
            # extra only shrink during the scan, so a job failing at the start fails
            # at its turn too).
            qkey = self.qkey
            started = []
            if len(queue) > SCREEN_MIN_QUEUE and self.numeric_keys:
                window = shadow - now
                found = self._screen(free, window, extra)
                i = 0
                while i < len(found):
                    j = int(found[i])
                    s = size[j]
                    if s <= free and (now + est[j] <= shadow or s <= extra):
                        if now + est[j] > shadow:
                            extra -= s
                        free -= s
                        self.free = free
                        self._start(j, now)
                        started.append(j)
                        if free == 0:
                            break
                        i += 1
                    else:
                        # free or extra shrank since the screen: screen the rest again
                        found = self._screen(free, window, extra, found[i + 1 :])
                        i = 0
            else:
                started, extra = self._backfill_scan(queue[1:], now, free, shadow, extra)
            for j in started:
                del queue[bisect_left(queue, (qkey[j], j))]
        self.easy_state = (head, shadow, extra)

    def _backfill_scan(
        self, items: list[tuple[Any, int]], now: float, free: int, shadow: float, extra: int
    ) -> tuple[list[int], int]:
        """EASY's backfill test over ``(key, job)`` items in priority order: start every
        job that fits in ``free`` processors now and either ends by the head's
        reservation (``shadow``) or uses only processors it leaves over (``extra``).
        Returns the jobs started and the extra processors left."""
        size = self.size
        est = self.est
        started = []
        for _, j in items:
            s = size[j]
            if s > free:
                continue
            if now + est[j] <= shadow:
                pass
            elif s <= extra:
                extra -= s
            else:
                continue
            free -= s
            self.free = free
            self._start(j, now)
            started.append(j)
            if free == 0:
                break
        return started, extra

    def _screen(
        self, free: int, window: float, extra: int, among: np.ndarray | None = None
    ) -> np.ndarray:
        """Waiting jobs (all, or ``among``) that pass EASY's backfill test with these
        free processors, shadow window and extra processors, in priority order; a
        superset by a rounding tolerance (the caller tests exactly)."""
        sizes = self.screen_size
        window += 1e-9 + abs(window) * 1e-12
        if among is not None:
            seg_size = sizes[among]
            mask = (seg_size <= free) & ((self.screen_est[among] <= window) | (seg_size <= extra))
            return among[mask]
        lo = self.screen_lo
        while sizes[lo] == SCREEN_GONE:
            lo += 1
        self.screen_lo = lo
        hi = self.screen_hi
        seg_size = sizes[lo:hi]
        mask = (seg_size <= free) & ((self.screen_est[lo:hi] <= window) | (seg_size <= extra))
        found = np.flatnonzero(mask)
        found += lo
        if len(found) > 1:
            keys = self.screen_key[found]
            if (keys[1:] < keys[:-1]).any():
                found = found[np.lexsort((found, keys))]
        return found

    def _running_profile(self, now: float) -> Profile:
        """A fresh profile from the running jobs' estimated ends."""
        profile = Profile(self.procs, now)
        free = self.free
        times = profile.times
        frees = profile.free
        frees[0] = free
        size = self.size
        running = self.running_est
        assert running is not None
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

    def _pass_depth(self, now: float) -> None:
        """Reservation depth ``k``: the first ``k`` blocked jobs (in priority order)
        get reservations, recomputed from the running jobs at every pass; any other
        job starts if it fits now without delaying a reservation."""
        queue = self.queue
        if not queue:
            return
        size = self.size
        est = self.est
        depth = self.depth
        assert depth is not None
        profile = self._running_profile(now)
        reserved = 0
        started_idx = []
        for idx, (_, j) in enumerate(queue):
            s = size[j]
            d = est[j]
            if reserved < depth:
                at = profile.earliest(s, d)
                if at <= now and s <= self.free:
                    self.free -= s
                    profile.reserve(now, now + d, s)
                    self._start(j, now)
                    started_idx.append(idx)
                else:
                    profile.reserve(at, at + d, s)
                    reserved += 1
            elif s <= self.free and profile.fits_now(s, d):
                self.free -= s
                profile.reserve(now, now + d, s)
                self._start(j, now)
                started_idx.append(idx)
            if self.free == 0 and reserved >= depth:
                break
        for idx in reversed(started_idx):
            del queue[idx]

    # ------------------------------------------------------------------ conservative
    def setup(self) -> None:
        """Load what the run needs before it starts (the compiled kernels, whose
        first use in a process loads their machine code: a one-time cost that
        :func:`schedlab.simulate` keeps out of the measured event loop)."""
        if self.kernel is None and self.n and self._use_compiled():
            from .jit import CompiledConservative, warm_up

            warm_up()
            self.kernel = CompiledConservative(self.n, self.procs, -INF, self.size)

    def _use_compiled(self) -> bool:
        """Whether this conservative run uses the compiled kernels."""
        if self.depth is not None or self.force_reference:
            return False
        wanted = self.compiled
        if wanted is None:
            if os.environ.get("SCHEDLAB_JIT", "1") == "0" or self.n < COMPILED_MIN_JOBS:
                return False
        elif not wanted:
            return False
        try:
            from . import jit  # noqa: F401
        except ImportError:
            if wanted:
                raise SimulationError(
                    "compiled conservative backfilling needs numba: pip install 'schedlab[fast]'"
                ) from None
            return False
        return True

    def _conservative_finish(self, j: int, now: float) -> None:
        kernel = self.kernel
        if kernel is not None:
            e = self.est_end[j]
            if now < e:
                kernel.finish(now, e, self.size[j])
                if e > self.horizon:
                    self.horizon = e
            return
        profile = self.profile
        if profile is None:
            return
        e = self.est_end[j]
        if now < e:
            profile.advance(now)
            profile.release(now, e, self.size[j])
            if e > self.horizon:
                self.horizon = e

    def _place(self, j: int, now: float, due: list[int]) -> None:
        """Reserve the earliest slot for ``j`` (due now, or a timer at its start)."""
        s = self.size[j]
        d = self.est[j]
        profile = self.profile
        assert profile is not None
        if self.force_reference:
            at = profile.earliest(s, d)
            profile.reserve(at, at + d, s)
        else:
            at = profile.first_fit(s, d)
            profile.reserve(at, at + d, s, True)
        self._set_reservation(j, at, now, due)

    def _pass_conservative(self, now: float) -> None:
        """Conservative: every waiting job holds a reservation.

        Arrivals get the earliest reservation that delays no existing one (in
        priority order among same-instant arrivals). When jobs end before their
        estimate, the capacity they free is offered to the waiting jobs in priority
        order: a job moves to its earliest start if that start is before the end of
        the freed capacity (slots vacated by jobs moving earlier extend it), so a
        reservation never moves later. Jobs whose reservation is now start, in
        priority order, if the processors are really free; when a job running past
        its estimate still holds them, the reservation is stale and placed again at
        the next pass.
        """
        profile = self.profile
        if profile is None:
            profile = self.profile = Profile(self.procs, now)
        profile.advance(now)
        res_start = self.res_start
        qkey = self.qkey
        due: list[int] = []

        # Reservations that came due (timers); a reservation whose time passed
        # without the job starting is stale (a job ran past its estimate).
        stale = bool(self.stale)
        dh = self.due_heap
        while dh and dh[0][0] <= now:
            t, j = heappop(dh)
            if res_start[j] == t:
                if t == now:
                    due.append(j)
                else:
                    stale = True
        if stale and not self.real_event:
            # Only a timer woke us: wait for a job to really end (or arrive) before
            # placing reservations again, instead of creeping forward timer by timer.
            self.stale.update(j for j in due if self.size[j] > self.free)
            due = [j for j in due if self.size[j] <= self.free]
            stale = False
            if not self.stale:
                self.stale.add(-1)  # remember that a rebuild is due
        if stale:
            # Rebuild every reservation in priority order: the stale jobs keep their
            # rank (only runs past an estimate get here: never with kill=True and
            # requested-time estimates).
            self.stale = set()
            new = set(self.new_jobs)
            waiting = [j for _, j in self.queue if j not in new]
            for j in waiting:
                r = res_start[j]
                profile.release(r, r + self.est[j], self.size[j])
            due = []
            for j in waiting:
                self._place(j, now, due)
        elif self.horizon > now and self.queue:
            if self.force_reference:
                self._compress_reference(now, due)
            else:
                self._compress(now, due)
        self.horizon = -INF

        new_jobs = self.new_jobs
        if new_jobs:
            if len(new_jobs) > 1:
                new_jobs = sorted(new_jobs, key=lambda j: (qkey[j], j))
            for j in new_jobs:
                self._place(j, now, due)

        if due:
            queue = self.queue
            size = self.size
            if len(due) > 1:
                due = sorted(set(due), key=lambda j: (qkey[j], j))
            for j in due:
                s = size[j]
                if s <= self.free:
                    self.free -= s
                    res_start[j] = math.nan  # no longer a reservation: timers ignore it
                    if self.screen_res is not None:
                        self.screen_res[j] = math.nan
                    self._start(j, now)
                    del queue[bisect_left(queue, (qkey[j], j))]
                else:
                    # The processors are still held by a job past its estimate.
                    self.stale.add(j)

    def _pass_conservative_compiled(self, now: float) -> None:
        """:meth:`_pass_conservative` on the compiled kernels (same decisions; the
        jobs due are read from the reservations instead of timers)."""
        new_jobs = self.new_jobs
        if not new_jobs and self.horizon <= now and now < self.next_due and not self.stale:
            self.horizon = -INF
            return  # nothing to compress, place or start: the kernels would change nothing
        kernel = self.kernel
        log = self.reservation_log
        qkey = self.qkey
        queue = self.queue
        if len(new_jobs) > 1:
            new_jobs = sorted(new_jobs, key=lambda j: (qkey[j], j))
        positions = [bisect_left(queue, (qkey[j], j)) for j in new_jobs]
        count, ahead = kernel.step(
            now, self.horizon, bool(self.stale), new_jobs, positions, self.next_due
        )
        if count >= 0:
            due = kernel.due_now(count) if count else None
            if log is not None:
                reservation = kernel.reservation
                for j in kernel.moved() + new_jobs:
                    log.setdefault(j, []).append((self.passes, float(reservation[j])))
        else:
            due = self._stale_pass_compiled(now, new_jobs)
        self.horizon = -INF
        if due:
            size = self.size
            reservation = kernel.reservation
            started = False
            for j in due:  # priority order
                s = size[j]
                if s <= self.free:
                    self.free -= s
                    reservation[j] = math.nan
                    self._start(j, now)
                    del queue[bisect_left(queue, (qkey[j], j))]
                    started = True
                else:
                    # The processors are still held by a job past its estimate.
                    self.stale.add(j)
            if started:
                kernel.drop_started()
        self.next_due = ahead if count >= 0 else kernel.next_due(now)

    def _stale_pass_compiled(self, now: float, new_jobs: list[int]) -> list[int]:
        """The pass when a reservation is stale (a job ran past its estimate): as
        :meth:`_pass_conservative`, on the kernels' primitives. Returns the jobs due."""
        kernel = self.kernel
        log = self.reservation_log
        due, _ = kernel.due(now)
        if not self.real_event:
            # Only a timer woke us: wait for a job to really end (or arrive).
            self.stale.update(j for j in due if self.size[j] > self.free)
            if not self.stale:
                self.stale.add(-1)
            if self.horizon > now and self.queue and kernel.compress(now, self.horizon):
                if log is not None:
                    reservation = kernel.reservation
                    for j in kernel.moved():
                        log.setdefault(j, []).append((self.passes, float(reservation[j])))
        else:
            # Rebuild every reservation in priority order.
            self.stale = set()
            new = set(new_jobs)
            waiting = [j for _, j in self.queue if j not in new]
            reservation = kernel.reservation
            for j in waiting:
                r = float(reservation[j])
                kernel.release(r, r + self.est[j], self.size[j])
            for j in waiting:
                at = kernel.place(j)
                if log is not None:
                    log.setdefault(j, []).append((self.passes, at))
        for j in new_jobs:
            at = kernel.place(j)
            if log is not None:
                log.setdefault(j, []).append((self.passes, at))
        due, _ = kernel.due(now)
        return due

    def _compress(self, now: float, due: list[int]) -> None:
        """Move reservations earlier into the capacity freed before ``horizon``.

        In priority order, every waiting job whose reservation ``r`` is still ahead
        moves to its earliest start before ``min(r, horizon)`` (its own reservation
        counting as free for it), if there is one; a move widens the horizon to the
        end of the slot it vacated. This is exactly what
        :meth:`_compress_reference` computes, with less work:

        * jobs that cannot move are rejected in O(log slices) by necessary
          conditions before any search: larger than every slice before the horizon;
          the slice at the horizon too full for a job whose window must cover it;
          the slice just before ``r`` too full and no gap before it long enough;
        * in a long queue, the jobs before the first one that can move are skipped
          with one vectorised screen (:func:`schedlab.sim.compress.movable`);
        * the jobs right after a moving job in priority order that are identical to
          it (job arrays) move as one bundle (:meth:`_move_bundle`);
        * a move updates only the part of the profile that changes.
        """
        profile = self.profile
        assert profile is not None
        times = profile.times
        frees = profile.free
        queue = self.queue
        size = self.size
        est = self.est
        res_start = self.res_start
        qkey = self.qkey
        horizon = self.horizon
        n_queue = len(queue)
        start = 0
        if self.screen_res is not None and self.numeric_keys and n_queue > SCREEN_COMPRESS_QUEUE:
            first = self._first_movable(now, horizon)
            if first < 0:
                return
            start = bisect_left(queue, (qkey[first], first))
        # An upper bound of the free processors before the horizon (moves only add
        # capacity in the slots they vacate and where the horizon grows): larger
        # jobs cannot move.
        most = max(frees[: bisect_left(times, horizon)])
        candidates = [j for _, j in (queue[start:] if start else queue) if size[j] <= most]
        # On a long profile, keep the earliest start of a window of d seconds with
        # s processors (by (s, d)) up to date across moves instead of walking the
        # profile for every candidate.
        keep_fits = len(times) > SHORT_PROFILE
        first_fit: dict[tuple[int, float], float] = {}
        idx = 0
        n_candidates = len(candidates)
        while idx < n_candidates:
            j = candidates[idx]
            idx += 1
            r = res_start[j]
            if not r > now:
                continue  # due, stale (NaN) or new (NaN): handled by the caller
            s = size[j]
            d = est[j]
            reach = now + d  # every window ends at least here (or at r)
            i = bisect_left(times, r) - 1  # the slice just before r
            before = times[i]
            open_before = frees[i] >= s
            if not open_before and reach > before:
                # Every gap before r ends by `before`, too early for a window of d.
                continue
            if r > horizon:
                limit = horizon
                if reach > horizon and frees[bisect_right(times, horizon) - 1] < s:
                    continue  # every window covers the instant horizon, which is full
            else:
                limit = r
            if keep_fits:
                # The earliest start is the first gap (run of slices with s free)
                # that begins before limit and lasts d (`fit`: the earliest start
                # of a d-second window anywhere), or the gap that reaches r.
                key = (s, d)
                fit = first_fit.get(key)
                if fit is None:
                    fit = first_fit[key] = profile.first_fit(s, d)
                if fit <= before:
                    at = fit  # before or at the start of the gap that reaches r
                elif open_before:
                    k = i
                    while k and frees[k - 1] >= s:
                        k -= 1
                    at = times[k]  # start of the gap that reaches r
                else:
                    continue
                if not at < limit:
                    continue
            else:
                if limit == r and max(frees[: i + 1]) < s:
                    continue  # no slice before r has room
                found = profile.first_start_before(s, d, r, limit)
                if found is None:
                    continue
                at = found
            if idx < n_candidates:
                k = candidates[idx]
                twin = res_start[k] == r and size[k] == s and est[k] == d
            else:
                twin = False
            if twin:
                # Identical jobs may follow j in priority order (a job array).
                after = bisect_left(queue, (qkey[j], j)) + 1
                pos, last = self._move_bundle(j, at, after, now, due)
                idx += pos - after
            else:
                profile.move(r, at, d, s)
                self._set_reservation(j, at, now, due)
                pos = -1
                last = at
            if first_fit:
                # Keep the first fits the move cannot have changed: it took
                # processors over [at, min(last + d, r)) and gave some back over
                # [max(r, at + d), r + d).
                took_end = last + d
                if took_end > r:
                    took_end = r
                gave = at + d
                if gave < r:
                    gave = r
                for (fs, fd), fit in list(first_fit.items()):
                    if at < fit + fd and took_end > fit:
                        del first_fit[fs, fd]
                    elif gave < fit:
                        first_fit[fs, fd] = profile.refit(fs, fd, fit, gave, r + d)
            low = r if r < horizon else horizon
            if r + d > horizon:
                horizon = r + d
            lo = bisect_right(times, low) - 1
            hi = bisect_left(times, horizon)
            if hi > lo:
                more = max(frees[lo:hi])
                if more > most:
                    # Larger jobs after this one may fit now.
                    most = more
                    if pos < 0:
                        pos = bisect_left(queue, (qkey[j], j)) + 1
                    candidates = [k for _, k in queue[pos:] if size[k] <= most]
                    n_candidates = len(candidates)
                    idx = 0

    def _first_movable(self, now: float, horizon: float) -> int:
        """The first waiting job in priority order that may move earlier (see
        :mod:`schedlab.sim.compress`), ``-1`` if none."""
        sizes = self.screen_size
        lo = self.screen_lo
        while sizes[lo] == SCREEN_GONE:
            lo += 1
        self.screen_lo = lo
        hi = self.screen_hi
        res = self.screen_res[lo:hi]
        found = np.flatnonzero(res > now)
        if not len(found):
            return -1
        profile = self.profile
        assert profile is not None
        mask = movable(
            np.array(profile.times),
            np.array(profile.free),
            horizon,
            sizes[lo:hi][found],
            self.screen_est[lo:hi][found],
            res[found],
        )
        found = found[mask]
        if not len(found):
            return -1
        keys = self.screen_key[lo:hi][found]
        best = int(np.lexsort((found, keys))[0]) if len(found) > 1 else 0
        return int(found[best]) + lo

    def _move_bundle(
        self, j: int, at: float, pos: int, now: float, due: list[int]
    ) -> tuple[int, float]:
        """Move ``j`` to ``at`` and the jobs identical to it that follow it in
        priority order (``queue[pos:]``) to their earliest starts; return the queue
        position after the last of them and the latest start given.

        Identical jobs (same size ``s``, estimate ``d`` and reservation ``r``) are what
        job arrays leave in the queue. Processing them one by one would give the same
        result as this: each one's search looks only at the profile before ``r``
        (the slots they vacate lie after it), the horizon already covers ``r`` after
        the first move, and once one cannot move none of the next can (the slots of
        those that moved are given back before the next search, as they would be one
        by one, so that it never sees a slot held twice). So they fill the earliest
        start found while it has room (``s`` processors per job over the window
        ``[t, min(t + d, r))``), then the next earliest start, and so on."""
        queue = self.queue
        size = self.size
        est = self.est
        res_start = self.res_start
        profile = self.profile
        assert profile is not None
        s = size[j]
        d = est[j]
        r = res_start[j]
        n_queue = len(queue)
        if pos >= n_queue or res_start[queue[pos][1]] != r:
            profile.move(r, at, d, s)
            self._set_reservation(j, at, now, due)
            return pos, at
        members = [j]
        while pos < n_queue:
            k = queue[pos][1]
            if res_start[k] != r or size[k] != s or est[k] != d:
                break
            members.append(k)
            pos += 1
        done = 0
        total = len(members)
        while True:
            stop = at + d
            room = profile.min_free_over(at, stop if stop < r else r) // s
            count = min(room, total - done)
            if count <= 0:  # cannot happen: the search found room for one
                raise SimulationError(f"internal error: no room at {at} for job {j}")
            profile.move(r, at, d, count * s)
            for k in members[done : done + count]:
                self._set_reservation(k, at, now, due)
            done += count
            if done == total:
                break
            nxt = profile.first_start_before(s, d, r, r)
            if nxt is None:
                break
            at = nxt
        return pos, at

    def _set_reservation(self, j: int, at: float, now: float, due: list[int]) -> None:
        """Job ``j`` is reserved from ``at``: due now, or a timer at ``at``."""
        self.res_start[j] = at
        if self.screen_res is not None:
            self.screen_res[j] = at
        if self.reservation_log is not None:
            self.reservation_log.setdefault(j, []).append((self.passes, at))
        if at == now:
            due.append(j)
        else:
            heappush(self.due_heap, (at, j))

    def _compress_reference(self, now: float, due: list[int]) -> None:
        """Move reservations earlier into the capacity freed before ``horizon``: the
        original implementation, kept as the reference of :meth:`_compress` (tests
        run both with ``force_reference``)."""
        profile = self.profile
        assert profile is not None
        times = profile.times
        frees = profile.free
        size = self.size
        est = self.est
        res_start = self.res_start
        qkey = self.qkey
        horizon = self.horizon
        new = self.new_jobs
        long_queue = len(self.queue) > SCREEN_MIN_QUEUE and self.numeric_keys

        def most_free_before(t: float) -> int:
            i = bisect_left(times, t)
            return max(frees[:i]) if i else -1

        most = most_free_before(horizon)
        if long_queue:
            candidates = self._screen_fit(most)
        else:
            candidates = [j for _, j in self.queue if size[j] <= most]
        i = 0
        while i < len(candidates):
            j = candidates[i]
            i += 1
            r = res_start[j]
            s = size[j]
            if r <= now or r != r or s > most or j in new:
                continue  # due, stale or new: handled by the caller
            limit = r if r < horizon else horizon
            if limit < horizon and most_free_before(limit) < s:
                continue
            d = est[j]
            at = profile.earlier_start(s, d, r, limit)
            if at is None:
                continue
            profile.release(r, r + d, s)
            profile.reserve(at, at + d, s)
            res_start[j] = at
            if self.reservation_log is not None:
                self.reservation_log.setdefault(j, []).append((self.passes, at))
            if at == now:
                due.append(j)
            else:
                heappush(self.due_heap, (at, j))
            # The vacated slot is freed capacity too: widen the horizon and look
            # again at the jobs after this one that may now fit.
            if r + d > horizon:
                horizon = r + d
            grown = most_free_before(horizon)
            if grown > most:
                most = grown
                key = (qkey[j], j)
                if long_queue:
                    rest = self._screen_fit(most)
                else:
                    rest = [k for _, k in self.queue if size[k] <= most]
                candidates = [k for k in rest if (qkey[k], k) > key]
                i = 0

    def _screen_fit(self, most: int) -> list[int]:
        """Waiting jobs of at most ``most`` processors, in priority order."""
        sizes = self.screen_size
        lo = self.screen_lo
        while sizes[lo] == SCREEN_GONE:
            lo += 1
        self.screen_lo = lo
        found = np.flatnonzero(sizes[lo : self.screen_hi] <= most)
        found += lo
        if len(found) > 1:
            keys = self.screen_key[found]
            if (keys[1:] < keys[:-1]).any():
                found = found[np.lexsort((found, keys))]
        return found.tolist()
