"""Loss reports: what a conversion could not carry into its target format.

A writer that cannot represent a value (a field the target has no place for, an
unknown value the target cannot call unknown, a header label it drops) says so
instead of dropping it silently. It records each kind of loss once per field and
action, with the number of records it affects::

    from schedlab import writer_losses

    def write_mine(workload, path, **options):
        with writer_losses() as losses:
            for job in workload:
                if job.name is not None:
                    losses.add("name", "not written (the format has no job name)")
                ...
            return losses

On leaving the block the losses are handed to the enclosing :func:`collect_losses`
(what ``schedlab convert`` uses to print its summary); when that collection is
strict (``convert --strict-lossless``) any loss raises :class:`LossError` from
inside the writer, so :func:`schedlab.write` discards the staged output and the
target stays as it was. A writer called outside any collection just returns its
report.

Field names are the :class:`~schedlab.model.Job` attribute names (``run_time``,
``hosts`` ...), ``extras.KEY`` for a per-job extra, ``header.LABEL`` for a header
entry (counted as one record) and ``meta.KEY`` for workload metadata.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING

import attrs

from .errors import SchedlabError

if TYPE_CHECKING:
    from .model import Header


@attrs.define(frozen=True, slots=True)
class Loss:
    """One kind of loss: ``records`` records lost ``field``, and what was done
    instead (``action``, e.g. ``"written as 0"`` or ``"not written"``)."""

    #: What was lost: a model field (``requested_time``), or ``header.LABEL`` for a
    #: header label and ``extras.KEY`` for a source field.
    field: str
    #: How many records lost it.
    records: int
    #: What was done instead, e.g. ``"not written"`` or ``"written as 0"``.
    action: str

    def __str__(self) -> str:
        noun = "record" if self.records == 1 else "records"
        return f"{self.field}: {self.records:,} {noun}, {self.action}"


#: Loss actions the summary folds per group (header labels, extras): the value
#: was dropped, so one line naming them says enough.
_NOT_CARRIED = ("not written", "not carried")


class Losses:
    """A collector of :class:`Loss` entries, keyed by (field, action), in order of
    first report.

    >>> losses = Losses()
    >>> losses.add("name", "not written", 3)
    >>> losses.add("name", "not written")
    >>> [str(loss) for loss in losses]
    ['name: 4 records, not written']
    """

    __slots__ = ("_counts", "reports")

    def __init__(self, entries: Iterable[Loss] = ()) -> None:
        self._counts: dict[tuple[str, str], int] = {}
        #: Writer reports merged into this collection (0: no writer said anything,
        #: not even that it lost nothing).
        self.reports = 0
        for loss in entries:
            self.add(loss.field, loss.action, loss.records)

    def add(self, field: str, action: str, records: int = 1) -> None:
        """Count ``records`` more records that lost ``field`` (``action`` says what was
        done); a count of 0 records nothing."""
        if records <= 0:
            return
        key = (field, action)
        self._counts[key] = self._counts.get(key, 0) + int(records)

    def merge(self, other: Losses) -> None:
        """Add every entry of ``other``."""
        for (field, action), records in other._counts.items():
            self.add(field, action, records)

    def count(self, field: str) -> int:
        """Records that lost ``field`` (over every action)."""
        return sum(n for (f, _), n in self._counts.items() if f == field)

    def fields(self) -> list[str]:
        """Fields with a loss, in order of first report."""
        return list(dict.fromkeys(f for f, _ in self._counts))

    def first(self) -> Loss | None:
        """The first loss reported, or ``None``."""
        for loss in self:
            return loss
        return None

    def __iter__(self) -> Iterator[Loss]:
        for (field, action), records in self._counts.items():
            yield Loss(field, records, action)

    def __len__(self) -> int:
        return len(self._counts)

    def __bool__(self) -> bool:
        return bool(self._counts)

    def __contains__(self, field: object) -> bool:
        return any(f == field for f, _ in self._counts)

    def __repr__(self) -> str:
        return f"<Losses {[str(loss) for loss in self]}>"

    def as_dicts(self) -> list[dict[str, object]]:
        """``[{"field", "records", "action"}, ...]`` (for JSON output)."""
        return [attrs.asdict(loss) for loss in self]

    def summary(self, limit: int = 12) -> list[str]:
        """Short lines for people: one per loss, with the header labels and the
        per-job extras that were not carried (an action starting with "not written"
        or "not carried") each folded into one line; a header label or an extra
        written some other way (changed, replaced ...) has a line of its own, with
        its own count. At most ``limit`` lines (then a line counting the rest)."""
        lines: list[str] = []
        folded: dict[str, dict[str, int]] = {"header": {}, "extras": {}}
        for loss in self:
            group, dot, key = loss.field.partition(".")
            if dot and group in folded and loss.action.startswith(_NOT_CARRIED):
                folded[group][key] = max(folded[group].get(key, 0), loss.records)
            else:
                lines.append(str(loss))
        for group, what in (("header", "label(s)"), ("extras", "source field(s)")):
            keys = folded[group]
            if not keys:
                continue
            names = ", ".join(keys)
            if len(names) > 60:
                names = names[:57] + "..."
            most = max(keys.values())
            noun = "record" if most == 1 else "records"
            lines.append(
                f"{group}: {len(keys)} {what} ({names}) in up to {most:,} {noun}, not carried"
            )
        if len(lines) > limit:
            rest = len(lines) - (limit - 1)
            lines = [*lines[: limit - 1], f"... and {rest} more"]
        return lines

    def report_lines(self, *, every: bool = False, flag: str | None = None) -> list[str]:
        """The lines a command prints about these losses: one per loss with
        ``every``, else :meth:`summary`, which then ends with a hint at ``flag``
        (the command's option listing every loss, e.g. ``--all-losses``) when it
        left lines or folded names out."""
        if every:
            return [str(loss) for loss in self]
        lines = self.summary()
        if flag is None:
            return lines
        hint = f"{flag} lists every loss"
        if len(self.summary(limit=len(self) + 1)) > len(lines):  # lines cut
            return [*lines[:-1], f"{lines[-1]} ({hint})"]
        if any("...) in up to " in line for line in lines):  # folded names cut
            return [*lines, f"({hint})"]
        return lines


def loss_heading(name: str, verb: str = "could not") -> str:
    """The heading line of a loss report on output ``name`` (``verb``: "could not",
    or "would not" when nothing was written)."""
    return f"schedlab: what {name} {verb} carry (field: records, what was done):"


class LossError(SchedlabError):
    """A conversion would lose data and losses were not allowed (strict mode)."""

    def __init__(self, loss: Loss, total: int) -> None:
        self.loss, self.total = loss, total
        noun = "record" if loss.records == 1 else "records"
        more = f" (and {total - 1} more kind(s) of loss)" if total > 1 else ""
        super().__init__(
            f"conversion would lose {loss.field} in {loss.records:,} {noun} "
            f"({loss.action}){more}; nothing written (--strict-lossless)"
        )

    def pointing_to(self, flag: str, *, listed: bool) -> LossError:
        """This error (its message rewritten) saying how many kinds of loss there
        are and where they are: ``listed`` above, or listed by the command's option
        ``flag`` (e.g. ``--all-losses``). One loss is named in full already."""
        if self.total <= 1:
            return self
        more = f" (and {self.total - 1} more kind(s) of loss)"
        where = "listed above" if listed else f"{flag} lists all {self.total}"
        message = str(self)
        if more in message:
            message = message.replace(
                more, f" (and {self.total - 1} more kind(s) of loss, {where})"
            )
        else:
            message = f"{message} ({self.total} kinds of loss, {where})"
        self.args = (message,)
        return self


@attrs.define(slots=True)
class _Collection:
    losses: Losses
    strict: bool


_ACTIVE: ContextVar[_Collection | None] = ContextVar("schedlab_losses", default=None)


@contextlib.contextmanager
def collect_losses(*, strict: bool = False) -> Iterator[Losses]:
    """Collect the losses of every writer run inside the block.

    With ``strict=True`` a writer that loses anything raises :class:`LossError`
    before its output is renamed into place, so nothing is written; so does a
    writer that reports nothing at all (it never opens :func:`writer_losses`: its
    losses are unknown), with a :class:`~schedlab.errors.SchedlabError`.

    >>> import schedlab
    >>> with schedlab.collect_losses() as losses:            # doctest: +SKIP
    ...     schedlab.write(workload, "out.gwf", format="google")
    >>> losses.summary()                                    # doctest: +SKIP
    """
    collection = _Collection(Losses(), strict)
    token = _ACTIVE.set(collection)
    try:
        yield collection.losses
    finally:
        _ACTIVE.reset(token)


def report_losses(losses: Losses) -> None:
    """Hand a writer's ``losses`` to the enclosing :func:`collect_losses`; in a
    strict collection a non-empty report raises :class:`LossError`."""
    collection = _ACTIVE.get()
    if collection is None:
        return
    collection.losses.merge(losses)
    collection.losses.reports += 1
    if collection.strict and losses:
        first = losses.first()
        assert first is not None
        raise LossError(first, len(losses))


def _strict_reports() -> int | None:
    """The reports the enclosing strict :func:`collect_losses` has had so far
    (``None``: no strict collection is active)."""
    collection = _ACTIVE.get()
    if collection is None or not collection.strict:
        return None
    return collection.losses.reports


def _refuse_unreported(before: int | None, writer: str) -> None:
    """In a strict collection (``before``: :func:`_strict_reports` before the writer
    ran), an error unless the writer reported (it opened :func:`writer_losses`): a
    writer that says nothing has unknown losses, which strict mode cannot check.
    Raised inside :func:`schedlab.write`'s staging, so nothing is written."""
    collection = _ACTIVE.get()
    if before is None or collection is None or collection.losses.reports > before:
        return
    raise SchedlabError(
        f"writer {writer!r} does not report what it could not carry (losses unknown), "
        "so the conversion cannot be checked; nothing written (--strict-lossless)"
    )


@contextlib.contextmanager
def writer_losses() -> Iterator[Losses]:
    """A fresh :class:`Losses` for one writer run, reported with
    :func:`report_losses` when the block ends without an error."""
    losses = Losses()
    yield losses
    report_losses(losses)


#: :class:`~schedlab.model.Job` attributes beyond the 18 SWF fields.
RICH_FIELDS: tuple[str, ...] = (
    "name",
    "account",
    "nodes",
    "hosts",
    "exit_code",
    "priority",
    "tasks",
    "dependencies",
)


def note_fields(
    losses: Losses, job: object, fields: Iterable[str], action: str = "not written"
) -> None:
    """Count a loss for each of ``fields`` that ``job`` has a value for (not ``None``
    and not an empty tuple)."""
    for field in fields:
        value = getattr(job, field)
        if value is not None and value != ():
            losses.add(field, action)


def note_extras(
    losses: Losses,
    extras: dict[str, object] | None,
    kept: Iterable[str] | frozenset[str] = frozenset(),
    action: str = "not written",
) -> None:
    """Count a loss ``extras.KEY`` for every key of ``extras`` not in ``kept``."""
    if not extras:
        return
    for key in extras:
        if key not in kept:
            losses.add(f"extras.{key}", action)


def note_table_entries(
    losses: Losses,
    header: Header,
    label: str,
    used: Collection[object],
    action: str = "entries no job uses, and text after a name, not written",
) -> int:
    """Count one loss ``header.LABEL`` for the entries of the header's name table
    ``label`` (``"User"``, ``"Queue"``...) that a format making its tables from
    the records' names cannot give back: those whose number is not in ``used`` (the
    numbers the written jobs carry) and those with text after the name. Returns
    how many there were (none: nothing is added)."""
    dropped = sum(1 for e in header.table(label) if e.details or e.number not in used)
    losses.add(f"header.{label}", action, dropped)
    return dropped


# Public (plugin toolkit, ``schedlab.compat.PLUGIN_TOOLKIT``); the other names may change.
__all__ = [
    "RICH_FIELDS",
    "Loss",
    "LossError",
    "Losses",
    "collect_losses",
    "loss_heading",
    "note_extras",
    "note_fields",
    "note_table_entries",
    "writer_losses",
]
