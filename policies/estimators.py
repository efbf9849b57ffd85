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
    last ``window`` (default 2) completed jobs, never more than the requested time;
    the requested time while the user has no completed job. Option ``correction``
    (default ``none``, the behaviour before corrections existed): what happens when a
    job outlives its prediction (:mod:`schedlab.sim.correction`); ``easy++`` is
    this predictor with ``correction=tsafrir`` by default.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from schedlab import hookimpl
from schedlab.plugin_types import EstimatorSpec, OptionSpec
from schedlab.sim import CORRECTIONS, make_correction


class RequestedTime:
    """The requested time as the estimate."""

    name = "requested"

    def estimates(self, table: Any) -> list[float]:
        """Every job's requested time (``nan`` when unknown: the engine falls back)."""
        return list(table.requested_time)


class ActualRunTime:
    """Perfect estimates: the simulated run time."""

    name = "actual"

    def estimates(self, table: Any) -> list[float]:
        """Every job's simulated run time."""
        return list(table.run_time)


class UserAverage:
    """Mean run time of the user's last ``window`` completed jobs, capped by the
    requested time (Tsafrir et al., 2007)."""

    name = "user-average"

    def __init__(self, window: int = 2, correction: str = "none") -> None:
        if window < 1:
            from schedlab.errors import UsageError

            raise UsageError(f"estimator user-average: option window={window}: must be >= 1")
        self.window = window
        self.correction = make_correction("estimator user-average", correction)
        self.history: dict[int, deque[float]] = {}
        self.table: Any = None

    @property
    def correct(self) -> Any:
        """The correction hook the engine calls (``None``: no correction)."""
        return self.correction.correct if self.correction is not None else None

    def bind(self, table: Any) -> None:
        """Keep the job table."""
        self.table = table
        self.history = {}
        if self.correction is not None:
            self.correction.bind(table)

    def estimate(self, job: int, now: float) -> float:
        """The prediction for a job submitted now."""
        requested = self.table.requested_time[job]
        past = self.history.get(self.table.user[job])
        if not past:
            return requested
        guess = sum(past) / len(past)
        if requested == requested and requested < guess:
            return requested
        return guess

    def on_finish(self, job: int, now: float) -> None:
        """Remember the run time of a completed job."""
        user = self.table.user[job]
        past = self.history.get(user)
        if past is None:
            past = self.history[user] = deque(maxlen=self.window)
        run = self.table.run_time[job]
        if not math.isnan(run):
            past.append(run)


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
                OptionSpec("window", int, 2, "completed jobs averaged"),
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
