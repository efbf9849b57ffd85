"""``schedlab new-plugin NAME --kind KIND``: start a plugin package.

Kinds: ``format`` (reader and writer), ``policy`` (priority policy), ``backfill``
(backfilling strategy), ``estimator`` (run-time estimator), ``allocation`` (which
nodes a job gets on a platform) and ``metric``.

The package is rendered from the templates in ``schedlab/templates``: ``common/``
(``pyproject.toml`` with the entry point, README, package ``__init__``, test set-up)
plus the folder of the kind (``plugin.py`` with working hook implementations and
``tests/test_plugin.py`` using :mod:`schedlab.testing`). Template files end in
``.tmpl``; ``{{name}}``, ``{{package}}``, ``{{dist}}``, ``{{title}}``, ``{{kind}}``,
``{{summary}}`` and ``{{schedlab_version}}`` are replaced, and a path part
``__package__`` becomes the import package name. The generated tests pass as soon
as the package is installed (``pip install -e '.[test]' && pytest``).
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import click

from ..errors import UsageError
from .flags import FlagCommand

KINDS = ("format", "policy", "backfill", "estimator", "allocation", "metric")
_NAME_RE = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
_SUMMARIES = {
    "format": "The {name} trace format (reader and writer) for schedlab.",
    "policy": "The {name} scheduling policy for schedlab.",
    "backfill": "The {name} backfilling strategy for schedlab.",
    "estimator": "The {name} run-time estimator for schedlab.",
    "allocation": "The {name} node allocation policy for schedlab.",
    "metric": "The {name} metric for schedlab.",
}


def names_for(name: str) -> dict[str, str]:
    """The placeholders of plugin ``name``: distribution ``schedlab-NAME``, import
    package ``schedlab_NAME`` (a leading ``schedlab-`` in ``name`` is not doubled)."""
    if not _NAME_RE.match(name):
        raise UsageError(
            f"plugin name {name!r}: use lower-case letters, digits and single hyphens, "
            "starting with a letter (e.g. 'mytrace' or 'fair-share')"
        )
    base = name.removeprefix("schedlab-")
    if not base:
        raise UsageError("plugin name: give a name after 'schedlab-'")
    return {
        "name": base,
        "dist": f"schedlab-{base}",
        "package": "schedlab_" + base.replace("-", "_"),
        "title": " ".join(part.capitalize() for part in base.split("-")),
    }


#: The component kinds a generated package of each kind provides (named NAME).
_PROVIDES = {"format": ("reader", "writer")}


def _refuse_builtin(name: str, kind: str) -> None:
    """A :class:`UsageError` when ``name`` is a built-in plugin's entry-point name, or
    a built-in component (or alias) of a kind the package would provide: installed,
    the package would be disabled (built-ins win), and its generated tests fail."""
    from ..registry import build_registry
    from ..testing import builtin_entry_points

    entry_points = builtin_entry_points()
    if any(ep.name == name for ep in entry_points):
        clash = f"the built-in plugin {name!r}"
    else:
        registry = build_registry(entry_points=entry_points, strict=True)
        found = [k for k in _PROVIDES.get(kind, (kind,)) if registry.find(k, name) is not None]
        if not found:
            return
        clash = f"the built-in {found[0]} {name!r}"
    raise UsageError(
        f"plugin name {name!r}: {clash} has that name, and built-ins win (an installed "
        "plugin of that name would be disabled); choose another name"
    )


def _template_files(kind: str) -> list[tuple[Path, str]]:
    """``(relative output path, template text)`` of every file, common ones first."""
    root = resources.files("schedlab") / "templates"
    out: list[tuple[Path, str]] = []

    def walk(node: resources.abc.Traversable, rel: Path) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            if child.name == "__pycache__":
                continue
            if child.is_dir():
                walk(child, rel / child.name)
            elif child.name.endswith(".tmpl"):
                out.append((rel / child.name.removesuffix(".tmpl"), child.read_text("utf-8")))

    for folder in ("common", kind):
        walk(root / folder, Path())
    return out


def render(text: str, values: dict[str, str]) -> str:
    """Replace every ``{{key}}`` of ``values`` in ``text``."""
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    leftover = re.search(r"\{\{\s*[a-z_]+\s*\}\}", text)
    if leftover:
        raise UsageError(f"template placeholder {leftover.group(0)} has no value")
    return text


def create_plugin(name: str, kind: str, dest: str | Path = ".") -> Path:
    """Write a new plugin package for ``name`` of ``kind`` under ``dest`` and return
    its folder (``dest/schedlab-NAME``). Refuses to overwrite an existing folder."""
    if kind not in KINDS:
        raise UsageError(f"unknown plugin kind {kind!r} (choose from {', '.join(KINDS)})")
    from .. import __version__

    values = names_for(name)
    _refuse_builtin(values["name"], kind)
    values.update(
        kind=kind,
        summary=_SUMMARIES[kind].format(name=values["name"]),
        schedlab_version=__version__,
    )
    target = Path(dest) / values["dist"]
    if target.exists() and any(target.iterdir()):
        raise UsageError(f"{target}: already exists and is not empty")
    for rel, text in _template_files(kind):
        path = target / Path(*(values["package"] if p == "__package__" else p for p in rel.parts))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(text, values), encoding="utf-8")
    return target


@click.command("new-plugin", cls=FlagCommand)
@click.argument("name")
@click.option(
    "--kind",
    type=click.Choice(KINDS),
    required=True,
    help=(
        "What the plugin provides: a trace format, a scheduling policy, a backfilling "
        "strategy, a run-time estimator, a node allocation policy or a metric."
    ),
)
@click.option(
    "--dest",
    type=click.Path(file_okay=False),
    default=".",
    show_default=True,
    help="Folder to create the package in.",
)
def command(name: str, kind: str, dest: str) -> None:
    """Create a plugin package NAME (distribution schedlab-NAME) ready to install.

    It has a pyproject.toml with the entry point, working hook implementations and
    tests that pass right away:

    \b
        schedlab new-plugin mytrace --kind format
        cd schedlab-mytrace && pip install -e '.[test]' && pytest
    """
    from .flags import check_outputs, refuse_file_parent

    # "-", a path through a regular file, a folder that cannot be written: one line
    # naming --dest before anything is written (docs/cli.md)
    check_outputs([("--dest", dest)], folders=["--dest"])
    refuse_file_parent(dest, "--dest", folder=True)
    target = create_plugin(name, kind, dest)
    values = names_for(name)
    click.echo(f"created {target} ({kind} plugin {values['name']!r}, package {values['package']})")
    click.echo(f"next: cd {target} && pip install -e '.[test]' && pytest")
