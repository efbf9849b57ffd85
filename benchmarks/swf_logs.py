"""The archive logs the benchmarks run on, by short name: files of
``../shared/data/swf`` beside the project's root (``DATA``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from schedlab.model import Workload

#: The project's root (the folder holding ``benchmarks/``).
ROOT = Path(__file__).resolve().parent.parent
#: The shared real traces, never copied into the project.
DATA = ROOT.parent / "shared" / "data" / "swf"
#: Short name -> file name in ``DATA``.
LOGS = {
    "KTH": "KTH-SP2-1996-2.1-cln.swf.gz",
    "LANL": "LANL-CM5-1994-4.1-cln.swf.gz",
    "RICC": "RICC-2010-2.swf.gz",
}

#: The columns :func:`first_jobs` keeps (what a simulation without dependencies
#: reads, and the metrics).
COLUMNS = (
    "job_number",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_processors",
    "requested_processors",
    "requested_time",
    "status",
    "user_id",
)


def first_jobs(workload: Workload, n: int, squeeze: float = 1.0) -> Workload:
    """The first ``n`` jobs of ``workload`` (:data:`COLUMNS` only), submit times
    divided by ``squeeze`` (and floored) to raise the load."""
    cols = workload.to_arrays().take(np.arange(min(n, len(workload))))
    data = {name: cols[name].copy() for name in COLUMNS}
    if squeeze != 1:
        data["submit_time"] = np.floor(data["submit_time"] / squeeze)
    return Workload.from_arrays(data, workload.header.copy())
