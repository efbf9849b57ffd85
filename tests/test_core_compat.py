"""The versioned plugin contract: declared API ranges and deprecations (schedlab.compat).

The plugins here are real installed distributions (a dist-info folder written into
a temporary site directory), loaded through the registry's own entry-point path.
"""

from __future__ import annotations

import subprocess
import sys
import types
import warnings
from importlib import metadata
from pathlib import Path

import pluggy
import pytest
import schedlab
from schedlab import compat
from schedlab.compat import (
    IncompatiblePluginError,
    PluginCompatibilityWarning,
    SchedlabDeprecationWarning,
)
from schedlab.errors import PluginError
from schedlab.registry import PluginHost, PluginLoadWarning, Registry, build_registry

RUNNING = compat.api_version()
THIS_MINOR = f">={RUNNING.major}.{RUNNING.minor},<{RUNNING.major}.{RUNNING.minor + 1}"
NEXT_MAJOR = f">={RUNNING.major + 1},<{RUNNING.major + 2}"

PLUGIN = '''
from schedlab import ReaderSpec, hookimpl
{declaration}

def read(source, **options):
    raise NotImplementedError

@hookimpl
def schedlab_readers():
    return [ReaderSpec(name="{reader}", read=read, suffixes=(".{reader}",))]
'''


def install(site: Path, dist: str, version: str, plugins: dict[str, str]) -> list:
    """Install distribution ``dist`` into ``site``: one module per plugin, whose
    source is given, each registered as an entry point of group ``schedlab``."""
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8"
    )
    lines = ["[schedlab]"]
    for name, source in plugins.items():
        module = f"compat_test_{name.replace('-', '_')}"
        (site / f"{module}.py").write_text(source, encoding="utf-8")
        sys.modules.pop(module, None)
        lines.append(f"{name} = {module}")
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [ep for d in metadata.distributions(path=[str(site)]) for ep in d.entry_points]


def builtin_entry_points() -> list:
    return [
        ep
        for ep in metadata.entry_points(group="schedlab")
        if ep.dist is not None and ep.dist.metadata["Name"] == "schedlab"
    ]


@pytest.fixture()
def site(tmp_path, monkeypatch):
    monkeypatch.delenv("SCHEDLAB_STRICT_PLUGINS", raising=False)
    for name in ("SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD", "SCHEDLAB_ALLOW_PLUGINS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def plugin_source(reader: str, declaration: str = "") -> str:
    return PLUGIN.format(reader=reader, declaration=declaration)


def test_a_plugin_for_another_major_version_is_disabled_with_one_warning(site):
    eps = install(
        site,
        "schedlab-future",
        "2.0.0",
        {
            "future": plugin_source("future", f"SCHEDLAB_API = {NEXT_MAJOR!r}"),
            "current": plugin_source("current", f"SCHEDLAB_API = {THIS_MINOR!r}"),
            "undeclared": plugin_source("undeclared"),
        },
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = build_registry(entry_points=[*builtin_entry_points(), *eps])
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1, messages
    assert issubclass(caught[0].category, PluginLoadWarning)
    assert "'future'" in messages[0] and "schedlab-future 2.0.0" in messages[0]
    assert repr(NEXT_MAJOR) in messages[0] and f"API {RUNNING}" in messages[0]
    infos = {i.name: i for i in registry.plugin_infos()}
    assert infos["future"].status == "failed"
    assert infos["future"].error.startswith(f"it declares SCHEDLAB_API = {NEXT_MAJOR!r}")
    assert not registry.has("reader", "future")
    # the rest of the tool keeps working: compatible, undeclared and built-in plugins
    assert infos["current"].status == infos["undeclared"].status == "loaded"
    assert registry.has("reader", "current") and registry.has("reader", "undeclared")
    assert registry.has("reader", "swf") and registry.has("policy", "fcfs")


def test_strict_mode_makes_an_incompatible_plugin_an_error(site, monkeypatch):
    future = plugin_source("future", "SCHEDLAB_API = '>=99'")
    eps = install(site, "schedlab-future", "2.0.0", {"future": future})
    monkeypatch.setenv("SCHEDLAB_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match=r"'future'.*schedlab-future 2\.0\.0.*'>=99'"):
        build_registry(entry_points=eps)


@pytest.mark.parametrize(
    ("declaration", "shown"),
    [
        ("SCHEDLAB_API = 2", "2"),
        ("SCHEDLAB_API = 'version two'", "'version two'"),
        ("SCHEDLAB_API = ''", "''"),
        ("SCHEDLAB_API = ['>=0.1']", "['>=0.1']"),
    ],
)
def test_a_malformed_declaration_warns_and_the_plugin_still_loads(site, declaration, shown):
    eps = install(site, "schedlab-sloppy", "0.3", {"sloppy": plugin_source("sloppy", declaration)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = build_registry(entry_points=eps)
    assert [w.category for w in caught] == [PluginCompatibilityWarning]
    message = str(caught[0].message)
    assert "'sloppy'" in message and "schedlab-sloppy 0.3" in message
    assert f"SCHEDLAB_API = {shown}," in message
    assert registry.has("reader", "sloppy")


def test_a_plugin_registered_by_hand_is_checked_too():
    plugin = types.SimpleNamespace(SCHEDLAB_API=NEXT_MAJOR)
    with pytest.raises(IncompatiblePluginError, match=r"^plugin 'mine': it declares SCHEDLAB_API"):
        build_registry(plugins=[("mine", plugin)], entry_points=False)
    compat.check_api_range(types.SimpleNamespace(SCHEDLAB_API=THIS_MINOR), "ok")
    compat.check_api_range(types.SimpleNamespace(SCHEDLAB_API=f"~={RUNNING}"), "ok")
    compat.check_api_range(object(), "undeclared")


# -- deprecations ------------------------------------------------------------------

hookspec = pluggy.HookspecMarker("schedlab")


class OldSpecs:
    """A hook specification deprecated the way schedlab deprecates its own."""

    @hookspec(
        warn_on_impl=compat.deprecated_hook(
            "hook schedlab_old_policies", "hook schedlab_policies", since="0.1", removal="0.3"
        )
    )
    def schedlab_old_policies(self):
        """Return policies the old way."""


OLD_STYLE = '''
from schedlab import hookimpl

@hookimpl
def schedlab_old_policies():
    return ["still called"]
'''


def test_a_deprecated_hook_works_and_warns_naming_plugin_and_distribution(site):
    eps = install(site, "schedlab-oldstyle", "1.4", {"oldstyle": OLD_STYLE})
    host = PluginHost()
    host.pm.add_hookspecs(OldSpecs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        host.load_entry_points(eps)
    assert [w.category for w in caught] == [SchedlabDeprecationWarning]
    message = str(caught[0].message)
    assert "plugin 'oldstyle' (distribution schedlab-oldstyle 1.4)" in message
    assert "hook schedlab_old_policies is deprecated since schedlab 0.1" in message
    assert "removed in 0.3: use hook schedlab_policies instead" in message
    # it points at the plugin's implementation, and the hook keeps working
    assert caught[0].filename.endswith("compat_test_oldstyle.py")
    assert host.infos["oldstyle"].status == "loaded"
    assert host.pm.hook.schedlab_old_policies() == [["still called"]]
    Registry(host)  # the registry builds around it


def test_other_warnings_pass_through_registration_unchanged():
    with pytest.warns(UserWarning, match="^unrelated$") as record:
        with compat.deprecations("x", "dist", "1"):
            warnings.warn("unrelated", UserWarning, stacklevel=1)
    assert not any(issubclass(w.category, SchedlabDeprecationWarning) for w in record)


def old_function() -> None:
    compat.warn_deprecated("option 'depth'", "option 'reservations'", since="0.1", removal="0.3")


def test_warn_deprecated_names_the_replacement():
    with pytest.warns(SchedlabDeprecationWarning) as record:
        old_function()
    assert str(record[0].message) == (
        "option 'depth' is deprecated since schedlab 0.1 and will be removed in 0.3: "
        "use option 'reservations' instead"
    )
    assert record[0].filename == __file__  # points at the caller
    assert schedlab.SchedlabDeprecationWarning is SchedlabDeprecationWarning
    assert issubclass(SchedlabDeprecationWarning, DeprecationWarning)


SHOW = (
    "from schedlab import compat\n"
    "compat.warn_deprecated('thing', 'other', since='0.1', removal='0.3')\n"
)


def test_deprecations_show_by_default_unless_warning_options_say_otherwise():
    shown = subprocess.run([sys.executable, "-c", SHOW], capture_output=True, text=True)
    assert "SchedlabDeprecationWarning: thing is deprecated" in shown.stderr
    hidden = subprocess.run(
        [sys.executable, "-W", "ignore::DeprecationWarning", "-c", SHOW],
        capture_output=True,
        text=True,
    )
    assert hidden.returncode == 0 and "thing" not in hidden.stderr
