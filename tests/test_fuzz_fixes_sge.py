"""Grid Engine fixes from the fuzz audit:

* a lone UTF-16 surrogate (a legal JSON escape such as ``"\\ud800"``) in a JSONL
  record is refused, naming file, line and field, by every parser the reader uses
  (msgspec in bulk, orjson, the standard library): it used to be read and then
  crash the writers (it has no UTF-8 encoding);
* a key given twice in one JSON object is an error naming file, line and key (it
  used to be resolved silently, the last value winning), on every path; files
  without one are still read in bulk;
* a name (owner, group, queue) made of thousands of digits no longer stops every
  command with an internal error (``natural_key`` converted digit runs with
  ``int``); ordinary names keep their natural order;
* error messages quote a long bad value cut to about 40 characters.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
import schedlab
from schedlab.errors import FormatError
from schedlab.formats.sge import bulk, reader
from schedlab.formats.sge.mapping import natural_key
from schedlab.testing import run_cli as run

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
    '"submit_cmd_line":"qsub -l h_rt=1:00:00 job.sh","category":"-l h_rt=48:00:00",'
    '"failed":0,"exit_status":0,'
    '"usage":{"rusage":{"ru_wallclock":100,"ru_utime":90.0,"ru_stime":10.0},'
    '"eusage":{"wallclock":100.0,"cpu":100.0,"mem":1.0,"io":0.0,"iow":0.0,'
    '"maxvmem":1048576.0,"maxrss":524288.0}}}'
)


def _job(number: int, text: str = GOOD_JSON) -> str:
    return text.replace('"job_number":17', f'"job_number":{number}', 1)


PATHS = ["bulk", "careful-orjson", "careful-stdlib", "no-msgspec-stdlib"]


@pytest.fixture(params=PATHS)
def parser_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every way the reader parses JSON lines."""
    kind = request.param
    monkeypatch.setattr(reader, "BULK", kind == "bulk")
    if kind.endswith("stdlib"):
        monkeypatch.setattr(reader, "_fast_loads", None)
    if kind.startswith("no-msgspec"):
        monkeypatch.setattr(bulk, "_JSON_DECODERS", {False: None, True: None})
    return str(kind)


def _file(tmp_path: Path, bad: str, before: int = 1, after: int = 1) -> Path:
    """Good records, then ``bad`` (line ``before + 1``), then good records."""
    lines = [_job(100 + i) for i in range(before)] + [bad]
    lines += [_job(200 + i) for i in range(after)]
    path = tmp_path / "a.accounting.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _strict_error(path: Path) -> FormatError:
    with pytest.raises(FormatError) as info:
        schedlab.read(path, workers=1)
    return info.value


def _lenient_skips(path: Path, line: int, field: str, words: str, tmp_path: Path) -> None:
    workload = schedlab.read(path, lenient=True, workers=1)
    assert workload.meta["skipped"] == 1
    assert [number for number, _ in workload.meta["rejects"]] == [line]
    findings = [f for f in workload.meta["findings"] if f.check == "bad-record"]
    assert [(f.line, f.field) for f in findings] == [(line, field)]
    assert words in findings[0].message and findings[0].message.endswith("(record skipped)")
    # what is read can be written, in every layout
    for name in ("o.swf", "o.accounting", "o.accounting.jsonl"):
        schedlab.write(workload, tmp_path / name)


# ------------------------------------------------------------ lone surrogates

SURROGATES = [
    # (the bad line, field named)
    (_job(5).replace('"owner":"alice"', '"owner":"r\\ud800"'), "owner"),
    (_job(5).replace('"hostname":"node1"', '"hostname":"\\udc00x"'), "hostname"),
    (_job(5).replace('"job_name":"job"', '"job_name":"a\\uDBFF\\u0041"'), "job_name"),
    (
        _job(5).replace('"maxrss":524288.0}', '"maxrss":524288.0},"gpu":{"model":"\\ud83d"}'),
        "usage.gpu.model",
    ),
    (_job(5).replace('"account":"sge"', '"acc\\ud800t":"sge"'), "acc\\ud800t"),
]


@pytest.mark.parametrize(("bad", "field"), SURROGATES, ids=[f for _, f in SURROGATES])
def test_lone_surrogate_is_refused_on_every_path(
    tmp_path: Path, parser_path: str, bad: str, field: str
) -> None:
    path = _file(tmp_path, bad)
    error = _strict_error(path)
    assert (error.line, error.field) == (2, field)
    assert "surrogate" in error.message
    str(error).encode("utf-8")  # the message itself can be printed
    _lenient_skips(path, 2, field, "surrogate", tmp_path)


def test_surrogate_pairs_are_text(tmp_path: Path, parser_path: str) -> None:
    """An escaped pair (an emoji) is one character: read as such."""
    path = _file(tmp_path, _job(5).replace('"owner":"alice"', '"owner":"\\ud83d\\ude00"'))
    workload = schedlab.read(path, workers=1)
    assert "\U0001f600" in workload.header.names("User").values()


def test_cli_names_the_surrogate_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = _file(tmp_path, SURROGATES[0][0])
    code, _, err = run(capsys, "convert", str(path), str(tmp_path / "o.swf"))
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}:2: field owner:" in err and "surrogate" in err


# -------------------------------------------------------------- duplicate keys

DUPLICATES = [
    # (the bad line, key named)
    (_job(5).replace('"job_number":5', '"job_number":77,"job_number":5'), "job_number"),
    (_job(5).replace('"owner":"alice"', '"owner":"alice","owner":"alice"'), "owner"),
    (_job(5).replace('"hostname":"node1"', '"hostname":"a","hostname":"b"'), "hostname"),
    (_job(5).replace('"cpu":100.0', '"cpu":100.0,"cpu":3.0'), "usage.eusage.cpu"),
    (_job(5).replace('"ru_utime":90.0', '"ru_utime":90.0,"ru_utime":1'), "usage.rusage.ru_utime"),
    (
        _job(5).replace('"usage":{"rusage"', '"usage":{"eusage":{"cpu":1.0},"rusage"'),
        "usage.eusage",
    ),
    (_job(5)[:-1] + ',"usage":{}}', "usage"),
    (
        _job(5).replace('"maxrss":524288.0}', '"maxrss":524288.0},"gpu":{"n":1,"n":2}'),
        "usage.gpu.n",
    ),
    (
        _job(5).replace('"maxrss":524288.0}', '"maxrss":524288.0},"gpu":{"n":1},"gpu":{"n":1}'),
        "usage.gpu",
    ),
    # a new key twice, with colons in string values that make up for the count
    (
        _job(5).replace('"job_name":"job"', '"job_name":"a:b","x":"1","x":"1"'),
        "x",
    ),
    # spaces around the colons (not OCS's compact form)
    (
        json.dumps(json.loads(_job(5))).replace('"slots": 1', '"slots": 1, "slots": 2'),
        "slots",
    ),
]


@pytest.mark.parametrize(("bad", "key"), DUPLICATES, ids=[k for _, k in DUPLICATES])
def test_duplicate_key_is_an_error_on_every_path(
    tmp_path: Path, parser_path: str, bad: str, key: str
) -> None:
    path = _file(tmp_path, bad)
    error = _strict_error(path)
    assert (error.line, error.field) == (2, key)
    assert "given twice" in error.message
    _lenient_skips(path, 2, key, "given twice", tmp_path)


def test_duplicate_key_in_a_large_block_read_in_bulk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bulk path declines a block with a duplicate key (here at record 151 of
    300, as in the audit), so that the careful path reports it."""
    bad = DUPLICATES[0][0]
    path = _file(tmp_path, bad, before=150, after=149)
    assert bulk.json_block(path.read_bytes(), 300, False) is None
    error = _strict_error(path)
    assert (error.line, error.field) == (151, "job_number")


def test_cli_names_the_duplicate_key(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = _file(tmp_path, DUPLICATES[0][0])
    code, _, err = run(capsys, "validate", str(path))
    assert code == 1 and "Traceback" not in err + _
    code, _, err = run(capsys, "info", str(path))
    assert code == 2 and err.count("\n") == 1
    assert f"{path}:2: field job_number: given twice" in err


def _varied_line(rng: random.Random, i: int, escapes: float = 0.05) -> str:
    """A record of the shapes OCS writes (optional keys present or not, colons in
    string values), as compact or spaced JSON."""
    record: dict[str, Any] = json.loads(_job(1000 + i))
    if rng.random() < 0.3:
        record["granted_pe"] = "smp"
    if rng.random() < 0.2:
        record["pe_taskid"] = rng.choice(["NONE", "1.node3"])
    if rng.random() < 0.1:
        record["project"] = "p:1"
    if rng.random() < 0.2:
        record["category"] = rng.choice(["", "-l h_rt=7200", "-q all.q@node:1"])
    if rng.random() < 0.1:
        record["usage"]["eusage"]["ioops"] = 3
    if rng.random() < 0.1:
        record["usage"]["usage"] = record["usage"].pop("eusage")
    escaped = rng.random() < escapes
    if escaped:
        record["job_name"] = "x:y"
    text = json.dumps(record, separators=(",", ":"), ensure_ascii=rng.random() < 0.5)
    if rng.random() < 0.1:
        text = json.dumps(record)
    if escaped:  # a colon written as an escape
        text = text.replace('"x:y"', '"x\\u003ay"')
    return text


def _with_duplicate(rng: random.Random, line: str) -> tuple[str, str]:
    """``line`` with one key (at any level) given twice (unchanged if the pair is
    not written compactly)."""
    record = json.loads(line)
    objects = [("", record), ("usage", record["usage"])]
    objects += [(f"usage.{k}", v) for k, v in record["usage"].items()]
    path, target = rng.choice(objects)
    key = rng.choice(list(target))
    text = json.dumps(target[key], separators=(",", ":"))
    pair = f'"{key}":{text}'
    return line.replace(pair, f"{pair},{pair}", 1), f"{path}.{key}".lstrip(".")


@pytest.mark.parametrize("seed", range(8))
def test_random_duplicates_are_found_by_every_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    lines = [_varied_line(rng, i) for i in range(400)]
    while True:
        where = rng.randrange(400)
        bad, key = _with_duplicate(rng, lines[where])
        if bad != lines[where]:
            break
    lines[where] = bad
    path = tmp_path / "a.accounting.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(reader, "BLOCK_CHARS", 20_000)  # blocks of ~20 records
    for careful in (False, True):
        monkeypatch.setattr(reader, "BULK", not careful)
        error = _strict_error(path)
        assert (error.line, error.field) == (where + 1, key)


def test_files_without_duplicates_are_still_read_in_bulk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys that vary from record to record, colons inside values, an escaped
    colon, spaced JSON: every block is read in bulk and gives what the careful
    path gives (the check for keys given twice costs no trip to the careful path)."""
    rng = random.Random(9)
    lines = [_varied_line(rng, i, escapes=0.004) for i in range(600)]
    path = tmp_path / "a.accounting.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(reader, "BLOCK_CHARS", 30_000)
    calls = {"bulk": 0, "declined": 0}
    json_block = bulk.json_block

    def spy(*args: Any, **kwargs: Any) -> Any:
        columns = json_block(*args, **kwargs)
        calls["bulk" if columns is not None else "declined"] += 1
        return columns

    monkeypatch.setattr(reader, "json_block", spy)
    fast = schedlab.read(path, workers=1)
    escaped = sum("\\u003a" in line for line in lines)
    assert 0 < escaped <= 4
    assert calls["bulk"] >= 8 and calls["declined"] <= escaped
    monkeypatch.setattr(reader, "BULK", False)
    careful = schedlab.read(path, workers=1)
    assert fast.to_arrays().extras == careful.to_arrays().extras
    assert len(fast) == 600


def test_json_block_certifies_or_declines() -> None:
    """Direct: a block is read in bulk whatever its string colons and spacing, and
    declined as soon as one object names a key twice."""
    spaced = json.dumps(json.loads(GOOD_JSON))
    for block in (GOOD_JSON, spaced, GOOD_JSON.replace('"job"', '"a:b:c"')):
        assert bulk.json_block((block + "\n").encode(), 1, False) is not None, block
    for bad, _ in DUPLICATES:
        assert bulk.json_block((bad + "\n").encode(), 1, False) is None, bad


# ----------------------------------------------------------------- long names


def _colon_file(tmp_path: Path, index: int, value: str, name: str = "a.accounting") -> Path:
    fields = GOOD.replace(":17:", ":18:").split(":")
    fields[index] = value
    path = tmp_path / name
    path.write_text(GOOD + "\n" + ":".join(fields) + "\n")
    return path


@pytest.mark.parametrize("index", [0, 2, 3], ids=["qname", "group", "owner"])
def test_a_name_of_5000_digits_is_a_name(
    tmp_path: Path, capsys: pytest.CaptureFixture, index: int
) -> None:
    path = _colon_file(tmp_path, index, "7" * 5000)
    workload = schedlab.read(path, workers=1)
    assert len(workload) == 2
    code, _, err = run(capsys, "info", str(path))
    assert code == 0, err


def test_a_jsonl_name_of_5000_digits_is_a_name(tmp_path: Path) -> None:
    path = _file(tmp_path, _job(5).replace('"owner":"alice"', f'"owner":"{"9" * 5000}"'))
    workload = schedlab.read(path, workers=1)
    assert set(workload.header.names("User").values()) == {"alice", "9" * 5000}


def _old_natural_key(name: str) -> tuple:
    parts = re.split(r"(\d+)", name)
    return (*((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts), (2, 0, name))


def test_natural_order_of_ordinary_names_is_kept() -> None:
    rng = random.Random(3)
    names = ["user2", "user10", "user02", "user1", "a", "a1b2", "a1b10", "007", "7", "", "x"]
    names += [f"{rng.choice(['u', 'grp', 'n-'])}{rng.randrange(200)}" for _ in range(200)]
    names += [str(rng.randrange(10**30)) for _ in range(50)]
    assert sorted(names, key=natural_key) == sorted(names, key=_old_natural_key)


def test_natural_key_never_raises() -> None:
    names = ["7" * 5000, "a" + "1" * 10000 + "b", "²", "x²", "٣", "user٣", "①", "0" * 6000 + "1"]
    ordered = sorted(names, key=natural_key)
    assert len(ordered) == len(names)
    # digit runs compare by value, whatever their length or script
    assert sorted(["a10", "a" + "9" * 5000, "a٣"], key=natural_key) == [
        "a٣",
        "a10",
        "a" + "9" * 5000,
    ]


# ----------------------------------------------------------- long bad values


def _one_line_error(capsys: pytest.CaptureFixture, path: Path) -> str:
    code, _, err = run(capsys, "info", str(path))
    assert code == 2 and err.count("\n") == 1
    return err


@pytest.mark.parametrize(
    "index", [14, 36, 40, 42, 8, 7], ids=["ru_utime", "cpu", "iow", "maxvmem", "submit", "prio"]
)
def test_colon_error_cuts_a_long_value(
    tmp_path: Path, capsys: pytest.CaptureFixture, index: int
) -> None:
    err = _one_line_error(capsys, _colon_file(tmp_path, index, "x" * 100_000))
    assert len(err) < 300 and "xxx..." in err


def test_colon_error_cuts_a_long_request(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = _colon_file(tmp_path, 39, "-l h_rt=" + "9" * 100_000)
    err = _one_line_error(capsys, path)
    assert len(err) < 300 and "h_rt" in err and "..." in err


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("job_number", '"' + "x" * 100_000 + '"'),
        ("owner", "[" + ",".join(["1"] * 50_000) + "]"),
        ("priority", '"' + "y" * 100_000 + '"'),
        ("hostname", "[" + ",".join(["2"] * 50_000) + "]"),
    ],
)
def test_jsonl_error_cuts_a_long_value(
    tmp_path: Path, capsys: pytest.CaptureFixture, parser_path: str, key: str, value: str
) -> None:
    record = json.loads(_job(5))
    line = json.dumps({**record, key: "@@"}, separators=(",", ":")).replace('"@@"', value)
    err = _one_line_error(capsys, _file(tmp_path, line))
    assert len(err) < 300 and "..." in err and f"field {key}:" in err


def test_a_shape_learned_from_the_first_records_is_only_a_guess(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bulk path tries the shape of a block's first records (keys in every
    record, in some, in none) for the whole block: a key first met later, or a
    record without a key all the first ones had, makes it count that block field
    by field; the columns are those of the careful path, and a key given twice
    after the first records is still found."""
    lines = [_job(1000 + i) for i in range(1000)]
    lines[700] = lines[700].replace('"priority":0', '"priority":0,"arid":12')
    lines[800] = lines[800].replace('"hostname":"node1",', "")
    block = ("\n".join(lines) + "\n").encode()
    learned: dict[str, Any] = {}
    fast = bulk.json_block(block, 1000, False, learned=learned)
    assert fast is not None
    modes = {key: mode for key, mode, _ in learned["shape"]}
    assert modes["arid"] == modes["hostname"] == bulk._SOMETIMES
    assert bulk.json_block(block, 1000, False, learned=learned) is not None  # (the shape fits)
    path = tmp_path / "a.accounting.jsonl"
    path.write_bytes(block)
    monkeypatch.setattr(reader, "BULK", False)
    careful = schedlab.read(path, workers=1)
    monkeypatch.setattr(reader, "BULK", True)
    assert schedlab.read(path, workers=1).to_arrays().extras == careful.to_arrays().extras
    lines[900] = DUPLICATES[2][0]
    block = ("\n".join(lines) + "\n").encode()
    assert bulk.json_block(block, 1000, False, learned=learned) is None
    assert bulk.json_block(block, 1000, False) is None


@pytest.mark.parametrize("depth", [990, 1022])
def test_deeply_nested_values_are_one_line_errors(
    tmp_path: Path, parser_path: str, depth: int
) -> None:
    """A value nested about as deeply as the parsers allow (with a colon in a
    string, so that the keys are counted one by one) is an error naming the line,
    not an internal error of the checks for surrogates or keys given twice."""
    deep = '{"a":' * depth + '"\\ud800:"' + "}" * depth
    error = _strict_error(_file(tmp_path, _job(5)[:-1] + f',"x":{deep}}}'))
    assert error.line == 2
    assert len(str(error)) < 200
