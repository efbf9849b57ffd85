"""The command line after the third consistency audit (cli3), part B: outputs in a
folder that cannot be written (named as given, with the option, before the work),
``-`` and paths through a file for the experiments, ``google-dask`` and
``new-plugin``, strict integers in the experiments and ``sweep --seeds``, the
defaults of ``schedlab plugins NAME`` in the option's syntax, the suffix of
``--allocations-out``, status lines on stderr, ``procs`` as an integer, and seeds
given to runs of trace files only."""

from __future__ import annotations

import errno
import json
import os
import tempfile
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


@pytest.fixture
def trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``t.swf`` in ``tmp_path``, which is the current folder."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.swf").write_text(SWF)
    return "t.swf"


def _error(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    """The one error line of ``schedlab ARGS`` (exit 2, no traceback) and stdout."""
    code, out, err = run_cli(capsys, *args)
    lines = [line for line in err.splitlines() if "warning" not in line]
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0], out


def _dask_source(tmp_path: Path) -> str:
    source = tmp_path / "g"
    source.mkdir()
    return str(source)


# 2. an output in a folder that cannot be written: the target and the option, early


def test_staged_output_names_the_target_when_the_part_cannot_be_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from schedlab.io import atomic_output

    def read_only(prefix: str = "", suffix: str = "", dir: str | None = None) -> str:
        part = os.path.join(dir or ".", f"{prefix}abcd1234{suffix}")
        raise OSError(errno.EROFS, "Read-only file system", part)

    monkeypatch.setattr(tempfile, "mkdtemp", read_only)
    target = tmp_path / "s.swf"
    with pytest.raises(OSError) as caught:
        with atomic_output(target) as fh:
            fh.write("x")
    assert caught.value.filename == os.fspath(target)
    assert ".part" not in str(caught.value)
    assert not target.exists()


@pytest.fixture
def read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder ``ro`` that ``os.access`` says cannot be written (the tests may run
    as root, for whom no permission bit makes a folder read-only)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    real = os.access

    def access(path: object, mode: int, *args: object, **kwargs: object) -> bool:
        if mode & os.W_OK and os.path.abspath(os.fspath(path)) == str(folder):  # type: ignore[arg-type]
            return False
        return real(path, mode, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", access)
    return folder


@pytest.mark.parametrize(
    ("args", "label"),
    [
        (("simulate", "t.swf", "-o", "ro/s.swf", "--no-timings"), "-o/--output"),
        (("simulate", "t.swf", "-o", "ro/new/s.swf", "--no-timings"), "-o/--output"),
        (("convert", "t.swf", "ro/o.swf.gz"), "OUT"),
        (("compare", "t.swf", "-p", "fcfs,sjf", "--plot", "ro/c.png"), "--plot"),
        (("compare", "t.swf", "-p", "fcfs", "--report", "ro/c.html"), "--report"),
        (("report", "t.swf", "--simulate", "fcfs", "-o", "ro/r.html"), "-o/--output"),
        (("platform", "infer", "t.swf", "-o", "ro/p.toml"), "-o/--output"),
        (("sweep", "-w", "t.swf", "--workers", "1", "--out", "ro/sw"), "--out"),
        (("sweep", "-w", "t.swf", "--workers", "1", "--out", "ro"), "--out"),
        (
            ("experiment", "estimates", "-w", "t.swf", "--no-figure", "--out", "ro/e"),
            "--out/--output",
        ),
        (
            (
                "experiment",
                "psp",
                "--workloads",
                "1",
                "-G",
                "jobs=20",
                "--no-figures",
                "--workers",
                "1",
                "--out",
                "ro/p",
            ),
            "--out/--output",
        ),
        (("new-plugin", "qq", "--kind", "policy", "--dest", "ro"), "--dest"),
    ],
)
def test_unwritable_output_folder_is_named_before_the_work(
    capsys: pytest.CaptureFixture[str],
    trace: str,
    read_only: Path,
    args: tuple[str, ...],
    label: str,
) -> None:
    line, out = _error(capsys, *args)
    target = next(a for a in args if a.startswith("ro"))
    assert line.startswith(f"schedlab: error: {target}: "), line
    assert "Permission denied" in line or "Read-only file system" in line, line
    assert line.endswith(f"({label})"), line
    assert ".part" not in line
    assert out == ""  # nothing simulated or printed first
    assert os.listdir(read_only) == []


def test_google_dask_unwritable_output_is_named_before_the_work(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    read_only: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("dask", reason="needs the dask extra (dev installs it)")
    from schedlab.formats.google import v3_reader

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("read before the output was checked")

    monkeypatch.setattr(v3_reader, "read_v3", never)
    source = _dask_source(tmp_path)
    for args in ((str(read_only / "g.swf"),), (str(read_only / "gp"), "--parquet")):
        line, _ = _error(capsys, "google-dask", source, *args, "--workers", "1")
        assert f"{args[0]}: " in line and line.endswith("(OUTPUT)"), line


def test_writable_output_and_devices_pass(
    capsys: pytest.CaptureFixture[str], trace: str, read_only: Path
) -> None:
    code, _, err = run_cli(capsys, "simulate", trace, "-o", "ok/s.swf", "--no-timings")
    assert code == 0, err
    assert Path("ok/s.swf").is_file()
    code, _, err = run_cli(capsys, "simulate", trace, "-o", os.devnull, "--to", "swf")
    assert code == 0, err


# 3. "-" is no folder or file of the experiments or google-dask


@pytest.mark.parametrize(
    "args",
    [
        ("experiment", "estimates", "-w", "t.swf", "--no-figure", "--out", "-"),
        ("experiment", "estimates", "-w", "t.swf", "--no-figure", "--output=-"),
        ("experiment", "psp", "--workloads", "1", "-G", "jobs=20", "--no-figures", "--out", "-"),
        ("new-plugin", "qq", "--kind", "policy", "--dest", "-"),
    ],
)
def test_dash_is_refused_by_the_experiments(
    capsys: pytest.CaptureFixture[str], trace: str, args: tuple[str, ...]
) -> None:
    line, _ = _error(capsys, *args)
    assert "-: standard output is not supported here" in line, line
    assert "./-" in line
    assert not os.path.exists("-")


def test_dash_is_refused_by_google_dask(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("dask", reason="needs the dask extra (dev installs it)")
    monkeypatch.chdir(tmp_path)
    source = _dask_source(tmp_path)
    line, _ = _error(capsys, "google-dask", source, "-", "--to", "swf", "--workers", "1")
    assert line.endswith(
        "OUTPUT -: standard output is not supported here; name a file (./- for a file named -)"
    ), line
    assert not os.path.exists("-")


# 4. an output path through a regular file: the documented one-line check


@pytest.mark.parametrize(
    ("args", "label"),
    [
        (
            ("experiment", "estimates", "-w", "t.swf", "--no-figure", "--out", "t.swf/x"),
            "--out/--output",
        ),
        (
            (
                "experiment",
                "psp",
                "--workloads",
                "1",
                "-G",
                "jobs=20",
                "--no-figures",
                "--out",
                "t.swf/x",
            ),
            "--out/--output",
        ),
        (("new-plugin", "qq", "--kind", "policy", "--dest", "t.swf/x"), "--dest"),
    ],
)
def test_output_through_a_file_is_refused_early(
    capsys: pytest.CaptureFixture[str], trace: str, args: tuple[str, ...], label: str
) -> None:
    line, out = _error(capsys, *args)
    assert line == f"schedlab: error: t.swf/x: not a folder: t.swf is a file ({label})"
    assert out == ""


@pytest.mark.parametrize("args", [("t.swf/x",), ("t.swf/x", "--parquet"), ("t.swf/x.swf",)])
def test_google_dask_output_through_a_file(
    capsys: pytest.CaptureFixture[str], trace: str, tmp_path: Path, args: tuple[str, ...]
) -> None:
    pytest.importorskip("dask", reason="needs the dask extra (dev installs it)")
    source = _dask_source(tmp_path)
    line, _ = _error(capsys, "google-dask", source, *args, "--workers", "1")
    assert line == f"schedlab: error: {args[0]}: not a folder: t.swf is a file (OUTPUT)"


# 6. strict integers in the experiments and sweep --seeds


@pytest.mark.parametrize(
    "args",
    [
        ("experiment", "psp", "--workloads", "1", "--seed", "1_0", "--no-figures"),
        ("experiment", "psp", "--workloads", "\u0661", "--no-figures"),
        ("experiment", "psp", "--workloads", "1", "--workers", "1_0", "--no-figures"),
        ("experiment", "estimates", "-w", "t.swf", "--jobs", "5_0", "--no-figure"),
        ("experiment", "estimates", "-w", "lublin:jobs=20,estimates=tsafrir", "--seed", "\u0663"),
        ("sweep", "-w", "lublin:jobs=20", "--seeds", "1_0"),
        ("sweep", "-w", "lublin:jobs=20", "--seeds", "\u0661-\u0662"),
    ],
)
def test_integers_in_plain_ascii_digits(
    capsys: pytest.CaptureFixture[str], trace: str, args: tuple[str, ...]
) -> None:
    line, _ = _error(capsys, *args)
    assert "in ASCII digits, no underscores" in line, line
    flag = next(a for a in args if any(c == "_" or not c.isascii() for c in a))
    assert flag in line


# 7. plugins NAME: defaults in the option's own syntax


def test_plugins_defaults_in_the_option_syntax(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "plugins", "psp", "--kind", "policy")
    assert code == 0, err
    edges = next(line for line in out.splitlines() if line.strip().startswith("edges"))
    assert "0.2/0.4/0.6/0.8" in edges and "(0.2" not in edges
    unset = next(line for line in out.splitlines() if "new_user_class" in line)
    assert " - " not in unset and "(not set)" in unset
    code, out, err = run_cli(capsys, "plugins", "psp", "--kind", "policy", "--json")
    defaults = {o["name"]: o["default"] for o in json.loads(out)[0]["options"]}
    assert defaults == {"window": 10, "edges": [0.2, 0.4, 0.6, 0.8], "new_user_class": None}


def test_plugins_default_text_is_accepted_by_the_option(
    capsys: pytest.CaptureFixture[str], trace: str
) -> None:
    code, out, err = run_cli(capsys, "plugins", "psp", "--kind", "policy")
    edges = next(line for line in out.splitlines() if line.strip().startswith("edges"))
    shown = edges.split()[-1 - edges.split()[::-1].index("0.2/0.4/0.6/0.8")]
    code, _, err = run_cli(
        capsys, "simulate", trace, "-p", "psp", "-P", f"edges={shown}", "--no-timings"
    )
    assert code == 0, err


# 8. --allocations-out writes CSV


@pytest.mark.parametrize("name", ["al.json", "al.png", "al.json.gz"])
def test_allocations_out_suffix_must_be_csv(
    capsys: pytest.CaptureFixture[str], trace: str, name: str
) -> None:
    line, out = _error(
        capsys, "simulate", trace, "--procs", "8", "--allocations-out", name, "--no-timings"
    )
    assert "--allocations-out" in line and "CSV" in line and ".csv" in line, line
    assert out == "" and not os.path.exists(name)


# 9. status lines ("wrote FILE") on stderr, data on stdout


def test_status_lines_go_to_stderr(capsys: pytest.CaptureFixture[str], trace: str) -> None:
    runs = [
        (("simulate", trace, "-o", "s.swf", "--no-timings"), "schedule written to s.swf"),
        (("platform", "infer", trace, "-o", "p.toml"), "wrote p.toml"),
        (
            ("sweep", "-w", trace, "--workers", "1", "--no-progress", "--out", "sw"),
            "wrote sw/results.csv",
        ),
        (
            (
                "experiment",
                "psp",
                "--workloads",
                "1",
                "-G",
                "jobs=20",
                "--no-figures",
                "--workers",
                "1",
                "--out",
                "ps",
            ),
            "wrote ps/table3.csv",
        ),
        (
            ("experiment", "estimates", "-w", trace, "--no-figure", "--out", "es"),
            "wrote es/estimates.csv",
        ),
    ]
    for args, status in runs:
        code, out, err = run_cli(capsys, *args)
        assert code == 0, err
        assert status in err, (args, err)
        assert "wrote " not in out and "written to" not in out, (args, out)


def test_report_status_line_on_stderr(capsys: pytest.CaptureFixture[str], trace: str) -> None:
    pytest.importorskip("matplotlib")
    code, out, err = run_cli(
        capsys, "report", trace, "--simulate", "fcfs", "--static", "-o", "r.html"
    )
    assert code == 0, err
    assert "wrote r.html" in err and out == ""


def test_google_dask_status_line_on_stderr(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("dask", reason="needs the dask extra (dev installs it)")
    import schedlab
    from schedlab.formats.google import v3_reader

    (tmp_path / "t.swf").write_text(SWF)
    workload = schedlab.read(str(tmp_path / "t.swf"))
    workload.meta["skipped"] = 0
    monkeypatch.setattr(v3_reader, "read_v3", lambda *a, **k: workload)
    target = tmp_path / "out.swf"
    code, out, err = run_cli(
        capsys, "google-dask", _dask_source(tmp_path), str(target), "--workers", "1"
    )
    assert code == 0, err
    assert f"to {target}" in err and "wrote" not in out


# 11. procs in metrics JSON: an integer


def test_metrics_json_procs_is_an_integer(capsys: pytest.CaptureFixture[str], trace: str) -> None:
    code, out, err = run_cli(capsys, "metrics", trace, "--json")
    assert code == 0, err
    procs = json.loads(out)["procs"]
    assert procs == 8 and isinstance(procs, int)
    code, out, err = run_cli(capsys, "simulate", trace, "--json", "--no-timings")
    procs = json.loads(out)["metrics"]["procs"]
    assert procs == 8 and isinstance(procs, int)


# 12. workload seeds with trace files only: an error, as -R with generators only


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("sweep", "-w", "t.swf", "--seeds", "1-3", "--out", "sw"), "--seeds 1-3"),
        (("experiment", "estimates", "-w", "t.swf", "--seed", "7", "--no-figure"), "--seed 7"),
    ],
)
def test_seeds_with_only_trace_files_are_refused(
    capsys: pytest.CaptureFixture[str], trace: str, args: tuple[str, ...], flag: str
) -> None:
    line, out = _error(capsys, *args)
    assert line.startswith(f"schedlab: error: {flag}: seeds apply to generator specs"), line
    assert "'t.swf'" in line and out == ""


def test_seeds_with_a_generator_among_the_workloads_pass(
    capsys: pytest.CaptureFixture[str], trace: str
) -> None:
    code, _, err = run_cli(
        capsys,
        "sweep",
        "-w",
        trace,
        "-w",
        "lublin:jobs=20",
        "--seeds",
        "1-2",
        "--workers",
        "1",
        "--no-progress",
        "--out",
        "sw",
    )
    assert code == 0, err
    code, _, err = run_cli(
        capsys, "experiment", "estimates", "-w", trace, "--no-figure", "--out", "es"
    )  # the default seed is no error
    assert code == 0, err


def test_sweep_file_seeds_with_only_trace_files_warn(
    capsys: pytest.CaptureFixture[str], trace: str
) -> None:
    Path("s.toml").write_text('workloads = ["t.swf"]\nseeds = "1-3"\nout = "sw"\n')
    code, _, err = run_cli(capsys, "sweep", "s.toml", "--workers", "1", "--no-progress")
    assert code == 0, err
    warning = [line for line in err.splitlines() if "warning" in line]
    assert len(warning) == 1 and "seeds 1,2,3 (the sweep file's)" in warning[0], err
