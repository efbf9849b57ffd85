"""``smallest``: the job asking for the fewest processors first."""

from __future__ import annotations

from typing import Any

import numpy as np
from schedlab import PolicySpec, hookimpl


class SmallestFirst:
    """Key = processors; ties by job order."""

    name = "smallest"

    def bind(self, table: Any) -> None:
        """Keep the job sizes."""
        self.size = table.size

    def static_keys(self, table: Any) -> Any:
        """Every job's key at its submission: its size."""
        return np.asarray(table.size, dtype=np.int64)

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
