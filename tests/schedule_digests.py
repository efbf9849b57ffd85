"""Digests of simulated schedules, to prove a refactor of the simulator changes no
schedule: ``python tests/schedule_digests.py --write`` records them (before the
change); the test ``tests/test_sim_digests.py`` compares.

A digest is the SHA-256 of the start times (float64, input order) of one run.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DIGESTS = HERE / "data" / "schedule_digests.json"
SWF = Path(os.environ.get("SCHEDLAB_SHARED_DATA", HERE.parent.parent / "shared" / "data")) / "swf"

#: (log, first jobs or None, lenient) -> policies x backfills run on it.
SMALL_LOGS = [
    ("HPC2N-2002_excerpt-3170jobs_alea.swf", None),
    ("NASA-iPSC-1993-3.1-cln.swf.gz", None),
    ("lublin_256.swf", None),
    ("KTH-SP2-1996-2.1-cln.swf.gz", None),
    ("LANL-CM5-1994-4.1-cln.swf.gz", 20000),
    ("LCG-2005-1.swf.gz", 20000),
    ("RICC-2010-2.swf.gz", 20000),
]
POLICIES = ["fcfs", "sjf", "ljf", "smallest", "largest", "wfp3", "unicef", "psp", "multifactor"]
BACKFILLS = ["none", "easy", "conservative", "depth:depth=3"]
#: Whole logs, FCFS: the long runs (benchmarks/check_schedules.py).
FULL_LOGS = ["KTH-SP2-1996-2.1-cln.swf.gz", "LANL-CM5-1994-4.1-cln.swf.gz", "RICC-2010-2.swf.gz"]


def digest(values: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(values, dtype=np.float64).tobytes()).hexdigest()


def cases(full: bool = False, small: bool = True) -> list[tuple[str, int | None, str, str, bool]]:
    out = []
    for log, first in SMALL_LOGS if small else []:
        for policy in POLICIES:
            for backfill in BACKFILLS:
                out.append((log, first, policy, backfill, True))
        for backfill in BACKFILLS:
            out.append((log, first, "fcfs", backfill, False))  # kill=False
    if full:
        for log in FULL_LOGS:
            for backfill in ("none", "easy", "conservative"):
                out.append((log, None, "fcfs", backfill, True))
    return out


def key(case: tuple[str, int | None, str, str, bool]) -> str:
    log, first, policy, backfill, kill = case
    return f"{log}|{first}|{policy}|{backfill}|{'kill' if kill else 'nokill'}"


_loaded: dict = {}


def workload(log: str, first: int | None):
    import schedlab

    if (log, first) not in _loaded:
        w = schedlab.read(str(SWF / log))
        if first is not None:
            from schedlab.model import Workload

            cols = w.to_arrays().take(np.arange(first))
            w = Workload(w.header, columns=cols)
        _loaded[(log, first)] = w
    return _loaded[(log, first)]


def run(case: tuple[str, int | None, str, str, bool]) -> str:
    import schedlab

    log, first, policy, backfill, kill = case
    result = schedlab.simulate(workload(log, first), policy=policy, backfill=backfill,
                               kill=kill, progress=False)
    return digest(result.start)


if __name__ == "__main__":
    full = "--full" in sys.argv
    found = {key(c): run(c) for c in cases(full, small="--only-full" not in sys.argv)}
    if "--write" in sys.argv:
        old = json.loads(DIGESTS.read_text()) if DIGESTS.exists() else {}
        old.update(found)
        DIGESTS.write_text(json.dumps(old, indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(found)} digests")
    else:
        stored = json.loads(DIGESTS.read_text())
        bad = [k for k, v in found.items() if stored.get(k) != v]
        print(f"{len(found) - len(bad)} same, {len(bad)} differ")
        for k in bad:
            print("DIFFERS", k)
        sys.exit(1 if bad else 0)
