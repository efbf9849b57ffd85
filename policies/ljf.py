"""``ljf``: longest job first, by the scheduler's estimate."""

from __future__ import annotations

from typing import Any

from schedlab import hookimpl
from schedlab.plugin_types import PolicySpec


class LongestJobFirst:
    """Key = minus the estimate; ties by job order."""

    name = "ljf"

    def bind(self, table: Any) -> None:
        """Keep the estimates (filled by the engine at submission)."""
        self.estimate = table.estimate

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
