"""Parsing the job lines of an SWF file: a fast vectorised path and a precise one.

The fast path hands a block of lines to :func:`numpy.loadtxt` (as ``int32`` when the
block has no decimal point or exponent, which is about 40 % faster than ``float64``
and 15 % faster than ``int64``; a value out of the ``int32`` range makes loadtxt
stop and the block is read again as ``int64``, then as ``float64``).
Big inputs are split at a line boundary into two parts, and the first is parsed in
a forked child process that writes its rows into shared memory (loadtxt holds the
GIL, so threads would not help): :func:`parse_split`. The gzip reader pipelines
decompression with it (the parent decompresses the rest while the child parses),
and in one process decompresses the rest in a thread while the first part is
parsed in pieces (:func:`parse_split_threaded`). When loadtxt rejects a block, or
the block holds blank or comment lines, the block is parsed again line by line by
:func:`parse_block_slow`, which names the line and field of every problem: the slow
path runs only where it is needed.

Every parser returns a :class:`Block`: the values as an ``(18, n)`` float64 array in
SWF field order with NaN for ``-1`` (unknown), the source line of each row, and
whatever else the lines held (extra columns, comments, rejects).
"""

from __future__ import annotations

import contextlib
import io
import math
import mmap
import os
import re
import signal
import struct
import sys
import threading
import warnings
from collections.abc import Callable

import attrs
import numpy as np
from schedlab.errors import FormatError
from schedlab.model import SWF_FIELDS
from schedlab.validation import (
    ERROR,
    INFO,
    MAX_MAGNITUDE,
    MAX_SECONDS,
    SECONDS_FIELDS,
    WARNING,
    Finding,
    out_of_range,
)

from .header import shown

NFIELDS = len(SWF_FIELDS)

#: Fields holding seconds, bounded by :data:`~schedlab.validation.MAX_SECONDS`;
#: every field is bounded by :data:`~schedlab.validation.MAX_MAGNITUDE`.
TIME_FIELDS = tuple(SWF_FIELDS.index(name) for name in SECONDS_FIELDS)
_TIME_MASK = np.zeros(NFIELDS, dtype=bool)
_TIME_MASK[list(TIME_FIELDS)] = True

#: Inputs at least this large (bytes of job lines) are parsed by two processes.
PARALLEL_THRESHOLD = 4 << 20

NUMBER_RE = re.compile(rb"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")


@attrs.define(slots=True)
class Block:
    """Parsed job lines.

    ``values`` is ``(18, n)`` float64 in SWF order (NaN = -1); ``lines`` the
    1-based source line of each row; ``extra_columns`` (lenient reading of files
    with more than 18 columns) maps a row index to the extra column texts;
    ``comments`` maps a row index to the comment lines just before that row (index
    ``n`` for comments after the last row); ``rejects`` lists ``(line, text)`` of
    lines skipped in lenient mode; ``findings`` the problems met while parsing.
    ``unlisted`` counts what :class:`Quota` left out: ``{check: [count, first line,
    last line]}`` of blank and comment lines past :data:`MAX_LISTED` findings, and
    ``"comment-dropped"`` for comment lines past :data:`MAX_KEPT_COMMENTS`.
    """

    values: np.ndarray
    lines: np.ndarray
    extra_columns: dict[int, list[str]] = attrs.field(factory=dict)
    comments: dict[int, list[str]] = attrs.field(factory=dict)
    rejects: list[tuple[int, str]] = attrs.field(factory=list)
    findings: list[Finding] = attrs.field(factory=list)
    unlisted: dict[str, list[int]] = attrs.field(factory=dict)

    def __len__(self) -> int:
        return self.values.shape[1]

    @classmethod
    def empty(cls) -> Block:
        """A block without rows."""
        return cls(np.empty((NFIELDS, 0)), np.empty(0, dtype=np.int64))


def _count_lines(data: bytes, start: int = 0, stop: int | None = None) -> int:
    """Lines in ``data[start:stop]`` (a last line without newline counts)."""
    stop = len(data) if stop is None else stop
    if stop <= start:
        return 0
    return data.count(b"\n", start, stop) + (0 if data[stop - 1 : stop] == b"\n" else 1)


#: Longest line the reader accepts, in bytes. A job line is 18 numbers (some
#: hundred bytes; columns kept past the 18th in lenient mode add a few more): a
#: longer line is corrupt, and parsing one (a decompression bomb of one line, say)
#: would cost several times its size in memory.
MAX_LINE = 1 << 20
LONG_LINE = f"a line longer than {MAX_LINE:,} bytes (no SWF line is)"


#: Findings listed one by one for each kind of ignorable line after the header
#: (``blank-line``, ``late-comment``); the rest are counted (:class:`Quota`), so a
#: file of millions of blank or comment lines does not hold a finding per line.
MAX_LISTED = 1000
LISTED_CHECKS = ("blank-line", "late-comment")
#: Comment lines after the first job kept (with their jobs) per file, and their
#: bytes: the rest are dropped and counted. Real logs have none.
MAX_KEPT_COMMENTS = 10_000
MAX_KEPT_COMMENT_BYTES = 1 << 20
#: ``Block.unlisted`` key of the comment lines dropped.
DROPPED_COMMENTS = "comment-dropped"


def _tally(unlisted: dict[str, list[int]], check: str, count: int, first: int, last: int) -> None:
    """Add ``count`` lines from ``first`` to ``last`` to ``unlisted[check]``."""
    seen = unlisted.get(check)
    if seen is None:
        unlisted[check] = [count, first, last]
    else:
        seen[0] += count
        if first > 0 and (seen[1] <= 0 or first < seen[1]):
            seen[1] = first
        seen[2] = max(seen[2], last)


class Quota:
    """What one file (or one block) lists and keeps of its ignorable lines: up to
    :data:`MAX_LISTED` findings of each of :data:`LISTED_CHECKS`, and up to
    :data:`MAX_KEPT_COMMENTS` comment lines (:data:`MAX_KEPT_COMMENT_BYTES`); the
    rest go to ``unlisted`` (see :class:`Block`)."""

    __slots__ = ("comment_bytes", "comments", "listed", "unlisted")

    def __init__(self) -> None:
        self.listed = dict.fromkeys(LISTED_CHECKS, 0)
        self.comments = 0
        self.comment_bytes = 0
        self.unlisted: dict[str, list[int]] = {}

    def lists(self, check: str, line: int) -> bool:
        """Whether a finding of ``check`` on ``line`` is listed (else counted)."""
        if self.listed[check] < MAX_LISTED:
            self.listed[check] += 1
            return True
        _tally(self.unlisted, check, 1, line, line)
        return False

    def keeps(self, text: str, line: int) -> bool:
        """Whether the comment line ``text`` (on ``line``) is kept (else counted)."""
        size = len(text) + 1
        room = MAX_KEPT_COMMENT_BYTES - self.comment_bytes
        if self.comments < MAX_KEPT_COMMENTS and size <= room:
            self.comments += 1
            self.comment_bytes += size
            return True
        _tally(self.unlisted, DROPPED_COMMENTS, 1, line, line)
        return False

    def apply(self, block: Block) -> None:
        """Bring ``block`` (parsed under a quota of its own) within this one: its
        findings and comments past what is left are moved to ``self.unlisted``,
        which takes the block's ``unlisted`` too (emptied)."""
        if any(f.check in self.listed for f in block.findings):
            kept = []
            for finding in block.findings:
                check = finding.check
                if check not in self.listed or finding.line is None:
                    kept.append(finding)
                elif self.lists(check, finding.line):
                    kept.append(finding)
            block.findings = kept
        for row, comments in list(block.comments.items()):
            # A comment's own line is not known here: the job line it precedes.
            n = len(block)
            line = int(block.lines[row]) if row < n else int(block.lines[-1]) + 1 if n else 0
            keep = [text for text in comments if self.keeps(text, line)]
            if len(keep) < len(comments):
                if keep:
                    block.comments[row] = keep
                else:
                    del block.comments[row]
        for check, (count, first, last) in block.unlisted.items():
            _tally(self.unlisted, check, count, first, last)
        block.unlisted = {}


def _has_long_line(data: bytes, start: int, stop: int) -> bool:
    """Whether some aligned window of :data:`MAX_LINE` bytes of ``data[start:stop]``
    holds no newline (then a line there is at least that long): one short search
    per window, so lines of twice :data:`MAX_LINE` or more are always found."""
    for pos in range(start, stop - MAX_LINE + 1, MAX_LINE):
        if data.find(b"\n", pos, pos + MAX_LINE) < 0:
            return True
    return False


def _loadtxt(data: bytes, start: int = 0, stop: int | None = None) -> np.ndarray | None:
    """``(n, 18)`` values of ``data[start:stop]`` when every line there is a clean job
    line, or ``None`` if loadtxt refuses it (field count, a token that is not a
    number ..., a line of :data:`MAX_LINE` bytes or more). A block running to the
    end is read in place, without a copy."""
    if _has_long_line(data, start, len(data) if stop is None else stop):
        return None
    if stop is None or stop >= len(data):
        stream = io.BytesIO(data)
        stream.seek(start)
        end = len(data)
    else:
        stream, end = None, stop
    integral = all(data.find(c, start, end) < 0 for c in (b".", b"e", b"E"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "input contained no data"
        if not integral:
            mixed = _mixed_columns(data, start, end, stream)
            if mixed is not None:
                return mixed
        for dtype in (np.int32, np.int64, np.float64) if integral else (np.float64,):
            try:
                out = np.loadtxt(
                    _block_source(data, start, end, stream), dtype=dtype, comments=None, ndmin=2
                )
            except (ValueError, OverflowError):
                continue
            if out.size == 0:
                return np.empty((0, NFIELDS))
            if out.shape[1] != NFIELDS:
                return None
            if dtype is np.float64 and not np.isfinite(out).all():
                return None  # nan / inf are not SWF values: let the slow path say where
            if dtype is not np.int32 and not _in_range(out):
                return None  # out of range: the slow path says where
            return out
    return None


def _block_source(data: bytes, start: int, end: int, stream: io.BytesIO | None) -> io.BytesIO:
    """The block ``data[start:end]`` to parse: ``stream`` (which holds ``data``)
    positioned at ``start`` when given (the block then runs to its end), else a
    copy."""
    if stream is None:
        return io.BytesIO(data[start:end])
    stream.seek(start)
    return stream


#: Bytes of a block's start that :func:`_mixed_columns` looks at for fractional
#: columns.
MIXED_SAMPLE = 1 << 16


def _mixed_columns(
    data: bytes, start: int, end: int, stream: io.BytesIO | None
) -> np.ndarray | None:
    """The float64 values of a block with fractional numbers, parsed as int64 in
    the columns that show none in the block's first :data:`MIXED_SAMPLE` bytes and
    as float64 in the others; ``None`` when that does not hold for the whole block
    (a fractional value further down an integer column, a line that is not 18
    numbers ...: :func:`_loadtxt` then parses every column as float64, as before)
    or when the block has a ``-0`` (int64 has no negative zero).

    The values are the same bits either way: an integer token parses to the same
    float64 as int64 then converted (both round to nearest, even beyond 2**53).
    numpy parses integers some four times faster than floats: LANL-CM5's 122,060
    lines, whose sixth column has two decimals, in 0.11 s instead of 0.43.
    ``stream``: the block in place (it runs to the end of ``data``), else None."""
    if data.find(b"-0", start, end) >= 0:
        return None
    sample = bytes(data[start : min(end, start + MIXED_SAMPLE)])
    cut = sample.rfind(b"\n")
    mask = 0
    for line in sample[: cut if cut > 0 else len(sample)].splitlines():
        tokens = line.split()
        if len(tokens) != NFIELDS:
            return None  # not a plain block (comments, short lines): the usual path
        for k, token in enumerate(tokens):
            if b"." in token or b"e" in token or b"E" in token:
                mask |= 1 << k
    if not mask:
        return None
    dtype = np.dtype([(f"f{k}", "f8" if mask >> k & 1 else "i8") for k in range(NFIELDS)])
    try:
        rows = np.loadtxt(
            _block_source(data, start, end, stream), dtype=dtype, comments=None, ndmin=1
        )
    except (ValueError, OverflowError):
        return None
    if rows.size == 0:
        return None
    out = np.empty((len(rows), NFIELDS))
    for k in range(NFIELDS):
        out[:, k] = rows[f"f{k}"]
    if not np.isfinite(out).all() or not _in_range(out):
        return None  # the float64 path finds the same and lets the slow path say where
    return out


def _in_range(rows: np.ndarray) -> bool:
    """Whether every value of ``(n, 18)`` rows is within the bounds of
    :mod:`schedlab.validation` (int32 values always are)."""
    if not rows.size:
        return True
    top = np.abs(rows).max(axis=0)
    return bool((top <= MAX_MAGNITUDE).all() and (top[_TIME_MASK] <= MAX_SECONDS).all())


def _fast_rows(data: bytes, start: int = 0, stop: int | None = None) -> np.ndarray | None:
    """``(n, 18)`` rows of ``data[start:stop]`` if every line is a clean job line."""
    rows = _loadtxt(data, start, stop)
    if rows is None or rows.shape[0] != _count_lines(data, start, stop):
        return None  # a bad line, or blank/comment lines that shift the numbering
    return rows


def parse_block_fast(data: bytes, first_line: int, start: int = 0) -> Block | None:
    """Parse ``data[start:]`` with loadtxt; ``None`` when the precise path is needed."""
    rows = _fast_rows(data, start)
    if rows is None:
        return None
    return _block_from_rows([rows], first_line)


def _field_error(
    source: str, line: int, index: int, token: bytes, why: str = "expected a number"
) -> FormatError:
    name = SWF_FIELDS[index]
    text = token[:200].decode("utf-8", "replace")  # shown() keeps about 40 characters
    return FormatError(
        f"{why}, got {shown(text)}", source=source, line=line, field=f"{index + 1} ({name})"
    )


def _number(token: bytes) -> float | None:
    if not NUMBER_RE.match(token):
        return None
    value = float(token)
    return value if math.isfinite(value) else None


def parse_block_slow(data: bytes, first_line: int, source: str, lenient: bool = False) -> Block:
    """Parse a block line by line, naming the line and field of every problem.

    Strict (default): the first bad line raises :class:`FormatError`. Lenient: bad
    lines are skipped and listed in ``rejects`` with an error finding each, and
    lines with more than 18 fields keep the extra columns (a finding each).
    Blank lines are ignored with an ``info`` finding; comment lines after the
    first job are kept (attached to the next job) with a warning.
    """
    rows: list[list[float]] = []
    lines: list[int] = []
    block = Block.empty()
    pending_comments: list[str] = []
    if not lenient and _has_long_line(data, 0, len(data)):
        # Name the first line too long before splitting (a copy of it all).
        pos = 0
        while pos <= len(data):
            end = data.find(b"\n", pos)
            end = len(data) if end < 0 else end
            if end - pos > MAX_LINE:
                raise FormatError(
                    LONG_LINE, source=source, line=first_line + data.count(b"\n", 0, pos)
                )
            pos = end + 1
    quota = Quota()
    # Line by line (not data.split(), whose list would take 8 bytes a line: 2 GB
    # for a text of 256 MB of blank lines).
    for offset, raw in enumerate(io.BytesIO(data)):
        line_no = first_line + offset
        if raw.endswith(b"\n"):
            raw = raw[:-1]
        if len(raw) > MAX_LINE:
            too_long = FormatError(LONG_LINE, source=source, line=line_no)
            if not lenient:
                raise too_long
            text = raw[:80].decode("utf-8", "replace")
            block.rejects.append((line_no, f"{text}..."))
            block.findings.append(
                Finding(line_no, None, f"{too_long.message} (line skipped)", ERROR, "bad-record")
            )
            continue
        raw = raw.rstrip(b"\r")
        tokens = raw.split()
        if not tokens:
            if quota.lists("blank-line", line_no):
                block.findings.append(
                    Finding(line_no, None, "blank line ignored", INFO, "blank-line")
                )
            continue
        if tokens[0].startswith(b";"):
            text = raw.decode("utf-8", "replace")
            if quota.keeps(text, line_no):
                pending_comments.append(text)
            if quota.lists("late-comment", line_no):
                block.findings.append(
                    Finding(
                        line_no,
                        None,
                        "comment line after the first job line (kept, "
                        "written back before the next job)",
                        WARNING,
                        "late-comment",
                    )
                )
            continue
        problem: FormatError | None = None
        if len(tokens) < NFIELDS or (len(tokens) > NFIELDS and not lenient):
            problem = FormatError(
                f"found {len(tokens)} fields, expected {NFIELDS}"
                + (
                    " (not standard SWF; read it leniently, reader option lenient=true,"
                    " to keep the first 18)"
                    if len(tokens) > NFIELDS
                    else ""
                ),
                source=source,
                line=line_no,
            )
        values: list[float] = []
        if problem is None:
            for index, token in enumerate(tokens[:NFIELDS]):
                value = _number(token)
                if value is None:
                    problem = _field_error(source, line_no, index, token)
                    break
                why = out_of_range(value, index in TIME_FIELDS)
                if why is not None:
                    problem = _field_error(source, line_no, index, token, why)
                    break
                values.append(value)
        if problem is not None:
            if not lenient:
                raise problem
            block.rejects.append((line_no, raw.decode("utf-8", "replace")))
            block.findings.append(
                Finding(
                    line_no,
                    problem.field and _field_name(problem.field),
                    f"{problem.message} (line skipped)",
                    ERROR,
                    "bad-record",
                )
            )
            continue
        if len(tokens) > NFIELDS:
            block.extra_columns[len(rows)] = [
                t.decode("utf-8", "replace") for t in tokens[NFIELDS:]
            ]
            block.findings.append(
                Finding(
                    line_no,
                    None,
                    f"found {len(tokens)} fields, expected {NFIELDS} "
                    f"(columns {NFIELDS + 1}-{len(tokens)} kept in extras)",
                    ERROR,
                    "field-count",
                )
            )
        if pending_comments:
            block.comments[len(rows)] = pending_comments
            pending_comments = []
        rows.append(values)
        lines.append(line_no)
    if pending_comments:
        block.comments[len(rows)] = pending_comments
    block.unlisted = quota.unlisted
    if rows:
        matrix = np.array(rows, dtype=np.float64).T.copy()
        matrix[matrix == -1] = np.nan
        block.values = matrix
        block.lines = np.array(lines, dtype=np.int64)
    return block


def _field_name(label: str) -> str:
    """``"4 (run_time)"`` -> ``"run_time"``."""
    return label.split("(", 1)[1].rstrip(")") if "(" in label else label


def parse_block(
    data: bytes, first_line: int, source: str, lenient: bool = False, start: int = 0
) -> Block:
    """``data[start:]``: fast path, falling back to the precise path for this block."""
    block = parse_block_fast(data, first_line, start)
    if block is None:
        block = parse_block_slow(data[start:] if start else data, first_line, source, lenient)
    return block


def _can_fork() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def parse_body(
    data: bytes,
    first_line: int,
    source: str,
    lenient: bool = False,
    workers: int = 0,
    offset: int = 0,
) -> Block:
    """Parse all job lines of a file: ``data[offset:]``, starting at line
    ``first_line`` (passing the offset saves copying the whole text once).

    ``workers``: 0 picks two processes for inputs of :data:`PARALLEL_THRESHOLD`
    bytes or more on Linux, else one; 1 forces one; 2 forces two where forking is
    possible.
    """
    size = len(data) - offset
    parallel = _can_fork() and (workers >= 2 or (workers == 0 and size >= PARALLEL_THRESHOLD))
    cut = data.find(b"\n", offset + size // 2) + 1 if parallel else 0
    if not parallel or cut <= 0 or cut >= len(data):
        return parse_block(data, first_line, source, lenient, offset)
    # The child parses the first half (copying it out in parallel); the parent the
    # second half, read in place.
    return parse_split(data, offset, cut, lambda: [(data, cut)], first_line, source, lenient)


def parse_split(
    head: bytes,
    offset: int,
    cut: int,
    tail: Callable[[], list[tuple[bytes, int]]],
    first_line: int,
    source: str,
    lenient: bool = False,
) -> Block:
    """Parse ``head[offset:cut]`` (whole lines) in a forked child while the parent
    calls ``tail()`` for the rest of the job lines, a list of ``(data, start)``
    segments of whole lines each meaning ``data[start:]``, and parses them: the
    caller can decompress the rest of a file meanwhile. Same result as parsing
    the concatenation in one go. The caller checks that forking is possible.

    The child writes its rows, already in the final ``(18, n)`` float64 layout
    with NaN for -1, into shared memory; the parent copies them (a plain copy)
    into the result and converts its own rows next to them. The result is in
    private memory: a shared mapping would leak writes made by any process forked
    later (a worker pool, say) back into this one.
    """
    first = _ForkedParse(head, offset, cut)
    shared = None
    try:
        segments = tail()
        rows = _segments_rows(segments)
        shared = first.result()
        if rows is None or shared is None:
            # A problem somewhere: the precise path for the half (or halves) at fault.
            second_line = first_line + head.count(b"\n", offset, cut)
            first_block = (
                parse_block_slow(head[offset:cut], first_line, source, lenient)
                if shared is None
                else _block_from_values(shared.copy(), first_line)
            )
            second_block = (
                parse_block_slow(_segments_text(segments), second_line, source, lenient)
                if rows is None
                else _block_from_rows(rows, second_line)
            )
            return concatenate_blocks([first_block, second_block])
        n1 = shared.shape[1]
        total = n1 + sum(r.shape[0] for r in rows)
        values = np.empty((NFIELDS, total), dtype=np.float64)
        values[:, :n1] = shared
        _fill_parts(values[:, n1:], rows)
        return _block_from_values(values, first_line)
    finally:
        shared = None
        first.close()


def parse_split_threaded(
    head: bytes,
    offset: int,
    cut: int,
    tail: Callable[[], list[tuple[bytes, int]]],
    first_line: int,
    source: str,
    lenient: bool = False,
) -> Block:
    """:func:`parse_split` in one process: ``tail()`` (which should spend its time
    without the GIL, as zlib does) runs in a thread while this thread parses
    ``head[offset:cut]``; then the tail is parsed. Same result as parsing the
    concatenation in one go."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["tail"] = tail()
        except BaseException as exc:  # re-raised in the calling thread
            box["error"] = exc

    worker = threading.Thread(target=run, name="swf-tail", daemon=True)
    worker.start()
    try:
        head_rows = _pieces_rows(head, offset, cut)
    finally:
        worker.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    segments: list[tuple[bytes, int]] = box["tail"]  # type: ignore[assignment]
    rows = _segments_rows(segments)
    if rows is not None and head_rows is not None:
        return _block_from_rows([*head_rows, *rows], first_line)
    first_block = (
        parse_block_slow(head[offset:cut], first_line, source, lenient)
        if head_rows is None
        else _block_from_rows(head_rows, first_line)
    )
    second_line = first_line + head.count(b"\n", offset, cut)
    second_block = (
        parse_block_slow(_segments_text(segments), second_line, source, lenient)
        if rows is None
        else _block_from_rows(rows, second_line)
    )
    return concatenate_blocks([first_block, second_block])


#: Bytes parsed per loadtxt call while a thread decompresses: loadtxt holds the
#: GIL throughout, and zlib needs it briefly each time its output buffer grows,
#: so the decompressing thread only progresses between two calls.
PIECE_BYTES = 2 << 20


def _pieces_rows(data: bytes, start: int, stop: int) -> list[np.ndarray] | None:
    """The rows of ``data[start:stop]`` (whole lines) parsed in pieces of about
    :data:`PIECE_BYTES`, or ``None`` if one of them needs the precise path."""
    out = []
    while start < stop:
        end = data.find(b"\n", min(start + PIECE_BYTES, stop - 1), stop) + 1
        end = stop if end <= 0 else end
        rows = _fast_rows(data, start, end)
        if rows is None:
            return None
        out.append(rows)
        start = end
    return out


def _segments_rows(segments: list[tuple[bytes, int]]) -> list[np.ndarray] | None:
    """The rows of each ``(data, start)`` segment, or ``None`` if one of them
    needs the precise path."""
    out = []
    for data, start in segments:
        rows = _fast_rows(data, start)
        if rows is None:
            return None
        out.append(rows)
    return out


def _segments_text(segments: list[tuple[bytes, int]]) -> bytes:
    return b"".join(data[start:] if start else data for data, start in segments)


def _fill_parts(target: np.ndarray, parts: list[np.ndarray]) -> None:
    """:func:`_fill` with consecutive row arrays."""
    start = 0
    for part in parts:
        _fill(target[:, start : start + part.shape[0]], part)
        start += part.shape[0]


#: Rows converted at a time by :func:`_fill`: the transposing copy and the NaN
#: mask then stay in the CPU cache (about twice as fast as one pass on RICC).
FILL_ROWS = 4096


def _fill(target: np.ndarray, rows: np.ndarray) -> None:
    """``target`` (18, n) = ``rows`` (n, 18) transposed, with NaN for -1."""
    for start in range(0, rows.shape[0], FILL_ROWS):
        part = target[:, start : start + FILL_ROWS]
        part[...] = rows[start : start + FILL_ROWS].T
        part[part == -1] = np.nan


def _block_from_values(values: np.ndarray, first_line: int) -> Block:
    n = values.shape[1]
    return Block(values, np.arange(first_line, first_line + n, dtype=np.int64))


def _block_from_rows(parts: list[np.ndarray], first_line: int) -> Block:
    """One block from consecutive ``(n, 18)`` row arrays (as loadtxt gives them),
    copied into new memory with -1 turned into NaN."""
    total = sum(p.shape[0] for p in parts)
    values = np.empty((NFIELDS, total), dtype=np.float64)
    _fill_parts(values, parts)
    return _block_from_values(values, first_line)


class _ForkedParse:
    """The fast parse of one block in a forked child, which writes its rows into
    a shared ``(18, n)`` float64 array (NaN for -1)
    and the row count (or -1) into a pipe."""

    def __init__(self, data: bytes, start: int, stop: int) -> None:
        # Room for every clean job line (at least 36 bytes each): not counting
        # the lines saves a pass over the text; untouched pages cost nothing.
        self.capacity = (stop - start) // (2 * NFIELDS) + 1
        self.shared = mmap.mmap(-1, self.capacity * NFIELDS * 8)
        # None once closed (a live view would keep the shared memory from closing)
        self.values: np.ndarray | None = np.frombuffer(self.shared, dtype=np.float64).reshape(
            NFIELDS, self.capacity
        )
        read_end, write_end = os.pipe()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads
            pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            os.close(read_end)
            status = -1
            try:
                rows = _fast_rows(data, start, stop)
                if rows is not None and rows.shape[0] <= self.capacity:
                    _fill(self.values[:, : rows.shape[0]], rows)
                    status = rows.shape[0]
            except BaseException:
                status = -1
            finally:
                with contextlib.suppress(BaseException):
                    os.write(write_end, struct.pack("q", status))
                os._exit(0)
        os.close(write_end)
        self.pid, self.read_end = pid, read_end

    def result(self) -> np.ndarray | None:
        """The ``(18, n)`` columns with NaN for -1 (a view of the shared memory),
        or ``None`` if the child failed."""
        payload = b""
        while len(payload) < 8:
            chunk = os.read(self.read_end, 8 - len(payload))
            if not chunk:
                break
            payload += chunk
        os.waitpid(self.pid, 0)
        self.pid = 0
        if len(payload) < 8:
            return None
        (n,) = struct.unpack("q", payload)
        if n < 0:
            return None
        assert self.values is not None, "result() after close()"
        return self.values[:, :n]

    def close(self) -> None:
        """Reap the child (stopped first if its result was not taken: the parent
        failed, e.g. on a corrupt or too large tail) and free the shared memory."""
        self.values = None
        if self.pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
            self.pid = 0
        with contextlib.suppress(OSError):
            os.close(self.read_end)
        with contextlib.suppress(BufferError):  # a view still alive: freed with it
            self.shared.close()


def concatenate_blocks(blocks: list[Block]) -> Block:
    """Join blocks in order, re-basing the per-row dictionaries."""
    blocks = [b for b in blocks if len(b) or b.comments or b.rejects or b.findings or b.unlisted]
    if not blocks:
        return Block.empty()
    if len(blocks) == 1:
        return blocks[0]
    out = Block(
        np.concatenate([b.values for b in blocks], axis=1),
        np.concatenate([b.lines for b in blocks]),
    )
    offset = 0
    for b in blocks:
        for row, extra in b.extra_columns.items():
            out.extra_columns[offset + row] = extra
        # Comments after a block's last row belong to the next block's first row,
        # which has the same index once re-based.
        for row, comments in b.comments.items():
            out.comments.setdefault(offset + row, []).extend(comments)
        out.rejects.extend(b.rejects)
        out.findings.extend(b.findings)
        for check, (count, first, last) in b.unlisted.items():
            _tally(out.unlisted, check, count, first, last)
        offset += len(b)
    # Each block is within its quota, not the joined one (a streaming read's
    # carry of comment lines would grow chunk after chunk).
    quota = Quota()
    quota.apply(out)
    out.unlisted = quota.unlisted
    return out
