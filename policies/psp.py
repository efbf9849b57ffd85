"""``psp``: the Penalty Scheduling Policy of Rocchetti, Iturriaga and Nesmachnow.

A user's *accuracy* is the mean, over that user's last ``window`` (default 10)
completed jobs, of ``min(run time / requested time, 1)`` (the run time is the one
of the simulation, so a killed job has accuracy 1). The accuracy falls in a class
a1..a5 by the class edges (default ``0.2,0.4,0.6,0.8``: a1 = [0, 0.2), ...,
a5 = [0.8, 1]); class ``ak`` has priority ``k`` and a higher priority runs first.
Ties (same priority) keep submission order.

Priorities are recomputed at every submission and completion, as in the paper: a
completion updates its user's history, and when that changes the user's class the
engine re-sorts the queue.

Decisions the paper leaves open:

* ``window`` is at most ``MAX_WINDOW`` (10000) completed jobs: a longer memory
  than that is no longer a user's *recent* estimates.
* A user with no completed job yet gets class ``new_user_class`` (default 5, the
  highest): PSP penalises *observed* poor estimates, and a newcomer has shown none
  (so the first jobs of every user compete on submission order, as under FCFS).
* Jobs whose requested time is unknown or zero do not enter the history (their
  accuracy is undefined); an unknown user (SWF ``-1``) is one anonymous user.
"""

from __future__ import annotations

import math
import numbers
from bisect import bisect_right
from collections import deque
from collections.abc import Iterable, Mapping
from itertools import pairwise
from typing import Any

from schedlab import OptionSpec, PolicySpec, hookimpl, list_items
from schedlab.accuracy import CLASS_DECIMALS
from schedlab.errors import UsageError

#: Largest ``window`` (completed jobs per user in the accuracy mean).
MAX_WINDOW = 10_000


def parse_edges(text: Any) -> tuple[float, ...]:
    """``"0.2/0.4/0.6/0.8"`` (``/``, ``,``, ``;`` or blanks between the numbers; ``/``
    inside a ``name:key=value,...`` spec, whose commas separate options) or a
    sequence of numbers -> increasing floats in (0, 1].

    Raises ``ValueError`` for anything else (NaN, booleans, a single number ...).
    """
    if isinstance(text, str):
        parts: list[Any] = list_items(text)
    elif isinstance(text, Iterable) and not isinstance(text, (bytes, Mapping)):
        parts = list(text)
    else:
        raise ValueError(f"expected numbers separated by commas, got {text!r}")
    if any(isinstance(part, bool) for part in parts):
        raise ValueError("edges must be numbers, not booleans")
    try:
        values = tuple(float(part) for part in parts)
    except (TypeError, ValueError):
        raise ValueError(f"edges must be numbers, got {text!r}") from None
    if not values:
        raise ValueError("no edges")
    if not all(math.isfinite(v) for v in values):
        raise ValueError("edges must be finite numbers")
    if any(b <= a for a, b in pairwise(values)):
        raise ValueError("edges must increase")
    if values[0] <= 0 or values[-1] > 1:
        raise ValueError("edges must lie in (0, 1]")
    return values


parse_edges.__name__ = "increasing numbers separated by '/'"


def accuracy_class(accuracy: float, edges: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8)) -> int:
    """The class number (1 = a1 ...) of an accuracy.

    The mean is rounded to ``CLASS_DECIMALS`` first, exactly as the metrics'
    ``accuracy-class`` grouping does, so a user on a class edge lands in the same
    class in the policy and in the report (0.19999999999999998 is a2).
    """
    return bisect_right(edges, round(accuracy, CLASS_DECIMALS)) + 1


def _whole(value: Any) -> bool:
    """An integer, not a boolean."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


class PenaltyScheduling:
    """The PSP priority policy (see the module docstring)."""

    name = "psp"

    def __init__(
        self,
        window: int = 10,
        edges: tuple[float, ...] | str = (0.2, 0.4, 0.6, 0.8),
        new_user_class: int | None = None,
    ) -> None:
        if isinstance(edges, str):
            edges = parse_edges(edges)
        self.edges = tuple(edges)
        classes = len(self.edges) + 1
        if new_user_class is None:
            new_user_class = classes
        if not _whole(window) or not 1 <= window <= MAX_WINDOW:
            raise UsageError(f"policy psp: option window={window!r}: must be in 1..{MAX_WINDOW}")
        if not _whole(new_user_class) or not 1 <= new_user_class <= classes:
            raise UsageError(
                f"policy psp: option new_user_class={new_user_class}: expected 1..{classes}"
            )
        self.window = window
        self.new_user_class = new_user_class
        self.history: dict[int, deque[float]] = {}
        self.user_class: dict[int, int] = {}
        self.table: Any = None

    def bind(self, table: Any) -> None:
        """Keep the job table (and forget an earlier run: the users' histories and
        classes start empty, so one object run twice schedules the same twice)."""
        self.table = table
        self.user = table.user
        self.history = {}
        self.user_class = {}

    def priority(self, job: int) -> int:
        """The job's current priority (1 .. number of classes)."""
        return self.user_class.get(self.user[job], self.new_user_class)

    def accuracy(self, user: int) -> float | None:
        """The user's current accuracy, or None without history."""
        past = self.history.get(user)
        if not past:
            return None
        return sum(past) / len(past)

    def key(self, job: int, now: float) -> int:
        """Minus the priority: the highest class runs first."""
        return -self.user_class.get(self.user[job], self.new_user_class)

    def on_finish(self, job: int, now: float) -> bool:
        """Add the job's accuracy to its user's history; True if the class changed."""
        table = self.table
        requested = table.requested_time[job]
        if not requested > 0:
            return False
        ratio = table.run_time[job] / requested
        if ratio > 1.0:
            ratio = 1.0
        user = self.user[job]
        past = self.history.get(user)
        if past is None:
            past = self.history[user] = deque(maxlen=self.window)
        past.append(ratio)
        new_class = accuracy_class(sum(past) / len(past), self.edges)
        old_class = self.user_class.get(user, self.new_user_class)
        self.user_class[user] = new_class
        return new_class != old_class


@hookimpl
def schedlab_policies() -> list[PolicySpec]:
    """Register ``psp``."""
    return [
        PolicySpec(
            name="psp",
            aliases=("penalty",),
            description="Penalty Scheduling Policy: users with accurate estimates first.",
            factory=PenaltyScheduling,
            options=(
                OptionSpec(
                    "window",
                    int,
                    10,
                    f"completed jobs per user in the accuracy mean (1..{MAX_WINDOW})",
                    min=1,
                    max=MAX_WINDOW,
                ),
                OptionSpec(
                    "edges",
                    parse_edges,
                    (0.2, 0.4, 0.6, 0.8),
                    "accuracy class edges (classes a1..a(n+1))",
                ),
                OptionSpec(
                    "new_user_class",
                    int,
                    None,
                    "class of a user with no completed job (default: the highest)",
                    min=1,
                ),
            ),
        )
    ]
