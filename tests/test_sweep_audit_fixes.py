"""``schedlab sweep`` after the sweep audit (2026-11-28, /tmp/audits/sweep): the
statistics of ``[metric_options] stats`` are kept, a changed input file reruns its
cell, empty seed lists and duplicated entries are one-line errors naming the key,
``-p NAME:k=v,k2=v2`` is one component, a malformed ``--scheduler`` is a usage
error, ``--ci`` without the ``all`` rows is an error, relative paths of a sweep
file are taken from its folder, ``-M stats=a,b`` holds a list, and every
sweep-file error names the file."""

from __future__ import annotations

import hashlib
import json
import os
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


def sweep(capsys, tmp_path: Path, *args: str, out: str = "out") -> tuple[int, str, str, Path]:
    target = tmp_path / out
    code, stdout, err = run_cli(
        capsys, "sweep", *args, "--out", str(target), "--workers", "1", "--no-progress"
    )
    return code, stdout, err, target


def rows_of(out: Path, metric: str = "wait", group: str = "all") -> list[dict]:
    return [
        r for r in read_table(out / "results.json") if r["metric"] == metric and r["group"] == group
    ]


# ------------------------------------------------------------ 1: stats kept


def test_stats_option_keeps_the_statistics_asked_for_and_no_empty_ones(capsys, tmp_path):
    trace = swf(tmp_path / "t.swf")
    config = tmp_path / "s.toml"
    config.write_text(
        f'workloads = ["{trace}"]\nmetrics = ["wait"]\n[metric_options]\nstats = "mean,p95,std"\n'
    )
    code, _, err, out = sweep(capsys, tmp_path, str(config))
    assert code == 0, err
    rows = rows_of(out)
    assert [r["stat"] for r in rows] == ["mean", "p95", "std", "count"]
    assert all(r["value"] is not None for r in rows)


def test_default_statistics_are_unchanged(capsys, tmp_path):
    trace = swf(tmp_path / "t.swf")
    code, _, err, out = sweep(capsys, tmp_path, "-w", str(trace), "-m", "wait")
    assert code == 0, err
    stats = [r["stat"] for r in rows_of(out)]
    assert stats == ["mean", "median", "p90", "p99", "max", "count"]


def test_ci_with_stats_leaving_out_the_mean_is_an_error_before_running(capsys, tmp_path):
    config = tmp_path / "s.toml"
    config.write_text(
        'workloads = ["psp-fing:jobs=50"]\nseeds = "1-3"\npolicies = ["fcfs", "sjf"]\n'
        'metrics = ["wait"]\n[metric_options]\nstats = "p95"\n'
    )
    code, _, err, out = sweep(capsys, tmp_path, str(config), "--ci")
    line = one_error_line(code, err)
    assert "stats" in line and "mean" in line
    assert not (out / "cells").exists()


# ------------------------------------------------------------ 3: changed inputs


def test_a_changed_trace_reruns_its_cell(tmp_path):
    trace = swf(tmp_path / "t.swf", jobs=12)
    out = tmp_path / "out"
    cells = SweepConfig(workloads=[str(trace)], metrics=["wait"]).cells()
    first = run_sweep(cells, out, workers=1, progress=False)
    again = run_sweep(cells, out, workers=1, progress=False)
    assert len(again.reused) == 1 and not again.computed
    swf(trace, jobs=5)  # same path, other content
    changed = run_sweep(
        SweepConfig(workloads=[str(trace)], metrics=["wait"]).cells(), out, workers=1,
        progress=False,
    )  # fmt: skip
    assert len(changed.computed) == 1 and not changed.reused
    jobs = {r["jobs"] for r in changed.rows if r["group"] == "all"}
    assert jobs == {5} and {r["jobs"] for r in first.rows} == {12}


def test_a_changed_platform_file_reruns_its_cell(tmp_path):
    trace = swf(tmp_path / "t.swf", jobs=12)
    plat = platform_file(tmp_path / "cluster.toml", nodes=4)
    out = tmp_path / "out"

    def run():
        cfg = SweepConfig(workloads=[str(trace)], platform=str(plat), metrics=["wait"])
        return run_sweep(cfg.cells(), out, workers=1, progress=False)

    assert {r["procs"] for r in run().rows} == {8}
    platform_file(plat, nodes=2)
    rerun = run()
    assert len(rerun.computed) == 1
    assert {r["procs"] for r in rerun.rows} == {4}


def test_the_key_does_not_depend_on_the_file_time_only_on_its_bytes(tmp_path):
    trace = swf(tmp_path / "t.swf")
    key = Cell(workload=str(trace)).key
    os.utime(trace, (1_000_000, 1_000_000))
    assert Cell(workload=str(trace)).key == key
    swf(trace, jobs=11)
    assert Cell(workload=str(trace)).key != key
    # a generator cell has no input file: it keeps its settings-only key
    generated = Cell(workload="psp-fing:jobs=10", seed=1)
    settings = json.dumps(generated.to_dict(), sort_keys=True, default=str)
    assert generated.inputs() == {}
    assert generated.key == hashlib.sha256(settings.encode()).hexdigest()[:16]


# ------------------------------------------------------------ 4: empty seeds


@pytest.mark.parametrize("seeds", ["", " , ", ","])
def test_empty_seeds_option_is_an_error_naming_it(capsys, tmp_path, seeds):
    code, _, err, _ = sweep(capsys, tmp_path, "-w", "psp-fing:jobs=50", "--seeds", seeds)
    assert "--seeds" in one_error_line(code, err)


@pytest.mark.parametrize("text", ["seeds = []", 'seeds = ""', 'seeds = " , "'])
def test_empty_seeds_in_a_file_is_an_error_naming_the_file_and_key(capsys, tmp_path, text):
    config = tmp_path / "e.toml"
    config.write_text(f'workloads = ["psp-fing:jobs=50"]\n{text}\n')
    code, _, err, _ = sweep(capsys, tmp_path, str(config))
    line = one_error_line(code, err)
    assert "e.toml: seeds" in line


def test_parse_seeds_of_nothing_given_is_no_seeds_but_empty_text_is_an_error():
    assert parse_seeds(None) == []
    with pytest.raises(UsageError, match="seeds"):
        parse_seeds("")
    with pytest.raises(UsageError, match="seeds"):
        parse_seeds([])


# ------------------------------------------------------------ 5: duplicates


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('policies = ["fcfs", "fcfs"]', "policies: 'fcfs' is given twice"),
        ('backfill = ["easy", "easy"]', "backfill: 'easy' is given twice"),
        ('estimators = ["requested", "requested"]', "estimators: 'requested' is given twice"),
        ("seeds = [1, 1]", "seeds: 1 is given twice"),
        ('seeds = "1-3,2"', "seeds: 2 is given twice"),
    ],
)
def test_a_duplicated_entry_of_a_file_names_the_key_and_the_value(capsys, tmp_path, text, message):
    config = tmp_path / "d.toml"
    config.write_text(f'workloads = ["psp-fing:jobs=50"]\n{text}\n')
    code, _, err, _ = sweep(capsys, tmp_path, str(config))
    assert f"d.toml: {message}" in one_error_line(code, err)


def test_a_duplicated_workload_of_a_file_names_it(capsys, tmp_path):
    trace = swf(tmp_path / "t.swf")
    config = tmp_path / "d.json"
    config.write_text(json.dumps({"workloads": [str(trace), str(trace)]}))
    code, _, err, _ = sweep(capsys, tmp_path, str(config))
    assert f"d.json: workloads: {str(trace)!r} is given twice" in one_error_line(code, err)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-e", "requested,requested"), "-e/--estimator: 'requested' is given twice"),
        (("-p", "fcfs", "-p", "fcfs"), "-p/--policy: 'fcfs' is given twice"),
        (("-b", "easy,easy"), "-b/--backfill: 'easy' is given twice"),
        (("--seeds", "1,1"), "--seeds: 1 is given twice"),
        (("-w", "psp-fing:jobs=50"), "-w/--workload: 'psp-fing:jobs=50' is given twice"),
    ],
)
def test_a_duplicated_entry_on_the_command_line_names_the_option(capsys, tmp_path, args, message):
    code, _, err, _ = sweep(capsys, tmp_path, "-w", "psp-fing:jobs=50", *args)
    assert message in one_error_line(code, err)


def test_run_sweep_names_a_duplicated_cell():
    cell = Cell(workload="psp-fing:jobs=10", seed=1)
    with pytest.raises(UsageError, match="psp-fing:jobs=10 seed 1 fcfs"):
        run_sweep([cell, cell], "unused-out-folder", workers=1, progress=False)


# ------------------------------------------------------------ 6: -p NAME:k=v,k2=v2


def test_a_comma_and_key_value_continue_a_components_options(capsys, tmp_path):
    code, _, err, out = sweep(
        capsys, tmp_path, "-w", "psp-fing:jobs=50", "--seeds", "1", "-m", "wait",
        "-p", "psp:window=5,new_user_class=1,fcfs",
    )  # fmt: skip
    assert code == 0, err
    policies = sorted({(r["policy"], r["options"]) for r in rows_of(out)})
    # the inline options are in the options column (sweep audit 2, finding 6)
    assert policies == [
        ("fcfs", ""),
        ("psp:window=5,new_user_class=1", "new_user_class=1,window=5"),
    ]


def test_a_sweep_file_string_axis_continues_options_too():
    cfg = SweepConfig.from_mapping(
        {"workloads": ["x.swf"], "policies": "psp:window=5,new_user_class=1,fcfs"}
    )
    assert cfg.policies == ["psp:window=5,new_user_class=1", "fcfs"]


# ------------------------------------------------------------ 7: --scheduler


@pytest.mark.parametrize("address", ["nonsense", "tcp://", "tcp://host:port"])
def test_a_malformed_scheduler_address_is_a_usage_error(capsys, tmp_path, address):
    pytest.importorskip("distributed")
    code, _, err, _ = sweep(capsys, tmp_path, "-w", "psp-fing:jobs=50", "--scheduler", address)
    assert "--scheduler" in one_error_line(code, err)


# ------------------------------------------------------------ 8: --ci, no all row


def test_ci_without_the_all_rows_is_an_error_before_running(capsys, tmp_path):
    config = tmp_path / "t.toml"
    config.write_text(
        'workloads = ["psp-fing:jobs=50"]\nseeds = "1-3"\npolicies = ["fcfs", "sjf"]\n'
        'metrics = ["wait"]\nby = "user"\n[metric_options]\ntotal = false\n'
    )
    code, _, err, out = sweep(capsys, tmp_path, str(config), "--ci")
    line = one_error_line(code, err)
    assert "total" in line and "--ci" in line
    assert not (out / "cells").exists()


# ------------------------------------------------------------ 10: relative paths


def test_relative_paths_of_a_sweep_file_are_taken_from_its_folder(capsys, tmp_path, monkeypatch):
    proj = tmp_path / "proj"
    swf(proj / "traces" / "t.swf")
    platform_file(proj / "cluster.toml", nodes=4)
    (proj / "sweep.toml").write_text(
        'workloads = ["traces/t.swf"]\nplatform = "cluster.toml"\nout = "results"\n'
        'metrics = ["wait"]\n'
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, _, err = run_cli(
        capsys, "sweep", os.path.join("..", "proj", "sweep.toml"), "--workers", "1",
        "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    assert (proj / "results" / "results.csv").is_file()
    assert not (elsewhere / "results").exists()
    assert {r["procs"] for r in read_table(proj / "results" / "results.json")} == {8}


def test_load_config_keeps_generator_specs_and_absolute_paths(tmp_path):
    trace = swf(tmp_path / "abs.swf")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "s.json").write_text(
        json.dumps({"workloads": ["psp-fing:jobs=10", str(trace)], "seeds": [1]})
    )
    cfg = load_config(sub / "s.json")
    assert cfg.workloads == ["psp-fing:jobs=10", str(trace)]


def test_a_sweep_file_in_the_current_folder_reads_paths_as_before(tmp_path, monkeypatch):
    swf(tmp_path / "traces" / "t.swf")
    (tmp_path / "s.toml").write_text('workloads = ["traces/t.swf"]\nout = "r"\n')
    monkeypatch.chdir(tmp_path)
    cfg = load_config("s.toml")
    assert cfg.workloads == ["traces/t.swf"] and cfg.out == "r"


# ------------------------------------------------------------ 11: -M stats=a,b


def test_metric_option_stats_takes_a_list(capsys, tmp_path):
    trace = swf(tmp_path / "t.swf")
    code, stdout, err = run_cli(
        capsys, "compare", str(trace), "-p", "fcfs,sjf", "-m", "wait", "-M", "stats=p95,mean",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(stdout)
    wait = data["rows"][0]["metrics"]["rows"][0]["wait"]
    assert "p95" in wait and "mean" in wait


def test_metric_options_still_split_at_a_comma_before_key_value(capsys, tmp_path):
    trace = swf(tmp_path / "t.swf")
    code, stdout, err = run_cli(
        capsys, "metrics", str(trace), "-m", "wait,bounded-slowdown",
        "-M", "stats=p95,mean,threshold=60", "--json",
    )  # fmt: skip
    assert code == 0, err
    wait = json.loads(stdout)["rows"][0]["wait"]
    assert set(wait) >= {"p95", "mean"} and "median" not in wait


def test_a_metric_option_list_starting_without_a_key_is_still_an_error(capsys, tmp_path):
    trace = swf(tmp_path / "t.swf")
    code, _, err = run_cli(capsys, "metrics", str(trace), "-M", "p95,stats=mean")
    assert "expected key=value" in one_error_line(code, err)


# ------------------------------------------------------------ 13: errors name the file


def test_a_non_finite_seed_error_names_the_file(capsys, tmp_path):
    config = tmp_path / "inf.json"
    config.write_text('{"workloads": ["psp-fing:jobs=50"], "seeds": 1e400}')
    code, _, err, _ = sweep(capsys, tmp_path, str(config))
    assert "inf.json: seeds:" in one_error_line(code, err)


@pytest.mark.parametrize("seeds", ['"a-b"', "[-1]", "[1.5]", "true"])
def test_every_seed_error_of_a_file_names_the_file(capsys, tmp_path, seeds):
    config = tmp_path / "bad.json"
    config.write_text(f'{{"workloads": ["psp-fing:jobs=50"], "seeds": {seeds}}}')
    code, _, err, _ = sweep(capsys, tmp_path, str(config))
    assert "bad.json: seeds" in one_error_line(code, err)
