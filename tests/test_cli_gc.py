"""``schedlab simulate`` pauses Python's cyclic garbage collector for its start-up
and its printing (docs/simulation.md, "Whole process, second round"): the
collector runs while the reader, the simulation and the writer do, and
``schedlab.cli.main`` leaves it as it found it, whatever the command and outcome."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from schedlab import cli
from schedlab.cli import collecting, main

SWF = """\
; MaxProcs: 10
1 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1
2 0 10 5 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1
3 10 90 50 8 -1 -1 8 50 -1 1 2 1 -1 2 -1 -1 -1
"""


@pytest.fixture()
def swf(tmp_path: Path) -> str:
    path = tmp_path / "three.swf"
    path.write_text(SWF)
    return str(path)


@pytest.fixture()
def restore_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    if enabled:
        gc.enable()
    else:
        gc.disable()


def run(*args: str) -> int:
    try:
        return int(main(list(args)) or 0)
    except SystemExit as exc:
        return int(exc.code or 0)


@pytest.mark.usefixtures("restore_gc")
@pytest.mark.parametrize(
    "args",
    [
        ("simulate", "{swf}", "-o", "{out}"),
        ("simulate", "{swf}", "-P", "nope=1"),  # an error inside the command
        ("simulate", "{tmp}/missing.swf"),  # an error before the simulation
        ("info", "{swf}"),
        ("--help",),
    ],
)
def test_main_leaves_the_collector_as_it_found_it(args, swf, tmp_path, capsys):
    filled = [a.format(swf=swf, out=tmp_path / "out.swf", tmp=tmp_path) for a in args]
    for enabled in (True, False):
        if enabled:
            gc.enable()
        else:
            gc.disable()
        frozen = gc.get_freeze_count()
        run(*filled)
        assert gc.isenabled() is enabled
        assert gc.get_freeze_count() == frozen
        assert not cli._gc_paused and not cli._gc_frozen
    capsys.readouterr()


@pytest.mark.usefixtures("restore_gc")
def test_simulate_collects_while_it_simulates(swf, monkeypatch, capsys):
    """The simulation runs with the collector on; the command's own start-up and
    printing with it paused."""
    import schedlab.sim.api

    seen: dict[str, bool] = {}
    real = schedlab.sim.api.simulate

    def simulate(*args, **kwargs):
        seen["simulate"] = gc.isenabled()
        return real(*args, **kwargs)

    monkeypatch.setattr(schedlab.sim.api, "simulate", simulate)
    gc.enable()
    assert run("simulate", swf) == 0
    assert seen == {"simulate": True}
    assert "fcfs + easy" in capsys.readouterr().out
    assert gc.isenabled()


@pytest.mark.usefixtures("restore_gc")
def test_collecting_outside_main_changes_nothing():
    frozen = gc.get_freeze_count()
    for enabled in (True, False):
        if enabled:
            gc.enable()
        else:
            gc.disable()
        with collecting():
            assert gc.isenabled() is enabled
        assert gc.isenabled() is enabled
        assert gc.get_freeze_count() == frozen
