"""Sweeps and experiments, audit round 3: a NUL in a sweep file's paths, an
experiment too large to hold, the psp experiment's ``wrote`` lines, and workers
that outlived a killed sweep."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from schedlab.cli import main

SCHEDLAB = [sys.executable, "-m", "schedlab"]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('{"workloads": ["psp-fing:jobs=50"], "out": "x\\u0000y"}', "out"),
        ('{"workloads": ["psp-fing:jobs=50"], "platform": "p\\u0000.toml"}', "platform"),
    ],
)
def test_a_nul_in_a_sweep_files_path_is_a_one_line_error(
    text: str, key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "n.json"
    config.write_text(text)
    with pytest.raises(SystemExit) as stop:
        main(["sweep", str(config), "--no-progress"])
    assert stop.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"schedlab: error: {config}: {key} ") and "NUL" in line


def test_an_experiment_too_large_is_refused_before_any_cell_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    with pytest.raises(SystemExit) as stop:
        main(["experiment", "psp", "--no-figures", "--out", str(tmp_path / "o"),
              "--workloads", "10000000000"])  # fmt: skip
    assert stop.value.code == 2
    assert time.monotonic() - started < 30
    err = capsys.readouterr().err
    assert "--workloads 10000000000: 120,000,000,000 simulations; an experiment has at most" in err
    assert not (tmp_path / "o").exists()


def test_the_psp_experiment_says_it_wrote_results_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "e1"
    main(["experiment", "psp", "--workloads", "1", "-G", "jobs=100", "--out", str(out),
          "--no-figures"])  # fmt: skip
    err = capsys.readouterr().err
    assert (out / "results.json").is_file()
    assert f"wrote {out / 'results.json'}" in err


def _workers_of(out: Path) -> list[int]:
    found = subprocess.run(["pgrep", "-f", "--", f"--out {out}"], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split()]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux")
def test_workers_end_with_a_killed_sweep(tmp_path: Path) -> None:
    config = tmp_path / "k.toml"
    config.write_text(
        'workloads = ["psp-fing:jobs=4000,scenario=CF", "psp-fing:jobs=4000,scenario=DI"]\n'
        'policies = ["fcfs", "sjf"]\nbackfills = ["easy", "conservative"]\nseeds = "1-200"\n'
    )
    out = tmp_path / "rk"
    sweep = subprocess.Popen(
        [*SCHEDLAB, "sweep", str(config), "--no-progress", "--workers", "2", "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(_workers_of(out)) < 3:
        time.sleep(0.2)
    assert len(_workers_of(out)) >= 3, "the sweep's workers did not start"
    time.sleep(1.0)
    os.kill(sweep.pid, signal.SIGKILL)
    sweep.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and _workers_of(out):
        time.sleep(0.2)
    left = _workers_of(out)
    for pid in left:  # never leave them running, even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert not left


def test_a_nul_in_a_path_option_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["sweep", "-w", "psp-fing:jobs=50", "--out", str(tmp_path / "a\0b")])
    assert stop.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == "schedlab: error: a path given holds a NUL character, which no file name can"
