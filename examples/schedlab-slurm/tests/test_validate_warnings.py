"""``schedlab validate`` counts this reader's warnings about the trace (the runs of
a requeued job read as jobs, unknown states) as ``reader-warning`` findings: in the
warning count, printed as finding lines, failing ``--strict``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from schedlab.cli import main


def test_a_repeat_warning_is_a_counted_finding(
    slurm_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = slurm_dir / "slurm_sim_tools_sacct_dump2110.log"
    assert main(["validate", str(dump)]) == 0
    out, err = capsys.readouterr()
    assert "schedlab: warning:" not in err  # a finding line instead
    lines = out.splitlines()
    assert lines[-1].endswith("ok: 5 jobs; 0 error(s), 1 warning(s), 0 info")
    assert lines[0] == (
        f"{dump}: warning: 4 record(s) of a job printed before with other fields "
        "(sacct --duplicates: the runs of a requeued job), each read as a job: "
        "job 7957382 line 5 (first: line 2), job 7957382 line 6 (first: line 2), "
        "job 7957382 line 7 (first: line 2), job 7957382 line 8 (first: line 2); "
        "-R duplicates=last keeps the last run only [reader-warning]"
    )
    with pytest.raises(SystemExit) as stop:
        main(["validate", "--strict", str(dump)])
    assert stop.value.code == 1
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["validate", "--strict", "--json", str(dump)])
    report = json.loads(capsys.readouterr().out)
    assert report["counts"]["warning"] == 1 and report["checks"] == {"reader-warning": 1}
    assert not report["ok"]


def test_without_repeats_nothing_is_added(
    slurm_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = slurm_dir / "slurm_sim_tools_sacct_dump2110.log"
    assert main(["validate", "-R", "duplicates=last", str(dump)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [f"{dump}: ok: 1 jobs; 0 error(s), 0 warning(s), 0 info"]
