"""Reading SSS job objects (a ``<JobGroup>`` or a standalone ``<Job>`` document).

Reading is streaming: the document is parsed incrementally (see
:mod:`.safexml`), each job is checked against rules compiled from the XSD (see
:mod:`.schema` and :mod:`.checking`), gets its defaults, is converted (see
:mod:`.mapping`) and forgotten; jobs come out in chunks. Memory is bounded by one
chunk of Job objects plus a few small per-job values (JobIds, names), never by the
document tree.

Two passes are made over documents from elsewhere: a first, cheap one collects what
the header needs before the first job comes out (user/group/queue/partition/
executable names numbered in order of first appearance, the time origin = the
earliest SubmissionTime, the JobId -> number map, the dependency DAG, which is
checked for cycles) and reports every problem of the document at once. Names are
numbered by their exact text; JobIds shared by several jobs make every job numbered by
its position, with a warning in ``workload.meta["findings"]``. Documents
written by schedlab carry that information in ``<Extension type="schedlab">``
elements before the first job and are read in one pass; their problems (if they
were edited) are then reported when iteration reaches the end.

Problems are reported all together in one :class:`SSSValidationError` naming the
file, and for each problem the line, the XML path and what is wrong; the source
lines come from a second, diagnostic parse of just the bad parts, which also runs
xmlschema on them so the report is the XSD's verdict. With ``lenient=True`` bad jobs
are skipped and counted instead (``workload.meta["skipped"]`` and
``workload.meta["rejects"]``), exactly once each: a lenient read of a one-pass
document checks every job before it returns.

Hostile documents are held to the bounds of :mod:`.limits` (nesting depth,
attributes per element, problems kept) and the numbers the mapping reads to the
ranges of :mod:`.values`; nothing but :class:`~schedlab.errors.SchedlabError`
subclasses leaves :func:`read` (``tests/test_sss_hostile.py`` fuzzes it).
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import os
import shutil
import stat
import tempfile
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Callable, Generator, Iterator
from typing import IO, Any, BinaryIO

import attrs
from schedlab.errors import FormatError, SchedlabWarning, ValidationError
from schedlab.io import open_binary, source_name
from schedlab.model import Header, HeaderEntry, Job, Workload
from schedlab.validation import WARNING, Finding

from .checking import (
    POLICIES,
    CheckReport,
    Problem,
    _not_understood,
    check_attributes,
    check_element,
    drop_xsi,
)
from .checking import shown as _shown
from .context import NAME_KINDS, DocumentContext, NameTable, is_decimal, table_name
from .defaults import apply_inner_defaults, merge, property_key
from .limits import (
    MAX_DEPTH,
    MAX_EXPLAINED,
    MAX_KEPT_PROBLEMS,
    MAX_PART_PROBLEMS,
    pruned,
    too_deep,
)
from .mapping import DEPENDENCY_KINDS, OVERRIDE_TYPE, JobDecoder, categorised_name
from .safexml import iter_top_level, parse_with_lines
from .schema import ROOTS, element_declaration, load_schema, rules
from .units import BYTE_UNITS
from .values import (
    READ_META,
    check_values,
    decode_header,
    decode_memory,
    decode_meta,
    decode_origin,
)

#: Problems listed in an error message (``error.problems`` keeps up to
#: :data:`~.limits.MAX_KEPT_PROBLEMS`; ``error.total`` counts them all).
MAX_LISTED = 20


class SSSAwarenessWarning(SchedlabWarning):
    """Elements or attributes accepted under ``awarenessPolicy="Warn"`` (a
    :class:`~schedlab.errors.SchedlabWarning`: one ``schedlab: warning:`` line on the
    command line, a ``reader-warning`` finding in ``schedlab validate``)."""


class SSSValidationError(ValidationError):
    """One or more problems in an SSS document; ``problems`` lists them all."""

    def __init__(self, problems: list[Problem], source: str, more: int = 0) -> None:
        self.problems = problems
        #: Every problem found, including those only counted (beyond the bounds of
        #: :mod:`.limits`).
        self.total = len(problems) + more
        if self.total == 1:
            only = problems[0]
            super().__init__(only.message, source=source, line=only.line, path=only.path)
            return
        shown = problems[:MAX_LISTED]
        listed = "; ".join(p.render() for p in shown)
        rest = self.total - len(shown)
        tail = f"; ... and {rest} more" if rest > 0 else ""
        super().__init__(f"{self.total} problems: {listed}{tail}", source=source)


# --------------------------------------------------------------------------- sources


class _CollectorPause:
    """Pauses the cyclic garbage collector while jobs are being built.

    Parsing allocates millions of short-lived objects but no reference cycles
    (elements, dicts and Jobs are freed by reference counting), so the collector's
    passes only cost time: about a third of the reading time. :meth:`resume` puts
    it back as the caller had it, before every chunk is handed over and at the end.
    """

    def __init__(self) -> None:
        self.was_enabled = gc.isenabled()

    def pause(self) -> None:
        gc.disable()

    def resume(self) -> None:
        if self.was_enabled:
            gc.enable()


Opener = Callable[[], BinaryIO]


class _Borrowed:
    """A caller's open file, read through without ever being closed by us."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def read(self, size: int = -1) -> bytes:
        return self._stream.read(size)

    def close(self) -> None:
        pass


def _opener(source: Any) -> tuple[Opener, Callable[[], None]]:
    """A function returning a fresh decompressed binary stream of ``source`` each
    call, and a clean-up function. Non-seekable streams are spooled to a file."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if _read_once(path):
            # A pipe, a named pipe, a device: it can be read only once, and the
            # passes need it twice. Opened once (through open_binary, which hands
            # over a pipe whose head the format detection read) and spooled,
            # decompressed, to an unnamed temporary file.
            spool = tempfile.TemporaryFile()
            try:
                with open_binary(path) as fh:
                    shutil.copyfileobj(fh, spool)
            except BaseException:
                spool.close()
                raise

            def replay() -> BinaryIO:
                spool.seek(0)
                return _Borrowed(spool)  # type: ignore[return-value]

            return replay, spool.close
        return (lambda: open_binary(path)), (lambda: None)
    if source.seekable():
        start = source.tell()

        def reopen() -> BinaryIO:
            source.seek(start)
            stream = open_binary(source)
            return _Borrowed(stream) if stream is source else stream  # type: ignore[return-value]

        return reopen, (lambda: None)
    spool = tempfile.TemporaryFile()
    shutil.copyfileobj(source, spool)
    return _opener(spool)[0], spool.close


def _read_once(path: str) -> bool:
    """Whether ``path`` is neither a regular file nor a folder (a pipe, a named pipe,
    a device): what can be read only once. A path that cannot be examined counts
    as a file (opening it says why)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


# --------------------------------------------------------------------------- scanning


@attrs.define(slots=True)
class JobItem:
    """A checked ``<Job>``: its 1-based position among jobs, its index among the
    root's children (for diagnostics), the element and what checking found."""

    position: int
    index: int
    element: ET.Element
    report: CheckReport
    #: The job's XML, kept when it is rejected in lenient mode.
    text: str = ""

    def reject(self) -> tuple[int, str]:
        """``(position, text)`` for ``meta["rejects"]``: the job's XML preceded by a
        comment listing its problems (what ``--rejects FILE`` writes)."""
        problems = "; ".join(p.render() for p in self.report.errors)
        if self.report.more:
            problems += f"; ... and {self.report.more} more"
        problems = problems.replace("--", "- -")
        return self.position, f"<!-- Job[{self.position}]: {problems} -->\n{self.text}"

    def keep_text(self, level: int) -> None:
        """Keep the job's XML for :meth:`reject` (cut to the bounds of
        :mod:`.limits` when it breaks them)."""
        elem = self.element
        if any(p.kind == "limit" for p in self.report.errors):
            elem = pruned(elem, level)
        self.text = ET.tostring(elem, encoding="unicode").strip()


@attrs.define(slots=True)
class GroupState:
    """What the scanner learned about the document outside its jobs."""

    root: str = ""
    policy: str = "Reject"
    properties: dict[str, str] = attrs.field(factory=dict)
    extensions: list[ET.Element] = attrs.field(factory=list)
    schedlab: dict[str, str] = attrs.field(factory=dict)
    defaults: ET.Element | None = None
    jobs_seen: int = 0
    defaults_after_jobs: bool = False
    #: (child index or None for the root, problem) of the root and non-job children.
    problems: list[tuple[int | None, Problem]] = attrs.field(factory=list)
    #: Problems of the root and non-job children found but not kept.
    more: int = 0
    warnings: list[Problem] = attrs.field(factory=list)
    ignored: list[Problem] = attrs.field(factory=list)
    #: True when a part carried accepted ``xsi:`` attributes (removed once checked,
    #: so a later pass must check again to remove them).
    xsi: bool = False


def check_part(
    elem: ET.Element,
    rule: Any,
    policy: str,
    path: str,
    level: int,
    report: CheckReport,
    default_unit: str,
) -> None:
    """Check one part of a document (a job, JobDefaults, a group property ...) at
    nesting ``level`` (the root is 1): its depth, then the schema rules, then (if those
    pass) the ranges of its values and its bookkeeping extensions."""
    deep = too_deep(elem, level)
    if deep is not None:
        chain, _depth = deep
        shown = chain.split("/", 1)[1]
        report.error(
            Problem(
                f"{path}/{shown}",
                f"elements nested deeper than {MAX_DEPTH} levels (the schema needs 7); "
                "the part is not read",
                getattr(elem, "sourceline", None),
                "limit",
            )
        )
        return
    check_element(elem, rule, policy, path, report)
    if report.failed:
        return
    tag = elem.tag
    if tag in ("Job", "JobDefaults"):
        check_values(elem, path, report, default_unit)
    elif tag == "Extension" and level == 2 and elem.get("type") == OVERRIDE_TYPE:
        name = elem.get("name", "")
        try:
            if name == "origin":
                decode_origin(elem.text or "")
            elif name == "header":
                decode_header(elem.text or "")
            elif name == "memory":
                decode_memory(elem.text or "")
            elif name == "meta":
                decode_meta(elem.text or "")
        except ValueError as error:
            line = getattr(elem, "sourceline", None)
            report.error(Problem(path, f"field {error}", line, "value"))


def _extension_path(elem: ET.Element) -> str:
    return f"/JobGroup/Extension[@name={elem.get('name', '')!r}]"


class Scanner:
    """Walks a document's top level, checks each part, and yields the jobs.

    Group properties, JobDefaults and group Extensions are recorded in
    :attr:`state` as they come (before the first job in most documents).
    """

    def __init__(
        self,
        source: str,
        policy: str,
        full: bool,
        check_jobs: bool = True,
        default_unit: str = "MB",
    ) -> None:
        self.source = source
        self.default_policy = policy
        self.full = full
        self.default_unit = default_unit
        #: False when a first pass already found every job valid with nothing to drop.
        self.check_jobs = check_jobs
        self.state = GroupState()

    def scan(self, stream: BinaryIO) -> Generator[JobItem, None, None]:
        """Yield every job of the document, checked (defaults not yet applied)."""
        state = self.state
        root_rules = rules()
        group_rule = root_rules["JobGroup"]
        job_rule = root_rules["Job"]
        counts: dict[str, int] = {}
        index = -1
        for event, elem in iter_top_level(stream, self.source):
            if event == "root":
                tag = elem.tag
                if tag not in ROOTS:
                    hint = " (SSS job objects have no XML namespace)" if tag.startswith("{") else ""
                    raise FormatError(
                        f"root element <{tag}> is not an SSS job object: expected <JobGroup> "
                        f"or <Job>{hint}",
                        source=self.source,
                    )
                state.root = tag
                if tag == "JobGroup":
                    report = CheckReport()
                    state.policy = check_attributes(
                        elem, group_rule, self.default_policy, "/JobGroup", report
                    )
                    self._absorb(None, report)
                continue
            if event == "document":
                report = CheckReport()
                check_part(
                    elem, job_rule, self.default_policy, "/Job", 1, report, self.default_unit
                )
                self._full_check(elem, report, "Job")
                self._drop_xsi(elem, report)
                state.warnings.extend(report.warnings)
                state.ignored.extend(report.ignored)
                state.jobs_seen = 1
                yield JobItem(1, 0, elem, report)
                continue
            index += 1
            tag = elem.tag
            path_tag = tag
            child_rule = group_rule.children.get(tag)
            if child_rule is None:
                own = (elem.get("awarenessPolicy") or "").strip()
                policy = own if own in POLICIES else state.policy
                report = CheckReport()
                _not_understood(report, policy, f"/JobGroup/{tag}", f"element <{tag}>", elem)
                self._absorb(index, report)
                continue
            counts[tag] = counts.get(tag, 0) + 1
            if tag == "Job":
                state.jobs_seen += 1
                position = state.jobs_seen
                report = CheckReport()
                if not self.check_jobs:
                    yield JobItem(position, index, elem, report)
                    continue
                path = f"/JobGroup/Job[{position}]"
                check_part(elem, job_rule, state.policy, path, 2, report, self.default_unit)
                self._full_check(elem, report, "Job")
                self._drop_xsi(elem, report)
                state.warnings.extend(report.warnings)
                state.ignored.extend(report.ignored)
                yield JobItem(position, index, elem, report)
                continue
            report = CheckReport()
            if tag == "Extension":
                path_tag = _extension_path(elem)[len("/JobGroup/") :]
            check_part(
                elem,
                child_rule,
                state.policy,
                f"/JobGroup/{path_tag}",
                2,
                report,
                self.default_unit,
            )
            self._full_check(elem, report, f"JobGroup/{tag}")
            self._drop_xsi(elem, report)
            self._absorb(index, report)
            if report.failed:
                continue
            if tag == "JobDefaults":
                state.defaults = elem
                if state.jobs_seen:
                    state.defaults_after_jobs = True
            elif tag == "Extension":
                if elem.get("type") == OVERRIDE_TYPE:
                    state.schedlab[elem.get("name", "")] = elem.text or ""
                else:
                    state.extensions.append(elem)
            else:
                state.properties[tag] = elem.text or ""
        if state.root == "JobGroup":
            self._check_group_counts(group_rule, counts)

    def _full_check(self, elem: ET.Element, report: CheckReport, declaration: str) -> None:
        if self.full and not report.failed:
            decl = element_declaration(declaration)
            if not decl.is_valid(elem):
                report.errors.append(Problem("/" + declaration, "invalid (xmlschema)"))

    def _drop_xsi(self, elem: ET.Element, report: CheckReport) -> None:
        """Remove the accepted ``xsi:`` attributes of a checked part (they direct
        validation only; the mapping never sees them)."""
        if report.xsi:
            self.state.xsi = True
            drop_xsi(elem)

    def _absorb(self, index: int | None, report: CheckReport) -> None:
        state = self.state
        state.problems.extend((index, p) for p in report.errors)
        state.more += report.more
        state.warnings.extend(report.warnings)
        state.ignored.extend(report.ignored)

    def _check_group_counts(self, rule: Any, counts: dict[str, int]) -> None:
        for tag, count in counts.items():
            limit = rule.max_occurs[tag]
            if limit is not None and count > limit:
                self.state.problems.append(
                    (
                        None,
                        Problem(
                            "/JobGroup", f"<{tag}> appears {count} times (at most {limit} allowed)"
                        ),
                    )
                )
        for tag, least in rule.min_occurs.items():
            if least and counts.get(tag, 0) < least:
                self.state.problems.append(
                    (None, Problem("/JobGroup", f"required element <{tag}> is missing"))
                )


# --------------------------------------------------------------------------- first pass


@attrs.define(slots=True)
class Plan:
    """What the first look at a document decided."""

    state: GroupState
    header: Header
    ctx: DocumentContext
    single_pass: bool
    bad_positions: set[int] = attrs.field(factory=set)
    rejects: list[tuple[int, str]] = attrs.field(factory=list)
    #: A one-pass document whose jobs were all checked already (lenient reads).
    prechecked: bool = False
    #: Notes on how the document was read (``workload.meta["findings"]``).
    findings: list[Finding] = attrs.field(factory=list)


def _effective(job: ET.Element, defaults: ET.Element | None, tag: str) -> str | None:
    text = job.findtext(tag)
    if text is None and defaults is not None:
        text = defaults.findtext(tag)
    return text


def _dependencies(job: ET.Element, defaults: ET.Element | None) -> list[ET.Element]:
    own = job.findall("Dependency")
    if defaults is None:
        return own
    keys = {property_key(d) for d in own}
    return own + [d for d in defaults.findall("Dependency") if property_key(d) not in keys]


class _Prescan:
    """What the first pass keeps of each job: its JobId, and in aggregate the order
    in which names first appear, the earliest times and the dependencies (a few
    bytes per job; values a job inherits from JobDefaults are resolved at the end,
    since JobDefaults may follow the jobs)."""

    def __init__(self) -> None:
        self.job_ids: list[str] = []
        self.good_ids: list[str] = []
        #: 1-based positions of the bad jobs (few: any makes a strict read fail).
        self.bad_positions: set[int] = set()
        self.first_seen: dict[str, dict[str, int]] = {tag: {} for tag in NAME_KINDS}
        self.first_missing: dict[str, int | None] = dict.fromkeys(NAME_KINDS)
        self.min_submission: int | None = None
        self.missing_submission = False
        self.min_start: int | None = None
        self.missing_start = False
        self.dependencies: dict[str, list[tuple[str, str]]] = {}

    def add(self, job: ET.Element, good: bool) -> None:
        """Record one job (a bad job only keeps its place in the numbering)."""
        position = len(self.job_ids)
        job_id = (job.findtext("JobId") or "").strip()
        self.job_ids.append(job_id)
        if not good:
            self.bad_positions.add(position + 1)
            return
        self.good_ids.append(job_id)
        for tag in NAME_KINDS:
            # a job without its own job-level name may inherit the defaults' one
            if job.findtext(tag) is None and self.first_missing[tag] is None:
                self.first_missing[tag] = position
            text = _job_name(job, tag)
            if text is not None:
                self.first_seen[tag].setdefault(text, position)
        submission = _int_or_none(job.findtext("SubmissionTime"))
        if submission is None:
            self.missing_submission = True
        elif self.min_submission is None or submission < self.min_submission:
            self.min_submission = submission
        start = job.findtext("StartTime")
        if start is None:
            start = job.findtext("Delivered/StartTime")
        start_time = _int_or_none(start)
        if start_time is None:
            self.missing_start = True
        elif self.min_start is None or start_time < self.min_start:
            self.min_start = start_time
        found = job.findall("Dependency")
        if found:
            self.dependencies[job_id] = [
                ((d.text or "").strip(), d.get("type", "OnSuccess")) for d in found
            ]

    def good_jobs(self) -> Iterator[tuple[int, str]]:
        """``(position, JobId)`` of each good job."""
        bad = self.bad_positions
        for position, job_id in enumerate(self.job_ids, start=1):
            if position not in bad:
                yield position, job_id

    def names(self, defaults: ET.Element | None) -> dict[str, list[str]]:
        """Each kind's names in order of first appearance (defaults included)."""
        out = {}
        for tag in NAME_KINDS:
            seen = dict(self.first_seen[tag])
            missing = self.first_missing[tag]
            # The names of the defaults a job without a job-level name may inherit
            # (the job level one, else one inside Delivered/Requested).
            if missing is not None:
                for inherited in _default_names(defaults, tag):
                    seen[inherited] = min(seen.get(inherited, missing), missing)
            out[tag] = sorted(seen, key=seen.__getitem__)
        return out

    def origin(self, defaults: ET.Element | None) -> int | None:
        """The earliest SubmissionTime (else StartTime), defaults included; else
        ``None`` (no time: the origin is unknown; 0 is a real origin, 1970-01-01)."""
        for least, missing, tag in (
            (self.min_submission, self.missing_submission, "SubmissionTime"),
            (self.min_start, self.missing_start, "StartTime"),
        ):
            candidates = [least] if least is not None else []
            if missing and defaults is not None:
                inherited = _int_or_none(defaults.findtext(tag))
                if inherited is not None:
                    candidates.append(inherited)
            if candidates:
                return min(candidates)
        return None


def _job_name(job: ET.Element, tag: str) -> str | None:
    """The name of kind ``tag`` the decoder maps for ``job`` (defaults not applied):
    the job level one, else the one inside Delivered, else inside Requested."""
    text = job.findtext(tag)
    return text if text is not None else categorised_name(job, tag)


def _default_names(defaults: ET.Element | None, tag: str) -> list[str]:
    """The names of kind ``tag`` a JobDefaults element may give a job."""
    if defaults is None:
        return []
    found = [defaults.findtext(tag), categorised_name(defaults, tag)]
    return [text for text in found if text is not None]


def _int_or_none(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


class _Trust:
    """Whether a schedlab document can be read in one pass from its bookkeeping:
    every name it holds (job level, inside Delivered/Requested, in JobDefaults) is
    in the header's name tables, or is a decimal name whose number no table name
    has, and no JobDefaults follows the jobs. An edited document may break this
    (a new user name would get a number a decimal name has; a trailing JobDefaults
    would come too late): it is then read with a full first pass."""

    def __init__(self, ctx: DocumentContext) -> None:
        self.tables = ctx.tables
        self.ok = True

    def trusted(self, table: NameTable, name: str) -> bool:
        """True when ``name`` gets the number the writer meant."""
        if name in table.by_name or table_name(name) in table.by_name:
            return True
        return is_decimal(name) and int(name) not in table.by_number

    def add(self, elem: ET.Element | None) -> None:
        """Check the names of a job (or JobDefaults)."""
        if elem is None or not self.ok:
            return
        for tag, table in self.tables.items():
            for text in (elem.findtext(tag), categorised_name(elem, tag)):
                if text is not None and not self.trusted(table, text):
                    self.ok = False
                    return


def _extended(
    state: GroupState, prescan: _Prescan, options: dict[str, Any], source: str
) -> tuple[Header, DocumentContext]:
    """The header and context of an edited schedlab document (its bookkeeping did
    not cover it, see :class:`_Trust`): those of its bookkeeping, each name table
    extended with the names the document added, numbered after every number the
    table or a decimal name of the document uses (so no two names share one)."""
    header = _header_from_extension(state, source)
    ctx = DocumentContext.from_header(header, **_ctx_options(options, state))
    ctx.origin = _origin_from_extension(state, source)
    trust = _Trust(ctx)
    changed = False
    for tag, names in prescan.names(state.defaults).items():
        table = ctx.tables[tag]
        used = set(table.by_number) | {int(n) for n in names if is_decimal(n)}
        number = 1
        for name in names:
            if trust.trusted(table, name):
                continue
            while number in used:
                number += 1
            used.add(number)
            table.add(name, number)
            changed = True
    if changed:
        ctx.set_header_tables(header)
    _check_cycles(prescan, state.defaults, source)
    return header, ctx


def _first_look(opener: Opener, source: str, options: dict[str, Any], full: bool = False) -> Plan:
    """Read up to the first job; decide between one pass (schedlab documents) and a
    full first pass (anything else, or ``full``), and build the header and the
    context."""
    scanner = Scanner(
        source,
        options["awareness"],
        options["validate"] == "full",
        default_unit=options["default_unit"],
    )
    lenient = options["lenient"]
    #: Problems of bad jobs beyond MAX_KEPT_PROBLEMS (strict reads): counted only.
    unlisted = 0
    kept = 0
    with contextlib.closing(opener()) as stream:
        jobs = scanner.scan(stream)
        first = next(jobs, None)
        state = scanner.state
        if "origin" in state.schedlab and first is not None and not state.problems and not full:
            header = _header_from_extension(state, source)
            ctx = DocumentContext.from_header(header, **_ctx_options(options, state))
            ctx.origin = _origin_from_extension(state, source)
            plan = Plan(state, header, ctx, single_pass=True)
            trust = _Trust(ctx)
            trust.add(state.defaults)
            if not lenient:
                # A look at the names of the rest (parsed, not checked: cheap).
                scanner.check_jobs = False
                collector = _CollectorPause()
                collector.pause()
                try:
                    for item in _chain(first, jobs):
                        trust.add(item.element)
                        item.element.clear()
                finally:
                    collector.resume()
                if trust.ok and not state.defaults_after_jobs and not state.problems:
                    return plan
                return _first_look(opener, source, options, full=True)
            # A lenient read checks every job now, so that the skipped jobs are
            # known (and counted once) before the workload is handed over.
            bad = _collect_bad(_chain(first, jobs), lambda item: trust.add(item.element), 2)
            if state.problems:
                raise _explained(opener, source, scanner, [], options)
            if not trust.ok or state.defaults_after_jobs:
                return _first_look(opener, source, options, full=True)
            plan.bad_positions = {item.position for item in bad}
            plan.rejects = [item.reject() for item in bad]
            plan.prechecked = True
            _emit_warnings(state, source)
            return plan
        prescan = _Prescan()

        def record(item: JobItem) -> None:
            prescan.add(item.element, not item.report.failed)

        if lenient:
            bad = _collect_bad(_chain(first, jobs), record, 1 if state.root == "Job" else 2)
        else:
            bad = []
            collector = _CollectorPause()
            collector.pause()
            try:
                for item in _chain(first, jobs):
                    report = item.report
                    if report.failed:
                        if kept < MAX_KEPT_PROBLEMS:
                            kept += len(report.errors)
                            bad.append(item)
                        else:
                            unlisted += len(report.errors) + report.more
                    record(item)
                    item.element.clear()
            finally:
                collector.resume()
    state = scanner.state
    if (state.problems or bad or unlisted) and not lenient:
        raise _explained(opener, source, scanner, bad, options, unlisted)
    plan_rejects = [item.reject() for item in bad]
    if state.problems and lenient:
        # Group-level problems cannot be skipped: the whole document depends on them.
        raise _explained(opener, source, scanner, [], options)
    if full and "origin" in state.schedlab:
        header, ctx = _extended(state, prescan, options, source)
    else:
        header, ctx = _header_from_prescan(state, prescan, options, source)
    plan = Plan(state, header, ctx, single_pass=False)
    if ctx.ambiguous_ids:
        plan.findings.append(_shared_job_id_finding(prescan, ctx.ambiguous_ids))
    plan.bad_positions = {i.position for i in bad}
    plan.rejects = plan_rejects
    _emit_warnings(state, source)
    return plan


def _chain(first: JobItem | None, rest: Iterator[JobItem]) -> Iterator[JobItem]:
    if first is not None:
        yield first
    yield from rest


def _collect_bad(
    items: Iterator[JobItem], record: Callable[[JobItem], None], level: int
) -> list[JobItem]:
    """Go through every job (lenient first pass): keep the XML of each bad one for
    ``meta["rejects"]``, call ``record`` on each, and free each job's tree."""
    bad: list[JobItem] = []
    collector = _CollectorPause()
    collector.pause()
    try:
        for item in items:
            if item.report.failed:
                item.keep_text(level)
                bad.append(item)
            record(item)
            item.element.clear()
    finally:
        collector.resume()
    return bad


def _ctx_options(options: dict[str, Any], state: GroupState) -> dict[str, Any]:
    """The context options: the reader's, except the memory mode a group records
    in its ``memory`` extension (written with ``memory="processor"``), which wins
    over the ``memory`` option (the document says how it was written)."""
    memory = options["memory"]
    if "memory" in state.schedlab:  # checked by the scan (a problem if bad)
        memory = decode_memory(state.schedlab["memory"])
    return {"memory_per": memory, "default_unit": options["default_unit"]}


def _carried_meta(state: GroupState) -> dict[str, Any]:
    """The source's ``workload.meta`` entries the group's ``meta`` extension
    carries (empty without one; checked by the scan)."""
    text = state.schedlab.get("meta")
    carried = decode_meta(text) if text is not None else {}
    # what describes a read is the SSS read's own, even in an edited document
    return {key: value for key, value in carried.items() if key not in READ_META}


def _bookkeeping_error(state: GroupState, source: str, name: str, error: Exception) -> FormatError:
    message = str(error).removeprefix(f"{name}: ")
    return FormatError(
        message, source=source, path=f"/JobGroup/Extension[@name={name!r}]", field=name
    )


def _origin_from_extension(state: GroupState, source: str) -> int | float:
    try:
        return decode_origin(state.schedlab["origin"])
    except ValueError as error:
        raise _bookkeeping_error(state, source, "origin", error) from None


def _header_from_extension(state: GroupState, source: str = "<input>") -> Header:
    header = Header()
    text = state.schedlab.get("header")
    if text:
        try:
            entries = decode_header(text)
        except ValueError as error:
            raise _bookkeeping_error(state, source, "header", error) from None
        for item in entries:
            lines = item.get("lines")
            header.entries.append(
                HeaderEntry(
                    item.get("label"),
                    item.get("value", ""),
                    tuple(item.get("continuation", ())),
                    tuple(lines) if lines is not None else None,
                )
            )
    return header


def _header_from_prescan(
    state: GroupState, prescan: _Prescan, options: dict[str, Any], source: str
) -> tuple[Header, DocumentContext]:
    defaults = state.defaults
    ctx = DocumentContext.from_names(prescan.names(defaults), **_ctx_options(options, state))
    job_ids = prescan.good_ids
    ctx.ambiguous_ids = _shared_job_ids(prescan)
    ctx.numeric_job_ids = not ctx.ambiguous_ids and all(map(is_decimal, job_ids))
    if not ctx.numeric_job_ids:
        for position, job_id in prescan.good_jobs():
            if job_id not in ctx.ambiguous_ids:
                ctx.job_numbers[job_id] = position
    origin = prescan.origin(defaults)
    ctx.origin = origin if origin is not None else 0
    _check_cycles(prescan, defaults, source, ctx.ambiguous_ids)

    header = Header()
    if origin is not None:  # (epoch 0 is an origin too)
        header.set("UnixStartTime", origin)
    for tag in ("JobGroupId", "JobGroupName", "JobGroupState", "Description", "CreationTime"):
        if tag in state.properties:
            header.set(f"SSS{tag}", " ".join(state.properties[tag].split()))
    for ext in state.extensions:
        header.add(
            "SSSExtension",
            json.dumps(
                {"name": ext.get("name"), "type": ext.get("type"), "value": ext.text or ""},
                ensure_ascii=False,
            ),
        )
    ctx.set_header_tables(header)
    return header, ctx


def _shared_job_ids(prescan: _Prescan) -> frozenset[str]:
    """The JobIds that more than one (read) job has."""
    if len(set(prescan.good_ids)) == len(prescan.good_ids):
        return frozenset()
    seen: set[str] = set()
    shared: set[str] = set()
    for job_id in prescan.good_ids:
        if job_id in seen:
            shared.add(job_id)
        else:
            seen.add(job_id)
    return frozenset(shared)


def _shared_job_id_finding(prescan: _Prescan, shared: frozenset[str]) -> Finding:
    """The warning saying that JobIds are shared, so jobs are numbered by position."""
    positions: dict[str, list[int]] = {}
    for position, job_id in prescan.good_jobs():
        if job_id in shared:
            positions.setdefault(job_id, []).append(position)
    examples = []
    for job_id, where in itertools.islice(positions.items(), 3):
        jobs = ", ".join(map(str, where[:5])) + (", ..." if len(where) > 5 else "")
        examples.append(f"{_shown(job_id)} at jobs {jobs}")
    more = f" and {len(shared) - 3} more" if len(shared) > 3 else ""
    second = min(where[1] for where in positions.values())
    return Finding(
        None,
        "job_number",
        f"{len(shared)} JobId(s) are shared by several jobs ({'; '.join(examples)}{more}): "
        "every job is numbered by its position in the document, its JobId is kept in "
        "extras['sss:JobId'], and a Dependency on a shared JobId is kept as the JobId "
        "text (its job is not known)",
        WARNING,
        "duplicate-job-id",
        job=second,
    )


def _check_cycles(
    prescan: _Prescan,
    defaults: ET.Element | None,
    source: str,
    ambiguous: frozenset[str] = frozenset(),
) -> None:
    """Raise a FormatError naming the jobs of a dependency cycle, if there is one.
    A dependency on a JobId several jobs share (``ambiguous``) names no known job and
    is not an edge."""
    inherited: list[tuple[str, str]] = []
    if defaults is not None:
        inherited = [
            ((d.text or "").strip(), d.get("type", "OnSuccess"))
            for d in defaults.findall("Dependency")
        ]
    if not prescan.dependencies and not inherited:
        return
    ids = set(prescan.good_ids) - ambiguous
    graph: dict[str, list[str]] = {}
    for job_id in prescan.good_ids:
        own = prescan.dependencies.get(job_id, [])
        targets = [t for t, _ in own] + [t for t, k in inherited if (t, k) not in own]
        if targets:
            graph.setdefault(job_id, []).extend(t for t in targets if t in ids)
    cycle = find_cycle(graph)
    if cycle:
        chain = " -> ".join(cycle)
        raise FormatError(
            f"the jobs' dependencies form a cycle ({chain}); a job group must be a "
            "directed acyclic graph",
            source=source,
            path="/JobGroup/Job/Dependency",
        )


def find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """A cycle of ``graph`` (first node repeated at the end), or ``None``."""
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(graph, white)
    for start in graph:
        if colour[start] != white:
            continue
        stack: list[tuple[str, Iterator[str]]] = [(start, iter(graph[start]))]
        colour[start] = grey
        while stack:
            node, children = stack[-1]
            for child in children:
                state = colour.get(child, black)
                if state == grey:
                    path = [n for n, _ in stack]
                    return [*path[path.index(child) :], child]
                if state == white:
                    colour[child] = grey
                    stack.append((child, iter(graph.get(child, ()))))
                    break
            else:
                colour[node] = black
                stack.pop()
    return None


def _emit_warnings(state: GroupState, source: str, extra: list[Problem] | None = None) -> None:
    found = state.warnings + (extra or [])
    if not found:
        return
    listed = "; ".join(p.render() for p in found[:MAX_LISTED])
    more = f"; ... and {len(found) - MAX_LISTED} more" if len(found) > MAX_LISTED else ""
    warnings.warn(
        SSSAwarenessWarning(
            f"{source}: {len(found)} element(s)/attribute(s) not understood and ignored "
            f"(awarenessPolicy Warn): {listed}{more}"
        ),
        stacklevel=4,
    )


# --------------------------------------------------------------------------- diagnostics


def _explained(
    opener: Opener,
    source: str,
    scanner: Scanner,
    bad: list[JobItem],
    options: dict[str, Any],
    unlisted: int = 0,
) -> SSSValidationError:
    """The error for a document with problems, with source lines and xmlschema's
    findings for each bad part (re-parsed on its own with line numbers).

    Only the first :data:`~.limits.MAX_EXPLAINED` bad parts are run through
    xmlschema (slow); the others keep schedlab's own findings, with their lines.
    ``unlisted`` counts problems found but not kept (beyond the bounds)."""
    state = scanner.state
    default_unit = options["default_unit"]
    bad_indices = {item.index: item for item in bad}
    group_indices = {i for i, _ in state.problems if i is not None}
    problems: list[Problem] = []
    more = unlisted + state.more
    try:
        with contextlib.closing(opener()) as stream:
            root = parse_with_lines(
                stream,
                source,
                keep_child=None
                if state.root == "Job"
                else (lambda i, tag: i in bad_indices or i in group_indices),
            )
    except FormatError:
        raise
    except Exception:  # the diagnostic parse only adds line numbers: fall back
        root = None
    if root is None:
        problems = [p for _, p in state.problems]
        for item in bad:
            problems.extend(item.report.errors)
            more += item.report.more
        return SSSValidationError(problems, source, more)
    root_line = getattr(root, "sourceline", None)
    for index, problem in state.problems:
        if index is None:
            problem.line = problem.line or root_line
            problems.append(problem)
    if root.tag == "Job":
        found, extra = _explain_one(root, "Job", "/Job", scanner.default_policy, default_unit, 1)
        if not found:  # cannot happen, but never report "0 problems"
            for item in bad:
                found.extend(item.report.errors)
        return SSSValidationError(problems + found, source, more + extra)
    children = list(root)
    kept_indices = sorted(bad_indices.keys() | group_indices)
    explained = 0
    for index, child in zip(kept_indices, children, strict=False):
        bad_item = bad_indices.get(index)
        use_xmlschema = explained < MAX_EXPLAINED
        if bad_item is not None:
            explained += 1
            path = f"/JobGroup/Job[{bad_item.position}]"
            found, extra = _explain_one(
                child, "Job", path, state.policy, default_unit, 2, use_xmlschema
            )
        elif element_declaration(f"JobGroup/{child.tag}") is None:
            # An element the schema does not know at all (awarenessPolicy Reject).
            found, extra = [], 0
            for i, problem in state.problems:
                if i == index:
                    problem.line = getattr(child, "sourceline", None)
                    found.append(problem)
        else:
            explained += 1
            path = _extension_path(child) if child.tag == "Extension" else f"/JobGroup/{child.tag}"
            found, extra = _explain_one(
                child, f"JobGroup/{child.tag}", path, state.policy, default_unit, 2, use_xmlschema
            )
        problems.extend(found)
        more += extra
    if not problems and not more:  # cannot happen, but never report "0 problems"
        problems = [p for _, p in state.problems]
        for item in bad:
            problems.extend(item.report.errors)
    problems.sort(key=lambda p: p.line or 0)
    return SSSValidationError(problems, source, more)


def _explain_one(
    elem: ET.Element,
    declaration: str,
    path: str,
    policy: str,
    default_unit: str = "MB",
    level: int = 2,
    use_xmlschema: bool = True,
) -> tuple[list[Problem], int]:
    """Problems of one element, and how many more were found but not kept:
    schedlab's checks with lines, plus anything more that xmlschema finds in the
    element after tolerated unknowns are dropped (``use_xmlschema``; never for a part
    beyond the bounds of :mod:`.limits`)."""
    report = CheckReport()
    if declaration == "Job":
        rule_root = rules()["Job"]
    else:
        rule_root = rules()["JobGroup"].children[declaration.split("/")[-1]]
    check_part(elem, rule_root, policy, path, level, report, default_unit)
    problems = list(report.errors)
    if not use_xmlschema or any(p.kind == "limit" for p in problems):
        return problems, report.more
    lines = {p.line for p in problems}
    unknown = {p.path.rsplit("/", 1)[-1] for p in problems if p.kind == "not-understood"}
    decl = (
        load_schema().elements["Job"] if declaration == "Job" else element_declaration(declaration)
    )
    tag = declaration.split("/")[-1]
    room = max(0, MAX_PART_PROBLEMS - len(problems))
    try:
        for error in itertools.islice(decl.iter_errors(elem), room):
            line = error.sourceline
            reason = str(error.reason)
            if line in lines or any(f"tag {name!r}" in reason for name in unknown):
                continue
            lines.add(line)
            where = error.path or ""
            if where.startswith("/" + tag):
                where = path + where[len(tag) + 1 :]
            problems.append(Problem(where or path, reason, line))
    except Exception:
        pass
    return problems, report.more


# --------------------------------------------------------------------------- reading


def read(
    source: str | os.PathLike[str] | IO[bytes],
    *,
    awareness: str = "Reject",
    validate: str = "fast",
    lenient: bool = False,
    memory: str = "job",
    default_unit: str = "MB",
    chunk_size: int = 10000,
) -> Workload:
    """Read an SSS JobGroup or Job document into a streaming Workload.

    ``awareness`` is the awarenessPolicy assumed where the document states none
    (the specification's default is Reject). ``validate="full"`` also runs
    xmlschema on every job (slow; the default checks with rules compiled from the
    same XSD). ``memory`` says whether Memory amounts are per ``"job"`` (divided by
    the processors for the common model's per-processor kilobytes) or already per
    ``"processor"``; ``default_unit`` is the unit of Memory/Disk/Swap without a
    ``units`` attribute.
    """
    awareness = str(awareness).strip().capitalize()
    if awareness not in POLICIES:
        raise FormatError(f"option awareness={awareness!r}: expected Reject, Warn or Ignore")
    if default_unit not in BYTE_UNITS:
        raise FormatError(
            f"option default_unit={default_unit!r}: expected one of {', '.join(BYTE_UNITS)}"
        )
    options = {
        "awareness": awareness,
        "validate": validate,
        "lenient": bool(lenient),
        "memory": memory,
        "default_unit": default_unit,
    }
    name = source_name(source)
    opener, cleanup = _opener(source)
    plan = _first_look(opener, name, options)
    meta: dict[str, Any] = {
        **_carried_meta(plan.state),
        "sss": {
            "root": plan.state.root,
            "group": dict(plan.state.properties),
            # group Extensions other than schedlab's, exact (the writer's source
            # for a schedlab document, whose header extension does not list them)
            "extensions": [
                {"name": ext.get("name"), "type": ext.get("type"), "value": ext.text or ""}
                for ext in plan.state.extensions
            ],
            "single_pass": plan.single_pass,
        },
        "skipped": len(plan.rejects),
        "rejects": list(plan.rejects),
        # The position in a reject is the job's index among the <Job> elements.
        "reject_position": "job",
        "warnings": [p.render() for p in plan.state.warnings],
        "ignored": len(plan.state.ignored),
        # What the reader noticed without refusing (e.g. JobIds shared by several jobs).
        "findings": list(plan.findings),
    }
    if not plan.single_pass or plan.prechecked:
        # Every <Job> element, read or skipped (known once the first pass is done).
        meta["records"] = plan.state.jobs_seen

    def chunks() -> Iterator[list[Job]]:
        yield from _main_pass(opener, name, plan, options, meta, chunk_size)

    del cleanup  # a spooled copy of a pipe is removed when it is garbage-collected
    return Workload.streaming(plan.header, chunks, meta=meta)


def _main_pass(
    opener: Opener,
    source: str,
    plan: Plan,
    options: dict[str, Any],
    meta: dict[str, Any],
    chunk_size: int,
) -> Iterator[list[Job]]:
    """Parse, check, apply defaults and convert each job, in chunks."""
    ctx = attrs.evolve(
        plan.ctx,
        tables={
            k: attrs.evolve(t, by_name=dict(t.by_name), by_number=dict(t.by_number))
            for k, t in plan.ctx.tables.items()
        },
        job_numbers=dict(plan.ctx.job_numbers),
    )
    decoder = JobDecoder(ctx, source)
    # A first pass that found nothing to drop leaves nothing to check again.
    clean = (
        not plan.single_pass
        and not plan.state.warnings
        and not plan.state.ignored
        and not plan.state.xsi
    )
    scanner = Scanner(
        source,
        options["awareness"],
        options["validate"] == "full" and not clean,
        check_jobs=not clean,
        default_unit=options["default_unit"],
    )
    defaults = plan.state.defaults
    single = plan.single_pass
    in_group = plan.state.root == "JobGroup"
    chunk: list[Job] = []
    bad: list[JobItem] = []
    kept = unlisted = 0
    edges: dict[str, list[str]] = {}
    collector = _CollectorPause()
    collector.pause()
    try:
        with contextlib.closing(opener()) as stream:
            for item in scanner.scan(stream):
                if plan.prechecked and item.position in plan.bad_positions:
                    item.element.clear()
                    continue
                if single:
                    report = item.report
                    if report.failed or bad or unlisted:
                        # A strict read: report every bad job at the end, convert no more.
                        if not report.failed:
                            item.element.clear()
                            continue
                        if kept < MAX_KEPT_PROBLEMS:
                            kept += len(report.errors)
                            bad.append(item)
                        else:
                            unlisted += len(report.errors) + report.more
                        item.element.clear()
                        continue
                    if scanner.state.defaults_after_jobs:
                        raise FormatError(
                            "JobDefaults after the first Job is not supported in a "
                            "document written by schedlab",
                            source=source,
                        )
                    defaults = scanner.state.defaults
                elif item.position in plan.bad_positions:
                    continue
                elem = item.element
                path = f"/JobGroup/Job[{item.position}]" if in_group else "/Job"
                if defaults is not None:
                    elem = merge(defaults, elem)
                    _check_merged(elem, path, source, options["default_unit"])
                elem = apply_inner_defaults(elem)
                job = decoder.decode(elem, item.position, path)
                if single and job.dependencies:
                    edges[str(job.job_number)] = [str(dep.job) for dep in job.dependencies]
                item.element.clear()
                chunk.append(job)
                if len(chunk) >= chunk_size:
                    collector.resume()
                    yield chunk
                    collector.pause()
                    chunk = []
    finally:
        collector.resume()
    if decoder.memory_unknown:
        # Set anew on each iteration (never appended twice).
        meta["findings"] = [*plan.findings, _memory_finding(decoder)]
    if single:
        _finish_single_pass(opener, source, scanner, bad, options, meta, edges, unlisted)
    if chunk:
        yield chunk


def _memory_finding(decoder: JobDecoder) -> Finding:
    """The warning that some jobs' Memory could not be made per processor."""
    return Finding(
        None,
        "requested_memory",
        f"{decoder.memory_unknown} Memory amount(s) of {decoder.memory_unknown_jobs} job(s) "
        "are job totals without any processor count (Requested or Delivered Processors) "
        "to divide them by: the per-processor memory is left unknown and the Memory "
        "element is kept in extras['sss:Requested'] / extras['sss:Delivered'] "
        "(read with memory=processor if the amounts are per processor)",
        WARNING,
        "memory-without-processors",
        job=decoder.first_memory_unknown,
    )


def _check_merged(elem: ET.Element, path: str, source: str, default_unit: str) -> None:
    """The value checks again once JobDefaults are applied: a job's own StartTime
    before an inherited SubmissionTime is caught only here (an error of the document
    in lenient reads too, since the first pass could not see it)."""
    report = CheckReport()
    check_values(elem, path, report, default_unit)
    if report.failed:
        problem = report.errors[0]
        raise FormatError(
            f"{problem.message} (with the values of JobDefaults)", source=source, path=problem.path
        )


def _finish_single_pass(
    opener: Opener,
    source: str,
    scanner: Scanner,
    bad: list[JobItem],
    options: dict[str, Any],
    meta: dict[str, Any],
    edges: dict[str, list[str]],
    unlisted: int = 0,
) -> None:
    """End of a one-pass read: report problems, check the DAG, emit warnings."""
    state = scanner.state
    if state.problems or state.more or bad or unlisted:
        # A lenient read checked every job before (``plan.prechecked``): only a
        # strict read of a one-pass document finds bad jobs here.
        raise _explained(opener, source, scanner, bad, options, unlisted)
    cycle = find_cycle(edges)
    if cycle:
        raise FormatError(
            f"the jobs' dependencies form a cycle ({' -> '.join(cycle)}); a job group must "
            "be a directed acyclic graph",
            source=source,
            path="/JobGroup/Job/Dependency",
        )
    if state.warnings and not meta.get("warned"):
        meta["warned"] = True
        meta["warnings"] = [p.render() for p in state.warnings]
        meta["ignored"] = len(state.ignored)
        _emit_warnings(state, source)


# Keep names used only by type checkers and documentation importable.
__all__ = ["DEPENDENCY_KINDS", "SSSAwarenessWarning", "SSSValidationError", "find_cycle", "read"]
