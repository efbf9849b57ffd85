"""Writing any :class:`~schedlab.model.Workload` as SWF 2.2.

* The header is the workload's :class:`~schedlab.model.Header`: entries read from a
  file and unchanged are written back byte for byte, others canonically
  (``; Label: value``). Name tables of other formats (``User:``, ``Group:`` ...)
  are schedlab extensions written like ``Queue:`` lines. The writer never adds or
  rewrites entries (no ``Version:`` is invented, ``MaxJobs`` is not recounted):
  what the header says is the converter's decision.
* Job lines have the 18 fields right-aligned in the archive's column widths
  (wider values just widen their column), one blank between fields; unknown is
  ``-1``; integral values are written as integers, others in the shortest form
  that reads back to the same float (``repr``). The output is a function of the
  values only, so it round-trips byte for byte.
* Per-job extras written back: ``swf_comments`` (comment lines before the job),
  ``swf_parts`` (checkpoint/swap records after it; ``swf_part_extras``, parallel
  to them, holds each record's comment lines and extra columns),
  ``swf_trailing_comments``, and,
  only with ``extra_columns=True``, ``swf_extra_columns`` (columns beyond the 18th,
  e.g. Alea's extended format).
* Compression follows the suffix (.gz, .bz2, .xz; gzip without a time stamp, so
  equal input gives equal bytes). Jobs are written chunk by chunk: a streaming
  workload is converted in constant memory.
* ``integer_times=True`` writes every time field as whole seconds, for tools that
  drop records with fractional times (AccaSim does, silently): submit time rounded
  down, wait, run, average CPU and think times rounded to the nearest second
  (halves up), requested time rounded up (a limit never shrinks below the run time
  it bounded). ``integer_memory=True`` rounds the memory fields to the nearest KB.
  With both, every field is an integer. Each rounded field is reported as a loss.
* A value schedlab's SWF reader would refuse is refused, not written: a field that
  is not a finite number (infinity), beyond :data:`~schedlab.validation.MAX_MAGNITUDE`
  (2**53 - 1) or, for the six time fields, beyond
  :data:`~schedlab.validation.MAX_SECONDS` (10**12 s) is a one-line
  :class:`~schedlab.errors.FormatError` naming the job and the field (through
  :func:`schedlab.write`, nothing is left at the target). NaN is unknown, ``-1``.
* What SWF cannot hold is reported through :mod:`schedlab.losses`: the rich fields
  of :class:`~schedlab.model.Job` (name, account, nodes, hosts, exit code, priority,
  tasks), dependencies beyond the one preceding job and think time, per-job extras
  of other formats, ``swf_extra_columns`` without ``extra_columns=True``, and a
  job with a partial status right after a job of the same number (a reader takes
  it for a part of that job).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

import numpy as np
from schedlab.errors import FormatError
from schedlab.io import open_output
from schedlab.losses import Losses, note_extras, note_fields, writer_losses
from schedlab.model import SWF_FIELDS, Job, JobColumns, Workload
from schedlab.validation import MAX_MAGNITUDE, MAX_SECONDS, out_of_range

from .header import format_header
from .parse import TIME_FIELDS

#: Minimum width of each field, as in the Parallel Workloads Archive's files.
FIELD_WIDTHS: tuple[int, ...] = (5, 8, 6, 6, 4, 6, 5, 4, 6, 5, 2, 3, 3, 3, 2, 2, 2, 2)
#: Rows formatted per batch (bounds the memory of one batch of text).
BATCH_ROWS = 65536
_EXACT = 2.0**53
#: Largest magnitude of each field that the SWF reader accepts (see
#: :func:`schedlab.validation.out_of_range`), as an ``(18, 1)`` column.
_LIMITS = np.full((len(SWF_FIELDS), 1), MAX_MAGNITUDE)
_LIMITS[list(TIME_FIELDS)] = MAX_SECONDS


def _constant(text: str) -> Callable[[int], str]:
    """A job namer giving ``text`` for every column."""
    return lambda _: text


def _check_writable(values: np.ndarray, path: str, job: Callable[[int], str]) -> None:
    """Refuse an ``(18, n)`` block holding a value the SWF reader would refuse (not
    finite, or beyond the bounds of :func:`schedlab.validation.out_of_range`): a
    :class:`~schedlab.errors.FormatError` naming ``path``, the job (``job(i)`` for
    the block's column ``i``) and the field of the first one. NaN (unknown) is fine."""
    if values.ndim != 2 or values.shape[1] == 0:
        return
    with np.errstate(invalid="ignore"):
        bad = np.abs(values) > _LIMITS  # NaN compares False; infinity is beyond
    if not bad.any():
        return
    row, field = (int(k) for k in np.argwhere(bad.T)[0])  # the first in file order
    value = float(values[field, row])
    why = out_of_range(value, field in TIME_FIELDS) or "out of range"
    text = str(int(value)) if value.is_integer() else repr(value)
    raise FormatError(
        f"{why}, got {text} (not written: the SWF reader would refuse it)",
        source=path,
        path=job(row),
        field=f"{field + 1} ({SWF_FIELDS[field]})",
    )


def _job_namer(values: np.ndarray, done: int) -> Callable[[int], str]:
    """How :func:`_check_writable` names the job of column ``i`` of a block whose first
    job is the workload's ``done + 1``-th: by its number when that is writable."""

    def name(i: int) -> str:
        number = float(values[_JOB, i])
        if number == number and abs(number) <= MAX_MAGNITUDE:
            return f"job {int(number) if number.is_integer() else number!r}"
        return f"job at position {done + i + 1}"

    return name


def format_value(value: float) -> str:
    """One field: ``-1`` for NaN, an integer when integral, else ``repr``."""
    if value != value:
        return "-1"
    if value.is_integer() and abs(value) < _EXACT:
        return str(int(value))
    return repr(float(value))


def format_rows(values: np.ndarray) -> list[str]:
    """Job lines (without newline) for an ``(18, n)`` array in SWF order (NaN = -1)."""
    n = values.shape[1] if values.ndim == 2 else 0
    if n == 0:
        return []
    fields = _fields(values)
    if all(isinstance(f, str) for f in fields):
        return [" ".join(fields)] * n  # type: ignore[arg-type]
    if all(isinstance(f, (str, np.ndarray)) for f in fields):
        return _integer_lines(fields, n)[:-1].split("\n")
    columns: list[list[Any]] = []
    parts: list[str] = []
    for j, field in enumerate(fields):
        if isinstance(field, str):
            parts.append(field)
        elif isinstance(field, np.ndarray):
            columns.append(field.tolist())
            parts.append(f"%{FIELD_WIDTHS[j]}d")
        else:
            columns.append(field)
            parts.append(f"%{FIELD_WIDTHS[j]}s")
    fmt = " ".join(parts)  # (a constant part is digits and a sign: no "%" in it)
    # ``map`` over the bound method: half the time of a comprehension's ``%``.
    return list(map(fmt.__mod__, zip(*columns, strict=True)))


def _format_text(values: np.ndarray) -> str:
    """The lines of :func:`format_rows`, each ended by a newline, as one string."""
    n = values.shape[1] if values.ndim == 2 else 0
    if n == 0:
        return ""
    fields = _fields(values)
    if not all(isinstance(f, str) for f in fields):
        return _integer_lines(fields, n)
    return "\n".join(format_rows(values)) + "\n"


def _integer_lines(fields: list[Any], n: int) -> str:
    """:func:`_integer_text` in blocks of rows whose byte matrices stay in the
    processor's caches (a fifth faster than one matrix for a whole batch)."""
    return "".join(
        _integer_text(
            [f if isinstance(f, str) else f[start : start + _TEXT_ROWS] for f in fields],
            min(_TEXT_ROWS, n - start),
        )
        for start in range(0, n, _TEXT_ROWS)
    )


def _fields(values: np.ndarray) -> list[str | np.ndarray | list[str]]:
    """Each of the 18 fields of an ``(18, n)`` block (n > 0): its text when the same
    integer is on every line (an unknown field, mostly: written once, right-aligned
    in its width), its values as int64 when all are integral, else each value's
    text (:func:`format_value`)."""
    fields: list[str | np.ndarray | list[str]] = []
    for j in range(len(SWF_FIELDS)):
        col = np.where(np.isnan(values[j]), -1.0, values[j])
        integral = bool(np.all((col == np.trunc(col)) & (np.abs(col) < _EXACT)))
        if integral and bool(np.all(col == col[0])):
            fields.append(f"%{FIELD_WIDTHS[j]}d" % int(col[0]))
        elif integral:
            fields.append(col.astype(np.int64))
        else:
            fields.append([format_value(v) for v in col.tolist()])
    return fields


#: Powers of ten from 10 to 10**16: a magnitude's digit count is one more than the
#: number of them it reaches (integral values are below 2**53, 16 digits at most).
_TENS = 10 ** np.arange(1, 17, dtype=np.int64)
#: The four ASCII digits of every number below 10,000 (zero-padded), by number.
_DIGITS4 = (48 + np.arange(10_000)[:, None] // np.array([1000, 100, 10, 1]) % 10).astype(np.uint8)
_SPACE, _MINUS, _NEWLINE = 32, 45, 10
#: Rows of one byte matrix of :func:`_integer_text` (about 1.5 MB).
_TEXT_ROWS = 16384


def _place(
    matrix: np.ndarray,
    keep: np.ndarray | None,
    text: np.ndarray,
    at: int,
    width: np.ndarray,
    widest: int,
    position: np.ndarray,
) -> np.ndarray | None:
    """Put a field's right-aligned ``text`` (``widest`` columns) into ``matrix`` at
    column ``at``; rows narrower than ``widest`` (``width``) drop their leading
    columns through ``keep`` (made on first need). Returns ``keep``."""
    matrix[:, at : at + widest] = text
    if int(width.min()) < widest:
        if keep is None:
            keep = np.ones(matrix.shape, dtype=bool)
        keep[:, at : at + widest] = position < width[:, None]
    return keep


def _integer_text(fields: list[Any], n: int) -> str:
    """The lines of ``n`` rows whose fields are constant texts or int64 columns, each
    line ended by a newline, as ``"%{width}d"`` writes every field (right-aligned in
    its width, widened by a longer number): built as one byte matrix with numpy, each
    row's field as wide as the column's widest text; the spaces a narrower row's
    field does not have are dropped at the end (not needed in most logs, whose
    numbers fit the archive's widths).
    """
    # First pass: each integer column's digit counts, signs and widest text.
    layout: list[tuple[Any, ...]] = []
    total = 0
    for j, field in enumerate(fields):
        if isinstance(field, str):
            layout.append((field.encode("ascii"),))
            total += len(field) + 1  # a space after each field, a newline after the last
            continue
        if isinstance(field, list):  # each value's text (format_value), as "%{width}s"
            encoded = np.array(field, dtype=bytes)
            lengths = np.char.str_len(encoded)
            width = np.maximum(lengths, FIELD_WIDTHS[j])
            widest = int(width.max())
            layout.append((encoded, lengths, width, widest))
            total += widest + 1
            continue
        negative = field < 0
        magnitude = np.abs(field)
        digits = np.searchsorted(_TENS, magnitude, side="right") + 1
        width = np.maximum(digits + negative, FIELD_WIDTHS[j])
        widest = int(width.max())
        layout.append((magnitude, negative, digits, width, widest))
        total += widest + 1
    matrix = np.full((n, total), _SPACE, dtype=np.uint8)
    keep: np.ndarray | None = None
    at = 0
    for item in layout:
        if len(item) == 1:
            matrix[:, at : at + len(item[0])] = np.frombuffer(item[0], dtype=np.uint8)
            at += len(item[0]) + 1
            continue
        if len(item) == 4:
            encoded, lengths, width, widest = item
            raw = encoded.view(np.uint8).reshape(n, encoded.itemsize)
            position = np.arange(widest - 1, -1, -1)  # from the right: 0 is the last
            source = lengths[:, None] - 1 - position  # a row's character there, if >= 0
            text = np.where(
                source >= 0,
                raw[np.arange(n)[:, None], np.maximum(source, 0)],
                np.uint8(_SPACE),
            )
            keep = _place(matrix, keep, text, at, width, widest, position)
            at += widest + 1
            continue
        magnitude, negative, digits, width, widest = item
        quads = -(-widest // 4)
        text = np.empty((n, 4 * quads), dtype=np.uint8)
        rest = magnitude
        for q in range(quads):  # four digits at a time, from the units up
            rest, low = np.divmod(rest, 10_000)
            text[:, 4 * (quads - q - 1) : 4 * (quads - q)] = _DIGITS4[low]
        position = np.arange(widest - 1, -1, -1)  # from the right: 0 is the units digit
        text = np.where(position >= digits[:, None], np.uint8(_SPACE), text[:, -widest:])
        if negative.any():
            text[negative[:, None] & (position == digits[:, None])] = _MINUS
        keep = _place(matrix, keep, text, at, width, widest, position)
        at += widest + 1
    matrix[:, -1] = _NEWLINE
    data = matrix if keep is None else matrix[keep]
    return data.tobytes().decode("ascii")


#: Per-job extras an SWF file carries.
SWF_EXTRAS = frozenset(
    (
        "swf_comments",
        "swf_parts",
        "swf_part_extras",
        "swf_trailing_comments",
        "swf_extra_columns",
    )
)
_NO_FIELD = "not written (SWF has no such field)"


def _note_job(job: Job, losses: Losses) -> None:
    """Count the rich fields of ``job`` that SWF cannot hold."""
    note_fields(
        losses,
        job,
        ("name", "account", "nodes", "hosts", "exit_code", "priority", "tasks"),
        _NO_FIELD,
    )
    for dep in job.dependencies:
        if not (
            dep.job == job.preceding_job_number
            and dep.kind == "end"
            and dep.code is None
            and dep.think_time in (None, job.think_time)
        ):
            losses.add(
                "dependencies", "not written (SWF keeps one preceding job and its think time)"
            )
            break


def _note_extras(extras: Sequence[dict] | None, extra_columns: bool, losses: Losses) -> None:
    if not extras:
        return
    kept = SWF_EXTRAS if extra_columns else SWF_EXTRAS - {"swf_extra_columns"}
    for extra in extras:
        if extra:
            note_extras(losses, extra, kept)
            if not extra_columns:  # the columns of grouped checkpoint/swap records
                for slot in extra.get("swf_part_extras") or ():
                    if isinstance(slot, dict) and slot.get("swf_extra_columns"):
                        losses.add("extras.swf_extra_columns", "not written")


def _chunks_of(
    workload: Workload, losses: Losses | None = None
) -> Iterable[tuple[np.ndarray, Sequence[dict] | None]]:
    """``(values (18, n), extras)`` batches of at most :data:`BATCH_ROWS` rows; the
    rich fields of Job objects are counted in ``losses``."""
    for chunk in workload.iter_chunks():
        if isinstance(chunk, JobColumns):
            n = len(chunk)
            if not n:
                continue
            values = np.vstack([chunk.data[name] for name in SWF_FIELDS])
            extras = chunk.extras
            for start in range(0, n, BATCH_ROWS):
                stop = min(start + BATCH_ROWS, n)
                yield values[:, start:stop], (extras[start:stop] if extras else None)
        else:
            for start in range(0, len(chunk), BATCH_ROWS):
                jobs: list[Job] = chunk[start : start + BATCH_ROWS]
                if losses is not None:
                    for job in jobs:
                        _note_job(job, losses)
                cols = JobColumns.from_jobs(jobs)
                values = np.vstack([cols.data[name] for name in SWF_FIELDS])
                extras = [j.extras for j in jobs]
                yield values, (extras if any(extras) else None)


def _part_line(
    part: Sequence[Any],
    rounding: _Rounding | None = None,
    check: Callable[[np.ndarray], None] | None = None,
) -> str:
    values = np.array(
        [[np.nan if v is None else float(v)] for v in list(part)[: len(SWF_FIELDS)]]
        + [[np.nan]] * (len(SWF_FIELDS) - len(part)),
        dtype=np.float64,
    )
    if rounding is not None:
        values = rounding(values)
    if check is not None:
        check(values)
    return format_rows(values)[0]


def _with_extras(
    line: str,
    extra: dict[str, Any],
    extra_columns: bool,
    rounding: _Rounding | None = None,
    check: Callable[[np.ndarray], None] | None = None,
) -> list[str]:
    out = [str(c) for c in extra.get("swf_comments", ())]
    if extra_columns and extra.get("swf_extra_columns"):
        line += " " + " ".join(str(c) for c in extra["swf_extra_columns"])
    out.append(line)
    slots = extra.get("swf_part_extras") or ()
    for k, part in enumerate(extra.get("swf_parts", ())):
        slot = slots[k] if k < len(slots) and isinstance(slots[k], dict) else {}
        out.extend(str(c) for c in slot.get("swf_comments", ()))
        text = _part_line(part, rounding, check)
        if extra_columns and slot.get("swf_extra_columns"):
            text += " " + " ".join(str(c) for c in slot["swf_extra_columns"])
        out.append(text)
    out.extend(str(c) for c in extra.get("swf_trailing_comments", ()))
    return out


def write_swf(
    workload: Workload,
    path: str | os.PathLike[str],
    *,
    extra_columns: bool = False,
    integer_times: bool = False,
    integer_memory: bool = False,
) -> Losses:
    """Write ``workload`` to ``path`` as SWF (compressed by suffix).

    ``extra_columns=True`` appends the columns a lenient read kept beyond the 18th
    (``extras["swf_extra_columns"]``), reproducing e.g. Alea's extended format;
    by default the output is standard SWF. ``integer_times=True`` rounds every time
    field to whole seconds (see :data:`TIME_ROUNDING`), ``integer_memory=True`` the
    memory fields to whole KB: with both, every field is an integer. Returns what
    SWF could not hold (also reported to :func:`schedlab.collect_losses`).
    """
    with writer_losses() as losses:
        rounding = None
        if integer_times or integer_memory:

            def rounding(values: np.ndarray) -> np.ndarray:
                return round_times(values, losses, times=integer_times, memory=integer_memory)

        _write(workload, path, extra_columns, losses, rounding)
    return losses


def _half_up(values: np.ndarray) -> np.ndarray:
    """The nearest integer, halves up, computed exactly: ``floor(x)`` plus one when
    ``x - floor(x)`` (exact in float64) is at least one half. An integer is left
    as it is (``floor(x + 0.5)`` moved 2**53 - 1 to 2**53 and 0.49999999999999994
    to 1)."""
    low = np.floor(values)
    with np.errstate(invalid="ignore"):
        return np.where(values - low >= 0.5, low + 1.0, low)


#: How ``integer_times=True`` rounds each time field: submit times down (a job is
#: never submitted later than it was), durations to the nearest second (halves
#: up), the requested time up (so a run time that fitted its limit still does:
#: ``round(run) <= ceil(run) <= ceil(limit)``).
TIME_ROUNDING: dict[str, Any] = {
    "submit_time": np.floor,
    "wait_time": _half_up,
    "run_time": _half_up,
    "average_cpu_time": _half_up,
    "requested_time": np.ceil,
    "think_time": _half_up,
}
#: How ``integer_memory=True`` rounds the memory fields: to the nearest KB.
MEMORY_ROUNDING: dict[str, Any] = {"used_memory": _half_up, "requested_memory": _half_up}


def round_times(
    values: np.ndarray, losses: Losses | None = None, *, times: bool = True, memory: bool = False
) -> np.ndarray:
    """A copy of ``values`` (an ``(18, n)`` array in SWF order, NaN = unknown) with
    the time fields rounded as :data:`TIME_ROUNDING` says (``times``) and the memory
    fields as :data:`MEMORY_ROUNDING` says (``memory``); each value that changed is
    counted in ``losses``."""
    out = values.copy()
    if out.ndim != 2 or out.shape[1] == 0:
        return out
    rules = {**(TIME_ROUNDING if times else {}), **(MEMORY_ROUNDING if memory else {})}
    for field, rule in rules.items():
        row = SWF_FIELDS.index(field)
        what = "seconds (integer_times)" if field in TIME_ROUNDING else "KB (integer_memory)"
        column = out[row]
        rounded = rule(column)
        changed = int(np.count_nonzero(rounded != column))  # NaN != NaN: excluded below
        changed -= int(np.count_nonzero(np.isnan(column)))
        if losses is not None:
            losses.add(field, f"rounded to whole {what}", changed)
        out[row] = rounded
    if losses is not None:
        # The fields no option rounds (counts, ids ...): a fractional one is written
        # as it is, and said, since the options promise integers to tools like AccaSim.
        for row, field in enumerate(SWF_FIELDS):
            if field in TIME_ROUNDING or field in MEMORY_ROUNDING:
                continue
            column = out[row]
            with np.errstate(invalid="ignore"):
                fractional = int(np.count_nonzero(column - np.floor(column) > 0))
            losses.add(
                field,
                "fractional, written as it is (integer_times and integer_memory round "
                "only the time and memory fields)",
                fractional,
            )
    return out


#: A function rounding an ``(18, n)`` block of values (the integer options).
_Rounding = Callable[[np.ndarray], np.ndarray]

_PARTIAL = (2.0, 3.0, 4.0)
_JOB, _STATUS = SWF_FIELDS.index("job_number"), SWF_FIELDS.index("status")


def _note_merges(
    values: np.ndarray, previous: tuple[float, bool], losses: Losses
) -> tuple[float, bool]:
    """Count jobs a reader takes for a part of the job before them: a partial-execution
    status (2, 3, 4) right after a job of the same number that is not partial (the
    SWF way of writing a checkpointed job's records). ``previous`` is the last job's
    (number, partial) from the batch before; returns this batch's."""
    if values.shape[1] == 0:
        return previous
    number, status = values[_JOB], values[_STATUS]
    partial = np.isin(status, _PARTIAL)
    before = np.r_[previous[0], number[:-1]]
    before_partial = np.r_[previous[1], partial[:-1]]
    merged = int(np.count_nonzero(partial & (number == before) & ~before_partial))
    losses.add(
        "job_number",
        "repeats the job before it with a partial status: read back as a part of it",
        merged,
    )
    return float(number[-1]), bool(partial[-1])


def _write(
    workload: Workload,
    path: str | os.PathLike[str],
    extra_columns: bool,
    losses: Losses,
    rounding: _Rounding | None = None,
) -> None:
    previous = (float("nan"), False)
    source = os.fspath(path)
    done = 0  # jobs written before this batch
    with open_output(path) as fh:
        for line in format_header(workload.header):
            fh.write(line + "\n")
        for values, extras in _chunks_of(workload, losses):
            _note_extras(extras, extra_columns, losses)
            previous = _note_merges(values, previous, losses)
            if rounding is not None:
                values = rounding(values)
            job = _job_namer(values, done)
            _check_writable(values, source, job)
            done += values.shape[1]
            if extras is None:
                fh.write(_format_text(values))
                continue
            special = ("swf_comments", "swf_parts", "swf_trailing_comments")
            lines: list[str] = []
            for i, (line, extra) in enumerate(zip(format_rows(values), extras, strict=True)):
                if extra and (
                    any(k in extra for k in special)
                    or (extra_columns and "swf_extra_columns" in extra)
                ):
                    part_of = f"{job(i)}: checkpoint/swap record"
                    check = partial(_check_writable, path=source, job=_constant(part_of))
                    lines.extend(_with_extras(line, extra, extra_columns, rounding, check))
                else:
                    lines.append(line)
            if lines:
                fh.write("\n".join(lines))
                fh.write("\n")
