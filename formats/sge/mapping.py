"""The mapping from Grid Engine accounting records to the common model.

The table with every field and each decision is in docs/formats/sge.md; the code
here is the single implementation of it:

* :func:`parse_requests` reads the requested wall time (``h_rt``), processors
  (``-pe name N``) and memory per slot (``h_vmem`` ...) from a category string, or
  from the qsub options of a submit command line (:func:`qsub_requests`);
* :func:`swf_status` turns ``failed`` / ``exit_status`` / ``deleted_by`` into the
  SWF status 0 (failed), 1 (completed) or 5 (cancelled or killed);
* :func:`build_header` writes where the data came from and the name tables.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from unicodedata import decimal

import numpy as np
from schedlab.model import Header
from schedlab.validation import MAX_MAGNITUDE, MAX_SECONDS

from .names import shown

#: ``failed`` codes after which an exit status above 128 (killed by a signal) means
#: the job was deleted or killed by Grid Engine: 100 "assumedly after job" (qdel of a
#: running job, or a limit enforced by execd) and 37 (limit enforced by qmaster).
KILLED_FAILED_CODES = (37, 100)

#: The ``exit_status`` of an intermediate ``acct`` record (reporting file) of a job
#: still running: OCS writes ``-1`` as an unsigned 32-bit number
#: (``sge_rusage.cc``, ``sge_write_rusage``: "set exit_status to -1, meaning in
#: ARCo: Job still running"; ``end_time`` is then the time of writing).
RUNNING_EXIT_STATUS = 4294967295

#: Record keys read as integers, in row order (the reader's field names start so).
HEAD_KEYS = (
    "job_number",
    "task_number",
    "submission_time",
    "start_time",
    "end_time",
    "failed",
    "exit_status",
    "slots",
)
#: Record keys of the name fields.
TEXT_KEYS = ("qname", "owner", "group", "category")
#: Top-level JSONL keys whose values the mapping reads, checked by the reader as it
#: converts them (``type`` too: a reporting record other than ``acct`` is counted
#: and left out). Every other key, and all of ``usage``, is checked at read time by
#: :func:`.jsonl.unmapped_problems`, with the rules the writers check it by.
JSON_MAPPED_KEYS = frozenset((*HEAD_KEYS, *TEXT_KEYS, "pe_taskid", "submit_cmd_line", "type"))

#: Extras keys holding a job's own Grid Engine ``job_number`` and ``task_number``
#: (integers, as the record has them: a job that is not an array task has 0, or 1
#: in OCS 9.0's JSONL; an absent JSONL key reads as 0): the
#: reader numbers jobs 1..N by default, so these join results back to the
#: accounting file (``to_pandas(extras=[EXTRA_JOB_NUMBER, EXTRA_TASK_NUMBER])``).
EXTRA_JOB_NUMBER = "sge.job_number"
EXTRA_TASK_NUMBER = "sge.task_number"

_TIME_KEYS = ("h_rt", "s_rt")
_MEM_KEYS = ("h_vmem", "s_vmem", "m_mem_free", "mem_free", "h_rss")
_RESOURCE = re.compile(r"(?:^|[\s,])([A-Za-z_]+)=([^\s,]+)")
_PE = re.compile(r"(?:^|\s)-pe\s+\S+\s+(\S+)")
_MEMORY = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([kKmMgGtT]?)\Z")
_MEM_UNITS = {
    "": 1,
    "k": 1000,
    "K": 1024,
    "m": 1000**2,
    "M": 1024**2,
    "g": 1000**3,
    "G": 1024**3,
    "t": 1000**4,
    "T": 1024**4,
}


#: A number in a request value, as the reader reads numbers in a record (digits,
#: a fraction, an exponent; no sign, ``_``, ``inf`` or ``nan``).
_DECIMAL = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")
_COUNT = re.compile(r"[0-9]+\Z")


#: qsub options (qsub(1), OCS 9 and Univa included) that take one value; ``-pe``
#: takes two. Options without a value are in :data:`_QSUB_FLAGS`; any other word
#: starting with ``-`` ends the reading (it may take a value, so where the command
#: starts is not known).
_QSUB_VALUED = frozenset(
    (
        "-a", "-ac", "-adds", "-ar", "-A", "-b", "-bgio", "-binding", "-c", "-ckpt",
        "-clearp", "-clears", "-C", "-dc", "-dept", "-dl", "-e", "-hold_jid",
        "-hold_jid_ad", "-i", "-j", "-jc", "-js", "-jsv", "-l", "-m", "-M", "-masterl",
        "-masterq", "-mbind", "-mods", "-N", "-now", "-o", "-P", "-p", "-pty", "-q",
        "-R", "-r", "-rou", "-rdi", "-sc", "-shell", "-si", "-sync", "-S", "-t", "-tc",
        "-tcon", "-umask", "-v", "-w", "-wd", "-@",
    )
)  # fmt: skip
_QSUB_FLAGS = frozenset(
    ("-clear", "-cwd", "-h", "-hard", "-soft", "-notify", "-terse", "-V", "-verify", "-help")
)


def qsub_requests(cmdline: str) -> str:
    """The resource requests of a qsub command line (JSONL ``submit_cmd_line``) as a
    category would give them: its ``-l LIST`` and ``-pe NAME SLOTS`` options, in
    order (``-l ... -pe ...``). Only options count: the words are read as qsub reads
    them (``qsub [options] [command [command_args]]``) up to the first word that is
    neither an option nor an option's value (the script or command: what follows
    belongs to the job), ``--``, or an option not known to take no value or one
    value (it may take a value: where the command starts is unknown). ``-v
    NAME=VALUE`` sets a variable and is no request. A leading program name
    (``qsub``, ``qrsh``) is skipped; a line whose quotes do not pair gives ``""``."""
    if "=" not in cmdline and "-pe" not in cmdline:
        return ""  # (nothing parse_requests reads)
    if "'" in cmdline or '"' in cmdline or "\\" in cmdline:
        import shlex

        try:
            words = shlex.split(cmdline)
        except ValueError:
            return ""
    else:
        words = cmdline.split()
    if words and not words[0].startswith("-"):
        words = words[1:]  # the program (qsub, qrsh ...)
    lists: list[str] = []
    pes: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--" or not word.startswith("-") or len(word) == 1:
            break
        if word in _QSUB_FLAGS:
            i += 1
        elif word == "-pe":
            if i + 2 >= len(words):
                break
            pes.append(f"-pe {words[i + 1]} {words[i + 2]}")
            i += 3
        elif word in _QSUB_VALUED:
            if i + 1 >= len(words):
                break
            if word == "-l":
                lists.append(f"-l {words[i + 1]}")
            i += 2
        else:
            break
    return " ".join(lists + pes)


def parse_duration(text: str) -> float | None:
    """Seconds of a Grid Engine time value: ``SS``, ``MM:SS`` or ``HH:MM:SS``
    (``INFINITY`` and anything unreadable give ``None``; a value too large for
    a float gives infinity, which :func:`request_problems` reports)."""
    parts = text.split(":")
    if len(parts) > 3:
        return None
    total = 0.0
    for part in parts:
        if part and _DECIMAL.match(part) is None:
            return None
        total = total * 60 + float(part or 0)
    return total


def parse_memory(text: str) -> float | None:
    """Bytes of a Grid Engine memory value (``k`` = 1000, ``K`` = 1024 ... ``T``)."""
    match = _MEMORY.match(text)
    if match is None:
        return None
    return float(match.group(1)) * _MEM_UNITS[match.group(2)]


#: ``(seconds, processors, KB per processor)`` and, for each, why the value the
#: category gives is out of the reader's range (``None``: in range or absent).
Requests = tuple[tuple[float, float, float], tuple[str | None, str | None, str | None]]


def requested_time_key(text: str) -> str | None:
    """Which key gives the requested time of a category (``h_rt`` or ``s_rt``, as
    :func:`parse_requests` reads it), ``None`` when it gives none."""
    if "_rt" not in text:
        return None
    resources: dict[str, str] = {}
    for key, value in _RESOURCE.findall(text):
        resources.setdefault(key, value)
    for key in _TIME_KEYS:
        if key in resources:
            value = parse_duration(resources[key])
            if value is not None:
                return key if value <= MAX_SECONDS else None
    return None


def parse_requests_checked(text: str) -> Requests:
    """:func:`parse_requests` and :func:`request_problems` in one parse."""
    resources: dict[str, str] = {}
    if "=" in text:
        for key, value in _RESOURCE.findall(text):
            resources.setdefault(key, value)
    nan = float("nan")
    seconds, procs, memory = nan, nan, nan
    problems: list[str | None] = [None, None, None]
    for key in _TIME_KEYS:
        if key in resources:
            value = parse_duration(resources[key])
            if value is not None:
                if value <= MAX_SECONDS:
                    seconds = value
                else:
                    problems[0] = (
                        f"{key} out of range (a time of at most 1e12 seconds), "
                        f"got {shown(resources[key])}"
                    )
                break
    for key in _MEM_KEYS:
        if key in resources:
            value = parse_memory(resources[key])
            if value is not None:
                if value / 1024.0 <= MAX_MAGNITUDE:
                    memory = value / 1024.0
                else:
                    problems[2] = (
                        f"{key} out of range (at most 2**53 - 1 KB), got {shown(resources[key])}"
                    )
                break
    if "-pe" in text:
        match = _PE.search(text)
        if match and _COUNT.match(match.group(1)):
            count = float(match.group(1))
            if count <= MAX_MAGNITUDE:
                procs = count
            else:
                problems[1] = (
                    f"-pe slots out of range (at most 2**53 - 1), got {shown(match.group(1))}"
                )
    return (seconds, procs, memory), (problems[0], problems[1], problems[2])


def parse_requests(text: str) -> tuple[float, float, float]:
    """``(requested seconds, requested processors, requested KB per processor)``
    from a category (a submit command line: its :func:`qsub_requests`); NaN where
    absent.

    Wall time: ``h_rt``, else ``s_rt``. Processors: ``-pe NAME N`` with a single
    number N (a range such as ``1-10`` gives NaN: the granted slots are used).
    Memory: the first of ``h_vmem``, ``s_vmem``, ``m_mem_free``, ``mem_free``,
    ``h_rss`` (all per slot in Grid Engine), in KB. A value beyond the reader's
    bounds (see :func:`request_problems`) gives NaN too.
    """
    return parse_requests_checked(text)[0]


def request_problems(text: str) -> tuple[str | None, str | None, str | None]:
    """Why the wall time, processors and memory a category (or submit command line)
    asks for are out of the reader's range, each ``None`` when it is not: a time
    above ``MAX_SECONDS`` (1e12 s), a count or a size in KB above ``MAX_MAGNITUDE``
    (2**53 - 1), the bounds the reader holds a record's own fields to."""
    return parse_requests_checked(text)[1]


#: Grid Engine's built-in complexes (limits, load values, host attributes): never
#: a consumable request, even with a plain number as value.
_BUILTIN_COMPLEXES = frozenset(
    (
        *_TIME_KEYS,
        *_MEM_KEYS,
        "arch", "calendar", "cpu", "display_win_gui", "h_core", "h_cpu", "h_data",
        "h_fsize", "h_stack", "hostname", "load_avg", "load_long", "load_medium",
        "load_short", "m_core", "m_socket", "m_thread", "m_topology",
        "m_topology_inuse", "mem_total", "mem_used", "min_cpu_interval",
        "np_load_avg", "np_load_long", "np_load_medium", "np_load_short", "num_proc",
        "qname", "rerun", "s_core", "s_cpu", "s_data", "s_fsize", "s_rss", "s_stack",
        "seq_no", "slots", "swap_free", "swap_rate", "swap_rsvd", "swap_total",
        "swap_used", "tmpdir", "virtual_free", "virtual_total", "virtual_used",
    )
)  # fmt: skip
#: Names of GPU consumables; they become the ``gpus`` request.
_GPU_KEYS = ("gpu", "gpus")
#: Request names the simulator reads otherwise (a consumable so named is not kept).
_RESERVED = frozenset(("nodes", "memory", "partition", "cores"))
_AMOUNT = re.compile(r"(?:\d+(?:\.\d*)?|\.\d+)\Z")
_NAME = re.compile(r"[A-Za-z_]+\Z")


def _consumable_texts(text: str) -> dict[str, tuple[str, str]]:
    """``{name: (key, amount text)}`` of the consumable requests of a category (see
    :func:`parse_consumables`)."""
    found: dict[str, tuple[str, str]] = {}
    for key, value in _RESOURCE.findall(text):
        name = "gpus" if key in _GPU_KEYS else key
        if name in found or key in _BUILTIN_COMPLEXES or name in _RESERVED:
            continue
        if _AMOUNT.match(value):
            found[name] = (key, value)
    return found


def parse_consumables(text: str) -> dict[str, float]:
    """Per-slot consumable requests of a category: every ``NAME=AMOUNT`` resource
    whose amount is a plain non-negative number and whose name is not a built-in
    complex (``h_rt``, ``h_vmem``, ``num_proc`` ...). ``gpu``/``gpus`` give
    ``gpus``; booleans (``highmem=false``), strings and memory sizes (``1G``) are
    not consumables and are left out; the first value of a name wins."""
    return {name: float(value) for name, (_, value) in _consumable_texts(text).items()}


def consumable_problem(text: str, slots: float) -> str | None:
    """Why a consumable request of the category ``text`` is out of the reader's
    range, or ``None``: a per-slot amount above ``MAX_MAGNITUDE`` (2**53 - 1, the
    bound of the reader's counts; a number too long for a float is above it), or
    its job total over ``slots`` requested slots above it (the job's
    ``request.NAME``; ``slots`` NaN or 0: the per-slot amount alone)."""
    if "=" not in text:
        return None
    for key, value in _consumable_texts(text).values():
        amount = float(value)
        if amount > MAX_MAGNITUDE:
            return f"consumable {key} out of range (at most 2**53 - 1 per slot), got {shown(value)}"
        if slots > 0 and amount * slots > MAX_MAGNITUDE:
            return (
                f"consumable {key} out of range: {value} per slot for {slots:g} slots "
                "is above 2**53 - 1 for the job"
            )
    return None


def category_consumables(extras: Mapping[str, object], slots: int) -> dict[str, str]:
    """The inverse of :func:`parse_consumables` for a record written from the model:
    ``{extras key: "NAME=AMOUNT"}`` with the per-slot amount of each ``request.gpus``
    (written ``gpu``) and ``request.NAME`` job total over ``slots``. Left out (and
    so reported lost by the writer): names the reader would not read back (built-in
    complexes, reserved names, ``gpu``, names that are not letters and ``_``),
    values that are not non-negative numbers, and totals whose per-slot amount
    does not multiply back exactly."""
    found: dict[str, str] = {}
    if slots <= 0:
        return found
    for key, value in extras.items():
        if not key.startswith("request."):
            continue
        name = key[len("request.") :]
        resource = "gpu" if name == "gpus" else name
        if name != "gpus" and (
            name in _GPU_KEYS
            or name in _BUILTIN_COMPLEXES
            or name in _RESERVED
            or _NAME.match(name) is None
        ):
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if not 0 <= value < float("inf"):
            continue
        per_slot = float(value) / slots
        text = str(int(per_slot)) if per_slot.is_integer() else repr(per_slot)
        if _AMOUNT.match(text) is None or float(text) * slots != value:
            continue
        found[key] = f"{resource}={text}"
    return found


def swf_status(
    failed: np.ndarray, exit_status: np.ndarray, started: np.ndarray, deleted: np.ndarray
) -> np.ndarray:
    """SWF status per record, by the first rule that applies:

    0. exit status :data:`RUNNING_EXIT_STATUS` of a started job (an intermediate
       ``acct`` record of a job still running): unknown (NaN);
    1. never started (start time 0): 5, cancelled before running;
    2. ``deleted_by`` present (JSONL, OCS >= 9.1.2): 5;
    3. ``failed`` 100 or 37 with an exit status above 128 (killed by a signal, e.g.
       137 = SIGKILL after ``qdel`` or an exceeded ``h_rt``): 5;
    4. ``failed`` 0 and exit status 0: 1, completed;
    5. anything else (a non-zero exit status, a failure to start): 0, failed.
    """
    status = np.where((failed == 0) & (exit_status == 0), 1.0, 0.0)
    killed = np.isin(failed, KILLED_FAILED_CODES) & (exit_status > 128)
    status[killed | deleted | ~started] = 5.0
    status[started & (exit_status == RUNNING_EXIT_STATUS)] = np.nan
    return status


def name_ranks(names: Mapping[str, int], unknown: frozenset[str] = frozenset()) -> np.ndarray:
    """For names interned in first-seen order, the 1-based number of each in sorted
    order (NaN for names in ``unknown``), indexed by intern id."""
    ids = np.full(len(names), np.nan)
    number = 1
    for name in sorted((n for n in names if n not in unknown), key=natural_key):
        ids[names[name]] = number
        number += 1
    return ids


_DIGITS = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple:
    """Sort key that orders ``user2`` before ``user10``: runs of digits compare by
    value (by length without leading zeros, then digit by digit: a name is text, so
    a run of any length is fine; digits of other scripts count as their values),
    the rest as text; equal keys fall back to the name itself."""
    parts = _DIGITS.split(name)
    key: list[tuple] = []
    for i, part in enumerate(parts):
        if i % 2:  # a run of digits
            digits = part if part.isascii() else "".join(str(decimal(c)) for c in part)
            value = digits.lstrip("0")
            key.append((0, len(value), value))
        else:
            key.append((1, 0, part))
    key.append((2, 0, name))
    return tuple(key)


def format_date(epoch: float) -> str:
    """An epoch time as SWF's ``StartTime``/``EndTime`` (like ``date``, in UTC)."""
    return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(epoch))


def build_header(
    *,
    source: str,
    layout: str,
    origin: int | None,
    last_end: float | None,
    jobs: int,
    records: int,
    queues: Mapping[int, str],
    users: Mapping[int, str],
    groups: Mapping[int, str],
    comments: list[str],
    grouped: bool,
    memory: str = "maxvmem",
    time_sources: frozenset[str] = frozenset(),
    running: int = 0,
) -> Header:
    """The workload header of a workload read from an accounting file. ``origin``
    ``None``: no record holds a time (none was submitted or started), and the
    header has no ``UnixStartTime`` (the origin is unknown, not 1970).

    ``MaxRecords`` (SWF: the lines of the file) is the jobs when every record is
    its own job; when grouping joined records it is left out, as the accounting
    file has ``records`` lines and an SWF file of it ``jobs`` (the Note gives
    both). ``memory``: the reader's option; ``time_sources``: where the jobs'
    requested times came from (``h_rt``, ``s_rt``, ``cmdline``); ``running``: the
    jobs whose main record is an intermediate record of a job still running."""
    from schedlab import __version__

    header = Header()
    header.set("Version", "2.2")
    header.set("Computer", "Grid Engine / Open Cluster Scheduler cluster")
    header.set(
        "Conversion",
        f"schedlab {__version__} sge reader, from Grid Engine accounting file {source} "
        f"({layout} layout)",
    )
    header.set("MaxJobs", jobs)
    if not grouped:
        header.set("MaxRecords", jobs)
    if origin is not None:
        header.set("UnixStartTime", origin)
        header.set("StartTime", format_date(origin))
    if last_end is not None:
        header.set("EndTime", format_date(last_end))
    if queues:
        header.set("MaxQueues", len(queues))
        header.set("Queues", "Grid Engine cluster queues (qname), numbered in name order")
        header.set_names("Queue", queues)
    header.set_names("User", users)
    header.set_names("Group", groups)
    header.add(
        "Note",
        "Times are seconds since UnixStartTime (UTC epoch seconds of the earliest "
        "submission, rounded down); status 1 completed, 0 failed, 5 cancelled or "
        "killed (see docs/formats/sge.md); processors are slots; CPU time and memory "
        f"({_memory_source(memory, layout)}) are per slot; requested time is "
        f"{_time_source(time_sources)}.",
    )
    if grouped:
        header.add(
            "Note",
            f"The {records} accounting records give {jobs} jobs: records sharing job "
            "number, task number and submission time (restarts, parallel tasks) are "
            "one job.",
        )
    if running:
        header.add(
            "Note",
            f"{running} jobs were still running at their last accounting record (an "
            "intermediate acct record, exit_status 4294967295): run time, status, CPU "
            "time and memory unknown.",
        )
    for text in comments:
        header.add("Note", f"sge comment: {text}")
    return header


def _memory_source(memory: str, layout: str) -> str:
    """The usage value used memory comes from, for the header Note."""
    if memory != "maxrss":
        return "maxvmem"
    return "ru_maxrss" if layout == "colon" else "maxrss"


def _time_source(sources: frozenset[str]) -> str:
    """Where the requested times came from, for the header Note (the old text
    when it was h_rt alone, or no job has one)."""
    keys = [key for key in _TIME_KEYS if key in sources]
    if not keys and "cmdline" not in sources:
        keys = ["h_rt"]
    parts = []
    if keys:
        parts.append(", else ".join(keys) + " from the job category")
    if "cmdline" in sources:
        parts.append("from the qsub -l options of submit_cmd_line (the category has none)")
    return ", else ".join(parts)


#: Prefix of the header notes that keep the source file's ``#`` comment lines.
COMMENT_NOTE = "sge comment: "
