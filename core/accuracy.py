"""Estimate accuracy and the accuracy classes of the Penalty Scheduling Policy (PSP).

The *estimate accuracy* of a job is its actual run time divided by its requested
(estimated) time, clipped to ``[0, 1]``: 1 is a perfect estimate, values near 0 mean
the user asked for far more time than the job used. It is unknown (NaN) when either
time is unknown or the requested time is not positive. A job that ran longer than it
asked for (possible when the machine does not kill overrunning jobs) gets 1.

PSP (../shared/specs/psp-paper.txt, Table 1) puts users in five classes by the mean
accuracy of their recent jobs: ``a1 = [0, 0.2)``, ``a2 = [0.2, 0.4)``, ``a3 = [0.4,
0.6)``, ``a4 = [0.6, 0.8)``, ``a5 = [0.8, 1.0]``. The class edges are a parameter
(:data:`PSP_EDGES` by default); with ``k`` edges there are ``k + 1`` classes, named
``a1`` .. ``a{k+1}``, and class ``i`` has priority ``i`` in PSP.

Everything here is vectorised over numpy arrays; the simulator's PSP policy and the
metrics engine (``compute_metrics(..., by="accuracy-class")``) share these helpers.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from .errors import UsageError

#: The class edges of the PSP paper: a1 < 0.2 <= a2 < 0.4 <= a3 < 0.6 <= a4 < 0.8 <= a5.
PSP_EDGES: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8)
#: The PSP paper's window: a user's accuracy is the mean over the last 10 jobs.
PSP_WINDOW = 10
#: Label of the group of users (or jobs) whose accuracy is unknown.
UNKNOWN_CLASS = "unknown"
#: Accuracies are rounded to this many decimals before being classed, so that a mean
#: such as (0.5 + 0.7) / 2 = 0.6 lands in a4 and not, by rounding error, in a3.
CLASS_DECIMALS = 9


def check_edges(edges: Sequence[float | str]) -> tuple[float, ...]:
    """Validate class edges: strictly increasing numbers inside ``(0, 1)``.

    Raises :class:`~schedlab.errors.UsageError` with a one-line reason otherwise.
    """
    try:
        values = tuple(float(e) for e in edges)
    except (TypeError, ValueError):
        raise UsageError(f"accuracy class edges must be numbers, got {edges!r}") from None
    if not values:
        raise UsageError("accuracy class edges: give at least one edge")
    if any(not 0.0 < e < 1.0 for e in values) or any(b <= a for a, b in itertools.pairwise(values)):
        raise UsageError(
            f"accuracy class edges must be strictly increasing and inside (0, 1), "
            f"got {', '.join(map(str, values))}"
        )
    return values


def parse_edges(text: str | Sequence[float]) -> tuple[float, ...]:
    """Edges from ``"0.2/0.4/0.6/0.8"`` (``/``, ``,``, ``;`` or blank separated:
    :func:`schedlab.list_items`) or a sequence."""
    if isinstance(text, str):
        from .plugin_types import list_items

        return check_edges(list_items(text))
    return check_edges(text)


def class_labels(edges: Sequence[float] = PSP_EDGES) -> list[str]:
    """The class names for ``edges``: ``["a1", ..., "a{len(edges)+1}"]``."""
    return [f"a{i}" for i in range(1, len(edges) + 2)]


def class_intervals(edges: Sequence[float] = PSP_EDGES) -> list[str]:
    """Human-readable intervals of the classes, e.g. ``"[0.2, 0.4)"``; the last is closed."""
    out = [f"[{lo:g}, {hi:g})" for lo, hi in itertools.pairwise([0.0, *edges, 1.0])]
    out[-1] = out[-1][:-1] + "]"
    return out


def estimate_accuracy(run_time: np.ndarray, requested_time: np.ndarray) -> np.ndarray:
    """Per-job estimate accuracy: ``run / requested`` clipped to ``[0, 1]``.

    NaN where either is unknown (NaN) or ``requested <= 0``.
    """
    run = np.asarray(run_time, dtype=np.float64)
    req = np.asarray(requested_time, dtype=np.float64)
    valid = (req > 0) & ~np.isnan(run)  # NaN compares False, so unknown req is excluded
    out = np.full(run.shape, np.nan)
    with np.errstate(over="ignore"):  # a tiny request gives inf, clipped to 1
        np.divide(run, req, out=out, where=valid)
    np.minimum(out, 1.0, out=out)
    return np.maximum(out, 0.0, out=out)  # NaN stays NaN


def accuracy_class_index(accuracy: np.ndarray, edges: Sequence[float] = PSP_EDGES) -> np.ndarray:
    """Class number (1 .. len(edges)+1) of each accuracy; 0 where the accuracy is NaN.

    A value equal to an edge belongs to the upper class (intervals are closed on the
    left), and 1.0 belongs to the last class.
    """
    acc = np.round(np.asarray(accuracy, dtype=np.float64), CLASS_DECIMALS)
    index = np.searchsorted(np.asarray(edges, dtype=np.float64), acc, side="right") + 1
    index = np.where(np.isnan(acc), 0, index)
    return index.astype(np.int64)


def accuracy_class(accuracy: float, edges: Sequence[float] = PSP_EDGES) -> str:
    """The class label (``"a1"`` ..) of one accuracy value, or ``"unknown"`` for NaN."""
    index = int(accuracy_class_index(np.array([accuracy], dtype=np.float64), edges)[0])
    return UNKNOWN_CLASS if index == 0 else f"a{index}"


def accuracy_priority(accuracy: float, edges: Sequence[float] = PSP_EDGES) -> int:
    """PSP priority (1 .. len(edges)+1) of a user's accuracy; 0 when unknown (NaN)."""
    return int(accuracy_class_index(np.array([accuracy], dtype=np.float64), edges)[0])


def last_window_mean(
    keys: np.ndarray,
    order: np.ndarray,
    values: np.ndarray,
    window: int = PSP_WINDOW,
) -> tuple[np.ndarray, np.ndarray]:
    """Mean of ``values`` over the last ``window`` entries (by ``order``) of each key.

    ``keys`` are the group keys (e.g. user ids; NaN keys are ignored), ``order`` the
    sort key within a group (e.g. completion time; ties keep array order) and
    ``values`` the numbers to average (NaN entries are ignored, so the window holds
    the last ``window`` entries that have a value). Returns ``(unique_keys, means)``
    sorted by key; a key whose entries are all NaN does not appear.
    """
    if window < 1:
        raise UsageError(f"window must be at least 1, got {window}")
    keys = np.asarray(keys, dtype=np.float64)
    order = np.asarray(order, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    usable = ~(np.isnan(keys) | np.isnan(order) | np.isnan(values))
    k, o, v = keys[usable], order[usable], values[usable]
    if len(k) == 0:
        return np.empty(0), np.empty(0)
    position = np.arange(len(k))
    sort = np.lexsort((position, o, k))
    k, v = k[sort], v[sort]
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    ends = np.r_[starts[1:], len(k)]
    sizes = ends - starts
    group = np.repeat(np.arange(len(starts)), sizes)
    rank_from_end = np.repeat(ends, sizes) - np.arange(len(k)) - 1
    keep = rank_from_end < window
    sums = np.bincount(group[keep], weights=v[keep], minlength=len(starts))
    counts = np.bincount(group[keep], minlength=len(starts))
    return k[starts], sums / counts


def user_accuracy(
    user_id: np.ndarray,
    completion_time: np.ndarray,
    accuracy: np.ndarray,
    window: int = PSP_WINDOW,
) -> tuple[np.ndarray, np.ndarray]:
    """Each user's accuracy as PSP defines it at the end of a schedule: the mean
    accuracy of the user's last ``window`` jobs by completion time (jobs whose
    accuracy or completion time is unknown are skipped).

    Returns ``(user_ids, accuracies)`` sorted by user id; users with no usable job
    are absent.
    """
    return last_window_mean(user_id, completion_time, accuracy, window)


def user_accuracy_classes(
    user_id: np.ndarray,
    completion_time: np.ndarray,
    accuracy: np.ndarray,
    window: int = PSP_WINDOW,
    edges: Sequence[float] = PSP_EDGES,
) -> np.ndarray:
    """Per *job*: the class number (1 ..) of the job's user, as in the PSP paper's
    Table 3 ("the class where he belongs at the end of the simulation"), computed by
    :func:`user_accuracy`; 0 for jobs of users with no usable job (or no user id)."""
    users = np.asarray(user_id, dtype=np.float64)
    ids, acc = user_accuracy(users, completion_time, accuracy, window)
    per_user = accuracy_class_index(acc, edges)
    out = np.zeros(len(users), dtype=np.int64)
    if len(ids):
        pos = np.searchsorted(ids, users)
        pos_clipped = np.minimum(pos, len(ids) - 1)
        found = ~np.isnan(users) & (ids[pos_clipped] == users)
        out[found] = per_user[pos_clipped[found]]
    return out


# Public (plugin toolkit, ``schedlab.compat.PLUGIN_TOOLKIT``); the other names may change.
__all__ = [
    "CLASS_DECIMALS",
    "PSP_EDGES",
    "accuracy_class",
    "accuracy_class_index",
    "class_labels",
    "estimate_accuracy",
    "parse_edges",
    "user_accuracy",
    "user_accuracy_classes",
]
