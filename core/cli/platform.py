"""``schedlab platform``: work with platform files (see ``docs/platform.md``)."""

from __future__ import annotations

import os
from typing import Any

import click

from .flags import (
    FlagCommand,
    check_outputs,
    check_reader_flags,
    merge_flag,
    parse_read_options,
    read_option,
    refuse_wrong_suffix,
)


@click.group("platform")
def command() -> None:
    """Platform files: the machine (node groups, partitions, sharing) a trace runs on."""


@command.command("infer", cls=FlagCommand)
@click.argument("trace", metavar="TRACE")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    required=True,
    help="Platform file (TOML) to write.",
)
@click.option("--from", "reader", metavar="FORMAT", help="Input format (default: detected).")
@click.option("--lenient", is_flag=True, help="Read the trace leniently (e.g. extended SWF).")
@read_option()
def infer(
    trace: str, output: str, reader: str | None, lenient: bool, read_options: tuple[str, ...]
) -> None:
    """Write a starting platform file for TRACE from what its header and records tell
    (SWF MaxNodes/MaxProcs, Partition: and Queue: tables; Grid Engine hosts and
    queues; Google machine capacities), then print every guess it made, one per line.
    """
    from ..api import read
    from ..io import staged_output
    from ..platform import dumps_platform, infer_platform, load_platform

    check_outputs([("-o/--output", output)], [("TRACE", trace)])
    refuse_wrong_suffix(output, "-o/--output", [".toml"], "a TOML platform file")
    options: dict[str, Any] = dict(parse_read_options(read_options))
    if lenient:
        merge_flag(options, "lenient", True, "--lenient", "-R/--read-option")
    check_reader_flags([trace], reader, options)
    workload = read(trace, format=reader, **options)
    found = infer_platform(workload)
    # The trace's file name, not the path given: the same file inferred from any
    # folder, by an absolute or a relative path, gives the same bytes.
    name = os.path.basename(os.path.normpath(trace)) if os.path.exists(trace) else trace
    comments = [f"Inferred by `schedlab platform infer` from {name}.", "Guesses:"]
    comments += [f"- {g}" for g in found.guesses]
    text = dumps_platform(found.platform, comments)
    with staged_output(output) as staged:
        staged.write_text(text, encoding="utf-8")
        if staged.is_file():  # not a device such as /dev/null
            load_platform(staged)  # what is written must load; never leave a bad file
    p = found.platform
    click.echo(  # a status line: stderr (docs/cli.md); the guesses are the output
        f"wrote {output}: {p.total_nodes} nodes, {p.total_cores} cores, "
        f"{len(p.partitions)} partition(s)",
        err=True,
    )
    for guess in found.guesses:
        click.echo(f"guess: {guess}")


@command.command("check", cls=FlagCommand)
@click.argument("path", metavar="FILE.toml")
def check(path: str) -> None:
    """Validate a platform file and summarise it; a mistake is one line naming the
    TOML key (exit status 2)."""
    from ..platform import load_platform

    p = load_platform(path)
    click.echo(
        f"{path}: {len(p.node_groups)} node group(s), {p.total_nodes} nodes, "
        f"{p.total_cores} cores, {len(p.partitions)} partition(s)"
    )
    for part in p.partitions:
        limits = [
            f"{k}={v}"
            for k, v in (("max_time", part.max_time), ("max_nodes", part.max_nodes))
            if v is not None
        ]
        click.echo(
            f"  {part.name}: nodes {', '.join(part.nodes)}; tier {part.priority_tier}; "
            f"{part.sharing}; queues {', '.join(map(_queue_name, part.queues)) or '-'}"
            + (f"; {', '.join(limits)}" if limits else "")
        )


def _queue_name(name: str) -> str:
    """A queue name as the summary shows it: quoted when empty or holding a comma or
    blank, so that ``queues '', 0`` is two queues (an SWF header may name a queue
    with nothing)."""
    return repr(name) if not name or any(c in name for c in ", \t") else name
