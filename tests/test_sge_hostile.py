"""Malformed Grid Engine accounting records that used to be read silently, or that a
conversion wrote so that schedlab could not read them back (the audit of the
formats): a malformed field after the category (no longer re-split into a
"consistent" record), unchecked number fields, colons and newlines in names
written to the colon layout, negative memory, lines that are not UTF-8.

Each case is read by both reading paths (the bulk one and the careful one, which
must agree) with small inputs written here.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedlab.errors import FormatError
from schedlab.formats.sge import bulk, reader
from schedlab.formats.sge.colon import RecordError, category_colons_ok, split_record
from schedlab.formats.sge.names import COLON_FIELDS, COLON_NUMBERS
from schedlab.losses import collect_losses
from schedlab.testing import run_cli as run
from sge_records import GOOD, GOOD_JSON

#: The reproducer of the audit: a valid record of the real data but ``arid`` (f44).
SHIFTED = (
    "large:compute-4-19.local:csic:csfiylfl:s001.sh:6972834:sge:0:1318560244:1318560254:"
    "1318740255:100:138:180001:0.005999:0.012998:1448.000000:0:0:0:0:1060:0:0:0.000000:168:"
    "0:0:0:89:2:por_defecto:defaultdepartment:mpi:9:0:1026706.540000:60207.223310:0.001862:"
    "-u csfiylfl -l h_rt=180300,h_vmem=1124M -pe mpi 9:0.000000:NONE:821923840.000000:Q#z:0"
)


def _field(line: str, index: int, value: str) -> str:
    fields = line.split(":")
    fields[index] = value
    return ":".join(fields)


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _read_both(monkeypatch: pytest.MonkeyPatch, path: Path, **options: Any) -> Any:
    """The workload (or the FormatError) of the bulk path, checked to be the careful
    path's too."""
    results = []
    for bulk_path in (True, False):
        monkeypatch.setattr(reader, "BULK", bulk_path)
        try:
            workload = schedlab.read(path, format="sge", workers=1, **options)
        except FormatError as exc:
            results.append(("error", str(exc), exc.line, exc.field))
            continue
        columns = workload.to_arrays()
        results.append(
            (
                workload,
                {name: columns[name].tobytes() for name in schedlab.SWF_FIELDS},
                columns.extras,
                workload.meta["skipped"],
                workload.meta["rejects"],
            )
        )
    monkeypatch.setattr(reader, "BULK", True)
    fast, careful = results
    assert fast[1:] == careful[1:]
    return fast


# ------------------------------------------------- 1. a malformed field after the category


def test_a_malformed_arid_is_not_absorbed_into_the_category() -> None:
    """The record used to be re-split as a 43-field one (category ``... -pe mpi
    9:0.000000:NONE``, iow 821923840, maxvmem 0)."""
    with pytest.raises(RecordError) as info:
        split_record(SHIFTED)
    assert info.value.field == "arid"
    assert "'Q#z'" in info.value.message


@pytest.mark.parametrize(
    ("index", "field"), [(43, "arid"), (40, "iow"), (44, "ar_submission_time"), (42, "maxvmem")]
)
def test_a_malformed_field_after_the_category_names_line_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: int, field: str
) -> None:
    bad = _field(SHIFTED.replace(":Q#z:", ":0:"), index, "Q#z")
    path = _write(tmp_path / "accounting", [GOOD, bad, GOOD])
    kind, message, line, named = _read_both(monkeypatch, path)
    assert (kind, line, named) == ("error", 2, field)
    assert "'Q#z'" in message
    lenient = _read_both(monkeypatch, path, lenient=True)
    assert lenient[3] == 1 and lenient[4] == [(2, bad)]
    assert lenient[0].meta["records"] == 2


def test_the_cli_reports_the_shifted_record(capsys, tmp_path: Path) -> None:
    path = _write(tmp_path / "f44.acct", [SHIFTED])
    code, _, err = run(capsys, "convert", "--from", "sge", str(path), str(tmp_path / "x.swf"))
    assert code == 2
    assert err == f"schedlab: error: {path}:1: field arid: expected an integer, got 'Q#z'\n"


@pytest.mark.parametrize(
    "category",
    [
        "-l cpu=24:00:00",
        "-l h_rt=1:30,h_vmem=2G -pe smp 4",
        "-l h_rt=1::1 -q all.q",
        "-u bob -l s_rt=0:59:59,h_rt=1:00:00",
    ],
)
def test_time_values_with_colons_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, category: str
) -> None:
    """The real variant (pretty-accounting sge6x line 4) and the other time forms
    of sge_types(1): their colons stay inside the category, in 43, 45 and 54-field
    records."""
    univa = ["NONE", "NONE", "0", "0", "frontend1", "NONE", "qsub job.sh", "1.5", "77"]
    lines = []
    for extra in ([], None, univa):
        fields = _field(GOOD, 39, category).split(":")
        if extra is None:  # SGE 6.0: no arid, ar_submission_time
            fields = fields[: len(fields) - 2]
        else:
            fields += extra
        lines.append(":".join(fields))
    path = _write(tmp_path / "accounting", lines)
    workload = _read_both(monkeypatch, path, group=False, order="file")[0]
    assert len(workload) == 3
    from schedlab.formats.sge import record_fields

    assert [record_fields(job)[0]["category"] for job in workload] == [category] * 3


def test_which_category_colons_are_time_values() -> None:
    assert category_colons_ok("-l h_rt=24:00:00,h_vmem=1G")
    assert category_colons_ok("-l h_rt=::60")
    assert not category_colons_ok("-pe mpi 9:0.000000:NONE")
    assert not category_colons_ok("-l h_rt=100:0.000000:NONE")
    assert not category_colons_ok("-l h_rt=1:00:00:00")  # (three colons: no time value)
    assert not category_colons_ok("-l h_vmem=2G:0:0")


# ----------------------------------------------------------- 2. every number field is checked

NUMBER_FIELDS = sorted(COLON_NUMBERS)


@pytest.mark.parametrize("index", NUMBER_FIELDS, ids=[COLON_FIELDS[i] for i in NUMBER_FIELDS])
def test_every_number_field_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: int
) -> None:
    bad = _field(GOOD, index, "Q#z")
    path = _write(tmp_path / "accounting", [GOOD, GOOD, bad])
    kind, message, line, field = _read_both(monkeypatch, path)
    assert (kind, line, field) == ("error", 3, COLON_FIELDS[index])
    assert "'Q#z'" in message
    for memory in ("maxvmem", "maxrss"):  # (whichever memory is mapped)
        lenient = _read_both(monkeypatch, path, lenient=True, memory=memory)
        assert lenient[3] == 1 and lenient[0].meta["records"] == 2


@pytest.mark.parametrize(
    ("index", "value", "message"),
    [
        (13, "inf", "expected a number, got 'inf'"),
        (14, "nan", "expected a number, got 'nan'"),
        (37, "1e999", "expected a number, got '1e999'"),
        (7, "0.5", "expected an integer, got '0.5'"),
        (7, "1e20", "expected an integer, got '1e20'"),
        (7, "1" + "0" * 20, "out of range (at most 2**53 - 1), got '1" + "0" * 20 + "'"),
        (16, "-1", "expected a memory size >= 0, got -1"),
        (16, "1e17", "out of range (at most 2**53 - 1), got '1e17'"),
        (20, "1.2.3", "expected a number, got '1.2.3'"),
        (40, "", "expected a number, got ''"),
        (30, "1\x00", "expected a number, got '1\\x00'"),  # (a NUL: numpy's cast stops)
    ],
)
def test_number_fields_must_be_finite_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: int, value: str, message: str
) -> None:
    path = _write(tmp_path / "accounting", [GOOD, _field(GOOD, index, value)])
    kind, text, line, field = _read_both(monkeypatch, path)
    assert (kind, line, field) == ("error", 2, COLON_FIELDS[index])
    assert text.endswith(f"field {COLON_FIELDS[index]}: {message}")


@pytest.mark.parametrize(
    ("index", "value"),
    [(13, "1e3"), (21, "-1"), (7, "-100"), (38, ".5"), (20, "5.")],
)
def test_numbers_in_other_forms_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: int, value: str
) -> None:
    """Numbers of the documented syntax (as for the mapped fields) are read, by the bulk
    path (field by field) exactly as by the careful path, and converts."""
    path = _write(tmp_path / "accounting", [GOOD, _field(_field(GOOD, 5, "18"), index, value)])
    workload = _read_both(monkeypatch, path)[0]
    assert len(workload) == 2
    schedlab.write(workload, tmp_path / "out.accounting.jsonl")
    assert len(schedlab.read(tmp_path / "out.accounting.jsonl")) == 2


def test_a_file_with_a_bad_number_field_converts_leniently(capsys, tmp_path: Path) -> None:
    """``convert --to sge-jsonl`` used to stop with "internal error: ValueError"."""
    path = _write(tmp_path / "f14.acct", [_field(GOOD, 13, "Q#z"), GOOD])
    out = tmp_path / "x.jsonl"
    code, _, err = run(capsys, "convert", "--from", "sge", str(path), str(out), "--to", "sge-jsonl")
    assert code == 2
    assert err == f"schedlab: error: {path}:1: field ru_wallclock: expected a number, got 'Q#z'\n"
    code, _, err = run(
        capsys, "convert", "--from", "sge", "--lenient", str(path), str(out), "--to", "sge-jsonl"
    )
    assert code == 0 and "skipped 1 bad record" in err
    assert len(schedlab.read(out)) == 1


def test_a_bad_priority_is_found_when_read_not_when_written(capsys, tmp_path: Path) -> None:
    path = _write(tmp_path / "f8.acct", [_field(GOOD, 7, "Q#z")])
    code, _, err = run(capsys, "info", "--from", "sge", str(path))
    assert (code, err) == (
        2,
        f"schedlab: error: {path}:1: field priority: expected an integer, got 'Q#z'\n",
    )


_FIELD_TEXT = st.text(alphabet="0123456789.-+eE x", min_size=0, max_size=8)  # (":" separates)


@settings(max_examples=300, deadline=None)
@given(fields=st.lists(st.lists(_FIELD_TEXT, min_size=1, max_size=4), min_size=1, max_size=6))
def test_the_fast_check_of_plain_numbers_is_exact(fields: list[list[str]]) -> None:
    """:func:`bulk._plain` says yes exactly when every field is ``[0-9]+(.[0-9]+)?``
    (a region of colon-separated fields per record, among other bytes)."""
    texts = [":".join(row) for row in fields]
    plain = re.compile(r"[0-9]+(?:\.[0-9]+)?\Z")
    expected = all(plain.match(f) for row in fields for f in row) and all(
        len(f) <= 300 for row in fields for f in row
    )
    data = "".join(f"x:{text}:y.1.2:9\n" for text in texts).encode()
    starts, ends, at = [], [], 0
    for text in texts:
        starts.append(at + 2)
        ends.append(at + 2 + len(text.encode()))
        at += len(f"x:{text}:y.1.2:9\n".encode())
    raw = bulk._Bytes(data)
    segments = [(np.array(starts), np.array(ends))]
    assert bulk._plain(raw, segments) == expected


# ------------------------------------------------------------------ 3. the colon writer


def test_colons_and_newlines_in_names_are_substituted_and_reported(tmp_path: Path) -> None:
    record = {**GOOD_JSON, "owner": "own:er", "job_name": "evil:name\nwith newline"}
    source = _write(tmp_path / "in.jsonl", [json.dumps(record)])
    workload = schedlab.read(source)
    out = tmp_path / "out.accounting"
    with collect_losses() as losses:
        schedlab.write(workload, out)
    text = out.read_text()
    assert text.count("\n") == 1 and ":own_er:evil_name with newline:" in text
    reported = {(loss.field, loss.action): loss.records for loss in losses}
    assert reported[("user_id", "':' written as '_' (the colon layout has no escape for ':')")] == 1
    assert reported[("name", "':' written as '_' (the colon layout has no escape for ':')")] == 1
    assert reported[("name", "newline written as a space (a record is one line)")] == 1
    back = schedlab.read(out, format="sge")
    assert len(back) == 1 and back.header.names("User") == {1: "own_er"}


def test_the_cli_writes_a_colon_file_it_reads_back(capsys, tmp_path: Path) -> None:
    record = {**GOOD_JSON, "owner": "own:er", "job_name": "evil:name\nwith newline"}
    source = _write(tmp_path / "colon_in_name.jsonl", [json.dumps(record)])
    out = tmp_path / "out.acct"
    code, _, err = run(capsys, "convert", str(source), str(out), "--to", "sge")
    assert code == 0
    assert "user_id: 1 record, ':' written as '_'" in err
    assert "name: 1 record, newline written as a space" in err
    code, out_text, _ = run(capsys, "info", "--from", "sge", str(out))
    assert code == 0 and "jobs: 1" in out_text


def test_category_colons_are_kept_when_they_read_back(tmp_path: Path) -> None:
    records = [
        {**GOOD_JSON, "category": "-l h_rt=1:00:00"},  # kept
        # pe_taskid 7 and an integer maxvmem would make the line re-split wrongly:
        # time values are written in seconds instead
        {
            **GOOD_JSON,
            "job_number": 18,
            "category": "-l h_rt=1:00:00",
            "pe_taskid": "7",
            "usage": {"eusage": {"cpu": 1.0, "maxvmem": 1048576}},
        },
        {**GOOD_JSON, "job_number": 19, "category": "-l foo=a:b"},  # not a time value
        {**GOOD_JSON, "job_number": 20, "qname": "#q"},  # would be a comment
    ]
    source = _write(tmp_path / "in.jsonl", [json.dumps(r) for r in records])
    out = tmp_path / "out.accounting"
    with collect_losses() as losses:
        schedlab.write(schedlab.read(source), out)
    from schedlab.formats.sge import record_fields

    back = schedlab.read(out, format="sge", order="file")
    got = [record_fields(job)[0] for job in back]
    assert [r["category"] for r in got] == [
        "-l h_rt=1:00:00",
        "-l h_rt=3600",
        "-l foo=a;b",
        "-l h_rt=3600",
    ]
    assert [job.requested_time for job in back] == [3600, 3600, None, 3600]
    assert got[1]["pe_taskid"] == "7" and got[3]["qname"] == "_q"
    assert losses.count("extras.sge_record.category") == 2
    assert losses.count("queue_number") == 1


def test_a_usage_value_beyond_the_float_range_is_written_as_0(tmp_path: Path) -> None:
    line = json.dumps(GOOD_JSON, separators=(",", ":")).replace('"mem":1.0', '"mem":1e999')
    source = _write(tmp_path / "in.jsonl", [line])
    out = tmp_path / "out.accounting"
    with collect_losses() as losses:
        schedlab.write(schedlab.read(source), out)
    assert losses.count("extras.sge_record.usage.eusage.mem") == 1
    assert len(schedlab.read(out, format="sge")) == 1


_NAMES = st.text(alphabet=":\n\r#ab 1=,", max_size=6)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    owner=_NAMES,
    job_name=_NAMES,
    qname=_NAMES,
    category=st.sampled_from(["", "-l h_rt=1:00:00", "-l a=1:2", "x:y", "-l h_rt=1::"]),
    pe_taskid=st.sampled_from(["NONE", "7", "1:node", ""]),
    maxvmem=st.sampled_from([1048576, 1048576.0, 0]),
)
def test_any_jsonl_record_converts_to_a_colon_file_that_reads_back(
    owner: str, job_name: str, qname: str, category: str, pe_taskid: str, maxvmem: Any
) -> None:
    record = {
        **GOOD_JSON,
        "owner": owner,
        "job_name": job_name,
        "qname": qname,
        "category": category,
        "pe_taskid": pe_taskid,
        "usage": {"eusage": {"cpu": 1.0, "maxvmem": maxvmem}},
    }
    with tempfile.TemporaryDirectory() as tmp:
        source = _write(Path(tmp) / "in.jsonl", [json.dumps(record)])
        out = Path(tmp) / "out.accounting"
        schedlab.write(schedlab.read(source), out)
        back = schedlab.read(out, format="sge")
        assert len(back) == 1 and back.meta["skipped"] == 0
        assert back.jobs[0].used_memory == schedlab.read(source).jobs[0].used_memory


# ------------------------------------------------------------------ 4. negative memory


@pytest.mark.parametrize(
    ("index", "field", "memory"),
    [(42, "maxvmem", "maxvmem"), (42, "maxvmem", "maxrss"), (16, "ru_maxrss", "maxrss"),
     (16, "ru_maxrss", "maxvmem"), (36, "cpu", "maxvmem")],
)  # fmt: skip
def test_negative_memory_or_cpu_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: int, field: str, memory: str
) -> None:
    """It used to convert to a used memory of -0.000108 KB in SWF."""
    path = _write(tmp_path / "accounting", [GOOD, _field(GOOD, index, "-1")])
    kind, message, line, named = _read_both(monkeypatch, path, memory=memory)
    assert (kind, line, named) == ("error", 2, field)
    assert message.endswith(">= 0, got -1")
    lenient = _read_both(monkeypatch, path, memory=memory, lenient=True)
    assert lenient[3] == 1
    assert (lenient[0].to_arrays()["used_memory"] >= 0).all()


@pytest.mark.parametrize(("key", "field"), [("maxvmem", "maxvmem"), ("cpu", "cpu")])
def test_negative_memory_in_jsonl_is_an_error(tmp_path: Path, key: str, field: str) -> None:
    record = json.loads(json.dumps(GOOD_JSON))
    record["usage"]["eusage"][key] = -1
    path = _write(tmp_path / "accounting.jsonl", [json.dumps(GOOD_JSON), json.dumps(record)])
    with pytest.raises(FormatError) as info:
        schedlab.read(path)
    assert (info.value.line, info.value.field) == (2, f"usage.eusage.{field}")
    assert info.value.message.endswith(">= 0, got -1")
    assert schedlab.read(path, lenient=True).meta["skipped"] == 1


# ------------------------------------------------------------------ 5. not UTF-8


@pytest.mark.parametrize("workers", [1, 2])
def test_a_line_that_is_not_utf8_is_named(tmp_path: Path, workers: int) -> None:
    bad = _field(GOOD, 3, "caf\xe9").encode("latin-1")
    lines = [GOOD.encode()] * 400 + [bad] + [GOOD.encode()] * 99
    path = tmp_path / "accounting"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert path.stat().st_size > 1 << 16  # (workers=2 splits the file)
    with pytest.raises(FormatError) as info:
        schedlab.read(path, format="sge", workers=workers)
    assert info.value.line == 401
    assert str(info.value) == f"{path}:401: not UTF-8 text (invalid continuation byte)"
    lenient = schedlab.read(path, format="sge", workers=workers, lenient=True)
    assert lenient.meta["records"] == 499 and lenient.meta["skipped"] == 1
    assert [line for line, _ in lenient.meta["rejects"]] == [401]


def test_a_last_line_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "accounting"
    path.write_bytes(GOOD.encode() + b"\n" + GOOD.encode() + b"\xff")
    with pytest.raises(FormatError) as info:
        schedlab.read(path, format="sge", workers=1)
    assert info.value.line == 2


def test_names_from_another_format_are_substituted_and_reported(tmp_path: Path) -> None:
    """A job synthesised from SWF takes its user and queue names from the header
    tables; a colon there is written as ``_`` too (and the two users stay two)."""
    swf = tmp_path / "in.swf"
    swf.write_text(
        "; Version: 2.2\n; UnixStartTime: 1700000000\n"
        "; User: 1 ad:min\n; User: 2 ad_min2\n; Queue: 1 q:1\n"
        "1 0 10 100 1 -1 -1 1 -1 -1 1 1 -1 -1 1 -1 -1 -1\n"
        "2 5 10 100 1 -1 -1 1 -1 -1 1 2 -1 -1 1 -1 -1 -1\n"
    )
    out = tmp_path / "out.accounting"
    with collect_losses() as losses:
        schedlab.write(schedlab.read(swf), out)
    assert losses.count("user_id") == 1 and losses.count("queue_number") == 2
    back = schedlab.read(out, format="sge")
    assert sorted(back.header.names("User").values()) == ["ad_min", "ad_min2"]
    assert list(back.header.names("Queue").values()) == ["q_1"]
