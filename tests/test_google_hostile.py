"""Hostile input to the Google readers (issue 15): values beyond int64, NaN,
infinities, negative sizes, bytes that are not UTF-8, binary shards, truncated
lines, unknown enum values. Strict reading raises one :class:`FormatError` naming
the file, the line and the field; lenient reading skips and counts each bad record
once; every parse path (exact JSON and CSV lines, pyarrow blocks, Parquet, Dask)
agrees."""

from __future__ import annotations

import gzip
import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab.formats.google import frames as F
from schedlab.formats.google.v3_reader import discover

pa = pytest.importorskip("pyarrow", reason="the fast paths need pyarrow (dev installs it)")
pq = pytest.importorskip("pyarrow.parquet")

CE = "collection_events-000000000000.json"
IE = "instance_events-000000000000.json"


def collection(i: int, **extra) -> dict:
    """A good collection event (int64 values as strings, as BigQuery exports them)."""
    row = {
        "time": str(700_000_000 + 1000 * i),
        "type": 3 if i % 2 else 0,
        "collection_id": str(100 + i // 2),
        "collection_type": 0,
        "priority": 200,
        "user": "u",
    }
    row.update(extra)
    return row


def instance(i: int, **extra) -> dict:
    """A good instance event of collection 100 + i // 2."""
    row = {
        "time": str(700_000_500 + 1000 * i),
        "type": 3 if i % 2 else 0,
        "collection_id": str(100 + i // 2),
        "instance_index": i % 2,
        "machine_id": str(7 + i),
        "alloc_instance_index": -1,
        "resource_request": {"cpus": 0.25, "memory": 0.125},
    }
    row.update(extra)
    return row


def write_lines(path: Path, lines: list) -> Path:
    text = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    path.write_text(text)
    return path


def trace_with(tmp_path: Path, table: str, bad: str, at: int = 3, rows: int = 8) -> Path:
    """A two-table trace whose ``table`` shard has the raw line ``bad`` at line
    ``at + 1`` among ``rows`` good ones."""
    directory = tmp_path / "trace"
    directory.mkdir(exist_ok=True)
    ce = [collection(i) for i in range(rows)]
    ie = [instance(i) for i in range(rows)]
    target = ce if table == "collection_events" else ie
    target.insert(at, bad)
    write_lines(directory / CE, ce)
    write_lines(directory / IE, ie)
    return directory


def read_error(source: Path, **options) -> str:
    with pytest.raises(schedlab.FormatError) as info:
        schedlab.read(source, **options)
    message = str(info.value)
    assert "\n" not in message
    return message


# --------------------------------------------------------------------------- v3 reproducers

#: (table, raw line, field named in the error): each from issue 15 or next to one.
V3_BAD_LINES = {
    "time beyond int64": (
        "collection_events",
        '{"time":"1180591620717411303424","type":0,"collection_id":"5"}',
        "time",
    ),
    "collection id 2^64 (number)": (
        "collection_events",
        '{"time":"700000000","type":0,"collection_id":18446744073709551616}',
        "collection_id",
    ),
    "collection id 2^64 (string)": (
        "instance_events",
        '{"time":"700000000","type":0,"collection_id":"18446744073709551616","instance_index":0}',
        "collection_id",
    ),
    "the null marker itself": (
        "collection_events",
        '{"time":"700000000","type":0,"collection_id":"-9223372036854775808"}',
        "collection_id",
    ),
    "negative time": (
        "collection_events",
        '{"time":"-1","type":0,"collection_id":"5"}',
        "time",
    ),
    "cpus Infinity": (
        "instance_events",
        '{"time":"700000001","type":0,"collection_id":"5","instance_index":0,'
        '"resource_request":{"cpus":Infinity,"memory":0.1}}',
        "resource_request.cpus",
    ),
    "cpus NaN": (
        "instance_events",
        '{"time":"700000001","type":0,"collection_id":"5","instance_index":0,'
        '"resource_request":{"cpus":NaN,"memory":0.1}}',
        "resource_request.cpus",
    ),
    "cpus -5": (
        "instance_events",
        '{"time":"700000001","type":0,"collection_id":"5","instance_index":0,'
        '"resource_request":{"cpus":-5,"memory":0.1}}',
        "resource_request.cpus",
    ),
    "memory 1e999": (
        "instance_events",
        '{"time":"700000001","type":0,"collection_id":"5","instance_index":0,'
        '"resource_request":{"cpus":0.1,"memory":1e999}}',
        "resource_request.memory",
    ),
    "cpus as a 400-digit integer": (
        "instance_events",
        '{"time":"700000001","type":0,"collection_id":"5","instance_index":0,'
        '"resource_request":{"cpus":' + "9" * 400 + "}}",
        "resource_request.cpus",
    ),
    "negative priority": (
        "collection_events",
        '{"time":"700000000","type":0,"collection_id":"5","priority":-3}',
        "priority",
    ),
    "instance index beyond int32": (
        "instance_events",
        '{"time":"700000001","type":0,"collection_id":"5","instance_index":2147483648}',
        "instance_index",
    ),
    "alloc instance index -2": (
        "instance_events",
        '{"time":"700000001","type":0,"collection_id":"5","instance_index":0,'
        '"alloc_instance_index":-2}',
        "alloc_instance_index",
    ),
    "start-after id beyond int64": (
        "collection_events",
        '{"time":"700000000","type":0,"collection_id":"5",'
        '"start_after_collection_ids":["99999999999999999999"]}',
        "start_after_collection_ids",
    ),
    "unknown enum name": (
        "collection_events",
        '{"time":"700000000","type":"EXPLODE","collection_id":"5"}',
        "type",
    ),
    "unknown enum number": (
        "instance_events",
        '{"time":"700000001","type":11,"collection_id":"5","instance_index":0}',
        "type",
    ),
}


@pytest.mark.parametrize("engine", ["python", "auto"])
@pytest.mark.parametrize("case", sorted(V3_BAD_LINES))
def test_v3_bad_value_names_file_line_and_field(tmp_path, case, engine):
    table, bad, field = V3_BAD_LINES[case]
    directory = trace_with(tmp_path, table, bad)
    shard = directory / (CE if table == "collection_events" else IE)
    message = read_error(directory, engine=engine)
    assert message.startswith(f"{shard}:4: field {field}: "), message
    lenient = schedlab.read(directory, engine=engine, lenient=True)
    assert lenient.meta["skipped"] == 1
    assert lenient.meta["rejects"] == [message]
    assert lenient.meta["summary"]["tables"][table]["rows"] == 8


def test_v3_values_at_the_limits_are_read_exactly(tmp_path):
    """The largest values the format allows are data, not errors, in every path."""
    ce = [collection(i) for i in range(6)]
    ce[2]["max_per_machine"] = 2**31 - 1
    ce[3]["parent_collection_id"] = str(2**63 - 1)
    ce[4]["time"] = "0"  # before the trace
    ce[5]["time"] = str(2**63 - 1)  # after the trace
    ie = [instance(i) for i in range(6)]
    ie[1]["resource_request"] = {"cpus": 0, "memory": F.MAX_NORMALIZED}
    ie[2]["alloc_instance_index"] = -1
    ie[3]["instance_index"] = 2**31 - 1
    ie[4]["machine_id"] = str(2**63 - 1)
    directory = tmp_path / "trace"
    directory.mkdir()
    write_lines(directory / CE, ce)
    write_lines(directory / IE, ie)
    for shard in discover(directory):
        exact = F.parse_exact(shard.path, shard.table, shard.kind, shard.index)
        fast = F.parse_fast(shard.path, shard.table, shard.index)
        assert fast is not None
        for name in exact:
            assert np.array_equal(exact[name], fast[name], equal_nan=exact[name].dtype != object)
    frame = F.parse_exact(directory / IE, "instance_events", "json", 1)
    assert frame["machine_id"][4] == 2**63 - 1 and frame["memory"][1] == F.MAX_NORMALIZED
    a, b = schedlab.read(directory, engine="python"), schedlab.read(directory)
    assert a.jobs == b.jobs and a.meta["skipped"] == b.meta["skipped"] == 0


def test_v3_truncated_lines(tmp_path):
    good = json.dumps(collection(3))
    directory = trace_with(tmp_path, "collection_events", good[:25])
    message = read_error(directory)
    assert message.startswith(f"{directory / CE}:4: truncated JSON line")
    # the last line, without its line end
    path = directory / CE
    path.write_text(path.read_text().splitlines()[0] + "\n" + good[:30])
    assert read_error(directory).startswith(f"{path}:2: truncated JSON line")
    assert schedlab.read(directory, lenient=True).meta["skipped"] == 1


def test_v3_deeply_nested_line(tmp_path):
    deep = '{"start_after_collection_ids":' + "[" * 5000 + "]" * 5000 + "}"
    directory = trace_with(tmp_path, "collection_events", deep)
    for engine in ("python", "auto"):
        assert read_error(directory, engine=engine) == (
            f"{directory / CE}:4: JSON nested too deeply to be a trace record"
        )


def binary(path: Path, size: int = 4000, seed: int = 1) -> bytes:
    data = random.Random(seed).randbytes(size)
    path.write_bytes(data)
    return data


@pytest.mark.parametrize("engine", ["python", "auto"])
def test_v3_binary_shard(tmp_path, engine):
    directory = trace_with(tmp_path, "collection_events", json.dumps(collection(99)))
    data = binary(directory / "collection_events-000000000001.json")
    message = read_error(directory, engine=engine)
    assert message.startswith(f"{directory / 'collection_events-000000000001.json'}:1: ")
    lenient = schedlab.read(directory, engine=engine, lenient=True)
    bad_lines = sum(1 for line in data.split(b"\n") if line.strip())
    assert lenient.meta["skipped"] == bad_lines
    assert lenient.meta["summary"]["tables"]["collection_events"]["rows"] == 9


def test_v3_csv_shard_with_a_byte_that_is_not_utf8(tmp_path):
    directory = tmp_path / "trace"
    directory.mkdir()
    lines = [b"time,type,collection_id,priority"]
    lines += [f"{700_000_000 + i},0,{10 + i},100".encode() for i in range(6)]
    lines[3] = lines[3][:4] + b"\xfe" + lines[3][4:]
    (directory / "collection_events-000000000000.csv").write_bytes(b"\n".join(lines) + b"\n")
    message = read_error(directory)
    assert message.startswith(f"{directory / 'collection_events-000000000000.csv'}:4: not UTF-8")
    lenient = schedlab.read(directory, lenient=True)
    assert lenient.meta["skipped"] == 1 and len(lenient) == 5


def test_v3_csv_shard_with_hostile_numbers(tmp_path):
    directory = tmp_path / "trace"
    directory.mkdir()
    rows = ["time,type,collection_id,instance_index,resource_request.cpus"]
    rows += [f"{700_000_000 + i},0,{10 + i},0,0.5" for i in range(6)]
    rows[2] = rows[2].replace("0.5", "nan")
    rows[4] = rows[4].replace(",0,0.5", ",99999999999999999999,0.5")
    (directory / "instance_events-000000000000.csv").write_text("\n".join(rows) + "\n")
    message = read_error(directory)
    assert message.endswith(
        ":3: field resource_request.cpus: expected a finite number from 0 to 1e+06, got 'nan'"
    )
    lenient = schedlab.read(directory, lenient=True)
    assert lenient.meta["skipped"] == 2
    assert [m.split(":")[1] for m in lenient.meta["rejects"]] == ["3", "5"]


def _parquet(path: Path, rows: list[dict]) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


@pytest.mark.parametrize(
    ("field", "value"),
    [("cpus", float("nan")), ("cpus", float("inf")), ("cpus", -5.0), ("memory", 2e6)],
)
def test_v3_parquet_shard_with_hostile_numbers(tmp_path, field, value):
    rows = [instance(i) for i in range(6)]
    for row in rows:
        row["time"] = int(row["time"])
        row["collection_id"] = int(row["collection_id"])
        row["machine_id"] = int(row["machine_id"])
    rows[4]["resource_request"] = {"cpus": 0.5, "memory": 0.5, field: value}
    path = _parquet(tmp_path / "instance_events.parquet", rows)
    message = read_error(path, format="google")
    assert message.startswith(f"{path}:5: field resource_request.{field}: expected a finite")
    lenient = schedlab.read(path, format="google", lenient=True)
    assert lenient.meta["skipped"] == 1


def test_v3_unreadable_parquet_shard(tmp_path):
    directory = trace_with(tmp_path, "collection_events", json.dumps(collection(99)))
    binary(directory / "instance_usage-000000000000.parquet")
    message = read_error(directory)
    assert message.startswith(f"{directory / 'instance_usage-000000000000.parquet'}: unreadable")
    lenient = schedlab.read(directory, lenient=True)
    assert lenient.meta["skipped_by_reason"] == {"unreadable": 1}


def test_v3_truncated_gzip_shard_names_a_line(tmp_path):
    directory = trace_with(tmp_path, "collection_events", json.dumps(collection(99)), rows=400)
    path = directory / CE
    data = gzip.compress(path.read_bytes())
    path.unlink()
    (directory / (CE + ".gz")).write_bytes(data[: len(data) // 2])
    for engine in ("python", "auto"):
        message = read_error(directory, engine=engine)
        assert message.startswith(f"{directory / (CE + '.gz')}:")
        assert "compressed" in message
    lenient = schedlab.read(directory, lenient=True)
    assert lenient.meta["skipped_by_reason"] == {"unreadable": 1}


def test_v3_skips_are_counted_once(tmp_path):
    """The count is made by the read, not by iterating the workload."""
    directory = trace_with(tmp_path, "collection_events", "{not json")
    w = schedlab.read(directory, lenient=True)
    for _ in range(3):
        assert len(list(w)) == len(w.jobs) == 4
        assert sum(len(chunk) for chunk in w.iter_column_chunks()) == 4
    assert w.meta["skipped"] == 1 and w.meta["summary"]["skipped"] == 1


def test_cli_prints_the_overflow_as_one_line(tmp_path, capsys):
    from schedlab.cli import main

    table, bad, _ = V3_BAD_LINES["time beyond int64"]
    directory = trace_with(tmp_path, table, bad)
    with pytest.raises(SystemExit) as exit_info:
        main(["info", str(directory)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"schedlab: error: {directory / CE}:4: field time: out of range: expected an integer "
        "from 0 to 9223372036854775807, got '1180591620717411303424'"
    ]


def test_absurd_cpu_scale_is_a_usage_error(tmp_path):
    directory = trace_with(tmp_path, "collection_events", json.dumps(collection(99)))
    with pytest.raises(schedlab.UsageError, match="cpu_scale"):
        schedlab.read(directory, cpu_scale=1e300)


# --------------------------------------------------------------------------- v2 reproducers

V2_SAMPLE = ("google", "clusterdata2011_v2_sample")


@pytest.fixture(scope="module")
def v2_sample(shared_data: Path) -> Path:
    return shared_data.joinpath(*V2_SAMPLE)


def v2_copy(sample: Path, tmp_path: Path, table: str, line: int, new: bytes) -> Path:
    """A copy of the 2011 sample whose ``table`` has ``new`` as line ``line``."""
    directory = tmp_path / "v2"
    shutil.copytree(sample, directory)
    path = directory / f"{table}-sample.csv"
    rows = path.read_bytes().split(b"\n")
    rows[line - 1] = new
    path.write_bytes(b"\n".join(rows))
    return directory


def _field(row: bytes, index: int, value: bytes) -> bytes:
    cells = row.split(b",")
    cells[index] = value
    return b",".join(cells)


#: (table, change of line 4, message after "file:4: ").
V2_CASES = {
    "23-digit time": (
        "job_events",
        lambda row: _field(row, 0, b"1" * 23),
        "field 1 (time): out of range: expected an integer from 0 to 9223372036854775807, "
        "got '11111111111111111111111'",
    ),
    "byte \\xfe": (
        "job_events",
        lambda row: row[:10] + b"\xfe" + row[10:],
        "not UTF-8 text (byte b'\\xfe' at column 11): a binary or damaged file?",
    ),
    "truncated line": (
        "job_events",
        lambda row: row[: len(row) // 2],
        "expected 8 comma-separated fields of job_events, got ",
    ),
    "unknown event type": (
        "job_events",
        lambda row: _field(row, 3, b"17"),
        "field 4 (event_type): unknown event type '17' (expected 0-8)",
    ),
    "unknown scheduling class": (
        "task_events",
        lambda row: _field(row, 7, b"9"),
        "field 8 (scheduling_class): unknown scheduling class '9' (expected 0-3)",
    ),
    "cpu request inf": (
        "task_events",
        lambda row: _field(row, 9, b"inf"),
        "field 10 (cpu_request): expected a finite number from 0 to 1e+06, got 'inf'",
    ),
    "cpu request NaN": (
        "task_events",
        lambda row: _field(row, 9, b"NaN"),
        "field 10 (cpu_request): expected a finite number from 0 to 1e+06, got 'NaN'",
    ),
    "cpu request -5": (
        "task_events",
        lambda row: _field(row, 9, b"-5"),
        "field 10 (cpu_request): expected a finite number from 0 to 1e+06, got '-5'",
    ),
    "job id 2^64": (
        "task_events",
        lambda row: _field(row, 2, str(2**64).encode()),
        "field 3 (job_id): out of range",
    ),
    "negative priority": (
        "task_events",
        lambda row: _field(row, 8, b"-1"),
        "field 9 (priority): out of range",
    ),
    "usage cpu rate inf": (
        "task_usage",
        lambda row: _field(row, 5, b"1e400"),
        "field 6 (cpu_rate): expected a finite number",
    ),
    "machine capacity -1": (
        "machine_events",
        lambda row: _field(row, 4, b"-1"),
        "field 5 (cpus): expected a finite number",
    ),
    "deleted flag 2": (
        "machine_attributes",
        lambda row: _field(row, 4, b"2"),
        "field 5 (attribute_deleted): expected 0 or 1, got '2'",
    ),
}


@pytest.mark.parametrize("case", sorted(V2_CASES))
def test_v2_bad_value_names_file_line_and_field(v2_sample, tmp_path, case):
    table, change, expected = V2_CASES[case]
    row = (v2_sample / f"{table}-sample.csv").read_bytes().split(b"\n")[3]
    directory = v2_copy(v2_sample, tmp_path, table, 4, change(row))
    message = read_error(directory)
    assert message.startswith(f"{directory / f'{table}-sample.csv'}:4: {expected}"), message
    clean = schedlab.read(v2_sample)
    lenient = schedlab.read(directory, lenient=True)
    assert lenient.meta["skipped"] == 1 and lenient.meta["rejects"] == [message]
    rows = lenient.meta["summary"]["tables"][table]["rows"]
    assert rows == clean.meta["summary"]["tables"][table]["rows"] - 1


def test_v2_binary_table(v2_sample, tmp_path):
    directory = tmp_path / "v2"
    shutil.copytree(v2_sample, directory)
    data = binary(directory / "job_events-sample.csv", seed=4)
    message = read_error(directory)
    assert message.startswith(f"{directory / 'job_events-sample.csv'}:1: ")
    lenient = schedlab.read(directory, lenient=True)
    # every line with content is rejected, by itself
    assert lenient.meta["skipped"] == sum(1 for line in data.split(b"\n") if line.strip())
    assert lenient.meta["summary"]["tables"]["job_events"]["rows"] == 0


def test_v2_bytes_that_are_not_utf8_leave_the_other_lines(v2_sample, tmp_path):
    path_rows = (v2_sample / "task_events-sample.csv").read_bytes().split(b"\n")
    directory = v2_copy(v2_sample, tmp_path, "task_events", 2, path_rows[1] + b"\xff\xfe")
    (directory / "task_events-sample.csv").write_bytes(
        (directory / "task_events-sample.csv")
        .read_bytes()
        .replace(path_rows[9], path_rows[9] + b"\x80", 1)
    )
    lenient = schedlab.read(directory, lenient=True)
    assert [m.split(":")[1] for m in lenient.meta["rejects"]] == ["2", "10"]
    clean = schedlab.read(v2_sample)
    assert (
        lenient.meta["summary"]["tables"]["task_events"]["rows"]
        == clean.meta["summary"]["tables"]["task_events"]["rows"] - 2
    )


def test_v2_truncated_gzip_table(v2_sample, tmp_path):
    directory = tmp_path / "v2"
    shutil.copytree(v2_sample, directory)
    path = directory / "task_events-sample.csv"
    data = gzip.compress(path.read_bytes())
    path.unlink()
    (directory / "task_events-sample.csv.gz").write_bytes(data[: len(data) // 2])
    message = read_error(directory)
    assert message.startswith(f"{directory / 'task_events-sample.csv.gz'}:")
    assert "compressed data is truncated" in message
    assert schedlab.read(directory, lenient=True).meta["skipped_by_reason"] == {"unreadable": 1}


# --------------------------------------------------------------------------- paths agree


@pytest.mark.parametrize("case", sorted(V3_BAD_LINES))
def test_fast_parser_leaves_every_bad_value_to_the_exact_parser(tmp_path, case):
    """The pyarrow block parser never reads a hostile value as data: it hands the
    shard to the exact parser, whose error and lenient frame are the reference."""
    table, bad, _ = V3_BAD_LINES[case]
    directory = trace_with(tmp_path, table, bad)
    path = directory / (CE if table == "collection_events" else IE)
    assert F.parse_fast(path, table, 0) is None
    rejects = F.Rejects()
    frame = F.parse_exact(path, table, "json", 0, rejects)
    assert rejects.count == 1 and list(frame["_line"]) == [1, 2, 3, 5, 6, 7, 8, 9]


def _as_parquet_rows(rows: list[dict]) -> list[dict]:
    out = []
    for row in rows:
        row = dict(row)
        for key in ("time", "collection_id", "machine_id"):
            if key in row:
                row[key] = int(row[key])
        out.append(row)
    return out


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("time", -5),
        ("priority", -1),
        ("instance_index", -(2**40)),
        ("machine_id", -(2**63)),  # the null marker must not read as null
        ("alloc_instance_index", -2),
    ],
)
def test_parquet_columns_are_checked_like_json_lines(tmp_path, key, value):
    rows = _as_parquet_rows([instance(i, priority=100) for i in range(5)])
    rows[2][key] = value  # (every row has the key: pyarrow takes the columns from the first)
    path = _parquet(tmp_path / "instance_events.parquet", rows)
    json_path = write_lines(tmp_path / "instance_events-000000000000.json", rows)
    parquet_error, json_error = read_error(path, format="google"), read_error(json_path)
    assert parquet_error.startswith(f"{path}:3: field {key}: out of range")
    assert parquet_error.split(":", 2)[2] == json_error.split(":", 2)[2]


distributed = pytest.importorskip("distributed", reason="needs the dask extra (dev installs it)")


def test_dask_engine_counts_the_same_skips(tmp_path):
    directory = tmp_path / "trace"
    directory.mkdir()
    ce = [collection(i) for i in range(40)]
    ie = [instance(i) for i in range(40)]
    bad_ce = [V3_BAD_LINES[c][1] for c in V3_BAD_LINES if V3_BAD_LINES[c][0] == "collection_events"]
    bad_ie = [V3_BAD_LINES[c][1] for c in V3_BAD_LINES if V3_BAD_LINES[c][0] == "instance_events"]
    for i, line in enumerate(bad_ce):
        ce.insert(3 * i, line)
    for i, line in enumerate(bad_ie):
        ie.insert(2 * i + 1, line)
    write_lines(directory / CE, ce[:25])
    write_lines(directory / "collection_events-000000000001.json", ce[25:])
    write_lines(directory / IE, ie)
    expected = schedlab.read(directory, lenient=True)
    assert expected.meta["skipped"] == len(bad_ce) + len(bad_ie)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None, silence_logs=40
    ) as cluster:
        got = schedlab.read(
            directory, engine="dask", scheduler=cluster.scheduler_address, lenient=True
        )
        with pytest.raises(schedlab.FormatError) as info:
            schedlab.read(directory, engine="dask", scheduler=cluster.scheduler_address)
    assert got.jobs == expected.jobs
    assert got.meta["skipped"] == expected.meta["skipped"]
    assert sorted(got.meta["rejects"]) == sorted(expected.meta["rejects"])
    assert str(info.value) in expected.meta["rejects"]


# --------------------------------------------------------------------------- validate


def _validate(source: Path, capsys) -> tuple[int, dict]:
    from schedlab.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["validate", "--json", str(source)])
    return exit_info.value.code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    "case", ["truncated line", "unknown enum name", "binary shard", "cpus Infinity", "cpus NaN"]
)
def test_validate_never_says_ok_on_corrupt_v3_input(tmp_path, capsys, case):
    if case == "binary shard":
        directory = trace_with(tmp_path, "collection_events", json.dumps(collection(99)))
        data = binary(directory / "collection_events-000000000001.json")
        bad = sum(1 for line in data.split(b"\n") if line.strip())
    else:
        table, line, _ = V3_BAD_LINES.get(case) or (
            "collection_events",
            json.dumps(collection(3))[:20],
            None,
        )
        directory = trace_with(tmp_path, table, line)
        bad = 1
    code, report = _validate(directory, capsys)
    assert code == 1 and report["ok"] is False
    assert report["skipped"] == bad  # each skip once
    assert report["checks"]["skipped-record"] >= 1


@pytest.mark.parametrize("case", ["truncated line", "unknown event type", "byte \\xfe"])
def test_validate_never_says_ok_on_corrupt_v2_input(v2_sample, tmp_path, capsys, case):
    table, change, _ = V2_CASES[case]
    row = (v2_sample / f"{table}-sample.csv").read_bytes().split(b"\n")[3]
    directory = v2_copy(v2_sample, tmp_path, table, 4, change(row))
    code, report = _validate(directory, capsys)
    assert code == 1 and report["ok"] is False and report["skipped"] == 1


def test_a_compressed_shard_is_checked_once_however_many_bad_lines(tmp_path, monkeypatch):
    """Each bad line of a gzip shard could be garbage from a damaged stream; the
    stream is checked once, not once per bad line (that would be quadratic)."""
    directory = tmp_path / "trace"
    directory.mkdir()
    lines = [json.dumps(collection(i)) if i % 2 else "{bad" for i in range(400)]
    (directory / (CE + ".gz")).write_bytes(gzip.compress("\n".join(lines).encode() + b"\n"))
    calls = []
    check = F._check_compression
    monkeypatch.setattr(F, "_check_compression", lambda *a: calls.append(1) or check(*a))
    w = schedlab.read(directory, engine="python", lenient=True)
    assert w.meta["skipped"] == 200 and len(calls) == 1
    long_key = json.dumps({**collection(1), "k" * 50_000: 1})
    (tmp_path / "long").mkdir()
    directory = trace_with(tmp_path / "long", "collection_events", long_key)
    for engine in ("python", "auto"):  # messages quote at most a little of the input
        assert len(read_error(directory, engine=engine)) < 300


def _padded_shard(directory: Path, alien_at: int, rows: int = 900) -> Path:
    """A collection_events shard of ``rows`` records (about 100 KiB) whose record
    ``alien_at`` has a key that is not a field of the table."""
    lines = [collection(i, collection_name="n" * 64) for i in range(rows)]
    lines[alien_at] = {**lines[alien_at], "bogus": 1}
    directory.mkdir()
    return write_lines(directory / CE, lines)


def test_keys_outside_the_table_are_checked_in_the_head_of_a_shard(tmp_path):
    """The first 64 KiB of a JSON shard must hold only keys of its table (a shard of
    another table is an error at its first line); beyond them such keys are
    ignored. Every engine applies the same rule (checking every key would cost the
    pyarrow parser half again its time), so they read the same."""
    head = _padded_shard(tmp_path / "head", 3)
    assert head.stat().st_size > 2 * F.KEY_CHECK_BYTES
    for engine in ("python", "auto"):
        assert read_error(head.parent, engine=engine).startswith(
            f"{head}:4: key 'bogus' is not a field of collection_events"
        )
    tail = _padded_shard(tmp_path / "tail", 800)
    a = schedlab.read(tail.parent, engine="python")
    b = schedlab.read(tail.parent, engine="auto")
    assert a.jobs == b.jobs and len(a) == 450 and a.meta["skipped"] == b.meta["skipped"] == 0


def test_a_large_shard_of_another_table_is_rejected_row_by_row(tmp_path):
    directory = tmp_path / "trace"
    directory.mkdir()
    rows = [instance(i, machine_id=str(10**12 + i)) for i in range(2000)]
    write_lines(directory / CE, rows)
    assert (directory / CE).stat().st_size > 2 * F.KEY_CHECK_BYTES
    for engine in ("python", "auto"):
        w = schedlab.read(directory, engine=engine, lenient=True)
        assert w.meta["skipped_by_reason"] == {"other_table": 2000}


@pytest.mark.parametrize("line", ["null", " null", "{}"])
def test_a_null_line_after_the_sample_is_not_a_record_of_nulls(tmp_path, line):
    """pyarrow reads ``null`` like ``{}`` (a row of nulls); the block parser leaves
    such blocks to the exact parser, which rejects both: ``null`` is not a record,
    and ``{}`` is a record without the time, type and id every record has."""
    directory = tmp_path / "trace"
    directory.mkdir()
    rows = [collection(i, collection_name="n" * 64) for i in range(900)]
    rows.insert(850, line)
    path = write_lines(directory / CE, rows)
    assert F.parse_fast(path, "collection_events", 0) is None
    outcomes = []
    for engine in ("python", "auto"):
        w = schedlab.read(directory, engine=engine, lenient=True)
        outcomes.append((w.meta["skipped"], w.meta["rejects"], w.jobs))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == 1


def test_a_byte_order_mark_is_not_data(v2_sample, tmp_path):
    """A UTF-8 BOM at the start of a CSV table (v2, or a v3 CSV export) or a JSON
    shard is accepted, as elsewhere in schedlab."""
    directory = tmp_path / "v2"
    shutil.copytree(v2_sample, directory)
    for table in ("job_events", "task_events"):
        path = directory / f"{table}-sample.csv"
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert schedlab.read(directory).jobs == schedlab.read(v2_sample).jobs
    v3 = tmp_path / "v3"
    v3.mkdir()
    rows = ["time,type,collection_id,priority"]
    rows += [f"{700_000_000 + i},0,{10 + i},100" for i in range(4)]
    (v3 / "collection_events-000000000000.csv").write_bytes(
        b"\xef\xbb\xbf" + "\n".join(rows).encode() + b"\n"
    )
    json_dir = tmp_path / "json"
    json_dir.mkdir()
    (json_dir / CE).write_bytes(
        b"\xef\xbb\xbf" + "".join(json.dumps(collection(i)) + "\n" for i in range(4)).encode()
    )
    assert len(schedlab.read(v3)) == 4
    for engine in ("python", "auto"):
        assert len(schedlab.read(json_dir, engine=engine)) == 2
