"""The plugin as a user meets it: installed, listed, used by the schedlab CLI.

These run the real ``schedlab`` command in a subprocess, so they need this
distribution installed in the environment (``pip install ./examples/schedlab-slurm``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata

import pytest
import schedlab

READABLE = [
    ("slurm_sim_tools_sacct_dump2101.log", ["--lenient"]),
    ("slurm_sim_tools_sacct_dump2110.log", []),
    ("slurm_sim_tools_sacct_simple.log", []),
    ("slurm_sim_tools_sacct_submitline_multiline.log", []),
    ("xdmod_accounting-logs-with-job-arrays.log", []),
    ("xdmod_accounting-logs.log", []),
    ("xdmod_non-ended-job-state.log", []),
    ("xdmod_unknown-job-state.log", []),
    ("xdmod_utf8-multibyte-chars.log", []),
]


def schedlab_cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEDLAB_")}
    return subprocess.run(
        [sys.executable, "-m", "schedlab", *args],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=120,
    )


def test_installed_as_a_distribution():
    dist = metadata.distribution("schedlab-slurm")
    assert dist.version == "0.1.0"
    eps = [ep for ep in dist.entry_points if ep.group == "schedlab"]
    assert [(ep.name, ep.value) for ep in eps] == [("slurm", "schedlab_slurm.plugin")]


def test_schedlab_plugins_lists_it():
    result = schedlab_cli("plugins", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    row = rows["slurm"]
    assert (row["distribution"], row["version"], row["status"]) == (
        "schedlab-slurm", "0.1.0", "loaded")
    assert row["hooks"] == ["schedlab_readers", "schedlab_writers"]
    assert {(c["kind"], c["name"]) for c in row["components"]} == {
        ("reader", "slurm"), ("writer", "slurm")}


def test_schedlab_plugins_table_shows_it():
    result = schedlab_cli("plugins")
    assert result.returncode == 0, result.stderr
    assert "schedlab-slurm" in result.stdout and "0.1.0" in result.stdout


@pytest.mark.parametrize(("name", "options"), READABLE)
def test_convert_to_swf_validates(slurm_dir, tmp_path, name, options):
    out = tmp_path / "out.swf"
    result = schedlab_cli("convert", str(slurm_dir / name), str(out), *options)
    assert result.returncode == 0, result.stderr
    check = schedlab_cli("validate", str(out))
    assert check.returncode == 0, check.stdout + check.stderr
    swf = schedlab.read(out)
    source = schedlab.read(slurm_dir / name, format="slurm", lenient=bool(options))
    assert len(swf) == len(source)
    for a, b in zip(source, swf, strict=True):
        assert a.swf_values() == pytest.approx(b.swf_values(), nan_ok=True), a.job_number


def test_convert_warns_about_an_unknown_state(slurm_dir, tmp_path):
    source = slurm_dir / "xdmod_unknown-job-state.log"
    result = schedlab_cli("convert", str(source), str(tmp_path / "o.swf"))
    assert result.returncode == 0, result.stderr
    warnings = [x for x in result.stderr.splitlines() if x.startswith("schedlab: warning: ")]
    assert len(warnings) == 1 and "Traceback" not in result.stderr
    assert f"{source}: 2 record(s) with an unknown job state" in warnings[0]
    jobs = schedlab.read(tmp_path / "o.swf").jobs
    assert [j.status for j in jobs] == [None, None]


def test_convert_reports_a_truncated_record_in_one_line(slurm_dir, tmp_path):
    source = slurm_dir / "slurm_sim_tools_sacct_dump2101.log"
    result = schedlab_cli("convert", str(source), str(tmp_path / "o.swf"))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("schedlab: error: ")
    assert f"{source}:16: " in lines[0] and "expected 107 fields, found 74" in lines[0]
    assert not (tmp_path / "o.swf").exists()


def test_convert_keeps_rejects(slurm_dir, tmp_path):
    rejects = tmp_path / "rejects.txt"
    result = schedlab_cli("convert", str(slurm_dir / "slurm_sim_tools_sacct_dump2101.log"),
                          str(tmp_path / "o.swf"), "--rejects", str(rejects))
    assert result.returncode == 0, result.stderr
    lines = (slurm_dir / "slurm_sim_tools_sacct_dump2101.log").read_text().splitlines()
    assert rejects.read_text().splitlines() == [lines[15]]


def test_convert_swf_to_sacct_and_back(slurm_dir, tmp_path):
    swf = tmp_path / "a.swf"
    assert schedlab_cli("convert", str(slurm_dir / "xdmod_accounting-logs.log"),
                        str(swf)).returncode == 0
    sacct = tmp_path / "b.sacct"
    result = schedlab_cli("convert", str(swf), str(sacct))
    assert result.returncode == 0, result.stderr
    first, second = schedlab.read(swf), schedlab.read(sacct)
    keep = slice(1, 11)  # submit ... status: what a sacct record can carry
    for a, b in zip(first, second, strict=True):
        assert a.swf_values()[keep] == pytest.approx(b.swf_values()[keep], nan_ok=True)


HEAD = "JobID|JobIDRaw|Submit|Start|End|Elapsed|State|AllocCPUS|TimelimitRaw|ReqTRES|JobName"
GOOD = "7|7|2024-01-01T00:00:00|2024-01-01T00:00:05|2024-01-01T00:00:15|00:00:10|COMPLETED|1|5|"


@pytest.mark.parametrize(
    ("record", "column"),
    [
        (GOOD.replace("|5|", "|²|") + "cpu=1|x", "TimelimitRaw"),  # was exit 3
        (GOOD + "cpu=4,gres/gpu=²|x", "ReqTRES"),  # was exit 3
        (GOOD.replace("2024-01-01T00:00:05", "2024-02-31T00:00:05") + "|x", "Start"),
        (GOOD.replace("|1|5|", "|-4|5|") + "|x", "AllocCPUS"),
    ],
)
def test_bad_values_are_one_line_and_exit_2(tmp_path, record, column):
    source = tmp_path / "bad.sacct"
    source.write_text(f"{HEAD}\n{record}\n", encoding="utf-8")
    for options in ([], ["-R", "job_numbers=raw"]):
        result = schedlab_cli("convert", str(source), str(tmp_path / "o.swf"), *options)
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in result.stderr
        assert lines[0].startswith(f"schedlab: error: {source}:2: field {column}: ")


def test_job_id_raw_with_raw_numbers_is_one_line_and_exit_2(tmp_path):
    source = tmp_path / "bad.sacct"
    source.write_text(f"{HEAD}\n" + GOOD.replace("7|7|", "7|²|", 1) + "|x\n", encoding="utf-8")
    result = schedlab_cli("convert", str(source), str(tmp_path / "o.swf"), "-R",
                          "job_numbers=raw")
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"schedlab: error: {source}:2: field JobIDRaw: ")


def test_strict_lossless_refuses_what_sacct_cannot_hold(tmp_path):
    swf = tmp_path / "rt_min.swf"
    swf.write_text(
        "    1        0    0.5  99.75    2  -1  -1    2   -1  -1  1  1  1  1  1  1 -1 -1\n"
        "    2        5     -1     -1   -1  -1  -1    8  300  -1  5  1  1  1  1  1 -1 -1\n",
        encoding="utf-8",
    )
    out = tmp_path / "out.sacct"
    result = schedlab_cli("convert", "--strict-lossless", str(swf), str(out))
    assert result.returncode == 2 and not out.exists()  # was exit 0, nothing reported
    assert "wait_time" in result.stderr and "Traceback" not in result.stderr
    result = schedlab_cli("convert", str(swf), str(out))
    assert result.returncode == 0, result.stderr
    assert "wait_time: 1 record, rounded to whole seconds" in result.stderr
    assert "run_time: 1 record, rounded to whole seconds" in result.stderr
