"""Package an engine run as a :class:`~schedlab.sim.result.Result` whose workload
every writer and metric accepts."""

from __future__ import annotations

import time
from typing import Any

import attrs
import numpy as np

from .. import __version__
from ..model import JobColumns, Workload
from .allocation_text import held_texts, node_lists
from .prepare import Prepared
from .result import KILLED_STATUS, Result
from .usage import machine_usage


def _number(value: float) -> int | float | None:
    if value != value:
        return None
    return int(value) if float(value).is_integer() else float(value)


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
) -> Result:
    """Assemble the output workload (input order) and the run statistics."""
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
        amounts = held_texts(nodes.given, nodes.dims, n)
        # The job index at each output position.
        job_at = np.empty(n, dtype=np.int64)
        job_at[position] = np.arange(n, dtype=np.int64)
        jobs_out = job_at.tolist()
        allocations = [by_index[j] for j in jobs_out]
        partition_of = prepared.partition_of
        placed = [part_names[partition_of[j]] for j in jobs_out]
        held = [amounts[j] for j in jobs_out]

    policy, backfill, estimator = names
    header = workload.header.copy()
    header.set("MaxProcs", procs)
    header.add(
        "Note",
        f"Simulated by schedlab {__version__}: policy={policy} backfill={backfill} "
        f"estimator={estimator} procs={procs} "
        f"kill={'yes' if options['simulation']['kill'] else 'no'} "
        f"dependencies={'yes' if options['simulation']['dependencies'] else 'no'}",
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
                    "schedlab.nodes": " ".join(allocations[i]),
                    "schedlab.partition": placed[i],
                    "schedlab.held": held[i],
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
                {**e, "schedlab.nodes": " ".join(a), "schedlab.partition": p, "schedlab.held": h}
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
    excluded_counts = {reason: len(rows_) for reason, rows_ in prepared.excluded.items()}
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
    estimator_stats = getattr(engine.estimator, "run_stats", None)
    if estimator_stats is not None:
        stats["estimator"] = dict(estimator_stats())
    estimator_notes = getattr(engine.estimator, "notes", None)
    if estimator_notes is not None:
        notes = [str(note) for note in estimator_notes()]
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
        out.meta["partitions"] = placed
        out.meta["platform"] = {
            "nodes": list(nodes.node_names),
            "dims": list(nodes.dims),
            "capacity": nodes.capacity.sum(axis=0).tolist(),
        }
    if "source" in workload.meta:
        out.meta["source"] = workload.meta["source"]
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
    )


__all__ = ["build_result"]
