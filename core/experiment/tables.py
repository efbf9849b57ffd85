"""Tables on the terminal as schedlab's commands print them, for experiment commands.

A plugin's experiment command prints its tables with these two, so that they read
like ``schedlab compare``'s and ``schedlab metrics``': as wide as the other commands'
when stdout is a pipe or a file, and never with a number cut to ``…`` in a narrow
terminal (docs/cli.md).
"""

from __future__ import annotations

from typing import Any


def table_console() -> Any:
    """A rich console on stdout for a command's tables: the terminal's width, or 200
    columns when stdout is not a terminal (a pipe or a file)."""
    from ..cli.metrics import wide_console

    return wide_console()


def print_table(console: Any, table: Any) -> None:
    """Print the rich ``table`` on ``console`` as schedlab's commands do: as rich
    prints it when it fits; else with its headers wrapped and every column as wide
    as its widest value, split into parts that repeat its leading text columns
    when even that is too wide, so no value is ever shortened."""
    from ..cli._console import print_table as _print_table

    _print_table(console, table)
