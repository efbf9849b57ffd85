"""Node-level EASY's compiled kernel keeps, from one pass to the next, the free
amounts at the head's shadow time (``fat``: the free amounts plus the rows of
the running jobs ending by ``floats[SCALARS, 1]``), their sums, the head's
capacity on them and each running job's held amounts (``demands[2]``), which the
shadow search's step back reads before taking rows back from ``fat``. After every
pass those equal their plain definitions (the schedules against the Python
pass on bursts of identical jobs, where the step back and step 3's head check
run most, are ``test_platform_easy_nodes_capacity.py``'s). And ``_row``, the
borrowed view the kernel reads its rows through, is ``array[index]``; step 3's
first fit with the head check on its way (``_first_fit_head``) is the first fit
followed by the whole check."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

pytest.importorskip("numba")

from schedlab.policies.backfill import easy_nodes_kernels as kn
from test_platform_easy_nodes_capacity import gives, run_with_pass_check, small_platform
from test_platform_easy_nodes_incremental import burst_workload, memory_workload


def assert_kept(meta: np.ndarray, floats: np.ndarray, ints: np.ndarray, demands: np.ndarray,
                mats: np.ndarray, nodes: np.ndarray, pool_nodes: np.ndarray,
                pool_amt: np.ndarray) -> int:  # fmt: skip
    """Each running job's held amounts are its rows' sums, and, while ``fat`` is
    kept, it is the free amounts plus the rows of the running jobs ending by its
    time, with its sums and the head's capacity on it; 1 when ``fat`` was checked."""
    work, fat = mats[0], mats[1]
    pnodes = nodes[kn.P_NODES][: meta[kn.M_PNODES]]
    slots = ints[kn.R_JOB][: meta[kn.M_RUNNING]]
    running = slots[slots >= 0].tolist()  # holes (``~job``) are jobs that ended
    assert_running_list(floats[kn.R_END], ints[kn.R_JOB], int(meta[kn.M_RUNNING]),
                        int(meta[kn.M_R_HOLES]))  # fmt: skip
    for r in running:  # a running job's slot holds its estimated end
        assert floats[kn.J_END, r] in floats[kn.R_END][: meta[kn.M_RUNNING]][slots == r]
    fat_t = floats[kn.SCALARS, 1]
    want = work.copy()
    for r in running:
        off, m = int(ints[kn.A_OFF, r]), int(ints[kn.A_LEN, r])
        rows = pool_amt[off : off + m]
        assert demands[2, r].tolist() == rows.sum(axis=0).tolist(), r
        if floats[kn.J_END, r] <= fat_t:
            np.add.at(want, pool_nodes[off : off + m], rows)
    if not meta[kn.M_FAT_OK]:
        return 0
    assert fat[pnodes].tolist() == want[pnodes].tolist()
    have = demands[2, demands.shape[1] - 1]
    assert have.tolist() == fat[pnodes].sum(axis=0).tolist()
    mpc = int(meta[kn.M_CAP_MPC])
    if mpc >= 0:
        cap = sum(gives(int(fat[n, 0]), int(fat[n, 1]), mpc) for n in pnodes)
        assert meta[kn.M_HEAD_CAP] == cap
    return 1


def assert_running_list(r_end: np.ndarray, r_job: np.ndarray, n: int, holes: int) -> None:
    """The running list's ``n`` slots are sorted by ``(estimated end, job)`` with a
    hole (``~job``) in its job's place, ``holes`` of them, and none last."""
    keys = [(float(r_end[x]), int(r_job[x]) if r_job[x] >= 0 else ~int(r_job[x]))
            for x in range(n)]  # fmt: skip
    assert keys == sorted(keys) and len(set(keys)) == n
    assert int((r_job[:n] < 0).sum()) == holes
    assert n == 0 or r_job[n - 1] >= 0


def run_checked(workload: Any, platform: Any, monkeypatch: Any, **kw: Any) -> tuple[int, Any]:
    """A pass-by-pass compiled run with the kept amounts checked after every pass
    that ran (``node_easy_pass(meta, free, ints, floats, demands, mats, nodes, memo,
    pool_nodes, pool_amt, ...)``)."""

    def after(a: tuple[Any, ...], out: Any) -> int:
        if out[0] < 0:
            return 0
        return assert_kept(a[0], a[3], a[2], a[4], a[5], a[6], a[8], a[9])

    return run_with_pass_check(workload, platform, monkeypatch, after, **kw)


@pytest.mark.parametrize("policy", ["fcfs", "sjf"])
def test_kept_shadow_amounts_hold_after_every_pass(policy: str, monkeypatch: Any) -> None:
    platform = small_platform()
    checked = 0
    for seed in range(4):
        for make in (memory_workload, burst_workload):
            n, _ = run_checked(
                make(platform, seed, 200), platform, monkeypatch, allocation="first-fit",
                policy=policy,
            )  # fmt: skip
            checked += n
    assert checked > 100


@njit
def _rows_of(a2: np.ndarray, a3: np.ndarray, i: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows read through ``kn._row`` (copied out), after a write through each view."""
    r2 = kn._row(a2, i)
    r2[1] += 100
    r3 = kn._row(kn._row(a3, i), k)
    r3[0] -= 7
    return r2.copy(), kn._row(a3, i).copy()


def test_row_is_a_view_of_the_row() -> None:
    a2 = np.arange(4 * 5, dtype=np.int64).reshape(4, 5)
    a3 = np.arange(4 * 3 * 2, dtype=np.int64).reshape(4, 3, 2)
    want2, want3 = a2.copy(), a3.copy()
    for i, k in ((0, 0), (2, 2), (3, 1)):
        got2, got3 = _rows_of(a2, a3, i, k)
        want2[i, 1] += 100
        want3[i, k, 0] -= 7
        assert got2.tolist() == want2[i].tolist()
        assert got3.tolist() == want3[i].tolist()
        assert a2.tolist() == want2.tolist() and a3.tolist() == want3.tolist()


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_first_fit_with_the_head_check_is_the_fit_then_the_check(data: Any) -> None:
    """``_first_fit_head`` (step 3's head check on the first fit's way, stopping at
    the first row failing it) against ``_first_fit_kept`` followed by the whole
    check on its rows: the same rows and capacity drop when the job leaves the
    head an allocation, ``DELAYS`` when it does not."""
    nn = data.draw(st.integers(1, 80))
    dims = data.draw(st.sampled_from((2, 3)))
    mpc = data.draw(st.integers(0, 5))
    h_mpc = data.draw(st.integers(0, 5))
    g = data.draw(st.lists(st.integers(0, 8), min_size=nn, max_size=nn))
    if sum(g) == 0:
        g[0] = 1
    need = data.draw(st.integers(1, sum(g)))  # the capacity test passed
    fat = np.array(
        data.draw(st.lists(st.lists(st.integers(-1, 40), min_size=dims, max_size=dims),
                           min_size=nn, max_size=nn)),
        dtype=np.int64,
    )  # fmt: skip
    blocks = (nn + kn.SNAP_LOW) >> kn.SNAP_SHIFT
    snap = np.zeros((1, nn + blocks), dtype=np.int64)
    for node, v in enumerate(g):
        snap[0, node] = v
        if v:
            snap[0, nn + (node >> kn.SNAP_SHIFT)] |= 1 << (node & kn.SNAP_LOW)

    def kept(cores: int, memory: int, per_core: int) -> int:
        return max(gives(cores, memory, per_core), 0)  # ``_gives``: 0 when none

    h_cap = sum(kept(int(fat[n, 0]), int(fat[n, 1]), h_mpc) for n in range(nn))
    rows = np.zeros(nn, dtype=np.int64), np.zeros((nn, dims), dtype=np.int64)
    m = kn._first_fit_kept(snap, 0, nn, need, mpc, *rows)
    assert m > 0
    delta = 0
    ok = True
    for y in range(m):
        node, a = int(rows[0][y]), rows[1][y]
        f0, f1 = int(fat[node, 0]), int(fat[node, 1])
        delta += kept(f0, f1, h_mpc) - kept(f0 - int(a[0]), f1 - int(a[1]), h_mpc)
        ok = ok and all(fat[node, d] >= a[d] for d in range(dims))
    # The head's cores: exactly at the edge (the capacity left just enough), one
    # past it, or any.
    h_cores = data.draw(
        st.one_of(
            st.just(h_cap - delta), st.just(h_cap - delta + 1),
            st.integers(0, max(h_cap, 0) + 2),
        )
    )  # fmt: skip
    ok = ok and h_cap - delta >= h_cores
    out = np.zeros(nn, dtype=np.int64), np.zeros((nn, dims), dtype=np.int64)
    got, got_delta = kn._first_fit_head(snap, 0, nn, need, mpc, *out, fat, h_mpc, h_cap - h_cores)
    if not ok:
        assert (got, got_delta) == (kn.DELAYS, 0)
    else:
        assert (got, got_delta) == (m, delta)
        assert out[0][:m].tolist() == rows[0][:m].tolist()
        assert out[1][:m].tolist() == rows[1][:m].tolist()


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_running_list_with_holes_is_the_sorted_running_jobs(data: Any) -> None:
    """``_running_insert`` and ``_running_remove`` (an end leaves a hole, an insert
    takes a hole next to its rank or shifts up to the next one, the holes are
    dropped when many) against a plain sorted list: the same jobs in the same
    order, and the rank search of ``fat``'s time (``_rank_running``, ties past
    every job) finds the jobs ending by then."""
    cap = 400
    r_end = np.zeros(cap, dtype=np.float64)
    r_job = np.zeros(cap, dtype=np.int64)
    meta = np.zeros(kn.N_META, dtype=np.int64)
    plain: list[tuple[float, int]] = []
    n = 0
    job = 0
    ends = data.draw(st.lists(st.integers(0, 12), min_size=1, max_size=40))
    for _ in range(data.draw(st.integers(1, 300))):
        if plain and data.draw(st.booleans()):
            e, j = plain.pop(data.draw(st.integers(0, len(plain) - 1)))
            n = kn._running_remove(r_end, r_job, n, e, j, meta)
        else:
            e = float(data.draw(st.sampled_from(ends)))
            n = kn._running_insert(r_end, r_job, n, e, job, meta)
            plain.append((e, job))
            plain.sort()
            job += 1
        assert_running_list(r_end, r_job, n, int(meta[kn.M_R_HOLES]))
        live = [(float(r_end[x]), int(r_job[x])) for x in range(n) if r_job[x] >= 0]
        assert live == plain
        t = float(data.draw(st.sampled_from(ends)))
        i = kn._rank_running(r_end, r_job, n, t, kn.HOLE)
        assert sum(1 for x in range(i) if r_job[x] >= 0) == sum(1 for pe, _ in plain if pe <= t)
    assert kn._running_remove(r_end, r_job, n, 99.0, job + 1, meta) == -1
