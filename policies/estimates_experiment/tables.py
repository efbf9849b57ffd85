"""The estimates experiment as text: one Markdown table, deterministic.

The same numbers, unrounded, are in ``estimates.csv`` and ``estimates.json``
(:mod:`.experiment`); this is the table ``docs/experiments.md`` shows.
"""

from __future__ import annotations

from typing import Any

#: (title, row key, format) of the columns after the workload and configuration.
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("mean wait (s)", "wait_mean", "{:,.0f}"),
    ("wait vs EASY", "wait_vs_easy", "{:+.0%}"),
    ("mean bsld", "bsld_mean", "{:,.1f}"),
    ("bsld vs EASY", "bsld_vs_easy", "{:+.0%}"),
    ("MAE (s)", "prediction_mae", "{:,.0f}"),
    ("under-predicted", "under_prediction", "{:.0%}"),
    ("accuracy", "prediction_accuracy", "{:.2f}"),
    ("corrections", "corrections", "{:,}"),
)


def _cell(value: Any, fmt: str) -> str:
    if value is None:
        return ""
    text = fmt.format(value)
    return text.replace("%", " %")


def markdown(experiment: Any) -> str:
    """``estimates.txt``: a Markdown table of every workload and configuration, then
    the configurations and the notes of each workload."""
    head = ["workload", "configuration", *(title for title, _, _ in COLUMNS)]
    lines = [
        "| " + " | ".join(head) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in COLUMNS) + " |",
    ]
    for row in experiment.rows:
        cells = [f"{row['workload']} ({row['jobs']:,} jobs)", row["configuration"]]
        cells += [_cell(row[key], fmt) for _, key, fmt in COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Configurations:")
    for configuration in experiment.settings["configurations"]:
        lines.append(
            f"- {configuration['name']}: {configuration['policy']} + "
            f"{configuration['backfill']}, estimator {configuration['estimator']}"
        )
    for workload, notes in experiment.notes.items():
        if notes:
            lines.append("")
            lines.append(f"Notes on {workload}:")
            lines.extend(f"- {note}" for note in notes)
    return "\n".join(lines) + "\n"
