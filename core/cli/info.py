"""``schedlab info``: a summary of any trace, computed chunk by chunk.

Works for every reader: the numbers come from the 18 common fields, so a streamed
trace is summarised in constant memory (plus one entry per distinct user, group ...).
A reader that puts a dict in ``workload.meta["summary"]`` (e.g. the Google reader's
table counts) gets it printed too.

Definitions: the time span runs from the first submit time to the last end time
(submit + wait + run, or submit + run when the wait is unknown); the offered load is
the processor-seconds the jobs asked for, ``sum(run_time * allocated_processors)``,
divided by the machine's processors times the arrival window (first to last submit
time), as in Feitelson's workload studies; it needs ``MaxProcs`` (or ``MaxNodes``).
"""

from __future__ import annotations

from typing import Any

import click

from .flags import FlagCommand, check_reader_flags, parse_read_options, read_option
from .json_output import json_text

_COUNTED = {
    "users": "user_id",
    "groups": "group_id",
    "executables": "executable_number",
    "queues": "queue_number",
    "partitions": "partition_number",
}


def _clean(value: Any) -> Any:
    """Numbers as plain ints/floats (integral floats as ints), for JSON and text."""
    import numpy as np

    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if value != value:
            return None
        return int(value) if value.is_integer() and abs(value) < 2**53 else round(value, 6)
    return value


def summarize(workload: Any) -> dict[str, Any]:
    """The numbers ``schedlab info`` prints, as a JSON-ready dict."""
    import numpy as np

    from ..model import SWF_FIELDS

    jobs = 0
    distinct: dict[str, set[float]] = {key: set() for key in _COUNTED}
    status: dict[str, int] = {}
    first_submit = last_submit = last_end = np.nan
    proc_seconds = 0.0
    proc_jobs = 0  # jobs with both run time and allocated processors known
    max_alloc = np.nan
    max_req = np.nan
    alloc_sum = 0.0
    alloc_known = 0
    unknown = dict.fromkeys(SWF_FIELDS, 0)
    for chunk in workload.iter_column_chunks():
        n = len(chunk)
        if not n:
            continue
        jobs += n
        for key, field in _COUNTED.items():
            col = chunk[field]
            distinct[key].update(np.unique(col[~np.isnan(col)]).tolist())
        for name in SWF_FIELDS:
            unknown[name] += int(np.isnan(chunk[name]).sum())
        codes, counts = np.unique(np.nan_to_num(chunk["status"], nan=-1), return_counts=True)
        for code, count in zip(codes.tolist(), counts.tolist(), strict=True):
            label = str(int(code)) if float(code).is_integer() else str(code)
            status[label] = status.get(label, 0) + count
        submit = chunk["submit_time"]
        wait = np.nan_to_num(chunk["wait_time"], nan=0.0)
        end = submit + wait + chunk["run_time"]
        first_submit = np.fmin(first_submit, np.nanmin(submit, initial=np.inf))
        last_submit = np.fmax(last_submit, np.nanmax(submit, initial=-np.inf))
        last_end = np.fmax(last_end, np.nanmax(end, initial=-np.inf))
        alloc = chunk["allocated_processors"]
        work = chunk["run_time"] * alloc
        proc_seconds += float(np.nansum(work))
        proc_jobs += int((~np.isnan(work)).sum())
        max_alloc = np.fmax(max_alloc, np.nanmax(alloc, initial=-np.inf))
        max_req = np.fmax(max_req, np.nanmax(chunk["requested_processors"], initial=-np.inf))
        alloc_sum += float(np.nansum(alloc))
        alloc_known += int((~np.isnan(alloc)).sum())

    def finite(x: float) -> float | None:
        return float(x) if np.isfinite(x) else None

    header = workload.header
    machine = header.machine_size()
    first, last_s, last_e = finite(first_submit), finite(last_submit), finite(last_end)
    span = (last_e - first) if first is not None and last_e is not None else None
    window = (last_s - first) if first is not None and last_s is not None else None
    load = None
    # unknown, not 0, when no job has both run time and allocated processors
    processor_seconds = proc_seconds if proc_jobs else None
    if proc_jobs and machine and window and window > 0:
        load = proc_seconds / (machine * window)
    summary: dict[str, Any] = {
        "source": workload.meta.get("source"),
        "format": workload.meta.get("reader"),
        "jobs": jobs,
        **{key: len(values) for key, values in distinct.items()},
        "first_submit": first,
        "last_submit": last_s,
        "last_end": last_e,
        "span_seconds": span,
        "span_days": None if span is None else span / 86400,
        "machine_processors": machine,
        "max_allocated_processors": finite(max_alloc),
        "mean_allocated_processors": alloc_sum / alloc_known if alloc_known else None,
        "max_requested_processors": finite(max_req),
        "processor_seconds": processor_seconds,
        "offered_load": load,
        "processor_seconds_jobs": proc_jobs,
        "status": dict(sorted(status.items(), key=lambda kv: float(kv[0]))),
        "unknown_fields": {k: v for k, v in unknown.items() if v},
        "header": header_summary(header),
    }
    if "records" in workload.meta:
        summary["records"] = workload.meta["records"]
    if workload.meta.get("skipped"):
        summary["skipped"] = workload.meta["skipped"]
    if workload.meta.get("findings"):
        from ..validation import count_by_severity

        summary["findings"] = count_by_severity(workload.meta["findings"])
    extra = workload.meta.get("summary")
    if isinstance(extra, dict):
        summary["summary"] = extra
    return _clean(summary)


def header_summary(header: Any) -> dict[str, Any]:
    """The header labels worth seeing at a glance."""
    import datetime as dt

    out: dict[str, Any] = {}
    for label in (
        "Version",
        "Computer",
        "Installation",
        "MaxJobs",
        "MaxRecords",
        "MaxNodes",
        "MaxProcs",
        "Preemption",
        "UnixStartTime",
        "TimeZoneString",
        "StartTime",
        "EndTime",
    ):
        value = header.get(label)
        if value is not None:
            out[label] = value
    start = header.unix_start_time
    if start is not None and start != -1:  # -1: unknown
        out["start_utc"] = dt.datetime.fromtimestamp(start, dt.timezone.utc).isoformat()
    for label in ("Queue", "Partition", "Note", "User", "Group"):
        count = len(header.get_all(label))
        if count:
            out[f"{label}_entries"] = count
    unknown = header.unknown_labels()
    if unknown:
        out["unknown_labels"] = unknown
    comments = sum(1 for e in header.entries if e.label is None and e.value)
    if comments:
        out["free_text_comments"] = comments
    return out


def _text(summary: dict[str, Any]) -> str:
    lines: list[str] = []

    def row(key: str, value: Any, indent: int = 0) -> None:
        if isinstance(value, dict):
            if not value:
                return
            lines.append(" " * indent + f"{key}:")
            for k, v in value.items():
                row(str(k), v, indent + 2)
            return
        if value is None:
            value = "unknown"
        elif isinstance(value, float):
            value = f"{value:.6g}"
        lines.append(" " * indent + f"{key}: {value}")

    covered = summary.get("processor_seconds_jobs")
    partial = (
        f" ({covered:,} of {summary['jobs']:,} jobs)"
        if isinstance(covered, int) and covered < summary.get("jobs", 0)
        else ""
    )
    for key, value in summary.items():
        if key == "processor_seconds_jobs":
            continue
        row(key, value)
        if partial and key in ("processor_seconds", "offered_load") and value is not None:
            lines[-1] += partial
    return "\n".join(lines)


@click.command("info", cls=FlagCommand)
@click.argument("source", metavar="FILE")
@click.option("--from", "from_", metavar="NAME", help="Reader to use (default: detected).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@read_option("--option")
def command(source: str, from_: str | None, as_json: bool, read_options: tuple[str, ...]) -> None:
    """Summarise FILE: jobs, users, groups, queues, partitions, time span,
    processors, offered load, status counts and the header."""
    from ..api import read

    check_reader_flags([source], from_, read_options)
    workload = read(source, format=from_, **parse_read_options(read_options))
    summary = summarize(workload)
    if as_json:
        click.echo(json_text(summary))
    else:
        click.echo(_text(summary))
