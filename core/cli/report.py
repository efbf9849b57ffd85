"""``schedlab report``: a self-contained HTML page with plots for a schedule."""

from __future__ import annotations

from typing import Any

import click

from .flags import parse_read_options, read_option


@click.command("report")
@click.argument("source", metavar="SCHEDULE")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    default="report.html",
    show_default=True,
    help="HTML file to write.",
)
@click.option("--title", help="Page title (default: the schedule's name).")
@click.option("--from", "reader", metavar="FORMAT", help="Input format (default: detected).")
@read_option()
@click.option(
    "--simulate",
    "combination",
    metavar="POLICY[+BACKFILL]",
    help="Simulate SCHEDULE first (e.g. psp+easy): for a trace or generator without waits.",
)
@click.option("--procs", type=click.IntRange(min=1), help="Machine size (processors).")
@click.option(
    "--platform",
    type=click.Path(dir_okay=False),
    help="With --simulate: a platform file; the page then shows nodes over time.",
)
@click.option(
    "--window",
    metavar="START:END",
    help="Time window (seconds) of the node Gantt chart (default: the first jobs).",
)
@click.option(
    "--gantt-max-jobs",
    type=click.IntRange(min=0),
    default=150,
    show_default=True,
    help="Draw the Gantt chart only up to this many jobs.",
)
def command(
    source: str,
    output: str,
    title: str | None,
    reader: str | None,
    read_options: tuple[str, ...],
    combination: str | None,
    procs: int | None,
    platform: str | None,
    window: str | None,
    gantt_max_jobs: int,
) -> None:
    """Write an HTML report for SCHEDULE (a simulated schedule or a recorded trace):
    the metrics table, utilization and queue length over time, the wait-time
    distribution, mean wait per user and per accuracy class, and a Gantt chart for
    small schedules. Images are embedded: the page is one file.
    """
    import os

    from ..api import read
    from ..errors import UsageError
    from ..plotting import pyplot
    from ..report import write_report

    span: tuple[float, float] | None = None
    if window is not None:
        first, sep, last = window.partition(":")
        try:
            span = (float(first), float(last))
        except ValueError:
            span = None
        if not sep or span is None or not span[1] > span[0]:
            raise UsageError(f"--window {window!r}: expected START:END seconds, START < END")
    if platform is not None and not combination:
        raise UsageError("--platform needs --simulate POLICY[+BACKFILL]")
    pyplot()  # fail early, with the install hint, when matplotlib is missing
    # a Workload, or the Result simulated below
    schedule: Any = read(source, format=reader, **parse_read_options(read_options))
    if procs is not None:
        schedule.header.set("MaxProcs", procs)
    if combination:
        from ..comparison import parse_combinations
        from ..sim.api import simulate

        combos = parse_combinations(combination)
        if len(combos) != 1:
            raise click.UsageError("--simulate takes one POLICY[+BACKFILL]")
        ((policy, backfill),) = combos
        from ..registry import get_registry

        with get_registry().blame_names(("policy", policy), ("backfill", backfill)):
            schedule = simulate(
                schedule, policy=policy, backfill=backfill, procs=procs, platform=platform
            )
        label = f"{os.path.basename(source)} under {policy} + {backfill}"
    else:
        label = os.path.basename(source)
    path = write_report(
        schedule,
        output,
        title=title or f"Schedule report: {label}",
        gantt_max_jobs=gantt_max_jobs,
        node_window=span,
    )
    click.echo(f"wrote {path}")
