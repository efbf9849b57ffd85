"""The hook implementations schedlab finds through the ``schedlab`` entry point."""

from __future__ import annotations

from schedlab import OptionSpec, ReaderSpec, WriterSpec, hookimpl


def _read(source, **options):  # noqa: ANN001, ANN003, ANN202 - thin lazy wrapper
    from .reader import read

    return read(source, **options)


def _sniff(head: bytes, name: str) -> bool:
    from .reader import sniff

    return sniff(head, name)


def _write(workload, path, **options):  # noqa: ANN001, ANN003, ANN202 - thin lazy wrapper
    from .writer import write

    return write(workload, path, **options)


def _job_numbers(text: str) -> str:
    if text not in ("sequence", "raw"):
        raise ValueError("expected 'sequence' or 'raw'")
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
                OptionSpec("header", bool, None, "write the header line (default: as read)"),
                OptionSpec("columns", str, None, "columns to write, separated by | or ,"),
                OptionSpec("timezone", str, None, "time zone to print times in"),
            ),
        )
    ]
