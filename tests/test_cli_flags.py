"""The command line's consistency (issue 16): one meaning per short flag in every
command, old spellings working with a deprecation warning, reader options on every
command that reads, hints in the failing command's spelling, what ``simulate``
says about its estimates, and ``schedlab plugins NAME``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from schedlab.cli import BUILTIN_COMMANDS, cli, command_for, main
from schedlab.cli.flags import (
    DEPRECATED_FLAGS,
    DEPRECATED_OPTIONS,
    SHORT_FLAGS,
    FlagCommand,
    adapt_hints,
    flag_problems,
    option_strings,
    rewrite_deprecated,
)
from schedlab.compat import SchedlabDeprecationWarning

# Five jobs on 10 processors (the golden workload of test_cli_metrics_compare.py).
SWF = """\
; Version: 2.2
; MaxProcs: 10
1 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1
2 0 10 5 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1
3 10 90 50 8 -1 -1 8 50 -1 1 2 1 -1 2 -1 -1 -1
4 20 -1 30 1 -1 -1 1 300 -1 1 3 1 -1 2 -1 -1 -1
5 30 20 0 1 -1 -1 1 60 -1 1 2 1 -1 -1 -1 -1 -1
"""

# The same jobs with a 19th column: strict SWF reading refuses it, lenient keeps 18.
SWF19 = "\n".join(line if line.startswith(";") else f"{line} 7" for line in SWF.splitlines()) + "\n"

# Three jobs without requested times (field 9 = -1): no estimate for any of them.
NO_REQUEST = """\
; MaxProcs: 4
1 0 -1 100 2 -1 -1 2 -1 -1 1 1 1 -1 1 -1 -1 -1
2 1 -1 10 4 -1 -1 4 -1 -1 1 2 1 -1 1 -1 -1 -1
3 2 -1 50 2 -1 -1 2 -1 -1 1 3 1 -1 1 -1 -1 -1
"""


@pytest.fixture()
def swf(tmp_path: Path) -> str:
    path = tmp_path / "golden.swf"
    path.write_text(SWF)
    return str(path)


@pytest.fixture()
def swf19(tmp_path: Path) -> str:
    path = tmp_path / "wide.swf"
    path.write_text(SWF19)
    return str(path)


def invoke(*args: str):
    """Run through CliRunner; stdout and stderr stay apart."""
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    """Run ``schedlab.cli.main``: (exit code, stdout, stderr)."""
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return int(code or 0), out.out, out.err


def all_commands() -> dict[str, click.Command]:
    """Every command ``schedlab`` runs: built-in ones, their subcommands (``platform
    infer``, ``experiment psp``) and plugin commands, by their command-line path."""
    from schedlab.registry import get_registry

    ctx = click.Context(cli, info_name="schedlab")
    found: dict[str, click.Command] = {}

    def walk(path: str, command: click.Command) -> None:
        found[path] = command
        if isinstance(command, click.Group):
            sub_ctx = click.Context(command, parent=ctx, info_name=path)
            for name in command.list_commands(sub_ctx):
                sub = command.get_command(sub_ctx, name)
                if sub is not None:
                    walk(f"{path} {name}", sub)

    for name in BUILTIN_COMMANDS:
        walk(name, cli.get_command(ctx, name))
    for spec in get_registry().all("command"):
        if "." not in spec.name:  # experiment.NAME ones are reached through the group
            walk(spec.name, cli.get_command(ctx, spec.name))
    return found


# -- one meaning per short flag ---------------------------------------------------


def test_every_command_follows_the_table_of_short_flags():
    commands = all_commands()
    assert {"simulate", "convert", "platform infer", "experiment psp"} <= set(commands)
    assert flag_problems(commands) == []


def test_no_short_flag_means_two_things():
    """Per short flag, the long options it stands for in each command: each one of
    the table's names for that flag (and so one meaning), in every command."""
    uses: dict[str, list[tuple[str, frozenset[str]]]] = {}
    for path, command in all_commands().items():
        for param in command.params:
            if isinstance(param, click.Option):
                names = [*param.opts, *param.secondary_opts]
                longs = frozenset(n for n in names if n.startswith("--"))
                for short in (n for n in names if len(n) == 2 and n[1] != "-"):
                    uses.setdefault(short, []).append((path, longs))
    assert set(uses) <= set(SHORT_FLAGS)
    for short, found in uses.items():
        for path, longs in found:
            assert longs & SHORT_FLAGS[short][1], (short, path, longs)
    # The old clashes are gone: -o is the output file wherever it is defined, -O
    # and -w stand for nothing else than in the table.
    assert {p for p, _ in uses["-o"]} == {"simulate", "report", "platform infer"}
    assert "-O" not in uses and {p for p, _ in uses["-w"]} == {"sweep", "experiment estimates"}
    assert {p for p, _ in uses["-R"]} >= {"info", "validate", "convert", "simulate", "metrics"}


def test_the_check_finds_a_clash():
    @click.command("bad")
    @click.option("--option", "-o", multiple=True)
    @click.option("--frobnicate", "-Z")
    def bad(option, frobnicate):  # pragma: no cover - never run
        pass

    problems = flag_problems({"bad": bad})
    assert len(problems) == 2
    assert "-o stands for --option, but -o means output file" in problems[0]
    assert "-Z is not in the table" in problems[1]
    plain = click.Command("convert", params=[click.Option(["--read-option", "-o"])])
    assert any("not a FlagCommand" in p for p in flag_problems({"convert": plain}))


def test_commands_with_old_spellings_rewrite_them():
    commands = all_commands()
    for name in DEPRECATED_FLAGS:
        assert isinstance(commands[name], FlagCommand), name


def test_rewrite_leaves_values_and_the_rest_alone():
    command = all_commands()["convert"]
    with pytest.warns(SchedlabDeprecationWarning) as caught:
        args = rewrite_deprecated(
            command,
            ["in.swf", "-o", "a=1", "-wb=2", "--to", "-o", "out", "--", "-o"],
            DEPRECATED_FLAGS["convert"],
        )
    # "--to -o": a value, not a flag; after "--" nothing is rewritten.
    assert args == ["in.swf", "-R", "a=1", "-Wb=2", "--to", "-o", "out", "--", "-o"]
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2  # once per old flag
    assert "`schedlab convert -o` is deprecated" in messages[0]
    assert "use -R (--read-option, reader option KEY=VALUE) instead" in messages[0]
    assert "use -W (--write-option" in messages[1]


# -- old spellings work and warn ----------------------------------------------------


def _warned(stderr: str, command: str, old: str, new: str) -> bool:
    return bool(
        re.search(
            rf"schedlab: warning: `schedlab {command} {old}` is deprecated since "
            rf"schedlab 0\.1 and will be removed in 0\.3: use {new} \(",
            stderr,
        )
    )


@pytest.mark.parametrize(
    ("command", "old", "new", "tail"),
    [
        ("info", "-o", "-R", ["summary_only=true", "--json"]),
        ("validate", "-o", "-R", ["summary_only=true", "--json"]),
        ("metrics", "-O", "-M", ["threshold=60", "-m", "bsld", "--json"]),
        ("compare", "-O", "-M", ["threshold=60", "-p", "fcfs,sjf", "-m", "bsld", "--json"]),
    ],
)
def test_old_spelling_gives_the_same_output_and_warns(swf, command, old, new, tail):
    before = invoke(command, swf, old, *tail)
    after = invoke(command, swf, new, *tail)
    assert before.exit_code == after.exit_code == 0, before.output
    assert before.stdout == after.stdout and before.stdout.strip()
    assert _warned(before.stderr, command, old, new), before.stderr
    assert "deprecated" not in after.stderr


def test_metric_options_still_reach_the_metric(swf):
    """-O and -M both set the bounded-slowdown threshold (max 140/60, not 140/10)."""
    for flag in ("-O", "-M", "--option", "--metric-option"):
        data = json.loads(
            invoke("metrics", swf, flag, "threshold=60", "-m", "bsld", "--json").stdout
        )
        assert data["rows"][0]["bounded-slowdown"]["max"] == pytest.approx(140 / 60), flag


def test_convert_old_spellings_write_the_same_file(swf, tmp_path):
    old, new = tmp_path / "old.swf", tmp_path / "new.swf"
    before = invoke("convert", swf, str(old), "-o", "summary_only=true", "-w", "extra_columns=true")
    after = invoke("convert", swf, str(new), "-R", "summary_only=true", "-W", "extra_columns=true")
    assert before.exit_code == after.exit_code == 0
    assert old.read_bytes() == new.read_bytes()
    assert _warned(before.stderr, "convert", "-o", "-R")
    assert _warned(before.stderr, "convert", "-w", "-W")
    # the option really reaches the writer: an unknown writer option is refused
    code, _, err = run_main_plain("convert", swf, str(tmp_path / "x.swf"), "-w", "nope=1")
    assert code == 2 and "unknown option 'nope'" in err


def run_main_plain(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    message = str(result.exception) if result.exception else ""
    return (2 if result.exception else result.exit_code), result.stdout, result.stderr + message


@pytest.mark.parametrize("flag", ["-O", "-P", "--option", "--policy-option"])
def test_simulate_policy_options_old_and_new(capsys, swf, flag):
    code, _, err = run_main(capsys, "simulate", swf, "--policy", "fcfs", flag, "nope=1")
    assert code == 2
    assert "policy fcfs: unknown option 'nope'" in err
    assert _warned(err, "simulate", "-O", "-P") == (flag == "-O")


def test_simulate_write_options_reach_the_writer(capsys, swf, tmp_path):
    fractional = tmp_path / "frac.swf"
    fractional.write_text(SWF.replace("\n2 0 10 5 ", "\n2 0.5 10 5.25 "))
    out = tmp_path / "s.swf"

    def times() -> list[str]:
        jobs = [line.split() for line in out.read_text().splitlines() if line[0] != ";"]
        assert len(jobs) == 5
        return [field for job in jobs for field in job[1:4]]

    assert run_main(capsys, "simulate", str(fractional), "-o", str(out))[0] == 0
    assert any("." in t for t in times())
    code, _, err = run_main(
        capsys, "simulate", str(fractional), "-o", str(out), "-W", "integer_times=true"
    )
    assert code == 0, err
    assert not any("." in t for t in times())
    code, _, err = run_main(capsys, "simulate", swf, "-o", str(out), "-W", "nope=1")
    assert code == 2 and "unknown option 'nope'" in err
    code, _, err = run_main(capsys, "simulate", swf, "-W", "integer_times=true")
    assert code == 2 and "-W/--write-option needs -o/--output" in err


def test_simulate_backfill_and_estimator_short_options(capsys, swf):
    code, _, err = run_main(capsys, "simulate", swf, "-b", "depth", "-B", "nope=1")
    assert code == 2 and "unknown option 'nope'" in err and "depth" in err
    code, _, err = run_main(capsys, "simulate", swf, "-e", "user-average", "-E", "nope=1")
    assert code == 2 and "unknown option 'nope'" in err


# -- reader options reach every command that reads ----------------------------------

READING = {
    "info": ["info", "{f}"],
    "validate": ["validate", "{f}"],
    "simulate": ["simulate", "{f}"],
    "metrics": ["metrics", "{f}"],
    "compare": ["compare", "{f}", "-p", "fcfs"],
    "report": ["report", "{f}", "-o", "{tmp}/r.html"],
    "sweep": ["sweep", "-w", "{f}", "--out", "{tmp}/sweep", "--workers", "1", "--no-progress"],
    "platform infer": ["platform", "infer", "{f}", "-o", "{tmp}/p.toml"],
    "convert": ["convert", "{f}", "{tmp}/out.swf"],
}


@pytest.mark.parametrize("name", sorted(READING))
def test_reader_options_and_hints_in_every_reading_command(capsys, swf19, tmp_path, name):
    args = [a.format(f=swf19, tmp=tmp_path) for a in READING[name]]
    command = command_for(args)
    assert command is not None and "-R" in option_strings(command)
    # validate reads leniently by itself: -R lenient=false makes it strict
    strict = ["-R", "lenient=false"] if name == "validate" else []
    code, _, err = run_main(capsys, *args, *strict)
    assert code == 2 and "found 19 fields, expected 18" in err
    # every option the hint suggests is one this command has
    hinted = re.findall(r"(?<![\w/.-])(--?[A-Za-z][\w-]*)", err.split("(not standard")[1])
    assert hinted and set(hinted) <= option_strings(command), (hinted, err)
    expected = "--lenient" if "--lenient" in option_strings(command) else "-R lenient=true"
    assert f"read it leniently, {expected}, to keep" in err
    if name == "report":
        pytest.importorskip("matplotlib")
    code, out, err = run_main(capsys, *args, "-R", "lenient=true")
    if name == "validate":  # read to the end; the extra column is a finding
        assert code == 1 and "FAILED: 5 jobs; 5 error(s)" in out
        return
    assert code == 0, err
    if name == "info":
        assert "jobs: 5" in out


def test_reader_option_errors_name_the_flag(capsys, swf):
    code, _, err = run_main(capsys, "metrics", swf, "-R", "lenient")
    assert code == 2 and "-R/--read-option 'lenient': expected key=value" in err
    code, _, err = run_main(capsys, "simulate", swf, "-R", "nope=1")
    assert code == 2 and "nope" in err


def test_adapt_hints():
    simulate = command_for(["simulate", "x"])
    convert = command_for(["convert", "x", "y"])
    text = "x.swf:1: bad (read it leniently, reader option lenient=true, to keep it)"
    assert "reader option lenient=true" in adapt_hints(text, None)
    assert "leniently, -R lenient=true, to" in adapt_hints(text, simulate)
    assert "leniently, --lenient, to" in adapt_hints(text, convert)
    assert adapt_hints("use --lenient here", simulate) == "use -R lenient=true here"
    assert adapt_hints("use --lenient here", convert) == "use --lenient here"
    plugins = command_for(["plugins"])
    assert adapt_hints(text, plugins) == text  # nothing to offer: unchanged


# -- simulate: estimates, notes, width ----------------------------------------------


def test_simulate_says_when_estimates_fell_back(tmp_path):
    path = tmp_path / "noreq.swf"
    path.write_text(NO_REQUEST)
    result = invoke("simulate", str(path))
    assert result.exit_code == 0
    assert (
        "note: estimates fell back for 3 of 3 jobs: the 'requested' estimator had no value "
        "for them (requested time unknown), so the scheduler used their actual run times"
    ) in result.stdout
    data = json.loads(invoke("simulate", str(path), "--json").stdout)
    assert data["simulation"]["stats"]["estimate_fallbacks"] == 3
    assert data["notes"][0].startswith("estimates fell back for 3 of 3 jobs")
    path.write_text("; MaxRuntime: 500\n" + NO_REQUEST)
    assert "used the header's MaxRuntime (500)" in invoke("simulate", str(path)).stdout
    # with estimates there is nothing to say
    assert "fell back" not in invoke("simulate", str(path), "-e", "actual").stdout


def test_simulate_prints_the_metric_notes_uncut(swf):
    import schedlab
    from schedlab.measure import compute_metrics

    report = compute_metrics(schedlab.simulate(schedlab.read(swf)))
    assert report.notes  # job 5 runs 0 s: slowdown unknown
    out = invoke("simulate", swf).stdout
    for note in report.notes:
        assert f"note: {note}" in out
    lines = out.splitlines()
    # not a terminal: nothing squeezed into 80 columns or cut with an ellipsis
    assert max(map(len, lines)) > 80 and "…" not in out


# -- schedlab plugins NAME ------------------------------------------------------------


def test_plugins_name_shows_description_and_options():
    data = json.loads(invoke("plugins", "swf", "--kind", "reader", "--json").stdout)
    assert [(c["kind"], c["name"]) for c in data] == [("reader", "swf")]
    lenient = next(o for o in data[0]["options"] if o["name"] == "lenient")
    assert lenient["type"] == "bool" and lenient["default"] is False
    assert data[0]["description"].startswith("Standard Workload Format")
    both = json.loads(invoke("plugins", "swf", "--json").stdout)
    assert [c["kind"] for c in both] == ["reader", "writer"]
    text = invoke("plugins", "depth").stdout
    assert "backfill depth" in text and "options (given as -B KEY=VALUE):" in text
    assert re.search(r"depth\s+integer or 'all'\s+2\s+number of blocked jobs", text)


def test_plugins_name_matches_the_registry_for_every_component():
    from schedlab.plugin_types import COMPONENT_KINDS
    from schedlab.registry import get_registry

    registry = get_registry()
    seen = 0
    for kind in COMPONENT_KINDS:
        for comp in registry.all(kind):
            data = json.loads(invoke("plugins", comp.name, "--kind", kind, "--json").stdout)
            assert [(d["name"], d["plugin"]) for d in data] == [(comp.name, comp.provider)]
            assert [o["name"] for o in data[0]["options"]] == [o.name for o in comp.options]
            seen += 1
    assert seen > 30


def test_plugins_name_of_a_plugin_and_unknown_names(capsys):
    data = json.loads(invoke("plugins", "job-metrics", "--json").stdout)
    assert {"wait", "bounded-slowdown"} <= {c["name"] for c in data}
    code, _, err = run_main(capsys, "plugins", "nope")
    assert code == 2 and "no component or plugin named 'nope'" in err
    code, _, err = run_main(capsys, "plugins", "swf", "--kind", "policy")
    assert code == 2 and "no policy named 'swf'" in err
    code, _, err = run_main(capsys, "plugins", "--kind", "policy")
    assert code == 2 and "--kind needs a NAME" in err


# -- sweeps and warnings made errors -----------------------------------------------


def test_sweep_read_options_in_the_file_and_the_cells(tmp_path, swf19):
    from schedlab.errors import UsageError
    from schedlab.experiment.config import SweepConfig
    from schedlab.experiment.sweep import Cell

    cfg = SweepConfig.from_mapping({"workloads": [swf19], "read_options": {"lenient": True}})
    (cell,) = cfg.cells()
    assert dict(cell.read_options) == {"lenient": True}
    assert cell.to_dict()["read_options"] == {"lenient": True}
    # a cell without reader options keeps the key it had before they existed
    assert "read_options" not in Cell(workload=swf19).to_dict()
    assert Cell(workload=swf19).key != cell.key
    with pytest.raises(UsageError, match="read_options must be a table"):
        SweepConfig.from_mapping({"workloads": [swf19], "read_options": "lenient"})
    config = tmp_path / "sweep.json"
    config.write_text(json.dumps({"workloads": [swf19], "read_options": {"lenient": True}}))
    result = invoke("sweep", str(config), "--out", str(tmp_path / "o"), "--workers", "1")
    assert result.exit_code == 0 and "1 cells: 1 run" in result.stderr


def test_old_spelling_with_warnings_as_errors_is_a_usage_error(capsys, swf):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", SchedlabDeprecationWarning)
        code, _, err = run_main(capsys, "metrics", swf, "-O", "threshold=60")
    assert code == 2
    assert err.startswith("schedlab: error: `schedlab metrics -O` is deprecated")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("spelling", [["--window", "5"], ["--window=5"]])
def test_compare_window_is_the_old_spelling_of_block(swf, spelling):
    """``compare --window`` (the --ci block length) was renamed ``--block``, since
    ``report --window`` is the time range a page opens on: the old spelling gives the
    same output, with one deprecation warning naming the new one."""
    tail = ["-p", "fcfs,sjf", "-m", "wait", "--ci", "--resamples", "100", "--json"]
    before = invoke("compare", swf, *spelling, *tail)
    after = invoke("compare", swf, "--block", "5", *tail)
    assert before.exit_code == after.exit_code == 0, before.output
    assert before.stdout == after.stdout and before.stdout.strip()
    assert _warned(before.stderr, "compare", "--window", "--block"), before.stderr
    assert before.stderr.count("is deprecated") == 1
    assert "deprecated" not in after.stderr


def test_the_long_renames_name_options_the_commands_have():
    commands = all_commands()
    for name, renames in DEPRECATED_OPTIONS.items():
        assert isinstance(commands[name], FlagCommand), name
        for old, (new, _) in renames.items():
            assert new in option_strings(commands[name])
            assert old not in option_strings(commands[name])
