"""The Grid Engine writers' loss reports name exactly what changes (conversion
audit, finding 3): no claim for the CPU time and memory of a job that never
started or ran on 0 slots (the colon layout's forced 0 reads back as unknown), a
claim for fractional processor counts (rounded down to whole slots) and for a
JSONL record without usage written as colon (its 0 reads back as 0)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import schedlab
from schedlab.cli import main
from schedlab.losses import Losses, collect_losses
from schedlab.model import Header, Job, Workload

FIELDS = (
    "average_cpu_time",
    "used_memory",
    "allocated_processors",
    "requested_processors",
    "status",
    "wait_time",
    "run_time",
)
TARGETS = {"sge": "out.accounting", "sge-jsonl": "out.accounting.jsonl"}


def _same(a: object, b: object) -> bool:
    if a is None or b is None:
        return a is None and b is None
    assert isinstance(a, int | float) and isinstance(b, int | float)
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _round_trip(
    workload: Workload, tmp_path: Path, to: str, source_format: str | None = None
) -> tuple[Losses, dict[str, int]]:
    """Write ``workload`` with writer ``to`` and read it back: the losses reported
    and, per field, how many jobs read back a different value."""
    out = tmp_path / TARGETS[to]
    with collect_losses() as losses:
        schedlab.write(workload, out, format=to)
    back = schedlab.read(out, format=to)
    assert len(back.jobs) == len(workload.jobs)
    differ = {
        field: sum(
            not _same(getattr(a, field), getattr(b, field))
            for a, b in zip(workload.jobs, back.jobs, strict=True)
        )
        for field in FIELDS
    }
    return losses, differ


def _assert_exact(losses: Losses, differ: dict[str, int]) -> None:
    """Every field's claim equals the number of jobs that changed: no missing
    claim, no false claim."""
    claims = {field: losses.count(field) for field in FIELDS}
    assert claims == differ, [str(loss) for loss in losses]


def _cancelled(tmp_path: Path) -> Workload:
    source = tmp_path / "cancelled.swf"
    source.write_text(
        "; UnixStartTime: 1000000000\n1 0 -1 -1 -1 -1 -1 4 100 -1 5 1 1 -1 -1 -1 -1 -1\n"
    )
    return schedlab.read(source)


@pytest.mark.parametrize("to", sorted(TARGETS))
def test_a_job_that_never_started_loses_nothing(tmp_path: Path, to: str) -> None:
    workload = _cancelled(tmp_path)
    losses, differ = _round_trip(workload, tmp_path, to)
    assert list(losses) == []
    assert all(n == 0 for n in differ.values())
    back = schedlab.read(tmp_path / TARGETS[to], format=to).jobs[0]
    assert back.average_cpu_time is None and back.used_memory is None
    assert back.status == 5 and back.requested_processors == 4


def test_strict_lossless_converts_a_cancelled_job_to_colon(tmp_path: Path) -> None:
    _cancelled(tmp_path)
    out = tmp_path / "c.accounting"
    try:
        main(["convert", str(tmp_path / "cancelled.swf"), str(out), "--to", "sge",
              "--strict-lossless"])  # fmt: skip
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    assert code == 0
    assert out.exists()


def _odd_jobs() -> Workload:
    jobs = [
        # fractional processors: slots rounded down to 0, CPU and memory per slot of 0
        Job(job_number=1, submit_time=0, wait_time=1, run_time=10, allocated_processors=0.5,
            requested_processors=0.5, average_cpu_time=3, used_memory=100, status=1),
        # 0 slots, usage unknown: read back unknown, nothing lost
        Job(job_number=2, submit_time=0, wait_time=1, run_time=10, allocated_processors=0,
            requested_processors=4, status=1),
        Job(job_number=3, submit_time=0, wait_time=1, run_time=10, requested_processors=0,
            status=1),
        # never started, usage unknown
        Job(job_number=4, submit_time=5, status=5, requested_processors=4),
        # started on 2 slots, usage unknown: the colon layout writes 0, read back 0
        Job(job_number=5, submit_time=5, wait_time=2, run_time=3, allocated_processors=2,
            requested_processors=2, status=1),
        # fractional processors on more than one slot
        Job(job_number=6, submit_time=6, wait_time=2, run_time=3, allocated_processors=2.5,
            requested_processors=3.5, average_cpu_time=4, used_memory=8, status=1),
    ]  # fmt: skip
    return Workload.from_jobs(jobs, Header())


@pytest.mark.parametrize("to", sorted(TARGETS))
def test_odd_processor_counts_are_reported_exactly(tmp_path: Path, to: str) -> None:
    losses, differ = _round_trip(_odd_jobs(), tmp_path, to)
    _assert_exact(losses, differ)
    assert differ["allocated_processors"] == 3  # 0.5, 2.5 rounded down; 3: unknown -> 0
    assert differ["requested_processors"] == 2
    expected = 2 if to == "sge" else 1  # job 5's unknowns are 0 in colon only
    assert differ["average_cpu_time"] == differ["used_memory"] == expected


def test_a_jsonl_record_without_usage_written_as_colon_is_reported(tmp_path: Path) -> None:
    jsonl = tmp_path / "in.accounting.jsonl"
    schedlab.write(_odd_jobs(), jsonl, format="sge-jsonl")
    source = schedlab.read(jsonl, format="sge-jsonl")
    losses, differ = _round_trip(source, tmp_path, "sge")
    _assert_exact(losses, differ)
    assert differ["average_cpu_time"] == differ["used_memory"] == 1  # job 5


@pytest.mark.realdata
@pytest.mark.parametrize("to", sorted(TARGETS))
def test_google_2011_sample_jobs_without_start_lose_no_usage(
    shared_data: Path, tmp_path: Path, to: str
) -> None:
    source = schedlab.read(shared_data / "google" / "clusterdata2011_v2_sample")
    assert all(job.wait_time is None and job.run_time is None for job in source.jobs)
    losses, differ = _round_trip(source, tmp_path, to)
    _assert_exact(losses, differ)
    assert "average_cpu_time" not in losses and "used_memory" not in losses
