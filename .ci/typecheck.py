"""Type-check the whole `schedlab` package: core/ and the built-in plugins.

Usage (from anywhere; prints nothing and exits 0 when clean)::

    .venv/bin/python .ci/typecheck.py [extra mypy options]

The repository folders map onto one import package (pyproject.toml,
[tool.setuptools.package-dir]): core/ is `schedlab`, formats/ `schedlab.formats`,
policies/ `schedlab.policies`, metrics/ `schedlab.metrics`. mypy cannot follow the
editable install's import hook, so this script builds that layout as a tree of symbolic
links under .mypy_cache/schedlab/src (ignored by git, rebuilt on every run), runs
`mypy -p schedlab` there, and writes the reported paths back as repository paths
(`.mypy_cache/schedlab/src/schedlab/formats/swf/parse.py` -> `formats/swf/parse.py`,
`.../src/schedlab/model.py` -> `core/model.py`). A plugin's `from schedlab.model import
Job` is thus checked against core's real types.

The configuration is [tool.mypy] of pyproject.toml, which `.venv/bin/mypy core` also
reads (that quicker check sees core/ as the package `core`). For this run the script
renames the override patterns `core` / `core.*` to `schedlab` / `schedlab.*`, stops
ignoring missing `schedlab` modules (they all exist in this layout), drops `files` and
turns `warn_unused_configs` on, so a stale override fails here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mypy_cache" / "schedlab"
PLUGIN_FOLDERS = ("formats", "policies", "metrics")


def build_tree(src: Path) -> None:
    """Link core/'s entries and the plugin folders into src/schedlab."""
    if src.exists():
        shutil.rmtree(src)
    package = src / "schedlab"
    package.mkdir(parents=True)
    for entry in sorted((ROOT / "core").iterdir()):
        if entry.name == "__pycache__":
            continue
        if entry.name in PLUGIN_FOLDERS:
            sys.exit(f"typecheck: core/{entry.name} clashes with the {entry.name}/ folder")
        (package / entry.name).symlink_to(entry)
    for folder in PLUGIN_FOLDERS:
        (package / folder).symlink_to(ROOT / folder)


def rename_module(pattern: str) -> str:
    """`core.x` (checked as the folder core/) is `schedlab.x` in the package layout."""
    if pattern == "core" or pattern.startswith("core."):
        return "schedlab" + pattern[len("core") :]
    return pattern


def write_config(path: Path) -> None:
    """Write pyproject.toml's [tool.mypy] for the package layout (see the module doc)."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        config = dict(tomllib.load(f)["tool"]["mypy"])
    overrides = config.pop("overrides", [])
    config.pop("files", None)
    config["warn_unused_configs"] = True
    lines = ["[tool.mypy]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in config.items()]
    for override in overrides:
        override = dict(override)
        modules = override["module"]
        modules = [modules] if isinstance(modules, str) else modules
        modules = [rename_module(m) for m in modules]
        if override.get("ignore_missing_imports"):
            # The package itself is found in this layout: a missing module must be an error.
            modules = [m for m in modules if m not in ("schedlab", "schedlab.*")]
            if not modules:
                continue
        override["module"] = modules
        lines.append("[[tool.mypy.overrides]]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in override.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    """Build the tree, run mypy on it and print its findings with repository paths."""
    WORK.parent.mkdir(exist_ok=True)
    ignore = WORK.parent / ".gitignore"  # what mypy writes into a cache folder it creates
    if not ignore.exists():
        ignore.write_text("# Automatically created by mypy\n*\n", encoding="utf-8")
    src = WORK / "src"
    build_tree(src)
    config = WORK / "mypy.toml"
    write_config(config)
    command = [sys.executable, "-m", "mypy", "--config-file", str(config)]
    command += ["--cache-dir", str(WORK / "cache"), "--no-error-summary"]
    command += [*sys.argv[1:], "-p", "schedlab"]
    env = dict(os.environ, MYPYPATH=str(src))
    result = subprocess.run(command, cwd=src, env=env, capture_output=True, text=True)
    folders = "|".join(PLUGIN_FOLDERS)
    plugin = re.compile(rf"^schedlab/({folders})/", re.MULTILINE)
    for stream, text in ((sys.stdout, result.stdout), (sys.stderr, result.stderr)):
        text = text.replace(str(config), "pyproject.toml")
        text = plugin.sub(r"\1/", text)
        text = re.sub(r"^schedlab/", "core/", text, flags=re.MULTILINE)
        stream.write(text)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
