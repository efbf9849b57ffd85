"""Leftovers of earlier audits, group A: ``simulate --allocations-out`` without
``--platform`` refused before any work (1); a sweep file's seeds refused in the
spellings ``--seeds`` refuses (2); the interrupted outputs of one in-process
``main()`` not reported by the next (3); ``google-dask``'s unknown ``--to`` and its
Parquet status line (4); ``Result.to_pandas()``'s ``estimate_fell_back`` column
(5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
import schedlab.api
import schedlab.io
import schedlab.sim.api
from schedlab.errors import UsageError
from schedlab.testing import run_cli

SWF = """\
; MaxProcs: 8
1 0 -1 100 2 -1 -1 2 400 -1 1 1 1 -1 1 -1 -1 -1
2 1 -1 10 4 -1 -1 4 400 -1 1 2 1 -1 1 -1 -1 -1
3 2 -1 50 2 -1 -1 2 400 -1 1 3 1 -1 1 -1 -1 -1
"""


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "t.swf"
    path.write_text(SWF)
    return path


# ------------------------------------------------- 1: --allocations-out, no --platform


def test_allocations_out_without_platform_is_refused_before_reading(
    capsys: Any, tmp_path: Path
) -> None:
    """The input does not exist: the refusal comes before it is read."""
    missing = tmp_path / "missing.swf"
    target = tmp_path / "al.csv"
    code, out, err = run_cli(capsys, "simulate", str(missing), "--allocations-out", str(target))
    assert code == 2, err
    assert err.strip().splitlines() == [
        "schedlab: error: --allocations-out needs --platform FILE (allocations are nodes)"
    ]
    assert out == ""
    assert not target.exists()


def test_allocations_out_without_platform_runs_no_simulation(
    capsys: Any, trace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_run(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the simulation ran")

    monkeypatch.setattr(schedlab.sim.api, "simulate", no_run)
    monkeypatch.setattr(schedlab.api, "read", no_run)
    code, _, err = run_cli(
        capsys, "simulate", str(trace), "--allocations-out", str(tmp_path / "al.csv")
    )
    assert code == 2, err
    assert "--allocations-out needs --platform" in err


# ------------------------------------------------------------- 2: a sweep file's seeds


@pytest.mark.parametrize(
    "seeds",
    ['"1_0"', '["1_0"]', '"1_0-1_2"', '"1-1_2"', '"١-٢"', '["٣"]', '"１"', '"1,2_0"'],
)
def test_a_sweep_file_refuses_the_seeds_the_flag_refuses(tmp_path: Path, seeds: str) -> None:
    from schedlab.experiment.config import load_config

    path = tmp_path / "s.toml"
    path.write_text(f'workloads = ["psp-fing:scenario=CF"]\nseeds = {seeds}\n', encoding="utf-8")
    with pytest.raises(UsageError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: seeds "), message
    assert "expected numbers in ASCII digits, no underscores" in message
    assert "\n" not in message


def test_a_json_sweep_file_refuses_them_too(tmp_path: Path) -> None:
    from schedlab.experiment.config import load_config

    path = tmp_path / "s.json"
    path.write_text(json.dumps({"workloads": ["psp-fing:scenario=CF"], "seeds": ["1_0"]}))
    with pytest.raises(UsageError, match=r"s\.json: seeds '1_0': expected numbers in ASCII"):
        load_config(path)


def test_the_sweep_command_names_the_file_and_key(capsys: Any, tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('workloads = ["psp-fing:scenario=CF"]\nseeds = "1_0"\n')
    code, _, err = run_cli(capsys, "sweep", str(path), "--out", str(tmp_path / "o"))
    assert code == 2, err
    assert err.strip().splitlines() == [
        f"schedlab: error: {path}: seeds '1_0': expected numbers in ASCII digits, no underscores"
    ]


@pytest.mark.parametrize(
    ("seeds", "expected"),
    [('"1-3"', [1, 2, 3]), ('"1,7"', [1, 7]), ('["4", 5]', [4, 5]), ("[1_0]", [10])],
)
def test_plain_seeds_still_read(tmp_path: Path, seeds: str, expected: list[int]) -> None:
    """(``[1_0]`` is TOML's own integer syntax: the file holds the number 10.)"""
    from schedlab.experiment.config import load_config

    path = tmp_path / "s.toml"
    path.write_text(f'workloads = ["psp-fing:scenario=CF"]\nseeds = {seeds}\n')
    assert load_config(path).seeds == expected


def test_a_sweep_files_procs_is_a_number_not_text(tmp_path: Path) -> None:
    from schedlab.experiment.config import load_config

    path = tmp_path / "s.toml"
    path.write_text('workloads = ["psp-fing:scenario=CF"]\nprocs = "1_0"\n')
    with pytest.raises(UsageError, match=r"procs must be a positive whole number, got '1_0'"):
        load_config(path)


# ------------------------------------------ 3: interrupted outputs, per invocation


def test_interrupted_outputs_are_per_invocation(
    capsys: Any, trace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupt() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(schedlab.io, "_check_interrupted", interrupt)
    first, second = tmp_path / "a.swf", tmp_path / "b.swf"
    code, _, err = run_cli(capsys, "convert", str(trace), str(first))
    assert code == 130, err
    assert f"not written: {first} " in err
    code, _, err = run_cli(capsys, "convert", str(trace), str(second))
    assert code == 130, err
    assert err.strip().splitlines() == [
        f"schedlab: error: schedlab convert interrupted (Ctrl-C); not written: {second} "
        "(any previous version is unchanged)"
    ]
    monkeypatch.undo()  # a third, uninterrupted call reports nothing either
    code, _, err = run_cli(capsys, "convert", str(trace), str(second))
    assert code == 0, err
    assert "interrupted (" not in err and "not written" not in err
    assert schedlab.io.interrupted_outputs() == []


# ------------------------------------------------------------------ 4: google-dask


@pytest.fixture(scope="module")
def google_trace(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from schedlab.formats.google.fixtures import generate_trace

    return generate_trace(
        tmp_path_factory.mktemp("leftA") / "trace", collections=20, shards=2, seed=3
    )


@pytest.fixture
def no_dask_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading or reducing the trace fails the test: the errors come first."""
    from schedlab.formats.google import dask_reader, v3_reader

    def no_work(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the trace was reduced")

    monkeypatch.setattr(dask_reader, "require_dask", no_work)
    monkeypatch.setattr(v3_reader, "read_v3", no_work)


def test_google_dask_unknown_to_is_said_as_convert_says_it(
    capsys: Any, google_trace: Any, tmp_path: Path, no_dask_work: None
) -> None:
    code, _, err = run_cli(
        capsys, "google-dask", str(google_trace.directory), str(tmp_path / "o.swf"), "--to", "nope"
    )
    assert code == 2, err
    (line,) = err.strip().splitlines()
    assert line.startswith("schedlab: error: --to 'nope': unknown writer (available: "), line
    assert "swf" in line
    code, _, convert_err = run_cli(capsys, "convert", "x.swf", "o.swf", "--to", "nope")
    assert convert_err == err


def test_google_dask_output_with_no_writer_is_refused_first(
    capsys: Any, google_trace: Any, tmp_path: Path, no_dask_work: None
) -> None:
    target = tmp_path / "o.xyz"
    code, _, err = run_cli(capsys, "google-dask", str(google_trace.directory), str(target))
    assert code == 2, err
    assert "cannot tell the output format from the name; choose one with --to" in err


@pytest.mark.parametrize(("count", "word"), [(1, "partition"), (3, "partitions")])
def test_google_dask_parquet_status_line(
    capsys: Any,
    google_trace: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    count: int,
    word: str,
) -> None:
    from schedlab.formats.google import dask_reader

    monkeypatch.setattr(dask_reader, "require_dask", lambda: None)
    monkeypatch.setattr(dask_reader, "write_parquet_dask", lambda *a, **k: count)
    target = tmp_path / "pq"
    code, _, err = run_cli(
        capsys, "google-dask", str(google_trace.directory), str(target), "--parquet"
    )
    assert code == 0, err
    assert err.strip().splitlines() == [f"wrote {count} Parquet {word} to {target}"]


# ------------------------------------------------- 5: to_pandas' estimate_fell_back


def _result() -> Any:
    from schedlab.testing import workload_from_rows

    # job 2 has no requested time: the requested estimator falls back for it
    workload = workload_from_rows([(0, 10, 2, 20), (1, 5, 2, None), (2, 5, 1, 10)], procs=4)
    return schedlab.simulate(workload, policy="fcfs", backfill="easy")


def test_to_pandas_has_estimate_fell_back() -> None:
    pytest.importorskip("pandas")
    result = _result()
    assert result.estimate_fell_back is not None
    frame = result.to_pandas()
    assert str(frame["estimate_fell_back"].dtype) == "boolean"
    assert frame["estimate_fell_back"].tolist() == [bool(v) for v in result.estimate_fell_back]
    assert frame["estimate_fell_back"].tolist() == [False, True, False]
    columns = list(frame.columns)
    assert columns[columns.index("original_submit") + 1] == "estimate_fell_back"


def test_to_pandas_estimate_fell_back_unknown_stays_unknown() -> None:
    pd = pytest.importorskip("pandas")
    import attrs

    result = attrs.evolve(_result(), estimate_fell_back=None)  # a result built by hand
    column = result.to_pandas()["estimate_fell_back"]
    assert str(column.dtype) == "boolean"
    assert column.isna().all() and len(column) == 3
    assert pd.isna(column.iloc[0])


def test_to_arrow_has_estimate_fell_back() -> None:
    pytest.importorskip("pyarrow")
    import attrs

    result = _result()
    table = result.to_arrow()
    assert table.column("estimate_fell_back").to_pylist() == [False, True, False]
    assert str(table.schema.field("estimate_fell_back").type) == "bool"
    unknown = attrs.evolve(result, estimate_fell_back=None).to_arrow()
    assert unknown.column("estimate_fell_back").to_pylist() == [None, None, None]
    assert table.column_names[: len(table.column_names)] == list(result.to_pandas().columns)
    assert np.array_equal(table.column("killed").to_numpy(), result.killed)
