"""``schedlab info``, ``validate`` and ``convert`` through the real entry point
(:func:`schedlab.cli.main`): output, exit codes, one-line errors, atomic output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from schedlab.testing import run_cli as run

HEADER = "; Version: 2.2\n; MaxJobs: 2\n; MaxRecords: 2\n; MaxProcs: 16\n"
GOOD = (
    "1 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"
    "2 10 0 50 2 -1 -1 2 60 -1 0 2 1 -1 2 -1 -1 -1\n"
)
BAD = "3 20 0 x 2 -1 -1 2 60 -1 0 2 1 -1 2 -1 -1 -1\n"


@pytest.fixture()
def good(tmp_path: Path) -> Path:
    path = tmp_path / "good.swf"
    path.write_text(HEADER + GOOD)
    return path


@pytest.fixture()
def bad(tmp_path: Path) -> Path:
    path = tmp_path / "bad.swf"
    path.write_text(HEADER + GOOD + BAD)
    return path


def test_info_json_golden(capsys, good: Path) -> None:
    code, out, _ = run(capsys, "info", str(good), "--json")
    assert code == 0
    info = json.loads(out)
    assert (info["jobs"], info["users"], info["groups"], info["queues"]) == (2, 2, 1, 2)
    assert (info["first_submit"], info["last_end"], info["span_seconds"]) == (0, 105, 105)
    assert info["machine_processors"] == 16
    # offered load: (100*4 + 50*2) processor-seconds / (16 processors * 10 s)
    assert info["offered_load"] == pytest.approx(500 / 160)
    assert info["status"] == {"0": 1, "1": 1}
    assert info["header"]["MaxProcs"] == "16" and info["header"]["Version"] == "2.2"


def test_info_text(capsys, good: Path) -> None:
    code, out, _ = run(capsys, "info", str(good))
    assert code == 0 and "jobs: 2" in out and "offered_load: 3.125" in out


@pytest.mark.realdata
def test_info_real_file(capsys, swf_dir: Path) -> None:
    code, out, _ = run(capsys, "info", str(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz"), "--json")
    info = json.loads(out)
    assert code == 0 and info["jobs"] == 28476 and info["status"] == {"0": 7946, "1": 20530}
    assert info["header"]["start_utc"] == "1996-09-23T12:00:31+00:00"


def test_validate_clean_exit_0(capsys, good: Path) -> None:
    code, out, _ = run(capsys, "validate", str(good), "--strict")
    assert code == 0 and ": ok: 2 jobs" in out


def test_validate_findings_exit_1_with_line_numbers(capsys, bad: Path) -> None:
    code, out, _ = run(capsys, "validate", str(bad))
    assert code == 1
    assert f"{bad}:7: error: field 4 (run_time): expected a number, got 'x'" in out
    code, out, _ = run(capsys, "validate", str(bad), "--json")
    report = json.loads(out)
    assert code == 1 and report["ok"] is False and report["skipped"] == 1
    checks = {(f["line"], f["check"]) for f in report["findings"]}
    assert (7, "bad-record") in checks
    assert (3, "header-count") in checks  # MaxRecords: 2 vs 3 lines, never dropped silently


def test_validate_strict_fails_on_warnings_only(capsys, tmp_path: Path) -> None:
    path = tmp_path / "w.swf"
    path.write_text(HEADER.replace("MaxJobs: 2", "MaxJobs: 5") + GOOD)
    assert run(capsys, "validate", str(path))[0] == 0
    assert run(capsys, "validate", str(path), "--strict")[0] == 1


def test_validate_unreadable_exit_2(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "validate", str(tmp_path / "missing.swf"))
    assert code == 2 and err.count("\n") == 1 and "missing.swf" in err
    garbage = tmp_path / "x.bin"
    garbage.write_bytes(b"\x00\x01\x02 not a trace")
    code, _, err = run(capsys, "validate", str(garbage))
    assert code == 2 and err.startswith("schedlab: error:") and "Traceback" not in err


def test_convert_strict_error_is_one_line_and_leaves_no_output(capsys, bad: Path) -> None:
    out = bad.parent / "out.swf"
    code, _, err = run(capsys, "convert", str(bad), str(out))
    assert code == 2
    assert err == f"schedlab: error: {bad}:7: field 4 (run_time): expected a number, got 'x'\n"
    assert not out.exists()
    assert [p.name for p in bad.parent.iterdir()] == ["bad.swf"]  # no temp files left


def test_convert_lenient_with_rejects(capsys, bad: Path) -> None:
    out = bad.parent / "out.swf.gz"
    rejects = bad.parent / "rejects.txt"
    code, _, err = run(capsys, "convert", str(bad), str(out), "--rejects", str(rejects))
    assert code == 0 and "skipped 1 bad record" in err
    assert rejects.read_text() == BAD
    code, stdout, _ = run(capsys, "info", str(out), "--json")
    assert json.loads(stdout)["jobs"] == 2


def test_convert_options_and_formats(capsys, good: Path) -> None:
    out = good.parent / "copy.txt"
    code, _, err = run(
        capsys, "convert", str(good), str(out), "--to", "swf", "-R", "summary_only=true"
    )
    assert code == 0 and out.read_text().startswith(HEADER)
    code, _, err = run(capsys, "convert", str(good), str(out), "-R", "nope=1", "--to", "swf")
    assert code == 2 and "unknown option 'nope'" in err
    code, _, err = run(capsys, "convert", str(good), str(good.parent / "x.unknown"))
    assert code == 2 and "--to" in err
    code, _, err = run(capsys, "convert", str(good), str(good))
    assert code == 2 and "overwrite" in err


@pytest.mark.realdata
def test_convert_real_extended_file(capsys, swf_dir: Path, tmp_path: Path) -> None:
    source = swf_dir / "wagap-2013_alea-extended.swf"
    out = tmp_path / "wagap.swf"
    code, _, err = run(capsys, "convert", str(source), str(out))
    assert code == 2 and ":1: found 21 fields, expected 18" in err and not out.exists()
    code, _, err = run(capsys, "convert", str(source), str(out), "--lenient")
    assert code == 0 and "finding(s)" in err
    code, stdout, _ = run(capsys, "validate", str(out), "--json")
    report = json.loads(stdout)
    assert {f["line"] for f in report["findings"] if f["check"] == "negative-value"} == {4186, 4200}
