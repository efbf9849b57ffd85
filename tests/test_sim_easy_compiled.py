"""The compiled EASY pass (``kernel=compiled``, numba) gives exactly the schedules
and head reservations of the Python pass and of the plainly written reference
(``DepthReference(1)``): every policy (static keys, re-sorted queues, dynamic keys), jobs
running past their estimate, dependencies, non-numeric keys, and real logs."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.errors import UsageError
from schedlab.model import Workload
from schedlab.policies.backfill.depth import DepthReference as Depth
from schedlab.policies.backfill.easy import Easy
from schedlab.sim.runner import run_simulation
from workload_rows import workload_from_rows

pytest.importorskip("numba")

POLICIES = ["fcfs", "sjf", "ljf", "smallest", "largest", "wfp3", "unicef", "psp", "multifactor"]


@st.composite
def workloads(draw: Any) -> Workload:
    """Random workloads, long enough for the queue to grow past the kernel's
    16-job blocks (arrival bursts, jobs of every size)."""
    procs = draw(st.integers(1, 16))
    n = draw(st.integers(1, 80))
    burst = draw(st.integers(1, 200))
    rows = []
    for _ in range(n):
        run = draw(st.integers(0, 40))
        rows.append(
            (
                draw(st.integers(0, burst)),
                run,
                draw(st.one_of(st.just(run), st.integers(1, 60))),
                draw(st.integers(1, procs)),
                draw(st.integers(1, 4)),
            )
        )
    return workload_from_rows(
        rows,
        procs,
        preceding_job_number=[
            (i - 2 if i > 2 and r[4] == 1 else -1) for i, r in enumerate(rows, 1)
        ],
        think_time=[5] * n,
    )


def run(w: Workload, policy: Any, backfill: Any, **kw: Any) -> tuple[list[float], dict]:
    """Start times and every reservation the head held, per job."""
    seen: dict[str, Any] = {}

    def inspect(engine: Any) -> None:
        engine.state.reservation_log = {}
        seen["state"] = engine.state

    result = run_simulation(
        w,
        policy=policy,
        backfill=backfill,
        procs=None,
        estimator=kw.pop("estimator", "requested"),
        kill=kw.pop("kill", True),
        dependencies=kw.pop("dependencies", False),
        policy_options=None,
        backfill_options=None,
        estimator_options=None,
        registry=None,
        progress=False,
        inspect=inspect,
    )
    assert not kw
    if isinstance(backfill, Easy):
        assert result.stats["kernel"] == backfill.kernel
    return result.start.tolist(), seen["state"].reservation_log


@pytest.mark.parametrize("policy", POLICIES)
@settings(max_examples=25, deadline=None)
@given(w=workloads(), kill=st.booleans(), dependencies=st.booleans())
def test_compiled_equals_python_and_reference(
    policy: str, w: Workload, kill: bool, dependencies: bool
) -> None:
    kw = {"kill": kill, "dependencies": dependencies}
    compiled, compiled_log = run(w, policy, Easy(kernel="compiled"), **kw)
    python, python_log = run(w, policy, Easy(kernel="python"), **kw)
    reference, _ = run(w, policy, Depth(1), **kw)
    assert compiled == python == reference
    assert compiled_log == python_log


class TupleKeys:
    """Smallest job first, by a tuple key: not a number, so the compiled pass takes
    the arrivals' positions from the queue instead of comparing keys itself."""

    name = "tuple-keys"

    def bind(self, table: Any) -> None:
        self.size = table.size

    def key(self, job: int, now: float) -> tuple[int, int]:
        return (self.size[job], -job)


class LateFractionKeys:
    """Plain numbers at first, then fractions (which compare with them): the
    compiled pass switches from its own key comparisons to the queue's positions
    mid-run."""

    name = "late-fraction-keys"

    def bind(self, table: Any) -> None:
        self.size = table.size

    def key(self, job: int, now: float) -> Any:
        return self.size[job] * 0.5 if job < 10 else Fraction(self.size[job] * 2 + 1, 4)


@pytest.mark.parametrize("policy", [TupleKeys, LateFractionKeys])
@settings(max_examples=25, deadline=None)
@given(w=workloads())
def test_non_numeric_keys(policy: Any, w: Workload) -> None:
    compiled, compiled_log = run(w, policy(), Easy(kernel="compiled"))
    python, python_log = run(w, policy(), Easy(kernel="python"))
    assert compiled == python
    assert compiled_log == python_log


def test_options() -> None:
    with pytest.raises(UsageError, match="kernel='fast'"):
        Easy(kernel="fast")
    with pytest.raises(UsageError, match="order=priority only"):
        Easy(order="sjbf", kernel="compiled")
    # auto: small runs stay in Python when numba is not loaded yet, SJBF always.
    assert not Easy(order="sjbf")._use_compiled(10**6)


def test_schedlab_jit_0_turns_the_compiled_pass_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEDLAB_JIT", "0")
    assert not Easy()._use_compiled(10**6)
    assert Easy(kernel="compiled")._use_compiled(10)


@pytest.mark.realdata
@pytest.mark.parametrize("policy", ["fcfs", "psp", "wfp3"])
def test_real_log_prefix(shared_data: Path, policy: str) -> None:
    """The first 6,000 jobs of LANL-CM5 (a queue of hundreds): same schedule."""
    w = schedlab.read(shared_data / "swf" / "LANL-CM5-1994-4.1-cln.swf.gz")
    w = Workload(w.header, columns=w.to_arrays().take(np.arange(6000)))
    compiled, compiled_log = run(w, policy, Easy(kernel="compiled"))
    python, python_log = run(w, policy, Easy(kernel="python"))
    assert compiled == python
    assert compiled_log == python_log


def test_auto_chooses_by_run_length_and_whether_numba_is_loaded(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from schedlab.policies.backfill import easy as easy_module

    w = schedlab.read(shared_data / "swf" / "lublin_256.swf")
    n = len(w.to_arrays())
    assert "numba" in sys.modules  # (imported above by importorskip)
    monkeypatch.setattr(easy_module, "COMPILED_MIN_JOBS", n + 1)
    assert schedlab.simulate(w, "fcfs", "easy").stats["kernel"] == "python"
    monkeypatch.setattr(easy_module, "COMPILED_MIN_JOBS", n)
    compiled = schedlab.simulate(w, "fcfs", "easy")
    assert compiled.stats["kernel"] == "compiled"
    # In a fresh process (numba not loaded) the bar is higher.
    monkeypatch.delitem(sys.modules, "numba")
    monkeypatch.setattr(easy_module, "COMPILED_COLD_MIN_JOBS", n + 1)
    python = schedlab.simulate(w, "fcfs", "easy")
    assert python.stats["kernel"] == "python"
    assert compiled.start.tolist() == python.start.tolist()
    monkeypatch.setenv("SCHEDLAB_JIT", "0")
    monkeypatch.setattr(easy_module, "COMPILED_MIN_JOBS", 0)
    assert schedlab.simulate(w, "fcfs", "easy").stats["kernel"] == "python"
