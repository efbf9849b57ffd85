"""``to_pandas(extras=...)`` of workloads and results: the per-job extras a
researcher needs to join a table back to the source log (the source's own job ids,
kept in extras when schedlab renumbers jobs) and to the machine (a platform run's
partition and nodes), typed columns, ``<NA>`` where a job lacks a key, and the
default table unchanged."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from schedlab.errors import UsageError
from schedlab.model import SWF_FIELDS, Job
from schedlab.platform import infer_platform

pytestmark = pytest.mark.realdata
pd = pytest.importorskip("pandas")

RESULT_COLUMNS = [
    *("start_time", "end_time", "estimate", "killed", "input_row", "original_submit"),
    "estimate_fell_back",
]
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(scope="module")
def google2011(shared_data: Path) -> schedlab.Workload:
    return schedlab.read(shared_data / "google" / "clusterdata2011_v2_sample", format="google-v2")


@pytest.fixture(scope="module")
def hpc2n(shared_data: Path) -> schedlab.Workload:
    """The first 500 jobs of HPC2N (enough for a platform run, and quick)."""
    w = schedlab.read(shared_data / "swf" / "HPC2N-2002_excerpt-3170jobs_alea.swf")
    return schedlab.Workload.from_arrays(w.to_arrays().take(np.arange(500)), w.header)


@pytest.fixture(scope="module")
def platform_result(hpc2n: schedlab.Workload) -> Any:
    platform = infer_platform(hpc2n).platform
    return schedlab.simulate(hpc2n, backfill="easy", platform=platform, allocation="first-fit")


def _extras(workload: schedlab.Workload) -> list[dict[str, Any]]:
    extras = workload.to_arrays().extras
    return [dict(e or {}) for e in extras] if extras is not None else [{}] * len(workload)


# --------------------------------------------------------------------------- default


def test_default_tables_are_unchanged(google2011: schedlab.Workload, platform_result: Any) -> None:
    assert list(google2011.to_pandas().columns) == list(SWF_FIELDS)
    assert list(google2011.to_pandas(extras=False).columns) == list(SWF_FIELDS)
    assert list(google2011.to_pandas(extras=[]).columns) == list(SWF_FIELDS)
    assert list(platform_result.to_pandas().columns) == [*SWF_FIELDS, *RESULT_COLUMNS]
    assert platform_result.to_pandas().equals(platform_result.to_pandas(extras=False))


# --------------------------------------------------------------------------- source ids


def test_google_collection_ids_join_back_to_the_trace(google2011: schedlab.Workload) -> None:
    """The 2011 trace's jobs are numbered 1..N; the trace's own job id is the extra
    ``collection_id``: an ``Int64`` column equal to it job by job."""
    frame = google2011.to_pandas(extras=["collection_id"])
    assert list(frame.columns) == [*SWF_FIELDS, "collection_id"]
    assert frame["collection_id"].dtype == "Int64"
    expected = [e.get("collection_id") for e in _extras(google2011)]
    assert frame["collection_id"].tolist() == expected
    assert frame["job_number"].tolist() == list(range(1, len(google2011) + 1))
    assert frame["collection_id"].tolist() != frame["job_number"].tolist()
    assert frame["collection_id"].is_unique


def test_every_extras_key_in_first_seen_order(google2011: schedlab.Workload) -> None:
    frame = google2011.to_pandas(extras=True)
    keys: dict[str, None] = {}
    for entry in _extras(google2011):
        for key in entry:
            keys.setdefault(key, None)
    assert list(frame.columns) == [*SWF_FIELDS, *keys]
    assert len(frame) == len(google2011)
    # A job without a key has <NA>, never a made-up value.
    for key in keys:
        have = [key in e for e in _extras(google2011)]
        missing = frame[key].isna().to_numpy()
        values = [e.get(key) for e in _extras(google2011)]
        assert np.array_equal(missing, [v is None for v in values]), key
        assert all(h or m for h, m in zip(have, missing, strict=True)), key
    assert frame["user"].dtype == "string"  # text as pandas' string dtype
    assert frame["requested_cpus"].dtype == "float64"


def batsim_workload(tmp_path: Path) -> schedlab.Workload:
    """Ids without a usable number, or repeating one, are renumbered; the id as
    written stays in ``batsim.id`` (and the number given in ``batsim.number``)."""
    doc = {
        "nb_res": 4,
        "jobs": [
            {"id": "w0!a", "subtime": 0, "res": 1, "profile": "p"},
            {"id": "w0!7", "subtime": 1, "res": 2, "profile": "p"},
            {"id": 7, "subtime": 2, "res": 2, "profile": "p"},
        ],
        "profiles": {"p": {"type": "delay", "delay": 10}},
    }
    path = tmp_path / "w.json"
    path.write_text(json.dumps(doc))
    return schedlab.read(path, format="batsim")


def test_batsim_ids_as_written(tmp_path: Path) -> None:
    w = batsim_workload(tmp_path)
    frame = w.to_pandas(extras=["batsim.id", "batsim.number", "no.such.key"])
    assert list(frame.columns)[-3:] == ["batsim.id", "batsim.number", "no.such.key"]
    # Text for some jobs and a number for another: kept as written (object).
    assert frame["batsim.id"].tolist() == ["w0!a", "w0!7", 7]
    assert frame["batsim.id"].dtype == object
    assert frame["batsim.number"].dtype == "Int64"
    assert frame["batsim.number"].isna().tolist() == [False, True, False]
    assert frame["no.such.key"].isna().all()
    # The job numbers differ from the ids for the renumbered jobs.
    assert frame["job_number"].tolist()[2] != 7


def test_a_single_key_as_a_string(tmp_path: Path) -> None:
    w = batsim_workload(tmp_path)
    assert list(w.to_pandas(extras="batsim.id").columns) == [*SWF_FIELDS, "batsim.id"]


def test_grid_engine_source_lines(shared_data: Path) -> None:
    """Grid Engine jobs carry their source record and line number: the line joins a
    row back to the accounting file."""
    path = shared_data / "sge" / "apel_test_sge_accounting.txt"
    w = schedlab.read(path)
    frame = w.to_pandas(extras=True)
    assert frame["sge_line"].dtype == "Int64"
    assert frame["sge_record"].dtype == "string"
    lines = path.read_text().splitlines()
    for line, record in zip(frame["sge_line"], frame["sge_record"], strict=True):
        assert lines[line - 1].rstrip("\r") == record


@pytest.fixture()
def slurm_read(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``read`` with the example Slurm plugin (from examples/ when not installed)."""
    if importlib.util.find_spec("schedlab_slurm") is None:
        monkeypatch.syspath_prepend(str(EXAMPLES / "schedlab-slurm" / "src"))
    plugin = pytest.importorskip("schedlab_slurm.plugin")
    from schedlab.testing import plugin_registry, using_registry

    registry = plugin_registry(("slurm", plugin))

    def read(path: Path) -> schedlab.Workload:
        with using_registry(registry):
            return schedlab.read(path, format="slurm")

    return read


def test_slurm_job_ids(shared_data: Path, slurm_read: Any) -> None:
    w = slurm_read(shared_data / "slurm" / "xdmod_accounting-logs-with-job-arrays.log")
    frame = w.to_pandas(extras=["slurm.JobID", "slurm.JobIDRaw"])
    assert frame["slurm.JobID"].dtype == "string"
    assert frame["slurm.JobID"].tolist() == [j.extras["slurm.JobID"] for j in w.jobs]
    assert frame["slurm.JobID"].str.contains("_").any()  # array ids, as sacct wrote them


# --------------------------------------------------------------------------- results


def test_platform_run_partition_and_nodes(platform_result: Any) -> None:
    result = platform_result
    frame = result.to_pandas(extras=True)
    assert list(frame.columns[: len(SWF_FIELDS) + len(RESULT_COLUMNS)]) == [
        *SWF_FIELDS,
        *RESULT_COLUMNS,
    ]
    for name in ("schedlab.partition", "schedlab.nodes", "schedlab.held"):
        assert frame[name].dtype == "string", name
    assert result.allocations is not None
    assert [tuple(n.split()) for n in frame["schedlab.nodes"]] == result.allocations
    assert set(frame["schedlab.partition"]) == {"DEFAULT"}
    chosen = result.to_pandas(extras=["schedlab.nodes"])
    assert list(chosen.columns) == [*SWF_FIELDS, *RESULT_COLUMNS, "schedlab.nodes"]


def test_result_keeps_the_source_ids(google2011: schedlab.Workload) -> None:
    result = schedlab.simulate(google2011, procs=100_000)
    frame = result.to_pandas(extras=["collection_id"])
    source = [e.get("collection_id") for e in _extras(google2011)]
    assert frame["collection_id"].tolist() == [source[i] for i in frame["input_row"]]


def test_an_extras_key_named_like_a_column_is_prefixed() -> None:
    jobs = [
        Job(
            job_number=1,
            submit_time=0,
            run_time=5,
            allocated_processors=1,
            extras={"start_time": "yesterday", "status": 3},
        ),
        Job(job_number=2, submit_time=1, run_time=5, allocated_processors=1),
    ]
    w = schedlab.Workload.from_jobs(jobs)
    frame = schedlab.simulate(w, procs=1).to_pandas(extras=True)
    assert frame["extras.start_time"].tolist()[0] == "yesterday"
    assert frame["extras.status"].dtype == "Int64"
    assert frame["start_time"].dtype == "float64"  # the simulated start, untouched


# --------------------------------------------------------------------------- types


def test_column_types_follow_the_values() -> None:
    rows = [
        {"s": "a", "i": 1, "f": 1.5, "b": True, "big": 2**64, "mix": "x", "list": [1]},
        {"i": 2**62, "f": 2, "b": False, "big": 1, "mix": 3, "list": (2,)},
        {},
    ]
    jobs = [Job(job_number=k + 1, submit_time=k, extras=e) for k, e in enumerate(rows)]
    frame = schedlab.Workload.from_jobs(jobs).to_pandas(extras=True)
    assert frame["s"].dtype == "string"
    assert frame["i"].dtype == "Int64"
    assert frame["i"].tolist()[1] == 2**62  # exact, not through a float
    assert frame["f"].dtype == "float64"
    assert np.isnan(frame["f"].iloc[2])
    assert frame["b"].dtype == "boolean"
    assert frame["big"].dtype == object  # beyond int64: kept exact
    assert frame["big"].tolist()[:2] == [2**64, 1]
    assert frame["mix"].dtype == object
    assert frame["list"].tolist()[:2] == [[1], (2,)]
    for name in ("s", "i", "b", "big", "mix", "list"):
        assert frame[name].iloc[2] is pd.NA, name


def test_a_workload_without_extras() -> None:
    w = schedlab.Workload.from_jobs([Job(job_number=1, submit_time=0)])
    assert list(w.to_pandas(extras=True).columns) == list(SWF_FIELDS)
    frame = w.to_pandas(extras=["orig_id"])
    assert frame["orig_id"].isna().all()


@pytest.mark.parametrize("bad", [3, [1], {"a": 1}, b"key"])
def test_bad_selections_are_usage_errors(bad: Any) -> None:
    w = schedlab.Workload.from_jobs([Job(job_number=1, submit_time=0)])
    with pytest.raises(UsageError, match="extras"):
        w.to_pandas(extras=bad)
