"""Fixes of the second fuzzing audit (findings 3, 4, 6 and 12): the Batsim writer
wrote a fractional SWF job number as ``"id": 2.5`` (which its own reader refuses)
and truncated a fractional processor count without a report; SWF header
directives and table entries given twice with different values passed
``validate --strict``; a think time without a preceding job and a queue or
partition number missing from a declared table produced no finding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import schedlab
from schedlab.errors import FormatError
from schedlab.formats.swf.reader import read_swf
from schedlab.model import Header, HeaderEntry, Job, Workload
from schedlab.testing import run_cli as run


def swf_job(number: str, requested: str = "4", allocated: str = "4", **more: str) -> str:
    """One SWF line: job ``number`` submitted at 0, ``allocated`` processors,
    ``requested`` requested; ``more`` overrides queue, partition, preceding, think."""
    fields = [number, "0", "5", "100", allocated, "90", "1000", requested]
    fields += ["200", "2000", "1", "1", "1", "1"]
    fields += [more.get("queue", "1"), more.get("partition", "1")]
    fields += [more.get("preceding", "-1"), more.get("think", "-1")]
    return " ".join(fields) + "\n"


def to_batsim(tmp_path: Path, text: str) -> tuple[dict[str, Any], list[tuple[str, int, str]]]:
    """Write the SWF ``text`` as a Batsim workload: the JSON and the losses."""
    source = tmp_path / "in.swf"
    source.write_text(text)
    out = tmp_path / "out.json"
    with schedlab.collect_losses() as losses:
        schedlab.write(schedlab.read(source), out)
    return json.loads(out.read_text()), [(x.field, x.records, x.action) for x in losses]


# ------------------------------------------------------------ 3: Batsim job ids


def test_a_fractional_job_number_is_written_as_a_fresh_integer_id_and_reported(
    tmp_path: Path,
) -> None:
    doc, losses = to_batsim(tmp_path, "; MaxProcs: 64\n" + swf_job("1") + swf_job("2.5"))
    ids = [job["id"] for job in doc["jobs"]]
    assert ids == [1, 3]  # above the highest integer number
    assert [x for x in losses if x[0] == "job_number"] == [
        (
            "job_number",
            1,
            "not an integer (a Batsim id is an integer or text), "
            "written as a fresh number no other job has",
        )
    ]
    back = schedlab.read(tmp_path / "out.json")  # the reader takes the file
    assert [j.job_number for j in back.jobs] == [1, 3]


def test_an_integral_float_job_number_is_written_as_that_integer(tmp_path: Path) -> None:
    workload = Workload.from_jobs(
        [Job(job_number=7.0, submit_time=0, run_time=5, requested_processors=1)]  # type: ignore[arg-type]
    )
    out = tmp_path / "out.json"
    with schedlab.collect_losses() as losses:
        schedlab.write(workload, out)
    assert json.loads(out.read_text())["jobs"][0]["id"] == 7
    assert losses.count("job_number") == 0


# ------------------------------------------------- 4: Batsim requested processors


def test_a_fractional_processor_count_is_rounded_down_and_reported(tmp_path: Path) -> None:
    doc, losses = to_batsim(tmp_path, "; MaxProcs: 64\n" + swf_job("2", "2.5", "3"))
    assert doc["jobs"][0]["res"] == 2
    assert ("requested_processors", 1, "not an integer, rounded down to whole resources") in losses


@pytest.mark.parametrize(
    ("requested", "allocated", "res", "action"),
    [
        ("0.5", "3", 3, "below 1, written as the allocated count (Batsim requires res >= 1)"),
        ("0.5", "-1", 1, "below 1, written as 1 (Batsim requires res >= 1)"),
        ("0", "3", 3, "0, written as the allocated count (Batsim requires res >= 1)"),
        ("-1", "3", 3, "unknown, written as the allocated count (Batsim requires res >= 1)"),
        ("-1", "-1", 1, "unknown, written as 1 (Batsim requires res >= 1)"),
        (
            "-1",
            "2.5",
            2,
            "unknown, written as the allocated count rounded down to whole resources "
            "(Batsim requires res >= 1)",
        ),
    ],
)
def test_a_processor_count_below_one_says_what_it_was_and_what_was_written(
    tmp_path: Path, requested: str, allocated: str, res: int, action: str
) -> None:
    doc, losses = to_batsim(tmp_path, "; MaxProcs: 64\n" + swf_job("1", requested, allocated))
    assert doc["jobs"][0]["res"] == res
    assert [x for x in losses if x[0] == "requested_processors"] == [
        ("requested_processors", 1, action)
    ]


def test_a_whole_processor_count_is_written_without_a_loss(tmp_path: Path) -> None:
    doc, losses = to_batsim(tmp_path, "; MaxProcs: 64\n" + swf_job("1", "4", "4"))
    assert doc["jobs"][0]["res"] == 4
    assert not [x for x in losses if x[0] == "requested_processors"]


# ------------------------------------------------------ 6: SWF header conflicts

HEAD = "; Version: 2.2\n; MaxProcs: 64\n"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            "; Queue: 1 batch\n; Queue: 1 other\n",
            "header Queue: '1 other' here but '1 batch' on line 3",
        ),
        ("; User: 1 alice\n; User: 1 bob\n", "header User: '1 bob' here but '1 alice' on line 3"),
        (
            "; TimeZoneString: Europe/Stockholm\n; TimeZoneString: America/New_York\n",
            "header TimeZoneString: 'America/New_York' here but 'Europe/Stockholm' on line 3",
        ),
        (
            "; Preemption: Yes\n; Preemption: No\n",
            "header Preemption: 'No' here but 'Yes' on line 3",
        ),
        ("; MaxNodes: 64\n; MaxNodes: 32\n", "header MaxNodes: '32' here but '64' on line 3"),
    ],
)
def test_a_directive_given_twice_with_different_values_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, lines: str, message: str
) -> None:
    path = tmp_path / "h.swf"
    path.write_text(HEAD + lines + swf_job("1"))
    with pytest.raises(FormatError) as caught:
        read_swf(path)
    assert (caught.value.line, caught.value.message) == (4, message)
    lenient = read_swf(path, lenient=True)
    found = [(f.line, f.check, f.severity) for f in lenient.meta["findings"]]
    assert (4, "header-value", "error") in found
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 1 and message in out


@pytest.mark.parametrize(
    "lines",
    [
        "; Queue: 1 batch\n; Queue: 1 batch\n",
        "; MaxProcs: 64\n",  # the same value as line 2
        "; MaxProcs: 064\n",  # the same integer
        "; MaxProcs: +64 (all)\n",
        "; TimeZoneString: Europe/Paris\n; TimeZoneString: Europe/Paris\n",
        "; Note: one\n; Note: two\n",  # free text repeats
        "; Information: one\n; Information: two\n",
        "; Queue: 1 batch\n; Queue: 2 other\n",
    ],
)
def test_the_same_value_twice_and_repeated_free_text_are_accepted(
    tmp_path: Path, lines: str
) -> None:
    path = tmp_path / "h.swf"
    path.write_text(HEAD + lines + swf_job("1"))
    workload = read_swf(path)
    assert not [f for f in workload.meta["findings"] if f.check == "header-value"]


def test_a_signed_value_is_the_same_integer_as_the_unsigned_one(tmp_path: Path) -> None:
    """A sign is allowed, as in a record's fields (``+1``): ``MaxProcs: 64`` then
    ``MaxProcs: +64`` agree (they were refused as different before)."""
    path = tmp_path / "h.swf"
    path.write_text("; MaxProcs: 64\n; MaxProcs: +64\n" + swf_job("1"))
    workload = read_swf(path)
    assert workload.header.max_procs == 64 and not workload.meta["findings"]
    path.write_text("; MaxProcs: 64\n; MaxProcs: +32\n" + swf_job("1"))
    with pytest.raises(FormatError) as caught:
        read_swf(path)
    assert (caught.value.line, caught.value.message) == (
        2,
        "header MaxProcs: '+32' here but '64' on line 1",
    )


def test_negative_numeric_values_keep_their_sign(tmp_path: Path) -> None:
    path = tmp_path / "h.swf"
    path.write_text("; TimeZone: -28800\n; MaxProcs: -1\n" + swf_job("1"))
    workload = read_swf(path)
    assert workload.header.time_zone == -28800


def test_sss_header_extension_gets_the_same_conflict_rule() -> None:
    from schedlab.formats.sss.values import header_value_problems

    problems = header_value_problems(
        [{"label": "Queue", "value": "1 batch"}, {"label": "Queue", "value": "1 other"}]
    )
    assert problems == [(2, "Queue", "'1 other' here but '1 batch' in entry 1")]


def test_the_header_model_reports_the_first_of_two_names() -> None:
    header = Header([HeaderEntry("Queue", "1 batch"), HeaderEntry("Queue", "1 other")])
    assert header.names("Queue") == {1: "batch"}


# --------------------------------------------- 12: think time, queue, partition


def findings_of(tmp_path: Path, text: str) -> list[tuple[int | None, str, str, str | None]]:
    path = tmp_path / "v.swf"
    path.write_text(text)
    workload = read_swf(path)
    return [(f.line, f.check, f.severity, f.field) for f in workload.meta["findings"]]


def test_a_think_time_without_a_preceding_job_is_a_warning(tmp_path: Path) -> None:
    found = findings_of(tmp_path, swf_job("1", think="50") + swf_job("2", preceding="1", think="5"))
    assert found == [(1, "think-without-preceding", "warning", "think_time")]


def test_queue_and_partition_numbers_missing_from_a_declared_table_are_warnings(
    tmp_path: Path,
) -> None:
    text = "; MaxProcs: 64\n; Queue: 1 batch\n; Partition: 1 main\n"
    text += swf_job("1") + swf_job("2", queue="7", partition="9") + swf_job("3", queue="0")
    found = findings_of(tmp_path, text)
    assert found == [
        (5, "unknown-queue", "warning", "queue_number"),
        (5, "unknown-partition", "warning", "partition_number"),
    ]  # queue 0 (interactive by convention) and undeclared tables are no finding


def test_no_table_no_queue_finding(tmp_path: Path) -> None:
    assert findings_of(tmp_path, swf_job("1", queue="7", partition="9")) == []


def test_the_example_of_the_audit_fails_strict_validation(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = "; MaxProcs: 64\n; Queue: 1 batch\n; Partition: 1 main\n"
    text += swf_job("1", think="50") + swf_job("2", queue="7", partition="9")
    path = tmp_path / "f11.swf"
    path.write_text(text)
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 0
    code, out, _ = run(capsys, "validate", "--strict", str(path))
    assert code == 1
    for check in ("think-without-preceding", "unknown-queue", "unknown-partition"):
        assert check in out


def test_streaming_read_gives_the_same_findings(tmp_path: Path) -> None:
    text = "; MaxProcs: 64\n; Queue: 1 batch\n"
    text += swf_job("1", think="50") + swf_job("2", queue="7")
    path = tmp_path / "s.swf"
    path.write_text(text)
    whole = [(f.line, f.check) for f in read_swf(path).meta["findings"]]
    streamed = read_swf(path, stream=True, chunk_bytes=64)
    for _ in streamed.iter_chunks():
        pass
    assert whole == [(3, "think-without-preceding"), (4, "unknown-queue")]
    assert [(f.line, f.check) for f in streamed.meta["findings"]] == whole


@pytest.mark.parametrize(
    ("requested", "allocated", "written", "losses"),
    [
        (
            "2.5",
            "3",
            "2",
            [("requested_processors", "not an integer, rounded down to whole resources")],
        ),
        ("0.5", "3", "", [("requested_processors", "below 1, not written (read back as unknown)")]),
        ("-2", "3", "", [("requested_processors", "negative, not written (read back as unknown)")]),
        (
            "4",
            "2.5",
            "4",
            [("allocated_processors", "not an integer, rounded down to whole resources")],
        ),
        ("4", "4", "4", []),
    ],
)
def test_the_jobs_writer_writes_processor_counts_its_reader_takes(
    tmp_path: Path, requested: str, allocated: str, written: str, losses: list[tuple[str, str]]
) -> None:
    source = tmp_path / "in.swf"
    source.write_text("; MaxProcs: 64\n" + swf_job("1", requested, allocated))
    out = tmp_path / "out.csv"
    with schedlab.collect_losses() as reported:
        schedlab.write(schedlab.read(source, lenient=True), out, format="batsim-jobs")
    row = out.read_text().splitlines()[1].split(",")
    assert row[4] == written
    fields = ("requested_processors", "allocated_processors")
    assert [(x.field, x.action) for x in reported if x.field in fields] == losses
    back = schedlab.read(out, format="batsim-jobs").jobs[0]  # the reader takes it
    assert back.requested_processors == (int(written) if written else None)
