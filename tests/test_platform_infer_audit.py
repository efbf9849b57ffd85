"""``schedlab platform infer`` agrees with the simulator and reads what the trace
tells (audit `platform`, findings F1, F3, F5 and F7):

* F1: partitions and queues the trace does not name get names the simulator maps
  jobs to (``partitionN``; a queue's number as text), so a job of trace partition
  or queue N lands in the partition inferred for N;
* F3: every record of a Grid Engine job made of several records counts (hosts,
  slots, queues);
* F5: the GPUs and consumables jobs ask for are given to the nodes;
* F7: no false "MaxProcs/MaxNodes" line without machine events, and the same
  sharing for a Google file alone and for its whole directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from schedlab.platform import (
    NodeGroup,
    Partition,
    Platform,
    infer_platform,
    load_platform,
    trace_partition_name,
)
from schedlab.testing import run_cli as run

# --------------------------------------------------------------------------- F1


def _partitions_of(result: schedlab.SimulationResult) -> dict[int, str]:
    """Job number -> the partition the simulation ran it in."""
    return {j.job_number: j.extras["schedlab.partition"] for j in result.workload.jobs if j.extras}


UNNAMED_PARTITIONS = """\
; MaxNodes: 4
; MaxProcs: 4
1 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 1 -1 -1
2 1 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 2 -1 -1
3 2 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 2 -1 -1
"""


def test_inferred_unnamed_partitions_receive_their_jobs(tmp_path: Path, capsys) -> None:
    trace = tmp_path / "w.swf"
    trace.write_text(UNNAMED_PARTITIONS, encoding="utf-8")
    out = tmp_path / "p.toml"
    code, _, err = run(capsys, "platform", "infer", str(trace), "-o", str(out))
    assert code == 0, err
    platform = load_platform(out)
    assert [p.name for p in platform.partitions] == ["partition1", "partition2"]
    result = schedlab.simulate(schedlab.read(trace), platform=out, progress=False)
    assert _partitions_of(result) == {1: "partition1", 2: "partition2", 3: "partition2"}
    assert result.stats["platform"]["default_partition"] == 0


def test_header_partition_names_made_valid_still_match(tmp_path: Path) -> None:
    trace = tmp_path / "w.swf"
    trace.write_text(
        "; MaxNodes: 2\n; MaxProcs: 2\n; Partition: 1 main/part\n; Partition: 2 ***\n"
        "1 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 1 -1 -1\n"
        "2 1 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 -1 2 -1 -1\n",
        encoding="utf-8",
    )
    workload = schedlab.read(trace)
    found = infer_platform(workload)
    assert [p.name for p in found.platform.partitions] == ["main_part", "partition2"]
    assert trace_partition_name(1, "main/part") == "main_part"
    assert trace_partition_name(2, "***") == trace_partition_name(2) == "partition2"
    result = schedlab.simulate(workload, platform=found.platform, progress=False)
    assert _partitions_of(result) == {1: "main_part", 2: "partition2"}


UNNAMED_QUEUES = """\
; MaxNodes: 4
; MaxProcs: 4
1 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 0 -1 -1 -1
2 1 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 3 -1 -1 -1
"""


def test_inferred_unnamed_queues_are_names_the_simulator_matches(tmp_path: Path) -> None:
    trace = tmp_path / "w.swf"
    trace.write_text(UNNAMED_QUEUES, encoding="utf-8")
    workload = schedlab.read(trace)
    found = infer_platform(workload)
    (default,) = found.platform.partitions
    assert default.queues == ("0", "3")
    assert "queue 3 has no Queue: entry; listed by its number '3'" in found.guesses
    # The documented "edit it" step: split the inferred queues over two partitions.
    edited = Platform(
        (NodeGroup("a", 2, 1), NodeGroup("b", 2, 1)),
        (
            Partition("first", ("a",), queues=(default.queues[1],)),
            Partition("second", ("b",), queues=(default.queues[0],)),
        ),
    )
    result = schedlab.simulate(workload, platform=edited, progress=False)
    assert _partitions_of(result) == {1: "second", 2: "first"}
    assert result.stats["platform"]["default_partition"] == 0


# --------------------------------------------------------------------------- F3

RECORD = (
    "myqueue:HOST:jdoe:jdoe:mpi-mem-test:JOB:sge:0:1310761621:1311095354:1311095414:0:0:60:"
    "60.050000:0.080000:104188.000000:0:0:0:0:28001:0:0:0.000000:24:0:0:0:41:549:NONE:"
    "defaultdepartment:mype:SLOTS:0:60.130000:7.335452:0.000044:-l h_rt=36000,qname=myqueue "
    "-pe mype 1:0.000000:NONE:189153280.000000:0:0"
)


def _record(host: str, job: int, slots: int, queue: str = "myqueue") -> str:
    text = RECORD.replace("HOST", host).replace(":JOB:", f":{job}:")
    return queue + text[len("myqueue") :].replace(":SLOTS:", f":{slots}:")


def test_grid_engine_jobs_of_several_records_count(tmp_path: Path) -> None:
    trace = tmp_path / "accounting"
    trace.write_text(
        "\n".join(
            [
                _record("hostA", 22947, 4),
                _record("hostB", 22947, 4, queue="other"),  # a restart elsewhere
                _record("hostC", 22948, 2),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    workload = schedlab.read(trace, format="sge")
    assert any("sge_records" in j.extras for j in workload.jobs)  # grouped by the reader
    found = infer_platform(workload)
    (group,) = found.platform.node_groups
    assert (group.count, group.cores) == (3, 4)  # hostA, hostB, hostC; 4 slots a record
    assert {q for p in found.platform.partitions for q in p.queues} == {"myqueue", "other"}
    assert found.platform.sharing == "shared"


def test_grid_engine_parallel_task_records_spread_the_job(tmp_path: Path) -> None:
    fields = _record("hostA", 7, 8).split(":")
    fields[41] = "NONE"
    master = ":".join(fields)
    tasks = []
    for host, task in (("hostB", "1.hostB"), ("hostC", "1.hostC")):
        fields = _record(host, 7, 1).split(":")
        fields[41] = task
        tasks.append(":".join(fields))
    trace = tmp_path / "accounting"
    trace.write_text("\n".join([master, *tasks]) + "\n", encoding="utf-8")
    found = infer_platform(schedlab.read(trace, format="sge"))
    (group,) = found.platform.node_groups
    # 8 slots over 3 hosts: at least 3 a host (a lower bound), not 8 on each.
    assert (group.count, group.cores) == (3, 3)


@pytest.mark.realdata
def test_real_grouped_grid_engine_file_gives_its_host_and_queue(shared_data: Path) -> None:
    trace = shared_data / "sge" / "xdmod_sge_accounting-logs.log"
    workload = schedlab.read(trace)
    assert all("sge_records" in j.extras for j in workload.jobs)
    found = infer_platform(workload)
    assert [p.name for p in found.platform.partitions] == ["myqueue"]
    assert found.platform.sharing == "shared"
    assert not any("largest job" in g or "'default'" in g for g in found.guesses)


# --------------------------------------------------------------------------- F5


def _job(number: int, procs: int, **fields: object) -> schedlab.Job:
    return schedlab.Job(
        job_number=number,
        submit_time=float(number),
        wait_time=0.0,
        run_time=10.0,
        requested_time=10.0,
        allocated_processors=procs,
        requested_processors=procs,
        **fields,  # type: ignore[arg-type]
    )


def test_gpus_and_consumables_jobs_ask_are_on_the_nodes() -> None:
    header = schedlab.Header()
    header.set("MaxNodes", 4)
    header.set("MaxProcs", 16)
    jobs = [
        _job(1, 8, nodes=2, extras={"request.gpus": 6, "request.licence": 3}),
        _job(2, 2, extras={"request.gpus": 2}),
        _job(3, 1, extras={"request.memory": 1024, "request.partition": None}),
    ]
    workload = schedlab.Workload(header, jobs=jobs)
    found = infer_platform(workload)
    (group,) = found.platform.node_groups
    assert group.gpus == 3  # 6 over job 1's 2 nodes; job 2's 2 on one node
    assert dict(group.consumables) == {"licence": 2}  # 3 over 2 nodes, rounded up
    assert not any("unknown: none" in g for g in found.guesses)
    assert any(g.startswith("GPUs per node 3: ") for g in found.guesses)
    result = schedlab.simulate(workload, platform=found.platform, progress=False)
    assert result.stats["jobs_simulated"] == 3


def test_no_gpu_request_says_so() -> None:
    header = schedlab.Header()
    header.set("MaxProcs", 4)
    found = infer_platform(schedlab.Workload(header, jobs=[_job(1, 2)]))
    assert found.platform.node_groups[0].gpus == 0
    assert "GPUs and consumables: no job asks for any; none" in found.guesses


def test_bad_gpu_request_is_a_guess_line_not_a_crash() -> None:
    header = schedlab.Header()
    header.set("MaxProcs", 4)
    jobs = [_job(1, 2, extras={"request.gpus": "many"}), _job(2, 1, extras={"request.gpus": 1})]
    found = infer_platform(schedlab.Workload(header, jobs=jobs))
    assert found.platform.node_groups[0].gpus == 0
    assert any("request.gpus='many' is not a non-negative number" in g for g in found.guesses)


@pytest.mark.realdata
@pytest.mark.parametrize(
    "name", ["ocs-9.0.0_release-notes_accounting.jsonl", "xdmod_uge_accounting-logs.log"]
)
def test_grid_engine_gpu_jobs_fit_their_inferred_platform(
    tmp_path: Path, capsys, shared_data: Path, name: str
) -> None:
    trace = shared_data / "sge" / name
    workload = schedlab.read(trace)
    asked = max(j.extras.get("request.gpus", 0) for j in workload.jobs)
    assert asked > 0
    out = tmp_path / "p.toml"
    code, printed, err = run(capsys, "platform", "infer", str(trace), "-o", str(out))
    assert code == 0, err
    assert "GPUs and consumables unknown" not in printed
    platform = load_platform(out)
    assert platform.node_groups[0].gpus >= asked  # one-host jobs: all of it on a node
    result = schedlab.simulate(workload, platform=out, progress=False)
    assert result.stats["excluded"].get("never_fits", 0) == 0
    assert result.stats["jobs_simulated"] == len(workload)


# --------------------------------------------------------------------------- F7


@pytest.mark.realdata
def test_google_messages_agree_and_sharing_is_the_same(shared_data: Path) -> None:
    folder = shared_data / "google" / "clusterdata2011_v2_sample"
    alone = infer_platform(schedlab.read(folder / "task_events-sample.csv"))
    whole = infer_platform(schedlab.read(folder))
    assert not any("MaxProcs/MaxNodes" in g for g in alone.guesses)
    assert any("cores per node" in g and "normalized" in g for g in alone.guesses)
    # (google4: the machine sizes of machine_events, no longer MaxProcs/MaxNodes)
    assert any("normalized" in g and "node groups from the machines'" in g for g in whole.guesses)
    assert alone.platform.sharing == whole.platform.sharing == "shared"


def test_empty_capacity_meta_is_not_a_header_shape() -> None:
    header = schedlab.Header()
    jobs = [_job(1, 4, hosts=("m1",)), _job(2, 2, hosts=("m2",))]
    workload = schedlab.Workload(header, jobs=jobs)
    workload.meta["capacity"] = {"machines": [], "cpus": [], "peak_machines": 0}
    found = infer_platform(workload)
    assert (found.platform.total_nodes, found.platform.node_groups[0].cores) == (2, 4)
    assert not any("MaxProcs/MaxNodes" in g for g in found.guesses)
    assert found.platform.sharing == "shared"
