"""The fast JSON-lines shard parser: ``pyarrow.json`` on decompressed blocks.

A shard is inflated block by block (``zlib``, or ISA-L's faster drop-in when the
optional ``isal`` package is installed; both release the GIL), each block cut at
a line end and handed to ``pyarrow.json.read_json`` with an explicit schema of the
scalar fields the reducer needs and ``unexpected_field_behavior="ignore"``, so
pyarrow never builds columns for usage histograms, hashes of other fields and the
like (typing everything it sees costs about 70 % more per usage row).

The types of the schema come from the first 64 KiB of the shard, decoded with
:mod:`json` (which also checks that the records belong to the table). A field the
sample never shows gets the type its siblings use (the BigQuery export writes every
int64 as a string); when a later row writes a field differently, pyarrow names
the column and the block is parsed again with the other type. A column that
really mixes types, a parse error, a blank line: the function returns ``None`` and
the caller uses the exact line parser, which names the bad line.

Repeated fields (``constraint``, ``start_after_collection_ids``) are empty in most
rows; pyarrow would have to infer a type for them, and its struct inference adds
the keys of every row to every row. They are left out of the schema instead: a
regular expression finds the rows where they are not empty (``[]``, ``null`` or
missing), and those lines alone are decoded with :mod:`json`, exactly as the
exact parser does.
"""

from __future__ import annotations

import json
import os
import re
import stat
import zlib
from collections.abc import Iterator
from typing import Any, cast

import numpy as np

from .frames import (
    BOOL,
    COLUMNS,
    FLOAT,
    INT,
    KEY_CHECK_BYTES,
    LIST_INT,
    MAX_LINE_BYTES,
    RAW,
    REQUIRED,
    STR,
    _convert_arrow,
    _to_list_int,
    _to_raw,
    concat_frames,
    limits_of,
    loads_unique,
)
from .schema import V3_ENUMS, V3_KEYSETS

#: Bytes of decompressed text handed to pyarrow at once.
BLOCK_BYTES = 8 << 20
#: Bytes of the head decoded with :mod:`json` to type the schema (and to check
#: that its records have only keys of the table, as the exact parser does there).
SAMPLE_BYTES = KEY_CHECK_BYTES
_READ_BYTES = 1 << 20
#: Inflate with ISA-L when the ``isal`` package is installed (tests switch it off to
#: cover plain zlib).
USE_ISAL = True
#: Largest piece of decompressed output at once.
_PIECE_BYTES = 1 << 20
_MAX_RETRIES = 8
_FLIP_RE = re.compile(r"Column\(/([^)/]+)\) changed from (\w+) to (\w+)")
#: The top-level field of a pyarrow JSON error (``Column(/constraint/[]) changed ...``).
_SPARSE_ERROR_RE = re.compile(r"Column\(/([^)/]+)[)/]")
#: Shared value of the repeated field of rows where it is empty (never mutated:
#: the reducer only ever picks non-empty values).
_EMPTY_LIST: list[int] = []


class Irregular(Exception):
    """Something about the shard needs the exact parser."""


def _inflate(path: str) -> Iterator[bytes]:
    """Decompressed pieces (at most :data:`_PIECE_BYTES` each, so the allocator
    recycles their memory) of a plain or gzip file (several gzip members
    allowed); other compressions and damaged streams are :class:`Irregular`, and so
    is a path that is not a regular file (a pipe can be read once, and format
    detection read its head: the exact parser takes it over, see
    :func:`schedlab.io.open_binary`)."""
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        regular = True  # opening it says what is wrong
    if not regular:
        raise Irregular("not a regular file: left to the exact parser")
    with open(path, "rb") as fh:
        head = fh.read(6)
        fh.seek(0)
        if head.startswith((b"BZh", b"\xfd7zXZ", b"\x28\xb5\x2f\xfd")):
            raise Irregular("bz2, xz or zstd: left to the exact parser")
        if not head.startswith(b"\x1f\x8b"):
            while chunk := fh.read(_PIECE_BYTES):
                yield chunk
            return
        codec, error = _gzip_codec()
        inflater = codec.decompressobj(31)
        fed = False  # the current member has started
        while chunk := fh.read(_READ_BYTES):
            while chunk:
                try:
                    out = inflater.decompress(chunk, _PIECE_BYTES)
                except error as exc:
                    raise Irregular(str(exc)) from None
                fed = True
                if out:
                    yield out
                if inflater.eof:
                    chunk = inflater.unused_data
                    inflater = codec.decompressobj(31)
                    fed = False
                else:
                    chunk = inflater.unconsumed_tail
        if fed and not inflater.eof:
            raise Irregular("truncated gzip stream")


def _gzip_codec() -> tuple[Any, type[Exception]]:
    """The module that inflates gzip: ``isal.isal_zlib`` (Intel ISA-L, about 1.7x
    faster, same output) when the optional ``isal`` package is installed and
    :data:`USE_ISAL` is true, else :mod:`zlib`."""
    if USE_ISAL:
        try:
            from isal import isal_zlib
        except ImportError:
            pass
        else:
            # isal's stub declares ``error`` an instance; it is the exception class
            return isal_zlib, cast("type[Exception]", isal_zlib.error)
    return zlib, zlib.error


def _blocks(path: str, size: int = BLOCK_BYTES) -> Iterator[tuple[bytearray, int]]:
    """Decompressed text in blocks of whole lines (about ``size`` bytes each), as
    ``(buffer, end)``: the block is ``buffer[:end]``. One buffer is reused for every
    block (fresh memory for each would cost a page fault per 4 KiB), so a block
    must be consumed before the next is asked for."""
    buf = bytearray(size + 2 * _PIECE_BYTES)
    held = 0
    for piece in _inflate(path):
        n = len(piece)
        if held + n > len(buf):  # a line longer than the buffer: grow it
            bigger = bytearray(2 * (held + n))
            bigger[:held] = memoryview(buf)[:held]
            buf = bigger
        buf[held : held + n] = piece
        held += n
        if held < size:
            continue
        cut = buf.rfind(b"\n", 0, held) + 1
        if cut == 0:
            if held > MAX_LINE_BYTES:  # the exact parser reports it, without holding it
                raise Irregular("a line longer than MAX_LINE_BYTES")
            continue
        yield buf, cut
        rest = held - cut
        buf[:rest] = bytes(memoryview(buf)[cut:held])
        held = rest
    if held:
        if held - (buf.rfind(b"\n", 0, held) + 1) > MAX_LINE_BYTES:
            raise Irregular("a line longer than MAX_LINE_BYTES")
        yield buf, held


# --------------------------------------------------------------------------- schema


#: JSON kind of the types :mod:`json` decodes scalars to (exactly these types: it
#: makes no subclasses, and ``bool`` is looked up as itself, not as an ``int``).
_JSON_KINDS: dict[type, str] = {bool: "boolean", int: "int", float: "float", str: "string"}


def _json_kind(value: Any) -> str | None:
    """``"boolean"``, ``"int"``, ``"float"``, ``"string"`` or ``None`` for a value
    decoded by :mod:`json` (one dict look-up: the schema sample has thousands)."""
    return _JSON_KINDS.get(type(value))


class _Schema:
    """The Arrow types of a table's needed scalar fields, and how to change them."""

    def __init__(self, table: str, sample: list[dict[str, Any]]) -> None:
        import pyarrow as pa

        self.pa = pa
        self.table = table
        self.kinds: dict[str, int] = {}
        self.types: dict[str, Any] = {}
        self.flips: dict[str, int] = {}
        self.sparse: list[tuple[str, int]] = []
        int_styles: set[str] = set()
        unknown: list[str] = []
        for _, path, kind in COLUMNS[table]:
            key = path[0]
            if key in self.kinds or any(key == s for s, _ in self.sparse):
                continue
            if kind in (RAW, LIST_INT):
                self.sparse.append((key, kind))
                continue
            self.kinds[key] = kind
            values = [r[key] for r in sample if r.get(key) is not None]
            if len(path) == 2:
                inner = [
                    x for v in values if isinstance(v, dict) for x in v.values() if x is not None
                ]
                if any(not isinstance(v, dict) for v in values) or any(
                    _json_kind(x) not in ("int", "float") for x in inner
                ):
                    raise Irregular(f"{key}: not an object of numbers")
                subs = sorted({p[1] for _, p, _ in COLUMNS[table] if p[0] == key})
                self.types[key] = pa.struct([pa.field(s, pa.float64()) for s in subs])
                continue
            seen = {_json_kind(v) for v in values}
            if kind == BOOL:
                if seen - {"boolean"}:
                    raise Irregular(f"{key}: not a boolean")
                self.types[key] = pa.bool_()
                continue
            if len(seen) > 1 or None in seen or "boolean" in seen:
                raise Irregular(f"{key}: mixed types in the sample")
            if not seen:
                unknown.append(key)
                continue
            json_kind = cast(str, seen.pop())  # not None: refused above
            if kind == INT:
                int_styles.add(json_kind)
            self.types[key] = self._arrow_type(kind, json_kind)
        style = int_styles.pop() if len(int_styles) == 1 else "int"
        for key in unknown:
            kind = self.kinds[key]
            guess = style if kind == INT else {STR: "string", FLOAT: "float"}.get(kind, "int")
            self.types[key] = self._arrow_type(kind, guess)
        for key, kind in self.kinds.items():
            if kind == BOOL and key not in self.types:
                self.types[key] = pa.bool_()
        #: repeated fields left out of the schema: a record naming one twice is
        #: found by a scan of the block (:func:`_repeated_key`) instead
        self.scanned: set[str] = set()
        for key, kind in self.sparse:
            sparse_type = self._sparse_type(key, kind, sample, style)
            if sparse_type is None:
                self.scanned.add(key)
            else:
                self.types[key] = sparse_type

    def _sparse_type(
        self, key: str, kind: int, sample: list[dict[str, Any]], style: str
    ) -> Any | None:
        """The type of a repeated field in the schema, or ``None`` to leave it out.

        Its values are decoded from the text (see :func:`_sparse_values`), never
        from pyarrow's column; it is in the schema only so that pyarrow refuses a
        record naming it twice (``Column(/constraint) was specified twice``), as it
        does every field of the schema, at no measurable cost. ``constraint`` (a
        list of objects) is a list of empty structs, whose fields pyarrow skips;
        ``start_after_collection_ids`` a list of the item type of the sample. Where
        a value has another shape (nested lists, items of two types), pyarrow says
        so and :meth:`flip` leaves the field out of the schema."""
        pa = self.pa
        if kind == RAW:
            return pa.list_(pa.struct([]))
        items = {_json_kind(x) for r in sample if isinstance(r.get(key), list) for x in r[key]}
        if len(items) > 1 or items - {"int", "string"}:
            return None
        item = items.pop() if items else style
        return pa.list_(pa.string() if item == "string" else pa.int64())

    def _arrow_type(self, kind: int, json_kind: str) -> Any:
        pa = self.pa
        if json_kind == "string":
            return pa.string()
        if kind == FLOAT or json_kind == "float":
            return pa.float64()
        return pa.int64()

    def arrow(self) -> Any:
        """The explicit schema for ``pyarrow.json``."""
        return self.pa.schema([(k, t) for k, t in self.types.items()])

    def flip(self, message: str) -> bool:
        """Change a column's type after pyarrow said it changed (or leave a repeated
        field whose value has another shape out of the schema); False if it cannot."""
        sparse = _SPARSE_ERROR_RE.search(message)
        if sparse and sparse[1] in self.types and "twice" not in message:
            if any(key == sparse[1] for key, _ in self.sparse):
                del self.types[sparse[1]]
                self.scanned.add(sparse[1])
                return True
        match = _FLIP_RE.search(message)
        if not match:
            return False
        key, _, new = match.groups()
        if key not in self.kinds or self.kinds[key] == BOOL:
            return False
        if self.kinds[key] == STR and new != "string":
            return False
        if self.flips.get(key, 0) >= 1 or new not in ("string", "number"):
            return False
        self.flips[key] = self.flips.get(key, 0) + 1
        kind = self.kinds[key]
        self.types[key] = self._arrow_type(kind, "string" if new == "string" else "int")
        return True


def _sample(buf: bytearray, end: int, table: str) -> list[dict[str, Any]]:
    head = bytes(memoryview(buf)[: min(end, SAMPLE_BYTES)])
    lines = head.split(b"\n")
    if len(lines) > 1 and end > SAMPLE_BYTES:
        lines = lines[:-1]  # the last piece may be cut
    allowed = V3_KEYSETS[table]
    out = []
    for raw in lines:
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            raise Irregular("bad JSON in the sample") from None
        if not isinstance(value, dict) or not value.keys() <= allowed:
            raise Irregular("not a record of this table")
        out.append(value)
    return out


# --------------------------------------------------------------------------- blocks


def _sparse_pattern(key: str) -> re.Pattern[bytes]:
    """``"key":`` followed by a list that is not empty, or by anything but a list or
    ``null`` (a value starting with ``n`` that is not ``null`` is not JSON, and
    pyarrow refuses it). The match ends where the value starts, unless the value
    is a list without nested brackets (up to its first ``]``, on the same line):
    then group 1 is that list."""
    name = re.escape(key.encode())
    return re.compile(rb'"' + name + rb'"\s*:\s*(?=\[\s*[^\]\s]|[^\[n\s])(\[[^\[\]\n]*\])?')


_SPARSE_PATTERNS: dict[str, re.Pattern[bytes]] = {}


def _newlines(block: bytearray, end: int) -> np.ndarray:
    """Offsets of the line ends of ``block[:end]`` (numpy scans without the GIL)."""
    return np.flatnonzero(np.frombuffer(block, dtype=np.uint8, count=end) == 10)


_KEY_PATTERNS: dict[str, re.Pattern[bytes]] = {}


def _repeated_key(block: bytearray, end: int, key: str, newlines: np.ndarray) -> bool:
    """True when some line of ``block[:end]`` names ``key`` twice (a repeated field
    left out of the schema; see :meth:`_Schema._sparse_type`). A match inside a
    string only makes the exact parser read the shard."""
    pattern = _KEY_PATTERNS.get(key)
    if pattern is None:
        pattern = _KEY_PATTERNS[key] = re.compile(rb'"' + re.escape(key.encode()) + rb'"\s*:')
    starts = [m.start() for m in pattern.finditer(block, 0, end)]
    if len(starts) < 2:
        return False
    line_of = np.searchsorted(newlines, np.array(starts, dtype=np.int64))
    return not bool((np.diff(line_of) > 0).all())


def _sparse_values(
    block: bytearray, end: int, key: str, kind: int, rows: int, newlines: np.ndarray
) -> np.ndarray:
    """The column of a repeated field: rows where it is not empty are decoded with
    :mod:`json` (the exact parser's conversion), from the list's own text when it
    holds no nested brackets (all such lists of a block in one call), else from
    the whole line. ``newlines``: :func:`_newlines` of the block."""
    pattern = _SPARSE_PATTERNS.get(key)
    if pattern is None:
        pattern = _SPARSE_PATTERNS[key] = _sparse_pattern(key)
    out = np.empty(rows, dtype=object)
    if kind == LIST_INT:
        out.fill(_EMPTY_LIST)
    hits = [(m.end(), m[1]) for m in pattern.finditer(block, 0, end)]
    if not hits:
        return out
    # the line (0-based) of the value (a simple list holds no line end)
    line_of = np.searchsorted(newlines, np.array([a for a, _ in hits], dtype=np.int64))
    if len(line_of) > 1 and not (np.diff(line_of) > 0).all():
        raise Irregular("repeated key")  # pyarrow would have refused the line too
    lines = line_of.tolist()
    convert = _to_list_int if kind == LIST_INT else _to_raw
    simple = [row for row, (_, text) in zip(lines, hits, strict=True) if text is not None]
    texts = [text for _, text in hits if text is not None]
    whole = [row for row, (_, text) in zip(lines, hits, strict=True) if text is None]
    values: list[Any] = []
    if texts:
        try:
            values = loads_unique(b"[" + b",".join(texts) + b"]")
        except (ValueError, RecursionError):
            values = []
        if len(values) != len(texts):  # one was not what it seemed: decode the lines whole
            whole.extend(simple)
            simple, values = [], []
    try:
        for row, value in zip(simple, values, strict=True):
            out[row] = convert(value)
        for row in whole:
            start = int(newlines[row - 1]) + 1 if row else 0
            stop = int(newlines[row]) if row < len(newlines) else end
            record = loads_unique(block[start:stop])
            out[row] = convert(record.get(key) if isinstance(record, dict) else None)
    except (ValueError, TypeError, AttributeError, OverflowError, RecursionError):
        raise Irregular("bad repeated field") from None
    return out


def _parse_block(
    block: bytearray, end: int, schema: _Schema, use_threads: bool
) -> dict[str, np.ndarray]:
    import pyarrow as pa
    import pyarrow.json as pj

    sparse = any(kind in (RAW, LIST_INT) for _, _, kind in COLUMNS[schema.table])
    if sparse:
        newlines = _newlines(block, end)
        breaks = len(newlines)
    else:
        breaks = int(np.count_nonzero(np.frombuffer(block, dtype=np.uint8, count=end) == 10))
    lines = breaks + (0 if block[end - 1] == 10 else 1)
    read_options = pj.ReadOptions(use_threads=use_threads, block_size=8 << 20)
    for _ in range(_MAX_RETRIES):
        try:
            arrow_table = pj.read_json(
                pa.BufferReader(memoryview(block)[:end]),
                read_options=read_options,
                parse_options=pj.ParseOptions(
                    explicit_schema=schema.arrow(), unexpected_field_behavior="ignore"
                ),
            )
            break
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            if not schema.flip(str(exc)):
                raise Irregular(str(exc)) from None
    else:
        raise Irregular("column types keep changing")
    n = arrow_table.num_rows
    if n != lines:
        raise Irregular("blank lines")  # the exact parser numbers lines as the file does
    for key in schema.scanned:
        if _repeated_key(block, end, key, newlines):
            raise Irregular(f"{key} given twice in a record")
    if _has_empty_rows(arrow_table):
        # a line ``null`` reads as a row of nulls, as ``{}`` does; the exact parser
        # says which (not a record; a record without its time and ids)
        raise Irregular("rows without any needed field")
    enums = V3_ENUMS[schema.table]
    frame: dict[str, np.ndarray] = {}
    try:
        for name, path, kind in COLUMNS[schema.table]:
            if kind in (RAW, LIST_INT):
                frame[name] = _sparse_values(block, end, path[0], kind, n, newlines)
                continue
            column = arrow_table.column(path[0])
            if len(path) == 2:
                import pyarrow.compute as pc

                column = pc.struct_field(column, path[1])
            arr = _convert_arrow(
                column,
                kind,
                n,
                enums.get(path[0]),
                pa,
                limits_of(schema.table, name),
                name in REQUIRED[schema.table],
            )
            if arr is None:
                raise Irregular(f"column {name}")
            frame[name] = arr
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, ValueError):
        raise Irregular("conversion") from None
    return frame


def _is_utf8(block: bytearray, end: int) -> bool:
    """True when ``block[:end]`` is UTF-8 text. pyarrow does not check the strings
    of the fields it skips, and the sample is read by :func:`json.loads`, which lets
    the bytes of a lone surrogate through; the exact parser refuses such a line,
    so every engine must. One numpy pass finds most blocks ASCII (the BigQuery
    export is); others are decoded once."""
    if not end or int(np.frombuffer(block, dtype=np.uint8, count=end).max()) < 0x80:
        return True
    try:
        str(memoryview(block)[:end], "utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _has_empty_rows(arrow_table: Any) -> bool:
    """True when some row has every column null (free when a column has no null)."""
    import pyarrow.compute as pc

    columns = arrow_table.columns
    if not columns or any(column.null_count == 0 for column in columns):
        return False
    empty = pc.is_null(columns[0])
    for column in columns[1:]:
        empty = pc.and_(empty, pc.is_null(column))
    return bool(pc.any(empty).as_py())


def parse_json_shard(
    path: str | os.PathLike[str], table: str, shard_index: int, use_threads: bool = True
) -> dict[str, np.ndarray] | None:
    """A JSON-lines shard as a frame, or ``None`` when the exact parser must read it."""
    parts = parse_json_pieces(path, table, shard_index, use_threads)
    return None if parts is None else concat_frames(table, parts)


def parse_json_pieces(
    path: str | os.PathLike[str], table: str, shard_index: int, use_threads: bool = True
) -> list[dict[str, np.ndarray]] | None:
    """:func:`parse_json_shard` as one frame per block (the in-process reader joins
    the blocks of all shards of a table at once: one copy of the rows, not two)."""
    source = os.fspath(path)
    parts: list[dict[str, np.ndarray]] = []
    schema: _Schema | None = None
    lines = 0
    try:
        for block, end in _blocks(source):
            if not _is_utf8(block, end):
                raise Irregular("not UTF-8")  # the exact parser names the line
            if schema is None:
                schema = _Schema(table, _sample(block, end, table))
            part = _parse_block(block, end, schema, use_threads)
            n = len(part[COLUMNS[table][0][0]])
            part["_shard"] = np.full(n, shard_index, dtype=np.int64)
            part["_line"] = np.arange(lines + 1, lines + n + 1, dtype=np.int64)
            lines += n
            parts.append(part)
    except (Irregular, OSError, EOFError):
        return None
    return parts
