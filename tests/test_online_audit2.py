"""Fixes from the "online2" audit: the queue a stepping simulation shows on a
platform with priority tiers (finding 3), RL episodes with no simulable job and
``step`` after the end (4), ``check_env`` in raise mode (5) and observations of
huge times kept in the declared space (6)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
import schedlab
from schedlab import Job, Workload
from schedlab.errors import UsageError

#: One 4-core node shared by partitions ``lo`` and ``hi`` (tier 1).
TIER = (
    "[node_groups.n]\ncount = 1\ncores = 4\n"
    "[partitions.lo]\nnodes = ['n']\n"
    "[partitions.hi]\nnodes = ['n']\npriority_tier = 1\n"
)
#: cpu (6 x 16 cores) and gpu (2 x 16 cores) nodes; ``batch`` on both, ``gpu`` on
#: the gpu nodes at tier 1 (the audit's plat.toml without memory and GPUs).
TWO_TIERS = (
    "[node_groups.cpu]\ncount = 6\ncores = 16\n"
    "[node_groups.gpu]\ncount = 2\ncores = 16\n"
    "[partitions.batch]\nnodes = ['cpu', 'gpu']\n"
    "[partitions.gpu]\nnodes = ['gpu']\npriority_tier = 1\n"
)


@pytest.fixture()
def tier(tmp_path: Path) -> Path:
    path = tmp_path / "tier.toml"
    path.write_text(TIER)
    return path


@pytest.fixture()
def two_tiers(tmp_path: Path) -> Path:
    path = tmp_path / "two_tiers.toml"
    path.write_text(TWO_TIERS)
    return path


def three_jobs() -> Workload:
    """Job 0 (lo) runs 0-100; job 1 (lo) arrives at 1, job 2 (hi) at 2."""
    return Workload.from_jobs(
        [
            Job(
                job_number=i + 1,
                submit_time=i,
                run_time=100 if i == 0 else 10,
                requested_processors=4,
                requested_time=100 if i == 0 else 10,
                extras={"request.partition": part},
            )
            for i, part in enumerate(["lo", "lo", "hi"])
        ]
    )


@pytest.fixture(scope="module")
def kth_parts(swf_dir: Path) -> Workload:
    """400 KTH-SP2 jobs, 30 % in partition ``gpu``, the rest in ``batch``."""
    w = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    rng = random.Random(1)
    jobs = []
    for j in list(w)[:400]:
        gpu = rng.random() < 0.3
        procs = min(j.requested_processors or 1, 32 if gpu else 64)
        extras = {**j.extras, "request.partition": "gpu" if gpu else "batch"}
        jobs.append(
            attrs.evolve(j, requested_processors=procs, allocated_processors=procs, extras=extras)
        )
    return Workload.from_jobs(jobs, header=w.header)


# ------------------------------------------------------------------ finding 3
def test_point_queue_is_in_tier_order(tier: Path) -> None:
    sim = schedlab.Simulation(three_jobs(), backfill="none", platform=tier)
    queues = []
    while (point := sim.pending_decision()) is not None:
        queues.append((point.now, point.queue))
        sim.decide(order=point.queue)
    # at 100 the hi job (index 2) is shown first: it is the one the pass starts
    assert (100.0, (2, 1)) in queues
    result = sim.result()
    assert result.start.tolist() == [0.0, 110.0, 100.0]


def test_a_caller_order_holds_within_a_tier(tier: Path) -> None:
    """Tiers outrank the caller's order (as Slurm's priority tiers outrank job
    priority): putting the lo job first does not start it before the hi job."""
    sim = schedlab.Simulation(three_jobs(), backfill="none", platform=tier)
    while (point := sim.pending_decision()) is not None:
        sim.decide(order=sorted(point.queue))
    assert sim.result().start.tolist() == [0.0, 110.0, 100.0]


@pytest.mark.parametrize(("backfill", "kernel"), [("none", None), ("easy", "python")])
def test_fcfs_by_starting_the_head_equals_simulate_on_tiers(
    kth_parts: Workload, two_tiers: Path, backfill: str, kernel: str | None
) -> None:
    """Imitating the pass by starting the head of ``point.queue`` while it fits
    gives simulate()'s schedule on a tiered platform (1,108 of 1,392 jobs differed
    when the queue was shown in plain policy order)."""
    options: dict[str, Any] = {"backfill": backfill, "platform": two_tiers}
    if kernel is not None:
        options["backfill_options"] = {"kernel": kernel}
    ref = schedlab.simulate(kth_parts, progress=False, **options)
    sim = schedlab.Simulation(kth_parts, **options)
    starts = 0
    while (point := sim.pending_decision()) is not None:
        head = point.queue[0]
        if point.fits(head):
            sim.decide(start=head)
            starts += 1
        elif backfill == "none":
            sim.decide()
        else:
            sim.decide(order=point.queue)
    assert starts > 40
    result = sim.result()
    assert np.array_equal(result.start, ref.start, equal_nan=True)


def test_order_point_queue_equals_simulate_on_tiers(kth_parts: Workload, two_tiers: Path) -> None:
    for backfill in ("easy", "conservative"):
        ref = schedlab.simulate(kth_parts, backfill=backfill, platform=two_tiers, progress=False)
        sim = schedlab.Simulation(kth_parts, backfill=backfill, platform=two_tiers)
        while (point := sim.pending_decision()) is not None:
            sim.decide(order=point.queue)
        assert np.array_equal(sim.result().start, ref.start, equal_nan=True)


# ------------------------------------------------------------------ the env
gymnasium = pytest.importorskip("gymnasium")


def _env(w: Any, **kwargs: Any) -> Any:
    from schedlab.rl import SchedulingEnv

    return SchedulingEnv(w, **kwargs)


def test_rl_row_zero_is_the_job_the_pass_tries_first(tier: Path) -> None:
    env = _env(three_jobs(), queue_size=4, episode_jobs=3, backfill="none", platform=tier)
    env.reset(seed=0)
    done = False
    shown = []
    while not done:
        shown.append((env.point.now, env.point.queue))
        _, _, done, _, info = env.step(0)
    assert (100.0, (2, 1)) in shown
    assert info["result"].start.tolist() == [0.0, 110.0, 100.0]


# ------------------------------------------------------------------ finding 4
def _unknown_windows() -> Workload:
    """9 jobs; those of rows 0-5 have unknown run times (not simulable)."""
    n = 9
    run = np.array([np.nan] * 6 + [50.0] * 3)
    return Workload.from_arrays(
        {
            "job_number": np.arange(1, n + 1, dtype=float),
            "submit_time": np.arange(n, dtype=float) * 10,
            "run_time": run,
            "requested_processors": np.ones(n),
            "requested_time": np.full(n, 100.0),
            "status": np.ones(n),
        }
    )


def test_reset_draws_a_window_with_a_simulable_job() -> None:
    w = _unknown_windows()
    env = _env(w, queue_size=4, episode_jobs=3, procs=4)
    skipped = 0
    for seed in range(40):
        obs, info = env.reset(seed=seed)
        assert env.point is not None
        assert obs["mask"].sum() >= 1
        assert np.isfinite(env.episode.to_arrays()["run_time"]).any()
        skipped += info["skipped_windows"]
        env.step(0)  # never an error on the first step
    assert skipped > 0  # 4 of the 7 windows hold no simulable job
    # the same seed gives the same episode, redraws included
    env.reset(seed=5)
    first = env.episode.to_arrays()["job_number"].tolist()
    env.reset(seed=5)
    assert env.episode.to_arrays()["job_number"].tolist() == first


def test_reset_refuses_a_workload_with_no_simulable_job() -> None:
    w = _unknown_windows()
    cols = w.to_arrays().take(np.arange(6))
    env = _env(Workload(w.header, columns=cols), queue_size=4, episode_jobs=3, procs=4)
    with pytest.raises(UsageError, match=r"no job of 100 windows drawn can be simulated"):
        env.reset(seed=0)
    whole = _env(Workload(w.header, columns=cols), queue_size=4, episode_jobs=50, procs=4)
    with pytest.raises(UsageError, match="no_run_time"):
        whole.reset(seed=0)


def test_hpc2n_seed_252_repro(swf_dir: Path) -> None:
    path = swf_dir / "HPC2N-2002_excerpt-3170jobs_alea.swf"
    if not path.exists():
        pytest.skip("no HPC2N excerpt")
    env = _env(schedlab.read(path), queue_size=4, episode_jobs=3)
    obs, info = env.reset(seed=252)
    assert env.point is not None and obs["mask"].sum() >= 1
    assert info["skipped_windows"] >= 1
    env.step(0)


def test_step_after_the_end_is_a_usage_error() -> None:
    env = _env(_unknown_windows(), queue_size=4, episode_jobs=9, procs=4)
    env.reset(seed=0)
    done = False
    while not done:
        _, _, done, _, _ = env.step(0)
    with pytest.raises(UsageError, match="episode is over"):
        env.step(0)
    env.reset(seed=0)
    env.step(0)


# ------------------------------------------------------------------ finding 5
def test_check_env_passes_in_punish_mode_only() -> None:
    from gymnasium.utils.env_checker import check_env

    rng = np.random.default_rng(0)
    n = 60
    w = Workload.from_arrays(
        {
            "job_number": np.arange(1, n + 1, dtype=float),
            "submit_time": np.sort(rng.integers(0, 5000, n)).astype(float),
            "run_time": rng.integers(1, 1000, n).astype(float),
            "requested_processors": rng.integers(1, 5, n).astype(float),
            "requested_time": np.full(n, 2000.0),
            "status": np.ones(n),
        }
    )
    check_env(_env(w, queue_size=8, episode_jobs=40, procs=8), skip_render_check=True)
    with pytest.raises(ValueError, match="names no waiting job"):
        check_env(
            _env(w, queue_size=8, episode_jobs=40, procs=8, invalid_action="raise"),
            skip_render_check=True,
        )


# ------------------------------------------------------------------ finding 6
def test_observations_stay_in_the_space_for_huge_times() -> None:
    rng = np.random.default_rng(1)
    n = 40
    w = Workload.from_arrays(
        {
            "job_number": np.arange(1, n + 1, dtype=float),
            "submit_time": np.sort(rng.integers(0, 10**4, n)).astype(float),
            "run_time": np.full(n, 1e300),
            "requested_processors": rng.integers(1, 9, n).astype(float),
            "requested_time": np.full(n, 1e300),
            "user_id": rng.integers(1, 5, n).astype(float),
            "status": np.ones(n),
        }
    )
    env = _env(w, queue_size=8, episode_jobs=n, procs=16)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    done = False
    top = 0.0
    while not done:
        obs, _, done, _, _ = env.step(0)
        assert env.observation_space.contains(obs)
        top = max(top, float(obs["jobs"].max()))
    assert top == 10.0  # clipped at the bound, not wrapped or dropped
