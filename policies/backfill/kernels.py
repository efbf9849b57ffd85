"""Conservative backfilling compiled with numba (optional, ``schedlab[fast]``).

The availability profile, the wait queue's priority order and the compression of
:class:`schedlab.sim.engine.Engine` as array kernels. They compute exactly what the
Python implementation computes (:class:`schedlab.sim.profile.Profile` and
``Engine._compress_reference``: same reservations, moved in the same order, tested
in ``tests/test_sim_conservative_compiled.py``); only the speed differs. The engine
uses them for long runs when numba is installed (see ``Engine._use_compiled``);
``SCHEDLAB_JIT=0`` turns them off.

Layout: the profile is ``times`` (slice starts) and ``free`` (free processors from
that start to the next), the first ``meta[0]`` entries used; the wait queue is
``queue[:meta[1]]``, job indices in priority order; ``size``, ``estimate`` and
``reservation`` are per job (``NaN`` reservation: none). The profile's arrays
never grow: it has at most two real boundaries per running or waiting job plus one;
moves leave equal neighbouring slices in place (merged once the profile has doubled,
or when the arrays are nearly full).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
from numba import config as numba_config
from numba import njit
from numba.core import cgutils, types
from numba.core.cpu import CPUTargetOptions
from numba.extending import intrinsic
from schedlab.errors import SimulationError

NAN = math.nan

_F = TypeVar("_F", bound=Callable[..., Any])


def _compiler(**options: Any) -> Callable[[_F], _F]:
    """numba's ``njit(**options)``, typed as what it is to a caller: a compiled
    function takes and returns what its Python source does."""
    return cast("Callable[[_F], _F]", njit(**options))


# The kernels allocate nothing, so they run without numba's reference counting
# (``_nrt=False``): with it, each call passing arrays cost two atomic updates per
# array, a third of RICC's time. The helpers of the hot loops are also inlined.
# (``_nrt`` is a private option: a numba without it runs the same kernels, slower.)
_NO_REFCOUNTS = {"_nrt": False} if hasattr(CPUTargetOptions, "_nrt") else {}
_jit = _compiler(cache=True, nogil=True, **_NO_REFCOUNTS)
_inline = _compiler(cache=True, nogil=True, inline="always", **_NO_REFCOUNTS)


if TYPE_CHECKING:  # as the kernels call them (numba's stubs would want the typing
    # context, which numba passes itself, as a first argument)

    def _shift(array: np.ndarray, dst: int, src: int, count: int) -> None:
        """``array[dst:dst + count] = array[src:src + count]`` (overlap allowed)."""

elif numba_config.DISABLE_JIT:  # NUMBA_DISABLE_JIT=1: every kernel runs as plain Python

    def _shift(array, dst, src, count):
        """``array[dst:dst + count] = array[src:src + count]`` (overlap allowed)."""
        array[dst : dst + count] = array[src : src + count].copy()

else:

    @intrinsic
    def _shift(typingctx, array, dst, src, count):
        """``array[dst:dst + count] = array[src:src + count]`` as one ``memmove`` (the
        slices may overlap; numba's slice assignment copies through a temporary)."""
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


@_inline
def _bisect_left(times: np.ndarray, n: int, t: float, lo: int) -> int:
    hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
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
        mid = (lo + hi) >> 1
        if t < times[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@_inline
def _slice_before(times: np.ndarray, n: int, t: float, hint: int) -> int:
    """The last slice starting before ``t > times[0]``, searched from ``hint`` (the
    previous answer: reservations visited in priority order mostly increase)."""
    if hint >= n:
        hint = n - 1
    if times[hint] < t:
        step = 1
        lo = hint
        hi = hint + 1
        while hi < n and times[hi] < t:
            lo = hi
            hi += step
            step += step
        if hi > n:
            hi = n
        return _bisect_left(times, hi, t, lo) - 1
    return _bisect_left(times, hint, t, 0) - 1


@_inline
def _delete(times: np.ndarray, free: np.ndarray, meta: np.ndarray, i: int) -> None:
    n = meta[0] - 1
    _shift(times, i, i + 1, n - i)
    _shift(free, i, i + 1, n - i)
    meta[0] = n


@_inline
def _boundary(times: np.ndarray, free: np.ndarray, meta: np.ndarray, t: float, i: int) -> int:
    """Slice ``i`` is the first starting at ``t`` or later: make it start at ``t``
    (split off, with the free processors of the slice before, if needed)."""
    n = meta[0]
    if i == n or times[i] != t:
        _shift(times, i + 1, i, n - i)
        _shift(free, i + 1, i, n - i)
        times[i] = t
        free[i] = free[i - 1]
        meta[0] = n + 1
    return i


@_inline
def _split(times: np.ndarray, free: np.ndarray, meta: np.ndarray, t: float, lo: int) -> int:
    """The index of the slice starting at ``t >= times[0]`` (split off if needed)."""
    return _boundary(times, free, meta, t, _bisect_left(times, meta[0], t, lo))


@_jit
def advance(times: np.ndarray, free: np.ndarray, meta: np.ndarray, now: float) -> None:
    """Forget the past: the profile starts at ``now``."""
    if now <= times[0]:
        return
    n = meta[0]
    i = _bisect_right(times, n, now) - 1
    if i > 0:
        _shift(times, 0, i, n - i)
        _shift(free, 0, i, n - i)
        meta[0] = n - i
    times[0] = now


@_jit
def add(
    times: np.ndarray,
    free: np.ndarray,
    meta: np.ndarray,
    start: float,
    end: float,
    delta: int,
    merge: bool,
) -> None:
    """Add ``delta`` free processors over ``[start, end)`` (clipped to the present);
    with ``merge``, merge slices that become equal at the two boundaries."""
    if start < times[0]:
        start = times[0]
    if end <= start or delta == 0:
        return
    if meta[0] + 4 > times.shape[0]:
        _compact(times, free, meta)  # full of equal slices: merge them first
        meta[4] = meta[0]
    i = _split(times, free, meta, start, 0)
    k = _split(times, free, meta, end, i)
    for x in range(i, k):
        free[x] += delta
    if merge:
        if k < meta[0] and free[k] == free[k - 1]:
            _delete(times, free, meta, k)
        if i > 0 and free[i] == free[i - 1]:
            _delete(times, free, meta, i)


@_jit
def finish(
    times: np.ndarray, free: np.ndarray, meta: np.ndarray, now: float, end: float, size: int
) -> None:
    """A job ends at ``now``, before its estimated ``end``: forget the past and give
    back its ``size`` processors over ``[now, end)``."""
    advance(times, free, meta, now)
    add(times, free, meta, now, end, size, True)


@_inline
def _split_near(times: np.ndarray, free: np.ndarray, meta: np.ndarray, t: float, hint: int) -> int:
    """:func:`_split`, searching from ``hint``."""
    n = meta[0]
    i = _slice_before(times, n, t, hint) + 1
    return _boundary(times, free, meta, t, i)


@_inline
def _split_from(times: np.ndarray, free: np.ndarray, meta: np.ndarray, t: float, k: int) -> int:
    """:func:`_split` for ``t`` a few slices after slice ``k`` (at or before it):
    scanned one by one (bisected after 16)."""
    n = meta[0]
    stop = k + 16
    while k < n and times[k] < t:
        k += 1
        if k == stop:
            k = _bisect_left(times, n, t, k)
            break
    return _boundary(times, free, meta, t, k)


@_inline
def _move_near(
    times: np.ndarray,
    free: np.ndarray,
    meta: np.ndarray,
    old: float,
    new: float,
    duration: float,
    size: int,
    hint: int,
) -> tuple[int, int, int, int]:
    """Move a reservation of ``size`` processors for ``duration`` from ``old`` to
    ``new < old`` (the free processors of ``Profile.move``). Its four boundaries
    are found by galloping forward from ``hint`` (a slice at or before ``new``), but
    for the end of a window that overlaps its old one, a whole window further on.
    Slices are not merged: in a chain of moves (each job taking the slot the
    previous one left) the boundaries are then already there, and :func:`_compact`
    merges equal slices once at the end of the compression. Returns the slices that
    gained processors, ``[c, e)`` (from ``max(old, new_end)`` to ``old_end``), the
    fewest free left in a slice that lost some and the fewest free a slice that
    gained some had before."""
    new_end = new + duration
    old_end = old + duration
    if new_end <= old:
        a = _split_near(times, free, meta, new, hint)
        b = _split_near(times, free, meta, new_end, a)
        taken = _take(free, a, b, size)
        c = _split_near(times, free, meta, old, b)
        e = _split_near(times, free, meta, old_end, c)
    else:  # (mostly: moves are short) the slices of new, old and old_end are near
        a = _split_from(times, free, meta, new, hint)
        b = _split_from(times, free, meta, old, a)
        taken = _take(free, a, b, size)
        c = _split(times, free, meta, new_end, b)  # far (a whole window): bisect
        e = _split_from(times, free, meta, old_end, c)
    had = free[c]
    for x in range(c, e):
        v = free[x]
        free[x] = v + size
        if v < had:
            had = v
    return c, e, taken, had


@_inline
def _take(free: np.ndarray, a: int, b: int, size: int) -> int:
    """Take ``size`` processors from the slices ``[a, b)``; return the fewest free
    left in one."""
    least = free[a] - size
    for x in range(a, b):
        v = free[x] - size
        free[x] = v
        if v < least:
            least = v
    return least


@_jit
def _compact(times: np.ndarray, free: np.ndarray, meta: np.ndarray) -> None:
    """Merge every slice into the previous one when both have as many processors
    free (searches see the same gaps either way; the profile stays short)."""
    n = meta[0]
    w = 1
    for x in range(1, n):
        if free[x] != free[w - 1]:
            times[w] = times[x]
            free[w] = free[x]
            w += 1
    meta[0] = w


@_jit
def first_fit(times: np.ndarray, free: np.ndarray, meta: np.ndarray, size: int, d: float) -> float:
    """The earliest time at which ``size`` processors stay free for ``d`` seconds
    (``NaN`` if never: cannot happen for a job that fits the machine)."""
    n = meta[0]
    return _fit_until(times, free, n, size, d, times[0], n - 1)


@_jit
def place(
    times: np.ndarray,
    free: np.ndarray,
    meta: np.ndarray,
    reservation: np.ndarray,
    j: int,
    s: int,
    d: float,
) -> float:
    """Reserve the earliest slot of ``s`` processors for ``d`` seconds for job ``j``
    and return its start (``NaN``: none)."""
    at = first_fit(times, free, meta, s, d)
    if at == at:
        add(times, free, meta, at, at + d, -s, True)
    reservation[j] = at
    return at


@_jit
def due(
    queue: np.ndarray, meta: np.ndarray, reservation: np.ndarray, now: float, out: np.ndarray
) -> int:
    """Write the waiting jobs whose reservation is ``now`` into ``out`` (priority
    order) and return how many; ``-1 - count`` if some reservation already passed
    (a stale one)."""
    count = 0
    past = False
    for qi in range(meta[1]):
        j = queue[qi]
        r = reservation[j]
        if r == now:
            out[count] = j
            count += 1
        elif r < now:
            past = True
    return -1 - count if past else count


@_jit
def next_due(queue: np.ndarray, meta: np.ndarray, reservation: np.ndarray, now: float) -> float:
    """The earliest reservation after ``now`` (infinity if none)."""
    best = math.inf
    for qi in range(meta[1]):
        r = reservation[queue[qi]]
        if now < r < best:
            best = r
    return best


# Scans of the profile test ``CHUNK`` slices at a time: a loop of fixed length with
# no early exit, over unsigned indices (no negative-index wraparound), compiles to
# vector instructions (about four times faster on long windows).
CHUNK = 16


@_inline
def _count_below(free: np.ndarray, k: int, size: int) -> int:
    """How many of the ``CHUNK`` slices from ``k`` have fewer than ``size`` free."""
    base = np.uint64(k)
    count = 0
    for u in range(CHUNK):
        count += free[base + np.uint64(u)] < size
    return count


@_inline
def _same(queued_at: np.ndarray, queued_shape: np.ndarray, k: int, r: float, sh: int) -> int:
    """How many of the ``CHUNK`` queue positions from ``k`` hold a job of shape
    ``sh`` reserved at ``r``."""
    base = np.uint64(k)
    count = 0
    for u in range(CHUNK):
        x = base + np.uint64(u)
        count += (queued_shape[x] == sh) & (queued_at[x] == r)
    return count


@_inline
def _gap_end(times: np.ndarray, free: np.ndarray, n: int, size: int, k: int, end: float) -> int:
    """The first slice from ``k`` that starts at ``end`` or later or has fewer than
    ``size`` free (``n`` if none)."""
    while k + CHUNK <= n and times[k + CHUNK - 1] < end and _count_below(free, k, size) == 0:
        k += CHUNK
    while k < n and times[k] < end and free[k] >= size:
        k += 1
    return k


@_inline
def _gap_start(times: np.ndarray, free: np.ndarray, n: int, size: int, k: int, stop: float) -> int:
    """The first slice from ``k`` with ``size`` free, if it starts before ``stop``
    (``n`` if none)."""
    while k + CHUNK <= n and times[k + CHUNK - 1] < stop and _count_below(free, k, size) == CHUNK:
        k += CHUNK
    while k < n and times[k] < stop:
        if free[k] >= size:
            return k
        k += 1
    return n


@_inline
def _refit(
    times: np.ndarray,
    free: np.ndarray,
    n: int,
    size: int,
    d: float,
    fit: float,
    lo: float,
    hi: float,
) -> float:
    """``Profile.refit``: the first fit of ``size`` processors for ``d`` after free
    processors were added over ``[lo, hi)`` only, given the first fit ``fit`` before."""
    k = _bisect_right(times, n, lo) - 1
    if k < 0:
        k = 0
    stop = hi if hi < fit else fit
    if free[k] >= size:
        # The first candidate is the start of the gap around lo; its slices up to k
        # have room already: check the window from there on.
        g = k
        while g >= CHUNK and _count_below(free, g - CHUNK, size) == 0:
            g -= CHUNK
        while g > 0 and free[g - 1] >= size:
            g -= 1
        start = times[g]
        if start >= stop:
            return fit
        k = _gap_end(times, free, n, size, k + 1, start + d)
        if k == n or times[k] >= start + d:
            return start
        k += 1
    while True:
        k = _gap_start(times, free, n, size, k, stop)
        if k == n:
            return fit
        start = times[k]  # < stop <= fit
        k = _gap_end(times, free, n, size, k + 1, start + d)
        if k == n or times[k] >= start + d:
            return start
        k += 1  # too full: the next gap starts after it


@_inline
def _fit_until(
    times: np.ndarray, free: np.ndarray, n: int, size: int, d: float, bound: float, last: int
) -> float:
    """The first window of ``size`` processors for ``d`` seconds that starts at a
    slice up to ``last``, given that none starts before ``bound`` (``NaN`` if none).
    A gap already open at ``bound`` began before it: its windows are not valid."""
    k = last  # the first slice from bound (<= times[last]): mostly a few back
    while k > 0 and times[k - 1] >= bound:
        k -= 1
        if last - k == 16:
            k = _bisect_left(times, k, bound, 0)
            break
    if k > 0 and free[k - 1] >= size:
        k = _gap_end(times, free, last + 1, size, k, math.inf) + 1
    stop = math.inf if last + 1 >= n else times[last + 1]
    while True:
        k = _gap_start(times, free, n, size, k, stop)
        if k == n:
            return NAN
        start = times[k]
        k = _gap_end(times, free, n, size, k + 1, start + d)
        if k == n or times[k] >= start + d:
            return start
        k += 1


# The per-job arrays of a run, packed in two matrices (one float, one int: a numba
# call from Python costs per argument); their rows:
# rows indexed by job (RESERVATION, SHAPE ...), by job shape (SIZE and ESTIMATE: a
# shape is a size and an estimate; SEEN_AT, SEEN_EPOCH, SLOT) or by kept first fit
# (FIT*: one per job shape whose first fit is kept, ``meta[5]`` of them; contiguous,
# so the upkeep after each move is one loop the compiler vectorises).
ESTIMATE, RESERVATION, SEEN_AT, FIT, FIT_LO, FIT_HI, FIT_ESTIMATE = range(7)
(SIZE, SHAPE, QUEUE, MOVED, OUT, NEW, SEEN_EPOCH, POSITION, SLOT) = range(9)
FIT_EXACT, FIT_SIZE, FIT_SHAPE, FIT_USED = range(9, 13)
# and by queue position: the reservation and shape of ``queue[qi]`` (read in order,
# not gathered, by the scans of the queue)
QUEUED_AT = 7
QUEUED_SHAPE = 13
DUE_AT = 14  # the queue positions of the jobs due (``meta[7]`` of them; -1: not kept)
# and the early ends told since the last step, applied at the next (one call fewer
# from Python per job)
FINISH_NOW, FINISH_END, FINISH_SIZE = 8, 9, 15
# and one number: ``floats[CARRY, 0]``, the end of the last slot a move vacated
# in the last compression (the next one offers it to the jobs before the mover)
CARRY = 10
N_FLOAT_ROWS = 11


@_jit
def compress(
    times: np.ndarray,
    free: np.ndarray,
    meta: np.ndarray,
    floats: np.ndarray,
    ints: np.ndarray,
    now: float,
    horizon: float,
) -> int:
    """Compression (``Engine._compress_reference``): in priority order, every waiting
    job whose reservation ``r`` is after ``now`` moves to its earliest start before
    ``min(r, horizon)`` (its own slot counting as free for it), if there is one; a
    move widens ``horizon`` to the end of the slot it vacated. The jobs before a
    mover are offered the slot it vacated at the next compression: ``horizon``
    starts at least at ``floats[CARRY, 0]``, the end of the last slot vacated in
    the last one (so this is the textbook compression, see
    ``FastCompression._compress``). The jobs moved are written to the row
    ``MOVED`` in order; returns their number.

    As ``Engine._compress``: jobs that cannot move are rejected by necessary
    conditions before any search (larger than every slice before the horizon; the
    slice just before ``r`` too full while no gap before it can last ``d``; the
    instant ``horizon`` too full for a window that must cover it), and the earliest
    start of a ``d``-second window of ``s`` processors is kept per job shape
    (row ``SHAPE``; a shape is a size and an estimate) across moves, in the slot
    ``slot[shape] - 1`` (``slot[shape] == 0``: none) of the ``FIT*`` rows: ``fits[c]`` is the first
    fit when ``exact[c]``, else a bound (no window starts before it), searched
    forward only as far as a job needs. A move that takes processors from an exact
    fit's window leaves a bound; one that gives processors back before it widens
    the fit's pending range (``fit_lo``, ``fit_hi``), searched (``Profile.refit``)
    when the shape is next needed."""
    queue = ints[QUEUE]
    size = ints[SIZE]
    estimate = floats[ESTIMATE]
    reservation = floats[RESERVATION]
    queued_at = floats[QUEUED_AT]
    queued_shape = ints[QUEUED_SHAPE]
    slot = ints[SLOT]
    fits = floats[FIT]
    fit_lo = floats[FIT_LO]
    fit_hi = floats[FIT_HI]
    fit_estimate = floats[FIT_ESTIMATE]
    exact = ints[FIT_EXACT]
    fit_size = ints[FIT_SIZE]
    fit_shape = ints[FIT_SHAPE]
    used = ints[FIT_USED]
    seen_at = floats[SEEN_AT]
    seen_epoch = ints[SEEN_EPOCH]
    moved = ints[MOVED]
    n = meta[0]
    if floats[CARRY, 0] > horizon:
        horizon = floats[CARRY, 0]
    carry = -math.inf  # the end of the last slot a move of this pass vacated
    ih = _bisect_left(times, n, horizon, 0)
    most = -1
    for x in range(ih):
        if free[x] > most:
            most = free[x]
    count = 0
    # The first fits kept from earlier passes (see `forget` and the hooks in
    # `_taken` / `_given`); one in the past only says no window starts before now.
    n_cached = meta[5]
    pass_id = meta[6] + 1
    meta[6] = pass_id
    for c in range(n_cached):
        if fits[c] < times[0]:
            fits[c] = times[0]
            exact[c] = 0
    at_horizon = free[_bisect_right(times, n, horizon) - 1]  # free at the instant horizon
    i = 0
    # Jobs of one shape and one reservation get the same answer while nothing moves
    # (job arrays): `seen_epoch[shape]` / `seen_at[shape]` remember the last one
    # examined; `epoch` counts moves across passes.
    epoch = meta[3] + 1
    n_queue = meta[1]
    qi = -1
    last_shape = -1  # the shape and reservation of the last job that could not move
    last_at = NAN
    while qi + 1 < n_queue:
        qi += 1
        r = queued_at[qi]
        sh = queued_shape[qi]
        if sh == last_shape and r == last_at:
            # The same as the job before it, which could not move: so are the
            # rest of its run (a job array), skipped 16 at a time.
            k = qi + 1
            while k + CHUNK <= n_queue and _same(queued_at, queued_shape, k, r, sh) == CHUNK:
                k += CHUNK
            while k < n_queue and queued_shape[k] == sh and queued_at[k] == r:
                k += 1
            qi = k - 1
            continue
        last_shape = sh
        last_at = r
        if not r > now:
            continue  # due, stale or new (NaN): handled by the caller
        s = size[sh]
        if s > most:
            continue
        if seen_epoch[sh] == epoch and seen_at[sh] == r:
            continue  # a job of this shape and reservation could not move, nor can this
        seen_epoch[sh] = epoch  # (until it moves)
        seen_at[sh] = r
        d = estimate[sh]
        reach = now + d
        if r > horizon:
            if reach > horizon and at_horizon < s:
                continue  # every window covers the instant horizon, which is full
            limit = horizon
        else:
            limit = r
        n = meta[0]
        i = _slice_before(times, n, r, i)  # the slice just before r
        before = times[i]
        open_before = free[i] >= s
        if not open_before and reach > before:
            continue  # every gap before r ends by `before`: too short, not reaching r
        # The earliest start is the first gap (run of slices with s free) that
        # begins before limit and lasts d (`fit`), or the gap that reaches r.
        fc = slot[sh] - 1
        if fc < 0:
            fc = n_cached
            n_cached += 1
            slot[sh] = fc + 1
            fit_shape[fc] = sh
            fit_size[fc] = s
            fit_estimate[fc] = d
            fits[fc] = times[0]  # nothing known yet: no window starts before now
            exact[fc] = 0
            fit_lo[fc] = math.inf
            fit_hi[fc] = -math.inf
        elif fit_lo[fc] < math.inf:
            found = _refit(times, free, n, s, d, fits[fc], fit_lo[fc], fit_hi[fc])
            if found < fits[fc]:
                fits[fc] = found
                exact[fc] = 1
            fit_lo[fc] = math.inf
            fit_hi[fc] = -math.inf
        used[fc] = pass_id
        fit = fits[fc]
        if not exact[fc] and fit <= before:
            # Only a bound so far: search the windows starting up to `before`.
            found = _fit_until(times, free, n, s, d, fit, i)
            if found == found:
                fit = found
                fits[fc] = fit
                exact[fc] = 1
            else:
                fit = times[i + 1] if i + 1 < n else math.inf
                fits[fc] = fit  # no window starts before the slice after `before`
        if fit <= before:
            at = fit
            # Its slice: moves are mostly short, so look a few slices back from r.
            at_slice = i
            while at_slice > 0 and times[at_slice] > at and i - at_slice < 16:
                at_slice -= 1
            if times[at_slice] > at:
                at_slice = 0
        elif open_before:
            k = i
            while k > 0 and free[k - 1] >= s:
                k -= 1
            at = times[k]
            at_slice = k
        else:
            continue
        if not at < limit:
            continue
        # The identical jobs right after j (a job array: same shape, same
        # reservation) would each take `at` too while it has room: move them with
        # j (their searches see the same profile before r; the slots they vacate
        # lie after it).
        bundle = 1
        if qi + 1 < n_queue and queued_shape[qi + 1] == sh and queued_at[qi + 1] == r:
            stop = at + d
            if stop > r:
                stop = r
            x = _slice_before(times, n, at, at_slice) + 1  # the slice starting at `at`
            room = free[x]
            while x + 1 < n and times[x + 1] < stop:
                x += 1
                if free[x] < room:
                    room = free[x]
            room //= s
            while (
                bundle < room
                and qi + bundle < n_queue
                and queued_shape[qi + bundle] == sh
                and queued_at[qi + bundle] == r
            ):
                bundle += 1
        if meta[0] + 8 > times.shape[0]:
            _compact(times, free, meta)  # full of equal slices: merge them first
            meta[4] = meta[0]
            at_slice = 0
        gained, vacated, taken, had = _move_near(times, free, meta, r, at, d, s * bundle, at_slice)
        epoch += 1  # the profile changed: earlier rejections no longer hold
        for b in range(bundle):
            reservation[queue[qi + b]] = at
            queued_at[qi + b] = at
            moved[count] = queue[qi + b]
            count += 1
        qi += bundle - 1
        last_shape = -1
        # Keep the first fits the move cannot have changed: it took processors over
        # [at, min(at + d, r)) and gave some back over [max(r, at + d), r + d).
        n = meta[0]
        took_end = at + d
        if took_end > r:
            took_end = r
        gave = at + d
        if gave < r:
            gave = r
        # A window of s processors opens only where a slice crossed s: one that
        # gained processors (had < s, now richest >= s at most), and closes only
        # where one that lost some fell below s (taken < s at least).
        richest = 0
        for x in range(gained, vacated):  # the slices of [gave, r + d)
            if free[x] > richest:
                richest = free[x]
        if richest > most:
            most = richest
        top = r + d
        if top > carry:
            carry = top
        for c in range(n_cached):
            f = fits[c]
            fd = fit_estimate[c]
            # A window that lost room: still no window starts before it.
            sc = fit_size[c]
            e = exact[c] & ~((at < f + fd) & (took_end > f) & (taken < sc))
            exact[c] = e
            # Processors given back over [gave, r + d) can open windows that start
            # before f: any that reaches gave if f is a bound, only ones ending
            # before f if it is the first fit (its own window is free). Search
            # again (over every range given back) when next needed.
            grow = (gave < (f if e else f + fd)) & (had < sc) & (sc <= richest)
            lo = fit_lo[c]
            fit_lo[c] = gave if grow & (gave < lo) else lo
            hi = fit_hi[c]
            fit_hi[c] = top if grow & (top > hi) else hi
        # `most` stays an upper bound of the free processors before the horizon:
        # only slices in [gave, r + d) gained processors, and the horizon grows to
        # the end of the vacated slot.
        if r + d > horizon:
            for x in range(_bisect_right(times, n, horizon) - 1, gained):
                if free[x] > most:
                    most = free[x]
            horizon = r + d
            at_horizon = free[vacated]  # the slice starting at r + d
        # (else the instant horizon is after both ranges the move changed)
    # Keep the fits of the shapes this pass needed (the next passes likely need
    # them again); forget the others, so the hooks stay cheap.
    kept = 0
    for c in range(n_cached):
        sh = fit_shape[c]
        if used[c] == pass_id:
            if kept < c:
                fits[kept] = fits[c]
                fit_lo[kept] = fit_lo[c]
                fit_hi[kept] = fit_hi[c]
                fit_estimate[kept] = fit_estimate[c]
                exact[kept] = exact[c]
                fit_size[kept] = fit_size[c]
                fit_shape[kept] = sh
                used[kept] = pass_id
                slot[sh] = kept + 1
            kept += 1
        else:
            slot[sh] = 0
    meta[5] = kept
    meta[3] = epoch + 1
    floats[CARRY, 0] = carry
    if count and meta[0] > 2 * meta[4] + 64:
        # Merge equal slices only once the profile has doubled since the last
        # time: the boundaries left in place are where the next compressions move
        # reservations to (each insertion shifts the rest of the profile).
        _compact(times, free, meta)
        meta[4] = meta[0]
    return count


@_jit
def step(
    times: np.ndarray,
    free: np.ndarray,
    meta: np.ndarray,
    floats: np.ndarray,
    ints: np.ndarray,
    now: float,
    horizon: float,
    stale: bool,
    n_new: int,
    earliest: float,
    n_finished: int,
    drop: bool,
) -> tuple[int, float]:
    """One scheduling pass without stale reservations: the new jobs (row ``NEW``,
    ``n_new`` of them, priority order) enter the queue at their positions (row
    ``POSITION``, increasing); advance the profile to ``now``, compress if capacity
    was freed before ``horizon`` (``meta[2]`` jobs moved, listed in row ``MOVED``),
    reserve the earliest slot for each new job, write the jobs due now into row
    ``OUT`` (priority order); return how many are due and the earliest reservation after
    now. ``earliest`` is the earliest reservation in the queue before the pass (the
    last pass's answer: jobs move only earlier, so unless one moved or was placed at
    ``now``, none is due and the queue need not be scanned). Returns ``-2`` if a new
    job found no slot (an internal error), ``-1`` (after the advance only) if
    ``stale``: the caller knows a reservation is stale (a job due while its
    processors were still held; every reservation gets a pass at its time, so none
    passes unnoticed) and takes over. First, as :func:`settle`, the ``n_finished``
    early ends told since the last step, and the started jobs leave the queue if
    ``drop``.
    """
    settle(times, free, meta, floats, ints, n_finished, drop)
    queue = ints[QUEUE]
    new = ints[NEW]
    position = ints[POSITION]
    reservation = floats[RESERVATION]
    queued_at = floats[QUEUED_AT]
    queued_shape = ints[QUEUED_SHAPE]
    shape = ints[SHAPE]
    out = ints[OUT]
    meta[7] = -1  # (the queue changes)
    for x in range(n_new):
        pos = position[x]
        n = meta[1]
        _shift_queue(ints, floats, pos + 1, pos, n - pos)
        queue[pos] = new[x]
        queued_at[pos] = NAN
        queued_shape[pos] = shape[new[x]]
        meta[1] = n + 1
    advance(times, free, meta, now)
    n_queue = meta[1]
    if stale:
        return -1, math.inf
    meta[2] = 0
    if horizon > now and n_queue > 0:
        moved = ints[MOVED]
        meta[2] = compress(times, free, meta, floats, ints, now, horizon)
        for x in range(meta[2]):
            if reservation[moved[x]] < earliest:
                earliest = reservation[moved[x]]
    for x in range(n_new):
        at = packed_place(times, free, meta, floats, ints, new[x])
        if at != reservation[new[x]]:
            return -2, math.inf  # no slot (NaN): cannot happen for a job that fits
        queued_at[position[x]] = at
        if at < earliest:
            earliest = at
    if earliest > now:
        return 0, earliest
    # How many are due and the earliest reservation after now (a loop the compiler
    # vectorises), then the jobs due, in order.
    count = 0
    best = math.inf
    for x in range(n_queue):
        r = queued_at[np.uint64(x)]
        count += r == now
        best = min(best, r if r > now else math.inf)
    due_at = ints[DUE_AT]
    found = 0
    qi = 0
    while found < count:
        if queued_at[qi] == now:
            out[found] = queue[qi]
            due_at[found] = qi
            found += 1
        qi += 1
    meta[7] = count
    return count, best


@_jit
def _taken(
    meta: np.ndarray, floats: np.ndarray, ints: np.ndarray, start: float, end: float, left: int
) -> None:
    """Processors were taken over ``[start, end)``, leaving at least ``left`` free
    in each slice: a kept first fit whose window lost room is now only a bound (no
    window starts before it)."""
    fits = floats[FIT]
    fit_estimate = floats[FIT_ESTIMATE]
    exact = ints[FIT_EXACT]
    fit_size = ints[FIT_SIZE]
    for c in range(meta[5]):
        f = fits[c]
        lost = (start < f + fit_estimate[c]) & (end > f) & (left < fit_size[c])
        exact[c] = exact[c] & ~lost


@_jit
def _given(
    meta: np.ndarray,
    floats: np.ndarray,
    ints: np.ndarray,
    start: float,
    end: float,
    had: int,
    richest: int,
) -> None:
    """Processors were given back over ``[start, end)``, where a slice had at least
    ``had`` free and now has at most ``richest``: kept fits of the sizes in between
    that may come earlier widen their pending range (searched when next needed)."""
    fits = floats[FIT]
    fit_lo = floats[FIT_LO]
    fit_hi = floats[FIT_HI]
    fit_estimate = floats[FIT_ESTIMATE]
    exact = ints[FIT_EXACT]
    fit_size = ints[FIT_SIZE]
    for c in range(meta[5]):
        f = fits[c]
        sc = fit_size[c]
        grow = (start < (f if exact[c] else f + fit_estimate[c])) & (had < sc) & (sc <= richest)
        lo = fit_lo[c]
        fit_lo[c] = start if grow & (start < lo) else lo
        hi = fit_hi[c]
        fit_hi[c] = end if grow & (end > hi) else hi


@_jit
def packed_finish(
    times: np.ndarray,
    free: np.ndarray,
    meta: np.ndarray,
    floats: np.ndarray,
    ints: np.ndarray,
    now: float,
    end: float,
    size: int,
) -> None:
    """:func:`finish`, and the kept first fits told of the processors given back."""
    finish(times, free, meta, now, end, size)
    richest = 0
    least = free[0]
    x = 0  # the profile starts at now
    while x < meta[0] and times[x] < end:
        if free[x] > richest:
            richest = free[x]
        if free[x] < least:
            least = free[x]
        x += 1
    _given(meta, floats, ints, now, end, least - size, richest)


@_jit
def packed_place(
    times: np.ndarray,
    free: np.ndarray,
    meta: np.ndarray,
    floats: np.ndarray,
    ints: np.ndarray,
    j: int,
) -> float:
    """:func:`place` on the packed arrays (the kept first fits told of it)."""
    sh = ints[SHAPE][j]
    d = floats[ESTIMATE][sh]
    at = place(times, free, meta, floats[RESERVATION], j, ints[SIZE][sh], d)
    if at == at:
        end = at + d
        x = _bisect_right(times, meta[0], at) - 1  # (merged into the slice before?)
        left = free[x]
        while x < meta[0] and times[x] < end:
            if free[x] < left:
                left = free[x]
            x += 1
        _taken(meta, floats, ints, at, end, left)
    return at


@_jit
def packed_forget(meta: np.ndarray, floats: np.ndarray, ints: np.ndarray) -> None:
    """Forget every kept first fit (the profile changed in ways not tracked)."""
    slot = ints[SLOT]
    fit_shape = ints[FIT_SHAPE]
    for c in range(meta[5]):
        slot[fit_shape[c]] = 0
    meta[5] = 0


@_jit
def packed_due(meta: np.ndarray, floats: np.ndarray, ints: np.ndarray, now: float) -> int:
    """:func:`due` on the packed arrays."""
    return due(ints[QUEUE], meta, floats[RESERVATION], now, ints[OUT])


@_jit
def packed_next_due(meta: np.ndarray, floats: np.ndarray, ints: np.ndarray, now: float) -> float:
    """:func:`next_due` on the packed arrays."""
    return next_due(ints[QUEUE], meta, floats[RESERVATION], now)


@_jit
def packed_drop_started(meta: np.ndarray, floats: np.ndarray, ints: np.ndarray) -> None:
    """Remove from the queue the jobs that started (their reservation is ``NaN``)."""
    queue = ints[QUEUE]
    reservation = floats[RESERVATION]
    queued_at = floats[QUEUED_AT]
    queued_shape = ints[QUEUED_SHAPE]
    n = meta[1]
    if meta[7] < 0:  # where the due jobs are is not known: look at every job
        kept = 0
        for qi in range(n):
            j = queue[qi]
            if reservation[j] == reservation[j]:
                queue[kept] = j
                queued_at[kept] = queued_at[qi]
                queued_shape[kept] = queued_shape[qi]
                kept += 1
        meta[1] = kept
        return
    # Close the gaps the started jobs leave, one stretch at a time.
    due_at = ints[DUE_AT]
    to = -1
    last = -1
    for x in range(meta[7]):
        qi = due_at[x]
        j = queue[qi]
        if reservation[j] == reservation[j]:
            continue  # due but still waiting (stale)
        if to < 0:
            to = qi
        else:
            to = _shift_queue(ints, floats, to, last + 1, qi - last - 1)
        last = qi
    if to >= 0:
        meta[1] = _shift_queue(ints, floats, to, last + 1, n - last - 1)
    meta[7] = -1


@_inline
def _shift_queue(ints: np.ndarray, floats: np.ndarray, to: int, start: int, count: int) -> int:
    """Move the ``count`` queue positions from ``start`` to ``to`` (with their
    reservations and shapes; the ranges may overlap); return the position after
    them."""
    _shift(ints[QUEUE], to, start, count)
    _shift(floats[QUEUED_AT], to, start, count)
    _shift(ints[QUEUED_SHAPE], to, start, count)
    return to + count


@_jit
def settle(
    times: np.ndarray,
    free: np.ndarray,
    meta: np.ndarray,
    floats: np.ndarray,
    ints: np.ndarray,
    n_finished: int,
    drop: bool,
) -> None:
    """Apply the ``n_finished`` early ends written to the rows ``FINISH_*``
    (:func:`packed_finish`) and, if ``drop``, :func:`packed_drop_started`."""
    finish_now = floats[FINISH_NOW]
    finish_end = floats[FINISH_END]
    finish_size = ints[FINISH_SIZE]
    for x in range(n_finished):
        packed_finish(times, free, meta, floats, ints, finish_now[x], finish_end[x], finish_size[x])
    if drop:
        packed_drop_started(meta, floats, ints)


@_jit
def packed_resync(meta: np.ndarray, floats: np.ndarray, ints: np.ndarray) -> None:
    """Copy the reservations and shapes of the queue into queue order."""
    queue = ints[QUEUE]
    reservation = floats[RESERVATION]
    shape = ints[SHAPE]
    queued_at = floats[QUEUED_AT]
    queued_shape = ints[QUEUED_SHAPE]
    for qi in range(meta[1]):
        j = queue[qi]
        queued_at[qi] = reservation[j]
        queued_shape[qi] = shape[j]
    meta[7] = -1


# --------------------------------------------------------------- whole runs
# (schedlab.sim.whole_run: the engine's event loop around the pass, compiled)

#: :func:`conservative_run`'s status: done; jobs left waiting with no event
#: left; a new job found no slot; a due job did not fit (a stale reservation:
#: the whole run declines, the engine runs its own loop).
RUN_DONE, RUN_STUCK, RUN_NO_SLOT, RUN_STALE = range(4)


@_inline
def _before(t: float, j: int, u: float, k: int) -> bool:
    """``(t, j) < (u, k)``."""
    return t < u or (t == u and j < k)


@_inline
def _heap_push(heap_t: np.ndarray, heap_j: np.ndarray, n: int, t: float, j: int) -> int:
    """Push ``(t, j)`` on the heap of ``n`` entries; return its new length."""
    x = n
    while x > 0:
        parent = (x - 1) >> 1
        if not _before(t, j, heap_t[parent], heap_j[parent]):
            break
        heap_t[x] = heap_t[parent]
        heap_j[x] = heap_j[parent]
        x = parent
    heap_t[x] = t
    heap_j[x] = j
    return n + 1


@_inline
def _heap_pop(heap_t: np.ndarray, heap_j: np.ndarray, n: int) -> int:
    """Remove the smallest ``(t, j)`` from the heap of ``n`` entries; return its
    new length."""
    n -= 1
    t = heap_t[n]
    j = heap_j[n]
    x = 0
    while True:
        c = 2 * x + 1
        if c >= n:
            break
        if c + 1 < n and _before(heap_t[c + 1], heap_j[c + 1], heap_t[c], heap_j[c]):
            c += 1
        if not _before(heap_t[c], heap_j[c], t, j):
            break
        heap_t[x] = heap_t[c]
        heap_j[x] = heap_j[c]
        x = c
    if n > 0:
        heap_t[x] = t
        heap_j[x] = j
    return n


@_inline
def _rank(queue: np.ndarray, n: int, key: np.ndarray, j: int) -> int:
    """How many of the ``n`` jobs of ``queue`` (sorted by ``(key, job)``) come
    before ``j``."""
    k = key[j]
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
        q = queue[mid]
        if _before(key[q], q, k, j):
            lo = mid + 1
        else:
            hi = mid
    return lo


@_jit
def conservative_run(
    times: np.ndarray,
    free: np.ndarray,
    meta: np.ndarray,
    floats: np.ndarray,
    ints: np.ndarray,
    submit: np.ndarray,
    run_time: np.ndarray,
    job_size: np.ndarray,
    job_estimate: np.ndarray,
    key: np.ndarray,
    procs: int,
    start: np.ndarray,
    heap_t: np.ndarray,
    heap_j: np.ndarray,
) -> tuple[int, int]:
    """A whole simulation on a single pool (:mod:`schedlab.sim.whole_run`): the
    engine's event loop (:mod:`schedlab.sim.engine`) around the pass of
    :class:`~.compiled.CompiledConservativePass` (:func:`step`), for jobs
    submitted in job order (no dependencies) with numeric keys known before the
    run (``key``) and no job outliving its estimate (``job_estimate``), so that
    no reservation goes stale. The rows ``SHAPE`` (by job), ``SIZE`` and
    ``ESTIMATE`` (by shape) are set before the call.

    At each instant (the earliest of the next end, the next submission and the
    earliest reservation ahead, the strategy's ``next_wakeup``): the jobs ending
    then, in job order (an end before the job's estimated end gives its
    processors back up to it, and widens the horizon of the compression); the
    arrivals, in job order; then one pass, counted at every instant (the
    strategy's ``idle_passes``), even one only a timer brought (a pass with no
    arrival, no early end and no reservation due changes nothing, as
    :meth:`~.compiled.CompiledConservativePass.schedule` returns at once). A job
    started with a run time of 0 ends at the same instant: a second round.

    Fills ``start[j]``; ``heap_t`` and ``heap_j`` (``n + 1`` long) hold the heap
    of the running jobs' ends, ``(time, job)``. Returns ``(passes, status)``
    (:data:`RUN_DONE` ...)."""
    n = submit.shape[0]
    queue = ints[QUEUE]
    new = ints[NEW]
    position = ints[POSITION]
    out = ints[OUT]
    reservation = floats[RESERVATION]
    finish_now = floats[FINISH_NOW]
    finish_end = floats[FINISH_END]
    finish_size = ints[FINISH_SIZE]
    n_heap = 0
    avail = procs  # processors really free
    si = 0
    passes = 0
    waiting = 0
    horizon = -math.inf
    ahead = math.inf  # the earliest reservation ahead (the strategy's next_due)
    n_finished = 0  # early ends not yet given to the profile
    drop = False  # jobs started since the last step
    while True:
        now = math.inf
        if n_heap:
            now = heap_t[0]
        if si < n and submit[si] < now:
            now = submit[si]
        if ahead < now:
            now = ahead
        if now == math.inf:
            break
        while n_heap and heap_t[0] == now:
            j = heap_j[0]
            n_heap = _heap_pop(heap_t, heap_j, n_heap)
            s = job_size[j]
            avail += s
            e = start[j] + job_estimate[j]
            if now < e:
                finish_now[n_finished] = now
                finish_end[n_finished] = e
                finish_size[n_finished] = s
                n_finished += 1
                if e > horizon:
                    horizon = e
        n_new = 0
        while si < n and submit[si] == now:
            # Into the arrivals in priority order (they come in job order: at
            # the end for equal keys).
            x = n_new
            k = key[si]
            while x > 0 and k < key[new[x - 1]]:
                x -= 1
            if x < n_new:
                _shift(new, x + 1, x, n_new - x)
            new[x] = si
            n_new += 1
            si += 1
        passes += 1
        if n_new == 0 and horizon <= now and now < ahead:
            horizon = -math.inf
            continue  # nothing to compress, place or start
        settle(times, free, meta, floats, ints, n_finished, drop)
        n_finished = 0
        drop = False
        n_queue = meta[1]
        for x in range(n_new):
            position[x] = _rank(queue, n_queue, key, new[x]) + x
        waiting += n_new
        count, ahead = step(
            times, free, meta, floats, ints, now, horizon, False, n_new, ahead, 0, False
        )
        if count < 0:
            return passes, RUN_NO_SLOT
        horizon = -math.inf
        for x in range(count):  # priority order
            j = out[x]
            s = job_size[j]
            if s > avail:
                return passes, RUN_STALE
            reservation[j] = NAN
            start[j] = now
            avail -= s
            waiting -= 1
            n_heap = _heap_push(heap_t, heap_j, n_heap, now + run_time[j], j)
            drop = True
    if waiting:
        return passes, RUN_STUCK
    return passes, RUN_DONE


class CompiledConservative:
    """The arrays of one conservative run and thin wrappers over the kernels."""

    def __init__(self, n_jobs: int, procs: int, now: float, sizes: list[int]) -> None:
        # Two slice boundaries per running or waiting job, and up to four more per
        # move during one compression (merged at its end).
        cap = 6 * n_jobs + 16
        self.times = np.zeros(cap, dtype=np.float64)
        self.free = np.zeros(cap, dtype=np.int64)
        self.times[0] = now
        self.free[0] = procs
        #: [slices in the profile, jobs in the queue, jobs moved by the last step,
        #: the compression's move counter, slices after the last merge, job shapes
        #: whose first fit is kept, compressions so far, jobs due whose queue
        #: positions are kept (-1: none)]
        self.meta = np.array([1, 0, 0, 0, 1, 0, 0, -1], dtype=np.int64)
        self.floats = np.zeros((N_FLOAT_ROWS, n_jobs + 1), dtype=np.float64)
        self.floats[CARRY, 0] = -math.inf
        self.ints = np.zeros((16, n_jobs + 1), dtype=np.int64)
        self.estimate = self.floats[ESTIMATE]
        self.reservation = self.floats[RESERVATION]
        self.reservation[:] = NAN
        #: Size and estimate of each job shape (rows by shape: a row by job would
        #: hold the same values again, 16 bytes a job).
        self.size = self.ints[SIZE]
        #: The sizes as a list (cheaper to index from Python than the array).
        self.sizes = sizes if isinstance(sizes, list) else [int(x) for x in sizes]
        self.shape = self.ints[SHAPE]
        self.queue = self.ints[QUEUE]
        self.new = self.ints[NEW]
        self.position = self.ints[POSITION]
        self.out = self.ints[OUT]
        self.moved_jobs = self.ints[MOVED]
        self.finish_now = self.floats[FINISH_NOW]
        self.finish_end = self.floats[FINISH_END]
        self.finish_size = self.ints[FINISH_SIZE]
        self.finished = 0  # early ends told since the last step
        self.dropping = False  # jobs started since the last step
        self.unsynced = False  # reservations or queue changed outside the kernels
        # Job shapes (processors, estimate), numbered as jobs arrive.
        self.shape_ids: dict[tuple[int, float], int] = {}

    def arrive(self, j: int, estimate: float) -> None:
        """Job ``j`` arrives with an estimate of ``estimate`` seconds (it enters the
        queue at the next :meth:`step`)."""
        size = self.sizes[j]
        key = (size, estimate)
        ids = self.shape_ids
        sh = ids.get(key)
        if sh is None:
            sh = ids[key] = len(ids)
            self.size[sh] = size
            self.estimate[sh] = estimate
        self.shape[j] = sh

    def step(
        self,
        now: float,
        horizon: float,
        stale: bool,
        new: list[int],
        positions: list[int],
        earliest: float = -math.inf,
    ) -> tuple[int, float]:
        """The common scheduling pass (see :func:`step`), after the new jobs ``new``
        (priority order) enter the queue at ``positions``: returns how many jobs are
        due now (:meth:`due_now` lists them), or ``-1`` if reservations are stale,
        and the earliest reservation ahead. ``earliest``: the earliest reservation in
        the queue before the pass, if known (the last pass's answer)."""
        n_new = len(new)
        if n_new == 1:
            self.new[0] = new[0]
            self.position[0] = positions[0]
        elif n_new:
            self.new[:n_new] = new
            self.position[:n_new] = positions
        if self.unsynced:
            self.resync()
        count, ahead = step(
            self.times,
            self.free,
            self.meta,
            self.floats,
            self.ints,
            now,
            horizon,
            stale,
            n_new,
            earliest,
            self.finished,
            self.dropping,
        )
        self.finished = 0
        self.dropping = False
        if count < -1:
            raise SimulationError("internal error: a new job found no slot in the profile")
        return count, ahead

    def due_now(self, count: int) -> list[int]:
        """The jobs due after the last :meth:`step`, in priority order."""
        return self.out[:count].tolist()

    def settle(self) -> None:
        """Apply the early ends and starts told since the last step (the next step
        does it otherwise)."""
        if self.finished or self.dropping:
            settle(
                self.times,
                self.free,
                self.meta,
                self.floats,
                self.ints,
                self.finished,
                self.dropping,
            )
            self.finished = 0
            self.dropping = False

    def advance(self, now: float) -> None:
        """Forget the profile before ``now``."""
        self.settle()
        advance(self.times, self.free, self.meta, now)

    def finish(self, now: float, end: float, size: int) -> None:
        """A job ends at ``now``, before its estimated ``end`` (applied at the next
        step or :meth:`settle`)."""
        k = self.finished
        self.finish_now[k] = now
        self.finish_end[k] = end
        self.finish_size[k] = size
        self.finished = k + 1

    def forget(self) -> None:
        """Forget the first fits kept between passes."""
        self.settle()
        packed_forget(self.meta, self.floats, self.ints)

    def release(self, start: float, end: float, size: int) -> None:
        """Give back ``size`` processors over ``[start, end)`` (the kept first fits
        are forgotten: the stale path rebuilds every reservation)."""
        self.forget()
        add(self.times, self.free, self.meta, start, end, size, True)

    def place(self, j: int) -> float:
        """Reserve the earliest slot for job ``j``; return its start."""
        self.settle()
        at = packed_place(self.times, self.free, self.meta, self.floats, self.ints, j)
        if at != at:
            raise SimulationError(f"internal error: no slot for job {j} in the profile")
        self.unsynced = True
        return at

    def drop_started(self) -> None:
        """The jobs started since the last step (reservation set to ``NaN``) leave
        the queue (at the next step or :meth:`settle`)."""
        self.dropping = True

    def set_queue(self, jobs: list[int]) -> None:
        """A new priority order (after a policy re-sorted the queue)."""
        self.settle()
        self.queue[: len(jobs)] = jobs
        self.meta[1] = len(jobs)
        self.unsynced = True

    def resync(self) -> None:
        """Copy the reservations and shapes of the queue into queue order, which
        the kernels read (after :meth:`place` or :meth:`set_queue`; the next step or
        compression does it)."""
        self.settle()
        packed_resync(self.meta, self.floats, self.ints)
        self.unsynced = False

    def due(self, now: float) -> tuple[list[int], bool]:
        """The waiting jobs due now (priority order), and whether one is stale."""
        self.settle()
        count = packed_due(self.meta, self.floats, self.ints, now)
        stale = count < 0
        if stale:
            count = -1 - count
        return self.out[:count].tolist(), stale

    def next_due(self, now: float) -> float:
        """The earliest reservation after ``now``."""
        self.settle()
        return packed_next_due(self.meta, self.floats, self.ints, now)

    def compress(self, now: float, horizon: float) -> int:
        """Run the compression; return how many jobs moved (:meth:`moved` lists them)."""
        self.settle()
        if self.unsynced:
            self.resync()
        moved = compress(self.times, self.free, self.meta, self.floats, self.ints, now, horizon)
        self.meta[2] = moved
        return moved

    def moved(self) -> list[int]:
        """The jobs the last compression moved, in order."""
        return self.moved_jobs[: int(self.meta[2])].tolist()

    def slices(self) -> list[tuple[float, int]]:
        """The profile as ``(start, free)`` pairs (tests, debugging)."""
        self.settle()
        n = int(self.meta[0])
        return list(zip(self.times[:n].tolist(), self.free[:n].tolist(), strict=True))


_warm = False
_warm_every = False


def warm_up(every: bool = False) -> None:
    """Load (or compile) the machine code of the kernels a run needs, once per
    process: :func:`step`, which the common pass calls (with everything it calls
    compiled in). With ``every``, also the kernels of the stale-reservation pass
    (re-planning, due jobs, releases), which a run calls only when a job runs past
    its estimate (no kill, or corrected predictions): loading each costs a few
    milliseconds, so a run otherwise loads them when it first needs them."""
    global _warm, _warm_every
    if not _warm:
        kernel = CompiledConservative(3, 2, 0.0, [1, 2, 1])
        kernel.arrive(0, 5.0)
        kernel.arrive(1, 3.0)
        kernel.step(0.0, -math.inf, False, [0, 1], [0, 1])
        kernel.arrive(2, 1.0)
        kernel.step(0.0, -math.inf, False, [2], [2])
        kernel.finish(1.0, 5.0, 1)
        kernel.step(1.0, 5.0, False, [], [])
        # and the whole run's loop (a run that may never take it pays a few ms)
        kernel = CompiledConservative(2, 2, -math.inf, [])
        kernel.shape[:2] = (0, 1)
        kernel.size[:2] = (2, 1)
        kernel.estimate[:2] = (5.0, 3.0)
        conservative_run(
            kernel.times,
            kernel.free,
            kernel.meta,
            kernel.floats,
            kernel.ints,
            np.zeros(2),
            np.array([1.0, 0.0]),
            np.array([2, 1], dtype=np.int64),
            np.array([5.0, 3.0]),
            np.zeros(2),
            2,
            np.full(2, NAN),
            np.empty(3),
            np.empty(3, dtype=np.int64),
        )
        _warm = True
    if every and not _warm_every:
        kernel = CompiledConservative(3, 2, 0.0, [1, 2, 1])
        kernel.arrive(0, 5.0)
        kernel.arrive(1, 3.0)
        kernel.step(0.0, -math.inf, False, [0, 1], [0, 1])
        kernel.finish(1.0, 2.0, 1)
        kernel.settle()
        kernel.due(1.0)
        kernel.next_due(1.0)
        kernel.compress(1.0, 5.0)
        kernel.place(0)
        kernel.release(1.0, 2.0, 1)
        kernel.advance(2.0)
        kernel.reservation[0] = NAN
        kernel.drop_started()
        kernel.set_queue([1])
        _warm_every = True
