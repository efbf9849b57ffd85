"""Arrow <-> numpy through the buffers (``formats/google/arrow_numpy.py``) gives what
pyarrow's own conversions give, column by column and for whole reads (the v3
sample and a generated trace read both ways are the same object, pickled byte for
byte), and the in-process read no longer imports pandas."""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.formats.google import arrow_numpy as AN
from schedlab.formats.google import frames as F
from schedlab.formats.google.fixtures import generate_trace

pa = pytest.importorskip("pyarrow", reason="the fast paths need pyarrow (dev installs it)")
pc = pytest.importorskip("pyarrow.compute")

SAMPLE = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "google"
V3_SAMPLE = SAMPLE / "clusterdata2019_v3_sample"

INT64 = st.integers(-(2**63), 2**63 - 1)
FLOATS = st.floats(allow_nan=True, allow_infinity=True)


def _chunked(values, arrow_type, cut, skip):
    """``values`` as a ChunkedArray of two chunks cut at ``cut``, the first one a
    slice (a non-zero offset) of a longer array."""
    cut = min(cut, len(values))
    first = pa.array([None] * skip + values[:cut], arrow_type).slice(skip)
    return pa.chunked_array([first, pa.array(values[cut:], arrow_type)], arrow_type)


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), INT64), max_size=40),
    cut=st.integers(0, 40),
    skip=st.integers(0, 9),
)
def test_ints_equal_fill_null_to_numpy(values, cut, skip):
    column = _chunked(values, pa.int64(), cut, skip)
    expected = column.fill_null(F.NULL_INT).to_numpy()
    got = AN.to_numpy(column, F.NULL_INT)
    assert got.dtype == np.int64
    assert got.tolist() == expected.tolist()


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), FLOATS), max_size=40),
    cut=st.integers(0, 40),
    skip=st.integers(0, 9),
)
def test_floats_equal_fill_null_to_numpy(values, cut, skip):
    column = _chunked(values, pa.float64(), cut, skip)
    expected = column.fill_null(np.nan).to_numpy()
    got = AN.to_numpy(column, np.nan)
    assert got.dtype == np.float64
    assert np.array_equal(got, expected, equal_nan=True)
    # NaN written in the data and NaN put for a null both read as NaN, others exact
    assert [math.isnan(x) for x in got] == [v is None or math.isnan(v) for v in values]


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), st.booleans()), max_size=40),
    cut=st.integers(0, 40),
    skip=st.integers(0, 9),
)
def test_booleans_equal_the_valid_and_filled_arrays(values, cut, skip):
    column = _chunked(values, pa.bool_(), cut, skip)
    got = AN.booleans(column, F.NULL_INT)
    assert got.tolist() == [F.NULL_INT if v is None else int(v) for v in values]


def test_sort_keys_into_arrow_keep_values_and_order():
    rng = np.random.default_rng(5)
    columns = [
        rng.integers(-3, 3, 500).astype(np.int64),
        rng.integers(0, 4, 500).astype(np.int8),
        np.where(rng.random(500) < 0.1, np.nan, rng.random(500).round(1)),
        np.arange(500, dtype=np.int64)[::-1].copy(),
    ]
    mine = pa.Table.from_arrays([AN.from_numpy(c, pa) for c in columns], ["a", "b", "c", "d"])
    theirs = pa.table({"a": columns[0], "b": columns[1], "c": columns[2], "d": columns[3]})
    assert mine.schema == theirs.schema
    for name in "abcd":  # NaN is not equal to itself for Table.equals
        assert mine[name].null_count == theirs[name].null_count == 0
        assert np.array_equal(mine[name].to_numpy(), theirs[name].to_numpy(), equal_nan=True)
    keys = [(k, "ascending") for k in "abcd"]
    order = pc.sort_indices(mine, sort_keys=keys)
    assert AN.to_numpy(order, 0).tolist() == pc.sort_indices(theirs, sort_keys=keys).to_pylist()


def test_other_types_are_refused():
    with pytest.raises(TypeError):
        AN.to_numpy(pa.array(["a"]), 0)
    with pytest.raises(TypeError):
        AN.booleans(pa.array([1]), 0)
    with pytest.raises(TypeError):
        AN.from_numpy(np.array([True]), pa)
    assert not AN.has_number_dtype(np.array(["x"], dtype=object))
    assert AN.has_number_dtype(np.array([1], dtype=np.int32))


def test_int_strings_cast_as_the_three_pass_conversion():
    column = pa.chunked_array([pa.array(["1", "-7", None, "9223372036854775807"])])
    assert F._int_from_strings(column, pa, pc).to_pylist() == [1, -7, None, 2**63 - 1]
    empty = pa.chunked_array([pa.array(["", "3", None])])
    assert F._int_from_strings(empty, pa, pc).to_pylist() == [None, 3, None]
    with pytest.raises(pa.ArrowInvalid):  # not a number: still refused (exact parser)
        F._int_from_strings(pa.chunked_array([pa.array(["", "x"])]), pa, pc)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    return generate_trace(
        tmp_path_factory.mktemp("arrow-numpy") / "trace",
        collections=600,
        shards=2,
        seed=11,
        styles=("bigquery", "numbers"),
    )


@pytest.mark.parametrize("which", ["sample", "generated"])
@pytest.mark.parametrize("tasks", [True, False])
def test_reads_through_buffers_equal_reads_through_pyarrow(
    which, tasks, generated, monkeypatch, request
):
    source = V3_SAMPLE if which == "sample" else generated.directory
    if which == "sample" and not V3_SAMPLE.is_dir():
        pytest.skip("../shared/data is not beside the checkout")
    new = schedlab.read(source, format="google", tasks=tasks)
    monkeypatch.setattr(AN, "USE_BUFFERS", False)
    old = schedlab.read(source, format="google", tasks=tasks)
    assert len(new.jobs) > 0
    assert new.meta["engine"] == "pyarrow"
    assert pickle.dumps(new, protocol=5) == pickle.dumps(old, protocol=5)


def test_the_in_process_read_does_not_import_pandas(generated):
    pytest.importorskip("pandas")
    code = (
        "import sys, schedlab; "
        f"w = schedlab.read({str(generated.directory)!r}, format='google'); "
        "assert w.meta['engine'] == 'pyarrow' and len(w.jobs) > 0; "
        "print('pandas' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
