"""``schedlab compare``: simulate several policies on one trace, side by side."""

from __future__ import annotations

import click

from ._console import print_table
from .flags import (
    PROCS_RANGE,
    FlagCommand,
    check_outputs,
    check_reader_flags,
    ci_resampling_options,
    component_options,
    key_values,
    parse_read_options,
    read_option,
    refuse_allocation_without_platform,
    refuse_wrong_suffix,
    run_flags,
)
from .metrics import parse_key_values, split_names, wide_console

#: Options that only mean something with --ci: (parameter name, flag).
CI_ONLY = (
    ("level", "--level"),
    ("block", "--block"),
    ("rank_window", "--rank-window"),
    ("resamples", "--resamples"),
    ("seed", "--ci-seed"),
    ("ci_stats", "--stat"),
)


@click.command("compare", cls=FlagCommand)
@click.argument("source", metavar="IN")
@click.option(
    "--policies",
    "--policy",
    "-p",
    "policies",
    required=True,
    multiple=True,
    metavar="POLICY[+BACKFILL],...",
    help="Combinations to simulate, e.g. fcfs+easy,sjf+easy,psp+conservative "
    "(a bare policy uses easy backfilling); either part may carry options, "
    "name:key=value (fcfs+easy:order=sjbf, psp:window=5+easy).",
)
@click.option("--procs", type=PROCS_RANGE, help="Machine size (processors).")
@click.option(
    "--platform",
    type=click.Path(dir_okay=False),
    help="A platform file (nodes, memory, GPUs, partitions; docs/platform.md) instead of --procs.",
)
@click.option("--allocation", metavar="NAME", help="With --platform: the allocation policy.")
@click.option(
    "--allocation-option",
    "allocation_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="Allocation policy option, repeatable (every combination).",
)
@click.option(
    "--estimator", "-e", default="requested", show_default=True, help="Run-time estimator."
)
@component_options(
    policy="Policy option, repeatable, given to every combination's policy "
    "(e.g. -p psp,psp+conservative -P window=5).",
    backfill="Backfilling option, repeatable, given to every combination's backfilling.",
    estimator="Estimator option, repeatable, e.g. -e easy++ -E correction=requested.",
)
@run_flags()
@click.option("--from", "reader", metavar="FORMAT", help="Input format (default: detected).")
@read_option()
@click.option(
    "--metric",
    "-m",
    "metric_names",
    multiple=True,
    metavar="NAME",
    help="Metrics to compute (repeatable or comma-separated; default: all installed).",
)
@click.option(
    "--metric-option",
    "-M",
    "--option",
    "option_values",
    multiple=True,
    metavar="KEY=VALUE",
    help="Metric option, e.g. threshold=60.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (no timings: deterministic).")
@click.option(
    "--no-timings",
    is_flag=True,
    help="Leave the sim (s) column (this machine's simulation time, not the "
    "schedule's) out of the table: the output is then the same bytes on every run.",
)
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(dir_okay=False),
    help="Save a figure of mean wait and mean bounded slowdown per combination "
    "(.png, .svg or .pdf; needs matplotlib).",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False),
    help="Also write an interactive HTML page comparing the simulated schedules "
    "(as schedlab report with several --simulate combinations).",
)
@click.option(
    "--ci",
    is_flag=True,
    help="Confidence intervals, paired Wilcoxon tests (Holm-corrected) and per-window "
    "rank stability of the metrics (block bootstrap; a whole-schedule extreme such as "
    "the makespan is listed without an interval, with the reason; needs scipy: "
    "pip install 'schedlab[stats]').",
)
@ci_resampling_options()
@click.option(
    "--block",
    default="7d",
    show_default=True,
    help="With --ci: block length (jobs submitted in the same block of time share a "
    "block; at most 10,000 blocks over the trace). Was --window, which report uses for "
    "the time range a page opens on.",
)
@click.option(
    "--rank-window",
    help="With --ci: window of the per-window ranking [default: 30d, or the whole "
    "trace when shorter].",
)
@click.option(
    "--stat",
    "ci_stats",
    multiple=True,
    metavar="NAME",
    help="With --ci: statistics of the per-job metrics to assess (repeatable or "
    "comma-separated: mean, median, any percentile pNN such as p95; max, min, p100 "
    "and p0 are extremes, listed without an interval) [default: mean, p90].",
)
@click.option(
    "--time-unit",
    type=click.Choice(("s", "min", "h")),
    default="s",
    show_default=True,
    help="Unit of times in the table.",
)
def command(
    source: str,
    policies: tuple[str, ...],
    procs: int | None,
    platform: str | None,
    allocation: str | None,
    allocation_options: tuple[str, ...],
    estimator: str,
    policy_options: tuple[str, ...],
    backfill_options: tuple[str, ...],
    estimator_options: tuple[str, ...],
    no_kill: bool,
    dependencies: bool,
    reader: str | None,
    read_options: tuple[str, ...],
    metric_names: tuple[str, ...],
    option_values: tuple[str, ...],
    as_json: bool,
    no_timings: bool,
    plot_path: str | None,
    report_path: str | None,
    time_unit: str,
    ci: bool,
    level: float,
    block: str,
    rank_window: str | None,
    resamples: int,
    seed: int,
    ci_stats: tuple[str, ...],
) -> None:
    """Simulate IN under each policy combination and print one table, one row per
    combination: wait (mean, p90, max), bounded slowdown, utilization, loss of
    capacity, fairness and makespan (with -m: a column for each metric named), with
    the best value of each column with a better direction in bold (not makespan).
    A policy or backfilling may carry options (psp:window=5+easy:order=sjbf); -P, -B,
    -E and --allocation-option give options to every combination. The notes of the
    simulations and metrics follow the table, each once, with the combinations it
    concerns.
    """
    import os

    from rich.console import Console

    from ..api import read
    from ..comparison import compare_policies, parse_combinations
    from ..registry import get_registry

    if not ci:
        from click.core import ParameterSource

        ctx = click.get_current_context()
        for name, flag in CI_ONLY:
            if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None):
                raise click.UsageError(f"{flag} needs --ci (it only sets the statistics of --ci)")
    plot_ci = None
    if plot_path and ci:  # --ci draws a second figure beside --plot's
        from pathlib import Path

        target = Path(plot_path)
        plot_ci = str(target.with_name(f"{target.stem}-ci{target.suffix}"))
    check_outputs(
        [("--plot", plot_path), ("--plot (its -ci figure)", plot_ci), ("--report", report_path)],
        [("IN", source), ("--platform", platform)],
    )
    refuse_wrong_suffix(report_path, "--report", [".html", ".htm"], "an HTML page")
    refuse_allocation_without_platform(platform, allocation, allocation_options)
    combos = parse_combinations(policies)
    component_options = {
        "policy_options": key_values(policy_options, "-P/--policy-option"),
        "backfill_options": key_values(backfill_options, "-B/--backfill-option"),
        "estimator_options": key_values(estimator_options, "-E/--estimator-option"),
        "allocation_options": key_values(allocation_options, "--allocation-option"),
    }
    _check_same_combinations(combos, component_options)
    if report_path is not None:
        from ..report_charts import require_bokeh

        require_bokeh()  # fail before simulating when Bokeh is missing
    stats: list[str] | None = None
    if ci:
        from ..significance import parse_window, scipy_stats

        scipy_stats()  # fail before simulating when scipy is missing
        parse_window(block, "--block")
        if rank_window is not None:
            parse_window(rank_window, "--rank-window")
        stats = split_names(ci_stats, "--stat") or None
        if stats is not None:
            from ..measure import parse_stats

            parse_stats(stats)
    if plot_path is not None:
        from ..plotting import check_figure_path

        # fail before simulating when matplotlib is missing or cannot write the suffix
        check_figure_path(plot_path, "--plot")
    options = parse_key_values(option_values, "-M/--metric-option")
    names = split_names(metric_names, "-m/--metric") or None
    if names is not None and plot_path is not None:  # the figure needs these two
        names += [n for n in ("wait", "bounded-slowdown") if n not in names]
    check_reader_flags([source], reader, read_options)
    workload = read(source, format=reader, **parse_read_options(read_options))
    if ci:
        from ..significance import check_windows

        # before simulating: a window longer than the trace or giving too many windows
        check_windows(workload, block, rank_window)
    err = Console(stderr=True)
    from ..api import parse_spec

    used = [("estimator", parse_spec(estimator)[0]), ("allocation", allocation)]
    for policy, backfill in combos:
        used += [("policy", parse_spec(policy)[0]), ("backfill", parse_spec(backfill)[0])]
    with get_registry().blame_names(*used):  # a third-party component's bug names it
        comparison = compare_policies(
            workload,
            combos,
            procs=procs,
            platform=platform,
            allocation=allocation,
            estimator=estimator,
            kill=not no_kill,
            dependencies=dependencies,
            names=names,
            metric_options=options,
            source=os.path.basename(source),
            **component_options,
            on_row=lambda row: (
                err.print(
                    f"[dim]simulated {row.label}: {row.jobs:,} jobs "
                    f"in {row.wall_time_s:.2f} s[/dim]"
                )
                if err.is_terminal
                else None
            ),
        )
    significance = None
    if ci:
        significance = comparison.significance(
            metrics=names,
            stats=stats,
            window=block,
            level=level,
            resamples=resamples,
            seed=seed,
            rank_window=rank_window,
            metric_options={k: v for k, v in options.items() if k == "threshold"},
        )
    if as_json:
        from ..measure import _clean
        from .json_output import json_text

        data = comparison.to_dict()
        if significance is not None:
            data["significance"] = significance.to_dict()
        data = _clean(data)  # metric values without one are null
        # the options as given: an infinite one is "inf", not null ("unknown")
        data["settings"] = comparison.settings
        for row, shown in zip(comparison.rows, data["rows"], strict=True):
            shown["metrics"]["options"] = dict(row.report.options)
        click.echo(json_text(data))
    else:
        console = wide_console()
        print_table(console, comparison.table(time_unit, timing=not no_timings))
        for note, labels in comparison.notes():
            console.print(
                f"note ({', '.join(labels)}): {note}",
                style="dim",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
        if significance is not None:
            for table in significance.tables():
                print_table(console, table)
    if plot_path is not None:
        written = comparison.plot(plot_path)
        if significance is not None:
            from pathlib import Path

            target = Path(plot_path)
            written += significance.plot(target.with_name(f"{target.stem}-ci{target.suffix}"))
        if not as_json:
            for path in written:
                click.echo(f"wrote {path}", err=True)
    if report_path is not None:
        from ..report import write_report

        page = write_report(
            [(f"{row.policy} + {row.backfill}", row.result) for row in comparison.rows],
            report_path,
            title=comparison.title("Comparison"),
            significance=significance,
        )
        if not as_json:
            click.echo(f"wrote {page}", err=True)


def _check_same_combinations(
    combos: list[tuple[str, str]], component_options: dict[str, dict[str, object]]
) -> None:
    """A one-line :class:`~schedlab.errors.UsageError` naming ``-p`` when two
    combinations are one spelled two ways (``fcfs+easy,fcfs+aggressive``: an alias;
    ``psp:window=10,psp``: psp's default window), which would give identical rows:
    components compare by registered name and parsed options, -P/-B included."""
    from ..errors import UsageError
    from ..experiment.config import _canonical_component
    from ..registry import get_registry

    registry = get_registry()
    seen: dict[object, str] = {}
    for policy, backfill in combos:
        same_policy, policy_text = _canonical_component(
            "policy", policy, component_options["policy_options"], registry
        )
        same_backfill, backfill_text = _canonical_component(
            "backfill", backfill, component_options["backfill_options"], registry
        )
        label = f"{policy}+{backfill}"
        same = (same_policy, same_backfill)
        if same in seen:
            raise UsageError(
                f"-p/--policies: {seen[same]!r} and {label!r} are the same combination "
                f"({policy_text} + {backfill_text}): they would give identical rows"
            )
        seen[same] = label
