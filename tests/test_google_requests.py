"""Google 2019 requests on a platform: normalized units, no invented absolute
amounts, one node per instance (docs/formats/google.md, "Requests on a
platform"). The trace is the generated v3 fixture (the stored 2019 sample has no
requests)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import schedlab
from schedlab.formats.google.fixtures import generate_trace

#: cores = normalized CPU x cpu_scale (100); memory = normalized x memory_scale
#: (10**6) x 1024 bytes: the largest machine of the trace, in the reader's units.
PLATFORM = """\
[platform]
name = "google normalized"
sharing = "shared"

[node_groups.m]
count = 6
cores = 100
memory = 1024000000

[partitions.cell]
nodes = ["m"]
"""


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("g") / "cell"
    generate_trace(path, collections=60, machines=6, shards=1, seed=3)
    return path


def test_requests_stay_normalized(trace: Path) -> None:
    jobs = [j for j in schedlab.read(trace).jobs if j.extras.get("requested_cpus")]
    assert len(jobs) > 20
    for job in jobs:
        cpus = job.extras["requested_cpus"]
        assert job.requested_processors == max(1, math.ceil(cpus * 100))
        memory = job.extras["requested_memory_normalized"]
        assert job.requested_memory * job.requested_processors == pytest.approx(memory * 1e6)
        assert not [k for k in job.extras if k.startswith("request.")]


def test_normalized_platform(trace: Path, tmp_path: Path) -> None:
    path = tmp_path / "platform.toml"
    path.write_text(PLATFORM, encoding="utf-8")
    workload = schedlab.read(trace)
    result = schedlab.simulate(workload, backfill="easy", platform=path)
    assert result.allocations is not None and len(result) > 30
    # one node per instance: a job of more instances than machines never fits
    many = [j.job_number for j in workload.jobs if (j.nodes or 0) > 6]
    assert many and result.excluded_job_numbers()["never_fits"] == many
    for nodes, job in zip(result.allocations, result.workload.jobs, strict=True):
        assert len(set(nodes)) == job.nodes
