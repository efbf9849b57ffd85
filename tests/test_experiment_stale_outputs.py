"""An experiment's folder holds only the last completed run's tables and figures:
``schedlab.experiment.remove_outputs`` and the two packaged experiments using it."""

from __future__ import annotations

import pytest
import schedlab
from schedlab.experiment import remove_outputs
from schedlab.policies.estimates_experiment.experiment import OUTPUTS as ESTIMATES_OUTPUTS
from schedlab.policies.estimates_experiment.experiment import write_files
from schedlab.policies.psp_experiment import experiment as psp_experiment


def test_remove_outputs_takes_names_and_patterns(tmp_path):
    for name in ("table3.csv", "figure1-a.png", "figure1-b.png", "figure1.svg", "mine.txt"):
        (tmp_path / name).write_text("old")
    (tmp_path / "ratios.csv").mkdir()  # not a file the runner wrote: left alone
    removed = remove_outputs(tmp_path, ["table3.csv", "figure1-*.png", "absent.json", "ratios.csv"])
    assert sorted(p.name for p in removed) == ["figure1-a.png", "figure1-b.png", "table3.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figure1.svg", "mine.txt", "ratios.csv"]
    assert remove_outputs(tmp_path / "missing", ["table3.csv"]) == []


def test_an_interrupted_psp_run_leaves_no_table_of_an_earlier_run(tmp_path, monkeypatch):
    for name in ("table3.csv", "table3.json", "ratios.csv", "figure1.png", "figure1-slurm.svg"):
        (tmp_path / name).write_text("an earlier run")
    (tmp_path / "notes.md").write_text("the user's own")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(psp_experiment, "run_sweep", interrupted)
    with pytest.raises(KeyboardInterrupt):
        psp_experiment.run_psp_experiment(
            tmp_path, workloads=1, generator_options={"jobs": 50}, progress=False
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]


def test_a_psp_run_without_figures_removes_an_earlier_runs_figure(tmp_path):
    (tmp_path / "figure1.png").write_bytes(b"an earlier run")
    experiment = psp_experiment.run_psp_experiment(
        tmp_path, workloads=1, generator_options={"jobs": 50}, figures=False, progress=False
    )
    names = {p.name for p in tmp_path.iterdir()}
    assert "figure1.png" not in names
    assert {"table3.csv", "ratios.csv", "results.csv"} <= names
    assert set(experiment.files) <= names


def test_estimates_files_without_a_figure_remove_an_earlier_runs_figure(tmp_path):
    assert "estimates.png" in ESTIMATES_OUTPUTS
    (tmp_path / "estimates.png").write_bytes(b"an earlier run")
    experiment = schedlab.policies.estimates_experiment.experiment.run_estimates_experiment(
        ["lublin:jobs=200,seed=1,estimates=tsafrir"], None, jobs=200, figure=False
    )
    write_files(experiment, tmp_path, figure=False)
    names = {p.name for p in tmp_path.iterdir()}
    assert "estimates.png" not in names
    assert {"estimates.csv", "estimates.json", "estimates.txt", "classes.csv"} == names
