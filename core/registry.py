"""Plugin discovery, guarded loading, and the registry of components.

The plugin manager is built on first use (:func:`get_registry`), never at import
time. Entry points of group ``schedlab`` are loaded one by one, each inside its own
``try``. A third-party plugin that misbehaves is **disabled with one warning**
(:class:`~schedlab.errors.PluginLoadWarning`, printed by the CLI as one line
``schedlab: warning: ...``) naming the plugin, its module, and its distribution and
version; every other plugin keeps working. Misbehaving means:

- it cannot be imported, or pluggy refuses it (a hook with wrong arguments);
- it implements a hook that does not exist (``schedlab_readerz``: found by pluggy's
  ``check_pending``);
- a registration hook raises, returns something that is not an iterable of the
  hook's record type, or a record is invalid;
- it claims a name (or alias) of a built-in component: **built-ins win**, the
  third-party plugin is disabled;
- two third-party plugins claim one name: **both** are disabled (block one with
  ``SCHEDLAB_BLOCK_PLUGINS`` to use the other); likewise two third-party entry points
  with one entry-point name (one distribution listing the same entry point twice
  declares one plugin, loaded once).

Plugins registered by hand (:func:`build_registry` ``plugins=``,
:meth:`PluginHost.register`, :mod:`schedlab.testing`) are the caller's own code: any
such fault is a :class:`~schedlab.errors.PluginError` at once, and they win name
clashes against third-party entry points like built-ins do. Two built-in (or
hand-registered) plugins claiming one name is always an error.

At run time, :meth:`Registry.blame` attributes an unexpected exception raised inside
a third-party component to its plugin (:class:`~schedlab.errors.PluginRuntimeError`),
and sends what the component prints to stderr (a command's ``--json`` output and
``convert IN -`` carry nothing else).

Environment controls:

``SCHEDLAB_STRICT_PLUGINS=1``
    every fault above is an error (:class:`~schedlab.errors.PluginError`, exit 2)
    instead of a warning.
``SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD=1``
    load only the plugins of the ``schedlab`` distribution itself.
``SCHEDLAB_ALLOW_PLUGINS=a,b``
    load third-party plugins only if their entry-point name is listed.
``SCHEDLAB_BLOCK_PLUGINS=a,b``
    never load these entry points (built-in ones included).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import types
import warnings
from collections.abc import Iterable, Iterator, Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any, Literal, overload

import attrs
import pluggy

from . import compat, hookspecs
from .errors import (
    PluginError,
    PluginLoadWarning,
    PluginRuntimeError,
    SchedlabError,
    UnknownComponentError,
    UsageError,
)
from .plugin_types import (
    COMPONENT_KINDS,
    AllocationSpec,
    BackfillSpec,
    CommandSpec,
    Component,
    EstimatorSpec,
    GeneratorSpec,
    MetricSpec,
    PolicySpec,
    ReaderSpec,
    StatisticSpec,
    WriterSpec,
)

if TYPE_CHECKING:
    import cattrs

__all__ = [
    "ENTRY_POINT_GROUP",
    "LOCAL_DISTRIBUTION",
    "OWN_DISTRIBUTION",
    "PluginHost",
    "PluginInfo",
    "PluginLoadWarning",
    "Registry",
    "build_registry",
    "get_registry",
    "set_registry",
]

ENTRY_POINT_GROUP = "schedlab"
OWN_DISTRIBUTION = "schedlab"
#: Distribution recorded for plugins registered by hand (tests, notebooks).
LOCAL_DISTRIBUTION = "<local>"

#: Record class -> kind name (``ReaderSpec`` -> ``"reader"``).
_KIND_OF: dict[type[Component], str] = {cls: kind for kind, (_, cls) in COMPONENT_KINDS.items()}

Kind = Literal[
    "reader",
    "writer",
    "policy",
    "backfill",
    "estimator",
    "metric",
    "generator",
    "command",
    "allocation",
]


@attrs.define(slots=True)
class PluginInfo:
    """What ``schedlab plugins`` reports about one plugin (entry point).

    ``status`` is ``"loaded"``, ``"failed"`` (it could not be imported or
    misbehaved: ``error`` says how), ``"disabled"`` (a name clash with another plugin)
    or ``"blocked"`` (by the environment controls).
    """

    name: str
    distribution: str
    version: str
    module: str
    status: str
    error: str = ""
    hooks: tuple[str, ...] = ()

    @property
    def builtin(self) -> bool:
        """True for the plugins of the ``schedlab`` distribution itself."""
        return self.distribution == OWN_DISTRIBUTION

    @property
    def protected(self) -> bool:
        """Built-in or registered by hand: wins name clashes, and its faults are
        errors rather than warnings."""
        return self.distribution in (OWN_DISTRIBUTION, LOCAL_DISTRIBUTION)

    def describe(self) -> str:
        """``plugin 'name' (distribution version)`` for messages."""
        if self.builtin:
            return f"built-in plugin {self.name!r}"
        dist = f"{self.distribution} {self.version}".strip()
        return f"plugin {self.name!r} ({dist})"


def _env_list(name: str) -> set[str] | None:
    raw = os.environ.get(name)
    if raw is None:
        return None
    return {item.strip() for item in raw.split(",") if item.strip()}


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


#: Name and version of each distribution already read, by its metadata folder:
#: reading a distribution's metadata parses its METADATA file, and every entry
#: point of the distribution asks again (a tenth of a second per registry).
_DISTRIBUTIONS: dict[str, tuple[str, str]] = {}


def _dist_of(ep: metadata.EntryPoint) -> tuple[str, str]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "?", "?"
    folder = getattr(dist, "_path", None)
    known = _DISTRIBUTIONS.get(str(folder)) if folder is not None else None
    if known is None:
        # One parse of the METADATA file for both (``Distribution.version`` parses
        # it again), unless a distribution class of its own defines the version.
        meta = dist.metadata
        if type(dist).version is metadata.Distribution.version:
            version = meta["Version"]
        else:
            version = dist.version
        known = (meta["Name"] or "?", version or "?")
        if folder is not None:
            _DISTRIBUTIONS[str(folder)] = known
    return known


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


#: Names whose lookup on a module is not its ``__dict__`` entry: the data descriptors
#: of :class:`types.ModuleType` and ``object`` (``inspect.getattr_static`` returns them).
_MODULE_DESCRIPTORS = frozenset(("__dict__", "__annotations__", "__class__"))
_IMPL_MARKER = f"{hookspecs.PROJECT}_impl"


class _PluginManager(pluggy.PluginManager):
    """pluggy's manager, finding the hooks of a module plugin faster.

    Registering a plugin looks up every attribute of it with
    :func:`inspect.getattr_static` (about 10 us each: 40 modules of 20 to 40 names,
    a tenth of the registry's build). For a plain module, the attributes that
    cannot be hooks (anything but a function, a method or a static or class
    method) and the functions that carry no hook marker are answered from the
    module's ``__dict__`` directly, with the answer pluggy would give; every other
    attribute, and every plugin that is not a plain module, goes through pluggy.
    """

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> pluggy.HookimplOpts | None:
        """pluggy's answer (the hook options, or None), skipping its static lookup
        for what a plain module plainly does not implement as a hook."""
        if type(plugin) is types.ModuleType and name not in _MODULE_DESCRIPTORS:
            value = plugin.__dict__.get(name, _MODULE_DESCRIPTORS)
            if value is not _MODULE_DESCRIPTORS:
                if isinstance(value, types.FunctionType):
                    own = value.__dict__
                    if _IMPL_MARKER not in own and "__func__" not in own:
                        return None  # pluggy reads the marker from the function
                elif not isinstance(value, (staticmethod, classmethod, types.MethodType)):
                    return None  # pluggy hooks only functions and methods
        return super().parse_hookimpl_opts(plugin, name)


class PluginHost:
    """A pluggy manager plus provenance and the failures seen while loading."""

    def __init__(self, strict: bool = False) -> None:
        self.pm = _PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        #: Every plugin seen, keyed by plugin name (a losing entry point of a
        #: duplicated name is keyed ``name@distribution``).
        self.infos: dict[str, PluginInfo] = {}
        #: Faults are errors instead of warnings (``SCHEDLAB_STRICT_PLUGINS``).
        self.strict = strict
        #: The hooks of each plugin that was imported but refused before it was
        #: registered (e.g. for its ``SCHEDLAB_API`` range), found by inspection
        #: (none of them is called): which kinds of component it would provide.
        self.refused_hooks: dict[str, tuple[str, ...]] = {}

    def register(
        self,
        plugin: object,
        name: str,
        distribution: str = LOCAL_DISTRIBUTION,
        version: str = "",
        module: str | None = None,
    ) -> None:
        """Register a module or object as plugin ``name`` (used by tests and notebooks).

        Raises :class:`PluginError` if pluggy refuses it (a hook with wrong arguments,
        a name already registered).
        """
        compat.check_api_range(plugin, name, distribution, version)  # IncompatiblePluginError
        self._check_free(plugin, name)
        try:
            with compat.deprecations(name, distribution, version):  # name them in warnings
                self.pm.register(plugin, name=name)
        except Exception as exc:
            if self.pm.is_registered(plugin):  # old pluggy may register half a plugin
                self.pm.unregister(plugin)
            raise PluginError(f"plugin {name!r}: {_one_line(exc)}") from exc
        hooks = tuple(sorted({h.name for h in self.pm.get_hookcallers(plugin) or ()}))
        if module is None:
            module = getattr(plugin, "__name__", type(plugin).__name__)
        self.infos[name] = PluginInfo(name, distribution, version, module, "loaded", "", hooks)

    def _check_free(self, plugin: object, name: str) -> None:
        """A one-line :class:`PluginError` naming both plugins when ``name`` is taken
        or ``plugin`` is registered already (pluggy's own error holds the repr of
        every registered plugin: thousands of characters)."""
        module = getattr(plugin, "__name__", type(plugin).__name__)
        taken = self.pm.get_plugin(name)
        if taken is not None:
            info = self.infos.get(name)
            other = (
                f"{info.describe()} ({info.module})"
                if info is not None
                else f"{getattr(taken, '__name__', type(taken).__name__)}"
            )
            raise PluginError(
                f"plugin {name!r} ({module}): the name {name!r} is already taken by {other}"
            )
        other_name = self.pm.get_name(plugin)
        if other_name is not None:
            raise PluginError(
                f"plugin {name!r} ({module}): this plugin is already registered as {other_name!r}"
            )

    def disable(self, key: str, reason: str, status: str = "failed", verb: str = "") -> None:
        """Disable plugin ``key`` (unregister it, record why) with one warning; an error
        instead for a plugin registered by hand, or in strict mode."""
        info = self.infos[key]
        with contextlib.suppress(Exception):
            if self.pm.get_plugin(key) is not None:
                self.pm.unregister(name=key)
        info.status, info.error = status, reason
        fatal = self.strict or info.distribution == LOCAL_DISTRIBUTION
        verb = verb or ("is faulty" if fatal else "is disabled")
        dist = f"{info.distribution} {info.version}".strip()
        message = (
            f"schedlab plugin {info.name!r} ({info.module}) from distribution {dist} "
            f"{verb}: {reason}"
        )
        if fatal:
            raise PluginError(message)
        warnings.warn(message, PluginLoadWarning, stacklevel=3)

    def load_entry_points(
        self,
        entry_points: Iterable[metadata.EntryPoint] | None = None,
        strict: bool | None = None,
    ) -> None:
        """Load and register every entry point of the ``schedlab`` group, guarded."""
        self.strict = _truthy("SCHEDLAB_STRICT_PLUGINS") if strict is None else strict
        if entry_points is None:
            entry_points = metadata.entry_points(group=ENTRY_POINT_GROUP)
        blocked = _env_list("SCHEDLAB_BLOCK_PLUGINS") or set()
        allowed = _env_list("SCHEDLAB_ALLOW_PLUGINS")
        no_autoload = _truthy("SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD")
        by_name: dict[str, list[metadata.EntryPoint]] = {}
        for ep in entry_points:
            by_name.setdefault(ep.name, []).append(ep)
        for name in sorted(by_name):
            eps = sorted(by_name[name], key=lambda e: (_dist_of(e), e.value))
            # One distribution listing the same entry point twice (a repeated line of
            # its entry_points.txt) declares one plugin: it is loaded once.
            unique: dict[tuple[tuple[str, str], str], metadata.EntryPoint] = {}
            for ep in eps:
                unique.setdefault((_dist_of(ep), ep.value), ep)
            eps = list(unique.values())
            if len(eps) > 1:
                eps = self._one_per_name(name, eps, blocked, allowed, no_autoload)
            for ep in eps:
                dist, version = _dist_of(ep)
                third_party = dist != OWN_DISTRIBUTION
                if (
                    ep.name in blocked
                    or (third_party and no_autoload)
                    or (third_party and allowed is not None and ep.name not in allowed)
                ):
                    self.infos[ep.name] = PluginInfo(ep.name, dist, version, ep.value, "blocked")
                    continue
                self._load(ep, dist, version)

    def _one_per_name(
        self,
        name: str,
        eps: list[metadata.EntryPoint],
        blocked: set[str],
        allowed: set[str] | None,
        no_autoload: bool,
    ) -> list[metadata.EntryPoint]:
        """Several entry points share ``name``: keep the built-in one, if any, and
        disable the third-party ones (never imported); two built-ins are an error.
        Returns the entry points still to load."""
        builtin = [ep for ep in eps if _dist_of(ep)[0] == OWN_DISTRIBUTION]
        if len(builtin) > 1:
            raise PluginError(
                f"plugin name {name!r} is used by two entry points: "
                f"{builtin[0].value} and {builtin[1].value} (schedlab installed twice?)"
            )
        third = [ep for ep in eps if ep not in builtin]
        #: The third-party entry points of each distribution (one may list ``name``
        #: twice, with two modules), in the order of ``eps``.
        by_dist: dict[tuple[str, str], list[metadata.EntryPoint]] = {}
        for ep in third:
            by_dist.setdefault(_dist_of(ep), []).append(ep)
        for (dist, version), own in by_dist.items():
            self.infos[f"{name}@{dist}"] = PluginInfo(name, dist, version, own[0].value, "blocked")
        if name in blocked:
            for ep in builtin:
                dist, version = _dist_of(ep)
                self.infos[name] = PluginInfo(name, dist, version, ep.value, "blocked")
            return []
        if no_autoload or (allowed is not None and name not in allowed):
            return builtin  # the third-party ones are blocked: they cannot clash
        for (dist, version), own in by_dist.items():
            if builtin:
                reason = (
                    f"its entry-point name {name!r} is the built-in plugin's "
                    f"({builtin[0].value}); built-in plugins win"
                )
            else:
                twice = ""
                if len(own) > 1:
                    times = "twice" if len(own) == 2 else f"{len(own)} times"
                    modules = ", ".join(ep.value for ep in own)
                    twice = f"is declared {times} by {dist} {version} ({modules})"
                others = ", ".join(
                    f"{o.value} ({' '.join(_dist_of(o))})" for o in third if o not in own
                )
                if not others:
                    reason = f"its entry-point name {name!r} {twice}; it is not loaded"
                else:
                    also = f"{twice} and " if twice else "is "
                    reason = (
                        f"its entry-point name {name!r} {also}also used by {others}; "
                        "none of them is loaded"
                    )
            self.disable(f"{name}@{dist}", reason, status="disabled")
        return builtin

    def _load(self, ep: metadata.EntryPoint, dist: str, version: str) -> None:
        self.infos[ep.name] = PluginInfo(ep.name, dist, version, ep.value, "failed")
        try:
            plugin = ep.load()
        except (Exception, SystemExit) as exc:  # a plugin's sys.exit() stops only it
            self.disable(ep.name, _one_line(exc), verb="failed to load")
            return
        try:
            self.register(plugin, ep.name, dist, version, module=ep.value)
        except PluginError as exc:
            self.refused_hooks[ep.name] = self._hooks_of(plugin)
            reason = str(exc).removeprefix(f"plugin {ep.name!r}: ")
            self.disable(ep.name, reason, verb="failed to load")

    def _hooks_of(self, plugin: object) -> tuple[str, ...]:
        """The hooks ``plugin`` implements, by inspecting its attributes as pluggy
        does when registering it (no hook is called); sorted."""
        found: set[str] = set()
        for attr in dir(plugin):
            try:
                opts = self.pm.parse_hookimpl_opts(plugin, attr)
            except Exception:  # an attribute that cannot be inspected is no hook
                continue
            if opts is not None:
                found.add(str(opts.get("specname") or attr))
        return tuple(sorted(found))

    def check_pending(self) -> None:
        """Run pluggy's ``check_pending``: a hook implementation that matches no hook
        specification (a misspelt ``schedlab_readerz``) disables its plugin."""
        while True:
            try:
                self.pm.check_pending()
                return
            except pluggy.PluginValidationError as exc:
                name = self.pm.get_name(exc.plugin)
                if name is None:  # cannot happen with pluggy's own check; be safe
                    raise PluginError(f"plugin validation failed: {exc}") from exc
                unknown = sorted(
                    caller.name
                    for caller in self.pm.get_hookcallers(exc.plugin) or ()
                    if not caller.has_spec()
                )
                known = sorted(n for n in vars(self.pm.hook) if self.pm.hook.__dict__[n].has_spec())
                import difflib  # only for a faulty plugin

                hints = []
                for hook in unknown:
                    close = difflib.get_close_matches(hook, known, n=1)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    hints.append(f"{hook!r}, which is not a schedlab hook{hint}")
                self.disable(name, f"it implements {'; '.join(hints)}")


#: The commands of ``schedlab`` itself (``schedlab.cli``): a plugin command of one
#: of these names would never run, so its plugin is disabled with a warning.
SCHEDLAB_COMMANDS: frozenset[str] = frozenset(
    {
        "plugins", "info", "validate", "convert", "simulate", "metrics", "compare",
        "experiment", "sweep", "report", "new-plugin", "platform",
    }
)  # fmt: skip


def _check_records(hook_name: str, record_type: type[Component], result: object) -> list[Any]:
    """The records a registration hook returned, or ValueError saying what is wrong."""
    if result is None:
        return []
    if isinstance(result, (Component, str, bytes, dict)) or not isinstance(result, Iterable):
        raise ValueError(
            f"{hook_name} returned {type(result).__name__}, expected an iterable of "
            f"{record_type.__name__}"
        )
    records = list(result)
    for record in records:
        if not isinstance(record, record_type):
            raise ValueError(
                f"{hook_name} returned {type(record).__name__}, expected {record_type.__name__}"
            )
    return records


class Registry:
    """Every component provided by the registered plugins, by kind and name.

    Built once from a :class:`PluginHost` (which then runs pluggy's
    ``check_pending``); faulty plugins are disabled as the module documentation says.
    Lookups raise :class:`~schedlab.errors.UnknownComponentError` with the list of
    known names.
    """

    def __init__(self, host: PluginHost) -> None:
        self.host = host
        self._by_kind: dict[str, dict[str, Component]] = {}
        self._aliases: dict[str, dict[str, str]] = {}
        self._converter: cattrs.Converter | None = None
        #: kind -> name or alias -> plugin, for the components of plugins disabled
        #: while the registry was built (so a lookup can say why the name is missing).
        self._disabled: dict[str, dict[str, str]] = {}
        host.check_pending()
        gathered = self._gather()
        self._resolve_clashes(gathered)
        for kind in COMPONENT_KINDS:
            found: dict[str, Component] = {}
            names: dict[str, str] = {}
            for plugin in sorted(gathered):
                for record in gathered[plugin].get(kind, ()):
                    found[record.name] = record
                    for label in (record.name, *record.aliases):
                        names[label] = record.name
            self._by_kind[kind] = dict(sorted(found.items()))
            self._aliases[kind] = names

    def _gather(self) -> dict[str, dict[str, list[Component]]]:
        """Call every registration hook implementation once: plugin -> kind -> records.
        A plugin implementing one hook twice (pluggy's ``specname=``) provides the
        records of both (one name claimed by both disables it, as any name it claims
        twice). A plugin whose hook raises or returns the wrong type is disabled."""
        gathered: dict[str, dict[str, list[Component]]] = {}
        faults: dict[str, str] = {}
        for kind, (hook_name, record_type) in COMPONENT_KINDS.items():
            caller = getattr(self.host.pm.hook, hook_name)
            for impl in caller.get_hookimpls():
                plugin = impl.plugin_name
                if plugin in faults:
                    continue
                try:
                    result = impl.function()
                except (Exception, SystemExit) as exc:
                    faults[plugin] = f"{hook_name} raised {_one_line(exc)}"
                    continue
                try:
                    records = _check_records(hook_name, record_type, result)
                except (Exception, SystemExit) as exc:  # also a generator raising
                    reason = str(exc) if isinstance(exc, ValueError) else _one_line(exc)
                    faults[plugin] = reason if hook_name in reason else f"{hook_name}: {reason}"
                    continue
                # extend, never assign: one plugin may implement a hook twice
                # (pluggy's ``specname=``), and both implementations' records count
                gathered.setdefault(plugin, {}).setdefault(kind, []).extend(
                    attrs.evolve(r, provider=plugin) for r in records
                )
        for plugin, reason in sorted(faults.items()):
            self._note_disabled(plugin, gathered.pop(plugin, {}))
            self.host.disable(plugin, reason)
        return gathered

    def _note_disabled(self, plugin: str, records: dict[str, list[Component]]) -> None:
        """Remember the names (and aliases) ``plugin`` provided before it was disabled."""
        for kind, found in records.items():
            names = self._disabled.setdefault(kind, {})
            for record in found:
                for label in (record.name, *record.aliases):
                    names.setdefault(label, plugin)

    def _resolve_clashes(self, gathered: dict[str, dict[str, list[Component]]]) -> None:
        """Disable third-party plugins that claim a name already taken (see the module
        documentation); two protected plugins claiming one name is an error."""
        claims: dict[tuple[str, str], list[str]] = {}
        for plugin in sorted(gathered):
            for kind, records in gathered[plugin].items():
                for record in records:
                    for label in (record.name, *record.aliases):
                        claimants = claims.setdefault((kind, label), [])
                        claimants.append(plugin)
        losers: dict[str, str] = {}
        for (kind, label), claimants in claims.items():
            if kind == "command" and label in SCHEDLAB_COMMANDS:
                for plugin in claimants:
                    if not self._info(plugin).builtin:
                        losers.setdefault(
                            plugin,
                            f"it claims the command name {label!r} of schedlab's own "
                            "command; schedlab's commands win",
                        )
                continue
            if len(claimants) < 2:
                continue
            infos = {p: self._info(p) for p in claimants}
            if len(set(claimants)) == 1:
                losers.setdefault(claimants[0], f"it claims {kind} name {label!r} twice")
                continue
            protected = sorted({p for p in claimants if infos[p].protected})
            if len(protected) > 1:
                raise PluginError(
                    f"{kind} name {label!r} is claimed by two plugins: "
                    f"{protected[0]!r} and {protected[1]!r}"
                )
            for plugin in sorted(set(claimants) - set(protected)):
                if protected:
                    winner = infos[protected[0]]
                    reason = f"it claims the {kind} name {label!r} of the {winner.describe()}; " + (
                        "built-in plugins win" if winner.builtin else "it is kept"
                    )
                else:
                    rivals = [o for o in sorted(set(claimants)) if o != plugin]
                    others = ", ".join(infos[o].describe() for o in rivals)
                    if len(rivals) == 1:
                        hint = (
                            f"neither is used (SCHEDLAB_BLOCK_PLUGINS={plugin} would keep "
                            "the other)"
                        )
                    else:  # blocking this one would leave the others clashing
                        hint = (
                            f"none of them is used (SCHEDLAB_BLOCK_PLUGINS={','.join(rivals)} "
                            "would keep this one)"
                        )
                    reason = f"{kind} name {label!r} is also claimed by {others}; {hint}"
                losers.setdefault(plugin, reason)
        for plugin, reason in sorted(losers.items()):
            self._note_disabled(plugin, gathered.pop(plugin, {}))
            self.host.disable(plugin, reason, status="disabled")

    def _info(self, plugin: str) -> PluginInfo:
        info = self.host.infos.get(plugin)
        if info is None:  # registered on host.pm directly, bypassing PluginHost.register
            info = PluginInfo(plugin, LOCAL_DISTRIBUTION, "", plugin, "loaded")
            self.host.infos[plugin] = info
        return info

    # ------------------------------------------------------------------ lookups

    def names(self, kind: str) -> list[str]:
        """Canonical names of every component of ``kind``, sorted."""
        return list(self._by_kind[kind])

    @overload
    def all(self, kind: Literal["reader"]) -> list[ReaderSpec]: ...
    @overload
    def all(self, kind: Literal["writer"]) -> list[WriterSpec]: ...
    @overload
    def all(self, kind: Literal["policy"]) -> list[PolicySpec]: ...
    @overload
    def all(self, kind: Literal["backfill"]) -> list[BackfillSpec]: ...
    @overload
    def all(self, kind: Literal["estimator"]) -> list[EstimatorSpec]: ...
    @overload
    def all(self, kind: Literal["metric"]) -> list[MetricSpec]: ...
    @overload
    def all(self, kind: Literal["generator"]) -> list[GeneratorSpec]: ...
    @overload
    def all(self, kind: Literal["command"]) -> list[CommandSpec]: ...
    @overload
    def all(self, kind: Literal["allocation"]) -> list[AllocationSpec]: ...
    @overload
    def all(self, kind: str) -> list[Component]: ...
    def all(self, kind: str) -> list[Any]:
        """Every component of ``kind``, sorted by name."""
        return list(self._by_kind[kind].values())

    @overload
    def get(self, kind: Literal["reader"], name: str) -> ReaderSpec: ...
    @overload
    def get(self, kind: Literal["writer"], name: str) -> WriterSpec: ...
    @overload
    def get(self, kind: Literal["policy"], name: str) -> PolicySpec: ...
    @overload
    def get(self, kind: Literal["backfill"], name: str) -> BackfillSpec: ...
    @overload
    def get(self, kind: Literal["estimator"], name: str) -> EstimatorSpec: ...
    @overload
    def get(self, kind: Literal["metric"], name: str) -> MetricSpec: ...
    @overload
    def get(self, kind: Literal["generator"], name: str) -> GeneratorSpec: ...
    @overload
    def get(self, kind: Literal["command"], name: str) -> CommandSpec: ...
    @overload
    def get(self, kind: Literal["allocation"], name: str) -> AllocationSpec: ...
    @overload
    def get(self, kind: str, name: str) -> Component: ...
    def get(self, kind: str, name: str) -> Any:
        """The component of ``kind`` called ``name`` (or one of its aliases)."""
        canonical = self._aliases[kind].get(name)
        if canonical is None:
            plugin = self._disabled.get(kind, {}).get(name)
            info = self.host.infos.get(plugin) if plugin is not None else None
            if info is not None and info.status != "loaded":
                raise _DisabledComponentError(kind, name, self.names(kind), info)
            raise self._unknown(kind, name)
        return self._by_kind[kind][canonical]

    def _unknown(self, kind: str, name: str) -> UnknownComponentError:
        """The error for a ``kind`` called ``name`` that no loaded plugin provides.
        The components of a plugin that failed before they could be gathered (it
        could not be imported, or was refused for its ``SCHEDLAB_API`` range, or a
        registration hook raised) are unknown, so "unknown" would be a guess: such
        plugins that implement the hook of ``kind`` (or whose hooks are unknown, never
        imported, such as the entry points of an entry-point name clash) are named,
        with why they failed or were disabled."""
        hook = COMPONENT_KINDS[kind][0] if kind in COMPONENT_KINDS else None
        suspects: list[tuple[PluginInfo, tuple[str, ...] | None]] = []
        for key in sorted(self.host.infos):
            info = self.host.infos[key]
            hooks = info.hooks or self.host.refused_hooks.get(key)
            if info.status == "failed":
                if hooks is None or hook in hooks:
                    suspects.append((info, hooks))
            elif info.status == "disabled" and hooks is None:
                # an entry point disabled before it was imported (an entry-point
                # name clash): its components are unknown too
                suspects.append((info, None))
        if not suspects:
            return UnknownComponentError(kind, name, self.names(kind))
        return _UnloadedComponentError(kind, name, self.names(kind), hook, suspects)

    def find(self, kind: str, name: object) -> Component | None:
        """The component of ``kind`` called ``name``, or None (also when ``name`` is not
        a string, e.g. a policy object given to :func:`schedlab.simulate`)."""
        if not isinstance(name, str) or kind not in self._aliases:
            return None
        canonical = self._aliases[kind].get(name)
        return None if canonical is None else self._by_kind[kind][canonical]

    def has(self, kind: str, name: str) -> bool:
        """True if some plugin provides ``name`` (or alias) of ``kind``."""
        return name in self._aliases[kind]

    # Convenience lookups, typed by kind.
    def reader(self, name: str) -> ReaderSpec:
        """The reader called ``name``."""
        return self.get("reader", name)

    def writer(self, name: str) -> WriterSpec:
        """The writer called ``name``."""
        return self.get("writer", name)

    def policy(self, name: str) -> PolicySpec:
        """The priority policy called ``name``."""
        return self.get("policy", name)

    def backfill(self, name: str) -> BackfillSpec:
        """The backfilling strategy called ``name``."""
        return self.get("backfill", name)

    def estimator(self, name: str) -> EstimatorSpec:
        """The run-time estimator called ``name``."""
        return self.get("estimator", name)

    def metric(self, name: str) -> MetricSpec:
        """The metric called ``name``."""
        return self.get("metric", name)

    def statistic(self, name: str) -> StatisticSpec:
        """The plugin statistic called ``name``."""
        return self.get("statistic", name)  # type: ignore[return-value]

    def generator(self, name: str) -> GeneratorSpec:
        """The workload generator called ``name``."""
        return self.get("generator", name)

    @property
    def converter(self) -> cattrs.Converter:
        """schedlab's one cattrs converter, with every plugin's hooks registered."""
        if self._converter is None:
            from .converters import make_converter

            converter = make_converter()
            for impl in self.host.pm.hook.schedlab_converter_hooks.get_hookimpls():
                info = self._info(impl.plugin_name)
                try:
                    with _stdout_to_stderr():
                        impl.function(converter=converter)
                except Exception as exc:
                    if info.builtin:
                        raise
                    raise self._runtime_error(exc, info, "in schedlab_converter_hooks") from exc
            self._converter = converter
        return self._converter

    def plugin_infos(self) -> list[PluginInfo]:
        """Every plugin seen (loaded, failed, disabled or blocked), sorted by name."""
        return [self.host.infos[k] for k in sorted(self.host.infos)]

    def components_of(self, plugin_name: str) -> list[tuple[str, Component]]:
        """``(kind, component)`` pairs provided by one plugin."""
        return [
            (kind, comp)
            for kind, comps in self._by_kind.items()
            for comp in comps.values()
            if comp.provider == plugin_name
        ]

    # ------------------------------------------------------- run-time attribution

    def plugin_of(self, component: Component) -> PluginInfo | None:
        """The plugin that provided ``component`` (None for a record not registered)."""
        return self.host.infos.get(component.provider) if component.provider else None

    @contextlib.contextmanager
    def blame(self, *components: Component | None) -> Iterator[None]:
        """Run the block as a call into ``components`` (None entries are ignored):
        an unexpected exception raised there by a third-party plugin becomes a
        one-line :class:`~schedlab.errors.PluginRuntimeError` naming the plugin, its
        distribution and the component.

        What the block prints goes to stderr (see :func:`_stdout_to_stderr`), so
        that a component's prints cannot corrupt a command's output (``--json``,
        ``convert IN -``); a command's own output (a :class:`CommandSpec`) is left
        on stdout.

        Left unchanged: :class:`~schedlab.errors.SchedlabError` (a plugin's own
        ``FormatError`` ...), ``OSError`` (the CLI names the file), anything that is
        not an ``Exception`` or ``SystemExit`` (``KeyboardInterrupt``), and exceptions when only
        built-in components are involved (those are schedlab's own bugs). With
        several components (a simulation's policy, backfilling and estimator) the
        innermost traceback frame in a third-party plugin's package decides; when no
        frame is in one, the message names every third-party component used.

        >>> with registry.blame(reader):                      # doctest: +SKIP
        ...     workload = reader.read(path)
        """
        quiet = (
            contextlib.nullcontext()
            if any(isinstance(c, CommandSpec) for c in components)
            else _stdout_to_stderr()
        )
        try:
            with quiet:
                yield
        except (SchedlabError, OSError):
            raise
        except (Exception, SystemExit) as exc:  # a plugin's sys.exit() is its fault too
            error = self.attribute(exc, [c for c in components if c is not None])
            if error is None:
                raise
            raise error from exc

    @contextlib.contextmanager
    def blame_names(self, *uses: tuple[str, object]) -> Iterator[None]:
        """:meth:`blame` for components given as ``(kind, name)`` pairs, as the CLI
        passes them to :func:`schedlab.simulate` (names that are not registered, and
        objects, are skipped)."""
        with self.blame(*(self.find(kind, name) for kind, name in uses)):
            yield

    def attribute(
        self, exc: BaseException, components: Sequence[Component]
    ) -> PluginRuntimeError | None:
        """The :class:`PluginRuntimeError` for ``exc`` raised while ``components``
        ran, or None when no third-party plugin is involved (see :meth:`blame`)."""
        third: list[tuple[Component, PluginInfo]] = []
        for component in components:
            info = self.plugin_of(component)
            if info is not None and not info.builtin:
                third.append((component, info))
        if not third:
            return None
        culprit = _innermost(exc, third)
        if (
            culprit is None
            and len({info.name for _, info in third}) == 1
            and (len(components) == 1 or len(third) == len(components))
        ):
            culprit = third[0]
        if culprit is not None:
            component, info = culprit
            where = f"in {_kind_of(component)} {component.name!r}"
            return self._runtime_error(exc, info, where)
        used = "; ".join(f"{_kind_of(c)} {c.name!r} of {info.describe()}" for c, info in third)
        first = third[0][1]
        return PluginRuntimeError(
            f"{_one_line(exc)}, raised while running with third-party components: {used} "
            "(a bug in one of them, or in schedlab: --debug shows the traceback; "
            "SCHEDLAB_BLOCK_PLUGINS disables a plugin)",
            plugin=first.name,
            distribution=first.distribution,
            version=first.version,
        )

    def check_returned(self, component: Component, value: object, expected: type) -> None:
        """Check that ``value`` (what ``component``'s function returned) is an
        ``expected`` instance: if not, raise a
        :class:`~schedlab.errors.PluginRuntimeError` naming a third-party component
        and its plugin, or ``TypeError`` (schedlab's own bug) for a built-in one.

        >>> registry.check_returned(reader, workload, Workload)  # doctest: +SKIP
        """
        if isinstance(value, expected):
            return
        problem = f"returned {type(value).__name__}, expected {expected.__name__}"
        info = self.plugin_of(component)
        if info is None or info.builtin:
            raise TypeError(f"{_kind_of(component)} {component.name!r} {problem}")
        raise _plugin_bug(
            info, f"{_kind_of(component)} {component.name!r} of {info.describe()} {problem}"
        )

    @staticmethod
    def _runtime_error(exc: BaseException, info: PluginInfo, where: str) -> PluginRuntimeError:
        return _plugin_bug(
            info,
            f"{info.describe()} failed {where}: {_one_line(exc)}",
            "report it to its authors, --debug shows the traceback",
        )


#: The state of :func:`_stdout_to_stderr`: how many blocks are inside, and the
#: stdout to restore when the last one ends (guarded by the lock: a block entered in
#: one thread and left in another must not leave stdout redirected for good).
_redirect_lock = threading.Lock()
_redirect_depth = 0
_redirect_saved: Any = None


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send ``sys.stdout`` to ``sys.stderr`` inside the block: what a plugin's
    component prints while it runs must not corrupt a command's machine-readable
    output. Nested and concurrent blocks share one redirection, undone when the
    last of them ends (unless something else replaced ``sys.stdout`` meanwhile,
    which is then left alone). Writes to file descriptor 1 (a C extension, a
    subprocess) are not redirected."""
    global _redirect_depth, _redirect_saved
    with _redirect_lock:
        if _redirect_depth == 0:
            _redirect_saved = sys.stdout
            if sys.stderr is not None:
                sys.stdout = sys.stderr
        _redirect_depth += 1
        target = sys.stdout
    try:
        yield
    finally:
        with _redirect_lock:
            _redirect_depth -= 1
            if _redirect_depth == 0:
                if sys.stdout is target:
                    sys.stdout = _redirect_saved
                _redirect_saved = None


class _DisabledComponentError(UnknownComponentError):
    """A component asked for by name whose plugin provides it but was disabled while
    the registry was built: says so, and why, instead of "unknown"."""

    def __init__(self, kind: str, name: str, known: list[str], info: PluginInfo) -> None:
        super().__init__(kind, name, known)
        reason = info.error.rstrip(".")
        SchedlabError.__init__(
            self,
            f"{kind} {name!r} is provided by {info.describe()}, which is {info.status}: "
            f"{reason} (`schedlab plugins {info.name}` shows it)",
        )


class _UnloadedComponentError(UnknownComponentError):
    """A component asked for by name that no loaded plugin provides, while some
    plugin that might provide it failed (or was disabled) before its components were
    known: names that plugin (at most three), and why, instead of a bare "unknown"."""

    def __init__(
        self,
        kind: str,
        name: str,
        known: list[str],
        hook: str | None,
        suspects: Sequence[tuple[PluginInfo, tuple[str, ...] | None]],
    ) -> None:
        super().__init__(kind, name, known)
        parts = []
        for info, hooks in suspects[:3]:
            what = f"which implements {hook}" if hooks else "whose components are unknown"
            reason = info.error.rstrip(".")
            verb = "is disabled" if info.status == "disabled" else "failed to load"
            parts.append(
                f"{info.describe()}, {what}, {verb}: {reason} "
                f"(`schedlab plugins {info.name}` shows it)"
            )
        if len(suspects) > 3:
            parts.append(f"and {len(suspects) - 3} more failed plugin(s) (`schedlab plugins`)")
        choices = ", ".join(sorted(known)) or "none installed"
        SchedlabError.__init__(
            self,
            f"no loaded plugin provides {kind} {name!r}; {'; '.join(parts)} (available: {choices})",
        )


def _plugin_bug(
    info: PluginInfo, message: str, advice: str = "report it to its authors"
) -> PluginRuntimeError:
    """The error for a bug in ``info``'s plugin: ``message``, what to do, and how to
    disable the plugin."""
    return PluginRuntimeError(
        f"{message} (a bug in that plugin: {advice}; "
        f"SCHEDLAB_BLOCK_PLUGINS={info.name} disables it)",
        plugin=info.name,
        distribution=info.distribution,
        version=info.version,
    )


def _kind_of(component: Component) -> str:
    return _KIND_OF.get(type(component), "component")


def _packages_of(component: Component, info: PluginInfo) -> set[str]:
    """Top-level packages holding a component's code: its plugin's module and the
    modules of the record's callables."""
    modules = {info.module.partition(":")[0]}
    for field in attrs.fields(type(component)):
        value = getattr(component, field.name)
        if callable(value):
            module = getattr(value, "__module__", None)
            if isinstance(module, str):
                modules.add(module)
    return {m.split(".")[0] for m in modules if m} - {"schedlab", "builtins"}


def _innermost(
    exc: BaseException, third: list[tuple[Component, PluginInfo]]
) -> tuple[Component, PluginInfo] | None:
    """The third-party component whose package holds the innermost traceback frame."""
    packages = [(_packages_of(c, info), (c, info)) for c, info in third]
    found = None
    tb: types.TracebackType | None = exc.__traceback__
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "")
        top = module.split(".")[0] if isinstance(module, str) else ""
        for tops, pair in packages:
            if top in tops:
                found = pair
                break
        tb = tb.tb_next
    return found


#: What cannot be a plugin in ``build_registry(plugins=...)``: a name without its
#: module, a number, a container (a list nested in the list by mistake).
_NOT_PLUGINS = (str, bytes, int, float, complex, list, dict, set, frozenset)


def _plugin_pairs(plugins: Iterable[object]) -> list[tuple[str, object]]:
    """``(name, plugin)`` for each item of ``build_registry(plugins=...)``: a
    ``(name, plugin)`` pair as it is, a module or object named by the last part of
    its ``__name__`` (of its class's name for an object without one), as
    :func:`schedlab.testing.plugin_registry` names it. Anything else is a
    :class:`~schedlab.errors.UsageError` saying what was expected."""
    expected = "expected a module (or object) implementing hooks, or a (name, plugin) pair"
    if isinstance(plugins, (str, bytes)) or not isinstance(plugins, Iterable):
        raise UsageError(
            "build_registry(plugins=...): expected a list of modules (or objects) "
            "implementing hooks and (name, plugin) pairs, got "
            f"{type(plugins).__name__} {_short_repr(plugins)}"
        )
    pairs = []
    for position, item in enumerate(plugins):
        if isinstance(item, tuple):
            if len(item) != 2 or not isinstance(item[0], str) or not item[0]:
                raise UsageError(
                    f"build_registry(plugins=...): item {position} is "
                    f"{_short_repr(item)}: a pair must be (name, plugin) with a non-empty "
                    "name string"
                )
            name, plugin = item
        else:
            plugin = item
            name = getattr(item, "__name__", None)
            if not isinstance(name, str):
                name = type(item).__name__
            name = name.rsplit(".", 1)[-1]
        if plugin is None or isinstance(plugin, (*_NOT_PLUGINS, tuple)):
            raise UsageError(
                f"build_registry(plugins=...): item {position}: {expected}, got "
                f"{type(plugin).__name__} {_short_repr(plugin)}"
            )
        pairs.append((name, plugin))
    return pairs


def _short_repr(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def build_registry(
    plugins: Iterable[object] = (),
    entry_points: Iterable[metadata.EntryPoint] | bool | None = True,
    strict: bool | None = None,
) -> Registry:
    """Build a fresh registry: entry points (unless ``entry_points=False``) plus
    ``plugins``, each a module (or object) implementing hooks, registered under the
    last part of its ``__name__``, or a ``(name, module_or_object)`` pair. Tests use
    this to get a manager of their own that installed third-party plugins cannot leak
    into. A faulty plugin given here is a :class:`~schedlab.errors.PluginError`;
    anything else than a plugin or a pair is a :class:`~schedlab.errors.UsageError`.

    >>> import my_plugin                                                 # doctest: +SKIP
    >>> build_registry(plugins=[my_plugin, ("other", other_module)])     # doctest: +SKIP
    """
    pairs = _plugin_pairs(plugins)  # before loading anything: a usage error is cheap
    host = PluginHost(strict=_truthy("SCHEDLAB_STRICT_PLUGINS") if strict is None else strict)
    # What plugins print while imported and while their registration hooks run goes
    # to stderr: on stdout it would corrupt a command's output (``--json``).
    with contextlib.redirect_stdout(sys.stderr):
        if entry_points is not False:
            host.load_entry_points(
                None if entry_points is True or entry_points is None else entry_points, strict
            )
        for name, plugin in pairs:
            host.register(plugin, name)
        return Registry(host)


_registry: Registry | None = None
_lock = threading.Lock()


def get_registry() -> Registry:
    """The process-wide registry, built on first use."""
    global _registry
    if _registry is None:
        with _lock:
            if _registry is None:
                _registry = build_registry()
    return _registry


def set_registry(registry: Registry | None) -> Registry | None:
    """Replace the process-wide registry (``None`` rebuilds it on next use); returns
    the previous one. For tests and embedders that register plugins by hand."""
    global _registry
    previous, _registry = _registry, registry
    return previous
