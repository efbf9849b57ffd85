"""``schedlab plugins``: what is installed, where it comes from, and what failed."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any, TextIO

import click

from ..compat import SchedlabDeprecationWarning
from ..errors import SchedlabWarning
from .flags import FlagCommand
from .json_output import json_text

_HOOK_PREFIX = "schedlab_"


@contextlib.contextmanager
def warning_lines() -> Iterator[None]:
    """Inside the block, schedlab's warnings (:class:`~schedlab.errors.SchedlabWarning`,
    e.g. a plugin disabled because it is faulty, and
    :class:`~schedlab.compat.SchedlabDeprecationWarning`, e.g. an old option
    spelling) print as one line on stderr, ``schedlab: warning: MESSAGE``, instead of
    Python's two-line format with a file and line of schedlab's source. Other
    warnings keep Python's format. Which warnings show at all is still decided by the
    ``warnings`` filters (``-W``, ``PYTHONWARNINGS``)."""
    previous = warnings.showwarning

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if issubclass(category, (SchedlabWarning, SchedlabDeprecationWarning)):
            click.echo(f"schedlab: warning: {message}", err=True)
        else:
            previous(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = previous


def _component_text(comp: dict[str, Any]) -> str:
    """``reader swf (alias, ...)``."""
    aliases = f" ({', '.join(comp['aliases'])})" if comp["aliases"] else ""
    return f"{comp['kind']} {comp['name']}{aliases}"


def _hook_lines(row: dict[str, Any]) -> list[tuple[str, str]]:
    """The (hook, component) cells of one plugin's lines in the table: each hook
    (without the common ``schedlab_`` prefix) on the line of its first component, its
    other components on the lines below with an empty hook cell; a hook that provides
    no component (``converter_hooks``) gets a line of its own. Each line is a row of
    the table, so a long cell that wraps never shifts a hook beside another hook's
    component."""
    from ..plugin_types import COMPONENT_KINDS

    hook_of = {kind: hook for kind, (hook, _) in COMPONENT_KINDS.items()}
    by_hook: dict[str, list[str]] = {hook: [] for hook in row["hooks"]}
    for comp in row["components"]:
        by_hook.setdefault(hook_of.get(comp["kind"], ""), []).append(_component_text(comp))
    lines: list[tuple[str, str]] = []
    for hook, comps in by_hook.items():
        label = hook.removeprefix(_HOOK_PREFIX)
        for index, text in enumerate(comps or [""]):
            lines.append((label if index == 0 else "", text))
    return lines


def _type_name(kind: Any) -> str:
    """``int``, ``float``, ``str``, ``bool``, or a converter's name (``positive int``
    for a function ``_positive_int``)."""
    name = str(getattr(kind, "__name__", None) or type(kind).__name__)
    return name.strip("_").replace("_", " ") or name


#: The table's default cell of an option that has none (no value reads back as it).
NO_DEFAULT = "(not set)"


def _default_text(value: Any) -> str:
    """A default as it would be typed in the option (``true``, ``16``, ``inf``, a
    list as ``0.2/0.4/0.6/0.8``); :data:`NO_DEFAULT` when there is none."""
    if value is None:
        return NO_DEFAULT
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "/".join(_default_text(item) for item in value)
    return str(value)


def _default_json(value: Any) -> Any:
    """A default for ``--json``: ``null`` when there is none, JSON booleans and
    numbers as such (an infinite one as ``"inf"``, as every ``--json`` writes it),
    a list as a list, anything else as the text typed in the option."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_default_json(item) for item in value]
    if isinstance(value, (int, float)):
        return value  # json_text writes inf and nan as text
    if hasattr(value, "item"):  # a numpy scalar
        return _default_json(value.item())
    return str(value)


def _status_line(row: dict[str, Any]) -> str:
    """``failed: NAME (module, from DIST VERSION): reason`` for a plugin not loaded."""
    dist = f"{row['distribution']} {row['version']}".strip()
    line = f"{row['status']}: {row['name']} ({row['module']}, from {dist})"
    return f"{line}: {row['error']}" if row["error"] else line


def component_details(name: str, kind: str | None = None) -> list[dict[str, Any]]:
    """Every installed component called ``name`` (or with that alias), of ``kind``
    when given, else of every kind; when none is, every component of the plugin
    called ``name``. Each is a JSON-ready dict: kind, name, aliases, plugin,
    description and options (name, type, default, choices, help). A plugin called
    ``name`` that failed, was disabled or is blocked gives its rows of
    ``schedlab plugins --json`` instead (they have a ``status``)."""
    from ..api import _plugin_dict
    from ..errors import UsageError
    from ..plugin_types import COMPONENT_KINDS
    from ..registry import get_registry

    registry = get_registry()
    kinds = [kind] if kind else list(COMPONENT_KINDS)
    found = [(k, registry.find(k, name)) for k in kinds]
    comps = [(k, c) for k, c in found if c is not None]
    if not comps and kind is None:
        infos = [i for i in registry.plugin_infos() if i.name == name]
        if any(i.status == "loaded" for i in infos):
            comps = list(registry.components_of(name))
        elif infos:
            return [_plugin_dict(i, registry) for i in infos]
    if not comps:
        what = f"{kind} " if kind else "component or plugin "
        raise UsageError(f"no {what}named {name!r} (`schedlab plugins` lists what is installed)")
    out = []
    for k, comp in comps:
        out.append(
            {
                "kind": k,
                "name": comp.name,
                "aliases": list(comp.aliases),
                "plugin": comp.provider,
                "description": comp.description,
                "options": [
                    {
                        "name": o.name,
                        "type": _type_name(o.type),
                        "default": _default_json(o.default),
                        "choices": None if o.choices is None else [str(c) for c in o.choices],
                        "help": o.help,
                    }
                    for o in comp.options
                ],
            }
        )
    return out


_OPTION_FLAGS = {
    "reader": "-R",
    "writer": "-W",
    "policy": "-P",
    "backfill": "-B",
    "estimator": "-E",
    "metric": "-M",
    "generator": "NAME:KEY=VALUE,...",
    "allocation": "--allocation-option",
}


def _print_details(details: list[dict[str, Any]]) -> None:
    from rich import box
    from rich.table import Table

    from .metrics import wide_console

    console = wide_console()
    for index, comp in enumerate(details):
        if index:
            console.print()
        aliases = f" (aliases: {', '.join(comp['aliases'])})" if comp["aliases"] else ""
        plugin = f", from plugin {comp['plugin']}" if comp["plugin"] else ""
        console.print(
            f"{comp['kind']} {comp['name']}{aliases}{plugin}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        if comp["description"]:
            console.print(f"  {comp['description']}", markup=False, highlight=False, soft_wrap=True)
        if not comp["options"]:
            console.print("  options: none", highlight=False)
            continue
        flag = _OPTION_FLAGS.get(comp["kind"])
        how = f" (given as {flag} KEY=VALUE)" if flag and flag.startswith("-") else ""
        if comp["kind"] == "generator":
            how = f" (given as {flag})"
        console.print(f"  options{how}:", markup=False, highlight=False)
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 1, 0, 2))
        table.add_column("option", no_wrap=True)
        table.add_column("type", no_wrap=True)
        table.add_column("default", no_wrap=True)
        table.add_column("description", overflow="fold")
        for opt in comp["options"]:
            text = opt["help"]
            if opt["choices"]:
                text = f"{text} (one of: {', '.join(opt['choices'])})".strip()
            table.add_row(opt["name"], opt["type"], _default_text(opt["default"]), text)
        console.print(table)


@click.command("plugins", cls=FlagCommand)
@click.argument("name", required=False)
@click.option(
    "--kind",
    type=click.Choice(
        (
            "reader",
            "writer",
            "policy",
            "backfill",
            "estimator",
            "allocation",
            "metric",
            "statistic",
            "generator",
            "command",
        )
    ),
    help="With NAME: only the component of this kind (e.g. the swf reader, not writer).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def command(name: str | None, kind: str | None, as_json: bool) -> None:
    """List every plugin with its distribution, version, hooks and components; with
    NAME, show the component(s) of that name (or every component of the plugin of
    that name): description, and options with their types and defaults.

    Plugins that failed (could not be imported, or misbehaved) or were disabled (a
    name clash) are listed with the reason; blocked ones (see
    SCHEDLAB_BLOCK_PLUGINS / SCHEDLAB_ALLOW_PLUGINS /
    SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD) are listed as blocked.
    """
    from ..api import plugins
    from ..registry import PluginLoadWarning

    if name is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PluginLoadWarning)  # NAME's status says it
            details = component_details(name, kind)
        if details and "status" in details[0]:  # a plugin that is not loaded
            if as_json:
                click.echo(json_text(details, sort_keys=True))
            else:
                for row in details:
                    click.echo(_status_line(row))
            return
        if as_json:
            click.echo(json_text(details))
        else:
            _print_details(details)
        return
    if kind is not None:
        raise click.UsageError("--kind needs a NAME")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginLoadWarning)  # shown in the table instead
        rows = plugins()
    if as_json:
        click.echo(json_text(rows, sort_keys=True))
        return
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table(title="schedlab plugins", box=box.SIMPLE_HEAD, title_justify="left")
    # Names, distributions and versions are never cut: they are what users grep for.
    table.add_column("plugin", no_wrap=True)
    table.add_column("distribution", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("hooks", overflow="fold")
    table.add_column("provides", overflow="fold", ratio=1)
    for row in rows:
        dist = f"{row['distribution']} {row['version']}".strip()
        first = [row["name"], dist, row["status"]]
        for hook, provides in _hook_lines(row) or [("", "")]:
            table.add_row(*first, hook, provides)
            first = ["", "", ""]
    console = Console()
    if not console.is_terminal:  # piped or captured: no screen width to fit
        console = Console(width=160)
    console.print(table)
    failed = [row for row in rows if row["status"] in ("failed", "disabled")]
    blocked = [row["name"] for row in rows if row["status"] == "blocked"]
    for row in failed:
        console.print(
            _status_line(row),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    if blocked:
        console.print(
            f"blocked: {', '.join(blocked)} (by SCHEDLAB_BLOCK_PLUGINS, "
            "SCHEDLAB_ALLOW_PLUGINS or SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
