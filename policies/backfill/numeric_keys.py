"""Priority keys as the compiled passes compare them: float64, exact for plain
numbers (integers within 2**53, floats that are not NaN)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

#: Numeric keys are compared as float64: integers beyond 2**53 are not exact.
EXACT_INT = 2**53


def copy_numeric_keys(key_of: Sequence[Any], jobs: list[int], out: np.ndarray) -> bool:
    """Copy the keys of ``jobs`` into ``out[job]``; ``False`` (stopping there) at
    the first key that is not a plain number exact in float64."""
    for j in jobs:
        k = key_of[j]
        kind = type(k)
        if (kind is float and k == k) or (kind is int and -EXACT_INT < k < EXACT_INT):
            out[j] = k
        elif isinstance(k, (np.floating, np.integer)) and k == k and abs(k) < EXACT_INT:
            out[j] = float(k)
        else:
            return False
    return True


def new_keys_numeric(state: Any, rebuild: bool, out: np.ndarray) -> bool:
    """Whether the keys a compiled pass takes in at this pass are all plain
    numbers (:func:`copy_numeric_keys` into the scratch ``out``): the whole queue's
    when it was re-sorted (``rebuild``), else the new arrivals'. The passes of
    several partitions ask this once, before any of them runs, so that a key they
    cannot compare sends the whole run to the Python pass at once."""
    jobs = [j for _, j in state.queue] if rebuild else state.new_jobs
    return copy_numeric_keys(state.key_of, jobs, out)


__all__ = ["EXACT_INT", "copy_numeric_keys", "new_keys_numeric"]
