"""Reading SWF 2.2 files into a :class:`~schedlab.model.Workload`.

``read_swf(source, lenient=False, summary_only=False, validate=True, stream=None,
workers=0)``:

* The header is always parsed when ``read_swf`` is called.
* Files whose text is at most :data:`STREAM_THRESHOLD` bytes (estimated as ten
  times the size of a compressed file) are parsed at once with the fast path of
  :mod:`.parse` (two processes for large inputs); bigger ones (or ``stream=True``)
  give a streaming workload that re-reads the file chunk by chunk each time it is
  iterated, so converting a huge file needs memory for one chunk only. The
  estimate is never trusted: a compressed file whose text turns out larger while
  it is decompressed (a bz2 or xz file compressing better than ten to one, a gzip
  file whose trailer's size wrapped around 4 GiB or that has several members) is
  handed over to the streaming read at the threshold (see :class:`_TooLarge`).
* Findings (line numbers included) are in ``workload.meta["findings"]``; for a
  streaming workload they are complete once it has been iterated to the end.
  Lenient mode skips bad lines: ``meta["skipped"]`` counts them and
  ``meta["rejects"]`` lists ``(line, text)``.
* Checkpoint/swap records (status 2, 3, 4) directly after their job's summary line
  (same job number) are grouped with it: kept in the job's
  ``extras["swf_parts"]`` (18 values each, ``None`` for -1) and written back after
  it. ``summary_only=True`` drops them (and partial records without a summary
  line), as the SWF definition recommends for workload studies.
"""

from __future__ import annotations

import io
import os
import re
import stat
import sys
import threading
import zlib
from collections.abc import Iterator
from typing import Any, BinaryIO

import numpy as np
from schedlab.errors import FormatError, UsageError
from schedlab.io import (
    BOM,
    compression_of,
    normalize_text,
    normalized,
    open_binary,
    source_name,
)
from schedlab.model import SWF_FIELDS, Header, JobColumns, Workload
from schedlab.validation import ColumnChecker, Finding

from . import parse
from .header import (
    LONG_HEADER,
    MAX_HEADER_BYTES,
    MAX_HEADER_LINES,
    header_line_numbers,
    header_problems,
    is_header_line,
    parse_header,
)
from .validate import (
    check_partial_records,
    check_references,
    check_spec_rules,
    declared_tables,
    header_enum_findings,
    spec_limits,
)

#: Estimated text size above which ``stream=None`` reads the file chunk by chunk.
STREAM_THRESHOLD = 256 << 20
#: Bytes of job lines per chunk when streaming.
CHUNK_BYTES = 16 << 20

_STATUS = SWF_FIELDS.index("status")
_PARTIAL_CODES = (2, 3, 4)


class SwfWorkload(Workload):
    """A :class:`Workload` read from an SWF file (the same API; the type only marks
    where it came from)."""

    __slots__ = ()


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


class _HeaderScan:
    """The header lines at the start of a file, fed one at a time (:meth:`feed`).

    A header keeps at most :data:`~.header.MAX_HEADER_LINES` lines and
    :data:`~.header.MAX_HEADER_BYTES` bytes (real ones have less than a hundred
    lines): a longer one is a :class:`FormatError` naming its first line past
    that; in lenient mode the lines past it are counted (``dropped``, from line
    ``first_dropped``) and not kept. Blank lines are header lines when a comment
    line follows them (they are held in ``pending`` until then), else body lines;
    a run of blank lines that no header could take (as many lines or bytes as a
    whole header) ends the header, so that ``pending`` stays bounded too."""

    def __init__(self, name: str, lenient: bool) -> None:
        self.name, self.lenient = name, lenient
        self.lines: list[str] = []
        self.size = 0
        self.count = 0  # header lines, kept or dropped
        self.dropped = 0
        self.first_dropped = 0
        self.pending: list[bytes] = []
        self.pending_size = 0

    def feed(self, raw: bytes) -> bool:
        """Take the next line (``raw``, with its newline if any): False when it
        is not a header line (it and ``pending`` start the body)."""
        if len(raw) > parse.MAX_LINE:
            return False  # too long for any line: the body's parse says so
        text = _decode(raw).rstrip("\r\n")
        if not is_header_line(text):
            return False
        if not text.strip():
            if (
                len(self.pending) >= MAX_HEADER_LINES
                or self.pending_size + len(raw) > MAX_HEADER_BYTES
            ):
                return False
            self.pending.append(raw)  # blank: header or body, decided by what follows
            self.pending_size += len(raw)
            return True
        for blank in self.pending:
            self._add(_decode(blank).rstrip("\r\n"), len(blank))
        self.pending, self.pending_size = [], 0
        self._add(text, len(raw))
        return True

    def _add(self, text: str, size: int) -> None:
        self.count += 1
        if (
            not self.dropped
            and len(self.lines) < MAX_HEADER_LINES
            and self.size + size <= MAX_HEADER_BYTES
        ):
            self.lines.append(text)
            self.size += size
            return
        if not self.lenient:
            raise FormatError(LONG_HEADER, source=self.name, line=self.count)
        if not self.dropped:
            self.first_dropped = self.count
        self.dropped += 1

    def findings(self) -> list[Finding]:
        """The lenient read's finding about the lines not kept, if any."""
        if not self.dropped:
            return []
        return [
            Finding(
                self.first_dropped,
                None,
                f"{LONG_HEADER}: its last {self.dropped:,} line(s), from here on, are not kept",
                "error",
                "header-size",
            )
        ]


def split_header(data: bytes, name: str = "", lenient: bool = False) -> tuple[_HeaderScan, int]:
    """The header lines at the start of ``data`` and the byte offset of the body."""
    scan = _HeaderScan(name, lenient)
    pos = end = 0
    size = len(data)
    while pos < size:
        stop = data.find(b"\n", pos) + 1 or size
        if not scan.feed(data[pos:stop]):
            break
        pos = stop
        if not scan.pending:
            end = stop
    # Blank lines between the header and the first job belong to the body, so a
    # whitespace-only file tail is reported (as blank lines) rather than kept.
    scan.pending, scan.pending_size = [], 0
    return scan, end


def _read_header_stream(fh: BinaryIO, name: str, lenient: bool) -> tuple[_HeaderScan, bytes]:
    """Read header lines from a stream: the header and the first body bytes read
    (blank lines after the header and the first other line: bounded)."""
    scan = _HeaderScan(name, lenient)
    while True:
        raw = fh.readline(parse.MAX_LINE + 1)
        if not raw:
            break
        if not scan.feed(raw):
            scan.pending.append(raw)
            break
    pending = b"".join(scan.pending)
    scan.pending, scan.pending_size = [], 0
    return scan, pending


# --------------------------------------------------------------------------- assembly


def _part_values(values: np.ndarray, row: int) -> list[Any]:
    out: list[Any] = []
    for v in values[:, row].tolist():
        if v != v:  # NaN: -1, unknown
            out.append(None)
        else:
            out.append(int(v) if float(v).is_integer() else v)
    return out


_FIELD = {name: i for i, name in enumerate(SWF_FIELDS)}


def _summarize_runs(
    values: np.ndarray, heads: np.ndarray, continuation: np.ndarray, seg_start: np.ndarray
) -> np.ndarray:
    """``values`` with the first record of each run of partial records without a
    summary line (``heads``; the run's other records are ``continuation`` rows
    whose run starts at ``seg_start``) replaced by the job's summary line, as the
    SWF definition describes it: the first record's fields, the run time the sum
    of the records' run times, the average CPU time their run-time-weighted mean
    and the used memory their largest (each unknown when a record's is), and the
    status 1 when the last record is 3 (completed), 0 when it is 4 (failed), else
    -1 (the log ends before the job does)."""
    rows = np.flatnonzero(heads)
    if not len(rows):
        return values
    out = values.copy()
    run_at, cpu_at, mem_at = _FIELD["run_time"], _FIELD["average_cpu_time"], _FIELD["used_memory"]
    members: dict[int, list[int]] = {int(r): [int(r)] for r in rows.tolist()}
    for i in np.flatnonzero(continuation).tolist():
        members[int(seg_start[i])].append(int(i))
    for head, run in members.items():
        run_times = values[run_at, run]
        total = float(run_times.sum())  # NaN when one is unknown
        out[run_at, head] = total
        cpu = values[cpu_at, run]
        if total > 0:
            out[cpu_at, head] = float((cpu * run_times).sum()) / total
        else:
            out[cpu_at, head] = cpu[0] if bool(np.all(cpu == cpu[0])) else np.nan
        memory = values[mem_at, run]
        out[mem_at, head] = float(memory.max()) if not np.isnan(memory).any() else np.nan
        last = values[_STATUS, run[-1]]
        out[_STATUS, head] = 1.0 if last == 3 else 0.0 if last == 4 else np.nan
    return out


def _move_part_extras(head: dict[str, Any], index: int, own: dict[str, Any]) -> None:
    """Move the extras of a grouped checkpoint/swap record (``own``: the comment
    lines before it, its columns beyond the 18th, and the comment lines after the
    last record) to its summary line's extras ``head``, whose ``swf_parts[index]``
    the record became: ``swf_part_extras[index]`` keeps the first two (written back
    before and on the part's line), ``swf_trailing_comments`` the last."""
    kept = {k: own.pop(k) for k in ("swf_comments", "swf_extra_columns") if k in own}
    if kept:
        slots = head.setdefault("swf_part_extras", [])
        slots.extend({} for _ in range(index + 1 - len(slots)))
        slots[index] = kept
    trailing = own.pop("swf_trailing_comments", None)
    if trailing:
        head.setdefault("swf_trailing_comments", []).extend(trailing)


class _Assembler:
    """Turns parsed blocks into job columns, grouping checkpoint records and running
    the checks; shared by the whole-file and the streaming paths."""

    def __init__(
        self, header: Header, header_lines: dict[str, int], source: str, options: dict
    ) -> None:
        self.source = source
        self.summary_only = options["summary_only"]
        self.validate = options["validate"]
        self.checker = ColumnChecker(header, header_lines=header_lines)
        self.tables = declared_tables(header)
        self.limits = spec_limits(header)
        self.findings: list[Finding] = []
        if self.validate:
            self.findings.extend(header_enum_findings(header, header_lines))
        self.quota = parse.Quota()
        self.rejects: list[tuple[int, str]] = []
        self.records = 0
        self.jobs = 0
        self.partial_records = 0
        self.dropped_partial = 0
        self.summarized_jobs = 0

    def columns(self, block: parse.Block) -> JobColumns:
        self.quota.apply(block)
        values, lines = block.values, block.lines
        n = values.shape[1]
        self.records += n
        self.findings.extend(block.findings)
        self.rejects.extend(block.rejects)
        if self.validate:  # every record, before grouping or summary_only
            self.findings.extend(check_spec_rules(values, lines, self.limits))
        extras: list[dict[str, Any]] | None = None

        def extra(i: int) -> dict[str, Any]:
            nonlocal extras
            if extras is None:
                extras = [{} for _ in range(n)]
            return extras[i]

        for row, cols in block.extra_columns.items():
            extra(row)["swf_extra_columns"] = cols
        for row, comments in block.comments.items():
            if row < n:
                extra(row)["swf_comments"] = list(comments)
            elif n:
                extra(n - 1)["swf_trailing_comments"] = list(comments)
            else:
                self.findings.append(
                    Finding(
                        None,
                        None,
                        f"{len(comments)} comment line(s) with no job line "
                        "after the header could not be kept",
                        "warning",
                        "late-comment",
                    )
                )
        keep = np.ones(n, dtype=bool)
        continuation = np.zeros(n, dtype=bool)
        status = values[_STATUS]
        partial = np.isin(status, _PARTIAL_CODES)
        if partial.any():
            self.partial_records += int(partial.sum())
            job = values[0]
            same_prev = np.r_[False, job[1:] == job[:-1]]
            breaks = ~partial | ~same_prev
            seg_start = np.maximum.accumulate(np.where(breaks, np.arange(n), 0))
            grouped = partial & ~breaks & ~partial[seg_start]
            continuation = partial & ~breaks & partial[seg_start]
            heads = partial & breaks
            if self.validate:
                self.findings.extend(
                    check_partial_records(
                        values, lines, grouped, heads, summarized=self.summary_only
                    )
                )
            if not self.summary_only:
                for i in np.flatnonzero(grouped).tolist():
                    head = extra(int(seg_start[i]))
                    parts = head.setdefault("swf_parts", [])
                    parts.append(_part_values(values, i))
                    own = extras[i] if extras is not None else None
                    if own:
                        _move_part_extras(head, len(parts) - 1, own)
            keep &= ~grouped
            if self.summary_only:
                # A job without a summary line (a Preemption: Yes log) becomes one
                # summary row built from its records, as the definition describes
                # the summary line; its records are dropped like the grouped ones.
                keep &= ~continuation
                values = _summarize_runs(values, heads, continuation, seg_start)
                self.dropped_partial += int(partial.sum())
                self.summarized_jobs += int(heads.sum())
                continuation = np.zeros(n, dtype=bool)
            self.jobs += int(breaks.sum())
        else:
            self.jobs += n
        if not keep.all():
            if extras is not None:
                self._relocate_comments(extras, keep)
            values, lines = values[:, keep], lines[keep]
            continuation = continuation[keep]
            if extras is not None:
                extras = [e for e, k in zip(extras, keep.tolist(), strict=True) if k]
        data = {name: values[i] for i, name in enumerate(SWF_FIELDS)}
        columns = JobColumns(data, extras)
        if self.validate:
            check_cols = columns
            if continuation.any():
                job = values[0].copy()
                job[continuation] = np.nan  # partial records share their job number
                check_cols = JobColumns({**data, "job_number": job})
            self.findings.extend(self.checker.feed(check_cols, lines))
            self.findings.extend(check_references(data, lines, self.tables))
        return columns

    def _relocate_comments(self, extras: list[dict[str, Any]], keep: np.ndarray) -> None:
        """Move the comment lines of rows not kept (``summary_only``) to a kept row
        of the block: after the previous one (its trailing comments), else before
        the next one; a block keeping no row reports them in a ``late-comment``
        warning."""
        kept = np.flatnonzero(keep)
        for i in np.flatnonzero(~keep).tolist():
            own = extras[i]
            comments = list(own.pop("swf_comments", ())) + list(
                own.pop("swf_trailing_comments", ())
            )
            if not comments:
                continue
            at = int(np.searchsorted(kept, i))
            if at > 0:
                extras[int(kept[at - 1])].setdefault("swf_trailing_comments", []).extend(comments)
            elif at < len(kept):
                target = extras[int(kept[at])]
                target["swf_comments"] = comments + list(target.get("swf_comments", ()))
            else:
                self.findings.append(
                    Finding(
                        None,
                        None,
                        f"{len(comments)} comment line(s) among checkpoint/swap records "
                        "dropped by summary_only could not be kept (no job line near them)",
                        "warning",
                        "late-comment",
                    )
                )

    def absorb(self, block: parse.Block) -> None:
        """The findings and rejects of a block without rows."""
        self.quota.apply(block)
        self.findings.extend(block.findings)
        self.rejects.extend(block.rejects)

    def finish(self, meta: dict[str, Any]) -> None:
        self.findings.extend(_unlisted_findings(self.quota.unlisted))
        if self.validate:
            # Rejected lines are records (and jobs) of the file too, for MaxJobs/MaxRecords.
            skipped = len(self.rejects)
            self.findings.extend(
                self.checker.finish(records=self.records + skipped, jobs=self.jobs + skipped)
            )
        meta["findings"] = sorted(self.findings, key=lambda f: -1 if f.line is None else f.line)
        meta["checked"] = self.validate
        meta["records"] = self.records
        meta["skipped"] = len(self.rejects)
        meta["rejects"] = list(self.rejects)
        meta["partial_records"] = self.partial_records
        if self.summary_only:
            meta["dropped_partial_records"] = self.dropped_partial
            meta["summarized_partial_jobs"] = self.summarized_jobs


def _unlisted_findings(unlisted: dict[str, list[int]]) -> list[Finding]:
    """One finding for each kind of line counted but not listed (:class:`.parse.Quota`)."""
    out = []
    for check, (count, first, last) in unlisted.items():
        line = first if first > 0 else None
        if check == "blank-line":
            what, severity = f"{count:,} more blank line(s) ignored", "info"
        elif check == "late-comment":
            what, severity = f"{count:,} more comment line(s) after the first job line", "warning"
        else:
            out.append(
                Finding(
                    line,
                    None,
                    f"{count:,} comment line(s) after the first job line not kept, the "
                    f"first at or before this line (at most {parse.MAX_KEPT_COMMENTS:,} "
                    f"lines and {parse.MAX_KEPT_COMMENT_BYTES >> 20} MiB are kept)",
                    "warning",
                    "late-comment",
                )
            )
            continue
        out.append(
            Finding(
                line,
                None,
                f"{what}, from here to line {last} (only the first "
                f"{parse.MAX_LISTED:,} are listed)",
                severity,
                check,
            )
        )
    return out


# --------------------------------------------------------------------------- reading


def _estimated_text_size(path: str) -> int:
    """The file's size, or for a compressed one ten times it; for gzip at least
    the size its trailer records (``ISIZE``, the last member's size modulo 2**32):
    a file that compresses far better than ten to one (a decompression bomb, say)
    is then streamed, in bounded memory, instead of decompressed whole. Only a
    guess (bz2 and xz record no size, ``ISIZE`` wraps around and names the last
    member only): the whole-file read stops at :data:`STREAM_THRESHOLD` bytes of
    text anyway (:class:`_TooLarge`)."""
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        head = fh.read(6)
        kind = compression_of(head)
        if kind == "gzip" and size >= 18:
            fh.seek(size - 4)
            recorded = int.from_bytes(fh.read(4), "little")
            # deflate expands at most about 1,032 times: a larger "size" is no
            # trailer (a truncated file ends in compressed data)
            if recorded <= size * 1032:
                return max(size * 10, recorded)
    return size * 10 if kind else size


class _TooLarge(Exception):
    """The text of a file read whole passed ``limit`` bytes while it was being
    decompressed: read it as a stream instead. ``resume`` is ``(pieces, rest)``,
    the text decompressed so far and the decompressing file that continues it,
    for the streaming read to go on from there (bz2, xz); ``None`` to start over
    (gzip, whose pipelined read keeps no file to continue: only a trailer whose
    size wrapped around 4 GiB, or a file of several members, gets there)."""

    def __init__(self, resume: tuple[list[bytes], BinaryIO] | None = None) -> None:
        super().__init__("text larger than the whole-file limit")
        self.resume = resume


class _Resumed(io.RawIOBase):
    """The raw text of a file from its start: the ``pieces`` already decompressed
    (released as they are read), then what the file ``rest`` gives."""

    def __init__(self, pieces: list[bytes], rest: BinaryIO) -> None:
        super().__init__()
        pieces.reverse()  # taken from the end; the caller's list empties with it
        self._pieces, self._offset, self._rest = pieces, 0, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if not self._pieces:
            return self._rest.readinto(view)  # type: ignore[attr-defined,no-any-return]
        piece, start = self._pieces[-1], self._offset
        n = min(len(view), len(piece) - start)
        view[:n] = memoryview(piece)[start : start + n]
        self._offset += n
        if self._offset == len(piece):
            self._pieces.pop()
            self._offset = 0
        return n

    def close(self) -> None:
        if not self.closed:
            self._pieces.clear()
            try:
                self._rest.close()
            finally:
                super().close()


#: Bytes decompressed at a time by a whole-file read of a bz2 or xz file.
PIECE_BYTES = 4 << 20


def _read_closing(fh: BinaryIO, limit: int | None) -> bytes:
    """:func:`_read_text` of ``fh``, which it closes, except when the read hands
    over (:class:`_TooLarge`: the streaming read goes on with ``fh``)."""
    try:
        text = _read_text(fh, limit)
    except _TooLarge:
        raise
    except BaseException:
        fh.close()
        raise
    fh.close()
    return text


def _read_text(fh: BinaryIO, limit: int | None) -> bytes:
    """All of ``fh``, or :class:`_TooLarge` (which then owns ``fh``) once that is
    more than ``limit`` bytes (``None``: no limit)."""
    if limit is None:
        return fh.read()
    pieces: list[bytes] = []
    size = 0
    while True:
        piece = fh.read(min(PIECE_BYTES, limit + 1 - size))
        if not piece:
            return pieces[0] if len(pieces) == 1 else b"".join(pieces)
        pieces.append(piece)
        size += len(piece)
        if size > limit:
            raise _TooLarge((pieces, fh))


def _read_and_parse(
    source: str | os.PathLike[str] | BinaryIO,
    name: str,
    lenient: bool,
    workers: int,
    limit: int | None = None,
) -> tuple[_HeaderScan, parse.Block]:
    """The header and the parsed job lines of a whole file. A compressed file
    (or one that is not a regular file: a pipe, a device) whose text is more than
    ``limit`` bytes raises :class:`_TooLarge` as soon as that much is read
    (``None``: no limit)."""
    if isinstance(source, (str, os.PathLike)) and not _is_regular(source):
        # Its size says nothing (0 for a pipe): read as a decompressing stream,
        # once (a pipe cannot be read again), up to the limit.
        fh = open_binary(source, name=name)
        text = _read_closing(fh, limit)
        data = normalize_text(text)
        del text
    elif isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as fh:
            raw = fh.read()
        if compression_of(raw[:6]) == "gzip":
            done = _gunzip_and_parse(raw, os.fspath(source), name, lenient, workers, limit)
            if done is not None:
                return done
        data = normalize_text(_decompress(raw, os.fspath(source), limit))
        del raw
    else:
        data = normalize_text(open_binary(source, name=name).read())
    scan, offset = split_header(data, name, lenient)
    block = parse.parse_body(data, scan.count + 1, name, lenient, workers, offset)
    return scan, block


def _is_regular(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a regular file (whose size means something); a path
    that does not exist counts as one (opening it says so)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


_NON_BLANK = re.compile(rb"\S")
#: Share of a gzip file decompressed before the forked child starts parsing it:
#: the parent decompresses the rest while the child works, so it parses less.
PIPELINE_SHARE = 0.57
#: The same in one process: a thread decompresses the rest (zlib releases the
#: GIL) while the first part is parsed, which should take about as long.
THREAD_SHARE = 0.4


def _gunzip_and_parse(
    raw: bytes, path: str, name: str, lenient: bool, workers: int, limit: int | None = None
) -> tuple[_HeaderScan, parse.Block] | None:
    """Decompression pipelined with parsing: the first :data:`PIPELINE_SHARE` of
    the gzip stream is decompressed, its whole job lines go to a forked child
    (:func:`.parse.parse_split`) while this process decompresses the rest and
    parses it. With ``workers=1`` (or where forking is impossible) a thread
    decompresses the rest instead while the first :data:`THREAD_SHARE` is parsed
    (:func:`.parse.parse_split_threaded`). ``None`` (nothing done) when the file
    does not suit: small, several gzip members within the first part, a header
    reaching past it, or a corrupt start (the plain path then reports it).
    :class:`_TooLarge` once more than ``limit`` bytes are decompressed."""
    fork = workers != 1 and parse._can_fork()
    share = PIPELINE_SHARE if fork else THREAD_SHARE
    inflater = zlib.decompressobj(wbits=31)
    split = int(len(raw) * share)
    view = memoryview(raw)
    try:
        head = inflater.decompress(view[:split], _room(limit, 0))
    except zlib.error:
        return None
    if limit is not None and len(head) > limit:
        raise _TooLarge
    if inflater.eof or head.startswith(BOM) or b"\r" in head:
        return None  # (the plain path normalizes BOM and line ends)
    scan, offset = split_header(head, name, lenient)
    cut = head.rfind(b"\n") + 1
    # The header ends where it does in the whole file only if a job (non-blank)
    # line follows it within the complete lines of ``head``.
    if cut <= offset or _NON_BLANK.search(head, offset, cut) is None:
        return None
    if workers != 2 and (cut - offset) / share < parse.PARALLEL_THRESHOLD:
        return None

    def tail() -> list[tuple[bytes, int]]:
        try:
            rest = inflater.decompress(view[split:], _room(limit, len(head)))
            if limit is not None and len(head) + len(rest) > limit:
                raise _TooLarge
            if not inflater.eof:
                raise EOFError("compressed file ended before the end-of-stream marker")
            more = inflater.unused_data.lstrip(b"\x00")
            if more:
                rest += _gunzip(more, None if limit is None else limit - len(head) - len(rest))
        except (OSError, EOFError, zlib.error) as exc:
            raise FormatError(f"not a valid gzip file: {exc}", source=path) from None
        # CR line ends past the part looked at (which had none): LF, as everywhere.
        rest = normalize_text(rest, strip_bom=False)
        # The line cut by the split, then the rest read in place (no big copy).
        end = rest.find(b"\n") + 1
        if end <= 0:
            return [(head[cut:] + rest, 0)]
        return [(head[cut:] + rest[:end], 0), (rest, end)]

    if not fork:
        block = parse.parse_split_threaded(head, offset, cut, tail, scan.count + 1, name, lenient)
        return scan, block
    block = parse.parse_split(head, offset, cut, tail, scan.count + 1, name, lenient)
    return scan, block


def _decompress(raw: bytes, path: str, limit: int | None = None) -> bytes:
    """The decompressed content of a file's bytes; :class:`_TooLarge` once that
    is more than ``limit`` bytes (``None``: no limit)."""
    kind = compression_of(raw[:6])
    if kind == "gzip":
        try:
            return _gunzip(raw, limit)
        except (OSError, EOFError, zlib.error) as exc:
            raise FormatError(f"not a valid gzip file: {exc}", source=path) from None
    if kind is None:
        return raw
    return _read_closing(open_binary(io.BytesIO(raw), name=path), limit)


def _room(limit: int | None, used: int) -> int:
    """``max_length`` for zlib with ``used`` bytes of ``limit`` taken: one byte
    more than what is left, so that output of that length means too much."""
    return 0 if limit is None else max(limit - used, 0) + 1


#: Compressed bytes given at first to the inflater of a gzip member after the
#: first (doubled, up to :data:`GZIP_PIECE_MAX`, while the member goes on): what
#: it copies of the input past the member's end (``unused_data``) then stays
#: about as small as the member, so a file of many members takes linear time.
GZIP_PIECE = 1 << 10
GZIP_PIECE_MAX = 1 << 20
_NON_ZERO = re.compile(rb"[^\x00]")


def _gunzip(raw: bytes, limit: int | None = None) -> bytes:
    """Every gzip member of ``raw``, decompressed (zlib checks the CRC as it goes);
    :class:`_TooLarge` once that is more than ``limit`` bytes (``None``: no limit).
    The first member is given the whole input at once (one call for the usual
    file of one member), the next ones growing pieces (:data:`GZIP_PIECE`)."""
    parts = []
    size = 0
    view = memoryview(raw)
    pos, end = 0, len(raw)
    first = True
    while pos < end:
        inflater = zlib.decompressobj(wbits=31)
        piece = end if first else GZIP_PIECE
        while True:
            chunk = view[pos : pos + piece]
            pos += len(chunk)
            parts.append(inflater.decompress(chunk, _room(limit, size)))
            size += len(parts[-1])
            if limit is not None and size > limit:
                raise _TooLarge
            if inflater.eof:
                pos -= len(inflater.unused_data)
                break
            if pos >= end:
                raise EOFError("compressed file ended before the end-of-stream marker")
            piece = min(piece * 2, GZIP_PIECE_MAX)
        first = False
        more = _NON_ZERO.search(raw, pos)  # gzip allows zero padding
        pos = end if more is None else more.start()
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _workers(requested: int) -> int:
    """``workers`` for the parser: an explicit request wins; else one process when
    other threads run (a fork would copy their locks) or no core is idle (the
    one-minute load average leaves less than one CPU free), else automatic."""
    if requested:
        return requested
    if threading.active_count() > 1:
        return 1
    try:
        busy = os.getloadavg()[0] + 1 > (os.cpu_count() or 1)
    except OSError:
        busy = False
    return 1 if busy else 0


def read_swf(
    source: str | os.PathLike[str] | BinaryIO,
    *,
    lenient: bool = False,
    summary_only: bool = False,
    validate: bool = True,
    stream: bool | None = None,
    workers: int = 0,
    chunk_bytes: int = CHUNK_BYTES,
) -> Workload:
    """Read an SWF file (plain, .gz, .bz2 or .xz) into a workload.

    ``lenient``: skip lines that are not 18 numbers (counted, listed, reported)
    and keep columns beyond the 18th in ``extras["swf_extra_columns"]`` instead of
    failing with a :class:`~schedlab.errors.FormatError` naming file, line and field.
    ``summary_only``: drop checkpoint/swap records. ``validate``: run the
    consistency checks (findings in ``meta["findings"]``). ``stream``: force (True)
    or prevent (False) chunked reading. ``workers``: processes for the fast path
    (0 = automatic).

    >>> w = read_swf("KTH-SP2-1996-2.1-cln.swf.gz")            # doctest: +SKIP
    >>> w.header.max_procs, len(w)                              # doctest: +SKIP
    (100, 28476)
    """
    name = source_name(source)
    if isinstance(chunk_bytes, bool) or not isinstance(chunk_bytes, int) or chunk_bytes < 1:
        raise UsageError(f"reader swf: option chunk_bytes={chunk_bytes!r}: expected a positive int")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise UsageError(f"reader swf: option workers={workers!r}: expected 0 (automatic) or more")
    options = {"summary_only": summary_only, "validate": validate}
    is_path = isinstance(source, (str, os.PathLike))
    # The whole-file read of an automatic choice hands over to the streaming read
    # when the text proves larger than the estimate said.
    limit = STREAM_THRESHOLD if stream is None and is_path else None
    # A pipe or a device has no size to go by (and may be read only once): it is
    # read whole up to the limit, as a compressed file is.
    path = os.fspath(source) if isinstance(source, (str, os.PathLike)) else None
    regular = path is not None and _is_regular(path)
    if stream is None:
        stream = path is not None and regular and _estimated_text_size(path) > STREAM_THRESHOLD
    if stream and path is None:
        raise FormatError("streaming needs a file path, not an open file", source=name)
    if stream and path is not None:
        # Not a regular file: the first pass goes on from the header's read.
        resume: tuple[list[bytes], BinaryIO] | None = None
        if not regular:
            resume = ([], open_binary(path, name=name))
        return _read_streaming(path, name, lenient, options, chunk_bytes, workers, resume)
    if path is not None and regular and _estimated_text_size(path) >= LARGE_TEXT:
        _keep_large_blocks_returnable()
    try:
        scan, block = _read_and_parse(source, name, lenient, _workers(workers), limit)
    except _TooLarge as too_large:
        resume, too_large.resume = too_large.resume, None
        assert path is not None  # only a path's read hands over
        return _read_streaming(path, name, lenient, options, chunk_bytes, workers, resume)
    header, starts = parse_header(scan.lines)
    assembler = _Assembler(header, header_line_numbers(header, starts), name, options)
    assembler.findings.extend(_header_findings(header, starts, name, lenient))
    assembler.findings.extend(scan.findings())
    columns = assembler.columns(block)
    del block
    meta: dict[str, Any] = {"reader": "swf", "source": name}
    assembler.finish(meta)
    if len(columns) >= TRIM_JOBS:
        _give_back_freed_memory()
    return SwfWorkload(header, columns=columns, meta=meta)


def _header_findings(header: Any, starts: list[int], name: str, lenient: bool) -> list[Finding]:
    """The header's numeric entries that are not one integer in range
    (:func:`~.header.header_problems`): a :class:`FormatError` naming line and label,
    or in lenient mode findings (``header-value``; the typed header properties then
    give ``None`` for such a value, as for a missing one)."""
    problems = header_problems(header, starts)
    if problems and not lenient:
        line, _, message = problems[0]
        raise FormatError(message, source=name, line=line)
    return [Finding(line, None, message, "error", "header-value") for line, _, message in problems]


#: Jobs from which a whole-file read hands the memory it freed back to the system.
TRIM_JOBS = 100_000
#: Estimated text size from which a whole-file read keeps glibc's mmap threshold.
LARGE_TEXT = 8 << 20
#: glibc's ``mallopt`` parameter ``M_MMAP_THRESHOLD`` and the value kept.
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 1 << 20
_threshold_fixed = False


def _keep_large_blocks_returnable() -> None:
    """Fix glibc's mmap threshold at 1 MiB for the rest of the process (a no-op
    elsewhere, and after the first call).

    glibc raises the threshold to the size of the largest mapped block freed (up
    to 32 MiB), here the decompressed text of the file: every numpy array below it
    then comes from the heap, whose freed parts stay mapped. On RICC-2010 (447,794
    jobs) that was about 35 MB of a simulation's peak, made of the per-job
    temporaries of the read, of the simulator's preparation and of its output.
    Fixed, a block of 1 MiB or more (a per-job array of 131,072 jobs or more) is
    mapped on its own and returned when freed; smaller ones (a scheduling pass's
    temporaries) still reuse the heap."""
    global _threshold_fixed
    if _threshold_fixed or not sys.platform.startswith("linux"):
        return
    _threshold_fixed = True
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl ...)
        return
    mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)


def _give_back_freed_memory() -> None:
    """Return the heap's free memory to the system (glibc's ``malloc_trim``; a no-op
    elsewhere). The text of a large file, decompressed by a helper thread, is freed
    once parsed, but glibc keeps the pages of that thread's arena mapped: about
    30 MB that would otherwise stay in the process (its peak memory) for good."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl ...)
        return
    trim(0)


def _read_streaming(
    path: str,
    name: str,
    lenient: bool,
    options: dict,
    chunk_bytes: int,
    workers: int,
    resume: tuple[list[bytes], BinaryIO] | None = None,
) -> Workload:
    """A streaming workload re-reading ``path`` each time it is iterated. With
    ``resume`` (from :class:`_TooLarge`: the text a whole-file read decompressed
    and the file that continues it), the header is read from there and the first
    iteration goes on from there, without decompressing that text again."""
    handed: list[tuple[BinaryIO, bytes]] = []
    if resume is None:
        with open_binary(path, normalize=True) as fh:
            scan, _ = _read_header_stream(fh, name, lenient)
    else:
        fh = normalized(_Resumed(*resume), name=name)
        try:
            scan, pending = _read_header_stream(fh, name, lenient)
        except BaseException:
            fh.close()
            raise
        handed.append((fh, pending))
    count = scan.count
    try:
        header, starts = parse_header(scan.lines)
        header_lines_at = header_line_numbers(header, starts)
        bad_header = _header_findings(header, starts, name, lenient) + scan.findings()
    except BaseException:
        for fh, _ in handed:
            fh.close()
        raise
    meta: dict[str, Any] = {"reader": "swf", "source": name, "streaming": True}

    def chunks() -> Iterator[JobColumns]:
        assembler = _Assembler(header, header_lines_at, name, options)
        assembler.findings.extend(bad_header)
        meta["findings"] = assembler.findings  # filled while iterating
        if handed:  # the first pass goes on where the whole-file read stopped
            fh, pending = handed.pop()
        else:
            fh, pending = open_binary(path, normalize=True), b""
            try:
                for _ in range(count):
                    fh.readline()
            except BaseException:
                fh.close()
                raise
        with fh:
            line = count + 1
            carry = parse.Block.empty()
            while True:
                if pending:  # the lines read past the header (resumed read)
                    data, pending = pending, b""
                else:
                    data = fh.read(chunk_bytes)
                if not data:
                    break
                if not data.endswith(b"\n"):
                    data += _rest_of_line(fh, data, line, name, lenient)
                block = parse.parse_body(data, line, name, lenient, _workers(workers))
                line += data.count(b"\n")
                block = parse.concatenate_blocks([carry, block])
                cut = _last_job_start(block)
                head, carry = _split_block(block, cut)
                if len(head):
                    yield assembler.columns(head)
                elif head.findings or head.rejects or head.unlisted:
                    assembler.absorb(head)
            if len(carry) or carry.comments or carry.findings or carry.rejects or carry.unlisted:
                yield assembler.columns(carry)
        assembler.finish(meta)

    return SwfWorkload.streaming(header, chunks, meta=meta)


def _rest_of_line(fh: BinaryIO, data: bytes, line: int, name: str, lenient: bool) -> bytes:
    """The rest of the line that the chunk ``data`` (starting at line ``line``)
    cuts. A line longer than :data:`.parse.MAX_LINE` is never read whole: strict,
    a :class:`FormatError` naming it; lenient, its first bytes (enough for the
    parse to reject it as too long) and the rest of it skipped."""
    rest = fh.readline(parse.MAX_LINE + 1)
    start = data.rfind(b"\n") + 1
    if rest.endswith(b"\n") or len(data) - start + len(rest) <= parse.MAX_LINE:
        return rest
    if not lenient:
        raise FormatError(parse.LONG_LINE, source=name, line=line + data.count(b"\n"))
    while rest and not rest.endswith(b"\n"):
        rest = fh.readline(parse.MAX_LINE)
    # the parse sees a line longer than MAX_LINE and skips it
    return b"\0" * (parse.MAX_LINE + 1 - (len(data) - start)) + b"\n"


def _last_job_start(block: parse.Block) -> int:
    """Index of the first row of the last job (its summary line and the checkpoint
    records after it), which the next chunk might continue."""
    n = len(block)
    if n == 0:
        return 0
    status, job = block.values[_STATUS], block.values[0]
    i = n - 1
    while i > 0 and status[i] in _PARTIAL_CODES and job[i] == job[i - 1]:
        i -= 1
    return i


def _split_block(block: parse.Block, cut: int) -> tuple[parse.Block, parse.Block]:
    """Rows ``[0, cut)`` and ``[cut, n)``; findings and rejects go with the head,
    comments with the row they precede."""
    head = parse.Block(block.values[:, :cut], block.lines[:cut])
    tail = parse.Block(block.values[:, cut:], block.lines[cut:])
    for row, cols in block.extra_columns.items():
        (head.extra_columns if row < cut else tail.extra_columns)[
            row if row < cut else row - cut
        ] = cols
    for row, comments in block.comments.items():
        (head.comments if row < cut else tail.comments)[row if row < cut else row - cut] = comments
    head.findings, head.rejects = block.findings, block.rejects
    head.unlisted = block.unlisted
    return head, tail


def sniff_swf(head: bytes, name: str = "") -> bool:
    """True if ``head`` looks like SWF: ``;`` header lines with SWF labels, or a
    first job line of at least 18 numbers."""
    text = head.decode("latin-1")
    lines = text.split("\n")
    if len(head) >= 65536 and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut
    saw_label = False
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line.startswith(";"):
            body = line[1:].lstrip()
            label = body.split(":", 1)[0]
            if ":" in body and label in _SNIFF_LABELS:
                saw_label = True
            continue
        tokens = line.split()
        numeric = len(tokens) >= len(SWF_FIELDS) and all(
            parse.NUMBER_RE.match(t.encode()) for t in tokens[: len(SWF_FIELDS)]
        )
        return numeric
    return saw_label


_SNIFF_LABELS = frozenset(
    {
        "Version",
        "Computer",
        "Installation",
        "Acknowledge",
        "Conversion",
        "MaxJobs",
        "MaxRecords",
        "MaxNodes",
        "MaxProcs",
        "UnixStartTime",
        "Preemption",
    }
)
