"""The data behind the interactive report: series binned to the screen, the job
table for the Gantt chart and the distributions, packed compactly for the page.

Time series are step functions (the level holds from one event to the next). A
series is *binned* on bins of equal width: per bin the time-weighted **mean** of
the level and its **maximum** (the highest level held for a positive time inside
the bin). The page carries several resolutions (:func:`bin_levels`): the
coarsest has about ``target_bins`` bins over the whole span, each finer one about
a quarter of the width, down to one minute or to :data:`MAX_FINE_BINS` bins over
the span, whichever is coarser (a bound on the page size); the page's window script
picks the finest resolution with at most one bin per pixel of the window.

The arrays stay numpy arrays in compact types (:func:`compact_int`, float32):
Bokeh embeds them in the page as base64 of their bytes
(:mod:`schedlab.report_charts`), so a 400,000-job schedule stays a page of a few
tens of MB.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import UsageError
from .model import JobColumns

#: Bins over the whole span at the coarsest resolution (default).
TARGET_BINS = 600
#: Most bins over the whole span at the finest resolution (bounds the page size).
MAX_FINE_BINS = 50_000
#: Most bins over the whole span at the coarsest resolution, the one ``--bins`` or
#: ``--bin-width`` sets (bounds the memory and the page: a million bins of four
#: series are about 200 MB while the page is built).
MAX_BINS = 1_000_000
#: Threshold (s) of the bounded slowdown drawn in the page, as the metric's default.
BOUNDED_SLOWDOWN_TAU = 10.0
#: Points kept of an empirical CDF (evenly spaced in rank).
CDF_POINTS = 800
#: Bin widths (s) the resolutions are chosen from: round numbers of a clock.
NICE_WIDTHS = (
    60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 14400, 21600, 28800, 43200,
    86400, 2 * 86400, 4 * 86400, 7 * 86400, 14 * 86400, 28 * 86400,
)  # fmt: skip


def bin_step(
    times: np.ndarray,
    values: np.ndarray,
    start: float,
    width: float,
    count: int,
    stop: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and maximum of a step function per bin.

    ``values[i]`` holds from ``times[i]`` (sorted, distinct) until ``times[i+1]``,
    the last one for ever; before ``times[0]`` the level is 0. Bin ``k`` is
    ``[start + k*width, start + (k+1)*width)``. Returns ``(mean, maximum)``: the
    mean is the integral over the bin divided by its width, except that with
    ``stop`` (the end of the observed span) the integral up to ``stop`` is divided
    by the part of the bin before it: the last bin, which the end of the schedule
    cuts short, reads as the mean while the schedule ran, as the time axis shows
    it (the page's axes end at ``stop``).
    """
    times = np.asarray(times, dtype=float)
    values = np.asarray(values, dtype=float)
    edges = start + width * np.arange(count + 1, dtype=float)
    # Each bin's part before ``stop`` (all of it without one) and its length.
    ends = edges if stop is None else np.minimum(edges, max(float(stop), float(start)))
    covered = np.diff(ends)
    divisor = np.where(covered > 0, covered, float(width))
    if not len(times):  # no event (every job left out of the series): level 0
        return np.zeros(count), np.zeros(count)
    # Area under the step function from times[0] to each breakpoint, then to each
    # bin end.
    area = np.r_[0.0, np.cumsum(values[:-1] * np.diff(times))]
    at = np.searchsorted(times, ends, side="right") - 1
    inside = at >= 0
    safe = np.where(inside, at, 0)
    integral = np.where(inside, area[safe] + values[safe] * (ends - times[safe]), 0.0)
    mean = np.diff(integral) / divisor
    level_at_start = np.where(inside[:-1], values[safe[:-1]], 0.0)
    maximum = level_at_start.copy()
    which = np.searchsorted(edges, times, side="right") - 1
    keep = (which >= 0) & (which < count)
    if stop is not None:
        keep &= times < ends[-1]  # a level from ``stop`` on is not held inside
    np.maximum.at(maximum, which[keep], values[keep])
    return mean, maximum


def nice_width(raw: float) -> float:
    """The smallest round bin width (:data:`NICE_WIDTHS`, then whole weeks) ≥ ``raw``."""
    for width in NICE_WIDTHS:
        if width >= raw:
            return float(width)
    return float(np.ceil(raw / (7 * 86400)) * 7 * 86400)


def bin_levels(
    span: float, target_bins: int = TARGET_BINS, width: float | None = None
) -> list[float]:
    """Bin widths, coarsest first: the first gives about ``target_bins`` bins over
    ``span`` (or is ``width`` when given), each next one about a quarter of the
    previous, down to max(60 s, span / :data:`MAX_FINE_BINS`).

    A ``width`` that is not a positive finite number, or that gives more than
    :data:`MAX_BINS` bins over ``span``, and a ``target_bins`` above it, are a
    :class:`~schedlab.errors.UsageError` (naming ``--bin-width`` / ``--bins``)."""
    check_bins(target_bins, width)
    if width is not None:
        bins = math.ceil(max(span, 1.0) / float(width))
        if bins > MAX_BINS:
            raise UsageError(
                f"--bin-width {float(width):g}: gives {bins:,} bins over the schedule's "
                f"{max(span, 1.0):,.0f} s; at most {MAX_BINS:,} (give a wider bin)"
            )
    first = float(width) if width else nice_width(max(span, 1.0) / max(target_bins, 1))
    floor = nice_width(max(60.0, span / MAX_FINE_BINS))
    levels = [first]
    while True:
        smaller = [w for w in NICE_WIDTHS if floor <= w <= levels[-1] / 4]
        if not smaller:
            break
        levels.append(float(smaller[-1]))
    if floor < levels[-1]:  # no nice width a quarter below: the floor is the last level
        levels.append(float(floor))
    return levels


def check_bins(target_bins: int, width: float | None) -> None:
    """Refuse a bin count above :data:`MAX_BINS` (or below 1) and a bin width that
    is not a positive finite number of seconds, naming the options ``--bins`` and
    ``--bin-width`` (:class:`~schedlab.errors.UsageError`)."""
    if width is not None:
        try:
            number = float(width)
        except (TypeError, ValueError):
            number = math.nan
        if not (math.isfinite(number) and number > 0):
            raise UsageError(f"--bin-width {width!r}: must be a positive, finite number of seconds")
    if target_bins > MAX_BINS:
        raise UsageError(f"--bins {target_bins}: must be at most {MAX_BINS:,}")
    if target_bins < 1:  # the command line asks at least 10 already
        raise UsageError(f"--bins {target_bins}: must be at least 1")


def compact_int(values: np.ndarray) -> np.ndarray:
    """Integers (rounded first) in the smallest of uint8, uint16, int16 and int32
    that holds them all: Bokeh embeds such arrays as their raw little-endian bytes
    (base64), so a 447,794-job column of small codes costs 0.6 MB, not 4.5 MB.
    Beyond the int32 range (job ids of Google Borg, times up to the readers' 1e12
    s) they are float64, which holds every integer up to 2**53 exactly and which
    the page's JavaScript reads as plain numbers (an int64 array would not be).
    Beyond 2**53 in magnitude is a :class:`ValueError`."""
    rounded = np.round(np.asarray(values, dtype=float))
    low = float(rounded.min()) if len(rounded) else 0.0
    high = float(rounded.max()) if len(rounded) else 0.0
    for dtype, lo, hi in (
        ("u1", 0, 255),
        ("u2", 0, 65535),
        ("i2", -32768, 32767),
        ("i4", -(2**31), 2**31 - 1),
    ):
        if lo <= low and high <= hi:
            return rounded.astype(dtype)
    if low < -(2**53) or high > 2**53:
        raise ValueError(f"values from {low} to {high} are not exact in 64-bit floats")
    return rounded.astype("f8")


def _step(times: np.ndarray, deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from .report import step_series

    return step_series(times, deltas)


def series_steps(
    columns: JobColumns, procs: float | None
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The step functions drawn over time: utilization (%) or busy processors,
    running jobs, queued jobs and queued work (requested processor-hours).

    Unknown stays unknown: a job of unknown processors is left out of the
    utilization and of the queued work, and one of unknown (or non-positive)
    requested time out of the queued work (:func:`left_out` counts them); a
    negative wait, run time, requested time or size is unknown, as in the metrics
    (:func:`schedlab.report.timed_jobs`)."""
    from .report import _as_measured, job_size, timed_jobs

    columns = _as_measured(columns)
    ok = timed_jobs(columns)
    submit = columns["submit_time"][ok]
    start = submit + columns["wait_time"][ok]
    end = start + columns["run_time"][ok]
    size = job_size(columns)[ok]
    sized = ~np.isnan(size)
    requested = columns["requested_time"][ok]
    asked = sized & ~np.isnan(requested) & (requested > 0)
    ones = np.ones(len(submit))
    busy_t, busy = _step(np.r_[start[sized], end[sized]], np.r_[size[sized], -size[sized]])
    if procs:
        busy = busy / procs * 100.0
    return {
        "busy": (busy_t, busy),
        "running": _step(np.r_[start, end], np.r_[ones, -ones]),
        "queued": _step(np.r_[submit, start], np.r_[ones, -ones]),
        "demand": _queued_work(submit[asked], start[asked], size[asked] * requested[asked]),
    }


def _queued_work(
    submit: np.ndarray, start: np.ndarray, work: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The queued work (processor-hours) as a step function, without the residue of
    a float running sum: the sum runs over processor-seconds (``work``; exact for
    the whole numbers of the traces) and is divided by 3600 at the end, and the
    level is exactly 0 wherever no job waits (whatever the rounding of fractional
    ``work``)."""
    ones = np.ones(len(submit))
    t, sums = _step(np.r_[submit, start], np.c_[np.r_[work, -work], np.r_[ones, -ones]])
    if not len(t):
        return t, np.zeros(0)
    level, waiting = sums[:, 0], sums[:, 1]
    return t, np.where(waiting > 0.5, level / 3600.0, 0.0)


def left_out(columns: JobColumns) -> dict[str, int]:
    """Jobs with known times left out of series (:func:`series_steps`): ``size``,
    those of unknown processors (out of the utilization and the queued work), and
    ``requested``, those of unknown or non-positive requested time (out of the
    queued work)."""
    from .report import _as_measured, job_size, timed_jobs

    columns = _as_measured(columns)
    ok = timed_jobs(columns)
    requested = columns["requested_time"][ok]
    return {
        "size": int(np.isnan(job_size(columns)[ok]).sum()),
        "requested": int((np.isnan(requested) | (requested <= 0)).sum()),
    }


def cdf_points(values: np.ndarray, floor: float = 0.0, points: int = CDF_POINTS) -> dict[str, Any]:
    """An empirical CDF thinned to at most ``points`` steps: ``x`` (sorted values
    above ``floor``), ``p`` (share of jobs ≤ x) and ``zero`` (share ≤ ``floor``,
    which a log axis cannot show: the curve starts at that level)."""
    values = np.sort(values[~np.isnan(values)])
    n = len(values)
    zero = float(np.mean(values <= floor)) if n else 0.0
    first = int(np.searchsorted(values, floor, side="right"))
    rank = np.arange(first, n)
    if len(rank) > points:
        rank = np.unique(np.r_[np.linspace(first, n - 1, points).round().astype(int), n - 1])
    return {
        "x": [float(v) for v in values[rank]],
        "p": [round((r + 1) / n, 6) for r in rank],
        "zero": round(zero, 6),
    }


def clock_of(columns: JobColumns) -> tuple[float, float]:
    """First submission and last end of the jobs with known times (a negative wait
    or run time is unknown, as in the metrics)."""
    from .report import timed_jobs

    ok = timed_jobs(columns)
    submit = columns["submit_time"][ok]
    end = submit + columns["wait_time"][ok] + columns["run_time"][ok]
    return float(submit.min()), float(end.max())


def page_data(
    columns: JobColumns,
    procs: float | None,
    klass: np.ndarray,
    target_bins: int = TARGET_BINS,
    bin_width: float | None = None,
    clock: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """Everything the page draws for one schedule: the binned series at every
    resolution (``levels``: per level the width ``w``, the count ``n`` and per
    series ``(mean, maximum)`` as float32 arrays), the job table (``jobs``: numpy
    columns in :func:`compact_int` types; times in seconds since ``origin``,
    rounded to whole seconds) and the CDFs of wait and bounded slowdown. ``clock``
    is ``(origin, stop)`` shared by the schedules of one page
    (default: this schedule's first submission and last end, :func:`clock_of`)."""
    from .report import _as_measured, job_size, timed_jobs

    columns = _as_measured(columns)  # negative values unknown, as in the metrics
    ok = timed_jobs(columns)
    submit = columns["submit_time"][ok]
    wait = columns["wait_time"][ok]
    run = columns["run_time"][ok]
    origin, stop = clock or clock_of(columns)
    span = max(stop - origin, 1.0)
    steps = series_steps(columns, procs)
    levels = []
    for width in bin_levels(span, target_bins, bin_width):
        count = int(np.ceil(span / width))
        level: dict[str, Any] = {"w": width, "n": count}
        for name, (t, v) in steps.items():
            mean, maximum = bin_step(t, v, origin, width, count, stop=origin + span)
            level[name] = (mean.astype(np.float32), maximum.astype(np.float32))
        levels.append(level)

    def codes(column: str) -> tuple[np.ndarray, list[str]]:
        raw = columns[column][ok]
        known = ~np.isnan(raw)
        ids = np.unique(raw[known])
        code = np.full(len(raw), -1, dtype=np.int32)
        code[known] = np.searchsorted(ids, raw[known])
        return code, [str(int(u)) if float(u).is_integer() else str(u) for u in ids]

    user, users = codes("user_id")
    queue, queues = codes("queue_number")
    number = columns["job_number"][ok]
    requested = columns["requested_time"][ok]
    sub = np.round(submit - origin)
    jobs = {
        "id": compact_int(np.where(np.isnan(number), -1, number)),
        "submit": compact_int(sub),
        "waited": compact_int(np.round(wait)),
        "run": compact_int(np.round(run)),
        "size": compact_int(np.nan_to_num(job_size(columns)[ok], nan=-1.0)),
        "req": compact_int(np.where(np.isnan(requested), -1, np.round(requested))),
        "user": compact_int(user),
        "queue": compact_int(queue),
        "klass": compact_int(klass[ok]),
    }
    bsld = np.maximum((wait + run) / np.maximum(run, BOUNDED_SLOWDOWN_TAU), 1.0)
    return {
        "origin": origin,
        "span": span,
        "procs": procs,
        "levels": levels,
        "jobs": jobs,
        "n": int(ok.sum()),
        "users": users,
        "queues": queues,
        "cdf": {"waited": cdf_points(wait), "bounded": cdf_points(bsld, floor=1.0)},
    }
