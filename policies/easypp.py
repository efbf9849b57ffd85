"""The ``easy++`` run-time predictor (Tsafrir, Etsion and Feitelson 2007).

Tsafrir, D., Etsion, Y., Feitelson, D. G.: "Backfilling using system-generated
predictions rather than user runtime estimates", IEEE Transactions on Parallel and
Distributed Systems 18(6), 789-803 (2007).

The prediction of a job is the mean run time of its user's last ``window``
(default 2, the paper's; at most 10000) completed jobs, never more than the job's requested time;
while the user has completed no job, the requested time. Completed means ended in
the simulation before the job's submission (the simulated run time, so a job killed
at its requested time counts with that time).

When a job outlives its prediction it is corrected (``correction``, default
``tsafrir``: raised stepwise up to the requested time, see
:mod:`schedlab.sim.correction`). EASY++ as the paper evaluates it is these
predictions, the correction and backfill candidates tried shortest prediction first:
``schedlab simulate LOG --estimator easy++ --backfill easy --backfill-option
order=sjbf``.

Jobs without a user id (``-1``) share one history: the last completed jobs of the
workload that have no user id; for a workload without user ids that is the whole
workload's history. The result counts these predictions
(``stats["estimator"]["no_user_predictions"]``) and says so in
``stats["notes"]``.
"""

from __future__ import annotations

from schedlab import EstimatorSpec, OptionSpec, hookimpl
from schedlab.policies.user_history import MAX_WINDOW, UserHistoryPredictor
from schedlab.sim import CORRECTIONS

NAME = "easy++"


class EasyPlusPlus(UserHistoryPredictor):
    """Mean run time of the user's last ``window`` completed jobs, capped by the
    requested time, corrected when outlived (see the module docstring)."""

    name = NAME

    def __init__(self, window: int = 2, correction: str = "tsafrir") -> None:
        super().__init__(window, correction, f"estimator {NAME}")


@hookimpl
def schedlab_estimators() -> list[EstimatorSpec]:
    """The ``easy++`` predictor."""
    return [
        EstimatorSpec(
            name=NAME,
            aliases=("easy-plus-plus",),
            description=(
                "EASY++ prediction (Tsafrir et al. 2007): mean of the user's last two run "
                "times, capped by the request, corrected when outlived."
            ),
            factory=EasyPlusPlus,
            options=(
                OptionSpec(
                    "window",
                    int,
                    2,
                    f"completed jobs of the user averaged (1..{MAX_WINDOW})",
                    min=1,
                    max=MAX_WINDOW,
                ),
                OptionSpec(
                    "correction",
                    str,
                    "tsafrir",
                    "when a job outlives its prediction: tsafrir (stepwise), requested, none",
                    CORRECTIONS,
                ),
            ),
        )
    ]
