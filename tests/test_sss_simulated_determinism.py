"""A simulated schedule written as SSS is the same bytes on every run: the run's
timing statistics (``schedlab.sim.TIMING_STATS``) stay out of the document's
``meta`` extension (CLI audit round 2)."""

from __future__ import annotations

import schedlab
from schedlab.sim import TIMING_STATS


def test_a_simulated_schedule_writes_the_same_sss_document_twice(swf_dir, tmp_path):
    workload = schedlab.read(swf_dir / "HPC2N-2002_excerpt-3170jobs_alea.swf")
    outputs = []
    for run in range(2):
        result = schedlab.simulate(workload, policy="fcfs", backfill="easy")
        assert result.workload.meta["simulation"]["stats"]["wall_time_s"] > 0
        folder = tmp_path / f"run{run}"
        folder.mkdir()
        path = folder / "schedule.xml"  # (the group's id is the file's name)
        schedlab.write(result.workload, path, format="sss")
        outputs.append(path.read_bytes())
    assert outputs[0] == outputs[1]
    text = outputs[0].decode()
    assert '"policy"' in text  # the run's description is carried ...
    assert not any(f'"{key}"' in text for key in TIMING_STATS)  # ... its timings are not
