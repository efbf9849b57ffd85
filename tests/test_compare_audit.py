"""``schedlab compare`` after the usability audit: the simulations' notes in the table
and the JSON, the ``name:key=value`` spelling and -P/-B/-E/--allocation-option, the
--ci-only options refused without --ci, ``--policy`` as an alias of ``--policies``,
and a table whose shape does not depend on the data."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from schedlab.testing import run_cli

#: A small generated workload (a few seconds to simulate on every combination).
GENERATED = "psp-fing:scenario=CF,jobs=300"

# Six jobs on 4 processors without requested times (field 9 is -1): the scheduler
# has no estimate for any of them and falls back to the actual run times.
NO_REQUESTS_SWF = """\
; MaxProcs: 4
1 0 -1 100 2 -1 -1 2 -1 -1 1 1 1 -1 1 -1 -1 -1
2 1 -1 10 4 -1 -1 4 -1 -1 1 2 1 -1 1 -1 -1 -1
3 2 -1 50 2 -1 -1 2 -1 -1 1 3 1 -1 1 -1 -1 -1
4 3 -1 5 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1
5 4 -1 300 3 -1 -1 3 -1 -1 1 2 1 -1 1 -1 -1 -1
6 5 -1 20 1 -1 -1 1 -1 -1 1 3 1 -1 1 -1 -1 -1
"""

# The same without any excluded job but with requested times: no note to give.
WITH_REQUESTS_SWF = """\
; MaxProcs: 4
1 0 -1 100 2 -1 -1 2 400 -1 1 1 1 -1 1 -1 -1 -1
2 1 -1 10 4 -1 -1 4 400 -1 1 2 1 -1 1 -1 -1 -1
3 2 -1 50 2 -1 -1 2 400 -1 1 3 1 -1 1 -1 -1 -1
4 3 -1 5 1 -1 -1 1 400 -1 1 1 1 -1 1 -1 -1 -1
5 4 -1 300 3 -1 -1 3 400 -1 1 2 1 -1 1 -1 -1 -1
6 5 -1 20 1 -1 -1 1 400 -1 1 3 1 -1 1 -1 -1 -1
"""

FALLBACK = "estimates fell back for 6 of 6 jobs"

PLATFORM = """
[node_groups.a]
count = 4
cores = 4
"""


def _trace(tmp_path: Path, text: str, name: str = "trace.swf") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    code, out, err = run_cli(capsys, "compare", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def _one_line_error(code: int, err: str) -> str:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# ------------------------------------------------------------ item 1: notes


def test_fallback_note_is_printed_once_with_the_combinations_it_concerns(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = _trace(tmp_path, NO_REQUESTS_SWF)
    code, out, err = run_cli(capsys, "compare", trace, "-p", "fcfs,sjf")
    assert code == 0, err
    notes = [line for line in out.splitlines() if FALLBACK in line]
    assert len(notes) == 1, out  # one note for both rows, not one per row
    assert notes[0].startswith("note (fcfs+easy, sjf+easy): "), notes[0]
    assert "perfect estimates for these jobs" in out


def test_fallback_note_is_in_every_json_row(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = _json(capsys, _trace(tmp_path, NO_REQUESTS_SWF), "-p", "fcfs,sjf")
    assert len(data["rows"]) == 2
    for row in data["rows"]:
        assert any(note.startswith(FALLBACK) for note in row["notes"]), row["notes"]


def test_json_rows_always_have_notes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = _json(capsys, _trace(tmp_path, WITH_REQUESTS_SWF), "-p", "fcfs")
    assert data["rows"][0]["notes"] == []


def test_the_note_matches_what_simulate_prints(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = _trace(tmp_path, NO_REQUESTS_SWF)
    code, out, err = run_cli(capsys, "simulate", trace, "-p", "sjf", "--json")
    assert code == 0, err
    expected = [n for n in json.loads(out)["notes"] if n.startswith(FALLBACK)]
    assert expected
    data = _json(capsys, trace, "-p", "sjf")
    assert [n for n in data["rows"][0]["notes"] if n.startswith(FALLBACK)] == expected


# ------------------------------------------- item 4: name:key=value, -P/-B/-E


@pytest.mark.parametrize(
    ("spelled", "with_flags"),
    [
        (["-p", "fcfs+easy:order=sjbf"], ["-p", "fcfs+easy", "-B", "order=sjbf"]),
        (["-p", "psp:window=5+easy"], ["-p", "psp+easy", "-P", "window=5"]),
        (["-p", "psp:window=5"], ["-p", "psp", "--policy-option", "window=5"]),
    ],
)
def test_component_spec_spelling_equals_the_option_flags(
    capsys: pytest.CaptureFixture[str], spelled: list[str], with_flags: list[str]
) -> None:
    a = _json(capsys, GENERATED, *spelled)
    b = _json(capsys, GENERATED, *with_flags)
    assert a["rows"][0]["metrics"] == b["rows"][0]["metrics"]


def test_spec_options_change_the_schedule(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(capsys, GENERATED, "-p", "psp:window=1,psp")
    assert [(r["policy"], r["backfill"]) for r in data["rows"]] == [
        ("psp:window=1", "easy"),
        ("psp", "easy"),
    ]
    waits = [r["metrics"]["rows"] for r in data["rows"]]
    assert waits[0] != waits[1]


def test_commas_inside_a_spec_belong_to_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(
        capsys, GENERATED, "-p", "psp:window=5,new_user_class=1+easy:order=sjbf,kernel=python,sjf"
    )
    assert [(r["policy"], r["backfill"]) for r in data["rows"]] == [
        ("psp:window=5,new_user_class=1", "easy:order=sjbf,kernel=python"),
        ("sjf", "easy"),
    ]


def test_estimator_option_flag(capsys: pytest.CaptureFixture[str]) -> None:
    a = _json(capsys, GENERATED, "-p", "fcfs", "-e", "easy++", "-E", "correction=requested")
    b = _json(capsys, GENERATED, "-p", "fcfs", "-e", "easy++:correction=requested")
    assert a["rows"][0]["metrics"] == b["rows"][0]["metrics"]
    assert a["settings"]["estimator_options"] == {"correction": "requested"}


def test_shared_options_are_recorded_in_title_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "compare", GENERATED, "-p", "fcfs", "-B", "order=sjbf")
    assert code == 0, err
    assert "backfill options order=sjbf" in out
    data = _json(capsys, GENERATED, "-p", "fcfs", "-B", "order=sjbf")
    assert data["settings"]["backfill_options"] == {"order": "sjbf"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-p", "fcfs,psp", "-P", "window=5"], "policy fcfs: unknown option 'window'"),
        (["-p", "fcfs", "-B", "bogus=1"], "backfill easy: unknown option 'bogus'"),
        (["-p", "fcfs+easy:bogus=1"], "backfill easy: unknown option 'bogus'"),
        (["-p", "fcfs", "-E", "bogus=1"], "estimator requested: unknown option 'bogus'"),
        (["-p", "fcfs", "--allocation-option", "x=1"], "an allocation policy needs a platform"),
        (["-p", "fcfs+easy:order"], "expected key=value"),
        (["-p", "fcfs", "-P", "window"], "-P/--policy-option 'window': expected key=value"),
    ],
)
def test_bad_component_options_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = run_cli(capsys, "compare", GENERATED, *args)
    assert message in _one_line_error(code, err)
    assert out == ""


def test_allocation_option_reaches_the_allocation_policy(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    platform = _trace(tmp_path, PLATFORM, "cluster.toml")
    code, _out, err = run_cli(
        capsys,
        "compare",
        _trace(tmp_path, WITH_REQUESTS_SWF),
        "-p",
        "fcfs",
        "--platform",
        platform,
        "--allocation-option",
        "bogus=1",
    )
    assert "allocation first-fit: unknown option 'bogus'" in _one_line_error(code, err)


# ------------------------------------------------- item 6: --ci-only options


@pytest.mark.parametrize(
    "args",
    [
        ["--ci-seed", "3"],
        ["--ci-seed", "0"],  # the default value, given explicitly: still refused
        ["--level", "0.9"],
        ["--resamples", "200"],
        ["--block", "1d"],
        ["--rank-window", "1d"],
        ["--stat", "mean"],
    ],
)
def test_ci_options_without_ci_are_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str]
) -> None:
    code, out, err = run_cli(
        capsys, "compare", _trace(tmp_path, WITH_REQUESTS_SWF), "-p", "fcfs", *args
    )
    line = _one_line_error(code, err)
    assert f"{args[0]} needs --ci" in line
    assert out == ""


# ------------------------------------------------------ item 18: --policy


def test_policy_is_an_alias_of_policies(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    trace = _trace(tmp_path, WITH_REQUESTS_SWF)
    a = _json(capsys, trace, "--policy", "fcfs,sjf+none")
    b = _json(capsys, trace, "--policies", "fcfs,sjf+none")
    assert a == b
    assert [(r["policy"], r["backfill"]) for r in a["rows"]] == [("fcfs", "easy"), ("sjf", "none")]


# ------------------------------------------------- item 19: table shape


def _header(out: str) -> list[str]:
    line = next(line for line in out.splitlines() if "policy" in line and "backfill" in line)
    return [cell.strip() for cell in re.split(r"[┃│|]", line) if cell.strip()]


def test_excluded_column_is_shown_when_nothing_is_excluded(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run_cli(
        capsys, "compare", _trace(tmp_path, WITH_REQUESTS_SWF), "-p", "fcfs,sjf"
    )
    assert code == 0, err
    header = _header(out)
    assert header[:4] == ["policy", "backfill", "jobs", "excluded"], header
    rows = [line for line in out.splitlines() if line.startswith("│")]
    assert len(rows) == 2
    for row in rows:
        cells = [c.strip() for c in row.strip("│").split("│")]
        assert cells[2:4] == ["6", "0"], cells


def test_table_shape_does_not_depend_on_exclusions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # job 7 asks for 8 processors on a 4-processor machine: excluded
    bigger = WITH_REQUESTS_SWF + "7 6 -1 20 8 -1 -1 8 400 -1 1 3 1 -1 1 -1 -1 -1\n"
    code, out_none, err = run_cli(
        capsys, "compare", _trace(tmp_path, WITH_REQUESTS_SWF), "-p", "fcfs"
    )
    assert code == 0, err
    code, out_some, err = run_cli(
        capsys, "compare", _trace(tmp_path, bigger, "big.swf"), "-p", "fcfs"
    )
    assert code == 0, err
    assert _header(out_none) == _header(out_some)
