"""Defaults inheritance: JobDefaults -> Job, TaskGroupDefaults -> TaskGroup,
TaskDefaults -> Task (sections 5, 6 and 7 of the specification).

"Properties in Job elements override any properties found in a sibling JobDefaults
element" (and likewise one level down). schedlab reads "property" as follows:

* a simple property (``UserId``, ``Memory`` ...) is overridden by an element of the
  same name: a job with one ``Processors`` replaces every ``Processors`` of the
  defaults;
* named repeatable properties are overridden one name at a time: ``Variable`` by its
  ``name``; ``Resource``, ``ResourceLimit`` and ``Extension`` by ``name`` and
  ``type``; a ``Dependency`` by its target and type (so dependencies of the defaults
  add to the job's own);
* the containers ``Environment``, ``Requested``, ``Delivered``, ``TaskGroupDefaults``
  and ``TaskDefaults`` are merged element by element with the same rules, so a job
  that requests only ``Processors`` still inherits the default ``WallDuration``
  request; repeated containers of one name are one set of properties (see
  :func:`merge`);
* ``TaskGroup`` and ``Task`` elements of defaults are inherited only by a job (task
  group) that has none of its own.

After inheritance a TaskGroupDefaults (TaskDefaults) element is dropped when there is
at least one TaskGroup (Task) that received its values; it is kept when there is none,
since it then describes the implicit task group (task) of the specification.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Hashable

_NAMED = frozenset({"Resource", "ResourceLimit", "Extension"})
_MERGED_CONTAINERS = frozenset(
    {"Environment", "Requested", "Delivered", "TaskGroupDefaults", "TaskDefaults"}
)


def property_key(elem: ET.Element) -> Hashable:
    """What an element overrides: its name, or its name plus identifying attributes."""
    tag = elem.tag
    if tag == "Variable":
        return (tag, elem.get("name"))
    if tag in _NAMED:
        return (tag, elem.get("name"), elem.get("type"))
    if tag == "Dependency":
        return (tag, (elem.text or "").strip(), elem.get("type", "OnSuccess"))
    return tag


def merge(
    defaults: ET.Element, elem: ET.Element, sibling_keys: frozenset[Hashable] = frozenset()
) -> ET.Element:
    """A new element: ``elem`` with every property of ``defaults`` it does not override.

    The children of ``elem`` come first, in their order, then the inherited ones.
    A container (``Requested`` ...) the job repeats is one set of properties: every
    default container of that name is merged into the job's first one, minus what
    any of the job's containers of that name states (``sibling_keys``, when ``elem``
    is such a container), so the job's own values always win and no default block
    is left out. Neither argument is modified (inherited children are shared).
    """
    out = ET.Element(elem.tag, elem.attrib)
    out.text = elem.text
    children = list(elem)
    own_keys = {property_key(child) for child in children} | sibling_keys
    merged: set[str] = set()
    for child in children:
        tag = child.tag
        if tag in _MERGED_CONTAINERS and tag not in merged:
            merged.add(tag)
            inherited = [d for d in defaults if d.tag == tag]
            if inherited:
                combined = ET.Element(tag)
                combined.extend(grand for block in inherited for grand in block)
                keys = frozenset(
                    property_key(grand)
                    for other in children
                    if other.tag == tag and other is not child
                    for grand in other
                )
                child = merge(combined, child, keys)
        out.append(child)
    for child in defaults:
        if property_key(child) not in own_keys:
            out.append(child)
    return out


def apply_inner_defaults(job: ET.Element) -> ET.Element:
    """Apply TaskGroupDefaults to the job's TaskGroups and TaskDefaults to each
    TaskGroup's Tasks; returns ``job`` itself when there is nothing to apply."""
    if job.find("TaskGroupDefaults") is None and job.find("TaskGroup/TaskDefaults") is None:
        return job
    group_defaults = job.find("TaskGroupDefaults")
    has_groups = job.find("TaskGroup") is not None
    out = ET.Element(job.tag, job.attrib)
    out.text = job.text
    for child in job:
        if child.tag == "TaskGroupDefaults" and has_groups:
            continue
        if child.tag == "TaskGroup":
            group = merge(group_defaults, child) if group_defaults is not None else child
            child = _apply_task_defaults(group)
        out.append(child)
    return out


def _apply_task_defaults(group: ET.Element) -> ET.Element:
    task_defaults = group.find("TaskDefaults")
    if task_defaults is None or group.find("Task") is None:
        return group
    out = ET.Element(group.tag, group.attrib)
    out.text = group.text
    for child in group:
        if child.tag == "TaskDefaults":
            continue
        out.append(merge(task_defaults, child) if child.tag == "Task" else child)
    return out
