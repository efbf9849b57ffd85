"""Figures for experiments: a grouped bar chart with optional reference marks.

Built on :mod:`schedlab.plotting` (paper-column style, deterministic files), so an
experiment's figure looks like every other schedlab figure and the same data gives
the same bytes. An experiment plugin turns its results into plain numbers
(``{group: {series: value}}``) and calls :func:`grouped_bars`; a published value to
compare with (a paper's table) is drawn as a marker over the matching bar.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..plotting import COLUMN_WIDTH, kept_style, new_figure, pyplot, save_figure

__all__ = ["COLUMN_WIDTH", "grouped_bars", "require_plotting"]


def require_plotting() -> None:
    """Fail now, with a one-line :class:`~schedlab.UsageError` naming the ``plot``
    extra, when matplotlib is missing (call it before a long run that ends in a
    figure)."""
    with kept_style():
        pyplot()


def _default_colours(count: int) -> list[Any]:
    """``count`` colours of the colour-blind-safe, greyscale-printable viridis map,
    light to dark."""
    plt = pyplot()
    cmap = plt.get_cmap("viridis")
    if count == 1:
        return [cmap(0.5)]
    return [cmap(1.0 - k / (count - 1)) for k in range(count)]


def grouped_bars(
    values: Mapping[str, Mapping[str, float | None]],
    path: str | Path,
    *,
    series: Sequence[str],
    groups: Iterable[str] | None = None,
    reference: Mapping[str, Mapping[str, float | None]] | None = None,
    reference_label: str = "reference",
    colours: Sequence[Any] | None = None,
    xlabel: str = "",
    ylabel: str = "",
    legend_title: str | None = None,
    width: float = COLUMN_WIDTH,
    height: float = 2.5,
    formats: Iterable[str] = ("png", "svg"),
) -> list[Path]:
    """Draw one bar per series within each group and save the figure.

    ``values[group][series]`` is a bar's height; a missing or ``None`` value leaves
    a gap. ``groups`` orders the x axis (default: the order of ``values``); a group
    absent from ``values`` is left out. ``reference[group][series]``, when given, is
    drawn as a white diamond over the bar's position (even where the bar is
    missing), labelled ``reference_label`` in the legend. ``colours`` has one colour
    per series (default: viridis, light to dark). The legend sits in one row above
    the bars, series first. Group and series names are drawn as plain text (a
    ``$`` is a dollar sign, not mathtext). Returns the files written (``path`` with
    each suffix of ``formats``).
    """
    with kept_style():  # the caller's matplotlib style is left as it was
        return _grouped_bars(
            values, path, series=series, groups=groups, reference=reference,
            reference_label=reference_label, colours=colours, xlabel=xlabel,
            ylabel=ylabel, legend_title=legend_title, width=width, height=height,
            formats=formats,
        )  # fmt: skip


def _grouped_bars(
    values: Mapping[str, Mapping[str, float | None]],
    path: str | Path,
    *,
    series: Sequence[str],
    groups: Iterable[str] | None,
    reference: Mapping[str, Mapping[str, float | None]] | None,
    reference_label: str,
    colours: Sequence[Any] | None,
    xlabel: str,
    ylabel: str,
    legend_title: str | None,
    width: float,
    height: float,
    formats: Iterable[str],
) -> list[Path]:
    groups = [g for g in (values if groups is None else groups) if g in values]
    series = list(series)
    if not series:
        raise UsageError(f"{path}: a grouped bar chart needs at least one series")
    colours = list(colours) if colours is not None else _default_colours(len(series))
    if len(colours) < len(series):
        raise UsageError(
            f"{path}: {len(series)} series but {len(colours)} colours; give one per series"
        )
    fig, ax = new_figure(width, height)
    bar_width = 0.8 / len(series)
    top = 0.0
    reference_labelled = False
    for i, label in enumerate(series):
        xs, heights, marks_x, marks_y = [], [], [], []
        for j, group in enumerate(groups):
            x = j + (i - (len(series) - 1) / 2) * bar_width
            value = values[group].get(label)
            if value is not None:
                xs.append(x)
                heights.append(value)
                top = max(top, value)
            mark = None if reference is None else reference.get(group, {}).get(label)
            if mark is not None:
                marks_x.append(x)
                marks_y.append(mark)
                top = max(top, mark)
        ax.bar(
            xs,
            heights,
            bar_width * 0.92,
            color=colours[i],
            edgecolor="black",
            linewidth=0.4,
            label=label,
            zorder=2,
        )
        if marks_x:
            ax.scatter(
                marks_x,
                marks_y,
                marker="D",
                s=9,
                facecolor="white",
                edgecolor="black",
                linewidth=0.7,
                zorder=3,
                label=None if reference_labelled else reference_label,
            )
            reference_labelled = True
    ax.set_xticks(range(len(groups)), groups)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, top * 1.25 if top else 1)
    ax.grid(axis="x", visible=False)
    ax.set_axisbelow(True)
    handles, labels = ax.get_legend_handles_labels()
    order = [labels.index(s) for s in series if s in labels]
    order += [k for k, name in enumerate(labels) if name == reference_label]
    legend = ax.legend(
        [handles[k] for k in order],
        [labels[k] for k in order],
        ncols=len(order),
        loc="upper center",
        bbox_to_anchor=(0.5, 1.0),
        frameon=False,
        handlelength=1.0,
        columnspacing=0.8,
        handletextpad=0.4,
        title=legend_title,
        title_fontsize=7,
    )
    # Group and series names come from data (file names, policy labels): drawn as
    # text, never read as mathtext (a `$` in a name was a parse error).
    for text in (*ax.get_xticklabels(), *legend.get_texts()):
        text.set_parse_math(False)
    return save_figure(fig, path, formats)
