"""What a platform run shows its reader (audit `platform`, findings F2, F4, F6):
`schedlab simulate` says the `default_partition` and `memory_unknown` counts; the
report's per-resource utilization never exceeds capacity when a job starts as
another ends; utilization of unbounded memory and of absent GPUs stays unknown
(`None`) when no job is simulated."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab.cli import main
from schedlab.report import usage_over_time
from schedlab.report_nodes import dimension_steps, node_schedule

# Two partitions whose queue names match none of the trace's queues (0 and 3):
# every job goes to the first one, counted as default_partition; shared nodes
# declaring memory, so the jobs asking none are counted as memory_unknown.
TWO_PARTITIONS = """
[platform]
sharing = "shared"
[node_groups.a]
count = 2
cores = 1
memory = "1G"
[node_groups.b]
count = 2
cores = 1
memory = "1G"
[partitions.first]
nodes = ["a"]
queues = ["queue3"]
[partitions.second]
nodes = ["b"]
queues = ["queue0"]
"""

NO_MEMORY_ASKED = """\
; MaxNodes: 4
; MaxProcs: 4
1 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 0 -1 -1 -1
2 1 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 3 -1 -1 -1
"""

# One partition, 8G nodes, every job asking memory: neither count is non-zero.
SHARED_MEMORY = """
[platform]
sharing = "shared"
[node_groups.n]
count = 2
cores = 4
memory = "8G"
[partitions.all]
nodes = ["n"]
"""

# Job 3 starts at 201 exactly when job 2 ends (hand-checked schedule).
TOUCHING = """\
; MaxProcs: 8
1 0 -1 100 2 -1 -1 2 100 3145728 1 1 1 -1 -1 -1 -1 -1
2 1 -1 200 2 -1 -1 2 200 3145728 1 1 1 -1 -1 -1 -1 -1
3 2 -1 100 4 -1 -1 4 100 4194304 1 1 1 -1 -1 -1 -1 -1
4 3 -1 50 1 -1 -1 1 50 3145728 1 1 1 -1 -1 -1 -1 -1
5 4 -1 50 1 -1 -1 1 50 1048576 1 1 1 -1 -1 -1 -1 -1
"""


def run(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out + err


def files(tmp_path: Path, platform: str, trace: str) -> tuple[Path, Path]:
    (tmp_path / "p.toml").write_text(platform)
    (tmp_path / "w.swf").write_text(trace)
    return tmp_path / "p.toml", tmp_path / "w.swf"


# --------------------------------------------------------------- F2: the counts


def test_simulate_prints_default_partition_and_memory_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    platform, trace = files(tmp_path, TWO_PARTITIONS, NO_MEMORY_ASKED)
    code, out = run(capsys, "simulate", str(trace), "--platform", str(platform), "--no-timings")
    assert code == 0, out
    assert (
        "note: 2 of 2 jobs matched no partition of the platform: placed in its first "
        "partition 'first' (default_partition)" in out
    )
    assert (
        "note: 2 of 2 jobs on shared nodes asked no memory: simulated holding none "
        "(memory_unknown)" in out
    )
    code, out = run(
        capsys, "simulate", str(trace), "--platform", str(platform), "--no-timings", "--json"
    )
    assert code == 0, out
    payload = json.loads(out)
    counts = payload["simulation"]["stats"]["platform"]
    assert (counts["default_partition"], counts["memory_unknown"]) == (2, 2)
    assert any("(default_partition)" in n for n in payload["notes"])
    assert any("(memory_unknown)" in n for n in payload["notes"])


def test_compare_and_sweep_print_the_same_platform_notes(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    platform, trace = files(tmp_path, TWO_PARTITIONS, NO_MEMORY_ASKED)
    code, out = run(
        capsys, "compare", str(trace), "-p", "fcfs,sjf", "--platform", str(platform), "--no-timings"
    )
    assert code == 0, out
    assert "(default_partition)" in out and "(memory_unknown)" in out
    out_dir = tmp_path / "sweep"
    code, out = run(
        capsys, "sweep", "-w", str(trace), "--platform", str(platform), "--workers", "1",
        "--out", str(out_dir),
    )  # fmt: skip
    assert code == 0, out
    assert "(default_partition)" in out and "(memory_unknown)" in out, out
    results = json.loads((out_dir / "results.json").read_text())
    assert "(default_partition)" in json.dumps(results)


def test_simulate_says_nothing_when_the_counts_are_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    platform, trace = files(tmp_path, SHARED_MEMORY, TOUCHING)
    code, out = run(capsys, "simulate", str(trace), "--platform", str(platform), "--no-timings")
    assert code == 0, out
    assert "default_partition" not in out and "memory_unknown" not in out


# ----------------------------------------------- F4: ends before starts at a time


def test_dimension_steps_never_exceed_capacity_when_a_job_starts_as_another_ends(
    tmp_path: Path,
) -> None:
    platform, trace = files(tmp_path, SHARED_MEMORY, TOUCHING)
    result = schedlab.simulate(schedlab.read(trace), platform=str(platform))
    cols = result.workload.to_arrays()
    start = cols["submit_time"] + cols["wait_time"]
    end = start + cols["run_time"]
    assert start[2] == end[1] == 201  # the tie this test is about
    steps = dimension_steps(cols, node_schedule(result.workload))
    assert set(steps) == {"cores", "memory"}
    for name, (times, level) in steps.items():
        assert np.all(level <= 100 + 1e-9), (name, times.tolist(), level.tolist())
    for name, (times, _) in steps.items():
        assert np.all(np.diff(times) > 0), name  # one level per distinct time
    times, level = steps["memory"]
    # at 201 job 3 (16G) holds both nodes' memory, jobs 1, 2, 4, 5 have ended
    assert level[times == 201].tolist() == [100.0]
    times, level = steps["cores"]
    assert level[times == 201].tolist() == [50.0]
    assert level[-1] == 0.0


def test_busy_processors_never_exceed_the_machine_at_touching_jobs(tmp_path: Path) -> None:
    """The report's single-pool series (``step_series``) keeps the level after
    every event of a time: a start at an end never adds up both."""
    _, trace = files(tmp_path, SHARED_MEMORY, TOUCHING)
    result = schedlab.simulate(schedlab.read(trace), procs=8)
    times, busy = usage_over_time(result.workload.to_arrays())["busy"]
    assert np.all(np.diff(times) > 0)
    assert busy.max() <= 8


# ------------------------------------------- F6: no job simulated, unknown stays


@pytest.mark.parametrize(
    ("memory", "expected"),
    [
        ("", {"cores": 0.0, "memory": None, "gpus": None}),
        ('memory = "8G"\n', {"cores": 0.0, "memory": 0.0, "gpus": None}),
    ],
)
def test_no_job_simulated_leaves_unbounded_and_absent_dimensions_unknown(
    tmp_path: Path, memory: str, expected: dict[str, float | None]
) -> None:
    platform = f'[node_groups.n]\ncount = 1\ncores = 2\n{memory}[partitions.all]\nnodes = ["n"]\n'
    # one job asking more cores than the machine has: excluded, nothing simulated
    trace = "; MaxProcs: 2\n1 0 -1 100 64 -1 -1 64 100 -1 1 1 1 -1 -1 -1 -1 -1\n"
    path, swf = files(tmp_path, platform, trace)
    result = schedlab.simulate(schedlab.read(swf), platform=str(path))
    assert result.stats["jobs_simulated"] == 0
    by_dim = result.stats["platform"]["utilization_by_dimension"]
    assert {k: by_dim[k] for k in expected} == expected
