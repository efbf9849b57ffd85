"""``schedlab experiment estimates``: the command line of the estimates experiment.

Registered by this plugin as the command ``experiment.estimates`` (hook
``schedlab_cli_commands``), which ``schedlab experiment`` mounts as its
``estimates`` subcommand.
"""

from __future__ import annotations

import click

from .experiment import DEFAULT_CORRECTIONS, DEFAULT_ESTIMATORS, ORDERS, split_estimators


def _distinct_estimators(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """``--estimators`` with an item typed twice (``actual,actual``) refused, naming
    the item as typed (not the label it would get in the tables)."""
    items = split_estimators(value)
    for index, item in enumerate(items):
        if item in items[:index]:
            raise click.UsageError(f"--estimators: {item!r} is given twice")
    return value


@click.command("estimates")
@click.option(
    "--workload",
    "-w",
    "workloads",
    multiple=True,
    required=True,
    metavar="PATH|SPEC",
    help="A trace file or a generator spec (repeatable), e.g. "
    "-w ../shared/data/swf/KTH-SP2-1996-2.1-cln.swf.gz -w lublin:jobs=20000,estimates=tsafrir.",
)
@click.option(
    "--estimators",
    callback=_distinct_estimators,
    default=",".join(DEFAULT_ESTIMATORS),
    show_default=True,
    metavar="LIST",
    help="Predictors, each simulated with FCFS + EASY (comma-separated; options as "
    "NAME:key=value,key=value). EASY on user estimates is always run, as the baseline.",
)
@click.option(
    "--correction",
    "corrections",
    default=",".join(DEFAULT_CORRECTIONS),
    show_default=True,
    metavar="LIST",
    help="Correction rules of the predictors (tsafrir, requested, none; "
    "comma-separated: one configuration per rule).",
)
@click.option(
    "--order",
    type=click.Choice(ORDERS),
    default="paper",
    show_default=True,
    help="Backfill order: paper = shortest prediction first (SJBF) for easy++ only, as "
    "the EASY++ paper; priority = queue order everywhere; sjbf = SJBF everywhere.",
)
@click.option("--no-psp", is_flag=True, help="Leave out PSP + EASY.")
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    help="Keep the first N jobs of every workload (default: all).",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="Seed (>= 0) of the generator specs that name none.",
)
@click.option(
    "--output",
    "--out",
    "output",
    type=click.Path(file_okay=False),
    default="estimates-results",
    show_default=True,
    help="Folder for estimates.{csv,json,txt}, classes.csv and estimates.png (--out is the same).",
)
@click.option(
    "--from",
    "reader",
    metavar="FORMAT",
    help="Input format of the trace files (default: detected).",
)
@click.option(
    "--read-option",
    "-R",
    "read_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="Reader option for the trace files (repeatable), e.g. -R lenient=true "
    "(`schedlab plugins READER` lists a reader's options).",
)
@click.option(
    "--no-figure",
    "--no-figures",
    "no_figure",
    is_flag=True,
    help="Skip the figure (no matplotlib needed; --no-figures is the same).",
)
@click.option("--json", "as_json", is_flag=True, help="Print estimates.json instead of the table.")
@click.option("--quiet", is_flag=True, help="No progress lines on standard error.")
def estimates(
    workloads: tuple[str, ...],
    estimators: str,
    corrections: str,
    order: str,
    no_psp: bool,
    jobs: int | None,
    seed: int,
    output: str,
    reader: str | None,
    read_options: tuple[str, ...],
    no_figure: bool,
    as_json: bool,
    quiet: bool,
) -> None:
    """Reward accurate users, or predict for them? Simulates every workload with
    FCFS + EASY on user estimates (the baseline), PSP + EASY on user estimates, and
    FCFS + EASY planning with each predictor (corrected when a job outlives its
    prediction; easy++ with SJBF backfilling, the EASY++ paper's configuration), and
    reports mean wait, mean bounded slowdown and the prediction metrics, overall
    (estimates.csv) and per accuracy class of the users (classes.csv), with a
    Markdown table (estimates.txt) and a figure (estimates.png) in OUTPUT.
    """
    import json
    import time

    from .experiment import _clean, run_estimates_experiment

    def progress(workload: str, configuration: str, seconds: float) -> None:
        if not quiet:
            click.echo(f"{workload}: {configuration} ({seconds:.1f} s)", err=True)

    _check_reader_flags(workloads, reader, read_options)
    _check_seed_used(workloads, seed)  # the output folder: checked by `schedlab experiment`
    began = time.perf_counter()
    experiment = run_estimates_experiment(
        workloads,
        output,
        estimators=estimators,
        corrections=corrections,
        order=order,
        psp=not no_psp,
        jobs=jobs,
        seed=seed,
        figure=not no_figure,
        progress=progress,
        reader=reader,
        read_options=_key_values(read_options, "-R/--read-option"),
    )
    if as_json:
        click.echo(json.dumps(_clean(experiment.document()), indent=1, allow_nan=False))
        return
    click.echo(experiment.files["estimates.txt"].read_text(encoding="utf-8"), nl=False)
    if not quiet:
        click.echo(
            f"{len(experiment.rows)} simulations in {time.perf_counter() - began:.1f} s",
            err=True,
        )
        for path in experiment.files.values():
            click.echo(f"wrote {path}", err=True)


def _check_reader_flags(
    workloads: tuple[str, ...], reader: str | None, read_options: tuple[str, ...]
) -> None:
    """``--from`` and ``-R`` as in every command (docs/cli.md): an unknown reader is
    an error naming ``--from``; both are for the trace files among the workloads, an
    error when every workload is a generator spec."""
    from schedlab import get_registry

    registry = get_registry()
    if reader is not None and not registry.has("reader", reader):
        names = ", ".join(sorted(r.name for r in registry.all("reader")))
        raise click.UsageError(f"--from {reader!r}: unknown reader (available: {names})")
    if reader is None and not read_options:
        return
    if workloads and all(_is_spec(w) for w in workloads):
        what = f"--from {reader}" if reader is not None else f"-R/--read-option {read_options[0]}"
        raise click.UsageError(
            f"{what}: reader options apply to trace files, not to the generator spec "
            f"{workloads[0]!r} (give the generator's options in the spec: NAME:KEY=VALUE,...)"
        )


def _check_seed_used(workloads: tuple[str, ...], seed: int) -> None:
    """``--seed`` given when no workload takes it seeds nothing: every workload is a
    trace file (a trace is replayed as recorded) or a generator spec that names its
    own seed (or whose generator takes none). A one-line error, as ``-R`` with only
    generator specs is (``sweep --seeds`` alike). The default seed is never an
    error."""
    from click.core import ParameterSource
    from schedlab import UsageError

    ctx = click.get_current_context()
    if ctx.get_parameter_source("seed") in (ParameterSource.DEFAULT, None):
        return
    if not workloads or any(_takes_seed(w) for w in workloads):
        return
    specs = [w for w in workloads if _is_spec(w)]
    if not specs:
        raise UsageError(
            f"--seed {seed}: seeds apply to generator specs, not to the trace file "
            f"{workloads[0]!r} (a trace is replayed once, as recorded); drop --seed"
        )
    if len(specs) == 1:
        why = "names its own seed" if "seed" in _spec_options(specs[0]) else "takes no seed"
        what = f"the generator spec {specs[0]!r} {why}"
    else:
        what = (
            "every generator spec names its own seed or takes none ("
            + ", ".join(repr(s) for s in specs)
            + ")"
        )
    if len(specs) < len(workloads):
        what += " and a trace file is replayed as recorded"
    raise UsageError(f"--seed {seed}: no workload takes it: {what}; drop --seed")


def _spec_options(workload: str) -> dict[str, str]:
    """The options of the generator spec ``workload`` (``{}`` when malformed)."""
    from schedlab import SchedlabError
    from schedlab.experiment import parse_spec

    try:
        return dict(parse_spec(workload)[1])
    except SchedlabError:
        return {}


def _takes_seed(workload: str) -> bool:
    """Whether ``--seed`` reaches ``workload``: a generator spec naming no seed whose
    generator takes one (``resolve_workload`` adds ``seed=S`` to it)."""
    from schedlab import get_registry
    from schedlab.experiment import parse_spec

    if not _is_spec(workload):
        return False
    spec = get_registry().get("generator", parse_spec(workload)[0])
    return "seed" not in _spec_options(workload) and any(o.name == "seed" for o in spec.options)


def _is_spec(workload: str) -> bool:
    """Whether ``workload`` is a generator spec (``lublin:jobs=50``), not a file."""
    import os

    from schedlab import SchedlabError, get_registry
    from schedlab.experiment import parse_spec

    if os.path.exists(workload):
        return False
    try:
        return get_registry().has("generator", parse_spec(workload)[0])
    except SchedlabError:  # a malformed spec: reported when it is read
        return False


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
