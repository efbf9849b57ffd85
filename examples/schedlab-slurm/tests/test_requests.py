"""Requests on a platform: NNodes -> Job.nodes, Partition -> request.partition,
ReqMem per node -> request.memory, gres/gpu of ReqTRES/AllocTRES -> request.gpus,
and simulations that use them (README, "Requests on a platform")."""

from __future__ import annotations

from pathlib import Path

import schedlab

from schedlab_slurm.values import tres_gpus
from schedlab_slurm.writer import write


def _requests(job: schedlab.Job) -> dict[str, object]:
    return {k: v for k, v in job.extras.items() if k.startswith("request.")}


def test_tres_gpus() -> None:
    assert tres_gpus("billing=36,cpu=36,mem=48000M,node=3") is None
    assert tres_gpus("cpu=4,gres/gpu=2,node=1") == 2
    assert tres_gpus("cpu=4,gres/gpu:a100=2,gres/gpu:v100=1") == 3
    assert tres_gpus("gres/gpu=4,gres/gpu:a100=4") == 4
    assert tres_gpus("") is None


def test_xdmod_requests(slurm_dir: Path) -> None:
    jobs = schedlab.read(slurm_dir / "xdmod_accounting-logs.log").jobs
    # 32 nodes, 256 CPUs, 3000Mc: per CPU, the SWF requested memory
    assert jobs[0].nodes == 32 and jobs[0].requested_memory == 3000 * 1024
    assert _requests(jobs[0]) == {"request.partition": "general-compute"}
    # 3 nodes, 36 CPUs, 48000Mn: per node, kept in bytes as well
    assert jobs[1].nodes == 3 and jobs[1].requested_memory == 48000 * 1024 / 12
    assert _requests(jobs[1]) == {
        "request.partition": "general-compute",
        "request.memory": 48000 * 1024**2,
    }
    # empty Partition, ReqTRES empty, AllocTRES gres/gpu=2
    assert _requests(jobs[3]) == {"request.gpus": 2}


def test_round_trip_keeps_records_and_counts_no_request_loss(
    slurm_dir: Path, tmp_path: Path
) -> None:
    for name in ("xdmod_accounting-logs.log", "slurm_sim_tools_sacct_dump2110.log"):
        path = slurm_dir / name
        out = tmp_path / name
        losses = write(schedlab.read(path), out)
        assert out.read_bytes() == path.read_bytes()
        assert not [k for k in losses.fields() if "request." in k], losses


PLATFORM = """\
[platform]
name = "slurm requests"
sharing = "exclusive"

[node_groups.thin]
count = 40
cores = 12
memory = "{memory}"

[node_groups.gpu]
count = 4
cores = 12
memory = "{memory}"
gpus = 2

[partitions.gpu]
nodes = ["gpu"]

[partitions.general-compute]
nodes = ["thin", "gpu"]
"""


def _platform(tmp_path: Path, memory: str = "64GiB") -> Path:
    path = tmp_path / "platform.toml"
    path.write_text(PLATFORM.format(memory=memory), encoding="utf-8")
    return path


def test_nodes_and_partition_on_a_platform(slurm_dir: Path, tmp_path: Path) -> None:
    w = schedlab.read(slurm_dir / "xdmod_accounting-logs.log")
    result = schedlab.simulate(w, backfill="easy", platform=_platform(tmp_path))
    assert result.allocations is not None
    placed = dict(
        zip((j.job_number for j in result.workload.jobs), result.allocations, strict=True)
    )
    # Job.nodes: exactly that many distinct nodes; request.partition: not the
    # first partition ("gpu"), which a job without a partition would get
    for number, nodes in ((1, 32), (2, 3), (3, 4)):
        assert len(set(placed[number])) == nodes
    assert result.stats["platform"]["default_partition"] == 0


def test_memory_per_node_decides_fit(slurm_dir: Path, tmp_path: Path) -> None:
    w = schedlab.read(slurm_dir / "xdmod_accounting-logs.log")
    # 40 GiB nodes: job 2 asks 48000 MiB per node (never fits), job 3 12 x 3000 MiB
    result = schedlab.simulate(w, backfill="easy", platform=_platform(tmp_path, "40GiB"))
    assert result.excluded_job_numbers()["never_fits"] == [2]


def test_gpu_job_lands_on_gpu_nodes(slurm_dir: Path, tmp_path: Path) -> None:
    # the real GPU record of xdmod_accounting-logs.log (line 4) ran on two nodes
    # but its CPU counts are 0; give it 2 nodes x 1 CPU and a 10 minute run
    line = (slurm_dir / "xdmod_accounting-logs.log").read_text().splitlines()[3]
    fields = line.split("|")
    fields[3] = "general-compute"
    fields[13] = "2016-08-01T07:14:09"
    fields[14] = "00:10:00"
    fields[17:20] = ["2", "2", "2"]
    path = tmp_path / "gpu.log"
    path.write_text("|".join(fields) + "\n", encoding="utf-8")
    (job,) = schedlab.read(path).jobs
    assert job.nodes == 2 and _requests(job)["request.gpus"] == 2
    result = schedlab.simulate(schedlab.read(path), backfill="easy", platform=_platform(tmp_path))
    assert result.allocations is not None
    (nodes,) = result.allocations
    assert sorted(nodes) == ["gpu[0]", "gpu[1]"]
