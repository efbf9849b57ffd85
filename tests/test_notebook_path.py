"""The notebook path: what a Jupyter cell shows of schedlab's objects.

A notebook stores every output of a cell: the HTML of ``_repr_html_`` and, beside it,
the ``text/plain`` of ``repr()``. These tests keep both small and the same on every
run (no object addresses, no timings), and keep ``print(report)`` to plain text in a
notebook. They need neither Jupyter nor IPython: the reprs are called directly, and
rich's notebook detection is faked.
"""

from __future__ import annotations

import builtins
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import schedlab
from schedlab.experiment import SweepConfig, run_sweep

HPC2N = "HPC2N-2002_excerpt-3170jobs_alea.swf"
KTH = "KTH-SP2-1996-2.1-cln.swf.gz"
ADDRESS = re.compile(r"0x[0-9a-f]{6,}")


class _Balanced(HTMLParser):
    """Records tags that are not closed in order."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(tag)
        else:
            self.stack.pop()


def _well_formed(text: str) -> bool:
    parser = _Balanced()
    parser.feed(text)
    parser.close()
    return not parser.errors and not parser.stack


@pytest.fixture(scope="module")
def hpc2n_result(swf_dir: Path) -> schedlab.Result:
    return schedlab.simulate(schedlab.read(swf_dir / HPC2N), policy="fcfs", backfill="easy")


@pytest.fixture(scope="module")
def kth_result(swf_dir: Path) -> schedlab.Result:
    return schedlab.simulate(schedlab.read(swf_dir / KTH), policy="fcfs", backfill="easy")


def test_grouped_report_repr_is_short_and_names_the_report(kth_result: schedlab.Result) -> None:
    # KTH-SP2 by user: 214 groups. The attrs repr dumped every row (292 kB of
    # text/plain stored in the notebook next to a 16 kB HTML table).
    report = schedlab.compute_metrics(kth_result, by="user")
    text = repr(report)
    assert len(text) < 1000, len(text)
    assert text.startswith("<MetricsReport of 28,475 jobs by user: ")
    assert f"{len(report.rows) - 1:,} groups" in text
    html = report._repr_html_()
    assert _well_formed(html) and len(html.encode()) < 40_000


def test_report_repr_is_short_without_grouping(hpc2n_result: schedlab.Result) -> None:
    text = repr(schedlab.compute_metrics(hpc2n_result))
    assert len(text) < 1000
    assert "MetricInfo" not in text and "rows=" not in text
    assert "3,145 jobs" in text and "bounded-slowdown" in text


def test_print_report_in_a_notebook_is_plain_text_only(
    hpc2n_result: schedlab.Result, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In Jupyter, rich's Console displayed the tables as rich cell outputs while
    # ``render()`` built the text: ``print(report)`` showed every table twice.
    import rich.jupyter

    class ZMQInteractiveShell:  # the class name rich looks for
        pass

    shown: list[object] = []
    monkeypatch.setattr(builtins, "get_ipython", ZMQInteractiveShell, raising=False)
    monkeypatch.setattr(rich.jupyter, "display", lambda *a, **k: shown.append(a))
    report = schedlab.compute_metrics(hpc2n_result, by="size")
    text = str(report)
    assert shown == []
    assert "Metrics by size" in text
    assert text == report.render()


def test_decision_point_and_state_reprs_are_stable_and_short(swf_dir: Path) -> None:
    # The state showed as ``<... SchedulerState object at 0x7f...>``: an address
    # that changes on every run, so a re-run notebook never had the same output.
    workload = schedlab.read(swf_dir / HPC2N)
    texts = []
    for _ in range(2):
        sim = schedlab.Simulation(workload, backfill="easy")
        point = sim.pending_decision()
        for _ in range(400):
            sim.decide()  # start nothing: the queue grows
            point = sim.pending_decision()
        assert point is not None and len(point.queue) > 100
        texts.append((repr(point), repr(point.state)))
        sim.close()
    assert texts[0] == texts[1]
    point_text, state_text = texts[0]
    assert not ADDRESS.search(point_text) and not ADDRESS.search(state_text)
    assert len(point_text) < 300 and ", ...]" in point_text
    assert point_text.startswith("<DecisionPoint now=") and "waiting" in point_text
    assert state_text.startswith("<SchedulerState now=") and "processors free" in state_text


def test_sweep_outcome_repr_is_short_and_the_same_on_every_run(tmp_path: Path) -> None:
    # The attrs repr held every record (70 kB for 4 cells) and the timings.
    cells = SweepConfig.from_mapping(
        {"workloads": ["psp-fing:scenario=CF"], "policies": ["fcfs", "psp"], "seeds": "1"}
    ).cells()
    first = run_sweep(cells, tmp_path / "a", workers=1, progress=False)
    second = run_sweep(cells, tmp_path / "b", workers=1, progress=False)
    assert repr(first) == repr(second)
    assert len(repr(first)) < 200
    assert "2 cells (2 computed, 0 reused)" in repr(first)


class _Interrupted:
    """A policy interrupted (as by Ctrl-C) on its 100th key."""

    def __init__(self) -> None:
        self.calls = 0

    def bind(self, table: object) -> None:
        pass

    def key(self, job: int, now: float) -> int:
        self.calls += 1
        if self.calls == 100:
            raise KeyboardInterrupt
        return job


@pytest.mark.parametrize("stepping", ["greenlet", "thread"])
def test_an_interrupted_simulation_says_so_instead_of_interrupting_again(
    swf_dir: Path, stepping: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A kernel interrupt that lands in the engine ends it. Every later call raised
    # the same KeyboardInterrupt again (an interrupt out of nowhere in a later cell).
    if stepping == "greenlet":
        pytest.importorskip("greenlet")
        monkeypatch.delenv("SCHEDLAB_STEPPING", raising=False)
    else:
        monkeypatch.setenv("SCHEDLAB_STEPPING", "thread")
    sim = schedlab.Simulation(schedlab.read(swf_dir / HPC2N), policy=_Interrupted())
    with pytest.raises(KeyboardInterrupt):
        while (point := sim.pending_decision()) is not None:
            sim.decide(order=point.queue)
    for call in (sim.pending_decision, sim.result):
        try:
            call()
        except KeyboardInterrupt:
            pytest.fail("the old interrupt was raised again")
        except schedlab.UsageError as exc:
            assert "interrupted" in str(exc)
        else:
            pytest.fail("an interrupted simulation went on")
    sim.close()
    # and a new one runs
    fresh = schedlab.Simulation(schedlab.read(swf_dir / HPC2N), backfill="easy")
    assert len(fresh.result()) == 3145
