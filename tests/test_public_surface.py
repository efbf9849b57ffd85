"""The public surface is recorded in ``tests/public_surface.json``; a change to it is a
deliberate decision, named in CHANGELOG.md.

The surface (:func:`schedlab.compat.public_surface`) is every name of
``schedlab.__all__`` with its signature, every name of the ``__all__`` of each
plugin-toolkit module (``schedlab.compat.PLUGIN_TOOLKIT``) as ``MODULE.NAME``, every
hook specification with its signature, and every field of the plugin record types.
When it changes, this test fails until both are updated:

1. record the new surface: ``.venv/bin/python tests/test_public_surface.py --update``
   (it prints each change, stamped with the version in pyproject.toml);
2. name each printed item in backticks in that version's CHANGELOG.md entry.

Items added after the first snapshot carry the version they appeared in ("since"),
which the API reference shows; changes stay listed in the snapshot's history.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = Path(__file__).resolve().parent / "public_surface.json"
CHANGELOG = ROOT / "CHANGELOG.md"
UPDATE = ".venv/bin/python tests/test_public_surface.py --update"
ENTRY_RE = re.compile(r"^## \[(?P<version>[^\]]+)\]", re.M)


def pyproject_version() -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    project = text[text.index("[project]") :]
    match = re.search(r'^version\s*=\s*"([^"]+)"', project, re.M)
    assert match, "no version in pyproject.toml's [project]"
    return match.group(1)


def current() -> dict[str, str]:
    from schedlab.compat import public_surface

    return public_surface()


def load() -> dict[str, Any]:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def diff(recorded: dict[str, str], now: dict[str, str]) -> list[tuple[str, str]]:
    """``(change, name)`` pairs, change being added, removed or changed."""
    out = [("added", k) for k in now if k not in recorded]
    out += [("removed", k) for k in recorded if k not in now]
    out += [("changed", k) for k in now if k in recorded and recorded[k] != now[k]]
    return sorted(out, key=lambda c: c[1])


def updated(snapshot: dict[str, Any], now: dict[str, str], version: str) -> dict[str, Any]:
    """The snapshot recording ``now``: new items are stamped ``since`` ``version``,
    and every change joins the history under ``version``."""
    items = snapshot["surface"]
    changes = diff({k: v["text"] for k, v in items.items()}, now)
    surface = {
        name: {"text": text, "since": items[name]["since"] if name in items else version}
        for name, text in now.items()
    }
    history = list(snapshot["history"])
    for change, name in changes:
        entry = {"version": version, "change": change, "name": name}
        if entry not in history:
            history.append(entry)
    return {"about": snapshot["about"], "surface": surface, "history": history}


def changelog_sections(text: str) -> dict[str, str]:
    """Version -> text of its CHANGELOG entry."""
    found = list(ENTRY_RE.finditer(text))
    return {
        m["version"]: text[m.end() : found[i + 1].start() if i + 1 < len(found) else len(text)]
        for i, m in enumerate(found)
    }


def unnamed_in_changelog(history: list[dict[str, str]], changelog: str) -> list[str]:
    """History entries whose version's CHANGELOG entry names no backticked ``name``."""
    sections = changelog_sections(changelog)
    missing = []
    for entry in history:
        spans = re.findall(r"`([^`]+)`", sections.get(entry["version"], ""))
        name = entry["name"].removeprefix("schedlab.")
        pattern = re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w])")
        if not any(pattern.search(span) for span in spans):
            missing.append(f"[{entry['version']}] {entry['change']} `{entry['name']}`")
    return missing


def test_public_surface_matches_the_snapshot():
    recorded = {k: v["text"] for k, v in load()["surface"].items()}
    changes = diff(recorded, current())
    assert not changes, (
        "the public surface changed: "
        + ", ".join(f"{change} {name}" for change, name in changes)
        + f". If that is deliberate, run `{UPDATE}` and name each change in CHANGELOG.md"
    )


def test_every_recorded_change_is_named_in_the_changelog():
    missing = unnamed_in_changelog(load()["history"], CHANGELOG.read_text(encoding="utf-8"))
    assert not missing, f"CHANGELOG.md does not name: {'; '.join(missing)}"


def test_since_versions_are_known_versions():
    versions = set(changelog_sections(CHANGELOG.read_text(encoding="utf-8")))
    unknown = {v["since"] for v in load()["surface"].values()} - versions
    assert not unknown, f"'since' versions with no CHANGELOG entry: {unknown}"


def explicit_reexports(source: str) -> set[str]:
    """Names imported as ``from .m import X as X`` under ``if TYPE_CHECKING:``."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom):
                    found |= {a.name for a in stmt.names if a.asname == a.name}
    return found


def test_type_checkers_see_every_exported_name():
    """mypy --strict sees a lazily exported name only through an explicit re-export."""
    import schedlab

    lazy = set(schedlab.__all__) - {"__version__", "hookimpl"}
    source = Path(schedlab.__file__).read_text(encoding="utf-8")
    assert explicit_reexports(source) == lazy, (
        "core/__init__.py: each name of _LAZY needs one line "
        "'from .module import NAME as NAME' in its 'if TYPE_CHECKING:' block"
    )
    assert explicit_reexports("if TYPE_CHECKING:\n    from .a import b, c as c\n") == {"c"}


def test_the_checks_catch_a_change_and_an_unnamed_one():
    base = {"schedlab.read": "function (source)", "schedlab_readers": "hook ()"}
    snapshot = {
        "about": "",
        "surface": {k: {"text": v, "since": "0.1.0"} for k, v in base.items()},
        "history": [],
    }
    now = {"schedlab.read": "function (source, format=None)", "schedlab.write": "function ()"}
    assert diff(base, now) == [
        ("changed", "schedlab.read"), ("added", "schedlab.write"), ("removed", "schedlab_readers")
    ]
    new = updated(snapshot, now, "0.2.0")
    assert new["surface"]["schedlab.read"]["since"] == "0.1.0"
    assert new["surface"]["schedlab.write"]["since"] == "0.2.0"
    assert updated(new, now, "0.2.0") == new  # idempotent
    log = "# Changelog\n\n## [0.2.0] - Unreleased\n\n- `read` takes `format`; `write(path)`\n"
    assert unnamed_in_changelog(new["history"], log) == ["[0.2.0] removed `schedlab_readers`"]
    # a name inside a longer one does not count, nor a name in another version's entry
    log2 = "## [0.2.0]\n\n- `reader` `schedlab_readers_x` `write`\n\n## [0.1.0]\n\n`read`\n"
    assert len(unnamed_in_changelog(new["history"], log2)) == 2


def dumps(snapshot: dict[str, Any]) -> str:
    """JSON with one line per item and per history entry, so diffs read line by line."""

    def block(rows: list[str], open_: str, close: str) -> str:
        return open_ + ("\n  " + ",\n  ".join(rows) + "\n " if rows else "") + close

    def one(value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)

    history = [one(e) for e in snapshot["history"]]
    surface = [f"{one(k)}: {one(v)}" for k, v in sorted(snapshot["surface"].items())]
    return (
        "{\n"
        f' "about": {one(snapshot["about"])},\n'
        f' "history": {block(history, "[", "]")},\n'
        f' "surface": {block(surface, "{", "}")}\n'
        "}\n"
    )


def main(argv: list[str]) -> int:
    """``--update``: record the current surface, print the changes to name in CHANGELOG.md."""
    if argv != ["--update"]:
        print(__doc__)
        print(f"usage: {UPDATE}")
        return 2
    version = pyproject_version()
    old = load() if SNAPSHOT.exists() else {
        "about": f"Public surface of schedlab; regenerate with `{UPDATE}` "
        "(see the docstring of tests/test_public_surface.py).",
        "surface": {},
        "history": [],
    }
    first = not old["surface"]
    now = current()
    changes = [] if first else diff({k: v["text"] for k, v in old["surface"].items()}, now)
    new = updated(old, now, version)
    if first:
        new["history"] = []  # the first snapshot is the baseline, not a change
    SNAPSHOT.write_text(dumps(new), encoding="utf-8")
    print(f"wrote {SNAPSHOT.relative_to(ROOT)} ({len(now)} items)")
    if changes:
        print(f"name each of these in backticks in CHANGELOG.md's [{version}] entry:")
        for change, name in changes:
            print(f"  {change}: `{name.removeprefix('schedlab.')}`")
    missing = unnamed_in_changelog(new["history"], CHANGELOG.read_text(encoding="utf-8"))
    if missing:
        print(f"not yet named in CHANGELOG.md: {'; '.join(missing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
