"""The Google v3 writer, conversion audit round 2 (findings 2, 3, 4, 5, 7 and 9):
user and executable names that never merge distinct ids, a known user with an
empty name that stays known, ``nodes`` and ``tasks`` of jobs without tasks,
free-text header comments, header labels the v3 reader replaces, and values that
come back changed in their last digits; every difference is reported."""

from __future__ import annotations

from pathlib import Path

import schedlab
from schedlab.losses import Losses
from schedlab.model import Header, Job, Task, Workload


def _write_read(workload: Workload, tmp_path: Path, **read: object) -> tuple[Workload, Losses]:
    out = tmp_path / "cell"
    with schedlab.collect_losses() as losses:
        schedlab.write(workload, out, format="google")
    return schedlab.read(out, format="google", **read), losses


def _job(number: int, **fields: object) -> Job:
    values: dict[str, object] = {
        "job_number": number,
        "submit_time": 10.0 * number,
        "wait_time": 5.0,
        "run_time": 10.0,
        "allocated_processors": 1,
        "requested_processors": 1,
        "status": 1,
        **fields,
    }
    return Job(**values)  # type: ignore[arg-type]


def _by_cid(back: Workload) -> dict[int, Job]:
    return {job.extras["collection_id"]: job for job in back}


def _header(**tables: dict[int, str]) -> Header:
    header = Header()
    header.set("UnixStartTime", 1_000_000_000)
    for label, names in tables.items():
        for number, name in names.items():
            header.add(label, f"{number} {name}")
    return header


# -- finding 2: made-up names never clash with real ones


def test_made_up_user_name_does_not_merge_with_a_real_one(tmp_path: Path) -> None:
    # user 1 is named "user2" in the table; user 2 has no name
    workload = Workload.from_jobs(
        [_job(1, user_id=1), _job(2, user_id=2)], _header(User={1: "user2"})
    )
    back, losses = _write_read(workload, tmp_path)
    jobs = _by_cid(back)
    names = back.header.names("User")
    assert jobs[1].user_id != jobs[2].user_id
    assert names[jobs[1].user_id] == "user2"  # the real name is kept
    assert "user_id" not in losses


def test_made_up_executable_name_does_not_merge_with_a_real_one(tmp_path: Path) -> None:
    workload = Workload.from_jobs(
        [_job(1, executable_number=1), _job(2, executable_number=2)],
        _header(Executable={1: "executable2"}),
    )
    back, losses = _write_read(workload, tmp_path)
    jobs = _by_cid(back)
    assert jobs[1].executable_number != jobs[2].executable_number
    assert back.header.names("Executable")[jobs[1].executable_number] == "executable2"
    assert "executable_number" not in losses


def test_made_up_name_does_not_take_a_kept_google_name(tmp_path: Path) -> None:
    # job 1 (read from a trace) keeps user "user3"; job 2's user 3 has no name
    workload = Workload.from_jobs(
        [_job(1, user_id=1, extras={"user": "user3"}), _job(2, user_id=3)], _header()
    )
    back, _ = _write_read(workload, tmp_path)
    jobs = _by_cid(back)
    assert jobs[1].user_id != jobs[2].user_id
    assert back.header.names("User")[jobs[1].user_id] == "user3"


def test_users_sharing_one_name_stay_distinct_and_the_rename_is_reported(
    tmp_path: Path,
) -> None:
    workload = Workload.from_jobs(
        [_job(1, user_id=1), _job(2, user_id=2), _job(3, user_id=2)],
        _header(User={1: "alice", 2: "alice"}),
    )
    back, losses = _write_read(workload, tmp_path)
    jobs = _by_cid(back)
    assert jobs[1].user_id != jobs[2].user_id == jobs[3].user_id
    assert losses.count("header.User") == 1  # user 2's name, written as another one


def test_kept_names_that_merge_users_are_reported(tmp_path: Path) -> None:
    # two users whose kept Google names are the same: the reader numbers one user
    workload = Workload.from_jobs(
        [_job(1, user_id=1, extras={"user": "bob"}), _job(2, user_id=2, extras={"user": "bob"})],
        _header(),
    )
    back, losses = _write_read(workload, tmp_path)
    jobs = _by_cid(back)
    assert jobs[1].user_id == jobs[2].user_id  # written as given ...
    assert losses.count("user_id") == 2  # ... and said


def test_unused_user_table_entries_are_reported(tmp_path: Path) -> None:
    workload = Workload.from_jobs(
        [_job(1, user_id=1)], _header(User={1: "alice", 2: "bob"}, Executable={4: "a.out"})
    )
    back, losses = _write_read(workload, tmp_path)
    assert back.header.names("User") == {1: "alice"}
    assert losses.count("header.User") == 1
    assert losses.count("header.Executable") == 1


# -- finding 3: a known user with an empty name stays known


def test_known_user_with_an_empty_name_stays_known(tmp_path: Path) -> None:
    header = _header()
    header.add("User", " 1 ")  # an empty name
    header.add("User", "2 user1")
    workload = Workload.from_jobs([_job(1, user_id=1), _job(2, user_id=2)], header)
    back, losses = _write_read(workload, tmp_path)
    jobs = _by_cid(back)
    assert jobs[1].user_id is not None
    assert jobs[2].user_id is not None
    assert jobs[1].user_id != jobs[2].user_id
    assert back.header.names("User")[jobs[2].user_id] == "user1"
    assert "user_id" not in losses
    assert losses.count("header.User") == 1  # the empty name, written as a made-up one


def test_empty_executable_name_stays_known(tmp_path: Path) -> None:
    header = _header()
    header.add("Executable", "1")
    workload = Workload.from_jobs([_job(1, executable_number=1)], header)
    back, _ = _write_read(workload, tmp_path)
    assert _by_cid(back)[1].executable_number is not None


# -- finding 4: nodes and tasks of a job written as one instance


def test_unknown_nodes_and_missing_tasks_of_one_instance_are_reported(tmp_path: Path) -> None:
    jobs = [
        _job(1),  # nodes unknown, no tasks: read back as 1 node and one task
        _job(2, nodes=1),  # one node: only the task is new
        _job(3, allocated_processors=None, requested_processors=None),  # no instance
    ]
    back, losses = _write_read(Workload.from_jobs(jobs, _header()), tmp_path)
    again = _by_cid(back)
    assert (again[1].nodes, len(again[1].tasks)) == (1, 1)
    assert (again[2].nodes, len(again[2].tasks)) == (1, 1)
    assert (again[3].nodes, again[3].tasks) == (None, ())
    assert losses.count("nodes") == 1
    assert losses.count("tasks") == 2
    # read without tasks, the one instance gives no task: nothing new but the node
    light, _ = _write_read(Workload.from_jobs(jobs, _header()), tmp_path / "light", tasks=False)
    assert all(job.tasks == () for job in light)


def test_real_swf_nodes_and_tasks_changes_are_all_counted(
    shared_data: Path, tmp_path: Path
) -> None:
    source = schedlab.read(shared_data / "swf" / "lublin_256.swf", format="swf")
    back, losses = _write_read(source, tmp_path)
    again = _by_cid(back)
    nodes = sum(1 for job in source if job.nodes != again[job.job_number].nodes)
    tasks = sum(1 for job in source if len(job.tasks) != len(again[job.job_number].tasks))
    assert nodes == tasks == len(source) > 0
    assert losses.count("nodes") == nodes
    assert losses.count("tasks") == tasks


# -- finding 5: free-text header comments


def test_free_text_header_comments_are_reported(tmp_path: Path) -> None:
    header = _header()
    header.add(None, "   #  sub  runtime  cpus   (free-text legend)")
    header.add(None, "another line of the legend")
    _, losses = _write_read(Workload.from_jobs([_job(1)], header), tmp_path)
    assert losses.count("header.comment") == 2


def test_free_text_comment_of_a_google_workload_is_reported(
    shared_data: Path, tmp_path: Path
) -> None:
    source = schedlab.read(shared_data / "google" / "clusterdata2019_v3_sample", format="google")
    source.header.add(None, "a note of my own")
    _, losses = _write_read(source, tmp_path)
    assert losses.count("header.comment") == 1


# -- finding 7: header labels the v3 reader gives back differently


def _unreported_header(source: Workload, back: Workload, losses: Losses) -> list[str]:
    out = []
    for label in source.header.labels():
        if label in ("User", "Executable"):
            continue
        if source.header.get_all(label) != back.header.get_all(label):
            if f"header.{label}" not in losses:
                out.append(label)
    return out


def test_v2_header_labels_replaced_by_the_v3_reader_are_reported(
    shared_data: Path, tmp_path: Path
) -> None:
    source = schedlab.read(shared_data / "google" / "clusterdata2011_v2_sample", format="google-v2")
    back, losses = _write_read(source, tmp_path)
    assert source.header.get("Computer") != back.header.get("Computer")
    assert "header.Computer" in losses and "header.Information" in losses
    assert _unreported_header(source, back, losses) == []


def test_v3_header_comes_back_without_header_reports(shared_data: Path, tmp_path: Path) -> None:
    source = schedlab.read(shared_data / "google" / "clusterdata2019_v3_sample", format="google")
    back, losses = _write_read(source, tmp_path)
    assert _unreported_header(source, back, losses) == []
    for label in ("Computer", "Information", "Conversion", "Queue", "Note", "User", "Executable"):
        assert f"header.{label}" not in losses, str(losses)


# -- finding 9: values changed in the last digits, for jobs with tasks too


def test_memory_of_a_job_with_tasks_changed_in_the_last_digits_is_reported(
    tmp_path: Path,
) -> None:
    # the job of the real Slurm dump (submitline_multiline, job 6): five steps
    tasks = tuple(
        Task(name, start_time=15.0, end_time=25.0, processors=procs, status=1)
        for name, procs in (("batch", 40), ("extern", 576), ("0", 576), ("1", 576), ("2", 40))
    )
    job = _job(
        6,
        requested_memory=1048576.0,
        allocated_processors=1808,
        requested_processors=1808,
        nodes=5,
        tasks=tasks,
    )
    back, losses = _write_read(Workload.from_jobs([job], _header()), tmp_path)
    (again,) = back
    assert again.requested_memory != job.requested_memory  # 1048576.0000000002
    assert losses.count("requested_memory") == 1
