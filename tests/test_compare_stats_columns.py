"""``compare`` shows the statistics the metric option ``stats`` asks for: one column
per statistic for each per-job metric (``-M stats=p95,mean`` showed only the mean,
``-M stats=p95`` no wait column at all); without ``stats`` the usual columns."""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from rich.console import Console
from schedlab.comparison import compare_policies
from schedlab.measure import format_number

HPC2N = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "swf"
HPC2N = HPC2N / "HPC2N-2002_excerpt-3170jobs_alea.swf"

pytestmark = pytest.mark.realdata


def _headers(comparison: schedlab.comparison.Comparison) -> list[str]:
    table = comparison.table(timing=False)
    return [str(c.header) for c in table.columns]


@pytest.fixture(scope="module")
def workload() -> schedlab.Workload:
    w = schedlab.read(HPC2N)
    return schedlab.Workload(w.header, columns=w.to_arrays().take(range(300)))


def test_default_columns(workload: schedlab.Workload) -> None:
    c = compare_policies(workload, "fcfs,sjf", names=["wait"])
    assert _headers(c)[4:] == ["wait mean (s)", "wait p90 (s)", "wait max (s)"]


def test_each_statistic_asked_for_has_a_column_in_its_order(workload: schedlab.Workload) -> None:
    c = compare_policies(
        workload, "fcfs,sjf", names=["wait", "response"], metric_options={"stats": "p95,mean"}
    )
    assert _headers(c)[4:] == [
        "wait p95 (s)",
        "wait mean (s)",
        "response p95 (s)",
        "response mean (s)",
    ]
    text = Console(width=200, record=True)
    text.print(c.table(timing=False))
    p95 = c.rows[0].value("wait", "p95")
    assert p95 is not None and p95 > c.rows[0].value("wait", "mean")
    assert format_number(p95) in text.export_text()


def test_a_statistic_outside_the_usual_columns_alone(workload: schedlab.Workload) -> None:
    c = compare_policies(workload, "fcfs", metric_options={"stats": "p95"})
    headers = _headers(c)
    assert "wait p95 (s)" in headers and "bsld p95" in headers
    assert not any(h.startswith("wait mean") for h in headers)
