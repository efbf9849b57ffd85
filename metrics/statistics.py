"""Statistics of per-job metrics beyond the engine's own.

The metrics engine computes ``mean``, ``median``, ``min``, ``max`` and any percentile
``pNN`` itself (vectorised over every group at once). This plugin adds statistics
through the ``schedlab_statistics`` hook, exactly as a third-party plugin would; each
``compute`` receives one group's known values of one metric, sorted ascending:

``std``
    sample standard deviation (``ddof=1``: the spread of the jobs as a sample of the
    workload); NaN for a single value.
``gmean``
    geometric mean, ``exp(mean(log(x)))``: the average that ratios such as slowdowns
    call for (a job twice as slow and one twice as fast cancel out). Defined for
    positive values only: NaN when any value is 0 or negative (waits of 0 s are
    common, so it suits slowdowns rather than waits).
"""

from __future__ import annotations

import numpy as np
from schedlab import StatisticSpec, hookimpl


def std(values: np.ndarray) -> float:
    """Sample standard deviation (NaN for fewer than two values)."""
    if len(values) < 2:
        return float("nan")
    return float(np.std(values, ddof=1))


def gmean(values: np.ndarray) -> float:
    """Geometric mean of positive values (NaN when a value is 0 or negative)."""
    if values[0] <= 0:  # sorted ascending: the first is the smallest
        return float("nan")
    return float(np.exp(np.mean(np.log(values))))


@hookimpl
def schedlab_statistics() -> list[StatisticSpec]:
    """The statistics of this plugin."""
    return [
        StatisticSpec(
            name="std",
            aliases=("stdev",),
            description="Sample standard deviation (ddof=1).",
            compute=std,
        ),
        StatisticSpec(
            name="gmean",
            description="Geometric mean (positive values only; NaN otherwise).",
            compute=gmean,
        ),
    ]
