"""Fixes of the "timezones" audit (how each format holds time).

1. The SSS writer reports an unknown origin (times written from 0, 1970-01-01), in
   both layouts, so ``--strict-lossless`` refuses.
2. The SSS reader keeps a real origin of epoch 0 (``UnixStartTime: 0``).
3. The SSS group writer writes the DateTimes of a job with fractional times,
   rounded to whole seconds; the exact values come back from the extensions.
5. The SGE colon writer rounds times to whole seconds (not down), and
   ``ru_wallclock`` is end - start as written.
6. The Lublin generator refuses a ``start`` that is not at ``start_hour`` o'clock UTC.
(4, the Slurm plugin's UTC zone names: examples/schedlab-slurm/tests/test_zone_names.py.)
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import schedlab
from schedlab.errors import UsageError
from schedlab.losses import Loss, collect_losses
from schedlab.model import Header, Job, Workload
from schedlab.testing import run_cli as run

UNKNOWN_ORIGIN = "unknown, times written from 0 (1970-01-01)"


def _workload(*jobs: Job, start: int | None = None) -> Workload:
    header = Header()
    header.set("MaxProcs", 4)
    if start is not None:
        header.set("UnixStartTime", start)
    return Workload(header, jobs=list(jobs))


def _job(number: int, submit: float, wait: float, run: float) -> Job:
    return Job(
        job_number=number,
        submit_time=submit,
        wait_time=wait,
        run_time=run,
        allocated_processors=1,
        requested_processors=1,
        status=1,
    )


def _write(workload: Workload, path: Path, fmt: str, **options: object) -> list[Loss]:
    """Write and return the losses reported."""
    with collect_losses() as losses:
        schedlab.write(workload, path, fmt, **options)
    return list(losses)


def _actions(losses: list[Loss], field: str) -> list[str]:
    return [loss.action for loss in losses if loss.field == field]


# ----------------------------------------------------------- 1. unknown SSS origin


@pytest.mark.parametrize("layout", ["group", "jobs"])
def test_sss_unknown_origin_is_reported(tmp_path: Path, layout: str) -> None:
    workload = _workload(_job(1, 78, 2, 10), _job(2, 102, 0, 5))
    out = tmp_path / ("w.sss.xml" if layout == "group" else "w")
    losses = _write(workload, out, "sss", layout=layout)
    assert _actions(losses, "header.UnixStartTime") == [UNKNOWN_ORIGIN]


def test_sss_known_origin_is_not_reported(tmp_path: Path) -> None:
    workload = _workload(_job(1, 78, 2, 10), start=1_000_000_000)
    losses = _write(workload, tmp_path / "w.sss.xml", "sss")
    assert _actions(losses, "header.UnixStartTime") == []


def test_sss_unknown_origin_without_times_is_not_reported(tmp_path: Path) -> None:
    """No DateTime is written (no job has a known submit or start): nothing made up."""
    job = Job(job_number=1, allocated_processors=1, status=5)
    losses = _write(_workload(job), tmp_path / "w.sss.xml", "sss")
    assert _actions(losses, "header.UnixStartTime") == []


def test_sss_unknown_origin_strict_lossless_refuses(tmp_path: Path, capsys) -> None:
    src = tmp_path / "g.swf"
    src.write_text("; MaxProcs: 4\n1 78 1 10 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1\n")
    out = tmp_path / "g.sss.xml"
    code, _out, err = run(capsys, "convert", str(src), str(out), "--strict-lossless")
    assert code == 2
    assert "UnixStartTime" in err and not out.exists()


def test_sss_unknown_origin_round_trip_stays_unknown(tmp_path: Path) -> None:
    workload = _workload(_job(1, 78, 2, 10))
    out = tmp_path / "w.sss.xml"
    with collect_losses():
        schedlab.write(workload, out, "sss")
    back = schedlab.read(out)
    assert back.header.unix_start_time is None
    assert [j.submit_time for j in back] == [78]


# ------------------------------------------------------------ 2. origin of epoch 0


def _document(*jobs: tuple[int, int, int]) -> str:
    body = "".join(
        f"<Job><JobId>{i}</JobId><SubmissionTime>{s}</SubmissionTime>"
        f"<StartTime>{b}</StartTime><EndTime>{e}</EndTime></Job>\n"
        for i, (s, b, e) in enumerate(jobs, start=1)
    )
    return f'<?xml version="1.0"?>\n<JobGroup><JobGroupId>g</JobGroupId>\n{body}</JobGroup>\n'


def test_sss_reader_keeps_origin_zero(tmp_path: Path) -> None:
    path = tmp_path / "zero.sss.xml"
    path.write_text(_document((0, 10, 20), (100, 110, 120)))
    workload = schedlab.read(path)
    assert workload.header.unix_start_time == 0
    assert [j.submit_time for j in workload] == [0, 100]


def test_sss_reader_no_time_no_origin(tmp_path: Path) -> None:
    path = tmp_path / "none.sss.xml"
    path.write_text(
        '<?xml version="1.0"?>\n<JobGroup><JobGroupId>g</JobGroupId>'
        "<Job><JobId>1</JobId></Job></JobGroup>\n"
    )
    assert schedlab.read(path).header.unix_start_time is None


# ------------------------------------------------------- 3. fractional SSS times


def _times(path: Path) -> list[dict[str, str | None]]:
    root = ET.parse(path).getroot()
    return [
        {tag: job.findtext(tag) for tag in ("SubmissionTime", "StartTime", "EndTime")}
        for job in root.iter("Job")
    ]


def test_sss_group_writes_rounded_datetimes(tmp_path: Path) -> None:
    jobs = (_job(1, 0, 1, 0.5), _job(2, 2.5, 1, 5), _job(3, 10.6, 0.3, 4.4))
    workload = _workload(*jobs, start=1_000_000_000)
    out = tmp_path / "fr.sss.xml"
    losses = _write(workload, out, "sss")
    assert list(losses) == []
    base = 1_000_000_000
    assert _times(out) == [
        # submit, wait and run each rounded on its own (half to even: 0.5 -> 0,
        # 2.5 -> 2), the DateTimes added up from them
        {"SubmissionTime": str(base), "StartTime": str(base + 1), "EndTime": str(base + 1)},
        {"SubmissionTime": str(base + 2), "StartTime": str(base + 3), "EndTime": str(base + 8)},
        {"SubmissionTime": str(base + 11), "StartTime": str(base + 11), "EndTime": str(base + 15)},
    ]
    # schedlab reads the exact values back (the extensions win)
    back = list(schedlab.read(out))
    for job, again in zip(jobs, back, strict=True):
        assert (again.submit_time, again.wait_time, again.run_time) == (
            job.submit_time,
            job.wait_time,
            job.run_time,
        )
    # another SSS tool sees the rounded times: End - Start agrees with WallDuration
    root = ET.parse(out).getroot()
    for elem in root.iter("Job"):
        wall = elem.find("Delivered/WallDuration")
        if wall is not None:
            assert int(wall.text or "") == int(elem.findtext("EndTime") or "") - int(
                elem.findtext("StartTime") or ""
            )


def test_sss_group_rounded_without_extensions(tmp_path: Path) -> None:
    """With schedlab's extensions removed, the document reads as whole seconds."""
    workload = _workload(_job(1, 2.5, 1, 5), start=1_000_000_000)
    out = tmp_path / "fr.sss.xml"
    _write(workload, out, "sss")
    root = ET.parse(out).getroot()
    for parent in [root, *root.iter("Job")]:
        for ext in parent.findall("Extension"):
            parent.remove(ext)
    plain = tmp_path / "plain.sss.xml"
    ET.ElementTree(root).write(plain, encoding="utf-8", xml_declaration=True)
    (job,) = list(schedlab.read(plain))
    assert (job.submit_time, job.wait_time, job.run_time) == (0, 1, 5)


def test_sss_jobs_layout_reports_rounding(tmp_path: Path) -> None:
    workload = _workload(_job(1, 2.5, 1.4, 5.5), start=1_000_000_000)
    losses = _write(workload, tmp_path / "jobs", "sss", layout="jobs")
    (doc,) = (tmp_path / "jobs").iterdir()
    assert _times(doc) == [
        {"SubmissionTime": "1000000002", "StartTime": "1000000003", "EndTime": "1000000009"}
    ]
    for field in ("wait_time", "run_time"):
        assert any("rounded to whole seconds" in a for a in _actions(losses, field))


# ------------------------------------------------------------- 5. SGE colon rounding


def test_sge_colon_rounds_times(tmp_path: Path) -> None:
    src = tmp_path / "f.swf"
    src.write_text(
        "; UnixStartTime: 1000000000\n; MaxProcs: 4\n"
        "1 0.9 0.9 10.9 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1\n"
        "2 5.4 0.4 10.4 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1\n"
    )
    out = tmp_path / "f.acct"
    losses = _write(schedlab.read(src), out, "sge")
    rows = [line.split(":") for line in out.read_text().splitlines() if not line.startswith("#")]
    stamps = [tuple(int(r[i]) for i in (8, 9, 10)) for r in rows]
    # submit, wait and run each rounded on its own (0.9 -> 1, 10.9 -> 11; 5.4 -> 5,
    # 0.4 -> 0, 10.4 -> 10)
    assert stamps == [
        (1_000_000_001, 1_000_000_002, 1_000_000_013),
        (1_000_000_005, 1_000_000_005, 1_000_000_015),
    ]
    for row, (_sub, start, end) in zip(rows, stamps, strict=True):
        assert float(row[13]) == end - start  # ru_wallclock as written
    assert any("rounded to whole seconds" in a for a in _actions(losses, "run_time"))
    back = list(schedlab.read(out))
    assert [j.run_time for j in back] == [11, 10]


def test_sge_jsonl_keeps_microseconds(tmp_path: Path) -> None:
    workload = _workload(_job(1, 0.9, 0.25, 10.4), start=1_000_000_000)
    out = tmp_path / "f.jsonl"
    _write(workload, out, "sge-jsonl")
    (job,) = list(schedlab.read(out))
    assert (job.wait_time, job.run_time) == (0.25, 10.4)


# ------------------------------------------------------------------ 6. Lublin start


def test_lublin_start_off_the_hour_refused(capsys) -> None:
    with pytest.raises(UsageError) as info:
        schedlab.read("lublin:jobs=5,start=1000000000,start_hour=0")
    message = str(info.value)
    assert "\n" not in message
    assert "start=1000000000" in message and "start_hour" in message
    assert "UTC" in message
    code, _out, err = run(capsys, "info", "lublin:jobs=5,start=1000000000")
    assert code == 2 and "start_hour" in err and "Traceback" not in err


def test_lublin_start_at_start_hour_accepted() -> None:
    # 2001-09-09T01:00:00Z
    workload = schedlab.read("lublin:jobs=5,start=999997200,start_hour=1")
    assert workload.header.unix_start_time == 999_997_200
    assert any("hour 1 (UTC)" in note for note in workload.header.notes)
    # no start: the hour is the only clock there is
    plain = schedlab.read("lublin:jobs=5,start_hour=7")
    assert plain.header.unix_start_time is None
