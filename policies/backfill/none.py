"""No backfilling: jobs start in priority order; the first job that does not fit
blocks the rest of the queue until processors free up."""

from __future__ import annotations

from schedlab import BackfillSpec, hookimpl
from schedlab.errors import SimulationError
from schedlab.sim import SchedulerState, WholeRun, WholeRunOutcome

from .none_run import none_run


class NoBackfill:
    """The ``none`` strategy: start from the head while jobs fit, nothing else."""

    name = "none"
    #: A stepping simulation's caller may start jobs itself: this strategy keeps
    #: no view of its own.
    accepts_manual_starts = True
    #: ``start_from_head`` already schedules each partition on its own nodes.
    supports_platform = True

    def bind(self, state: SchedulerState) -> None:
        """Keep the state."""
        self.state = state

    def schedule(self, now: float) -> None:
        """One pass: start from the head while jobs fit."""
        self.state.start_from_head()

    def run_whole(self, plan: WholeRun) -> WholeRunOutcome | None:
        """The whole run in one loop (:mod:`.none_run`) on a single pool with
        estimates known before the run (declined on a platform or with
        predictions: the engine's loop runs those)."""
        if plan.machine is not None or plan.prediction is not None:
            return None
        start, passes, left = none_run(plan.submit, plan.size, plan.run_time, plan.key, plan.procs)
        if left:
            raise SimulationError(
                f"backfill {plan.strategy_name!r}: {left} jobs left waiting with no event "
                "left (please report this)"
            )
        return WholeRunOutcome(start=start, passes=passes)


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
