"""``schedlab plugins``: what is installed, where it comes from, and what failed."""

from __future__ import annotations

import json

import click


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
    from ..plugins import PluginLoadWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginLoadWarning)  # shown in the table instead
        rows = plugins()
    if as_json:
        click.echo(json.dumps(rows, indent=2, sort_keys=True))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="schedlab plugins", show_lines=False)
    for column in ("plugin", "distribution", "status", "kind", "name", "aliases", "description"):
        table.add_column(column)
    for row in rows:
        dist = f"{row['distribution']} {row['version']}".strip()
        comps = row["components"] or [None]
        for i, comp in enumerate(comps):
            first = i == 0
            status = row["status"] if not row["error"] else f"{row['status']}: {row['error']}"
            table.add_row(
                row["name"] if first else "",
                dist if first else "",
                status if first else "",
                comp["kind"] if comp else "",
                comp["name"] if comp else "",
                ", ".join(comp["aliases"]) if comp else "",
                comp["description"] if comp else "",
            )
    Console().print(table)
