"""A plugin statistic without a unit (``StatisticSpec(unitless=True)``, a coefficient
of variation) is shown without the metric's unit and never converted to minutes or
hours: before, `metrics --by user --stat cv --time-unit min` labelled it "(min)" and
divided it by 60."""

from __future__ import annotations

import json
import types
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab import StatisticSpec, hookimpl
from schedlab.testing import plugin_registry, run_cli, using_registry

HPC2N = "HPC2N-2002_excerpt-3170jobs_alea.swf"


def cv(values: np.ndarray) -> float:
    mean = float(np.mean(values))
    return float(np.std(values) / mean) if mean > 0 else float("nan")


@hookimpl
def schedlab_statistics() -> list[StatisticSpec]:
    return [
        StatisticSpec(name="cv", description="coefficient of variation", compute=cv,
                      unitless=True),
        StatisticSpec(name="spread", description="std (a unit)", compute=np.std),
    ]  # fmt: skip


PLUGIN = types.ModuleType("unitless_stats")
PLUGIN.schedlab_statistics = schedlab_statistics  # type: ignore[attr-defined]


@pytest.fixture
def registry():
    registry = plugin_registry(("unitless_stats", PLUGIN))
    with using_registry(registry):
        yield registry


@pytest.fixture
def workload(swf_dir: Path, registry):
    return schedlab.read(swf_dir / HPC2N, registry=registry)


def test_the_report_knows_which_statistics_have_no_unit(workload, registry):
    report = schedlab.compute_metrics(
        workload, names="wait", by="user", stats="mean,cv,spread", registry=registry
    )
    assert report.unitless == ("cv",)
    tidy = report.to_pandas(tidy=True)
    units = dict(zip(tidy["statistic"], tidy["unit"], strict=False))
    assert units["cv"] == "" and units["spread"] == "s" and units["mean"] == "s"
    assert json.loads(report.to_json())["unitless"] == ["cv"]
    plain = schedlab.compute_metrics(workload, names="wait", registry=registry)
    assert plain.unitless == () and "unitless" not in json.loads(plain.to_json())


def test_tables_neither_label_nor_convert_a_unitless_statistic(capsys, swf_dir, registry):
    trace = str(swf_dir / HPC2N)
    report = schedlab.compute_metrics(
        schedlab.read(trace, registry=registry), names="wait", by="user",
        stats="cv,spread", registry=registry,
    )  # fmt: skip
    row = report.row(report.rows[0]["group"])["wait"]
    code, out, err = run_cli(
        capsys, "metrics", trace, "-m", "wait", "--by", "user", "--stat", "cv",
        "--stat", "spread", "--time-unit", "min",
    )  # fmt: skip
    assert code == 0, err
    assert "wait cv (" not in out and "wait spread (min)" in out
    first = next(line for line in out.splitlines() if line.strip().startswith("│"))
    cells = [c.strip() for c in first.strip("│ ").split("│")]
    assert schedlab.measure.format_number(row["cv"]) in cells  # not divided by 60
    assert schedlab.measure.format_number(row["spread"] / 60) in cells


def test_unitless_is_a_bool():
    with pytest.raises(TypeError):
        StatisticSpec(name="x", compute=cv, unitless="yes")  # type: ignore[arg-type]
    assert StatisticSpec(name="x", compute=cv).unitless is False
