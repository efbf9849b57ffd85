"""Hostile SWF input the record checks do not see: numeric header values that
are not one integer in range (read from their leading digits before: ``MaxProcs:
1e400`` was 1), lines too long for any SWF line (a one-line decompression bomb
cost gigabytes), and reader options out of range (``chunk_bytes=0`` read no job
at all)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from schedlab.cli import main
from schedlab.errors import FormatError, UsageError
from schedlab.formats.swf import parse
from schedlab.formats.swf.reader import read_swf

JOB = "1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"
JOB2 = "2 5 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"


def run(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("; MaxProcs: 1e400", "header MaxProcs: expected an integer, got '1e400'"),
        ("; MaxProcs: 64.9", "header MaxProcs: expected an integer, got '64.9'"),
        ("; MaxProcs: 6 4", "header MaxProcs: expected an integer, got '6 4'"),
        ("; MaxProcs: abc", "header MaxProcs: expected an integer, got 'abc'"),
        ("; MaxProcs: \uff11\uff12\uff18", "header MaxProcs: expected an integer"),
        ("; MaxProcs: 0", "header MaxProcs: expected at least 1, or -1 (unknown), got '0'"),
        ("; MaxNodes: -5", "header MaxNodes: expected at least 1, or -1 (unknown), got '-5'"),
        ("; MaxJobs: 99999999999999999999", "header MaxJobs: out of range (at most 2**53 - 1)"),
        ("; UnixStartTime: 1.5e9", "header UnixStartTime: expected an integer, got '1.5e9'"),
        (
            "; UnixStartTime: 99999999999999",
            "header UnixStartTime: out of range (a date from year 1 to 9999)",
        ),
        ("; TimeZone: 999999", "header TimeZone: out of range (at most a day"),
    ],
)
def test_a_bad_numeric_header_value_is_one_error_naming_line_and_label(
    capsys, tmp_path: Path, header: str, message: str
) -> None:
    path = tmp_path / "h.swf"
    path.write_text(f"; Version: 2.2\n{header}\n{JOB}")
    with pytest.raises(FormatError) as caught:
        read_swf(path)
    assert caught.value.line == 2 and caught.value.message.startswith(message)
    code, err = run(capsys, "info", str(path))
    assert code == 2 and err.startswith(f"schedlab: error: {path}:2: {message}")
    assert err.count("\n") == 1
    # Lenient: a finding, and the typed property gives None (never a guess).
    w = read_swf(path, lenient=True)
    label = header[2:].split(":")[0]
    assert next((f.line, f.check) for f in w.meta["findings"]) == (2, "header-value")
    prop = {"MaxProcs": "max_procs", "MaxNodes": "max_nodes", "MaxJobs": "max_jobs"}
    prop |= {"UnixStartTime": "unix_start_time", "TimeZone": "time_zone"}
    if label in ("MaxProcs", "MaxNodes", "MaxJobs") or "e" in header or "." in header:
        value = getattr(w.header, prop[label])
        assert value is None or value == int(header.split(":")[1])


def test_two_different_values_of_one_label_are_an_error(tmp_path: Path) -> None:
    path = tmp_path / "d.swf"
    path.write_text(f"; MaxProcs: 64\n; MaxProcs: 8\n{JOB}")
    with pytest.raises(FormatError, match=r"header MaxProcs: '8' here but '64' on line 1"):
        read_swf(path)
    path.write_text(f"; MaxProcs: 64\n; MaxProcs: 64\n{JOB}")
    assert read_swf(path).header.max_procs == 64


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1024 (512 256 256)", 1024), ("-1", -1), (" 128 ", 128), ("+16", 16)],
)
def test_integers_as_real_logs_write_them_are_read(tmp_path: Path, value: str, expected: int):
    """The Parallel Workloads Archive's ``MaxNodes: 1024 (512 256 256)``; -1 for
    unknown, as in a record's fields."""
    path = tmp_path / "ok.swf"
    path.write_text(f"; MaxNodes: {value}\n{JOB}")
    w = read_swf(path)
    assert w.header.max_nodes == expected and not w.meta["findings"]


def _long_line_file(tmp_path: Path, size: int, compress: bool) -> Path:
    text = f"; MaxProcs: 4\n{JOB}" + "1" * size + "\n" + JOB2
    path = tmp_path / ("long.swf.gz" if compress else "long.swf")
    if compress:
        path.write_bytes(gzip.compress(text.encode(), compresslevel=1, mtime=0))
    else:
        path.write_text(text)
    return path


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("size", [parse.MAX_LINE + 1, 3 * parse.MAX_LINE])
def test_a_line_too_long_for_swf_is_an_error_or_a_skipped_line(
    tmp_path: Path, compress: bool, stream: bool, size: int
) -> None:
    path = _long_line_file(tmp_path, size, compress)
    with pytest.raises(FormatError) as caught:
        read_swf(path, stream=stream, chunk_bytes=1 << 16).to_arrays()
    assert caught.value.line == 3 and "a line longer than 1,048,576 bytes" in str(caught.value)
    w = read_swf(path, stream=stream, chunk_bytes=1 << 16, lenient=True)
    cols = w.to_arrays()
    assert cols["job_number"].tolist() == [1, 2]
    assert w.meta["skipped"] == 1 and w.meta["rejects"][0][0] == 3
    assert len(w.meta["rejects"][0][1]) < 100  # not the whole line kept


def test_a_one_line_gzip_bomb_is_streamed_never_holding_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gzip file of a few kilobytes holding a 64 MiB line: the size its trailer
    records sends it to the streaming read (ten times the compressed size would
    not), whose chunks never hold the line whole."""
    from schedlab.formats.swf import reader

    path = tmp_path / "bomb.swf.gz"
    with gzip.open(path, "wb", compresslevel=9) as fh:
        fh.write(b"; MaxProcs: 4\n")
        for _ in range(64):
            fh.write(b"1" * (1 << 20))
        fh.write(b"\n")
    assert path.stat().st_size < 1 << 20
    assert reader._estimated_text_size(str(path)) > 64 << 20
    monkeypatch.setattr(reader, "STREAM_THRESHOLD", 32 << 20)
    seen: list[int] = []
    parse_body = parse.parse_body

    def spy(data: bytes, *args: object, **kwargs: object) -> parse.Block:
        seen.append(len(data))
        return parse_body(data, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(parse, "parse_body", spy)
    with pytest.raises(FormatError, match="a line longer than"):
        read_swf(path).to_arrays()
    w = read_swf(path, lenient=True, chunk_bytes=1 << 20)
    assert len(w.to_arrays()["job_number"]) == 0 and w.meta["skipped"] == 1
    assert max(seen) <= reader.CHUNK_BYTES + parse.MAX_LINE + 1


@pytest.mark.parametrize(
    ("option", "value"), [("chunk_bytes", 0), ("chunk_bytes", -1), ("workers", -5)]
)
def test_reader_options_out_of_range_are_usage_errors(
    capsys, tmp_path: Path, option: str, value: int
) -> None:
    path = tmp_path / "j.swf"
    path.write_text(f"; MaxProcs: 4\n{JOB}")
    with pytest.raises(UsageError, match=f"reader swf: option {option}="):
        read_swf(path, stream=True, **{option: value})
    code, err = run(capsys, "info", str(path), "-R", "stream=yes", "-R", f"{option}={value}")
    assert code == 2 and err.startswith(f"schedlab: error: reader swf: option {option}=")
