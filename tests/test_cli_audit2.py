"""The command line after the second consistency audit (cli2, findings 4-13): one
meaning of ``--from``/``-R`` with generator specs, ``--ci-seed``, outputs under a
file, ``-`` only where standard output is supported, empty ``-M``/``-G`` values,
the bounds and rules of ``--procs``, suffixes that contradict the format, and
``--estimators`` duplicates named as typed."""

from __future__ import annotations

from pathlib import Path

import pytest
from schedlab.testing import run_cli

SWF = """\
; MaxProcs: 8
1 0 -1 100 2 -1 -1 2 400 -1 1 1 1 -1 1 -1 -1 -1
2 1 -1 10 4 -1 -1 4 400 -1 1 2 1 -1 1 -1 -1 -1
3 2 -1 50 2 -1 -1 2 400 -1 1 3 1 -1 1 -1 -1 -1
4 3 -1 5 1 -1 -1 1 400 -1 1 1 1 -1 1 -1 -1 -1
"""

SPEC = "lublin:jobs=20"


@pytest.fixture
def trace(tmp_path: Path) -> str:
    path = tmp_path / "t.swf"
    path.write_text(SWF)
    return str(path)


def _error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The one error line of ``schedlab ARGS`` (exit 2, no traceback)."""
    code, _, err = run_cli(capsys, *args)
    lines = [line for line in err.splitlines() if "warning" not in line]
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# 4 and 5: --from and -R are for trace files; an unknown reader is always an error.


@pytest.mark.parametrize(
    "args",
    [
        ("simulate", SPEC, "-R", "jobs=10", "--no-timings"),
        ("metrics", SPEC, "-R", "jobs=10"),
        ("compare", SPEC, "-p", "fcfs", "-R", "jobs=10"),
        ("info", SPEC, "-R", "jobs=10"),
        ("sweep", "-w", SPEC, "-R", "nosuch=1", "--out", "{tmp}/s"),
        ("experiment", "estimates", "-w", SPEC, "-R", "nosuch=1", "--out", "{tmp}/e"),
    ],
)
def test_read_option_with_a_generator_spec_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: tuple[str, ...]
) -> None:
    line = _error(capsys, *(a.format(tmp=tmp_path) for a in args))
    assert "-R/--read-option" in line and repr(SPEC) in line
    assert "apply to trace files" in line
    assert not (tmp_path / "s").exists() and not (tmp_path / "e").exists()


@pytest.mark.parametrize(
    "args",
    [
        ("simulate", SPEC, "--from", "nosuch", "--no-timings"),
        ("metrics", "{trace}", "--from", "nosuch"),
        ("sweep", "-w", SPEC, "--from", "nosuch", "--out", "{tmp}/s"),
        ("experiment", "estimates", "-w", SPEC, "--from", "nosuch", "--out", "{tmp}/e"),
    ],
)
def test_unknown_reader_names_from(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, trace: str, args: tuple[str, ...]
) -> None:
    line = _error(capsys, *(a.format(tmp=tmp_path, trace=trace) for a in args))
    assert "--from 'nosuch': unknown reader" in line
    assert "no such file" not in line


def test_from_with_a_generator_spec_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    line = _error(capsys, "simulate", SPEC, "--from", "swf", "--no-timings")
    assert line.endswith(
        f"--from swf: a reader reads trace files, not the generator spec "
        f"{SPEC!r} (a generator takes its options in the spec: NAME:KEY=VALUE,...)"
    )


def test_sweep_read_options_apply_to_its_trace_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, trace: str
) -> None:
    # a trace among the workloads: -R is for it, and the generator spec runs as given
    code, _, err = run_cli(
        capsys, "sweep", "-w", trace, "-w", SPEC, "-R", "lenient=true",
        "--procs", "8", "--out", str(tmp_path / "s"), "--no-progress",
    )  # fmt: skip
    assert code == 0, err


# 6: --ci-seed, with --seed a deprecated spelling in compare and sweep.


@pytest.mark.parametrize("command", ["compare", "sweep"])
def test_seed_is_deprecated_for_ci_seed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, trace: str, command: str
) -> None:
    args = ("-w", trace, "--out", str(tmp_path / "s")) if command == "sweep" else (trace,)
    code, _, err = run_cli(capsys, command, *args, "-p", "fcfs,sjf", "--seed", "3")
    assert code == 2
    assert f"`schedlab {command} --seed` is deprecated" in err
    assert "use --ci-seed (the --ci bootstrap seed) instead" in err
    assert "--ci-seed needs --ci" in err


def test_ci_seed_sets_the_bootstrap(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("compare", "lublin:jobs=200", "-p", "fcfs,sjf", "--ci", "--block", "1h")
    args = (*args, "--resamples", "100", "--json")
    code, new, err = run_cli(capsys, *args, "--ci-seed", "3")
    assert code == 0, err
    code, old, err = run_cli(capsys, *args, "--seed", "3")
    assert code == 0 and "deprecated" in err
    assert new == old


# 7: an output under a regular file is refused before any work, naming the option.


@pytest.mark.parametrize(
    ("args", "label"),
    [
        (("simulate", "{trace}", "--no-timings", "-o", "{trace}/x.swf"), "-o/--output"),
        (("convert", "{trace}", "{trace}/x.swf"), "OUT"),
        (("compare", "{trace}", "-p", "fcfs,sjf", "--report", "{trace}/p.html"), "--report"),
        (("report", "{trace}", "-o", "{trace}/sub/r.html"), "-o/--output"),
        (("platform", "infer", "{trace}", "-o", "{trace}/p.toml"), "-o/--output"),
        (("sweep", "-w", "{trace}", "--out", "{trace}/x"), "--out"),
    ],
)
def test_output_under_a_file(
    capsys: pytest.CaptureFixture[str], trace: str, args: tuple[str, ...], label: str
) -> None:
    line = _error(capsys, *(a.format(trace=trace) for a in args))
    assert f"not a folder: {trace} is a file ({label})" in line
    assert "File exists" not in line and "Not a directory" not in line


def test_sweep_out_a_file(capsys: pytest.CaptureFixture[str], trace: str) -> None:
    line = _error(capsys, "sweep", "-w", trace, "--out", trace)
    assert trace in line and "is a file" in line


def test_staged_output_under_a_file(tmp_path: Path) -> None:
    from schedlab.io import staged_output

    blocker = tmp_path / "f"
    blocker.write_text("x")
    with pytest.raises(NotADirectoryError) as caught, staged_output(blocker / "a" / "b.swf"):
        pass
    assert caught.value.filename == str(blocker / "a" / "b.swf")
    assert caught.value.strerror == f"not a folder: {blocker} is a file"


# 8: a missing output folder is created (documented).


def test_missing_output_folder_is_created(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, trace: str
) -> None:
    out = tmp_path / "new" / "deeper" / "x.swf"
    code, _, err = run_cli(capsys, "convert", trace, str(out))
    assert code == 0, err
    assert out.is_file()
    docs = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
    assert "output folders are created" in docs.read_text(encoding="utf-8").lower()


# 9: empty -M/-G values are refused as every other KEY=VALUE option's.


@pytest.mark.parametrize("value", ["", ",threshold=5", "threshold=5,", ","])
def test_empty_metric_option(capsys: pytest.CaptureFixture[str], trace: str, value: str) -> None:
    line = _error(capsys, "metrics", trace, "-M", value)
    assert f"-M/--metric-option {value!r}: expected key=value" in line


@pytest.mark.parametrize("value", ["", ",", "jobs", "jobs=30,"])
def test_empty_generator_option(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str
) -> None:
    out = tmp_path / "o"
    line = _error(
        capsys, "experiment", "psp", "--no-figures", "--workloads", "1", "-G", value,
        "--out", str(out),
    )  # fmt: skip
    assert f"-G/--generator-option {value!r}: expected KEY=VALUE" in line
    assert not out.exists()


# 10 and 11: --procs has one bound, and report measures as metrics does.


@pytest.mark.parametrize("command", ["metrics", "report", "simulate", "compare"])
def test_procs_upper_bound(capsys: pytest.CaptureFixture[str], trace: str, command: str) -> None:
    extra = ("-p", "fcfs") if command == "compare" else ()
    line = _error(capsys, command, trace, *extra, "--procs", str(2**53))
    assert "--procs" in line and "9007199254740991" in line


def test_report_procs_below_the_largest_job(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, trace: str
) -> None:
    out = tmp_path / "r.html"
    line = _error(capsys, "report", trace, "--procs", "3", "-o", str(out))
    metrics = _error(capsys, "metrics", trace, "--procs", "3")
    assert line == metrics
    assert "--procs 3: smaller than the largest job of the trace (4 processors)" in line
    assert not out.exists()


# 12: "-" is standard output only for convert OUT.


@pytest.mark.parametrize(
    ("args", "label"),
    [
        (("simulate", "{trace}", "--no-timings", "-o", "-", "--to", "swf"), "-o/--output"),
        (("report", "{trace}", "-o", "-"), "-o/--output"),
        (("platform", "infer", "{trace}", "-o", "-"), "-o/--output"),
        (("compare", "{trace}", "-p", "fcfs", "--report", "-"), "--report"),
        (("compare", "{trace}", "-p", "fcfs", "--plot", "-"), "--plot"),
        (("convert", "{trace}", "{tmp}/o.swf", "--rejects", "-"), "--rejects"),
        (("sweep", "-w", "{trace}", "--out", "-"), "--out"),
    ],
)
def test_dash_is_refused_where_stdout_is_not_supported(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    trace: str,
    args: tuple[str, ...],
    label: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    line = _error(capsys, *(a.format(trace=trace, tmp=tmp_path) for a in args))
    assert f"{label} -: standard output is not supported here" in line
    assert not (tmp_path / "-").exists()


def test_two_outputs_to_stdout() -> None:
    from schedlab.cli.flags import check_outputs
    from schedlab.errors import UsageError

    with pytest.raises(UsageError, match="OUT - and --rejects -: only one output"):
        check_outputs([("OUT", "-"), ("--rejects", "-")], stdout=["OUT", "--rejects"])


def test_convert_to_stdout_still_works(capsys: pytest.CaptureFixture[str], trace: str) -> None:
    code, out, err = run_cli(capsys, "convert", trace, "-", "--to", "swf")
    assert code == 0, err
    assert "MaxProcs: 8" in out


# 13: a suffix that contradicts the format; --estimators duplicates as typed.


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("platform", "infer", "{trace}", "-o", "{tmp}/p.json"), "writes a TOML platform file"),
        (("report", "{trace}", "-o", "{tmp}/r.png"), "writes an HTML page"),
        (("report", "{trace}", "-o", "{tmp}/r.txt"), "writes an HTML page"),
    ],
)
def test_suffix_contradicting_the_format(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    trace: str,
    args: tuple[str, ...],
    words: str,
) -> None:
    line = _error(capsys, *(a.format(trace=trace, tmp=tmp_path) for a in args))
    assert "-o/--output" in line and words in line
    assert list(tmp_path.iterdir()) == [Path(trace)]


def test_platform_infer_toml_still_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, trace: str
) -> None:
    code, _, err = run_cli(capsys, "platform", "infer", trace, "-o", str(tmp_path / "p.toml"))
    assert code == 0, err


def test_estimators_duplicate_named_as_typed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    line = _error(
        capsys, "experiment", "estimates", "-w", SPEC, "--estimators", "actual,actual",
        "--out", str(tmp_path / "e"),
    )  # fmt: skip
    assert "--estimators: 'actual' is given twice" in line
    assert "perfect" not in line


def test_sweep_file_reader_names_its_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "s.toml"
    config.write_text(f'workloads = ["{SPEC}"]\nfrom = "nosuch"\n')
    line = _error(capsys, "sweep", str(config), "--out", str(tmp_path / "s"))
    assert "from = 'nosuch': unknown reader" in line
    config.write_text(f'workloads = ["{SPEC}"]\n[read_options]\nlenient = "true"\n')
    line = _error(capsys, "sweep", str(config), "--out", str(tmp_path / "s"))
    assert line.endswith(
        f"[read_options] lenient: reader options apply to trace files, "
        f"not to the generator spec {SPEC!r} (give the generator's options "
        "in the spec: NAME:KEY=VALUE,...)"
    )
