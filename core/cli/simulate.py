"""``schedlab simulate``: replay a trace through a scheduling policy."""

from __future__ import annotations

from typing import Any

import click

from .convert import all_losses_option
from .flags import (
    PROCS_RANGE,
    FlagCommand,
    check_outputs,
    check_reader_flags,
    component_options,
    key_values,
    parse_read_options,
    read_option,
    refuse_allocation_without_platform,
    refuse_wrong_suffix,
    run_flags,
)
from .json_output import json_text, report_dict


def fallback_summary(result: Any) -> dict[str, float]:
    """Mean wait, response and bounded slowdown (10 s threshold) of a result, used
    only when the metrics engine is not available."""
    import numpy as np

    cols = result.workload.to_arrays()
    wait = cols["wait_time"]
    run = cols["run_time"]
    if not len(wait):
        return {"mean wait (s)": 0.0, "mean response (s)": 0.0, "mean bounded slowdown": 0.0}
    bsld = np.maximum((wait + run) / np.maximum(run, 10.0), 1.0)
    return {
        "mean wait (s)": float(wait.mean()),
        "mean response (s)": float((wait + run).mean()),
        "mean bounded slowdown": float(bsld.mean()),
    }


@click.command("simulate", cls=FlagCommand)
@click.argument("source", metavar="IN")
@click.option("--policy", "-p", default="fcfs", show_default=True, help="Priority policy.")
@click.option(
    "--backfill",
    "-b",
    default="easy",
    show_default=True,
    help="Backfilling: none, easy, conservative, depth (--backfill-option depth=k), slurm, "
    "or a plugin's (schedlab plugins lists them).",
)
@click.option("--procs", type=PROCS_RANGE, help="Machine size (default: MaxProcs).")
@click.option(
    "--platform",
    "platform",
    type=click.Path(dir_okay=False),
    help="A platform file (TOML: nodes, memory, GPUs, partitions; docs/platform.md) "
    "instead of one pool of --procs processors.",
)
@click.option(
    "--allocation",
    metavar="NAME",
    help="With --platform: which nodes a job gets: first-fit (default), best-fit, "
    "spread, contiguous, or a plugin's.",
)
@click.option(
    "--allocation-option",
    "allocation_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="Allocation policy option, repeatable.",
)
@click.option(
    "--allocations-out",
    type=click.Path(dir_okay=False),
    help="With --platform: write each job's partition and nodes here (CSV), for "
    "output formats such as SWF that cannot hold them.",
)
@click.option(
    "--estimator",
    "-e",
    default="requested",
    show_default=True,
    help=(
        "Run-time estimates the scheduler sees: requested, actual, user-average, easy++, "
        "learned (predictors take --estimator-option correction=tsafrir|requested|none)."
    ),
)
@component_options(
    policy="Policy option, repeatable, e.g. --policy psp -P window=5.",
    backfill="Backfilling option, e.g. --backfill depth -B depth=4.",
    estimator="Estimator option, e.g. --estimator user-average --estimator-option window=3.",
    policy_aliases=("--option",),
)
@run_flags()
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the schedule here.")
@click.option("--to", "writer", metavar="FORMAT", help="Output format (default: from -o suffix).")
@click.option("--from", "reader", metavar="FORMAT", help="Input format (default: detected).")
@read_option()
@click.option(
    "--write-option",
    "-W",
    "write_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="Writer option for -o (repeatable), e.g. -W integer_times=true.",
)
@all_losses_option()
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option(
    "--no-timings",
    is_flag=True,
    help="Leave out what measures this machine, not the schedule (wall, CPU and total "
    "time, jobs per second, peak memory): the output is then the same bytes on "
    "every run.",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress bar (default: on a terminal, for runs over a second).",
)
def command(
    source: str,
    policy: str,
    backfill: str,
    procs: int | None,
    platform: str | None,
    allocation: str | None,
    allocation_options: tuple[str, ...],
    allocations_out: str | None,
    estimator: str,
    policy_options: tuple[str, ...],
    backfill_options: tuple[str, ...],
    estimator_options: tuple[str, ...],
    no_kill: bool,
    dependencies: bool,
    output: str | None,
    writer: str | None,
    reader: str | None,
    read_options: tuple[str, ...],
    write_options: tuple[str, ...],
    all_losses: bool,
    as_json: bool,
    no_timings: bool,
    progress: bool | None,
) -> None:
    """Replay the jobs of IN through a priority policy and a backfilling strategy.

    IN is a trace file or a generator spec such as psp-fing:scenario=CF,seed=1. The
    machine size comes from --procs, else the trace's MaxProcs (or MaxNodes). The
    scheduler sees the requested time unless --estimator says otherwise; jobs
    running past their requested time are killed at it unless --no-kill. Prints the
    run's statistics and the schedule's metrics; -o writes the schedule (SWF for
    .swf), with wait times filled in.
    """
    from ..api import read, write
    from ..registry import get_registry
    from ..sim.api import simulate
    from . import collecting

    if write_options and not output:
        from ..errors import UsageError

        raise UsageError("-W/--write-option needs -o/--output (the schedule's writer)")
    for given, flag in ((writer, "--to"), (all_losses, "--all-losses")):
        if given and not output:
            from ..errors import UsageError

            raise UsageError(f"{flag} needs -o/--output (it is about the schedule written)")
    check_outputs(
        [("-o/--output", output), ("--allocations-out", allocations_out)],
        [("IN", source), ("--platform", platform)],
    )
    if allocations_out is not None:  # a CSV, compressed by its suffix as any output
        from ..io import strip_compression_suffix

        refuse_wrong_suffix(
            strip_compression_suffix(allocations_out), "--allocations-out", [".csv"], "CSV"
        )
        if platform is None:  # no nodes to write: refused before any work
            from ..errors import UsageError

            raise UsageError("--allocations-out needs --platform FILE (allocations are nodes)")
    refuse_allocation_without_platform(platform, allocation, allocation_options)
    read_kwargs = parse_read_options(read_options)
    check_reader_flags([source], reader, read_options)
    registry = get_registry()  # built as the start-up (see schedlab.cli.main)
    with collecting():  # the reader, the simulation's components, the writer
        workload = read(source, format=reader, **read_kwargs)
        used = (
            ("policy", policy), ("backfill", backfill), ("estimator", estimator),
            ("allocation", allocation),
        )  # fmt: skip
        with registry.blame_names(*used):  # a third-party component's bug names it
            result = simulate(
                workload,
                policy=policy,
                backfill=backfill,
                procs=procs,
                estimator=estimator,
                kill=not no_kill,
                dependencies=dependencies,
                policy_options=key_values(policy_options, "-P/--policy-option"),
                backfill_options=key_values(backfill_options, "-B/--backfill-option"),
                estimator_options=key_values(estimator_options, "-E/--estimator-option"),
                progress=False if as_json else progress,
                platform=platform,
                allocation=allocation,
                allocation_options=(key_values(allocation_options, "--allocation-option") or None),
            )
        if allocations_out:  # (with --platform: refused above without it)
            if result.allocations is None:  # not expected: a platform run has them
                from ..errors import UsageError

                raise UsageError("--allocations-out: the run on --platform gave no allocations")
            write_allocations(result, allocations_out)
        if output:
            from ..losses import collect_losses
            from ..sim.output import _in_submit_order
            from .convert import echo_losses, writer_name

            with collect_losses() as losses:  # what the format cannot hold: said, as convert
                written = write(
                    _in_submit_order(result.workload),  # SWF: sorted by submit time
                    output,
                    format=writer,
                    **key_values(write_options, "-W/--write-option"),
                )
            echo_losses(losses, written, all_losses=all_losses, writer=writer_name(output, writer))
    report = _metrics(result)
    notes = simulation_notes(result)
    if result.stats.get("platform"):
        from ..comparison import held_note

        held = held_note(result, report)  # processors asked (metrics), cores held (platform)
        if held:
            notes.append(held)
    skipped = _skipped(workload)
    if skipped:
        from ..measure import skipped_note

        notes.insert(0, skipped_note(skipped, "the simulation or its metrics"))
    if as_json:
        simulation = result.to_dict()
        if no_timings:
            from ..sim.output import TIMING_STATS

            for key in TIMING_STATS:
                simulation["stats"].pop(key, None)
        # the options as given (an infinite limit is "inf", not a crash or null)
        simulation["options"] = result.options
        payload: dict[str, Any] = {"simulation": simulation, "notes": notes}
        if output:
            payload["output"] = output
        if report is None:
            payload["metrics"] = fallback_summary(result)
        else:
            payload["metrics"] = report_dict(report)
        click.echo(json_text(payload, sort_keys=True, default=str))
        return
    _print_summary(result, report, output, notes, timings=not no_timings)


def simulation_notes(result: Any) -> list[str]:
    """What the reader of a simulation's numbers should know: estimates that fell
    back (:func:`schedlab.sim.result.estimate_notes`), then a platform run's
    (:func:`schedlab.sim.result.platform_notes`); the metric report's own notes
    (jobs left out of a metric, and why) are printed after these."""
    from ..sim.result import estimate_notes, platform_notes

    return [*estimate_notes(result), *platform_notes(result)]


def _skipped(workload: Any) -> int:
    """Records the lenient read of the input skipped (``meta["skipped"]``)."""
    meta = getattr(workload, "meta", None)
    if not isinstance(meta, dict) or not (meta.get("skipped") or meta.get("rejects")):
        return 0
    from ..validation import skipped_count

    return skipped_count(meta)


def write_allocations(result: Any, path: str) -> None:
    """Each simulated job's number, partition and nodes as CSV (input order; nodes
    separated by spaces)."""
    import csv
    import io

    from ..io import open_output

    buffer = io.StringIO()
    out = csv.writer(buffer, lineterminator="\n")
    out.writerow(["job_number", "partition", "nodes"])
    numbers = result.workload.to_arrays()["job_number"].tolist()
    parts = result.meta.get("partitions") or [""] * len(numbers)
    for number, part, nodes in zip(numbers, parts, result.allocations, strict=True):
        out.writerow([int(number) if number == number else "", part, " ".join(nodes)])
    with open_output(path) as handle:
        handle.write(buffer.getvalue())


def _metrics(result: Any) -> Any:
    """The metrics engine's default report, or None if it is not installed."""
    try:
        from ..measure import compute_metrics
    except ImportError:
        return None
    return compute_metrics(result)


def _print_summary(
    result: Any, report: Any, output: str | None, notes: list[str], timings: bool = True
) -> None:
    from rich.table import Table

    from ._console import print_table
    from .metrics import wide_console

    console = wide_console()
    stats = result.stats
    where = f"{result.procs:,} processors"
    if stats.get("platform"):
        name = stats["platform"]["name"]
        where = (
            f"platform {name} ({result.procs:,} cores)"
            if name
            else (f"a platform of {result.procs:,} cores")
        )
    table = Table(title=f"{result.policy} + {result.backfill} on {where}")
    table.add_column("run")
    table.add_column("value", justify="right")
    excluded = ", ".join(f"{k}={v}" for k, v in stats["excluded"].items() if v) or "none"
    rows = [
        ("estimator", result.estimator),
        ("jobs simulated", f"{stats['jobs_simulated']:,}"),
        ("jobs excluded", f"{stats['jobs_excluded']:,} ({excluded})"),
        ("jobs killed at their requested time", f"{stats['killed']:,}"),
    ]
    if timings:
        rows += [
            (
                "simulation time",
                f"{stats['wall_time_s']:.3f} s ({stats['cpu_time_s']:.3f} s CPU)",
            ),
            ("jobs per second", f"{stats['jobs_per_second']:,.0f}"),
            ("peak memory", f"{stats['peak_memory_bytes'] / 2**20:,.0f} MiB"),
        ]
    machine = stats.get("platform")
    if machine:
        rows.append(("platform", f"{machine['nodes']:,} nodes, {machine['cores']:,} cores"))
        rows.append(("allocation", str(machine["allocation"])))
        for dim, value in machine["utilization_by_dimension"].items():
            if value is not None:
                rows.append((f"utilization of {dim} held", f"{value:.3f}"))
        idle = machine["idle_while_waiting"]  # None: a run of zero length
        rows.append(
            ("core-time not held while jobs waited", "-" if idle is None else f"{idle:.3f}")
        )
        if len(machine["utilization_by_partition"]) > 1:
            for name, value in machine["utilization_by_partition"].items():
                wait = machine["mean_wait_by_partition"].get(name)
                shown = "-" if wait is None else f"{wait:,.0f} s"
                held = "-" if value is None else f"{value:.3f}"
                # the cores its own jobs held, over its nodes' core-time (docs/platform.md)
                rows.append(
                    (f"partition {name}: cores held by its jobs, mean wait", f"{held}, {shown}")
                )
    if stats["dependencies_honoured"] or stats["dependencies_ignored"]:
        rows.append(
            (
                "dependencies honoured / ignored",
                f"{stats['dependencies_honoured']:,} / {stats['dependencies_ignored']:,}",
            )
        )
    if "corrections" in stats:
        rows.append(
            (
                "predictions corrected (jobs / raises)",
                f"{stats['jobs_corrected']:,} / {stats['corrections']:,}",
            )
        )
    for name, value in rows:
        table.add_row(name, value)
    print_table(console, table)
    for note in stats.get("notes", ()):
        console.print(f"note: {note}", markup=False, highlight=False)
    if report is None:
        metrics = Table(title="schedule")
        metrics.add_column("metric")
        metrics.add_column("value", justify="right")
        for name, value in fallback_summary(result).items():
            metrics.add_row(name, f"{value:,.2f}")
        print_table(console, metrics)
    else:
        for part in report.tables():
            print_table(console, part)
    # (each once: a simulation's skipped-records note is the metrics' too)
    for note in dict.fromkeys([*notes, *(report.notes if report is not None else ())]):
        console.print(f"note: {note}", style="dim", markup=False, highlight=False, soft_wrap=True)
    if output:  # a status line: stderr, as every command's (docs/cli.md)
        click.echo(f"schedule written to {output}", err=True)
