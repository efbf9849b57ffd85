"""Hostile but accepted values through the SSS, Batsim and Google writers.

A writer never writes what its own reader refuses or reads differently without
saying so (docs/formats/conversions.md: "Lost" means the value read back by the
target's own reader differs from the source's):

* SSS: an origin before 1970, header entries the SWF rules refuse (the reader
  checks the ``header`` bookkeeping extension with them, the writer leaves them
  out and reports them);
* Batsim: a negative submit time (an error in the source log);
* Google: a negative or absent preceding job, a CPU request or machine beyond the
  reader's 10^6 normalized CPUs;
* float noise: values read back with exact equality on real traces, and every
  value that changes is reported under its field.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from schedlab.errors import FormatError
from schedlab.losses import Losses, collect_losses
from schedlab.model import SWF_FIELDS, Workload

BIG = 2**53 - 1
ROW = "{n} {submit} 10 100 {procs} {cpu} -1 {procs} 200 -1 1 1 1 -1 1 -1 {prec} -1\n"


def _swf(tmp_path: Path, header: str, *rows: dict[str, object], name: str = "in.swf") -> Path:
    lines = [header]
    for n, row in enumerate(rows, start=1):
        values = {"n": n, "submit": 0, "procs": 4, "cpu": -1, "prec": -1, **row}
        lines.append(ROW.format(**values))
    path = tmp_path / name
    path.write_text("".join(lines))
    return path


def _convert(workload: Workload, path: Path, format: str, **options: object) -> Losses:
    with collect_losses() as losses:
        schedlab.write(workload, path, format=format, **options)
    return losses


def _fields(job: object) -> tuple[object, ...]:
    return tuple(getattr(job, f) for f in SWF_FIELDS)


# ----------------------------------------------------------------------------- SSS


@pytest.mark.parametrize("origin", [-86400, -62135596800, 10_000_000_000, 253402300799])
def test_sss_writes_every_origin_the_swf_reader_accepts(tmp_path: Path, origin: int) -> None:
    source = _swf(tmp_path, f"; UnixStartTime: {origin}\n; MaxProcs: 64\n", {}, {"submit": 60})
    workload = schedlab.read(source)
    losses = _convert(workload, tmp_path / "o.sss.xml", "sss")
    if origin < 0:  # DateTimes from 0, not the real dates: reported (read back exactly)
        assert [loss.action.split(",")[0] for loss in losses] == ["before 1970"]
    else:
        assert "header.UnixStartTime" not in losses
    back = schedlab.read(tmp_path / "o.sss.xml", format="sss")  # strict
    assert back.header.unix_start_time == origin
    assert [_fields(j) for j in back] == [_fields(j) for j in workload]
    # and on to SWF: the same trace
    schedlab.write(back, tmp_path / "b.swf")
    again = schedlab.read(tmp_path / "b.swf")
    assert again.header.unix_start_time == origin
    assert [_fields(j) for j in again] == [_fields(j) for j in workload]


def _sss_with_header(tmp_path: Path, old: str, new: str) -> Path:
    source = _swf(tmp_path, "; UnixStartTime: 1000000000\n; MaxProcs: 64\n", {})
    schedlab.write(schedlab.read(source), tmp_path / "a.sss.xml")
    text = (tmp_path / "a.sss.xml").read_text()
    assert old in text
    path = tmp_path / "edited.sss.xml"
    path.write_text(text.replace(old, new))
    return path


MAXPROCS = '{"label": "MaxProcs", "value": "64"'
START = '{"label": "UnixStartTime", "value": "1000000000"'


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            MAXPROCS,
            '{"label": "MaxProcs", "value": "1e400"',
            "entry 2 (MaxProcs): expected an integer, got '1e400'",
        ),
        (
            MAXPROCS,
            '{"label": "MaxProcs", "value": "0"',
            "entry 2 (MaxProcs): expected at least 1, or -1 (unknown), got '0'",
        ),
        (
            MAXPROCS,
            '{"label": "MaxProcs", "value": "240"}, {"label": "MaxProcs", "value": "8"',
            "entry 3 (MaxProcs): '8' here but '240' in entry 2",
        ),
        (
            START,
            '{"label": "UnixStartTime", "value": "99999999999999"',
            "entry 1 (UnixStartTime): out of range (a date from year 1 to 9999), "
            "got '99999999999999'",
        ),
    ],
)
def test_sss_header_extension_values_follow_the_swf_header_rules(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    path = _sss_with_header(tmp_path, old, new)
    for lenient in (False, True):
        with pytest.raises(FormatError) as caught:
            list(schedlab.read(path, format="sss", lenient=lenient))
        message = str(caught.value)
        assert "/JobGroup/Extension[@name='header']" in message
        assert f"field header: {expected}" in message
        assert "\n" not in message


def test_sss_header_extension_with_valid_values_still_reads(tmp_path: Path) -> None:
    path = _sss_with_header(
        tmp_path,
        MAXPROCS,
        '{"label": "MaxProcs", "value": "64 (remark)"}, '
        '{"label": "MaxProcs", "value": "64 (remark)"',
    )
    assert len(schedlab.read(path, format="sss")) == 1


def test_sss_writer_leaves_out_and_reports_header_entries_its_reader_refuses(
    tmp_path: Path,
) -> None:
    source = _swf(
        tmp_path,
        "; UnixStartTime: 99999999999999\n; MaxProcs: 240\n; MaxProcs: 8\n; MaxNodes: 1e400\n",
        {},
        {"submit": 5},
    )
    workload = schedlab.read(source, lenient=True)  # header-value findings
    losses = _convert(workload, tmp_path / "o.sss.xml", "sss")
    for label in ("UnixStartTime", "MaxProcs", "MaxNodes"):
        assert f"header.{label}" in losses
    back = schedlab.read(tmp_path / "o.sss.xml", format="sss")  # strict: reads
    assert back.header.get_all("MaxProcs") == ["240"]
    assert back.header.get("MaxNodes") is None
    assert [_fields(j) for j in back] == [_fields(j) for j in workload]
    schedlab.write(back, tmp_path / "b.swf")
    assert len(schedlab.read(tmp_path / "b.swf")) == 2  # a strict SWF read


# --------------------------------------------------------------------------- Batsim


def test_batsim_negative_submit_time_is_written_as_zero_and_reported(tmp_path: Path) -> None:
    source = _swf(tmp_path, "; MaxProcs: 64\n", {"submit": -50}, {"submit": 5})
    losses = _convert(schedlab.read(source), tmp_path / "o.json", "batsim")
    assert "submit_time" in losses
    back = {j.job_number: j for j in schedlab.read(tmp_path / "o.json", format="batsim")}
    assert (back[1].submit_time, back[2].submit_time) == (0, 5)


# --------------------------------------------------------------------------- Google


def _google(tmp_path: Path, workload: Workload) -> tuple[dict[int, object], Losses]:
    losses = _convert(workload, tmp_path / "o.google", "google")
    back = schedlab.read(tmp_path / "o.google", format="google")
    return {int(j.extras["collection_id"]): j for j in back}, losses


def test_google_negative_preceding_job_is_not_written_and_reported(tmp_path: Path) -> None:
    source = _swf(tmp_path, "; MaxProcs: 64\n", {}, {"submit": 5, "prec": -7})
    back, losses = _google(tmp_path, schedlab.read(source))
    assert "preceding_job_number" in losses
    assert back[2].preceding_job_number is None and back[2].dependencies == ()


def test_google_preceding_job_outside_the_workload_is_reported(tmp_path: Path) -> None:
    source = _swf(tmp_path, "; MaxProcs: 64\n", {}, {"submit": 5, "prec": 9})
    back, losses = _google(tmp_path, schedlab.read(source))
    assert "preceding_job_number" in losses
    assert back[2].preceding_job_number is None


def test_google_cpu_request_and_capacity_beyond_the_reader_are_reported(
    tmp_path: Path,
) -> None:
    source = _swf(tmp_path, f"; MaxProcs: {BIG}\n", {"procs": BIG, "cpu": 5}, {"submit": 5})
    back, losses = _google(tmp_path, schedlab.read(source))
    for field in ("allocated_processors", "requested_processors", "header.MaxProcs"):
        assert field in losses
    assert back[1].allocated_processors is None
    assert back[2].allocated_processors == 4


def test_google_machines_beyond_a_million_are_not_synthesized(tmp_path: Path) -> None:
    # One machine_events row per MaxNodes: 2**53 - 1 nodes would write rows for ever.
    source = _swf(tmp_path, f"; MaxProcs: {BIG}\n; MaxNodes: {BIG}\n", {}, {"submit": 5})
    back, losses = _google(tmp_path, schedlab.read(source))
    for label in ("header.MaxNodes", "header.MaxProcs"):
        assert f"{label}: 1 record, not written (more than 1,000,000 machines" in str(losses)
    assert not list((tmp_path / "o.google").glob("machine_events*"))
    assert len(back) == 2


def test_google_sub_microsecond_times_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "f.swf"
    path.write_text(
        "; MaxProcs: 64\n"
        "1 5.123456789 1e-9 1 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n"
        "2 6 2 3 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n"
    )
    back, losses = _google(tmp_path, schedlab.read(path))
    assert "submit_time" in losses and "wait_time" in losses
    assert "run_time" not in losses
    assert (back[2].submit_time, back[2].wait_time, back[2].run_time) == (6, 2, 3)


# ------------------------------------------------------------- exact round trips


TIMES = ("submit_time", "wait_time", "run_time")


def _changed(workload: Workload, back: dict[int, object], fields: tuple[str, ...]) -> dict:
    """``{field: jobs}`` of the fields of ``fields`` whose value read back differs
    (exact equality), with the number of jobs where it does."""
    out: dict[str, int] = {}
    for job in workload:
        again = back[job.job_number]
        for field in fields:
            if getattr(job, field) != getattr(again, field):
                out[field] = out.get(field, 0) + 1
    return out


@pytest.mark.parametrize("target", ["google", "batsim-jobs", "sss"])
def test_hpc2n_times_round_trip_exactly(swf_dir: Path, tmp_path: Path, target: str) -> None:
    workload = schedlab.read(swf_dir / "HPC2N-2002_excerpt-3170jobs_alea.swf")
    out = tmp_path / ("o.csv" if target == "batsim-jobs" else f"o.{target}")
    losses = _convert(workload, out, target)
    read = schedlab.read(out, format=target)
    key = (lambda j: int(j.extras["collection_id"])) if target == "google" else None
    back = {key(j) if key else j.job_number: j for j in read}
    assert len(back) == len(workload)
    assert _changed(workload, back, TIMES) == {}
    for field in TIMES:
        assert field not in losses
    if target == "sss":
        assert _changed(workload, back, SWF_FIELDS) == {}


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("sge/ocs-9.0.0_release-notes_accounting.jsonl", "google"),
        ("sge/pretty-accounting_uge8x_ms_accounting.txt", "google"),
        ("sge/pretty-accounting_uge8x_ms_accounting.txt", "batsim-jobs"),
        ("swf/HPC2N-2002_excerpt-3170jobs_alea.swf", "google"),
    ],
)
def test_every_value_changed_in_the_last_digits_is_reported(
    shared_data: Path, tmp_path: Path, source: str, target: str
) -> None:
    workload = schedlab.read(shared_data / source)
    out = tmp_path / ("o.csv" if target == "batsim-jobs" else f"o.{target}")
    losses = _convert(workload, out, target)
    read = schedlab.read(out, format=target)
    if target == "google":
        back = {int(j.extras["collection_id"]): j for j in read}
    else:
        back = {j.job_number: j for j in read}
    fields = (*TIMES, "average_cpu_time", "used_memory")
    changed = _changed(workload, back, fields)
    for field, jobs in changed.items():
        # every job whose value comes back different is counted in the report
        assert losses.count(field) >= jobs, (
            f"{field}: {jobs} changed, {losses.count(field)} reported"
        )
