"""``schedlab plugins``: what is installed, where it comes from, and what failed."""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import Iterator
from typing import Any, TextIO

import click

from ..compat import SchedlabDeprecationWarning
from ..errors import SchedlabWarning

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

    Plugins that failed (could not be imported, or misbehaved) or were disabled (a
    name clash) are listed with the reason; blocked ones (see
    SCHEDLAB_BLOCK_PLUGINS / SCHEDLAB_ALLOW_PLUGINS /
    SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD) are listed as blocked.
    """
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
    failed = [row for row in rows if row["status"] in ("failed", "disabled")]
    blocked = [row["name"] for row in rows if row["status"] == "blocked"]
    for row in failed:
        dist = f"{row['distribution']} {row['version']}".strip()
        console.print(
            f"{row['status']}: {row['name']} ({row['module']}, from {dist}): {row['error']}",
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
