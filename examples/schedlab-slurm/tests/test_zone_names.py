"""Zone names that mean UTC (``Etc/UTC``, ``GMT``, ``Zulu`` ...) are UTC to the
writer: times printed in them are not reported as printed in another zone, and a
``TimeZoneString`` naming one is not reported lost (the "timezones" audit, 4)."""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from schedlab import Header, Job, Workload, collect_losses

from schedlab_slurm.reader import read
from schedlab_slurm.writer import write

XDMOD = "xdmod_accounting-logs.log"
UTC_NAMES = ["Etc/UTC", "GMT", "Etc/GMT", "UCT", "Zulu", "Etc/Universal", "GMT0", "Greenwich"]


@pytest.mark.parametrize("zone", UTC_NAMES)
def test_utc_names_write_back_lossless(slurm_dir: Path, tmp_path: Path, zone: str) -> None:
    source = slurm_dir / XDMOD
    workload = schedlab.read(source, format="slurm", timezone=zone)
    out = tmp_path / "e.sacct"
    losses = write(workload, out)
    assert [loss for loss in losses if loss.field == "submit_time"] == []
    assert out.read_bytes() == source.read_bytes()
    with collect_losses(strict=True):  # --strict-lossless: nothing refused
        schedlab.write(workload, tmp_path / "strict.sacct", format="slurm", timezone=zone)


def test_other_zone_still_reported(slurm_dir: Path, tmp_path: Path) -> None:
    """Europe/London is at offset 0 in winter only: not UTC."""
    workload = read(slurm_dir / XDMOD, timezone="Europe/London")
    losses = write(workload, tmp_path / "e.sacct")
    (loss,) = [loss for loss in losses if loss.field == "submit_time"]
    assert "Europe/London" in loss.action


@pytest.mark.parametrize("name", ["GMT", "Etc/UTC", "Zulu"])
def test_time_zone_string_utc_not_reported(tmp_path: Path, name: str) -> None:
    header = Header()
    header.set("UnixStartTime", 1_000_000_000)
    header.set("TimeZoneString", name)
    job = Job(job_number=1, submit_time=0, wait_time=1, run_time=10, allocated_processors=1)
    job.status = 1
    losses = write(Workload(header, jobs=[job]), tmp_path / "e.sacct")
    assert [loss for loss in losses if loss.field == "header.TimeZoneString"] == []


def test_time_zone_string_other_reported(tmp_path: Path) -> None:
    header = Header()
    header.set("UnixStartTime", 1_000_000_000)
    header.set("TimeZoneString", "Europe/London")
    job = Job(job_number=1, submit_time=0, wait_time=1, run_time=10, allocated_processors=1)
    job.status = 1
    losses = write(Workload(header, jobs=[job]), tmp_path / "e.sacct")
    assert [loss.field for loss in losses].count("header.TimeZoneString") == 1
