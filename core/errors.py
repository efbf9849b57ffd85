"""The exception hierarchy of schedlab.

Every error a user can cause by giving bad input derives from :class:`SchedlabError`.
The CLI catches it and prints ``str(error)`` as one line, then exits with
``error.exit_code`` (2 by default); anything else is a bug and shows a traceback
only with ``--debug``.
"""

from __future__ import annotations


class SchedlabError(Exception):
    """Base class of every error caused by input, options or configuration."""

    #: The exit status of the CLI when it stops on this error (2 by default; 3 for a
    #: plugin's own failure, :class:`PluginRuntimeError`).
    exit_code: int = 2


class UsageError(SchedlabError):
    """Options or arguments that do not make sense together."""


class PluginError(SchedlabError):
    """A plugin failed to load, or two plugins claim the same name."""


class PluginRuntimeError(PluginError):
    """A third-party plugin's component (a reader's ``read``, a writer's ``write``, a
    policy's ``key``, a metric's ``compute`` ...) raised an unexpected exception.

    The message names the plugin, its distribution and version, and the component;
    the original exception is chained (``__cause__``; ``--debug`` shows its
    traceback). Exit status 3, as for any other bug, but the report goes to the
    plugin's authors. Exceptions of schedlab's own plugins are not wrapped: they
    surface unchanged as schedlab's internal errors.
    """

    exit_code = 3

    def __init__(self, message: str, *, plugin: str, distribution: str, version: str) -> None:
        self.plugin, self.distribution, self.version = plugin, distribution, version
        super().__init__(message)


class IncompatiblePluginError(PluginError):
    """A plugin declares an API range (``SCHEDLAB_API``) that the running schedlab's
    API version is outside of.

    Raised when such a plugin is registered by hand
    (``schedlab.build_registry(plugins=[...])``); one found through its entry point
    is disabled with a :class:`PluginLoadWarning` instead, unless
    ``SCHEDLAB_STRICT_PLUGINS=1``. See ``docs/compatibility.md``.
    """


class SchedlabWarning(UserWarning):
    """Base class of schedlab's warnings; the CLI prints each as one line
    ``schedlab: warning: ...`` on stderr."""


class PluginLoadWarning(SchedlabWarning):
    """A plugin could not be loaded or was disabled; the others keep working."""


class PluginCompatibilityWarning(SchedlabWarning):
    """A plugin declared its API range (``SCHEDLAB_API``) in a malformed way (not a
    :pep:`440` version range): it was loaded as if it had declared none."""


class PluginRuntimeWarning(SchedlabWarning):
    """A third-party component nobody asked for by name (a metric of the default set)
    failed at run time: it is left out, and the rest goes on. ``plugin`` and
    ``component`` name the plugin and the component (``""`` when not given)."""

    def __init__(self, message: str, *, plugin: str = "", component: str = "") -> None:
        self.plugin, self.component = plugin, component
        super().__init__(message)


class UnknownComponentError(SchedlabError):
    """A reader, writer, policy, metric ... was asked for by a name nobody provides."""

    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        self.kind, self.name, self.known = kind, name, known
        choices = ", ".join(sorted(known)) or "none installed"
        super().__init__(f"unknown {kind} {name!r} (available: {choices})")


class FormatError(SchedlabError):
    """Input that does not follow its format.

    The message names the file, the place (line number or XML path) and the field,
    then says what was expected, e.g.
    ``trace.swf:12: field 4 (run_time): expected a number, got 'abc'``.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        path: str | None = None,
        field: str | None = None,
    ) -> None:
        self.message, self.source, self.line, self.path, self.field = (
            message,
            source,
            line,
            path,
            field,
        )
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.source or "<input>"
        if self.line is not None:
            where += f":{self.line}"
        if self.path:
            where += f": {self.path}"
        text = f"{where}: "
        if self.field:
            text += f"field {self.field}: "
        return text + self.message


class ValidationError(FormatError):
    """A record that parses but breaks a consistency rule of its format (strict mode)."""


class SimulationError(SchedlabError):
    """A workload or option that the simulator cannot run with (e.g. no machine size)."""


# The exception hierarchy: public (plugin toolkit, ``schedlab.compat.PLUGIN_TOOLKIT``).
__all__ = [
    "FormatError",
    "IncompatiblePluginError",
    "PluginCompatibilityWarning",
    "PluginError",
    "PluginLoadWarning",
    "PluginRuntimeError",
    "PluginRuntimeWarning",
    "SchedlabError",
    "SchedlabWarning",
    "SimulationError",
    "UnknownComponentError",
    "UsageError",
    "ValidationError",
]
