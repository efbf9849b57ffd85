"""Safe, streaming XML parsing for SSS job objects.

Three promises, whatever the document says:

* no document type declaration (DTD) is accepted, so no entity is ever declared or
  expanded ("billion laughs") and no external entity or external DTD is ever
  resolved: nothing is fetched from the network or the file system;
* the document is parsed incrementally: :func:`iter_top_level` hands over each
  child of the root as soon as it is complete and forgets it, so memory stays
  bounded by the largest single job, not the document;
* every error names the file and line.

ElementTree keeps a text node whole until its end, so a run of whitespace (which
gzip shrinks a thousandfold) would be held in memory however long it is; runs longer
than :data:`~.limits.MAX_WHITESPACE_RUN` are refused before they are parsed (see
:class:`_BlankRuns`). The check counts bytes, so a document whose characters are two or
four bytes wide (UTF-16 and UTF-32, recognised by their first bytes as XML 1.0 appendix
F and expat do) is transcoded to UTF-8 as it is read (see :func:`_chunks`) and parsed
as UTF-8: the check, the line numbers and the element paths are then the same as for a
UTF-8 document, and UTF-8 and single-byte documents are read as before, untouched.

The DTD check runs a small :mod:`pyexpat` parser over the prolog (everything before
the root element, where a DTD must be); the body is then parsed by ElementTree's C
parser (fast), which rejects any entity reference other than the five predefined
ones. :func:`parse_with_lines` is the slower diagnostic parser that records the
source line of every element, used only to explain errors.
"""

from __future__ import annotations

import codecs
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from typing import BinaryIO
from xml.parsers import expat

from schedlab.errors import FormatError

from .limits import MAX_WHITESPACE_RUN

CHUNK_SIZE = 1 << 16
#: XML whitespace as bytes (UTF-8 and the single-byte encodings).
_BLANK = b" \t\r\n"

_CURLY = ("\u201c", "\u201d", "\u2018", "\u2019")

#: Bytes that cannot be decoded in a UTF-16/32 document (a lone surrogate, a code point
#: beyond U+10FFFF, a truncated last character) become NUL, never allowed in XML, so
#: the parser reports "not well-formed (invalid token)" at their line, as expat does
#: for a malformed UTF-16 document it decodes itself.
_INVALID = "schedlab.sss.invalid-to-nul"


def _invalid_to_nul(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return "\x00", error.end


codecs.register_error(_INVALID, _invalid_to_nul)

#: Names an XML declaration may give a wide document (case-insensitive): those expat
#: knows for UTF-16, and their UTF-32 counterparts.
_WIDE_NAMES = {
    "utf-16-le": ("UTF-16", "UTF-16LE"),
    "utf-16-be": ("UTF-16", "UTF-16BE"),
    "utf-32-le": ("UTF-32", "UTF-32LE"),
    "utf-32-be": ("UTF-32", "UTF-32BE"),
}


class LineElement(ET.Element):
    """An ElementTree element that remembers the line of its start tag.

    xmlschema reports ``error.sourceline`` from this attribute.
    """

    __slots__ = ("sourceline",)
    sourceline: int


class _StopProlog(Exception):
    pass


class _Refused(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message, self.line = message, line


def _install_guards(parser: expat.XMLParserType) -> None:
    """Refuse every DTD construct: entity declarations, external references, DTDs."""

    def entity_declaration(name, is_parameter, value, base, system_id, public_id, notation):
        kind = "parameter entity" if is_parameter else "entity"
        if system_id is not None:
            raise _Refused(
                f"external {kind} {name!r} (SYSTEM {system_id!r}) refused: schedlab never "
                "resolves external entities",
                parser.CurrentLineNumber,
            )
        raise _Refused(
            f"{kind} declaration {name!r} refused: entity expansion is disabled "
            "(protection against 'billion laughs' entity-expansion attacks)",
            parser.CurrentLineNumber,
        )

    def unparsed_entity(name, base, system_id, public_id, notation):
        raise _Refused(
            f"unparsed entity {name!r} (SYSTEM {system_id!r}) refused", parser.CurrentLineNumber
        )

    def external_reference(context, base, system_id, public_id):
        raise _Refused(
            f"external reference {system_id!r} refused: schedlab never fetches external resources",
            parser.CurrentLineNumber,
        )

    def end_doctype() -> None:
        raise _Refused(
            "document type declarations (<!DOCTYPE ...>) are not allowed in SSS job "
            "objects: DTDs, entity expansion and external entities are disabled",
            parser.CurrentLineNumber,
        )

    parser.EntityDeclHandler = entity_declaration
    parser.UnparsedEntityDeclHandler = unparsed_entity
    parser.ExternalEntityRefHandler = external_reference
    parser.EndDoctypeDeclHandler = end_doctype
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)


class PrologGuard:
    """Feeds the first bytes of a document to a guarded expat parser until the root
    element starts; raises :class:`FormatError` for any DTD or entity declaration."""

    def __init__(self, source: str, wide: str | None = None) -> None:
        self.source = source
        self.done = False
        self._parser = _expat_parser(source, wide)

        def start(name: str, attrs: dict) -> None:
            raise _StopProlog

        self._parser.StartElementHandler = start

    def feed(self, data: bytes, final: bool = False) -> None:
        """Check more bytes; sets :attr:`done` once the root element has started."""
        if self.done:
            return
        try:
            self._parser.Parse(data, final)
        except _StopProlog:
            self.done = True
        except _Refused as refused:
            raise FormatError(refused.message, source=self.source, line=refused.line) from None
        except expat.ExpatError:
            # Not well-formed: the main parser reports it with a better message.
            self.done = True


def _parse_error(error: ET.ParseError, source: str, head: bytes) -> FormatError:
    line, column = error.position
    message = re.sub(r": line \d+, column \d+$", "", str(error))
    return _well_formedness_error(message, line, column, source, head)


def _well_formedness_error(
    message: str, line: int | None, column: int | None, source: str, head: bytes
) -> FormatError:
    message = re.sub(r"^not well-formed \((.*)\)$", r"\1", message)
    detail = f"not well-formed XML: {message}"
    if column is not None:
        detail += f" at column {column + 1}"
    hint = _typographic_quotes_hint(head)
    if hint:
        detail += "; " + hint
        following = _error_after_fixing_quotes(head)
        if following:
            detail += f"; with straight quotes the next error would be: {following}"
    detail += " (parsing stops at the first well-formedness error)"
    return FormatError(detail, source=source, line=line)


def _error_after_fixing_quotes(head: bytes) -> str:
    """The first well-formedness error left once typographic quotes are replaced."""
    text = head.decode("utf-8", errors="replace")
    for quote in _CURLY:
        text = text.replace(quote, '"')
    parser = expat.ParserCreate("utf-8")  # what it is, whatever the declaration says
    _install_guards(parser)
    try:
        parser.Parse(text.encode("utf-8"), True)
    except expat.ExpatError as error:
        return f"line {error.lineno}: {expat.ErrorString(error.code)} at column {error.offset + 1}"
    except _Refused as refused:
        return f"line {refused.line}: {refused.message}"
    return ""


def _typographic_quotes_hint(head: bytes) -> str:
    """Lines that use typographic quotes inside tags (a common copy-paste error)."""
    try:
        text = head.decode("utf-8", errors="replace")
    except Exception:
        return ""
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        for tag in re.findall(r"<[^>]*>", line):
            if any(q in tag for q in _CURLY):
                lines.append(number)
                break
    if not lines:
        return ""
    shown = ", ".join(map(str, lines[:20])) + (" ..." if len(lines) > 20 else "")
    return (
        'typographic quotes (\u201c \u201d) are used instead of straight quotes (") '
        f"around attribute values on line(s) {shown}"
    )


def _expat_parser(source: str, wide: str | None, namespaces: bool = False) -> expat.XMLParserType:
    """A guarded expat parser; for a document transcoded from ``wide`` (see
    :func:`_chunks`), one that reads UTF-8 whatever the declaration says and checks
    instead that the declaration names the document's real encoding. With
    ``namespaces``, names in a namespace come as ``uri}local`` (see :func:`_clark`)
    and namespace declarations are not attributes, as in ElementTree."""
    separator = "}" if namespaces else None
    if wide is None:
        parser = expat.ParserCreate(None, separator)
    else:
        parser = expat.ParserCreate("utf-8", separator)
        parser.XmlDeclHandler = _declaration_check(source, wide)
    _install_guards(parser)
    return parser


def _declaration_check(source: str, wide: str) -> Callable[[str, str | None, int], None]:
    """An XML declaration handler refusing an encoding other than ``wide`` (expat's
    "encoding specified in XML declaration is incorrect", which it can no longer see
    once the document is transcoded)."""

    def declared(version: str, encoding: str | None, standalone: int) -> None:
        if encoding is not None and encoding.upper() not in _WIDE_NAMES[wide]:
            label = wide.upper().replace("-LE", "LE").replace("-BE", "BE")
            raise FormatError(
                f"the XML declaration names encoding {encoding[:60]!r}, but the document "
                f"is {label} (by its first bytes)",
                source=source,
                line=1,
                path="XML declaration",
                field="encoding",
            )

    return declared


def _wide_encoding(first: bytes) -> tuple[str, int] | None:
    """The codec of a document whose characters are two or four bytes wide, from its
    first four bytes, and the length of its byte order mark; None for any other.

    As XML 1.0 appendix F: a byte order mark, or ``<`` (any character, since NUL is
    never allowed) with three zero bytes for UTF-32; for UTF-16, as expat itself: a
    byte order mark, or a zero first byte (big-endian) or second byte (little-endian).
    """
    if len(first) < 2:
        return None
    if first[0] and first[1]:  # UTF-8 and single-byte documents: one test
        if first[:2] == b"\xff\xfe":
            return ("utf-32-le", 4) if first[2:4] == b"\x00\x00" else ("utf-16-le", 2)
        if first[:2] == b"\xfe\xff":
            return "utf-16-be", 2
        return None
    if first[:4] == b"\x00\x00\xfe\xff":
        return "utf-32-be", 4
    if len(first) >= 4 and first[0] and not first[1] and not first[2] and not first[3]:
        return "utf-32-le", 0
    if len(first) >= 4 and not first[0] and not first[1] and not first[2] and first[3]:
        return "utf-32-be", 0
    return ("utf-16-be", 0) if not first[0] else ("utf-16-le", 0)


def _chunks(stream: BinaryIO) -> tuple[str | None, Iterator[bytes]]:
    """The document's wide encoding (None for UTF-8 and single-byte ones) and its
    chunks, as read for a UTF-8 or single-byte document, transcoded to UTF-8 (without
    the byte order mark) for a wide one.

    Transcoding keeps every byte-level check of the reader (the whitespace bound
    first) valid for wide documents, at the cost of a decode and encode per chunk
    that UTF-8 documents do not pay.
    """
    first = stream.read(CHUNK_SIZE)
    while 0 < len(first) < 4:  # a short read: the encoding needs four bytes
        more = stream.read(CHUNK_SIZE)
        if not more:
            break
        first += more
    wide = _wide_encoding(first)
    if wide is None:
        return None, _plain(first, stream)
    codec, bom = wide
    return codec, _transcoded(first[bom:], stream, codec)


def _plain(first: bytes, stream: BinaryIO) -> Iterator[bytes]:
    chunk = first
    while chunk:
        yield chunk
        chunk = stream.read(CHUNK_SIZE)


def _transcoded(first: bytes, stream: BinaryIO, codec: str) -> Iterator[bytes]:
    decoder = codecs.getincrementaldecoder(codec)(_INVALID)
    data = first
    while data:
        text = decoder.decode(data)
        if text:
            yield text.encode("utf-8")
        data = stream.read(CHUNK_SIZE)
    text = decoder.decode(b"", True)
    if text:
        yield text.encode("utf-8")


class _BlankRuns:
    """Measures the run of XML whitespace bytes that ends the bytes seen so far, across
    chunks, the newlines in it and the bytes just before it (to name where it is): a
    few C calls per chunk, over the run's bytes only. Runs within one chunk are
    shorter than the bound anyway."""

    def __init__(self) -> None:
        self.run = 0
        #: Newlines in the part of the run already handed to the parser.
        self.newlines = 0
        self.before = b""

    def add(self, chunk: bytes) -> bool:
        """Account for ``chunk``; True when the current run exceeds the bound (the
        chunk must then not be parsed)."""
        lead = len(chunk) - len(chunk.lstrip(_BLANK))
        if lead == len(chunk):
            self.run += lead
            if self.run > MAX_WHITESPACE_RUN:
                return True
            self.newlines += chunk.count(b"\n")
            return False
        if self.run + lead > MAX_WHITESPACE_RUN:
            self.run += lead
            return True
        trail = len(chunk) - len(chunk.rstrip(_BLANK))
        end = len(chunk) - trail
        self.newlines = chunk.count(b"\n", end) if trail else 0
        self.before = chunk[max(0, end - 4096) : end]
        self.run = trail
        return False

    def start_line(self, parser: ET.XMLParser) -> int | None:
        """The line the run starts on: the parser's line (it has seen the bytes up to
        here; a NUL byte, never allowed in XML, makes it say where it is) less the
        newlines of the run. The parser is unusable afterwards."""
        try:
            parser.feed(b"\x00")
        except ET.ParseError as error:
            return error.position[0] - self.newlines
        except Exception:  # only a line number is lost
            return None
        return None

    def closed(self) -> int:
        """How many elements the tags right before the run closed (end tags and
        empty-element tags after the last start tag; comments and PIs skipped)."""
        found = _TRAILING_TAGS.search(self.before)
        count = 0
        for tag in reversed(_TAG.findall(found.group()) if found else []):
            if tag.startswith((b"<!", b"<?")):
                continue
            if not (tag.startswith(b"</") or tag.endswith(b"/>")):
                break
            count += 1
        return count


_TRAILING_TAGS = re.compile(rb"(?:<[^<>]*>[ \t\r\n]*)+\Z")
_TAG = re.compile(rb"<[^<>]*>")


def _blank_run_error(
    runs: _BlankRuns, parser: ET.XMLParser, source: str, root: ET.Element | None, jobs: int
) -> FormatError:
    """The error for a whitespace run beyond the bound, naming the element it is in
    (``jobs`` = the ``<Job>`` children of a group handed over so far)."""
    line = runs.start_line(parser)
    if root is None:
        return FormatError(_blank_run_message(""), source=source, line=line, path="(prolog)")
    # The elements last started, from the root down; the run is in the innermost one
    # not closed by the tags right before it.
    chain = [root]
    while len(chain[-1]) and len(chain) <= 64:
        chain.append(chain[-1][-1])
    closed = min(runs.closed(), len(chain))
    where = f" after </{chain[len(chain) - closed].tag}>" if closed else ""
    if closed == len(chain):
        return FormatError(_blank_run_message(where), source=source, line=line, path="(epilog)")
    steps = [f"/{root.tag}"]
    for depth, elem in enumerate(chain[1 : len(chain) - closed], start=1):
        if depth == 1 and root.tag == "JobGroup" and elem.tag == "Job":
            steps.append(f"/Job[{jobs + 1}]")
        else:
            steps.append(f"/{elem.tag}")
    return FormatError(_blank_run_message(where), source=source, line=line, path="".join(steps))


def _blank_run_message(where: str) -> str:
    return (
        f"more than {MAX_WHITESPACE_RUN >> 20} MiB of whitespace in a row{where} is refused "
        "(indentation needs a few bytes; such a run is a decompression bomb, see the "
        "bounds in docs/formats/sss.md)"
    )


def iter_top_level(stream: BinaryIO, source: str) -> Iterator[tuple[str, ET.Element]]:
    """Parse ``stream`` incrementally and yield its top-level parts.

    Yields ``("root", root)`` as soon as the root element starts (its children are
    not there yet; only its tag and attributes are meaningful), then for a
    ``JobGroup`` root ``("child", element)`` for each complete child of the root, in
    document order; each child is detached from the root before it is yielded, so
    the tree never grows beyond one child. For any other root, ``("document",
    root)`` is yielded at the end with the complete tree.
    """
    builder = ET.TreeBuilder()
    wrapper = builder.start("schedlab-wrapper", {})
    root: ET.Element | None = None
    head = b""
    grouped = False
    runs = _BlankRuns()
    jobs = 0
    try:
        wide, chunks = _chunks(stream)
        guard = PrologGuard(source, wide)
        parser = ET.XMLParser(target=builder, encoding=None if wide is None else "utf-8")
        for chunk in chunks:
            if runs.add(chunk):
                raise _blank_run_error(runs, parser, source, root, jobs)
            if len(head) < (1 << 20):
                head += chunk[: (1 << 20) - len(head)]
            if not guard.done:
                guard.feed(chunk)
            parser.feed(chunk)
            if root is None and len(wrapper):
                root = wrapper[0]
                grouped = root.tag == "JobGroup"
                yield "root", root
            if grouped:
                assert root is not None
                complete = len(root) - 1
                if complete > 0:
                    children = root[:complete]
                    del root[:complete]
                    for child in children:
                        if child.tag == "Job":
                            jobs += 1
                        yield "child", child
        if not guard.done:
            guard.feed(b"", final=True)
        builder.end("schedlab-wrapper")
        parser.close()
    except ET.ParseError as error:
        raise _parse_error(error, source, head) from None
    except (LookupError, ValueError) as error:
        # The XML declaration names an encoding Python does not know, one that is
        # not a text encoding (rot13) or a multi-byte one expat cannot use (UTF-7).
        raise _encoding_error(error, source, head) from None
    if root is None:
        raise FormatError("no root element", source=source)
    if grouped:
        for child in list(root):
            yield "child", child
        del root[:]
    else:
        yield "document", root


def _clark(name: str) -> str:
    """An expat name ``uri}local`` as ElementTree writes it, ``{uri}local``."""
    return "{" + name if "}" in name else name


def parse_with_lines(
    stream: BinaryIO, source: str, keep_child: Callable[[int, str], bool] | None = None
) -> LineElement:
    """Parse a whole document, recording each element's line (for error reports).

    With ``keep_child``, a child of the root is kept only if ``keep_child(index, tag)``
    is true (``index`` counts the root's children from 0), so explaining a few bad
    jobs of a huge group stays cheap in memory. Guards as for :func:`iter_top_level`.
    """
    stack: list[LineElement] = []
    result: list[LineElement] = []
    child_index = [-1]
    dropped_depth = [0]

    def start(tag: str, attrib: dict) -> None:
        tag = _clark(tag)
        if any("}" in name for name in attrib):
            attrib = {_clark(name): value for name, value in attrib.items()}
        if dropped_depth[0]:
            dropped_depth[0] += 1
            return
        if len(stack) == 1:
            child_index[0] += 1
            if keep_child is not None and not keep_child(child_index[0], tag):
                dropped_depth[0] = 1
                return
        elem = LineElement(tag, attrib)
        elem.sourceline = parser.CurrentLineNumber
        if stack:
            stack[-1].append(elem)
        else:
            result.append(elem)
        stack.append(elem)

    def end(tag: str) -> None:
        if dropped_depth[0]:
            dropped_depth[0] -= 1
            return
        stack.pop()

    def data(text: str) -> None:
        if dropped_depth[0] or not stack:
            return
        elem = stack[-1]
        if len(elem):
            last = elem[-1]
            last.tail = (last.tail or "") + text
        else:
            elem.text = (elem.text or "") + text

    head = b""
    try:
        wide, chunks = _chunks(stream)
        parser = _expat_parser(source, wide, namespaces=True)
        parser.buffer_text = True
        parser.StartElementHandler = start
        parser.EndElementHandler = end
        parser.CharacterDataHandler = data
        for chunk in chunks:
            if len(head) < (1 << 20):
                head += chunk[: (1 << 20) - len(head)]
            parser.Parse(chunk, False)
        parser.Parse(b"", True)
    except _Refused as refused:
        raise FormatError(refused.message, source=source, line=refused.line) from None
    except expat.ExpatError as error:
        raise _parse_error_expat(error, source, head) from None
    except (LookupError, ValueError) as error:
        raise _encoding_error(error, source, head) from None
    if not result:
        raise FormatError("no root element", source=source)
    return result[0]


_ENCODING_RE = re.compile(rb"""\A(?:\xef\xbb\xbf)?<\?xml[^>]*?encoding\s*=\s*["']([^"']*)["']""")


def _encoding_error(error: Exception, source: str, head: bytes) -> FormatError:
    """The error for an XML declaration whose encoding cannot be used."""
    match = _ENCODING_RE.match(head)
    name = match.group(1).decode("ascii", "replace")[:60] if match else "?"
    reason = str(error).split(";")[0][:120]
    return FormatError(
        f"encoding {name!r} cannot be used ({reason}); SSS documents are UTF-8, "
        "UTF-16, UTF-32 or a single-byte encoding Python knows",
        source=source,
        line=1,
        path="XML declaration",
        field="encoding",
    )


def _parse_error_expat(error: expat.ExpatError, source: str, head: bytes) -> FormatError:
    return _well_formedness_error(
        expat.ErrorString(error.code), error.lineno, error.offset, source, head
    )
