"""The ``learned`` run-time predictor: an online regression in the manner of
Gaussier, Glesser, Reis and Trystram (2015), "Improving backfilling by using machine
learning to predict running times", SC'15 (the predictsim study).

Model. A linear model over features of the job known at its submission predicts
``log(1 + run time) / 10``:

* a constant; the requested time (log-scaled; 0 plus an "unknown" flag when
  unknown); the processors (log-scaled);
* the user's recent run times (log-scaled): the last one, the mean of the last two
  and the mean of the last ``window`` (default 5, 2 to 10000), and a flag "the user has a
  history";
* the time of day and of the week of the submission (as sine and cosine, on the
  workload's clock: second 0 is taken as midnight at the start of a week, as the
  trace's local time is unknown).

Loss. Squared error in log space, weighted by ``under_weight`` (default 4) when the
model under-predicts: under-predictions, which make the scheduler plan with
processors that are not free, cost more than over-predictions, as in Gaussier et
al.'s asymmetric losses.

Learning. Online: a job enters the training set when it **completes** in the
simulation (its simulated run time is the target; its features are those of its
submission), so a job's prediction depends only on jobs finished before its
submission (a test perturbs the run times of later jobs and compares). Every
``batch`` (default 16, at most 100000) completed jobs one AdaGrad step (per-feature step sizes
``rate / sqrt(sum of squared gradients)``, default ``rate=0.05``) updates the
weights; the constant starts at the mean target of the first batch. Until the
first batch, and for a job whose requested time is below the prediction, the
prediction is the requested time (the paper's bound).

Arithmetic. The static features are computed once per run with numpy, and the
targets (``log_targets``: each job's, read only when it completes); the
history features, the prediction and the AdaGrad step are the plain loops of
:mod:`schedlab.sim.online_linear` (Python lists and floats here; no numba
needed). The estimator declares its predictions with ``history_model()`` (an
:class:`~schedlab.sim.OnlineLinearModel`), so a strategy that can run the whole
simulation itself (compiled EASY on a single pool) makes the same predictions,
learning steps and corrections inside its compiled loop with the same functions,
compiled: the same schedule and estimates, bit for bit, as this estimator's
pass-by-pass run (:mod:`schedlab.sim.whole_run`).

Correction (``correction``, default ``tsafrir``) as for every predictor
(:mod:`schedlab.sim.correction`). Jobs without a user id share one history (the
workload's jobs without user id), counted in ``stats["estimator"]`` and noted.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from schedlab import EstimatorSpec, OptionSpec, hookimpl
from schedlab.errors import UsageError
from schedlab.policies.user_history import MAX_WINDOW, check_window
from schedlab.sim import (
    CORRECTIONS,
    OnlineLinearModel,
    WholeRun,
    WholeRunOutcome,
    make_correction,
)
from schedlab.sim.online_linear import (
    HISTORY_FEATURES,
    adagrad_step,
    history_features,
    linear_prediction,
    log_targets,
    ring_push,
)

NAME = "learned"
#: Largest ``batch`` (completed jobs per learning step): a whole run keeps one
#: batch's rows in arrays of this length.
MAX_BATCH = 100_000
#: Targets and log-scaled features are ``log1p(seconds) / SCALE`` (about 0 .. 1.6).
SCALE = 10.0
DAY = 86400.0
WEEK = 7 * DAY
#: Feature names, in the order of the weight vector.
FEATURES: tuple[str, ...] = (
    "constant",
    "requested",
    "requested_unknown",
    "processors",
    "day_sin",
    "day_cos",
    "week_sin",
    "week_cos",
    "user_last",
    "user_last2",
    "user_window",
    "user_has_history",
)


def static_features(table: Any) -> np.ndarray:
    """Per job, the features that do not depend on the history (vectorised, once
    per run): a float64 array, one row per job, the columns of
    ``FEATURES[:8]``."""
    req = np.asarray(table.requested_time, dtype=np.float64)
    known = req >= 0
    log_req = np.where(known, np.log1p(np.where(known, req, 0.0)) / SCALE, 0.0)
    procs = np.log1p(np.maximum(np.asarray(table.size, dtype=np.float64), 0.0)) / SCALE
    submit = np.asarray(table.submit, dtype=np.float64)
    day = 2 * math.pi * np.mod(submit, DAY) / DAY
    week = 2 * math.pi * np.mod(submit, WEEK) / WEEK
    return np.column_stack(
        [
            np.ones(len(req)),
            log_req,
            (~known).astype(np.float64),
            procs,
            np.sin(day),
            np.cos(day),
            np.sin(week),
            np.cos(week),
        ]
    ).reshape(len(req), len(FEATURES) - HISTORY_FEATURES)


#: The history features of a user with no completed job.
NO_HISTORY = (0.0,) * HISTORY_FEATURES


class Learned:
    """Online asymmetric regression predictor (see the module docstring)."""

    name = NAME

    def __init__(
        self,
        window: int = 5,
        rate: float = 0.05,
        under_weight: float = 4.0,
        batch: int = 16,
        correction: str = "tsafrir",
    ) -> None:
        owner = f"estimator {NAME}"
        window = check_window(window, owner, least=2)
        if not (isinstance(rate, (int, float)) and not isinstance(rate, bool) and 0 < rate <= 10):
            raise UsageError(f"{owner}: option rate={rate!r}: must be in (0, 10]")
        if not (
            isinstance(under_weight, (int, float))
            and not isinstance(under_weight, bool)
            and 1 <= under_weight <= 1000
        ):
            raise UsageError(f"{owner}: option under_weight={under_weight!r}: must be in [1, 1000]")
        whole: object = batch  # any whole number (numpy's too), as an object for mypy
        if (
            not isinstance(whole, numbers.Integral)
            or isinstance(whole, bool)
            or not 1 <= int(whole) <= MAX_BATCH
        ):
            raise UsageError(f"{owner}: option batch={batch!r}: must be in 1..{MAX_BATCH}")
        self.window = window
        self.rate = float(rate)
        self.under_weight = float(under_weight)
        self.batch = int(batch)
        self.correction = make_correction(owner, correction)
        self.table: Any = None
        self.static_array = np.zeros((0, len(FEATURES) - HISTORY_FEATURES))
        #: The static features as Python lists, made when first predicted from (a
        #: whole run never does).
        self.static: list[list[float]] | None = None
        #: Every job's target (online_linear.log_targets), read at its end only.
        self.targets_array = np.zeros(0)
        self.targets: list[float] | None = None
        self._reset(0)

    def _reset(self, n: int) -> None:
        d = len(FEATURES)
        #: The weights, the sums of squared gradients and the gradient's scratch
        #: (Python lists: schedlab.sim.online_linear computes on them).
        self.w: list[float] = [0.0] * d
        self.squares: list[float] = [0.0] * d
        self.grad: list[float] = [0.0] * d
        self.trained = 0
        self.features: list[tuple[float, ...] | None] = [None] * n
        self.pending: list[int] = []
        self.pending_y: list[float] = []
        #: Per user: ``[ring of targets, next slot, count]`` (online_linear.ring_push).
        self.history: dict[int, list[Any]] = {}
        self.no_user = 0

    @property
    def weights(self) -> np.ndarray:
        """The model's weights (in the order of :data:`FEATURES`)."""
        return np.array(self.w)

    @property
    def correct(self) -> Any:
        """The correction hook the engine calls (``None``: no correction)."""
        return self.correction.correct if self.correction is not None else None

    def bind(self, table: Any) -> None:
        """Precompute the static features (and forget an earlier run)."""
        self.table = table
        self._reset(len(table))
        self.static_array = static_features(table)
        self.static = None
        self.targets_array = log_targets(table.run_time, SCALE)
        self.targets = None
        if self.correction is not None:
            self.correction.bind(table)

    def estimate(self, job: int, now: float) -> float:
        """The prediction for ``job``, submitted at ``now``."""
        table = self.table
        user = table.user[job]
        if user < 0:
            self.no_user += 1
        past = self.history.get(user)
        hist = NO_HISTORY if past is None else history_features(past[0], past[1], past[2])
        static = self.static
        if static is None:
            static = self.static = self.static_array.tolist()
        x = (*static[job], *hist)
        self.features[job] = x
        requested = table.requested_time[job]
        if not self.trained:
            return requested
        return linear_prediction(self.w, x, SCALE, requested)

    def on_finish(self, job: int, now: float) -> None:
        """A job completed: its run time enters the user's history and, with the
        features of its submission, the next training batch."""
        run = self.table.run_time[job]
        if run != run or run < 0:
            return
        targets = self.targets
        if targets is None:
            targets = self.targets = self.targets_array.tolist()
        y = targets[job]
        user = self.table.user[job]
        past = self.history.get(user)
        if past is None:
            past = self.history[user] = [[0.0] * self.window, 0, 0]
        past[1], past[2] = ring_push(past[0], past[1], past[2], y)
        if self.features[job] is not None:
            self.pending.append(job)
            self.pending_y.append(y)
            if len(self.pending) >= self.batch:
                self._learn()

    def _learn(self) -> None:
        """One AdaGrad step on the pending completed jobs."""
        m = len(self.pending)
        adagrad_step(
            self.features,
            self.pending,
            self.pending_y,
            m,
            self.w,
            self.squares,
            self.grad,
            self.rate,
            self.under_weight,
            not self.trained,
        )
        self.trained += m
        self.pending = []
        self.pending_y = []

    def history_model(self) -> OnlineLinearModel:
        """These predictions, learning steps and corrections, as a model a strategy
        may run itself in a whole run (:mod:`schedlab.sim.whole_run`)."""
        mode = "none" if self.correction is None else self.correction.mode
        return OnlineLinearModel(
            static=self.static_array,
            window=self.window,
            batch=self.batch,
            rate=self.rate,
            under_weight=self.under_weight,
            scale=SCALE,
            correction=mode,
            targets=self.targets_array,
        )

    def on_whole_run(self, plan: WholeRun, outcome: WholeRunOutcome) -> None:
        """A whole run made the predictions and learning steps: keep its counts and
        final weights (the pending batch is not kept: the run is over)."""
        if plan.user is not None:
            self.no_user = int((plan.user < 0).sum())
        self.trained = int(outcome.trained)
        if outcome.weights is not None:
            self.w = [float(v) for v in outcome.weights]

    def run_stats(self) -> dict[str, int]:
        """Counters for the result's ``stats["estimator"]``."""
        return {"no_user_predictions": self.no_user, "trained_jobs": self.trained}

    def notes(self) -> list[str]:
        """Sentences for the result's ``stats["notes"]``."""
        if not self.no_user:
            return []
        return [
            f"{NAME}: {self.no_user:,} jobs have no user id: predicted from the shared "
            "history of the workload's jobs without user id"
        ]


@hookimpl
def schedlab_estimators() -> list[EstimatorSpec]:
    """The ``learned`` predictor."""
    return [
        EstimatorSpec(
            name=NAME,
            description=(
                "Online regression (Gaussier et al. 2015) on job and user features with an "
                "asymmetric loss, trained on completed jobs only."
            ),
            factory=Learned,
            options=(
                OptionSpec(
                    "window",
                    int,
                    5,
                    f"user's recent jobs in the history features (2..{MAX_WINDOW})",
                    min=2,
                    max=MAX_WINDOW,
                ),
                OptionSpec(
                    "rate", float, 0.05, "AdaGrad step size (0, 10]", min=0, max=10, min_open=True
                ),
                OptionSpec(
                    "under_weight",
                    float,
                    4.0,
                    "loss weight of under-predictions [1, 1000]",
                    min=1,
                    max=1000,
                ),
                OptionSpec(
                    "batch",
                    int,
                    16,
                    f"completed jobs per learning step (1..{MAX_BATCH})",
                    min=1,
                    max=MAX_BATCH,
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
