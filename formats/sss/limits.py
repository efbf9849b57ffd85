"""Bounds on the work a hostile SSS document can ask of the reader.

A valid SSS job object is shallow (the XSD's deepest path, ``JobGroup/JobDefaults/
TaskGroupDefaults/TaskDefaults/Requested/NodeList/Node``, is 7 elements) and each
element has a handful of attributes (at most 14 are declared for any element). A
document far outside that shape is not a job object, and reading it must neither
crash (Python's recursion limit) nor take quadratic time. So:

* :data:`MAX_DEPTH`: elements nested deeper than this (the root is level 1) make
  the part that holds them invalid, with one problem naming the path and the depth;
  nothing recursive ever walks such a part;
* :data:`MAX_ATTRIBUTES`: an element with more attributes is invalid, with one
  problem, whatever the awareness policy (each attribute is not looked at);
* :data:`MAX_PART_PROBLEMS`: problems kept per job (or per group-level element);
  the others are counted and reported as "... and K more";
* :data:`MAX_KEPT_PROBLEMS`: problems kept per document in a strict read (the total
  is always counted);
* :data:`MAX_EXPLAINED`: bad parts explained by xmlschema (slow) in the error
  report; the others keep schedlab's own findings, with their lines;
* :data:`MAX_WHITESPACE_RUN`: whitespace bytes in a row. ElementTree holds a text
  node whole until it ends, so half a megabyte of gzip holding 512 MB of blanks took
  1.1 GB; a longer run is refused while the bytes are read (UTF-16 and UTF-32
  documents are transcoded to UTF-8 first, so for them the bound is 1 Mi whitespace
  characters, 2 or 4 MiB of the file).

The bounds are generous (several times what any valid document needs) and apply to
every document; they are documented in docs/formats/sss.md.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

#: Deepest element nesting accepted (root = level 1). The XSD needs 7.
MAX_DEPTH = 32
#: Most attributes accepted on one element. The XSD declares at most 14.
MAX_ATTRIBUTES = 64
#: Problems kept for one job or one group-level element.
MAX_PART_PROBLEMS = 50
#: Problems kept for one document (strict read); the rest are only counted.
MAX_KEPT_PROBLEMS = 1000
#: Bad parts run through xmlschema to explain them.
MAX_EXPLAINED = 20
#: Most XML whitespace bytes accepted in a row (1 MiB; indentation needs a few).
MAX_WHITESPACE_RUN = 1 << 20


def too_deep(elem: ET.Element, level: int, limit: int = MAX_DEPTH) -> tuple[str, int] | None:
    """``(path, depth)`` of an element of ``elem``'s subtree deeper than ``limit``
    (the path from ``elem``'s tag down, cut after a few levels), where ``elem`` itself
    is at ``level``; ``None`` if there is none.

    Iterative (no recursion) and linear: a subtree with fewer elements than the
    levels left cannot exceed them (counted by the C iterator), else the subtree is
    walked one level at a time.
    """
    room = limit - level
    count = 0
    for count, _ in enumerate(elem.iter(), start=1):
        if count > room:
            break
    else:
        return None
    depth = level
    nodes = [elem]
    while nodes:
        if depth > limit:
            return _chain_to(elem, depth - level), depth
        nodes = [child for node in nodes for child in node]
        depth += 1
    return None


def _chain_to(elem: ET.Element, steps: int, shown: int = 4) -> str:
    """The tags of the first path of ``steps`` levels below ``elem`` (the first
    ``shown`` of them, then ``...``)."""
    tags = [elem.tag]
    node = elem
    for taken in range(min(steps, shown)):
        below = steps - taken - 1
        pattern = "/".join(["*"] * below) if below else "."
        node = next(child for child in node if child.find(pattern) is not None)
        tags.append(node.tag)
    if steps > shown:
        tags.append("...")
    return "/".join(tags)


def pruned(elem: ET.Element, level: int, limit: int = MAX_DEPTH) -> ET.Element:
    """A copy of ``elem`` cut at ``limit`` levels and at :data:`MAX_ATTRIBUTES`
    attributes per element (for showing a rejected part; a comment marks each cut)."""
    out = _shallow(elem)
    stack = [(elem, out, level)]
    while stack:
        source, target, depth = stack.pop()
        if depth >= limit and len(source):
            target.append(ET.Comment(f" {len(source)} element(s) deeper than {limit} cut "))
            continue
        for child in source:
            copy = _shallow(child)
            target.append(copy)
            stack.append((child, copy, depth + 1))
    return out


def _shallow(elem: ET.Element) -> ET.Element:
    attrib = elem.attrib
    if len(attrib) > MAX_ATTRIBUTES:
        attrib = dict(list(attrib.items())[:MAX_ATTRIBUTES])
    copy = ET.Element(elem.tag, attrib)
    copy.text, copy.tail = elem.text, elem.tail
    return copy
