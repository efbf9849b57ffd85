"""Differential tests: on a platform that is really one pool of N processors, the
node-level simulator gives the single-pool simulator's schedule job for job, on
real logs (KTH-SP2's first 2,000 jobs, the Lublin model's first 500: its
queues grow long, and the node-level EASY tries every waiting job).

Two such platforms: ONE node of N cores, shared (memory and GPUs unbounded), and
N one-core nodes, exclusive (``Platform.single_pool(N)``).

Conservative backfilling pins nodes: a node-level reservation holds given nodes,
where the single pool counts processors, so N one-core nodes may legitimately
differ. On the one-node platform, the node-level conservative re-plans every
reservation in priority order whenever a job ends (the later ones still held, so
none moves later), while the single-pool one compresses only into capacity freed
before the pass's horizon (:mod:`schedlab.policies.backfill.reference`): with
exact estimates (nothing ends early) they agree job for job; with requested times
they agree with the reference whose compression has no horizon.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from schedlab.invariants import ExactEstimates
from schedlab.platform import NodeGroup, Partition, Platform
from schedlab.policies.backfill.reference import ReferenceConservative

_spec = importlib.util.spec_from_file_location(
    "platform_sim_check", Path(__file__).with_name("platform_sim_check.py")
)
assert _spec is not None and _spec.loader is not None
check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check)

pytestmark = pytest.mark.realdata


def first(workload: schedlab.Workload, n: int) -> schedlab.Workload:
    return schedlab.Workload(
        workload.header.copy(), columns=workload.to_arrays().take(np.arange(n))
    )


@pytest.fixture(scope="module")
def logs(swf_dir: Path) -> dict[str, schedlab.Workload]:
    kth = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    lublin = schedlab.read(swf_dir / "lublin_256.swf")
    return {"kth": first(kth, 2000), "lublin": first(lublin, 500)}


def one_node(n: int) -> Platform:
    return Platform((NodeGroup("node", 1, n),), (Partition("all", ("node",), sharing="shared"),))


PLATFORMS = {"one shared node": one_node, "one-core exclusive nodes": Platform.single_pool}
STRATEGIES = [("none", None), ("easy", None), ("easy", {"order": "sjbf"})]


@pytest.mark.parametrize("log", ["kth", "lublin"])
@pytest.mark.parametrize("platform", list(PLATFORMS))
@pytest.mark.parametrize(("backfill", "options"), STRATEGIES)
def test_none_and_easy_on_a_single_pool_platform_equal_the_single_pool(
    logs: dict[str, schedlab.Workload],
    log: str,
    platform: str,
    backfill: str,
    options: dict[str, Any] | None,
) -> None:
    w = logs[log]
    n = int(w.header.machine_size() or 0)
    single = schedlab.simulate(w, backfill=backfill, backfill_options=options, progress=False)
    nodes = check.run(w, PLATFORMS[platform](n), backfill, backfill_options=options, kill=True)
    assert np.array_equal(nodes.result.start, single.start), (
        f"first differing rows: {np.flatnonzero(nodes.result.start != single.start)[:5]}"
    )
    assert np.array_equal(nodes.result.end, single.end)
    assert len(nodes.result) == len(single) and single.stats["jobs_excluded"] == 0
    check.check_node_schedule(nodes)


def test_conservative_on_one_shared_node_equals_the_single_pool_with_exact_estimates(
    logs: dict[str, schedlab.Workload],
) -> None:
    kill = True  # exact estimates: no job overruns, kill changes nothing
    w = first(logs["kth"], 1000)
    single = schedlab.simulate(
        w, backfill="conservative", estimator=ExactEstimates(), kill=kill, progress=False
    )
    nodes = check.run(w, one_node(100), "conservative", estimator=ExactEstimates(), kill=kill)
    assert np.array_equal(nodes.result.start, single.start)
    check.check_node_schedule(nodes)


def test_conservative_with_requested_times_and_overruns_is_feasible(
    logs: dict[str, schedlab.Workload],
) -> None:
    # KTH jobs overrun their requested time (no kill): stale reservations re-planned.
    w = first(logs["kth"], 600)
    nodes = check.run(w, Platform.single_pool(100), "conservative")
    check.check_node_schedule(nodes)
    assert len(nodes.result) == 600


class UnlimitedCompression(ReferenceConservative):
    """The single-pool reference conservative, compressing every reservation at
    every job end (not only at early ends): what the node-level conservative does
    by re-planning every reservation in priority order with the later ones still
    held."""

    def on_finish(self, j: int, now: float) -> None:
        super().on_finish(j, now)
        self.horizon = math.inf


def test_conservative_on_one_shared_node_equals_the_single_pool_with_unlimited_compression(
    logs: dict[str, schedlab.Workload],
) -> None:
    # Requested times as estimates: jobs end early and reservations are compressed.
    # (Without kill, overruns make stale reservations, which the two re-plan
    # differently: the reference re-plans every job from scratch, the node level
    # only the stale one.)
    w = first(logs["kth"], 1000)
    single = schedlab.simulate(w, backfill=UnlimitedCompression(), kill=True, progress=False)
    plain = schedlab.simulate(w, backfill=ReferenceConservative(), kill=True, progress=False)
    nodes = check.run(w, one_node(100), "conservative", kill=True)
    assert np.array_equal(nodes.result.start, single.start)
    # ... and so do the textbook compression at early ends only (the reference) and
    # the built-in single pool. (Before its compression offered the slots vacated by
    # later jobs to the earlier ones, the built-in single pool differed here.)
    assert np.array_equal(plain.start, single.start)
    builtin = schedlab.simulate(w, backfill="conservative", kill=True, progress=False)
    assert np.array_equal(builtin.start, single.start)
