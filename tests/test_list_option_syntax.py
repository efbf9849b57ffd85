"""List-valued options are written the same way everywhere (CLI audit finding 10):
items separated by ``/`` (which works inside a ``name:key=value,...`` spec, whose
commas separate options), and also by ``,``, ``;`` or blanks where the value stands
alone."""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from schedlab.accuracy import parse_edges as accuracy_edges
from schedlab.errors import UsageError
from schedlab.plugin_types import list_items
from schedlab.policies.multifactor import parse_queue_priorities
from schedlab.policies.psp import parse_edges as psp_edges
from schedlab.testing import run_cli

TRACE = """; MaxProcs: 4
1 0 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 1 -1 -1 -1
2 1 -1 10 2 -1 -1 2 40 -1 1 2 1 -1 2 -1 -1 -1
3 2 -1 10 4 -1 -1 4 15 -1 1 1 1 -1 1 -1 -1 -1
"""


@pytest.mark.parametrize("text", ["0.2/0.4", "0.2,0.4", "0.2; 0.4", "0.2 0.4", " 0.2 / 0.4 "])
def test_every_separator_gives_the_same_list(text: str) -> None:
    assert list_items(text) == ["0.2", "0.4"]
    assert psp_edges(text) == (0.2, 0.4)
    assert accuracy_edges(text) == (0.2, 0.4)


def test_queue_priorities_take_slashes_and_blanks_around_colons() -> None:
    want = {1: 10.0, 2: 5.0}
    assert parse_queue_priorities("1:10/2:5") == want
    assert parse_queue_priorities("1:10,2:5") == want
    assert parse_queue_priorities("1 : 10 / 2: 5") == want


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "t.swf"
    path.write_text(TRACE)
    return path


@pytest.fixture
def run(capsys):  # type: ignore[no-untyped-def]
    def go(*args: object) -> tuple[int, str]:
        code, out, err = run_cli(capsys, *map(str, args))
        return code, out + err

    return go


def test_lists_inside_component_specs_on_the_command_line(run, trace: Path) -> None:
    for spec in ("psp:edges=0.2/0.4/0.6/0.8", "multifactor:queue_priorities=1:10/2:5"):
        code, out = run("simulate", trace, "-p", spec, "--no-timings")
        assert code == 0, out
    code, out = run("compare", trace, "-p", "psp:edges=0.2/0.4+easy,fcfs+easy")
    assert code == 0, out
    # the same lists as -P and -M values
    code, out = run("simulate", trace, "-p", "psp", "-P", "edges=0.2,0.4", "--no-timings")
    assert code == 0, out
    code, out = run("metrics", trace, "-M", "edges=0.2/0.4", "--by", "accuracy-class")
    assert code == 0, out


def test_a_comma_inside_a_spec_list_says_how_to_write_it(run, trace: Path) -> None:
    code, out = run("simulate", trace, "-p", "psp:edges=0.2,0.4", "--no-timings")
    assert code == 2 and "written with '/'" in out and "edges=a/b" in out, out
    code, out = run("compare", trace, "-p", "psp:edges=0.2,0.4")
    assert code == 2 and "written with '/'" in out, out
    with pytest.raises(UsageError, match="written with '/'"):
        schedlab.simulate(schedlab.read(trace), policy="psp:edges=0.2,0.4")
