"""Reading accounting files (both layouts) into a :class:`~schedlab.model.Workload`.

Records are parsed a block of lines (about 4 MB) at a time. Each block is first
offered to the bulk paths of :mod:`.bulk` (numpy on the block's bytes for the
colon layout, msgspec for JSONL); a block they decline is read the careful way: a
tight loop splits each line (colon) or parses it (JSON) and keeps the few values
the model needs; numbers are converted and checked a chunk at a time with numpy.
Both ways give the same records, values, errors and rejects. Jobs are built as
:class:`~schedlab.model.JobColumns` with one small ``extras`` dict per job holding
the source record (so writing back in the same layout is byte-for-byte lossless).
"""

from __future__ import annotations

import gc
import json
import math
import os
from collections.abc import Callable, Iterator, Sequence
from itertools import repeat
from operator import itemgetter, methodcaller
from typing import Any, BinaryIO, cast

import numpy as np
from schedlab.errors import FormatError
from schedlab.io import normalized, open_binary, source_name
from schedlab.model import JobColumns, Workload
from schedlab.validation import ERROR, INFO, MAX_MAGNITUDE, MAX_SECONDS, Finding

from . import colon as colon_layout
from .bulk import (
    Part,
    colon_block,
    json_block,
    merge_parts,
    numbers_certainly_good,
)
from .colon import RecordError
from .jsonl import ambiguous_records, describe_json, unmapped_problems
from .mapping import (
    EXTRA_JOB_NUMBER,
    EXTRA_TASK_NUMBER,
    HEAD_KEYS,
    RUNNING_EXIT_STATUS,
    TEXT_KEYS,
    build_header,
    consumable_problem,
    name_ranks,
    parse_consumables,
    parse_requests_checked,
    qsub_requests,
    requested_time_key,
    swf_status,
)
from .names import (
    COLON_FIELDS,
    COLON_FULL_FIELDS,
    COLON_INTEGERS,
    COLON_MEMORY,
    COLON_NUMBERS,
    EXTRA_LINE,
    EXTRA_LINES,
    EXTRA_RECORD,
    EXTRA_RECORDS,
    MS_THRESHOLD,
    NO_NAME,
    shown,
)

BLOCK_CHARS = 1 << 22  # characters read at a time
#: Try the bulk paths of :mod:`.bulk` first (tests turn this off to compare).
BULK = True
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
_INTEGRAL = (R_JOB, R_TASK, R_SUB, R_START, R_END, R_FAILED, R_EXIT, R_SLOTS)
_COLON_NAMES = (*HEAD_KEYS, "cpu", "maxvmem")
_JSON_NAMES = (
    *HEAD_KEYS,
    "usage.eusage.cpu",
    "usage.eusage.maxvmem",
    *TEXT_KEYS,
    "pe_taskid",
    "deleted_by",
    "submit_cmd_line",
)
#: Colon field of each row value (memory: maxvmem, or ru_maxrss in KB).
_COLON_POSITIONS = (5, 35, 8, 9, 10, 11, 12, 34, 36, 42, 0, 3, 2, 39, 41)
_COLON_RSS = 16
_FULL = COLON_FULL_FIELDS
_NAN = float("nan")

_fast_loads: Callable[[str], Any] | None
try:  # an optional accelerator: the same JSON, parsed about four times faster
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - depends on the environment
    _fast_loads = None


def layout_of(line: str) -> str:
    """``"jsonl"`` for a line that starts a JSON object, else ``"colon"``."""
    return "jsonl" if line.lstrip().startswith("{") else "colon"


class _Rejects:
    """Bad records: raised at once in strict mode; in lenient mode kept as
    ``(line, text)`` pairs with one ``bad-record`` error finding each."""

    def __init__(self, source: str, lenient: bool) -> None:
        self.source, self.lenient = source, lenient
        self.items: list[tuple[int, str]] = []
        self.findings: list[Finding] = []

    def add(self, line: int, field: str | None, message: str, text: str) -> None:
        if not self.lenient:
            raise FormatError(message, source=self.source, line=line, field=field)
        self.items.append((line, text))
        self.findings.append(
            Finding(line, field, f"{message} (record skipped)", ERROR, "bad-record")
        )


def _describe(value: Any) -> str:
    """A JSON value for a message, cut as :func:`.names.shown` cuts it."""
    return describe_json(value)


class _Chunks:
    """Converts and accumulates chunks of records (columns of values as read)."""

    def __init__(self, use_rss: bool, layout: str) -> None:
        self.use_rss, self.layout = use_rss, layout
        self.numbers: list[np.ndarray] = []  # each (n, 11): 10 values + time scale
        self.flags: list[np.ndarray] = []  # each (n, 2): pe task, deleted
        self.names: list[np.ndarray] = []  # each (n, 4): qname, owner, group, request ids
        self.raw: list[str] = []
        self.line_parts: list[np.ndarray] = []  # line numbers, one array per chunk
        self.queues: dict[str, int] = {}
        self.owners: dict[str, int] = {}
        self.groups: dict[str, int] = {}
        self.requests: dict[Any, int] = {}
        self.request_values: list[tuple[float, float, float]] = []
        #: ``(field, message)`` of each request id whose values are out of range.
        self.request_problems: dict[int, tuple[str, str]] = {}
        #: the category text of each request id that asks for consumables, else None
        self.consumable_texts: list[str | None] = []
        #: the out-of-range message (or ``None``) of each category seen (bulk path)
        self.category_problems: dict[str, str | None] = {}
        self.cmdline_requests: dict[str, Any] = {}
        self.field_names = _JSON_NAMES if layout == "jsonl" else _COLON_NAMES
        if use_rss:
            self.field_names = (
                *self.field_names[:9],
                "usage.eusage.maxrss" if layout == "jsonl" else "ru_maxrss",
                *self.field_names[10:],
            )

    @staticmethod
    def _intern(table: dict, values: Any) -> np.ndarray:
        """Each value's number in ``table`` (new values are added, numbered in
        order of appearance)."""
        n = len(values)
        first: dict[Any, int] = {}  # value -> index of its first appearance
        at = np.fromiter(map(first.setdefault, values, range(n)), np.int64, n)
        for value in first:
            if value not in table:
                table[value] = len(table)
        numbers = np.zeros(n, dtype=np.int64)
        numbers[list(first.values())] = list(map(table.__getitem__, first))
        return numbers[at]

    def _request_ids(self, categories: Any, cmdlines: Any) -> np.ndarray:
        table, values = self.requests, self.request_values
        ids = self._intern(table, categories)
        for key in list(table)[len(values) :]:
            requested, problems = parse_requests_checked(key)
            problem = next((p for p in problems if p is not None), None)
            if problem is not None:
                self.request_problems[len(values)] = ("category", problem)
            values.append(requested)
            self.consumable_texts.append(key if parse_consumables(key) else None)
        if cmdlines is None:
            return ids
        # JSONL: what the category does not say may be in the submit command line
        # (its qsub -l and -pe options only: see qsub_requests).
        known = np.array(values, dtype=np.float64).reshape(-1, 3)[ids]
        wanting = np.flatnonzero(np.isnan(known[:, 0]) | np.isnan(known[:, 2]))
        if not len(wanting):
            return ids
        isnan = math.isnan
        parsed = self.cmdline_requests
        keys = list(table)
        for i in wanting.tolist():
            cmdline = cmdlines[i]
            if not cmdline:
                continue
            checked = parsed.get(cmdline)
            if checked is None:
                checked = parsed[cmdline] = parse_requests_checked(qsub_requests(cmdline))
            (more_seconds, _procs, more_memory), (time_problem, _, memory_problem) = checked
            seconds, procs, memory = values[ids[i]]
            # a value out of range where the command line is read is an error
            problem = (time_problem if isnan(seconds) else None) or (
                memory_problem if isnan(memory) else None
            )
            if problem is None and isnan(more_seconds) and isnan(more_memory):
                continue
            merged = (
                more_seconds if isnan(seconds) else seconds,
                procs,
                more_memory if isnan(memory) else memory,
            )
            # the category text stays in the key: consumables are read from it
            key = ("cmdline", merged, keys[ids[i]], problem)
            got = table.get(key)
            if got is None:
                got = table[key] = len(table)
                if problem is not None:
                    self.request_problems[got] = ("submit_cmd_line", problem)
                elif ids[i] in self.request_problems:
                    self.request_problems[got] = self.request_problems[ids[i]]
                values.append(merged)
                self.consumable_texts.append(self.consumable_texts[ids[i]])
            ids[i] = got
        return ids

    def _numbers(
        self, columns: list, n: int, bad: np.ndarray, why: dict, typed: bool = False
    ) -> np.ndarray:
        numbers = np.empty((n, 10))
        json_layout = self.layout == "jsonl" and not typed
        for k in range(10):
            column = columns[k]
            if self.layout == "colon":
                # the documented syntax first (numpy's cast also takes '+5', ' 5',
                # '1_000' and other scripts' digits)
                found = colon_layout.numbers_problems(column, k in _INTEGRAL)
                if found:
                    column = list(column)
                    for i, message in found.items():
                        column[i] = "nan"
                        if not bad[i]:
                            bad[i] = True
                            why[i] = (self.field_names[k], message)
            if json_layout:
                allowed = _INT_TYPES if k in _INTEGRAL else _NUMBER_TYPES
                if not set(map(type, column)) <= allowed:
                    for i, value in enumerate(column):
                        if type(value) not in allowed and not bad[i]:
                            bad[i] = True
                            what = "an integer" if k in _INTEGRAL else "a number"
                            why[i] = (
                                self.field_names[k],
                                "missing"
                                if value is None
                                else _out_of_range(value)
                                or f"expected {what}, got {_describe(value)}",
                            )
                    column = [v if type(v) in allowed else _NAN for v in column]
            try:
                numbers[:, k] = np.array(column, dtype=np.float64)
            except (ValueError, TypeError, OverflowError):
                for i, value in enumerate(column):
                    try:
                        numbers[i, k] = float(value)
                    except (ValueError, TypeError, OverflowError):
                        numbers[i, k] = np.nan
                        if not bad[i]:
                            bad[i] = True
                            why[i] = (
                                self.field_names[k],
                                f"expected a number, got {_describe(value)}",
                            )
        return numbers

    def _strings(self, columns: list, bad: np.ndarray, why: dict) -> None:
        for k in range(R_QNAME, R_CMDLINE + 1):
            if k == R_DELETED:
                continue
            column = columns[k]
            if not set(map(type, column)) <= _STR_TYPES:
                for i, value in enumerate(column):
                    if type(value) is not str and not bad[i]:
                        bad[i] = True
                        why[i] = (self.field_names[k], f"expected a string, got {_describe(value)}")
                columns[k] = [v if type(v) is str else "" for v in column]

    def acceptable(self, numbers: np.ndarray, categories: Sequence[str] = ()) -> bool:
        """Whether converted colon records (one row each, as
        :func:`.bulk.colon_block` gives them) are all good, their ``categories``
        (the distinct values) too."""
        bad = np.zeros(len(numbers), dtype=bool)
        self._check(numbers, bad, {})
        if bad.any():
            return False
        known = self.category_problems
        for category in categories:
            problem = known.get(category, "")
            if problem == "":
                found = parse_requests_checked(category)[1]
                problem = known[category] = next((p for p in found if p is not None), None)
            if problem is not None:
                return False
            if "=" in category and parse_consumables(category):
                # the largest total any record of the block could ask for (the
                # exact path checks each record)
                pe_slots = parse_requests_checked(category)[0][1]
                most = float(np.nanmax(numbers[:, R_SLOTS], initial=0.0))
                if pe_slots == pe_slots:
                    most = max(most, pe_slots)
                if consumable_problem(category, most):
                    return False
        return True

    def add_interned(
        self,
        numbers: np.ndarray,
        texts: list[tuple[list[str], np.ndarray]],
        pe_task: np.ndarray,
        raw: list[str],
        lines: Sequence[int],
    ) -> None:
        """Add converted colon records whose names come interned (distinct values
        and an index per record, see :func:`.bulk.colon_block`); the caller has
        checked them with :meth:`acceptable`."""
        n = len(raw)
        largest = numbers[:, R_SUB : R_END + 1].max(axis=1)
        scale = np.where(largest >= MS_THRESHOLD, 1000.0, 1.0)
        if self.use_rss:
            numbers[:, R_MEM] *= 1024.0  # ru_maxrss is in KB
        names = np.empty((n, 4), dtype=np.int64)
        for k, table in enumerate((self.queues, self.owners, self.groups)):
            values, inverse = texts[k]
            names[:, k] = self._intern(table, values)[inverse]
        values, inverse = texts[3]
        names[:, 3] = self._request_ids(values, None)[inverse]
        flags = np.zeros((n, 2), dtype=bool)
        flags[:, 0] = pe_task
        self.numbers.append(np.column_stack([numbers, scale]))
        self.names.append(names)
        self.flags.append(flags)
        self.raw.extend(raw)
        self.line_parts.append(_line_array(lines))

    def add(
        self,
        columns: list,
        raw: list[str],
        lines: Sequence[int],
        rejects: _Rejects,
        typed: bool = False,
        extra: tuple[Sequence[int], list] | None = None,
        unmapped: dict[int, tuple[str, str]] | None = None,
    ) -> None:
        """Convert and check one chunk given as columns; bad records go to ``rejects``.
        ``typed``: JSON values are known to have the types checked here. ``extra``
        (colon): the positions and columns of the number fields the mapping does
        not use, checked too (see :func:`_check_unmapped`). ``unmapped`` (JSONL):
        the problems of the values the mapping does not use, by position (see
        :func:`.jsonl.unmapped_problems`)."""
        n = len(raw)
        if n == 0:
            return
        bad = np.zeros(n, dtype=bool)
        why: dict[int, tuple[str, str]] = {}
        numbers = self._numbers(columns, n, bad, why, typed)
        if self.layout == "jsonl" and not typed:
            self._strings(columns, bad, why)
        if extra is not None:
            _check_unmapped(*extra, bad, why)
        if unmapped:
            for i, problem in unmapped.items():
                if not bad[i]:
                    bad[i] = True
                    why[i] = problem
        self._check(numbers, bad, why, columns)
        if self.layout == "jsonl":
            scale = np.full(n, 1e6)
        else:
            largest = numbers[:, R_SUB : R_END + 1].max(axis=1)
            scale = np.where(largest >= MS_THRESHOLD, 1000.0, 1.0)
            if self.use_rss:
                numbers[:, R_MEM] *= 1024.0  # ru_maxrss is in KB
        names = np.empty((n, 4), dtype=np.int64)
        names[:, 0] = self._intern(self.queues, columns[R_QNAME])
        names[:, 1] = self._intern(self.owners, columns[R_OWNER])
        names[:, 2] = self._intern(self.groups, columns[R_GROUP])
        names[:, 3] = self._request_ids(
            columns[R_CATEGORY], columns[R_CMDLINE] if self.layout == "jsonl" else None
        )
        if self.request_problems:
            problems = self.request_problems
            wrong = np.isin(names[:, 3], np.fromiter(problems, np.int64, len(problems)))
            for i in np.flatnonzero(wrong & ~bad).tolist():
                bad[i] = True
                why[i] = problems[int(names[i, 3])]
        self._check_consumables(names[:, 3], numbers[:, R_SLOTS], bad, why)
        flags = np.zeros((n, 2), dtype=bool)
        pe = columns[R_PE]
        try:
            flags[:, 0] = ~np.fromiter(map(_NOT_PE_TASK.__contains__, pe), bool, n)
        except TypeError:  # an unhashable value (a bad record)
            flags[:, 0] = np.fromiter(map(_is_pe_task, pe), bool, n)
        if self.layout == "jsonl":
            flags[:, 1] = np.fromiter(columns[R_DELETED], bool, n)
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
        self.line_parts.append(_line_array(lines))

    def _check_consumables(
        self, ids: np.ndarray, slots: np.ndarray, bad: np.ndarray, why: dict
    ) -> None:
        """Mark records whose consumable requests are out of range
        (:func:`.mapping.consumable_problem`), each over the slots its job's totals
        are counted for: the category's ``-pe`` count, else the record's slots."""
        texts = self.consumable_texts
        if texts.count(None) == len(texts):  # (no category asks for consumables)
            return
        for i in np.unique(ids).tolist():
            text = texts[i]
            if text is None:
                continue
            pe_slots = self.request_values[i][1]
            for r in np.flatnonzero((ids == i) & ~bad).tolist():
                count = float(slots[r]) if math.isnan(pe_slots) else pe_slots
                problem = consumable_problem(text, count)
                if problem is not None:
                    bad[r] = True
                    why[r] = ("category", problem)

    def _check(
        self, numbers: np.ndarray, bad: np.ndarray, why: dict, columns: list | None = None
    ) -> None:
        """Mark records with impossible values (the first problem is reported).
        ``columns``: the values as read (colon: texts), quoted in the messages
        about values out of range (``numbers`` holds them as floats)."""
        names = self.field_names
        json_layout = self.layout == "jsonl"

        def written(i: int, k: int) -> str:
            """Value ``k`` of record ``i`` as the file has it (JSONL usage values,
            which the bulk path has as floats, as ``%.6g``)."""
            if columns is None or (json_layout and k not in _INTEGRAL):
                return f"{numbers[i, k]:.6g}"
            value = columns[k][i]
            return _describe(value) if json_layout else shown(value)

        def beyond(k: int, bound: str) -> Callable[[int], str]:
            """The message about value ``k`` of a record out of range."""
            return lambda i: f"out of range ({bound}), got {written(i, k)}"

        def mark(mask: np.ndarray, field: str, message: Callable[[int], str]) -> None:
            for i in np.flatnonzero(mask & ~bad).tolist():
                bad[i] = True
                why[i] = (field, message(i))

        def mark_value(mask: np.ndarray, k: int, message: Callable[[float], str]) -> None:
            """:func:`mark` with a message about the record's value in column ``k``."""
            mark(mask, names[k], lambda i: message(float(numbers[i, k])))

        with np.errstate(invalid="ignore"):
            for k in _INTEGRAL:
                col = numbers[:, k]
                mark_value(
                    ~np.isfinite(col) | (col != np.floor(col)),
                    k,
                    lambda value: f"expected an integer, got {value!r}",
                )
            for k in _INTEGRAL:
                mark(
                    np.abs(numbers[:, k]) > MAX_MAGNITUDE, names[k], beyond(k, "at most 2**53 - 1")
                )
            for k in (R_JOB, R_TASK, R_FAILED, R_EXIT):  # (times, slots: below)
                mark_value(
                    numbers[:, k] < 0,
                    k,
                    lambda value: f"expected an integer >= 0, got {value:.0f}",
                )
            for k in (R_SUB, R_START, R_END):
                mark_value(
                    numbers[:, k] < 0,
                    k,
                    lambda value: f"expected a time stamp, got {value:.0f}",
                )
            # Times in seconds (colon: seconds, or milliseconds from 1e11 on; JSONL:
            # microseconds) and CPU seconds within MAX_SECONDS, memory within 2**53 - 1.
            if self.layout == "jsonl":
                per_second = np.full(len(numbers), 1e6)
            else:
                largest = np.nan_to_num(numbers[:, R_SUB : R_END + 1]).max(axis=1)
                per_second = np.where(largest >= MS_THRESHOLD, 1000.0, 1.0)
            for k in (R_SUB, R_START, R_END):
                mark(
                    numbers[:, k] / per_second > MAX_SECONDS,
                    names[k],
                    beyond(k, "a time of at most 1e12 seconds"),
                )
            if not json_layout:
                # A record's unit is decided by its largest stamp; a stamp below
                # 1e11 in a millisecond record (before 1973) is a mix of units.
                milliseconds = per_second == 1000.0
                for k in (R_SUB, R_START, R_END):
                    mark_value(
                        milliseconds & (numbers[:, k] > 0) & (numbers[:, k] < MS_THRESHOLD),
                        k,
                        lambda value: (
                            f"a time in seconds ({value:.0f}) where the record's other"
                            " times are milliseconds (from 1e11 on): units mixed"
                        ),
                    )
            mark(
                np.abs(numbers[:, R_CPU]) > MAX_SECONDS,
                names[R_CPU],
                lambda i: f"out of range (a time of at most 1e12 seconds), got {written(i, R_CPU)}",
            )
            mark(
                np.abs(numbers[:, R_MEM]) > MAX_MAGNITUDE,
                names[R_MEM],
                lambda i: f"out of range (at most 2**53 - 1), got {written(i, R_MEM)}",
            )
            # A negative CPU time or memory size is impossible (as a negative time or
            # slot count is): an error, not a value to carry into SWF.
            mark(
                numbers[:, R_CPU] < 0,
                names[R_CPU],
                lambda i: f"expected a CPU time >= 0, got {numbers[i, R_CPU]:g}",
            )
            mark(
                numbers[:, R_MEM] < 0,
                names[R_MEM],
                lambda i: f"expected a memory size >= 0, got {numbers[i, R_MEM]:g}",
            )
            if self.layout == "colon":
                for k in (R_CPU, R_MEM):
                    mark_value(
                        ~np.isfinite(numbers[:, k]),
                        k,
                        lambda value: f"expected a number, got {value!r}",
                    )
            sub, start, end = numbers[:, R_SUB], numbers[:, R_START], numbers[:, R_END]
            mark(
                (start > 0) & (end < start),
                names[R_END],
                lambda i: f"end before start ({end[i]:.0f} < {start[i]:.0f})",
            )
            mark(
                (start > 0) & (sub > 0) & (start < sub),
                names[R_START],
                lambda i: f"start before submission ({start[i]:.0f} < {sub[i]:.0f})",
            )
            mark(
                numbers[:, R_SLOTS] < 0,
                names[R_SLOTS],
                lambda i: f"expected a slot count >= 0, got {numbers[i, R_SLOTS]:.0f}",
            )


def _check_unmapped(
    positions: Sequence[int], columns: list[list[str]], bad: np.ndarray, why: dict
) -> None:
    """Mark colon records whose number fields that the mapping does not use are
    malformed (in field order; the first problem of a record is reported): each
    must be a finite number of the documented syntax (:func:`.colon.number_problem`),
    like the mapped fields; ``priority`` an integer within 2**53 - 1; the memory
    fields (``ru_maxrss``, ``maxvmem``) from 0 to 2**53 - 1. So a record that is
    read can be converted (the writers and ``record_fields`` parse every field).
    A value out of range is quoted as written."""
    n = len(bad)
    for p, column in zip(positions, columns, strict=True):
        found = colon_layout.numbers_problems(column, p in COLON_INTEGERS)
        if found:
            for i, message in found.items():
                if not bad[i]:
                    bad[i] = True
                    why[i] = (COLON_FIELDS[p], message)
            column = ["nan" if i in found else text for i, text in enumerate(column)]
        try:
            values = np.array(column, dtype=np.float64)
        except (ValueError, TypeError, OverflowError):
            values = np.empty(n)
            for i, text in enumerate(column):
                try:
                    values[i] = float(text)
                except (ValueError, TypeError, OverflowError):
                    values[i] = np.nan
        with np.errstate(invalid="ignore"):
            wrong = ~np.isfinite(values)
            if p in COLON_INTEGERS:
                wrong |= (values != np.floor(values)) | (np.abs(values) > MAX_MAGNITUDE)
            if p in COLON_MEMORY:
                wrong |= (values < 0) | (values > MAX_MAGNITUDE)
        if not wrong.any():
            continue
        name = COLON_FIELDS[p]
        for i in np.flatnonzero(wrong & ~bad).tolist():
            bad[i] = True
            value = values[i]
            if not np.isfinite(value):
                message = f"expected a number, got {shown(column[i])}"
            elif p in COLON_MEMORY and value < 0:
                message = f"expected a memory size >= 0, got {value:g}"
            elif abs(value) > MAX_MAGNITUDE:
                message = f"out of range (at most 2**53 - 1), got {shown(column[i])}"
            else:
                message = f"expected an integer, got {shown(column[i])}"
            why[i] = (name, message)


def _plain_digits(column: list[str]) -> bool:
    """Every value 1 to 15 ASCII digits (``str.isdigit`` alone takes other
    scripts' digits and superscripts)."""
    return (
        all(map(str.isdigit, column))
        and "".join(column).isascii()
        and max(map(len, column), default=0) <= 15
    )


def _out_of_range(value: Any) -> str | None:
    """The message for a number beyond 2**53 - 1 where an integer is expected (a
    parser may give a float for a JSON integer beyond 64 bits), else ``None``."""
    if type(value) is float and abs(value) > MAX_MAGNITUDE and value == value:
        return f"out of range (at most 2**53 - 1), got {value:.6g}"
    return None


_INT_TYPES = frozenset({int})
_NUMBER_TYPES = frozenset({int, float})
_STR_TYPES = frozenset({str})


_NOT_PE_TASK = frozenset({"NONE", ""})


def _is_pe_task(pe_taskid: Any) -> bool:
    return pe_taskid != "NONE" and pe_taskid != ""


#: ``on_bad(line, reason, text)``: told of a line that is not UTF-8 text.
BadText = Callable[[int, str, str], None]


def _decode(data: bytes | memoryview, lineno: int, on_bad: BadText | None) -> tuple[str, bool]:
    """The UTF-8 text of whole lines whose first is line ``lineno``, and whether it
    is all of them. A line that is not UTF-8 raises :class:`UnicodeDecodeError`
    with its number as ``sge_line``; with ``on_bad`` it is reported there instead
    and read as an empty line."""
    try:
        return str(data, "utf-8"), True
    except UnicodeDecodeError as exc:
        raw = bytes(data)
        if on_bad is None:
            exc.sge_line = lineno + raw.count(b"\n", 0, exc.start)  # type: ignore[attr-defined]
            raise
    lines = raw.split(b"\n")
    for i, line in enumerate(lines):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            on_bad(lineno + i, exc.reason, line.decode("utf-8", "replace").rstrip("\r"))
            lines[i] = b""
    return str(b"\n".join(lines), "utf-8"), False


def _blocks(
    fh: Any, on_bad: BadText | None = None
) -> Iterator[tuple[int, list[str], memoryview | None]]:
    """``(number of the first line, lines, bytes)`` blocks of a binary file, decoded
    as UTF-8 (a block ends at a newline, so no character is cut), newlines removed.

    ``bytes`` is a view of the block as read, valid until the next block is asked
    for (the buffer is reused); ``None`` for a last line without a newline and for
    a block with CR bytes (its lines are read the careful way). A line that is not
    UTF-8 raises :class:`UnicodeDecodeError` (``sge_line``: its number), or with
    ``on_bad`` is reported there and read as an empty line (see :func:`_decode`)."""
    buf = bytearray(BLOCK_CHARS)
    view = memoryview(buf)
    held = 0  # bytes of an unfinished line kept at the front
    lineno = 1
    while True:
        if held == len(buf):  # a line longer than the buffer
            buf = buf + bytearray(len(buf))
            view = memoryview(buf)
        got = _fill(fh, view[held:])
        if not got:
            break
        end = held + got
        cut = buf.rfind(b"\n", 0, end) + 1
        if cut == 0:
            held = end
            continue
        block = view[:cut]
        text, whole = _decode(block, lineno, on_bad)
        crlf = "\r" in text or not whole  # (the careful way; so are emptied lines)
        if crlf:
            text = text.replace("\r\n", "\n")
        lines = text.split("\n")
        del text
        lines.pop()  # the empty string after the last newline
        yield lineno, lines, None if crlf else block
        block.release()
        lineno += len(lines)
        held = end - cut
        buf[:held] = bytes(view[cut:end])
    if held:
        text = _decode(view[:held], lineno, on_bad)[0]
        yield lineno, [text[:-1] if text.endswith("\r") else text], None


def _fill(fh: Any, target: memoryview) -> int:
    """Read into ``target`` until it is full or the file ends; bytes read."""
    readinto = getattr(fh, "readinto", None)
    total = 0
    size = len(target)
    while total < size:
        if readinto is not None:
            got = readinto(target[total:])
        else:
            data = fh.read(size - total)
            got = len(data)
            target[total : total + got] = data
        if not got:
            break
        total += got
    return total


class _Parser:
    """Turns blocks of lines into converted chunks."""

    def __init__(self, rejects: _Rejects, use_rss: bool, counters: dict[str, Any]) -> None:
        self.rejects, self.use_rss, self.counters = rejects, use_rss, counters
        self.chunks: _Chunks | None = None
        self.comments: list[str] = []
        self.last_line = 0
        #: What the JSONL bulk path learned of the file's records (see json_block).
        self.json_shape: dict[str, Any] = {}
        positions = list(_COLON_POSITIONS)
        if use_rss:
            positions[R_MEM] = _COLON_RSS
        self.positions = positions
        #: Number fields the mapping does not use, checked all the same (arid and
        #: ar_submission_time are integers by the splitting rules already).
        self.numeric = tuple(positions[: R_MEM + 1])
        self.unmapped = tuple(sorted(COLON_NUMBERS - set(self.numeric) - {43, 44}))
        self.colon_row = itemgetter(*positions, *self.unmapped)

    def feed(self, first: int, lines: list[str], data: bytes | memoryview | None = None) -> None:
        """Parse one block whose first line has number ``first``; ``data``, the
        block's bytes (ending with a newline) if known, lets a bulk path read it."""
        self.last_line = first + len(lines) - 1
        if self.chunks is None:
            for line in lines:
                if len(line) > 1 and line[0] != "#":
                    self.chunks = _Chunks(self.use_rss, layout_of(line))
                    break
            else:
                self.comments.extend(line for line in lines if line[:1] == "#")
                return
        bulk = data is not None and BULK
        if self.chunks.layout == "colon":
            if not (bulk and self._colon_bulk(first, lines, data)):  # type: ignore[arg-type]
                self._colon(first, lines)
        elif not (bulk and self._json_bulk(first, lines, data)):  # type: ignore[arg-type]
            self._json(first, lines)

    def _skip(self, line: str) -> bool:
        if len(line) <= 1:
            return True
        if line[0] == "#":
            self.comments.append(line)
            return True
        return False

    def _colon(self, first: int, lines: list[str]) -> None:
        counts = list(map(str.count, lines, repeat(":", len(lines))))
        if counts.count(_FULL - 1) == len(lines):
            regular = list(range(len(lines)))
            others: list[int] = []
        else:
            regular = [i for i, c in enumerate(counts) if c == _FULL - 1 and lines[i][0] != "#"]
            taken = set(regular)
            others = [i for i in range(len(lines)) if i not in taken]
        columns: list[Any] = []
        extra: tuple[Sequence[int], list] | None = None
        if regular:
            good = lines if len(regular) == len(lines) else [lines[i] for i in regular]
            fields = ":".join(good).split(":")
            arid, ar_sub = fields[43::_FULL], fields[44::_FULL]
            comment = "\n#" in "\n" + "\n".join(fields[0::_FULL])
            if not comment and _plain_digits(arid) and _plain_digits(ar_sub):
                columns = [fields[p::_FULL] for p in self.positions]
                if not numbers_certainly_good(good, self.unmapped, self.numeric):
                    extra = (self.unmapped, [fields[p::_FULL] for p in self.unmapped])
                del fields
            else:  # some records only look regular (e.g. 43 fields + colons)
                others = sorted(others + regular)
                regular = []
        chunks = self.chunks
        assert chunks is not None

        def add_regular() -> None:  # (records out of file order are sorted at the end)
            if regular:
                raw = lines if len(regular) == len(lines) else [lines[i] for i in regular]
                chunks.add(
                    [*columns, [False] * len(raw), []],
                    raw,
                    [first + i for i in regular],
                    self.rejects,
                    extra=extra,  # (None: certainly good, see numbers_certainly_good)
                )

        self._colon_one_by_one(first, lines, others, add_regular)

    def _colon_one_by_one(
        self, first: int, lines: list[str], others: list[int], before: Callable[[], None]
    ) -> None:
        """Split the lines ``others`` of a block record by record (variants), then
        call ``before`` (which adds the block's regular records), then add them."""
        rows = []
        raw_other, lines_other = [], []
        for i in others:
            line = lines[i]
            if self._skip(line):
                continue
            try:
                fields = colon_layout.split_record(line)
            except RecordError as exc:
                self.rejects.add(first + i, exc.field, exc.message, line)
                continue
            rows.append(self.colon_row(fields))
            raw_other.append(line)
            lines_other.append(first + i)
        before()
        if rows:
            assert self.chunks is not None
            columns = [list(c) for c in zip(*rows, strict=True)]
            mapped = len(self.positions)
            self.chunks.add(
                [*columns[:mapped], [False] * len(rows), []],
                raw_other,
                lines_other,
                self.rejects,
                extra=(self.unmapped, columns[mapped:]),
            )

    def _colon_bulk(self, first: int, lines: list[str], data: bytes | memoryview) -> bool:
        """Read a colon block with :func:`.bulk.colon_block`; ``False`` (nothing
        done) if the block has to be read the careful way. The outcome, including
        which error is raised first, is that of :meth:`_colon`."""
        positions = self.positions
        block = colon_block(
            data,
            self.numeric,
            tuple(positions[R_QNAME : R_CATEGORY + 1]),
            positions[R_PE],
            self.unmapped,
        )
        chunks = self.chunks
        assert chunks is not None
        if block is None or not chunks.acceptable(
            block.regular.numbers, _categories(block.regular)
        ):
            return False  # (a bad regular record: the careful path reports it)
        variants = block.variants

        def add_regular() -> None:
            self._add_part(first, lines, block.regular)

        if (
            variants is not None
            and all(len(lines[i]) <= 1 or lines[i][0] == "#" for i in block.leftover)
            and chunks.acceptable(variants.numbers, _categories(variants))
        ):
            merged = merge_parts(block.regular, variants)  # (one chunk, in file order)
            self._colon_one_by_one(first, lines, block.leftover, lambda: None)  # comments
            self._add_part(first, lines, merged)
        else:
            self._colon_one_by_one(first, lines, block.others, add_regular)
        return True

    def _add_part(self, first: int, lines: list[str], part: Part) -> None:
        """Add converted records (checked with :meth:`_Chunks.acceptable`)."""
        rows = part.rows
        if not len(rows):
            return
        if len(rows) == len(lines):  # (rows ascend)
            raw = lines
            numbers: Any = range(first, first + len(lines))
        else:
            picked = rows.tolist()
            raw = [lines[i] for i in picked]
            numbers = [first + i for i in picked]
        assert self.chunks is not None
        self.chunks.add_interned(part.numbers, part.texts, part.pe_task, raw, numbers)

    def _json_bulk(self, first: int, lines: list[str], data: bytes | memoryview) -> bool:
        """Read a JSONL block with :func:`.bulk.json_block`; ``False`` (nothing
        done) if the block has to be read the careful way."""
        columns = json_block(
            data, len(lines), self.use_rss, no_cr=True, learned=self.json_shape
        )  # (no CR: see _blocks)
        if columns is None:
            return False
        assert self.chunks is not None
        self.chunks.add(columns, lines, range(first, first + len(lines)), self.rejects, typed=True)
        return True

    def _json(self, first: int, lines: list[str]) -> None:
        loads = _fast_loads or _strict_json_loads
        numbers = [i for i, line in enumerate(lines) if len(line) > 1 and line[0] != "#"]
        if len(numbers) != len(lines):
            for line in lines:
                if len(line) <= 1 or line[0] == "#":
                    self._skip(line)
            lines = [lines[i] for i in numbers]
        # the records the standard library parsed (None: all), the only parser that
        # lets a lone surrogate through
        by_json: list[int] | None = None if loads is _strict_json_loads else []
        try:
            records = list(map(loads, lines))
        except (ValueError, RecursionError):  # find the bad lines one by one
            records, kept, kept_lines = [], [], []
            for i, line in zip(numbers, lines, strict=True):
                try:
                    records.append(_loads_like_json(loads, line, by_json, len(records)))
                except (ValueError, RecursionError) as exc:
                    self._json_error(first + i, line, exc)
                    continue
                kept.append(i)
                kept_lines.append(line)
            lines, numbers = kept_lines, kept
        ambiguous = ambiguous_records(lines, records, by_json)
        if ambiguous:  # a lone surrogate, a key given twice: no parser should settle it
            for k, (field, message) in sorted(ambiguous.items()):
                self.rejects.add(first + numbers[k], field, message, lines[k])
            keep = [k for k in range(len(records)) if k not in ambiguous]
            records = [records[k] for k in keep]
            lines = [lines[k] for k in keep]
            numbers = [numbers[k] for k in keep]
        if set(map(type, records)) != {dict} or any(map(_has_type, records)):
            keep = []
            for k, record in enumerate(records):
                if type(record) is not dict:
                    self.rejects.add(first + numbers[k], None, "expected a JSON object", lines[k])
                elif "type" in record and record["type"] != "acct":
                    kind = str(record["type"])
                    ignored = self.counters["ignored"]
                    ignored[kind] = ignored.get(kind, 0) + 1
                else:
                    keep.append(k)
            records = [records[k] for k in keep]
            lines = [lines[k] for k in keep]
            numbers = [numbers[k] for k in keep]
        if not records:
            return
        found = list(map(_execd_usage, records))
        bad_usage = [k for k, e in enumerate(found) if e is None]
        if bad_usage:
            for k in bad_usage:
                self.rejects.add(
                    first + numbers[k], "usage", "expected an eusage (or usage) object", lines[k]
                )
            keep = [k for k, e in enumerate(found) if e is not None]
            records = [records[k] for k in keep]
            lines = [lines[k] for k in keep]
            numbers = [numbers[k] for k in keep]
            found = [found[k] for k in keep]
            if not records:
                return
        execd = cast("list[dict[str, Any]]", found)  # the malformed (None) ones are gone
        try:
            heads = list(map(_HEAD, records))
        except KeyError:
            heads = [_head_of(r) for r in records]
        memory = "maxrss" if self.use_rss else "maxvmem"
        usage_values = itemgetter("cpu", memory)
        try:
            uses = list(map(usage_values, execd))
        except KeyError:
            uses = [(e.get("cpu", _NAN), e.get(memory, _NAN)) for e in execd]
        try:
            texts = list(map(_TEXTS, records))
        except KeyError:
            texts = [_texts_of(r) for r in records]
        columns = [list(c) for c in zip(*heads, strict=True)]
        columns += [list(c) for c in zip(*uses, strict=True)]
        t = [list(c) for c in zip(*texts, strict=True)]
        columns += [t[0], t[1], t[2], t[3]]
        columns.append(list(map(_pe_taskid, records)))
        columns.append(list(map(_deleted, records)))
        columns.append(t[4])
        assert self.chunks is not None
        self.chunks.add(
            columns,
            lines,
            [first + i for i in numbers],
            self.rejects,
            unmapped=unmapped_problems(records),
        )

    def _json_error(self, line_number: int, line: str, exc: Exception) -> None:
        try:  # the standard parser's message (with the column) for both parsers
            _strict_json_loads(line)
        except ValueError as strict:
            exc = strict
        except RecursionError:  # (every parser stops somewhere: one message for all)
            exc = ValueError("nested too deeply")
        message = getattr(exc, "msg", str(exc))
        column = getattr(exc, "colno", None)
        where = f" at column {column}" if column else ""
        self.rejects.add(line_number, None, f"invalid JSON ({message}{where})", line)


def _categories(part: Part) -> Sequence[str]:
    """The distinct categories of a part's records (none when it has no record)."""
    return part.texts[3][0] if len(part.texts) > 3 else ()


_NO_USAGE: dict[str, Any] = {}
_HEAD = itemgetter(*HEAD_KEYS)
_TEXTS = itemgetter("qname", "owner", "group", "category", "submit_cmd_line")
_pe_taskid = methodcaller("get", "pe_taskid", "")
_deleted = methodcaller("__contains__", "deleted_by")
_has_type = methodcaller("__contains__", "type")


def _head_of(record: dict[str, Any]) -> tuple:
    g = record.get
    return (
        g("job_number"),
        g("task_number", 0),
        g("submission_time"),
        g("start_time"),
        g("end_time"),
        g("failed", 0),
        g("exit_status", 0),
        g("slots", 1),
    )


def _texts_of(record: dict[str, Any]) -> tuple:
    g = record.get
    return (
        g("qname", ""),
        g("owner", ""),
        g("group", ""),
        g("category", ""),
        g("submit_cmd_line", ""),
    )


def _execd_usage(record: dict[str, Any]) -> dict[str, Any] | None:
    """The execd usage container (``usage.eusage``, or ``usage.usage`` before OCS
    9.0.6); an empty one when the record has no usage; ``None`` when malformed."""
    usage = record.get("usage")
    if usage is None:
        return _NO_USAGE
    if type(usage) is not dict:
        return None
    found = usage.get("eusage")
    if found is None:
        found = usage.get("usage")
    if found is None:
        return _NO_USAGE
    return found if type(found) is dict else None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _strict_json_loads(line: str) -> Any:
    return json.loads(line, parse_constant=_reject_constant)


def _loads_like_json(
    loads: Callable[[str], Any], line: str, by_json: list[int] | None, position: int
) -> Any:
    """``loads(line)``, or the standard parser's value when the fast parser refuses
    valid JSON (orjson stops at integers beyond 64 bits, and at a lone surrogate):
    every parser then gives the same records, and such a value is reported by field
    (out of range; not text). ``position`` is added to ``by_json`` when the
    standard parser gave the value."""
    try:
        return loads(line)
    except (ValueError, RecursionError):
        if loads is _strict_json_loads:
            raise
        value = _strict_json_loads(line)
        if by_json is not None:
            by_json.append(position)
        return value


def read_accounting(
    source: str | os.PathLike[str] | BinaryIO,
    *,
    lenient: bool = False,
    group: bool = True,
    order: str = "submit",
    job_numbers: str = "sequence",
    memory: str = "maxvmem",
    workers: int = 0,
) -> Workload:
    """Read a Grid Engine / Open Cluster Scheduler accounting file (either layout).

    Options: ``lenient`` skips bad records and counts them
    (``workload.meta["skipped"]``, details in ``meta["rejects"]``); ``group`` joins
    the records of one job (restarts, parallel tasks); ``order`` is ``"submit"``
    (jobs sorted by submit time, as SWF wants) or ``"file"``; ``job_numbers`` is
    ``"sequence"`` (1..N in job order) or ``"sge"`` (Grid Engine's job numbers,
    repeated for array tasks); ``memory`` is ``"maxvmem"`` or ``"maxrss"``;
    ``workers``: processes parsing a large uncompressed file in parallel (0: two
    when the file has 32 MB or more and the machine two cores, else one).
    """
    name = source_name(source)
    base = os.path.basename(name)
    rejects = _Rejects(name, lenient)
    counters: dict[str, Any] = {"ignored": {}}
    # Millions of small containers are created and all kept: the cyclic garbage
    # collector would scan them again and again for nothing.
    collecting = gc.isenabled()
    gc.disable()
    try:
        parser = _parse_source(source, name, rejects, memory == "maxrss", counters, workers)
        chunks, comments = parser.chunks, parser.comments
        if chunks is not None and chunks.raw:
            return _build(chunks, comments, rejects, counters, base, group, order, job_numbers)
    finally:
        if collecting:
            gc.enable()
    layout = chunks.layout if chunks is not None else "colon"
    header = build_header(
        source=base,
        layout=layout,
        origin=None,  # (no record: no time, the origin is unknown)
        last_end=None,
        jobs=0,
        records=0,
        queues={},
        users={},
        groups={},
        comments=comments,
        grouped=False,
    )
    workload = Workload.from_arrays(JobColumns.empty(0), header)
    workload.to_arrays().extras = []
    _fill_meta(workload, rejects, counters, layout, 0, 0)
    return workload


PARALLEL_BYTES = 32 << 20


def _read_range(parser: _Parser, fh: Any, stop: int | None, name: str) -> None:
    """Feed the parser the lines of ``fh`` up to byte ``stop`` (or the end). A line
    that is not UTF-8 text is an error naming it (lenient: a skipped record)."""
    rejects = parser.rejects

    def bad_text(line: int, reason: str, text: str) -> None:
        rejects.add(line, None, f"not UTF-8 text ({reason})", text)

    on_bad = bad_text if rejects.lenient else None
    try:
        for first, lines, data in _blocks(_Limited(fh, stop) if stop is not None else fh, on_bad):
            parser.feed(first, lines, data)
    except UnicodeDecodeError as exc:
        raise FormatError(
            f"not UTF-8 text ({exc.reason})", source=name, line=getattr(exc, "sge_line", None)
        ) from None


class _Limited:
    """A binary file read only up to a byte offset."""

    def __init__(self, fh: Any, stop: int) -> None:
        self.fh, self.left = fh, stop - fh.tell()

    def read(self, size: int) -> bytes:
        data = self.fh.read(max(0, min(size, self.left)))
        self.left -= len(data)
        return data

    def readinto(self, target: Any) -> int:
        size = max(0, min(len(target), self.left))
        got = self.fh.readinto(memoryview(target)[:size]) if size else 0
        self.left -= got
        return got


def _parse_source(
    source: Any, name: str, rejects: _Rejects, use_rss: bool, counters: dict, workers: int
) -> _Parser:
    """Parse the whole file; a large plain file is cut in two at a line start and
    the second half parsed by a forked process at the same time."""
    parser = _Parser(rejects, use_rss, counters)
    split = None
    if isinstance(source, (str, os.PathLike)) and workers != 1:
        size = os.path.getsize(source)
        wanted = workers >= 2 or (workers == 0 and size >= PARALLEL_BYTES and _idle_core())
        if wanted and size > 1 << 16 and _fork_available():
            split = _split_offset(source, size)
    if split is None:
        with open_binary(source, normalize=True, name=name) as fh:
            _read_range(parser, fh, None, name)
        return parser
    import multiprocessing

    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(
        target=_parse_half, args=(source, split, rejects.lenient, use_rss, sender), daemon=True
    )
    child.start()
    sender.close()
    try:
        with open(source, "rb") as fh:
            _read_range(parser, normalized(_Limited(fh, split), name=name), None, name)
        try:  # the second half's texts, read while the child may still be parsing
            half: list[str] | None = _half_lines(source, split, rejects.lenient)
        except UnicodeDecodeError:  # (the child reports it, at its place)
            half = None
        result = receiver.recv()
    finally:
        receiver.close()
        if child.is_alive():
            child.terminate()
        child.join()
    _merge(parser, result, rejects, counters, name, half)
    return parser


def _idle_core() -> bool:
    """Whether a second process would get a core of its own: two cores or more,
    no other thread (a fork would copy its locks), and the one-minute load average
    leaves one and a half cores free (measured on a 2-core machine: with one core
    shared the split only adds work)."""
    import threading

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    if cores < 2 or threading.active_count() > 1:
        return False
    try:
        return os.getloadavg()[0] + 1.5 <= cores
    except OSError:
        return True


def _half_lines(path: Any, start: int, lenient: bool = False) -> list[str]:
    """The lines of a file from byte ``start`` on, as the child parsed them (which
    reports the lines that are not UTF-8)."""
    lines: list[str] = []
    on_bad = (lambda line, reason, text: None) if lenient else None
    with open(path, "rb") as fh:
        fh.seek(start)
        for _first, block, _data in _blocks(normalized(fh, strip_bom=False), on_bad):
            lines.extend(block)
    return lines


def _fork_available() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


#: Share of a file parsed by the parent process (it also reads the texts of the
#: child's part, which the child does not send).
PARENT_SHARE = 0.45


def _split_offset(path: Any, size: int) -> int | None:
    """A byte offset near :data:`PARENT_SHARE` of the file that starts a line."""
    with open(path, "rb") as fh:
        if fh.read(6).startswith((b"\x1f\x8b", b"BZh", b"\xfd7zXZ")):
            return None  # compressed: read in one go
        fh.seek(int(size * PARENT_SHARE))
        fh.readline()
        offset = fh.tell()
    return offset if 0 < offset < size else None


def _parse_half(path: Any, start: int, lenient: bool, use_rss: bool, sender: Any) -> None:
    """In the child: parse from ``start`` to the end and send what was found."""
    try:
        rejects = _Rejects(os.fspath(path), lenient)
        counters: dict[str, Any] = {"ignored": {}}
        parser = _Parser(rejects, use_rss, counters)
        with open(path, "rb") as fh:
            fh.seek(start)
            _read_range(parser, normalized(fh, strip_bom=False), None, os.fspath(path))
        chunks = parser.chunks
        state = None
        if chunks is not None:
            state = {
                "layout": chunks.layout,
                "numbers": chunks.numbers,
                "names": chunks.names,
                "flags": chunks.flags,
                "count": len(chunks.raw),
                "lines": _concat_lines(chunks.line_parts),
                "tables": (chunks.queues, chunks.owners, chunks.groups, chunks.requests),
                "request_values": chunks.request_values,
            }
        sender.send(
            {
                "state": state,
                "comments": parser.comments,
                "rejects": rejects.items,
                "findings": rejects.findings,
                "ignored": counters["ignored"],
                "error": None,
            }
        )
    except FormatError as exc:
        sender.send({"error": (exc.message, exc.line, exc.field)})
    finally:
        sender.close()


def _merge(
    parser: _Parser,
    result: dict,
    rejects: _Rejects,
    counters: dict,
    name: str,
    half: list[str] | None,
) -> None:
    """Append the second half's results to the first half's, renumbering lines and
    name tables; ``half`` holds the second half's lines (its record texts)."""
    import attrs

    offset = parser.last_line
    if result["error"] is not None:
        message, line, field = result["error"]
        raise FormatError(
            message, source=name, line=None if line is None else line + offset, field=field
        )
    parser.comments.extend(result["comments"])
    rejects.items.extend((line + offset, text) for line, text in result["rejects"])
    rejects.findings.extend(
        attrs.evolve(f, line=f.line + offset) if f.line is not None else f
        for f in result["findings"]
    )
    for kind, count in result["ignored"].items():
        counters["ignored"][kind] = counters["ignored"].get(kind, 0) + count
    state = result["state"]
    if state is None:
        return
    if parser.chunks is None:
        parser.chunks = _Chunks(parser.use_rss, state["layout"])
    chunks = parser.chunks
    if chunks.layout != state["layout"]:
        raise FormatError(
            f"the file mixes layouts ({chunks.layout} first, then {state['layout']})",
            source=name,
            line=offset + int(state["lines"][0]) if len(state["lines"]) else None,
        )
    remaps = []
    tables = (chunks.queues, chunks.owners, chunks.groups, chunks.requests)
    for own, theirs in zip(tables, state["tables"], strict=True):
        remap = np.empty(len(theirs), dtype=np.int64)
        for key, number in theirs.items():
            mine = own.get(key)
            if mine is None:
                mine = own[key] = len(own)
                if own is chunks.requests:
                    chunks.request_values.append(state["request_values"][number])
            remap[number] = mine
        remaps.append(remap)
    for names in state["names"]:
        for k in range(4):
            names[:, k] = remaps[k][names[:, k]]
    chunks.numbers.extend(state["numbers"])
    chunks.names.extend(state["names"])
    chunks.flags.extend(state["flags"])
    if state["count"]:
        assert half is not None
        numbers = state["lines"]
        if len(numbers) == len(half) and np.array_equal(numbers, np.arange(1, len(half) + 1)):
            chunks.raw.extend(half)
        else:
            chunks.raw.extend([half[i - 1] for i in numbers.tolist()])
        del half
    chunks.line_parts.append(state["lines"] + offset)


def _line_array(lines: Any) -> np.ndarray:
    """Line numbers (a list or a range) as an array."""
    if isinstance(lines, range):
        return np.arange(lines.start, lines.stop, dtype=np.int64)
    return np.array(lines, dtype=np.int64)


def _concat_lines(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _fill_meta(
    workload: Workload, rejects: _Rejects, counters: dict, layout: str, records: int, jobs: int
) -> None:
    workload.meta["skipped"] = len(rejects.items)
    workload.meta["rejects"] = sorted(rejects.items)
    workload.meta["findings"] = sorted(rejects.findings, key=lambda f: f.line)
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


def _build(
    chunks: _Chunks,
    comments: list[str],
    rejects: _Rejects,
    counters: dict,
    base: str,
    group: bool,
    order: str,
    job_numbers: str,
) -> Workload:
    numbers = np.concatenate(chunks.numbers)
    names = np.concatenate(chunks.names)
    flags = np.concatenate(chunks.flags)
    raw = chunks.raw
    line_array = _concat_lines(chunks.line_parts)
    if len(line_array) > 1 and (np.diff(line_array) < 0).any():  # back to file order
        perm = np.argsort(line_array, kind="stable")
        numbers, names, flags = numbers[perm], names[perm], flags[perm]
        raw = list(map(raw.__getitem__, perm.tolist()))
        line_array = line_array[perm]
    lines = line_array.tolist()
    del line_array
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
    main: Any
    numbered = count == n  # (the source numbers are in the extras already)
    if count == n:  # one record per job (group ids follow first appearance)
        main = slice(None)  # (views, not copies, of the record columns)
        # (as _add_source_numbers adds them, in the same pass)
        jobs = numbers[:, R_JOB].astype(np.int64).tolist()
        tasks = numbers[:, R_TASK].astype(np.int64).tolist()
        extras = [
            {EXTRA_RECORD: r, EXTRA_LINE: ln, EXTRA_JOB_NUMBER: j, EXTRA_TASK_NUMBER: t}
            for r, ln, j, t in zip(raw, lines, jobs, tasks, strict=True)
        ]
        del jobs, tasks
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
            # (a final record wins over an intermediate one of the job still running)
            final = [
                m
                for m in jobs_records
                if numbers[m, R_EXIT] != RUNNING_EXIT_STATUS or numbers[m, R_START] <= 0
            ]
            head = (final or jobs_records or members)[-1]
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
    # (no record holds a time: the origin is unknown, not 1970)
    origin = math.floor(first) if np.isfinite(first) else None
    o = (origin or 0) * s
    submit = np.where(known_sub, (j_sub - o) / s, np.where(started, (j_start - o) / s, np.nan))
    wait = np.where(started & known_sub, (j_start - j_sub) / s, np.nan)
    # an intermediate record of a job still running: its end is the time of writing
    running = started & (numbers[main, R_EXIT] == RUNNING_EXIT_STATUS)
    any_running = bool(running.any())
    if any_running:
        started_done = started & ~running
    else:
        started_done = started
    run = np.where(started_done, (j_end - j_start) / s, np.nan)
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
    if not numbered:
        _add_source_numbers(extras, numbers[main, R_JOB], numbers[main, R_TASK])
    _add_consumables(extras, chunks.requests, names[main, 3], req_procs)
    status = swf_status(numbers[main, R_FAILED], numbers[main, R_EXIT], started, flags[main, 1])
    data = {
        "job_number": numbers[main, R_JOB].copy(),
        "submit_time": submit,
        "wait_time": wait,
        "run_time": run,
        "allocated_processors": np.where(started, slots, np.nan),
        "average_cpu_time": np.where(started_done, job_cpu / per_slot, np.nan),
        "used_memory": np.where(started_done, job_mem / 1024.0 / per_slot, np.nan),
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
    if any_running:
        _note_running(rejects, running, main, lines)
    time_sources = _time_sources(chunks.requests, names[main, 3], req[:, 0])
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
        memory="maxrss" if chunks.use_rss else "maxvmem",
        time_sources=time_sources,
        running=int(running.sum()) if any_running else 0,
    )
    workload = Workload.from_arrays(columns, header)
    _fill_meta(workload, rejects, counters, chunks.layout, n, count)
    return workload


def _note_running(rejects: _Rejects, running: np.ndarray, main: Any, lines: list[int]) -> None:
    """One ``still-running`` info finding for each job whose main record is an
    intermediate ``acct`` record of a job still running (see
    :data:`.mapping.RUNNING_EXIT_STATUS`)."""
    records = np.arange(len(lines))[main]
    for i in np.flatnonzero(running).tolist():
        rejects.findings.append(
            Finding(
                lines[int(records[i])],
                "exit_status",
                "job still running (an intermediate acct record, exit_status 4294967295):"
                " run time, status, CPU time and memory unknown",
                INFO,
                "still-running",
            )
        )


def _time_sources(requests: dict[Any, int], ids: np.ndarray, seconds: np.ndarray) -> frozenset:
    """Where the jobs' requested times came from: ``h_rt``, ``s_rt`` (the category)
    and ``cmdline`` (the qsub options of the JSONL ``submit_cmd_line``)."""
    used = np.zeros(len(requests), dtype=bool)
    used[ids[~np.isnan(seconds)]] = True
    if not used.any():
        return frozenset()
    found: set[str] = set()
    for key, number in requests.items():
        if not used[number]:
            continue
        if isinstance(key, tuple):  # ("cmdline", values, category, problem)
            found.add(requested_time_key(key[2]) or "cmdline")
        elif "s_rt" not in key:
            found.add("h_rt")
        else:
            found.add(requested_time_key(key) or "h_rt")
    return frozenset(found)


def _add_source_numbers(
    extras: list[dict[str, Any]], job_numbers: np.ndarray, task_numbers: np.ndarray
) -> None:
    """Add each job's Grid Engine job and task number (``sge.job_number``,
    ``sge.task_number``, integers) to its extras, before the job numbers are
    renumbered 1..N: what joins a result back to the accounting file. (Both are
    integers within 2**53 - 1: the reader refuses any other value.)"""
    jobs = job_numbers.astype(np.int64).tolist()
    tasks = task_numbers.astype(np.int64).tolist()
    for entry, job, task in zip(extras, jobs, tasks, strict=True):
        entry[EXTRA_JOB_NUMBER] = job
        entry[EXTRA_TASK_NUMBER] = task


def _add_consumables(
    extras: list[dict[str, Any]], requests: dict[Any, int], ids: np.ndarray, slots: np.ndarray
) -> None:
    """Add each job's consumable requests (``request.gpus``, ``request.NAME``: job
    totals, the category's per-slot amount times the requested slots) to its
    extras; jobs whose slots are unknown get none."""
    per_id: list[dict[str, float]] = [{}] * len(requests)
    for key, number in requests.items():
        text = key[2] if isinstance(key, tuple) else key
        if isinstance(text, str) and "=" in text:
            per_id[number] = parse_consumables(text)
    if not any(per_id):
        return
    has = np.fromiter(map(bool, per_id), bool, len(per_id))
    wanted = has[ids]
    for j in np.flatnonzero(wanted & (slots > 0)).tolist():
        count = float(slots[j])
        for name, amount in per_id[int(ids[j])].items():
            total = amount * count
            extras[j][f"request.{name}"] = int(total) if total.is_integer() else total


def _table(names: dict[str, int], ids: np.ndarray) -> dict[int, str]:
    return {int(ids[i]): name for name, i in names.items() if not np.isnan(ids[i])}
