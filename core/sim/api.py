"""``schedlab.simulate``: replay a workload through a scheduling policy."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..model import Workload
from ..registry import Registry
from .result import Result


def simulate(
    workload: Workload,
    policy: Any = "fcfs",
    backfill: Any = "easy",
    procs: int | None = None,
    estimator: Any = "requested",
    kill: bool = True,
    dependencies: bool = False,
    policy_options: Mapping[str, Any] | None = None,
    backfill_options: Mapping[str, Any] | None = None,
    estimator_options: Mapping[str, Any] | None = None,
    registry: Registry | None = None,
    progress: bool | Callable[[int, int], None] | None = None,
    platform: Any = None,
    allocation: Any = None,
    allocation_options: Mapping[str, Any] | None = None,
) -> Result:
    """Simulate ``workload`` on a machine of ``procs`` processors and return a
    :class:`~schedlab.sim.result.Result`.

    ``policy``
        A priority policy name (``fcfs``, ``sjf``, ``ljf``, ``smallest``,
        ``largest``, ``wfp3``, ``unicef``, ``psp``, ``multifactor`` or any plugin's),
        an object implementing :class:`~schedlab.sim.protocols.Policy` (no entry
        point needed), or a plain function ``key(job, now)`` / ``key(job, now,
        table)`` (lower keys run first; re-evaluated at every pass).
    ``backfill``
        ``none``, ``easy``, ``conservative``, ``depth`` (option ``depth=k|all``), a
        plugin's name, or an object with a ``reservation_depth`` attribute.
    ``procs``
        Machine size; default the header's ``MaxProcs``, else ``MaxNodes``; a
        :class:`~schedlab.errors.SimulationError` if none is known.
    ``estimator``
        What the scheduler believes a job will run: ``requested`` (default:
        requested time; when unknown, the header's ``MaxRuntime``, else the run time)
        or ``actual`` (perfect estimates), a plugin's name, or an object implementing
        :class:`~schedlab.sim.protocols.Estimator`.
    ``kill``
        True (default): a job whose trace run time exceeds its requested time is
        killed at the requested time (status 0). False: it runs to its end and the
        scheduler treats it as ending "now" until it does.
    ``dependencies``
        Honour SWF preceding-job (field 17) and think-time (field 18) dependencies:
        a dependent job is submitted ``think_time`` seconds after its preceding job
        ends in the simulation.
    ``policy_options``, ``backfill_options``, ``estimator_options``
        Options of named components, validated against their ``OptionSpec``s (a
        one-line :class:`~schedlab.errors.UsageError` for unknown names or bad values).
    ``platform``
        A multi-resource machine: a platform file's path or a
        :class:`~schedlab.platform.Platform` (docs/platform.md). Jobs then ask for
        cores, memory, GPUs and consumables on nodes, in partitions; ``procs`` must
        not be given. Without it (default) the machine is one pool of ``procs``
        processors, exactly as before.
    ``allocation``, ``allocation_options``
        With a platform: the allocation policy choosing a starting job's nodes
        (``first-fit``, the default, ``best-fit``, ``spread``, ``contiguous``, a
        plugin's name, or an object with ``allocate(view, demand)``).
    ``registry``
        The plugin registry to look names up in (default: the process-wide one).
    ``progress``
        None (default): a progress bar on stderr when it is a terminal and the run
        lasts more than a second; False: never; True: always (after one second);
        or a callable ``progress(jobs_done, jobs_total)`` called now and then.

    Same-instant ordering: at one time, every finish is processed first (in job
    order), then every submission (in job order), then one scheduling pass. The run
    is deterministic: the same input and options give the same schedule.

    >>> import schedlab
    >>> result = schedlab.simulate(workload, policy="psp", backfill="easy")  # doctest: +SKIP
    >>> result.workload.to_arrays()["wait_time"].mean()                       # doctest: +SKIP
    """
    from .runner import run_simulation

    return run_simulation(
        workload,
        policy=policy,
        backfill=backfill,
        procs=procs,
        estimator=estimator,
        kill=kill,
        dependencies=dependencies,
        policy_options=policy_options,
        backfill_options=backfill_options,
        estimator_options=estimator_options,
        registry=registry,
        progress=progress,
        platform=platform,
        allocation=allocation,
        allocation_options=allocation_options,
    )


__all__ = ["Result", "simulate"]
