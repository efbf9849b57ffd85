"""The wheel holds exactly the modules of the folder tree, and the CLI starts lean."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: folder -> import package it becomes (pyproject's package-dir)
FOLDERS = {"core": "schedlab", "formats": "schedlab/formats", "policies": "schedlab/policies",
           "metrics": "schedlab/metrics"}


def _tree_modules() -> set[str]:
    found = set()
    for folder, package in FOLDERS.items():
        base = ROOT / folder
        for path in base.rglob("*.py"):
            rel = path.relative_to(base)
            if "__pycache__" in rel.parts or rel.parts[0] == "templates":
                continue
            if folder == "core" and rel.parts[0] in {"formats", "policies", "metrics"}:
                continue
            found.add(f"{package}/{rel.as_posix()}")
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    # Build from a clean copy of the sources: a stale build/ folder in the working
    # tree would otherwise leak deleted modules into the wheel.
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, src / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(src)],
        check=True,
        capture_output=True,
    )
    (path,) = out.glob("schedlab-*.whl")
    return zipfile.ZipFile(path)


def test_wheel_modules_equal_the_folder_tree(wheel):
    in_wheel = {n for n in wheel.namelist() if n.endswith(".py") and n.startswith("schedlab/")}
    in_wheel = {n for n in in_wheel if "/templates/" not in n}
    tree = _tree_modules()
    assert tree - in_wheel == set(), "folders missing from [tool.setuptools] packages"
    assert in_wheel - tree == set(), "modules in the wheel that are not in the tree"


def test_wheel_declares_the_builtin_entry_points(wheel):
    (name,) = [n for n in wheel.namelist() if n.endswith("entry_points.txt")]
    text = wheel.read(name).decode()
    assert "[schedlab]" in text and "swf = schedlab.formats.swf" in text
    assert "schedlab = schedlab.cli:main" in text


def test_help_imports_no_plugin_code():
    code = (
        "import sys\n"
        "from schedlab.cli import cli\n"
        "try:\n"
        "    cli.main(args=['--help'], prog_name='schedlab', standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        "mods = sorted(m for m in sys.modules if m.startswith('schedlab'))\n"
        "print(' '.join(mods))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = out.stdout.split("\n")[-2].split()
    assert "schedlab.registry" not in loaded
    assert not [m for m in loaded if m.startswith(("schedlab.formats", "schedlab.policies",
                                                    "schedlab.metrics", "schedlab.sim"))]
    assert "numpy" not in out.stdout
