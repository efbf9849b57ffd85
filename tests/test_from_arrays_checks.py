"""``Workload.from_arrays``, the way back from a pandas frame: it takes a DataFrame or
a mapping of columns, converts durations (timedelta64) of the time fields to
seconds, and refuses what it cannot read exactly (datetimes, booleans, text,
categoricals, 2-D columns, columns or extras of the wrong length) with a one-line
:class:`UsageError` naming the column; and the extras columns of ``to_pandas`` keep
mixed values as ``object``."""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pytest
import schedlab
from schedlab.errors import UsageError
from schedlab.model import SWF_FIELDS, Header, Job, JobColumns, Workload

pd = pytest.importorskip("pandas")


def _refused(arrays: Any, *words: str, **kwargs: Any) -> str:
    """The message of the UsageError ``from_arrays(arrays)`` raises: one line, with
    every one of ``words`` in it."""
    with pytest.raises(UsageError) as info:
        Workload.from_arrays(arrays, **kwargs)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message, (word, message)
    return message


def _workload(n: int = 12) -> Workload:
    jobs = [
        Job(
            job_number=i + 1,
            submit_time=10 * i,
            wait_time=None if i % 5 == 0 else i,
            run_time=100 + 37 * i,
            requested_processors=1 + i % 4,
            requested_time=None if i % 3 == 0 else 400 + i,
            status=1,
            user_id=None if i % 4 == 0 else 1 + i % 3,
        )
        for i in range(n)
    ]
    header = Header()
    header.set("MaxProcs", 4)
    header.set("UnixStartTime", 1_000_000_000)
    return Workload.from_jobs(jobs, header)


# --------------------------------------------------------------------- datetimes


@pytest.mark.parametrize(
    "column",
    [
        pd.Series(pd.to_datetime([0, 10], unit="s", utc=True)),
        pd.Series(pd.to_datetime([0, 10], unit="s")),
        pd.Series(pd.to_datetime([0, None], unit="s")),
        np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[s]"),
        [dt.datetime(2020, 1, 1), dt.datetime(2020, 1, 2)],
        pd.Series(pd.array([0, 10], dtype="timestamp[s][pyarrow]")),
    ],
    ids=["tz-aware", "naive", "naive-NaT", "numpy", "objects", "arrow"],
)
def test_datetimes_are_refused_naming_the_column(column: Any) -> None:
    _refused({"submit_time": column, "run_time": [5, 5]}, "submit_time", "datetime", "seconds")


def test_the_audit_notebook_step_is_refused() -> None:
    w = _workload()
    df = w.to_pandas()
    df["submit_time"] = pd.to_datetime(df["submit_time"], unit="s", utc=True)
    _refused(df, "submit_time", "datetime64[", "UnixStartTime", header=w.header)


# --------------------------------------------------------------------- durations


@pytest.mark.parametrize(
    "column",
    [
        pd.Series(pd.to_timedelta([1.5, None, 3600], unit="s")),
        np.array([1500, "NaT", 3_600_000], dtype="timedelta64[ms]"),
        [dt.timedelta(seconds=1.5), None, pd.Timedelta(hours=1)],
        pd.Series(pd.array([1500, None, 3_600_000], dtype="duration[ms][pyarrow]")),
    ],
    ids=["pandas", "numpy", "objects", "arrow"],
)
def test_durations_of_time_fields_become_seconds_and_nat_unknown(column: Any) -> None:
    w = Workload.from_arrays({"run_time": column, "submit_time": [0, 1, 2]})
    got = w.to_arrays()["run_time"]
    assert got.dtype == np.float64
    assert got[0] == 1.5 and np.isnan(got[1]) and got[2] == 3600.0


def test_the_audit_round_trip_with_durations_gives_the_same_schedule() -> None:
    w = _workload()
    df = w.to_pandas()
    df["run_time"] = pd.to_timedelta(df["run_time"], unit="s")
    df["requested_time"] = pd.to_timedelta(df["requested_time"], unit="s")
    df["submit_time"] = pd.to_timedelta(df["submit_time"], unit="s")  # since the origin
    w2 = Workload.from_arrays(df, header=w.header)
    for name in SWF_FIELDS:
        assert np.array_equal(w2.to_arrays()[name], w.to_arrays()[name], equal_nan=True), name
    r1, r2 = schedlab.simulate(w), schedlab.simulate(w2)
    assert np.array_equal(r1.start, r2.start)


def test_durations_in_a_field_that_is_not_a_time_are_refused() -> None:
    _refused(
        {"requested_processors": pd.to_timedelta([1, 2], unit="s")},
        "requested_processors",
        "duration",
    )


# --------------------------------------------------------------------- other dtypes


@pytest.mark.parametrize(
    ("column", "words"),
    [
        ([True, False], ("bool",)),
        (np.array([True, False]), ("bool",)),
        (pd.array([True, None], dtype="boolean"), ("boolean",)),
        (["12", "7"], ("text",)),
        (pd.Series(["12", "7"]), ("text",)),
        (pd.array(["12", None], dtype="string"), ("text",)),
        (["abc", 5.0], ("text", "'abc'", "row 0")),
        ([5.0, "abc"], ("text", "'abc'", "row 1")),
        ([1, True], ("bool", "row 1")),
        (pd.Series([100, 200]).astype("category"), ("categorical",)),
        (pd.Categorical(["a", "b"]), ("categorical",)),
        ([1 + 2j, 3], ("complex",)),
        ([{"a": 1}, 3], ("dict", "row 0")),
    ],
    ids=[
        "bool-list",
        "bool-numpy",
        "boolean",
        "text-list",
        "text-series",
        "string",
        "abc-first",
        "abc-second",
        "bool-in-objects",
        "numeric-categorical",
        "text-categorical",
        "complex",
        "dict",
    ],
)
def test_values_that_are_not_numbers_are_refused(column: Any, words: tuple[str, ...]) -> None:
    _refused({"submit_time": [0, 1], "run_time": column}, "run_time", *words)


def test_numbers_with_none_nan_and_pd_na_read_as_unknown() -> None:
    w = Workload.from_arrays(
        {
            "run_time": [1, None, float("nan"), pd.NA, np.int64(7), 2.5],
            "user_id": pd.array([3, None, 4, None, 5, 6], dtype="Int64"),
            "requested_time": pd.array([1.5, None, 2, 3, 4, 5], dtype="Float64"),
            "requested_processors": pd.Series([1, 2, 3, 4, 5, 6], dtype="int64[pyarrow]"),
        }
    )
    cols = w.to_arrays()
    np.testing.assert_array_equal(cols["run_time"], [1, np.nan, np.nan, np.nan, 7, 2.5])
    np.testing.assert_array_equal(cols["user_id"], [3, np.nan, 4, np.nan, 5, 6])
    np.testing.assert_array_equal(cols["requested_time"], [1.5, np.nan, 2, 3, 4, 5])
    np.testing.assert_array_equal(cols["requested_processors"], [1, 2, 3, 4, 5, 6])
    assert all(cols[name].dtype == np.float64 for name in SWF_FIELDS)


# --------------------------------------------------------------------- shapes and names


def test_a_dataframe_is_taken_and_round_trips() -> None:
    w = _workload()
    w2 = Workload.from_arrays(w.to_pandas(), header=w.header)
    for name in SWF_FIELDS:
        assert np.array_equal(w2.to_arrays()[name], w.to_arrays()[name], equal_nan=True), name
    r1, r2 = schedlab.simulate(w), schedlab.simulate(w2)
    assert np.array_equal(r1.start, r2.start)
    assert w2.header is w.header


def test_the_documented_way_back_from_a_frame() -> None:
    # the example of docs/metrics.md ("Notebooks": the way back from a frame)
    w = _workload()
    df = w.to_pandas()
    long = df[df.run_time > 300].copy()
    long["requested_time"] = long["requested_time"].fillna(long["run_time"] * 2)
    w2 = schedlab.Workload.from_arrays(long, header=w.header)
    result = schedlab.simulate(w2, policy="sjf")
    assert len(w2) == int((df.run_time > 300).sum()) == 6
    assert np.isnan(w2.to_arrays()["requested_time"]).sum() == 0
    assert len(result.workload) == 6


def test_a_frame_with_other_columns_is_refused_naming_them() -> None:
    w = _workload()
    df = w.to_pandas()
    df["extra_col"] = 1
    message = _refused(df, "not SWF fields: extra_col", "SWF_FIELDS")
    assert "extras" in message
    result = schedlab.simulate(w).to_pandas()
    _refused(result, "start_time", "end_time")


def test_a_frame_with_a_column_twice_is_refused() -> None:
    df = pd.DataFrame([[1.0, 2.0]], columns=["run_time", "run_time"])
    _refused(df, "run_time", "twice")


def test_unknown_fields_are_a_usage_error_that_is_still_a_value_error() -> None:
    with pytest.raises(ValueError, match="not SWF fields: runtime"):
        Workload.from_arrays({"runtime": [1]})
    _refused({"runtime": [1], 3: [1]}, "not SWF fields: 3, runtime")


def test_columns_of_different_lengths_are_refused_naming_them() -> None:
    _refused(
        {"run_time": [1, 2], "submit_time": [0]},
        "different lengths",
        "run_time 2",
        "submit_time 1",
    )


@pytest.mark.parametrize(
    ("column", "words"),
    [
        ([[0, 1], [2, 3]], ("2-dimensional", "(2, 2)")),
        (5, ("one value",)),
        ([[0], [1, 2]], ("1-D",)),
    ],
    ids=["2-D", "scalar", "ragged"],
)
def test_columns_must_be_one_dimensional(column: Any, words: tuple[str, ...]) -> None:
    _refused({"submit_time": column, "run_time": [1, 2]}, "submit_time", *words)


@pytest.mark.parametrize("arrays", [[1, 2], "run_time", None], ids=["list", "str", "None"])
def test_arrays_of_another_kind_are_refused(arrays: Any) -> None:
    _refused(arrays, "from_arrays", "DataFrame")


def test_a_header_of_another_kind_is_refused() -> None:
    _refused({"run_time": [1]}, "header", header={"MaxProcs": 4})


# --------------------------------------------------------------------- extras


def test_extras_of_another_length_are_refused() -> None:
    arrays = {"submit_time": [0, 1, 2], "run_time": [1, 2, 3], "requested_processors": [1, 1, 1]}
    _refused(arrays, "extras", "1 entry", "3 jobs", extras=[{"a": 1}])
    _refused(JobColumns.empty(3), "extras", "4 entries", "3 jobs", extras=[{}] * 4)


def test_extras_entries_must_be_dicts() -> None:
    arrays = {"submit_time": [0, 1], "run_time": [1, 2]}
    _refused(arrays, "extras[0]", "str", extras=["x", 5])
    _refused(arrays, "extras", "list", extras={"a": [1, 2]})
    w = Workload.from_arrays(arrays, extras=[None, {"a": 1}])
    assert w.to_arrays().extras == [{}, {"a": 1}]
    assert w.to_pandas(extras=True)["a"].tolist() == [pd.NA, 1]


def test_columns_with_extras_given_twice_are_refused() -> None:
    cols = JobColumns.empty(2)
    cols.extras = [{"a": 1}, {}]
    _refused(cols, "extras", extras=[{}, {}])
    assert Workload.from_arrays(cols).to_arrays().extras == [{"a": 1}, {}]
    plain = JobColumns.empty(2)
    assert Workload.from_arrays(plain, extras=[{"b": 2}, {}]).to_arrays().extras == [{"b": 2}, {}]


def test_job_columns_are_checked_too() -> None:
    cols = JobColumns.empty(2)
    cols.data["run_time"] = np.array([True, False])
    _refused(cols, "run_time", "bool")
    good = JobColumns.empty(2)
    assert Workload.from_arrays(good).to_arrays() is good  # taken as it is, no copy


# --------------------------------------------------------------------- frames: extras dtype


@pytest.mark.parametrize(
    "values",
    [["a", float("nan")], ["a", pd.NA], [1.0, "x"], [True, 2]],
    ids=["str+nan", "str+pd.NA", "float+str", "bool+int"],
)
def test_mixed_extras_columns_stay_object_with_their_values(values: list[Any]) -> None:
    jobs = [Job(job_number=i + 1, run_time=1, extras={"k": v}) for i, v in enumerate(values)]
    column = Workload.from_jobs(jobs).to_pandas(extras=["k"])["k"]
    assert column.dtype == object
    assert column[0] == values[0]
    if values[1] is pd.NA:
        assert column[1] is pd.NA
    elif isinstance(values[1], float) and np.isnan(values[1]):
        assert np.isnan(column[1])
    else:
        assert column[1] == values[1]


def test_text_extras_with_none_stay_string_and_a_missing_key_is_object() -> None:
    jobs = [Job(job_number=1, extras={"k": "a"}), Job(job_number=2, extras={})]
    frame = Workload.from_jobs(jobs).to_pandas(extras=["k", "nobody"])
    assert str(frame["k"].dtype) == "string" and frame["k"].tolist() == ["a", pd.NA]
    assert frame["nobody"].dtype == object and frame["nobody"].isna().all()


def test_the_documented_datetimes_and_back() -> None:
    # docs/metrics.md: datetimes to look at, then seconds since the origin again
    w = _workload()
    df = w.to_pandas()
    origin = pd.Timestamp(w.header.unix_start_time, unit="s", tz="UTC")
    df["submit_time"] = origin + pd.to_timedelta(df["submit_time"], unit="s")
    assert str(df["submit_time"].iloc[1]) == "2001-09-09 01:46:50+00:00"
    with pytest.raises(UsageError, match="column submit_time holds datetimes"):
        schedlab.Workload.from_arrays(df, header=w.header)
    df["submit_time"] = (df["submit_time"] - origin).dt.total_seconds()
    w2 = schedlab.Workload.from_arrays(df, header=w.header)
    assert np.array_equal(w2.to_arrays()["submit_time"], w.to_arrays()["submit_time"])


def test_a_result_frame_goes_back_through_its_swf_columns() -> None:
    w = _workload()
    frame = schedlab.simulate(w).to_pandas()
    w2 = schedlab.Workload.from_arrays(frame[list(schedlab.SWF_FIELDS)], header=w.header)
    assert len(w2) == len(frame)
    np.testing.assert_array_equal(w2.to_arrays()["wait_time"], frame["wait_time"].to_numpy())
