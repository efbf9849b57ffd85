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

    def key(self, job: int, now: float) -> float:
        """Minus the UNICEF score (the lowest key runs first)."""
        estimate = self.estimate[job]
        if estimate < 1.0:
            estimate = 1.0
        return -(now - self.submit[job]) / (self.log_size[job] * estimate)


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
