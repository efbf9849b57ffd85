"""System metrics: makespan, utilization, throughput, loss of capacity.

They are computed on the jobs whose start and end are known (submit, wait and run
time all known; the metrics engine reports how many jobs that leaves out, and gives
negative values other than -1 as unknown). A job's size is its allocated processors
when known and positive, else its requested processors when known and positive
(:func:`~schedlab.measure.job_processors`; an allocation of 0 is "not recorded");
utilization and loss of capacity leave out the jobs of unknown size (the engine's
note counts them). The observed period is ``[first submit, last end]`` of the jobs with
known times (the makespan period; jobs of unknown size are in it), unless the engine
passes ``period=(start, end)``: the warm-up/cool-down window, or the whole report's
period when a metric is computed for one group's jobs. Within a given
period, utilization and loss of capacity count only the part of each job's run (and
of each interval) inside it, and throughput counts the jobs that end inside it.
Makespan, utilization, throughput are computed per group in grouped reports
(``per_group``); loss of capacity is a whole-schedule metric.

For confidence intervals on one trace (``schedlab.significance``) utilization,
throughput and loss of capacity are ratios of sums over time
(``aggregation="ratio"``): ``*_terms(columns, edges)`` give each window's numerator
(busy processor-seconds, jobs ending, idle processor-seconds while a job waits;
a job running across a window boundary counts in each window for the part of its
run inside it) and denominator (the window's processor-seconds, or hours). The
makespan is an extreme (``aggregation="extreme"``): no block interval.

``makespan``
    last end - first submit, seconds (of the jobs given: a group's own span; it
    ignores ``period``).
``utilization``
    sum(size x run) / (machine processors x makespan): the fraction of the machine's
    capacity over the period that jobs used. Needs the machine size (``procs=``, the
    ``--procs`` option, or the header's MaxProcs / MaxNodes), and a job of known
    size: without one it is unavailable, like ``work`` (not 0).
``throughput``
    jobs that ran (known end) per hour of the period.
``loss-of-capacity``
    the capacity wasted while jobs wait (Zhang, Franke, Moreira and Sivasubramaniam,
    2000): sum over the intervals between events of idle processors x interval length,
    counted only while at least one job of known size is waiting, divided by machine
    processors x makespan. 0 is best; a scheduler that leaves processors idle while
    jobs queue (because the head job does not fit) scores higher. Needs the machine
    size.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from schedlab import MetricSpec, hookimpl
from schedlab.measure import MetricUnavailable, job_processors
from schedlab.model import JobColumns

_NEED_PROCS = (
    "needs the machine size: give procs= (--procs N) or a workload header with MaxProcs or MaxNodes"
)


def _scheduled(columns: JobColumns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Submit, start and end of the jobs whose times are all known."""
    submit = columns["submit_time"]
    start = submit + columns["wait_time"]
    end = start + columns["run_time"]
    known = ~np.isnan(end)
    if not known.any():
        raise MetricUnavailable("no job has a known submit, wait and run time")
    return submit[known], start[known], end[known]


def _period(columns: JobColumns) -> tuple[float, float]:
    submit, _, end = _scheduled(columns)
    return float(submit.min()), float(end.max())


def makespan(columns: JobColumns, **_: Any) -> float:
    """Last end minus first submit of the jobs with known times, seconds."""
    first, last = _period(columns)
    return last - first


def _machine(procs: float | None) -> float:
    if procs is None or not procs > 0:
        raise MetricUnavailable(_NEED_PROCS)
    return float(procs)


def _checked_period(period: tuple[float, float]) -> tuple[float, float]:
    first, last = float(period[0]), float(period[1])
    if not last > first:
        raise MetricUnavailable("the observed period has zero length")
    return first, last


def busy_area(columns: JobColumns, period: tuple[float, float] | None = None) -> float:
    """Processor-seconds used by the jobs with known start, run time and size; only
    the part of each run inside ``period`` when it is given."""
    size = job_processors(columns)
    start = columns["submit_time"] + columns["wait_time"]
    run = columns["run_time"]
    if period is None:
        area = size * run
        ran = ~np.isnan(start) & ~np.isnan(area)
        return float(area[ran].sum())
    first, last = period
    inside = np.minimum(start + run, last) - np.maximum(start, first)
    area = size * np.maximum(inside, 0.0)  # NaN propagates, then is left out
    return float(area[~np.isnan(area)].sum())


def utilization(
    columns: JobColumns,
    procs: float | None = None,
    period: tuple[float, float] | None = None,
    **_: Any,
) -> float:
    """Fraction of the machine's capacity used over ``[first submit, last end]``, or
    over ``period``. Unavailable (:class:`MetricUnavailable`, as ``work``) when no
    job has a known submit, wait, run time and size: the capacity used is then
    unknown, not 0."""
    machine = _machine(procs)
    placed = columns["submit_time"] + columns["wait_time"]
    if not (~np.isnan(placed + columns["run_time"] + job_processors(columns))).any():
        raise MetricUnavailable("no job has a known submit, wait, run time and size")
    if period is None:
        first, last = _checked_period(_period(columns))
        return busy_area(columns) / (machine * (last - first))
    first, last = _checked_period(period)
    return busy_area(columns, (first, last)) / (machine * (last - first))


def throughput(columns: JobColumns, period: tuple[float, float] | None = None, **_: Any) -> float:
    """Jobs with a known end per hour of ``[first submit, last end]``, or the jobs
    ending inside ``period`` per hour of it."""
    if period is None:
        submit, _start, end = _scheduled(columns)
        span = float(end.max() - submit.min())
        if span <= 0:
            raise MetricUnavailable("the observed period has zero length")
        return len(end) / span * 3600.0
    first, last = _checked_period(period)
    end = columns["submit_time"] + columns["wait_time"] + columns["run_time"]
    with np.errstate(invalid="ignore"):
        ended = int(((end >= first) & (end <= last)).sum())
    return ended / (last - first) * 3600.0


def loss_of_capacity(
    columns: JobColumns,
    procs: float | None = None,
    period: tuple[float, float] | None = None,
    **_: Any,
) -> float:
    """Idle capacity while some job waits, as a fraction of the period's capacity:
    ``[first submit, last end]`` of every job with known times (the makespan period,
    as for :func:`utilization`: a job of unknown size is in it), or ``period``."""
    machine = _machine(procs)
    submit = columns["submit_time"]
    start = submit + columns["wait_time"]
    size = job_processors(columns)
    end = start + columns["run_time"]
    known = ~np.isnan(end) & ~np.isnan(size)
    submit, start, end, size = submit[known], start[known], end[known], size[known]
    if len(end) == 0:
        raise MetricUnavailable("no job has a known submit, wait, run time and size")
    first, last = _checked_period(_period(columns) if period is None else period)
    # Piecewise-constant busy processors and queue length from +/- deltas at three
    # events per job: submit (queue +1), start (queue -1, busy +size), end (busy -size).
    # The order of events at one instant does not matter: they bound intervals of
    # length zero.
    n = len(end)
    times = np.concatenate([submit, start, end])
    order = np.argsort(times)
    times = times[order]
    busy_delta = np.concatenate([np.zeros(n), size, -size])[order]
    queue_delta = np.concatenate([np.ones(n), -np.ones(n), np.zeros(n)])[order]
    busy = np.cumsum(busy_delta)[:-1]
    waiting = np.cumsum(queue_delta)[:-1] > 0.5
    idle = np.maximum(machine - busy, 0.0)
    lengths = np.diff(np.clip(times, first, last))  # only the time inside the period
    lost = float(np.dot(idle[waiting], lengths[waiting]))
    return lost / (machine * (last - first))


def _windows(edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Edges as float64 relative to the first (smaller numbers: no cancellation in
    the prefix sums below), and each window's length."""
    edges = np.asarray(edges, dtype=np.float64)
    if edges.ndim != 1 or len(edges) < 2 or np.any(np.diff(edges) < 0):
        raise ValueError("edges must be at least two ascending times")
    return edges - edges[0], np.diff(edges)


def _area_before(
    times: np.ndarray, start: np.ndarray, end: np.ndarray, size: np.ndarray
) -> np.ndarray:
    """Processor-seconds used before each of ``times`` (ascending) by jobs running
    over ``[start, end)`` with ``size`` processors: sum of size x (t - start) over the
    jobs started by t, minus size x (t - end) over the jobs ended by t."""

    def ramp(points: np.ndarray) -> np.ndarray:
        order = np.argsort(points, kind="stable")
        p, w = points[order], size[order]
        weight = np.concatenate(([0.0], np.cumsum(w)))
        moment = np.concatenate(([0.0], np.cumsum(w * p)))
        k = np.searchsorted(p, times, side="right")
        return times * weight[k] - moment[k]

    return ramp(start) - ramp(end)


def utilization_terms(
    columns: JobColumns, edges: np.ndarray, procs: float | None = None, **_: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Per window ``[edges[k], edges[k + 1])``: the processor-seconds jobs used inside
    it (a job running across a window boundary counts in each window for the part of
    its run inside it) and the machine's processor-seconds over it. Their sums over
    windows spanning first submit to last end give :func:`utilization`."""
    machine = _machine(procs)
    rel, length = _windows(edges)
    origin = float(np.asarray(edges, dtype=np.float64)[0])
    size = job_processors(columns)
    start = columns["submit_time"] + columns["wait_time"] - origin
    end = start + columns["run_time"]
    ran = ~np.isnan(end) & ~np.isnan(size)
    area = _area_before(rel, start[ran], end[ran], size[ran])
    return np.diff(area), machine * length


def throughput_terms(
    columns: JobColumns, edges: np.ndarray, **_: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Per window: the jobs ending inside it (the last window includes its end) and
    its length in hours."""
    rel, length = _windows(edges)
    end = columns["submit_time"] + columns["wait_time"] + columns["run_time"]
    end = end[~np.isnan(end)] - float(np.asarray(edges, dtype=np.float64)[0])
    bins = np.searchsorted(rel, end, side="right") - 1
    bins[end == rel[-1]] = len(length) - 1  # the end of the last window counts in it
    inside = (bins >= 0) & (bins < len(length))
    count = np.bincount(bins[inside], minlength=len(length)).astype(np.float64)
    return count, length / 3600.0


def loss_of_capacity_terms(
    columns: JobColumns, edges: np.ndarray, procs: float | None = None, **_: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Per window: the idle processor-seconds inside it while some job waits, and the
    machine's processor-seconds over it."""
    machine = _machine(procs)
    rel, length = _windows(edges)
    origin = float(np.asarray(edges, dtype=np.float64)[0])
    submit = columns["submit_time"] - origin
    start = submit + columns["wait_time"]
    size = job_processors(columns)
    end = start + columns["run_time"]
    known = ~np.isnan(end) & ~np.isnan(size)
    submit, start, end, size = submit[known], start[known], end[known], size[known]
    n = len(end)
    if n == 0:
        raise MetricUnavailable("no job has a known submit, wait, run time and size")
    times = np.concatenate([submit, start, end])
    order = np.argsort(times, kind="stable")
    times = times[order]
    busy = np.cumsum(np.concatenate([np.zeros(n), size, -size])[order])
    waiting = np.cumsum(np.concatenate([np.ones(n), -np.ones(n), np.zeros(n)])[order]) > 0.5
    # Idle processors counted as lost from each event to the next (0 while no job waits).
    rate = np.where(waiting, np.maximum(machine - busy, 0.0), 0.0)
    # Lost processor-seconds up to each event, then up to each edge: the rate is
    # constant between events, so interpolating from the last event before is exact.
    lost = np.concatenate(([0.0], np.cumsum(rate[:-1] * np.diff(times))))
    k = np.searchsorted(times, rel, side="right") - 1
    last = np.maximum(k, 0)
    upto = np.where(k >= 0, lost[last] + rate[last] * (rel - times[last]), 0.0)
    return np.diff(upto), machine * length


@hookimpl
def schedlab_metrics() -> list[MetricSpec]:
    """The system metrics."""
    return [
        MetricSpec(
            name="makespan",
            description="Last end - first submit of the jobs with known times.",
            compute=makespan,
            unit="s",
            per_group=True,
            aggregation="extreme",
        ),
        MetricSpec(
            name="utilization",
            description="Used processor-time / (machine processors x makespan).",
            compute=utilization,
            unit="",
            better="higher",
            per_group=True,
            aggregation="ratio",
            window_terms=utilization_terms,
        ),
        MetricSpec(
            name="throughput",
            description="Jobs completed per hour of the observed period.",
            compute=throughput,
            unit="jobs/h",
            better="higher",
            per_group=True,
            aggregation="ratio",
            window_terms=throughput_terms,
        ),
        MetricSpec(
            name="loss-of-capacity",
            aliases=("loc",),
            description="Idle processor-time while jobs wait / (machine processors x makespan).",
            compute=loss_of_capacity,
            unit="",
            better="lower",
            aggregation="ratio",
            window_terms=loss_of_capacity_terms,
        ),
    ]
