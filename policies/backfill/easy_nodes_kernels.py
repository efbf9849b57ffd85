"""EASY backfilling on a node-level machine, compiled with numba (optional,
``schedlab[fast]``): one call per scheduling pass does the whole pass of
:class:`~.easy_nodes.NodeEasy` on arrays, for one partition (of shared nodes, or
of exclusive ones: see :func:`_whole_nodes`) and an allocation policy that
declares its node order (``node_order``, see :mod:`schedlab.sim.resources`). A
prediction correction moves a running job among the kernel's running jobs
(:func:`move_running`); :func:`node_easy_run` simulates a whole run in one call,
predictions included.

The kernel keeps copies of the wait queue and of the running jobs (sorted by
estimated end, ties by job index, with each one's allocation in a pool of node
rows), brings them up to date with the arrivals and ends since the last call, and
then, on a scratch copy of the machine's free amounts (``work``, kept from one
call to the next):

1. starts jobs from the head while the allocation policy's order gives them an
   allocation;
2. finds the head's shadow time: the earliest estimated end of a running job at
   which the free amounts then (``fat``: ``work`` plus the rows of the running
   jobs ending by then) give the head an allocation (plain sums first, a necessary
   condition), never before now: when that end is past, the shadow time is now and
   every running job past its estimated end counts as free then (they are all
   treated as ending now, :func:`_fat_overdue`). ``fat`` is kept from one call to
   the next at the time it was last found for (``floats[SCALARS, 1]``), following
   every start and end: a job starting (or ending) with an estimated end past that
   time takes its rows from (or gives them to) ``fat`` as well, one ending by then
   leaves ``fat`` as it is. Both tests only grow with the time, so the search
   starts there: whole groups of equal ends are taken back while the head still
   fits, or added until it does (a step back first checks the sums of ``fat`` less
   the group's held amounts, ``demands[2]``: when they fall short no row moves).
   For a head that is not a plain cores-and-memory capacity test the walk starts
   from ``work``, as it always did. The head's capacity on ``fat`` (for one memory
   per core, ``meta[M_CAP_MPC]``) is kept the same way;
3. scans the other waiting jobs in priority order: a job starts when it has an
   allocation now and either ends by the shadow time or leaves the head an
   allocation at the shadow time. Within a pass, a demand (jobs asking exactly the
   same share one) that found no allocation, or would delay the head, is not tried
   again until a job starts: nothing it depends on has changed. For a
   cores-and-memory job that does not end by the shadow time, the first fit checks
   the head on its way (:func:`_first_fit_head`) and stops at the first row that
   loses it the head's allocation.

The running list (``R_END``/``R_JOB``, ``meta[M_RUNNING]`` slots): a job that ends
leaves a *hole* (``~job``, its estimated end kept, so the slots stay sorted and
a hole compares as its job, :func:`_rank_running`) instead of the later slots
moving down; a start takes a hole right before or at its rank, else the slots
from its rank move up; a raised estimate (:func:`move_running`) moves its job
in place, the slots up to its new rank one down (the slot count stays: the slots
never outnumber the jobs started, the rows' ``n + 1``); the last slot is never a
hole, and the holes
(``meta[M_R_HOLES]``) are dropped when they outnumber a quarter of the running
jobs by more than 32. The shadow search skips them (they hold no rows).

The queue layout: slots ``meta[M_FIRST] .. meta[M_END] - 1`` of the ``Q_*`` rows,
sorted by ``(key, job)``, the first job the head. A job that starts leaves a
*hole* (it keeps its job and key, so the slots stay sorted; its cores are
:data:`HOLE` and its estimate infinite, failing every test); an arrival takes the
hole just before its rank when there is one, else the slots after it move up; the
holes are closed (``_compact``) when they outnumber the jobs by more than 64.
Blocks of :data:`BLOCK` slots and super-blocks of :data:`SUPER` slots keep lower
bounds of the cores and estimates in them (``B_CORES``/``B_EST``,
``S_CORES``/``S_EST``), lowered by arrivals and recomputed exactly for a block the
scan looks into whole. Step 3 skips a block or super-block whose bounds fail the
necessary conditions of a start: at most the cores free now (summed over the
partition), and either ending by the shadow time or asking at most the cores free
at the shadow time past the head's (``meta[M_EXTRA]``, fewer by each job started
that does not end by then). A block whose waiting jobs all ask one demand
(``B_CLASS``: set when slots are filled, made ``MIXED`` by an arrival of another
demand into a hole, recomputed with the block's bounds) is skipped whole when that
demand was refused in the current epoch: for no allocation, or for delaying the
head when none of its jobs ends by the shadow time (its shortest estimate). A
pass after arrivals only (nothing ended or started since the last pass, same head
and shadow time, every arrival in a slot past the last pass's last backfill,
``meta[M_LAST]``) skips, until a job starts, the slots from that backfill to the
first arrival's (``meta[M_NEW_LO]``): each was refused on exactly the free
amounts the pass starts from.

The open nodes (``nodes[OPEN]``, :func:`_open_list`) are kept lazily: a node
that gets a free core waits in ``nodes[PENDING]`` and is merged in before the
list is next used; a node that has none left stays listed until then (it gives
nothing and fails every test needing a core).

Whether a cores-and-memory demand has an allocation is one sum per memory per
core (its *capacity*: the cores the nodes give it, ``memo[CAP]``), kept across
starts and ends: every change of ``work`` logs its node in a ring
(``nodes[LOG]``, the largest power of 2 of its entries, :func:`_log_mask`, so
that a position is a mask), ``snap[mc]`` holds what each node gave at the capacity's last
update (then, per block of :data:`SNAP_BLOCK` nodes, a bit mask of the nodes
giving something), and an update replaces the shares of the nodes logged since
(flipping their bits when a share goes to or from 0), or sums again over the
partition's nodes (a node with no free core gives 0, so the open-node list need
not be merged first) when the logged changes outnumber the open nodes or the ring
no longer holds them. Step 1 screens the head
with it before looking for an allocation, and a first fit of such a demand then
reads ``snap[mc]`` in node order, visiting only the nodes whose bit is set.

The Python side (:class:`.easy_nodes_compiled.CompiledNodeEasy`) then starts the
same jobs on the same allocations through the public
:class:`~schedlab.sim.SchedulerState`, which checks each of them.

The allocation (:func:`allocate`) is :func:`schedlab.sim.resources.take` over the
usable nodes in the policy's order, written out in loops: ``0`` node index
(``first-fit``), ``1`` fewest free cores first, ``2`` most free cores first (both
stable, ties by node index; the orders are sorted in place, :func:`_heap_sort`,
on keys made distinct by the node). Demands with a ``max_nodes`` limit and
exclusive partitions stay on the Python pass.

Every function but :func:`node_easy_run` compiles without numba's reference
counting (``_nrt=False``, a private option; numba's reference counts are atomic,
and a function calling another took one incref at entry and one decref at exit
per array argument: 11 a pass, 11 a start, 3 an end or a first fit). Such a
function may not allocate (numba refuses to compile it), nor call one that does:
a callee first compiled for it is compiled without reference counts too and
fails the same way (it works only when the callee was compiled before, which
depends on the order of compilation). So nothing from :func:`node_easy_pass`
down allocates: the sorts are in place, :func:`_pool_front` sorts in a scratch row,
rows are copied element by element (``a[:] = b`` may allocate a temporary for
overlapping arrays). :func:`node_easy_run` (with reference counts: it allocates
its rows and outcome) calls the pass as any caller may. Rows of the packed arrays
are read through :func:`_row`, a view without a meminfo (which a function
compiled with reference counts would otherwise count), and the module compiles
with numpy's error model (no division raises). A whole run keeps the
rows of plain cores-and-memory allocations packed (node and cores in one 32-bit
number, rows of at most 255 cores on the first 2**23 nodes) until
it gathers every job's rows into the outcome.

The whole run compiles in the single pool's prediction steps (``easy_kernels``:
``_arrival_estimate``, ``_learn_end``, ``_corrected``), so that both whole runs
make the very same predictions; :data:`EASY_KERNELS_SHA256` records that file (see
:data:`PREDICTION_CURRENT`).

The module is self-contained but for those prediction steps (numba's cache does not
track helpers inlined from other files: hence the recorded hash). With
``NUMBA_DISABLE_JIT=1`` it runs as plain Python.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
from numba import config as numba_config
from numba import njit
from numba.core import cgutils, types
from numba.core.cpu import CPUTargetOptions
from numba.extending import intrinsic

from . import easy_kernels as _pool
from .easy_kernels import (
    COUNT_CORRECTIONS,
    LIN_SCALE,
    MODEL_BATCH,
    MODEL_CORRECTION,
    MODEL_PREDICT,
    _arrival_estimate,
    _corrected,
    _learn_end,
)

_F = TypeVar("_F", bound=Callable[..., Any])


def _compiler(**options: Any) -> Callable[[_F], _F]:
    """numba's ``njit(**options)``, typed as what it is to a caller: a compiled
    function takes and returns what its Python source does."""
    return cast("Callable[[_F], _F]", njit(**options))


# Everything but :func:`node_easy_run` allocates nothing and compiles without
# numba's reference counting (``_nrt=False``: a call passing arrays then costs no
# atomic updates; see the module docstring for what it rules out). ``_nrt`` is a
# private option: a numba without it runs the same kernel, slower.
_NO_REFCOUNTS = {"_nrt": False} if hasattr(CPUTargetOptions, "_nrt") else {}
_jit = _compiler(cache=True, nogil=True, error_model="numpy", **_NO_REFCOUNTS)
#: SHA-256 of ``easy_kernels.py``, whose prediction steps (``_arrival_estimate``,
#: ``_learn_end``, ``_corrected``: the single pool's whole run makes the same
#: predictions) :func:`node_easy_run` compiles in:
#: numba's cache does not see a change there, so update it with that file.
EASY_KERNELS_SHA256 = "36ef6f7a77d032870b1ba45c4f214f618406c75b27ff56dbac9cdd6392c64647"
#: Whether those sources (and the online model's) are the ones recorded: else
#: :func:`node_easy_run` is compiled afresh in each process, never from the cache.
PREDICTION_CURRENT = _pool.ONLINE_LINEAR_CURRENT and (
    hashlib.sha256(Path(_pool.__file__).read_bytes()).hexdigest() == EASY_KERNELS_SHA256
)
# ``node_easy_run`` allocates its rows and its outcome (with reference counts).
_jit_run = _compiler(cache=PREDICTION_CURRENT, nogil=True, error_model="numpy")

# Entries of ``meta``.
M_QUEUE = 0  # waiting jobs in the queue copy (its slots that are not holes)
M_RUNNING = 1  # running jobs
M_POOL = 2  # pool rows in use (the next free row)
M_HEAD = 3  # the head of the last pass (-1: none, or its shadow must be recomputed)
M_EPOCH = 4  # bumped at every start: the demand memos of older epochs are stale
M_MIN_CORES = 5  # the fewest cores any job asks for
M_HEAD_CAP = 6  # a simple head's capacity on the kept amounts (``_capacity``)
M_ALLOCATIONS = 7  # counters (for benchmarks): allocations computed,
M_SHADOWS = 8  # shadow times computed,
M_WALKED = 9  # running jobs walked for them,
M_CAPACITIES = 10  # and capacity sums over the nodes

M_PNODES = 11  # nodes of the partition (the first entries of ``nodes[P_NODES]``)
M_SCANNED = 12  # counter: queue slots looked at in step 3 (in blocks not skipped)
M_SYNCED = 13  # 1 once ``mats[0]`` mirrors the machine's free amounts
M_OPEN = 14  # length of the open-node list (the first entries of ``nodes[OPEN]``)
M_FIRST = 15  # first queue slot in use (the head, once the holes before it are passed)
M_END = 16  # one past the last queue slot in use
M_EXTRA = 17  # cores free at the shadow time (summed over ``fat``) past the head's
M_R_HOLES = 18  # holes among the running list's ``meta[M_RUNNING]`` slots (jobs ended)
M_VERSION = 19  # bumped whenever ``work`` changes (the capacities' memo key)
M_LAST = 20  # the queue slot of the last pass's last backfill (its head's slot if none)
M_NEW_LO = 21  # the lowest slot an arrival of this call took (-1: the queue was compacted)
M_SKIPPED = 22  # counter: passes whose scan skipped the slots the last pass left settled
M_PENDING = 23  # nodes opened since the open-node list was last merged (``nodes[PENDING]``)
M_STALE = 24  # (about) the entries of the open-node list closed since it was last merged
M_FAT_OK = 25  # 1 while ``fat`` is ``work`` plus the rows of the running jobs ending by
#                ``floats[SCALARS, 1]`` (see ``_fat_job``); 0: built again at the next shadow
M_CAP_MPC = 26  # the memory per core ``meta[M_HEAD_CAP]`` is kept for (-1: none)
M_FROM_FAT = 27  # counter: shadow times searched from the kept ``fat`` (not from ``work``)
M_CLASS_SKIPS = 28  # counter: blocks the scan skipped for their one refused demand
M_LOG = 29  # node changes of ``work`` logged so far (``nodes[LOG]``, a ring)
M_CAP_FULL = 30  # counter: capacities summed over the open nodes (others: from the log)
M_EXCLUSIVE = 31  # 1: an exclusive partition (jobs take their nodes whole, ``_whole_nodes``)
N_META = 32

# Rows of ``ints`` (by job, by queue slot or by rank).
J_MPC = 0  # by job: memory per core
J_NODES = 1  # by job: node count (0: flexible)
J_CLASS = 2  # by job: its demand's index (jobs asking the same share one)
J_MC = 3  # by job: its memory per core's index (-1: not cores and memory only)
Q_JOB = 4  # by queue slot: the waiting job
Q_CORES = 5  # by queue slot: its cores
R_JOB = 6  # by rank of estimated end: the running job
A_OFF = 7  # by job: first pool row of its allocation
A_LEN = 8  # by job: its pool rows
ARRIVALS = 9  # jobs to insert into the queue
FINISHED = 10  # jobs that ended
OUT = 11  # the jobs this pass starts, in order
Q_CLASS = 12  # by queue slot: its demand's index
Q_MC = 13  # by queue slot: its memory per core's index
B_CORES = 14  # by block of BLOCK slots: at most the fewest cores asked in it
S_CORES = 15  # by super-block of SUPER slots: at most the fewest of its blocks'
B_CLASS = 16  # by block: the one demand of its waiting jobs (MIXED: maybe several,
#               NO_CLASS: none)
N_INT_ROWS = 17

# Rows of ``floats``.
J_EST = 0  # by job: estimate
J_KEY = 1  # by job: numeric priority key
J_END = 2  # by job: estimated end once started
Q_KEY = 3  # by queue slot: key
Q_EST = 4  # by queue slot: estimate
R_END = 5  # by rank: estimated end
SCALARS = 6  # [0]: the last head's shadow time, [1]: the estimated end ``fat`` stands at
B_EST = 7  # by block: at most the shortest estimate in it
S_EST = 8  # by super-block: at most the shortest of its blocks'
N_FLOAT_ROWS = 9

# Rows of ``memo`` (by demand or memory-per-core index).
FIT = 0  # epoch in which the demand found no allocation
HEAD = 1  # epoch in which the demand would have delayed the head
CAP = 2  # a memory per core's capacity (``_capacity``) on ``work`` ...
CAP_EPOCH = 3  # ... when ``meta[M_LOG]`` was this (-1: never; see ``_log_capacity``)
N_MEMO_ROWS = 4

# Rows of ``nodes``.
P_NODES = 0  # the partition's nodes, ascending
ORDER = 1  # scratch: an allocation policy's node order
KEYS = 2  # scratch: its sort keys
OPEN = 3  # the partition's nodes with a free core, ascending (``_open_list``)
DIRTY = 4  # unused (``fat`` is kept up to date, see step 2)
FLAG = 5  # unused
LISTED = 6  # by node: 1 when it is in ``OPEN`` or ``PENDING``
PENDING = 7  # nodes that got a free core while not in ``OPEN`` (``meta[M_PENDING]``)
LOG = 8  # ring of the nodes whose row of ``work`` changed (``meta[M_LOG]`` entries so far;
# its length is the largest power of 2 up to the row's, ``_log_mask``)
N_NODE_ROWS = 9

#: ``allocate`` found no allocation.
NONE = -1
#: :func:`_first_fit_head`: the first fit would leave the head no allocation at the
#: shadow time.
DELAYS = -2

#: Queue slots per block: a block whose bounds (fewest cores, shortest estimate)
#: fail the backfilling test holds no candidate and is skipped whole.
BLOCK = 16
#: Blocks per super-block (the same screen one level up, over SUPER slots).
SUPER_BLOCKS = 16
SUPER = BLOCK * SUPER_BLOCKS
#: ``ints[B_CLASS]`` of a block whose waiting jobs may ask different demands.
MIXED = -1
#: ``ints[B_CLASS]`` of a block with no waiting job (every slot a hole).
NO_CLASS = -2
#: The cores of a hole: a slot whose job started keeps its job and key (the slots
#: stay sorted), with cores and estimate that fail every test.
HOLE = 2**62
# ``snap`` keeps, past its first (nodes) columns, one bit mask per block of this
# many nodes: bit ``i`` set exactly when the block's node ``i`` gives something (a
# first fit from it visits only those nodes).
SNAP_BLOCK = 32
SNAP_SHIFT = 5  # log2 of SNAP_BLOCK
SNAP_LOW = SNAP_BLOCK - 1


@_jit
def allocate(
    free: np.ndarray,
    pnodes: np.ndarray,
    candidates: np.ndarray,
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
    """The allocation of a demand on ``free`` (``(nodes, dims)``) among the partition's
    nodes ``pnodes`` in the policy's order ``kind``: its node count, with the nodes
    (ascending) in ``out_nodes`` and their amounts in ``out_amt``, or ``NONE``.

    ``candidates`` are the nodes of ``pnodes`` with a free core (or ``pnodes``
    itself): a demand needing a core on every node it uses looks at them only.
    ``total``, ``mpc``, ``k`` (node count, 0: flexible) and ``chunk`` are the
    demand's; ``order`` and ``keys`` are scratch rows of the partition's size."""
    dims = free.shape[1]
    simple = k == 0
    if simple:
        for d in range(2, dims):
            if total[d]:
                simple = False
    # A demand that needs at least a core on each node it uses (fixed chunks, and
    # flexible demands of cores and memory) looks at the candidates only.
    look = candidates if (k > 0 or simple) else pnodes
    if simple and kind == 0:
        # First fit of cores and memory: the lowest nodes, stopping once placed.
        need = total[0]
        cum = 0
        placed = 0
        for node in look:
            c = _gives(free[node, 0], free[node, 1], mpc)
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
        for node in look:
            ok = free[node, 0] >= 1  # ``candidates`` may hold nodes closed since
            for d in range(dims):
                if free[node, d] < chunk[d]:
                    ok = False
                    break
            if ok:
                order[u] = node
                u += 1
    else:
        for node in look:
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
                have += free[order[i], d]
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
    """Sort ``a[:n]`` ascending in place (a heap sort: no scratch, no allocation),
    the rows ``rows[i]`` moving with ``a[i]`` when ``carry``. Not stable: the
    callers sort distinct values."""
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
        # GPUs and consumables, then drop the rows that got nothing.
        for d in range(2, dims):
            want = total[d]
            if want:
                got_before = 0
                for i in range(placed):
                    col = free[out_nodes[i], d]
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


@_jit
def _gives(cores: int, memory: int, mpc: int) -> int:
    """The cores a flexible demand asking ``mpc`` memory per core may take on a
    node with ``cores`` cores and ``memory`` free (0 when it is not usable for
    it). Plain numbers, not the matrix (this runs in the innermost loops)."""
    c = cores
    if c <= 0:
        return 0
    if mpc and memory < c * mpc:  # memory binds: only then divide
        if memory < mpc:
            return 0  # not a core's share (no division)
        # Both positive: an unsigned division (no floor correction for signs).
        # numba's int64 is the kernel's int (numpy's stubs do not make it an int).
        c = np.int64(np.uint64(memory) // np.uint64(mpc))  # type: ignore[assignment]
    return c


@_jit
def _fat_job(
    fat: np.ndarray,
    have: np.ndarray,
    pool_nodes: np.ndarray,
    pool_amt: np.ndarray,
    off: int,
    m: int,
    sign: int,
    mpc: int,
    cap: int,
) -> int:
    """Add (``sign`` 1) or take (-1) a job's ``m`` pool rows from ``off`` to or from
    the free amounts at the shadow time ``fat`` and their sums ``have``; returns
    ``cap``, a capacity (``_capacity``) on ``fat`` for memory per core ``mpc``,
    kept up to date (``mpc`` -1: none kept, ``cap`` returned as is)."""
    dims = fat.shape[1]
    for y in range(m):
        node = pool_nodes[off + y]
        if mpc >= 0:
            cap -= _gives(fat[node, 0], fat[node, 1], mpc)
        for d in range(dims):
            a = sign * pool_amt[off + y, d]
            fat[node, d] += a
            have[d] += a
        if mpc >= 0:
            cap += _gives(fat[node, 0], fat[node, 1], mpc)
    return cap


@_jit
def _fat_overdue(
    fat: np.ndarray,
    have: np.ndarray,
    pool_nodes: np.ndarray,
    pool_amt: np.ndarray,
    a_off: np.ndarray,
    a_len: np.ndarray,
    r_end: np.ndarray,
    r_job: np.ndarray,
    n_run: int,
    i: int,
    now: float,
    mpc: int,
    cap: int,
    meta: np.ndarray,
) -> int:
    """Add to ``fat`` (and ``have``) the rows of the running jobs from rank ``i`` on
    whose estimated ends are by ``now``: with the shadow time clamped to now, every
    job past its estimate is free then. Returns ``cap`` kept up to date as
    :func:`_fat_job` does. (Out of the pass: it runs only with jobs past their
    estimates.)"""
    while i < n_run and r_end[i] <= now:
        r = r_job[i]
        i += 1
        if r >= 0:
            cap = _fat_job(fat, have, pool_nodes, pool_amt, a_off[r], a_len[r], 1, mpc, cap)
            meta[M_WALKED] += 1
    return cap


@_jit
def _capacity(free: np.ndarray, pnodes: np.ndarray, mpc: int) -> int:
    """The cores a flexible demand asking only cores and memory (``mpc`` per core)
    can get on ``free``: it has an allocation, in any node order, exactly when it
    asks for at most this many."""
    cap = 0
    for node in pnodes:
        cap += _gives(free[node, 0], free[node, 1], mpc)
    return cap


@_jit
def _log_capacity(
    free: np.ndarray, open_: np.ndarray, n_open: int, mpc: int, snap: np.ndarray, mc: int, nn: int
) -> int:
    """:func:`_capacity` over the first ``n_open`` nodes of ``open_`` (any list
    holding every node with a free core: the kernel passes the partition's nodes),
    keeping what each node gives in ``snap[mc]`` (0 for every
    other node) when ``snap`` has that row, so that later sums only replace the
    shares of the nodes whose free amounts changed since (``nodes[LOG]``)."""
    keep = mc < snap.shape[0]
    if keep:
        snap[mc, :] = 0
    cap = 0
    for x in range(n_open):
        node = open_[x]
        g = _gives(free[node, 0], free[node, 1], mpc)
        cap += g
        if keep:
            snap[mc, node] = g
            if g > 0:
                snap[mc, nn + (node >> SNAP_SHIFT)] |= 1 << (node & SNAP_LOW)
    return cap


if TYPE_CHECKING:  # as the kernels call them (numba's stubs would want the typing
    # context, which numba passes itself, as a first argument)

    def _memmove(array: np.ndarray, dst: int, src: int, count: int) -> None:
        """``array[dst:dst + count] = array[src:src + count]`` (overlap allowed)."""

    def _row(array: np.ndarray, index: int) -> np.ndarray:
        """``array[index]`` (a view)."""

    def trailing_zeros(x: int) -> int:
        """The index of the lowest set bit of ``x`` (not 0)."""

elif numba_config.DISABLE_JIT:  # NUMBA_DISABLE_JIT=1: the kernel runs as plain Python

    def _memmove(array, dst, src, count):
        """``array[dst:dst + count] = array[src:src + count]`` (overlap allowed)."""
        array[dst : dst + count] = array[src : src + count].copy()

    def _row(array, index):
        """``array[index]`` (a view)."""
        return array[index]

    def trailing_zeros(x):
        """The index of the lowest set bit of ``x`` (not 0)."""
        x = int(x)
        return (x & -x).bit_length() - 1

else:
    from numba.cpython.unsafe.numbers import trailing_zeros

    @intrinsic
    def _memmove(typingctx, array, dst, src, count):  # type: ignore[no-untyped-def]
        """``array[dst:dst + count] = array[src:src + count]`` as one ``memmove`` (the
        ranges may overlap) on a contiguous 1-D array: the running jobs' shifts, about
        seven times faster than an element-by-element loop."""
        signature = types.void(array, types.intp, types.intp, types.intp)

        def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
            data, to, frm, n = args
            view = context.make_array(sig.args[0])(context, builder, data)
            itemsize = context.get_abi_sizeof(context.get_data_type(sig.args[0].dtype))
            cgutils.raw_memmove(
                builder, builder.gep(view.data, [to]), builder.gep(view.data, [frm]), n, itemsize
            )
            return context.get_dummy_value()

        return signature, codegen

    @intrinsic
    def _row(typingctx, array, index):  # type: ignore[no-untyped-def]
        """``array[index]`` of a C-contiguous array of two or more dimensions, as a
        *borrowed* view: no reference to the array's memory is taken (its meminfo is
        null), so making and dropping it costs no atomic reference count. Only for
        views that do not outlive the call holding ``array``."""
        if not isinstance(array, types.Array) or array.ndim < 2 or array.layout != "C":
            return None
        result = types.Array(array.dtype, array.ndim - 1, "C")
        signature = result(array, types.intp)

        def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
            data, i = args
            aryty = sig.args[0]
            ary = context.make_array(aryty)(context, builder, data)
            shapes = cgutils.unpack_tuple(builder, ary.shape)
            strides = cgutils.unpack_tuple(builder, ary.strides)
            zero = context.get_constant(types.intp, 0)
            ptr = cgutils.get_item_pointer2(
                context, builder, ary.data, shapes, strides, aryty.layout,
                [i] + [zero] * (aryty.ndim - 1),
            )  # fmt: skip
            out = context.make_array(sig.return_type)(context, builder)
            context.populate_array(
                out, data=ptr, shape=shapes[1:], strides=strides[1:], itemsize=ary.itemsize,
                meminfo=None,
            )  # fmt: skip
            return out._getvalue()

        return signature, codegen


@_jit
def _shift_up(a: np.ndarray, lo: int, n: int) -> None:
    """``a[lo + 1 : n + 1] = a[lo:n]`` (one ``memmove``)."""
    if n > lo:
        _memmove(a, lo + 1, lo, n - lo)


@_jit
def _shift_down(a: np.ndarray, lo: int, n: int) -> None:
    """``a[lo : n - 1] = a[lo + 1 : n]`` (one ``memmove``)."""
    if n - 1 > lo:
        _memmove(a, lo, lo + 1, n - 1 - lo)


@_jit
def _rank(keys: np.ndarray, jobs: np.ndarray, n: int, k: float, j: int) -> int:
    """Rank of ``(k, j)`` among the first ``n`` entries sorted by ``(key, job)``
    (the running jobs by estimated end, the queue by priority key)."""
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < k or (keys[mid] == k and jobs[mid] < j):
            lo = mid + 1
        else:
            hi = mid
    return lo


@_jit
def _rank_running(keys: np.ndarray, jobs: np.ndarray, n: int, k: float, j: int) -> int:
    """:func:`_rank` over the running list, whose holes (``~job``: a job that ended)
    keep their place: a hole compares as its job."""
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
        jm = jobs[mid]
        jm ^= jm >> 63  # ~job -> job (a hole keeps its job's rank)
        if keys[mid] < k or (keys[mid] == k and jm < j):
            lo = mid + 1
        else:
            hi = mid
    return lo


@_jit
def _running_insert(
    r_end: np.ndarray, r_job: np.ndarray, n: int, e: float, j: int, meta: np.ndarray
) -> int:
    """Insert ``(e, j)`` into the running list of ``n`` slots; returns the new slot
    count. A hole right before or at its rank takes it (no shift)."""
    lo = _rank_running(r_end, r_job, n, e, j)
    if lo > 0 and r_job[lo - 1] < 0:
        lo -= 1
    elif not (lo < n and r_job[lo] < 0):
        _shift_up(r_end, lo, n)
        _shift_up(r_job, lo, n)
        r_end[lo] = e
        r_job[lo] = j
        return n + 1
    r_end[lo] = e
    r_job[lo] = j
    meta[M_R_HOLES] -= 1
    return n


@_jit
def _running_remove(
    r_end: np.ndarray, r_job: np.ndarray, n: int, e: float, j: int, meta: np.ndarray
) -> int:
    """Remove ``(e, j)`` from the running list of ``n`` slots: it leaves a hole
    (``~j``, same estimated end, so the slots stay sorted), or the list ends
    before it when it was the last; the holes are dropped when they outnumber a
    quarter of the running jobs by more than 32. Returns the new slot count
    (``-1``: it was not there)."""
    lo = _rank_running(r_end, r_job, n, e, j)
    if lo >= n or r_job[lo] != j:
        return -1
    holes = meta[M_R_HOLES]
    if lo == n - 1:
        n -= 1
        while n > 0 and r_job[n - 1] < 0:
            n -= 1
            holes -= 1
        meta[M_R_HOLES] = holes
        return n
    r_job[lo] = ~j
    holes += 1
    if holes > ((n - holes) >> 2) + 32:
        w = 0
        for x in range(n):
            r = r_job[x]
            if r >= 0:
                r_end[w] = r_end[x]
                r_job[w] = r
                w += 1
        n = w
        holes = 0
    meta[M_R_HOLES] = holes
    return n


@_jit
def _bound_groups(
    cores: np.ndarray,
    est: np.ndarray,
    g_cores: np.ndarray,
    g_est: np.ndarray,
    width: int,
    lo: int,
    hi: int,
) -> None:
    """Recompute the bounds (fewest cores, shortest estimate) of the groups of
    ``width`` entries holding entries ``lo .. hi - 1`` (entries from ``hi`` on are
    not read)."""
    g = lo // width
    while g * width < hi:
        x0 = g * width
        x1 = min(x0 + width, hi)
        fewest = HOLE
        shortest = np.inf
        for x in range(x0, x1):
            if cores[x] < fewest:
                fewest = cores[x]
            if est[x] < shortest:
                shortest = est[x]
        g_cores[g] = fewest
        g_est[g] = shortest
        g += 1


@_jit
def _class_blocks(
    q_cores: np.ndarray, q_class: np.ndarray, b_class: np.ndarray, lo: int, hi: int
) -> None:
    """Recompute the demand (``ints[B_CLASS]``) of the blocks holding queue slots
    ``lo .. hi - 1`` from their waiting jobs (slots from ``hi`` on are not read)."""
    b = lo // BLOCK
    while b * BLOCK < hi:
        cls = NO_CLASS
        for x in range(b * BLOCK, min(b * BLOCK + BLOCK, hi)):
            if q_cores[x] != HOLE:
                if cls == NO_CLASS:
                    cls = q_class[x]
                elif cls != q_class[x]:
                    cls = MIXED
                    break
        b_class[b] = cls
        b += 1


@_jit
def _bound_blocks(ints: np.ndarray, floats: np.ndarray, lo: int, hi: int) -> None:
    """Recompute the bounds of the blocks holding queue slots ``lo .. hi - 1`` and
    of their super-blocks, and those blocks' demands."""
    if hi <= lo:
        return
    _bound_groups(ints[Q_CORES], floats[Q_EST], ints[B_CORES], floats[B_EST], BLOCK, lo, hi)
    _class_blocks(ints[Q_CORES], ints[Q_CLASS], ints[B_CLASS], lo, hi)
    _bound_groups(
        ints[B_CORES], floats[B_EST], ints[S_CORES], floats[S_EST], SUPER_BLOCKS,
        lo // BLOCK, (hi - 1) // BLOCK + 1,
    )  # fmt: skip


@_jit
def _compact(ints: np.ndarray, floats: np.ndarray, first: int, end: int) -> int:
    """Close the queue's holes: its waiting jobs move to slots ``0 ..`` (in order);
    returns how many."""
    q_cores = ints[Q_CORES]
    w = 0
    for x in range(first, end):
        if q_cores[x] != HOLE:
            if w != x:
                _queue_move(ints, floats, w, x)
            w += 1
    _bound_blocks(ints, floats, 0, w)
    return w


@_jit
def _insert_arrivals(
    ints: np.ndarray, floats: np.ndarray, demands: np.ndarray, meta: np.ndarray, n_arrivals: int
) -> None:
    """Insert the ``n_arrivals`` jobs of ``ints[ARRIVALS]`` into the queue, each at
    its rank by ``(key, job)`` among the slots in use (holes keep their job and
    key), into the hole just before when there is one; the queue is compacted
    first when its holes outnumber its jobs (plus a margin) or room runs out."""
    first = meta[M_FIRST]
    end = meta[M_END]
    waiting = meta[M_QUEUE]
    q_job = _row(ints, Q_JOB)
    q_cores = _row(ints, Q_CORES)
    q_key = _row(floats, Q_KEY)
    b_cores = _row(ints, B_CORES)
    s_cores = _row(ints, S_CORES)
    b_est = _row(floats, B_EST)
    s_est = _row(floats, S_EST)
    b_class = _row(ints, B_CLASS)
    j_total = _row(demands, 0)
    arrivals = _row(ints, ARRIVALS)
    new_lo = end
    if end + n_arrivals > q_job.shape[0] or end - first - waiting > waiting + 64:
        end = _compact(ints, floats, first, end)
        first = 0
        new_lo = -1
    for x in range(n_arrivals):
        j = arrivals[x]
        k = floats[J_KEY, j]
        p = first + _rank(q_key[first:end], q_job[first:end], end - first, k, j)
        c = j_total[j, 0]
        e = floats[J_EST, j]
        if p > first and q_cores[p - 1] == HOLE:
            # The hole just before takes it (the slots stay sorted); only the
            # bounds of its block and super-block may fall.
            p -= 1
            _queue_set(ints, floats, p, j, k, c)
            if c < b_cores[p // BLOCK]:
                b_cores[p // BLOCK] = c
            if e < b_est[p // BLOCK]:
                b_est[p // BLOCK] = e
            if c < s_cores[p // SUPER]:
                s_cores[p // SUPER] = c
            if e < s_est[p // SUPER]:
                s_est[p // SUPER] = e
            cls = b_class[p // BLOCK]
            if cls == NO_CLASS:
                b_class[p // BLOCK] = ints[J_CLASS, j]
            elif cls != ints[J_CLASS, j]:
                b_class[p // BLOCK] = MIXED
        else:
            for y in range(end, p, -1):
                _queue_move(ints, floats, y, y - 1)
            end += 1
            _queue_set(ints, floats, p, j, k, c)
            _bound_blocks(ints, floats, p, end)
        waiting += 1
        if new_lo >= 0 and p < new_lo:
            new_lo = p
    meta[M_NEW_LO] = new_lo
    meta[M_FIRST] = first
    meta[M_END] = end
    meta[M_QUEUE] = waiting


@_jit
def _queue_set(ints: np.ndarray, floats: np.ndarray, p: int, j: int, k: float, c: int) -> None:
    """Queue slot ``p`` holds job ``j`` of key ``k`` asking ``c`` cores, with its
    demand, memory-per-core index and estimate beside it."""
    ints[Q_JOB, p] = j
    floats[Q_KEY, p] = k
    ints[Q_CORES, p] = c
    ints[Q_CLASS, p] = ints[J_CLASS, j]
    ints[Q_MC, p] = ints[J_MC, j]
    floats[Q_EST, p] = floats[J_EST, j]


@_jit
def _queue_move(ints: np.ndarray, floats: np.ndarray, to: int, frm: int) -> None:
    """Copy queue slot ``frm`` to slot ``to``."""
    ints[Q_JOB, to] = ints[Q_JOB, frm]
    ints[Q_CORES, to] = ints[Q_CORES, frm]
    ints[Q_CLASS, to] = ints[Q_CLASS, frm]
    ints[Q_MC, to] = ints[Q_MC, frm]
    floats[Q_KEY, to] = floats[Q_KEY, frm]
    floats[Q_EST, to] = floats[Q_EST, frm]


@_jit
def _store(
    pool_nodes: np.ndarray,
    pool_amt: np.ndarray,
    a_off: np.ndarray,
    a_len: np.ndarray,
    meta: np.ndarray,
    j: int,
    m: int,
    s_nodes: np.ndarray,
    s_amt: np.ndarray,
) -> None:
    """Keep job ``j``'s allocation (``m`` rows of the scratch) in the pool, from
    its first free row (``meta[M_POOL]``; the caller makes room first,
    :func:`_pool_front`)."""
    top = meta[M_POOL]
    a_off[j] = top
    a_len[j] = m
    for i in range(m):
        pool_nodes[top + i] = s_nodes[i]
        for d in range(pool_amt.shape[1]):
            pool_amt[top + i, d] = s_amt[i, d]
    meta[M_POOL] = top + m


@_jit
def _pool_front(
    pool_nodes: np.ndarray,
    pool_amt: np.ndarray,
    a_off: np.ndarray,
    a_len: np.ndarray,
    n_run: int,
    r_job: np.ndarray,
    keys: np.ndarray,
) -> int:
    """Move every running job's rows to the front of the pool, in the order of
    their offsets (a row never overwrites one still to be moved), ties by running
    slot; returns the first free row (for when the pool is full). ``keys`` is
    scratch of ``n_run`` entries or more (``offset * n_run + slot``, sorted)."""
    k = 0
    for x in range(n_run):
        r = r_job[x]
        if r >= 0:  # not a hole
            keys[k] = a_off[r] * n_run + x
            k += 1
    _heap_sort(keys, pool_amt, k, False)
    top = 0
    for y in range(k):
        r = r_job[keys[y] % n_run]
        off = a_off[r]
        a_off[r] = top
        for i in range(a_len[r]):
            pool_nodes[top] = pool_nodes[off + i]
            for d in range(pool_amt.shape[1]):  # (a row assigned whole would allocate)
                pool_amt[top, d] = pool_amt[off + i, d]
            top += 1
    return top


@_jit
def _open_update(nodes: np.ndarray, meta: np.ndarray, work: np.ndarray, node: int) -> None:
    """``node``'s free cores changed: a node that has one and is not listed waits in
    ``nodes[PENDING]`` for the next :func:`_open_list`; a listed node that has none
    stays listed (it gives nothing) until then."""
    if work[node, 0] > 0:
        if nodes[LISTED, node] == 0:
            nodes[LISTED, node] = 1
            nodes[PENDING, meta[M_PENDING]] = node
            meta[M_PENDING] += 1
    elif nodes[LISTED, node]:
        meta[M_STALE] += 1


@_jit
def _open_list(nodes: np.ndarray, meta: np.ndarray, work: np.ndarray) -> int:
    """The length of the open-node list ``nodes[OPEN]``: every partition node with
    a free core, ascending, and maybe some closed since (they give nothing and
    fail every test that needs a core). The pending nodes are merged in, and the
    closed ones dropped, when there are any pending or many closed."""
    n = meta[M_OPEN]
    p = meta[M_PENDING]
    if p == 0 and meta[M_STALE] <= (n >> 2) + 8:
        return n
    open_ = nodes[OPEN]
    pending = nodes[PENDING]
    listed = nodes[LISTED]
    merged = nodes[KEYS]
    # The pending nodes in ascending order (few: insertion sort).
    for x in range(1, p):
        v = pending[x]
        y = x - 1
        while y >= 0 and pending[y] > v:
            pending[y + 1] = pending[y]
            y -= 1
        pending[y + 1] = v
    w = 0
    a = 0
    b = 0
    while a < n or b < p:
        if b >= p or (a < n and open_[a] < pending[b]):
            node = open_[a]
            a += 1
        else:
            node = pending[b]
            b += 1
        if work[node, 0] > 0:
            merged[w] = node
            w += 1
        else:
            listed[node] = 0
    for x in range(w):
        open_[x] = merged[x]
    meta[M_OPEN] = w
    meta[M_PENDING] = 0
    meta[M_STALE] = 0
    return w


@_jit
def _log_mask(ring: int) -> int:
    """The log ring's length less 1: its length is the largest power of 2 up to
    ``ring`` (the node rows' width), so a position is a mask, not a division."""
    n = 1
    while 2 * n <= ring:
        n *= 2
    return n - 1


@_jit
def _take_now(
    work: np.ndarray,
    tot: np.ndarray,
    m: int,
    s_nodes: np.ndarray,
    s_amt: np.ndarray,
    nodes: np.ndarray,
    meta: np.ndarray,
) -> None:
    """Take an allocation's ``m`` rows from the free amounts and their sums."""
    dims = work.shape[1]
    meta[M_VERSION] += 1
    mask = _log_mask(nodes.shape[1])
    for i in range(m):
        node = s_nodes[i]
        for d in range(dims):
            work[node, d] -= s_amt[i, d]
            tot[d] -= s_amt[i, d]
        _open_update(nodes, meta, work, node)
        nodes[LOG, meta[M_LOG] & mask] = node
        meta[M_LOG] += 1


@_jit
def _first_fit(
    free: np.ndarray,
    nodes: np.ndarray,
    n_open: int,
    need: int,
    mpc: int,
    out_nodes: np.ndarray,
    out_amt: np.ndarray,
) -> int:
    """:func:`allocate`'s first fit of a cores-and-memory demand (``need`` cores,
    ``mpc`` memory per core) over the open nodes (the first ``n_open`` of
    ``nodes[OPEN]``), for :func:`_job_allocation` without the views and
    arguments ``allocate`` takes."""
    dims = free.shape[1]
    cum = 0
    placed = 0
    for x in range(n_open):
        node = nodes[OPEN, x]
        c = _gives(free[node, 0], free[node, 1], mpc)
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


@_jit
def _first_fit_kept(
    snap: np.ndarray,
    mc: int,
    nn: int,
    need: int,
    mpc: int,
    out_nodes: np.ndarray,
    out_amt: np.ndarray,
) -> int:
    """:func:`_first_fit` from ``snap[mc]`` when it is current (what each of the
    ``nn`` nodes gives memory per core ``mpc`` on ``work``, 0 for a node with no
    free core or outside the partition): the same nodes in the same order,
    visiting only the nodes set in their block's bit mask (lowest bit first).
    (:func:`_first_fit_head` without its head check.)"""
    placed, _ = _first_fit_head(snap, mc, nn, need, mpc, out_nodes, out_amt, out_amt, 0, 0, False)
    return placed


@_jit
def _first_fit_head(
    snap: np.ndarray,
    mc: int,
    nn: int,
    need: int,
    mpc: int,
    out_nodes: np.ndarray,
    out_amt: np.ndarray,
    fat: np.ndarray,
    h_mpc: int,
    slack: int,
    check: bool = True,
) -> tuple[int, int]:
    """:func:`_first_fit_kept` (which must find an allocation: the capacity test
    passed) with step 3's head check on the way: returns ``(rows, delta)``, where
    ``delta`` is the drop of the head's capacity on ``fat`` (memory per core
    ``h_mpc``) were the rows taken from it, or ``(DELAYS, 0)`` as soon as a row
    does not fit in ``fat`` or ``delta`` exceeds ``slack`` (the head's capacity on
    ``fat`` past its cores). Each row's drop is at least 0 (``_gives`` only grows
    with the free amounts), so the rows not walked could not have made up for it:
    the answer is the one the whole allocation's check gives. With ``check``
    false, the plain first fit (``fat``, ``h_mpc`` and ``slack`` unread), which
    returns ``(NONE, 0)`` when the nodes give too little."""
    dims = out_amt.shape[1]
    cum = 0
    placed = 0
    delta = 0
    for b in range((nn + SNAP_LOW) >> SNAP_SHIFT):
        bits = snap[mc, nn + b]
        base = b << SNAP_SHIFT
        while bits != 0:
            node = base + trailing_zeros(bits)
            bits &= bits - 1  # the lowest bit cleared
            g = snap[mc, node]
            got = min(g, need - cum)
            if check:
                f0 = fat[node, 0]
                f1 = fat[node, 1]
                if f0 < got or f1 < got * mpc:
                    return DELAYS, 0
                for d in range(2, dims):
                    if fat[node, d] < 0:
                        return DELAYS, 0
                delta += _gives(f0, f1, h_mpc) - _gives(f0 - got, f1 - got * mpc, h_mpc)
                if delta > slack:
                    return DELAYS, 0
            out_nodes[placed] = node
            out_amt[placed, 0] = got
            out_amt[placed, 1] = got * mpc
            for d in range(2, dims):
                out_amt[placed, d] = 0
            placed += 1
            cum += got
            if cum >= need:
                return placed, delta
    return NONE, 0


@_jit
def _job_allocation(
    free: np.ndarray,
    pnodes: np.ndarray,
    nodes: np.ndarray,
    meta: np.ndarray,
    kind: int,
    demands: np.ndarray,
    ints: np.ndarray,
    j: int,
    s_nodes: np.ndarray,
    s_amt: np.ndarray,
) -> int:
    """:func:`allocate` for job ``j``'s demand (from the packed arrays) on the free
    amounts ``free``, looking at the open nodes."""
    n_open = _open_list(nodes, meta, free)
    if kind == 0 and ints[J_MC, j] >= 0 and ints[J_NODES, j] == 0:
        return _first_fit(free, nodes, n_open, demands[0, j, 0], ints[J_MPC, j], s_nodes, s_amt)
    return allocate(
        free, pnodes, nodes[OPEN][:n_open], kind, demands[0, j], ints[J_MPC, j], ints[J_NODES, j],
        demands[1, j], nodes[ORDER], nodes[KEYS], s_nodes, s_amt,
    )  # fmt: skip


@_jit
def _fits_on(
    free: np.ndarray,
    pnodes: np.ndarray,
    kind: int,
    demands: np.ndarray,
    ints: np.ndarray,
    nodes: np.ndarray,
    j: int,
    s_nodes: np.ndarray,
    s_amt: np.ndarray,
) -> bool:
    """Whether job ``j`` has an allocation on ``free`` (any of the partition's
    nodes; the rows go to the scratch given)."""
    found = allocate(
        free, pnodes, pnodes, kind, demands[0, j], ints[J_MPC, j], ints[J_NODES, j],
        demands[1, j], nodes[ORDER], nodes[KEYS], s_nodes, s_amt,
    )  # fmt: skip
    return found != NONE


@_jit
def _whole_nodes(work: np.ndarray, s_nodes: np.ndarray, s_amt: np.ndarray, m: int) -> None:
    """On an exclusive partition, the job takes the ``m`` nodes of its allocation
    whole: each row becomes the node's free amounts, all of its capacity (the
    allocation chose idle nodes only: a node a job holds has nothing free, as every
    row taken from it was its whole capacity). The rows were chosen by the shared
    rules, which on idle nodes give what :func:`schedlab.sim.resources.take` gives on
    an exclusive partition (the cores an idle node gives a job, its memory
    permitting, and no node that gives it nothing)."""
    for y in range(m):
        node = s_nodes[y]
        for d in range(work.shape[1]):
            s_amt[y, d] = work[node, d]


@_jit
def _launch(
    meta: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    demands: np.ndarray,
    work: np.ndarray,
    tot: np.ndarray,
    nodes: np.ndarray,
    pool_nodes: np.ndarray,
    pool_amt: np.ndarray,
    j: int,
    m: int,
    s_nodes: np.ndarray,
    s_amt: np.ndarray,
    now: float,
) -> None:
    """Start job ``j`` on the ``m`` rows of the scratch: take them from the free
    amounts, keep them in the pool (and their sums; when the pool is full, the
    running jobs' rows move to its front first), add the job to the running jobs
    at its estimated end."""
    _take_now(work, tot, m, s_nodes, s_amt, nodes, meta)
    e = now + floats[J_EST, j]
    floats[J_END, j] = e
    if meta[M_POOL] + m > pool_nodes.shape[0]:
        # (``ints[FINISHED]``, read only at the pass's start, is the scratch.)
        meta[M_POOL] = _pool_front(pool_nodes, pool_amt, _row(ints, A_OFF), _row(ints, A_LEN),
                                   meta[M_RUNNING], _row(ints, R_JOB),
                                   _row(ints, FINISHED))  # fmt: skip
    _store(pool_nodes, pool_amt, _row(ints, A_OFF), _row(ints, A_LEN), meta, j, m, s_nodes, s_amt)
    for d in range(work.shape[1]):
        demands[2, j, d] = 0
    for y in range(m):
        for d in range(work.shape[1]):
            demands[2, j, d] += s_amt[y, d]
    meta[M_RUNNING] = _running_insert(
        _row(floats, R_END), _row(ints, R_JOB), meta[M_RUNNING], e, j, meta
    )


@_jit
def node_easy_pass(
    meta: np.ndarray,
    free: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    demands: np.ndarray,
    mats: np.ndarray,
    nodes: np.ndarray,
    memo: np.ndarray,
    pool_nodes: np.ndarray,
    pool_amt: np.ndarray,
    s_nodes: np.ndarray,
    s_amt: np.ndarray,
    snap: np.ndarray,
    kind: int,
    n_arrivals: int,
    n_finished: int,
    ended: bool,
    now: float,
) -> tuple[int, int, int, float]:
    """One EASY pass at ``now`` (see the module docstring) after ``n_arrivals``
    arrivals and ``n_finished`` ends (``ended``: the engine saw a job end or
    re-keyed the queue since the last pass). ``free`` is the machine's free
    amounts (read only); ``work`` and ``fat`` are scratch and kept matrices of the
    same shape.

    Returns ``(started, from_head, head, shadow)``: ``out[:started]`` start in
    that order (the first ``from_head`` from the head; their allocations are in the
    pool at ``a_off``/``a_len``); ``head`` is the first waiting job after the pass
    (``-1``: none) and ``shadow`` its shadow time. ``started == -1``: a finished job
    was not running; ``-2``: the head fits no allocation even with every running
    job ended (both bugs).

    The arrays are laid out in rows (the constants above): ``ints``, ``floats``
    and ``memo`` by job, queue slot, rank or demand; ``demands`` holds each job's
    total and per-node chunk (``[0]``, ``[1]``; the last chunk row, past every job,
    keeps the partition's free totals) and, once started, its allocation's amounts
    summed over its nodes (``[2]``); ``mats`` the scratch free amounts
    and the kept amounts at the shadow time (``[0]``, ``[1]``, shaped like
    ``free``); ``nodes`` the partition's nodes and scratch rows."""
    j_mpc = _row(ints, J_MPC)
    j_mc = _row(ints, J_MC)
    q_job = _row(ints, Q_JOB)
    q_cores = _row(ints, Q_CORES)
    q_class = _row(ints, Q_CLASS)
    q_mc = _row(ints, Q_MC)
    r_job = _row(ints, R_JOB)
    a_off = _row(ints, A_OFF)
    a_len = _row(ints, A_LEN)
    finished = _row(ints, FINISHED)
    out = _row(ints, OUT)
    j_end = _row(floats, J_END)
    q_est = _row(floats, Q_EST)
    r_end = _row(floats, R_END)
    last_t = _row(floats, SCALARS)
    j_total = _row(demands, 0)
    work = _row(mats, 0)
    fat = _row(mats, 1)
    pnodes = _row(nodes, P_NODES)[: meta[M_PNODES]]
    fit_memo = _row(memo, FIT)
    head_memo = _row(memo, HEAD)
    mcap = _row(memo, CAP)
    mcap_ep = _row(memo, CAP_EPOCH)
    log = _row(nodes, LOG)
    ring = nodes.shape[1]
    dims = free.shape[1]
    n_run = meta[M_RUNNING]
    mask = _log_mask(ring)
    lring = mask + 1
    # ``work`` mirrors the machine's free amounts from one call to the next (the
    # Python side commits exactly the allocations this kernel chose), and
    # ``tot`` their sums over the partition: the ends give their rows back.
    tot = _row(_row(demands, 1), demands.shape[1] - 1)
    if meta[M_SYNCED] == 0:
        for node in range(free.shape[0]):  # (``work[:] = free`` would allocate)
            for d in range(dims):
                work[node, d] = free[node, d]
        tot[:] = 0
        n_open = 0
        for node in pnodes:
            for d in range(dims):
                tot[d] += work[node, d]
            nodes[LISTED, node] = 0
            if work[node, 0] > 0:
                nodes[OPEN, n_open] = node
                nodes[LISTED, node] = 1
                n_open += 1
        meta[M_OPEN] = n_open
        meta[M_PENDING] = 0
        meta[M_STALE] = 0
        meta[M_FAT_OK] = 0
        meta[M_CAP_MPC] = -1
        meta[M_VERSION] += 1
        mcap_ep[:] = -1  # every capacity is summed again
        meta[M_SYNCED] = 1
    if n_finished:
        meta[M_VERSION] += 1
    # ``fat`` follows every start and end (see ``_fat_job``): an end whose estimated
    # end is past ``fat``'s time gives its rows to ``fat`` too (one before leaves
    # ``fat`` as it is: its rows move from the running jobs to ``work``).
    have = _row(_row(demands, 2), demands.shape[1] - 1)
    fat_t = last_t[1]
    fat_ok = meta[M_FAT_OK]
    for x in range(n_finished):
        j = finished[x]
        n_run = _running_remove(r_end, r_job, n_run, j_end[j], j, meta)
        if n_run < 0:
            return -1, 0, -1, now
        off = a_off[j]
        for y in range(a_len[j]):
            node = pool_nodes[off + y]
            for d in range(dims):
                work[node, d] += pool_amt[off + y, d]
                tot[d] += pool_amt[off + y, d]
            _open_update(nodes, meta, work, node)
            log[meta[M_LOG] & mask] = node
            meta[M_LOG] += 1
        if fat_ok and j_end[j] > fat_t:
            meta[M_HEAD_CAP] = _fat_job(
                fat, have, pool_nodes, pool_amt, off, a_len[j], 1, meta[M_CAP_MPC],
                meta[M_HEAD_CAP],
            )  # fmt: skip
    meta[M_RUNNING] = n_run
    meta[M_NEW_LO] = meta[M_END]
    if n_arrivals:
        _insert_arrivals(ints, floats, demands, meta, n_arrivals)
    first = meta[M_FIRST]
    end = meta[M_END]
    waiting = meta[M_QUEUE]
    # 1. From the head while jobs get an allocation (they leave holes).
    started = 0
    x = first
    while x < end:
        if q_cores[x] == HOLE:
            x += 1
            continue
        j = q_job[x]
        mc = j_mc[j]
        if mc >= 0:
            if mcap_ep[mc] != meta[M_LOG]:
                # The capacity for this memory per core on ``work`` (kept while
                # ``meta[M_LOG]`` stays ``mcap_ep[mc]``), from the log of changed nodes
                # when it holds the changes since and they are fewer than the open
                # nodes (each one's share in ``snap[mc]`` replaced), else summed again.
                # (Written out here and in step 3, from when a helper taking the
                # arrays cost more in reference counts than it saved.)
                meta[M_CAPACITIES] += 1
                since = mcap_ep[mc]
                mpc = j_mpc[j]
                if (
                    since >= 0
                    and mc < snap.shape[0]
                    and meta[M_LOG] - since <= min(lring, meta[M_OPEN] + 8)
                ):
                    cap = mcap[mc]
                    for _k in range(since, meta[M_LOG]):
                        node = log[_k & mask]
                        g = _gives(work[node, 0], work[node, 1], mpc)
                        was = snap[mc, node]
                        cap += g - was
                        if (g > 0) != (was > 0):  # the node's bit in its block's mask
                            snap[mc, ring + (node >> SNAP_SHIFT)] ^= 1 << (node & SNAP_LOW)
                        snap[mc, node] = g
                    mcap[mc] = cap
                else:
                    meta[M_CAP_FULL] += 1
                    # Over the partition's nodes (a node with no free core gives 0):
                    # the open-node list need not be merged for it.
                    mcap[mc] = _log_capacity(work, pnodes, pnodes.shape[0], mpc, snap, mc, ring)
                mcap_ep[mc] = meta[M_LOG]
            if j_total[j, 0] > mcap[mc]:
                break  # no allocation (the capacity test is exact): no walk over the nodes
        if kind == 0 and 0 <= mc < snap.shape[0] and ints[J_NODES, j] == 0:
            # ``snap[mc]`` is current (just brought up to date)
            m = _first_fit_kept(snap, mc, ring, j_total[j, 0], j_mpc[j], s_nodes, s_amt)
        else:
            m = _job_allocation(work, pnodes, nodes, meta, kind, demands, ints, j, s_nodes, s_amt)
        if m == NONE:
            break
        if meta[M_EXCLUSIVE]:
            _whole_nodes(work, s_nodes, s_amt, m)
        meta[M_RUNNING] = n_run
        _launch(meta, ints, floats, demands, work, tot, nodes, pool_nodes, pool_amt, j, m,
                s_nodes, s_amt, now)  # fmt: skip
        n_run = meta[M_RUNNING]
        if fat_ok and j_end[j] > fat_t:
            meta[M_HEAD_CAP] = _fat_job(
                fat, have, pool_nodes, pool_amt, a_off[j], a_len[j], -1, meta[M_CAP_MPC],
                meta[M_HEAD_CAP],
            )  # fmt: skip
        q_cores[x] = HOLE
        q_est[x] = np.inf
        out[started] = j
        started += 1
        x += 1
    first = x
    from_head = started
    waiting -= started
    # The memos of earlier passes are stale (jobs may have ended since).
    meta[M_EPOCH] += 1
    meta[M_QUEUE] = waiting
    if waiting == 0:
        meta[M_FIRST] = 0
        meta[M_END] = 0
        meta[M_HEAD] = -1
        return started, from_head, -1, now
    meta[M_FIRST] = first

    # 2. The head's shadow time (kept from the last pass when nothing ended or
    # started and the head is the same).
    head = q_job[first]
    t = last_t[0]
    h_mc = j_mc[head]
    h_mpc = j_mpc[head]
    h_total = _row(j_total, head)
    # Slots ``settled_lo .. settled_hi - 1`` need no look while nothing starts (see
    # step 3); empty unless the shadow time is kept.
    settled_lo = end
    settled_hi = end
    if ended or from_head or meta[M_HEAD] != head or not now <= t:
        meta[M_SHADOWS] += 1
        # ``fat`` is ``work`` plus the rows of the running jobs ending by ``fat_t``
        # (ranks ``0 .. i - 1``): built from ``work`` when it was let go.
        if fat_ok == 0:
            for node in pnodes:
                for d in range(dims):
                    fat[node, d] = work[node, d]
            for d in range(dims):
                have[d] = tot[d]
            fat_t = -np.inf
            meta[M_CAP_MPC] = -1
            i = 0
        else:
            i = _rank_running(r_end, r_job, n_run, fat_t, HOLE)
            while i > 0 and r_job[i - 1] < 0:
                i -= 1  # a hole holds nothing: ranks ``0 .. i - 1`` end with a job
            meta[M_FROM_FAT] += 1
        cap_mpc = meta[M_CAP_MPC]
        h_cap = meta[M_HEAD_CAP]
        if h_mc >= 0:
            if cap_mpc != h_mpc:
                meta[M_CAPACITIES] += 1
                h_cap = _capacity(fat, pnodes, h_mpc)
                cap_mpc = h_mpc
        else:
            cap_mpc = -1
            # Not a plain capacity test: from ``work`` up, as the walk always did.
            while i > 0:
                i -= 1
                r = r_job[i]
                if r >= 0:
                    _fat_job(fat, have, pool_nodes, pool_amt, a_off[r], a_len[r], -1, -1, 0)
                    meta[M_WALKED] += 1
        # The head starts at the earliest estimated end ``t`` at which the sums of
        # ``fat`` are enough and it has an allocation on ``fat`` (both only grow
        # with ``t``): when it has one at ``fat_t``, whole groups of equal ends
        # are taken back while it still has one; else groups are added, as the
        # walk from ``work`` up did, until it has one.
        fits = False
        if i > 0 and h_mc >= 0:
            fits = h_cap >= h_total[0]
            for d in range(dims):
                if have[d] < h_total[d]:
                    fits = False
        found = False
        if fits:
            found = True
            while True:
                g = i - 1
                while g > 0 and r_end[g - 1] == r_end[i - 1]:
                    g -= 1
                # ``r_job[i - 1]`` is a job; the group may hold holes, and the
                # group before it starts at the last job before ``g``.
                before = g
                while before > 0 and r_job[before - 1] < 0:
                    before -= 1
                if before == 0:
                    break
                # The sums first, from the group's held amounts (``demands[2]``: each
                # running job's rows summed): when they fall short, so does the test
                # on ``fat`` below, and no row is taken back and given again.
                short = False
                for d in range(dims):
                    left = have[d]
                    for y in range(g, i):
                        r = r_job[y]
                        if r >= 0:
                            left -= demands[2, r, d]
                    if left < h_total[d]:
                        short = True
                if short:
                    break
                back = h_cap
                for y in range(g, i):
                    r = r_job[y]
                    if r >= 0:
                        back = _fat_job(fat, have, pool_nodes, pool_amt, a_off[r], a_len[r],
                                        -1, cap_mpc, back)  # fmt: skip
                        meta[M_WALKED] += 1
                still = back >= h_total[0]
                for d in range(dims):
                    if have[d] < h_total[d]:
                        still = False
                if still:
                    h_cap = back
                    i = before
                else:
                    for y in range(g, i):
                        r = r_job[y]
                        if r >= 0:
                            _fat_job(fat, have, pool_nodes, pool_amt, a_off[r], a_len[r], 1,
                                     -1, 0)  # fmt: skip
                    break
            t = r_end[i - 1]
        else:
            while i < n_run:
                t = r_end[i]
                added = False
                while i < n_run and r_end[i] <= t:
                    r = r_job[i]
                    i += 1
                    if r < 0:
                        continue  # a hole: nothing to add
                    h_cap = _fat_job(fat, have, pool_nodes, pool_amt, a_off[r], a_len[r], 1,
                                     cap_mpc, h_cap)  # fmt: skip
                    added = True
                    meta[M_WALKED] += 1
                if not added:
                    # Holes only: ``fat`` is as it was, where the head did not fit.
                    continue
                enough = True
                for d in range(dims):
                    if have[d] < h_total[d]:
                        enough = False
                        break
                if enough:
                    if h_mc >= 0:
                        fits = h_cap >= h_total[0]
                    else:
                        fits = _fits_on(fat, pnodes, kind, demands, ints, nodes, head, s_nodes,
                                        s_amt)  # fmt: skip
                    if fits:
                        found = True
                        break
        if not found:
            meta[M_HEAD] = -1
            meta[M_FAT_OK] = 0
            return -2, from_head, head, now
        meta[M_FAT_OK] = 1
        if t < now:
            # Jobs past their estimates all end now (docs/simulation.md): the shadow
            # time is now, and every running job whose estimated end is by now is
            # free then, not only those up to the earliest end that gave the head
            # an allocation (as on the single pool and the Python pass).
            h_cap = _fat_overdue(
                fat, have, pool_nodes, pool_amt, a_off, a_len, r_end, r_job, n_run, i, now,
                cap_mpc, h_cap, meta,
            )  # fmt: skip
            t = now
            # A job started now that ends by ``now`` would not follow the rule of
            # ``fat`` (built again next time).
            meta[M_FAT_OK] = 0
        last_t[1] = t
        meta[M_HEAD] = head
        meta[M_HEAD_CAP] = h_cap
        meta[M_CAP_MPC] = cap_mpc
        # The cores free at the shadow time (summed over ``fat``) past the head's.
        meta[M_EXTRA] = have[0] - h_total[0]
        last_t[0] = t
    elif n_finished == 0 and meta[M_NEW_LO] > meta[M_LAST]:
        # Nothing ended or started since the last pass, its head and shadow time
        # stand, and every arrival went past the slot of its last backfill: each
        # job after that slot was looked at, and refused, on exactly the free
        # amounts (now and at the shadow time) this pass starts from, and only an
        # earlier ``now`` could have let it end by the shadow time. Until a job
        # starts, those up to the first arrival's slot are refused again.
        settled_lo = meta[M_LAST] + 1
        settled_hi = meta[M_NEW_LO]
        meta[M_SKIPPED] += 1

    # 3. Backfill the others in priority order. A job may start only when it asks
    # at most the cores free now and either ends by the shadow time or asks at
    # most the ``extra`` cores (those free at the shadow time past the head's,
    # fewer by each job started that does not end by then): a block or
    # super-block whose bounds (fewest cores, shortest estimate) fail both holds
    # no candidate and is skipped whole; a block looked into whole gets its
    # bounds tightened.
    epoch = meta[M_EPOCH]
    min_cores = meta[M_MIN_CORES]
    h_cap = meta[M_HEAD_CAP]
    extra = meta[M_EXTRA]
    b_cores = _row(ints, B_CORES)
    s_cores = _row(ints, S_CORES)
    b_est = _row(floats, B_EST)
    s_est = _row(floats, S_EST)
    b_class = _row(ints, B_CLASS)
    m = 0
    n_out = started
    i = first + 1
    last = first
    while i < end:
        if tot[0] < min_cores:
            break  # nothing else fits
        if settled_lo <= i < settled_hi:
            if n_out == started:
                i = settled_hi
                continue
            settled_hi = 0
        sb = i // SUPER
        if i == sb * SUPER:
            bc = s_cores[sb]
            if not (bc <= tot[0] and (now + s_est[sb] <= t or bc <= extra)):
                i += SUPER
                continue
        b = i // BLOCK
        if i == b * BLOCK:
            bc = b_cores[b]
            if not (bc <= tot[0] and (now + b_est[b] <= t or bc <= extra)):
                i += BLOCK
                continue
            cls = b_class[b]
            if cls >= 0 and (
                fit_memo[cls] == epoch or (head_memo[cls] == epoch and now + b_est[b] > t)
            ):
                # Every waiting job in it asks a demand already refused in this
                # epoch (none ends by the shadow time, for a head refusal).
                meta[M_CLASS_SKIPS] += 1
                i += BLOCK
                continue
        stop = min((b + 1) * BLOCK, end)
        tight = i == b * BLOCK
        meta[M_SCANNED] += stop - i
        fewest = HOLE
        shortest = np.inf
        while i < stop:
            cores = q_cores[i]
            est = q_est[i]
            go = False
            ends_by = False
            if cores <= tot[0]:
                ends_by = now + est <= t
            if cores <= tot[0] and (ends_by or cores <= extra):
                j = q_job[i]
                c = q_class[i]
                mc = q_mc[i]
                if fit_memo[c] != epoch and mc >= 0:
                    # Cores and memory only: whether it fits is a sum over the
                    # nodes, shared by every demand asking the same memory per core.
                    if mcap_ep[mc] != meta[M_LOG]:
                        # Kept from the log, or summed again, as in step 1.
                        meta[M_CAPACITIES] += 1
                        since = mcap_ep[mc]
                        mpc = j_mpc[j]
                        if (
                            since >= 0
                            and mc < snap.shape[0]
                            and meta[M_LOG] - since <= min(lring, meta[M_OPEN] + 8)
                        ):
                            cap = mcap[mc]
                            for _k in range(since, meta[M_LOG]):
                                node = log[_k & mask]
                                g = _gives(work[node, 0], work[node, 1], mpc)
                                was = snap[mc, node]
                                cap += g - was
                                if (g > 0) != (was > 0):  # the node's bit in its block's mask
                                    snap[mc, ring + (node >> SNAP_SHIFT)] ^= 1 << (node & SNAP_LOW)
                                snap[mc, node] = g
                            mcap[mc] = cap
                        else:
                            meta[M_CAP_FULL] += 1
                            mcap[mc] = _log_capacity(
                                work, pnodes, pnodes.shape[0], mpc, snap, mc, ring
                            )  # over the partition's nodes, as in step 1
                        mcap_ep[mc] = meta[M_LOG]
                    if cores > mcap[mc]:
                        fit_memo[c] = epoch
                if fit_memo[c] != epoch and (ends_by or head_memo[c] != epoch):
                    meta[M_ALLOCATIONS] += 1
                    delta = 0
                    fused = False
                    if kind == 0 and 0 <= mc < snap.shape[0] and ints[J_NODES, j] == 0:
                        # ``snap[mc]`` is current (the capacity test above)
                        if ends_by or h_mc < 0 or meta[M_EXCLUSIVE]:
                            m = _first_fit_kept(
                                snap, mc, ring, j_total[j, 0], j_mpc[j], s_nodes, s_amt
                            )
                        else:
                            # With the head check (below), stopping at the first row
                            # that fails it: refused jobs were ~29 rows, failing by
                            # the fourth on average on RICC.
                            m, delta = _first_fit_head(
                                snap, mc, ring, j_total[j, 0], j_mpc[j], s_nodes, s_amt,
                                fat, h_mpc, h_cap - h_total[0],
                            )  # fmt: skip
                            fused = True
                    else:
                        m = _job_allocation(
                            work, pnodes, nodes, meta, kind, demands, ints, j, s_nodes, s_amt
                        )
                    if m >= 0 and meta[M_EXCLUSIVE]:
                        _whole_nodes(work, s_nodes, s_amt, m)
                    if m == NONE:
                        fit_memo[c] = epoch
                    elif ends_by:
                        go = True
                    elif m == DELAYS:
                        head_memo[c] = epoch  # checked by ``_first_fit_head``
                    else:
                        # Would the head still have an allocation at the shadow time?
                        ok = True
                        if h_mc >= 0:
                            if not fused:  # (else checked on the way: ``delta``)
                                # Its capacity on ``fat`` less the rows, node by node
                                # (an allocation's nodes are distinct): ``fat`` is
                                # written only when the job starts.
                                for y in range(m):
                                    node = s_nodes[y]
                                    f0 = fat[node, 0]
                                    f1 = fat[node, 1]
                                    delta += _gives(f0, f1, h_mpc) - _gives(
                                        f0 - s_amt[y, 0], f1 - s_amt[y, 1], h_mpc
                                    )
                                    for d in range(dims):
                                        if fat[node, d] < s_amt[y, d]:
                                            ok = False
                                ok = ok and h_cap - delta >= h_total[0]
                            if ok:
                                for y in range(m):
                                    node = s_nodes[y]
                                    for d in range(dims):
                                        fat[node, d] -= s_amt[y, d]
                        else:
                            for y in range(m):
                                node = s_nodes[y]
                                for d in range(dims):
                                    fat[node, d] -= s_amt[y, d]
                                    if fat[node, d] < 0:
                                        ok = False
                            if ok:
                                # The head's trial allocation goes to the spare rows.
                                ok = _fits_on(
                                    fat,
                                    pnodes,
                                    kind,
                                    demands,
                                    ints,
                                    nodes,
                                    head,
                                    s_nodes[m:],
                                    s_amt[m:],
                                )
                            if not ok:
                                for y in range(m):
                                    node = s_nodes[y]
                                    for d in range(dims):
                                        fat[node, d] += s_amt[y, d]
                        if ok:
                            h_cap -= delta
                            extra -= cores
                            for y in range(m):
                                for d in range(dims):
                                    have[d] -= s_amt[y, d]
                        else:
                            head_memo[c] = epoch
                        go = ok
            if go:
                meta[M_RUNNING] = n_run
                _launch(meta, ints, floats, demands, work, tot, nodes, pool_nodes, pool_amt, j,
                        m, s_nodes, s_amt, now)  # fmt: skip
                n_run = meta[M_RUNNING]
                q_cores[i] = HOLE
                q_est[i] = np.inf
                out[n_out] = j
                n_out += 1
                epoch += 1
                last = i
            else:
                fewest = min(fewest, cores)
                shortest = min(shortest, est)
            i += 1
        if tight:
            b_cores[b] = fewest
            b_est[b] = shortest
            if b % SUPER_BLOCKS == SUPER_BLOCKS - 1:
                # The super-block's last block: its bound may rise too.
                _bound_groups(b_cores, b_est, s_cores, s_est, SUPER_BLOCKS, b, b + 1)
    meta[M_QUEUE] = waiting - (n_out - started)
    meta[M_LAST] = last
    meta[M_EPOCH] = epoch
    meta[M_HEAD_CAP] = h_cap
    meta[M_EXTRA] = extra
    return n_out, from_head, head, t


@_jit
def move_running(
    meta: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    demands: np.ndarray,
    mats: np.ndarray,
    pool_nodes: np.ndarray,
    pool_amt: np.ndarray,
    j: int,
    new_end: float,
) -> bool:
    """A prediction correction raised running job ``j``'s estimated end to
    ``new_end`` (not earlier than its end in the kernel, ``floats[J_END, j]``): it
    moves in the running list, and ``fat`` (``work`` plus the rows of the running
    jobs ending by ``floats[SCALARS, 1]``) gives back its rows when the job no
    longer ends by then. The head's shadow time is found again at the next pass.
    ``False`` (nothing changed) when ``j`` is not running in the kernel.

    The job moves in place: the slots between its old rank and its new one move
    down by one (holes with them), so the list keeps its slot count. (Leaving a
    hole and inserting again added a slot per raise: with holes dropped only past
    a quarter of the running jobs plus 32, the slots outgrew the ``n + 1`` of the
    rows and wrote into the next ones, the kept shadow time among them.)"""
    r_end = _row(floats, R_END)
    r_job = _row(ints, R_JOB)
    old_end = floats[J_END, j]
    if not new_end >= old_end:
        return False
    n_run = meta[M_RUNNING]
    lo = _rank_running(r_end, r_job, n_run, old_end, j)
    if lo >= n_run or r_job[lo] != j:
        return False
    # The slots before ``(new_end, j)``, the job's own among them: it goes last of
    # them, the others from ``lo + 1`` on one slot down.
    hi = _rank_running(r_end, r_job, n_run, new_end, j)
    if hi > lo + 1:
        _shift_down(r_end, lo, hi)
        _shift_down(r_job, lo, hi)
        lo = hi - 1
        r_job[lo] = j
    r_end[lo] = new_end
    floats[J_END, j] = new_end
    fat_t = floats[SCALARS, 1]
    if meta[M_FAT_OK] and old_end <= fat_t < new_end:
        have = _row(_row(demands, 2), demands.shape[1] - 1)
        meta[M_HEAD_CAP] = _fat_job(
            _row(mats, 1), have, pool_nodes, pool_amt, ints[A_OFF, j], ints[A_LEN, j], -1,
            meta[M_CAP_MPC], meta[M_HEAD_CAP],
        )  # fmt: skip
    meta[M_HEAD] = -1
    return True


# ---------------------------------------------------------------- whole runs
@_jit
def _heap_push(heap_t: np.ndarray, heap_j: np.ndarray, n: int, t: float, j: int) -> int:
    """Push ``(t, j)`` on the min-heap of ends (ordered by time, then job);
    returns the new size."""
    x = n
    while x > 0:
        up = (x - 1) >> 1
        if heap_t[up] < t or (heap_t[up] == t and heap_j[up] < j):
            break
        heap_t[x] = heap_t[up]
        heap_j[x] = heap_j[up]
        x = up
    heap_t[x] = t
    heap_j[x] = j
    return n + 1


@_jit
def _heap_pop(heap_t: np.ndarray, heap_j: np.ndarray, n: int) -> int:
    """Drop the heap's top; returns the new size."""
    n -= 1
    t = heap_t[n]
    j = heap_j[n]
    x = 0
    while True:
        c = 2 * x + 1
        if c >= n:
            break
        if c + 1 < n and (
            heap_t[c + 1] < heap_t[c] or (heap_t[c + 1] == heap_t[c] and heap_j[c + 1] < heap_j[c])
        ):
            c += 1
        if t < heap_t[c] or (t == heap_t[c] and j < heap_j[c]):
            break
        heap_t[x] = heap_t[c]
        heap_j[x] = heap_j[c]
        x = c
    heap_t[x] = t
    heap_j[x] = j
    return n


@_jit_run
def node_easy_run(
    meta: np.ndarray,
    free: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    demands: np.ndarray,
    mats: np.ndarray,
    nodes: np.ndarray,
    memo: np.ndarray,
    pool_nodes: np.ndarray,
    pool_amt: np.ndarray,
    s_nodes: np.ndarray,
    s_amt: np.ndarray,
    snap: np.ndarray,
    kind: int,
    submit: np.ndarray,
    run_time: np.ndarray,
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
    corr_t: np.ndarray,
    corr_j: np.ndarray,
) -> tuple[int, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A whole simulation on the node-level machine: the engine's event loop
    (:mod:`schedlab.sim.engine`: at each instant the ends, then the arrivals in
    job order, then one pass when jobs wait) around :func:`node_easy_pass`, for
    jobs submitted in job order whose estimates (``floats[J_EST]``) and numeric
    keys (``floats[J_KEY]``) are known before the run. ``free`` is the machine's
    free amounts before the run (read once).

    Estimates: without ``model[MODEL_PREDICT]``, ``floats[J_EST]`` as given; with
    it, predicted at submission and learnt from at each end, as the single pool's
    whole run does (:func:`.easy_kernels.easy_run`, whose prediction steps this
    compiles in, with the same arrays: ``model`` .. ``lin_target``), and with
    ``model[MODEL_CORRECTION]`` a running job still running at its estimated end
    is raised then (:func:`move_running`; ``corr_t``/``corr_j``, ``n + 1`` long,
    the heap of the started jobs' estimated ends, entries whose job ended or moved
    skipped, as the engine's :class:`~schedlab.sim.correction.CorrectionLoop`
    does). At each instant: the ends, the corrections, the arrivals, one pass.

    Fills ``start[j]``; ``heap_t`` and ``heap_j`` (``n + 1`` long) hold the heap of
    ends. Returns ``(passes, status, offset, row_of, p_node, rows_node,
    rows_amt)``: every job's allocation, which :func:`allocation_rows` gathers by
    job index (job ``j``'s rows are then ``offset[j]:offset[j + 1]``); status 0,
    or the pass's error code (``-1``, ``-2``, see :func:`node_easy_pass`), or 1
    when jobs are still waiting with no event left."""
    n = submit.shape[0]
    dims = free.shape[1]
    arrivals = ints[ARRIVALS]
    finished = ints[FINISHED]
    out = ints[OUT]
    a_off = ints[A_OFF]
    a_len = ints[A_LEN]
    # Each job's rows, in start order, then gathered by job. Sized for the most
    # rows the jobs can take when not too many (a row per node, at most the
    # partition's nodes, and a core or more each when a job asks only cores and
    # memory: at most its cores); pages are only touched as rows are written, so the
    # bound costs no memory, and growing (by doubling, as a fallback) would copy
    # rows to fresh pages.
    cap = 2 * n + 16
    m_p = meta[M_PNODES]
    bound = 16
    for j in range(n):
        rows = max(min(demands[0, j, 0], m_p), 1)
        for d in range(2, dims):
            if demands[0, j, d]:
                rows = m_p  # rows may give GPUs or consumables only
        bound += rows
    if cap < bound <= 1 << 25:
        cap = bound
    rows_node = np.empty(cap, dtype=np.int64)
    rows_amt = np.empty((cap, dims), dtype=np.int64)
    # Job ``j``'s row count goes to ``offset[j + 1]`` (summed into the offsets at
    # the end) and its first row to ``row_of[j]`` (``~row`` when packed; read only
    # for jobs that started): no other per-job array, so fewer fresh pages.
    offset = np.zeros(n + 1, dtype=np.int64)
    row_of = np.empty(n, dtype=np.int64)
    used = 0
    # A job whose every row holds ``c`` cores (at most 255), ``c`` times its memory
    # per core and nothing else (all of them on RICC) keeps its rows packed instead:
    # ``node << 8 | c`` in one 32-bit number, 4 bytes a row instead of
    # ``8 * (dims + 1)``, so an eighth of the fresh pages (the gather below writes
    # the full rows).
    j_mpc = _row(ints, J_MPC)
    p_cap = cap
    p_node = np.empty(p_cap, dtype=np.int32)  # node << 8 | cores
    p_used = 0
    small = 2**23 - 1
    n_heap = 0
    si = 0
    n_finished = 0
    passes = 0
    status = 0
    inf = np.inf
    j_est = _row(floats, J_EST)
    j_end = _row(floats, J_END)
    predict = model[MODEL_PREDICT]
    correction = model[MODEL_CORRECTION]
    batch = model[MODEL_BATCH]
    scale = lin_par[LIN_SCALE]
    hist_count = hist_meta[0]
    hist_next = hist_meta[1]
    n_lin = 0
    n_free = 0  # rows of lin_x free again (lin_slots[LIN_FREE])
    n_rows = 0  # rows of lin_x used so far
    n_corr = 0
    while True:
        now = inf
        if n_heap:
            now = heap_t[0]
        if correction:
            # The next estimated end of a job still running then (entries whose
            # job moved, or ends by then, are dropped).
            while n_corr:
                t = corr_t[0]
                j = corr_j[0]
                if j_end[j] == t and start[j] + run_time[j] > t:
                    break
                n_corr = _heap_pop(corr_t, corr_j, n_corr)
            if n_corr and corr_t[0] < now:
                now = corr_t[0]
        if si < n and submit[si] < now:
            now = submit[si]
        if now == inf:
            break
        ended = False
        while n_heap and heap_t[0] == now:
            j = heap_j[0]
            finished[n_finished] = j
            n_finished += 1
            n_heap = _heap_pop(heap_t, heap_j, n_heap)
            ended = True
            if predict:
                n_lin, n_free = _learn_end(
                    j, predict, run_time[j], user, history, hist_count, hist_next, lin_x,
                    lin_slots, n_free, lin_w, lin_sq, lin_grad, lin_rows, lin_y, n_lin, batch,
                    lin_par, lin_target, counts,
                )  # fmt: skip
        # The running jobs reaching their estimated ends now, still running, in job
        # order: raised (moved among the kernel's running jobs), or left as they are
        # when the rule gives no later end (treated as ending now).
        while correction and n_corr and corr_t[0] == now:
            j = corr_j[0]
            n_corr = _heap_pop(corr_t, corr_j, n_corr)
            began = start[j]
            if j_end[j] != now or not began + run_time[j] > now:
                continue
            est, _k = _corrected(j, now - began, correction, requested, misses, increments)
            new = began + est
            if not new > now:
                continue
            if not move_running(meta, ints, floats, demands, mats, pool_nodes, pool_amt, j, new):
                status = -1
                break
            corrected[j] = 1
            counts[COUNT_CORRECTIONS] += 1
            n_corr = _heap_push(corr_t, corr_j, n_corr, new, j)
            ended = True  # the head's shadow time is found again
        if status:
            break
        n_arrivals = 0
        while si < n and submit[si] == now:
            if predict:
                e, n_free, n_rows = _arrival_estimate(
                    si, predict, user, requested, history, hist_count, hist_next, lin_x,
                    lin_slots, n_free, n_rows, lin_static, lin_w, scale, counts, fallback,
                    min_estimate,
                )  # fmt: skip
                j_est[si] = e
            arrivals[n_arrivals] = si
            n_arrivals += 1
            si += 1
        if meta[M_QUEUE] + n_arrivals == 0:
            continue
        passes += 1
        started, _from_head, _head, _shadow = node_easy_pass(
            meta, free, ints, floats, demands, mats, nodes, memo, pool_nodes, pool_amt,
            s_nodes, s_amt, snap, kind, n_arrivals, n_finished, ended, now,
        )  # fmt: skip
        n_finished = 0
        if started < 0:
            status = started
            break
        for x in range(started):
            j = out[x]
            start[j] = now
            n_heap = _heap_push(heap_t, heap_j, n_heap, now + run_time[j], j)
            if correction:
                n_corr = _heap_push(corr_t, corr_j, n_corr, j_end[j], j)
            m = a_len[j]
            off = a_off[j]
            offset[j + 1] = m
            mpc = j_mpc[j]
            plain = True
            for y in range(m):
                c = pool_amt[off + y, 0]
                if not (0 <= c <= 255 and pool_amt[off + y, 1] == c * mpc):
                    plain = False
                if pool_nodes[off + y] > small:
                    plain = False
                for d in range(2, dims):
                    if pool_amt[off + y, d] != 0:
                        plain = False
            if plain:
                if p_used + m > p_cap:
                    p_cap = 2 * p_cap + m
                    grown_p = np.empty(p_cap, dtype=np.int32)
                    grown_p[:p_used] = p_node[:p_used]
                    p_node = grown_p
                row_of[j] = ~p_used
                for y in range(m):
                    p_node[p_used] = (pool_nodes[off + y] << 8) | pool_amt[off + y, 0]
                    p_used += 1
                continue
            if used + m > cap:
                cap = 2 * cap + m
                grown_node = np.empty(cap, dtype=np.int64)
                grown_amt = np.empty((cap, dims), dtype=np.int64)
                grown_node[:used] = rows_node[:used]
                grown_amt[:used] = rows_amt[:used]
                rows_node = grown_node
                rows_amt = grown_amt
            row_of[j] = used
            for y in range(m):
                rows_node[used] = pool_nodes[off + y]
                for d in range(dims):
                    rows_amt[used, d] = pool_amt[off + y, d]
                used += 1
    if status == 0 and meta[M_QUEUE]:
        status = 1
    for j in range(n):
        offset[j + 1] += offset[j]
    return passes, status, offset, row_of, p_node, rows_node, rows_amt


@_jit
def gather_rows(
    offset: np.ndarray,
    row_of: np.ndarray,
    p_node: np.ndarray,
    rows_node: np.ndarray,
    rows_amt: np.ndarray,
    j_mpc: np.ndarray,
    alloc_nodes: np.ndarray,
    alloc_amt: np.ndarray,
) -> None:
    """Every job's allocation rows, by job index, from :func:`node_easy_run`'s
    rows in start order (``row_of``, ``p_node``, ``rows_node``, ``rows_amt``; job
    ``j``'s memory per core ``j_mpc[j]``): job ``j``'s rows become
    ``alloc_nodes``/``alloc_amt[offset[j]:offset[j + 1]]``. The caller allocates
    the outputs with numpy, which backs large arrays with transparent huge pages
    where the system offers them: the tens of megabytes a long run's allocations
    take are then first touched a 2 MiB page at a time rather than 4 KiB (on
    RICC-2010, about 20,000 page faults fewer)."""
    n = row_of.shape[0]
    dims = alloc_amt.shape[1]
    for j in range(n):
        o = offset[j]
        m = offset[j + 1] - o
        if m == 0:
            continue
        r = row_of[j]
        if r < 0:
            r = ~r
            mpc = j_mpc[j]
            for y in range(m):
                v = np.int64(p_node[r + y])
                alloc_nodes[o + y] = v >> 8
                c = v & 255
                alloc_amt[o + y, 0] = c
                alloc_amt[o + y, 1] = c * mpc
                for d in range(2, dims):
                    alloc_amt[o + y, d] = 0
            continue
        for y in range(m):
            alloc_nodes[o + y] = rows_node[r + y]
            for d in range(dims):
                alloc_amt[o + y, d] = rows_amt[r + y, d]


def allocation_rows(
    ints: np.ndarray,
    offset: np.ndarray,
    row_of: np.ndarray,
    p_node: np.ndarray,
    rows_node: np.ndarray,
    rows_amt: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``(alloc_nodes, alloc_amounts)`` of a whole run (:func:`node_easy_run`'s
    last five results; ``ints`` the kernel's): numpy arrays filled by
    :func:`gather_rows`."""
    rows = int(offset[-1])
    alloc_nodes = np.empty(rows, dtype=np.int64)
    alloc_amt = np.empty((rows, rows_amt.shape[1]), dtype=np.int64)
    gather_rows(offset, row_of, p_node, rows_node, rows_amt, ints[J_MPC], alloc_nodes, alloc_amt)
    return alloc_nodes, alloc_amt


#: Whether :func:`load` has loaded the kernels in this process.
_loaded = False


def load(arrays: tuple[np.ndarray, ...], kind: int) -> None:
    """Load (or compile) :func:`node_easy_pass`, :func:`node_easy_run` and
    :func:`move_running` for the
    argument types of ``arrays`` (the kernel's array arguments, in order) and
    ``kind``, once per process, without running them: the strategy calls it when
    it is bound, as compiled single-pool EASY warms its kernels up then, so that
    neither run's simulation time includes numba's loading of the cached machine
    code (about 0.9 s of CPU for ``node_easy_run`` in a fresh process). Arrays of
    other types later compile their own versions as before."""
    global _loaded
    if _loaded or getattr(numba_config, "DISABLE_JIT", False):  # set from the environment
        return
    from numba import typeof

    types_ = tuple(typeof(a) for a in arrays)
    flat = typeof(np.empty(1, dtype=np.float64))
    index = typeof(np.empty(1, dtype=np.int64))
    kind_t = typeof(int(kind))
    pass_, run = node_easy_pass, node_easy_run
    if not (hasattr(pass_, "compile") and hasattr(run, "compile")):
        return  # a test's wrapper in place of a kernel: load nothing
    pass_.compile((*types_, kind_t, typeof(0), typeof(0), typeof(False), typeof(0.0)))
    # The prediction arrays' types (easy_kernels.RunArrays, as run_whole passes them).
    predicting = tuple(typeof(a) for a in _pool.RunArrays(1, 1, 1).arguments(0.0)[3:])
    run.compile((*types_, kind_t, flat, flat, flat, flat, index, *predicting, flat, index))
    # numba's dispatchers (typed above as the Python functions they compile).
    move: Any = move_running
    gather: Any = gather_rows
    meta, _free, ints, floats, demands, mats, _nodes, _memo, pool_nodes, pool_amt = types_[:10]
    move.compile((meta, ints, floats, demands, mats, pool_nodes, pool_amt, typeof(0), typeof(0.0)))
    rows_2d = typeof(np.empty((1, 1), dtype=np.int64))
    packed = typeof(np.empty(1, dtype=np.int32))
    mpc = typeof(arrays[2][J_MPC])
    gather.compile((index, index, packed, index, rows_2d, mpc, index, rows_2d))
    _loaded = True
