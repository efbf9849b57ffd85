"""Property tests (hypothesis) and header units for the SWF parser and writer."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.formats.swf.header import format_header, parse_header
from schedlab.formats.swf.parse import TIME_FIELDS, parse_block_slow
from schedlab.formats.swf.writer import format_rows, format_value
from schedlab.model import Header, HeaderEntry, Job, Workload
from schedlab.validation import MAX_SECONDS

# Values an SWF field can hold: -1 (unknown), integers, fractional times.
values = st.one_of(
    st.just(-1.0),
    st.integers(min_value=0, max_value=2**53 - 1).map(float),
    st.floats(min_value=0, max_value=1e12, allow_nan=False, allow_infinity=False),
    st.floats(min_value=-1e6, max_value=1e15, allow_nan=False, allow_infinity=False),
)
# Times (submit, wait, run, CPU, requested, think) are bounded by MAX_SECONDS.
time_values = st.one_of(
    st.just(-1.0),
    st.integers(min_value=0, max_value=int(MAX_SECONDS)).map(float),
    st.floats(min_value=-1e6, max_value=MAX_SECONDS, allow_nan=False, allow_infinity=False),
)
row = st.tuples(*(time_values if i in TIME_FIELDS else values for i in range(18))).map(list)
rows = st.lists(row, min_size=0, max_size=40)


def _roundtrip(matrix: np.ndarray, tmp: Path, header: Header | None = None) -> tuple:
    # Not from_arrays, which refuses fractional ids and counts: the SWF reader
    # and writer keep any value, and this checks them alone.
    workload = Workload(header, columns=schedlab.JobColumns.from_matrix(matrix))
    first = tmp / "a.swf"
    schedlab.write(workload, first)
    again = schedlab.read(first, format="swf", stream=False)
    second = tmp / "b" / "a.swf"
    schedlab.write(again, second)
    return again, first.read_bytes(), second.read_bytes()


@settings(max_examples=60, deadline=None)
@given(rows)
def test_write_read_is_identity(data: list[list[float]]) -> None:
    matrix = np.array(data, dtype=np.float64).reshape(len(data), 18)
    with tempfile.TemporaryDirectory() as tmp:
        again, first, second = _roundtrip(matrix, Path(tmp))
    expected = np.where(matrix == -1, -1.0, matrix)
    got = again.to_arrays().to_matrix() if len(again) else np.empty((0, 18))
    np.testing.assert_array_equal(got, expected)
    assert first == second  # the canonical form round-trips byte for byte


@settings(max_examples=200, deadline=None)
@given(values)
def test_value_format_reads_back_exactly(value: float) -> None:
    text = format_value(value)
    assert float(text) == (value if value != -1 else -1.0)
    assert " " not in text


@settings(max_examples=60, deadline=None)
@given(rows.filter(bool))
def test_fast_and_precise_parsers_agree(data: list[list[float]]) -> None:
    matrix = np.array(data, dtype=np.float64)
    values_18 = np.where(matrix == -1, np.nan, matrix).T
    text = ("\n".join(format_rows(values_18)) + "\n").encode()
    from schedlab.formats.swf.parse import parse_block_fast

    fast = parse_block_fast(text, 1)
    slow = parse_block_slow(text, 1, "<test>")
    assert fast is not None
    np.testing.assert_array_equal(fast.values, slow.values)
    np.testing.assert_array_equal(fast.lines, slow.lines)


@settings(max_examples=80, deadline=None)
@given(rows.filter(bool), st.lists(st.integers(0, 17), max_size=18), values)
def test_rows_are_their_fields_formatted_one_by_one(
    data: list[list[float]], constant: list[int], value: float
) -> None:
    """The batch formatter (columns of one value folded into the format, the rest
    formatted by ``map``) writes each line as formatting every field alone would;
    so does the byte-matrix formatter the writer uses, whose fractional columns are
    each value's text right-aligned."""
    from schedlab.formats.swf.writer import FIELD_WIDTHS, _format_text

    matrix = np.array(data, dtype=np.float64)
    matrix[:, constant] = value  # columns holding one value on every line
    values_18 = np.where(matrix == -1, np.nan, matrix).T
    expected = [
        " ".join(f"{format_value(float(v)):>{w}}" for v, w in zip(line, FIELD_WIDTHS, strict=True))
        for line in values_18.T
    ]
    assert format_rows(values_18) == expected
    assert _format_text(values_18) == "".join(line + "\n" for line in expected)


def test_fractional_columns_over_several_byte_matrices() -> None:
    """More rows than one byte matrix holds, fractional texts of every length (and
    -1, negatives, integers) in two columns: the same text as the line formatter."""
    from schedlab.formats.swf.writer import _TEXT_ROWS, _format_text

    rng = np.random.default_rng(11)
    n = 2 * _TEXT_ROWS + 123
    values_18 = rng.integers(-1, 10**6, size=(18, n)).astype(np.float64)
    places = rng.integers(0, 4, n).tolist()
    cpu = rng.uniform(-50, 5e5, n).tolist()
    values_18[5] = [round(v, k) for v, k in zip(cpu, places, strict=True)]
    values_18[6] = rng.uniform(0, 1, n) * 10.0 ** rng.integers(-3, 12, n)
    values_18[5, ::7] = np.nan
    values_18[values_18 == -1] = np.nan
    expected = "".join(line + "\n" for line in format_rows(values_18))
    assert _format_text(values_18) == expected


# Integral fields only (a simulated schedule of an archive log): the numpy formatter.
integers = st.one_of(
    st.just(-1.0),
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1).map(float),
    st.integers(min_value=-120, max_value=120_000).map(float),
)
integer_rows = st.lists(st.tuples(*([integers] * 18)).map(list), min_size=1, max_size=40)


@settings(max_examples=80, deadline=None)
@given(integer_rows, st.lists(st.integers(0, 17), max_size=18), integers)
def test_integral_rows_are_their_fields_formatted_one_by_one(
    data: list[list[float]], constant: list[int], value: float
) -> None:
    """Rows whose fields are all integral are formatted as one byte matrix (numpy):
    each line is still every field formatted alone, right-aligned in its width and
    widened by a longer number; the block text is the lines with newlines."""
    from schedlab.formats.swf.writer import FIELD_WIDTHS, _format_text

    matrix = np.array(data, dtype=np.float64)
    matrix[:, constant] = value
    values_18 = np.where(matrix == -1, np.nan, matrix).T
    expected = [
        " ".join(f"{format_value(float(v)):>{w}}" for v, w in zip(line, FIELD_WIDTHS, strict=True))
        for line in values_18.T
    ]
    assert format_rows(values_18) == expected
    assert _format_text(values_18) == "".join(line + "\n" for line in expected)


labels = st.sampled_from(["Version", "Computer", "Note", "MaxJobs", "Queue", "Weird", "User"])
texts = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=126, exclude_characters=";"),
    max_size=30,
).map(str.strip)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), labels), texts), max_size=12))
def test_header_written_canonically_reads_back(entries: list) -> None:
    header = Header(
        [HeaderEntry(label, value) for label, value in entries if label or ":" not in value]
    )
    lines = format_header(header)
    parsed, _ = parse_header(lines)
    assert format_header(parsed) == lines  # byte-stable
    assert [e.label for e in parsed.entries] == [e.label for e in header.entries]
    assert [e.value for e in parsed.entries] == [e.value for e in header.entries]


def test_unchanged_entries_keep_their_bytes_and_edits_are_canonical() -> None:
    original = [
        ";Version:2.2",
        "; Information: http://a/",
        ";              http://b/",
        "; MaxProcs:   128   ",
        ";",
        "; Queue:  2 0 ",
        ";    #   legend",
    ]
    header, starts = parse_header(original)
    assert starts == [0, 1, 3, 4, 5, 6]
    assert format_header(header) == original
    assert header.information == "http://a/\nhttp://b/"
    assert header.max_procs == 128
    header.set("MaxProcs", 256)
    header.entries[0].value = "2.1"  # an edit in place is noticed too
    lines = format_header(header)
    assert lines[0] == "; Version: 2.1" and lines[3] == "; MaxProcs: 256"
    assert lines[1:3] == original[1:3]


def test_name_tables_from_other_formats() -> None:
    header = Header()
    header.set_names("User", {1: "alice", 2: "bob smith"})
    header.add("Note", "converted\nby schedlab")
    lines = format_header(header)
    assert lines == [
        "; User: 1 alice",
        "; User: 2 bob_smith",
        "; Note: converted",
        ";       by schedlab",
    ]
    parsed, _ = parse_header(lines)
    assert parsed.names("User") == {1: "alice", 2: "bob_smith"}
    assert parsed.notes == ["converted\nby schedlab"]


def test_jobs_from_other_formats_are_written(tmp_path: Path) -> None:
    jobs = [
        Job(job_number=1, submit_time=0, run_time=10.25, allocated_processors=4, name="x"),
        Job(job_number=2, submit_time=5, wait_time=1, status=1, user_id=3),
    ]
    workload = Workload.from_jobs(jobs)
    out = tmp_path / "o.swf"
    schedlab.write(workload, out)
    again = schedlab.read(out)
    assert again.jobs[0].run_time == 10.25 and again.jobs[0].wait_time is None
    assert again.jobs[1].user_id == 3
    assert out.read_text().splitlines()[0].split()[:5] == ["1", "0", "-1", "10.25", "4"]
