"""Schedules recorded before the simulator's strategies became plugins are still
produced, bit for bit: the SHA-256 of every run's start times is compared with
``tests/data/schedule_digests.json`` (written by ``tests/schedule_digests.py
--write`` on the engine before the change).

This runs a representative part in the suite (every policy x strategy on two real
logs, the kill=False variant and FCFS/SJF on a 20,000-job prefix of every large log);
``python tests/schedule_digests.py [--full]`` checks all 280 recorded runs (and the
whole KTH-SP2, LANL-CM5 and RICC-2010 logs under FCFS with ``--full``).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("schedule_digests", HERE / "schedule_digests.py")
assert _spec is not None and _spec.loader is not None
digests = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(digests)

STORED = json.loads(digests.DIGESTS.read_text())
EVERYTHING_ON = {"HPC2N-2002_excerpt-3170jobs_alea.swf", "NASA-iPSC-1993-3.1-cln.swf.gz"}


def selected() -> list[tuple]:
    chosen = []
    for case in digests.cases():
        log, _first, policy, _backfill, kill = case
        if log in EVERYTHING_ON or not kill or policy in {"fcfs", "sjf"}:
            chosen.append(case)
    return chosen


@pytest.mark.realdata
@pytest.mark.parametrize("case", selected(), ids=digests.key)
def test_schedule_is_unchanged(case: tuple, shared_data: Path) -> None:
    assert digests.run(case) == STORED[digests.key(case)]


def test_the_suite_checks_every_policy_and_strategy() -> None:
    chosen = selected()
    assert {c[2] for c in chosen} == set(digests.POLICIES)
    assert {c[3] for c in chosen} == set(digests.BACKFILLS)
    assert len(STORED) >= len(digests.cases())
