"""Backfilling strategies: ``none``, ``easy``, ``conservative`` and ``depth``.

Every strategy is described by its reservation depth, which the engine reads once
(see :class:`schedlab.sim.protocols.Backfill`); all of them work with every
priority policy.

``none`` (depth 0)
    Jobs start in priority order; the first job that does not fit blocks the rest.
``easy`` (depth 1)
    The first blocked job gets a reservation at the earliest time enough processors
    are free by the running jobs' estimates (the *shadow time*); a later job may
    start now if it fits and either ends (by its estimate) before the shadow time
    or uses only the processors the reservation leaves over. Recomputed at every
    scheduling pass.
``conservative`` (depth all)
    Every waiting job gets a reservation when it arrives, at the earliest time that
    delays no earlier reservation; a job starts when its reservation comes. When a
    job ends before its estimate the schedule is compressed: in priority order,
    every waiting job moves to its earliest feasible start, never later than before.
``depth`` (option ``depth=k`` or ``depth=all``)
    The first ``k`` blocked jobs get reservations, recomputed at every pass; other
    jobs start if they fit now without delaying any reservation. ``depth=0`` is
    ``none``, ``depth=1`` is ``easy``, ``depth=all`` is ``conservative``.
"""

from __future__ import annotations

import attrs
from schedlab import hookimpl
from schedlab.errors import UsageError
from schedlab.plugin_types import BackfillSpec, OptionSpec


@attrs.define(frozen=True, slots=True)
class ReservationDepth:
    """A backfilling strategy given by its reservation depth (``None`` = conservative)."""

    reservation_depth: int | None
    name: str = ""


def parse_depth(text: str) -> int | None:
    """``"all"`` -> None (conservative), else a non-negative integer."""
    if isinstance(text, int):
        value = text
    else:
        cleaned = str(text).strip().lower()
        if cleaned in {"all", "inf", "conservative"}:
            return None
        value = int(cleaned)
    if value < 0:
        raise ValueError("must be >= 0")
    return value


parse_depth.__name__ = "integer or 'all'"


def _depth_factory(depth: int | None = 2) -> ReservationDepth:
    if depth is None:
        return ReservationDepth(None, "conservative")
    if not isinstance(depth, int) or depth < 0:
        raise UsageError(f"backfill depth: option depth={depth!r}: expected an integer >= 0")
    return ReservationDepth(depth, {0: "none", 1: "easy"}.get(depth, f"depth{depth}"))


@hookimpl
def schedlab_backfills() -> list[BackfillSpec]:
    """The built-in backfilling strategies."""
    return [
        BackfillSpec(
            name="none",
            description="No backfilling: the first job that does not fit blocks the queue.",
            factory=lambda: ReservationDepth(0, "none"),
        ),
        BackfillSpec(
            name="easy",
            aliases=("aggressive",),
            description="EASY: a reservation for the first blocked job only.",
            factory=lambda: ReservationDepth(1, "easy"),
        ),
        BackfillSpec(
            name="conservative",
            description="A reservation for every waiting job, compressed when jobs end early.",
            factory=lambda: ReservationDepth(None, "conservative"),
        ),
        BackfillSpec(
            name="depth",
            description="Reservations for the first k blocked jobs (depth=k; 0 none, 1 EASY, all).",
            factory=_depth_factory,
            options=(
                OptionSpec(
                    "depth",
                    parse_depth,
                    2,
                    "number of blocked jobs holding a reservation, or 'all'",
                ),
            ),
        ),
    ]
