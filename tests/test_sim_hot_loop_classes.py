"""The classes whose attributes the pass-by-pass event loop reads at every event
define no ``__getattr__`` or ``__getattribute__``.

A class that defines either makes every attribute read of its instances go through
CPython's slower hooked lookup (the adaptive interpreter specialises attribute
loads only for the generic one): measured on Python 3.11, a plain attribute read
4.6 times slower, and 1,000-job FCFS + EASY runs (``psp-fing`` sweeps) 30-40 %
slower when ``SchedulerState`` had such a hook for whole runs' lazy lists. Speed
is measured by the benchmarks, not here; this pins the cause.
"""

from __future__ import annotations

import numpy as np
import pytest
import schedlab
from schedlab.sim.engine import Engine
from schedlab.sim.machine import NodeMachine, PartitionNodes
from schedlab.sim.profile import Profile
from schedlab.sim.runner import run_simulation
from schedlab.sim.state import SchedulerState

HOT = [SchedulerState, Engine, NodeMachine, PartitionNodes, Profile]


def _hooks(cls: type) -> list[str]:
    return [
        f"{base.__qualname__}.{hook}"
        for base in cls.__mro__
        if base is not object
        for hook in ("__getattr__", "__getattribute__")
        if hook in vars(base)
    ]


@pytest.mark.parametrize("cls", HOT, ids=lambda c: c.__name__)
def test_hot_loop_classes_have_no_attribute_hook(cls: type) -> None:
    assert _hooks(cls) == []


def test_built_in_strategies_and_policies_have_no_attribute_hook() -> None:
    """The strategy and policy objects a pass-by-pass run binds (their attributes
    are read at every pass), looked up through the registry."""
    rng = np.random.default_rng(3)
    n = 200
    run = rng.integers(1, 500, n).astype(float)
    w = schedlab.Workload.from_arrays(
        {
            "job_number": np.arange(1, n + 1),
            "submit_time": np.cumsum(rng.integers(0, 60, n)).astype(float),
            "run_time": run,
            "requested_time": run * 2,
            "requested_processors": rng.integers(1, 9, n),
        }
    )
    engines: list[Engine] = []
    for backfill in ("none", "easy", "conservative"):
        for policy in ("fcfs", "sjf", "psp"):
            result = run_simulation(
                w, policy=policy, backfill=backfill, procs=16, estimator="requested",
                kill=False, dependencies=False, policy_options=None,
                backfill_options=None if backfill == "none" else {"kernel": "python"},
                estimator_options=None,
                registry=None, progress=False, inspect=engines.append,
            )  # fmt: skip
            assert result.stats["jobs_simulated"] == n
    assert len(engines) == 9
    for engine in engines:
        assert not engine.whole_run or type(engine.state) is not SchedulerState
        for obj in (engine.strategy, engine.policy):
            assert _hooks(type(obj)) == [], type(obj)
        if not engine.whole_run:
            assert type(engine.state) is SchedulerState
