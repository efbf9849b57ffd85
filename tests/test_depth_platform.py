"""``depth`` on a platform (strategies audit 3): depth=0, 1 and all run there as
none, easy and conservative; a larger depth is refused naming the option and the
depths that run. ``depth=all`` is written back as given (the Note, ``--json``), so
the run can be repeated from them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import schedlab
from schedlab.cli import main
from schedlab.errors import UsageError
from schedlab.platform import platform_from_dict

PLATFORM = {
    "node_groups": {"n": {"count": 8, "cores": 4}},
    "partitions": {"p": {"nodes": ["n"]}},
}


def test_depth_two_is_refused_on_a_platform_naming_the_depths_that_run() -> None:
    with pytest.raises(UsageError) as caught:
        schedlab.simulate(
            schedlab.read("lublin:jobs=30,procs=32,seed=1"),
            platform=platform_from_dict(PLATFORM),
            backfill="depth",
            backfill_options={"depth": 2},
            progress=False,
        )
    assert str(caught.value) == (
        "backfill depth: option depth=2: only depth=0 (none), 1 (easy) or all "
        "(conservative) run on a platform (a multi-resource machine)"
    )


@pytest.mark.parametrize(("depth", "same"), [("0", "none"), ("1", "easy"), ("all", "conservative")])
def test_depths_that_run_on_a_platform_are_their_strategies(depth: str, same: str) -> None:
    kw = dict(platform=platform_from_dict(PLATFORM), progress=False)
    spec = schedlab.read("lublin:jobs=200,procs=32,seed=2")
    a = schedlab.simulate(spec, backfill="depth", backfill_options={"depth": depth}, **kw)
    b = schedlab.simulate(spec, backfill=same, **kw)
    assert a.start.tolist() == b.start.tolist()


def test_depth_all_is_written_back_as_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s.swf"
    args = ["simulate", "lublin:jobs=40,procs=32,seed=3", "-b", "depth:depth=all"]
    assert main([*args, "-o", str(out)]) == 0
    note = [line for line in out.read_text().splitlines() if "Simulated by" in line]
    assert note and "backfill=depth:depth=all " in note[0], note
    capsys.readouterr()
    assert main([*args, "--json", "--no-timings"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["simulation"]["options"]["backfill"] == {"depth": "all"}
    # repeated from the note: the same schedule
    again = tmp_path / "again.swf"
    spec = note[0].split("backfill=")[1].split()[0]
    assert main(["simulate", "lublin:jobs=40,procs=32,seed=3", "-b", spec, "-o", str(again)]) == 0
    body = [line for line in out.read_text().splitlines() if not line.startswith(";")]
    assert body == [line for line in again.read_text().splitlines() if not line.startswith(";")]


@pytest.mark.parametrize("text", ["1_0", "\u0661", "\uff13"])
def test_depth_takes_ascii_digits_only(text: str) -> None:
    from schedlab.policies.backfill.depth import parse_depth

    with pytest.raises(ValueError, match="ASCII digits, no underscores"):
        parse_depth(text)
    assert parse_depth("10") == 10 and parse_depth(" All ") == "all"
