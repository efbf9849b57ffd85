"""Issue 15, "conversions must be honest": the reproducers of the Google and Grid
Engine writers, the loss report API, and ``convert``'s summary and
``--strict-lossless``."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import schedlab
from schedlab.cli import main
from schedlab.formats.google.v3_writer import _collection_ids
from schedlab.losses import Loss, LossError, Losses, collect_losses, writer_losses
from schedlab.model import Header, Job, Workload


def _head(path: Path, n: int, **options: object) -> Workload:
    """The first ``n`` jobs of a trace, with its header."""
    w = schedlab.read(path, **options)
    out = Workload.from_jobs(itertools.islice(w, n), w.header.copy())
    out.meta.update(w.meta)
    return out


def _google(workload: Workload, tmp_path: Path) -> tuple[Workload, Losses]:
    with collect_losses() as losses:
        schedlab.write(workload, tmp_path / "cell", format="google")
    return schedlab.read(tmp_path / "cell", format="google"), losses


# ------------------------------------------------------------------ the API


def test_losses_count_per_field_and_action_in_order() -> None:
    losses = Losses()
    losses.add("run_time", "not written", 3)
    losses.add("name", "not written")
    losses.add("run_time", "not written", 2)
    losses.add("run_time", "written as 0")
    losses.add("status", "ignored", 0)
    assert list(losses) == [
        Loss("run_time", 5, "not written"),
        Loss("name", 1, "not written"),
        Loss("run_time", 1, "written as 0"),
    ]
    assert losses.count("run_time") == 6 and "status" not in losses
    assert losses.first() == Loss("run_time", 5, "not written")
    assert losses.as_dicts()[1] == {"field": "name", "records": 1, "action": "not written"}


def test_summary_folds_header_labels_and_extras() -> None:
    losses = Losses()
    for label in ("Version", "Computer", "Note"):
        losses.add(f"header.{label}", "not written")
    losses.add("extras.a", "not written", 4)
    losses.add("extras.b", "not written", 7)
    losses.add("name", "not written", 2)
    assert losses.summary() == [
        "name: 2 records, not written",
        "header: 3 label(s) (Version, Computer, Note) in up to 1 record, not carried",
        "extras: 2 source field(s) (a, b) in up to 7 records, not carried",
    ]
    many = Losses([Loss(f"f{i}", 1, "x") for i in range(20)])
    lines = many.summary(limit=5)
    assert len(lines) == 5 and lines[-1] == "... and 16 more"


def test_a_writer_reports_to_the_enclosing_collection() -> None:
    with collect_losses() as outer:
        with writer_losses() as mine:
            mine.add("name", "not written", 2)
        with writer_losses() as other:
            other.add("name", "not written")
    assert outer.count("name") == 3
    # outside any collection a writer's report is just returned
    with writer_losses() as alone:
        alone.add("hosts", "not written")
    assert alone.count("hosts") == 1


def test_a_strict_collection_raises_when_the_writer_finishes() -> None:
    with collect_losses(strict=True), pytest.raises(LossError) as info:
        with writer_losses() as losses:
            losses.add("run_time", "not written (start unknown)", 7)
            losses.add("name", "not written")
    assert str(info.value) == (
        "conversion would lose run_time in 7 records (not written (start unknown)) "
        "(and 1 more kind(s) of loss); nothing written (--strict-lossless)"
    )
    assert isinstance(info.value, schedlab.SchedlabError) and info.value.exit_code == 2


def test_a_strict_write_leaves_the_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "out.swf"
    target.write_text("old\n")
    w = Workload.from_jobs([Job(job_number=1, submit_time=0, run_time=5, name="x")])
    with collect_losses(strict=True), pytest.raises(LossError):
        schedlab.write(w, target)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.swf"]


def test_writers_return_their_report_when_called_directly(tmp_path: Path) -> None:
    from schedlab.formats.swf.writer import write_swf

    w = Workload.from_jobs([Job(job_number=1, submit_time=0, name="a", hosts=("n1",))])
    losses = write_swf(w, tmp_path / "x.swf")
    assert losses.count("name") == 1 and losses.count("hosts") == 1


# ------------------------------------------------------------------ Google writer


@pytest.mark.slow
def test_google_job_zero_does_not_collide_with_job_one(swf_dir: Path, tmp_path: Path) -> None:
    src = schedlab.read(swf_dir / "wagap-2013_alea-extended.swf", lenient=True)
    numbers = [j.job_number for j in src]
    assert 0 in numbers and 1 in numbers and len(numbers) == 17_900
    back, _ = _google(src, tmp_path)
    assert len(back.jobs) == 17_900
    assert sorted(j.extras["collection_id"] for j in back.jobs) == sorted(numbers)


def test_google_duplicate_and_missing_job_numbers_get_fresh_ids(tmp_path: Path) -> None:
    jobs = [
        Job(job_number=5, submit_time=0, wait_time=1, run_time=2, allocated_processors=1),
        Job(job_number=5, submit_time=1, wait_time=1, run_time=3, allocated_processors=1),
        Job(job_number=None, submit_time=2, wait_time=1, run_time=4, allocated_processors=1),
    ]
    back, losses = _google(Workload.from_jobs(jobs), tmp_path)
    assert [j.run_time for j in back.jobs] == [2, 3, 4]
    assert [j.extras["collection_id"] for j in back.jobs] == [5, 6, 7]
    assert losses.count("job_number") == 2


def test_google_job_without_submit_time_comes_back_unknown(tmp_path: Path) -> None:
    jobs = [
        Job(job_number=1, submit_time=None, status=5),
        Job(job_number=2, submit_time=10, wait_time=5, run_time=20, allocated_processors=2),
    ]
    back, _ = _google(Workload.from_jobs(jobs), tmp_path)
    by_id = {j.extras["collection_id"]: j for j in back.jobs}
    assert sorted(by_id) == [1, 2]
    assert by_id[1].submit_time is None and by_id[1].status == 5
    assert by_id[2].run_time == 20 and by_id[2].allocated_processors == 2


def test_google_run_time_without_a_start_is_reported(swf_dir: Path, tmp_path: Path) -> None:
    src = _head(swf_dir / "LCG-2005-1.swf.gz", 2000)
    assert all(j.wait_time is None and j.run_time is not None for j in src.jobs)
    back, losses = _google(src, tmp_path)
    assert len(back.jobs) == 2000
    assert losses.count("run_time") == 2000
    # the status and the processors still come back (SCHEDULE and the terminal
    # event at the unknown time "after the trace")
    assert [j.status for j in back.jobs] == [j.status for j in src.jobs]
    by_id = {j.extras["collection_id"]: j for j in back.jobs}
    assert all(by_id[j.job_number].allocated_processors == j.allocated_processors for j in src.jobs)
    assert "allocated_processors" not in losses


def test_google_keeps_allocated_processors_and_machine_size(swf_dir: Path, tmp_path: Path) -> None:
    src = schedlab.read(swf_dir / "KTH-SP2-1996-2.1-cln.swf.gz")
    differ = [j for j in src.jobs if j.requested_processors != j.allocated_processors]
    assert len(differ) == 219
    back, losses = _google(src, tmp_path)
    by_id = {j.extras["collection_id"]: j for j in back.jobs}
    assert all(by_id[j.job_number].allocated_processors == j.allocated_processors for j in src.jobs)
    assert losses.count("requested_processors") == 219
    assert back.header.max_procs == src.header.max_procs == 100
    assert back.header.max_nodes == src.header.max_nodes


def test_google_keeps_the_allocated_slot_of_a_grid_engine_job(
    shared_data: Path, tmp_path: Path
) -> None:
    src = schedlab.read(
        shared_data / "sge" / "pretty-accounting_uge8x_ms_accounting.txt", job_numbers="sge"
    )
    (position,) = [
        i
        for i, j in enumerate(src.jobs)
        if (j.job_number, j.allocated_processors, j.requested_processors) == (42, 1, 20)
    ]
    back, losses = _google(src, tmp_path)
    cid = _collection_ids(src.jobs, Losses())[position]
    (again,) = [j for j in back.jobs if j.extras["collection_id"] == cid]
    assert again.allocated_processors == 1
    assert losses.count("requested_processors") >= 1


# ------------------------------------------------------------------ Grid Engine writer


def _sge(workload: Workload, tmp_path: Path, fmt: str) -> tuple[Workload, Losses]:
    name = "accounting.jsonl" if fmt == "sge-jsonl" else "accounting"
    with collect_losses() as losses:
        schedlab.write(workload, tmp_path / name, format=fmt, order="workload")
    back = schedlab.read(tmp_path / name, format=fmt, job_numbers="sge", order="file")
    return back, losses


UNKNOWNS = Job(
    job_number=7,
    submit_time=100,
    wait_time=None,
    run_time=50,
    allocated_processors=4,
    average_cpu_time=None,
    used_memory=None,
    requested_processors=None,
    status=None,
)


def test_sge_jsonl_keeps_unknown_cpu_and_memory_unknown(tmp_path: Path) -> None:
    back, losses = _sge(Workload.from_jobs([UNKNOWNS], Header()), tmp_path, "sge-jsonl")
    (job,) = back.jobs
    assert job.job_number == 7 and job.run_time == 50 and job.allocated_processors == 4
    assert job.average_cpu_time is None and job.used_memory is None
    for field in ("status", "wait_time", "requested_processors"):
        assert losses.count(field) == 1, field
    assert "average_cpu_time" not in losses and "used_memory" not in losses


def test_sge_colon_reports_what_it_must_invent(tmp_path: Path) -> None:
    back, losses = _sge(Workload.from_jobs([UNKNOWNS], Header()), tmp_path, "sge")
    (job,) = back.jobs
    assert job.job_number == 7
    for field in (
        "status",
        "wait_time",
        "requested_processors",
        "average_cpu_time",
        "used_memory",
    ):
        assert losses.count(field) == 1, field
    assert losses.count("header.UnixStartTime")  # no origin: one was chosen
    assert job.status == 1 and job.wait_time == 0  # what was reported


@pytest.mark.parametrize("fmt", ["sge", "sge-jsonl"])
def test_sge_negative_run_time_never_ends_before_it_starts(
    swf_dir: Path, tmp_path: Path, fmt: str
) -> None:
    src = schedlab.read(swf_dir / "wagap-2013_alea-extended.swf", lenient=True)
    negative = sum(1 for j in src if j.run_time is not None and j.run_time < 0)
    assert negative == 2
    back, losses = _sge(src, tmp_path, fmt)  # the reader used to reject it
    assert len(back.jobs) == 17_900
    assert losses.count("run_time") == negative


# ------------------------------------------------------------------ the CLI


class Result:
    """Exit code and standard error of one command."""

    def __init__(self, exit_code: int, stderr: str) -> None:
        self.exit_code, self.stderr = exit_code, stderr


@pytest.fixture()
def run(capsys: pytest.CaptureFixture) -> object:
    def _run(*args: str) -> Result:
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        return Result(code, capsys.readouterr().err)

    return _run


def test_convert_prints_the_loss_summary(swf_dir: Path, tmp_path: Path, run) -> None:
    out = tmp_path / "cell"
    result = run("convert", str(swf_dir / "lublin_256.swf"), str(out), "--to", "google")
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    start = lines.index("schedlab: what cell could not carry (field: records, what was done):")
    summary = lines[start + 1 :]
    assert "  run_time: 10,000 records, not written (start unknown: events need a start time)" in (
        summary
    )
    assert any(line.startswith("  header: ") for line in summary)


def test_a_lossless_conversion_prints_no_summary(swf_dir: Path, tmp_path: Path, run) -> None:
    result = run(
        "convert", str(swf_dir / "lublin_256.swf"), str(tmp_path / "x.swf"), "--strict-lossless"
    )
    assert result.exit_code == 0, result.stderr
    assert "could not carry" not in result.stderr


def test_strict_lossless_refuses_and_writes_nothing(swf_dir: Path, tmp_path: Path, run) -> None:
    out = tmp_path / "cell"
    result = run(
        "convert",
        str(swf_dir / "lublin_256.swf"),
        str(out),
        "--to",
        "google",
        "--strict-lossless",
    )
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line == (
        "schedlab: error: conversion would lose header.Version in 1 record (not written "
        "(v3 tables have no header)) (and 11 more kind(s) of loss, --all-losses lists all 12); "
        "nothing written (--strict-lossless)"
    )
    assert "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_strict_lossless_keeps_an_existing_output(shared_data: Path, tmp_path: Path, run) -> None:
    out = tmp_path / "o.swf"
    out.write_text("keep me\n")
    source = shared_data / "sge" / "gbsc_utils_ogetools_test_data.accounting"
    result = run("convert", str(source), str(out), "--strict-lossless")
    assert result.exit_code == 2
    assert "extras.sge_record" in result.stderr
    assert out.read_text() == "keep me\n"


def test_losses_serialise_to_json() -> None:
    losses = Losses([Loss("a", 2, "x")])
    expected = [{"field": "a", "records": 2, "action": "x"}]
    assert json.loads(json.dumps(losses.as_dicts())) == expected


def test_google_carries_cpu_time_and_memory_as_usage(swf_dir: Path, tmp_path: Path) -> None:
    src = _head(swf_dir / "LANL-CM5-1994-4.1-cln.swf.gz", 2000)
    both = [
        j
        for j in src.jobs
        if j.average_cpu_time is not None and j.used_memory is not None and j.run_time
    ]
    assert len(both) == 1324
    back, losses = _google(src, tmp_path)
    by_id = {j.extras["collection_id"]: j for j in back.jobs}
    for job in both:
        again = by_id[job.job_number]
        assert again.average_cpu_time == pytest.approx(job.average_cpu_time, rel=1e-9)
        assert again.used_memory == pytest.approx(job.used_memory, rel=1e-9)
    # the jobs whose usage cannot be written are reported as not written; the
    # others only where the reader's division does not give the value back exactly
    not_written = sum(
        loss.records
        for loss in losses
        if loss.field == "average_cpu_time" and loss.action.startswith("not written")
    )
    assert not_written == len(src.jobs) - len(both) - sum(
        1 for j in src.jobs if j.average_cpu_time is None
    )
    inexact = sum(
        1 for job in both if by_id[job.job_number].average_cpu_time != job.average_cpu_time
    )
    assert losses.count("average_cpu_time") == not_written + inexact


def test_a_writer_that_reports_nothing_gets_a_warning(
    tmp_path: Path, run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its losses are unknown: a warning naming it, and --strict-lossless refuses
    it (nothing written), since it cannot check the conversion."""
    from schedlab.formats.swf import writer as swf_writer

    def silent(workload: Workload, path: object, **options: object) -> None:
        Path(str(path)).write_text("; nothing\n")

    monkeypatch.setattr(swf_writer, "write_swf", silent)
    source = tmp_path / "in.swf"
    source.write_text("1 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n")
    result = run("convert", str(source), str(tmp_path / "out.swf"))
    assert result.exit_code == 0
    assert (
        "schedlab: warning: writer 'swf' does not report what it could not carry (losses unknown)"
    ) in result.stderr
    result = run("convert", str(source), str(tmp_path / "strict.swf"), "--strict-lossless")
    assert result.exit_code == 2
    assert "writer 'swf' does not report" in result.stderr
    assert not (tmp_path / "strict.swf").exists()


def test_swf_reports_a_job_that_reads_back_as_a_part_of_the_one_before(tmp_path: Path) -> None:
    jobs = [
        Job(job_number=4, submit_time=0, run_time=10, status=1),
        Job(job_number=4, submit_time=5, run_time=3, status=2),
        Job(job_number=5, submit_time=6, run_time=3, status=2),
    ]
    with collect_losses() as losses:
        schedlab.write(Workload.from_jobs(jobs), tmp_path / "x.swf")
    back = schedlab.read(tmp_path / "x.swf")
    assert len(back.jobs) == 2 and len(back.jobs[0].extras["swf_parts"]) == 1
    assert losses.count("job_number") == 1


def test_note_table_entries_counts_unused_entries_and_text_after_names() -> None:
    from schedlab.losses import note_table_entries

    header = Header()
    header.add("Queue", "1 batch")
    header.add("Queue", "2 debug short jobs only")
    header.add("Queue", "3 idle")
    losses = Losses()
    # 1 is used and plain; 2 is used but carries text after its name; 3 is unused.
    assert note_table_entries(losses, header, "Queue", {1, 2}, "gone") == 2
    assert list(losses) == [Loss(field="header.Queue", records=2, action="gone")]
    # Every entry used and plain: nothing is added.
    plain = Losses()
    assert note_table_entries(plain, header, "Queue", {1, 2, 3}) == 1
    assert note_table_entries(plain, header, "User", {1}) == 0
    assert [loss.records for loss in plain] == [1]
