"""``schedlab sweep``: workloads x policies x backfilling x seeds, in parallel."""

from __future__ import annotations

import click

from .flags import parse_read_options, read_option


@click.command("sweep")
@click.argument("config", required=False, type=click.Path(dir_okay=False, exists=True))
@click.option(
    "--workload",
    "-w",
    "workloads",
    multiple=True,
    metavar="SOURCE",
    help="Trace file or generator spec (psp-fing:scenario=CF); repeatable.",
)
@click.option(
    "--policy",
    "-p",
    "policies",
    multiple=True,
    metavar="NAME",
    help="Priority policy; repeatable or comma-separated (default fcfs).",
)
@click.option(
    "--backfill",
    "-b",
    "backfills",
    multiple=True,
    metavar="NAME",
    help="Backfilling strategy; repeatable or comma-separated (default easy).",
)
@read_option()
@click.option(
    "--seeds",
    metavar="LIST",
    help="Seeds for generator workloads: 1-4 or 1,2,7 (a sweep has at most 100,000 cells).",
)
@click.option("--procs", type=click.IntRange(min=1), help="Machine size (processors).")
@click.option(
    "--platform",
    type=click.Path(dir_okay=False),
    help="A platform file (docs/platform.md) instead of --procs.",
)
@click.option("--allocation", metavar="NAME", help="With --platform: the allocation policy.")
@click.option(
    "--metric",
    "-m",
    "metric_names",
    multiple=True,
    metavar="NAME",
    help="Metrics (repeatable or comma-separated; default: all installed).",
)
@click.option(
    "--by",
    type=click.Choice(("user", "queue", "size", "accuracy-class")),
    help="Group the per-job metrics.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    help="Output folder (default: the config's 'out', else sweep-results).",
)
@click.option(
    "--format",
    "table_format",
    type=click.Choice(("csv", "json", "parquet")),
    multiple=True,
    help="Table format(s) of OUT/results.* (default csv and json).",
)
@click.option("--scheduler", metavar="ADDRESS", help="Run the cells on this Dask scheduler.")
@click.option("--workers", type=click.IntRange(min=1), help="Local processes (default: cores).")
@click.option("--no-progress", is_flag=True, help="Never show the progress bar.")
@click.option(
    "--ci",
    is_flag=True,
    help="Per workload, intervals and paired Wilcoxon tests across seeds (Holm-corrected), "
    "and the ranking in every seed: printed and written to OUT/significance.json "
    "(needs scipy: pip install 'schedlab[stats]'; at least 10 seeds for an interval).",
)
def command(
    config: str | None,
    workloads: tuple[str, ...],
    policies: tuple[str, ...],
    backfills: tuple[str, ...],
    read_options: tuple[str, ...],
    seeds: str | None,
    procs: int | None,
    platform: str | None,
    allocation: str | None,
    metric_names: tuple[str, ...],
    by: str | None,
    out: str | None,
    table_format: tuple[str, ...],
    scheduler: str | None,
    workers: int | None,
    no_progress: bool,
    ci: bool,
) -> None:
    """Run every combination of workloads, policies, backfilling and seeds, from a
    TOML/JSON CONFIG file and/or options (options add to or replace the file's
    axes), on local processes or a Dask cluster. Finished cells are kept in
    OUT/cells/, so running the same command again after an interruption redoes
    nothing that finished. The tidy table of results is OUT/results.csv (and .json,
    .parquet).
    """
    from pathlib import Path

    from ..errors import UsageError
    from ..experiment.config import SweepConfig, check_seed_count, load_config, parse_seeds
    from ..experiment.sweep import run_sweep, write_table

    def names(values: tuple[str, ...]) -> list[str]:
        return [v.strip() for item in values for v in item.split(",") if v.strip()]

    cfg = load_config(config) if config else None
    if cfg is None:
        if not workloads:
            raise UsageError("sweep: give a CONFIG file or at least one --workload")
        cfg = SweepConfig(workloads=list(workloads))
    elif workloads:
        cfg.workloads = list(workloads)
    if policies:
        cfg.policies = names(policies)
    if backfills:
        cfg.backfills = names(backfills)
    if read_options:
        cfg.read_options = {**cfg.read_options, **parse_read_options(read_options)}
    if seeds is not None:
        check_seed_count(seeds, "--seeds")
        cfg.seeds = parse_seeds(seeds)
    if procs is not None:
        cfg.procs = procs
    if platform is not None:
        cfg.platform = platform
    if allocation is not None:
        cfg.allocation = allocation
    if metric_names:
        cfg.metrics = names(metric_names)
    if by is not None:
        cfg.by = by
    target = Path(out or cfg.out or "sweep-results")
    cells = cfg.cells()
    if ci:
        from ..significance import scipy_stats

        scipy_stats()  # fail before running when scipy is missing
    outcome = run_sweep(
        cells,
        target,
        scheduler=scheduler,
        workers=workers,
        progress=False if no_progress else None,
    )
    written = [
        write_table(outcome.rows, target / f"results.{fmt}")
        for fmt in (table_format or ("csv", "json"))
    ]
    click.echo(
        f"{len(cells)} cells: {len(outcome.computed)} run ({outcome.engine}), "
        f"{len(outcome.reused)} already finished; {outcome.seconds:.1f} s"
    )
    if ci:
        import json

        from ..experiment.sweep import write_atomic
        from ..measure import _clean
        from ..significance import sweep_significance
        from .metrics import wide_console

        assessed = sweep_significance(outcome.rows)
        console = wide_console()
        for workload, significance in assessed.items():
            console.print(f"[bold]{workload}[/bold]")
            for table in significance.tables():
                console.print(table)
        data = {workload: sig.to_dict() for workload, sig in assessed.items()}
        path = target / "significance.json"
        write_atomic(path, json.dumps(_clean(data), indent=2, allow_nan=False) + "\n")
        written.append(path)
    for path in written:
        click.echo(f"wrote {path}")
