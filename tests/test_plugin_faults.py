"""One bad plugin never stops the tool (issue 15) and misspelt hooks are reported (13).

The faulty plugins are fake installed distributions (a ``*.dist-info`` folder with
``entry_points.txt`` on ``sys.path``), found by the same entry-point discovery a real
``pip install`` feeds:

``tests/fixtures/faulty_site``
    ``schedlab-claims-swf`` 0.1.0 (a reader named ``swf``), ``schedlab-hook-raises``
    0.2.0 (``schedlab_policies`` raises), ``schedlab-wrong-type`` 0.3.0
    (``schedlab_metrics`` returns a dict), ``schedlab-misspelt`` 0.4.0
    (``schedlab_readerz``), ``schedlab-clash-a`` 1.0.0 / ``schedlab-clash-b`` 2.0.0
    (both provide the metric ``clash``) and ``schedlab-ep-swf`` 0.6.0 (an entry point
    named ``swf``).
``tests/fixtures/crashing_site``
    ``schedlab-crashing`` 0.5.0: loads fine, and its reader, writer, generator,
    policy and metric raise when used.
"""

from __future__ import annotations

import os
import subprocess
import sys
import types
import warnings
from importlib import metadata
from pathlib import Path

import pytest
import schedlab
from click.testing import CliRunner
from schedlab.cli import cli
from schedlab.errors import FormatError, PluginError, PluginRuntimeError
from schedlab.registry import PluginLoadWarning, build_registry
from schedlab.testing import builtin_entry_points, using_registry

FIXTURES = Path(__file__).parent / "fixtures"
FAULTY = FIXTURES / "faulty_site"
CRASHING = FIXTURES / "crashing_site"
CONTROLS = ("SCHEDLAB_STRICT_PLUGINS", "SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD",
            "SCHEDLAB_ALLOW_PLUGINS", "SCHEDLAB_BLOCK_PLUGINS")
#: Faulty plugin (entry-point name) -> its distribution and version, as messages say it.
FAULTY_PLUGINS = {
    "claims-swf": "schedlab-claims-swf 0.1.0",
    "hook-raises": "schedlab-hook-raises 0.2.0",
    "wrong-type": "schedlab-wrong-type 0.3.0",
    "misspelt": "schedlab-misspelt 0.4.0",
    "clash-a": "schedlab-clash-a 1.0.0",
    "clash-b": "schedlab-clash-b 2.0.0",
    "swf": "schedlab-ep-swf 0.6.0",
}
MODULES = ("faulty_claims_swf", "faulty_hook_raises", "faulty_wrong_type", "faulty_misspelt",
           "faulty_clash_a", "faulty_clash_b", "faulty_ep_swf", "faulty_crashing")


@pytest.fixture()
def installed(monkeypatch):
    """``installed(*distributions)``: schedlab's own entry points plus those of the
    named fake distributions, which are importable for the test."""
    for name in CONTROLS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.syspath_prepend(str(FAULTY))
    monkeypatch.syspath_prepend(str(CRASHING))
    for module in MODULES:
        monkeypatch.delitem(sys.modules, module, raising=False)
    dists = {d.metadata["Name"]: d for d in metadata.distributions(path=[str(FAULTY),
                                                                         str(CRASHING)])}

    def entry_points(*names: str) -> list[metadata.EntryPoint]:
        fake = [ep for n in names for ep in dists[n].entry_points if ep.group == "schedlab"]
        assert fake, names
        return [*builtin_entry_points(), *fake]

    return entry_points


def _build(entry_points) -> tuple[schedlab.registry.Registry, list[str]]:
    """A registry and the PluginLoadWarning messages seen while building it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = build_registry(entry_points=entry_points)
    messages = [str(w.message) for w in caught if issubclass(w.category, PluginLoadWarning)]
    return registry, messages


def _status(registry) -> dict[tuple[str, str], str]:
    return {(i.name, i.distribution): i.status for i in registry.plugin_infos()}


# ----------------------------------------------------------- faults while loading


def test_a_plugin_claiming_a_builtin_name_is_disabled_and_the_builtin_wins(
    installed, swf_dir
):
    registry, messages = _build(installed("schedlab-claims-swf"))
    assert len(messages) == 1
    assert "'claims-swf'" in messages[0] and "schedlab-claims-swf 0.1.0" in messages[0]
    assert "reader name 'swf'" in messages[0] and "built-in plugins win" in messages[0]
    assert _status(registry)[("claims-swf", "schedlab-claims-swf")] == "disabled"
    assert registry.reader("swf").provider == "swf"
    workload = schedlab.read(swf_dir / "lublin_256.swf", registry=registry)
    assert len(workload) == 10_000  # the impostor's reader raises if it is ever used


def test_an_entry_point_named_like_a_builtin_one_is_never_imported(installed):
    registry, messages = _build(installed("schedlab-ep-swf"))
    assert len(messages) == 1
    assert "'swf'" in messages[0] and "schedlab-ep-swf 0.6.0" in messages[0]
    assert "faulty_ep_swf" not in sys.modules  # importing it raises
    status = _status(registry)
    assert status[("swf", "schedlab")] == "loaded"
    assert status[("swf", "schedlab-ep-swf")] == "disabled"
    assert registry.has("reader", "swf")
    rows = {(r["name"], r["distribution"]): r for r in schedlab.plugins(registry)}
    assert rows[("swf", "schedlab-ep-swf")]["components"] == []
    assert rows[("swf", "schedlab")]["components"]


def test_a_registration_hook_that_raises_disables_its_plugin(installed):
    registry, messages = _build(installed("schedlab-hook-raises"))
    assert len(messages) == 1
    assert "'hook-raises'" in messages[0] and "schedlab-hook-raises 0.2.0" in messages[0]
    assert "schedlab_policies raised RuntimeError: policy table exploded" in messages[0]
    info = {i.name: i for i in registry.plugin_infos()}["hook-raises"]
    assert info.status == "failed" and "policy table exploded" in info.error
    assert registry.has("policy", "fcfs") and registry.has("reader", "swf")


def test_a_hook_returning_the_wrong_type_disables_its_plugin(installed):
    registry, messages = _build(installed("schedlab-wrong-type"))
    assert len(messages) == 1
    assert "'wrong-type'" in messages[0] and "schedlab-wrong-type 0.3.0" in messages[0]
    assert "schedlab_metrics returned dict, expected an iterable of MetricSpec" in messages[0]
    assert not registry.has("metric", "not-a-record")
    assert registry.has("metric", "wait")


def test_a_misspelt_hook_is_reported_and_disables_the_whole_plugin(installed):
    registry, messages = _build(installed("schedlab-misspelt"))
    assert len(messages) == 1
    message = messages[0]
    assert "'misspelt'" in message and "schedlab-misspelt 0.4.0" in message
    assert "'schedlab_readerz', which is not a schedlab hook" in message
    assert "did you mean 'schedlab_readers'?" in message
    # its correctly spelt writer hook goes with it: a half-working plugin would hide
    # the typo
    assert not registry.has("writer", "misspelt") and not registry.has("reader", "misspelt")
    assert registry.host.pm.get_plugin("misspelt") is None
    registry.host.pm.check_pending()  # nothing unverified is left behind


def test_two_third_party_plugins_claiming_one_name_are_both_disabled(installed):
    registry, messages = _build(installed("schedlab-clash-a", "schedlab-clash-b"))
    assert len(messages) == 2  # one per disabled plugin, each naming the other
    for message in messages:
        assert "metric name 'clash'" in message
        assert "schedlab-clash-a 1.0.0" in message and "schedlab-clash-b 2.0.0" in message
    assert {m.split("'")[1] for m in messages} == {"clash-a", "clash-b"}
    # the whole plugins go, not only the contested name
    for name in ("clash", "only-in-a", "only-in-b"):
        assert not registry.has("metric", name)
    assert registry.has("metric", "wait")


def test_every_faulty_plugin_warns_exactly_once_and_the_rest_works(installed, swf_dir):
    eps = installed(*(d.split()[0] for d in FAULTY_PLUGINS.values()))
    registry, messages = _build(eps)
    assert len(messages) == len(FAULTY_PLUGINS)
    for plugin, dist in FAULTY_PLUGINS.items():
        assert sum(m.startswith(f"schedlab plugin '{plugin}' (") and dist in m
                   for m in messages) == 1, plugin
    loaded = {i.name for i in registry.plugin_infos() if i.status == "loaded"}
    assert loaded == {ep.name for ep in builtin_entry_points()}
    result = schedlab.simulate(
        schedlab.read(swf_dir / "lublin_256.swf", registry=registry),
        policy="fcfs", backfill="easy", registry=registry, progress=False,
    )
    assert result.stats["jobs_simulated"] > 0


@pytest.mark.parametrize("plugin", sorted(FAULTY_PLUGINS))
def test_strict_mode_keeps_the_hard_error(installed, monkeypatch, plugin):
    monkeypatch.setenv("SCHEDLAB_STRICT_PLUGINS", "1")
    dist = FAULTY_PLUGINS[plugin]
    clash = ("schedlab-clash-a", "schedlab-clash-b")
    eps = installed(*clash) if plugin.startswith("clash-") else installed(dist.split()[0])
    with pytest.raises(PluginError) as info:
        build_registry(entry_points=eps)
    message = str(info.value)
    assert f"'{plugin}'" in message and dist in message and "\n" not in message


def test_plugins_registered_by_hand_fail_at_once():
    """Code that registers a plugin itself hears about its fault as an error."""
    misspelt = types.ModuleType("handmade")

    @schedlab.hookimpl
    def schedlab_writerz():
        return []

    misspelt.schedlab_writerz = schedlab_writerz
    with pytest.raises(PluginError, match="'schedlab_writerz', which is not a schedlab hook"):
        build_registry(plugins=[("handmade", misspelt)], entry_points=False)

    single = types.ModuleType("single")

    @schedlab.hookimpl
    def schedlab_readers():
        return schedlab.ReaderSpec(name="one", read=lambda source, **o: None)

    single.schedlab_readers = schedlab_readers
    with pytest.raises(PluginError, match="returned ReaderSpec, expected an iterable"):
        build_registry(plugins=[("single", single)], entry_points=False)


# ----------------------------------------------------------------- the command line


def _cli(*args: str, site: Path = FAULTY, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in CONTROLS}
    clean["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), clean.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "schedlab", *args], capture_output=True,
                          text=True, env={**clean, **env}, timeout=300)


def _warning_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("schedlab: warning: ")]


def _one_warning_per_faulty_plugin(stderr: str) -> None:
    lines = _warning_lines(stderr)
    for plugin, dist in FAULTY_PLUGINS.items():
        prefix = f"schedlab: warning: schedlab plugin '{plugin}' ("
        named = [line for line in lines if line.startswith(prefix) and dist in line]
        assert len(named) == 1, (plugin, stderr)
    assert "Traceback" not in stderr and "warnings.warn" not in stderr


def test_cli_plugins_lists_the_broken_plugins_and_exits_0():
    run = _cli("plugins")
    assert run.returncode == 0, run.stderr
    assert _warning_lines(run.stderr) == []  # the table says it instead
    out = run.stdout
    for plugin, dist in FAULTY_PLUGINS.items():
        status = "failed" if plugin in ("hook-raises", "wrong-type", "misspelt") else "disabled"
        line = f"{status}: {plugin} ("
        assert line in out, (plugin, out)
        assert f"from {dist}): " in out.split(line, 1)[1].splitlines()[0]
    builtin_swf = next(line for line in out.splitlines() if line.strip().startswith("swf "))
    assert "schedlab 0.1.0" in builtin_swf or schedlab.__version__ in builtin_swf


def test_cli_convert_of_a_real_trace_works_with_the_broken_plugins_installed(
    tmp_path, swf_dir, registry
):
    source = swf_dir / "HPC2N-2002_excerpt-3170jobs_alea.swf"
    target = tmp_path / "copy.swf"
    run = _cli("convert", str(source), str(target))
    assert run.returncode == 0, run.stderr
    _one_warning_per_faulty_plugin(run.stderr)
    assert f"schedlab: wrote {target}" in run.stderr
    original = schedlab.read(source, registry=registry)
    copy = schedlab.read(target, registry=registry)
    assert len(copy) == len(original) == 3170
    for field in ("job_number", "submit_time", "wait_time", "run_time",
                  "allocated_processors", "requested_time", "user_id"):
        assert list(copy.to_arrays()[field]) == pytest.approx(
            list(original.to_arrays()[field]), nan_ok=True), field


def test_cli_strict_mode_stops_with_one_line():
    run = _cli("plugins", SCHEDLAB_STRICT_PLUGINS="1")
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("schedlab: error: schedlab plugin '")
    assert any(dist in lines[0] for dist in FAULTY_PLUGINS.values())


# ------------------------------------------------------- exceptions at run time


@pytest.fixture()
def crashing(installed):
    """A registry of the built-ins plus ``schedlab-crashing`` 0.5.0."""
    registry, messages = _build(installed("schedlab-crashing"))
    assert messages == []
    return registry


def _assert_names_the_plugin(error: PluginRuntimeError, component: str, cause: type) -> None:
    message = str(error)
    assert message.startswith(f"plugin 'crashing' (schedlab-crashing 0.5.0) failed in {component}")
    assert "\n" not in message and "SCHEDLAB_BLOCK_PLUGINS=crashing" in message
    assert (error.plugin, error.distribution, error.version) == (
        "crashing", "schedlab-crashing", "0.5.0")
    assert isinstance(error.__cause__, cause)
    assert error.exit_code == 3


def test_a_readers_exception_names_its_plugin(crashing, tmp_path):
    path = tmp_path / "x.crashy"
    path.write_text("1\n")
    with pytest.raises(PluginRuntimeError) as info:
        schedlab.read(path, registry=crashing)
    _assert_names_the_plugin(info.value, "reader 'crashy'", ZeroDivisionError)
    assert "ZeroDivisionError: division by zero" in str(info.value)


def test_a_writers_and_a_generators_exceptions_name_their_plugin(crashing, tmp_path, swf_dir):
    workload = schedlab.read(swf_dir / "lublin_256.swf", registry=crashing)
    with pytest.raises(PluginRuntimeError) as info:
        schedlab.write(workload, tmp_path / "out.crashy", registry=crashing)
    _assert_names_the_plugin(info.value, "writer 'crashy'", KeyError)
    assert not (tmp_path / "out.crashy").exists()
    with pytest.raises(PluginRuntimeError) as info:
        schedlab.read("crashy-gen:", registry=crashing)
    _assert_names_the_plugin(info.value, "generator 'crashy-gen'", IndexError)


def test_a_metrics_exception_names_its_plugin(crashing, swf_dir):
    workload = schedlab.read(swf_dir / "lublin_256.swf", registry=crashing)
    with pytest.raises(PluginRuntimeError) as info:
        schedlab.compute_metrics(workload, names=["wait", "crashy-metric"], registry=crashing)
    _assert_names_the_plugin(info.value, "metric 'crashy-metric'", RuntimeError)


def test_a_policys_exception_in_a_cli_simulation_names_its_plugin(crashing, swf_dir):
    with using_registry(crashing):
        result = CliRunner().invoke(
            cli, ["simulate", str(swf_dir / "lublin_256.swf"), "-p", "crashy-key", "--json"])
    assert isinstance(result.exception, PluginRuntimeError), result.output
    _assert_names_the_plugin(result.exception, "policy 'crashy-key'", ValueError)


def test_the_real_command_line_prints_one_line_and_exits_3(tmp_path):
    path = tmp_path / "x.crashy"
    path.write_text("1\n")
    run = _cli("convert", str(path), str(tmp_path / "out.swf"), site=CRASHING)
    assert run.returncode == 3
    assert run.stderr.splitlines() == [
        "schedlab: error: plugin 'crashing' (schedlab-crashing 0.5.0) failed in reader "
        "'crashy': ZeroDivisionError: division by zero (a bug in that plugin: report it to "
        "its authors, --debug shows the traceback; SCHEDLAB_BLOCK_PLUGINS=crashing disables it)"
    ]
    debug = _cli("--debug", "convert", str(path), str(tmp_path / "out.swf"), site=CRASHING)
    assert "faulty_crashing.py" in debug.stderr and "ZeroDivisionError" in debug.stderr


def test_blame_leaves_schedlab_errors_os_errors_and_builtin_bugs_alone(crashing):
    crashy = crashing.reader("crashy")
    with pytest.raises(FormatError), crashing.blame(crashy):
        raise FormatError("bad line", source="x.crashy", line=3)
    with pytest.raises(FileNotFoundError), crashing.blame(crashy):
        raise FileNotFoundError(2, "No such file or directory", "x.crashy")
    # a built-in component's bug is schedlab's own internal error: not wrapped
    with pytest.raises(ZeroDivisionError), crashing.blame(crashing.reader("swf")):
        raise ZeroDivisionError("schedlab's own bug")


def test_with_several_components_the_traceback_decides(crashing):
    import faulty_crashing

    used = [crashing.policy("fcfs"), crashing.policy("crashy-key"), crashing.backfill("easy")]
    with pytest.raises(PluginRuntimeError) as info, crashing.blame(*used):
        faulty_crashing.CrashyKey().key(7, 0.0)
    _assert_names_the_plugin(info.value, "policy 'crashy-key'", ValueError)
    # raised outside the plugin's code (e.g. by the engine on a bad key): every
    # third-party component used is named, and schedlab is not ruled out
    with pytest.raises(PluginRuntimeError) as info, crashing.blame(*used):
        raise TypeError("'<' not supported between instances of 'str' and 'int'")
    message = str(info.value)
    assert message.startswith("TypeError: '<' not supported")
    assert "policy 'crashy-key' of plugin 'crashing' (schedlab-crashing 0.5.0)" in message
    assert "'fcfs'" not in message and "\n" not in message


def test_a_converter_hook_that_raises_names_its_plugin():
    module = types.ModuleType("bad_converter")

    @schedlab.hookimpl
    def schedlab_converter_hooks(converter):
        raise AttributeError("no such hook on the converter")

    module.schedlab_converter_hooks = schedlab_converter_hooks
    registry = build_registry(plugins=[("bad-converter", module)], entry_points=False)
    with pytest.raises(PluginRuntimeError, match=r"plugin 'bad-converter' .*AttributeError"):
        registry.converter  # noqa: B018
