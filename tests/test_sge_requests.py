"""Grid Engine requests on a platform: consumables from the category (``gpu=N``
per slot -> ``request.gpus`` as the job total), memory per slot, and a simulation
that uses them (docs/formats/sge.md, "Requests on a platform")."""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from schedlab.formats.sge.mapping import category_consumables, parse_consumables
from schedlab.formats.sge.writer import write_accounting

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "sge"
UGE = DATA / "xdmod_uge_accounting-logs.log"
OCS = DATA / "ocs-9.0.0_release-notes_accounting.jsonl"
UGE8X = DATA / "pretty-accounting_uge8x_ms_accounting.txt"

pytestmark = pytest.mark.realdata


def _requests(job: schedlab.Job) -> dict[str, object]:
    return {k: v for k, v in job.extras.items() if k.startswith("request.")}


def test_consumables_of_a_category() -> None:
    text = "-u u -q gpu_queue -l gpu=1,m_mem_free=1.000G,lic=3,highmem=false -pe threads 16"
    assert parse_consumables(text) == {"gpus": 1.0, "lic": 3.0}
    # limits, memory sizes, booleans and reserved request names are not consumables
    assert parse_consumables("-l h_rt=900,h_vmem=1000,num_proc=8,r_gpu=false,nodes=2") == {}
    assert parse_consumables("-l gpus=2,gpu=4") == {"gpus": 2.0}


def test_uge_gpu_per_slot_times_slots() -> None:
    jobs = {j.job_number: j for j in schedlab.read(UGE).jobs}
    # -l gpu=1,m_mem_free=1.000G -pe threads 16: 1 GPU and 1 GiB per slot
    assert _requests(jobs[2]) == {"request.gpus": 16}
    assert jobs[2].requested_processors == 16
    assert jobs[2].requested_memory == 1024 * 1024  # KB per slot
    assert _requests(jobs[1]) == {}


def test_ocs_jsonl_gpu() -> None:
    (job,) = schedlab.read(OCS).jobs[:1]
    assert job.extras["request.gpus"] == 2  # "-l gpu=2", one slot
    assert job.requested_processors == 1


def test_booleans_are_not_requests() -> None:
    # -l h_rt=900,h_vmem=1G,highmem=false,r_gpu=false
    for job in schedlab.read(UGE8X).jobs:
        assert _requests(job) == {}


PLATFORM = """\
[platform]
name = "sge gpus"
sharing = "shared"

[node_groups.cpu]
count = 1
cores = 32
memory = "64GiB"

[node_groups.gpu]
count = 1
cores = 32
memory = "64GiB"
gpus = {gpus}

[partitions.all]
nodes = ["cpu", "gpu"]
"""


def _simulate(tmp_path: Path, gpus: int) -> schedlab.Result:
    path = tmp_path / "platform.toml"
    path.write_text(PLATFORM.format(gpus=gpus), encoding="utf-8")
    return schedlab.simulate(schedlab.read(UGE), backfill="easy", platform=path)


def test_gpu_job_takes_the_gpu_node(tmp_path: Path) -> None:
    result = _simulate(tmp_path, 16)
    assert result.allocations is not None
    by_number = dict(
        zip((j.job_number for j in result.workload.jobs), result.allocations, strict=True)
    )
    # 16 cores would fit on cpu[0] alone: the 16 GPUs bring in the GPU node
    assert "gpu[0]" in by_number[2]
    assert by_number[1] == ("cpu[0]",)


def test_gpu_job_over_the_gpus_never_fits(tmp_path: Path) -> None:
    result = _simulate(tmp_path, 8)
    assert result.excluded_job_numbers()["never_fits"] == [2]


def test_category_consumables_inverse() -> None:
    extras = {
        "request.gpus": 4,
        "request.lic": 3,
        "request.gpu": 1,  # read back as gpus: not written
        "request.h_rt": 5,  # a built-in complex
        "request.bad-name": 1,
        "request.partition": "gpu",
    }
    assert category_consumables(extras, 2) == {
        "request.gpus": "gpu=2",
        "request.lic": "lic=1.5",
    }
    assert category_consumables(extras, 0) == {}
    # 1 / 49 per slot does not multiply back to exactly 1: left out
    assert category_consumables({"request.lic": 1}, 49) == {}
    assert category_consumables({"request.lic": 2}, 3) == {"request.lic": f"lic={2 / 3!r}"}


@pytest.mark.parametrize("layout", ["colon", "jsonl"])
def test_jobs_from_elsewhere_keep_their_consumables(tmp_path: Path, layout: str) -> None:
    jobs = [
        schedlab.Job(
            job_number=n,
            submit_time=10.0 * n,
            wait_time=5.0,
            run_time=60.0,
            allocated_processors=slots,
            requested_processors=req,
            status=1,
            extras={"request.gpus": gpus, "request.lic": 2 * req, "request.partition": "p"},
        )
        for n, slots, req, gpus in ((1, 4, 4, 4), (2, 2, 8, 8), (3, 49, 49, 1))
    ]
    path = tmp_path / ("accounting.jsonl" if layout == "jsonl" else "accounting")
    losses = write_accounting(schedlab.Workload.from_jobs(jobs), path, layout=layout)
    back = schedlab.read(path).jobs
    # 1 GPU over 49 slots is not exact per slot: written without it, reported
    assert [_requests(j) for j in back] == [
        {"request.gpus": 4, "request.lic": 8},
        {"request.gpus": 8, "request.lic": 16},
        {"request.lic": 98},
    ]
    assert {k for k in losses.fields() if k.startswith("extras.")} == {
        "extras.request.gpus",
        "extras.request.partition",
    }
