"""Fixes from the "online" audit: manual starts on the compiled node-level EASY
(findings 1), and the Gymnasium environment's checks of actions, of its state after
close(), of a string workload and of its constructor arguments (8, 9, 10, 14)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from schedlab.errors import UsageError

PLATFORM = "[node_groups.n]\ncount = 25\ncores = 4\n[partitions.all]\nnodes = ['n']\n"


@pytest.fixture(scope="module")
def kth(swf_dir: Path) -> schedlab.Workload:
    w = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    return schedlab.Workload(w.header, columns=w.to_arrays().take(np.arange(600)))


@pytest.fixture()
def platform(tmp_path: Path) -> Path:
    path = tmp_path / "p25.toml"
    path.write_text(PLATFORM)
    return path


# ------------------------------------------------------------------ finding 1
def _drive(w: schedlab.Workload, platform: Path, kernel: str, seed: int) -> tuple[Any, list]:
    """Random start/order decisions (the same for both kernels as long as the
    points are the same); returns the result and the points seen."""
    sim = schedlab.Simulation(
        w, backfill="easy", backfill_options={"kernel": kernel}, platform=platform
    )
    rng = random.Random(seed)
    seen = []
    while (point := sim.pending_decision()) is not None:
        seen.append((point.now, point.queue))
        fitting = [j for j in point.queue if point.fits(j)]
        r = rng.random()
        if fitting and r < 0.5:
            sim.decide(start=rng.choice(fitting))
        elif r < 0.75:
            order = list(point.queue)
            rng.shuffle(order)
            sim.decide(order=order)
        else:
            sim.decide(order=point.queue)
    return sim.result(), seen


def test_manual_starts_on_the_compiled_node_easy_repro(
    kth: schedlab.Workload, platform: Path
) -> None:
    pytest.importorskip("numba")
    results = {}
    for kernel in ("python", "compiled"):
        sim = schedlab.Simulation(
            kth, backfill="easy", backfill_options={"kernel": kernel}, platform=platform
        )
        sim.decide(start=sim.pending_decision().queue[0])
        sim.decide(order=sim.pending_decision().queue)
        sim.decide(start=sim.pending_decision().queue[0])
        sim.decide(order=sim.pending_decision().queue)
        results[kernel] = sim.result()
    python, compiled = results["python"], results["compiled"]
    assert not np.isnan(compiled.start).any()
    assert np.array_equal(python.start, compiled.start)
    assert python.allocations == compiled.allocations


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_manual_starts_python_and_compiled_agree(
    kth: schedlab.Workload, platform: Path, seed: int
) -> None:
    pytest.importorskip("numba")
    w = schedlab.Workload(kth.header, columns=kth.to_arrays().take(np.arange(300)))
    python, p_seen = _drive(w, platform, "python", seed)
    compiled, c_seen = _drive(w, platform, "compiled", seed)
    assert c_seen == p_seen
    assert np.array_equal(python.start, compiled.start, equal_nan=True)
    assert python.allocations == compiled.allocations
    assert not np.isnan(compiled.start).any()


# ------------------------------------------------------------------ the env
gymnasium = pytest.importorskip("gymnasium")


def _env(w: Any, **kwargs: Any) -> Any:
    from schedlab.rl import SchedulingEnv

    return SchedulingEnv(w, **kwargs)


def _at_three_waiting(kth: schedlab.Workload, **kwargs: Any) -> Any:
    env = _env(kth, episode_jobs=200, **kwargs)
    env.reset(seed=3)
    for _ in range(500):
        if len(env.point.queue) >= 3:
            return env
        env.step(0)
    pytest.fail("no point with 3 waiting jobs")


@pytest.mark.parametrize("action", [1.7, "2", 0.9, np.array([0]), None, True, 2.0, [0]])
@pytest.mark.parametrize("mode", ["punish", "raise"])
def test_step_refuses_actions_outside_the_space(
    kth: schedlab.Workload, action: Any, mode: str
) -> None:
    env = _at_three_waiting(kth, invalid_action=mode)
    before = env.point
    with pytest.raises(UsageError, match="action"):
        env.step(action)
    assert env.point is before  # nothing happened
    env.step(0)  # the episode goes on


@pytest.mark.parametrize("action", [32, -1, 10**9])
def test_step_refuses_integers_out_of_range(kth: schedlab.Workload, action: int) -> None:
    env = _at_three_waiting(kth)
    with pytest.raises(UsageError, match="action"):
        env.step(action)


def test_step_takes_numpy_integers(kth: schedlab.Workload) -> None:
    env = _at_three_waiting(kth, invalid_action="raise")
    _, _, _, _, info = env.step(np.int64(2))
    assert not info["invalid_action"]
    env.step(np.array(1))  # a 0-d integer array is an integer
    # an empty row (in the space) is still the invalid_action case
    env2 = _at_three_waiting(kth)
    assert len(env2.point.queue) < env2.queue_size
    _, reward, _, _, info = env2.step(np.int32(env2.queue_size - 1))
    assert info["invalid_action"] and reward == -1.0


def test_step_after_close(kth: schedlab.Workload) -> None:
    env = _env(kth, episode_jobs=50)
    env.reset(seed=2)
    env.step(0)
    env.close()
    with pytest.raises(UsageError, match="closed"):
        env.step(0)
    env.close()  # twice is fine
    env.reset(seed=2)  # and reset starts again
    env.step(0)


def test_a_file_path_is_read_as_a_file(swf_dir: Path) -> None:
    path = swf_dir / "lublin_256.swf"
    if not path.exists():
        pytest.skip("no lublin_256.swf")
    env = _env(str(path), episode_jobs=40)
    _, info = env.reset(seed=0)
    assert info["jobs"] == 40
    env2 = _env(path, episode_jobs=40)  # a Path too
    _, info = env2.reset(seed=0)
    assert info["jobs"] == 40


def test_a_missing_file_fails_at_construction(tmp_path: Path) -> None:
    with pytest.raises(schedlab.errors.FormatError, match=r"nothing\.swf"):
        _env(str(tmp_path / "nothing.swf"))


def test_a_spec_with_its_own_seed_is_refused_at_construction() -> None:
    with pytest.raises(UsageError, match="seed"):
        _env("lublin:jobs=64,seed=5")


def test_a_generator_spec_still_works() -> None:
    env = _env("lublin:jobs=64", episode_jobs=64)
    _, info = env.reset(seed=0)
    assert info["jobs"] == 64


@pytest.mark.parametrize(
    "kwargs",
    [
        {"queue_size": 2.5},
        {"queue_size": "8"},
        {"queue_size": 10**9},
        {"queue_size": True},
        {"queue_size": 0},
        {"episode_jobs": float("nan")},
        {"episode_jobs": 2.5},
        {"episode_jobs": True},
        {"episode_jobs": 0},
        {"penalty": "x"},
        {"penalty": float("nan")},
        {"bogus": 1},
    ],
)
def test_constructor_arguments_are_checked(kth: schedlab.Workload, kwargs: dict) -> None:
    with pytest.raises(UsageError) as info:
        _env(kth, **kwargs)
    assert "\n" not in str(info.value)
    assert next(iter(kwargs)) in str(info.value)


def test_constructor_takes_numpy_integers(kth: schedlab.Workload) -> None:
    env = _env(kth, queue_size=np.int64(8), episode_jobs=np.int32(64), penalty=-2)
    obs, _ = env.reset(seed=1)
    assert obs["jobs"].shape == (8, 5) and env.penalty == -2.0
