"""Parsing and formatting of single ``sacct`` values.

Every function here works on one field's text and knows nothing about records or
files: times (``2021-01-06T14:09:15``, ``Unknown``, ``None``), durations
(``[D-][HH:]MM:SS[.mmm]``, ``UNLIMITED``, ``Partition_Limit``), memory amounts
(``2800Mc``, ``550000Mn``, ``500G``, ``141309400K``), job ids, states, exit codes
and node lists in bracket notation (``cpn-u23-[17,25]``).

Parsers raise :class:`ValueError` with a short reason; the reader turns it into a
:class:`schedlab.FormatError` naming file, line and column.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from typing import NamedTuple

#: Words sacct prints for a time that is not known (yet).
UNKNOWN_TIMES = frozenset({"", "Unknown", "None", "N/A"})
#: Words sacct prints for a time limit that is not a number of seconds.
UNLIMITED_WORDS = frozenset({"UNLIMITED", "Partition_Limit", "INVALID", "NONE"})

_TIME_RE = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)$")
_DURATION_RE = re.compile(
    r"^(?:(?P<days>\d+)-)?(?:(?P<h>\d+):)?(?P<m>\d+):(?P<s>\d+(?:\.\d+)?)$"
)
_MEMORY_RE = re.compile(r"^(?P<num>\d+(?:\.\d+)?)(?P<unit>[KMGTP]?)(?P<per>[cn]?)$")
_JOBID_RE = re.compile(
    r"^(?P<base>\d+)(?:(?P<kind>[_+])(?P<index>\[[^\]]*\]|\d+))?(?:\.(?P<step>[^.|]+))?$"
)
_EXIT_RE = re.compile(r"^(\d+):(\d+)$")

_UNIT_KB = {"K": 1, "": 1024, "M": 1024, "G": 1024**2, "T": 1024**3, "P": 1024**4}


# ----------------------------------------------------------------------------- times


def parse_time(text: str, tz: _dt.tzinfo | None = None) -> int | None:
    """Epoch seconds of a sacct time stamp, or ``None`` for ``Unknown``/``None``/empty.

    sacct prints local wall-clock time without a zone; ``tz`` says which zone that is
    (``None`` means UTC).
    """
    if text in UNKNOWN_TIMES:
        return None
    match = _TIME_RE.match(text)
    if match is None:
        raise ValueError(f"expected a time like 2021-01-06T14:09:15, got {text!r}")
    year, month, day, hour, minute, second = (int(g) for g in match.groups())
    if tz is None:
        if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60):
            raise ValueError(f"not a valid time: {text!r}")
        return calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    try:
        stamp = _dt.datetime(year, month, day, hour, minute, second, tzinfo=tz)
    except ValueError as exc:
        raise ValueError(f"not a valid time: {text!r} ({exc})") from None
    return int(stamp.timestamp())


def format_time(epoch: float | None, tz: _dt.tzinfo | None = None) -> str:
    """The sacct form of an epoch time (``Unknown`` for ``None``)."""
    if epoch is None:
        return "Unknown"
    stamp = _dt.datetime.fromtimestamp(round(epoch), tz or _dt.timezone.utc)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S")


# ------------------------------------------------------------------------- durations


def parse_duration(text: str) -> float | None:
    """Seconds of ``[D-][HH:]MM:SS[.fff]``; ``None`` for empty, ``UNLIMITED`` and
    ``Partition_Limit`` (no numeric limit)."""
    if text == "" or text in UNLIMITED_WORDS:
        return None
    match = _DURATION_RE.match(text)
    if match is None:
        raise ValueError(f"expected a duration like [D-]HH:MM:SS, got {text!r}")
    days = int(match["days"] or 0)
    hours = int(match["h"] or 0)
    seconds = float(match["s"])
    total = ((days * 24 + hours) * 60 + int(match["m"])) * 60 + seconds
    return int(total) if total.is_integer() else total


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


def parse_memory(text: str) -> Memory | None:
    """``2800Mc`` -> 2800 MiB per CPU in KB; ``None`` for empty. Units are binary
    (K, M, G, T, P); a bare number is megabytes, as ``--mem`` counts them."""
    if text == "":
        return None
    match = _MEMORY_RE.match(text)
    if match is None:
        raise ValueError(f"expected a memory size like 2800Mc or 500G, got {text!r}")
    kilobytes = float(match["num"]) * _UNIT_KB[match["unit"]]
    return Memory(kilobytes, match["per"])


def tres_gpus(text: str) -> int | None:
    """GPUs of a TRES list (``ReqTRES``/``AllocTRES``): ``gres/gpu=N``; without it,
    the sum of the typed counts ``gres/gpu:TYPE=N`` (sacct prints the untyped total
    next to them when both exist); ``None`` when the list names no GPU."""
    total = None
    typed = 0
    seen_typed = False
    for item in text.split(","):
        name, _, count = item.partition("=")
        if not count.isdigit():
            continue
        if name == "gres/gpu":
            total = int(count)
        elif name.startswith("gres/gpu:"):
            typed += int(count)
            seen_typed = True
    if total is not None:
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
    index: str
    step: str | None

    @property
    def job(self) -> str:
        """The id of the job this record belongs to (the step suffix removed)."""
        return f"{self.base}{self.kind}{self.index}"


def parse_jobid(text: str) -> JobId:
    """Parse ``123``, ``123_4``, ``123_[1-3]``, ``123+0``, ``123.batch``, ``123_4.0``."""
    match = _JOBID_RE.match(text)
    if match is None:
        raise ValueError(f"expected a job id like 123, 123_4, 123+0 or 123.batch, got {text!r}")
    return JobId(int(match["base"]), match["kind"] or "", match["index"] or "", match["step"])


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
}
#: Job states of jobs that have not ended: no SWF status (``None``, i.e. -1).
OPEN_STATES = frozenset(
    {
        "PENDING",
        "RUNNING",
        "REQUEUED",
        "REQUEUE_FED",
        "REQUEUE_HOLD",
        "RESIZING",
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
_SWF_TO_STATE = {0: "FAILED", 1: "COMPLETED", 2: "REQUEUED", 3: "COMPLETED", 4: "FAILED",
                 5: "CANCELLED"}


def state_word(text: str) -> str:
    """``CANCELLED by 1234`` -> ``CANCELLED``; ``COMPLETED+`` -> ``COMPLETED``."""
    return text.split(" ", 1)[0].rstrip("+")


def parse_state(text: str) -> int | None:
    """The SWF status of a sacct state: 1 completed, 0 failed or killed by the system
    (``FAILED``, ``TIMEOUT``, ``NODE_FAIL``, ``OUT_OF_MEMORY`` ...), 5 cancelled,
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
    match = _EXIT_RE.match(text)
    if match is None:
        raise ValueError(f"expected an exit code like 0:0, got {text!r}")
    return int(match.group(1)), int(match.group(2))


def parse_int(text: str) -> int | None:
    """An integer field; ``None`` for empty."""
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"expected an integer, got {text!r}") from None


# ------------------------------------------------------------------------ node lists

_RANGE_RE = re.compile(r"^(\d+)(?:-(\d+))?$")


def _split_top(text: str) -> list[str]:
    """Split at commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced ']' in node list {text!r}")
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth != 0:
        raise ValueError(f"unbalanced '[' in node list {text!r}")
    parts.append(text[start:])
    return parts


def _expand_one(pattern: str) -> list[str]:
    open_at = pattern.find("[")
    if open_at < 0:
        return [pattern]
    close_at = pattern.index("]", open_at)
    prefix, body, suffix = pattern[:open_at], pattern[open_at + 1 : close_at], pattern[
        close_at + 1 :
    ]
    tails = _expand_one(suffix)
    names = []
    for item in body.split(","):
        match = _RANGE_RE.match(item)
        if match is None:
            raise ValueError(f"bad range {item!r} in node list {pattern!r}")
        low, high = match.group(1), match.group(2) or match.group(1)
        width = len(low)
        for number in range(int(low), int(high) + 1):
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
    return tuple(hosts)


_TRAILING_NUMBER = re.compile(r"^(.*?)(\d+)$")


def compress_nodelist(hosts: tuple[str, ...] | list[str]) -> str:
    """The bracket notation of host names, grouping names that differ only in a
    trailing number of the same width (``b002,b003`` -> ``b[002-003]``)."""
    groups: dict[tuple[str, int], list[int]] = {}
    order: list[tuple[str, int] | str] = []
    for host in hosts:
        match = _TRAILING_NUMBER.match(host)
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
