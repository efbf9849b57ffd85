"""Glue between :func:`schedlab.simulate` and the engine: resolve the components,
prepare the jobs, run, and package the :class:`~schedlab.sim.result.Result`."""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..errors import SimulationError, UsageError
from ..model import Workload
from ..platform import Platform, load_platform
from ..registry import Registry, get_registry
from .engine import Engine
from .machine import NodeMachine
from .output import build_result
from .prepare import prepare
from .protocols import KeyFunctionPolicy, as_backfill
from .requests import Requests
from .result import fallback_max_runtime


def _split_spec(value: str) -> tuple[str, dict[str, str]]:
    if ":" not in value:
        return value, {}
    from ..api import parse_spec

    return parse_spec(value)


def resolve_component(
    kind: str,
    value: Any,
    options: Mapping[str, Any] | None,
    registry: Registry | None,
) -> tuple[Any, str, dict[str, Any]]:
    """Build a policy / backfill / estimator from a name (``"psp"`` or
    ``"psp:window=5"``) and options, or accept a ready-made object.

    Returns ``(object, name, parsed options)``.
    """
    if isinstance(value, str):
        name, spec_options = _split_spec(value)
        registry = registry or get_registry()
        spec = registry.get(kind, name)
        for key, given in (options or {}).items():
            # an option both in the spelling (psp:window=5) and in the options
            # (-P window=6): which one was meant is anyone's guess
            if key in spec_options and str(spec_options[key]) != str(given).strip():
                raise UsageError(
                    f"{kind} {name}: option {key!r} given twice: {key}={spec_options[key]} in "
                    f"{value!r} and {key}={given} in the {kind} options"
                )
        parsed = spec.parse_options({**spec_options, **(options or {})}, kind)
        factory: Callable[..., Any] = getattr(spec, "factory")  # noqa: B009 (every simulator kind has one)
        return factory(**parsed), spec.name, parsed
    if options:
        raise UsageError(
            f"{kind} options were given with a {kind} object: configure the object instead"
        )
    if value is None:
        raise UsageError(f"no {kind} given")
    obj = value
    if kind == "policy" and not hasattr(value, "key"):
        if not callable(value):
            raise UsageError(
                f"{type(value).__name__} is not a policy: it needs a key(job, now) method"
            )
        obj = KeyFunctionPolicy(value)
    name = getattr(obj, "name", None) or type(obj).__name__.lower()
    return obj, str(name), {}


def _check_arguments(
    kill: object,
    dependencies: object,
    registry: object,
    platform: object,
    allocation: object,
    options: Mapping[str, object],
) -> None:
    """:class:`UsageError` for an argument of :func:`schedlab.simulate` of the wrong
    kind, named (a notebook's ``kill="no"`` would otherwise count as true, a
    ``platform=3`` fail deep inside with a ``TypeError``)."""
    if not isinstance(kill, (bool, np.bool_)):
        raise UsageError(f"kill must be True or False, got {kill!r}")
    if not isinstance(dependencies, (bool, np.bool_)):
        raise UsageError(f"dependencies must be True or False, got {dependencies!r}")
    if registry is not None and not isinstance(registry, Registry):
        raise UsageError(f"registry must be a schedlab Registry, got {type(registry).__name__}")
    if platform is not None and not isinstance(platform, (str, os.PathLike, Platform)):
        raise UsageError(
            f"platform must be a platform file's path or a Platform, got {type(platform).__name__}"
        )
    if allocation is not None and not (
        isinstance(allocation, str) or callable(getattr(allocation, "allocate", None))
    ):
        raise UsageError(
            "allocation must be an allocation policy's name or an object with an "
            f"allocate() method, got {type(allocation).__name__}"
        )
    for name, value in options.items():
        if value is not None and not isinstance(value, Mapping):
            raise UsageError(
                f"{name} must be a mapping of option names to values, got {type(value).__name__}"
            )


#: Largest machine size (``procs``, ``--procs``): 2**53 - 1, the largest whole number
#: a float64 holds exactly and the largest ``MaxProcs`` the SWF reader takes, so
#: that a schedule written with it reads back.
MAX_PROCS = 2**53 - 1


def machine_size(workload: Workload, procs: int | None) -> int:
    """``procs`` if given, else the header's MaxProcs, else MaxNodes; else an error."""
    if procs is not None:
        if (
            isinstance(procs, bool)
            or not isinstance(procs, (int, float, np.integer, np.floating))
            or not math.isfinite(procs)
            or int(procs) != procs
            or procs <= 0
        ):
            raise UsageError(f"the machine size must be a positive integer, got {procs!r}")
        if procs > MAX_PROCS:
            raise UsageError(
                f"the machine size must be at most {MAX_PROCS} (2**53 - 1) processors, "
                f"got {procs!r}"
            )
        return int(procs)
    size = workload.header.machine_size()
    if not size or size <= 0:
        raise SimulationError(
            "the machine size is unknown: the workload has no MaxProcs or MaxNodes "
            "header; give it with procs= (--procs N)"
        )
    return int(size)


class ProgressBar:
    """A rich progress bar on stderr, shown once a run has lasted ``delay`` seconds."""

    def __init__(self, total: int, delay: float = 1.0, label: str = "simulating") -> None:
        self.total = total
        self.delay = delay
        self.label = label
        self.started = time.perf_counter()
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            if time.perf_counter() - self.started < self.delay:
                return
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=total)
        self.bar.update(self.task, completed=done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def peak_memory_bytes() -> int:
    """The process's peak resident set size (0 where unavailable)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


def run_simulation(
    workload: Workload,
    *,
    policy: Any,
    backfill: Any,
    procs: int | None,
    estimator: Any,
    kill: bool,
    dependencies: bool,
    policy_options: Mapping[str, Any] | None,
    backfill_options: Mapping[str, Any] | None,
    estimator_options: Mapping[str, Any] | None,
    registry: Registry | None,
    progress: bool | Callable[[int, int], None] | None,
    inspect: Callable[[Engine], None] | None = None,
    platform: Any = None,
    allocation: Any = None,
    allocation_options: Mapping[str, Any] | None = None,
) -> Any:
    """The implementation of :func:`schedlab.simulate` (see its docstring)."""
    began = time.perf_counter()
    if not isinstance(workload, Workload):
        raise UsageError(f"simulate() needs a Workload, got {type(workload).__name__}")
    _check_arguments(
        kill=kill,
        dependencies=dependencies,
        registry=registry,
        platform=platform,
        allocation=allocation,
        options={
            "policy_options": policy_options,
            "backfill_options": backfill_options,
            "estimator_options": estimator_options,
            "allocation_options": allocation_options,
        },
    )
    nodes: NodeMachine | None = None
    allocation_name = ""
    allocation_opts: dict[str, Any] = {}
    if platform is None:
        if allocation is not None or allocation_options:
            raise UsageError("an allocation policy needs a platform (--platform FILE)")
        machine = machine_size(workload, procs)
    else:
        if procs is not None:
            raise UsageError("give the machine as a platform or as procs, not both")
        plat = platform if isinstance(platform, Platform) else load_platform(platform)
        allocator, allocation_name, allocation_opts = resolve_component(
            "allocation",
            "first-fit" if allocation is None else allocation,
            allocation_options,
            registry,
        )
        nodes = NodeMachine(plat, allocator, allocation_name)
        machine = nodes.total_cores
    policy_obj, policy_name, policy_opts = resolve_component(
        "policy", policy, policy_options, registry
    )
    backfill_obj, backfill_name, backfill_opts = resolve_component(
        "backfill", backfill, backfill_options, registry
    )
    try:
        strategy = as_backfill(backfill_obj, backfill_name)
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    if nodes is not None and not getattr(strategy, "supports_platform", False):
        for_platform = getattr(strategy, "for_platform", None)
        if for_platform is None:
            raise UsageError(
                f"backfill {backfill_name!r} does not run on a platform (a multi-resource "
                "machine) yet; use none, easy or conservative there"
            )
        strategy = _platform_strategy(for_platform(), backfill_name)
    estimator_obj, estimator_name, estimator_opts = resolve_component(
        "estimator", estimator, estimator_options, registry
    )

    requests = None
    if nodes is not None:
        on = nodes

        def requests(cols: Any, size: Any) -> Requests:
            return Requests(workload, cols, on, size)

    prepared, columns = prepare(workload, machine, kill, dependencies, requests)
    table = prepared.table
    reporter: Callable[[int, int], None] | None = None
    bar: ProgressBar | None = None
    if callable(progress):
        reporter = progress
    elif progress or (progress is None and _stderr_is_tty()):
        bar = ProgressBar(len(table))
        reporter = bar
    # (the rule estimate_notes states: a positive MaxRuntime, else the run time)
    max_runtime = fallback_max_runtime(workload.header)

    def fallback(j: int) -> float:
        if max_runtime is not None:
            return float(max_runtime)
        return run_time[j]

    def fallbacks() -> np.ndarray:
        """``fallback`` of every job at once."""
        if max_runtime is not None:
            return np.full(len(table), float(max_runtime))
        if prepared.run_time_array is not None:
            return prepared.run_time_array.copy()
        return np.array(run_time, dtype=np.float64)

    # The engine (its state) copies what decides the schedule before the policy
    # and the estimator see the table: it checks the table against them after
    # ``bind`` and at the end of the run.
    engine = Engine(
        prepared,
        policy_obj,
        strategy,
        estimator_obj,
        strategy_name=backfill_name,
        # registered names for errors (an object passed in is named by its class)
        policy_name=policy_name if isinstance(policy, str) else "",
        estimator_name=estimator_name if isinstance(estimator, str) else "",
        estimate_fallback=fallback,
        estimate_fallbacks=fallbacks,
        progress=reporter,
        machine=nodes,
    )
    # The engine's run times (the fallbacks above read them when called).
    run_time = engine.state._run_time
    bind = getattr(policy_obj, "bind", None)
    if bind is not None:
        bind(table)
    bind = getattr(estimator_obj, "bind", None)
    if bind is not None:
        bind(table)
    engine.check_table("in bind")

    if inspect is not None:
        inspect(engine)  # tests: look inside the engine (reservation log ...)
    engine.setup()
    loop_began = time.perf_counter()
    loop_cpu = time.process_time()
    try:
        engine.run()
    finally:
        if bar is not None:
            bar.close()
    loop_time = time.perf_counter() - loop_began
    loop_cpu = time.process_time() - loop_cpu
    return build_result(
        workload,
        columns,
        prepared,
        engine,
        procs=machine,
        names=(policy_name, backfill_name, estimator_name),
        options={
            "policy": policy_opts,
            "backfill": backfill_opts,
            "estimator": estimator_opts,
            "simulation": {"kill": kill, "dependencies": dependencies},
            **(
                {"allocation": {"name": allocation_name, **allocation_opts}}
                if nodes is not None
                else {}
            ),
        },
        loop_time=loop_time,
        loop_cpu=loop_cpu,
        registry=registry,
        began=began,
        peak_memory=peak_memory_bytes(),
    )


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


__all__ = ["machine_size", "resolve_component", "run_simulation"]


def _platform_strategy(strategy: Any, name: str) -> Any:
    """What a strategy's ``for_platform()`` returned, if it is a strategy that runs
    on a platform (an instance with ``bind`` and ``schedule`` declaring
    ``supports_platform = True``), else a one-line error naming ``name``."""
    if (
        isinstance(strategy, type)
        or not callable(getattr(strategy, "bind", None))
        or not callable(getattr(strategy, "schedule", None))
        or getattr(strategy, "supports_platform", False) is not True
    ):
        shown = strategy.__name__ if isinstance(strategy, type) else type(strategy).__name__
        kind = "the class" if isinstance(strategy, type) else "a"
        raise SimulationError(
            f"backfill {name!r}: for_platform() returned {kind} {shown}, not a strategy "
            "that runs on a platform (an object with bind and schedule, declaring "
            "supports_platform = True)"
        )
    return strategy
