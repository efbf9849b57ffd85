"""Versions of the plugin contract: the API range a plugin supports, and deprecations.

schedlab's public API (the names of :data:`schedlab.__all__`, those of the
``__all__`` of the :data:`PLUGIN_TOOLKIT` modules, the hook specifications of
:mod:`schedlab.hookspecs` and the fields of the records of
:mod:`schedlab.plugin_types`) is versioned with the distribution, by semantic
versioning: see ``docs/compatibility.md`` for the policy. This module holds what
the registry needs to keep that promise at run time.

**The API range.** A plugin module (or object) may declare the schedlab versions
it is built for as a :pep:`440` version range in a module attribute::

    SCHEDLAB_API = ">=0.1,<0.2"

When the running schedlab is outside that range the plugin is not registered: the
registry reports it like a plugin that failed to load (one
:class:`~schedlab.errors.PluginLoadWarning` naming the plugin, its distribution
and what it declared; ``SCHEDLAB_STRICT_PLUGINS=1`` makes it an error) and every
other plugin keeps working; a plugin registered by hand raises
:class:`~schedlab.errors.IncompatiblePluginError`. A declaration that is not a
version range (a number, a typo) draws one
:class:`~schedlab.errors.PluginCompatibilityWarning` naming the plugin and what it
declared, and the plugin is loaded as if it had declared nothing. A plugin that
declares nothing is loaded; the range its distribution requires of ``schedlab``
is pip's to enforce at install time. The range is checked against
:func:`api_version`, the release part of the installed version: a development or
distribution build such as ``0.2.0.dev3+g1a2b3c`` or ``0.2.0+deb1`` provides API
``0.2.0``. (Both classes are defined in :mod:`schedlab.errors`, where they are
public, and can be imported from here too.)

**Deprecations.** A deprecated hook specification carries pluggy's
``warn_on_impl`` (a deprecated hook argument ``warn_on_impl_args``) made by
:func:`deprecated_hook`; a deprecated function, option or record field calls
:func:`warn_deprecated`. Either way the thing keeps working until the version
named for its removal and emits a :class:`SchedlabDeprecationWarning` that says
what to use instead; for hooks the warning also names the plugin and its
distribution (:func:`deprecations`, used by the registry, adds them).
"""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

# Defined with the other errors (public there); importable from here too.
from .errors import IncompatiblePluginError, PluginCompatibilityWarning, PluginError

#: Name of the module attribute in which a plugin declares its API range.
API_ATTRIBUTE = "SCHEDLAB_API"


if TYPE_CHECKING:
    from packaging.version import Version

# ``packaging`` is imported where a version or a range is parsed, not here: every
# command imports this module (the registry checks each plugin's declared range),
# and only a plugin that declares a range needs it (~7 ms of a command's start).


class SchedlabDeprecationWarning(DeprecationWarning):
    """Something deprecated was used: it still works, the message says until when
    and what to use instead.

    Unlike other :class:`DeprecationWarning` subclasses it is shown by default
    (once per place), unless the interpreter was started with ``-W`` options or
    ``PYTHONWARNINGS``, which then decide alone.
    """


if not sys.warnoptions:  # an explicit -W or PYTHONWARNINGS decides alone
    warnings.filterwarnings("default", category=SchedlabDeprecationWarning)


#: ``schedlab.__version__`` when schedlab runs from a source tree that is not
#: installed (no distribution metadata): it has no API version.
_UNINSTALLED = "0+unknown"


def _running_version() -> Version | None:
    from packaging.version import InvalidVersion, Version

    from . import __version__

    if __version__ == _UNINSTALLED:
        return None
    try:
        return Version(__version__)
    except InvalidVersion:  # pragma: no cover - metadata that is not PEP 440
        return None


def api_version() -> Version | None:
    """The version of schedlab's public API: the release part of the installed
    distribution's version, without its epoch and its pre-release, post-release,
    development and local suffixes (``0.2.0`` for ``0.2.0rc1``, ``0.2.0.dev3+g1a2b3c``
    and ``0.2.0+deb1``), or ``None`` when schedlab runs from a source tree that is
    not installed (then no plugin's API range is checked)."""
    from packaging.version import Version

    version = _running_version()
    if version is None:
        return None
    return Version(".".join(map(str, version.release)))


def _where(name: str, distribution: str, version: str) -> str:
    dist = f"{distribution} {version}".strip()
    return f"plugin {name!r} (distribution {dist})"


def check_api_range(
    plugin: Any, name: str, distribution: str = "<local>", version: str = ""
) -> None:
    """Check the API range ``plugin`` declares in :data:`API_ATTRIBUTE`.

    Returns when the plugin declares nothing or a range that holds the running
    :func:`api_version`; raises :class:`IncompatiblePluginError` (``plugin 'name':
    ...``, the registry's form) when the range excludes it; warns with
    :class:`PluginCompatibilityWarning` (and returns) when the declaration is not a
    :pep:`440` version range; raises :class:`~schedlab.errors.PluginError` when
    reading the declaration or showing its value raises (a module ``__getattr__``
    importing unknown names, a ``__repr__`` that fails): the registry then disables
    a plugin found through its entry point.
    """
    try:
        declared = getattr(plugin, API_ATTRIBUTE, None)
    except (Exception, SystemExit) as exc:  # a module __getattr__, a property that raises
        raise _unreadable(name, "reading", exc) from exc
    if declared is None:
        return
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    where = _where(name, distribution, version)
    try:
        shown = str.__repr__(declared) if isinstance(declared, str) else repr(declared)
        if not isinstance(shown, str):
            raise TypeError(f"__repr__ returned {type(shown).__name__}")
    except (Exception, SystemExit) as exc:
        raise _unreadable(name, "showing", exc) from exc
    try:
        if not isinstance(declared, str):
            raise InvalidSpecifier(shown)
        spec = SpecifierSet(str(declared))
        if not str(spec):
            raise InvalidSpecifier(shown)
    except InvalidSpecifier:
        warnings.warn(
            f"{where} declares {API_ATTRIBUTE} = {shown}, which is not a version "
            f"range such as '>=0.1,<0.2'; it is loaded as if it declared none",
            PluginCompatibilityWarning,
            stacklevel=2,
        )
        return
    running = api_version()
    if running is None or spec.contains(running, prereleases=True):
        return
    raise IncompatiblePluginError(
        f"plugin {name!r}: it declares {API_ATTRIBUTE} = {shown}, but this schedlab "
        f"provides API {running} (install a version of the plugin built for schedlab "
        f"{running.major}.{running.minor})"
    )


def _unreadable(name: str, doing: str, exc: BaseException) -> PluginError:
    """The error for a declaration that raised ``exc`` while ``doing`` it
    (reading the attribute, or showing its value): the plugin is refused (the
    registry disables one found through its entry point)."""
    try:
        text = " ".join(str(exc).split())
    except Exception:  # an exception whose own text raises
        text = ""
    what = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return PluginError(f"plugin {name!r}: {doing} its {API_ATTRIBUTE} raised {what}")


def _deprecation(what: str, use_instead: str, since: str, removal: str) -> str:
    return (
        f"{what} is deprecated since schedlab {since} and will be removed in {removal}: "
        f"use {use_instead} instead"
    )


def deprecated_hook(
    what: str, use_instead: str, *, since: str, removal: str
) -> SchedlabDeprecationWarning:
    """The warning to give a deprecated hook specification as pluggy's
    ``warn_on_impl`` (or, for a deprecated argument, as a value of
    ``warn_on_impl_args``)::

        @hookspec(warn_on_impl=deprecated_hook(
            "hook schedlab_old_thing", "hook schedlab_new_thing", since="0.3", removal="0.5"))
        def schedlab_old_thing(): ...

    Registering a plugin that implements the hook then warns once, naming the
    plugin, its distribution, ``what`` and ``use_instead``; the hook keeps being
    called until ``removal``.
    """
    return SchedlabDeprecationWarning(_deprecation(what, use_instead, since, removal))


def warn_deprecated(
    what: str, use_instead: str, *, since: str, removal: str, stacklevel: int = 2
) -> None:
    """Warn that ``what`` (a function, argument, option or record field) is
    deprecated: it keeps working until ``removal``; ``use_instead`` replaces it."""
    warnings.warn(
        _deprecation(what, use_instead, since, removal),
        SchedlabDeprecationWarning,
        stacklevel=stacklevel + 1,
    )


@contextmanager
def deprecations(name: str, distribution: str = "<local>", version: str = "") -> Iterator[None]:
    """Around the registration of plugin ``name``: the warnings pluggy gives for
    deprecated hooks (``warn_on_impl``) come out naming the plugin and its
    distribution; every other warning passes through unchanged."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    where = _where(name, distribution, version)
    for item in caught:
        if issubclass(item.category, SchedlabDeprecationWarning):
            message = f"{where}: {item.message}"
            warnings.warn_explicit(
                SchedlabDeprecationWarning(message),
                SchedlabDeprecationWarning,
                item.filename,
                item.lineno,
            )
        else:
            warnings.warn_explicit(
                item.message, item.category, item.filename, item.lineno, source=item.source
            )


# -- the public surface ------------------------------------------------------------

#: The plugin toolkit: submodules whose ``__all__`` is public API, covered by the
#: compatibility policy like :data:`schedlab.__all__` (``docs/compatibility.md``,
#: "What is public"). They hold what a plugin needs beyond the package's exported
#: names: the error hierarchy, the data model's header labels, the I/O layer of
#: readers and writers, loss reports, validation findings and limits, what a metric
#: raises when it cannot be computed, the estimate-accuracy helpers, the
#: simulator's strategy API (with node allocation and the online linear model), the
#: experiment machinery, the test helpers and this module's view of the versioned
#: contract (:func:`api_version`, this list). Their other names may change in any
#: release. The built-in plugins import nothing else of schedlab
#: (``tests/test_builtin_plugins_public_api.py``).
PLUGIN_TOOLKIT: tuple[str, ...] = (
    "schedlab.errors",
    "schedlab.model",
    "schedlab.io",
    "schedlab.losses",
    "schedlab.validation",
    "schedlab.measure",
    "schedlab.accuracy",
    "schedlab.sim",
    "schedlab.sim.resources",
    "schedlab.sim.online_linear",
    "schedlab.experiment",
    "schedlab.testing",
    "schedlab.compat",
)

# Public (plugin toolkit): the API version and the toolkit list. The rest of this
# module (the range check, the deprecation helpers, the surface as data) is what
# schedlab itself uses, and may change.
__all__ = ["PLUGIN_TOOLKIT", "api_version"]


def hook_specs() -> dict[str, Any]:
    """Every hook specification of :mod:`schedlab.hookspecs`, by name."""
    from . import hookspecs

    marker = f"{hookspecs.PROJECT}_spec"
    return {
        name: fn
        for name, fn in sorted(vars(hookspecs).items())
        if callable(fn) and hasattr(fn, marker)
    }


def record_types() -> dict[str, type]:
    """Every record class of :mod:`schedlab.plugin_types` (the types hooks return)."""
    import attrs

    from . import plugin_types

    return {
        name: obj
        for name, obj in sorted(vars(plugin_types).items())
        if isinstance(obj, type)
        and attrs.has(obj)
        and obj.__module__ == plugin_types.__name__
        and not name.startswith("_")
    }


def _signature(obj: Any) -> str:
    import inspect

    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return ""
    return re.sub(r" at 0x[0-9a-fA-F]+", "", text)  # reprs of default objects


def _describe(obj: Any, records: set[type]) -> str:
    import inspect

    if isinstance(obj, type):
        bases = ", ".join(b.__name__ for b in obj.__bases__ if b is not object)
        head = f"class({bases})"
        if obj in records or issubclass(obj, BaseException):
            return head  # record fields are listed one by one; errors by their bases
        return f"{head} {_signature(obj)}".rstrip()
    if inspect.isroutine(obj):
        return f"function {_signature(obj)}"
    if isinstance(obj, (tuple, frozenset, int, float)) and not isinstance(obj, bool):
        return f"{type(obj).__name__} {obj!r}"
    return type(obj).__name__


def public_surface() -> dict[str, str]:
    """The public API as text, one item per line of ``tests/public_surface.json``.

    Keys are ``schedlab.NAME`` for each name of :data:`schedlab.__all__` (value:
    what it is, with its signature), ``MODULE.NAME`` for each name of the
    ``__all__`` of each module of :data:`PLUGIN_TOOLKIT` (the same text), the name
    of each hook specification (its signature and pluggy options) and
    ``RecordType.field`` for each field of each record type of
    :mod:`schedlab.plugin_types` (type and default; an inherited field under the
    record that defines it).
    """
    import importlib

    import attrs
    import schedlab

    records = record_types()
    surface: dict[str, str] = {}
    for name in schedlab.__all__:
        if name == "__version__":
            surface[f"schedlab.{name}"] = "str"
            continue
        surface[f"schedlab.{name}"] = _describe(getattr(schedlab, name), set(records.values()))
    for module_name in PLUGIN_TOOLKIT:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            surface[f"{module_name}.{name}"] = _describe(obj, set(records.values()))
    for name, fn in hook_specs().items():
        opts = getattr(fn, "schedlab_spec", {}) or {}
        flags = [key for key in ("firstresult", "historic") if opts.get(key)]
        if opts.get("warn_on_impl") is not None:
            flags.append(f"deprecated: {opts['warn_on_impl']}")
        if opts.get("warn_on_impl_args"):
            flags.append(f"deprecated arguments: {sorted(opts['warn_on_impl_args'])}")
        extra = f" [{'; '.join(flags)}]" if flags else ""
        surface[name] = f"hook {_signature(fn)}{extra}"
    for record_name, record in records.items():
        inherited = {
            f.name
            for base in record.__mro__[1:]
            if base in records.values()
            for f in attrs.fields(base)
        }
        for field in attrs.fields(record):
            if field.name in inherited:  # listed once, under the base record
                continue
            if field.default is attrs.NOTHING:
                default = "required"
            elif isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
                default = f"default {getattr(field.default.factory, '__name__', '?')}()"
            else:
                default = f"default {field.default!r}"
            kind = "keyword " if field.kw_only else ""
            surface[f"{record_name}.{field.name}"] = f"{kind}field {field.type}, {default}"
    return dict(sorted(surface.items()))
