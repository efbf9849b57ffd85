"""pandas, Arrow and notebook views of Workload, Result and MetricsReport, on real
traces; the public names users touch; errors for names a report does not hold."""

from __future__ import annotations

import builtins
import math
import re
from html.parser import HTMLParser

import numpy as np
import pytest
import schedlab
from schedlab.measure import compute_metrics
from schedlab.model import SWF_FIELDS

pytestmark = pytest.mark.realdata
pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")


@pytest.fixture(scope="module")
def hpc2n(swf_dir):
    return schedlab.read(swf_dir / "HPC2N-2002_excerpt-3170jobs_alea.swf")


@pytest.fixture(scope="module")
def result(hpc2n):
    return schedlab.simulate(hpc2n, policy="fcfs", backfill="easy")


def test_public_names():
    from schedlab.measure import MetricsReport
    from schedlab.sim.protocols import JobTable
    from schedlab.sim.result import Result

    assert schedlab.Result is Result
    assert schedlab.MetricsReport is MetricsReport
    assert schedlab.JobTable is JobTable
    assert {"Result", "MetricsReport", "JobTable", "StatisticSpec"} <= set(schedlab.__all__)


# --------------------------------------------------------------------------- pandas


def test_workload_to_pandas_round_trips_every_value(hpc2n):
    frame = hpc2n.to_pandas()
    columns = hpc2n.to_arrays()
    assert list(frame.columns) == list(SWF_FIELDS)
    assert len(frame) == len(hpc2n) == 3170
    for name in SWF_FIELDS:
        expected = columns[name]
        got = frame[name].astype("float64").to_numpy(na_value=np.nan)
        assert np.array_equal(got, expected, equal_nan=True), name
    # Ids are integers, unknown stays unknown (<NA>), never -1 or a float.
    assert frame["user_id"].dtype == "Int64"
    assert frame["job_number"].dtype == "Int64"
    assert frame["submit_time"].dtype == "float64"
    assert frame["preceding_job_number"].isna().all()


def test_result_to_pandas_has_the_simulation_columns(result):
    frame = result.to_pandas()
    assert len(frame) == len(result)
    tail = ["start_time", "end_time", "estimate", "killed", "input_row", "original_submit"]
    tail.append("estimate_fell_back")
    assert list(frame.columns) == [*SWF_FIELDS, *tail]
    assert np.array_equal(frame["start_time"].to_numpy(), result.start)
    assert frame["killed"].dtype == bool
    assert (frame["start_time"] - frame["submit_time"] == frame["wait_time"]).all()


def test_report_to_pandas_wide_and_tidy(result):
    report = compute_metrics(result, by="user", stats="mean,p95")
    wide = report.to_pandas()
    assert wide.index.name == "user"
    assert list(wide.index) == [r["group"] for r in report.rows]
    assert isinstance(wide.index[0], int)  # user ids stay numbers
    assert wide.loc["all", "wait.p95"] == pytest.approx(report.value("wait", "p95"))
    assert wide.loc[wide.index[0], "utilization"] == report.value(
        "utilization", group=wide.index[0]
    )
    assert wide["wait.count"].dtype == "Int64"
    assert wide.loc["all", "loss-of-capacity"] == pytest.approx(report.value("loss-of-capacity"))
    assert math.isnan(wide.loc[wide.index[0], "loss-of-capacity"])  # whole-schedule only
    tidy = report.to_pandas(tidy=True)
    assert list(tidy.columns) == ["group", "metric", "statistic", "value", "unit"]
    one = tidy[(tidy.group == "all") & (tidy.metric == "wait") & (tidy.statistic == "mean")]
    assert one["value"].item() == pytest.approx(report.value("wait"))
    assert set(tidy.statistic) >= {"mean", "p95", "count", "unknown", "value"}


def test_missing_pandas_names_the_extra(hpc2n, monkeypatch):
    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("No module named 'pandas'")
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ImportError("No module named 'pyarrow'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(schedlab.UsageError, match=re.escape("pip install 'schedlab[pandas]'")):
        hpc2n.to_pandas()
    with pytest.raises(schedlab.UsageError, match=re.escape("'schedlab[parquet]'")):
        hpc2n.to_arrow()


# --------------------------------------------------------------------------- Arrow


def test_arrow_tables_use_nulls_for_unknown(hpc2n, result):
    table = hpc2n.to_arrow()
    assert table.num_rows == 3170
    assert table.schema.field("user_id").type == pa.int64()
    assert table.schema.field("run_time").type == pa.float64()
    assert table.column("preceding_job_number").null_count == 3170
    assert table.column("submit_time").to_pylist() == hpc2n.to_arrays()["submit_time"].tolist()
    schedule = result.to_arrow()
    assert schedule.column("killed").type == pa.bool_()
    report = compute_metrics(result, by="queue").to_arrow()
    assert report.column("queue").to_pylist()[-1] == "all"
    assert report.schema.field("wait.mean").type == pa.float64()


# --------------------------------------------------------------------------- HTML


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows = 0
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows += 1

    def handle_data(self, data):
        self.text.append(data)


def _parse(markup: str) -> _Cells:
    parser = _Cells()
    parser.feed(markup)
    return parser


def test_html_is_small_for_a_big_workload(swf_dir):
    kth = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    markup = kth._repr_html_()
    parsed = _parse(markup)
    assert parsed.rows == 1 + 10  # header + head rows
    assert len(markup) < 5000
    text = " ".join(parsed.text)
    assert "28,476 jobs" in text and "28,466 more jobs" in text


def test_html_escapes_names(hpc2n):
    header = hpc2n.header.copy()
    header.set_names("User", {1: "<script>alert(1)</script>"})
    workload = schedlab.Workload.from_arrays(hpc2n.to_arrays(), header)
    report = compute_metrics(workload, names=["wait"], by="user")
    markup = report._repr_html_()
    assert "<script>" not in markup
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in markup


def test_result_and_report_html(result):
    parsed = _parse(result._repr_html_())
    text = " ".join(parsed.text)
    assert "fcfs+easy" in text and "3,145 jobs simulated" in text and "25 excluded" in text
    assert parsed.rows == 11
    report = compute_metrics(result, by="user")
    parsed = _parse(report._repr_html_())
    groups = len(report.rows) - 1
    assert parsed.rows <= 1 + 20 + 1 + 1 + 6  # grouped head + all, system metrics
    text = " ".join(parsed.text)
    if groups > 20:
        assert f"{groups - 20:,} more groups" in text
    assert "loss-of-capacity" in text


# --------------------------------------------------------------------------- errors


def test_unknown_names_raise_listing_the_valid_ones(result):
    report = compute_metrics(result, names=["wait", "utilization"])
    with pytest.raises(KeyError, match=r"no metric 'wiat' in the report \(metrics: wait"):
        report.value("wiat")
    with pytest.raises(schedlab.UsageError, match=r"no statistic 'p95' of wait.*mean, median"):
        report.value("wait", "p95")
    with pytest.raises(KeyError, match="one value, no statistic 'p99'"):
        report.value("utilization", "p99")
    with pytest.raises(KeyError, match="no group 'nobody'"):
        report.value("wait", group="nobody")
    assert report.value("utilization", "mean") == report.value("utilization")
    # The message reads as one line (not the quoted repr KeyError usually prints).
    try:
        report.value("wiat")
    except KeyError as exc:
        assert str(exc).startswith("no metric")


def test_html_of_a_streaming_workload_reads_one_chunk_only():
    from schedlab.model import Header, JobColumns, Workload

    chunk = JobColumns.empty(30)
    chunk.data["job_number"][:] = np.arange(1, 31)
    produced = []

    def chunks():
        for i in range(1000):
            produced.append(i)
            yield chunk

    workload = Workload.streaming(Header(), chunks)
    parsed = _parse(workload._repr_html_())
    assert produced == [0] and workload.is_streaming  # nothing else was read
    assert parsed.rows == 11 and "not counted" in " ".join(parsed.text)
