"""``schedlab compare`` against hostile options: a figure suffix matplotlib cannot
write, windows so short that the bootstrap would need billions of them, and a full
disk under ``--plot`` and ``--report``."""

from __future__ import annotations

import errno
import os
import types
from pathlib import Path

import pytest
from schedlab.errors import UsageError
from schedlab.testing import run_cli as run_main


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("schedlab: error: "), err
    assert "internal error" not in err and "Traceback" not in err
    return lines[0]


@pytest.fixture()
def trace(swf_dir: Path) -> str:
    """A trace whose 10,000 submissions span 7.7 million seconds (89.2 days)."""
    return str(swf_dir / "lublin_256.swf")


# ----------------------------------------------------------------- --plot suffix


@pytest.mark.parametrize("name", ["out.txt", "out", "out.PNG.bak"])
def test_a_plot_suffix_matplotlib_cannot_write_is_a_usage_error(capsys, tmp_path, trace, name):
    plot = tmp_path / name
    code, out, err = run_main(capsys, "compare", trace, "-p", "fcfs", "--plot", str(plot))
    assert code == 2
    line = one_error_line(err)
    assert line.startswith(f"schedlab: error: --plot {plot}: ")
    assert ".png, .ps, .raw" in line and ".pdf" in line and ".svg" in line
    assert out == ""  # refused before simulating: no table printed
    assert not plot.exists()


def test_save_figure_refuses_an_unknown_suffix_and_closes_the_figure(tmp_path):
    from schedlab.plotting import figure_formats, new_figure, pyplot, save_figure

    assert {"png", "svg", "pdf"} <= set(figure_formats())
    fig, _ = new_figure()
    with pytest.raises(UsageError, match=r"figure .*out\.txt: suffix \.txt is not supported"):
        save_figure(fig, tmp_path / "out.txt")
    assert not pyplot().fignum_exists(fig.number)
    assert list(tmp_path.iterdir()) == []
    fig, _ = new_figure()
    assert save_figure(fig, tmp_path / "a.svg", formats=("png", "svg")) == [
        tmp_path / "a.png",
        tmp_path / "a.svg",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "a.svg"]


# ----------------------------------------------------------------- --ci windows


@pytest.mark.parametrize(
    ("option", "value", "count"),
    [("--block", "0.0001", "77,066,070,001"), ("--rank-window", "0.0001", "77,066,070,001")],
)
def test_windows_too_short_are_refused_naming_the_option_and_count(
    capsys, trace, option, value, count
):
    """A 0.1 ms block on a 90-day trace asked numpy for 148 GiB (MemoryError); one
    second took minutes. More than MAX_WINDOWS windows are refused, before simulating."""
    code, out, err = run_main(
        capsys, "compare", trace, "-p", "fcfs,sjf", "--ci", "--resamples", "100", option, value
    )
    assert code == 2
    line = one_error_line(err)
    what = option.lstrip("-").replace("-", " ")
    assert line.startswith(f"schedlab: error: {what} '{value}' gives {count} windows ")
    assert line.endswith(f"at most 10,000: give a longer {option}")
    assert out == ""


def test_check_windows_bounds_blocks_and_ranking_windows(swf_dir):
    import schedlab
    from schedlab.significance import MAX_WINDOWS, block_significance, check_windows

    workload = schedlab.read(swf_dir / "lublin_256.swf")  # submissions span 89.2 days
    check_windows(workload, "1d", "30d")
    check_windows(workload, "7d")
    with pytest.raises(UsageError, match=r"^block '600' gives 12,845 windows .*89\.2 days"):
        check_windows(workload, "600")  # 10-minute blocks of 86 days: too many
    with pytest.raises(UsageError, match=r"^rank window 60 gives .* --rank-window$"):
        check_windows(workload, "7d", 60)
    with pytest.raises(UsageError, match=r"^block 1e-300 gives about 7\.71e\+306 windows"):
        check_windows(workload, 1e-300)
    with pytest.raises(UsageError, match=r"^block 1e-310 gives too many windows"):
        check_windows(workload, 1e-310)  # the count overflows a float
    assert MAX_WINDOWS == 10_000
    result = schedlab.simulate(workload, policy="fcfs", progress=False)
    with pytest.raises(UsageError, match="give a longer --block"):
        block_significance({"fcfs": result}, window=1.0, resamples=100)


# ----------------------------------------------------------------- full disk


def test_a_full_disk_names_the_plot_and_the_report(capsys, tmp_path, trace, monkeypatch):
    from matplotlib.figure import Figure
    from schedlab.experiment import sweep as sweep_module

    def full_savefig(self: Figure, fname: object, **kwargs: object) -> None:
        Path(os.fspath(fname)).write_bytes(b"\x89PNG half")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Figure, "savefig", full_savefig)
    plot = tmp_path / "cmp.png"
    code, _, err = run_main(capsys, "compare", trace, "-p", "fcfs", "--plot", str(plot))
    assert code == 2
    assert one_error_line(err) == f"schedlab: error: {plot}: No space left on device"
    assert list(tmp_path.iterdir()) == []  # no half figure, no part left behind

    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")

    def mkstemp(prefix: str = "", suffix: str = "", dir: str | None = None) -> tuple[int, str]:
        return os.open("/dev/full", os.O_WRONLY), os.path.join(dir or ".", f"{prefix}x{suffix}")

    monkeypatch.setattr(sweep_module, "tempfile", types.SimpleNamespace(mkstemp=mkstemp))
    page = tmp_path / "cmp.html"
    code, _, err = run_main(capsys, "compare", trace, "-p", "fcfs", "--report", str(page))
    assert code == 2
    assert one_error_line(err) == f"schedlab: error: {page}: No space left on device"
    assert list(tmp_path.iterdir()) == []
