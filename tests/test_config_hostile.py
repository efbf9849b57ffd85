"""Hostile configuration inputs: platform files, sweep files, component specs and
options, generator specs, ``--procs`` and ``--from``.

Every case is bad input that must give one line naming the file and key (or the
option / component), exit status 2, no traceback; each failed on the code before
these fixes (an internal error, a silently ignored or merged value, a run that
went on with a machine the output could not describe).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from schedlab.cli import main
from schedlab.errors import FormatError, SchedlabError, UsageError
from schedlab.experiment.config import SweepConfig, load_config
from schedlab.platform import NodeGroup, Partition, Platform, load_platform

SWF = """; MaxNodes: 16
; MaxProcs: 16
1 0 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1
2 10 -1 50 8 -1 -1 8 100 -1 1 2 1 -1 1 -1 -1 -1
3 20 -1 70 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1
"""

PLATFORM = """[node_groups.n]
count = 4
cores = 4
[partitions.batch]
nodes = ["n"]
"""


@pytest.fixture()
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.swf"
    path.write_text(SWF)
    return path


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Exit status and stderr of ``schedlab ARGS``."""
    with pytest.raises(SystemExit) as info:
        main([str(a) for a in args])
        raise SystemExit(0)
    err = capsys.readouterr().err
    return int(info.value.code or 0), err


def one_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, err = cli(capsys, *args)
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# --------------------------------------------------------------------- platform file


def test_platform_integer_of_5000_digits(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(PLATFORM.replace("count = 4", "count = " + "1" * 5000))
    with pytest.raises(FormatError, match=r"p\.toml: invalid TOML: a number with more than"):
        load_platform(path)


@pytest.mark.parametrize("nest", ["[" * 50_000 + "]" * 50_000, "{a=" * 3000 + "1" + "}" * 3000])
def test_platform_nested_too_deeply(tmp_path: Path, nest: str) -> None:
    path = tmp_path / "p.toml"
    path.write_text(PLATFORM + f"x = {nest}\n")
    with pytest.raises(FormatError, match=r"p\.toml: invalid TOML: nested too deeply"):
        load_platform(path)


def test_platform_cli_deep_nesting_is_exit_2(capsys, tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text("x = " + "[" * 50_000 + "]" * 50_000 + "\n")
    assert "nested too deeply" in one_error(capsys, "platform", "check", path)


def test_platform_file_larger_than_the_limit(tmp_path: Path, monkeypatch) -> None:
    import schedlab.platform as platform_module

    monkeypatch.setattr(platform_module, "MAX_CONFIG_BYTES", 1000)
    path = tmp_path / "p.toml"
    path.write_text(PLATFORM + "#" * 2000 + "\n")
    with pytest.raises(FormatError, match=r"p\.toml: larger than"):
        load_platform(path)


def test_platform_memory_text_of_5000_digits(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(PLATFORM.replace("cores = 4", 'cores = 4\nmemory = "' + "9" * 5000 + 'G"'))
    with pytest.raises(FormatError, match=r"node_groups\.n\.memory: .*5,001 characters"):
        load_platform(path)


def test_platform_memory_with_non_ascii_digits(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(PLATFORM.replace("cores = 4", 'cores = 4\nmemory = "١٢G"'))
    with pytest.raises(FormatError, match=r"node_groups\.n\.memory"):
        load_platform(path)


def test_platform_empty_file_name(capsys, trace: Path) -> None:
    line = one_error(capsys, "simulate", trace, "--platform", "")
    assert "--platform ''" in line and "give a file name" in line


# ------------------------------------------------------------- Platform built in Python


def _platform(**changes):
    groups = changes.pop("groups", (NodeGroup("a", 2, 4),))
    parts = changes.pop("parts", (Partition("p", ("a",)),))
    return Platform(groups, parts, **changes)


@pytest.mark.parametrize(
    ("platform", "message"),
    [
        (_platform(parts=(Partition("p", ("b",)),)), r"partitions\.p\.nodes: unknown node group"),
        (_platform(parts=()), r"partitions: expected at least one partition"),
        (_platform(groups=()), r"node_groups: expected at least one node group"),
        (
            _platform(groups=(NodeGroup("a", 2, 4), NodeGroup("a", 1, 1))),
            r"node_groups\.a: node group defined twice",
        ),
        (
            _platform(parts=(Partition("p", ("a",)), Partition("p", ("a",)))),
            r"partitions\.p: partition defined twice",
        ),
        (
            _platform(
                parts=(
                    Partition("p", ("a",), queues=("q",)),
                    Partition("r", ("a",), queues=("q",)),
                )
            ),
            r"partitions\.r\.queues: queue 'q' is already mapped",
        ),
        (
            _platform(parts=(Partition("p", ("a",), sharing="bogus"),)),
            r"partitions\.p\.sharing: expected one of exclusive, shared",
        ),
        (_platform(sharing="bogus"), r"platform\.sharing: expected one of"),
        (_platform(parts=(Partition("p", "a"),)), r"partitions\.p\.nodes: expected a tuple"),
        (
            _platform(groups=(NodeGroup("a", 2, 4, consumables={"cores": 1}),)),
            r"node_groups\.a\.consumables\.cores: 'cores' is a built-in resource",
        ),
    ],
)
def test_python_platform_structure(trace: Path, platform: Platform, message: str) -> None:
    workload = schedlab.read(trace)
    with pytest.raises(FormatError, match=r"<platform>: " + message):
        schedlab.simulate(workload, platform=platform)


# ------------------------------------------------------------------------ sweep file


def sweep_file(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_sweep_toml_integer_of_5000_digits(tmp_path: Path, trace: Path) -> None:
    path = sweep_file(tmp_path, f'workloads = ["{trace}"]\nprocs = {"1" * 5000}\n')
    with pytest.raises(UsageError, match=r"s\.toml: not valid TOML: a number with more"):
        load_config(path)


def test_sweep_toml_nested_too_deeply(tmp_path: Path) -> None:
    path = sweep_file(tmp_path, "x = " + "[" * 50_000 + "]" * 50_000 + "\n")
    with pytest.raises(UsageError, match=r"s\.toml: not valid TOML: nested too deeply"):
        load_config(path)


def test_sweep_json_nested_too_deeply(tmp_path: Path) -> None:
    path = sweep_file(tmp_path, '{"x": ' + "[" * 100_000 + "]" * 100_000 + "}", "s.json")
    with pytest.raises(UsageError, match=r"s\.json: not valid JSON: nested too deeply"):
        load_config(path)


def test_sweep_json_integer_of_5000_digits(tmp_path: Path) -> None:
    path = sweep_file(tmp_path, '{"workloads": ["x"], "procs": ' + "1" * 5000 + "}", "s.json")
    with pytest.raises(UsageError, match=r"s\.json: not valid JSON: a number with more"):
        load_config(path)


def test_sweep_json_not_utf8(capsys, tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(b'{"workloads": ["\xff\xfe"]}')
    assert "s.json: not valid JSON: not utf-8 text" in one_error(capsys, "sweep", path)


def test_sweep_json_duplicate_key(tmp_path: Path) -> None:
    path = sweep_file(tmp_path, '{"workloads": ["x"], "procs": 8, "procs": 16}', "s.json")
    with pytest.raises(UsageError, match=r"s\.json: key 'procs' given twice"):
        load_config(path)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("policies = []", "policies"),
        ("policies = ''", "policies"),
        ("policies = ['fcfs', ' ']", "policies"),
        ("backfill = []", "backfill"),
        ("estimators = []", "estimators"),
        ("metrics = []", "metrics"),
    ],
)
def test_sweep_empty_axis_is_not_the_default(text: str, key: str) -> None:
    data = {"workloads": ["x.swf"], **_toml(text)}
    with pytest.raises(UsageError, match=rf"s\.toml: {key}: expected non-empty names"):
        SweepConfig.from_mapping(data, origin="s.toml")


def test_sweep_empty_workloads() -> None:
    with pytest.raises(UsageError, match=r"s\.toml: workloads: expected non-empty names"):
        SweepConfig.from_mapping({"workloads": [""]}, origin="s.toml")


@pytest.mark.parametrize("key", ["from", "platform", "allocation", "out"])
def test_sweep_empty_string_setting(key: str) -> None:
    with pytest.raises(UsageError, match=rf"s\.toml: {key} must not be empty"):
        SweepConfig.from_mapping({"workloads": ["x.swf"], key: ""}, origin="s.toml")


def test_sweep_procs_beyond_the_limit() -> None:
    with pytest.raises(UsageError, match=r"s\.toml: procs must be at most 2\*\*53 - 1"):
        SweepConfig.from_mapping({"workloads": ["x.swf"], "procs": 2**53}, origin="s.toml")


def test_sweep_option_table_applies_to_a_spelled_policy(registry) -> None:
    config = SweepConfig.from_mapping(
        {
            "workloads": ["x.swf"],
            "policies": ["psp:window=5", "psp"],
            "policy_options": {"psp": {"new_user_class": 1}},
        },
        origin="s.toml",
    )
    cells = config.cells(registry)
    assert [dict(c.policy_options) for c in cells] == [{"new_user_class": 1}] * 2


def test_sweep_option_table_conflicting_with_the_spelling(capsys, tmp_path, trace) -> None:
    path = sweep_file(
        tmp_path,
        f'workloads = ["{trace}"]\npolicies = ["psp:window=5"]\n'
        '[policy_options.psp]\nwindow = "abc"\n',
    )
    line = one_error(capsys, "sweep", path, "--out", tmp_path / "out", "--workers", "1")
    assert "policy psp: option 'window' given twice" in line


def test_sweep_options_reach_a_spelled_policy(capsys, tmp_path, trace) -> None:
    """A file's [policy_options.psp] (ignored before) and -P both reach psp:window=5."""
    path = sweep_file(
        tmp_path,
        f'workloads = ["{trace}"]\npolicies = ["psp:window=5"]\n'
        '[policy_options.psp]\nnew_user_class = "abc"\n',
    )
    out = ("--out", tmp_path / "out", "--workers", "1", "--no-progress")
    assert "policy psp: option new_user_class='abc'" in one_error(capsys, "sweep", path, *out)
    line = one_error(
        capsys, "sweep", "-w", trace, "-p", "psp:window=5", "-P", "new_user_class=abc", *out
    )
    assert "policy psp: option new_user_class='abc'" in line


def _toml(text: str) -> dict:
    import tomllib

    return tomllib.loads(text)


# ------------------------------------------------------------- specs and KEY=VALUE


@pytest.mark.parametrize(
    "args",
    [
        ("-p", "psp", "-P", "window=5", "-P", "window=6"),
        ("-p", "psp:window=5,window=6"),
        ("-p", "psp:window=5", "-P", "window=6"),
        ("-B", "order=sjbf", "-B", "order=fcfs"),
    ],
)
def test_simulate_option_given_twice(capsys, trace: Path, args: tuple[str, ...]) -> None:
    assert "given twice" in one_error(capsys, "simulate", trace, *args)


def test_metric_option_given_twice(capsys, tmp_path: Path, trace: Path) -> None:
    schedule = tmp_path / "s.swf"
    assert cli(capsys, "simulate", trace, "-o", schedule)[0] == 0
    assert "given twice" in one_error(
        capsys, "metrics", schedule, "-M", "threshold=10", "-M", "threshold=20"
    )


def test_generator_option_given_twice() -> None:
    with pytest.raises(UsageError, match="option 'jobs' given twice"):
        schedlab.read("lublin:jobs=10,jobs=20")
    with pytest.raises(UsageError, match="option 'jobs' given twice"):
        schedlab.read("lublin:jobs=10", jobs=20)


@pytest.mark.parametrize("flag", ["--from", "--to"])
def test_empty_format_name_is_not_detection(capsys, tmp_path, trace, flag) -> None:
    line = one_error(capsys, "simulate", trace, "-o", tmp_path / "o.swf", flag, "")
    assert f"{flag} '': give a value" in line


def test_read_with_empty_format(trace: Path) -> None:
    with pytest.raises(SchedlabError, match="unknown reader ''"):
        schedlab.read(trace, format="")


# ---------------------------------------------------------------------- machine size


@pytest.mark.parametrize("procs", [2**53, 10**23])
def test_procs_beyond_the_limit(capsys, trace: Path, procs: int) -> None:
    assert "at most 9007199254740991" in one_error(capsys, "simulate", trace, "--procs", procs)
    with pytest.raises(UsageError, match="at most"):
        schedlab.simulate(schedlab.read(trace), procs=procs)
    with pytest.raises(UsageError, match="at most"):
        schedlab.simulate(schedlab.read(trace), procs=float(procs))


# ------------------------------------------------------------------------ generators


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("psp-fing:jobs=20,load=1e-308", "load=1e-308 spreads the jobs"),
        ("psp-fing:jobs=20,long_median=1e308", "long_median=1e+308 must be at most"),
        ("psp-fing:jobs=20,long_sigma=1000", "long_sigma=1000.0 must be at most"),
        ("psp-fing:jobs=20,size_ratio=1e308", "size_ratio=1e+308 must be at most"),
        ("psp-fing:jobs=20,user_zipf=-1e308", "user_zipf=-1e+308 must be in"),
        ("psp-fing:jobs=20,queue_limit=inf", "queue_limit=inf must be at most"),
        ("psp-fing:jobs=20,min_accuracy=1e-308", "min_accuracy=1e-308 must be at least"),
        ("lublin:jobs=10,start=99999999999999999", "start=99999999999999999: must be at most"),
    ],
)
def test_generator_overflowing_options(capsys, spec: str, message: str) -> None:
    assert message in one_error(capsys, "info", spec)


def test_psp_fing_min_accuracy_above_a_range_is_honoured() -> None:
    for scenario in ("CF", "BE"):
        w = schedlab.read(f"psp-fing:jobs=30,min_accuracy=1,scenario={scenario}")
        cols = w.to_arrays()
        assert (cols["requested_time"] == cols["run_time"]).all()
