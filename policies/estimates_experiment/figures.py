"""The estimates experiment's figure, drawn with :func:`schedlab.experiment.grouped_bars`:
each configuration's mean bounded slowdown relative to EASY on user estimates,
grouped by workload (the baseline's bar is 1)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from schedlab.experiment import grouped_bars

#: Width (inches) of the figure: a page width, for the legend of up to eight series.
WIDTH = 7.0


def figure(experiment: Any, path: str | Path, formats: Iterable[str] = ("png",)) -> list[Path]:
    """Draw the figure into ``path`` with each suffix of ``formats``; returns the files.
    A workload label is broken at its commas so that generator specs fit."""
    series: list[str] = []
    values: dict[str, dict[str, float | None]] = {}
    for row in experiment.rows:
        if row["configuration"] not in series:
            series.append(row["configuration"])
        group = row["workload"].replace(",", ",\n")
        relative = row["bsld_vs_easy"]
        values.setdefault(group, {})[row["configuration"]] = (
            None if relative is None else 1.0 + relative
        )
    return grouped_bars(
        values,
        path,
        series=series,
        xlabel="Workload",
        ylabel="Mean bounded slowdown / EASY's",
        legend_title="FCFS + EASY on user estimates (EASY), PSP + EASY, or FCFS + EASY "
        "with a predictor",
        width=WIDTH,
        height=3.0,
        formats=formats,
    )
