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

Two configurations (:data:`CONFIGURATIONS`): ``default`` (the ``psp`` policy, strict
class order, and ``easy`` with a pass at every event) and ``slurm`` (schedlab's
hypothesis of the paper's setting, which says only that PSP was put "in the
Multifactor implementation" of Slurm: PSP as one factor of ``multifactor`` next to
age, with the ``slurm`` backfill strategy and its periodic passes). ``config="both"`` runs
both and writes them into the same tables, one label per policy.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from schedlab import UsageError
from schedlab.experiment import (
    MAX_CELLS,
    Cell,
    SweepOutcome,
    parse_spec,
    remove_outputs,
    run_sweep,
    write_atomic,
    write_table,
)

from . import reference

#: (policy, backfilling) pairs of the default configuration: PSP and the FCFS baseline.
POLICIES: tuple[tuple[str, str], ...] = (("psp", "easy"), ("fcfs", "easy"))
CLASSES = reference.CLASSES

#: The ``multifactor`` options of the Slurm configuration: PSP's class and the job's
#: age, nothing else (the paper names no other factor). Slurm's factors all lie in
#: [0, 1]; the PSP factor is class / 5. PriorityWeightAge = 1000 and a PSP weight
#: of 1000 give the two factors the same range (0..1000 points), the issue's quick
#: check; PriorityMaxAge is Slurm's default, 7 days. See docs/experiments.md.
SLURM_PRIORITY: dict[str, Any] = {
    "weight_psp": 1000.0,
    "weight_age": 1000.0,
    "max_age": 7 * 86400.0,
    "weight_size": 0.0,
    "weight_fairshare": 0.0,
    "weight_queue": 0.0,
}

#: The backfilling strategy of the Slurm configuration (Slurm's sched/backfill, with
#: its periodic passes: options ``sched_interval``, ``bf_interval`` ...).
SLURM_BACKFILL = "slurm"


@attrs.frozen
class Run:
    """One simulated scheduler of a configuration: its ``role`` (``psp`` for the
    policy under study, ``fcfs`` for the baseline), the registered policy and
    backfilling names with their options, and the label used in the tables."""

    role: str
    policy: str
    backfill: str
    label: str
    policy_options: tuple[tuple[str, Any], ...] = ()
    backfill_options: tuple[tuple[str, Any], ...] = ()

    def backfill_spec(self) -> str:
        """``name`` or ``name:key=value,...`` (how a cell names its strategy)."""
        if not self.backfill_options:
            return self.backfill
        return self.backfill + ":" + ",".join(f"{k}={v}" for k, v in self.backfill_options)


@attrs.frozen
class Configuration:
    """A way of running the experiment: the PSP run and the baseline run."""

    name: str
    title: str
    runs: tuple[Run, ...]

    def run(self, role: str) -> Run:
        """The run playing ``role``."""
        return next(r for r in self.runs if r.role == role)


def _frozen(options: Mapping[str, Any] | None) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((options or {}).items()))


#: The files the experiment writes at its end besides the sweep's ``results.*``
#: (file names and glob patterns): removed when a run starts, with
#: :data:`_SWEEP_TABLES`.
OUTPUTS: tuple[str, ...] = (
    "table3.csv",
    "table3.json",
    "ratios.csv",
    "comparison.csv",
    "comparison.json",
    "figure1.png",
    "figure1.svg",
    "figure1-*.png",
    "figure1-*.svg",
)


def default_configuration() -> Configuration:
    """``psp`` + ``easy`` and ``fcfs`` + ``easy``, a pass at every event (as before)."""
    return Configuration(
        "default",
        "PSP + EASY",
        (Run("psp", "psp", "easy", "psp+easy"), Run("fcfs", "fcfs", "easy", "fcfs+easy")),
    )


def slurm_configuration(
    priority_options: Mapping[str, Any] | None = None,
    backfill_options: Mapping[str, Any] | None = None,
    backfill: str = SLURM_BACKFILL,
) -> Configuration:
    """``multifactor`` (PSP + age, :data:`SLURM_PRIORITY` updated with
    ``priority_options``) and the FCFS baseline, both with the ``slurm`` strategy
    (``backfill_options`` for both runs)."""
    options = {**SLURM_PRIORITY, **(priority_options or {})}
    strategy = _frozen(backfill_options)
    return Configuration(
        "slurm",
        f"multifactor (PSP + age) + {backfill}",
        (
            Run(
                "psp",
                "multifactor",
                backfill,
                f"multifactor+{backfill}",
                _frozen(options),
                strategy,
            ),
            Run("fcfs", "fcfs", backfill, f"fcfs+{backfill}", (), strategy),
        ),
    )


#: The configuration names of ``--config`` (``both`` runs the two).
CONFIGURATIONS: tuple[str, ...] = ("default", "slurm")


def psp_cells(
    workloads: int = 4,
    seed: int = 1,
    scenarios: Sequence[str] = reference.SCENARIOS,
    policies: Sequence[tuple[str, str]] = POLICIES,
    generator_options: Mapping[str, Any] | None = None,
    weight: str = "users",
    configuration: Configuration | None = None,
) -> list[Cell]:
    """The sweep cells of the experiment (scenario x seed x policy): the runs of
    ``configuration`` if given, else the ``policies`` pairs without options."""
    extra = "".join(f",{k}={v}" for k, v in sorted((generator_options or {}).items()))
    if configuration is not None:
        runs = [(r.policy, r.backfill_spec(), dict(r.policy_options)) for r in configuration.runs]
    else:
        runs = [(policy, backfill, {}) for policy, backfill in policies]
    cells = []
    for scenario in scenarios:
        for s in range(seed, seed + workloads):
            for policy, backfill, options in runs:
                cells.append(
                    Cell(
                        workload=f"psp-fing:scenario={scenario}{extra}",
                        policy=policy,
                        backfill=backfill,
                        seed=s,
                        policy_options=options,
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


def pool_classes(
    rows: Sequence[Mapping[str, Any]], roles: Mapping[str, str] | None = None
) -> dict[str, dict[str, dict[str, ClassWait]]]:
    """``{policy: {scenario: {group: ClassWait}}}`` pooled over the workloads: the
    mean of a class is the count-weighted mean of its per-workload means.

    ``roles`` (``{cell key: role}``) pools only those cells, under their role
    (``psp``/``fcfs``) instead of their policy name."""
    if roles is not None:
        rows = [{**r, "policy": roles[r["cell"]]} for r in rows if r["cell"] in roles]
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
    class's, for every scenario with at least one non-empty class.

    A class is non-empty when it has a known wait (users with jobs), even a wait of
    exactly 0. When the highest class waits 0, the ratios over it are undefined
    (``None``; :func:`ratio_rows` says why), never taken over other classes."""
    table = pooled.get(policy, {})
    overall = {s: (table.get(s, {}).get("all") or ClassWait(None, 0, 0, 0)).minutes for s in table}
    out = []
    for scenario in reference.SCENARIOS:
        classes = table.get(scenario)
        if not classes:
            continue
        filled = [c for c in CLASSES if c in classes and _non_empty(classes[c])]
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


def _non_empty(wait: ClassWait) -> bool:
    """Whether a class has a known pooled wait (0 included)."""
    return wait.values > 0 and wait.minutes is not None


def _div(a: float | None, b: float | None) -> float | None:
    """``a / b``; ``None`` when either is unknown or ``b`` is 0 (undefined)."""
    if a is None or b is None or b == 0:
        return None
    return a / b


def _ratio_note(ratio: Ratio, pooled: Mapping[str, Mapping[str, Mapping[str, ClassWait]]]) -> str:
    """Why the ratios of ``ratio`` are missing, ``""`` when nothing needs saying:
    the highest class waits 0 (division by 0), or there is one non-empty class."""
    classes = pooled.get(ratio.policy, {}).get(ratio.scenario, {})
    top = classes.get(ratio.highest or "")
    if top is not None and top.minutes == 0:
        return f"undefined: the highest class ({ratio.highest}) waits 0 min"
    if ratio.lowest == ratio.highest:
        return f"one non-empty class ({ratio.highest})"
    return ""


# --------------------------------------------------------------------------- tables


def table3_rows(
    pooled: Mapping[str, Any], configuration: Configuration | None = None
) -> list[dict[str, Any]]:
    """Long-form Table 3 for CSV/JSON: one row per policy, scenario and class (a1..a5
    and ``all``), with the paper's value beside schedlab's for PSP. ``pooled`` is by
    role; the rows carry the ``configuration``'s labels (default: the default's)."""
    configuration = configuration or default_configuration()
    rows = []
    for run in configuration.runs:
        policy = run.role
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
                        "policy": run.label,
                        "scenario": scenario,
                        "class": group,
                        "wait_min": None if wait.minutes is None else round(wait.minutes, 2),
                        "users": wait.users,
                        "jobs": wait.jobs,
                        "paper_wait_min": paper,
                    }
                )
    return rows


def ratio_rows(
    pooled: Mapping[str, Any], configuration: Configuration | None = None
) -> list[dict[str, Any]]:
    """The ratios of every scenario under both policies, with the paper's (PSP), and a
    ``note`` saying why a ratio is missing (the highest class waits 0, or one class)."""
    configuration = configuration or default_configuration()
    rows = []
    for run in configuration.runs:
        policy = run.role
        for r in ratios(pooled, policy):
            paper = reference.RATIOS.get(r.scenario, {}) if policy == "psp" else {}
            rows.append(
                {
                    "policy": run.label,
                    "scenario": r.scenario,
                    "lowest_class": r.lowest,
                    "highest_class": r.highest,
                    "ratio_lowest": _round(r.ratio_lowest),
                    "paper_ratio_lowest": paper.get("lowest"),
                    "ratio_be": _round(r.ratio_be),
                    "paper_ratio_be": paper.get("BE"),
                    "ratio_ge": _round(r.ratio_ge),
                    "paper_ratio_ge": paper.get("GE"),
                    "note": _ratio_note(r, pooled),
                }
            )
    return rows


def comparison_rows(results: Sequence[ConfigurationResult]) -> list[dict[str, Any]]:
    """The headline ratio of every configuration beside the paper's: per scenario and
    configuration, lowest / highest non-empty class (as in ``ratios``) and the same
    two classes the paper compares (:data:`reference.RATIO_CLASSES`), each with its
    relative distance from the paper's ratio, and whether the class means fall from
    a1 to a5: over every non-empty class (``falling_a1_to_a5``) and over the classes
    the paper's Table 3 fills (``falling_paper_classes``, the paper's class order)."""
    rows = []
    for scenario, paper in reference.RATIOS.items():
        low, high = reference.RATIO_CLASSES[scenario]
        for result in results:
            run = result.configuration.run("psp")
            classes = result.pooled.get("psp", {}).get(scenario, {})
            ratio = next(
                (
                    r["ratio_lowest"]
                    for r in result.ratios
                    if r["policy"] == run.label and r["scenario"] == scenario
                ),
                None,
            )
            lowest = classes.get(low)
            highest = classes.get(high)
            same = (
                _div(lowest.minutes, highest.minutes)
                if lowest and highest and lowest.values and highest.values
                else None
            )
            waits = [
                classes[c].minutes
                for c in CLASSES
                if c in classes and classes[c].values and classes[c].minutes is not None
            ]
            in_paper = [
                classes[c].minutes
                for c, value in zip(CLASSES, reference.TABLE3[scenario], strict=True)
                if value is not None
                and c in classes
                and classes[c].values
                and classes[c].minutes is not None
            ]
            rows.append(
                {
                    "scenario": scenario,
                    "policy": run.label,
                    "configuration": result.configuration.name,
                    "paper_ratio": paper["lowest"],
                    "ratio_lowest": _round(ratio),
                    "off_lowest": _round(_off(ratio, paper["lowest"])),
                    "paper_classes": f"{low}/{high}",
                    "ratio_paper_classes": _round(same),
                    "off_paper_classes": _round(_off(same, paper["lowest"])),
                    "falling_a1_to_a5": all(a > b for a, b in itertools.pairwise(waits)),
                    "falling_paper_classes": all(a > b for a, b in itertools.pairwise(in_paper)),
                }
            )
    return rows


def _off(value: float | None, paper: float) -> float | None:
    return None if value is None else value / paper - 1


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


# --------------------------------------------------------------------------- running


@attrs.define(slots=True)
class ConfigurationResult:
    """The tables of one configuration: ``pooled`` by role (``psp``, ``fcfs``)."""

    configuration: Configuration
    pooled: dict[str, Any]
    table3: list[dict[str, Any]]
    ratios: list[dict[str, Any]]


@attrs.define(slots=True)
class PspExperiment:
    """Everything the experiment produced. ``pooled`` is the first configuration's;
    ``table3`` and ``ratios`` hold the rows of every configuration run, which
    ``results`` also has one by one (by configuration name)."""

    out: Path
    outcome: SweepOutcome
    pooled: dict[str, Any]
    table3: list[dict[str, Any]]
    ratios: list[dict[str, Any]]
    files: dict[str, Path]
    settings: dict[str, Any]
    results: dict[str, ConfigurationResult] = attrs.field(factory=dict)
    comparison: list[dict[str, Any]] = attrs.field(factory=list)


def configurations_for(
    config: str | Configuration | Sequence[Configuration] = "default",
    priority_options: Mapping[str, Any] | None = None,
    backfill_options: Mapping[str, Any] | None = None,
) -> list[Configuration]:
    """The configurations of ``config`` (``default``, ``slurm``, ``both``, or ready
    objects), their options checked against the registry now (a one-line
    :class:`UsageError` for an unknown option, a bad value or a missing strategy),
    not in a worker process later."""
    from schedlab import get_registry

    registry = get_registry()
    # Values from the command line are text: convert them as the components will, so
    # that "-P weight_age=1000" names the same cells as the default 1000.0.
    priority_options = _converted(registry, "policy", "multifactor", priority_options)
    backfill_options = _converted(registry, "backfill", SLURM_BACKFILL, backfill_options)
    if isinstance(config, Configuration):
        chosen = [config]
    elif isinstance(config, str):
        names = {"both": list(CONFIGURATIONS)}.get(config, [config])
        if any(n not in CONFIGURATIONS for n in names):
            raise UsageError(
                f"--config {config}: expected one of {', '.join((*CONFIGURATIONS, 'both'))}"
            )
        chosen = [
            default_configuration()
            if n == "default"
            else slurm_configuration(priority_options, backfill_options)
            for n in names
        ]
    else:
        chosen = list(config)
    if (priority_options or backfill_options) and not any(c.name == "slurm" for c in chosen):
        raise UsageError("priority and backfill options apply to the slurm configuration only")
    for configuration in chosen:
        for run in configuration.runs:
            # the factories check ranges and combinations
            policy = registry.policy(run.policy)
            policy.factory(**policy.parse_options(dict(run.policy_options), "policy"))
            backfill = registry.backfill(run.backfill)
            backfill.factory(**backfill.parse_options(dict(run.backfill_options), "backfill"))
    return chosen


def _converted(
    registry: Any, kind: str, name: str, options: Mapping[str, Any] | None
) -> dict[str, Any]:
    """``options`` converted by the component's option specs (only the given keys)."""
    if not options:
        return {}
    parsed = registry.get(kind, name).parse_options(dict(options), kind)
    return {key: parsed[key] for key in options}


#: The sweep's tables the experiment writes at its end (``run_sweep`` removes them
#: too, once the cells are built; the experiment removes them first).
_SWEEP_TABLES: tuple[str, ...] = ("results.csv", "results.json")


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
    config: str | Configuration | Sequence[Configuration] = "default",
    priority_options: Mapping[str, Any] | None = None,
    backfill_options: Mapping[str, Any] | None = None,
) -> PspExperiment:
    """Run the experiment (resuming finished cells under ``out``) and write its tables
    (``table3``, ``ratios`` and the tidy ``results``, as CSV and JSON) and Figure 1
    (PNG and SVG) into ``out``.

    ``config``: ``default`` (PSP + EASY, the output of earlier versions), ``slurm``
    (multifactor with PSP + age, the ``slurm`` strategy), ``both``, or
    :class:`Configuration` objects. ``priority_options`` and ``backfill_options``
    change the slurm configuration's ``multifactor`` and strategy options. Figure 1
    is ``figure1`` for the default configuration and ``figure1-NAME`` for another.
    """
    if workloads < 1:
        raise UsageError("--workloads must be at least 1")
    out = Path(out)
    chosen = configurations_for(config, priority_options, backfill_options)
    # Cells per workload (scenarios x runs of every configuration), counted before
    # any is built: a sweep holds at most MAX_CELLS, refused at once.
    per_workload = len(reference.SCENARIOS) * sum(len(c.runs) for c in chosen)
    if workloads * per_workload > MAX_CELLS:
        raise UsageError(
            f"--workloads {workloads}: {workloads * per_workload:,} simulations; an "
            f"experiment has at most {MAX_CELLS:,} (at most {MAX_CELLS // per_workload:,} "
            "workloads here)"
        )
    if len({c.name for c in chosen}) != len(chosen):
        raise UsageError("two configurations share a name")
    # The tables and figures an earlier run left go before any slow step: an
    # interrupted run, or one with fewer configurations or no figures, must not
    # leave them beside its own (run_sweep's tables included).
    remove_outputs(out, (*OUTPUTS, *_SWEEP_TABLES))
    per_config = [
        psp_cells(
            workloads, seed, generator_options=generator_options, weight=weight, configuration=c
        )
        for c in chosen
    ]
    cells = [cell for group in per_config for cell in group]
    outcome = run_sweep(cells, out, scheduler=scheduler, workers=workers, progress=progress)
    rows = outcome.rows
    results: dict[str, ConfigurationResult] = {}
    for configuration, group in zip(chosen, per_config, strict=True):
        roles = {}
        for cell in group:
            run = next(
                r
                for r in configuration.runs
                if r.policy == cell.policy and r.backfill_spec() == cell.backfill
            )
            roles[cell.key] = run.role
        pooled = pool_classes(rows, roles)
        results[configuration.name] = ConfigurationResult(
            configuration,
            pooled,
            table3_rows(pooled, configuration),
            ratio_rows(pooled, configuration),
        )
    first = results[chosen[0].name]
    t3 = [row for r in results.values() for row in r.table3]
    rr = [row for r in results.values() for row in r.ratios]
    settings: dict[str, Any] = {
        "workloads": workloads,
        "seeds": list(range(seed, seed + workloads)),
        "generator_options": dict(generator_options or {}),
        "weight": weight,
        "policies": [run.label for c in chosen for run in c.runs],
        "classes": "each user in the class of the mean accuracy of their last 10 jobs by "
        "completion time at the end of the simulation",
    }
    if [c.name for c in chosen] != ["default"]:
        settings["configurations"] = {
            c.name: {
                run.label: {
                    "policy": run.policy,
                    "policy_options": dict(run.policy_options),
                    "backfill": run.backfill,
                    "backfill_options": dict(run.backfill_options),
                }
                for run in c.runs
            }
            for c in chosen
        }
    files: dict[str, Path] = {}
    files["results.csv"] = write_table(rows, out / "results.csv")
    files["table3.csv"] = write_table(t3, out / "table3.csv")
    files["ratios.csv"] = write_table(rr, out / "ratios.csv")
    files["results.json"] = write_table(rows, out / "results.json")
    summary = {"settings": settings, "table3": t3, "ratios": rr}
    files["table3.json"] = out / "table3.json"
    write_atomic(files["table3.json"], json.dumps(summary, indent=1, allow_nan=False) + "\n")
    comparison: list[dict[str, Any]] = []
    if [c.name for c in chosen] != ["default"]:
        comparison = comparison_rows(list(results.values()))
        files["comparison.csv"] = write_table(comparison, out / "comparison.csv")
        files["comparison.json"] = out / "comparison.json"
        write_atomic(
            files["comparison.json"],
            json.dumps({"settings": settings, "comparison": comparison}, indent=1) + "\n",
        )
    if figures:
        from .figures import figure1

        for configuration in chosen:
            name = configuration.name
            stem = "figure1" if name == "default" else f"figure1-{name}"
            for path in figure1(
                results[configuration.name].pooled,
                out / stem,
                formats=("png", "svg"),
                title=configuration.title if configuration.name != "default" else None,
            ):
                files[path.name] = path
    return PspExperiment(out, outcome, first.pooled, t3, rr, files, settings, results, comparison)
