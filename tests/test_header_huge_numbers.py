"""Header numbers of any length never crash: beyond 2**53 - 1 a typed accessor
(``max_procs`` ...) reads them as unknown, and every command gives one line (a
5,000-digit ``MaxProcs`` was an internal error; a 400-digit ``MaxNodes`` made
``validate`` overflow)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import schedlab
from schedlab.model import _MAX_HEADER_INT
from schedlab.validation import MAX_MAGNITUDE

JOB = "1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n"


def test_the_bound_is_the_readers() -> None:
    assert _MAX_HEADER_INT == MAX_MAGNITUDE


@pytest.mark.parametrize(
    "text, value",
    [
        ("128", 128),
        (str(2**53 - 1), 2**53 - 1),
        (str(-(2**53 - 1)), -(2**53 - 1)),
        ("0000000000000000000000000064", 64),
        (str(2**53), None),
        ("7" * 400, None),
        ("7" * 5000, None),
        ("-" + "7" * 5000, None),
    ],
)
def test_typed_accessors(text: str, value: int | None) -> None:
    header = schedlab.Header()
    header.set("MaxProcs", text)
    header.set("MaxNodes", text)
    assert header.max_procs == value
    assert header.max_nodes == value


@pytest.mark.parametrize("label, digits", [("MaxProcs", 5000), ("MaxNodes", 400)])
def test_every_command_gives_one_line(tmp_path: Path, label: str, digits: int) -> None:
    path = tmp_path / "huge.swf"
    path.write_text(f"; {label}: {'7' * digits}\n{JOB}")
    for command, code in (("info", 2), ("validate", 1), ("simulate", 2)):
        done = subprocess.run(
            [sys.executable, "-m", "schedlab", command, str(path)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert done.returncode == code, (command, done.stderr)
        assert "internal error" not in done.stderr and "Traceback" not in done.stderr
        assert f"header {label}: out of range" in done.stdout + done.stderr
