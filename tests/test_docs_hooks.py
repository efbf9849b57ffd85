"""docs/plugins.md documents every hook of ``schedlab.hookspecs`` with its exact
signature, and its Python examples compile."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from schedlab import hookspecs

DOC = Path(__file__).resolve().parent.parent / "docs" / "plugins.md"
SECTION_RE = re.compile(r"^### `(?P<hook>\w+)`\s*$", re.MULTILINE)
FENCE_RE = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def hook_specs() -> dict[str, object]:
    """Every function of the hookspec module marked as a hook specification."""
    marker = f"{hookspecs.PROJECT}_spec"
    return {
        name: fn
        for name, fn in vars(hookspecs).items()
        if callable(fn) and hasattr(fn, marker)
    }


def spec_signature(fn: object) -> str:
    """``def name(params) -> return`` exactly as the spec declares it (annotations
    are kept as written: the module uses postponed evaluation)."""
    sig = inspect.signature(fn)
    params = []
    for p in sig.parameters.values():
        text = p.name
        if p.annotation is not inspect.Parameter.empty:
            text += f": {p.annotation}"
        if p.default is not inspect.Parameter.empty:
            text += f" = {p.default!r}"
        params.append(text)
    ret = "" if sig.return_annotation is inspect.Signature.empty else f" -> {sig.return_annotation}"
    return f"def {fn.__name__}({', '.join(params)}){ret}"


def reference() -> dict[str, str]:
    """Hook name -> text of its section under '## Hook reference'."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index("\n## Hook reference")
    end = text.find("\n## ", start + 1)
    body = text[start : end if end > 0 else len(text)]
    matches = list(SECTION_RE.finditer(body))
    sections = {}
    for i, match in enumerate(matches):
        stop = matches[i + 1].start() if i + 1 < len(matches) else len(body)
        sections[match["hook"]] = body[match.end() : stop]
    return sections


def documented_signature(section: str) -> str:
    first = FENCE_RE.search(section)
    assert first is not None, "no code block with the signature"
    line = first["body"].strip().splitlines()[0]
    return re.sub(r"\s+", " ", line).rstrip(":").strip()


def test_the_spec_module_has_hooks():
    assert len(hook_specs()) >= 9  # guards the discovery below


def test_every_hook_has_a_reference_section():
    missing = sorted(set(hook_specs()) - set(reference()))
    assert not missing, f"hooks without a section in {DOC.name}: {missing}"


def test_every_section_is_a_hook():
    unknown = sorted(set(reference()) - set(hook_specs()))
    assert not unknown, f"sections in {DOC.name} for hooks that do not exist: {unknown}"


@pytest.mark.parametrize("hook", sorted(hook_specs()))
def test_documented_signature_matches_the_spec(hook):
    section = reference().get(hook)
    if section is None:
        pytest.fail(f"{hook} has no reference section in {DOC.name}")
    assert documented_signature(section) == spec_signature(hook_specs()[hook])


@pytest.mark.parametrize("hook", sorted(hook_specs()))
def test_section_has_arguments_returns_and_an_example(hook):
    section = reference().get(hook, "")
    for label in ("**Arguments:**", "**Returns:**", "**Example:**"):
        assert label in section, f"{hook}: no {label} paragraph"
    blocks = [m["body"] for m in FENCE_RE.finditer(section) if m["lang"] == "python"]
    assert len(blocks) >= 2, f"{hook}: needs the signature block and an example block"
    assert f"def {hook}(" in blocks[-1] and "@hookimpl" in blocks[-1], hook


def test_python_examples_compile():
    text = DOC.read_text(encoding="utf-8")
    blocks = [m["body"] for m in FENCE_RE.finditer(text) if m["lang"] == "python"]
    assert len(blocks) > 10
    for body in blocks:
        if body.startswith("def ") and body.count("\n") == 1:  # a signature line alone
            body = body.rstrip() + ": ..."
        compile(body, str(DOC), "exec")


def test_signature_check_catches_a_difference():
    """The comparison is strict: a renamed argument or return type is caught."""
    def schedlab_converter_hooks(conv: Any) -> None: ...  # noqa: F821

    spec = spec_signature(hook_specs()["schedlab_converter_hooks"])
    assert spec == "def schedlab_converter_hooks(converter: Any) -> None"
    assert spec_signature(schedlab_converter_hooks) != spec
