"""``ljf``: longest job first, by the scheduler's estimate."""

from __future__ import annotations

from typing import Any

import numpy as np
from schedlab import PolicySpec, hookimpl


class LongestJobFirst:
    """Key = minus the estimate; ties by job order."""

    name = "ljf"

    def bind(self, table: Any) -> None:
        """Keep the estimates (filled by the engine at submission)."""
        self.estimate = table.estimate

    def static_keys(self, table: Any) -> Any:
        """Every job's key at its submission: minus its estimate."""
        return -np.asarray(table.estimate, dtype=np.float64)

    def key(self, job: int, now: float) -> float:
        """Minus the job's estimated run time."""
        return -self.estimate[job]


@hookimpl
def schedlab_policies() -> list[PolicySpec]:
    """Register ``ljf``."""
    return [
        PolicySpec(
            name="ljf",
            description="Longest (estimated) job first.",
            factory=LongestJobFirst,
        )
    ]
