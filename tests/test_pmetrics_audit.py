"""Platform metrics and per-job held amounts (audit `pmetrics`): held memory of
nodes that declare none is left out of ``schedlab.held``; the ``memory_unknown``
note only where it is true; the ``compare`` held note over the metrics' window;
per-partition "cores held" named for what it counts; a zero-length run's
figures unknown; ``by="partition"`` on a platform run groups by the partition the
jobs ran in."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import schedlab
from schedlab.cli import main
from schedlab.comparison import held_note

# Two jobs of 8 and 4 processors, SWF memory -1, queues 1 and 2.
OV_SWF = """\
; MaxProcs: 8
1 0 -1 100 8 -1 -1 8 100 -1 1 1 1 1 1 -1 -1 -1
2 1 -1 100 4 -1 -1 4 100 -1 1 1 1 1 2 -1 -1 -1
"""

EXCLUSIVE_NO_MEMORY = """
[platform]
sharing = "exclusive"
[node_groups.a]
count = 2
cores = 4
[partitions.x]
nodes = ["a"]
"""

EXCLUSIVE_MEMORY = """
[platform]
sharing = "exclusive"
[node_groups.a]
count = 2
cores = 4
memory = "8K"
[partitions.x]
nodes = ["a"]
"""

SHARED_MEMORY = """
[platform]
sharing = "shared"
[node_groups.a]
count = 3
cores = 4
memory = "8K"
[partitions.x]
nodes = ["a"]
"""

# Partitions x and y over the same exclusive group (queues 1 and 2).
OVERLAP = """
[platform]
sharing = "exclusive"
[node_groups.a]
count = 2
cores = 4
[partitions.x]
nodes = ["a"]
queues = ["1"]
[partitions.y]
nodes = ["a"]
queues = ["2"]
"""

# Two jobs of run time 0 at time 0.
ZERO_LENGTH = """\
; MaxProcs: 12
1 0 -1 0 4 -1 1 4 100 1 1 1 1 1 1 -1 -1 -1
2 0 -1 0 2 -1 1 2 100 1 1 1 1 1 1 -1 -1 -1
"""

# One shared node of 4 cores: the cores held are the processors asked.
POOL = """
[platform]
sharing = "shared"
[node_groups.n]
count = 1
cores = 4
[partitions.all]
nodes = ["n"]
"""

# A busy start (4 cores for 1000 s), then a quiet steady state, submissions to 3000.
STEADY = """\
; MaxProcs: 4
1 0 -1 1000 4 -1 -1 4 1000 -1 1 1 1 1 1 -1 -1 -1
2 1000 -1 100 1 -1 -1 1 100 -1 1 1 1 1 1 -1 -1 -1
3 1500 -1 100 1 -1 -1 1 100 -1 1 1 1 1 1 -1 -1 -1
4 2000 -1 100 2 -1 -1 2 100 -1 1 1 1 1 1 -1 -1 -1
5 3000 -1 100 1 -1 -1 1 100 -1 1 1 1 1 1 -1 -1 -1
"""


def _files(tmp_path: Path, platform: str, trace: str) -> tuple[Path, Path]:
    (tmp_path / "p.toml").write_text(platform)
    (tmp_path / "w.swf").write_text(trace)
    return tmp_path / "p.toml", tmp_path / "w.swf"


def _run(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out + err


def _simulate(tmp_path: Path, platform: str, trace: str) -> schedlab.Result:
    p, w = _files(tmp_path, platform, trace)
    return schedlab.simulate(schedlab.read(w), platform=str(p))


# ------------------------------------------- 1: no sentinel in schedlab.held


def test_held_leaves_out_memory_of_nodes_that_declare_none(tmp_path: Path) -> None:
    result = _simulate(tmp_path, EXCLUSIVE_NO_MEMORY, OV_SWF)
    frame = result.to_pandas(extras=True)
    assert frame["schedlab.held"].tolist() == ["cores=8 gpus=0", "cores=4 gpus=0"]
    assert result.stats["platform"]["utilization_by_dimension"]["memory"] is None
    for fmt, name in (("sss", "o.xml"),):  # (sge-jsonl keeps no extras)
        schedlab.write(result.workload, tmp_path / name, format=fmt)
        text = (tmp_path / name).read_text()
        assert "schedlab.held" in text and "cores=8 gpus=0" in text, fmt
        assert "memory=" not in text, fmt  # (meta capacity flags it: "unbounded")


def test_held_keeps_memory_of_nodes_that_declare_it(tmp_path: Path) -> None:
    result = _simulate(tmp_path, EXCLUSIVE_MEMORY, OV_SWF)
    held = result.to_pandas(extras=True)["schedlab.held"].tolist()
    assert held == ["cores=8 memory=16384 gpus=0", "cores=4 memory=8192 gpus=0"]


def test_held_on_a_mixed_platform_leaves_out_only_the_undeclared(tmp_path: Path) -> None:
    platform = """
[platform]
sharing = "exclusive"
[node_groups.a]
count = 1
cores = 4
memory = "8K"
[node_groups.b]
count = 1
cores = 4
[partitions.x]
nodes = ["a"]
queues = ["1"]
[partitions.y]
nodes = ["b"]
queues = ["2"]
"""
    trace = """\
; MaxProcs: 8
1 0 -1 100 4 -1 -1 4 100 -1 1 1 1 1 1 -1 -1 -1
2 1 -1 100 4 -1 -1 4 100 -1 1 1 1 1 2 -1 -1 -1
"""
    result = _simulate(tmp_path, platform, trace)
    held = result.to_pandas(extras=True)["schedlab.held"].tolist()
    assert held == ["cores=4 memory=8192 gpus=0", "cores=4 gpus=0"]


# ------------------------------------------- 2: the memory_unknown note


def test_no_memory_note_on_exclusive_nodes(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    p, w = _files(tmp_path, EXCLUSIVE_MEMORY, OV_SWF)
    code, out = _run(capsys, "simulate", str(w), "--platform", str(p), "--no-timings")
    assert code == 0, out
    assert "memory_unknown" not in out and "holding none" not in out


def test_no_memory_note_when_memory_is_not_simulated(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    for platform in (OVERLAP, POOL):
        p, w = _files(tmp_path, platform, OV_SWF)
        code, out = _run(capsys, "simulate", str(w), "--platform", str(p), "--no-timings")
        assert code == 0, out
        assert "memory_unknown" not in out, out
        result = schedlab.simulate(schedlab.read(w), platform=str(p))
        assert result.stats["platform"]["memory_unknown"] == 0


def test_memory_note_on_shared_nodes_with_memory(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    trace = OV_SWF.replace(" 8 -1 -1 8 ", " 2 -1 -1 2 ").replace(" 4 -1 -1 4 ", " 1 -1 -1 1 ")
    p, w = _files(tmp_path, SHARED_MEMORY, trace)
    code, out = _run(capsys, "simulate", str(w), "--platform", str(p), "--no-timings")
    assert code == 0, out
    assert (
        "note: 2 of 2 jobs on shared nodes asked no memory: simulated holding none "
        "(memory_unknown)" in out
    ), out


# ------------------------------------------- 3: the held note with a window


def test_held_note_uses_the_metrics_window(tmp_path: Path) -> None:
    result = _simulate(tmp_path, POOL, STEADY)
    whole = schedlab.compute_metrics(result, names=["utilization", "loss-of-capacity"])
    assert held_note(result, whole) is None  # cores held = processors asked
    windowed = schedlab.compute_metrics(
        result, names=["utilization", "loss-of-capacity"], warmup="1000", cooldown="500"
    )
    assert windowed.value("utilization") != pytest.approx(
        result.stats["platform"]["utilization_by_dimension"]["cores"]
    )
    assert held_note(result, windowed) is None  # the same window: still the same


def test_compare_with_a_window_prints_no_false_held_note(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    p, w = _files(tmp_path, POOL, STEADY)
    args = ["compare", str(w), "--platform", str(p), "-p", "fcfs", "--no-timings"]
    code, out = _run(capsys, *args, "-M", "warmup=1000", "-M", "cooldown=500")
    assert code == 0, out
    assert "count the processors the jobs asked for" not in out, out


def test_held_note_over_a_window_on_exclusive_nodes(tmp_path: Path) -> None:
    # Three 1-core jobs on two exclusive 4-core nodes: held figures differ from the
    # asked ones; over a window they are the window's, and the note says so.
    platform = EXCLUSIVE_MEMORY
    trace = """\
; MaxProcs: 8
1 0 -1 100 1 -1 -1 1 100 -1 1 1 1 1 1 -1 -1 -1
2 0 -1 100 1 -1 -1 1 100 -1 1 1 1 1 1 -1 -1 -1
3 0 -1 100 1 -1 -1 1 100 -1 1 1 1 1 1 -1 -1 -1
4 1000 -1 100 1 -1 -1 1 100 -1 1 1 1 1 1 -1 -1 -1
5 2000 -1 100 1 -1 -1 1 100 -1 1 1 1 1 1 -1 -1 -1
"""
    result = _simulate(tmp_path, platform, trace)
    report = schedlab.compute_metrics(
        result, names=["utilization", "loss-of-capacity"], warmup="500", cooldown="500"
    )
    note = held_note(result, report)
    assert note is not None
    # Window [500, 1500]: job 4 holds a node (4 cores) for 100 s of 8 x 1000.
    assert "cores held 0.050 of the core-time" in note, note
    assert "warm-up/cool-down window" in note, note


# ------------------------------------------- 4: per-partition cores held, named


def test_partition_lines_say_held_by_its_jobs(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    p, w = _files(tmp_path, OVERLAP, OV_SWF)
    code, out = _run(capsys, "simulate", str(w), "--platform", str(p), "--no-timings")
    assert code == 0, out
    assert "partition y: cores held by its jobs" in out, out
    docs = " ".join((Path(__file__).parents[1] / "docs" / "platform.md").read_text().split())
    assert "held by the jobs placed in the partition" in docs


def test_report_partition_wording(tmp_path: Path) -> None:
    from schedlab.report import _partition_rows

    result = _simulate(tmp_path, OVERLAP, OV_SWF)
    rows = "".join(_partition_rows([result]))
    assert "cores held by its jobs" in rows
    assert "core-time held by jobs over" not in rows


# ------------------------------------------- 5: a zero-length run


def test_zero_length_run_has_unknown_platform_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    result = _simulate(tmp_path, SHARED_MEMORY, ZERO_LENGTH)
    machine = result.stats["platform"]
    assert machine["utilization_by_dimension"] == {"cores": None, "memory": None, "gpus": None}
    assert machine["idle_while_waiting"] is None
    assert machine["utilization_by_partition"] == {"x": None}
    p, w = _files(tmp_path, SHARED_MEMORY, ZERO_LENGTH)
    code, out = _run(capsys, "simulate", str(w), "--platform", str(p), "--no-timings")
    assert code == 0, out
    held_lines = [line for line in out.splitlines() if "held" in line]
    assert held_lines and not any("0.000" in line for line in held_lines), out
    code, out = _run(capsys, "simulate", str(w), "--platform", str(p), "--no-timings", "--json")
    assert code == 0, out
    assert json.loads(out)["simulation"]["stats"]["platform"]["idle_while_waiting"] is None


def test_zero_length_static_report_warns_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    p, w = _files(tmp_path, SHARED_MEMORY, ZERO_LENGTH)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code, out = _run(
            capsys, "report", str(w), "--simulate", "fcfs+easy", "--platform", str(p),
            "--static", "-o", str(tmp_path / "z.html"),
        )  # fmt: skip
    assert code == 0, out
    assert "Warning" not in out, out


# ------------------------------------------- 6: by="partition" on a platform run


def test_by_partition_groups_by_the_partition_run_in(tmp_path: Path) -> None:
    result = _simulate(tmp_path, OVERLAP, OV_SWF)
    report = schedlab.compute_metrics(result, by="partition", names=["wait"])
    groups = {row["group"]: row for row in report.rows}
    assert set(groups) == {"x", "y", "all"}
    waits = result.stats["platform"]["mean_wait_by_partition"]
    for name in ("x", "y"):
        assert groups[name]["wait"]["mean"] == pytest.approx(waits[name])
    assert any("partition of the platform the job ran in" in n for n in report.notes)
    # A trace (no platform) still groups by the SWF partition number (-1 here).
    trace = schedlab.compute_metrics(schedlab.read(tmp_path / "w.swf"), by="partition")
    assert {row["group"] for row in trace.rows} == {"unknown", "all"}  # field 16: -1


def test_cores_over_the_whole_span_are_the_run_statistics(tmp_path: Path) -> None:
    from schedlab.sim.usage import cores_over_period

    trace = """\
; MaxProcs: 8
1 0 -1 100 1 -1 -1 1 100 -1 1 1 1 1 1 -1 -1 -1
2 0 -1 300 2 -1 -1 2 300 -1 1 1 1 1 1 -1 -1 -1
3 10 -1 100 2 -1 -1 2 100 -1 1 1 1 1 1 -1 -1 -1
4 500 -1 100 1 -1 -1 1 100 -1 1 1 1 1 1 -1 -1 -1
"""
    result = _simulate(tmp_path, POOL, trace)  # job 3 waits with a core free
    cols = result.workload.to_arrays()
    held = result.to_pandas(extras=True)["schedlab.held"]
    cores = held.str.extract(r"cores=(\d+)")[0].astype(float).to_numpy()
    submit = cols["submit_time"]
    start = submit + cols["wait_time"]
    end = start + cols["run_time"]
    span = (float(submit.min()), float(end.max()))
    machine = result.stats["platform"]
    assert cores_over_period(cores, submit, start, end, 4.0, span) == pytest.approx(
        (machine["utilization_by_dimension"]["cores"], machine["idle_while_waiting"])
    )
    assert machine["idle_while_waiting"] > 0  # a case with waiting jobs
