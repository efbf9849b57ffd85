"""``convert --rejects FILE`` says what FILE holds: a reader that counts skipped
records (``meta["skipped"]``) but lists none or only some of them
(``meta["rejects"]``) does not get "written to FILE" for records FILE lacks."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest
from schedlab import Job, OptionSpec, ReaderSpec, Workload, hookimpl
from schedlab.testing import plugin_registry, run_cli, using_registry


def _reader(meta: dict[str, Any]) -> types.ModuleType:
    """A plugin reader ``counted`` (suffix ``.counted``, lenient option) whose
    workload carries ``meta`` (what it says it skipped)."""
    module = types.ModuleType("counted_plugin")

    def read(source, lenient: bool = False):
        workload = Workload.from_jobs(
            [Job(job_number=1, submit_time=0, run_time=5, allocated_processors=1)]
        )
        workload.meta.update(meta)
        return workload

    @hookimpl
    def schedlab_readers():
        return [
            ReaderSpec(
                name="counted",
                read=read,
                suffixes=(".counted",),
                options=(OptionSpec("lenient", bool, False, "skip bad lines"),),
            )
        ]

    module.schedlab_readers = schedlab_readers
    return module


def _convert(capsys, tmp_path: Path, meta: dict[str, Any]) -> tuple[int, str, Path]:
    source = tmp_path / "in.counted"
    source.write_text("anything\n")
    rejects = tmp_path / "rejects.txt"
    with using_registry(plugin_registry(_reader(meta))):
        code, _, err = run_cli(
            capsys, "convert", str(source), str(tmp_path / "o.swf"), "--rejects", str(rejects)
        )
    return code, err, rejects


@pytest.mark.parametrize("meta", [{"skipped": 2}, {"skipped": 2, "rejects": []}])
def test_counted_but_not_listed(capsys, tmp_path: Path, meta) -> None:
    code, err, rejects = _convert(capsys, tmp_path, meta)
    assert code == 0
    assert rejects.read_text() == ""
    assert err.splitlines()[0] == (
        f"schedlab: skipped 2 bad record(s); reader 'counted' does not list them, "
        f"so {rejects} is empty"
    )
    assert "written to" not in err


def test_some_listed(capsys, tmp_path: Path) -> None:
    code, err, rejects = _convert(capsys, tmp_path, {"skipped": 3, "rejects": [(7, "bad 7")]})
    assert code == 0
    assert rejects.read_text() == "bad 7\n"
    assert err.splitlines()[0] == (
        f"schedlab: skipped 3 bad record(s); reader 'counted' lists only 1 of them, "
        f"written to {rejects}"
    )


def test_all_listed(capsys, tmp_path: Path) -> None:
    meta = {"skipped": 2, "rejects": [(3, "bad 3"), (5, "bad 5")]}
    code, err, rejects = _convert(capsys, tmp_path, meta)
    assert code == 0
    assert rejects.read_text() == "bad 3\nbad 5\n"
    assert err.splitlines()[0] == f"schedlab: skipped 2 bad record(s) (written to {rejects})"


def test_skipped_as_a_mapping_with_a_total(capsys, tmp_path: Path) -> None:
    # meta["skipped"] may be {"total": n, ...} (schedlab.validation.skipped_count)
    code, err, rejects = _convert(capsys, tmp_path, {"skipped": {"total": 2, "by_reason": {}}})
    assert code == 0, err
    assert err.splitlines()[0] == (
        f"schedlab: skipped 2 bad record(s); reader 'counted' does not list them, "
        f"so {rejects} is empty"
    )
