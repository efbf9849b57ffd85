"""``schedlab convert --all-losses`` (conversion audit, finding 4): the default loss
summary stays short but says how to see what it left out; ``--all-losses`` prints
every loss, one line per field and action; ``--strict-lossless`` says how many kinds
of loss there are and how to list them (and, with ``--all-losses``, lists them)."""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from schedlab.cli import main
from schedlab.losses import collect_losses

#: Unknown, zero and fractional values, a dependency: 16 kinds of loss in Batsim.
SMALL = """\
; UnixStartTime: 1000000000
; MaxProcs: 64
1 0 10 100.5 8 50 100 8 200 300 1 1 1 1 1 1 -1 -1
2 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 7
"""
HEADING = "schedlab: what {} {} carry (field: records, what was done):"


def _run(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, list[str]]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err.splitlines()


def _report(lines: list[str], name: str, verb: str = "could not") -> list[str]:
    start = lines.index(HEADING.format(name, verb))
    return [line[2:] for line in lines[start + 1 :] if line.startswith("  ")]


@pytest.fixture()
def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.swf"
    path.write_text(SMALL)
    return path


def _expected(small: Path, tmp_path: Path) -> list[str]:
    """Every loss of the conversion, as the Python API reports them."""
    with collect_losses() as losses:
        schedlab.write(schedlab.read(small), tmp_path / "api.json", format="batsim")
    assert len(losses) == 16  # more than a 12-line summary shows
    return [str(loss) for loss in losses]


def test_the_summary_says_how_to_see_the_lines_it_cut(
    small: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    code, lines = _run(capsys, "convert", str(small), str(tmp_path / "o.json"), "--to", "batsim")
    assert code == 0
    report = _report(lines, "o.json")
    assert len(report) == 12
    assert report[-1] == "... and 5 more (--all-losses lists every loss)"


def test_all_losses_prints_every_loss(
    small: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    expected = _expected(small, tmp_path)
    code, lines = _run(
        capsys, "convert", str(small), str(tmp_path / "o.json"), "--to", "batsim", "--all-losses"
    )
    assert code == 0
    assert _report(lines, "o.json") == expected
    assert "preceding_job_number: 1 record, not written" in expected  # was hidden


def test_all_losses_unfolds_header_labels_cut_from_the_summary(
    swf_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    source = swf_dir / "HPC2N-2002_excerpt-3170jobs_alea.swf"
    code, lines = _run(capsys, "convert", str(source), str(tmp_path / "cell"), "--to", "google")
    assert code == 0
    summary = _report(lines, "cell")
    header = next(line for line in summary if line.startswith("header: "))
    assert "...) in up to " in header  # the labels do not fit on the line
    assert summary[-1] == "(--all-losses lists every loss)"
    code, lines = _run(
        capsys, "convert", str(source), str(tmp_path / "cell2"), "--to", "google", "--all-losses"
    )
    assert code == 0
    full = _report(lines, "cell2")
    labels = [line for line in full if line.startswith("header.")]
    assert len(labels) == int(header.split()[1])  # "header: 19 label(s) ..."
    assert not any(line.startswith("header: ") or "--all-losses" in line for line in full)


def test_a_short_summary_has_no_hint(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    source = tmp_path / "c.swf"
    source.write_text("; UnixStartTime: 1000000000\n1 0 1 10 4 -1 -1 4 100 -1 1 1 1 -1 -1 -1 1 2\n")
    code, lines = _run(capsys, "convert", str(source), str(tmp_path / "c.accounting"))
    assert code == 0
    report = _report(lines, "c.accounting")
    assert report and not any("--all-losses" in line for line in report)


def test_strict_lossless_counts_the_losses_and_says_how_to_list_them(
    small: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "o.json"
    code, lines = _run(
        capsys, "convert", str(small), str(out), "--to", "batsim", "--strict-lossless"
    )
    assert code == 2
    assert lines == [
        "schedlab: error: conversion would lose wait_time in 2 records (not written) (and 15 "
        "more kind(s) of loss, --all-losses lists all 16); nothing written (--strict-lossless)"
    ]
    assert not out.exists()


def test_strict_lossless_with_all_losses_lists_them_before_the_error(
    small: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    expected = _expected(small, tmp_path)
    out = tmp_path / "o.json"
    code, lines = _run(
        capsys, "convert", str(small), str(out), "--to", "batsim", "--strict-lossless",
        "--all-losses",
    )  # fmt: skip
    assert code == 2
    assert _report(lines, "o.json", "would not") == expected
    assert lines[-1] == (
        "schedlab: error: conversion would lose wait_time in 2 records (not written) (and 15 "
        "more kind(s) of loss, listed above); nothing written (--strict-lossless)"
    )
    assert not out.exists()


def test_strict_lossless_with_one_loss_names_it_without_a_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    source = tmp_path / "one.swf"
    source.write_text(
        "; UnixStartTime: 1000000000\n1 0 1 10.5 4 3 100 4 100 -1 1 1 1 -1 -1 -1 -1 -1\n"
    )
    code, lines = _run(
        capsys, "convert", str(source), str(tmp_path / "o.accounting"), "--strict-lossless"
    )
    assert code == 2
    (line,) = lines
    assert line == (
        "schedlab: error: conversion would lose run_time in 1 record (rounded to whole "
        "seconds (the colon layout)); nothing written (--strict-lossless)"
    )


def test_simulate_output_takes_all_losses_too(tmp_path, capsys) -> None:
    from schedlab.testing import run_cli

    lublin = Path(__file__).resolve().parents[2] / "shared" / "data" / "swf" / "lublin_256.swf"
    out = tmp_path / "s.json"
    code, _out, err = run_cli(
        capsys, "simulate", str(lublin), "-o", str(out), "--to", "google", "--all-losses",
        "--no-timings",
    )  # fmt: skip
    assert code == 0, err
    listed = [line for line in err.splitlines() if line.startswith("  ")]
    code, _out, short = run_cli(
        capsys, "simulate", str(lublin), "-o", str(tmp_path / "t"), "--to", "google",
        "--no-timings",
    )  # fmt: skip
    assert code == 0, short
    summary = [line for line in short.splitlines() if line.startswith("  ")]
    assert len(listed) > len(summary)
    assert "--all-losses lists every loss" in short
