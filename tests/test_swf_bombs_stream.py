"""Decompression bombs that lie about their size: the whole-file read of an SWF
file never holds more than :data:`~schedlab.formats.swf.reader.STREAM_THRESHOLD`
bytes of text, whatever the compressed file claims. bz2 and xz record no size (the
reader guesses ten times the compressed size) and gzip's trailer records the last
member's size modulo 2**32, so a small file could be decompressed whole into
gigabytes. Past the threshold the read hands over to the streaming read, which
gives the same jobs, header, findings and errors (line numbers included) as
reading the plain file.

The threshold is lowered to a few MB here so that bombs stay quick to build."""

from __future__ import annotations

import bz2
import gzip
import lzma
import random
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from schedlab.errors import FormatError
from schedlab.formats.swf import parse, reader
from schedlab.formats.swf.reader import read_swf
from schedlab.model import SWF_FIELDS, Workload
from schedlab.testing import run_cli

HEADER = "; Version: 2.2\n; Computer: bomb\n; MaxProcs: 8\n; MaxNodes: 8\n"
#: Text of a bomb: job lines padded with blanks (valid SWF, some 8 KB a line).
BOMB_JOBS = 4000
PAD = " " * 8000
THRESHOLD = 2 << 20

COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "bz2": bz2.compress,
    "xz": lzma.compress,
    "gz": lambda data: gzip.compress(data, compresslevel=9, mtime=0),
}


def bomb_text(bad_line: int | None = None, first: int = 1) -> bytes:
    """The header and :data:`BOMB_JOBS` valid job lines of 8 KB each (some 32 MB),
    numbered from ``first``, with line ``bad_line`` (1-based, in the file) holding
    a bad field when given."""
    lines = [HEADER]
    line = HEADER.count("\n") + 1
    for i in range(first, first + BOMB_JOBS):
        run = "x" if line + i - first == bad_line else str(100 + i % 7)
        lines.append(f"{i}{PAD}{i * 10} 10 {run} 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n")
    return "".join(lines).encode()


def multi_member_gzip(text: bytes) -> bytes:
    """``text`` as two gzip members, the last one holding only the last line: the
    trailer then records the size of that line, a few bytes."""
    cut = text.rfind(b"\n", 0, len(text) - 1) + 1
    return COMPRESS["gz"](text[:cut]) + COMPRESS["gz"](text[cut:])


def assert_same(got: Workload, expected: Workload) -> None:
    """Same jobs (every field, every extra), header and findings."""
    a, b = got.to_arrays(), expected.to_arrays()
    assert len(a) == len(b) > 0
    for name in SWF_FIELDS:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert [j.extras for j in got] == [j.extras for j in expected]
    assert got.header == expected.header
    for key in ("findings", "records", "skipped", "rejects", "partial_records"):
        assert got.meta[key] == expected.meta[key], key


def peak_of_a_pass(path: Path, **options: object) -> tuple[int, Workload]:
    """tracemalloc's peak while reading ``path`` and iterating it once (chunk by
    chunk, nothing kept), and the workload read."""
    tracemalloc.start()
    try:
        workload = read_swf(path, **options)  # type: ignore[arg-type]
        jobs = sum(len(chunk) for chunk in workload.iter_chunks())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert jobs == BOMB_JOBS
    return peak, workload


@pytest.fixture()
def low_threshold(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(reader, "STREAM_THRESHOLD", THRESHOLD)
    return THRESHOLD


@pytest.mark.parametrize("kind", ["bz2", "xz", "gz-members"])
def test_a_bomb_that_claims_a_small_size_is_read_in_bounded_memory(
    tmp_path: Path, low_threshold: int, kind: str
) -> None:
    """10 to 70 KB compressed, 32 MB of text: the estimate (ten times the size, or
    the gzip trailer's few bytes) says whole-file read; the text passes the
    threshold while decompressed and the read goes on as a stream, holding some
    threshold's worth of text, not the file's."""
    text = bomb_text()
    plain = tmp_path / "bomb.swf"
    plain.write_bytes(text)
    expected = read_swf(plain, stream=False)
    path = tmp_path / f"bomb.swf.{kind.split('-')[0]}"
    path.write_bytes(multi_member_gzip(text) if kind == "gz-members" else COMPRESS[kind](text))
    assert reader._estimated_text_size(str(path)) <= low_threshold < len(text) // 10
    peak, workload = peak_of_a_pass(path, chunk_bytes=1 << 20)
    assert workload.meta["streaming"]
    # The threshold's text, a chunk and the decompressor (xz's dictionary: 8 MiB).
    assert peak < (16 << 20 if kind == "xz" else 8 << 20) and len(text) > 30 << 20
    assert_same(workload, expected)
    assert_same(read_swf(path, chunk_bytes=1 << 20), expected)  # a second pass too


def dense_jobs(count: int, first: int) -> str:
    """``count`` job lines numbered from ``first`` with random 15-digit values in
    fields without a meaning for the checks: text that compresses poorly."""
    rng = random.Random(first)

    def big() -> int:
        return rng.randrange(10**14, 10**15)

    return "".join(
        f"{i} {i * 10} 10 {rng.randrange(1, 10**6)} 4 -1 {big()} 4 200 {big()} 1 {big()} "
        f"{big()} {big()} 1 -1 -1 -1\n"
        for i in range(first, first + count)
    )


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("where", ["head", "tail"])
def test_a_gzip_file_whose_size_wrapped_around_is_read_in_bounded_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int, where: str
) -> None:
    """One gzip member of more than 4 GiB records its size modulo 2**32, which can
    be small (too slow to build here: the estimate is made to say so). The
    pipelined read (a forked child or a thread parses the first part of the text
    while the rest is decompressed) stops in that first part (``head``: the bomb
    is at the start) or in the rest (``tail``: 6 MB of ordinary jobs, then the
    bomb), and the read starts over as a stream."""
    if where == "head":
        text, limit = bomb_text(), THRESHOLD
    else:
        text = (HEADER + dense_jobs(48000, 1)).encode() + bomb_text(first=48001)[len(HEADER) :]
        limit = 6 << 20
    path = tmp_path / "wrapped.swf.gz"
    path.write_bytes(COMPRESS["gz"](text))
    expected = read_swf(path, stream=False)
    monkeypatch.setattr(reader, "_estimated_text_size", lambda _: 1000)
    monkeypatch.setattr(reader, "STREAM_THRESHOLD", limit)
    calls: list[str] = []
    for name in ("parse_split", "parse_split_threaded", "_gunzip"):
        module = reader if name == "_gunzip" else parse
        real = getattr(module, name)
        monkeypatch.setattr(module, name, spy(real, name, calls))
    tracemalloc.start()
    try:
        workload = read_swf(path, workers=workers, chunk_bytes=1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert workload.meta["streaming"]
    # Stopped by the pipelined read itself: before parsing, or in the rest while
    # the first part was parsed.
    pipelined = "parse_split" if workers == 2 else "parse_split_threaded"
    assert calls == ([] if where == "head" else [pipelined])
    # The limit's text (twice: zlib joins its output) and the first part's rows
    # (the streaming read's own memory is measured above).
    assert peak < 2 * limit + (8 << 20) and len(text) > 30 << 20
    assert_same(workload, expected)


def spy(real: Callable, name: str, calls: list[str]) -> Callable:
    def call(*args: object, **kwargs: object) -> object:
        calls.append(name)
        return real(*args, **kwargs)

    return call


@pytest.mark.parametrize("kind", ["bz2", "xz", "gz-members"])
@pytest.mark.parametrize("lenient", [False, True])
def test_a_bad_line_past_the_hand_over_is_named_as_in_the_plain_file(
    capsys: pytest.CaptureFixture, tmp_path: Path, low_threshold: int, kind: str, lenient: bool
) -> None:
    """Line numbers go on across the hand-over: strict, the same one-line error
    (file, line, field) as the plain file's, exit 2 on the command line; lenient,
    the same skipped line."""
    bad = 3000  # some 24 MB into the text, far past the threshold
    text = bomb_text(bad_line=bad)
    plain = tmp_path / "bad.swf"
    plain.write_bytes(text)
    path = tmp_path / f"bad.swf.{kind.split('-')[0]}"
    path.write_bytes(multi_member_gzip(text) if kind == "gz-members" else COMPRESS[kind](text))
    if lenient:
        expected = read_swf(plain, stream=False, lenient=True)
        got = read_swf(path, lenient=True)
        assert got.meta["streaming"]
        assert_same(got, expected)
        assert [line for line, _ in got.meta["rejects"]] == [bad]
        return
    with pytest.raises(FormatError) as caught:
        read_swf(plain, stream=False)
    want = caught.value
    workload = read_swf(path)
    assert workload.meta["streaming"]
    with pytest.raises(FormatError) as caught:
        workload.to_arrays()
    got = caught.value
    assert (got.line, got.field, got.message) == (want.line, want.field, want.message)
    assert (got.line, got.field) == (bad, "4 (run_time)")
    assert got.source == str(path)
    code, _, err = run_cli(capsys, "convert", str(path), str(tmp_path / "out.swf"))
    assert code == 2
    assert err == f"schedlab: error: {path}:{bad}: field 4 (run_time): expected a number, got 'x'\n"


@pytest.mark.realdata
@pytest.mark.parametrize("kind", ["bz2", "xz", "gz-members"])
@pytest.mark.parametrize("chunk_bytes", [1 << 16, 1 << 20, reader.CHUNK_BYTES])
def test_kth_handed_over_mid_file_reads_as_the_whole_file(
    swf_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, chunk_bytes: int
) -> None:
    """The real KTH-SP2 log (2.6 MB of text, 28,476 jobs, findings), compressed
    here, with the threshold at 1 MB and a size estimate that says it fits: the
    read hands over mid-file and gives exactly what the whole-file read of the
    plain text gives, on the first pass (which goes on from the text already
    decompressed) and on the next (which re-reads the file)."""
    text = gzip.decompress((swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz").read_bytes())
    plain = tmp_path / "kth.swf"
    plain.write_bytes(text)
    expected = read_swf(plain, stream=False)
    assert expected.meta["findings"]  # compared too
    path = tmp_path / f"kth.swf.{kind.split('-')[0]}"
    path.write_bytes(multi_member_gzip(text) if kind == "gz-members" else COMPRESS[kind](text))
    monkeypatch.setattr(reader, "STREAM_THRESHOLD", 1 << 20)
    monkeypatch.setattr(reader, "_estimated_text_size", lambda _: 1000)
    opened: list[str] = []
    monkeypatch.setattr(reader, "open_binary", spy(reader.open_binary, "open", opened))
    workload = read_swf(path, chunk_bytes=chunk_bytes)
    assert workload.meta["streaming"]
    first = workload.to_arrays()
    # bz2, xz: decompressed once, the first pass going on from the whole-file read;
    # gzip: started over (the header, then the first pass).
    assert len(opened) == (2 if kind == "gz-members" else 1)
    again = read_swf(path, chunk_bytes=chunk_bytes)
    assert len(list(again.iter_chunks())) >= 1  # a first pass, discarded
    assert_same(workload, expected)
    assert_same(again, expected)  # its second pass re-reads the file
    assert len(first) == 28476


@pytest.mark.realdata
@pytest.mark.parametrize("kind", ["bz2", "xz"])
@pytest.mark.parametrize("cut", [0, 1])
def test_a_crlf_file_handed_over_between_cr_and_lf_reads_as_the_whole_file(
    swf_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, cut: int
) -> None:
    """KTH-SP2 with a byte-order mark and CRLF line ends, the text decompressed
    before the hand-over ending just before or just after a CR: the streaming read
    that goes on from it still makes one line end of each CRLF pair."""
    text = gzip.decompress((swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz").read_bytes())
    text = b"\xef\xbb\xbf" + text.replace(b"\n", b"\r\n")
    plain = tmp_path / "crlf.swf"
    plain.write_bytes(text)
    expected = read_swf(plain, stream=False)
    path = tmp_path / f"crlf.swf.{kind}"
    path.write_bytes(COMPRESS[kind](text))
    monkeypatch.setattr(reader, "STREAM_THRESHOLD", text.index(b"\r\n", 1 << 20) + cut)
    monkeypatch.setattr(reader, "_estimated_text_size", lambda _: 1000)
    workload = read_swf(path, chunk_bytes=1 << 16)
    assert workload.meta["streaming"]
    assert_same(workload, expected)


@pytest.mark.parametrize("kind", ["bz2", "xz", "gz-members"])
def test_the_hand_over_happens_past_the_threshold_to_the_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Text of exactly the threshold is read whole, as before; one byte more is
    streamed, with the same result."""
    text = bomb_text()
    text = text[: text.index(b"\n", 200_000) + 1]  # 25 lines, 200 KB
    path = tmp_path / f"edge.swf.{kind.split('-')[0]}"
    path.write_bytes(multi_member_gzip(text) if kind == "gz-members" else COMPRESS[kind](text))
    monkeypatch.setattr(reader, "STREAM_THRESHOLD", len(text))
    assert reader._estimated_text_size(str(path)) <= len(text)
    whole = read_swf(path)
    assert not whole.is_streaming and "streaming" not in whole.meta
    monkeypatch.setattr(reader, "STREAM_THRESHOLD", len(text) - 1)
    streamed = read_swf(path)
    assert streamed.meta["streaming"]
    assert_same(streamed, whole)
