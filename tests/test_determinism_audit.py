"""Determinism audit (2026-11-28): the same input and options give the same bytes.

Each test pins one output that differed between two runs of the same command: the
``sim (s)`` timing column of ``compare``'s table (``--no-timings`` leaves it out),
and the path given on the command line embedded in ``report`` pages and in the
comment of ``platform infer`` files (they now name the file, as the titles do), so
that the output is the same from any folder, by an absolute or a relative path.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from schedlab.testing import run_cli

HPC2N = "HPC2N-2002_excerpt-3170jobs_alea.swf"


def test_compare_no_timings_table_is_the_same_bytes(capsys, swf_dir: Path) -> None:
    trace = str(swf_dir / HPC2N)
    outputs = []
    for _ in range(2):
        code, out, err = run_cli(
            capsys, "compare", trace, "-p", "fcfs+easy,sjf+easy", "--no-timings"
        )
        assert code == 0, err
        outputs.append(out)
    assert "sim (s)" not in outputs[0]
    assert "fcfs" in outputs[0] and "sjf" in outputs[0]
    assert outputs[0] == outputs[1]
    # Without the flag the timing column is still there (it measures this machine).
    code, out, err = run_cli(capsys, "compare", trace, "-p", "fcfs+easy")
    assert code == 0, err
    assert "sim (s)" in out


def test_report_page_does_not_depend_on_how_the_path_was_given(
    capsys, swf_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("matplotlib")
    trace = swf_dir / HPC2N
    pages = []
    for i, (cwd, given) in enumerate(
        [(tmp_path, str(trace)), (swf_dir, HPC2N), (tmp_path, os.path.relpath(trace, tmp_path))]
    ):
        monkeypatch.chdir(cwd)
        out = tmp_path / f"page{i}.html"
        code, _, err = run_cli(capsys, "report", given, "--static", "-o", str(out))
        assert code == 0, err
        pages.append(out.read_bytes())
    assert pages[0] == pages[1] == pages[2]
    page = pages[0].decode("utf-8")
    assert f"<dd>{HPC2N}</dd>" in page
    assert str(swf_dir) not in page


def test_platform_infer_file_does_not_depend_on_how_the_path_was_given(
    capsys, swf_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = swf_dir / HPC2N
    files = []
    for i, (cwd, given) in enumerate([(tmp_path, str(trace)), (swf_dir, HPC2N)]):
        monkeypatch.chdir(cwd)
        out = tmp_path / f"platform{i}.toml"
        code, _, err = run_cli(capsys, "platform", "infer", given, "-o", str(out))
        assert code == 0, err
        files.append(out.read_bytes())
    assert files[0] == files[1]
    text = files[0].decode("utf-8")
    assert f"from {HPC2N}." in text.splitlines()[0]
    assert str(swf_dir) not in text
