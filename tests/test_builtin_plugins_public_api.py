"""The built-in plugins use only the public API, like a third party would.

Every ``schedlab`` import of a module under ``formats/``, ``policies/`` and
``metrics/`` (the packages ``schedlab.formats``, ``schedlab.policies`` and
``schedlab.metrics``), read from its source (``ast``; lazy imports inside
functions and ``TYPE_CHECKING`` imports included), must be one of:

* a name of ``schedlab.__all__`` (``from schedlab import Workload``);
* a name of the ``__all__`` of a plugin-toolkit module
  (:data:`schedlab.compat.PLUGIN_TOOLKIT`: ``from schedlab.io import open_binary``),
  or such a module itself (``from schedlab.sim import online_linear``);
* an import of another plugin module (``schedlab.formats.*``,
  ``schedlab.policies.*``, ``schedlab.metrics.*``): a third party may depend on
  another plugin package too.

Attribute chains on an imported ``schedlab`` (``schedlab.read``) are checked the
same way. The test lists every offender at once. See ``docs/compatibility.md``,
"What is public".
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PLUGIN_PACKAGES = ("formats", "policies", "metrics")


def toolkit() -> dict[str, frozenset[str]]:
    from schedlab.compat import PLUGIN_TOOLKIT

    return {  # a module without __all__ exports nothing (and fails the test below)
        name: frozenset(getattr(importlib.import_module(name), "__all__", ()))
        for name in PLUGIN_TOOLKIT
    }


def exported() -> frozenset[str]:
    import schedlab

    return frozenset(schedlab.__all__)


def is_plugin_module(module: str) -> bool:
    return module.split(".")[:2] in (["schedlab", p] for p in PLUGIN_PACKAGES)


def module_of(path: Path) -> list[str]:
    """The dotted package of a plugin source file, as installed (``schedlab.formats...``)."""
    rel = path.relative_to(ROOT)
    return ["schedlab", *rel.parent.parts]


def imports(path: Path) -> list[tuple[int, str, str | None]]:
    """``(line, module, name)`` of every schedlab import of ``path`` (``name`` None for
    ``import schedlab.x``), and ``(line, "schedlab", attribute)`` for each attribute read
    on a module imported as plain ``import schedlab``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module_of(path)
    found: list[tuple[int, str, str | None]] = []
    plain: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module == "schedlab" or module.startswith("schedlab."):
                found += [(node.lineno, module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "schedlab" and alias.asname is None:
                    plain.add("schedlab")
                elif alias.name == "schedlab":
                    plain.add(alias.asname or "schedlab")
                elif alias.name.startswith("schedlab."):
                    found.append((node.lineno, alias.name, None))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in plain
        ):
            found.append((node.lineno, "schedlab", node.attr))
    return found


def offence(module: str, name: str | None, public: dict[str, frozenset[str]]) -> str | None:
    """Why importing ``name`` from ``module`` is not public API, or ``None``."""
    if is_plugin_module(module):
        return None
    if name is None:  # import schedlab.x.y
        return None if module in public or module == "schedlab" else "not a toolkit module"
    if module == "schedlab":
        if name in public["schedlab"] or f"schedlab.{name}" in public:
            return None
        if name in PLUGIN_PACKAGES:
            return None
        return "not in schedlab.__all__"
    if f"{module}.{name}" in public or is_plugin_module(f"{module}.{name}"):
        return None  # a toolkit module or a plugin module itself
    if module not in public:
        return f"{module} is not a toolkit module"
    if name not in public[module]:
        return f"not in {module}.__all__"
    return None


def offenders() -> list[str]:
    public = {"schedlab": exported(), **toolkit()}
    out = []
    for package in PLUGIN_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for line, module, name in imports(path):
                why = offence(module, name, public)
                if why:
                    spelled = f"from {module} import {name}" if name else f"import {module}"
                    out.append(f"{path.relative_to(ROOT)}:{line}: {spelled} ({why})")
    return out


def test_builtin_plugins_import_only_public_names():
    found = offenders()
    assert not found, (
        f"{len(found)} import(s) of non-public schedlab names in the built-in plugins "
        "(use schedlab.__all__ or a toolkit module's __all__, or make the name public "
        "there and document it; see docs/compatibility.md):\n" + "\n".join(found)
    )


def test_toolkit_modules_declare_their_public_names():
    for name, names in toolkit().items():
        module = importlib.import_module(name)
        assert names, f"{name}.__all__ is empty"
        missing = sorted(n for n in names if not hasattr(module, n))
        assert not missing, f"{name}.__all__ names what it does not define: {missing}"
        private = sorted(n for n in names if n.startswith("_"))
        assert not private, f"{name}.__all__ holds private names: {private}"


def test_the_check_catches_private_and_accepts_public(tmp_path):
    public = {"schedlab": exported(), **toolkit()}
    assert offence("schedlab", "Workload", public) is None
    assert offence("schedlab.io", "open_binary", public) is None
    assert offence("schedlab.sim", "online_linear", public) is None
    assert offence("schedlab.policies.user_history", "MAX_WINDOW", public) is None
    assert offence("schedlab", "policies", public) is None
    assert offence("schedlab.io", "_peek", public) == "not in schedlab.io.__all__"
    assert offence("schedlab.registry", "get_registry", public) == (
        "schedlab.registry is not a toolkit module"
    )
    assert offence("schedlab", "registry", public) == "not in schedlab.__all__"
    assert offence("schedlab.sim.engine", None, public) == "not a toolkit module"


@pytest.mark.parametrize(
    ("source", "where", "expected"),
    [
        ("from ..sim import x\n", "formats/a/b.py", [(1, "schedlab.formats.sim", "x")]),
        ("from ... import read\n", "formats/a/b.py", [(1, "schedlab", "read")]),
        (
            "def f():\n    import schedlab\n    return schedlab.read\n",
            "policies/p.py",
            [(3, "schedlab", "read")],
        ),
        ("import schedlab.sim.engine\n", "metrics/m.py", [(1, "schedlab.sim.engine", None)]),
    ],
)
def test_imports_are_resolved(tmp_path, monkeypatch, source, where, expected):
    path = tmp_path / where
    path.parent.mkdir(parents=True)
    path.write_text(source, encoding="utf-8")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert imports(path) == expected
