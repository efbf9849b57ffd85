"""Package an engine run as a :class:`~schedlab.sim.result.Result` whose workload
every writer and metric accepts."""

from __future__ import annotations

import re
import time
from typing import Any

import attrs
import numpy as np

from .. import __version__
from ..model import HELD_EXTRA, NODES_EXTRA, PARTITION_EXTRA, HeaderEntry, JobColumns, Workload
from . import TIMING_STATS  # defined (and documented) in the package
from .allocation_text import held_texts, node_lists
from .prepare import Prepared
from .result import KILLED_STATUS, Result
from .usage import machine_usage


def _number(value: float) -> int | float | None:
    if value != value:
        return None
    return int(value) if float(value).is_integer() else float(value)


#: The start of the header ``Note`` of a written schedule that counts the jobs the
#: simulation excluded (see :func:`excluded_note`).
EXCLUDED_NOTE = "schedlab excluded "
#: Prefix of an input schedule's own simulation notes in a schedule simulated
#: from it (``Input schedule: Simulated by schedlab ...``).
INPUT_NOTE = "Input schedule: "
_EXCLUDED_RE = re.compile(
    r"schedlab excluded ([0-9]+) of ([0-9]+) jobs? from the simulation \(([^)]*)\)"
)


def _option_text(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _same(a: Any, b: Any) -> bool:
    try:
        if a != a and b != b:  # both NaN
            return True
        return bool(a == b)
    except Exception:  # values without a plain comparison count as given
        return False


def given_options(
    kind: str, name: str, parsed: dict[str, Any], registry: Any = None
) -> dict[str, Any]:
    """The options of component ``name`` of ``kind`` that differ from its defaults
    (the ones a run gave; an option given at its default value changes nothing),
    looked up in ``registry`` (default: the process-wide one). Empty when the
    component is not in it (a ready-made object)."""
    if not parsed:
        return {}
    from ..registry import get_registry

    try:
        spec = (registry or get_registry()).get(kind, name)
    except Exception:  # an object, or a component of another registry
        return {}
    defaults = {o.name: o.default for o in spec.options}
    return {
        key: value
        for key, value in parsed.items()
        if key not in defaults or not _same(value, defaults[key])
    }


def component_text(kind: str, name: str, parsed: dict[str, Any], registry: Any = None) -> str:
    """``name`` or ``name:key=value,...`` (the options given, as on the command line;
    ``registry``: where the component's defaults are looked up)."""
    given = given_options(kind, name, parsed, registry)
    if not given:
        return name
    return f"{name}:" + ",".join(f"{k}={_option_text(v)}" for k, v in given.items())


def schedule_header(
    header: Any,
    names: tuple[str, str, str],
    options: dict[str, dict[str, Any]],
    *,
    procs: int,
    jobs_in: int,
    excluded: dict[str, int],
    platform_nodes: int | None = None,
    registry: Any = None,
    counts: tuple[int, int] | None = None,
    last_end: float | None = None,
) -> Any:
    """The header of a simulated schedule: the input's, with ``MaxProcs`` the
    simulated machine's size and a ``Note`` naming the run (policy, backfilling and
    estimator, each with the options given: ``policy=psp:window=5``). Also, each
    with a ``Note`` saying why:

    * ``MaxJobs`` / ``MaxRecords`` count the schedule's jobs and records when they
      did not (jobs excluded from the simulation are not in the schedule; the Note
      counts them by reason, see :func:`excluded_note`); ``counts`` is the
      schedule's ``(jobs, records)`` as the SWF reader counts them
      (:func:`_schedule_counts`; default: ``jobs_in`` less the excluded, for
      both); ``-1`` (unknown) stays;
    * ``EndTime`` of the log is dropped (it is the log's last termination, not the
      schedule's), with a ``Note`` giving ``last_end``, the schedule's last
      termination in seconds from the log's start;
    * ``MaxNodes`` of the log is dropped when the simulated machine is not the
      log's (``procs`` other than the log's ``MaxProcs``), or set to the
      platform's nodes on a platform.
    """
    policy, backfill, estimator = names
    out = header.copy()
    # An input that is itself a simulated schedule: its run's notes describe that
    # run, not this one (its exclusions would be read as this run's), so they are
    # kept as the input's history.
    for i, entry in enumerate(out.entries):
        if entry.label == "Note" and (
            entry.value.startswith(("Simulated by schedlab ", EXCLUDED_NOTE))
        ):
            out.entries[i] = HeaderEntry("Note", f"{INPUT_NOTE}{entry.value}", entry.continuation)
    log_size = header.machine_size()
    max_nodes = header.max_nodes
    out.set("MaxProcs", procs)
    run = (
        f"policy={component_text('policy', policy, options.get('policy', {}), registry)} "
        f"backfill={component_text('backfill', backfill, options.get('backfill', {}), registry)} "
        f"estimator="
        f"{component_text('estimator', estimator, options.get('estimator', {}), registry)} "
    )
    allocation = dict(options.get("allocation") or {})
    allocator = str(allocation.pop("name", "") or "")
    if allocator:
        text = component_text("allocation", allocator, allocation, registry)
        if text != "first-fit":  # the default allocation is not named (as before)
            run += f"allocation={text} "
    sim = options["simulation"]
    out.add(
        "Note",
        f"Simulated by schedlab {__version__}: {run}procs={procs} "
        f"kill={'yes' if sim['kill'] else 'no'} "
        f"dependencies={'yes' if sim['dependencies'] else 'no'}",
    )
    left_out = sum(excluded.values())
    written = jobs_in - left_out
    jobs_written, records_written = (written, written) if counts is None else counts
    recounted = []
    for label, value, counted in (
        ("MaxJobs", header.max_jobs, jobs_written),
        ("MaxRecords", header.max_records, records_written),
    ):
        if value is not None and value != -1 and value != counted:  # -1: unknown
            out.set(label, counted)
            recounted.append(f"{label}: {value}")
    if left_out:
        reasons = ", ".join(f"{reason}={n}" for reason, n in excluded.items() if n)
        note = (
            f"{EXCLUDED_NOTE}{left_out} of {jobs_in} job{'s' if jobs_in != 1 else ''} "
            f"from the simulation ({reasons}): they are not in this schedule"
        )
        if recounted:
            note += f"; the input's header said {', '.join(recounted)}"
        out.add("Note", note)
    elif recounted:
        out.add(
            "Note",
            f"MaxJobs and MaxRecords count this schedule's {jobs_written} jobs and "
            f"{records_written} records; the input's header said {', '.join(recounted)}",
        )
    end_text = header.end_time
    if end_text is not None:
        out.remove("EndTime")
        note = f"EndTime: {end_text} of the log dropped: it is not this schedule's end"
        if last_end is not None and last_end == last_end:
            note += f" (its last job ends {_number(last_end)} s after the log's start"
            start = header.unix_start_time
            if start is not None and start != -1:
                note += f", {_utc(start + last_end)}"
            note += ")"
        out.add("Note", note)
    if max_nodes is not None and max_nodes >= 1:
        if platform_nodes is not None and platform_nodes != max_nodes:
            out.set("MaxNodes", platform_nodes)
            out.add(
                "Note",
                f"MaxNodes is the platform's {platform_nodes} nodes (the log's machine "
                f"had MaxNodes: {max_nodes})",
            )
        elif platform_nodes is None and log_size is not None and procs != log_size:
            out.remove("MaxNodes")
            out.add(
                "Note",
                f"MaxNodes: {max_nodes} of the log dropped: the schedule was simulated on "
                f"{procs} processors (procs={procs}), not the log's machine of {log_size}",
            )
    return out


def _utc(epoch: float) -> str:
    """``epoch`` seconds as an ISO date in UTC (the seconds as given when out of
    the datetime range)."""
    import datetime as dt

    try:
        when = dt.datetime.fromtimestamp(epoch, dt.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return f"epoch {epoch}"
    return when.isoformat()


_PARTIAL = (2.0, 3.0, 4.0)


def _submit_order(submit: np.ndarray) -> np.ndarray:
    """The order in which a schedule is written: by submit time, ties (and a
    record with an unknown submit time, which stays after the record before it)
    in input order (a stable sort)."""
    values = np.asarray(submit, dtype=np.float64)
    if len(values) == 0:
        return np.arange(0)
    known = ~np.isnan(values)
    # An unknown submit time takes the one before it (-inf at the start).
    last = np.maximum.accumulate(np.where(known, np.arange(len(values)), -1))
    key = np.where(last >= 0, values[np.maximum(last, 0)], -np.inf)
    return np.argsort(key, kind="stable")


def _schedule_counts(
    job_number: np.ndarray, status: np.ndarray, extras: Any = None
) -> tuple[int, int]:
    """``(jobs, records)`` of a schedule written in this row order, as the SWF
    reader counts them: every row and every checkpoint/swap record of
    ``extras[i]["swf_parts"]`` is a record; a job is a row, except that a run of
    partial records (status 2, 3, 4) of one job number counts once."""
    number = np.asarray(job_number, dtype=np.float64)
    partial = np.isin(np.asarray(status, dtype=np.float64), _PARTIAL)
    same_prev = np.r_[False, number[1:] == number[:-1]] if len(number) else partial
    jobs = int(np.count_nonzero(~partial | ~same_prev))
    records = len(number)
    for extra in extras or ():
        if extra:
            records += len(extra.get("swf_parts") or ())
    return jobs, records


def _in_submit_order(workload: Workload) -> Workload:
    """``workload`` (a simulated schedule, :attr:`Result.workload`, in input order)
    with its jobs sorted by submit time as SWF requires (:func:`_submit_order`);
    the same object when they are already. ``schedlab simulate -o`` writes this:
    with dependencies, released submit times are not in input order."""
    if workload.has_job_objects():
        jobs = workload.jobs
        submit = np.array(
            [np.nan if j.submit_time is None else j.submit_time for j in jobs], dtype=np.float64
        )
        order = _submit_order(submit)
        if bool(np.all(order == np.arange(len(order)))):
            return workload
        out = Workload(workload.header, jobs=[jobs[i] for i in order.tolist()])
    else:
        columns = workload.to_arrays()
        order = _submit_order(columns["submit_time"])
        if bool(np.all(order == np.arange(len(order)))):
            return workload
        extras = columns.extras
        out = Workload(
            workload.header,
            columns=JobColumns(
                {name: values[order] for name, values in columns.data.items()},
                None if extras is None else [extras[i] for i in order.tolist()],
            ),
        )
    out.meta.update(workload.meta)
    return out


def excluded_note(header: Any) -> tuple[int, str] | None:
    """``(jobs, reasons)`` from the ``Note`` a simulated schedule's header carries
    when the simulation excluded jobs (``(1, "no_size=1")``); None without one."""
    if header is None:
        return None
    for note in header.get_all("Note"):
        match = _EXCLUDED_RE.match(note)
        if match:
            return int(match.group(1)), match.group(3)
    return None


def _skipped_records(meta: Any) -> int:
    """Records the lenient read of a workload skipped (its ``meta["skipped"]`` or
    ``meta["rejects"]``; 0 when none)."""
    if not isinstance(meta, dict) or not (meta.get("skipped") or meta.get("rejects")):
        return 0
    from ..validation import skipped_count

    return skipped_count(meta)


def build_result(
    workload: Workload,
    columns: JobColumns,
    prepared: Prepared,
    engine: Any,
    *,
    procs: int,
    names: tuple[str, str, str],
    options: dict[str, dict[str, Any]],
    loop_time: float,
    began: float,
    peak_memory: int,
    loop_cpu: float = float("nan"),
    registry: Any = None,
) -> Result:
    """Assemble the output workload (input order) and the run statistics
    (``registry``: the one the run's components came from)."""
    order = prepared.order
    rows = np.sort(order)
    position = np.searchsorted(rows, order)
    table = prepared.table

    def in_input_order(values: Any, dtype: Any = np.float64) -> np.ndarray:
        out = np.empty(len(order), dtype=dtype)
        out[position] = np.asarray(values, dtype=dtype)
        return out

    state = engine.state
    # After a whole run (no dependencies: nothing moved a submission) the table's
    # lists are still the prepared arrays' values: read the arrays.
    whole = bool(getattr(engine, "whole_run", False))
    submit_values: Any = prepared.original_submit if whole else table.submit
    run_values: Any = table.run_time
    size_values: Any = table.size
    if whole and prepared.run_time_array is not None:
        run_values = prepared.run_time_array
    if whole and prepared.size_array is not None:
        size_values = prepared.size_array
    start = in_input_order(state.column("start_time"))
    end = in_input_order(state.column("end_time"))
    estimate = in_input_order(state.column("estimate"))
    killed = in_input_order(prepared.killed, bool)
    # Which jobs' estimates fell back (the prediction metrics leave them unknown).
    marked = getattr(engine, "estimate_fell_back", None)
    fell_back = None if marked is None else in_input_order(marked, bool)
    submit = in_input_order(submit_values)
    original_submit = in_input_order(prepared.original_submit)
    run = in_input_order(run_values)
    size = in_input_order(size_values)
    wait = start - submit

    nodes = getattr(engine.state, "machine", None)
    allocations: list[tuple[str, ...]] | None = None
    placed: list[str] | None = None
    if nodes is not None:
        assert prepared.partition_of is not None
        n = len(order)
        by_index = node_lists(nodes.given, nodes.node_names, n)
        part_names = [p.name for p in nodes.partitions]
        from .usage import unbounded_nodes

        # (memory of a group declaring none: left out, never the sentinel)
        amounts = held_texts(nodes.given, nodes.dims, n, unbounded_nodes(nodes))
        # The job index at each output position.
        job_at = np.empty(n, dtype=np.int64)
        job_at[position] = np.arange(n, dtype=np.int64)
        jobs_out = job_at.tolist()
        allocations = [by_index[j] for j in jobs_out]
        partition_of = prepared.partition_of
        placed = [part_names[partition_of[j]] for j in jobs_out]
        held = [amounts[j] for j in jobs_out]

    policy, backfill, estimator = names
    excluded_counts = {reason: len(rows_) for reason, rows_ in prepared.excluded.items()}
    written = _submit_order(submit)  # the order -o writes (_in_submit_order)
    numbers = columns["job_number"][rows][written]
    status_out = np.where(killed, KILLED_STATUS, columns["status"][rows])[written]
    extras_out = None
    if workload.has_job_objects():
        extras_out = [workload.jobs[r].extras for r in rows[written].tolist()]
    elif columns.extras is not None:
        extras_out = [columns.extras[r] for r in rows[written].tolist()]
    header = schedule_header(
        workload.header,
        names,
        options,
        procs=procs,
        jobs_in=len(columns),
        excluded=excluded_counts,
        platform_nodes=None if nodes is None else len(nodes.node_names),
        registry=registry,
        counts=_schedule_counts(numbers, status_out, extras_out),
        last_end=float(np.nanmax(end)) if len(end) else None,
    )

    if workload.has_job_objects():
        jobs = workload.jobs
        out_jobs = []
        for i, r in enumerate(rows.tolist()):
            job = jobs[r]
            changes: dict[str, Any] = {
                "submit_time": _number(submit[i]),
                "wait_time": _number(wait[i]),
                "run_time": _number(run[i]),
                "allocated_processors": int(size[i]),
            }
            if killed[i]:
                changes["status"] = KILLED_STATUS
            if allocations is not None and placed is not None:
                changes["hosts"] = allocations[i]
                changes["extras"] = {
                    **job.extras,
                    NODES_EXTRA: " ".join(allocations[i]),
                    PARTITION_EXTRA: placed[i],
                    HELD_EXTRA: held[i],
                }
            out_jobs.append(attrs.evolve(job, **changes))
        out = Workload(header, jobs=out_jobs)
    else:
        # The simulated jobs' columns, those the run sets not gathered first.
        replaced = {
            "submit_time": submit,
            "wait_time": wait,
            "run_time": run,
            "allocated_processors": size,
        }
        data = {
            name: replaced[name] if name in replaced else values[rows]
            for name, values in columns.data.items()
        }
        data["status"][killed] = KILLED_STATUS
        out_extras = None
        if columns.extras is not None:
            out_extras = [columns.extras[i] for i in rows.tolist()]
        out_cols = JobColumns(data, out_extras)
        if allocations is not None and placed is not None:
            base = out_cols.extras or [{}] * len(out_cols)
            out_cols.extras = [
                {**e, NODES_EXTRA: " ".join(a), PARTITION_EXTRA: p, HELD_EXTRA: h}
                for e, a, p, h in zip(base, allocations, placed, held, strict=True)
            ]
        out = Workload(header, columns=out_cols)

    job_numbers = columns["job_number"]
    excluded_numbers = {
        reason: [
            int(job_numbers[r]) if job_numbers[r] == job_numbers[r] else int(r) + 1
            for r in prepared.excluded[reason].tolist()
        ]
        for reason in prepared.excluded
    }
    n_sim = len(order)
    with np.errstate(invalid="ignore"):
        overran = int(np.count_nonzero(run > estimate))
    total = time.perf_counter() - began
    stats: dict[str, Any] = {
        "jobs_in": len(columns),
        "jobs_simulated": n_sim,
        "jobs_excluded": sum(excluded_counts.values()),
        "excluded": excluded_counts,
        "killed": int(np.count_nonzero(killed)),
        "overran_estimate": overran,
        "estimate_fallbacks": engine.estimate_fallbacks,
        # Of the fallbacks, the jobs whose requested time is known (the estimator
        # gave NaN anyway); estimates under 1 ms raised to 1 ms (negative ones).
        "estimate_fallbacks_requested_known": engine.estimate_fallbacks_requested_known,
        "estimates_raised": engine.estimates_raised,
        "estimates_raised_negative": engine.estimates_raised_negative,
        "dependencies_honoured": engine.dependencies_honoured,
        "dependencies_ignored": prepared.dependencies_ignored,
        "events": engine.events,
        "passes": engine.state.passes,
        # The implementation the strategy ran on: "compiled" (numba kernels) or
        # "python" (a strategy's ``kernel_name``).
        "kernel": str(getattr(engine.strategy, "kernel_name", "python")),
        # Whether the strategy simulated the whole run in one call of its own
        # (schedlab.sim.whole_run) instead of pass by pass in the engine's loop.
        "whole_run": engine.whole_run,
        "wall_time_s": loop_time,
        # The process's CPU time in the event loop (what a busy machine changes
        # least: wall time counts the waits for a core too).
        "cpu_time_s": loop_cpu,
        "total_time_s": total,
        "jobs_per_second": n_sim / loop_time if loop_time > 0 else float("inf"),
        "peak_memory_bytes": peak_memory,
        "makespan": float(end.max() - submit.min()) if n_sim else 0.0,
    }
    if nodes is not None:
        assert prepared.partition_of is not None
        stats["platform"] = {
            "name": nodes.platform.name,
            "nodes": len(nodes.node_names),
            "cores": nodes.total_cores,
            "allocation": nodes.allocator_name,
            **prepared.request_notes,
            **machine_usage(
                nodes,
                (
                    prepared.partition_of
                    if prepared.partition_array is None
                    else prepared.partition_array
                ),
                np.asarray(submit_values, dtype=np.float64),
                state.column("start_time"),
                state.column("end_time"),
            ),
        }
    correction = getattr(engine, "correction", None)
    if correction is not None:
        # Predictions raised when jobs outlived them (schedlab.sim.correction).
        stats["corrections"] = correction.corrections
        stats["jobs_corrected"] = correction.jobs_raised
    raised = getattr(correction, "corrections_raised", 0) if correction is not None else 0
    estimator_stats = getattr(engine.estimator, "run_stats", None)
    if estimator_stats is not None:
        stats["estimator"] = dict(estimator_stats())
    notes = []
    estimator_notes = getattr(engine.estimator, "notes", None)
    if estimator_notes is not None:
        notes = [str(note) for note in estimator_notes()]
    if raised:
        # A third-party correct() that gave less than 1 ms more (a run that would
        # otherwise creep forward by tiny steps): raised to 1 ms, counted and said.
        stats["corrections_raised"] = raised
        who = getattr(correction, "name", "") or estimator
        notes.append(
            f"{who}: {raised:,} corrections ended less than 1 ms after they were made: "
            "raised to 1 ms (corrections_raised)"
        )
    if notes:
        stats["notes"] = notes
    out.meta["simulation"] = {
        "policy": policy,
        "backfill": backfill,
        "estimator": estimator,
        "procs": procs,
        "options": options,
        "stats": stats,
    }
    out.meta["excluded_job_numbers"] = excluded_numbers
    if placed is not None and nodes is not None:
        from .resources import MEMORY

        # Only memory a node group does not declare is unbounded: the matrices hold
        # the same amount for it as for a node declaring the most a node may have.
        unbounded = [False] * len(nodes.dims)
        if any(g.memory is None and g.count > 0 for g in nodes.platform.node_groups):
            unbounded[MEMORY] = True
        out.meta["partitions"] = placed
        out.meta["platform"] = {
            "nodes": list(nodes.node_names),
            "dims": list(nodes.dims),
            "capacity": nodes.capacity.sum(axis=0).tolist(),
            # Dimensions some node does not bound: a sum alone cannot tell them.
            "unbounded": unbounded,
            # Each partition's nodes (indices into "nodes"), in the platform's order.
            "partitions": {p.name: [int(i) for i in p.nodes] for p in nodes.partitions},
            "partition_cores": {
                p.name: float(nodes.capacity[p.nodes, 0].sum()) for p in nodes.partitions
            },
        }
    if "source" in workload.meta:
        out.meta["source"] = workload.meta["source"]
    skipped = _skipped_records(workload.meta)
    if skipped:
        # Records the lenient read of the input skipped: in no job of this run, so
        # every consumer of the result says so (schedlab.sim.result.skipped_notes).
        out.meta["skipped"] = skipped
    return Result(
        workload=out,
        procs=procs,
        policy=policy,
        backfill=backfill,
        estimator=estimator,
        excluded=dict(prepared.excluded),
        stats=stats,
        start=start,
        end=end,
        estimate=estimate,
        killed=killed,
        rows=rows,
        original_submit=original_submit,
        options=options,
        allocations=allocations,
        estimate_fell_back=fell_back,
    )


__all__ = [
    "EXCLUDED_NOTE",
    "TIMING_STATS",
    "build_result",
    "component_text",
    "excluded_note",
    "given_options",
    "schedule_header",
]
