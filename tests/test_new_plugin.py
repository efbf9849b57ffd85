"""``schedlab new-plugin``: the generated packages install and pass their own tests."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from click.testing import CliRunner
from schedlab.cli import cli
from schedlab.cli.new_plugin import KINDS, create_plugin, names_for, render
from schedlab.errors import UsageError


def _env() -> dict[str, str]:
    """The environment without schedlab's plugin controls (they would change what the
    generated tests see)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("SCHEDLAB_")}


def _run(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=_env(), capture_output=True, text=True,
                          timeout=300)


def _venv_on_top_of_this_environment(where: Path) -> Path:
    """A fresh virtual environment that also sees this interpreter's site-packages
    (schedlab, pytest, pip, setuptools), so nothing is downloaded or reinstalled.

    ``venv --system-site-packages`` would expose the *base* interpreter's packages,
    not those of the virtual environment the tests run in; a ``.pth`` file that
    adds this environment's site directories (and runs their ``.pth`` files, e.g.
    the editable install's import hook) does what is needed.
    """
    result = _run([sys.executable, "-m", "venv", "--without-pip", str(where)])
    assert result.returncode == 0, result.stderr
    python = where / ("Scripts" if os.name == "nt" else "bin") / "python"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    dirs = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    lines = "".join(f"import site; site.addsitedir({d!r})\n" for d in dict.fromkeys(dirs))
    Path(purelib.stdout.strip(), "_outer_environment.pth").write_text(lines, encoding="utf-8")
    return python


@pytest.mark.slow
def test_generated_packages_install_and_pass_their_tests(tmp_path):
    runner = CliRunner()
    packages = []
    for kind in KINDS:
        name = f"demo-{kind}"
        result = runner.invoke(cli, ["new-plugin", name, "--kind", kind, "--dest",
                                     str(tmp_path)])
        assert result.exit_code == 0, result.output
        packages.append(tmp_path / f"schedlab-{name}")
        assert f"created {packages[-1]}" in result.output
    python = _venv_on_top_of_this_environment(tmp_path / "venv")
    install = _run([str(python), "-m", "pip", "install", "-q", "--no-build-isolation",
                    "--no-index", *map(str, packages)])
    assert install.returncode == 0, install.stdout + install.stderr
    for package in packages:
        tests = _run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                     cwd=package)
        assert tests.returncode == 0, f"{package.name}:\n{tests.stdout[-3000:]}{tests.stderr}"
        assert " passed" in tests.stdout and "failed" not in tests.stdout
    listed = _run([str(python), "-m", "schedlab", "plugins", "--json"])
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    for kind in KINDS:
        row = rows[f"demo-{kind}"]
        assert (row["distribution"], row["version"], row["status"]) == (
            f"schedlab-demo-{kind}", "0.1.0", "loaded")
    assert rows["demo-format"]["hooks"] == ["schedlab_readers", "schedlab_writers"]
    assert rows["demo-policy"]["hooks"] == ["schedlab_policies"]
    assert rows["demo-metric"]["hooks"] == ["schedlab_metrics"]
    assert rows["demo-backfill"]["hooks"] == ["schedlab_backfills"]
    assert rows["demo-estimator"]["hooks"] == ["schedlab_estimators"]
    assert rows["demo-allocation"]["hooks"] == ["schedlab_allocations"]


def test_generated_layout(tmp_path):
    target = create_plugin("fair-share", "metric", tmp_path)
    assert target == tmp_path / "schedlab-fair-share"
    files = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
    assert files == [
        "README.md",
        "pyproject.toml",
        "src/schedlab_fair_share/__init__.py",
        "src/schedlab_fair_share/plugin.py",
        "tests/conftest.py",
        "tests/test_installed.py",
        "tests/test_plugin.py",
    ]
    pyproject = (target / "pyproject.toml").read_text(encoding="utf-8")
    assert 'name = "schedlab-fair-share"' in pyproject
    assert '[project.entry-points.schedlab]\nfair-share = "schedlab_fair_share.plugin"' in pyproject
    for path in target.rglob("*"):
        if path.is_file():
            assert "{{" not in path.read_text(encoding="utf-8"), path
    # Every generated module compiles.
    for path in target.rglob("*.py"):
        compile(path.read_text(encoding="utf-8"), str(path), "exec")


@pytest.mark.parametrize("kind", KINDS)
def test_generated_code_uses_only_the_public_api(kind, tmp_path):
    """Every kind compiles, and imports from schedlab only the names of
    ``schedlab.__all__`` (plus ``schedlab.testing`` in its tests)."""
    import ast

    import schedlab

    target = create_plugin(f"demo-{kind}", kind, tmp_path)
    for path in sorted(target.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        allowed = {"schedlab", "schedlab.testing"} if "tests" in path.parts else {"schedlab"}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules = [node.module or ""]
                if node.module == "schedlab":
                    private = {a.name for a in node.names} - set(schedlab.__all__)
                    assert not private, f"{path.name}: not public: {sorted(private)}"
            else:
                continue
            for module in modules:
                if module.split(".")[0] == "schedlab":
                    assert module in allowed, f"{path.name}: imports {module}"


@pytest.mark.parametrize("kind", ["backfill", "estimator", "allocation"])
def test_new_kinds_register_their_component(kind, tmp_path):
    """The components of the kinds added last load from the generated module
    without installing it (the slow test above installs every kind and runs its
    tests)."""
    import importlib.util

    from schedlab.testing import plugin_registry

    target = create_plugin(f"demo-{kind}", kind, tmp_path)
    path = target / "src" / f"schedlab_demo_{kind}" / "plugin.py"
    spec = importlib.util.spec_from_file_location(f"_scaffold_demo_{kind}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    registry = plugin_registry((f"demo-{kind}", module))
    component = registry.get(kind, f"demo-{kind}")
    assert component.provider == f"demo-{kind}"
    assert component.factory() is not None


def test_refuses_to_overwrite(tmp_path):
    create_plugin("mine", "policy", tmp_path)
    with pytest.raises(UsageError, match="already exists"):
        create_plugin("mine", "format", tmp_path)


@pytest.mark.parametrize("bad", ["My", "1abc", "a_b", "a--b", "-a", "schedlab-", "a b"])
def test_bad_names(bad):
    with pytest.raises(UsageError, match="plugin name"):
        names_for(bad)


def test_names():
    assert names_for("schedlab-lublin") == {
        "name": "lublin", "dist": "schedlab-lublin", "package": "schedlab_lublin",
        "title": "Lublin",
    }


def test_cli_errors_are_one_line(tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli, ["new-plugin", "x", "--kind", "scheduler"])
    assert result.exit_code == 2 and "Invalid value for '--kind'" in result.output
    from schedlab.cli import main

    with pytest.raises(SystemExit) as info:
        main(["new-plugin", "Bad", "--kind", "format", "--dest", str(tmp_path)])
    assert info.value.code == 2


def test_render_reports_a_missing_value():
    assert render("{{a}}-{{a}}", {"a": "x"}) == "x-x"
    with pytest.raises(UsageError, match=r"\{\{b\}\}"):
        render("{{a}} {{b}}", {"a": "x"})
