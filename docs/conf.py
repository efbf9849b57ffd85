"""Sphinx configuration of schedlab's documentation site.

Build it with ``.venv/bin/python -m sphinx -W --keep-going -n -b html docs build/docs``
(README's command; CI runs the same). The guides are the Markdown files of this
folder, read by MyST; the API reference (``api/``) is generated from docstrings by
autodoc. Nothing is fetched from the network (no intersphinx): a reference to
anything outside schedlab is left as plain text, while a reference to a schedlab
name that does not exist, or a public name or hook missing from the reference, is
a warning, which ``-W`` turns into a failed build.

Why Sphinx and MyST rather than MkDocs and mkdocstrings: autodoc imports the
package, so it sees the lazily exported names of ``schedlab`` and pluggy's hook
markers exactly as users do (mkdocstrings reads sources statically); nitpicky mode
checks every cross-reference; ``versionadded`` and the canonical names of
re-exported objects are built in; and it is what numpy, pandas, scikit-learn,
pytest and pluggy use, so the docstrings' reStructuredText roles
(``:class:``, ``:func:``) that schedlab already writes render as links.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SNAPSHOT = ROOT / "tests" / "public_surface.json"

os.environ.setdefault("SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD", "1")  # third-party plugins stay out

import schedlab  # noqa: E402  (the installed package: editable in development)
from schedlab import compat  # noqa: E402

project = "schedlab"
author = "the schedlab developers"
copyright = "2026, the schedlab developers"
release = schedlab.__version__
version = ".".join(release.split(".")[:2])

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "**/README.md"]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
suppress_warnings = ["myst.header"]  # guides start at '##' under a page title of '#'

nitpicky = True
autodoc_member_order = "groupwise"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autodoc_default_options = {"show-inheritance": True}
napoleon_google_docstring = False
napoleon_numpy_docstring = True

html_theme = "alabaster"
html_title = f"schedlab {release}"
html_static_path: list[str] = []

logger = logging.getLogger("schedlab.docs")


def _untyped_attributes() -> None:
    """Read an attribute's or constant's comment (``#:``) as prose.

    numpydoc style (napoleon) takes an attribute docstring's first line as
    ``TYPE: description`` when it holds a colon, so "Largest magnitude ...: one
    line" rendered as a "Type" field. schedlab's comments never give a type there
    (the annotations do): the whole comment stays the description."""
    from sphinx.ext.napoleon.docstring import GoogleDocstring

    def consume(self: Any) -> tuple[str, list[str]]:
        lines = [self._lines.next(), *self._dedent(self._consume_to_end())]
        return "", self.__class__(lines, self._config).lines()

    GoogleDocstring._consume_inline_attribute = consume  # type: ignore[method-assign]


_untyped_attributes()


def _since() -> dict[str, str]:
    """Public item -> version it appeared in, from the public-surface snapshot."""
    if not SNAPSHOT.exists():
        return {}
    data = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    return {name: item["since"] for name, item in data["surface"].items()}


SINCE = _since()
PUBLIC = {f"schedlab.{name}": getattr(schedlab, name) for name in schedlab.__all__}
HOOKS = {f"schedlab.hookspecs.{name}": fn for name, fn in compat.hook_specs().items()}
#: The names of the plugin-toolkit modules' ``__all__`` (public too, with a "since"),
#: and their objects.
TOOLKIT_OBJECTS = {
    f"{module}.{name}": getattr(importlib.import_module(module), name)
    for module in compat.PLUGIN_TOOLKIT
    for name in importlib.import_module(module).__all__
}
TOOLKIT = set(TOOLKIT_OBJECTS)


def _surface_key(fullname: str) -> str:
    if fullname in HOOKS:
        return fullname.rsplit(".", 1)[1]
    return fullname


PLURAL_LITERAL = re.compile(r"``(?=[^`\s])([^`]*[^`\s])``(?=[A-Za-z])")


def add_since(app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """Append ``.. versionadded::`` to every public name (the package's and the plugin
    toolkit's) and hook, from the snapshot.

    Also repairs the plural idiom of the docstrings (an inline literal directly
    followed by a letter, as in "the OptionSpec-literal-s"), which
    reStructuredText does not allow."""
    lines[:] = [PLURAL_LITERAL.sub(r"``\1``\\ ", line) for line in lines]
    since = SINCE.get(_surface_key(name))
    if since and (name in PUBLIC or name in HOOKS or name in TOOLKIT):
        lines.extend(["", f".. versionadded:: {since}"])


def _split_parameters(text: str) -> list[str]:
    """The parameters of a signature's text (without its parentheses), split at the
    commas outside brackets and quotes."""
    parts: list[str] = []
    depth = 0
    quote = ""
    start = 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _attrs_default(field: Any) -> str:
    """How an attrs field's default reads in a signature: its value, or the call
    its factory makes (``list()``); ``...`` for a factory without a plain name."""
    import attrs

    default = field.default
    if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
        name = getattr(default.factory, "__name__", "")
        return f"{name}()" if name.isidentifier() else "..."
    if isinstance(default, type) or callable(default):
        return getattr(default, "__qualname__", repr(default))
    return repr(default)


def attrs_signature(
    app: Sphinx,
    what: str,
    name: str,
    obj: Any,
    options: Any,
    signature: str | None,
    ret: str | None,
) -> tuple[str, str | None] | None:
    """Show an attrs class's defaults as values. attrs writes its ``__init__``'s
    source with ``attr_dict['x'].default`` for each default and ``NOTHING`` for a
    factory, which ``autodoc_preserve_defaults`` would print as they are."""
    import attrs

    if what != "class" or not signature or not attrs.has(obj):
        return None
    fields = {f.alias if f.alias else f.name: f for f in attrs.fields(obj)}
    params = []
    for param in _split_parameters(signature.strip()[1:-1]):
        head, eq, _ = param.partition("=")
        key = head.split(":", 1)[0].strip().lstrip("*")
        if eq and key in fields and fields[key].default is not attrs.NOTHING:
            param = f"{head.rstrip()} = {_attrs_default(fields[key])}"
        params.append(param)
    return f"({', '.join(params)})", ret


def skip_reexports(app: Sphinx, what: str, name: str, obj: Any, skip: bool, options: Any) -> Any:
    """Document a re-exported object once, as ``schedlab.NAME``: the other modules'
    pages skip it (references to its defining module still resolve, as canonical)."""
    if what == "module" and any(obj is value for value in PUBLIC.values()):
        current = getattr(app.env, "temp_data", {}).get("autodoc:module")
        if current != "schedlab":
            return True
    return None


def _documented(app: Sphinx) -> set[str]:
    domain = app.env.get_domain("py")
    return {name for name, *_ in domain.get_objects()}


def check_reference_is_complete(app: Sphinx, env: Any) -> None:
    """Every name of ``schedlab.__all__``, of the plugin-toolkit modules' ``__all__``
    and every hook specification is in the API reference, with a docstring of its own
    (a warning each, so ``-W`` fails). A toolkit name that ``schedlab`` exports too is
    documented once, as ``schedlab.NAME`` (:func:`skip_reexports`); a constant is
    documented only when it has a ``#:`` doc comment in its toolkit module. A public
    class's attribute (or other member) that renders with no description is a
    warning too (:func:`check_undescribed_members`)."""
    documented = _documented(app)
    for fullname, obj in {**PUBLIC, **HOOKS, **TOOLKIT_OBJECTS}.items():
        if fullname not in documented and not _documented_as_reexport(obj, documented):
            logger.warning("public name %s is missing from the API reference (docs/api/)", fullname)
        elif (inspect.isroutine(obj) or inspect.isclass(obj)) and not (obj.__doc__ or "").strip():
            logger.warning("public name %s has no docstring", fullname)
    check_undescribed_members(env)


#: The member entries (``py:attribute``, ``py:property`` ...) that autodoc renders.
MEMBER_TYPES = frozenset({"attribute", "property", "method", "classmethod", "staticmethod", "data"})


def record_undescribed_members(app: Sphinx, doctree: Any) -> None:
    """Note every member entry of a page that renders with no description: neither
    a ``#:`` doc comment nor a docstring gave it text (a ``versionadded`` alone is
    no description). :func:`check_undescribed_members` reports the public ones."""
    from sphinx import addnodes

    names: list[str] = []
    for desc in doctree.findall(addnodes.desc):
        if desc.get("domain") != "py" or desc.get("objtype") not in MEMBER_TYPES:
            continue
        content = next(iter(desc.findall(addnodes.desc_content)), None)
        described = content is not None and any(
            not isinstance(child, addnodes.versionmodified) and child.astext().strip()
            for child in content.children
        )
        if described:
            continue
        for signature in desc.findall(addnodes.desc_signature):
            module, fullname = signature.get("module"), signature.get("fullname")
            if fullname:
                names.append(f"{module}.{fullname}" if module else fullname)
    store = _undescribed(app.env)
    store.pop(app.env.docname, None)
    if names:
        store[app.env.docname] = names


def _undescribed(env: Any) -> dict[str, list[str]]:
    """Page -> its member entries without a description (kept in the environment)."""
    if not hasattr(env, "schedlab_undescribed"):
        env.schedlab_undescribed = {}
    store: dict[str, list[str]] = env.schedlab_undescribed
    return store


def purge_undescribed(app: Sphinx, env: Any, docname: str) -> None:
    _undescribed(env).pop(docname, None)


def merge_undescribed(app: Sphinx, env: Any, docnames: Any, other: Any) -> None:
    """Parallel reading: take the pages another process read."""
    theirs = _undescribed(other)
    _undescribed(env).update({name: theirs[name] for name in docnames if name in theirs})


def check_undescribed_members(env: Any) -> None:
    """A public class's member (an attribute of a class of ``schedlab.__all__`` or of
    a plugin-toolkit module's ``__all__``) that renders with no description is a
    warning, so ``-W`` fails: give it a ``#:`` comment right above it in its class."""
    classes = {name for name, obj in {**PUBLIC, **TOOLKIT_OBJECTS}.items() if inspect.isclass(obj)}
    store = getattr(env, "schedlab_undescribed", {})
    for docname in sorted(store):
        for fullname in store[docname]:
            if fullname.rsplit(".", 1)[0] in classes:
                logger.warning(
                    "public member %s has no description (a #: comment above it, or a docstring)",
                    fullname,
                )


def _documented_as_reexport(obj: Any, documented: set[str]) -> bool:
    """Whether ``obj`` is exported by ``schedlab`` and documented there."""
    return any(obj is value and name in documented for name, value in PUBLIC.items())


def resolve_schedlab_names(app: Sphinx, env: Any, node: Any, contnode: Any) -> Any:
    """Resolve a short name (``ReaderSpec``, ``Workload``) written in a docstring or an
    annotation to the one schedlab object of that name, when there is exactly one."""
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    domain = env.get_domain("py")
    objects = domain.objects
    candidates = [f"schedlab.{target}", f"schedlab.{target.rsplit('.', 1)[-1]}"]
    if "." not in target:
        candidates += sorted(n for n in objects if n.rsplit(".", 1)[-1] == target)
    for name in dict.fromkeys(candidates):
        if name in objects:
            entry = objects[name]
            if entry.aliased:  # a canonical alias: link to the documented name
                continue
            return _make_ref(app, node, contnode, name, entry.docname, entry.node_id)
    return None


def _make_ref(app: Sphinx, node: Any, contnode: Any, name: str, docname: str, node_id: str) -> Any:
    from sphinx.util.nodes import make_refnode

    return make_refnode(app.builder, node["refdoc"], docname, node_id, contnode, name)


def ignore_outside_references(app: Sphinx, domain: Any, node: Any) -> bool | None:
    """No intersphinx (the build is offline): a reference to anything that is not a
    schedlab name stays plain text without a warning; a ``schedlab.`` one warns."""
    target = node.get("reftarget", "")
    if target.startswith(("schedlab.", "~schedlab.")) and target != "schedlab.__all__":
        return None
    return True


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("autodoc-process-docstring", add_since)
    app.connect("autodoc-process-signature", attrs_signature)
    app.connect("autodoc-skip-member", skip_reexports)
    app.connect("doctree-read", record_undescribed_members)
    app.connect("env-purge-doc", purge_undescribed)
    app.connect("env-merge-info", merge_undescribed)
    app.connect("env-check-consistency", check_reference_is_complete)
    app.connect("missing-reference", resolve_schedlab_names)
    app.connect("warn-missing-reference", ignore_outside_references)
    return {"parallel_read_safe": True}
