"""The public contract of ``schedlab.simulate`` and ``schedlab simulate``:
machine size, exclusions, the result workload, components given as objects,
option validation, and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import schedlab
from click.testing import CliRunner
from schedlab.cli import cli, main
from schedlab.errors import SimulationError, UsageError
from schedlab.model import Header, Job, Workload


def small(procs: int | None = 4) -> Workload:
    header = Header()
    header.set("Computer", "test machine")
    if procs is not None:
        header.set("MaxProcs", procs)
    return Workload.from_arrays(
        {
            "job_number": [1, 2, 3, 4, 5, 6],
            "submit_time": [0, 1, 2, 3, np.nan, 5],
            "run_time": [10, 5, 5, np.nan, 5, 5],
            "requested_time": [10, 5, 5, 5, 5, 5],
            "requested_processors": [2, 0, 8, 1, 1, -1],
            "allocated_processors": [2, np.nan, 8, 1, 1, 3],
            "user_id": [1, 2, 3, 4, 5, 6],
            "status": [1, 1, 1, 1, 1, 1],
        },
        header=header,
    )


def test_exclusions_are_counted_by_reason_and_never_dropped_silently():
    result = schedlab.simulate(small(), progress=False)
    assert result.stats["excluded"] == {
        "no_submit_time": 1,
        "no_size": 1,
        "larger_than_machine": 1,
        "no_run_time": 1,
    }
    assert result.to_dict()["excluded"] == {
        "no_submit_time": [5],
        "no_size": [2],
        "larger_than_machine": [3],
        "no_run_time": [4],
    }
    assert {k: v.tolist() for k, v in result.excluded.items()} == {
        "no_submit_time": [4],
        "no_size": [1],
        "larger_than_machine": [2],
        "no_run_time": [3],
    }
    cols = result.workload.to_arrays()
    assert cols["job_number"].tolist() == [1, 6]
    # Size: requested processors, else allocated (job 6 asks -1, was given 3).
    assert cols["allocated_processors"].tolist() == [2, 3]
    assert result.stats["jobs_simulated"] == 2
    assert result.stats["jobs_in"] == 6


def test_machine_size_comes_from_the_header_or_procs():
    assert schedlab.simulate(small(), progress=False).procs == 4
    assert schedlab.simulate(small(), procs=16, progress=False).procs == 16
    nodes_only = small(None)
    nodes_only.header.set("MaxNodes", 8)
    assert schedlab.simulate(nodes_only, progress=False).procs == 8


def test_no_machine_size_is_a_clear_error():
    with pytest.raises(SimulationError, match="machine size is unknown"):
        schedlab.simulate(small(None), progress=False)


def test_result_workload_keeps_the_header_and_every_other_field():
    result = schedlab.simulate(small(), procs=10, progress=False)
    header = result.workload.header
    assert header.max_procs == 10
    assert header.computer == "test machine"
    assert any("policy=fcfs backfill=easy" in note for note in header.notes)
    cols = result.workload.to_arrays()
    assert cols["user_id"].tolist() == [1, 3, 6]
    assert cols["requested_time"].tolist() == [10, 5, 5]
    assert result.stats["peak_memory_bytes"] > 0
    assert result.stats["events"] == 6  # 3 submissions + 3 finishes
    json.dumps(result.to_dict())


def test_job_objects_keep_their_rich_fields_and_extras():
    jobs = [
        Job(
            job_number=1,
            submit_time=0,
            run_time=10,
            requested_time=20,
            requested_processors=2,
            name="first",
            extras={"site": "x"},
        ),
        Job(
            job_number=2,
            submit_time=1,
            run_time=5,
            requested_time=5,
            requested_processors=2,
            account="acct",
        ),
    ]
    header = Header()
    header.set("MaxProcs", 2)
    result = schedlab.simulate(Workload.from_jobs(jobs, header), progress=False)
    out = result.workload.jobs
    assert out[0].name == "first" and out[0].extras == {"site": "x"}
    assert out[1].account == "acct"
    assert (out[1].wait_time, out[1].start_time) == (9, 10)


def test_a_policy_object_needs_no_entry_point():
    class Widest:
        def bind(self, table):
            self.size = table.size

        def key(self, job, now):
            return -self.size[job]

    header = Header()
    header.set("MaxProcs", 4)
    w = Workload.from_arrays(
        {
            "submit_time": [0, 1, 2],
            "run_time": [10, 5, 5],
            "requested_time": [10, 5, 5],
            "requested_processors": [4, 2, 3],
        },
        header=header,
    )
    result = schedlab.simulate(w, policy=Widest(), backfill="none", progress=False)
    assert result.start.tolist() == [0, 15, 10]
    assert result.policy == "widest"
    # A plain key function works too.
    by_function = schedlab.simulate(
        w, policy=lambda job, now, table: -table.size[job], backfill="none", progress=False
    )
    assert by_function.start.tolist() == [0, 15, 10]


def test_options_are_validated_with_one_line_errors():
    with pytest.raises(UsageError, match="unknown option 'windw'"):
        schedlab.simulate(small(), policy="psp", policy_options={"windw": "5"}, progress=False)
    with pytest.raises(UsageError, match="window='x': expected int"):
        schedlab.simulate(small(), policy="psp", policy_options={"window": "x"}, progress=False)
    with pytest.raises(UsageError, match="edges must increase"):
        schedlab.simulate(
            small(), policy="psp", policy_options={"edges": "0.5,0.2"}, progress=False
        )
    with pytest.raises(schedlab.SchedlabError, match="unknown policy 'nope'"):
        schedlab.simulate(small(), policy="nope", progress=False)
    with pytest.raises(UsageError, match="depth"):
        schedlab.simulate(
            small(), backfill="depth", backfill_options={"depth": "-2"}, progress=False
        )


def test_name_with_options_spec():
    result = schedlab.simulate(small(), policy="psp:window=3", progress=False)
    assert result.options["policy"]["window"] == 3


def test_progress_callback_is_called():
    calls = []
    schedlab.simulate(small(), progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1] == (2, 2)


def test_estimate_fallback_when_the_request_is_unknown():
    header = Header()
    header.set("MaxProcs", 2)
    header.set("MaxRuntime", 100)
    w = Workload.from_arrays(
        {"submit_time": [0, 1], "run_time": [10, 5], "requested_processors": [2, 1]},
        header=header,
    )
    result = schedlab.simulate(w, progress=False)
    assert result.stats["estimate_fallbacks"] == 2
    assert result.estimate.tolist() == [100, 100]
    assert result.stats["killed"] == 0


def test_registered_components(registry):
    assert set(registry.names("policy")) >= {
        "fcfs",
        "sjf",
        "ljf",
        "smallest",
        "largest",
        "wfp3",
        "unicef",
        "psp",
        "multifactor",
    }
    assert set(registry.names("backfill")) >= {"none", "easy", "conservative", "depth"}
    assert set(registry.names("estimator")) >= {"requested", "actual", "user-average"}


# ----------------------------------------------------------------------------- CLI


def write_small(tmp_path: Path) -> Path:
    path = tmp_path / "in.swf"
    schedlab.write(small(), path)
    return path


def test_cli_simulate_writes_the_schedule(tmp_path: Path):
    source = write_small(tmp_path)
    out = tmp_path / "out.swf"
    result = CliRunner().invoke(
        cli,
        ["simulate", str(source), "--policy", "sjf", "--backfill", "conservative", "-o", str(out)],
    )
    assert result.exit_code == 0, result.output
    assert "sjf + conservative" in result.output
    back = schedlab.read(out)
    assert back.to_arrays()["job_number"].tolist() == [1, 6]
    assert back.header.max_procs == 4


def test_cli_simulate_json(tmp_path: Path):
    source = write_small(tmp_path)
    result = CliRunner().invoke(
        cli, ["simulate", str(source), "--policy", "psp", "--option", "window=4", "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["simulation"]["options"]["policy"]["window"] == 4
    assert payload["simulation"]["stats"]["jobs_simulated"] == 2
    assert "metrics" in payload


def test_cli_errors_are_one_line(tmp_path: Path, capsys):
    source = tmp_path / "noheader.swf"
    source.write_text("1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["simulate", str(source)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "machine size is unknown" in err[0]
    with pytest.raises(SystemExit):
        main(["simulate", str(source), "--procs", "4", "--option", "nokey"])
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "expected key=value" in err[0]


def test_cli_no_kill_and_dependencies_flags(tmp_path: Path):
    source = write_small(tmp_path)
    result = CliRunner().invoke(
        cli, ["simulate", str(source), "--no-kill", "--dependencies", "--json"]
    )
    assert result.exit_code == 0, result.output
    options = json.loads(result.output)["simulation"]["options"]["simulation"]
    assert options == {"kill": False, "dependencies": True}


@pytest.mark.parametrize(("depth", "same_as"), [(0, "none"), (1, "easy"), ("all", "conservative")])
def test_depth_means_the_builtin_strategies_whatever_the_registry(depth, same_as):
    # depth 0, 1 and all are the built-in none, easy and conservative, imported by
    # the depth plugin as a dependency: a registry without them (or the
    # process-wide one, which it used to look them up in) changes nothing.
    from schedlab.policies import estimators, fcfs
    from schedlab.policies.backfill import depth as depth_module
    from schedlab.testing import plugin_registry, simulated_starts, using_registry

    workload = schedlab.read("lublin:jobs=300,procs=32,seed=4")
    expected = simulated_starts(workload, backfill=same_as)
    bare = plugin_registry(fcfs, estimators, depth_module, builtins=False)
    assert not bare.has("backfill", same_as)
    with using_registry(bare):
        got = simulated_starts(
            workload, backfill="depth", backfill_options={"depth": depth}, registry=bare
        )
    assert got == expected
