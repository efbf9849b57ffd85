"""The simulator's memory savings keep every value: the job table's floats shared
per distinct value, its rarely read columns compact or gathered on first access,
the output workload built without gathering the columns the run replaces, and the
compiled conservative strategy without the waiting-job arrays it does not read.
(Peak memory itself is measured by ``benchmarks/bench_simulate.py``.)"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.model import SWF_FIELDS, Header, Workload
from schedlab.sim import runner
from schedlab.sim.prepare import OrderedColumns, _shared_floats, prepare
from schedlab.sim.result import KILLED_STATUS

POOL = [0.0, -0.0, 1.0, 2.5, 3600.0, 1e12, math.nan, math.inf, -1.0]


def _same(a: list[float], b: list[float]) -> bool:
    """Equal lists of floats, NaN for NaN and the sign of zero included."""
    return len(a) == len(b) and all(
        type(x) is float
        and (x == y or (x != x and y != y))
        and math.copysign(1, x) == math.copysign(1, y)
        for x, y in zip(a, b, strict=True)
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(POOL), min_size=1, max_size=6),
    st.integers(min_value=0, max_value=3000),
    st.integers(min_value=0, max_value=2**31),
)
def test_shared_floats_are_the_values_listed(pool: list[float], n: int, seed: int) -> None:
    values = np.random.default_rng(seed).choice(np.array(pool), size=n)
    out = _shared_floats(values)
    assert _same(out, values.tolist())
    if n >= 1024 and not (np.signbit(values) & (values == 0)).any():
        # One object per distinct value (NaN included).
        assert len({id(x) for x in out}) <= len(set(pool))


def test_many_distinct_floats_are_listed_plainly() -> None:
    values = np.arange(5000, dtype=np.float64) / 7
    assert _same(_shared_floats(values), values.tolist())


@pytest.fixture(scope="module")
def kth(swf_dir: Path) -> Workload:
    return schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")


@pytest.mark.realdata
def test_the_table_holds_what_plain_lists_held(kth: Workload) -> None:
    prepared, cols = prepare(kth, 100, True, False)
    table, order = prepared.table, prepared.order
    assert list(table.row) == order.tolist()
    n = len(order)  # no dependencies: nobody waits, nobody thinks
    assert list(prepared.predecessor) == [-1] * n and list(prepared.think_time) == [0.0] * n
    numbers = cols["job_number"][order]
    assert list(table.job_number) == np.where(np.isnan(numbers), -1, numbers).astype(int).tolist()
    assert _same(table.submit, cols["submit_time"][order].tolist())
    requested = cols["requested_time"][order]
    assert _same(table.requested_time, requested.tolist())
    run = cols["run_time"][order]
    assert _same(table.run_time, np.where(run > requested, requested, run).tolist())
    assert isinstance(table.columns, OrderedColumns)
    assert list(table.columns) == list(SWF_FIELDS) and len(table.columns) == len(SWF_FIELDS)
    for name in SWF_FIELDS:
        np.testing.assert_array_equal(table.columns[name], cols[name][order])
    assert table.columns["user_id"] is table.columns["user_id"]  # gathered once
    with pytest.raises(KeyError):
        table.columns["no_such_field"]


@pytest.mark.realdata
def test_the_output_keeps_the_input_and_marks_the_killed(kth: Workload) -> None:
    before = {name: kth.to_arrays()[name].copy() for name in SWF_FIELDS}
    result = schedlab.simulate(kth, backfill="conservative", progress=False)
    out = result.workload.to_arrays()
    rows = result.rows
    for name in SWF_FIELDS:  # the input is untouched
        np.testing.assert_array_equal(kth.to_arrays()[name], before[name])
    kept = set(SWF_FIELDS) - {
        "submit_time",
        "wait_time",
        "run_time",
        "allocated_processors",
        "status",
    }
    for name in kept:
        np.testing.assert_array_equal(out[name], before[name][rows])
    assert result.killed.any()
    status = before["status"][rows].copy()
    status[result.killed] = KILLED_STATUS
    np.testing.assert_array_equal(out["status"], status)
    np.testing.assert_array_equal(out["wait_time"], result.start - out["submit_time"])


def test_compiled_conservative_drops_the_waiting_arrays() -> None:
    pytest.importorskip("numba")
    header = Header()
    header.set("MaxProcs", 4)
    w = Workload.from_arrays(
        {
            "job_number": [1, 2, 3],
            "submit_time": [0, 1, 2],
            "run_time": [5, 10, 5],
            "requested_time": [20, 10, 5],
            "requested_processors": [4, 4, 1],
        },
        header=header,
    )
    seen = {}

    def inspect(engine: object) -> None:
        seen["engine"] = engine

    for kernel, dropped in (("compiled", True), ("python", False)):
        runner.run_simulation(
            w,
            policy="fcfs",
            backfill="conservative",
            procs=None,
            estimator="requested",
            kill=True,
            dependencies=False,
            policy_options=None,
            backfill_options={"kernel": kernel},
            estimator_options=None,
            registry=None,
            progress=False,
            inspect=inspect,
        )
        assert (seen["engine"].state.arrays is None) is dropped  # type: ignore[attr-defined]


@pytest.mark.realdata
def test_large_reads_tune_the_allocator_small_ones_do_not(
    swf_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from schedlab.formats.swf import reader

    calls: list[str] = []
    monkeypatch.setattr(reader, "_keep_large_blocks_returnable", lambda: calls.append("mmap"))
    monkeypatch.setattr(reader, "_give_back_freed_memory", lambda: calls.append("trim"))
    small = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")  # ~4 MiB of text
    assert calls == [] and len(small) == 28_476
    large = schedlab.read(swf_dir / "LANL-CM5-1994-4.1-cln.swf.gz")  # ~21 MiB, 122,060 jobs
    assert calls == ["mmap", "trim"] and len(large) == 122_060
    # The real calls are harmless (no-ops off glibc), and the first one sticks.
    monkeypatch.undo()
    reader._keep_large_blocks_returnable()
    reader._give_back_freed_memory()
    assert reader._threshold_fixed
