"""The compiled EASY pass's queue bounds stay bounds: after every pass, each block's
and super-block's smallest size and shortest estimate are at most those of the
waiting jobs in it (the scan skips a block or super-block on them, so a bound
set too high would skip a job that may start). Long queues (several super-blocks
of 256 slots) make the scan go through super-blocks whole, which raises their
bounds to their blocks' (``easy_kernels.easy_pass``, step 3)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from queue_bounds_checks import assert_group_bounds
from schedlab.model import Workload
from whole_run_checks import long_queues, simulate_run

pytest.importorskip("numba")

from schedlab.policies.backfill import easy_compiled

kn = easy_compiled.kn


def check_bounds(meta: np.ndarray, ints: np.ndarray, floats: np.ndarray) -> tuple[int, int]:
    """Assert every bound of the queue's slots in use; returns how many super-blocks
    and blocks holding waiting jobs were checked."""
    first, end = int(meta[kn.M_FIRST]), int(meta[kn.M_END])
    size, est = ints[kn.QUEUE_SIZE], floats[kn.QUEUE_ESTIMATE]
    return (
        assert_group_bounds(
            first, end, kn.SUPER, kn.HOLE, size, est,
            ints[kn.SUPER_SIZE], floats[kn.SUPER_ESTIMATE],
        ),
        assert_group_bounds(
            first, end, kn.BLOCK, kn.HOLE, size, est,
            ints[kn.BLOCK_SIZE], floats[kn.BLOCK_ESTIMATE],
        ),
    )  # fmt: skip


def run_checked(w: Workload, policy: str) -> tuple[list[float], int]:
    """Pass by pass with the compiled pass (the reservation log keeps the run from
    being whole), the bounds checked after every pass; the start times and the
    super-blocks checked."""
    kn.warm_up()  # compiled (or loaded) with the real pass, before it is wrapped
    real = kn.easy_pass
    supers = [0]

    def checked_pass(meta: Any, ints: Any, floats: Any, *rest: Any) -> Any:
        out = real(meta, ints, floats, *rest)
        supers[0] += check_bounds(meta, ints, floats)[0]
        return out

    kn.easy_pass = checked_pass
    try:
        result = simulate_run(w, policy, "easy", {"kernel": "compiled"}, per_pass=True)
    finally:
        kn.easy_pass = real
    assert result.stats["kernel"] == "compiled"
    return result.start.tolist(), supers[0]


@settings(max_examples=15, deadline=None)
@given(long_queues(), st.sampled_from(["fcfs", "sjf", "smallest"]))
def test_queue_bounds_hold_after_every_pass(w: Workload, policy: str) -> None:
    compiled, supers = run_checked(w, policy)
    python = simulate_run(w, policy, "easy", {"kernel": "python"}, per_pass=True)
    assert compiled == python.start.tolist()
    assert supers > 0
