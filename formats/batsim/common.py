"""Helpers shared by the Batsim workload and jobs.csv modules: job identifiers,
numbers checked for NaN and infinity, extras key names."""

from __future__ import annotations

import math
from typing import Any

from schedlab.errors import FormatError

#: Extras keys (prefix ``batsim.``) that keep what the model has no place for.
EXTRA_ID = "batsim.id"
EXTRA_WORKLOAD = "batsim.workload"
EXTRA_PROFILE = "batsim.profile"
EXTRA_PROFILE_DEF = "batsim.profile_def"
EXTRA_JOB_FIELDS = "batsim.job_fields"
EXTRA_WALLTIME = "batsim.walltime"
EXTRA_FINAL_STATE = "batsim.final_state"
EXTRA_ALLOCATED = "batsim.allocated_resources"
EXTRA_CSV = "batsim.csv"


def split_id(raw: Any) -> tuple[str | None, int | None]:
    """``(workload, number)`` of a Batsim job id: ``7`` -> ``(None, 7)``,
    ``"w0!12"`` -> ``("w0", 12)``, ``"abc"`` -> ``(None, None)`` (a number that is
    not an integer stays unknown)."""
    if isinstance(raw, bool):
        return None, None
    if isinstance(raw, int):
        return None, raw
    text = str(raw)
    workload, sep, tail = text.rpartition("!")
    body = tail if sep else text
    try:
        number = int(body)
    except ValueError:
        number = None
    return (workload if sep else None), number


def number(
    value: Any,
    *,
    source: str,
    where: str,
    field: str,
    minimum: float | None = 0.0,
    integer: bool = False,
    line: int | None = None,
) -> float | int:
    """``value`` as a finite number (``int`` when ``integer``), at least ``minimum``;
    a one-line :class:`FormatError` otherwise."""

    def fail(what: str) -> FormatError:
        return FormatError(what, source=source, line=line, path=where, field=field)

    if isinstance(value, bool) or value is None:
        raise fail(f"expected a number, got {value!r}")
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise fail(f"expected a number, got {value!r}") from None
    if not isinstance(value, (int, float)):
        raise fail(f"expected a number, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise fail(f"expected a finite number, got {value!r}")
    if minimum is not None and value < minimum:
        raise fail(f"expected a number >= {minimum:g}, got {value!r}")
    if integer:
        if float(value) != int(value):
            raise fail(f"expected an integer, got {value!r}")
        return int(value)
    return value


def plain(value: float | int) -> float | int:
    """An integral float as ``int`` (so JSON and CSV show ``10``, not ``10.0``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
