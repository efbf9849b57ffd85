"""Option values in range and of the declared type: ``OptionSpec``'s ``min``/``max``/
``allow_nan``, the same checks on text (the command line) and typed values (a TOML
or JSON file, the Python API), the bounds of the built-in components' options, and
seeds that must not be negative.

Every refusal is a one-line ``schedlab: error: ...`` naming component and option,
exit 2 (integer options used to be unbounded, negative seeds ended in an internal
error, and typed values skipped the checks text gets)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import schedlab
from schedlab.cli import main
from schedlab.errors import UsageError
from schedlab.plugin_types import OptionSpec
from schedlab.policies.psp import parse_edges

# Five jobs on 10 processors, three users (the golden workload of test_cli_flags.py).
SWF = """\
; Version: 2.2
; MaxProcs: 10
1 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1
2 0 10 5 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1
3 10 90 50 8 -1 -1 8 50 -1 1 2 1 -1 2 -1 -1 -1
4 20 -1 30 1 -1 -1 1 300 -1 1 3 1 -1 2 -1 -1 -1
5 30 20 0 1 -1 -1 1 60 -1 1 2 1 -1 -1 -1 -1 -1
"""

HUGE = "99999999999999999999"
MAX_START = 253_402_300_799

#: (kind, name, option, min, max) of every built-in option with bounds.
BOUNDED = [
    ("generator", "psp-fing", "seed", 0, None),
    ("generator", "psp-fing", "jobs", 1, 1_000_000),
    ("generator", "psp-fing", "users", 1, 100_000),
    ("generator", "psp-fing", "procs", 1, 10_000_000),
    ("generator", "psp-fing", "max_cores", 1, None),
    ("generator", "psp-fing", "improve_every", 1, 1_000_000),
    ("generator", "psp-fing", "start", 0, MAX_START),
    ("generator", "tsafrir-estimates", "seed", 0, None),
    ("generator", "tsafrir-estimates", "bins", 0, 10_000),
    ("policy", "psp", "window", 1, 10_000),
    ("policy", "psp", "new_user_class", 1, None),
    ("policy", "multifactor", "psp_window", 1, 10_000),
    ("policy", "multifactor", "psp_new_user_class", 1, None),
    ("estimator", "easy++", "window", 1, 10_000),
    ("estimator", "user-average", "window", 1, 10_000),
    ("estimator", "learned", "window", 2, 10_000),
    ("estimator", "learned", "under_weight", 1, 1000),
    ("estimator", "learned", "batch", 1, 100_000),
]


@pytest.fixture()
def swf(tmp_path: Path) -> str:
    path = tmp_path / "golden.swf"
    path.write_text(SWF)
    return str(path)


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    """Run ``schedlab.cli.main``: (exit code, stdout, stderr)."""
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return int(code or 0), out.out, out.err


def assert_usage_line(capsys, args: list[str], *fragments: str) -> str:
    """``schedlab ARGS`` ends with exit 2 and one error line holding every fragment."""
    code, _, err = run_main(capsys, *args)
    lines = err.strip().splitlines()
    assert code == 2, (code, err)
    assert len(lines) == 1, err
    assert lines[0].startswith("schedlab: error: "), err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


# --- OptionSpec.convert --------------------------------------------------------------


def test_int_option_takes_text_and_whole_numbers_of_any_type():
    spec = OptionSpec("n", int, 5, "a count", min=1, max=10)
    assert spec.convert("7", "policy x") == 7
    assert spec.convert(7, "policy x") == 7
    converted = spec.convert(7.0, "policy x")  # TOML 7.0 / JSON 7.0: a whole number
    assert converted == 7 and type(converted) is int
    assert spec.convert("1", "policy x") == 1 and spec.convert(10, "policy x") == 10


@pytest.mark.parametrize("raw", [True, False, 2.5, -0.5, math.inf, math.nan, [3], None])
def test_int_option_refuses_booleans_fractions_and_non_numbers(raw):
    spec = OptionSpec("n", int, 5, "a count")
    with pytest.raises(UsageError) as info:
        spec.convert(raw, "policy x")
    message = str(info.value)
    assert message.startswith(f"policy x: option n={raw!r}: ")
    assert "\n" not in message
    if isinstance(raw, bool):
        assert "not a boolean" in message


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("0", "must be in 1..10"), (11, "must be in 1..10"), (10**30, "must be in 1..10")],
)
def test_bounds_are_checked_and_named(raw, expected):
    spec = OptionSpec("n", int, 5, "a count", min=1, max=10)
    with pytest.raises(UsageError, match=f"^policy x: option n={raw!r}: {expected}$"):
        spec.convert(raw, "policy x")


def test_one_sided_bounds_are_named():
    low = OptionSpec("seed", int, 0, "seed", min=0)
    with pytest.raises(UsageError, match=r"option seed='-1': must be >= 0$"):
        low.convert("-1", "generator g")
    with pytest.raises(UsageError, match=r"option seed=-1: must be >= 0$"):
        low.convert(-1, "generator g")
    high = OptionSpec("share", float, 0.5, "share", max=0.75)
    with pytest.raises(UsageError, match=r"option share=0.8: must be <= 0.75$"):
        high.convert(0.8, "estimator e")
    assert high.convert("-3", "estimator e") == -3.0


@pytest.mark.parametrize("raw", ["nan", "NaN", math.nan, float("-nan")])
def test_nan_is_refused_unless_allowed(raw):
    spec = OptionSpec("x", float, 1.0, "a number")
    with pytest.raises(UsageError, match="must be a number, not NaN"):
        spec.convert(raw, "metric m")
    # a NaN passes no bound check (every comparison with NaN is false): refused first
    bounded = OptionSpec("x", float, 1.0, "a number", min=0, max=2)
    with pytest.raises(UsageError, match="not NaN"):
        bounded.convert(raw, "metric m")
    allowed = OptionSpec("x", float, 1.0, "a number", allow_nan=True)
    assert math.isnan(allowed.convert(raw, "metric m"))


@pytest.mark.parametrize("raw", [True, False, [1.0], None])
def test_float_option_refuses_booleans_and_non_numbers(raw):
    spec = OptionSpec("x", float, 1.0, "a number")
    with pytest.raises(UsageError, match=re.escape(f"option x={raw!r}: expected float")):
        spec.convert(raw, "policy p")
    assert spec.convert(3, "policy p") == 3.0


def test_bool_option_takes_booleans_and_words_only():
    spec = OptionSpec("flag", bool, False, "a switch")
    assert spec.convert(True, "reader r") is True
    assert spec.convert("off", "reader r") is False
    for raw in (1, 2.5, "maybe"):
        with pytest.raises(UsageError, match="option flag="):
            spec.convert(raw, "reader r")


def test_a_plugin_converter_checks_typed_values_too():
    spec = OptionSpec("edges", parse_edges, (0.2, 0.4), "class edges")
    assert spec.convert([0.25, 0.5], "policy psp") == (0.25, 0.5)
    for raw in ([0.5, math.nan], "0.5,nan", [True], "nan"):
        with pytest.raises(UsageError, match="policy psp: option edges="):
            spec.convert(raw, "policy psp")


def test_declaring_inconsistent_bounds_fails_at_once():
    with pytest.raises(ValueError, match="min 5 is above max 1"):
        OptionSpec("n", int, 1, "", min=5, max=1)
    with pytest.raises(ValueError, match=r"default 0 is not in 1\.\.10"):
        OptionSpec("n", int, 0, "", min=1, max=10)
    with pytest.raises(ValueError, match="min must be a number"):
        OptionSpec("n", float, 1.0, "", min=math.nan)
    with pytest.raises(ValueError, match="max must be a number"):
        OptionSpec("n", int, 1, "", max=True)
    assert OptionSpec("n", int, 1, "", min=1, max=10).bounds_text == "in 1..10"
    assert OptionSpec("n", float, 0.25, "", max=0.5).bounds_text == "<= 0.5"
    assert OptionSpec("n", int, 1, "").bounds_text == ""


# --- the built-in components' bounds --------------------------------------------------


@pytest.mark.parametrize(("kind", "name", "option", "low", "high"), BOUNDED)
def test_builtin_option_bounds(registry, kind, name, option, low, high):
    spec = {o.name: o for o in registry.get(kind, name).options}[option]
    assert (spec.min, spec.max) == (low, high)
    owner = f"{kind} {name}"
    assert spec.convert(str(low), owner) == low
    with pytest.raises(
        UsageError, match="^" + re.escape(f"{owner}: option {option}='{low - 1}': must be ")
    ):
        spec.convert(str(low - 1), owner)
    if high is not None:
        assert spec.convert(str(high), owner) == high
        with pytest.raises(
            UsageError, match=re.escape(f"option {option}='{high + 1}': must be in ")
        ):
            spec.convert(str(high + 1), owner)


def _line(kind: str, name: str, option: str, raw: str, low: int, high: int | None) -> str:
    bounds = f"in {low}..{high}" if high is not None else f">= {low}"
    return f"{kind} {name}: option {option}='{raw}': must be {bounds}"


# (option, value out of range, min, max) of the generators, run as `simulate SPEC`.
GENERATOR_CASES = [
    ("psp-fing", "seed", "-1", 0, None),
    ("psp-fing", "jobs", "0", 1, 1_000_000),
    ("psp-fing", "jobs", HUGE, 1, 1_000_000),
    ("psp-fing", "users", "0", 1, 100_000),
    ("psp-fing", "users", "100001", 1, 100_000),
    ("psp-fing", "procs", "0", 1, 10_000_000),
    ("psp-fing", "procs", "10000001", 1, 10_000_000),
    ("psp-fing", "max_cores", "0", 1, None),
    ("psp-fing", "improve_every", "0", 1, 1_000_000),
    ("psp-fing", "improve_every", "1000001", 1, 1_000_000),
    ("psp-fing", "start", "-1", 0, MAX_START),
    ("psp-fing", "start", str(MAX_START + 1), 0, MAX_START),
    ("tsafrir-estimates", "seed", "-1", 0, None),
    ("tsafrir-estimates", "bins", "-1", 0, 10_000),
    ("tsafrir-estimates", "bins", "10001", 0, 10_000),
]


@pytest.mark.parametrize(("name", "option", "raw", "low", "high"), GENERATOR_CASES)
def test_generator_option_out_of_range_on_the_command_line(capsys, name, option, raw, low, high):
    base = "psp-fing:jobs=10" if name == "psp-fing" else "tsafrir-estimates:base=lublin:jobs=50"
    if option == "jobs":  # an option given twice in a spec is an error of its own
        base = base.partition(":")[0] + ":users=1"
    spec = f"{base},{option}={raw}"
    line = assert_usage_line(capsys, ["simulate", spec])
    assert line == "schedlab: error: " + _line("generator", name, option, raw, low, high)


# (flag, component, option, value out of range, min, max), run on a five-job trace.
COMPONENT_CASES = [
    ("-P", "psp", "window", "0", 1, 10_000),
    ("-P", "psp", "window", "10001", 1, 10_000),
    ("-P", "psp", "window", HUGE, 1, 10_000),
    ("-P", "psp", "new_user_class", "0", 1, None),
    ("-P", "multifactor", "psp_window", "0", 1, 10_000),
    ("-P", "multifactor", "psp_window", "10001", 1, 10_000),
    ("-P", "multifactor", "psp_window", HUGE, 1, 10_000),
    ("-P", "multifactor", "psp_new_user_class", "0", 1, None),
    ("-E", "easy++", "window", "0", 1, 10_000),
    ("-E", "easy++", "window", "10001", 1, 10_000),
    ("-E", "easy++", "window", HUGE, 1, 10_000),
    ("-E", "user-average", "window", "0", 1, 10_000),
    ("-E", "user-average", "window", "10001", 1, 10_000),
    ("-E", "user-average", "window", HUGE, 1, 10_000),
    ("-E", "learned", "window", "1", 2, 10_000),
    ("-E", "learned", "window", "10001", 2, 10_000),
    ("-E", "learned", "window", "1000000000", 2, 10_000),
    ("-E", "learned", "under_weight", "0", 1, 1000),
    ("-E", "learned", "under_weight", "1001", 1, 1000),
    ("-E", "learned", "batch", "0", 1, 100_000),
    ("-E", "learned", "batch", "100001", 1, 100_000),
]


@pytest.mark.parametrize(("flag", "name", "option", "raw", "low", "high"), COMPONENT_CASES)
def test_component_option_out_of_range_on_the_command_line(
    capsys, swf, flag, name, option, raw, low, high
):
    kind = "policy" if flag == "-P" else "estimator"
    choose = "-p" if flag == "-P" else "-e"
    line = assert_usage_line(capsys, ["simulate", swf, choose, name, flag, f"{option}={raw}"])
    assert line == "schedlab: error: " + _line(kind, name, option, raw, low, high)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["-p", "psp", "-P", "edges=nan"], "policy psp: option edges='nan': "),
        (["-p", "psp", "-P", "edges=0.5,nan"], "policy psp: option edges='0.5,nan': "),
        (
            ["-p", "multifactor", "-P", "queue_priorities=1:nan"],
            "policy multifactor: option queue_priorities='1:nan': ",
        ),
        (
            ["-p", "multifactor", "-P", "queue_priorities=1:inf"],
            "policy multifactor: option queue_priorities='1:inf': ",
        ),
    ],
)
def test_nan_in_a_list_option_is_refused(capsys, swf, args, fragment):
    line = assert_usage_line(capsys, ["simulate", swf, *args], fragment)
    assert "finite" in line


# --- negative seeds -------------------------------------------------------------------


def test_negative_seed_of_compare_ci(capsys, swf):
    assert_usage_line(
        capsys,
        ["compare", swf, "-p", "fcfs,sjf", "--ci", "--resamples", "100", "--ci-seed", "-1"],
        "'--ci-seed'",
        "-1 is not in the range x>=0",
    )


def test_negative_seed_of_experiment_psp(capsys, tmp_path):
    assert_usage_line(
        capsys,
        [
            *("experiment", "psp", "--workloads", "1", "--no-figures"),
            *("--out", str(tmp_path / "o"), "-G", "jobs=30", "--seed", "-1"),
        ],
        "'--seed'",
        "-1 is not in the range x>=0",
    )
    assert not (tmp_path / "o").exists()


def test_negative_seed_of_experiment_estimates(capsys, tmp_path):
    assert_usage_line(
        capsys,
        [
            *("experiment", "estimates", "-w", "psp-fing:jobs=20", "--estimators", "actual"),
            *("--no-figure", "--quiet", "--output", str(tmp_path / "o"), "--seed", "-1"),
        ],
        "'--seed'",
        "-1 is not in the range x>=0",
    )
    assert not (tmp_path / "o").exists()


def _sweep(capsys, tmp_path: Path, toml: str) -> str:
    config = tmp_path / "sweep.toml"
    config.write_text(toml)
    out = tmp_path / "out"
    args = ["sweep", str(config), "--out", str(out), "--workers", "1", "--no-progress"]
    code, _, err = run_main(capsys, *args)
    lines = err.strip().splitlines()
    assert code == 2, (code, err)
    assert len(lines) == 1 and lines[0].startswith("schedlab: error: "), err
    assert not (out / "results.csv").exists()
    return lines[0]


def test_negative_seed_in_a_sweep_workload(capsys, tmp_path):
    line = _sweep(
        capsys, tmp_path, 'workloads = ["psp-fing:seed=-1,jobs=20"]\npolicies = ["fcfs"]\n'
    )
    assert line == "schedlab: error: generator psp-fing: option seed='-1': must be >= 0"


@pytest.mark.parametrize(
    ("seeds", "fragment"),
    [("[-1]", "must not be negative"), ("[1.5]", "expected whole numbers"), ("[true]", "true")],
)
def test_sweep_seeds_are_whole_numbers_not_below_zero(capsys, tmp_path, seeds, fragment):
    line = _sweep(
        capsys,
        tmp_path,
        f'workloads = ["psp-fing:jobs=20"]\npolicies = ["fcfs"]\nseeds = {seeds}\n',
    )
    # the error names the sweep file (sweep audit, finding 13), then the key
    assert line.startswith(f"schedlab: error: {tmp_path / 'sweep.toml'}: seeds: ")
    assert fragment in line.lower()


# --- typed values (TOML, the Python API) ----------------------------------------------


@pytest.mark.parametrize(
    ("policy", "table", "expected"),
    [
        ("psp", "window = 2.5", "policy psp: option window=2.5: expected int"),
        ("psp", "window = 20000", "policy psp: option window=20000: must be in 1..10000"),
        ("psp", "window = true", "policy psp: option window=True: expected int"),
        ("psp", "new_user_class = 2.5", "policy psp: option new_user_class=2.5: expected int"),
        ("psp", "edges = [0.5, nan]", "policy psp: option edges=[0.5, nan]: "),
        (
            "multifactor",
            "psp_window = 2.5",
            "policy multifactor: option psp_window=2.5: expected int",
        ),
        (
            "multifactor",
            "queue_priorities = 5",
            "policy multifactor: option queue_priorities=5: ",
        ),
        (
            "multifactor",
            'queue_priorities = {"1" = nan}',
            "policy multifactor: option queue_priorities={'1': nan}: ",
        ),
    ],
)
def test_sweep_file_typed_policy_options_are_checked(
    capsys, tmp_path, swf, policy, table, expected
):
    toml = f'workloads = ["{swf}"]\npolicies = ["{policy}"]\n[policy_options.{policy}]\n{table}\n'
    line = _sweep(capsys, tmp_path, toml)
    assert line.startswith("schedlab: error: " + expected), line


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (
            {"estimator": "user-average", "estimator_options": {"window": 2.5}},
            "estimator user-average: option window=2.5: expected int",
        ),
        (
            {"estimator": "easy++", "estimator_options": {"window": True}},
            "estimator easy++: option window=True: expected int",
        ),
        (
            {"estimator": "learned", "estimator_options": {"window": 10**9}},
            "estimator learned: option window=1000000000: must be in 2..10000",
        ),
        (
            {"estimator": "learned", "estimator_options": {"rate": math.nan}},
            "estimator learned: option rate=nan: must be a number, not NaN",
        ),
        (
            {"policy": "multifactor", "policy_options": {"psp_window": 2.5}},
            "policy multifactor: option psp_window=2.5: expected int",
        ),
        (
            {"policy": "multifactor", "policy_options": {"queue_priorities": 5}},
            "policy multifactor: option queue_priorities=5: ",
        ),
        (
            {"policy": "psp", "policy_options": {"new_user_class": 2.5}},
            "policy psp: option new_user_class=2.5: expected int",
        ),
    ],
)
def test_api_typed_options_are_checked(swf, options, expected):
    workload = schedlab.read(swf)
    with pytest.raises(UsageError) as info:
        schedlab.simulate(workload, progress=False, **options)
    assert str(info.value).startswith(expected), str(info.value)


def test_api_whole_float_becomes_an_int(swf):
    workload = schedlab.read(swf)
    result = schedlab.simulate(
        workload, policy="psp", policy_options={"window": 3.0}, progress=False
    )
    window = result.options["policy"]["window"]
    assert window == 3 and type(window) is int


def test_open_bounds_refuse_the_bound_itself_and_say_so() -> None:
    rate = OptionSpec("rate", float, 0.05, min=0, max=10, min_open=True)
    assert rate.bounds_text == "in (0, 10]"
    assert rate.convert("10", "estimator x") == 10.0
    assert rate.convert("1e-9", "estimator x") == 1e-9
    for bad in ("0", "0.0", "-1", "10.5"):
        with pytest.raises(UsageError, match=re.escape(f"option rate='{bad}': must be in (0, 10]")):
            rate.convert(bad, "estimator x")
    below = OptionSpec("share", float, 0.5, max=1, max_open=True)
    assert below.bounds_text == "< 1"
    with pytest.raises(UsageError, match=re.escape("must be < 1")):
        below.convert(1, "policy y")
    assert OptionSpec("n", int, 1, min=0, min_open=True).bounds_text == "> 0"
    with pytest.raises(ValueError, match="default 0 is not > 0"):
        OptionSpec("n", int, 0, min=0, min_open=True)


def test_learned_rate_says_the_same_bounds_above_and_below(
    capsys: pytest.CaptureFixture[str], swf: str
) -> None:
    for value in ("0", "11"):
        with pytest.raises(SystemExit) as exc:
            main(["simulate", swf, "-e", "learned", "-E", f"rate={value}"])
        assert exc.value.code == 2
        err = capsys.readouterr().err.strip()
        assert (
            err == f"schedlab: error: estimator learned: option rate='{value}': must be in (0, 10]"
        )
