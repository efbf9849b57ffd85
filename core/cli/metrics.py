"""``schedlab metrics``: metrics of a recorded trace or a simulated schedule."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import click

from .flags import (
    PROCS_RANGE,
    FlagCommand,
    check_reader_flags,
    merge_flag,
    parse_read_options,
    read_option,
)

GROUPINGS = ("user", "queue", "partition", "size", "accuracy-class")
STATS = ("mean", "median", "p90", "p99", "max")


def split_names(values: Iterable[str], flag: str | None = None) -> list[str]:
    """Repeated and comma-separated names, in order, without duplicates. With
    ``flag`` (the option they came from), a value naming nothing (``-m ''``) is a
    :class:`~schedlab.errors.UsageError`: it would silently mean the default set."""
    out: list[str] = []
    for value in values:
        names = [name.strip() for name in value.split(",") if name.strip()]
        if flag is not None and not names:
            from ..errors import UsageError

            raise UsageError(f"{flag} {value!r}: give a name (leave {flag} out for the default)")
        for name in names:
            if name not in out:
                out.append(name)
    return out


def parse_key_values(values: Iterable[str], flag: str = "--option") -> dict[str, str]:
    """``["a=1", "b=x,c=2"]`` -> ``{"a": "1", "b": "x", "c": "2"}``; one-line errors.

    A comma followed by ``key=value`` starts the next option; a comma followed by
    text without ``=`` continues the value of the option before it, so that an
    option may hold a list: ``stats=p95,mean,threshold=60`` -> ``{"stats":
    "p95,mean", "threshold": "60"}``. An empty value or item (``''``, ``,a=1``,
    ``a=1,``) is an error, as for every other ``KEY=VALUE`` option."""
    from ..errors import UsageError

    out: dict[str, str] = {}
    for value in values:
        items: list[list[str]] = []
        for item in (p.strip() for p in value.split(",")):
            if not item:
                raise UsageError(f"{flag} {value!r}: expected key=value")
            key, sep, raw = item.partition("=")
            if sep and key.strip():
                items.append([key.strip(), raw.strip()])
            elif not sep and items:
                items[-1][1] += "," + item  # a further element of the value before
            else:
                raise UsageError(f"{flag} {value!r}: expected key=value, got {item!r}")
        for key, raw in items:
            if out.get(key, raw) != raw:  # the same twice passes
                raise UsageError(f"{flag} {value!r}: option {key!r} given twice")
            out[key] = raw
    return out


def wide_console() -> Any:
    """A rich console for stdout; when stdout is not a terminal (a pipe or a file) it
    is 200 columns wide so tables are not squeezed to 80 columns."""
    from rich.console import Console

    console = Console()
    if not console.is_terminal:
        console = Console(width=200)
    return console


@click.command("metrics", cls=FlagCommand)
@click.argument("source", metavar="FILE")
@click.option("--by", type=click.Choice(GROUPINGS), help="Group the per-job statistics.")
@click.option(
    "--metric",
    "-m",
    "metric_names",
    multiple=True,
    metavar="NAME",
    help="Metric to compute (repeatable or comma-separated; default: all installed).",
)
@click.option("--procs", type=PROCS_RANGE, help="Machine size (processors).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--from", "reader", metavar="FORMAT", help="Input format (default: detected).")
@read_option()
@click.option(
    "--metric-option",
    "-M",
    "--option",
    "option_values",
    multiple=True,
    metavar="KEY=VALUE",
    help="Metric or grouping option, e.g. threshold=60, window=5, weight=users.",
)
@click.option(
    "--stat",
    "stats",
    multiple=True,
    metavar="NAME",
    help="Statistic to compute and show: mean, median, min, max, any percentile pNN "
    "(p95, p99.9) or a plugin statistic (repeatable or comma-separated; default: "
    f"{', '.join(STATS)}; with --by the mean, or those of -M stats=; --stat adds to "
    "them).",
)
@click.option(
    "--warmup",
    metavar="SPAN",
    help="Leave out jobs submitted in the first SPAN of the trace (seconds, 30min, 12h, "
    "2d or 10%) and measure system metrics from there.",
)
@click.option(
    "--cooldown",
    metavar="SPAN",
    help="Leave out jobs submitted in the last SPAN of the trace and end the system "
    "metrics' window there (before the drain after the last submission).",
)
@click.option(
    "--time-unit",
    type=click.Choice(("s", "min", "h")),
    default="s",
    show_default=True,
    help="Unit of times in the table (JSON is always in seconds).",
)
def command(
    source: str,
    by: str | None,
    metric_names: tuple[str, ...],
    procs: int | None,
    as_json: bool,
    reader: str | None,
    read_options: tuple[str, ...],
    option_values: tuple[str, ...],
    stats: tuple[str, ...],
    warmup: str | None,
    cooldown: str | None,
    time_unit: str,
) -> None:
    """Compute wait, response, slowdown, bounded slowdown, estimate accuracy,
    utilization, makespan, throughput, loss of capacity and fairness of FILE.

    FILE is a recorded trace (its real waits are measured) or a schedule written by
    `schedlab simulate`. Per-job metrics are summarised by mean, median, 90th and
    99th percentile and max; --by groups them per user, queue, job size class
    (1, 2-3, 4-7, ... processors) or PSP accuracy class (a1..a5, the paper's
    Table 3); makespan, utilization, throughput and work are computed per group too.
    --warmup and --cooldown measure a steady-state window. Jobs with unknown values
    are left out and counted in the notes.
    """
    from ..api import read
    from ..measure import STATS as DEFAULT_STATS
    from ..measure import compute_metrics

    options: dict[str, Any] = dict(parse_key_values(option_values, "-M/--metric-option"))
    if warmup is not None:
        merge_flag(options, "warmup", warmup, "--warmup", "-M/--metric-option")
    if cooldown is not None:
        merge_flag(options, "cooldown", cooldown, "--cooldown", "-M/--metric-option")
    shown = split_names(stats, "--stat")
    given = split_names([options["stats"]]) if "stats" in options else None
    if shown:
        # Compute the chosen statistics besides the usual ones, or besides those of
        # -M stats= when given (the JSON keeps all).
        base = given if given is not None else list(DEFAULT_STATS)
        options["stats"] = ",".join(split_names([*base, *shown]))
    check_reader_flags([source], reader, read_options)
    workload = read(source, format=reader, **parse_read_options(read_options))
    if procs is not None:
        _check_procs(workload, procs)
    # (of a schedule written by `schedlab simulate`, the first note counts the jobs
    # its simulation excluded, from the header's Note)
    report = compute_metrics(
        workload,
        names=split_names(metric_names, "-m/--metric") or None,
        by=by,
        procs=procs,
        **options,
    )
    if as_json:
        from .json_output import json_text, report_dict

        click.echo(json_text(report_dict(report)))
        return
    from ._console import print_table

    console = wide_console()
    for table in report.tables(_grouped_stats(by, given, shown), time_unit):
        print_table(console, table)
    for note in report.notes:
        console.print(f"note: {note}", style="dim", markup=False, highlight=False)


def _grouped_stats(by: str | None, given: list[str] | None, shown: list[str]) -> Any:
    """The statistics a grouped table shows: those of ``-M stats=`` (``given``), else
    the mean, plus those of ``--stat`` (``shown``), by their canonical names (a
    plugin statistic's alias is its name in the report); None ungrouped (the table
    shows every statistic) or when neither option is given (the report's default)."""
    if by is None or (given is None and not shown):
        return None
    from ..measure import parse_stats

    return parse_stats(split_names([*(given if given is not None else ["mean"]), *shown]))[0]


def _check_procs(workload: Any, procs: int) -> None:
    """:class:`~schedlab.errors.UsageError` when ``--procs`` is smaller than the
    largest job: utilization would exceed 1, which no schedule on a machine of that
    size can give (``simulate --procs`` excludes such jobs)."""
    from ..errors import UsageError
    from ..measure import largest_job

    found = largest_job(workload.to_arrays())
    if found is not None and found[0] > procs:
        raise UsageError(
            f"--procs {procs}: smaller than the largest job of the trace ({found[0]:,.0f} "
            f"processors); utilization would exceed 1 (give --procs {found[0]:.0f} or more)"
        )
