"""The pipelined gzip read (decompressing the rest of the file while a forked child
parses the first part) gives exactly what the one-process read gives."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import numpy as np
import pytest
from schedlab.errors import FormatError
from schedlab.formats.swf import parse
from schedlab.formats.swf.reader import read_swf

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs fork")

HEADER = "; Version: 2.2\n; MaxJobs: 4000\n; MaxRecords: 4000\n; MaxProcs: 64\n"


def job_lines(n: int) -> list[str]:
    rng = np.random.default_rng(7)
    out = []
    for i in range(1, n + 1):
        procs = int(rng.integers(1, 64))
        run = int(rng.integers(-1, 5000))
        out.append(
            f"{i} {i * 10} {int(rng.integers(0, 99))} {run} {procs} -1 -1 {procs} 6000 -1 1 "
            f"{int(rng.integers(1, 20))} 1 -1 1 -1 -1 -1\n"
        )
    return out


def write_gz(tmp_path: Path, text: str, members: int = 1) -> Path:
    path = tmp_path / "t.swf.gz"
    data = text.encode()
    step = -(-len(data) // members)
    path.write_bytes(
        b"".join(gzip.compress(data[i : i + step], mtime=0) for i in range(0, len(data), step))
    )
    return path


def assert_same(path: Path, **options) -> None:
    one = read_swf(path, workers=1, **options)
    two = read_swf(path, workers=2, **options)
    a, b = one.to_arrays(), two.to_arrays()
    np.testing.assert_array_equal(a.to_matrix(), b.to_matrix())
    assert a.extras == b.extras
    assert one.header == two.header
    for key in ("findings", "records", "skipped", "rejects", "partial_records"):
        assert one.meta[key] == two.meta[key], key


def test_clean_file_takes_the_pipelined_path(tmp_path: Path, monkeypatch) -> None:
    calls = []
    split = parse.parse_split
    monkeypatch.setattr(parse, "parse_split", lambda *a, **k: calls.append(a[2]) or split(*a, **k))
    assert_same(write_gz(tmp_path, HEADER + "".join(job_lines(4000))))
    assert len(calls) == 1  # once, by the two-process read


def test_bad_lines_in_both_parts_lenient(tmp_path: Path) -> None:
    lines = job_lines(4000)
    lines[100] = "101 1 2 3\n"
    lines[3900] = "3901 x 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1\n"
    path = write_gz(tmp_path, HEADER + "".join(lines))
    assert_same(path, lenient=True)
    assert read_swf(path, workers=2, lenient=True).meta["skipped"] == 2
    with pytest.raises(FormatError, match=r":105: found 4 fields"):
        read_swf(path, workers=2)


def test_blank_and_comment_lines_and_several_members(tmp_path: Path) -> None:
    lines = job_lines(4000)
    lines[50] = "; a late comment\n" + lines[50]
    lines[3000] = "\n" + lines[3000]
    assert_same(write_gz(tmp_path, HEADER + "".join(lines), members=3))


def test_truncated_gzip_names_the_file(tmp_path: Path) -> None:
    path = write_gz(tmp_path, HEADER + "".join(job_lines(4000)))
    path.write_bytes(path.read_bytes()[:-100])
    for workers in (1, 2):
        with pytest.raises(FormatError, match="not a valid gzip file"):
            read_swf(path, workers=workers)


def test_split_parse_equals_whole() -> None:
    data = "".join(job_lines(300)).encode()
    cut = data.index(b"\n", len(data) // 3) + 1
    block = parse.parse_split(data, 0, cut, lambda: [(data, cut)], 1, "t")
    whole = parse.parse_block(data, 1, "t")
    np.testing.assert_array_equal(block.values, whole.values)
    np.testing.assert_array_equal(block.lines, whole.lines)


def test_one_process_pipeline_with_a_thread(tmp_path: Path, monkeypatch) -> None:
    calls = []
    split = parse.parse_split_threaded
    monkeypatch.setattr(
        parse, "parse_split_threaded", lambda *a, **k: calls.append(1) or split(*a, **k)
    )
    monkeypatch.setattr(parse, "PARALLEL_THRESHOLD", 1)
    monkeypatch.setattr(parse, "PIECE_BYTES", 5000)  # the first part in many pieces
    lines = job_lines(4000)
    lines[30] = "31 1 2 3\n"
    path = write_gz(tmp_path, HEADER + "".join(lines))
    plain = tmp_path / "t.swf"
    plain.write_bytes(gzip.decompress(path.read_bytes()))
    for lenient in (False, True):
        if not lenient:
            with pytest.raises(FormatError, match=r":35: found 4 fields"):
                read_swf(path, workers=1)
            continue
        a, b = read_swf(path, workers=1, lenient=True), read_swf(plain, lenient=True)
        np.testing.assert_array_equal(a.to_arrays().to_matrix(), b.to_arrays().to_matrix())
        assert a.meta["findings"] == b.meta["findings"]
        assert a.meta["rejects"] == b.meta["rejects"]
    assert calls == [1, 1]
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(FormatError, match="not a valid gzip file"):
        read_swf(path, workers=1)


def test_fast_conversion_in_cache_sized_pieces_equals_precise_path() -> None:
    data = "".join(job_lines(2 * parse.FILL_ROWS + 17)).encode()
    fast = parse.parse_block_fast(data, 1)
    slow = parse.parse_block_slow(data, 1, "t")
    assert fast is not None
    np.testing.assert_array_equal(fast.values, slow.values)
    assert np.isnan(fast.values).any()


def test_split_parse_of_the_shortest_lines_fits_the_child_room() -> None:
    data = ("1 " * 17 + "1\n").encode() * 999 + ("1 " * 17 + "-1\n").encode()
    cut = data.index(b"\n", len(data) // 2) + 1
    block = parse.parse_split(data, 0, cut, lambda: [(data, cut)], 1, "t")
    whole = parse.parse_block_slow(data, 1, "t")
    np.testing.assert_array_equal(block.values, whole.values)
    np.testing.assert_array_equal(block.lines, np.arange(1, 1001))


def test_values_beyond_int32_are_read_exactly() -> None:
    big = ("1 " * 17 + "1\n") * 3 + "5 " * 6 + "4294967296 " + "2 " * 10 + "-1\n"
    block = parse.parse_block_fast(big.encode(), 1)
    assert block is not None
    assert block.values[6, 3] == 4294967296 and np.isnan(block.values[17, 3])
    np.testing.assert_array_equal(block.values, parse.parse_block_slow(big.encode(), 1, "t").values)
