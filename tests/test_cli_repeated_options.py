"""An option that takes one value, given twice with different values, is a one-line
usage error in every built-in command (click kept the last one silently: `simulate
-p psp -p sjf` ran SJF). The same value twice, repeatable options, flags and
anything after ``--`` pass."""

from __future__ import annotations

from pathlib import Path

import pytest
from schedlab.testing import run_cli

HPC2N = "HPC2N-2002_excerpt-3170jobs_alea.swf"


@pytest.fixture
def trace(swf_dir: Path) -> str:
    return str(swf_dir / HPC2N)


def one_line_error(capsys, *args: str) -> str:
    code, _, err = run_cli(capsys, *args)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, (code, err)
    return lines[0]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("simulate", "{t}", "--procs", "8", "--procs", "16"), "--procs given twice"),
        (("simulate", "{t}", "-p", "psp", "-p", "sjf"), "-p given twice"),
        (("simulate", "{t}", "--policy=psp", "-psjf"), "-p given twice"),
        (("metrics", "{t}", "--by", "user", "--by", "queue"), "--by given twice"),
        (("compare", "{t}", "--procs", "8", "--procs", "9"), "--procs given twice"),
        (("sweep", "{t}", "--procs", "4", "--procs", "5", "-o", "{o}"), "--procs given twice"),
        (("report", "{t}", "-o", "{o}/a.html", "-o", "{o}/b.html"), "-o given twice"),
        (("platform", "infer", "{t}", "-o", "{o}/a.toml", "-o", "{o}/b.toml"), "-o given"),
        (("convert", "{t}", "{o}/x.swf", "--to", "swf", "--to", "sss"), "--to given twice"),
    ],
)
def test_a_repeated_option_is_one_line_error(capsys, trace, tmp_path, args, said):
    line = one_line_error(capsys, *(a.format(t=trace, o=tmp_path) for a in args))
    assert said in line
    assert list(tmp_path.iterdir()) == []  # nothing was run or written


def test_the_same_value_twice_and_repeatable_options_pass(capsys, trace):
    code, out, err = run_cli(
        capsys, "simulate", trace, "--procs", "120", "--procs=120",
        "-R", "lenient=true", "-R", "lenient=true", "--no-timings", "--no-timings",
    )  # fmt: skip
    assert code == 0, err
    assert "wait" in out


def test_a_value_that_looks_like_an_option_is_a_value(capsys, trace, tmp_path, monkeypatch):
    # "-p.swf" is the value of -o (a file of that name), not a second policy.
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(capsys, "simulate", trace, "-p", "fcfs", "-o", "-p.swf")
    assert code == 0, err
    assert (tmp_path / "-p.swf").exists()


# ------------------------------------------------ report --simulate takes -P and -B


def test_report_simulate_takes_policy_and_backfill_options(capsys, trace, tmp_path):
    """-P/-B reach the simulation (a different page) and its label; without
    --simulate they are usage errors, and a component without the option says so."""
    pages = {}
    for name, extra in (("plain", ()), ("opts", ("-P", "window=5", "-B", "order=sjbf"))):
        out = tmp_path / f"{name}.html"
        code, _, err = run_cli(
            capsys, "report", trace, "--simulate", "psp+easy", "--static", "-o", str(out), *extra
        )
        assert code == 0, err
        pages[name] = out.read_text(encoding="utf-8")
    assert "under psp (window=5) + easy (order=sjbf)" in pages["opts"]
    assert "under psp + easy<" in pages["plain"] and "window=5" not in pages["plain"]
    line = one_line_error(capsys, "report", trace, "-P", "window=5", "-o", f"{tmp_path}/x.html")
    assert "-P/--policy-option needs --simulate" in line
    line = one_line_error(
        capsys, "report", trace, "--simulate", "fcfs+easy", "-P", "window=5",
        "--static", "-o", f"{tmp_path}/y.html",
    )  # fmt: skip
    assert "policy fcfs: unknown option 'window'" in line


# ------------------------------------------------ empty names are not "the default"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("metrics", "{t}", "-m", ""), "-m/--metric '': give a name"),
        (("metrics", "{t}", "-m", "wait", "-m", " , "), "-m/--metric ' , ': give a name"),
        (("metrics", "{t}", "--stat", ""), "--stat '': give a name"),
        (("compare", "{t}", "-p", "fcfs+easy", "-m", ""), "-m/--metric '': give a name"),
    ],
)
def test_an_empty_metric_or_statistic_name_is_an_error(capsys, trace, args, said):
    """`-m ''` printed every metric: an empty name silently meant the default set."""
    line = one_line_error(capsys, *(a.format(t=trace) for a in args))
    assert said in line
