"""Second conversion audit, Slurm part: the origin of a workload none of whose
records holds a time (finding 1), free-text header comments (finding 5) and files
written without a header line (finding 10)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import schedlab
from schedlab import FormatError, LossError, collect_losses

from schedlab_slurm.layout import XDMOD_COLUMNS
from schedlab_slurm.reader import read
from schedlab_slurm.writer import write

#: A job that never ran and whose submit time is unknown, with a known origin.
NO_SUBMIT = """\
; UnixStartTime: 1000000000
1 -1 -1 -1 -1 -1 -1 2 100 -1 5 1 1 -1 -1 -1 -1 -1
"""

#: A free-text comment (a column legend, as LCG-2005-1 has) after the labels.
LEGEND = """\
; UnixStartTime: 1000000000
;    #  sub  runtime  cpus   (free-text legend)
1 0 10 100 4 10 1000 4 200 2048 1 1 1 -1 1 -1 -1 -1
"""

SWF_JOBS = """\
; UnixStartTime: 1000000000
1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1
2 5 0 50 2 -1 -1 2 100 -1 0 2 1 -1 1 -1 -1 -1
"""

COLUMNS = "JobID|JobIDRaw|Submit|Start|End|Elapsed|State|AllocCPUS"


def swf(tmp_path: Path, text: str) -> schedlab.Workload:
    path = tmp_path / "in.swf"
    path.write_text(text)
    return schedlab.read(path, format="swf")


def header_losses(losses, label: str) -> list[str]:
    return [str(loss) for loss in losses if loss.field == f"header.{label}"]


# -- finding 1: the origin when no record holds a time


def test_origin_no_record_can_hold_is_reported(tmp_path):
    out = tmp_path / "out.sacct"
    with collect_losses() as losses:
        write(swf(tmp_path, NO_SUBMIT), out)
    lines = header_losses(losses, "UnixStartTime")
    assert len(lines) == 1 and "read back as unknown" in lines[0], lines
    with pytest.raises(LossError), collect_losses(strict=True):
        write(swf(tmp_path, NO_SUBMIT), tmp_path / "strict.sacct")


def test_unknown_origin_with_no_time_is_no_loss(tmp_path):
    out = tmp_path / "out.sacct"
    text = NO_SUBMIT.split("\n", 1)[1]  # no UnixStartTime: nothing to lose
    with collect_losses() as losses:
        write(swf(tmp_path, text), out)
    assert losses.count("header.UnixStartTime") == 0


def test_reader_leaves_the_origin_unknown_without_any_time(tmp_path):
    out = tmp_path / "out.sacct"
    write(swf(tmp_path, NO_SUBMIT), out)
    back = read(out)
    assert back.header.unix_start_time is None
    assert back.header.get("UnixStartTime") is None
    assert back.jobs[0].submit_time is None
    again = tmp_path / "again.sacct"
    with collect_losses() as losses:
        write(back, again)  # unknown stays unknown: nothing to report
    assert again.read_text() == out.read_text()
    assert losses.count("header.UnixStartTime") == 0


def test_swf_from_a_timeless_dump_has_no_start_time(tmp_path):
    path = tmp_path / "never.sacct"
    path.write_text(
        "JobID|Submit|Start|End|Elapsed|State|AllocCPUS\n"
        "7|Unknown|Unknown|Unknown|00:00:00|CANCELLED by 0|0\n"
    )
    text = schedlab.write(read(path), tmp_path / "never.swf", format="swf").read_text()
    assert "UnixStartTime" not in text and "1970" not in text


def test_step_times_set_the_origin_when_no_job_has_a_submit_time(tmp_path):
    path = tmp_path / "steps.sacct"
    path.write_text(
        "JobID|Submit|Start|End|Elapsed|State|AllocCPUS\n"
        "7|Unknown|Unknown|Unknown|00:01:40|COMPLETED|2\n"
        "7.batch|Unknown|2020-01-01T00:00:10|2020-01-01T00:01:50|00:01:40|COMPLETED|2\n"
    )
    w = read(path)
    origin = 1577836810  # 2020-01-01T00:00:10 UTC, the step's start
    assert w.header.unix_start_time == origin
    assert (w.jobs[0].tasks[0].start_time, w.jobs[0].tasks[0].end_time) == (0, 100)
    out = tmp_path / "out.sacct"
    with collect_losses() as losses:
        write(w, out)
    assert out.read_text() == path.read_text()
    assert losses.count("header.UnixStartTime") == 0


# -- finding 5: free-text header comments


def test_free_text_header_comments_are_reported(tmp_path):
    with collect_losses() as losses:
        write(swf(tmp_path, LEGEND), tmp_path / "out.sacct")
    assert header_losses(losses, "comment") == [
        "header.comment: 1 record, not written (sacct output has no header)"
    ]
    with collect_losses() as losses:
        write(swf(tmp_path, SWF_JOBS), tmp_path / "plain.sacct")
    assert losses.count("header.comment") == 0


# -- finding 10: header=false


def _columns_losses(losses) -> list[str]:
    return [str(loss) for loss in losses if loss.field == "meta.slurm_columns"]


def test_headerless_file_from_swf_reads_back_with_the_defaults(tmp_path):
    w = swf(tmp_path, SWF_JOBS)
    out = tmp_path / "nh.sacct"
    with collect_losses() as losses:
        write(w, out, header=False)
    assert _columns_losses(losses) == []
    first = out.read_text().splitlines()[0]
    assert len(first.split("|")) == len(XDMOD_COLUMNS)
    back = read(out)  # the reader's defaults: Open XDMoD's order
    assert back.meta["slurm_has_header"] is False
    assert [(j.run_time, j.allocated_processors, j.status) for j in back] == [
        (j.run_time, j.allocated_processors, j.status) for j in w
    ]


def test_headerless_file_in_another_order_says_how_to_read_it(slurm_dir, tmp_path):
    source = slurm_dir / "slurm_sim_tools_sacct_simple.log"
    w = read(source)
    out = tmp_path / "x1.sacct"
    with collect_losses() as losses:
        write(w, out, header=False)
    lines = _columns_losses(losses)
    assert len(lines) == 1, list(losses)
    value = ",".join(w.meta["slurm_columns"])
    assert lines[0].endswith(f"read back with -R columns={value}"), lines[0]
    with pytest.raises(FormatError):
        read(out)  # the defaults cannot read it, as reported
    back = read(out, columns=value)
    assert [j.run_time for j in back] == [j.run_time for j in w]
    with pytest.raises(LossError), collect_losses(strict=True):
        write(w, tmp_path / "strict.sacct", header=False)


def test_headerless_columns_option_is_reported(tmp_path):
    w = swf(tmp_path, SWF_JOBS)
    with collect_losses() as losses:
        write(w, tmp_path / "few.sacct", header=False, columns=COLUMNS)
    assert _columns_losses(losses) == [
        "meta.slurm_columns: 1 record, not written (no header line, and the reader "
        "takes a file without one in Open XDMoD's column order): read back with "
        "-R columns=JobID,JobIDRaw,Submit,Start,End,Elapsed,State,AllocCPUS"
    ]
    with collect_losses() as losses:  # with its header line the file says its order
        write(w, tmp_path / "few_header.sacct", columns=COLUMNS)
    assert _columns_losses(losses) == []


def test_headerless_xdmod_dump_round_trip_is_no_loss(slurm_dir, tmp_path):
    source = slurm_dir / "xdmod_accounting-logs.log"
    out = tmp_path / "copy.sacct.gz"
    with collect_losses() as losses:
        write(read(source), out)
    assert _columns_losses(losses) == []
    assert gzip.decompress(out.read_bytes()).decode() == source.read_text().rstrip("\n") + "\n"


def test_headerless_cli_round_trip(slurm_dir, tmp_path, registry, capsys):
    from schedlab.cli import main

    out = tmp_path / "x1.sacct"
    source = slurm_dir / "slurm_sim_tools_sacct_simple.log"
    code = main(["convert", str(source), str(out), "--to", "slurm", "-W", "header=false"])
    assert code == 0
    err = capsys.readouterr().err
    assert "meta.slurm_columns" in err and "-R columns=JobID," in err, err
