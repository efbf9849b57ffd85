"""Writing accounting files: lossless read-then-write of every real file, conversion
between the two layouts, to SWF and back, synthesis from SWF-only jobs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab.model import Job, Workload
from schedlab.validation import check_workload, failing

#: The real files and their layout (test_sge_read.py checks the detection).
FILES = {
    "apel_test_sge_accounting.txt": ("colon",),
    "apel_test_uge82_ms_accounting.txt": ("colon",),
    "gbsc_utils_ogetools_test_data.accounting": ("colon",),
    "go-clusterscheduler_ocs900_accounting.jsonl": ("jsonl",),
    "ocs-9.0.0_release-notes_accounting.jsonl": ("jsonl",),
    "pretty-accounting_sge6x_accounting.txt": ("colon",),
    "pretty-accounting_uge8x_ms_accounting.txt": ("colon",),
    "xdmod_sge_accounting-logs.log": ("colon",),
    "xdmod_uge_accounting-logs.log": ("colon",),
}

pytestmark = pytest.mark.realdata


@pytest.fixture(scope="module")
def sge_dir(shared_data: Path) -> Path:
    return shared_data / "sge"


def _target(tmp_path: Path, layout: str) -> tuple[Path, str]:
    if layout == "jsonl":
        return tmp_path / "out.accounting.jsonl", "sge-jsonl"
    return tmp_path / "out.accounting", "sge"


@pytest.mark.parametrize("name", sorted(FILES))
def test_same_layout_round_trip_is_byte_identical(sge_dir: Path, tmp_path: Path, name: str) -> None:
    workload = schedlab.read(sge_dir / name)
    target, writer = _target(tmp_path, FILES[name][0])
    schedlab.write(workload, target)  # the writer is chosen from the suffix
    assert target.read_bytes() == (sge_dir / name).read_bytes()
    # and through Job objects too
    again = tmp_path / "again"
    schedlab.write(Workload.from_jobs(workload.jobs, workload.header), again, format=writer)
    assert again.read_bytes() == (sge_dir / name).read_bytes()


def test_jsonl_keys_order_and_values_kept_when_rewritten(sge_dir: Path, tmp_path: Path) -> None:
    """Forcing the 9.0.6+ container name changes only that name."""
    source = sge_dir / "ocs-9.0.0_release-notes_accounting.jsonl"
    out = tmp_path / "new.accounting.jsonl"
    schedlab.write(schedlab.read(source), out, usage_key="eusage")
    before = json.loads(source.read_text())
    after = json.loads(out.read_text())
    assert list(after) == list(before)
    assert list(after["usage"]) == ["rusage", "eusage"]
    assert after["usage"]["eusage"] == before["usage"]["usage"]
    assert {k: v for k, v in after.items() if k != "usage"} == {
        k: v for k, v in before.items() if k != "usage"
    }
    back = tmp_path / "old.accounting.jsonl"
    schedlab.write(schedlab.read(out), back, usage_key="usage")
    assert back.read_text() == source.read_text()


def _swf_close(a: Workload, b: Workload, atol: float, unknown_wait_as_zero: bool = False) -> None:
    ma, mb = a.to_arrays().to_matrix(), b.to_arrays().to_matrix()
    if unknown_wait_as_zero:  # documented: an unknown wait with a known run is written as 0
        ma[(ma[:, 2] == -1) & (ma[:, 3] >= 0), 2] = 0
    assert ma.shape == mb.shape
    assert np.allclose(ma, mb, atol=atol, rtol=1e-9), np.argwhere(~np.isclose(ma, mb, atol=atol))


@pytest.mark.parametrize("name", sorted(FILES))
def test_cross_layout_conversion(sge_dir: Path, tmp_path: Path, name: str) -> None:
    source = schedlab.read(sge_dir / name)
    other = "colon" if FILES[name][0] == "jsonl" else "jsonl"
    target, _ = _target(tmp_path, other)
    schedlab.write(source, target)
    converted = schedlab.read(target)
    assert converted.meta["layout"] == other
    # colon keeps whole seconds, so times may move by less than one second
    _swf_close(source, converted, atol=1.0)
    assert converted.header.names("User") == source.header.names("User")
    assert converted.header.names("Queue") == source.header.names("Queue")


@pytest.mark.parametrize("name", sorted(FILES))
def test_to_swf_is_strictly_valid_and_names_survive_back(
    sge_dir: Path, tmp_path: Path, name: str
) -> None:
    source = schedlab.read(sge_dir / name)
    swf = tmp_path / "out.swf"
    schedlab.write(source, swf)
    text = swf.read_text()
    assert f"from Grid Engine accounting file {name}" in text
    assert "; UnixStartTime: " in text
    as_swf = schedlab.read(swf)
    assert failing(check_workload(as_swf), strict=True) == []
    _swf_close(source, as_swf, atol=0)
    for layout in ("colon", "jsonl"):
        back, _ = _target(tmp_path, layout)
        schedlab.write(as_swf, back)
        again = schedlab.read(back)
        for label in ("Queue", "User", "Group"):
            assert again.header.names(label) == source.header.names(label), label
        _swf_close(source, again, 1.0 if layout == "colon" else 1e-6, unknown_wait_as_zero=True)


def test_synthesised_records_are_valid_accounting(tmp_path: Path) -> None:
    header = schedlab.Header()
    header.set("UnixStartTime", 1_600_000_000)
    header.set_names("Queue", {1: "batch", 2: "debug"})
    header.set_names("User", {1: "alice", 2: "bob"})
    jobs = [
        Job(1, 0, 10, 100, 4, 50.0, 2048, 4, 3600, 1024, 1, 1, 1, None, 1),
        Job(2, 5, 0, 30, 1, 30.0, 100, 2, 60, None, 0, 2, None, None, 2),
        Job(3, 8, 20, 5, 2, 1.0, None, 2, None, None, 5, 1, None, None, 1),
        Job(4, 9, None, None, None, None, None, 1, 600, None, 5, 2, None, None, None),
    ]
    jobs[0].name = "render"
    source = Workload.from_jobs(jobs, header)
    for name in ("accounting", "accounting.jsonl"):
        path = tmp_path / name
        schedlab.write(source, path)
        back = schedlab.read(path)
        assert back.header.unix_start_time == 1_600_000_000
        assert back.header.names("User") == {1: "alice", 2: "bob"}
        assert back.header.names("Queue") == {1: "batch", 2: "debug"}
        got = back.jobs
        assert [j.status for j in got] == [1, 0, 5, 5]
        assert [j.run_time for j in got] == [100, 30, 5, None]
        assert [j.wait_time for j in got] == [10, 0, 20, None]
        assert got[0].requested_time == 3600 and got[0].requested_memory == 1024
        assert got[0].average_cpu_time == 50 and got[0].used_memory == 2048
        assert got[1].requested_processors == 2 and got[1].allocated_processors == 1
        assert got[3].requested_time == 600
    line = (tmp_path / "accounting").read_text().splitlines()[0]
    assert len(line.split(":")) == 45
    assert line.startswith("batch:UNKNOWN:group1:alice:render:1:sge:0:1600000000:1600000010:")


def test_simulated_times_are_written_into_the_source_record(sge_dir: Path, tmp_path: Path) -> None:
    workload = schedlab.read(sge_dir / "apel_test_sge_accounting.txt", order="file")
    jobs = workload.jobs
    jobs[1].wait_time = 100  # as a simulator would
    out = tmp_path / "sim.accounting"
    schedlab.write(Workload.from_jobs(jobs, workload.header), out)
    lines = out.read_text().splitlines()
    original = (sge_dir / "apel_test_sge_accounting.txt").read_text().splitlines()
    assert lines[0] == original[0] and lines[2:] == original[2:]
    fields, before = lines[1].split(":"), original[1].split(":")
    assert fields[8] == before[8]
    assert int(fields[9]) == int(before[8]) + 100
    assert int(fields[10]) - int(fields[9]) == int(before[10]) - int(before[9])
    assert fields[:8] == before[:8] and fields[11:] == before[11:]


def test_record_order_restored_after_sorting_by_submit(sge_dir: Path, tmp_path: Path) -> None:
    path = sge_dir / "gbsc_utils_ogetools_test_data.accounting"
    workload = schedlab.read(path)
    order = [j.extras["sge_line"] for j in workload.jobs]
    assert order != sorted(order)  # the file is in end-time order, jobs in submit order
    out = tmp_path / "x.accounting"
    schedlab.write(workload, out, order="workload")
    assert sorted(out.read_text().splitlines()) == sorted(path.read_text().splitlines())
    assert out.read_text() != path.read_text()
    schedlab.write(workload, out)
    assert out.read_text() == path.read_text()
