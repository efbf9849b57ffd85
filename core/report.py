"""``schedlab report``: one self-contained HTML page about a schedule (or several).

The page holds the facts and the metrics tables (HTML) and the charts. By default
they are interactive, drawn with Bokeh (:mod:`schedlab.report_charts`, the extra
``report``) from the data of :mod:`schedlab.report_data`: utilization and queue
over time with zoom and pan, Gantt charts of a window, distributions and bars.
The ``--static`` page (``static=True``) holds PNG images instead, drawn with
:mod:`schedlab.plotting` like every other figure (for papers): utilization and
queue length over time, the distribution of waits, the mean wait per user and
per PSP accuracy class, and a Gantt chart when the schedule is small enough to
read. Either page is one file that opens offline.

A schedule is any workload whose wait times are known: a simulated one (the output
of ``schedlab simulate`` or :func:`schedlab.simulate`) or a recorded trace.
"""

from __future__ import annotations

import base64
import html
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .errors import UsageError
from .model import JobColumns, Workload
from .plotting import COLUMN_WIDTH, PAGE_WIDTH, new_figure, save_figure
from .report_charts import SCHEDULE_COLOURS
from .report_nodes import (
    _shares_nodes,
    default_window,
    dimension_steps,
    figure_dimension_usage,
    figure_node_gantt,
    node_page_data,
    node_schedule,
)

#: Largest schedule drawn as a Gantt chart (one row per job).
GANTT_MAX_JOBS = 150
#: Most jobs of a selected window drawn by the interactive Gantt chart.
GANTT_WINDOW_JOBS = 3000
#: Most users shown in the per-user chart (the most active ones).
MAX_USERS_SHOWN = 40
CLASS_COLOURS = ("#fde725", "#5ec962", "#21918c", "#3b528b", "#440154")
#: Colour of an unknown class or user in the bar charts.
_UNKNOWN_COLOUR = "#bbbbbb"


# --------------------------------------------------------------------------- data


def _columns(schedule: Any) -> tuple[JobColumns, Workload | None, float | None]:
    workload = schedule if isinstance(schedule, Workload) else getattr(schedule, "workload", None)
    if not isinstance(workload, Workload):
        raise UsageError(f"report needs a Workload or a simulation Result, got {type(schedule)}")
    procs = getattr(schedule, "procs", None) or workload.header.machine_size()
    return _as_measured(workload.to_arrays()), workload, float(procs) if procs else None


def _as_measured(columns: JobColumns) -> JobColumns:
    """``columns`` as the metrics read them: a negative wait, run time, requested
    time or processor count (-1, SWF's unknown, or any other: invalid) is unknown
    (NaN), by the metrics' own rule (:func:`schedlab.measure.compute_metrics`,
    whose note counts the invalid ones). The given arrays are not changed; columns
    without a negative value are returned as they are."""
    from .measure import _negative_as_unknown

    return _negative_as_unknown(columns)[0]


def timed_jobs(columns: JobColumns) -> np.ndarray:
    """Mask of jobs with known submit, wait and run times (the schedule proper), as
    the metrics count them: a negative wait or run time is unknown
    (:func:`_as_measured`)."""
    columns = _as_measured(columns)
    return ~(
        np.isnan(columns["submit_time"])
        | np.isnan(columns["wait_time"])
        | np.isnan(columns["run_time"])
    )


def job_size(columns: JobColumns) -> np.ndarray:
    """Processors of each job: allocated, else requested; NaN when neither is
    known (positive): unknown stays unknown, the charts leave such jobs out."""
    allocated, requested = columns["allocated_processors"], columns["requested_processors"]
    size = np.where(allocated > 0, allocated, requested)
    return np.where(size > 0, size, np.nan)


def step_series(times: np.ndarray, deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The running sum of ``deltas`` at each distinct time, as a step function:
    ``(times, values)`` where ``values[i]`` holds from ``times[i]`` until the next.
    ``deltas`` may have more axes than ``times`` (several sums over one sort of the
    times: a row per time)."""
    if not len(times):
        return np.asarray(times, dtype=float), np.asarray(deltas, dtype=float)
    order = np.argsort(times, kind="stable")
    t, d = times[order], deltas[order]
    level = np.cumsum(d, axis=0)
    last = np.r_[t[1:] != t[:-1], True]  # keep the level after every event of a time
    return t[last], level[last]


def usage_over_time(columns: JobColumns) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Busy processors and queued jobs over time, as step functions (jobs of
    unknown processors are left out of the busy processors)."""
    ok = timed_jobs(columns)
    submit = columns["submit_time"][ok]
    start = submit + columns["wait_time"][ok]
    end = start + columns["run_time"][ok]
    size = job_size(columns)[ok]
    sized = ~np.isnan(size)
    busy = step_series(np.r_[start[sized], end[sized]], np.r_[size[sized], -size[sized]])
    if not len(busy[0]):  # no job of known size: none busy (min/max need a point)
        busy = (submit[:1], np.zeros(min(1, len(submit))))
    queued = step_series(np.r_[submit, start], np.r_[np.ones(len(submit)), -np.ones(len(start))])
    return {"busy": busy, "queued": queued}


def _time_axis(span: float) -> tuple[float, str]:
    if span > 3 * 86400:
        return 86400.0, "days"
    if span > 3 * 3600:
        return 3600.0, "hours"
    return 60.0, "minutes"


# --------------------------------------------------------------------------- figures


def _png(fig: Any) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        (path,) = save_figure(fig, Path(tmp) / "figure.png")
        return path.read_bytes()


def figure_usage(columns: JobColumns, procs: float | None) -> bytes:
    """Utilization (or busy processors) and queue length over time."""
    series = usage_over_time(columns)
    t_busy, busy = series["busy"]
    t_queue, queued = series["queued"]
    origin = min(t_busy.min(), t_queue.min())
    scale, unit = _time_axis(max(t_busy.max(), t_queue.max()) - origin)
    fig, (top, bottom) = new_figure(PAGE_WIDTH * 0.75, 3.4, nrows=2, sharex=True)
    if procs:
        top.step(
            (t_busy - origin) / scale, busy / procs * 100, where="post", lw=0.8, color="#3b528b"
        )
        top.set_ylabel("Utilization (%)")
        top.set_ylim(0, 105)
    else:
        top.step((t_busy - origin) / scale, busy, where="post", lw=0.8, color="#3b528b")
        top.set_ylabel("Busy processors")
    bottom.step((t_queue - origin) / scale, queued, where="post", lw=0.8, color="#b5367a")
    bottom.set_ylabel("Queued jobs")
    bottom.set_xlabel(f"Time since first event ({unit})")
    bottom.set_ylim(bottom=0)
    return _png(fig)


def figure_wait_distribution(wait: np.ndarray) -> bytes:
    """Empirical CDF of the waits (log scale), with the share of jobs that did not wait."""
    wait = np.sort(wait[~np.isnan(wait)])
    fig, ax = new_figure(COLUMN_WIDTH * 1.4, 2.6)
    zero = float(np.mean(wait <= 0)) if len(wait) else 0.0
    positive = wait[wait > 0] / 60.0
    if len(positive):
        share = zero + np.arange(1, len(positive) + 1) / len(wait)
        ax.step(
            positive, share * 100, where="post", color="#21918c", lw=1.0, label="jobs that waited"
        )
        ax.set_xscale("log")
    ax.axhline(
        zero * 100, color="grey", lw=0.8, ls="--", label=f"no wait: {zero * 100:.0f}% of jobs"
    )
    ax.set_xlabel("Wait (min, log scale)")
    ax.set_ylabel("Jobs waiting at most this long (%)")
    ax.set_ylim(0, 101)
    ax.legend(loc="lower right", frameon=False)
    return _png(fig)


def figure_wait_by_group(
    labels: Sequence[str],
    minutes: Sequence[float],
    colours: Sequence[str],
    xlabel: str,
    annotations: Sequence[str] | None = None,
    legend: Sequence[tuple[str, str]] = (),
    width: float = COLUMN_WIDTH * 1.4,
) -> bytes:
    """Bars of mean wait (minutes) per group."""
    fig, ax = new_figure(width, 2.6)
    x = np.arange(len(labels))
    bars = ax.bar(x, minutes, color=colours, edgecolor="black", linewidth=0.4, zorder=2)
    ax.set_xticks(x, labels, rotation=90 if len(labels) > 12 else 0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("Mean wait (min)")
    ax.grid(axis="x", visible=False)
    if annotations:
        for bar, text in zip(bars, annotations, strict=True):
            ax.annotate(
                text,
                (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                ha="center",
                va="bottom",
                fontsize=6,
                xytext=(0, 1),
                textcoords="offset points",
            )
        ax.set_ylim(0, max(minutes, default=1) * 1.15 or 1)
    if legend:
        from matplotlib.patches import Patch

        ax.legend(
            [Patch(facecolor=c, edgecolor="black", linewidth=0.4) for _, c in legend],
            [name for name, _ in legend],
            title="Accuracy class",
            frameon=False,
            ncols=len(legend),
            loc="upper center",
            bbox_to_anchor=(0.5, 1.18),
            handlelength=1.0,
            columnspacing=0.8,
        )
    return _png(fig)


def figure_gantt(columns: JobColumns) -> bytes:
    """One row per job: waiting (light) from submit to start, running (dark) to the end."""
    ok = timed_jobs(columns)
    submit = columns["submit_time"][ok]
    start = submit + columns["wait_time"][ok]
    end = start + columns["run_time"][ok]
    numbers = columns["job_number"][ok]
    origin = submit.min()
    scale, unit = _time_axis(end.max() - origin)
    n = len(submit)
    fig, ax = new_figure(PAGE_WIDTH * 0.75, min(8.0, 1.2 + 0.06 * n))
    y = np.arange(n)
    ax.barh(
        y,
        (start - submit) / scale,
        left=(submit - origin) / scale,
        height=0.8,
        color="#f3c1d9",
        label="waiting",
    )
    ax.barh(
        y,
        (end - start) / scale,
        left=(start - origin) / scale,
        height=0.8,
        color="#3b528b",
        label="running",
    )
    ax.set_ylim(n - 0.5, -0.5)
    step = max(1, n // 20)
    ax.set_yticks(y[::step], [str(int(v)) if v == v else "?" for v in numbers[::step]])
    ax.set_ylabel("Job number")
    ax.set_xlabel(f"Time since first submission ({unit})")
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=2, frameon=False)
    return _png(fig)


# --------------------------------------------------------------------------- page


def _jobs(n: int) -> str:
    """``"1 job"``, ``"1,234 jobs"``."""
    return f"{n:,} job{'s' if n != 1 else ''}"


def _img(data: bytes, alt: str) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{encoded}">'


def _number(value: Any, scale: float = 1.0) -> str:
    from .measure import format_number

    if value is None:
        return "-"
    if isinstance(value, float):
        return format_number(value / scale)
    return format_number(value)


def _metrics_table(report: Any) -> str:
    per_job = [m for m in report.metrics if m.per_job]
    scalar = [m for m in report.metrics if not m.per_job]
    row = report.rows[0]
    out = ["<table><thead><tr><th>metric</th><th>unit</th>"]
    out += [f"<th>{s}</th>" for s in (*report.stats, "jobs")]
    out.append("</tr></thead><tbody>")
    for info in per_job:
        entry = row.get(info.name) or {}
        scale, unit = (60.0, "min") if info.unit == "s" else (1.0, info.unit)
        cells = "".join(f"<td>{_number(entry.get(s), scale)}</td>" for s in report.stats)
        out.append(
            f"<tr><td title='{html.escape(info.description)}'>{html.escape(info.name)}</td>"
            f"<td>{html.escape(unit)}</td>{cells}<td>{_number(entry.get('count'))}</td></tr>"
        )
    out.append("</tbody></table>")
    if scalar:
        out.append(
            "<table><thead><tr><th>system metric</th><th>value</th><th>unit</th>"
            "</tr></thead><tbody>"
        )
        for info in scalar:
            value = row.get(info.name)
            scale, unit = (3600.0, "h") if info.unit == "s" else (1.0, info.unit)
            out.append(
                f"<tr><td title='{html.escape(info.description)}'>{html.escape(info.name)}</td>"
                f"<td>{_number(value, scale)}</td><td>{html.escape(unit)}</td></tr>"
            )
        out.append("</tbody></table>")
    return "\n".join(out)


STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto;
       padding: 0 1rem; color: #222; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.85rem; }
th, td { border-bottom: 1px solid #ddd; padding: 0.2rem 0.6rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
img { max-width: 100%; height: auto; display: block; margin: 0.5rem 0; }
.note { color: #666; font-size: 0.8rem; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.1rem 1rem; }
dt { font-weight: 600; } dd { margin: 0; }
.legend { font-size: 0.85rem; margin: 0.2rem 0; }
"""

_DISTRIBUTIONS_NOTE = (
    "<p class='note'>Share of jobs with a wait (bounded slowdown, threshold 10 s) at "
    "most x, log axis; the dashed line is the share that did not wait (bounded "
    "slowdown 1).</p>"
)


def build_report(
    schedule: Any,
    title: str | None = None,
    gantt_max_jobs: int = GANTT_MAX_JOBS,
    registry: Any = None,
    node_window: tuple[float, float] | None = None,
    static: bool = False,
    gantt_rows: int = GANTT_WINDOW_JOBS,
    target_bins: int = 600,
    bin_width: float | None = None,
) -> str:
    """The HTML page (a string) for a schedule: a Workload with known waits, or a
    simulation Result. Raises :class:`UsageError` when no job has a known wait.

    A schedule simulated on a platform also gets a node-level Gantt chart and the
    utilization of every resource dimension over time. The interactive page draws
    the node chart for the window selected in the page and opens on
    ``node_window`` when given, with or without a platform; the static page draws a
    PNG of ``node_window`` (default: the first jobs' span, see
    :mod:`schedlab.report_nodes`). ``node_window`` is in seconds since the first
    submission, as the page's time axes and its address ``#window=START:END``; a
    window that does not overlap the schedule is a :class:`UsageError` naming the
    span, one that overlaps it partly is clipped to it.

    By default the charts are drawn with Bokeh (:mod:`schedlab.report_charts`;
    :class:`UsageError` when it is not installed) from embedded data
    (:mod:`schedlab.report_data`): series binned to about ``target_bins`` bins (or
    bins of ``bin_width`` seconds) with zoom and pan, and a Gantt chart of any
    window holding at most ``gantt_rows`` jobs. ``static=True`` writes the
    PNG-only page instead (for papers; no script): there the Gantt chart is drawn
    when the whole schedule has at most ``gantt_max_jobs`` jobs."""
    from .accuracy import class_labels, estimate_accuracy, user_accuracy_classes
    from .measure import compute_metrics
    from .report_data import clock_of

    columns, workload, procs = _columns(schedule)
    ok = timed_jobs(columns)
    if not ok.any():
        raise UsageError(
            _all_excluded(schedule)
            or "the schedule has no job with known submit, wait and run times: simulate the "
            "trace first (schedlab simulate IN -o schedule.swf) or give a recorded trace"
        )
    if node_window is not None:
        node_window = _check_window(node_window, columns)
    report = compute_metrics(schedule, registry=registry, procs=procs)
    title = title or "Schedule report"
    header = workload.header if workload is not None else None
    no_user = int((ok & np.isnan(columns["user_id"])).sum())  # jobs of unknown user
    facts = {
        "jobs": f"{len(columns):,} ({int(ok.sum()):,} with known times)",
        "users": f"{len(np.unique(columns['user_id'][~np.isnan(columns['user_id'])])):,}"
        + (f" (and {_jobs(no_user)} of unknown user)" if no_user else ""),
        "processors": f"{procs:,.0f}" if procs else "unknown",
    }
    if workload is not None:
        for key in ("source", "policy", "backfill"):
            if key in workload.meta and isinstance(workload.meta[key], str):
                facts[key] = workload.meta[key]
        if "source" in facts and os.path.exists(facts["source"]):
            # The file's name, as in the title: the page is the same bytes whatever
            # the current folder, and whether the path given was absolute or not.
            facts["source"] = os.path.basename(os.path.normpath(facts["source"]))
    machine = platform_stats(schedule)
    if machine is not None:
        facts["platform"] = platform_label(machine)
    if header is not None and header.computer:
        # On a platform run the trace's machine is not the one simulated.
        facts["computer" if machine is None else "trace recorded on"] = header.computer
    if not static:
        from .report_charts import require_bokeh

        require_bokeh()
    parts: list[Any] = [
        f"<h1>{html.escape(title)}</h1>",
        "<dl>"
        + "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in facts.items())
        + "</dl>",
        "<h2>Metrics</h2>",
        "<p class='note'>Per-job times in minutes; makespan in hours.</p>",
        _metrics_table(report),
    ]
    parts += [f"<p class='note'>note: {html.escape(n)}</p>" for n in page_notes(schedule, report)]
    if machine is not None and len(machine.get("utilization_by_partition") or {}) > 1:
        parts += ["<h2>Partitions</h2>", _partition_table(schedule, machine, columns)]

    # Accuracy classes of the users (PSP, last 10 jobs by completion time).
    completion = columns["submit_time"] + columns["wait_time"] + columns["run_time"]
    accuracy = estimate_accuracy(columns["run_time"], columns["requested_time"])
    klass = user_accuracy_classes(columns["user_id"], completion, accuracy)

    if static:
        parts.append("<h2>Utilization and queue length over time</h2>")
        parts.append(_img(figure_usage(columns, procs), "utilization and queue length"))
        parts.append("<h2>Wait-time distribution</h2>")
        parts.append(_img(figure_wait_distribution(columns["wait_time"][ok]), "wait distribution"))
    else:
        from .report_charts import window_charts
        from .report_data import page_data

        data = page_data(columns, procs, klass, target_bins=target_bins, bin_width=bin_width)
        nodes = node_schedule(workload) if workload is not None else None
        view = node_window  # seconds since the first submission, as the page's clock
        if nodes is not None:
            data["nodes"] = node_page_data(nodes, ok)
            data["nodes"]["usage"] = dimension_steps(columns, nodes, data["origin"])
            data["nodes"]["shared"] = _shares_nodes(columns, nodes)
        charts = window_charts([(title, data)], procs, gantt_rows, view)
        parts += [
            "<h2>Utilization and queue over time</h2>",
            "<p class='note'>Drag the shaded window on the overview (or its edges) to "
            "pick a window; on a chart, the wheel zooms and dragging pans; the reset "
            "tool shows everything. Queued work is processors × requested time of the "
            "waiting jobs.</p>",
            charts["series"],
            "<h2>Gantt chart of the selected window</h2>",
            "<p class='note'>Hover a job for its times; the chart follows the window "
            "above, and zooming or panning it moves the window.</p>",
            charts["gantt"],
        ]
        if "nodes" in charts:
            parts += [
                "<h2>Nodes over time</h2>",
                f"<p class='note'>{len(data['nodes']['names']):,} nodes, one row each: a "
                "bar per job on every node it held, from its start to its end, coloured "
                "as the Gantt chart above; hover a bar for the job.</p>",
                charts["nodes"],
            ]
        parts += [
            "<h2>Distributions</h2>",
            _DISTRIBUTIONS_NOTE,
            charts["cdf"],
            charts["ready"],
        ]
    labels = class_labels()
    wait_min = columns["wait_time"] / 60.0

    def group_chart(alt: str, *args: Any, **options: Any) -> Any:
        """Bars of mean wait per group (the arguments of
        :func:`figure_wait_by_group`): a PNG image, or a Bokeh chart named after
        ``alt``."""
        if static:
            return _img(figure_wait_by_group(*args, **options), alt)
        from .report_charts import bar_chart

        options.pop("width", None)
        return bar_chart(*args, **options, name=alt.replace(" ", "-"))

    users = columns["user_id"]
    known = ok & ~np.isnan(users)
    unknown = ok & np.isnan(users)  # one bar "unknown" (they may be several users)
    if known.any():
        ids, inverse = np.unique(users[known], return_inverse=True)
        counts = np.bincount(inverse)
        means = np.bincount(inverse, weights=wait_min[known]) / counts
        user_class = np.zeros(len(ids), dtype=int)
        user_class[inverse] = klass[known]
        shown = np.argsort(-counts, kind="stable")[:MAX_USERS_SHOWN]
        shown = np.sort(shown)
        colours = [CLASS_COLOURS[k - 1] if k else _UNKNOWN_COLOUR for k in user_class[shown]]
        present = sorted({int(k) for k in user_class[shown] if k})
        bar_labels = [str(int(u)) if float(u).is_integer() else str(u) for u in ids[shown]]
        bar_means = means[shown].tolist()
        if unknown.any():
            bar_labels.append("unknown")
            bar_means.append(float(wait_min[unknown].mean()))
            colours.append(_UNKNOWN_COLOUR)
        note = (
            ""
            if len(ids) <= MAX_USERS_SHOWN
            else (f" (the {MAX_USERS_SHOWN} users with most jobs of {len(ids)})")
        )
        parts.append(f"<h2>Mean wait per user{note}</h2>")
        if unknown.any():
            parts.append(
                f"<p class='note'>The bar “unknown”: the {_jobs(no_user)} of unknown "
                "user, together (they may be several users).</p>"
            )
        parts.append(
            group_chart(
                "mean wait per user",
                bar_labels,
                bar_means,
                colours,
                "User",
                legend=[(labels[k - 1], CLASS_COLOURS[k - 1]) for k in present],
                width=PAGE_WIDTH * 0.75,
            )
        )
    elif unknown.any():
        parts.append("<h2>Mean wait per user</h2>")
        parts.append(
            f"<p class='note'>No chart: the user of every job is unknown ({_jobs(no_user)}).</p>"
        )

    queues = columns["queue_number"]
    in_queue = ok & ~np.isnan(queues)
    if in_queue.any() and len(np.unique(queues[in_queue])) > 1:
        qids, qinverse = np.unique(queues[in_queue], return_inverse=True)
        qcounts = np.bincount(qinverse)
        qmeans = np.bincount(qinverse, weights=wait_min[in_queue]) / qcounts
        # capped like the users: the queues with most jobs, in queue order
        qshown = np.sort(np.argsort(-qcounts, kind="stable")[:MAX_USERS_SHOWN])
        qnote = (
            ""
            if len(qids) <= MAX_USERS_SHOWN
            else f" (the {MAX_USERS_SHOWN} queues with most jobs of {len(qids)})"
        )
        queue_names = header.names("Queue") if header is not None else {}
        parts.append(f"<h2>Mean wait per queue{qnote}</h2>")
        parts.append(
            group_chart(
                "mean wait per queue",
                [_queue_label(q, queue_names) for q in qids[qshown]],
                qmeans[qshown].tolist(),
                ["#b5367a"] * len(qshown),
                "Queue",
                annotations=[f"{int(n):,} job" + ("" if n == 1 else "s") for n in qcounts[qshown]],
            )
        )

    if (klass[ok] > 0).any():
        rows = []
        for k, label in enumerate(labels, start=1):
            mask = ok & (klass == k)
            if mask.any():
                n_users = len(np.unique(users[mask]))
                rows.append(
                    (
                        label,
                        float(wait_min[mask].mean()),
                        CLASS_COLOURS[k - 1],
                        f"{n_users} user{'s' if n_users != 1 else ''}",
                    )
                )
        mask = ok & (klass == 0)  # users of no usable job, and jobs of unknown user
        if mask.any():
            n_users = len(np.unique(users[mask & ~np.isnan(users)]))
            said = [f"{n_users} user{'s' if n_users != 1 else ''}"] if n_users else []
            if (mask & unknown).any():  # short above the bar; the note above says more
                said.append(_jobs(int((mask & unknown).sum())))
            rows.append(
                ("unknown", float(wait_min[mask].mean()), _UNKNOWN_COLOUR, " + ".join(said))
            )
        parts.append("<h2>Mean wait per accuracy class</h2>")
        parts.append(
            "<p class='note'>Each user is in the PSP class of the mean accuracy (run time / "
            "requested time) of their last 10 jobs by completion time; the mean is over "
            "the jobs of the class. “unknown”: users without a job of known accuracy, "
            "and jobs of unknown user (as <code>schedlab metrics --by accuracy-class</code>"
            ")" + (f", here {_jobs(no_user)} of unknown user" if no_user else "") + ".</p>"
        )
        parts.append(
            group_chart(
                "mean wait per accuracy class",
                [r[0] for r in rows],
                [r[1] for r in rows],
                [r[2] for r in rows],
                "Accuracy class",
                annotations=[r[3] for r in rows],
            )
        )

    n_timed = int(ok.sum())
    if not static:
        pass  # the window's Gantt chart is above
    elif n_timed <= gantt_max_jobs:
        parts.append("<h2>Gantt chart</h2>")
        parts.append(_img(figure_gantt(columns), "Gantt chart"))
    else:
        parts.append("<h2>Gantt chart</h2>")
        parts.append(
            f"<p class='note'>{n_timed:,} jobs: too many to draw one row per job (the "
            f"chart is drawn up to {gantt_max_jobs} jobs).</p>"
        )
    nodes = node_schedule(workload) if workload is not None else None
    if static and node_window is not None and nodes is None:
        raise UsageError(
            "--window with --static draws the node Gantt chart of a platform run "
            "(--simulate with --platform); the interactive page opens on any window"
        )
    if nodes is not None:
        if static:
            origin = clock_of(columns)[0]
            window = (
                (node_window[0] + origin, node_window[1] + origin)
                if node_window is not None
                else default_window(columns)
            )
            parts.append("<h2>Nodes over time</h2>")
            parts.append(
                f"<p class='note'>{len(nodes['nodes']):,} nodes from {window[0] - origin:,.0f} s "
                f"to {window[1] - origin:,.0f} s since the first submission: one bar per job "
                "on every node it held.</p>"
            )
            parts.append(
                _img(_png(figure_node_gantt(columns, nodes, window, origin)), "node Gantt chart")
            )
        parts.append("<h2>Utilization per resource</h2>")
        if static:
            parts.append(
                _img(_png(figure_dimension_usage(columns, nodes)), "utilization per resource")
            )
        else:
            parts.append(charts["resources"])
    parts.append("<p class='note'>Made by schedlab.</p>")
    if not static:
        from .report_charts import render_page

        return render_page(title, STYLE, parts)
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>",
    ]
    return "\n".join([*head, *parts, "</body></html>"]) + "\n"


def build_comparison(
    schedules: Sequence[tuple[str, Any]],
    title: str | None = None,
    registry: Any = None,
    gantt_rows: int = GANTT_WINDOW_JOBS,
    target_bins: int = 600,
    bin_width: float | None = None,
    significance: Any = None,
) -> str:
    """One page comparing several schedules ``(label, schedule)``: their facts and
    metrics side by side, their series and CDFs overlaid (one colour each, on one
    clock: from the earliest first submission to the latest end) and the Gantt
    chart of a window for the schedule picked in the page. Schedules of different
    machine sizes are allowed: their sizes are listed, and utilization is drawn in
    % of each one's own machine when every size is known (busy processors
    otherwise). Raises :class:`UsageError` for an empty list or a schedule without
    known waits (naming its label).

    ``significance`` (a :class:`schedlab.significance.Significance` of these
    schedules, e.g. ``block_significance(dict(schedules))``) adds its tables and
    its figure: means with confidence intervals and the per-window ranking."""
    from .accuracy import estimate_accuracy, user_accuracy_classes
    from .measure import compute_metrics, excluded_jobs, metrics_left_out
    from .report_data import clock_of, page_data

    if not schedules:
        raise UsageError("report: no schedule to compare")
    loaded = []
    for label, schedule in schedules:
        columns, _, procs = _columns(schedule)
        if not timed_jobs(columns).any():
            raise UsageError(
                f"{label}: "
                + (
                    _all_excluded(schedule)
                    or "the schedule has no job with known submit, wait and run times: "
                    "simulate the trace first (schedlab simulate IN -o schedule.swf)"
                )
            )
        loaded.append((label, schedule, columns, procs))
    clocks = [clock_of(columns) for _, _, columns, _ in loaded]
    clock = (min(c[0] for c in clocks), max(c[1] for c in clocks))
    all_sizes = all(procs for *_, procs in loaded)
    with metrics_left_out():  # a failing default metric: one warning for all the schedules
        reports = [compute_metrics(s, registry=registry, procs=p) for _, s, _, p in loaded]
    datas = []
    for label, _, columns, procs in loaded:
        completion = columns["submit_time"] + columns["wait_time"] + columns["run_time"]
        accuracy = estimate_accuracy(columns["run_time"], columns["requested_time"])
        klass = user_accuracy_classes(columns["user_id"], completion, accuracy)
        data = page_data(
            columns,
            procs if all_sizes else None,
            klass,
            target_bins=target_bins,
            bin_width=bin_width,
            clock=clock,
        )
        datas.append((label, data))
    title = title or "Schedule comparison"
    head = "".join(
        f"<th style='color:{SCHEDULE_COLOURS[i % len(SCHEDULE_COLOURS)]}'>{html.escape(label)}</th>"
        for i, (label, *_) in enumerate(loaded)
    )
    rows = [
        "<tr><td>jobs</td><td></td>"
        + "".join(f"<td>{int(timed_jobs(c).sum()):,}</td>" for _, _, c, _ in loaded)
        + "</tr>",
        "<tr><td>processors</td><td></td>"
        + "".join(f"<td>{p:,.0f}</td>" if p else "<td>unknown</td>" for *_, p in loaded)
        + "</tr>",
        "<tr><td title='jobs the simulation left out: not in the schedule, so in no "
        "metric (- for a schedule no simulation made)'>excluded</td><td></td>"
        + "".join(f"<td>{_number(excluded_jobs(s))}</td>" for _, s, _, _ in loaded)
        + "</tr>",
    ]
    rows += _partition_rows([s for _, s, _, _ in loaded])
    for info in reports[0].metrics:
        if info.per_job:
            scale, unit = (60.0, "min") if info.unit == "s" else (1.0, info.unit)
            cells = [_number((r.rows[0].get(info.name) or {}).get("mean"), scale) for r in reports]
            name = f"{info.name} (mean)"
        else:
            scale, unit = (3600.0, "h") if info.unit == "s" else (1.0, info.unit)
            cells = [_number(r.rows[0].get(info.name), scale) for r in reports]
            name = info.name
        rows.append(
            f"<tr><td title='{html.escape(info.description)}'>{html.escape(name)}</td>"
            f"<td>{html.escape(unit)}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"
        )
    from .report_charts import legend_html, render_page, require_bokeh, window_charts

    require_bokeh()
    charts = window_charts(datas, 1.0 if all_sizes else None, gantt_rows)
    legend = legend_html([label for label, _ in datas])
    parts = [
        f"<h1>{html.escape(title)}</h1>",
        "<h2>Metrics</h2>",
        "<p class='note'>Per-job metrics: the mean (times in minutes); makespan in hours.</p>",
        f"<table><thead><tr><th>metric</th><th>unit</th>{head}</tr></thead><tbody>",
        *rows,
        "</tbody></table>",
        *_comparison_notes(
            [label for label, *_ in loaded],
            [page_notes(s, r) for (_, s, _, _), r in zip(loaded, reports, strict=True)],
        ),
        _significance_section(significance),
        "<h2>Utilization and queue over time</h2>",
        "<p class='note'>One colour per schedule: the line is the mean per bin, the "
        "band the maximum. Drag the shaded window on the overview (the first "
        "schedule's utilization) to pick a window; on a chart, the wheel zooms and "
        "dragging pans.</p>",
        legend,
        charts["series"],
        "<h2>Gantt chart of the selected window</h2>",
        "<p class='note'>The schedule picked below; hover a job for its times.</p>",
        charts["gantt"],
        "<h2>Distributions</h2>",
        legend,
        _DISTRIBUTIONS_NOTE,
        charts["cdf"],
        charts["ready"],
        "<p class='note'>Made by schedlab.</p>",
    ]
    return render_page(title, STYLE, parts)


def platform_stats(schedule: Any) -> dict[str, Any] | None:
    """A simulation Result's ``stats["platform"]`` (the platform's name, size and
    per-partition figures, as ``schedlab simulate`` prints them), or None for a
    schedule without (a Workload, or a run without a platform)."""
    if isinstance(schedule, Workload):
        return None
    stats = getattr(schedule, "stats", None)
    machine = stats.get("platform") if isinstance(stats, dict) else None
    return machine if isinstance(machine, dict) and machine else None


def platform_label(machine: dict[str, Any]) -> str:
    """``"NAME (N nodes, C cores)"`` of :func:`platform_stats` (the size alone for a
    platform without a name)."""
    size = f"{int(machine['nodes']):,} nodes, {int(machine['cores']):,} cores"
    name = machine.get("name")
    return f"{name} ({size})" if name else size


#: Queue names listed per partition in the page's table, at most.
_QUEUES_LISTED = 6


def _partition_table(schedule: Any, machine: dict[str, Any], columns: JobColumns) -> str:
    """The page's table of a multi-partition run: per partition (the platform's
    order) its jobs, the core-time its own jobs held over its nodes' core-time in
    the run's span
    and their mean wait (``schedlab simulate``'s rows), and the queues of its jobs."""
    workload = getattr(schedule, "workload", None)
    placed = list(getattr(workload, "meta", {}).get("partitions") or [])
    header = getattr(workload, "header", None)
    names = header.names("Queue") if header is not None else {}
    queues = columns["queue_number"]
    held = machine["utilization_by_partition"]
    waits = machine.get("mean_wait_by_partition") or {}
    rows = []
    for name, share in held.items():
        mine = [i for i, p in enumerate(placed) if p == name]
        found = sorted({float(q) for q in queues[mine] if not np.isnan(q)})
        listed = [_queue_label(q, names) for q in found[:_QUEUES_LISTED]]
        if len(found) > _QUEUES_LISTED:
            listed.append(f"… ({len(found):,} queues)")
        wait = waits.get(name)
        cells = [
            name,
            f"{len(mine):,}",
            "-" if share is None else f"{share:.3f}",
            "-" if wait is None else f"{wait / 60:,.1f}",
            ", ".join(listed) or "-",
        ]
        rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return (
        "<p class='note'>Per partition, as <code>schedlab simulate</code> prints it: "
        "cores held by its jobs is the core-time held by the jobs placed in the partition "
        "over its nodes' core-time in the run's span (first submission to last end; the "
        "jobs of other partitions sharing its nodes are not counted); the mean wait is "
        "over its jobs (minutes).</p>"
        "<table class='partitions'><thead><tr><th>partition</th><th>jobs</th>"
        "<th>cores held by its jobs</th><th>mean wait (min)</th><th>queues of its jobs</th></tr>"
        "</thead><tbody>" + "".join(rows) + "</tbody></table>"
    )


def _partition_rows(schedules: Sequence[Any]) -> list[str]:
    """The comparison table's rows of platform runs: the platform (name and size)
    and, for several partitions, the cores each one's jobs held (share of its
    nodes' core-time) and
    mean wait (min), as ``schedlab simulate`` prints them; none without a platform."""
    machines = [platform_stats(s) for s in schedules]
    if not any(machines):
        return []
    rows = [
        "<tr><td>platform</td><td></td>"
        + "".join(f"<td>{html.escape(platform_label(m)) if m else '-'}</td>" for m in machines)
        + "</tr>"
    ]
    names: list[str] = []
    for m in machines:
        for name in (m or {}).get("utilization_by_partition") or {}:
            if name not in names:
                names.append(name)
    if len(names) < 2:
        return rows
    for name in names:
        held = [(m or {}).get("utilization_by_partition", {}).get(name) for m in machines]
        wait = [((m or {}).get("mean_wait_by_partition") or {}).get(name) for m in machines]
        label = html.escape(f"partition {name}")
        rows.append(
            f"<tr><td title='core-time held by the jobs placed in the partition over its "
            f"nodes&#39; core-time in the run&#39;s span (jobs of other partitions on its "
            f"nodes not counted)'>{label}: cores held by its jobs</td><td>share</td>"
            + "".join(f"<td>{'-' if v is None else f'{v:.3f}'}</td>" for v in held)
            + "</tr>"
        )
        rows.append(
            f"<tr><td>{label}: mean wait</td><td>min</td>"
            + "".join(f"<td>{'-' if v is None else f'{v / 60:,.1f}'}</td>" for v in wait)
            + "</tr>"
        )
    return rows


def _queue_label(queue: float, names: dict[int, str]) -> str:
    """A queue as the page labels it: its number and the header's name for it
    (``"2 beta"``), or the number alone."""
    text = str(int(queue)) if float(queue).is_integer() else str(queue)
    name = names.get(int(queue)) if float(queue).is_integer() else None
    return f"{text} {name}" if name and name != text else text


def _comparison_notes(labels: Sequence[str], notes: Sequence[Sequence[str]]) -> list[str]:
    """Each distinct note of the schedules (:func:`page_notes`), once, naming the
    schedules it concerns (as ``schedlab compare`` prints them), in order of first
    appearance."""
    seen: dict[str, list[str]] = {}
    for label, its_notes in zip(labels, notes, strict=True):
        for note in its_notes:
            concerned = seen.setdefault(note, [])
            if label not in concerned:
                concerned.append(label)
    return [
        f"<p class='note'>note ({html.escape(', '.join(concerned))}): {html.escape(note)}</p>"
        for note, concerned in seen.items()
    ]


def _exclusion_reasons(schedule: Any) -> str | None:
    """The reasons the simulation that made ``schedule`` excluded jobs
    (``"larger_than_machine=1"``): a simulation Result's counts, or the header
    ``Note`` of a schedule file written by ``schedlab simulate``; None without."""
    stats = getattr(schedule, "stats", None)
    if not isinstance(schedule, Workload) and isinstance(stats, dict):
        counts = stats.get("excluded")
        if isinstance(counts, dict):
            return ", ".join(f"{k}={v}" for k, v in counts.items() if v) or None
    workload = schedule if isinstance(schedule, Workload) else getattr(schedule, "workload", None)
    header = getattr(workload, "header", None)
    if header is None or not any(
        str(n).startswith("schedlab excluded ") for n in header.get_all("Note")
    ):
        return None
    from .sim.output import excluded_note

    found = excluded_note(header)
    return found[1] if found is not None else None


def _all_excluded(schedule: Any) -> str | None:
    """The error for a schedule without a job because its simulation excluded them
    all (``"the simulation excluded all 3 jobs (no_size=3): ..."``), or None."""
    from .measure import excluded_jobs

    excluded = excluded_jobs(schedule)
    if not excluded:
        return None
    reasons = _exclusion_reasons(schedule)
    return (
        f"the simulation excluded all {excluded:,} job{'s' if excluded != 1 else ''}"
        + (f" ({reasons})" if reasons else "")
        + ": no job left to report on"
    )


#: The end of the metrics' note on negative values, and its words on a page, whose
#: charts leave such values out too (:func:`_as_measured`).
_NEGATIVE_NOTE_END = "treated as unknown, so left out of the metrics that need it"
_NEGATIVE_NOTE_PAGE = "treated as unknown, so left out of the metrics and the charts that need it"


def page_notes(schedule: Any, report: Any) -> list[str]:
    """The notes a page shows for one schedule, as ``schedlab simulate`` prints
    them: a simulation Result's notes (:func:`schedlab.comparison.simulation_notes`:
    its components' own, estimates that fell back, a platform run's counts) and,
    on a platform, the cores the jobs held when the metrics count otherwise
    (:func:`schedlab.comparison.held_note`), then the metric report's notes, the
    jobs the simulation excluded with their reasons, then the jobs left out of the
    charts' series for an unknown size or requested time (:func:`schedlab.report_data.left_out`)."""
    from .report_data import left_out

    notes: list[str] = []
    if not isinstance(schedule, Workload) and isinstance(getattr(schedule, "stats", None), dict):
        from .comparison import held_note, simulation_notes

        notes += simulation_notes(schedule)
        held = held_note(schedule, report)  # processors asked (metrics), cores held
        if held:
            notes.append(held)
    reasons = _exclusion_reasons(schedule)
    for note in report.notes:
        if reasons and "excluded by the simulator " in note and "(" not in note:
            note = note.replace(
                "excluded by the simulator ", f"excluded by the simulator ({reasons}) ", 1
            )
        if note.endswith(_NEGATIVE_NOTE_END):  # the page leaves them out the same way
            note = note[: -len(_NEGATIVE_NOTE_END)] + _NEGATIVE_NOTE_PAGE
        if note not in notes:  # a simulation's skipped-records note is the metrics' too
            notes.append(note)
    columns = _columns(schedule)[0]
    out = left_out(columns)
    if out["size"]:
        n = out["size"]
        notes.append(
            f"{n:,} job{'s' if n != 1 else ''} with unknown processors "
            f"{'are' if n != 1 else 'is'} left out of the utilization (busy processors) "
            "and queued-work series (their size shows as unknown)"
        )
    if out["requested"]:
        n = out["requested"]
        notes.append(
            f"{n:,} job{'s' if n != 1 else ''} with unknown requested time "
            f"{'are' if n != 1 else 'is'} left out of the queued-work series "
            "(processors × requested time)"
        )
    return notes


def _check_window(window: tuple[float, float], columns: JobColumns) -> tuple[float, float]:
    """``window`` (seconds since the first submission) clipped to the schedule's
    span; a :class:`UsageError` naming the span when it does not overlap it."""
    from .report_data import clock_of

    origin, stop = clock_of(columns)
    span = max(stop - origin, 1.0)
    start, end = float(window[0]), float(window[1])
    if not (end > 0 and start < span):
        raise UsageError(
            f"--window {start:g}:{end:g}: outside the schedule, which spans 0 to "
            f"{span:,.0f} s (seconds since its first submission, as the page's time axes)"
        )
    return max(start, 0.0), min(end, span)


def _significance_section(significance: Any) -> str:
    """Intervals, paired tests and rank stability (issue 22) as HTML tables and the
    figure, or nothing."""
    if significance is None:
        return ""
    from .significance import significance_figure

    parts = [
        "<h2>Is the difference real?</h2>",
        "<p class='note'>Block bootstrap over time windows of each schedule's jobs "
        "(docs/metrics.md); paired Wilcoxon tests over the blocks with Holm's "
        "correction.</p>",
    ]
    from rich.table import Table

    for table in significance.tables():
        if isinstance(table, Table):  # the notes come below, as notes
            parts.append(_rich_table_html(table))
    parts.append(_img(_png(significance_figure(significance)), "means with intervals and ranks"))
    parts += [f"<p class='note'>note: {html.escape(n)}</p>" for n in significance.notes]
    return "\n".join(parts)


def _rich_table_html(table: Any) -> str:
    """A rich Table as a plain HTML table (its title, headers and cells as text,
    console markup removed)."""
    from rich.text import Text

    def plain(value: Any) -> str:
        return value.plain if isinstance(value, Text) else Text.from_markup(str(value)).plain

    head = "".join(f"<th>{html.escape(plain(c.header))}</th>" for c in table.columns)
    cells = [[plain(v) for v in c.cells] for c in table.columns]
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(col[i])}</td>" for col in cells) + "</tr>"
        for i in range(table.row_count)
    )
    title = f"<h3>{html.escape(plain(table.title))}</h3>" if table.title else ""
    return f"{title}<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def write_report(schedule: Any, path: str | Path, **options: Any) -> Path:
    """Build the report and write it atomically to ``path``; ``schedule`` may be a
    list of ``(label, schedule)`` pairs: a comparison page
    (:func:`build_comparison`). The caller's matplotlib style is left as it
    was."""
    from .experiment.sweep import write_atomic
    from .plotting import kept_style

    path = Path(path)
    with kept_style():
        if isinstance(schedule, list):
            text = build_comparison(schedule, **options)
        else:
            text = build_report(schedule, **options)
    write_atomic(path, text)
    return path
