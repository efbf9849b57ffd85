"""An availability profile as a balanced search tree (numba kernels; experimental).

The same free-processor profile as :class:`schedlab.sim.profile.Profile` and the
array kernels of :mod:`.kernels` (slices ``[start, next start)`` with a count of
free processors), kept in a *treap*: a binary search tree keyed by slice start,
balanced by random priorities (expected depth ``O(log n)`` for ``n`` slices). Each
node is one slice and holds, for its subtree, the fewest and the most free
processors of its slices and a pending addition for its children (lazy
propagation). So, with ``n`` slices:

* splitting a slice at ``t`` (a new boundary) inserts one node: ``O(log n)``,
  nothing shifts;
* adding ``delta`` free processors over ``[start, end)`` (booking a reservation,
  giving one back) inserts a slice at either end if none starts there, adds
  ``delta`` along the two paths that bound the range (lazily to the subtrees
  between them) and removes a slice at either end that became equal to the one
  before: ``O(log n)``;
* the first slice at or after ``t`` with at least ``p`` free (the start of a gap)
  and the first slice after ``t`` with fewer than ``p`` (its end) are found by
  descending past every subtree whose most (fewest) free processors rule it out:
  ``O(log n)`` each. A fit search (earliest window of ``p`` processors lasting
  ``d``) takes two such descents per gap it rejects (too short), so
  ``O(g log n)`` for ``g`` gaps, where the array profile scans every slice it
  passes.

Node 0 is the empty tree. Nodes live in two arrays, ``key`` (slice starts) and
``node`` (rows ``VAL``, ``MIN``, ``MAX``, ``ADD``, ``LEFT``, ``RIGHT``, ``PRI``);
freed nodes are kept in a list threaded through ``LEFT``. ``meta`` holds the root,
the next fresh node, the head of the free list, the number of slices, the
random generator's state, the moves of :func:`compress` so far and the paths the
kernels walk (no recursion). A node's ``VAL``, ``MIN`` and ``MAX`` are exact once
the pending additions (``ADD``) of its ancestors are added.

The module is self-contained (numba caches each kernel with its module). It is
not used by the simulator: see the Speed section of ``docs/simulation.md`` for
its measurements against the array kernels. :class:`TreeProfile` wraps it for
tests and benchmarks.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numba.core.cpu import CPUTargetOptions

_NO_REFCOUNTS = {"_nrt": False} if hasattr(CPUTargetOptions, "_nrt") else {}
_jit = njit(cache=True, nogil=True, **_NO_REFCOUNTS)

VAL, MIN, MAX, ADD, LEFT, RIGHT, PRI = range(7)
ROOT, FRESH, FREE_LIST, COUNT, RNG, EPOCH = range(6)
# The paths the kernels walk are kept in ``meta`` (no recursion: numba's cache of
# recursive kernels proved unreliable), up to ``DEPTH`` nodes deep (a treap of a
# million slices is about 50 deep; 1,024 is never reached in practice):
DEPTH = 1024
STACK = 8  # meta[STACK:STACK + DEPTH]: the path of a split, merge or removal
PATH = STACK + DEPTH  # meta[PATH:PATH + DEPTH]: the path of a search
ACCS = PATH + DEPTH  # the pending additions above each node of that path
META_SIZE = ACCS + DEPTH
# The empty tree's fewest and most free processors (never the answer of a min/max).
BIG = 1 << 62
NAN = math.nan
INF = math.inf


@_jit
def _apply(node: np.ndarray, x: int, delta: int) -> None:
    """Add ``delta`` free processors to every slice of subtree ``x``."""
    if x != 0:
        node[VAL, x] += delta
        node[MIN, x] += delta
        node[MAX, x] += delta
        node[ADD, x] += delta


@_jit
def _push(node: np.ndarray, x: int) -> None:
    """Hand node ``x``'s pending addition down to its children."""
    d = node[ADD, x]
    if d != 0:
        _apply(node, node[LEFT, x], d)
        _apply(node, node[RIGHT, x], d)
        node[ADD, x] = 0


@_jit
def _pull(node: np.ndarray, x: int) -> None:
    """Recompute node ``x``'s fewest and most free from its children."""
    a = node[LEFT, x]
    b = node[RIGHT, x]
    v = node[VAL, x]
    lo = v
    hi = v
    if a != 0:
        lo = min(lo, node[MIN, a])
        hi = max(hi, node[MAX, a])
    if b != 0:
        lo = min(lo, node[MIN, b])
        hi = max(hi, node[MAX, b])
    node[MIN, x] = lo
    node[MAX, x] = hi


@_jit
def _new(key: np.ndarray, node: np.ndarray, meta: np.ndarray, t: float, v: int) -> int:
    """A fresh one-slice tree: start ``t``, ``v`` free."""
    x = meta[FREE_LIST]
    if x != 0:
        meta[FREE_LIST] = node[LEFT, x]
    else:
        x = meta[FRESH]
        meta[FRESH] = x + 1
    # A linear congruential generator: priorities for the balance (deterministic).
    s = (meta[RNG] * 1103515245 + 12345) & 0x7FFFFFFF
    meta[RNG] = s
    key[x] = t
    node[VAL, x] = v
    node[MIN, x] = v
    node[MAX, x] = v
    node[ADD, x] = 0
    node[LEFT, x] = 0
    node[RIGHT, x] = 0
    node[PRI, x] = s
    meta[COUNT] += 1
    return x


@_jit
def _release_node(node: np.ndarray, meta: np.ndarray, x: int) -> None:
    """Put node ``x`` on the free list."""
    node[LEFT, x] = meta[FREE_LIST]
    meta[FREE_LIST] = x
    meta[COUNT] -= 1


@_jit
def _pull_path(node: np.ndarray, meta: np.ndarray, base: int, depth: int) -> None:
    """Recompute, deepest first, the nodes of a path kept in ``meta[base:]``."""
    for i in range(depth - 1, -1, -1):
        _pull(node, meta[base + i])


@_jit
def _release_tree(node: np.ndarray, meta: np.ndarray, x: int) -> None:
    """Put every node of subtree ``x`` on the free list."""
    if x == 0:
        return
    meta[STACK] = x
    top = 1
    while top > 0:
        top -= 1
        y = meta[STACK + top]
        a = node[LEFT, y]
        b = node[RIGHT, y]
        if a != 0:
            meta[STACK + top] = a
            top += 1
        if b != 0:
            meta[STACK + top] = b
            top += 1
        _release_node(node, meta, y)


@_jit
def _merge(node: np.ndarray, meta: np.ndarray, a: int, b: int) -> int:
    """The tree of the slices of ``a`` then ``b`` (every start in ``a`` before
    every start in ``b``), built top-down."""
    root = 0
    hook = 0  # the node whose child ``side`` receives the next node
    side = LEFT
    depth = 0
    while a != 0 and b != 0:
        if node[PRI, a] > node[PRI, b]:
            _push(node, a)
            x = a
            next_side = RIGHT
            a = node[RIGHT, a]
        else:
            _push(node, b)
            x = b
            next_side = LEFT
            b = node[LEFT, b]
        if hook == 0:
            root = x
        else:
            node[side, hook] = x
        hook = x
        side = next_side
        meta[STACK + depth] = x
        depth += 1
    rest = a if a != 0 else b
    if hook == 0:
        root = rest
    else:
        node[side, hook] = rest
    _pull_path(node, meta, STACK, depth)
    return root


@_jit
def _split(
    key: np.ndarray, node: np.ndarray, meta: np.ndarray, x: int, t: float
) -> tuple[int, int]:
    """Subtree ``x`` as two trees: the slices starting before ``t``, and the rest."""
    a = 0
    b = 0
    left_hook = 0  # the last node of ``a`` so far (its right child comes next)
    right_hook = 0  # the first node of ``b`` so far (its left child comes next)
    depth = 0
    while x != 0:
        _push(node, x)
        meta[STACK + depth] = x
        depth += 1
        if key[x] < t:
            if left_hook == 0:
                a = x
            else:
                node[RIGHT, left_hook] = x
            left_hook = x
            x = node[RIGHT, x]
        else:
            if right_hook == 0:
                b = x
            else:
                node[LEFT, right_hook] = x
            right_hook = x
            x = node[LEFT, x]
    if left_hook != 0:
        node[RIGHT, left_hook] = 0
    if right_hook != 0:
        node[LEFT, right_hook] = 0
    _pull_path(node, meta, STACK, depth)
    return a, b


@_jit
def _first(node: np.ndarray, x: int) -> tuple[int, int]:
    """The first slice of subtree ``x`` (non-empty): its node and free processors."""
    acc = 0
    while node[LEFT, x] != 0:
        acc += node[ADD, x]
        x = node[LEFT, x]
    return x, node[VAL, x] + acc


@_jit
def _last(node: np.ndarray, x: int) -> tuple[int, int]:
    """The last slice of subtree ``x`` (non-empty): its node and free processors."""
    acc = 0
    while node[RIGHT, x] != 0:
        acc += node[ADD, x]
        x = node[RIGHT, x]
    return x, node[VAL, x] + acc


@_jit
def _leftmost_at_least(node: np.ndarray, y: int, acc: int, size: int) -> int:
    """The first slice of subtree ``y`` with at least ``size`` free (one there is);
    ``acc``: the pending additions of ``y``'s ancestors."""
    while True:
        below = acc + node[ADD, y]
        a = node[LEFT, y]
        if a != 0 and node[MAX, a] + below >= size:
            acc = below
            y = a
        elif node[VAL, y] + acc >= size:
            return y
        else:
            acc = below
            y = node[RIGHT, y]


@_jit
def _leftmost_below(node: np.ndarray, y: int, acc: int, size: int) -> int:
    """The first slice of subtree ``y`` with fewer than ``size`` free (one there is)."""
    while True:
        below = acc + node[ADD, y]
        a = node[LEFT, y]
        if a != 0 and node[MIN, a] + below < size:
            acc = below
            y = a
        elif node[VAL, y] + acc < size:
            return y
        else:
            acc = below
            y = node[RIGHT, y]


@_jit
def _first_at_least(
    key: np.ndarray, node: np.ndarray, meta: np.ndarray, t: float, size: int, strict: bool
) -> int:
    """The first slice starting at ``t`` or later (after ``t`` if ``strict``) with at
    least ``size`` free (0 if none). The search path for ``t`` passes, where it goes
    left, the candidates in reverse order: each node, then its right subtree."""
    x = meta[ROOT]
    if node[MAX, x] < size:
        return 0
    acc = 0
    depth = 0
    while x != 0:
        k = key[x]
        if k < t or (strict and k == t):
            acc += node[ADD, x]
            x = node[RIGHT, x]
        else:
            meta[PATH + depth] = x
            meta[ACCS + depth] = acc
            depth += 1
            acc += node[ADD, x]
            x = node[LEFT, x]
    for i in range(depth - 1, -1, -1):
        x = meta[PATH + i]
        acc = meta[ACCS + i]
        if node[VAL, x] + acc >= size:
            return x
        below = acc + node[ADD, x]
        y = node[RIGHT, x]
        if y != 0 and node[MAX, y] + below >= size:
            return _leftmost_at_least(node, y, below, size)
    return 0


@_jit
def _first_below(key: np.ndarray, node: np.ndarray, meta: np.ndarray, t: float, size: int) -> int:
    """The first slice starting after ``t`` with fewer than ``size`` free (0 if none)."""
    x = meta[ROOT]
    if node[MIN, x] >= size:
        return 0
    acc = 0
    depth = 0
    while x != 0:
        if key[x] <= t:
            acc += node[ADD, x]
            x = node[RIGHT, x]
        else:
            meta[PATH + depth] = x
            meta[ACCS + depth] = acc
            depth += 1
            acc += node[ADD, x]
            x = node[LEFT, x]
    for i in range(depth - 1, -1, -1):
        x = meta[PATH + i]
        acc = meta[ACCS + i]
        if node[VAL, x] + acc < size:
            return x
        below = acc + node[ADD, x]
        y = node[RIGHT, x]
        if y != 0 and node[MIN, y] + below < size:
            return _leftmost_below(node, y, below, size)
    return 0


@_jit
def _most_before(key: np.ndarray, node: np.ndarray, x: int, acc: int, t: float) -> int:
    """The most free processors in a slice of subtree ``x`` starting before ``t``
    (``-BIG`` if none)."""
    best = -BIG
    while x != 0:
        below = acc + node[ADD, x]
        if key[x] < t:
            a = node[LEFT, x]
            if a != 0:
                best = max(best, node[MAX, a] + below)
            best = max(best, node[VAL, x] + acc)
            x = node[RIGHT, x]
        else:
            x = node[LEFT, x]
        acc = below
    return best


@_jit
def init(key: np.ndarray, node: np.ndarray, meta: np.ndarray, procs: int, now: float) -> None:
    """Start a profile of ``procs`` free processors from ``now`` on (forgetting any
    former content)."""
    meta[ROOT] = 0
    meta[FRESH] = 1
    meta[FREE_LIST] = 0
    meta[COUNT] = 0
    meta[RNG] = 20260417
    meta[EPOCH] = 0
    node[MIN, 0] = BIG
    node[MAX, 0] = -BIG
    meta[ROOT] = _new(key, node, meta, now, procs)


@_jit
def first_time(key: np.ndarray, node: np.ndarray, meta: np.ndarray) -> float:
    """The start of the profile (its first slice)."""
    x = meta[ROOT]
    while node[LEFT, x] != 0:
        x = node[LEFT, x]
    return key[x]


@_jit
def advance(key: np.ndarray, node: np.ndarray, meta: np.ndarray, now: float) -> None:
    """Forget the past: the profile starts at ``now``."""
    if now <= first_time(key, node, meta):
        return
    a, b = _split(key, node, meta, meta[ROOT], now)
    v = _last(node, a)[1]
    if b == 0 or key[_first(node, b)[0]] != now:
        # No slice starts at now: the one holding it now starts there.
        b = _merge(node, meta, _new(key, node, meta, now, v), b)
    _release_tree(node, meta, a)
    meta[ROOT] = b


@_jit
def move(
    key: np.ndarray,
    node: np.ndarray,
    meta: np.ndarray,
    old: float,
    new: float,
    duration: float,
    size: int,
) -> None:
    """Move a reservation of ``size`` processors for ``duration`` from ``old`` to
    ``new`` (``Profile.move``: the same profile as giving the old slot back and
    booking the new one)."""
    add(key, node, meta, old, old + duration, size)
    add(key, node, meta, new, new + duration, -size)


@_jit
def _around(key: np.ndarray, node: np.ndarray, x: int, t: float) -> tuple[int, int, int, int]:
    """In subtree ``x``: the slice holding ``t`` (the last starting at or before
    it) and the last starting before ``t``: their nodes (0 if none) and free
    processors."""
    at_node = 0
    at_value = 0
    before_node = 0
    before_value = 0
    acc = 0
    exact = False
    while x != 0:
        k = key[x]
        if k < t:
            before_node = x
            before_value = node[VAL, x] + acc
            if not exact:
                at_node = x
                at_value = before_value
            acc += node[ADD, x]
            x = node[RIGHT, x]
        else:
            if k == t:  # the slice holding t; the one before is in its left part
                at_node = x
                at_value = node[VAL, x] + acc
                exact = True
            acc += node[ADD, x]
            x = node[LEFT, x]
    return at_node, at_value, before_node, before_value


@_jit
def _insert(key: np.ndarray, node: np.ndarray, meta: np.ndarray, y: int) -> None:
    """Insert the one-node tree ``y`` (no slice starts at its start yet)."""
    x = meta[ROOT]
    hook = 0
    side = LEFT
    depth = 0
    while x != 0 and node[PRI, x] >= node[PRI, y]:
        _push(node, x)
        meta[PATH + depth] = x
        depth += 1
        hook = x
        side = LEFT if key[y] < key[x] else RIGHT
        x = node[side, x]
    a, b = _split(key, node, meta, x, key[y])
    node[LEFT, y] = a
    node[RIGHT, y] = b
    _pull(node, y)
    if hook == 0:
        meta[ROOT] = y
    else:
        node[side, hook] = y
    _pull_path(node, meta, PATH, depth)


@_jit
def _erase(key: np.ndarray, node: np.ndarray, meta: np.ndarray, t: float) -> None:
    """Remove the slice starting at ``t`` (there is one; the slice before it
    takes its place)."""
    x = meta[ROOT]
    hook = 0
    side = LEFT
    depth = 0
    while key[x] != t:
        _push(node, x)
        meta[PATH + depth] = x
        depth += 1
        hook = x
        side = LEFT if t < key[x] else RIGHT
        x = node[side, x]
    _push(node, x)
    y = _merge(node, meta, node[LEFT, x], node[RIGHT, x])
    if hook == 0:
        meta[ROOT] = y
    else:
        node[side, hook] = y
    _release_node(node, meta, x)
    _pull_path(node, meta, PATH, depth)


@_jit
def _range_add(
    key: np.ndarray, node: np.ndarray, meta: np.ndarray, start: float, end: float, delta: int
) -> None:
    """Add ``delta`` to the slices starting in ``[start, end)``, in place: down to
    the first node in the range, then along the two boundaries of the range
    below it, adding ``delta`` lazily to the subtrees between them."""
    x = meta[ROOT]
    depth = 0
    while x != 0:
        _push(node, x)
        meta[PATH + depth] = x
        depth += 1
        k = key[x]
        if k < start:
            x = node[RIGHT, x]
        elif k >= end:
            x = node[LEFT, x]
        else:
            break
    if x != 0:
        node[VAL, x] += delta
        y = node[LEFT, x]  # its left part: starts before key[x] < end
        while y != 0:
            _push(node, y)
            meta[PATH + depth] = y
            depth += 1
            if key[y] >= start:
                node[VAL, y] += delta
                _apply(node, node[RIGHT, y], delta)
                y = node[LEFT, y]
            else:
                y = node[RIGHT, y]
        y = node[RIGHT, x]  # its right part: starts after key[x] >= start
        while y != 0:
            _push(node, y)
            meta[PATH + depth] = y
            depth += 1
            if key[y] < end:
                node[VAL, y] += delta
                _apply(node, node[LEFT, y], delta)
                y = node[RIGHT, y]
            else:
                y = node[LEFT, y]
    _pull_path(node, meta, PATH, depth)


@_jit
def add(
    key: np.ndarray,
    node: np.ndarray,
    meta: np.ndarray,
    start: float,
    end: float,
    delta: int,
) -> None:
    """Add ``delta`` free processors over ``[start, end)`` (clipped to the present),
    then merge the slices that became equal at the two ends (``Profile.release``
    and ``Profile.reserve(merge=True)``), in place: boundaries inserted where
    missing, ``delta`` added along the paths, equal slices at the ends removed.
    (Splitting the tree at both ends and merging it back cost 60 % more.)"""
    first = first_time(key, node, meta)
    if start < first:
        start = first
    if end <= start or delta == 0:
        return
    x, v, _, _ = _around(key, node, meta[ROOT], start)
    if key[x] != start:
        _insert(key, node, meta, _new(key, node, meta, start, v))
    x, v, _, _ = _around(key, node, meta[ROOT], end)
    if key[x] != end:
        _insert(key, node, meta, _new(key, node, meta, end, v))
    _range_add(key, node, meta, start, end, delta)
    x, v, y, w = _around(key, node, meta[ROOT], end)
    if w == v:
        _erase(key, node, meta, end)
    x, v, y, w = _around(key, node, meta[ROOT], start)
    if y != 0 and w == v:
        _erase(key, node, meta, start)


@_jit
def first_fit(key: np.ndarray, node: np.ndarray, meta: np.ndarray, size: int, d: float) -> float:
    """The earliest time at which ``size`` processors stay free for ``d`` seconds
    (``Profile.first_fit``; ``NaN`` if never)."""
    t = first_time(key, node, meta)
    x = _first_at_least(key, node, meta, t, size, False)
    while x != 0:
        start = key[x]
        y = _first_below(key, node, meta, start, size)
        if y == 0 or key[y] >= start + d:
            return start
        x = _first_at_least(key, node, meta, key[y], size, True)
    return NAN


@_jit
def earlier_start(
    key: np.ndarray,
    node: np.ndarray,
    meta: np.ndarray,
    size: int,
    d: float,
    current: float,
    limit: float,
) -> float:
    """``Profile.first_start_before``: the earliest start before ``limit`` of a
    window of ``size`` processors for ``d`` seconds, for a job reserved at
    ``current`` (its own slot counts as free for it: a gap reaching ``current``
    will do); ``NaN`` if none."""
    t = first_time(key, node, meta)
    x = _first_at_least(key, node, meta, t, size, False)
    while x != 0:
        start = key[x]
        if start >= limit:
            return NAN
        reach = start + d
        if current < reach:
            reach = current
        y = _first_below(key, node, meta, start, size)
        if y == 0 or key[y] >= reach:
            return start
        x = _first_at_least(key, node, meta, key[y], size, True)
    return NAN


@_jit
def most_free_before(key: np.ndarray, node: np.ndarray, meta: np.ndarray, t: float) -> int:
    """The most processors free in a slice starting before ``t`` (``-1`` if none)."""
    m = _most_before(key, node, meta[ROOT], 0, t)
    return -1 if m == -BIG else m


@_jit
def free_at(key: np.ndarray, node: np.ndarray, meta: np.ndarray, t: float) -> int:
    """The processors free at the instant ``t`` (at or after the profile's start)."""
    return _around(key, node, meta[ROOT], t)[1]


@_jit
def to_arrays(
    key: np.ndarray, node: np.ndarray, meta: np.ndarray, times: np.ndarray, free: np.ndarray
) -> int:
    """Write the slices in time order into ``times`` and ``free``; return how many."""
    k = 0
    depth = 0
    x = meta[ROOT]
    acc = 0
    while depth > 0 or x != 0:
        while x != 0:
            meta[PATH + depth] = x
            meta[ACCS + depth] = acc
            depth += 1
            acc += node[ADD, x]
            x = node[LEFT, x]
        depth -= 1
        x = meta[PATH + depth]
        acc = meta[ACCS + depth]
        times[k] = key[x]
        free[k] = node[VAL, x] + acc
        k += 1
        acc += node[ADD, x]
        x = node[RIGHT, x]
    return k


class TreeProfile:
    """A profile on the tree kernels, with the methods of
    :class:`schedlab.sim.profile.Profile` that conservative backfilling needs
    (tests, benchmarks)."""

    def __init__(self, procs: int, now: float, capacity: int = 1024) -> None:
        self.procs = procs
        self.key = np.zeros(capacity, dtype=np.float64)
        self.node = np.zeros((7, capacity), dtype=np.int64)
        self.meta = np.zeros(META_SIZE, dtype=np.int64)
        init(self.key, self.node, self.meta, procs, now)

    @classmethod
    def from_slices(cls, procs: int, times: np.ndarray, free: np.ndarray) -> TreeProfile:
        """The profile of the slices ``times`` (increasing starts) and ``free``."""
        profile = cls(procs, float(times[0]), capacity=2 * len(times) + 16)
        load(profile.key, profile.node, profile.meta, times, free)
        return profile

    def _room(self, extra: int) -> None:
        """Grow the node arrays if fewer than ``extra`` nodes are left."""
        cap = self.key.shape[0]
        if int(self.meta[FRESH]) + extra <= cap:
            return
        key = np.zeros(2 * cap, dtype=np.float64)
        key[:cap] = self.key
        node = np.zeros((7, 2 * cap), dtype=np.int64)
        node[:, :cap] = self.node
        self.key, self.node = key, node

    def advance(self, now: float) -> None:
        """Forget the past: the profile starts at ``now``."""
        self._room(1)
        advance(self.key, self.node, self.meta, now)

    def reserve(self, start: float, end: float, size: int) -> None:
        """Take ``size`` processors over ``[start, end)``, merging equal slices."""
        self._room(2)
        add(self.key, self.node, self.meta, start, end, -size)

    def release(self, start: float, end: float, size: int) -> None:
        """Give back ``size`` processors over ``[start, end)`` (clipped to the
        present), merging equal slices."""
        self._room(2)
        add(self.key, self.node, self.meta, start, end, size)

    def first_fit(self, size: int, duration: float) -> float:
        """The earliest start of ``size`` processors for ``duration`` (``NaN``: never)."""
        return first_fit(self.key, self.node, self.meta, size, duration)

    def first_start_before(
        self, size: int, duration: float, current: float, limit: float
    ) -> float | None:
        """The earliest start before ``limit`` for a job reserved at ``current``
        (``Profile.first_start_before``), or ``None``."""
        at = earlier_start(self.key, self.node, self.meta, size, duration, current, limit)
        return None if at != at else at

    def max_free_before(self, t: float) -> int:
        """The most processors free in a slice starting before ``t`` (``-1``: none)."""
        return most_free_before(self.key, self.node, self.meta, t)

    def slices(self) -> list[tuple[float, int]]:
        """The profile as ``(start, free)`` pairs in time order."""
        n = int(self.meta[COUNT])
        times = np.zeros(n, dtype=np.float64)
        free = np.zeros(n, dtype=np.int64)
        to_arrays(self.key, self.node, self.meta, times, free)
        return list(zip(times.tolist(), free.tolist(), strict=True))


@_jit
def compress(
    key: np.ndarray,
    node: np.ndarray,
    meta: np.ndarray,
    queued_at: np.ndarray,
    queued_shape: np.ndarray,
    size: np.ndarray,
    estimate: np.ndarray,
    seen_at: np.ndarray,
    seen_epoch: np.ndarray,
    now: float,
    horizon: float,
    moved: np.ndarray,
) -> int:
    """The compression of conservative backfilling (``compress`` of :mod:`.kernels`)
    on the tree: in priority order, every waiting job whose reservation ``r`` (row
    ``queued_at``, by queue position) is after ``now`` moves to its earliest start
    before ``min(r, horizon)`` (:func:`earlier_start`), if there is one; a move
    widens ``horizon`` to the end of the slot it vacated. ``queued_shape`` gives
    each position's job shape, whose processors and estimate are ``size`` and
    ``estimate`` (the node arrays must have room for four more slices per queue
    position); ``seen_at`` and ``seen_epoch`` (by shape, all ``-1`` at the first
    call) remember refusals (``meta[EPOCH]`` counts the moves). Writes the new
    reservations into ``queued_at`` and the positions moved into ``moved``; returns
    their number.

    Only the screens that cost O(1) or one descent reject a job before its search:
    larger than every slice before the horizon; the same shape and reservation as
    a job refused since the last move; a window that must cover the instant
    ``horizon`` while it is too full."""
    if not horizon > now:
        return 0
    most = most_free_before(key, node, meta, horizon)
    at_horizon = free_at(key, node, meta, horizon)
    epoch = meta[EPOCH] + 1
    count = 0
    for qi in range(queued_at.shape[0]):
        r = queued_at[qi]
        if not r > now:
            continue  # due, stale or new (NaN)
        sh = queued_shape[qi]
        s = size[sh]
        if s > most:
            continue
        if seen_epoch[sh] == epoch and seen_at[sh] == r:
            continue
        seen_epoch[sh] = epoch
        seen_at[sh] = r
        d = estimate[sh]
        if r > horizon:
            if now + d > horizon and at_horizon < s:
                continue
            limit = horizon
        else:
            limit = r
        at = earlier_start(key, node, meta, s, d, r, limit)
        if at != at:
            continue
        move(key, node, meta, r, at, d, s)
        epoch += 1
        queued_at[qi] = at
        moved[count] = qi
        count += 1
        if r + d > horizon:
            horizon = r + d
            at_horizon = free_at(key, node, meta, horizon)
        most = most_free_before(key, node, meta, horizon)
    meta[EPOCH] = epoch + 1
    return count


@_jit
def load(
    key: np.ndarray, node: np.ndarray, meta: np.ndarray, times: np.ndarray, free: np.ndarray
) -> None:
    """Start the profile of the slices ``times`` (increasing starts) and ``free``."""
    init(key, node, meta, free[0], times[0])
    for i in range(1, times.shape[0]):
        meta[ROOT] = _merge(node, meta, meta[ROOT], _new(key, node, meta, times[i], free[i]))
