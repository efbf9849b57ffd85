"""Reading a v3 trace on a Dask cluster (optional extra ``schedlab[dask]``).

The plan, for traces larger than one machine:

1. one task per shard parses it into a pandas frame (the same parsers as the
   in-process reader), partitioned by shard;
2. the collection_events, instance_events and instance_usage frames are shuffled
   on ``collection_id`` into the same number of partitions (a hash shuffle of the
   same key, so partition *i* of every table holds the same collections);
3. each partition is reduced with :func:`.reduce.reduce_collections`, the Dask
   group-by that turns events into one record per collection;
4. the records are either collected and mapped to a workload on the client (any
   writer can then write it), or flattened to one row per collection and written
   as partitioned Parquet without passing through the client.

The cluster is a local one started in-process by default; ``scheduler=`` (or
``SCHEDLAB_DASK_SCHEDULER``) connects to an existing one. Rows are ordered by
(time, shard, line) inside a collection, so the result equals the in-process
reader's whatever the partitioning.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import Any

import click
import numpy as np
from schedlab.errors import UsageError

from .capacity import capacity_timeline
from .frames import Rejects, concat_frames, empty_frame, frame_length
from .reduce import reduce_collections
from .schema import NULL_INT, TIME_AFTER_TRACE, TIME_BEFORE_TRACE, TIME_OFFSET_US, US

_EVENT_TABLES = ("collection_events", "instance_events", "instance_usage")
INSTALL_HINT = "the Dask engine needs the dask extra: pip install 'schedlab[dask]'"


def require_dask() -> tuple[Any, Any, Any]:
    """``(dask, dask.dataframe, distributed)`` or a one-line :class:`UsageError`."""
    try:
        import dask
        import dask.dataframe as dd
        import distributed
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    return dask, dd, distributed


@contextlib.contextmanager
def dask_client(
    scheduler: str | None = None, workers: int = 2, processes: bool = True
) -> Iterator[Any]:
    """A client of ``scheduler`` (``tcp://host:port``), of ``SCHEDLAB_DASK_SCHEDULER``,
    or of a local cluster with ``workers`` single-threaded workers (closed after)."""
    _, _, distributed = require_dask()
    address = scheduler or os.environ.get("SCHEDLAB_DASK_SCHEDULER") or None
    if address:
        try:
            # connection timeout: distributed.comm.timeouts.connect in the Dask config
            client = distributed.Client(address)
        except OSError as exc:
            raise UsageError(f"cannot reach the Dask scheduler {address}: {exc}") from None
        try:
            yield client
        finally:
            client.close()
        return
    cluster = distributed.LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=processes,
        dashboard_address=None,
        silence_logs=40,
    )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


# --------------------------------------------------------------------------- tasks


def _to_pandas(frame: dict[str, np.ndarray]) -> Any:
    import pandas as pd

    return pd.DataFrame({name: col for name, col in frame.items()}, copy=False)


def _from_pandas(df: Any, table: str) -> dict[str, np.ndarray]:
    if len(df) == 0:
        return empty_frame(table)
    template = empty_frame(table)
    return {name: df[name].to_numpy(dtype=template[name].dtype) for name in template}


def _parse_task(shard: Any, lenient: bool) -> tuple[Any, dict[str, Any], list[str], int]:
    """Worker side: one shard -> (pandas frame, reject counts, reject messages, rows)."""
    from .v3_reader import parse_shard

    rejects = Rejects()
    frame = parse_shard(shard, "auto", rejects if lenient else None)
    return _to_pandas(frame), rejects.as_dict(), rejects.messages, frame_length(frame)


def _item(pair: tuple[Any, ...], i: int) -> Any:
    return pair[i]


def _reduce_partition(ce: Any, ie: Any, iu: Any, keep_instances: bool) -> Any:
    """Worker side: whole collections -> one row per collection (a record dict)."""
    import pandas as pd

    records = reduce_collections(
        _from_pandas(ce, "collection_events"),
        _from_pandas(ie, "instance_events"),
        _from_pandas(iu, "instance_usage"),
    )
    if not keep_instances:
        for record in records:
            record["instances"] = []
    column = np.empty(len(records), dtype=object)
    column[:] = records
    return pd.DataFrame(
        {
            "collection_id": np.array([r["collection_id"] for r in records], dtype=np.int64),
            "record": column,
        }
    )


def _flat_partition(ce: Any, ie: Any, iu: Any) -> Any:
    """Worker side: whole collections -> one flat row per collection (for Parquet)."""
    import pandas as pd

    records = reduce_collections(
        _from_pandas(ce, "collection_events"),
        _from_pandas(ie, "instance_events"),
        _from_pandas(iu, "instance_usage"),
    )
    rows = flat_rows(records)
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(FLAT_COLUMNS)
    return pd.DataFrame(
        {
            name: pd.array(list(values), dtype=kind)
            for (name, kind), values in zip(FLAT_COLUMNS.items(), columns, strict=True)
        }
    )


#: Columns of the Parquet output: one row per collection, raw ids and times.
FLAT_COLUMNS: dict[str, str] = {
    "collection_id": "int64",
    "collection_type": "Int64",
    "submit_raw": "Int64",
    "schedule_raw": "Int64",
    "end_raw": "Int64",
    "end_type": "Int64",
    "priority": "Int64",
    "scheduling_class": "Int64",
    "alloc_collection_id": "Int64",
    "parent_collection_id": "Int64",
    "user": "object",
    "collection_name": "object",
    "collection_logical_name": "object",
    "instances": "int64",
    "requested_cpus": "float64",
    "requested_memory": "float64",
    "scheduled_cpus": "float64",
    "usage_windows": "int64",
    "cpu_seconds": "float64",
    "memory_mean": "float64",
    "events": "int64",
}


def _arrow_schema() -> Any:
    import pyarrow as pa

    types = {
        "int64": pa.int64(),
        "Int64": pa.int64(),
        "float64": pa.float64(),
        "object": pa.string(),
    }
    return pa.schema([(name, types[kind]) for name, kind in FLAT_COLUMNS.items()])


def flat_rows(records: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """One tuple per collection in :data:`FLAT_COLUMNS` order."""
    rows = []
    for r in records:
        t = r["totals"]
        rows.append(
            (
                r["collection_id"],
                r["collection_type"],
                r["submit"],
                r["schedule"],
                r["end"],
                r["end_type"],
                r["priority"],
                r["scheduling_class"],
                r["alloc_collection_id"],
                r["parent_collection_id"],
                r["user"],
                r["collection_name"],
                r["collection_logical_name"],
                t["instances"],
                t["cpus"] if t["cpus_known"] else np.nan,
                t["memory"] if t["memory_known"] else np.nan,
                t["scheduled_cpus"] if t["scheduled_cpus_known"] else np.nan,
                t["usage_windows"],
                t["cpu_seconds"],
                t["memory_mean"],
                len(r["events"]),
            )
        )
    return rows


def _real_max_time(df: Any) -> int:
    """Worker side: the last real event time in a frame (``NULL_INT`` if none)."""
    if len(df) == 0:
        return NULL_INT
    times = df["time"].to_numpy()
    real = times[(times != NULL_INT) & (times != TIME_BEFORE_TRACE) & (times != TIME_AFTER_TRACE)]
    return int(real.max()) if real.size else NULL_INT


# --------------------------------------------------------------------------- graph


def _graph(
    shards: Sequence[Any], lenient: bool, partitions: int | None
) -> tuple[dict[str, Any], list[Any], list[Any]]:
    """Delayed parse tasks and the three shuffled event frames."""
    _dask, dd, _ = require_dask()
    from dask import delayed

    parsed = {s.index: delayed(_parse_task)(s, lenient) for s in shards}
    by_table: dict[str, list[Any]] = {}
    for s in shards:
        by_table.setdefault(s.table, []).append(s)
    frames: dict[str, Any] = {}
    n_parts = partitions or max(1, min(64, len(by_table.get("instance_events", [])) or 1))
    for table in _EVENT_TABLES:
        meta = _to_pandas(empty_frame(table))
        pieces = [delayed(_item)(parsed[s.index], 0) for s in by_table.get(table, [])]
        if not pieces:
            pieces = [delayed(_to_pandas)(empty_frame(table))]
        ddf = dd.from_delayed(pieces, meta=meta, verify_meta=False)
        frames[table] = ddf.shuffle(on="collection_id", npartitions=n_parts)
    rejects = [
        (delayed(_item)(parsed[s.index], 1), delayed(_item)(parsed[s.index], 2)) for s in shards
    ]
    rows = [delayed(_item)(parsed[s.index], 3) for s in shards]
    frames["_parsed"] = parsed
    frames["_by_table"] = by_table
    return frames, rejects, rows


def _config() -> Any:
    dask, _, _ = require_dask()
    return dask.config.set({"dataframe.convert-string": False, "dataframe.shuffle.method": "tasks"})


def read_records_dask(
    shards: Sequence[Any],
    *,
    lenient: bool = False,
    scheduler: str | None = None,
    workers: int = 2,
    partitions: int | None = None,
    keep_instances: bool = True,
    client: Any = None,
) -> tuple[list[dict[str, Any]], dict[str, dict[str, int]], Rejects, dict[str, Any], float | None]:
    """Collection records of a trace computed on Dask, plus what the workload needs:
    ``(records, counts per table, rejects, capacity timeline, trace end)``."""
    dask, dd, _ = require_dask()
    with _config():
        frames, reject_parts, row_parts = _graph(shards, lenient, partitions)
        reduced = dd.map_partitions(
            _reduce_partition,
            frames["collection_events"],
            frames["instance_events"],
            frames["instance_usage"],
            keep_instances,
            meta={"collection_id": "int64", "record": "object"},
            align_dataframes=False,
        )
        machine = [
            dask.delayed(_item)(frames["_parsed"][s.index], 0)
            for s in frames["_by_table"].get("machine_events", [])
        ]
        ends = [
            dask.delayed(_real_max_time)(dask.delayed(_item)(frames["_parsed"][s.index], 0))
            for t in ("collection_events", "instance_events")
            for s in frames["_by_table"].get(t, [])
        ]
        with contextlib.ExitStack() as stack:
            if client is None:
                client = stack.enter_context(dask_client(scheduler, workers))
            parts, reject_values, row_values, machine_frames, end_values = client.compute(
                [reduced.to_delayed(), reject_parts, row_parts, machine, ends], sync=True
            )
    import pandas as pd

    result = pd.concat(parts, ignore_index=True)
    records = list(result.sort_values("collection_id", kind="stable")["record"])
    rejects = Rejects()
    for counts, messages in reject_values:
        part = Rejects()
        part.count = counts["total"]
        part.by_reason = dict(counts["by_reason"])
        part.messages = list(messages)
        rejects.merge(part)
    counts_out: dict[str, dict[str, int]] = {}
    for shard, rows in zip(shards, row_values, strict=True):
        entry = counts_out.setdefault(shard.table, {"shards": 0, "rows": 0})
        entry["shards"] += 1
        entry["rows"] += rows
    machine_frame = concat_frames(
        "machine_events", [_from_pandas(df, "machine_events") for df in machine_frames]
    )
    capacity = capacity_timeline(machine_frame)
    real_ends = [e for e in end_values if e != NULL_INT]
    trace_end = (max(real_ends) - TIME_OFFSET_US) / US if real_ends else None
    return records, counts_out, rejects, capacity, trace_end


def write_parquet_dask(
    shards: Sequence[Any],
    directory: str | os.PathLike[str],
    *,
    lenient: bool = False,
    scheduler: str | None = None,
    workers: int = 2,
    partitions: int | None = None,
    client: Any = None,
) -> int:
    """Reduce the trace on Dask and write one row per collection as partitioned
    Parquet (``part.N.parquet`` files) straight from the workers; returns the
    number of partitions."""
    _dask, dd, _ = require_dask()
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise UsageError("Parquet output needs pyarrow: pip install 'schedlab[parquet]'") from None
    import pandas as pd

    meta = pd.DataFrame({c: pd.Series(dtype=t) for c, t in FLAT_COLUMNS.items()})
    with _config():
        frames, _, _ = _graph(shards, lenient, partitions)
        flat = dd.map_partitions(
            _flat_partition,
            frames["collection_events"],
            frames["instance_events"],
            frames["instance_usage"],
            meta=meta,
            align_dataframes=False,
        )
        with contextlib.ExitStack() as stack:
            if client is None:
                client = stack.enter_context(dask_client(scheduler, workers))
            flat.to_parquet(
                os.fspath(directory), write_index=False, compute=True, schema=_arrow_schema()
            )
    return flat.npartitions


# --------------------------------------------------------------------------- CLI


@click.command(name="google-dask")
@click.argument("source", type=click.Path(exists=True))
@click.argument("output", type=click.Path())
@click.option(
    "--scheduler",
    default=None,
    help="Dask scheduler tcp://host:port (default: SCHEDLAB_DASK_SCHEDULER, else a local cluster).",
)
@click.option("--workers", default=2, show_default=True, help="Workers of the local cluster.")
@click.option("--partitions", default=None, type=int, help="Shuffle partitions.")
@click.option(
    "--parquet",
    is_flag=True,
    help="Write one row per collection as partitioned "
    "Parquet into OUTPUT (a directory) instead of a trace file.",
)
@click.option("--to", "to_format", default=None, help="Output format (default: from the suffix).")
@click.option("--lenient", is_flag=True, help="Skip and count bad records.")
@click.option("--no-tasks", is_flag=True, help="Do not keep per-instance tasks (less memory).")
def command(
    source: str,
    output: str,
    scheduler: str | None,
    workers: int,
    partitions: int | None,
    parquet: bool,
    to_format: str | None,
    lenient: bool,
    no_tasks: bool,
) -> None:
    """Reduce a Google v3 trace (SOURCE: a directory of shards) on a Dask cluster and
    write OUTPUT: any trace format (e.g. out.swf), or partitioned Parquet."""
    require_dask()
    from schedlab.api import write

    from .v3_reader import discover, read_v3

    if parquet:
        count = write_parquet_dask(
            discover(source),
            output,
            lenient=lenient,
            scheduler=scheduler,
            workers=workers,
            partitions=partitions,
        )
        click.echo(f"wrote {count} Parquet partitions to {output}")
        return
    workload = read_v3(
        source,
        engine="dask",
        scheduler=scheduler,
        workers=workers,
        partitions=partitions,
        lenient=lenient,
        tasks=not no_tasks,
    )
    write(workload, output, format=to_format)
    skipped = workload.meta["skipped"]
    click.echo(
        f"wrote {len(workload)} jobs to {output}"
        + (f" ({skipped} records skipped)" if skipped else "")
    )
