"""The SWF writer's ``integer_times`` option: whole seconds for tools that drop
records with fractional times (AccaSim), rounded by a documented rule."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import schedlab
from hypothesis import given, settings
from hypothesis import strategies as st
from schedlab.cli import main
from schedlab.formats.swf.writer import round_times
from schedlab.losses import collect_losses
from schedlab.model import SWF_FIELDS, Job, Workload

TIMES = ("submit_time", "wait_time", "run_time", "average_cpu_time", "requested_time", "think_time")


def _job_lines(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines() if not line.startswith(";")]


def test_millisecond_grid_engine_file(shared_data: Path, tmp_path: Path) -> None:
    src = schedlab.read(shared_data / "sge" / "apel_test_uge82_ms_accounting.txt")
    fractional = {
        f: sum(1 for j in src if (v := getattr(j, f)) is not None and v != math.floor(v))
        for f in TIMES
    }
    assert sum(fractional.values()) > 0  # the file has millisecond times
    with collect_losses() as losses:
        schedlab.write(src, tmp_path / "plain.swf")
    assert not any(losses.count(f) for f in TIMES)
    with collect_losses() as losses:
        schedlab.write(src, tmp_path / "int.swf", integer_times=True)
    for field, n in fractional.items():
        assert losses.count(field) == n, field
    rows = _job_lines(tmp_path / "int.swf")
    assert len(rows) == len(src)
    for row in rows:  # every field an integer: what AccaSim accepts
        assert all(cell.lstrip("-").isdigit() for cell in row), row
    back = schedlab.read(tmp_path / "int.swf")
    for a, b in zip(src, back, strict=True):
        assert b.submit_time == math.floor(a.submit_time)
        for field in ("wait_time", "run_time", "average_cpu_time"):
            value = getattr(a, field)
            assert getattr(b, field) == (None if value is None else math.floor(value + 0.5))
        if a.requested_time is not None:
            assert b.requested_time == math.ceil(a.requested_time)


def test_without_fractions_nothing_changes(swf_dir: Path, tmp_path: Path) -> None:
    src = schedlab.read(swf_dir / "lublin_256.swf")
    schedlab.write(src, tmp_path / "a.swf")
    with collect_losses() as losses:
        schedlab.write(src, tmp_path / "b.swf", integer_times=True)
    assert (tmp_path / "a.swf").read_bytes() == (tmp_path / "b.swf").read_bytes()
    assert not any(losses.count(f) for f in TIMES)


def test_cli_write_option(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    w = Workload.from_jobs(
        [
            Job(
                job_number=1,
                submit_time=0.25,
                wait_time=1.5,
                run_time=2.49,
                requested_time=2.1,
                allocated_processors=1,
            )
        ]
    )
    schedlab.write(w, tmp_path / "in.swf")
    main(
        ["convert", str(tmp_path / "in.swf"), str(tmp_path / "out.swf"), "-w", "integer_times=true"]
    )
    err = capsys.readouterr().err
    assert "rounded to whole seconds (integer_times)" in err
    (row,) = _job_lines(tmp_path / "out.swf")
    assert row[1:4] == ["0", "2", "2"] and row[8] == "3"


@settings(max_examples=100, deadline=None)
@given(
    st.floats(0, 1e7, allow_nan=False),
    st.floats(0, 1e6, allow_nan=False),
    st.floats(0, 1e6, allow_nan=False),
)
def test_a_run_that_fit_its_limit_still_fits(submit: float, run: float, slack: float) -> None:
    values = np.full((len(SWF_FIELDS), 1), np.nan)
    values[SWF_FIELDS.index("submit_time"), 0] = submit
    values[SWF_FIELDS.index("run_time"), 0] = run
    values[SWF_FIELDS.index("requested_time"), 0] = run + slack
    out = round_times(values)
    r, q = out[SWF_FIELDS.index("run_time"), 0], out[SWF_FIELDS.index("requested_time"), 0]
    assert r <= q and r == math.floor(run + 0.5)
    assert out[SWF_FIELDS.index("submit_time"), 0] <= submit
    assert np.isnan(out[SWF_FIELDS.index("wait_time"), 0])  # unknown stays unknown


def test_google_2011_sample_needs_integer_memory(shared_data: Path, tmp_path: Path) -> None:
    """The 74 records of the Google 2011 sample that AccaSim drops have a fractional
    requested memory, not a fractional time: ``integer_memory`` rounds it. One of
    them (job 3418375) has an instance whose request is unknown, so its request is
    unknown (not the partial sum): 73 fractional values remain."""
    src = schedlab.read(shared_data / "google" / "clusterdata2011_v2_sample", format="google-v2")
    with collect_losses() as losses:
        schedlab.write(src, tmp_path / "t.swf", integer_times=True)
    assert not any(losses.count(f) for f in TIMES)
    fractional = [r for r in _job_lines(tmp_path / "t.swf") if any("." in c for c in r)]
    assert len(fractional) == 73
    with collect_losses() as losses:
        schedlab.write(src, tmp_path / "m.swf", integer_times=True, integer_memory=True)
    assert losses.count("requested_memory") == 73
    rows = _job_lines(tmp_path / "m.swf")
    assert len(rows) == len(src) and all(c.lstrip("-").isdigit() for r in rows for c in r)
    partial = [j for j in src if j.extras.get("request_unknown")]
    assert [j.extras.get("collection_id") for j in partial] == [3418375]
    assert partial[0].requested_memory is None
    back = schedlab.read(tmp_path / "m.swf")
    for a, b in zip(src, back, strict=True):
        if a.requested_memory is not None:
            assert b.requested_memory == math.floor(a.requested_memory + 0.5)
