"""Parsing and formatting of single ``sacct`` values.

Every function here works on one field's text and knows nothing about records or
files: times (``2021-01-06T14:09:15``, ``Unknown``, ``None``), durations
(``[D-][HH:]MM:SS[.mmm]``, ``UNLIMITED``, ``Partition_Limit``), memory amounts
(``2800Mc``, ``550000Mn``, ``500G``, ``141309400K``), job ids, states, exit codes
and node lists in bracket notation (``cpn-u23-[17,25]``).

Parsers raise :class:`ValueError` with a short reason; the reader turns it into a
:class:`schedlab.FormatError` naming file, line and column. They read exactly what
sacct prints and nothing else: ASCII digits only (never ``²`` or ``١٢٣``, which
:meth:`str.isdigit` and :func:`int` accept), no sign, ``_`` or blanks in integers,
only dates that exist and clock fields within their range (``2021-02-31``,
``14:10:99`` and ``00:99:99`` are errors, and so is a local time skipped when
daylight saving time starts), and no value the model cannot hold
exactly: numbers up to ``2**53 - 1`` and times up to ``10**12`` s (the limits of
``schedlab.validation``, as the SWF reader applies them).
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import NamedTuple

from schedlab.validation import out_of_range

#: Words sacct prints for a time that is not known (yet).
UNKNOWN_TIMES = frozenset({"", "Unknown", "None", "N/A"})
#: Words sacct prints for a time limit that is not a number of seconds.
UNLIMITED_WORDS = frozenset({"UNLIMITED", "Partition_Limit", "INVALID", "NONE"})

# ``[0-9]``, never ``\d``: ``\d`` also matches other scripts' digits. Patterns are
# applied with ``fullmatch`` (``$`` would accept a trailing newline).
_TIME_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})")
_DURATION_RE = re.compile(
    r"(?:(?P<days>[0-9]+)-)?(?:(?P<h>[0-9]+):)?(?P<m>[0-9]+):(?P<s>[0-9]+(?:\.[0-9]+)?)"
)
_MEMORY_RE = re.compile(r"(?P<num>[0-9]+(?:\.[0-9]+)?)(?P<unit>[KMGTP]?)(?P<per>[cn]?)")
_JOBID_RE = re.compile(
    r"(?P<base>[0-9]+)(?:(?P<kind>[_+])(?P<index>\[[^\]]*\]|[0-9]+))?(?:\.(?P<step>[^.|]+))?"
)
_EXIT_RE = re.compile(r"([0-9]+):([0-9]+)")
_INT_RE = re.compile(r"[0-9]+")
# One TRES item: ``type[/name[:subtype]]=count`` (no blank, ``,``, ``;``, ``|`` or
# second ``=``; a subtype holds no ``:``, as in a ``--gres`` specification).
_TRES_ITEM_RE = re.compile(
    r"(?P<key>(?P<type>[A-Za-z0-9_]+)(?:/(?P<name>[^\s=,:;|/]+)(?::(?P<sub>[^\s=,:;|]+))?)?)"
    r"=(?P<count>[^\s=,;|]+)"
)

_UNIT_KB = {"K": 1, "M": 1024, "G": 1024**2, "T": 1024**3, "P": 1024**4}


# ----------------------------------------------------------------------------- times


def parse_time(text: str, tz: _dt.tzinfo | None = None, fold: int = 0) -> int | None:
    """Epoch seconds of a sacct time stamp, or ``None`` for ``Unknown``/``None``/empty.

    sacct prints local wall-clock time without a zone; ``tz`` says which zone that is
    (``None`` means UTC). A date or time that does not exist (``2021-02-31``,
    ``14:10:99``, or a local time skipped in ``tz`` when daylight saving time starts,
    ``2021-03-28T02:30:00`` in Europe/Berlin) raises :class:`ValueError`. A local
    time that occurs twice (when daylight saving time ends) is its first occurrence,
    ``fold=1`` its second.
    """
    if text in UNKNOWN_TIMES:
        return None
    match = _TIME_RE.fullmatch(text)
    if match is None:
        raise ValueError(f"expected a time like 2021-01-06T14:09:15, got {_short(text)}")
    year, month, day, hour, minute, second = (int(g) for g in match.groups())
    try:
        stamp = _dt.datetime(
            year, month, day, hour, minute, second, tzinfo=tz or _dt.timezone.utc, fold=fold
        )
    except ValueError as exc:
        raise ValueError(f"not a valid time: {_short(text)} ({exc})") from None
    if tz is not None and not isinstance(tz, _dt.timezone) and not _exists(stamp):
        raise ValueError(
            f"{_short(text)} does not exist in {_zone_name(tz)} (daylight saving time gap)"
        )
    return int(stamp.timestamp())


def _exists(stamp: _dt.datetime) -> bool:
    """True unless ``stamp``'s wall-clock time is skipped in its zone (the hour lost
    when daylight saving time starts): such a time, which :mod:`zoneinfo` accepts
    without a word, does not come back from a round trip through UTC."""
    try:
        back = stamp.astimezone(_dt.timezone.utc).astimezone(stamp.tzinfo)
    except (OverflowError, ValueError):  # within a day of year 1 or 9999: no zone rules
        return True
    return back.replace(tzinfo=None, fold=0) == stamp.replace(tzinfo=None, fold=0)


def _zone_name(tz: _dt.tzinfo) -> str:
    key = getattr(tz, "key", None)
    return key if isinstance(key, str) else str(tz)


def format_time(epoch: float | None, tz: _dt.tzinfo | None = None) -> str:
    """The sacct form of an epoch time (``Unknown`` for ``None`` and for a time
    outside the years 1 to 9999, which the form cannot hold)."""
    if epoch is None:
        return "Unknown"
    try:
        stamp = _dt.datetime.fromtimestamp(round(epoch), tz or _dt.timezone.utc)
    except (ValueError, OverflowError, OSError):
        return "Unknown"
    # not strftime: %Y does not pad years below 1000 to four digits everywhere
    return (
        f"{stamp.year:04d}-{stamp.month:02d}-{stamp.day:02d}T"
        f"{stamp.hour:02d}:{stamp.minute:02d}:{stamp.second:02d}"
    )


# ------------------------------------------------------------------------- durations


def parse_duration(text: str) -> float | None:
    """Seconds of ``[D-][HH:]MM:SS[.fff]``; ``None`` for empty, ``UNLIMITED`` and
    ``Partition_Limit`` (no numeric limit). Hours are below 24, minutes and seconds
    below 60, as sacct prints them (``00:99:99`` raises :class:`ValueError`)."""
    if text == "" or text in UNLIMITED_WORDS:
        return None
    match = _DURATION_RE.fullmatch(text)
    if match is None:
        raise ValueError(f"expected a duration like [D-]HH:MM:SS, got {_short(text)}")
    days = _bounded(match["days"] or "0")
    hours = _bounded(match["h"] or "0")
    minutes = _bounded(match["m"])
    seconds = float(match["s"])
    if hours >= 24 or minutes >= 60 or seconds >= 60:
        raise ValueError(
            f"not a valid duration: {_short(text)} (hours must be below 24, minutes and "
            "seconds below 60)"
        )
    total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    reason = out_of_range(total, seconds=True)
    if reason is not None:
        raise ValueError(f"{reason}: {_short(text)}")
    return int(total) if total.is_integer() else total


def parse_minutes(text: str) -> int | None:
    """Seconds of a number of minutes (``TimelimitRaw``); ``None`` for empty."""
    minutes = parse_int(text)
    if minutes is None:
        return None
    reason = out_of_range(minutes * 60, seconds=True)
    if reason is not None:
        raise ValueError(f"{reason}: {_short(text)} minutes")
    return minutes * 60


def format_duration(seconds: float | None) -> str:
    """``[D-]HH:MM:SS`` as sacct prints elapsed times and limits (empty for ``None``)."""
    if seconds is None:
        return ""
    total = round(seconds)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{days}-{text}" if days else text


# ---------------------------------------------------------------------------- memory


class Memory(NamedTuple):
    """A parsed ``ReqMem``/``MaxRSS`` value: kilobytes and what they are counted per
    (``"c"`` per CPU, ``"n"`` per node, ``""`` for the whole job or task)."""

    kilobytes: float
    per: str


#: Kilobytes of a bare number (no unit) in ``ReqMem``: megabytes, as ``--mem``
#: counts them and sacct prints the request (``UNIT_MEGA``).
MEGABYTES = 1024.0
#: Kilobytes of a bare number in the usage columns (``MaxRSS``, ``AveRSS``,
#: ``MaxVMSize`` ...): bytes, as sacct prints them (``UNIT_NONE``: a count that is
#: not a multiple of 1024, and every value under ``--noconvert``).
BYTES = 1 / 1024


def parse_memory(text: str, bare: float = MEGABYTES) -> Memory | None:
    """``2800Mc`` -> 2800 MiB per CPU in KB; ``None`` for empty. Units are binary
    (K, M, G, T, P); a bare number counts ``bare`` KB each: megabytes
    (:data:`MEGABYTES`, the default) for ``ReqMem``, bytes (:data:`BYTES`) for the
    usage columns such as ``MaxRSS``. More than ``2**53 - 1`` KB raises
    :class:`ValueError`."""
    if text == "":
        return None
    match = _MEMORY_RE.fullmatch(text)
    if match is None:
        raise ValueError(f"expected a memory size like 2800Mc or 500G, got {_short(text)}")
    unit = match["unit"]
    kilobytes = float(match["num"]) * (_UNIT_KB[unit] if unit else bare)
    if out_of_range(kilobytes) is not None:
        raise ValueError(f"out of range (at most 2**53 - 1 KB): {_short(text)}")
    return Memory(kilobytes, match["per"])


def tres_gpus(text: str) -> int | None:
    """GPUs of a TRES list (``ReqTRES``/``AllocTRES``), ``None`` when it names no GPU.

    sacct prints the list as comma-separated ``name=count`` items, a name being
    ``type`` or ``type/name`` or ``type/name:subtype`` (``cpu=4``, ``mem=48000M``,
    ``license/matlab@flex=1``, ``gres/gpu=2``, ``gres/gpu:a100=2``); every item is
    checked for that form and a list that breaks it raises :class:`ValueError`: an
    empty item or name (``gres/gpu=2,,``, ``=2``), an empty type (``gres/gpu:=2``),
    another separator (``billing=32;gres/gpu=2``), a key given twice
    (``gres/gpu=2,gres/gpu=3``: which one is meant cannot be known). Only the GPU
    counts are read (ASCII digits; other items' values are kept verbatim by the
    reader, not interpreted).

    The count is the untyped total ``gres/gpu=N`` when it is printed; else the sum
    of the typed counts ``gres/gpu:TYPE=N`` (GPUs of different types add up). With
    both, typed counts that add up to more than the total contradict it and raise
    :class:`ValueError`; fewer are fine (not every type need be tracked).
    """
    if text == "":
        return None
    total = None
    typed = 0
    seen_typed = False
    keys: set[str] = set()
    for item in text.split(","):
        match = _TRES_ITEM_RE.fullmatch(item)
        if match is None:
            what = "an empty item" if item == "" else _short(item)
            raise ValueError(
                f"expected TRES items like cpu=4 or gres/gpu:a100=2 separated by commas, "
                f"got {what} in {_short(text)}"
            )
        key = match["key"]
        if key in keys:
            raise ValueError(f"{key} given twice in {_short(text)}")
        keys.add(key)
        if match["type"] != "gres" or match["name"] != "gpu":
            continue
        count = match["count"]
        if _INT_RE.fullmatch(count) is None:
            raise ValueError(f"expected a GPU count of ASCII digits in TRES item {_short(item)}")
        number = _bounded(count)
        if match["sub"] is None:
            total = number
        else:
            typed += number
            seen_typed = True
    if seen_typed and out_of_range(typed) is not None:
        raise ValueError(f"{out_of_range(typed)}: GPU counts of {_short(text)}")
    if total is not None:
        if typed > total:
            raise ValueError(
                f"typed GPU counts (gres/gpu:TYPE) add up to {typed}, more than the "
                f"gres/gpu total {total} in {_short(text)}"
            )
        return total
    return typed if seen_typed else None


def format_memory(kilobytes: float | None, per: str = "c") -> str:
    """Kilobytes as sacct prints ``ReqMem`` (``M`` when whole megabytes, else ``K``)."""
    if kilobytes is None:
        return ""
    kb = round(kilobytes)
    if kb % 1024 == 0:
        return f"{kb // 1024}M{per}"
    return f"{kb}K{per}"


# ---------------------------------------------------------------------------- job ids


class JobId(NamedTuple):
    """A parsed ``JobID``: ``base`` number, ``kind`` (``"_"`` array task, ``"+"``
    heterogeneous component, ``""`` plain), ``index`` text and ``step`` (``None`` for
    the job itself, else ``batch``, ``extern``, ``0`` ...)."""

    base: int
    kind: str
    index: str  # type: ignore[assignment]  # (shadows tuple.index: the field is wanted)
    step: str | None

    @property
    def job(self) -> str:
        """The id of the job this record belongs to (the step suffix removed)."""
        return f"{self.base}{self.kind}{self.index}"


def parse_jobid(text: str) -> JobId:
    """Parse ``123``, ``123_4``, ``123_[1-3]``, ``123+0``, ``123.batch``, ``123_4.0``."""
    match = _JOBID_RE.fullmatch(text)
    if match is None:
        raise ValueError(
            f"expected a job id like 123, 123_4, 123+0 or 123.batch, got {_short(text)}"
        )
    return JobId(_bounded(match["base"]), match["kind"] or "", match["index"] or "", match["step"])


# ---------------------------------------------------------------------- states, codes

#: Job states that mean the job ended, with their SWF status code (field 11).
ENDED_STATES: dict[str, int] = {
    "COMPLETED": 1,
    "FAILED": 0,
    "TIMEOUT": 0,
    "NODE_FAIL": 0,
    "OUT_OF_MEMORY": 0,
    "BOOT_FAIL": 0,
    "DEADLINE": 0,
    "PREEMPTED": 0,
    "SPECIAL_EXIT": 0,
    "CANCELLED": 5,
    "REVOKED": 5,
    # closed records of a job that goes on in a later record (sacct --duplicates):
    # the run was ended before completing (requeued, or resized)
    "REQUEUED": 0,
    "RESIZING": 0,
}
#: States of a requeued job held (``REQUEUE_HOLD``) or requeued by a federation
#: (``REQUEUE_FED``): open states, but a record of one that has an ``End`` is the
#: closed record of a run ended by the requeue, read as ``REQUEUED`` (status 0).
REQUEUE_STATES = frozenset({"REQUEUE_HOLD", "REQUEUE_FED"})
#: Job states of jobs that have not ended: no SWF status (``None``, i.e. -1).
OPEN_STATES = frozenset(
    {
        "PENDING",
        "RUNNING",
        "REQUEUE_FED",
        "REQUEUE_HOLD",
        "SUSPENDED",
        "STOPPED",
        "SIGNALING",
        "STAGE_OUT",
        "CONFIGURING",
        "COMPLETING",
        "LAUNCH_FAILED",
        "POWER_UP_NODE",
        "UPDATE_DB",
        "RECONFIG_FAIL",
        "RESV_DEL_HOLD",
    }
)
_SWF_TO_STATE = {
    0: "FAILED",
    1: "COMPLETED",
    2: "REQUEUED",
    3: "COMPLETED",
    4: "FAILED",
    5: "CANCELLED",
}


def state_word(text: str) -> str:
    """``CANCELLED by 1234`` -> ``CANCELLED``; ``COMPLETED+`` -> ``COMPLETED``."""
    return text.split(" ", 1)[0].rstrip("+")


def parse_state(text: str) -> int | None:
    """The SWF status of a sacct state: 1 completed, 0 failed or killed by the system
    (``FAILED``, ``TIMEOUT``, ``NODE_FAIL``, ``OUT_OF_MEMORY`` ...) and the run of a
    job ended before completing by a requeue or a resize (``REQUEUED``,
    ``RESIZING``: sacct prints the run as a closed record), 5 cancelled,
    ``None`` for jobs that have not ended (``PENDING``, ``RUNNING`` ...) and for an
    empty state. Any other word raises :class:`ValueError`."""
    if text == "":
        return None
    word = state_word(text)
    if word in ENDED_STATES:
        return ENDED_STATES[word]
    if word in OPEN_STATES:
        return None
    known = ", ".join(sorted([*ENDED_STATES, *OPEN_STATES]))
    raise ValueError(f"unknown job state {text!r} (known: {known})")


def format_state(status: int | None) -> str:
    """The sacct state written for an SWF status (empty for ``None``)."""
    if status is None:
        return ""
    return _SWF_TO_STATE.get(status, "")


def parse_exit_code(text: str) -> tuple[int, int] | None:
    """``1:0`` -> (exit code 1, signal 0); ``None`` for empty."""
    if text == "":
        return None
    match = _EXIT_RE.fullmatch(text)
    if match is None:
        raise ValueError(f"expected an exit code like 0:0, got {_short(text)}")
    return _bounded(match.group(1)), _bounded(match.group(2))


def parse_int(text: str) -> int | None:
    """A count (CPUs, nodes, seconds ...): ASCII digits only, as sacct prints them;
    ``None`` for empty. A sign (``-4``), ``_`` (``1_000``), blanks, other scripts'
    digits and values beyond ``2**53 - 1`` raise :class:`ValueError`."""
    if text == "":
        return None
    if _INT_RE.fullmatch(text) is None:
        raise ValueError(f"expected a non-negative integer, got {_short(text)}")
    return _bounded(text)


def _bounded(digits: str) -> int:
    """The value of a string of ASCII digits, at most ``2**53 - 1`` (checked before
    converting, so a thousand digits never reach :func:`int`)."""
    if len(digits) <= 15:  # below 10**15 < 2**53: the common case, no check needed
        return int(digits)
    if len(digits.lstrip("0")) > 16 or out_of_range(int(digits)) is not None:
        raise ValueError(f"out of range (at most 2**53 - 1): {_short(digits)}")
    return int(digits)


def _short(text: str) -> str:
    """``text`` quoted for a message, shortened beyond 40 characters."""
    return repr(text) if len(text) <= 40 else repr(text[:37] + "...")


# ------------------------------------------------------------------------ node lists

_RANGE_RE = re.compile(r"([0-9]+)(?:-([0-9]+))?")
#: Most host names one node list may expand to (a larger range is an error, not a
#: list of millions of names held in memory).
MAX_HOSTS = 1_000_000


def _split_top(text: str) -> list[str]:
    """Split at commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced ']' in node list {_short(text)}")
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth != 0:
        raise ValueError(f"unbalanced '[' in node list {_short(text)}")
    parts.append(text[start:])
    return parts


def _expand_one(pattern: str) -> list[str]:
    open_at = pattern.find("[")
    if open_at < 0:
        return [pattern]
    close_at = pattern.index("]", open_at)
    prefix, body, suffix = (
        pattern[:open_at],
        pattern[open_at + 1 : close_at],
        pattern[close_at + 1 :],
    )
    tails = _expand_one(suffix)
    ranges = []
    for item in body.split(","):
        match = _RANGE_RE.fullmatch(item)
        if match is None:
            raise ValueError(f"bad range {_short(item)} in node list {_short(pattern)}")
        low, high = match.group(1), match.group(2) or match.group(1)
        if _bounded(low) > _bounded(high):
            raise ValueError(f"bad range {_short(item)} in node list {_short(pattern)} (reversed)")
        ranges.append((low, int(high)))
    count = sum(high - int(low) + 1 for low, high in ranges) * len(tails)
    if count > MAX_HOSTS:
        raise ValueError(f"node list {_short(pattern)} names more than {MAX_HOSTS:,} hosts")
    names = []
    for low, high in ranges:
        width = len(low)
        for number in range(int(low), high + 1):
            for tail in tails:
                names.append(f"{prefix}{number:0{width}d}{tail}")
    return names


def expand_nodelist(text: str) -> tuple[str, ...]:
    """``cpn-u23-[17,25],b[002-003]`` -> every host name; empty for ``None assigned``."""
    if text in ("", "None assigned", "(null)"):
        return ()
    hosts: list[str] = []
    for part in _split_top(text):
        if part:
            hosts.extend(_expand_one(part))
            if len(hosts) > MAX_HOSTS:
                raise ValueError(f"node list {_short(text)} names more than {MAX_HOSTS:,} hosts")
    return tuple(hosts)


_TRAILING_NUMBER = re.compile(r"(.*?)([0-9]+)")


def compress_nodelist(hosts: tuple[str, ...] | list[str]) -> str:
    """The bracket notation of host names, grouping names that differ only in a
    trailing number of the same width (``b002,b003`` -> ``b[002-003]``)."""
    groups: dict[tuple[str, int], list[int]] = {}
    order: list[tuple[str, int] | str] = []
    for host in hosts:
        match = _TRAILING_NUMBER.fullmatch(host)
        if match is None:
            order.append(host)
            continue
        key = (match.group(1), len(match.group(2)))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(match.group(2)))
    out = []
    for item in order:
        if isinstance(item, str):
            out.append(item)
            continue
        prefix, width = item
        numbers = sorted(set(groups[item]))
        if len(numbers) == 1:
            out.append(f"{prefix}{numbers[0]:0{width}d}")
            continue
        ranges, start, prev = [], numbers[0], numbers[0]
        for number in [*numbers[1:], None]:
            if number is not None and number == prev + 1:
                prev = number
                continue
            ranges.append(
                f"{start:0{width}d}" if start == prev else f"{start:0{width}d}-{prev:0{width}d}"
            )
            if number is not None:
                start = prev = number
        out.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(out)
