"""The compiled conservative kernels (numba: ``policies/backfill/kernels.py`` and
``compiled.py``): the same schedules and reservation histories as the Python
implementation on a hand-made stale case, the start of every real log and mid-size
random workloads with job arrays (the hypothesis differential tests against the
reference, every policy and stale reservations included, are in
``test_sim_conservative_fast.py``); their profile primitives agree with
:class:`schedlab.sim.profile.Profile`; the engine picks them as documented."""

from __future__ import annotations

import builtins
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.errors import SimulationError
from schedlab.model import Header, Workload
from schedlab.policies.backfill import conservative as engine_module
from schedlab.sim.profile import Profile

jit = pytest.importorskip("schedlab.policies.backfill.kernels", reason="numba is not installed")


def test_a_stale_reservation_is_rebuilt_the_same_way(conservative: Any) -> None:
    """A hand-made case: job 1 runs past its estimate (no kill), so job 2's
    reservation comes due while its processors are still held."""
    header = Header()
    header.set("MaxProcs", 4)
    w = Workload.from_arrays(
        {
            "job_number": [1, 2, 3],
            "submit_time": [0, 1, 2],
            "run_time": [50, 10, 5],
            "requested_time": [20, 10, 5],
            "requested_processors": [4, 4, 1],
        },
        header=header,
    )
    ref, ref_log = conservative.run(w, "reference", kill=False)
    fast, fast_log = conservative.run(w, "compiled", kill=False)
    assert fast.start.tolist() == ref.start.tolist() == [0, 50, 60]
    assert fast_log == ref_log


#: Logs without requested times: estimates are the run times, nothing ends early.
NO_REQUESTED_TIMES = {"NASA-iPSC-1993-3.1-cln.swf.gz"}


@pytest.mark.parametrize(
    "name",
    [
        "KTH-SP2-1996-2.1-cln.swf.gz",
        "LANL-CM5-1994-4.1-cln.swf.gz",
        "RICC-2010-2.swf.gz",
        "NASA-iPSC-1993-3.1-cln.swf.gz",
        "HPC2N-2002_excerpt-3170jobs_alea.swf",
        "lublin_256.swf",
    ],
)
def test_compiled_equals_python_on_real_logs(swf_dir: Path, name: str, conservative: Any) -> None:
    """The first 4,000 jobs of real logs: the same schedule and the same moves as
    the Python implementation (itself checked against the reference)."""
    w = schedlab.read(swf_dir / name)
    columns = w.to_arrays()
    part = Workload.from_arrays(columns.take(np.arange(min(4000, len(columns)))), header=w.header)
    py, py_log = conservative.run(part, "python")
    fast, fast_log = conservative.run(part, "compiled")
    assert fast.start.tolist() == py.start.tolist()
    assert fast_log == py_log
    assert py_log  # reservations were made: the test compares something
    if name not in NO_REQUESTED_TIMES:
        assert sum(len(v) > 1 for v in py_log.values()) > 10  # and moved


def test_engine_chooses_the_kernels_by_run_length(
    swf_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = schedlab.read(swf_dir / "lublin_256.swf")
    # the first 2,000 jobs: the Python pass on all 10,000 (a crowded run) takes 12 s
    w = Workload(whole.header, columns=whole.to_arrays().take(np.arange(2000)))
    n = len(w.to_arrays())
    # (One threshold applies once numba is loaded, the other in a fresh process.)
    monkeypatch.setattr(engine_module, "COMPILED_MIN_JOBS", n + 1)
    monkeypatch.setattr(engine_module, "COMPILED_COLD_MIN_JOBS", n + 1)
    monkeypatch.setattr(engine_module, "CROWDED_JOBS", math.inf)
    assert schedlab.simulate(w, "fcfs", "conservative").stats["kernel"] == "python"
    monkeypatch.setattr(engine_module, "COMPILED_MIN_JOBS", n)
    monkeypatch.setattr(engine_module, "COMPILED_COLD_MIN_JOBS", n)
    compiled = schedlab.simulate(w, "fcfs", "conservative")
    assert compiled.stats["kernel"] == "compiled"
    monkeypatch.setenv("SCHEDLAB_JIT", "0")
    python = schedlab.simulate(w, "fcfs", "conservative")
    assert python.stats["kernel"] == "python"
    assert compiled.start.tolist() == python.start.tolist()
    # Strategies without a compiled pass never use them.
    monkeypatch.delenv("SCHEDLAB_JIT")
    assert schedlab.simulate(w, "fcfs", "none").stats["kernel"] == "python"


def test_asking_for_the_kernels_without_numba_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, conservative: Any
) -> None:
    header = Header()
    header.set("MaxProcs", 2)
    w = Workload.from_arrays(
        {"submit_time": [0], "run_time": [1], "requested_time": [1], "requested_processors": [1]},
        header=header,
    )
    real_import = builtins.__import__

    def no_jit(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.endswith("kernels") or (args and "kernels" in (args[2] or ())):
            raise ImportError("No module named 'numba'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_jit)
    with pytest.raises(SimulationError, match=r"needs numba: pip install 'schedlab\[fast\]'"):
        conservative.run(w, "compiled")
    # Left to decide, the engine falls back to Python.
    monkeypatch.setattr(engine_module, "COMPILED_MIN_JOBS", 0)
    monkeypatch.setattr(engine_module, "COMPILED_COLD_MIN_JOBS", 0)
    assert schedlab.simulate(w, "fcfs", "conservative").stats["kernel"] == "python"


@settings(max_examples=200, deadline=None)
@given(
    procs=st.integers(1, 12),
    ops=st.lists(
        st.tuples(st.integers(0, 60), st.integers(1, 40), st.integers(1, 12), st.booleans()),
        max_size=30,
    ),
    probes=st.lists(
        st.tuples(st.integers(1, 12), st.integers(1, 50), st.integers(0, 90)), max_size=8
    ),
)
def test_profile_primitives_agree_with_profile(
    procs: int, ops: list[tuple[int, int, int, bool]], probes: list[tuple[int, int, int]]
) -> None:
    """Reserving, releasing, advancing and searching give the same free processors
    and the same first fits as :class:`Profile` (slices may merge differently)."""
    python = Profile(procs, 0.0)
    kernel = jit.CompiledConservative(4, procs, 0.0, [1, 1, 1, 1])
    now = 0.0
    for start, length, size, advance in ops:
        if advance:
            now = max(now, float(start) / 2)
            python.advance(now)
            kernel.advance(now)
            continue
        s = min(size, procs)
        at = python.first_fit(s, float(length))
        assert jit.first_fit(kernel.times, kernel.free, kernel.meta, s, float(length)) == at
        python.reserve(at, at + length, s, True)
        jit.add(kernel.times, kernel.free, kernel.meta, at, at + length, -s, True)
        if start % 3 == 0:  # give part of it back
            python.release(at, at + length / 2, s)
            kernel.release(at, at + length / 2, s)

    def free_at(t: float, slices: list[tuple[float, int]]) -> int:
        value = slices[0][1]
        for start, f in slices:
            if start <= t:
                value = f
        return value

    reference = list(zip(python.times, python.free, strict=True))
    got = kernel.slices()
    assert got[0][0] == reference[0][0] == now
    for t in {x for x, _ in reference} | {x for x, _ in got}:
        assert free_at(t, got) == free_at(t, reference)
    for size, d, _ in probes:
        s = min(size, procs)
        assert jit.first_fit(kernel.times, kernel.free, kernel.meta, s, float(d)) == (
            python.first_fit(s, float(d))
        )


@pytest.mark.parametrize("seed", range(6))
def test_compiled_equals_python_on_mid_size_random_workloads(seed: int, conservative: Any) -> None:
    """A few hundred jobs with job arrays and long queues: the per-shape first fits
    (exact or bounds), the merging of slices and the bundles see far more states
    than in the small hypothesis cases."""
    rng = np.random.default_rng(seed)
    rows: list[tuple[float, float, float, int]] = []
    submit = 0.0
    while len(rows) < 600:
        submit += float(rng.exponential(30))
        requested = float(rng.choice([60, 600, 3600, 7200, 86400]))
        size = int(rng.choice([1, 2, 4, 8, 16, 32, 64]))
        for _ in range(int(rng.choice([1, 1, 1, 5, 20]))):
            run = float(rng.integers(0, int(requested * 1.2)))
            rows.append((submit, run, requested, size))
    header = Header()
    header.set("MaxProcs", 128)
    w = Workload.from_arrays(
        {
            "job_number": np.arange(1, len(rows) + 1),
            "submit_time": [r[0] for r in rows],
            "run_time": [r[1] for r in rows],
            "requested_time": [r[2] for r in rows],
            "requested_processors": [r[3] for r in rows],
        },
        header=header,
    )
    py, py_log = conservative.run(w, "python")
    fast, fast_log = conservative.run(w, "compiled")
    assert fast.start.tolist() == py.start.tolist()
    assert fast_log == py_log
    assert sum(len(v) > 1 for v in py_log.values()) > 50


def test_early_ends_and_starts_reach_the_kernels_with_the_next_step() -> None:
    """An early end is applied at the next step (or when the profile is read), and
    the jobs started leave the queue at their recorded positions, the stale one
    (due, not started) staying in its place."""
    kernel = jit.CompiledConservative(4, 4, 0.0, [2, 2, 2, 1])
    for j, estimate in enumerate([10.0, 10.0, 10.0, 5.0]):
        kernel.arrive(j, estimate)
    count, ahead = kernel.step(0.0, -float("inf"), False, [0, 1, 2, 3], [0, 1, 2, 3])
    # 4 processors: jobs 0 and 1 at 0, job 3 (1 processor) waits for them, job 2 too.
    assert (count, ahead) == (2, 10.0)
    assert kernel.due_now(count) == [0, 1]
    assert [float(kernel.reservation[j]) for j in (2, 3)] == [10.0, 10.0]
    # Start job 0 only (job 1 stays due: its processors are held by a late job).
    kernel.reservation[0] = np.nan
    kernel.drop_started()
    # Job 0 ends early at 4 (estimated end 10): the profile shows it once read.
    kernel.finish(4.0, 10.0, 2)
    assert kernel.finished == 1
    assert kernel.slices() == [(4.0, 2), (10.0, 1), (15.0, 2), (20.0, 4)]
    assert kernel.finished == 0 and not kernel.dropping
    queue = kernel.queue[: int(kernel.meta[1])].tolist()
    assert queue == [1, 2, 3]
    assert kernel.floats[jit.QUEUED_AT, :3].tolist() == [0.0, 10.0, 10.0]
    assert kernel.ints[jit.QUEUED_SHAPE, :3].tolist() == [int(kernel.shape[j]) for j in queue]


def test_the_kernels_run_as_plain_python_with_numba_jit_disabled(swf_dir: Path) -> None:
    """``NUMBA_DISABLE_JIT=1`` runs the compiled path's kernels in the interpreter
    (so they can be stepped through in a debugger), with the same schedule."""
    import os
    import subprocess
    import sys

    code = (
        "import sys, schedlab\n"
        "w = schedlab.read(sys.argv[1])\n"
        "from schedlab.model import Workload\n"
        "w = Workload(w.header, columns=w.to_arrays().take(list(range(600))))\n"
        "a = schedlab.simulate(w, backfill='conservative', "
        "backfill_options={'kernel': 'compiled'}, progress=False)\n"
        "b = schedlab.simulate(w, backfill='conservative', "
        "backfill_options={'kernel': 'python'}, progress=False)\n"
        "assert a.stats['kernel'] == 'compiled'\n"
        "print(a.start.tolist() == b.start.tolist())\n"
    )
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(swf_dir / "HPC2N-2002_excerpt-3170jobs_alea.swf")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


def test_a_crowded_run_uses_the_kernels_whatever_its_length(
    swf_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The Python pass's compressions grow with the queue: a run whose fluid model
    # queues 500 jobs or more (here 600 submitted at one instant, after 2,000 quiet
    # ones) goes to the kernels; the quiet part alone stays in Python.
    from schedlab.policies.backfill.conservative import peak_backlog
    from schedlab.testing import workload_from_rows

    monkeypatch.setattr(engine_module, "COMPILED_MIN_JOBS", 10**9)
    monkeypatch.setattr(engine_module, "COMPILED_COLD_MIN_JOBS", 10**9)
    quiet_rows = [(i * 100, 50, 1, 100) for i in range(2000)]
    burst = workload_from_rows(
        [*quiet_rows, *[(100_000, 50, 1 + i % 4, 100) for i in range(600)]], procs=8
    )
    quiet = workload_from_rows(quiet_rows, procs=8)
    peaks: list[float] = []
    real = engine_module.Conservative._use_compiled

    def spy(self: Any, state: Any) -> bool:
        peaks.append(peak_backlog(state))
        return real(self, state)

    monkeypatch.setattr(engine_module.Conservative, "_use_compiled", spy)
    crowded = schedlab.simulate(burst, "fcfs", "conservative")
    # 600 jobs of 250 processor-seconds on average at once: 150,000 processor-seconds
    # queued, over 1,100 jobs of the run's mean work (135, the quiet jobs' 100 included)
    assert crowded.stats["kernel"] == "compiled" and peaks[-1] >= 500
    calm = schedlab.simulate(quiet, "fcfs", "conservative")
    assert calm.stats["kernel"] == "python" and peaks[-1] == pytest.approx(1.0)
    forced = schedlab.simulate(burst, "fcfs", "conservative", backfill_options={"kernel": "python"})
    assert forced.stats["kernel"] == "python" and forced.start.tolist() == crowded.start.tolist()
