"""Helpers shared by the Batsim workload and jobs.csv modules: job identifiers and
the job numbers they carry, numbers checked for type, NaN, infinity and range (the
limits of every reader, :data:`~schedlab.validation.MAX_MAGNITUDE` and
:data:`~schedlab.validation.MAX_SECONDS`), extras key names."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from schedlab.errors import FormatError
from schedlab.losses import Losses
from schedlab.validation import MAX_MAGNITUDE, MAX_SECONDS, WARNING, Finding

#: Extras keys (prefix ``batsim.``) that keep what the model has no place for.
EXTRA_ID = "batsim.id"
EXTRA_WORKLOAD = "batsim.workload"
EXTRA_PROFILE = "batsim.profile"
EXTRA_PROFILE_DEF = "batsim.profile_def"
EXTRA_JOB_FIELDS = "batsim.job_fields"
EXTRA_WALLTIME = "batsim.walltime"
EXTRA_FINAL_STATE = "batsim.final_state"
EXTRA_ALLOCATED = "batsim.allocated_resources"
EXTRA_CSV = "batsim.csv"
#: The job number a reader gave a job whose id carries none it can keep (no number,
#: out of range, or the number of an earlier job): the writers write the kept id
#: (``batsim.id``) back while the job still has this number.
EXTRA_NUMBER = "batsim.number"

#: Check name of the reader finding about ids given new job numbers.
RENUMBERED = "renumbered-job"


class HugeInteger:
    """A JSON integer literal too long for Python to convert (more than
    ``sys.get_int_max_str_digits()`` digits): parsed as this marker only so that the
    reader can name where it is, then rejected as out of range."""

    __slots__ = ("digits",)

    def __init__(self, text: str) -> None:
        self.digits = len(text.lstrip("-"))

    def __repr__(self) -> str:
        return f"an integer of {self.digits} digits"


def split_id(raw: Any) -> tuple[str | None, int | None]:
    """``(workload, number)`` of a Batsim job id: ``7`` -> ``(None, 7)``,
    ``"w0!12"`` -> ``("w0", 12)``, ``"abc"`` -> ``(None, None)``. The number is
    ``None`` (unknown) unless it is an integer from 0 to 2**53 - 1 written in ASCII
    digits: ``-3``, ``"w0!1e3"``, ``2**60`` carry no job number."""
    if isinstance(raw, bool):
        return None, None
    if isinstance(raw, int):
        return None, (raw if 0 <= raw <= MAX_MAGNITUDE else None)
    text = str(raw)
    workload, sep, tail = text.rpartition("!")
    body = tail if sep else text
    number: int | None = None
    if body.isdigit() and body.isascii():
        try:
            number = int(body)
        except ValueError:  # more digits than Python converts
            number = None
        if number is not None and number > MAX_MAGNITUDE:
            number = None
    return (workload if sep else None), number


def carries(extras: dict[str, Any], job_number: int | None) -> bool:
    """Whether the id kept in ``extras["batsim.id"]`` still names a job numbered
    ``job_number``: the number in the id, or the one the reader gave it
    (``extras["batsim.number"]``). ``False`` once the job was renumbered since."""
    if split_id(extras.get(EXTRA_ID))[1] == job_number:
        return True
    return EXTRA_NUMBER in extras and extras[EXTRA_NUMBER] == job_number


def number_jobs(
    numbers: Sequence[int | None], place: Callable[[int], str]
) -> tuple[dict[int, int], list[Finding]]:
    """New job numbers for the jobs (in file order) whose id carries no number
    (``None`` in ``numbers``) or the number of an earlier job, so that every job
    has its own: ``{position: new number}``, counted from one above the highest
    number carried (in file order), and one warning finding (check
    ``renumbered-job``) per reason, naming the first such job by ``place(position)``
    (``jobs[2] (id 'abc')``, ``line 4``)."""
    distinct = set(numbers)
    if len(distinct) == len(numbers) and None not in distinct:
        return {}, []  # the common case, at C speed
    first_of: dict[int, int] = {}  # number -> position of the job that keeps it
    missing: list[int] = []
    repeated: list[tuple[int, int]] = []  # (position, number)
    for position, value in enumerate(numbers):
        if value is None:
            missing.append(position)
        elif value in first_of:
            repeated.append((position, value))
        else:
            first_of[value] = position
    seen = first_of.keys()
    if not missing and not repeated:
        return {}, []
    top = max(seen, default=0)
    fresh: Iterator[int] = itertools.chain(
        range(top + 1, int(MAX_MAGNITUDE) + 1),
        (k for k in itertools.count(0) if k not in seen),
    )
    assigned = {p: next(fresh) for p in sorted((*missing, *(p for p, _ in repeated)))}
    findings: list[Finding] = []
    if all(n > top for n in assigned.values()):
        then = "numbered above the highest number, in file order"
    else:  # the numbers above the highest would pass 2**53 - 1
        then = "given the lowest unused numbers, in file order (none is left above the highest)"
    then += "; ids kept in extras['batsim.id']"
    if missing:
        at = missing[0]
        findings.append(
            Finding(
                None,
                "job_number",
                f"{len(missing)} job id(s) carry no job number (an integer from 0 to "
                f"2**53 - 1), the first {place(at)}, now {assigned[at]}: {then}",
                WARNING,
                RENUMBERED,
            )
        )
    if repeated:
        at, value = repeated[0]
        findings.append(
            Finding(
                None,
                "job_number",
                f"{len(repeated)} job id(s) carry the job number of an earlier job, the "
                f"first {place(at)} (number {value}, as {place(first_of[value])}), "
                f"now {assigned[at]}: {then}",
                WARNING,
                RENUMBERED,
            )
        )
    return assigned, findings


def note_read_back(
    ids: Sequence[Any], numbers: Sequence[int | None], reported: Sequence[bool], losses: Losses
) -> None:
    """Report a loss of ``job_number`` for each job (written with id ``ids[i]``,
    numbered ``numbers[i]``, in file order) that the readers would number
    differently (:func:`number_jobs`), unless ``reported[i]`` already says so."""
    carried = [split_id(i)[1] for i in ids]
    assigned, _ = number_jobs(carried, str)
    lost = sum(
        1
        for at, value in enumerate(numbers)
        if not reported[at] and assigned.get(at, carried[at]) != value
    )
    losses.add(
        "job_number",
        "read back as another number (the id carries none, or that of an earlier job)",
        lost,
    )


#: A UTF-16 surrogate code point (U+D800 to U+DFFF). JSON may write one alone
#: (``"\ud800"``) and Python's :mod:`json` reads it, but it is half of a pair, not a
#: character: no UTF-8 text can hold it, so every writer would fail on it.
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def text_problem(text: str) -> str | None:
    """Why ``text`` is not Unicode text (a lone surrogate in it), else ``None``."""
    if text.isascii():
        return None
    match = _SURROGATE_RE.search(text)
    if match is None:
        return None
    return (
        f"lone UTF-16 surrogate U+{ord(match[0]):04X} in {shown(text)} (half of a pair, "
        "written alone): not a character, no UTF-8 text can hold it"
    )


def escaped(text: str) -> str:
    """``text`` for a message or a place name: a lone surrogate as its escape
    (``\\ud800``), so that the message itself can be printed and written."""
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def header_size(text: str | None) -> int | None:
    """A machine size from the header text ``text`` (``MaxProcs``): an integer from
    1 to 2**53 - 1 written in ASCII digits, else ``None``. ``str.isdigit`` alone also
    takes ``²`` (which :func:`int` refuses) and ``４`` (which it reads as 4), and
    :func:`int` refuses more than 4300 digits: none of them is a size."""
    if text is None:
        return None
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit()) or len(digits.lstrip("0")) > 16:
        return None
    size = int(digits)
    return size if 1 <= size <= MAX_MAGNITUDE else None


def shown(value: Any) -> str:
    """``value`` for a message, at most about 40 characters (a longer integer as its
    number of digits)."""
    text = repr(value)
    if len(text) <= 40:
        return text
    if isinstance(value, int) and not isinstance(value, bool):
        return f"an integer of {len(text.lstrip('-'))} digits"
    return text[:37] + "..."


def number(
    value: Any,
    *,
    source: str,
    where: str,
    field: str,
    minimum: float | None = 0.0,
    integer: bool = False,
    seconds: bool = False,
    line: int | None = None,
) -> float | int:
    """``value`` as a finite JSON number (``int`` when ``integer``), at least
    ``minimum``, within the limits of every reader (2**53 - 1; a time, ``seconds``:
    1e12 s); a one-line :class:`FormatError` otherwise. A string is not a number
    (``"30"``: Batsim's format says number, and Batsim rejects it)."""

    def fail(what: str) -> FormatError:
        return FormatError(what, source=source, line=line, path=where, field=field)

    kind = type(value)
    if kind is not int and kind is not float:
        if isinstance(value, HugeInteger):
            limit = "a time of at most 1e12 seconds" if seconds else "at most 2**53 - 1"
            raise fail(f"out of range ({limit}), got {value!r}")
        if isinstance(value, bool) or value is None or isinstance(value, str):
            raise fail(f"expected a number, got {shown(value)}")
        if not isinstance(value, (int, float)):
            raise fail(f"expected a number, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise fail(f"expected a finite number, got {value!r}")
    if seconds:
        if abs(value) > MAX_SECONDS:
            raise fail(f"out of range (a time of at most 1e12 seconds), got {shown(value)}")
    elif abs(value) > MAX_MAGNITUDE:
        raise fail(f"out of range (at most 2**53 - 1), got {shown(value)}")
    if minimum is not None and value < minimum:
        raise fail(f"expected a number >= {minimum:g}, got {value!r}")
    if integer:
        if float(value) != int(value):
            raise fail(f"expected an integer, got {value!r}")
        return int(value)
    return value


def plain(value: float | int) -> float | int:
    """An integral float as ``int`` (so JSON and CSV show ``10``, not ``10.0``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
