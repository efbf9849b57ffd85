"""``schedlab plugins``: what is installed, where it comes from, and what failed."""

from __future__ import annotations

import json
from typing import Any

import click

_HOOK_PREFIX = "schedlab_"


def _provides(row: dict[str, Any]) -> str:
    """One line per component: ``reader swf (alias, ...)``."""
    lines = []
    for comp in row["components"]:
        aliases = f" ({', '.join(comp['aliases'])})" if comp["aliases"] else ""
        lines.append(f"{comp['kind']} {comp['name']}{aliases}")
    return "\n".join(lines)


def _hooks(row: dict[str, Any]) -> str:
    """One line per implemented hook, without the common ``schedlab_`` prefix."""
    return "\n".join(h.removeprefix(_HOOK_PREFIX) for h in row["hooks"])


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def command(as_json: bool) -> None:
    """List every plugin with its distribution, version, hooks and components.

    Plugins that failed to load are listed with the reason; blocked ones (see
    SCHEDLAB_BLOCK_PLUGINS / SCHEDLAB_ALLOW_PLUGINS /
    SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD) are listed as blocked.
    """
    import warnings

    from ..api import plugins
    from ..registry import PluginLoadWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginLoadWarning)  # shown in the table instead
        rows = plugins()
    if as_json:
        click.echo(json.dumps(rows, indent=2, sort_keys=True))
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
        table.add_row(row["name"], dist, row["status"], _hooks(row), _provides(row))
    console = Console()
    if not console.is_terminal:  # piped or captured: no screen width to fit
        console = Console(width=160)
    console.print(table)
    failed = [row for row in rows if row["status"] == "failed"]
    blocked = [row["name"] for row in rows if row["status"] == "blocked"]
    for row in failed:
        dist = f"{row['distribution']} {row['version']}".strip()
        console.print(
            f"failed: {row['name']} ({row['module']}, from {dist}): {row['error']}",
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
