"""Experiments and sweeps: the public machinery that experiment plugins build on.

A *sweep* is a list of :class:`Cell` s (workload x policy x backfilling x seed, each
simulated and measured), run in parallel by :func:`run_sweep` on local processes or
a Dask cluster, resumable from the finished cells stored under its output folder;
its results are tidy rows (:data:`ROW_FIELDS`) that :func:`write_table` writes as
CSV, JSON or Parquet. :class:`SweepConfig` reads the same axes from a TOML/JSON file
(``schedlab sweep``). :func:`grouped_bars` draws an experiment's figure in the
house style, with a published reference marked over the bars.

A packaged experiment (``schedlab experiment NAME``) is a plugin: a click command
registered through the ``schedlab_cli_commands`` hook under the name
``experiment.NAME`` (see ``docs/plugins.md``), which typically builds cells, runs
them with :func:`run_sweep` and writes its tables and figures with the helpers
below. Everything listed in ``__all__`` is public API, stable like the names of
``schedlab.__all__``; the submodules' other names may change. Core names no
experiment and no plugin here: :data:`DEFAULT_POLICY` and :data:`DEFAULT_BACKFILL`
are only names, resolved through the registry when a cell runs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: The prefix of the command names that ``schedlab experiment`` mounts: a command
#: registered as ``experiment.NAME`` runs as ``schedlab experiment NAME``.
COMMAND_PREFIX = "experiment."

# Imported on first use, so that a plugin module can import COMMAND_PREFIX when the
# registry is built without loading the sweep machinery.
_LAZY: dict[str, str] = {
    "parse_spec": "schedlab.api:parse_spec",
    "print_table": "schedlab.experiment.tables:print_table",
    "table_console": "schedlab.experiment.tables:table_console",
    "SweepConfig": "schedlab.experiment.config:SweepConfig",
    "load_config": "schedlab.experiment.config:load_config",
    "MAX_CELLS": "schedlab.experiment.config:MAX_CELLS",
    "parse_seeds": "schedlab.experiment.config:parse_seeds",
    "COLUMN_WIDTH": "schedlab.experiment.figures:COLUMN_WIDTH",
    "grouped_bars": "schedlab.experiment.figures:grouped_bars",
    "require_plotting": "schedlab.experiment.figures:require_plotting",
    "DEFAULT_BACKFILL": "schedlab.experiment.sweep:DEFAULT_BACKFILL",
    "DEFAULT_POLICY": "schedlab.experiment.sweep:DEFAULT_POLICY",
    "KEPT_STATS": "schedlab.experiment.sweep:KEPT_STATS",
    "ROW_FIELDS": "schedlab.experiment.sweep:ROW_FIELDS",
    "Cell": "schedlab.experiment.sweep:Cell",
    "SweepOutcome": "schedlab.experiment.sweep:SweepOutcome",
    "read_table": "schedlab.experiment.sweep:read_table",
    "remove_outputs": "schedlab.experiment.sweep:remove_outputs",
    "run_cell": "schedlab.experiment.sweep:run_cell",
    "run_sweep": "schedlab.experiment.sweep:run_sweep",
    "simulation_notes": "schedlab.comparison:simulation_notes",
    "write_atomic": "schedlab.experiment.sweep:write_atomic",
    "write_table": "schedlab.experiment.sweep:write_table",
}

# The public names (a literal list, so that tools see the re-exports).
__all__ = [
    "COLUMN_WIDTH",
    "COMMAND_PREFIX",
    "DEFAULT_BACKFILL",
    "DEFAULT_POLICY",
    "KEPT_STATS",
    "MAX_CELLS",
    "ROW_FIELDS",
    "Cell",
    "SweepConfig",
    "SweepOutcome",
    "grouped_bars",
    "load_config",
    "parse_seeds",
    "parse_spec",
    "print_table",
    "read_table",
    "remove_outputs",
    "require_plotting",
    "run_cell",
    "run_sweep",
    "simulation_notes",
    "table_console",
    "write_atomic",
    "write_table",
]


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'schedlab.experiment' has no attribute {name!r}")
    module_name, _, attr = target.partition(":")
    value = getattr(importlib.import_module(module_name), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from ..api import parse_spec
    from ..comparison import simulation_notes
    from . import config as _config
    from . import figures as _figures
    from . import sweep as _sweep
    from .config import SweepConfig, load_config, parse_seeds
    from .figures import grouped_bars, require_plotting
    from .sweep import (
        Cell,
        SweepOutcome,
        read_table,
        remove_outputs,
        run_cell,
        run_sweep,
        write_atomic,
        write_table,
    )
    from .tables import print_table, table_console

    # The constants (imported on first use, like the rest), with the doc comments
    # that the API reference shows: autodoc reads them from this module.

    #: Width of one column of a two-column paper, inches (:func:`grouped_bars`'s
    #: default figure width).
    COLUMN_WIDTH: float = _figures.COLUMN_WIDTH
    #: The priority policy of a cell (and a sweep) that names none, the default of
    #: :func:`schedlab.simulate`. It is only a name, resolved through the plugin
    #: registry when the cell runs, like any other (core imports no plugin for it).
    DEFAULT_POLICY: str = _sweep.DEFAULT_POLICY
    #: The backfilling strategy of a cell that names none, resolved the same way.
    DEFAULT_BACKFILL: str = _sweep.DEFAULT_BACKFILL
    #: Statistics kept per group for per-job metrics when the cell's metric options
    #: name no ``stats`` (with ``stats``: those statistics, then ``count``).
    KEPT_STATS: tuple[str, ...] = _sweep.KEPT_STATS
    #: Most cells of a sweep or experiment: a larger one (seeds, or an experiment's
    #: ``--workloads``) is refused before any cell is built.
    MAX_CELLS: int = _config.MAX_CELLS
    #: Columns of a sweep's tidy table (:func:`run_sweep`, :func:`write_table`), in
    #: order.
    ROW_FIELDS: tuple[str, ...] = _sweep.ROW_FIELDS
