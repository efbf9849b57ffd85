"""Bad accounting input: one clear FormatError naming file, line and field; lenient
mode skips and counts; comments, blank lines and reporting records."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import schedlab
from schedlab.errors import FormatError

GOOD = (
    "all.q:node1:users:alice:job:17:sge:0:1700000000:1700000010:1700000110:0:0:100:"
    "90.0:10.0:2048:0:0:0:0:10:0:0:0:0:0:0:0:5:1:NONE:defaultdepartment:NONE:1:0:"
    "100.000000:1.000000:0.001000:-l h_rt=3600:0.000000:NONE:1048576.000000:0:0"
)
GOOD_JSON = (
    '{"job_number":17,"task_number":0,"start_time":1700000010000000,'
    '"end_time":1700000110000000,"owner":"alice","group":"users","account":"sge",'
    '"qname":"all.q","hostname":"node1","department":"defaultdepartment","slots":1,'
    '"job_name":"job","priority":0,"submission_time":1700000000000000,'
    '"submit_cmd_line":"qsub -l h_rt=60 job.sh","category":"","failed":0,"exit_status":0,'
    '"usage":{"rusage":{"ru_wallclock":100,"ru_utime":90.0,"ru_stime":10.0},'
    '"eusage":{"wallclock":100.0,"cpu":100.0,"mem":1.0,"io":0.0,"iow":0.0,'
    '"maxvmem":1048576.0,"maxrss":524288.0}}}'
)


def _write(tmp_path: Path, lines: list[str], name: str = "acct") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def _field(line: str, index: int, value: str) -> str:
    fields = line.split(":")
    fields[index] = value
    return ":".join(fields)


COLON_CASES = [
    ("truncated", GOOD[:60], "truncated record"),
    ("non-numeric time", _field(GOOD, 9, "17OO000010"), "start_time"),
    ("end before start", _field(GOOD, 10, "1700000005"), "end before start"),
    ("start before submission", _field(GOOD, 9, "1699999999"), "start_time"),
    ("fractional job number", _field(GOOD, 5, "17.5"), "job_number"),
    ("bad maxvmem", _field(GOOD, 42, "lots"), "maxvmem"),
]


@pytest.mark.parametrize(("case", "bad", "expected"), COLON_CASES, ids=[c[0] for c in COLON_CASES])
def test_colon_errors_name_file_line_and_field(
    tmp_path: Path, case: str, bad: str, expected: str
) -> None:
    path = _write(tmp_path, [GOOD, "# a comment", bad, GOOD])
    with pytest.raises(FormatError) as info:
        schedlab.read(path, format="sge")
    message = str(info.value)
    assert message.startswith(f"{path}:3: ")
    assert expected in message
    assert info.value.line == 3
    if case != "truncated":
        assert info.value.field is not None


@pytest.mark.parametrize(("case", "bad", "expected"), COLON_CASES, ids=[c[0] for c in COLON_CASES])
def test_colon_lenient_skips_and_counts(tmp_path: Path, case: str, bad: str, expected: str) -> None:
    path = _write(tmp_path, [GOOD, bad, bad, _field(GOOD, 5, "18")])
    workload = schedlab.read(path, lenient=True)
    assert len(workload) == 2
    assert workload.meta["skipped"] == 2
    assert workload.meta["rejects"] == [(2, bad), (3, bad)]
    findings = workload.meta["findings"]
    assert [(f.line, f.severity, f.check) for f in findings] == [
        (2, "error", "bad-record"),
        (3, "error", "bad-record"),
    ]
    assert expected in f"{findings[0].field} {findings[0].message}"


def _json_with(old: str, new: str) -> str:
    assert old in GOOD_JSON
    return GOOD_JSON.replace(old, new)


JSON_CASES = [
    ("truncated", GOOD_JSON[:200], None, "invalid JSON"),
    (
        "string time",
        _json_with('"start_time":1700000010000000', '"start_time":"soon"'),
        "start_time",
        "expected an integer",
    ),
    ("unknown value type", _json_with('"slots":1', '"slots":[1]'), "slots", "expected an integer"),
    ("null owner", _json_with('"owner":"alice"', '"owner":null'), "owner", "expected a string"),
    (
        "object usage value",
        _json_with('"cpu":100.0', '"cpu":{"v":1}'),
        "usage.eusage.cpu",
        "expected a number",
    ),
    (
        "end before start",
        _json_with('"end_time":1700000110000000', '"end_time":1700000001000000'),
        "end_time",
        "end before start",
    ),
    (
        "missing key",
        _json_with('"submission_time":1700000000000000,', ""),
        "submission_time",
        "missing",
    ),
    ("not an object", "[1, 2, 3]", None, "expected a JSON object"),
    ("NaN", _json_with('"cpu":100.0', '"cpu":NaN'), None, "invalid JSON"),
]


@pytest.mark.parametrize(
    ("case", "bad", "field", "expected"), JSON_CASES, ids=[c[0] for c in JSON_CASES]
)
def test_json_errors_name_file_line_and_field(
    tmp_path: Path, case: str, bad: str, field: str | None, expected: str
) -> None:
    path = _write(tmp_path, [GOOD_JSON, bad, GOOD_JSON], "a.jsonl")
    with pytest.raises(FormatError) as info:
        schedlab.read(path, format="sge-jsonl")
    assert str(info.value).startswith(f"{path}:2: ")
    assert expected in str(info.value)
    assert info.value.field == field
    lenient = schedlab.read(path, lenient=True)
    assert len(lenient) == 1  # the two good records are one job (same key)
    assert lenient.meta["records"] == 2 and lenient.meta["skipped"] == 1


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "schedlab", *args], capture_output=True, text=True, check=False
    )


def test_cli_convert_and_validate(tmp_path: Path) -> None:
    bad = _field(GOOD, 10, "1")
    path = _write(tmp_path, [GOOD, bad])
    result = _cli("convert", str(path), str(tmp_path / "o.swf"))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert f"{path}:2: field end_time: end before start" in result.stderr
    rejects = tmp_path / "rejects.txt"
    result = _cli("convert", "--rejects", str(rejects), str(path), str(tmp_path / "o.swf"))
    assert result.returncode == 0 and rejects.read_text() == bad + "\n"
    assert "skipped 1 bad record" in result.stderr
    result = _cli("validate", "--strict", str(tmp_path / "o.swf"))
    assert result.returncode == 0, result.stdout
    result = _cli("validate", str(path))
    assert result.returncode == 1 and "bad-record" in result.stdout


def test_comments_blank_and_short_lines(tmp_path: Path) -> None:
    path = _write(
        tmp_path, ["# Version: 8.5.4", "", "x", GOOD, " ", "#  end", _field(GOOD, 5, "9")]
    )
    workload = schedlab.read(path)
    assert len(workload) == 2 and workload.meta["skipped"] == 0
    assert workload.jobs[1].extras["sge_line"] == 7
    out = tmp_path / "copy.accounting"
    schedlab.write(workload, out)
    assert out.read_text().splitlines() == [
        "# Version: 8.5.4",
        "#  end",
        GOOD,
        _field(GOOD, 5, "9"),
    ]


def test_crlf_line_ends(tmp_path: Path) -> None:
    path = tmp_path / "crlf"
    path.write_bytes((GOOD + "\r\n" + _field(GOOD, 5, "9") + "\r\n").encode())
    workload = schedlab.read(path)
    assert len(workload) == 2
    assert workload.jobs[0].extras["sge_record"] == GOOD


def test_reporting_records(tmp_path: Path) -> None:
    acct = '{"time":1700000200000000,"type":"acct",' + GOOD_JSON[1:]
    lines = [
        '{"time":1700000000000000,"type":"new_job","job_number":17,"task_number":-1}',
        acct,
        '{"time":1700000300000000,"type":"job_log","job_number":17,"event":"finished"}',
    ]
    path = _write(tmp_path, lines, "reporting.jsonl")
    workload = schedlab.read(path)
    assert workload.meta["reader"] == "sge-jsonl"
    assert len(workload) == 1 and workload.meta["ignored"] == {"new_job": 1, "job_log": 1}
    out = tmp_path / "acct.accounting.jsonl"
    schedlab.write(workload, out)
    assert out.read_text() == acct + "\n"


def test_requests_from_submit_command_line(tmp_path: Path) -> None:
    path = _write(tmp_path, [GOOD_JSON], "a.jsonl")
    assert schedlab.read(path).jobs[0].requested_time == 60


def test_optional_and_custom_json_keys_survive(tmp_path: Path) -> None:
    record = (
        _json_with('"slots":1,', '"slots":1,"arid":7,')
        .replace(
            '"category":""',
            '"ar_submission_time":1690000000000000,"pe_taskid":"NONE","category":""',
        )
        .replace('"exit_status":0,', '"exit_status":0,"deleted_by":"bob@login1",')
    )
    record = record[:-2] + ',"gpu":{"gpu_seconds":12.5,"model":"a100"}}}'
    path = _write(tmp_path, [record], "a.jsonl")
    workload = schedlab.read(path)
    assert workload.jobs[0].status == 5  # deleted_by
    out = tmp_path / "o.accounting.jsonl"
    schedlab.write(workload, out)
    assert out.read_text() == record + "\n"


def test_empty_file(tmp_path: Path) -> None:
    path = _write(tmp_path, ["# nothing yet"])
    workload = schedlab.read(path, format="sge")
    assert len(workload) == 0 and workload.meta["records"] == 0


def _many(n: int) -> list[str]:
    return [_field(_field(GOOD, 5, str(100 + i)), 8, str(1700000000 - i)) for i in range(n)]


@pytest.mark.parametrize("workers", [1, 2])
def test_two_process_read_matches_and_numbers_lines(tmp_path: Path, workers: int) -> None:
    lines = _many(1500)
    lines[1200] = _field(lines[1200], 10, "1")  # in the second half
    lines.insert(700, "# a comment in the middle")
    path = _write(tmp_path, lines)
    assert path.stat().st_size > 1 << 16
    with pytest.raises(FormatError) as info:
        schedlab.read(path, workers=workers)
    assert info.value.line == 1202 and info.value.field == "end_time"
    lines[100] = lines[100][:50]  # and one in the first half
    path = _write(tmp_path, lines)
    with pytest.raises(FormatError) as info:
        schedlab.read(path, workers=workers)
    assert info.value.line == 101
    lenient = schedlab.read(path, workers=workers, lenient=True)
    assert [line for line, _ in lenient.meta["rejects"]] == [101, 1202]
    assert [f.line for f in lenient.meta["findings"]] == [101, 1202]
    sequential = schedlab.read(path, workers=1, lenient=True)
    assert lenient.to_arrays().extras == sequential.to_arrays().extras
    assert lenient.header.entries == sequential.header.entries
    out = tmp_path / "out.accounting"
    schedlab.write(lenient, out)
    records = [line for i, line in enumerate(lines) if i not in (100, 1201) and line[0] != "#"]
    # comments are written first (documented: their position is not kept)
    assert out.read_text().splitlines() == ["# a comment in the middle", *records]
