"""The SWF reader: real-data edge cases, errors naming file/line/field, lenient
mode, checkpoint records, streaming, compression, sniffing."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab.errors import FormatError
from schedlab.formats.swf.reader import read_swf, sniff_swf

HEADER = "; Version: 2.2\n; MaxJobs: 3\n; MaxRecords: 3\n; MaxProcs: 64\n"
JOBS = (
    "1 0 5 100 4 1.5 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n"
    "2 10 0 50 2 -1 -1 2 60 -1 0 2 1 -1 -1 -1 -1 -1\n"
    "3 20 1 7 8 -1 -1 8 60 -1 5 2 1 -1 -1 -1 1 30\n"
)


def write(tmp_path: Path, text: str, name: str = "t.swf") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --------------------------------------------------------------------- real data


@pytest.mark.realdata
def test_header_without_version(swf_dir: Path) -> None:
    w = schedlab.read(swf_dir / "RICC-2010-2.swf.gz")
    assert w.header.version is None
    assert w.header.computer == "Fujitsu RX200S5 Cluster"
    assert (w.header.max_procs, w.header.max_nodes, w.header.max_jobs) == (8192, 1024, 447794)
    # queue names with trailing blanks: "1" has an empty name, "2" is named "0"
    assert w.header.names("Queue") == {1: "", 2: "0"}
    assert w.header.names("Partition") == {1: ""}
    assert w.meta["findings"] == []


@pytest.mark.realdata
def test_queue_table_and_continuations(swf_dir: Path) -> None:
    w = schedlab.read(swf_dir / "LANL-CM5-1994-4.1-cln.swf.gz")
    queues = w.header.names("Queue")
    assert len(queues) == 18 and queues[6] == "0" and queues[13] == "development~"
    assert w.header.information == (
        "http://www.lanl.gov/\nhttp://www.cs.huji.ac.il/labs/parallel/workload/"
    )
    assert w.header.notes[-1].startswith("THIS IS A CLEANED VERSION OF THE LOG!\n")
    assert "(34307 jobs removed)" in w.header.notes[-1]


@pytest.mark.realdata
def test_free_text_comment_inside_header(swf_dir: Path) -> None:
    w = schedlab.read(swf_dir / "LCG-2005-1.swf.gz")
    assert len(w.header.partitions) == 170
    legend = w.header.entries[-1]
    assert legend.label is None and legend.value.startswith("#       sub")
    assert w.header.names("Partition")[170] == "lcg-lrz-ce.lrz-muenchen.de"


@pytest.mark.realdata
def test_whitespace_only_last_line_and_fractional_cpu(swf_dir: Path) -> None:
    w = schedlab.read(swf_dir / "HPC2N-2002_excerpt-3170jobs_alea.swf")
    assert len(w) == 3170
    blank = [f for f in w.meta["findings"] if f.check == "blank-line"]
    assert [(f.line, f.severity) for f in blank] == [(3194, "info")]
    cols = w.to_arrays()
    assert cols["average_cpu_time"][-1] == 129.02
    # whole columns of -1 are NaN
    for field in ("executable_number", "queue_number", "preceding_job_number", "think_time"):
        assert np.isnan(cols[field]).all()


@pytest.mark.realdata
def test_wagap_strict_is_rejected_with_file_line_and_count(swf_dir: Path) -> None:
    path = swf_dir / "wagap-2013_alea-extended.swf"
    with pytest.raises(FormatError) as info:
        schedlab.read(path)
    message = str(info.value)
    assert message.startswith(f"{path}:1: found 21 fields, expected 18")
    assert "\n" not in message


@pytest.mark.realdata
def test_wagap_lenient_keeps_extras_and_reports_negative_runs(swf_dir: Path) -> None:
    w = schedlab.read(swf_dir / "wagap-2013_alea-extended.swf", lenient=True)
    cols = w.to_arrays()
    assert len(cols) == 17900 and w.meta["skipped"] == 0
    assert cols.extras[0]["swf_extra_columns"][1:] == ["q_1d", "1:ppn=64:x86_64:cl_zewura#excl"]
    assert all(len(e["swf_extra_columns"]) == 3 for e in cols.extras)
    negative = [f for f in w.meta["findings"] if f.check == "negative-value"]
    assert [(f.line, f.field, f.severity) for f in negative] == [
        (4186, "run_time", "error"),
        (4200, "run_time", "error"),
    ]
    assert cols["run_time"][4185] == -1359980917


@pytest.mark.realdata
def test_cleaned_log_counts_are_warnings(swf_dir: Path) -> None:
    w = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    [finding] = w.meta["findings"]
    assert (finding.line, finding.check, finding.severity) == (8, "header-count", "warning")
    assert "MaxJobs: 28490" in finding.message and "28476 jobs" in finding.message


@pytest.mark.realdata
def test_two_process_parse_equals_one(swf_dir: Path) -> None:
    path = swf_dir / "LANL-CM5-1994-4.1-cln.swf.gz"
    one = read_swf(path, workers=1).to_arrays().to_matrix()
    two = read_swf(path, workers=2).to_arrays().to_matrix()
    np.testing.assert_array_equal(one, two)


@pytest.mark.realdata
def test_streaming_equals_whole_file(swf_dir: Path, tmp_path: Path) -> None:
    path = swf_dir / "HPC2N-2002_excerpt-3170jobs_alea.swf"
    whole = read_swf(path)
    streamed = read_swf(path, stream=True, chunk_bytes=20000)
    assert streamed.is_streaming
    chunks = list(streamed.iter_column_chunks())
    assert len(chunks) > 5
    np.testing.assert_array_equal(
        schedlab.JobColumns.concatenate(chunks).to_matrix(), whole.to_arrays().to_matrix()
    )
    assert [f.render() for f in streamed.meta["findings"]] == [
        f.render() for f in whole.meta["findings"]
    ]
    schedlab.write(streamed, tmp_path / "a.swf")
    schedlab.write(whole, tmp_path / "b.swf")
    assert (tmp_path / "a.swf").read_bytes() == (tmp_path / "b.swf").read_bytes()


# --------------------------------------------------------------------- synthetic


def test_values_unknowns_and_header(tmp_path: Path) -> None:
    w = schedlab.read(write(tmp_path, HEADER + JOBS))
    cols = w.to_arrays()
    assert cols["job_number"].tolist() == [1, 2, 3]
    assert cols["average_cpu_time"][0] == 1.5
    assert np.isnan(cols["used_memory"]).all()
    assert w.jobs[2].preceding_job_number == 1 and w.jobs[2].think_time == 30
    assert w.jobs[0].used_memory is None
    assert w.header.max_procs == 64
    assert w.meta["findings"] == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "2 10 0 abc 2 -1 -1 2 60 -1 0 2 1 -1 -1 -1 -1 -1",
            "field 4 (run_time): expected a number, got 'abc'",
        ),
        ("2 10 0 50 2 -1 -1 2 60 -1 0 2 1 -1 -1 -1 -1", "found 17 fields, expected 18"),
        (
            "2 10 0 nan 2 -1 -1 2 60 -1 0 2 1 -1 -1 -1 -1 -1",
            "field 4 (run_time): expected a number",
        ),
        ("2 10 0 50 2 -1 -1 2 60 -1 0 2 1_0 -1 -1 -1 -1 -1", "field 13 (group_id)"),
    ],
)
def test_strict_errors_name_file_line_field(tmp_path: Path, line: str, expected: str) -> None:
    path = write(tmp_path, HEADER + JOBS.splitlines()[0] + "\n" + line + "\n")
    with pytest.raises(FormatError) as info:
        schedlab.read(path)
    assert str(info.value) == f"{path}:6: {expected}" or str(info.value).startswith(
        f"{path}:6: {expected}"
    )


def test_lenient_skips_counts_and_lists_rejects(tmp_path: Path) -> None:
    bad = "9 10 0 x 2 -1 -1 2 60 -1 0 2 1 -1 -1 -1 -1 -1"
    path = write(tmp_path, HEADER + JOBS + bad + "\n")
    w = schedlab.read(path, lenient=True)
    assert len(w) == 3
    assert w.meta["skipped"] == 1 and w.meta["rejects"] == [(8, bad)]
    [finding] = [f for f in w.meta["findings"] if f.check == "bad-record"]
    assert (finding.line, finding.field, finding.severity) == (8, "run_time", "error")


def test_blank_and_comment_lines_in_the_body_keep_line_numbers(tmp_path: Path) -> None:
    lines = JOBS.splitlines()
    text = (
        HEADER
        + lines[0]
        + "\n\n; late\n"
        + lines[1]
        + "\n"
        + lines[2].replace(" 8 ", " 99 ", 1)
        + "\n"
    )
    path = write(tmp_path, text)
    w = schedlab.read(path)
    got = {(f.line, f.check) for f in w.meta["findings"]}
    assert got == {(6, "blank-line"), (7, "late-comment"), (9, "exceeds-machine")}
    out = tmp_path / "out.swf"
    schedlab.write(w, out)
    assert out.read_text().splitlines()[5] == "; late"  # kept before its job


def test_checkpoint_records_grouped_with_their_job(tmp_path: Path) -> None:
    text = (
        "; MaxJobs: 2\n; MaxRecords: 4\n"
        "1 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n"
        "1 -1 5 60 4 -1 -1 4 200 -1 2 1 1 -1 -1 -1 -1 -1\n"
        "1 -1 9 40 4 -1 -1 4 200 -1 3 1 1 -1 -1 -1 -1 -1\n"
        "2 3 0 10 1 -1 -1 1 20 -1 0 2 1 -1 -1 -1 -1 -1\n"
    )
    path = write(tmp_path, text)
    w = schedlab.read(path)
    cols = w.to_arrays()
    assert cols["job_number"].tolist() == [1, 2]
    parts = cols.extras[0]["swf_parts"]
    assert [p[10] for p in parts] == [2, 3] and parts[1][2] == 9 and parts[0][1] is None
    assert w.meta["findings"] == [] and w.meta["partial_records"] == 2
    out = tmp_path / "out.swf"
    schedlab.write(w, out)
    assert [line.split() for line in out.read_text().splitlines()] == [
        line.split() for line in text.splitlines()
    ]
    summary = schedlab.read(path, summary_only=True)
    assert len(summary) == 2 and summary.to_arrays().extras is None
    assert summary.meta["dropped_partial_records"] == 2


def test_partial_records_without_summary_stay_rows(tmp_path: Path) -> None:
    text = (
        "1 0 5 60 4 -1 -1 4 200 -1 2 1 1 -1 -1 -1 -1 -1\n"
        "1 -1 9 40 4 -1 -1 4 200 -1 3 1 1 -1 -1 -1 -1 -1\n"
    )
    w = schedlab.read(write(tmp_path, text))
    assert len(w) == 2
    checks = [f.check for f in w.meta["findings"]]
    assert checks == ["partial-without-summary"]  # and no duplicate-job finding
    assert len(schedlab.read(write(tmp_path, text), summary_only=True)) == 1  # a summary row


@pytest.mark.parametrize(
    ("suffix", "opener"), [(".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open)]
)
def test_compressed_input_and_output(tmp_path: Path, suffix: str, opener) -> None:
    source = tmp_path / f"in.swf{suffix}"
    with opener(source, "wt") as fh:
        fh.write(HEADER + JOBS)
    w = schedlab.read(source)
    assert len(w) == 3
    out = tmp_path / f"out.swf{suffix}"
    schedlab.write(w, out)
    with opener(out, "rt") as fh:
        text = fh.read()
    assert text.startswith(HEADER)
    schedlab.write(w, tmp_path / "again" / f"out.swf{suffix}")
    assert (tmp_path / "again" / f"out.swf{suffix}").read_bytes() == out.read_bytes()


def test_open_file_object() -> None:
    w = read_swf(io.BytesIO((HEADER + JOBS).encode()))
    assert len(w) == 3 and w.header.max_jobs == 3


def test_sniffing() -> None:
    assert sniff_swf(b"; Version: 2.2\n; Computer: x\n", "a")
    assert sniff_swf(JOBS.encode(), "a")
    assert sniff_swf(b"; Computer: x\n" + JOBS.encode(), "a")
    assert not sniff_swf(b"# comment\n1,2,3\n", "a")
    assert not sniff_swf(b"; just a comment\n1 2 3\n", "a")
    assert not sniff_swf(b'{"job": 1}\n', "a")


def test_detected_by_content_without_suffix(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + JOBS, name="trace.log")
    assert schedlab.read(path).meta["reader"] == "swf"


def test_header_only_file(tmp_path: Path) -> None:
    w = schedlab.read(write(tmp_path, "; Version: 2.2\n;\n"))
    assert len(w) == 0 and len(w.header.entries) == 2
