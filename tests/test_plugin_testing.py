"""``schedlab.testing``: the helpers schedlab ships for plugin authors."""

from __future__ import annotations

import types

import pytest
import schedlab
from click.testing import CliRunner
from schedlab import Job, PolicySpec, ReaderSpec, Workload, hookimpl
from schedlab.cli import cli
from schedlab.testing import (
    assert_file_round_trip,
    assert_same_jobs,
    assert_schedule,
    plugin_registry,
    round_trip,
    schedlab_registry,  # noqa: F401 - the fixture under test
    simulated_starts,
    using_registry,
    workload_from_rows,
)

ROWS = [(0, 10, 4, 10), (1, 10, 2, 100), (2, 10, 2, 10), (3, 5, 4, 5)]


def _policy_module() -> types.ModuleType:
    """A throwaway plugin: largest job first."""
    module = types.ModuleType("widest_plugin")

    class Widest:
        def bind(self, table):
            self.size = table.size

        def key(self, job, now):
            return -self.size[job]

    @hookimpl
    def schedlab_policies():
        return [PolicySpec(name="widest", factory=Widest)]

    module.schedlab_policies = schedlab_policies
    return module


def test_plugin_registry_has_builtins_and_the_plugin_only():
    registry = plugin_registry(_policy_module())
    assert registry.policy("widest").provider == "widest_plugin"
    assert registry.has("reader", "swf") and registry.has("policy", "fcfs")
    distributions = {i.distribution for i in registry.plugin_infos()}
    assert distributions == {"schedlab", "<local>"}  # nothing else that is installed
    bare = plugin_registry(("mine", _policy_module()), builtins=False)
    assert bare.names("policy") == ["widest"] and bare.names("reader") == []


def test_fixture_makes_the_registry_current(schedlab_registry):  # noqa: F811
    registry = schedlab_registry(_policy_module())
    assert schedlab.get_registry() is registry
    result = CliRunner().invoke(cli, ["plugins", "--json"])
    assert '"widest_plugin"' in result.output


def test_using_registry_restores_the_previous_one():
    before = schedlab.get_registry()
    registry = plugin_registry(builtins=False)
    with using_registry(registry):
        assert schedlab.get_registry() is registry
    assert schedlab.get_registry() is before


def test_workload_from_rows():
    w = workload_from_rows([(0, 10, 4), {"submit_time": 5, "run_time": 1, "user_id": 3}],
                           procs=8)
    assert w.header.max_procs == 8
    assert [(j.job_number, j.submit_time, j.requested_processors, j.user_id) for j in w] == [
        (1, 0, 4, None), (2, 5, None, 3)]
    with pytest.raises(ValueError, match="not SWF fields: color"):
        workload_from_rows([{"color": 1}])


def test_golden_schedules_with_a_plugin_policy():
    registry = plugin_registry(_policy_module())
    w = workload_from_rows(ROWS, procs=4)
    assert simulated_starts(w, policy="fcfs", backfill="none", registry=registry) == {
        1: 0, 2: 10, 3: 10, 4: 20}
    # widest first: 4 (4 procs) at 10, then 2 and 3 side by side at 15.
    assert_schedule(w, {1: 0, 4: 10, 2: 15, 3: 15}, policy="widest", backfill="none",
                    registry=registry)


def test_assert_schedule_lists_every_difference():
    w = workload_from_rows(ROWS, procs=4)
    with pytest.raises(AssertionError) as info:
        assert_schedule(w, {1: 0, 2: 11, 3: 10, 5: 1}, policy="fcfs", backfill="none")
    message = str(info.value)
    assert "policy='fcfs'" in message
    assert "job 2: started at 10, expected 11" in message
    assert "job 4: started at 20, not in the golden schedule" in message
    assert "job 5: expected to start at 1, but it was not simulated" in message


def test_round_trip_and_same_jobs(tmp_path):
    w = workload_from_rows([(0, 10, 4, 10), (5, 2.5, 1, None)])
    back = round_trip(w, "swf", tmp_path, suffix=".swf")
    assert_same_jobs(w, back)
    changed = Workload.from_jobs([Job(**{**vars_of(j), "run_time": 11}) for j in w])
    with pytest.raises(AssertionError, match=r"run_time: 10 != 11"):
        assert_same_jobs(w, changed, fields=("run_time",))
    with pytest.raises(AssertionError, match="2 jobs != 1 jobs"):
        assert_same_jobs(w, back.jobs[:1])


def vars_of(job: Job) -> dict:
    return {name: getattr(job, name) for name in schedlab.SWF_FIELDS}


def _lines_module(lossy: bool) -> types.ModuleType:
    """A throwaway format: one job per line holding its job number."""
    module = types.ModuleType("lossy" if lossy else "lines")

    def read(source, **_):
        with open(source, encoding="utf-8") as fh:
            return Workload.from_jobs([Job(job_number=int(line)) for line in fh])

    def write(workload, path, **_):
        with open(path, "w", encoding="utf-8") as fh:
            for job in workload:
                fh.write(f"{job.job_number + (1 if lossy and job.job_number > 1 else 0)}\n")

    @hookimpl
    def schedlab_readers():
        return [ReaderSpec(name=module.__name__, read=read, suffixes=(".lines",))]

    @hookimpl
    def schedlab_writers():
        return [schedlab.WriterSpec(name=module.__name__, write=write, suffixes=(".lines",))]

    module.schedlab_readers, module.schedlab_writers = schedlab_readers, schedlab_writers
    return module


def test_file_round_trip(tmp_path):
    path = tmp_path / "in.lines"
    path.write_text("1\n2\n3\n", encoding="utf-8")
    registry = plugin_registry(_lines_module(lossy=False), builtins=False)
    w = assert_file_round_trip(path, registry=registry, directory=tmp_path / "out")
    assert [j.job_number for j in w] == [1, 2, 3]


def test_file_round_trip_reports_the_first_different_line(tmp_path):
    path = tmp_path / "in.lines"
    path.write_text("1\n2\n3\n", encoding="utf-8")
    registry = plugin_registry(_lines_module(lossy=True), builtins=False)
    with pytest.raises(AssertionError, match="line 2 differs after a lossy round trip"):
        assert_file_round_trip(path, registry=registry, directory=tmp_path / "out")
