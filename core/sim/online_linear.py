"""The arithmetic of an online linear run-time model
(:class:`~schedlab.sim.whole_run.OnlineLinearModel`): the history features, the
prediction and the learning step, as plain loops.

An estimator making these predictions job by job (in the engine's loop) and a
strategy making them inside a compiled whole run must compute exactly the same
floating-point numbers, or the two runs drift apart. So both call these
functions: the estimator on Python lists and floats, a compiled whole run on
numpy arrays after compiling the same source (numba's ``njit``). Each function
is self-contained (it calls no other function of this module, only ``math``'s
``log1p``, ``expm1`` and ``sqrt``, the C library's in both cases), every sum is
a loop in index order from ``0.0`` (no numpy reduction, whose order and
vectorisation differ, no Python ``sum``), and every argument is indexed, never
sliced, so any sequence of floats will do. The module's constants they read
(:data:`MAX_PREDICTION`) are frozen into the compiled code.

* :func:`log_target`: a run time as the model sees it, ``log1p(run) / scale``;
  :func:`log_targets`: the same for every job of a run at once (made once, before
  the run, and read at each job's end by both).
* :func:`ring_push`, :func:`history_features`: a user's last ``window``
  targets, kept in a ring (``ring``, the next slot ``nxt`` and the ``count`` of
  entries), and the four history features they give.
* :func:`linear_prediction`: a job's predicted run time from its features
  (finite: at most :data:`MAX_PREDICTION`).
* :func:`adagrad_step`: one learning step on a batch of completed jobs.

A compiled user of these functions must be recompiled when this file changes
(numba's cache of a function tracks only the file that defines it): the
compiled EASY kernel records this file's hash and does not cache its whole run
when the hash differs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: How many history features follow a job's static features (see
#: :func:`history_features`).
HISTORY_FEATURES = 4
#: The longest prediction (seconds): 1e12 s, the longest time schedlab's readers
#: accept. A model gone astray (a large ``rate``, run times far from its
#: training) may put ``scale * p`` beyond what ``expm1`` can hold; its prediction
#: is then this ceiling (capped in log space, before ``expm1``), the same number
#: in Python and compiled: always finite.
MAX_PREDICTION = 1e12
#: ``log1p(MAX_PREDICTION)``: the largest ``scale * p`` predicted as is.
LOG_MAX_PREDICTION = math.log1p(MAX_PREDICTION)


def log_target(run: float, scale: float) -> float:
    """A run time (seconds, ``>= 0``) as the model predicts it:
    ``log1p(run) / scale``."""
    return math.log1p(run) / scale


def log_targets(run_times: Any, scale: float) -> np.ndarray:
    """:func:`log_target` of every run time (float64; ``NaN`` where the run time is
    unknown: ``NaN`` or negative), each the very number :func:`log_target` gives
    (the C library's ``log1p`` per element, not numpy's vectorised one, which may
    differ in the last bit)."""
    run = np.asarray(run_times, dtype=np.float64)
    known = run >= 0
    logs = np.fromiter(map(math.log1p, np.where(known, run, 0.0).tolist()), np.float64, len(run))
    targets = logs / scale
    targets[~known] = np.nan
    return targets


def ring_push(ring: Any, nxt: int, count: int, y: float) -> tuple[int, int]:
    """Put ``y`` in the ring of ``len(ring)`` slots (the oldest entry leaves
    when it is full); returns the new ``(nxt, count)``."""
    window = len(ring)
    ring[nxt] = y
    nxt += 1
    if nxt == window:
        nxt = 0
    if count < window:
        count += 1
    return nxt, count


def history_features(ring: Any, nxt: int, count: int) -> tuple[float, float, float, float]:
    """The history features of a user's ring (see :func:`ring_push`): the newest
    entry, the mean of the newest two (``(newest + previous) / 2``; the newest
    alone when there is one), the mean of all of them (summed oldest first) and
    ``1.0``; four zeros for an empty ring."""
    if count == 0:
        return 0.0, 0.0, 0.0, 0.0
    window = len(ring)
    newest = nxt - 1
    if newest < 0:
        newest += window
    last = ring[newest]
    last2 = last
    if count > 1:
        previous = newest - 1
        if previous < 0:
            previous += window
        last2 = (last + ring[previous]) / 2
    first = nxt - count
    if first < 0:
        first += window
    total = 0.0
    for k in range(count):
        x = first + k
        if x >= window:
            x -= window
        total += ring[x]
    return last, last2, total / count, 1.0


def linear_prediction(w: Any, x: Any, scale: float, requested: float) -> float:
    """The predicted run time of a job of features ``x`` under weights ``w``
    (``len(w)`` of each): ``p = w . x`` (summed in index order), then
    ``expm1(scale * p)`` (``0.0`` when ``p <= 0``; :data:`MAX_PREDICTION` when
    ``scale * p`` exceeds :data:`LOG_MAX_PREDICTION`), never more than
    ``requested`` (``NaN``: unknown, no bound)."""
    p = 0.0
    for k in range(len(w)):
        p += w[k] * x[k]
    if p > 0:
        z = scale * p
        guess = MAX_PREDICTION if z > LOG_MAX_PREDICTION else math.expm1(z)
    else:
        guess = 0.0
    if requested == requested and requested < guess:
        return requested
    return guess


def adagrad_step(
    x: Any,
    rows: Any,
    y: Any,
    m: int,
    w: Any,
    squares: Any,
    grad: Any,
    rate: float,
    under_weight: float,
    first: bool,
) -> None:
    """One AdaGrad step on ``m`` completed jobs: job ``rows[i]`` has features
    ``x[rows[i]]`` and target ``y[i]``. Updates the weights ``w`` and the sums
    of squared gradients ``squares`` in place (``grad``: scratch, ``len(w)``).

    With ``first`` (no step yet), ``w[0]`` (the constant's weight) first becomes
    the mean target ``(y[0] + ... + y[m - 1]) / m``. Then, for each job, the
    error ``e = w . x - y`` weighs ``under_weight`` times more when negative (an
    under-prediction); the gradient is ``g[k] = (sum of e * x[k]) / m``;
    ``squares[k] += g[k] ** 2`` and ``w[k] -= rate * g[k] / (sqrt(squares[k]) +
    1e-12)``."""
    d = len(w)
    if first:
        total = 0.0
        for i in range(m):
            total += y[i]
        w[0] = total / m
    for k in range(d):
        grad[k] = 0.0
    for i in range(m):
        xr = x[rows[i]]
        p = 0.0
        for k in range(d):
            p += w[k] * xr[k]
        err = p - y[i]
        if err < 0:
            err = err * under_weight
        for k in range(d):
            grad[k] += err * xr[k]
    for k in range(d):
        g = grad[k] / m
        squares[k] += g * g
        w[k] -= rate * g / (math.sqrt(squares[k]) + 1e-12)


__all__ = [
    "HISTORY_FEATURES",
    "adagrad_step",
    "history_features",
    "linear_prediction",
    "log_target",
    "log_targets",
    "ring_push",
]
