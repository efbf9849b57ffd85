"""Hostile input to the Google readers, second round (audit of the v3 and v2 readers):
a null or missing time, id or event type; CSV rows cut short or opened by an
unterminated quote; digits of other scripts and digit grouping; ids written as
floats beyond 2^53; keys and columns given twice; a line of a gigabyte; events out
of order. Strict reading raises one :class:`FormatError` naming the file, the line
and the field; lenient reading skips and counts the record; every engine (exact
parser, pyarrow block parser, Parquet columns, Dask) gives the same answer, and no
reader's null marker (-2^63) ever becomes a value."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab.formats.google import arrow_parse as A
from schedlab.formats.google import frames as F

pa = pytest.importorskip("pyarrow", reason="the fast paths need pyarrow (dev installs it)")
pq = pytest.importorskip("pyarrow.parquet")

CE = "collection_events-000000000000.json"
IE = "instance_events-000000000000.json"
IU = "instance_usage-000000000000.json"
ME = "machine_events-000000000000.json"
SHARD = {
    "collection_events": CE,
    "instance_events": IE,
    "instance_usage": IU,
    "machine_events": ME,
}
#: Good records before the bad one with ``past_sample``: about 80 KiB, past the
#: 64 KiB from which the pyarrow parser types its schema, so that the block parser
#: meets the bad record first and must hand the shard to the exact parser.
PAD = 420
SENTINEL = -(2**63)


def collection(i: int, **extra) -> dict:
    """A good collection event of collection 100 + i // 3 (SUBMIT, SCHEDULE, FINISH)."""
    row = {
        "time": str(700_000_000 + 1000 * i),
        "type": (0, 3, 6)[i % 3],
        "collection_id": str(100 + i // 3),
        "collection_type": 0,
        "priority": 200,
        "user": "u",
        "collection_name": "n" * 64,
    }
    row.update(extra)
    return row


def instance(i: int, **extra) -> dict:
    """A good instance event (instance 0 of collection 100 + i // 3)."""
    row = {
        "time": str(700_000_500 + 1000 * i),
        "type": (0, 3, 6)[i % 3],
        "collection_id": str(100 + i // 3),
        "instance_index": 0,
        "machine_id": str(7 + i % 3),
        "alloc_instance_index": -1,
        "resource_request": {"cpus": 0.25, "memory": 0.125},
        "constraint": [],
    }
    row.update(extra)
    return row


def usage(i: int, **extra) -> dict:
    """A good usage window of instance 0 of collection 100 + i."""
    row = {
        "start_time": str(700_000_500 + 1000 * i),
        "end_time": str(700_300_500 + 1000 * i),
        "collection_id": str(100 + i),
        "instance_index": 0,
        "average_usage": {"cpus": 0.125, "memory": 0.0625},
        "maximum_usage": {"cpus": 0.25, "memory": 0.125},
    }
    row.update(extra)
    return row


def machine(i: int, **extra) -> dict:
    """A good machine ADD."""
    row = {"time": "0", "machine_id": str(7 + i), "type": 1, "capacity": {"cpus": 0.5}}
    row.update(extra)
    return row


MAKERS = {
    "collection_events": collection,
    "instance_events": instance,
    "instance_usage": usage,
    "machine_events": machine,
}


def write_lines(path: Path, lines: list) -> Path:
    text = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    path.write_text(text)
    return path


def trace_with(
    tmp_path: Path, table: str, bad: str | dict, past_sample: bool = False, rows: int = 9
) -> tuple[Path, Path, int]:
    """A trace of every table whose ``table`` shard has the record ``bad`` among good
    ones; returns ``(directory, shard, line of the bad record)``."""
    directory = tmp_path / ("late" if past_sample else "early")
    directory.mkdir()
    count = PAD if past_sample else rows
    for name, make in MAKERS.items():
        lines: list = [make(i) for i in range(count if name == table else rows)]
        if name == table:
            lines.insert(count - 3, bad)
        write_lines(directory / SHARD[name], lines)
    return directory, directory / SHARD[table], count - 2


def read_error(source: Path, **options) -> str:
    with pytest.raises(schedlab.FormatError) as info:
        schedlab.read(source, **options)
    message = str(info.value)
    assert "\n" not in message
    return message


def assert_no_sentinel(workload) -> None:
    """No null marker (-2^63, or the -9.2e12 s it maps to) leaked into the jobs."""
    for job in workload.jobs:
        for value in (job.submit_time, job.wait_time, job.run_time):
            assert value is None or abs(value) < 1e11
        assert job.extras["collection_id"] not in (None, SENTINEL)
        for task in job.tasks:
            assert task.extras["instance_index"] not in (None, SENTINEL)


def check_rejected(directory: Path, shard: Path, line: int, field: str | None, text: str) -> str:
    """Every engine rejects the record at ``shard:line`` naming ``field`` (message
    containing ``text``), and in lenient mode skips it alone, identically."""
    prefix = f"{shard}:{line}: " + (f"field {field}: " if field else "")
    messages = {e: read_error(directory, engine=e) for e in ("python", "auto")}
    assert messages["python"] == messages["auto"]
    message = messages["python"]
    assert message.startswith(prefix), message
    assert text in message, message
    lenient = {e: schedlab.read(directory, engine=e, lenient=True) for e in ("python", "auto")}
    a, b = lenient["python"], lenient["auto"]
    assert a.jobs == b.jobs and a.meta["summary"] == b.meta["summary"]
    assert a.meta["skipped"] == b.meta["skipped"] == 1
    assert a.meta["rejects"] == b.meta["rejects"] == [message]
    assert_no_sentinel(a)
    return message


# --------------------------------------------------------------------------- 1. required fields

#: (table, bad record, field named): a time, an id or an event type that is null
#: or missing was read as -2^63 (a job submitted at -9.2e12 s, collection
#: -9223372036854775808, a run time of 0, a machine dropped from the capacity).
REQUIRED_CASES = {
    "null submit time": ("collection_events", collection(0, time=None), "time"),
    "missing submit time": (
        "collection_events",
        {k: v for k, v in collection(0).items() if k != "time"},
        "time",
    ),
    "empty-string time": ("collection_events", collection(1, time=""), "time"),
    "null schedule time": ("collection_events", collection(1, time=None), "time"),
    "null event type": ("collection_events", collection(1, type=None), "type"),
    "missing collection id": (
        "instance_events",
        {k: v for k, v in instance(0).items() if k != "collection_id"},
        "collection_id",
    ),
    "null instance index": ("instance_events", instance(1, instance_index=None), "instance_index"),
    "null instance time": ("instance_events", instance(2, time=None), "time"),
    "null usage end": ("instance_usage", usage(2, end_time=None), "end_time"),
    "null usage collection": ("instance_usage", usage(2, collection_id=None), "collection_id"),
    "null machine time": ("machine_events", machine(5, time=None), "time"),
    "null machine id": ("machine_events", machine(5, machine_id=None), "machine_id"),
    "empty machine event type": ("machine_events", machine(5, type=""), "type"),
}


@pytest.mark.parametrize("past_sample", [False, True], ids=["head", "past-sample"])
@pytest.mark.parametrize("case", sorted(REQUIRED_CASES))
def test_a_null_or_missing_required_field_is_an_error(tmp_path, case, past_sample):
    table, bad, field = REQUIRED_CASES[case]
    directory, shard, line = trace_with(tmp_path, table, bad, past_sample)
    check_rejected(directory, shard, line, field, f"every {table} record needs it")


def test_null_times_never_become_sentinel_values(tmp_path, capsys):
    """The audit's reproducer: a null SUBMIT time made ``first_submit`` -9.2e12 and
    ``convert`` wrote a submit of -9223372037454.775; now ``info`` fails with one
    line, exit 2, and the lenient read has the job without that event."""
    from schedlab.cli import main

    directory, shard, line = trace_with(tmp_path, "collection_events", collection(0, time=None))
    with pytest.raises(SystemExit) as exit_info:
        main(["info", str(directory)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"schedlab: error: {shard}:{line}: field time: null or missing, but every "
        "collection_events record needs it"
    ]
    w = schedlab.read(directory, lenient=True)
    assert w.meta["summary"]["first_submit_s"] > 0
    assert_no_sentinel(w)


def test_a_machine_without_a_time_is_not_dropped_silently(tmp_path):
    directory, shard, line = trace_with(tmp_path, "machine_events", machine(5, time=None))
    message = read_error(directory)
    assert message.startswith(f"{shard}:{line}: field time: ")
    w = schedlab.read(directory, lenient=True)
    assert w.meta["skipped"] == 1 and w.header.max_procs == 9 * 50  # the other 9 machines


def test_required_fields_in_csv_and_parquet_exports(tmp_path):
    csv_dir = tmp_path / "csv"
    csv_dir.mkdir()
    rows = ["time,type,collection_id,priority"]
    rows += [f"{700_000_000 + i},0,{10 + i},100" for i in range(5)]
    rows[3] = ",0,12,100"
    path = csv_dir / "collection_events-000000000000.csv"
    path.write_text("\n".join(rows) + "\n")
    assert read_error(csv_dir) == (
        f"{path}:4: field time: null or missing, but every collection_events record needs it"
    )
    assert schedlab.read(csv_dir, lenient=True).meta["skipped"] == 1
    records = [instance(i) for i in range(6)]
    for record in records:
        for key in ("time", "collection_id", "machine_id"):
            record[key] = int(record[key])
        del record["constraint"]
    records[4]["collection_id"] = None
    parquet = tmp_path / "instance_events.parquet"
    pq.write_table(pa.Table.from_pylist(records), parquet)
    json_dir = tmp_path / "json"
    json_dir.mkdir()
    write_lines(json_dir / IE, records)
    message = read_error(parquet, format="google")
    assert message.startswith(f"{parquet}:5: field collection_id: null or missing")
    assert message.split(":", 2)[2] == read_error(json_dir).split(":", 2)[2]
    assert schedlab.read(parquet, format="google", lenient=True).meta["skipped"] == 1


V2_ROWS = {
    "job_events": ["700000000", "", "3418309", "0", "user", "3", "name", "logical"],
    "task_events": [
        "700000000",
        "",
        "3418309",
        "0",
        "41",
        "0",
        "user",
        "3",
        "9",
        "0.125",
        "0.25",
        "0",
        "",
    ],
    "task_usage": ["700000000", "700300000", "3418309", "0", "41", "0.1", "0.2", *[""] * 13],
    "machine_events": ["0", "41", "0", "platform", "0.5", "0.5"],
}


def v2_trace(tmp_path: Path, table: str, line: str) -> tuple[Path, Path]:
    """A 2011 trace whose ``table`` has ``line`` as its line 3 (of 5)."""
    directory = tmp_path / "v2"
    directory.mkdir()
    for name, row in V2_ROWS.items():
        lines = [",".join(row)] * 4
        if name == table:
            lines.insert(2, line)
        (directory / f"{name}-sample.csv").write_text("\n".join(lines) + "\n")
    return directory, directory / f"{table}-sample.csv"


@pytest.mark.parametrize(
    ("table", "position", "column"),
    [
        ("job_events", 0, "time"),
        ("job_events", 2, "job_id"),
        ("job_events", 3, "event_type"),
        ("task_events", 3, "task_index"),
        ("task_usage", 1, "end_time"),
        ("machine_events", 0, "time"),
        ("machine_events", 1, "machine_id"),
    ],
)
def test_v2_empty_required_cell_is_an_error(tmp_path, table, position, column):
    cells = list(V2_ROWS[table])
    cells[position] = ""
    directory, path = v2_trace(tmp_path, table, ",".join(cells))
    assert read_error(directory) == (
        f"{path}:3: field {position + 1} ({column}): null or missing, but every {table} "
        "record needs it"
    )
    w = schedlab.read(directory, lenient=True)
    assert w.meta["skipped"] == 1
    assert_no_sentinel(w)


# --------------------------------------------------------------------------- 2. CSV records

CSV_HEADER = "time,type,collection_id,user,collection_name,priority"


def csv_trace(tmp_path: Path, bad: str, at: int = 4, rows: int = 15) -> tuple[Path, Path]:
    """A v3 CSV collection_events shard of ``rows`` good rows with ``bad`` as line
    ``at`` (the header is line 1)."""
    directory = tmp_path / "csv"
    directory.mkdir()
    lines = [CSV_HEADER]
    lines += [
        f"{700_000_000 + 1000 * i},{(0, 3, 6)[i % 3]},{10 + i // 3},u,n,100" for i in range(rows)
    ]
    lines.insert(at - 1, bad)
    path = directory / "collection_events-000000000000.csv"
    path.write_text("\n".join(lines) + "\n")
    return directory, path


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        ('700000001,0,99,"abc,n,100', "bad CSV (unexpected end of data)"),
        ('700000001,0,99,"u\nx",n,100', "bad CSV (unexpected end of data)"),
        ('700000001,0,99,"u"x,n,100', "bad CSV (',' expected after '\"')"),
        ("700000001,0,99,u", "4 cells, but the header has 6 columns"),
        ("700000001,", "2 cells, but the header has 6 columns"),
        ("700000001,0,99,u,n,100,7", "7 cells, but the header has 6 columns"),
    ],
    ids=["unterminated quote", "quote across lines", "text after quote", "short", "cut", "long"],
)
def test_a_bad_csv_row_is_one_bad_line(tmp_path, bad, expected):
    """An unterminated quote swallowed the rest of the shard (4 rows of 15 read,
    nothing skipped); a short row was padded with nulls (a job of id -2^63)."""
    directory, path = csv_trace(tmp_path, bad)
    assert read_error(directory) == f"{path}:4: {expected}"
    for engine in ("python", "auto"):
        w = schedlab.read(directory, lenient=True, engine=engine)
        assert w.meta["skipped"] == 1 + bad.count("\n")
        assert w.meta["summary"]["tables"]["collection_events"]["rows"] == 15
        assert len(w) == 5
        assert_no_sentinel(w)


def test_a_truncated_last_csv_row_is_an_error(tmp_path):
    directory, path = csv_trace(tmp_path, "x", at=2)
    path.write_text(path.read_text().replace("x\n", "") + "700000001,0")
    assert read_error(directory) == f"{path}:17: 2 cells, but the header has 6 columns"
    assert len(schedlab.read(directory, lenient=True)) == 5


def test_v2_unterminated_quote_is_one_bad_line(tmp_path):
    cells = list(V2_ROWS["job_events"])
    cells[4] = '"user'
    directory, path = v2_trace(tmp_path, "job_events", ",".join(cells))
    assert read_error(directory) == f"{path}:3: bad CSV (unexpected end of data)"
    w = schedlab.read(directory, lenient=True)
    assert w.meta["skipped"] == 1 and w.meta["summary"]["tables"]["job_events"]["rows"] == 4


# --------------------------------------------------------------------------- 3. plain digits

PLAIN_CASES = {
    "arabic-indic collection id": (
        "instance_events",
        instance(1, collection_id="١"),
        "collection_id",
        "expected an integer in ASCII digits, got '١'",
    ),
    "fullwidth priority": (
        "collection_events",
        collection(1, priority="２００"),
        "priority",
        "ASCII digits",
    ),
    "grouped time": (
        "collection_events",
        collection(0, time="601_000_000"),
        "time",
        "expected an integer in ASCII digits, got '601_000_000'",
    ),
    "grouped cpus": (
        "instance_events",
        instance(1, resource_request={"cpus": "0.0_5", "memory": 0.1}),
        "resource_request.cpus",
        "expected a number in ASCII digits, got '0.0_5'",
    ),
    "arabic-indic cpus": (
        "instance_events",
        instance(1, resource_request={"cpus": "٠.٥", "memory": 0.1}),
        "resource_request.cpus",
        "ASCII digits",
    ),
    "superscript event type": ("collection_events", collection(0, type="²"), "type", "unknown"),
    "arabic-indic event type": ("collection_events", collection(0, type="٣"), "type", "unknown"),
    "hexadecimal id": (
        "collection_events",
        collection(0, collection_id="0x10"),
        "collection_id",
        "",
    ),
}


@pytest.mark.parametrize("past_sample", [False, True], ids=["head", "past-sample"])
@pytest.mark.parametrize("case", sorted(PLAIN_CASES))
def test_numbers_must_be_plain_ascii(tmp_path, case, past_sample):
    """Python's int() and float() read other scripts' digits and digit grouping (and
    pyarrow read "0x10" as 16); no trace writes them and every engine refuses them."""
    table, bad, field, text = PLAIN_CASES[case]
    directory, shard, line = trace_with(tmp_path, table, bad, past_sample)
    check_rejected(directory, shard, line, field, text)


def test_plain_ascii_in_csv_and_v2(tmp_path):
    directory, path = csv_trace(tmp_path, "700000001,0,１２,u,n,100")
    assert read_error(directory).startswith(f"{path}:4: field collection_id: expected an integer")
    cells = list(V2_ROWS["task_events"])
    cells[9] = "0.1_25"
    v2, v2_path = v2_trace(tmp_path, "task_events", ",".join(cells))
    assert read_error(v2) == f"{v2_path}:3: field 10 (cpu_request): expected a number, got '0.1_25'"
    cells = list(V2_ROWS["job_events"])
    cells[0] = "٧٠٠٠٠٠٠٠٠"
    (v2 / "job_events-sample.csv").write_text(",".join(cells) + "\n")
    assert read_error(v2).endswith(":1: field 1 (time): expected a number, got '٧٠٠٠٠٠٠٠٠'")


# --------------------------------------------------------------------------- 4. float ids


@pytest.mark.parametrize("past_sample", [False, True], ids=["head", "past-sample"])
def test_an_id_as_a_float_beyond_2_53_is_an_error(tmp_path, past_sample):
    """``1234567890123456789.0`` was read as ...768; where every id of the shard is a
    float the block parser's column is a float column and must refuse it too."""
    bad = instance(1, collection_id=1234567890123456789.0)
    directory, shard, line = trace_with(tmp_path, "instance_events", bad, past_sample)
    for name in ("instance_events-000000000000.json",):  # every id a float
        rows = [json.loads(x) for x in (directory / name).read_text().splitlines()]
        for row in rows:
            row["collection_id"] = float(row["collection_id"])
        write_lines(directory / name, rows)
    check_rejected(directory, shard, line, "collection_id", "beyond 2^53-1")


def test_floats_up_to_2_53_minus_1_are_exact_integers(tmp_path):
    rows = [instance(i) for i in range(6)]
    rows[1]["collection_id"] = float(2**53 - 1)
    rows[4]["time"] = 7.01e8
    directory = tmp_path / "ok"
    directory.mkdir()
    write_lines(directory / IE, rows)
    for engine in ("python", "auto"):
        w = schedlab.read(directory, engine=engine)
        assert 2**53 - 1 in [job.extras["collection_id"] for job in w.jobs]
    rows[1]["collection_id"] = float(2**53)
    write_lines(directory / IE, rows)
    assert "beyond 2^53-1" in read_error(directory)


def test_float_ids_in_parquet(tmp_path):
    records = [instance(i) for i in range(6)]
    for record in records:
        record["time"] = int(record["time"])
        record["collection_id"] = float(record["collection_id"])
        record["machine_id"] = int(record["machine_id"])
        del record["constraint"]
    records[3]["collection_id"] = 1234567890123456789.0
    path = tmp_path / "instance_events.parquet"
    pq.write_table(pa.Table.from_pylist(records), path)
    assert read_error(path, format="google").startswith(f"{path}:4: field collection_id: ")
    records[3]["collection_id"] = 3.0
    pq.write_table(pa.Table.from_pylist(records), path)
    ids = sorted(job.extras["collection_id"] for job in schedlab.read(path, format="google").jobs)
    assert ids == [3, 100, 101]


def test_an_enum_written_as_a_float_is_an_error_in_every_engine(tmp_path):
    """The block parser cast a float column of event types (``3.0``) to integers."""
    directory = tmp_path / "t"
    directory.mkdir()
    rows = [collection(i, type=float((0, 3, 6)[i % 3])) for i in range(6)]
    write_lines(directory / CE, rows)
    messages = {e: read_error(directory, engine=e) for e in ("python", "auto")}
    assert messages["python"] == messages["auto"]
    assert ":1: field type: expected an enum number or name, got 0.0" in messages["auto"]


# --------------------------------------------------------------------------- 5. duplicates

DUPLICATE_CASES = {
    "collection id": (
        "collection_events",
        '{"time": "700000000", "type": 0, "collection_id": "1", "collection_id": "2"}',
        "collection_id",
    ),
    "time": (
        "instance_events",
        '{"time": "700000000", "type": 0, "collection_id": "1", "instance_index": 0, '
        '"time": "700000001"}',
        "time",
    ),
    "nested cpus": (
        "instance_events",
        '{"time": "700000000", "type": 0, "collection_id": "1", "instance_index": 0, '
        '"resource_request": {"cpus": 0.5, "cpus": 0.25}}',
        "resource_request.cpus",
    ),
    "repeated field, one empty": (
        "instance_events",
        '{"time": "700000000", "type": 0, "collection_id": "1", "instance_index": 0, '
        '"constraint": [], "constraint": [{"name": "a", "value": "b", "relation": 0}]}',
        "constraint",
    ),
    "start-after ids": (
        "collection_events",
        '{"time": "700000000", "type": 0, "collection_id": "1", '
        '"start_after_collection_ids": ["5"], "start_after_collection_ids": []}',
        "start_after_collection_ids",
    ),
    "spaced, colons in strings": (
        "collection_events",
        '{"time" : "700000000" , "type" : 0 , "user" : "a:b:c" , "collection_id" : "1" ,'
        ' "collection_name" : "x:y" , "collection_id" : "2"}',
        "collection_id",
    ),
    "inside a constraint": (
        "instance_events",
        '{"time": "700000000", "type": 0, "collection_id": "1", "instance_index": 0, '
        '"constraint": [{"name": "a", "name": "b", "relation": 0}]}',
        "constraint",
    ),
}


@pytest.mark.parametrize("past_sample", [False, True], ids=["head", "past-sample"])
@pytest.mark.parametrize("case", sorted(DUPLICATE_CASES))
def test_a_key_given_twice_is_an_error(tmp_path, case, past_sample):
    """Python's json keeps the last value of a key given twice; which one was meant
    cannot be known."""
    table, bad, field = DUPLICATE_CASES[case]
    directory, shard, line = trace_with(tmp_path, table, bad, past_sample)
    check_rejected(directory, shard, line, field, "given twice in one record")


@pytest.mark.parametrize("past_sample", [False, True], ids=["head", "past-sample"])
def test_a_key_the_reader_does_not_read_may_be_given_twice(tmp_path, past_sample):
    """A key it does not read given twice changes nothing it reads: every engine
    reads the record (pyarrow's parser skips such keys without looking)."""
    bad = json.dumps(usage(3))[:-1] + ', "assigned_memory": 0.1, "assigned_memory": 0.2}'
    directory, _, _ = trace_with(tmp_path, "instance_usage", bad, past_sample)
    bad = json.dumps(instance(1))[:-1] + ', "resource_request": {"cpus": 0.5, "x": 1, "x": 2}}'
    bad = bad.replace('"resource_request": {"cpus": 0.25, "memory": 0.125}, ', "")
    write_lines(directory / IE, [instance(0), bad, *[instance(i) for i in range(2, 9)]])
    a = schedlab.read(directory, engine="python")
    b = schedlab.read(directory, engine="auto")
    assert a.jobs == b.jobs and a.meta["skipped"] == b.meta["skipped"] == 0


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (
            "time,type,collection_id,priority,collection_id",
            "field collection_id: column given twice in the header",
        ),
        (
            "time,type,collection_id,instance_index,resource_request.cpus,resource_request_cpus",
            "field resource_request.cpus: columns 'resource_request.cpus' and "
            "'resource_request_cpus' of the header both give it",
        ),
        (
            "time,type,collection_id,instance_index,resource_request__memory,"
            "resource_request.memory",
            "field resource_request.memory: columns",
        ),
    ],
    ids=["same name", "two styles", "double underscore"],
)
def test_a_csv_header_giving_a_field_twice_is_an_error(tmp_path, header, expected):
    table = "instance_events" if "instance_index" in header else "collection_events"
    directory = tmp_path / "csv"
    directory.mkdir()
    width = header.count(",") + 1
    rows = [header] + [f"{700_000_000 + i},0,{10 + i}" + ",0" * (width - 3) for i in range(4)]
    path = directory / f"{table}-000000000000.csv"
    path.write_text("\n".join(rows) + "\n")
    message = read_error(directory)
    assert message.startswith(f"{path}:1: {expected}"), message
    w = schedlab.read(directory, lenient=True)
    assert w.meta["skipped"] == 1 and w.meta["rejects"] == [message] and len(w) == 0


def test_a_parquet_struct_with_a_field_twice_is_an_error(tmp_path):
    """pyarrow cannot tell the two ``cpus`` apart (the request was read as unknown;
    the row-by-row path raised a ValueError, exit 3)."""
    request = pa.StructArray.from_arrays(
        [pa.array([0.5, 0.25]), pa.array([0.1, 0.2])], names=["cpus", "cpus"]
    )
    table = pa.table(
        {
            "time": [700_000_000, 700_000_001],
            "type": [0, 3],
            "collection_id": [5, 5],
            "instance_index": [0, 0],
            "resource_request": request,
        }
    )
    path = tmp_path / "instance_events.parquet"
    pq.write_table(table, path)
    assert read_error(path, format="google") == (
        f"{path}: field resource_request.cpus: column given twice (which one is meant?)"
    )
    assert schedlab.read(path, format="google", lenient=True).meta["skipped"] == 1


def test_duplicate_detection_finds_only_read_keys():
    assert F.duplicated_field('{"a": 1, "a": 2}', "collection_events") is None
    assert F.duplicated_field('{"user": 1, "user": 2}', "collection_events") == "user"
    assert F.duplicated_field('{"capacity": {"cpus": 1, "cpus": 2}}', "machine_events") == (
        "capacity.cpus"
    )
    assert F.duplicated_field('{"capacity": {"x": 1, "x": 2}}', "machine_events") is None
    assert F.duplicated_field("[1, 2]", "machine_events") is None


# --------------------------------------------------------------------------- 6. long lines


@pytest.mark.parametrize("kind", ["json", "json.gz", "csv"])
def test_a_line_longer_than_the_cap_is_one_bad_line(tmp_path, monkeypatch, kind):
    """A gzip bomb of one whitespace line took 3 GB of memory; a line longer than
    ``MAX_LINE_BYTES`` (64 MiB; 4 KiB here) is reported by itself and read past in
    pieces, never held whole."""
    monkeypatch.setattr(F, "MAX_LINE_BYTES", 4096, raising=False)
    monkeypatch.setattr(A, "MAX_LINE_BYTES", 4096, raising=False)
    directory = tmp_path / "t"
    directory.mkdir()
    if kind == "csv":
        lines = [CSV_HEADER] + [f"{700_000_000 + i},0,{10 + i // 3},u,n,100" for i in range(6)]
        lines.insert(3, "7" * 10_000)
        path = directory / "collection_events-000000000000.csv"
        path.write_text("\n".join(lines) + "\n")
    else:
        lines = [json.dumps(collection(i)) for i in range(6)]
        lines.insert(2, " " * 10_000)
        data = ("\n".join(lines) + "\n").encode()
        path = directory / ("collection_events-000000000000." + kind)
        path.write_bytes(gzip.compress(data) if kind.endswith("gz") else data)
    for engine in ("python", "auto"):
        message = read_error(directory, engine=engine)
        assert message == (
            f"{path}:{4 if kind == 'csv' else 3}: line longer than 4096 bytes: not a trace "
            "record (a damaged file?)"
        )
        w = schedlab.read(directory, engine=engine, lenient=True)
        assert w.meta["skipped"] == 1 and len(w) == 2
        assert w.meta["summary"]["tables"]["collection_events"]["rows"] == 6


@pytest.mark.parametrize("end", [b"", b"\n"], ids=["last line", "line end"])
def test_the_fast_parser_does_not_buffer_an_endless_line(tmp_path, monkeypatch, end):
    """The block reader grew its buffer until a line end came: it now leaves a line
    longer than the cap to the exact parser at once."""
    monkeypatch.setattr(A, "MAX_LINE_BYTES", 1 << 16, raising=False)
    path = tmp_path / "collection_events-000000000000.json"
    path.write_bytes(json.dumps(collection(0)).encode() + b"\n" + b" " * (3 << 20) + end)
    with pytest.raises(A.Irregular):
        for _ in A._blocks(str(path), 1 << 12):
            pass


def test_a_real_size_long_line_in_a_gzip_shard(tmp_path):
    """The cap itself (64 MiB), on a small gzip file."""
    directory = tmp_path / "t"
    directory.mkdir()
    lines = [json.dumps(collection(i)).encode() for i in range(3)]
    data = lines[0] + b"\n" + b" " * ((64 << 20) + 10) + b"\n" + b"\n".join(lines[1:])
    path = directory / "collection_events-000000000000.json.gz"
    path.write_bytes(gzip.compress(data, compresslevel=1))
    assert read_error(directory) == (
        f"{path}:2: line longer than 64 MiB: not a trace record (a damaged file?)"
    )


# --------------------------------------------------------------------------- 7. out of order


def test_events_out_of_order_are_counted_and_flagged(tmp_path):
    """SCHEDULE before SUBMIT and FINISH before SCHEDULE made the wait or run time
    unknown without a word; they are now counted (summary and a header note) and
    flagged on the job, the same in every engine."""
    rows = [
        collection(0, time="705000000"),  # SUBMIT after the SCHEDULE
        collection(1, time="702000000"),
        collection(2, time="712000000"),
        collection(3, time="701000000"),
        collection(4, time="712000000"),  # SCHEDULE after the FINISH
        collection(5, time="702000000"),
        collection(6),
        collection(7),
        collection(8),
    ]
    directory = tmp_path / "t"
    directory.mkdir()
    write_lines(directory / CE, rows)
    workloads = [schedlab.read(directory, engine=e) for e in ("python", "auto")]
    for w in workloads:
        assert w.meta["summary"]["times_out_of_order"] == {
            "end_before_start": 1,
            "start_before_submit": 1,
        }
        by_id = {job.extras["collection_id"]: job for job in w.jobs}
        first, second, third = by_id[100], by_id[101], by_id[102]
        assert first.wait_time is None and first.run_time == 10.0
        assert first.extras["wait_unknown"] == "start_before_submit"
        assert "run_unknown" not in first.extras
        assert second.run_time is None and second.extras["run_unknown"] == "end_before_start"
        assert "wait_unknown" not in third.extras and "run_unknown" not in third.extras
        assert any("events out of order" in note for note in w.header.notes)
    assert workloads[0].jobs == workloads[1].jobs
    copy = tmp_path / "copy"
    schedlab.write(workloads[0], copy, format="google")
    again = schedlab.read(copy)
    assert again.meta["summary"]["times_out_of_order"] == {
        "end_before_start": 1,
        "start_before_submit": 1,
    }


def test_no_out_of_order_note_for_a_clean_trace(tmp_path):
    directory = tmp_path / "t"
    directory.mkdir()
    write_lines(directory / CE, [collection(i) for i in range(9)])
    w = schedlab.read(directory)
    assert w.meta["summary"]["times_out_of_order"] == {}
    assert not any("out of order" in note for note in w.header.notes)


# --------------------------------------------------------------------------- validate


@pytest.mark.parametrize(
    "bad",
    [
        collection(0, time=None),
        collection(0, collection_id="٣"),
        DUPLICATE_CASES["collection id"][1],
        collection(0, collection_id=1234567890123456789.0),
    ],
    ids=["null time", "arabic-indic id", "key twice", "float id"],
)
def test_validate_never_says_ok_on_these_records(tmp_path, capsys, bad):
    from schedlab.cli import main

    directory, _, _ = trace_with(tmp_path, "collection_events", bad)
    with pytest.raises(SystemExit) as exit_info:
        main(["validate", "--json", str(directory)])
    report = json.loads(capsys.readouterr().out)
    assert exit_info.value.code == 1 and report["ok"] is False and report["skipped"] == 1


# --------------------------------------------------------------------------- Dask


distributed = pytest.importorskip("distributed", reason="needs the dask extra (dev installs it)")


def test_dask_engine_rejects_the_same_records(tmp_path):
    """The Dask map tasks run the same parsers: the same error, the same skips."""
    directory = tmp_path / "trace"
    directory.mkdir()
    ce = [collection(i) for i in range(30)]
    ie = [instance(i) for i in range(30)]
    ce.insert(4, collection(0, time=None))
    ce.insert(9, collection(0, priority="２００"))
    ce.insert(12, DUPLICATE_CASES["collection id"][1])
    ie.insert(2, instance(1, collection_id=1234567890123456789.0))
    ie.insert(7, {k: v for k, v in instance(0).items() if k != "collection_id"})
    write_lines(directory / CE, ce)
    write_lines(directory / IE, ie)
    expected = schedlab.read(directory, lenient=True)
    assert expected.meta["skipped"] == 5
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None, silence_logs=40
    ) as cluster:
        got = schedlab.read(
            directory, engine="dask", scheduler=cluster.scheduler_address, lenient=True
        )
        with pytest.raises(schedlab.FormatError) as info:
            schedlab.read(directory, engine="dask", scheduler=cluster.scheduler_address)
    assert got.jobs == expected.jobs
    assert sorted(got.meta["rejects"]) == sorted(expected.meta["rejects"])
    assert str(info.value) in expected.meta["rejects"]
    assert_no_sentinel(got)


def test_good_values_near_the_new_rules_stay_on_the_fast_path(tmp_path):
    """Regular values next to the new rules are data, read alike by both parsers
    without leaving the fast one: numbers in strings with exponents, an ``x`` in a
    string that is not a number, an empty repeated field beside a set one."""
    rows = [instance(i) for i in range(8)]
    for row in rows:
        row["resource_request"] = {"cpus": 0.25, "memory": 0.5}
    rows[3]["resource_request"] = {"cpus": 1e-3, "memory": 0.5}
    rows[4]["constraint"] = [{"name": "0x10", "value": "x", "relation": 0}]
    rows[5]["collection_id"] = str(2**63 - 1)
    path = write_lines(tmp_path / IE, rows)
    exact = F.parse_exact(path, "instance_events", "json", 0)
    fast = F.parse_fast(path, "instance_events", 0)
    assert fast is not None
    for name in exact:
        assert np.array_equal(exact[name], fast[name], equal_nan=exact[name].dtype != object)
    rows[1]["collection_id"] = " 105 "  # ASCII spaces around ASCII digits
    path = write_lines(tmp_path / IE, rows)
    assert F.parse_exact(path, "instance_events", "json", 0)["collection_id"][1] == 105
