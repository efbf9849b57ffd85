"""The bulk reading paths of the sge reader (``formats/sge/bulk.py``) give exactly
the workload of the careful record-by-record path: columns, extras, header, meta,
rejects and findings, and the same error in strict mode. Checked on every real
file, on generated files of every colon and JSONL variant (with small blocks, so
that blocks mix variants), on bad records, without msgspec, and in two processes.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from read_snapshot import read_snapshot
from schedlab.errors import FormatError
from schedlab.formats.sge import bulk, reader
from sge_records import GOOD

GOOD_JSON: dict[str, Any] = json.loads(
    '{"job_number":17,"task_number":0,"start_time":1700000010000000,'
    '"end_time":1700000110000000,"owner":"alice","group":"users","account":"sge",'
    '"qname":"all.q","hostname":"node1","department":"defaultdepartment","slots":1,'
    '"job_name":"job","priority":0,"submission_time":1700000000000000,'
    '"submit_cmd_line":"qsub -l h_rt=60 job.sh","category":"","failed":0,"exit_status":0,'
    '"usage":{"rusage":{"ru_wallclock":100,"ru_utime":90.0,"ru_stime":10.0},'
    '"eusage":{"wallclock":100.0,"cpu":100.0,"mem":1.0,"io":0.0,"iow":0.0,'
    '"maxvmem":1048576.0,"maxrss":524288.0}}}'
)
OPTIONS = [{}, {"lenient": True}, {"memory": "maxrss"}, {"group": False, "order": "file"}]


def _same_both_ways(monkeypatch: pytest.MonkeyPatch, path: Path, **options: Any) -> tuple:
    monkeypatch.setattr(reader, "BULK", True)
    fast = read_snapshot(path, **options)
    monkeypatch.setattr(reader, "BULK", False)
    careful = read_snapshot(path, **options)
    monkeypatch.setattr(reader, "BULK", True)
    assert fast == careful
    return fast


class _Spy:
    """Counts the blocks the bulk functions read (and those they decline)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.colon = self.json = self.declined = self.variants = 0
        colon_block, json_block = bulk.colon_block, bulk.json_block

        def colon(*args: Any, **kwargs: Any) -> Any:
            block = colon_block(*args, **kwargs)
            self.colon += block is not None
            self.declined += block is None
            self.variants += block is not None and block.variants is not None
            return block

        def jsonl(*args: Any, **kwargs: Any) -> Any:
            columns = json_block(*args, **kwargs)
            self.json += columns is not None
            self.declined += columns is None
            return columns

        monkeypatch.setattr(reader, "colon_block", colon)
        monkeypatch.setattr(reader, "json_block", jsonl)


# ------------------------------------------------------------------- real files


def _real_files(shared: Path) -> list[Path]:
    return sorted(p for p in (shared / "sge").iterdir() if p.is_file())


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "default")
@pytest.mark.parametrize("block", [reader.BLOCK_CHARS, 700])
def test_real_files_read_the_same(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch, options: dict, block: int
) -> None:
    monkeypatch.setattr(reader, "BLOCK_CHARS", block)
    spy = _Spy(monkeypatch)
    files = _real_files(shared_data)
    assert len(files) >= 8
    for path in files:
        result = _same_both_ways(monkeypatch, path, **options)
        assert result[0] != "error", (path, result)
    assert spy.colon and spy.json  # the bulk paths did read real files


# ------------------------------------------------------------------ generated files


def _colon_line(rng: random.Random, i: int) -> str:
    """A colon record of a random variant (or a comment / empty line)."""
    fields = GOOD.split(":")
    kind = rng.random()
    if kind < 0.03:
        return rng.choice(["# Version: 8.5.4", "", "x", "#" + GOOD])
    ms = rng.random() < 0.2
    scale = 1000 if ms else 1
    sub = (1_700_000_000 + i * 7) * scale + (rng.randrange(1000) if ms else 0)
    start = sub + rng.randrange(5000) * scale
    end = start + rng.randrange(90000) * scale
    if rng.random() < 0.05:  # never ran
        fields[0] = fields[1] = rng.choice(["UNKNOWN", "(null)"])
        start = end = 0
    fields[0] = fields[0] if fields[0] != "all.q" else rng.choice(["all.q", "short.q", "gpu.q"])
    fields[3] = f"user{rng.randrange(40)}"
    fields[2] = f"grp{rng.randrange(5)}"
    fields[5] = str(100 + i // rng.choice([1, 1, 1, 2]))  # some restarts share a key
    fields[8], fields[9], fields[10] = str(sub), str(start), str(end)
    fields[11] = rng.choice(["0", "0", "1", "100", "37"])
    fields[12] = rng.choice(["0", "0", "1", "137", "143"])
    slots = rng.choice([1, 1, 2, 16, 128])
    fields[34] = str(slots)
    fields[35] = str(rng.choice([0, 0, 1, 7]))
    fields[36] = rng.choice([f"{rng.random() * 1e5:.6f}", "0", "12", "1e3", "3.5"])
    fields[42] = rng.choice([f"{rng.randrange(1 << 40)}.000000", "0", "1234567890123456"])
    fields[41] = rng.choice(["NONE", "NONE", "1.node7", ""])
    h_rt = rng.choice(["3600", "7200", "24:00:00", "1:30", "", "INFINITY"])
    fields[39] = rng.choice(
        [f"-l h_rt={h_rt},h_vmem=2G", f"-pe smp {slots} -l h_rt={h_rt}", "", "-l cpu=1:00:00"]
    )
    if rng.random() < 0.03:  # numbers in other forms (the bulk path checks them one by one)
        fields[rng.choice([13, 16, 20, 37, 40, 42])] = rng.choice(["1e3", "-0", "7.", ".5"])
    if rng.random() < 0.02:
        fields[7] = rng.choice(["-3", "1024", "2"])  # priority
    variant = rng.random()
    if variant < 0.1:
        fields = fields[:43]  # SGE 6.0
    elif variant < 0.2:  # Univa 8.x trailing fields
        fields += ["NONE", "NONE", "0", "0", "frontend1", "NONE", "qsub job.sh", "1.5", "77"]
    return ":".join(fields)


def _json_line(rng: random.Random, i: int) -> str:
    record = json.loads(json.dumps(GOOD_JSON))
    sub = 1_700_000_000_000_000 + i * 7_000_000 + rng.randrange(10**6)
    start = sub + rng.randrange(5000) * 10**6
    record["submission_time"] = sub
    record["start_time"] = start
    record["end_time"] = start + rng.randrange(90000) * 10**6
    record["job_number"] = 100 + i // rng.choice([1, 1, 2])
    record["owner"] = rng.choice(["alice", "bob", "zoë", "user10", "user2"])
    record["qname"] = rng.choice(["all.q", "gpu.q"])
    record["slots"] = rng.choice([1, 4])
    record["category"] = rng.choice(["", "-l h_rt=7200", "-l h_vmem=1G -pe mpi 8"])
    if rng.random() < 0.2:
        del record["task_number"]
    if rng.random() < 0.2:
        record["pe_taskid"] = rng.choice(["NONE", "1.node3", "2.node4"])
    if rng.random() < 0.1:
        record["deleted_by"] = "bob@login1"
    if rng.random() < 0.2:  # OCS 9.0.0-9.0.5
        record["usage"] = {"rusage": record["usage"]["rusage"], "usage": record["usage"]["eusage"]}
    if rng.random() < 0.05:
        del record["usage"]
    if rng.random() < 0.05 and "usage" in record:
        record["usage"]["gpu"] = {"seconds": 12.5, "model": "a100"}
    if rng.random() < 0.1:
        usage = record["usage"] = record.get("usage", {})
        execd = "usage" if "usage" in usage else "eusage"  # (not both: an error)
        usage.setdefault(execd, {})["cpu"] = rng.choice([7, 0.1, 9.5e11])
    if rng.random() < 0.05:
        record = {"time": sub, "type": "acct", **record}
    return json.dumps(record, separators=(",", ":"), ensure_ascii=rng.random() < 0.5)


def _write(tmp: Path, name: str, lines: list[str]) -> Path:
    path = tmp / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("block", [reader.BLOCK_CHARS, 3000])
def test_generated_colon_variants_read_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(reader, "BLOCK_CHARS", block)
    rng = random.Random(4)
    path = _write(tmp_path, "accounting", [_colon_line(rng, i) for i in range(3000)])
    spy = _Spy(monkeypatch)
    for options in OPTIONS:
        result = _same_both_ways(monkeypatch, path, **options)
        assert result[0] != "error"
    assert spy.colon and spy.variants  # variants were read in bulk too
    assert result[3]["records"] > 2800


@pytest.mark.parametrize("block", [reader.BLOCK_CHARS, 5000])
def test_generated_jsonl_variants_read_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(reader, "BLOCK_CHARS", block)
    rng = random.Random(5)
    path = _write(tmp_path, "accounting.jsonl", [_json_line(rng, i) for i in range(2000)])
    spy = _Spy(monkeypatch)
    for options in OPTIONS:
        assert _same_both_ways(monkeypatch, path, **options)[0] != "error"
    assert spy.json


def test_jsonl_without_msgspec_reads_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(6)
    path = _write(tmp_path, "a.jsonl", [_json_line(rng, i) for i in range(300)])
    with_msgspec = read_snapshot(path)
    monkeypatch.setattr(bulk, "_JSON_DECODERS", {False: None, True: None})
    spy = _Spy(monkeypatch)
    assert read_snapshot(path) == with_msgspec
    assert spy.json == 0 and spy.declined


def test_bulk_paths_read_plain_files_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file of plain records never reaches the careful path."""
    rng = random.Random(7)
    colon = _write(tmp_path, "accounting", [GOOD.replace(":17:", f":{i}:") for i in range(500)])
    jsonl = _write(tmp_path, "a.jsonl", [_json_line(rng, i) for i in range(500)])

    def careful(*args: Any) -> None:
        raise AssertionError("the careful path was used")

    monkeypatch.setattr(reader._Parser, "_colon", careful)
    monkeypatch.setattr(reader._Parser, "_json", careful)
    assert len(schedlab.read(colon, workers=1)) == 500
    assert len(schedlab.read(jsonl, workers=1)) > 400


@pytest.mark.parametrize("layout", ["colon", "jsonl"])
def test_two_processes_read_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    rng = random.Random(8)
    make = _colon_line if layout == "colon" else _json_line
    path = _write(tmp_path, f"x.{layout}", [make(rng, i) for i in range(1500)])
    assert path.stat().st_size > 1 << 16
    for options in OPTIONS[:2]:
        assert read_snapshot(path, workers=2, **options) == read_snapshot(
            path, workers=1, **options
        )
    monkeypatch.setattr(reader, "BULK", False)
    assert read_snapshot(path, workers=2) == read_snapshot(path, workers=1)


def test_crlf_and_long_lines_read_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "BLOCK_CHARS", 256)  # shorter than a record
    rng = random.Random(9)
    lines = [_colon_line(rng, i) for i in range(200)]
    path = tmp_path / "accounting"
    path.write_bytes("".join(line + "\n" for line in lines).encode())
    _same_both_ways(monkeypatch, path)
    path.write_bytes("".join(line + "\r\n" for line in lines).encode())
    _same_both_ways(monkeypatch, path)
    path.write_bytes("\n".join(lines).encode())  # no newline at the end
    _same_both_ways(monkeypatch, path)


# ------------------------------------------------------------------ bad records


def _field(line: str, index: int, value: str) -> str:
    fields = line.split(":")
    fields[index] = value
    return ":".join(fields)


BAD_COLON = [
    GOOD[:60],  # truncated
    _field(GOOD, 9, "17OO000010"),  # non-numeric time
    _field(GOOD, 10, "1700000005"),  # end before start
    _field(GOOD, 9, "1699999999"),  # start before submission
    _field(GOOD, 5, "17.5"),  # fractional job number
    _field(GOOD, 5, "17.0"),  # integral, written as a float
    _field(GOOD, 42, "lots"),  # bad maxvmem
    _field(GOOD, 36, "inf"),  # not finite
    _field(GOOD, 36, "1_000"),  # Python's float() takes this
    _field(GOOD, 34, " 4"),  # spaces around a number
    _field(GOOD, 43, "\u0663"),  # a non-ASCII digit (str.isdigit is true)
    _field(GOOD, 40, "x"),  # iow not a number
    _field(GOOD, 11, "-1"),  # a negative failed code
    _field(GOOD, 4, "a\rb"),  # a CR inside a field
    _field(GOOD, 4, "a\x00b"),  # a NUL byte
    _field(GOOD, 35, "9" * 17),  # more digits than float64 keeps
    _field(GOOD, 39, "-l h_rt=1:00:00") + ":7",  # colons inside the category, 46 fields
    ":".join(GOOD.split(":")[:43]) + ":1",  # 44 fields
    _field(GOOD, 14, "Q#z"),  # an unmapped number field
    _field(GOOD, 7, "0.5"),  # a fractional priority
    _field(GOOD, 7, "-3"),  # (good, but not a plain number)
    _field(GOOD, 20, "1e3"),  # (good, but not a plain number)
    _field(GOOD, 20, "1.2.3"),
    _field(GOOD, 37, "inf"),
    _field(GOOD, 16, "-1"),  # negative memory (ru_maxrss, maxvmem) and CPU time
    _field(GOOD, 42, "-1"),
    _field(GOOD, 36, "-5"),
    _field(_field(GOOD, 39, "-pe mpi 9"), 43, "Q#z"),  # not taken into the category
    _field(GOOD, 43, "Q#z").replace("h_rt=3600", "h_rt=1:00"),
    ":".join(_field(GOOD, 40, "Q#z").split(":")[:43]),  # 43 fields, bad iow
]


def _compact(record: Any) -> str:
    return json.dumps(record, separators=(",", ":"))


BAD_JSON = [
    _compact(GOOD_JSON)[:200],  # truncated
    _compact({**GOOD_JSON, "start_time": "soon"}),
    _compact({**GOOD_JSON, "slots": [1]}),
    _compact({**GOOD_JSON, "slots": True}),
    _compact({**GOOD_JSON, "job_number": 17.0}),
    _compact({**GOOD_JSON, "job_number": 10**25}),
    _compact({**GOOD_JSON, "owner": None}),
    _compact({**GOOD_JSON, "end_time": 1700000001000000}),
    _compact({k: v for k, v in GOOD_JSON.items() if k != "submission_time"}),
    _compact({**GOOD_JSON, "type": "new_job", "time": 1}),
    _compact({**GOOD_JSON, "type": ["acct"], "time": 1}),
    _compact({**GOOD_JSON, "pe_taskid": 3}),
    _compact({**GOOD_JSON, "usage": {"eusage": {"cpu": "x"}}}),
    _compact({**GOOD_JSON, "usage": {"eusage": None, "usage": {"cpu": 5}}}),
    _compact({**GOOD_JSON, "usage": 7}),
    _compact({**GOOD_JSON, "deleted_by": None}),
    _compact({**GOOD_JSON, "qname": "a\u00e9"}),
    "[1, 2, 3]",
    "{}",
    '{"job_number":1,"job_number":2,"submission_time":1,"start_time":2,"end_time":3}',
    '{"job\\u005fnumber":5,"submission_time":1,"start_time":2,"end_time":3}',
    _compact(GOOD_JSON).replace('"cpu":100.0', '"cpu":NaN'),
    _compact(GOOD_JSON).replace('"cpu":100.0', '"cpu":1e999'),
    "# a comment",
    "",
]
_SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _mixed(good: list[str], bad: list[str]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.one_of(st.sampled_from(good), st.sampled_from(bad)), min_size=1, max_size=40)


_GOOD_COLON = [_colon_line(random.Random(s), s) for s in range(30)]
_GOOD_JSON = [_json_line(random.Random(s), s) for s in range(30)]


@_SETTINGS
@given(lines=_mixed(_GOOD_COLON, BAD_COLON), block=st.sampled_from([400, 3000, 1 << 22]))
def test_bad_colon_records_same_errors_and_rejects(
    monkeypatch: pytest.MonkeyPatch, lines: list[str], block: int
) -> None:
    monkeypatch.setattr(reader, "BLOCK_CHARS", block)
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(Path(tmp), "accounting", lines)
        _same_both_ways(monkeypatch, path)
        _same_both_ways(monkeypatch, path, lenient=True)


@_SETTINGS
@given(lines=_mixed(_GOOD_JSON, BAD_JSON), block=st.sampled_from([2000, 1 << 22]))
def test_bad_json_records_same_errors_and_rejects(
    monkeypatch: pytest.MonkeyPatch, lines: list[str], block: int
) -> None:
    monkeypatch.setattr(reader, "BLOCK_CHARS", block)
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(Path(tmp), "a.jsonl", [_GOOD_JSON[0], *lines])
        _same_both_ways(monkeypatch, path)
        _same_both_ways(monkeypatch, path, lenient=True)


# ------------------------------------------------------------------ the pieces


def test_colon_block_numbers_are_numpys() -> None:
    """The numeric fields of a block equal numpy's conversion of the split text."""
    rng = random.Random(10)
    lines = [line for line in (_colon_line(rng, i) for i in range(2000)) if line.count(":") == 44]
    lines = [line for line in lines if line.split(":")[-1].isdigit() and line[0] != "#"]
    lines = [line for line in lines if line.split(":")[-2].isdigit()]
    data = "".join(line + "\n" for line in lines).encode()
    numeric = (5, 35, 8, 9, 10, 11, 12, 34, 36, 42, 16)
    block = bulk.colon_block(data, numeric, (0, 3, 2, 39), 41)
    assert block is not None and len(block.regular.rows) == len(lines)
    fields = [line.split(":") for line in lines]
    for column, k in enumerate(numeric):
        expected = np.array([f[k] for f in fields], dtype=np.float64)
        assert np.array_equal(block.regular.numbers[:, column], expected), k
    for (values, inverse), k in zip(block.regular.texts, (0, 3, 2, 39), strict=True):
        assert [values[i] for i in inverse] == [f[k] for f in fields]
    assert block.regular.pe_task.tolist() == [f[41] not in ("NONE", "") for f in fields]


def test_json_block_declines_what_parsers_disagree_on() -> None:
    """Integers beyond 64 bits in mapped keys are left to the careful path (the
    standard library reads them as integers, orjson as floats)."""
    record = json.dumps({**GOOD_JSON, "job_number": 2**64})
    assert bulk.json_block((record + "\n").encode(), 1, False) is None
    fine = json.dumps(GOOD_JSON)
    assert bulk.json_block((fine + "\n").encode(), 1, False) is not None


def test_colon_block_variants_split_as_split_record() -> None:
    """Records of other lengths (and colons inside the category) are split as
    :func:`split_record` splits them."""
    from schedlab.formats.sge.colon import split_record

    rng = random.Random(11)
    lines = [_colon_line(rng, i) for i in range(3000)]
    lines = [line for line in lines if len(line) > 1 and line[0] != "#"]
    data = "".join(line + "\n" for line in lines).encode()
    numeric = (5, 35, 8, 9, 10, 11, 12, 34, 36, 42)
    block = bulk.colon_block(data, numeric, (0, 3, 2, 39), 41)
    assert block is not None and block.variants is not None and not block.leftover
    part = bulk.merge_parts(block.regular, block.variants)
    assert part.rows.tolist() == list(range(len(lines)))
    fields = [split_record(line) for line in lines]
    assert {len(f) for f in fields} >= {43, 45, 54}
    for column, k in enumerate(numeric):
        expected = np.array([f[k] for f in fields], dtype=np.float64)
        assert np.array_equal(part.numbers[:, column], expected), k
    for (values, inverse), k in zip(part.texts, (0, 3, 2, 39), strict=True):
        assert [values[i] for i in inverse] == [f[k] for f in fields]


def test_number_beyond_double_range_in_an_unmapped_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1e999 in a key the reader does not map: msgspec and orjson refuse it, the
    standard library reads it (as infinity), which the reader then does. The record
    is kept and written back verbatim."""
    line = _compact(GOOD_JSON).replace('"mem":1.0', '"mem":1e999')
    path = _write(tmp_path, "a.jsonl", [line])
    assert json.loads(line)["usage"]["eusage"]["mem"] == float("inf")
    workload = schedlab.read(path, workers=1)
    assert workload.meta["records"] == 1 and workload.meta["skipped"] == 0
    out = tmp_path / "out.accounting.jsonl"
    schedlab.write(workload, out)
    assert out.read_text() == line + "\n"


def test_block_of_only_bad_usage_records(tmp_path: Path) -> None:
    """A block whose every record has a malformed usage is rejected record by
    record (this used to fail with an IndexError)."""
    bad = _compact({**GOOD_JSON, "usage": 7})
    path = _write(tmp_path, "a.jsonl", [bad, bad])
    workload = schedlab.read(path, lenient=True)
    assert workload.meta["skipped"] == 2 and len(workload) == 0
    with pytest.raises(FormatError) as info:
        schedlab.read(path)
    assert info.value.line == 1 and info.value.field == "usage"
