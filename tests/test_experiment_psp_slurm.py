"""The Slurm-faithful configuration of the PSP experiment (issue 13): multifactor with
PSP + age, the ``slurm`` backfill strategy, its periodic passes; beside the default."""

from __future__ import annotations

import csv
import json

import pytest
from schedlab.errors import UsageError
from schedlab.experiment import run_sweep
from schedlab.policies.psp_experiment.experiment import (
    SLURM_PRIORITY,
    configurations_for,
    default_configuration,
    pool_classes,
    psp_cells,
    run_psp_experiment,
    slurm_configuration,
)

#: A small quick run (1 workload of 300 jobs per scenario): the tables, not the result.
SMALL = {"workloads": 1, "seed": 1, "generator_options": {"jobs": 300}, "figures": False}


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    out = tmp_path_factory.mktemp("psp-both")
    return run_psp_experiment(out, config="both", workers=2, progress=False, **SMALL)


def test_slurm_cells_use_multifactor_with_psp_and_age_and_the_slurm_strategy():
    cells = psp_cells(workloads=1, configuration=slurm_configuration({"weight_age": 500}))
    assert {(c.policy, c.backfill) for c in cells} == {("multifactor", "slurm"), ("fcfs", "slurm")}
    options = next(dict(c.policy_options) for c in cells if c.policy == "multifactor")
    assert options == {**SLURM_PRIORITY, "weight_age": 500}
    tuned = psp_cells(workloads=1, configuration=slurm_configuration(None, {"bf_interval": 60}))
    assert {c.backfill for c in tuned} == {"slurm:bf_interval=60"}


def test_both_configurations_write_their_rows_into_the_tables(both):
    labels = {r["policy"] for r in both.table3}
    assert labels == {"psp+easy", "fcfs+easy", "multifactor+slurm", "fcfs+slurm"}
    with open(both.files["table3.csv"], newline="") as handle:
        written = list(csv.DictReader(handle))
    assert {r["policy"] for r in written} == labels
    assert len(written) == len(both.table3)
    summary = json.loads(both.files["table3.json"].read_text())
    assert {r["policy"] for r in summary["ratios"]} == labels
    slurm = summary["settings"]["configurations"]["slurm"]["multifactor+slurm"]
    assert slurm["policy"] == "multifactor" and slurm["backfill"] == "slurm"
    assert slurm["policy_options"]["weight_psp"] == 1000.0
    # The paper's values stand beside the PSP rows of both configurations.
    for label in ("psp+easy", "multifactor+slurm"):
        row = next(
            r
            for r in summary["table3"]
            if r["policy"] == label and r["scenario"] == "CFG" and r["class"] == "a1"
        )
        assert row["paper_wait_min"] == 1488.60
    assert len(both.outcome.records) == 6 * 2 * 2
    comparison = json.loads(both.files["comparison.json"].read_text())["comparison"]
    assert {(r["scenario"], r["configuration"]) for r in comparison} == {
        (s, c) for s in ("CF", "CFG", "DI", "HDI") for c in ("default", "slurm")
    }
    with open(both.files["comparison.csv"], newline="") as handle:
        assert len(list(csv.DictReader(handle))) == len(comparison)
    di = next(r for r in comparison if r["scenario"] == "DI" and r["configuration"] == "slurm")
    assert di["paper_ratio"] == 2.43 and di["paper_classes"] == "a2/a5"
    psp = both.results["slurm"].pooled["psp"]["DI"]
    if psp["a2"].values and psp["a5"].values:
        expected = psp["a2"].minutes / psp["a5"].minutes
        assert di["ratio_paper_classes"] == pytest.approx(expected, abs=0.005)
        assert di["off_paper_classes"] == pytest.approx(expected / 2.43 - 1, abs=0.005)


def test_the_default_rows_are_those_of_a_default_run(both, tmp_path):
    # --config both reuses the default configuration's cells and reports them as is.
    default = run_psp_experiment(both.out, config="default", progress=False, **SMALL)
    assert default.outcome.computed == []
    assert [r for r in both.table3 if r["policy"].endswith("+easy")] == default.table3
    assert [r for r in both.ratios if r["policy"].endswith("+easy")] == default.ratios
    assert "configurations" not in json.loads(default.files["table3.json"].read_text())["settings"]


@pytest.fixture(scope="module")
def order(tmp_path_factory):
    """Both configurations on CF, CFG and HDI, seeds 1-2, the paper's 1000 jobs:
    small enough for a test, large enough for PSP's classes to settle."""
    out = tmp_path_factory.mktemp("psp-order")
    configurations = (default_configuration(), slurm_configuration())
    pooled = {}
    for configuration in configurations:
        cells = psp_cells(2, 1, scenarios=("CF", "CFG", "HDI"), configuration=configuration)
        outcome = run_sweep(cells, out, workers=2, progress=False)
        roles = {}
        for cell in cells:
            roles[cell.key] = "psp" if cell.policy in ("psp", "multifactor") else "fcfs"
        pooled[configuration.name] = pool_classes(outcome.rows, roles)
    return pooled


@pytest.mark.parametrize("scenario", ["CF", "CFG", "HDI"])
def test_slurm_configuration_keeps_the_papers_class_order(order, scenario):
    # The paper's order: a1 waits longest, then a2, then a3, then the top classes
    # (a4 and a5 hold one or two users per workload in CF: not ordered between them).
    psp = order["slurm"]["psp"][scenario]
    waits = [psp[c].minutes for c in ("a1", "a2", "a3")]
    top = max(psp[c].minutes for c in ("a4", "a5") if psp[c].values)
    assert waits[0] > waits[1] > waits[2] > top, (waits, top)
    # The FCFS baseline with the same strategy shows a much smaller gap.
    lowest_over_top = waits[0] / psp["a5"].minutes
    fcfs = order["slurm"]["fcfs"][scenario]
    assert fcfs["a1"].minutes / fcfs["a5"].minutes < lowest_over_top / 1.5


@pytest.mark.parametrize("scenario", ["CF", "CFG", "HDI"])
def test_slurm_softens_the_strict_class_order(order, scenario):
    # Age next to PSP (and Slurm's backfill) lowers a1's wait over a5's below the
    # strict order's, towards the paper's 2.25-2.88.
    def ratio(name: str) -> float:
        classes = order[name]["psp"][scenario]
        return classes["a1"].minutes / classes["a5"].minutes

    assert ratio("slurm") < ratio("default") * 0.8


def test_cli_slurm_prints_the_comparison_and_writes_both_tables(tmp_path):
    from click.testing import CliRunner
    from schedlab.cli import cli

    args = ["experiment", "psp", "--config", "slurm", "--workloads", "1", "-G", "jobs=200"]
    args += ["--out", str(tmp_path), "--workers", "1", "--no-figures"]
    result = CliRunner().invoke(cli, args, env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    out = result.output
    assert "multifactor (PSP + age)" in out and "Baseline" in out
    assert "every configuration vs the" in out and "multifactor+slurm" in out
    assert f"wrote {tmp_path / 'table3.csv'}" in out
    assert f"wrote {tmp_path / 'ratios.csv'}" in out
    with open(tmp_path / "ratios.csv", newline="") as handle:
        assert {r["policy"] for r in csv.DictReader(handle)} == {"multifactor+slurm", "fcfs+slurm"}
    assert "12 simulations (12 run now, 0 reused" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--config", "slurm", "-B", "bf_interval=0"], "backfill slurm: option bf_interval=0"),
        (["--config", "slurm", "-B", "bf_intervall=30"], "unknown option 'bf_intervall'"),
        (["--config", "slurm", "-P", "weight_psp=-5"], "option weight_psp=-5"),
        (["--config", "slurm", "-P", "weight_pps=5"], "unknown option 'weight_pps'"),
        (["--config", "slurm", "-B", "bf_interval"], "expected KEY=VALUE"),
        (["-P", "weight_age=5"], "apply to the slurm configuration only"),
        (["--config", "slurmy"], "slurmy"),
    ],
)
def test_cli_bad_options_are_one_line_errors(tmp_path, capsys, extra, message):
    from schedlab.cli import main

    with pytest.raises(SystemExit) as info:
        main(["experiment", "psp", "--out", str(tmp_path), "--no-figures", *extra])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert not (tmp_path / "cells").exists()  # rejected before any simulation


def test_options_are_checked_before_the_sweep():
    with pytest.raises(UsageError, match=r"^backfill slurm: option sched_interval=0"):
        configurations_for("slurm", backfill_options={"sched_interval": 0})
    with pytest.raises(UsageError, match="--config nope"):
        configurations_for("nope")


def test_comparison_rows_measure_against_the_papers_ratio_and_classes():
    from schedlab.policies.psp_experiment.experiment import (
        ClassWait,
        ConfigurationResult,
        comparison_rows,
        ratio_rows,
    )

    def waits(*minutes):
        out = {}
        for name, value in zip(("a1", "a2", "a3", "a4", "a5"), minutes, strict=True):
            out[name] = ClassWait(value, 1 if value else 0, 1, 1)
        return out

    # CF: the paper fills a1..a4; an a5 above a4 breaks a1..a5 but not the paper's
    # order. DI: the paper fills a2..a5; a1 is ours only.
    pooled = {
        "psp": {
            "CF": {**waits(1000.0, 600.0, 500.0, 400.0, 450.0), "all": ClassWait(700.0, 5, 5, 5)},
            "DI": {**waits(3000.0, 900.0, 950.0, 500.0, 300.0), "all": ClassWait(900.0, 5, 5, 5)},
        }
    }
    configuration = slurm_configuration()
    result = ConfigurationResult(configuration, pooled, [], ratio_rows(pooled, configuration))
    rows = {r["scenario"]: r for r in comparison_rows([result])}
    cf, di = rows["CF"], rows["DI"]
    assert cf["ratio_lowest"] == round(1000 / 450, 2)  # lowest/highest non-empty: a1/a5
    assert cf["ratio_paper_classes"] == 2.5  # a1/a4, the paper's 2.43
    assert cf["off_paper_classes"] == round(2.5 / 2.43 - 1, 2)
    assert not cf["falling_a1_to_a5"] and cf["falling_paper_classes"]
    assert di["ratio_lowest"] == 10.0 and di["ratio_paper_classes"] == 3.0  # a2/a5
    assert not di["falling_paper_classes"]  # a2 (900) < a3 (950)
    # Scenarios without results stay unknown, never invented.
    assert rows["CFG"]["ratio_lowest"] is None and rows["CFG"]["off_lowest"] is None
    assert rows["HDI"]["ratio_paper_classes"] is None


def test_slurm_figure_is_named_after_its_configuration(tmp_path):
    pytest.importorskip("matplotlib")
    experiment = run_psp_experiment(
        tmp_path,
        config="slurm",
        workloads=1,
        generator_options={"jobs": 200},
        workers=1,
        progress=False,
    )
    assert experiment.files["figure1-slurm.png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert experiment.files["figure1-slurm.svg"].exists()
    assert "figure1.png" not in experiment.files and not (tmp_path / "figure1.png").exists()


def test_option_text_names_the_same_cells_as_the_default_value():
    # "-P weight_age=1000" from the command line is the default 1000.0: the cells
    # (and their stored results) are the same, not recomputed under another key.
    given = configurations_for("slurm", priority_options={"weight_age": "1000"})[0]
    default = configurations_for("slurm")[0]
    assert [c.key for c in psp_cells(1, configuration=given)] == [
        c.key for c in psp_cells(1, configuration=default)
    ]
    other = configurations_for("slurm", priority_options={"weight_age": "500"})[0]
    assert dict(other.run("psp").policy_options)["weight_age"] == 500.0
