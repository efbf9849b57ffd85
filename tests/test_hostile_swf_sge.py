"""Hostile input to the SWF and Grid Engine (colon and JSONL) readers (issue 15):
every reproducer as a test, then hypothesis fuzzing of the readers' Python API.

The fuzzing budget comes from a hypothesis profile: ``hostile-ci`` (the default,
a few seconds per reader) or ``hostile-long`` for a longer hunt, chosen with
``SCHEDLAB_FUZZ_PROFILE=hostile-long``.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import lzma
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedlab.api import detect_reader
from schedlab.errors import FormatError, SchedlabError
from schedlab.formats.sge import reader as sge_reader
from schedlab.formats.sge.reader import read_accounting
from schedlab.formats.swf.reader import read_swf
from schedlab.testing import run_cli as run
from schedlab.validation import check_workload, failing

settings.register_profile(
    "hostile-ci",
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "hostile-long",
    max_examples=5000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FUZZ = settings.get_profile(os.environ.get("SCHEDLAB_FUZZ_PROFILE", "hostile-ci"))

BOM = b"\xef\xbb\xbf"
COMPRESS = {"gz": lambda b: gzip.compress(b, mtime=0), "bz2": bz2.compress, "xz": lzma.compress}
SGE_FILES = (
    "apel_test_sge_accounting.txt",
    "apel_test_uge82_ms_accounting.txt",
    "gbsc_utils_ogetools_test_data.accounting",
    "go-clusterscheduler_ocs900_accounting.jsonl",
    "ocs-9.0.0_release-notes_accounting.jsonl",
    "pretty-accounting_sge6x_accounting.txt",
    "pretty-accounting_uge8x_ms_accounting.txt",
    "xdmod_sge_accounting-logs.log",
    "xdmod_uge_accounting-logs.log",
)


def endings(data: bytes, ending: bytes) -> bytes:
    return data.replace(b"\n", ending)


def assert_same_workload(got: schedlab.Workload, expected: schedlab.Workload) -> None:
    """Same jobs, every field and every kept source text."""
    a, b = got.to_arrays(), expected.to_arrays()
    assert len(a) == len(b) > 0
    for name in schedlab.SWF_FIELDS:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert [j.extras for j in got] == [j.extras for j in expected]
    named = [e for e in got.header.entries if e.label != "Conversion"]  # (names the file)
    assert named == [e for e in expected.header.entries if e.label != "Conversion"]
    assert got.meta.get("skipped", 0) == expected.meta.get("skipped", 0) == 0


@contextlib.contextmanager
def json_backend(name: str) -> Iterator[None]:
    """Make the JSONL reader use one parser: ``bulk`` (msgspec, then orjson),
    ``orjson`` (line by line) or ``json`` (the standard library's)."""
    saved = sge_reader.BULK, sge_reader._fast_loads
    try:
        if name != "bulk":
            sge_reader.BULK = False
        if name == "json":
            sge_reader._fast_loads = None
        yield
    finally:
        sge_reader.BULK, sge_reader._fast_loads = saved


BACKENDS = ["bulk", "orjson", "json"]


# ------------------------------------------------------------------ line ends, BOM


@pytest.mark.parametrize("variant", ["cr", "crlf", "bom", "bom-crlf", "cr-gz", "crlf-bz2"])
def test_swf_line_ends_and_bom_read_like_lf(tmp_path: Path, swf_dir: Path, variant: str):
    """CR-only lublin read as 0 jobs with exit 0; now every variant reads the same."""
    original = swf_dir / "lublin_256.swf"
    data = original.read_bytes()
    ending = b"\r\n" if "crlf" in variant else b"\r" if "cr" in variant else b"\n"
    data = (BOM if "bom" in variant else b"") + endings(data, ending)
    for kind, compress in COMPRESS.items():
        if variant.endswith(kind):
            data = compress(data)
    path = tmp_path / "t.swf"
    path.write_bytes(data)
    expected = read_swf(original)
    assert_same_workload(read_swf(path), expected)
    assert_same_workload(read_swf(path, workers=2), expected)
    streamed = read_swf(path, stream=True, chunk_bytes=4096)
    assert_same_workload(schedlab.Workload.from_jobs(list(streamed), expected.header), expected)
    assert read_swf(io.BytesIO(data)).meta["records"] == 10000
    assert detect_reader(path).name == "swf"


def test_swf_gzip_pipeline_with_crlf_late_in_the_file(tmp_path: Path, swf_dir: Path) -> None:
    """The gzip pipeline looks at the start only: CRs after it are normalized too."""
    original = swf_dir / "lublin_256.swf"
    lines = original.read_bytes().splitlines(True)
    cut = int(len(lines) * 0.9)
    data = b"".join(lines[:cut]) + endings(b"".join(lines[cut:]), b"\r\n")
    path = tmp_path / "late.swf.gz"
    path.write_bytes(gzip.compress(data, mtime=0))
    expected = read_swf(original)
    for workers in (1, 2):
        assert_same_workload(read_swf(path, workers=workers), expected)


def test_validate_a_cr_only_swf(capsys, tmp_path: Path, swf_dir: Path) -> None:
    path = tmp_path / "cr.swf"
    path.write_bytes(endings((swf_dir / "lublin_256.swf").read_bytes(), b"\r"))
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 0 and ": ok: 10000 jobs" in out


@pytest.mark.parametrize("variant", ["cr", "crlf", "bom", "bom-cr", "crlf-gz", "cr-xz"])
@pytest.mark.parametrize("name", SGE_FILES)
def test_grid_engine_line_ends_and_bom_read_like_lf(
    tmp_path: Path, shared_data: Path, name: str, variant: str
) -> None:
    """CR-only gave 1 of 133 jobs; a JSONL file with a BOM was sniffed as colon."""
    original = shared_data / "sge" / name
    data = original.read_bytes()
    ending = b"\r\n" if "crlf" in variant else b"\r" if "cr" in variant else b"\n"
    data = (BOM if "bom" in variant else b"") + endings(data, ending)
    for kind, compress in COMPRESS.items():
        if variant.endswith(kind):
            data = compress(data)
    path = tmp_path / original.name  # (the header names the file; compression by content)
    path.write_bytes(data)
    expected = schedlab.read(original)
    assert detect_reader(path).name == detect_reader(original).name
    assert_same_workload(schedlab.read(path), expected)
    stream = io.BytesIO(data)
    stream.name = original.name  # type: ignore[misc]
    assert_same_workload(read_accounting(stream), expected)


@pytest.mark.parametrize("ending", [b"\r\n", b"\r"])
def test_grid_engine_two_processes_with_crlf_and_bom(
    tmp_path: Path, shared_data: Path, ending: bytes
) -> None:
    lines = (shared_data / "sge" / "gbsc_utils_ogetools_test_data.accounting").read_bytes()
    data = b"".join([lines] * 6)  # more than 64 KB, so that it can be split
    plain = tmp_path / "plain" / "accounting"
    plain.parent.mkdir()
    plain.write_bytes(data)
    hostile = tmp_path / "accounting"
    hostile.write_bytes(BOM + endings(data, ending))
    assert hostile.stat().st_size > 1 << 16
    expected = read_accounting(plain, workers=1)
    for workers in (1, 2):
        assert_same_workload(read_accounting(hostile, workers=workers), expected)


def test_jsonl_with_a_bom_is_sniffed_as_jsonl(tmp_path: Path, shared_data: Path) -> None:
    original = shared_data / "sge" / "go-clusterscheduler_ocs900_accounting.jsonl"
    path = tmp_path / "accounting.data"
    path.write_bytes(BOM + original.read_bytes())
    assert detect_reader(path).name == "sge-jsonl"
    workload = schedlab.read(path)
    assert workload.meta["layout"] == "jsonl"
    assert_same_workload(workload, schedlab.read(original))


# ------------------------------------------------------------------ JSON nesting


def _deep_jsonl(shared_data: Path, inside_a_key: bool) -> bytes:
    good = (shared_data / "sge" / "ocs-9.0.0_release-notes_accounting.jsonl").read_bytes()
    deep = "[" * 5000
    if inside_a_key:
        record = json.loads(good.splitlines()[0])
        text = json.dumps(record)[:-1] + f', "x": {deep}{"]" * 5000}}}'
    else:
        text = deep
    return good + text.encode() + b"\n"


@pytest.mark.parametrize("inside_a_key", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
def test_deeply_nested_json_is_one_bad_record(
    tmp_path: Path, shared_data: Path, backend: str, inside_a_key: bool
) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_bytes(_deep_jsonl(shared_data, inside_a_key))
    with json_backend(backend):
        with pytest.raises(FormatError) as caught:
            read_accounting(path)
        assert str(caught.value) == f"{path}:2: invalid JSON (nested too deeply)"
        lenient = read_accounting(path, lenient=True)
    assert len(lenient) == 1 and lenient.meta["skipped"] == 1
    assert [f.line for f in failing(check_workload(lenient))] == [2]


def test_deeply_nested_json_on_the_command_line(capsys, tmp_path: Path, shared_data: Path):
    path = tmp_path / "deep.jsonl"
    path.write_bytes(_deep_jsonl(shared_data, False))
    code, _, err = run(capsys, "convert", str(path), str(tmp_path / "o.swf"))
    assert (code, err) == (2, f"schedlab: error: {path}:2: invalid JSON (nested too deeply)\n")
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 1 and "FAILED" in out


# ------------------------------------------------------------------ out-of-range values


def test_swf_run_time_of_forty_nines_is_rejected(capsys, tmp_path: Path, swf_dir: Path):
    lines = (swf_dir / "lublin_256.swf").read_text().splitlines(True)
    fields = lines[29].split()
    fields[3] = "9" * 40
    lines[29] = " ".join(fields) + "\n"
    path = tmp_path / "big.swf"
    path.write_text("".join(lines))
    with pytest.raises(FormatError) as caught:
        read_swf(path)
    assert (caught.value.line, caught.value.field) == (30, "4 (run_time)")
    assert "out of range" in caught.value.message
    lenient = read_swf(path, lenient=True)
    assert lenient.meta["skipped"] == 1 and len(lenient) == 9999
    assert lenient.to_arrays()["run_time"].max() < 1e12
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 1 and f"{path}:30: error: field 4 (run_time): out of range" in out


@pytest.mark.parametrize(
    ("value", "field", "seconds"),
    [
        ("1e16", 8, False),  # used_memory beyond 2**53
        ("9007199254740992", 1, False),  # job number 2**53
        ("9007199254740993", 1, False),  # 2**53 + 1 (read as 2**53 by float)
        ("1000000000001", 2, True),  # submit time beyond 1e12 s
        ("-1e13", 3, True),  # wait time
        ("1e308", 9, True),  # requested time
    ],
)
def test_swf_bounds(tmp_path: Path, value: str, field: int, seconds: bool) -> None:
    fields = ["1", "0", "0", "10", "1", "-1", "-1", "1", "10", "-1"] + ["-1"] * 8
    fields[field - 1] = value
    path = tmp_path / "b.swf"
    path.write_text(" ".join(fields) + "\n")
    with pytest.raises(FormatError) as caught:
        read_swf(path)
    assert caught.value.line == 1 and caught.value.field.startswith(f"{field} (")
    limit = "1e12 seconds" if seconds else "2**53"
    assert limit in caught.value.message
    fields[field - 1] = "1000000000000" if seconds else "9007199254740991"  # the limits
    path.write_text(" ".join(fields) + "\n")
    assert len(read_swf(path)) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_grid_engine_slots_of_thirty_nines_is_rejected(
    capsys, tmp_path: Path, shared_data: Path, backend: str
) -> None:
    colon = (shared_data / "sge" / "apel_test_sge_accounting.txt").read_text().splitlines(True)
    fields = colon[0].split(":")
    fields[34] = "9" * 30
    colon[0] = ":".join(fields)
    jsonl = (shared_data / "sge" / "ocs-9.0.0_release-notes_accounting.jsonl").read_text()
    record = json.loads(jsonl.splitlines()[0])
    record["slots"] = int("9" * 30)
    for name, text in (("a.accounting", "".join(colon)), ("a.jsonl", json.dumps(record) + "\n")):
        path = tmp_path / name
        path.write_text(text)
        with json_backend(backend), pytest.raises(FormatError) as caught:
            read_accounting(path)
        assert (caught.value.line, caught.value.field) == (1, "slots"), str(caught.value)
        assert "out of range" in caught.value.message
    code, out, _ = run(capsys, "validate", str(tmp_path / "a.accounting"))
    assert code == 1 and "field slots: out of range" in out


@pytest.mark.parametrize(
    ("index", "value", "field"),
    [
        (8, "1000000000000001", "submission_time"),  # milliseconds beyond 1e12 s
        (36, "1e13", "cpu"),
        (42, "1e17", "maxvmem"),
        (5, "9007199254740993", "job_number"),
    ],
)
def test_grid_engine_colon_bounds(tmp_path: Path, shared_data: Path, index, value, field):
    line = (shared_data / "sge" / "apel_test_sge_accounting.txt").read_text().splitlines()[0]
    fields = line.split(":")
    fields[index] = value
    path = tmp_path / "b.accounting"
    path.write_text(":".join(fields) + "\n")
    with pytest.raises(FormatError) as caught:
        read_accounting(path)
    assert (caught.value.line, caught.value.field) == (1, field), str(caught.value)


# ------------------------------------------------------------------ fuzzing

HOSTILE_TOKENS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(lambda v: str(v).encode()),
    st.floats().map(lambda v: repr(v).encode()),
    st.sampled_from(
        [
            b"9" * 40,
            b"1e40",
            b"-1e40",
            b"nan",
            b"inf",
            b"-inf",
            b"1e400",
            b"0x1F",
            b"1_0",
            b"",
            b"-",
            b"--1",
            b"1e",
            b".",
            b"\xff\xfe",
            b"\x00",
            b"NONE",
            b"-0",
            b"+3",
            BOM + b"1",
            "\u0661".encode(),
            b"[" * 3000,
            b'{"a":' * 50,
        ]
    ),
    st.binary(max_size=6),
)

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)


def _mutate(data: st.DataObject, lines: list[bytes], split: bytes | None) -> bytes:
    """Lines of a real file with a few hostile changes, line ends, BOM, compression."""
    lines = list(lines)
    for _ in range(data.draw(st.integers(0, 4), label="changes")):
        op = data.draw(st.sampled_from(["token", "token", "delete", "dup", "insert", "cut"]))
        if not lines:
            lines.append(b"")
        i = data.draw(st.integers(0, len(lines) - 1), label="line")
        if op == "token" and split is not None:
            parts = lines[i].split(split) if split else lines[i].split()
            if parts:
                k = data.draw(st.integers(0, len(parts) - 1), label="field")
                parts[k] = data.draw(HOSTILE_TOKENS, label="token")
                lines[i] = (split or b" ").join(parts)
        elif op == "delete":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "insert":
            lines.insert(i, data.draw(st.binary(max_size=40), label="inserted"))
        elif op == "cut" and lines[i]:
            lines[i] = lines[i][: data.draw(st.integers(0, len(lines[i]) - 1), label="cut")]
    ending = data.draw(st.sampled_from([b"\n", b"\r\n", b"\r"]), label="ending")
    body = ending.join(lines) + (ending if data.draw(st.booleans(), label="last") else b"")
    if data.draw(st.booleans(), label="bom"):
        body = BOM + body
    kind = data.draw(st.sampled_from([None, None, None, "gz", "bz2", "xz"]), label="compress")
    if kind is not None:
        body = COMPRESS[kind](body)
        if data.draw(st.booleans(), label="truncate"):
            body = body[: data.draw(st.integers(0, len(body)), label="keep")]
    return body


def _jsonl_mutate(data: st.DataObject, lines: list[bytes]) -> list[bytes]:
    """Records with hostile JSON values in random places (nested keys included)."""
    out = []
    for line in lines:
        record = json.loads(line)
        if data.draw(st.booleans(), label="change record"):
            target = record
            path = data.draw(
                st.sampled_from(
                    [
                        ("job_number",),
                        ("slots",),
                        ("submission_time",),
                        ("start_time",),
                        ("end_time",),
                        ("failed",),
                        ("qname",),
                        ("category",),
                        ("usage",),
                        ("usage", "eusage"),
                        ("usage", "eusage", "cpu"),
                        ("usage", "eusage", "maxvmem"),
                        ("type",),
                        ("new",),
                    ]
                ),
                label="key",
            )
            for key in path[:-1]:
                nested = target.get(key) if isinstance(target, dict) else None
                if not isinstance(nested, dict):
                    break
                target = nested
            else:
                target[path[-1]] = data.draw(JSON_VALUES, label="value")
        try:
            text = json.dumps(record).encode()
        except (ValueError, OverflowError):  # pragma: no cover - json.dumps is total here
            text = line
        out.append(text)
    return out


def _read(read: Any, body: bytes, via_path: bool, **options: Any) -> Any:
    """The workload, or the SchedlabError; anything else fails the test."""
    try:
        if via_path:
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "fuzz.data"
                path.write_bytes(body)
                workload = read(path, **options)
                len(workload)  # (a streaming workload reads now)
                return workload
        workload = read(io.BytesIO(body), **options)
        len(workload)
        return workload
    except SchedlabError as exc:
        return exc


def _check_reader(read: Any, body: bytes, via_path: bool, **options: Any) -> None:
    """Only schedlab's errors leave the reader, and a lenient read of an input the
    strict reader rejects gives validate something to fail on."""
    strict = _read(read, body, via_path, **options)
    lenient = _read(read, body, via_path, lenient=True, **options)
    if isinstance(strict, FormatError) and not isinstance(lenient, SchedlabError):
        findings = check_workload(lenient)
        assert failing(findings), f"validate says ok, the strict reader says: {strict}"
    if not isinstance(strict, SchedlabError):
        assert not isinstance(lenient, SchedlabError), lenient
        assert len(lenient) == len(strict)


@pytest.fixture(scope="module")
def swf_lines(shared_data: Path) -> list[bytes]:
    return (shared_data / "swf" / "lublin_256.swf").read_bytes().splitlines()[:45]


@pytest.fixture(scope="module")
def colon_lines(shared_data: Path) -> list[bytes]:
    lines = []
    for name in SGE_FILES:
        if "jsonl" not in name:
            lines += (shared_data / "sge" / name).read_bytes().splitlines()[:3]
    return lines


@pytest.fixture(scope="module")
def jsonl_lines(shared_data: Path) -> list[bytes]:
    lines = []
    for name in SGE_FILES:
        if "jsonl" in name:
            lines += (shared_data / "sge" / name).read_bytes().splitlines()
    return [line for line in lines if line.strip()]


@FUZZ
@given(st.data())
def test_fuzz_swf_reader(swf_lines: list[bytes], data: st.DataObject) -> None:
    if data.draw(st.integers(0, 9), label="random bytes") == 0:
        body = data.draw(st.binary(max_size=400))
    else:
        body = _mutate(data, swf_lines, b"")
    via_path = data.draw(st.booleans(), label="path")
    stream = via_path and data.draw(st.booleans(), label="stream")
    options: dict[str, Any] = {"workers": 1}
    if stream:
        options.update(stream=True, chunk_bytes=data.draw(st.sampled_from([64, 1000, 1 << 20])))
    _check_reader(read_swf, body, via_path, **options)


@FUZZ
@given(st.data())
def test_fuzz_grid_engine_colon_reader(colon_lines: list[bytes], data: st.DataObject) -> None:
    if data.draw(st.integers(0, 9), label="random bytes") == 0:
        body = data.draw(st.binary(max_size=400))
    else:
        picked = data.draw(st.lists(st.sampled_from(colon_lines), min_size=1, max_size=6))
        body = _mutate(data, picked, b":")
    block = data.draw(st.sampled_from([sge_reader.BLOCK_CHARS, 300]), label="block")
    saved = sge_reader.BLOCK_CHARS
    sge_reader.BLOCK_CHARS = block
    try:
        _check_reader(read_accounting, body, data.draw(st.booleans(), label="path"), workers=1)
    finally:
        sge_reader.BLOCK_CHARS = saved


@FUZZ
@given(st.data())
def test_fuzz_grid_engine_jsonl_reader(jsonl_lines: list[bytes], data: st.DataObject) -> None:
    picked = data.draw(st.lists(st.sampled_from(jsonl_lines), min_size=1, max_size=4))
    body = _mutate(data, _jsonl_mutate(data, picked), None)
    backend = data.draw(st.sampled_from(BACKENDS), label="backend")
    with json_backend(backend):
        _check_reader(read_accounting, body, data.draw(st.booleans(), label="path"), workers=1)
