"""``wfp3``: Tang et al.'s WFP3 priority, favouring jobs that waited long relative
to their estimate, weighted by size.

    score = (wait / estimate) ** 3 * processors

where ``wait = now - submit`` and ``estimate`` is the scheduler's estimate (at
least 1 s, so zero estimates do not divide by zero). The highest score runs first;
equal scores keep job order. Scores change with time: the queue is re-sorted at
every scheduling pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from schedlab import PolicySpec, hookimpl


class WFP3:
    """Tang et al. (2009) WFP3."""

    name = "wfp3"
    dynamic = True

    def bind(self, table: Any) -> None:
        """Keep submit times, estimates and sizes."""
        self.submit = table.submit
        self.estimate = table.estimate
        self.size = table.size
        self._submit_array = np.asarray(table.submit, dtype=np.float64)
        self._size_array = np.asarray(table.size, dtype=np.float64)
        #: Estimates (at least 1 s) for :meth:`key_array`, set at submission.
        self._estimate_array = np.ones(len(table.size), dtype=np.float64)

    def on_submit(self, job: int, now: float) -> bool:
        """Copy the job's submit time (a dependent job's is set at its release)
        and estimate (known from submission on) for :meth:`key_array`."""
        self._submit_array[job] = self.submit[job]
        estimate = self.estimate[job]
        self._estimate_array[job] = estimate if not estimate < 1.0 else 1.0
        return False

    def key(self, job: int, now: float) -> float:
        """Minus the WFP3 score (the lowest key runs first)."""
        estimate = self.estimate[job]
        if estimate < 1.0:
            estimate = 1.0
        return -(((now - self.submit[job]) / estimate) ** 3) * self.size[job]

    def key_array(self, jobs: np.ndarray, now: float) -> np.ndarray:
        """:meth:`key` of many jobs as one float64 array, the same numbers (the
        cube is Python's ``**`` on each ratio, as in ``key``: numpy's power may
        round differently)."""
        ratio = (now - self._submit_array[jobs]) / self._estimate_array[jobs]
        cube = np.array([r**3 for r in ratio.tolist()], dtype=np.float64)
        return -cube * self._size_array[jobs]

    def keys(self, jobs: Sequence[int], now: float) -> list[float]:
        """Keys of many jobs."""
        key = self.key
        return [key(j, now) for j in jobs]


@hookimpl
def schedlab_policies() -> list[PolicySpec]:
    """Register ``wfp3``."""
    return [
        PolicySpec(
            name="wfp3",
            description="Tang et al.'s WFP3: (wait/estimate)^3 * processors, highest first.",
            factory=WFP3,
        )
    ]
