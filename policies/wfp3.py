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

    def key(self, job: int, now: float) -> float:
        """Minus the WFP3 score (the lowest key runs first)."""
        estimate = self.estimate[job]
        if estimate < 1.0:
            estimate = 1.0
        return -(((now - self.submit[job]) / estimate) ** 3) * self.size[job]

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
