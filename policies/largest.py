"""``largest``: the job asking for the most processors first."""

from __future__ import annotations

from typing import Any

import numpy as np
from schedlab import PolicySpec, hookimpl


class LargestFirst:
    """Key = minus the processors; ties by job order."""

    name = "largest"

    def bind(self, table: Any) -> None:
        """Keep the job sizes."""
        self.size = table.size

    def static_keys(self, table: Any) -> Any:
        """Every job's key at its submission: minus its size."""
        return -np.asarray(table.size, dtype=np.int64)

    def key(self, job: int, now: float) -> int:
        """Minus the job's processors."""
        return -self.size[job]


@hookimpl
def schedlab_policies() -> list[PolicySpec]:
    """Register ``largest``."""
    return [
        PolicySpec(
            name="largest",
            aliases=("lf",),
            description="Most processors first.",
            factory=LargestFirst,
        )
    ]
