"""Compiled node-level EASY loads its kernels when the strategy is bound (as
compiled single-pool EASY warms its kernels up then), for the very argument types
of the run: the simulation's time then holds no loading, and the run adds no
second compiled version."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("numba")

CHILD = r"""
import sys, numpy as np, schedlab
from schedlab.model import Header, Workload
from schedlab.policies.backfill import easy_nodes_kernels as kn
from schedlab.sim.runner import run_simulation
platform = sys.argv[1]
n = 400
rng = np.random.default_rng(3)
header = Header()
header.set("MaxProcs", 32)
w = Workload.from_arrays({
    "job_number": np.arange(1, n + 1),
    "submit_time": np.sort(rng.integers(0, 2000, n)),
    "run_time": rng.integers(1, 300, n),
    "requested_time": rng.integers(300, 600, n),
    "requested_processors": rng.integers(1, 9, n),
    "requested_memory": rng.integers(1, 2 ** 20, n),
    "status": np.ones(n),
}, header=header)
seen = {}
def inspect(engine):
    if sys.argv[2] == "per-pass":
        engine.state.reservation_log = {}
    seen["engine"] = engine
real_setup = None
def bound():
    return len(kn.node_easy_run.signatures), len(kn.node_easy_pass.signatures)
import schedlab.sim.engine as engine_module
setup = engine_module.Engine.setup
def checked_setup(self):
    setup(self)
    seen["after_bind"] = bound()
engine_module.Engine.setup = checked_setup
r = run_simulation(w, policy="fcfs", backfill="easy", procs=None, platform=platform,
                   estimator="requested", kill=True, dependencies=False, policy_options=None,
                   backfill_options={"kernel": "compiled"}, estimator_options=None,
                   registry=None, progress=False, inspect=inspect)
print(seen["after_bind"], bound(), r.stats["whole_run"])
"""


@pytest.mark.parametrize("mode", ["whole", "per-pass"])
def test_kernels_loaded_at_bind_for_the_run_types(tmp_path, mode: str) -> None:
    platform = tmp_path / "p.toml"
    platform.write_text(
        '[platform]\nsharing = "shared"\n[node_groups.node]\ncount = 4\ncores = 8\n'
        'memory = "8GiB"\n[partitions.all]\nnodes = ["node"]\n'
    )
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(platform), mode],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")[-2]
    # Loaded when bound (one version each), and the run compiled no other.
    assert out == f"(1, 1) (1, 1) {mode == 'whole'}"
