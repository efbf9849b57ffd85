"""Fixes of the fuzz audit for the Google and SWF readers.

* Google: a lone UTF-16 surrogate (the JSON escape ``"\\ud800"``, or the bytes
  ``ED A0 80``, which are not UTF-8) was read and then crashed every writer (exit 3);
  it is now a bad record naming the shard, the line and the field, in every engine.
* Google: a number of thousands of digits gave Python's "use
  sys.set_int_max_str_digits()" as its message; it is now out of range (or an
  unknown enum value), naming the field.
* SWF: an error quoting a bad value of 100,000 characters quoted it whole.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import schedlab
from schedlab.cli import main
from schedlab.formats.swf.header import header_problems, parse_header

pytest.importorskip("pyarrow", reason="the fast paths need pyarrow (dev installs it)")

CE = "collection_events-000000000000.json"
IE = "instance_events-000000000000.json"
ENGINES = ["python", "auto"]


def collection(i: int) -> dict:
    return {
        "time": str(700_000_000 + 1000 * i),
        "type": 3 if i % 2 else 0,
        "collection_id": str(100 + i // 2),
        "collection_type": 0,
        "priority": 200,
        "user": f"user{i % 3}",
    }


def instance(i: int) -> dict:
    return {
        "time": str(700_000_500 + 1000 * i),
        "type": 3 if i % 2 else 0,
        "collection_id": str(100 + i // 2),
        "instance_index": i % 2,
        "machine_id": str(7 + i),
        "alloc_instance_index": -1,
        "resource_request": {"cpus": 0.25, "memory": 0.125},
    }


def trace_with(tmp_path: Path, table: str, bad: bytes, at: int = 3, rows: int = 8) -> Path:
    """A two-table v3 trace whose ``table`` shard has the raw line ``bad`` at line
    ``at + 1`` among ``rows`` good ones."""
    directory = tmp_path / "trace"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir()
    ce = [json.dumps(collection(i)).encode() for i in range(rows)]
    ie = [json.dumps(instance(i)).encode() for i in range(rows)]
    (ce if table == "collection_events" else ie).insert(at, bad)
    (directory / CE).write_bytes(b"\n".join(ce) + b"\n")
    (directory / IE).write_bytes(b"\n".join(ie) + b"\n")
    return directory


def read_error(source: Path, **options) -> str:
    with pytest.raises(schedlab.FormatError) as info:
        schedlab.read(source, **options)
    message = str(info.value)
    assert "\n" not in message
    return message


def _record(prefix: str, **fields: str) -> bytes:
    """A collection event line whose extra fields are raw JSON text (``fields``)."""
    extra = "".join(f',"{k}":{v}' for k, v in fields.items())
    return f'{{"time":"700000001","type":0,"collection_id":"5"{prefix}{extra}}}'.encode()


# --------------------------------------------------------------------------- surrogates

SURROGATE_LINES = {
    # the JSON escape of a lone high surrogate
    "escape in user": ("collection_events", rb'"user":"a\ud800b"', "user"),
    # a lone low surrogate, in another name
    "low escape in name": ("collection_events", rb'"collection_name":"\udc00"', "collection_name"),
    # a high surrogate followed by something that is not a low one
    "unpaired high": ("collection_events", rb'"collection_logical_name":"\ud800\u0041"', None),
    # UTF-8 bytes of a surrogate: not UTF-8
    "bytes in user": ("collection_events", b'"user":"a\xed\xa0\x80b"', "user"),
    # inside a repeated field the reader keeps whole
    "escape in constraint": (
        "instance_events",
        rb'"instance_index":0,"constraint":[{"name":"\ud800","value":"1"}]',
        "constraint",
    ),
}


def _surrogate_line(table: str, text: bytes) -> bytes:
    base = b'{"time":"700000001","type":0,"collection_id":"5",'
    return base + text + b"}"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", sorted(SURROGATE_LINES))
def test_v3_lone_surrogate_is_a_bad_record(tmp_path, case, engine):
    table, text, field = SURROGATE_LINES[case]
    field = field or "collection_logical_name"
    directory = trace_with(tmp_path, table, _surrogate_line(table, text))
    shard = directory / (CE if table == "collection_events" else IE)
    message = read_error(directory, engine=engine)
    assert message.startswith(f"{shard}:4: field {field}: "), message
    assert "surrogate" in message[len(str(shard)) :], message
    lenient = schedlab.read(directory, engine=engine, lenient=True)
    assert lenient.meta["skipped"] == 1
    assert lenient.meta["rejects"] == [message]
    assert lenient.meta["summary"]["tables"][table]["rows"] == 8
    # what is read can be written
    schedlab.write(lenient, tmp_path / "out.swf")
    schedlab.write(lenient, tmp_path / "out.json", format="batsim")


@pytest.mark.parametrize("engine", ENGINES)
def test_v3_surrogate_pair_is_one_character(tmp_path, engine):
    """A proper pair (an emoji) is text, read and written."""
    line = _surrogate_line("collection_events", rb'"user":"a\ud83d\ude00b"')
    directory = trace_with(tmp_path, "collection_events", line)
    workload = schedlab.read(directory, engine=engine)
    assert "a\U0001f600b" in workload.header.names("User").values()
    out = tmp_path / "out.swf"
    schedlab.write(workload, out)
    assert "a\U0001f600b" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "bad",
    [
        # a key of another table, ignored beyond the first 64 KiB
        b'"assigned_memory":"\xed\xa0\x80"',
        # a key inside resource_request the reader does not read
        b'"resource_request":{"cpus":0.1,"memory":0.1,"x":"\xff"}',
    ],
)
def test_v3_bytes_not_utf8_in_an_unread_field_every_engine_agrees(tmp_path, bad):
    """Beyond the sample of the pyarrow parser, in a field it skips: the line is not
    UTF-8, so every engine rejects it (the fast path used to accept it)."""
    line = b'{"time":"700000001","type":0,"collection_id":"5","instance_index":0,' + bad + b"}"
    directory = trace_with(tmp_path, "instance_events", line, at=900, rows=1000)
    messages = [read_error(directory, engine=engine) for engine in ENGINES]
    assert messages[0] == messages[1]
    assert messages[0].startswith(f"{directory / IE}:901: "), messages[0]
    assert "not UTF-8" in messages[0]
    for engine in ENGINES:
        lenient = schedlab.read(directory, engine=engine, lenient=True)
        assert lenient.meta["skipped"] == 1
        assert lenient.meta["summary"]["tables"]["instance_events"]["rows"] == 1000


def test_v3_csv_constraint_cell_with_a_lone_surrogate(tmp_path):
    directory = tmp_path / "trace"
    directory.mkdir()
    rows = ["time,type,collection_id,instance_index,constraint"]
    rows += [f"{700_000_000 + i},0,{10 + i},0," for i in range(5)]
    rows[3] = rows[3] + '"[{""name"":""\\ud800""}]"'
    (directory / "instance_events-000000000000.csv").write_text("\n".join(rows) + "\n")
    message = read_error(directory)
    assert message.startswith(
        f"{directory / 'instance_events-000000000000.csv'}:4: field constraint: "
    ), message
    assert "surrogate" in message.rsplit("field constraint: ", 1)[1]


def _v2_trace(tmp_path: Path, bad_user: bytes) -> Path:
    directory = tmp_path / "v2"
    directory.mkdir()
    rows = [f"{600_000_000 + i},,{3418309 + i},0,user,3,name,logical".encode() for i in range(5)]
    rows[2] = rows[2].replace(b",user,", b"," + bad_user + b",")
    (directory / "job_events-sample.csv").write_bytes(b"\n".join(rows) + b"\n")
    return directory


def test_v2_bytes_of_a_surrogate_are_rejected(tmp_path):
    directory = _v2_trace(tmp_path, b"a\xed\xa0\x80b")
    message = read_error(directory, format="google-v2")
    path = directory / "job_events-sample.csv"
    assert message.startswith(f"{path}:3: not UTF-8 text"), message
    assert "surrogate" in message[len(str(path)) :], message
    lenient = schedlab.read(directory, format="google-v2", lenient=True)
    assert lenient.meta["skipped"] == 1
    schedlab.write(lenient, tmp_path / "out.swf")


@pytest.mark.parametrize(
    ("column", "value", "expected"),
    [
        (0, "7" * 5000, "field 1 (time): out of range: expected an integer from 0 to "),
        (3, "7" * 5000, "field 4 (event_type): unknown event type '7777"),
        (2, "0" * 5000 + "5", None),  # job 5
    ],
)
def test_v2_number_of_thousands_of_digits(tmp_path, column, value, expected):
    directory = tmp_path / "v2"
    directory.mkdir()
    rows = [f"{600_000_000 + i},,{3418309 + i},0,user,3,name,logical".split(",") for i in range(5)]
    rows[2][column] = value
    path = directory / "job_events-sample.csv"
    path.write_text("\n".join(",".join(row) for row in rows) + "\n")
    if expected is None:
        workload = schedlab.read(directory, format="google-v2")
        assert 5 in {j.extras["collection_id"] for j in workload.jobs}
        return
    message = read_error(directory, format="google-v2")
    assert message.startswith(f"{path}:3: {expected}"), message
    assert len(message) < len(str(path)) + 200, message


def _run(args: list[str], capsys) -> tuple[int, str]:
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("engine", ENGINES)
def test_cli_convert_of_a_lone_surrogate_is_exit_2(tmp_path, capsys, engine):
    line = _surrogate_line("collection_events", rb'"user":"\ud800"')
    directory = trace_with(tmp_path, "collection_events", line)
    out = tmp_path / "out.swf"
    code, err = _run(["convert", str(directory), str(out), "-R", f"engine={engine}"], capsys)
    assert code == 2, err
    assert err.count("\n") == 1 and "internal error" not in err, err
    assert f"{directory / CE}:4: field user: " in err
    code, err = _run(
        ["convert", str(directory), str(out), "-R", f"engine={engine}", "--lenient"], capsys
    )
    assert code == 0, err
    assert out.exists()


# --------------------------------------------------------------------------- huge numbers

DIGITS = "7" * 5000

HUGE_NUMBERS = {
    "enum as text": (
        "collection_events",
        _record("", type=f'"{DIGITS}"').replace(b'"type":0,', b""),
        "type",
        "unknown value",
    ),
    "enum as number": (
        "collection_events",
        _record("", type=DIGITS).replace(b'"type":0,', b""),
        "type",
        "unknown value",
    ),
    "time as text": (
        "collection_events",
        f'{{"time":"{DIGITS}","type":0,"collection_id":"5"}}'.encode(),
        "time",
        "out of range",
    ),
    "time as number": (
        "collection_events",
        f'{{"time":{DIGITS},"type":0,"collection_id":"5"}}'.encode(),
        "time",
        "out of range",
    ),
    "long text that is not a number": (
        "collection_events",
        f'{{"time":"{DIGITS}a","type":0,"collection_id":"5"}}'.encode(),
        "time",
        "expected an integer, got '7777",
    ),
    "id with leading zeros as text": (
        "collection_events",
        f'{{"time":"700000001","type":0,"collection_id":"{"0" * 5000}5"}}'.encode(),
        None,  # 5: read
        None,
    ),
    "start-after item": (
        "collection_events",
        _record("", start_after_collection_ids=f"[{DIGITS}]"),
        "start_after_collection_ids",
        "out of range",
    ),
    "cpus as number": (
        "instance_events",
        f'{{"time":"700000001","type":0,"collection_id":"5","instance_index":0,'
        f'"resource_request":{{"cpus":{DIGITS},"memory":0.1}}}}'.encode(),
        "resource_request.cpus",
        "expected a finite number",
    ),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", sorted(HUGE_NUMBERS))
def test_v3_number_of_thousands_of_digits(tmp_path, case, engine):
    table, line, field, what = HUGE_NUMBERS[case]
    directory = trace_with(tmp_path, table, line)
    if field is None:
        workload = schedlab.read(directory, engine=engine)
        assert 5 in {j.extras["collection_id"] for j in workload.jobs}
        return
    shard = directory / (CE if table == "collection_events" else IE)
    message = read_error(directory, engine=engine)
    assert message.startswith(f"{shard}:4: field {field}: {what}"), message
    assert "set_int_max_str_digits" not in message
    assert len(message) < len(str(shard)) + 300, message
    lenient = schedlab.read(directory, engine=engine, lenient=True)
    assert lenient.meta["rejects"] == [message]


def test_v3_huge_number_in_an_unread_field_every_engine_agrees(tmp_path):
    """Beyond the pyarrow sample a key of another table is ignored by every engine,
    even when its value is a number of 5,000 digits (the line parser used to refuse
    the line as JSON it could not read, while pyarrow skipped the key)."""
    line = (
        b'{"time":"700000001","type":0,"collection_id":"5","instance_index":0,'
        b'"assigned_memory":' + DIGITS.encode() + b"}"
    )
    directory = trace_with(tmp_path, "instance_events", line, at=900, rows=1000)
    rows = [
        schedlab.read(directory, engine=engine).meta["summary"]["tables"]["instance_events"]
        for engine in ENGINES
    ]
    assert rows[0] == rows[1]
    assert rows[0]["rows"] == 1001


def test_v3_huge_number_in_a_csv_list_cell(tmp_path):
    directory = tmp_path / "trace"
    directory.mkdir()
    rows = ["time,type,collection_id,start_after_collection_ids"]
    rows += [f"{700_000_000 + i},0,{10 + i},[]" for i in range(5)]
    rows[3] = rows[3][:-2] + f'"[{DIGITS}]"'
    (directory / "collection_events-000000000000.csv").write_text("\n".join(rows) + "\n")
    message = read_error(directory)
    assert message.startswith(
        f"{directory / 'collection_events-000000000000.csv'}:4: "
        "field start_after_collection_ids: out of range"
    ), message


# --------------------------------------------------------------------------- SWF

GOOD_SWF = "1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n"


def test_swf_field_error_cuts_a_long_value(tmp_path):
    path = tmp_path / "long.swf"
    path.write_text(GOOD_SWF + "2 0 0 " + "x" * 100_000 + " 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n")
    message = read_error(path)
    assert message.startswith(f"{path}:2: field 4 (run_time): expected a number, got 'xxxx")
    assert message.endswith("...") and len(message) < len(str(path)) + 120, message
    lenient = schedlab.read(path, lenient=True)
    assert len(lenient.jobs) == 1


def test_swf_field_error_cuts_a_long_number(tmp_path):
    path = tmp_path / "big.swf"
    path.write_text("1 0 0 " + "9" * 100_000 + " 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n")
    message = read_error(path)
    assert message.startswith(f"{path}:1: field 4 (run_time): ")
    assert len(message) < len(str(path)) + 160, message


@pytest.mark.parametrize(
    "lines",
    [
        ["; MaxProcs: " + "x" * 100_000],
        ["; MaxProcs: 5", "; MaxProcs: " + "7" * 100_000],
        ["; MaxProcs: " + "7" * 100_000],
        ["; MaxProcs: -" + "7" * 5000 + " (a remark)"],
        # beyond a double: float() of it raised OverflowError (an internal error)
        ["; MaxProcs: " + "7" * 400],
    ],
)
def test_swf_header_problem_cuts_a_long_value(lines):
    header, starts = parse_header(lines)
    problems = header_problems(header, starts)
    assert len(problems) == 1, problems
    line, label, message = problems[0]
    assert (line, label) == (len(lines), "MaxProcs")
    assert len(message) < 160, message
    assert "..." in message


def test_swf_header_value_beyond_a_double_is_an_error(tmp_path):
    path = tmp_path / "h.swf"
    path.write_text("; MaxRecords: " + "7" * 400 + "\n" + GOOD_SWF)
    message = read_error(path)
    assert message.startswith(
        f"{path}:1: header MaxRecords: out of range (at most 2**53 - 1), got '7777"
    ), message
    assert message.endswith("...")


def test_swf_validate_finding_is_short(tmp_path, capsys):
    path = tmp_path / "long.swf"
    path.write_text(GOOD_SWF + "2 0 0 " + "x" * 100_000 + " 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n")
    try:
        main(["validate", str(path)])
    except SystemExit:
        pass
    captured = capsys.readouterr()
    assert len(captured.out) + len(captured.err) < 2000
