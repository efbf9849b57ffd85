"""Known leftovers (group B): the reader option ``columns=`` checks sacct's names,
and ``REQUEUE_HOLD`` / ``REQUEUE_FED`` records with an End are ended runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from schedlab import FormatError
from schedlab.testing import run_cli as run

from schedlab_slurm.reader import read
from schedlab_slurm.writer import write

HEAD = (
    "JobID|JobIDRaw|Partition|User|Submit|Start|End|Elapsed|ElapsedRaw|Timelimit|"
    "TimelimitRaw|State|ExitCode|NNodes|AllocCPUS|NCPUS|ReqCPUS|ReqMem|NodeList|JobName"
)
GOOD = (
    "10|10|p|u|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:10|00:01:00|60|"
    "00:10:00|10|COMPLETED|0:0|1|4|4|4|4000M|n01|j"
)
HEADERLESS = "5|2024-01-01T00:00:00|2024-01-01T00:01:00|2024-01-01T00:02:00|COMPLETED|3\n"


def dump(tmp_path: Path, *lines: str, name: str = "d.sacct") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def good(**changes: str) -> str:
    """GOOD with some columns changed."""
    values = dict(zip(HEAD.split("|"), GOOD.split("|"), strict=True))
    values.update(changes)
    return "|".join(values.values())


# ------------------------------------------------------------ 4. -R columns= names


def test_columns_option_refuses_a_name_sacct_does_not_have(tmp_path: Path) -> None:
    path = tmp_path / "custom.log"
    path.write_text(HEADERLESS, encoding="utf-8")
    with pytest.raises(FormatError) as info:
        read(path, columns="JobID|Submitt|Start|End|State|AllocCPUS")
    message = str(info.value)
    assert "columns" in message and "'Submitt'" in message, message
    assert "\n" not in message


def test_columns_option_takes_sacct_names_in_any_case(tmp_path: Path) -> None:
    path = tmp_path / "custom.log"
    path.write_text(HEADERLESS, encoding="utf-8")
    (job,) = read(path, columns="jobid|SUBMIT|start|End|state|alloccpus").jobs
    assert (job.wait_time, job.allocated_processors, job.status) == (60, 3, 1)


def test_columns_option_typo_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "custom.log"
    path.write_text(HEADERLESS, encoding="utf-8")
    code, _, err = run(
        capsys,
        "convert",
        str(path),
        str(tmp_path / "out.swf"),
        "--from",
        "slurm",
        "-R",
        "columns=JobID|Submit|Start|End|Stat|AllocCPUS",
    )
    assert code == 2, err
    assert "'Stat'" in err and "columns" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


# ------------------------------------------------- 5. REQUEUE_HOLD and REQUEUE_FED


@pytest.mark.parametrize("state", ["REQUEUE_HOLD", "REQUEUE_FED"])
def test_requeue_hold_and_fed_with_an_end_are_ended_runs(tmp_path: Path, state: str) -> None:
    path = dump(tmp_path, HEAD, good(State=state))
    (job,) = read(path).jobs
    assert (job.wait_time, job.run_time, job.allocated_processors) == (10, 60, 4)
    assert job.status == 0  # as REQUEUED: the run ended, the job goes on later
    assert job.extras["slurm.State"] == state


@pytest.mark.parametrize("state", ["REQUEUE_HOLD", "REQUEUE_FED"])
def test_requeue_hold_and_fed_without_an_end_have_not_ended(tmp_path: Path, state: str) -> None:
    path = dump(
        tmp_path, HEAD, good(State=state, End="Unknown", Elapsed="00:00:00", ElapsedRaw="0")
    )
    (job,) = read(path).jobs
    assert job.status is None and job.run_time is None


@pytest.mark.parametrize("state", ["REQUEUE_HOLD", "REQUEUE_FED"])
def test_requeue_hold_run_longer_than_end_minus_start_is_refused(
    tmp_path: Path, state: str
) -> None:
    path = dump(tmp_path, HEAD, good(State=state, Elapsed="00:05:00", ElapsedRaw="300"))
    with pytest.raises(FormatError) as info:
        read(path)
    assert info.value.field == "ElapsedRaw"


def test_requeue_hold_is_written_back(tmp_path: Path) -> None:
    path = dump(tmp_path, HEAD, good(State="REQUEUE_HOLD"))
    workload = read(path)
    out = tmp_path / "back.sacct"
    write(workload, out)
    (job,) = read(out).jobs
    assert job.status == 0 and job.extras["slurm.State"] == "REQUEUE_HOLD"
