"""The SWF writer refuses what the SWF reader would refuse (infinity, values beyond
``MAX_MAGNITUDE``, times beyond ``MAX_SECONDS``) with one line naming the job and
the field, instead of writing ``inf`` or ``1.152921504606847e+18`` with exit 0; and
``validate`` reports such values in a workload as ``out-of-range`` errors."""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab import FormatError, Job, ReaderSpec, Workload, hookimpl
from schedlab.testing import plugin_registry, run_cli, using_registry
from schedlab.validation import MAX_MAGNITUDE, MAX_SECONDS, check_workload

INF = float("inf")


def _jobs(**bad: float) -> Workload:
    """Three good jobs; job 2 gets the ``bad`` field values."""
    jobs = [
        Job(job_number=n, submit_time=10.0 * n, run_time=5.0, allocated_processors=2)
        for n in (1, 2, 3)
    ]
    for field, value in bad.items():
        setattr(jobs[1], field, value)
    return Workload.from_jobs(jobs)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("run_time", INF, "field 4 (run_time): expected a finite number, got inf"),
        ("run_time", -INF, "field 4 (run_time): expected a finite number, got -inf"),
        (
            "allocated_processors",
            float(2**60),
            "field 5 (allocated_processors): out of range (at most 2**53 - 1), "
            "got 1152921504606846976",
        ),
        (
            "submit_time",
            2e12,
            "field 2 (submit_time): out of range (a time of at most 1e12 seconds), "
            "got 2000000000000",
        ),
    ],
)
def test_write_refuses_what_the_reader_refuses(tmp_path: Path, field, value, message) -> None:
    target = tmp_path / "o.swf"
    with pytest.raises(FormatError) as info:
        schedlab.write(_jobs(**{field: value}), target)
    assert str(info.value) == (
        f"{target}: job 2: {message} (not written: the SWF reader would refuse it)"
    )
    assert "\n" not in str(info.value)
    assert not target.exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no staged part left


def test_the_bounds_themselves_are_written_and_read_back(tmp_path: Path) -> None:
    workload = _jobs(allocated_processors=MAX_MAGNITUDE, run_time=MAX_SECONDS)
    target = tmp_path / "o.swf"
    schedlab.write(workload, target)
    job = list(schedlab.read(target))[1]
    assert (job.allocated_processors, job.run_time) == (MAX_MAGNITUDE, MAX_SECONDS)


def test_columns_in_a_later_batch_name_the_job_or_its_position(tmp_path: Path, monkeypatch) -> None:
    from schedlab.formats.swf import writer

    monkeypatch.setattr(writer, "BATCH_ROWS", 2)  # the bad jobs are in later batches
    data = {}
    data["job_number"] = np.array([1.0, 2.0, 3.0, np.nan, 5.0])
    data["submit_time"] = np.arange(5.0)
    data["used_memory"] = np.array([1.0, 1.0, 1.0, INF, 1.0])
    workload = Workload.from_arrays(data)
    with pytest.raises(FormatError, match=r"job at position 4: field 7 \(used_memory\): "):
        schedlab.write(workload, tmp_path / "o.swf")
    data["used_memory"] = np.array([1.0, 1.0, 1.0, 1.0, 1e300])
    with pytest.raises(FormatError, match=r"o\.swf: job 5: field 7 \(used_memory\): out of"):
        schedlab.write(Workload.from_arrays(data), tmp_path / "o.swf")
    assert not (tmp_path / "o.swf").exists()


def test_checkpoint_records_are_checked_too(tmp_path: Path) -> None:
    workload = _jobs()
    job = list(workload)[1]
    job.extras["swf_parts"] = [[2, 20, 0, INF, 2, -1, -1, 2, -1, -1, 2]]
    with pytest.raises(FormatError) as info:
        schedlab.write(Workload.from_jobs(list(workload)), tmp_path / "o.swf")
    assert "job 2: checkpoint/swap record: field 4 (run_time): expected a finite" in str(info.value)


def test_integer_times_rounding_does_not_hide_an_infinite_value(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=r"job 2: field 4 \(run_time\): expected a finite"):
        schedlab.write(_jobs(run_time=INF), tmp_path / "o.swf", integer_times=True)


def test_validate_reports_out_of_range_values() -> None:
    workload = _jobs(run_time=INF, allocated_processors=float(2**60), think_time=-INF)
    found = {
        (f.job, f.field, f.severity, f.message)
        for f in check_workload(workload)
        if f.check == "out-of-range"
    }
    tail = " (schedlab's readers refuse it, and so does the SWF writer)"
    assert found == {
        (2, "run_time", "error", "expected a finite number, got inf" + tail),
        (
            2,
            "allocated_processors",
            "error",
            "out of range (at most 2**53 - 1), got 1152921504606846976" + tail,
        ),
        (2, "think_time", "error", "expected a finite number, got -inf" + tail),
    }
    assert not [f for f in check_workload(_jobs()) if f.check == "out-of-range"]


def _garbage_reader() -> types.ModuleType:
    """A plugin reader that returns garbage: an infinite run time, 1e30 processors."""
    module = types.ModuleType("garbage_plugin")

    def read(source, **_):
        return Workload.from_jobs(
            [
                Job(job_number=1, submit_time=0, run_time=5, allocated_processors=1),
                Job(job_number=2, submit_time=1, run_time=INF, allocated_processors=10**30),
            ]
        )

    @hookimpl
    def schedlab_readers():
        return [ReaderSpec(name="garbage", read=read, suffixes=(".garbage",))]

    module.schedlab_readers = schedlab_readers
    return module


def test_cli_convert_refuses_and_validate_flags(capsys, tmp_path: Path) -> None:
    source = tmp_path / "in.garbage"
    source.write_text("anything\n")
    target = tmp_path / "out.swf"
    with using_registry(plugin_registry(_garbage_reader())):
        code, _, err = run_cli(capsys, "convert", str(source), str(target))
        assert code == 2
        assert err == (
            f"schedlab: error: {target}: job 2: field 4 (run_time): expected a finite "
            "number, got inf (not written: the SWF reader would refuse it)\n"
        )
        assert not target.exists()
        code, out, _ = run_cli(capsys, "validate", str(source))
    assert code == 1
    flagged = [line for line in out.splitlines() if "[out-of-range]" in line]
    assert len(flagged) == 2
    assert "job 2: error: field 4 (run_time): expected a finite number, got inf" in flagged[0]
    assert "field 5 (allocated_processors): out of range (at most 2**53 - 1)" in flagged[1]
