"""The hook implementations schedlab finds through the ``schedlab`` entry point."""

from __future__ import annotations

from typing import Any

from schedlab import OptionSpec, ReaderSpec, WriterSpec, hookimpl

# The reader and writer modules are imported on first use only, so loading the
# plugin (which every ``schedlab`` command may do) stays cheap.


def _read(source: Any, **options: Any) -> Any:
    from .reader import read

    return read(source, **options)


def _sniff(head: bytes, name: str) -> bool:
    from .reader import sniff

    return sniff(head, name)


def _write(workload: Any, path: Any, **options: Any) -> None:
    from .writer import write

    write(workload, path, **options)


def _job_numbers(text: str) -> str:
    if text not in ("sequence", "raw"):
        raise ValueError("expected 'sequence' or 'raw'")
    return text


def _order(text: str) -> str:
    if text not in ("submit", "file"):
        raise ValueError("expected 'submit' or 'file'")
    return text


def _duplicates(text: str) -> str:
    if text not in ("all", "last", "error"):
        raise ValueError("expected 'all', 'last' or 'error'")
    return text


@hookimpl
def schedlab_readers() -> list[ReaderSpec]:
    """The ``slurm`` reader: ``sacct --parsable2`` output, with or without header."""
    return [
        ReaderSpec(
            name="slurm",
            aliases=("sacct",),
            description="Slurm accounting: sacct --parsable2 output (jobs, steps folded in)",
            read=_read,
            sniff=_sniff,
            suffixes=(".sacct",),
            options=(
                OptionSpec("lenient", bool, False, "skip and count bad records"),
                OptionSpec("columns", str, None, "column order of a file without header"),
                OptionSpec("timezone", str, "UTC", "time zone of the printed times"),
                OptionSpec(
                    "job_numbers", _job_numbers, "sequence", "sequence (1, 2 ...) or raw (JobIDRaw)"
                ),
                OptionSpec("order", _order, "submit", "submit (sorted, as SWF wants) or file"),
                OptionSpec(
                    "duplicates",
                    _duplicates,
                    "all",
                    "a job printed again with other fields (sacct --duplicates: the runs "
                    "of a requeued job): all (each run a job, with a warning), last (the "
                    "last run is the job) or error",
                ),
            ),
        )
    ]


@hookimpl
def schedlab_writers() -> list[WriterSpec]:
    """The ``slurm`` writer: ``sacct --parsable2`` output."""
    return [
        WriterSpec(
            name="slurm",
            aliases=("sacct",),
            description="Slurm accounting: sacct --parsable2 output",
            write=_write,
            suffixes=(".sacct",),
            options=(
                OptionSpec(
                    "header",
                    bool,
                    None,
                    "write the header line (default: as read); without it, columns "
                    "other than Open XDMoD's order are reported (read back with -R columns=)",
                ),
                OptionSpec(
                    "columns",
                    str,
                    None,
                    "columns to write, separated by | or , (sacct's names, in any case; "
                    "default: as read, else schedlab-slurm's list, Open XDMoD's order "
                    "with header=false)",
                ),
                OptionSpec(
                    "timezone",
                    str,
                    None,
                    "time zone to print times in (default UTC, or the zone a sacct dump "
                    "was read in); another than UTC is reported",
                ),
            ),
        )
    ]
