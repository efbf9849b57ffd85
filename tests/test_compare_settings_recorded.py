"""``schedlab compare`` records every setting its combinations share (audit F4): the
estimator, the kill rule and the dependency setting are in the JSON's ``settings``
(and ``Comparison.settings``), and the table's title names those that differ from
the defaults, since the rows' names do not show them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import attrs
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
        "procs": None,
        "platform": None,
        "allocation": None,
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


# The machine is a setting every combination shares too (audit: --procs, --platform
# and --allocation were recorded nowhere). Exclusive nodes of 2 cores: HPC2N's jobs of
# one processor take a whole node, so a platform run's waits differ from the default's.
PLATFORM = """\
[platform]
sharing = "exclusive"

[node_groups.n]
count = 120
cores = 2

[partitions.all]
nodes = ["n"]
"""


@pytest.fixture()
def hpc2n(swf_dir: Path) -> str:
    return str(swf_dir / "HPC2N-2002_excerpt-3170jobs_alea.swf")


@pytest.fixture()
def platform_file(tmp_path: Path) -> str:
    path = tmp_path / "machine" / "cluster.toml"
    path.parent.mkdir()
    path.write_text(PLATFORM)
    return str(path)


def test_json_settings_record_the_machine(
    capsys: pytest.CaptureFixture[str], hpc2n: str, platform_file: str
) -> None:
    default = _json(capsys, hpc2n, "-p", "fcfs", "-m", "wait")
    procs = _json(capsys, hpc2n, "-p", "fcfs", "-m", "wait", "--procs", "120")
    plat = _json(capsys, hpc2n, "-p", "fcfs", "-m", "wait", "--platform", platform_file)
    spread = _json(
        capsys, hpc2n, "-p", "fcfs", "-m", "wait", "--platform", platform_file,
        "--allocation", "spread",
    )  # fmt: skip
    # three machines, three sets of numbers ...
    assert len({tuple(_waits(d)) for d in (default, procs, plat)}) == 3
    # ... and the settings say which machine each ran on
    machine = ("procs", "platform", "allocation")
    assert [default["settings"][k] for k in machine] == [None, None, None]
    assert [procs["settings"][k] for k in machine] == [120, None, None]
    assert [plat["settings"][k] for k in machine] == [None, "cluster.toml", "first-fit"]
    assert [spread["settings"][k] for k in machine] == [None, "cluster.toml", "spread"]
    # the size used stays in each row (the header's 240, the 240 cores of the platform)
    assert [r["procs"] for d in (default, procs, plat) for r in d["rows"]] == [240, 120, 240]


def test_json_platform_is_named_without_its_directory(
    capsys: pytest.CaptureFixture[str],
    hpc2n: str,
    platform_file: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As the trace's ``source``: the same file by another path gives the same bytes."""
    code, absolute, err = run_cli(
        capsys, "compare", hpc2n, "-p", "fcfs", "-m", "wait", "--platform", platform_file, "--json"
    )
    assert code == 0, err
    monkeypatch.chdir(Path(platform_file).parent)
    code, relative, err = run_cli(
        capsys, "compare", hpc2n, "-p", "fcfs", "-m", "wait", "--platform", "cluster.toml", "--json"
    )
    assert code == 0, err
    assert json.loads(absolute)["settings"]["platform"] == "cluster.toml"
    assert absolute == relative


def test_title_names_the_machine(
    capsys: pytest.CaptureFixture[str], hpc2n: str, platform_file: str
) -> None:
    name = "HPC2N-2002_excerpt-3170jobs_alea.swf"
    assert _title(capsys, hpc2n, "-p", "fcfs", "-m", "wait") == f"Policy comparison on {name}"
    assert (
        _title(capsys, hpc2n, "-p", "fcfs", "-m", "wait", "--procs", "120", "-e", "actual")
        == f"Policy comparison on {name} (procs 120; estimator actual)"
    )
    # the default allocation (first-fit) is not named, as in simulate's header note
    assert (
        _title(capsys, hpc2n, "-p", "fcfs", "-m", "wait", "--platform", platform_file)
        == f"Policy comparison on {name} (platform cluster.toml)"
    )
    assert _title(
        capsys, hpc2n, "-p", "fcfs", "-m", "wait", "--platform", platform_file,
        "--allocation", "spread", "--no-kill",
    ) == (
        f"Policy comparison on {name} (platform cluster.toml; allocation spread; jobs not killed)"
    )  # fmt: skip


def test_report_page_title_names_the_settings(
    capsys: pytest.CaptureFixture[str], hpc2n: str, platform_file: str, tmp_path: Path
) -> None:
    name = "HPC2N-2002_excerpt-3170jobs_alea.swf"

    def page_title(*args: str) -> str:
        page = tmp_path / "cmp.html"
        code, _, err = run_cli(
            capsys, "compare", hpc2n, "-p", "fcfs", "-m", "wait", "--report", str(page), *args
        )
        assert code == 0, err
        found = re.findall(r"<title>(.*?)</title>", page.read_text())
        assert len(found) == 1
        return found[0]

    assert page_title() == f"Comparison on {name}"  # unchanged by default
    assert page_title("--procs", "120", "-e", "actual") == (
        f"Comparison on {name} (procs 120; estimator actual)"
    )
    assert page_title("--platform", platform_file, "--allocation", "spread") == (
        f"Comparison on {name} (platform cluster.toml; allocation spread)"
    )


def test_python_comparison_records_the_machine(hpc2n: str, platform_file: str) -> None:
    from schedlab.platform import load_platform

    workload = schedlab.read(hpc2n)
    name = "HPC2N-2002_excerpt-3170jobs_alea.swf"
    sized = compare_policies(workload, "fcfs", names=["wait"], source=name, procs=120)
    assert (sized.settings["procs"], sized.settings["platform"]) == (120, None)
    assert sized.settings["allocation"] is None
    assert sized.rows[0].procs == 120
    assert sized.table().title == f"Policy comparison on {name} (procs 120)"
    assert sized.title("Comparison") == f"Comparison on {name} (procs 120)"

    on_file = compare_policies(
        workload, "fcfs", names=["wait"], source=name, platform=platform_file, allocation="spread"
    )
    assert on_file.settings["procs"] is None
    assert on_file.settings["platform"] == "cluster.toml"
    assert on_file.settings["allocation"] == "spread"
    assert on_file.table().title == (
        f"Policy comparison on {name} (platform cluster.toml; allocation spread)"
    )
    assert json.loads(on_file.to_json())["settings"]["platform"] == "cluster.toml"

    # a Platform object is named by its name, else "Platform"
    loaded = load_platform(platform_file)
    assert loaded.name is None  # the file has no [platform] name
    as_object = compare_policies(workload, "fcfs", names=["wait"], platform=loaded)
    assert as_object.settings["platform"] == "Platform"
    assert as_object.settings["allocation"] == "first-fit"
    assert as_object.table().title == "Policy comparison (platform Platform)"
    named = attrs.evolve(loaded, name="example cluster")
    as_named = compare_policies(workload, "fcfs", names=["wait"], platform=named)
    assert as_named.settings["platform"] == "example cluster"
