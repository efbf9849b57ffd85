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
