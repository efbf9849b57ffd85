"""Plugin discovery, guarded loading, and the registry of components.

The plugin manager is built on first use (:func:`get_registry`), never at import
time. Entry points of group ``schedlab`` are loaded one by one, each inside its own
``try``: a plugin that fails to import produces a warning naming the entry point and
its distribution, and every other plugin keeps working. Environment controls:

``SCHEDLAB_STRICT_PLUGINS=1``
    a plugin that fails to load is an error instead of a warning.
``SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD=1``
    load only the plugins of the ``schedlab`` distribution itself.
``SCHEDLAB_ALLOW_PLUGINS=a,b``
    load third-party plugins only if their entry-point name is listed.
``SCHEDLAB_BLOCK_PLUGINS=a,b``
    never load these entry points (built-in ones included).
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Iterable, Sequence
from importlib import metadata
from typing import Any

import attrs
import pluggy

from . import compat, hookspecs
from .errors import PluginError, UnknownComponentError
from .plugin_types import COMPONENT_KINDS, Component

ENTRY_POINT_GROUP = "schedlab"
OWN_DISTRIBUTION = "schedlab"


class PluginLoadWarning(UserWarning):
    """A plugin could not be loaded; the others keep working."""


@attrs.define(slots=True)
class PluginInfo:
    """What ``schedlab plugins`` reports about one plugin (entry point)."""

    name: str
    distribution: str
    version: str
    module: str
    status: str  # "loaded", "failed" or "blocked"
    error: str = ""
    hooks: tuple[str, ...] = ()


def _env_list(name: str) -> set[str] | None:
    raw = os.environ.get(name)
    if raw is None:
        return None
    return {item.strip() for item in raw.split(",") if item.strip()}


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def _dist_of(ep: metadata.EntryPoint) -> tuple[str, str]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "?", "?"
    return dist.metadata["Name"] or "?", dist.version or "?"


class PluginHost:
    """A pluggy manager plus provenance and the failures seen while loading."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.infos: dict[str, PluginInfo] = {}

    def register(
        self, plugin: Any, name: str, distribution: str = "<local>", version: str = ""
    ) -> None:
        """Register a module or object as plugin ``name`` (used by tests and notebooks).

        Raises :class:`~schedlab.compat.IncompatiblePluginError` when the plugin
        declares an API range this schedlab is outside of; deprecated hooks it
        implements warn naming it (see :mod:`schedlab.compat`)."""
        compat.check_api_range(plugin, name, distribution, version)
        with compat.deprecations(name, distribution, version):
            self.pm.register(plugin, name=name)
        hooks = tuple(
            sorted(h.name for h in self.pm.get_hookcallers(plugin) or ())  # type: ignore[union-attr]
        )
        module = getattr(plugin, "__name__", type(plugin).__name__)
        self.infos[name] = PluginInfo(name, distribution, version, module, "loaded", "", hooks)

    def load_entry_points(
        self,
        entry_points: Iterable[metadata.EntryPoint] | None = None,
        strict: bool | None = None,
    ) -> None:
        """Load and register every entry point of the ``schedlab`` group, guarded."""
        if strict is None:
            strict = _truthy("SCHEDLAB_STRICT_PLUGINS")
        if entry_points is None:
            entry_points = metadata.entry_points(group=ENTRY_POINT_GROUP)
        blocked = _env_list("SCHEDLAB_BLOCK_PLUGINS") or set()
        allowed = _env_list("SCHEDLAB_ALLOW_PLUGINS")
        no_autoload = _truthy("SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD")
        for ep in sorted(entry_points, key=lambda e: e.name):
            dist, version = _dist_of(ep)
            third_party = dist != OWN_DISTRIBUTION
            if ep.name in self.infos and self.infos[ep.name].status == "loaded":
                other = self.infos[ep.name]
                raise PluginError(
                    f"plugin name {ep.name!r} is used by two entry points: "
                    f"{other.module} ({other.distribution}) and {ep.value} ({dist})"
                )
            if (
                ep.name in blocked
                or (third_party and no_autoload)
                or (third_party and allowed is not None and ep.name not in allowed)
            ):
                self.infos[ep.name] = PluginInfo(ep.name, dist, version, ep.value, "blocked")
                continue
            try:
                plugin = ep.load()
                self.register(plugin, ep.name, dist, version)
            except Exception as exc:
                reason = f"{type(exc).__name__}: {exc}"
                self.infos[ep.name] = PluginInfo(
                    ep.name, dist, version, ep.value, "failed", reason
                )
                message = (
                    f"schedlab plugin {ep.name!r} ({ep.value}) from distribution "
                    f"{dist} {version} failed to load: {reason}"
                )
                if strict:
                    raise PluginError(message) from exc
                warnings.warn(message, PluginLoadWarning, stacklevel=2)


class Registry:
    """Every component provided by the registered plugins, by kind and name.

    Built once from a :class:`PluginHost`; lookups raise
    :class:`~schedlab.errors.UnknownComponentError` with the list of known names.
    """

    def __init__(self, host: PluginHost) -> None:
        self.host = host
        self._by_kind: dict[str, dict[str, Component]] = {}
        self._aliases: dict[str, dict[str, str]] = {}
        self._converter: Any = None
        for kind, (hook_name, record_type) in COMPONENT_KINDS.items():
            self._collect(kind, hook_name, record_type)

    def _collect(self, kind: str, hook_name: str, record_type: type[Component]) -> None:
        caller = getattr(self.host.pm.hook, hook_name)
        found: dict[str, Component] = {}
        names: dict[str, str] = {}  # name or alias -> canonical name
        for impl in caller.get_hookimpls():
            try:
                records = list(impl.function() or ())
            except Exception as exc:
                raise PluginError(
                    f"plugin {impl.plugin_name!r} failed in {hook_name}: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            for record in records:
                if not isinstance(record, record_type):
                    raise PluginError(
                        f"plugin {impl.plugin_name!r}: {hook_name} returned "
                        f"{type(record).__name__}, expected {record_type.__name__}"
                    )
                record = attrs.evolve(record, provider=impl.plugin_name)
                for label in (record.name, *record.aliases):
                    if label in names:
                        first = found[names[label]]
                        raise PluginError(
                            f"{kind} name {label!r} is claimed by two plugins: "
                            f"{first.provider!r} and {record.provider!r}"
                        )
                    names[label] = record.name
                found[record.name] = record
        self._by_kind[kind] = dict(sorted(found.items()))
        self._aliases[kind] = names

    def names(self, kind: str) -> list[str]:
        """Canonical names of every component of ``kind``, sorted."""
        return list(self._by_kind[kind])

    def all(self, kind: str) -> list[Any]:
        """Every component of ``kind``, sorted by name."""
        return list(self._by_kind[kind].values())

    def get(self, kind: str, name: str) -> Any:
        """The component of ``kind`` called ``name`` (or one of its aliases)."""
        canonical = self._aliases[kind].get(name)
        if canonical is None:
            raise UnknownComponentError(kind, name, self.names(kind))
        return self._by_kind[kind][canonical]

    def has(self, kind: str, name: str) -> bool:
        """True if some plugin provides ``name`` (or alias) of ``kind``."""
        return name in self._aliases[kind]

    # Convenience lookups, typed by kind.
    def reader(self, name: str) -> Any:
        """The reader called ``name``."""
        return self.get("reader", name)

    def writer(self, name: str) -> Any:
        """The writer called ``name``."""
        return self.get("writer", name)

    def policy(self, name: str) -> Any:
        """The priority policy called ``name``."""
        return self.get("policy", name)

    def backfill(self, name: str) -> Any:
        """The backfilling strategy called ``name``."""
        return self.get("backfill", name)

    def estimator(self, name: str) -> Any:
        """The run-time estimator called ``name``."""
        return self.get("estimator", name)

    def metric(self, name: str) -> Any:
        """The metric called ``name``."""
        return self.get("metric", name)

    def generator(self, name: str) -> Any:
        """The workload generator called ``name``."""
        return self.get("generator", name)

    @property
    def converter(self) -> Any:
        """schedlab's one cattrs converter, with every plugin's hooks registered."""
        if self._converter is None:
            from .converters import make_converter

            converter = make_converter()
            self.host.pm.hook.schedlab_converter_hooks(converter=converter)
            self._converter = converter
        return self._converter

    def plugin_infos(self) -> list[PluginInfo]:
        """Every plugin seen (loaded, failed or blocked), sorted by name."""
        return [self.host.infos[k] for k in sorted(self.host.infos)]

    def components_of(self, plugin_name: str) -> list[tuple[str, Component]]:
        """``(kind, component)`` pairs provided by one plugin."""
        return [
            (kind, comp)
            for kind, comps in self._by_kind.items()
            for comp in comps.values()
            if comp.provider == plugin_name
        ]


def build_registry(
    plugins: Sequence[tuple[str, Any]] = (),
    entry_points: Iterable[metadata.EntryPoint] | bool | None = True,
    strict: bool | None = None,
) -> Registry:
    """Build a fresh registry: entry points (unless ``entry_points=False``) plus
    ``plugins`` given as ``(name, module_or_object)`` pairs. Tests use this to get a
    manager of their own that installed third-party plugins cannot leak into."""
    host = PluginHost()
    if entry_points is not False:
        host.load_entry_points(None if entry_points is True else entry_points, strict)
    for name, plugin in plugins:
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

