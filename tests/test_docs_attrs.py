"""Every public attribute has a description in the API reference (docs/conf.py).

The package page documents the classes of ``schedlab.__all__`` with
``:undoc-members:``, so an attribute without a ``#:`` doc comment renders as a bare
name and type. The build warns about such an entry (``-W`` fails it); these tests
check the sources without building, and that the build's check fires.
"""

from __future__ import annotations

import importlib.util
import inspect
import types
from pathlib import Path

import pytest

pytest.importorskip("sphinx")

from docutils import nodes
from sphinx import addnodes
from sphinx.pycode import ModuleAnalyzer

CONF = Path(__file__).resolve().parent.parent / "docs" / "conf.py"


@pytest.fixture(scope="module")
def conf() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("schedlab_docs_conf_attrs", CONF)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _data_attributes(cls: type) -> list[str]:
    """The public data attributes a class defines itself: its annotated names and
    its plain class attributes (no methods or properties, which have docstrings)."""
    names = set(inspect.get_annotations(cls))
    for name, value in vars(cls).items():
        if not (callable(value) or isinstance(value, (property, classmethod, staticmethod))):
            names.add(name)
    return sorted(name for name in names if not name.startswith("_"))


def test_every_attribute_of_an_exported_class_has_a_doc_comment(conf):
    missing = []
    for fullname, obj in sorted(conf.PUBLIC.items()):
        if not inspect.isclass(obj):
            continue
        docs = ModuleAnalyzer.for_module(obj.__module__).find_attr_docs()
        for name in _data_attributes(obj):
            comment = docs.get((obj.__qualname__, name), [])
            if not "".join(comment).strip():
                missing.append(f"{fullname}.{name}")
    assert "schedlab.Job" in conf.PUBLIC and "hosts" in _data_attributes(
        conf.PUBLIC["schedlab.Job"]
    )
    assert missing == []


def _entry(objtype: str, module: str, fullname: str, *content: nodes.Node) -> addnodes.desc:
    desc = addnodes.desc(domain="py", objtype=objtype)
    desc += addnodes.desc_signature(module=module, fullname=fullname)
    desc += addnodes.desc_content("", *content)
    return desc


def _check(conf: types.ModuleType, monkeypatch, doctree: nodes.document) -> list[str]:
    messages: list[str] = []
    monkeypatch.setattr(
        conf,
        "logger",
        types.SimpleNamespace(warning=lambda text, *args: messages.append(text % args)),
    )
    env = types.SimpleNamespace(docname="api/schedlab")
    conf.record_undescribed_members(types.SimpleNamespace(env=env), doctree)
    conf.check_undescribed_members(env)
    return messages


def test_an_attribute_rendered_without_description_fails_the_build(conf, monkeypatch):
    doctree = nodes.document(None, None)
    since = addnodes.versionmodified("", "", nodes.paragraph(text="Added in version 0.1.0"))
    doctree += _entry("attribute", "schedlab", "Job.hosts")
    doctree += _entry("attribute", "schedlab", "Job.extras", nodes.paragraph(text="Every field."))
    doctree += _entry("property", "schedlab", "Job.start_time", since)
    doctree += _entry("attribute", "schedlab", "NotPublic.value")
    doctree += _entry("attribute", "schedlab.validation", "Finding.check")  # a toolkit class
    doctree += _entry("attribute", "schedlab.frames", "Table.rows")  # not public
    why = "has no description (a #: comment above it, or a docstring)"
    assert _check(conf, monkeypatch, doctree) == [
        f"public member schedlab.Job.hosts {why}",
        f"public member schedlab.Job.start_time {why}",
        f"public member schedlab.validation.Finding.check {why}",
    ]


def test_a_page_read_again_forgets_its_old_entries(conf, monkeypatch):
    first = nodes.document(None, None)
    first += _entry("attribute", "schedlab", "Job.hosts")
    assert len(_check(conf, monkeypatch, first)) == 1
    env = types.SimpleNamespace(docname="api/schedlab")
    conf.record_undescribed_members(types.SimpleNamespace(env=env), first)
    conf.purge_undescribed(None, env, "api/schedlab")
    assert env.schedlab_undescribed == {}
