"""The JSON text of the commands' ``--json`` output: one spelling of non-finite numbers.

JSON has no infinity and no NaN. An option value may be either (a backfilling
``limit`` whose default is ``math.inf``, ``-P cap=-inf``, a NaN an option allows),
and it must neither crash the output nor turn into ``null``, which the reports use
for "unknown". Such a value is written as the text Python gives it and reads back,
``"inf"``, ``"-inf"`` or ``"nan"`` (``float(text)`` is the value again): the form
``schedlab plugins --json`` already uses for a default.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np


def json_safe(value: Any) -> Any:
    """``value`` with every non-finite float written as ``"inf"``, ``"-inf"`` or
    ``"nan"`` and numpy scalars and arrays as Python numbers and lists, recursively
    through mappings (keys become text), lists and tuples; anything else unchanged."""
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def json_text(
    value: Any,
    *,
    indent: int | None = 2,
    sort_keys: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """``value`` as strict JSON text (never ``Infinity`` or ``NaN``), through
    :func:`json_safe`: every ``--json`` output that can carry an option value."""
    return json.dumps(
        json_safe(value), indent=indent, sort_keys=sort_keys, allow_nan=False, default=default
    )


def report_dict(report: Any) -> dict[str, Any]:
    """A :class:`~schedlab.measure.MetricsReport` as ``report.to_dict()`` (metric
    values without one are ``None``), but with its options as they were given, so
    that :func:`json_text` writes an infinite option as ``"inf"``, not ``null``."""
    data: dict[str, Any] = report.to_dict()
    data["options"] = dict(report.options)
    return data
