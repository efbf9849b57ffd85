"""Field names and positions of the Grid Engine accounting layouts.

Two layouts exist: the colon-separated ``accounting`` file of Sun/Oracle/Son of Grid
Engine, Univa Grid Engine and Open Cluster Scheduler (``old_accounting=true``), and
the one-line JSON ``accounting.jsonl`` of Open Cluster Scheduler 9.0 and later.
"""

from __future__ import annotations

#: The 45 documented colon fields, in file order (sge_accounting(5)).
COLON_FIELDS: tuple[str, ...] = (
    "qname",
    "hostname",
    "group",
    "owner",
    "job_name",
    "job_number",
    "account",
    "priority",
    "submission_time",
    "start_time",
    "end_time",
    "failed",
    "exit_status",
    "ru_wallclock",
    "ru_utime",
    "ru_stime",
    "ru_maxrss",
    "ru_ixrss",
    "ru_ismrss",
    "ru_idrss",
    "ru_isrss",
    "ru_minflt",
    "ru_majflt",
    "ru_nswap",
    "ru_inblock",
    "ru_oublock",
    "ru_msgsnd",
    "ru_msgrcv",
    "ru_nsignals",
    "ru_nvcsw",
    "ru_nivcsw",
    "project",
    "department",
    "granted_pe",
    "slots",
    "task_number",
    "cpu",
    "mem",
    "io",
    "category",
    "iow",
    "pe_taskid",
    "maxvmem",
    "arid",
    "ar_submission_time",
)

#: Position of each colon field.
COLON_INDEX: dict[str, int] = {name: i for i, name in enumerate(COLON_FIELDS)}

#: Fields of the oldest records (SGE 6.0): everything up to ``maxvmem``.
COLON_MIN_FIELDS = 43
#: Fields of a documented record (SGE 6.2 and later).
COLON_FULL_FIELDS = 45
#: Index of ``category``, the only field known to contain colons.
CATEGORY = COLON_INDEX["category"]

#: Colon fields holding numbers (every other field is a name or a text): the job
#: number, priority, times, failed, exit status, the rusage block, slots, task
#: number, cpu, mem, io, iow, maxvmem, arid and ar_submission_time.
COLON_NUMBERS: frozenset[int] = frozenset({5, 7, *range(8, 31), 34, 35, 36, 37, 38, 40, 42, 43, 44})
#: Colon number fields that hold integers (whole numbers within 2**53 - 1).
COLON_INTEGERS: frozenset[int] = frozenset({5, 7, 8, 9, 10, 11, 12, 34, 35, 43, 44})
#: Colon memory fields (``ru_maxrss`` KB, ``maxvmem`` bytes): 0 to 2**53 - 1.
COLON_MEMORY: frozenset[int] = frozenset({16, 42})

#: What the colon writer writes instead of a ``:`` inside a name or text (the
#: layout has no escape for its separator).
COLON_SUBSTITUTE = "_"

#: The rusage block: colon fields 13..30, JSON ``usage.rusage`` keys in this order.
RUSAGE_FIELDS: tuple[str, ...] = COLON_FIELDS[13:31]

#: JSON keys of the execd usage container (``usage.eusage``, ``usage.usage`` before
#: OCS 9.0.6), in the order OCS writes them; ``ioops`` (9.1+) and ``maxpss`` are
#: optional.
EUSAGE_FIELDS: tuple[str, ...] = (
    "wallclock",
    "cpu",
    "mem",
    "io",
    "ioops",
    "iow",
    "maxvmem",
    "maxrss",
    "maxpss",
)

#: Top-level JSON keys in the order OCS writes them (``time``/``type`` only in the
#: reporting file; several are optional, see docs/formats/sge.md).
JSON_KEYS: tuple[str, ...] = (
    "time",
    "type",
    "job_number",
    "task_number",
    "start_time",
    "end_time",
    "owner",
    "group",
    "account",
    "qname",
    "hostname",
    "project",
    "department",
    "granted_pe",
    "slots",
    "arid",
    "job_name",
    "priority",
    "submission_time",
    "submit_cmd_line",
    "ar_submission_time",
    "pe_taskid",
    "category",
    "failed",
    "exit_status",
    "deleted_by",
    "usage",
)

#: JSON keys whose value is a string.
JSON_STRING_KEYS = frozenset(
    {
        "type",
        "owner",
        "group",
        "account",
        "qname",
        "hostname",
        "project",
        "department",
        "granted_pe",
        "job_name",
        "submit_cmd_line",
        "pe_taskid",
        "category",
        "deleted_by",
    }
)

#: JSON keys whose value is an integer (times in microseconds).
JSON_INT_KEYS = frozenset(
    {
        "time",
        "job_number",
        "task_number",
        "start_time",
        "end_time",
        "slots",
        "arid",
        "priority",
        "submission_time",
        "ar_submission_time",
        "failed",
        "exit_status",
    }
)

#: Colon string fields that SGE writes as ``NONE`` when empty (JSON omits the key).
NONE_STRINGS = frozenset({"project", "granted_pe", "pe_taskid"})

#: Host / queue names Grid Engine writes for a job that never ran.
NO_NAME = frozenset({"", "UNKNOWN", "(null)", "NONE"})

#: Timestamps at or above this value (epoch seconds would be the year 5138) are in
#: milliseconds: Univa Grid Engine >= 8.2 writes them so.
MS_THRESHOLD = 1e11

#: Extras keys used by this plugin.
EXTRA_RECORD = "sge_record"  # the source line of a one-record job
EXTRA_RECORDS = "sge_records"  # tuple of source lines of a grouped job, file order
EXTRA_LINE = "sge_line"  # source line number of a one-record job's record
EXTRA_LINES = "sge_lines"  # source line numbers of every record of a grouped job

#: Characters of a value quoted in an error message (a longer one is cut, "..."
#: marking the cut), as the other readers quote values.
SHOWN_CHARS = 40


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for an error message, cut to ``limit`` characters (``...``
    marks the cut; an integer too long to print is given by its size)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    try:
        text = repr(value)
    except RecursionError:
        return "a value nested too deeply to show"
    return text if len(text) <= limit else text[: limit - 3] + "..."
