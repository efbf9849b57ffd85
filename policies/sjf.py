"""``sjf``: shortest job first, by the scheduler's estimate (not the true run time)."""

from __future__ import annotations

from typing import Any

import numpy as np
from schedlab import PolicySpec, hookimpl


class ShortestJobFirst:
    """Key = estimate; ties by job order."""

    name = "sjf"

    def bind(self, table: Any) -> None:
        """Keep the estimates (filled by the engine at submission)."""
        self.estimate = table.estimate

    def static_keys(self, table: Any) -> Any:
        """Every job's key at its submission: its estimate."""
        return np.asarray(table.estimate, dtype=np.float64)

    def key(self, job: int, now: float) -> float:
        """The job's estimated run time."""
        return self.estimate[job]


@hookimpl
def schedlab_policies() -> list[PolicySpec]:
    """Register ``sjf``."""
    return [
        PolicySpec(
            name="sjf",
            description="Shortest (estimated) job first.",
            factory=ShortestJobFirst,
        )
    ]
