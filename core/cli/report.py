"""``schedlab report``: a self-contained HTML page with plots for a schedule."""

from __future__ import annotations

import math
from typing import Any

import click

from .flags import (
    PROCS_RANGE,
    FlagCommand,
    check_outputs,
    check_reader_flags,
    component_options,
    key_values,
    parse_read_options,
    read_option,
    refuse_wrong_suffix,
)


@click.command("report", cls=FlagCommand)
@click.argument("sources", metavar="SCHEDULE...", nargs=-1, required=True)
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
    help="Simulate SCHEDULE first (e.g. psp+easy): for a trace or generator without "
    "waits. Several combinations (fcfs+easy,psp+easy) give a comparison page.",
)
@click.option(
    "--procs",
    type=PROCS_RANGE,
    help="Machine size (processors): the simulated machine with --simulate, else the "
    "size a recorded schedule's utilization is measured against (at least its largest job).",
)
@click.option(
    "--platform",
    type=click.Path(dir_okay=False),
    help="With --simulate: a platform file; the page then shows nodes over time.",
)
@click.option(
    "--allocation",
    metavar="NAME",
    help="With --simulate --platform: which nodes a job gets: first-fit (default), "
    "best-fit, spread, contiguous, or a plugin's.",
)
@click.option(
    "--allocation-option",
    "allocation_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="Allocation policy option, repeatable.",
)
@click.option(
    "--estimator",
    "-e",
    default=None,
    help="With --simulate: run-time estimates the scheduler sees (default: requested; "
    "as in schedlab simulate).",
)
@component_options(
    policy="With --simulate: policy option, for every combination's policy (repeatable).",
    backfill="With --simulate: backfilling option, for every combination's (repeatable).",
    estimator="With --simulate: estimator option, repeatable.",
)
@click.option(
    "--no-kill",
    is_flag=True,
    help="With --simulate: let jobs run past their requested time (default: kill them).",
)
@click.option(
    "--window",
    metavar="START:END",
    help="Time window the page opens on, in seconds since the first submission (the "
    "clock of the page's time axes and of its address #window=START:END), node Gantt "
    "chart included (default: everything; --static: the node chart of the first jobs, "
    "and --window needs a platform run). A window outside the schedule is an error; one "
    "partly outside is clipped to it.",
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
    help="Bins over the whole schedule at the coarsest resolution of the series "
    "(at most 1,000,000).",
)
@click.option(
    "--bin-width",
    type=click.FloatRange(min=1, min_open=False),
    help="Coarsest bin width (seconds) of the series, instead of --bins (giving both "
    "is an error; at most 1,000,000 bins over the schedule).",
)
@click.option(
    "--static",
    is_flag=True,
    help="PNG images only (matplotlib), no script (for papers); no zoom and no window Gantt chart.",
)
def command(
    sources: tuple[str, ...],
    output: str,
    title: str | None,
    reader: str | None,
    read_options: tuple[str, ...],
    combination: str | None,
    procs: int | None,
    platform: str | None,
    allocation: str | None,
    allocation_options: tuple[str, ...],
    estimator: str | None,
    policy_options: tuple[str, ...],
    backfill_options: tuple[str, ...],
    estimator_options: tuple[str, ...],
    no_kill: bool,
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
    The charts are drawn with Bokeh (pip install 'schedlab[report]'), its
    JavaScript and the data embedded: the page is one file that opens offline.
    --static writes a page of PNG images instead (matplotlib; for papers).

    Several schedules (SCHEDULE... or several --simulate combinations) give one
    comparison page: metrics side by side, series and CDFs overlaid, one colour
    per schedule.
    """
    import os

    from ..api import read
    from ..errors import UsageError
    from ..plotting import pyplot
    from ..report import write_report
    from ..report_charts import require_bokeh

    check_outputs(
        [("-o/--output", output)],
        [*(("SCHEDULE", path) for path in sources), ("--platform", platform)],
    )
    refuse_wrong_suffix(output, "-o/--output", [".html", ".htm"], "an HTML page")
    from ..report_data import check_bins

    check_bins(bins, bin_width)  # a NaN or infinite --bin-width, too many --bins
    ctx = click.get_current_context()

    def given(name: str) -> bool:
        return ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT

    if bin_width is not None and given("bins"):
        raise UsageError("--bins and --bin-width both set the coarsest bins: give one of them")
    # an option the chosen page does not use is an error, not silently ignored
    if given("gantt_max_jobs") and not static:
        raise UsageError("--gantt-max-jobs applies to --static pages (the PNG Gantt chart)")
    if given("gantt_rows") and static:
        raise UsageError("--gantt-rows applies to the interactive page, not to --static")
    span: tuple[float, float] | None = None
    if window is not None:
        first, sep, last = window.partition(":")
        try:
            span = (float(first), float(last))
        except ValueError:
            span = None
        if not sep or span is None or not span[1] > span[0] or not math.isfinite(span[1] - span[0]):
            raise UsageError(f"--window {window!r}: expected START:END finite seconds, START < END")
    simulation_flags = [
        flag
        for flag, given in (
            ("--platform", platform is not None),
            ("--allocation", allocation is not None),
            ("--allocation-option", bool(allocation_options)),
            ("-e/--estimator", estimator is not None),
            ("-P/--policy-option", bool(policy_options)),
            ("-B/--backfill-option", bool(backfill_options)),
            ("-E/--estimator-option", bool(estimator_options)),
            ("--no-kill", no_kill),
        )
        if given
    ]
    if simulation_flags and not combination:
        raise UsageError(f"{simulation_flags[0]} needs --simulate POLICY[+BACKFILL]")
    if (allocation is not None or allocation_options) and platform is None:
        raise UsageError("--allocation needs --platform FILE (an allocation picks nodes)")
    estimator_opts = key_values(estimator_options, "-E/--estimator-option")
    policy_opts = key_values(policy_options, "-P/--policy-option") or None
    backfill_opts = key_values(backfill_options, "-B/--backfill-option") or None
    allocation_opts = key_values(allocation_options, "--allocation-option") or None
    # fail early, with the install hint, when the library drawing the page is missing
    if static:
        pyplot()
    else:
        require_bokeh()
    combos: list[tuple[str, str]] = []
    if combination:
        from ..comparison import parse_combinations

        combos = parse_combinations(combination)
    if len(sources) * max(1, len(combos)) > 1 and (
        static or window is not None or platform is not None
    ):
        raise UsageError(
            "--static, --window and --platform draw one schedule: give one SCHEDULE "
            "and one --simulate combination"
        )
    names = [os.path.basename(source) for source in sources]
    if len(set(names)) < len(names):
        names = list(sources)
    from .metrics import _check_procs

    for source in sources:
        check_reader_flags([source], reader, read_options)
    schedules: list[tuple[str, Any]] = []
    for source, name in zip(sources, names, strict=True):
        # a Workload, or the Result simulated below
        workload: Any = read(source, format=reader, **parse_read_options(read_options))
        if procs is not None:
            if not combos:  # measuring a recorded schedule: as `metrics --procs`
                _check_procs(workload, procs)
            workload.header.set("MaxProcs", procs)
        if not combos:
            _require_waits(workload, source)
            schedules.append((name, workload))
            continue
        from ..registry import get_registry
        from ..sim.api import simulate

        for policy, backfill in combos:
            used = (
                ("policy", policy), ("backfill", backfill), ("estimator", estimator),
                ("allocation", allocation),
            )  # fmt: skip
            with get_registry().blame_names(*used):
                result = simulate(
                    workload,
                    policy=policy,
                    backfill=backfill,
                    procs=procs,
                    platform=platform,
                    estimator="requested" if estimator is None else estimator,
                    estimator_options=estimator_opts,
                    policy_options=policy_opts,
                    backfill_options=backfill_opts,
                    kill=not no_kill,
                    allocation=allocation,
                    allocation_options=allocation_opts,
                )
            short = len(sources) == 1 and len(combos) > 1
            pair = f"{_named(policy, policy_opts)} + {_named(backfill, backfill_opts)}"
            label = pair if short else f"{name} under {pair}"
            schedules.append((label, result))
    if len(schedules) > 1:
        if len(sources) == 1 and combos:
            page_title = f"Comparison on {names[0]}"
        else:
            page_title = "Schedule comparison"
        path = write_report(
            schedules,
            output,
            title=title or page_title,
            gantt_rows=gantt_rows,
            target_bins=bins,
            bin_width=bin_width,
        )
        click.echo(f"wrote {path}", err=True)  # a status line (docs/cli.md)
        return
    ((label, schedule),) = schedules
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
    click.echo(f"wrote {path}", err=True)


def _named(name: str, options: dict[str, Any] | None) -> str:
    """A component's label on the page: its name, and the options given to it
    (``psp (window=5)``), so that a page says what was simulated."""
    if not options:
        return name
    return f"{name} ({', '.join(f'{key}={value}' for key, value in options.items())})"


def _require_waits(workload: Any, source: str) -> None:
    """A one-line error for a trace without waits given without --simulate, naming
    this command's own way to simulate it."""
    import numpy as np

    columns = workload.to_arrays()
    known = ~(
        np.isnan(columns["submit_time"])
        | np.isnan(columns["wait_time"])
        | np.isnan(columns["run_time"])
    )
    if len(columns) and not known.any():
        from ..errors import UsageError

        raise UsageError(
            f"{source}: no job has known submit, wait and run times (a trace without "
            "waits, or a workload generator): simulate it in the report with "
            f"`schedlab report {source} --simulate fcfs+easy` (any POLICY[+BACKFILL]), "
            "or give a schedule written by `schedlab simulate IN -o OUT`"
        )
