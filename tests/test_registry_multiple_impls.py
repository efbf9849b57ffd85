"""The registry with plugins as pluggy allows them and as the docs write them.

- A plugin implementing one hook twice (pluggy's ``specname=``) provides the records
  of both implementations (they were lost: the second overwrote the first).
- ``schedlab.build_registry(plugins=[module])``, as docs/compatibility.md writes it,
  registers the module under the last part of its name; anything else than a plugin
  or a ``(name, plugin)`` pair is a one-line ``UsageError``.
"""

from __future__ import annotations

import types
import warnings
from importlib import metadata

import pytest
import schedlab
from schedlab import PolicySpec, hookimpl
from schedlab.compat import IncompatiblePluginError
from schedlab.errors import PluginError, PluginLoadWarning, UsageError
from schedlab.registry import PluginHost, Registry


class _Key:
    def key(self, job, now):  # pragma: no cover - never simulated here
        return float(job)


def _two_impl_module(name: str, first: str, second: str) -> types.ModuleType:
    mod = types.ModuleType(name)

    @hookimpl
    def schedlab_policies():
        return [PolicySpec(name=first, factory=_Key)]

    @hookimpl(specname="schedlab_policies")
    def more_policies():
        return [PolicySpec(name=second, factory=_Key)]

    mod.schedlab_policies = schedlab_policies
    mod.more_policies = more_policies
    return mod


def test_both_implementations_of_one_hook_are_registered():
    mod = _two_impl_module("twoimpl_plugin", "first-one", "second-one")
    reg = schedlab.build_registry(plugins=[("two", mod)], entry_points=False)
    assert len(reg.host.pm.hook.schedlab_policies.get_hookimpls()) == 2
    assert reg.names("policy") == ["first-one", "second-one"]
    assert reg.policy("second-one").provider == "two"
    assert reg.policy("first-one").provider == "two"
    assert [c.name for _, c in reg.components_of("two")] == ["first-one", "second-one"]
    info = reg.host.infos["two"]
    assert info.status == "loaded"
    assert info.hooks == ("schedlab_policies",)  # one hook, listed once


def test_third_party_plugin_keeps_both_implementations():
    """An installed (third-party) plugin: same, and no warning."""
    mod = _two_impl_module("twoimpl_installed", "tp-first", "tp-second")
    host = PluginHost()
    host.register(mod, "tp", distribution="schedlab-tp", version="1.0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reg = Registry(host)
    assert reg.names("policy") == ["tp-first", "tp-second"]
    assert host.infos["tp"].status == "loaded"


def test_one_name_from_both_implementations_is_a_name_claimed_twice():
    mod = _two_impl_module("twoimpl_same", "same-name", "same-name")
    host = PluginHost()
    host.register(mod, "dup", distribution="schedlab-dup", version="1.0")
    with pytest.warns(PluginLoadWarning, match=r"'dup'.*claims policy name 'same-name' twice"):
        reg = Registry(host)
    assert host.infos["dup"].status == "disabled"
    assert reg.names("policy") == []
    # registered by hand: an error at once
    with pytest.raises(PluginError, match="claims policy name 'same-name' twice"):
        schedlab.build_registry(plugins=[("dup", mod)], entry_points=False)


def test_a_failing_second_implementation_disables_the_whole_plugin():
    mod = _two_impl_module("twoimpl_fail", "ok-one", "never")

    @hookimpl(specname="schedlab_policies")
    def broken_policies():
        raise RuntimeError("boom")

    mod.broken_policies = broken_policies
    host = PluginHost()
    host.register(mod, "half", distribution="schedlab-half", version="1.0")
    with pytest.warns(PluginLoadWarning, match=r"'half'.*schedlab_policies raised RuntimeError"):
        reg = Registry(host)
    assert host.infos["half"].status == "failed"
    assert reg.names("policy") == []


# ------------------------------------------------------------ build_registry(plugins=)


def _policy_module(name: str, policy: str) -> types.ModuleType:
    mod = types.ModuleType(name)

    @hookimpl
    def schedlab_policies():
        return [PolicySpec(name=policy, factory=_Key)]

    mod.schedlab_policies = schedlab_policies
    return mod


def test_build_registry_takes_a_bare_module_named_by_its_name():
    mod = _policy_module("mypkg.sub.mine", "mine-policy")
    reg = schedlab.build_registry(plugins=[mod], entry_points=False)
    assert reg.policy("mine-policy").provider == "mine"
    assert reg.host.infos["mine"].module == "mypkg.sub.mine"
    assert reg.host.infos["mine"].status == "loaded"


def test_build_registry_mixes_modules_and_pairs():
    one = _policy_module("one_plugin", "pol-one")
    two = _policy_module("two_plugin", "pol-two")
    reg = schedlab.build_registry(plugins=[one, ("runs", two)], entry_points=False)
    assert reg.policy("pol-one").provider == "one_plugin"
    assert reg.policy("pol-two").provider == "runs"


def test_build_registry_module_with_incompatible_range_as_documented():
    """docs/compatibility.md: ``build_registry(plugins=[...])`` with an incompatible
    ``SCHEDLAB_API`` raises IncompatiblePluginError (it was a bare TypeError)."""
    mod = types.ModuleType("p")
    mod.SCHEDLAB_API = ">=2,<3"
    with pytest.raises(IncompatiblePluginError, match=r"plugin 'p': it declares SCHEDLAB_API"):
        schedlab.build_registry(plugins=[mod], entry_points=False)


_EXPECTED = r"build_registry\(plugins=\.\.\.\): .*expected"


@pytest.mark.parametrize(
    ("plugins", "detail"),
    [
        (types.ModuleType("alone"), r"expected a list of modules .* got module"),
        ("my_plugin", r"expected a list of modules .* got str 'my_plugin'"),
        (None, r"got NoneType None"),
        (["my_plugin"], r"item 0: expected a module .* got str 'my_plugin'"),
        ([None], r"item 0: expected a module .* got NoneType"),
        ([[types.ModuleType("nested")]], r"item 0: expected a module .* got list"),
        ([("only-name",)], r"item 0 is \('only-name',\): a pair must be \(name, plugin\)"),
        ([(3, types.ModuleType("m"))], r"item 0 is \(3, .*a pair must be \(name, plugin\)"),
        ([("", types.ModuleType("m"))], r"item 0 is .*non-empty name"),
        ([("name", "module")], r"item 0: expected a module .* got str 'module'"),
        ([("name", None)], r"item 0: expected a module .* got NoneType"),
    ],
)
def test_build_registry_refuses_what_is_not_a_plugin(plugins, detail):
    with pytest.raises(UsageError, match=detail) as caught:
        schedlab.build_registry(plugins=plugins, entry_points=False)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("build_registry(plugins=...): ")


def test_build_registry_checks_plugins_before_loading_entry_points():
    """A usage error is reported before any entry point is imported."""
    loaded = []

    class _Ep:
        name, value, group = "x", "x_module", "schedlab"
        dist = None

        def load(self):  # pragma: no cover - must not run
            loaded.append(self)
            return types.ModuleType("x_module")

    eps: list[metadata.EntryPoint] = [_Ep()]  # type: ignore[list-item]
    with pytest.raises(UsageError):
        schedlab.build_registry(plugins=[42], entry_points=eps)
    assert loaded == []
