"""Whole-block parsing of accounting records (the reader's fast paths).

The reader (:mod:`.reader`) hands every block of lines (about 4 MB, ending at a
newline) to these functions first. Each either gives the values the reader needs
for the whole block, computed without a Python step per record, or ``None``: the
block then goes the careful way, record by record, exactly as without a fast path.
So a fast path never decides anything about a record: it declines any block it
cannot read with the very same result (tested in ``tests/test_sge_speedpaths.py``).

* **Colon**: the byte positions of the newlines and colons of a block are found
  with numpy; a record with exactly 44 colons has its 45 fields at known places.
  The numeric fields are cut out as a fixed-width byte array and converted by
  numpy's own string-to-number cast (the conversion the careful path uses too);
  the names and the category are interned by value (a 64-bit hash of their bytes,
  checked byte for byte), so only the distinct values become Python strings.
* **JSONL**: with the optional ``msgspec`` package the block is decoded in one call
  into small structs of typed fields: the keys the mapping uses, and every other
  known key typed by the rules the careful path checks it by, so that a block
  decoded needs no further check; custom usage containers are checked by a
  second, lighter decoding of the block (only when there are some). The block is
  declined unless its colons show that no object names a key twice (which every
  JSON parser settles silently; see the notes above :func:`json_block`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, repeat
from operator import attrgetter, is_not
from typing import Annotated, Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from schedlab.validation import MAX_MAGNITUDE

from .colon import category_colons_ok
from .jsonl import UNSIGNED_KEYS
from .mapping import HEAD_KEYS, JSON_MAPPED_KEYS, TEXT_KEYS
from .names import (
    CATEGORY,
    COLON_FULL_FIELDS,
    COLON_INTEGERS,
    COLON_MEMORY,
    COLON_MIN_FIELDS,
    COLON_NUMBERS,
    EUSAGE_FIELDS,
    JSON_INT_KEYS,
    JSON_KEYS,
    JSON_STRING_KEYS,
    RUSAGE_FIELDS,
)

_COLONS = COLON_FULL_FIELDS - 1  # colons of a 45-field record
_ARID = COLON_FULL_FIELDS - 2  # index of arid; ar_submission_time follows
_WIDEST = 4096  # a field wider than this sends the block the careful way
_MIX = np.uint64(0x9E3779B97F4A7C15)


@dataclass
class Part:
    """Converted records of a block: their line indices (ascending), one float64
    column per requested numeric field, per requested text field the distinct
    values and each record's index into them, and whether each record's
    ``pe_taskid`` marks a parallel task."""

    rows: np.ndarray
    numbers: np.ndarray
    texts: list[tuple[list[str], np.ndarray]]
    pe_task: np.ndarray


@dataclass
class ColonBlock:
    """A colon block as the careful path would see it.

    ``regular``: the records with exactly 45 fields; ``others``: the indices of
    every other line; ``variants``: those of them that are records (43 fields, 46
    and more, colons inside the category), split as
    :func:`.colon.split_record` splits them, or ``None`` if that could not be
    decided here (the reader then reads every line of ``others`` one by one);
    ``leftover``: the lines of ``others`` not in ``variants`` (short, or starting
    with ``#``): the reader accepts ``variants`` only if these are all comment or
    (almost) empty lines.
    """

    regular: Part
    others: list[int]
    variants: Part | None
    leftover: list[int]


class _Decline(Exception):
    """The block has to be read record by record."""


class _Bytes:
    """A block's bytes, zero-padded on both sides so that fixed-width windows
    around any field stay inside the array."""

    def __init__(self, data: bytes | memoryview, pad: int = 512) -> None:
        self.data = data
        self.pad = 0
        self._pad(pad)

    def _pad(self, pad: int) -> None:
        data = self.data
        padded = np.zeros(len(data) + 2 * pad, dtype=np.uint8)
        padded[pad : pad + len(data)] = np.frombuffer(data, dtype=np.uint8)
        self.pad, self.padded = pad, padded
        self._windows: dict[int, np.ndarray] = {}

    def words(self, width: int) -> np.ndarray:
        """Like :meth:`window` (``width`` a multiple of 8), as rows of 64-bit words:
        copied eight bytes at a time."""
        if width > self.pad:
            self._pad(max(width, 2 * self.pad))
        view = self._windows.get(-width)
        if view is None:
            padded = self.padded
            count = len(padded) - width + 1
            view = self._windows[-width] = np.ndarray(
                (count, width // 8), dtype=np.uint64, buffer=padded, strides=(1, 8)
            )
        return view

    def window(self, width: int) -> np.ndarray:
        """Every ``width`` bytes of the padded block: row ``i + pad`` starts at
        byte ``i`` of the block."""
        if width > _WIDEST:
            raise _Decline
        if width > self.pad:
            self._pad(max(width, 2 * self.pad))
        view = self._windows.get(width)
        if view is None:
            view = self._windows[width] = sliding_window_view(self.padded, width)
        return view

    def right(self, ends: np.ndarray, widths: np.ndarray, width: int, fill: int) -> np.ndarray:
        """``(n, width)`` bytes ending at ``ends``; bytes before each field ``fill``."""
        window = self.window(width)
        rows = window[ends + (self.pad - width)]
        np.putmask(rows, np.arange(width - 1, -1, -1) >= widths[:, None], fill)
        return rows

    def left(self, starts: np.ndarray, widths: np.ndarray, width: int) -> np.ndarray:
        """``(n, width)`` bytes starting at ``starts``; bytes after each field 0."""
        window = self.window(width)
        rows = window[starts + self.pad]
        np.putmask(rows, np.arange(width) >= widths[:, None], 0)
        return rows


def _field_bounds(
    line_starts: np.ndarray, line_ends: np.ndarray, colons: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Start and end byte of field ``k`` of 45-field records."""
    start = line_starts if k == 0 else colons[:, k - 1] + 1
    end = colons[:, k] if k < _COLONS else line_ends
    return start, end


def _grammar(edges: dict[int, dict[bytes, int]]) -> np.ndarray:
    r"""A transition table ``[state, byte]`` for a small ASCII grammar: state 8 is
    dead, 9 "not ASCII" (the careful path's ``\d`` also takes other digits), byte 0
    (padding after a field) leaves the state as it is."""
    table = np.full((10, 256), 8, dtype=np.uint8)
    table[:, 128:] = 9
    table[9, :] = 9
    for state, moves in edges.items():
        for chars, target in moves.items():
            for char in chars:
                table[state, char] = target
    table[:, 0] = np.arange(10)
    return table


_DIGITS = b"0123456789"
#: ``colon._FLOAT_RE``: -?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?
#: (accepting: 2, 3, 7)
_NUMBER = _grammar(
    {
        0: {b"-": 1, _DIGITS: 2, b".": 4},
        1: {_DIGITS: 2, b".": 4},
        2: {_DIGITS: 2, b".": 3, b"eE": 5},
        3: {_DIGITS: 3, b"eE": 5},
        4: {_DIGITS: 3},
        5: {b"+-": 6, _DIGITS: 7},
        6: {_DIGITS: 7},
        7: {_DIGITS: 7},
    }
)
_NUMBER_ACCEPT = np.zeros(10, dtype=bool)
_NUMBER_ACCEPT[[2, 3, 7]] = True
#: ``colon._INT_RE``: -?[0-9]+  (accepting: 2)
_INTEGER = _grammar({0: {b"-": 1, _DIGITS: 2}, 1: {_DIGITS: 2}, 2: {_DIGITS: 2}})
_INTEGER_ACCEPT = np.zeros(10, dtype=bool)
_INTEGER_ACCEPT[2] = True
#: ``colon._UINT_RE``: [0-9]+  (accepting: 2; ``arid``, ``ar_submission_time``)
_UNSIGNED = _grammar({0: {_DIGITS: 2}, 2: {_DIGITS: 2}})
#: Digits of an integer that is certainly within 2**53 - 1.
_SHORT = 15


def _matches(
    raw: _Bytes, starts: np.ndarray, ends: np.ndarray, table: np.ndarray, accept: np.ndarray
) -> tuple[np.ndarray, bool]:
    """Per field, whether it matches the grammar; and whether that is certain (no
    byte outside ASCII was met)."""
    widths = ends - starts
    rows = raw.left(starts, widths, max(int(widths.max(initial=0)), 1))
    state = np.zeros(len(widths), dtype=np.uint8)
    for j in range(rows.shape[1]):
        state = table[state, rows[:, j]]
    return accept[state], not (state == 9).any()


def _all_digits(rows: np.ndarray, widths: np.ndarray) -> bool:
    """Every field 1 to 15 ASCII digits (``rows`` zero-padded), as the careful path
    wants the two last fields of a regular record; raises :class:`_Decline` for a
    field with a byte outside ASCII (the careful path reports it)."""
    if not len(widths):
        return True
    if (rows >= 128).any():
        raise _Decline
    if widths.min() == 0 or widths.max() > _SHORT:
        return False
    digit = (rows - 48) < 10
    return bool((digit | (rows == 0)).all())


_POWERS = 10.0 ** np.arange(15)


def _integers(raw: _Bytes, ends: np.ndarray, widths: np.ndarray, out: np.ndarray) -> bool:
    """Convert fields that are all plain decimal integers (1 to 15 ASCII digits:
    exact in float64, as numpy's string cast gives them) into ``out``; ``False``
    (nothing written) if any field is something else."""
    if not len(widths):
        return True
    width = int(widths.max())
    if width > len(_POWERS) or widths.min() < 1:
        return False
    window = raw.window(width)
    digits = window[ends + (raw.pad - width)] - np.uint8(48)  # (n, width)
    if width == 1:
        if (digits > 9).any():
            return False
        out[:] = digits[:, 0]
        return True
    outside = np.arange(width - 1, -1, -1) >= widths[:, None]
    if not ((digits <= 9) | outside).all():
        return False
    np.putmask(digits, outside, 0)
    np.matmul(digits.astype(np.float64), _POWERS[width - 1 :: -1], out=out)
    return True


def _interned(
    raw: _Bytes, data: bytes | memoryview, starts: np.ndarray, widths: np.ndarray
) -> tuple[list[str], np.ndarray]:
    """Distinct values (decoded) and the index of each record's value."""
    n = len(widths)
    width = max(8, -(-int(widths.max(initial=0)) // 8) * 8)
    rows = raw.left(starts, widths, width)
    words = rows.view(np.uint64)  # (n, width // 8), native order: fine for a hash
    digest = widths.astype(np.uint64)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):
            digest = (digest ^ words[:, j]) * _MIX
            digest ^= digest >> np.uint64(31)
    _values, inverse = np.unique(digest, return_inverse=True)
    inverse = inverse.reshape(n)
    first = np.empty(len(_values), dtype=np.int64)  # a record with each value
    first[inverse] = np.arange(n)
    same = first[inverse]
    if not (np.array_equal(widths[same], widths) and np.array_equal(rows[same], rows)):
        raise _Decline  # two values with one hash: let the careful path do it
    texts = [
        str(data[s : s + w], "utf-8")
        for s, w in zip(starts[first].tolist(), widths[first].tolist(), strict=True)
    ]
    return texts, inverse


def _byte_set(chars: bytes) -> np.ndarray:
    allowed = np.zeros(256, dtype=bool)
    allowed[list(chars)] = True
    return allowed


#: The bytes of a number of the documented syntax (``colon._FLOAT_RE``), of an
#: integer (``colon._INT_RE``), and the padding space.
_NUMBER_BYTES = _byte_set(_DIGITS + b".-+eE ")
_INTEGER_BYTES = _byte_set(_DIGITS + b"- ")
_EXPONENT = np.array([ord("e"), ord("E")], dtype=np.uint8)


def _cast(raw: _Bytes, ends: np.ndarray, widths: np.ndarray, integer: bool) -> np.ndarray:
    """Fields converted by numpy's string cast (the careful path's conversion, for
    str, too); raises :class:`_Decline` if one is not a number of the documented
    syntax (``integer``: of an integer; see :func:`.colon.number_problem`).

    The cast alone also takes ``+5``, `` 5``, ``1_000``: a field is taken only if
    it has no byte but digits, ``-`` (and ``.``, ``e``, ``E``, ``+`` if not an
    integer), no space and no ``+`` but after ``e``/``E``. Among strings of those
    bytes, the cast succeeds exactly on the documented syntax (tested)."""
    width = max(int(widths.max(initial=0)), 1)
    cells = raw.right(ends, widths, width, 32)  # left-padded with spaces
    if not (_INTEGER_BYTES if integer else _NUMBER_BYTES)[cells].all():
        raise _Decline
    if not np.array_equal(np.count_nonzero(cells == 32, axis=1), width - widths):
        raise _Decline  # (a space inside a field)
    if not integer:
        plus = cells == 43
        if plus.any() and (
            plus[:, 0].any() or not np.isin(cells[:, :-1][plus[:, 1:]], _EXPONENT).all()
        ):
            raise _Decline  # (a '+' but in an exponent)
    try:
        return cells.view(f"S{width}").reshape(len(widths)).astype(np.float64)
    except (ValueError, OverflowError):
        raise _Decline from None


@dataclass(frozen=True)
class _Checks:
    """The number fields the mapping does not use (``fields``), as
    :func:`_check_numbers` checks them: ``integers`` one by one; the others in
    ``regions``, runs of contiguous number fields ``(first, last)``, as a whole;
    ``memory`` the memory fields among them."""

    fields: frozenset[int]
    integers: tuple[int, ...]
    regions: tuple[tuple[int, int], ...]
    memory: tuple[int, ...]

    @property
    def outline(self) -> frozenset[int]:
        """The fields whose bounds the check of plain numbers needs."""
        ends = (k for region in self.regions for k in region)
        return frozenset({*self.integers, *ends, *self.memory})


@lru_cache(maxsize=8)
def _checks_for(unmapped: tuple[int, ...], mapped: tuple[int, ...]) -> _Checks:
    """How to check the fields ``unmapped``; a region may span ``mapped`` number
    fields (converted anyway) to join two runs."""
    integers = tuple(k for k in unmapped if k in COLON_INTEGERS)
    others = sorted(k for k in unmapped if k not in COLON_INTEGERS)
    numbers = {*unmapped, *mapped} & COLON_NUMBERS
    regions: list[list[int]] = []
    for k in others:
        if regions and all(j in numbers for j in range(regions[-1][1] + 1, k)):
            regions[-1][1] = k  # (joined over mapped number fields: they are numbers)
        else:
            regions.append([k, k])
    return _Checks(
        frozenset(unmapped),
        integers,
        tuple((a, b) for a, b in regions),
        tuple(k for k in unmapped if k in COLON_MEMORY),
    )


_ONE = np.uint64(1)
_TOP = np.uint64(63)


def _shift_up(x: np.ndarray) -> np.ndarray:
    """Bit strings (columns of 64-bit words, lowest word first) shifted one bit up."""
    y = x << _ONE
    y[1:] |= x[:-1] >> _TOP
    return y


def _shift_down(x: np.ndarray) -> np.ndarray:
    y = x >> _ONE
    y[:-1] |= x[1:] << _TOP
    return y


def _add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bit strings added as numbers (carries cross the words)."""
    out = a + b
    over = out < a
    carry = over[0]
    for k in range(1, len(out)):
        total = out[k] + carry
        carry = over[k] | (carry & (total == 0))
        out[k] = total
    return out


def _subtract(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bit strings subtracted as numbers (``a >= b``; borrows cross the words)."""
    out = a - b
    under = a < b
    borrow = under[0]
    for k in range(1, len(out)):
        total = out[k] - borrow
        borrow = under[k] | (borrow & (out[k] == 0))
        out[k] = total
    return out


_SCRATCH: dict[int, np.ndarray] = {}


def _scratch(slot: int, size: int, dtype: Any) -> np.ndarray:
    """A reused buffer of ``size`` items (fresh large arrays for every block cost
    page faults: as much time again as the work done on them)."""
    buffer = _SCRATCH.get(slot)
    if buffer is None or buffer.nbytes < size * np.dtype(dtype).itemsize:
        buffer = _SCRATCH[slot] = np.empty(max(size * 8, 1 << 20), dtype=np.uint8)
    return buffer[: size * np.dtype(dtype).itemsize].view(dtype)


def _plain(raw: _Bytes, segments: list[tuple[np.ndarray, np.ndarray]]) -> bool:
    """Whether every field of the segments ``(starts, ends)`` (runs of number fields
    separated by colons, one run per record) is certainly a plain decimal number:
    ASCII digits with at most one ``.``, which has digits on both sides, 300
    characters at most (so a finite number >= 0 that numpy reads). ``False`` if not
    certain (the caller then looks field by field).

    Done on bit strings, one bit per byte of the segments laid side by side (digit,
    dot, colon): a field must start and end with a digit; adding a 1 at each field
    start carries through the digits and dots that follow and must stop exactly at
    the field's separator (nothing else in between); adding a 1 after each dot
    carries through the digits that follow and must not stop at another dot."""
    if not segments or not len(segments[0][0]):
        return True
    places, offset = [], 0
    for starts, ends in segments:
        widths = ends - starts
        longest = int(widths.max())
        if longest > 300 or int(widths.min()) < 1:
            return False
        width = -(-(longest + 1) // 8) * 8  # (with >= 1 byte after the segment)
        places.append((offset, widths, width))
        offset += width
    m = len(widths)
    offset = -(-offset // 64) * 64  # (whole words; the bytes after are masked off)
    codes = _scratch(0, m * offset, np.uint8).reshape(m, offset)
    for (first, _, width), (starts, _) in zip(places, segments, strict=True):
        codes[:, first : first + width] = raw.words(width)[starts + raw.pad].view(np.uint8)
    codes -= np.uint8(48)  # digits 0-9, ':' 10, '.' 254
    mask = _scratch(1, m * offset, np.bool_).reshape(m, offset)

    def bits(compare: Any, value: int) -> np.ndarray:
        compare(codes, np.uint8(value), out=mask)
        packed = np.packbits(mask.ravel(), bitorder="little")
        return packed.view("<u8").reshape(m, offset // 64).T.copy()  # (words, m)

    digits, dots, colons = bits(np.less, 10), bits(np.equal, 254), bits(np.equal, 10)
    words = offset // 64
    firsts = np.zeros((words, 1), dtype=np.uint64)  # the first bit of each segment
    ends_at = np.zeros((words, m), dtype=np.uint64)  # the bit after each segment
    every = np.arange(m)
    for first, widths, _ in places:
        firsts[first >> 6] |= _ONE << np.uint64(first & 63)
        stops = first + widths
        ends_at[stops >> 6, every] |= _ONE << (stops & 63).astype(np.uint64)
    firsts = np.broadcast_to(firsts, (words, m))
    inside = _subtract(ends_at, firsts)  # (the bits of every segment)
    digits &= inside
    dots &= inside
    colons &= inside
    seps = colons | ends_at
    field_starts = firsts | _shift_up(colons)
    if (field_starts & ~digits).any() or (_shift_down(seps) & ~digits).any():
        return False  # a field that is empty or does not start and end with a digit
    allowed = digits | dots
    if not np.array_equal(_add(allowed, field_starts) & ~allowed, seps):
        return False  # a byte other than a digit or a dot inside a field
    return not (_add(digits, _shift_up(dots)) & dots).any()  # (two dots in a field)


def _check_numbers(
    raw: _Bytes,
    bounds: dict[int, tuple[np.ndarray, np.ndarray]],
    checks: _Checks,
    more: Callable[[int], tuple[np.ndarray, np.ndarray]] | None = None,
) -> None:
    """Raise :class:`_Decline` unless the number fields of ``checks`` are certainly
    what the careful path accepts (``reader._check_unmapped``): finite numbers;
    ``priority`` an integer within 2**53 - 1; memory from 0 to 2**53 - 1. Integers
    of 1 to 15 digits are recognised by :func:`_integers`, plain decimal numbers
    all at once by :func:`_plain` (both the common case; they need the bounds of
    :attr:`_Checks.outline`); otherwise each field is converted by numpy's string
    cast (``more(k)`` gives the bounds of a field not in ``bounds``)."""
    scratch = np.empty(len(next(iter(bounds.values()))[0]))
    with np.errstate(invalid="ignore"):
        for k in checks.integers:
            start, end = bounds[k]
            if _integers(raw, end, end - start, scratch):
                continue
            values = _cast(raw, end, end - start, True)
            if not (np.abs(values) <= MAX_MAGNITUDE).all() or (values != np.floor(values)).any():
                raise _Decline  # (NaN fails the first test)
        segments = [(bounds[first][0], bounds[last][1]) for first, last in checks.regions]
        if _plain(raw, segments):
            for k in checks.memory:  # (a plain number of 15 characters is below 2**53)
                start, end = bounds[k]
                if int((end - start).max(initial=0)) > 15:
                    values = _cast(raw, end, end - start, False)
                    if not (values <= MAX_MAGNITUDE).all():
                        raise _Decline
            return
        for k in sorted(checks.fields - set(checks.integers)):
            start, end = bounds[k] if k in bounds or more is None else more(k)
            values = _cast(raw, end, end - start, False)
            good = np.isfinite(values)
            if k in COLON_MEMORY:
                good &= (values >= 0) & (values <= MAX_MAGNITUDE)
            if not good.all():
                raise _Decline


def numbers_certainly_good(
    lines: list[str], unmapped: tuple[int, ...], numeric: tuple[int, ...]
) -> bool:
    """Whether the number fields ``unmapped`` of 45-field colon records are
    certainly what the careful path accepts (``reader._check_unmapped``), looked
    at all together as :func:`colon_block` does; ``False`` when not certain (the
    careful path then converts them field by field)."""
    data = ("\n".join(lines) + "\n").encode()
    buf = np.frombuffer(data, dtype=np.uint8)
    if not buf.all():
        return False  # (numpy's cast of bytes stops at a NUL byte, float() does not)
    colons = np.flatnonzero(buf == 58)
    newlines = np.flatnonzero(buf == 10)
    n = len(newlines)
    if not n or len(colons) != _COLONS * n:
        return False
    grid = colons.reshape(n, _COLONS)
    if not ((grid[:, -1] < newlines).all() and (grid[1:, 0] > newlines[:-1]).all()):
        return False
    starts = np.empty(n, dtype=np.int64)
    starts[0] = 0
    starts[1:] = newlines[:-1] + 1
    checks = _checks_for(unmapped, numeric)

    def more(k: int) -> tuple[np.ndarray, np.ndarray]:
        return _field_bounds(starts, newlines, grid, k)

    bounds = {k: more(k) for k in checks.outline}
    try:
        _check_numbers(_Bytes(data), bounds, checks, more)
    except _Decline:
        return False
    return True


def _convert(
    raw: _Bytes,
    data: bytes | memoryview,
    rows: np.ndarray,
    bounds: dict[int, tuple[np.ndarray, np.ndarray]],
    numeric: tuple[int, ...],
    text: tuple[int, ...],
    pe_field: int,
    checks: _Checks | None = None,
    more: Callable[[int], tuple[np.ndarray, np.ndarray]] | None = None,
) -> Part:
    """The values of records whose field bounds are known; raises :class:`_Decline`
    unless the number fields of ``checks`` are certainly good (see
    :func:`_check_numbers` for ``more``)."""
    m = len(rows)
    if checks is not None:
        _check_numbers(raw, bounds, checks, more)
    numbers = np.empty((m, len(numeric)))
    for column, k in enumerate(numeric):
        start, end = bounds[k]
        widths = end - start
        if _integers(raw, end, widths, numbers[:, column]):
            continue
        numbers[:, column] = _cast(raw, end, widths, k in COLON_INTEGERS)
    texts = []
    for k in text:
        start, end = bounds[k]
        texts.append(_interned(raw, data, start, end - start))
    start, end = bounds[pe_field]
    widths = end - start
    four = raw.left(start, widths, 4).view("S4").reshape(m)
    pe_task = (widths > 0) & ~((widths == 4) & (four == b"NONE"))
    return Part(rows, numbers, texts, pe_task)


def merge_parts(first: Part, second: Part) -> Part:
    """The records of two parts of one block as one part, rows ascending."""
    if not len(second.rows):
        return first
    if not len(first.rows):
        return second
    rows = np.concatenate([first.rows, second.rows])
    order = np.argsort(rows, kind="stable")
    texts = []
    for (values, inverse), (more, more_inverse) in zip(first.texts, second.texts, strict=True):
        joined = np.concatenate([inverse, more_inverse + len(values)])
        texts.append(([*values, *more], joined[order]))
    return Part(
        rows[order],
        np.concatenate([first.numbers, second.numbers])[order],
        texts,
        np.concatenate([first.pe_task, second.pe_task])[order],
    )


def _empty_part(numeric: tuple[int, ...]) -> Part:
    return Part(np.zeros(0, dtype=np.int64), np.empty((0, len(numeric))), [], np.zeros(0, bool))


class _Fences:
    """Per line: the position before it, of each of its colons, and of its end."""

    def __init__(
        self, colons: np.ndarray, upto: np.ndarray, starts: np.ndarray, ends: np.ndarray
    ) -> None:
        self.colons, self.upto, self.starts, self.ends = colons, upto, starts, ends

    def of(self, rows: np.ndarray, count: int) -> np.ndarray:
        """``(len(rows), count + 2)`` fences of lines that have ``count`` colons."""
        fence = np.empty((len(rows), count + 2), dtype=np.int64)
        fence[:, 0] = self.starts[rows] - 1
        fence[:, 1:-1] = self.colons[(self.upto[rows] - count)[:, None] + np.arange(count)]
        fence[:, -1] = self.ends[rows]
        return fence


def _variants(
    raw: _Bytes,
    data: bytes | memoryview,
    rows: np.ndarray,
    counts: np.ndarray,
    fences: _Fences,
    numeric: tuple[int, ...],
    text: tuple[int, ...],
    pe_field: int,
    number_checks: _Checks | None = None,
) -> Part:
    """Records with 43 or 46+ fields (or colons inside the category), split as
    :func:`.colon.split_record` does: the fewest colons inside the category that
    make the fields after it consistent (``iow``, ``maxvmem`` numbers; ``arid``,
    ``ar_submission_time`` integers when present), colons taken into the category
    only inside time values (:func:`.colon.category_colons_ok`). ``fences`` gives the
    positions before each line, of its colons, and of its end. Raises
    :class:`_Decline` if any record cannot be decided here."""
    if not len(rows):
        return _empty_part(numeric)
    category = CATEGORY
    needed = {*numeric, *text, pe_field, *(number_checks.outline if number_checks else ())}
    groups = []  # (fence, where the category ends) per number of colons
    order = []
    for colons in np.unique(counts).tolist():
        members = np.flatnonzero(counts == colons)
        fence = fences.of(rows[members], colons)  # (r, colons + 2)
        fields = colons + 1
        inside = np.full(len(members), -1, dtype=np.int64)
        for shift in range(fields - COLON_MIN_FIELDS + 1):
            tail = fields - (category + 1) - shift
            if tail == 4 or tail < 3:
                continue
            open_ = inside < 0
            if not open_.any():
                break
            good = open_.copy()
            checks = [(0, _NUMBER, _NUMBER_ACCEPT), (2, _NUMBER, _NUMBER_ACCEPT)]
            if tail >= 5:  # (1 to 15 digits: see colon._tail_problem)
                checks += [(3, _UNSIGNED, _INTEGER_ACCEPT), (4, _UNSIGNED, _INTEGER_ACCEPT)]
            for offset, table, accept in checks:
                k = category + 1 + shift + offset
                ok, certain = _matches(raw, fence[:, k] + 1, fence[:, k + 1], table, accept)
                if not certain:
                    raise _Decline
                if offset >= 3 and (ok & good & (fence[:, k + 1] - fence[:, k] - 1 > _SHORT)).any():
                    raise _Decline  # (the careful path compares it with 2**53 - 1)
                good &= ok
            if shift and good.any():  # (a category taking colons in: of time values only)
                which = np.flatnonzero(good)
                begin = fence[which, category] + 1
                texts, inverse = _interned(
                    raw, data, begin, fence[which, category + 1 + shift] - begin
                )
                good[which] = np.array(list(map(category_colons_ok, texts)), dtype=bool)[inverse]
            inside[good] = shift
        if (inside < 0).any():
            raise _Decline  # a bad record: the careful path reports it
        groups.append((fence, inside))
        order.append(rows[members])
    rows = np.concatenate(order)
    ascending = np.argsort(rows, kind="stable")

    def bounds_of(k: int) -> tuple[np.ndarray, np.ndarray]:
        begins, stops = [], []
        for fence, inside in groups:
            if k < category:
                begin, stop = fence[:, k] + 1, fence[:, k + 1]
            else:
                picked = np.arange(len(fence))
                stop = fence[picked, k + 1 + inside]
                begin = fence[:, k] + 1 if k == category else fence[picked, k + inside] + 1
            begins.append(begin)
            stops.append(stop)
        return np.concatenate(begins)[ascending], np.concatenate(stops)[ascending]

    bounds = {k: bounds_of(k) for k in needed}
    return _convert(
        raw, data, rows[ascending], bounds, numeric, text, pe_field, number_checks, bounds_of
    )


def colon_block(
    data: bytes | memoryview,
    numeric: tuple[int, ...],
    text: tuple[int, ...],
    pe_field: int,
    unmapped: tuple[int, ...] = (),
) -> ColonBlock | None:
    """A colon block (``data`` ends with a newline) read in bulk, or ``None`` when
    it must be read record by record.

    ``numeric`` and ``text`` are field indices (0-based, of the 45 documented
    fields). As in the careful path, a record is regular when it has exactly 44
    colons (and does not start with ``#``, unless every line of the block has 44
    colons), and a block whose regular records do not all end in two integers
    (``arid``, ``ar_submission_time``) or include a ``#`` line is read record by
    record. ``None`` is also returned for a block with CR or NUL bytes, a numeric
    field that numpy cannot convert, a field wider than 4096 bytes, or a number
    field of ``unmapped`` (fields not converted, only checked) that is not
    certainly good (see :func:`_check_numbers`). The
    other records are read here too when every one of them can be decided
    (``variants``), else left to the careful path.
    """
    buf = np.frombuffer(data, dtype=np.uint8)
    if not len(buf) or buf[-1] != 10 or (buf == 13).any() or not buf.all():
        return None  # (no newline at the end, CR or NUL bytes)
    newlines = np.flatnonzero(buf == 10)
    colons = np.flatnonzero(buf == 58)
    n = len(newlines)
    line_starts = np.empty(n, dtype=np.int64)
    line_starts[0] = 0
    line_starts[1:] = newlines[:-1] + 1
    uniform = False
    if len(colons) == _COLONS * n:
        grid = colons.reshape(n, _COLONS)
        uniform = bool((grid[:, -1] < newlines).all() and (grid[1:, 0] > newlines[:-1]).all())
    if uniform:
        upto = np.arange(1, n + 1) * _COLONS
        counts = np.full(n, _COLONS)
        regular = np.arange(n)
        reg_starts, reg_ends = line_starts, newlines
        # Every line has 44 colons: a '#' line makes the careful path split every
        # line of the block one by one (below: all lines are "others").
        demote = bool((buf[line_starts] == 35).any())
    else:
        upto = np.searchsorted(colons, newlines)
        counts = np.diff(upto, prepend=0)
        # (as in the careful path, a '#' line is a comment here, not a record)
        regular = np.flatnonzero((counts == _COLONS) & (buf[line_starts] != 35))
        grid = colons[(upto[regular] - _COLONS)[:, None] + np.arange(_COLONS)]
        reg_starts, reg_ends = line_starts[regular], newlines[regular]
        demote = False
    checks = _checks_for(unmapped, numeric) if unmapped else None
    needed = {*numeric, *text, pe_field, *(checks.outline if checks is not None else ())}
    raw = _Bytes(data)
    part = _empty_part(numeric)
    try:
        if len(regular) and not demote:
            bounds = {
                k: _field_bounds(reg_starts, reg_ends, grid, k) for k in {*needed, _ARID, _ARID + 1}
            }
            for k in (_ARID, _ARID + 1):
                start, end = bounds[k]
                widths = end - start
                if not _all_digits(raw.left(start, widths, max(int(widths.max()), 1)), widths):
                    # Some records only look regular: the careful path then splits
                    # every line of the block one by one (below: all are "others").
                    demote = True
                    break
            else:
                part = _convert(
                    raw,
                    data,
                    regular,
                    bounds,
                    numeric,
                    text,
                    pe_field,
                    checks,
                    lambda k: _field_bounds(reg_starts, reg_ends, grid, k),
                )
    except _Decline:
        return None
    if demote:
        part = _empty_part(numeric)
        regular = np.zeros(0, dtype=np.int64)
    is_other = np.ones(n, dtype=bool)
    is_other[regular] = False
    others = np.flatnonzero(is_other)
    variants = None
    leftover = others
    if len(others):
        # Variants: lines with 42 or more colons not starting with '#', split as
        # the careful path splits them.
        o_counts = counts[others]
        candidate = (o_counts >= COLON_MIN_FIELDS - 1) & (buf[line_starts[others]] != 35)
        variant_rows = others[candidate]
        leftover = others[~candidate]
        fences = _Fences(colons, upto, line_starts, newlines)
        try:
            variants = _variants(
                raw,
                data,
                variant_rows,
                o_counts[candidate],
                fences,
                numeric,
                text,
                pe_field,
                checks,
            )
        except _Decline:
            variants = None
    return ColonBlock(part, others.tolist(), variants, leftover.tolist())


# ----------------------------------------------------------------------- JSONL
#
# A block is decoded by msgspec into structs typed as the careful path checks the
# values. msgspec (like every JSON parser) keeps the last value of a key given
# twice, so a block is read here only when its keys are certainly each there
# once: the colons of the block, less those inside strings, are exactly as many
# as the keys the structs hold (every key is followed by one colon, the only
# colons outside strings). Counting the keys the structs hold costs a look at
# every field of every record, except for keys every record has: the structs of
# the first records (every key optional) are counted field by field, and give the
# *shape* of the file (for each key: in every record, in some, in none); the
# blocks are decoded with structs of that shape (a key of every record required,
# a key of none refused), so that only the keys of some records are counted. A
# block that does not fit the shape is decoded and counted the first way, and the
# shape widened (so a file is decoded twice at most a few times).

_NEVER, _SOMETIMES, _ALWAYS = 0, 1, 2
#: For each key of a level, in the level's order: ``(key, mode, shape of the
#: object it holds or None)``; mode ``_ALWAYS``: in every record, ``_SOMETIMES``:
#: in some, ``_NEVER``: in none.
_Shape = tuple[tuple[str, int, "_Shape | None"], ...]


@dataclass(frozen=True)
class _Level:
    """The keys of one object of a record: ``(key, value type, object level)``;
    ``required``: keys a record must have; ``closed``: other keys are refused."""

    name: str
    keys: tuple[tuple[str, Any, _Level | None], ...]
    required: frozenset[str] = frozenset()
    closed: bool = True


_OCS_ORDER = {key: i for i, key in enumerate(JSON_KEYS)}


class _BoundedInt:
    """The type of the integers the mapping does not use (``priority``, ``arid``
    ...): at most 2**53 - 1 in magnitude, not negative but ``priority``, as the
    careful path bounds them (the mapped ones are checked with the rest of the
    values)."""


_BOUNDED_INT = _BoundedInt


def _levels() -> tuple[_Level, _Level]:
    """The record level, and the same with a ``usage`` object open to custom
    containers (``reporting_params usage_patterns``; checked on their own)."""
    number = int | float
    execd = _Level("ExecdUsage", tuple((name, number, None) for name in EUSAGE_FIELDS))
    rusage = _Level("Rusage", tuple((name, number, None) for name in RUSAGE_FIELDS))
    strings = ("qname", "owner", "group", "category", "pe_taskid", "submit_cmd_line")
    others = [
        (key, _BOUNDED_INT if key in JSON_INT_KEYS else str, None)
        for key in JSON_KEYS
        if key not in JSON_MAPPED_KEYS and key != "usage"
    ]
    found = []
    for closed in (True, False):
        usage = _Level(
            "Usage",
            (("rusage", None, rusage), ("eusage", None, execd), ("usage", None, execd)),
            closed=closed,
        )
        keys = [
            *((key, int, None) for key in HEAD_KEYS),
            *((key, str, None) for key in strings),
            ("type", Any, None),
            ("usage", None, usage),
            *others,
        ]
        # in the order OCS writes the keys: msgspec looks a key up from the field
        # after the last one found, so a record in that order finds each at once
        keys.sort(key=lambda item: _OCS_ORDER.get(item[0], len(_OCS_ORDER)))
        found.append(
            _Level(
                "AccountingRecord",
                tuple(keys),
                required=frozenset(("job_number", "submission_time", "start_time", "end_time")),
            )
        )
    return found[0], found[1]


_RECORD, _RECORD_CUSTOM = _levels()


def _struct(level: _Level, shape: _Shape | None) -> Any:
    """A msgspec struct type of ``level``: every key optional (``shape`` None, the
    record's four times and job number excepted), or of that shape: the keys of
    every record required, those of none refused. An absent key is ``UNSET``."""
    import msgspec

    unset = msgspec.UNSET
    modes = {key: (mode, sub) for key, mode, sub in shape} if shape is not None else {}
    fields: list[tuple[Any, ...]] = []
    for key, kind, inner in level.keys:
        mode, sub = modes.get(key, (_SOMETIMES, None))
        if shape is None and key in level.required:
            mode = _ALWAYS
        if mode == _NEVER:
            continue  # (refused: the struct is closed)
        if kind is _BOUNDED_INT:
            top = int(MAX_MAGNITUDE)
            kind = Annotated[int, msgspec.Meta(ge=0 if key in UNSIGNED_KEYS else -top, le=top)]
        value = _struct(inner, sub if shape is not None else None) if inner else kind
        if mode == _ALWAYS:
            fields.append((key, value))
        else:
            fields.append((key, value if kind is Any else value | msgspec.UnsetType, unset))
    closed = level.closed or shape is not None
    return msgspec.defstruct(
        level.name, fields, kw_only=True, gc=False, forbid_unknown_fields=closed
    )


_JSON_DECODERS: dict[bool, Any] = {}


def _json_decoder(use_rss: bool) -> Any:
    """msgspec decoders of accounting records with every key optional (``None``
    without msgspec): the keys the mapping uses, and every other known key typed
    by the rules the careful path checks them by (:func:`.jsonl.key_problem`), so
    that a block it decodes needs no check of those values; a key it does not know
    declines the block. The second decoder skips custom usage containers."""
    if use_rss in _JSON_DECODERS:
        return _JSON_DECODERS[use_rss]
    try:
        import msgspec
    except ImportError:
        _JSON_DECODERS[use_rss] = None
        return None
    decoders = [msgspec.json.Decoder(_struct(level, None)) for level in (_RECORD, _RECORD_CUSTOM)]
    memory = "maxrss" if use_rss else "maxvmem"
    _JSON_DECODERS[use_rss] = (*decoders, msgspec.DecodeError, msgspec.UNSET, memory)
    return _JSON_DECODERS[use_rss]


@lru_cache(maxsize=32)
def _shaped_decoder(shape: _Shape) -> Any:
    """A msgspec decoder of records of ``shape`` (see :func:`_struct`)."""
    import msgspec

    return msgspec.json.Decoder(_struct(_RECORD, shape))


def _census(structs: Sequence[Any], level: _Level, unset: Any) -> tuple[int, _Shape]:
    """The keys the structs (of a level, every key optional) hold, all levels down,
    and their shape."""
    from msgspec.structs import astuple

    if not structs:
        return 0, tuple((key, _NEVER, None) for key, _, _ in level.keys)
    inner = {key: sub for key, _, sub in level.keys}
    names = type(structs[0]).__struct_fields__
    columns = dict(zip(names, zip(*map(astuple, structs), strict=True), strict=True))
    n = len(structs)
    total = 0
    shape = []
    for key, _, _ in level.keys:
        column = columns[key]
        absent = column.count(unset)
        total += n - absent
        mode = _ALWAYS if not absent else _NEVER if absent == n else _SOMETIMES
        sub = None
        if inner[key] is not None and mode != _NEVER:
            present = [v for v in column if v is not unset] if absent else column
            more, sub = _census(present, inner[key], unset)  # type: ignore[arg-type]
            total += more
        shape.append((key, mode, sub))
    return total, tuple(shape)


def _widened(old: _Shape | None, new: _Shape | None) -> _Shape | None:
    """The shape of the records of both shapes."""
    if old is None or new is None:
        return new if old is None else old
    return tuple(
        (key, a if a == b else _SOMETIMES, _widened(x, y))
        for (key, a, x), (_, b, y) in zip(old, new, strict=True)
    )


@lru_cache(maxsize=64)
def _fixed(shape: _Shape) -> tuple[int, bool]:
    """Keys of every record of ``shape`` (all levels down, through keys of every
    record), and whether some keys below are only in some records."""
    keys, varies = 0, False
    for _, mode, sub in shape:
        if mode == _SOMETIMES:
            varies = True
        elif mode == _ALWAYS:
            keys += 1
            if sub is not None:
                more, deeper = _fixed(sub)
                keys += more
                varies |= deeper
    return keys, varies


class _Values:
    """The values of each key of decoded records, gathered once (a key the struct
    type lacks, refused by the shape, is absent from every record)."""

    def __init__(self, records: Sequence[Any], unset: Any) -> None:
        self.records, self.unset = records, unset
        self.got: dict[str, list[Any]] = {}

    def __call__(self, key: str) -> list[Any]:
        found = self.got.get(key)
        if found is None:
            found = self.got[key] = list(map(attrgetter(key), self.records))
        return found


def _shaped_keys(
    structs: Sequence[Any], shape: _Shape, unset: Any, values: _Values | None = None
) -> int:
    """The keys that structs decoded with the shape's decoder hold, all levels down
    (only the keys of some records are looked at; ``values``: those of the record
    level, gathered once)."""
    fixed, varies = _fixed(shape)
    total = len(structs) * fixed
    if not varies:
        return total
    for key, mode, sub in shape:
        if mode == _NEVER or (mode == _ALWAYS and (sub is None or not _fixed(sub)[1])):
            continue  # (counted in fixed)
        found = values(key) if values is not None else list(map(attrgetter(key), structs))
        if mode == _SOMETIMES:
            if sub is None:
                total += len(found) - found.count(unset)
                continue
            found = [v for v in found if v is not unset]
            total += len(found) + _shaped_keys(found, sub, unset)
        else:  # (a key of every record whose object varies: its keys, the rest counted)
            assert sub is not None
            total += _shaped_keys(found, sub, unset) - len(found) * _fixed(sub)[0]
    return total


def _modes(shape: _Shape) -> dict[str, int]:
    """Mode of each key of the record level, and of ``usage.eusage``/``usage.usage``
    keys (as ``usage.eusage.cpu``)."""
    modes = {key: mode for key, mode, _ in shape}
    for key, mode, sub in shape:
        if key == "usage" and sub is not None and mode != _NEVER:
            for name, held, execd in sub:
                modes[f"usage.{name}"] = held
                if execd is not None:
                    modes.update({f"usage.{name}.{k}": m for k, m, _ in execd})
    return modes


def _column(values: _Values, key: str, mode: int, default: Any) -> list[Any]:
    """A key's values, ``default`` where a record lacks it."""
    if mode == _NEVER:
        return [default] * len(values.records)
    found = values(key)
    if mode == _SOMETIMES:
        unset = values.unset
        found = [default if v is unset else v for v in found]
    return found


_KNOWN_CONTAINERS = frozenset(("rusage", "eusage", "usage"))


@lru_cache(maxsize=1)
def _custom_usage_decoders() -> tuple[Any, Any]:
    """msgspec decoders of each record's usage containers (undecoded) and of a list
    of custom containers (objects of numbers or strings)."""
    import msgspec

    containers = msgspec.defstruct(
        "UsageContainers", [("usage", dict[str, msgspec.Raw], None)], gc=False
    )
    custom = msgspec.json.Decoder(list[dict[str, int | float | str]])
    return msgspec.json.Decoder(containers), custom


def _custom_usage(data: bytes | memoryview, error: type[Exception]) -> tuple[int, int] | None:
    """For a block with custom usage containers (named after ``reporting_params
    usage_patterns``; any container but ``rusage``, ``eusage``, ``usage``): the
    keys they add (their names, each container's keys) and the colons of their
    names, keys and strings; ``None`` if one is not an object of numbers or
    strings, as the careful path requires."""
    containers, custom = _custom_usage_decoders()
    try:
        usages = [u for u in map(attrgetter("usage"), containers.decode_lines(data)) if u]
        keys = colons = 0
        for usage in usages:
            names = usage.keys() - _KNOWN_CONTAINERS
            keys += len(names)
            colons += sum(name.count(":") for name in names)
        for name in set(chain.from_iterable(map(dict.keys, usages))) - _KNOWN_CONTAINERS:
            items = custom.decode(b"[" + b",".join(u[name] for u in usages if name in u) + b"]")
            keys += sum(map(len, items))
            for item in items:
                colons += "".join(item).count(":")
                colons += "".join(v for v in item.values() if type(v) is str).count(":")
    except (error, RecursionError):
        return None
    return keys, colons


def _escaped_colon(buf: np.ndarray) -> bool:
    r"""Whether the bytes hold ``\u003a`` (a colon written as an escape)."""
    at = np.flatnonzero(buf == 92)
    at = at[at + 5 < len(buf)]
    return bool(
        (
            (buf[at + 1] == 117)  # u
            & (buf[at + 2] == 48)
            & (buf[at + 3] == 48)
            & (buf[at + 4] == 51)
            & ((buf[at + 5] | 32) == 97)  # a or A
        ).any()
    )


def _keys_once(data: bytes | memoryview, keys: int, texts: Iterable[Any]) -> bool:
    """Whether no object of the block names a key twice: its colons outside strings
    (all its colons, less those of the decoded strings ``texts``, columns of
    strings, looked at until the counts agree) are as many as the ``keys`` the
    decoded records hold. ``False`` if not certain (never for a block of OCS's
    records)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    excess = int(np.count_nonzero(buf == 58)) - keys
    if excess == 0:
        return True
    if excess < 0 or _escaped_colon(buf):
        return False  # (an escaped colon: the decoded strings have more than the text)
    return _settled(excess, texts)


_UNMAPPED_STRINGS = sorted(JSON_STRING_KEYS - JSON_MAPPED_KEYS - {"type"})


def _strings(values: _Values, modes: dict[str, int], gathered: bool) -> Iterator[list[str]]:
    """The string values of the keys the mapping does not use, key by key: those
    already gathered (``gathered``), or the others."""
    unset = values.unset
    for key in [key for key in _UNMAPPED_STRINGS if (key in values.got) == gathered]:
        mode = modes.get(key, _NEVER)
        if mode == _ALWAYS:
            yield values(key)
        elif mode == _SOMETIMES:
            yield [v for v in values(key) if v is not unset]


#: Records of a file's first block whose shape is tried for the whole block.
_SAMPLE_LINES = 200


def _sampled_shape(
    data: bytes | memoryview, decoder: Any, error: type[Exception], unset: Any
) -> _Shape | None:
    """The shape of the first :data:`_SAMPLE_LINES` records of a block (``None``
    for a shorter block, or a sample the decoder refuses): tried for the whole
    block, which is counted field by field only if it does not fit."""
    buf = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(buf[: 1 << 18] == 10)
    if len(ends) <= _SAMPLE_LINES:
        return None
    try:
        records = decoder.decode_lines(data[: int(ends[_SAMPLE_LINES - 1]) + 1])
    except (error, RecursionError):
        return None
    return _census(records, _RECORD, unset)[1]


#: Bytes of a JSONL block decoded at a time (whole lines), when the block fits
#: the file's shape: each slice's structs are read into the columns and freed
#: while they are still in the processor's caches. Decoding a 4 MiB block at once
#: left about 10 MB of small objects (every value of every key is typed, see
#: :func:`_json_decoder`) to be walked and freed from main memory, about a third
#: of the time of a read.
SLICE_BYTES = 1 << 18


def _slice_cuts(data: bytes | memoryview, step: int) -> list[int]:
    """Offsets just past a newline about ``step`` bytes apart, then the end of
    ``data``: the ends of the slices of whole lines."""
    size = len(data)
    cuts: list[int] = []
    at = 0
    while size - at > step:
        high = at + step
        low = max(at, high - (1 << 16))
        found = bytes(data[low:high]).rfind(b"\n")
        if found < 0:  # (lines of over 64 KB: the rest is one slice)
            break
        at = low + found + 1
        cuts.append(at)
    cuts.append(size)
    return cuts


def _escaped_colon_in(data: bytes | memoryview, buf: np.ndarray, cuts: list[int]) -> bool:
    r"""Whether a block (``data``, as ``buf``) holds ``\u003a``, looked for slice by
    slice (slices of whole lines, ending at ``cuts``: an escape is inside a line),
    and only in those with a backslash."""
    start = 0
    for end in cuts:
        if b"\\" in bytes(data[start:end]) and _escaped_colon(buf[start:end]):
            return True
        start = end
    return False


def _settled(excess: int, texts: Iterable[Any]) -> bool:
    """Whether the colons of the strings ``texts`` (columns of strings, or counts),
    looked at until the counts agree, are exactly the ``excess`` colons of a block
    over the keys its records hold."""
    for column in texts:
        excess -= column if isinstance(column, int) else "".join(column).count(":")
        if excess <= 0:
            return excess == 0
    return False


def _sliced_block(
    data: bytes | memoryview,
    lines: int,
    shape: _Shape,
    error: type[Exception],
    unset: Any,
    memory: str,
) -> list[Any] | None:
    """:func:`json_block`'s columns of a block whose records all fit ``shape``,
    decoded a slice of :data:`SLICE_BYTES` at a time, or ``None`` if a slice does
    not fit or a check is not passed (the whole block is then read at once, which
    decides). Each slice is checked as the whole block would be (the keys an
    object names twice: each slice's colons against its keys and strings; an
    escaped colon anywhere in the block declines it as it declines the block), so
    the columns are the whole block's."""
    decoder = _shaped_decoder(shape)
    modes = _modes(shape)
    buf = np.frombuffer(data, dtype=np.uint8)
    check_type = modes["type"] != _NEVER
    all_head = all(modes[key] == _ALWAYS for key in HEAD_KEYS)
    head = np.empty((lines, 8) if all_head else (8, lines), dtype=np.int64)
    head_getter = attrgetter(*HEAD_KEYS)
    name = "eusage" if modes.get("usage.eusage") == _ALWAYS else "usage"
    wanted = (f"usage.{name}.cpu", f"usage.{name}.{memory}")
    needed = ("usage", f"usage.{name}", *wanted)
    usage_getter = attrgetter(*wanted)
    other = "usage.usage" if name == "eusage" else "usage.eusage"
    fast_usage = (
        all(modes.get(key) == _ALWAYS for key in needed)
        and modes.get(other, _NEVER) == _NEVER  # (a record with both is refused)
    )
    used = np.empty((lines, 2), dtype=np.float64)
    texts: list[list[Any]] = [[] for _ in TEXT_KEYS]
    pe_taskid: list[Any] = []
    cmdline: list[Any] = []
    deleted: list[bool] = []
    escaped: bool | None = None  # (an escaped colon in the block, once looked for)
    cuts = _slice_cuts(data, SLICE_BYTES)
    start = row = 0
    try:
        for end in cuts:
            records = decoder.decode_lines(data[start:end])
            k = len(records)
            if row + k > lines:
                return None
            values = _Values(records, unset)
            keys = _shaped_keys(records, shape, unset, values)
            if check_type and set(map(attrgetter("type"), records)) - {unset, "acct"}:
                return None
            if all_head:
                head[row : row + k] = np.fromiter(
                    chain.from_iterable(map(head_getter, records)), np.int64, 8 * k
                ).reshape(k, 8)
            else:
                for j, (key, default) in enumerate(zip(HEAD_KEYS, _HEAD_DEFAULTS, strict=True)):
                    column = _column(values, key, modes[key], default)
                    head[j, row : row + k] = np.fromiter(column, np.int64, k)
            if fast_usage:
                pairs: Any = chain.from_iterable(map(usage_getter, records))
            else:
                pairs = chain.from_iterable(_execd_values(r, memory, unset) for r in records)
            used[row : row + k] = np.fromiter(pairs, np.float64, 2 * k).reshape(k, 2)
            del pairs  # (it holds the structs)
            slice_texts = [_column(values, key, modes[key], "") for key in TEXT_KEYS]
            slice_pe = _column(values, "pe_taskid", modes["pe_taskid"], "")
            slice_cmdline = _column(values, "submit_cmd_line", modes["submit_cmd_line"], "")
            excess = int(np.count_nonzero(buf[start:end] == 58)) - keys
            if excess:
                if escaped is None:
                    escaped = _escaped_colon_in(data, buf, cuts)
                if excess < 0 or escaped:
                    return None
                candidates = chain(  # (in the order json_block looks at them)
                    (slice_texts[3], slice_cmdline),
                    _strings(values, modes, gathered=True),
                    (*slice_texts[:3], slice_pe),
                    _strings(values, modes, gathered=False),
                )
                if not _settled(excess, candidates):
                    return None
                del candidates  # (it holds the structs)
            for column, got in zip(texts, slice_texts, strict=True):
                column.extend(got)
            pe_taskid.extend(slice_pe)
            cmdline.extend(slice_cmdline)
            if modes["deleted_by"] != _NEVER:
                deleted.extend(map(is_not, values("deleted_by"), repeat(unset)))
            del records, values
            row += k
            start = end
    except (error, RecursionError, OverflowError, AttributeError, TypeError, _BothUsage):
        return None  # (the whole block at once says what to do)
    if row != lines:  # blank lines
        return None
    columns: list[Any] = list((head.T if all_head else head).astype(np.float64))
    if _beyond(columns):
        return None
    columns.extend(used.T)
    columns.extend(texts)
    columns.append(pe_taskid)
    columns.append([False] * lines if modes["deleted_by"] == _NEVER else deleted)
    columns.append(cmdline)
    return columns


def json_block(
    data: bytes | memoryview,
    lines: int,
    use_rss: bool,
    no_cr: bool = False,
    learned: dict[str, Any] | None = None,
) -> list[list[Any]] | None:
    """The reader's value columns for a JSONL block of ``lines`` accounting
    records, or ``None`` when the block must be read record by record (no msgspec,
    a line that is not a JSON object with the expected shape, a value of a type the
    careful path would report, a key it does not know or that an object names
    twice, a comment or short line, a reporting record other than ``acct``, CR
    bytes).

    Columns (as the careful path builds them): the eight integers, CPU, memory,
    ``qname``, ``owner``, ``group``, ``category``, ``pe_taskid``, whether
    ``deleted_by`` is present, ``submit_cmd_line``. Every value has the type the
    careful path checks for (integers, numbers, strings). ``no_cr``: the caller
    has made sure the block has no CR byte. ``learned``: kept from block to block
    of a file (the shape of its records: see the notes above), or ``None``.
    """
    found = _json_decoder(use_rss)
    if found is None or (not no_cr and (np.frombuffer(data, dtype=np.uint8) == 13).any()):
        return None
    decoder, with_custom, error, unset, memory = found
    known = learned.get("shape") if learned is not None else None
    shape = known if known is not None else _sampled_shape(data, decoder, error, unset)
    if shape is not None:  # (a slice at a time: see SLICE_BYTES)
        sliced = _sliced_block(data, lines, shape, error, unset, memory)
        if sliced is not None:
            if learned is not None and known is None:
                learned["shape"] = shape
            return sliced
    # the whole block at once: a block that does not fit the shape (decoded and
    # counted field by field), or that the slices left undecided (this decides)
    records = None
    added = (0, 0)  # keys and colons of custom usage containers
    if shape is not None:
        try:
            records = _shaped_decoder(shape).decode_lines(data)
        except (error, RecursionError):
            records = None
        else:
            values = _Values(records, unset)
            keys = _shaped_keys(records, shape, unset, values)
            if learned is not None and known is None:
                learned["shape"] = shape
    if records is None:
        try:
            records = decoder.decode_lines(data)
            level = _RECORD
        except (error, RecursionError):  # (too deep a nesting: the careful path says where)
            # custom usage containers (reporting_params usage_patterns)? Only those
            # may make the second decoder succeed; they are then checked on their own.
            try:
                records = with_custom.decode_lines(data)
                level = _RECORD_CUSTOM
            except (error, RecursionError):
                return None
            custom = _custom_usage(data, error)
            if custom is None:
                return None
            added = custom
        keys, found_shape = _census(records, level, unset)
        keys += added[0]
        values = _Values(records, unset)
        if learned is not None:
            learned["shape"] = _widened(known, found_shape)
        shape = found_shape
    n = len(records)
    if n != lines:  # blank lines
        return None
    assert shape is not None
    modes = _modes(shape)
    if modes["type"] != _NEVER:
        try:
            kinds = set(map(attrgetter("type"), records))
        except TypeError:  # an unhashable type
            return None
        if kinds - {unset, "acct"}:
            return None
    try:
        if all(modes[key] == _ALWAYS for key in HEAD_KEYS):
            head = np.fromiter(
                chain.from_iterable(map(attrgetter(*HEAD_KEYS), records)), np.int64, 8 * n
            ).reshape(n, 8)
            columns: list[Any] = list(head.T.astype(np.float64))
        else:
            columns = [
                np.fromiter(_column(values, key, modes[key], default), np.int64, n)
                for key, default in zip(HEAD_KEYS, _HEAD_DEFAULTS, strict=True)
            ]
            columns = [column.astype(np.float64) for column in columns]
    except OverflowError:  # beyond 64 bits: JSON parsers differ, let the careful path say
        return None
    if _beyond(columns):
        return None
    try:
        # the execd container of every record, with both values: eusage, else usage
        name = "eusage" if modes.get("usage.eusage") == _ALWAYS else "usage"
        wanted = (f"usage.{name}.cpu", f"usage.{name}.{memory}")
        needed = ("usage", f"usage.{name}", *wanted)
        if any(modes.get(key) != _ALWAYS for key in needed):
            raise AttributeError  # (some record lacks one)
        if modes.get("usage.usage" if name == "eusage" else "usage.eusage", _NEVER) != _NEVER:
            raise AttributeError  # (a record may have both: it is refused)
        usage: Any = chain.from_iterable(map(attrgetter(*wanted), records))
        columns.extend(np.fromiter(usage, np.float64, 2 * n).reshape(n, 2).T)
    except AttributeError:  # no usage, the older usage.usage container, absent values
        usage = chain.from_iterable(_execd_values(r, memory, unset) for r in records)
        try:
            columns.extend(np.fromiter(usage, np.float64, 2 * n).reshape(n, 2).T)
        except (OverflowError, _BothUsage):
            return None
    except OverflowError:  # an integer beyond the float range
        return None
    texts = [_column(values, key, modes[key], "") for key in TEXT_KEYS]
    pe_taskid = _column(values, "pe_taskid", modes["pe_taskid"], "")
    cmdline = _column(values, "submit_cmd_line", modes["submit_cmd_line"], "")
    # (strings with colons first: category, command line)
    candidates = chain(  # (first those most likely to hold colons, or gathered already)
        (texts[3], cmdline, added[1]),
        _strings(values, modes, gathered=True),
        (*texts[:3], pe_taskid),
        _strings(values, modes, gathered=False),
    )
    if not _keys_once(data, keys, candidates):
        return None
    columns.extend(texts)
    columns.append(pe_taskid)
    if modes["deleted_by"] == _NEVER:
        columns.append([False] * n)
    else:
        columns.append(list(map(is_not, values("deleted_by"), repeat(unset))))
    columns.append(cmdline)
    return columns


_HEAD_DEFAULTS = (None, 0, None, None, None, 0, 0, 1)


def _beyond(columns: list[Any]) -> bool:
    """Whether an integer of the eight head columns is beyond 2**53 - 1 in
    magnitude (the careful path quotes it exactly, as the record has it)."""
    return any(bool((np.abs(column) > MAX_MAGNITUDE).any()) for column in columns[:8])


_NAN = float("nan")


class _BothUsage(Exception):
    """A record with both ``usage.eusage`` and ``usage.usage`` (the careful path
    refuses it)."""


def _execd_values(record: Any, memory: str, unset: Any) -> tuple[float, float]:
    """CPU and memory of a record's execd usage container (``usage.eusage``, or
    ``usage.usage``; NaN where absent); :class:`_BothUsage` if it has both."""
    usage = getattr(record, "usage", unset)
    if usage is unset:
        return _NAN, _NAN
    execd = getattr(usage, "eusage", unset)
    older = getattr(usage, "usage", unset)
    if execd is unset:
        execd = older
        if execd is unset:
            return _NAN, _NAN
    elif older is not unset:
        raise _BothUsage
    cpu = getattr(execd, "cpu", unset)
    used = getattr(execd, memory, unset)
    return (_NAN if cpu is unset else cpu), (_NAN if used is unset else used)
