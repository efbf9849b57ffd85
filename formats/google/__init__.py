"""Google cluster-usage traces: the 2019 Borg trace (format v3) and the 2011 trace (v2).

Readers ``google`` (v3: a directory of table shards in JSON lines, Parquet or CSV,
or one shard) and ``google-v2`` (the 2011 CSV tables); writer ``google`` (a
directory of v3 tables that the reader reads back to the same jobs); CLI command
``google-dask`` (a Dask read of a large trace to partitioned Parquet or any
writer). The mapping to the common model is documented in
``docs/formats/google.md``; everything heavy (numpy work, pyarrow, dask) is
imported only when a trace is read.
"""

from __future__ import annotations

from typing import Any

from schedlab import CommandSpec, OptionSpec, ReaderSpec, WriterSpec, hookimpl

from .schema import DEFAULT_CPU_SCALE, DEFAULT_MEMORY_SCALE


def _bool(text: str) -> bool:
    return text.strip().lower() in {"1", "true", "yes", "on"}


_COMMON_OPTIONS = (
    OptionSpec("lenient", bool, False, "skip and count bad records instead of failing"),
    OptionSpec(
        "cpu_scale",
        float,
        DEFAULT_CPU_SCALE,
        "processors per normalized CPU unit (NCU); MaxProcs and job sizes use it",
    ),
    OptionSpec(
        "memory_scale",
        float,
        DEFAULT_MEMORY_SCALE,
        "SWF memory units per normalized memory unit",
    ),
    OptionSpec(
        "special_times",
        str,
        "unknown",
        "times before/after the trace: unknown (-1) or clip (to -600 s / the trace end)",
        choices=("unknown", "clip"),
    ),
    OptionSpec("tasks", bool, True, "build one Task per instance (with its events)"),
)

V3_OPTIONS = (
    *_COMMON_OPTIONS,
    OptionSpec(
        "engine",
        str,
        "auto",
        "auto (pyarrow JSON parser if installed), python, pyarrow, or dask",
        choices=("auto", "python", "pyarrow", "dask"),
    ),
    OptionSpec(
        "scheduler",
        str,
        None,
        "Dask scheduler address tcp://host:port (default: SCHEDLAB_DASK_SCHEDULER, "
        "else a local cluster)",
    ),
    OptionSpec("workers", int, 2, "workers of the local Dask cluster"),
    OptionSpec("partitions", int, None, "Dask shuffle partitions (default: from the shards)"),
    OptionSpec("installation", str, None, "cell name for the header (e.g. 'cell a')"),
)


def _read_v3(source: Any, **options: Any) -> Any:
    from .v3_reader import read_v3

    return read_v3(source, **options)


def _read_v2(source: Any, **options: Any) -> Any:
    from .v2_reader import read_v2

    return read_v2(source, **options)


def _sniff_v3(head: bytes, name: str) -> bool:
    from .v3_reader import sniff_v3

    return sniff_v3(head, name)


def _sniff_v2(head: bytes, name: str) -> bool:
    from .v2_reader import sniff_v2

    return sniff_v2(head, name)


def _write_v3(workload: Any, path: Any, **options: Any) -> None:
    from .v3_writer import write_v3

    write_v3(workload, path, **options)


def _load_command() -> Any:
    from .dask_reader import command

    return command


@hookimpl
def schedlab_readers() -> list[ReaderSpec]:
    """The ``google`` (v3, 2019) and ``google-v2`` (2011) readers."""
    return [
        ReaderSpec(
            name="google",
            aliases=("google-v3", "borg"),
            description="Google cluster-usage trace v3 (2019 Borg): directory of table shards",
            read=_read_v3,
            sniff=_sniff_v3,
            reads_directories=True,
            options=V3_OPTIONS,
        ),
        ReaderSpec(
            name="google-v2",
            aliases=("google2011",),
            description="Google cluster-usage trace v2 (2011): directory of CSV tables",
            read=_read_v2,
            sniff=_sniff_v2,
            reads_directories=True,
            options=_COMMON_OPTIONS,
        ),
    ]


@hookimpl
def schedlab_writers() -> list[WriterSpec]:
    """The ``google`` writer: a directory of v3 tables."""
    return [
        WriterSpec(
            name="google",
            aliases=("google-v3",),
            description="Google trace v3 tables (collection_events, instance_events) in a folder",
            write=_write_v3,
            writes_directories=True,
            options=(
                OptionSpec("compress", bool, True, "gzip the shards (.json.gz)"),
                OptionSpec("shard_rows", int, 1_000_000, "rows per shard file"),
                OptionSpec("cpu_scale", float, DEFAULT_CPU_SCALE, "processors per NCU"),
                OptionSpec("memory_scale", float, DEFAULT_MEMORY_SCALE, "memory per unit"),
            ),
        )
    ]


@hookimpl
def schedlab_cli_commands() -> list[CommandSpec]:
    """``schedlab google-dask``: read a big v3 trace on a Dask cluster."""
    return [
        CommandSpec(
            name="google-dask",
            description="Reduce a Google v3 trace on a Dask cluster to Parquet or any format.",
            load=_load_command,
        )
    ]
