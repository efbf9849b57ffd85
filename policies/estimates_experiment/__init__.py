"""``estimates-experiment``: reward accurate users, or predict for them?

Two answers to inaccurate user run-time estimates, side by side on the same
workloads: the PSP paper's (Rocchetti, Iturriaga and Nesmachnow, *Including accurate
user estimates in HPC schedulers: an empirical analysis*, ``../shared/specs/
psp-paper.txt``: give accurate users priority, ``psp`` + EASY on user estimates) and
the predictors' (FCFS + EASY planning with each run-time predictor instead of the
user's estimate, corrected when a job outlives its prediction: ``user-average``,
``easy++`` as Tsafrir, Etsion and Feitelson 2007 evaluate it, with shortest-job-first
backfilling, ``learned``), against FCFS + EASY on user estimates and on perfect ones.

A plugin like any third party's: it provides the command ``experiment.estimates``
(``schedlab experiment estimates``) through ``schedlab_cli_commands`` and uses only the
public API (``schedlab`` and ``schedlab.experiment``); every component is looked up by
name in the registry when the experiment runs. Importing this module is cheap; the
experiment's code is imported when the command runs.

Modules: :mod:`.experiment` (the grid of configurations, running, rows),
:mod:`.tables` (the text table), :mod:`.figures` (the figure), :mod:`.cli` (the
command).
"""

from __future__ import annotations

from typing import Any

from schedlab import CommandSpec, hookimpl
from schedlab.experiment import COMMAND_PREFIX

#: The experiment's name: ``schedlab experiment estimates``.
NAME = "estimates"


def _load_command() -> Any:
    from .cli import estimates

    return estimates


@hookimpl
def schedlab_cli_commands() -> list[CommandSpec]:
    """``schedlab experiment estimates``: PSP + EASY against FCFS + EASY with each
    run-time predictor."""
    return [
        CommandSpec(
            name=f"{COMMAND_PREFIX}{NAME}",
            description="PSP + EASY on user estimates vs FCFS + EASY with each run-time "
            "predictor, on real logs and generated workloads.",
            load=_load_command,
        )
    ]
