"""Fixes from the report/sweep audit, round 2 (/tmp/audits/report2): the lenient
read's "records skipped" note reaches every command that simulates (finding 2), an
interrupted sweep always exits (3), the Wilcoxon test drops tied blocks and is exact
where the docs promise it (5), and a rerun marks the previous table stale (9)."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from schedlab import read, simulate
from schedlab.experiment.sweep import read_table
from schedlab.testing import run_cli

SKIPPED = "1 record was skipped by the lenient read"


def bad_swf(path: Path, jobs: int = 12, procs: int = 8) -> Path:
    """``jobs`` good SWF jobs then one record whose submit time is ``abc`` (what
    a lenient read skips, as the audit's sw/bad.swf)."""
    lines = [f"; MaxProcs: {procs}\n"]
    for i in range(1, jobs + 1):
        fields = [i, 10 * i, -1, 100 + 7 * i, 1 + i % 4, -1, -1, 1 + i % 4, 400]
        fields += [-1, 1, 1 + i % 3, 1, -1, 1, 1, -1, -1]
        lines.append(" ".join(str(f) for f in fields) + "\n")
    lines.append("999 abc 0 10 1 -1 -1 1 100 -1 1 1 1 -1 1 1 -1 -1\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines))
    return path


def count(text: str, needle: str = SKIPPED) -> int:
    return text.count(needle)


# ------------------------------------------------ 2: the skipped note everywhere


def test_a_simulation_result_carries_the_skipped_count(tmp_path):
    workload = read(str(bad_swf(tmp_path / "bad.swf")), lenient=True)
    result = simulate(workload, policy="fcfs")
    assert result.meta.get("skipped") == 1
    from schedlab.comparison import simulation_notes

    notes = [n for n in simulation_notes(result) if "skipped" in n]
    assert notes == [
        "1 record was skipped by the lenient read and is not in the simulation or its metrics"
    ]


def test_no_skipped_note_for_a_clean_read(tmp_path):
    path = tmp_path / "bad.swf"
    bad_swf(path)
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:-1]))
    result = simulate(read(str(path)), policy="fcfs")
    assert "skipped" not in result.meta
    from schedlab.comparison import simulation_notes

    assert not any("skipped" in n for n in simulation_notes(result))


def test_simulate_still_prints_the_note_once(capsys, tmp_path):
    path = bad_swf(tmp_path / "bad.swf")
    code, out, err = run_cli(capsys, "simulate", str(path), "-R", "lenient=true", "--no-timings")
    assert code == 0, err
    assert count(out) == 1, out


def test_compare_text_json_and_report_carry_the_note(capsys, tmp_path):
    path = str(bad_swf(tmp_path / "bad.swf"))
    page = tmp_path / "cmp.html"
    code, out, err = run_cli(
        capsys, "compare", path, "-R", "lenient=true", "-p", "fcfs,sjf", "--report", str(page)
    )
    assert code == 0, err
    assert count(out) == 1, out  # one note for both rows
    assert count(page.read_text()) >= 1
    code, out, err = run_cli(
        capsys, "compare", path, "-R", "lenient=true", "-p", "fcfs,sjf", "--json"
    )
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert all(sum(SKIPPED in n for n in row["notes"]) == 1 for row in rows), rows


def test_report_simulate_page_carries_the_note(capsys, tmp_path):
    path = str(bad_swf(tmp_path / "bad.swf"))
    page = tmp_path / "sim.html"
    code, _, err = run_cli(
        capsys, "report", path, "-R", "lenient=true", "--simulate", "fcfs+easy", "-o", str(page)
    )
    assert code == 0, err
    assert count(page.read_text()) >= 1


def test_sweep_notes_column_and_console_carry_the_note(capsys, tmp_path):
    path = str(bad_swf(tmp_path / "bad.swf"))
    out = tmp_path / "out"
    code, stdout, err = run_cli(
        capsys, "sweep", "-w", path, "-p", "fcfs,sjf", "-R", "lenient=true",
        "--out", str(out), "--workers", "1", "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    rows = read_table(out / "results.json")
    assert rows and all(SKIPPED in r["notes"] for r in rows)
    assert count(stdout + err) >= 1, stdout + err


def test_experiment_estimates_notes_carry_the_note(capsys, tmp_path):
    path = str(bad_swf(tmp_path / "bad.swf"))
    out = tmp_path / "est"
    code, _, err = run_cli(
        capsys, "experiment", "estimates", "-w", path, "-R", "lenient=true",
        "--estimators", "actual", "--no-psp", "--no-figure", "--out", str(out), "--quiet",
    )  # fmt: skip
    assert code == 0, err
    text = (out / "estimates.txt").read_text()
    notes = text.split("Notes on bad:", 1)[1]
    assert count(notes) == 1, text
    assert count(json.dumps(json.loads((out / "estimates.json").read_text()))) >= 1


# ------------------------------------ 5: Wilcoxon: tied blocks dropped, exact test


def _brute_force_p(d: np.ndarray) -> float:
    """The two-sided signed-rank p-value by enumerating every sign of the non-zero
    differences (midranks for ties): the exact test, by hand."""
    from scipy.stats import rankdata

    d = d[d != 0]
    ranks = rankdata(np.abs(d))
    observed = ranks[d > 0].sum()
    sums = np.array(
        [sum(r for r, s in zip(ranks, signs, strict=True) if s) for signs in
         itertools.product((0, 1), repeat=len(d))]
    )  # fmt: skip
    low = np.mean(sums <= observed + 1e-9)
    high = np.mean(sums >= observed - 1e-9)
    return min(1.0, 2 * min(low, high))


# 10 blocks where the two policies agree, 11 where they differ (ranks 1..11); the
# first policy is ahead only in the blocks of ranks 7 and 11: T+ = 18, and 211 of
# the 2**11 sign patterns have T+ <= 18, so the two-sided exact p is 422 / 2048 =
# 0.2061 (the audit's case: 11 non-zero blocks of 21).
AUDIT_CASE = np.array([0.0] * 10 + [-1, -2, -3, -4, -5, -6, 7, -8, -9, -10, 11], dtype=np.float64)


def test_wilcoxon_drops_the_tied_blocks_and_is_exact():
    from schedlab.significance import _wilcoxon

    p, tested, exact = _wilcoxon(AUDIT_CASE)
    assert (tested, exact) == (11, True)
    assert p == pytest.approx(_brute_force_p(AUDIT_CASE), rel=1e-12)
    assert p == pytest.approx(0.2061, abs=5e-5)
    assert p == pytest.approx(422 / 2048, rel=1e-12)


def test_wilcoxon_is_exact_with_tied_magnitudes_too():
    from schedlab.significance import _wilcoxon

    d = np.array([0, 0, 1, 1, 2, -2, 3, -3, 4, 5, -5, 6, 7, 8, -1.0, 0])
    p, tested, exact = _wilcoxon(d)
    assert (tested, exact) == (13, True)
    assert p == pytest.approx(_brute_force_p(d), rel=1e-12)


def test_wilcoxon_edge_cases():
    from schedlab.significance import _wilcoxon

    assert _wilcoxon(np.zeros(12)) == (1.0, 0, True)
    p, tested, exact = _wilcoxon(np.array([0.0] * 9 + [3.0]))
    assert (tested, exact) == (1, True) and p == 1.0  # one sign: p = 2 * 1/2


def test_paired_difference_p_is_the_exact_one_row_by_row():
    from schedlab.significance import _wilcoxon, paired_difference

    rng = np.random.default_rng(3)
    other = rng.normal(size=21)
    sums_a = np.vstack([AUDIT_CASE, other])
    counts = np.ones_like(sums_a)
    zero = np.zeros_like(sums_a)
    *_, p = paired_difference(sums_a, counts, zero, counts, resamples=200)
    assert p[0] == pytest.approx(422 / 2048, rel=1e-12)
    assert p[1] == pytest.approx(_wilcoxon(other)[0], rel=1e-12)


def test_a_difference_reports_the_units_tested_and_a_note():
    from schedlab.significance import seed_significance

    a = [float(x) for x in AUDIT_CASE + 100]
    b = [100.0] * len(a)
    sig = seed_significance({"a": {"wait": a}, "b": {"wait": b}}, resamples=200)
    diff = sig.difference("a", "b", "wait")
    assert diff.units == 21 and diff.tested == 11
    assert diff.p_value == pytest.approx(422 / 2048, rel=1e-12)
    assert diff.to_dict()["tested"] == 11
    assert any("10 of 21 seeds" in n and "equal" in n for n in sig.notes), sig.notes


def test_many_units_use_the_approximation_and_say_so():
    from schedlab.significance import _EXACT_UNITS, seed_significance

    rng = np.random.default_rng(5)
    n = _EXACT_UNITS + 1
    a = list(rng.normal(10, 1, size=n))
    b = list(rng.normal(10, 1, size=n))
    sig = seed_significance({"a": {"wait": a}, "b": {"wait": b}}, resamples=100)
    assert sig.difference("a", "b", "wait").tested == n
    assert any("normal approximation" in note for note in sig.notes), sig.notes
    small = seed_significance({"a": {"wait": a[:20]}, "b": {"wait": b[:20]}}, resamples=100)
    assert not any("normal approximation" in note for note in small.notes)


def test_compare_ci_on_kth300_gives_the_exact_p(capsys, tmp_path, swf_dir):
    """The audit's case: the first 300 jobs of KTH-SP2 in 2 h blocks, 21 blocks of
    which 10 agree: the exact test on the 11 others gives p = 0.2061 (0.1823 was
    scipy's normal approximation)."""
    import gzip

    source = swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz"
    if not source.exists():
        pytest.skip("KTH-SP2 log not available")
    lines, jobs = [], 0
    with gzip.open(source, "rt") as handle:
        for line in handle:
            if not line.startswith(";"):
                jobs += 1
                if jobs > 300:
                    break
            lines.append(line)
    trace = tmp_path / "kth300.swf"
    trace.write_text("".join(lines))
    code, out, err = run_cli(
        capsys, "compare", str(trace), "-p", "fcfs+easy,sjf+conservative", "--ci",
        "--window", "2h", "-m", "wait", "--stat", "mean", "--json",
    )  # fmt: skip
    assert code == 0, err
    diff = json.loads(out)["significance"]["differences"][0]
    assert diff["units"] == 21 and diff["tested"] == 11, diff
    assert diff["p_value"] == pytest.approx(0.2061, abs=5e-5)


# ------------------------------------------------ 3: an interrupted sweep exits


def _slow_chunk(cells, out_dir):
    """A worker's chunk: the real one for seed 1, else a cell that takes long."""
    import schedlab.experiment.sweep as sweep_module

    if cells[0][0].seed == 1:
        return sweep_module._real_run_chunk(cells, out_dir)
    time.sleep(25)
    return sweep_module._real_run_chunk(cells, out_dir)


def test_an_interrupt_stops_the_workers_at_once(tmp_path, monkeypatch):
    import multiprocessing

    import schedlab.experiment.sweep as sweep_module
    from schedlab.experiment.sweep import Cell, run_sweep

    monkeypatch.setattr(sweep_module, "_real_run_chunk", sweep_module._run_chunk, raising=False)
    monkeypatch.setattr(sweep_module, "_run_chunk", _slow_chunk)
    cells = [Cell("psp-fing:jobs=50", seed=s, metrics=("wait",)) for s in (1, 2, 3)]

    def interrupt(cell):
        raise KeyboardInterrupt

    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_sweep(cells, tmp_path / "out", workers=2, progress=False, on_computed=interrupt)
    assert time.monotonic() - began < 15  # not after the 25 s cells
    deadline = time.monotonic() + 5
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not multiprocessing.active_children()
    files = sorted(p.name for p in (tmp_path / "out" / "cells").iterdir())
    assert len(files) == 1 and files[0].endswith(".json"), files  # seed 1's, no temporary file
    json.loads((tmp_path / "out" / "cells" / files[0]).read_text())


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups")
def test_ctrl_c_always_ends_a_sweep_promptly(tmp_path):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) ends a
    running sweep with 2 workers within 30 s, every time; the cell files parse and no
    table is written."""
    exe = Path(sys.executable).with_name("schedlab")
    for attempt, delay in enumerate((2.0, 3.0, 4.0)):
        out = tmp_path / f"run{attempt}"
        proc = subprocess.Popen(
            [str(exe), "sweep", "-w", "psp-fing:jobs=5000", "--seeds", "1-40", "-p", "fcfs,sjf",
             "-b", "easy,conservative", "--out", str(out), "--workers", "2", "--no-progress"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail(f"attempt {attempt}: the sweep did not exit within 30 s of Ctrl-C")
        if proc.returncode == 0:
            continue  # finished before the signal (a fast machine): nothing to check
        assert proc.returncode == 130, err
        assert "interrupted" in err.decode()
        deadline = time.monotonic() + 10
        while _group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _group_alive(proc.pid), "a worker outlived the sweep"
        cells = out / "cells"
        names = [p.name for p in cells.iterdir()] if cells.is_dir() else []
        assert all(n.endswith(".json") and not n.startswith(".") for n in names), names
        for name in names:
            json.loads((cells / name).read_text())
        assert not (out / "results.csv").exists() and not (out / "results.json").exists()


# ------------------------------------------- 9: a rerun does not keep a stale table


def test_an_interrupted_rerun_leaves_no_stale_table(capsys, tmp_path, monkeypatch):
    import schedlab.experiment.sweep as sweep_module

    trace = bad_swf(tmp_path / "t.swf")
    trace.write_text("".join(trace.read_text().splitlines(keepends=True)[:-1]))
    out = tmp_path / "out"
    args = ["sweep", "-w", str(trace), "--out", str(out), "--workers", "1", "--no-progress"]
    code, _, err = run_cli(capsys, *args, "-p", "fcfs", "--format", "csv", "--format", "json")
    assert code == 0, err
    assert (out / "results.csv").exists() and (out / "results.json").exists()
    (out / "significance.json").write_text("{}")  # as a --ci run leaves it
    (out / "results.parquet").write_text("old")

    real = sweep_module._run_cell

    def interrupted(cell, key):
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_module, "_run_cell", interrupted)
    code, _, err = run_cli(capsys, *args, "-p", "fcfs,sjf")
    assert code == 130, err
    left = sorted(p.name for p in out.iterdir())
    assert left == ["cells"], left  # the old tables do not look like this run's
    monkeypatch.setattr(sweep_module, "_run_cell", real)
    code, _, err = run_cli(capsys, *args, "-p", "fcfs,sjf")
    assert code == 0, err
    assert {r["policy"] for r in read_table(out / "results.csv")} == {"fcfs", "sjf"}


def test_a_run_with_nothing_to_compute_rewrites_the_table(capsys, tmp_path):
    trace = bad_swf(tmp_path / "t.swf")
    trace.write_text("".join(trace.read_text().splitlines(keepends=True)[:-1]))
    out = tmp_path / "out"
    args = ["sweep", "-w", str(trace), "--out", str(out), "--workers", "1", "--no-progress"]
    assert run_cli(capsys, *args)[0] == 0
    first = (out / "results.csv").read_bytes()
    assert run_cli(capsys, *args)[0] == 0
    assert (out / "results.csv").read_bytes() == first


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
