"""The prediction both ``user-average`` and ``easy++`` make (Tsafrir, Etsion and
Feitelson 2007): the mean run time of the user's last ``window`` completed jobs,
never more than the job's requested time; the requested time while the user has
none. A helper module of the built-in estimators, not a plugin itself."""

from __future__ import annotations

import numbers
from collections import deque
from typing import Any

from schedlab.errors import UsageError
from schedlab.sim import UserHistoryModel, WholeRun, WholeRunOutcome, make_correction

#: Largest ``window`` of a history predictor (completed jobs of a user it keeps).
#: A whole run keeps the history of every user in one array of ``users x window``
#: floats, so the bound keeps that array at 80 kB per user.
MAX_WINDOW = 10_000


def check_window(window: object, label: str, least: int = 1) -> int:
    """``window`` when it is a whole number in ``least .. MAX_WINDOW``, else a
    one-line :class:`UsageError` naming ``label`` (e.g. ``"estimator easy++"``)."""
    if (
        not isinstance(window, numbers.Integral)
        or isinstance(window, bool)
        or not least <= int(window) <= MAX_WINDOW
    ):
        raise UsageError(f"{label}: option window={window!r}: must be in {least}..{MAX_WINDOW}")
    return int(window)


class UserHistoryPredictor:
    """The shared predictor: history per user (jobs without user id share the
    history of user ``-1``, counted in ``no_user``), the capped mean, and the
    correction hook (``correction`` names a rule of :mod:`schedlab.sim.correction`,
    ``label`` names the estimator in its errors)."""

    #: The estimator's name, in its notes (subclasses set it).
    name = "user history"

    def __init__(self, window: int, correction: str, label: str) -> None:
        self.window = check_window(window, label)
        self.correction = make_correction(label, correction)
        self.history: dict[int, deque[float]] = {}
        self.table: Any = None
        self.no_user = 0

    @property
    def correct(self) -> Any:
        """The correction hook the engine calls (``None``: no correction)."""
        return self.correction.correct if self.correction is not None else None

    def bind(self, table: Any) -> None:
        """Keep the job table (and forget an earlier run)."""
        self.table = table
        self.history = {}
        self.no_user = 0
        if self.correction is not None:
            self.correction.bind(table)

    def estimate(self, job: int, now: float) -> float:
        """The prediction for ``job``, submitted at ``now``."""
        table = self.table
        requested = table.requested_time[job]
        user = table.user[job]
        if user < 0:
            self.no_user += 1
        past = self.history.get(user)
        if not past:
            return requested
        guess = sum(past) / len(past)
        if requested == requested and requested < guess:
            return requested
        return guess

    def history_model(self) -> UserHistoryModel:
        """These predictions and corrections, as a model a strategy may run
        itself in a whole run (:mod:`schedlab.sim.whole_run`)."""
        mode = "none" if self.correction is None else self.correction.mode
        return UserHistoryModel(window=self.window, correction=mode)

    def on_whole_run(self, plan: WholeRun, outcome: WholeRunOutcome) -> None:
        """A whole run made the predictions: count those of jobs without user id."""
        if plan.user is not None:
            self.no_user = int((plan.user < 0).sum())

    def run_stats(self) -> dict[str, int]:
        """Counters for the result's ``stats["estimator"]``."""
        return {"no_user_predictions": self.no_user}

    def notes(self) -> list[str]:
        """Sentences for the result's ``stats["notes"]``: how many predictions came
        from the shared history of the jobs without user id."""
        if not self.no_user:
            return []
        return [
            f"{self.name}: {self.no_user:,} jobs have no user id: predicted from the shared "
            "history of the workload's jobs without user id"
        ]

    def on_finish(self, job: int, now: float) -> None:
        """Remember the run time of a completed job."""
        user = self.table.user[job]
        past = self.history.get(user)
        if past is None:
            past = self.history[user] = deque(maxlen=self.window)
        run = self.table.run_time[job]
        if run == run:
            past.append(run)
