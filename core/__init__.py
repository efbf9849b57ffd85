"""schedlab: batch-scheduling research on real HPC workload traces.

Read any trace, convert it without loss, replay it through scheduling policies and
measure the outcome::

    import schedlab
    workload = schedlab.read("KTH-SP2-1996-2.1-cln.swf.gz")
    result = schedlab.simulate(workload, policy="psp", backfill="easy")
    print(schedlab.compute_metrics(result, by="user"))
    schedlab.write(result.workload, "schedule.swf")

Formats, policies and metrics are plugins (entry-point group ``schedlab``); write
your own with :data:`hookimpl` and the records of :mod:`schedlab.plugin_types`.
The names below are imported lazily, so ``import schedlab`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .hookspecs import hookimpl

_LAZY: dict[str, str] = {
    # functions
    "read": "schedlab.api:read",
    "write": "schedlab.api:write",
    "plugins": "schedlab.api:plugins",
    "simulate": "schedlab.sim.api:simulate",
    "compute_metrics": "schedlab.measure:compute_metrics",
    "open_output": "schedlab.io:open_output",
    "open_binary": "schedlab.io:open_binary",
    "get_registry": "schedlab.registry:get_registry",
    # loss reports of writers
    "Loss": "schedlab.losses:Loss",
    "Losses": "schedlab.losses:Losses",
    "LossError": "schedlab.losses:LossError",
    "collect_losses": "schedlab.losses:collect_losses",
    "writer_losses": "schedlab.losses:writer_losses",
    "build_registry": "schedlab.registry:build_registry",
    # model
    "Job": "schedlab.model:Job",
    "Task": "schedlab.model:Task",
    "Dependency": "schedlab.model:Dependency",
    "Header": "schedlab.model:Header",
    "HeaderEntry": "schedlab.model:HeaderEntry",
    "Workload": "schedlab.model:Workload",
    "JobColumns": "schedlab.model:JobColumns",
    "SWF_FIELDS": "schedlab.model:SWF_FIELDS",
    # plugin records
    "OptionSpec": "schedlab.plugin_types:OptionSpec",
    "ReaderSpec": "schedlab.plugin_types:ReaderSpec",
    "WriterSpec": "schedlab.plugin_types:WriterSpec",
    "PolicySpec": "schedlab.plugin_types:PolicySpec",
    "BackfillSpec": "schedlab.plugin_types:BackfillSpec",
    "EstimatorSpec": "schedlab.plugin_types:EstimatorSpec",
    "MetricSpec": "schedlab.plugin_types:MetricSpec",
    "GeneratorSpec": "schedlab.plugin_types:GeneratorSpec",
    "CommandSpec": "schedlab.plugin_types:CommandSpec",
    # errors
    "SchedlabError": "schedlab.errors:SchedlabError",
    "FormatError": "schedlab.errors:FormatError",
    "ValidationError": "schedlab.errors:ValidationError",
    "UsageError": "schedlab.errors:UsageError",
    "PluginError": "schedlab.errors:PluginError",
    "SimulationError": "schedlab.errors:SimulationError",
    # warnings
    "SchedlabDeprecationWarning": "schedlab.compat:SchedlabDeprecationWarning",
}

__all__ = ["__version__", "hookimpl", *sorted(_LAZY)]


def _installed_version() -> str:
    """The installed distribution's version: ``pyproject.toml`` is its one source."""
    from importlib import metadata

    try:
        return metadata.version("schedlab")
    except metadata.PackageNotFoundError:  # pragma: no cover - an uninstalled source tree
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":  # read from the installed metadata on first use
        globals()[name] = version = _installed_version()
        return version
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'schedlab' has no attribute {name!r}")
    module_name, _, attr = target.partition(":")
    value = getattr(importlib.import_module(module_name), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    __version__: str
    from .api import plugins, read, write
    from .compat import SchedlabDeprecationWarning
    from .errors import (
        FormatError,
        PluginError,
        SchedlabError,
        SimulationError,
        UsageError,
        ValidationError,
    )
    from .io import open_binary, open_output
    from .losses import Loss, LossError, Losses, collect_losses, writer_losses
    from .measure import compute_metrics
    from .model import (
        SWF_FIELDS,
        Dependency,
        Header,
        HeaderEntry,
        Job,
        JobColumns,
        Task,
        Workload,
    )
    from .plugin_types import (
        BackfillSpec,
        CommandSpec,
        EstimatorSpec,
        GeneratorSpec,
        MetricSpec,
        OptionSpec,
        PolicySpec,
        ReaderSpec,
        WriterSpec,
    )
    from .registry import build_registry, get_registry
    from .sim.api import simulate
