"""Printing the PSP experiment: Table 3 beside the paper's, the ratios, the baseline.

rich tables for the terminal; the same numbers are in the experiment's CSV and JSON
files (:mod:`.experiment`).
"""

from __future__ import annotations

from typing import Any

from . import reference
from .experiment import CLASSES, PspExperiment


def render_tables(experiment: PspExperiment) -> list[Any]:
    """rich tables: Table 3 beside the paper's, the ratios, and the FCFS baseline."""
    from rich.table import Table

    def cell(value: float | None) -> str:
        return "" if value is None else f"{value:.1f}"

    pooled = experiment.pooled
    t3 = Table(
        title="Table 3: average wait (min) per accuracy class, PSP + EASY",
        title_justify="left",
        caption="users: users in each class, over all workloads",
        caption_justify="left",
    )
    t3.add_column("scenario")
    t3.add_column("")
    for c in CLASSES:
        t3.add_column(c, justify="right")
    t3.add_column("all", justify="right")
    for scenario in reference.SCENARIOS:
        classes = pooled.get("psp", {}).get(scenario)
        if classes is None:
            continue
        ours = [classes.get(c) for c in CLASSES]
        t3.add_row(
            scenario,
            "schedlab",
            *[cell(w.minutes) if w and w.values else "" for w in ours],
            cell(classes["all"].minutes if "all" in classes else None),
        )
        t3.add_row(
            "",
            "users",
            *[str(w.users) if w else "0" for w in ours],
            str(classes["all"].users) if "all" in classes else "",
            style="dim",
        )
        paper = reference.TABLE3[scenario]
        t3.add_row("", "paper", *[cell(v) for v in paper], "", end_section=True)

    rt = Table(
        title="How many times lower the highest class's wait is (PSP + EASY)",
        title_justify="left",
    )
    for name in ("scenario", "classes", "vs lowest", "paper", "vs BE", "paper", "vs GE", "paper"):
        rt.add_column(name, justify="left" if name in ("scenario", "classes") else "right")
    for row in experiment.ratios:
        if row["policy"] != "psp+easy" or row["scenario"] not in reference.RATIOS:
            continue
        rt.add_row(
            row["scenario"],
            f"{row['lowest_class']}/{row['highest_class']}",
            _fmt(row["ratio_lowest"]),
            _fmt(row["paper_ratio_lowest"]),
            _fmt(row["ratio_be"]),
            _fmt(row["paper_ratio_be"]),
            _fmt(row["ratio_ge"]),
            _fmt(row["paper_ratio_ge"]),
        )

    base = Table(
        title="Baseline: average wait (minutes) per accuracy class, FCFS + EASY",
        title_justify="left",
    )
    base.add_column("scenario")
    for c in (*CLASSES, "all"):
        base.add_column(c, justify="right")
    base.add_column("lowest/highest", justify="right")
    fcfs_ratios = {r["scenario"]: r for r in experiment.ratios if r["policy"] == "fcfs+easy"}
    for scenario in reference.SCENARIOS:
        classes = pooled.get("fcfs", {}).get(scenario)
        if classes is None:
            continue
        base.add_row(
            scenario,
            *[
                cell(classes[c].minutes) if c in classes and classes[c].values else ""
                for c in (*CLASSES, "all")
            ],
            _fmt(fcfs_ratios.get(scenario, {}).get("ratio_lowest")),
        )
    return [t3, rt, base]


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"
