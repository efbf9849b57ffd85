"""A third-party reader whose Workload holds values that are no numbers (a string in
``submit_time``, an array of text as a column) is blamed where it can be, in
``schedlab.read``: every command prints one line naming the reader, its plugin and
its distribution (exit status 3, as for a reader returning something else than a
Workload, docs/plugins.md "At run time"), never schedlab's "internal error".
"""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab import Job, JobColumns, ReaderSpec, Workload, hookimpl
from schedlab.errors import PluginRuntimeError
from schedlab.model import SWF_FIELDS
from schedlab.testing import plugin_registry, run_cli, using_registry


def _strings(source, **_):
    return Workload.from_jobs([Job(job_number="x", submit_time="soon", run_time=10)])


def _late_string(source, **_):
    jobs = [Job(job_number=i, submit_time=float(i), run_time=10.0) for i in range(1, 6)]
    jobs[3].run_time = "10"  # looks like a number: to_arrays() would take it silently
    return Workload.from_jobs(jobs)


def _text_column(source, **_):
    data = {name: np.full(2, np.nan) for name in SWF_FIELDS}
    data["run_time"] = np.array(["a", "b"])
    return Workload(columns=JobColumns(data))


def _streaming_strings(source, **_):
    def chunks():
        yield [Job(job_number=1, submit_time=0.0, run_time=5.0)]
        yield [Job(job_number=2, submit_time="later", run_time=5.0)]

    return Workload.streaming(schedlab.Header(), chunks)


def _good(source, **_):
    jobs = [
        Job(
            job_number=1,
            submit_time=0,
            wait_time=np.float64(1.5),
            run_time=10,
            allocated_processors=np.int64(2),
            status=1,
        ),
        Job(job_number=2, submit_time=5.0, run_time=None, priority=0.5, exit_code=0),
    ]
    return Workload.from_jobs(jobs)


READERS = {
    "rstrs": _strings,
    "rlate": _late_string,
    "rcols": _text_column,
    "rstream": _streaming_strings,
    "rgood": _good,
}


def _plugin() -> types.ModuleType:
    module = types.ModuleType("badvalues_plugin")

    @hookimpl
    def schedlab_readers():
        return [
            ReaderSpec(name=name, read=read, suffixes=(f".{name}",))
            for name, read in READERS.items()
        ]

    module.schedlab_readers = schedlab_readers
    return module


@pytest.fixture()
def registry():
    return plugin_registry(("bv", _plugin()))


def _file(tmp_path: Path, reader: str) -> Path:
    path = tmp_path / f"t.{reader}"
    path.write_text("anything\n")
    return path


@pytest.mark.parametrize(
    ("reader", "problem"),
    [
        ("rstrs", "job 1, field job_number: expected a number or None, got 'x' (str)"),
        ("rlate", "job 4, field run_time: expected a number or None, got '10' (str)"),
        ("rcols", "column run_time: expected a 1-d array of floats, got <U1"),
    ],
)
def test_read_blames_the_reader_for_values_that_are_no_numbers(registry, tmp_path, reader, problem):
    with pytest.raises(PluginRuntimeError) as info:
        schedlab.read(_file(tmp_path, reader), registry=registry)
    message = str(info.value)
    assert message.startswith(f"reader {reader!r} of plugin 'bv' (")
    assert f"returned a bad Workload: {problem} (a bug in that plugin" in message
    assert "SCHEDLAB_BLOCK_PLUGINS=bv" in message and "\n" not in message
    assert info.value.plugin == "bv" and info.value.exit_code == 3


@pytest.mark.parametrize("command", ["info", "metrics", "validate", "convert"])
def test_every_command_prints_one_line_naming_the_plugin(registry, tmp_path, capsys, command):
    args = [command, str(_file(tmp_path, "rstrs"))]
    if command == "convert":
        args.append(str(tmp_path / "out.swf"))
    with using_registry(registry):
        code, _out, err = run_cli(capsys, *args)
    assert code == 3, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("schedlab: error: reader 'rstrs' of plugin 'bv' (")
    assert "field job_number: expected a number or None, got 'x' (str)" in lines[0]
    assert "internal error" not in err
    assert not (tmp_path / "out.swf").exists()


def test_a_streaming_readers_chunks_are_checked_as_they_come(registry, tmp_path, capsys):
    workload = schedlab.read(_file(tmp_path, "rstream"), registry=registry)
    with pytest.raises(
        PluginRuntimeError,
        match=r"reader 'rstream' of plugin 'bv' .*"
        r"job 2, field submit_time: .*got 'later' \(str\)",
    ):
        workload.to_arrays()
    with using_registry(registry):
        code, _, err = run_cli(capsys, "info", str(_file(tmp_path, "rstream")))
    assert code == 3 and "internal error" not in err
    assert err.startswith("schedlab: error: reader 'rstream' of plugin 'bv' (")


def test_numbers_of_any_real_type_and_none_pass(registry, tmp_path):
    workload = schedlab.read(_file(tmp_path, "rgood"), registry=registry)
    assert workload.to_arrays()["wait_time"].tolist()[0] == 1.5
    assert [j.job_number for j in workload] == [1, 2]
