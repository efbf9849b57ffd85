"""Audit fuzz3, Slurm plugin: every column list the writer accepts reads back
(finding 1: no list without a job id column, no empty list, a one-column header
read as a header, a ``-R columns=`` hint the reader takes), and values sacct
cannot print (finding 5: ``MaxRSS`` with ReqMem's ``c``/``n`` suffix, a line
break in a column that is not free text)."""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from schedlab import FormatError, Job, Workload, collect_losses
from schedlab.testing import run_cli

from schedlab_slurm.reader import read
from schedlab_slurm.writer import write

SWF = """\
; UnixStartTime: 1000000000
1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1
2 5 0 50 2 -1 -1 2 100 -1 0 2 1 -1 1 -1 -1 -1
3 9 1 20 1 -1 -1 1 100 -1 1 2 1 -1 2 -1 -1 -1
"""

HEADER = (
    "JobID|JobIDRaw|Cluster|Partition|User|Submit|Start|End|Elapsed|State|NCPUS|"
    "MaxRSS|SubmitLine|JobName"
)
JOB = (
    "100|100|c1|batch|alice|2021-01-01T00:00:00|2021-01-01T00:01:00|"
    "2021-01-01T01:01:00|01:00:00|COMPLETED|8||sbatch x.sh|jobA"
)
STEP = (
    "100.batch|100.batch|c1|||2021-01-01T00:01:00|2021-01-01T00:01:00|"
    "2021-01-01T01:01:00|01:00:00|COMPLETED|8|{rss}||batch"
)


def swf(tmp_path: Path) -> Workload:
    path = tmp_path / "in.swf"
    path.write_text(SWF)
    return schedlab.read(path, format="swf")


def dump(tmp_path: Path, text: str, name: str = "d.sacct") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# -- finding 1: column lists the reader could not read back


@pytest.mark.parametrize(
    "option", [",", "", " , |", "State,Elapsed", "MaxRSS", "Submit,State", "Partition"]
)
def test_columns_that_cannot_read_back_are_refused(tmp_path, option):
    out = tmp_path / "c.sacct"
    with pytest.raises(FormatError) as info:
        write(swf(tmp_path), out, columns=option)
    assert info.value.field == "columns"
    assert not out.exists()


@pytest.mark.parametrize("option", ["State,Elapsed", ","])
def test_columns_refusal_cli_one_line_exit_2(tmp_path, capsys, option):
    src = tmp_path / "m.swf"
    src.write_text(SWF)
    out = tmp_path / "c.sacct"
    code, _, err = run_cli(
        capsys, "convert", str(src), str(out), "--to", "slurm", "-W", f"columns={option}"
    )
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "columns" in lines[0], lines
    assert "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize(
    "option",
    [
        "JobID",
        "JobIDRaw",
        "jobid",
        "JobID,State",
        "State,JobIDRaw",
        "JobID,Submit,State",
        "Submit,JobID,MaxRSS",
    ],
)
@pytest.mark.parametrize("header", [True, False])
def test_every_accepted_column_list_reads_back(tmp_path, option, header):
    w = swf(tmp_path)
    out = tmp_path / "c.sacct"
    with collect_losses() as losses:
        write(w, out, columns=option, header=header)
    hint = [str(x) for x in losses if x.field == "meta.slurm_columns"]
    if header:
        back = read(out)
    else:
        assert len(hint) == 1, hint
        columns = hint[0].rsplit("-R columns=", 1)[1]
        back = read(out, columns=columns)
    assert len(back) == len(w)
    raw = read(out, columns=None if header else columns, job_numbers="raw")
    assert [j.job_number for j in raw] == [1, 2, 3]


def test_one_column_header_is_read_as_a_header(tmp_path):
    """sacct --parsable2 --format=JobID prints a one-column header line."""
    path = dump(tmp_path, "JobID\n100\n100.batch\n101\n")
    w = read(path)
    assert w.meta["slurm_has_header"] is True
    assert w.meta["slurm_columns"] == ["JobID"]
    assert len(w) == 2 and len(w.jobs[0].tasks) == 1


def test_headerless_hint_names_only_columns_the_reader_takes(tmp_path):
    """A column sacct does not know, kept from the header of the file read, cannot
    be named in -R columns=: without a header line the file would not read back."""
    path = dump(tmp_path, "JobID|Foo|State\n7|x|COMPLETED\n")
    w = read(path)
    assert w.meta["slurm_columns"] == ["JobID", "Foo", "State"]
    out = tmp_path / "h.sacct"
    with pytest.raises(FormatError, match="Foo") as info:
        write(w, out, header=False)
    assert info.value.field == "columns"
    assert not out.exists()
    write(w, out)  # with its header line it reads back
    assert read(out).jobs[0].extras["slurm.Foo"] == "x"


def test_columns_without_job_id_read_with_are_refused(tmp_path):
    """Without columns=, the columns of the slurm.* extras: none is a job id."""
    w = Workload.from_jobs([Job(job_number=1, submit_time=0, extras={"slurm.State": "X"})])
    out = tmp_path / "x.sacct"
    with pytest.raises(FormatError) as info:
        write(w, out)
    assert info.value.field == "columns" and "JobID" in str(info.value)
    assert not out.exists()


@pytest.mark.parametrize("option", [",", "State,Elapsed"])
def test_reader_columns_option_without_job_id_is_refused(tmp_path, option):
    path = dump(tmp_path, "COMPLETED|01:00:00\n")
    with pytest.raises(FormatError) as info:
        read(path, columns=option)
    assert info.value.field == "columns" and info.value.line is None


# -- finding 5: values sacct cannot print


@pytest.mark.parametrize("rss", ["1Mc", "1Mn", "1024Kc", "2n"])
def test_maxrss_with_a_reqmem_suffix_is_refused(tmp_path, rss):
    path = dump(tmp_path, "\n".join([HEADER, JOB, STEP.format(rss=rss)]) + "\n")
    with pytest.raises(FormatError) as info:
        read(path)
    assert (info.value.line, info.value.field) == (3, "MaxRSS")
    assert str(path) in str(info.value)


def test_maxrss_without_suffix_is_read(tmp_path):
    path = dump(tmp_path, "\n".join([HEADER, JOB, STEP.format(rss="1M")]) + "\n")
    assert read(path).jobs[0].used_memory == 1024 / 8  # 1 MiB over 8 CPUs


@pytest.mark.parametrize(
    ("old", "new", "column"),
    [("|batch|", "|b\natch|", "Partition"), ("|alice|", "|a\nlice|", "User")],
)
def test_line_break_in_a_column_that_is_not_free_text_is_refused(tmp_path, old, new, column):
    good = dump(tmp_path, "\n".join([HEADER, JOB, STEP.format(rss="")]) + "\n", "g.sacct")
    read(good)
    job = JOB.replace(old, new, 1)
    path = dump(tmp_path, "\n".join([HEADER, job, STEP.format(rss="")]) + "\n")
    with pytest.raises(FormatError) as info:
        read(path)
    assert (info.value.line, info.value.field) == (2, column)
    w = read(path, lenient=True)
    assert len(w) == 0 and w.meta["skipped"] == 2  # the job and its step


def test_line_break_named_on_the_line_it_is_on(tmp_path):
    """After a multi-line SubmitLine the line named is the one the value is on."""
    columns = "JobID|Submit|SubmitLine|Partition|NCPUS"
    ok = dump(tmp_path, "5|2024-01-01T00:00:00|sbatch \\\n  x.sh|batch|4\n", "ok.log")
    (job,) = read(ok, columns=columns).jobs
    assert job.extras["slurm.SubmitLine"] == "sbatch \\\n  x.sh"
    path = dump(tmp_path, "5|2024-01-01T00:00:00|sbatch \\\n  x.sh|ba\ntch|4\n")
    with pytest.raises(FormatError) as info:
        read(path, columns=columns)
    assert (info.value.line, info.value.field) == (2, "Partition")


def test_writer_does_not_write_a_line_break_the_reader_refuses(tmp_path):
    w = swf(tmp_path)
    w.jobs[0].account = "a\nb"
    w.jobs[1].name = "two\nlines"  # JobName is free text: kept
    out = tmp_path / "a.sacct"
    with collect_losses() as losses:
        write(w, out, columns="JobID,Submit,JobName,State,Account")
    account = [str(x) for x in losses if x.field == "account"]
    assert len(account) == 1 and "line break" in account[0], account
    back = read(out)
    assert [j.account for j in back] == [None, None, None]
    assert back.jobs[1].name == "two\nlines"
