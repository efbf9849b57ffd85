"""Prediction-quality metrics: how well the scheduler's estimates (user requests or a
predictor's predictions) matched the run times.

The prediction of a job is the estimate the scheduler gave it at submission
(``Result.estimate``; a later correction of a running job does not change it).
``compute_metrics`` finds it in a simulation ``Result`` (column ``estimate`` of the
columns it measures); a plain trace has none, and these metrics then have no value
(the report notes it). A job whose estimate fell back (the estimator had no value,
so the simulator used the header's ``MaxRuntime`` or the run time:
``Result.estimate_fell_back``) has no prediction either: ``compute_metrics`` gives
it as ``NaN`` in the column, and the report's notes count these jobs. Per job,
grouped like every per-job metric:

``prediction-error``
    ``|prediction - run time|`` in seconds; its mean is the mean absolute error (MAE).
``under-prediction``
    1 when the prediction is shorter than the run time, else 0; its mean is the
    share of under-predictions (the jobs a scheduler must correct).
``prediction-accuracy``
    ``run time / prediction`` clipped to ``[0, 1]``: the accuracy ratio the PSP
    paper uses for requested times (:func:`schedlab.accuracy.estimate_accuracy`), with
    the prediction in place of the request (an under-prediction counts 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from schedlab import MetricSpec, hookimpl
from schedlab.accuracy import estimate_accuracy
from schedlab.model import JobColumns

#: The column of :class:`~schedlab.model.JobColumns` holding each job's prediction.
PREDICTION = "estimate"


def predictions(columns: JobColumns) -> np.ndarray:
    """Each job's prediction (NaN for every job when the columns carry none)."""
    values = columns.data.get(PREDICTION)
    if values is None:
        return np.full(len(columns), np.nan)
    return np.asarray(values, dtype=np.float64)


def prediction_error(columns: JobColumns, **_: Any) -> np.ndarray:
    """Absolute error ``|prediction - run|`` of each job, seconds; NaN when unknown."""
    return np.abs(predictions(columns) - columns["run_time"])


def under_prediction(columns: JobColumns, **_: Any) -> np.ndarray:
    """1.0 where the prediction is shorter than the run time, 0.0 otherwise; NaN when
    either is unknown."""
    pred = predictions(columns)
    run = columns["run_time"]
    out = (pred < run).astype(np.float64)
    out[np.isnan(pred) | np.isnan(run)] = np.nan
    return out


def prediction_accuracy(columns: JobColumns, **_: Any) -> np.ndarray:
    """``run / prediction`` clipped to ``[0, 1]`` (PSP's accuracy ratio)."""
    return estimate_accuracy(columns["run_time"], predictions(columns))


@hookimpl
def schedlab_metrics() -> list[MetricSpec]:
    """The prediction-quality metrics."""
    return [
        MetricSpec(
            name="prediction-error",
            aliases=("absolute-error",),
            description="|prediction - run time| (mean: MAE); needs a simulation result.",
            compute=prediction_error,
            unit="s",
            per_job=True,
            better="lower",
        ),
        MetricSpec(
            name="under-prediction",
            description="1 if the prediction was shorter than the run (mean: share).",
            compute=under_prediction,
            unit="",
            per_job=True,
            better="lower",
        ),
        MetricSpec(
            name="prediction-accuracy",
            description="run time / prediction clipped to [0, 1] (PSP's accuracy ratio).",
            compute=prediction_accuracy,
            unit="",
            per_job=True,
            better="higher",
        ),
    ]
