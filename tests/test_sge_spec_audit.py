"""Grid Engine / OCS accounting checked against the specification (audit sgespec):
JSONL -> colon reports every usage value it drops (and colon -> JSONL the maxrss it
fills in); requests are read only from the qsub options of ``submit_cmd_line``;
``validate --strict`` passes files whose records were grouped; an intermediate
``acct`` record of a job still running is not a failed job; the header Note says
what was used; ``#`` comment lines are written back byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import schedlab
from schedlab.cli import main
from schedlab.validation import ERROR, WARNING, check_workload

SGE = Path("/work/shared/data/sge")
OCS900 = SGE / "ocs-9.0.0_release-notes_accounting.jsonl"
GBSC = SGE / "gbsc_utils_ogetools_test_data.accounting"


def _ocs_record() -> dict:
    return json.loads(OCS900.read_text().splitlines()[0])


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    return path


def _losses(workload: schedlab.Workload, path: Path, fmt: str) -> dict[str, str]:
    with schedlab.collect_losses() as losses:
        schedlab.write(workload, path, format=fmt)
    return {loss.field: str(loss) for loss in losses}


def _strict_problems(path: Path) -> list:
    return [f for f in check_workload(schedlab.read(path)) if f.severity in (ERROR, WARNING)]


# ------------------------------------------------- 1. usage values JSONL -> colon


def _rich_record() -> dict:
    """The OCS record with an eusage block holding ioops and maxpss, a custom
    container, whole-second times and no submit_cmd_line (as the audit's mk_f1)."""
    d = _ocs_record()
    d.pop("submit_cmd_line")
    for key in ("start_time", "end_time", "submission_time"):
        d[key] = d[key] // 1_000_000 * 1_000_000
    usage = d["usage"]
    execd = usage.pop("usage")
    eusage = {}
    for key, value in execd.items():
        eusage[key] = value
        if key == "io":
            eusage["ioops"] = 1234
    eusage["maxpss"] = 777777.0
    usage["eusage"] = eusage
    usage["gpu_usage"] = {"gpu_seconds": 360.0}
    return d


def test_jsonl_to_colon_reports_every_dropped_usage_value(tmp_path: Path) -> None:
    source = _jsonl(tmp_path / "f1.accounting.jsonl", [_rich_record()])
    losses = _losses(schedlab.read(source), tmp_path / "out.accounting", "sge")
    for key in ("wallclock", "ioops", "maxrss", "maxpss"):
        assert f"extras.sge_record.usage.eusage.{key}" in losses, (key, sorted(losses))
    assert "extras.sge_record.usage.gpu_usage" in losses
    # the kept values are not reported
    for key in ("cpu", "mem", "io", "iow", "maxvmem"):
        assert f"extras.sge_record.usage.eusage.{key}" not in losses


def test_jsonl_to_colon_strict_lossless_refuses(tmp_path: Path) -> None:
    source = _jsonl(tmp_path / "f1.accounting.jsonl", [_rich_record()])
    out = tmp_path / "out.accounting"
    with pytest.raises(SystemExit) as exc:
        main(["convert", str(source), str(out), "--to", "sge", "--strict-lossless"])
    assert exc.value.code == 2
    assert not out.exists()


def test_jsonl_to_colon_values_the_way_back_gives_again_are_not_reported(tmp_path: Path) -> None:
    d = _rich_record()
    eusage = d["usage"]["eusage"]
    del eusage["ioops"], eusage["maxpss"]
    del d["usage"]["gpu_usage"]
    eusage["wallclock"] = float((d["end_time"] - d["start_time"]) // 1_000_000)
    eusage["maxrss"] = float(d["usage"]["rusage"]["ru_maxrss"]) * 1024.0
    source = _jsonl(tmp_path / "exact.accounting.jsonl", [d])
    losses = _losses(schedlab.read(source), tmp_path / "out.accounting", "sge")
    assert not [f for f in losses if f.startswith("extras.sge_record.usage")], losses


def test_colon_to_jsonl_reports_the_maxrss_it_fills_in(tmp_path: Path) -> None:
    losses = _losses(schedlab.read(GBSC), tmp_path / "out.accounting.jsonl", "sge-jsonl")
    message = losses["extras.sge_record.usage.eusage.maxrss"]
    assert "ru_maxrss" in message


# -------------------------------------------- 2. requests in the submit command line


@pytest.mark.parametrize(
    ("cmdline", "seconds", "memory"),
    [
        ("qsub job.sh -l h_rt=999", None, None),  # after the script: the job's arguments
        ("qsub -b y sleep -l h_rt=5", None, None),
        ("qsub -v h_rt=7200 job.sh", None, None),  # an environment variable
        ("qsub -b y ./solver s_rt=60 mem_free=8G", None, None),
        ("qsub -b y sleep 100", None, None),
        ("qsub -l h_rt=100 job.sh -l h_rt=5", 100, None),
        ("qsub -N x -l s_rt=1:00,mem_free=1G -b y sleep 5", 60, 1024 * 1024),
        ("qsub -hard -l h_rt=30 -soft -l h_vmem=2G job.sh", 30, 2 * 1024 * 1024),
    ],
)
def test_requests_come_only_from_qsub_options(
    tmp_path: Path, cmdline: str, seconds: float | None, memory: float | None
) -> None:
    d = _ocs_record()
    d["category"] = ""
    d["submit_cmd_line"] = cmdline
    (job,) = schedlab.read(_jsonl(tmp_path / "c.accounting.jsonl", [d])).jobs
    assert job.requested_time == seconds
    assert job.requested_memory == memory


def test_qsub_requests_stop_at_the_command_and_at_unknown_options() -> None:
    from schedlab.formats.sge.mapping import qsub_requests

    assert qsub_requests("qsub -pe smp 4 -l h_rt=60 job.sh -pe mpi 8") == "-l h_rt=60 -pe smp 4"
    assert qsub_requests("qsub -o /dev/null -j y -b y -l gpu=2 sleep 100") == "-l gpu=2"
    assert qsub_requests("qsub -l h_rt=5 -- -l h_rt=9") == "-l h_rt=5"
    # an option schedlab does not know may take a value: nothing after it is read
    assert qsub_requests("qsub -l h_rt=5 -zz y -l h_vmem=1G job.sh") == "-l h_rt=5"
    assert qsub_requests("qsub -l 'h_rt=5,h_vmem=1G' job.sh") == "-l h_rt=5,h_vmem=1G"
    assert qsub_requests('qsub -l "h_rt=5 job.sh') == ""  # unbalanced quote: unknown


# ------------------------------------------------- 3. validate --strict and grouping


def test_validate_strict_passes_every_real_file() -> None:
    for path in sorted(SGE.iterdir()):
        if path.is_file():
            assert _strict_problems(path) == [], path


def _pe_job(path: Path) -> Path:
    base = next(line for line in GBSC.read_text().splitlines() if "-pe shm 4" in line)
    fields = base.split(":")
    start = int(fields[8])

    def record(**changes: str) -> str:
        out = list(fields)
        for index, value in changes.items():
            out[int(index[1:])] = value
        return ":".join(out)

    lines = [
        record(f1="h2", f9=str(start + 20), f10=str(start + 100), f36="100.0", f41="1.h2"),
        record(f1="h3", f9=str(start + 20), f10=str(start + 120), f36="200.0", f41="2.h3"),
        record(f36="10.0"),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_validate_strict_passes_a_parallel_job(tmp_path: Path) -> None:
    path = _pe_job(tmp_path / "pe.accounting")
    workload = schedlab.read(path)
    assert len(workload) == 1 and workload.meta["records"] == 3
    assert workload.header.max_jobs == 1
    assert _strict_problems(path) == []
    swf = tmp_path / "pe.swf"
    schedlab.write(workload, swf)
    assert _strict_problems(swf) == []


def test_header_of_ungrouped_file_unchanged() -> None:
    header = schedlab.read(GBSC).header
    assert header.max_jobs == header.max_records == len(schedlab.read(GBSC))


# ------------------------------------------------ 4. a job still running (reporting)

RUNNING = 4294967295


def _intermediate() -> dict:
    d = _ocs_record()
    r = {"time": 1725984000000000, "type": "acct"}
    r.update(d)
    r["end_time"] = 1725984000000000
    r["exit_status"] = RUNNING
    return r


def test_intermediate_record_is_a_job_still_running(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "reporting.jsonl", [_intermediate()])
    workload = schedlab.read(path, format="sge-jsonl")
    (job,) = workload.jobs
    assert job.status is None and job.run_time is None
    assert job.wait_time is not None and job.allocated_processors == 1
    assert job.average_cpu_time is None and job.used_memory is None
    (finding,) = [f for f in workload.meta["findings"] if f.check == "still-running"]
    assert finding.line == 1 and finding.severity not in (ERROR, WARNING)
    assert any("still running" in note for note in workload.header.notes)
    copy = tmp_path / "copy.jsonl"
    schedlab.write(workload, copy, format="sge-jsonl")
    assert copy.read_bytes() == path.read_bytes()


def test_final_record_wins_over_intermediate_in_any_order(tmp_path: Path) -> None:
    final = _ocs_record()
    final.update(time=1725990000000000, type="acct")
    for records in ([_intermediate(), final], [final, _intermediate()]):
        path = _jsonl(tmp_path / "reporting.jsonl", records)
        (job,) = schedlab.read(path, format="sge-jsonl").jobs
        assert job.status == 1 and job.run_time is not None
        (reference,) = schedlab.read(OCS900).jobs
        assert job.run_time == reference.run_time


# ------------------------------------------------------------- 5. the header Note


def test_note_says_which_memory_and_requested_time(tmp_path: Path) -> None:
    line = next(line for line in GBSC.read_text().splitlines() if "-pe shm 4" in line)
    fields = line.split(":")
    fields[39] = "-l s_rt=100 -pe shm 4"
    path = tmp_path / "f5.accounting"
    path.write_text(":".join(fields) + "\n")
    workload = schedlab.read(path, memory="maxrss")
    note = workload.header.notes[0]
    assert "memory (ru_maxrss)" in note and "(maxvmem)" not in note
    assert "s_rt" in note and "h_rt" not in note
    assert workload.jobs[0].requested_time == 100
    d = _ocs_record()
    d["category"] = ""
    d["submit_cmd_line"] = "qsub -l h_rt=100 job.sh"
    jsonl = schedlab.read(_jsonl(tmp_path / "c.accounting.jsonl", [d]), memory="maxrss")
    note = jsonl.header.notes[0]
    assert "memory (maxrss)" in note and "submit_cmd_line" in note


def test_note_of_default_reading_unchanged() -> None:
    note = schedlab.read(GBSC).header.notes[0]
    assert note.endswith(
        "CPU time and memory (maxvmem) are per slot; requested time is h_rt from the job category."
    )


# ------------------------------------------------------- 6. comments byte for byte


def test_comment_lines_are_written_back_byte_for_byte(tmp_path: Path) -> None:
    record = GBSC.read_text().splitlines()[0]
    path = tmp_path / "f6.accounting"
    path.write_text("#   indented  \n#\ttab\t\n" + record + "\n")
    out = tmp_path / "copy.accounting"
    schedlab.write(schedlab.read(path), out)
    assert out.read_bytes() == path.read_bytes()


# ------------------------------------------------------------ 7. task_number


def test_plain_ocs_job_keeps_its_task_number_1() -> None:
    (job,) = schedlab.read(SGE / "go-clusterscheduler_ocs900_accounting.jsonl").jobs
    assert job.extras["sge.task_number"] == 1
