"""The generic consistency checks of schedlab.validation, on hand-made columns with
known answers, and on SWF text where every finding has a line number."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import schedlab
from schedlab.model import SWF_FIELDS, Header, JobColumns, Workload
from schedlab.validation import (
    ColumnChecker,
    Finding,
    check_columns,
    check_workload,
    count_by_severity,
    failing,
)

NAN = np.nan


def columns(**fields: list[float]) -> JobColumns:
    n = len(next(iter(fields.values())))
    cols = JobColumns.empty(n)
    for name, values in fields.items():
        cols.data[name] = np.array(values, dtype=np.float64)
    return cols


def test_each_rule_once() -> None:
    header = Header()
    header.set("MaxProcs", 8)
    header.set("MaxJobs", 9)
    cols = columns(
        job_number=[1, 2, 2, 4],
        submit_time=[0, 10, 5, NAN],
        run_time=[5, -3, 1, 1],
        allocated_processors=[8, 9, 1, 1],
        status=[1, 1, 7, NAN],
        preceding_job_number=[NAN, 1, 4, 77],
    )
    findings = check_columns(cols, header, lines=np.array([10, 11, 12, 13]))
    got = sorted((f.line, f.check, f.field, f.severity) for f in findings if f.line)
    assert got == [
        (11, "exceeds-machine", "allocated_processors", "error"),
        (11, "negative-value", "run_time", "error"),
        (12, "duplicate-job", "job_number", "error"),
        (12, "later-preceding-job", "preceding_job_number", "warning"),
        (12, "unknown-status", "status", "warning"),
        (12, "unsorted-submit", "submit_time", "error"),
        (13, "unknown-preceding-job", "preceding_job_number", "warning"),
    ]
    [count] = [f for f in findings if f.check == "header-count"]
    assert "MaxJobs: 9" in count.message and "4 jobs" in count.message
    dup = next(f for f in findings if f.check == "duplicate-job")
    assert "line 11" in dup.message


def test_clean_columns_have_no_findings() -> None:
    cols = columns(job_number=[1, 2, 3], submit_time=[0, 0, 4], run_time=[1, NAN, 0])
    assert check_columns(cols) == []


def test_chunked_feed_equals_one_feed() -> None:
    rng = np.random.default_rng(5)
    n = 500
    cols = columns(
        job_number=rng.integers(1, 400, n).astype(float),
        submit_time=np.sort(rng.integers(0, 1000, n)).astype(float)[::-1],
        allocated_processors=rng.integers(-2, 20, n).astype(float),
    )
    lines = np.arange(n) + 1
    whole = check_columns(cols, lines=lines)
    checker = ColumnChecker()
    parts = []
    for start in range(0, n, 77):
        idx = np.arange(start, min(start + 77, n))
        parts += checker.feed(cols.take(idx), lines[idx])
    parts += checker.finish()
    assert sorted(map(repr, parts)) == sorted(map(repr, whole))
    assert len(whole) > 100


def test_severity_helpers_and_render() -> None:
    findings = [
        Finding(3, "run_time", "bad", "error", "negative-value", 7),
        Finding(None, None, "odd", "warning", "header-count"),
        Finding(None, "status", "x", "info", "c", job=5),
    ]
    assert count_by_severity(findings) == {"error": 1, "warning": 1, "info": 1}
    assert failing(findings) == findings[:1]
    assert failing(findings, strict=True) == findings[:2]
    assert findings[0].render("t.swf") == (
        "t.swf:3: error: field 4 (run_time): bad [negative-value]"
    )
    assert findings[2].render("t.json") == "t.json: job 5: info: field 11 (status): x [c]"


def test_check_workload_for_a_non_swf_workload() -> None:
    workload = Workload.from_arrays({"job_number": [1, 1], "submit_time": [5, 4]})
    checks = sorted(f.check for f in check_workload(workload))
    assert checks == ["duplicate-job", "unsorted-submit"]


def test_swf_reader_runs_the_checks_once(tmp_path: Path) -> None:
    path = tmp_path / "t.swf"
    path.write_text(
        "1 5 0 1 1 -1 -1 1 1 -1 1 1 1 -1 -1 -1 -1 -1\n1 4 0 1 1 -1 -1 1 1 -1 1 1 1 -1 -1 -1 -1 -1\n"
    )
    workload = schedlab.read(path)
    findings = check_workload(workload)
    assert sorted((f.line, f.check) for f in findings) == [
        (2, "duplicate-job"),
        (2, "unsorted-submit"),
    ]


def test_the_chunk_checker_keeps_no_view_of_a_chunk() -> None:
    """A streamed trace is checked one chunk at a time: what the checker keeps for
    the whole-workload rules (job numbers, lines, preceding jobs) must not hold a
    chunk's value matrix alive (its columns are views of it)."""
    import gc
    import weakref

    checker = ColumnChecker()
    matrix = np.ones((1000, 18))
    matrix[:, 0] = np.arange(1, 1001)
    lines = np.arange(1, 1001)
    chunk = JobColumns.empty(1000)
    for i, name in enumerate(SWF_FIELDS):  # views of the matrix, as a streamed chunk's
        chunk.data[name] = matrix[:, i]
    checker.feed(chunk, lines)
    del chunk
    alive = weakref.ref(matrix)
    del matrix, lines
    gc.collect()
    assert alive() is None
