"""``infer_platform`` from the generic fields every reader can fill: the hosts jobs
ran on (``Job.hosts``) and the partitions they asked for (``request.partition``),
as the Slurm example plugin reads them."""

from __future__ import annotations

import schedlab
from schedlab.platform import infer_platform


def job(number: int, hosts: tuple[str, ...], procs: int, partition: str) -> schedlab.Job:
    return schedlab.Job(
        job_number=number,
        submit_time=float(number),
        wait_time=0.0,
        run_time=10.0,
        allocated_processors=procs,
        hosts=hosts,
        extras={"request.partition": partition},
    )


def test_hosts_and_requested_partitions() -> None:
    w = schedlab.Workload.from_jobs(
        [
            job(1, ("n1", "n2"), 16, "batch"),
            job(2, ("n3",), 4, "gpu"),
            job(3, ("n1",), 6, "batch"),
        ]
    )
    found = infer_platform(w)
    (group,) = found.platform.node_groups
    assert (group.count, group.cores) == (3, 8)  # n1..n3; 16 processors over 2 hosts
    assert [p.name for p in found.platform.partitions] == ["batch", "gpu"]
    assert found.platform.sharing == "shared"
    assert any("request.partition" in g for g in found.guesses)
    result = schedlab.simulate(w, backfill="easy", platform=found.platform, progress=False)
    assert result.stats["jobs_simulated"] == 3
    assert {p for p in result.meta["partitions"]} == {"batch", "gpu"}
