"""Conversion audit conv3, Slurm writer: used memory written as the job line's
``MaxRSS`` (finding 3), a simulated job's unknown trace partition (finding 4), a
column named twice in ``columns=`` (finding 5), empty names of the header tables
(finding 6) and requested processors carried by ``NCPUS`` (finding 7)."""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from schedlab import FormatError, LossError, collect_losses
from schedlab.testing import run_cli

from schedlab_slurm.reader import read
from schedlab_slurm.writer import write

ORIGIN = "; UnixStartTime: 1000000000\n"


def swf(tmp_path: Path, text: str, name: str = "in.swf") -> schedlab.Workload:
    path = tmp_path / name
    path.write_text(ORIGIN + text)
    return schedlab.read(path, format="swf")


def lines_of(losses, field: str) -> list[str]:
    return [str(loss) for loss in losses if loss.field == field]


# -- finding 3: used memory


USED_MEMORY = (
    "1 0 5 100 4 -1 2048 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"
    "2 1 5 100 3 -1 1000.5 3 200 -1 1 1 1 -1 1 -1 -1 -1\n"
    "3 2 5 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1\n"
)


@pytest.mark.parametrize(
    "columns",
    [
        "JobID,Submit,Start,End,Elapsed,State,AllocCPUS,ReqCPUS,MaxRSS,NTasks",
        "JobID,Submit,Start,End,Elapsed,State,NCPUS,MaxRSS",
        "JobID,Submit,Start,End,Elapsed,State,ReqCPUS,MaxRSS",
    ],
)
def test_used_memory_is_written_as_maxrss(tmp_path, columns):
    w = swf(tmp_path, USED_MEMORY)
    out = tmp_path / "um.sacct"
    with collect_losses() as losses:
        write(w, out, columns=columns)
    assert lines_of(losses, "used_memory") == []
    back = read(out)
    assert [j.used_memory for j in back] == [2048, 1000.5, None]


def test_used_memory_without_maxrss_column_names_the_column(tmp_path):
    w = swf(tmp_path, USED_MEMORY)
    with collect_losses() as losses:
        write(w, tmp_path / "no.sacct", columns="JobID,Submit,Start,End,Elapsed,State,AllocCPUS")
    lines = lines_of(losses, "used_memory")
    assert lines == ["used_memory: 2 records, not written (no MaxRSS column)"], lines


def test_maxrss_of_a_dump_is_written_back_unchanged(tmp_path):
    dump = tmp_path / "rss.sacct"
    dump.write_text(
        "JobID|Submit|Start|End|Elapsed|State|AllocCPUS|NTasks|MaxRSS\n"
        "7|2021-01-01T00:00:00|2021-01-01T00:00:05|2021-01-01T00:01:45|00:01:40|"
        "COMPLETED|4||\n"
        "7.0|2021-01-01T00:00:05|2021-01-01T00:00:05|2021-01-01T00:01:45|00:01:40|"
        "COMPLETED|4|2|8M\n"
    )
    w = schedlab.read(dump, format="slurm")
    assert w.jobs[0].used_memory == 4096
    out = tmp_path / "again.sacct"
    with collect_losses(strict=True):
        write(w, out)
    assert out.read_text() == dump.read_text()


# -- finding 4: a simulated job's unknown trace partition


def test_unknown_trace_partition_replaced_by_simulated_one_is_reported(tmp_path):
    w = swf(
        tmp_path,
        "1 0 -1 100 -1 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n"
        "2 10 -1 50 -1 -1 -1 2 200 -1 1 1 1 -1 -1 -1 -1 -1\n",
    )
    for job in w.jobs:
        job.extras["schedlab.partition"] = "batch"
    with collect_losses() as losses:
        write(w, tmp_path / "np.sacct", columns="JobID,Submit,Elapsed,State,ReqCPUS,Partition")
    lines = lines_of(losses, "partition_number")
    assert len(lines) == 1 and lines[0].startswith("partition_number: 2 records"), lines
    assert "unknown" in lines[0]


# -- finding 5: a column named twice


@pytest.mark.parametrize("option", ["JobID,JobID", "JobID,Submit,jobid"])
def test_column_named_twice_is_refused(tmp_path, option):
    w = swf(tmp_path, USED_MEMORY)
    out = tmp_path / "cc.sacct"
    with pytest.raises(FormatError, match="columns") as info:
        write(w, out, columns=option)
    assert "'JobID'" in str(info.value) and "twice" in str(info.value)
    assert not out.exists()


def test_column_named_twice_cli_one_line_exit_2(tmp_path, capsys):
    src = tmp_path / "m.swf"
    src.write_text(ORIGIN + USED_MEMORY)
    out = tmp_path / "c.sacct"
    code, _, err = run_cli(
        capsys, "convert", str(src), str(out), "--to", "slurm", "-W", "columns=JobID,JobID"
    )
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "columns" in lines[0] and "'JobID'" in lines[0], lines
    assert not out.exists()


# -- finding 6: empty names of the header tables


@pytest.mark.parametrize(
    ("label", "column", "field"),
    [("Queue", "QOS", 14), ("User", "User", 11), ("Group", "Group", 12)],
)
def test_empty_table_name_is_reported(tmp_path, label, column, field):
    rows = []
    for number in (1, 2):
        values = "1 0 5 100 4 -1 -1 4 200 -1 1 -1 -1 -1 -1 -1 -1 -1".split()
        values[0], values[field] = str(number), str(number)
        rows.append(" ".join(values))
    text = f"; {label}:  1  \n; {label}: 2 short\n" + "\n".join(rows) + "\n"
    w = swf(tmp_path, text)
    columns = f"JobID,Submit,Start,End,Elapsed,State,AllocCPUS,ReqCPUS,Timelimit,{column}"
    with collect_losses() as losses:
        write(w, tmp_path / "e.sacct", columns=columns)
    lines = lines_of(losses, f"header.{label}")
    assert len(lines) == 1 and "an empty name" in lines[0], [str(x) for x in losses]
    with pytest.raises(LossError), collect_losses(strict=True):
        write(w, tmp_path / "strict.sacct", columns=columns)


# -- finding 7: requested processors carried by NCPUS


def test_ncpus_carries_requested_processors(tmp_path):
    w = swf(tmp_path, "1 0 5 100 4 -1 -1 4 200 -1 1 -1 -1 -1 -1 -1 -1 -1\n")
    out = tmp_path / "nc.sacct"
    columns = "JobID,Submit,Start,End,Elapsed,State,NCPUS,Timelimit"
    with collect_losses(strict=True):
        write(w, out, columns=columns)
    assert read(out).jobs[0].requested_processors == 4


def test_ncpus_reports_only_the_records_that_differ(tmp_path):
    w = swf(
        tmp_path,
        "1 0 5 100 4 -1 -1 4 200 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
        "2 1 5 100 4 -1 -1 8 200 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
        "3 2 5 100 2 -1 -1 2 200 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
    )
    with collect_losses() as losses:
        write(w, tmp_path / "c.sacct", columns="JobID,Submit,Start,End,Elapsed,State,NCPUS")
    lines = lines_of(losses, "requested_processors")
    assert len(lines) == 1 and lines[0].startswith("requested_processors: 1 record,"), lines
