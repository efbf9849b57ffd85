"""Tables for pandas, Arrow and notebooks.

What ``to_pandas()``, ``to_arrow()`` and ``_repr_html_()`` of
:class:`~schedlab.Workload`, :class:`~schedlab.Result` and
:class:`~schedlab.MetricsReport` do. pandas and pyarrow are optional: they are
imported on first use, and a missing one raises :class:`~schedlab.UsageError` naming
the extra that installs it (``schedlab[pandas]``, ``schedlab[parquet]``).

Jobs become one row each, with one column per SWF field (:data:`~schedlab.SWF_FIELDS`).
Unknown stays unknown: numbers, user and queue ids of the integer fields
(:data:`INTEGER_FIELDS`) become pandas' nullable ``Int64`` (``<NA>`` where unknown)
when every known value is a whole number, the other fields ``float64`` with ``NaN``;
in Arrow, ``int64`` and ``double`` columns with nulls. Per-job ``extras`` (fields of
other formats without an SWF column) are not included unless asked for:
``to_pandas(extras=True)`` adds one column per extras key any job has, in the order
the keys first appear, ``to_pandas(extras=["collection_id", ...])`` those keys in that
order (see :func:`extras_frame_columns` for the column types). The way back from a
frame of jobs is :meth:`Workload.from_arrays(frame, header=...)
<schedlab.Workload.from_arrays>`.

The HTML representations are small on purpose: a summary line, the first
:data:`HEAD_ROWS` jobs (or :data:`HEAD_GROUPS` groups) and how many more there are;
every text is escaped.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import UsageError
from .model import SWF_FIELDS, JobColumns, Workload

if TYPE_CHECKING:  # pragma: no cover
    from .measure import MetricsReport
    from .sim.result import Result

#: SWF fields holding whole numbers (ids, counts, codes): nullable integers in tables.
INTEGER_FIELDS: tuple[str, ...] = (
    "job_number",
    "allocated_processors",
    "requested_processors",
    "status",
    "user_id",
    "group_id",
    "executable_number",
    "queue_number",
    "partition_number",
    "preceding_job_number",
)
#: Jobs shown in the HTML of a workload or result.
HEAD_ROWS = 10
#: Groups shown in the HTML of a grouped metrics report (the ``all`` row is added).
HEAD_GROUPS = 20
#: Largest magnitude a float64 holds every integer up to.
_EXACT = 2.0**53


def require_pandas() -> Any:
    """The ``pandas`` module, or a :class:`~schedlab.UsageError` naming the extra."""
    try:
        import pandas
    except ImportError:
        raise UsageError(
            "to_pandas() needs pandas, an optional dependency: pip install 'schedlab[pandas]'"
        ) from None
    return pandas


def require_pyarrow() -> Any:
    """The ``pyarrow`` module, or a :class:`~schedlab.UsageError` naming the extra."""
    try:
        import pyarrow
    except ImportError:
        raise UsageError(
            "to_arrow() needs pyarrow, an optional dependency: pip install 'schedlab[parquet]'"
        ) from None
    return pyarrow


def _whole(values: np.ndarray) -> bool:
    known = values[~np.isnan(values)]
    return bool(np.all((known == np.floor(known)) & (np.abs(known) < _EXACT)))


def _job_columns(columns: JobColumns, extra: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """Name -> ``(values, integer?)`` of every column of a job table."""
    out: dict[str, Any] = {}
    for name in SWF_FIELDS:
        values = np.asarray(columns[name], dtype=np.float64)
        out[name] = (values, name in INTEGER_FIELDS and _whole(values))
    for name, values in extra.items():
        if isinstance(values, np.ma.MaskedArray):  # booleans, masked = unknown
            out[name] = (values, None)
            continue
        values = np.asarray(values)
        if values.dtype.kind == "f":
            out[name] = (values.astype(np.float64), False)
        else:
            out[name] = (values, None)  # bool / int: kept as they are
    return out


#: What ``to_pandas(extras=...)`` accepts: ``False`` (no extras columns), ``True``
#: (every key) or the keys wanted (one string is one key).
ExtrasSelection = bool | str | Iterable[str]

#: Prefix of an extras column whose key is already a column of the table.
EXTRAS_PREFIX = "extras."

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def extras_keys(columns: JobColumns, extras: ExtrasSelection) -> list[str]:
    """The extras keys ``extras`` selects: none for ``False``, every key some job has
    (in the order they first appear) for ``True``, else the keys given, in that order
    (a key no job has is kept: its column is all ``<NA>``)."""
    if extras is False:
        return []
    if extras is True:
        seen: dict[str, None] = {}
        for entry in columns.extras or ():
            if entry:
                for key in entry:
                    seen.setdefault(key, None)
        return list(seen)
    if isinstance(extras, str):
        return [extras]
    if isinstance(extras, Iterable) and not isinstance(extras, (bytes, Mapping)):
        keys = list(extras)
        bad = [k for k in keys if not isinstance(k, str)]
        if bad:
            raise UsageError(f"to_pandas(extras=...): extras keys are strings, got {bad[0]!r}")
        return list(dict.fromkeys(keys))
    raise UsageError(
        "to_pandas(extras=...) takes True (every extras key), False (none) or a list "
        f"of extras keys, got {type(extras).__name__}"
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_real(value: Any) -> bool:
    return _is_int(value) or isinstance(value, (float, np.floating))


def _extras_column(pd: Any, values: list[Any]) -> Any:
    """One extras column, typed by its known values (``None`` = unknown)."""
    known = [v for v in values if v is not None]
    if known and all(isinstance(v, str) for v in known):
        return pd.array(values, dtype="string")
    if known and all(isinstance(v, (bool, np.bool_)) for v in known):
        return pd.array(values, dtype="boolean")
    if known and all(_is_int(v) and _INT64_MIN <= int(v) <= _INT64_MAX for v in known):
        return pd.array([None if v is None else int(v) for v in values], dtype="Int64")
    if known and all(_is_real(v) and (not _is_int(v) or abs(int(v)) <= _EXACT) for v in known):
        return np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = pd.NA if v is None else v
    return out


def extras_frame_columns(
    columns: JobColumns, extras: ExtrasSelection, taken: Iterable[str] = ()
) -> dict[str, Any]:
    """Column name -> pandas array of the extras keys ``extras`` selects (see
    :func:`extras_keys`), one value per job, ``<NA>`` where a job lacks the key.

    A column is named by its key (``extras.KEY`` when ``KEY`` is already a column in
    ``taken``) and typed by its known values: all text: pandas ``string``; all
    ``True``/``False``: ``boolean``; all integers within int64: ``Int64``; all
    numbers (integers up to 2**53 among them): ``float64`` (``NaN`` = unknown);
    anything else (lists, dicts, mixed kinds such as Batsim ids that are text for
    some jobs and numbers for others, text with ``NaN`` or ``pd.NA`` among it):
    ``object`` holding the values as they are (:func:`jobs_frame` keeps that dtype).
    A key no job has gives an all-``<NA>`` ``object`` column."""
    keys = extras_keys(columns, extras)
    if not keys:
        return {}
    pd = require_pandas()
    n = len(columns)
    rows = columns.extras if columns.extras is not None else [None] * n
    taken = set(taken)
    out: dict[str, Any] = {}
    for key in keys:
        values = [(entry.get(key) if entry else None) for entry in rows]
        name = EXTRAS_PREFIX + key if key in taken else key
        out[name] = _extras_column(pd, values)
    return out


def jobs_frame(
    columns: JobColumns,
    extra: Mapping[str, np.ndarray] | None = None,
    extras: ExtrasSelection = False,
) -> Any:
    """A :class:`pandas.DataFrame` of ``columns`` (one row per job), then ``extra``
    columns (equal length), then the per-job extras ``extras`` selects (see
    :func:`extras_frame_columns`)."""
    pd = require_pandas()
    keys_wanted = extras_keys(columns, extras)  # checks ``extras`` before any work
    data: dict[str, Any] = {}
    for name, (values, integer) in _job_columns(columns, extra or {}).items():
        if isinstance(values, np.ma.MaskedArray):  # nullable ``boolean``: <NA> unknown
            data[name] = pd.arrays.BooleanArray(
                np.asarray(values.data, dtype=bool), np.ma.getmaskarray(values).copy()
            )
        elif integer:
            missing = np.isnan(values)
            data[name] = pd.arrays.IntegerArray(
                np.where(missing, 0, values).astype(np.int64), missing
            )
        else:
            data[name] = values.copy() if values.dtype.kind == "f" else values
    index = pd.RangeIndex(len(columns))
    if keys_wanted:
        for name, column in extras_frame_columns(columns, keys_wanted, taken=data).items():
            # an object column as a Series of that dtype: from a bare array, pandas (3)
            # infers its ``str`` dtype for text mixed with NaN or <NA> (and turns
            # <NA> into NaN), where the values are to stay as they are
            is_object = isinstance(column, np.ndarray) and column.dtype == object
            data[name] = pd.Series(column, index=index, dtype=object) if is_object else column
    return pd.DataFrame(data, index=index)


def jobs_table(columns: JobColumns, extra: Mapping[str, np.ndarray] | None = None) -> Any:
    """A :class:`pyarrow.Table` of ``columns`` (unknown values are nulls)."""
    pa = require_pyarrow()
    arrays, names = [], []
    for name, (values, integer) in _job_columns(columns, extra or {}).items():
        if integer is None:
            arrays.append(pa.array(values))
        else:
            missing = np.isnan(values)
            data = np.where(missing, 0, values).astype(np.int64) if integer else values
            arrays.append(pa.array(data, mask=missing))
        names.append(name)
    return pa.Table.from_arrays(arrays, names=names)


# --------------------------------------------------------------------------- results


def _result_extra(result: Result) -> dict[str, np.ndarray]:
    """The simulation's own columns, aligned with the result's workload rows."""
    return {
        "start_time": np.asarray(result.start, dtype=np.float64),
        "end_time": np.asarray(result.end, dtype=np.float64),
        "estimate": np.asarray(result.estimate, dtype=np.float64),
        "killed": np.asarray(result.killed, dtype=bool),
        "input_row": np.asarray(result.rows, dtype=np.int64),
        "original_submit": np.asarray(result.original_submit, dtype=np.float64),
        "estimate_fell_back": _fell_back(result),
    }


def _fell_back(result: Result) -> np.ndarray:
    """``result.estimate_fell_back`` as booleans masked where unknown: all of them
    when the result does not know (``None``: a result built by hand)."""
    n = len(result.start)
    if result.estimate_fell_back is None:
        return np.ma.masked_all(n, dtype=bool)
    return np.ma.MaskedArray(np.asarray(result.estimate_fell_back, dtype=bool))


def result_frame(result: Result, extras: ExtrasSelection = False) -> Any:
    """The simulated schedule as a :class:`pandas.DataFrame`: the SWF columns of
    ``result.workload``, then ``start_time``, ``end_time``, ``estimate``,
    ``killed``, ``input_row`` (row of the job in the input),
    ``original_submit`` and ``estimate_fell_back`` (nullable ``boolean``: whether
    the job's estimate fell back, ``<NA>`` when the result does not know), then the
    per-job extras ``extras`` selects (those of the
    input, and on a platform ``schedlab.partition``, ``schedlab.nodes`` and
    ``schedlab.held``)."""
    return jobs_frame(result.workload.to_arrays(), _result_extra(result), extras)


def result_table(result: Result) -> Any:
    """:func:`result_frame` as a :class:`pyarrow.Table`."""
    return jobs_table(result.workload.to_arrays(), _result_extra(result))


# --------------------------------------------------------------------------- reports


def _report_records(report: MetricsReport, tidy: bool) -> tuple[list[str], list[list[Any]]]:
    """Column names and rows of a report's table (see ``MetricsReport.to_pandas``)."""
    if tidy:
        names = ["group", "metric", "statistic", "value", "unit"]
        records: list[list[Any]] = []
        for row in report.rows:
            for info in report.metrics:
                entry = row.get(info.name)
                if info.per_job:
                    if not isinstance(entry, Mapping):
                        continue
                    for stat in (*report.stats, "count", "unknown"):
                        unit = "" if stat in ("count", "unknown", *report.unitless) else info.unit
                        records.append([row["group"], info.name, stat, entry.get(stat), unit])
                elif info.name in row:
                    records.append([row["group"], info.name, "value", entry, info.unit])
        return names, records
    with_names = any("name" in r for r in report.rows)
    names = [report.by or "group", *(["name"] if with_names else []), "jobs", "users"]
    for info in report.metrics:
        if info.per_job:
            names += [f"{info.name}.{s}" for s in (*report.stats, "count", "unknown")]
        else:
            names.append(info.name)
    records = []
    for row in report.rows:
        record: list[Any] = [row["group"]]
        if with_names:
            record.append(row.get("name"))
        record += [row["jobs"], row["users"]]
        for info in report.metrics:
            entry = row.get(info.name)
            if info.per_job:
                block = entry if isinstance(entry, Mapping) else {}
                record += [block.get(s) for s in (*report.stats, "count", "unknown")]
            else:
                record.append(entry)
        records.append(record)
    return names, records


def report_frame(report: MetricsReport, tidy: bool = False) -> Any:
    """A metrics report as a :class:`pandas.DataFrame` (see
    ``MetricsReport.to_pandas``)."""
    pd = require_pandas()
    names, records = _report_records(report, tidy)
    frame = pd.DataFrame(records, columns=names)
    text = {names[0], "group", "name", "metric", "statistic", "unit"}
    for name in names:
        if name in text:
            continue
        if name in ("jobs", "users") or name.endswith((".count", ".unknown")):
            frame[name] = frame[name].astype("Int64")
        else:
            frame[name] = pd.to_numeric(frame[name]).astype("float64")
    if not tidy:
        frame = frame.set_index(names[0])
    return frame


def report_table(report: MetricsReport, tidy: bool = False) -> Any:
    """A metrics report as a :class:`pyarrow.Table`: the table of
    :func:`report_frame`, the group keys as a text column (they mix numbers with
    ``all``; the frame keeps them typed), unknown values as nulls."""
    pa = require_pyarrow()
    names, records = _report_records(report, tidy)
    arrays = []
    for i, name in enumerate(names):
        values = [r[i] for r in records]
        if i == 0 or name in ("name", "metric", "statistic", "unit"):
            arrays.append(pa.array([None if v is None else str(v) for v in values], pa.string()))
        elif name in ("jobs", "users") or name.endswith((".count", ".unknown")):
            arrays.append(pa.array(values, pa.int64()))
        else:
            arrays.append(pa.array([_number_or_none(v) for v in values], pa.float64()))
    return pa.Table.from_arrays(arrays, names=names)


def _number_or_none(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


# --------------------------------------------------------------------------- HTML


def _cell(value: Any) -> str:
    """A value for an HTML cell: unknown is empty, whole numbers without decimals."""
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else ""
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if math.isnan(number):
            return ""
        if number.is_integer() and abs(number) < _EXACT:
            return str(int(number))
        return f"{number:.6g}"
    return html.escape(str(value))


def _html_table(header: Sequence[str], rows: Sequence[Sequence[Any]], caption: str = "") -> str:
    parts = ['<table class="schedlab">']
    if caption:
        parts.append(f"<caption>{html.escape(caption)}</caption>")
    parts.append("<thead><tr>")
    parts += [f"<th>{html.escape(str(h))}</th>" for h in header]
    parts.append("</tr></thead><tbody>")
    for row in rows:
        parts.append("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def _head_rows(columns: JobColumns, fields: Sequence[str], limit: int) -> list[list[Any]]:
    count = min(limit, len(columns))
    cols = [np.asarray(columns[f])[:count] if f in columns.data else None for f in fields]
    return [[c[i] if c is not None else None for c in cols] for i in range(count)]


#: The SWF fields a workload's HTML shows when they are known for some job.
_SHOWN_FIELDS: tuple[str, ...] = (
    "job_number",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_processors",
    "requested_processors",
    "requested_time",
    "status",
    "user_id",
    "queue_number",
    "partition_number",
)


def _summary(parts: Sequence[str]) -> str:
    return "<p>" + html.escape("; ".join(p for p in parts if p)) + "</p>"


def _more(shown: int, total: int, what: str) -> str:
    if total <= shown:
        return ""
    return f"<p>{html.escape(f'... {total - shown:,} more {what} ({total:,} in all)')}</p>"


def workload_html(workload: Workload) -> str:
    """A small HTML view of a workload: counts, then the first :data:`HEAD_ROWS` jobs.
    A streaming workload is not read whole: only its first chunk is shown."""
    machine = workload.header.machine_size()
    if workload.is_streaming:
        chunks = workload.iter_column_chunks()
        chunk = next(chunks, JobColumns.empty())
        close = getattr(chunks, "close", None)
        if close is not None:
            close()  # read no further (and let the reader close its file)
        head = chunk.take(np.arange(min(HEAD_ROWS, len(chunk))))
        summary = _summary(
            [
                "Workload (streaming: not read whole, so not counted)",
                f"machine: {machine:,} processors" if machine else "",
            ]
        )
        total = len(head)
    else:
        columns = workload.to_arrays()
        total = len(columns)
        head = columns.take(np.arange(min(HEAD_ROWS, total)))
        users = columns["user_id"]
        submit = columns["submit_time"]
        known_submit = submit[~np.isnan(submit)]
        span = float(known_submit.max() - known_submit.min()) if len(known_submit) else None
        summary = _summary(
            [
                f"Workload: {total:,} jobs",
                f"{len(np.unique(users[~np.isnan(users)])):,} users",
                f"submissions over {span / 86400:,.1f} days" if span is not None else "",
                f"machine: {machine:,} processors" if machine else "",
            ]
        )
    fields = [f for f in _SHOWN_FIELDS if (~np.isnan(head[f])).any()] or ["job_number"]
    body = _html_table(fields, _head_rows(head, fields, HEAD_ROWS))
    more = "" if workload.is_streaming else _more(len(head), total, "jobs")
    return f"<div>{summary}{body}{more}</div>"


def result_html(result: Result) -> str:
    """A small HTML view of a simulation result: settings and counts, then the first
    :data:`HEAD_ROWS` jobs of the schedule."""
    stats = result.stats
    n = len(result)
    count = min(HEAD_ROWS, n)
    columns = result.workload.to_arrays()
    makespan = stats.get("makespan")
    summary = _summary(
        [
            f"Result: {result.policy}+{result.backfill} ({result.estimator} estimates) "
            f"on {result.procs:,} processors",
            f"{n:,} jobs simulated",
            f"{int(stats.get('jobs_excluded', 0) or 0):,} excluded",
            f"{int(np.count_nonzero(result.killed)):,} killed",
            f"makespan {float(makespan):,.0f} s" if isinstance(makespan, (int, float)) else "",
        ]
    )
    header = ["job_number", "submit_time", "wait_time", "run_time", "allocated_processors"]
    header += ["start_time", "end_time", "estimate", "killed"]
    rows = []
    for i in range(count):
        rows.append(
            [columns[f][i] for f in header[:5]]
            + [result.start[i], result.end[i], result.estimate[i], bool(result.killed[i])]
        )
    return f"<div>{summary}{_html_table(header, rows)}{_more(count, n, 'jobs')}</div>"


def report_html(report: MetricsReport) -> str:
    """A small HTML view of a metrics report: per-job statistics, the system
    metrics and the notes (a grouped report shows its first :data:`HEAD_GROUPS`
    groups and the ``all`` row)."""
    per_job = [m for m in report.metrics if m.per_job]
    scalar = [m for m in report.metrics if not m.per_job]
    title = f"Metrics of {report.jobs:,} jobs" + (f" by {report.by}" if report.by else "")
    parts = [_summary([title])]
    if report.by is None and per_job:
        row = report.rows[0]
        header = ["metric", "unit", *report.stats, "count", "unknown"]
        rows = [
            [info.name, info.unit, *(row[info.name].get(s) for s in header[2:])] for info in per_job
        ]
        parts.append(_html_table(header, rows, "Per-job metrics"))
    elif report.by is not None:
        groups = [r for r in report.rows if r["group"] != "all"]
        total = [r for r in report.rows if r["group"] == "all"]
        shown = groups[:HEAD_GROUPS] + total
        grouped_scalar = [m for m in scalar if m.per_group]
        with_names = any("name" in r for r in shown)
        header = [report.by, *(["name"] if with_names else []), "jobs", "users"]
        header += [f"{m.name} {s}" for m in per_job for s in report.stats]
        header += [m.name for m in grouped_scalar]
        rows = []
        for r in shown:
            cells = [r["group"], *([r.get("name")] if with_names else []), r["jobs"], r["users"]]
            cells += [r[m.name].get(s) for m in per_job for s in report.stats]
            cells += [r.get(m.name) for m in grouped_scalar]
            rows.append(cells)
        parts.append(_html_table(header, rows, f"Metrics by {report.by}"))
        parts.append(_more(min(HEAD_GROUPS, len(groups)), len(groups), "groups"))
        scalar = [m for m in scalar if not m.per_group]
    if scalar:
        total_row = next((r for r in report.rows if r["group"] == "all"), None)
        rows = [[m.name, total_row.get(m.name) if total_row else None, m.unit] for m in scalar]
        parts.append(_html_table(["metric", "value", "unit"], rows, "System metrics"))
    if report.notes:
        items = "".join(f"<li>{html.escape(note)}</li>" for note in report.notes)
        parts.append(f"<ul>{items}</ul>")
    return "<div>" + "".join(parts) + "</div>"
