"""The strategy as a user meets it: installed, listed, run by the schedlab CLI.

These run the real ``schedlab`` command in a subprocess, so they need this
distribution installed in the environment (``pip install ./examples/schedlab-selective``).
Backfilling options go through ``--backfill-option`` (``-O`` is the priority
policy's option).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata

import pytest

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"


def schedlab_cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEDLAB_")}
    return subprocess.run(
        [sys.executable, "-m", "schedlab", *args],
        capture_output=True, text=True, env=env, timeout=300,
    )


def test_installed_as_a_distribution():
    dist = metadata.distribution("schedlab-selective")
    assert dist.version == "0.1.0"
    eps = [ep for ep in dist.entry_points if ep.group == "schedlab"]
    assert [(ep.name, ep.value) for ep in eps] == [("selective", "schedlab_selective.plugin")]


def test_schedlab_plugins_lists_it():
    result = schedlab_cli("plugins", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    row = rows["selective"]
    assert (row["distribution"], row["version"], row["status"]) == (
        "schedlab-selective", "0.1.0", "loaded")
    assert row["hooks"] == ["schedlab_backfills"]
    assert [(c["kind"], c["name"]) for c in row["components"]] == [("backfill", "selective")]


def test_the_plugin_uses_only_the_public_api():
    from importlib.util import find_spec
    from pathlib import Path

    spec = find_spec("schedlab_selective")
    assert spec is not None and spec.origin is not None
    allowed = ("schedlab", "schedlab.sim", "schedlab.plugin_types", "schedlab.testing")
    for path in Path(spec.origin).parent.glob("*.py"):
        for line in path.read_text().splitlines():
            words = line.split()
            if words[:1] in (["import"], ["from"]) and words[1].startswith("schedlab"):
                module = words[1]
                if not module.startswith("schedlab_selective"):
                    assert module in allowed, f"{path.name}: {line.strip()}"


def simulate(log, *args: str) -> dict:
    result = schedlab_cli("simulate", str(log), "--json", "--no-progress", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def kth_runs(swf_dir):
    """Mean bounded slowdown on the whole KTH-SP2 log (28,475 jobs), FCFS, by
    backfilling."""
    log = swf_dir / KTH
    runs = {
        "easy": simulate(log, "--backfill", "easy"),
        "conservative": simulate(log, "--backfill", "conservative"),
        "selective": simulate(log, "--backfill", "selective"),
        "selective-1": simulate(log, "--backfill", "selective",
                                "--backfill-option", "threshold=1"),
        "selective-huge": simulate(log, "--backfill", "selective",
                                   "--backfill-option", "threshold=1e12"),
    }
    return runs


def mean_bsld(run: dict) -> float:
    (row,) = run["metrics"]["rows"]
    return row["bounded-slowdown"]["mean"]


def test_cli_runs_it_with_its_options(kth_runs):
    simulation = kth_runs["selective-1"]["simulation"]
    assert simulation["backfill"] == "selective"
    assert simulation["options"]["backfill"] == {"threshold": 1.0}
    assert kth_runs["selective"]["simulation"]["options"]["backfill"] == {"threshold": 2.0}
    for run in kth_runs.values():
        assert run["metrics"]["jobs"] == 28475


def test_kth_threshold_one_is_conservative(kth_runs):
    # The same schedule (test_properties.py says why), so the same metrics.
    assert kth_runs["selective-1"]["metrics"]["rows"] == (
        kth_runs["conservative"]["metrics"]["rows"])


def test_kth_selective_beats_easy_and_conservative_on_bounded_slowdown(kth_runs):
    # Measured: EASY 92.9, conservative 89.2, selective (threshold 2) 63.1. The claim
    # of the paper, for this log, with a margin far beyond noise (and the simulation
    # is deterministic): at least 20 % below both.
    sel = mean_bsld(kth_runs["selective"])
    assert sel < 0.8 * mean_bsld(kth_runs["easy"])
    assert sel < 0.8 * mean_bsld(kth_runs["conservative"])


def test_kth_without_reservations_jobs_starve(kth_runs):
    # With no job ever protected, wide jobs wait while narrower ones keep passing
    # them: the longest wait is 1,723,252 s (20 days) against 249,058 s under
    # conservative and 366,625 s under selective with threshold 2.
    def max_wait(run: dict) -> float:
        (row,) = run["metrics"]["rows"]
        return row["wait"]["max"]

    huge = max_wait(kth_runs["selective-huge"])
    for name in ("easy", "conservative", "selective"):
        assert huge > 3 * max_wait(kth_runs[name]), name


@pytest.mark.parametrize(("option", "message"), [
    ("threshold=0.5", "backfill selective: option threshold='0.5': expected number >= 1 "
                      "or 'adaptive' (0.5 is below 1, and an expansion factor never is)"),
    ("threshold=soon", "backfill selective: option threshold='soon': expected number >= 1 "
                       "or 'adaptive' ('soon' is neither a number nor 'adaptive')"),
    ("threshold=inf", "backfill selective: option threshold='inf': expected number >= 1 "
                      "or 'adaptive' (inf is not finite; for no reservations give a large "
                      "number)"),
    ("depth=3", "backfill selective: unknown option 'depth' (options: threshold)"),
])
def test_cli_option_errors_are_one_line(swf_dir, option, message):
    result = schedlab_cli("simulate", str(swf_dir / KTH), "--backfill", "selective",
                          "--backfill-option", option)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"schedlab: error: {message}"]
    assert result.stdout == ""
