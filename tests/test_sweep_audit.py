"""``schedlab sweep`` after the usability audit (2026-11-28): the notes and excluded
jobs of every cell reach the results, the estimator axis and the options simulate
has (-e, -P/-B/-E, --no-kill, --dependencies, --from, --by partition, --policies),
--ci's --level/--resamples/--seed, and machine-size errors naming the workload and
the flag, found before any cell runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import schedlab
from schedlab.experiment.config import SweepConfig, load_config
from schedlab.experiment.sweep import Cell, read_table, run_cell, run_sweep
from schedlab.measure import compute_metrics
from schedlab.testing import run_cli

GEN = "psp-fing:scenario=CF,jobs=200"


def swf(path: Path, header: str = "; MaxProcs: 8\n", requested: int = -1) -> Path:
    """A small SWF trace: 12 jobs of 1-4 processors, requested time ``requested``."""
    lines = [header]
    for i in range(1, 13):
        fields = [i, 10 * i, -1, 100 + 7 * i, 1 + i % 4, -1, -1, 1 + i % 4, requested]
        fields += [-1, 1, 1 + i % 3, 1, -1, 1, 1 + i % 2, -1, -1]
        lines.append(" ".join(str(f) for f in fields) + "\n")
    path.write_text("".join(lines))
    return path


def sweep(capsys, tmp_path: Path, *args: str) -> tuple[int, str, str, Path]:
    out = tmp_path / "out"
    code, stdout, err = run_cli(
        capsys, "sweep", *args, "--out", str(out), "--workers", "1", "--no-progress"
    )
    return code, stdout, err, out


def cell_files(out: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((out / "cells").glob("*.json"))]


def mean_wait(rows: list[dict], **where: str) -> float:
    (value,) = [
        float(r["value"])
        for r in rows
        if r["group"] == "all" and r["metric"] == "wait" and r["stat"] == "mean"
        and all(str(r[k]) == v for k, v in where.items())
    ]  # fmt: skip
    return value


def simulated_wait(source: str, **options) -> float:
    result = schedlab.simulate(schedlab.read(source), progress=False, **options)
    return float(compute_metrics(result, names=["wait"]).rows[0]["wait"]["mean"])


# ----------------------------------------------------------------- item 1: notes


def test_estimate_fallbacks_are_noted_per_cell_in_the_tables_and_on_the_console(capsys, tmp_path):
    trace = swf(tmp_path / "noreq.swf")
    code, stdout, err, out = sweep(capsys, tmp_path, "-w", str(trace), "-p", "fcfs,sjf")
    assert code == 0, err
    for suffix in ("csv", "json"):
        rows = read_table(out / f"results.{suffix}")
        assert rows and all("estimates fell back for 12 of 12 jobs" in r["notes"] for r in rows)
    assert all(
        any("perfect estimates" in note for note in record["notes"]) for record in cell_files(out)
    )
    (line,) = [ln for ln in stdout.splitlines() if "estimates fell back" in ln]
    assert line.startswith("note (2 of 2 cells): estimates fell back for 12 of 12 jobs")


# ----------------------------------------------------------------- item 3: exclusions


def test_excluded_jobs_have_a_column_and_a_console_line(capsys, tmp_path):
    code, stdout, err, out = sweep(capsys, tmp_path, "-w", GEN, "--seeds", "1-2", "--procs", "8")
    assert code == 0, err
    records = cell_files(out)
    counts = {r["key"]: r["stats"]["jobs_excluded"] for r in records}
    assert all(counts.values())
    assert all(r["stats"]["excluded"] == {"larger_than_machine": counts[r["key"]]} for r in records)
    for suffix in ("csv", "json"):
        rows = read_table(out / f"results.{suffix}")
        assert {int(r["jobs_excluded"]) for r in rows} == set(counts.values())
        assert all(int(r["jobs_excluded"]) == counts[r["cell"]] for r in rows)
    total = sum(counts.values())
    assert f"excluded: {total:,} jobs in 2 of 2 cells (larger_than_machine {total:,})" in stdout


# ----------------------------------------------------------------- item 5: axes and options


def test_estimator_axis_gives_one_cell_per_estimator_equal_to_simulate(capsys, tmp_path):
    code, _stdout, err, out = sweep(
        capsys, tmp_path, "-w", f"{GEN},seed=1", "-e", "requested,actual", "-e", "easy++"
    )
    assert code == 0, err
    assert err.startswith("3 cells: 3 run")  # a status line
    rows = read_table(out / "results.csv")
    for estimator in ("requested", "actual", "easy++"):
        assert mean_wait(rows, estimator=estimator) == pytest.approx(
            simulated_wait(f"{GEN},seed=1", estimator=estimator), rel=1e-12
        )
    assert mean_wait(rows, estimator="actual") != mean_wait(rows, estimator="requested")
    # A cell using none of the new settings keeps its key (the name of its file).
    keys = {r["cell"].get("estimator", "requested"): r["key"] for r in cell_files(out)}
    assert "estimator" not in Cell(f"{GEN},seed=1").to_dict()
    assert keys["requested"] == Cell(f"{GEN},seed=1").key


def test_component_options_kill_and_dependencies_reach_the_simulation(capsys, tmp_path):
    source = f"{GEN},seed=2"
    code, _, err, out = sweep(
        capsys, tmp_path, "-w", source, "-p", "psp", "-P", "window=5", "-B", "order=sjbf",
        "-e", "easy++", "-E", "correction=requested", "--no-kill", "--dependencies",
    )  # fmt: skip
    assert code == 0, err
    (record,) = cell_files(out)
    cell = record["cell"]
    assert cell["policy_options"] == {"window": "5"}
    assert cell["backfill_options"] == {"order": "sjbf"}
    assert cell["estimator_options"] == {"correction": "requested"}
    assert (cell["kill"], cell["dependencies"]) == (False, True)
    rows = read_table(out / "results.json")
    assert {r["options"] for r in rows} == {
        "window=5,backfill.order=sjbf,estimator.correction=requested"
    }
    assert mean_wait(rows) == simulated_wait(
        source,
        policy="psp",
        estimator="easy++",
        kill=False,
        dependencies=True,
        policy_options={"window": "5"},
        backfill_options={"order": "sjbf"},
        estimator_options={"correction": "requested"},
    )


def test_from_by_partition_and_policies_alias(capsys, tmp_path):
    trace = swf(tmp_path / "trace.log", requested=500)  # no suffix a reader claims
    code, _stdout, err, out = sweep(
        capsys, tmp_path, "-w", str(trace), "--from", "swf", "--by", "partition",
        "--policies", "fcfs,sjf", "-R", "lenient=true",
    )  # fmt: skip
    assert code == 0, err
    assert err.startswith("2 cells: 2 run")
    assert {r["cell"].get("reader") for r in cell_files(out)} == {"swf"}
    rows = read_table(out / "results.csv")
    assert {r["policy"] for r in rows} == {"fcfs", "sjf"}
    assert {r["group"] for r in rows} == {"all", "1", "2"}


def test_sweep_file_takes_estimators_options_kill_dependencies_and_from(tmp_path):
    config = tmp_path / "sweep.toml"
    config.write_text(
        'workloads = ["w.swf"]\nestimators = ["requested", "easy++"]\nkill = false\n'
        'dependencies = true\nfrom = "swf"\nby = "partition"\n'
        '[backfill_options.easy]\norder = "sjbf"\n'
        '[estimator_options."easy++"]\ncorrection = "requested"\n'
        "[allocation_options]\nx = 1\n"
    )
    cfg = load_config(config)
    first, second = cfg.cells()
    assert (first.estimator, second.estimator) == ("requested", "easy++")
    assert dict(first.estimator_options) == {} and dict(second.estimator_options) == {
        "correction": "requested"
    }
    assert all(dict(c.backfill_options) == {"order": "sjbf"} for c in (first, second))
    assert (first.kill, first.dependencies, first.reader, first.by) == (
        False,
        True,
        "swf",
        "partition",
    )
    assert dict(first.allocation_options) == {"x": 1}
    assert SweepConfig.from_mapping({"workloads": ["w"], "estimator": "actual"}).estimators == [
        "actual"
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"by": "partitions"}, "by 'partitions': expected one of"),
        ({"kill": "no"}, "kill must be true or false"),
        ({"backfill_options": {"easy": 1}}, "backfill_options must be tables keyed by backfill"),
        ({"estimators": ["a"], "estimator": "b"}, "give estimators or estimator, not both"),
    ],
)
def test_sweep_file_new_keys_are_checked(data, message):
    from schedlab.errors import UsageError

    with pytest.raises(UsageError, match=message):
        SweepConfig.from_mapping({"workloads": ["w"], **data})


def test_pooled_sweep_with_the_new_axes_equals_the_cells_one_by_one(tmp_path):
    cells = SweepConfig(
        workloads=[GEN],
        seeds=[1, 2],
        policies=["fcfs", "sjf"],
        estimators=["requested", "actual"],
        backfill_options={"easy": {"order": "sjbf"}},
        kill=False,
    ).cells()
    one_by_one = [row for cell in cells for row in run_cell(cell)["rows"]]
    pooled = run_sweep(cells, tmp_path / "pooled", workers=2, progress=False)
    assert pooled.rows == one_by_one


# ----------------------------------------------------------------- item 9: --ci options


def test_ci_level_resamples_and_seed(capsys, tmp_path):
    pytest.importorskip("scipy")
    code, _, err, out = sweep(
        capsys, tmp_path, "-w", GEN, "-p", "fcfs,sjf", "--seeds", "1-10", "-m", "wait",
        "--ci", "--level", "0.9", "--resamples", "200", "--ci-seed", "3",
    )  # fmt: skip
    assert code == 0, err
    (sig,) = json.loads((out / "significance.json").read_text()).values()
    assert (sig["level"], sig["resamples"], sig["seed"]) == (0.9, 200, 3)


def test_ci_keeps_the_estimators_of_a_sweep_apart(capsys, tmp_path):
    pytest.importorskip("scipy")
    code, _, err, out = sweep(
        capsys, tmp_path, "-w", GEN, "--seeds", "1-10", "-e", "requested,actual", "-m", "wait",
        "--ci",
    )  # fmt: skip
    assert code == 0, err
    (sig,) = json.loads((out / "significance.json").read_text()).values()
    assert sig["policies"] == [
        "fcfs+easy (estimator=requested)",
        "fcfs+easy (estimator=actual)",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--ci-seed", "0"],
            "--ci-seed needs --ci (it only sets the statistics of --ci; the workloads' seeds "
            "are --seeds)",
        ),
        (["--level", "0.9"], "--level needs --ci (it only sets the statistics of --ci)"),
        (["--resamples", "200"], "--resamples needs --ci (it only sets the statistics of --ci)"),
    ],
)
def test_ci_options_without_ci_are_a_usage_error(capsys, tmp_path, args, message):
    code, stdout, err, out = sweep(capsys, tmp_path, "-w", GEN, *args)
    assert code == 2 and stdout == ""
    assert err == f"schedlab: error: {message} (see schedlab sweep --help)\n"
    assert not out.exists()


# ----------------------------------------------------------------- item 12: machine size


def test_a_workload_without_machine_size_fails_before_any_cell_runs(capsys, tmp_path):
    trace = swf(tmp_path / "nosize.swf", header="; Version: 2.2\n", requested=500)
    code, stdout, err, out = sweep(capsys, tmp_path, "-w", GEN, "-w", str(trace), "--seeds", "1-2")
    assert code == 2 and stdout == ""
    assert err == (
        f"schedlab: error: {trace}: the machine size is unknown: the workload has no "
        "MaxProcs or MaxNodes header; give it with --procs N or --platform FILE "
        "(procs = N or platform = FILE in a sweep file)\n"
    )
    assert not (out / "cells").exists()  # no cell ran


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_machine_size_error_inside_a_cell_names_the_workload_and_the_flag(
    capsys, tmp_path, workers
):
    trace = swf(tmp_path / "nosize.swf", header="; Version: 2.2\n", requested=500)
    code, _, err = run_cli(
        capsys, "sweep", "-w", str(trace), "-w", GEN, "-p", "fcfs,sjf",
        "--out", str(tmp_path / "out"), "--workers", workers, "--no-progress",
    )  # fmt: skip
    assert code == 2
    assert err.startswith(f"schedlab: error: cell {trace} ") and err.count("\n") == 1
    assert "give it with --procs N or --platform FILE" in err and "procs=" not in err


@pytest.mark.parametrize(
    ("table", "name"),
    [
        ("policy_options", "psp"),
        ("backfill_options", "conservative"),
        ("estimator_options", "easy++"),
    ],
)
def test_an_option_table_naming_no_component_of_the_sweep_is_an_error(
    table: str, name: str
) -> None:
    """A typo in ``[policy_options.NAME]`` (a component the sweep does not run) was
    silently ignored: the options never reached any cell."""
    from schedlab.errors import UsageError

    data: dict = {"workloads": ["psp-fing:jobs=50"], "policies": ["fcfs"], table: {name: {"x": 1}}}
    with pytest.raises(
        UsageError, match=rf"\[{table}\.{re.escape(name)}\]: '{re.escape(name)}' is not a"
    ):
        SweepConfig.from_mapping(data)
    axis = {"policy_options": "policies", "backfill_options": "backfills"}
    data[axis.get(table, "estimators")] = [name]
    SweepConfig.from_mapping(data)  # named on its axis: accepted
