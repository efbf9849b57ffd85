"""Checks made before any work: ``-`` given to an option that writes a folder is
refused in a folder's words (docs/cli.md: "./- for a folder named -"), a file
option's in a file's; an allocation policy without a platform is refused before
the input is read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from schedlab.cli import main
from schedlab.io import check_outputs

FOLDER = "standard output is not supported here; name a folder (./- for a folder named -)"
FILE = "standard output is not supported here; name a file (./- for a file named -)"


@pytest.mark.parametrize(
    ("args", "label"),
    [
        (["sweep", "-w", "lublin:jobs=10", "--out", "-"], "--out"),
        (["experiment", "psp", "--out", "-"], "--out/--output"),
        (["new-plugin", "--kind", "policy", "--dest", "-", "x"], "--dest"),
        (["simulate", "x.swf", "-o", "y.swf", "--allocations-out", "-"], "--allocations-out"),
    ],
)
def test_dash_is_refused_in_the_outputs_words(
    args: list[str], label: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    words = FILE if args[0] == "simulate" else FOLDER
    assert line == f"schedlab: error: {label} -: {words}", line
    assert not os.path.exists("-")


def test_check_outputs_says_folder_for_the_folders_it_is_told() -> None:
    from schedlab.errors import UsageError

    with pytest.raises(UsageError, match=r"^--out -: .*name a folder \(\./- for a folder"):
        check_outputs([("--out", "-")], folders=["--out"])
    with pytest.raises(UsageError, match=r"^-o -: .*name a file \(\./- for a file"):
        check_outputs([("-o", "-")], folders=["--out"])


@pytest.mark.parametrize(
    "args",
    [
        ["simulate", "missing.swf", "--allocation", "best-fit"],
        ["compare", "missing.swf", "-p", "fcfs+easy,sjf+easy", "--allocation-option", "x=1"],
    ],
)
def test_an_allocation_policy_without_a_platform_is_refused_before_reading(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)  # missing.swf does not exist: refused before it is read
    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip() == (
        "schedlab: error: an allocation policy needs a platform (--platform FILE)"
    )
