"""Third-party plugins that misbehave around metrics, writers, readers, commands and
the registry (audit "plugins", findings 5 to 13).

The standard: a misbehaving third-party plugin is disabled (or its component left
out) with a warning naming it, or, when the user asked for it explicitly, a one-line
error naming it; never a silently wrong result, never a traceback.

Each plugin is a tiny module written into a fake installed distribution in the
test's temporary folder (a ``*.dist-info`` with ``entry_points.txt``), so that it is
a real third-party plugin (not one registered by hand, whose faults are always
errors).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import warnings
from importlib import metadata

import pytest
import schedlab
from schedlab.api import detect_reader
from schedlab.errors import PluginError, PluginRuntimeError, PluginRuntimeWarning
from schedlab.registry import PluginLoadWarning, build_registry
from schedlab.testing import builtin_entry_points, run_cli, using_registry, workload_from_rows

CONTROLS = (
    "SCHEDLAB_STRICT_PLUGINS",
    "SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD",
    "SCHEDLAB_ALLOW_PLUGINS",
    "SCHEDLAB_BLOCK_PLUGINS",
)


@pytest.fixture()
def site(tmp_path, monkeypatch):
    """``site(entry_point, source)``: install module ``source`` as the plugin
    ``entry_point`` of distribution ``schedlab-<entry_point> 0.1`` and return the
    built-in entry points plus every fake one installed so far."""
    for name in CONTROLS:
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))

    def install(entry_point: str, source: str) -> list[metadata.EntryPoint]:
        module = "mis_" + entry_point.replace("-", "_")
        (folder / f"{module}.py").write_text(textwrap.dedent(source))
        info = folder / f"schedlab_{module}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: schedlab-{entry_point}\nVersion: 0.1\n"
        )
        (info / "entry_points.txt").write_text(f"[schedlab]\n{entry_point} = {module}\n")
        monkeypatch.delitem(sys.modules, module, raising=False)
        fake = [
            ep
            for dist in metadata.distributions(path=[str(folder)])
            for ep in dist.entry_points
            if ep.group == "schedlab"
        ]
        return [*builtin_entry_points(), *fake]

    install.folder = folder  # type: ignore[attr-defined]
    return install


def _registry(entry_points):
    """A registry of ``entry_points`` and the load warnings seen while building it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = build_registry(entry_points=entry_points)
    return registry, [str(w.message) for w in caught if issubclass(w.category, PluginLoadWarning)]


ROWS = [
    {"submit_time": 0, "wait_time": 5, "run_time": 100, "allocated_processors": 2},
    {"submit_time": 10, "wait_time": 50, "run_time": 20, "allocated_processors": 4},
    {"submit_time": 30, "wait_time": 0, "run_time": 60, "allocated_processors": 1},
]


# ------------------------------------------------------ 5. metrics writing columns

MUTATING_METRIC = """
import numpy as np
from schedlab import MetricSpec, hookimpl

def mutate(columns, **_):
    columns["wait_time"][:] = 0.0
    columns["run_time"][:] = 1.0
    return np.zeros(len(columns))

def mutate_scalar(columns, **_):
    columns["submit_time"][0] = -1e9
    return 1.0

@hookimpl
def schedlab_metrics():
    return [MetricSpec(name="aa-mutate", compute=mutate, per_job=True),
            MetricSpec(name="aa-mutate-scalar", compute=mutate_scalar)]
"""


def test_a_metric_writing_its_columns_is_left_out_and_corrupts_nothing(site):
    registry, _ = _registry(site("mutmet", MUTATING_METRIC))
    workload = workload_from_rows(ROWS, procs=8)
    builtins = build_registry(entry_points=builtin_entry_points())
    clean = schedlab.compute_metrics(workload_from_rows(ROWS, procs=8), registry=builtins)
    with pytest.warns(PluginRuntimeWarning) as caught:
        report = schedlab.compute_metrics(workload, registry=registry)
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2
    assert all("plugin 'mutmet' (schedlab-mutmet 0.1)" in m for m in messages)
    assert "metric 'aa-mutate'" in messages[0] and "read-only" in messages[0]
    assert "metric 'aa-mutate-scalar'" in messages[1]
    assert "aa-mutate" not in report.metric_names()
    for name in ("wait", "response", "makespan", "utilization"):
        assert report.value(name, "mean" if name in ("wait", "response") else None) == (
            clean.value(name, "mean" if name in ("wait", "response") else None)
        )
    assert workload.to_arrays()["wait_time"].tolist() == [5, 50, 0]


def test_a_metric_writing_its_columns_asked_by_name_is_an_error_naming_it(site):
    registry, _ = _registry(site("mutmet", MUTATING_METRIC))
    with pytest.raises(PluginRuntimeError) as info:
        schedlab.compute_metrics(
            workload_from_rows(ROWS, procs=8), names=["wait", "aa-mutate"], registry=registry
        )
    assert str(info.value).startswith("plugin 'mutmet' (schedlab-mutmet 0.1) failed in metric")
    assert "\n" not in str(info.value)


# ------------------------------------------------------ 6. writers writing chunks

MUTATING_WRITER = """
from schedlab import WriterSpec, hookimpl

def write(workload, path, **_):
    for chunk in workload.iter_column_chunks():
        chunk["run_time"][:] = 1.0
    with open(path, "w") as fh:
        fh.write("ok\\n")

@hookimpl
def schedlab_writers():
    return [WriterSpec(name="mutw", write=write, suffixes=(".mutw",))]
"""


def test_chunks_of_a_columnar_workload_are_read_only():
    workload = schedlab.Workload.from_arrays({"run_time": [1.0, 2.0], "submit_time": [0, 1]})
    chunk = next(workload.iter_column_chunks())
    assert not chunk["run_time"].flags.writeable
    with pytest.raises(ValueError):
        chunk["run_time"][0] = 5.0
    assert workload.to_arrays()["run_time"].tolist() == [1.0, 2.0]
    workload.to_arrays()["run_time"][0] = 3.0  # the owner may still write its own
    assert next(workload.iter_column_chunks())["run_time"][0] == 3.0


def test_a_writer_writing_into_its_chunks_is_an_error_and_the_workload_is_unchanged(site, tmp_path):
    registry, _ = _registry(site("mutw", MUTATING_WRITER))
    workload = schedlab.Workload.from_arrays(
        {"job_number": [1, 2], "submit_time": [0, 5], "run_time": [100.0, 200.0]}
    )
    with pytest.raises(PluginRuntimeError) as info:
        schedlab.write(workload, tmp_path / "out.mutw", registry=registry)
    assert str(info.value).startswith("plugin 'mutw' (schedlab-mutw 0.1) failed in writer 'mutw'")
    assert workload.to_arrays()["run_time"].tolist() == [100.0, 200.0]
    assert not (tmp_path / "out.mutw").exists()


# ------------------------------------------ 7. non-finite times from a plugin reader

INFINITE_TIMES = """
import math
from schedlab import GeneratorSpec, Header, Job, ReaderSpec, Workload, hookimpl

def _workload(value):
    jobs = [Job(job_number=i + 1, submit_time=10 * i, run_time=100, requested_processors=4,
                requested_time=200) for i in range(5)]
    jobs[2].submit_time = value
    header = Header()
    header.set("MaxProcs", 16)
    return Workload.from_jobs(jobs, header)

def read(source, **_):
    return _workload(-math.inf)

def generate(jobs: int = 5):
    return _workload(math.inf)

@hookimpl
def schedlab_readers():
    return [ReaderSpec(name="subinf", read=read, suffixes=(".subinf",))]

@hookimpl
def schedlab_generators():
    return [GeneratorSpec(name="geninf", generate=generate)]
"""


def test_an_infinite_submit_time_from_a_reader_or_generator_is_refused_naming_it(site, tmp_path):
    registry, _ = _registry(site("inf", INFINITE_TIMES))
    source = tmp_path / "t.subinf"
    source.write_text("x\n")
    with pytest.raises(PluginRuntimeError) as info:
        schedlab.read(source, registry=registry)
    message = str(info.value)
    assert message.startswith("reader 'subinf' of plugin 'inf' (schedlab-inf 0.1)")
    assert "job 3, field submit_time: expected a finite time, got -inf" in message
    with pytest.raises(PluginRuntimeError) as info:
        schedlab.read("geninf", registry=registry)
    assert str(info.value).startswith("generator 'geninf' of plugin 'inf' (schedlab-inf 0.1)")
    assert "got inf" in str(info.value)


def test_cli_simulate_of_an_infinite_submit_time_is_one_line_exit_3(site, tmp_path, capsys):
    registry, _ = _registry(site("inf", INFINITE_TIMES))
    source = tmp_path / "t.subinf"
    source.write_text("x\n")
    with using_registry(registry):
        for args in ([str(source), "--json"], ["geninf"]):
            code, out, err = run_cli(capsys, "simulate", *args, "--no-timings")
            assert code == 3, err
            assert out == ""
            assert len(err.splitlines()) == 1, err
            assert "RuntimeWarning" not in err and "internal error" not in err
            assert "of plugin 'inf' (schedlab-inf 0.1)" in err


# ------------------------------------------------ 8. inconsistent window_terms

INCONSISTENT_TERMS = """
import numpy as np
from schedlab import MetricSpec, hookimpl

def value(columns, **_):
    return 0.9

def terms(columns, edges, **_):
    n = len(edges) - 1
    return np.ones(n), np.full(n, 10.0)

@hookimpl
def schedlab_metrics():
    return [MetricSpec(name="r-incons", compute=value, aggregation="ratio",
                       window_terms=terms, better="lower")]
"""


def _schedules(registry):
    rows = [(3600 * i, 1800 + 600 * (i % 3), 1 + i % 4, 3600) for i in range(40)]
    workload = workload_from_rows(rows, procs=4)
    return {
        p: schedlab.simulate(workload, policy=p, backfill="easy", registry=registry)
        for p in ("fcfs", "sjf")
    }


def test_inconsistent_window_terms_leave_the_interval_out_with_a_warning(site):
    from schedlab.significance import block_significance

    registry, _ = _registry(site("incons", INCONSISTENT_TERMS))
    results = _schedules(registry)
    with pytest.warns(PluginRuntimeWarning) as caught:
        sig = block_significance(
            results, metrics=["r-incons", "utilization"], window=7200, registry=registry
        )
    messages = [str(w.message) for w in caught if issubclass(w.category, PluginRuntimeWarning)]
    assert len(messages) == 1, messages
    assert messages[0].startswith("plugin 'incons' (schedlab-incons 0.1): metric 'r-incons'")
    assert "window_terms" in messages[0] and "0.1" in messages[0] and "0.9" in messages[0]
    interval = sig.interval("fcfs", "r-incons")
    assert interval.estimate == pytest.approx(0.9)
    assert interval.low is None and interval.high is None and "window_terms" in interval.reason
    assert not [r for r in sig.ranks if r.metric == "r-incons"]
    # a consistent built-in metric keeps its interval, without a warning
    assert sig.interval("fcfs", "utilization").low is not None


# --------------------------------------------- 9. plugins NAME of a failed plugin

FAILED_HOOK = """
from schedlab import hookimpl

@hookimpl
def schedlab_policies():
    raise RuntimeError("no policies today")
"""

CLAIMS_BUILTIN = """
from schedlab import PolicySpec, hookimpl

class P:
    def key(self, job, now):
        return 0.0

@hookimpl
def schedlab_policies():
    return [PolicySpec(name="my-pol", factory=P), PolicySpec(name="other", aliases=("fifo",),
                                                             factory=P)]
"""


def test_plugins_name_of_a_failed_or_disabled_plugin_shows_its_status(site, capsys):
    site("failing", FAILED_HOOK)
    registry, messages = _registry(site("clashing", CLAIMS_BUILTIN))
    assert len(messages) == 2
    with using_registry(registry):
        code, out, err = run_cli(capsys, "plugins", "failing")
        assert (code, err) == (0, "")
        assert out.splitlines() == [
            "failed: failing (mis_failing, from schedlab-failing 0.1): schedlab_policies "
            "raised RuntimeError: no policies today"
        ]
        code, out, err = run_cli(capsys, "plugins", "clashing", "--json")
        assert (code, err) == (0, "")
        (row,) = json.loads(out)
        assert (row["name"], row["status"]) == ("clashing", "disabled")
        assert "fifo" in row["error"]
        code, out, err = run_cli(capsys, "plugins", "nothing-of-that-name")
        assert code == 2 and "no component or plugin named" in err


def test_plugins_name_in_a_real_process_prints_no_warning(site):
    site("failing", FAILED_HOOK)
    env = {"PYTHONPATH": str(site.folder), "SCHEDLAB_ALLOW_PLUGINS": "failing"}
    import os

    clean = {k: v for k, v in os.environ.items() if k not in CONTROLS}
    run = subprocess.run(
        [sys.executable, "-m", "schedlab", "plugins", "failing"],
        capture_output=True,
        text=True,
        env={**clean, **env},
        timeout=120,
    )
    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout.startswith("failed: failing (mis_failing, from schedlab-failing 0.1)")


def test_a_component_of_a_disabled_plugin_is_said_disabled(site):
    registry, _ = _registry(site("clashing", CLAIMS_BUILTIN))
    with pytest.raises(schedlab.errors.UnknownComponentError) as info:
        registry.policy("my-pol")
    message = str(info.value)
    assert message.startswith(
        "policy 'my-pol' is provided by plugin 'clashing' (schedlab-clashing 0.1), which is "
        "disabled: it claims the policy name 'fifo'"
    )
    assert "\n" not in message
    assert registry.policy("fifo").provider == "fcfs"  # the built-in still wins


# ------------------------------------------------------------ 10. plugin commands

COMMANDS = """
import click
from schedlab import CommandSpec, hookimpl

@click.command()
def boom():
    raise RuntimeError("cmd boom")

@click.command()
@click.argument("n", type=int)
def fine(n):
    click.echo(f"fine {n}")

@hookimpl
def schedlab_cli_commands():
    return [CommandSpec(name="c-boom", load=lambda: boom),
            CommandSpec(name="c-fine", load=lambda: fine),
            CommandSpec(name="c-none", load=lambda: None)]
"""


def test_a_plugin_commands_exception_names_the_plugin(site, capsys):
    registry, _ = _registry(site("cmds", COMMANDS))
    with using_registry(registry):
        code, _, err = run_cli(capsys, "c-boom")
        assert code == 3
        assert err.startswith(
            "schedlab: error: plugin 'cmds' (schedlab-cmds 0.1) failed in command 'c-boom': "
            "RuntimeError: cmd boom"
        )
        assert "internal error" not in err and len(err.splitlines()) == 1
        # click's own errors and output are left alone
        assert run_cli(capsys, "c-fine", "4")[:2] == (0, "fine 4\n")
        code, _, err = run_cli(capsys, "c-fine", "x")
        assert code == 2 and "internal error" not in err and "plugin" not in err


def test_a_command_whose_load_returns_no_command_is_named(site, capsys):
    registry, _ = _registry(site("cmds", COMMANDS))
    with using_registry(registry):
        code, _, err = run_cli(capsys, "c-none")
    assert code == 3
    assert err.startswith(
        "schedlab: error: command 'c-none' of plugin 'cmds' (schedlab-cmds 0.1) returned "
        "NoneType, expected click.Command"
    )
    assert len(err.splitlines()) == 1


# --------------------------------------------------------- 11. built-in names


@pytest.mark.parametrize(
    ("name", "kind"),
    [("fcfs", "policy"), ("easy", "backfill"), ("swf", "format"), ("wait", "metric")],
)
def test_new_plugin_refuses_builtin_names(capsys, tmp_path, name, kind):
    code, out, err = run_cli(capsys, "new-plugin", name, "--kind", kind, "--dest", str(tmp_path))
    assert code == 2, out
    assert len(err.splitlines()) == 1 and "built-in" in err and repr(name) in err
    assert not list(tmp_path.iterdir())


def test_a_name_clash_by_hand_names_the_two_plugins_in_a_short_line():
    import types

    module = types.ModuleType("myplug")
    with pytest.raises(PluginError) as info:
        build_registry(plugins=[("fcfs", module)], entry_points=builtin_entry_points())
    message = str(info.value)
    assert len(message) < 300 and "\n" not in message
    assert "'fcfs'" in message and "myplug" in message and "schedlab.policies.fcfs" in message
    with pytest.raises(PluginError) as info:
        build_registry(plugins=[("one", module), ("two", module)], entry_points=False)
    assert len(str(info.value)) < 300 and "'one'" in str(info.value)


# --------------------------------------------------------------- 12. sniff raising

SNIFF_RAISES = """
from schedlab import ReaderSpec, Workload, hookimpl

def sniff(head, name):
    return head.decode("ascii").startswith("#runs")

@hookimpl
def schedlab_readers():
    return [ReaderSpec(name="runs", read=lambda source, **_: Workload(), sniff=sniff)]
"""


def test_a_sniff_that_raises_is_warned_about_and_detection_goes_on(site, tmp_path, swf_dir):
    registry, _ = _registry(site("sniffy", SNIFF_RAISES))
    source = tmp_path / "trace.data"
    source.write_bytes("caf\u00e9 1 2 3\n".encode())
    with pytest.warns(PluginRuntimeWarning) as caught:
        with pytest.raises(schedlab.FormatError, match="cannot tell the format"):
            detect_reader(source, registry)
    (message,) = [str(w.message) for w in caught]
    assert message.startswith(
        "plugin 'sniffy' (schedlab-sniffy 0.1) failed in reader 'runs': sniff raised "
        "UnicodeDecodeError"
    )
    swf = tmp_path / "trace.bin"
    trace = (swf_dir / "HPC2N-2002_excerpt-3170jobs_alea.swf").read_bytes()[:4000]
    swf.write_bytes("; Note: caf\u00e9\n".encode() + trace[: trace.rindex(b"\n") + 1])
    with pytest.warns(PluginRuntimeWarning):
        assert detect_reader(swf, registry).name == "swf"


# ------------------------------------------------------- 13. printing at import

PRINTER = """
print("HELLO FROM PLUGIN IMPORT")
from schedlab import hookimpl

@hookimpl
def schedlab_policies():
    print("HELLO FROM A HOOK")
    return []
"""


def test_a_plugin_printing_at_import_does_not_reach_stdout(site, capfd):
    registry, _ = _registry(site("printer", PRINTER))
    out, err = capfd.readouterr()
    assert out == ""
    assert "HELLO FROM PLUGIN IMPORT" in err and "HELLO FROM A HOOK" in err
    assert registry.plugin_infos()  # built


def test_simulate_json_stays_valid_with_a_printing_plugin(site, capsys):
    entry_points = site("printer", PRINTER)
    import os

    clean = {k: v for k, v in os.environ.items() if k not in CONTROLS}
    env = {**clean, "PYTHONPATH": str(site.folder), "SCHEDLAB_ALLOW_PLUGINS": "printer"}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "schedlab",
            "simulate",
            "lublin:jobs=20,seed=1",
            "--json",
            "--no-timings",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    json.loads(run.stdout)
    assert "HELLO FROM PLUGIN IMPORT" in run.stderr
    assert entry_points


ZEROING_STATISTIC = """
from schedlab import StatisticSpec, hookimpl

def zero(values):
    values[:] = 0.0
    return 0.0

@hookimpl
def schedlab_statistics():
    return [StatisticSpec(name="zero", compute=zero)]
"""


def test_a_statistic_writing_its_values_corrupts_no_other_statistic(site):
    registry, _ = _registry(site("zeroing", ZEROING_STATISTIC))
    with pytest.raises(PluginRuntimeError) as info:
        schedlab.compute_metrics(
            workload_from_rows(ROWS, procs=8),
            names=["wait"],
            stats="zero,mean,p90,max",
            registry=registry,
        )
    assert str(info.value).startswith("plugin 'zeroing' (schedlab-zeroing 0.1) failed in statistic")
    report = schedlab.compute_metrics(
        workload_from_rows(ROWS, procs=8), names=["wait"], stats="mean,max", registry=registry
    )
    assert report.value("wait", "max") == 50
