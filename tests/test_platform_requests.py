"""A job's named partition (extra ``request.partition``) on platforms of one and
of several partitions (core/sim/requests.py; docs/platform.md)."""

from __future__ import annotations

from pathlib import Path

import schedlab

ONE = """\
[platform]
name = "one"

[node_groups.n]
count = 2
cores = 4

[partitions.batch]
nodes = ["n"]
"""

TWO = (
    ONE
    + """
[partitions.debug]
nodes = ["n"]
"""
)


def _workload() -> schedlab.Workload:
    jobs = [
        schedlab.Job(
            job_number=i + 1,
            submit_time=10.0 * i,
            wait_time=0.0,
            run_time=100.0,
            allocated_processors=2,
            requested_processors=2,
            requested_time=200.0,
            status=1,
            extras={"request.partition": name},
        )
        for i, name in enumerate(("batch", "debug", "gpu"))
    ]
    return schedlab.Workload.from_jobs(jobs)


def _run(tmp_path: Path, text: str) -> schedlab.Result:
    path = tmp_path / "platform.toml"
    path.write_text(text, encoding="utf-8")
    return schedlab.simulate(_workload(), backfill="easy", platform=path)


def test_unknown_partition_is_excluded_among_several(tmp_path: Path) -> None:
    result = _run(tmp_path, TWO)
    assert result.excluded_job_numbers()["unknown_partition"] == [3]
    assert len(result) == 2


def test_unknown_partition_runs_in_the_only_partition(tmp_path: Path) -> None:
    result = _run(tmp_path, ONE)
    assert result.excluded_job_numbers()["unknown_partition"] == []
    assert len(result) == 3
