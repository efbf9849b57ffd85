"""Reading accounting files (both layouts) into a :class:`~schedlab.model.Workload`.

Records are parsed in chunks: a tight loop splits each line (colon) or matches it
(JSON) and keeps the few values the model needs as text; numbers are converted and
checked a chunk at a time with numpy, and the jobs are built as
:class:`~schedlab.model.JobColumns` with one small ``extras`` dict per job holding
the source record (so writing back in the same layout is byte-for-byte lossless).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import Any, BinaryIO

import numpy as np

from schedlab._io import open_text, source_name
from schedlab.errors import FormatError
from schedlab.model import JobColumns, Workload

from . import colon as colon_layout
from . import jsonl as json_layout
from .colon import RecordError
from .mapping import build_header, name_ranks, parse_requests, swf_status
from .names import (
    COLON_FULL_FIELDS,
    EXTRA_LINE,
    EXTRA_LINES,
    EXTRA_RECORD,
    EXTRA_RECORDS,
    MS_THRESHOLD,
    NO_NAME,
)

CHUNK = 65536
_EMPTY = frozenset({""})

#: Row positions (see jsonl.ROW_FIELDS); the first ten are numbers.
(
    R_JOB,
    R_TASK,
    R_SUB,
    R_START,
    R_END,
    R_FAILED,
    R_EXIT,
    R_SLOTS,
    R_CPU,
    R_MEM,
    R_QNAME,
    R_OWNER,
    R_GROUP,
    R_CATEGORY,
    R_PE,
    R_DELETED,
    R_CMDLINE,
) = range(17)
_NUMERIC = ("job_number", "task_number", "submission_time", "start_time", "end_time",
            "failed", "exit_status", "slots", "cpu")
_INTEGRAL = (R_JOB, R_TASK, R_FAILED, R_EXIT, R_SLOTS)

# Colon field positions of the row values (memory: maxvmem, or ru_maxrss in KB).
_COLON_ROW_VMEM = itemgetter(5, 35, 8, 9, 10, 11, 12, 34, 36, 42, 0, 3, 2, 39, 41)
_COLON_ROW_RSS = itemgetter(5, 35, 8, 9, 10, 11, 12, 34, 36, 16, 0, 3, 2, 39, 41)


def layout_of(line: str) -> str:
    """``"jsonl"`` for a line that starts a JSON object, else ``"colon"``."""
    return "jsonl" if line.lstrip().startswith("{") else "colon"


class _Rejects:
    """Bad records: raised at once in strict mode, counted in lenient mode."""

    def __init__(self, source: str, lenient: bool) -> None:
        self.source, self.lenient = source, lenient
        self.items: list[dict[str, Any]] = []

    def add(self, line: int, field: str | None, message: str, text: str) -> None:
        if not self.lenient:
            raise FormatError(message, source=self.source, line=line, field=field)
        self.items.append({"line": line, "field": field, "error": message, "text": text})


class _Chunks:
    """Accumulates converted chunks of records."""

    def __init__(self, use_rss: bool, layout: str) -> None:
        self.use_rss, self.layout = use_rss, layout
        self.numbers: list[np.ndarray] = []  # each (n, 10)
        self.flags: list[np.ndarray] = []  # each (n, 2): pe task, deleted
        self.names: list[np.ndarray] = []  # each (n, 4): qname, owner, group, request ids
        self.raw: list[str] = []
        self.lines: list[int] = []
        self.queues: dict[str, int] = {}
        self.owners: dict[str, int] = {}
        self.groups: dict[str, int] = {}
        self.requests: dict[Any, int] = {}
        self.request_values: list[tuple[float, float, float]] = []

    def _intern(self, table: dict, values: Iterable[Any]) -> np.ndarray:
        get = table.get
        out = []
        append = out.append
        for value in values:
            number = get(value)
            if number is None:
                number = table[value] = len(table)
            append(number)
        return np.array(out, dtype=np.int64)

    def _request_ids(self, categories: tuple, cmdlines: tuple | None) -> np.ndarray:
        table, values = self.requests, self.request_values
        ids = self._intern(table, categories)
        while len(values) < len(table):
            values.append(None)  # type: ignore[arg-type]
        for category, number in table.items():
            if values[number] is None:
                values[number] = parse_requests(category)
        if cmdlines is None:
            return ids
        # JSONL: what the category does not say may be in the submit command line.
        for i, number in enumerate(ids.tolist()):
            seconds, procs, memory = values[number]
            cmdline = cmdlines[i]
            if cmdline and (seconds != seconds or memory != memory):  # noqa: PLR0124
                s2, _p2, m2 = parse_requests(cmdline)
                if seconds != seconds and s2 == s2 or memory != memory and m2 == m2:  # noqa: PLR0124
                    merged = (
                        s2 if seconds != seconds else seconds,  # noqa: PLR0124
                        procs,
                        m2 if memory != memory else memory,  # noqa: PLR0124
                    )
                    key = ("cmdline", merged)
                    got = table.get(key)
                    if got is None:
                        got = table[key] = len(table)
                        values.append(merged)
                    ids[i] = got
        return ids

    def add(self, rows: list[tuple], raw: list[str], lines: list[int], rejects: _Rejects) -> None:
        """Convert and check one chunk of rows; bad ones go to ``rejects``."""
        n = len(rows)
        if n == 0:
            return
        columns = list(zip(*rows, strict=True))
        numbers = np.empty((n, 10))
        bad = np.zeros(n, dtype=bool)
        why: dict[int, tuple[str, str]] = {}
        for k in range(10):
            column = columns[k]
            try:
                numbers[:, k] = np.fromiter(map(float, column), np.float64, n)
            except (ValueError, TypeError):
                for i, value in enumerate(column):
                    try:
                        numbers[i, k] = float(value)
                    except (ValueError, TypeError):
                        numbers[i, k] = np.nan
                        if not bad[i]:
                            bad[i] = True
                            why[i] = (_field_name(k, self), f"expected a number, got {value!r}")
        self._check(numbers, bad, why)
        if self.layout == "jsonl":
            scale = np.full(n, 1e6)
        else:
            largest = numbers[:, R_SUB : R_END + 1].max(axis=1)
            scale = np.where(largest >= MS_THRESHOLD, 1000.0, 1.0)
        numbers[:, R_MEM] = numbers[:, R_MEM] * (1024.0 if self.use_rss and
                                                 self.layout == "colon" else 1.0)
        names = np.empty((n, 4), dtype=np.int64)
        names[:, 0] = self._intern(self.queues, columns[R_QNAME])
        names[:, 1] = self._intern(self.owners, columns[R_OWNER])
        names[:, 2] = self._intern(self.groups, columns[R_GROUP])
        names[:, 3] = self._request_ids(
            columns[R_CATEGORY], columns[R_CMDLINE] if self.layout == "jsonl" else None
        )
        flags = np.empty((n, 2), dtype=bool)
        flags[:, 0] = np.fromiter(
            (p != "NONE" and p != "" for p in columns[R_PE]), bool, n
        )
        flags[:, 1] = (
            np.fromiter(columns[R_DELETED], bool, n) if self.layout == "jsonl" else False
        )
        numbers = np.column_stack([numbers, scale])
        if bad.any():
            for i in np.flatnonzero(bad).tolist():
                field, message = why[i]
                rejects.add(lines[i], field, message, raw[i])
            keep = ~bad
            numbers, names, flags = numbers[keep], names[keep], flags[keep]
            kept = np.flatnonzero(keep).tolist()
            raw = [raw[i] for i in kept]
            lines = [lines[i] for i in kept]
        self.numbers.append(numbers)
        self.names.append(names)
        self.flags.append(flags)
        self.raw.extend(raw)
        self.lines.extend(lines)

    def _check(self, numbers: np.ndarray, bad: np.ndarray, why: dict) -> None:
        """Mark records with impossible values (the first problem is reported)."""

        def mark(mask: np.ndarray, field: str, message: Callable[[int], str]) -> None:
            for i in np.flatnonzero(mask & ~bad).tolist():
                bad[i] = True
                why[i] = (field, message(i))

        with np.errstate(invalid="ignore"):
            for k in _INTEGRAL:
                col = numbers[:, k]
                mark(~np.isfinite(col) | (col != np.floor(col)), _field_name(k, self),
                     lambda i, k=k: f"expected an integer, got {numbers[i, k]!r}")
            for k in (R_SUB, R_START, R_END):
                col = numbers[:, k]
                mark(~np.isfinite(col) | (col < 0), _field_name(k, self),
                     lambda i, k=k: f"expected a time stamp, got {numbers[i, k]!r}")
            sub, start, end = numbers[:, R_SUB], numbers[:, R_START], numbers[:, R_END]
            mark((start > 0) & (end < start), "end_time",
                 lambda i: f"end before start ({end[i]:.0f} < {start[i]:.0f})")
            mark((start > 0) & (sub > 0) & (start < sub), "start_time",
                 lambda i: f"start before submission ({start[i]:.0f} < {sub[i]:.0f})")
            mark(numbers[:, R_SLOTS] < 0, "slots", lambda i: "expected a slot count >= 0")


def _field_name(k: int, chunks: _Chunks) -> str:
    if k == R_MEM:
        if chunks.layout == "colon":
            return "ru_maxrss" if chunks.use_rss else "maxvmem"
        return "usage.eusage.maxrss" if chunks.use_rss else "usage.eusage.maxvmem"
    if k == R_CPU and chunks.layout == "jsonl":
        return "usage.eusage.cpu"
    return _NUMERIC[k]


def _parse_lines(
    lines_iter: Iterable[str], rejects: _Rejects, use_rss: bool, counters: dict[str, Any]
) -> tuple[_Chunks | None, list[str]]:
    """Parse every record; returns the chunks and the ``#`` comment lines."""
    chunks: _Chunks | None = None
    comments: list[str] = []
    rows: list[tuple] = []
    raw: list[str] = []
    linenos: list[int] = []
    layout = None
    colon_row = _COLON_ROW_RSS if use_rss else _COLON_ROW_VMEM
    full = COLON_FULL_FIELDS
    fast_json = json_layout.fast_row
    ignored = counters["ignored"]
    for lineno, line in enumerate(lines_iter, 1):
        if line[-1:] == "\n":
            line = line[:-1]
            if line[-1:] == "\r":
                line = line[:-1]
        if len(line) <= 1:
            continue
        if line[0] == "#":
            comments.append(line)
            continue
        if layout is None:
            layout = layout_of(line)
            chunks = _Chunks(use_rss, layout)
        if layout == "colon":
            fields = line.split(":")
            if not (len(fields) == full and fields[43].isdigit() and fields[44].isdigit()):
                try:
                    fields = colon_layout.split_record(line)
                except RecordError as exc:
                    rejects.add(lineno, exc.field, exc.message, line)
                    continue
            rows.append(colon_row(fields))
        else:
            row = fast_json(line, use_rss)
            if row is None:
                try:
                    record = json_layout.parse_record(line)
                except RecordError as exc:
                    rejects.add(lineno, exc.field, exc.message, line)
                    continue
                kind = record.get("type", "acct")
                if kind != "acct":
                    ignored[kind] = ignored.get(kind, 0) + 1
                    continue
                row = json_layout.record_row(record, use_rss)
            rows.append(row)
        raw.append(line)
        linenos.append(lineno)
        if len(rows) >= CHUNK:
            assert chunks is not None
            chunks.add(rows, raw, linenos, rejects)
            rows, raw, linenos = [], [], []
    if rows:
        assert chunks is not None
        chunks.add(rows, raw, linenos, rejects)
    return chunks, comments


def read_accounting(
    source: str | os.PathLike[str] | BinaryIO,
    *,
    lenient: bool = False,
    group: bool = True,
    order: str = "submit",
    job_numbers: str = "sequence",
    memory: str = "maxvmem",
) -> Workload:
    """Read a Grid Engine / Open Cluster Scheduler accounting file (either layout).

    Options: ``lenient`` skips bad records and counts them
    (``workload.meta["skipped"]``, details in ``meta["rejects"]``); ``group`` joins
    the records of one job (restarts, parallel tasks); ``order`` is ``"submit"``
    (jobs sorted by submit time, as SWF wants) or ``"file"``; ``job_numbers`` is
    ``"sequence"`` (1..N in job order) or ``"sge"`` (Grid Engine's job numbers,
    repeated for array tasks); ``memory`` is ``"maxvmem"`` or ``"maxrss"``.
    """
    name = source_name(source)
    base = os.path.basename(name)
    rejects = _Rejects(name, lenient)
    counters: dict[str, Any] = {"ignored": {}}
    with open_text(source) as fh:
        try:
            chunks, comments = _parse_lines(fh, rejects, memory == "maxrss", counters)
        except UnicodeDecodeError as exc:
            raise FormatError(f"not UTF-8 text ({exc.reason})", source=name) from None
    if chunks is None or not chunks.raw:
        layout = chunks.layout if chunks is not None else "colon"
        header = build_header(
            source=base, layout=layout, origin=0, last_end=None, jobs=0, records=0,
            queues={}, users={}, groups={}, comments=comments, grouped=False,
        )
        workload = Workload.from_arrays(JobColumns.empty(0), header)
        workload.to_arrays().extras = []
        _fill_meta(workload, rejects, counters, layout, 0, 0)
        return workload
    return _build(chunks, comments, rejects, counters, base, group, order, job_numbers)


def _fill_meta(workload: Workload, rejects: _Rejects, counters: dict, layout: str,
               records: int, jobs: int) -> None:
    workload.meta["skipped"] = len(rejects.items)
    workload.meta["rejects"] = rejects.items
    workload.meta["ignored"] = counters["ignored"]
    workload.meta["layout"] = layout
    workload.meta["records"] = records
    workload.meta["jobs"] = jobs


def _groups(job: np.ndarray, task: np.ndarray, sub: np.ndarray) -> tuple[np.ndarray, int]:
    """Group id per record (numbered by first appearance) for the key
    (job number, task number, submission time)."""
    n = len(job)
    order = np.lexsort((np.arange(n), sub, task, job))
    sj, st, ss = job[order], task[order], sub[order]
    new = np.ones(n, dtype=bool)
    new[1:] = (sj[1:] != sj[:-1]) | (st[1:] != st[:-1]) | (ss[1:] != ss[:-1])
    raw_id = np.empty(n, dtype=np.int64)
    raw_id[order] = np.cumsum(new) - 1
    first = order[new]  # first record (smallest index) of each raw group
    renumber = np.empty(len(first), dtype=np.int64)
    renumber[np.argsort(first, kind="stable")] = np.arange(len(first))
    return renumber[raw_id], len(first)


def _build(chunks: _Chunks, comments: list[str], rejects: _Rejects, counters: dict,
           base: str, group: bool, order: str, job_numbers: str) -> Workload:
    numbers = np.concatenate(chunks.numbers)
    names = np.concatenate(chunks.names)
    flags = np.concatenate(chunks.flags)
    raw, lines = chunks.raw, chunks.lines
    n = len(raw)
    scale = numbers[:, 10]
    sub, start, end = numbers[:, R_SUB], numbers[:, R_START], numbers[:, R_END]
    is_pe = flags[:, 0]

    # Group records into jobs: main record per job, summed CPU and max memory.
    if group:
        gid, count = _groups(numbers[:, R_JOB], numbers[:, R_TASK], sub)
    else:
        gid, count = np.arange(n), n
    cpu = numbers[:, R_CPU].copy()
    mem = numbers[:, R_MEM].copy()
    extras: list[dict[str, Any]]
    if count == n:  # one record per job (group ids follow first appearance)
        main = np.arange(n)
        extras = [{EXTRA_RECORD: r, EXTRA_LINE: ln} for r, ln in zip(raw, lines, strict=True)]
        job_cpu, job_mem = cpu, mem
    else:
        sizes = np.bincount(gid, minlength=count)
        by_group = np.argsort(gid, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        main = np.empty(count, dtype=np.int64)
        job_cpu = np.empty(count)
        job_mem = np.empty(count)
        extras = [None] * count  # type: ignore[list-item]
        single = sizes == 1
        single_records = by_group[bounds[:-1][single]]
        main[single] = single_records
        job_cpu[single] = cpu[single_records]
        job_mem[single] = mem[single_records]
        for g, i in zip(np.flatnonzero(single).tolist(), single_records.tolist(), strict=True):
            extras[g] = {EXTRA_RECORD: raw[i], EXTRA_LINE: lines[i]}
        for g in np.flatnonzero(~single).tolist():
            members = by_group[bounds[g] : bounds[g + 1]].tolist()
            jobs_records = [m for m in members if not is_pe[m]]
            head = jobs_records[-1] if jobs_records else members[-1]
            used = [head] + [m for m in members if is_pe[m] and m != head]
            main[g] = head
            job_cpu[g] = float(np.nansum(cpu[used])) if not np.isnan(cpu[used]).all() else np.nan
            job_mem[g] = float(np.nanmax(mem[used])) if not np.isnan(mem[used]).all() else np.nan
            extras[g] = {
                EXTRA_RECORDS: tuple(raw[m] for m in members),
                EXTRA_LINES: tuple(lines[m] for m in members),
            }

    # Absolute seconds, origin, relative times.
    s = scale[main]
    j_sub, j_start, j_end = sub[main], start[main], end[main]
    started = j_start > 0
    known_sub = j_sub > 0
    sub_s = np.where(known_sub, j_sub / s, np.where(started, j_start / s, np.nan))
    candidates = np.where(sub > 0, sub / scale, np.where(start > 0, start / scale, np.inf))
    first = candidates.min()
    origin = int(math.floor(first)) if np.isfinite(first) else 0
    o = origin * s
    submit = np.where(known_sub, (j_sub - o) / s, np.where(started, (j_start - o) / s, np.nan))
    wait = np.where(started & known_sub, (j_start - j_sub) / s, np.nan)
    run = np.where(started, (j_end - j_start) / s, np.nan)
    ends = np.where(end > 0, end / scale, -np.inf)
    last_end = float(ends.max()) if n and np.isfinite(ends.max()) else None
    del sub_s

    slots = numbers[main, R_SLOTS]
    per_slot = np.where(slots > 0, slots, np.nan)
    queue_ids = name_ranks(chunks.queues, NO_NAME)
    user_ids = name_ranks(chunks.owners, _EMPTY)
    group_ids = name_ranks(chunks.groups, _EMPTY)
    requests = np.array(chunks.request_values, dtype=np.float64).reshape(-1, 3)
    req = requests[names[main, 3]]
    req_procs = np.where(np.isnan(req[:, 1]), slots, req[:, 1])
    status = swf_status(
        numbers[main, R_FAILED], numbers[main, R_EXIT], started, flags[main, 1]
    )
    data = {
        "job_number": numbers[main, R_JOB].copy(),
        "submit_time": submit,
        "wait_time": wait,
        "run_time": run,
        "allocated_processors": np.where(started, slots, np.nan),
        "average_cpu_time": np.where(started, job_cpu / per_slot, np.nan),
        "used_memory": np.where(started, job_mem / 1024.0 / per_slot, np.nan),
        "requested_processors": req_procs,
        "requested_time": req[:, 0],
        "requested_memory": req[:, 2],
        "status": status,
        "user_id": user_ids[names[main, 1]],
        "group_id": group_ids[names[main, 2]],
        "executable_number": np.full(count, np.nan),
        "queue_number": queue_ids[names[main, 0]],
        "partition_number": np.full(count, np.nan),
        "preceding_job_number": np.full(count, np.nan),
        "think_time": np.full(count, np.nan),
    }
    if order == "submit":
        key = np.where(np.isnan(submit), np.inf, submit)
        perm = np.argsort(key, kind="stable")
        if not np.array_equal(perm, np.arange(count)):
            data = {k: v[perm] for k, v in data.items()}
            extras = [extras[i] for i in perm.tolist()]
    if job_numbers == "sequence":
        data["job_number"] = np.arange(1, count + 1, dtype=np.float64)
    columns = JobColumns(data, extras)
    header = build_header(
        source=base,
        layout=chunks.layout,
        origin=origin,
        last_end=last_end,
        jobs=count,
        records=n,
        queues=_table(chunks.queues, queue_ids),
        users=_table(chunks.owners, user_ids),
        groups=_table(chunks.groups, group_ids),
        comments=comments,
        grouped=count < n,
    )
    workload = Workload.from_arrays(columns, header)
    _fill_meta(workload, rejects, counters, chunks.layout, n, count)
    return workload


def _table(names: dict[str, int], ids: np.ndarray) -> dict[int, str]:
    return {int(ids[i]): name for name, i in names.items() if not np.isnan(ids[i])}
