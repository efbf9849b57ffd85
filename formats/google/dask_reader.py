"""Reading a v3 trace on a Dask cluster (optional extra ``schedlab[dask]``).

The plan, for traces larger than one machine, is a group-by by collection id run
as a Dask task graph (the same map/shuffle/reduce a Dask DataFrame group-by
builds, but on numpy frames, which move between workers far faster than pandas
frames with Python objects):

1. map: one task per shard parses it (the same parsers as the in-process reader)
   into numeric columns (objects only for the hashed names and repeated fields)
   and splits its rows into ``partitions`` buckets by a hash of the collection id;
2. shuffle: bucket *b* of every collection_events, instance_events and
   instance_usage shard goes to the reduce task *b*, so each reduce task holds
   every row of its collections;
3. reduce: :func:`.reduce.reduce_collections` turns them into columnar results,
   one row per collection (and, unless ``keep_instances=False``, per instance);
4. the columns are gathered (numpy arrays: cheap to move) and mapped to a
   workload on the client (any writer can then write it), or flattened to one
   row per collection and written as partitioned Parquet (a Dask DataFrame built
   from the reduce tasks) without passing through the client.

The heavy work (decompression, JSON, sorting, the group-by) runs on the workers;
the client only joins the columns and builds the job objects.

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
from schedlab.io import check_outputs

from .capacity import capacity_timeline
from .frames import Rejects, concat_frames, frame_length
from .reduce import NULL_INT as _NULL
from .reduce import (
    Reduced,
    all_known,
    collection_type_of,
    concat_reduced,
    drop_instances,
    reduce_collections,
    usage_known,
)
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


#: Allocator settings for the worker processes of the local cluster. Dask starts
#: workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which also turns off glibc's
#: adaptive mmap threshold: every block buffer and column over 128 KiB is then a
#: fresh mapping, page-faulted in and unmapped again (10x the page faults and about
#: 30 % more worker CPU on this reader, measured). Blocks and columns up to 64 MiB
#: come from the heap instead, and up to 256 MiB of free heap is kept for reuse.
#: Set ``distributed.nanny.pre-spawn-environ`` likewise for a cluster of your own.
WORKER_MALLOC_CONFIG = {
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": 256 << 20,
    "distributed.nanny.pre-spawn-environ.MALLOC_MMAP_THRESHOLD_": 64 << 20,
}


#: The most shuffle partitions (``partitions=``, ``--partitions``): each is a reduce
#: task fed by one piece of every event shard (and one Parquet file), so the task
#: graph grows as partitions x shards; the default is at most 64.
_MAX_PARTITIONS = 1024


def _max_workers() -> int:
    """The most workers of the local cluster: the CPUs this process may run on (its
    affinity mask where the system has one), and at least the default of 2."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(2, cpus)


def _check_workers(workers: Any) -> None:
    """A one-line :class:`UsageError` unless ``workers`` (the local cluster's
    single-threaded worker processes) is an integer from 1 to :func:`_max_workers`:
    more workers than CPUs only cost memory, and a huge number would never start."""
    cpus = _max_workers()
    if isinstance(workers, bool) or not isinstance(workers, int | np.integer):
        raise UsageError(f"workers={workers!r}: expected an integer from 1 to {cpus}")
    if not 1 <= workers <= cpus:
        raise UsageError(
            f"workers={workers}: expected 1 to {cpus} (the CPUs of this machine; "
            "for more, start a Dask cluster and give its scheduler)"
        )


def _check_partitions(partitions: Any) -> None:
    """A one-line :class:`UsageError` unless ``partitions`` is ``None`` (the default:
    from the shards and the workers) or an integer from 1 to :data:`_MAX_PARTITIONS`."""
    if partitions is None:
        return
    if (
        isinstance(partitions, bool)
        or not isinstance(partitions, int | np.integer)
        or not 1 <= partitions <= _MAX_PARTITIONS
    ):
        raise UsageError(
            f"partitions={partitions!r}: expected an integer from 1 to {_MAX_PARTITIONS} "
            "(or none: from the shards and the workers)"
        )


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
        except (OSError, ValueError) as exc:  # ValueError: not host:port
            raise UsageError(f"cannot reach the Dask scheduler {address}: {exc}") from None
        try:
            yield client
        finally:
            client.close()
        return
    _check_workers(workers)
    import dask

    with dask.config.set(WORKER_MALLOC_CONFIG):
        cluster = distributed.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=processes,
            # a free port: None still starts the scheduler's HTTP server on 8787, and
            # when that port is taken (another Dask run on the machine) distributed
            # warns on stderr that it moved; port 0 is chosen quietly
            dashboard_address=":0",
            # CRITICAL: a bad record raises a FormatError in a map task, which the
            # client re-raises as the one-line error; at ERROR the worker would also
            # log it ("Compute Failed") with the task's traceback on stderr
            silence_logs=50,
        )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


# --------------------------------------------------------------------------- tasks


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


def flat_columns(reduced: Reduced) -> dict[str, Any]:
    """One row per collection in :data:`FLAT_COLUMNS` order, as pandas arrays. The
    totals follow the reader's rules (NaN, Parquet null, where it says unknown):
    a request is known when every instance's is (``scheduled_cpus``: every
    scheduled instance's), and ``cpu_seconds`` / ``memory_mean`` (the job's
    ``used_cpu_seconds_ncu`` / ``used_memory_normalized``) when the collection has
    usage windows, none of unknown time or mean, and every scheduled instance has
    some."""
    import pandas as pd

    r = reduced

    def optional(values: np.ndarray, present: np.ndarray) -> Any:
        array = pd.array(np.where(present, values, 0), dtype="Int64")
        array[~present] = pd.NA
        return array

    def attribute(values: np.ndarray) -> Any:
        return optional(values, values != _NULL)

    def known(values: np.ndarray, count: np.ndarray, total: np.ndarray) -> np.ndarray:
        # the reader's rule: a sum over some of the instances would understate it
        return np.where(all_known(count, total), values, np.nan)

    ctype = collection_type_of(r)
    # unknown usage stays unknown: no window, or scheduled instances without any
    measured = usage_known(r)
    return {
        "collection_id": pd.array(r["c_cid"], dtype="int64"),
        "collection_type": attribute(ctype),
        "submit_raw": optional(r["c_submit"], r["c_submit_has"]),
        "schedule_raw": optional(r["c_schedule"], r["c_schedule_has"]),
        "end_raw": optional(r["c_end"], r["c_end_has"]),
        "end_type": optional(r["c_end_type"], r["c_end_has"]),
        "priority": attribute(r["c_priority"]),
        "scheduling_class": attribute(r["c_scheduling_class"]),
        "alloc_collection_id": attribute(r["c_alloc_collection_id"]),
        "parent_collection_id": attribute(r["c_parent_collection_id"]),
        "user": pd.array(r["c_user"], dtype="object"),
        "collection_name": pd.array(r["c_collection_name"], dtype="object"),
        "collection_logical_name": pd.array(r["c_collection_logical_name"], dtype="object"),
        "instances": pd.array(r["c_instances"], dtype="int64"),
        "requested_cpus": known(r["c_cpus"], r["c_cpus_known"], r["c_instances"]),
        "requested_memory": known(r["c_memory"], r["c_memory_known"], r["c_instances"]),
        "scheduled_cpus": known(
            r["c_scheduled_cpus"], r["c_scheduled_cpus_known"], r["c_scheduled_instances"]
        ),
        "usage_windows": pd.array(r["c_usage_windows"], dtype="int64"),
        "cpu_seconds": np.where(measured, r["c_cpu_seconds"], np.nan),
        "memory_mean": np.where(measured, r["c_memory_mean"], np.nan),
        "events": pd.array(r["c_ev_count"], dtype="int64"),
    }


# --------------------------------------------------------------------------- graph

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def bucket_of(collection_ids: np.ndarray, buckets: int) -> np.ndarray:
    """The shuffle partition of each collection id (a multiplicative hash, so that
    consecutive ids spread evenly); the same id always lands in the same bucket."""
    mixed = collection_ids.astype(np.uint64) * _GOLDEN
    return ((mixed >> np.uint64(33)) % np.uint64(buckets)).astype(np.int64)


#: Columns the reduction does not read (left out of the shuffle).
_UNUSED = {"instance_usage": ("machine_id",)}


def _split_task(shard: Any, lenient: bool, buckets: int) -> dict[str, Any]:
    """Worker side, map step of the group-by: parse one shard and split its rows by
    the bucket of their collection id (numeric columns, plus objects only for the
    hashed names and repeated fields)."""
    from .v3_reader import no_gc, parse_shard

    rejects = Rejects()
    with no_gc():
        frame = parse_shard(shard, "auto", rejects if lenient else None, use_threads=False)
    out: dict[str, Any] = {
        "side": (
            (rejects.as_dict(), rejects.messages),
            frame_length(frame),
            _real_max_time(frame) if shard.table in _EVENT_TABLES[:2] else NULL_INT,
            frame if shard.table == "machine_events" else None,
        ),
        "pieces": None,
    }
    if shard.table in _EVENT_TABLES:
        for name in _UNUSED.get(shard.table, ()):
            del frame[name]
        bucket = bucket_of(frame["collection_id"], buckets)
        order = np.argsort(bucket, kind="stable")
        bounds = np.cumsum(np.bincount(bucket, minlength=buckets))[:-1]
        split = {name: np.split(col[order], bounds) for name, col in frame.items()}
        out["pieces"] = [{name: split[name][b] for name in frame} for b in range(buckets)]
    return out


def _piece(split: dict[str, Any], bucket: int) -> dict[str, np.ndarray]:
    return split["pieces"][bucket]


def _side(split: dict[str, Any]) -> Any:
    return split["side"]


def _bucket_reduced(
    tables: Sequence[str], keep_instances: bool, *pieces: dict[str, np.ndarray]
) -> Reduced:
    """Worker side, reduce step of the group-by: every row of the bucket's
    collections -> their columnar results."""
    parts: dict[str, list[dict[str, np.ndarray]]] = {t: [] for t in _EVENT_TABLES}
    for table, piece in zip(tables, pieces, strict=True):
        parts[table].append(piece)
    from .v3_reader import no_gc

    events, instances, usage = (_concat_pieces(t, parts[t]) for t in _EVENT_TABLES)
    del parts, pieces
    with no_gc():
        return reduce_collections(events, instances, usage, keep_instances=keep_instances)


def _concat_pieces(table: str, pieces: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    frame = concat_frames(table, pieces)
    for name in _UNUSED.get(table, ()):
        frame.pop(name, None)
    return frame


def _bucket_flat(tables: Sequence[str], *pieces: dict[str, np.ndarray]) -> Any:
    """Worker side: the bucket's collections as a flat pandas frame (Parquet)."""
    import pandas as pd

    return pd.DataFrame(flat_columns(_bucket_reduced(tables, False, *pieces)))


def _real_max_time(frame: dict[str, np.ndarray]) -> int:
    """The last real event time in a frame (``NULL_INT`` if none)."""
    times = frame["time"]
    real = times[(times != NULL_INT) & (times != TIME_BEFORE_TRACE) & (times != TIME_AFTER_TRACE)]
    return int(real.max()) if real.size else NULL_INT


def _graph(
    shards: Sequence[Any], lenient: bool, partitions: int | None, reducer: Any, *extra: Any
) -> tuple[list[Any], list[Any]]:
    """The delayed group-by: split tasks (one per shard) and one reduce task per
    bucket; returns the bucket tasks and the split tasks."""
    from dask import delayed

    events = [s for s in shards if s.table in _EVENT_TABLES]
    buckets = partitions or max(1, min(64, len(events)))
    splits = [delayed(_split_task, pure=True)(s, lenient, buckets) for s in shards]
    tables = tuple(s.table for s in events)
    event_splits = [sp for s, sp in zip(shards, splits, strict=True) if s.table in _EVENT_TABLES]
    reduced = [
        delayed(reducer, pure=True)(
            *extra[:1],
            tables,
            *extra[1:],
            *(delayed(_piece, pure=True)(sp, b) for sp in event_splits),
        )
        for b in range(buckets)
    ]
    return reduced, splits


def default_partitions(client: Any, shards: Sequence[Any]) -> int:
    """Shuffle partitions: two per worker thread (enough to balance the reduce
    tasks; each more multiplies the small tasks that move the pieces), at most
    one per event shard and 64."""
    try:
        threads = sum(client.nthreads().values())
    except Exception:  # a client that cannot say: one partition per shard
        threads = 32
    events = sum(1 for s in shards if s.table in _EVENT_TABLES)
    return max(1, min(64, events, 2 * max(threads, 1)))


def read_records_dask(
    shards: Sequence[Any],
    *,
    lenient: bool = False,
    scheduler: str | None = None,
    workers: int = 2,
    partitions: int | None = None,
    keep_instances: bool = True,
    client: Any = None,
) -> tuple[Reduced, dict[str, dict[str, int]], Rejects, dict[str, Any], float | None]:
    """The reduced collections of a trace computed on Dask, plus what the workload
    needs: ``(reduced, counts per table, rejects, capacity timeline, trace end)``."""
    require_dask()
    _check_partitions(partitions)
    from dask import delayed

    with contextlib.ExitStack() as stack:
        if client is None:
            client = stack.enter_context(dask_client(scheduler, workers))
        partitions = partitions or default_partitions(client, shards)
        reduced, splits = _graph(shards, lenient, partitions, _bucket_reduced_keep, keep_instances)
        side = [delayed(_side, pure=True)(sp) for sp in splits]
        buckets, side_values = client.compute([reduced, side], sync=True)
    result = concat_reduced(buckets)
    if not keep_instances:
        result = drop_instances(result)
    rejects = Rejects()
    counts_out: dict[str, dict[str, int]] = {}
    machine_frames = []
    real_ends = []
    for shard, ((counts, messages), rows, max_time, frame) in zip(shards, side_values, strict=True):
        part = Rejects()
        part.count = counts["total"]
        part.by_reason = dict(counts["by_reason"])
        part.messages = list(messages)
        rejects.merge(part)
        entry = counts_out.setdefault(shard.table, {"shards": 0, "rows": 0})
        entry["shards"] += 1
        entry["rows"] += rows
        if frame is not None:
            machine_frames.append(frame)
        if max_time != NULL_INT:
            real_ends.append(max_time)
    capacity = capacity_timeline(concat_frames("machine_events", machine_frames))
    trace_end = (max(real_ends) - TIME_OFFSET_US) / US if real_ends else None
    return result, counts_out, rejects, capacity, trace_end


def _bucket_reduced_keep(
    keep_instances: bool, tables: Sequence[str], *pieces: dict[str, np.ndarray]
) -> Reduced:
    return _bucket_reduced(tables, keep_instances, *pieces)


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
    Parquet (one file per bucket) straight from the workers; returns the number of
    partitions."""
    _, dd, _ = require_dask()
    _check_partitions(partitions)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise UsageError("Parquet output needs pyarrow: pip install 'schedlab[parquet]'") from None
    import pandas as pd

    meta = pd.DataFrame({c: pd.Series(dtype=t) for c, t in FLAT_COLUMNS.items()})
    with contextlib.ExitStack() as stack:
        if client is None:
            client = stack.enter_context(dask_client(scheduler, workers))
        partitions = partitions or default_partitions(client, shards)
        reduced, _ = _graph(shards, lenient, partitions, _bucket_flat)
        flat = dd.from_delayed(reduced, meta=meta, verify_meta=False)
        flat.to_parquet(
            os.fspath(directory), write_index=False, compute=True, schema=_arrow_schema()
        )
    return len(reduced)


# --------------------------------------------------------------------------- CLI
# The loss report is the one ``schedlab convert`` prints (the same lines, flags and
# strict-mode error), written here with the public plugin toolkit
# (:mod:`schedlab.losses`) as every built-in plugin is: tests/test_docs_audit_fixes.py
# compares the two commands' output.

_ALL_LOSSES = "--all-losses"


def _echo_losses(name: str, lines: list[str], verb: str = "could not") -> None:
    """The loss report on stderr: a heading naming the output, then one indented
    line per loss."""
    from schedlab.losses import loss_heading

    click.echo(loss_heading(name, verb), err=True)
    for line in lines:
        click.echo(f"  {line}", err=True)


def _writer_named(flag: str, name: str) -> None:
    """Refuse ``--to NAME`` naming no installed writer, in ``schedlab convert``'s
    words (``--to 'x': unknown writer (available: ...)``)."""
    from schedlab import get_registry

    registry = get_registry()
    if not registry.has("writer", name):
        names = ", ".join(sorted(w.name for w in registry.all("writer")))
        raise UsageError(f"{flag} {name!r}: unknown writer (available: {names})")


def _writer_by_suffix(output: str) -> None:
    """Refuse an OUTPUT whose suffix (compression suffixes aside) no installed
    writer claims, as ``schedlab convert`` does, before the trace is reduced."""
    from schedlab import get_registry
    from schedlab.io import strip_compression_suffix

    registry = get_registry()
    base = strip_compression_suffix(os.path.basename(output)).lower()
    writers = registry.all("writer")
    if not any(base.endswith(s.lower()) for w in writers for s in w.suffixes):
        names = ", ".join(sorted(w.name for w in writers))
        raise UsageError(
            f"{output}: cannot tell the output format from the name; choose one with --to "
            f"(writers: {names})"
        )


class _OnceCommand(click.Command):
    """A click command that checks its options' values as schedlab's built-in
    commands do (docs/cli.md) before click reads them: an option of one value given
    twice with different values (click would keep the last silently), an empty
    value, or a number in other than ASCII digits (``1_0``, full-width digits, which
    ``int()`` reads) is a one-line usage error naming the option."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Check ``args``, then parse them as click does."""
        first: dict[str, tuple[str, str]] = {}
        for option, name, value in self._values(args):
            assert option.name is not None
            if not value.strip():
                raise UsageError(f"{name} {value!r}: give a value (or leave {name} out)")
            if isinstance(option.type, click.types.IntParamType) and not (
                value.isascii() and "_" not in value
            ):
                raise UsageError(
                    f"{name} {value!r}: expected a number in ASCII digits, no underscores"
                )
            if option.name in first and first[option.name][1] != value:
                spelled, earlier = first[option.name]
                raise UsageError(
                    f"{name} given twice ({spelled} {earlier!r}, then {name} {value!r}): "
                    "give it once"
                )
            first.setdefault(option.name, (name, value))
        to = first.get("to_format")
        if to is not None:  # naming no writer: convert's message, before any work
            _writer_named(*to)
        return super().parse_args(ctx, args)

    def _values(self, args: list[str]) -> Iterator[tuple[click.Option, str, str]]:
        """``(option, name as spelled, value)`` of each option of one value in
        ``args`` (``--name value`` or ``--name=value``; nothing after ``--``)."""
        by_name = {
            name: param
            for param in self.params
            if isinstance(param, click.Option)
            for name in param.opts
        }
        i = 0
        while i < len(args):
            token = args[i]
            i += 1
            if token == "--":
                return
            name, eq, value = token.partition("=")
            option = by_name.get(name)
            if option is None or option.is_flag:
                continue
            if not eq:
                if i >= len(args):
                    return  # click reports the missing value
                value = args[i]
                i += 1
            yield option, name, value


def _check_workers_option(ctx: click.Context, param: click.Parameter, value: int | None) -> Any:
    """``--workers``: at most the CPUs of this machine (at least 1: the type's range)."""
    if value is not None and value > _max_workers():
        raise click.BadParameter(
            f"{value} is more than the {_max_workers()} CPUs of this machine (the local "
            "cluster's workers are single-threaded processes; for more, start a Dask "
            "cluster and give --scheduler)",
            ctx,
            param,
        )
    return value


@click.command(name="google-dask", cls=_OnceCommand)
@click.argument("source", type=click.Path(exists=True))
@click.argument("output", type=click.Path())
@click.option(
    "--scheduler",
    default=None,
    help="Dask scheduler tcp://host:port (default: SCHEDLAB_DASK_SCHEDULER, else a local cluster).",
)
@click.option(
    "--workers",
    default=None,
    type=click.IntRange(min=1),
    callback=_check_workers_option,
    help="Workers of the local cluster, single-threaded processes "
    "(default: 2; at most the CPUs of this machine).",
)
@click.option(
    "--partitions",
    default=None,
    type=click.IntRange(1, _MAX_PARTITIONS),
    help="Shuffle partitions (default: two per worker, at most one per event shard and 64).",
)
@click.option(
    "--parquet",
    is_flag=True,
    help="Write one row per collection as partitioned "
    "Parquet into OUTPUT (a directory) instead of a trace file.",
)
@click.option("--to", "to_format", default=None, help="Output format (default: from the suffix).")
@click.option("--lenient", is_flag=True, help="Skip and count bad records.")
@click.option("--no-tasks", is_flag=True, help="Do not keep per-instance tasks (less memory).")
@click.option(
    "--strict-lossless",
    is_flag=True,
    help="Fail (exit 2, nothing written) if the target cannot carry every field.",
)
@click.option(
    _ALL_LOSSES,
    "all_losses",
    is_flag=True,
    help="Print every loss of the conversion, one line per field and action "
    "(default: a summary of at most 12 lines).",
)
def command(
    source: str,
    output: str,
    scheduler: str | None,
    workers: int | None,
    partitions: int | None,
    parquet: bool,
    to_format: str | None,
    lenient: bool,
    no_tasks: bool,
    strict_lossless: bool,
    all_losses: bool,
) -> None:
    """Reduce a Google v3 trace (SOURCE: a directory of shards) on a Dask cluster and
    write OUTPUT: any trace format (e.g. out.swf), or partitioned Parquet.

    A trace file gets the loss report of convert on stderr: what OUTPUT could not
    carry (--all-losses: every loss; --strict-lossless: any loss is an error and
    nothing is written). --parquet writes the reduced columns, not a trace format,
    so it has no loss report and takes neither flag, nor --to."""
    from .v2_reader import sniff_v2

    if sniff_v2(b"", source):
        raise UsageError(
            f"google-dask reads 2019 (v3) traces only; {source} is a 2011 (v2) trace "
            "(job_events / task_events tables): read it with "
            "'schedlab convert SOURCE OUTPUT --from google-v2'"
        )
    if not output.strip():
        raise UsageError(f"OUTPUT {output!r}: give a file or folder name")
    if workers is not None:
        if scheduler:
            raise UsageError(
                "--workers sizes the local cluster: give either --workers or --scheduler"
            )
        if os.environ.get("SCHEDLAB_DASK_SCHEDULER"):
            raise UsageError(
                "--workers sizes the local cluster, but SCHEDLAB_DASK_SCHEDULER names a "
                "scheduler: unset the variable or leave --workers out"
            )
    workers = 2 if workers is None else workers
    # "-", a file on the way, no write permission (with --parquet OUTPUT is a folder)
    check_outputs([("OUTPUT", output)], folders=["OUTPUT"] if parquet else [])
    if parquet:
        for flag, given in (
            ("--to", to_format is not None),
            ("--strict-lossless", strict_lossless),
            (_ALL_LOSSES, all_losses),
        ):
            if given:
                raise UsageError(f"{flag} applies to a trace file, not to --parquet")
        # partitions among other files (an earlier run's part.N, the trace's own
        # shards) would be read back as one data set
        if os.path.isdir(output) and os.listdir(output):
            raise UsageError(
                f"{output}: folder not empty: --parquet writes its partitions into a new "
                "or empty folder"
            )
        if os.path.lexists(output) and not os.path.isdir(output):
            raise UsageError(f"{output}: is a file: --parquet writes a folder")
    elif to_format is None:  # an OUTPUT whose name picks no writer: refused first
        _writer_by_suffix(output)
    require_dask()
    from schedlab import write
    from schedlab.losses import LossError, collect_losses

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
        shown = "partition" if count == 1 else "partitions"
        click.echo(f"wrote {count} Parquet {shown} to {output}", err=True)
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
    name = os.path.basename(output.rstrip("/" + os.sep)) or output
    try:
        with collect_losses(strict=strict_lossless) as losses:
            written = write(workload, output, format=to_format)
    except LossError as exc:
        if all_losses:
            _echo_losses(name, [str(loss) for loss in losses], "would not")
        raise exc.pointing_to(_ALL_LOSSES, listed=all_losses) from None
    skipped = workload.meta["skipped"]
    click.echo(
        f"wrote {len(workload)} {'job' if len(workload) == 1 else 'jobs'} to {output}"
        + (f" ({skipped} records skipped)" if skipped else ""),
        err=True,  # a status line: stderr, as convert's (docs/cli.md)
    )
    if not losses.reports:
        click.echo(
            "schedlab: warning: the writer does not report what it could not carry"
            + (" (--strict-lossless could not check it)" if strict_lossless else ""),
            err=True,
        )
    if losses:
        lines = losses.report_lines(every=all_losses, flag=_ALL_LOSSES)
        _echo_losses(written.name or name, lines)
