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

_LAZY: dict[str, str] = {
    # functions
    "read": "schedlab.api:read",
    "write": "schedlab.api:write",
    "plugins": "schedlab.api:plugins",
    "simulate": "schedlab.sim.api:simulate",
    "compute_metrics": "schedlab.measure:compute_metrics",
    # what simulate and compute_metrics return; the job table policies receive
    "Result": "schedlab.sim.result:Result",
    "MetricsReport": "schedlab.measure:MetricsReport",
    "JobTable": "schedlab.sim.protocols:JobTable",
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
    "list_items": "schedlab.plugin_types:list_items",
    "ReaderSpec": "schedlab.plugin_types:ReaderSpec",
    "WriterSpec": "schedlab.plugin_types:WriterSpec",
    "PolicySpec": "schedlab.plugin_types:PolicySpec",
    "AllocationSpec": "schedlab.plugin_types:AllocationSpec",
    "BackfillSpec": "schedlab.plugin_types:BackfillSpec",
    "EstimatorSpec": "schedlab.plugin_types:EstimatorSpec",
    "MetricSpec": "schedlab.plugin_types:MetricSpec",
    "StatisticSpec": "schedlab.plugin_types:StatisticSpec",
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
    # stepping simulation
    "Simulation": "schedlab.sim.stepping:Simulation",
    "DecisionPoint": "schedlab.sim.stepping:DecisionPoint",
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
    if name == "hookimpl":  # pluggy and the plugin records: not for `schedlab --help`
        from .hookspecs import hookimpl

        globals()[name] = hookimpl
        return hookimpl
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
    # One "X as X" line per name of _LAZY: an explicit re-export, which mypy --strict
    # requires (tests/test_public_surface.py checks that the two lists agree).
    import pluggy

    __version__: str
    hookimpl: pluggy.HookimplMarker
    from .api import plugins as plugins
    from .api import read as read
    from .api import write as write
    from .compat import SchedlabDeprecationWarning as SchedlabDeprecationWarning
    from .errors import FormatError as FormatError
    from .errors import PluginError as PluginError
    from .errors import SchedlabError as SchedlabError
    from .errors import SimulationError as SimulationError
    from .errors import UsageError as UsageError
    from .errors import ValidationError as ValidationError
    from .io import open_binary as open_binary
    from .io import open_output as open_output
    from .losses import Loss as Loss
    from .losses import LossError as LossError
    from .losses import Losses as Losses
    from .losses import collect_losses as collect_losses
    from .losses import writer_losses as writer_losses
    from .measure import MetricsReport as MetricsReport
    from .measure import compute_metrics as compute_metrics
    from .model import SWF_FIELDS as SWF_FIELDS
    from .model import Dependency as Dependency
    from .model import Header as Header
    from .model import HeaderEntry as HeaderEntry
    from .model import Job as Job
    from .model import JobColumns as JobColumns
    from .model import Task as Task
    from .model import Workload as Workload
    from .plugin_types import AllocationSpec as AllocationSpec
    from .plugin_types import BackfillSpec as BackfillSpec
    from .plugin_types import CommandSpec as CommandSpec
    from .plugin_types import EstimatorSpec as EstimatorSpec
    from .plugin_types import GeneratorSpec as GeneratorSpec
    from .plugin_types import MetricSpec as MetricSpec
    from .plugin_types import OptionSpec as OptionSpec
    from .plugin_types import PolicySpec as PolicySpec
    from .plugin_types import ReaderSpec as ReaderSpec
    from .plugin_types import StatisticSpec as StatisticSpec
    from .plugin_types import WriterSpec as WriterSpec
    from .plugin_types import list_items as list_items
    from .registry import build_registry as build_registry
    from .registry import get_registry as get_registry
    from .sim.api import simulate as simulate
    from .sim.protocols import JobTable as JobTable
    from .sim.result import Result as Result
    from .sim.stepping import DecisionPoint as DecisionPoint
    from .sim.stepping import Simulation as Simulation
