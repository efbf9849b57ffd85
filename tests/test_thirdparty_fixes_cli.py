"""Fixes from the third-party plugin audit (CLI side):

1. ``--json`` outputs carry non-finite option values (``inf``, ``-inf``, ``nan``)
   as text, as ``schedlab plugins --json`` writes a default, instead of crashing
   or writing ``null``;
3. ``convert --strict-lossless`` refuses a writer that does not report what it
   could not carry (nothing written), and the ``new-plugin --kind format``
   scaffold's writer reports its losses;
5. a component asked for by name whose plugin was refused for its
   ``SCHEDLAB_API`` range gets an error naming that plugin and why;
9. the ``schedlab plugins`` table lines each hook up with its own components.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
import textwrap
import types
import warnings
from importlib import metadata
from pathlib import Path

import pytest
import schedlab
from schedlab import (
    Job,
    MetricSpec,
    OptionSpec,
    PolicySpec,
    StatisticSpec,
    Workload,
    WriterSpec,
    hookimpl,
    open_output,
)
from schedlab.registry import build_registry
from schedlab.testing import (
    builtin_entry_points,
    plugin_registry,
    run_cli,
    using_registry,
)

JOBS = "".join(
    f"{i} {i * 10} 0 {50 + i} 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1\n" for i in range(1, 11)
)


@pytest.fixture()
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "t.swf"
    path.write_text("; MaxProcs: 8\n" + JOBS)
    return path


# ---------------------------------------------------------------- 1. --json and inf


class _Fcfs:
    name = "tp-inf"

    def __init__(self, cap: float = math.inf, floor: float = -math.inf, bias: float = 0.0):
        self.cap, self.floor, self.bias = cap, floor, bias

    def bind(self, table):
        self.submit = table.submit

    def key(self, job, now):
        return self.submit[job]


def _options_plugin() -> types.ModuleType:
    """A policy ``tp-inf`` and a metric ``tp-capped`` whose float options default to
    infinities (one also takes NaN)."""
    module = types.ModuleType("tp_inf_plugin")

    @hookimpl
    def schedlab_policies():
        return [
            PolicySpec(
                name="tp-inf",
                factory=_Fcfs,
                options=(
                    OptionSpec("cap", float, math.inf, "an upper bound"),
                    OptionSpec("floor", float, -math.inf, "a lower bound"),
                    OptionSpec("bias", float, 0.0, "a bias", allow_nan=True),
                ),
            )
        ]

    def capped(columns, cap=math.inf, **_):
        return float(min(len(columns["wait_time"]), cap))

    @hookimpl
    def schedlab_metrics():
        return [
            MetricSpec(
                name="tp-capped",
                description="job count, capped",
                compute=capped,
                unit="",
                options=(OptionSpec("cap", float, math.inf, "the cap"),),
            )
        ]

    module.schedlab_policies = schedlab_policies
    module.schedlab_metrics = schedlab_metrics
    return module


def _floats(mapping: dict) -> dict:
    return {k: float(v) for k, v in mapping.items()}


def test_simulate_json_writes_non_finite_options_as_text(capsys, trace: Path) -> None:
    with using_registry(plugin_registry(_options_plugin())):
        code, out, err = run_cli(
            capsys, "simulate", str(trace), "-p", "tp-inf", "-P", "bias=nan", "--json"
        )
    assert code == 0, err
    options = json.loads(out)["simulation"]["options"]["policy"]
    assert options == {"cap": "inf", "floor": "-inf", "bias": "nan"}
    back = _floats(options)  # the text reads back as the value
    assert back["cap"] == math.inf and back["floor"] == -math.inf and math.isnan(back["bias"])


def test_simulate_json_with_an_explicit_infinite_option(capsys, trace: Path) -> None:
    with using_registry(plugin_registry(_options_plugin())):
        code, out, err = run_cli(
            capsys, "simulate", str(trace), "-p", "tp-inf", "-P", "cap=-inf", "--json"
        )
    assert code == 0, err
    assert json.loads(out)["simulation"]["options"]["policy"]["cap"] == "-inf"


@pytest.mark.parametrize("command", ["metrics", "compare"])
def test_metric_options_keep_their_infinite_value(capsys, trace: Path, command: str) -> None:
    """An infinite metric option is ``"inf"`` in every report, not ``null``
    (which says "unknown")."""
    with using_registry(plugin_registry(_options_plugin())):
        if command == "metrics":
            args = ["metrics", str(trace), "-m", "wait,tp-capped", "--json"]
        else:
            args = ["compare", str(trace), "-p", "fcfs", "-m", "wait,tp-capped", "--json"]
        code, out, err = run_cli(capsys, *args)
    assert code == 0, err
    data = json.loads(out)
    report = data if command == "metrics" else data["rows"][0]["metrics"]
    assert report["options"]["cap"] == "inf"


def test_plugins_json_shows_the_same_text_for_an_infinite_default(capsys) -> None:
    with using_registry(plugin_registry(_options_plugin())):
        code, out, err = run_cli(capsys, "plugins", "tp-inf", "--kind", "policy", "--json")
    assert code == 0, err
    defaults = {o["name"]: o["default"] for o in json.loads(out)[0]["options"]}
    assert defaults == {"cap": "inf", "floor": "-inf", "bias": 0.0}


def test_json_text_helper() -> None:
    import numpy as np
    from schedlab.cli.json_output import json_safe, json_text

    value = {"a": math.inf, "b": [-math.inf, np.float64("nan"), 1.5], "c": np.int64(3)}
    assert json_safe(value) == {"a": "inf", "b": ["-inf", "nan", 1.5], "c": 3}
    assert json.loads(json_text(value)) == json_safe(value)


# ------------------------------------------------------- 3. strict-lossless writers


def _silent_writer() -> types.ModuleType:
    """A writer ``silent`` (suffix ``.silent``) that drops everything but job numbers
    and never reports what it lost."""
    module = types.ModuleType("silent_plugin")

    def write(workload, path):
        with open_output(path) as fh:
            for job in workload:
                fh.write(f"{job.job_number}\n")

    @hookimpl
    def schedlab_writers():
        return [WriterSpec(name="silent", write=write, suffixes=(".silent",))]

    module.schedlab_writers = schedlab_writers
    return module


def test_strict_lossless_refuses_a_writer_that_cannot_say_what_it_lost(
    capsys, tmp_path: Path, trace: Path
) -> None:
    target = tmp_path / "out.silent"
    with using_registry(plugin_registry(_silent_writer())):
        code, _, err = run_cli(capsys, "convert", str(trace), str(target), "--strict-lossless")
    assert code == 2
    assert not target.exists()
    assert not list(tmp_path.glob(".*part*"))  # no staged leftovers
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("schedlab: error: ")
    assert "writer 'silent'" in lines[0] and "nothing written" in lines[0]


def _folder_writer() -> types.ModuleType:
    """A writer ``dirs`` writing a folder of one file per job, reporting no loss."""
    module = types.ModuleType("dirs_plugin")

    def write(workload, path):
        with schedlab.writer_losses() as losses:
            Path(path).mkdir()
            for job in workload:
                (Path(path) / f"job-{job.job_number}.txt").write_text(f"{job.run_time}\n")
        return losses

    @hookimpl
    def schedlab_writers():
        return [WriterSpec(name="dirs", write=write, suffixes=(".dirs",), writes_directories=True)]

    module.schedlab_writers = schedlab_writers
    return module


def test_strict_lossless_writes_a_reporting_folder_writer_in_place(
    capsys, tmp_path: Path, trace: Path
) -> None:
    target = tmp_path / "out.dirs"
    with using_registry(plugin_registry(_folder_writer())):
        for _ in range(2):  # again over its own previous output
            code, _, err = run_cli(capsys, "convert", str(trace), str(target), "--strict-lossless")
            assert code == 0, err
    assert sorted(p.name for p in target.iterdir()) == [
        f"job-{i}.txt" for i in (1, 10, *range(2, 10))
    ]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_strict_collection_refuses_a_silent_writer_in_the_python_api(
    tmp_path: Path, trace: Path
) -> None:
    """``collect_losses(strict=True)`` around :func:`schedlab.write` refuses a writer
    that reports nothing, as ``--strict-lossless`` does: nothing written; without
    strict mode it writes, and the collection shows no report."""
    workload = schedlab.read(trace)
    target = tmp_path / "out.silent"
    registry = plugin_registry(_silent_writer())
    with pytest.raises(schedlab.SchedlabError, match=r"writer 'silent'.*losses unknown"):
        with schedlab.collect_losses(strict=True):
            schedlab.write(workload, target, registry=registry)
    assert not target.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    with schedlab.collect_losses() as losses:
        schedlab.write(workload, target, registry=registry)
    assert target.exists() and losses.reports == 0
    with schedlab.collect_losses(strict=True) as losses:  # a reporting writer passes
        schedlab.write(workload, tmp_path / "copy.swf")
    assert losses.reports == 1


def test_strict_lossless_leaves_an_existing_target_as_it_was(
    capsys, tmp_path: Path, trace: Path
) -> None:
    target = tmp_path / "out.silent"
    target.write_text("before\n")
    with using_registry(plugin_registry(_silent_writer())):
        code, _, _ = run_cli(capsys, "convert", str(trace), str(target), "--strict-lossless")
    assert code == 2
    assert target.read_text() == "before\n"


def test_strict_lossless_to_standard_output_writes_nothing(capsys, trace: Path) -> None:
    with using_registry(plugin_registry(_silent_writer())):
        code, out, err = run_cli(
            capsys, "convert", str(trace), "-", "--to", "silent", "--strict-lossless"
        )
    assert code == 2
    assert out == ""
    assert "writer 'silent'" in err


def test_default_mode_writes_and_warns_once_naming_the_writer(
    capsys, tmp_path: Path, trace: Path
) -> None:
    target = tmp_path / "out.silent"
    with using_registry(plugin_registry(_silent_writer())):
        code, _, err = run_cli(capsys, "convert", str(trace), str(target))
    assert code == 0
    assert target.read_text().splitlines()[0] == "1"
    warned = [line for line in err.splitlines() if "warning" in line]
    assert len(warned) == 1, err
    assert "writer 'silent'" in warned[0] and "losses unknown" in warned[0]


def test_simulate_output_warns_naming_the_writer(capsys, tmp_path: Path, trace: Path) -> None:
    target = tmp_path / "sched.silent"
    with using_registry(plugin_registry(_silent_writer())):
        code, _, err = run_cli(capsys, "simulate", str(trace), "-o", str(target))
    assert code == 0, err
    assert target.exists()
    assert "writer 'silent'" in err


@pytest.mark.parametrize(
    ("suffix", "writer"),
    [(".swf", "swf"), (".swf.gz", "swf"), (".json", "batsim"), (".csv", "batsim-jobs"),
     (".acc", "sge"), (".jsonl", "sge-jsonl"), (".sss", "sss"), ("", "google")],
)  # fmt: skip
def test_strict_lossless_still_accepts_built_in_writers(
    capsys, tmp_path: Path, trace: Path, suffix: str, writer: str
) -> None:
    """Built-in writers report (even "nothing lost"): strict mode decides on what they
    say; a lossless SWF copy is written, and any refusal is a named loss."""
    target = tmp_path / f"out{suffix}"
    code, _, err = run_cli(
        capsys, "convert", str(trace), str(target), "--to", writer, "--strict-lossless"
    )
    assert "losses unknown" not in err and "does not report" not in err, err
    if code == 0:
        assert target.exists()
    else:
        assert code == 2 and "conversion would lose" in err and not target.exists()
    if suffix.startswith(".swf"):
        assert code == 0, err


def _scaffold_format(tmp_path: Path) -> types.ModuleType:
    from schedlab.cli.new_plugin import create_plugin

    target = create_plugin("tpfmt", "format", tmp_path)
    path = target / "src" / "schedlab_tpfmt" / "plugin.py"
    spec = importlib.util.spec_from_file_location("_scaffold_tpfmt", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_format_scaffold_writer_reports_its_losses(tmp_path: Path) -> None:
    module = _scaffold_format(tmp_path)
    registry = plugin_registry(("tpfmt", module))
    job = Job(
        job_number=15, submit_time=599850, wait_time=192180, run_time=3477,
        allocated_processors=4, requested_processors=4, requested_time=53940,
        status=1, user_id=12, group_id=12, queue_number=1, name="x",
        extras={"site": "a"},
    )  # fmt: skip
    workload = Workload.from_jobs([job])
    with schedlab.collect_losses() as losses:
        schedlab.write(workload, tmp_path / "o.tpfmt", registry=registry)
    assert losses.reports == 1
    lost = set(losses.fields())
    assert {"requested_processors", "requested_time", "status", "group_id"} <= lost
    assert {"queue_number", "name", "extras.site"} <= lost
    assert not lost & {"job_number", "submit_time", "wait_time", "run_time", "user_id"}
    # nothing lost: an empty report, which still counts as one
    plain = Workload.from_jobs([Job(job_number=1, submit_time=0, run_time=5)])
    with schedlab.collect_losses(strict=True) as none_lost:
        schedlab.write(plain, tmp_path / "p.tpfmt", registry=registry)
    assert none_lost.reports == 1 and not none_lost
    # strict: a loss refuses the write
    with pytest.raises(schedlab.LossError), schedlab.collect_losses(strict=True):
        schedlab.write(workload, tmp_path / "q.tpfmt", registry=registry)
    assert not (tmp_path / "q.tpfmt").exists()


def test_the_format_scaffold_tests_check_the_loss_report(tmp_path: Path) -> None:
    from schedlab.cli.new_plugin import create_plugin

    target = create_plugin("tpfmt2", "format", tmp_path)
    tests = (target / "tests" / "test_plugin.py").read_text(encoding="utf-8")
    assert "collect_losses" in tests


# ------------------------------------------------- 5. a plugin refused for its API


OLD = """
from schedlab import hookimpl
from schedlab.plugin_types import PolicySpec

SCHEDLAB_API = ">=2,<3"

class Old:
    def key(self, job, now):
        return 0

@hookimpl
def schedlab_policies():
    return [PolicySpec(name="tp-old", factory=Old)]
"""


def _registry_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str):
    for control in (
        "SCHEDLAB_DISABLE_PLUGIN_AUTOLOAD",
        "SCHEDLAB_ALLOW_PLUGINS",
        "SCHEDLAB_BLOCK_PLUGINS",
        "SCHEDLAB_STRICT_PLUGINS",
    ):
        monkeypatch.delenv(control, raising=False)
    folder = tmp_path / "site"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, name, raising=False)
    ep = metadata.EntryPoint(name=name, value=name, group="schedlab")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_registry(entry_points=[*builtin_entry_points(), ep], strict=False)


def test_asking_for_a_component_of_a_refused_plugin_names_it(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trace: Path
) -> None:
    registry = _registry_with(tmp_path, monkeypatch, "tpold", OLD)
    with using_registry(registry):
        code, _, err = run_cli(capsys, "simulate", str(trace), "--policy", "tp-old")
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert not lines[0].startswith("schedlab: error: unknown policy"), lines[0]
    assert "'tpold'" in lines[0] and "SCHEDLAB_API = '>=2,<3'" in lines[0]
    assert "failed" in lines[0] and "schedlab plugins tpold" in lines[0]
    assert "available: " in lines[0] and "fcfs" in lines[0]


def test_the_refused_plugin_is_named_only_for_the_kinds_it_provides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from schedlab.errors import UnknownComponentError

    registry = _registry_with(tmp_path, monkeypatch, "tpold", OLD)
    with pytest.raises(UnknownComponentError) as policy:
        registry.policy("tp-old")
    assert "tpold" in str(policy.value) and policy.value.kind == "policy"
    with pytest.raises(UnknownComponentError) as reader:
        registry.reader("nope")  # tpold has no reader hook
    assert "tpold" not in str(reader.value)
    assert str(reader.value).startswith("unknown reader 'nope'")


def test_a_plugin_that_cannot_be_imported_is_named_as_a_possible_provider(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from schedlab.errors import UnknownComponentError

    registry = _registry_with(tmp_path, monkeypatch, "tpbroken", "import no_such_module_x\n")
    with pytest.raises(UnknownComponentError) as info:
        registry.policy("tp-broken")
    message = str(info.value)
    assert "'tpbroken'" in message and "no_such_module_x" in message


# ---------------------------------------------------------- 9. the plugins table


def _metrics_plugin() -> types.ModuleType:
    module = types.ModuleType("tpmetrics")

    @hookimpl
    def schedlab_metrics():
        return [
            MetricSpec(name="tp-busy", compute=lambda columns, **_: 1.0, unit=""),
            MetricSpec(name="tp-wait-share", compute=lambda columns, **_: 1.0, unit=""),
        ]

    @hookimpl
    def schedlab_statistics():
        return [StatisticSpec(name="tp-cv", compute=lambda values: 0.0)]

    module.schedlab_metrics = schedlab_metrics
    module.schedlab_statistics = schedlab_statistics
    return module


def _table_lines(capsys) -> list[str]:
    with using_registry(plugin_registry(_metrics_plugin())):
        code, out, err = run_cli(capsys, "plugins")
    assert code == 0, err
    return out.splitlines()


def test_each_hook_sits_beside_its_own_components(capsys) -> None:
    lines = _table_lines(capsys)
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["tpmetrics"])
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if line[:20].strip():  # the next plugin
            break
        block.append(line)
    shown = [line.split()[-3:] for line in block]
    assert shown == [
        ["metrics", "metric", "tp-busy"],
        ["metric", "tp-wait-share"],
        ["statistics", "statistic", "tp-cv"],
    ], block


def test_built_in_readers_and_writers_line_up(capsys) -> None:
    lines = _table_lines(capsys)
    for line in lines:
        words = line.split()
        if "readers" in words:
            assert words[words.index("readers") + 1] == "reader", line
        if "writers" in words:
            assert words[words.index("writers") + 1] == "writer", line
