"""Hostile values of ``schedlab google-dask``'s options (audit cli2, findings 2, 3
and 13): every bad value is a one-line usage error (exit 2) naming the option,
given before any Dask cluster starts; an option of one value given twice with
different values is refused as in the built-in commands; ``--to`` is refused with
``--parquet``. The negative tests run with the Dask cluster classes replaced, so
they start no cluster and open no port; the positive ones use one in-process
cluster (``processes=False``, no dashboard)."""

from __future__ import annotations

import os
import shutil

import pytest
import schedlab

distributed = pytest.importorskip("distributed", reason="needs the dask extra (dev installs it)")


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    from schedlab.formats.google.fixtures import generate_trace

    return generate_trace(
        tmp_path_factory.mktemp("gdopts") / "trace", collections=60, shards=2, seed=11
    )


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        dashboard_address=None,
        silence_logs=40,
    ) as local:
        yield local


class ClusterStarted(Exception):
    """Raised by the stand-ins: the command got as far as starting a cluster."""


@pytest.fixture
def no_cluster(monkeypatch):
    """No Dask cluster or client can start (a test that gets that far fails fast
    instead of hanging), and no scheduler comes from the environment."""

    def refuse(*args, **kwargs):
        raise ClusterStarted("a Dask cluster or client was started")

    monkeypatch.setattr(distributed, "LocalCluster", refuse)
    monkeypatch.setattr(distributed, "Client", refuse)
    monkeypatch.delenv("SCHEDLAB_DASK_SCHEDULER", raising=False)


def _run(args, capsys):
    from schedlab.cli import main

    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def _usage_error(trace, tmp_path, capsys, *options):
    """Run the command with ``options``; check that it failed with one line, exit 2,
    nothing written, and return that line."""
    target = tmp_path / "out.swf"
    code, out, err = _run(["google-dask", str(trace.directory), str(target), *options], capsys)
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1, err
    assert "Traceback" not in err and "internal error" not in err
    assert not target.exists() and out == ""
    return lines[0]


# ------------------------------------------------------------------- 2: --workers


@pytest.mark.parametrize("value", ["0", "-1"])
def test_workers_below_one_is_a_usage_error(trace, tmp_path, capsys, no_cluster, value):
    line = _usage_error(trace, tmp_path, capsys, "--workers", value)
    assert "--workers" in line and f"{value} is not in the range x>=1" in line


def test_workers_more_than_the_cpus_is_a_usage_error(trace, tmp_path, capsys, no_cluster):
    line = _usage_error(trace, tmp_path, capsys, "--workers", str(10**9))
    assert "--workers" in line and "CPU" in line and "--scheduler" in line


@pytest.mark.parametrize("where", ["option", "environment"])
def test_workers_with_a_scheduler_is_refused(
    trace, tmp_path, capsys, no_cluster, monkeypatch, where
):
    if where == "option":
        line = _usage_error(
            trace, tmp_path, capsys, "--workers", "1", "--scheduler", "tcp://127.0.0.1:1"
        )
        assert "--workers" in line and "--scheduler" in line
    else:
        monkeypatch.setenv("SCHEDLAB_DASK_SCHEDULER", "tcp://127.0.0.1:1")
        line = _usage_error(trace, tmp_path, capsys, "--workers", "1")
        assert "--workers" in line and "SCHEDLAB_DASK_SCHEDULER" in line


# ---------------------------------------------------------------- 3: --partitions


@pytest.mark.parametrize("value", ["-3", "0", str(10**6)])
def test_partitions_out_of_range_is_a_usage_error(trace, tmp_path, capsys, no_cluster, value):
    line = _usage_error(trace, tmp_path, capsys, "--partitions", value)
    assert "--partitions" in line and f"{value} is not in the range 1<=x<=" in line


# ------------------------------------------------------ 13: twice, empty, --parquet


@pytest.mark.parametrize(
    "options",
    [
        ["--workers", "1", "--workers", "2"],
        ["--to", "swf", "--to", "sge"],
        ["--partitions=2", "--partitions", "3"],
        ["--scheduler", "tcp://a:1", "--scheduler=tcp://b:1"],
    ],
)
def test_an_option_given_twice_is_refused(trace, tmp_path, capsys, no_cluster, options):
    line = _usage_error(trace, tmp_path, capsys, *options)
    name = options[0].partition("=")[0]
    assert f"{name} given twice" in line and "give it once" in line


@pytest.mark.parametrize("option", ["--to", "--scheduler", "--workers", "--partitions"])
def test_an_empty_value_is_refused(trace, tmp_path, capsys, no_cluster, option):
    line = _usage_error(trace, tmp_path, capsys, option, "")
    assert option in line


@pytest.mark.parametrize("value", ["1_0", "\uff11"])
def test_a_number_in_other_than_ascii_digits_is_refused(trace, tmp_path, capsys, no_cluster, value):
    line = _usage_error(trace, tmp_path, capsys, "--workers", value)
    assert "--workers" in line and "ASCII digits" in line


def test_parquet_refuses_to(trace, tmp_path, capsys, no_cluster):
    target = tmp_path / "pq"
    code, out, err = _run(
        ["google-dask", str(trace.directory), str(target), "--parquet", "--to", "swf"], capsys
    )
    assert code == 2
    assert err.strip() == "schedlab: error: --to applies to a trace file, not to --parquet"
    assert not target.exists() and out == ""


def test_a_scheduler_address_without_a_port_is_a_usage_error(trace, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SCHEDLAB_DASK_SCHEDULER", raising=False)
    line = _usage_error(trace, tmp_path, capsys, "--scheduler", "garbage")
    assert "garbage" in line and "Dask scheduler" in line


# ------------------------------------------------------------------ Python API


@pytest.mark.parametrize(
    ("options", "key"),
    [
        ({"workers": 0}, "workers"),
        ({"workers": -1}, "workers"),
        ({"partitions": -3}, "partitions"),
        ({"partitions": 0}, "partitions"),
    ],
)
def test_the_api_refuses_the_same_values(trace, no_cluster, options, key):
    with pytest.raises(schedlab.UsageError, match=rf"^{key}="):
        schedlab.read(trace.directory, engine="dask", **options)


# ------------------------------------------------------------- what still works


def test_the_same_value_twice_is_fine(trace, tmp_path, capsys, cluster):
    target = tmp_path / "out.swf"
    code, _, err = _run(
        [
            "google-dask",
            str(trace.directory),
            str(target),
            "--scheduler",
            cluster.scheduler_address,
            "--to",
            "swf",
            "--to=swf",
            "--partitions",
            "2",
            "--partitions",
            "2",
            "--no-tasks",
        ],
        capsys,
    )
    assert code == 0, err
    assert "jobs to" in err and target.exists()  # a status line: stderr
    assert os.path.getsize(target) > 0


# ---------------------------------------------------------------------- OUTPUT


def test_an_empty_output_is_refused(trace, capsys, no_cluster):
    code, out, err = _run(["google-dask", str(trace.directory), ""], capsys)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == ["schedlab: error: OUTPUT '': give a file or folder name"]


def test_parquet_refuses_a_folder_with_files(trace, tmp_path, capsys, no_cluster):
    """Partitions written among other files (an earlier run's part.N, or the trace's
    own shards when OUTPUT is SOURCE) would be read back as one data set."""
    source = tmp_path / "src"
    shutil.copytree(trace.directory, source)
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "part.7.parquet").write_bytes(b"stale")
    for target in (tmp_path / "old", source):
        before = sorted(p.name for p in target.iterdir())
        code, out, err = _run(["google-dask", str(source), str(target), "--parquet"], capsys)
        assert code == 2 and out == "", err
        (line,) = err.strip().splitlines()
        assert str(target) in line and "--parquet" in line and "not empty" in line
        assert sorted(p.name for p in target.iterdir()) == before


def test_parquet_refuses_a_file(trace, tmp_path, capsys, no_cluster):
    target = tmp_path / "out.swf"
    target.write_text("keep\n")
    code, out, err = _run(["google-dask", str(trace.directory), str(target), "--parquet"], capsys)
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert str(target) in line and "--parquet" in line and "file" in line
    assert target.read_text() == "keep\n"
