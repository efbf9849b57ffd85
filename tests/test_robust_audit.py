"""Fixes of the robustness audit ("robust"): a SIGTERM or SIGINT whose exception
something swallowed is still acted on (exit 130, one line, no output written); an
interrupted rerun of a sweep or experiment leaves no table of an earlier run;
``convert IN OUT`` with an OUT naming no writer fails before reading IN."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import pytest
import schedlab.cli as schedlab_cli
import schedlab.io
from schedlab.io import staged_output
from schedlab.testing import run_cli as run

# ----------------------------------------------------------- 1. a swallowed signal


def _swallowed(signum: int) -> None:
    """Send ``signum`` to this process inside a block that swallows whatever the
    handler raises, as C code of the interpreter did during start-up (the import
    machinery compiling a module): the exception never reaches the command line."""
    try:
        os.kill(os.getpid(), signum)
        for _ in range(100):  # the handler runs between these bytecodes
            pass
    except BaseException:
        pass


def _command(body: Callable[[str], None]) -> click.Command:
    @click.command(name="fake")
    @click.argument("out")
    def fake(out: str) -> None:
        body(out)

    return fake


@pytest.fixture
def fake_command(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[click.Command], None]]:
    """Make ``schedlab fake`` run the command given."""

    monkeypatch.setattr(schedlab.io, "_INTERRUPTED", [])  # earlier tests' outputs

    def install(command: click.Command) -> None:
        original = schedlab_cli.cli.get_command

        def get_command(ctx: click.Context, name: str) -> click.Command | None:
            return command if name == "fake" else original(ctx, name)

        monkeypatch.setattr(schedlab_cli.cli, "get_command", get_command)

    yield install


def _write(out: str) -> None:
    with staged_output(out) as staged:
        staged.write_text("new\n")
    print("written")


@pytest.mark.parametrize(
    ("signum", "how"), [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "Ctrl-C")]
)
def test_a_swallowed_signal_still_stops_the_command_before_it_writes(
    capsys: Any, tmp_path: Path, fake_command: Any, signum: int, how: str
) -> None:
    target = tmp_path / "o.txt"
    target.write_text("old\n")

    def body(out: str) -> None:
        _swallowed(signum)
        _write(out)

    fake_command(_command(body))
    code, out, err = run(capsys, "fake", str(target))
    assert code == 130, err
    assert err.strip().splitlines() == [
        f"schedlab: error: schedlab fake interrupted ({how}); not written: {target} "
        "(any previous version is unchanged)"
    ]
    assert out == ""
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.txt"]  # no part left


@pytest.mark.parametrize(
    ("signum", "how"), [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "Ctrl-C")]
)
def test_a_swallowed_signal_is_acted_on_when_the_command_ends(
    capsys: Any, tmp_path: Path, fake_command: Any, signum: int, how: str
) -> None:
    fake_command(_command(lambda out: _swallowed(signum)))
    code, _, err = run(capsys, "fake", "x")
    assert code == 130, err
    assert err.strip().splitlines() == [f"schedlab: error: schedlab fake interrupted ({how})"]


def test_an_error_after_a_swallowed_signal_is_reported_as_the_interruption(
    capsys: Any, fake_command: Any
) -> None:
    def body(out: str) -> None:  # a module left half imported fails later
        _swallowed(signal.SIGTERM)
        raise AttributeError("partially initialized module 'x' has no attribute 'y'")

    fake_command(_command(body))
    code, _, err = run(capsys, "fake", "x")
    assert code == 130, err
    assert err.strip().splitlines() == ["schedlab: error: schedlab fake interrupted (SIGTERM)"]


def test_the_next_command_of_the_process_does_not_inherit_the_signal(
    capsys: Any, tmp_path: Path, fake_command: Any
) -> None:
    fake_command(_command(lambda out: _swallowed(signal.SIGTERM)))
    assert run(capsys, "fake", "x")[0] == 130
    fake_command(_command(_write))
    code, out, err = run(capsys, "fake", str(tmp_path / "o.txt"))
    assert (code, out, err) == (0, "written\n", "")
    assert (tmp_path / "o.txt").read_text() == "new\n"


def test_the_handlers_are_restored_and_an_ignored_sigint_stays_ignored(
    capsys: Any, fake_command: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Any] = []
    fake_command(_command(lambda out: seen.append(signal.getsignal(signal.SIGINT))))
    term = signal.getsignal(signal.SIGTERM)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # e.g. a background job
    try:
        assert run(capsys, "fake", "x")[0] == 0
        assert seen == [signal.SIG_IGN]
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
    assert run(capsys, "fake", "x")[0] == 0
    assert seen[1] is not signal.default_int_handler  # schedlab's, while it runs
    assert signal.getsignal(signal.SIGINT) is previous
    assert signal.getsignal(signal.SIGTERM) is term


# ------------------------------------------- 2. an interrupted rerun leaves no table


def _old_tables(out: Path, *names: str) -> None:
    (out / "cells").mkdir(parents=True, exist_ok=True)
    for name in names:
        (out / name).write_text("an earlier run\n")


def _interrupt(*args: Any, **kwargs: Any) -> Any:
    raise KeyboardInterrupt


@pytest.mark.parametrize("step", ["_input_digest", "_stored_keys", "check_cells"])
def test_a_sweep_interrupted_before_its_cells_run_leaves_no_earlier_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    """Hashing the traces (the cells' keys), reading the stored cells and reading
    every workload (check_cells) can each take long: the tables go first."""
    from schedlab.experiment import sweep

    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n")
    out = tmp_path / "out"
    _old_tables(out, "results.csv", "results.json", "significance.json")
    monkeypatch.setattr(sweep, step, _interrupt)
    cells = [sweep.Cell(str(trace)), sweep.Cell(str(trace), policy="sjf")]
    with pytest.raises(KeyboardInterrupt):
        sweep.run_sweep(cells, out, workers=1, progress=False)
    assert sorted(p.name for p in out.iterdir()) == ["cells"]


def test_a_psp_rerun_interrupted_before_its_sweep_leaves_no_earlier_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from schedlab.policies.psp_experiment import experiment

    _old_tables(tmp_path, "results.csv", "results.json", "table3.csv")
    monkeypatch.setattr(experiment, "psp_cells", _interrupt)
    with pytest.raises(KeyboardInterrupt):
        experiment.run_psp_experiment(tmp_path, workloads=1, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cells"]


# --------------------------------- 3. convert: an OUT naming no writer, before reading


@pytest.mark.parametrize("target", ["o.unknownext", "o.batsim"])
def test_convert_refuses_an_out_naming_no_writer_before_reading_in(
    capsys: Any, tmp_path: Path, target: str
) -> None:
    bad = tmp_path / "bad.swf"
    bad.write_text("garbage line\n")  # reading it would fail first
    code, out, err = run(capsys, "convert", str(bad), str(tmp_path / target))
    assert code == 2, err
    assert err.startswith(
        f"schedlab: error: {tmp_path / target}: cannot tell the output format from the name; "
        "choose one with --to (writers: "
    ), err
    assert len(err.strip().splitlines()) == 1
    assert out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.swf"]


def test_convert_refuses_a_bad_write_option_before_reading_in(capsys: Any, tmp_path: Path) -> None:
    bad = tmp_path / "bad.swf"
    bad.write_text("garbage line\n")
    code, _, err = run(capsys, "convert", str(bad), str(tmp_path / "o.swf"), "-W", "novalue")
    assert code == 2, err
    assert "-W/--write-option" in err and "bad.swf" not in err, err


def test_no_sweep_table_is_written_after_a_swallowed_signal(
    capsys: Any, tmp_path: Path, fake_command: Any
) -> None:
    from schedlab.experiment.sweep import write_table

    def body(out: str) -> None:
        _swallowed(signal.SIGTERM)
        write_table([{"cell": "a", "value": 1}], out)

    fake_command(_command(body))
    code, _, err = run(capsys, "fake", str(tmp_path / "results.csv"))
    assert code == 130, err
    assert list(tmp_path.iterdir()) == []


def test_after_an_interrupted_main_the_api_writes_as_usual(
    capsys: Any, tmp_path: Path, fake_command: Any
) -> None:
    fake_command(_command(lambda out: _swallowed(signal.SIGTERM)))
    assert run(capsys, "fake", "x")[0] == 130
    _write(str(tmp_path / "o.txt"))  # no command line running: no signal pending
    assert (tmp_path / "o.txt").read_text() == "new\n"
