"""``multifactor``: a Slurm-style weighted sum of priority factors.

    priority = weight_age * age + weight_size * size
             + weight_fairshare * fairshare + weight_queue * queue

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

The highest priority runs first; equal priorities keep job order. Priorities change
with time, so the queue is re-sorted at every scheduling pass. Default weights:
age 1000, fair-share 1000, size 100, queue 1000.
"""

from __future__ import annotations

import math
from typing import Any

from schedlab import hookimpl
from schedlab.errors import UsageError
from schedlab.plugin_types import OptionSpec, PolicySpec

_RESCALE = 2.0**500


def parse_queue_priorities(text: Any) -> dict[int, float]:
    """``"1:10,2:5"`` -> ``{1: 10.0, 2: 5.0}``."""
    if isinstance(text, dict):
        return {int(k): float(v) for k, v in text.items()}
    out: dict[int, float] = {}
    for part in str(text).split(","):
        if not part.strip():
            continue
        queue, sep, value = part.partition(":")
        if not sep:
            raise ValueError(f"expected queue:priority, got {part!r}")
        out[int(queue)] = float(value)
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
    ) -> None:
        if max_age <= 0:
            raise UsageError(f"policy multifactor: option max_age={max_age}: must be > 0")
        if half_life < 0:
            raise UsageError(f"policy multifactor: option half_life={half_life}: must be >= 0")
        self.weight_age = float(weight_age)
        self.weight_size = float(weight_size)
        self.weight_fairshare = float(weight_fairshare)
        self.weight_queue = float(weight_queue)
        self.max_age = float(max_age)
        self.half_life = float(half_life)
        self.favor_small = bool(favor_small)
        if isinstance(queue_priorities, str):
            queue_priorities = parse_queue_priorities(queue_priorities)
        self.queue_priorities = dict(queue_priorities or {})
        # Usage is kept scaled by 2**(t / half_life) so that decaying it never needs
        # touching every user: ratios of scaled usages are the ratios of usages.
        self.usage: dict[int, float] = {}
        self.total_usage = 0.0
        self.scale_origin: float | None = None
        self.users: set[int] = set()
        self.table: Any = None

    def bind(self, table: Any) -> None:
        """Precompute the static factors (size, queue) per job."""
        self.table = table
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
        return -(
            self.static[job]
            + self.weight_age * age
            + self.weight_fairshare * self.fairshare(self.user[job])
        )

    def keys(self, jobs: list[int], now: float) -> list[float]:
        """Keys of many jobs, with the fair-share factor computed once per user."""
        cache: dict[int, float] = {}
        out = []
        submit, user, static = self.submit, self.user, self.static
        max_age, w_age, w_fs = self.max_age, self.weight_age, self.weight_fairshare
        for j in jobs:
            u = user[j]
            fs = cache.get(u)
            if fs is None:
                fs = cache[u] = self.fairshare(u)
            wait = now - submit[j]
            age = wait / max_age if wait < max_age else 1.0
            out.append(-(static[j] + w_age * age + w_fs * fs))
        return out

    def on_submit(self, job: int, now: float) -> bool:
        """Count the user among those sharing the machine."""
        self.users.add(self.user[job])
        return False

    def on_finish(self, job: int, now: float) -> bool:
        """Charge the job's processor-seconds to its user."""
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
            ),
        )
    ]
