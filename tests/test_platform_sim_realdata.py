"""Real traces on the platforms ``schedlab.platform.infer_platform`` writes for them
(the Google samples, every Grid Engine file and the Slurm dumps in
``../shared/data``): none, EASY and conservative; every job is simulated or
excluded with a counted reason, and the node-level schedule validates (no node
over-committed in any dimension at any instant, no job outside its partition).

Slurm is read through the ``schedlab-slurm`` example plugin (installed, as in
CI), registered explicitly because the suite disables plugin autoloading.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import schedlab
from schedlab.errors import SchedlabError
from schedlab.platform import NodeGroup, Partition, Platform, infer_platform

_spec = importlib.util.spec_from_file_location(
    "platform_sim_check", Path(__file__).with_name("platform_sim_check.py")
)
assert _spec is not None and _spec.loader is not None
check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check)

pytestmark = pytest.mark.realdata

STRATEGIES = ("none", "easy", "conservative")
#: Slurm files the plugin rejects on purpose (a short line, an unknown state):
#: their errors are the reader's tests, not these.
SLURM_REJECTED = {"slurm_sim_tools_sacct_dump2101.log"}  # a truncated record (one-line error)


def simulate_everywhere(workload: schedlab.Workload, platform: Platform) -> list[Any]:
    runs = []
    for backfill in STRATEGIES:
        r = check.run(workload, platform, backfill, kill=True)
        check.check_node_schedule(r)
        assert len(r.result) + sum(len(v) for v in r.excluded.values()) == len(workload)
        runs.append(r)
    return runs


def sge_files(shared: Path) -> list[Path]:
    return sorted(p for p in (shared / "sge").iterdir() if p.is_file())


@pytest.fixture(scope="module")
def slurm_registry() -> Any:
    from schedlab.testing import plugin_registry

    plugin = pytest.importorskip("schedlab_slurm.plugin")
    return plugin_registry(("slurm", plugin))


def test_grid_engine_files_on_inferred_platforms(shared_data: Path) -> None:
    simulated = 0
    for path in sge_files(shared_data):
        w = schedlab.read(path)
        inferred = infer_platform(w)
        assert any("sharing" in g for g in inferred.guesses), path.name
        for r in simulate_everywhere(w, inferred.platform):
            simulated += len(r.result)
            # Inference maps every queue to a partition: none is unknown.
            assert "unknown_partition" not in r.excluded, path.name
    assert simulated >= 3 * 140  # the 133-job ogetools file and the small ones


def test_grid_engine_jobs_run_in_their_queues_partition(shared_data: Path) -> None:
    w = schedlab.read(shared_data / "sge" / "pretty-accounting_sge6x_accounting.txt")
    platform = infer_platform(w).platform
    r = check.run(w, platform, "easy", kill=True)
    check.check_node_schedule(r)
    names = {p.name for p in platform.partitions}
    used = {r.machine.partitions[p].name for p in r.state.partition_of}
    assert used <= names and len(used) >= 2  # several queues, several partitions


def test_slurm_dumps_on_inferred_platforms(shared_data: Path, slurm_registry: Any) -> None:
    from schedlab.testing import using_registry

    totals = {"jobs": 0, "simulated": 0}
    with using_registry(slurm_registry):
        for path in sorted((shared_data / "slurm").iterdir()):
            if path.name in SLURM_REJECTED:
                with pytest.raises(SchedlabError, match=path.name):
                    schedlab.read(path, format="slurm")
                continue
            w = schedlab.read(path, format="slurm")
            platform = infer_platform(w).platform
            for r in simulate_everywhere(w, platform):
                totals["jobs"] += len(w)
                totals["simulated"] += len(r.result)
    assert totals["jobs"] >= 3 * 25
    assert totals["simulated"] >= 3 * 11  # the files whose nodes the inference sizes


def test_slurm_multi_node_jobs_on_a_platform_from_their_hosts(
    shared_data: Path, slurm_registry: Any
) -> None:
    """``infer_platform`` does not read Slurm node lists yet (one-core nodes from
    the largest job: multi-node jobs never fit); a platform sized from the hosts
    the jobs ran on (cores per node = CPUs / nodes) runs every complete job."""
    from schedlab.testing import using_registry

    with using_registry(slurm_registry):
        w = schedlab.read(shared_data / "slurm" / "xdmod_accounting-logs.log", format="slurm")
    hosts: dict[str, int] = {}
    for j in w.jobs:
        if j.hosts and j.allocated_processors:
            per_node = -(-int(j.allocated_processors) // len(j.hosts))
            for h in j.hosts:
                hosts[h] = max(hosts.get(h, 0), per_node)
    cores = max(hosts.values())
    platform = Platform(
        (NodeGroup("hosts", len(hosts), cores),), (Partition("general-compute", ("hosts",)),)
    )
    for r in simulate_everywhere(w, platform):
        assert set(r.excluded) <= {"no_size"}, r.excluded  # the one job with no CPUs
        assert len(r.result) == len(w) - 1
        # Each job gets as many whole nodes as it ran on.
        for j in range(len(r.state.table)):
            assert len(r.allocations[j][0]) == r.state.demand[j].nodes


def test_google_2011_sample_on_its_inferred_platform(shared_data: Path) -> None:
    w = schedlab.read(shared_data / "google" / "clusterdata2011_v2_sample")
    platform = infer_platform(w).platform
    assert platform.total_nodes == 1523 and platform.total_cores == 76150
    # The sample's collections were all submitted before the trace window: no
    # submission time, so every one is excluded, with that reason, never lost.
    for r in simulate_everywhere(w, platform):
        assert len(r.result) == 0
        assert list(r.excluded) == ["no_submit_time"] and len(r.excluded["no_submit_time"]) == 670


def test_google_2019_sample_says_it_has_no_machine_size(shared_data: Path) -> None:
    folder = shared_data / "google" / "clusterdata2019_v3_sample"
    w = schedlab.read(folder)
    with pytest.raises(SchedlabError, match="tells no machine size"):
        infer_platform(w)
    # On a platform written by hand, its one collection has no submission time.
    r = check.run(w, Platform.single_pool(4), "easy", kill=True)
    check.check_node_schedule(r)
    assert len(r.result) == 0 and r.excluded == {"no_submit_time": [1]}
