"""Batsim's formats on hostile input: sequences that double at every level or refer
back to themselves, integers too long to convert, numbers beyond the limits every
reader shares (2**53 - 1; times 1e12 s), strings where numbers belong, job ids that
carry no job number or repeat one, and lenient reads of bad jobs and profiles.
Each is read exactly, or rejected with one line naming the file, the job or profile
and the field (exit 2), never a hang or an internal error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import schedlab
from schedlab.errors import FormatError
from schedlab.formats.batsim import workload as batsim_workload
from schedlab.losses import collect_losses
from schedlab.model import Job, Workload
from schedlab.testing import run_cli as run

BASE: dict[str, Any] = {
    "nb_res": 4,
    "jobs": [
        {"id": 1, "subtime": 0, "walltime": 100, "res": 2, "profile": "p1"},
        {"id": 2, "subtime": 10, "walltime": 50, "res": 1, "profile": "p2"},
    ],
    "profiles": {"p1": {"type": "delay", "delay": 30}, "p2": {"type": "delay", "delay": 20}},
}


def _doc(**profiles: Any) -> dict[str, Any]:
    doc = json.loads(json.dumps(BASE))
    doc["profiles"].update(profiles)
    return doc


def _write(tmp_path: Path, doc: Any, name: str = "w.json") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def _error(path: Path, **options: Any) -> str:
    with pytest.raises(FormatError) as info:
        schedlab.read(path, format="batsim", **options)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(path)), message
    return message


def _doubling(levels: int, delay: float) -> dict[str, Any]:
    """Sequence ``s0`` uses ``s1`` twice, ``s1`` uses ``s2`` twice ... down to a delay:
    2**levels delays when walked naively."""
    profiles: dict[str, Any] = {
        f"s{i}": {"type": "composed", "seq": [f"s{i + 1}", f"s{i + 1}"]} for i in range(levels)
    }
    profiles[f"s{levels}"] = {"type": "delay", "delay": delay}
    doc = _doc(**profiles)
    doc["jobs"][0]["profile"] = "s0"
    return doc


# ------------------------------------------------------------ composed profiles


def test_doubling_sequences_are_walked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = [0]
    kind = batsim_workload.profile_kind

    def counting(profile: dict[str, Any]) -> str | None:
        calls[0] += 1
        return kind(profile)

    monkeypatch.setattr(batsim_workload, "profile_kind", counting)
    w = schedlab.read(_write(tmp_path, _doubling(18, 1)), format="batsim", order="file")
    assert w.jobs[0].run_time == 2.0**18
    # linear in the number of profiles (20 here), not 2**18 visits
    assert calls[0] < 500, calls[0]
    calls[0] = 0
    assert batsim_workload.profile_run_time("s0", w.jobs[0].extras["batsim.profile_def"]) == 2**18
    assert calls[0] < 500, calls[0]
    # and the writer compares each job's run time with its profile's the same way
    calls[0] = 0
    with collect_losses():
        schedlab.write(w, tmp_path / "out.json")
    assert calls[0] < 2000, calls[0]
    assert schedlab.read(tmp_path / "out.json").jobs[0].run_time == 2.0**18


def test_a_long_chain_of_sequences_is_no_internal_error(tmp_path: Path) -> None:
    # 5000 nested sequences: far deeper than Python's recursion limit
    profiles: dict[str, Any] = {
        f"c{i}": {"type": "composed", "seq": [f"c{i + 1}"]} for i in range(5000)
    }
    profiles["c5000"] = {"type": "delay", "delay": 3}
    doc = _doc(**profiles)
    doc["jobs"][1]["profile"] = "c0"
    w = schedlab.read(_write(tmp_path, doc), format="batsim", order="file")
    assert w.jobs[1].run_time == 3.0


def test_a_sequence_beyond_1e12_seconds_is_an_error(tmp_path: Path) -> None:
    # 20 s x 10**6 x 10**6 (each part within the limits, the whole beyond)
    nested = _doc(
        q={"type": "composed", "repeat": 10**6, "seq": ["p2"]},
        p1={"type": "composed", "repeat": 10**6, "seq": ["q"]},
    )
    message = _error(_write(tmp_path, nested))
    assert "profiles.p1: field repeat: out of range (a time of at most 1e12 seconds)" in message
    repeat = _doc(p1={"type": "composed", "repeat": 10**11, "seq": ["p2"]})
    message = _error(_write(tmp_path, repeat))
    assert "profiles.p1: field repeat: out of range (a time of at most 1e12 seconds)" in message
    assert "lasts 2e+12 s" in message
    exact = _doc(p1={"type": "composed", "repeat": 5 * 10**10, "seq": ["p2"]})
    w = schedlab.read(_write(tmp_path, exact), format="batsim", order="file")
    assert w.jobs[0].run_time == 1e12


@pytest.mark.parametrize(
    ("profiles", "expected"),
    [
        (
            {"p1": {"type": "composed", "repeat": 2, "seq": ["p1"]}},
            "profiles.p1: field seq: the sequence refers back to itself: p1 -> p1",
        ),
        (
            {
                "p1": {"type": "composed", "seq": ["p2"]},
                "p2": {"type": "composed", "seq": ["p1"]},
            },
            "profiles.p1: field seq: the sequence refers back to itself: p1 -> p2 -> p1",
        ),
        (
            # a cycle further down, in profiles no job uses
            {
                "a": {"type": "composed", "seq": ["p2", "b"]},
                "b": {"type": "SequentialCompositionProfile", "seq": ["c"]},
                "c": {"type": "composed", "seq": ["p2", "b"]},
            },
            "profiles.b: field seq: the sequence refers back to itself: b -> c -> b",
        ),
    ],
)
def test_sequences_that_refer_back_to_themselves_are_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture, profiles: dict[str, Any], expected: str
) -> None:
    path = _write(tmp_path, _doc(**profiles))
    assert expected in _error(path)
    code, _, err = run(capsys, "convert", str(path), str(tmp_path / "o.swf"))
    assert code == 2 and err.count("\n") == 1 and expected in err, err
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 1 and "refers back to itself" in out and "ok:" not in out, out
    lenient = schedlab.read(path, format="batsim", lenient=True, order="file")
    assert lenient.meta["skipped"] >= 1
    # the jobs whose profile is in the cycle are skipped
    assert len(lenient) == sum(j["profile"] not in profiles for j in BASE["jobs"])


# ------------------------------------------------------------ numbers


BIG = "9" * 5000


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ('"delay": 30', f'"delay": {BIG}', "profiles.p1: field delay: out of range"),
        ('"res": 2', f'"res": {BIG}', "jobs[0] (id 1): field res: out of range"),
        ('"subtime": 10', f'"subtime": -{BIG}', "jobs[1] (id 2): field subtime: out of range"),
        ('"walltime": 100', f'"walltime": {BIG}', "jobs[0] (id 1): field walltime: out of range"),
        ('"nb_res": 4', f'"nb_res": {BIG}', "nb_res: field nb_res: out of range"),
        ('"id": 2', f'"id": {BIG}', "jobs[1]: field id: expected a string or an integer"),
        ('"id": 2', f'"id": 2, "user": [{BIG}]', "jobs[1] (id 2): field user[0]: out of range"),
        ('"nb_res": 4', f'"nb_res": 4, "x": {{"y": {BIG}}}', "w.json: field x.y: out of range"),
    ],
)
def test_integers_too_long_to_convert_name_their_place(
    tmp_path: Path, capsys: pytest.CaptureFixture, old: str, new: str, expected: str
) -> None:
    text = json.dumps(BASE)
    assert old in text
    path = _write(tmp_path, text.replace(old, new, 1))
    message = _error(path)
    assert expected in message and "5000 digits" in message, message
    code, _, err = run(capsys, "info", "--from", "batsim", str(path))
    assert code == 2 and err.count("\n") == 1 and "internal error" not in err, err


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda d: d["jobs"][0].update(res=2**70),
            "jobs[0] (id 1): field res: out of range (at most 2**53 - 1), "
            "got 1180591620717411303424",
        ),
        (
            lambda d: d["jobs"][0].update(subtime=2**70),
            "jobs[0] (id 1): field subtime: out of range (a time of at most 1e12 seconds)",
        ),
        (
            lambda d: d["jobs"][1].update(subtime=-1.5e12),
            "jobs[1] (id 2): field subtime: out of range (a time of at most 1e12 seconds)",
        ),
        (
            lambda d: d["jobs"][1].update(walltime=2e12),
            "jobs[1] (id 2): field walltime: out of range (a time of at most 1e12 seconds)",
        ),
        (
            lambda d: d["profiles"]["p1"].update(delay=1e300),
            "profiles.p1: field delay: out of range (a time of at most 1e12 seconds), got 1e+300",
        ),
        (
            lambda d: d["profiles"].update(p1={"type": "composed", "repeat": 2**60, "seq": []}),
            "profiles.p1: field repeat: out of range (at most 2**53 - 1)",
        ),
        (
            lambda d: d["profiles"].update(
                p1={"type": "composed", "repeat": 10**18, "seq": ["p2"]}
            ),
            "profiles.p1: field repeat: out of range (at most 2**53 - 1)",
        ),
        (
            lambda d: d.update(nb_res=2**70),
            "nb_res: field nb_res: out of range (at most 2**53 - 1)",
        ),
    ],
)
def test_numbers_beyond_the_readers_limits_are_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture, mutate: Any, expected: str
) -> None:
    doc = json.loads(json.dumps(BASE))
    mutate(doc)
    path = _write(tmp_path, doc)
    assert expected in _error(path)
    code, _, err = run(capsys, "convert", str(path), str(tmp_path / "o.swf"))
    assert code == 2 and err.count("\n") == 1 and expected in err, err
    assert not (tmp_path / "o.swf").exists()


def test_numbers_at_the_limits_are_read_exactly(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(BASE))
    doc["nb_res"] = 2**53 - 1
    doc["jobs"][0].update(res=2**53 - 1, subtime=1e12, walltime=1e12)
    doc["profiles"]["p1"]["delay"] = 1e12
    w = schedlab.read(_write(tmp_path, doc), format="batsim", order="file")
    one = w.jobs[0]
    assert (one.requested_processors, one.submit_time) == (2**53 - 1, 1e12)
    assert (one.requested_time, one.run_time) == (1e12, 1e12)
    assert w.header.machine_size() == 2**53 - 1


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda d: d["profiles"]["p1"].update(delay="30"),
            "profiles.p1: field delay: expected a number, got '30'",
        ),
        (
            lambda d: d["jobs"][0].update(res="2"),
            "jobs[0] (id 1): field res: expected a number, got '2'",
        ),
        (
            lambda d: d["jobs"][1].update(subtime="10"),
            "jobs[1] (id 2): field subtime: expected a number, got '10'",
        ),
        (
            lambda d: d["jobs"][1].update(walltime="50"),
            "jobs[1] (id 2): field walltime: expected a number, got '50'",
        ),
        (lambda d: d.update(nb_res="4"), "nb_res: field nb_res: expected a number, got '4'"),
        (
            lambda d: d["profiles"].update(p1={"type": "composed", "repeat": "2", "seq": ["p2"]}),
            "profiles.p1: field repeat: expected a number, got '2'",
        ),
    ],
)
def test_a_string_is_not_a_number(
    tmp_path: Path, capsys: pytest.CaptureFixture, mutate: Any, expected: str
) -> None:
    doc = json.loads(json.dumps(BASE))
    mutate(doc)
    path = _write(tmp_path, doc)
    assert expected in _error(path)
    code, _, err = run(capsys, "convert", str(path), str(tmp_path / "o.swf"))
    assert code == 2 and err.count("\n") == 1 and expected in err, err


# ------------------------------------------------------------ job ids


ID_MIX = {
    "nb_res": 4,
    "jobs": [
        {"id": "w0!1", "subtime": 0, "res": 2, "profile": "p1"},
        {"id": 1, "subtime": 10, "res": 1, "profile": "p1"},
        {"id": "abc", "subtime": 20, "res": 1, "profile": "p1"},
        {"id": "w1!1", "subtime": 30, "res": 1, "profile": "p1"},
        {"id": "w0!7", "subtime": 40, "res": 1, "profile": "p1"},
        {"id": 2**60, "subtime": 50, "res": 1, "profile": "p1"},
        {"id": -3, "subtime": 60, "res": 1, "profile": "p1"},
    ],
    "profiles": {"p1": {"type": "delay", "delay": 30}},
}


def test_ids_without_a_number_of_their_own_get_unique_numbers(tmp_path: Path) -> None:
    path = _write(tmp_path, ID_MIX)
    w = schedlab.read(path, format="batsim", order="file")
    # carried: w0!1 -> 1, w0!7 -> 7; the others above 7, in file order
    assert [j.job_number for j in w] == [1, 8, 9, 10, 7, 11, 12]
    assert [j.extras["batsim.id"] for j in w] == [j["id"] for j in ID_MIX["jobs"]]
    assert w.jobs[1].extras["batsim.number"] == 8 and "batsim.number" not in w.jobs[0].extras
    notes = [f for f in w.meta["findings"] if f.check == "renumbered-job"]
    assert [f.severity for f in notes] == ["warning", "warning"]
    missing, repeated = (f.render("w.json") for f in notes)
    assert "3 job id(s) carry no job number" in missing
    assert "jobs[2] (id 'abc'), now 9" in missing
    assert "2 job id(s) carry the job number of an earlier job" in repeated
    assert "jobs[1] (id 1) (number 1, as jobs[0] (id 'w0!1')), now 8" in repeated


def test_renumbered_ids_survive_batsim_round_trips(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = _write(tmp_path, ID_MIX)
    with collect_losses() as losses:
        schedlab.write(schedlab.read(path, format="batsim"), tmp_path / "back.json")
    assert "job_number" not in losses, losses.summary()
    back = json.loads((tmp_path / "back.json").read_text())
    # (an integer id beyond 32 bits is written as text: Batsim refuses it otherwise)
    assert [j["id"] for j in back["jobs"]] == [
        str(j["id"]) if j["id"] == 2**60 else j["id"] for j in ID_MIX["jobs"]
    ]
    # to Batsim's jobs file and back: the same ids and numbers
    src = schedlab.read(path, format="batsim", order="file")
    with collect_losses() as losses:
        schedlab.write(src, tmp_path / "out_jobs.csv")
    assert "job_number" not in losses, losses.summary()
    jobs = schedlab.read(tmp_path / "out_jobs.csv", format="batsim-jobs", order="file")
    assert [j.job_number for j in jobs] == [j.job_number for j in src]
    # to SWF: unique numbers, and the command says the reader renumbered
    code, _, err = run(capsys, "convert", str(path), str(tmp_path / "o.swf"))
    assert code == 0 and "2 finding(s)" in err, err
    numbers = [j.job_number for j in schedlab.read(tmp_path / "o.swf")]
    assert sorted(numbers) == [1, 7, 8, 9, 10, 11, 12]
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 0 and out.count("[renumbered-job]") == 2, out


def test_a_job_renumbered_since_it_was_read_is_written_with_its_new_number(
    tmp_path: Path,
) -> None:
    w = schedlab.read(_write(tmp_path, ID_MIX), format="batsim", order="file")
    w.jobs[2].job_number = 50  # "abc", given 9 by the reader
    schedlab.write(w, tmp_path / "back.json")
    back = json.loads((tmp_path / "back.json").read_text())
    assert [j["id"] for j in back["jobs"]][2] == 50


def test_writers_report_numbers_that_read_back_differently(tmp_path: Path) -> None:
    # two jobs numbered 5, one with a kept id: distinct ids, the same number
    jobs = [
        Job(job_number=5, submit_time=0, run_time=1, requested_processors=1),
        Job(job_number=5, submit_time=1, run_time=1, requested_processors=1),
    ]
    jobs[0].extras = {"batsim.id": "w0!5"}
    workload = Workload.from_jobs(jobs)
    for target, fmt in (("w.json", "batsim"), ("w_jobs.csv", "batsim-jobs")):
        with collect_losses() as losses:
            schedlab.write(workload, tmp_path / target)
        back = schedlab.read(tmp_path / target, format=fmt, order="file")
        changed = sum(a.job_number != b.job_number for a, b in zip(jobs, back, strict=True))
        assert changed == 1 and losses.count("job_number") == 1, (fmt, losses.summary())


def test_jobs_file_of_two_workloads_gets_unique_numbers(tmp_path: Path) -> None:
    path = tmp_path / "out_jobs.csv"
    path.write_text(
        "job_id,workload_name,submission_time,requested_number_of_resources,"
        "requested_time,success,starting_time,execution_time,allocated_resources\n"
        "w0!1,w0,0,1,10,1,0,5,0\n"
        "w1!1,w1,1,1,10,1,1,5,1\n"
        "w0!2,w0,2,1,10,1,2,5,0\n"
    )
    w = schedlab.read(path, format="batsim-jobs", order="file")
    assert [j.job_number for j in w] == [1, 3, 2]
    assert [f.check for f in w.meta["findings"]] == ["renumbered-job"]
    assert "line 3 (id 'w1!1')" in w.meta["findings"][0].message
    with collect_losses() as losses:
        schedlab.write(w, tmp_path / "back_jobs.csv")
    assert "job_number" not in losses, losses.summary()
    lines = (tmp_path / "back_jobs.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in lines[1:]] == ["w0!1", "w1!1", "w0!2"]


@pytest.mark.parametrize(
    ("column", "value", "expected"),
    [
        ("submission_time", "1e300", "field submission_time: out of range (a time of at most"),
        ("execution_time", "2e12", "field execution_time: out of range (a time of at most"),
        ("requested_number_of_resources", "1e20", "out of range (at most 2**53 - 1)"),
        ("allocated_resources", "0-99999999999999999999", "field allocated_resources: out of"),
        ("allocated_resources", "0-" + "9" * 5000, "field allocated_resources: expected"),
    ],
)
def test_jobs_file_numbers_beyond_the_limits_are_errors(
    tmp_path: Path, column: str, value: str, expected: str
) -> None:
    columns = [
        "job_id",
        "submission_time",
        "requested_number_of_resources",
        "execution_time",
        "allocated_resources",
    ]
    row = {"job_id": "1", "submission_time": "0", "requested_number_of_resources": "1"}
    row.update({"execution_time": "5", "allocated_resources": "0", column: value})
    path = tmp_path / "out_jobs.csv"
    path.write_text(",".join(columns) + "\n" + ",".join(row[c] for c in columns) + "\n")
    with pytest.raises(FormatError) as info:
        schedlab.read(path, format="batsim-jobs")
    message = str(info.value)
    assert "\n" not in message and len(message) < 300 and expected in message, message
    assert message.startswith(f"{path}:2: ")


# ------------------------------------------------------------ lenient reads


MIXED = {
    "nb_res": 4,
    "jobs": [
        {"id": 1, "subtime": 0, "res": 2, "profile": "p1"},
        {"id": 2, "subtime": 10, "res": -1, "profile": "p2"},
        {"id": 3, "subtime": "x", "res": 1, "profile": "p2"},
        {"id": 4, "subtime": 10, "res": 1, "profile": "nope"},
    ],
    "profiles": {"p1": {"type": "delay", "delay": 30}, "p2": {"type": "delay", "delay": 20}},
}


def test_lenient_validate_names_skipped_jobs_by_their_place(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = _write(tmp_path, MIXED)
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 1
    lines = [line for line in out.splitlines() if "error" in line and "FAILED" not in line]
    assert lines == [
        f"{path}: error: jobs[1] (id 2): field res: expected a number >= 1, got -1 "
        "(job skipped) [bad-record]",
        f"{path}: error: jobs[2] (id 3): field subtime: expected a number, got 'x' "
        "(job skipped) [bad-record]",
        f"{path}: error: jobs[3] (id 4): field profile: profile 'nope' is not defined in "
        "profiles (job skipped) [bad-record]",
    ], out
    assert f"{path}:1:" not in out


def test_lenient_read_counts_a_bad_profile_no_job_uses(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    doc = json.loads(json.dumps(MIXED))
    doc["profiles"]["p3"] = {"type": "delay", "delay": -5}
    path = _write(tmp_path, doc)
    assert "profiles.p3: field delay: expected a number >= 0, got -5" in _error(path)
    w = schedlab.read(path, format="batsim", lenient=True)
    assert len(w) == 1 and w.meta["skipped"] == 4
    assert [p for p, _ in w.meta["rejects"]] == [1, 2, 3, "profiles.p3"]
    assert json.loads(w.meta["rejects"][-1][1]) == {"p3": {"type": "delay", "delay": -5}}
    # p2 (its jobs skipped) is kept as a profile no job uses; p3 is not
    assert json.loads(w.header.get("Batsim")) == {"profiles": {"p2": doc["profiles"]["p2"]}}
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 1 and "profiles.p3: field delay: expected a number >= 0" in out, out
    assert "4 error(s)" in out
    code, _, err = run(capsys, "convert", "--lenient", str(path), str(tmp_path / "o.swf"))
    assert code == 0 and "skipped 4 bad record(s)" in err, err


def test_lenient_read_skips_the_jobs_of_a_bad_profile(tmp_path: Path) -> None:
    doc = _doc(
        p2={"type": "delay", "delay": "20"},
        s={"type": "composed", "seq": ["p2", "p1"]},
        loop={"type": "composed", "seq": ["loop"]},
    )
    doc["jobs"].append({"id": 3, "subtime": 20, "res": 1, "profile": "s"})
    doc["jobs"].append({"id": 4, "subtime": 30, "res": 1, "profile": "loop"})
    w = schedlab.read(_write(tmp_path, doc), format="batsim", lenient=True, order="file")
    assert [j.job_number for j in w] == [1]
    assert [p for p, _ in w.meta["rejects"]] == [
        1,
        2,
        3,
        "profiles.p2",
        "profiles.s",
        "profiles.loop",
    ]
    reasons = w.meta["reject_reasons"]
    assert (
        "jobs[1] (id 2): field profile: profile 'p2' cannot be read (profiles.p2: field "
        "delay: expected a number, got '20')" in reasons[0]
    )
    assert "profile 'p2' of the sequence cannot be read" in reasons[1]
    assert "refers back to itself: loop -> loop" in reasons[2]
