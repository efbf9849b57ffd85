"""Core names no plugin: no component name of a built-in plugin is hard-coded in core.

Built-in plugins are registered like third-party ones, so core must work whatever
plugins are installed: it may not refer to a policy, generator, format, command ...
by its name. The check reads every module of ``core/`` (not its templates, which
are a plugin skeleton's text) and looks at the string constants of the code:
docstrings, and prose that merely quotes a name as an example, are not component
names and are not checked. A constant that *is* a name or alias of a built-in
component (or of a built-in plugin), or a spec starting with one (``NAME:...``,
``NAME+...``), is a hard-coded plugin name.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "core"

#: Names core may use anywhere, and why. Keep this small: a new entry needs a reason
#: of the same kind, not "it was there".
ALLOWED_NAMES: dict[str, str] = {
    # Documented defaults of schedlab.simulate, the sweep cells
    # (schedlab.experiment.DEFAULT_POLICY / DEFAULT_BACKFILL) and the simulate/compare
    # commands. They are names resolved through the registry when used, never imports:
    # with another registry they fail with the usual unknown-name error.
    "fcfs": "default priority policy, resolved by name through the registry",
    "easy": "default backfilling, resolved by name through the registry",
    "requested": "default run-time estimator, resolved by name through the registry",
    "first-fit": "default allocation policy on a platform, resolved through the registry",
    # The backfilling strategy "none" shares its name with the English word, which
    # core uses for plain values ("no engine", "nothing excluded").
    "none": "a plain word as well as a backfilling name",
    # schedlab.sim.protocols.as_backfill serves the deprecated 0.1 protocol (an object
    # with only reservation_depth) with the registry's depth strategy, until 0.3.
    "depth": "the deprecated reservation_depth shim, resolved through the registry",
    # schedlab.sim.correction names its stepwise rule after the paper's first author,
    # as the option spelling does (correction=tsafrir); never resolved as
    # a plugin (it is also an alias of the user-average estimator).
    "tsafrir": "a prediction-correction rule's name as well as an estimator alias",
    # The sweep file's key of the estimator axis (SweepConfig.estimators), never
    # resolved as a plugin (an entry point of the same name registers the estimators).
    "estimators": "the sweep file's key of the estimator axis, not the entry point",
}

#: Files where the names of the built-in *metrics* still appear, and why. These are
#: known exceptions (the layout of metric tables and the comparison figure names the
#: built-in metrics); they are outside the experiment code and listed so that the
#: pattern cannot spread to other files unnoticed.
METRIC_NAME_FILES: dict[str, str] = {
    "core/measure.py": "PREFERRED_ORDER: the column order of metric reports",
    "core/comparison.py": "the comparison table's columns and figure panels",
    "core/cli/compare.py": "--plot adds the two metrics the figure draws",
    # A folder (being refactored): its run statistics have a key named like a metric.
    "core/sim/": "'makespan' is a key of the run statistics, not the metric",
    "core/frames.py": "a result's HTML shows the 'makespan' key of its run statistics",
    "core/report_charts.py": "the Gantt chart's hover labels a job's own times ('wait')",
}


def _docstring_nodes(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                found.add(id(body[0].value))
    return found


def named_components(source: str, names: Iterable[str]) -> list[tuple[int, str]]:
    """``(line, constant)`` for each string constant of ``source`` (docstrings
    excepted) that is one of ``names`` or a spec starting with one."""
    names = set(names)
    tree = ast.parse(source)
    docstrings = _docstring_nodes(tree)
    hits = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            head = re.split(r"[:+]", node.value, maxsplit=1)[0]
            if node.value in names or head in names:
                hits.append((node.lineno, node.value))
    return sorted(hits)


def core_modules() -> list[Path]:
    """Every Python module of core, templates excepted."""
    return sorted(p for p in CORE.rglob("*.py") if "templates" not in p.relative_to(CORE).parts)


@pytest.fixture(scope="module")
def builtin_names() -> dict[str, set[str]]:
    """``{kind: names and aliases}`` of schedlab's own plugins, plus ``"plugin"``:
    the entry-point names."""
    from importlib import metadata

    from schedlab.plugin_types import COMPONENT_KINDS
    from schedlab.registry import build_registry

    own = [
        ep
        for ep in metadata.entry_points(group="schedlab")
        if ep.dist is not None and ep.dist.metadata["Name"] == "schedlab"
    ]
    registry = build_registry(entry_points=own, strict=True)
    out = {
        kind: {label for c in registry.all(kind) for label in (c.name, *c.aliases)}
        for kind in COMPONENT_KINDS
    }
    out["plugin"] = {ep.name for ep in own}
    return out


def test_the_scanner_finds_names_and_specs_but_not_prose():
    source = '''
"""Module docstring: policy="psp" is only an example here."""
POLICY = "psp"
SPEC = "psp-fing:scenario=CF"
PAIR = "psp+easy"
HELP = "a generator spec such as psp-fing:scenario=CF"
def f():
    """psp"""
    return {"psp": 1}
'''
    assert named_components(source, {"psp", "psp-fing"}) == [
        (3, "psp"),
        (4, "psp-fing:scenario=CF"),
        (5, "psp+easy"),
        (9, "psp"),
    ]


def test_the_names_cover_the_psp_experiment(builtin_names):
    # The names this test was written for must be among those checked.
    assert {"psp", "penalty"} <= builtin_names["policy"]
    assert "psp-fing" in builtin_names["generator"]
    assert "experiment.psp" in builtin_names["command"]
    assert {"psp", "psp-experiment", "psp-fing"} <= builtin_names["plugin"]


def test_core_code_names_no_builtin_plugin(builtin_names):
    every = set().union(*builtin_names.values()) - set(ALLOWED_NAMES)
    # Where metric names are excepted, so are plugins named like their metric
    # ("fairness").
    without_metrics = every - builtin_names["metric"]
    found = []
    for path in core_modules():
        relative = path.relative_to(ROOT).as_posix()
        excepted = any(relative.startswith(prefix) for prefix in METRIC_NAME_FILES)
        names = without_metrics if excepted else every
        for line, value in named_components(path.read_text(encoding="utf-8"), names):
            found.append(f"{relative}:{line}: {value!r}")
    assert found == [], "core hard-codes plugin names:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "relative",
    [
        "core/cli/experiment.py",
        *sorted(p.relative_to(ROOT).as_posix() for p in (CORE / "experiment").glob("*.py")),
    ],
)
def test_experiment_machinery_mentions_no_psp_even_in_prose(relative):
    # The generic experiment code and its command group: not even an example may
    # name the PSP study or its components (grep-style, docstrings included). The
    # two default names are allowed on their one documented line each.
    text = (ROOT / relative).read_text(encoding="utf-8")
    assert not re.search(r"(?i)\bpsp\b|psp-fing|cluster fing", text), relative
    for match in re.finditer(r"\b(fcfs|easy)\b", text):
        line = text[: match.start()].count("\n") + 1
        assert text.splitlines()[line - 1].startswith(("DEFAULT_POLICY =", "DEFAULT_BACKFILL =")), (
            f"{relative}:{line}"
        )
