"""Reader of the Google cluster-usage trace v3 (clusterdata-2019).

A source is a directory of table shards as published or exported from BigQuery
(``collection_events-000000000000.json.gz`` ..., or one sub-directory per table),
or one shard file. JSON lines (optionally compressed), Parquet and CSV exports are
accepted. See ``docs/formats/google.md`` for the mapping to the common model.
"""

from __future__ import annotations

import contextlib
import gc
import os
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs
import numpy as np
from schedlab.errors import FormatError, UsageError
from schedlab.io import read_head
from schedlab.model import Workload

from .assemble import SPECIAL_TIME_MODES, EarlyTasks, TimeMapper, build_workload
from .capacity import capacity_timeline
from .frames import (
    Rejects,
    concat_frames,
    empty_frame,
    frame_length,
    parse_exact,
    parse_fast_pieces,
    parse_parquet,
    pyarrow_available,
)
from .reduce import (
    Reduced,
    combine,
    merge_instances,
    reduce_collection_events,
    reduce_instance_events,
    reduce_usage,
)
from .schema import (
    DEFAULT_CPU_SCALE,
    DEFAULT_MEMORY_SCALE,
    NULL_INT,
    TIME_AFTER_TRACE,
    TIME_BEFORE_TRACE,
    TIME_OFFSET_US,
    US,
    V3_TABLE_NAMES,
    guess_table,
    shard_table,
)

ENGINES = ("auto", "python", "pyarrow", "dask")


@attrs.define(frozen=True, slots=True)
class Shard:
    """One file of one table; ``index`` orders shards (and breaks time ties)."""

    table: str
    path: str
    kind: str
    index: int


def discover(source: str | os.PathLike[str]) -> list[Shard]:
    """The v3 shards of a directory (files named after their table, or files inside
    a sub-directory named after the table), or the one shard a file is.

    Shards are sorted by table then file name, so their indices are deterministic.
    """
    path = Path(source)
    found: list[tuple[str, str, str]] = []
    if path.is_dir():
        for entry in sorted(path.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_dir() and entry.name in V3_TABLE_NAMES:
                for inner in sorted(entry.iterdir()):
                    kind = _kind_of(inner.name)
                    if inner.is_file() and kind and not inner.name.startswith("."):
                        found.append((entry.name, str(inner), kind))
            elif entry.is_file():
                match = shard_table(entry.name)
                if match:
                    found.append((match[0], str(entry), match[1]))
    else:
        match = shard_table(path.name)
        if match:
            found.append((match[0], str(path), match[1]))
        else:
            kind = _kind_of(path.name) or "json"
            found.append((_table_from_content(path), str(path), kind))
    found.sort(key=lambda item: (V3_TABLE_NAMES.index(item[0]), item[1]))
    return [Shard(t, p, k, i) for i, (t, p, k) in enumerate(found)]


def _kind_of(name: str) -> str | None:
    base = name
    for suffix in (".gz", ".bz2", ".xz"):
        base = base.removesuffix(suffix)
    if base.endswith((".json", ".jsonl", ".ndjson")):
        return "json"
    if base.endswith(".parquet"):
        return "parquet"
    if base.endswith(".csv"):
        return "csv"
    return None


def _table_from_content(path: Path) -> str:
    import json

    try:
        head = read_head(path, 1 << 16)
    except FormatError:
        raise
    except (OSError, EOFError, zlib.error) as exc:
        raise FormatError(f"unreadable ({exc})", source=str(path)) from None
    for raw in head.splitlines():
        if raw.strip():
            try:
                record = json.loads(raw)
            except (ValueError, RecursionError):
                break
            if isinstance(record, dict):
                table = guess_table(frozenset(record))
                if table:
                    return table
            break
    raise FormatError(
        "cannot tell which v3 table this file holds; name it like "
        "collection_events-000000000000.json.gz",
        source=str(path),
    )


def sniff_v3(head: bytes, name: str) -> bool:
    """True for a directory holding v3 table shards, or one v3 table file."""
    if name and os.path.isdir(name):
        return any(
            shard.table in ("collection_events", "instance_events") for shard in discover(name)
        )
    base = os.path.basename(name)
    if shard_table(base) and base.split("-")[0].split(".")[0] in (
        "collection_events",
        "instance_events",
        "instance_usage",
    ):
        return True
    import json

    for raw in head.splitlines()[:1]:
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            return False
        if isinstance(record, dict) and "collection_id" in record:
            return guess_table(frozenset(record)) is not None
    return False


# --------------------------------------------------------------------------- parsing


def parse_shard(
    shard: Shard, engine: str, rejects: Rejects | None, use_threads: bool = True
) -> dict[str, np.ndarray]:
    """One shard as a frame (fast path first when allowed, exact path otherwise).

    ``use_threads=False`` keeps pyarrow on the calling thread (a Dask worker is
    the unit of parallelism there)."""
    return concat_frames(shard.table, parse_shard_pieces(shard, engine, rejects, use_threads))


def parse_shard_pieces(
    shard: Shard, engine: str, rejects: Rejects | None, use_threads: bool = True
) -> list[dict[str, np.ndarray]]:
    """:func:`parse_shard` as frames that :func:`.frames.concat_frames` joins into
    its result (the fast parser gives one per block)."""
    if shard.kind == "parquet":
        return [parse_parquet(shard.path, shard.table, shard.index, rejects)]
    if shard.kind == "json" and engine in ("auto", "pyarrow", "dask") and pyarrow_available():
        pieces = parse_fast_pieces(shard.path, shard.table, shard.index, use_threads)
        if pieces is not None:
            return pieces
    return [parse_exact(shard.path, shard.table, shard.kind, shard.index, rejects)]


def _parse_one(shard: Shard, engine: str, lenient: bool) -> tuple[dict[str, np.ndarray], Rejects]:
    rejects = Rejects()
    frame = parse_shard(shard, engine, rejects if lenient else None)
    return frame, rejects


def load_frames(
    shards: Iterable[Shard], engine: str = "auto", lenient: bool = False, threads: int | None = None
) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, int]], Rejects]:
    """Parse every shard; returns frames per table, counts per table, rejects.

    Shards are parsed by a small thread pool (pyarrow and gzip release the GIL);
    results are combined in shard order, so the output does not depend on timing.
    """
    shards = list(shards)
    threads = threads or min(len(shards), os.cpu_count() or 1, 8)
    if threads > 1 and engine != "python" and len(shards) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(threads) as pool:
            results = list(pool.map(lambda s: _parse_one(s, engine, lenient), shards))
    else:
        results = [_parse_one(s, engine, lenient) for s in shards]
    rejects = Rejects()
    parts: dict[str, list[dict[str, np.ndarray]]] = {t: [] for t in V3_TABLE_NAMES}
    counts: dict[str, dict[str, int]] = {}
    for shard, (frame, shard_rejects) in zip(shards, results, strict=True):
        rejects.merge(shard_rejects)
        parts[shard.table].append(frame)
        entry = counts.setdefault(shard.table, {"shards": 0, "rows": 0})
        entry["shards"] += 1
        entry["rows"] += frame_length(frame)
    frames = {t: concat_frames(t, p) if p else empty_frame(t) for t, p in parts.items()}
    return frames, counts, rejects


#: Order in which the in-process reader parses the tables. The instance events
#: are reduced while the usage is parsed; the usage is reduced, merged with them
#: and (with :class:`.assemble.EarlyTasks`) made into tasks while the collection
#: events are parsed, so little is left to do once the last shard is read.
PARSE_ORDER = (
    "instance_events",
    "instance_usage",
    "collection_events",
    "machine_events",
    "machine_attributes",
)


def reduce_in_process(
    shards: Iterable[Shard],
    engine: str = "auto",
    lenient: bool = False,
    keep_instances: bool = True,
    threads: int | None = None,
    early: EarlyTasks | None = None,
) -> tuple[Reduced, dict[str, dict[str, int]], Rejects, dict[str, Any], float | None]:
    """Parse every shard on a thread pool, table by table in :data:`PARSE_ORDER`,
    and reduce each event table as soon as its last shard is parsed (while the
    pool parses the next table), then combine.

    Returns ``(reduced, counts per table, rejects, capacity timeline, trace end)``.
    ``early`` (with ``keep_instances``) is handed the instance events and the
    merged instances as soon as they are reduced, to make the tasks meanwhile.
    Results are taken in shard order within a table, so nothing depends on timing;
    a table's rows are dropped once reduced, so memory holds one table's rows at a
    time (plus what the pool has parsed ahead).
    """
    shards = sorted(shards, key=lambda s: (PARSE_ORDER.index(s.table), s.index))
    threads = threads or min(len(shards), os.cpu_count() or 1, 4)
    stage_of = {
        "collection_events": reduce_collection_events,
        "instance_events": reduce_instance_events,
        "instance_usage": reduce_usage,
    }
    remaining = Counter(s.table for s in shards)
    parts: dict[str, list[dict[str, np.ndarray]]] = {t: [] for t in V3_TABLE_NAMES}
    stages: dict[str, dict[str, np.ndarray]] = {}
    frames: dict[str, dict[str, np.ndarray]] = {}
    counts: dict[str, dict[str, int]] = {}
    rejects_of: dict[int, Rejects] = {}
    merged: list[tuple[dict[str, np.ndarray], np.ndarray]] = []
    early = early if keep_instances else None

    def finish(table: str) -> None:
        frame = concat_frames(table, parts[table]) if parts[table] else empty_frame(table)
        parts[table] = []
        if table in stage_of:
            stages[table] = stage_of[table](frame)
        else:
            frames[table] = frame
        del frame
        if table == "instance_events" and early is not None:
            early.instance_events(stages[table])
        if not merged and "instance_events" in stages and "instance_usage" in stages:
            merged.append(merge_instances(stages["instance_events"], stages["instance_usage"]))
            if early is not None:
                early.instances(*merged[0])

    def parse(shard: Shard) -> tuple[list[dict[str, np.ndarray]], Rejects]:
        shard_rejects = Rejects()
        use_threads = threads == 1
        pieces = parse_shard_pieces(shard, engine, shard_rejects if lenient else None, use_threads)
        return pieces, shard_rejects

    if threads > 1 and engine != "python" and len(shards) > 1:
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(threads)
        results: Iterable[tuple[list[dict[str, np.ndarray]], Rejects]] = pool.map(parse, shards)
    else:
        pool = None
        results = map(parse, shards)
    try:
        for shard, (pieces, shard_rejects) in zip(shards, results, strict=True):
            rejects_of[shard.index] = shard_rejects
            entry = counts.setdefault(shard.table, {"shards": 0, "rows": 0})
            entry["shards"] += 1
            entry["rows"] += sum(map(frame_length, pieces))
            parts[shard.table].extend(pieces)
            del pieces
            remaining[shard.table] -= 1
            if remaining[shard.table] == 0:
                finish(shard.table)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    for table in PARSE_ORDER:
        if table not in stages and table not in frames:
            finish(table)
    counts = {t: counts[t] for t in V3_TABLE_NAMES if t in counts}
    rejects = Rejects()
    for index in sorted(rejects_of):  # in discovery order, as the messages are kept
        rejects.merge(rejects_of[index])
    ce, ie = stages["collection_events"], stages["instance_events"]
    trace_end = last_real_time(ce["e_time"], ie["f_time"])
    reduced = combine(ce, ie, stages["instance_usage"], keep_instances, merged[0][0])
    capacity = capacity_timeline(frames["machine_events"])
    return reduced, counts, rejects, capacity, trace_end


def last_real_time(*times: np.ndarray) -> float | None:
    """The last real time (seconds) among raw event times (specials and nulls aside)."""
    best = None
    for values in times:
        real = values[
            (values != NULL_INT) & (values != TIME_BEFORE_TRACE) & (values != TIME_AFTER_TRACE)
        ]
        if real.size:
            value = int(real.max())
            best = value if best is None else max(best, value)
    return None if best is None else (best - TIME_OFFSET_US) / US


def trace_end_seconds(frames: dict[str, dict[str, np.ndarray]]) -> float | None:
    """The last real time of the collection and instance events, in seconds."""
    best = None
    for table in ("collection_events", "instance_events"):
        times = frames[table]["time"]
        real = times[
            (times != NULL_INT) & (times != TIME_BEFORE_TRACE) & (times != TIME_AFTER_TRACE)
        ]
        if real.size:
            value = int(real.max())
            best = value if best is None else max(best, value)
    return None if best is None else (best - TIME_OFFSET_US) / US


V3_HEADER_INFO: dict[str, Any] = {
    "computer": "Google Borg cell",
    "information": "Google cluster-usage traces v3 (clusterdata-2019)",
    "version_label": "trace format v3",
    "trace_version": 3,
}


def check_options(cpu_scale: float, memory_scale: float, special_times: str, engine: str) -> None:
    """Raise :class:`UsageError` for options that make no sense."""
    if not cpu_scale > 0:
        raise UsageError(f"google: cpu_scale must be positive, got {cpu_scale}")
    if not memory_scale > 0:
        raise UsageError(f"google: memory_scale must be positive, got {memory_scale}")
    if special_times not in SPECIAL_TIME_MODES:
        raise UsageError(
            f"google: special_times={special_times!r}: expected one of "
            f"{', '.join(SPECIAL_TIME_MODES)}"
        )
    if engine not in ENGINES:
        raise UsageError(f"google: engine={engine!r}: expected one of {', '.join(ENGINES)}")


def read_v3(
    source: str | os.PathLike[str],
    *,
    lenient: bool = False,
    engine: str = "auto",
    scheduler: str | None = None,
    workers: int = 2,
    partitions: int | None = None,
    cpu_scale: float = DEFAULT_CPU_SCALE,
    memory_scale: float = DEFAULT_MEMORY_SCALE,
    special_times: str = "unknown",
    tasks: bool = True,
    installation: str | None = None,
) -> Workload:
    """Read a v3 trace directory (or one shard) into a workload.

    ``engine``: ``auto`` (pyarrow's JSON parser when installed, else Python),
    ``python`` (the exact line parser only), ``pyarrow``, or ``dask`` (a Dask cluster:
    a local one, or ``scheduler="tcp://host:port"`` / ``SCHEDLAB_DASK_SCHEDULER``).
    ``lenient`` skips and counts bad records (``meta["skipped"]``,
    ``meta["rejects"]``) instead of failing on the first.
    """
    check_options(cpu_scale, memory_scale, special_times, engine)
    if not isinstance(source, (str, os.PathLike)):
        raise UsageError("google: the v3 reader needs a path (a directory or a shard file)")
    shards = discover(source)
    if not shards:
        raise FormatError(
            "no v3 table shards found (expected files like collection_events-000000000000.json.gz)",
            source=os.fspath(source),
        )
    if scheduler is None:
        scheduler = os.environ.get("SCHEDLAB_DASK_SCHEDULER") or None
        if scheduler and engine != "dask":
            scheduler = None  # the variable only chooses the cluster of the dask engine
    with contextlib.ExitStack() as paused:
        if engine == "dask" or scheduler:
            from .dask_reader import read_records_dask

            prebuilt = None
            reduced, counts, rejects, capacity, trace_end = read_records_dask(
                shards,
                lenient=lenient,
                scheduler=scheduler,
                workers=workers,
                partitions=partitions,
                keep_instances=tasks,
            )
            paused.enter_context(no_gc(promote=True))
        else:
            # one pause for reading and building: a young collection in between
            # would walk the tasks made early. The tasks are made while the
            # collection events are parsed, unless their times depend on the
            # trace end (known once everything is read).
            paused.enter_context(no_gc(promote=True))
            early = (
                EarlyTasks(TimeMapper(special_times), cpu_scale)
                if tasks and special_times != "clip"
                else None
            )
            reduced, counts, rejects, capacity, trace_end = reduce_in_process(
                shards, engine, lenient, keep_instances=tasks, early=early
            )
            prebuilt = early.tasks if early is not None else None
        info = dict(V3_HEADER_INFO)
        if installation:
            info["installation"] = installation
        workload = build_workload(
            reduced,
            header_info=info,
            capacity=capacity,
            table_counts=counts,
            cpu_scale=cpu_scale,
            memory_scale=memory_scale,
            special_times=special_times,
            tasks=tasks,
            trace_end=trace_end,
            prebuilt_tasks=prebuilt,
        )
    used = "dask" if (engine == "dask" or scheduler) else engine
    finish_meta(workload, rejects, used if used != "auto" else _auto_engine())
    return workload


@contextlib.contextmanager
def no_gc(promote: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector while building millions of small objects
    that hold no cycles (each full collection would walk all of them again).

    ``promote=True`` then moves every live object to the oldest generation
    (``gc.freeze()`` + ``gc.unfreeze()``, which walks nothing), so the workload
    just built is not walked by the next young collections either (about 2.5 s
    for the 5-million-event benchmark trace with tasks); garbage cycles of the
    caller that were young are then found by the next full collection instead.
    Skipped when the program uses ``gc.freeze()`` itself."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if promote and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if enabled:
            gc.enable()


def _auto_engine() -> str:
    return "pyarrow" if pyarrow_available() else "python"


def finish_meta(workload: Workload, rejects: Rejects, engine: str) -> None:
    """Record skipped records and the engine used."""
    workload.meta["skipped"] = rejects.count
    workload.meta["skipped_by_reason"] = rejects.as_dict()["by_reason"]
    workload.meta["rejects"] = list(rejects.messages)
    workload.meta["engine"] = engine
    workload.meta["summary"]["skipped"] = rejects.count
