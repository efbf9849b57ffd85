"""``schedlab convert IN - --to NAME`` writes to standard output (it wrote a file
named ``-``): the same bytes as the file the writer writes, the reports on
standard error; without ``--to``, or with a writer that writes several files, a
one-line error and nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HPC2N = "HPC2N-2002_excerpt-3170jobs_alea.swf"


def schedlab(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "schedlab", *args], cwd=cwd, capture_output=True, timeout=300
    )


@pytest.mark.parametrize("writer", ["swf", "batsim"])
def test_standard_output_gets_the_bytes_of_the_file(swf_dir: Path, tmp_path: Path, writer):
    trace = str(swf_dir / HPC2N)
    to_file = schedlab("convert", trace, "out.x", "--to", writer, cwd=tmp_path)
    assert to_file.returncode == 0, to_file.stderr
    piped = schedlab("convert", trace, "-", "--to", writer, cwd=tmp_path)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == (tmp_path / "out.x").read_bytes()
    assert not (tmp_path / "-").exists()
    err = piped.stderr.decode()
    assert "schedlab: wrote standard output" in err and "Traceback" not in err
    if writer == "batsim":  # what the format cannot carry is said, as for a file
        assert "what standard output could not carry" in err
        assert to_file.stderr.decode().count("records, not written") == err.count(
            "records, not written"
        )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "OUT '-' (standard output) needs --to NAME"),
        (("--to", "google"), "writer 'google' writes several files"),
    ],
)
def test_standard_output_refused_with_one_line(swf_dir: Path, tmp_path: Path, args, message):
    result = schedlab("convert", str(swf_dir / HPC2N), "-", *args, cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert result.stdout == b"" and list(tmp_path.iterdir()) == []
