"""Machine usage of a node-level run (``result.stats["platform"]``) on nodes at the
platform limits: a node that declares exactly 4 TiB of memory (``MAX_MEMORY``, the
most a node may have) is bounded, and so is a consumable of exactly 2**42 per node
(``MAX_CONSUMABLE``). Only memory a node does not declare is unbounded, and only
that gives no memory utilization (``None``). Both amounts equal the simulator's
"unbounded" amount (``schedlab.sim.resources.UNBOUNDED``), which the utilization
used to take for the marker."""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from schedlab.platform import MAX_CONSUMABLE, MAX_MEMORY, load_platform

TIB = 2**40


def _platform(tmp_path: Path, *groups: str) -> Path:
    """A platform file with the given ``[node_groups.NAME]`` bodies (groups
    ``g0``, ``g1`` ...), one shared partition over all of them."""
    names = [f"g{i}" for i in range(len(groups))]
    text = "".join(f"[node_groups.{n}]\n{body}\n" for n, body in zip(names, groups, strict=True))
    text += f'[partitions.all]\nnodes = {names!r}\nsharing = "shared"\n'.replace("'", '"')
    path = tmp_path / "platform.toml"
    path.write_text(text)
    return path


def _job(number: int, cores: int, memory_per_core: float, **requests: int) -> schedlab.Job:
    return schedlab.Job(
        job_number=number,
        submit_time=0.0,
        run_time=100.0,
        requested_time=100.0,
        requested_processors=cores,
        requested_memory=memory_per_core / 1024,  # SWF: KB per processor
        status=1,
        extras={f"request.{name}": amount for name, amount in requests.items()},
    )


def _usage(platform: Path, *jobs: schedlab.Job) -> dict[str, float | None]:
    result = schedlab.simulate(
        schedlab.Workload.from_jobs(list(jobs)), platform=platform, progress=False
    )
    usage: dict[str, float | None] = result.stats["platform"]["utilization_by_dimension"]
    return usage


def test_a_node_of_exactly_4_tib_has_a_memory_utilization(tmp_path: Path) -> None:
    path = _platform(tmp_path, 'count = 2\ncores = 4\nmemory = "4T"')
    assert load_platform(path).node_groups[0].memory == MAX_MEMORY == 4 * TIB
    # two jobs of 4 cores x 256 GiB (1 TiB each), one per node, both for the whole span
    usage = _usage(path, _job(1, 4, TIB / 4), _job(2, 4, TIB / 4))
    assert usage["cores"] == 1.0
    assert usage["memory"] == pytest.approx(0.25)  # 2 TiB of 8 TiB, all the time


def test_4_tib_in_bytes_is_bounded_too(tmp_path: Path) -> None:
    path = _platform(tmp_path, f"count = 1\ncores = 2\nmemory = {MAX_MEMORY}")
    usage = _usage(path, _job(1, 2, TIB))
    assert usage["memory"] == pytest.approx(0.5)


def test_undeclared_memory_is_still_unbounded(tmp_path: Path) -> None:
    alone = _platform(tmp_path, "count = 2\ncores = 4")
    assert _usage(alone, _job(1, 4, TIB / 4))["memory"] is None
    # some node without memory: the machine's memory is unbounded, even beside 4 TiB
    mixed = _platform(tmp_path, 'count = 1\ncores = 4\nmemory = "4T"', "count = 1\ncores = 4")
    usage = _usage(mixed, _job(1, 4, TIB / 4), _job(2, 4, TIB / 4))
    assert usage["memory"] is None and usage["cores"] == 1.0


def test_a_consumable_at_its_limit_has_a_utilization(tmp_path: Path) -> None:
    path = _platform(
        tmp_path, f'count = 1\ncores = 4\nmemory = "1T"\nconsumables = {{ lic = {MAX_CONSUMABLE} }}'
    )
    usage = _usage(path, _job(1, 2, 2**30, lic=MAX_CONSUMABLE // 4))
    assert usage["lic"] == pytest.approx(0.25)
    assert usage["cores"] == pytest.approx(0.5)


def _report_dimensions(platform: Path, *jobs: schedlab.Job) -> dict:
    """The report's utilization-over-time curves of a platform run, by dimension."""
    from schedlab.report_nodes import dimension_steps, node_schedule

    result = schedlab.simulate(
        schedlab.Workload.from_jobs(list(jobs)), platform=platform, progress=False
    )
    nodes = node_schedule(result.workload)
    assert nodes is not None
    return dimension_steps(result.workload.to_arrays(), nodes)


def test_the_report_draws_memory_of_nodes_at_the_limit(tmp_path: Path) -> None:
    """The report's memory curve: drawn for 4 TiB nodes (the sum of their memory,
    8 TiB, is bounded), left out when some node declares no memory."""
    path = _platform(tmp_path, 'count = 2\ncores = 4\nmemory = "4T"')
    curves = _report_dimensions(path, _job(1, 4, TIB / 4), _job(2, 4, TIB / 4))
    assert set(curves) >= {"cores", "memory"}
    assert curves["memory"][1].max() == pytest.approx(25.0)  # 2 TiB of 8 TiB
    mixed = _platform(tmp_path, 'count = 1\ncores = 4\nmemory = "4T"', "count = 1\ncores = 4")
    curves = _report_dimensions(mixed, _job(1, 4, TIB / 4), _job(2, 4, TIB / 4))
    assert "memory" not in curves and "cores" in curves
