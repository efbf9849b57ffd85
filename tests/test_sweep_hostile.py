"""``schedlab sweep`` against hostile input: metrics without a value under ``--ci``,
seed ranges too large to expand, a third-party policy that crashes (inline and in
worker processes), a full disk and damaged cell files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from schedlab.errors import FormatError, UsageError
from schedlab.experiment import sweep as sweep_module
from schedlab.experiment.config import (
    MAX_CELLS,
    SweepConfig,
    check_seed_count,
    load_config,
    parse_seeds,
)
from schedlab.experiment.sweep import Cell, cell_path, run_sweep
from schedlab.significance import seed_significance
from schedlab.testing import run_cli as run_main

CRASHING = Path(__file__).parent / "fixtures" / "crashing_site"
PLUGIN_CONTROLS = (
    "SCHEDLAB_STRICT_PLUGINS",
    "SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD",
    "SCHEDLAB_ALLOW_PLUGINS",
    "SCHEDLAB_BLOCK_PLUGINS",
)


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("schedlab: error: "), err
    assert "internal error" not in err and "Traceback" not in err
    return lines[0]


def cli(*args: str, site: Path | None = None, memory: int | None = None):
    """The real command line in a child process (``site`` on its path; at most
    ``memory`` bytes of address space, so that a regression fails, not swaps)."""
    env = {k: v for k, v in os.environ.items() if k not in PLUGIN_CONTROLS}
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))

    def limit() -> None:
        if memory is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [sys.executable, "-m", "schedlab", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        preexec_fn=limit,
    )


# ----------------------------------------------------------------- --ci and NaN


def test_sweep_ci_ranks_no_metric_without_a_value(capsys, tmp_path):
    """Fairness needs user ids, which a Lublin workload lacks: every seed's value is
    NaN. The assessment lists it without an interval and leaves it out of the
    ranking, with a note, instead of failing on the NaN."""
    out = tmp_path / "out"
    code, stdout, err = run_main(
        capsys,
        "sweep", "-w", "lublin:jobs=100", "--seeds", "1-3", "-p", "fcfs,sjf",
        "-m", "fairness,wait", "--ci", "--out", str(out), "--workers", "1", "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    assert "note: no ranking of fairness: no value for fcfs+easy, sjf+easy" in stdout
    data = json.loads((out / "significance.json").read_text())["lublin:jobs=100"]
    assert [r["metric"] for r in data["ranks"]] == ["wait"]
    fairness = [i for i in data["intervals"] if i["metric"] == "fairness"]
    assert [i["estimate"] for i in fairness] == [None, None]
    assert data["notes"] == ["no ranking of fairness: no value for fcfs+easy, sjf+easy"]


def test_seed_significance_of_a_metric_missing_for_one_policy():
    values = {
        "a": {"m": [1.0, 2.0, 3.0], "w": [1.0, 2.0, 3.0]},
        "b": {"m": [float("nan")] * 3, "w": [2.0, 1.0, 4.0]},
    }
    got = seed_significance(values, resamples=100, labels=[1, 2, 3])
    assert [r.metric for r in got.ranks] == ["w"]
    assert got.notes == ["no ranking of m mean: no value for b"]
    assert got.interval("a", "m").estimate == 2.0
    assert got.interval("b", "m").estimate is None
    json.loads(got.to_json())  # still plain JSON


# ----------------------------------------------------------------- too many cells


def test_a_huge_seed_range_is_refused_without_expanding_it(tmp_path):
    """--seeds 1-100000000 used to be expanded into a list first (killed by the
    OOM killer); under a 3 GB address-space limit a regression fails here."""
    run = cli(
        "sweep", "-w", "lublin:jobs=10", "--seeds", "1-100000000", "--out", str(tmp_path),
        "--workers", "1", "--no-progress", memory=3 * 2**30,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr
    assert run.stderr == (
        "schedlab: error: --seeds '1-100000000': 100,000,000 seeds; a sweep has at most "
        "100,000 cells\n"
    )
    sweep_file = tmp_path / "sweep.toml"
    sweep_file.write_text('workloads = ["lublin:jobs=10"]\nseeds = "1-1000000000"\n')
    run = cli("sweep", str(sweep_file), "--out", str(tmp_path), memory=3 * 2**30)
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith(f"schedlab: error: {sweep_file}: seeds '1-1000000000': ")
    assert run.stderr.count("\n") == 1


def test_seed_counts_and_cell_counts_are_bounded(tmp_path):
    with pytest.raises(UsageError, match=r"^seeds '1-3,5-100000000': 99,999,999 seeds"):
        parse_seeds("1-3,5-100000000")
    with pytest.raises(UsageError, match="at most 100,000 cells"):
        parse_seeds(list(range(MAX_CELLS + 1)))
    assert len(parse_seeds(f"1-{MAX_CELLS}")) == MAX_CELLS  # the bound itself is fine
    check_seed_count("1-x,7")  # malformed parts are parse_seeds' to report
    with pytest.raises(UsageError, match=r"^s.toml: seeds '0-100000': 100,001 seeds"):
        SweepConfig.from_mapping({"workloads": ["w.swf"], "seeds": "0-100000"}, "s.toml")
    # The product of the axes: 50,001 seeds x 2 policies, counted before any cell exists.
    cfg = SweepConfig(
        workloads=["lublin:jobs=10"], seeds=list(range(50_001)), policies=["fcfs", "sjf"]
    )
    with pytest.raises(UsageError, match=r"^the sweep has 100,002 cells \(1 workloads, 50,001"):
        cfg.cells()
    # Seeds only multiply generator workloads: a trace file is one cell.
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 4\n")
    cfg.workloads = [str(trace)]
    assert len(cfg.cells()) == 2
    (tmp_path / "big.json").write_text(json.dumps({"workloads": ["x"], "seeds": "1-200000"}))
    with pytest.raises(UsageError, match="200,000 seeds"):
        load_config(tmp_path / "big.json")


# ----------------------------------------------------------------- plugins at run time


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_crashing_plugin_policy_is_named_not_an_internal_error(tmp_path, swf_dir, workers):
    run = cli(
        "sweep", "-w", str(swf_dir / "lublin_256.swf"), "-p", "crashy-key", "--out",
        str(tmp_path / "out"), "--workers", workers, "--no-progress", site=CRASHING,
    )  # fmt: skip
    assert run.returncode == 3, run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and "internal error" not in lines[0], run.stderr
    assert lines[0].startswith(
        "schedlab: error: plugin 'crashing' (schedlab-crashing 0.5.0) failed in policy "
        "'crashy-key': ValueError: cannot rank job"
    )


def test_a_format_error_in_a_worker_reads_as_the_inline_one(tmp_path):
    """A FormatError raised in a worker process is the same error in this one (plain
    pickling rebuilt it from its message alone: ``<input>: t.swf:2: ...``)."""
    bad = tmp_path / "bad.swf"
    bad.write_text("; MaxProcs: 4\n1 0 -1 abc 2\n")
    cells = [Cell(str(bad), policy="fcfs"), Cell(str(bad), policy="sjf")]
    with pytest.raises(FormatError) as inline:
        run_sweep(cells, tmp_path / "a", workers=1, progress=False)
    with pytest.raises(FormatError) as pooled:
        run_sweep(cells, tmp_path / "b", workers=2, progress=False)
    assert str(pooled.value) == str(inline.value)
    assert str(pooled.value).startswith(f"{bad}:2: ")
    assert (pooled.value.source, pooled.value.line) == (str(bad), 2)


# ----------------------------------------------------------------- full disk, damaged cells


def full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every file the sweep module writes atomically land on /dev/full."""
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")

    def mkstemp(prefix: str = "", suffix: str = "", dir: str | None = None) -> tuple[int, str]:
        return os.open("/dev/full", os.O_WRONLY), os.path.join(dir or ".", f"{prefix}x{suffix}")

    monkeypatch.setattr(sweep_module, "tempfile", types.SimpleNamespace(mkstemp=mkstemp))


def test_a_full_disk_names_the_file_of_sweep_and_report(capsys, tmp_path, monkeypatch, swf_dir):
    full_disk(monkeypatch)
    out = tmp_path / "out"
    code, _, err = run_main(
        capsys, "sweep", "-w", "lublin:jobs=20", "--out", str(out), "--workers", "1",
        "--no-progress",
    )  # fmt: skip
    assert code == 2
    (key,) = [c.key for c in SweepConfig(workloads=["lublin:jobs=20"]).cells()]
    target = out / "cells" / f"{key}.json"
    assert one_error_line(err) == f"schedlab: error: {target}: No space left on device"
    assert not any(out.joinpath("cells").iterdir())
    page = tmp_path / "r.html"
    source = str(swf_dir / "lublin_256.swf")
    code, _, err = run_main(capsys, "report", source, "--simulate", "fcfs", "-o", str(page))
    assert code == 2
    assert one_error_line(err) == f"schedlab: error: {page}: No space left on device"
    assert not page.exists()


def test_a_damaged_cell_file_is_run_again(tmp_path):
    cells = SweepConfig(workloads=["lublin:jobs=20"], policies=["fcfs", "sjf"]).cells()
    first = run_sweep(cells, tmp_path, workers=1, progress=False)
    damaged = cell_path(tmp_path, cells[1])
    for text in ("[]", '{"format": 1, "rows": [{"metric": "wait"}]}', '{"format": 1, "rows": 7}',
                 '"text"', "\udcff"):  # fmt: skip
        damaged.write_text(text, encoding="utf-8", errors="surrogateescape")
        again = run_sweep(cells, tmp_path, workers=1, progress=False)
        assert again.computed == [cells[1].key] and again.reused == [cells[0].key], text
        assert again.rows == first.rows
        assert json.loads(damaged.read_text())["key"] == cells[1].key
