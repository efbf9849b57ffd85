"""``schedlab experiment estimates``: PSP + EASY vs FCFS + EASY with each predictor.

Runs the command on the first 2,000 jobs of KTH-SP2 (a real log, ../shared/data) and
a small Lublin workload with Tsafrir estimates, then checks its numbers against
schedlab.simulate called directly with each configuration written out by hand,
its files byte for byte against a second run, its figure, and its errors.
"""

from __future__ import annotations

import ast
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import schedlab
import schedlab.experiment as experiment_api
from click.testing import CliRunner
from schedlab.cli import cli, main
from schedlab.policies.estimates_experiment.experiment import (
    configurations,
    resolve_workload,
    run_estimates_experiment,
    split_estimators,
)

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "policies" / "estimates_experiment"
KTH = "KTH-SP2-1996-2.1-cln.swf.gz"
JOBS = 2000
LUBLIN = "lublin:jobs=1500,estimates=tsafrir"
FILES = ("estimates.csv", "estimates.json", "classes.csv", "estimates.txt", "estimates.png")

#: Every default configuration written out by hand: simulate() keyword arguments.
BY_HAND = {
    "EASY": {"policy": "fcfs", "estimator": "requested"},
    "PSP": {"policy": "psp", "estimator": "requested"},
    "user-average": {
        "policy": "fcfs",
        "estimator": "user-average",
        "estimator_options": {"correction": "tsafrir"},
    },
    "EASY++": {
        "policy": "fcfs",
        "estimator": "easy++",
        "estimator_options": {"correction": "tsafrir"},
        "backfill_options": {"order": "sjbf"},
    },
    "learned": {
        "policy": "fcfs",
        "estimator": "learned",
        "estimator_options": {"correction": "tsafrir"},
    },
    "perfect": {"policy": "fcfs", "estimator": "actual"},
}


def _args(swf_dir: Path, out: Path) -> list[str]:
    return [
        "experiment",
        "estimates",
        "-w",
        str(swf_dir / KTH),
        "-w",
        LUBLIN,
        "--jobs",
        str(JOBS),
        "--seed",
        "2",
        "--output",
        str(out),
        "--quiet",
    ]


@pytest.fixture(scope="module")
def run(swf_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("estimates")
    result = CliRunner().invoke(cli, _args(swf_dir, out))
    assert result.exit_code == 0, result.output
    return out, result.output


@pytest.fixture(scope="module")
def rows(run):
    out, _ = run
    return json.loads((out / "estimates.json").read_text())


@pytest.fixture(scope="module")
def kth_head(swf_dir):
    """The first JOBS jobs of KTH, cut through Job objects (not the command's path)."""
    full = schedlab.read(swf_dir / KTH)
    return schedlab.Workload.from_jobs(list(full)[:JOBS], header=full.header)


def test_the_command_prints_the_table_and_writes_every_file(run):
    out, output = run
    for name in FILES:
        assert (out / name).stat().st_size > 0, name
    assert output == (out / "estimates.txt").read_text()
    assert output.startswith("| workload | configuration | mean wait (s) |")
    assert f"| KTH-SP2-1996-2.1-cln ({JOBS:,} jobs) | EASY++ |" in output
    assert "| lublin:jobs=1500,estimates=tsafrir,seed=2 (1,500 jobs) | PSP |" in output


def test_the_grid_is_every_workload_times_every_configuration(rows):
    results = rows["results"]
    assert [(r["workload"], r["configuration"]) for r in results] == [
        (w, c)
        for w in ("KTH-SP2-1996-2.1-cln", "lublin:jobs=1500,estimates=tsafrir,seed=2")
        for c in BY_HAND
    ]
    jobs = {r["workload"][:6]: r["jobs"] for r in results}
    assert jobs["lublin"] == 1500
    assert 0.95 * JOBS <= jobs["KTH-SP"] <= JOBS  # a few KTH jobs are not simulable


def test_values_equal_a_direct_simulation_of_each_configuration(rows, kth_head):
    workloads = {
        "KTH-SP2-1996-2.1-cln": kth_head,
        "lublin:jobs=1500,estimates=tsafrir,seed=2": schedlab.read(f"{LUBLIN},seed=2"),
    }
    metrics = ["wait", "bounded-slowdown", "prediction-error", "under-prediction"]
    base: dict[str, float] = {}
    for row in rows["results"]:
        result = schedlab.simulate(
            workloads[row["workload"]],
            backfill="easy",
            progress=False,
            **BY_HAND[row["configuration"]],
        )
        report = schedlab.compute_metrics(result, names=metrics)
        assert row["jobs"] == len(result)
        assert row["wait_mean"] == report.value("wait")
        assert row["bsld_mean"] == report.value("bounded-slowdown")
        assert row["prediction_mae"] == report.value("prediction-error")
        assert row["under_prediction"] == report.value("under-prediction")
        assert row["corrections"] == result.stats.get("corrections", 0)
        if row["configuration"] == "EASY":
            base[row["workload"]] = report.value("bounded-slowdown")
            assert row["bsld_vs_easy"] == 0.0
        else:
            ratio = report.value("bounded-slowdown") / base[row["workload"]] - 1
            assert row["bsld_vs_easy"] == pytest.approx(ratio, rel=1e-12)


def test_predictors_mispredict_and_are_corrected_and_perfect_estimates_do_not(rows):
    for row in rows["results"]:
        if row["estimator"] in ("requested", "actual"):
            # Requests never under-predict a job killed at its request.
            assert row["under_prediction"] == 0.0
            assert row["corrections"] == 0
        else:
            assert 0.0 < row["under_prediction"] < 1.0
            assert row["corrections"] >= row["jobs_corrected"] > 0
        if row["estimator"] == "actual":
            assert row["prediction_mae"] == 0.0
            assert row["prediction_accuracy"] == 1.0


def test_psp_is_fcfs_on_a_workload_without_users_and_says_so(rows):
    lublin = [r for r in rows["results"] if r["workload"].startswith("lublin")]
    by_name = {r["configuration"]: r for r in lublin}
    for key in ("wait_mean", "bsld_mean"):
        assert by_name["PSP"][key] == by_name["EASY"][key]
    notes = rows["notes"]["lublin:jobs=1500,estimates=tsafrir,seed=2"]
    assert notes[0].startswith("no job has a user id: PSP sees one anonymous user")
    kth = {r["configuration"]: r for r in rows["results"] if r["workload"].startswith("KTH")}
    assert kth["PSP"]["wait_mean"] != kth["EASY"]["wait_mean"]  # KTH has users


def test_class_rows_partition_the_jobs_and_match_a_grouped_report(run, rows, kth_head):
    classes = rows["classes"]
    for (workload, name), total in {
        (r["workload"], r["configuration"]): r["jobs"] for r in rows["results"]
    }.items():
        mine = [c for c in classes if c["workload"] == workload and c["configuration"] == name]
        assert mine[-1]["class"] == "all" and mine[-1]["jobs"] == total
        assert sum(c["jobs"] for c in mine[:-1]) == total
    result = schedlab.simulate(kth_head, progress=False, **BY_HAND["EASY++"])
    report = schedlab.compute_metrics(
        result, names=["wait", "prediction-error"], by="accuracy-class"
    )
    easypp = [
        c for c in classes if c["workload"].startswith("KTH") and c["configuration"] == "EASY++"
    ]
    assert len(easypp) > 2  # KTH's users fall in several classes
    for c in easypp:
        assert c["wait_mean"] == report.value("wait", group=c["class"])
        assert c["prediction_mae"] == report.value("prediction-error", group=c["class"])
    # The CSV holds the same numbers as the JSON.
    out, _ = run
    with open(out / "classes.csv", newline="") as handle:
        read = list(csv.DictReader(handle))
    assert len(read) == len(classes)
    for text, value in zip(read, classes, strict=True):
        assert (float(text["wait_mean"]) if text["wait_mean"] else None) == value["wait_mean"]


def test_every_file_is_the_same_byte_for_byte_on_a_second_run(run, swf_dir, tmp_path):
    out, _ = run
    again = CliRunner().invoke(cli, _args(swf_dir, tmp_path))
    assert again.exit_code == 0, again.output
    for name in FILES:
        assert (tmp_path / name).read_bytes() == (out / name).read_bytes(), name


def test_the_figure_is_a_png_with_a_bar_of_every_configuration(run):
    import matplotlib.image
    import numpy as np

    out, _ = run
    path = out / "estimates.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(path)
    height, width = image.shape[:2]
    assert width > 1000 and height > 300
    rgb = image[..., :3]
    assert (rgb < 0.9).any(axis=-1).mean() > 0.05  # not blank: ink on > 5 % of pixels
    colours = {tuple(np.round(p, 2)) for p in rgb.reshape(-1, 3)[::7]}
    assert len(colours) > len(BY_HAND)  # one fill per configuration, and more


def test_a_second_correction_doubles_the_predictors():
    grid = configurations("user-average,easy++,learned,actual", "tsafrir,requested")
    names = [c.name for c in grid]
    assert names == [
        "EASY",
        "PSP",
        "user-average (tsafrir)",
        "user-average (requested)",
        "EASY++ (tsafrir)",
        "EASY++ (requested)",
        "learned (tsafrir)",
        "learned (requested)",
        "perfect",
    ]
    assert {c.backfill_spec() for c in grid if c.estimator == "easy++"} == {"easy:order=sjbf"}
    assert {c.backfill_spec() for c in grid if c.estimator != "easy++"} == {"easy"}


def test_orders_and_estimator_options():
    flat = configurations("easy++", order="priority", psp=False)
    assert [(c.name, c.backfill_spec()) for c in flat] == [
        ("EASY", "easy"),
        ("easy++", "easy"),
    ]
    every = configurations("requested,learned", order="sjbf")
    assert {c.backfill_spec() for c in every} == {"easy:order=sjbf"}
    assert [c.name for c in every] == ["EASY", "PSP", "learned"]  # requested is the baseline
    assert split_estimators("easy++,learned:rate=0.1,batch=8") == [
        "easy++",
        "learned:rate=0.1,batch=8",
    ]
    (learned,) = [c for c in configurations("learned:rate=0.1,batch=8") if c.name != "EASY"][1:]
    assert learned.estimator_spec() == "learned:batch=8,correction=tsafrir,rate=0.1"
    own = configurations("easy++:correction=none", "tsafrir,requested")
    assert [c.estimator_spec() for c in own][-1] == "easy++:correction=none"


def test_generator_specs_get_the_seed_unless_they_name_one(swf_dir):
    assert resolve_workload("lublin:jobs=10", 4).source == "lublin:jobs=10,seed=4"
    assert resolve_workload("lublin:jobs=10,seed=9", 4).source == "lublin:jobs=10,seed=9"
    path = resolve_workload(str(swf_dir / KTH), 4)
    assert (path.label, path.source) == ("KTH-SP2-1996-2.1-cln", str(swf_dir / KTH))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["-w", "lublin:jobs=50,estimates=tsafrir", "--estimators", "easy+"],
            "unknown estimator 'easy+'",
        ),
        (["-w", "no-such-file.swf"], "--workload no-such-file.swf: no such file"),
        (["-w", "nogen:jobs=5"], "not a generator spec"),
        (
            ["-w", "lublin:jobs=50,estimates=tsafrir", "--correction", "sometimes"],
            "--correction sometimes: expected one of tsafrir, requested, none",
        ),
        (["-w", "lublin:jobs=50,estimates=tsafrir", "--estimators", "learned:rate=-1"], "rate"),
        (["-w", "lublin:jobs=50"], "no job has a requested time"),
        (
            ["-w", "lublin:jobs=50,estimates=tsafrir", "-w", "lublin:jobs=50,estimates=tsafrir"],
            "twice",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["experiment", "estimates", *args, "--output", str(tmp_path / "out"), "--quiet"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()  # nothing written before the error


def test_the_real_log_without_estimates_is_refused(swf_dir, tmp_path):
    with pytest.raises(schedlab.UsageError, match="no job has a requested time"):
        run_estimates_experiment(
            [str(swf_dir / "NASA-iPSC-1993-3.1-cln.swf.gz")], tmp_path, jobs=100, figure=False
        )


def test_the_plugin_imports_only_the_public_api():
    public = {"schedlab": set(schedlab.__all__), "schedlab.experiment": set(experiment_api.__all__)}
    seen = 0
    for path in sorted(PLUGIN.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module.split(".")[0] != "schedlab":
                    continue
                assert node.module in public, f"{path.name} imports {node.module}"
                names = {a.name for a in node.names}
                assert names <= public[node.module], f"{path.name}: {names - public[node.module]}"
                seen += 1
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "schedlab":
                        assert alias.name == "schedlab", f"{path.name} imports {alias.name}"
                        seen += 1
    assert seen >= 5


def test_registering_the_plugin_loads_nothing_of_the_experiment():
    code = (
        "import sys, schedlab.policies.estimates_experiment as p\n"
        "p.schedlab_cli_commands()\n"
        "print([m for m in sys.modules if m.startswith(('schedlab.experiment.', "
        "'schedlab.policies.estimates_experiment.', 'matplotlib', 'numpy'))])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_command_is_listed_under_experiment(registry):
    spec = registry.get("command", "experiment.estimates")
    assert spec.provider == "estimates-experiment"
    result = CliRunner().invoke(cli, ["experiment", "--help"])
    assert "estimates" in result.output and "psp" in result.output
