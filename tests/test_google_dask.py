"""The Dask path on a real ``distributed.LocalCluster`` (2 workers): the same
workload as the in-process reader, Parquet output, scheduler selection, and the
message without the extra."""

from __future__ import annotations

import gzip
import shutil
import sys

import pytest
import schedlab
from schedlab.formats.google.fixtures import generate_trace

distributed = pytest.importorskip("distributed", reason="needs the dask extra (dev installs it)")


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        dashboard_address=None,
        silence_logs=40,
    ) as local:
        yield local


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    return generate_trace(
        tmp_path_factory.mktemp("dask") / "trace", collections=1500, shards=4, seed=5
    )


@pytest.fixture(scope="module")
def expected(trace):
    return schedlab.read(trace.directory)


def test_same_workload_as_in_process(trace, expected, cluster):
    w = schedlab.read(trace.directory, engine="dask", scheduler=cluster.scheduler_address)
    assert w.meta["engine"] == "dask"
    assert w.jobs == expected.jobs
    assert w.meta["summary"] == expected.meta["summary"]
    assert w.meta["capacity"] == expected.meta["capacity"]
    assert w.meta["alloc_sets"] == expected.meta["alloc_sets"]
    assert [(e.label, e.value) for e in w.header.entries] == [
        (e.label, e.value) for e in expected.header.entries
    ]


def test_partition_count_does_not_matter(trace, expected, cluster):
    w = schedlab.read(
        trace.directory,
        engine="dask",
        scheduler=cluster.scheduler_address,
        partitions=3,
        tasks=False,
    )
    assert [j.swf_values() for j in w.jobs] == [j.swf_values() for j in expected.jobs]
    assert all(not j.tasks for j in w.jobs)


def test_scheduler_from_environment(trace, expected, cluster, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_DASK_SCHEDULER", cluster.scheduler_address)
    w = schedlab.read(trace.directory, engine="dask", tasks=False)
    assert len(w) == len(expected)
    import dask

    monkeypatch.setenv("SCHEDLAB_DASK_SCHEDULER", "tcp://127.0.0.1:1")
    with (
        dask.config.set({"distributed.comm.timeouts.connect": "1s"}),
        pytest.raises(schedlab.UsageError, match="cannot reach the Dask scheduler"),
    ):
        schedlab.read(trace.directory, engine="dask")


def test_lenient_counts_match(trace, cluster, tmp_path):
    copy = tmp_path / "trace"
    shutil.copytree(trace.directory, copy)
    shard = copy / "instance_events-000000000002.json.gz"
    with gzip.open(shard, "rt") as fh:
        lines = fh.readlines()
    lines[3] = "{oops\n"
    with gzip.open(shard, "wt") as fh:
        fh.writelines(lines)
    local = schedlab.read(copy, lenient=True)
    remote = schedlab.read(copy, lenient=True, engine="dask", scheduler=cluster.scheduler_address)
    assert remote.meta["skipped"] == local.meta["skipped"] == 1
    assert remote.meta["rejects"] == local.meta["rejects"]
    assert remote.jobs == local.jobs
    with pytest.raises(schedlab.FormatError, match=r"instance_events-000000000002\.json\.gz:4:"):
        schedlab.read(copy, engine="dask", scheduler=cluster.scheduler_address)


def test_partitioned_parquet(trace, expected, cluster, tmp_path):
    pd = pytest.importorskip("pandas")
    from distributed import Client
    from schedlab.formats.google.dask_reader import FLAT_COLUMNS, write_parquet_dask
    from schedlab.formats.google.v3_reader import discover

    out = tmp_path / "reduced"
    with Client(cluster.scheduler_address) as client:
        count = write_parquet_dask(discover(trace.directory), out, partitions=3, client=client)
    assert count == 3 and len(list(out.glob("*.parquet"))) == 3
    table = pd.read_parquet(out).sort_values("collection_id").reset_index(drop=True)
    assert list(table.columns) == list(FLAT_COLUMNS)
    jobs = {j.extras["collection_id"]: j for j in expected.jobs}
    assert len(table) == len(jobs) + len(expected.meta["alloc_sets"])
    for row in table.itertuples():
        job = jobs.get(row.collection_id)
        if job is None:
            continue
        assert (None if pd.isna(row.submit_raw) else row.submit_raw) == job.extras["submit_raw"]
        assert row.instances == len(job.tasks)
        assert row.usage_windows == job.extras["usage_windows"]


def test_cli_command(trace, expected, cluster, tmp_path, capsys):
    from schedlab.cli import main

    out = tmp_path / "trace.swf"
    main(
        [
            "google-dask",
            str(trace.directory),
            str(out),
            "--scheduler",
            cluster.scheduler_address,
            "--no-tasks",
        ]
    )
    assert f"wrote {len(expected)} jobs" in capsys.readouterr().err  # a status line
    swf = schedlab.read(out)
    assert [j.run_time for j in swf.jobs] == [j.run_time for j in expected.jobs]


def test_without_dask_the_message_names_the_extra(trace, monkeypatch):
    for name in ("dask", "dask.dataframe", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(schedlab.UsageError, match=r"pip install 'schedlab\[dask\]'"):
        schedlab.read(trace.directory, engine="dask")
    assert len(schedlab.read(trace.directory, engine="python", tasks=False)) > 0
