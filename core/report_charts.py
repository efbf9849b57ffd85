"""The interactive report page, drawn with Bokeh (the ``report`` extra).

:mod:`schedlab.report` writes the page's HTML (facts, metrics tables, headings);
this module draws its charts as Bokeh models and renders the whole page with
Bokeh's JavaScript inline (no network request when the page is opened):

- the time series (:func:`schedlab.report_data.page_data`: per bin the mean as a
  step line and the maximum as a band) on one shared time axis, with an overview
  whose range tool selects the window; zoom and pan on any chart move the window
  of every chart;
- the Gantt chart of the jobs in the window and, for platform runs, the node
  Gantt chart (one row per node), with hover;
- the CDFs of wait and bounded slowdown on log axes and the bars per user, queue
  and accuracy class.

Bokeh draws everything; one small script of the page's own
(``templates/report/window.js``, run by a :class:`bokeh.models.CustomJS`) reacts to
the window: it picks the finest embedded resolution with at most one bin per
pixel and swaps the series' data source to it, rescales their value axes, and
fills the Gantt charts' sources with the jobs of the window from the embedded job
table (up to a row cap: a wider window asks for a narrower one).

Bokeh is imported only when a page is written (:func:`require_bokeh` turns its
absence into a one-line error that names the extra and ``--static``).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import UsageError

#: One colour per schedule of a comparison page.
SCHEDULE_COLOURS = ("#3b528b", "#e07b00", "#21918c", "#b5367a", "#7f7f7f", "#8c564b")
#: Colours of the PSP accuracy classes 1..5 (0: unknown).
CLASS_COLOURS = ("#fde725", "#5ec962", "#21918c", "#3b528b", "#440154")
#: Colour of a job's wait in the Gantt chart ("pink: waiting").
_WAITING_COLOUR = "#f3c1d9"
#: Job colours by user or queue code (cycled): tab10 and two more, without its
#: pink (#e377c2), which read as the waiting colour.
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939",
)  # fmt: skip
#: Job colours by size class (log2 of the processors / 1.5, at most 7).
SIZE_COLOURS = (
    "#440154", "#46327e", "#365c8d", "#277f8e", "#1fa187", "#4ac16d", "#a0da39", "#fde725",
)  # fmt: skip
#: Width (px) of the charts that follow the window.
WIDTH = 920
DAY = 86400.0

INSTALL_HINT = (
    "the interactive report is drawn with Bokeh, which is not installed: "
    "pip install 'schedlab[report]', or write a page of images with --static"
)


def require_bokeh() -> None:
    """Raise :class:`UsageError` (one line: the extra to install, or ``--static``)
    when Bokeh cannot be imported."""
    try:
        import bokeh  # noqa: F401
    except ImportError:
        raise UsageError(INSTALL_HINT) from None


def _script(name: str) -> str:
    from importlib.resources import files

    return (files("schedlab") / "templates" / "report" / name).read_text("utf-8")


def _level_source(level: dict[str, Any], names: Sequence[str], name: str) -> Any:
    """One resolution as a data source: ``x`` (days, one more than the bins: the
    step's end) and ``NAME_mean`` / ``NAME_max`` per series (the last bin
    repeated)."""
    from bokeh.models import ColumnDataSource

    width, count = level["w"], level["n"]
    data: dict[str, Any] = {"x": np.arange(count + 1, dtype=np.float64) * (width / DAY)}
    for series in names:
        mean, maximum = level[series]
        data[f"{series}_mean"] = np.r_[mean, mean[-1:]].astype(np.float32)
        data[f"{series}_max"] = np.r_[maximum, maximum[-1:]].astype(np.float32)
    return ColumnDataSource(data, name=name)


def _figure(**options: Any) -> Any:
    from bokeh.plotting import figure

    options.setdefault("width", WIDTH)
    options.setdefault("toolbar_location", "right")
    fig = figure(**options)
    fig.toolbar.logo = None
    fig.xgrid.grid_line_color = "#eeeeee"
    fig.ygrid.grid_line_color = "#eeeeee"
    return fig


def _window_figure(
    name: str, x_range: Any, bottom: float, top: float, height: int, label: str
) -> Any:
    """A chart on the shared time axis ``x_range`` (days): the wheel zooms it and
    dragging pans it, which moves the window of every chart."""
    from bokeh.models import Range1d

    fig = _figure(
        height=height,
        x_range=x_range,
        y_range=Range1d(start=bottom, end=top),
        tools="xpan,xwheel_zoom,box_zoom,reset,save",
        active_scroll="xwheel_zoom",
        active_drag="xpan",
        name=name,
    )
    fig.min_border_left = 70
    fig.yaxis.axis_label = label
    fig.xaxis.axis_label = "time since first submission (days)"
    _clock_axis(fig)
    return fig


#: Tick labels of the time axis (days): whole days, or ``Nd HH:MM`` once the ticks
#: are less than a day apart, ``Nd HH:MM:SS`` when they are not whole minutes apart
#: (2.5 min, 20 s ...), with the decimals of a second the step needs when it is not
#: whole seconds (``Nd HH:MM:SS.125`` on a span of a second), so that no label is
#: rounded away from its tick and no two ticks share a label.
_CLOCK_LABELS = """
const step = ticks.length > 1 ? ticks[1] - ticks[0] : 1;
if (step >= 1) return String(Math.round(tick));
const sec = step * 86400;
const whole = Math.abs(sec / 60 - Math.round(sec / 60)) < 1e-6;
let dec = 0;  // decimals of a second the step needs (up to microseconds)
while (dec < 6 && Math.abs(sec * 10 ** dec - Math.round(sec * 10 ** dec)) > 1e-6) dec++;
const q = 10 ** dec, u = Math.round(tick * 86400 * q), s = Math.floor(u / q);
const d = Math.floor(s / 86400), r = s - d * 86400;
const two = (n) => (n < 10 ? "0" : "") + n;
const hm = d + "d " + two(Math.floor(r / 3600)) + ":" + two(Math.floor(r / 60) % 60);
if (whole) return hm;
return hm + ":" + two(r % 60) + (dec ? "." + String(u - s * q).padStart(dec, "0") : "");
"""


def _clock_axis(fig: Any) -> None:
    """Ticks of a time axis in days at clock-friendly steps: 1, 2, 5, 10 ... days,
    below a day 2.5, 5, 7.5, 15, 30 min, 1, 2, 3, 6, 12 h (powers of 24 days times
    1, 2, 3, 6, 12), below that 1, 2, 5, 10, 15, 30 s and 0.5, 0.2, 0.1 ... s down to
    a millisecond (a schedule of one instant spans a second), labelled by
    :data:`_CLOCK_LABELS`."""
    from bokeh.models import AdaptiveTicker, CompositeTicker, CustomJSTickFormatter

    second = 1.0 / DAY
    fig.xaxis.ticker = CompositeTicker(
        tickers=[
            # BokehJS scales an AdaptiveTicker's magnitudes by its min_interval: 1 ms
            # and 1 s here (powers of 10 and 60 of them), 24**-2 days (2.5 min, a
            # power of 24) below.
            AdaptiveTicker(
                base=10, mantissas=[1, 2, 5], min_interval=0.001 * second,
                max_interval=0.5 * second,
            ),
            AdaptiveTicker(
                base=60, mantissas=[1, 2, 5, 10, 15, 30], min_interval=second,
                max_interval=60 * second,
            ),
            AdaptiveTicker(
                base=24, mantissas=[1, 2, 3, 6, 12], min_interval=24.0**-2, max_interval=0.5
            ),
            AdaptiveTicker(base=10, mantissas=[1, 2, 5], min_interval=1),
        ]
    )  # fmt: skip
    fig.xaxis.formatter = CustomJSTickFormatter(code=_CLOCK_LABELS)


#: The information lines above and below the charts: a fixed height, so that a
#: change of their text never changes the page's layout while Bokeh lays it out
#: (a browser then logs "ResizeObserver loop completed ...").
_INFO_STYLE: dict[str, str | None] = {
    "font-size": "0.85rem",
    "height": "2.6em",
    "overflow": "hidden",
}

#: The note above the node Gantt chart.
SHARED_NODE_NOTE = (
    "On a shared node, jobs that run together "
    "are drawn on the same row, the later one over the earlier: hover a bar to list "
    "every job on the node at that time."
)

#: Legend labels longer than this are shortened in the middle (the full label is
#: in the page's table and headings).
LABEL_CHARS = 48


def short_label(label: str, limit: int = LABEL_CHARS) -> str:
    """``label`` shortened to ``limit`` characters by an ellipsis in its middle
    (both ends of a file name tell files apart)."""
    if len(label) <= limit:
        return label
    keep = limit - 1
    return label[: (keep + 1) // 2] + "…" + label[len(label) - keep // 2 :]


def size_classes() -> list[str]:
    """The labels of the Gantt chart's size colours, as the page computes them
    (``floor(log2(processors) / 1.5)``, at most 7): ``1-2``, ``3-7``, ``8-22`` ...,
    the last open-ended."""
    import math

    first: list[int] = []
    for p in range(1, 1 << 14):
        k = min(7, math.floor(math.log2(p) / 1.5))
        if k == len(first):
            first.append(p)
    out = []
    for k, lo in enumerate(first):
        hi = first[k + 1] - 1 if k + 1 < len(first) else None
        out.append(f"{lo:,}+" if hi is None else (f"{lo:,}" if hi == lo else f"{lo:,}-{hi:,}"))
    return out


def _swatches(items: Sequence[tuple[str, str]]) -> str:
    return " ".join(
        f"<span style='color:{colour}'>■</span>&nbsp;{html.escape(label)}"
        for label, colour in items
    )


def _colour_key(colour_by: Any) -> Any:
    """A one-line key of the Gantt chart's job colours, for each choice of
    ``colour_by`` (switched by a small script of its own)."""
    from bokeh.models import CustomJS
    from bokeh.models.widgets import Div

    from .accuracy import class_labels

    keys = {
        "user": f"colour: user ({len(PALETTE)} colours, repeated; grey: unknown); hover a bar "
        "for its user",
        "queue": f"colour: queue ({len(PALETTE)} colours, repeated; grey: unknown)",
        "size": "processors: " + _swatches(list(zip(size_classes(), SIZE_COLOURS, strict=True))),
        "class": "accuracy class: "
        + _swatches([*zip(class_labels(), CLASS_COLOURS, strict=True), ("unknown", "#bbbbbb")]),
    }
    key = Div(
        text=keys[colour_by.value],
        name="colour-key",
        styles={"font-size": "0.8rem", "margin-top": "1.6em", "max-width": "640px"},
    )
    colour_by.js_on_change(
        "value", CustomJS(args={"key": key, "keys": keys}, code="key.text = keys[cb_obj.value];")
    )
    return key


def _binned_steps(
    times: np.ndarray, level: np.ndarray, width: float, count: int, span: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The mean (time-weighted) and the maximum per bin of ``width`` seconds
    (``count`` bins from 0) of the step function that is ``level[i]`` from
    ``times[i]`` on (0 before the first): the series' own binning
    (:func:`schedlab.report_data.bin_step`), so the last bin is averaged over the
    part before ``span`` (seconds) when given, as the series' last bin is."""
    from .report_data import bin_step

    return bin_step(
        np.asarray(times, dtype=np.float64),
        np.asarray(level, dtype=np.float64),
        0.0,
        float(width),
        count,
        stop=span,
    )


def _resources_chart(first: dict[str, Any], x_range: Any) -> Any:
    """Utilization per resource dimension (what the jobs' nodes hold: on exclusive
    nodes every core of a node a job holds), binned like the series (mean line,
    maximum band) at the same widths, the finest with at most one bin per pixel."""
    from bokeh.models import ColumnDataSource, CustomJS

    usage = _window_figure("resources", x_range, 0, 105, 250, "Held by jobs (% of each resource)")
    widths = [float(level["w"]) for level in first["levels"]]
    counts = [int(level["n"]) for level in first["levels"]]
    dims = list(first["nodes"]["usage"].items())
    levels: list[Any] = []
    for width, count in zip(widths, counts, strict=True):
        data: dict[str, Any] = {"x": np.arange(count + 1, dtype=np.float64) * (width / DAY)}
        for d, (_, (times, level)) in enumerate(dims):
            mean, top = _binned_steps(
                np.asarray(times), np.asarray(level), width, count, float(first["span"])
            )
            data[f"mean{d}"] = np.r_[mean, mean[-1:]].astype(np.float32)
            data[f"max{d}"] = np.r_[top, top[-1:]].astype(np.float32)
        levels.append(ColumnDataSource(data, name=f"resources-level-{len(levels)}"))
    shown = ColumnDataSource(dict(levels[0].data), name="resources", tags=[0])
    lines = []
    for d, (dim, _) in enumerate(dims):
        colour = PALETTE[d % len(PALETTE)]
        usage.varea_step(
            x="x", y1=0, y2=f"max{d}", step_mode="after", source=shown, fill_color=colour,
            fill_alpha=0.2,
        )  # fmt: skip
        line = usage.step(
            x="x", y=f"mean{d}", mode="after", source=shown, line_color=colour, line_width=1.2
        )
        lines.append((dim, [line]))
    if lines:
        _legend(usage, lines, "above", orientation="horizontal", location="top_left")
    swap = CustomJS(
        args={"x_range": x_range, "fig": usage, "levels": levels, "shown": shown,
              "widths": widths},
        code=_SWAP_LEVEL,
    )  # fmt: skip
    x_range.js_on_change("start", swap)
    x_range.js_on_change("end", swap)
    return usage


#: Picks the resolution of the resources chart as ``window.js`` does for the series.
_SWAP_LEVEL = """
const a = x_range.start * 86400, b = x_range.end * 86400;
const pixels = fig.inner_width > 0 ? fig.inner_width : fig.width - 90;
let li = 0;
for (let i = 0; i < widths.length; i++) if ((b - a) / widths[i] <= pixels) li = i;
if (shown.tags[0] !== li) { shown.tags = [li]; shown.data = levels[li].data; }
"""


def _job_source(data: dict[str, Any], name: str) -> Any:
    from bokeh.models import ColumnDataSource

    columns = dict(data["jobs"])
    if "nodes" in data:
        columns["nodes"] = data["nodes"]["count"]
    return ColumnDataSource(columns, name=name)


def window_charts(
    schedules: Sequence[tuple[str, dict[str, Any]]],
    procs: float | None,
    gantt_rows: int,
    view: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """The charts that follow the window, as Bokeh layouts by section: ``series``
    (overview, the four series, the bin width shown), ``gantt`` (its controls and
    chart), ``cdf``, ``ready`` (the :class:`bokeh.models.CustomJS` to run when the
    page is ready) and, when the first schedule's data has ``nodes``
    (:func:`schedlab.report_nodes.node_page_data`, with ``usage`` from
    :func:`schedlab.report_nodes.dimension_steps`), ``nodes`` (the node Gantt
    chart) and ``resources`` (utilization per resource dimension). ``schedules`` are
    ``(label, data)`` with ``data`` from :func:`schedlab.report_data.page_data` on
    one shared clock; ``view`` is the window the page opens on (seconds since the
    clock's origin; default the whole schedule)."""
    from bokeh.layouts import column, row
    from bokeh.models import (
        ColumnDataSource,
        CustomJS,
        FixedTicker,
        HoverTool,
        LinearAxis,
        NumeralTickFormatter,
        Range1d,
        RangeTool,
    )
    from bokeh.models.annotations import Span
    from bokeh.models.widgets import Div, Select

    from .report_nodes import NODE_BARS

    first = schedules[0][1]
    span = float(first["span"])
    days = span / DAY
    single = len(schedules) == 1
    colours = [SCHEDULE_COLOURS[i % len(SCHEDULE_COLOURS)] for i in range(len(schedules))]
    x_range = Range1d(
        start=0.0, end=days, bounds=(0.0, days), min_interval=60.0 / DAY, name="window"
    )
    busy = "Processors used (% of cores)" if procs else "Busy processors"
    series = [
        ("busy", busy, "#3b528b"),
        ("running", "Running jobs", "#21918c"),
        ("queued", "Queued jobs", "#b5367a"),
        ("demand", "Queued work (proc-h)", "#e07b00"),
    ]
    names = [name for name, _, _ in series]
    levels = [
        [_level_source(level, names, f"level-{s}-{i}") for i, level in enumerate(data["levels"])]
        for s, (_, data) in enumerate(schedules)
    ]
    shown = [
        ColumnDataSource(dict(levels[s][0].data), name=f"series-{s}", tags=[0])
        for s in range(len(schedules))
    ]
    figures = {}
    for k, (name, label, colour) in enumerate(series):
        fig = _window_figure(
            f"series-{name}", x_range, 0, 1, 170 if k < len(series) - 1 else 195, label
        )
        for s in range(len(schedules)):
            c = colour if single else colours[s]
            fig.varea_step(
                x="x",
                y1=0,
                y2=f"{name}_max",
                step_mode="after",
                source=shown[s],
                fill_color=c,
                fill_alpha=0.28 if single else 0.12,
            )
            fig.step(
                x="x", y=f"{name}_mean", mode="after", source=shown[s], line_color=c, line_width=1.3
            )
        # Plain grouped numbers (8,000,000), as the page's tables, never 8.000e+6.
        fig.yaxis.formatter = NumeralTickFormatter(format="0,0.[00]")
        if k < len(series) - 1:
            fig.xaxis.major_label_text_font_size = "0px"
            fig.xaxis.axis_label = None
        figures[name] = fig
    # No legend inside the charts (it covered the data): the page writes the
    # schedules' colours above them (legend_html).

    overview = _figure(
        height=110,
        x_range=Range1d(start=0.0, end=days, bounds=(0.0, days)),
        y_range=Range1d(start=0, end=1),
        tools="",
        toolbar_location=None,
        name="overview",
    )
    coarse = levels[0][0].data
    top = float(np.max(coarse["busy_max"])) if len(coarse["busy_max"]) else 0.0
    overview.y_range.end = top * 1.05 if top > 0 else 1.0
    overview.varea_step(
        x="x", y1=0, y2="busy_max", step_mode="after", source=levels[0][0], fill_color="#9aa7c7"
    )
    overview.yaxis.visible = False
    _clock_axis(overview)
    overview.min_border_left = 70
    overview.title.text = "overview: drag the shaded window or its edges"
    overview.title.text_font_style = "normal"
    tool = RangeTool(x_range=x_range)
    tool.overlay.fill_color = "#e67828"
    tool.overlay.fill_alpha = 0.25
    overview.add_tools(tool)
    bin_info = Div(
        text="", name="bin-info", styles=_INFO_STYLE | {"font-size": "0.8rem", "color": "#666"}
    )

    # The Gantt chart of the window.
    gantt = ColumnDataSource(
        {
            key: []
            for key in (
                "y",
                "submit",
                "start",
                "end",
                "colour",
                "id",
                "user",
                "size",
                "submit_t",
                "wait_t",
                "run_t",
                "req_t",
            )
        },
        name="gantt",
    )
    gantt_fig = _window_figure("gantt", x_range, 0.5, -0.5, 520, "jobs in submission order")
    gantt_fig.ygrid.visible = False
    waits = gantt_fig.hbar(
        y="y", left="submit", right="start", height=0.8, source=gantt, fill_color=_WAITING_COLOUR,
        line_color=None,
    )  # fmt: skip
    runs = gantt_fig.hbar(
        y="y", left="start", right="end", height=0.8, source=gantt, fill_color="colour",
        line_color=None,
    )  # fmt: skip
    gantt_fig.add_tools(
        HoverTool(
            renderers=[runs, waits],
            tooltips=[
                ("job", "@id"),
                ("user", "@user"),
                ("processors", "@size"),
                ("submit", "@submit_t"),
                ("wait", "@wait_t"),
                ("run", "@run_t"),
                ("requested", "@req_t"),
            ],
            name="gantt-hover",
        )
    )
    by: list[str | tuple[Any, str]] = [
        ("user", "user"),
        ("queue", "queue"),
        ("size", "size"),
        ("class", "accuracy class"),
    ]
    colour_by = Select(
        title="Colour by",
        value="user",
        options=by,
        name="colour-by",
        width=160,
    )
    pick = None
    if not single:
        picks: list[str | tuple[Any, str]] = [
            (str(i), label) for i, (label, _) in enumerate(schedules)
        ]
        pick = Select(
            title="Schedule",
            value="0",
            options=picks,
            name="gantt-schedule",
            width=260,
        )
    gantt_info = Div(text="", name="gantt-info", styles=_INFO_STYLE)
    gantt_key = _colour_key(colour_by)

    # The node Gantt chart (platform runs): one row per node.
    node_parts: dict[str, Any] = {}
    if "nodes" in first:
        names_of_nodes = list(first["nodes"]["names"])
        count = len(names_of_nodes)
        node_src = ColumnDataSource(
            {k: [] for k in ("y", "left", "right", "colour", "id", "user", "held", "start_t",
                             "end_t", "partition")},
            name="node-gantt",
        )  # fmt: skip
        height = max(160, min(640, 40 + 16 * count))
        node_fig = _window_figure("node-gantt", x_range, count - 0.5, -0.5, height, "node")
        every = max(1, int(np.ceil(count / 30)))
        ticks = list(range(0, count, every))
        node_fig.yaxis.ticker = FixedTicker(ticks=ticks)
        node_fig.yaxis.major_label_overrides = {i: names_of_nodes[i] for i in ticks}
        node_fig.ygrid.visible = False
        blocks = [tuple(b) for b in first["nodes"].get("blocks") or []]
        if blocks:
            # each partition's rows: a dashed line between blocks, its name on the right
            for start_row, _, _ in blocks[1:]:
                node_fig.add_layout(
                    Span(location=start_row - 0.5, dimension="width", line_color="#333333",
                         line_dash="dashed", line_width=1)
                )  # fmt: skip
            mids = [int((a + b - 1) // 2) for a, b, _ in blocks]
            # shortened (the hover names a job's partition in full)
            block_names = [short_label(str(b[2]), 24) for b in blocks]
            ticker: Any = FixedTicker(ticks=mids)
            node_fig.add_layout(
                LinearAxis(
                    ticker=ticker,
                    major_label_overrides=dict(zip(mids, block_names, strict=True)),
                    axis_label="partition",
                    major_tick_line_color=None,
                    minor_tick_line_color=None,
                    name="node-partitions",
                ),
                "right",
            )
            # wider by about the axis's width, so the plot stays aligned with the others
            node_fig.width = WIDTH + 30 + 7 * max(len(n) for n in block_names)
        part_names = list(first["nodes"].get("part_names") or [])
        bars = node_fig.hbar(
            y="y", left="left", right="right", height=0.9, source=node_src, fill_color="colour",
            line_color="white", line_width=0.5,
        )  # fmt: skip
        node_fig.add_tools(
            HoverTool(
                renderers=[bars],
                tooltips=[
                    ("job", "@id"),
                    ("user", "@user"),
                    *([("partition", "@partition")] if part_names else []),
                    ("nodes", "@held"),
                    ("start", "@start_t"),
                    ("end", "@end_t"),
                ],
                name="node-hover",
            )
        )
        node_info = Div(text="", name="node-info", styles=_INFO_STYLE)
        # 10: jobs that share a node are drawn on one row (no lanes): say so, when
        # some node held jobs together (schedlab.report_nodes._shares_nodes)
        node_note = (
            Div(text=SHARED_NODE_NOTE, name="node-note", styles=_INFO_STYLE)
            if first["nodes"].get("shared", True)
            else None
        )
        usage = _resources_chart(first, x_range)
        node_parts = {
            "node_src": node_src,
            "node_fig": node_fig,
            "node_info": node_info,
            "node_note": node_note,
            "node_alloc": ColumnDataSource({"node": first["nodes"]["node"]}, name="node-alloc"),
            "node_part": ColumnDataSource(
                {"part": first["nodes"].get("part", np.zeros(0, dtype=np.int8))}, name="node-part"
            ),
            "part_names": part_names,
            "node_names": names_of_nodes,
            "resources": usage,
        }

    jobs = [_job_source(data, f"jobs-{s}") for s, (_, data) in enumerate(schedules)]
    args: dict[str, Any] = {
        "x_range": x_range,
        "span": span,
        "levels": levels,
        "shown": shown,
        "widths": [float(level["w"]) for level in first["levels"]],
        "series": [figures[n] for n in names],
        "names": names,
        "floor": [100.0 if (name == "busy" and procs) else 0.0 for name in names],
        "bin_info": bin_info,
        "jobs": jobs,
        "users": [data["users"] for _, data in schedules],
        "gantt": gantt,
        "gantt_fig": gantt_fig,
        "gantt_info": gantt_info,
        "max_rows": int(gantt_rows),
        "colour_by": colour_by,
        "pick": pick,
        "palette": list(PALETTE),
        "class_colours": ["#bbbbbb", *CLASS_COLOURS],
        "size_colours": list(SIZE_COLOURS),
        "node_src": node_parts.get("node_src"),
        "node_fig": node_parts.get("node_fig"),
        "node_info": node_parts.get("node_info"),
        "node_alloc": node_parts.get("node_alloc"),
        "node_names": node_parts.get("node_names", []),
        "node_part": node_parts.get("node_part"),
        "part_names": node_parts.get("part_names", []),
        "max_bars": NODE_BARS,
        "view": None if view is None else [float(view[0]) / DAY, float(view[1]) / DAY],
        "ready": False,
    }
    code = _script("window.js")
    update = CustomJS(args=args, code=code)
    x_range.js_on_change("start", update)
    x_range.js_on_change("end", update)
    colour_by.js_on_change("value", update)
    if pick is not None:
        pick.js_on_change("value", update)
    ready = CustomJS(args={**args, "ready": True}, code=code)

    controls = [colour_by] if pick is None else [pick, colour_by]
    sections = {
        "series": column(overview, *[figures[n] for n in names], bin_info, name="series"),
        "gantt": column(row(*controls, gantt_key), gantt_info, gantt_fig, name="gantt-section"),
        "cdf": column(_cdf_chart(schedules, "waited"), _cdf_chart(schedules, "bounded"),
                      name="cdf"),
        "ready": ready,
    }  # fmt: skip
    if node_parts:
        shown_parts = [node_parts["node_info"], node_parts["node_note"], node_parts["node_fig"]]
        sections["nodes"] = column(*[p for p in shown_parts if p is not None], name="nodes")
        sections["resources"] = node_parts["resources"]
    return sections


def _legend(
    fig: Any, items: Sequence[tuple[str, list[Any]]], place: str = "center", **options: Any
) -> None:
    """A legend of ``(label, renderers)`` inside ``fig`` (``place="center"``) or
    beside it (``"above"``, ``"right"`` ...)."""
    from bokeh.models.annotations import Legend

    options.setdefault("background_fill_alpha", 0.7)
    fig.add_layout(Legend(items=list(items), **options), place)


#: Tick marks (seconds) and their labels on the wait CDF's log axis.
WAIT_TICKS = (
    (1, "1 s"), (10, "10 s"), (60, "1 min"), (600, "10 min"), (3600, "1 h"), (36000, "10 h"),
    (86400, "1 d"), (864000, "10 d"), (8640000, "100 d"),
)  # fmt: skip


def _cdf_chart(schedules: Sequence[tuple[str, dict[str, Any]]], which: str) -> Any:
    """The empirical CDF of ``which`` (``waited`` or ``bounded``) of every schedule
    on a log axis: a step line from the share at zero (the dashed line: no wait,
    or a bounded slowdown of 1, which a log axis cannot show) up to 1."""
    from bokeh.models import FixedTicker, HoverTool, Range1d
    from bokeh.models.annotations import Span

    lo, hi = np.inf, 10.0
    for _, data in schedules:
        x = data["cdf"][which]["x"]
        if x:
            lo, hi = min(lo, x[0]), max(hi, x[-1])
    low = 10.0 ** np.floor(np.log10(max(1.0, lo if np.isfinite(lo) else 1.0)))
    high = 10.0 ** np.ceil(np.log10(hi))
    if high <= low:
        high = low * 10
    label = "wait (log scale)" if which == "waited" else "bounded slowdown (log scale)"
    fig = _figure(
        height=260,
        x_axis_type="log",
        x_range=Range1d(start=low, end=high),
        y_range=Range1d(start=0, end=1.02),
        tools="xwheel_zoom,xpan,reset,save",
        name=f"cdf-{which}",
    )
    fig.min_border_left = 70
    fig.xaxis.axis_label = label
    fig.yaxis.axis_label = "share of jobs ≤ x"
    if which == "waited":
        fig.xaxis.ticker = FixedTicker(ticks=[t for t, _ in WAIT_TICKS])
        fig.xaxis.major_label_overrides = {t: text for t, text in WAIT_TICKS}
    single = len(schedules) == 1
    lines: list[Any] = []
    for s, (schedule_label, data) in enumerate(schedules):
        c = data["cdf"][which]
        colour = "#21918c" if single else SCHEDULE_COLOURS[s % len(SCHEDULE_COLOURS)]
        x = [low, *c["x"], high]
        p = [c["zero"], *c["p"], c["p"][-1] if c["p"] else c["zero"]]
        line = fig.step(x=x, y=p, mode="after", line_color=colour, line_width=1.6)
        if not single:  # the hover names the schedule (no legend in the chart)
            line.name = short_label(schedule_label)
        lines.append(line)
        fig.add_layout(
            Span(
                location=c["zero"],
                dimension="width",
                line_dash="dashed",
                line_color="#888888" if single else colour,
                line_width=1,
            )
        )
    tips = [("x", "@x{0,0.[00]}"), ("share", "@y{0.000}")]
    fig.add_tools(HoverTool(renderers=lines, tooltips=tips if single else [("", "$name"), *tips]))
    # No legend inside (it covered the dashed "did not wait" lines): the page
    # writes the schedules' colours above the charts (legend_html).
    return fig


#: Bars with their annotation written above them, at most (more would overlap).
MAX_ANNOTATED = 18


def bar_chart(
    labels: Sequence[str],
    minutes: Sequence[float],
    colours: Sequence[str],
    xlabel: str,
    annotations: Sequence[str] | None = None,
    legend: Sequence[tuple[str, str]] = (),
    *,
    name: str = "bars",
) -> Any:
    """Bars of mean wait (minutes) per group (user, queue or accuracy class), with
    hover; ``annotations`` are written above the bars (up to
    :data:`MAX_ANNOTATED` bars: more would overlap; hover shows them), ``legend``
    is ``(label, colour)`` of the accuracy classes the colours stand for (a key
    beside the bars)."""
    from bokeh.models import ColumnDataSource, FactorRange, HoverTool

    labels = [str(v) for v in labels]
    source = ColumnDataSource(
        {
            "group": labels,
            "minutes": [float(v) for v in minutes],
            "colour": list(colours),
            "note": list(annotations) if annotations else [""] * len(labels),
        },
        name=f"{name}-bars",
    )
    top = max((float(v) for v in minutes), default=1.0) or 1.0
    fig = _figure(
        height=280,
        width=WIDTH if len(labels) > 12 else 560,
        x_range=FactorRange(factors=labels),
        y_range=(0, top * 1.18),
        tools="save",
        toolbar_location=None,
        name=name,
    )
    bars = fig.vbar(
        x="group", top="minutes", width=0.8, source=source, fill_color="colour",
        line_color="black", line_width=0.4,
    )  # fmt: skip
    if annotations and len(labels) <= MAX_ANNOTATED:
        fig.text(
            x="group", y="minutes", text="note", source=source, text_align="center",
            text_baseline="bottom", text_font_size="9px", y_offset=-2,
        )  # fmt: skip
    fig.add_tools(
        HoverTool(
            renderers=[bars], tooltips=[(xlabel, "@group"), ("mean wait (min)", "@minutes{0,0.0}"),
                                        ("", "@note")]
        )
    )  # fmt: skip
    fig.xaxis.axis_label = xlabel
    fig.yaxis.axis_label = "Mean wait (min)"
    fig.xgrid.visible = False
    if len(labels) > 12:
        fig.xaxis.major_label_orientation = np.pi / 2
    if legend:
        # A key of coloured squares: one renderer each, holding one NaN point (drawn
        # nowhere). BokehJS draws no legend swatch for a renderer without data.
        items = []
        for label, colour in legend:
            glyph = fig.scatter([np.nan], [np.nan], marker="square", fill_color=colour,
                                line_color="black", size=10)  # fmt: skip
            items.append((label, [glyph]))
        # beside the bars, titled above: a key above them with its title on the
        # left (rotated) took most of the chart's height
        _legend(fig, items, "right", location="top_left", title="Accuracy class")
    return fig


#: Marks the end of Bokeh's inline JavaScript in the page (which contains strings
#: such as ``</head>`` and ``"p1"``): ids are renumbered after it only.
_END_OF_RESOURCES = "<!-- end of Bokeh's resources -->"

#: The page: head with the style and Bokeh's JavaScript and CSS inline, then the
#: page's parts in order (HTML, or a Bokeh root by name).
TEMPLATE = """{% from macros import embed %}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{{ title | e }}</title><style>{{ style }}</style>
{{ bokeh_css if bokeh_css }}
{{ bokeh_js if bokeh_js }}
<!-- end of Bokeh's resources -->
</head><body>
{% for kind, value in parts %}{% if kind == "html" %}{{ value }}
{% else %}{{ embed(roots[value]) }}
{% endif %}{% endfor %}{{ plot_script }}
</body></html>
"""


def render_page(title: str, style: str, parts: Sequence[Any]) -> str:
    """The whole page: ``parts`` in order, each an HTML string or a Bokeh model
    (a root of the page's one document; a :class:`bokeh.models.CustomJS` is run
    when the document is ready). Bokeh's resources are inline, so the page loads
    nothing, and its log level is set quietly (:data:`_SET_LOG_LEVEL`), so it logs
    nothing; model and element ids
    are renumbered in order of appearance, so the same input gives the same bytes."""
    from bokeh.document import Document
    from bokeh.embed import file_html
    from bokeh.events import DocumentReady
    from bokeh.models import CustomJS
    from bokeh.resources import Resources
    from jinja2 import Template

    doc = Document()
    chunks: list[tuple[str, str]] = []
    with doc.models.freeze():  # one walk over the models, not one per root
        for part in parts:
            if isinstance(part, str):
                chunks.append(("html", part))
            elif isinstance(part, CustomJS):
                doc.js_on_event(DocumentReady, part)
            else:
                part.name = part.name or f"root-{len(doc.roots)}"
                doc.add_root(part)
                chunks.append(("root", part.name))
    text = file_html(
        doc,
        Resources(mode="inline", log_level="warn"),
        title,
        template=Template(TEMPLATE),
        template_variables={"parts": chunks, "style": style},
    )
    head, sep, body = text.rpartition(_END_OF_RESOURCES)
    if not sep or _SET_LOG_LEVEL[0] not in head:
        raise RuntimeError("Bokeh's resources no longer set the log level as expected")
    return renumber_ids(head.replace(*_SET_LOG_LEVEL, 1) + sep + body)


#: The line of Bokeh's inline resources that sets BokehJS's log level, and the
#: page's replacement: ``Bokeh.set_log_level`` writes "setting log level" to the
#: console; the logger's own ``set_level`` sets it silently (at BokehJS's default
#: level, ``info``, it would log "document idle" instead).
_SET_LOG_LEVEL = ('Bokeh.set_log_level("warn");', 'Bokeh.logger.set_level("warn");')


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_MODEL_ID = re.compile(r'"p(\d+)"')


def renumber_ids(text: str) -> str:
    """Bokeh's ids made deterministic: model ids (``"p1234"``, a process-wide
    counter) and element and document ids (random UUIDs) are numbered in order of
    first appearance, after Bokeh's own JavaScript (:data:`_END_OF_RESOURCES`).
    Both patterns are safe in the body: embedded arrays are base64 (no ``-``, and
    a whole quoted base64 string has a length that is a multiple of 4, never
    ``"p1234"``)."""
    head, sep, body = text.rpartition(_END_OF_RESOURCES)
    if not sep:
        raise ValueError("not a page of render_page")
    models: dict[str, str] = {}
    uuids: dict[str, str] = {}

    def model(match: re.Match[str]) -> str:
        return '"q' + models.setdefault(match.group(1), str(1000 + len(models))) + '"'

    def uuid(match: re.Match[str]) -> str:
        return uuids.setdefault(match.group(0), f"00000000-0000-0000-0000-{len(uuids):012d}")

    return head + sep + _UUID.sub(uuid, _MODEL_ID.sub(model, body))


def embedded_objects(page: str, kind: str) -> list[dict[str, Any]]:
    """The attributes of every Bokeh model of type ``kind`` (e.g. ``"CustomJS"``)
    embedded in a page written by :func:`render_page`, as Bokeh serialised them
    (values not decoded; see :func:`embedded_sources` for the data)."""
    body = page.rpartition(_END_OF_RESOURCES)[2]
    found = re.search(
        r'<script type="application/json" id="[^"]+">\s*(.*?)\s*</script>', body, re.S
    )
    if found is None:
        raise ValueError("no Bokeh document in the page")
    out: list[dict[str, Any]] = []

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and node.get("name") == kind:
                out.append(node.get("attributes", {}))
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(json.loads(found.group(1)))
    return out


def embedded_sources(page: str) -> dict[str, dict[str, Any]]:
    """The named data sources of a written page, decoded: ``{name: {column:
    values}}`` (numpy arrays for the embedded binary columns, gzipped or not,
    lists otherwise). For tests and for tools that read a report back."""
    import base64
    import gzip

    def decode(value: Any) -> Any:
        if isinstance(value, dict) and value.get("type") == "ndarray":
            raw = value["array"]
            if isinstance(raw, dict) and raw.get("type") == "bytes":
                data = base64.b64decode(raw["data"])
                if data[:2] == b"\x1f\x8b":  # Bokeh gzips large arrays
                    data = gzip.decompress(data)
                return np.frombuffer(data, dtype=value["dtype"]).reshape(value["shape"])
            return np.asarray(raw, dtype=value["dtype"])
        return value

    return {
        source["name"]: {key: decode(value) for key, value in source["data"]["entries"]}
        for source in embedded_objects(page, "ColumnDataSource")
        if source.get("name")
    }


def legend_html(labels: Sequence[str]) -> str:
    """A legend of the schedules' colours (HTML), wrapped within the page (a long
    file name is broken anywhere rather than widening the page)."""
    return (
        "<p class='legend' style='overflow-wrap:anywhere'>"
        + " ".join(
            f"<span style='color:{SCHEDULE_COLOURS[i % len(SCHEDULE_COLOURS)]}'>■</span> "
            f"{html.escape(label)}"
            for i, label in enumerate(labels)
        )
        + "</p>"
    )


__all__ = [
    "INSTALL_HINT",
    "SCHEDULE_COLOURS",
    "bar_chart",
    "embedded_objects",
    "embedded_sources",
    "legend_html",
    "render_page",
    "renumber_ids",
    "require_bokeh",
    "window_charts",
]
