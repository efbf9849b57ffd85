"""Per-job metrics: wait, response, slowdown, bounded slowdown, estimate accuracy.

Each function takes a :class:`~schedlab.model.JobColumns` and returns one float per
job, NaN where the value is unknown (the metrics engine counts those jobs and
leaves them out of the aggregates; it gives a negative wait or run time other than
-1, which is invalid, as NaN too, and counts those jobs in a note). Definitions
(times in seconds):

``wait``
    start - submit (SWF field 3).
``response``
    wait + run: the time from submission to completion (also called turnaround).
``slowdown``
    response / run; unknown when run <= 0.
``bounded-slowdown``
    max(1, response / max(run, threshold)), threshold 10 s by default (Feitelson's
    bounded slowdown: very short jobs do not blow the average up).
``accuracy``
    run / requested time clipped to [0, 1] (see :mod:`schedlab.accuracy`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from schedlab import MetricSpec, OptionSpec, hookimpl
from schedlab.accuracy import estimate_accuracy
from schedlab.model import JobColumns

#: Default run-time threshold of the bounded slowdown, seconds.
BOUNDED_SLOWDOWN_THRESHOLD = 10.0


def wait(columns: JobColumns, **_: Any) -> np.ndarray:
    """Wait time of each job (start - submit), seconds; NaN when unknown."""
    return np.array(columns["wait_time"], dtype=np.float64)


def response(columns: JobColumns, **_: Any) -> np.ndarray:
    """Response time (wait + run) of each job, seconds; NaN when either is unknown."""
    return columns["wait_time"] + columns["run_time"]


def slowdown(columns: JobColumns, **_: Any) -> np.ndarray:
    """Slowdown (wait + run) / run; NaN when unknown or run <= 0."""
    run = columns["run_time"]
    resp = columns["wait_time"] + run
    out = np.full(len(run), np.nan)
    with np.errstate(over="ignore"):
        np.divide(resp, run, out=out, where=run > 0)
    return out


def bounded_slowdown(
    columns: JobColumns, threshold: float = BOUNDED_SLOWDOWN_THRESHOLD, **_: Any
) -> np.ndarray:
    """Bounded slowdown max(1, (wait + run) / max(run, threshold)); NaN when unknown."""
    if not 0 < threshold < float("inf"):  # inf would make every value 1
        from schedlab.errors import UsageError

        raise UsageError(f"bounded-slowdown: threshold must be > 0 and finite, got {threshold}")
    run = columns["run_time"]
    resp = columns["wait_time"] + run
    return np.maximum(resp / np.maximum(run, threshold), 1.0)  # NaN propagates


def accuracy(columns: JobColumns, **_: Any) -> np.ndarray:
    """Estimate accuracy run / requested, clipped to [0, 1]; NaN when unknown."""
    return estimate_accuracy(columns["run_time"], columns["requested_time"])


@hookimpl
def schedlab_metrics() -> list[MetricSpec]:
    """The per-job metrics."""
    return [
        MetricSpec(
            name="wait",
            description="Wait time: start - submit.",
            compute=wait,
            unit="s",
            per_job=True,
            better="lower",
        ),
        MetricSpec(
            name="response",
            aliases=("turnaround",),
            description="Response time: wait + run.",
            compute=response,
            unit="s",
            per_job=True,
            better="lower",
        ),
        MetricSpec(
            name="slowdown",
            description="Slowdown: (wait + run) / run (jobs with run <= 0 are excluded).",
            compute=slowdown,
            unit="",
            per_job=True,
            better="lower",
        ),
        MetricSpec(
            name="bounded-slowdown",
            aliases=("bsld",),
            description="Bounded slowdown: max(1, (wait + run) / max(run, threshold)).",
            compute=bounded_slowdown,
            unit="",
            per_job=True,
            better="lower",
            options=(
                OptionSpec(
                    "threshold",
                    float,
                    BOUNDED_SLOWDOWN_THRESHOLD,
                    "run-time threshold of the bounded slowdown, seconds",
                ),
            ),
        ),
        MetricSpec(
            name="accuracy",
            description="Estimate accuracy: run / requested time, clipped to [0, 1].",
            compute=accuracy,
            unit="",
            per_job=True,
            better="higher",
        ),
    ]
