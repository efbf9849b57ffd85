"""Audit "estexp" of ``schedlab experiment estimates``: two different trace files
whose labels collide are named as such (not "the same workload"), and ``--seed``
given when no workload takes it (every generator spec names its own seed) is the
same one-line error as with trace files only."""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from schedlab.cli import main
from schedlab.policies.estimates_experiment.experiment import run_estimates_experiment

SWF_A = """\
; MaxProcs: 8
1 0 -1 100 2 -1 -1 2 400 -1 1 1 1 -1 1 -1 -1 -1
2 1 -1 10 4 -1 -1 4 400 -1 1 2 1 -1 1 -1 -1 -1
"""
SWF_B = """\
; MaxProcs: 8
1 0 -1 50 2 -1 -1 2 300 -1 1 1 1 -1 1 -1 -1 -1
2 5 -1 5 1 -1 -1 1 300 -1 1 2 1 -1 1 -1 -1 -1
"""


def _error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The one error line of ``schedlab experiment estimates ARGS`` (exit 2)."""
    with pytest.raises(SystemExit) as info:
        main(["experiment", "estimates", *args, "--no-figure", "--quiet"])
    err = capsys.readouterr().err
    assert info.value.code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.fixture
def two_x(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """``d1/x.swf`` and ``d2/x.swf`` in ``tmp_path`` (the current folder): two
    different files with one label, ``x``."""
    monkeypatch.chdir(tmp_path)
    for folder, text in (("d1", SWF_A), ("d2", SWF_B)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.swf").write_text(text)
    return "d1/x.swf", "d2/x.swf"


def test_two_files_with_one_label_name_the_label_and_both_files(
    capsys: pytest.CaptureFixture[str], two_x: tuple[str, str], tmp_path: Path
) -> None:
    first, second = two_x
    line = _error(capsys, "-w", first, "-w", second, "--output", "out")
    assert "the same workload" not in line, line
    assert f"--workload {second}: its label 'x' is already used by {first}" in line, line
    assert not (tmp_path / "out").exists()
    with pytest.raises(schedlab.UsageError, match=r"label 'x' is already used by d1/x\.swf"):
        run_estimates_experiment([first, second], None, figure=False)


def test_a_file_and_its_gz_twin_collide_by_label(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gzip

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.swf").write_text(SWF_A)
    with gzip.open(tmp_path / "a.swf.gz", "wt") as handle:
        handle.write(SWF_B)
    line = _error(capsys, "-w", "a.swf", "-w", "a.swf.gz", "--output", "out")
    assert "--workload a.swf.gz: its label 'a' is already used by a.swf" in line, line


def test_the_same_file_twice_is_still_the_same_workload(
    capsys: pytest.CaptureFixture[str], two_x: tuple[str, str]
) -> None:
    first, _ = two_x
    line = _error(capsys, "-w", first, "-w", f"./{first}", "--output", "out")
    assert "the same workload is given twice" in line, line


@pytest.mark.parametrize(
    "workloads",
    [
        ("lublin:jobs=50,seed=3,estimates=tsafrir",),
        ("lublin:jobs=50,seed=3,estimates=tsafrir", "lublin:jobs=60,seed=4,estimates=tsafrir"),
        ("d1/x.swf", "lublin:jobs=50,seed=3,estimates=tsafrir"),
    ],
)
def test_seed_that_no_workload_takes_is_refused(
    capsys: pytest.CaptureFixture[str],
    two_x: tuple[str, str],
    tmp_path: Path,
    workloads: tuple[str, ...],
) -> None:
    args = [a for w in workloads for a in ("-w", w)]
    line = _error(capsys, *args, "--seed", "5", "--output", "out")
    assert line.startswith("schedlab: error: --seed 5: "), line
    assert "names its own seed" in line and "drop --seed" in line, line
    assert not (tmp_path / "out").exists()


def test_seed_taken_by_one_spec_passes(
    capsys: pytest.CaptureFixture[str], two_x: tuple[str, str], tmp_path: Path
) -> None:
    code = main(
        [
            "experiment",
            "estimates",
            "-w",
            "lublin:jobs=50,seed=3,estimates=tsafrir",
            "-w",
            "lublin:jobs=60,estimates=tsafrir",
            "--seed",
            "5",
            "--estimators",
            "requested",
            "--no-psp",
            "--no-figure",
            "--quiet",
            "--output",
            "out",
        ]
    )
    assert code in (0, None), capsys.readouterr().err
    assert "lublin:jobs=60,estimates=tsafrir,seed=5" in capsys.readouterr().out
