"""The machine a workload runs on: node groups, partitions and sharing.

A platform file is TOML (schema and a full example: ``docs/platform.md``).
:func:`load_platform` reads and validates it into a :class:`Platform`; every
mistake is a :class:`~schedlab.errors.FormatError` naming the file and the TOML key
path, e.g. ``platform.toml: partitions.gpu.nodes: unknown node group 'a100'``.
:meth:`Platform.single_pool` builds the machine the simulator uses without a
platform file (one partition of N identical processors); :func:`infer_platform`
writes a starting platform from what a trace's header and records tell, listing
every guess it had to make, and :func:`dumps_platform` turns a platform back into
TOML that :func:`load_platform` reads. Counts and amounts are bounded
(:data:`MAX_NODES` nodes, :data:`MAX_MEMORY` bytes per node ...; "Limits" in
``docs/platform.md``) so that nothing the simulator sums or multiplies overflows
int64; :func:`check_limits` applies the same bounds to a :class:`Platform` built in
Python.

The simulator takes a platform as ``simulate(..., platform=...)`` (``--platform``):
jobs' requests are resolved against it (:mod:`schedlab.sim.requests`) and every
strategy schedules on its nodes (``docs/platform.md``).
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
import sys
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any, TypeAlias

import attrs

from .errors import FormatError, SchedlabError

__all__ = [
    "MAX_CONSUMABLE",
    "MAX_CORES",
    "MAX_GPUS",
    "MAX_MEMORY",
    "MAX_NODES",
    "MAX_TIER",
    "MAX_TIME",
    "MIN_TIER",
    "SHARING_MODES",
    "Inference",
    "NodeGroup",
    "Partition",
    "Platform",
    "check_limits",
    "dumps_platform",
    "infer_platform",
    "load_platform",
    "parse_memory",
    "trace_partition_name",
]

#: ``exclusive``: a job gets whole nodes; ``shared``: jobs share a node's cores,
#: memory, GPUs and consumables.
SHARING_MODES: tuple[str, ...] = ("exclusive", "shared")

_NAME_RE = re.compile(r"[A-Za-z0-9_.-]+\Z")
# ASCII digits only (``\d`` would take "١٢G" for 12 GiB).
_MEMORY_RE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGTP]?)(i?B)?\s*\Z", re.I | re.A)
#: Longest size string :func:`parse_memory` reads (4 TiB in bytes has 13 digits; a
#: far longer text is a mistake, and Python refuses to convert over 4,300 digits).
_MEMORY_TEXT = 1000
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}

# Limits of a platform (docs/platform.md, "Limits"). A machine of more than a
# million nodes is no real machine (the largest have some 160,000), and with these
# bounds every amount the simulator sums or multiplies stays within int64: a
# machine's total of any dimension is at most 2**20 nodes x 2**42 = 2**62, and a
# node's cores times a job's memory per core at most 2**20 x 2**42 = 2**62.

#: Most nodes of a platform, over all its node groups: 2**20 (1,048,576).
MAX_NODES = 2**20
#: Most cores per node: 2**20.
MAX_CORES = 2**20
#: Most GPUs per node: 2**20.
MAX_GPUS = 2**20
#: Most memory per node, bytes: 4 TiB (2**42), the amount the simulator gives a node
#: whose memory is unknown (``schedlab.sim.resources.UNBOUNDED``).
MAX_MEMORY = 2**42
#: Most of one consumable per node: 2**42.
MAX_CONSUMABLE = 2**42
#: Names a consumable may not take: the built-in resources, and the request extras
#: that are not amounts (``request.nodes`` is the node count, ``request.partition``
#: the job's partition; a consumable NAME is read from ``request.NAME``).
RESERVED_NAMES = ("cores", "memory", "gpus", "nodes", "partition")


def _reserved_text(name: str) -> str:
    if name in ("nodes", "partition"):
        return f"{name!r} is reserved (request.{name} is the job's {name}), not a consumable"
    return f"{name!r} is a built-in resource, not a consumable"


#: Longest ``max_time``, seconds: 2**53 - 1, the largest whole number a float64
#: holds exactly (the simulator compares requested times as float64); as the SWF
#: reader's header values.
MAX_TIME = 2**53 - 1
#: Lowest ``priority_tier``: -2**31 (tiers are 32-bit signed integers; Slurm's
#: have 16 bits).
MIN_TIER = -(2**31)
#: Highest ``priority_tier``: 2**31 - 1.
MAX_TIER = 2**31 - 1


@attrs.define(frozen=True, slots=True)
class NodeGroup:
    """``count`` identical nodes, each with ``cores``, ``memory`` (bytes; ``None`` =
    unknown, i.e. unbounded), ``gpus`` and named ``consumables`` (name -> amount per
    node, e.g. licences or local scratch slots)."""

    name: str
    count: int
    cores: int
    memory: int | None = None
    gpus: int = 0
    consumables: Mapping[str, int] = attrs.field(factory=dict)


@attrs.define(frozen=True, slots=True)
class Partition:
    """A set of node groups with its own queue and limits.

    ``max_time`` is the longest wall time a job may ask for (seconds) and
    ``max_nodes`` the most nodes one job may use; ``None`` means no limit. A higher
    ``priority_tier`` is scheduled first. ``queues`` are the trace queue names mapped
    to this partition; ``sharing`` is one of :data:`SHARING_MODES`.
    """

    name: str
    nodes: tuple[str, ...]
    max_time: int | None = None
    max_nodes: int | None = None
    priority_tier: int = 0
    queues: tuple[str, ...] = ()
    sharing: str = "exclusive"


@attrs.define(frozen=True, slots=True)
class Platform:
    """A machine: node groups and the partitions over them."""

    node_groups: tuple[NodeGroup, ...]
    partitions: tuple[Partition, ...]
    name: str | None = None
    sharing: str = "exclusive"

    @classmethod
    def single_pool(cls, procs: int) -> Platform:
        """Today's machine: one partition ``default`` of ``procs`` identical
        processors, modelled as ``procs`` one-core nodes (group ``processors``) with
        memory and GPUs unbounded/absent."""
        if isinstance(procs, bool) or not isinstance(procs, int) or procs <= 0:
            raise SchedlabError(
                f"a single-pool platform needs a positive processor count, got {procs!r}"
            )
        return cls(
            node_groups=(NodeGroup("processors", count=procs, cores=1),),
            partitions=(Partition("default", nodes=("processors",)),),
            name="single-pool",
        )

    def node_group(self, name: str) -> NodeGroup:
        """The node group called ``name`` (``KeyError`` if none)."""
        for group in self.node_groups:
            if group.name == name:
                return group
        raise KeyError(name)

    def partition(self, name: str) -> Partition:
        """The partition called ``name`` (``KeyError`` if none)."""
        for part in self.partitions:
            if part.name == name:
                return part
        raise KeyError(name)

    def partition_of_queue(self, queue: str) -> Partition | None:
        """The partition a trace queue maps to, or ``None``."""
        for part in self.partitions:
            if queue in part.queues:
                return part
        return None

    @property
    def total_nodes(self) -> int:
        """Nodes of every group."""
        return sum(g.count for g in self.node_groups)

    @property
    def total_cores(self) -> int:
        """Cores of every node."""
        return sum(g.count * g.cores for g in self.node_groups)


# --------------------------------------------------------------------------- loading


def parse_memory(value: object) -> int:
    """Bytes from an integer (bytes) or a string with a binary unit suffix:
    ``"512M"``, ``"64GiB"``, ``"1.5T"``, ``"4096KB"`` (K, M, G, T, P are powers of
    1024 with or without ``B``/``iB``). Raises ``ValueError`` otherwise."""
    if isinstance(value, bool):
        raise ValueError("expected bytes or a size such as '64GiB'")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        if len(value) > _MEMORY_TEXT:
            raise ValueError(
                f"expected bytes or a size such as '64GiB', got a text of {len(value):,} characters"
            )
        match = _MEMORY_RE.match(value)
        if match:
            number, unit = match.group(1), match.group(2).upper()
            amount = Fraction(number) * _UNITS[unit]  # exact, whatever the size
            if amount.denominator == 1:
                return int(amount)
            raise ValueError(f"{value!r} is not a whole number of bytes")
    raise ValueError(f"expected bytes or a size such as '64GiB', got {value!r}")


def _toml() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    try:
        import tomli
    except ImportError as exc:  # pragma: no cover - tomli is a dependency on 3.10
        raise SchedlabError(
            "reading TOML on Python 3.10 needs 'tomli' (pip install tomli)"
        ) from exc
    return tomli


class _Checker:
    """Validation helpers that raise FormatError naming the file and key path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, message: str) -> FormatError:
        return FormatError(message, source=self.source, path=path)

    def table(self, value: object, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"expected a table, got {_kind(value)}")
        return value

    def keys(self, table: Mapping[str, Any], path: str, allowed: Iterable[str]) -> None:
        allowed = tuple(allowed)
        for key in table:
            if key not in allowed:
                where = f"{path}.{_key(key)}" if path else _key(key)
                raise self.fail(where, f"unknown key (expected one of: {', '.join(allowed)})")

    def name(self, key: str, path: str) -> str:
        if not _NAME_RE.match(key):
            raise self.fail(path, "a name may use only letters, digits, '_', '.' and '-'")
        return key

    def integer(
        self,
        value: object,
        path: str,
        *,
        minimum: int | None = 1,
        maximum: int | None = None,
        integral: bool = False,
    ) -> int:
        """``value`` if it is an integer from ``minimum`` to ``maximum`` (a Python
        ``int``; with ``integral``, any integral number but a boolean)."""
        kinds = numbers.Integral if integral else int
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise self.fail(path, f"expected an integer, got {_kind(value)}")
        number = int(value)
        if minimum is not None and number < minimum:
            if maximum is not None and minimum < 0:
                what = f"an integer from {minimum} to {maximum}"
            else:
                what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
            raise self.fail(path, f"expected {what}, got {number}")
        if maximum is not None and number > maximum:
            raise self.fail(path, f"expected at most {_limit_text(maximum)}, got {number}")
        return number

    def memory(self, value: object, path: str) -> int:
        """Bytes from an integer or a size string, positive and at most
        :data:`MAX_MEMORY`."""
        try:
            memory = parse_memory(value)
        except ValueError as exc:
            raise self.fail(path, str(exc)) from None
        if memory <= 0:
            raise self.fail(path, f"expected a positive size, got {memory}")
        if memory > MAX_MEMORY:
            shown = repr(value) if isinstance(value, str) else str(memory)
            raise self.fail(path, f"expected at most 4 TiB ({MAX_MEMORY} bytes), got {shown}")
        return memory

    def total_nodes(self, total: int, path: str) -> None:
        """Refuse a platform whose node groups hold more than :data:`MAX_NODES`."""
        if total > MAX_NODES:
            raise self.fail(
                path,
                f"the node groups total {total} nodes, more than the "
                f"{_limit_text(MAX_NODES)} a platform may have",
            )

    def string(self, value: object, path: str) -> str:
        if not isinstance(value, str):
            raise self.fail(path, f"expected a string, got {_kind(value)}")
        return value

    def names(self, value: object, path: str, *, empty: bool) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise self.fail(path, f"expected a list of names, got {_kind(value)}")
        if not value and not empty:
            raise self.fail(path, "expected at least one name")
        out: list[str] = []
        for i, item in enumerate(value):
            text = self.string(item, f"{path}[{i}]")
            if text in out:
                raise self.fail(path, f"duplicate name {text!r}")
            out.append(text)
        return tuple(out)

    def sharing(self, value: object, path: str) -> str:
        text = self.string(value, path)
        if text not in SHARING_MODES:
            raise self.fail(path, f"expected one of {', '.join(SHARING_MODES)}, got {text!r}")
        return text


def _kind(value: object) -> str:
    names = {
        bool: "a boolean",
        int: "an integer",
        float: "a float",
        str: "a string",
        list: "an array",
        dict: "a table",
    }
    return names.get(type(value), type(value).__name__)


def _key(name: str) -> str:
    return name if re.match(r"[A-Za-z0-9_-]+\Z", name) else _toml_value(name)


def _limit_text(limit: int) -> str:
    """A limit with its power of two: ``1048576 (2**20)``, ``2147483647 (2**31 - 1)``."""
    if limit > 1 and limit & (limit - 1) == 0:
        return f"{limit} (2**{limit.bit_length() - 1})"
    if limit > 0 and (limit + 1) & limit == 0:
        return f"{limit} (2**{limit.bit_length()} - 1)"
    return str(limit)


def platform_from_dict(data: Mapping[str, Any], source: str = "<platform>") -> Platform:
    """Validate an already parsed platform document (see :func:`load_platform`)."""
    check = _Checker(source)
    top = check.table(data, "")
    check.keys(top, "", ("platform", "node_groups", "partitions"))
    head = check.table(top.get("platform", {}), "platform")
    check.keys(head, "platform", ("name", "sharing"))
    name = check.string(head["name"], "platform.name") if "name" in head else None
    sharing = (
        check.sharing(head["sharing"], "platform.sharing") if "sharing" in head else ("exclusive")
    )

    if "node_groups" not in top:
        raise check.fail("node_groups", "missing: a platform needs at least one node group")
    groups_table = check.table(top["node_groups"], "node_groups")
    if not groups_table:
        raise check.fail("node_groups", "expected at least one node group")
    groups: list[NodeGroup] = []
    total_nodes = 0
    for key, raw in groups_table.items():
        path = f"node_groups.{_key(key)}"
        check.name(key, path)
        body = check.table(raw, path)
        check.keys(body, path, ("count", "cores", "memory", "gpus", "consumables"))
        for required in ("count", "cores"):
            if required not in body:
                raise check.fail(f"{path}.{required}", "missing (a positive integer)")
        count = check.integer(body["count"], f"{path}.count", maximum=MAX_NODES)
        total_nodes += count
        check.total_nodes(total_nodes, f"{path}.count")
        cores = check.integer(body["cores"], f"{path}.cores", maximum=MAX_CORES)
        memory = check.memory(body["memory"], f"{path}.memory") if "memory" in body else None
        gpus = check.integer(body.get("gpus", 0), f"{path}.gpus", minimum=0, maximum=MAX_GPUS)
        consumables: dict[str, int] = {}
        raw_cons = check.table(body.get("consumables", {}), f"{path}.consumables")
        for cname, amount in raw_cons.items():
            cpath = f"{path}.consumables.{_key(cname)}"
            check.name(cname, cpath)
            if cname in RESERVED_NAMES:
                raise check.fail(cpath, _reserved_text(cname))
            consumables[cname] = check.integer(amount, cpath, minimum=0, maximum=MAX_CONSUMABLE)
        groups.append(
            NodeGroup(
                name=key,
                count=count,
                cores=cores,
                memory=memory,
                gpus=gpus,
                consumables=consumables,
            )
        )
    by_name = {g.name: g for g in groups}

    if "partitions" not in top:
        raise check.fail("partitions", "missing: a platform needs at least one partition")
    parts_table = check.table(top["partitions"], "partitions")
    if not parts_table:
        raise check.fail("partitions", "expected at least one partition")
    partitions: list[Partition] = []
    queue_owner: dict[str, str] = {}
    for key, raw in parts_table.items():
        path = f"partitions.{_key(key)}"
        check.name(key, path)
        body = check.table(raw, path)
        allowed = ("nodes", "max_time", "max_nodes", "priority_tier", "queues", "sharing")
        check.keys(body, path, allowed)
        if "nodes" not in body:
            raise check.fail(f"{path}.nodes", "missing (a list of node group names)")
        nodes = check.names(body["nodes"], f"{path}.nodes", empty=False)
        for group in nodes:
            if group not in by_name:
                raise check.fail(f"{path}.nodes", f"unknown node group {group!r}")
        max_time = (
            check.integer(body["max_time"], f"{path}.max_time", maximum=MAX_TIME)
            if "max_time" in body
            else None
        )
        max_nodes = None
        if "max_nodes" in body:
            max_nodes = check.integer(body["max_nodes"], f"{path}.max_nodes")
            available = sum(by_name[g].count for g in nodes)
            if max_nodes > available:
                raise check.fail(
                    f"{path}.max_nodes",
                    f"{max_nodes} is more than the partition's {available} nodes",
                )
        queues = check.names(body.get("queues", []), f"{path}.queues", empty=True)
        for queue in queues:
            if queue in queue_owner:
                raise check.fail(
                    f"{path}.queues",
                    f"queue {queue!r} is already mapped to partition {queue_owner[queue]!r}",
                )
            queue_owner[queue] = key
        partitions.append(
            Partition(
                name=key,
                nodes=nodes,
                max_time=max_time,
                max_nodes=max_nodes,
                priority_tier=check.integer(
                    body.get("priority_tier", 0),
                    f"{path}.priority_tier",
                    minimum=MIN_TIER,
                    maximum=MAX_TIER,
                ),
                queues=queues,
                sharing=(
                    check.sharing(body["sharing"], f"{path}.sharing")
                    if "sharing" in body
                    else sharing
                ),
            )
        )
    used = {member for part in partitions for member in part.nodes}
    for node_group in groups:
        if node_group.name not in used:
            raise check.fail(
                f"node_groups.{_key(node_group.name)}",
                "not used by any partition (list it in one)",
            )
    return Platform(tuple(groups), tuple(partitions), name=name, sharing=sharing)


def check_limits(platform: Platform, source: str = "<platform>") -> None:
    """Check that every count and amount of ``platform`` is an integer within the
    limits of ``docs/platform.md`` (:data:`MAX_NODES` nodes in all, :data:`MAX_CORES`
    cores, :data:`MAX_MEMORY` bytes ... per node), as :func:`load_platform` does for
    a file; raise a :class:`~schedlab.errors.FormatError` naming ``source`` and the
    key path otherwise. For a :class:`Platform` built in Python, which nothing else
    has checked; the simulator calls it before building the machine. The structure
    is checked too, as in a file: at least one node group and one partition, names
    given once, partitions naming existing node groups (a tuple of names, not a
    string), a queue in one partition, sharing modes, no built-in resource as a
    consumable. ``max_nodes`` may be 0 (no limit), and a node group no partition
    uses is allowed (its nodes stay idle)."""
    check = _Checker(source)
    _check_structure(platform, check)
    total = 0
    for group in platform.node_groups:
        path = f"node_groups.{_key(str(group.name))}"
        total += check.integer(group.count, f"{path}.count", maximum=MAX_NODES, integral=True)
        check.total_nodes(total, f"{path}.count")
        check.integer(group.cores, f"{path}.cores", maximum=MAX_CORES, integral=True)
        if group.memory is not None:
            if isinstance(group.memory, bool) or not isinstance(group.memory, numbers.Integral):
                raise check.fail(f"{path}.memory", f"expected bytes, got {_kind(group.memory)}")
            check.memory(int(group.memory), f"{path}.memory")
        check.integer(group.gpus, f"{path}.gpus", minimum=0, maximum=MAX_GPUS, integral=True)
        for cname, amount in group.consumables.items():
            cpath = f"{path}.consumables.{_key(str(cname))}"
            check.integer(amount, cpath, minimum=0, maximum=MAX_CONSUMABLE, integral=True)
    for part in platform.partitions:
        path = f"partitions.{_key(str(part.name))}"
        if part.max_time is not None:
            check.integer(part.max_time, f"{path}.max_time", maximum=MAX_TIME, integral=True)
        if part.max_nodes is not None:  # 0, as None: no limit (the simulator reads both so)
            check.integer(
                part.max_nodes, f"{path}.max_nodes", minimum=0, maximum=MAX_NODES, integral=True
            )
        check.integer(
            part.priority_tier,
            f"{path}.priority_tier",
            minimum=MIN_TIER,
            maximum=MAX_TIER,
            integral=True,
        )


def _check_new_name(check: _Checker, path: str, name: object, seen: set[str], what: str) -> None:
    """``name`` (of a node group or partition at ``path``) is a valid name not in
    ``seen``, which it joins; else a :class:`FormatError` naming ``path``."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise check.fail(path, f"expected a name of letters, digits, '_', '.', '-', got {name!r}")
    if name in seen:
        raise check.fail(path, f"{what} defined twice")
    seen.add(name)


def _check_structure(platform: Platform, check: _Checker) -> None:
    """The references and names of a :class:`Platform` built in Python (see
    :func:`check_limits`); a file's are checked as it is read."""
    if not isinstance(platform.node_groups, (tuple, list)) or not platform.node_groups:
        raise check.fail("node_groups", "expected at least one node group")
    if not isinstance(platform.partitions, (tuple, list)) or not platform.partitions:
        raise check.fail("partitions", "expected at least one partition")
    if platform.sharing not in SHARING_MODES:
        raise check.fail(
            "platform.sharing",
            f"expected one of {', '.join(SHARING_MODES)}, got {platform.sharing!r}",
        )
    groups: set[str] = set()
    for group in platform.node_groups:
        path = f"node_groups.{_key(str(group.name))}"
        _check_new_name(check, path, group.name, groups, "node group")
        if not isinstance(group.consumables, Mapping):
            raise check.fail(
                f"{path}.consumables", f"expected a mapping, got {_kind(group.consumables)}"
            )
        for cname in group.consumables:
            if cname in RESERVED_NAMES:
                raise check.fail(f"{path}.consumables.{_key(str(cname))}", _reserved_text(cname))
    parts: set[str] = set()
    owner: dict[str, str] = {}
    for part in platform.partitions:
        path = f"partitions.{_key(str(part.name))}"
        _check_new_name(check, path, part.name, parts, "partition")
        if isinstance(part.nodes, str) or not isinstance(part.nodes, (tuple, list)):
            raise check.fail(
                f"{path}.nodes", f"expected a tuple of node group names, got {part.nodes!r}"
            )
        if not part.nodes:
            raise check.fail(f"{path}.nodes", "expected at least one name")
        if len(set(part.nodes)) != len(part.nodes):
            raise check.fail(f"{path}.nodes", "a node group is listed twice")
        for member in part.nodes:
            if member not in groups:
                raise check.fail(f"{path}.nodes", f"unknown node group {member!r}")
        if isinstance(part.queues, str) or not isinstance(part.queues, (tuple, list)):
            raise check.fail(
                f"{path}.queues", f"expected a tuple of queue names, got {part.queues!r}"
            )
        for queue in part.queues:
            if queue in owner:
                raise check.fail(
                    f"{path}.queues",
                    f"queue {queue!r} is already mapped to partition {owner[queue]!r}",
                )
            owner[queue] = part.name
        if part.sharing not in SHARING_MODES:
            raise check.fail(
                f"{path}.sharing",
                f"expected one of {', '.join(SHARING_MODES)}, got {part.sharing!r}",
            )


def load_platform(path: str | os.PathLike[str]) -> Platform:
    """Read and validate a platform file (TOML; schema in ``docs/platform.md``).

    Every mistake (TOML syntax, unknown keys, wrong types, non-positive counts,
    unknown references, duplicate names) raises a
    :class:`~schedlab.errors.FormatError` naming the file and the key path.
    """
    source = os.fspath(path)
    raw = read_config_bytes(source, FormatError)
    toml = _toml()
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")  # an editor's byte-order mark
        data = toml.loads(text)
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 text (byte {exc.start})", source=source) from None
    except toml.TOMLDecodeError as exc:
        raise FormatError(f"invalid TOML: {exc}", source=source) from None
    except (RecursionError, ValueError, MemoryError) as exc:
        # tomllib recurses once per nested array or inline table, and converts
        # integers with int(), which refuses more than 4,300 digits.
        raise FormatError(f"invalid TOML: {_parser_failure(exc)}", source=source) from None
    return platform_from_dict(data, source)


#: Largest configuration file (platform file, sweep file) read: 16 MiB. A real one
#: is a few kilobytes; a larger file (or a device such as ``/dev/zero``) is a
#: mistake, refused before it fills the memory.
MAX_CONFIG_BYTES = 16 * 1024**2


def read_config_bytes(source: str, error: type[SchedlabError]) -> bytes:
    """The bytes of the configuration file ``source``, at most
    :data:`MAX_CONFIG_BYTES`; a missing, unreadable or larger file is ``error``
    (:class:`~schedlab.errors.FormatError` or a subclass of
    :class:`~schedlab.errors.SchedlabError` taking one message) naming ``source``."""

    def fail(message: str) -> SchedlabError:
        if issubclass(error, FormatError):
            return error(message, source=source)
        return error(f"{source}: {message}")

    if not source.strip():
        raise error("the configuration file's name is empty")

    try:
        with open(source, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise fail("no such file or directory") from None
    except OSError as exc:
        raise fail(f"cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise fail(
            f"larger than {MAX_CONFIG_BYTES // 1024**2} MiB: not a configuration file "
            "(a real one is a few kilobytes)"
        )
    return raw


def _parser_failure(exc: BaseException) -> str:
    """What a TOML or JSON parser's non-syntax failure means, in one line."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, MemoryError):
        return "too large to parse"
    text = str(exc)
    if "integer string conversion" in text:
        return "a number with more than 4,300 digits"
    return " ".join(text.split())


# --------------------------------------------------------------------------- writing


def _toml_value(value: object) -> str:
    if isinstance(value, str):
        # TOML basic string: escape quote, backslash and every control character.
        body = "".join(
            "\\" + ch
            if ch in '"\\'
            else f"\\u{ord(ch):04x}"
            if ord(ch) < 0x20 or ch == "\x7f"
            else ch
            for ch in value
        )
        return f'"{body}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, bool):  # pragma: no cover - no boolean in the schema
        return "true" if value else "false"
    return str(value)


def dumps_platform(platform: Platform, comments: Iterable[str] = ()) -> str:
    """The platform as TOML that :func:`load_platform` reads back to an equal
    :class:`Platform`; ``comments`` are written first as ``#`` lines."""
    lines = [f"# {' '.join(c.splitlines())}" for c in comments]
    lines.append("[platform]")
    if platform.name is not None:
        lines.append(f"name = {_toml_value(platform.name)}")
    lines.append(f"sharing = {_toml_value(platform.sharing)}")
    for g in platform.node_groups:
        lines += ["", f"[node_groups.{_key(g.name)}]", f"count = {g.count}", f"cores = {g.cores}"]
        if g.memory is not None:
            lines.append(f"memory = {g.memory}")
        if g.gpus:
            lines.append(f"gpus = {g.gpus}")
        if g.consumables:
            inner = ", ".join(f"{_key(k)} = {v}" for k, v in g.consumables.items())
            lines.append(f"consumables = {{ {inner} }}")
    for p in platform.partitions:
        lines += ["", f"[partitions.{_key(p.name)}]", f"nodes = {_toml_value(p.nodes)}"]
        if p.max_time is not None:
            lines.append(f"max_time = {p.max_time}")
        if p.max_nodes is not None:
            lines.append(f"max_nodes = {p.max_nodes}")
        lines.append(f"priority_tier = {p.priority_tier}")
        lines.append(f"queues = {_toml_value(p.queues)}")
        if p.sharing != platform.sharing:
            lines.append(f"sharing = {_toml_value(p.sharing)}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- inference


@attrs.define(frozen=True, slots=True)
class Inference:
    """What :func:`infer_platform` found: the platform and one line per guess."""

    platform: Platform
    guesses: tuple[str, ...]


def _safe_name(text: str, fallback: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")
    return cleaned or fallback


def _rename_text(what: str, name: str) -> str:
    """The guess line of a partition ``infer`` renames to the valid ``name``."""
    return (
        f"{what} is not a valid platform name: named {name!r} (the simulator finds jobs "
        "asking for the trace's name there)"
    )


def trace_partition_name(number: int, header_name: str | None = None) -> str:
    """The platform name :func:`infer_platform` gives a trace's partition
    ``number``: the header's name for it (``Partition:``) made a valid platform
    name (runs of other characters become ``_``), or ``partitionN`` when the header
    names none (or the name keeps no valid character). The simulator matches a
    job's partition number to this name too (``schedlab.sim.requests``), so jobs
    land in the partition inferred for their number."""
    fallback = f"partition{number}"
    return fallback if header_name is None else _safe_name(header_name, fallback)


def _processors(job: Any, default: int = 0) -> int:
    """A job's allocated processors, else its requested ones, else ``default``: a
    whole number >= 1 (a value below 1, not a number or not finite counts as
    unknown)."""
    for value in (job.allocated_processors, job.requested_processors):
        if value is None or isinstance(value, bool):
            continue
        if isinstance(value, numbers.Integral):
            number = int(value)
        elif isinstance(value, numbers.Real) and math.isfinite(real := float(value)):
            number = int(real)
        else:
            continue
        if number >= 1:
            return number
    return default


#: Positions of the colon layout's fields infer reads (sge_accounting(5)).
_COLON_QNAME, _COLON_HOST, _COLON_SLOTS, _COLON_PE_TASK = 0, 1, 34, 41

#: Host / queue names Grid Engine writes for a job that never ran (as the Grid
#: Engine reader's ``NO_NAME``, ``schedlab.formats.sge.names``; core imports no
#: plugin): no host, no queue.
_SGE_NO_NAME = frozenset({"", "UNKNOWN", "(null)", "NONE"})

_SgeRecord: TypeAlias = tuple[str, str, int | None, bool]


def _sge_all_records(job: Any) -> list[_SgeRecord]:
    """``(queue, host, slots, parallel task?)`` of each Grid Engine record a reader
    keeps for ``job`` (colon or JSON text): ``extras['sge_record']`` for a job of
    one record, ``extras['sge_records']`` for one of several (restarts, parallel
    tasks), placeholders included (a host or queue that is not a string is
    ``""``); ``slots`` is ``None`` when not a positive whole number."""
    extras = job.extras
    if not extras:
        return []
    records = extras.get("sge_records")
    if not isinstance(records, (tuple, list)):
        one = extras.get("sge_record")
        records = (one,) if one is not None else ()
    found: list[_SgeRecord] = []
    for record in records:
        if not isinstance(record, str):
            continue
        if record.lstrip().startswith("{"):
            try:
                fields = json.loads(record)
            except ValueError:
                continue
            if not isinstance(fields, dict):
                continue
            host, queue = fields.get("hostname"), fields.get("qname")
            slots, task = fields.get("slots"), fields.get("pe_taskid")
        else:
            parts = record.split(":")
            if len(parts) < 2:
                continue
            queue, host = parts[_COLON_QNAME], parts[_COLON_HOST]
            slots = parts[_COLON_SLOTS] if len(parts) > _COLON_SLOTS else None
            task = parts[_COLON_PE_TASK] if len(parts) > _COLON_PE_TASK else None
        try:
            count = int(slots) if slots is not None and not isinstance(slots, bool) else None
        except (TypeError, ValueError):
            count = None
        is_task = isinstance(task, (str, int)) and str(task) not in ("", "NONE")
        host = host if isinstance(host, str) else ""
        queue = queue if isinstance(queue, str) else ""
        found.append((queue, host, count if count and count > 0 else None, is_task))
    return found


def _sge_placeholder(record: _SgeRecord) -> bool:
    """Whether a record names no host or no queue (:data:`_SGE_NO_NAME`: a job
    that never ran)."""
    return record[0] in _SGE_NO_NAME or record[1] in _SGE_NO_NAME


def _sge_records(job: Any) -> list[_SgeRecord]:
    """The records of :func:`_sge_all_records` that name a real host and queue;
    a placeholder (``UNKNOWN``, ``(null)``, ``NONE``, empty) is no host, no queue
    and no node size."""
    return [r for r in _sge_all_records(job) if not _sge_placeholder(r)]


def _sge_hosts(
    jobs: Iterable[Any],
) -> tuple[dict[str, int], dict[str, set[str]], tuple[int, int]]:
    """Host -> most slots one job used there, and queue -> hosts, from every Grid
    Engine record of every job (:func:`_sge_records`), and ``(records, jobs)``
    left out for a placeholder host or queue. A job of one record used
    its processors on its host; a job of several records that has parallel-task
    records spread its processors over its hosts (each host: the share, rounded
    up, a lower bound); one without (restarts) used each record's slots on that
    record's host."""
    slots: dict[str, int] = {}
    queue_hosts: dict[str, set[str]] = {}
    left_records = left_jobs = 0
    for job in jobs:
        every = _sge_all_records(job)
        records = [r for r in every if not _sge_placeholder(r)]
        if len(records) < len(every):
            left_records += len(every) - len(records)
            left_jobs += 1
        if not records:
            continue
        hosts = list(dict.fromkeys(host for _, host, _, _ in records))
        spread = len(records) > 1 and any(task for _, _, _, task in records)
        share = -(-_processors(job, len(hosts)) // len(hosts)) if spread else 0
        for queue, host, count, _ in records:
            if spread:
                used = share
            elif len(records) > 1 and count is not None:
                used = count
            else:
                used = _processors(job, 1)
            slots[host] = max(slots.get(host, 0), used)
            queue_hosts.setdefault(queue, set()).add(host)
    return slots, queue_hosts, (left_records, left_jobs)


def _real(value: object) -> float | None:
    """``value`` as a finite float, else ``None`` (a bool is not a number here)."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        number = float(value)
        if math.isfinite(number):
            return number
    return None


def _started(job: Any) -> bool:
    """Whether ``job`` is known to have started: its wait is known, it ran for a
    known time (a run time above 0: started at a time the trace does not know),
    or one of its tasks has a start time."""
    wait, run = _real(job.wait_time), _real(job.run_time)
    if wait is not None or (run is not None and run > 0):
        return True
    return any(getattr(task, "start_time", None) is not None for task in job.tasks or ())


def _job_hosts(jobs: Iterable[Any]) -> tuple[dict[str, int], int]:
    """Host -> the most cores one job used there, from the generic ``Job.hosts``
    field (Slurm's expanded ``NodeList`` ...): a job's processors spread evenly
    over its hosts, rounded up (a lower bound of the host's cores); and how many
    jobs with hosts were left out because they never started (:func:`_started`:
    their hosts are what they asked for, not where they ran)."""
    cores: dict[str, int] = {}
    never = 0
    for job in jobs:
        hosts = job.hosts
        if not hosts:
            continue
        if not _started(job):
            never += 1
            continue
        used = _processors(job, len(hosts))
        share = max(1, -(-used // len(hosts)))
        for host in hosts:
            cores[host] = max(cores.get(host, 0), share)
    return cores, never


#: ``request.NAME`` extras that are not per-node amounts of a node group.
_NOT_AMOUNTS = frozenset(("nodes", "memory", "partition", "cores"))


def _job_spread(job: Any) -> int:
    """How many nodes a job's request is spread over, as far as the trace tells:
    its node count (``Job.nodes``, the extra ``request.nodes``), else the hosts it
    ran on (``Job.hosts``; the hosts of a Grid Engine job with parallel-task
    records), else 1 (all of it on one node)."""
    for value in (job.nodes, (job.extras or {}).get("request.nodes")):
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            number = float(value)
            if math.isfinite(number) and number >= 1:
                return int(number)
    if job.hosts:
        return len(set(job.hosts))
    records = _sge_records(job)
    if len(records) > 1 and any(task for _, _, _, task in records):
        return len({host for _, host, _, _ in records})
    return 1


def _node_amounts(jobs: Iterable[Any], guesses: list[str]) -> dict[str, tuple[int, int]]:
    """Resource name (``gpus`` or a consumable) -> ``(most one job asked per node,
    that job's number)``, from the extras ``request.gpus`` and ``request.NAME``
    (job totals) over :func:`_job_spread`'s nodes, rounded up. A value that is not a
    non-negative number, or a name a platform cannot hold, is said in ``guesses``
    (once per name) and not counted."""
    most: dict[str, tuple[int, int]] = {}
    bad: set[str] = set()
    for job in jobs:
        extras = job.extras
        if not extras:
            continue
        spread = 0
        for key, value in extras.items():
            if not isinstance(key, str) or not key.startswith("request."):
                continue
            name = key[len("request.") :]
            if name in _NOT_AMOUNTS or name in bad or value is None:
                continue
            if name != "gpus" and not _NAME_RE.match(name):
                bad.add(name)
                guesses.append(
                    f"jobs ask for {key}: not a consumable name a platform takes; left out"
                )
                continue
            try:  # as the simulator reads it (schedlab.sim.requests)
                amount = float(value)
            except (TypeError, ValueError):
                amount = math.nan
            if not (math.isfinite(amount) and amount >= 0):
                bad.add(name)
                guesses.append(
                    f"job {job.job_number}: {key}={value!r} is not a non-negative number: "
                    f"{name} not inferred from it"
                )
                continue
            if amount == 0:
                continue
            spread = spread or _job_spread(job)
            per_node = math.ceil(amount / spread)
            if per_node > most.get(name, (0, 0))[0]:
                most[name] = (per_node, job.job_number)
    return most


def _header_count(
    value: int | None, label: str, limit: int, guesses: list[str], text: str | None = None
) -> int | None:
    """A header count, or ``None`` when absent, unknown (SWF writes -1; 0 tells
    nothing either) or more than a platform may hold; each dropped value is said
    in ``guesses``. ``text`` is the header's own value: one the typed accessor
    could not read (beyond 2**53 - 1, or not a whole number) is said too."""
    if value is None:
        token = (text or "").split("(")[0].strip()
        if token:
            shown = token if len(token) <= 40 else token[:37] + "..."
            if token.lstrip("+-").isdigit() and token.isascii():
                guesses.append(
                    f"{label} {shown} is more than a platform may hold (at most "
                    f"{_limit_text(limit)}): taken as not given"
                )
            else:
                guesses.append(f"{label} {shown!r} is not a whole number: taken as not given")
        return None
    if value <= 0:
        guesses.append(f"{label} {value} means unknown: taken as not given")
        return None
    if value > limit:
        guesses.append(
            f"{label} {value} is more than a platform may hold (at most {_limit_text(limit)}): "
            "taken as not given"
        )
        return None
    return value


def _pool_shape(procs: int) -> tuple[int, int]:
    """Nodes and cores per node for ``procs`` processors (at most ``MAX_NODES *
    MAX_CORES``): one-core nodes while they are few enough, else the fewest cores
    per node that keep the node count within :data:`MAX_NODES` (rounded up)."""
    cores = max(1, -(-procs // MAX_NODES))
    return -(-procs // cores), cores


def _machine_sizes(meta: Any) -> list[tuple[int, int, float]]:
    """``(cores, peak count, capacity)`` per machine size, largest first, from a
    normalizing reader's ``meta["capacity"]["peak_by_size"]`` (CPU capacity and the
    most live machines of it at once) and ``meta["normalization"]["cpu_scale"]``;
    empty when the reader tells no sizes or they do not fit a platform's limits."""
    if not isinstance(meta, Mapping):
        return []
    capacity, norm = meta.get("capacity"), meta.get("normalization")
    if not (isinstance(capacity, Mapping) and isinstance(norm, Mapping)):
        return []
    pairs, scale = capacity.get("peak_by_size"), norm.get("cpu_scale")
    if not pairs or not isinstance(scale, (int, float)) or not scale > 0:
        return []
    by_cores: dict[int, tuple[int, float]] = {}
    for ncu, peak in pairs:
        cores = math.floor(float(ncu) * scale + 1e-9)
        if cores < 1 or peak < 1:
            continue
        old = by_cores.get(cores, (0, float(ncu)))
        by_cores[cores] = (old[0] + int(peak), max(old[1], float(ncu)))
    sizes = [(c, p, ncu) for c, (p, ncu) in sorted(by_cores.items(), reverse=True)]
    if not sizes or sizes[0][0] > MAX_CORES or sum(p for _, p, _ in sizes) > MAX_NODES:
        return []
    return sizes


def infer_platform(workload: Any) -> Inference:
    """A starting platform from a workload's header and records.

    Reads ``MaxNodes``/``MaxProcs``, ``MaxRuntime``, the ``Partition:`` and
    ``Queue:`` tables and the queue/partition numbers jobs use (a partition without
    a name is called :func:`trace_partition_name`'s ``partitionN``, a queue without
    one is listed by its number as text: the names the simulator matches); for
    Grid Engine the hosts and queues every record of a job ran on; the GPUs and
    consumables jobs ask for (``request.gpus``, ``request.NAME``) as a lower bound
    per node. Everything not stated by the trace is
    a guess, returned one line each in :attr:`Inference.guesses`. Header values
    below 1 (SWF's -1 for unknown) count as not given, and so do values beyond the
    limits of a platform (``docs/platform.md``); names given twice are merged. The
    platform always passes :func:`load_platform`'s checks once written.
    """
    header = workload.header
    jobs = list(workload)  # (reading .jobs would convert a columnar workload)
    source = workload.meta.get("source", "<workload>") if isinstance(workload.meta, dict) else None
    source = source or "<workload>"
    guesses: list[str] = []
    most_procs = MAX_NODES * MAX_CORES
    max_nodes = _header_count(
        header.max_nodes, "MaxNodes", MAX_NODES, guesses, header.get("MaxNodes")
    )
    max_procs = _header_count(
        header.max_procs, "MaxProcs", most_procs, guesses, header.get("MaxProcs")
    )
    largest = max((_processors(j) for j in jobs), default=0)
    host_slots, queue_hosts, (left_records, left_jobs) = _sge_hosts(jobs)
    if left_records:
        guesses.append(
            f"{left_records:,} Grid Engine record{'s' if left_records > 1 else ''} of "
            f"{left_jobs:,} job{'s' if left_jobs > 1 else ''} name a placeholder host or "
            "queue ('UNKNOWN', '(null)', 'NONE' or empty: a job that never ran): left out "
            "of the nodes, the cores per node and the partitions"
        )
    # Hosts from the generic Job.hosts only when the header gives no machine size
    # (the header, e.g. Google's machine_events capacities, knows more).
    generic_hosts: dict[str, int] = {}
    if not (host_slots or max_nodes or max_procs):
        generic_hosts, never = _job_hosts(jobs)
        if never:
            guesses.append(
                f"{never:,} job{'s' if never > 1 else ''} with hosts never started (no wait "
                "time, no run time): their hosts and processors left out of the nodes and "
                "the cores per node (a pending job's node list is what it asked for)"
            )
    requested_parts = sorted(
        {
            str(j.extras["request.partition"])
            for j in jobs
            if j.extras and j.extras.get("request.partition") is not None
        }
    )

    shape = "header"
    # extra node groups (name, count, cores) when the machines differ in size
    groups: list[tuple[str, int, int]] = []
    sizes = _machine_sizes(workload.meta)
    if generic_hosts or host_slots:
        shape = "hosts"
        hosts = generic_hosts or host_slots
        count = len(hosts)
        cores = max(hosts.values())
        if count > MAX_NODES or cores > MAX_CORES:
            raise SchedlabError(
                f"{source}: jobs ran on {count} hosts, using up to {cores} processors of "
                f"one host: more than a platform may hold (at most {_limit_text(MAX_NODES)} "
                f"nodes of {_limit_text(MAX_CORES)} cores); write the platform by hand"
            )
        guesses.append(
            f"node count {count}: the distinct hosts jobs ran on (hosts that ran no job "
            "are missing)"
        )
        guesses.append(
            f"cores per node {cores}: the most processors per host one job used (a lower "
            "bound; nodes may differ in reality)"
            if generic_hosts
            else f"cores per node {cores}: the most slots one job used on a host (a lower bound)"
        )
    elif max_nodes and max_procs and sizes:
        groups = [
            (f"nodes-{cores}" if len(sizes) > 1 else "nodes", peak, cores)
            for cores, peak, _ in sizes
        ]
        count, cores = groups[0][1], groups[0][2]
        guesses.append(
            "machine capacities are normalized in this trace: node groups from the "
            "machines' CPU capacities (machine_events): "
            + ", ".join(
                f"{peak} node{'s' if peak > 1 else ''} of {c} cores ({ncu:g} NCU)"
                for c, peak, ncu in sizes
            )
            + " (the most live machines of that size at once; cores = floor(capacity x "
            "the reader's CPU scale))"
            + (
                "; these peaks may fall at different times, so the groups can hold more "
                f"nodes than MaxNodes {max_nodes}"
                if len(sizes) > 1 and sum(p for _, p, _ in sizes) > max_nodes
                else ""
            )
        )
    elif max_nodes and max_procs and -(-max_procs // max_nodes) <= MAX_CORES:
        count = max_nodes
        if max_procs % max_nodes == 0:
            cores = max_procs // max_nodes
        else:
            cores = -(-max_procs // max_nodes)
            guesses.append(
                f"cores per node {cores}: MaxProcs {max_procs} is not a multiple of MaxNodes "
                f"{max_nodes}; rounded up (nodes may differ in reality)"
            )
    elif max_procs:
        if max_nodes:
            guesses.append(
                f"MaxProcs {max_procs} on MaxNodes {max_nodes} is more than "
                f"{_limit_text(MAX_CORES)} cores per node: MaxNodes not used"
            )
        count, cores = _pool_shape(max_procs)
        if cores == 1:
            guesses.append(f"no MaxNodes: {max_procs} one-core nodes from MaxProcs")
        else:
            guesses.append(
                f"no MaxNodes: {count} nodes of {cores} cores for the {max_procs} processors "
                f"of MaxProcs (more than {_limit_text(MAX_NODES)} one-core nodes"
                + ("; rounded up)" if count * cores != max_procs else ")")
            )
    elif max_nodes:
        count, cores = max_nodes, 1
        guesses.append(f"no MaxProcs: one core per node for the {max_nodes} nodes of MaxNodes")
    elif 0 < largest <= most_procs:
        count, cores = _pool_shape(largest)
        guesses.append(
            f"no MaxNodes/MaxProcs: {largest} one-core nodes from the largest job (a lower bound)"
            if cores == 1
            else f"no MaxNodes/MaxProcs: {count} nodes of {cores} cores from the {largest} "
            "processors of the largest job (a lower bound, rounded up)"
        )
    elif largest > 0:
        raise SchedlabError(
            f"{source}: the largest job asks {largest} processors, more than a platform may "
            f"hold (at most {_limit_text(MAX_NODES)} nodes of {_limit_text(MAX_CORES)} cores), "
            "and the header tells no usable machine size; write the platform by hand"
        )
    else:
        raise SchedlabError(
            f"{source}: the trace tells no machine size "
            "(no MaxNodes/MaxProcs, no hosts, no job sizes); write the platform by hand"
        )
    capacity = workload.meta.get("capacity") if isinstance(workload.meta, dict) else None
    # A reader that normalizes machine capacities says so with a "capacity" entry
    # in the workload's meta: its machines' (summed over time, possibly empty).
    normalized = isinstance(capacity, Mapping)
    if groups:
        pass
    elif isinstance(capacity, Mapping) and shape == "header" and capacity.get("machines"):
        guesses.append(
            "machine capacities are normalized in this trace: cores per node come from the "
            "reader's CPU scale (MaxProcs/MaxNodes: the mean machine, as the reader tells no "
            "machine sizes; jobs larger than it will not fit)"
        )
    elif normalized:
        guesses.append(
            "machine capacities are normalized in this trace and none were read (no machine "
            "events): jobs' processors, and so cores per node, are in the reader's CPU scale"
        )
    if isinstance(capacity, Mapping) and capacity.get("unknown_capacity_machines"):
        guesses.append(
            f"{capacity['unknown_capacity_machines']} machine(s) of unknown capacity in the "
            "trace: left out of the nodes (MaxNodes and MaxProcs count the machines of "
            "known size)"
        )
    guesses.append("memory per node unknown: left out (unbounded)")
    huge = [j for j in jobs if (j.requested_memory or 0) * 1024 > MAX_MEMORY]
    if huge:
        guesses.append(
            f"{len(huge):,} job{'s' if len(huge) > 1 else ''} (job {huge[0].job_number} "
            f"first) ask{'' if len(huge) > 1 else 's'} more than "
            f"{_limit_text(MAX_MEMORY)} bytes of memory per processor (SWF requested memory "
            "is KB per processor), more than a node of unknown memory holds: they will not "
            "fit (never_fits); is that field in another unit in this trace?"
        )
    amounts = _node_amounts(jobs, guesses)
    gpus = 0
    consumables: dict[str, int] = {}
    for name in sorted(amounts, key=lambda n: (n != "gpus", n)):
        per_node, job_number = amounts[name]
        limit = MAX_GPUS if name == "gpus" else MAX_CONSUMABLE
        label = "GPUs" if name == "gpus" else f"consumable {name!r}"
        if per_node > limit:
            guesses.append(
                f"{label}: job {job_number} asks {per_node} per node, more than a node may "
                f"hold (at most {_limit_text(limit)}): left out (jobs asking for it will "
                "not fit)"
            )
            continue
        if name == "gpus":
            gpus = per_node
        else:
            consumables[name] = per_node
        guesses.append(
            f"{label} per node {per_node}: the most one job asked per node (job {job_number}; "
            f"request.{name} over the nodes or hosts it used), on every node (a lower bound; "
            "which nodes have them is not in the trace)"
        )
    if not amounts:
        guesses.append("GPUs and consumables: no job asks for any; none")
    node_groups = tuple(
        NodeGroup(name, count=n, cores=c, gpus=gpus, consumables=consumables)
        for name, n, c in (groups or [("nodes", count, cores)])
    )
    group_names = tuple(g.name for g in node_groups)

    max_time = _header_count(
        header.max_runtime, "MaxRuntime", MAX_TIME, guesses, header.get("MaxRuntime")
    )
    sharing = "shared" if host_slots or generic_hosts or normalized else "exclusive"
    if host_slots:
        why = " (Grid Engine hosts run several jobs' slots)"
    elif normalized:
        why = (
            " (its jobs ask fractions of machines of normalized capacity: machines run "
            "several jobs)"
        )
    else:
        why = ""
    guesses.append(f"sharing {sharing!r}: the trace does not say{why}")

    # Partitions: header table and the numbers jobs use.
    part_names = header.names("Partition")
    used_parts = sorted({j.partition_number for j in jobs if j.partition_number is not None})
    for number in used_parts:
        if number not in part_names:
            part_names[number] = trace_partition_name(number)
            guesses.append(
                f"partition {number} has no Partition: entry; named {part_names[number]!r}"
            )
    queue_names = header.names("Queue")
    used_queues = sorted({j.queue_number for j in jobs if j.queue_number is not None})
    for number in used_queues:
        if number not in queue_names:
            # The number as text: what the simulator matches a queue without a
            # name to (schedlab.sim.requests).
            queue_names[number] = str(number)
            guesses.append(
                f"queue {number} has no Queue: entry; listed by its number {queue_names[number]!r}"
            )
    # A name listed under two numbers is one queue for the platform (jobs of
    # either number map by the name).
    queues: list[str] = []
    queue_number: dict[str, int] = {}
    for number in sorted(queue_names):
        name = queue_names[number]
        if name in queue_number:
            guesses.append(
                f"queues {queue_number[name]} and {number} are both named {name!r}: listed once"
            )
            continue
        queue_number[name] = number
        queues.append(name)
    for q in queue_hosts:
        if q not in queues:
            queues.append(q)

    partitions: list[Partition] = []
    if requested_parts and not part_names:
        taken_names: set[str] = set()
        for name in requested_parts:
            pname = _safe_name(name, "partition")
            if pname in taken_names:
                guesses.append(
                    f"partition {name!r} asked for by jobs becomes {pname!r}, as another "
                    "one: merged"
                )
                continue
            if pname != name:
                guesses.append(_rename_text(f"partition {name!r} asked for by jobs", pname))
            taken_names.add(pname)
            partitions.append(Partition(pname, group_names, max_time=max_time, sharing=sharing))
        guesses.append(
            "one partition per partition jobs asked for (request.partition), each over every "
            "node (the trace does not say which nodes a partition has)"
        )
    elif part_names:
        names = [trace_partition_name(n, part_names[n]) for n in sorted(part_names)]
        first_number: dict[str, int] = {}
        for number, pname in zip(sorted(part_names), names, strict=True):
            if pname in first_number:
                guesses.append(
                    f"partitions {first_number[pname]} and {number} are both named {pname!r}: "
                    "merged into one partition"
                )
            else:
                first_number[pname] = number
                header_name = part_names[number]
                if pname != header_name:
                    guesses.append(_rename_text(f"partition {number} {header_name!r}", pname))
        guesses.append(
            "which nodes each partition uses is not in the trace: every partition uses every node"
        )
        unique = list(dict.fromkeys(names))
        assigned: dict[str, list[str]] = {n: [] for n in unique}
        for q in queues:
            target = q if q in assigned else unique[0]
            assigned[target].append(q)
            if target != q:
                guesses.append(f"queue {q!r} mapped to partition {target!r} (no link in the trace)")
        partitions = [
            Partition(n, group_names, max_time=max_time, queues=tuple(assigned[n]), sharing=sharing)
            for n in unique
        ]
    elif queue_hosts:
        taken: set[str] = set()
        for q in queues:
            pname = base = _safe_name(q, "queue")
            suffix = 1
            while pname in taken:
                suffix += 1
                pname = f"{base}-{suffix}"
            taken.add(pname)
            if pname != q:
                guesses.append(
                    f"queue {q!r} is not a valid platform name or is taken: its partition is "
                    f"named {pname!r} (jobs of the queue map to it through its queues list)"
                )
            partitions.append(
                Partition(pname, group_names, max_time=max_time, queues=(q,), sharing=sharing)
            )
        guesses.append(
            "one partition per Grid Engine queue, each over every node (queue "
            "instances on a subset of hosts are not modelled)"
        )
    else:
        partitions = [
            Partition(
                "default", group_names, max_time=max_time, queues=tuple(queues), sharing=sharing
            )
        ]
        guesses.append("no partitions in the trace: one partition 'default' with every queue")
    if max_time is None:
        guesses.append("no MaxRuntime: partitions have no time limit")
    guesses.append("priority tiers unknown: every partition tier 0")
    platform = Platform(node_groups, tuple(partitions), name=header.computer, sharing=sharing)
    return Inference(platform, tuple(dict.fromkeys(guesses)))
