"""Property-based fuzzing of the Google v3 and v2 readers' Python API (issue 15).

* whatever the records hold, the only exceptions that leave a reader are
  schedlab's own (:class:`SchedlabError`);
* lenient reading never raises on bad records, and whenever the strict read
  rejects the input, the lenient read reports at least one skipped record (so
  ``validate`` cannot say ok on it);
* the exact line parser and the pyarrow block parser give the same workload, the
  same error or the same skips;
* skipped counts equal the number of bad records injected among good ones.

The budget is bounded for CI by :data:`FUZZ` (``SCHEDLAB_FUZZ_EXAMPLES`` raises
it for a longer local run, e.g. ``SCHEDLAB_FUZZ_EXAMPLES=2000``).
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from pathlib import Path

import pytest
import schedlab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedlab.formats.google.schema import V2_TABLES, V3_KEYSETS

pytest.importorskip("pyarrow", reason="the fast path needs pyarrow (dev installs it)")

#: The bounded budget of every property here (a few seconds each).
FUZZ = settings(
    max_examples=int(os.environ.get("SCHEDLAB_FUZZ_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --------------------------------------------------------------------------- values

_edge_ints = st.sampled_from(
    [0, 1, -1, -2, 2**31 - 1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, -(2**63), 2**64, 10**30]
)
_ints = st.one_of(_edge_ints, st.integers(), st.integers(min_value=-(2**80), max_value=2**80))
_floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 0.5, 1e6, 1e6 + 1, 1e300, -5.0]),
)
_numbers = st.one_of(_ints, _floats)
_texts = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["", " ", "SUBMIT", "JOB", "EXPLODE", "nan", "inf", "1e999", "1_0", "0x10"]),
    st.sampled_from(["١", "٣", "²", "２００", "601_000_000", "0.0_5", " 7 ", "0X1f"]),
    _numbers.map(str),
)
_scalars = st.one_of(st.none(), st.booleans(), _numbers, _texts)
_values = st.one_of(
    _scalars,
    st.lists(_scalars, max_size=3),
    st.dictionaries(st.sampled_from(["cpus", "memory", "x"]), _scalars, max_size=3),
)

_GOOD = {
    "collection_events": {
        "time": "700000000",
        "type": 0,
        "collection_id": "5",
        "collection_type": 0,
        "priority": 200,
    },
    "instance_events": {
        "time": "700000100",
        "type": 3,
        "collection_id": "5",
        "instance_index": 0,
        "machine_id": "9",
        "resource_request": {"cpus": 0.25, "memory": 0.5},
    },
    "instance_usage": {
        "start_time": "700000100",
        "end_time": "700300100",
        "collection_id": "5",
        "instance_index": 0,
        "average_usage": {"cpus": 0.1, "memory": 0.2},
        "maximum_usage": {"cpus": 0.2, "memory": 0.3},
    },
    "machine_events": {"time": "0", "machine_id": "9", "type": 1, "capacity": {"cpus": 1.0}},
}
V3_TABLES = tuple(_GOOD)


def _record(table: str) -> st.SearchStrategy[dict]:
    """A good record of ``table`` with a few fields (or unknown keys) set to anything."""
    keys = st.sampled_from([*sorted(V3_KEYSETS[table]), "bogus"])
    overrides = st.dictionaries(keys, _values, max_size=3)
    return overrides.map(lambda over: {**_GOOD[table], **over})


def _line(table: str) -> st.SearchStrategy[bytes]:
    """One line of a shard: a (mostly good) record, or bytes of any kind."""
    record = _record(table).map(lambda r: json.dumps(r).encode())
    junk = st.one_of(
        st.binary(max_size=40),
        record.map(lambda b: b[: len(b) // 2]),  # truncated
        st.sampled_from([b"[]", b"null", b"{}", b'{"time": }', b"[" * 3000]),
    )
    return st.one_of(record, record, junk)


@st.composite
def _v3_trace(draw: st.DrawFn) -> dict[str, list[bytes]]:
    return {t: draw(st.lists(_line(t), min_size=1, max_size=6)) for t in V3_TABLES}


def _write_v3(directory: Path, trace: dict[str, list[bytes]]) -> None:
    for table, lines in trace.items():
        raw = b"".join(line.replace(b"\n", b" ") + b"\n" for line in lines)
        (directory / f"{table}-000000000000.json").write_bytes(raw)


def _outcome(source: Path, **options) -> tuple[str, object]:
    """``("ok", (jobs, skipped, rejects))`` or ``("error", message)``; any exception
    but schedlab's own fails the test."""
    try:
        w = schedlab.read(source, **options)
    except schedlab.SchedlabError as exc:
        assert "\n" not in str(exc)
        return "error", str(exc)
    return "ok", (w.jobs, w.meta["skipped"], w.meta["rejects"])


def _check_reader(source: Path, engines: tuple[str | None, ...]) -> None:
    """Strict and lenient reads with each engine (``None``: the reader has one)."""
    options = {
        e: {"engine": e, "format": "google"} if e else {"format": "google-v2"} for e in engines
    }
    strict = {e: _outcome(source, **options[e]) for e in engines}
    lenient = {e: _outcome(source, lenient=True, **options[e]) for e in engines}
    first = engines[0]
    for engine in engines[1:]:
        assert strict[engine] == strict[first]
        assert lenient[engine] == lenient[first]
    kind, value = lenient[first]
    assert kind == "ok", value  # lenient reading never raises on bad records
    if strict[first][0] == "error":
        # validate reads leniently: what the strict read rejects is a skip it reports
        _, skipped, rejects = value
        assert skipped >= 1 and strict[first][1] in rejects
    else:
        assert value[1] == 0


@FUZZ
@given(_v3_trace())
def test_v3_reader_raises_only_schedlab_errors(trace):
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        _write_v3(directory, trace)
        _check_reader(directory, ("python", "auto"))


@FUZZ
@given(st.binary(min_size=1, max_size=3000))
def test_v3_binary_shards(data):
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        (directory / "collection_events-000000000000.json").write_bytes(data)
        _check_reader(directory, ("python", "auto"))


# --------------------------------------------------------------------------- injected bad records

#: Values that must be rejected in each field of each table (a null time, id or
#: event type too: every record has them).
_BAD_VALUES = {
    "time": [
        "1180591620717411303424",
        -1,
        "-9223372036854775808",
        1.5,
        "x",
        None,
        "",
        "١",
        "601_000_000",
        "0x10",
        1.2345678901234568e18,
    ],
    "start_time": [None, "٧", 2.0**60],
    "collection_id": [2**64, "18446744073709551616", -7, True, None, "٣", 1234567890123456789.0],
    "machine_id": [-(2**63), "9" * 30],
    "instance_index": [2**31, -1, 0.5, None],
    "priority": [-5, 2**40, "２００"],
    "type": ["EXPLODE", 99, -1, [0], None, "٣", "²"],
    "resource_request": [
        {"cpus": float("inf")},
        {"cpus": float("nan")},
        {"cpus": -5},
        {"memory": 1e999},
        {"memory": 10**400},
        "0.5",
        {"cpus": "0.0_5"},
        {"memory": "٠.٥"},
    ],
    "average_usage": [{"cpus": float("-inf")}, {"memory": -0.1}],
    "capacity": [{"cpus": float("nan")}, {"memory": 1e7}],
}


def _bad_line(table: str) -> st.SearchStrategy[bytes]:
    fields = [f for f in _BAD_VALUES if f in _GOOD[table] or f in V3_KEYSETS[table]]
    mutated = st.sampled_from(fields).flatmap(
        lambda f: st.sampled_from(_BAD_VALUES[f]).map(
            lambda v: json.dumps({**_GOOD[table], f: v}).encode()
        )
    )
    first_key, first_value = next(iter(_GOOD[table].items()))
    broken = st.sampled_from(
        [
            json.dumps(_GOOD[table]).encode()[:-3],  # truncated
            b"\xfe\xff binary \x00",
            b"[1, 2]",
            json.dumps({**_GOOD[table], "bogus": 1}).encode(),
            # a key given twice, even with the same value
            json.dumps(_GOOD[table]).encode()[:-1]
            + f", {json.dumps(first_key)}: {json.dumps(first_value)}}}".encode(),
        ]
    )
    return st.one_of(mutated, broken)


@st.composite
def _v3_injected(draw: st.DrawFn) -> tuple[dict[str, list[bytes]], int, int]:
    trace: dict[str, list[bytes]] = {}
    bad_count = good_count = 0
    for table in V3_TABLES:
        good = draw(st.integers(1, 5))
        lines = [json.dumps(_GOOD[table]).encode()] * good
        for line in draw(st.lists(_bad_line(table), max_size=4)):
            lines.insert(draw(st.integers(0, len(lines))), line)
            bad_count += 1
        good_count += good
        trace[table] = lines
    return trace, bad_count, good_count


@FUZZ
@given(_v3_injected())
def test_v3_lenient_skips_exactly_the_injected_records(injected):
    trace, bad, good = injected
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        _write_v3(directory, trace)
        for engine in ("python", "auto"):
            w = schedlab.read(directory, engine=engine, lenient=True)
            assert w.meta["skipped"] == bad == len(w.meta["rejects"])
            rows = sum(t["rows"] for t in w.meta["summary"]["tables"].values())
            assert rows == good
            if bad:
                with pytest.raises(schedlab.FormatError):
                    schedlab.read(directory, engine=engine)


# --------------------------------------------------------------------------- v2

_GOOD_V2 = {
    "job_events": ["0", "", "3418309", "0", "user", "3", "name", "logical"],
    "task_events": ["0", "", "3418309", "0", "41", "0", "user", "3", "9", "0.125", "0.25", "0", ""],
    "task_usage": ["600000000", "900000000", "3418309", "0", "41", "0.1", "0.2"] + [""] * 13,
    "machine_events": ["0", "41", "0", "platform", "0.5", "0.5"],
}
_cells = st.one_of(
    st.sampled_from(["", "0", "1", "-1", "9", "17", "nan", "NaN", "inf", "-5", "1e400", "0.5"]),
    st.sampled_from(["1" * 23, str(2**63), str(-(2**63)), '"', "a,b", " 3 ", "0x1"]),
    st.integers().map(str),
    st.floats().map(repr),
    st.text(max_size=5),
)


def _csv_line(cells: list[str]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(cells)
    return out.getvalue().encode("utf-8", "surrogatepass")


def _v2_line(table: str) -> st.SearchStrategy[bytes]:
    width = len(V2_TABLES[table])
    mutated = st.lists(st.tuples(st.integers(0, width - 1), _cells), max_size=3).map(
        lambda changes: _csv_line(
            [dict(changes).get(i, cell) for i, cell in enumerate(_GOOD_V2[table])]
        )
    )
    junk = st.one_of(
        st.binary(max_size=30).map(lambda b: b + b"\n"),
        st.lists(_cells, max_size=width + 2).map(_csv_line),
    )
    return st.one_of(mutated, mutated, junk)


@FUZZ
@given(st.fixed_dictionaries({t: st.lists(_v2_line(t), max_size=6) for t in _GOOD_V2}))
def test_v2_reader_raises_only_schedlab_errors(trace):
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        for table, lines in trace.items():
            good = _csv_line(_GOOD_V2[table])
            (directory / f"{table}-sample.csv").write_bytes(good + b"".join(lines))
        _check_reader(directory, (None,))


_BAD_V2 = {
    "job_events": [
        (0, "1" * 23),
        (0, "-1"),
        (2, str(2**64)),
        (3, "17"),
        (1, "5"),
        (5, "4"),
        (0, ""),
        (2, ""),
        (3, ""),
        (0, "٧"),
        (2, "3_418_309"),
    ],
    "task_events": [
        (9, "inf"),
        (9, "NaN"),
        (9, "-5"),
        (10, "1e400"),
        (8, "-1"),
        (3, "x"),
        (3, ""),
        (9, "0.1_25"),
        (8, "９"),
    ],
    "task_usage": [(5, "-0.5"), (6, "inf"), (0, str(2**63)), (13, "nan"), (1, ""), (0, "")],
    "machine_events": [(4, "-1"), (5, "nan"), (2, "7"), (0, ""), (1, "")],
}


@st.composite
def _v2_injected(draw: st.DrawFn) -> tuple[dict[str, list[bytes]], int, int]:
    trace: dict[str, list[bytes]] = {}
    bad_count = good_count = 0
    for table, good_row in _GOOD_V2.items():
        good = draw(st.integers(1, 4))
        lines = [_csv_line(good_row)] * good
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(["value", "binary", "short", "quote"]))
            if kind == "value":
                index, cell = draw(st.sampled_from(_BAD_V2[table]))
                line = _csv_line([cell if i == index else c for i, c in enumerate(good_row)])
            elif kind == "binary":
                line = b"\xfe\x00\xff" + draw(st.binary(max_size=10)).replace(b"\n", b"") + b"\n"
            elif kind == "quote":  # an unterminated quote: one bad line, not the rest
                at = draw(st.integers(0, len(good_row) - 1))
                cells = [f'"{c}' if i == at else c for i, c in enumerate(good_row)]
                line = (",".join(cells) + "\n").encode()
            else:
                line = _csv_line(good_row[:-1])
            lines.insert(draw(st.integers(0, len(lines))), line)
            bad_count += 1
        good_count += good
        trace[table] = lines
    return trace, bad_count, good_count


@FUZZ
@given(_v2_injected())
def test_v2_lenient_skips_exactly_the_injected_records(injected):
    trace, bad, good = injected
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        for table, lines in trace.items():
            (directory / f"{table}-sample.csv").write_bytes(b"".join(lines))
        w = schedlab.read(directory, lenient=True)
        assert w.meta["skipped"] == bad == len(w.meta["rejects"])
        assert sum(t["rows"] for t in w.meta["summary"]["tables"].values()) == good
        if bad:
            with pytest.raises(schedlab.FormatError):
                schedlab.read(directory)


# ------------------------------------------------------------------- CSV and Parquet exports

_CSV_COLUMNS = ("time", "type", "collection_id", "instance_index", "resource_request.cpus")
_GOOD_CSV = ["700000100", "3", "5", "0", "0.25"]


@FUZZ
@given(st.lists(st.lists(st.tuples(st.integers(0, 4), _cells), max_size=3), max_size=6))
def test_v3_csv_export_raises_only_schedlab_errors(changes):
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        lines = [_csv_line(list(_CSV_COLUMNS)), _csv_line(_GOOD_CSV)]
        for row in changes:
            lines.append(_csv_line([dict(row).get(i, c) for i, c in enumerate(_GOOD_CSV)]))
        (directory / "instance_events-000000000000.csv").write_bytes(b"".join(lines))
        _check_reader(directory, ("python", "auto"))


#: Rows of a v3 CSV export that must be rejected, each by itself: too few or too
#: many cells, an unterminated quote, text after a closing quote, a required cell
#: left empty, digits Python reads but no trace writes.
_BAD_CSV_ROWS = [
    b"700000100,3,5,0\n",
    b"700000100,3,5,0,0.25,7\n",
    b'700000100,3,"5,0,0.25\n',
    b'700000100,3,"5"x,0,0.25\n',
    b",3,5,0,0.25\n",
    b"700000100,,5,0,0.25\n",
    b"700000100,3,,0,0.25\n",
    b"700000100,3,5,,0.25\n",
    "700000100,3,٥,0,0.25\n".encode(),
    b"700_000_100,3,5,0,0.25\n",
    b"700000100,3,5,0,0.2_5\n",
    b"700000100,3,0x5,0,0.25\n",
]


@FUZZ
@given(st.lists(st.one_of(st.none(), st.sampled_from(_BAD_CSV_ROWS)), min_size=1, max_size=12))
def test_v3_csv_lenient_skips_exactly_the_injected_rows(rows):
    """Each bad row is one skip (an unterminated quote no longer swallows the rest of
    the shard, a short row is no longer padded with nulls), in both engines."""
    bad = sum(1 for r in rows if r is not None)
    good = len(rows) - bad
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        lines = [_csv_line(list(_CSV_COLUMNS))]
        lines += [_csv_line(_GOOD_CSV) if r is None else r for r in rows]
        (directory / "instance_events-000000000000.csv").write_bytes(b"".join(lines))
        _check_reader(directory, ("python", "auto"))
        for engine in ("python", "auto"):
            w = schedlab.read(directory, engine=engine, lenient=True)
            assert w.meta["skipped"] == bad
            assert w.meta["summary"]["tables"]["instance_events"]["rows"] == good


_int64 = st.one_of(_edge_ints, st.integers()).filter(lambda v: -(2**63) <= v < 2**63)
_parquet_row = st.fixed_dictionaries(
    {
        "time": _int64,
        "type": st.sampled_from([0, 3, 6, 11, -1]),
        "collection_id": _int64,
        "instance_index": _int64,
        "resource_request": st.fixed_dictionaries({"cpus": _floats, "memory": _floats}),
    }
)


@FUZZ
@given(st.lists(_parquet_row, min_size=1, max_size=6))
def test_parquet_export_reads_like_the_same_json_lines(rows):
    """The same rows as Parquet (columns checked at once) and as JSON lines (record
    by record): the same jobs, or the same error at the same row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as tmp:
        parquet_dir, json_dir = Path(tmp, "p"), Path(tmp, "j")
        parquet_dir.mkdir()
        json_dir.mkdir()
        pq.write_table(pa.Table.from_pylist(rows), parquet_dir / "instance_events.parquet")
        (json_dir / "instance_events.json").write_text(
            "".join(json.dumps(row) + "\n" for row in rows)
        )
        for lenient in (False, True):
            a = _outcome(parquet_dir, lenient=lenient)
            b = _outcome(json_dir, lenient=lenient)
            if a[0] == "error":
                assert b[0] == "error" and a[1].split(":", 2)[1:] == b[1].split(":", 2)[1:]
            else:
                jobs_a, skipped_a, rejects_a = a[1]
                jobs_b, skipped_b, rejects_b = b[1]  # type: ignore[misc]
                assert jobs_a == jobs_b and skipped_a == skipped_b
                assert [m.split(":", 2)[1:] for m in rejects_a] == [
                    m.split(":", 2)[1:] for m in rejects_b
                ]


# ------------------------------------------------------------------- beyond the pyarrow sample


def _padding(table: str, numbers: bool) -> list[bytes]:
    """About 80 KiB of good records (int64 values as strings, or as numbers): what
    follows is past the 64 KiB the pyarrow parser types its schema from, so the
    block parser meets it first."""
    good = _GOOD[table]
    if numbers:
        good = {k: int(v) if isinstance(v, str) and v.isdigit() else v for k, v in good.items()}
    row = json.dumps(good).encode()
    return [row] * (80_000 // len(row) + 1)


@FUZZ
@given(
    st.sampled_from(V3_TABLES).flatmap(lambda t: st.tuples(st.just(t), st.lists(_line(t)))),
    st.booleans(),
)
def test_hostile_lines_after_the_sample_read_alike_in_every_engine(case, numbers):
    table, lines = case
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        _write_v3(directory, {table: [*_padding(table, numbers), *lines]})
        _check_reader(directory, ("python", "auto"))
