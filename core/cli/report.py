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
    help="--static: draw the Gantt chart only up to this many jobs.",
)
@click.option(
    "--gantt-rows",
    type=click.IntRange(min=1),
    default=3000,
    show_default=True,
    help="Interactive Gantt chart: most jobs of a selected window drawn.",
)
@click.option(
    "--bins",
    type=click.IntRange(min=10),
    default=600,
    show_default=True,
    help="Bins over the whole schedule at the coarsest resolution of the series.",
)
@click.option(
    "--bin-width",
    type=click.FloatRange(min=1, min_open=False),
    help="Coarsest bin width (seconds) of the series, instead of --bins.",
)
@click.option(
    "--static",
    is_flag=True,
    help="PNG images only, no script (for papers); no zoom and no window Gantt chart.",
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
    gantt_rows: int,
    bins: int,
    bin_width: float | None,
    static: bool,
) -> None:
    """Write an HTML report for SCHEDULE (a simulated schedule or a recorded trace):
    the metrics table; utilization, running jobs and queue over time binned to the
    screen with zoom and pan; a Gantt chart of any window picked on the overview;
    CDFs of wait and bounded slowdown; mean wait per user and per accuracy class.
    Everything is embedded (data, script, images): the page is one file that opens
    offline. --static writes the older page of PNG images only.
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
        static=static,
        gantt_rows=gantt_rows,
        target_bins=bins,
        bin_width=bin_width,
    )
    click.echo(f"wrote {path}")
