"""Generator of realistic multi-shard Google v3 traces (for tests and benchmarks).

The traces follow ``clusterdata_trace_format_v3.proto``: the five tables, written
as JSON-lines shards named like the BigQuery export
(``collection_events-000000000003.json.gz``), with every collection and instance
event type, missing-record types, special times (0 before the trace, 2^63-1 after
it), alloc sets and jobs running in them, parent and start-after dependencies,
machine constraints, and usage windows. Rows of one collection are scattered over
the shards at random, as in a real export.

Encoding ``styles`` are chosen per shard, round robin:

* ``"bigquery"``: int64 values as JSON strings, null fields omitted;
* ``"numbers"``: int64 values as numbers, nulls written as ``null`` (as in the
  documentation's example rows);
* ``"mixed"``: each value picks at random: strings or numbers for int64, names
  or numbers for enums, ``null`` or a missing key.

The generator streams rows to the shard files, so a five-million-event trace
needs little memory. With ``keep_truth=True`` it also returns the facts the reader
must recover for each collection.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from .schema import (
    EVENT_TYPES,
    EVICT,
    FAIL,
    FINISH,
    INT64_FIELDS,
    KILL,
    LOST,
    MISSING_TYPES,
    QUEUE,
    SCHEDULE,
    SUBMIT,
    TIME_AFTER_TRACE,
    TIME_BEFORE_TRACE,
    TIME_OFFSET_US,
    UPDATE_PENDING,
    UPDATE_RUNNING,
    US,
    V3_ENUMS,
)

ENABLE = 2


@attrs.define
class GeneratedTrace:
    """What :func:`generate_trace` wrote."""

    directory: Path
    rows: dict[str, int]
    shards: dict[str, list[Path]]
    truth: dict[int, dict[str, Any]] = attrs.field(factory=dict)

    @property
    def events(self) -> int:
        """All rows of all tables (the benchmark's "events")."""
        return sum(self.rows.values())


class _ShardSet:
    """Open shard files of one table; rows go to a shard picked at random."""

    def __init__(
        self,
        directory: Path,
        table: str,
        count: int,
        compress: bool,
        styles: Sequence[str],
        rng: random.Random,
    ) -> None:
        self.table = table
        self.rng = rng
        suffix = ".json.gz" if compress else ".json"
        self.paths = [directory / f"{table}-{i:012d}{suffix}" for i in range(count)]
        self.files: list[io.BufferedIOBase] = [
            gzip.GzipFile(p, "wb", compresslevel=1, mtime=0) if compress else open(p, "wb")
            for p in self.paths
        ]
        self.styles = [styles[(i + len(table)) % len(styles)] for i in range(count)]
        self.enums = V3_ENUMS[table]
        self.buffers: list[list[str]] = [[] for _ in range(count)]
        self.rows = 0

    def write(self, record: dict[str, Any]) -> None:
        shard = self.rng.randrange(len(self.files))
        style = self.styles[shard]
        self.buffers[shard].append(_encode(record, style, self.enums, self.rng))
        self.rows += 1
        if len(self.buffers[shard]) >= 4096:
            self._flush(shard)

    def _flush(self, shard: int) -> None:
        data = "".join(line + "\n" for line in self.buffers[shard])
        self.files[shard].write(data.encode())
        self.buffers[shard].clear()

    def close(self) -> None:
        for shard, fh in enumerate(self.files):
            self._flush(shard)
            fh.close()


def _encode(record: dict[str, Any], style: str, enums: dict[str, Any], rng: random.Random) -> str:
    if style == "numbers":
        return json.dumps(record, separators=(",", ":"))
    out: dict[str, Any] = {}
    for key, value in record.items():
        if value is None:
            if style == "mixed" and rng.random() < 0.5:
                out[key] = None
            continue
        if key in INT64_FIELDS and (style == "bigquery" or rng.random() < 0.5):
            value = str(value)
        elif style == "mixed" and key in enums and isinstance(value, int) and rng.random() < 0.5:
            value = enums[key][value]
        elif key == "start_after_collection_ids" and style == "bigquery":
            value = [str(v) for v in value]
        out[key] = value
    return json.dumps(out, separators=(",", ":"))


def _hash(rng: random.Random) -> str:
    return base64.b64encode(rng.randbytes(32)).decode()


def _norm(rng: random.Random, low: float, high: float) -> float:
    """A normalized amount rounded to 10 binary digits (1/1024), as the trace does."""
    return max(1, round(rng.uniform(low, high) * 1024)) / 1024


def generate_trace(
    directory: str | os.PathLike[str],
    *,
    collections: int = 2000,
    machines: int = 40,
    shards: int = 3,
    seed: int = 0,
    compress: bool = True,
    styles: Sequence[str] = ("bigquery", "numbers", "mixed"),
    mean_instances: float = 4.0,
    usage_windows: int = 3,
    span_s: float = 86_400.0,
    keep_truth: bool = False,
) -> GeneratedTrace:
    """Write a v3 trace of ``collections`` collections into ``directory``.

    ``shards`` files per table; ``mean_instances`` instances per collection
    (geometric); at most ``usage_windows`` usage rows per instance run.
    """
    rng = random.Random(seed)
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    tables = {
        t: _ShardSet(out, t, shards, compress, styles, rng)
        for t in (
            "collection_events",
            "instance_events",
            "instance_usage",
            "machine_events",
            "machine_attributes",
        )
    }
    truth: dict[int, dict[str, Any]] = {}
    span_us = int(span_s * US)
    t0 = TIME_OFFSET_US
    machine_ids = _machines(tables, machines, rng, t0, span_us)
    users = [_hash(rng) for _ in range(max(3, collections // 40))]
    logical = [_hash(rng) for _ in range(max(3, collections // 5))]
    next_id = 300_000_000_000 + rng.randrange(1_000_000)
    alloc_sets: list[int] = []
    earlier_jobs: list[int] = []
    for n in range(collections):
        next_id += rng.randrange(1, 5000)
        cid = next_id
        is_alloc = rng.random() < 0.05
        facts = _collection(
            tables,
            rng,
            cid,
            is_alloc,
            users,
            logical,
            alloc_sets,
            earlier_jobs,
            machine_ids,
            t0,
            span_us,
            mean_instances,
            usage_windows,
            n / max(collections, 1),
        )
        if keep_truth:
            truth[cid] = facts
        (alloc_sets if is_alloc else earlier_jobs).append(cid)
    for shard_set in tables.values():
        shard_set.close()
    return GeneratedTrace(
        directory=out,
        rows={t: s.rows for t, s in tables.items()},
        shards={t: list(s.paths) for t, s in tables.items()},
        truth=truth,
    )


def _machines(
    tables: dict[str, _ShardSet], count: int, rng: random.Random, t0: int, span_us: int
) -> list[int]:
    ids = []
    platforms = [_hash(rng) for _ in range(3)]
    attributes = [_hash(rng) for _ in range(4)]
    for i in range(count):
        mid = 1_000_000 + i * 17 + rng.randrange(10)
        ids.append(mid)
        cpus = rng.choice((0.25, 0.5, 0.5, 1.0))
        memory = rng.choice((0.25, 0.5, 1.0))
        joined_late = rng.random() < 0.1
        time = t0 + rng.randrange(span_us // 2) if joined_late else TIME_BEFORE_TRACE
        base = {
            "machine_id": mid,
            "switch_id": _hash(rng)[:12],
            "platform_id": rng.choice(platforms),
            "missing_data_reason": None,
        }
        tables["machine_events"].write(
            {"time": time, "type": 1, **base, "capacity": {"cpus": cpus, "memory": memory}}
        )
        for name in rng.sample(attributes, 2):
            tables["machine_attributes"].write(
                {
                    "time": 0,
                    "machine_id": mid,
                    "name": name,
                    "value": str(rng.randrange(5)),
                    "deleted": False,
                }
            )
        if rng.random() < 0.15:
            t_upd = max(time, t0) + rng.randrange(span_us // 4)
            tables["machine_events"].write(
                {"time": t_upd, "type": 3, **base, "capacity": {"cpus": cpus / 2, "memory": memory}}
            )
        if rng.random() < 0.1:
            t_rm = t0 + span_us // 2 + rng.randrange(span_us // 4)
            tables["machine_events"].write(
                {
                    "time": t_rm,
                    "type": 2,
                    **base,
                    "capacity": None,
                    "missing_data_reason": rng.choice((None, 1)),
                }
            )
    return ids


_END_CHOICES = (
    (FINISH, 0.55),
    (FAIL, 0.1),
    (KILL, 0.15),
    (EVICT, 0.05),
    (LOST, 0.05),
    (None, 0.1),  # still running when the trace ends
)


def _pick_end(rng: random.Random) -> int | None:
    x = rng.random()
    for kind, p in _END_CHOICES:
        if x < p:
            return kind
        x -= p
    return None


def _priority(rng: random.Random) -> int:
    return rng.choice((0, 25, 103, 107, 115, 117, 119, 120, 200, 250, 360, 450))


def _collection(
    tables: dict[str, _ShardSet],
    rng: random.Random,
    cid: int,
    is_alloc: bool,
    users: list[str],
    logical: list[str],
    alloc_sets: list[int],
    earlier_jobs: list[int],
    machine_ids: list[int],
    t0: int,
    span_us: int,
    mean_instances: float,
    usage_windows: int,
    position: float,
) -> dict[str, Any]:
    before = rng.random() < 0.06
    # submissions follow the generation order (with jitter), so dependencies on
    # earlier collections mostly point to earlier submissions, as in the trace
    progress = int(span_us * 0.9 * position)
    submit = TIME_BEFORE_TRACE if before else t0 + progress + rng.randrange(span_us // 10)
    real_submit = t0 if before else submit
    wait = rng.choice((0, 0, rng.randrange(1, 60 * US), rng.randrange(60 * US, 3600 * US)))
    start = TIME_BEFORE_TRACE if before else submit + wait
    end_type = _pick_end(rng)
    run = rng.randrange(10 * US, 4 * 3600 * US)
    end = real_submit + wait + run
    if end_type is not None and rng.random() < 0.03:
        end = TIME_AFTER_TRACE
    priority = _priority(rng)
    sched_class = rng.randrange(4)
    alloc = rng.choice(alloc_sets) if (not is_alloc and alloc_sets and rng.random() < 0.2) else 0
    parent = rng.choice(earlier_jobs) if (earlier_jobs and rng.random() < 0.2) else None
    after = (
        sorted(set(rng.sample(earlier_jobs, min(len(earlier_jobs), rng.randrange(1, 4)))))
        if (earlier_jobs and rng.random() < 0.06)
        else []
    )
    if not is_alloc and rng.random() < 0.01:
        after.append(cid + 10**12)  # a predecessor that is not in the trace
    common = {
        "collection_id": cid,
        "scheduling_class": sched_class,
        "collection_type": 1 if is_alloc else 0,
        "priority": priority,
        "alloc_collection_id": None if is_alloc else alloc,
    }
    coll = {
        **common,
        "user": rng.choice(users),
        "collection_name": _hash(rng),
        "collection_logical_name": rng.choice(logical),
        "parent_collection_id": parent,
        "start_after_collection_ids": after,
        "max_per_machine": rng.choice((None, 0, 1, 2)),
        "max_per_switch": rng.choice((None, 0, 4)),
        "vertical_scaling": rng.choice((None, 1, 2, 3)),
        "scheduler": rng.choice((0, 0, 1)),
    }
    events: list[tuple[int, int, int | None]] = []
    if before:
        events.append((submit, SUBMIT, 3))  # EXISTS_BUT_NO_CREATION
    else:
        events.append((submit, SUBMIT, None))
        if rng.random() < 0.2:
            events.append((submit + wait // 3, QUEUE, None))
            events.append((submit + 2 * wait // 3, ENABLE, None))
    events.append((start, SCHEDULE, 1 if rng.random() < 0.02 else None))
    if rng.random() < 0.05:
        events.append((start + run // 2, UPDATE_RUNNING, None))
    if end_type is not None:
        missing = 2 if end_type == LOST else (4 if rng.random() < 0.02 else None)
        events.append((end, end_type, missing))
    for time, kind, missing in events:
        tables["collection_events"].write(
            {"time": time, "type": kind, "missing_type": missing, **coll}
        )
    count = 1 + min(int(rng.expovariate(1 / max(mean_instances - 1, 1e-9))), 200)
    cpus = _norm(rng, 0.002, 0.08)
    memory = _norm(rng, 0.001, 0.05)
    constraint = (
        [{"name": _hash(rng)[:16], "value": str(rng.randrange(4)), "relation": rng.randrange(8)}]
        if rng.random() < 0.1
        else []
    )
    statuses = []
    for index in range(count):
        statuses.append(
            _instance(
                tables,
                rng,
                common,
                index,
                submit,
                start,
                end,
                end_type,
                cpus,
                memory,
                constraint,
                machine_ids,
                usage_windows,
                is_alloc,
                alloc,
            )
        )
    return {
        "collection_type": 1 if is_alloc else 0,
        "submit": submit,
        "start": start,
        "end": end if end_type is not None else None,
        "end_type": end_type,
        "instances": count,
        "cpus": cpus,
        "memory": memory,
        "priority": priority,
        "parent": parent,
        "start_after": after,
        "alloc": alloc or None,
        "instance_end_types": statuses,
    }


def _instance(
    tables: dict[str, _ShardSet],
    rng: random.Random,
    common: dict[str, Any],
    index: int,
    submit: int,
    start: int,
    end: int,
    end_type: int | None,
    cpus: float,
    memory: float,
    constraint: list[dict[str, Any]],
    machine_ids: list[int],
    usage_windows: int,
    is_alloc: bool,
    alloc: int,
) -> int | None:
    machine = rng.choice(machine_ids)
    base = {
        **common,
        "instance_index": index,
        "alloc_instance_index": (index if alloc else -1) if not is_alloc else -1,
        "resource_request": {"cpus": cpus, "memory": memory},
        "constraint": constraint,
    }
    rows = [(submit, SUBMIT, 0, 3 if submit == TIME_BEFORE_TRACE else None)]
    if rng.random() < 0.05:
        rows.append((submit, UPDATE_PENDING, 0, None))
    sched = start if start == TIME_BEFORE_TRACE else start + rng.randrange(0, 2 * US)
    if rng.random() < 0.05 and end != TIME_AFTER_TRACE and end_type is not None:
        # evicted once, then rescheduled elsewhere
        mid_time = max(sched, TIME_OFFSET_US) + (end - max(sched, TIME_OFFSET_US)) // 3
        rows.append((sched, SCHEDULE, machine, None))
        rows.append((mid_time, EVICT, machine, None))
        machine = rng.choice(machine_ids)
        rows.append((mid_time + US, SCHEDULE, machine, None))
    else:
        rows.append((sched, SCHEDULE, machine, None))
    inst_end = end_type
    if end_type is not None:
        end_kind = FAIL if end_type == FINISH and rng.random() < 0.05 else end_type
        rows.append((end, end_kind, machine, None))
        inst_end = end_kind
    for time, kind, mach, missing in rows:
        tables["instance_events"].write(
            {"time": time, "type": kind, "missing_type": missing, "machine_id": mach, **base}
        )
    if usage_windows:
        first = max(sched, TIME_OFFSET_US)
        last = end if end not in (TIME_AFTER_TRACE,) and end_type is not None else first + 900 * US
        window = 300 * US
        t = first
        for _ in range(usage_windows):
            if t >= last:
                break
            w_end = min(t + window, last)
            avg = round(cpus * rng.uniform(0.1, 1.2), 6)
            mem = round(memory * rng.uniform(0.3, 1.0), 6)
            dist = sorted(round(avg * rng.uniform(0.2, 1.5), 6) for _ in range(11))
            tables["instance_usage"].write(
                {
                    "start_time": t,
                    "end_time": w_end,
                    "collection_id": common["collection_id"],
                    "instance_index": index,
                    "machine_id": machine,
                    "alloc_collection_id": alloc or 0,
                    "alloc_instance_index": -1,
                    "collection_type": common["collection_type"],
                    "average_usage": {"cpus": avg, "memory": mem},
                    "maximum_usage": {"cpus": dist[-1], "memory": round(mem * 1.1, 6)},
                    "random_sample_usage": {"cpus": dist[5]},
                    "assigned_memory": memory,
                    "page_cache_memory": round(mem * 0.1, 6),
                    "cycles_per_instruction": round(rng.uniform(0.5, 3), 3),
                    "memory_accesses_per_instruction": round(rng.uniform(0.001, 0.02), 5),
                    "sample_rate": 1.0,
                    "cpu_usage_distribution": dist,
                    "tail_cpu_usage_distribution": dist[-9:],
                }
            )
            t = w_end
    return inst_end


#: Names of the event types and missing types (for documentation of fixtures).
EVENT_NAMES = EVENT_TYPES
MISSING_NAMES = MISSING_TYPES
