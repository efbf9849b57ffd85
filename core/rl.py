"""A Gymnasium environment over any workload schedlab reads (extra ``rl``).

``SchedulingEnv`` (Gymnasium id ``schedlab/Scheduling-v0``) wraps the stepping
simulation (:class:`schedlab.Simulation`, docs/online.md): at each scheduling point
the agent picks which of the first ``queue_size`` waiting jobs goes first; the
others follow in the priority policy's order and the backfilling strategy runs its
pass with that order (with ``backfill="none"`` the chosen job starts if it fits and
otherwise blocks the queue, as in RLScheduler's setting). On a platform with
``priority_tier`` partitions the rows are in the pass's order (higher tiers
first) and tiers outrank the action: the chosen job goes first within its tier.

Observation (a dict of fixed-shape arrays)
    ``jobs``: ``(queue_size, 5)`` float32, one row per waiting job in the
    pass's order (``point.queue``): wait so far, estimate, size over the
    machine, fits now (0/1), and the mean run time of the user's jobs finished so
    far; times as
    ``log1p(seconds) / log1p(10**6)``, every feature clipped into the Box's
    ``[0, 10]`` (reached only by times over about 1e60 s). ``mask``:
    ``(queue_size,)`` int8, 1 where a row holds a job. ``machine``: ``(3,)``
    float32: free share of the machine, waiting jobs over ``queue_size`` (capped
    at 1), running share.
Action
    ``Discrete(queue_size)``: the row of the job to put first. Anything the space
    does not hold (a float, a string, a bool, an array of shape ``(1,)``, an
    integer out of range) raises :class:`~schedlab.errors.UsageError`, whatever
    ``invalid_action`` says; numpy integers are taken.
Reward
    0 until the episode ends, then ``-mean bounded slowdown`` (10 s threshold) of
    the episode's jobs (``reward="bounded_slowdown"``, default), ``-mean wait`` in hours
    (``"wait_hours"``) or the utilization (``"busy_share"``).
Episodes
    ``episode_jobs`` consecutive jobs of the workload from a start drawn with the
    environment's seed (``reset(seed=...)``), or the whole workload when it is
    shorter; a file path is read once, at construction; a generator spec
    (``"lublin:jobs=512"``) is generated anew per episode with a seed drawn the
    same way (a spec with its own ``seed=`` is refused at construction). A
    window in which no job can be simulated (all excluded: unknown run times,
    never fitting the platform ...) is skipped and another drawn;
    ``info["skipped_windows"]`` counts them. When the whole workload, or each of
    100 windows drawn, holds none, ``reset`` raises a UsageError naming the
    exclusions. ``step`` after the episode's end raises a UsageError (call
    ``reset()``).
An action on an empty row
    ``invalid_action="punish"`` (default): the policy's order is kept, the step's
    reward is ``penalty`` (default -1) and ``info["invalid_action"]`` is True;
    ``"raise"``: a ``ValueError`` (for debugging: Gymnasium's ``check_env``,
    which steps with sampled actions, then fails). Never a silent no-op.
Arguments
    Checked at construction (one-line UsageErrors): ``queue_size`` an integer from
    1 to :data:`MAX_QUEUE_SIZE`, ``episode_jobs`` an integer >= 1, ``penalty`` a
    finite number, other keywords options of :func:`schedlab.simulate`. After
    ``close()``, ``step`` raises a UsageError until ``reset()``.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from .errors import UsageError
from .model import Workload

ENV_ID = "schedlab/Scheduling-v0"
#: The largest ``queue_size`` (rows of the observation) the environment takes.
MAX_QUEUE_SIZE = 65_536
_TIME_SCALE = math.log1p(1e6)
#: The bound of the ``jobs`` features (the observation's Box); larger values are clipped.
_FEATURE_MAX = 10.0
#: Windows ``reset`` draws at most to find one holding a job that can be simulated.
_MAX_WINDOW_DRAWS = 100
REWARDS = ("bounded_slowdown", "wait_hours", "busy_share")


def _gym() -> Any:
    try:
        import gymnasium
    except ImportError:
        raise UsageError(
            "the Gymnasium environment needs gymnasium: pip install 'schedlab[rl]'"
        ) from None
    return gymnasium


def _t(seconds: float) -> float:
    return math.log1p(max(seconds, 0.0)) / _TIME_SCALE


def _count(name: str, value: Any, most: int | None) -> int:
    """``value`` as a positive integer (numpy integers too; not a bool), at most
    ``most``; else a one-line UsageError naming the argument."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise UsageError(f"SchedulingEnv: {name}={value!r}: expected an integer >= 1")
    if value < 1 or (most is not None and value > most):
        bound = "" if most is None else f" and <= {most:,}"
        raise UsageError(f"SchedulingEnv: {name}={value!r}: expected an integer >= 1{bound}")
    return int(value)


def _penalty(value: Any) -> float:
    """The env's penalty as a finite float (a number, not a bool or a string)."""
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not math.isfinite(float(value))
    ):
        raise UsageError(f"SchedulingEnv: penalty={value!r}: expected a finite number")
    return float(value)


def _check_simulate_options(options: dict[str, Any]) -> None:
    """The extra keywords must be options of :func:`schedlab.simulate` (the env
    sets ``policy`` and ``backfill`` itself; ``progress`` makes no sense here)."""
    import inspect

    from .sim.api import simulate

    known = set(inspect.signature(simulate).parameters) - {"workload", "progress"}
    for key in options:
        if key not in known:
            raise UsageError(
                f"SchedulingEnv: unknown keyword {key!r} (expected an option of "
                f"schedlab.simulate: {', '.join(sorted(known - {'policy', 'backfill'}))})"
            )


def _read_source(source: Any) -> Workload | None:
    """A string or path workload: ``None`` for a generator spec (generated anew
    per episode), else the file read once, now. A spec with its own ``seed`` is
    refused: the env draws each episode's seed from ``reset(seed=...)``."""
    from .api import generator_source, parse_spec, read
    from .registry import get_registry

    if not isinstance(source, (str, os.PathLike)):
        raise UsageError(
            f"SchedulingEnv: workload={source!r}: expected a Workload, a file path or a "
            "generator spec"
        )
    if generator_source(source, get_registry()) is not None:
        _, options = parse_spec(str(source))
        if "seed" in options:
            raise UsageError(
                f"SchedulingEnv: workload={source!r}: give the generator spec without "
                "seed= (each episode is generated with a seed drawn from reset(seed=...))"
            )
        return None
    return read(source)


def _action_row(action: Any, queue_size: int) -> int:
    """The row an action names: an integer (numpy integers and 0-d integer arrays
    too; not a bool) in ``0 .. queue_size - 1``, as ``Discrete(queue_size)`` holds;
    anything else is a UsageError whatever ``invalid_action`` says."""
    value = action
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, (int, np.integer))
        or not 0 <= value < queue_size
    ):
        raise UsageError(
            f"SchedulingEnv.step: action {action!r} is not in the action space "
            f"Discrete({queue_size}): expected an integer row 0 .. {queue_size - 1}"
        )
    return int(value)


def _make_env_class() -> type:
    gym = _gym()
    spaces = gym.spaces

    class SchedulingEnv(gym.Env):  # type: ignore[misc,name-defined]
        """See the module docstring."""

        metadata: dict[str, Any] = {"render_modes": []}

        def __init__(
            self,
            workload: Workload | str | os.PathLike[str],
            queue_size: int = 32,
            episode_jobs: int = 256,
            policy: str = "fcfs",
            backfill: str = "easy",
            reward: str = "bounded_slowdown",
            invalid_action: str = "punish",
            penalty: float = -1.0,
            **simulate_options: Any,
        ) -> None:
            queue_size = _count("queue_size", queue_size, MAX_QUEUE_SIZE)
            episode_jobs = _count("episode_jobs", episode_jobs, None)
            penalty = _penalty(penalty)
            _check_simulate_options(simulate_options)
            if reward not in REWARDS:
                raise UsageError(
                    f"SchedulingEnv: reward={reward!r}: expected one of {', '.join(REWARDS)}"
                )
            if invalid_action not in ("punish", "raise"):
                raise UsageError(
                    f"SchedulingEnv: invalid_action={invalid_action!r}: expected punish or raise"
                )
            self.source = workload
            self.queue_size = queue_size
            self.episode_jobs = episode_jobs
            self.policy = policy
            self.backfill = backfill
            self.reward_name = reward
            self.invalid_action = invalid_action
            self.penalty = penalty
            self.simulate_options = simulate_options
            self._trace: Workload | None = None
            self._closed = False
            if isinstance(workload, Workload):
                self._trace = workload
            else:
                self._trace = _read_source(workload)
            self.action_space = spaces.Discrete(queue_size)
            self.observation_space = spaces.Dict(
                {
                    "jobs": spaces.Box(0.0, _FEATURE_MAX, (queue_size, 5), np.float32),
                    "mask": spaces.Box(0, 1, (queue_size,), np.int8),
                    "machine": spaces.Box(0.0, 1.0, (3,), np.float32),
                }
            )
            self.sim: Any = None
            self.point: Any = None

        # -------------------------------------------------------------- episodes
        def _episode(self) -> Workload:
            rng = self.np_random
            if self._trace is None:
                from .api import read

                spec = str(self.source)
                seed = int(rng.integers(0, 2**31 - 1))
                joiner = "," if ":" in spec else ":"
                return read(f"{spec}{joiner}seed={seed}")
            cols = self._trace.to_arrays()
            n = len(cols)
            size = min(self.episode_jobs, n)
            first = int(rng.integers(0, n - size + 1))
            return Workload(self._trace.header, columns=cols.take(np.arange(first, first + size)))

        def reset(
            self, *, seed: int | None = None, options: dict[str, Any] | None = None
        ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
            """Start an episode (a new window of the workload)."""
            super().reset(seed=seed)
            from .sim.stepping import Simulation

            if self.sim is not None:
                self.sim.close()
            self._closed = False
            self.sim = self.point = None
            workload = self._episode()
            #: The workload of the current episode (a window of the trace).
            self.episode = workload
            self._user_sum: dict[int, float] = {}
            self._user_count: dict[int, int] = {}
            self._ended: list[tuple[float, int]] = []
            self._waiting: set[int] = set()
            skipped = 0
            while True:
                self.sim = Simulation(
                    workload, policy=self.policy, backfill=self.backfill, **self.simulate_options
                )
                self.point = self.sim.pending_decision()
                if self.point is not None:
                    break
                # No job of this window can be simulated (every one excluded):
                # an episode with nothing to decide is no episode; draw another.
                excluded = self.sim.result().stats.get("excluded", {})
                skipped += 1
                single = self._trace is not None and len(self._trace) <= self.episode_jobs
                if single or skipped >= _MAX_WINDOW_DRAWS:
                    self.sim.close()
                    self.sim = None
                    reasons = ", ".join(f"{k} {v:,}" for k, v in excluded.items() if v)
                    drawn = "the workload" if single else f"{skipped} windows drawn"
                    last = "excluded" if single else "the last one excluded"
                    raise UsageError(
                        f"SchedulingEnv.reset: no job of {drawn} can be simulated "
                        f"({last}: {reasons or 'every job'}): check the workload and "
                        "the simulate options"
                    )
                workload = self._episode()
                self.episode = workload
            return self._observe(), {"jobs": len(workload), "skipped_windows": skipped}

        # -------------------------------------------------------------- steps
        def step(
            self, action: Any
        ) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
            """Put the job of row ``action`` first, run to the next point."""
            if self._closed:
                raise UsageError("SchedulingEnv: the environment was closed: call reset()")
            if self.point is None:
                raise UsageError("SchedulingEnv: the episode is over: call reset()")
            row = _action_row(action, self.queue_size)
            queue = self.point.queue
            info: dict[str, Any] = {"invalid_action": False}
            reward = 0.0
            if row < len(queue):
                chosen = queue[row]
                order = [chosen, *(j for j in queue if j != chosen)]
            else:
                if self.invalid_action == "raise":
                    raise ValueError(
                        f"action {action!r} names no waiting job ({len(queue)} waiting, "
                        f"queue_size {self.queue_size})"
                    )
                info["invalid_action"] = True
                reward = self.penalty
                order = list(queue)
            self.sim.decide(order=order)
            self.point = self.sim.pending_decision()
            done = self.point is None
            if done:
                result = self.sim.result()
                reward += self._final_reward(result)
                info["result"] = result
            return self._observe(), reward, done, False, info

        def _final_reward(self, result: Any) -> float:
            cols = result.workload.to_arrays()
            wait, run = cols["wait_time"], cols["run_time"]
            if not len(wait):
                return 0.0
            if self.reward_name == "wait_hours":
                return -float(wait.mean()) / 3600.0
            if self.reward_name == "busy_share":
                span = float(result.end.max() - cols["submit_time"].min())
                work = float((run * cols["allocated_processors"]).sum())
                return work / (result.procs * span) if span > 0 else 0.0
            bsld = np.maximum((wait + run) / np.maximum(run, 10.0), 1.0)
            return -float(bsld.mean())

        # -------------------------------------------------------------- features
        def _learn_history(self, state: Any, queue: tuple[int, ...], now: float) -> None:
            """Add the run times of the jobs finished by ``now`` to their users'.

            Every job is in the queue of some decision point before it starts (a
            pass follows every arrival), so the jobs that left the queue since the
            last point are the ones that started."""
            import heapq

            current = set(queue)
            ended = self._ended
            for j in self._waiting - current:
                heapq.heappush(ended, (state.end_time[j], j))
            self._waiting = current
            user = state.table.user
            run = state.table.run_time
            while ended and ended[0][0] <= now:
                _, j = heapq.heappop(ended)
                u = user[j]
                self._user_sum[u] = self._user_sum.get(u, 0.0) + run[j]
                self._user_count[u] = self._user_count.get(u, 0) + 1

        def _observe(self) -> dict[str, np.ndarray]:
            k = self.queue_size
            jobs = np.zeros((k, 5), dtype=np.float32)
            mask = np.zeros(k, dtype=np.int8)
            machine = np.zeros(3, dtype=np.float32)
            point = self.point
            if point is None:
                return {"jobs": jobs, "mask": mask, "machine": machine}
            state = point.state
            now = point.now
            self._learn_history(state, point.queue, now)
            procs = state.procs
            size, est, submit, user = state.size, state.estimate, state.submit, state.table.user
            rows = point.queue[:k]
            n = len(rows)
            if n:
                counts, sums = self._user_count, self._user_sum
                history = []
                for j in rows:
                    u = user[j]
                    history.append(sums[u] / counts[u] if u in counts else 0.0)
                times = np.array([[now - submit[j] for j in rows], [est[j] for j in rows], history])
                scaled = np.log1p(np.maximum(times, 0.0)) / _TIME_SCALE
                jobs[:n, 0] = scaled[0]
                jobs[:n, 1] = scaled[1]
                jobs[:n, 4] = scaled[2]
                jobs[:n, 2] = [size[j] / procs for j in rows]
                jobs[:n, 3] = [1.0 if point.fits(j) else 0.0 for j in rows]
                mask[:n] = 1
                # Into the declared Box (times over ~1e60 s, from workloads built
                # in Python, would scale above its bound).
                np.clip(jobs, 0.0, _FEATURE_MAX, out=jobs)
            machine[0] = state.free / procs
            machine[1] = min(len(point.queue) / k, 1.0)
            machine[2] = 1.0 - state.free / procs
            return {"jobs": jobs, "mask": mask, "machine": machine}

        def close(self) -> None:
            """Abandon the running episode."""
            if self.sim is not None:
                self.sim.close()
                self.sim = None
            self.point = None
            self._closed = True

    return SchedulingEnv


_ENV_CLASS: type | None = None


def __getattr__(name: str) -> Any:
    global _ENV_CLASS
    if name == "SchedulingEnv":
        if _ENV_CLASS is None:
            _ENV_CLASS = _make_env_class()
            register()
        return _ENV_CLASS
    raise AttributeError(name)


def register() -> None:
    """Register ``schedlab/Scheduling-v0`` with Gymnasium (done when this module is
    imported, if Gymnasium is installed, and on first use of :data:`SchedulingEnv`;
    harmless to repeat). The registration names the class by its import path only:
    the class (and the simulator) load when ``gymnasium.make`` builds an env."""
    gym = _gym()
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="schedlab.rl:SchedulingEnv")


# Gymnasium 1.x has no plugin discovery (its ``gymnasium.envs`` entry points were
# removed in 1.0): an env is registered by importing the module that registers it,
# ``import schedlab.rl`` or ``gymnasium.make("schedlab.rl:schedlab/Scheduling-v0")``.
try:
    register()
except UsageError:  # no gymnasium: schedlab.rl.SchedulingEnv then says how to get it
    pass


__all__ = ["ENV_ID", "MAX_QUEUE_SIZE", "REWARDS", "register"]
