"""Every policy x backfilling combination completes on the start of every real SWF
log in ../shared/data/swf, and the schedule it writes is valid SWF. (Whole logs are
simulated by benchmarks/bench_simulate.py.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab.model import Workload
from schedlab.validation import check_workload

pytestmark = pytest.mark.realdata

JOBS = 2000
POLICIES = ["fcfs", "sjf", "ljf", "smallest", "largest", "wfp3", "unicef", "psp", "multifactor"]
BACKFILLS = ["none", "easy", "conservative"]
LOGS = [
    "KTH-SP2-1996-2.1-cln.swf.gz",
    "LANL-CM5-1994-4.1-cln.swf.gz",
    "RICC-2010-2.swf.gz",
    "HPC2N-2002_excerpt-3170jobs_alea.swf",
    "NASA-iPSC-1993-3.1-cln.swf.gz",
    "LCG-2005-1.swf.gz",
    "lublin_256.swf",
    "wagap-2013_alea-extended.swf",
]


@pytest.fixture(scope="module")
def heads(swf_dir: Path) -> dict[str, Workload]:
    """The first JOBS jobs of every log (with its header)."""
    out = {}
    for name in LOGS:
        # wagap's Alea extension has 21 fields: read leniently, as the reader says.
        full = schedlab.read(swf_dir / name, lenient=name.startswith("wagap"))
        cols = full.to_arrays().take(np.arange(min(JOBS, len(full))))
        header = full.header.copy()
        if header.machine_size() is None:
            # wagap has no header; its machines (SOURCES.md): 20 x 80 + 48 x 12 CPUs.
            header.set("MaxProcs", 20 * 80 + 48 * 12)
        out[name] = Workload(header, columns=cols)
    return out


def test_every_log_is_listed(swf_dir: Path) -> None:
    found = sorted(p.name for p in swf_dir.iterdir() if ".swf" in p.name)
    assert found == sorted(LOGS)


@pytest.mark.parametrize("name", LOGS)
def test_every_policy_and_backfill_completes(heads: dict[str, Workload], name: str) -> None:
    w = heads[name]
    for policy in POLICIES:
        for backfill in BACKFILLS:
            result = schedlab.simulate(w, policy=policy, backfill=backfill, progress=False)
            stats = result.stats
            assert stats["jobs_simulated"] + stats["jobs_excluded"] == len(w), (policy, backfill)
            assert stats["jobs_simulated"] > 0
            cols = result.workload.to_arrays()
            assert np.all(cols["wait_time"] >= 0), (policy, backfill)


@pytest.mark.parametrize("name", LOGS)
def test_written_schedule_is_valid_swf(
    heads: dict[str, Workload], name: str, tmp_path: Path
) -> None:
    result = schedlab.simulate(heads[name], policy="psp", backfill="conservative", progress=False)
    out = tmp_path / "schedule.swf"
    schedlab.write(result.workload, out)
    back = schedlab.read(out)
    assert len(back) == len(result)
    np.testing.assert_allclose(
        back.to_arrays()["wait_time"], result.workload.to_arrays()["wait_time"]
    )
    errors = [
        f for f in check_workload(back) if f.severity == "error" and f.check != "unsorted-submit"
    ]
    assert errors == [], errors[:3]
    assert back.header.max_procs == result.procs
