"""The PSP paper's Figure 1, drawn with :func:`schedlab.experiment.grouped_bars`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from schedlab.experiment import grouped_bars

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
    title: str | None = None,
) -> list[Path]:
    """The paper's Figure 1: average wait (minutes) of each accuracy class, grouped by
    scenario; the paper's values are marked with white diamonds when ``paper``.

    ``title`` names the configuration in the legend (default ``PSP + EASY``).
    ``pooled`` is :func:`.experiment.pool_classes` output. Returns the files written
    (``path`` with each suffix of ``formats``).
    """
    table = pooled.get(policy, {})
    scenarios = [s for s in scenarios if s in table]
    values = {
        scenario: {
            label: wait.minutes
            for label, wait in table[scenario].items()
            if label in reference.CLASSES
            and wait is not None
            and wait.values
            and wait.minutes is not None
        }
        for scenario in scenarios
    }
    marks = {
        scenario: dict(zip(reference.CLASSES, reference.TABLE3[scenario], strict=True))
        for scenario in scenarios
    }
    return grouped_bars(
        values,
        path,
        series=reference.CLASSES,
        groups=scenarios,
        reference=marks if paper else None,
        reference_label="paper",
        colours=CLASS_COLOURS,
        xlabel="Scenario",
        ylabel="Average wait (min)",
        legend_title=f"Accuracy class ({_text(title or 'PSP + EASY')})",
        formats=formats,
    )


def _text(label: str) -> str:
    """``label`` escaped for matplotlib: its ``$`` drawn as dollars, never as
    mathtext (a configuration name is data, not a formula)."""
    return label.replace("$", r"\$")
