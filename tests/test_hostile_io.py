"""Hostile input and interrupted output in the shared I/O layer (issue 15):
compressed files that are truncated or corrupt, byte-order marks and line ends,
staged output (stale parts, SIGTERM, errors naming the user's file), the generic
``skipped-record`` findings of ``validate``, and the public ``schedlab.io``."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import schedlab
from schedlab.errors import FormatError
from schedlab.io import (
    normalize_text,
    normalized,
    open_binary,
    read_head,
    remove_stale_parts,
    staged_output,
)
from schedlab.testing import run_cli as run
from schedlab.validation import Finding, check_workload, failing, skipped_findings

ROOT = Path(__file__).resolve().parent.parent


COMPRESS = {"gz": lambda b: gzip.compress(b, mtime=0), "bz2": bz2.compress, "xz": lzma.compress}


# --------------------------------------------------------------- compressed input


@pytest.fixture()
def swf_head(swf_dir: Path) -> bytes:
    return b"".join((swf_dir / "lublin_256.swf").read_bytes().splitlines(True)[:200])


@pytest.mark.parametrize("kind", ["gz", "bz2", "xz"])
def test_truncated_compressed_swf_is_one_line_error_exit_2(
    capsys, tmp_path: Path, swf_head: bytes, kind: str
) -> None:
    """The reproducer: ``head -200 lublin | gzip | head -c 1000`` gave "aborted", 130."""
    data = COMPRESS[kind](swf_head)
    path = tmp_path / f"s.swf.{kind}"
    path.write_bytes(data[: min(1000, len(data) // 2)])
    code, _, err = run(capsys, "convert", str(path), str(tmp_path / "o.swf"))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("schedlab: error: ")
    assert str(path) in err and "truncated" in err
    assert not (tmp_path / "o.swf").exists()


@pytest.mark.parametrize("target", ["o.swf", "o.accounting"])
@pytest.mark.parametrize("kind", ["gz", "bz2", "xz"])
def test_truncated_compressed_sge_jsonl_sss_name_the_file(
    capsys, tmp_path: Path, shared_data: Path, kind: str, target: str
) -> None:
    sources = {
        "accounting": (shared_data / "sge" / "gbsc_utils_ogetools_test_data.accounting"),
        "accounting.jsonl": shared_data / "sge" / "go-clusterscheduler_ocs900_accounting.jsonl",
        "sss.xml": ROOT / "tests" / "data" / "sss" / "example-3-elaborate.xml",
    }
    for name, source in sources.items():
        data = COMPRESS[kind](source.read_bytes())
        path = tmp_path / f"{name}.{kind}"
        path.write_bytes(data[: len(data) // 2])
        code, _, err = run(capsys, "convert", str(path), str(tmp_path / target))
        assert code == 2, (name, err)
        assert err.count("\n") == 1 and str(path) in err, err
        assert "aborted" not in err and "internal error" not in err


def test_bad_gzip_crc_names_the_file(capsys, tmp_path: Path, swf_head: bytes) -> None:
    data = bytearray(gzip.compress(swf_head, mtime=0))
    data[-8] ^= 0xFF  # the CRC32 of the trailer
    for name in ("s.swf.gz", "s.accounting.gz"):
        path = tmp_path / name
        path.write_bytes(bytes(data))
        with pytest.raises(FormatError) as caught:
            with open_binary(path) as fh:
                fh.read()
        assert str(path) in str(caught.value)
    path = tmp_path / "s.swf.gz"
    code, _, err = run(capsys, "convert", str(path), str(tmp_path / "o.swf"))
    assert code == 2 and str(path) in err and err.count("\n") == 1


@pytest.mark.parametrize("magic", [b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00"])
def test_random_bytes_after_a_magic_number_are_a_format_error(tmp_path: Path, magic: bytes):
    path = tmp_path / "junk.swf"
    path.write_bytes(magic + bytes(range(256)) * 4)
    with pytest.raises(FormatError) as caught:
        schedlab.read(path)
    assert str(path) in str(caught.value)
    with pytest.raises(FormatError):
        with open_binary(path) as fh:
            fh.read()
    with pytest.raises(FormatError):
        read_head(path)


def test_a_real_io_error_keeps_its_type(tmp_path: Path) -> None:
    """Only data errors become FormatError: EIO and friends stay OSError."""

    class Failing(io.BytesIO):
        def read(self, size: int = -1) -> bytes:
            if self.tell() > 10:
                raise OSError(5, "Input/output error")
            return super().read(size)

    stream = Failing(gzip.compress(b"x" * 100000))
    with pytest.raises(OSError) as caught:
        open_binary(stream).read()
    assert not isinstance(caught.value, FormatError) and caught.value.errno == 5


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("normalize", [False, True])
def test_closing_never_closes_a_file_the_caller_opened(compressed, normalize) -> None:
    """``with open_binary(fh)`` (the reader tutorial's pattern) leaves the caller's
    file open, even once the wrapper is garbage-collected."""
    import gc

    data = b"a\r\nb\n"
    stream = io.BytesIO(gzip.compress(data) if compressed else data)
    with open_binary(stream, normalize=normalize) as fh:
        assert fh.read() == (b"a\nb\n" if normalize else data)
    assert fh.closed and not stream.closed
    del fh
    gc.collect()
    assert not stream.closed
    stream.seek(0)  # still usable


def test_closing_closes_a_file_opened_for_a_path(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"x\n")
    with open_binary(path, normalize=True) as fh:
        assert fh.read() == b"x\n"
    assert fh.closed


# --------------------------------------------------------------- BOM and line ends


def test_normalize_text() -> None:
    assert normalize_text(b"\xef\xbb\xbfa\r\nb\rc\n\r\rd") == b"a\nb\nc\n\n\nd"
    assert normalize_text(b"a\xef\xbb\xbf") == b"a\xef\xbb\xbf"  # only a leading BOM
    assert normalize_text(b"\xef\xbb\xbfa", strip_bom=False) == b"\xef\xbb\xbfa"


@pytest.mark.parametrize("size", [1, 2, 3, 5, 64, 1 << 20])
def test_normalized_stream_equals_normalize_text_for_any_read_size(size: int) -> None:
    data = b"\xef\xbb\xbf" + b"a\r\nbb\rc\r\r\n\n\rd" * 50 + b"\r"
    fh = normalized(io.BytesIO(data))
    out = b""
    while chunk := fh.read(size):
        out += chunk
    assert out == normalize_text(data)
    assert normalized(io.BytesIO(data)).readlines() == normalize_text(data).splitlines(True)


def test_read_head_is_normalized_and_keeps_the_stream_position() -> None:
    stream = io.BytesIO(gzip.compress(b'\xef\xbb\xbf{"a":1}\r\n'))
    assert read_head(stream) == b'{"a":1}\n'
    assert stream.tell() == 0


# --------------------------------------------------------------- output files


#: ``schedlab ARGS`` whose SWF writer writes a little, says so, then waits.
SLOW_WRITER = """
import sys, time
import schedlab.formats.swf.writer as writer

def slow(workload, path, **options):
    with open(path, "w") as fh:
        fh.write("partial\\n")
    print("writing", file=sys.__stdout__, flush=True)  # (stdout goes to stderr inside a writer)
    time.sleep(120)

writer.write_swf = slow
from schedlab.cli import main
main(sys.argv[1:])
"""


def _slow_conversion(source: Path, target: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITER, "convert", str(source), str(target)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "writing\n", proc.communicate()
    return proc


def _parts(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".part"))


@pytest.mark.parametrize(
    ("signum", "how"), [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "Ctrl-C")]
)
def test_sigterm_and_sigint_clean_up_and_exit_130_keeping_the_old_output(
    tmp_path: Path, swf_dir: Path, signum: int, how: str
) -> None:
    target = tmp_path / "o.swf"
    target.write_text("old\n")
    proc = _slow_conversion(swf_dir / "lublin_256.swf", target)
    assert len(_parts(tmp_path)) == 1
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()  # (after Ctrl-C, click first ends the ^C line)
    assert len(lines) == 1, err
    assert lines[0] == (
        f"schedlab: error: schedlab convert interrupted ({how}); not written: {target} "
        "(any previous version is unchanged)"
    )
    assert target.read_text() == "old\n"
    assert _parts(tmp_path) == []


def test_a_killed_conversion_leaves_a_part_that_the_next_write_removes(
    tmp_path: Path, swf_dir: Path
) -> None:
    target = tmp_path / "o.swf"
    target.write_text("old\n")
    proc = _slow_conversion(swf_dir / "lublin_256.swf", target)
    proc.kill()
    proc.communicate(timeout=60)
    assert len(_parts(tmp_path)) == 1 and target.read_text() == "old\n"
    other = tmp_path / "other.swf"  # a different target's write leaves it alone
    schedlab.write(schedlab.read(swf_dir / "lublin_256.swf"), other)
    assert len(_parts(tmp_path)) == 1
    schedlab.write(schedlab.read(swf_dir / "lublin_256.swf"), target)
    assert _parts(tmp_path) == []
    assert len(schedlab.read(target)) == 10000


def test_a_part_still_being_written_is_not_removed(tmp_path: Path) -> None:
    target = tmp_path / "o.swf"
    with staged_output(target) as staged:
        staged.write_text("new\n")
        assert len(_parts(tmp_path)) == 1
        assert remove_stale_parts(target) == []  # its writer holds the lock
        assert len(_parts(tmp_path)) == 1
    assert target.read_text() == "new\n" and _parts(tmp_path) == []
    stale = tmp_path / ".o.swf.abc123.part"  # a part without lock file ...
    stale.mkdir()
    (stale / "o.swf").write_text("half")
    assert remove_stale_parts(target) == []  # ... may be about to take it
    os.utime(stale, (time.time() - 120, time.time() - 120))  # ... but not for minutes
    unrelated = tmp_path / ".o.swf.keep.me.part"  # not a name staged_output makes
    unrelated.mkdir()
    assert remove_stale_parts(target) == [stale]
    assert unrelated.exists()


def test_write_errors_name_the_target_not_the_part(
    capsys, tmp_path: Path, swf_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC while writing (simulated with /dev/full) names the user's file."""
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    from schedlab.formats.swf import writer as swf_writer

    def full_disk(path: object, text: bool = True, **_: object) -> object:
        return open("/dev/full", "w" if text else "wb")

    monkeypatch.setattr(swf_writer, "open_output", full_disk)
    target = tmp_path / "o.swf"
    with pytest.raises(OSError) as caught:
        schedlab.write(schedlab.read(swf_dir / "lublin_256.swf"), target)
    assert caught.value.filename == str(target)
    code, _, err = run(capsys, "convert", str(swf_dir / "lublin_256.swf"), str(target))
    assert code == 2
    assert err == f"schedlab: error: {target}: No space left on device\n"
    assert _parts(tmp_path) == [] and not target.exists()


def test_a_writer_refusing_its_input_names_the_target_not_the_part(capsys, tmp_path: Path) -> None:
    """A writer's format error about the file it writes (an SSS JobGroup needs a
    job) names the user's file, not the staged part it was writing."""
    target = tmp_path / "o.sss"
    empty = schedlab.Workload.from_arrays(schedlab.JobColumns.empty(0))
    with pytest.raises(schedlab.errors.FormatError) as caught:
        schedlab.write(empty, target, format="sss")
    assert caught.value.source == str(target)
    assert str(caught.value).startswith(f"{target}: an SSS JobGroup must contain")
    assert ".part" not in str(caught.value)
    source = tmp_path / "empty.swf"
    source.write_text("; MaxProcs: 4\n")
    code, _, err = run(capsys, "convert", str(source), str(target))
    assert code == 2
    assert err.startswith(f"schedlab: error: {target}: an SSS JobGroup") and ".part" not in err
    assert _parts(tmp_path) == [] and not target.exists()


def _device(folder: Path, name: str, minor: int) -> Path:
    """A character device like /dev/null (minor 3) or /dev/full (7) made in
    ``folder`` (so that a regression replaces a test's file, never the system's);
    skips where making devices is not allowed."""
    import stat

    path = folder / name
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except (PermissionError, AttributeError):
        pytest.skip("making a device needs CAP_MKNOD")
    return path


def _is_device(path: Path) -> bool:
    import stat

    return stat.S_ISCHR(os.lstat(path).st_mode)


def test_a_device_target_is_written_into_never_replaced(
    capsys, tmp_path: Path, swf_dir: Path
) -> None:
    """A null device takes the output and stays a device; a full one's ENOSPC is
    one line naming it, exit 2, and it stays a device (a staged rename would have
    replaced either by a regular file)."""
    null = _device(tmp_path, "null", 3)
    full = _device(tmp_path, "full", 7)
    source = str(swf_dir / "lublin_256.swf")
    code, _, err = run(capsys, "convert", source, str(null), "--to", "swf")
    assert code == 0 and _is_device(null), err
    code, _, err = run(capsys, "convert", source, str(full), "--to", "swf")
    assert code == 2
    assert err == f"schedlab: error: {full}: No space left on device\n"
    assert _is_device(full)
    assert sorted(os.listdir(tmp_path)) == ["full", "null"]


def test_a_named_pipe_target_gets_the_data(tmp_path: Path, swf_dir: Path) -> None:
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    schedlab.write(schedlab.read(swf_dir / "lublin_256.swf"), fifo, format="swf")
    reader.join(timeout=60)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert got and got[0].count(b"\n") > 10_000


def test_a_symbolic_link_target_keeps_the_link(tmp_path: Path, swf_dir: Path) -> None:
    real = tmp_path / "real.swf"
    real.write_text("old\n")
    link = tmp_path / "link.swf"
    link.symlink_to(real.name)
    schedlab.write(schedlab.read(swf_dir / "lublin_256.swf"), link)
    assert link.is_symlink() and os.readlink(link) == real.name
    assert real.read_text().startswith(";") and _parts(tmp_path) == []


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink"])
def test_no_command_overwrites_its_input(capsys, tmp_path: Path, swf_dir: Path, how: str) -> None:
    """simulate -o / --allocations-out, convert, report -o and platform infer
    --output refuse a target that is their input, by any name, with exit 2."""
    source = tmp_path / "in.swf"
    text = b"".join((swf_dir / "lublin_256.swf").read_bytes().splitlines(True)[:300])
    source.write_bytes(text)
    target = source
    if how == "symlink":
        target = tmp_path / "alias.swf"
        target.symlink_to(source.name)
    elif how == "hardlink":
        target = tmp_path / "alias.swf"
        os.link(source, target)
    platform = tmp_path / "p.toml"
    platform.write_text('[[nodes]]\nname = "n"\ncount = 256\ncores = 1\n')
    commands = [
        ["simulate", str(source), "-o", str(target)],
        ["simulate", str(source), "--platform", str(platform), "--allocations-out", str(target)],
        ["convert", str(source), str(target), "--to", "swf"],
        ["report", str(source), "-o", str(target)],
        ["platform", "infer", str(source), "--output", str(target)],
    ]
    for args in commands:
        code, _, err = run(capsys, *args)
        assert code == 2, (args, err)
        assert err.startswith(f"schedlab: error: {target}: output would overwrite the input")
        assert err.count("\n") == 1
        assert source.read_bytes() == text


# --------------------------------------------------------------- validate


def _workload(meta: dict) -> schedlab.Workload:
    workload = schedlab.Workload.from_arrays(schedlab.JobColumns.empty(0))
    workload.meta.update(meta)
    return workload


@pytest.mark.parametrize(
    "meta",
    [
        {"skipped": 1, "rejects": [(7, "bad line")]},  # SWF / Grid Engine style
        {"skipped": 2, "rejects": ["g.csv:3: field time: expected ...", "g.csv:9: ..."]},
        {"skipped": 1, "rejects": [(0, "<Job>...</Job>")], "reject_position": "job"},
        {"skipped": 3},  # counted, not listed
        {"skipped": {"total": 2, "by_reason": {"x": 2}}},
    ],
)
def test_skipped_records_are_findings_whatever_the_reader(meta: dict) -> None:
    findings = check_workload(_workload(meta))
    assert failing(findings)
    assert all(f.check == "skipped-record" for f in findings)


def test_skipped_records_already_reported_are_not_reported_twice() -> None:
    reported = Finding(7, "run_time", "expected a number (line skipped)", "error", "bad-record")
    meta = {"skipped": 1, "rejects": [(7, "bad")], "findings": [reported]}
    assert skipped_findings(meta, [reported]) == []
    assert check_workload(_workload(meta)) == [reported]
    unlined = Finding(None, None, "job 3 skipped", "error", "bad-record")
    meta = {"skipped": 1, "rejects": ["job 3: bad"], "findings": [unlined]}
    assert skipped_findings(meta, [unlined]) == []


def test_a_reject_may_say_why_and_validate_shows_it() -> None:
    meta = {"skipped": 2, "rejects": [(4, "a|b|x", "field cpus: not a number"), (9, "c|d")]}
    findings = check_workload(_workload(meta))
    assert [f.line for f in findings] == [4, 9]
    assert findings[0].message == (
        "record skipped by the lenient read (field cpus: not a number): a|b|x"
    )
    assert findings[1].message == "record skipped by the lenient read: c|d"
    meta = {"skipped": 1, "rejects": [(3, "<Job/>", "no JobId")], "reject_position": "job"}
    (finding,) = check_workload(_workload(meta))
    assert finding.message == "record skipped by the lenient read (job 3) (no JobId): <Job/>"


# --------------------------------------------------------------- the public module


def test_schedlab_io_is_public_and_the_old_name_an_alias() -> None:
    import schedlab._io as old
    import schedlab.io as new

    for name in new.__all__:
        if callable(getattr(new, name)):
            assert getattr(new, name).__doc__, name
    for name in ("open_binary", "open_output", "read_head", "source_name", "compression_of"):
        assert getattr(old, name) is getattr(new, name)
    assert schedlab.open_binary is new.open_binary
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "formats").rglob("*.py")
        if "schedlab._io" in p.read_text(encoding="utf-8")
    ]
    assert offenders == []
    assert "schedlab.io" in (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
