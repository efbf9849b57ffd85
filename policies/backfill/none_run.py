"""The whole run of the ``none`` strategy (:mod:`schedlab.sim.whole_run`): no
backfilling on a single pool, in one plain Python loop instead of the engine's
event loop with a scheduling pass per instant.

Same semantics as the engine's loop around :class:`.none.NoBackfill`: at each
instant the jobs ending then free their processors, the jobs submitted then join
the queue, and when jobs wait one pass starts jobs from the head of the queue
(lowest key first, ties by job index) while the head fits; the first job that
does not fit blocks the rest. A job started with a run time of 0 ends at the
same instant, which gives a second round at that time.

When the keys do not decrease in job order (``fcfs``: the key is the submit
time), the queue in priority order is the jobs in job order, and as only the
head ever starts, the started jobs are always the first ones: the queue is then
the range of job indices from ``head`` to ``si`` (no heap). Otherwise a heap of
``(key, job)`` holds it. The differential tests
(``tests/test_backfill_none_whole_run.py``) compare every start and the pass
count with the engine's own loop.
"""

from __future__ import annotations

import math
from heapq import heappop, heappush

import numpy as np


def none_run(
    submit: np.ndarray, size: np.ndarray, run_time: np.ndarray, key: np.ndarray, procs: int
) -> tuple[np.ndarray, int, int]:
    """Start times (float64, by job index; NaN for a job that never started),
    the scheduling passes made and the jobs left waiting when no event is left
    (0 unless a job is larger than ``procs``) for jobs in submission order."""
    n = len(submit)
    fifo = n < 2 or bool(np.all(key[1:] >= key[:-1]))
    sub = submit.tolist()
    sz = size.tolist()
    rt = run_time.tolist()
    kk = [] if fifo else key.tolist()
    start = [math.nan] * n
    ends: list[tuple[float, int]] = []  # (end, job) of the running jobs
    waiting: list[tuple[float, int]] = []  # (key, job) of the waiting jobs (no fifo)
    free = procs
    head = si = passes = 0  # fifo: jobs head..si-1 wait
    while True:
        if ends:
            now = ends[0][0]
            if si < n and sub[si] < now:
                now = sub[si]
        elif si < n:
            now = sub[si]
        else:
            break
        while ends and ends[0][0] == now:
            free += sz[heappop(ends)[1]]
        if fifo:
            while si < n and sub[si] == now:
                si += 1
            if head == si:
                continue
            passes += 1
            while head < si and sz[head] <= free:
                free -= sz[head]
                start[head] = now
                heappush(ends, (now + rt[head], head))
                head += 1
            continue
        while si < n and sub[si] == now:
            heappush(waiting, (kk[si], si))
            si += 1
        if not waiting:
            continue
        passes += 1
        while waiting and sz[waiting[0][1]] <= free:
            j = heappop(waiting)[1]
            free -= sz[j]
            start[j] = now
            heappush(ends, (now + rt[j], j))
    left = si - head if fifo else len(waiting)
    return np.array(start, dtype=np.float64), passes, left
