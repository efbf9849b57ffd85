"""Every registered backfilling strategy (the built-in ones and any plugin's) keeps
the invariants of :func:`schedlab.testing.check_backfill`, and a strategy that
breaks one is stopped with an error naming it, the job and the time."""

from __future__ import annotations

from typing import Any

import pytest
import schedlab
from schedlab.errors import SimulationError, UsageError
from schedlab.invariants import random_workload as random_workload_for_tests
from schedlab.policies.backfill.depth import Depth
from schedlab.policies.backfill.reference import ReferenceConservative
from schedlab.registry import get_registry
from schedlab.sim import SchedulerState, StrategyError
from schedlab.testing import check_backfill


def registered() -> list[str]:
    return sorted(spec.name for spec in get_registry().all("backfill"))


@pytest.mark.parametrize("name", registered())
def test_every_registered_strategy_keeps_the_invariants(name: str) -> None:
    check_backfill(name, seeds=range(12))


@pytest.mark.parametrize("factory", [ReferenceConservative, lambda: Depth(3)])
def test_the_reference_strategies_keep_the_invariants(factory: Any) -> None:
    check_backfill(factory, seeds=range(8))


class Greedy:
    """Starts every waiting job, fit or not: breaks the machine's invariant."""

    name = "greedy"

    def bind(self, state: SchedulerState) -> None:
        self.state = state

    def schedule(self, now: float) -> None:
        for _, j in list(self.state.queue):
            self.state.start(j)


class Backwards:
    """Promises never to move a reservation later, then does."""

    name = "backwards"
    monotone_reservations = True

    def bind(self, state: SchedulerState) -> None:
        self.state = state

    def schedule(self, now: float) -> None:
        state = self.state
        for _, j in state.queue:
            r = state.reservation[j]
            state.reserve(j, now + 10 if r != r else r + 1)
        state.start_from_head()


class Ghost:
    """Starts a job that is not waiting."""

    name = "ghost"

    def bind(self, state: SchedulerState) -> None:
        self.state = state

    def schedule(self, now: float) -> None:
        self.state.start_from_head()
        self.state.start(self.state.n - 1 if self.state.queue else 0)


def test_a_strategy_starting_a_job_that_does_not_fit_is_named() -> None:
    w = random_workload_for_tests(seed=3, jobs=20, procs=4)
    with pytest.raises(StrategyError, match=r"backfill 'greedy' broke an invariant at t=\d+.*"
                       r"job \d+ \(index \d+\) started with \d+ processors but only \d+ are free"):
        schedlab.simulate(w, backfill=Greedy(), progress=False)


def test_a_reservation_moved_later_against_the_contract_is_named() -> None:
    w = random_workload_for_tests(seed=3, jobs=20, procs=4)
    with pytest.raises(StrategyError, match=r"'backwards'.*reservation moved later"):
        schedlab.simulate(w, backfill=Backwards(), progress=False)


def test_starting_a_job_that_is_not_waiting_is_named() -> None:
    w = random_workload_for_tests(seed=3, jobs=20, procs=4)
    with pytest.raises(StrategyError, match=r"'ghost'.*not waiting"):
        schedlab.simulate(w, backfill=Ghost(), progress=False)


def test_a_strategy_error_is_one_line_with_exit_2_on_the_command_line(
    capsys: Any, swf_dir: Any
) -> None:
    import types

    from schedlab import hookimpl
    from schedlab.cli import main
    from schedlab.plugin_types import BackfillSpec
    from schedlab.testing import plugin_registry, using_registry

    plugin = types.ModuleType("greedy_plugin")
    plugin.schedlab_backfills = hookimpl(  # type: ignore[attr-defined]
        lambda: [BackfillSpec(name="greedy", description="broken", factory=Greedy)]
    )
    with using_registry(plugin_registry(plugin)), pytest.raises(SystemExit) as exit_:
        main(["simulate", str(swf_dir / "lublin_256.swf"), "--backfill", "greedy"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "backfill 'greedy' broke an invariant" in lines[0], lines


def test_the_checker_catches_a_broken_strategy() -> None:
    class LateStarter:
        """Never starts anything: jobs are left waiting."""

        name = "late"

        def bind(self, state: SchedulerState) -> None:
            self.state = state

        def schedule(self, now: float) -> None:
            pass

    with pytest.raises(SimulationError, match="still waiting"):
        check_backfill(LateStarter, seeds=range(1))


@pytest.mark.parametrize(
    ("backfill", "options", "message"),
    [
        ("easy", {"order": "longest"}, r"backfill easy: option order='longest'"),
        ("conservative", {"kernel": "gpu"}, r"backfill conservative: option kernel='gpu'"),
        ("easy", {"colour": "red"}, r"backfill.*easy.*colour"),
        ("depth", {"depth": "-1"}, r"depth"),
    ],
)
def test_bad_strategy_options_are_one_line_errors(
    backfill: str, options: dict[str, str], message: str
) -> None:
    w = random_workload_for_tests(seed=1, jobs=5, procs=4)
    with pytest.raises(UsageError, match=message) as info:
        schedlab.simulate(w, backfill=backfill, backfill_options=options, progress=False)
    assert "\n" not in str(info.value)


def test_a_depth_object_of_the_old_protocol_still_works_with_a_deprecation() -> None:
    from schedlab.compat import SchedlabDeprecationWarning

    class OldStyle:
        reservation_depth = 1

    w = random_workload_for_tests(seed=2, jobs=25, procs=6)
    with pytest.warns(SchedlabDeprecationWarning, match="reservation_depth") as caught:
        old = schedlab.simulate(w, backfill=OldStyle(), progress=False)
    # The version it was deprecated in is the one that has it (CHANGELOG [0.1.0]).
    message = str(caught[0].message)
    assert "deprecated since schedlab 0.1 and will be removed in 0.3" in message
    assert "use bind(state) and schedule(now)" in message
    new = schedlab.simulate(w, backfill="easy", progress=False)
    assert old.start.tolist() == new.start.tolist()
