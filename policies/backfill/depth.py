"""Reservation depth ``k``: the first ``k`` blocked jobs (in priority order) get
reservations, recomputed from the running jobs at every pass; any other job starts
if it fits now without delaying a reservation.

``depth=0`` is ``none``, ``depth=1`` is ``easy`` and ``depth=all`` is
``conservative`` (the plugin returns those strategies: the built-in ones, imported
as a dependency, so a run's ``registry=`` that blocks or replaces them does not
change what ``depth`` means). The :class:`Depth` class
itself works for every ``k >= 1``: with ``k = 1`` it is the plainly written
reference of the ``easy`` module (the tests compare them).
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from typing import Any

from schedlab import BackfillSpec, OptionSpec, hookimpl
from schedlab.errors import UsageError
from schedlab.sim import SchedulerState


class Depth:
    """Reservations for the first ``k`` blocked jobs, on an availability profile
    rebuilt at every pass."""

    wants_running = True

    def __init__(self, k: int = 2) -> None:
        if not isinstance(k, int) or k < 1:
            raise UsageError(f"backfill depth: option depth={k!r}: expected an integer >= 1")
        self.k = k
        self.name = f"depth{k}"

    def bind(self, state: SchedulerState) -> None:
        """Keep the state."""
        self.state = state

    def schedule(self, now: float) -> None:
        """One pass over the queue in priority order."""
        state = self.state
        size = state.size
        est = state.estimate
        profile = state.running_profile()
        reserved = 0
        for _, j in list(state.queue):
            s = size[j]
            d = est[j]
            if reserved < self.k:
                at = profile.earliest(s, d)
                if at <= now and s <= state.free:
                    profile.reserve(now, now + d, s)
                    state.start(j)
                else:
                    profile.reserve(at, at + d, s)
                    reserved += 1
            elif s <= state.free and profile.fits_now(s, d):
                profile.reserve(now, now + d, s)
                state.start(j)
            if not state.free and reserved >= self.k:
                break


def parse_depth(text: Any) -> int | None:
    """``"all"`` -> None (conservative), else a non-negative integer: a whole
    number written with a decimal point or an exponent (``"3.0"``, ``3.0``,
    ``"3e0"``) is one, as for an ``int`` option; ``3.5`` is refused."""
    if isinstance(text, int):
        value = text
    elif isinstance(text, float):
        if not (math.isfinite(text) and text.is_integer()):
            raise ValueError("a whole number")
        value = int(text)
    else:
        cleaned = str(text).strip().lower()
        if cleaned in {"all", "inf", "conservative"}:
            return None
        try:
            value = int(cleaned)
        except ValueError as exc:
            try:
                number = Decimal(cleaned)
            except InvalidOperation:
                raise exc from None
            if not (
                number.is_finite()
                and math.isfinite(float(number))
                and number == number.to_integral_value()
            ):
                raise ValueError("a whole number") from None
            value = int(number)
    if value < 0:
        raise ValueError("must be >= 0")
    return value


parse_depth.__name__ = "integer or 'all'"


def strategy_of_depth(depth: int | None = 2) -> Any:
    """The strategy of a reservation depth: ``none``, ``easy``, ``conservative``
    (``None``) or :class:`Depth`."""
    from .conservative import Conservative
    from .easy import Easy
    from .none import NoBackfill

    if depth is not None and (not isinstance(depth, int) or depth < 0):
        raise UsageError(f"backfill depth: option depth={depth!r}: expected an integer >= 0")
    if depth is None:
        return Conservative()
    if depth == 0:
        return NoBackfill()
    if depth == 1:
        return Easy()
    return Depth(depth)


@hookimpl
def schedlab_backfills() -> list[BackfillSpec]:
    """The ``depth`` strategy."""
    return [
        BackfillSpec(
            name="depth",
            description="Reservations for the first k blocked jobs (depth=k; 0 none, 1 EASY, all).",
            factory=strategy_of_depth,
            options=(
                OptionSpec(
                    "depth",
                    parse_depth,
                    2,
                    "number of blocked jobs holding a reservation, or 'all'",
                ),
            ),
        )
    ]
