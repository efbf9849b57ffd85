"""``schedlab convert``: read a trace in one format and write it in another.

The reader is chosen by ``--from``, else by IN's suffix, else by its content; the
writer by ``--to``, else by OUT's suffix (compression suffixes are honoured on both
sides). IN may also be a generator spec such as ``psp-fing:scenario=CF,seed=3``.
Output is staged in a temporary file and renamed into place by
:func:`schedlab.write`, so a failed conversion never leaves a partial OUT. Readers
that stream (SWF files above a size) are converted in constant memory.

``--lenient`` reads leniently (bad records skipped and counted); ``--rejects FILE``
implies it and writes there the skipped records the reader lists in
``meta["rejects"]`` (verbatim, one per line). The count goes to stderr, and says
so when the reader listed fewer records than it skipped (none: FILE is empty;
some: how many FILE holds). Without ``--lenient`` the first bad record stops the
conversion with one line naming file, line and field (exit 2).

After writing, ``convert`` prints what the writer could not carry (field, number of
records, what was done instead; see :mod:`schedlab.losses` and
docs/formats/conversions.md): a summary of at most 12 lines (header labels and
per-job extras folded into one line each), which says when it left something out;
``--all-losses`` prints every loss, one line per field and action.
``--strict-lossless`` makes any loss an error: one line naming the first lost field
and its count and how many kinds of loss there are, exit 2, and OUT left untouched
(with ``--all-losses`` the whole list is printed before the error).

A writer that reports nothing at all (it never opens :func:`schedlab.writer_losses`:
a plugin written before loss reports) cannot say what it lost: its losses are
unknown, and its silence proves nothing. By default the output is written with one
warning naming the writer; ``--strict-lossless`` refuses it (one line naming the
writer, exit 2, nothing written), since it cannot check the conversion. A writer
that carries everything says so by opening the block and reporting nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import click

from .flags import (
    FlagCommand,
    check_outputs,
    check_reader_flags,
    key_values,
    merge_flag,
    option_strings,
    parse_read_options,
    read_option,
)

if TYPE_CHECKING:
    from pathlib import Path

    from ..losses import Losses

#: The flag printing the whole loss report (:func:`all_losses_option`).
ALL_LOSSES_FLAG = "--all-losses"


def all_losses_option() -> Callable[[Any], Any]:
    """The ``--all-losses`` flag (stored as ``all_losses``) of a command that writes
    a workload in a format the user chooses and prints :func:`echo_losses`."""
    return click.option(
        ALL_LOSSES_FLAG,
        "all_losses",
        is_flag=True,
        help="Print every loss of the conversion, one line per field and action "
        "(default: a summary of at most 12 lines).",
    )


def _reader_for(source: str, from_: str | None) -> Any:
    from ..api import detect_reader, generator_source
    from ..registry import get_registry

    registry = get_registry()
    if from_:
        return registry.reader(from_)
    if generator_source(source, registry) is not None or not os.path.exists(source):
        return None  # a generator spec, or a missing file: read() says which
    return detect_reader(source, registry)


def write_rejects(path: str, rejects: list[Any]) -> int:
    """Write rejected records (``(line, text)`` pairs, ``(line, text, reason)``
    triples or plain texts) to ``path``: the record's text, one per line."""
    from ..io import open_output

    with open_output(path) as fh:
        for item in rejects:
            text = item[1] if isinstance(item, (tuple, list)) else item
            fh.write(f"{text}\n")
    return len(rejects)


@click.command("convert", cls=FlagCommand)
@click.argument("source", metavar="IN")
@click.argument("target", metavar="OUT")
@click.option("--from", "from_", metavar="NAME", help="Reader (default: by suffix/content).")
@click.option("--to", "to", metavar="NAME", help="Writer (default: by OUT's suffix).")
@click.option("--lenient", is_flag=True, help="Skip and count bad records instead of failing.")
@click.option(
    "--rejects",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Write the skipped records the reader lists to FILE (implies --lenient).",
)
@read_option("--option")
@click.option(
    "--write-option",
    "-W",
    "write_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="Writer option (repeatable), e.g. -W extra_columns=true.",
)
@click.option(
    "--strict-lossless",
    is_flag=True,
    help="Fail (exit 2, nothing written) if the target cannot carry every field.",
)
@all_losses_option()
def command(
    source: str,
    target: str,
    from_: str | None,
    to: str | None,
    lenient: bool,
    rejects: str | None,
    read_options: tuple[str, ...],
    write_options: tuple[str, ...],
    strict_lossless: bool,
    all_losses: bool,
) -> None:
    """Convert IN to OUT (formats by name, else suffix, else content)."""
    from ..api import read, write
    from ..errors import UsageError
    from ..losses import LossError, collect_losses
    from ..validation import skipped_count

    read_opts: dict[str, Any] = parse_read_options(read_options)
    if lenient or rejects:
        reader = _reader_for(source, from_)
        if reader is not None and "lenient" not in {o.name for o in reader.options}:
            raise UsageError(f"reader {reader.name!r} has no lenient mode")
        flag = "--lenient" if lenient else "--rejects (which implies --lenient)"
        merge_flag(read_opts, "lenient", True, flag, "-R/--read-option")
        read_opts["lenient"] = "true"
    if target == "-" and not to:
        raise UsageError("OUT '-' (standard output) needs --to NAME: there is no suffix")
    check_outputs([("OUT", target), ("--rejects", rejects)], [("IN", source)], stdout=["OUT"])
    check_reader_flags([source], from_, read_options)
    # The writer and its options are checked before IN is read (a large trace can
    # take minutes): an OUT whose name picks no writer is refused at once.
    write_opts = key_values(write_options, "-W/--write-option")
    name = writer_name(target, to)
    workload = read(source, format=from_, **read_opts)
    try:
        with collect_losses(strict=strict_lossless) as losses:
            # (strict: a writer reporting nothing is refused by write itself)
            if target == "-":
                written = _write_to_stdout(workload, to, write_opts)
            else:
                written = write(workload, target, format=to, **write_opts)
    except LossError as exc:
        if all_losses:
            _echo_heading(
                "standard output" if target == "-" else os.path.basename(target), "would not"
            )
            _echo_lines(str(loss) for loss in losses)
        raise exc.pointing_to(ALL_LOSSES_FLAG, listed=all_losses) from None
    skipped = skipped_count(workload.meta)
    listed = write_rejects(rejects, list(workload.meta.get("rejects") or ())) if rejects else 0
    findings = workload.meta.get("findings") or ()
    serious = sum(1 for f in findings if getattr(f, "severity", "") in ("error", "warning"))
    if serious:
        click.echo(
            f"schedlab: {serious} finding(s) in {source} (`schedlab validate` lists them)",
            err=True,
        )
    if skipped:
        where = _rejects_note(skipped, listed, rejects, workload.meta.get("reader"))
        click.echo(f"schedlab: skipped {skipped} bad record(s){where}", err=True)
    shown = "standard output" if target == "-" else written
    click.echo(f"schedlab: wrote {shown}", err=True)
    echo_losses(losses, written, all_losses=all_losses, writer=name)


def writer_name(target: str | os.PathLike[str], to: str | None) -> str:
    """The name of the writer that writes ``target``: ``to``'s canonical name when
    given, else the one OUT's suffix picks (a one-line error when none does)."""
    from ..api import detect_writer
    from ..registry import get_registry

    registry = get_registry()
    spec = registry.writer(to) if to else detect_writer(target, registry)
    return str(spec.name)


def _rejects_note(skipped: int, listed: int, rejects: str | None, reader: Any) -> str:
    """What the ``skipped N bad record(s)`` line adds: where the skipped records
    went. A reader may count records without listing them (``meta["skipped"]``
    without ``meta["rejects"]``), or list only some: FILE holds ``listed`` records,
    and the note says so rather than claim it holds them all."""
    if not rejects:
        return " (--rejects FILE keeps them)"
    if listed >= skipped:
        return f" (written to {rejects})"
    who = f"reader {reader!r}" if reader else "the reader"
    if not listed:
        return f"; {who} does not list them, so {rejects} is empty"
    return f"; {who} lists only {listed} of them, written to {rejects}"


def _write_to_stdout(
    workload: Any,
    to: str | None,
    options: dict[str, Any],
) -> Path:
    """Write ``workload`` with writer ``to`` to standard output (``OUT`` is ``-``):
    into a temporary folder first (writers write files), then its bytes, unchanged
    (no compression: there is no suffix). A
    writer that writes a folder (several files) cannot: a one-line error asks for a
    file name. Returns ``Path("-")``."""
    import shutil
    import sys
    import tempfile
    from pathlib import Path

    from ..api import write
    from ..errors import UsageError

    with tempfile.TemporaryDirectory(prefix="schedlab-stdout-") as tmp:
        written = write(workload, Path(tmp) / "out", format=to, **options)
        if not written.is_file():
            raise UsageError(f"writer {to!r} writes several files: give OUT a file name, not '-'")
        with open(written, "rb") as fh:
            sys.stdout.flush()
            shutil.copyfileobj(fh, sys.stdout.buffer)
            sys.stdout.buffer.flush()
    return Path("-")


def _echo_heading(name: str, verb: str = "could not") -> None:
    from ..losses import loss_heading

    click.echo(loss_heading(name, verb), err=True)


def _echo_lines(lines: Iterable[str]) -> None:
    for line in lines:
        click.echo(f"  {line}", err=True)


def _summary(losses: Losses) -> list[str]:
    """:meth:`Losses.summary`, with a hint at ``--all-losses`` when it left lines
    or folded names out and the running command has that flag."""
    context = click.get_current_context(silent=True)
    has_flag = context is not None and ALL_LOSSES_FLAG in option_strings(context.command)
    return losses.report_lines(flag=ALL_LOSSES_FLAG if has_flag else None)


def echo_losses(
    losses: Losses,
    written: Path,
    *,
    all_losses: bool = False,
    writer: str | None = None,
) -> None:
    """Print on stderr what the writer of ``written`` (a path) could not carry, as
    collected by :func:`schedlab.collect_losses` around :func:`schedlab.write` (and
    one warning naming ``writer`` when it reported nothing at all: its losses are
    unknown): ``convert`` and every other command writing a workload in a format the
    user chooses (``simulate -o``).

    The default is :meth:`Losses.summary` (at most 12 lines), which ends with a hint
    at ``--all-losses`` when it leaves something out and the running command has
    that flag (:func:`all_losses_option`); ``all_losses`` prints every loss, one
    line per field and action."""
    if not losses.reports:
        # a third-party writer that predates loss reports: say so rather than
        # let silence pass for a lossless conversion (--strict-lossless refuses it)
        who = f"writer {writer!r}" if writer else "the writer"
        click.echo(
            f"schedlab: warning: {who} does not report what it could not carry (losses unknown)",
            err=True,
        )
    if losses:
        _echo_heading(written.name if str(written) != "-" else "standard output")
        _echo_lines((str(loss) for loss in losses) if all_losses else _summary(losses))
