"""schedlab's ``infer_platform`` on Slurm dumps: the hosts of ``NodeList`` and the
partitions jobs ran in make the starting platform, and a simulation runs on it."""

from __future__ import annotations

from pathlib import Path

import schedlab
from schedlab.platform import infer_platform


def test_dump_infers_its_hosts_and_simulates_on_them(slurm_dir: Path) -> None:
    w = schedlab.read(slurm_dir / "slurm_sim_tools_sacct_dump2110.log")
    hosts = {h for j in w.jobs for h in j.hosts}
    found = infer_platform(w)
    assert found.platform.node_groups[0].count == len(hosts) > 0
    result = schedlab.simulate(w, backfill="easy", platform=found.platform, progress=False)
    assert result.stats["jobs_simulated"] + result.stats["jobs_excluded"] == len(w)
    assert result.stats["jobs_simulated"] > 0
