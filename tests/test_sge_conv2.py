"""Conversion audit round 2 (conv2), the Grid Engine parts of findings 1, 2 and 5:
an origin that no written record carries is reported and read back as unknown (not
invented as 0); the names written for users, groups and queues never merge two
numbers, and every name that is not written as the header's is reported; free-text
header comments are reported."""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from schedlab.cli import main

FORMATS = ["sge", "sge-jsonl"]
REAL_UGE = Path("/work/shared/data/sge/pretty-accounting_uge8x_ms_accounting.txt")

NO_SUBMIT = "; UnixStartTime: 1000000000\n1 -1 -1 -1 -1 -1 -1 2 100 -1 5 1 1 -1 -1 -1 -1 -1\n"


def workload_of(tmp_path: Path, text: str, name: str = "in.swf") -> schedlab.Workload:
    path = tmp_path / name
    path.write_text(text)
    return schedlab.read(path)


def write_losses(workload: schedlab.Workload, path: Path, fmt: str) -> list:
    with schedlab.collect_losses() as losses:
        schedlab.write(workload, path, format=fmt)
    return list(losses)


def messages(losses: list, field: str) -> list[str]:
    return [str(loss) for loss in losses if loss.field == field]


# ------------------------------------------------------------------ 1. the origin


@pytest.mark.parametrize("fmt", FORMATS)
def test_origin_no_record_carries_is_reported_and_read_back_unknown(tmp_path, fmt):
    out = tmp_path / "out"
    losses = write_losses(workload_of(tmp_path, NO_SUBMIT), out, fmt)
    (message,) = messages(losses, "header.UnixStartTime")
    assert "no record written holds a time" in message
    back = schedlab.read(out, format=fmt)
    assert back.header.unix_start_time is None
    assert back.header.get("StartTime") is None
    assert back.jobs[0].submit_time is None and back.jobs[0].status == 5


@pytest.mark.parametrize("fmt", FORMATS)
def test_strict_lossless_refuses_to_lose_the_origin(tmp_path, fmt):
    source = tmp_path / "nosub.swf"
    source.write_text(NO_SUBMIT)
    with pytest.raises(SystemExit) as exc:
        main(["convert", str(source), str(tmp_path / "out"), "--to", fmt, "--strict-lossless"])
    assert exc.value.code == 2


@pytest.mark.parametrize("fmt", FORMATS)
def test_unknown_origin_without_times_stays_unknown_and_is_no_loss(tmp_path, fmt):
    out = tmp_path / "out"
    text = NO_SUBMIT.split("\n", 1)[1]  # no UnixStartTime: nothing to lose
    losses = write_losses(workload_of(tmp_path, text), out, fmt)
    assert not messages(losses, "header.UnixStartTime")
    assert schedlab.read(out, format=fmt).header.unix_start_time is None


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_workload_with_an_origin_loses_it(tmp_path, fmt):
    out = tmp_path / "out"
    losses = write_losses(workload_of(tmp_path, "; UnixStartTime: 1000000000\n"), out, fmt)
    assert messages(losses, "header.UnixStartTime")
    assert schedlab.read(out, format=fmt).header.unix_start_time is None


def test_reader_invents_no_origin_for_records_without_times(tmp_path):
    """The two records of the real UGE file that never ran (all times 0)."""
    lines = REAL_UGE.read_text().splitlines()[-2:]
    assert all(line.split(":")[8:11] == ["0", "0", "0"] for line in lines)
    never = tmp_path / "never.acc"
    never.write_text("\n".join(lines) + "\n")
    workload = schedlab.read(never, format="sge")
    assert len(workload.jobs) == 2
    assert workload.header.unix_start_time is None
    assert workload.header.get("StartTime") is None
    # the JSONL layout alike; and back: the same bytes
    jsonl = tmp_path / "never.jsonl"
    schedlab.write(workload, jsonl, format="sge-jsonl")
    assert schedlab.read(jsonl, format="sge-jsonl").header.unix_start_time is None
    schedlab.write(workload, tmp_path / "again.acc", format="sge")
    assert (tmp_path / "again.acc").read_text() == never.read_text()
    swf = tmp_path / "never.swf"
    schedlab.write(workload, swf, format="swf")
    assert "; UnixStartTime:" not in swf.read_text()


def test_reader_of_an_empty_file_invents_no_origin(tmp_path):
    empty = tmp_path / "empty.acc"
    empty.write_text("")
    assert schedlab.read(empty, format="sge").header.unix_start_time is None


# ------------------------------------------------------------------ 2. names


def _read_back(tmp_path: Path, text: str, fmt: str) -> tuple[list, schedlab.Workload]:
    out = tmp_path / "out"
    losses = write_losses(workload_of(tmp_path, text), out, fmt)
    return losses, schedlab.read(out, format=fmt)


JOB = "{n} {t} 5 10 1 -1 -1 1 100 -1 1 {u} {g} -1 {q} -1 -1 -1\n"


def _jobs(*rows: tuple[int, int, int]) -> str:
    return "".join(JOB.format(n=i + 1, t=5 * i, u=u, g=g, q=q) for i, (u, g, q) in enumerate(rows))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    ("label", "field", "rows"),
    [
        ("User", "user_id", [(1, 1, 1), (2, 1, 1)]),
        ("Group", "group_id", [(1, 1, 1), (1, 2, 1)]),
        ("Queue", "queue_number", [(1, 1, 1), (1, 1, 2)]),
    ],
)
def test_made_up_name_never_takes_a_header_name(tmp_path, fmt, label, field, rows):
    """Audit repro (pu.swf): `; User: 1 user2` with users 1 and 2 merged them."""
    prefix = label.lower()
    text = f"; UnixStartTime: 1000000000\n; {label}: 1 {prefix}2\n" + _jobs(*rows)
    losses, back = _read_back(tmp_path, text, fmt)
    numbers = [getattr(job, field) for job in back.jobs]
    assert len(set(numbers)) == 2 and None not in numbers
    names = back.header.names(label)
    assert names[numbers[0]] == f"{prefix}2"  # the header's name kept
    assert names[numbers[1]] != f"{prefix}2"
    assert not messages(losses, f"header.{label}")  # nothing renamed
    assert not messages(losses, field)


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_names_get_free_made_up_names_reported(tmp_path, fmt):
    """Audit repro (eu.swf): an empty name became `user1`, another user's name."""
    text = (
        "; UnixStartTime: 1000000000\n; User:  1  \n; User:  2 user1\n; Group: 1 \n"
        "; Group: 2 group1\n" + _jobs((1, 1, 1), (2, 2, 1))
    )
    losses, back = _read_back(tmp_path, text, fmt)
    users = [job.user_id for job in back.jobs]
    groups = [job.group_id for job in back.jobs]
    assert len(set(users)) == 2 and len(set(groups)) == 2
    assert back.header.names("User")[users[1]] == "user1"
    for label in ("User", "Group"):
        (message,) = messages(losses, f"header.{label}")
        assert "1 record" in message and "empty name" in message


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_queue_name_is_reported_as_renamed(tmp_path, fmt):
    """RICC-2010-2 has `; Queue:  1  `: reported for what happens to it (a made-up
    name), not as an entry no job uses."""
    text = "; UnixStartTime: 1000000000\n; Queue:  1  \n; Queue:  2 0 \n" + _jobs((1, 1, 1))
    losses, back = _read_back(tmp_path, text, fmt)
    assert back.jobs[0].queue_number is not None
    found = messages(losses, "header.Queue")
    assert len(found) == 2, found
    assert any("empty name" in m and "1 record" in m for m in found)
    assert any("no job uses" in m and "1 record" in m for m in found)  # queue 2


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_name_two_numbers_share_is_made_unique_and_reported(tmp_path, fmt):
    text = "; UnixStartTime: 1000000000\n; User: 1 alice\n; User: 2 alice\n" + _jobs(
        (1, 1, 1), (2, 1, 1)
    )
    losses, back = _read_back(tmp_path, text, fmt)
    users = [job.user_id for job in back.jobs]
    assert len(set(users)) == 2
    assert back.header.names("User")[users[0]] == "alice"
    (message,) = messages(losses, "header.User")
    assert "another number" in message


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_queue_name_the_reader_reads_as_unknown_is_made_up(tmp_path, fmt):
    text = "; UnixStartTime: 1000000000\n; Queue: 1 NONE\n" + _jobs((1, 1, 1))
    losses, back = _read_back(tmp_path, text, fmt)
    assert back.jobs[0].queue_number is not None
    (message,) = messages(losses, "header.Queue")
    assert "reads as no queue" in message


def test_colon_substitution_does_not_merge_two_names(tmp_path):
    """`a:b` is written `a_b` in the colon layout, another user's name."""
    text = "; UnixStartTime: 1000000000\n; User: 1 a:b\n; User: 2 a_b\n" + _jobs(
        (1, 1, 1), (2, 1, 1)
    )
    losses, back = _read_back(tmp_path, text, "sge")
    assert len({job.user_id for job in back.jobs}) == 2
    assert messages(losses, "header.User")
    # JSONL has no substitution: both names kept, nothing reported
    losses, back = _read_back(tmp_path, text, "sge-jsonl")
    assert set(back.header.names("User").values()) == {"a:b", "a_b"}
    assert not messages(losses, "header.User")


# ------------------------------------------------------------------ 5. free-text comments


@pytest.mark.parametrize("fmt", FORMATS)
def test_free_text_header_comments_are_reported(tmp_path, fmt):
    text = (
        "; UnixStartTime: 1000000000\n;    #  sub  runtime  cpus   (free-text legend)\n"
        ";    another line of it\n1 0 10 100 4 10 1000 4 200 2048 1 1 1 -1 1 -1 -1 -1\n"
    )
    losses = write_losses(workload_of(tmp_path, text), tmp_path / "out", fmt)
    comments = [loss for loss in losses if loss.field == "header.comment"]
    assert [loss.records for loss in comments] == [2]


def test_free_text_comment_fails_strict_lossless(tmp_path):
    source = tmp_path / "free.swf"
    source.write_text(
        "; UnixStartTime: 1000000000\n; a free-text legend\n"
        "1 0 10 100 4 10 1000 4 200 2048 1 1 1 -1 1 -1 -1 -1\n"
    )
    with pytest.raises(SystemExit) as exc:
        main(["convert", str(source), str(tmp_path / "o"), "--to", "sge", "--strict-lossless"])
    assert exc.value.code == 2
