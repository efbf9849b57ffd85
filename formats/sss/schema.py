"""The SSS Job Object XSD and the fast rules compiled from it.

The XSD (``sss-job-object.xsd``, package data) is the single source of truth. It is
compiled once with :mod:`xmlschema` (XSD 1.1, with resource access limited to the
package folder and XML defused). :func:`rules` then walks the compiled schema and
derives, for every element declaration, a small :class:`ElementRule` table: the
children it may contain with their occurrence bounds, its attributes with a value
checker, and a checker for its text. Reading checks each job against these tables
(a few dictionary look-ups per element) and calls xmlschema only to explain a job the
tables reject, or for every job with ``validate="full"``. A property test
(``tests/test_sss_schema.py``) checks that both always agree.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

#: The schema file shipped with the package.
SCHEMA_PATH = Path(__file__).with_name("sss-job-object.xsd")

#: The two document roots the specification allows.
ROOTS = ("JobGroup", "Job")

_UINT32_MAX = 4294967295
#: The XSD lexical spaces use ASCII digits only (``[0-9]``, not Python's ``\d``, which
#: also matches Arabic-Indic or fullwidth digits that ``int()`` and ``float()`` accept).
_INTEGER_RE = re.compile(r"[+-]?[0-9]+\Z")
_DOUBLE_RE = re.compile(r"([+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?INF|NaN)\Z")
#: XML whitespace (the only characters the XSD ``whiteSpace`` facet removes;
#: ``str.strip()`` and ``int()`` also drop no-break and other Unicode spaces).
XML_SPACE = " \t\n\r"
_XML_SPACE_RE = re.compile(r"[ \t\n\r]+")


@functools.lru_cache(maxsize=1)
def load_schema() -> Any:
    """The compiled XSD (an ``xmlschema.XMLSchema11``), built once per process.

    Resources are restricted to the package folder (``allow="sandbox"``) and the
    schema document itself is parsed defused: compiling it never touches the network.
    """
    return _compile_schema()


def _compile_schema() -> Any:
    import xmlschema

    folder = str(SCHEMA_PATH.parent.resolve())
    return xmlschema.XMLSchema11(
        str(SCHEMA_PATH.resolve()), base_url=folder, allow="sandbox", defuse="always"
    )


# --------------------------------------------------------------------------- checkers


def _collapse(text: str) -> str:
    """``text`` with XML whitespace collapsed, as the XSD ``whiteSpace="collapse"``."""
    return _XML_SPACE_RE.sub(" ", text).strip(" ")


def _check_string(text: str) -> bool:
    return True


def _check_integer(text: str) -> bool:
    if text.isascii() and text.isdigit():
        return True
    return _INTEGER_RE.match(text.strip(XML_SPACE)) is not None


def _check_uint32(text: str) -> bool:
    if text.isascii() and text.isdigit():
        # More digits than int() accepts (4300) would raise: no uint32 has them.
        return len(text.lstrip("0")) <= 10 and int(text) <= _UINT32_MAX
    text = text.strip(XML_SPACE)
    if _INTEGER_RE.match(text) is None or len(text.lstrip("+-").lstrip("0")) > 10:
        return False
    return 0 <= int(text) <= _UINT32_MAX


def _check_double(text: str) -> bool:
    return _DOUBLE_RE.match(text.strip(XML_SPACE)) is not None


#: Checkers for the named simple types of the XSD whose value space is not an
#: enumeration. Enumerations are checked by set membership.
_NAMED_CHECKERS: dict[str, Callable[[str], bool]] = {
    "StringValue": _check_string,
    "IntegerValue": _check_integer,
    "DateTimeValue": _check_uint32,
    "DurationValue": _check_uint32,
    "FloatValue": _check_double,
}


@attrs.define(slots=True, frozen=True)
class ValueRule:
    """How to check one attribute value or one element's text.

    ``enumeration`` is the set of allowed (whitespace-collapsed) values of an
    enumerated type, else ``None`` and ``check`` decides.
    """

    type_name: str
    check: Callable[[str], bool]
    enumeration: frozenset[str] | None = None
    #: ``is_valid`` as a plain function (enumeration test included), for hot loops.
    is_valid: Callable[[str], bool] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        enumeration = self.enumeration
        if enumeration is None:
            fn = self.check
        else:

            def fn(text: str) -> bool:
                return text in enumeration or _collapse(text) in enumeration

        object.__setattr__(self, "is_valid", fn)

    def describe(self) -> str:
        """What a valid value looks like, for error messages."""
        if self.enumeration is not None:
            return "one of " + ", ".join(sorted(self.enumeration))
        return {
            "IntegerValue": "an integer",
            "DateTimeValue": "epoch seconds (an unsigned 32-bit integer)",
            "DurationValue": "seconds (an unsigned 32-bit integer)",
            "FloatValue": "a number",
        }.get(self.type_name, "a string")


@attrs.define(slots=True, eq=False)
class ElementRule:
    """What one element may contain, derived from its XSD declaration.

    ``text`` is ``None`` for elements with element content (only whitespace allowed
    between children), else the rule for the element's text. ``children`` maps a
    child tag to its rule; ``min_occurs``/``max_occurs`` bound each child's count
    (``None`` = unbounded); ``min_children`` is the least number of children in all.
    """

    type_name: str
    text: ValueRule | None = None
    attributes: dict[str, ValueRule] = attrs.field(factory=dict)
    required_attributes: frozenset[str] = frozenset()
    children: dict[str, ElementRule] = attrs.field(factory=dict)
    min_occurs: dict[str, int] = attrs.field(factory=dict)
    max_occurs: dict[str, int | None] = attrs.field(factory=dict)
    min_children: int = 0
    #: Children that must appear, and those that may appear at most once.
    required: tuple[str, ...] = ()
    single: frozenset[str] = frozenset()
    #: Children with another finite bound (counted one by one).
    counted: frozenset[str] = frozenset()
    #: Children with element content or required attributes (always checked in
    #: full), and the text check of leaf children whose type is not a plain string
    #: (string leaves need no check).
    complex_children: frozenset[str] = frozenset()
    leaf_checks: dict[str, Callable[[str], bool]] = attrs.field(factory=dict)
    #: The rules an ``xsi:type`` attribute may select for an element of this type:
    #: the type itself and every type derived from it, by name (the schema has no
    #: target namespace, so an unprefixed name is the only way to name them).
    xsi_types: dict[str, ElementRule] = attrs.field(factory=dict)


def _value_rule(simple_type: Any) -> ValueRule:
    """A :class:`ValueRule` for an xmlschema simple type of the SSS schema."""
    current = simple_type
    while current is not None and current.name is None:
        current = getattr(current, "base_type", None)
    if current is None:
        raise TypeError(f"anonymous simple type in the SSS schema: {simple_type!r}")
    name = current.local_name
    enumeration = getattr(current, "enumeration", None)
    if enumeration:
        return ValueRule(name, _check_string, frozenset(str(v) for v in enumeration))
    if name in _NAMED_CHECKERS:
        return ValueRule(name, _NAMED_CHECKERS[name])
    # A type this module does not know: let xmlschema decide (slower, still correct).
    return ValueRule(name, current.is_valid)


def _flatten(group: Any, out: list[tuple[Any, int, int | None]], model: list[str]) -> None:
    model.append(group.model)
    for particle in group:
        if hasattr(particle, "model"):  # a nested (referenced) group
            _flatten(particle, out, model)
        else:
            out.append((particle, particle.min_occurs, particle.max_occurs))


def _element_rule(xsd_type: Any, cache: dict[int, ElementRule]) -> ElementRule:
    key = id(xsd_type)
    if key in cache:
        return cache[key]
    type_name = xsd_type.local_name or "anonymous"
    rule = ElementRule(type_name)
    cache[key] = rule
    for name, attribute in xsd_type.attributes.items():
        if name is None:
            continue
        rule.attributes[name] = _value_rule(attribute.type)
    rule.required_attributes = frozenset(
        name for name, a in xsd_type.attributes.items() if name and a.use == "required"
    )
    if xsd_type.has_simple_content():
        rule.text = _value_rule(xsd_type.content)
        return rule
    group = xsd_type.content
    # An extension of a complex type wraps the base content in a one-item sequence.
    while group.model == "sequence" and len(group) == 1 and hasattr(group[0], "model"):
        group = group[0]
    particles: list[tuple[Any, int, int | None]] = []
    models: list[str] = []
    _flatten(group, particles, models)
    repeated_choice = models == ["choice"] and group.max_occurs is None
    if not repeated_choice and set(models) != {"all"}:
        raise TypeError(f"unsupported content model {models} in type {type_name}")
    for element, min_occurs, max_occurs in particles:
        rule.children[element.local_name] = _element_rule(element.type, cache)
        if repeated_choice:
            rule.min_occurs[element.local_name] = 0
            rule.max_occurs[element.local_name] = None
        else:
            rule.min_occurs[element.local_name] = min_occurs
            rule.max_occurs[element.local_name] = max_occurs
    if repeated_choice:
        rule.min_children = group.min_occurs
    rule.required = tuple(tag for tag, least in rule.min_occurs.items() if least)
    rule.single = frozenset(tag for tag, most in rule.max_occurs.items() if most == 1)
    rule.complex_children = frozenset(
        tag
        for tag, child in rule.children.items()
        if child.text is None or child.required_attributes
    )
    rule.leaf_checks = {
        tag: child.text.is_valid
        for tag, child in rule.children.items()
        if (child.text is not None and child.text.check is not _check_string)
        or (child.text is not None and child.text.enumeration is not None)
    }
    rule.counted = frozenset(
        tag for tag, most in rule.max_occurs.items() if most is not None and most != 1
    )
    return rule


@functools.lru_cache(maxsize=1)
def rules() -> dict[str, ElementRule]:
    """The rule of each document root (``JobGroup``, ``Job``), built once.

    The rules are compiled from a schema instance of their own that is then dropped:
    a compiled xmlschema is a large graph of objects, and keeping it alive would make
    every garbage collection of a long read scan it (about a third of the reading
    time). :func:`load_schema` loads it again when a problem must be explained.
    Each rule's :attr:`ElementRule.xsi_types` is filled from the named complex types
    and their derivations.
    """
    schema = _compile_schema()
    cache: dict[int, ElementRule] = {}
    roots = {name: _element_rule(schema.elements[name].type, cache) for name in ROOTS}
    named = {
        name: xsd_type
        for name, xsd_type in schema.types.items()
        if xsd_type.is_complex() and name is not None
    }
    for name, xsd_type in named.items():
        rule = _element_rule(xsd_type, cache)
        current = xsd_type
        while current is not None and current.is_complex():
            ancestor = current.local_name
            if ancestor in named:
                _element_rule(named[ancestor], cache).xsi_types[name] = rule
            base = getattr(current, "base_type", None)
            current = base if base is not current else None
    return roots


def element_declaration(path: str) -> Any:
    """The xmlschema declaration at a ``/``-separated path such as ``JobGroup/Job``."""
    return load_schema().find(path)
