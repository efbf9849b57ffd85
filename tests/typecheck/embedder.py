"""A third-party module that embeds schedlab and ships a small plugin, written as an
outside package would: only names exported by ``schedlab`` are imported.

It is never run by the test suite; CI type-checks it with ``mypy --strict`` against
the installed wheel (``.ci/wheel-smoke``), so a public signature that loses its
types, or an exported name that type checkers cannot see, fails there.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import schedlab
from schedlab import (
    FormatError,
    Job,
    MetricSpec,
    OptionSpec,
    PolicySpec,
    ReaderSpec,
    SchedlabDeprecationWarning,
    SchedlabError,
    Workload,
    hookimpl,
)

SCHEDLAB_API = ">=0.1,<0.2"


def read_pairs(source: str | os.PathLike[str], lenient: bool = False) -> Workload:
    """Read 'submit run' pairs, one job per line."""
    jobs: list[Job] = []
    with schedlab.open_binary(source) as fh:
        for number, raw in enumerate(fh, 1):
            parts = raw.decode("utf-8").split()
            if len(parts) != 2:
                if lenient:
                    continue
                raise FormatError("expected 2 fields", source=str(source), line=number)
            jobs.append(Job(job_number=number, submit_time=float(parts[0]),
                            run_time=float(parts[1]), allocated_processors=1))
    return Workload.from_jobs(jobs)


def mean_run_time(columns: schedlab.JobColumns) -> float:
    """A metric over whole columns."""
    run: npt.NDArray[np.float64] = np.asarray(columns["run_time"], dtype=np.float64)
    return float(np.nanmean(run)) if len(run) else 0.0


@hookimpl
def schedlab_readers() -> Iterable[ReaderSpec]:
    return [
        ReaderSpec(
            name="pairs",
            read=read_pairs,
            suffixes=(".pairs",),
            options=(OptionSpec("lenient", bool, False, "skip bad lines"),),
        )
    ]


@hookimpl
def schedlab_metrics() -> Iterable[MetricSpec]:
    return [MetricSpec(name="mean-run", compute=mean_run_time, unit="s", better="")]


@hookimpl
def schedlab_policies() -> Iterable[PolicySpec]:
    return []


def study(trace: Path, out: Path) -> dict[str, float]:
    """Embed schedlab: read, simulate, measure, write."""
    registry = schedlab.build_registry(plugins=[("pairs", __import__(__name__))])
    workload: Workload = schedlab.read(trace, registry=registry)
    result = schedlab.simulate(workload, policy="sjf", backfill="easy", registry=registry)
    report = schedlab.compute_metrics(result, by="user", registry=registry)
    written: Path = schedlab.write(result.workload, out / "schedule.swf")
    summary = {"jobs": float(len(workload)), "written": float(written.stat().st_size)}
    for row in report.rows:
        summary[str(row.get("group", "all"))] = float(row.get("jobs", 0))
    return summary


def safe_study(trace: Path, out: Path) -> dict[str, float] | str:
    try:
        return study(trace, out)
    except SchedlabError as exc:
        return f"{exc} (exit {exc.exit_code})"


def version() -> tuple[str, type[Warning]]:
    return schedlab.__version__, SchedlabDeprecationWarning
