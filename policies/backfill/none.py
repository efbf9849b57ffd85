"""No backfilling: jobs start in priority order; the first job that does not fit
blocks the rest of the queue until processors free up."""

from __future__ import annotations

from schedlab import hookimpl
from schedlab.plugin_types import BackfillSpec
from schedlab.sim import SchedulerState


class NoBackfill:
    """The ``none`` strategy: start from the head while jobs fit, nothing else."""

    name = "none"
    #: ``start_from_head`` already schedules each partition on its own nodes.
    supports_platform = True

    def bind(self, state: SchedulerState) -> None:
        """Keep the state."""
        self.state = state

    def schedule(self, now: float) -> None:
        """One pass: start from the head while jobs fit."""
        self.state.start_from_head()


@hookimpl
def schedlab_backfills() -> list[BackfillSpec]:
    """The ``none`` strategy."""
    return [
        BackfillSpec(
            name="none",
            description="No backfilling: the first job that does not fit blocks the queue.",
            factory=NoBackfill,
        )
    ]
