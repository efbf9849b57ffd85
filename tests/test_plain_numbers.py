"""Numbers given as text (options of components, numeric command-line flags) are
ASCII digits without underscores, as the trace formats read them: Python's
``int()`` and ``float()`` also take ``"５"`` (a full-width digit), ``"١"``
(Arabic-Indic) and ``"1_000"``, and so did schedlab's options."""

from __future__ import annotations

from pathlib import Path

import pytest
from schedlab import OptionSpec
from schedlab.errors import UsageError
from schedlab.testing import run_cli

SWF = Path(__file__).resolve().parents[2] / "shared" / "data" / "swf"
HPC2N = SWF / "HPC2N-2002_excerpt-3170jobs_alea.swf"

ODD = ("５", "١٢", "1_000", "0_5", "１.5")


@pytest.mark.parametrize("kind", [int, float])
@pytest.mark.parametrize("text", ODD)
def test_option_spec_refuses_other_digits_and_underscores(kind: type, text: str) -> None:
    spec = OptionSpec("n", kind, 1)
    with pytest.raises(UsageError, match=r"policy x: option n=.*ASCII digits only"):
        spec.convert(text, "policy x")


@pytest.mark.parametrize(
    ("kind", "text", "value"),
    [(int, " 12 ", 12), (int, "3.0", 3), (float, "-0.5", -0.5), (float, "1e3", 1000.0)],
)
def test_option_spec_still_takes_ascii_numbers(kind: type, text: str, value: float) -> None:
    assert OptionSpec("n", kind, 1).convert(text, "policy x") == value


def test_typed_values_are_not_text() -> None:
    # A number from a TOML file or the Python API has no digits to check.
    assert OptionSpec("n", int, 1).convert(1000, "policy x") == 1000


@pytest.mark.parametrize(
    "args",
    [
        ("simulate", str(HPC2N), "-p", "psp", "-P", "window=５"),
        ("simulate", str(HPC2N), "-e", "learned", "-E", "rate=0_1"),
        ("simulate", "lublin:jobs=1_00"),
        ("simulate", str(HPC2N), "--procs", "1_20"),
        ("simulate", str(HPC2N), "--procs=１２０"),
        ("compare", str(HPC2N), "-p", "fcfs,sjf", "--procs", "١٢٠"),
        ("report", str(HPC2N), "-o", "/nonexistent-dir/unused.html", "--bin-width", "6_0"),
    ],
)
def test_command_line_refuses_them(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    code, _out, err = run_cli(capsys, *args)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("schedlab: error:"), err
    assert "ASCII digits" in lines[0]
    assert "Traceback" not in err


def test_plain_numbers_still_run(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run_cli(capsys, "simulate", "lublin:jobs=100,procs=64", "--procs", "64")
    assert code == 0, err
    code, _out, err = run_cli(capsys, "simulate", "lublin:jobs=0")
    assert code == 2 and "option jobs='0': must be >= 1" in err
