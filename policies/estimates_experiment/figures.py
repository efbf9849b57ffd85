"""The estimates experiment's figure: each configuration's mean bounded slowdown
relative to EASY on user estimates, one panel per workload.

Horizontal bars on a logarithmic axis centred on 1 (the baseline), so that halving
and doubling look alike and long configuration names stay readable however many
corrections are run. Drawn with matplotlib directly (the ``plot`` extra, imported
here only, after :func:`schedlab.experiment.require_plotting` has checked it) in the
style of schedlab's other figures, on a figure object of its own (no pyplot state),
and saved with fixed metadata: the same rows give the same PNG bytes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # matplotlib (the plot extra) is imported where a figure is drawn
    from matplotlib.typing import RcKeyType

#: Width of the figure (inches): a page of a two-column paper.
WIDTH = 7.0
#: Height per configuration (inches), plus :data:`MARGIN` for titles and axis.
ROW_HEIGHT = 0.22
MARGIN = 1.1
#: Colours: the baseline grey, PSP orange, perfect estimates black, the predictors
#: the colour-blind-safe viridis map.
BASELINE_COLOUR = "#999999"
PSP_COLOUR = "#e08214"
PERFECT_COLOUR = "#222222"
#: Ratios marked on the axes (those within the axes' range).
TICKS = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
STYLE: dict[RcKeyType, Any] = {
    "font.size": 7,
    "axes.titlesize": 7,
    "axes.labelsize": 7,
    "xtick.labelsize": 6,
    "ytick.labelsize": 7,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "savefig.dpi": 200,
}


def _colours(rows: list[dict[str, Any]]) -> dict[str, Any]:
    from matplotlib import colormaps

    names: list[str] = []
    for row in rows:
        if row["configuration"] not in names:
            names.append(row["configuration"])
    estimator = {row["configuration"]: row["estimator"] for row in rows}
    policy = {row["configuration"]: row["policy"] for row in rows}
    predictors = [
        n for n in names if policy[n] != "psp" and estimator[n] not in ("requested", "actual")
    ]
    cmap = colormaps["viridis"]
    out: dict[str, Any] = {}
    for name in names:
        if policy[name] == "psp":
            out[name] = PSP_COLOUR
        elif estimator[name] == "requested":
            out[name] = BASELINE_COLOUR
        elif estimator[name] == "actual":
            out[name] = PERFECT_COLOUR
        else:
            k = predictors.index(name)
            out[name] = cmap(0.15 + 0.7 * k / max(1, len(predictors) - 1))
    return out


def figure(experiment: Any, path: str | Path, formats: Iterable[str] = ("png",)) -> list[Path]:
    """Draw the figure of ``experiment`` (its ``rows``) into ``path`` with each suffix
    of ``formats``; returns the files written."""
    import matplotlib
    from matplotlib.figure import Figure

    rows = list(experiment.rows)
    workloads: list[str] = []
    names: list[str] = []
    for row in rows:
        if row["workload"] not in workloads:
            workloads.append(row["workload"])
        if row["configuration"] not in names:
            names.append(row["configuration"])
    colours = _colours(rows)
    ratios = {
        (r["workload"], r["configuration"]): (
            None if r["bsld_vs_easy"] is None else 1.0 + r["bsld_vs_easy"]
        )
        for r in rows
    }
    finite = [v for v in ratios.values() if v is not None and v > 0]
    low = min([*finite, 1.0]) / 1.6
    high = max([*finite, 1.0]) * 1.6
    height = MARGIN + ROW_HEIGHT * len(names)
    written = []
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(WIDTH, height), layout="constrained")
        axes = fig.subplots(1, len(workloads), sharey=True, squeeze=False)[0]
        ys = list(range(len(names)))[::-1]
        for ax, workload in zip(axes, workloads, strict=True):
            for y, name in zip(ys, names, strict=True):
                value = ratios.get((workload, name))
                if value is None or value <= 0:
                    continue
                ax.barh(
                    y,
                    value - 1.0 if value >= 1.0 else 1.0 - value,
                    left=1.0 if value >= 1.0 else value,
                    height=0.75,
                    color=colours[name],
                    edgecolor="black",
                    linewidth=0.3,
                )
                ax.text(
                    value * (1.04 if value >= 1.0 else 1 / 1.04),
                    y,
                    f"{value:.2f}",
                    va="center",
                    ha="left" if value >= 1.0 else "right",
                    fontsize=5.5,
                )
            ax.axvline(1.0, color="black", linewidth=0.6)
            ax.set_xscale("log")
            ax.set_xlim(low, high)
            ticks = [t for t in TICKS if low <= t <= high]
            ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(ticks))
            ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(_ratio_label))
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
            ax.grid(axis="x", alpha=0.3, which="major")
            ax.set_axisbelow(True)
            # names come from data (file names, configurations): never mathtext
            ax.set_title(_wrap(workload), parse_math=False)
            ax.set_yticks(ys, names, parse_math=False)
            ax.tick_params(axis="y", length=0)
        fig.supxlabel("Mean bounded slowdown relative to EASY on user estimates (log scale)")
        base = Path(path)
        for suffix in formats:
            target = base.with_suffix(f".{suffix}")
            target.parent.mkdir(parents=True, exist_ok=True)
            metadata = {"Software": "schedlab"} if suffix == "png" else {}
            fig.savefig(target, format=suffix, metadata=metadata)
            written.append(target)
    return written


def _ratio_label(value: float, _: Any) -> str:
    if value <= 0 or not math.isfinite(value):
        return ""
    return f"{value:g}"


def _wrap(label: str, width: int = 16) -> str:
    """A workload label broken at commas (generator specs), else after the ``-`` or
    ``_`` nearest its middle when longer than ``width``."""
    if "," in label:
        return label.replace(",", ",\n")
    if len(label) <= width:
        return label
    cuts = [i + 1 for i, c in enumerate(label[:-1]) if c in "-_"]
    if not cuts:
        return label
    cut = min(cuts, key=lambda i: abs(i - len(label) / 2))
    return label[:cut] + "\n" + label[cut:]
