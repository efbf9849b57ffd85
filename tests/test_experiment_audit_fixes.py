"""Audit fixes: PSP ratios with classes waiting 0, fairness on the schedule's jobs,
an empty ``--estimators`` list."""

from __future__ import annotations

import pytest
from schedlab import UsageError
from schedlab.measure import compute_metrics
from schedlab.metrics import fairness
from schedlab.model import Workload
from schedlab.policies.psp_experiment.experiment import (
    ClassWait,
    ConfigurationResult,
    default_configuration,
    ratio_rows,
    ratios,
)

NAN = float("nan")


def _classes(*minutes: float | None, overall: float = 10.0) -> dict[str, ClassWait]:
    """a1..a5 with the given pooled minutes (``None``: no user in the class)."""
    out = {
        name: ClassWait(value, 0, 0, 0) if value is None else ClassWait(value, 3, 3, 9)
        for name, value in zip(("a1", "a2", "a3", "a4", "a5"), minutes, strict=True)
    }
    out["all"] = ClassWait(overall, 15, 15, 45)
    return out


# The audit's low-load run: CFG's a1..a4 wait 0 (users in every class), CF's top class
# a5 waits 0 while a1 waits 20 min.
POOLED = {
    "psp": {
        "BE": _classes(10.75, 0.0, None, None, None, overall=10.15),
        "GE": _classes(None, None, None, 0.0, 11.42, overall=10.15),
        "CF": _classes(20.3, 0.0, 0.0, None, 0.0, overall=10.15),
        "CFG": _classes(0.0, 0.0, 0.0, 0.0, 45.67, overall=10.15),
    }
}


def _ratio(scenario: str):
    (found,) = [r for r in ratios(POOLED, "psp") if r.scenario == scenario]
    return found


def test_classes_waiting_zero_are_classes_with_users():
    cfg = _ratio("CFG")
    assert (cfg.lowest, cfg.highest) == ("a1", "a5")
    assert cfg.ratio_lowest == 0.0  # a1 waits 0, a5 45.67: a reversed gradient
    assert cfg.ratio_be == pytest.approx(10.15 / 45.67)
    be = _ratio("BE")
    assert (be.lowest, be.highest) == ("a1", "a2")


def test_ratio_over_a_class_waiting_zero_is_undefined_not_another_pair():
    cf = _ratio("CF")
    assert (cf.lowest, cf.highest) == ("a1", "a5")
    assert cf.ratio_lowest is None and cf.ratio_be is None and cf.ratio_ge is None
    rows = {r["scenario"]: r for r in ratio_rows(POOLED)}
    assert (rows["CF"]["lowest_class"], rows["CF"]["highest_class"]) == ("a1", "a5")
    assert "undefined" in rows["CF"]["note"] and "a5" in rows["CF"]["note"]
    assert rows["CFG"]["note"] == ""
    assert rows["GE"]["ratio_lowest"] == 0.0 and rows["GE"]["note"] == ""


def test_console_says_the_ratio_is_undefined():
    from rich.console import Console
    from schedlab.policies.psp_experiment.tables import _configuration_tables

    configuration = default_configuration()
    pooled = {"psp": POOLED["psp"], "fcfs": POOLED["psp"]}
    result = ConfigurationResult(configuration, pooled, [], ratio_rows(pooled, configuration))
    console = Console(width=200, record=True)
    for table in _configuration_tables(result):
        console.print(table)
    text = console.export_text()
    line = next(t for t in text.splitlines() if "CF " in t and "a1/a5" in t)
    assert "undefined" in line
    assert "a5/a5" not in text and "a1/a1" not in text


def test_fairness_uses_the_jobs_of_the_system_metrics():
    # The audit's fair.swf: job 1's run time is unknown, so it is not in the schedule
    # the system metrics use; over jobs 2 and 3 both users wait 0.
    workload = Workload.from_arrays(
        {
            "job_number": [1, 2, 3],
            "submit_time": [0, 0, 0],
            "wait_time": [100, 0, 0],
            "run_time": [NAN, 10, 10],
            "allocated_processors": [1, 1, 1],
            "user_id": [1, 2, 1],
        }
    )
    assert fairness.fairness(workload.to_arrays()) == 1.0
    report = compute_metrics(workload, names=["fairness", "utilization"], procs=4)
    assert report.value("fairness") == 1.0
    assert any("system metrics use the 2 jobs" in note for note in report.notes)


def test_fairness_without_a_scheduled_job_is_unavailable():
    from schedlab.measure import MetricUnavailable

    columns = Workload.from_arrays(
        {"submit_time": [0.0], "wait_time": [5.0], "run_time": [NAN], "user_id": [1]}
    ).to_arrays()
    with pytest.raises(MetricUnavailable, match="run time"):
        fairness.fairness(columns)


@pytest.mark.parametrize("value", ["", ",", " , "])
def test_empty_estimators_list_is_an_error(value):
    from schedlab.policies.estimates_experiment.experiment import configurations

    with pytest.raises(UsageError, match=r"^--estimators: give at least one"):
        configurations(estimators=value)


def test_empty_estimators_on_the_command_line_is_one_line(tmp_path, capsys):
    from schedlab.cli import main

    out = tmp_path / "est"
    with pytest.raises(SystemExit) as info:
        main(["experiment", "estimates", "-w", "lublin:jobs=10", "--estimators", ",",
              "--out", str(out), "--quiet", "--no-figure"])  # fmt: skip
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--estimators: give at least one" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_requested_alone_still_runs_only_the_baselines():
    from schedlab.policies.estimates_experiment.experiment import configurations

    assert [c.name for c in configurations(estimators="requested")] == ["EASY", "PSP"]


def test_comparison_table_says_the_ratio_is_undefined():
    from rich.console import Console
    from schedlab.policies.psp_experiment.experiment import slurm_configuration
    from schedlab.policies.psp_experiment.tables import comparison_table

    configuration = slurm_configuration()
    # DI: the paper compares a2/a5, and a5 (the highest class) waits 0.
    pooled = {"psp": {"DI": _classes(20.0, 5.0, 0.0, None, 0.0)}}
    result = ConfigurationResult(configuration, pooled, [], ratio_rows(pooled, configuration))
    console = Console(width=200, record=True)
    console.print(comparison_table([result]))
    line = next(t for t in console.export_text().splitlines() if t.startswith("│ DI"))
    assert line.count("undefined") == 2
