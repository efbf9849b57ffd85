"""A whole run that makes its own predictions keeps them as an array
(``JobTable.keep_estimates``): the output reads the array, and the table's list,
which the state and the components share since ``bind``, is filled in place the
first time it is read."""

from __future__ import annotations

import copy
import math
import pickle
from typing import Any

import attrs
import numpy as np
import pytest
from schedlab.sim import JobTable
from schedlab.sim.runner import run_simulation
from workload_rows import workload_from_rows

pytest.importorskip("numba")


def table_of(n: int) -> JobTable:
    return JobTable(
        procs=4,
        row=list(range(n)),
        job_number=list(range(1, n + 1)),
        submit=[0.0] * n,
        size=[1] * n,
        requested_time=[10.0] * n,
        run_time=[5.0] * n,
        estimate=[math.nan] * n,
        user=[0] * n,
        group=[-1] * n,
        queue=[-1] * n,
        partition=[-1] * n,
    )


def test_the_list_is_filled_in_place_when_first_read() -> None:
    table = table_of(3)
    shared = table.estimate  # what bind() hands the state and the components
    values = np.array([1.5, 2.0, 7.25])
    table.keep_estimates(values)
    assert table.estimate_array() is values
    assert all(math.isnan(v) for v in shared)  # not built yet
    assert type(table) is not JobTable and isinstance(table, JobTable)
    got = table.estimate
    assert got is shared and shared == [1.5, 2.0, 7.25]
    assert all(type(v) is float for v in got)
    # Once read, a plain table again (no property on the loop's reads).
    assert type(table) is JobTable
    np.testing.assert_array_equal(table.estimate_array(), values)
    assert table.estimate_array() is not values


def test_kept_twice_then_set() -> None:
    table = table_of(2)
    shared = table.estimate
    table.keep_estimates(np.array([1.0, 2.0]))
    table.keep_estimates(np.array([3.0, 4.0]))
    assert table.estimate is shared and shared == [3.0, 4.0]
    table.keep_estimates(np.array([5.0, 6.0]))
    table.estimate = [8.0, 9.0]  # a new list replaces what was kept
    assert type(table) is JobTable and table.estimate == [8.0, 9.0]
    assert shared == [3.0, 4.0]


def test_a_subclass_of_the_table_fills_its_list_at_once() -> None:
    class Mine(JobTable):
        __slots__ = ()

    table = table_of(2)
    mine = Mine(**{a.name: getattr(table, a.name) for a in attrs.fields(JobTable)})
    shared = mine.estimate
    mine.keep_estimates(np.array([1.0, 2.0]))
    assert type(mine) is Mine and shared == [1.0, 2.0]
    np.testing.assert_array_equal(mine.estimate_array(), [1.0, 2.0])


def test_a_table_with_kept_estimates_pickles_and_copies_as_a_plain_table() -> None:
    table = table_of(2)
    table.keep_estimates(np.array([1.0, 2.0]))
    back = pickle.loads(pickle.dumps(table))
    assert type(back) is JobTable and back.estimate == [1.0, 2.0]
    table.keep_estimates(np.array([3.0, 4.0]))
    twin = copy.deepcopy(table)
    assert type(twin) is JobTable and twin.estimate == [3.0, 4.0]


def run(estimator: str, per_pass: bool) -> tuple[Any, Any]:
    """FCFS + EASY (compiled) with ``estimator`` on jobs that outlive their
    requested times (corrections); returns the result and the engine."""
    rows = [
        (float(t * 30), float(60 + (t * 37) % 900), float(120 + (t * 53) % 600), 1 + t % 4, t % 5)
        for t in range(300)
    ]
    seen: list[Any] = []

    def inspect(engine: Any) -> None:
        seen.append(engine)
        if per_pass:
            engine.state.reservation_log = {}

    result = run_simulation(
        workload_from_rows(rows, 8), policy="fcfs", backfill="easy", procs=None,
        estimator=estimator, kill=False, dependencies=False, policy_options=None,
        backfill_options={"kernel": "compiled"}, estimator_options=None, registry=None,
        progress=False, inspect=inspect,
    )  # fmt: skip
    return result, seen[0]


@pytest.mark.parametrize("estimator", ["easy++", "learned"])
def test_a_whole_run_with_predictions_keeps_them_as_an_array(estimator: str) -> None:
    whole, engine = run(estimator, per_pass=False)
    per_pass, loop = run(estimator, per_pass=True)
    assert engine.whole_run and not loop.whole_run
    assert whole.stats["corrections"] > 10
    table, state = engine.table, engine.state
    shared = loop.table.estimate
    # The output read the array: the list was never built.
    assert type(table) is not JobTable
    assert "estimate" not in vars(state)
    np.testing.assert_array_equal(whole.estimate, per_pass.estimate)
    np.testing.assert_array_equal(table.estimate_array(), state.column("estimate"))
    # Read from the state first: the table's list, filled, the same floats as
    # the pass-by-pass run's.
    got = state.estimate
    assert got is table.estimate and type(table) is JobTable
    assert got == shared


def test_a_whole_run_on_given_estimates_keeps_their_array_for_the_output() -> None:
    whole, engine = run("requested", per_pass=False)
    per_pass, loop = run("requested", per_pass=True)
    assert engine.whole_run and type(engine.table) is JobTable
    state = engine.state
    assert "estimate" not in vars(state)  # the output read the kept array
    np.testing.assert_array_equal(whole.estimate, per_pass.estimate)
    assert state.estimate is engine.table.estimate
    assert state.estimate == loop.table.estimate
