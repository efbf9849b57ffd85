"""Audit fixes of the report charts, the plotting API and the experiment figures
(findings 2, 8, 9, 10, 11, 14, 15, 16 and 17 of the report audit)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib")


# Finding 2: a file name is never parsed as mathtext.


def _estimates_rows(workload: str) -> list[dict[str, Any]]:
    return [
        {"workload": workload, "configuration": c, "estimator": e, "policy": p,
         "bsld_vs_easy": v}
        for c, e, p, v in (
            ("easy+requested", "requested", "easy", 0.0),
            ("easy+$x^2$", "recent", "easy", -0.3),
            ("psp+requested", "requested", "psp", 0.5),
        )
    ]  # fmt: skip


@pytest.fixture
def saved_figures(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The matplotlib figures saved during the test, in order (savefig still saves)."""
    from matplotlib.figure import Figure

    seen: list[Any] = []
    save = Figure.savefig

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(self)
        return save(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", spy)
    return seen


class _Experiment:
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows


@pytest.mark.parametrize("workload", ["a$^$b.swf", "p$x^2$q.swf"])
def test_estimates_figure_draws_dollar_names_as_text(
    workload: str, tmp_path: Path, saved_figures: list[Any]
) -> None:
    from schedlab.policies.estimates_experiment.figures import figure

    seen = saved_figures
    written = figure(_Experiment(_estimates_rows(workload)), tmp_path / "est")
    assert [p.name for p in written] == ["est.png"] and written[0].stat().st_size > 0
    ax = seen[0].axes[0]
    assert ax.title.get_text().replace("\n", "") == workload
    assert ax.title.get_parse_math() is False
    labels = ax.get_yticklabels()
    assert "easy+$x^2$" in [t.get_text() for t in labels]
    assert all(t.get_parse_math() is False for t in labels)


@pytest.mark.parametrize("title", ["a$^$b", "p$x^2$q"])
def test_psp_figure_draws_a_dollar_title_as_text(
    title: str, tmp_path: Path, saved_figures: list[Any]
) -> None:
    from schedlab.policies.psp_experiment import figures

    seen = saved_figures
    pooled: dict[str, Any] = {"psp": {}}
    written = figures.figure1(pooled, tmp_path / "f1", formats=("png",), title=title)
    assert written and written[0].stat().st_size > 0
    legend = seen[0].axes[0].get_legend() or seen[0].legends[0]
    shown, math = legend.get_title()._preprocess_math(legend.get_title().get_text())
    assert (shown, math) == (f"Accuracy class ({title})", False)


# Finding 15: EPS and PS are byte-identical across runs.


@pytest.mark.parametrize("kind", ["eps", "ps"])
def test_postscript_figures_are_byte_identical(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from schedlab.plotting import new_figure, save_figure

    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    out = []
    for i in range(2):
        fig, ax = new_figure()
        ax.plot([0, 1], [0, 1])
        (path,) = save_figure(fig, tmp_path / f"f{i}" / f"fig.{kind}")
        out.append(path.read_bytes())
    assert b"%%CreationDate: Thu Jan 01 00:00:00 1970" in out[0]
    assert out[0] == out[1]
    assert "SOURCE_DATE_EPOCH" not in __import__("os").environ


# Finding 8: time-axis labels show seconds when the step is not whole minutes.


def _labels(ticks_days: list[float]) -> list[str]:
    from schedlab.report_charts import _CLOCK_LABELS

    node = shutil.which("node")
    if node is None:
        pytest.skip("no node binary to run the tick formatter")
    script = (
        "function f(tick, index, ticks) {" + _CLOCK_LABELS + "}\n"
        f"const ticks = {json.dumps(ticks_days)};\n"
        "console.log(JSON.stringify(ticks.map((t, i) => f(t, i, ticks))));"
    )
    done = subprocess.run([node, "-e", script], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_clock_labels_show_seconds_for_sub_minute_steps() -> None:
    step = 150 / 86400  # 2.5 min
    assert _labels([k * step for k in range(5)]) == [
        "0d 00:00:00", "0d 00:02:30", "0d 00:05:00", "0d 00:07:30", "0d 00:10:00",
    ]  # fmt: skip
    step = 20 / 86400
    assert _labels([k * step for k in range(4)]) == [
        "0d 00:00:00", "0d 00:00:20", "0d 00:00:40", "0d 00:01:00",
    ]  # fmt: skip


def test_clock_labels_keep_minutes_for_whole_minute_steps() -> None:
    step = 900 / 86400  # 15 min
    assert _labels([1 + k * step for k in range(3)]) == ["1d 00:00", "1d 00:15", "1d 00:30"]
    assert _labels([0.0, 1.0, 2.0]) == ["0", "1", "2"]


# Findings 9, 10, 11, 14 and 17 on a written page (a shared node, two jobs).

pytest.importorskip("bokeh")

PLATFORM = """[platform]
sharing = "shared"
[node_groups.n]
count = 1
cores = 4
[partitions.p]
nodes = ["n"]
"""
TWO_JOBS = """; MaxProcs: 4
1 0 -1 1000 1 -1 -1 1 1000 -1 1 1 1 -1 1 -1 -1 -1
2 100 -1 100 1 -1 -1 1 100 -1 1 2 1 -1 1 -1 -1 -1
"""


@pytest.fixture(scope="module")
def platform_page(tmp_path_factory: pytest.TempPathFactory) -> str:
    import os
    import sys

    folder = tmp_path_factory.mktemp("plat")
    (folder / "one4.toml").write_text(PLATFORM)
    (folder / "two.swf").write_text(TWO_JOBS)
    schedlab = Path(sys.executable).with_name("schedlab")
    done = subprocess.run(
        [os.fspath(schedlab), "report", "two.swf", "--simulate", "fcfs+easy",
         "--platform", "one4.toml", "-o", "two.html"],
        cwd=folder, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return (folder / "two.html").read_text(encoding="utf-8")


def _axis_labels(page: str) -> list[str]:
    from schedlab.report_charts import embedded_objects

    return [a["axis_label"] for a in embedded_objects(page, "LinearAxis") if a.get("axis_label")]


def test_utilization_charts_say_what_they_measure(platform_page: str) -> None:
    labels = _axis_labels(platform_page)
    assert "Processors used (% of cores)" in labels
    assert "Held by jobs (% of each resource)" in labels
    assert "Utilization (%)" not in labels


def test_resources_chart_is_binned_like_the_series(platform_page: str) -> None:
    from schedlab.report_charts import embedded_sources

    sources = embedded_sources(platform_page)
    levels = sorted(k for k in sources if k.startswith("resources-level-"))
    series = sorted(k for k in sources if k.startswith("level-0-"))
    assert len(levels) == len(series) >= 1
    # one core of 4 from 0 to 1000 s, two from 100 to 200 s: 60 s bins
    first = sources[levels[-1]]
    assert len(first["x"]) == len(sources[series[-1]]["x"])
    mean, top = first["mean0"], first["max0"]
    assert float(top.max()) == pytest.approx(50.0)
    assert float(mean[0]) == pytest.approx(25.0)
    assert float(mean[1]) == pytest.approx(25 + 25 * 20 / 60, rel=1e-5)
    assert float(mean[2]) == pytest.approx(50.0)
    assert float(mean[16]) == pytest.approx(25.0)  # the last, partial bin (960-1000 s)


def test_binned_steps_mean_and_max() -> None:
    import numpy as np
    from schedlab.report_charts import _binned_steps

    mean, top = _binned_steps(np.array([10.0, 30.0, 50.0]), np.array([2.0, 6.0, 0.0]), 20.0, 3)
    assert mean.tolist() == pytest.approx([1.0, 4.0, 3.0])
    assert top.tolist() == [2.0, 6.0, 6.0]


def test_shared_node_chart_says_jobs_share_rows(platform_page: str) -> None:
    from schedlab.report_charts import SHARED_NODE_NOTE, embedded_objects

    texts = [d.get("text") for d in embedded_objects(platform_page, "Div")]
    assert SHARED_NODE_NOTE in texts


def test_colour_key_for_every_choice(platform_page: str) -> None:
    from schedlab.report_charts import embedded_objects

    (key,) = [d for d in embedded_objects(platform_page, "Div") if d.get("name") == "colour-key"]
    assert "user" in key["text"]
    switches = [
        c for c in embedded_objects(platform_page, "CustomJS") if "keys[cb_obj.value]" in c["code"]
    ]
    assert len(switches) == 1
    text = json.dumps(switches[0]["args"])
    for piece in ("queue", "1-2", "3-7", "8-22", "1,449+", "a1", "a5", "unknown"):
        assert piece in text


def test_size_classes_match_the_page_formula() -> None:
    from schedlab.report_charts import size_classes

    assert size_classes() == [
        "1-2", "3-7", "8-22", "23-63", "64-181", "182-511", "512-1,448", "1,449+",
    ]  # fmt: skip
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node binary")
    script = (
        "const c = (p) => Math.min(7, Math.floor(Math.log2(Math.max(1, p)) / 1.5));"
        "console.log(JSON.stringify([1,2,3,7,8,22,23,63,64,181,182,511,512,1448,1449].map(c)));"
    )
    done = subprocess.run([node, "-e", script], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7]


def test_bar_chart_key_sits_beside_the_bars() -> None:
    from schedlab.report_charts import bar_chart

    fig = bar_chart(["1", "2"], [1.0, 2.0], ["#fde725", "#440154"], "User",
                    legend=[("a1", "#fde725"), ("a5", "#440154")])  # fmt: skip
    assert not fig.above or all(type(m).__name__ != "Legend" for m in fig.above)
    assert any(type(m).__name__ == "Legend" for m in fig.right)


def test_many_bars_carry_no_overlapping_annotations() -> None:
    from schedlab.report_charts import MAX_ANNOTATED, bar_chart

    n = MAX_ANNOTATED + 1
    fig = bar_chart([str(i) for i in range(n)], [1.0] * n, ["#000000"] * n, "Queue",
                    annotations=["1 job"] * n)  # fmt: skip
    glyphs = [type(r.glyph).__name__ for r in fig.renderers]
    assert "Text" not in glyphs
    few = bar_chart(["1", "2"], [1.0, 2.0], ["#000000"] * 2, "Queue", annotations=["a", "b"])
    assert "Text" in [type(r.glyph).__name__ for r in few.renderers]


def test_long_labels_are_shortened_and_wrapped() -> None:
    from schedlab.report_charts import LABEL_CHARS, legend_html, short_label

    name = "x" * 100 + "a.swf"
    short = short_label(name)
    assert len(short) == LABEL_CHARS and short.endswith("a.swf") and "…" in short
    assert short_label("b.swf") == "b.swf"
    assert "overflow-wrap:anywhere" in legend_html([name])


def test_grouped_bars_draws_dollar_names_as_text(tmp_path: Path) -> None:
    """Group and series names of the public grouped_bars are data: a `$` pair is
    drawn as dollars (it was parsed as mathtext: `a$^$b` crashed the figure)."""
    from schedlab.experiment.figures import grouped_bars

    written = grouped_bars(
        {"a$^$b.swf": {"p$x^2$q": 1.0, "fcfs": 2.0}, "plain": {"p$x^2$q": 3.0}},
        tmp_path / "bars",
        series=["p$x^2$q", "fcfs"],
        formats=("svg",),
    )
    svg = written[0].read_text()
    assert written[0].stat().st_size > 0
    # plain text: the characters are in the SVG's comments as typed
    assert "a$^$b.swf" in svg and "p$x^2$q" in svg
