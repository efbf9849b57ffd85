"""Slurm's scheduling as documented for ``SchedulerType=sched/backfill``: a quick
main scheduler at events, and a periodic backfill cycle that plans on a time-sliced
map of the machine.

Sources: the Slurm *Scheduling Configuration Guide* (sched_config.html) and the
``SchedulerParameters`` entries of ``slurm.conf(5)`` (``bf_interval``,
``bf_window``, ``bf_resolution``, ``bf_max_job_test``, ``bf_max_job_user``,
``bf_continue``, ``sched_interval``, ``default_queue_depth``). Where the
documentation leaves a detail open, the choice is written down here and in
``docs/simulation.md`` ("Slurm's backfill").

**Main scheduler.** At every job submission or end, it starts jobs in strict
priority order while they fit and stops at the first one that does not (so a
lower-priority job never takes the processors of a blocked higher-priority one),
looking at most at ``default_queue_depth`` jobs. Every ``sched_interval`` seconds it
runs again over the whole queue (a dynamic priority, such as an age factor, may
have put another job first).

**Backfill cycle**, every ``bf_interval`` seconds (on the clock's multiples of
``bf_interval``), unless it has no new work (Slurm skips such a cycle): since the
previous cycle no job was submitted, started or ended, the order of the jobs it
takes did not change, no running job is *due* (see 1.: its planned end has come
while it still runs, so the plan moves with the clock), and no job that cycle left
beyond ``bf_window`` has come within it. The skipped cycle would make the same plan
and start nothing. With a policy whose keys depend on the time (``dynamic``), a
pass is asked for at every tick while jobs wait, where the engine re-sorts the
queue (as Slurm's periodic priority recalculation would):

1. a map of free processors over time is built from the running jobs, each ending
   at its start + estimate (its time limit) rounded *down* to ``bf_resolution``
   seconds; an end that rounds down to now or earlier (due within the current
   resolution step, or a job running past its estimate) is planned at once: its
   processors count as free from the first instant after now;
2. the waiting jobs are taken in priority order, at most ``bf_max_job_test`` of
   them (and at most ``bf_max_job_user`` of one user, when set; the jobs of a user
   past that limit are skipped and do not count against ``bf_max_job_test``; jobs
   whose user is unknown are not limited);
3. each one's earliest start on the map is found (enough processors free for its
   whole estimate). If that is now, it starts now: it fits, and delays no job
   planned before it in this cycle (it then holds its processors on the map until
   its planned end, as a running job). Otherwise, if the start is within
   ``bf_window`` minutes, the job reserves its processors on the map from that start
   (a multiple of ``bf_resolution``, or the instant after now) to its start +
   estimate rounded down to ``bf_resolution`` (at least to the next multiple after
   the start); a job starting beyond the window gets no reservation and does not
   constrain the jobs after it.

At an instant with both, the main scheduler runs first, then the cycle. The map
and its reservations are thrown away at the end of the cycle: the next cycle plans
again from scratch. Jobs therefore start only at main-scheduler events
and at cycles, not when their reservation comes due.

**bf_continue.** In Slurm, a long cycle releases its locks every couple of
seconds; without ``bf_continue`` it gives up when jobs were submitted or ended
meanwhile, with it it goes on down its original job list (the guide: this
"permit[s] consideration of more jobs, but may result in the delayed scheduling of
newly submitted jobs"). A simulated cycle takes no time, so nothing can change
inside one and the first half never arises. The option keeps the second: with
``bf_continue=true``, a cycle that stopped at ``bf_max_job_test`` jobs with jobs
left is *continued* at the next ``bf_interval`` with the next ``bf_max_job_test``
jobs of its original list (jobs that started meanwhile are skipped, newly
submitted ones wait for a fresh cycle), planning them around the running jobs of
that moment and the reservations the earlier part of the cycle made, and with the
per-user counts of ``bf_max_job_user`` of the whole cycle. A fresh cycle starts at
the tick after the list is exhausted if work came (a submission, a start, an end, a
re-sort ...) since the cycle began. With ``bf_continue=false`` (Slurm's default)
every cycle starts again from the top of the queue, and jobs beyond
``bf_max_job_test`` are never backfilled while the queue stays that long.
"""

from __future__ import annotations

import math
import numbers
from bisect import bisect_left, bisect_right
from itertools import accumulate
from typing import Any

import numpy as np
from schedlab import BackfillSpec, OptionSpec, hookimpl
from schedlab.errors import UsageError
from schedlab.sim import Profile, SchedulerState

INF = math.inf
#: Jobs tested between two screens for the last job that could still start now.
SCREEN_EVERY = 32

#: name: (default, minimum, maximum, help) — defaults and ranges of slurm.conf(5).
LIMITS: dict[str, tuple[int, int, int, str]] = {
    "bf_interval": (30, 1, 10800, "seconds between backfill cycles"),
    "bf_window": (1440, 1, 43200, "minutes into the future a job may be planned (reserved)"),
    "bf_resolution": (60, 1, 3600, "seconds: resolution of the planned start and end times"),
    "bf_max_job_test": (500, 1, 1_000_000, "jobs tested per backfill cycle"),
    "bf_max_job_user": (
        0,
        0,
        1_000_000,
        "jobs of one user tested per cycle (0: no limit; jobs of unknown users are not limited)",
    ),
    "sched_interval": (60, 1, 86400, "seconds between full runs of the main scheduler"),
    "default_queue_depth": (100, 1, 1_000_000, "jobs the main scheduler looks at per event"),
}


def _checked(name: str, value: Any) -> int:
    """``value`` as an int within the range of option ``name``; else a one-line
    UsageError naming the strategy and the option."""
    low, high = LIMITS[name][1], LIMITS[name][2]
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise UsageError(f"backfill slurm: option {name}={value!r}: expected an integer")
    if not low <= value <= high:
        raise UsageError(f"backfill slurm: option {name}={value!r}: expected {low} .. {high}")
    return int(value)


_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
_FALSE_WORDS = frozenset({"0", "false", "no", "off"})


def _parse_flag(raw: Any) -> bool:
    """A boolean option's value: a boolean (numpy's too), the integers 1 and 0, or
    one of ``true``/``false``, ``yes``/``no``, ``on``/``off``, ``1``/``0`` as text;
    anything else is a ``ValueError`` listing those."""
    if isinstance(raw, bool | np.bool_):
        return bool(raw)
    if isinstance(raw, numbers.Integral) and raw in (0, 1):
        return bool(raw)
    if isinstance(raw, str):
        lowered = raw.strip().lower()
        if lowered in _TRUE_WORDS:
            return True
        if lowered in _FALSE_WORDS:
            return False
    raise ValueError("true/false, yes/no, on/off or 1/0")


_parse_flag.__name__ = "bool"


def take(profile: Profile, start: float, end: float, size: int) -> None:
    """``profile.reserve(start, end, size)`` (same slices), with the slices in
    between updated in one list operation."""
    times, free = profile.times, profile.free
    i = bisect_left(times, start)
    if i == len(times) or times[i] != start:
        times.insert(i, start)
        free.insert(i, free[i - 1])
    k = bisect_left(times, end, i)
    if k == len(times) or times[k] != end:
        times.insert(k, end)
        free.insert(k, free[k - 1])
    free[i:k] = [f - size for f in free[i:k]]


class SlurmBackfill:
    """The ``slurm`` strategy (see the module docstring)."""

    name = "slurm"
    wants_running = True
    wants_arrays = True
    # Passes are periodic: a job reserved at t starts at the first main-scheduler
    # event or backfill cycle at or after t, and its reservation was rounded down to
    # bf_resolution, so it may start after the first reservation it got.
    keeps_reservations = False

    def __init__(
        self,
        bf_interval: int = 30,
        bf_window: int = 1440,
        bf_resolution: int = 60,
        bf_max_job_test: int = 500,
        bf_max_job_user: int = 0,
        bf_continue: bool = False,
        sched_interval: int = 60,
        default_queue_depth: int = 100,
    ) -> None:
        self.bf_interval = _checked("bf_interval", bf_interval)
        self.bf_window = _checked("bf_window", bf_window)
        self.bf_resolution = _checked("bf_resolution", bf_resolution)
        self.bf_max_job_test = _checked("bf_max_job_test", bf_max_job_test)
        self.bf_max_job_user = _checked("bf_max_job_user", bf_max_job_user)
        self.sched_interval = _checked("sched_interval", sched_interval)
        self.default_queue_depth = _checked("default_queue_depth", default_queue_depth)
        # (text is the option parser's to read: the class takes true/false or 1/0)
        flag: Any = bf_continue if isinstance(bf_continue, numbers.Integral | np.bool_) else None
        try:
            self.bf_continue = _parse_flag(flag)
        except ValueError:
            raise UsageError(
                f"backfill slurm: option bf_continue={bf_continue!r}: expected true/false or 1/0"
            ) from None
        #: Backfill cycles run, and cycles skipped for want of new work.
        self.cycles = 0
        self.skipped_cycles = 0

    def bind(self, state: SchedulerState) -> None:
        """Keep the state and start with no cycle behind."""
        self.state = state
        self._next_bf = -INF
        self._next_sched = -INF
        #: Something happened since the last cycle (Slurm's "more work" test).
        self._dirty = True
        #: The queue was ever re-sorted (a dynamic priority, or notifications).
        self._reordered = False
        #: The queue's job order the last cycle saw (kept once the queue was
        #: re-sorted, to tell a re-sort that changed the order from one that did not).
        self._order: list[int] | None = None
        #: bf_max_job_user: jobs of each user tested in the current cycle (with
        #: bf_continue, over all its parts).
        self._per_user: dict[int, int] = {}
        #: When a job the last cycle tested but left beyond ``bf_window`` comes
        #: within it (``inf``: none): new work from then on.
        self._window_next = INF
        #: bf_continue: the rest of the interrupted cycle's job list, and the
        #: reservations its earlier part made ``(job, start, end, size)``.
        self._rest: list[int] = []
        self._kept: list[tuple[int, float, float, int]] = []
        self._user = state.table.user
        #: The running jobs' ends rounded down to bf_resolution (sorted, distinct)
        #: and the processors ending at each: the running part of every cycle's map,
        #: kept up to date at each start and end instead of rebuilt per cycle.
        self._ends: list[float] = []
        self._ending: list[int] = []

    # ------------------------------------------------------------ notifications
    def on_submit(self, job: int, now: float) -> None:
        """New work for the next cycle."""
        self._dirty = True

    def on_finish(self, job: int, now: float) -> None:
        """New work for the next cycle; the job leaves the running map."""
        self._dirty = True
        self._leave(job, self.state.estimated_end[job])

    def on_estimate_raised(self, job: int, old_end: float, now: float) -> None:
        """A running job's estimate was raised (a corrected prediction): it moves in
        the running map; new work for the next cycle."""
        self._dirty = True
        self._leave(job, old_end)
        self._enter(job)

    def _leave(self, job: int, end: float) -> None:
        """Take ``job``, planned to end at ``end``, out of the running map."""
        t = math.floor(end / self.bf_resolution) * self.bf_resolution
        ends = self._ends
        i = bisect_left(ends, t)
        left = self._ending[i] - self.state.size[job]
        if left:
            self._ending[i] = left
        else:
            del ends[i]
            del self._ending[i]

    def _start(self, job: int) -> None:
        """Start ``job`` and enter it in the running map."""
        self.state.start(job)
        self._enter(job)

    def _enter(self, job: int) -> None:
        """Enter running ``job`` in the running map at its estimated end."""
        state = self.state
        t = math.floor(state.estimated_end[job] / self.bf_resolution) * self.bf_resolution
        ends = self._ends
        i = bisect_left(ends, t)
        if i < len(ends) and ends[i] == t:
            self._ending[i] += state.size[job]
        else:
            ends.insert(i, t)
            self._ending.insert(i, state.size[job])

    def on_reorder(self, now: float) -> None:
        """Priorities were recalculated: new work for the next cycle if the order
        the cycle would see changed."""
        self._reordered = True
        if not self._dirty and self._order != self._cycle_order():
            self._dirty = True

    def _cycle_order(self) -> list[int]:
        """The waiting jobs a fresh cycle would take, in order."""
        queue = self.state.queue
        if not (self.bf_continue or self.bf_max_job_user):
            queue = queue[: self.bf_max_job_test]
        return [j for _, j in queue]

    def _first_due(self) -> float:
        """The earliest planned (rounded) end of a running job (``inf`` if none).
        From then until the job ends it is *due*: planned at the instant after
        now, so the map, and what a cycle plans after it, moves with the clock
        (new work at every tick, until it ends)."""
        return self._ends[0] if self._ends else INF

    def next_wakeup(self) -> float:
        """The next backfill cycle when it has work, and the next periodic run of the
        main scheduler when it may start something, while jobs wait.

        A periodic run can start a job only if the first job fits now, or if the
        queue order changed; with a priority that never re-sorts the queue (FCFS,
        SJF ...) the order changes only at events, so the runs that would find the
        first job blocked need no pass (the schedule is the same)."""
        state = self.state
        queue = state.queue
        if not queue:
            return INF
        wake = INF
        if self._dirty or self._rest or self._reordered:
            # (a re-sorting policy: a pass at every tick, where the engine re-keys)
            wake = self._next_bf
        else:
            # The first tick at which a running job is due or a job comes within
            # the window.
            due = min(self._first_due(), self._window_next)
            if due < INF:
                wake = max(self._next_bf, math.ceil(due / self.bf_interval) * self.bf_interval)
        if self._next_sched < wake and (self._reordered or state.size[queue[0][1]] <= state.free):
            wake = self._next_sched
        return wake

    # ------------------------------------------------------------------ passes
    def schedule(self, now: float) -> None:
        """The main scheduler at an event or its period; a backfill cycle on its
        period."""
        if self._next_sched < now:  # the queue was empty at the ticks in between
            self._next_sched = math.ceil(now / self.sched_interval) * self.sched_interval
        if self._next_bf < now:
            self._next_bf = math.ceil(now / self.bf_interval) * self.bf_interval
        if self._next_sched == now:
            self._next_sched = now + self.sched_interval
            self.main_scheduler(len(self.state.queue))
        elif self.state.real_event:
            self.main_scheduler(self.default_queue_depth)
        if self._next_bf == now:
            self._next_bf = now + self.bf_interval
            if self._dirty or self._rest or min(self._first_due(), self._window_next) <= now:
                self.backfill_cycle(now)
            else:
                self.skipped_cycles += 1

    def main_scheduler(self, depth: int) -> None:
        """Start jobs in priority order while they fit, at most ``depth`` of them."""
        state = self.state
        queue = state.queue
        size = state.size
        started = 0
        while queue and started < depth:
            j = queue[0][1]
            if size[j] > state.free:
                break
            self._start(j)
            started += 1
        if started:
            self._dirty = True

    def planned_end(self, end: float, now: float) -> float:
        """A running job's end as the cycle plans it: rounded down to
        ``bf_resolution``; one already due by that rounding is planned to end at
        once (the first instant after ``now``: its processors are not free now)."""
        res = self.bf_resolution
        t = math.floor(end / res) * res
        return t if t > now else math.nextafter(now, INF)

    def running_map(self, now: float) -> Profile:
        """Free processors over time by the running jobs' ends as
        :meth:`planned_end` plans them."""
        state = self.state
        profile = Profile(state.procs, now)
        free = profile.free[0] = state.free
        ends = self._ends
        k = bisect_right(ends, now)
        times = ends[k:]
        ending = self._ending[k:]
        if k:
            due = sum(self._ending[:k])
            first = math.nextafter(now, INF)
            if times and times[0] == first:
                ending[0] += due
            else:
                times.insert(0, first)
                ending.insert(0, due)
        profile.times.extend(times)
        profile.free.extend(accumulate(ending, initial=free))
        del profile.free[1]  # accumulate repeats the initial value
        return profile

    def backfill_cycle(self, now: float) -> None:
        """One backfill cycle (or the continuation of one, with ``bf_continue``)."""
        self.cycles += 1
        state = self.state
        size = state.size
        est = state.estimate
        start_time = state.start_time
        res = self.bf_resolution
        horizon = now + 60.0 * self.bf_window
        due = self._first_due() <= now
        if self._reordered:
            self._order = self._cycle_order()
        if not state.free and not self.bf_continue and state.reservation_log is None:
            # No job can start: the plan would change nothing (see the shortcut below).
            self._dirty = False
            self._window_next = INF
            return
        fresh = not self._rest
        profile = self.running_map(now)
        if self._rest:
            jobs = [j for j in self._rest if start_time[j] != start_time[j]]
            for j, at, end, s in self._kept:
                if start_time[j] != start_time[j] and end > now:
                    # A reservation that came due holds from the first instant
                    # after now (like a due end): a job starting now overlaps it,
                    # and the processors it counts on may still be busy.
                    take(profile, at if at > now else math.nextafter(now, INF), end, s)
        else:
            queue = state.queue
            if not (self.bf_continue or self.bf_max_job_user):
                queue = queue[: self.bf_max_job_test]
            jobs = [j for _, j in queue]
            self._kept = []
            self._per_user = {}
        user = self._user
        bound: dict[tuple[int, float], float] = {}
        per_user = self._per_user
        max_user = self.bf_max_job_user
        budget = self.bf_max_job_test
        started = False
        enter = INF
        tested = 0
        i = 0
        n = len(jobs)
        # Planning past the last job that could still start now changes no start:
        # stop there, unless every reservation is wanted (a test's log, or the
        # continuation of the cycle with bf_continue).
        exact = state.reservation_log is not None or self.bf_continue
        last = n if exact else self._last_starter(profile, jobs, 0, now)
        while i < n and tested < budget:
            if i > last:
                break
            if not exact and tested and not tested % SCREEN_EVERY:
                last = self._last_starter(profile, jobs, i, now)
                if i > last:
                    break
            j = jobs[i]
            i += 1
            if max_user:
                u = user[j]
                if u >= 0:  # (an unknown user, -1, is not limited)
                    c = per_user.get(u, 0)
                    if c >= max_user:
                        continue
                    per_user[u] = c + 1
            tested += 1
            s = size[j]
            d = est[j]
            # A job of the same shape tested earlier in this cycle cannot start
            # before that one's start could (the map only fills up).
            shape = (s, d)
            after = bound.get(shape, now)
            at = profile.earliest(s, d, after, horizon)
            bound[shape] = at
            if at <= now:
                take(profile, now, self.planned_end(now + d, now), s)
                self._start(j)
                started = True
            elif at <= horizon:
                end = math.floor((at + d) / res) * res
                if end <= at:  # at least up to the next multiple of bf_resolution
                    end = (math.floor(at / res) + 1) * res
                take(profile, at, end, s)
                state.log_reservation(j, at)
                if self.bf_continue:
                    self._kept.append((j, at, end, s))
            elif after < INF:
                # Beyond the window: no reservation, until the window reaches its
                # start (the first of its shape is the earliest of them).
                later = profile.earliest(s, d, horizon, enter)
                if later < enter:
                    enter = later
        self._rest = jobs[i:] if self.bf_continue and i < n else []
        # The first tick at which a job left without a reservation here gets one
        # (that changes the plan; nothing else in it moves with the clock while no
        # running job is due).
        reach = enter - 60.0 * self.bf_window
        self._window_next = reach if fresh else min(self._window_next, reach)
        if not self._rest:
            self._kept = []
        # A fresh cycle saw everything that happened before it; a continuation
        # keeps what happened since the cycle began for the fresh cycle after it.
        self._dirty = started if fresh else self._dirty or started or due

    def _last_starter(self, profile: Profile, jobs: list[int], lo: int, now: float) -> int:
        """The position in ``jobs`` (from ``lo``) of the last job this cycle may still
        test that could start now on ``profile`` (``lo - 1`` if none): a vectorised
        necessary condition (enough processors free from now for its whole
        estimate), since reservations only take processors away."""
        state = self.state
        if not state.free:
            return lo - 1
        arrays = state.arrays
        assert arrays is not None
        hi = len(jobs)
        if not self.bf_max_job_user:  # otherwise skipped jobs make the budget's end unknown
            hi = min(hi, lo + self.bf_max_job_test)
        if hi <= lo:
            return lo - 1
        idx = np.asarray(jobs[lo:hi], dtype=np.int64)
        sizes = arrays.size[idx]
        lowest = np.minimum.accumulate(np.asarray(profile.free))
        # For each job, the first slice with fewer processors free than it needs
        # (the running minimum only decreases) ...
        k = np.searchsorted(-lowest, -sizes, side="right")
        times = np.asarray([*profile.times, INF])
        room = times[k] - now
        # ... must not begin before the job's estimate is over (with a tolerance:
        # the screen may let through more jobs, never fewer).
        ok = (sizes <= state.free) & (arrays.estimate[idx] <= room * (1 + 1e-12) + 1e-9)
        found = np.flatnonzero(ok)
        return lo + int(found[-1]) if len(found) else lo - 1


@hookimpl
def schedlab_backfills() -> list[BackfillSpec]:
    """The ``slurm`` strategy."""
    options = [
        OptionSpec(name, int, default, f"{text} (Slurm default {default})")
        for name, (default, _, _, text) in LIMITS.items()
    ]
    options.append(
        OptionSpec(
            "bf_continue",
            _parse_flag,
            False,
            "continue an interrupted cycle's job list at the next bf_interval "
            "(Slurm default false)",
        )
    )
    return [
        BackfillSpec(
            name="slurm",
            description="Slurm's sched/backfill: main scheduler at events, periodic "
            "backfill cycles on a rounded time-sliced map (bf_window, bf_resolution, "
            "bf_max_job_test ...).",
            factory=SlurmBackfill,
            options=tuple(options),
        )
    ]
