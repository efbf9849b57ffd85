"""``unicef``: Tang et al.'s UNICEF priority, favouring small, short jobs that waited.

    score = wait / (log2(processors) * estimate)

where ``wait = now - submit`` and ``estimate`` is the scheduler's estimate (at
least 1 s). ``log2(1) = 0`` would give serial jobs an infinite score, so the
processors count is taken as at least 2 (serial jobs score like 2-processor
jobs). The highest score runs first; equal scores keep job order; the queue is
re-sorted at every scheduling pass.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from schedlab import PolicySpec, hookimpl


class UNICEF:
    """Tang et al. (2009) UNICEF."""

    name = "unicef"
    dynamic = True

    def bind(self, table: Any) -> None:
        """Keep submit times and precompute log2(size) per job."""
        self.submit = table.submit
        self.estimate = table.estimate
        self.log_size = [math.log2(s if s > 2 else 2) for s in table.size]
        self._submit_array = np.asarray(table.submit, dtype=np.float64)
        self._log_size_array = np.asarray(self.log_size, dtype=np.float64)
        #: Estimates (at least 1 s) for :meth:`key_array`, set at submission.
        self._estimate_array = np.ones(len(table.size), dtype=np.float64)

    def key(self, job: int, now: float) -> float:
        """Minus the UNICEF score (the lowest key runs first)."""
        estimate = self.estimate[job]
        if estimate < 1.0:
            estimate = 1.0
        return -(now - self.submit[job]) / (self.log_size[job] * estimate)

    def key_array(self, jobs: np.ndarray, now: float) -> np.ndarray:
        """:meth:`key` of many jobs as one float64 array, the same numbers."""
        estimate = self._estimate_array[jobs]
        return -(now - self._submit_array[jobs]) / (self._log_size_array[jobs] * estimate)

    def on_submit(self, job: int, now: float) -> bool:
        """Copy the job's submit time (a dependent job's is set at its release)
        and estimate (known from submission on) for :meth:`key_array`."""
        self._submit_array[job] = self.submit[job]
        estimate = self.estimate[job]
        self._estimate_array[job] = estimate if not estimate < 1.0 else 1.0
        return False


@hookimpl
def schedlab_policies() -> list[PolicySpec]:
    """Register ``unicef``."""
    return [
        PolicySpec(
            name="unicef",
            description="Tang et al.'s UNICEF: wait / (log2(processors) * estimate).",
            factory=UNICEF,
        )
    ]
