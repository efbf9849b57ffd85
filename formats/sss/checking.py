"""Checking one element against the compiled schema rules, with the awarenessPolicy
of section 9 of the specification.

"Not understood" means: an element whose name the schema does not allow at that
place, an attribute the schema does not declare for that element, or a value outside
an enumerated attribute type (``op="XX"``, ``units="QB"``, ``type="OnStart"``). What
happens to it depends on the awareness policy in force there:

* ``Reject`` (the default): an error naming it;
* ``Warn``: it is dropped and a warning lists it;
* ``Ignore``: it is dropped silently (it is still counted).

The policy is the ``awarenessPolicy`` attribute of the element itself, else of the
nearest ancestor that has one, else the reader's default (``Reject``). An unknown
element's own ``awarenessPolicy`` applies to itself. Everything else that breaks the
schema (a malformed number, a missing JobId, a repeated UserId, text between
elements) is an error whatever the policy: the policy is about vocabulary, not about
broken values.

The XML Schema instance attributes are XML Schema's own, allowed on every element:
``xsi:schemaLocation`` and ``xsi:noNamespaceSchemaLocation`` (hints, ignored) and
``xsi:type`` naming the element's type or a type derived from it (the element is then
checked against that type) are accepted, then removed by :func:`drop_xsi` once the
part is checked; ``xsi:nil`` is an error (no element of the SSS schema is nillable),
as is an ``xsi:type`` naming another type. Other names in that namespace are not
understood.
"""

from __future__ import annotations

import operator
import xml.etree.ElementTree as ET

import attrs

from .limits import MAX_ATTRIBUTES, MAX_PART_PROBLEMS
from .schema import ElementRule

POLICIES = ("Reject", "Warn", "Ignore")

#: The XML Schema instance namespace, as ElementTree writes it in attribute names.
XSI = "{http://www.w3.org/2001/XMLSchema-instance}"
_XSI_TYPE = XSI + "type"
_XSI_NIL = XSI + "nil"
#: Hints to a validator, allowed on any element and ignored.
_XSI_HINTS = frozenset({XSI + "schemaLocation", XSI + "noNamespaceSchemaLocation"})
#: Longest attribute name shown whole in a message.
_NAME_LIMIT = 300

_TAG = operator.attrgetter("tag")
_TAIL = operator.attrgetter("tail")


@attrs.define(slots=True)
class Problem:
    """One problem found in a document.

    ``kind`` is ``"invalid"`` (breaks the schema), or ``"not-understood"`` (unknown
    element, attribute or value; an error only under the Reject policy).
    """

    path: str
    message: str
    line: int | None = None
    kind: str = "invalid"

    def render(self) -> str:
        """``line N: path: message``."""
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{where}{self.path}: {self.message}"


@attrs.define(slots=True)
class CheckReport:
    """What checking found: errors (the job is rejected), warnings (the Warn
    policy) and the number of things dropped under the Ignore policy."""

    errors: list[Problem] = attrs.field(factory=list)
    warnings: list[Problem] = attrs.field(factory=list)
    ignored: list[Problem] = attrs.field(factory=list)
    #: Errors found beyond :data:`~.limits.MAX_PART_PROBLEMS` (counted, not kept).
    more: int = 0
    #: True when an accepted ``xsi:`` attribute was seen (see :func:`drop_xsi`).
    xsi: bool = False

    def error(self, problem: Problem) -> None:
        """Record an error: kept while fewer than ``MAX_PART_PROBLEMS`` are, else
        only counted in :attr:`more`."""
        if len(self.errors) < MAX_PART_PROBLEMS:
            self.errors.append(problem)
        else:
            self.more += 1

    @property
    def full(self) -> bool:
        """True when no more errors are kept (they are only counted)."""
        return len(self.errors) >= MAX_PART_PROBLEMS

    @property
    def failed(self) -> bool:
        """True when any error was found (kept or only counted)."""
        return bool(self.errors) or self.more > 0


def shown(text: str, limit: int = 40) -> str:
    """``text`` stripped of XML whitespace, quoted, and cut to ``limit`` characters for
    a message (other blanks, such as a no-break space, stay visible: they are errors)."""
    text = text.strip(" \t\n\r")
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def _line(elem: ET.Element) -> int | None:
    return getattr(elem, "sourceline", None)


def attribute_name(name: str) -> str:
    """An attribute name as a message shows it: ``xsi:type`` for the XML Schema
    instance namespace, ``{uri}name`` for another namespace, not cut off unless
    longer than 300 characters."""
    if name.startswith(XSI):
        name = "xsi:" + name[len(XSI) :]
    if len(name) <= _NAME_LIMIT:
        return repr(name)
    return f"{name[:_NAME_LIMIT]!r}... ({len(name)} characters)"


def _xsi_rule(elem: ET.Element, rule: ElementRule) -> ElementRule:
    """The rule ``elem`` is checked against: the one its ``xsi:type`` names when that
    is the rule's type or derived from it, else ``rule`` (the attribute check reports
    a bad ``xsi:type``)."""
    value = elem.attrib.get(_XSI_TYPE)
    if value is None:
        return rule
    return rule.xsi_types.get(value.strip(" \t\n\r"), rule)


def _xsi_problem(name: str, value: str, rule: ElementRule) -> str | None:
    """What is wrong with the XML Schema instance attribute ``name`` (``None``: it
    is accepted; ``""``: not an attribute XML Schema defines)."""
    if name in _XSI_HINTS:
        return None
    if name == _XSI_TYPE:
        if value.strip(" \t\n\r") in rule.xsi_types:
            return None
        allowed = ", ".join(sorted(rule.xsi_types)) or rule.type_name
        return f"attribute xsi:type={shown(value)}: expected a type of the SSS schema ({allowed})"
    if name == _XSI_NIL:
        return f"attribute xsi:nil={shown(value)}: no element of the SSS schema is nillable"
    return ""


def drop_xsi(elem: ET.Element) -> None:
    """Remove the XML Schema instance attributes from ``elem`` and its subtree (once
    it is checked: they direct validation and carry no job data)."""
    for item in elem.iter():
        if item.attrib:
            for name in [n for n in item.attrib if n.startswith(XSI)]:
                del item.attrib[name]


def _not_understood(
    report: CheckReport, policy: str, path: str, what: str, elem: ET.Element
) -> bool:
    """Record a not-understood item; returns True if it is tolerated (drop it)."""
    if policy == "Reject":
        if report.full:  # counted only: do not even format the message
            report.more += 1
            return False
        report.error(
            Problem(
                path,
                f"{what} is not understood (awarenessPolicy Reject)",
                _line(elem),
                "not-understood",
            )
        )
        return False
    problem = Problem(
        path,
        f"{what} was not understood and is ignored (awarenessPolicy {policy})",
        _line(elem),
        "not-understood",
    )
    (report.warnings if policy == "Warn" else report.ignored).append(problem)
    return True


def _drop_children(parent: ET.Element, dropped: list[ET.Element]) -> None:
    """Remove ``dropped`` children of ``parent`` (in one pass, however many), keeping
    their tail text in place."""
    gone = {id(child) for child in dropped}
    kept: list[ET.Element] = []
    for child in parent:
        if id(child) not in gone:
            kept.append(child)
        elif child.tail:
            if kept:
                kept[-1].tail = (kept[-1].tail or "") + child.tail
            else:
                parent.text = (parent.text or "") + child.tail
    parent[:] = kept


def check_attributes(
    elem: ET.Element, rule: ElementRule, policy: str, path: str, report: CheckReport
) -> str:
    """Check ``elem``'s attributes; returns the awareness policy in force for it."""
    attrib = elem.attrib
    if len(attrib) > MAX_ATTRIBUTES:
        report.error(
            Problem(
                path,
                f"{len(attrib)} attributes on one element (at most {MAX_ATTRIBUTES} are "
                "accepted; the schema declares at most 14)",
                _line(elem),
                "limit",
            )
        )
        return policy
    if not attrib:
        if rule.required_attributes:
            for name in sorted(rule.required_attributes):
                report.error(Problem(path, f"required attribute {name!r} is missing", _line(elem)))
        return policy
    own = attrib.get("awarenessPolicy")
    if own is not None:
        own = own.strip()
        if own in POLICIES:
            policy = own
        else:
            report.error(
                Problem(
                    path,
                    f"attribute awarenessPolicy={shown(attrib['awarenessPolicy'])}: "
                    "expected Reject, Warn or Ignore",
                    _line(elem),
                )
            )
    for name, value in list(attrib.items()):
        value_rule = rule.attributes.get(name)
        if value_rule is None:
            if name.startswith(XSI):
                problem = _xsi_problem(name, value, rule)
                if problem is None:
                    report.xsi = True
                    continue
                if problem:
                    report.error(Problem(path, problem, _line(elem)))
                    continue
            what = f"attribute {attribute_name(name)}"
            if _not_understood(report, policy, path, what, elem):
                del attrib[name]
            continue
        if value_rule.is_valid(value) or name == "awarenessPolicy":
            continue
        if value_rule.enumeration is not None:
            what = f"value {name}={shown(value)} (expected {value_rule.describe()})"
            if _not_understood(report, policy, path, what, elem):
                del attrib[name]
        else:
            report.error(
                Problem(
                    path,
                    f"attribute {name}={shown(value)}: expected {value_rule.describe()}",
                    _line(elem),
                )
            )
    for name in rule.required_attributes:
        if name not in attrib:
            report.error(Problem(path, f"required attribute {name!r} is missing", _line(elem)))
    return policy


def check_element(
    elem: ET.Element, rule: ElementRule, policy: str, path: str, report: CheckReport
) -> None:
    """Check ``elem`` and its subtree against ``rule``; tolerated unknown elements and
    attributes are removed from the tree, problems go to ``report``."""
    if elem.attrib or rule.required_attributes:
        if _XSI_TYPE in elem.attrib:
            rule = _xsi_rule(elem, rule)
        policy = check_attributes(elem, rule, policy, path, report)
    text_rule = rule.text
    if text_rule is not None:
        if len(elem):
            dropped = []
            for child in elem:
                own = child.get("awarenessPolicy")
                child_policy = own.strip() if own and own.strip() in POLICIES else policy
                if _not_understood(
                    report, child_policy, f"{path}/{child.tag}", f"element <{child.tag}>", child
                ):
                    dropped.append(child)
            if dropped:
                _drop_children(elem, dropped)
            if len(elem):
                return
        text = elem.text or ""
        if not text_rule.is_valid(text):
            report.error(Problem(path, f"{shown(text)} is not {text_rule.describe()}", _line(elem)))
        return
    own_text = elem.text
    if own_text and not own_text.isspace():
        report.error(
            Problem(
                path, f"text {shown(own_text)} is not allowed here (only elements)", _line(elem)
            )
        )
    children = rule.children
    kids = list(elem)
    tags = list(map(_TAG, kids))
    seen = set(tags)
    tails = "".join(filter(None, map(_TAIL, kids)))
    if tails and not tails.isspace():
        for child in kids:
            tail = child.tail
            if tail and not tail.isspace():
                report.error(
                    Problem(
                        path,
                        f"text {shown(tail)} is not allowed here (only elements)",
                        _line(child),
                    )
                )
    unknown = seen.difference(children)
    if unknown:
        dropped = []
        for child in kids:
            tag = child.tag
            if tag not in unknown:
                continue
            own = child.get("awarenessPolicy")
            child_policy = own.strip() if own and own.strip() in POLICIES else policy
            if _not_understood(report, child_policy, f"{path}/{tag}", f"element <{tag}>", child):
                dropped.append(child)
        if dropped:
            _drop_children(elem, dropped)
        seen -= unknown
    repeated: dict[str, int] = {}
    if len(seen) + len(unknown) != len(tags):
        for tag in tags:
            repeated[tag] = repeated.get(tag, 0) + 1
        repeated = {t: c for t, c in repeated.items() if c > 1 and t not in unknown}
        for tag, count in repeated.items():
            limit = rule.max_occurs[tag]
            if limit is not None and count > limit:
                report.error(
                    Problem(
                        path,
                        f"<{tag}> appears {count} times (at most {limit} allowed)",
                        _line(elem),
                    )
                )
    leaf_checks = rule.leaf_checks
    complex_children = rule.complex_children
    for child in kids:
        tag = child.tag
        if tag in complex_children or child.attrib or len(child):
            if tag in unknown:
                continue
            check_element(child, children[tag], policy, f"{path}/{tag}", report)
            continue
        check = leaf_checks.get(tag)
        if check is not None and not check(child.text or ""):
            leaf_rule = children[tag].text
            assert leaf_rule is not None  # leaf_checks holds the children with a text rule
            value = shown(child.text or "")
            report.error(
                Problem(f"{path}/{tag}", f"{value} is not {leaf_rule.describe()}", _line(child))
            )
    for tag in rule.required:
        if tag not in seen:
            report.error(Problem(path, f"required element <{tag}> is missing", _line(elem)))
    total = len(seen) + sum(count - 1 for count in repeated.values())
    if rule.min_children and total < rule.min_children:
        expected = ", ".join(sorted(rule.children)[:6])
        report.error(
            Problem(
                path,
                f"<{elem.tag}> must contain at least one element ({expected}, ...)",
                _line(elem),
            )
        )
