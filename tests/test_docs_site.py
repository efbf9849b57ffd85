"""The documentation site's own checks (docs/conf.py), without building it.

CI builds the site with warnings as errors (``.ci/wheel-smoke``); these tests give
the same verdict on the public names early, in the normal suite, and show that
the completeness check of the build can fail.
"""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sphinx")

CONF = Path(__file__).resolve().parent.parent / "docs" / "conf.py"


@pytest.fixture(scope="module")
def conf() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("schedlab_docs_conf", CONF)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeDomain:
    def __init__(self, names: list[str]) -> None:
        self.names = names

    def get_objects(self) -> Any:
        return ((n, n, "function", "api/x", n, 1) for n in self.names)


def run_check(conf: types.ModuleType, documented: list[str], monkeypatch) -> list[str]:
    messages: list[str] = []
    monkeypatch.setattr(conf, "logger", types.SimpleNamespace(
        warning=lambda text, *args: messages.append(text % args)))
    env = types.SimpleNamespace(get_domain=lambda name: FakeDomain(documented))
    conf.check_reference_is_complete(types.SimpleNamespace(env=env), env)
    return messages


def test_every_public_name_and_hook_has_a_docstring(conf, monkeypatch):
    everything = [*conf.PUBLIC, *conf.HOOKS, *conf.TOOLKIT]
    assert "schedlab.read" in everything and "schedlab.hookspecs.schedlab_readers" in everything
    assert run_check(conf, everything, monkeypatch) == []


def test_a_missing_or_undocumented_name_is_reported(conf, monkeypatch):
    def undocumented() -> None:
        pass

    monkeypatch.setitem(conf.PUBLIC, "schedlab.undocumented", undocumented)
    documented = [n for n in [*conf.PUBLIC, *conf.HOOKS, *conf.TOOLKIT] if n != "schedlab.read"]
    assert run_check(conf, documented, monkeypatch) == [
        "public name schedlab.read is missing from the API reference (docs/api/)",
        "public name schedlab.undocumented has no docstring",
    ]


def test_a_missing_toolkit_name_is_reported(conf, monkeypatch):
    name = "schedlab.sim.TSAFRIR_INCREMENTS"
    assert name in conf.TOOLKIT
    documented = [n for n in [*conf.PUBLIC, *conf.HOOKS, *conf.TOOLKIT] if n != name]
    assert run_check(conf, documented, monkeypatch) == [
        f"public name {name} is missing from the API reference (docs/api/)"
    ]


def test_every_public_item_has_the_version_it_appeared_in(conf):
    keys = {conf._surface_key(n) for n in [*conf.PUBLIC, *conf.HOOKS]}
    assert keys - set(conf.SINCE) == set()


def test_plural_literals_are_repaired(conf):
    lines = ["validated against their ``OptionSpec``s; ``a`` b"]
    conf.add_since(None, "function", "x.y", None, None, lines)
    assert lines == ["validated against their ``OptionSpec``\\ s; ``a`` b"]
