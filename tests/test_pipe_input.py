"""Input that can be read only once: a named pipe, ``/dev/stdin``, a process
substitution ``<(zcat trace.gz)`` (``/dev/fd/63``).

Detecting the format reads the first 64 KiB; the reader must then get the whole
input from its first byte, without opening a pipe a second time (a named pipe
whose writer is gone would block in ``open()`` for ever; ``/dev/fd/N`` would go on
after the sniffed bytes). Every built-in reader is read through a real FIFO (a
writer thread) and compared with the same file read as a regular file; the command
line is run with its standard input a pipe. The traces are the real ones of
``../shared/data`` (read only), or conversions of them written to ``tmp_path``.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab import FormatError, ReaderSpec, Workload, hookimpl
from schedlab.model import SWF_FIELDS
from schedlab.testing import plugin_registry

#: Seconds after which a writer gives a reader that opened the pipe a second time
#: (the defect) an end of file, so that the test fails instead of hanging.
RESCUE_AFTER = 20.0


class FifoWriter:
    """A named pipe at ``path`` fed ``data`` by a thread: open, write, close, once."""

    def __init__(self, path: Path, data: bytes) -> None:
        self.path, self.data = path, data
        os.mkfifo(path)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            with open(self.path, "wb") as fh:
                fh.write(self.data)
        except BrokenPipeError:
            pass  # the reader closed the pipe before the end (the defect)
        deadline = time.monotonic() + RESCUE_AFTER
        while not self.done.wait(0.2):
            if time.monotonic() < deadline:
                continue
            try:  # succeeds only while a reader waits in open() or reads
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue
            os.close(fd)

    def __enter__(self) -> FifoWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join(timeout=5)


def _same(pipe: Workload, file: Workload, path: Path, pipe_name: str = "fifo") -> None:
    a, b = pipe.to_arrays(), file.to_arrays()
    assert len(a) == len(b) > 0
    for field in SWF_FIELDS:
        np.testing.assert_array_equal(a[field], b[field], err_msg=field)
    # the header may name the source (``Conversion: ... from FILE``)
    assert repr(pipe.header.entries) == repr(file.header.entries).replace(path.name, pipe_name)


@pytest.fixture(scope="module")
def converted(tmp_path_factory, shared_data: Path) -> dict[str, Path]:
    """The HPC2N excerpt (3,170 jobs, 290 KB) in the formats with no real sample."""
    folder = tmp_path_factory.mktemp("converted")
    workload = schedlab.read(shared_data / "swf" / "HPC2N-2002_excerpt-3170jobs_alea.swf")
    out = {}
    for name, fmt in (("w.json", "batsim"), ("jobs.csv", "batsim-jobs"), ("w.xml", "sss")):
        out[fmt] = schedlab.write(workload, folder / name, format=fmt)
    return out


def _sources(shared_data: Path, converted: dict[str, Path]) -> dict[str, tuple[Path, bool]]:
    """Reader -> (file, gzip it on the way)."""
    swf, sge = shared_data / "swf", shared_data / "sge"
    return {
        "swf": (swf / "lublin_256.swf", False),
        "swf-gz": (swf / "NASA-iPSC-1993-3.1-cln.swf.gz", False),
        "sge": (sge / "gbsc_utils_ogetools_test_data.accounting", False),
        "sge-gzipped": (sge / "gbsc_utils_ogetools_test_data.accounting", True),
        "sge-jsonl": (sge / "ocs-9.0.0_release-notes_accounting.jsonl", False),
        "google": (
            shared_data
            / "google"
            / "clusterdata2019_v3_sample"
            / "collection_events-doc-example.jsonl",
            False,
        ),
        "batsim": (converted["batsim"], False),
        "batsim-jobs": (converted["batsim-jobs"], False),
        "sss": (converted["sss"], False),
    }


READERS = [
    "swf",
    "swf-gz",
    "sge",
    "sge-gzipped",
    "sge-jsonl",
    "google",
    "batsim",
    "batsim-jobs",
    "sss",
]


@pytest.mark.parametrize("case", READERS)
def test_every_builtin_reader_reads_a_named_pipe_detected_by_content(
    tmp_path, shared_data, converted, case
):
    path, compress = _sources(shared_data, converted)[case]
    data = path.read_bytes()
    with FifoWriter(tmp_path / "fifo", gzip.compress(data, mtime=0) if compress else data):
        from_pipe = schedlab.read(tmp_path / "fifo")
        _same(from_pipe, schedlab.read(path), path)
    assert from_pipe.meta["reader"] == case.split("-gz")[0]


@pytest.mark.parametrize("case", ["sss", "swf", "sge-jsonl"])
def test_a_named_pipe_with_the_format_given_is_read_whole(tmp_path, shared_data, converted, case):
    path, _ = _sources(shared_data, converted)[case]
    reader = "sge" if case == "sge-jsonl" else case
    with FifoWriter(tmp_path / "fifo", path.read_bytes()):
        _same(schedlab.read(tmp_path / "fifo", format=reader), schedlab.read(path), path)


def test_a_named_pipe_can_be_read_again_once_a_new_writer_comes(tmp_path, shared_data):
    path = shared_data / "sge" / "gbsc_utils_ogetools_test_data.accounting"
    fifo = tmp_path / "fifo"
    with FifoWriter(fifo, path.read_bytes()):
        assert len(schedlab.read(fifo)) == 133
    fifo.unlink()
    with FifoWriter(fifo, (shared_data / "swf" / "lublin_256.swf").read_bytes()):
        assert len(schedlab.read(fifo)) == 10_000


def _cli(*args: str, stdin: bytes, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "schedlab", *args],
        input=stdin.decode("latin-1"),
        encoding="latin-1",
        capture_output=True,
        timeout=300,
        cwd=cwd,
    )


def test_info_validate_convert_read_standard_input_whole(tmp_path, shared_data):
    sge = (shared_data / "sge" / "gbsc_utils_ogetools_test_data.accounting").read_bytes()
    run = _cli("info", "/dev/stdin", stdin=sge, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "jobs: 133" in run.stdout.splitlines()

    swf = (shared_data / "swf" / "lublin_256.swf").read_bytes()
    run = _cli("validate", "/dev/stdin", stdin=swf, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1].startswith("/dev/stdin: ok: 10000 jobs;")

    run = _cli("convert", "/dev/stdin", "out.swf", stdin=gzip.compress(sge, mtime=0), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    lines = (tmp_path / "out.swf").read_text().splitlines()
    assert sum(1 for line in lines if not line.startswith(";")) == 133


def test_sss_from_standard_input_with_from(tmp_path, converted):
    run = _cli(
        "info", "--from", "sss", "/dev/stdin", stdin=converted["sss"].read_bytes(), cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr
    assert "jobs: 3170" in run.stdout.splitlines()


def _own_open_reader(source, **_):
    """A reader that opens its path itself, not through schedlab.io.open_binary."""
    with open(source, "rb") as fh:
        lines = fh.read().splitlines()
    return Workload.from_jobs([schedlab.Job(job_number=i + 1) for i in range(len(lines))])


def test_a_reader_opening_a_sniffed_pipe_itself_is_an_error_not_a_short_read(shared_data):
    plugin = types.ModuleType("ownopen_plugin")

    @hookimpl
    def schedlab_readers():
        return [ReaderSpec(name="own", read=_own_open_reader, sniff=lambda head, name: True)]

    plugin.schedlab_readers = schedlab_readers
    registry = plugin_registry(("own", plugin), builtins=False)
    data = (shared_data / "swf" / "lublin_256.swf").read_bytes()  # more than two pipe buffers
    read_end, write_end = os.pipe()

    def write() -> None:
        with open(write_end, "wb") as fh:
            try:
                fh.write(data)
            except BrokenPipeError:
                pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        with pytest.raises(FormatError) as info:
            schedlab.read(f"/dev/fd/{read_end}", registry=registry)
    finally:
        os.close(read_end)
        writer.join(timeout=30)
    message = str(info.value)
    assert message.startswith(f"/dev/fd/{read_end}: reader 'own' opened this pipe again")
    assert "--from" in message and "\n" not in message


def test_detection_then_a_read_under_another_name_of_the_same_pipe(tmp_path, shared_data):
    # what `schedlab validate` does: detect, then read with the detected reader's name
    path = shared_data / "sge" / "gbsc_utils_ogetools_test_data.accounting"
    with FifoWriter(tmp_path / "fifo", path.read_bytes()):
        reader = schedlab.api.detect_reader(str(tmp_path / "fifo"))
        workload = schedlab.read(f"{tmp_path}/./fifo", format=reader.name, lenient=True)
    assert reader.name == "sge" and len(workload) == 133


@pytest.mark.parametrize("compress", [False, True])
def test_a_large_google_trace_through_a_pipe_is_read_whole(tmp_path, shared_data, compress):
    # More than the 64 KiB detection reads: the fast (pyarrow) parser opened the
    # path again and lost the sniffed records, or hung on a named pipe.
    written = schedlab.write(
        schedlab.read(shared_data / "swf" / "lublin_256.swf"), tmp_path / "g", format="google"
    )
    events = next(Path(written).glob("collection_events-*.json.gz"))
    plain = tmp_path / "collection_events.json"
    plain.write_bytes(gzip.decompress(events.read_bytes()))
    assert plain.stat().st_size > 4 * 65536
    expected = schedlab.read(plain)
    assert len(expected) == 10_000
    data = events.read_bytes() if compress else plain.read_bytes()
    with FifoWriter(tmp_path / "fifo", data):
        _same(schedlab.read(tmp_path / "fifo"), expected, plain)
    run = _cli("info", "/dev/stdin", stdin=data, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "jobs: 10000" in run.stdout.splitlines()
