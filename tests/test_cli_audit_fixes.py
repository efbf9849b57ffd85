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


# ======================================================================================
# Second audit ("cli", hostile options): outputs over inputs, conflicting spellings,
# empty values, bad values.
# ======================================================================================

PLATFORM = '[node_groups.a]\ncount = 10\ncores = 1\n[partitions.p]\nnodes = ["a"]\n'


def one_error(capsys, *args: str) -> str:
    """Run ``schedlab ARGS``: it must fail with exit 2 and one line; that line."""
    code, _, err = run_cli(capsys, *args)
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("schedlab: error: "), err
    return err.strip()


@pytest.fixture()
def platform(tmp_path: Path) -> str:
    path = tmp_path / "p.toml"
    path.write_text(PLATFORM)
    return str(path)


# -- 1: convert --rejects -------------------------------------------------------------


def test_convert_rejects_onto_the_input_or_the_output_is_refused(capsys, swf, tmp_path):
    out = str(tmp_path / "out.swf")
    line = one_error(capsys, "convert", swf, out, "--rejects", swf)
    assert "output would overwrite the input" in line and "--rejects" in line
    assert Path(swf).read_text() == SWF
    line = one_error(capsys, "convert", swf, out, "--rejects", out)
    assert "--rejects" in line and "OUT" in line
    assert not Path(out).exists()
    assert "--rejects ''" in one_error(capsys, "convert", swf, out, "--rejects", "")


# -- 2: every output against every input and the other outputs ------------------------


def test_outputs_onto_an_input_or_another_output_are_refused(capsys, swf, platform, tmp_path):
    same = str(tmp_path / "same.out")
    cases = [
        (("compare", swf, "-p", "fcfs", "--report", swf), ("--report", "IN")),
        (("compare", swf, "-p", "fcfs", "--platform", platform, "--report", platform),
         ("--report", "--platform")),
        (("compare", swf, "-p", "fcfs,sjf", "--plot", same, "--report", same),
         ("--report", "--plot")),
        (("simulate", swf, "--platform", platform, "--allocations-out", platform),
         ("--allocations-out", "--platform")),
        (("simulate", swf, "--platform", platform, "-o", platform, "--to", "swf"),
         ("-o/--output", "--platform")),
        (("simulate", swf, "--platform", platform, "-o", same, "--allocations-out", same),
         ("--allocations-out", "-o/--output")),
        (("report", swf, "--simulate", "fcfs", "--platform", platform, "-o", platform),
         ("-o/--output", "--platform")),
    ]  # fmt: skip
    for args, named in cases:
        line = one_error(capsys, *args)
        assert all(name in line for name in named), (args, line)
    assert Path(swf).read_text() == SWF and Path(platform).read_text() == PLATFORM
    assert not Path(same).exists()


# -- 3: Lublin's extreme arrival parameters --------------------------------------------


@pytest.mark.parametrize(
    ("spec", "option"),
    [
        ("lublin:jobs=50,bnum_inter=1e300", "bnum_inter"),
        ("lublin:jobs=50,bnum_inter=1e-300", "bnum_inter"),
        ("lublin:jobs=50,anum_batch=1e300", "anum_batch"),
        ("lublin:jobs=50,types=no,bnum=1e300", "bnum"),
        ("lublin:jobs=50,arar_inter=1e308", "arar_inter"),
        ("lublin:jobs=50,aarr_inter=1e6", "aarr_inter"),
    ],
)
def test_lublin_arrival_parameters_without_arrivals_are_an_error(spec, option):
    import warnings

    from schedlab.errors import UsageError

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy RuntimeWarning either
        with pytest.raises(UsageError) as info:
            schedlab.read(spec)
    message = str(info.value)
    assert f"option {option}=" in message and "\n" not in message
    assert "max_log_interarrival=13 is too small" not in message


# -- 4: dependencies must be a boolean ---------------------------------------------------


def test_compare_policies_refuses_a_dependencies_string(swf):
    from schedlab.comparison import compare_policies
    from schedlab.errors import UsageError

    workload = schedlab.read(swf)
    with pytest.raises(UsageError, match="dependencies must be True or False, got 'no'"):
        compare_policies(workload, "fcfs+easy", dependencies="no")
    with pytest.raises(UsageError, match="kill must be True or False"):
        compare_policies(workload, "fcfs+easy", kill="no")


# -- 5: two spellings of one setting ------------------------------------------------------


def test_two_spellings_of_one_setting_that_disagree_are_an_error(capsys, swf, tmp_path):
    out = str(tmp_path / "o.swf")
    line = one_error(capsys, "metrics", swf, "-M", "warmup=20%", "--warmup", "10%")
    assert "--warmup" in line and "-M/--metric-option warmup=20%" in line
    line = one_error(capsys, "metrics", swf, "-M", "cooldown=1", "--cooldown", "2")
    assert "--cooldown" in line
    line = one_error(capsys, "convert", swf, out, "--lenient", "-R", "lenient=false")
    assert "--lenient" in line and "lenient=false" in line
    rejects = str(tmp_path / "r.txt")
    line = one_error(capsys, "convert", swf, out, "--rejects", rejects, "-R", "lenient=false")
    assert "--rejects" in line and "lenient=false" in line
    line = one_error(
        capsys, "platform", "infer", swf, "-o", str(tmp_path / "p.toml"), "--lenient",
        "-R", "lenient=false",
    )  # fmt: skip
    assert "--lenient" in line
    assert not Path(out).exists()
    # the same setting twice, spelled both ways, is fine
    code, _, err = run_cli(capsys, "convert", swf, out, "--lenient", "-R", "lenient=true")
    assert code == 0, err
    code, _, err = run_cli(capsys, "metrics", swf, "-M", "warmup=10", "--warmup", "10")
    assert code == 0, err


def test_stat_adds_to_the_statistics_of_dash_m_stats(capsys, swf):
    code, out, err = run_cli(
        capsys, "metrics", swf, "-m", "wait", "-M", "stats=p95", "--stat", "mean", "--json"
    )
    assert code == 0, err
    document = json.loads(out)
    assert document["stats"] == ["p95", "mean"], document["stats"]


def test_experiment_psp_generator_option_twice_is_an_error(capsys, tmp_path):
    line = one_error(
        capsys, "experiment", "psp", "--out", str(tmp_path / "x"), "-G", "jobs=30",
        "-G", "jobs=40",
    )  # fmt: skip
    assert "'jobs' given twice" in line
    assert not (tmp_path / "x").exists()


# -- 6: single-value options of the experiments, given twice -----------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("estimates", "-w", "{t}", "--out", "{d}/a", "--output", "{d}/b"),
        ("estimates", "-w", "{t}", "--out", "{d}/a", "--out", "{d}/b"),
        ("psp", "--out", "{d}/a", "--out", "{d}/b"),
        ("psp", "--workloads", "1", "--workloads", "2"),
    ],
)
def test_experiment_options_of_one_value_given_twice_are_an_error(capsys, swf, tmp_path, args):
    shown = [a.format(t=swf, d=tmp_path) for a in args]
    assert "given twice" in one_error(capsys, "experiment", *shown)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


# -- 7: an empty value is not "not given" -------------------------------------------------


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("simulate", "{t}", "-o", ""), "-o/--output ''"),
        (("simulate", "{t}", "--platform", "{p}", "--allocations-out", ""), "--allocations-out"),
        (("report", "{t}", "--simulate", "", "-o", "{d}/r.html"), "--simulate ''"),
        (("report", "{t}", "-o", ""), "-o/--output ''"),
        (("sweep", "-w", "{t}", "--out", ""), "--out ''"),
        (("platform", "infer", "{t}", "-o", ""), "-o/--output ''"),
        (("experiment", "estimates", "-w", "{t}", "--out", ""), "''"),
        (("experiment", "psp", "--out", ""), "''"),
        (("convert", "{t}", ""), "OUT ''"),
    ],
)
def test_an_empty_option_value_is_an_error_naming_the_option(
    capsys, swf, platform, tmp_path, monkeypatch, args, option
):
    monkeypatch.chdir(tmp_path)
    line = one_error(capsys, *(a.format(t=swf, p=platform, d=tmp_path) for a in args))
    assert option in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.toml", "six.swf"]


# -- 8: --resamples and the significance arguments ----------------------------------------


def test_resamples_has_an_upper_bound(capsys, swf):
    from schedlab.significance import MAX_RESAMPLES

    code, _, err = run_cli(
        capsys, "compare", swf, "-p", "fcfs,sjf", "--ci", "--resamples", str(MAX_RESAMPLES + 1)
    )
    assert code == 2 and "--resamples" in err and "1000000" in err, err


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"resamples": "100"}, "resamples"),
        ({"resamples": 2.5}, "resamples"),
        ({"resamples": 10**12}, "resamples"),
        ({"seed": -1}, "seed"),
        ({"seed": "x"}, "seed"),
        ({"level": "0.9"}, "level"),
    ],
)
def test_significance_arguments_of_the_wrong_type_are_usage_errors(swf, kwargs, named):
    from schedlab.comparison import compare_policies
    from schedlab.errors import UsageError

    comparison = compare_policies(schedlab.read(swf), "fcfs+easy,sjf+easy")
    with pytest.raises(UsageError, match=named):
        comparison.significance(**kwargs)


# -- 9: a machine smaller than the jobs -----------------------------------------------


def test_metrics_procs_below_the_largest_job(capsys, swf):
    line = one_error(capsys, "metrics", swf, "--procs", "4", "-m", "utilization")
    assert "--procs 4" in line and "largest job" in line and "8 processors" in line
    code, _, err = run_cli(capsys, "metrics", swf, "--procs", "8", "-m", "utilization")
    assert code == 0, err
    report = schedlab.compute_metrics(schedlab.read(swf), procs=4, names=["utilization"])
    assert any("more than the machine's 4 processors" in note for note in report.notes)
    from schedlab.errors import UsageError

    for procs in (float("inf"), "100", True):
        with pytest.raises(UsageError, match="procs must be a positive, finite number"):
            schedlab.compute_metrics(schedlab.read(swf), procs=procs)


# -- 11: API arguments of the wrong kind are usage errors, before any simulation -----


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (lambda w, cp: schedlab.compute_metrics(w, names=3), "metrics: expected names"),
        (lambda w, cp: schedlab.compute_metrics(w, names=[3]), "a metric is a name"),
        (lambda w, cp: schedlab.compute_metrics(w, stats=5), "stats: expected names"),
        (lambda w, cp: schedlab.write(w, None), "write() needs a file name"),
        (lambda w, cp: cp(w, None), "combinations must be a string"),
        (lambda w, cp: cp(w, 3), "combinations must be a string"),
        (lambda w, cp: cp(w, []), "give at least one policy combination"),
        (lambda w, cp: cp(w, [("fcfs",)]), "policy combination ('fcfs',)"),
        (lambda w, cp: cp(w, [("fcfs", None)]), "policy combination ('fcfs', None)"),
        (lambda w, cp: cp(w, "psp", policy_options="window=3"), "policy_options must be a mapping"),
        (lambda w, cp: cp(w, "fcfs", metric_options=[("threshold", 1)]), "metric_options must"),
        (lambda w, cp: cp(w, "fcfs", on_row=5), "on_row must be a function"),
    ],
)
def test_api_arguments_of_the_wrong_kind_are_usage_errors(swf, monkeypatch, call, said):
    import schedlab.sim.api
    from schedlab.comparison import compare_policies
    from schedlab.errors import UsageError

    def no_simulation(*args, **kwargs):
        raise AssertionError("simulated before checking the arguments")

    monkeypatch.setattr(schedlab.sim.api, "simulate", no_simulation)
    with pytest.raises(UsageError) as info:
        call(schedlab.read(swf), compare_policies)
    assert said in str(info.value)


def test_compare_policies_takes_pairs_and_strings_together(swf):
    from schedlab.comparison import compare_policies

    rows = compare_policies(schedlab.read(swf), [("fcfs", "easy"), "sjf+easy"]).rows
    assert [(r.policy, r.backfill) for r in rows] == [("fcfs", "easy"), ("sjf", "easy")]


# -- 12: out-of-range values ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("simulate", "psp-fing:jobs=50,scenario=DI,improve_rate=-1"), "improve_rate=-1"),
        (("simulate", "psp-fing:jobs=50,load=inf"), "load=inf"),
        (("metrics", "{t}", "-M", "threshold=inf"), "threshold must be > 0 and finite"),
        (("simulate", "{t}", "-p", "multifactor", "-P", "queue_priorities=1:10,1:5"),
         "queue 1 given twice"),
        (("simulate", "{t}", "-p", "multifactor", "-P", "weight_age=-1"), "weight_age=-1"),
        (("info", "{t}", "-R", "workers=99999999999"), "workers='99999999999': must be in 0..2"),
    ],
)  # fmt: skip
def test_out_of_range_values_are_refused(capsys, swf, args, said):
    assert said in one_error(capsys, *(a.format(t=swf) for a in args))


# -- 13: options that would do nothing --------------------------------------------------


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("simulate", "{t}", "--to", "swf"), "--to needs -o/--output"),
        (("simulate", "{t}", "--all-losses"), "--all-losses needs -o/--output"),
        (("validate", "{t}", "--limit", "-1"), "--limit"),
    ],
)
def test_options_that_would_do_nothing_are_refused(capsys, swf, args, said):
    assert said in one_error(capsys, *(a.format(t=swf) for a in args))


# -- 14: messages ---------------------------------------------------------------------------


def test_an_empty_number_option_and_a_private_converter_are_named_plainly(capsys, swf):
    line = one_error(capsys, "simulate", swf, "-p", "psp", "-P", "window=")
    assert line.endswith("option window='': expected int (the value is empty)"), line
    line = one_error(capsys, "simulate", "psp-fing:jobs=50,scenario=XX")
    assert "_scenario" not in line and "expected one of" in line


def test_a_platform_without_a_name_is_not_shown_with_an_empty_one(capsys, swf, platform):
    code, out, err = run_cli(capsys, "simulate", swf, "--platform", platform, "--no-timings")
    assert code == 0, err
    assert "platform  (" not in out and "a platform of 10 cores" in out


def test_simulate_refuses_a_dependencies_string(swf):
    """``schedlab.simulate(dependencies="no")`` counted as true (dependencies on)."""
    from schedlab.errors import UsageError

    workload = schedlab.read(swf)
    with pytest.raises(UsageError, match="dependencies must be True or False, got 'no'"):
        schedlab.simulate(workload, dependencies="no")
    assert schedlab.simulate(workload, dependencies=False).workload is not None


@pytest.mark.parametrize("args", [(), ("platform",), ("experiment",)])
def test_a_group_without_a_command_prints_its_help_as_written(capsys, args):
    """CLI audit finding 14: bare ``schedlab`` (or ``schedlab platform``) squashed
    the whole help text into one "error:" line."""
    code, out, err = run_cli(capsys, *args)
    assert code == 2 and not err
    assert out.startswith("Usage: schedlab") and out.count("\n") > 5
    assert "Commands:" in out


def test_report_options_the_page_does_not_use_are_errors(capsys, swf, tmp_path):
    """CLI audit finding 13: ``--gantt-max-jobs`` without ``--static`` and
    ``--gantt-rows`` with it were accepted and ignored."""
    out = str(tmp_path / "r.html")
    code, _, err = run_cli(capsys, "report", swf, "-o", out, "--gantt-max-jobs", "10")
    assert code == 2 and "--gantt-max-jobs applies to --static" in err
    code, _, err = run_cli(capsys, "report", swf, "-o", out, "--static", "--gantt-rows", "10")
    assert code == 2 and "--gantt-rows applies to the interactive page" in err
    code, _, err = run_cli(capsys, "report", swf, "-o", out, "--bins", "5")
    assert code == 2 and "x>=10" in err


def test_tsafrir_head_parameters_too_large_are_named_in_a_short_line():
    """CLI audit finding 14: ``head_a=1e300`` gave a 438-character error with a
    300-digit number, blaming ``head_share``."""
    from schedlab.errors import UsageError

    with pytest.raises(UsageError) as info:
        schedlab.read("tsafrir-estimates:base=lublin:jobs=10,head_a=1e300")
    message = str(info.value)
    assert "head_a=1e+300" in message and len(message) < 250 and "\n" not in message
