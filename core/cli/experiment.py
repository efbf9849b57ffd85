"""``schedlab experiment NAME``: run a packaged experiment provided by a plugin.

Core packages no experiment: every ``NAME`` is a plugin command registered through
the ``schedlab_cli_commands`` hook under the name ``experiment.NAME``
(:data:`schedlab.experiment.COMMAND_PREFIX`). The group lists them in its help and
loads one only when it runs (or its help is shown); ``docs/plugins.md`` shows how to
add one.
"""

from __future__ import annotations

from typing import Any

import click

from ..errors import PluginError
from ..experiment import COMMAND_PREFIX


def _experiments() -> dict[str, Any]:
    """``{NAME: CommandSpec}`` of every installed ``experiment.NAME`` command."""
    from ..registry import get_registry

    registry = get_registry()
    return {
        spec.name[len(COMMAND_PREFIX) :]: spec
        for spec in registry.all("command")
        if spec.name.startswith(COMMAND_PREFIX) and len(spec.name) > len(COMMAND_PREFIX)
    }


def output_folders(command: click.Command) -> list[click.Option]:
    """The options of ``command`` that name an output folder: a ``click.Path`` that
    may not be a file and need not exist (``--out``)."""
    return [
        p
        for p in command.params
        if isinstance(p, click.Option)
        and isinstance(p.type, click.Path)
        and not p.type.file_okay
        and p.type.dir_okay
        and not p.type.exists
    ]


def _checking_outputs(command: click.Command) -> None:
    """Make ``command`` check its output folders (:func:`output_folders`) before its
    own code runs, as every built-in command checks its outputs (``docs/cli.md``):
    ``-`` (no folder goes to standard output), a path through a regular file and a
    folder that cannot be written are one-line errors naming the option. Done once
    per command object."""
    import functools

    from .flags import check_outputs, refuse_file_parent

    callback = command.callback
    folders = output_folders(command)
    if callback is None or not folders or getattr(callback, "_checks_outputs", False):
        return

    @functools.wraps(callback)
    def checked(*args: Any, **kwargs: Any) -> Any:
        for option in folders:
            value = kwargs.get(option.name or "")
            if isinstance(value, str):
                names = [*option.opts, *option.secondary_opts]  # --out/--output alike
                label = "/".join(sorted(names, key=lambda n: (n.startswith("--"), len(n))))
                check_outputs([(label, value)], folders=[label])
                refuse_file_parent(value, label, folder=True)
        return callback(*args, **kwargs)

    checked._checks_outputs = True  # type: ignore[attr-defined]
    command.callback = checked


class ExperimentGroup(click.Group):
    """A click group whose subcommands are the installed ``experiment.NAME`` plugin
    commands (aliases of such a command work too). Each one's output folders are
    checked before it runs, as a built-in command's outputs are."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_experiments())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from ..registry import get_registry

        registry = get_registry()
        name = f"{COMMAND_PREFIX}{cmd_name}"
        if not cmd_name or not registry.has("command", name):
            return None
        spec = registry.get("command", name)
        command = spec.load()
        if not isinstance(command, click.Command):
            raise PluginError(
                f"plugin {spec.provider!r}: command {spec.name!r}: load() returned "
                f"{type(command).__name__}, expected a click.Command"
            )
        _checking_outputs(command)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """The experiment command and its arguments, checked as every built-in
        command's are: an option of one value given twice with different values,
        given an empty value, or a number in other than ASCII digits (``1_0``,
        ``١``) is a one-line error (``docs/cli.md``)."""
        from .flags import (
            FlagCommand,
            refuse_empty_values,
            refuse_repeated_options,
            refuse_unplain_numbers,
        )

        name, command, rest = super().resolve_command(ctx, args)
        if command is not None and not isinstance(command, FlagCommand):
            refuse_repeated_options(command, rest)
            refuse_empty_values(command, rest)
            refuse_unplain_numbers(command, rest)
        return name, command, rest

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_commands(ctx, formatter)
        if not self.list_commands(ctx):
            formatter.write_paragraph()
            formatter.write_text(
                "No experiment is installed: experiments come from plugins "
                "(`schedlab plugins` lists them; docs/plugins.md shows how to add one)."
            )


@click.group("experiment", cls=ExperimentGroup)
def command() -> None:
    """Run a packaged experiment. Experiments are plugins: each one installed is a
    command below (`schedlab plugins` shows which plugin provides it).
    """
