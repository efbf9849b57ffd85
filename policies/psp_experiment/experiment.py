"""The PSP paper's experiment: 6 scenarios x N workloads, PSP + EASY and FCFS + EASY.

:func:`run_psp_experiment` generates the ``psp-fing`` workloads of every scenario
(seeds ``seed .. seed + workloads - 1``; the scenarios of one seed share their jobs),
simulates each with PSP + EASY backfilling and with the FCFS + EASY baseline through
the sweep runner (local processes or Dask), and builds:

* Table 3: the average wait in minutes per accuracy class a1..a5 per scenario, each
  user in the class of the mean accuracy of their last 10 jobs by completion time at
  the end of the simulation (the paper's rule for DI/HDI, used for every scenario);
* the headline ratios: the lowest non-empty class's wait over the highest's, and
  BE's and GE's average wait over the highest class's, per scenario;
* Figure 1: average wait per class grouped by scenario (CF, CFG, DI, HDI), with the
  paper's values marked.

Classes are pooled over the workloads: the mean over every value of the class in
all workloads (``weight="users"``: per-user mean waits, as the paper's "average
waiting time per user"; ``weight="jobs"``: every job counts once).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from schedlab import UsageError
from schedlab.experiment import (
    Cell,
    SweepOutcome,
    parse_spec,
    run_sweep,
    write_atomic,
    write_table,
)

from . import reference

#: (policy, backfilling) pairs of the experiment: PSP and the FCFS baseline.
POLICIES: tuple[tuple[str, str], ...] = (("psp", "easy"), ("fcfs", "easy"))
CLASSES = reference.CLASSES


def psp_cells(
    workloads: int = 4,
    seed: int = 1,
    scenarios: Sequence[str] = reference.SCENARIOS,
    policies: Sequence[tuple[str, str]] = POLICIES,
    generator_options: Mapping[str, Any] | None = None,
    weight: str = "users",
) -> list[Cell]:
    """The sweep cells of the experiment (scenario x seed x policy)."""
    extra = "".join(f",{k}={v}" for k, v in sorted((generator_options or {}).items()))
    cells = []
    for scenario in scenarios:
        for s in range(seed, seed + workloads):
            for policy, backfill in policies:
                cells.append(
                    Cell(
                        workload=f"psp-fing:scenario={scenario}{extra}",
                        policy=policy,
                        backfill=backfill,
                        seed=s,
                        metrics=("wait",),
                        by="accuracy-class",
                        metric_options={"weight": weight},
                    )
                )
    return cells


def scenario_of(workload: str) -> str:
    """The scenario named in a ``psp-fing:scenario=...`` spec."""
    return parse_spec(workload)[1].get("scenario", "CF").upper()


@attrs.define(slots=True)
class ClassWait:
    """Pooled wait of one class of one scenario under one policy."""

    minutes: float | None
    values: int
    users: int
    jobs: int


def pool_classes(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, ClassWait]]]:
    """``{policy: {scenario: {group: ClassWait}}}`` pooled over the workloads: the
    mean of a class is the count-weighted mean of its per-workload means."""
    counts = {
        (r["cell"], r["group"]): (float(r["value"] or 0), int(r["users"]), int(r["jobs"]))
        for r in rows
        if r["metric"] == "wait" and r["stat"] == "count"
    }
    sums: dict[tuple[str, str, str], list[float]] = {}
    for row in rows:
        if row["metric"] != "wait" or row["stat"] != "mean":
            continue
        count, users, jobs = counts.get((row["cell"], row["group"]), (0.0, 0, 0))
        key = (row["policy"], scenario_of(row["workload"]), row["group"])
        entry = sums.setdefault(key, [0.0, 0.0, 0.0, 0.0])
        if row["value"] is not None and count:
            entry[0] += float(row["value"]) * count
            entry[1] += count
        entry[2] += users
        entry[3] += jobs
    out: dict[str, dict[str, dict[str, ClassWait]]] = {}
    for (policy, scenario, group), (total, values, user_sum, job_sum) in sums.items():
        minutes = total / values / 60.0 if values else None
        out.setdefault(policy, {}).setdefault(scenario, {})[group] = ClassWait(
            minutes, int(values), int(user_sum), int(job_sum)
        )
    return out


@attrs.define(slots=True)
class Ratio:
    """The headline ratios of one scenario under one policy."""

    scenario: str
    policy: str
    lowest: str | None
    highest: str | None
    ratio_lowest: float | None
    ratio_be: float | None
    ratio_ge: float | None


def ratios(pooled: Mapping[str, Mapping[str, Mapping[str, ClassWait]]], policy: str) -> list[Ratio]:
    """Lowest-class / highest-class wait, and BE / GE average wait over the highest
    class's, for every scenario with at least one non-empty class."""
    table = pooled.get(policy, {})
    overall = {s: (table.get(s, {}).get("all") or ClassWait(None, 0, 0, 0)).minutes for s in table}
    out = []
    for scenario in reference.SCENARIOS:
        classes = table.get(scenario)
        if not classes:
            continue
        filled = [c for c in CLASSES if c in classes and classes[c].values and classes[c].minutes]
        if not filled:
            continue
        low, high = filled[0], filled[-1]
        top = classes[high].minutes
        assert top is not None
        out.append(
            Ratio(
                scenario,
                policy,
                low,
                high,
                _div(classes[low].minutes, top) if low != high else None,
                _div(overall.get("BE"), top),
                _div(overall.get("GE"), top),
            )
        )
    return out


def _div(a: float | None, b: float | None) -> float | None:
    if a is None or not b:
        return None
    return a / b


# --------------------------------------------------------------------------- tables


def table3_rows(pooled: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Long-form Table 3 for CSV/JSON: one row per policy, scenario and class (a1..a5
    and ``all``), with the paper's value beside schedlab's for PSP."""
    rows = []
    for policy, _ in POLICIES:
        table = pooled.get(policy, {})
        for scenario in reference.SCENARIOS:
            if scenario not in table:
                continue
            for i, group in enumerate((*CLASSES, "all")):
                wait = table[scenario].get(group) or ClassWait(None, 0, 0, 0)
                paper = None
                if policy == "psp" and group != "all":
                    paper = reference.TABLE3[scenario][i]
                rows.append(
                    {
                        "policy": f"{policy}+easy",
                        "scenario": scenario,
                        "class": group,
                        "wait_min": None if wait.minutes is None else round(wait.minutes, 2),
                        "users": wait.users,
                        "jobs": wait.jobs,
                        "paper_wait_min": paper,
                    }
                )
    return rows


def ratio_rows(pooled: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ratios of every scenario under both policies, with the paper's (PSP)."""
    rows = []
    for policy, _ in POLICIES:
        for r in ratios(pooled, policy):
            paper = reference.RATIOS.get(r.scenario, {}) if policy == "psp" else {}
            rows.append(
                {
                    "policy": f"{policy}+easy",
                    "scenario": r.scenario,
                    "lowest_class": r.lowest,
                    "highest_class": r.highest,
                    "ratio_lowest": _round(r.ratio_lowest),
                    "paper_ratio_lowest": paper.get("lowest"),
                    "ratio_be": _round(r.ratio_be),
                    "paper_ratio_be": paper.get("BE"),
                    "ratio_ge": _round(r.ratio_ge),
                    "paper_ratio_ge": paper.get("GE"),
                }
            )
    return rows


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


# --------------------------------------------------------------------------- running


@attrs.define(slots=True)
class PspExperiment:
    """Everything the experiment produced."""

    out: Path
    outcome: SweepOutcome
    pooled: dict[str, Any]
    table3: list[dict[str, Any]]
    ratios: list[dict[str, Any]]
    files: dict[str, Path]
    settings: dict[str, Any]


def run_psp_experiment(
    out: str | os.PathLike[str] = "psp-results",
    workloads: int = 4,
    seed: int = 1,
    scheduler: Any = None,
    workers: int | None = None,
    generator_options: Mapping[str, Any] | None = None,
    weight: str = "users",
    figures: bool = True,
    progress: Any = None,
) -> PspExperiment:
    """Run the experiment (resuming finished cells under ``out``) and write its tables
    (``table3``, ``ratios`` and the tidy ``results``, as CSV and JSON) and Figure 1
    (PNG and SVG) into ``out``."""
    if workloads < 1:
        raise UsageError("--workloads must be at least 1")
    out = Path(out)
    cells = psp_cells(workloads, seed, generator_options=generator_options, weight=weight)
    outcome = run_sweep(cells, out, scheduler=scheduler, workers=workers, progress=progress)
    rows = outcome.rows
    pooled = pool_classes(rows)
    t3 = table3_rows(pooled)
    rr = ratio_rows(pooled)
    settings = {
        "workloads": workloads,
        "seeds": list(range(seed, seed + workloads)),
        "generator_options": dict(generator_options or {}),
        "weight": weight,
        "policies": [f"{p}+{b}" for p, b in POLICIES],
        "classes": "each user in the class of the mean accuracy of their last 10 jobs by "
        "completion time at the end of the simulation",
    }
    files: dict[str, Path] = {}
    files["results.csv"] = write_table(rows, out / "results.csv")
    files["table3.csv"] = write_table(t3, out / "table3.csv")
    files["ratios.csv"] = write_table(rr, out / "ratios.csv")
    files["results.json"] = write_table(rows, out / "results.json")
    summary = {"settings": settings, "table3": t3, "ratios": rr}
    files["table3.json"] = out / "table3.json"
    write_atomic(files["table3.json"], json.dumps(summary, indent=1, allow_nan=False) + "\n")
    if figures:
        from .figures import figure1

        for path in figure1(pooled, out / "figure1", formats=("png", "svg")):
            files[path.name] = path
    return PspExperiment(out, outcome, pooled, t3, rr, files, settings)
