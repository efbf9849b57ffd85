"""Aggregate metrics: totals over the whole workload.

The statistics of per-job metrics (mean, median, 90th/99th percentile, max) are
computed by the metrics engine (:mod:`schedlab.measure`) for every per-job metric,
so they need no plugin. This module provides the workload totals:

``work``
    processor-hours consumed: sum of size x run time over the jobs of the schedule
    (known submit, wait and run time, as every system metric: the note of a metrics
    report counts the others) with a known size (allocated processors, else
    requested), divided by 3600. Computed per group too (the groups' work adds up to
    the total); a whole-schedule total, so a warm-up/cool-down window does not apply
    to it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from schedlab import MetricSpec, hookimpl
from schedlab.measure import MetricUnavailable, job_processors
from schedlab.model import JobColumns


def work(columns: JobColumns, **_: Any) -> float:
    """Processor-hours consumed by the jobs with known submit, wait and run time and
    a known size (the jobs every system metric uses)."""
    placed = columns["submit_time"] + columns["wait_time"]
    area = job_processors(columns) * columns["run_time"]
    known = ~np.isnan(area) & ~np.isnan(placed)
    if not known.any():
        raise MetricUnavailable("no job has a known submit, wait, run time and size")
    return float(area[known].sum() / 3600.0)


@hookimpl
def schedlab_metrics() -> list[MetricSpec]:
    """The aggregate metrics."""
    return [
        MetricSpec(
            name="work",
            description="Processor-hours consumed: sum of processors x run time / 3600.",
            compute=work,
            unit="proc-h",
            per_group=True,
        ),
    ]
