"""Conversion audit findings about the Slurm writer: a fresh job id is one the
reader takes (finding 2), and the change of origin (the reader counts times from
the first submission) is reported, as the SGE writers do (finding 4)."""

from __future__ import annotations

from pathlib import Path

import schedlab
from schedlab import collect_losses

from schedlab_slurm.reader import read
from schedlab_slurm.writer import write

BIG_IDS = """\
; Version: 2.2
9007199254740990 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1
-1 1 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1
-1 2 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1
"""

NO_ORIGIN = """\
1 100 0 10 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1
2 150 0 10 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1
"""


def swf(tmp_path: Path, text: str) -> schedlab.Workload:
    path = tmp_path / "in.swf"
    path.write_text(text)
    return schedlab.read(path, format="swf")


def test_fresh_job_ids_fit_below_the_limit(tmp_path):
    out = tmp_path / "out.sacct"
    with collect_losses() as losses:
        write(swf(tmp_path, BIG_IDS), out)
    fresh = [loss for loss in losses if loss.field == "job_number" and "new number" in loss.action]
    assert sum(loss.records for loss in fresh) == 2
    numbers = [job.job_number for job in read(out, job_numbers="raw").jobs]
    assert 9007199254740990 in numbers and len(set(numbers)) == 3
    assert all(0 < n <= 2**53 - 1 for n in numbers)


def test_missing_origin_and_shift_are_reported(tmp_path):
    out = tmp_path / "out.sacct"
    with collect_losses() as losses:
        write(swf(tmp_path, NO_ORIGIN), out)
    back = read(out)
    assert [j.submit_time for j in back.jobs] == [0, 50]  # the reader's origin: 100
    lines = [str(loss) for loss in losses if loss.field == "header.UnixStartTime"]
    assert any("unknown" in line for line in lines), lines
    assert any("shift by 100 s" in line for line in lines), lines


def test_shifted_origin_is_reported(tmp_path):
    out = tmp_path / "out.sacct"
    text = "; UnixStartTime: 1000000000\n" + NO_ORIGIN
    with collect_losses() as losses:
        write(swf(tmp_path, text), out)
    lines = [str(loss) for loss in losses if loss.field == "header.UnixStartTime"]
    assert len(lines) == 1 and "shift by 100 s" in lines[0], lines


def test_origin_at_the_first_submission_is_no_loss(tmp_path):
    out = tmp_path / "out.sacct"
    text = "; UnixStartTime: 1000000000\n" + NO_ORIGIN.replace(" 100 ", " 0 ")
    with collect_losses() as losses:
        write(swf(tmp_path, text), out)
    assert losses.count("header.UnixStartTime") == 0
