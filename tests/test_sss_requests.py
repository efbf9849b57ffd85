"""SSS requests on a platform: NodeCount -> Job.nodes, Requested Memory (a job
total) -> KB per processor, read by the simulator (docs/formats/sss.md,
"Requests on a platform"). Data: the specification's moderate example."""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab

EXAMPLE = Path(__file__).parent / "data" / "sss" / "example-2-moderate.xml"

PLATFORM = """\
[platform]
name = "sss"
sharing = "shared"

[node_groups.n]
count = 3
cores = 8
memory = "{memory}"

[partitions.batch]
nodes = ["n"]
queues = ["batch_normal"]
"""


def _job_file(tmp_path: Path, node_count: int | None) -> Path:
    """The example with a SubmissionTime (it has none: a simulation needs one) and,
    if given, a job-level NodeCount."""
    extra = "<SubmissionTime>1051557000</SubmissionTime>"
    if node_count is not None:
        extra += f"\n  <NodeCount>{node_count}</NodeCount>"
    text = EXAMPLE.read_text(encoding="utf-8")
    text = text.replace("</JobState>", "</JobState>\n  " + extra, 1)
    path = tmp_path / "job.xml"
    path.write_text(text, encoding="utf-8")
    return path


def _simulate(tmp_path: Path, node_count: int | None, memory: str) -> schedlab.Result:
    platform = tmp_path / "platform.toml"
    platform.write_text(PLATFORM.format(memory=memory), encoding="utf-8")
    workload = schedlab.read(_job_file(tmp_path, node_count))
    return schedlab.simulate(workload, backfill="easy", platform=platform)


def test_example_requests() -> None:
    (job,) = schedlab.read(EXAMPLE).jobs
    # <Processors op="GE">12</Processors> <Memory op="GE" units="GB">2</Memory>
    assert job.requested_processors == 12
    assert job.requested_memory == pytest.approx(2 * 1024**2 / 12)
    assert job.nodes is None  # no NodeCount: a flexible request
    assert not [k for k in job.extras if k.startswith("request.")]


def test_node_count_is_job_nodes(tmp_path: Path) -> None:
    (job,) = schedlab.read(_job_file(tmp_path, 2)).jobs
    assert job.nodes == 2


def test_fixed_nodes_take_that_many_nodes(tmp_path: Path) -> None:
    result = _simulate(tmp_path, 2, "4GiB")
    assert result.allocations is not None
    (nodes,) = result.allocations
    assert len(set(nodes)) == 2


def test_memory_per_node_of_a_fixed_request(tmp_path: Path) -> None:
    # 2 GB over 2 nodes is 1 GiB per node: more than 900 MiB nodes hold ...
    fixed = _simulate(tmp_path, 2, "900MiB")
    assert fixed.excluded_job_numbers()["never_fits"] == [1]
    # ... while a flexible request spreads over the 3 nodes (5 cores each fit)
    flexible = _simulate(tmp_path, None, "900MiB")
    assert flexible.excluded_job_numbers()["never_fits"] == []
    assert flexible.allocations is not None
    assert len(set(flexible.allocations[0])) == 3
