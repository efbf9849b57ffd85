"""EASY with ``order=sjbf`` on a platform breaks ties between equal estimates by
job order, as on the single pool (docs/simulation.md, "Job order ... breaks every
tie"), so one shared node of N cores, or N one-core exclusive nodes, gives the
single pool's schedule job for job (docs/platform.md) under every policy. It broke
them by queue order: ``largest`` and ``wfp3`` gave other schedules."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab.model import Job, Workload
from schedlab.platform import platform_from_dict


def one_node(sharing: str, count: int, cores: int) -> object:
    return platform_from_dict(
        {
            "platform": {"sharing": sharing},
            "node_groups": {"n": {"count": count, "cores": cores}},
            "partitions": {"p": {"nodes": ["n"]}},
        }
    )


def starts(result: object) -> list[float]:
    a = result.workload.to_arrays()  # type: ignore[attr-defined]
    return list(a["submit_time"] + a["wait_time"])


@pytest.mark.parametrize("policy", ["largest", "fcfs", "wfp3"])
def test_equal_estimates_backfill_in_job_order(policy: str) -> None:
    # Job 2 (4 cores) heads the queue behind job 1; jobs 3 (1 core) and 4 (2
    # cores) arrive together with the same estimate and only one fits before the
    # head's shadow time: job 3, the first in job order, as on the pool.
    w = Workload.from_jobs(
        [
            Job(job_number=1, submit_time=0, run_time=100, requested_processors=2,
                requested_time=100),
            Job(job_number=2, submit_time=1, run_time=100, requested_processors=4,
                requested_time=100),
            Job(job_number=3, submit_time=2, run_time=10, requested_processors=1,
                requested_time=10),
            Job(job_number=4, submit_time=2, run_time=10, requested_processors=2,
                requested_time=10),
        ]
    )  # fmt: skip
    kw = dict(policy=policy, backfill="easy", backfill_options={"order": "sjbf"}, progress=False)
    pool = starts(schedlab.simulate(w, procs=4, **kw))
    assert pool == [0, 100, 2, 12]
    for platform in (one_node("shared", 1, 4), one_node("exclusive", 4, 1)):
        assert starts(schedlab.simulate(w, platform=platform, **kw)) == pool


def test_kth_with_easypp_and_sjbf_is_the_pools_schedule(swf_dir: Path) -> None:
    w = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    cols = w.to_arrays()
    w = schedlab.Workload(w.header, columns=cols.take(np.arange(1500)))
    kw = dict(
        policy="largest", backfill="easy", backfill_options={"order": "sjbf"},
        estimator="easy++", progress=False,
    )  # fmt: skip
    pool = starts(schedlab.simulate(w, procs=100, **kw))
    nodes = starts(schedlab.simulate(w, platform=one_node("exclusive", 100, 1), **kw))
    assert nodes == pool
