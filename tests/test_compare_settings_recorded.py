"""``schedlab compare`` records every setting its combinations share (audit F4): the
estimator, the kill rule and the dependency setting are in the JSON's ``settings``
(and ``Comparison.settings``), and the table's title names those that differ from
the defaults, since the rows' names do not show them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import schedlab
from schedlab.comparison import compare_policies
from schedlab.testing import run_cli

# Job 1 runs 100 s past its 50 s request (killed at 50 s by default, so job 2's wait
# depends on --no-kill); job 3 follows job 2 after a 30 s think time (so its submit
# time, and its wait, depend on --dependencies).
TRACE = """\
; MaxProcs: 4
1 0 -1 100 4 -1 -1 4 50 -1 1 1 1 -1 1 -1 -1 -1
2 10 -1 10 4 -1 -1 4 100 -1 1 2 1 -1 1 -1 -1 -1
3 20 -1 10 1 -1 -1 1 100 -1 1 3 1 -1 1 -1 2 30
"""


@pytest.fixture()
def trace(tmp_path: Path) -> str:
    path = tmp_path / "deps.swf"
    path.write_text(TRACE)
    return str(path)


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    code, out, err = run_cli(capsys, "compare", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def _title(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The table's title, its wrapped lines joined by single spaces."""
    code, out, err = run_cli(capsys, "compare", *args, "--no-timings")
    assert code == 0, err
    title = out.split("┏", 1)[0]  # everything above the table's top border
    return re.sub(r"\s+", " ", title).strip()


def _waits(data: dict) -> list[float]:
    return [row["metrics"]["rows"][0]["wait"]["mean"] for row in data["rows"]]


def test_json_settings_tell_kill_and_dependencies_apart(
    capsys: pytest.CaptureFixture[str], trace: str
) -> None:
    default = _json(capsys, trace, "-p", "fcfs", "-m", "wait")
    no_kill = _json(capsys, trace, "-p", "fcfs", "-m", "wait", "--no-kill")
    deps = _json(capsys, trace, "-p", "fcfs", "-m", "wait", "--dependencies")
    # the three runs give different numbers ...
    assert len({tuple(_waits(d)) for d in (default, no_kill, deps)}) == 3
    # ... and their settings say why
    assert default["settings"]["kill"] is True
    assert default["settings"]["dependencies"] is False
    assert no_kill["settings"]["kill"] is False
    assert no_kill["settings"]["dependencies"] is False
    assert deps["settings"]["kill"] is True
    assert deps["settings"]["dependencies"] is True
    for data in (default, no_kill, deps):
        assert data["settings"]["estimator"] == "requested"
        # the keys there were before stay
        for kind in ("policy", "backfill", "estimator", "allocation"):
            assert data["settings"][f"{kind}_options"] == {}


def test_json_settings_record_the_estimator(capsys: pytest.CaptureFixture[str], trace: str) -> None:
    data = _json(capsys, trace, "-p", "fcfs", "-m", "wait", "-e", "actual")
    assert data["settings"]["estimator"] == "actual"
    assert data["settings"]["kill"] is True
    assert data["settings"]["dependencies"] is False


def test_title_names_every_non_default_setting(
    capsys: pytest.CaptureFixture[str], trace: str
) -> None:
    assert _title(capsys, trace, "-p", "fcfs", "-m", "wait") == "Policy comparison on deps.swf"
    assert (
        _title(capsys, trace, "-p", "fcfs", "-m", "wait", "-e", "actual")
        == "Policy comparison on deps.swf (estimator actual)"
    )
    assert _title(
        capsys, trace, "-p", "fcfs", "-m", "wait", "-e", "easy++", "-E", "correction=requested"
    ) == (
        "Policy comparison on deps.swf (estimator easy++; estimator options correction=requested)"
    )
    assert _title(
        capsys, trace, "-p", "fcfs", "-m", "wait", "--no-kill", "--dependencies", "-B", "order=sjbf"
    ) == (
        "Policy comparison on deps.swf "
        "(backfill options order=sjbf; jobs not killed; dependencies honoured)"
    )


def test_real_trace_no_kill_and_estimator_are_recorded(
    capsys: pytest.CaptureFixture[str], swf_dir: Path
) -> None:
    """The audit's reproduction on HPC2N: --no-kill changes the mean wait, and the
    output now says so; -e actual is named in the title."""
    hpc2n = str(swf_dir / "HPC2N-2002_excerpt-3170jobs_alea.swf")
    default = _json(capsys, hpc2n, "-p", "fcfs", "-m", "wait")
    no_kill = _json(capsys, hpc2n, "-p", "fcfs", "-m", "wait", "--no-kill")
    assert _waits(default) != _waits(no_kill)
    assert default["settings"] != no_kill["settings"]
    assert (default["settings"]["kill"], no_kill["settings"]["kill"]) == (True, False)
    assert "(estimator actual)" in _title(capsys, hpc2n, "-p", "fcfs", "-m", "wait", "-e", "actual")


def test_python_comparison_settings_and_title(trace: str) -> None:
    workload = schedlab.read(trace)
    default = compare_policies(workload, "fcfs,sjf", names=["wait"], source="deps.swf")
    assert default.settings["estimator"] == "requested"
    assert default.settings["kill"] is True
    assert default.settings["dependencies"] is False
    assert default.table().title == "Policy comparison on deps.swf"

    changed = compare_policies(
        workload,
        "fcfs,sjf",
        names=["wait"],
        source="deps.swf",
        estimator="actual",
        kill=False,
        dependencies=True,
    )
    assert changed.settings["estimator"] == "actual"
    assert changed.settings["kill"] is False
    assert changed.settings["dependencies"] is True
    assert json.loads(changed.to_json())["settings"] == {
        "estimator": "actual",
        "kill": False,
        "dependencies": True,
        "policy_options": {},
        "backfill_options": {},
        "estimator_options": {},
        "allocation_options": {},
    }
    assert changed.table().title == (
        "Policy comparison on deps.swf (estimator actual; jobs not killed; dependencies honoured)"
    )
    assert [r.value("wait") for r in changed.rows] != [r.value("wait") for r in default.rows]
