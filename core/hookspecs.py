# Hook specifications have no body: pluggy reads their signatures, never calls them.
# mypy: disable-error-code="empty-body"
"""Hook specifications: the contract between schedlab and its plugins.

Every format, policy and metric, built in or third party, is a plugin: a module (or
object) registered under the entry-point group ``schedlab`` that implements some of
the hooks below with ``@schedlab.hookimpl``. Registration hooks are called once, when
the registry is first needed; each returns an iterable of typed records from
:mod:`schedlab.plugin_types` (an empty iterable is fine). The simulator and parsers
then call the components directly: no hook is ever called per job.

Example::

    from schedlab import hookimpl, ReaderSpec

    @hookimpl
    def schedlab_readers():
        return [ReaderSpec(name="mine", read=read_mine, suffixes=(".mine",))]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pluggy

from .plugin_types import (
    AllocationSpec,
    BackfillSpec,
    CommandSpec,
    EstimatorSpec,
    GeneratorSpec,
    MetricSpec,
    PolicySpec,
    ReaderSpec,
    StatisticSpec,
    WriterSpec,
)

PROJECT = "schedlab"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def schedlab_readers() -> Iterable[ReaderSpec]:
    """Return the trace readers this plugin provides.

    Called once when the registry is built. Each :class:`ReaderSpec` names the
    reader, its aliases, the file suffixes it claims (without compression suffixes,
    e.g. ``(".swf",)``), an optional ``sniff(head, name)`` content test, and
    ``read(source, **options) -> Workload``. Results of all plugins are collected;
    a third-party reader claiming a name or alias already taken disables its plugin
    (see "When a plugin misbehaves" in docs/plugins.md).
    """


@hookspec
def schedlab_writers() -> Iterable[WriterSpec]:
    """Return the trace writers this plugin provides.

    Called once when the registry is built. ``write(workload, path, **options)``
    writes to ``path``, which schedlab then renames into place (atomic output).
    """


@hookspec
def schedlab_policies() -> Iterable[PolicySpec]:
    """Return the priority policies this plugin provides.

    Called once when the registry is built. ``factory(**options)`` is called once
    per simulation and returns the policy object the simulator drives directly.
    """


@hookspec
def schedlab_backfills() -> Iterable[BackfillSpec]:
    """Return the backfilling strategies this plugin provides (``none``, ``easy`` ...).

    Called once when the registry is built; ``factory(**options)`` once per run.
    """


@hookspec
def schedlab_allocations() -> Iterable[AllocationSpec]:
    """Return the allocation policies this plugin provides (``first-fit``,
    ``best-fit`` ...): which nodes a starting job gets when the simulation runs on a
    platform (``--platform FILE``).

    Called once when the registry is built; ``factory(**options)`` once per run.
    """


@hookspec
def schedlab_estimators() -> Iterable[EstimatorSpec]:
    """Return the run-time estimators this plugin provides (``requested``, ``actual``).

    Called once when the registry is built; ``factory(**options)`` once per run.
    """


@hookspec
def schedlab_metrics() -> Iterable[MetricSpec]:
    """Return the metrics this plugin provides.

    Called once when the registry is built; ``compute`` is called once per metric
    evaluation with whole columns (vectorised), never per job.
    """


@hookspec
def schedlab_statistics() -> Iterable[StatisticSpec]:
    """Return the statistics of per-job metrics this plugin provides.

    Called once when the registry is built. ``compute(values)`` is called once per
    group and metric with that group's known values, sorted ascending (never per
    job). Built-in names (``mean``, ``median``, ``min``, ``max``, percentiles
    ``pNN``) and ``count`` / ``unknown`` cannot be taken.
    """


@hookspec
def schedlab_generators() -> Iterable[GeneratorSpec]:
    """Return the synthetic workload generators this plugin provides.

    A generator is used wherever a trace path is accepted, written
    ``NAME:key=value,...``; ``generate(**options) -> Workload`` must be
    deterministic for given options (a seed is an option).
    """


@hookspec
def schedlab_cli_commands() -> Iterable[CommandSpec]:
    """Return extra ``schedlab`` subcommands.

    Consulted only when the command line names a command that is not built in (and
    by ``schedlab plugins``), so ``schedlab --help`` stays fast. ``load()`` returns a
    :class:`click.Command`.
    """


@hookspec
def schedlab_converter_hooks(converter: Any) -> None:
    """Register cattrs structure/unstructure hooks on schedlab's one converter.

    Called once, after every plugin is registered and before the converter is
    first used. ``converter`` is a :class:`cattrs.Converter`; return nothing.
    """
