"""``schedlab sweep``: workloads x policies x backfilling x estimators x seeds, in
parallel."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import click

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
    refuse_file_parent,
    run_flags,
)
from .metrics import GROUPINGS

#: Most distinct notes printed after a sweep (the rest are in the notes column).
SHOWN_NOTES = 10

#: Options that only set the statistics of --ci: (parameter, flag), as compare's.
CI_ONLY = (("level", "--level"), ("resamples", "--resamples"), ("ci_seed", "--ci-seed"))


@click.command("sweep", cls=FlagCommand)
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
    "--policies",
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
@click.option(
    "--estimator",
    "-e",
    "estimator_names",
    multiple=True,
    metavar="NAME",
    help="Run-time estimator the scheduler sees; repeatable or comma-separated "
    "(default requested).",
)
@component_options(
    policy="Option of every policy of the sweep, repeatable (one policy's: "
    "-p psp:window=5, or [policy_options.psp] in the file).",
    backfill="Option of every backfilling strategy of the sweep, repeatable.",
    estimator="Option of every estimator of the sweep, repeatable.",
)
@run_flags()
@click.option(
    "--from",
    "reader",
    metavar="FORMAT",
    help="Format of the trace files (default: detected; not for generator specs).",
)
@read_option()
@click.option(
    "--seeds",
    metavar="LIST",
    help="Seeds for generator workloads: 1-4 or 1,2,7 (a sweep has at most 100,000 cells).",
)
@click.option("--procs", type=PROCS_RANGE, help="Machine size (processors).")
@click.option(
    "--platform",
    type=click.Path(dir_okay=False),
    help="A platform file (docs/platform.md) instead of --procs.",
)
@click.option("--allocation", metavar="NAME", help="With --platform: the allocation policy.")
@click.option(
    "--allocation-option",
    "allocation_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="Allocation policy option, repeatable.",
)
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
    type=click.Choice(GROUPINGS),
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
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    help="Local processes (default: cores; not with --scheduler, whose workers run the cells).",
)
@click.option("--no-progress", is_flag=True, help="Never show the progress bar.")
@click.option(
    "--ci",
    is_flag=True,
    help="Per workload, intervals and paired Wilcoxon tests across seeds (Holm-corrected), "
    "and the ranking in every seed: printed and written to OUT/significance.json "
    "(needs scipy: pip install 'schedlab[stats]'; at least 10 seeds for an interval).",
)
@ci_resampling_options(seed_dest="ci_seed", seed_note="; the workloads' seeds are --seeds")
def command(
    config: str | None,
    workloads: tuple[str, ...],
    policies: tuple[str, ...],
    backfills: tuple[str, ...],
    estimator_names: tuple[str, ...],
    policy_options: tuple[str, ...],
    backfill_options: tuple[str, ...],
    estimator_options: tuple[str, ...],
    no_kill: bool,
    dependencies: bool,
    reader: str | None,
    read_options: tuple[str, ...],
    seeds: str | None,
    procs: int | None,
    platform: str | None,
    allocation: str | None,
    allocation_options: tuple[str, ...],
    metric_names: tuple[str, ...],
    by: str | None,
    out: str | None,
    table_format: tuple[str, ...],
    scheduler: str | None,
    workers: int | None,
    no_progress: bool,
    ci: bool,
    level: float,
    resamples: int,
    ci_seed: int,
) -> None:
    """Run every combination of workloads, policies, backfilling, estimators and
    seeds, from a TOML/JSON CONFIG file and/or options (options add to or replace
    the file's axes), on local processes or a Dask cluster. Finished cells are kept
    in OUT/cells/, so running the same command again after an interruption redoes
    nothing that finished. The tidy table of results is OUT/results.csv (and .json,
    .parquet), with each cell's excluded jobs and notes; the notes and exclusions
    are also summed up on the console.
    """
    from pathlib import Path

    from ..errors import UsageError
    from ..experiment.config import (
        SweepConfig,
        _check_unique,
        _expand_home,
        _parse_seeds,
        _spec_paths_in,
        load_config,
    )
    from ..experiment.sweep import run_sweep, write_table
    from .metrics import split_names

    if not ci:
        from click.core import ParameterSource

        ctx = click.get_current_context()
        for name, flag in CI_ONLY:
            if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None):
                seeds_hint = "; the workloads' seeds are --seeds" if flag == "--ci-seed" else ""
                raise click.UsageError(
                    f"{flag} needs --ci (it only sets the statistics of --ci{seeds_hint})"
                )
    if scheduler is not None and workers is not None:
        raise UsageError(
            "--workers sets the local processes; with --scheduler the Dask cluster's "
            "workers run the cells: drop --workers"
        )
    # ~ is the home folder, also where the shell left it (quoted, --out=~/res)
    workloads = tuple(
        _spec_paths_in(_expand_home(w, "-w/--workload"), "", "-w/--workload") for w in workloads
    )
    if platform is not None:
        platform = _expand_home(platform, "--platform")
    if out is not None:
        out = _expand_home(out, "--out")
    cfg = load_config(config) if config else None
    if cfg is None:
        if not workloads:
            raise UsageError("sweep: give a CONFIG file or at least one --workload")
        cfg = SweepConfig(workloads=list(workloads))
    elif workloads:
        cfg.workloads = list(workloads)
    if workloads:
        _check_unique(cfg.workloads, "-w/--workload")
    if policies:
        cfg.policies = component_names(policies, "-p/--policy")
    if backfills:
        cfg.backfills = component_names(backfills, "-b/--backfill")
    if estimator_names:
        cfg.estimators = component_names(estimator_names, "-e/--estimator")
    # -P/-B/-E: options of every policy / backfilling / estimator of the sweep.
    for values, flag, axis, table in (
        (policy_options, "-P/--policy-option", cfg.policies, cfg.policy_options),
        (backfill_options, "-B/--backfill-option", cfg.backfills, cfg.backfill_options),
        (estimator_options, "-E/--estimator-option", cfg.estimators, cfg.estimator_options),
    ):
        options = key_values(values, flag)
        if options:
            # keyed by the component's name, as the file's tables (NAME for NAME:key=value)
            for name in {spec.split(":", 1)[0].strip() for spec in axis}:
                table[name] = {**table.get(name, {}), **options}
    if allocation_options:
        cfg.allocation_options = {
            **cfg.allocation_options,
            **key_values(allocation_options, "--allocation-option"),
        }
    if no_kill:
        cfg.kill = False
    if dependencies:
        cfg.dependencies = True
    if reader is not None:
        cfg.reader = reader
    if read_options:
        cfg.read_options = {**cfg.read_options, **parse_read_options(read_options)}
    if seeds is not None:
        if not (seeds.isascii() and "_" not in seeds):  # as every integer option
            raise UsageError(f"--seeds {seeds!r}: expected numbers in ASCII digits, no underscores")
        cfg.seeds = _parse_seeds(seeds, "--seeds")
    if procs is not None:
        cfg.procs = procs
    if platform is not None:
        cfg.platform = platform
    if allocation is not None:
        cfg.allocation = allocation
    if metric_names:
        cfg.metrics = split_names(metric_names, "-m/--metric")
    if by is not None:
        cfg.by = by
    check_reader_flags(
        cfg.workloads,
        cfg.reader,
        cfg.read_options,
        options_flag="-R/--read-option" if read_options else "[read_options]",
        from_flag="--from" if reader is not None else "from =",
    )
    _check_seeds_used(cfg.workloads, cfg.seeds, None if seeds is None else f"--seeds {seeds}")
    target = Path(out or cfg.out or "sweep-results")
    label = "out (the sweep file's)" if cfg.out and not out else "--out"
    check_outputs([(label, out or cfg.out or "sweep-results")], folders=[label])
    refuse_file_parent(target, label, folder=True)
    cells = cfg.cells()
    if ci:
        from ..significance import scipy_stats

        scipy_stats()  # fail before running when scipy is missing
        check_ci_rows(cfg)  # and when the rows --ci compares would be missing
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
    click.echo(  # a status line (its time varies): on stderr, as every status line
        f"{len(cells)} cells: {len(outcome.computed)} run ({outcome.engine}), "
        f"{len(outcome.reused)} already finished; {outcome.seconds:.1f} s",
        err=True,
    )
    if outcome.damaged:
        count = len(outcome.damaged)
        shown = ", ".join(str(target / "cells" / f"{key}.json") for key in outcome.damaged[:3])
        more = f" and {count - 3:,} more" if count > 3 else ""
        click.echo(
            f"note: {count:,} damaged cell file{'s' if count > 1 else ''} (not a finished "
            f"record of {'their' if count > 1 else 'its'} cell) run again: {shown}{more}"
        )
    for line in summary_lines(outcome.records):
        click.echo(line)
    if ci:
        import json

        from ..experiment.sweep import write_atomic
        from ..measure import _clean
        from ..significance import sweep_significance
        from .metrics import wide_console

        assessed = sweep_significance(
            significance_rows(outcome.rows), level=level, resamples=resamples, seed=ci_seed
        )
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
        click.echo(f"wrote {path}", err=True)  # a status line: stderr (docs/cli.md)


def _check_seeds_used(workloads: Sequence[str], seeds: Sequence[int], given: str | None) -> None:
    """Seeds with no generator spec among ``workloads`` apply to nothing (a trace
    file is replayed as recorded, once): ``given`` on the command line (``--seeds
    1-3``) that is a one-line :class:`~schedlab.errors.UsageError`, as ``-R`` with only generator
    specs is; from the sweep file (``given`` ``None``: the file may serve other
    workloads) a one-line warning on stderr."""
    from ..api import generator_source
    from ..errors import UsageError
    from ..registry import get_registry

    if not seeds or not workloads:
        return
    registry = get_registry()
    if any(generator_source(w, registry) is not None for w in workloads):
        return
    text = (
        f"seeds apply to generator specs, not to the trace file {workloads[0]!r} "
        "(a trace is replayed once, as recorded)"
    )
    if given is not None:
        raise UsageError(f"{given}: {text}; drop --seeds")
    shown = ",".join(str(seed) for seed in seeds[:3]) + (",..." if len(seeds) > 3 else "")
    click.echo(f"schedlab: warning: seeds {shown} (the sweep file's): {text}", err=True)


def component_names(values: Sequence[str], flag: str) -> list[str]:
    """The components of a repeatable, comma-separated axis option (``-p fcfs,sjf
    -p psp:window=5,new_user_class=1``): a comma followed by ``key=value`` continues
    the options of the component before it, as in ``schedlab compare -p``. A value
    naming nothing, or a component given twice, is a one-line error naming ``flag``."""
    from ..errors import UsageError
    from ..experiment.config import _check_unique, _split_components

    out: list[str] = []
    for value in values:
        parts = [part for part in _split_components(value) if part]
        if not parts:
            raise UsageError(f"{flag} {value!r}: give a name (leave {flag} out for the default)")
        out.extend(parts)
    _check_unique(out, flag)
    return out


def check_ci_rows(cfg: Any) -> None:
    """Refuse ``--ci`` before any cell runs when the rows it compares would be
    missing: each metric's value of the ungrouped ``all`` row, which metric option
    ``total=false`` leaves out of a grouped sweep, and a per-job metric's ``mean``,
    which a ``stats`` option without ``mean`` leaves out (one-line
    :class:`~schedlab.errors.UsageError` naming the option)."""
    from ..errors import UsageError
    from ..measure import ENGINE_OPTIONS, parse_stats

    options = cfg.metric_options
    if cfg.by is not None and "total" in options:
        spec = next(o for o in ENGINE_OPTIONS if o.name == "total")
        if not spec.convert(options["total"], "metrics"):
            raise UsageError(
                f"--ci compares the ungrouped 'all' rows, which metric option total=false "
                f"leaves out of a sweep grouped by {cfg.by}: drop total=false or --ci"
            )
    if "stats" in options:
        stats, _ = parse_stats(options["stats"])
        if "mean" not in stats and _has_per_job_metric(cfg.metrics):
            raise UsageError(
                f"--ci compares the mean of each per-job metric, which metric option "
                f"stats={options['stats']!r} leaves out: add mean to stats"
            )


def _has_per_job_metric(names: Sequence[str] | None) -> bool:
    """Whether the sweep's metrics (``None``: every installed one) hold a per-job one."""
    from ..registry import get_registry

    registry = get_registry()
    if names is None:
        return any(spec.per_job for spec in registry.all("metric"))
    return any(registry.metric(name).per_job for name in names)


def summary_lines(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The console lines after a sweep: the jobs the simulator excluded (cells
    concerned, jobs by reason), then each distinct note of the cells with the number
    of cells it concerns (at most :data:`SHOWN_NOTES`, then how many more)."""
    lines: list[str] = []
    total = len(records)
    excluded_cells = 0
    excluded_jobs = 0
    reasons: dict[str, int] = {}
    notes: dict[str, int] = {}
    for record in records:
        stats = record.get("stats") or {}
        count = int(stats.get("jobs_excluded") or 0)
        if count:
            excluded_cells += 1
            excluded_jobs += count
            for reason, n in (stats.get("excluded") or {}).items():
                reasons[reason] = reasons.get(reason, 0) + int(n)
        for note in dict.fromkeys(record.get("notes") or ()):
            notes[note] = notes.get(note, 0) + 1
    if excluded_cells:
        why = ", ".join(f"{k} {v:,}" for k, v in reasons.items())
        lines.append(
            f"excluded: {excluded_jobs:,} jobs in {excluded_cells:,} of {total:,} cells"
            + (f" ({why})" if why else "")
            + ", left out of the simulation and the metrics (column jobs_excluded)"
        )
    for note, count in list(notes.items())[:SHOWN_NOTES]:
        lines.append(f"note ({count:,} of {total:,} cells): {note}")
    if len(notes) > SHOWN_NOTES:
        lines.append(f"... and {len(notes) - SHOWN_NOTES:,} more distinct notes (column notes)")
    return lines


def significance_rows(rows: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """The rows for :func:`~schedlab.significance.sweep_significance`, which tells
    combinations apart by policy, backfilling and options: when the sweep has more
    than one estimator, the estimator is put in front of the options, so that its
    combinations are not merged."""
    if len({row.get("estimator") for row in rows}) <= 1:
        return rows
    out = []
    for row in rows:
        options = f"estimator={row.get('estimator')}"
        if row.get("options"):
            options += f",{row['options']}"
        out.append({**row, "options": options})
    return out
