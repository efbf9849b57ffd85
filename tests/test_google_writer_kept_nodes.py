"""The Google v3 writer and jobs read without their tasks (``tasks=False``) whose
kept events are written back: the instances are rebuilt so that the reader gives
back ``nodes``, ``hosts``, the processor counts, the memory request, the usage and
the extras derived from the instances; what cannot come back is reported, never
lost silently."""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
import schedlab
from schedlab.formats.google.fixtures import generate_trace
from schedlab.losses import Losses
from schedlab.model import Job, Workload

#: Job fields the reader derives from the instances.
_DERIVED = (
    "allocated_processors",
    "requested_processors",
    "requested_memory",
    "nodes",
    "hosts",
    "average_cpu_time",
    "used_memory",
)
#: Extras the reader derives from the instances.
_DERIVED_EXTRAS = (
    "instances",
    "requested_cpus",
    "requested_memory_normalized",
    "used_cpu_seconds_ncu",
    "used_memory_normalized",
    "max_memory_normalized",
    "usage_windows",
)
#: What a Google-to-Google round trip may report without losing a job's values.
_HEADER_ONLY = ("header.",)

_US = 1_000_000
_T0 = 600 * _US  # raw time of second 0


def _write_read(workload: Workload, tmp_path: Path, **options: object) -> tuple[Workload, Losses]:
    out = tmp_path / "back"
    with schedlab.collect_losses() as losses:
        schedlab.write(workload, out, format="google", **options)
    return schedlab.read(out, format="google", tasks=False, **options), losses


def _field_differences(a: Job, b: Job) -> list[str]:
    """Every field (and every extra) of ``a`` that ``b`` gives differently."""
    out = []
    for field in attrs.fields(Job):
        if field.name == "extras":
            continue
        if getattr(a, field.name) != getattr(b, field.name):
            out.append(field.name)
    for key in sorted(set(a.extras) | set(b.extras)):
        if a.extras.get(key) != b.extras.get(key):
            out.append(f"extras.{key}")
    return out


def _job_losses(losses: Losses) -> list[str]:
    return [str(loss) for loss in losses if not loss.field.startswith(_HEADER_ONLY)]


def _write_table(directory: Path, table: str, rows: list[dict]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    with gzip.open(directory / f"{table}-000000000000.json.gz", "wt") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")


def _instance(cid: int, index: int, time: int, kind: int, machine: int | None, **extra) -> dict:
    return {
        "time": str(time),
        "type": kind,
        "collection_id": str(cid),
        "instance_index": index,
        "collection_type": 0,
        "priority": 200,
        "machine_id": None if machine is None else str(machine),
        **extra,
    }


def _hand_made_trace(directory: Path) -> Path:
    """Three jobs:

    * 8: three instances on two machines (0 and 2 share one), different CPU and
      memory requests, usage on each (four windows: a scheduled instance without
      usage would make the job's usage unknown);
    * 9: two instances, one never scheduled (fewer processors allocated than
      requested);
    * 10: two instances already placed when the trace begins (SUBMIT before the
      trace with a machine, as the 2011 trace has them), no CPU request, usage.
    """
    submit, start, end = _T0 + 10 * _US, _T0 + 20 * _US, _T0 + 120 * _US
    collections = []
    for cid in (8, 9):
        for time, kind in ((submit, 0), (start, 3), (end, 6)):
            collections.append(
                {
                    "time": str(time),
                    "type": kind,
                    "collection_id": str(cid),
                    "collection_type": 0,
                    "priority": 200,
                    "user": "alice",
                    "scheduling_class": 1,
                }
            )
    collections.append(
        {"time": "0", "type": 0, "collection_id": "10", "collection_type": 0, "priority": 0}
    )
    requests = {0: (0.0234375, 0.0110), 1: (0.015625, 0.0072), 2: (0.01171875, 0.0031)}
    instances = []
    for index, (cpus, memory) in requests.items():
        machine = 1001 if index != 1 else 1002
        request = {"resource_request": {"cpus": cpus, "memory": memory}}
        instances.append(_instance(8, index, submit, 0, None, **request))
        instances.append(_instance(8, index, start, 3, machine, **request))
        instances.append(_instance(8, index, end, 6, machine, **request))
    # job 9: instance 0 runs (2 processors), instance 1 waits for 3 more
    instances.append(_instance(9, 0, submit, 0, None, resource_request={"cpus": 0.02}))
    instances.append(_instance(9, 0, start, 3, 2001, resource_request={"cpus": 0.02}))
    instances.append(_instance(9, 0, end, 6, 2001, resource_request={"cpus": 0.02}))
    instances.append(_instance(9, 1, submit, 0, None, resource_request={"cpus": 0.03}))
    for index, machine in ((0, 3001), (1, 3002)):
        instances.append(_instance(10, index, 0, 0, machine))
    usage = []
    for cid, index, rate, memory, peak in (
        (8, 0, 0.0125, 0.0061, 0.0099),
        (8, 2, 0.0047, 0.0022, 0.0030),
        (8, 1, 0.0031, 0.0012, 0.0020),
        (10, 1, 0.0080, 0.0050, 0.0070),
    ):
        for a, b in ((start, start + 50 * _US), (start + 50 * _US, end)):
            if cid == 8 and index in (1, 2) and a != start:
                continue
            usage.append(
                {
                    "start_time": str(a),
                    "end_time": str(b),
                    "collection_id": str(cid),
                    "instance_index": index,
                    "collection_type": 0,
                    "average_usage": {"cpus": rate, "memory": memory},
                    "maximum_usage": {"cpus": rate * 2, "memory": peak},
                }
            )
    _write_table(directory, "collection_events", collections)
    _write_table(directory, "instance_events", instances)
    _write_table(directory, "instance_usage", usage)
    return directory


@pytest.fixture
def hand_made(tmp_path: Path) -> Path:
    return _hand_made_trace(tmp_path / "trace")


def test_hand_made_jobs_keep_every_field(hand_made: Path, tmp_path: Path):
    source = schedlab.read(hand_made, format="google", tasks=False)
    by_cid = {j.extras["collection_id"]: j for j in source}
    # the case the trace was made for (so the test checks what it means to)
    assert by_cid[8].nodes == 3 and by_cid[8].hosts == ("1001", "1002")
    assert by_cid[8].average_cpu_time is not None and by_cid[8].extras["usage_windows"] == 4
    assert (by_cid[9].requested_processors, by_cid[9].allocated_processors) == (5, 2)
    assert by_cid[10].nodes == 2 and by_cid[10].hosts == ("3001", "3002")
    assert by_cid[10].requested_processors is None
    back, losses = _write_read(source, tmp_path)
    assert _job_losses(losses) == []
    assert len(back) == len(source)
    for a, b in zip(source, back, strict=True):
        assert _field_differences(a, b) == [], a.extras["collection_id"]


def test_hand_made_strict_cli_round_trip(hand_made: Path, tmp_path: Path):
    out = tmp_path / "cli"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "schedlab",
            "convert",
            "--from",
            "google",
            "-R",
            "tasks=false",
            "--to",
            "google",
            "--strict-lossless",
            str(hand_made),
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    source = schedlab.read(hand_made, format="google", tasks=False)
    if done.returncode == 0:
        back = schedlab.read(out, format="google", tasks=False)
        # nothing reported lost: then nothing may differ
        for a, b in zip(source, back, strict=True):
            assert _field_differences(a, b) == [], a.extras["collection_id"]
    else:  # a loss was reported: it must be a real one, named on one line
        assert done.returncode == 2 and "Traceback" not in done.stderr
        pytest.fail(f"strict conversion refused: {done.stderr.strip()}")


def test_real_2011_sample_keeps_nodes_hosts_and_usage(shared_data: Path, tmp_path: Path):
    """The real 2011 sample (the v2 reader makes the same kept events as v3): the
    jobs read without tasks come back with every field derived from instances."""
    directory = shared_data / "google" / "clusterdata2011_v2_sample"
    source = schedlab.read(directory, format="google-v2", tasks=False)
    scales = {k: source.meta["normalization"][k] for k in ("cpu_scale", "memory_scale")}
    assert sum(1 for j in source if j.nodes and j.nodes > 1) > 50
    assert sum(1 for j in source if j.hosts) > 100
    assert sum(1 for j in source if j.extras["usage_windows"]) > 50
    back, losses = _write_read(source, tmp_path, **scales)
    for field in (*_DERIVED, *(f"extras.{k}" for k in _DERIVED_EXTRAS)):
        assert field not in losses, str(losses)
    for a, b in zip(source, back, strict=True):
        for field in _DERIVED:
            assert getattr(a, field) == getattr(b, field), (a.job_number, field)
        for key in _DERIVED_EXTRAS:
            assert a.extras.get(key) == b.extras.get(key), (a.job_number, key)


def test_generated_trace_round_trips_without_tasks(tmp_path: Path):
    trace = generate_trace(tmp_path / "gen", collections=300, shards=2, seed=11)
    source = schedlab.read(trace.directory, format="google", tasks=False)
    assert sum(1 for j in source if j.nodes and j.nodes > 1) > 50
    back, losses = _write_read(source, tmp_path)
    assert _job_losses(losses) == []
    for a, b in zip(source, back, strict=True):
        assert _field_differences(a, b) == [], a.job_number


def _changed(job: Job, **changes: object) -> Job:
    return attrs.evolve(job, **changes)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"hosts": ("1001", "1002", "1003", "1004")}, "hosts"),  # more hosts than nodes
        ({"hosts": ("web-1", "web-2")}, "hosts"),  # not machine ids
        ({"nodes": None}, "nodes"),
        ({"requested_processors": 9}, "requested_processors"),  # beyond every instance
        # no usage record gives back a used memory without an average CPU time
        ({"average_cpu_time": None}, "used_memory"),
    ],
)
def test_values_the_instances_cannot_give_are_reported(
    hand_made: Path, tmp_path: Path, changes: dict, field: str
):
    source = schedlab.read(hand_made, format="google", tasks=False)
    job = next(j for j in source if j.extras["collection_id"] == 8)
    if field == "requested_processors":
        job = _changed(job, nodes=1)  # no second instance to hold the rest
    job = _changed(job, **changes)
    workload = Workload.from_jobs([job], source.header)
    back, losses = _write_read(workload, tmp_path)
    (again,) = back
    differing = [f for f in _DERIVED if getattr(job, f) != getattr(again, f)]
    assert field in differing
    for name in differing:
        assert name in losses, (name, str(losses))


def test_changed_usage_is_carried_or_reported(hand_made: Path, tmp_path: Path):
    source = schedlab.read(hand_made, format="google", tasks=False)
    job = next(j for j in source if j.extras["collection_id"] == 8)
    # a new average CPU time: the kept totals no longer give it, a synthesized
    # usage record does (the kept totals it replaces are reported)
    job = _changed(job, average_cpu_time=1.5)
    back, losses = _write_read(Workload.from_jobs([job], source.header), tmp_path)
    (again,) = back
    assert math.isclose(again.average_cpu_time, 1.5, rel_tol=1e-9)
    assert math.isclose(again.used_memory, job.used_memory, rel_tol=1e-9)
    assert "average_cpu_time" not in losses and "used_memory" not in losses
    for key in ("used_cpu_seconds_ncu", "usage_windows"):
        assert again.extras[key] != job.extras[key]
        assert f"extras.{key}" in losses


def test_changed_extras_are_reported(hand_made: Path, tmp_path: Path):
    source = schedlab.read(hand_made, format="google", tasks=False)
    job = next(j for j in source if j.extras["collection_id"] == 8)
    job = _changed(job, extras={**job.extras, "instances": 7})
    back, losses = _write_read(Workload.from_jobs([job], source.header), tmp_path)
    (again,) = back
    assert again.extras["instances"] == 3 == again.nodes
    assert [str(loss) for loss in losses if loss.field == "extras.instances"] == [
        "extras.instances: 1 record, not carried (derived again from the rebuilt instances)"
    ]
