"""The estimates experiment: PSP + EASY on user estimates vs FCFS + EASY with each
run-time predictor, per workload.

:func:`configurations` builds the grid (:class:`Configuration`), in this order:

* ``EASY``: FCFS + EASY on the users' requested times, the baseline every relative
  column divides by;
* ``PSP``: the ``psp`` policy + EASY on the requested times (the PSP paper's answer:
  accurate users first), unless ``psp=False``;
* one FCFS + EASY configuration per predictor and per correction rule
  (``correction=`` option of the predictor, :mod:`schedlab.sim.correction`):
  ``user-average``, ``easy++`` (named ``EASY++`` with SJBF backfilling, the
  configuration Tsafrir, Etsion and Feitelson 2007 evaluate), ``learned`` or any
  registered estimator, with options as ``NAME:key=value;key=value``;
* ``perfect``: FCFS + EASY on the jobs' real run times (estimator ``actual``), when
  listed.

``order`` sets the backfilling order: ``paper`` (default) tries candidates shortest
prediction first (EASY's ``order=sjbf``) for ``easy++`` only and in queue order for
everything else; ``priority`` uses queue order everywhere, ``sjbf`` SJBF everywhere.

:func:`run_estimates_experiment` reads every workload (a trace path or a generator
spec; ``jobs`` keeps the first N jobs), simulates every configuration on it with
:func:`schedlab.simulate`, measures it with :func:`schedlab.compute_metrics` (mean
wait, mean bounded slowdown, and the prediction metrics: mean absolute error, share
of under-predictions, PSP's accuracy ratio; overall and per accuracy class of the
users), and writes ``estimates.csv``, ``estimates.json``, ``classes.csv``,
``estimates.txt`` (a Markdown table) and ``estimates.png``. Every file depends only
on the workloads and the settings, to the byte (no timings, no paths of the output
folder).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import schedlab
from schedlab import UsageError
from schedlab.experiment import (
    parse_spec,
    remove_outputs,
    simulation_notes,
    write_atomic,
    write_table,
)

#: The predictors run by default (besides the ``EASY`` baseline and ``PSP``).
DEFAULT_ESTIMATORS: tuple[str, ...] = ("user-average", "easy++", "learned", "actual")
#: The correction rules run by default.
DEFAULT_CORRECTIONS: tuple[str, ...] = ("tsafrir",)
#: The correction rules a predictor's ``correction=`` option accepts (those of
#: ``schedlab.sim.correction``; each predictor checks them again).
CORRECTION_RULES: tuple[str, ...] = ("tsafrir", "requested", "none")
#: The backfilling orders of ``order=``.
ORDERS: tuple[str, ...] = ("paper", "priority", "sjbf")
#: The estimator the EASY++ paper pairs with SJBF backfilling (``order="paper"``).
PAPER_SJBF = "easy++"
#: The metrics measured, overall and per accuracy class.
METRICS: tuple[str, ...] = (
    "wait",
    "bounded-slowdown",
    "prediction-error",
    "under-prediction",
    "prediction-accuracy",
)
#: The grouping of the per-class table: each user's jobs in the class of the mean
#: accuracy of the user's requested times (the PSP paper's a1..a5).
CLASS_GROUPING = "accuracy-class"
#: Name of the baseline configuration.
BASELINE = "EASY"


@attrs.frozen
class Configuration:
    """One simulated scheduler: ``name`` (the label in tables and the figure), the
    priority ``policy``, EASY's options, the estimator and its options."""

    name: str
    policy: str
    estimator: str
    estimator_options: tuple[tuple[str, Any], ...] = ()
    backfill: str = "easy"
    backfill_options: tuple[tuple[str, Any], ...] = ()

    @property
    def correction(self) -> str:
        """The correction rule of the estimator, ``""`` when it has none."""
        return str(dict(self.estimator_options).get("correction", ""))

    def backfill_spec(self) -> str:
        """``easy`` or ``easy:order=sjbf``."""
        return _spec(self.backfill, self.backfill_options)

    def estimator_spec(self) -> str:
        """``NAME`` or ``NAME:key=value,...`` (every option given, sorted)."""
        return _spec(self.estimator, self.estimator_options)

    def simulate(self, workload: Any) -> Any:
        """Run :func:`schedlab.simulate` on ``workload`` with this configuration."""
        return schedlab.simulate(
            workload,
            policy=self.policy,
            backfill=self.backfill,
            backfill_options=dict(self.backfill_options) or None,
            estimator=self.estimator,
            estimator_options=dict(self.estimator_options) or None,
            progress=False,
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready)."""
        return {
            "name": self.name,
            "policy": self.policy,
            "backfill": self.backfill_spec(),
            "estimator": self.estimator_spec(),
        }


def _spec(name: str, options: Sequence[tuple[str, Any]]) -> str:
    if not options:
        return name
    return name + ":" + ",".join(f"{k}={v}" for k, v in options)


def split_estimators(text: str | Sequence[str]) -> list[str]:
    """``"user-average,easy++,learned:rate=0.1,batch=8"`` -> ``["user-average",
    "easy++", "learned:rate=0.1,batch=8"]``: an item with ``=`` and no ``:`` continues
    the previous estimator's options (estimator names hold no ``=``)."""
    items = [text] if isinstance(text, str) else list(text)
    out: list[str] = []
    for item in items:
        for part in (p.strip() for p in item.split(",")):
            if not part:
                continue
            if "=" in part and ":" not in part and out:
                out[-1] = f"{out[-1]},{part}"
            else:
                out.append(part)
    return out


def split_list(text: str | Sequence[str]) -> list[str]:
    """A comma-separated list (or a list of them), empty items dropped."""
    items = [text] if isinstance(text, str) else list(text)
    return [p.strip() for item in items for p in item.split(",") if p.strip()]


def configurations(
    estimators: str | Sequence[str] = DEFAULT_ESTIMATORS,
    corrections: str | Sequence[str] = DEFAULT_CORRECTIONS,
    order: str = "paper",
    psp: bool = True,
) -> list[Configuration]:
    """The grid (see the module docstring), every name and option checked against
    the registry now: a one-line :class:`~schedlab.UsageError` for an unknown
    estimator, option, correction or order."""
    from schedlab import get_registry

    registry = get_registry()
    if order not in ORDERS:
        raise UsageError(f"--order {order}: expected one of {', '.join(ORDERS)}")
    rules = split_list(corrections)
    if not rules:
        raise UsageError("--correction: give at least one of tsafrir, requested, none")
    if len(set(rules)) != len(rules):
        raise UsageError(f"--correction {','.join(rules)}: a rule is given twice")
    for rule in rules:
        if rule not in CORRECTION_RULES:
            raise UsageError(f"--correction {rule}: expected one of {', '.join(CORRECTION_RULES)}")
    items = split_estimators(estimators)
    if not items:
        raise UsageError(
            "--estimators: give at least one estimator (e.g. "
            f"{', '.join(DEFAULT_ESTIMATORS)}; requested runs only the baselines)"
        )

    def easy(estimator: str) -> tuple[tuple[str, Any], ...]:
        sjbf = order == "sjbf" or (order == "paper" and estimator == PAPER_SJBF)
        return (("order", "sjbf"),) if sjbf else ()

    out = [Configuration(BASELINE, "fcfs", "requested", backfill_options=easy("requested"))]
    if psp:
        out.append(Configuration("PSP", "psp", "requested", backfill_options=easy("requested")))
    for item in items:
        name, options = parse_spec(item)
        if not registry.has("estimator", name):
            known = ", ".join(sorted(s.name for s in registry.all("estimator")))
            raise UsageError(f"--estimators: unknown estimator {name!r} (estimators: {known})")
        spec = registry.get("estimator", name)
        name = spec.name
        if name == "requested" and not options:
            continue  # the baseline
        has_correction = any(o.name == "correction" for o in spec.options)
        if has_correction and "correction" not in options:
            variants = [{**options, "correction": rule} for rule in rules]
        else:
            variants = [dict(options)]
        for given in variants:
            parsed = spec.parse_options(given, "estimator")
            spec.factory(**parsed)  # the factory checks ranges and combinations
            frozen = tuple(sorted((k, parsed[k]) for k in given))
            label = _label(name, dict(options), given, len(variants) > 1, order)
            out.append(Configuration(label, "fcfs", name, frozen, backfill_options=easy(name)))
    names = [c.name for c in out]
    for c in out:
        if names.count(c.name) > 1:
            raise UsageError(f"--estimators: {c.name!r} is given twice")
    return out


def _label(
    name: str, options: Mapping[str, Any], given: Mapping[str, Any], several: bool, order: str
) -> str:
    if options:
        base = _spec(name, tuple(sorted(options.items())))
    elif name == "actual":
        base = "perfect"
    elif name == PAPER_SJBF and order != "priority":
        base = "EASY++"
    else:
        base = name
    if several:
        base = f"{base} ({given['correction']})"
    return base


# --------------------------------------------------------------------------- workloads


@attrs.frozen
class WorkloadSource:
    """A workload of the experiment: its ``label`` in the tables and its ``source``
    for :func:`schedlab.read` (a path, or a generator spec with its seed)."""

    label: str
    source: str


def resolve_workload(text: str, seed: int | None = None) -> WorkloadSource:
    """A path (labelled by its file name without ``.gz`` and ``.swf``) or a generator
    spec (``seed=`` added when the generator takes one and the spec names none);
    anything else is a one-line :class:`~schedlab.UsageError`."""
    from schedlab import get_registry

    text = text.strip()
    if os.path.exists(text):
        name = Path(text).name
        for suffix in (".gz", ".swf"):
            name = name.removesuffix(suffix)
        return WorkloadSource(name, text)
    registry = get_registry()
    generator, options = parse_spec(text)
    if not generator or not registry.has("generator", generator):
        raise UsageError(
            f"--workload {text}: no such file, and not a generator spec "
            f"(generators: {', '.join(sorted(s.name for s in registry.all('generator')))})"
        )
    spec = registry.get("generator", generator)
    if seed is not None and "seed" not in options and any(o.name == "seed" for o in spec.options):
        text = f"{text}{',' if options else ':'}seed={seed}"
    return WorkloadSource(text, text)


def _same_file(a: str, b: str) -> bool:
    """Whether the paths ``a`` and ``b`` name one file (``x.swf`` and ``./x.swf``)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _check_distinct_labels(sources: Sequence[WorkloadSource]) -> None:
    """The tables key on the labels, so two workloads with one label are a one-line
    :class:`~schedlab.UsageError`: "given twice" when they are one workload (the
    same spec, or the same file by any path), otherwise naming the label and both
    sources (``d1/x.swf`` and ``d2/x.swf``, or ``a.swf`` and ``a.swf.gz``)."""
    first: dict[str, WorkloadSource] = {}
    for source in sources:
        earlier = first.setdefault(source.label, source)
        if earlier is source:
            continue
        if earlier.source == source.source or _same_file(earlier.source, source.source):
            raise UsageError(f"--workload {source.source}: the same workload is given twice")
        raise UsageError(
            f"--workload {source.source}: its label {source.label!r} is already used by "
            f"{earlier.source} (the tables key on the label: rename one file)"
        )


def load_workload(
    source: WorkloadSource,
    jobs: int | None = None,
    reader: str | None = None,
    read_options: Mapping[str, Any] | None = None,
) -> Any:
    """Read (or generate) ``source`` and keep its first ``jobs`` jobs (all when
    ``None``); a trace file is read with ``reader`` and ``read_options`` (a
    generator spec takes its options in the spec). A workload none of whose jobs
    has a requested time is a one-line :class:`~schedlab.UsageError`: the
    experiment is about user estimates."""
    if os.path.exists(source.source):
        workload = schedlab.read(source.source, format=reader, **dict(read_options or {}))
    else:
        workload = schedlab.read(source.source)
    columns = workload.to_arrays()
    if jobs is not None and jobs < len(columns):
        columns = columns.take(np.arange(jobs))
        kept = schedlab.Workload.from_arrays(columns, header=workload.header)
        # the records the lenient read skipped stay counted (their note)
        kept.meta.update(
            {k: workload.meta[k] for k in ("skipped", "rejects") if k in workload.meta}
        )
        workload = kept
    requested = np.asarray(columns["requested_time"], dtype=np.float64)
    if len(requested) and not np.any(requested > 0):
        raise UsageError(
            f"--workload {source.source}: no job has a requested time (user estimate); "
            "give one with estimates, e.g. tsafrir-estimates:base=PATH or "
            "lublin:...,estimates=tsafrir"
        )
    return workload


# --------------------------------------------------------------------------- running


def measure(configuration: Configuration, workload: Any) -> tuple[Any, Any]:
    """Simulate ``workload`` with ``configuration`` and measure :data:`METRICS` by
    :data:`CLASS_GROUPING`: ``(result, report)``."""
    result = configuration.simulate(workload)
    report = schedlab.compute_metrics(result, names=list(METRICS), by=CLASS_GROUPING)
    return result, report


def _mean(report: Any, metric: str, group: str = "all") -> float | None:
    value = report.value(metric, "mean", group=group)
    return None if value is None else float(value)


def _relative(value: float | None, base: float | None) -> float | None:
    if value is None or base is None or base == 0:
        return None
    return value / base - 1.0


def result_row(
    workload: str, configuration: Configuration, result: Any, report: Any
) -> dict[str, Any]:
    """One row of ``estimates.csv`` (without the columns relative to the baseline)."""
    stats = result.stats
    return {
        "workload": workload,
        "jobs": len(result),
        "configuration": configuration.name,
        "policy": configuration.policy,
        "backfill": configuration.backfill_spec(),
        "estimator": configuration.estimator,
        "correction": configuration.correction,
        "wait_mean": _mean(report, "wait"),
        "wait_vs_easy": None,
        "bsld_mean": _mean(report, "bounded-slowdown"),
        "bsld_vs_easy": None,
        "prediction_mae": _mean(report, "prediction-error"),
        "under_prediction": _mean(report, "under-prediction"),
        "prediction_accuracy": _mean(report, "prediction-accuracy"),
        "corrections": int(stats.get("corrections", 0)),
        "jobs_corrected": int(stats.get("jobs_corrected", 0)),
    }


def class_rows(workload: str, configuration: Configuration, report: Any) -> list[dict[str, Any]]:
    """The rows of ``classes.csv``: one per accuracy class (and ``all``)."""
    rows = []
    for row in report.rows:
        group = str(row["group"])
        rows.append(
            {
                "workload": workload,
                "configuration": configuration.name,
                "class": group,
                "jobs": int(row["jobs"]),
                "users": int(row["users"]),
                "wait_mean": _mean(report, "wait", group),
                "bsld_mean": _mean(report, "bounded-slowdown", group),
                "prediction_mae": _mean(report, "prediction-error", group),
                "under_prediction": _mean(report, "under-prediction", group),
                "prediction_accuracy": _mean(report, "prediction-accuracy", group),
            }
        )
    return rows


@attrs.define(slots=True)
class EstimatesExperiment:
    """What the experiment produced: the rows of ``estimates.csv`` and
    ``classes.csv``, the notes per workload, the settings and the files written."""

    rows: list[dict[str, Any]]
    classes: list[dict[str, Any]]
    notes: dict[str, list[str]]
    settings: dict[str, Any]
    files: dict[str, Path] = attrs.field(factory=dict)

    def document(self) -> dict[str, Any]:
        """The content of ``estimates.json``."""
        return {
            "settings": self.settings,
            "results": self.rows,
            "classes": self.classes,
            "notes": self.notes,
        }


Progress = Callable[[str, str, float], None]


def run_estimates_experiment(
    workloads: Sequence[str],
    out: str | os.PathLike[str] | None = "estimates-results",
    estimators: str | Sequence[str] = DEFAULT_ESTIMATORS,
    corrections: str | Sequence[str] = DEFAULT_CORRECTIONS,
    order: str = "paper",
    psp: bool = True,
    jobs: int | None = None,
    seed: int | None = 1,
    figure: bool = True,
    progress: Progress | None = None,
    reader: str | None = None,
    read_options: Mapping[str, Any] | None = None,
) -> EstimatesExperiment:
    """Run the experiment (see the module docstring) and write its files into
    ``out`` (nothing is written when ``out`` is ``None``). ``progress(workload,
    configuration, seconds)`` is called after each simulation. ``reader`` and
    ``read_options`` read the trace files (``--from``, ``-R``; not the generator
    specs)."""
    import time

    if not workloads:
        raise UsageError("--workload: give at least one workload (a trace path or a spec)")
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs {jobs}: must be at least 1")
    grid = configurations(estimators, corrections, order, psp)
    sources = [resolve_workload(w, seed) for w in workloads]
    _check_distinct_labels(sources)
    if figure:
        from schedlab.experiment import require_plotting

        require_plotting()  # fail before simulating when matplotlib is missing
    rows: list[dict[str, Any]] = []
    per_class: list[dict[str, Any]] = []
    notes: dict[str, list[str]] = {}
    for source in sources:
        workload = load_workload(source, jobs, reader=reader, read_options=read_options)
        seen: dict[str, list[str]] = {}
        first: list[dict[str, Any]] = []
        for configuration in grid:
            began = time.perf_counter()
            result, report = measure(configuration, workload)
            first.append(result_row(source.label, configuration, result, report))
            per_class.extend(class_rows(source.label, configuration, report))
            for note in (*simulation_notes(result), *report.notes):
                names = seen.setdefault(str(note), [])
                if configuration.name not in names:
                    names.append(configuration.name)
            if progress is not None:
                progress(source.label, configuration.name, time.perf_counter() - began)
        base = first[0]
        for row in first:
            row["wait_vs_easy"] = _relative(row["wait_mean"], base["wait_mean"])
            row["bsld_vs_easy"] = _relative(row["bsld_mean"], base["bsld_mean"])
        rows.extend(first)
        said = [
            note if len(names) == len(grid) else f"{note} (in {', '.join(names)})"
            for note, names in seen.items()
        ]
        if not _has_users(workload):
            said.insert(
                0,
                "no job has a user id: PSP sees one anonymous user (one class, so FCFS "
                "order) and the per-user predictors share one history",
            )
        notes[source.label] = said
    settings = {
        "workloads": {s.label: s.source for s in sources},
        "jobs": jobs,
        "order": order,
        "corrections": split_list(corrections),
        "configurations": [c.to_dict() for c in grid],
        "metrics": list(METRICS),
        "classes": CLASS_GROUPING,
        "baseline": BASELINE,
    }
    experiment = EstimatesExperiment(rows, per_class, notes, settings)
    if out is not None:
        write_files(experiment, Path(out), figure=figure)
    return experiment


def _has_users(workload: Any) -> bool:
    users = np.asarray(workload.to_arrays()["user_id"], dtype=np.float64)
    return bool(np.any(users >= 0))


#: The files :func:`write_files` writes (all removed first).
OUTPUTS: tuple[str, ...] = (
    "estimates.csv",
    "classes.csv",
    "estimates.json",
    "estimates.txt",
    "estimates.png",
)


def write_files(experiment: EstimatesExperiment, out: Path, figure: bool = True) -> None:
    """Write the tables (CSV, JSON, Markdown) and the figure into ``out``."""
    from .tables import markdown

    files = experiment.files
    out.mkdir(parents=True, exist_ok=True)
    # An earlier run's files (its figure, when this run draws none) must not stay
    # beside this run's tables.
    remove_outputs(out, OUTPUTS)
    files["estimates.csv"] = write_table(experiment.rows, out / "estimates.csv")
    files["classes.csv"] = write_table(experiment.classes, out / "classes.csv")
    files["estimates.json"] = out / "estimates.json"
    write_atomic(
        files["estimates.json"],
        json.dumps(_clean(experiment.document()), indent=1, allow_nan=False) + "\n",
    )
    files["estimates.txt"] = out / "estimates.txt"
    write_atomic(files["estimates.txt"], markdown(experiment))
    if figure:
        from .figures import figure as draw

        for path in draw(experiment, out / "estimates", formats=("png",)):
            files[path.name] = path


def _clean(value: Any) -> Any:
    """NaN and infinities as ``None`` (JSON has neither), numpy scalars as Python's."""
    if isinstance(value, Mapping):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value
