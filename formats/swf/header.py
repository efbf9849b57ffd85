"""SWF header comments: parsing ``; Label: value`` lines into a typed
:class:`~schedlab.model.Header`, and writing a header back.

Rules (see docs/formats/swf.md):

* A header line is any line whose first non-blank character is ``;``; blank lines
  before the first job are kept as entries too, so they write back in place.
* ``; Label: value`` (also ``;Label:value``) starts a labelled entry. A label is one
  word; a colon followed by ``//`` (``http://``) does not make a label.
* A line indented by two or more blanks after the ``;`` continues the previous entry
  when that entry's label holds free text (``Note``, ``Information``, unknown labels
  ...). Numeric and table labels (``MaxJobs``, ``Queue``, ``Partition`` ...) never
  take continuations, so e.g. the column legend LCG-2005-1 puts after its last
  ``Partition:`` stays a free-text comment.
* Anything else (a bare ``;``, free text) is an entry with ``label=None``.
* Every entry keeps its original lines; an entry that is unchanged when written
  reproduces them byte for byte. Changed or new entries are written canonically:
  ``; Label: value``, continuation lines indented under the value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from schedlab.model import SCHEDLAB_NAME_LABELS, SWF_HEADER_LABELS, Header, HeaderEntry
from schedlab.validation import out_of_range

#: Labels of free text, whose entries may take continuation lines.
FREE_TEXT_LABELS: frozenset[str] = frozenset(
    {"Computer", "Installation", "Acknowledge", "Information", "Conversion"}
    | {"Queues", "Partitions", "Note"}
)
#: Labels whose entries never take continuation lines.
SINGLE_LINE_LABELS: frozenset[str] = (frozenset(SWF_HEADER_LABELS) - FREE_TEXT_LABELS) | frozenset(
    SCHEDLAB_NAME_LABELS
)

_LABEL_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*:(?!//)(.*)$")

#: Labels whose value is one integer (SWF 2.2), with the least value that means
#: anything (``None``: any sign; -1 means unknown, as in a record's fields). The
#: value must be that integer in ASCII digits,
#: alone or followed by a remark in parentheses (``MaxNodes: 1024 (512 256 256)``,
#: as in the Parallel Workloads Archive): ``1e3``, ``64.9``, ``6 4`` or ``abc`` are
#: not read as a number.
NUMERIC_LABELS: dict[str, int | None] = {
    "MaxJobs": 0,
    "MaxRecords": 0,
    "UnixStartTime": None,
    "TimeZone": None,
    "MaxNodes": 1,
    "MaxProcs": 1,
    "MaxRuntime": 0,
    "MaxMemory": 0,
    "MaxQueues": 0,
    "MaxPartitions": 0,
}
_INTEGER_RE = re.compile(r"([+-]?[0-9]+)\s*(?:\(.*\))?")
#: Labels that hold one value: given twice, the values must be the same (a numeric
#: one the same integer). Free-text labels (``Note``, ``Information`` ...) and
#: unknown ones may repeat.
SINGLE_VALUE_LABELS: frozenset[str] = frozenset(NUMERIC_LABELS) | frozenset(
    {"Version", "Preemption", "TimeZoneString", "StartTime", "EndTime", "AllowOveruse"}
)
#: Numbered tables (``number name (details)``): a number given twice must have the
#: same name and details.
TABLE_LABELS: frozenset[str] = frozenset({"Queue", "Partition"}) | frozenset(SCHEDLAB_NAME_LABELS)
_TABLE_NUMBER_RE = re.compile(r"[+-]?[0-9]{1,16}")
#: ``UnixStartTime`` values a calendar date exists for (years 1 to 9999, UTC).
UNIX_TIME_RANGE: tuple[int, int] = (-62135596800, 253402300799)


#: Lines and bytes a header may have: real ones have less than a hundred lines.
#: Past either, the read stops with a :class:`~schedlab.errors.FormatError` naming
#: the line (lenient: the rest of the header is counted, not kept), so that a
#: header of millions of lines takes bounded memory.
MAX_HEADER_LINES = 10_000
MAX_HEADER_BYTES = 4 << 20
LONG_HEADER = (
    f"a header longer than {MAX_HEADER_LINES:,} lines or {MAX_HEADER_BYTES >> 20} MiB "
    "(no SWF header is)"
)


def shown(text: str, limit: int = 40) -> str:
    """``repr(text)`` for an error message, cut to about ``limit`` characters (``...``
    at the end), as the other readers quote a bad value: a damaged field of a
    megabyte must not make a megabyte of message."""
    quoted = repr(text)
    return quoted if len(quoted) <= limit else quoted[: limit - 3] + "..."


def is_header_line(line: str) -> bool:
    """True for a comment line (first non-blank character ``;``) or a blank line."""
    stripped = line.lstrip()
    return not stripped or stripped.startswith(";")


def _comment_text(line: str) -> str | None:
    """The text after the ``;``, or ``None`` for a blank (non-comment) line."""
    stripped = line.lstrip()
    if not stripped.startswith(";"):
        return None
    return stripped[1:]


def _is_continuation(text: str, previous: HeaderEntry | None) -> bool:
    return (
        previous is not None
        and previous.label is not None
        and previous.label not in SINGLE_LINE_LABELS
        and len(text) >= 2
        and text[:2].isspace()
        and bool(text.strip())
    )


def parse_header(lines: Iterable[str]) -> tuple[Header, list[int]]:
    """Parse header lines (without newlines) into a Header.

    Returns the header and, for each entry, the index of its first line in
    ``lines`` (used to give header findings a line number).
    """
    entries: list[HeaderEntry] = []
    starts: list[int] = []
    for index, raw in enumerate(lines):
        line = raw.rstrip("\r\n")
        text = _comment_text(line)
        previous = entries[-1] if entries else None
        if text is None:  # a blank line inside the header
            entries.append(HeaderEntry(None, "", (), (line,)))
            starts.append(index)
            continue
        if _is_continuation(text, previous):
            assert previous is not None and previous.lines is not None
            previous.continuation = (*previous.continuation, text.strip())
            previous.lines = (*previous.lines, line)
            continue
        match = _LABEL_RE.match(text)
        if match:
            entry = HeaderEntry(match.group(1), match.group(2).strip(), (), (line,))
        else:
            entry = HeaderEntry(None, text.strip(), (), (line,))
        entries.append(entry)
        starts.append(index)
    return Header(entries), starts


def header_problems(
    header: Header, starts: Sequence[int], first_line: int = 1
) -> list[tuple[int, str, str]]:
    """``(line, label, message)`` of every numeric header entry (:data:`NUMERIC_LABELS`)
    that is not one integer in range, and of every entry that repeats a
    single-valued label (:data:`SINGLE_VALUE_LABELS`) or a table number
    (:data:`TABLE_LABELS`) with a different value (which one holds is unknown);
    1-based line numbers, in header order."""
    problems: list[tuple[int, str, str]] = []
    seen: dict[tuple[str, object], tuple[object, str, int]] = {}  # key -> (value, text, line)
    for entry, start in zip(header.entries, starts, strict=True):
        label = entry.label
        if label is None:
            continue
        line = first_line + start
        text = entry.value.strip()
        key: tuple[str, object]
        value: object
        if label in NUMERIC_LABELS:
            number, why = _numeric_value(label, text)
            if why is not None:
                problems.append((line, label, f"header {label}: {why}, got {shown(text)}"))
                continue
            key, value = (label, None), number
        elif label in SINGLE_VALUE_LABELS:
            key, value = (label, None), text
        elif label in TABLE_LABELS:
            parts = text.split(None, 1)
            if not parts or not _TABLE_NUMBER_RE.fullmatch(parts[0]):
                continue  # not a table entry (Header.table skips it too)
            name, _, details = (parts[1] if len(parts) > 1 else "").partition(" ")
            key, value = (label, int(parts[0])), (name.strip(), details.strip())
        else:
            continue
        if key not in seen:
            seen[key] = (value, text, line)
            continue
        first, first_text, at = seen[key]
        if value != first:
            problems.append(
                (
                    line,
                    label,
                    f"header {label}: {shown(text)} here but {shown(first_text)} on line {at}",
                )
            )
    return problems


def _numeric_value(label: str, text: str) -> tuple[int | None, str | None]:
    """``(value, None)`` for the value ``text`` of the numeric ``label``, else
    ``(None, why)``: not one integer in ASCII digits (with an optional sign, as in
    a record's fields), or out of its range."""
    match = _INTEGER_RE.fullmatch(text)
    if match is None:
        return None, "expected an integer"
    digits = match.group(1)
    if len(digits.lstrip("+-").lstrip("0")) > 16:
        # beyond 2**53 - 1 (16 digits): neither int() (at most 4300 digits) nor
        # float() (at most about 309) is asked to read it
        return None, "out of range (at most 2**53 - 1)"
    value = int(digits)
    least = NUMERIC_LABELS[label]
    why = out_of_range(float(value))
    if why is None and label == "UnixStartTime":
        low, high = UNIX_TIME_RANGE
        if not low <= value <= high:
            why = "out of range (a date from year 1 to 9999)"
    if why is None and label == "TimeZone" and abs(value) > 86400:
        why = "out of range (at most a day, 86400 seconds, either way)"
    if why is None and least is not None and value < least and value != -1:
        why = f"expected at least {least}, or -1 (unknown)"
    return (None, why) if why is not None else (value, None)


def _entry_matches_lines(entry: HeaderEntry) -> bool:
    """True if ``entry.lines`` still parse to exactly this entry (it was not edited)."""
    if not entry.lines:
        return False
    parsed, _ = parse_header(entry.lines)
    if len(parsed.entries) != 1:
        return False
    other = parsed.entries[0]
    return (other.label, other.value, tuple(other.continuation)) == (
        entry.label,
        entry.value,
        tuple(entry.continuation),
    )


def format_entry(entry: HeaderEntry) -> list[str]:
    """The lines of one entry: the original ones if it is unchanged, else canonical."""
    if _entry_matches_lines(entry):
        return list(entry.lines or ())
    value_lines = entry.value.split("\n") if entry.value else [""]
    first, more = value_lines[0], [*value_lines[1:], *entry.continuation]
    if entry.label is None:
        head = f"; {first}".rstrip() if first else ";"
        indent = ";   "
    else:
        head = f"; {entry.label}: {first}".rstrip()
        indent = ";" + " " * (len(entry.label) + 3)
    out = [head]
    out.extend(indent + text.strip() if text.strip() else ";" for text in more)
    return out


def format_header(header: Header) -> list[str]:
    """Every header line, in order, without newlines."""
    out: list[str] = []
    for entry in header.entries:
        out.extend(format_entry(entry))
    return out


def header_line_numbers(header: Header, starts: Sequence[int], first_line: int = 1) -> dict:
    """``{label: line}`` of the first entry with each label (1-based line numbers)."""
    out: dict[str, int] = {}
    for entry, start in zip(header.entries, starts, strict=True):
        if entry.label is not None and entry.label not in out:
            out[entry.label] = first_line + start
    return out
