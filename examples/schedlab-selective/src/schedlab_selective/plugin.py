"""The hook implementation schedlab finds through the ``schedlab`` entry point."""

from __future__ import annotations

from schedlab import BackfillSpec, OptionSpec, hookimpl

from .strategy import Selective, parse_threshold


@hookimpl
def schedlab_backfills() -> list[BackfillSpec]:
    """The ``selective`` backfilling strategy."""
    return [
        BackfillSpec(
            name="selective",
            description=(
                "Selective reservation (Srinivasan et al. 2002): a job is reserved once its "
                "expansion factor reaches the threshold."
            ),
            factory=Selective,
            options=(
                OptionSpec(
                    "threshold",
                    parse_threshold,
                    2.0,
                    "expansion factor ((wait + estimate) / estimate) at which a waiting job "
                    "gets a reservation: a number >= 1, or 'adaptive' (the mean of the "
                    "completed jobs')",
                ),
            ),
        )
    ]
