"""What :func:`schedlab.simulate` returns."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ..model import Workload

#: Exclusion reasons, in the order they are checked (a job gets the first that applies).
EXCLUSION_REASONS: tuple[str, ...] = (
    "no_submit_time",  # submit time unknown or infinite
    "no_size",  # requested and allocated processors unknown or 0
    "larger_than_machine",  # more processors than the machine has
    "no_run_time",  # run time unknown, negative or infinite
)

#: SWF status given to jobs killed at their requested time (0 = failed).
KILLED_STATUS = 0


@attrs.define(slots=True, eq=False)
class Result:
    """The outcome of one simulation.

    ``workload``
        The simulated jobs (excluded jobs are not in it), in input order, as a
        :class:`~schedlab.model.Workload` every writer and metric accepts: every field
        and job extra of the input is kept, except ``wait_time`` (simulated start -
        submit), ``run_time`` (the simulated run: the trace run time, or the
        requested time for a killed job), ``allocated_processors`` (the processors
        the simulator allocated), ``status`` (:data:`KILLED_STATUS` = 0, failed, for
        killed jobs) and, with ``dependencies=True`` only, ``submit_time`` (the
        time the dependent job was released; see ``original_submit``). The header is
        a copy of the input's with ``MaxProcs`` set to the machine size and a
        ``Note`` naming the policy.
    ``procs``, ``policy``, ``backfill``, ``estimator``
        The machine size and the component names used (``options`` holds their
        parsed options).
    ``excluded``
        ``{reason: array of input row positions}`` of the jobs that could not run;
        reasons are :data:`EXCLUSION_REASONS`; every reason is present (maybe empty).
    ``stats``
        Run statistics in the spirit of Batsim's self-profiling: ``jobs_in``,
        ``jobs_simulated``, ``jobs_excluded``, ``excluded`` (counts by reason),
        ``killed``, ``overran_estimate``, ``estimate_fallbacks`` (jobs whose
        estimate was ``NaN``: see :func:`estimate_notes`), of them
        ``estimate_fallbacks_requested_known`` (jobs with a known requested time),
        ``estimates_raised`` (estimates below 1 ms raised to 1 ms) and of them
        ``estimates_raised_negative``, ``dependencies_honoured``,
        ``dependencies_ignored``, ``events`` (finishes + submissions processed),
        ``passes`` (scheduling passes), ``kernel`` and
        ``whole_run`` (how the strategy ran: see :mod:`schedlab.sim.whole_run`),
        ``wall_time_s`` and ``cpu_time_s`` (the simulation loop, without building
        the output: wall clock and the process's CPU time), ``total_time_s``,
        ``jobs_per_second``, ``peak_memory_bytes`` (the process's peak resident set
        size so far: the high-water mark of the whole process, not of this run only),
        ``makespan``.
    ``start``, ``end``, ``estimate``, ``killed``
        Per simulated job, aligned with ``workload`` rows: simulated start and end
        times, the scheduler's estimate, and whether the job was killed.
    ``estimate_fell_back``
        Per simulated job: whether its estimate fell back (the estimator had no
        value, and the simulator used the header's ``MaxRuntime`` or the run time:
        see :func:`estimate_notes`); the prediction metrics leave these jobs'
        predictions unknown. ``None`` when not known (a result built by hand).
    ``rows``
        Input row position of each simulated job.
    ``original_submit``
        The trace submit time of each simulated job.
    ``allocations``
        With a platform: the nodes each simulated job ran on (names such as
        ``thin[3]``, see :class:`~schedlab.sim.NodeMachine`), aligned with
        ``workload`` rows; ``None`` on a single pool. The output workload carries
        them too: the extra ``schedlab.nodes`` (space-separated) and ``Job.hosts``
        (set on job objects; a columnar workload's jobs get it from the extra when
        turned into :class:`~schedlab.model.Job` objects).
    """

    #: The simulated schedule: the jobs that ran, in input order, with simulated
    #: wait, run and allocated processors (see above).
    workload: Workload
    #: The machine size simulated, in processors.
    procs: int
    #: The name of the queue policy used (``fcfs``, ``sjf`` ...).
    policy: str
    #: The name of the backfilling strategy used (``none``, ``easy`` ...).
    backfill: str
    #: The name of the run-time estimator used (``requested`` ...).
    estimator: str
    #: ``{reason: input row positions}`` of the jobs that could not run, for
    #: every reason of :data:`EXCLUSION_REASONS` (maybe empty).
    excluded: dict[str, np.ndarray]
    #: Run statistics (``jobs_simulated``, ``killed``, ``wall_time_s`` ...; see
    #: above).
    stats: dict[str, Any]
    #: Simulated start time of each simulated job, in seconds from the workload
    #: origin (aligned with ``workload`` rows).
    start: np.ndarray
    #: Simulated end time of each simulated job, in seconds from the workload
    #: origin.
    end: np.ndarray
    #: The scheduler's run-time estimate of each simulated job, in seconds.
    estimate: np.ndarray
    #: Whether each simulated job was killed at its requested time (booleans).
    killed: np.ndarray
    #: Input row position of each simulated job.
    rows: np.ndarray
    #: The trace's submit time of each simulated job, in seconds (differs from
    #: the schedule's when a dependency delayed the job).
    original_submit: np.ndarray
    #: The parsed options by part: ``policy``, ``backfill``, ``estimator`` (each
    #: component's), ``simulation`` (``kill``, ``dependencies``) ...
    options: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    #: With a platform: the names of the nodes each simulated job ran on
    #: (aligned with ``workload`` rows); ``None`` on a single pool.
    allocations: list[tuple[str, ...]] | None = None
    #: Whether each simulated job's estimate fell back, the estimator having no
    #: value for it (booleans, aligned with ``workload`` rows; they add up to
    #: ``stats["estimate_fallbacks"]``); ``None`` when not known.
    estimate_fell_back: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.start)

    @property
    def columns(self) -> Any:
        """The simulated schedule as :class:`~schedlab.model.JobColumns`."""
        return self.workload.to_arrays()

    def excluded_job_numbers(self) -> dict[str, list[int]]:
        """``{reason: [job numbers]}`` of the excluded jobs (row position + 1 when the
        job number is unknown)."""
        return dict(self.meta.get("excluded_job_numbers", {}))

    @property
    def meta(self) -> dict[str, Any]:
        """The output workload's ``meta`` dict (holds the simulation settings)."""
        return self.workload.meta

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: settings, statistics and excluded job numbers
        (the schedule itself is in :attr:`workload`)."""
        return {
            "procs": self.procs,
            "policy": self.policy,
            "backfill": self.backfill,
            "estimator": self.estimator,
            "options": _jsonable(self.options),
            "stats": _jsonable(self.stats),
            "excluded": self.excluded_job_numbers(),
        }

    def to_pandas(self, extras: Any = False) -> Any:
        """The schedule as a :class:`pandas.DataFrame` (needs the ``pandas`` extra): the
        workload's SWF columns, then ``start_time``, ``end_time``, ``estimate``,
        ``killed``, ``input_row``, ``original_submit`` and ``estimate_fell_back``
        (:attr:`estimate_fell_back` as a nullable ``boolean`` column: all ``<NA>``,
        unknown, when the result does not know it).

        ``extras``: per-job extras to add as columns, as for ``Workload.to_pandas``:
        ``True`` every key, or a list of keys. Besides the input's extras (its job
        ids), a platform run has ``schedlab.partition`` (partition name),
        ``schedlab.nodes`` (node names, space-separated) and ``schedlab.held``."""
        from ..frames import result_frame

        return result_frame(self, extras)

    def to_arrow(self) -> Any:
        """The table of :meth:`to_pandas` as a :class:`pyarrow.Table` (extra ``parquet``)."""
        from ..frames import result_table

        return result_table(self)

    def _repr_html_(self) -> str:
        from ..frames import result_html

        return result_html(self)

    def __repr__(self) -> str:
        return (
            f"<Result {self.policy}+{self.backfill} on {self.procs} procs: "
            f"{len(self)} jobs simulated, {self.stats.get('jobs_excluded', 0)} excluded>"
        )


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, float) and value != value:
        return None
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def estimate_notes(result: Any) -> list[str]:
    """What the reader of a simulation's numbers should know about its estimates
    (``schedlab simulate``, ``compare`` and ``sweep`` print it; empty when there
    is nothing to say):

    * estimates that fell back: the estimator had no value (``NaN``) for some
      jobs, so the scheduler used the header's ``MaxRuntime`` (when positive) or,
      without one, the jobs' actual run times (perfect estimates for them); one
      note for the jobs whose requested time is unknown, one for those whose
      requested time is known (the estimator gave no estimate for a reason of its
      own), each naming the fallback used;
    * estimates below 1 ms (zero and negative ones included, after any fallback)
      raised to 1 ms, the shortest estimate the scheduler uses.
    """
    stats = result.stats
    notes: list[str] = []
    jobs = stats.get("jobs_simulated", 0)
    fallbacks = int(stats.get("estimate_fallbacks", 0) or 0)
    if fallbacks:
        known = min(int(stats.get("estimate_fallbacks_requested_known", 0) or 0), fallbacks)
        header = getattr(result.workload, "header", None)
        max_runtime = fallback_max_runtime(header)
        used = (
            f"the header's MaxRuntime ({max_runtime})"
            if max_runtime is not None
            else "their actual run times (perfect estimates for these jobs)"
        )
        if fallbacks > known:
            notes.append(
                f"estimates fell back for {fallbacks - known:,} of {jobs:,} jobs: "
                f"the {result.estimator!r} estimator had no value for them (requested time "
                f"unknown), so the scheduler used {used}"
            )
        if known:
            notes.append(
                f"estimates fell back for {known:,} of {jobs:,} jobs: "
                f"the {result.estimator!r} estimator gave no estimate (NaN) for them, "
                f"though their requested time is known, so the scheduler used {used}"
            )
    raised = int(stats.get("estimates_raised", 0) or 0)
    if raised:
        negative = int(stats.get("estimates_raised_negative", 0) or 0)
        notes.append(
            f"{raised:,} of {jobs:,} estimates were below 1 ms ({negative:,} negative) and "
            "were raised to 1 ms, the shortest estimate the scheduler uses"
        )
    return notes


def skipped_notes(result: Any) -> list[str]:
    """The note of the records the lenient read of the simulated workload skipped
    (the output workload's ``meta["skipped"]``, copied from the input's): they are
    in no job of the run, so in none of its numbers. ``schedlab simulate``,
    ``compare``, ``report --simulate``, ``sweep`` and the experiments print it;
    empty when nothing was skipped."""
    meta = getattr(getattr(result, "workload", None), "meta", None)
    if not isinstance(meta, dict):
        return []
    try:
        skipped = int(meta.get("skipped") or 0)
    except (TypeError, ValueError):
        return []
    if skipped <= 0:
        return []
    from ..measure import skipped_note

    return [skipped_note(skipped, "the simulation or its metrics")]


def platform_notes(result: Any) -> list[str]:
    """The counts of ``stats["platform"]`` a reader must not miss (docs/platform.md,
    Output; ``schedlab simulate``, ``compare`` and ``sweep`` print them), one note
    each when non-zero: jobs that matched no partition of a
    platform with several and ran in its first one (``default_partition``), and
    jobs on shared nodes that declare memory that asked none, simulated holding
    none (``memory_unknown``; not counted on exclusive nodes, where they hold their
    nodes' memory, nor where memory is not simulated)."""
    stats = result.stats
    machine = stats.get("platform") or {}
    jobs = int(stats.get("jobs_simulated", 0) or 0)
    notes: list[str] = []
    defaulted = int(machine.get("default_partition", 0) or 0)
    if defaulted:
        # utilization_by_partition follows the platform's partition order
        first = next(iter(machine.get("utilization_by_partition") or {}), None)
        named = f" {first!r}" if first is not None else ""
        notes.append(
            f"{defaulted:,} of {jobs:,} jobs matched no partition of the platform: "
            f"placed in its first partition{named} (default_partition)"
        )
    unknown = int(machine.get("memory_unknown", 0) or 0)
    if unknown:
        notes.append(
            f"{unknown:,} of {jobs:,} jobs on shared nodes asked no memory: simulated "
            "holding none (memory_unknown)"
        )
    return notes


def fallback_max_runtime(header: Any) -> int | None:
    """The header's ``MaxRuntime`` when the engine falls back to it (a positive
    value), else ``None`` (the engine falls back to the jobs' run times)."""
    max_runtime = getattr(header, "max_runtime", None) if header is not None else None
    if max_runtime is not None and max_runtime > 0:
        return int(max_runtime)
    return None
