"""Fixes of the SWF 2.2 conformance audit (swfspec): grouped checkpoint/swap records
keep their comments and extra columns, ``summary_only`` keeps jobs without a
summary line, simulated schedules are valid SWF (header counts, submit order,
EndTime), dependencies on ``Preemption: Yes`` jobs, ``-1`` in the header, exact
integer rounding and the spec rules ``validate`` checks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab.testing import run_cli as run

ROW = "{n} {s} {w} {r} {p} -1 -1 {p} 100 -1 {st} 1 1 1 1 1 {pre} {th}"


def row(n, s, w, r, p, st, pre=-1, th=-1) -> str:
    return ROW.format(n=n, s=s, w=w, r=r, p=p, st=st, pre=pre, th=th)


def write(tmp_path: Path, text: str, name: str = "in.swf") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def checks(path: Path) -> list[str]:
    return [f.check for f in schedlab.read(path, lenient=True).meta["findings"]]


# ----------------------------------------------------------------- 1. grouped records

EXT = (
    row(1, 0, 5, 20, 4, 1) + " A1 B1 C1\n"
    "; before part 1\n" + row(1, 0, 5, 10, 4, 2) + " A2 B2 C2\n"
    "; between the parts\n" + row(1, -1, 3, 10, 4, 3) + " A3 B3 C3\n"
    "; after the last part\n" + row(2, 10, 0, 20, 8, 1) + " A4 B4 C4\n"
)


@pytest.mark.parametrize("how", ["whole1", "whole2", "stream"])
def test_grouped_records_keep_comments_and_extra_columns(tmp_path: Path, how: str) -> None:
    path = write(tmp_path, EXT)
    if how == "stream":
        w = schedlab.read(path, lenient=True, stream=True, chunk_bytes=60)
    else:
        w = schedlab.read(path, lenient=True, workers=int(how[-1]))
    out = tmp_path / "out.swf"
    with schedlab.collect_losses(strict=True):
        schedlab.write(w, out, extra_columns=True)
    assert out.read_text().split() == EXT.split()


def test_grouped_records_trailing_comment_kept(tmp_path: Path) -> None:
    text = row(1, 0, 5, 20, 4, 1) + "\n" + row(1, 0, 5, 10, 4, 3) + "\n; the end\n"
    w = schedlab.read(write(tmp_path, text))
    out = tmp_path / "out.swf"
    schedlab.write(w, out)
    assert out.read_text().splitlines()[-1] == "; the end"


def test_grouped_record_extra_columns_reported_when_not_written(tmp_path: Path) -> None:
    w = schedlab.read(write(tmp_path, EXT), lenient=True)
    with schedlab.collect_losses() as losses:
        schedlab.write(w, tmp_path / "out.swf")
    assert losses.count("extras.swf_extra_columns") == 4  # every line with extra columns


# ----------------------------------------------------------------- 2/6/10. simulate -o header

DBL = (
    "; MaxJobs: 2\n; MaxRecords: 4\n; Preemption: Double\n; MaxProcs: 8\n"
    "; EndTime: Thu Jan  1 00:10:00 UTC 1970\n; UnixStartTime: 0\n"
    + "\n".join(
        [
            row(1, 0, 5, 20, 4, 1),
            row(1, 0, 5, 10, 4, 2),
            row(1, -1, 3, 10, 4, 3),
            row(2, 10, 0, 20, 8, 1),
        ]
    )
    + "\n"
)
YES = "; MaxJobs: 2\n; MaxRecords: 4\n; Preemption: Yes\n; MaxProcs: 8\n" + (
    "\n".join(
        [
            row(1, 0, 5, 10, 4, 2),
            row(1, 20, 3, 10, 4, 2),
            row(1, 40, 2, 10, 4, 3),
            row(2, 50, 0, 20, 8, 1),
        ]
    )
    + "\n"
)


@pytest.mark.parametrize("text", [DBL, YES], ids=["double", "yes"])
def test_simulated_schedule_header_counts_what_validate_counts(
    tmp_path: Path, capsys, text: str
) -> None:
    out = tmp_path / "out.swf"
    code, _, err = run(capsys, "simulate", str(write(tmp_path, text)), "-o", str(out))
    assert code == 0, err
    header = schedlab.read(out).header
    assert (header.max_jobs, header.max_records) == (2, 4)  # as the input, which was right
    code, out_text, _ = run(capsys, "validate", str(out), "--strict")
    assert code == 0, out_text
    assert "MaxJobs and MaxRecords count" not in out.read_text()


def test_simulated_schedule_end_time(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out.swf"
    code, _, err = run(capsys, "simulate", str(write(tmp_path, DBL)), "-o", str(out))
    assert code == 0, err
    header = schedlab.read(out).header
    assert header.end_time is None  # the input's EndTime is not the schedule's
    notes = " ".join(header.get_all("Note"))
    assert (
        "EndTime" in notes and "1970-01-01T00:00:40+00:00" in notes
    )  # job 2 waits for job 1 (20 to 40)


def test_minus_one_counts_are_unknown(tmp_path: Path, capsys) -> None:
    path = write(
        tmp_path, "; MaxJobs: -1\n; MaxRecords: -1\n; MaxProcs: 8\n" + row(1, 0, 0, 5, 1, 1)
    )
    assert "header-count" not in checks(path)
    out = tmp_path / "out.swf"
    code, _, err = run(capsys, "simulate", str(path), "-o", str(out))
    assert code == 0, err
    header = schedlab.read(out).header
    assert (header.max_jobs, header.max_records) == (-1, -1)


def test_unix_start_time_minus_one_gives_no_date(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "; UnixStartTime: -1\n; MaxProcs: 8\n" + row(1, 0, 0, 5, 1, 1) + "\n")
    code, out, _ = run(capsys, "info", str(path), "--json")
    assert code == 0
    assert "start_utc" not in json.loads(out)


# ----------------------------------------------------------------- 3/5. dependencies

DEP = (
    "; MaxProcs: 4\n"
    + "\n".join(
        [
            row(1, 0, 0, 100, 4, 1),
            row(2, 0, 0, 50, 4, 1),
            row(3, 200, 0, 10, 4, 1, 2, -1),
            row(4, 210, 0, 10, 4, 1, 2, 5),
            row(5, 220, -1, 10, 4, 1, 2, -1),
            row(6, 230, 0, 10, 4, 1, 7, -1),
        ]
    )
    + "\n"
)


def test_simulated_dependencies_written_in_submit_order(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out.swf"
    code, _, err = run(
        capsys, "simulate", str(write(tmp_path, DEP)), "--dependencies", "-o", str(out)
    )
    assert code == 0, err
    w = schedlab.read(out)
    submit = w.to_arrays()["submit_time"]
    assert np.all(np.diff(submit) >= 0)
    assert sorted(w.to_arrays()["job_number"].tolist()) == [1, 2, 3, 4, 5, 6]
    assert "unsorted-submit" not in checks(out)


def test_dependency_on_preempted_job_waits_for_its_last_part(tmp_path: Path) -> None:
    text = "; Preemption: Yes\n; MaxProcs: 8\n" + "\n".join(
        [
            row(1, 0, 0, 10, 4, 2),
            row(1, 20, 0, 10, 4, 2),
            row(1, 40, 0, 10, 4, 3),
            row(2, 50, 0, 20, 8, 1, 1, 5),
        ]
    )
    result = schedlab.simulate(schedlab.read(write(tmp_path, text)), dependencies=True)
    cols = result.workload.to_arrays()
    last_part_end = float(result.end[2])
    job2 = int(np.flatnonzero(cols["job_number"] == 2)[0])
    assert cols["submit_time"][job2] == last_part_end + 5
    assert result.stats["dependencies_honoured"] == 1


# ----------------------------------------------------------------- 4. summary_only


def test_summary_only_keeps_a_job_without_summary_line(tmp_path: Path) -> None:
    text = (
        "; Preemption: Yes\n"
        + "\n".join(
            [
                row(1, 0, 5, 10, 4, 2),
                "; between",
                row(1, -1, 3, 20, 4, 2),
                row(1, -1, 2, 30, 4, 3),
                row(2, 10, 0, 20, 8, 1),
            ]
        )
        + "\n"
    )
    w = schedlab.read(write(tmp_path, text), summary_only=True)
    cols = w.to_arrays()
    assert cols["job_number"].tolist() == [1, 2]
    assert cols["run_time"].tolist() == [60, 20]  # the sum of the parts
    assert cols["status"].tolist() == [1, 1]  # last part 3: completed
    assert w.meta["summarized_partial_jobs"] == 1
    message = next(f.message for f in w.meta["findings"] if f.check == "partial-without-summary")
    assert "kept as a row" not in message and "summary row" in message
    out = tmp_path / "out.swf"
    schedlab.write(w, out)
    assert "; between" in out.read_text()  # the comment of a dropped record is kept


# ----------------------------------------------------------------- 7. exceeds-machine


def test_exceeds_machine_names_max_nodes(tmp_path: Path) -> None:
    path = write(tmp_path, "; MaxProcs: -1\n; MaxNodes: 4\n" + row(1, 0, 0, 5, 8, 1) + "\n")
    found = [f for f in schedlab.read(path).meta["findings"] if f.check == "exceeds-machine"]
    assert len(found) == 1 and "MaxNodes 4" in found[0].message


# ----------------------------------------------------------------- 8. integer rounding


def _written_fields(tmp_path: Path, line: str, *options: str) -> list[str]:
    w = schedlab.read(write(tmp_path, line + "\n"))
    out = tmp_path / "o.swf"
    schedlab.write(w, out, **{o: True for o in options})
    return out.read_text().split()


def test_integer_memory_leaves_integers_alone(tmp_path: Path) -> None:
    big = 2**53 - 1
    line = f"1 0 0 5 1 -1 4503599627370497 1 10 {big} 1 1 1 1 1 1 -1 -1"
    with schedlab.collect_losses() as losses:
        fields = _written_fields(tmp_path, line, "integer_memory")
    assert fields[6] == "4503599627370497" and fields[9] == str(big)
    assert not losses


def test_integer_rounding_nearest_is_exact(tmp_path: Path) -> None:
    x = "0.49999999999999994"
    line = f"1 0 {x} {x} 1 {x} {x} 1 10 2.5 1 1 1 1 1 1 2 {x}"
    fields = _written_fields(tmp_path, line, "integer_times", "integer_memory")
    assert [fields[i] for i in (2, 3, 5, 6, 17)] == ["0"] * 5
    assert fields[9] == "3"  # halves up


def test_integer_options_report_fractional_other_fields(tmp_path: Path) -> None:
    line = "2.5 0 0 5 2.5 -1 -1 2.5 10 -1 1 1.5 1 1 1 1 -1 -1"
    with schedlab.collect_losses() as losses:
        fields = _written_fields(tmp_path, line, "integer_times", "integer_memory")
    assert [fields[i] for i in (0, 4, 7, 11)] == ["2.5", "2.5", "2.5", "1.5"]
    assert losses.count("allocated_processors") == 1 and losses.count("user_id") == 1
    assert losses.count("job_number") == 1 and losses.count("requested_processors") == 1
    assert losses.count("group_id") == 0


# ----------------------------------------------------------------- 9. spec rules


@pytest.mark.parametrize(
    ("header", "body", "check"),
    [
        ("; AllowOveruse: True\n", row(1, 0, 0, 5, 1, 1), "header-enum"),
        ("; Preemption: Sometimes\n", row(1, 0, 0, 5, 1, 1), "header-enum"),
        ("; Preemption: No\n", row(1, 0, 0, 5, 1, 2), "partial-not-preempted"),
        ("; MaxRuntime: 100\n", row(1, 0, 0, 200, 1, 1), "exceeds-max-runtime"),
        (
            "; MaxMemory: 1000\n",
            "1 0 0 5 1 -1 5000 1 10 -1 1 1 1 1 1 1 -1 -1",
            "exceeds-max-memory",
        ),
        (
            "; AllowOveruse: No\n",
            "1 0 0 200 1 -1 5000 1 100 1000 1 1 1 1 1 1 -1 -1",
            "overuse",
        ),
    ],
)
def test_spec_rules_are_warnings(tmp_path: Path, header: str, body: str, check: str) -> None:
    path = write(tmp_path, header + body + "\n")
    findings = schedlab.read(path, lenient=True).meta["findings"]
    found = [f for f in findings if f.check == check]
    assert found and all(f.severity == "warning" for f in found)
    if check == "overuse":
        assert {f.field for f in found} == {"run_time", "used_memory"}


def test_spec_rules_quiet_on_conforming_file(tmp_path: Path) -> None:
    text = (
        "; Preemption: No\n; AllowOveruse: No\n; MaxRuntime: 100\n; MaxMemory: 1000\n"
        "1 0 0 50 1 -1 500 1 100 1000 1 1 1 1 1 1 -1 -1\n"
    )
    assert checks(write(tmp_path, text)) == []
