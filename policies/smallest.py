"""``smallest``: the job asking for the fewest processors first."""

from __future__ import annotations

from typing import Any

from schedlab import hookimpl
from schedlab.plugin_types import PolicySpec


class SmallestFirst:
    """Key = processors; ties by job order."""

    name = "smallest"

    def bind(self, table: Any) -> None:
        """Keep the job sizes."""
        self.size = table.size

    def key(self, job: int, now: float) -> int:
        """The job's processors."""
        return self.size[job]


@hookimpl
def schedlab_policies() -> list[PolicySpec]:
    """Register ``smallest``."""
    return [
        PolicySpec(
            name="smallest",
            aliases=("sf",),
            description="Fewest processors first.",
            factory=SmallestFirst,
        )
    ]
