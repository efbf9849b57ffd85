"""Bad input in Google traces: errors name the shard and the line; lenient mode
skips and counts."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
import schedlab
from schedlab.errors import FormatError
from schedlab.formats.google.fixtures import generate_trace


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    directory = tmp_path_factory.mktemp("clean") / "trace"
    return generate_trace(directory, collections=300, shards=2, seed=3)


@pytest.fixture()
def trace(clean, tmp_path):
    copy = tmp_path / "trace"
    shutil.copytree(clean.directory, copy)
    return copy


def _lines(path):
    with gzip.open(path, "rt") as fh:
        return fh.read().splitlines(keepends=True)


def _rewrite(path, lines):
    with gzip.open(path, "wt") as fh:
        fh.writelines(lines)


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_truncated_json_line(trace, engine):
    shard = trace / "instance_events-000000000001.json.gz"
    lines = _lines(shard)
    lines[41] = lines[41][: len(lines[41]) // 2] + "\n"
    _rewrite(shard, lines)
    with pytest.raises(schedlab.FormatError) as info:
        schedlab.read(trace, engine=engine)
    message = str(info.value)
    assert message.startswith(f"{shard}:42: ")
    assert "JSON" in message


def test_truncated_last_line_is_called_truncated(trace):
    shard = trace / "collection_events-000000000000.json.gz"
    lines = _lines(shard)
    lines[-1] = lines[-1][:20]  # no newline, cut mid-record
    _rewrite(shard, lines)
    with pytest.raises(schedlab.FormatError, match=rf"{len(lines)}: truncated JSON line"):
        schedlab.read(trace)


def test_corrupt_gzip_shard(trace):
    shard = trace / "instance_usage-000000000000.json.gz"
    data = bytearray(shard.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = b"\x00" * 64
    shard.write_bytes(bytes(data))
    with pytest.raises(schedlab.FormatError) as info:
        schedlab.read(trace)
    message = str(info.value)
    assert message.startswith(f"{shard}:")
    assert "compressed" in message


def test_truncated_gzip_shard(trace):
    shard = trace / "collection_events-000000000001.json.gz"
    data = shard.read_bytes()
    shard.write_bytes(data[: len(data) - 200])
    with pytest.raises(schedlab.FormatError, match=r"collection_events-000000000001\.json\.gz:\d+"):
        schedlab.read(trace)


def test_shard_of_another_table(trace, clean):
    stray = trace / "collection_events-000000000009.json.gz"
    shutil.copy(clean.directory / "instance_events-000000000000.json.gz", stray)
    with pytest.raises(schedlab.FormatError) as info:
        schedlab.read(trace)
    message = str(info.value)
    assert message.startswith(f"{stray}:1: ")
    assert "not a field of collection_events" in message
    assert "instance_events record" in message


def test_unknown_enum_name_names_the_field(trace):
    shard = trace / "collection_events-000000000000.json.gz"
    lines = _lines(shard)
    record = json.loads(lines[9])
    record["type"] = "EXPLODE"
    lines[9] = json.dumps(record) + "\n"
    _rewrite(shard, lines)
    with pytest.raises(schedlab.FormatError) as info:
        schedlab.read(trace)
    assert str(info.value).startswith(f"{shard}:10: field type: unknown name 'EXPLODE'")


def test_bad_integer_names_the_field(trace):
    shard = trace / "instance_events-000000000000.json.gz"
    lines = _lines(shard)
    record = json.loads(lines[3])
    record["machine_id"] = "twelve"
    lines[3] = json.dumps(record) + "\n"
    _rewrite(shard, lines)
    with pytest.raises(schedlab.FormatError, match=r":4: field machine_id: "):
        schedlab.read(trace)


def test_lenient_counts_and_skips(trace, clean):
    clean_workload = schedlab.read(clean.directory)
    bad_line = trace / "instance_events-000000000001.json.gz"
    lines = _lines(bad_line)
    lines[5] = "{not json\n"
    lines[6] = '{"time": 1, "type": "NOPE", "collection_id": 1}\n'
    _rewrite(bad_line, lines)
    stray = trace / "collection_events-000000000009.json.gz"
    _rewrite(stray, _lines(clean.directory / "instance_events-000000000000.json.gz")[:20])
    stray_rows = 20
    corrupt = trace / "instance_usage-000000000001.json.gz"
    data = bytearray(corrupt.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = b"\x00" * 64
    corrupt.write_bytes(bytes(data))

    w = schedlab.read(trace, lenient=True)
    reasons = w.meta["skipped_by_reason"]
    assert reasons == {"invalid": 2, "other_table": stray_rows, "unreadable": 1}
    assert w.meta["skipped"] == 2 + stray_rows + 1
    assert w.meta["summary"]["skipped"] == w.meta["skipped"]
    assert any(m.startswith(f"{bad_line}:6: ") for m in w.meta["rejects"])
    assert any(m.startswith(f"{bad_line}:7: field type") for m in w.meta["rejects"])
    assert len(w.meta["rejects"]) == w.meta["skipped"]
    # the rest of the trace is still read: every collection is still there
    assert len(w) == len(clean_workload)
    assert w.meta["summary"]["tables"]["instance_events"]["rows"] == (
        clean_workload.meta["summary"]["tables"]["instance_events"]["rows"] - 2
    )


def test_empty_directory(tmp_path):
    with pytest.raises(schedlab.FormatError, match="no v3 table shards"):
        schedlab.read(tmp_path, format="google")


def test_cli_prints_one_line(trace, capsys):
    from schedlab.cli import main

    shard = trace / "instance_events-000000000001.json.gz"
    lines = _lines(shard)
    lines[0] = "[1, 2]\n"
    _rewrite(shard, lines)
    with pytest.raises(SystemExit) as exit_info:
        main(["info", str(trace)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0] == f"schedlab: error: {shard}:1: expected a JSON object, got list"


def test_a_2011_v2_trace_read_as_v3_is_a_one_line_error(shared_data: Path) -> None:
    """The v2 sample shares table names with v3 (machine_events): read with
    ``--from google`` its header-less CSV is refused with file, line and the way
    out, exit 2, no traceback (it used to be a TypeError)."""
    import subprocess
    import sys

    v2 = shared_data / "google" / "clusterdata2011_v2_sample"
    with pytest.raises(FormatError, match=r"machine_events-sample\.csv:2: .*--from google-v2"):
        schedlab.read(v2, format="google")
    proc = subprocess.run(
        [sys.executable, "-m", "schedlab", "info", str(v2), "--from", "google"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "google-v2" in proc.stderr
