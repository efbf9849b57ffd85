"""More hostile SWF input: bombs of header, blank or comment lines; gzip files of
many members; paths that are pipes; xz files that ask for a huge dictionary.
Each takes bounded memory and time, and its errors are one line naming the file
(and the line where there is one)."""

from __future__ import annotations

import gzip
import lzma
import os
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from schedlab.errors import FormatError
from schedlab.formats.swf import parse, reader
from schedlab.formats.swf.header import MAX_HEADER_LINES
from schedlab.formats.swf.reader import read_swf
from schedlab.model import SWF_FIELDS, Workload
from schedlab.testing import run_cli

HEADER = "; Version: 2.2\n; Computer: bomb\n; MaxProcs: 8\n"


def job(i: int) -> str:
    return f"{i} {i * 10} 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"


def jobs(first: int, count: int) -> str:
    return "".join(job(i) for i in range(first, first + count))


def both_reads(path: Path, **options: Any) -> list[Workload]:
    """The whole-file read and the streaming read (small chunks), iterated."""
    out = [read_swf(path, **options), read_swf(path, stream=True, chunk_bytes=1 << 16, **options)]
    for workload in out:
        workload.to_arrays()  # a streaming read's findings are complete after a pass
    return out


def assert_same(got: Workload, expected: Workload) -> None:
    a, b = got.to_arrays(), expected.to_arrays()
    assert len(a) == len(b)
    for name in SWF_FIELDS:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert [j.extras for j in got] == [j.extras for j in expected]
    assert got.header == expected.header
    for key in ("findings", "records", "skipped", "rejects"):
        assert got.meta[key] == expected.meta[key], key


def traced_peak(action: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        action()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


# --------------------------------------------------------------------------- header


@pytest.mark.parametrize("stream", [None, True])
def test_a_header_of_too_many_lines_is_an_error_naming_the_first_line_past_the_cap(
    tmp_path: Path, stream: bool | None
) -> None:
    path = tmp_path / "h.swf"
    path.write_text(HEADER + "; Note: x\n" * (2 * MAX_HEADER_LINES) + jobs(1, 3))
    with pytest.raises(FormatError) as info:
        read_swf(path, stream=stream)
    assert info.value.line == MAX_HEADER_LINES + 1
    assert str(info.value).startswith(f"{path}:{MAX_HEADER_LINES + 1}: a header longer than")
    assert "\n" not in str(info.value)


def test_a_header_of_too_many_bytes_is_an_error_too(tmp_path: Path) -> None:
    path = tmp_path / "h.swf"
    path.write_text(HEADER + ("; Note: " + "x" * 100_000 + "\n") * 100 + jobs(1, 3))
    with pytest.raises(FormatError, match="a header longer than") as info:
        read_swf(path)
    assert 3 < info.value.line < 100  # type: ignore[operator]


def test_a_header_bomb_read_leniently_keeps_the_cap_and_counts_the_rest(tmp_path: Path) -> None:
    extra = 3 * MAX_HEADER_LINES
    path = tmp_path / "h.swf"
    # a bad job line, named at its true line number past the dropped header lines
    body = job(1) + "1 2 x\n" + job(2)
    path.write_text(HEADER + "; Note: x\n;\n" * (extra // 2) + body)
    first_body = 3 + extra + 1
    whole, streamed = both_reads(path, lenient=True)
    assert_same(streamed, whole)
    assert len(whole) == 2 and len(whole.header.entries) == MAX_HEADER_LINES
    (size,) = [f for f in whole.meta["findings"] if f.check == "header-size"]
    assert size.line == MAX_HEADER_LINES + 1 and size.severity == "error"
    assert f"{3 + extra - MAX_HEADER_LINES:,} line(s)" in size.message
    assert whole.meta["rejects"] == [(first_body + 1, "1 2 x")]


def test_a_header_bomb_takes_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "h.swf"
    path.write_text(HEADER + "; Note: some text\n" * 300_000 + jobs(1, 3))
    peak = traced_peak(lambda: read_swf(path, lenient=True))
    assert peak < 12 << 20  # the text (5.4 MB) and the 10,000 lines kept; was 100 MB


def test_the_cli_names_the_line_of_a_header_bomb_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "h.swf"
    path.write_text(HEADER + "; Note: x\n" * (MAX_HEADER_LINES + 5) + jobs(1, 3))
    code, _, err = run_cli(capsys, "convert", str(path), str(tmp_path / "out.swf"))
    assert code == 2
    assert f"h.swf:{MAX_HEADER_LINES + 1}: a header longer than" in err


# --------------------------------------------------------------------------- blank lines


def test_blank_lines_between_header_and_jobs_list_the_first_ones_and_count_the_rest(
    tmp_path: Path,
) -> None:
    count = 5000
    path = tmp_path / "b.swf"
    path.write_text(HEADER + "\n" * count + jobs(1, 3))
    whole, streamed = both_reads(path)
    assert_same(streamed, whole)
    blank = [f for f in whole.meta["findings"] if f.check == "blank-line"]
    assert len(blank) == parse.MAX_LISTED + 1
    assert [f.line for f in blank[: parse.MAX_LISTED]] == list(range(4, 4 + parse.MAX_LISTED))
    summary = blank[-1]
    assert summary.line == 4 + parse.MAX_LISTED and summary.severity == "info"
    assert f"{count - parse.MAX_LISTED:,} more blank line(s)" in summary.message
    assert f"to line {3 + count}" in summary.message
    assert len(whole) == 3 and whole.to_arrays()["job_number"].tolist() == [1, 2, 3]


@pytest.mark.parametrize("where", ["after-header", "between-jobs", "at-end"])
def test_a_bomb_of_blank_lines_takes_bounded_memory(tmp_path: Path, where: str) -> None:
    count = 400_000
    text = {
        "after-header": HEADER + "\n" * count + jobs(1, 3),
        "between-jobs": HEADER + job(1) + "\n" * count + jobs(2, 2),
        "at-end": HEADER + jobs(1, 3) + " \n" * count,
    }[where]
    path = tmp_path / "b.swf"
    path.write_text(text)
    workloads: list[Workload] = []
    peak = traced_peak(lambda: workloads.append(read_swf(path)))
    # the text (some 0.8 MB) and a thousand findings; was some 60 MB
    assert peak < 8 << 20
    peak = traced_peak(lambda: read_swf(path, stream=True, chunk_bytes=1 << 16).to_arrays())
    assert peak < 8 << 20
    blank = [f for f in workloads[0].meta["findings"] if f.check == "blank-line"]
    assert len(blank) == parse.MAX_LISTED + 1
    assert f"{count - parse.MAX_LISTED:,} more" in blank[-1].message


def test_a_long_run_of_blank_lines_ends_the_header_in_both_reads(tmp_path: Path) -> None:
    """A run of blank lines no header could take ends it (the streaming read holds
    it until it knows): a comment after it is a comment of the body."""
    path = tmp_path / "b.swf"
    path.write_text(HEADER + "\n" * (MAX_HEADER_LINES + 1) + "; late\n" + jobs(1, 2))
    whole, streamed = both_reads(path)
    assert_same(streamed, whole)
    assert len(whole.header.entries) == 3
    assert next(iter(whole)).extras["swf_comments"] == ["; late"]
    # A shorter run between comments stays in the header, as before.
    path.write_text(HEADER + "\n" * 50 + "; kept\n" + jobs(1, 2))
    whole, streamed = both_reads(path)
    assert_same(streamed, whole)
    assert len(whole.header.entries) == 3 + 50 + 1


def test_a_blank_bomb_handed_over_by_a_bz2_read_stays_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The streaming read going on from a whole-file read of a bz2 file holds the
    blank lines after the header it read, at most a header's worth."""
    import bz2

    monkeypatch.setattr(reader, "STREAM_THRESHOLD", 1 << 20)
    text = HEADER + "\n" * (8 << 20) + jobs(1, 3)
    path = tmp_path / "b.swf.bz2"
    path.write_bytes(bz2.compress(text.encode()))
    workloads: list[Workload] = []
    peak = traced_peak(lambda: workloads.append(read_swf(path, chunk_bytes=1 << 20)))
    assert workloads[0].meta["streaming"]
    assert peak < 16 << 20
    assert len(workloads[0]) == 3


# --------------------------------------------------------------------------- comment lines


def test_comment_lines_after_the_first_job_are_kept_and_listed_up_to_a_cap(
    tmp_path: Path,
) -> None:
    count = parse.MAX_KEPT_COMMENTS + 500
    path = tmp_path / "c.swf"
    path.write_text(HEADER + job(1) + "; c\n" * count + jobs(2, 2))
    whole, streamed = both_reads(path)
    assert_same(streamed, whole)
    assert list(whole)[1].extras["swf_comments"] == ["; c"] * parse.MAX_KEPT_COMMENTS
    late = [f for f in whole.meta["findings"] if f.check == "late-comment"]
    assert len(late) == parse.MAX_LISTED + 2
    messages = " ".join(f.message for f in late[parse.MAX_LISTED :])
    assert f"{count - parse.MAX_LISTED:,} more comment line(s)" in messages
    assert "500 comment line(s) after the first job line not kept" in messages


@pytest.mark.parametrize("where", ["between-jobs", "at-end"])
def test_a_bomb_of_comment_lines_takes_bounded_memory(tmp_path: Path, where: str) -> None:
    count = 300_000
    body = ";x\n" * count
    text = HEADER + job(1) + body + job(2) if where == "between-jobs" else HEADER + job(1) + body
    path = tmp_path / "c.swf"
    path.write_text(text)
    peak = traced_peak(lambda: read_swf(path))
    assert peak < 12 << 20  # was some 100 MB
    peak = traced_peak(lambda: read_swf(path, stream=True, chunk_bytes=1 << 16).to_arrays())
    assert peak < 12 << 20


def test_validate_output_of_a_blank_bomb_stays_short(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "b.swf"
    path.write_text(HEADER + jobs(1, 3) + "\n" * 100_000)
    code, out, _ = run_cli(capsys, "validate", "--limit", "0", str(path))
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == parse.MAX_LISTED + 2
    assert "99,000 more blank line(s) ignored" in lines[-2]
    assert lines[-1].endswith("ok: 3 jobs; 0 error(s), 0 warning(s), 1001 info")


# --------------------------------------------------------------------------- gzip members


def many_members(count: int) -> tuple[bytes, bytes]:
    text = (HEADER + jobs(1, count)).encode()
    lines = text.splitlines(keepends=True)
    head = gzip.compress(b"".join(lines[:3]), mtime=0)
    return text, head + b"".join(gzip.compress(line, mtime=0) for line in lines[3:])


def test_gunzip_of_many_members_feeds_the_inflater_linear_input(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each member's inflater got all the rest of the file (and copied what it did
    not use): quadratic in the number of members."""
    text, raw = many_members(5000)
    fed = [0]

    class Counting:
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def decompress(self, data: Any, *args: Any) -> bytes:
            fed[0] += len(data)
            return self._inner.decompress(data, *args)  # type: ignore[no-any-return]

        def __getattr__(self, name: str) -> Any:
            return getattr(self._inner, name)

    fake = SimpleNamespace(
        decompressobj=lambda *a, **k: Counting(zlib.decompressobj(*a, **k)), error=zlib.error
    )
    monkeypatch.setattr(reader, "zlib", fake)
    assert reader._gunzip(raw) == text
    assert fed[0] <= 3 * len(raw) + 5000 * reader.GZIP_PIECE  # was 640 MB


def test_gunzip_of_many_members_is_fast_and_right(tmp_path: Path) -> None:
    text, raw = many_members(40_000)
    start = time.perf_counter()
    assert reader._gunzip(raw) == text
    assert time.perf_counter() - start < 2.0  # was 3.5 s (quadratic)
    path = tmp_path / "m.swf.gz"
    path.write_bytes(raw + b"\0" * 1000)  # zero padding after the last member
    workload = read_swf(path)
    assert len(workload) == 40_000
    assert workload.to_arrays()["job_number"][-1] == 40_000
    truncated = tmp_path / "t.swf.gz"
    truncated.write_bytes(raw[:-3])
    with pytest.raises(FormatError, match="not a valid gzip file"):
        read_swf(truncated).to_arrays()


# --------------------------------------------------------------------------- pipes


@pytest.fixture()
def fifo(tmp_path: Path) -> Iterator[Callable[[Callable[[Any], None]], Path]]:
    """A named pipe fed by a thread calling ``write(fh)``; the thread ends when
    the reader goes away (a broken pipe)."""
    threads: list[threading.Thread] = []
    path = tmp_path / "pipe.swf"
    os.mkfifo(path)

    def make(write: Callable[[Any], None]) -> Path:
        def run() -> None:
            try:
                with open(path, "wb") as fh:
                    write(fh)
            except (BrokenPipeError, OSError):
                pass

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        threads.append(thread)
        return path

    yield make
    for thread in threads:
        if thread.is_alive():  # unblock a writer waiting for a reader
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
                os.close(fd)
            except OSError:
                pass
        thread.join(5)


def in_time(action: Callable[[], Any], seconds: float = 30) -> Any:
    """``action()`` in a thread, failing the test if it takes longer (it may block
    on a pipe)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = action()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the read blocked"
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_a_pipe_is_read_once(fifo: Callable[..., Path]) -> None:
    text = (HEADER + jobs(1, 1000)).encode()
    path = fifo(lambda fh: fh.write(text))
    workload = in_time(lambda: read_swf(path))
    assert len(workload) == 1000 and workload.header.max_procs == 8


def test_a_large_pipe_hands_over_to_the_streaming_read(
    fifo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader, "STREAM_THRESHOLD", 1 << 20)
    count = 60_000  # some 3 MB

    def write(fh: Any) -> None:
        fh.write(HEADER.encode())
        for first in range(1, count + 1, 1000):
            fh.write(jobs(first, 1000).encode())

    path = fifo(write)

    def first_pass() -> tuple[Workload, int]:
        workload = read_swf(path, chunk_bytes=1 << 18)
        n = sum(len(chunk) for chunk in workload.iter_chunks())
        return workload, n

    got: list[tuple[Workload, int]] = []
    peak = traced_peak(lambda: got.append(in_time(first_pass)))
    workload, n = got[0]
    assert workload.meta["streaming"] and n == count
    assert workload.meta["findings"] == [] and workload.meta["records"] == count
    assert peak < 8 << 20


def test_a_pipe_of_endless_nul_bytes_is_refused_in_bounded_memory(
    fifo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Like a device (its size reads 0): the read stops at the threshold and the
    streaming read refuses the first line as too long, naming it."""
    monkeypatch.setattr(reader, "STREAM_THRESHOLD", 2 << 20)
    block = b"\0" * (1 << 16)

    def write(fh: Any) -> None:
        for _ in range(2000):  # 128 MB at most: the reader stops long before
            fh.write(block)

    path = fifo(write)

    def read() -> None:
        workload = read_swf(path, chunk_bytes=1 << 20)
        for _ in workload.iter_chunks():
            pass

    tracemalloc.start()
    try:
        with pytest.raises(FormatError, match="a line longer than") as info:
            in_time(read)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.line == 1 and str(info.value).startswith(f"{path}:1:")
    assert peak < 12 << 20  # the threshold's text and a chunk; was all of it (128 MB)


# --------------------------------------------------------------------------- xz


def huge_dictionary_xz(data: bytes) -> bytes:
    """``data`` as xz whose block header names a 1.5 GiB dictionary."""
    raw = bytearray(lzma.compress(data))
    size = (raw[12] + 1) * 4  # the block header after the 12-byte stream header
    assert raw[14:16] == b"\x21\x01"  # one filter: LZMA2, one byte of properties
    raw[16] = 37  # dictionary size code: 3 << 29, 1.5 GiB
    raw[12 + size - 4 : 12 + size] = zlib.crc32(bytes(raw[12 : 12 + size - 4])).to_bytes(
        4, "little"
    )
    assert lzma.decompress(bytes(raw)) == data  # liblzma itself takes it
    return bytes(raw)


def test_an_xz_file_asking_for_a_huge_dictionary_is_one_error_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "big.swf.xz"
    path.write_bytes(huge_dictionary_xz((HEADER + jobs(1, 10)).encode()))
    for stream in (None, True):
        with pytest.raises(FormatError, match="needs more than 256 MiB of memory") as info:
            read_swf(path, stream=stream).to_arrays()
        assert str(info.value).startswith(f"{path}: not a readable xz file")
    code, _, err = run_cli(capsys, "convert", str(path), str(tmp_path / "out.swf"))
    assert code == 2 and "needs more than 256 MiB of memory" in err
    assert len(err.strip().splitlines()) == 1
    # A usual xz file (preset 9: a 64 MiB dictionary) still reads.
    path.write_bytes(lzma.compress((HEADER + jobs(1, 10)).encode(), preset=9))
    assert len(read_swf(path)) == 10
