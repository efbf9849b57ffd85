"""``psp-experiment``: the PSP paper's study as a packaged experiment.

Reproduces Rocchetti, Iturriaga and Nesmachnow, *Including accurate user estimates
in HPC schedulers: an empirical analysis* (``../shared/specs/psp-paper.txt``): the
six scenarios of the ``psp-fing`` generator, each simulated with the ``psp`` policy
and the ``fcfs`` baseline under ``easy`` backfilling, measured per accuracy class and
set beside the paper's Table 3 and Figure 1 (see ``docs/experiments.md``). The
``slurm`` configuration (``--config slurm``) runs the paper's own setting instead:
PSP as a factor of ``multifactor`` next to age, with the ``slurm`` backfill.

A plugin like any third party's: it provides the command ``experiment.psp``
(``schedlab experiment psp``) through ``schedlab_cli_commands`` and uses only the
public API (``schedlab`` and ``schedlab.experiment``). The components it runs are
looked up by name in the registry when the experiment runs, so they come from
whichever plugins provide them. Importing this module is cheap; the experiment's
code is imported when the command runs.

Modules: :mod:`.experiment` (cells, pooling, ratios, running),
:mod:`.reference` (the paper's numbers), :mod:`.tables` (printing),
:mod:`.figures` (Figure 1), :mod:`.cli` (the command).
"""

from __future__ import annotations

from typing import Any

from schedlab import CommandSpec, hookimpl
from schedlab.experiment import COMMAND_PREFIX

#: The experiment's name: ``schedlab experiment psp``.
NAME = "psp"


def _load_command() -> Any:
    from .cli import psp

    return psp


@hookimpl
def schedlab_cli_commands() -> list[CommandSpec]:
    """``schedlab experiment psp``: reproduce the PSP paper's Table 3 and Figure 1."""
    return [
        CommandSpec(
            name=f"{COMMAND_PREFIX}{NAME}",
            description="Reproduce the PSP paper: Table 3, the ratios and Figure 1.",
            load=_load_command,
        )
    ]
