"""The sweep runner: cells, local processes vs Dask, resuming after a kill, tables."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from schedlab.errors import UsageError
from schedlab.experiment.config import SweepConfig, load_config, parse_seeds
from schedlab.experiment.sweep import (
    Cell,
    cell_path,
    read_table,
    run_cell,
    run_sweep,
    write_table,
)

SMALL = {
    "workloads": ["psp-fing:scenario=CF,jobs=300", "psp-fing:scenario=CFG,jobs=300"],
    "policies": ["fcfs", "psp"],
    "backfill": ["easy"],
    "seeds": [1, 2],
    "metrics": ["wait", "utilization"],
    "by": "accuracy-class",
}


def small_cells() -> list[Cell]:
    return SweepConfig.from_mapping(SMALL).cells()


def test_config_expands_workloads_seeds_policies_backfills():
    cells = small_cells()
    assert len(cells) == 2 * 2 * 2
    assert cells[0].source() == "psp-fing:scenario=CF,jobs=300,seed=1"
    assert [c.policy for c in cells[:2]] == ["fcfs", "psp"]
    assert len({c.key for c in cells}) == len(cells)
    # A trace file gets one cell, whatever the seeds.
    cfg = SweepConfig.from_mapping({"workloads": ["trace.swf"], "seeds": "1-3"})
    assert [c.seed for c in cfg.cells()] == [None]


def test_config_files_toml_and_json(tmp_path):
    toml = tmp_path / "sweep.toml"
    toml.write_text(
        textwrap.dedent(
            """
            workloads = ["psp-fing:scenario=CF,jobs=100"]
            policies = ["fcfs", "psp"]
            backfill = ["easy", "conservative"]
            seeds = "1-3,7"
            by = "user"

            [policy_options.psp]
            window = 5
            """
        )
    )
    cfg = load_config(toml)
    assert cfg.seeds == [1, 2, 3, 7]
    cells = cfg.cells()
    assert len(cells) == 4 * 2 * 2
    assert dict(next(c for c in cells if c.policy == "psp").policy_options) == {"window": 5}
    as_json = tmp_path / "sweep.json"
    as_json.write_text(json.dumps({**SMALL}))
    assert [c.key for c in load_config(as_json).cells()] == [c.key for c in small_cells()]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"workloads": ["a"], "colour": 1}, "unknown key 'colour'"),
        ({"policies": ["fcfs"]}, "at least one workload"),
        ({"workloads": ["a"], "procs": -3}, "procs"),
        ({"workloads": ["a"], "seeds": "4-1"}, "seeds"),
    ],
)
def test_config_errors_are_one_line(data, message):
    with pytest.raises(UsageError, match=message):
        SweepConfig.from_mapping(data)


def test_parse_seeds():
    assert parse_seeds("1-3,9") == [1, 2, 3, 9]
    assert parse_seeds(5) == [5]
    assert parse_seeds([2, 4]) == [2, 4]
    with pytest.raises(UsageError):
        parse_seeds("x")


def test_a_seed_in_the_spec_and_in_the_sweep_is_an_error():
    with pytest.raises(UsageError, match="seed"):
        Cell("psp-fing:seed=3", seed=1).source()


def test_cell_rows_are_tidy():
    record = run_cell(small_cells()[1])
    rows = record["rows"]
    assert {r["group"] for r in rows} == {"a1", "a2", "a3", "a4", "a5", "all"}
    waits = [r for r in rows if r["metric"] == "wait" and r["group"] == "all"]
    assert {r["stat"] for r in waits} == {"mean", "median", "p90", "p99", "max", "count"}
    count = next(r["value"] for r in waits if r["stat"] == "count")
    assert count == 300
    # Utilization is computed per group too: each class's share, adding up to "all".
    util = {r["group"]: r["value"] for r in rows if r["metric"] == "utilization"}
    assert set(util) == {"a1", "a2", "a3", "a4", "a5", "all"} and 0 < util["all"] <= 1
    shares = [v for g, v in util.items() if g != "all" and v is not None]
    assert sum(shares) == pytest.approx(util["all"])
    assert all(r["policy"] == "psp" and r["seed"] == 1 for r in rows)


def test_local_processes_equal_inline(tmp_path):
    cells = small_cells()
    inline = run_sweep(cells, tmp_path / "inline", workers=1, progress=False)
    pooled = run_sweep(cells, tmp_path / "pool", workers=2, progress=False)
    assert inline.engine == "inline" and pooled.engine == "process"
    assert inline.rows == pooled.rows
    assert len(pooled.computed) == len(cells)


def test_dask_local_cluster_equals_local_processes(tmp_path):
    import distributed  # the dev extra installs it: a missing engine must fail, not skip

    cells = small_cells()
    local = run_sweep(cells, tmp_path / "local", workers=2, progress=False)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        dask = run_sweep(
            cells, tmp_path / "dask", scheduler=cluster.scheduler_address, progress=False
        )
    assert dask.engine == "dask"
    assert dask.rows == local.rows
    for cell in cells:
        assert (
            json.loads(cell_path(tmp_path / "dask", cell).read_text())["rows"]
            == json.loads(cell_path(tmp_path / "local", cell).read_text())["rows"]
        )


KILLER = """
import os, signal, sys
from schedlab.experiment.config import SweepConfig
from schedlab.experiment.sweep import run_sweep
config = {config}
done = []
def on_computed(cell):
    done.append(cell.key)
    if len(done) == 3:
        os.kill(os.getpid(), signal.SIGKILL)
run_sweep(SweepConfig.from_mapping(config).cells(), sys.argv[1], workers=1,
          progress=False, on_computed=on_computed)
"""


def test_resume_after_a_killed_run_redoes_nothing_finished(tmp_path):
    out = tmp_path / "sweep"
    script = KILLER.format(config=repr(SMALL))
    proc = subprocess.run([sys.executable, "-c", script, str(out)], capture_output=True)
    assert proc.returncode == -9, proc.stderr.decode()
    cells = small_cells()
    finished = [c for c in cells if cell_path(out, c).exists()]
    assert len(finished) == 3
    before = {
        c.key: (cell_path(out, c).stat().st_mtime_ns, cell_path(out, c).read_bytes())
        for c in finished
    }

    ran = []
    outcome = run_sweep(cells, out, workers=1, progress=False, on_computed=ran.append)
    assert sorted(outcome.reused) == sorted(before)
    assert {c.key for c in ran} == {c.key for c in cells} - set(before)
    for key, (mtime, data) in before.items():
        path = out / "cells" / f"{key}.json"
        assert (path.stat().st_mtime_ns, path.read_bytes()) == (mtime, data)
    # A third run does nothing at all, and the result equals an uninterrupted run.
    again = run_sweep(cells, out, workers=1, progress=False)
    assert again.computed == [] and again.engine == "none"
    fresh = run_sweep(cells, tmp_path / "fresh", workers=1, progress=False)
    assert again.rows == fresh.rows


@pytest.mark.parametrize("suffix", [".csv", ".json", ".parquet"])
def test_tables_round_trip_and_are_deterministic(tmp_path, suffix):
    rows = run_cell(small_cells()[0])["rows"]
    first = write_table(rows, tmp_path / f"a{suffix}")
    second = write_table(rows, tmp_path / f"b{suffix}")
    if suffix != ".parquet":
        assert first.read_bytes() == second.read_bytes()
    back = read_table(first)
    assert len(back) == len(rows)
    assert list(back[0]) == list(rows[0])
    value = next(r for r in back if r["stat"] == "mean" and r["group"] == "all")["value"]
    expected = next(r for r in rows if r["stat"] == "mean" and r["group"] == "all")["value"]
    assert float(value) == expected


def test_cli_sweep_runs_then_resumes(tmp_path):
    from click.testing import CliRunner
    from schedlab.cli import cli

    args = [
        "sweep",
        "-w",
        "psp-fing:scenario=CF,jobs=200",
        "-p",
        "fcfs,psp",
        "--seeds",
        "1-2",
        "-m",
        "wait",
        "--out",
        str(tmp_path),
        "--workers",
        "1",
        "--format",
        "csv",
    ]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    assert "4 cells: 4 run" in first.output
    table = read_table(tmp_path / "results.csv")
    assert {(r["policy"], r["seed"]) for r in table} == {
        ("fcfs", "1"),
        ("fcfs", "2"),
        ("psp", "1"),
        ("psp", "2"),
    }
    written = (tmp_path / "results.csv").read_bytes()
    second = CliRunner().invoke(cli, args)
    assert "4 cells: 0 run (none), 4 already finished" in second.output
    assert (tmp_path / "results.csv").read_bytes() == written


def test_cli_sweep_without_workloads_is_a_usage_error():
    from schedlab.cli import main

    with pytest.raises(SystemExit) as info:
        main(["sweep"])
    assert info.value.code == 2


def test_chunked_workers_write_the_table_of_the_runs_one_by_one(tmp_path, monkeypatch):
    """Whatever the workers and chunks, the table is byte for byte the one of the
    cells run one by one, and every cell's file is stored (by the workers)."""
    from schedlab.experiment import sweep

    cells = SweepConfig.from_mapping(
        {"workloads": ["psp-fing:jobs=150"], "seeds": "1-7", "metrics": ["wait", "utilization"]}
    ).cells()
    alone = [row for cell in cells for row in run_cell(cell)["rows"]]
    expected = write_table(alone, tmp_path / "alone.csv").read_bytes()
    # Large chunks (several cells each) after the first cells, then one cell each.
    for name, seconds in (("big", 60.0), ("single", 0.0)):
        monkeypatch.setattr(sweep, "CHUNK_SECONDS", seconds)
        for workers in (2, 3):
            out = tmp_path / f"{name}-{workers}"
            outcome = run_sweep(cells, out, workers=workers, progress=False)
            assert outcome.engine == "process" and len(outcome.computed) == len(cells)
            assert write_table(outcome.rows, out / "t.csv").read_bytes() == expected
            assert all(cell_path(out, c).exists() for c in cells)
            again = run_sweep(cells, out, workers=workers, progress=False)
            assert again.computed == [] and again.rows == outcome.rows


def test_chunks_grow_to_the_measured_pace():
    from schedlab.experiment.sweep import MAX_CHUNK, _Chunker

    pending = [(Cell("psp-fing", seed=s), str(s)) for s in range(200)]
    chunker = _Chunker(pending)
    first = chunker.take()
    assert [k for _, k in first] == ["0"]  # nothing measured yet: one cell
    chunker.measured({"stats": {"seconds": 0.01}})
    second = chunker.take()
    assert [k for _, k in second] == [str(s) for s in range(1, 26)]  # 0.25 s of 10 ms cells
    for _ in range(3):  # a mean of 2.5 ms per cell: 100 cells, capped
        chunker.measured({"stats": {"seconds": 0.0}})
    assert len(chunker.take()) == MAX_CHUNK
    taken = 1 + 25 + MAX_CHUNK
    while chunker:
        taken += len(chunker.take())
    assert taken == len(pending)


def _table_rows():
    import numpy as np
    from hypothesis import strategies as st

    value = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=8),
        st.sampled_from(["},\n  {", '"quoted", comma', "line\nbreak", "é", "", "nan"]),
        st.floats(allow_nan=True, width=64).map(np.float64),
        st.integers(-1000, 1000).map(np.int64),
    )
    keys = st.sampled_from(["cell", "metric", "value", "x,y", 'q"'])
    return st.lists(st.dictionaries(keys, value, max_size=5), max_size=6)


@pytest.mark.parametrize("suffix", ["csv", "json"])
def test_fast_table_text_equals_the_plain_one(suffix):
    """The one-call encoders write the bytes of the value-by-value reference."""
    from hypothesis import given, settings
    from schedlab.experiment import sweep

    fast = getattr(sweep, f"_{suffix}_text")
    plain = getattr(sweep, f"_{suffix}_text_plain")

    @settings(max_examples=300, deadline=None)
    @given(_table_rows())
    def check(rows):
        fields = sweep._fields(rows)
        assert fast(rows, fields) == plain(rows, fields)

    check()
    # The rows of a real cell take the fast path, with NaN-free floats.
    rows = run_cell(Cell("psp-fing:jobs=100", seed=1, metrics=("wait", "makespan")))["rows"]
    fields = sweep._fields(rows)
    assert fast(rows, fields) == plain(rows, fields)
