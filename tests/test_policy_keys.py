"""A policy key the queue cannot sort by (None, NaN) is an error naming the policy:
a NaN key left the queue out of order, and EASY then stopped with an invariant
error blaming itself ("job 273 started but it is not waiting"); None keys were
taken silently as one shared key."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import schedlab
from schedlab import SimulationError

HPC2N = "HPC2N-2002_excerpt-3170jobs_alea.swf"


@pytest.fixture(scope="module")
def workload(swf_dir: Path):
    return schedlab.read(swf_dir / HPC2N)


class Keyed:
    """Submission order, except job ``bad`` at its submission gets ``value`` (with
    ``dynamic``: every job, once the queue is re-keyed after the first 200 keys)."""

    def __init__(self, value, bad: int, dynamic: bool = False) -> None:
        self.value, self.bad, self.dynamic = value, bad, dynamic
        self.calls = 0

    def key(self, job: int, now: float):
        self.calls += 1
        if (self.dynamic and self.calls > 200) or (not self.dynamic and job == self.bad):
            return self.value
        return float(job)


@pytest.mark.parametrize("value", [None, math.nan])
@pytest.mark.parametrize("backfill", ["easy", "conservative", "none"])
@pytest.mark.parametrize("dynamic", [False, True])
def test_an_unsortable_key_names_the_policy(workload, value, backfill, dynamic):
    policy = Keyed(value, bad=158, dynamic=dynamic)
    job = r"\d+" if dynamic else "158"
    pattern = rf"policy Keyed: key\({job}, .*\) returned (None|nan)"
    with pytest.raises(SimulationError, match=pattern):
        schedlab.simulate(workload, policy=policy, backfill=backfill)


def test_ordinary_keys_are_unchanged(workload):
    mine = schedlab.simulate(workload, policy=Keyed(0.0, bad=-1), backfill="easy")
    fcfs = schedlab.simulate(workload, policy="fcfs", backfill="easy")
    starts = mine.to_pandas()["start_time"]
    assert starts.equals(fcfs.to_pandas()["start_time"]) and starts.notna().all()
