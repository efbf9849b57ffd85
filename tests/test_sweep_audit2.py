"""``schedlab sweep`` and ``compare`` after the second sweep audit (2026-11-29,
/tmp/audits/sweep2): Dask workers read the user's files (absolute paths, checked
digests), seeds are bounded for every table format, damaged cell files are rerun
with a note, files named inside a generator spec are resolved and keyed, ``~`` is
expanded, inline options fill the ``options`` column and one cell spelled two ways
is a duplicate, ``NAME:`` takes a seed, and ``--workers`` with ``--scheduler`` is
refused."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from schedlab.errors import UsageError
from schedlab.experiment.config import SweepConfig, load_config, parse_seeds
from schedlab.experiment.sweep import Cell, read_table, run_sweep
from schedlab.testing import run_cli
from sweep_files import platform_file, swf


def one_error_line(code: int, err: str) -> str:
    lines = err.splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("schedlab: error: "), err
    assert "internal error" not in err and "Traceback" not in err
    return lines[0]


def sweep(capsys, *args: str) -> tuple[int, str, str]:
    return run_cli(capsys, "sweep", *args, "--workers", "1", "--no-progress")


def jobs_of(rows: list[dict]) -> set[int]:
    return {int(r["jobs"]) for r in rows if r["metric"] == "wait" and r["group"] == "all"}


# ------------------------------------------------------------------ 1. Dask paths


def test_dask_workers_in_another_folder_read_the_users_files(tmp_path, monkeypatch):
    """Workers started in another folder, holding files of the same relative names,
    simulate the user's files (trace, platform, a generator's base), not theirs."""
    import distributed

    theirs, ours = tmp_path / "worker", tmp_path / "proj"
    swf(theirs / "traces" / "t.swf", jobs=5)
    platform_file(theirs / "plat.toml", nodes=64)
    swf(ours / "traces" / "t.swf", jobs=12)
    platform_file(ours / "plat.toml", nodes=4)
    monkeypatch.chdir(theirs)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        monkeypatch.chdir(ours)
        cells = [
            Cell("traces/t.swf", metrics=["wait"]),
            Cell("traces/t.swf", metrics=["wait"], platform="plat.toml"),
            Cell("tsafrir-estimates:base=traces/t.swf", seed=1, metrics=["wait"]),
        ]
        dask = run_sweep(cells, ours / "d", scheduler=cluster.scheduler_address, progress=False)
    local = run_sweep(cells, ours / "l", workers=1, progress=False)
    assert dask.engine == "dask"
    assert jobs_of(dask.rows) == {12}
    assert dask.rows == local.rows  # the workload column as the user wrote it
    assert [r["procs"] for r in dask.rows] == [r["procs"] for r in local.rows]
    for cell in cells:
        d = json.loads((ours / "d" / "cells" / f"{cell.key}.json").read_text())
        loc = json.loads((ours / "l" / "cells" / f"{cell.key}.json").read_text())
        assert d["cell"] == loc["cell"] == cell.to_dict()
        assert d.get("inputs") == loc.get("inputs") == (cell.inputs() or None)


def test_dask_worker_seeing_another_file_content_is_an_error(tmp_path, monkeypatch):
    """A worker whose copy of an input differs from the file the key was computed
    from fails the sweep, naming the file; nothing is filed under the key."""
    import distributed
    from schedlab.experiment import sweep as sweep_module

    real = sweep_module._run_chunk
    log = str(tmp_path / "sent.txt")  # what the worker got (the function is pickled)

    def tampered(chunk, out_dir):
        with open(log, "a") as handle:
            handle.writelines(f"{cell.workload}\n" for cell, _ in chunk)
        records = real(chunk, out_dir)
        for record in records:
            record["inputs"] = {"workload": "0" * 64}
        return records

    swf(tmp_path / "t.swf")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sweep_module, "_run_chunk", tampered)
    cell = Cell("t.swf", metrics=["wait"])
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        with pytest.raises(UsageError, match=r"t\.swf") as info:
            run_sweep([cell], tmp_path / "o", scheduler=cluster.scheduler_address, progress=False)
    assert "\n" not in str(info.value) and "differ" in str(info.value)
    sent = Path(log).read_text().splitlines()
    assert sent == [str(tmp_path / "t.swf")]
    assert not (tmp_path / "o" / "cells" / f"{cell.key}.json").exists()


# ------------------------------------------------------------------ 2. seeds


@pytest.mark.parametrize("seeds", ["9223372036854775808", "1,18446744073709551616"])
def test_seed_beyond_int64_is_refused_at_parse_time(capsys, tmp_path, seeds):
    code, _, err = sweep(
        capsys, "-w", "lublin:jobs=20", "--seeds", seeds, "--out", str(tmp_path / "o"),
        "--format", "parquet",
    )  # fmt: skip
    line = one_error_line(code, err)
    assert "--seeds" in line and "2**63 - 1" in line
    assert not (tmp_path / "o").exists()


def test_seed_beyond_int64_in_a_file_names_the_key(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(f'workloads = ["lublin:jobs=20"]\nseeds = [{2**63}]\n')
    with pytest.raises(UsageError, match=r"s\.toml: seeds: .*2\*\*63 - 1"):
        load_config(path)
    assert parse_seeds(2**63 - 1) == [2**63 - 1]


def test_largest_seed_writes_parquet(capsys, tmp_path):
    pytest.importorskip("pyarrow")
    code, _, err = sweep(
        capsys, "-w", "lublin:jobs=20", "--seeds", str(2**63 - 1), "-m", "wait",
        "--out", str(tmp_path / "o"), "--format", "parquet",
    )  # fmt: skip
    assert code == 0, err
    rows = read_table(tmp_path / "o" / "results.parquet")
    assert {r["seed"] for r in rows} == {2**63 - 1}


# ------------------------------------------------------------------ 3. damaged cells


@pytest.mark.parametrize("damage", ["no-rows", "other-cell"])
def test_damaged_cell_file_that_parses_is_rerun_with_a_note(capsys, tmp_path, damage):
    out = tmp_path / "o"
    args = ("-w", "lublin:jobs=20", "--seeds", "1-3", "-m", "wait", "--out", str(out))
    code, _, err = sweep(capsys, *args)
    assert code == 0, err
    before = (out / "results.csv").read_bytes()
    keys = [
        c.key for c in SweepConfig(["lublin:jobs=20"], seeds=[1, 2, 3], metrics=["wait"]).cells()
    ]
    victim = out / "cells" / f"{keys[2]}.json"
    if damage == "no-rows":
        victim.write_text('{"format": 2}')
    else:
        shutil.copy(out / "cells" / f"{keys[0]}.json", victim)
    code, stdout, err = sweep(capsys, *args)
    assert code == 0, err
    assert "1 run (inline), 2 already finished" in err
    assert f"cells/{keys[2]}.json" in stdout and "damaged" in stdout
    assert (out / "results.csv").read_bytes() == before
    assert json.loads(victim.read_text())["key"] == keys[2]


def test_intact_rerun_prints_no_note(capsys, tmp_path):
    args = ("-w", "lublin:jobs=20", "--seeds", "1-2", "-m", "wait", "--out", str(tmp_path / "o"))
    assert sweep(capsys, *args)[0] == 0
    code, stdout, _ = sweep(capsys, *args)
    assert code == 0 and "damaged" not in stdout


# ------------------------------------------------------------------ 4. generator files


def test_generator_base_file_is_in_the_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    swf(tmp_path / "ts" / "base.swf", jobs=12)
    cell = Cell("tsafrir-estimates:base=ts/base.swf", seed=1, metrics=["wait"])
    first = run_sweep([cell], "o", workers=1, progress=False)
    assert jobs_of(first.rows) == {12}
    swf(tmp_path / "ts" / "base.swf", jobs=6)
    again = Cell("tsafrir-estimates:base=ts/base.swf", seed=1, metrics=["wait"])
    assert again.key != first.computed[0]
    second = run_sweep([again], "o", workers=1, progress=False)
    assert len(second.computed) == 1 and jobs_of(second.rows) == {6}


def test_generator_base_file_of_a_sweep_file_is_taken_from_its_folder(tmp_path, monkeypatch):
    swf(tmp_path / "traces" / "t.swf", jobs=5)  # the current folder's: not meant
    swf(tmp_path / "proj" / "traces" / "t.swf", jobs=12)
    (tmp_path / "proj" / "s.toml").write_text(
        'workloads = ["tsafrir-estimates:base=traces/t.swf"]\nseeds = [1]\nmetrics = ["wait"]\n'
    )
    monkeypatch.chdir(tmp_path)
    config = load_config("proj/s.toml")
    assert config.workloads == [f"tsafrir-estimates:base={os.path.join('proj', 'traces', 't.swf')}"]
    outcome = run_sweep(config.cells(), "o", workers=1, progress=False)
    assert jobs_of(outcome.rows) == {12}


# ------------------------------------------------------------------ 5. ~


def test_tilde_in_a_sweep_file_is_the_home_folder(capsys, tmp_path, monkeypatch):
    home = tmp_path / "home"
    swf(home / "t.swf", jobs=7)
    platform_file(home / "plat.toml", nodes=3)
    monkeypatch.setenv("HOME", str(home))
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "s.toml").write_text(
        'workloads = ["~/t.swf"]\nplatform = "~/plat.toml"\nmetrics = ["wait"]\nout = "~/res"\n'
    )
    monkeypatch.chdir(tmp_path)
    code, _, err = sweep(capsys, "proj/s.toml")
    assert code == 0, err
    assert not (tmp_path / "~").exists() and not (tmp_path / "proj" / "~").exists()
    rows = read_table(home / "res" / "results.json")
    assert jobs_of(rows) == {7} and {r["procs"] for r in rows} == {6}
    assert {r["workload"] for r in rows} == {str(home / "t.swf")}


def test_tilde_on_the_command_line_is_the_home_folder(capsys, tmp_path, monkeypatch):
    home = tmp_path / "home"
    swf(home / "t.swf", jobs=7)
    platform_file(home / "plat.toml", nodes=3)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    code, _, err = sweep(
        capsys, "-w", "~/t.swf", "--platform", "~/plat.toml", "-m", "wait", "--out", "~/res"
    )
    assert code == 0, err
    assert not (tmp_path / "~").exists()
    assert jobs_of(read_table(home / "res" / "results.json")) == {7}


# ------------------------------------------------------------------ 6. options, duplicates


def test_inline_options_fill_the_options_column(capsys, tmp_path):
    swf(tmp_path / "t.swf")
    code, _, err = sweep(
        capsys, "-w", str(tmp_path / "t.swf"), "-p", "psp:window=5,new_user_class=1",
        "-e", "easy++:correction=none", "-B", "order=sjbf", "-m", "wait",
        "--out", str(tmp_path / "o"),
    )  # fmt: skip
    assert code == 0, err
    rows = read_table(tmp_path / "o" / "results.json")
    assert {r["options"] for r in rows} == {
        "new_user_class=1,window=5,backfill.order=sjbf,estimator.correction=none"
    }
    assert {r["policy"] for r in rows} == {"psp:window=5,new_user_class=1"}


def test_options_column_without_inline_options_is_unchanged():
    cell = Cell(
        "t.swf", policy="psp", policy_options={"window": 5}, backfill_options={"order": "sjbf"}
    )
    assert cell.options_text() == "window=5,backfill.order=sjbf"
    assert Cell("t.swf").options_text() == ""


@pytest.mark.parametrize(
    ("args", "axis"),
    [
        (("-p", "psp:window=5", "-p", "psp", "-P", "window=5"), "policies"),
        (("-p", "psp,psp:window=10"), "policies"),  # 10 is psp's default window
        (("-b", "easy,aggressive"), "backfill"),
        (("-e", "actual,perfect"), "estimators"),
        (("-w", "t.swf", "-w", "./t.swf"), "workloads"),
    ],
)
def test_one_cell_spelled_two_ways_is_a_duplicate(capsys, tmp_path, monkeypatch, args, axis):
    swf(tmp_path / "t.swf")
    monkeypatch.chdir(tmp_path)
    workload = () if "-w" in args else ("-w", "t.swf")
    code, _, err = sweep(capsys, *workload, *args, "-m", "wait", "--out", "o")
    line = one_error_line(code, err)
    assert f"{axis}: " in line and "same" in line
    assert not (tmp_path / "o").exists()


def test_duplicate_through_an_option_table_of_a_file(tmp_path):
    swf(tmp_path / "t.swf")
    path = tmp_path / "s.toml"
    path.write_text(
        'workloads = ["t.swf"]\npolicies = ["psp:window=5", "psp"]\n'
        "[policy_options.psp]\nwindow = 5\n"
    )
    with pytest.raises(UsageError, match="policies: 'psp:window=5' and 'psp'"):
        load_config(path).cells()


def test_distinct_cells_are_not_duplicates(tmp_path):
    swf(tmp_path / "t.swf")
    config = SweepConfig(
        [str(tmp_path / "t.swf")], policies=["psp:window=5", "psp"], backfills=["easy", "none"]
    )
    assert len(config.cells()) == 4


def test_compare_same_combination_two_spellings_is_an_error(capsys, tmp_path):
    swf(tmp_path / "t.swf")
    for spec in ("fcfs+easy,fcfs+aggressive", "psp:window=10+easy,psp"):
        code, _, err = run_cli(capsys, "compare", str(tmp_path / "t.swf"), "-p", spec)
        line = one_error_line(code, err)
        assert "same" in line and "-p" in line


# ------------------------------------------------------------------ 7. NAME: with seeds


def test_generator_spec_ending_in_a_colon_takes_the_seeds(capsys, tmp_path):
    assert Cell("lublin:", seed=1).source() == "lublin:seed=1"
    code, _, err = sweep(
        capsys, "-w", "lublin:", "--seeds", "1", "-m", "wait", "--out", str(tmp_path / "o")
    )
    assert code == 0, err


# ------------------------------------------------------------------ 8. --workers


def test_workers_with_scheduler_is_refused(capsys, tmp_path):
    code, _, err = run_cli(
        capsys, "sweep", "-w", "lublin:jobs=20", "--scheduler", "tcp://127.0.0.1:9",
        "--workers", "3", "--out", str(tmp_path / "o"), "--no-progress",
    )  # fmt: skip
    line = one_error_line(code, err)
    assert "--workers" in line and "--scheduler" in line
    assert not (tmp_path / "o").exists()


def test_a_plain_word_option_naming_a_file_is_no_input(tmp_path, monkeypatch):
    """``scenario=CF`` stays an option value when a file ``CF`` happens to exist."""
    monkeypatch.chdir(tmp_path)
    key = Cell("psp-fing:scenario=CF,jobs=20", seed=1).key
    (tmp_path / "CF").write_text("not a trace\n")
    cell = Cell("psp-fing:scenario=CF,jobs=20", seed=1)
    assert cell.inputs() == {} and cell.key == key
    (tmp_path / "s.toml").write_text('workloads = ["psp-fing:scenario=CF,jobs=20"]\n')
    assert load_config(tmp_path / "s.toml").workloads == ["psp-fing:scenario=CF,jobs=20"]
