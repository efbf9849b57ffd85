"""Fixes of the outside usability audit (2026-11-28, items 2, 3, 7-11, 13, 16):
the Gymnasium id, what a written schedule's header says (excluded jobs, the run's
options, the machine), the experiments' spellings, ``simulate --no-timings``,
``report --simulate``'s simulation flags, and the hints of old ``-o`` spellings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import schedlab
from schedlab.cli import command_for
from schedlab.testing import run_cli

# Six jobs on a machine of 10 nodes of one processor; job 6 has no size, so the
# simulator excludes it (no_size) and the schedule holds five jobs.
SWF = """\
; Version: 2.2
; MaxJobs: 6
; MaxRecords: 6
; MaxNodes: 10
; MaxProcs: 10
1 0 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1
2 0 -1 5 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1
3 10 -1 50 8 -1 -1 8 50 -1 1 2 1 -1 2 -1 -1 -1
4 20 -1 30 1 -1 -1 1 300 -1 1 3 1 -1 2 -1 -1 -1
5 30 -1 0 1 -1 -1 1 60 -1 1 2 1 -1 -1 -1 -1 -1
6 40 -1 10 -1 -1 -1 -1 60 -1 1 2 1 -1 -1 -1 -1 -1
"""

# The same jobs with a 19th column: strict SWF reading refuses it, lenient keeps 18.
SWF19 = "\n".join(line if line.startswith(";") else f"{line} 7" for line in SWF.splitlines()) + "\n"


@pytest.fixture()
def swf(tmp_path: Path) -> str:
    path = tmp_path / "six.swf"
    path.write_text(SWF)
    return str(path)


def header_lines(path: Path | str) -> list[str]:
    return [line for line in Path(path).read_text().splitlines() if line.startswith(";")]


def simulated_note(path: Path | str) -> str:
    (note,) = [line for line in header_lines(path) if "Simulated by schedlab" in line]
    return note


# -- item 2: the Gymnasium id -------------------------------------------------------


def test_gymnasium_make_finds_the_env_without_importing_schedlab_first(tmp_path: Path) -> None:
    pytest.importorskip("gymnasium")
    trace = tmp_path / "six.swf"
    trace.write_text(SWF)
    code = (
        "import sys, gymnasium, schedlab\n"
        "assert 'schedlab.rl' not in sys.modules\n"
        "env = gymnasium.make('schedlab.rl:schedlab/Scheduling-v0',\n"
        "                     workload=schedlab.read(sys.argv[1]), queue_size=4, episode_jobs=5)\n"
        "obs, info = env.reset(seed=0)\n"
        "print(obs['jobs'].shape, 'schedlab/Scheduling-v0' in gymnasium.registry)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(trace)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["(4,", "5)", "True"]


# -- items 3 and 16: the written schedule's header ------------------------------------


def test_schedule_with_excluded_jobs_counts_them_and_validates(capsys, swf, tmp_path):
    out = tmp_path / "schedule.swf"
    code, _, err = run_cli(capsys, "simulate", swf, "-o", str(out))
    assert code == 0, err
    header = header_lines(out)
    assert "; MaxJobs: 5" in header and "; MaxRecords: 5" in header
    assert any(
        "schedlab excluded 1 of 6 jobs from the simulation (no_size=1)" in line
        and "MaxJobs: 6, MaxRecords: 6" in line
        for line in header
    ), header
    code, out_text, _ = run_cli(capsys, "validate", str(out), "--strict")
    assert code == 0 and "header-count" not in out_text, out_text
    code, out_text, err = run_cli(capsys, "metrics", str(out), "--json")
    assert code == 0, err
    notes = json.loads(out_text)["notes"]
    assert notes[0].startswith("1 job was excluded by the simulation that wrote this schedule")
    assert "no_size=1" in notes[0]


def test_note_names_the_options_given_and_only_them(capsys, swf, tmp_path):
    plain, opts = tmp_path / "plain.swf", tmp_path / "opts.swf"
    assert run_cli(capsys, "simulate", swf, "-o", str(plain))[0] == 0
    # a run without options keeps the Note it always had
    assert simulated_note(plain) == (
        f"; Note: Simulated by schedlab {schedlab.__version__}: policy=fcfs backfill=easy "
        "estimator=requested procs=10 kill=yes dependencies=no"
    )
    code, _, err = run_cli(
        capsys, "simulate", swf, "-p", "psp", "-P", "window=5", "-b", "easy:order=sjbf",
        "-e", "easy++", "-E", "correction=requested", "-o", str(opts),
    )  # fmt: skip
    assert code == 0, err
    assert (
        "policy=psp:window=5 backfill=easy:order=sjbf estimator=easy++:correction=requested "
        "procs=10 kill=yes dependencies=no"
    ) in simulated_note(opts)


def test_procs_other_than_the_logs_drops_its_max_nodes(capsys, swf, tmp_path):
    other, same = tmp_path / "p16.swf", tmp_path / "p10.swf"
    assert run_cli(capsys, "simulate", swf, "--procs", "16", "-o", str(other))[0] == 0
    header = header_lines(other)
    assert "; MaxProcs: 16" in header
    assert not any(line.startswith("; MaxNodes") for line in header), header
    assert any("MaxNodes: 10 of the log dropped" in line for line in header)
    assert run_cli(capsys, "simulate", swf, "--procs", "10", "-o", str(same))[0] == 0
    assert "; MaxNodes: 10" in header_lines(same)


# -- item 8: simulate --json, the same bytes every run --------------------------------


def test_simulate_no_timings_json_is_reproducible(capsys, swf):
    runs = []
    for _ in range(2):
        code, out, err = run_cli(capsys, "simulate", swf, "--json", "--no-timings")
        assert code == 0, err
        runs.append(out)
    assert runs[0] == runs[1]
    stats = json.loads(runs[0])["simulation"]["stats"]
    assert not {"wall_time_s", "cpu_time_s", "total_time_s", "jobs_per_second"} & set(stats)
    assert "peak_memory_bytes" not in stats and stats["jobs_simulated"] == 5
    code, out, _ = run_cli(capsys, "simulate", swf, "--no-timings")
    assert code == 0 and "jobs per second" not in out and "peak memory" not in out


# -- item 7: the experiments' spellings ----------------------------------------------


def parsed(path: str, *args: str) -> dict:
    command = command_for(path.split())
    assert command is not None
    return command.make_context(path.split()[-1], list(args)).params


def test_experiments_take_the_same_folder_and_figure_spellings():
    for flag in ("--out", "--output"):
        for figures in ("--no-figures", "--no-figure"):
            psp = parsed("experiment psp", flag, "d", figures)
            assert psp["out"] == "d" and psp["no_figures"] is True
            est = parsed("experiment estimates", "-w", "x.swf", flag, "d", figures)
            assert est["output"] == "d" and est["no_figure"] is True


def test_experiment_estimates_reads_traces_with_reader_options(capsys, tmp_path):
    trace = tmp_path / "wide.swf"
    trace.write_text(SWF19)
    common = (
        "experiment", "estimates", "-w", str(trace), "--estimators", "easy++",
        "--correction", "tsafrir", "--no-psp", "--no-figures", "--quiet",
    )  # fmt: skip
    code, _, err = run_cli(capsys, *common, "--out", str(tmp_path / "a"))
    assert code == 2 and "-R lenient=true" in err, err  # the hint names its own flag
    code, out, err = run_cli(
        capsys, *common, "--from", "swf", "-R", "lenient=true", "--out", str(tmp_path / "b"),
        "--json",
    )  # fmt: skip
    assert code == 0, err
    assert len(json.loads(out)["results"]) == 2  # EASY and EASY++


# -- item 9 (report) and item 13 -------------------------------------------------------


def test_report_simulate_passes_the_simulation_flags(capsys, swf, tmp_path, monkeypatch):
    pytest.importorskip("bokeh")
    import schedlab.sim.api

    platform = tmp_path / "p.toml"
    platform.write_text(
        '[platform]\nname = "p"\n[node_groups.nodes]\ncount = 10\ncores = 1\n'
        '[partitions.all]\nnodes = ["nodes"]\n'
    )
    seen: dict = {}

    def fake_simulate(workload, **kwargs):
        seen.update(kwargs)
        raise schedlab.UsageError("stopped before simulating")

    monkeypatch.setattr(schedlab.sim.api, "simulate", fake_simulate)
    code, _, err = run_cli(
        capsys, "report", swf, "--simulate", "fcfs+easy", "--platform", str(platform),
        "--allocation", "best-fit", "--allocation-option", "x=1", "-e", "easy++",
        "-E", "correction=requested", "--no-kill", "-o", str(tmp_path / "r.html"),
    )  # fmt: skip
    assert code == 2 and "stopped before simulating" in err, err
    assert seen["allocation"] == "best-fit" and seen["allocation_options"] == {"x": "1"}
    assert seen["estimator"] == "easy++"
    assert seen["estimator_options"] == {"correction": "requested"}
    assert seen["kill"] is False


def test_report_without_waits_names_report_simulate(capsys, swf, tmp_path):
    pytest.importorskip("bokeh")
    code, _, err = run_cli(capsys, "report", swf, "-o", str(tmp_path / "r.html"))
    assert code == 2
    assert f"schedlab report {swf} --simulate" in err, err
    code, _, err = run_cli(capsys, "report", swf, "-e", "actual", "-o", str(tmp_path / "r.html"))
    assert code == 2 and "-e/--estimator needs --simulate" in err


# -- items 10 and 11: old spellings -----------------------------------------------------


def test_simulate_dash_O_warning_names_only_simulates_flags(capsys, swf):
    code, _, err = run_cli(capsys, "simulate", swf, "-p", "psp", "-O", "window=5")
    assert code == 0, err
    assert "use -P (--policy-option, priority policy option KEY=VALUE)" in err
    assert "--priority-option" not in err


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("convert", "convert takes the output file as its second argument: "
         "schedlab convert IN OUT"),
        ("validate", "validate writes no file"),
        ("info", "info writes no file"),
    ],
)  # fmt: skip
def test_dash_o_with_a_file_name_says_what_to_do(capsys, swf, tmp_path, command, expected):
    target = tmp_path / "out.swf"
    code, _, err = run_cli(capsys, command, swf, "-o", str(target))
    assert code == 2
    assert expected in err and "deprecated" not in err and "Missing argument" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert not target.exists()
    # -o KEY=VALUE is still the old spelling of -R, with its warning
    code, _, err = run_cli(capsys, "info", swf, "-o", "summary_only=true")
    assert code == 0 and "deprecated" in err
