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
module with the plainly written :class:`schedlab.policies.backfill.reference.ReferenceDepth`
at depth 1): when nothing ended since the last pass and the head is the same job,
only the new arrivals can backfill (free processors, shadow time and extra are
unchanged for the others; when a predictor raised running jobs' estimates since,
the shadow time and extra are recomputed and compared); and a long queue is first
screened with numpy for the jobs that pass step 3's test at the start of the scan
(free processors and extra only shrink during a scan, so a job failing then fails
at its turn too). The shadow-time walk goes one running job at a time for the
first ``WALK`` jobs, then sums chunks at C speed (tested against the plain walk).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from itertools import accumulate
from operator import itemgetter
from typing import Any

import numpy as np
from schedlab import hookimpl
from schedlab.errors import UsageError
from schedlab.plugin_types import BackfillSpec, OptionSpec
from schedlab.sim import SchedulerState

#: Queue length above which backfill candidates are screened with numpy.
SCREEN_MIN_QUEUE = 48
ORDERS = ("priority", "sjbf")
#: The shadow-time walk visits this many running jobs one by one, then goes on in
#: chunks of CHUNK summed at C speed (long walks: many jobs end before the head fits).
WALK = 32
CHUNK = 128
_second = itemgetter(1)


def shadow_time(state: SchedulerState, need: int) -> tuple[float, int]:
    """When ``need`` processors are free by the running jobs' estimates (never
    before now), and how many more than ``need`` are free then (jobs ending at the
    shadow time too count)."""
    now = state.now
    size = state.size
    running = state.running
    assert running is not None
    avail = state.free
    n_running = len(running)
    i = 0
    # The first running jobs one by one (the walk is usually short) ...
    while i < n_running and i < WALK:
        avail += size[running[i][1]]
        if avail >= need:
            break
        i += 1
    else:
        # ... then chunks at C speed: the free processors after each end are sorted
        # (sizes are positive), so bisect finds the first end with enough.
        while True:
            if i >= n_running:
                return now, 0
            chunk = map(size.__getitem__, map(_second, running[i : i + CHUNK]))
            sums = list(accumulate(chunk, initial=avail))
            if sums[-1] >= need:
                k = bisect_left(sums, need, 1)
                i += k - 1
                avail = sums[k]
                break
            avail = sums[-1]
            i += CHUNK
    e = running[i][0]
    shadow = e if e > now else now
    k = i + 1
    while k < n_running and running[k][0] <= shadow:
        avail += size[running[k][1]]
        k += 1
    return shadow, avail - need


class Easy:
    """The ``easy`` strategy (see the module docstring)."""

    name = "easy"
    wants_running = True
    wants_arrays = True

    def __init__(self, order: str = "priority") -> None:
        if order not in ORDERS:
            raise UsageError(
                f"backfill easy: option order={order!r}: expected one of {', '.join(ORDERS)}"
            )
        self.order = order
        #: (head, shadow time, extra processors) of the last pass.
        self.last: tuple[int, float, int] | None = None
        #: The last time a job ended or the queue was re-sorted.
        self.changed_at = -math.inf

    def for_platform(self) -> Any:
        """The same strategy on a multi-resource machine
        (:class:`~schedlab.policies.backfill.easy_nodes.NodeEasy`)."""
        from .easy_nodes import NodeEasy

        return NodeEasy(order=self.order)

    def bind(self, state: SchedulerState) -> None:
        """Keep the state (and forget any earlier run's)."""
        self.state = state
        self.last = None
        self.changed_at = -math.inf

    def on_finish(self, job: int, now: float) -> None:
        """A job ended: the next pass starts from the head."""
        self.changed_at = now

    def on_reorder(self, now: float) -> None:
        """The queue was re-sorted: the next pass starts from the head."""
        self.changed_at = now

    def on_estimate_raised(self, job: int, old_end: float, now: float) -> None:
        """A running job's estimate was raised (its end moves later): the next pass
        checks whether the head's shadow time or extra processors changed."""

    def _unchanged(self, now: float, last: tuple[int, float, int]) -> bool:
        """Whether the pass at ``now`` can only start new arrivals: nothing ended,
        the head is the same job, and its shadow time and extra processors are
        those of the last pass (when only estimates were raised since, they are
        recomputed: a raised estimate ended "now", at or before the shadow, so the
        shadow and extra stay unless the new end crosses the shadow)."""
        state = self.state
        queue = state.queue
        if not queue or queue[0][1] != last[0] or last[1] < now:
            return False
        if not state.finished_since_pass:
            return True
        if self.changed_at == now:
            return False
        # Only corrections happened since the last pass.
        return shadow_time(state, state.size[last[0]]) == (last[1], last[2])

    def schedule(self, now: float) -> None:
        """One EASY pass."""
        state = self.state
        queue = state.queue
        last = self.last
        if last is not None and self._unchanged(now, last):
            # Nothing ended and the same head: only the new arrivals can backfill.
            head, shadow, extra = last
            state.log_reservation(head, shadow)
            if state.free and state.new_jobs:
                key_of = state.key_of
                candidates = sorted((key_of[j], j) for j in state.new_jobs)
                extra = self.backfill([j for _, j in candidates], shadow, extra)
                self.last = (head, shadow, extra)
            return

        state.start_from_head()  # 1.
        if not queue:
            self.last = None
            return
        head = queue[0][1]  # 2.
        shadow, extra = shadow_time(state, state.size[head])
        state.log_reservation(head, shadow)
        if state.free and len(queue) > 1:  # 3.
            arrays = state.arrays
            if len(queue) > SCREEN_MIN_QUEUE and arrays is not None and arrays.numeric_keys:
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
            state.start(j)
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
                state.start(j)
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
        arrays = self.state.arrays
        assert arrays is not None
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
            ),
        )
    ]
