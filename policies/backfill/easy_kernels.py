"""EASY backfilling compiled with numba (optional, ``schedlab[fast]``).

One call per scheduling pass does the whole EASY pass of :mod:`.easy` on arrays:
it brings its copies of the wait queue (job indices in priority order, with their
sizes, estimates and numeric keys side by side, so that the scan reads contiguous
memory) and of the running jobs (sorted by estimated end, ties by job index, as
``SchedulerState.running`` is) up to date with what happened since the last call,
starts jobs from the head while they fit, walks the running jobs to the head's
shadow time, and scans the queue for the jobs that may backfill, stopping as soon
as no processor is free. The Python side (:class:`.easy.CompiledEasy`) then starts
the same jobs through the public :class:`~schedlab.sim.SchedulerState`, which
checks each of them.

The module is self-contained (no helper is shared with other kernel modules):
numba's cache (``cache=True``, in ``__pycache__`` or numba's user cache folder)
is invalidated when this file changes, but it does not track the files a cached
function inlines from, so a shared helper could be stale after an upgrade. One
exception, on purpose: :func:`easy_run` compiles in the functions of
:mod:`schedlab.sim.online_linear` (an online linear model's arithmetic, which the
estimator calls in Python: the same source, the same floating-point results).
This file records that file's hash (:data:`ONLINE_LINEAR_SHA256`, checked by a
test): a change there must come with a new hash here, which invalidates the
cache; a hash that does not match (an edit without it) turns the cache of
:func:`easy_run` off, so it is never stale.

Layout: ``ints`` and ``floats`` are 2-D arrays whose rows (the constants below) are
indexed by job or by position; ``meta`` holds the lengths of the copies
(``M_*``). Arrivals are inserted by their numeric keys (``floats[JOB_KEY]``), or at
the positions the Python side gives (``ints[PENDING_AT]``) when keys are not plain
numbers. With ``NUMBA_DISABLE_JIT=1`` the kernel runs as
plain Python (slow, to step through it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
from numba import config as numba_config
from numba import njit
from numba.core import cgutils, types
from numba.core.cpu import CPUTargetOptions
from numba.extending import intrinsic
from schedlab.sim import online_linear

_F = TypeVar("_F", bound=Callable[..., Any])


def _compiler(**options: Any) -> Callable[[_F], _F]:
    """numba's ``njit(**options)``, typed as what it is to a caller: a compiled
    function takes and returns what its Python source does."""
    return cast("Callable[[_F], _F]", njit(**options))


# The kernel allocates nothing: it runs without numba's reference counting (each
# call passing arrays then costs no atomic updates). ``_nrt`` is a private option:
# a numba without it runs the same kernel, a little slower.
_NO_REFCOUNTS = {"_nrt": False} if hasattr(CPUTargetOptions, "_nrt") else {}
_jit = _compiler(cache=True, nogil=True, **_NO_REFCOUNTS)
_inline = _compiler(cache=True, nogil=True, inline="always", **_NO_REFCOUNTS)

#: SHA-256 of ``schedlab/sim/online_linear.py``, whose functions :func:`easy_run`
#: compiles in (see the module docstring): update it with that file.
ONLINE_LINEAR_SHA256 = "fd7ae6ecd0f2e98ed4fcdad0126a818177ba593850cc514e41e4bb4b4477f14b"
#: Whether the online model's source is the one this file records (else
#: :func:`easy_run` is compiled afresh in each process, never from the cache).
ONLINE_LINEAR_CURRENT = (
    hashlib.sha256(Path(online_linear.__file__).read_bytes()).hexdigest() == ONLINE_LINEAR_SHA256
)
_jit_run = _compiler(cache=ONLINE_LINEAR_CURRENT, nogil=True, **_NO_REFCOUNTS)
# The online model's arithmetic, compiled from its one source (inlined into
# easy_run, so not cached apart).
_shared = _compiler(nogil=True, inline="always", **_NO_REFCOUNTS)
_ring_push = _shared(online_linear.ring_push)
_history_features = _shared(online_linear.history_features)
_linear_prediction = _shared(online_linear.linear_prediction)
_adagrad_step = _shared(online_linear.adagrad_step)


if TYPE_CHECKING:  # as the kernels call them (numba's stubs would want the typing
    # context, which numba passes itself, as a first argument)

    def _memmove(array: np.ndarray, dst: int, src: int, count: int) -> None:
        """``array[dst:dst + count] = array[src:src + count]`` (overlap allowed)."""

elif numba_config.DISABLE_JIT:  # NUMBA_DISABLE_JIT=1: the kernel runs as plain Python

    def _memmove(array, dst, src, count):
        """``array[dst:dst + count] = array[src:src + count]`` (overlap allowed)."""
        array[dst : dst + count] = array[src : src + count].copy()

else:

    @intrinsic
    def _memmove(typingctx, array, dst, src, count):
        """``array[dst:dst + count] = array[src:src + count]`` as one ``memmove`` (the
        ranges may overlap; numba's slice assignment would copy through a temporary)."""
        signature = types.void(array, types.intp, types.intp, types.intp)

        def codegen(context, builder, sig, args):
            data, to, frm, n = args
            view = context.make_array(sig.args[0])(context, builder, data)
            itemsize = context.get_abi_sizeof(context.get_data_type(sig.args[0].dtype))
            cgutils.raw_memmove(
                builder, builder.gep(view.data, [to]), builder.gep(view.data, [frm]), n, itemsize
            )
            return context.get_dummy_value()

        return signature, codegen


# Rows of ``ints``.
JOB_SIZE = 0  # by job: processors
QUEUE_JOB = 1  # by queue slot: the job
QUEUE_SIZE = 2  # by queue slot: its size (HOLE: the job left the queue)
PENDING = 3  # arrivals to insert (or, when rebuilding, the whole queue in order)
PENDING_AT = 4  # their queue positions, when the keys are not numbers
RUN_NEW = 5  # jobs started outside the kernel (their estimated end in floats[JOB_END])
FINISHED = 6  # jobs that ended
OUT = 7  # the jobs this pass starts, in the order to start them
BLOCK_SIZE = 8  # by block of BLOCK queue slots: at most the smallest size in it
SUPER_SIZE = 9  # by super-block of SUPER slots: at most the smallest block bound in it
N_INT_ROWS = 10

# Rows of ``floats``.
JOB_ESTIMATE = 0  # by job
JOB_KEY = 1  # by job: its numeric priority key
QUEUE_ESTIMATE = 2  # by queue slot (inf for a hole)
QUEUE_KEY = 3  # by queue slot
JOB_END = 4  # by job: estimated end once started
BLOCK_ESTIMATE = 5  # by block: at most the shortest estimate in it
SUPER_ESTIMATE = 6  # by super-block: at most the shortest block bound in it
N_FLOAT_ROWS = 7

# Entries of ``meta``.
M_FIRST = 0  # first queue slot in use (the head, once holes before it are passed)
M_END = 1  # one past the last queue slot in use
M_WAITING = 2  # jobs in the queue copy (slots in use that are not holes)
M_RUNNING = 3  # running jobs (in the blocks: not the overdue ones of a whole run)
M_BLOCKS = 4  # blocks of running jobs in use (``rints[B_ORDER][:M_BLOCKS]``)
M_FREE = 5  # unused blocks (``rints[B_FREE][:M_FREE]``)
#: Processors of the overdue jobs of a whole run (:func:`easy_run`): running jobs
#: whose estimate a correction did not raise, treated as ending now from then
#: on; they are kept out of the running jobs' blocks (0 in a pass-by-pass run).
M_OVERDUE = 6
N_META = 7

#: Queue slots per block: a block whose bounds (smallest size, shortest estimate)
#: fail the backfilling test is skipped whole.
BLOCK = 16
#: Blocks per super-block: a long queue (thousands of jobs when predictions are
#: short) is first screened by super-blocks of BLOCK * SUPER_BLOCKS slots, whose
#: bounds are at most their blocks' (the same test, one level up).
SUPER_BLOCKS = 16
SUPER = BLOCK * SUPER_BLOCKS
#: The size of a hole: a slot whose job started (it keeps the job and key, so the
#: slots stay sorted; its size and estimate make it fail every test).
HOLE = 2**62
INF = np.inf


# The running jobs, by estimated end (ties by job index), in blocks of at most
# RUN_BLOCK: ``rints`` rows (R_JOB, R_SIZE by slot: block ``b`` holds slots
# ``b * RUN_BLOCK ..``; B_ORDER by position: the blocks in order; B_COUNT and
# B_SUM by block: its jobs and their processors; B_FREE: a stack of unused
# blocks) and ``rend`` (by slot: the estimated end). A correction moves a job
# within two blocks instead of across all the jobs between its two ends, and the
# walk to the shadow time adds whole blocks.
R_JOB = 0
R_SIZE = 1
B_ORDER = 2
B_COUNT = 3
B_SUM = 4
B_FREE = 5
N_RUN_ROWS = 6
#: Jobs per block at most (a full block splits in two halves; two neighbours
#: holding at most half of it together merge, so at most ``4 * jobs /
#: RUN_BLOCK + 1`` blocks are in use).
RUN_BLOCK = 64


def run_capacity(n_jobs: int) -> int:
    """Blocks the running jobs of a run of ``n_jobs`` jobs may need at once."""
    return 4 * (n_jobs + 1) // RUN_BLOCK + 4


@_inline
def _rl_before(rend: np.ndarray, r_job: np.ndarray, x: int, e: float, j: int) -> bool:
    """Whether slot ``x`` holds a job before ``(e, j)``."""
    return rend[x] < e or (rend[x] == e and r_job[x] < j)


@_inline
def _rl_locate(
    meta: np.ndarray,
    rints: np.ndarray,
    rend: np.ndarray,
    e: float,
    j: int,
    start: int,
    near: bool,
) -> tuple[int, int]:
    """``(position, index)``: where ``(e, j)`` is or would go (the block at
    ``position`` in order, ``index`` in it), knowing it is not before the block
    at position ``start``; ``(0, 0)`` with no block. With ``near``, the place is
    expected close to ``start`` (a correction: the job was at the front, or is
    raised a little), and is looked for from there by doubling steps, else by
    bisection."""
    order = rints[B_ORDER]
    count = rints[B_COUNT]
    r_job = rints[R_JOB]
    nb = meta[M_BLOCKS]
    if nb == 0:
        return 0, 0
    # The first block whose last job is not before (e, j), else the last block.
    lo = start
    hi = nb - 1
    if near:
        step = 1
        while lo < hi:
            b = order[lo]
            if not _rl_before(rend, r_job, b * RUN_BLOCK + count[b] - 1, e, j):
                hi = lo
                break
            lo += 1
            probe = lo + step - 1
            if probe >= hi:
                break
            b = order[probe]
            if not _rl_before(rend, r_job, b * RUN_BLOCK + count[b] - 1, e, j):
                hi = probe
                break
            lo = probe + 1
            step *= 2
    while lo < hi:
        mid = (lo + hi) >> 1
        b = order[mid]
        if _rl_before(rend, r_job, b * RUN_BLOCK + count[b] - 1, e, j):
            lo = mid + 1
        else:
            hi = mid
    b = order[lo]
    base = b * RUN_BLOCK
    x0 = 0
    x1 = count[b]
    if near and start == 0:
        # At the front: the first jobs first.
        while x0 < x1 and x0 < 4 and _rl_before(rend, r_job, base + x0, e, j):
            x0 += 1
        if x0 < 4:
            x1 = x0
    while x0 < x1:
        mid = (x0 + x1) >> 1
        if _rl_before(rend, r_job, base + mid, e, j):
            x0 = mid + 1
        else:
            x1 = mid
    return lo, x0


@_inline
def _rl_shift(rints: np.ndarray, rend: np.ndarray, dst: int, src: int, count: int) -> None:
    """Move ``count`` slots from ``src`` to ``dst`` (overlap allowed)."""
    if count > 0:
        _memmove(rend, dst, src, count)
        _memmove(rints[R_JOB], dst, src, count)
        _memmove(rints[R_SIZE], dst, src, count)


@_inline
def _rl_order_insert(meta: np.ndarray, rints: np.ndarray, p: int, b: int) -> None:
    """Block ``b`` takes position ``p`` in the order."""
    order = rints[B_ORDER]
    nb = meta[M_BLOCKS]
    _memmove(order, p + 1, p, nb - p)
    order[p] = b
    meta[M_BLOCKS] = nb + 1


@_inline
def _rl_order_remove(meta: np.ndarray, rints: np.ndarray, p: int) -> None:
    """The block at position ``p`` leaves the order (and is free again)."""
    order = rints[B_ORDER]
    nb = meta[M_BLOCKS] - 1
    b = order[p]
    _memmove(order, p, p + 1, nb - p)
    meta[M_BLOCKS] = nb
    rints[B_FREE, meta[M_FREE]] = b
    meta[M_FREE] += 1


@_inline
def _rl_new_block(meta: np.ndarray, rints: np.ndarray) -> int:
    """An unused block (empty)."""
    meta[M_FREE] -= 1
    b = rints[B_FREE, meta[M_FREE]]
    rints[B_COUNT, b] = 0
    rints[B_SUM, b] = 0
    return b


@_inline
def _rl_insert(
    meta: np.ndarray,
    rints: np.ndarray,
    rend: np.ndarray,
    e: float,
    j: int,
    s: int,
    start: int,
    near: bool,
) -> None:
    """A job starts running (or is moved): ``(e, j)`` of size ``s`` joins (not
    before the block at position ``start``; ``near``: see :func:`_rl_locate`)."""
    count = rints[B_COUNT]
    total = rints[B_SUM]
    r_size = rints[R_SIZE]
    if meta[M_BLOCKS] == 0:
        _rl_order_insert(meta, rints, 0, _rl_new_block(meta, rints))
    p, x = _rl_locate(meta, rints, rend, e, j, start, near)
    b = rints[B_ORDER, p]
    if count[b] == RUN_BLOCK:
        # Full: its upper half moves to a new block just after it.
        half = RUN_BLOCK >> 1
        b2 = _rl_new_block(meta, rints)
        _rl_shift(rints, rend, b2 * RUN_BLOCK, b * RUN_BLOCK + half, RUN_BLOCK - half)
        moved = 0
        for y in range(b2 * RUN_BLOCK, b2 * RUN_BLOCK + RUN_BLOCK - half):
            moved += r_size[y]
        count[b] = half
        count[b2] = RUN_BLOCK - half
        total[b] -= moved
        total[b2] = moved
        _rl_order_insert(meta, rints, p + 1, b2)
        if x > half:
            b = b2
            x -= half
    base = b * RUN_BLOCK
    c = count[b]
    _rl_shift(rints, rend, base + x + 1, base + x, c - x)
    rend[base + x] = e
    rints[R_JOB, base + x] = j
    r_size[base + x] = s
    count[b] = c + 1
    total[b] += s
    meta[M_RUNNING] += 1


@_inline
def _rl_merge(meta: np.ndarray, rints: np.ndarray, rend: np.ndarray, p: int) -> None:
    """The blocks at positions ``p`` and ``p + 1`` become one (at ``p``)."""
    count = rints[B_COUNT]
    total = rints[B_SUM]
    a = rints[B_ORDER, p]
    b = rints[B_ORDER, p + 1]
    _rl_shift(rints, rend, a * RUN_BLOCK + count[a], b * RUN_BLOCK, count[b])
    count[a] += count[b]
    total[a] += total[b]
    _rl_order_remove(meta, rints, p + 1)


@_inline
def _rl_remove(meta: np.ndarray, rints: np.ndarray, rend: np.ndarray, p: int, x: int) -> int:
    """The job at ``index`` x of the block at position ``p`` leaves; returns its
    size."""
    count = rints[B_COUNT]
    total = rints[B_SUM]
    b = rints[B_ORDER, p]
    base = b * RUN_BLOCK
    s = rints[R_SIZE, base + x]
    c = count[b] - 1
    _rl_shift(rints, rend, base + x, base + x + 1, c - x)
    count[b] = c
    total[b] -= s
    meta[M_RUNNING] -= 1
    if c == 0:
        _rl_order_remove(meta, rints, p)
        return s
    nb = meta[M_BLOCKS]
    order = rints[B_ORDER]
    half = RUN_BLOCK >> 1
    if p + 1 < nb and c + count[order[p + 1]] <= half:
        _rl_merge(meta, rints, rend, p)
    elif p > 0 and c + count[order[p - 1]] <= half:
        _rl_merge(meta, rints, rend, p - 1)
    return s


@_inline
def _rl_find(
    meta: np.ndarray, rints: np.ndarray, rend: np.ndarray, e: float, j: int, near: bool
) -> tuple[int, int]:
    """``(position, index)`` of running job ``j`` of estimated end ``e``
    (``near``: expected at the front); ``(-1, -1)`` if it is not there."""
    p, x = _rl_locate(meta, rints, rend, e, j, 0, near)
    if meta[M_BLOCKS] == 0:
        return -1, -1
    b = rints[B_ORDER, p]
    if x >= rints[B_COUNT, b] or rints[R_JOB, b * RUN_BLOCK + x] != j:
        return -1, -1
    return p, x


@_inline
def _rl_shadow(
    meta: np.ndarray, rints: np.ndarray, rend: np.ndarray, now: float, free: int, need: int
) -> tuple[float, int]:
    """The head's shadow time (the first estimated end by which ``need``
    processors are free, ``free`` now; ``now`` if never) and the extra
    processors then. The overdue jobs (``meta[M_OVERDUE]`` processors, not in
    the blocks) count as ending now, before every job of the blocks."""
    order = rints[B_ORDER]
    count = rints[B_COUNT]
    total = rints[B_SUM]
    r_size = rints[R_SIZE]
    nb = meta[M_BLOCKS]
    avail = free + meta[M_OVERDUE]
    p = 0
    x = 0
    if avail >= need:
        # Enough by now: the jobs of the blocks ending by now are added below.
        shadow = now
        if nb == 0:
            return shadow, avail - need
        b = order[0]
        base = b * RUN_BLOCK
    else:
        while p < nb and avail + total[order[p]] < need:
            avail += total[order[p]]
            p += 1
        if p == nb:
            return now, 0
        b = order[p]
        base = b * RUN_BLOCK
        while True:
            avail += r_size[base + x]
            if avail >= need:
                break
            x += 1
        e = rend[base + x]
        shadow = e if e > now else now
        x += 1
    # The jobs ending by the shadow time too.
    while True:
        c = count[b]
        while x < c and rend[base + x] <= shadow:
            avail += r_size[base + x]
            x += 1
        if x < c:
            break
        p += 1
        if p == nb:
            break
        b = order[p]
        base = b * RUN_BLOCK
        c = count[b]
        if rend[base + c - 1] <= shadow:
            avail += total[b]
            x = c
        else:
            x = 0
    return shadow, avail - need


@_inline
def _queue_rank(key: np.ndarray, job: np.ndarray, lo: int, hi: int, k: float, j: int) -> int:
    """Slot of ``(k, j)`` among the queue's slots ``lo .. hi - 1`` (``bisect_left``;
    holes keep their job's key, so the slots stay sorted)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if key[mid] < k or (key[mid] == k and job[mid] < j):
            lo = mid + 1
        else:
            hi = mid
    return lo


@_inline
def _bound_groups(
    size: np.ndarray,
    est: np.ndarray,
    g_size: np.ndarray,
    g_est: np.ndarray,
    width: int,
    lo: int,
    hi: int,
) -> None:
    """Recompute the bounds (smallest size, shortest estimate) of the groups of
    ``width`` entries holding entries ``lo .. hi - 1`` (entries from ``hi`` on,
    past the queue's end, are not read)."""
    g = lo // width
    while g * width < hi:
        x0 = g * width
        x1 = min(x0 + width, hi)
        smallest = HOLE
        shortest = INF
        for x in range(x0, x1):
            if size[x] < smallest:
                smallest = size[x]
            if est[x] < shortest:
                shortest = est[x]
        g_size[g] = smallest
        g_est[g] = shortest
        g += 1


@_inline
def _bound_blocks(
    q_size: np.ndarray,
    q_est: np.ndarray,
    b_size: np.ndarray,
    b_est: np.ndarray,
    s_size: np.ndarray,
    s_est: np.ndarray,
    lo: int,
    hi: int,
) -> None:
    """Recompute the bounds of the blocks holding slots ``lo .. hi - 1`` and of
    their super-blocks."""
    _bound_groups(q_size, q_est, b_size, b_est, BLOCK, lo, hi)
    _bound_groups(b_size, b_est, s_size, s_est, SUPER_BLOCKS, lo // BLOCK, (hi - 1) // BLOCK + 1)


@_inline
def _compact(
    q_job: np.ndarray,
    q_size: np.ndarray,
    q_est: np.ndarray,
    q_key: np.ndarray,
    b_size: np.ndarray,
    b_est: np.ndarray,
    s_size: np.ndarray,
    s_est: np.ndarray,
    first: int,
    end: int,
) -> int:
    """Close the holes: the waiting jobs move to slots ``0 ..``; returns how many."""
    w = 0
    for x in range(first, end):
        if q_size[x] != HOLE:
            q_job[w] = q_job[x]
            q_size[w] = q_size[x]
            q_est[w] = q_est[x]
            q_key[w] = q_key[x]
            w += 1
    _bound_blocks(q_size, q_est, b_size, b_est, s_size, s_est, 0, w)
    return w


@_inline
def _insert_arrivals(
    ints: np.ndarray,
    floats: np.ndarray,
    first: int,
    end: int,
    waiting: int,
    n_pending: int,
    by_position: bool,
) -> tuple[int, int, int]:
    """Insert the ``n_pending`` arrivals (``ints[PENDING]``) into the queue copy
    (slots ``first .. end - 1``, ``waiting`` of them jobs), by their keys or at
    ``ints[PENDING_AT]`` with ``by_position``; returns the new ``(first, end,
    waiting)``."""
    job_size = ints[JOB_SIZE]
    q_job = ints[QUEUE_JOB]
    q_size = ints[QUEUE_SIZE]
    pending = ints[PENDING]
    b_size = ints[BLOCK_SIZE]
    job_est = floats[JOB_ESTIMATE]
    job_key = floats[JOB_KEY]
    q_est = floats[QUEUE_ESTIMATE]
    q_key = floats[QUEUE_KEY]
    b_est = floats[BLOCK_ESTIMATE]
    s_size = ints[SUPER_SIZE]
    s_est = floats[SUPER_ESTIMATE]
    capacity = q_job.shape[0]
    if by_position or end + n_pending > capacity or end - first - waiting > waiting + 64:
        end = _compact(q_job, q_size, q_est, q_key, b_size, b_est, s_size, s_est, first, end)
        first = 0
    at = ints[PENDING_AT]
    for x in range(n_pending):
        j = pending[x]
        k = job_key[j]
        p = at[x] if by_position else _queue_rank(q_key, q_job, first, end, k, j)
        s = job_size[j]
        e = job_est[j]
        if p > first and q_size[p - 1] == HOLE:
            # A hole just before: the job takes it (the slots stay sorted), and
            # only its block's bounds may fall.
            p -= 1
            q_job[p] = j
            q_size[p] = s
            q_est[p] = e
            q_key[p] = k
            if s < b_size[p // BLOCK]:
                b_size[p // BLOCK] = s
            if e < b_est[p // BLOCK]:
                b_est[p // BLOCK] = e
            if s < s_size[p // SUPER]:
                s_size[p // SUPER] = s
            if e < s_est[p // SUPER]:
                s_est[p // SUPER] = e
        else:
            _memmove(q_job, p + 1, p, end - p)
            _memmove(q_size, p + 1, p, end - p)
            _memmove(q_est, p + 1, p, end - p)
            _memmove(q_key, p + 1, p, end - p)
            end += 1
            q_job[p] = j
            q_size[p] = s
            q_est[p] = e
            q_key[p] = k
            _bound_blocks(q_size, q_est, b_size, b_est, s_size, s_est, p, end)
        waiting += 1
    return first, end, waiting


@_inline
def _fold_block(
    s_size: np.ndarray,
    s_est: np.ndarray,
    b: int,
    size: int,
    est: float,
    acc_size: int,
    acc_est: float,
) -> tuple[int, float]:
    """Block ``b``'s bounds (``size``, ``est``) folded into the least bounds of its
    super-block's blocks so far (the scan went through it from its first block);
    at its last block they become the super-block's. Returns the folded bounds."""
    if size < acc_size:
        acc_size = size
    if est < acc_est:
        acc_est = est
    if b % SUPER_BLOCKS == SUPER_BLOCKS - 1:
        s_size[b // SUPER_BLOCKS] = acc_size
        s_est[b // SUPER_BLOCKS] = acc_est
    return acc_size, acc_est


@_jit
def easy_pass(
    meta: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    rints: np.ndarray,
    rend: np.ndarray,
    now: float,
    free: int,
    n_pending: int,
    rebuild: bool,
    by_position: bool,
    n_run_new: int,
    n_finished: int,
) -> tuple[int, int, int, int, float]:
    """One EASY pass at ``now`` with ``free`` processors free, after ``n_pending``
    arrivals (``ints[PENDING]``, inserted at the positions ``ints[PENDING_AT]`` with
    ``by_position``; with ``rebuild``, the whole queue), ``n_run_new`` jobs started
    outside the kernel and ``n_finished`` ends.

    Returns ``(started, from_head, head, extra, shadow)``: ``started`` jobs start
    (``ints[OUT][:started]``, in order; ``-1``: a finished job was not running, a
    bug), the first ``from_head`` of them from the head; ``head`` is the first
    waiting job after the pass (``-1``: none), ``shadow`` its shadow time and
    ``extra`` the extra processors left then."""
    job_size = ints[JOB_SIZE]
    q_job = ints[QUEUE_JOB]
    q_size = ints[QUEUE_SIZE]
    pending = ints[PENDING]
    out = ints[OUT]
    b_size = ints[BLOCK_SIZE]
    job_est = floats[JOB_ESTIMATE]
    job_key = floats[JOB_KEY]
    q_est = floats[QUEUE_ESTIMATE]
    q_key = floats[QUEUE_KEY]
    job_end = floats[JOB_END]
    b_est = floats[BLOCK_ESTIMATE]
    s_size = ints[SUPER_SIZE]
    s_est = floats[SUPER_ESTIMATE]

    # The running jobs: those started outside the kernel, then those that ended.
    run_new = ints[RUN_NEW]
    for x in range(n_run_new):
        j = run_new[x]
        _rl_insert(meta, rints, rend, job_end[j], j, job_size[j], 0, False)
    error = False
    finished = ints[FINISHED]
    for x in range(n_finished):
        j = finished[x]
        p, r = _rl_find(meta, rints, rend, job_end[j], j, False)
        if p < 0:
            error = True
            continue
        _rl_remove(meta, rints, rend, p, r)

    # The queue: rebuilt after a re-sort, else the arrivals inserted.
    first = meta[M_FIRST]
    end = meta[M_END]
    waiting = meta[M_WAITING]
    if rebuild:
        for x in range(n_pending):
            j = pending[x]
            q_job[x] = j
            q_size[x] = job_size[j]
            q_est[x] = job_est[j]
            q_key[x] = job_key[j]
        first = 0
        end = waiting = n_pending
        _bound_blocks(q_size, q_est, b_size, b_est, s_size, s_est, 0, end)
    elif n_pending:
        first, end, waiting = _insert_arrivals(
            ints, floats, first, end, waiting, n_pending, by_position
        )

    # 1. Start from the head while jobs fit (they leave holes).
    h = 0
    x = first
    while x < end:
        s = q_size[x]
        if s == HOLE:
            x += 1
            continue
        if s > free:
            break
        j = q_job[x]
        free -= s
        e = now + job_est[j]
        job_end[j] = e
        _rl_insert(meta, rints, rend, e, j, s, 0, False)
        q_size[x] = HOLE
        q_est[x] = INF
        out[h] = j
        h += 1
        x += 1
    first = x
    waiting -= h
    n_out = h
    if waiting == 0:
        meta[M_FIRST] = 0
        meta[M_END] = 0
        meta[M_WAITING] = 0
        return -1 if error else n_out, h, -1, 0, now

    # 2. The head's shadow time and the extra processors then.
    shadow, extra = _rl_shadow(meta, rints, rend, now, free, q_size[first])
    head = q_job[first]

    # 3. Backfill in priority order while processors are free. A block whose
    # smallest size and shortest estimate fail the test holds no candidate: it is
    # skipped whole; a block looked into gets its bounds tightened, and so does a
    # super-block the scan goes through from its first block to its last (from
    # its blocks' bounds, read on the way: without it, a super-block whose jobs
    # started kept the bounds they gave it, and passed its test for nothing).
    i = first + 1
    # A super-block the scan goes through from its first block gets its bounds
    # from its blocks' (``whole``: so far; ``acc_*``: their least bounds).
    whole = False
    acc_size = HOLE
    acc_est = INF
    while free > 0 and i < end:
        sb = i // SUPER
        if i == sb * SUPER:
            ss = s_size[sb]
            if not (ss <= free and (now + s_est[sb] <= shadow or ss <= extra)):
                i += SUPER
                continue
            whole = True
            acc_size = HOLE
            acc_est = INF
        b = i // BLOCK
        if i == b * BLOCK:
            bs = b_size[b]
            if not (bs <= free and (now + b_est[b] <= shadow or bs <= extra)):
                if whole:
                    acc_size, acc_est = _fold_block(
                        s_size, s_est, b, bs, b_est[b], acc_size, acc_est
                    )
                i += BLOCK
                continue
        stop = min((b + 1) * BLOCK, end)
        tight = i == b * BLOCK
        smallest = HOLE
        shortest = INF
        while i < stop:
            s = q_size[i]
            if s <= free:
                ok = True
                if now + q_est[i] <= shadow:
                    pass
                elif s <= extra:
                    extra -= s
                else:
                    ok = False
                if ok:
                    j = q_job[i]
                    free -= s
                    e = now + job_est[j]
                    job_end[j] = e
                    _rl_insert(meta, rints, rend, e, j, s, 0, False)
                    q_size[i] = HOLE
                    q_est[i] = INF
                    out[n_out] = j
                    n_out += 1
                    i += 1
                    if free == 0:
                        tight = False
                        break
                    continue
            if s < smallest:
                smallest = s
            if q_est[i] < shortest:
                shortest = q_est[i]
            i += 1
        if tight:
            b_size[b] = smallest
            b_est[b] = shortest
            if whole:
                acc_size, acc_est = _fold_block(
                    s_size, s_est, b, smallest, shortest, acc_size, acc_est
                )
            elif b % SUPER_BLOCKS == SUPER_BLOCKS - 1:
                # The super-block's last block: its bound may rise too.
                _bound_groups(b_size, b_est, s_size, s_est, SUPER_BLOCKS, b, b + 1)
    waiting -= n_out - h
    meta[M_FIRST] = first
    meta[M_END] = end
    meta[M_WAITING] = waiting
    return -1 if error else n_out, h, head, extra, shadow


@_inline
def _move_at(
    meta: np.ndarray,
    floats: np.ndarray,
    rints: np.ndarray,
    rend: np.ndarray,
    p: int,
    x: int,
    j: int,
    old_end: float,
    new_end: float,
) -> None:
    """Move running job ``j``, at index ``x`` of the block at position ``p``, from
    estimated end ``old_end`` to ``new_end``."""
    floats[JOB_END, j] = new_end
    b = rints[B_ORDER, p]
    here = b * RUN_BLOCK + x
    # The slot of the next running job (-1: none).
    after = here + 1
    if x + 1 == rints[B_COUNT, b]:
        after = -1
        if p + 1 < meta[M_BLOCKS]:
            after = rints[B_ORDER, p + 1] * RUN_BLOCK
    if new_end >= old_end and (after < 0 or not _rl_before(rend, rints[R_JOB], after, new_end, j)):
        # Still before the next job: it stays where it is.
        rend[here] = new_end
        return
    r_job = rints[R_JOB]
    last = b * RUN_BLOCK + rints[B_COUNT, b] - 1
    if new_end >= old_end and not _rl_before(rend, r_job, last, new_end, j):
        # Its new place is in its block (before the block's last job): the jobs
        # between its two places move down one slot (no search among the
        # blocks, no shift of the block's other jobs, the same sum).
        lo = here + 1
        hi = last
        while lo < hi:
            mid = (lo + hi) >> 1
            if _rl_before(rend, r_job, mid, new_end, j):
                lo = mid + 1
            else:
                hi = mid
        s = rints[R_SIZE, here]
        _rl_shift(rints, rend, here, here + 1, lo - here - 1)
        rend[lo - 1] = new_end
        r_job[lo - 1] = j
        rints[R_SIZE, lo - 1] = s
        return
    s = _rl_remove(meta, rints, rend, p, x)
    if new_end >= old_end:
        # Not before the old place's block, or the one before it (which may
        # have taken the old block's jobs).
        _rl_insert(meta, rints, rend, new_end, j, s, p - 1 if p > 0 else 0, True)
    else:
        _rl_insert(meta, rints, rend, new_end, j, s, 0, False)


@_jit
def move_running(
    meta: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    rints: np.ndarray,
    rend: np.ndarray,
    j: int,
    old_end: float,
    new_end: float,
) -> bool:
    """A running job's estimate was raised (a prediction correction): move job
    ``j`` in the kernel's running jobs from estimated end ``old_end`` to ``new_end``.
    ``False`` (nothing changed) if it was not there."""
    p, x = _rl_find(meta, rints, rend, old_end, j, True)
    if p < 0:
        return False
    _move_at(meta, floats, rints, rend, p, x, j, old_end, new_end)
    return True


@_inline
def _heap_less(t: np.ndarray, job: np.ndarray, a: int, b: int) -> bool:
    return t[a] < t[b] or (t[a] == t[b] and job[a] < job[b])


@_inline
def _heap_swap(t: np.ndarray, job: np.ndarray, a: int, b: int) -> None:
    x = t[a]
    t[a] = t[b]
    t[b] = x
    y = job[a]
    job[a] = job[b]
    job[b] = y


@_inline
def _heap_push(t: np.ndarray, job: np.ndarray, n: int, e: float, j: int) -> int:
    """Push ``(e, j)`` on the binary heap of ``n`` ends; returns the new count."""
    i = n
    t[i] = e
    job[i] = j
    while i > 0:
        parent = (i - 1) >> 1
        if _heap_less(t, job, i, parent):
            _heap_swap(t, job, i, parent)
            i = parent
        else:
            break
    return n + 1


@_inline
def _heap_pop(t: np.ndarray, job: np.ndarray, n: int) -> int:
    """Remove the smallest ``(end, job)`` of the heap of ``n``; returns the new count."""
    n -= 1
    _heap_replace_top(t, job, n, t[n], job[n])
    return n


@_inline
def _heap_replace_top(t: np.ndarray, job: np.ndarray, n: int, e: float, j: int) -> None:
    """Replace the smallest entry of the heap of ``n`` by ``(e, j)`` (one sift
    down instead of a pop and a push)."""
    t[0] = e
    job[0] = j
    i = 0
    while True:
        left = 2 * i + 1
        if left >= n:
            break
        child = left
        if left + 1 < n and _heap_less(t, job, left + 1, left):
            child = left + 1
        if _heap_less(t, job, child, i):
            _heap_swap(t, job, child, i)
            i = child
        else:
            break


@_inline
def _sort_small(values: np.ndarray, n: int) -> None:
    """Sort ``values[:n]`` in place (insertion sort: a handful of arrivals)."""
    for i in range(1, n):
        v = values[i]
        k = i - 1
        while k >= 0 and values[k] > v:
            values[k + 1] = values[k]
            k -= 1
        values[k + 1] = v


# Entries of easy_run's ``model`` (the run-time prediction made at submission,
# schedlab.sim.whole_run.UserHistoryModel or OnlineLinearModel) and ``counts``
# (what it did).
MODEL_PREDICT = 0  # 0: estimates as given; PREDICT_HISTORY or PREDICT_LINEAR
MODEL_WINDOW = 1  # completed jobs kept per user
MODEL_CORRECTION = 2  # 0: none, 1: tsafrir, 2: requested
MODEL_BATCH = 3  # linear model: completed jobs per learning step
N_MODEL = 4
PREDICT_HISTORY = 1  # the mean of the user's last run times (UserHistoryModel)
PREDICT_LINEAR = 2  # an online linear model (OnlineLinearModel)
COUNT_FALLBACKS = 0  # predictions unknown (no history, no requested time)
COUNT_CORRECTIONS = 1  # estimates raised
COUNT_TRAINED = 2  # linear model: jobs its learning steps took
COUNT_RAISED = 3  # predictions below the minimum estimate, raised to it
N_COUNTS = 4
# Entries of easy_run's ``lin_par`` (the linear model's float parameters).
LIN_RATE = 0
LIN_UNDER_WEIGHT = 1
LIN_SCALE = 2
N_LIN_PAR = 3
# Rows of easy_run's ``lin_slots``.
LIN_SLOT = 0  # by job: its row of lin_x (written at its submission)
LIN_FREE = 1  # rows of lin_x free again, a stack


@_inline
def _predict(
    j: int,
    user: np.ndarray,
    requested: np.ndarray,
    history: np.ndarray,
    hist_count: np.ndarray,
    hist_next: np.ndarray,
) -> float:
    """The mean run time of the user's last completed jobs (summed oldest first),
    never more than the requested time; the requested time without history."""
    u = user[j]
    count = hist_count[u]
    cap = requested[j]
    if count == 0:
        return cap
    window = history.shape[1]
    first = hist_next[u] - count
    if first < 0:
        first += window
    total = 0.0
    for k in range(count):
        x = first + k
        if x >= window:
            x -= window
        total += history[u, x]
    guess = total / count
    if cap == cap and cap < guess:
        return cap
    return guess


@_inline
def _remember(
    j: int,
    run: float,
    user: np.ndarray,
    history: np.ndarray,
    hist_count: np.ndarray,
    hist_next: np.ndarray,
) -> None:
    """A completed job's run time joins its user's history (the oldest leaves)."""
    u = user[j]
    window = history.shape[1]
    history[u, hist_next[u]] = run
    hist_next[u] = hist_next[u] + 1 if hist_next[u] + 1 < window else 0
    if hist_count[u] < window:
        hist_count[u] += 1


@_inline
def _linear_arrival(
    j: int,
    user: np.ndarray,
    requested: np.ndarray,
    history: np.ndarray,
    hist_count: np.ndarray,
    hist_next: np.ndarray,
    lin_x: np.ndarray,
    slot: int,
    lin_static: np.ndarray,
    lin_w: np.ndarray,
    scale: float,
    trained: bool,
) -> float:
    """The linear model's prediction for ``j`` at its submission (the estimator's
    ``estimate``): its static features and history features fill ``lin_x[slot]``;
    the requested time before the first learning step."""
    u = user[j]
    a, b, c, d = _history_features(history[u], hist_next[u], hist_count[u])
    xr = lin_x[slot]
    k = xr.shape[0] - 4  # the four history features come last
    static = lin_static[j]
    for x in range(k):
        xr[x] = static[x]
    xr[k] = a
    xr[k + 1] = b
    xr[k + 2] = c
    xr[k + 3] = d
    if not trained:
        return requested[j]
    return _linear_prediction(lin_w, xr, scale, requested[j])


@_inline
def _linear_end(
    j: int,
    run: float,
    user: np.ndarray,
    history: np.ndarray,
    hist_count: np.ndarray,
    hist_next: np.ndarray,
    lin_x: np.ndarray,
    lin_slots: np.ndarray,
    n_free: int,
    lin_w: np.ndarray,
    lin_sq: np.ndarray,
    lin_grad: np.ndarray,
    lin_rows: np.ndarray,
    lin_y: np.ndarray,
    n_lin: int,
    batch: int,
    lin_par: np.ndarray,
    lin_target: np.ndarray,
    counts: np.ndarray,
) -> tuple[int, int]:
    """Job ``j`` ended (the estimator's ``on_finish``): its target (``lin_target[j]``) joins its
    user's ring and the pending batch (``lin_rows``/``lin_y``, ``n_lin`` long,
    of rows of ``lin_x``); a full batch makes one learning step. A job's row is
    free again (``lin_slots[LIN_FREE][:n_free]``) once no step will read it.
    Returns the new pending and free counts."""
    free_rows = lin_slots[LIN_FREE]
    slot = lin_slots[LIN_SLOT, j]
    if run != run or run < 0:
        free_rows[n_free] = slot
        return n_lin, n_free + 1
    y = lin_target[j]
    u = user[j]
    nxt, count = _ring_push(history[u], hist_next[u], hist_count[u], y)
    hist_next[u] = nxt
    hist_count[u] = count
    lin_rows[n_lin] = slot
    lin_y[n_lin] = y
    n_lin += 1
    if n_lin >= batch:
        _adagrad_step(
            lin_x,
            lin_rows,
            lin_y,
            n_lin,
            lin_w,
            lin_sq,
            lin_grad,
            lin_par[LIN_RATE],
            lin_par[LIN_UNDER_WEIGHT],
            counts[COUNT_TRAINED] == 0,
        )
        counts[COUNT_TRAINED] += n_lin
        for x in range(n_lin):
            free_rows[n_free] = lin_rows[x]
            n_free += 1
        n_lin = 0
    return n_lin, n_free


@_inline
def _learn_end(
    j: int,
    predict: int,
    run: float,
    user: np.ndarray,
    history: np.ndarray,
    hist_count: np.ndarray,
    hist_next: np.ndarray,
    lin_x: np.ndarray,
    lin_slots: np.ndarray,
    n_free: int,
    lin_w: np.ndarray,
    lin_sq: np.ndarray,
    lin_grad: np.ndarray,
    lin_rows: np.ndarray,
    lin_y: np.ndarray,
    n_lin: int,
    batch: int,
    lin_par: np.ndarray,
    lin_target: np.ndarray,
    counts: np.ndarray,
) -> tuple[int, int]:
    """Job ``j`` ended after ``run`` seconds: the predictor (``predict``, a
    ``PREDICT_*`` code) learns from it (:func:`_remember`, :func:`_linear_end`).
    Returns the linear model's pending and free counts. (Shared with the
    node-level whole run.)"""
    if predict == PREDICT_HISTORY:
        _remember(j, run, user, history, hist_count, hist_next)
    elif predict == PREDICT_LINEAR:
        n_lin, n_free = _linear_end(
            j, run, user, history, hist_count, hist_next, lin_x, lin_slots, n_free, lin_w,
            lin_sq, lin_grad, lin_rows, lin_y, n_lin, batch, lin_par, lin_target, counts,
        )  # fmt: skip
    return n_lin, n_free


@_inline
def _arrival_estimate(
    j: int,
    predict: int,
    user: np.ndarray,
    requested: np.ndarray,
    history: np.ndarray,
    hist_count: np.ndarray,
    hist_next: np.ndarray,
    lin_x: np.ndarray,
    lin_slots: np.ndarray,
    n_free: int,
    n_rows: int,
    lin_static: np.ndarray,
    lin_w: np.ndarray,
    scale: float,
    counts: np.ndarray,
    fallback: np.ndarray,
    min_estimate: float,
) -> tuple[float, int, int]:
    """The estimate of job ``j`` at its submission, predicted (``predict``, a
    ``PREDICT_*`` code other than 0): ``fallback[j]`` when unknown (counted),
    never below ``min_estimate``. Returns it with the linear model's free and used
    row counts. (Shared with the node-level whole run.)"""
    if predict == PREDICT_LINEAR:
        # A free row of lin_x for its features (the lowest unused one when none is
        # free: only as many rows as jobs at once are ever touched).
        if n_free:
            n_free -= 1
            slot = lin_slots[LIN_FREE, n_free]
        else:
            slot = n_rows
            n_rows += 1
        lin_slots[LIN_SLOT, j] = slot
        e = _linear_arrival(
            j, user, requested, history, hist_count, hist_next, lin_x, slot, lin_static,
            lin_w, scale, counts[COUNT_TRAINED] != 0,
        )  # fmt: skip
    else:
        e = _predict(j, user, requested, history, hist_count, hist_next)
    if e != e:
        counts[COUNT_FALLBACKS] += 1
        e = fallback[j]
    if e < min_estimate:
        counts[COUNT_RAISED] += 1
        e = min_estimate
    return e, n_free, n_rows


@_inline
def _corrected(
    j: int,
    elapsed: float,
    mode: int,
    requested: np.ndarray,
    misses: np.ndarray,
    increments: np.ndarray,
) -> tuple[float, int]:
    """The new estimate of ``j`` (from its start), ``elapsed`` seconds into it
    (schedlab.sim.correction.Correction.correct), and the increment it added
    (its index; -1: none, the requested time). ``misses[j]`` counts the job's
    increments up to their number (later ones repeat the last: the count stops
    there, so a byte holds it)."""
    cap = requested[j]
    if not cap >= 0:  # unknown (NaN, or negative): no cap; 0 is a request of 0
        cap = INF
    if mode == 2 and cap < INF:
        return cap, -1
    k = int(misses[j])
    last = increments.shape[0] - 1
    if k > last:
        k = last
    else:
        misses[j] = k + 1
    new = elapsed + increments[k]
    if new > cap:
        return cap, -1
    return new, k


@_inline
def _raise(
    meta: np.ndarray,
    floats: np.ndarray,
    rints: np.ndarray,
    rend: np.ndarray,
    j: int,
    now: float,
    began: float,
    mode: int,
    requested: np.ndarray,
    misses: np.ndarray,
    increments: np.ndarray,
) -> tuple[bool, float]:
    """Job ``j``, the first of the kernel's running jobs (started at ``began``),
    reached its estimated end ``now`` still running. Returns ``(raised, new)``:
    raised, its estimate is ``new`` and the job moved among the running jobs;
    else it is overdue (treated as ending now from here on: it leaves the
    blocks, its processors join ``meta[M_OVERDUE]``)."""
    est, _ = _corrected(j, now - began, mode, requested, misses, increments)
    new = began + est
    if not new > now:
        meta[M_OVERDUE] += _rl_remove(meta, rints, rend, 0, 0)
        return False, new
    _move_at(meta, floats, rints, rend, 0, 0, j, now, new)
    return True, new


@_inline
def _memo_after_raise(
    memo: bool, memo_extra: int, memo_shadow: float, new: float, size: int
) -> tuple[bool, int]:
    """The pass memo after a running job of ``size`` processors was raised to
    ``new``: ``(memo, memo_extra)``.

    If the job no longer ends by the head's shadow time (its old end, now, did),
    the processors free at the shadow time fall by its size. While the extra
    processors cover that, the head still has enough at the shadow time and not
    before (less is free before it than was), so the shadow time stays and only
    the extra falls; no waiting job can start that could not at the last pass
    (the same free processors, a later now, less extra): the memo holds.
    Otherwise both may change. Ending by it still, the job leaves both as they
    were (it was believed free by then and still is): the memo holds. (So the
    memo after several corrections does not depend on their order.)"""
    if new > memo_shadow:
        if memo and memo_extra >= size:
            return True, memo_extra - size
        return False, memo_extra
    return memo, memo_extra


@_jit_run
def easy_run(
    meta: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    rints: np.ndarray,
    rend: np.ndarray,
    submit: np.ndarray,
    run_time: np.ndarray,
    procs: int,
    start: np.ndarray,
    heap_t: np.ndarray,
    heap_j: np.ndarray,
    model: np.ndarray,
    user: np.ndarray,
    requested: np.ndarray,
    fallback: np.ndarray,
    min_estimate: float,
    history: np.ndarray,
    hist_meta: np.ndarray,
    misses: np.ndarray,
    increments: np.ndarray,
    corrected: np.ndarray,
    counts: np.ndarray,
    lin_x: np.ndarray,
    lin_static: np.ndarray,
    lin_slots: np.ndarray,
    lin_w: np.ndarray,
    lin_sq: np.ndarray,
    lin_grad: np.ndarray,
    lin_rows: np.ndarray,
    lin_y: np.ndarray,
    lin_par: np.ndarray,
    lin_target: np.ndarray,
) -> tuple[int, int]:
    """A whole simulation on a single pool: the engine's event loop
    (:mod:`schedlab.sim.engine`) around :func:`easy_pass`, for jobs submitted in
    job order (no dependencies) with numeric keys known before the run
    (``floats[JOB_KEY]``). At each instant: the jobs ending then; the estimates
    of running jobs reaching them raised (with a correction); the arrivals in
    job order; then one pass when jobs wait.

    Estimates: without ``model[MODEL_PREDICT]``, ``floats[JOB_ESTIMATE]`` as
    given; with it, predicted at submission from the history of the user's
    (``user``: dense indices) completed jobs (``history``, a ring of
    ``model[MODEL_WINDOW]`` run times per user, ``hist_meta``: counts and next
    slots), ``fallback[j]`` when unknown, never below ``min_estimate``, and
    corrected by ``model[MODEL_CORRECTION]`` (``increments``: Tsafrir's steps,
    ``misses``: per job; ``corrected[j]``: raised at least once).

    With ``PREDICT_LINEAR`` (an online linear model,
    :mod:`schedlab.sim.online_linear`): ``history`` holds the users' targets,
    ``lin_x`` every job's features (the static ones given, the history ones
    written at submission), ``lin_w``/``lin_sq``/``lin_grad`` the weights, sums
    of squared gradients and scratch, ``lin_rows``/``lin_y`` the pending batch
    (``model[MODEL_BATCH]`` long), ``lin_par`` the rate, under-weight and scale,
    ``lin_target`` every job's target (made before the run);
    ``counts[COUNT_TRAINED]`` counts the jobs learnt from.

    Fills ``start[j]`` and ``counts``; ``heap_t`` and ``heap_j`` (``n + 1``
    long) hold the heap of the running jobs' ends (``(time, job)``); with a
    correction, the next one is the first of the kernel's running jobs (sorted
    by estimated end) when its estimated end comes before. Jobs whose estimate
    a correction did not raise leave the running jobs' blocks (their processors
    in ``meta[M_OVERDUE]``). Returns ``(passes, status)``: status 0, or 1 when
    jobs are still waiting with no event left, 2 when a job ending was not
    running or a job reaching its estimated end had ended (both bugs)."""
    n = submit.shape[0]
    job_size = ints[JOB_SIZE]
    pending = ints[PENDING]
    out = ints[OUT]
    n_heap = 0
    free = procs
    si = 0
    passes = 0
    q_job = ints[QUEUE_JOB]
    q_size = ints[QUEUE_SIZE]
    at = ints[PENDING_AT]
    job_est = floats[JOB_ESTIMATE]
    job_key = floats[JOB_KEY]
    job_end = floats[JOB_END]
    q_est = floats[QUEUE_ESTIMATE]
    q_key = floats[QUEUE_KEY]
    predict = model[MODEL_PREDICT]
    batch = model[MODEL_BATCH]
    scale = lin_par[LIN_SCALE]
    n_lin = 0
    n_free = 0  # rows of lin_x free again (lin_slots[LIN_FREE])
    n_rows = 0  # rows of lin_x used so far
    correction = model[MODEL_CORRECTION]
    hist_count = hist_meta[0]
    hist_next = hist_meta[1]
    # The last full pass's head, shadow time and extra processors (``memo``:
    # valid), for passes after arrivals only.
    memo = False
    memo_head = -1
    memo_shadow = 0.0
    memo_extra = 0
    # Corrections come from the front of the kernel's running jobs (sorted by
    # estimated end): a job still running at its estimated end is raised then,
    # or overdue (out of the blocks, see _raise). The heap holds the ends only;
    # an end takes its job out of the running jobs (``ended``: since the last
    # full pass).
    meta[M_OVERDUE] = 0
    order = rints[B_ORDER]
    r_job = rints[R_JOB]
    ended = False
    while True:
        now = INF
        if n_heap:
            now = heap_t[0]
        if correction and meta[M_BLOCKS]:
            e = rend[order[0] * RUN_BLOCK]
            if e < now:
                now = e
        if si < n and submit[si] < now:
            now = submit[si]
        if now == INF:
            break
        # The ends at now, in job order: their effects (free processors, the
        # predictor's history) keep job order among ends; the corrections after
        # them read none of these effects (their rule, the running jobs' order
        # and the memo), as if mixed with them in job order.
        while n_heap and heap_t[0] == now:
            j = heap_j[0]
            n_heap = _heap_pop(heap_t, heap_j, n_heap)
            free += job_size[j]
            ended = True
            if correction and job_end[j] < now:
                meta[M_OVERDUE] -= job_size[j]
            else:
                p, x = _rl_find(meta, rints, rend, job_end[j], j, False)
                if p < 0:
                    return passes, 2
                _rl_remove(meta, rints, rend, p, x)
            if predict:
                n_lin, n_free = _learn_end(
                    j, predict, run_time[j], user, history, hist_count, hist_next, lin_x,
                    lin_slots, n_free, lin_w, lin_sq, lin_grad, lin_rows, lin_y, n_lin, batch,
                    lin_par, lin_target, counts,
                )  # fmt: skip
        # The running jobs reaching their estimated ends now (still running: the
        # jobs ending now have left), in job order.
        while correction and meta[M_BLOCKS]:
            x = order[0] * RUN_BLOCK
            if rend[x] != now:
                break
            j = r_job[x]
            began = start[j]
            if not began + run_time[j] > now:
                return passes, 2
            raised, new = _raise(
                meta, floats, rints, rend, j, now, began, correction, requested, misses, increments
            )
            if raised:
                corrected[j] = 1
                counts[COUNT_CORRECTIONS] += 1
                memo, memo_extra = _memo_after_raise(
                    memo, memo_extra, memo_shadow, new, job_size[j]
                )
        n_pending = 0
        while si < n and submit[si] == now:
            if predict:
                e, n_free, n_rows = _arrival_estimate(
                    si, predict, user, requested, history, hist_count, hist_next, lin_x,
                    lin_slots, n_free, n_rows, lin_static, lin_w, scale, counts, fallback,
                    min_estimate,
                )  # fmt: skip
                job_est[si] = e
            pending[n_pending] = si
            n_pending += 1
            si += 1
        if meta[M_WAITING] + n_pending == 0:
            continue
        passes += 1
        if memo and not ended and memo_shadow >= now:
            # Nothing ended since the last pass: if the head is the same, only
            # the arrivals may backfill (see :mod:`.easy`).
            first = meta[M_FIRST]
            end = meta[M_END]
            waiting = meta[M_WAITING]
            if n_pending:
                first, end, waiting = _insert_arrivals(
                    ints, floats, first, end, waiting, n_pending, False
                )
            while q_size[first] == HOLE:
                first += 1
            meta[M_FIRST] = first
            meta[M_END] = end
            meta[M_WAITING] = waiting
            n_pending_left = n_pending
            n_pending = 0
            if q_job[first] == memo_head:
                if free and n_pending_left:
                    for x in range(n_pending_left):
                        j = pending[x]
                        at[x] = _queue_rank(q_key, q_job, first, end, job_key[j], j)
                    _sort_small(at, n_pending_left)
                    for x in range(n_pending_left):
                        p = at[x]
                        s = q_size[p]
                        if s > free:
                            continue
                        if now + q_est[p] <= memo_shadow:
                            pass
                        elif s <= memo_extra:
                            memo_extra -= s
                        else:
                            continue
                        j = q_job[p]
                        free -= s
                        e = now + job_est[j]
                        job_end[j] = e
                        _rl_insert(meta, rints, rend, e, j, s, 0, False)
                        q_size[p] = HOLE
                        q_est[p] = INF
                        waiting -= 1
                        start[j] = now
                        n_heap = _heap_push(heap_t, heap_j, n_heap, now + run_time[j], j)
                        if free == 0:
                            break
                    meta[M_WAITING] = waiting
                continue
        started, _, head, extra, shadow = easy_pass(
            meta, ints, floats, rints, rend, now, free, n_pending, False, False, 0, 0
        )
        ended = False
        for x in range(started):
            j = out[x]
            start[j] = now
            free -= job_size[j]
            n_heap = _heap_push(heap_t, heap_j, n_heap, now + run_time[j], j)
        memo = head >= 0
        memo_head = head
        memo_shadow = shadow
        memo_extra = extra
    if meta[M_WAITING]:
        return passes, 1
    return passes, 0


_warm = False


class RunArrays:
    """The arrays :func:`easy_run` works in besides the pass's, for ``n`` jobs of
    ``users`` users with a history ``window`` long (set ``model``, ``user``,
    ``requested``, ``fallback`` and ``increments``, at most 255 of them, before
    the run; with a linear model, :meth:`linear` first)."""

    def __init__(self, n: int, users: int, window: int) -> None:
        self.start = np.full(n, np.nan)
        self.heap_t = np.empty(n + 1, dtype=np.float64)
        self.heap_j = np.empty(n + 1, dtype=np.int64)
        self.model = np.zeros(N_MODEL, dtype=np.int64)
        self.user = np.zeros(n, dtype=np.int64)
        self.requested = np.full(n, np.nan)
        self.fallback = np.full(n, np.nan)
        self.history = np.zeros((max(users, 1), max(window, 1)), dtype=np.float64)
        self.hist_meta = np.zeros((2, max(users, 1)), dtype=np.int64)
        # Written by the kernel (first touches in the run's time): a byte a job.
        self.misses = np.zeros(n, dtype=np.uint8)
        self.increments = np.ones(1, dtype=np.float64)
        self.corrected = np.zeros(n, dtype=np.uint8)
        self.counts = np.zeros(N_COUNTS, dtype=np.int64)
        self.lin_x = np.zeros((1, 1), dtype=np.float64)
        self.lin_static = np.zeros((1, 1), dtype=np.float64)
        self.lin_slots = np.zeros((2, 1), dtype=np.int64)
        self.lin_w = np.zeros(1, dtype=np.float64)
        self.lin_sq = np.zeros(1, dtype=np.float64)
        self.lin_grad = np.zeros(1, dtype=np.float64)
        self.lin_rows = np.zeros(1, dtype=np.int64)
        self.lin_y = np.zeros(1, dtype=np.float64)
        self.lin_par = np.ones(N_LIN_PAR, dtype=np.float64)
        self.lin_target = np.zeros(1, dtype=np.float64)

    def linear(
        self,
        static: np.ndarray,
        batch: int,
        rate: float,
        under_weight: float,
        scale: float,
        targets: np.ndarray,
    ) -> None:
        """Arrays for an online linear model of ``static`` features per job (and
        4 history features), learning every ``batch`` jobs from ``targets``
        (every job's, :func:`schedlab.sim.online_linear.log_targets`)."""
        n, s = static.shape
        d = s + online_linear.HISTORY_FEATURES
        # A job's row is written at its submission, before any read, and freed
        # after its learning step: left uninitialised (the rows never used stay
        # untouched memory).
        self.lin_x = np.empty((n, d), dtype=np.float64)
        self.lin_static = np.ascontiguousarray(static, dtype=np.float64)
        self.lin_slots = np.empty((2, n), dtype=np.int64)
        self.lin_w = np.zeros(d, dtype=np.float64)
        self.lin_sq = np.zeros(d, dtype=np.float64)
        self.lin_grad = np.zeros(d, dtype=np.float64)
        self.lin_rows = np.zeros(batch, dtype=np.int64)
        self.lin_y = np.zeros(batch, dtype=np.float64)
        self.lin_par[:] = (rate, under_weight, scale)
        self.lin_target = np.ascontiguousarray(targets, dtype=np.float64)

    def arguments(self, min_estimate: float) -> tuple:
        """:func:`easy_run`'s arguments after ``procs``."""
        return (
            self.start,
            self.heap_t,
            self.heap_j,
            self.model,
            self.user,
            self.requested,
            self.fallback,
            min_estimate,
            self.history,
            self.hist_meta,
            self.misses,
            self.increments,
            self.corrected,
            self.counts,
            self.lin_x,
            self.lin_static,
            self.lin_slots,
            self.lin_w,
            self.lin_sq,
            self.lin_grad,
            self.lin_rows,
            self.lin_y,
            self.lin_par,
            self.lin_target,
        )


def new_arrays(
    n_jobs: int, sizes: Sequence[int] | np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(meta, ints, floats, rints, rend)`` for a run of ``n_jobs`` jobs of
    ``sizes``."""
    meta = np.zeros(N_META, dtype=np.int64)
    ints = np.zeros((N_INT_ROWS, n_jobs + 1), dtype=np.int64)
    ints[JOB_SIZE, :n_jobs] = sizes
    floats = np.zeros((N_FLOAT_ROWS, n_jobs + 1), dtype=np.float64)
    blocks = run_capacity(n_jobs)
    # Slots are written before they are read: left uninitialised (untouched
    # memory, for the blocks a run never uses).
    rints = np.empty((N_RUN_ROWS, blocks * RUN_BLOCK), dtype=np.int64)
    rints[B_FREE, :blocks] = np.arange(blocks - 1, -1, -1)
    meta[M_FREE] = blocks
    rend = np.empty(blocks * RUN_BLOCK, dtype=np.float64)
    return meta, ints, floats, rints, rend


def warm_up() -> None:
    """Run the kernel once on a tiny run (loads or compiles its machine code, once
    per process)."""
    global _warm
    if _warm:
        return
    meta, ints, floats, rints, rend = new_arrays(3, [2, 2, 1])
    floats[JOB_ESTIMATE, :3] = (5.0, 3.0, 1.0)
    ints[PENDING, :3] = (0, 1, 2)
    easy_pass(meta, ints, floats, rints, rend, 0.0, 2, 3, False, False, 0, 0)
    ints[PENDING, 0] = 2
    ints[PENDING_AT, 0] = 0
    easy_pass(meta, ints, floats, rints, rend, 1.0, 0, 1, False, True, 0, 0)
    # A correction's move in a pass-by-pass run (job 0 runs, to 5; a whole run
    # moves its jobs itself).
    move_running(meta, ints, floats, rints, rend, 0, 5.0, 6.0)
    meta, ints, floats, rints, rend = new_arrays(2, [1, 2])
    run = RunArrays(2, 1, 2)
    run.model[:] = (PREDICT_HISTORY, 2, 1, 1)
    run.requested[:] = (5.0, np.nan)
    run.fallback[:] = (1.0, 1.0)
    easy_run(meta, ints, floats, rints, rend, np.zeros(2), np.ones(2), 2, *run.arguments(1e-3))
    meta, ints, floats, rints, rend = new_arrays(2, [1, 2])
    run = RunArrays(2, 1, 2)
    run.model[:] = (PREDICT_LINEAR, 2, 1, 1)
    run.requested[:] = (5.0, np.nan)
    run.fallback[:] = (1.0, 1.0)
    run.linear(np.ones((2, 1)), 1, 0.05, 4.0, 10.0, np.array([0.1, 0.1]))
    easy_run(
        meta, ints, floats, rints, rend, np.array([0.0, 2.0]), np.ones(2), 2, *run.arguments(1e-3)
    )
    _warm = True


__all__ = ["RunArrays", "easy_pass", "easy_run", "move_running", "new_arrays", "warm_up"]
