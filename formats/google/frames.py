"""Parsing one v3 shard into a columnar frame.

A *frame* is a ``dict`` of equal-length numpy arrays, one per column the reducer
needs: integer columns are ``int64`` with :data:`~.schema.NULL_INT` for null or
missing, float columns ``float64`` with NaN, text and repeated fields ``object``.
Two extra columns, ``_shard`` and ``_line``, record where each row came from; they
break ties between events with equal times, so the result never depends on the
order in which shards are read (in-process or on a Dask cluster).

Two parsers produce the same frames:

* the exact parser reads line by line with :func:`json.loads` (CSV rows and
  Parquet exports go through the same record conversion) and reports bad input
  with the shard and line number;
* the fast parser (:mod:`.arrow_parse`, when pyarrow is installed) hands blocks
  of a JSON shard to ``pyarrow.json`` with an explicit schema of the needed
  fields and converts whole columns; anything irregular (a parse error, an
  unknown enum name, a key of another table in the sample, a column of two
  types) sends the shard back to the exact parser, which then names the
  offending line.
"""

from __future__ import annotations

import csv
import io
import json
import os
import zlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
from schedlab.errors import FormatError
from schedlab.io import open_binary

from .schema import NULL_INT, V3_ENUMS, V3_KEYSETS, by_name, guess_table

INT, ENUM, FLOAT, STR, LIST_INT, RAW, BOOL = range(7)

#: Columns kept per table: (frame column, key path in the record, kind).
COLUMNS: dict[str, tuple[tuple[str, tuple[str, ...], int], ...]] = {
    "collection_events": (
        ("time", ("time",), INT),
        ("type", ("type",), ENUM),
        ("collection_id", ("collection_id",), INT),
        ("scheduling_class", ("scheduling_class",), ENUM),
        ("missing_type", ("missing_type",), ENUM),
        ("collection_type", ("collection_type",), ENUM),
        ("priority", ("priority",), INT),
        ("alloc_collection_id", ("alloc_collection_id",), INT),
        ("user", ("user",), STR),
        ("collection_name", ("collection_name",), STR),
        ("collection_logical_name", ("collection_logical_name",), STR),
        ("parent_collection_id", ("parent_collection_id",), INT),
        ("start_after_collection_ids", ("start_after_collection_ids",), LIST_INT),
        ("max_per_machine", ("max_per_machine",), INT),
        ("max_per_switch", ("max_per_switch",), INT),
        ("vertical_scaling", ("vertical_scaling",), ENUM),
        ("scheduler", ("scheduler",), ENUM),
    ),
    "instance_events": (
        ("time", ("time",), INT),
        ("type", ("type",), ENUM),
        ("collection_id", ("collection_id",), INT),
        ("scheduling_class", ("scheduling_class",), ENUM),
        ("missing_type", ("missing_type",), ENUM),
        ("collection_type", ("collection_type",), ENUM),
        ("priority", ("priority",), INT),
        ("alloc_collection_id", ("alloc_collection_id",), INT),
        ("instance_index", ("instance_index",), INT),
        ("machine_id", ("machine_id",), INT),
        ("alloc_instance_index", ("alloc_instance_index",), INT),
        ("cpus", ("resource_request", "cpus"), FLOAT),
        ("memory", ("resource_request", "memory"), FLOAT),
        ("constraint", ("constraint",), RAW),
    ),
    "instance_usage": (
        ("start_time", ("start_time",), INT),
        ("end_time", ("end_time",), INT),
        ("collection_id", ("collection_id",), INT),
        ("instance_index", ("instance_index",), INT),
        ("machine_id", ("machine_id",), INT),
        ("collection_type", ("collection_type",), ENUM),
        ("avg_cpus", ("average_usage", "cpus"), FLOAT),
        ("avg_memory", ("average_usage", "memory"), FLOAT),
        ("max_cpus", ("maximum_usage", "cpus"), FLOAT),
        ("max_memory", ("maximum_usage", "memory"), FLOAT),
    ),
    "machine_events": (
        ("time", ("time",), INT),
        ("machine_id", ("machine_id",), INT),
        ("type", ("type",), ENUM),
        ("switch_id", ("switch_id",), STR),
        ("cpus", ("capacity", "cpus"), FLOAT),
        ("memory", ("capacity", "memory"), FLOAT),
        ("platform_id", ("platform_id",), STR),
        ("missing_data_reason", ("missing_data_reason",), ENUM),
    ),
    "machine_attributes": (
        ("time", ("time",), INT),
        ("machine_id", ("machine_id",), INT),
        ("name", ("name",), STR),
        ("deleted", ("deleted",), BOOL),
    ),
}

_DTYPES = {INT: np.int64, ENUM: np.int64, BOOL: np.int64, FLOAT: np.float64}


class Rejects:
    """Counts (and remembers the first few of) the records skipped in lenient mode."""

    LIMIT = 1000

    def __init__(self) -> None:
        self.count = 0
        self.by_reason: dict[str, int] = {}
        self.messages: list[str] = []

    def add(self, error: FormatError, reason: str) -> None:
        """Count one skipped record (or unreadable rest of a shard)."""
        self.count += 1
        self.by_reason[reason] = self.by_reason.get(reason, 0) + 1
        if len(self.messages) < self.LIMIT:
            self.messages.append(str(error))

    def merge(self, other: Rejects) -> None:
        """Add the counts of another collector."""
        self.count += other.count
        for key, value in other.by_reason.items():
            self.by_reason[key] = self.by_reason.get(key, 0) + value
        room = self.LIMIT - len(self.messages)
        self.messages.extend(other.messages[: max(room, 0)])

    def as_dict(self) -> dict[str, Any]:
        """``{"total": n, "by_reason": {...}}`` for ``workload.meta["skipped"]``."""
        return {"total": self.count, "by_reason": dict(sorted(self.by_reason.items()))}


def empty_frame(table: str) -> dict[str, np.ndarray]:
    """A frame with no rows."""
    frame = {name: np.empty(0, dtype=_DTYPES.get(kind, object)) for name, _, kind in COLUMNS[table]}
    frame["_shard"] = np.empty(0, dtype=np.int64)
    frame["_line"] = np.empty(0, dtype=np.int64)
    return frame


def frame_length(frame: Mapping[str, np.ndarray]) -> int:
    """Number of rows."""
    return len(frame["_line"])


def concat_frames(table: str, frames: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Join frames of one table."""
    frames = [f for f in frames if frame_length(f)]
    if not frames:
        return empty_frame(table)
    if len(frames) == 1:
        return frames[0]
    return {name: np.concatenate([f[name] for f in frames]) for name in frames[0]}


# --------------------------------------------------------------------------- values


def _enum_lookup(table: Mapping[int, str]) -> tuple[dict[str, int], frozenset[int]]:
    return by_name(table), frozenset(table)


def _to_int(value: Any) -> int:
    kind = type(value)
    if kind is int:
        return value
    if value is None:
        return NULL_INT
    if kind is str:
        text = value.strip()
        if not text:
            return NULL_INT
        return int(text)
    if kind is float and value.is_integer():
        return int(value)
    raise ValueError(f"expected an integer, got {value!r}")


def _to_float(value: Any) -> float:
    if value is None:
        return np.nan
    kind = type(value)
    if kind is float or kind is int:
        return float(value)
    if kind is str:
        return float(value) if value.strip() else np.nan
    raise ValueError(f"expected a number, got {value!r}")


def _to_str(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"expected a string, got {value!r}")


def _to_bool(value: Any) -> int:
    if value is None:
        return NULL_INT
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    if isinstance(value, str):
        low = value.strip().lower()
        if low in {"true", "1"}:
            return 1
        if low in {"false", "0"}:
            return 0
        if not low:
            return NULL_INT
    raise ValueError(f"expected true or false, got {value!r}")


def _to_list_int(value: Any) -> list[int]:
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        value = json.loads(text) if text else []
    if not isinstance(value, list):
        raise ValueError(f"expected a list of integers, got {value!r}")
    return [_to_int(v) for v in value]


def _to_raw(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        value = json.loads(text) if text else None
    if value is None or value == []:
        return None
    if not isinstance(value, list):
        raise ValueError(f"expected a list, got {value!r}")
    return value


def _make_enum(names: Mapping[int, str]) -> Callable[[Any], int]:
    numbers_by_name, valid = _enum_lookup(names)

    def convert(value: Any) -> int:
        if value is None:
            return NULL_INT
        if type(value) is int:
            if value in valid:
                return value
            raise ValueError(f"unknown value {value} (expected one of {sorted(valid)})")
        if isinstance(value, str):
            text = value.strip()
            if not text:
                return NULL_INT
            if text in numbers_by_name:
                return numbers_by_name[text]
            if text.lstrip("-").isdigit() and int(text) in valid:
                return int(text)
            choices = ", ".join(names.values())
            raise ValueError(f"unknown name {value!r} (expected one of {choices})")
        raise ValueError(f"expected an enum number or name, got {value!r}")

    return convert


def _converters(table: str) -> list[tuple[str, tuple[str, ...], Callable[[Any], Any]]]:
    enums = V3_ENUMS[table]
    out = []
    for name, path, kind in COLUMNS[table]:
        if kind == ENUM:
            func: Callable[[Any], Any] = _make_enum(enums[path[0]])
        else:
            func = {
                INT: _to_int,
                FLOAT: _to_float,
                STR: _to_str,
                LIST_INT: _to_list_int,
                RAW: _to_raw,
                BOOL: _to_bool,
            }[kind]
        out.append((name, path, func))
    return out


# --------------------------------------------------------------------------- exact parser


class _ColumnBuilder:
    """Appends converted records to per-column lists."""

    def __init__(self, table: str, source: str, shard_index: int) -> None:
        self.table = table
        self.source = source
        self.shard_index = shard_index
        self.allowed = V3_KEYSETS[table]
        self.converters = _converters(table)
        self.columns: dict[str, list[Any]] = {name: [] for name, _, _ in self.converters}
        self.lines: list[int] = []

    def add(self, record: Any, line: int) -> None:
        """Convert and append one record; raise :class:`FormatError` if it is bad."""
        if not isinstance(record, dict):
            raise FormatError(
                f"expected a JSON object, got {type(record).__name__}",
                source=self.source,
                line=line,
            )
        if not record.keys() <= self.allowed:
            alien = sorted(set(record) - self.allowed)
            other = guess_table(frozenset(record))
            hint = f"; this looks like a {other} record" if other else ""
            raise FormatError(
                f"key {alien[0]!r} is not a field of {self.table}{hint} "
                "(a shard of another table in the directory?)",
                source=self.source,
                line=line,
            )
        values = []
        for _, path, func in self.converters:
            value = record.get(path[0])
            if len(path) == 2 and value is not None:
                if not isinstance(value, dict):
                    raise FormatError(
                        f"expected an object with {path[1]!r}, got {value!r}",
                        source=self.source,
                        line=line,
                        field=path[0],
                    )
                value = value.get(path[1])
            try:
                values.append(func(value))
            except (ValueError, TypeError) as exc:
                raise FormatError(
                    str(exc), source=self.source, line=line, field=".".join(path)
                ) from None
        for (name, _, _), value in zip(self.converters, values, strict=True):
            self.columns[name].append(value)
        self.lines.append(line)

    def frame(self) -> dict[str, np.ndarray]:
        """The rows added so far as a frame."""
        out: dict[str, np.ndarray] = {}
        for name, _, kind in COLUMNS[self.table]:
            values = self.columns[name]
            dtype = _DTYPES.get(kind)
            if dtype is None:
                arr = np.empty(len(values), dtype=object)
                arr[:] = values
            else:
                arr = np.array(values, dtype=dtype)
            out[name] = arr
        out["_shard"] = np.full(len(self.lines), self.shard_index, dtype=np.int64)
        out["_line"] = np.array(self.lines, dtype=np.int64)
        return out


_STREAM_ERRORS = (OSError, EOFError, zlib.error)


def _json_records(fh: io.BufferedIOBase, source: str, start: int = 0) -> Iterator[tuple[int, Any]]:
    """``(line number, decoded value)`` for each non-blank line after line ``start``."""
    loads = json.loads
    line_no = start
    while True:
        try:
            raw = fh.readline()
        except _STREAM_ERRORS as exc:
            raise FormatError(
                f"unreadable compressed data after line {line_no} ({exc})",
                source=source,
                line=line_no + 1,
            ) from None
        if not raw:
            return
        line_no += 1
        if not raw.strip():
            continue
        try:
            value = loads(raw)
        except ValueError as exc:
            truncated = not raw.endswith(b"\n")
            what = "truncated JSON line" if truncated else "invalid JSON"
            raise FormatError(f"{what} ({exc})", source=source, line=line_no) from None
        yield line_no, value


def _unflatten(row: Mapping[str, str]) -> dict[str, Any]:
    """A CSV export row as a record: ``resource_request.cpus`` (or ``_cpus``) columns
    are folded back into nested objects; empty cells are nulls."""
    record: dict[str, Any] = {}
    for key, value in row.items():
        if key is None:
            raise ValueError("more cells than header columns")
        cell = None if value in ("", None) else value
        for sep in (".", "__"):
            if sep in key:
                outer, inner = key.split(sep, 1)
                record.setdefault(outer, {})
                if cell is not None:
                    record[outer][inner] = cell
                break
        else:
            for outer in (
                "resource_request",
                "average_usage",
                "maximum_usage",
                "capacity",
                "random_sample_usage",
            ):
                prefix = outer + "_"
                if key.startswith(prefix) and key[len(prefix) :] in ("cpus", "memory"):
                    record.setdefault(outer, {})
                    if cell is not None:
                        record[outer][key[len(prefix) :]] = cell
                    break
            else:
                record[key] = cell
    return {k: (v if v != {} else None) for k, v in record.items()}


def _csv_records(fh: io.BufferedIOBase, source: str) -> Iterator[tuple[int, Any]]:
    text = io.TextIOWrapper(fh, encoding="utf-8", newline="")
    reader = csv.DictReader(text)
    try:
        for row in reader:
            try:
                record = _unflatten(row)
            except ValueError as exc:
                raise FormatError(str(exc), source=source, line=reader.line_num) from None
            yield reader.line_num, record
    except _STREAM_ERRORS as exc:
        raise FormatError(
            f"unreadable compressed data ({exc})", source=source, line=reader.line_num + 1
        ) from None
    except csv.Error as exc:
        raise FormatError(f"bad CSV ({exc})", source=source, line=reader.line_num) from None


def parse_exact(
    path: str | os.PathLike[str],
    table: str,
    kind: str,
    shard_index: int,
    rejects: Rejects | None = None,
) -> dict[str, np.ndarray]:
    """Parse a JSON-lines or CSV shard record by record.

    Bad input raises :class:`FormatError` naming the shard and line; with
    ``rejects`` (lenient mode) bad records are counted and skipped instead, and an
    unreadable compressed tail ends the shard (counted once).
    """
    source = os.fspath(path)
    builder = _ColumnBuilder(table, source, shard_index)
    try:
        fh = open_binary(path)
    except _STREAM_ERRORS as exc:
        raise FormatError(f"cannot open shard ({exc})", source=source) from None
    with fh:
        records = _csv_records(fh, source) if kind == "csv" else _json_records(fh, source)
        while True:
            try:
                line, record = next(records)
            except StopIteration:
                break
            except FormatError as exc:
                if "compressed" not in exc.message:
                    exc = _check_compression(path, exc)
                if rejects is None:
                    raise exc from None
                reason = "unreadable" if "compressed" in exc.message else "invalid"
                rejects.add(exc, reason)
                if reason == "unreadable" or kind == "csv":
                    break
                # a generator is finished once it raised: resume after the bad line
                records = _json_records(fh, source, exc.line or 0)
                continue
            try:
                builder.add(record, line)
            except FormatError as exc:
                if rejects is None:
                    raise
                reason = "other_table" if "not a field of" in exc.message else "invalid"
                rejects.add(exc, reason)
    return builder.frame()


def _check_compression(path: str | os.PathLike[str], error: FormatError) -> FormatError:
    """A bad line in a compressed shard may be garbage from a damaged stream: read the
    whole stream once (gzip checks its CRC) and, if it is damaged, say so."""
    with open(path, "rb") as raw:
        magic = raw.read(3)
    if not (magic.startswith(b"\x1f\x8b") or magic == b"BZh"):
        return error
    try:
        with open_binary(path) as fh:
            while fh.read(1 << 20):
                pass
    except _STREAM_ERRORS as exc:
        return FormatError(
            f"corrupt compressed data ({exc}); lines from here on cannot be trusted",
            source=error.source,
            line=error.line,
        )
    return error


def parse_parquet(
    path: str | os.PathLike[str], table: str, shard_index: int, rejects: Rejects | None = None
) -> dict[str, np.ndarray]:
    """Parse a Parquet export (needs pyarrow) through the fast column conversion, or
    record by record when the columns are irregular."""
    pq = _require_pyarrow_parquet()
    source = os.fspath(path)
    try:
        arrow_table = pq.read_table(source)
    except Exception as exc:
        raise FormatError(f"unreadable Parquet shard ({exc})", source=source) from None
    frame = _frame_from_arrow(arrow_table, table, shard_index)
    if frame is not None:
        return frame
    builder = _ColumnBuilder(table, source, shard_index)
    for i, record in enumerate(arrow_table.to_pylist(), start=1):
        try:
            builder.add(record, i)
        except FormatError as exc:
            if rejects is None:
                raise
            rejects.add(exc, "invalid")
    return builder.frame()


def _require_pyarrow_parquet() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        from schedlab.errors import UsageError

        raise UsageError(
            "reading Parquet exports needs pyarrow: pip install 'schedlab[parquet]'"
        ) from None
    return pq


# --------------------------------------------------------------------------- fast parser


def pyarrow_available() -> bool:
    """True when ``pyarrow`` can be imported."""
    try:
        import pyarrow.json  # noqa: F401
    except ImportError:
        return False
    return True


def parse_fast(
    path: str | os.PathLike[str], table: str, shard_index: int, use_threads: bool = True
) -> dict[str, np.ndarray] | None:
    """Parse a JSON-lines shard with ``pyarrow.json``; ``None`` if anything about it
    is irregular (the caller then uses :func:`parse_exact`). See
    :mod:`.arrow_parse`: decompressed blocks, an explicit schema of the needed
    fields typed from the first 64 KiB, repeated fields decoded only where set."""
    from .arrow_parse import parse_json_shard

    return parse_json_shard(path, table, shard_index, use_threads)


def parse_fast_pieces(
    path: str | os.PathLike[str], table: str, shard_index: int, use_threads: bool = True
) -> list[dict[str, np.ndarray]] | None:
    """:func:`parse_fast` as a list of frames (one per block) that
    :func:`concat_frames` joins into its result."""
    from .arrow_parse import parse_json_pieces

    return parse_json_pieces(path, table, shard_index, use_threads)


def _frame_from_arrow(
    arrow_table: Any, table: str, shard_index: int
) -> dict[str, np.ndarray] | None:
    import pyarrow as pa

    names = set(arrow_table.column_names)
    if not names <= V3_KEYSETS[table]:
        return None
    n = arrow_table.num_rows
    enums = V3_ENUMS[table]
    frame: dict[str, np.ndarray] = {}
    try:
        for name, path, kind in COLUMNS[table]:
            if path[0] not in names:
                column = None
            else:
                column = arrow_table.column(path[0])
                if len(path) == 2:
                    column = _struct_field(column, path[1])
                    if column is None:
                        return None
            arr = _convert_arrow(column, kind, n, enums.get(path[0]), pa)
            if arr is None:
                return None
            frame[name] = arr
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, ValueError):
        return None
    frame["_shard"] = np.full(n, shard_index, dtype=np.int64)
    frame["_line"] = np.arange(1, n + 1, dtype=np.int64)
    return frame


def _struct_field(column: Any, field: str) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_null(column.type):
        return column
    if not pa.types.is_struct(column.type):
        return None
    if column.type.get_field_index(field) < 0:
        return pa.nulls(len(column))
    return pc.struct_field(column, field)


def _convert_arrow(column: Any, kind: int, n: int, enum: Mapping[int, str] | None, pa: Any) -> Any:
    import pyarrow.compute as pc

    if column is None or pa.types.is_null(column.type):
        if kind in (INT, ENUM, BOOL):
            return np.full(n, NULL_INT, dtype=np.int64)
        if kind == FLOAT:
            return np.full(n, np.nan)
        arr = np.empty(n, dtype=object)
        arr[:] = [[] for _ in range(n)] if kind == LIST_INT else None
        return arr
    ctype = column.type
    if kind in (INT, ENUM):
        if kind == ENUM and pa.types.is_string(ctype):
            return _enum_from_strings(column, enum or {})
        if pa.types.is_string(ctype):
            column = pc.cast(pc.if_else(pc.equal(column, ""), None, column), pa.int64())
        elif pa.types.is_floating(ctype):
            column = pc.cast(column, pa.int64())  # safe cast: fails on fractions
        elif not pa.types.is_integer(ctype):
            return None
        values = column.fill_null(NULL_INT).to_numpy().astype(np.int64, copy=False)
        if kind == ENUM and not _known_enum_values(values, enum or {}):
            return None
        return values
    if kind == FLOAT:
        if pa.types.is_string(ctype):
            column = pc.cast(column, pa.float64())
        elif not (pa.types.is_floating(ctype) or pa.types.is_integer(ctype)):
            return None
        return pc.cast(column, pa.float64()).fill_null(np.nan).to_numpy()
    if kind == BOOL:
        if not pa.types.is_boolean(ctype):
            return None
        out = np.full(n, NULL_INT, dtype=np.int64)
        valid = column.is_valid().to_numpy(zero_copy_only=False)
        out[valid] = column.fill_null(False).to_numpy(zero_copy_only=False)[valid].astype(np.int64)
        return out
    if kind == STR:
        if not (pa.types.is_string(ctype) or pa.types.is_integer(ctype)):
            return None
        if pa.types.is_integer(ctype):
            column = pc.cast(column, pa.string())
        arr = np.empty(n, dtype=object)
        arr[:] = column.to_numpy(zero_copy_only=False) if n else []
        return arr
    if kind == LIST_INT:
        if not pa.types.is_list(ctype):
            return None
        arr = np.empty(n, dtype=object)
        arr[:] = [_to_list_int(v) for v in column.to_pylist()]
        return arr
    if kind == RAW:
        if not pa.types.is_list(ctype):
            return None
        lengths = pc.list_value_length(column).fill_null(0)
        arr = np.empty(n, dtype=object)
        if pc.max(lengths).as_py():
            arr[:] = [v if v else None for v in column.to_pylist()]
        return arr
    return None


def _known_enum_values(values: np.ndarray, enum: Mapping[int, str]) -> bool:
    """True when every non-null value is a number of ``enum``."""
    present = values[values != NULL_INT]
    if not present.size:
        return True
    low, high = int(present.min()), int(present.max())
    if low < 0 or high > max(enum, default=-1):
        return False
    seen = np.flatnonzero(np.bincount(present))
    return all(int(v) in enum for v in seen)


def _enum_from_strings(column: Any, enum: Mapping[int, str]) -> np.ndarray | None:
    numbers_by_name = by_name(enum)
    values = column.to_pylist()
    mapping: dict[Any, int] = {None: NULL_INT, "": NULL_INT}
    for value in set(values):
        if value in mapping:
            continue
        if value in numbers_by_name:
            mapping[value] = numbers_by_name[value]
        elif value.lstrip("-").isdigit() and int(value) in enum:
            mapping[value] = int(value)
        else:
            return None
    return np.fromiter((mapping[v] for v in values), dtype=np.int64, count=len(values))
