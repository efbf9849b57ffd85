"""SWF blocks with fractional numbers: the columns that show none at the block's
start are parsed as integers (``parse._mixed_columns``, about four times faster),
and the values are the same bits as parsing every column as float64; anything the
integer parse cannot take falls back to the float64 parse."""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import numpy as np
import pytest
from schedlab.formats.swf import parse
from schedlab.formats.swf.reader import read_swf

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "swf"


def lines(n: int, fraction: str = "489.00") -> list[str]:
    rng = np.random.default_rng(3)
    out = []
    for i in range(1, n + 1):
        procs = int(rng.integers(1, 64))
        cpu = fraction if i % 2 else "-1"
        out.append(
            f"{i} {i * 10} {int(rng.integers(0, 99))} {int(rng.integers(-1, 5000))} {procs} "
            f"{cpu} -1 {procs} 6000 -1 1 {int(rng.integers(1, 20))} 1 -1 1 -1 -1 -1\n"
        )
    return out


def as_float64(data: bytes) -> np.ndarray | None:
    """What the parse gave before: every column as float64, same checks."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = np.loadtxt(io.BytesIO(data), dtype=np.float64, comments=None, ndmin=2)
        except ValueError:
            return None
    if out.shape[1] != parse.NFIELDS or not np.isfinite(out).all():
        return None
    return out if parse._in_range(out) else None


def same_bits(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and bool((a.view(np.int64) == b.view(np.int64)).all())


def test_mixed_columns_give_the_float64_bits():
    data = "".join(lines(3000)).encode()
    mixed = parse._mixed_columns(data, 0, len(data), None)
    assert mixed is not None  # the fast path was taken
    assert same_bits(mixed, as_float64(data))
    assert same_bits(parse._loadtxt(data), as_float64(data))


@pytest.mark.parametrize("big", ["2147483648", "9007199254740993", "9223372036854775807"])
def test_large_integers_as_float64_reads_them(big):
    # Past int32, at 2**53 + 1 (rounded), at int64's top: within the validation
    # bounds or not, the same answer as the float64 parse.
    row = f"1 0 0 {big} 4 0.5 -1 4 {big} -1 1 1 1 -1 1 -1 -1 -1\n"
    data = (row * 10).encode()
    assert same_bits(parse._loadtxt(data), as_float64(data))


@pytest.mark.parametrize(
    "late",
    [
        "5 50 0 10 4 1 -1 4 6000 -1 1 1 1 -1 1 -1 -1 2.5\n",  # fraction in an int column
        "5 50 0 10 4 1 -1 4 6000 -1 1 1 1 -1 1 -1 -1 1e3\n",  # exponent there
        "5 50 0 10 4 1 -1 4 6000 -1 1 1 1 -1 1 -1 -1\n",  # 17 fields
        "5 50 0 10 4 1 -1 4 6000 -1 1 1 1 -1 1 -1 -1 nan\n",  # not finite
        "5 50 0 10 4 1 -1 4 6000 -1 1 1 1 -1 1 -1 -1 99999999999999999999\n",  # > int64
        "5 50 0 -0 4 1 -1 4 6000 -1 1 1 1 -1 1 -1 -1 -1\n",  # negative zero
    ],
)
def test_what_the_integer_parse_cannot_take_falls_back(late):
    # Past the sample the integer columns are chosen from.
    head = "".join(lines(4000))
    assert len(head) > parse.MIXED_SAMPLE
    data = (head + late).encode()
    assert parse._mixed_columns(data, 0, len(data), None) is None
    assert same_bits(parse._loadtxt(data), as_float64(data))


def test_a_block_in_place_and_a_middle_block():
    text = "".join(lines(2000)).encode()
    cut = text.index(b"\n", len(text) // 2) + 1
    stream = io.BytesIO(text)
    tail = parse._mixed_columns(text, cut, len(text), stream)
    middle = parse._mixed_columns(text, 0, cut, None)
    assert same_bits(tail, as_float64(text[cut:]))
    assert same_bits(middle, as_float64(text[:cut]))


@pytest.mark.realdata
def test_lanl_reads_the_same_bits_as_before():
    path = DATA / "LANL-CM5-1994-4.1-cln.swf.gz"
    if not path.exists():
        pytest.skip("no shared data")
    fast = read_swf(str(path)).to_arrays()
    parse_mixed = parse._mixed_columns
    try:
        parse._mixed_columns = lambda *a: None  # every column as float64, as before
        slow = read_swf(str(path)).to_arrays()
    finally:
        parse._mixed_columns = parse_mixed
    for name in parse.SWF_FIELDS:
        assert same_bits(np.asarray(fast[name]), np.asarray(slow[name])), name
