"""Figures of the experiments, built on :mod:`schedlab.plotting` (paper-column style,
deterministic files)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..plotting import COLUMN_WIDTH, new_figure, save_figure
from . import reference

#: One colour per accuracy class a1..a5: light (inaccurate) to dark (accurate), from
#: the colour-blind-safe, greyscale-printable viridis map.
CLASS_COLOURS: tuple[str, ...] = ("#fde725", "#5ec962", "#21918c", "#3b528b", "#440154")


def figure1(
    pooled: Mapping[str, Mapping[str, Mapping[str, Any]]],
    path: str | Path,
    formats: Iterable[str] = ("png", "svg"),
    policy: str = "psp",
    scenarios: Iterable[str] = reference.FIGURE1_SCENARIOS,
    paper: bool = True,
) -> list[Path]:
    """The paper's Figure 1: average wait (minutes) of each accuracy class, grouped by
    scenario; the paper's values are marked with black diamonds when ``paper``.

    ``pooled`` is :func:`schedlab.experiment.psp.pool_classes` output. Returns the files
    written (``path`` with each suffix of ``formats``).
    """
    scenarios = [s for s in scenarios if s in pooled.get(policy, {})]
    classes = reference.CLASSES
    fig, ax = new_figure(COLUMN_WIDTH, 2.5)
    width = 0.8 / len(classes)
    top = 0.0
    for i, label in enumerate(classes):
        xs, heights, paper_xs, paper_ys = [], [], [], []
        for j, scenario in enumerate(scenarios):
            x = j + (i - (len(classes) - 1) / 2) * width
            wait = pooled[policy][scenario].get(label)
            if wait is not None and wait.values and wait.minutes is not None:
                xs.append(x)
                heights.append(wait.minutes)
                top = max(top, wait.minutes)
            value = reference.TABLE3[scenario][i]
            if paper and value is not None:
                paper_xs.append(x)
                paper_ys.append(value)
                top = max(top, value)
        ax.bar(
            xs,
            heights,
            width * 0.92,
            color=CLASS_COLOURS[i],
            edgecolor="black",
            linewidth=0.4,
            label=label,
            zorder=2,
        )
        if paper_xs:
            ax.scatter(
                paper_xs,
                paper_ys,
                marker="D",
                s=9,
                facecolor="white",
                edgecolor="black",
                linewidth=0.7,
                zorder=3,
                label="paper" if i == 0 else None,
            )
    ax.set_xticks(range(len(scenarios)), scenarios)
    ax.set_xlabel("Scenario")
    ax.set_ylabel("Average wait (min)")
    ax.set_ylim(0, top * 1.25 if top else 1)
    ax.grid(axis="x", visible=False)
    ax.set_axisbelow(True)
    handles, labels = ax.get_legend_handles_labels()
    order = [labels.index(c) for c in classes if c in labels]
    order += [k for k, name in enumerate(labels) if name == "paper"]
    ax.legend(
        [handles[k] for k in order],
        [labels[k] for k in order],
        ncols=len(order),
        loc="upper center",
        bbox_to_anchor=(0.5, 1.0),
        frameon=False,
        handlelength=1.0,
        columnspacing=0.8,
        handletextpad=0.4,
        title="Accuracy class (PSP + EASY)",
        title_fontsize=7,
    )
    return save_figure(fig, path, formats)
