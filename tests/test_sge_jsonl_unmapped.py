"""JSONL accounting records whose keys the mapping does not use (``priority``,
``account``, ``hostname``, ``deleted_by``, ``usage.rusage.*``, the other execd
values, custom usage containers, keys OCS does not write) are checked when the file
is read, by the rules the writers check them by: a bad value is one line naming
the file, the line and the field (exit 2), or a skipped and counted record when
lenient, on the bulk (msgspec) and the careful path alike. It used to be read
without a word and to stop the writing later, naming neither line nor field
("job 2: its stored source record is not valid")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import schedlab
from schedlab.errors import FormatError
from schedlab.formats.sge import bulk, reader
from schedlab.testing import run_cli as run

GOOD: dict[str, Any] = json.loads(
    '{"job_number":17,"task_number":0,"start_time":1700000010000000,'
    '"end_time":1700000110000000,"owner":"alice","group":"users","account":"sge",'
    '"qname":"all.q","hostname":"node1","department":"defaultdepartment","slots":1,'
    '"job_name":"job","priority":0,"submission_time":1700000000000000,'
    '"submit_cmd_line":"qsub job.sh","category":"","failed":0,"exit_status":0,'
    '"usage":{"rusage":{"ru_wallclock":100,"ru_utime":90.0,"ru_stime":10.0},'
    '"eusage":{"wallclock":100.0,"cpu":100.0,"mem":1.0,"io":0.0,"iow":0.0,'
    '"maxvmem":1048576.0,"maxrss":524288.0}}}'
)


def _line(**changes: Any) -> str:
    record = json.loads(json.dumps(GOOD))
    for key, value in changes.items():
        if "." in key:  # usage.CONTAINER[.ITEM]
            path = key.split(".")[1:]
            target = record["usage"]
            for step in path[:-1]:
                target = target.setdefault(step, {})
            target[path[-1]] = value
        else:
            record[key] = value
    return json.dumps(record, separators=(",", ":"))


# (changes to the good record, field named, message)
BAD: list[tuple[dict[str, Any], str, str]] = [
    ({"priority": "high"}, "priority", "expected an integer, got 'high'"),
    ({"priority": 1.5}, "priority", "expected an integer, got 1.5"),
    ({"arid": [3]}, "arid", "expected an integer, got [3]"),
    ({"ar_submission_time": True}, "ar_submission_time", "expected an integer, got true"),
    ({"account": 5}, "account", "expected a string, got 5"),
    ({"hostname": None}, "hostname", "expected a string, got null"),
    ({"job_name": {"a": 1}}, "job_name", 'expected a string, got {"a": 1}'),
    ({"deleted_by": None}, "deleted_by", "expected a string, got null"),
    ({"project": 0}, "project", "expected a string, got 0"),
    ({"custom": [1, 2]}, "custom", "expected a string, number or boolean, got [1, 2]"),
    ({"custom": None}, "custom", "expected a string, number or boolean, got null"),
    ({"usage": None}, "usage", "expected an object, got null"),
    ({"usage.rusage.ru_utime": "x"}, "usage.rusage.ru_utime", "expected a number, got 'x'"),
    ({"usage.rusage.ru_maxrss": None}, "usage.rusage.ru_maxrss", "expected a number, got null"),
    ({"usage.rusage": [1]}, "usage.rusage", "expected an object, got [1]"),
    ({"usage.eusage.mem": True}, "usage.eusage.mem", "expected a number, got true"),
    ({"usage.eusage.io": "0.1"}, "usage.eusage.io", "expected a number, got '0.1'"),
    # memory="maxvmem" maps maxvmem: maxrss is a value the mapping does not use
    ({"usage.eusage.maxrss": "1G"}, "usage.eusage.maxrss", "expected a number, got '1G'"),
    (
        {"usage.usage": {"cpu": 1.0, "maxvmem": 2.0}, "usage.eusage": None},
        "usage.eusage",
        "expected an object, got null",
    ),
    ({"usage.gpu": 4}, "usage.gpu", "expected an object, got 4"),
    (
        {"usage.gpu": {"model": ["a100"]}},
        "usage.gpu.model",
        'expected a number or string, got ["a100"]',
    ),
]
IDS = [f"{field}={next(iter(changes.values()))!r}" for changes, field, _ in BAD]


def _file(tmp_path: Path, bad: str) -> Path:
    """Line 1 good, line 2 ``bad``, line 3 good (another job)."""
    path = tmp_path / "accounting.jsonl"
    path.write_text("\n".join([_line(), bad, _line(job_number=18)]) + "\n")
    return path


@pytest.fixture(params=[True, False], ids=["bulk", "careful"])
def path_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    monkeypatch.setattr(reader, "BULK", request.param)
    return bool(request.param)


@pytest.mark.parametrize(("changes", "field", "message"), BAD, ids=IDS)
def test_bad_unmapped_value_names_line_and_field(
    tmp_path: Path, path_kind: bool, changes: dict[str, Any], field: str, message: str
) -> None:
    path = _file(tmp_path, _line(**changes))
    with pytest.raises(FormatError) as info:
        schedlab.read(path, workers=1)
    assert str(info.value) == f"{path}:2: field {field}: {message}"
    assert (info.value.line, info.value.field) == (2, field)


@pytest.mark.parametrize(("changes", "field", "message"), BAD, ids=IDS)
def test_lenient_read_skips_it_and_what_is_read_can_be_written(
    tmp_path: Path, path_kind: bool, changes: dict[str, Any], field: str, message: str
) -> None:
    path = _file(tmp_path, _line(**changes))
    w = schedlab.read(path, lenient=True, workers=1)
    assert [j.extras["sge_line"] for j in w] == [1, 3]
    assert w.meta["skipped"] == 1 and [line for line, _ in w.meta["rejects"]] == [2]
    findings = [f for f in w.meta["findings"] if f.check == "bad-record"]
    assert [(f.line, f.field, f.message) for f in findings] == [
        (2, field, f"{message} (record skipped)")
    ]
    # the kept records convert to both layouts (nothing left to fail at write time)
    schedlab.write(w, tmp_path / "out.accounting.jsonl")
    schedlab.write(w, tmp_path / "out.accounting")
    assert (tmp_path / "out.accounting.jsonl").read_text().splitlines() == [
        _line(),
        _line(job_number=18),
    ]


def test_cli_reports_the_line_at_read_time(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = _file(tmp_path, _line(priority="high"))
    code, _, err = run(capsys, "info", str(path))
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{path}:2: field priority: expected an integer, got 'high'" in err, err
    out = tmp_path / "out.accounting"
    code, _, err = run(capsys, "convert", str(path), str(out))
    assert code == 2 and f"{path}:2: field priority" in err, err
    assert "stored source record" not in err, err
    code, _, err = run(capsys, "convert", "--lenient", str(path), str(out))
    assert code == 0 and "skipped 1 bad record(s)" in err, err


def test_a_bad_value_behind_a_bad_mapped_one_is_not_the_one_named(tmp_path: Path) -> None:
    """The mapped values are checked first (as for the colon layout's number
    fields): the first problem of the record is the one reported."""
    path = _file(tmp_path, _line(slots="two", priority="high"))
    with pytest.raises(FormatError) as info:
        schedlab.read(path, workers=1)
    assert info.value.field == "slots"


def test_good_unmapped_values_are_read_and_written_back_verbatim(
    tmp_path: Path, path_kind: bool
) -> None:
    """Every optional key OCS writes, a reporting record, custom usage containers
    (numbers and strings) and a key OCS does not write (a scalar) are kept."""
    lines = [
        _line(project="p1", granted_pe="mpi", arid=7, ar_submission_time=1699999999000000),
        _line(job_number=18, deleted_by="bob@login1", pe_taskid="NONE", extra_flag=True),
        json.dumps({"time": 1700000200000000, "type": "acct", **json.loads(_line(job_number=19))}),
        _line(**{"job_number": 20, "usage.gpu": {"seconds": 12.5, "model": "a100"}}),
        _line(**{"job_number": 21, "usage.eusage.ioops": 3, "usage.eusage.maxpss": 9.0}),
    ]
    path = tmp_path / "accounting.jsonl"
    path.write_text("\n".join(lines) + "\n")
    w = schedlab.read(path, workers=1)
    assert len(w) == 5 and w.meta["skipped"] == 0
    out = tmp_path / "out.accounting.jsonl"
    schedlab.write(w, out)
    assert out.read_text().splitlines() == lines


def test_bulk_path_checks_custom_usage_containers(tmp_path: Path) -> None:
    """msgspec skips the custom containers it has no fields for: a block with them
    is still read in bulk when they are objects of numbers or strings, and left to
    the careful path (which reports it) when one is not."""
    good = _line(**{"usage.gpu": {"seconds": 12.5, "model": "a100"}})
    block = (good + "\n" + _line() + "\n").encode()
    assert bulk.json_block(block, 2, False) is not None
    for bad in ({"seconds": [1]}, {"seconds": None}, {"ok": True}, {"x": {"y": 1}}):
        line = _line(**{"usage.gpu": bad})
        assert bulk.json_block((line + "\n").encode(), 1, False) is None, bad
    for bad in ({"usage.rusage.ru_utime": "x"}, {"priority": "high"}, {"custom": [1]}):
        assert bulk.json_block((_line(**bad) + "\n").encode(), 1, False) is None, bad
