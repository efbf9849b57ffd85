"""The records a lenient read skipped are said once, wherever a simulation's
metrics are shown: ``compute_metrics(result)`` carries the note (a library user
saw it only on the workload's metrics), and the commands that print a
simulation's notes beside its metrics' print it once (embedding audit)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import schedlab
from schedlab.testing import run_cli

BAD = (
    "; MaxProcs: 8\n"
    "1 0 5 5 2 -1 -1 2 100 -1 1 1 1 -1 1 1 -1 -1\n"
    "2 x 0 100 1 -1 -1 1 200 -1 1 2 1 -1 1 1 -1 -1\n"
    "3 10 0 100 1 -1 -1 1 200 -1 1 2 1 -1 1 1 -1 -1\n"
)
NOTE = "1 record was skipped by the lenient read and is not in the simulation or its metrics"


def _trace(tmp_path: Path) -> Path:
    path = tmp_path / "bad.swf"
    path.write_text(BAD)
    return path


def test_compute_metrics_of_a_result_says_what_the_lenient_read_skipped(tmp_path: Path) -> None:
    w = schedlab.read(_trace(tmp_path), lenient=True)
    r = schedlab.simulate(w, procs=8)
    assert NOTE in schedlab.compute_metrics(r).notes
    assert len(r.workload.to_arrays()) == 2


def test_simulate_and_compare_print_the_note_once(tmp_path: Path, capsys: Any) -> None:
    trace = str(_trace(tmp_path))
    for args in (
        ["simulate", trace, "-R", "lenient=true", "--no-timings"],
        ["compare", trace, "-R", "lenient=true", "-p", "fcfs+easy,sjf+easy", "--no-timings"],
    ):
        code, out, err = run_cli(capsys, *args)
        assert code == 0, err
        assert (out + err).count("record was skipped") == 1, out + err


def test_compare_report_refuses_a_suffix_that_is_not_html(tmp_path: Path, capsys: Any) -> None:
    trace = str(_trace(tmp_path))
    code, _out, err = run_cli(
        capsys, "compare", trace, "-R", "lenient=true", "-p", "fcfs", "--report",
        str(tmp_path / "cr.png"),
    )  # fmt: skip
    assert code == 2
    assert "--report" in err and "cr.png" in err
    assert not (tmp_path / "cr.png").exists()
