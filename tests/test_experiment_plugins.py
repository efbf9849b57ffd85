"""``schedlab experiment NAME`` comes from plugins; the experiment API is public."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import click
import pytest
import schedlab
import schedlab.experiment as experiment_api
from click.testing import CliRunner
from schedlab import CommandSpec, UsageError, hookimpl
from schedlab.cli import cli, main
from schedlab.testing import plugin_registry, using_registry

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "policies" / "psp_experiment"


class HelloExperiment:
    """A third-party experiment: ``schedlab experiment hello``."""

    @staticmethod
    def _load() -> click.Command:
        @click.command("hello")
        @click.option("--name", default="world")
        def hello(name: str) -> None:
            """Greet NAME from an experiment plugin."""
            click.echo(f"hello {name} from an experiment")

        return hello

    @hookimpl
    def schedlab_cli_commands(self) -> list[CommandSpec]:
        return [
            CommandSpec(name=f"{experiment_api.COMMAND_PREFIX}hello", load=self._load),
            # A command without the prefix is a top-level command, not an experiment.
            CommandSpec(name="hello-top", load=self._load),
        ]


class BrokenExperiment:
    """An experiment whose load() does not return a click command."""

    @hookimpl
    def schedlab_cli_commands(self) -> list[CommandSpec]:
        return [CommandSpec(name="experiment.broken", load=lambda: "not a command")]


def _invoke(registry, args: list[str]):
    with using_registry(registry):
        return CliRunner().invoke(cli, args)


def test_a_plugin_adds_an_experiment_next_to_the_builtin_one():
    registry = plugin_registry(("hello-plugin", HelloExperiment()))
    result = _invoke(registry, ["experiment", "hello", "--name", "you"])
    assert result.exit_code == 0, result.output
    assert result.output == "hello you from an experiment\n"
    listing = _invoke(registry, ["experiment", "--help"])
    assert listing.exit_code == 0, listing.output
    commands = listing.output.split("Commands:")[1].split()
    assert "hello" in commands and "psp" in commands
    assert "hello-top" not in commands


def test_the_psp_experiment_is_a_builtin_plugin_command(registry):
    spec = registry.get("command", "experiment.psp")
    assert spec.provider == "psp-experiment"
    assert spec.load().name == "psp"


def test_without_experiment_plugins_the_group_is_empty_and_says_why():
    registry = plugin_registry(builtins=False)
    listing = _invoke(registry, ["experiment", "--help"])
    assert listing.exit_code == 0
    assert "No experiment is installed" in listing.output
    with using_registry(registry), pytest.raises(SystemExit) as info:
        main(["experiment", "psp"])
    assert info.value.code == 2


def test_an_experiment_that_is_not_a_click_command_is_a_one_line_plugin_error(capsys):
    registry = plugin_registry(("broken-plugin", BrokenExperiment()), builtins=False)
    with using_registry(registry), pytest.raises(SystemExit) as info:
        main(["experiment", "broken"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "broken-plugin" in err and "experiment.broken" in err and "click.Command" in err


# ----------------------------------------------------------------- public API


def test_every_public_name_of_schedlab_experiment_resolves():
    assert sorted(experiment_api.__all__) == sorted(["COMMAND_PREFIX", *experiment_api._LAZY])
    for name in experiment_api.__all__:
        assert getattr(experiment_api, name) is not None, name
    with pytest.raises(AttributeError):
        experiment_api.psp_cells  # noqa: B018


def _schedlab_imports(path: Path) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every import of a ``schedlab`` module in ``path``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "schedlab":
                out.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "schedlab":
                    out.append((alias.name, []))
    return out


def test_the_psp_experiment_plugin_imports_only_the_public_api():
    public = {"schedlab": set(schedlab.__all__), "schedlab.experiment": set(experiment_api.__all__)}
    modules = sorted(PLUGIN.glob("*.py"))
    assert len(modules) >= 5
    seen = 0
    for path in modules:
        for module, names in _schedlab_imports(path):
            assert module in public, f"{path.name} imports {module}"
            assert set(names) <= public[module], f"{path.name}: {set(names) - public[module]}"
            seen += 1
    assert seen >= 5  # the check looked at real imports


def test_registering_the_plugin_does_not_load_the_experiment_code():
    code = (
        "import sys, schedlab.policies.psp_experiment as p\n"
        "p.schedlab_cli_commands()\n"
        "loaded = [m for m in sys.modules if m.startswith(('schedlab.experiment.', "
        "'schedlab.policies.psp_experiment.', 'matplotlib', 'rich'))]\n"
        "print(loaded)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


# ----------------------------------------------------------------- figures


def test_grouped_bars_is_deterministic_and_leaves_gaps(tmp_path):
    values = {"X": {"s1": 3.0, "s2": None}, "Y": {"s1": 1.0, "s2": 2.0}, "Z": {}}
    reference = {"X": {"s2": 4.0}}
    first = experiment_api.grouped_bars(
        values,
        tmp_path / "a",
        series=("s1", "s2"),
        groups=("Y", "X", "W"),
        reference=reference,
        formats=("svg", "png"),
    )
    again = experiment_api.grouped_bars(
        values,
        tmp_path / "b",
        series=("s1", "s2"),
        groups=("Y", "X", "W"),
        reference=reference,
        formats=("svg", "png"),
    )
    assert [p.name for p in first] == ["a.svg", "a.png"]
    for one, two in zip(first, again, strict=True):
        assert one.read_bytes() == two.read_bytes()
    # Without the reference the picture changes (the marker is drawn).
    plain = experiment_api.grouped_bars(
        values, tmp_path / "c", series=("s1", "s2"), groups=("Y", "X", "W"), formats=("svg",)
    )
    assert plain[0].read_bytes() != first[0].read_bytes()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"series": ()}, "at least one series"),
        ({"series": ("a", "b"), "colours": ("#000000",)}, "2 series but 1 colours"),
    ],
)
def test_grouped_bars_rejects_bad_layouts(tmp_path, kwargs, message):
    with pytest.raises(UsageError, match=message):
        experiment_api.grouped_bars({"g": {"a": 1.0}}, tmp_path / "f", **kwargs)
