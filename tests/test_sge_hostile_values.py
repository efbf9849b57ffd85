"""Values the Grid Engine reader accepted or the Grid Engine writers wrote although
the other side could not take them (the audit "hostile", findings 1-4):

1. origins before 1970 or far in the future: the writers wrote time stamps their
   own readers refuse (negative; JSONL beyond 2**53 - 1 µs) or misread (colon
   seconds from 1e11 on are read as milliseconds);
2. requests in the category (``h_rt``, ``h_vmem``, ``-pe N``) beyond the bounds
   the reader holds a record's own fields to;
3. negative and huge CPU times, memory and processor counts from SWF;
4. values changed in the last digit (``123.98`` -> ``123.97999999999999``) or cut
   below a microsecond without a report: real files are compared exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import schedlab
from schedlab.errors import FormatError
from schedlab.formats.sge import mapping, reader
from schedlab.losses import Losses, collect_losses
from schedlab.model import SWF_FIELDS, Header, Job, Workload
from schedlab.testing import run_cli as run

WRITERS = ("sge", "sge-jsonl")
OUT = {"sge": "accounting", "sge-jsonl": "accounting.jsonl"}
TIMES = ("submit_time", "wait_time", "run_time")

GOOD = (
    "all.q:node1:users:alice:job:17:sge:0:1700000000:1700000010:1700000110:0:0:100:"
    "90.0:10.0:2048:0:0:0:0:10:0:0:0:0:0:0:0:5:1:NONE:defaultdepartment:NONE:1:0:"
    "100.000000:1.000000:0.001000:CATEGORY:0.000000:NONE:1048576.000000:0:0"
)
GOOD_JSON: dict[str, Any] = json.loads(
    '{"job_number":17,"task_number":0,"start_time":1700000010000000,'
    '"end_time":1700000110000000,"owner":"alice","group":"users","account":"sge",'
    '"qname":"all.q","hostname":"node1","department":"defaultdepartment","slots":1,'
    '"job_name":"job","priority":0,"submission_time":1700000000000000,'
    '"category":"-l h_rt=3600","failed":0,"exit_status":0,'
    '"usage":{"rusage":{"ru_wallclock":100,"ru_utime":90.0,"ru_stime":10.0},'
    '"eusage":{"wallclock":100.0,"cpu":100.0,"mem":1.0,"io":0.0,"iow":0.0,'
    '"maxvmem":1048576.0}}}'
)


def _write_read(workload: Workload, writer: str, tmp: Path) -> tuple[Workload, Losses]:
    out = tmp / OUT[writer]
    with collect_losses() as losses:
        schedlab.write(workload, out, format=writer, order="workload")
    back = schedlab.read(out, format=writer, job_numbers="sge", order="file")
    back.jobs  # noqa: B018 - materialised
    return back, losses


def _job(number: int, submit: float, wait: float | None, run: float | None, **kw: Any) -> Job:
    values: dict[str, Any] = {
        "allocated_processors": 4,
        "requested_processors": 4,
        "status": 1,
        "user_id": 1,
        "queue_number": 1,
    }
    values.update(kw)
    return Job(job_number=number, submit_time=submit, wait_time=wait, run_time=run, **values)


def _workload(jobs: list[Job], origin: int | None) -> Workload:
    header = Header()
    if origin is not None:
        header.set("UnixStartTime", origin)
    return Workload.from_jobs(jobs, header)


# ------------------------------------------------------------- 1. the origin


@pytest.mark.parametrize(
    ("writer", "origin"),
    [
        *((w, o) for w in WRITERS for o in (-86400, -1, 0, 2 * 10**11, 99_999_999_990)),
        ("sge-jsonl", 10**10),  # (the colon layout holds seconds up to 1e11)
        ("sge-jsonl", 9_007_199_000),
    ],
)
def test_an_origin_the_reader_cannot_take_is_replaced_and_reported(
    tmp_path: Path, writer: str, origin: int
) -> None:
    """The times read back are the times written (the reader read colon records of
    year 8307 as milliseconds: every time / 1000), and the replaced origin is the
    one loss."""
    jobs = [_job(1, 0, 10, 3600), _job(2, 60, 20, 100.5)]
    back, losses = _write_read(_workload(jobs, origin), writer, tmp_path)
    for src, again in zip(jobs, back.jobs, strict=True):
        for field in TIMES:
            if field == "run_time" and writer == "sge" and src.run_time == 100.5:
                continue  # the colon layout rounds to whole seconds (reported)
            assert getattr(again, field) == getattr(src, field), field
    assert losses.count("header.UnixStartTime") == 1
    (action,) = [loss.action for loss in losses if loss.field == "header.UnixStartTime"]
    assert f"from {origin}" in action and "absolute times not kept" in action
    # the file passes a strict read
    assert len(schedlab.read(tmp_path / OUT[writer], format=writer).jobs) == 2


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("origin", [1, 8_000_000_000])
def test_an_origin_that_fits_is_kept(tmp_path: Path, writer: str, origin: int) -> None:
    jobs = [_job(1, 0, 10, 3600), _job(2, 60, 20, 100)]
    back, losses = _write_read(_workload(jobs, origin), writer, tmp_path)
    assert back.header.unix_start_time == origin
    assert [j.submit_time for j in back.jobs] == [0, 60]
    assert not losses.count("header.UnixStartTime")


@pytest.mark.parametrize("writer", WRITERS)
def test_negative_submit_times_are_written_from_an_origin_that_keeps_them_positive(
    tmp_path: Path, writer: str
) -> None:
    jobs = [_job(1, -2 * 10**9, 10, 100), _job(2, 0, 5, 5)]
    back, losses = _write_read(_workload(jobs, None), writer, tmp_path)
    assert [j.wait_time for j in back.jobs] == [10, 5]
    assert back.jobs[1].submit_time - back.jobs[0].submit_time == 2 * 10**9
    assert losses.count("header.UnixStartTime")


@pytest.mark.parametrize("writer", WRITERS)
def test_times_no_origin_can_hold_are_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], writer: str
) -> None:
    """A trace spanning 1e12 s cannot be written in either layout (colon: 1e11 s,
    JSONL: 2**53 - 1 µs): an error naming the file, and nothing written."""
    source = tmp_path / "wide.swf"
    source.write_text(
        "; UnixStartTime: 0\n; MaxProcs: 64\n"
        " 1 0 10 1000000000000 4 -1 -1 4 1000000000000 -1 1 1 1 -1 1 -1 -1 -1\n"
        " 2 5 0 5 4 -1 -1 4 10 -1 1 1 1 -1 1 -1 -1 -1\n"
    )
    out = tmp_path / OUT[writer]
    with pytest.raises(FormatError) as info:
        schedlab.write(schedlab.read(source), out, format=writer)
    assert "cannot be written" in str(info.value) and "\n" not in str(info.value)
    assert not out.exists()
    capsys.readouterr()
    code, _out, err = run(capsys, "convert", str(source), str(out), "--to", writer)
    assert code == 2
    errors = [line for line in err.splitlines() if "error" in line]
    assert len(errors) == 1 and "cannot be written" in errors[0]
    assert "Traceback" not in err and not out.exists()


# ------------------------------------------------------------- 2. category bounds


def _read_both(monkeypatch: pytest.MonkeyPatch, path: Path, **options: Any) -> Any:
    """The workload (or the error) of the bulk path, checked to be the careful
    path's too."""
    results = []
    for bulk_path in (True, False):
        monkeypatch.setattr(reader, "BULK", bulk_path)
        try:
            workload = schedlab.read(path, format="sge", workers=1, **options)
        except FormatError as exc:
            results.append(("error", str(exc), exc.line, exc.field))
            continue
        columns = workload.to_arrays()
        results.append(
            (
                workload,
                {name: columns[name].tobytes() for name in SWF_FIELDS},
                workload.meta["skipped"],
                workload.meta["rejects"],
            )
        )
    monkeypatch.setattr(reader, "BULK", True)
    fast, careful = results
    assert fast[1:] == careful[1:]
    return fast


OUT_OF_RANGE = [
    ("-l h_rt=99999999999999999", "h_rt out of range"),
    ("-l h_rt=1e400", "h_rt out of range"),
    ("-l s_rt=9999999999999:00:00", "s_rt out of range"),
    ("-l h_vmem=99999999999999999999T", "h_vmem out of range"),
    ("-l h_rt=3600,mem_free=9007199254740993K", "mem_free out of range"),
    ("-pe shm 99999999999999999999", "-pe slots out of range"),
]


@pytest.mark.parametrize(("category", "message"), OUT_OF_RANGE)
def test_a_request_beyond_the_bounds_is_an_error_naming_line_and_field(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    category: str,
    message: str,
) -> None:
    good = GOOD.replace("CATEGORY", "-l h_rt=3600")
    bad = GOOD.replace("CATEGORY", category).replace(":job:17:", ":job:18:")
    path = tmp_path / "accounting"
    path.write_text("\n".join([good, bad, good.replace(":job:17:", ":job:19:")]) + "\n")
    kind, text, line, field = _read_both(monkeypatch, path)
    assert (kind, line, field) == ("error", 2, "category")
    assert message in text
    lenient = _read_both(monkeypatch, path, lenient=True)
    assert lenient[2] == 1 and lenient[3] == [(2, bad)]
    assert len(lenient[0].jobs) == 2
    capsys.readouterr()
    code, out, err = run(capsys, "validate", "--strict", str(path))
    assert code != 0 and message in out + err


@pytest.mark.parametrize(("category", "message"), OUT_OF_RANGE)
def test_a_jsonl_request_beyond_the_bounds_is_an_error(
    tmp_path: Path, category: str, message: str
) -> None:
    path = tmp_path / "accounting.jsonl"
    bad = {**GOOD_JSON, "category": category, "job_number": 18}
    path.write_text("\n".join(json.dumps(r) for r in (GOOD_JSON, bad)) + "\n")
    with pytest.raises(FormatError) as info:
        schedlab.read(path)
    assert (info.value.line, info.value.field) == (2, "category")
    assert message in str(info.value)
    assert schedlab.read(path, lenient=True).meta["skipped"] == 1


def test_a_submit_command_line_beyond_the_bounds_is_an_error_where_it_is_read(
    tmp_path: Path,
) -> None:
    """The command line is read for what the category does not say: there an
    out-of-range value is an error naming ``submit_cmd_line``; where the category
    says it, the command line is not read."""
    path = tmp_path / "accounting.jsonl"
    cmdline = "qsub -l h_rt=99999999999999999 job.sh"
    used = {**GOOD_JSON, "category": "", "submit_cmd_line": cmdline}
    unused = {**GOOD_JSON, "submit_cmd_line": cmdline, "job_number": 18}
    path.write_text("\n".join(json.dumps(r) for r in (unused, used)) + "\n")
    with pytest.raises(FormatError) as info:
        schedlab.read(path)
    assert (info.value.line, info.value.field) == (2, "submit_cmd_line")
    lenient = schedlab.read(path, lenient=True)
    assert lenient.meta["skipped"] == 1
    assert lenient.jobs[0].requested_time == 3600


def test_requests_at_the_bounds_are_read() -> None:
    requested = mapping.parse_requests(
        "-l h_rt=1000000000000,h_vmem=8191T -pe mpi 9007199254740991"
    )
    assert requested == (1e12, 9007199254740991.0, 8191 * 1024**3)
    assert mapping.request_problems(
        "-l h_rt=1000000000000,h_vmem=8191T -pe mpi 9007199254740991"
    ) == (
        None,
        None,
        None,
    )
    assert mapping.request_problems("-l h_rt=1000000000001")[0] is not None


@pytest.mark.parametrize("value", ["1_000", "+5", "-5", "nan", "inf", "0x10", "\u0661\u0662"])
def test_a_request_that_is_not_a_number_is_unknown(value: str) -> None:
    """``float()`` read ``1_000``, ``nan`` ..., which are not numbers in a record."""
    seconds, _procs, _memory = mapping.parse_requests(f"-l h_rt={value}")
    assert seconds != seconds  # NaN: unknown
    assert mapping.request_problems(f"-l h_rt={value}") == (None, None, None)
    assert (
        mapping.parse_requests(f"-pe mpi {value}")[1]
        != mapping.parse_requests(f"-pe mpi {value}")[1]
    )


# ------------------------------------------------------------- 3. CPU time, memory, counts


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize(
    ("job", "field", "action"),
    [
        (_job(1, 0, 10, 100, average_cpu_time=-3), "average_cpu_time", "negative"),
        (_job(1, 0, 10, 100, used_memory=-3), "used_memory", "negative"),
        (
            _job(1, 0, 10, 100, allocated_processors=2**53 - 1, average_cpu_time=5),
            "average_cpu_time",
            "above the reader's 1e12 s",
        ),
        (
            _job(1, 0, 10, 100, allocated_processors=2**40, used_memory=2**20),
            "used_memory",
            "above the reader's 2**53 - 1 bytes",
        ),
    ],
)
def test_usage_the_reader_refuses_is_not_written_and_is_reported(
    tmp_path: Path, writer: str, job: Job, field: str, action: str
) -> None:
    back, losses = _write_read(_workload([job], 10**9), writer, tmp_path)
    expected = 0 if writer == "sge" else None  # colon: 0; JSONL: the key left out
    assert getattr(back.jobs[0], field) == expected
    assert any(loss.field == field and action in loss.action for loss in losses), losses
    assert back.jobs[0].wait_time == 10 and back.jobs[0].run_time == 100


@pytest.mark.parametrize("writer", WRITERS)
def test_negative_counts_and_requests_are_written_as_unknown_and_reported(
    tmp_path: Path, writer: str
) -> None:
    job = _job(
        1, 0, 10, 100, allocated_processors=-4, requested_processors=-4,
        requested_time=-20, requested_memory=-5,
    )  # fmt: skip
    back, losses = _write_read(_workload([job], 10**9), writer, tmp_path)
    again = back.jobs[0]
    assert again.allocated_processors == 1 and again.requested_processors == 1
    assert again.requested_time is None and again.requested_memory is None
    for field in ("allocated_processors", "requested_processors", "requested_time"):
        assert losses.count(field) == 1, field
    assert losses.count("requested_memory") == 1


# ------------------------------------------------------------- 4. exact values


@pytest.mark.parametrize("writer", WRITERS)
def test_cpu_totals_divide_back_exactly_or_are_reported(tmp_path: Path, writer: str) -> None:
    """123.98 x 2 divides back exactly; x 40 no float total does (reported)."""
    jobs = [
        _job(1, 0, 1, 1, allocated_processors=2, average_cpu_time=123.98, used_memory=0.1),
        _job(2, 1, 1, 1, allocated_processors=3, average_cpu_time=0.25, used_memory=0.75),
        _job(3, 2, 1, 1, allocated_processors=40, average_cpu_time=123.98),
    ]
    back, losses = _write_read(_workload(jobs, 10**9), writer, tmp_path)
    for src, again in zip(jobs[:2], back.jobs[:2], strict=True):
        assert again.average_cpu_time == src.average_cpu_time
        assert again.used_memory == src.used_memory
    assert back.jobs[2].average_cpu_time != 123.98
    assert losses.count("average_cpu_time") == 1
    assert not [loss for loss in losses if loss.field == "used_memory" and "round" in loss.action]


def test_jsonl_times_are_exact_to_the_microsecond_and_finer_ones_are_reported(
    tmp_path: Path,
) -> None:
    jobs = [
        _job(1, 0.265, 8.457795, 64.103),
        _job(2, 5.123456789, 1e-9, 1),
    ]
    back, losses = _write_read(_workload(jobs, 1_000_000_000), "sge-jsonl", tmp_path)
    first = back.jobs[0]
    assert (first.submit_time, first.wait_time, first.run_time) == (0.265, 8.457795, 64.103)
    second = back.jobs[1]
    assert (second.submit_time, second.wait_time) == (5.123457, 0)
    assert losses.count("submit_time") == 1 and losses.count("wait_time") == 1
    assert not losses.count("run_time")


@pytest.mark.parametrize("writer", WRITERS)
def test_small_fractional_requests_are_written_without_an_exponent(
    tmp_path: Path, writer: str
) -> None:
    """``h_vmem=1e-05K`` did not read back (a memory size has no exponent)."""
    job = _job(1, 0, 1, 1, requested_time=1e-05, requested_memory=2.5e-05)
    back, losses = _write_read(_workload([job], 10**9), writer, tmp_path)
    assert back.jobs[0].requested_time == 1e-05
    assert back.jobs[0].requested_memory == 2.5e-05
    assert not losses.count("requested_memory") and not losses.count("requested_time")


def _sources(shared: Path) -> list[tuple[Path, dict[str, Any]]]:
    out: list[tuple[Path, dict[str, Any]]] = []
    for name in ("HPC2N-2002_excerpt-3170jobs_alea.swf", "lublin_256.swf"):
        out.append((shared / "swf" / name, {"format": "swf"}))
    for path in sorted((shared / "sge").iterdir()):
        if path.is_file():
            reader_name = "sge-jsonl" if path.suffix == ".jsonl" else "sge"
            out.append((path, {"format": reader_name, "job_numbers": "sge", "order": "file"}))
    return out


def _groupings_differ(src: list[Any], back: list[Any]) -> int:
    forward: dict[Any, Any] = {}
    backward: dict[Any, Any] = {}
    bad = 0
    for a, b in zip(src, back, strict=True):
        if (a is None) != (b is None) or (
            a is not None and (forward.setdefault(a, b) != b or backward.setdefault(b, a) != a)
        ):
            bad += 1
    return bad


NAMED = ("user_id", "group_id", "queue_number", "partition_number", "executable_number")


@pytest.mark.parametrize("writer", WRITERS)
def test_real_files_round_trip_exactly_or_report(
    shared_data: Path, tmp_path: Path, writer: str
) -> None:
    """Every real Grid Engine file and two SWF files through both writers: every
    value read back is *equal* to the source's (no tolerance: the conversion
    matrix's 1e-6 hid 57 CPU times of HPC2N changed in the last digit), or the
    writer reported the field for at least as many records."""
    for path, options in _sources(shared_data):
        src = schedlab.read(path, **options)
        jobs = src.jobs
        back, losses = _write_read(src, writer, tmp_path)
        assert len(back.jobs) == len(jobs), path.name
        so, bo = src.header.unix_start_time, back.header.unix_start_time
        if so is not None:
            shift = so - bo
        else:  # (written from 2000-01-01, reported; read back from the first job)
            assert losses.count("header.UnixStartTime")
            shift = next(
                b.submit_time - a.submit_time
                for a, b in zip(jobs, back.jobs, strict=True)
                if a.submit_time is not None
            )
        differ: dict[str, int] = {}
        for a, b in zip(jobs, back.jobs, strict=True):
            for field in SWF_FIELDS:
                if field in NAMED:
                    continue
                x, y = getattr(a, field), getattr(b, field)
                if field == "submit_time" and x is not None and shift:
                    x = x + shift
                if x != y and not (x is None and y is None):
                    differ[field] = differ.get(field, 0) + 1
        for field in NAMED:
            bad = _groupings_differ(
                [getattr(j, field) for j in jobs], [getattr(j, field) for j in back.jobs]
            )
            if bad:
                differ[field] = bad
        unreported = {f: (n, losses.count(f)) for f, n in differ.items() if losses.count(f) < n}
        assert not unreported, f"{path.name} -> {writer}: {unreported}"
