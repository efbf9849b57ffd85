"""The typed records that registration hooks return.

Each hook of :mod:`schedlab.hookspecs` returns an iterable of one of these records.
They are validated when the registry is built (a name must be a non-empty lower-case
word, callables must be callable) and sorted by name, so the order plugins are
registered in never matters.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs

from .errors import UsageError

if TYPE_CHECKING:
    import click
    import numpy as np

    from .model import Workload
    from .sim.protocols import Backfill, Estimator, Policy
    from .sim.resources import Allocator

#: What a metric's ``compute`` returns: one value per job (``per_job``) or a number
#: (``None`` when it has no value).
MetricValue: TypeAlias = "float | np.ndarray | None"

#: Statistic names the metrics engine keeps for itself (and every ``pNN``).
RESERVED_STATISTICS: tuple[str, ...] = ("mean", "median", "min", "max", "count", "unknown")

#: Values of :attr:`MetricSpec.aggregation` (``""``: not declared).
AGGREGATIONS: tuple[str, ...] = ("", "mean", "ratio", "extreme")

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_.+-]*$")


def _valid_name(instance: object, attribute: attrs.Attribute, value: str) -> None:
    if not isinstance(value, str) or not _NAME_RE.match(value):
        raise ValueError(
            f"{type(instance).__name__}.{attribute.name} must be a lower-case name, got {value!r}"
        )


def _valid_aliases(instance: object, attribute: attrs.Attribute, value: tuple) -> None:
    for alias in value:
        _valid_name(instance, attribute, alias)


def _callable(instance: object, attribute: attrs.Attribute, value: object) -> None:
    if not callable(value):
        raise ValueError(f"{type(instance).__name__}.{attribute.name} must be callable")


def _is_bool(value: object) -> bool:
    """True for ``True``/``False`` and numpy's booleans (which ``numbers`` ignores)."""
    kind = type(value)
    return isinstance(value, bool) or (
        kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_")
    )


def _is_nan(value: object) -> bool:
    """True for a float NaN (whole numbers, however large, are never NaN)."""
    return (
        isinstance(value, numbers.Real)
        and not isinstance(value, numbers.Integral)
        and not _is_bool(value)
        and math.isnan(value)
    )


def _bound_text(value: float) -> str:
    return str(int(value)) if isinstance(value, int) or float(value).is_integer() else f"{value:g}"


def _valid_bound(instance: OptionSpec, attribute: attrs.Attribute, value: object) -> None:
    if value is None:
        return
    if _is_bool(value) or not isinstance(value, numbers.Real) or _is_nan(value):
        raise ValueError(f"OptionSpec {instance.name!r}: {attribute.name} must be a number or None")


@attrs.define(frozen=True, slots=True)
class OptionSpec:
    """One option a component accepts (``--option name=value`` on the command line).

    ``type`` converts the value (``int``, ``float``, ``str``, ``bool`` or any
    callable); ``choices`` restricts the values; ``min`` and ``max`` bound a numeric
    value (inclusive, unless ``min_open``/``max_open``: the bound itself is
    refused; ``None``: unbounded); NaN is refused unless ``allow_nan``.
    Values arrive as text from the command line, or as typed values from a TOML or
    JSON file or the Python API, and both get the same checks (see :meth:`convert`).
    """

    #: The option's name: the key on the command line (``-P name=value``) and the
    #: keyword the component receives.
    name: str
    #: Converts the value (``int``, ``float``, ``str``, ``bool`` or any callable);
    #: text and typed values get the same checks (see :meth:`convert`).
    type: Callable[[str], Any] = str
    #: The value when the option is not given (``None``: unset); checked like a
    #: given value when the spec is created.
    default: Any = None
    #: One line on what the option does, shown by ``schedlab plugins``; say its
    #: unit and bounds there.
    help: str = ""
    #: The values allowed (compared after conversion by :attr:`type`); ``None``:
    #: any value.
    choices: tuple[Any, ...] | None = None
    #: Smallest value allowed (inclusive), ``None`` for no bound.
    min: float | None = attrs.field(default=None, kw_only=True, validator=_valid_bound)
    #: Largest value allowed (inclusive), ``None`` for no bound.
    max: float | None = attrs.field(default=None, kw_only=True, validator=_valid_bound)
    #: Accept NaN for a numeric option (refused by default).
    allow_nan: bool = attrs.field(default=False, kw_only=True)
    #: ``min`` itself is refused (a rate that must be positive: ``min=0,
    #: min_open=True``).
    min_open: bool = attrs.field(default=False, kw_only=True)
    #: ``max`` itself is refused.
    max_open: bool = attrs.field(default=False, kw_only=True)

    def __attrs_post_init__(self) -> None:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"OptionSpec {self.name!r}: min {self.min} is above max {self.max}")
        self._check_default()

    def _check_default(self) -> None:
        """A default other than ``None`` (unset) must pass the checks a value given
        by the user gets (:meth:`convert`): of the declared type (for ``int``,
        ``float``, ``bool`` and ``str``; a converter of the plugin's own is not called
        on it), not NaN unless ``allow_nan``, one of ``choices``, within the bounds.
        Otherwise ``ValueError`` naming the option (the plugin is disabled)."""
        default = self.default
        if default is None:
            return
        kind = self.type
        if kind in _DEFAULT_TYPES:
            article, label = _DEFAULT_TYPES[kind]
            wrong = (
                (kind is str and not isinstance(default, str))
                or (kind is bool and not _is_bool(default))
                or (
                    kind is int and (_is_bool(default) or not isinstance(default, numbers.Integral))
                )
                or (kind is float and (_is_bool(default) or not isinstance(default, numbers.Real)))
            )
            if wrong:
                raise ValueError(
                    f"OptionSpec {self.name!r}: default {default!r} is not {article} {label}"
                )
        if _is_nan(default) and not self.allow_nan:
            raise ValueError(
                f"OptionSpec {self.name!r}: default {default!r} is NaN, which needs allow_nan=True"
            )
        if self.choices is not None and not _is_nan(default) and default not in self.choices:
            allowed = ", ".join(map(str, self.choices))
            raise ValueError(
                f"OptionSpec {self.name!r}: default {default!r} is not one of {allowed}"
            )
        if not _is_bool(default) and isinstance(default, numbers.Real) and not _is_nan(default):
            if self.out_of_bounds(default):
                raise ValueError(
                    f"OptionSpec {self.name!r}: default {default!r} is not {self.bounds_text}"
                )

    @property
    def bounds_text(self) -> str:
        """The bounds in words (``"in 1..10000"``, ``">= 0"``; with an open bound
        ``"in (0, 10]"``, ``"> 0"``), ``""`` when unbounded."""
        low, high = self.min, self.max
        if low is not None and high is not None:
            if self.min_open or self.max_open:
                left = "(" if self.min_open else "["
                right = ")" if self.max_open else "]"
                return f"in {left}{_bound_text(low)}, {_bound_text(high)}{right}"
            return f"in {_bound_text(low)}..{_bound_text(high)}"
        if low is not None:
            return f"{'>' if self.min_open else '>='} {_bound_text(low)}"
        if high is not None:
            return f"{'<' if self.max_open else '<='} {_bound_text(high)}"
        return ""

    def out_of_bounds(self, value: Any) -> bool:
        """True when the number ``value`` lies outside ``min`` .. ``max`` (or on
        an open bound)."""
        low, high = self.min, self.max
        if low is not None and (value < low or (self.min_open and value == low)):
            return True
        return high is not None and (value > high or (self.max_open and value == high))

    def _typed(self, raw: Any, owner: str) -> Any:
        """``raw`` converted by :attr:`type` (see :meth:`convert`)."""
        kind = self.type
        label = getattr(kind, "__name__", "value")
        if label.startswith("_") or label == "<lambda>":  # a private converter's name
            label = "value"

        def bad(reason: str) -> UsageError:
            return UsageError(f"{owner}: option {self.name}={raw!r}: expected {label} ({reason})")

        if kind is str:
            return raw
        if kind in (int, float) and isinstance(raw, str) and not raw.strip():
            raise bad("the value is empty")
        if kind is bool:
            if _is_bool(raw):
                return bool(raw)
            lowered = raw.strip().lower() if isinstance(raw, str) else None
            if lowered not in _BOOL_WORDS:
                raise bad("true/false, yes/no, on/off or 1/0")
            return lowered in _TRUE_WORDS
        if kind in (int, float) and isinstance(raw, str) and not _plain_text(raw):
            # Python's int() and float() also read other scripts' digits ("５")
            # and underscores ("1_000"); the formats refuse both, so do options.
            raise bad("ASCII digits only, no underscores")
        if kind is int:
            if isinstance(raw, str):
                try:
                    return int(raw)
                except ValueError as exc:
                    # A number written otherwise ("3.0", "3e2") is taken when it is
                    # exactly a whole number, as a float would be.
                    whole = _whole_number(raw)
                    if whole is None:
                        raise bad(str(exc)) from None
                    if whole is False:
                        raise bad("a whole number") from None
                    return whole
            if _is_bool(raw):
                raise bad("a whole number, not a boolean")
            if isinstance(raw, numbers.Integral):
                return int(raw)
            if isinstance(raw, numbers.Real) and math.isfinite(raw) and float(raw).is_integer():
                return int(float(raw))
            raise bad("a whole number")
        if kind is float:
            if _is_bool(raw) or not isinstance(raw, (str, numbers.Real)):
                raise bad("a number")
            try:
                return float(raw)
            except (OverflowError, ValueError) as exc:
                raise bad(str(exc)) from None
        # A converter of the plugin's own: text is always converted; a typed value
        # is converted too, unless the converter only reads text (it then fails with
        # TypeError or AttributeError and the value is used as given).
        try:
            return kind(raw)
        except ValueError as exc:
            raise bad(str(exc)) from None
        except (TypeError, AttributeError) as exc:
            if isinstance(raw, str):
                raise bad(str(exc)) from None
            return raw

    def convert(self, raw: Any, owner: str) -> Any:
        """Convert and check a value, raising a one-line :class:`UsageError` that names
        ``owner`` (the component, e.g. ``"policy psp"``) and the option.

        Text (the command line) and typed values (a TOML or JSON file, the Python
        API) get the same checks: an ``int`` option takes a whole number (text, an
        integer, or a float with no fractional part), never a boolean; a ``float``
        option takes a number (text, an integer or a float), never a boolean; a
        ``bool`` option takes a boolean or one of ``true``/``false``, ``yes``/``no``,
        ``on``/``off``, ``1``/``0``; a converter of the plugin's own receives text
        and typed values alike and raises ``ValueError`` to refuse one. NaN is
        refused for a numeric option unless ``allow_nan``; then ``choices``, ``min``
        and ``max`` are checked. ``None`` stands for "unset" when it is the default.
        """
        if raw is None and self.default is None:
            return None
        value = self._typed(raw, owner)
        numeric = isinstance(value, numbers.Real) and not _is_bool(value)
        if _is_nan(value):
            if not self.allow_nan:
                raise UsageError(f"{owner}: option {self.name}={raw!r}: must be a number, not NaN")
            return value
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(map(str, self.choices))
            raise UsageError(f"{owner}: option {self.name}={raw!r}: expected one of {allowed}")
        if numeric and self.out_of_bounds(value):
            raise UsageError(f"{owner}: option {self.name}={raw!r}: must be {self.bounds_text}")
        return value


#: The option types whose default is checked for its type: type -> (article, name).
_DEFAULT_TYPES: dict[Any, tuple[str, str]] = {
    int: ("an", "int"),
    float: ("a", "float"),
    bool: ("a", "bool"),
    str: ("a", "str"),
}


#: What separates the items of a list-valued option (``edges=0.2/0.4``).
LIST_SEPARATORS = "/,; \t"


def list_items(text: str) -> list[str]:
    """The items of a list-valued option's text, split at ``/`` (the separator that
    works everywhere, also inside a ``name:key=value,...`` spec, whose commas
    separate options), ``,``, ``;`` or blanks; empty items are dropped:
    ``"0.2/0.4, 0.6"`` -> ``["0.2", "0.4", "0.6"]``. Plugins with list options
    use it so that every list is written the same way."""
    parts = [text]
    for sep in LIST_SEPARATORS:
        parts = [piece for part in parts for piece in part.split(sep)]
    return [p for p in parts if p]


def _plain_text(text: str) -> bool:
    """Whether ``text`` is ASCII without underscores (a number as the formats take it)."""
    return text.isascii() and "_" not in text


def _whole_number(text: str) -> int | bool | None:
    """``text`` read as a decimal number: the ``int`` when it is exactly a whole
    number (``"3.0"``, ``"3e2"``, ``"-0.0"``), ``False`` for another number (a
    fraction, infinite, NaN, or beyond a float's range), ``None`` for no number."""
    try:
        number = Decimal(text.strip())
    except InvalidOperation:
        return None
    if not number.is_finite() or not math.isfinite(float(number)):
        return False
    if number != number.to_integral_value():
        return False
    return int(number)


_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
_BOOL_WORDS = _TRUE_WORDS | {"0", "false", "no", "off"}


def _options_tuple(value: Iterable[OptionSpec]) -> tuple[OptionSpec, ...]:
    return tuple(value)


def _valid_options(instance: object, attribute: attrs.Attribute, value: tuple) -> None:
    """Each option an :class:`OptionSpec`, each name once (a second option of one
    name would silently shadow the first)."""
    owner = f"{type(instance).__name__} {getattr(instance, 'name', '?')!r}"
    seen: set[str] = set()
    for position, option in enumerate(value):
        if not isinstance(option, OptionSpec):
            raise ValueError(
                f"{owner}: option {position} is {type(option).__name__}, expected OptionSpec"
            )
        if option.name in seen:
            raise ValueError(f"{owner}: option {option.name!r} is declared twice")
        seen.add(option.name)


def _names_tuple(value: Iterable[str]) -> tuple[str, ...]:
    # A typed converter: with the builtin ``tuple`` mypy cannot infer what
    # ``aliases=`` and ``suffixes=`` accept.
    return tuple(value)


@attrs.define(frozen=True, slots=True, kw_only=True)
class Component:
    """Fields shared by every registered component."""

    name: str = attrs.field(validator=_valid_name)
    description: str = ""
    aliases: tuple[str, ...] = attrs.field(
        default=(), converter=_names_tuple, validator=_valid_aliases
    )
    options: tuple[OptionSpec, ...] = attrs.field(
        default=(), converter=_options_tuple, validator=_valid_options
    )
    #: Filled in by the registry: the plugin (entry point) that provided the component.
    provider: str = ""

    def parse_options(self, given: Mapping[str, Any], kind: str = "") -> dict[str, Any]:
        """Check ``given`` against :attr:`options`: unknown names and bad values raise
        :class:`UsageError`; defaults are filled in for the rest."""
        owner = f"{kind} {self.name}".strip()
        known = {o.name: o for o in self.options}
        unknown = sorted(set(given) - set(known))
        if unknown:
            allowed = ", ".join(sorted(known)) or "none"
            raise UsageError(f"{owner}: unknown option {unknown[0]!r} (options: {allowed})")
        out = {o.name: o.default for o in self.options}
        for key, raw in given.items():
            out[key] = known[key].convert(raw, owner)
        return out


@attrs.define(frozen=True, slots=True, kw_only=True)
class ReaderSpec(Component):
    """A trace reader.

    ``read(source, **options) -> Workload``: ``source`` is a path (file or, when
    ``reads_directories``, a folder) or an open binary file. ``sniff(head, name)``
    returns True when the first decompressed bytes ``head`` of the file named
    ``name`` look like this format; it must be specific (an ambiguous match between
    two readers is an error for the user).
    """

    #: ``read(source, **options) -> Workload``: reads a path (a folder when
    #: :attr:`reads_directories`) or an open binary file.
    read: Callable[..., Workload] = attrs.field(validator=_callable)
    #: The file suffixes the reader claims (``(".swf",)``), without compression
    #: suffixes; matched at the end of the name, ignoring case.
    suffixes: tuple[str, ...] = attrs.field(default=(), converter=_names_tuple)
    #: ``sniff(head, name) -> bool``: whether the file's first decompressed bytes look
    #: like this format; ``None``: the reader is chosen by suffix or by name only.
    sniff: Callable[[bytes, str], bool] | None = None
    #: ``source`` may be a folder (a trace of several tables, as Google's), not only
    #: a file.
    reads_directories: bool = False


@attrs.define(frozen=True, slots=True, kw_only=True)
class WriterSpec(Component):
    """A trace writer: ``write(workload, path, **options) -> None``.

    ``path`` is a temporary path with the same name as the target; schedlab renames
    it into place when ``write`` returns, so writers never need to be atomic
    themselves. Compression suffixes (.gz, .bz2, .xz) should be honoured with
    :func:`schedlab.open_output`.
    """

    #: ``write(workload, path, **options) -> None``: writes ``path``, a temporary
    #: path that schedlab renames into place when it returns.
    write: Callable[..., object] = attrs.field(validator=_callable)
    #: The output suffixes that choose this writer (``(".swf",)``), without
    #: compression suffixes; matched at the end of the name, ignoring case.
    suffixes: tuple[str, ...] = attrs.field(default=(), converter=_names_tuple)
    #: The writer makes a folder at ``path`` (tables, shards ...) instead of one
    #: file.
    writes_directories: bool = False


@attrs.define(frozen=True, slots=True, kw_only=True)
class PolicySpec(Component):
    """A priority policy: ``factory(**options)`` returns an object implementing the
    policy protocol of :mod:`schedlab.sim` (orders the wait queue, may observe
    submissions, starts and completions)."""

    #: ``factory(**options)`` returns the policy (the ``Policy`` protocol of
    #: :mod:`schedlab.sim.protocols`).
    factory: Callable[..., Policy] = attrs.field(validator=_callable)


@attrs.define(frozen=True, slots=True, kw_only=True)
class BackfillSpec(Component):
    """A backfilling strategy: ``factory(**options)`` returns a strategy object
    (the ``Backfill`` protocol of :mod:`schedlab.sim.protocols`)."""

    #: ``factory(**options)`` returns the strategy (the ``Backfill`` protocol of
    #: :mod:`schedlab.sim.protocols`).
    factory: Callable[..., Backfill] = attrs.field(validator=_callable)


@attrs.define(frozen=True, slots=True, kw_only=True)
class AllocationSpec(Component):
    """An allocation policy (which nodes a starting job gets on a platform):
    ``factory(**options)`` returns an object with ``allocate(view, demand)`` (the
    ``Allocator`` protocol of :mod:`schedlab.sim.resources`)."""

    #: ``factory(**options)`` returns the allocator (the ``Allocator`` protocol of
    #: :mod:`schedlab.sim.resources`).
    factory: Callable[..., Allocator] = attrs.field(validator=_callable)


@attrs.define(frozen=True, slots=True, kw_only=True)
class EstimatorSpec(Component):
    """A run-time estimator: ``factory(**options)`` returns what the scheduler sees
    instead of the true run time (see :mod:`schedlab.sim`)."""

    #: ``factory(**options)`` returns the estimator (the ``Estimator`` protocol of
    #: :mod:`schedlab.sim.protocols`).
    factory: Callable[..., Estimator] = attrs.field(validator=_callable)


@attrs.define(frozen=True, slots=True, kw_only=True)
class MetricSpec(Component):
    """A metric.

    ``compute(columns, **options)`` receives a :class:`~schedlab.model.JobColumns`
    (plus ``procs=`` machine size where relevant) and returns a per-job numpy array
    when ``per_job`` is true, else a number. ``unit`` is printed in tables.
    """

    #: ``compute(columns, **options)``: one value per job (NaN = unknown) when
    #: :attr:`per_job`, else one number for the schedule (``None``: no value).
    compute: Callable[..., MetricValue] = attrs.field(validator=_callable)
    #: The unit of the values, printed in tables (``"s"``: seconds, which tables
    #: may show in minutes or hours; ``""``: none).
    unit: str = ""
    #: True: one value per job, summarised by the report's statistics; False: one
    #: number for the whole schedule (a scalar metric).
    per_job: bool = False
    #: ``"lower"`` or ``"higher"`` (is better), or ``""`` when it is not a quality.
    better: str = ""
    #: A scalar metric that means something for one group's jobs alone (makespan,
    #: utilization, throughput): computed for each group of a grouped report too,
    #: with ``period=(start, end)`` (the whole report's period) when ``compute``
    #: takes that keyword. Other scalar metrics appear in the ``all`` row only.
    per_group: bool = False
    #: How the metric combines over time windows, which decides its confidence
    #: interval on one trace (:mod:`schedlab.significance`, ``compare --ci``):
    #: ``"mean"`` a per-job metric summarised over jobs (its mean and percentiles are
    #: block-bootstrapped; the default of every per-job metric); ``"ratio"`` a ratio
    #: of sums over time, such as busy over available processor-seconds
    #: (``window_terms`` gives each window's numerator and denominator); ``"extreme"``
    #: an extreme or span of the whole schedule, such as a makespan (no block
    #: interval: reported as unavailable with the reason). ``""`` (the default of a
    #: scalar metric) declares nothing and gets no block interval either. Across the
    #: seeds of generated workloads every metric gets an interval, whatever it declares.
    aggregation: str = attrs.field(default="", validator=attrs.validators.in_(AGGREGATIONS))
    #: With ``aggregation="ratio"``: ``window_terms(columns, edges, **options)``
    #: returns ``(numerators, denominators)``, two arrays with one entry per window
    #: ``[edges[k], edges[k + 1])`` (``edges``: ascending times, first submit to last
    #: end of the schedule); their sums over all windows give the metric over the
    #: whole schedule. Receives ``procs=`` like ``compute`` when it takes it.
    window_terms: Callable[..., tuple[np.ndarray, np.ndarray]] | None = None

    def __attrs_post_init__(self) -> None:
        if self.aggregation == "mean" and not self.per_job:
            raise ValueError(f"MetricSpec {self.name!r}: aggregation 'mean' needs per_job=True")
        if self.aggregation in ("ratio", "extreme") and self.per_job:
            raise ValueError(
                f"MetricSpec {self.name!r}: aggregation {self.aggregation!r} is for a scalar "
                "metric (per_job=False)"
            )
        if (self.aggregation == "ratio") != (self.window_terms is not None):
            raise ValueError(
                f"MetricSpec {self.name!r}: window_terms is required with aggregation "
                "'ratio' and only then"
            )
        if self.window_terms is not None and not callable(self.window_terms):
            raise ValueError("MetricSpec.window_terms must be callable")

    @property
    def combines_as(self) -> str:
        """The effective aggregation: ``"mean"`` for a per-job metric that declares
        none, else :attr:`aggregation` (``""``: undeclared)."""
        return "mean" if self.per_job and not self.aggregation else self.aggregation


@attrs.define(frozen=True, slots=True, kw_only=True)
class StatisticSpec(Component):
    """A statistic of per-job metric values, usable wherever a statistic is named
    (``compute_metrics(..., stats="mean,NAME")``, ``schedlab metrics --stat NAME``).

    ``compute(values)`` receives the known values of one metric in one group: a
    non-empty float64 numpy array sorted ascending (NaN never occurs), and returns a
    number (NaN when the statistic is undefined for these values). It is called once
    per group and metric, never per job. The built-in statistics ``mean``,
    ``median``, ``min``, ``max`` and the percentiles ``pNN`` (``p95``, ``p99.9``) are
    computed by the engine and cannot be replaced; names ``count`` and ``unknown``
    are reserved.

    ``unitless``: the statistic has no unit (a coefficient of variation, a
    skewness): tables show it without the metric's unit and never convert it to
    minutes or hours, and a tidy frame's ``unit`` is empty. By default a statistic
    is in the metric's unit, as a mean or a standard deviation is.
    """

    #: ``compute(values) -> float``: the statistic of one metric's known values in one
    #: group (non-empty, sorted, no NaN); NaN when it is undefined for them.
    compute: Callable[[np.ndarray], float] = attrs.field(validator=_callable)
    #: True: the statistic has no unit (a coefficient of variation); False: it is in
    #: the metric's unit.
    unitless: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))

    def __attrs_post_init__(self) -> None:
        for label in (self.name, *self.aliases):
            if label in RESERVED_STATISTICS or re.match(r"^p\d+(\.\d+)?$", label):
                raise ValueError(
                    f"StatisticSpec name {label!r} is reserved (built-in statistics: mean, "
                    "median, min, max, pNN; block keys: count, unknown)"
                )


@attrs.define(frozen=True, slots=True, kw_only=True)
class GeneratorSpec(Component):
    """A synthetic workload generator: ``generate(**options) -> Workload``.

    Usable wherever a trace file is accepted, as ``NAME:key=value,key=value``.
    """

    #: ``generate(**options) -> Workload``: the synthetic workload, named
    #: ``NAME:key=value,...`` wherever a trace file is accepted.
    generate: Callable[..., Workload] = attrs.field(validator=_callable)


@attrs.define(frozen=True, slots=True, kw_only=True)
class CommandSpec(Component):
    """A CLI subcommand: ``load()`` returns a :class:`click.Command` (imported lazily)."""

    #: ``load() -> click.Command``: imports and returns the subcommand (lazily, so
    #: the import costs nothing until it is needed).
    load: Callable[[], click.Command] = attrs.field(validator=_callable)


#: Kind name -> (hook name, record class), for the registry and ``schedlab plugins``.
COMPONENT_KINDS: dict[str, tuple[str, type[Component]]] = {
    "reader": ("schedlab_readers", ReaderSpec),
    "writer": ("schedlab_writers", WriterSpec),
    "policy": ("schedlab_policies", PolicySpec),
    "backfill": ("schedlab_backfills", BackfillSpec),
    "estimator": ("schedlab_estimators", EstimatorSpec),
    "allocation": ("schedlab_allocations", AllocationSpec),
    "metric": ("schedlab_metrics", MetricSpec),
    "statistic": ("schedlab_statistics", StatisticSpec),
    "generator": ("schedlab_generators", GeneratorSpec),
    "command": ("schedlab_cli_commands", CommandSpec),
}
