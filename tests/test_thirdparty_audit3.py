"""Fixes from the third-party plugin audit, round 3 (the newer contracts):
allocation policies and strategies that write into what the machine holds
(findings 1, 2), whole runs rewritten or infinite (3, 4), ``SCHEDLAB_API``
declarations that cannot be read (5), a refusal on the idle partition under
``conservative`` (7), tiny corrections (8), warnings of plugin commands (9) and
smaller messages (10)."""

from __future__ import annotations

import types
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import schedlab
from schedlab.errors import PluginError, PluginLoadWarning, SimulationError
from schedlab.platform import NodeGroup, Partition, Platform
from schedlab.sim import StrategyError, WholeRunOutcome
from schedlab.sim.resources import Allocation, take
from schedlab.testing import workload_from_rows


def _two_partitions() -> Platform:
    """``pa``: 4 nodes ``a`` of 8 cores; ``pb``: 2 nodes ``b`` of 8 cores (shared)."""
    return Platform(
        (NodeGroup("a", 4, 8), NodeGroup("b", 2, 8)),
        (Partition("pa", ("a",), sharing="shared"), Partition("pb", ("b",), sharing="shared")),
    )


def _two_exclusive() -> Platform:
    return Platform((NodeGroup("n", 2, 8),), (Partition("batch", ("n",), sharing="exclusive"),))


def _first(view: Any, demand: Any) -> Allocation | None:
    return take(view, demand, view.nodes[view.usable(demand)])


# --------------------------------------------------------------- finding 1


class Steal:
    """Writes the other partition's nodes into ``view.nodes``."""

    name = "steal"

    def allocate(self, view: Any, demand: Any) -> Allocation | None:
        if len(view.nodes) == 4:
            view.nodes[-2:] = [4, 5]
        return _first(view, demand)


@pytest.mark.parametrize("backfill", ["none", "easy", "conservative"])
def test_writing_the_partitions_nodes_names_the_policy(backfill: str) -> None:
    w = workload_from_rows([(0, 100, 8, 100), (0, 100, 8, 100)], procs=48)
    with pytest.raises(SimulationError, match="allocation policy 'steal' wrote into its node view"):
        schedlab.simulate(w, platform=_two_partitions(), allocation=Steal(), backfill=backfill)


# --------------------------------------------------------------- finding 2


class Reuse:
    """Returns views of a buffer it rewrites at its next call."""

    name = "reuse"

    def __init__(self) -> None:
        self.nodes = np.zeros(100, dtype=np.int64)
        self.amounts = np.zeros((100, 3), dtype=np.int64)

    def allocate(self, view: Any, demand: Any) -> Allocation | None:
        a = _first(view, demand)
        if a is None:
            return None
        k = len(a.nodes)
        self.nodes[:k] = a.nodes
        self.amounts[:k, : a.amounts.shape[1]] = a.amounts
        return Allocation(self.nodes[:k], self.amounts[:k, : a.amounts.shape[1]])


ROWS = [(0, 100, 8, 100), (0, 50, 8, 50), (60, 200, 8, 200), (61, 10, 8, 10), (62, 10, 8, 10)]


@pytest.mark.parametrize("backfill", ["none", "easy", "conservative"])
def test_a_policy_reusing_its_buffer_gets_the_schedule_of_first_fit(backfill: str) -> None:
    w = workload_from_rows(ROWS, procs=16)
    plain = schedlab.simulate(
        w, platform=_two_exclusive(), allocation="first-fit", backfill=backfill
    )
    reused = schedlab.simulate(w, platform=_two_exclusive(), allocation=Reuse(), backfill=backfill)
    assert list(reused.start) == list(plain.start)
    assert reused.allocations == plain.allocations
    assert reused.allocations[0] != reused.allocations[1]  # both start at 0 on exclusive nodes


class Mutate:
    """Moves an allocation to node 0 after ``state.start`` accepted it."""

    name = "mutate"
    supports_platform = True

    def bind(self, state: Any) -> None:
        self.state = state

    def schedule(self, now: float) -> None:
        st = self.state
        for _, j in list(st.queue):
            a = st.allocation_for(j)
            if a is None:
                break
            st.start(j, a)
            a.nodes[:] = 0


def test_a_strategy_changing_an_allocation_after_the_start_changes_nothing() -> None:
    w = workload_from_rows([(0, 100, 8, 100), (0, 100, 8, 100), (10, 100, 8, 100)], procs=16)
    plain = schedlab.simulate(w, platform=_two_exclusive(), backfill="easy")
    mutated = schedlab.simulate(w, platform=_two_exclusive(), backfill=Mutate())
    assert list(mutated.start) == list(plain.start)
    assert mutated.allocations == plain.allocations


# --------------------------------------------------------------- finding 3


class WritesOnWholeRun:
    name = "writes"

    def __init__(self, what: str) -> None:
        self.what = what

    def estimates(self, table: Any) -> list[float]:
        return list(table.requested_time)

    def on_whole_run(self, plan: Any, outcome: Any) -> None:
        if self.what == "start":
            outcome.start[:] = 0.0
        elif self.what == "estimate":
            plan.estimate[:] = 1.0
        else:
            plan.run_time[:] = 1.0


@pytest.mark.parametrize("what", ["start", "estimate", "run_time"])
def test_on_whole_run_cannot_rewrite_the_checked_outcome(what: str) -> None:
    w = workload_from_rows([(0, 100, 4, 100), (10, 100, 4, 100), (20, 100, 4, 100)], procs=4)
    with pytest.raises(ValueError, match="read-only"):
        schedlab.simulate(
            w,
            estimator=WritesOnWholeRun(what),
            backfill="easy",
            backfill_options={"kernel": "compiled"},
        )


def test_on_whole_run_that_only_reads_keeps_the_schedule() -> None:
    class Reads:
        name = "reads"
        seen: list[float] = []

        def estimates(self, table: Any) -> list[float]:
            return list(table.requested_time)

        def on_whole_run(self, plan: Any, outcome: Any) -> None:
            self.seen.extend(float(x) for x in outcome.start)

    w = workload_from_rows([(0, 100, 4, 100), (10, 100, 4, 100), (20, 100, 4, 100)], procs=4)
    est = Reads()
    r = schedlab.simulate(
        w, estimator=est, backfill="easy", backfill_options={"kernel": "compiled"}
    )
    assert r.stats["whole_run"] is True
    assert list(r.start) == est.seen == [0.0, 100.0, 200.0]


# --------------------------------------------------------------- finding 4


class BadStart:
    name = "badstart"

    def __init__(self, value: float) -> None:
        self.value = value

    def bind(self, state: Any) -> None:
        self.state = state

    def schedule(self, now: float) -> None:
        self.state.start_from_head()

    def run_whole(self, plan: Any) -> WholeRunOutcome:
        start = plan.submit.copy()
        start[1] = self.value
        return WholeRunOutcome(start=start, passes=3)


@pytest.mark.parametrize("value", [np.inf, np.nan])
def test_a_whole_run_with_a_start_that_is_not_finite_names_the_strategy(value: float) -> None:
    w = workload_from_rows([(0, 100, 1, 100), (10, 100, 1, 100), (20, 100, 1, 100)], procs=4)
    with pytest.raises(
        StrategyError, match=r"backfill 'badstart'.*job 2 \(index 1\) never started"
    ):
        schedlab.simulate(w, backfill=BadStart(value))


def test_a_node_whole_run_with_an_infinite_start_is_refused() -> None:
    from schedlab.sim import NodeMachine
    from schedlab.sim.whole_run import WholeRun, check_node_outcome

    machine = NodeMachine(_two_exclusive(), object())
    plan = WholeRun(
        procs=16,
        submit=np.zeros(2),
        size=np.array([8, 8]),
        run_time=np.array([10.0, 10.0]),
        estimate=np.array([10.0, 10.0]),
        key=np.zeros(2),
        strategy_name="inf",
        machine=machine,
        partition_of=np.zeros(2, dtype=np.int64),
    )
    outcome = WholeRunOutcome(
        start=np.array([0.0, np.inf]),
        passes=1,
        node_offset=np.array([0, 1, 2]),
        nodes=np.array([0, 0]),
        amounts=np.array([[8, machine.capacity[0, 1], 0]] * 2),
    )
    with pytest.raises(StrategyError, match=r"index 1.*never started"):
        check_node_outcome(plan, outcome, [1, 2])


# --------------------------------------------------------------- finding 5


class _BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("repr boom")


class _PropertyRaises:
    @property
    def SCHEDLAB_API(self) -> str:
        raise RuntimeError("property boom")

    @schedlab.hookimpl
    def schedlab_metrics(self) -> list[Any]:
        return []


def _lazy_module() -> types.ModuleType:
    """A module with a PEP 562 ``__getattr__`` importing unknown names."""
    module = types.ModuleType("tp3_lazy")

    def getattr_(name: str) -> Any:
        import importlib

        return importlib.import_module(f"tp3_lazy_{name}")

    module.__getattr__ = getattr_  # type: ignore[attr-defined]
    module.schedlab_metrics = schedlab.hookimpl(lambda: [])  # type: ignore[attr-defined]
    return module


def _with_api(value: Any) -> types.ModuleType:
    module = types.ModuleType("tp3_badrepr")
    module.SCHEDLAB_API = value  # type: ignore[attr-defined]
    module.schedlab_metrics = schedlab.hookimpl(lambda: [])  # type: ignore[attr-defined]
    return module


@pytest.mark.parametrize(
    "make, shown",
    [
        (_lazy_module, "ModuleNotFoundError"),
        (lambda: _with_api(_BadRepr()), "repr boom"),
        (_PropertyRaises, "property boom"),
    ],
)
def test_an_unreadable_api_declaration_is_a_plugin_error(make: Any, shown: str) -> None:
    with pytest.raises(PluginError, match=rf"plugin 'odd'.*SCHEDLAB_API.*{shown}"):
        schedlab.build_registry(plugins=[("odd", make())])


def test_an_unreadable_api_declaration_disables_an_entry_point(monkeypatch, tmp_path: Path) -> None:
    from importlib import metadata

    from schedlab.registry import PluginHost

    package = tmp_path / "tp3lazy"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import importlib\n"
        "def __getattr__(name):\n"
        "    return importlib.import_module(f'{__name__}_{name}')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for variable in ("SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD", "SCHEDLAB_ALLOW_PLUGINS"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("SCHEDLAB_BLOCK_PLUGINS", "")
    ep = metadata.EntryPoint(name="tp3lazy", value="tp3lazy", group="schedlab")
    host = PluginHost()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        host.load_entry_points([ep], strict=False)
    messages = [str(w.message) for w in caught if issubclass(w.category, PluginLoadWarning)]
    assert len(messages) == 1 and "'tp3lazy'" in messages[0] and "SCHEDLAB_API" in messages[0]
    assert host.infos["tp3lazy"].status == "failed"


# --------------------------------------------------------------- finding 9


@pytest.mark.parametrize("command", ["nosuchcmd", "tp3-not-a-command"])
def test_plugin_warnings_are_one_line_for_commands_looked_up_in_the_registry(
    monkeypatch, capsys, command: str
) -> None:
    import schedlab.registry as registry_module
    from schedlab.cli import main

    real = registry_module.get_registry

    def warning_registry() -> Any:
        warnings.warn("schedlab plugin 'odd' is disabled: a test", PluginLoadWarning, stacklevel=1)
        return real()

    monkeypatch.setattr(registry_module, "get_registry", warning_registry)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        with pytest.raises(SystemExit):
            main([command])
    err = capsys.readouterr().err
    assert "schedlab: warning: schedlab plugin 'odd' is disabled: a test" in err
    assert "PluginLoadWarning" not in err


# --------------------------------------------------------------- finding 7


class Never:
    """Refuses every job of partition ``pa``."""

    name = "never"

    def allocate(self, view: Any, demand: Any) -> Allocation | None:
        if len(view.nodes) == 4:
            return None
        return _first(view, demand)


@pytest.mark.parametrize("backfill", ["none", "easy", "conservative"])
def test_a_refusal_on_the_idle_partition_names_the_policy(backfill: str) -> None:
    w = workload_from_rows([(0, 100, 8, 100), (0, 100, 8, 100)], procs=48)
    with pytest.raises(
        SimulationError, match=r"allocation policy 'never' refused job 1 \(index 0\) on its idle"
    ):
        schedlab.simulate(w, platform=_two_partitions(), allocation=Never(), backfill=backfill)


# --------------------------------------------------------------- finding 8


class TinyCorrection:
    name = "tiny"

    def __init__(self, step: float) -> None:
        self.step = step
        self.calls = 0

    def estimates(self, table: Any) -> list[float]:
        return [10.0 for _ in table.requested_time]

    def correct(self, job: int, elapsed: float) -> float:
        self.calls += 1
        if self.calls > 200_000:
            raise RuntimeError("asked for a correction too often")
        return elapsed + self.step


@pytest.mark.parametrize("step", [1e-12, 1e-9])
def test_a_tiny_correction_is_raised_to_a_millisecond(step: float) -> None:
    from schedlab.sim.runner import run_simulation

    seen: dict[str, Any] = {}
    w = workload_from_rows([(1000, 100, 1, 100)], procs=4)
    est = TinyCorrection(step)
    result = run_simulation(
        w, policy="fcfs", backfill="easy", procs=None, estimator=est, kill=False,
        dependencies=False, policy_options=None, backfill_options=None,
        estimator_options=None, registry=None, progress=False,
        inspect=lambda engine: seen.setdefault("engine", engine),
    )  # fmt: skip
    assert list(result.start) == [1000.0]
    loop = seen["engine"].correction
    # 90 s past the estimate of 10 s, 1 ms at a time (give or take rounding)
    assert 89_000 < loop.corrections_raised <= 90_001
    assert loop.corrections_raised == loop.corrections == est.calls
    # counted in the result and said in a note
    assert result.stats["corrections_raised"] == loop.corrections_raised
    assert any("raised to 1 ms (corrections_raised)" in n for n in result.stats["notes"])


def test_a_correction_of_a_millisecond_or_more_is_kept() -> None:
    from schedlab.sim.runner import run_simulation

    seen: dict[str, Any] = {}
    w = workload_from_rows([(1000, 100, 1, 100)], procs=4)
    est = TinyCorrection(5.0)
    run_simulation(
        w, policy="fcfs", backfill="easy", procs=None, estimator=est, kill=False,
        dependencies=False, policy_options=None, backfill_options=None,
        estimator_options=None, registry=None, progress=False,
        inspect=lambda engine: seen.setdefault("engine", engine),
    )  # fmt: skip
    loop = seen["engine"].correction
    assert (loop.corrections, loop.corrections_raised) == (18, 0)


# --------------------------------------------------------------- finding 10


class Negative:
    """The right total, with -1 core on an extra node and +1 on the first."""

    name = "negative"

    def allocate(self, view: Any, demand: Any) -> Allocation | None:
        a = _first(view, demand)
        if a is None:
            return None
        extra = int(view.nodes[-1])
        nodes = np.array([*a.nodes.tolist(), extra], dtype=np.int64)
        amounts = np.vstack([a.amounts, np.zeros_like(a.amounts[:1])])
        amounts[-1, 0] = -1
        amounts[0, 0] += 1
        return Allocation(nodes, amounts)


def test_a_negative_amount_is_named_as_such() -> None:
    w = workload_from_rows([(0, 100, 2, 100)], procs=48)
    with pytest.raises(SimulationError, match="'negative' returned a negative amount on node a"):
        schedlab.simulate(w, platform=_two_partitions(), allocation=Negative(), backfill="easy")


class UnhashableOrder:
    name = "unhashable"
    node_order = ["index"]

    def allocate(self, view: Any, demand: Any) -> Allocation | None:
        return _first(view, demand)


def test_an_unhashable_node_order_is_a_one_line_error_naming_the_policy() -> None:
    w = workload_from_rows([(0, 100, 2, 100)], procs=48)
    with pytest.raises(SimulationError, match=r"allocation policy 'unhashable': node_order="):
        schedlab.simulate(
            w, platform=_two_partitions(), allocation=UnhashableOrder(), backfill="easy"
        )


@pytest.mark.parametrize("scale", [0.0, -1.0, float("nan"), float("inf")])
def test_online_linear_model_refuses_a_scale_that_is_not_positive(scale: float) -> None:
    from schedlab.sim import OnlineLinearModel

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"OnlineLinearModel: scale="):
            OnlineLinearModel(
                static=np.ones((3, 1)), window=2, batch=2, rate=0.1, under_weight=2.0, scale=scale
            )


class ForPlatform:
    name = "forplat"

    def __init__(self, returned: str) -> None:
        self.returned = returned

    def bind(self, state: Any) -> None:
        self.state = state

    def schedule(self, now: float) -> None:
        self.state.start_from_head()

    def for_platform(self) -> Any:
        if self.returned == "none":
            return None
        if self.returned == "str":
            return "easy"
        if self.returned == "class":
            return Mutate
        return self  # without supports_platform


@pytest.mark.parametrize("returned", ["none", "str", "class", "self"])
def test_for_platform_must_return_a_platform_strategy(returned: str) -> None:
    w = workload_from_rows([(0, 100, 2, 100)], procs=48)
    with pytest.raises(SimulationError, match=r"backfill 'forplat': for_platform\(\) returned"):
        schedlab.simulate(w, platform=_two_partitions(), backfill=ForPlatform(returned))


@pytest.mark.parametrize("returned", ["none", "str"])
def test_a_stepping_simulation_checks_for_platform_too(returned: str) -> None:
    from schedlab import Simulation

    w = workload_from_rows([(0, 100, 2, 100)], procs=48)
    with pytest.raises(SimulationError, match=r"backfill 'forplat': for_platform\(\) returned"):
        Simulation(w, platform=_two_partitions(), backfill=ForPlatform(returned))
