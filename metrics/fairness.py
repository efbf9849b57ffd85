"""Fairness between users: Jain's fairness index over per-user mean wait.

It uses the jobs every system metric uses: those whose submit, wait and run time
are all known (the metrics report's note counts the others). For the n users with at
least one such job, with x_i the mean wait of user i, Jain's index is
``(sum x_i)^2 / (n * sum x_i^2)``: 1 when every user waits the same on average, 1/n
when one user does all the waiting. When nobody waits at all (every x_i = 0) the
index is 1 (everyone is treated alike). Jobs with an unknown user id are left out;
with no user at all the metric is unavailable. With a warm-up/cool-down window, only
the jobs submitted inside it count. It is a whole-schedule metric (not computed per
group).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from schedlab import MetricSpec, hookimpl
from schedlab.measure import MetricUnavailable
from schedlab.model import JobColumns


def per_user_mean(user_id: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(user_ids, mean value)`` over each user's jobs with a known value, sorted by id."""
    known = ~(np.isnan(user_id) | np.isnan(values))
    users, codes = np.unique(user_id[known], return_inverse=True)
    sums = np.bincount(codes, weights=values[known], minlength=len(users))
    counts = np.bincount(codes, minlength=len(users))
    return users, sums / np.maximum(counts, 1)


def jain_index(values: np.ndarray) -> float:
    """Jain's fairness index of non-negative ``values`` (NaN if empty; 1 if all zero)."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) == 0:
        return float("nan")
    top = float(np.max(np.abs(x)))
    if top == 0.0:
        return 1.0
    x = x / top  # the index is scale-free; scaling avoids under- and overflow
    return float(np.sum(x)) ** 2 / (len(x) * float(np.sum(x * x)))


def fairness(columns: JobColumns, period: tuple[float, float] | None = None, **_: Any) -> float:
    """Jain's index over the users' mean waits, of the jobs with known submit, wait
    and run time (the system metrics' jobs) submitted inside ``period``, the
    warm-up/cool-down window, when it is given."""
    submit = columns["submit_time"]
    wait = columns["wait_time"]
    scheduled = ~np.isnan(submit + wait + columns["run_time"])
    if period is not None:
        with np.errstate(invalid="ignore"):
            inside = (submit >= period[0]) & (submit <= period[1])
        scheduled = scheduled & inside
    means = per_user_mean(columns["user_id"], np.where(scheduled, wait, np.nan))[1]
    if len(means) == 0:
        raise MetricUnavailable("no job has a known user and known submit, wait and run time")
    return jain_index(means)


@hookimpl
def schedlab_metrics() -> list[MetricSpec]:
    """The fairness metrics."""
    return [
        MetricSpec(
            name="fairness",
            aliases=("jain",),
            description="Jain's fairness index over per-user mean wait (1 = equal).",
            compute=fairness,
            unit="",
            better="higher",
        ),
    ]
