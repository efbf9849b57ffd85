"""Fixes of the second metrics audit: extreme percentiles in compare --ci, the
platform figures beside utilization and loss of capacity, accuracy classes in a
warm-up/cool-down window, and the compare docs."""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from schedlab import compute_metrics, read, simulate

HPC2N = "HPC2N-2002_excerpt-3170jobs_alea.swf"


# ------------------------------------------------- 1. p0/p100 are extremes


@pytest.fixture(scope="module")
def schedules(swf_dir):
    workload = read(str(swf_dir / HPC2N))
    return {f"{p}+easy": simulate(workload, policy=p, backfill="easy") for p in ("fcfs", "sjf")}


def test_p0_and_p100_are_extremes_like_min_and_max(schedules):
    pytest.importorskip("scipy")
    from schedlab.significance import EXTREME_STAT_REASON, block_significance

    sig = block_significance(
        schedules,
        metrics=["wait"],
        stats="p90,p100,max,p0,min,p100.0",
        window="2d",
        rank_window="7d",
        resamples=200,
    )
    report = compute_metrics(schedules["fcfs+easy"], "wait", stats="max,min")
    for stat, same_as in (("p100", "max"), ("p100.0", "max"), ("p0", "min")):
        for policy in schedules:
            got = sig.interval(policy, "wait", stat)
            ref = sig.interval(policy, "wait", same_as)
            assert (got.low, got.high, got.reason) == (None, None, EXTREME_STAT_REASON)
            assert got.estimate == pytest.approx(ref.estimate)
        diff = sig.difference("fcfs+easy", "sjf+easy", "wait", stat)
        assert diff.p_value is None and diff.p_holm is None and diff.low is None
        assert diff.reason == EXTREME_STAT_REASON
    assert sig.interval("fcfs+easy", "wait", "p100").estimate == pytest.approx(
        report.value("wait", "max")
    )
    # Holm runs over the p90 test only; only p90 gets a per-window ranking.
    tested = [d for d in sig.differences if d.p_value is not None]
    assert [d.stat for d in tested] == ["p90"]
    assert [r.stat for r in sig.ranks] == ["p90"]


# ------------------------------------------- 4, 5. compare's columns and bold

ROOT = Path(__file__).resolve().parents[1]


def _section(page: str, heading: str) -> str:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    start = text.index(heading)
    end = text.find("\n## ", start + 1)
    return " ".join(text[start : end if end > 0 else None].split())


def test_metrics_doc_says_every_statistic_gets_a_column(schedules):
    from schedlab.comparison import compare_policies

    workload = schedules["fcfs+easy"].workload
    small = schedlab.Workload(workload.header, columns=workload.to_arrays().take(range(300)))
    c = compare_policies(
        small, "fcfs,sjf", names=["slowdown", "wait"], metric_options={"stats": "p95,mean"}
    )
    headers = [str(col.header) for col in c.table(timing=False).columns][4:]
    assert headers == ["wait p95 (s)", "wait mean (s)", "slowdown p95", "slowdown mean"]
    doc = _section("metrics.md", "## Comparing policies")
    assert "the first statistic of" not in doc
    assert "one column per statistic asked for" in doc


def test_bold_only_in_columns_with_a_better_direction(schedules):
    from click.testing import CliRunner
    from schedlab.cli import cli
    from schedlab.comparison import compare_policies

    c = compare_policies(schedules["fcfs+easy"].workload, "fcfs+easy,sjf+easy,fcfs+none")
    table = c.table(timing=False)
    cells = {str(col.header): [str(x) for x in col._cells] for col in table.columns}
    makespans = [r.value("makespan") for r in c.rows]
    assert len(set(makespans)) > 1  # the makespans differ, yet none is bold
    assert not any("[bold]" in x for x in cells["makespan (s)"])
    assert any("[bold]" in x for x in cells["wait mean (s)"])
    help_text = " ".join(CliRunner().invoke(cli, ["compare", "--help"]).output.split())
    assert "each column with a better direction in bold" in help_text
    assert "column with a better direction in bold" in _section(
        "metrics.md", "## Comparing policies"
    )


# ------------------------------------------ 3. accuracy classes in a window


def _swf(tmp_path: Path, rows: list[tuple[int, float, float, float, int]], procs: int) -> Path:
    """An SWF file of ``(job, submit, run, requested time, user)`` 1-processor jobs
    with no wait."""
    lines = [f"; MaxProcs: {procs}"]
    for job, submit, run, req, user in rows:
        lines.append(f"{job} {submit:g} 0 {run:g} 1 -1 -1 1 {req:g} -1 1 {user} 1 -1 1 1 -1 -1")
    path = tmp_path / "acc.swf"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def test_accuracy_classes_are_decided_on_the_measured_jobs(tmp_path):
    # The window: from 545 s (5 % warm-up) to 5,450 s (50 % cool-down).
    # User 1: ten jobs of accuracy 0.1 in it, ten of accuracy 1.0 late (in the
    # cool-down). User 2: two jobs of accuracy 1.0, both in the cool-down. User 3:
    # one job of accuracy 1.0 submitted in the warm-up that runs into the window.
    rows = [(k + 1, 600.0 + 100.0 * k, 10.0, 100.0, 1) for k in range(10)]
    rows += [(k + 11, 10000.0 + 100 * k, 100.0, 100.0, 1) for k in range(10)]
    rows += [(21, 10850.0, 50.0, 50.0, 2), (22, 10900.0, 50.0, 50.0, 2)]
    rows += [(23, 0.0, 2000.0, 2000.0, 3)]
    workload = read(str(_swf(tmp_path, rows, 10)))
    report = compute_metrics(
        workload,
        ["accuracy", "utilization"],
        by="accuracy-class",
        warmup="5%",
        cooldown="50%",
    )
    a1 = report.row("a1")
    assert a1["jobs"] == 10 and a1["accuracy"]["mean"] == pytest.approx(0.1)
    assert report.row("a5")["jobs"] == 0
    # Users 2 and 3 have no measured job: their left-out jobs have no class
    # ("unknown"), where they count only in the system metrics.
    unknown = report.row("unknown")
    assert unknown["jobs"] == 0 and unknown["users"] == 0
    assert unknown["utilization"] == pytest.approx((2000 - 545) / (10 * (5450 - 545)))
    assert any("measured jobs" in note and "in 'unknown'" in note for note in report.notes)
    # The groups' utilizations still add up to the whole report's.
    groups = [report.value("utilization", group=g) for g in ("a1", "a2", "a3", "a4", "a5")]
    total = sum(g or 0.0 for g in groups) + (report.value("utilization", group="unknown") or 0)
    assert total == pytest.approx(report.value("utilization"))
    # Without a window, the classes are those of the whole schedule, as before.
    whole = compute_metrics(workload, ["accuracy"], by="accuracy-class")
    assert whole.row("a5")["jobs"] == 23 and whole.row("a1")["jobs"] == 0


# ------------------------- 2. processors asked (metrics) and cores held (platform)

EXCLUSIVE = """
[platform]
sharing = "{sharing}"
[node_groups.n]
count = 2
cores = 4
[partitions.p]
nodes = ["n"]
"""


def _platform_case(tmp_path: Path, sharing: str) -> tuple[Path, Path]:
    """Two 4-core nodes and three 1-processor jobs of 100 s submitted at 0."""
    platform = tmp_path / f"{sharing}.toml"
    platform.write_text(EXCLUSIVE.format(sharing=sharing), encoding="ascii")
    trace = tmp_path / "three.swf"
    trace.write_text(
        "; MaxProcs: 8\n"
        + "".join(f"{k} 0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 1 1 -1 -1\n" for k in (1, 2, 3)),
        encoding="ascii",
    )
    return trace, platform


def _plain(output: str) -> str:
    """A table's text without its rules, on one line."""
    return " ".join(output.translate({ord(c): " " for c in "│┃"}).split())


def test_exclusive_nodes_say_which_figures_count_cores_held(tmp_path):
    from click.testing import CliRunner
    from schedlab.cli import cli
    from schedlab.comparison import compare_policies

    trace, platform = _platform_case(tmp_path, "exclusive")
    got = CliRunner().invoke(cli, ["simulate", str(trace), "--platform", str(platform)])
    assert got.exit_code == 0, got.output
    text = _plain(got.output)
    assert "utilization of cores held 0.750" in text
    assert "core-time not held while jobs waited 0.000" in text
    # utilization 3 x 100 / (8 x 200) and loss of capacity 6 idle cores x 100 s /
    # (8 x 200) count the processors asked for; a note says the two differ and why.
    assert "utilization 0.188" in text and "loss-of-capacity 0.375" in text
    note = [n for n in text.split("note: ") if "processors the jobs asked for" in n]
    assert len(note) == 1 and "cores held" in note[0] and "0.750" in note[0]
    # compare does not print the platform figures: its note gives them.
    c = compare_policies(read(str(trace)), "fcfs+easy", platform=str(platform))
    (row_note,) = [n for n, _ in c.notes() if "processors the jobs asked for" in n]
    assert "0.750" in row_note and "0.000" in row_note


def test_shared_nodes_need_no_such_note(tmp_path):
    from click.testing import CliRunner
    from schedlab.cli import cli

    trace, platform = _platform_case(tmp_path, "shared")
    got = CliRunner().invoke(cli, ["simulate", str(trace), "--platform", str(platform)])
    assert got.exit_code == 0, got.output
    text = _plain(got.output)
    assert "utilization of cores held 0.375" in text and "utilization 0.375" in text
    assert "processors the jobs asked for" not in text
