"""schedlab embedded in another program (a notebook, a web service, a workflow
engine) through its public API: bad input is one of schedlab's errors, never an
``AttributeError``/``TypeError`` from deep inside, and the library leaves the
host process's settings (matplotlib's backend and style) as they were."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import pytest
import schedlab

SMALL = "HPC2N-2002_excerpt-3170jobs_alea.swf"


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda path: path.read_bytes(), "io.BytesIO"),
        (lambda path: io.StringIO(path.read_text()), "binary mode"),
        (lambda path: open(path, encoding="utf-8"), "binary mode"),
        (lambda path: None, "got NoneType"),
        (lambda path: 5, "got int"),
    ],
    ids=["bytes", "StringIO", "text-file", "None", "int"],
)
def test_read_rejects_what_is_not_a_binary_source(swf_dir, make, message):
    source = make(swf_dir / SMALL)
    try:
        with pytest.raises(schedlab.UsageError, match=message):
            schedlab.read(source)
    finally:
        if hasattr(source, "close"):
            source.close()
    # The process stays usable, and the documented sources still read.
    with open(swf_dir / SMALL, "rb") as fh:
        assert len(schedlab.read(fh)) == len(schedlab.read(swf_dir / SMALL)) == 3170


def test_write_rejects_what_is_not_a_workload(swf_dir, tmp_path):
    workload = schedlab.read(swf_dir / SMALL)
    result = schedlab.simulate(workload, progress=False)
    target = tmp_path / "schedule.swf"
    with pytest.raises(schedlab.UsageError, match=r"got Result .*result\.workload"):
        schedlab.write(result, target)
    with pytest.raises(schedlab.UsageError, match="got str"):
        schedlab.write("trace.swf", target)
    assert list(tmp_path.iterdir()) == []  # nothing staged, nothing left
    assert schedlab.write(result.workload, target) == target


def test_figures_leave_the_callers_matplotlib_backend_and_style(tmp_path):
    """``schedlab.experiment.grouped_bars`` and ``require_plotting`` in a process
    whose pyplot already runs another backend with its own style (a notebook):
    both stay as they were. A child process: backends are process-wide."""
    pytest.importorskip("matplotlib")
    script = textwrap.dedent(
        f"""
        import matplotlib
        matplotlib.use("svg")
        import matplotlib.pyplot as plt
        plt.rcParams["font.size"] = 13.0
        from schedlab import experiment
        experiment.require_plotting()
        assert plt.rcParams["font.size"] == 13.0, plt.rcParams["font.size"]
        written = experiment.grouped_bars(
            {{"g": {{"a": 1.0}}}}, {str(tmp_path / "bars")!r}, series=["a"], formats=("svg",)
        )
        assert [p.name for p in written] == ["bars.svg"], written
        assert plt.rcParams["font.size"] == 13.0, plt.rcParams["font.size"]
        assert matplotlib.get_backend() == "svg", matplotlib.get_backend()
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_comparison_significance_and_report_figures_leave_the_callers_style(tmp_path):
    """The documented notebook uses of the comparison (``compare_policies(...).plot``,
    ``comparison_figure``), its significance (``.plot``) and ``write_report`` draw
    in schedlab's style without changing the caller's ``rcParams``."""
    pytest.importorskip("matplotlib")
    script = textwrap.dedent(
        f"""
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        plt.rcParams["font.size"] = 13.0
        plt.rcParams["axes.grid"] = False
        import schedlab
        from schedlab.comparison import compare_policies, comparison_figure
        from schedlab.report import write_report

        def kept(step):
            assert plt.rcParams["font.size"] == 13.0, (step, plt.rcParams["font.size"])
            assert plt.rcParams["axes.grid"] is False, step

        workload = schedlab.read("lublin:jobs=400,procs=64,seed=2")
        comparison = compare_policies(workload, "fcfs+easy,sjf+easy", progress=False)
        comparison.plot({str(tmp_path / "cmp.png")!r})
        kept("Comparison.plot")
        figure = comparison_figure(comparison)
        kept("comparison_figure")
        assert figure.axes[0].title.get_fontsize() == 8.0  # schedlab's style inside
        sig = comparison.significance(window="1d", resamples=100, seed=0)
        sig.plot({str(tmp_path / "sig.png")!r})
        kept("Significance.plot")
        result = schedlab.simulate(workload, progress=False)
        write_report(result, {str(tmp_path / "one.html")!r})
        kept("write_report")
        write_report([("a", result), ("b", result)], {str(tmp_path / "two.html")!r})
        kept("write_report of a comparison")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "cmp.png").stat().st_size > 0 and (tmp_path / "two.html").exists()
