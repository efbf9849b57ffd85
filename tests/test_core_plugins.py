"""Plugin discovery through real entry points, guarded loading, and name conflicts."""

from __future__ import annotations

import sys
import types
import warnings
from importlib import metadata
from pathlib import Path

import pytest
import schedlab
from schedlab.errors import PluginError, UnknownComponentError
from schedlab.registry import PluginLoadWarning, build_registry

FAKE_SITE = Path(__file__).parent / "fixtures" / "fake_site"


@pytest.fixture()
def fake_site(monkeypatch):
    """The fake installed distribution ``schedlab-fakeplugin`` on the import path."""
    monkeypatch.delenv("SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.syspath_prepend(str(FAKE_SITE))
    for mod in ("fake_schedlab_format", "fake_schedlab_policy", "fake_schedlab_broken"):
        sys.modules.pop(mod, None)
    eps = [
        ep
        for dist in metadata.distributions(path=[str(FAKE_SITE)])
        for ep in dist.entry_points
        if ep.group == "schedlab"
    ]
    assert {ep.name for ep in eps} == {"fake-format", "fake-policy", "fake-broken"}
    return eps


def _own_entry_points():
    return [
        ep
        for ep in metadata.entry_points(group="schedlab")
        if ep.dist is not None and ep.dist.metadata["Name"] == "schedlab"
    ]


def test_third_party_plugins_are_discovered_with_provenance(fake_site):
    with pytest.warns(PluginLoadWarning, match="fake-broken"):
        registry = build_registry(entry_points=fake_site)
    assert registry.reader("runs").provider == "fake-format"
    assert registry.policy("newest-first").description == "LIFO"
    infos = {i.name: i for i in registry.plugin_infos()}
    assert infos["fake-format"].distribution == "schedlab-fakeplugin"
    assert infos["fake-format"].version == "1.2.3"
    assert infos["fake-format"].status == "loaded"
    assert "schedlab_readers" in infos["fake-format"].hooks


def test_broken_plugin_warns_naming_entry_point_and_distribution(fake_site):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = build_registry(entry_points=fake_site)
    messages = [str(w.message) for w in caught if issubclass(w.category, PluginLoadWarning)]
    assert len(messages) == 1
    assert "'fake-broken'" in messages[0]
    assert "schedlab-fakeplugin 1.2.3" in messages[0]
    assert "broken on purpose" in messages[0]
    info = {i.name: i for i in registry.plugin_infos()}["fake-broken"]
    assert info.status == "failed" and "ImportError" in info.error
    # every other plugin keeps working
    assert registry.has("reader", "runs")


def test_strict_mode_turns_a_broken_plugin_into_an_error(fake_site, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match=r"fake-broken.*schedlab-fakeplugin"):
        build_registry(entry_points=fake_site)


def test_builtin_and_third_party_plugins_load_through_the_same_path(fake_site):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginLoadWarning)
        registry = build_registry(entry_points=[*_own_entry_points(), *fake_site])
    providers = {i.distribution for i in registry.plugin_infos() if i.status == "loaded"}
    assert providers == {"schedlab", "schedlab-fakeplugin"}


def test_third_party_reader_works_through_the_public_api(fake_site, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginLoadWarning)
        registry = build_registry(entry_points=fake_site)
    src = tmp_path / "jobs.runs"
    src.write_text("10\n20.5\n")
    workload = schedlab.read(src, registry=registry)
    assert [j.run_time for j in workload] == [10.0, 20.5]
    out = schedlab.write(workload, tmp_path / "copy.runs", registry=registry)
    assert out.read_text() == "10\n20.5\n"


def _plugin_module(name: str, reader_name: str, aliases=()):
    module = types.ModuleType(name)

    @schedlab.hookimpl
    def schedlab_readers():
        return [
            schedlab.ReaderSpec(name=reader_name, aliases=aliases, read=lambda src, **o: None)
        ]

    module.schedlab_readers = schedlab_readers
    return module


def test_two_plugins_claiming_one_name_is_an_error_naming_both():
    with pytest.raises(PluginError, match=r"'dup'.*'first'.*'second'|'dup'.*'second'.*'first'"):
        build_registry(
            plugins=[
                ("first", _plugin_module("m1", "dup")),
                ("second", _plugin_module("m2", "dup")),
            ],
            entry_points=False,
        )


def test_an_alias_clashing_with_a_name_is_an_error():
    with pytest.raises(PluginError, match="'other'"):
        build_registry(
            plugins=[
                ("first", _plugin_module("m1", "one", aliases=("other",))),
                ("second", _plugin_module("m2", "other")),
            ],
            entry_points=False,
        )


def test_unknown_component_lists_what_exists():
    registry = build_registry(plugins=[("p", _plugin_module("m", "alpha"))], entry_points=False)
    with pytest.raises(UnknownComponentError, match=r"unknown reader 'beta' \(available: alpha\)"):
        registry.reader("beta")


def test_registration_order_does_not_matter():
    a, b = _plugin_module("ma", "aaa"), _plugin_module("mb", "bbb")
    r1 = build_registry(plugins=[("a", a), ("b", b)], entry_points=False)
    r2 = build_registry(plugins=[("b", b), ("a", a)], entry_points=False)
    assert r1.names("reader") == r2.names("reader") == ["aaa", "bbb"]


def test_a_hook_returning_the_wrong_record_type_is_reported():
    module = types.ModuleType("wrong")

    @schedlab.hookimpl
    def schedlab_readers():
        return [schedlab.WriterSpec(name="x", write=print)]

    module.schedlab_readers = schedlab_readers
    with pytest.raises(PluginError, match="returned WriterSpec, expected ReaderSpec"):
        build_registry(plugins=[("wrong", module)], entry_points=False)


def test_block_list_skips_a_plugin_by_name(fake_site, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_BLOCK_PLUGINS", "fake-broken,fake-policy")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PluginLoadWarning)  # the broken one is never imported
        registry = build_registry(entry_points=fake_site)
    assert not registry.has("policy", "newest-first")
    assert registry.has("reader", "runs")
    status = {i.name: i.status for i in registry.plugin_infos()}
    assert status["fake-broken"] == status["fake-policy"] == "blocked"


def test_every_declared_builtin_entry_point_loads_strictly():
    registry = build_registry(entry_points=_own_entry_points(), strict=True)
    assert all(i.status == "loaded" for i in registry.plugin_infos())
    assert all(i.distribution == "schedlab" for i in registry.plugin_infos())
