"""What converting a job needs to know about its document: the time origin, the
name -> number tables of users, groups, queues, partitions and executables, and the
JobId -> job number map for dependencies."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import attrs
from schedlab.model import Header

#: SSS element -> header name table label (``header.names(label)``) -> Job attribute.
NAME_KINDS: dict[str, tuple[str, str]] = {
    "UserId": ("User", "user_id"),
    "GroupId": ("Group", "group_id"),
    "Executable": ("Executable", "executable_number"),
    "Queue": ("Queue", "queue_number"),
    "Partition": ("Partition", "partition_number"),
}

#: The largest JobId or name read as a number: 2**53 - 1, the limit of every
#: schedlab reader (a job number beyond it is not exact as a float, and the other
#: formats' readers refuse it).
MAX_NUMBER = 2**53 - 1
#: A JobId or name read as a number: ASCII digits in canonical form (no leading
#: zero), at most 16 of them, and at most :data:`MAX_NUMBER`. "007", "\u0661" or an
#: 18-digit id stay text, so two different texts never become the same number.
_DECIMAL_RE = re.compile(r"(?:0|[1-9][0-9]{0,15})\Z")


def is_decimal(text: str) -> bool:
    """True when ``text`` is read as a number (see ``_DECIMAL_RE``)."""
    return _DECIMAL_RE.match(text) is not None and (len(text) < 16 or int(text) <= MAX_NUMBER)


_SPACE_RE = re.compile(r"\s")


def table_name(name: str) -> str:
    """The form a name takes in a header table (blanks become ``_``, see
    :meth:`schedlab.model.Header.set_names`)."""
    if name and _SPACE_RE.search(name) is None:
        return name
    return re.sub(r"\s+", "_", name) or "-"


@attrs.define(slots=True)
class NameTable:
    """Two-way map between the names of one kind and their numbers.

    ``by_number`` holds the table form of each name (what the header shows).
    ``by_name`` is keyed on the exact name (``exact``, tables numbered from a
    document's own names: ``"a b"``, ``"a_b"`` and ``" a b "`` are three names) or on
    the table form (tables read back from a header, which only knows that form).
    New names get the smallest unused number (from 1) when ``assign`` is allowed.
    """

    label: str
    by_name: dict[str, int] = attrs.field(factory=dict)
    by_number: dict[int, str] = attrs.field(factory=dict)
    decimal_names: bool = True
    exact: bool = False
    _next: int = 1

    def add(self, name: str, number: int) -> None:
        """Record ``name`` <-> ``number`` (the first name of a number wins)."""
        key = table_name(name)
        self.by_name.setdefault(name if self.exact else key, number)
        self.by_number.setdefault(number, key)

    def number(self, name: str, assign: bool = True) -> int | None:
        """The number of ``name``: from the table (by its exact text, then, for a table
        read from a header, by its table form); else the name itself when it is a
        decimal number and ``decimal_names``; else a new number (``assign``)."""
        found = self.by_name.get(name)
        if found is not None:
            return found
        if not self.exact:
            found = self.by_name.get(table_name(name))
            if found is not None:
                return found
        if self.decimal_names and is_decimal(name):
            return int(name)
        if not assign:
            return None
        while self._next in self.by_number:
            self._next += 1
        number = self._next
        self.add(name, number)
        return number

    def name(self, number: int) -> str:
        """The name written for ``number``: from the table, else the number itself."""
        return self.by_number.get(number, str(number))


@attrs.define(slots=True)
class DocumentContext:
    """Per-document state shared by every job of the document.

    ``origin`` is the epoch time of schedlab's time 0 (``UnixStartTime``).
    ``job_numbers`` maps JobIds that are not decimal numbers to job numbers;
    ``ambiguous_ids`` are the JobIds several jobs of the document share (their jobs
    are numbered by position and a dependency on them stays unresolved).
    """

    origin: float = 0
    tables: dict[str, NameTable] = attrs.field(factory=dict)
    job_numbers: dict[str, int] = attrs.field(factory=dict)
    ambiguous_ids: frozenset[str] = frozenset()
    numeric_job_ids: bool = True
    memory_per: str = "job"
    default_unit: str = "MB"

    @classmethod
    def from_header(cls, header: Header, **options: object) -> DocumentContext:
        """Tables from the header's name tables; decimal names are numbers."""
        ctx = cls(**options)  # type: ignore[arg-type]
        for element, (label, _attr) in NAME_KINDS.items():
            table = NameTable(label)
            for number, name in header.names(label).items():
                table.add(name, number)
            ctx.tables[element] = table
        return ctx

    @classmethod
    def from_names(cls, names: Mapping[str, Iterable[str]], **options: object) -> DocumentContext:
        """Tables numbering each kind's names 1, 2, ... in the given order, keyed on
        the exact names (two names differing in any character are two numbers)."""
        ctx = cls(**options)  # type: ignore[arg-type]
        for element, (label, _attr) in NAME_KINDS.items():
            table = NameTable(label, decimal_names=False, exact=True)
            for name in names.get(element, ()):
                table.number(name)
            ctx.tables[element] = table
        return ctx

    def job_number(self, job_id: str, position: int) -> int:
        """The job number of ``job_id`` (the job at 1-based ``position``): the JobId
        itself when JobIds are numbers (``numeric_job_ids``), else the position, which
        is distinct even when JobIds are not."""
        if self.numeric_job_ids and is_decimal(job_id):
            return int(job_id)
        if job_id not in self.ambiguous_ids:
            self.job_numbers.setdefault(job_id, position)
        return position

    def dependency_target(self, job_id: str) -> int | str:
        """A dependency's target as a job number when known, else the JobId text (a
        job outside the group, or a JobId that several jobs share)."""
        if self.numeric_job_ids and is_decimal(job_id):
            return int(job_id)
        if job_id in self.ambiguous_ids:
            return job_id
        return self.job_numbers.get(job_id, job_id)

    def set_header_tables(self, header: Header) -> None:
        """Write every non-empty name table into ``header``."""
        for table in self.tables.values():
            if table.by_number:
                header.set_names(table.label, table.by_number)
