"""Findings of the second third-party audit of the plugin contract (thirdparty2):

- what a component prints while it runs goes to stderr, never into a command's
  machine-readable stdout (``simulate --json``, ``convert IN -``, ``info --json``);
- entry-point name clashes: a component asked for names the disabled plugins, an
  entry point listed twice by one distribution is loaded once (or named as declared
  twice), and three claimants of one name get a hint that can work;
- an ``OptionSpec`` default is checked as a user's value is (type, ``choices``,
  NaN) and option names are unique in a record;
- a sweep cell's invariant error (a ``StrategyError``) names the cell.

The plugins are fake installed distributions written to ``tmp_path`` (a
``*.dist-info`` folder with ``entry_points.txt``), found on ``PYTHONPATH`` in a
child process, or passed to :func:`schedlab.registry.build_registry` as entry points.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import warnings
from importlib import metadata
from pathlib import Path

import pytest
import schedlab
from schedlab import OptionSpec, PolicySpec
from schedlab.errors import PluginLoadWarning, UnknownComponentError
from schedlab.registry import build_registry
from schedlab.testing import builtin_entry_points

CONTROLS = (
    "SCHEDLAB_STRICT_PLUGINS",
    "SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD",
    "SCHEDLAB_ALLOW_PLUGINS",
    "SCHEDLAB_BLOCK_PLUGINS",
)

SWF = textwrap.dedent(
    """\
    ; MaxProcs: 16
    1 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1
    2 5 0 100 16 -1 -1 16 200 -1 1 1 1 -1 -1 -1 -1 -1
    3 10 0 50 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1
    4 20 0 50 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1
    """
)


def _dist(site: Path, dist: str, lines: list[str]) -> Path:
    """A fake installed distribution ``dist`` 0.1 in ``site`` declaring ``lines``
    (``name = module``) in group ``schedlab``; returns its dist-info folder."""
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[schedlab]\n" + "".join(f"{x}\n" for x in lines))
    return info


def _entry_points(*infos: Path) -> list[metadata.EntryPoint]:
    return [ep for info in infos for ep in metadata.PathDistribution(info).entry_points]


def _cli(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in CONTROLS}
    clean["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), clean.get("PYTHONPATH")]))
    clean["SCHEDLAB_ALLOW_PLUGINS"] = "t2print"
    return subprocess.run(
        [sys.executable, "-m", "schedlab", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=clean,
        timeout=120,
    )


# --------------------------------------------- finding 2: prints of running components

PRINTING = textwrap.dedent(
    """\
    from schedlab import (BackfillSpec, GeneratorSpec, Header, Job, MetricSpec, OptionSpec,
                          ReaderSpec, Workload, WriterSpec, hookimpl, open_output)

    def _workload(jobs=3):
        header = Header(); header.set("MaxProcs", 8)
        return Workload.from_jobs([Job(job_number=i + 1, submit_time=10.0 * i, run_time=100.0,
                                       requested_processors=2, allocated_processors=2)
                                   for i in range(jobs)], header)

    class Printer:
        def __init__(self):
            print("FACTORY SAYS HI")
        def bind(self, state):
            self.state = state
        def schedule(self, now):
            print("BF-PASS", now)
            self.state.start_from_head()

    class Twice:
        def bind(self, state):
            self.state = state
        def schedule(self, now):
            if self.state.queue:
                job = self.state.queue[0][1]
                self.state.start(job)
                self.state.start(job)

    def write(workload, path, **options):
        print("WRITER SAYS HI")
        with open_output(path) as out:
            for job in workload:
                out.write(f"{job.job_number} {job.submit_time} {job.run_time}\\n")

    def read(source, **options):
        print("READER SAYS HI")
        return _workload()

    def generate(jobs=3):
        print("GEN SAYS HI")
        return _workload(jobs)

    def metric(columns, **options):
        print("METRIC SAYS HI")
        return 1.0

    @hookimpl
    def schedlab_backfills():
        return [BackfillSpec(name="t2-print", factory=Printer),
                BackfillSpec(name="t2-twice", factory=Twice)]

    @hookimpl
    def schedlab_writers():
        return [WriterSpec(name="t2-wprint", write=write, suffixes=(".t2wp",))]

    @hookimpl
    def schedlab_readers():
        return [ReaderSpec(name="t2-rprint", read=read, suffixes=(".t2rp",))]

    @hookimpl
    def schedlab_generators():
        return [GeneratorSpec(name="t2-gprint", generate=generate,
                              options=(OptionSpec("jobs", int, 3, min=1, max=100),))]

    @hookimpl
    def schedlab_metrics():
        return [MetricSpec(name="t2-mprint", compute=metric)]
    """
)


@pytest.fixture()
def printing(tmp_path: Path) -> tuple[Path, Path]:
    """(site, work folder): the plugin ``t2print`` whose components print."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "t2print_mod.py").write_text(PRINTING)
    _dist(site, "schedlab-t2print", ["t2print = t2print_mod"])
    work = tmp_path / "work"
    work.mkdir()
    (work / "small.swf").write_text(SWF)
    (work / "a.t2rp").write_text("")
    return site, work


def test_simulate_json_stays_json_when_a_backfill_and_a_metric_print(printing):
    site, work = printing
    run = _cli(site, work, "simulate", "small.swf", "-b", "t2-print", "--json", "--no-timings")
    assert run.returncode == 0, run.stderr
    json.loads(run.stdout)  # nothing but the JSON
    assert "BF-PASS 0.0" in run.stderr and "FACTORY SAYS HI" in run.stderr
    assert "METRIC SAYS HI" in run.stderr  # a metric of the default set


def test_convert_to_standard_output_carries_only_the_writers_bytes(printing):
    site, work = printing
    run = _cli(site, work, "convert", "small.swf", "-", "--to", "t2-wprint")
    assert run.returncode == 0, run.stderr
    to_file = _cli(site, work, "convert", "small.swf", "out.t2wp")
    assert to_file.returncode == 0, to_file.stderr
    assert run.stdout == (work / "out.t2wp").read_text()
    assert run.stdout.startswith("1 ") and len(run.stdout.splitlines()) == 4
    assert "WRITER SAYS HI" in run.stderr


def test_info_json_stays_json_when_a_reader_or_a_generator_prints(printing):
    site, work = printing
    for source in ("a.t2rp", "t2-gprint:jobs=4"):
        run = _cli(site, work, "info", source, "--json")
        assert run.returncode == 0, run.stderr
        json.loads(run.stdout)
        assert ("READER" if source == "a.t2rp" else "GEN") + " SAYS HI" in run.stderr


def test_blame_sends_stdout_to_stderr_and_restores_it(capsys):
    registry = schedlab.get_registry()
    spec = registry.writer("swf")
    with registry.blame(spec), registry.blame(spec):  # nested: restored once, at the end
        print("inside")
    print("outside")
    out, err = capsys.readouterr()
    assert out == "outside\n" and err == "inside\n"


# ------------------------------------------- finding 5: entry-point clash, "unknown"


@pytest.fixture()
def third_party(monkeypatch) -> None:
    """Third-party entry points are loaded (the suite's conftest turns them off)."""
    for name in CONTROLS:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("third_party")
def test_component_of_a_plugin_disabled_by_an_entry_point_clash_names_it(tmp_path: Path):
    one = _dist(tmp_path, "schedlab-d1", ["dupep = t2d1mod"])
    two = _dist(tmp_path, "schedlab-d2", ["dupep = t2d2mod"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = build_registry(
            entry_points=[*builtin_entry_points(), *_entry_points(one, two)], strict=False
        )
    assert len([w for w in caught if issubclass(w.category, PluginLoadWarning)]) == 2
    with pytest.raises(UnknownComponentError) as info:
        registry.policy("t2-same")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("no loaded plugin provides policy 't2-same'; ")
    assert "plugin 'dupep' (schedlab-d1 0.1)" in message
    assert "plugin 'dupep' (schedlab-d2 0.1)" in message
    assert "is disabled: its entry-point name 'dupep' is also used by" in message
    assert "(available: " in message and "fcfs" in message


# ---------------------------------------------- finding 6: misleading clash messages


@pytest.mark.usefixtures("third_party")
def test_an_entry_point_listed_twice_by_one_distribution_is_loaded_once(tmp_path, monkeypatch):
    (tmp_path / "t2e1mod.py").write_text(
        "from schedlab import PolicySpec, hookimpl\n"
        "class P:\n    def key(self, job, now): return job\n"
        "@hookimpl\ndef schedlab_policies():\n    return [PolicySpec(name='t2-e1', factory=P)]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    info = _dist(tmp_path, "schedlab-e1", ["e1 = t2e1mod", "e1 = t2e1mod"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at all
        registry = build_registry(
            entry_points=[*builtin_entry_points(), *_entry_points(info)], strict=False
        )
    assert registry.policy("t2-e1").provider == "e1"
    assert registry.host.infos["e1"].status == "loaded"


@pytest.mark.usefixtures("third_party")
def test_an_entry_point_declared_twice_differently_says_so(tmp_path: Path):
    info = _dist(tmp_path, "schedlab-e2", ["e2 = t2e2a", "e2 = t2e2b"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build_registry(entry_points=[*builtin_entry_points(), *_entry_points(info)], strict=False)
    texts = [str(w.message) for w in caught if issubclass(w.category, PluginLoadWarning)]
    assert len(texts) == 1, texts
    assert "entry-point name 'e2' is declared twice by schedlab-e2 0.1 (t2e2a, t2e2b)" in texts[0]
    assert "also used by" not in texts[0]


def _claimant(site: Path, module: str, dist: str, entry: str, alias: bool = False) -> Path:
    record = (
        "PolicySpec(name='t2-owner3', factory=P, aliases=('t2-same3',))"
        if alias
        else "PolicySpec(name='t2-same3', factory=P)"
    )
    (site / f"{module}.py").write_text(
        "from schedlab import PolicySpec, hookimpl\n"
        "class P:\n    def key(self, job, now): return job\n"
        f"@hookimpl\ndef schedlab_policies():\n    return [{record}]\n"
    )
    return _dist(site, dist, [f"{entry} = {module}"])


@pytest.mark.usefixtures("third_party")
def test_three_claimants_of_one_name_get_a_hint_that_keeps_one(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    infos = [
        _claimant(tmp_path, "t2c1mod", "schedlab-c1", "c1"),
        _claimant(tmp_path, "t2c2mod", "schedlab-c2", "c2"),
        _claimant(tmp_path, "t2a1mod", "schedlab-a1", "a1", alias=True),
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build_registry(entry_points=[*builtin_entry_points(), *_entry_points(*infos)], strict=False)
    texts = sorted(str(w.message) for w in caught if issubclass(w.category, PluginLoadWarning))
    assert len(texts) == 3, texts
    for text, plugin, others in (
        (texts[0], "a1", "c1,c2"),
        (texts[1], "c1", "a1,c2"),
        (texts[2], "c2", "a1,c1"),
    ):
        assert f"schedlab plugin {plugin!r}" in text
        assert "neither" not in text and "would keep the other" not in text
        assert "none of them is used" in text
        assert f"SCHEDLAB_BLOCK_PLUGINS={others} would keep this one" in text


# ------------------------------------------------- finding 7: option defaults checked


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (
            lambda: OptionSpec("mode", str, "zzz", "x", choices=("a", "b")),
            "OptionSpec 'mode': default 'zzz' is not one of a, b",
        ),
        (lambda: OptionSpec("w", int, "ten", "x"), "OptionSpec 'w': default 'ten' is not an int"),
        (lambda: OptionSpec("w", int, 2.5, "x"), "OptionSpec 'w': default 2.5 is not an int"),
        (lambda: OptionSpec("w", int, True, "x"), "OptionSpec 'w': default True is not an int"),
        (lambda: OptionSpec("w", float, "1", "x"), "OptionSpec 'w': default '1' is not a float"),
        (lambda: OptionSpec("w", bool, 1, "x"), "OptionSpec 'w': default 1 is not a bool"),
        (lambda: OptionSpec("w", str, 5, "x"), "OptionSpec 'w': default 5 is not a str"),
        (
            lambda: OptionSpec("w", float, math.nan, "x"),
            "OptionSpec 'w': default nan is NaN, which needs allow_nan=True",
        ),
    ],
)
def test_a_bad_default_fails_when_the_option_is_made(option, message):
    with pytest.raises(ValueError) as info:
        option()
    assert str(info.value) == message


def test_good_defaults_are_accepted_unchanged():
    assert OptionSpec("w", float, 1, "x").default == 1  # an int for a float option
    assert OptionSpec("w", float, math.nan, allow_nan=True).default != 0
    assert OptionSpec("w", float, math.inf).default == math.inf
    assert OptionSpec("mode", str, "a", choices=("a", "b")).default == "a"
    assert OptionSpec("w", int, None, min=1).default is None  # unset
    assert OptionSpec("w", lambda s: s.split("/"), (1, 2)).default == (1, 2)  # own converter
    assert OptionSpec("n", int, 10, choices=(10, 20)).default == 10


def test_two_options_of_one_name_fail_when_the_record_is_made():
    with pytest.raises(ValueError, match=r"^PolicySpec 't2-x': option 'w' is declared twice$"):
        PolicySpec(
            name="t2-x",
            factory=dict,
            options=(OptionSpec("w", float, 1.0), OptionSpec("w", int, 2)),
        )
    with pytest.raises(ValueError, match=r"option 1 is str, expected OptionSpec"):
        PolicySpec(name="t2-x", factory=dict, options=(OptionSpec("w"), "v"))  # type: ignore[arg-type]


@pytest.mark.usefixtures("third_party")
def test_a_plugin_with_a_bad_default_is_disabled_with_a_warning_naming_it(tmp_path, monkeypatch):
    (tmp_path / "t2regmod.py").write_text(
        "from schedlab import OptionSpec, PolicySpec, hookimpl\n"
        "class P:\n    def key(self, job, now): return job\n"
        "@hookimpl\ndef schedlab_policies():\n"
        "    return [PolicySpec(name='t2-reg', factory=P,\n"
        "            options=(OptionSpec('mode', str, 'zzz', choices=('a', 'b')),))]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    info = _dist(tmp_path, "schedlab-t2reg", ["t2reg = t2regmod"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = build_registry(
            entry_points=[*builtin_entry_points(), *_entry_points(info)], strict=False
        )
    texts = [str(w.message) for w in caught if issubclass(w.category, PluginLoadWarning)]
    assert len(texts) == 1 and "schedlab plugin 't2reg' (t2regmod)" in texts[0]
    assert "OptionSpec 'mode': default 'zzz' is not one of a, b" in texts[0]
    assert not registry.has("policy", "t2-reg")


# ------------------------------------------------------ finding 9: a sweep cell's error


def test_a_strategy_error_in_a_sweep_cell_names_the_cell():
    from schedlab.experiment.sweep import Cell, _in_cell
    from schedlab.sim.state import StrategyError

    cell = Cell(workload="trace.swf", policy="fcfs", backfill="t2-twice")
    error = _in_cell(StrategyError("backfill 't2-twice' broke an invariant at t=0"), cell)
    assert type(error) is StrategyError
    assert str(error) == f"cell {cell.label()}: backfill 't2-twice' broke an invariant at t=0"


def test_a_sweep_names_the_cell_whose_strategy_broke_an_invariant(printing):
    site, work = printing
    run = _cli(site, work, "sweep", "-w", "small.swf", "-b", "easy,t2-twice", "--out", "sw",
               "--no-progress")  # fmt: skip
    assert run.returncode == 2, run.stderr
    lines = [x for x in run.stderr.splitlines() if x.startswith("schedlab: ")]  # not the prints
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert lines[0].startswith(
        "schedlab: error: cell small.swf fcfs+t2-twice: backfill 't2-twice' broke an invariant"
    ), lines
