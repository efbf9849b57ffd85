"""``multifactor``: a Slurm-style weighted sum of priority factors.

    priority = weight_age * age + weight_size * size
             + weight_fairshare * fairshare + weight_queue * queue
             + weight_psp * psp

Every factor lies in [0, 1]:

``age``
    ``min(wait, max_age) / max_age`` (Slurm's PriorityMaxAge, default 7 days).
``size``
    ``processors / machine`` (``favor_small=false``, Slurm's default) or
    ``1 - (processors - 1) / machine`` (``favor_small=true``).
``fairshare``
    Slurm's classic formula ``2 ** (-usage / shares)``: ``usage`` is the user's
    share of all decayed usage so far (processor-seconds of completed jobs, halved
    every ``half_life`` seconds, default 7 days; 0 = no decay) and ``shares`` is
    ``1 / users`` (equal shares among the users seen so far). Usage is charged when a
    job completes (a simplification: Slurm charges running jobs continuously).
``queue``
    The job's queue priority from ``queue_priorities`` (``"1:10,2:5"``: queue 1 has
    priority 10 ...), divided by the largest; 0 for unlisted queues.

``psp``
    The job's user's PSP accuracy class (Rocchetti, Iturriaga and Nesmachnow; see
    :mod:`schedlab.policies.psp`) divided by the number of classes: class ``k`` of
    ``n`` (``k`` = 1 .. ``n``, a1 the least accurate) gives ``k / n``, so a5 of five
    classes gives 1 and a1 gives 0.2. The class is the one the ``psp`` policy
    computes (mean accuracy of the user's last ``psp_window`` completed jobs, class
    edges ``psp_edges``, ``psp_new_user_class`` without history). The PSP paper says
    "We included our code in the Multifactor implementation of SLURM Scheduler
    Priority Plugin API" and "The priority is a number between 1 and 5"; it names no
    other factor and no weights. PSP as one factor next to others is schedlab's
    hypothesis of how the paper ran it. ``weight_psp=0`` (the default) leaves the
    factor out entirely.

The options carry Slurm's ``slurm.conf`` names in schedlab's spelling:
``weight_age`` is PriorityWeightAge, ``max_age`` PriorityMaxAge, ``weight_size``
PriorityWeightJobSize, ``weight_fairshare`` PriorityWeightFairshare, ``half_life``
PriorityDecayHalfLife, ``weight_queue`` PriorityWeightPartition and
``favor_small`` PriorityFavorSmall (https://slurm.schedmd.com/priority_multifactor.html).

The highest priority runs first; equal priorities keep job order. Priorities change
with time, so the queue is re-sorted at every scheduling pass by default. Slurm
instead recalculates them on a timer, every ``PriorityCalcPeriod`` (5 minutes by
default): ``calc_period=300`` does that, recalculating at the first pass at least
``calc_period`` seconds after the previous recalculation (a job submitted in between
gets its priority at submission, and fair-share usage charged in between counts
from the next recalculation). On long queues this matters for speed too: every
recalculation re-sorts the whole queue (:meth:`Multifactor.key_array` does it with
numpy). Default weights: age 1000, fair-share 1000, size 100, queue 1000, PSP 0
(off); default ``calc_period`` 0 (every pass).
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Mapping
from typing import Any

import numpy as np
from schedlab import OptionSpec, PolicySpec, hookimpl, list_items
from schedlab.errors import UsageError

from .psp import MAX_WINDOW, PenaltyScheduling, parse_edges

_RESCALE = 2.0**500


def parse_queue_priorities(text: Any) -> dict[int, float]:
    """``"1:10/2:5"`` (pairs separated by ``/``, ``,``, ``;`` or blanks: ``/``
    inside a ``name:key=value,...`` spec) or a mapping ``{1: 10, "2": 5}`` ->
    ``{1: 10.0, 2: 5.0}``.

    Queues are whole numbers and priorities finite numbers; anything else raises
    ``ValueError``.
    """
    if isinstance(text, Mapping):
        pairs = list(text.items())
    elif isinstance(text, str):
        pairs = []
        for part in list_items(":".join(piece.strip() for piece in text.split(":"))):
            queue, sep, value = part.partition(":")
            if not sep:
                raise ValueError(f"expected queue:priority, got {part!r}")
            pairs.append((queue, value))
    else:
        raise ValueError(f"expected queue:priority pairs, got {text!r}")
    out: dict[int, float] = {}
    for queue, value in pairs:
        if isinstance(queue, bool) or isinstance(value, bool):
            raise ValueError(f"expected numbers, got {queue!r}:{value!r}")
        try:
            number = int(queue.strip()) if isinstance(queue, str) else operator.index(queue)
            priority = float(value)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(
                f"expected a whole queue number and a priority, got {queue!r}:{value!r}"
            ) from None
        if not math.isfinite(priority):
            raise ValueError(f"queue {number}: priority {value!r} is not a finite number")
        if number in out and out[number] != priority:
            raise ValueError(f"queue {number} given twice ({out[number]:g}, then {priority:g})")
        out[number] = priority
    return out


parse_queue_priorities.__name__ = "queue:priority list"


class Multifactor:
    """Slurm-like multifactor priority (see the module docstring)."""

    name = "multifactor"
    dynamic = True

    def __init__(
        self,
        weight_age: float = 1000.0,
        weight_size: float = 100.0,
        weight_fairshare: float = 1000.0,
        weight_queue: float = 1000.0,
        max_age: float = 7 * 86400.0,
        half_life: float = 7 * 86400.0,
        favor_small: bool = False,
        queue_priorities: dict[int, float] | str | None = None,
        weight_psp: float = 0.0,
        psp_window: int = 10,
        psp_edges: tuple[float, ...] | str = (0.2, 0.4, 0.6, 0.8),
        psp_new_user_class: int | None = None,
        calc_period: float = 0.0,
    ) -> None:
        if max_age <= 0:
            raise UsageError(f"policy multifactor: option max_age={max_age}: must be > 0")
        if not calc_period >= 0 or math.isinf(calc_period):
            raise UsageError(
                f"policy multifactor: option calc_period={calc_period}: must be a finite "
                "number >= 0"
            )
        #: Seconds between recalculations of the priorities (the engine reads it:
        #: ``rekey_period`` in :class:`schedlab.sim.protocols.Policy`).
        self.rekey_period = float(calc_period)
        if half_life < 0:
            raise UsageError(f"policy multifactor: option half_life={half_life}: must be >= 0")
        for option, weight in (
            ("weight_age", weight_age),
            ("weight_size", weight_size),
            ("weight_fairshare", weight_fairshare),
            ("weight_queue", weight_queue),
            ("weight_psp", weight_psp),
        ):
            if not math.isfinite(weight):
                raise UsageError(f"policy multifactor: option {option}={weight}: must be finite")
            if weight < 0:  # as Slurm's PriorityWeight*: a weight is never negative
                raise UsageError(f"policy multifactor: option {option}={weight}: must be >= 0")
        if isinstance(psp_edges, str):
            psp_edges = parse_edges(psp_edges)
        classes = len(psp_edges) + 1
        # Options come from the command line or Python: any whole number (numpy's
        # too), seen as objects (mypy takes an int for no numbers.Integral).
        window: object = psp_window
        if (
            not isinstance(window, numbers.Integral)
            or isinstance(window, bool)
            or not 1 <= int(window) <= MAX_WINDOW
        ):
            raise UsageError(
                f"policy multifactor: option psp_window={psp_window!r}: must be in 1..{MAX_WINDOW}"
            )
        new_class: object = psp_new_user_class
        if new_class is not None and not (
            isinstance(new_class, numbers.Integral)
            and not isinstance(new_class, bool)
            and 1 <= int(new_class) <= classes
        ):
            raise UsageError(
                f"policy multifactor: option psp_new_user_class={psp_new_user_class}: "
                f"expected 1..{classes}"
            )
        self.weight_psp = float(weight_psp)
        #: The PSP class tracker, only when the factor counts.
        self.psp: PenaltyScheduling | None = (
            PenaltyScheduling(psp_window, tuple(psp_edges), psp_new_user_class)
            if self.weight_psp
            else None
        )
        self.psp_classes = classes
        self.weight_age = float(weight_age)
        self.weight_size = float(weight_size)
        self.weight_fairshare = float(weight_fairshare)
        self.weight_queue = float(weight_queue)
        self.max_age = float(max_age)
        self.half_life = float(half_life)
        self.favor_small = bool(favor_small)
        if queue_priorities is not None:
            try:
                queue_priorities = parse_queue_priorities(queue_priorities)
            except ValueError as exc:
                raise UsageError(
                    f"policy multifactor: option queue_priorities={queue_priorities!r}: {exc}"
                ) from None
        self.queue_priorities = dict(queue_priorities or {})
        # Usage is kept scaled by 2**(t / half_life) so that decaying it never needs
        # touching every user: ratios of scaled usages are the ratios of usages.
        self.usage: dict[int, float] = {}
        self.total_usage = 0.0
        self.scale_origin: float | None = None
        self.users: set[int] = set()
        self.table: Any = None

    def bind(self, table: Any) -> None:
        """Precompute the static factors (size, queue) per job (and forget an
        earlier run: usage, users and PSP classes start empty, so one object run
        twice schedules the same twice)."""
        self.table = table
        self.usage = {}
        self.total_usage = 0.0
        self.scale_origin = None
        self.users = set()
        self.submit = table.submit
        self.user = table.user
        procs = table.procs
        if self.favor_small:
            size_factor = [1.0 - (s - 1) / procs for s in table.size]
        else:
            size_factor = [s / procs for s in table.size]
        top = max(self.queue_priorities.values(), default=0.0)
        queue_factor = [
            (self.queue_priorities.get(q, 0.0) / top) if top > 0 else 0.0 for q in table.queue
        ]
        self.static = [
            self.weight_size * a + self.weight_queue * b
            for a, b in zip(size_factor, queue_factor, strict=True)
        ]
        if self.psp is not None:
            self.psp.bind(table)
        #: Submit times, users and static factors as arrays for :meth:`key_array`
        #: (a dependent job's submit time is set when it is released: copied at
        #: :meth:`on_submit`).
        self._arrays = (
            np.asarray(self.submit, dtype=np.float64),
            np.asarray(self.user, dtype=np.int64),
            np.asarray(self.static, dtype=np.float64),
        )

    def psp_factor(self, user: int) -> float:
        """The user's PSP class over the number of classes (0 when the factor is off)."""
        psp = self.psp
        if psp is None:
            return 0.0
        return psp.user_class.get(user, psp.new_user_class) / self.psp_classes

    def fairshare(self, user: int) -> float:
        """The user's fair-share factor now."""
        if self.total_usage <= 0:
            return 1.0
        usage = self.usage.get(user, 0.0) / self.total_usage
        shares = 1.0 / max(len(self.users), 1)
        return 2.0 ** (-usage / shares)

    def key(self, job: int, now: float) -> float:
        """Minus the priority (the lowest key runs first)."""
        wait = now - self.submit[job]
        age = wait / self.max_age if wait < self.max_age else 1.0
        user = self.user[job]
        priority = (
            self.static[job] + self.weight_age * age + self.weight_fairshare * self.fairshare(user)
        )
        if self.psp is not None:
            priority += self.weight_psp * self.psp_factor(user)
        return -priority

    def keys(self, jobs: list[int], now: float) -> list[float]:
        """Keys of many jobs, with the fair-share factor computed once per user."""
        cache: dict[int, float] = {}
        out = []
        submit, user, static = self.submit, self.user, self.static
        max_age, w_age, w_fs = self.max_age, self.weight_age, self.weight_fairshare
        if self.psp is not None:
            return self._keys_with_psp(jobs, now)
        for j in jobs:
            u = user[j]
            fs = cache.get(u)
            if fs is None:
                fs = cache[u] = self.fairshare(u)
            wait = now - submit[j]
            age = wait / max_age if wait < max_age else 1.0
            out.append(-(static[j] + w_age * age + w_fs * fs))
        return out

    def key_array(self, jobs: np.ndarray, now: float) -> np.ndarray:
        """:meth:`key` of many jobs as one float64 array, the same numbers as
        ``key`` gives (the same operations in the same order, elementwise; the
        per-user factors are computed once per user by :meth:`fairshare` and
        :meth:`psp_factor`)."""
        submit, user, static = self._arrays
        users, which = np.unique(user[jobs], return_inverse=True)
        user_list = users.tolist()
        wait = now - submit[jobs]
        age = np.where(wait < self.max_age, wait / self.max_age, 1.0)
        fs = np.array([self.fairshare(u) for u in user_list], dtype=np.float64)
        priority = static[jobs] + self.weight_age * age + self.weight_fairshare * fs[which]
        if self.psp is not None:
            psp = np.array([self.psp_factor(u) for u in user_list], dtype=np.float64)
            priority = priority + self.weight_psp * psp[which]
        return -priority

    def _keys_with_psp(self, jobs: list[int], now: float) -> list[float]:
        cache: dict[int, tuple[float, float]] = {}
        out = []
        submit, user, static = self.submit, self.user, self.static
        max_age, w_age, w_fs = self.max_age, self.weight_age, self.weight_fairshare
        w_psp = self.weight_psp
        for j in jobs:
            u = user[j]
            factors = cache.get(u)
            if factors is None:
                factors = cache[u] = (self.fairshare(u), self.psp_factor(u))
            wait = now - submit[j]
            age = wait / max_age if wait < max_age else 1.0
            out.append(-(static[j] + w_age * age + w_fs * factors[0] + w_psp * factors[1]))
        return out

    def on_submit(self, job: int, now: float) -> bool:
        """Count the user among those sharing the machine."""
        self.users.add(self.user[job])
        self._arrays[0][job] = self.submit[job]
        return False

    def on_finish(self, job: int, now: float) -> bool:
        """Charge the job's processor-seconds to its user; update its PSP history."""
        if self.psp is not None:
            self.psp.on_finish(job, now)
        table = self.table
        charge = table.size[job] * table.run_time[job]
        if self.half_life > 0:
            if self.scale_origin is None:
                self.scale_origin = now
            factor = 2.0 ** ((now - self.scale_origin) / self.half_life)
            if factor > _RESCALE or math.isinf(factor):
                self._rescale(now)
                factor = 1.0
            charge *= factor
        user = self.user[job]
        self.usage[user] = self.usage.get(user, 0.0) + charge
        self.total_usage += charge
        return False

    def _rescale(self, now: float) -> None:
        assert self.scale_origin is not None
        shrink = 2.0 ** (-(now - self.scale_origin) / self.half_life)
        for user in self.usage:
            self.usage[user] *= shrink
        self.total_usage *= shrink
        self.scale_origin = now


@hookimpl
def schedlab_policies() -> list[PolicySpec]:
    """Register ``multifactor``."""
    return [
        PolicySpec(
            name="multifactor",
            aliases=("slurm",),
            description="Slurm-style weighted sum of age, size, fair-share and queue.",
            factory=Multifactor,
            options=(
                OptionSpec("weight_age", float, 1000.0, "weight of the age factor"),
                OptionSpec("weight_size", float, 100.0, "weight of the job size factor"),
                OptionSpec("weight_fairshare", float, 1000.0, "weight of the fair-share factor"),
                OptionSpec("weight_queue", float, 1000.0, "weight of the queue factor"),
                OptionSpec("max_age", float, 7 * 86400.0, "wait (s) at which age saturates"),
                OptionSpec("half_life", float, 7 * 86400.0, "usage decay half-life (s), 0 = none"),
                OptionSpec("favor_small", bool, False, "small jobs get the larger size factor"),
                OptionSpec(
                    "queue_priorities",
                    parse_queue_priorities,
                    None,
                    "queue:priority pairs, e.g. 1:10,2:5",
                ),
                OptionSpec("weight_psp", float, 0.0, "weight of the PSP accuracy-class factor"),
                OptionSpec(
                    "psp_window",
                    int,
                    10,
                    f"completed jobs per user in the PSP accuracy (1..{MAX_WINDOW})",
                    min=1,
                    max=MAX_WINDOW,
                ),
                OptionSpec(
                    "psp_edges",
                    parse_edges,
                    (0.2, 0.4, 0.6, 0.8),
                    "PSP accuracy class edges (classes a1..a(n+1))",
                ),
                OptionSpec(
                    "psp_new_user_class",
                    int,
                    None,
                    "PSP class of a user with no completed job (default: the highest)",
                    min=1,
                ),
                OptionSpec(
                    "calc_period",
                    float,
                    0.0,
                    "seconds between priority recalculations (Slurm: 300), 0 = every pass",
                    min=0,
                ),
            ),
        )
    ]
