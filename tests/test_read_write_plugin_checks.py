"""What schedlab checks around a reader, writer or generator it calls.

* ``simulate -o`` reports what the output format could not carry, as ``convert``
  does (same lines, on stderr), and warns about a writer that reports nothing.
* A reader or generator returning something other than a ``Workload`` is blamed on
  its plugin (``PluginRuntimeError``, exit 3), not on schedlab.
* A reader or writer that declares no option takes none: ``-R``/``-W`` given to it
  is a one-line usage error (exit 2), as for policies.

The plugin components are hand-registered through the ``schedlab_registry``
fixture (distribution ``<local>``, a third party as far as blame goes).
"""

from __future__ import annotations

import json
import types

import pytest
import schedlab
from schedlab import GeneratorSpec, ReaderSpec, Workload, WriterSpec, hookimpl
from schedlab.errors import PluginRuntimeError, UsageError
from schedlab.testing import (
    plugin_registry,
    run_cli,
    schedlab_registry,  # noqa: F401 - the fixture
    workload_from_rows,
)

PLUGIN = "checks"
HPC2N = "HPC2N-2002_excerpt-3170jobs_alea.swf"
ROWS = [(0, 10, 4, 10), (1, 10, 2, 100), (2, 10, 2, 10), (3, 5, 4, 5)]


def _plugin() -> types.ModuleType:
    """Readers, writers and generators that misbehave, or declare no option."""
    module = types.ModuleType("checks_plugin")

    def read_list(source):
        return [1, 2, 3]

    def read_plain(source):  # no **options: it takes none
        return workload_from_rows(ROWS, procs=4)

    def write_plain(workload, path):  # no **options, and no loss report
        with open(path, "w", encoding="utf-8") as fh:
            for job in workload:
                fh.write(f"{job.job_number} {job.wait_time}\n")

    def generate_dict(**options):
        return {"jobs": []}

    @hookimpl
    def schedlab_readers():
        return [
            ReaderSpec(name="listy", read=read_list, suffixes=(".listy",)),
            ReaderSpec(name="plainrd", read=read_plain, suffixes=(".plain",)),
        ]

    @hookimpl
    def schedlab_writers():
        return [WriterSpec(name="plainwr", write=write_plain, suffixes=(".plainout",))]

    @hookimpl
    def schedlab_generators():
        return [GeneratorSpec(name="dicty", generate=generate_dict)]

    module.schedlab_readers = schedlab_readers
    module.schedlab_writers = schedlab_writers
    module.schedlab_generators = schedlab_generators
    return module


@pytest.fixture()
def registry_with_plugin(schedlab_registry):  # noqa: F811
    return schedlab_registry((PLUGIN, _plugin()))


def _loss_block(err: str, name: str) -> list[str]:
    """The loss report for ``name`` in ``err``: its heading and indented lines."""
    lines = err.splitlines()
    heading = f"schedlab: what {name} could not carry (field: records, what was done):"
    assert heading in lines, err
    start = lines.index(heading)
    block = [heading]
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        block.append(line)
    return block


# ------------------------------------------------------------- simulate -o losses


def test_simulate_output_reports_losses_as_convert_does(
    registry_with_plugin, swf_dir, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(
        capsys, "simulate", str(swf_dir / HPC2N), "-o", "sb.json", "--to", "batsim",
        "--no-timings",
    )  # fmt: skip
    assert code == 0, err
    simulated = _loss_block(err, "sb.json")
    assert any(line.startswith("  wait_time: ") for line in simulated), simulated
    assert "could not carry" not in out  # the report is on stderr, as convert's

    # convert of the same schedule (written as SWF): the same report, word for word
    code, out, err = run_cli(
        capsys, "simulate", str(swf_dir / HPC2N), "-o", "again.swf", "--no-timings"
    )
    assert code == 0, err
    code, _, err = run_cli(capsys, "convert", "again.swf", "sb2.json", "--to", "batsim")
    assert code == 0, err
    converted = _loss_block(err, "sb2.json")
    assert [line.replace("sb2.json", "sb.json") for line in converted[:1]] == simulated[:1]
    assert converted[1:] == simulated[1:]


def test_simulate_json_output_reports_losses_on_stderr(
    registry_with_plugin, swf_dir, tmp_path, capsys
):
    target = tmp_path / "sb.json"
    code, out, err = run_cli(
        capsys, "simulate", str(swf_dir / HPC2N), "-o", str(target), "--to", "batsim",
        "--json", "--no-timings",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["output"] == str(target)  # stdout stays JSON
    block = _loss_block(err, "sb.json")
    with schedlab.collect_losses() as losses:
        result = schedlab.simulate(schedlab.read(swf_dir / HPC2N))
        schedlab.write(result.workload, tmp_path / "py.json", "batsim")
    # the summary, then (simulate -o takes --all-losses) how to see what it folded
    assert block[1:] == [
        *(f"  {line}" for line in losses.summary()),
        "  (--all-losses lists every loss)",
    ]
    # what is written is what schedlab.write writes
    assert target.read_bytes() == (tmp_path / "py.json").read_bytes()


def test_simulate_output_with_a_silent_writer_warns(
    registry_with_plugin, swf_dir, tmp_path, capsys
):
    target = tmp_path / "s.plainout"
    code, _, err = run_cli(
        capsys, "simulate", str(swf_dir / HPC2N), "-o", str(target), "--no-timings"
    )
    assert code == 0, err
    assert target.exists()
    assert (
        "schedlab: warning: writer 'plainwr' does not report what it could not carry "
        "(losses unknown)" in err.splitlines()
    ), err


# ------------------------------------------------- wrong return types are blamed


def test_a_reader_returning_a_list_is_blamed_on_its_plugin(registry_with_plugin, tmp_path, capsys):
    trace = tmp_path / "t.listy"
    trace.write_text("anything\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "info", str(trace))
    assert code == 3, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert f"reader 'listy' of plugin '{PLUGIN}'" in lines[0]
    assert "returned list, expected Workload" in lines[0]
    assert "internal error" not in err and "Traceback" not in err
    with pytest.raises(PluginRuntimeError, match="returned list, expected Workload") as info:
        schedlab.read(trace, registry=registry_with_plugin)
    assert info.value.plugin == PLUGIN and info.value.exit_code == 3


def test_a_generator_returning_a_dict_is_blamed_on_its_plugin(registry_with_plugin, capsys):
    with pytest.raises(PluginRuntimeError, match="returned dict, expected Workload") as info:
        schedlab.read("dicty:", registry=registry_with_plugin)
    assert info.value.plugin == PLUGIN
    assert str(info.value).startswith(f"generator 'dicty' of plugin '{PLUGIN}'")
    code, _, err = run_cli(capsys, "info", "dicty:")
    assert code == 3, err
    assert "generator 'dicty'" in err and "returned dict, expected Workload" in err
    assert "internal error" not in err


def test_a_builtin_component_returning_the_wrong_type_is_schedlabs_own_bug():
    registry = plugin_registry()
    reader = registry.reader("swf")
    with pytest.raises(TypeError, match="reader 'swf' returned list, expected Workload"):
        registry.check_returned(reader, [1, 2, 3], Workload)
    workload = workload_from_rows(ROWS)
    registry.check_returned(reader, workload, Workload)  # a Workload: no error


# ------------------------------------------- components that declare no option


def test_a_reader_declaring_no_option_refuses_one(registry_with_plugin, tmp_path, capsys):
    trace = tmp_path / "t.plain"
    trace.write_text("anything\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "info", str(trace), "-R", "x=1")
    assert code == 2, err
    assert err.strip().splitlines() == [
        "schedlab: error: reader plainrd: unknown option 'x' (options: none)"
    ]
    with pytest.raises(UsageError, match=r"reader plainrd: unknown option 'x' \(options: none\)"):
        schedlab.read(trace, registry=registry_with_plugin, x=1)
    assert len(schedlab.read(trace, registry=registry_with_plugin)) == len(ROWS)


def test_a_writer_declaring_no_option_refuses_one(registry_with_plugin, tmp_path, capsys):
    trace = tmp_path / "t.plain"
    trace.write_text("anything\n", encoding="utf-8")
    target = tmp_path / "s.out"
    expected = ["schedlab: error: writer plainwr: unknown option 'x' (options: none)"]
    code, _, err = run_cli(
        capsys, "simulate", str(trace), "--procs", "4", "-o", str(target), "--to", "plainwr",
        "-W", "x=1",
    )  # fmt: skip
    assert code == 2, err
    assert err.strip().splitlines() == expected
    assert not target.exists()
    code, _, err = run_cli(capsys, "convert", str(trace), str(target), "--to", "plainwr",
                           "-W", "x=1")  # fmt: skip
    assert code == 2, err
    assert err.strip().splitlines() == expected
    assert not target.exists()
    workload = workload_from_rows(ROWS)
    with pytest.raises(UsageError, match=r"writer plainwr: unknown option 'x'"):
        schedlab.write(workload, target, "plainwr", registry=registry_with_plugin, x=1)
    assert not target.exists()


def test_the_batsim_jobs_writer_declaring_no_option_refuses_one(swf_dir, tmp_path, capsys):
    target = tmp_path / "jobs.csv"
    code, _, err = run_cli(
        capsys, "convert", str(swf_dir / HPC2N), str(target), "--to", "batsim-jobs",
        "-W", "x=1",
    )  # fmt: skip
    assert code == 2, err
    assert err.strip().splitlines()[-1] == (
        "schedlab: error: writer batsim-jobs: unknown option 'x' (options: none)"
    )
    assert "internal error" not in err
    assert not target.exists()
