"""SSS DateTimes are unsigned 32-bit epoch seconds: a job whose dates would pass
2106-02-07 gets no DateTimes in the group layout, which is reported (schedlab reads
its times back from the extensions; other SSS tools would see none)."""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from schedlab import collect_losses

JOB = (
    "1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"
    "2 50 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"
)


def trace(tmp_path: Path, origin: int) -> Path:
    path = tmp_path / "t.swf"
    path.write_text(f"; UnixStartTime: {origin}\n{JOB}")
    return path


def test_dates_past_2106_are_reported_and_read_back(tmp_path: Path) -> None:
    w = schedlab.read(trace(tmp_path, 10_000_000_000))
    out = tmp_path / "t.sss.xml"
    with collect_losses() as losses:
        schedlab.write(w, out)
    lines = [str(loss) for loss in losses]
    assert any(line.startswith("submit_time: 2 records, no SubmissionTime") for line in lines)
    assert "SubmissionTime" not in out.read_text()
    back = schedlab.read(out)
    assert back.header.unix_start_time == 10_000_000_000
    assert [j.submit_time for j in back] == [0, 50]
    from schedlab.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["convert", str(tmp_path / "t.swf"), str(tmp_path / "s.sss.xml"), "--strict-lossless"])
    assert stop.value.code == 2


def test_dates_before_2106_have_no_such_loss(tmp_path: Path) -> None:
    w = schedlab.read(trace(tmp_path, 1_000_000_000))
    with collect_losses() as losses:
        schedlab.write(w, tmp_path / "t.sss.xml")
    assert not any("2106" in str(loss) for loss in losses)
