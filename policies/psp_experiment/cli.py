"""``schedlab experiment psp``: the command line of the PSP paper's experiment.

Registered by this plugin as the command ``experiment.psp`` (hook
``schedlab_cli_commands``), which ``schedlab experiment`` mounts as its ``psp``
subcommand.
"""

from __future__ import annotations

import click


@click.command("psp")
@click.option(
    "--workloads",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="Workloads (seeds) per scenario; the paper used 4.",
)
@click.option(
    "--seed", type=click.IntRange(min=0), default=1, show_default=True, help="First seed (>= 0)."
)
@click.option(
    "--out",
    "--output",
    "out",
    type=click.Path(file_okay=False),
    default="psp-results",
    show_default=True,
    help="Folder for tables, figures and finished cells (a rerun resumes; --output is the same).",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    help="Run the simulations on this Dask scheduler (e.g. tcp://host:8786) "
    "instead of local processes.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    help="Local worker processes (default: one per core).",
)
@click.option(
    "--weight",
    type=click.Choice(("users", "jobs")),
    default="users",
    show_default=True,
    help="Class averages over per-user mean waits (the paper's 'per user') or over jobs.",
)
@click.option(
    "--generator-option",
    "-G",
    "generator_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="psp-fing option for every workload, e.g. -G load=0.95 (see docs/experiments.md).",
)
@click.option(
    "--config",
    "config",
    type=click.Choice(("default", "slurm", "both")),
    default="default",
    show_default=True,
    help="default: psp + easy, a pass at every event. slurm: multifactor with PSP + age "
    "and the slurm backfill with its periodic passes (the paper's setting). both: the two.",
)
@click.option(
    "--priority-option",
    "-P",
    "priority_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="multifactor option of the slurm configuration, e.g. -P weight_age=500.",
)
@click.option(
    "--backfill-option",
    "-B",
    "backfill_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="slurm strategy option of the slurm configuration, e.g. -B bf_interval=60.",
)
@click.option(
    "--no-figures",
    "--no-figure",
    "no_figures",
    is_flag=True,
    help="Skip Figure 1 (no matplotlib needed; --no-figure is the same).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the tables as JSON.")
def psp(
    workloads: int,
    seed: int,
    out: str,
    scheduler: str | None,
    workers: int | None,
    weight: str,
    generator_options: tuple[str, ...],
    config: str,
    priority_options: tuple[str, ...],
    backfill_options: tuple[str, ...],
    no_figures: bool,
    as_json: bool,
) -> None:
    """Reproduce the PSP paper: 6 scenarios (BE, GE, CF, CFG, DI, HDI) x WORKLOADS
    generated Cluster FING workloads, simulated with PSP + EASY and the FCFS + EASY
    baseline. Prints Table 3 and the headline ratios beside the paper's, writes them
    as CSV and JSON, and draws Figure 1 (PNG and SVG) in OUT. --config slurm runs
    PSP as schedlab supposes the paper did (a factor of Slurm's multifactor priority
    next to age, with Slurm's backfill and periodic passes; the paper names no other
    factor); --config both runs both configurations.
    """
    import json
    import time

    from schedlab.experiment import parse_spec, require_plotting

    from .experiment import run_psp_experiment
    from .tables import render_tables

    options: dict[str, str] = {}
    for item in generator_options:
        pieces = [piece.partition("=") for piece in item.split(",")]
        if any(not sep or not key.strip() for key, sep, _ in pieces):
            raise click.UsageError(f"-G/--generator-option {item!r}: expected KEY=VALUE")
        for key, value in parse_spec(f"psp-fing:{item}")[1].items():
            if options.get(key, value) != value:  # the same twice passes
                raise click.UsageError(
                    f"-G/--generator-option {item!r}: option {key!r} given twice"
                )
            options[key] = value
    for reserved in ("seed", "scenario"):
        if reserved in options:
            raise click.UsageError(f"-G {reserved}=... is set by the experiment itself")
    priority = _key_values(priority_options, "-P")
    strategy = _key_values(backfill_options, "-B")
    if not no_figures:
        require_plotting()  # fail before simulating when matplotlib is missing
    began = time.perf_counter()
    experiment = run_psp_experiment(
        out,
        workloads=workloads,
        seed=seed,
        scheduler=scheduler,
        workers=workers,
        generator_options=options,
        weight=weight,
        figures=not no_figures,
        config=config,
        priority_options=priority,
        backfill_options=strategy,
    )
    elapsed = time.perf_counter() - began
    if as_json:
        document = {
            "settings": experiment.settings,
            "table3": experiment.table3,
            "ratios": experiment.ratios,
            "files": {k: str(v) for k, v in experiment.files.items()},
        }
        if experiment.comparison:
            document["comparison"] = experiment.comparison
        click.echo(json.dumps(document, indent=1))
        return
    from schedlab.experiment import print_table, table_console

    console = table_console()  # piped: as wide as the other commands' tables
    for table in render_tables(experiment):
        print_table(console, table)
        console.print()
    outcome = experiment.outcome
    # status lines (the time taken, the files written) on stderr, as every command's
    click.echo(
        f"{len(outcome.records)} simulations ({len(outcome.computed)} run now, "
        f"{len(outcome.reused)} reused from {out}) in {elapsed:.1f} s",
        err=True,
    )
    for name in (
        "table3.csv",
        "table3.json",
        "ratios.csv",
        "results.csv",
        "results.json",
        "figure1.png",
        "figure1.svg",
        "comparison.csv",
        "comparison.json",
        "figure1-slurm.png",
        "figure1-slurm.svg",
    ):
        if name in experiment.files:
            click.echo(f"wrote {experiment.files[name]}", err=True)


def _key_values(items: tuple[str, ...], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.UsageError(f"{flag} {item!r}: expected KEY=VALUE")
        if out.get(key.strip(), value.strip()) != value.strip():  # the same twice passes
            raise click.UsageError(f"{flag} {item!r}: option {key.strip()!r} given twice")
        out[key.strip()] = value.strip()
    return out
