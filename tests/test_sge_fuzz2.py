"""Grid Engine reader and writers against the second structure-aware fuzzing audit
(fuzz2, findings 1, 2, 5, 9, 10, 11): one number syntax for every colon record
length and both reading paths, bounded JSONL integers, distinct names for SWF
numbers that are not whole, ``usage`` and ``eusage`` in one record, time stamps
that mix seconds and milliseconds.

Every colon and JSONL case is read by both reading paths (bulk and careful), which
must agree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import schedlab
from schedlab.errors import FormatError
from schedlab.formats.sge import reader
from schedlab.formats.sge.names import COLON_FIELDS, COLON_INTEGERS, COLON_NUMBERS
from schedlab.losses import collect_losses
from schedlab.testing import run_cli as run
from sge_records import GOOD, GOOD_JSON

PRIORITY = COLON_FIELDS.index("priority")
OTHER = GOOD.replace(":17:", ":18:", 1)  # (another job)


def _goods(count: int) -> list[str]:
    """``count`` good colon records of distinct jobs."""
    return [GOOD.replace(":17:", f":{1000 + i}:", 1) for i in range(count)]


def _json_goods(count: int) -> list[str]:
    """``count`` good JSONL records of distinct jobs."""
    return [_json_line(job_number=1000 + i) for i in range(count)]


def _field(line: str, index: int, value: str) -> str:
    fields = line.split(":")
    fields[index] = value
    return ":".join(fields)


def _length(line: str, fields: int) -> str:
    """The record with 43, 45 or 46 fields (a trailing Univa field)."""
    parts = line.split(":")
    if fields == 43:
        return ":".join(parts[:43])
    return ":".join(parts + ["7"] * (fields - 45))


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _read_both(monkeypatch: pytest.MonkeyPatch, path: Path, **options: Any) -> Any:
    """What the bulk path reads (a workload, or ``("error", message, line, field)``),
    checked to be what the careful path reads. A lenient read gives its findings."""
    results = []
    for bulk_path in (True, False):
        monkeypatch.setattr(reader, "BULK", bulk_path)
        try:
            workload = schedlab.read(path, format=options.pop("format", None), workers=1, **options)
        except FormatError as exc:
            results.append(("error", str(exc), exc.line, exc.field))
            continue
        findings = [(f.line, f.field, f.message) for f in workload.meta.get("findings", [])]
        results.append((workload, findings, workload.to_arrays()))
    (first, second) = results
    if first[0] == "error":
        assert first == second
        return first
    assert first[1] == second[1]
    for name, column in first[2].items():
        assert (
            (column == second[2][name])
            | ((column != column) & (second[2][name] != second[2][name]))
        ).all(), name
    return first[0], first[1]


# ----------------------------------------------- findings 1 and 10: number syntax

#: Forms Python's int()/float() (or numpy's cast, or str.isdigit) take that the
#: documented syntax does not: no sign but '-', no spaces, no '_', ASCII digits.
ODD_NUMBERS = ["1_000", "+5", " 5", "5 ", "\u00b2", "\u0661\u0662", "\uff15", "0x10", "5e"]
#: Not integers, whatever their value.
ODD_INTEGERS = ["5.0", "1e1", "5.", "10.0"]


def _cases(token: str, integers_only: bool) -> list[tuple[int, int]]:
    fields = sorted(COLON_INTEGERS if integers_only else COLON_NUMBERS)
    return [
        (index, length)
        for length in (43, 45, 46)
        for index in fields
        if not (length == 43 and index >= 43)
    ]


@pytest.mark.parametrize("token", ODD_NUMBERS + ODD_INTEGERS)
def test_odd_numbers_are_refused_in_every_field_and_record_length(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, token: str
) -> None:
    """One bad record per (field, record length): each is refused, naming its line
    and field, alike by the bulk and the careful path (findings 1, 10)."""
    cases = _cases(token, token in ODD_INTEGERS)
    lines = [GOOD] + [_length(_field(GOOD, i, token), n) for i, n in cases] + [OTHER]
    path = _write(tmp_path / "accounting", lines)
    workload, findings = _read_both(monkeypatch, path, lenient=True)
    assert len(workload) == 2 and workload.meta["skipped"] == len(cases)
    for (line, field, message), (index, _n) in zip(findings, cases, strict=True):
        assert field == COLON_FIELDS[index], (line, field, message)
        assert repr(token) in message, message
    assert [f[0] for f in findings] == list(range(2, len(cases) + 2))


def test_the_strict_message_names_file_line_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for index, token in ((42, "1_000"), (40, "+5"), (43, "\u00b2"), (44, " 5"), (5, "\u0661")):
        for length in (45, 46):
            path = _write(
                tmp_path / "accounting", [GOOD, _length(_field(GOOD, index, token), length)]
            )
            kind, message, line, field = _read_both(monkeypatch, path)
            assert (kind, line, field) == ("error", 2, COLON_FIELDS[index])
            assert message.startswith(f"{path}:2: field {COLON_FIELDS[index]}: expected ")


@pytest.mark.parametrize("index", sorted(COLON_INTEGERS - {PRIORITY}))
def test_a_negative_value_is_refused_where_none_is_documented(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: int
) -> None:
    path = _write(tmp_path / "accounting", [GOOD, _field(GOOD, index, "-5")])
    kind, _message, line, field = _read_both(monkeypatch, path)
    assert (kind, line, field) == ("error", 2, COLON_FIELDS[index])


@pytest.mark.parametrize(
    ("index", "value"),
    [(PRIORITY, "-3"), (13, "1e3"), (21, "-1"), (38, ".5"), (20, "5."), (14, "1E-2"), (5, "0019")],
)
def test_documented_forms_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: int, value: str
) -> None:
    for length in (43, 45, 46):
        changed = _length(_field(OTHER, index, value), length)
        path = _write(tmp_path / "accounting", [GOOD, changed])
        workload, findings = _read_both(monkeypatch, path)
        assert len(workload) == 2 and not findings


def test_a_bad_field_in_a_large_file_stops_the_read_not_the_conversion(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The audit's case: read as good by the bulk path, refused by the writer,
    which named the output file and a job (finding 1)."""
    lines = _goods(3000)
    lines[2000] = _field(lines[2000], 42, "1_000")
    path = _write(tmp_path / "big.accounting", lines)
    out = tmp_path / "out.accounting.jsonl"
    code, _, err = run(capsys, "convert", str(path), str(out))
    assert code == 2
    assert err == f"schedlab: error: {path}:2001: field maxvmem: expected a number, got '1_000'\n"
    code, _, err = run(capsys, "convert", "--lenient", str(path), str(out))
    assert code == 0 and len(schedlab.read(out)) == 2999


def test_out_of_range_quotes_the_text_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for index, field in ((PRIORITY, "priority"), (34, "slots"), (43, "arid")):
        path = _write(tmp_path / "accounting", [_field(GOOD, index, "9007199254740992")])
        kind, message, _line, got = _read_both(monkeypatch, path)
        assert (kind, got) == ("error", field)
        assert message.endswith("out of range (at most 2**53 - 1), got '9007199254740992'")


# ------------------------------------------------------------ finding 11: units


def test_a_record_mixing_seconds_and_milliseconds_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mixed = _field(_field(GOOD, 9, "1700000010000"), 10, "1700000110000")
    path = _write(tmp_path / "accounting", [GOOD, mixed])
    kind, message, line, field = _read_both(monkeypatch, path)
    assert (kind, line, field) == ("error", 2, "submission_time")
    assert "1700000000" in message and "milliseconds" in message
    # a millisecond record that never started or has no submission time is fine
    never = _field(_field(_field(GOOD, 8, "1700000000000"), 9, "0"), 10, "0")
    unsubmitted = _field(_field(GOOD, 9, "1700000010000"), 10, "1700000110000")
    path = _write(tmp_path / "accounting", [never, _field(_field(unsubmitted, 8, "0"), 5, "18")])
    workload, findings = _read_both(monkeypatch, path)
    assert len(workload) == 2 and not findings


def test_mixed_units_in_a_large_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _goods(3000)
    lines[1500] = _field(lines[1500], 10, "1700000110000")  # end in ms, the others in s
    path = _write(tmp_path / "accounting", lines)
    workload, findings = _read_both(monkeypatch, path, lenient=True)
    assert len(workload) == 2999
    assert [(f[0], f[1]) for f in findings] == [(1501, "submission_time")]


# --------------------------------------------------- finding 2: JSONL integers


def _json_line(**changes: Any) -> str:
    record = json.loads(json.dumps(GOOD_JSON))
    record.update(changes)
    return json.dumps(record, separators=(",", ":"))


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("priority", "9007199254740992"),
        ("priority", "1e+300"),
        ("priority", "-9007199254740992"),
        ("priority", "9223372036854775808"),
        ("arid", "9007199254740992"),
        ("ar_submission_time", "1e+300"),
        ("time", "9007199254740992"),
    ],
)
@pytest.mark.parametrize("many", [False, True])
def test_jsonl_integers_are_bounded_like_the_colon_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, text: str, many: bool
) -> None:
    good = _json_line()
    if key in GOOD_JSON:
        bad = good.replace(f'"{key}":0,', f'"{key}":{text},')
    else:
        bad = good[:-1] + f',"{key}":{text}}}'
    assert bad != good
    lines = (_json_goods(3000) if many else [_json_line(job_number=1)]) + [bad]
    path = _write(tmp_path / "accounting.jsonl", lines)
    kind, message, line, field = _read_both(monkeypatch, path)
    assert (kind, line, field) == ("error", len(lines), key)
    assert message.endswith(f"field {key}: out of range (at most 2**53 - 1), got {text}")
    workload, findings = _read_both(monkeypatch, path, lenient=True)
    assert len(workload) == len(lines) - 1 and len(findings) == 1


def test_jsonl_to_colon_writes_only_what_the_colon_reader_reads(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _write(tmp_path / "accounting.jsonl", [_json_line(priority=2**53 - 1)])
    out = tmp_path / "back.accounting"
    code, _, err = run(capsys, "convert", "--to", "sge", str(path), str(out))
    assert code == 0, err
    assert len(schedlab.read(out)) == 1
    path = _write(tmp_path / "accounting.jsonl", [_json_line(priority=2**53)])
    code, _, err = run(capsys, "convert", "--to", "sge", str(path), str(out))
    assert code == 2
    assert err == (
        f"schedlab: error: {path}:1: field priority: out of range (at most 2**53 - 1),"
        " got 9007199254740992\n"
    )


# ------------------------------------------- finding 9: usage and eusage at once


@pytest.mark.parametrize("many", [False, True])
def test_usage_and_eusage_in_one_record_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, many: bool
) -> None:
    record = json.loads(_json_line())
    record["usage"]["usage"] = {"cpu": 1000.0, "maxvmem": 1.0}
    bad = json.dumps(record, separators=(",", ":"))
    lines = (_json_goods(3000) if many else [_json_line(job_number=1)]) + [bad]
    path = _write(tmp_path / "accounting.jsonl", lines)
    kind, message, line, field = _read_both(monkeypatch, path)
    assert (kind, line, field) == ("error", len(lines), "usage")
    assert "both" in message and "eusage" in message
    workload, findings = _read_both(monkeypatch, path, lenient=True)
    assert len(workload) == len(lines) - 1 and [f[1] for f in findings] == ["usage"]
    # either container alone is read (OCS 9.0.0-9.0.5 and 9.0.6+)
    del record["usage"]["eusage"]
    path = _write(tmp_path / "accounting.jsonl", [json.dumps(record)])
    workload, findings = _read_both(monkeypatch, path)
    assert workload.to_arrays()["average_cpu_time"][0] == 1000.0 and not findings


def test_usage_and_eusage_after_other_usage_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file of OCS 9.0.0-9.0.5 records (``usage.usage``) with one that has both."""
    old = json.loads(_json_line())
    old["usage"]["usage"] = old["usage"].pop("eusage")
    both = json.loads(json.dumps(old))
    both["usage"]["eusage"] = {"cpu": 1.0, "maxvmem": 5.0}
    lines = []
    for i in range(3000):
        record = both if i == 2500 else old
        lines.append(json.dumps({**record, "job_number": 1000 + i}, separators=(",", ":")))
    path = _write(tmp_path / "accounting.jsonl", lines)
    workload, findings = _read_both(monkeypatch, path, lenient=True)
    assert len(workload) == 2999 and [(f[0], f[1]) for f in findings] == [(2501, "usage")]


# ------------------------------------ finding 5: SWF numbers that are not whole


def _swf(path: Path, rows: list[str]) -> Path:
    path.write_text("; Version: 2.2\n; UnixStartTime: 1700000000\n" + "\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("target", ["accounting", "accounting.jsonl"])
def test_user_group_and_queue_numbers_that_are_not_whole_stay_distinct(
    tmp_path: Path, target: str
) -> None:
    path = _swf(
        tmp_path / "in.swf",
        [
            "1 0 10 100 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1",
            "2 5 10 100 1 -1 -1 1 -1 -1 1 1.5 1.5 -1 1.5 -1 -1 -1",
        ],
    )
    workload = schedlab.read(path)
    out = tmp_path / f"out.{target}"
    schedlab.write(workload, out)
    back = schedlab.read(out)
    columns = back.to_arrays()
    for name in ("user_id", "group_id", "queue_number"):
        assert len(set(columns[name].tolist())) == 2, name
    assert sorted(back.header.names("User").values()) == ["user1", "user1.5"]
    assert sorted(back.header.names("Queue").values()) == ["queue1", "queue1.5"]


@pytest.mark.parametrize("target", ["accounting", "accounting.jsonl"])
def test_a_job_number_that_is_not_whole_is_renumbered_and_reported(
    tmp_path: Path, target: str
) -> None:
    path = _swf(
        tmp_path / "in.swf",
        [
            "1 0 10 100 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1",
            "2.5 5 10 100 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1",
        ],
    )
    workload = schedlab.read(path)
    out = tmp_path / f"out.{target}"
    with collect_losses() as losses:
        schedlab.write(workload, out)
    found = [str(loss) for loss in losses]
    assert any(text.startswith("job_number: 1 record, not a whole number") for text in found), found
    back = schedlab.read(out, job_numbers="sge")
    numbers = sorted(back.to_arrays()["job_number"].tolist())
    assert numbers == [1, 2]  # (a new whole number: 2 is free)


@pytest.mark.parametrize("target", ["accounting", "accounting.jsonl"])
def test_the_writers_write_no_negative_job_number_or_exit_status(
    tmp_path: Path, target: str
) -> None:
    """The readers refuse a negative job number and exit status (and one beyond
    2**53 - 1): the writers never write one, and say what they did instead."""
    from schedlab.model import Header, Job, Workload

    jobs = [
        Job(
            job_number=-5,
            submit_time=0,
            wait_time=1,
            run_time=10,
            allocated_processors=1,
            status=0,
            exit_code=-1,
        ),
        Job(
            job_number=7,
            submit_time=5,
            wait_time=1,
            run_time=10,
            allocated_processors=1,
            status=0,
            exit_code=2**60,
        ),
        Job(
            job_number=8,
            submit_time=6,
            wait_time=1,
            run_time=10,
            allocated_processors=1,
            status=0,
            exit_code=3,
        ),
    ]
    workload = Workload(Header(), jobs=jobs)
    out = tmp_path / f"out.{target}"
    with collect_losses() as losses:
        schedlab.write(workload, out)
    found = [str(loss) for loss in losses]
    assert any(t.startswith("job_number: 1 record, negative") for t in found), found
    assert any(t.startswith("exit_code: 2 records, negative or beyond") for t in found), found
    back = schedlab.read(out, job_numbers="sge")
    assert len(back) == 3
    assert sorted(back.to_arrays()["job_number"].tolist()) == [7, 8, 9]


@pytest.mark.parametrize("integer", [False, True])
def test_the_bulk_cast_takes_exactly_the_documented_syntax(integer: bool) -> None:
    """Every string of up to 5 characters of digits, signs, '.', 'e', ' ', '_':
    the bulk path's cast takes it (alone in its block) exactly when the careful
    path's syntax check does."""
    import itertools

    import numpy as np
    from schedlab.formats.sge import bulk
    from schedlab.formats.sge.colon import number_problem

    texts = [
        "".join(chars)
        for size in range(1, 6)
        for chars in itertools.product("01.-+eE _" if size < 5 else "1.-+e", repeat=size)
    ]
    data = "".join(f"{text}\n" for text in texts).encode()
    raw = bulk._Bytes(data)
    at = 0
    for text in texts:
        end = np.array([at + len(text)])
        try:
            bulk._cast(raw, end, np.array([len(text)]), integer)
            taken = True
        except bulk._Decline:
            taken = False
        assert taken == (number_problem(text, integer) is None), text
        at += len(text) + 1


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("job_number", "-5"),
        ("failed", "-1"),
        ("exit_status", "-2"),
        ("arid", "-3"),
        ("ar_submission_time", "-4"),
        ("time", "-6"),
    ],
)
@pytest.mark.parametrize("many", [False, True])
def test_jsonl_negative_integers_are_refused_where_the_colon_layout_refuses_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, text: str, many: bool
) -> None:
    bad = _json_line(**{"job_number": 1, key: int(text)})
    lines = (_json_goods(3000) if many else [_json_line(job_number=2)]) + [bad]
    path = _write(tmp_path / "accounting.jsonl", lines)
    kind, message, line, field = _read_both(monkeypatch, path)
    assert (kind, line, field) == ("error", len(lines), key)
    assert message.endswith(f"field {key}: expected an integer >= 0, got {text}")
    # a negative priority (a nice value) is read
    path = _write(tmp_path / "accounting.jsonl", [_json_line(priority=-10)])
    assert len(_read_both(monkeypatch, path)[0]) == 1
