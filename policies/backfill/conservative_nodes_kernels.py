"""Conservative backfilling on a node-level machine, compiled with numba (optional,
``schedlab[fast]``): one call per scheduling pass does the whole pass of
:class:`~.conservative_nodes.NodeConservative` on arrays, for one partition of
shared nodes and an allocation policy that declares its node order
(``node_order``, see :mod:`schedlab.sim.resources`).

The kernel keeps copies of the wait queue (job indices in priority order with
their numeric keys), of the running jobs (with each one's allocation) and of the
reservation book (each waiting job's start, allocation and stale flag), brings
them up to date with the arrivals and ends since the last call, and then runs the
three steps of the Python pass on its own node profile:

* the profile keeps the Python profile's slices (``times`` ascending, made by
  the same sequence of additions, so the candidate start times are the same) with
  only their free *totals* over the nodes (``tot``), and the free amounts as one
  *timeline per node*: a linked list of entries (``e_time`` start, ``e_val``
  amounts, ``e_next``; node ``n``'s list starts at entry ``n``) that changes only
  where an allocation on that node starts or ends. A node's least free amounts
  over a window are then a walk over its few entries, and an addition touches
  only its own nodes, where the Python profile keeps, splits and scans a
  ``(nodes, dims)`` matrix per slice;
* :func:`earliest` screens a candidate start with the totals (as the Python pass);
  for a flexible demand of cores and memory under first fit, the walk over the
  nodes in index order that gathers the window's cores *is* the allocation (it
  stops once the job is placed); otherwise the window's free amounts are built
  node by node, screened with the cores they hold for such a demand, and given
  to the allocation. From one candidate start to the next, a node whose entry
  holding the start changed walks its timeline again (under first fit of cores
  and memory, only up to the first entry where it gives nothing); one that only
  the window's end reached has the new entries folded in.

The allocation (:func:`allocate`) is :func:`schedlab.sim.resources.take` over the
usable nodes in the policy's order, written out in loops: ``0`` node index
(``first-fit``), ``1`` fewest free cores first, ``2`` most free cores first (both
stable, ties by node index), sorting in place (:func:`_heap_sort`); the same as
the node-level EASY kernel's, its sort included (the module is self-contained:
numba's cache of a function does not track the compiled helpers it takes from
other files), except that a profile's free amounts may be negative here (a node
over-committed after a prediction correction raised a running job's estimate,
until its reservations are planned again): such a node gives nothing and counts
from zero in the free-sum screen, as in ``take`` and ``Machine.allocate``, and
in the profile's totals (as in :class:`schedlab.sim.NodeProfile`).

With ``NUMBA_DISABLE_JIT=1`` it runs as plain Python.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np
from numba import njit
from numba.core.cpu import CPUTargetOptions

_F = TypeVar("_F", bound=Callable[..., Any])


def _compiler(**options: Any) -> Callable[[_F], _F]:
    """numba's ``njit(**options)``, typed as what it is to a caller: a compiled
    function takes and returns what its Python source does."""
    return cast("Callable[[_F], _F]", njit(**options))


# Every function but ``_store`` (its compaction allocates) and its caller
# ``node_conservative_pass`` allocates nothing and compiles without numba's
# reference counting (``_nrt=False``: a call passing arrays then costs no atomic
# updates; a function without it cannot allocate: numba refuses it when
# compiling). ``_nrt`` is a private option: a numba without it runs the same
# kernel, slower. ``allocate`` sorts in place (``_heap_sort``) for that.
_NO_REFCOUNTS = {"_nrt": False} if hasattr(CPUTargetOptions, "_nrt") else {}
_jit = _compiler(cache=True, nogil=True, **_NO_REFCOUNTS)
_jit_nrt = _compiler(cache=True, nogil=True)
# The helpers of the searches' walks and of the profile's splits are inlined
# into their callers (numba's own inlining): a call passing arrays costs more
# than their loops on RICC (a third of the pass's time on 2,000 jobs).
_inline = _compiler(cache=True, nogil=True, inline="always", **_NO_REFCOUNTS)

INF = np.inf

# Entries of ``meta``.
M_QUEUE = 0  # waiting jobs in the queue copy
M_RUNNING = 1  # running jobs
M_POOL = 2  # pool rows in use (the next free row)
M_SLICES = 3  # slices of the profile
M_ENTRIES = 4  # timeline entries of the profile in use
M_PNODES = 5  # nodes of the partition
M_LOG_ALL = 6  # 1: report every reservation made (tests log them), not only changes
M_CHANGES = 7  # reservations reported by the last pass
M_WINDOWS = 8  # counters (for benchmarks): windows built,
M_ALLOCATIONS = 9  # allocations tried,
M_PLANS = 10  # earliest searches
M_SCREENED = 11  # candidate starts screened out by the core capacity
M_SHIFTED = 12  # slices shifted by splits
M_SUMMED = 13  # slice totals changed by additions
M_BUILDS = 14  # profiles built
M_EXCLUSIVE = 15  # 1: an exclusive partition (jobs take their nodes whole, ``_whole_nodes``)
N_META = 16

# Rows of ``ints``.
J_MPC = 0  # by job: memory per core
J_NODES = 1  # by job: node count (0: flexible)
J_SIMPLE = 2  # by job: 1 when flexible and asking for cores and memory only
Q_JOB = 3  # by queue slot: the waiting job
R_JOB = 4  # by running index: the running job (unordered)
A_OFF = 5  # by job: first pool row of its allocation (reserved or held)
A_LEN = 6  # by job: its pool rows
BOOKED = 7  # by job: 1 when it holds a reservation
STALE = 8  # by job: 1 when its reservation is stale
ARRIVALS = 9  # jobs to insert into the queue
FINISHED = 10  # jobs that ended
OUT = 11  # the jobs this pass starts, in order
CHANGED = 12  # the reservations this pass made (jobs), in order
RELEASED = 13  # ... and 1 where the job was released first
R_POS = 14  # by job: its running index
N_INT_ROWS = 15

# Rows of ``floats``.
J_EST = 0  # by job: estimate
J_KEY = 1  # by job: numeric priority key
J_END = 2  # by job: estimated end once started
B_T = 3  # by job: reserved start
Q_KEY = 4  # by queue slot: key
SCALARS = 5  # [0]: the next reservation coming due after the pass
N_FLOAT_ROWS = 6

#: ``allocate`` found no allocation.
NONE = -1
#: Error codes returned by :func:`node_conservative_pass`.
ERR_LOST = -1  # a job that ended was not running
ERR_NO_FIT = -2  # a job found no allocation even on the last slice
ERR_ROOM = -3  # the profile's room ran out (the caller sized it too small)


@_inline
def _gives(free: np.ndarray, node: int, mpc: int) -> int:
    """The cores a flexible demand asking ``mpc`` memory per core may take on
    ``node`` (0 when the node is not usable for it)."""
    c = free[node, 0]
    if c <= 0:
        return 0
    if mpc and free[node, 1] < c * mpc:  # memory binds: only then divide
        c = free[node, 1] // mpc
        if c < 0:
            return 0
    return c


@_jit
def allocate(
    free: np.ndarray,
    pnodes: np.ndarray,
    kind: int,
    total: np.ndarray,
    mpc: int,
    k: int,
    chunk: np.ndarray,
    order: np.ndarray,
    keys: np.ndarray,
    out_nodes: np.ndarray,
    out_amt: np.ndarray,
) -> int:
    """The allocation of a demand on ``free`` (``(nodes, dims)``) among the
    partition's nodes ``pnodes`` in the policy's order ``kind``: its node count,
    with the nodes (ascending) in ``out_nodes`` and their amounts in ``out_amt``,
    or ``NONE``. ``total``, ``mpc``, ``k`` (node count, 0: flexible) and ``chunk``
    are the demand's; ``order`` and ``keys`` are scratch rows of the partition's
    size. Like the machine, a demand whose total exceeds the free sums over the
    partition gets none (counted from zero on a node over-committed in the
    profile, as ``Machine.allocate`` does)."""
    dims = free.shape[1]
    for d in range(dims):
        s = 0
        for node in pnodes:
            v = free[node, d]
            if v > 0:
                s += v
        if s < total[d]:
            return NONE
    simple = k == 0
    if simple:
        for d in range(2, dims):
            if total[d]:
                simple = False
    if simple and kind == 0:
        # First fit of cores and memory: the lowest nodes, stopping once placed.
        need = total[0]
        cum = 0
        placed = 0
        for node in pnodes:
            c = _gives(free, node, mpc)
            if c == 0:
                continue
            got = min(c, need - cum)
            out_nodes[placed] = node
            out_amt[placed, 0] = got
            out_amt[placed, 1] = got * mpc
            for d in range(2, dims):
                out_amt[placed, d] = 0
            placed += 1
            cum += got
            if cum >= need:
                return placed
        return NONE
    u = 0
    if k > 0:
        for node in pnodes:
            ok = True
            for d in range(dims):
                if free[node, d] < chunk[d]:
                    ok = False
                    break
            if ok:
                order[u] = node
                u += 1
    else:
        for node in pnodes:
            ok = free[node, 0] >= 1 and (mpc == 0 or free[node, 1] >= mpc)
            if not ok:
                for d in range(2, dims):
                    if total[d] > 0 and free[node, d] > 0:
                        ok = True
                        break
            if ok:
                order[u] = node
                u += 1
    if u == 0:
        return NONE
    if kind != 0:
        # By free cores (fewest or most first), ties by node: the nodes of
        # ``order`` are distinct and ascending, so sorting ``c * nn + node`` (or
        # ``(top - c) * nn + node``) in place gives the stable order.
        nn = free.shape[0]
        top = 0
        for i in range(u):
            top = max(top, free[order[i], 0])
        for i in range(u):
            c = free[order[i], 0]
            keys[i] = (c if kind == 1 else top - c) * nn + order[i]
        _heap_sort(keys, out_amt, u, False)
        for i in range(u):
            order[i] = keys[i] % nn
    if k > 0:
        if u < k:
            return NONE
        for i in range(k):
            out_nodes[i] = order[i]
        _heap_sort(out_nodes, out_amt, k, False)  # ascending nodes
        for i in range(k):
            for d in range(dims):
                out_amt[i, d] = chunk[d]
        return k
    need = total[0]
    cum = 0
    last = -1
    for i in range(u):
        node = order[i]
        c = free[node, 0]
        if mpc:
            c = min(c, free[node, 1] // mpc)
        if c < 0:
            c = 0  # over-committed in the profile (a raise): gives nothing
        cum += c
        if cum >= need:
            last = i
            break
    if last < 0:
        return NONE
    for d in range(2, dims):
        want = total[d]
        if want:
            have = 0
            at = -1
            for i in range(u):
                v = free[order[i], d]
                if v > 0:
                    have += v
                if have >= want:
                    at = i
                    break
            if at < 0:
                return NONE
            if at > last:
                last = at
    m = last + 1
    placed = _place_others(free, order, m, total, mpc, need, out_nodes, out_amt)
    # Ascending node order (the nodes are distinct), the amounts moving along.
    _heap_sort(out_nodes, out_amt, placed, True)
    return placed


@_jit
def _swap(a: np.ndarray, rows: np.ndarray, x: int, y: int, carry: bool) -> None:
    """Swap ``a[x]`` and ``a[y]`` (and with ``carry``, rows ``x`` and ``y``)."""
    v = a[x]
    a[x] = a[y]
    a[y] = v
    if carry:
        for d in range(rows.shape[1]):
            w = rows[x, d]
            rows[x, d] = rows[y, d]
            rows[y, d] = w


@_jit
def _sift_down(a: np.ndarray, rows: np.ndarray, root: int, size: int, carry: bool) -> None:
    """Restore the max-heap of ``a[:size]`` below ``root``."""
    while True:
        c = 2 * root + 1
        if c >= size:
            return
        if c + 1 < size and a[c + 1] > a[c]:
            c += 1
        if a[root] >= a[c]:
            return
        _swap(a, rows, root, c, carry)
        root = c


@_jit
def _heap_sort(a: np.ndarray, rows: np.ndarray, n: int, carry: bool) -> None:
    """Sort ``a[:n]`` ascending in place (a heap sort: no scratch, no
    allocation), the rows ``rows[i]`` moving with ``a[i]`` when ``carry``. Not
    stable: the callers sort distinct values."""
    for x in range((n >> 1) - 1, -1, -1):
        _sift_down(a, rows, x, n, carry)
    for x in range(n - 1, 0, -1):
        _swap(a, rows, 0, x, carry)
        _sift_down(a, rows, 0, x, carry)


@_jit
def _place_others(
    free: np.ndarray,
    order: np.ndarray,
    m: int,
    total: np.ndarray,
    mpc: int,
    need: int,
    out_nodes: np.ndarray,
    out_amt: np.ndarray,
) -> int:
    """The rows of a flexible demand over the first ``m`` nodes of ``order``: cores
    (and their memory) by the running sum of what each node gives, every GPU or
    consumable by its own running sum; nodes given nothing are dropped."""
    dims = free.shape[1]
    placed = 0
    before = 0
    for i in range(m):
        node = order[i]
        c = free[node, 0]
        if mpc:
            c = min(c, free[node, 1] // mpc)
        if c < 0:
            c = 0
        got = min(c, max(need - before, 0))
        before += c
        out_amt[placed, 0] = got
        out_amt[placed, 1] = got * mpc
        keep = got != 0
        for d in range(2, dims):
            out_amt[placed, d] = 0
        out_nodes[placed] = node
        if keep or dims > 2:
            placed += 1
    if dims > 2:
        for d in range(2, dims):
            want = total[d]
            if want:
                got_before = 0
                for i in range(placed):
                    col = free[out_nodes[i], d]
                    if col < 0:
                        col = 0
                    out_amt[i, d] = min(col, max(want - got_before, 0))
                    got_before += col
        w = 0
        for i in range(placed):
            any_amount = False
            for d in range(dims):
                if out_amt[i, d] != 0:
                    any_amount = True
                    break
            if any_amount:
                if w != i:
                    out_nodes[w] = out_nodes[i]
                    for d in range(dims):
                        out_amt[w, d] = out_amt[i, d]
                w += 1
        placed = w
    return placed


# ---------------------------------------------------------------------- profile
@_inline
def _bisect_left(times: np.ndarray, n: int, t: float, lo: int) -> int:
    hi = n
    while lo < hi:
        mid = (lo + hi) // 2
        if times[mid] < t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@_inline
def _bisect_right(times: np.ndarray, n: int, t: float) -> int:
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) // 2
        if t < times[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@_jit
def _reset(
    meta: np.ndarray,
    times: np.ndarray,
    tot: np.ndarray,
    e_time: np.ndarray,
    e_link: np.ndarray,
    e_val: np.ndarray,
    free: np.ndarray,
    now: float,
) -> None:
    """A profile of one slice from ``now``: the machine's free amounts (node ``n``'s
    timeline is its entry ``n``)."""
    nodes, dims = free.shape
    times[0] = now
    for d in range(dims):
        tot[0, d] = 0
    tot[0, dims] = -1
    for n in range(nodes):
        e_time[n] = now
        e_link[0, n] = -1
        e_link[2, n] = n
        for d in range(dims):
            v = free[n, d]
            e_val[n, d] = v
            if v > 0:
                tot[0, d] += v
    meta[M_SLICES] = 1
    meta[M_ENTRIES] = nodes


@_inline
def _split(meta: np.ndarray, times: np.ndarray, tot: np.ndarray, t: float) -> int:
    """Index of the slice starting at ``t`` (made if needed, with the totals of the
    slice it cuts); ``-1`` when the profile's room is used up."""
    n = meta[M_SLICES]
    i = _bisect_left(times, n, t, 0)
    if i < n and times[i] == t:
        return i
    if n >= times.shape[0]:
        return -1
    meta[M_SHIFTED] += n - i
    for x in range(n, i, -1):
        times[x] = times[x - 1]
        for d in range(tot.shape[1]):
            tot[x, d] = tot[x - 1, d]
    times[i] = t
    dims = tot.shape[1] - 1
    for d in range(dims):
        tot[i, d] = tot[i - 1, d]
    tot[i, dims] = -1  # no timeline entry starts here yet
    meta[M_SLICES] = n + 1
    return i


@_inline
def _node_split(
    meta: np.ndarray,
    times: np.ndarray,
    tot: np.ndarray,
    e_time: np.ndarray,
    e_link: np.ndarray,
    e_val: np.ndarray,
    node: int,
    t: float,
) -> int:
    """The entry of ``node``'s timeline starting at ``t`` (``t`` not before the
    profile's start; made if needed, with the amounts of the entry it cuts, and
    listed in the bucket of the slice starting at ``t``, which exists); ``-1``
    when the entries are used up."""
    p = node
    q = e_link[0, p]
    while q != -1 and e_time[q] <= t:
        p = q
        q = e_link[0, q]
    if e_time[p] == t:
        return p
    x = meta[M_ENTRIES]
    if x >= e_time.shape[0]:
        return -1
    meta[M_ENTRIES] = x + 1
    e_time[x] = t
    for d in range(e_val.shape[1]):
        e_val[x, d] = e_val[p, d]
    e_link[0, x] = q
    e_link[0, p] = x
    e_link[2, x] = node
    b = _bisect_left(times, meta[M_SLICES], t, 0)
    bk = tot.shape[1] - 1
    e_link[1, x] = tot[b, bk]
    tot[b, bk] = x
    return x


@_jit
def _add(
    meta: np.ndarray,
    times: np.ndarray,
    tot: np.ndarray,
    e_time: np.ndarray,
    e_link: np.ndarray,
    e_val: np.ndarray,
    start: float,
    end: float,
    pool_nodes: np.ndarray,
    pool_amt: np.ndarray,
    off: int,
    m: int,
    sign: int,
) -> bool:
    """Take (``sign=-1``) or give back (``+1``) the ``m`` pool rows from ``off``
    over ``[start, end)`` (``start`` clipped to the profile's start), as
    :meth:`schedlab.sim.NodeProfile.add`: the slices split at the same times, the
    totals of the slices covered change, and so does each node's timeline over
    the interval; ``False`` when the room ran out."""
    if start < times[0]:
        start = times[0]
    if not end > start:
        return True
    i = _split(meta, times, tot, start)
    if i < 0:
        return False
    if end != INF:
        k = _split(meta, times, tot, end)
        if k < 0:
            return False
    else:
        k = meta[M_SLICES]
    dims = e_val.shape[1]
    for d in range(dims):
        s = 0
        for x in range(off, off + m):
            s += pool_amt[x, d]
        s *= sign
        meta[M_SUMMED] += k - i
        if s:
            for y in range(i, k):
                tot[y, d] += s
    for x in range(off, off + m):
        node = pool_nodes[x]
        e = _node_split(meta, times, tot, e_time, e_link, e_val, node, start)
        if e < 0:
            return False
        if end != INF and _node_split(meta, times, tot, e_time, e_link, e_val, node, end) < 0:
            return False
        while e != -1 and e_time[e] < end:
            q = e_link[0, e]
            for d in range(dims):
                a = pool_amt[x, d] * sign
                v = e_val[e, d]
                nv = v + a
                e_val[e, d] = nv
                if v < 0 or nv < 0:
                    # An over-committed node counts from zero in the totals:
                    # correct the slices this entry spans for the part of
                    # ``a`` that the clamp hides.
                    fix = (nv if nv > 0 else 0) - (v if v > 0 else 0) - a
                    if fix:
                        n = meta[M_SLICES]
                        lo = _bisect_left(times, n, e_time[e], i)
                        hi = k if q == -1 else _bisect_left(times, n, e_time[q], lo)
                        for y in range(lo, hi):
                            tot[y, d] += fix
            e = q
    return True


@_inline
def _node_min(
    e_time: np.ndarray,
    e_link: np.ndarray,
    e_val: np.ndarray,
    node: int,
    t: float,
    end: float,
    out: np.ndarray,
) -> int:
    """``node``'s least free amounts over ``[t, end)`` (its amounts at ``t`` when
    the interval is empty) into ``out``: what the Python profile's window gives
    for the node (every timeline entry starts at a slice boundary). Returns the
    entry holding ``t``."""
    return _entry_min(e_time, e_link, e_val, node, t, end, out)


@_inline
def _entry_min(
    e_time: np.ndarray,
    e_link: np.ndarray,
    e_val: np.ndarray,
    p: int,
    t: float,
    end: float,
    out: np.ndarray,
) -> int:
    """:func:`_node_min` walking the node's timeline from entry ``p`` (one starting
    at or before ``t``); returns the entry holding ``t``."""
    q = e_link[0, p]
    while q != -1 and e_time[q] <= t:
        p = q
        q = e_link[0, q]
    dims = out.shape[0]
    for d in range(dims):
        out[d] = e_val[p, d]
    while q != -1 and e_time[q] < end:
        for d in range(dims):
            v = e_val[q, d]
            if v < out[d]:
                out[d] = v
        q = e_link[0, q]
    return p


@_inline
def _entry_gives_min(
    e_time: np.ndarray,
    e_link: np.ndarray,
    e_val: np.ndarray,
    p: int,
    t: float,
    end: float,
    mpc: int,
    out: np.ndarray,
) -> int:
    """:func:`_entry_min` for a flexible demand of cores and memory under first
    fit: the walk over the window stops once the node gives the demand nothing
    (no free core, or less memory than ``mpc``). ``out`` then holds amounts that
    give nothing, not the least ones; it is only read through :func:`_gives`, and
    a node whose window is not looked at again gives nothing either way. Returns
    the entry holding ``t``."""
    q = e_link[0, p]
    while q != -1 and e_time[q] <= t:
        p = q
        q = e_link[0, q]
    dims = out.shape[0]
    for d in range(dims):
        out[d] = e_val[p, d]
    if out[0] <= 0 or (mpc and out[1] < mpc):
        return p
    while q != -1 and e_time[q] < end:
        for d in range(dims):
            v = e_val[q, d]
            if v < out[d]:
                out[d] = v
        if out[0] <= 0 or (mpc and out[1] < mpc):
            return p
        q = e_link[0, q]
    return p


@_jit
def _still_free(
    meta: np.ndarray,
    times: np.ndarray,
    e_time: np.ndarray,
    e_link: np.ndarray,
    e_val: np.ndarray,
    t0: float,
    duration: float,
    pool_nodes: np.ndarray,
    pool_amt: np.ndarray,
    off: int,
    m: int,
    least: np.ndarray,
) -> bool:
    """Whether the pool rows' amounts are free over ``[t0, t0 + duration)`` (from
    the profile's start if ``t0`` is past): the Python pass's ``_still_free``,
    whose window starts at the slice holding ``t0``."""
    n = meta[M_SLICES]
    start = t0 if t0 > times[0] else times[0]
    i = _bisect_right(times, n, start) - 1
    end = start + duration
    dims = e_val.shape[1]
    for x in range(off, off + m):
        _node_min(e_time, e_link, e_val, pool_nodes[x], times[i], end, least)
        for d in range(dims):
            if least[d] < pool_amt[x, d]:
                return False
    return True


@_jit
def _whole_nodes(window: np.ndarray, out_nodes: np.ndarray, out_amt: np.ndarray, m: int) -> None:
    """On an exclusive partition the allocation takes its ``m`` nodes whole: each row
    becomes the node's least free amounts over the window, all of its capacity (as
    in node-level EASY's kernel: a node a job holds or is promised has nothing free
    then, so the shared rules chose nodes idle over the whole window)."""
    for y in range(m):
        node = out_nodes[y]
        for d in range(window.shape[1]):
            out_amt[y, d] = window[node, d]


@_jit
def earliest(
    meta: np.ndarray,
    times: np.ndarray,
    tot: np.ndarray,
    e_time: np.ndarray,
    e_link: np.ndarray,
    e_val: np.ndarray,
    pnodes: np.ndarray,
    kind: int,
    total: np.ndarray,
    mpc: int,
    k: int,
    chunk: np.ndarray,
    simple: bool,
    duration: float,
    window: np.ndarray,
    gv: np.ndarray,
    stamp: np.ndarray,
    cursor: np.ndarray,
    order: np.ndarray,
    keys: np.ndarray,
    out_nodes: np.ndarray,
    out_amt: np.ndarray,
) -> tuple[float, int]:
    """The first slice start from which the demand has an allocation free for
    ``duration`` (:meth:`schedlab.sim.NodeProfile.earliest`), and the allocation's
    row count (its rows in ``out_nodes``/``out_amt``); ``(inf, NONE)`` if none.

    A candidate start is screened with the slices' totals (as the Python pass).
    The window's free amounts (``window``, per node the least over the window) are
    kept from one candidate to the next: only the nodes with a timeline entry
    starting where the window's start or end moved are looked at again. A
    flexible demand of cores and memory is screened with the cores the window
    holds for it (``gv`` per node, their sum kept up to date; enough exactly when
    ``take`` finds an allocation, in any node order)."""
    meta[M_PLANS] += 1
    n = meta[M_SLICES]
    dims = e_val.shape[1]
    bk = tot.shape[1] - 1
    need = total[0]
    # First fit of cores and memory reads the window only through what each node
    # gives: a node's walk stops once it gives nothing (the result is the same).
    cut = simple and kind == 0
    valid = False
    prev_i = 0
    prev_kk = 0
    cap = 0
    # The slices whose totals were screened are [0, scan); ``last_short`` is the
    # last of them short of the demand: every candidate whose window holds it
    # fails, so the search goes on after it (the Python pass scans each window
    # again; the same candidates are skipped).
    scan = 0
    last_short = -1
    i = 0
    while i < n:
        t = times[i]
        end = t + duration
        while scan < n and (scan <= i or times[scan] < end):
            for d in range(dims):
                if tot[scan, d] < total[d]:
                    last_short = scan
                    break
            scan += 1
        kk = scan
        if last_short >= i:
            i = last_short + 1
            continue
        meta[M_WINDOWS] += 1
        if not valid:
            cap = 0
            for node in pnodes:
                if cut:
                    cursor[node] = _entry_gives_min(
                        e_time, e_link, e_val, node, t, end, mpc, window[node]
                    )
                else:
                    cursor[node] = _node_min(e_time, e_link, e_val, node, t, end, window[node])
                if simple:
                    g = _gives(window, node, mpc)
                    gv[node] = g
                    cap += g
            valid = True
        else:
            # Nodes whose window changed: an entry starts in (prev start, start]
            # (the entry holding the start changed) or in [prev end, end).
            mark = meta[M_WINDOWS]
            # Start range: the entry holding the start changed, walk again.
            for sl in range(prev_i + 1, i + 1):
                x = tot[sl, bk]
                while x != -1:
                    node = e_link[2, x]
                    if stamp[node] != mark:
                        stamp[node] = mark
                        # The start only moves later: walk on from the entry
                        # that held the last one.
                        if cut:
                            cursor[node] = _entry_gives_min(
                                e_time, e_link, e_val, cursor[node], t, end, mpc, window[node]
                            )
                        else:
                            cursor[node] = _entry_min(
                                e_time, e_link, e_val, cursor[node], t, end, window[node]
                            )
                        if simple:
                            g = _gives(window, node, mpc)
                            cap += g - gv[node]
                            gv[node] = g
                    x = e_link[1, x]
            # End range: a node walked again above already has these entries;
            # any other kept its start entry, so its least amounts are the old
            # ones with the entries the window now reaches folded in.
            for sl in range(prev_kk if prev_kk > i + 1 else i + 1, kk):
                x = tot[sl, bk]
                while x != -1:
                    node = e_link[2, x]
                    if stamp[node] != mark:
                        row = window[node]
                        if cut and (row[0] <= 0 or (mpc and row[1] < mpc)):
                            x = e_link[1, x]
                            continue  # gives nothing already
                        for d in range(dims):
                            v = e_val[x, d]
                            if v < row[d]:
                                row[d] = v
                        if simple:
                            g = _gives(window, node, mpc)
                            cap += g - gv[node]
                            gv[node] = g
                    x = e_link[1, x]
        prev_i = i
        prev_kk = kk
        if simple:
            if cap < need:
                meta[M_SCREENED] += 1
                i += 1
                continue
            if kind == 0:
                # First fit: the lowest nodes, in index order (there are enough).
                cum = 0
                placed = 0
                for node in pnodes:
                    c = gv[node]
                    if c == 0:
                        continue
                    got = min(c, need - cum)
                    out_nodes[placed] = node
                    out_amt[placed, 0] = got
                    out_amt[placed, 1] = got * mpc
                    for d in range(2, dims):
                        out_amt[placed, d] = 0
                    placed += 1
                    cum += got
                    if cum >= need:
                        if meta[M_EXCLUSIVE]:
                            _whole_nodes(window, out_nodes, out_amt, placed)
                        return t, placed
        meta[M_ALLOCATIONS] += 1
        m = allocate(window, pnodes, kind, total, mpc, k, chunk, order, keys, out_nodes, out_amt)
        if m != NONE:
            if meta[M_EXCLUSIVE]:
                _whole_nodes(window, out_nodes, out_amt, m)
            return t, m
        i += 1
    return INF, NONE


@_inline
def _gives_row(free: np.ndarray, mpc: int) -> int:
    """:func:`_gives` on one node's amounts."""
    c = free[0]
    if c <= 0:
        return 0
    if mpc and free[1] < c * mpc:
        c = free[1] // mpc
        if c < 0:
            return 0
    return c


@_jit_nrt
def _store(
    pool_nodes: np.ndarray,
    pool_amt: np.ndarray,
    ints: np.ndarray,
    meta: np.ndarray,
    j: int,
    m: int,
    s_nodes: np.ndarray,
    s_amt: np.ndarray,
) -> None:
    """Keep job ``j``'s allocation (``m`` rows of the scratch) in the pool; when the
    pool is full, the live rows (running jobs' and reservations') move to its
    front first (the caller sizes the pool so that they fit with room for ``m``)."""
    a_off = ints[A_OFF]
    a_len = ints[A_LEN]
    top = meta[M_POOL]
    if top + m > pool_nodes.shape[0]:
        n_run = meta[M_RUNNING]
        n_q = meta[M_QUEUE]
        live = np.empty(n_run + n_q, dtype=np.int64)
        c = 0
        for x in range(n_run):
            live[c] = ints[R_JOB, x]
            c += 1
        for x in range(n_q):
            q = ints[Q_JOB, x]
            if ints[BOOKED, q] and q != j:
                live[c] = q
                c += 1
        offs = np.empty(c, dtype=np.int64)
        for x in range(c):
            offs[x] = a_off[live[x]]
        by_offset = np.argsort(offs, kind="mergesort")
        top = 0
        for x in by_offset:
            r = live[x]
            off = a_off[r]
            a_off[r] = top
            for i in range(a_len[r]):
                pool_nodes[top] = pool_nodes[off + i]
                pool_amt[top] = pool_amt[off + i]
                top += 1
    a_off[j] = top
    a_len[j] = m
    for i in range(m):
        pool_nodes[top + i] = s_nodes[i]
        pool_amt[top + i] = s_amt[i]
    meta[M_POOL] = top + m


@_jit
def _build(
    meta: np.ndarray,
    free: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    times: np.ndarray,
    tot: np.ndarray,
    e_time: np.ndarray,
    e_link: np.ndarray,
    e_val: np.ndarray,
    pool_nodes: np.ndarray,
    pool_amt: np.ndarray,
    now: float,
) -> bool:
    """The profile of the Python pass's ``_profile(now)``: the free amounts now,
    every running job's amounts back at its estimated end (now if past), every
    reservation's taken over its window."""
    _reset(meta, times, tot, e_time, e_link, e_val, free, now)
    meta[M_BUILDS] += 1
    a_off = ints[A_OFF]
    a_len = ints[A_LEN]
    for x in range(meta[M_RUNNING]):
        r = ints[R_JOB, x]
        e = floats[J_END, r]
        if not _add(
            meta, times, tot, e_time, e_link, e_val, e if e > now else now, INF,
            pool_nodes, pool_amt, a_off[r], a_len[r], 1,
        ):  # fmt: skip
            return False
    est = floats[J_EST]
    b_t = floats[B_T]
    for x in range(meta[M_QUEUE]):
        j = ints[Q_JOB, x]
        if ints[BOOKED, j]:
            t = b_t[j]
            if not _add(
                meta, times, tot, e_time, e_link, e_val, t, t + est[j],
                pool_nodes, pool_amt, a_off[j], a_len[j], -1,
            ):  # fmt: skip
                return False
    return True


@_jit
def _queue_insert(ints: np.ndarray, floats: np.ndarray, n: int, j: int) -> int:
    """Insert job ``j`` into the queue sorted by ``(key, job)``; the new count."""
    q_job = ints[Q_JOB]
    q_key = floats[Q_KEY]
    k = floats[J_KEY, j]
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) // 2
        km = q_key[mid]
        if km < k or (km == k and q_job[mid] < j):
            lo = mid + 1
        else:
            hi = mid
    for x in range(n, lo, -1):
        q_job[x] = q_job[x - 1]
        q_key[x] = q_key[x - 1]
    q_job[lo] = j
    q_key[lo] = k
    return n + 1


@_jit_nrt
def node_conservative_pass(
    meta: np.ndarray,
    free: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    demands: np.ndarray,
    pnodes: np.ndarray,
    pool_nodes: np.ndarray,
    pool_amt: np.ndarray,
    times: np.ndarray,
    tot: np.ndarray,
    e_time: np.ndarray,
    e_link: np.ndarray,
    e_val: np.ndarray,
    window: np.ndarray,
    gv: np.ndarray,
    stamp: np.ndarray,
    scratch: np.ndarray,
    s_nodes: np.ndarray,
    s_amt: np.ndarray,
    kind: int,
    n_arrivals: int,
    n_finished: int,
    finished_since_pass: bool,
    now: float,
) -> tuple[int, int]:
    """One pass of :class:`~.conservative_nodes.NodeConservative` (see the module
    docstring). Returns ``(started, info)``: the count of jobs started (in
    ``ints[OUT]``, their allocations in the pool) and 0, or an error code
    (``ERR_*``) and the job concerned. The reservations made are in
    ``ints[CHANGED]`` (``meta[M_CHANGES]`` of them: all, or with ``M_LOG_ALL`` off
    only those whose start moved or that were released); the next one coming due
    in ``floats[SCALARS, 0]``."""
    est = floats[J_EST]
    b_t = floats[B_T]
    a_off = ints[A_OFF]
    a_len = ints[A_LEN]
    booked = ints[BOOKED]
    stale = ints[STALE]
    order = scratch[0]
    keys = scratch[1]
    cursor = scratch[2]
    total_d = demands[0]
    chunk_d = demands[1]
    log_all = meta[M_LOG_ALL] == 1
    # Ends and arrivals since the last call.
    for x in range(n_finished):
        j = ints[FINISHED, x]
        p = ints[R_POS, j]
        n_run = meta[M_RUNNING]
        if p < 0 or p >= n_run or ints[R_JOB, p] != j:
            return ERR_LOST, j
        last = ints[R_JOB, n_run - 1]
        ints[R_JOB, p] = last
        ints[R_POS, last] = p
        ints[R_POS, j] = -1
        meta[M_RUNNING] = n_run - 1
    nq = meta[M_QUEUE]
    for x in range(n_arrivals):
        nq = _queue_insert(ints, floats, nq, ints[ARRIVALS, x])
    meta[M_QUEUE] = nq
    changes = 0
    any_booked = False
    for x in range(nq):
        if booked[ints[Q_JOB, x]]:
            any_booked = True
            break
    # 1. compression: every reservation planned again in priority order.
    if finished_since_pass and any_booked:
        if not _build(
            meta, free, ints, floats, times, tot, e_time, e_link, e_val, pool_nodes, pool_amt, now
        ):
            return ERR_ROOM, -1
        for x in range(nq):
            j = ints[Q_JOB, x]
            if not booked[j]:
                continue
            t0 = b_t[j]
            d = est[j]
            off0 = a_off[j]
            m0 = a_len[j]
            if not _add(
                meta,
                times,
                tot,
                e_time,
                e_link,
                e_val,
                t0,
                t0 + d,
                pool_nodes,
                pool_amt,
                off0,
                m0,
                1,
            ):
                return ERR_ROOM, j
            keep = stale[j] == 0 and _still_free(
                meta,
                times,
                e_time,
                e_link,
                e_val,
                t0,
                d,
                pool_nodes,
                pool_amt,
                off0,
                m0,
                window[0],
            )
            k = ints[J_NODES, j]
            t, m = earliest(
                meta, times, tot, e_time, e_link, e_val, pnodes, kind, total_d[j],
                ints[J_MPC, j], k, chunk_d[j], ints[J_SIMPLE, j] == 1, d, window, gv, stamp,
                cursor, order, keys, s_nodes, s_amt,
            )  # fmt: skip
            if m == NONE:
                return ERR_NO_FIT, j
            if t > t0 and keep:
                # The policy found nothing as early; the old allocation stays. The
                # trial's boundaries stay in the profile, as in the Python pass.
                start = t if t > times[0] else times[0]
                if t + d > start:
                    if _split(meta, times, tot, start) < 0:
                        return ERR_ROOM, j
                    if t + d != INF and _split(meta, times, tot, t + d) < 0:
                        return ERR_ROOM, j
                t = t0
            else:
                _store(pool_nodes, pool_amt, ints, meta, j, m, s_nodes, s_amt)
            if not _add(
                meta,
                times,
                tot,
                e_time,
                e_link,
                e_val,
                t,
                t + d,
                pool_nodes,
                pool_amt,
                a_off[j],
                a_len[j],
                -1,
            ):
                return ERR_ROOM, j
            released = t > t0 or stale[j] == 1
            stale[j] = 0
            b_t[j] = t
            if log_all or released or t != t0:
                ints[CHANGED, changes] = j
                ints[RELEASED, changes] = 1 if released else 0
                changes += 1
    # 2. new jobs: the earliest reservation that delays no existing one.
    built = False
    for x in range(nq):
        j = ints[Q_JOB, x]
        if booked[j]:
            continue
        if not built:
            if not _build(
                meta,
                free,
                ints,
                floats,
                times,
                tot,
                e_time,
                e_link,
                e_val,
                pool_nodes,
                pool_amt,
                now,
            ):
                return ERR_ROOM, -1
            built = True
        d = est[j]
        t, m = earliest(
            meta, times, tot, e_time, e_link, e_val, pnodes, kind, total_d[j], ints[J_MPC, j],
            ints[J_NODES, j], chunk_d[j], ints[J_SIMPLE, j] == 1, d, window, gv, stamp,
            cursor, order, keys, s_nodes, s_amt,
        )  # fmt: skip
        if m == NONE:
            return ERR_NO_FIT, j
        _store(pool_nodes, pool_amt, ints, meta, j, m, s_nodes, s_amt)
        if not _add(
            meta,
            times,
            tot,
            e_time,
            e_link,
            e_val,
            t,
            t + d,
            pool_nodes,
            pool_amt,
            a_off[j],
            a_len[j],
            -1,
        ):
            return ERR_ROOM, j
        booked[j] = 1
        stale[j] = 0
        b_t[j] = t
        ints[CHANGED, changes] = j
        ints[RELEASED, changes] = 0
        changes += 1
    meta[M_CHANGES] = changes
    # 3. every job whose reservation has come starts, if its nodes are free.
    dims = free.shape[1]
    started = 0
    for x in range(nq):
        j = ints[Q_JOB, x]
        if b_t[j] > now:
            continue
        off = a_off[j]
        m = a_len[j]
        ok = True
        for y in range(off, off + m):
            node = pool_nodes[y]
            for d in range(dims):
                if free[node, d] < pool_amt[y, d]:
                    ok = False
                    break
            if not ok:
                break
        if not ok:
            stale[j] = 1
            continue
        for y in range(off, off + m):
            node = pool_nodes[y]
            for d in range(dims):
                free[node, d] -= pool_amt[y, d]
        stale[j] = 2  # started (the loop below moves it to the running jobs)
        ints[OUT, started] = j
        started += 1
    # The caller starts them through the state (which takes their amounts):
    # give the amounts back, and move the jobs from the queue to the running.
    w = 0
    for x in range(nq):
        j = ints[Q_JOB, x]
        if stale[j] == 2:
            stale[j] = 0
            booked[j] = 0
            off = a_off[j]
            for y in range(off, off + a_len[j]):
                node = pool_nodes[y]
                for d in range(dims):
                    free[node, d] += pool_amt[y, d]
            n_run = meta[M_RUNNING]
            ints[R_JOB, n_run] = j
            ints[R_POS, j] = n_run
            meta[M_RUNNING] = n_run + 1
            floats[J_END, j] = now + est[j]
            continue
        ints[Q_JOB, w] = j
        floats[Q_KEY, w] = floats[Q_KEY, x]
        w += 1
    meta[M_QUEUE] = w
    due = INF
    for x in range(w):
        t = b_t[ints[Q_JOB, x]]
        if now < t < due:
            due = t
    floats[SCALARS, 0] = due
    return started, 0


__all__ = ["node_conservative_pass"]
