"""The Gymnasium environment (extra ``rl``): Gymnasium's own checker, seeded
episodes, rewards, invalid actions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import schedlab

gymnasium = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402
from schedlab.rl import ENV_ID, SchedulingEnv  # noqa: E402


@pytest.fixture(scope="module")
def kth(swf_dir: Path) -> schedlab.Workload:
    w = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    return schedlab.Workload(w.header, columns=w.to_arrays().take(np.arange(3000)))


def run_episode(env: object, seed: int, pick: object = None) -> tuple[float, int, object]:
    obs, _ = env.reset(seed=seed)  # type: ignore[attr-defined]
    total, steps, done, info = 0.0, 0, False, {}
    while not done:
        action = 0 if pick is None else pick(obs)  # type: ignore[operator]
        obs, reward, done, _, info = env.step(action)  # type: ignore[attr-defined]
        total += reward
        steps += 1
    return total, steps, info["result"]


def test_gymnasiums_checker_passes(kth: schedlab.Workload) -> None:
    check_env(SchedulingEnv(kth, episode_jobs=128), skip_render_check=True)


def test_registered_id_makes_the_env(kth: schedlab.Workload) -> None:
    env = gymnasium.make(ENV_ID, workload=kth, episode_jobs=64)
    obs, info = env.reset(seed=2)
    assert info["jobs"] == 64 and obs["jobs"].shape == (32, 5)


def test_always_the_head_is_the_policys_schedule(kth: schedlab.Workload) -> None:
    env = SchedulingEnv(kth, episode_jobs=200, backfill="easy")
    reward, _, result = run_episode(env, seed=5)
    again = schedlab.simulate(
        schedlab.Workload(kth.header, columns=result.workload.to_arrays()), progress=False
    )
    assert np.array_equal(result.start, again.start)  # action 0 keeps FCFS: same schedule
    cols = result.workload.to_arrays()
    bsld = np.maximum((cols["wait_time"] + cols["run_time"]) / np.maximum(cols["run_time"], 10), 1)
    assert reward == pytest.approx(-bsld.mean())


def test_seeded_episodes_repeat_and_differ(kth: schedlab.Workload) -> None:
    env = SchedulingEnv(kth, episode_jobs=100)
    a = run_episode(env, seed=1)
    b = run_episode(env, seed=1)
    c = run_episode(env, seed=2)
    assert a[0] == b[0] and a[1] == b[1]
    assert not np.array_equal(a[2].rows, c[2].rows) or a[0] != c[0]


def test_the_mask_marks_the_waiting_jobs(kth: schedlab.Workload) -> None:
    env = SchedulingEnv(kth, episode_jobs=300, queue_size=8)
    obs, _ = env.reset(seed=0)
    for _ in range(50):
        n = int(obs["mask"].sum())
        assert obs["mask"][:n].all() and not obs["mask"][n:].any()
        assert (obs["jobs"][n:] == 0).all()
        obs, _, done, _, _ = env.step(0)
        if done:
            break


def test_invalid_actions_cost_or_raise(kth: schedlab.Workload) -> None:
    env = SchedulingEnv(kth, episode_jobs=100, queue_size=64, penalty=-5.0)
    obs, _ = env.reset(seed=3)
    empty = int(obs["mask"].sum())  # the first empty row
    _, reward, _, _, info = env.step(empty)
    assert info["invalid_action"] and reward <= -5.0
    strict = SchedulingEnv(kth, episode_jobs=100, queue_size=64, invalid_action="raise")
    obs, _ = strict.reset(seed=3)
    with pytest.raises(ValueError, match="names no waiting job"):
        strict.step(int(obs["mask"].sum()))


def test_bad_options_are_one_line_errors(kth: schedlab.Workload) -> None:
    with pytest.raises(schedlab.UsageError, match="reward"):
        SchedulingEnv(kth, reward="fun")
    with pytest.raises(schedlab.UsageError, match="invalid_action"):
        SchedulingEnv(kth, invalid_action="ignore")


def test_a_generator_gives_fresh_episodes() -> None:
    env = SchedulingEnv("lublin:jobs=80", queue_size=16)
    reward, steps, result = run_episode(env, seed=4)
    assert len(result) == 80 and steps > 0 and reward < 0
