"""Plugin management as users see it: ``schedlab plugins`` (provenance, hooks,
failures) and the environment controls SCHEDLAB_STRICT_PLUGINS,
SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD, SCHEDLAB_ALLOW_PLUGINS and SCHEDLAB_BLOCK_PLUGINS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from importlib import metadata
from pathlib import Path

import pytest
import schedlab
from click.testing import CliRunner
from schedlab.cli import cli
from schedlab.registry import PluginLoadWarning, build_registry
from schedlab.testing import builtin_entry_points, using_registry

FAKE_SITE = Path(__file__).parent / "fixtures" / "fake_site"
CONTROLS = ("SCHEDLAB_STRICT_PLUGINS", "SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD",
            "SCHEDLAB_ALLOW_PLUGINS", "SCHEDLAB_BLOCK_PLUGINS")


@pytest.fixture()
def entry_points(monkeypatch):
    """schedlab's own entry points plus those of the fake third-party distribution
    ``schedlab-fakeplugin`` 1.2.3 (fake-format, fake-policy, fake-broken)."""
    for name in CONTROLS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.syspath_prepend(str(FAKE_SITE))
    for module in ("fake_schedlab_format", "fake_schedlab_policy", "fake_schedlab_broken"):
        sys.modules.pop(module, None)
    fake = [
        ep
        for dist in metadata.distributions(path=[str(FAKE_SITE)])
        for ep in dist.entry_points
        if ep.group == "schedlab"
    ]
    return [*builtin_entry_points(), *fake]


def _status(entry_points) -> dict[str, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginLoadWarning)
        registry = build_registry(entry_points=entry_points)
    return {info.name: info.status for info in registry.plugin_infos()}


def _plugins_output(entry_points, *args: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginLoadWarning)
        registry = build_registry(entry_points=entry_points)
    with using_registry(registry):
        result = CliRunner().invoke(cli, ["plugins", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_json_shows_provenance_hooks_components_and_failures(entry_points):
    rows = {r["name"]: r for r in json.loads(_plugins_output(entry_points, "--json"))}
    fake = rows["fake-format"]
    assert (fake["distribution"], fake["version"], fake["status"]) == (
        "schedlab-fakeplugin", "1.2.3", "loaded")
    assert fake["module"] == "fake_schedlab_format"
    assert "schedlab_readers" in fake["hooks"]
    assert ("reader", "runs") in {(c["kind"], c["name"]) for c in fake["components"]}
    broken = rows["fake-broken"]
    assert broken["status"] == "failed" and broken["hooks"] == []
    assert "ImportError: this plugin is broken on purpose" in broken["error"]
    assert rows["swf"]["distribution"] == "schedlab"
    assert rows["swf"]["version"] == schedlab.__version__


def test_table_shows_distribution_hooks_and_the_failure_reason(entry_points):
    out = _plugins_output(entry_points)
    fake_line = next(line for line in out.splitlines() if line.strip().startswith("fake-format"))
    assert "schedlab-fakeplugin 1.2.3" in fake_line and "loaded" in fake_line
    assert "readers" in fake_line
    assert ("failed: fake-broken (fake_schedlab_broken, from schedlab-fakeplugin 1.2.3): "
            "ImportError: this plugin is broken on purpose") in out


def test_disable_autoload_keeps_only_builtins(entry_points, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD", "1")
    status = _status(entry_points)
    assert {status[n] for n in ("fake-format", "fake-policy", "fake-broken")} == {"blocked"}
    assert status["swf"] == "loaded" and status["fcfs"] == "loaded"
    out = _plugins_output(entry_points)
    assert "blocked: fake-broken, fake-format, fake-policy" in out


def test_allow_list_applies_to_third_party_plugins(entry_points, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_ALLOW_PLUGINS", "fake-format, fake-policy")
    status = _status(entry_points)
    assert status["fake-format"] == status["fake-policy"] == "loaded"
    assert status["fake-broken"] == "blocked"  # not listed: never imported, no warning
    assert status["swf"] == "loaded"  # built-ins are not subject to the allow-list


def test_block_list_applies_to_every_plugin(entry_points, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_BLOCK_PLUGINS", "swf,fake-broken")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PluginLoadWarning)  # the broken one is not loaded
        registry = build_registry(entry_points=entry_points)
    status = {i.name: i.status for i in registry.plugin_infos()}
    assert status["swf"] == status["fake-broken"] == "blocked"
    assert not registry.has("reader", "swf") and registry.has("reader", "runs")


def test_strict_mode_fails_in_one_line(entry_points, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_STRICT_PLUGINS", "yes")
    with pytest.raises(schedlab.PluginError) as info:
        build_registry(entry_points=entry_points)
    message = str(info.value)
    assert "'fake-broken'" in message and "schedlab-fakeplugin 1.2.3" in message
    assert "\n" not in message


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in CONTROLS}
    clean["PYTHONPATH"] = os.pathsep.join(filter(None, [str(FAKE_SITE),
                                                        clean.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "schedlab", *args], capture_output=True,
                          text=True, env={**clean, **env}, timeout=120)


def test_real_command_line_with_an_installed_third_party_distribution():
    """End to end: the fake distribution is found on the path by the real CLI."""
    rows = {r["name"]: r for r in json.loads(_cli("plugins", "--json").stdout)}
    assert rows["fake-format"]["status"] == "loaded"
    assert rows["fake-broken"]["status"] == "failed"
    blocked = {r["name"]: r for r in json.loads(
        _cli("plugins", "--json", SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD="1").stdout)}
    assert blocked["fake-format"]["status"] == "blocked"
    strict = _cli("plugins", SCHEDLAB_STRICT_PLUGINS="1")
    assert strict.returncode == 2
    assert strict.stderr.startswith("schedlab: error: schedlab plugin 'fake-broken'")
    assert len(strict.stderr.strip().splitlines()) == 1
