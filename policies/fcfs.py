"""``fcfs``: first come, first served (the earliest submission runs first)."""

from __future__ import annotations

from typing import Any

from schedlab import PolicySpec, hookimpl


class FirstComeFirstServed:
    """Key = submit time; equal submit times keep job order."""

    name = "fcfs"

    def bind(self, table: Any) -> None:
        """Keep the submit times (updated by the engine for released dependent jobs)."""
        self.submit = table.submit

    def static_keys(self, table: Any) -> Any:
        """Every job's key at its submission: the submit times (numpy, no copy)."""
        return table.columns["submit_time"]

    def key(self, job: int, now: float) -> float:
        """The job's submit time."""
        return self.submit[job]


@hookimpl
def schedlab_policies() -> list[PolicySpec]:
    """Register ``fcfs``."""
    return [
        PolicySpec(
            name="fcfs",
            aliases=("fifo",),
            description="First come, first served.",
            factory=FirstComeFirstServed,
        )
    ]
