"""Run-time estimators: what the scheduler believes a job will run.

``requested`` (default)
    The job's requested time (SWF field 9). When it is unknown the engine falls
    back to the header's ``MaxRuntime``, else to the job's run time (counted in the
    result's ``estimate_fallbacks``).
``actual``
    Perfect estimates: the time the job will really run in the simulation (after
    the kill rule).
``user-average``
    Tsafrir, Etsion and Feitelson's prediction: the mean run time of the user's
    last ``window`` (default 2, at most 10000) completed jobs, never more than the requested time;
    the requested time while the user has no completed job. Option ``correction``
    (default ``none``, the behaviour before corrections existed): what happens when a
    job outlives its prediction (:mod:`schedlab.sim.correction`); ``easy++`` is
    this predictor with ``correction=tsafrir`` by default.
"""

from __future__ import annotations

from typing import Any

from schedlab import EstimatorSpec, OptionSpec, hookimpl
from schedlab.policies.user_history import MAX_WINDOW, UserHistoryPredictor
from schedlab.sim import CORRECTIONS


class RequestedTime:
    """The requested time as the estimate."""

    name = "requested"
    #: ``estimates(table)`` is the table's column (whole runs take its array).
    estimates_column = "requested_time"

    def estimates(self, table: Any) -> list[float]:
        """Every job's requested time (``nan`` when unknown: the engine falls back)."""
        return list(table.requested_time)


class ActualRunTime:
    """Perfect estimates: the simulated run time."""

    name = "actual"
    #: ``estimates(table)`` is the table's column (whole runs take its array).
    estimates_column = "run_time"

    def estimates(self, table: Any) -> list[float]:
        """Every job's simulated run time."""
        return list(table.run_time)


class UserAverage(UserHistoryPredictor):
    """Mean run time of the user's last ``window`` completed jobs, capped by the
    requested time (Tsafrir et al., 2007)."""

    name = "user-average"

    def __init__(self, window: int = 2, correction: str = "none") -> None:
        super().__init__(window, correction, "estimator user-average")


@hookimpl
def schedlab_estimators() -> list[EstimatorSpec]:
    """The built-in estimators."""
    return [
        EstimatorSpec(
            name="requested",
            description="The requested time (MaxRuntime, else the run time, when unknown).",
            factory=RequestedTime,
        ),
        EstimatorSpec(
            name="actual",
            aliases=("perfect",),
            description="Perfect estimates: the simulated run time.",
            factory=ActualRunTime,
        ),
        EstimatorSpec(
            name="user-average",
            aliases=("tsafrir",),
            description="Mean run time of the user's last completed jobs, capped by the request.",
            factory=UserAverage,
            options=(
                OptionSpec(
                    "window",
                    int,
                    2,
                    f"completed jobs averaged (1..{MAX_WINDOW})",
                    min=1,
                    max=MAX_WINDOW,
                ),
                OptionSpec(
                    "correction",
                    str,
                    "none",
                    "when a job outlives its prediction: tsafrir (stepwise), requested, none",
                    CORRECTIONS,
                ),
            ),
        ),
    ]
