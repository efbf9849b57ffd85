"""SSS fixes of conversion audit round 2: the memory mode recorded in the
document (finding 8), free-text header comments reported by ``layout=jobs``
(finding 5) and the source's metadata and value types carried by ``layout=group``
(finding 6)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import schedlab
from schedlab.formats.sss.reader import read
from schedlab.formats.sss.writer import write
from schedlab.model import Header, HeaderEntry, Job, Task, Workload

SCHEDLAB = [sys.executable, "-m", "schedlab"]


def _job(number: int, procs: int, memory: float | None) -> Job:
    return Job(
        job_number=number,
        submit_time=10.0 * number,
        wait_time=5,
        run_time=100,
        allocated_processors=procs,
        requested_processors=procs,
        requested_time=200,
        requested_memory=memory,
        used_memory=memory,
        status=1,
        user_id=1,
    )


def _memory_workload() -> Workload:
    header = Header()
    header.set("UnixStartTime", 1000000000)
    return Workload.from_jobs([_job(1, 4, 1024.0), _job(2, 2, None)], header=header)


# ------------------------------------------------------------------ finding 8


def test_memory_processor_group_reads_back_with_default_reader(tmp_path: Path) -> None:
    out = tmp_path / "m.sss.xml"
    with schedlab.collect_losses() as losses:
        write(_memory_workload(), out, memory="processor")
    assert list(losses) == []
    text = out.read_text()
    assert '<Memory units="KB">1024</Memory>' in text  # per processor, as asked
    back = list(read(out))
    assert [j.requested_memory for j in back] == [1024.0, None]
    assert [j.used_memory for j in back] == [1024.0, None]
    # the recorded mode wins over the reader option
    assert [j.requested_memory for j in read(out, memory="job")] == [1024.0, None]


def test_memory_job_document_unchanged_and_option_still_applies(tmp_path: Path) -> None:
    out = tmp_path / "j.sss.xml"
    write(_memory_workload(), out)
    assert 'name="memory"' not in out.read_text()
    assert [j.requested_memory for j in read(out)] == [1024.0, None]


def test_memory_extension_checked(tmp_path: Path) -> None:
    out = tmp_path / "m.sss.xml"
    write(_memory_workload(), out, memory="processor")
    bad = tmp_path / "bad.sss.xml"
    bad.write_text(out.read_text().replace(">processor</Extension>", ">perjob</Extension>"))
    with pytest.raises(schedlab.errors.FormatError, match="memory"):
        list(read(bad))


def test_memory_processor_jobs_layout_reports_read_mode(tmp_path: Path) -> None:
    with schedlab.collect_losses() as losses:
        write(_memory_workload(), tmp_path / "jobs", layout="jobs", memory="processor")
    # job 1 reads back divided by its processors again without -R memory=processor
    assert losses.count("requested_memory") == 1
    assert losses.count("used_memory") == 1
    actions = {loss.action for loss in losses if loss.field == "requested_memory"}
    assert any("-R memory=processor" in action for action in actions)
    back = next(iter(read(tmp_path / "jobs" / "job-1.xml", memory="processor")))
    assert back.requested_memory == 1024.0


def test_memory_processor_strict_cli(tmp_path: Path) -> None:
    src = tmp_path / "neg.swf"
    src.write_text(
        "; UnixStartTime: -100000\n"
        "1 0 5 100 4 -1 -1 4 200 1024 1 1 1 -1 1 -1 -1 -1\n"
        "2 10 5 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1\n"
    )
    out = tmp_path / "negm.sss.xml"
    done = subprocess.run(
        [*SCHEDLAB, "convert", str(src), str(out), "--to", "sss", "-W", "memory=processor"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    back = subprocess.run(
        [*SCHEDLAB, "convert", str(out), "-", "--to", "swf"], capture_output=True, text=True
    )
    rows = [line.split() for line in back.stdout.splitlines() if not line.startswith(";")]
    assert rows[0][9] == "1024"


# ------------------------------------------------------------------ finding 5


def _commented_header() -> Header:
    header = Header()
    header.set("UnixStartTime", 1000000000)
    header.entries.append(HeaderEntry(None, "   #  sub  runtime  cpus   (free-text legend)"))
    header.entries.append(HeaderEntry(None, "another note"))
    return header


def test_jobs_layout_reports_free_text_comments(tmp_path: Path) -> None:
    workload = Workload.from_jobs([_job(1, 4, 10.0)], header=_commented_header())
    with schedlab.collect_losses() as losses:
        write(workload, tmp_path / "jobs", layout="jobs")
    assert losses.count("header.comment") == 2
    assert losses.count("header.UnixStartTime") == 1


def test_group_layout_keeps_free_text_comments(tmp_path: Path) -> None:
    workload = Workload.from_jobs([_job(1, 4, 10.0)], header=_commented_header())
    out = tmp_path / "c.sss.xml"
    with schedlab.collect_losses() as losses:
        write(workload, out)
    assert list(losses) == []
    assert read(out).header == workload.header


# ------------------------------------------------------------------ finding 6


def test_group_keeps_value_types_of_extras(tmp_path: Path) -> None:
    job = _job(1, 4, 10.0)
    job.extras = {
        "slurm.derived": {"hosts": ("a", "b"), "n": 2},
        "events": ((1, 2, None), (3, 4, "x")),
        "by_number": {1: "one", 2: ("t",)},
        "plain": {"a": [1, 2]},
    }
    job.tasks = (Task("0", 0.0, 1.0, 1, "h", 1, {"pair": (1, 2)}),)
    other = _job(2, 2, None)
    other.extras = {"sss:Application": "x", "keep": (1,)}  # an own key and a foreign one
    workload = Workload.from_jobs([job, other], header=_commented_header())
    out = tmp_path / "t.sss.xml"
    write(workload, out)
    back = list(read(out))
    assert back == [job, other]
    assert back[0].extras == job.extras
    assert type(back[0].extras["events"]) is tuple
    assert type(back[0].extras["events"][0]) is tuple
    assert type(back[0].extras["slurm.derived"]["hosts"]) is tuple
    assert list(back[0].extras["by_number"]) == [1, 2]
    assert type(back[0].tasks[0].extras["pair"]) is tuple
    assert type(back[1].extras["keep"]) is tuple
    # plain JSON values stay plain JSON (documents written before read alike)
    assert 'name="plain"' in out.read_text()


def test_group_carries_source_meta(tmp_path: Path) -> None:
    workload = Workload.from_jobs([_job(1, 4, 10.0)], header=_commented_header())
    workload.meta.update(
        {
            "reader": "slurm",
            "source": "/x/dump.log",
            "skipped": 3,
            "rejects": [(1, "bad")],
            "findings": [],
            "slurm_has_header": False,
            "slurm_columns": ["JobID", "User"],
            "names": {"user": {1: "u1", 2: "u2"}},
            "capacity": {"time": [None], "cpus": [761.5], "pair": (1, 2)},
        }
    )
    out = tmp_path / "m.sss.xml"
    with schedlab.collect_losses() as losses:
        write(workload, out)
    assert list(losses) == []
    meta = schedlab.read(out).meta
    assert meta["reader"] == "sss"  # the read's own facts are the SSS read's
    assert meta["source"] == str(out)
    assert meta["skipped"] == 0 and meta["rejects"] == []
    assert meta["slurm_has_header"] is False
    assert meta["slurm_columns"] == ["JobID", "User"]
    assert meta["names"] == {"user": {1: "u1", 2: "u2"}}
    assert meta["capacity"] == {"time": [None], "cpus": [761.5], "pair": (1, 2)}
    # and once more: SSS -> SSS is a fixed point
    again = tmp_path / "again.sss.xml"
    write(schedlab.read(out), again, job_group_id="m")
    assert again.read_bytes() == out.read_bytes()


def test_group_reports_meta_it_cannot_carry(tmp_path: Path) -> None:
    workload = Workload.from_jobs([_job(1, 4, 10.0)])
    workload.meta["odd"] = object()
    with schedlab.collect_losses() as losses:
        write(workload, tmp_path / "o.sss.xml")
    assert losses.count("meta.odd") == 1


def test_google_v2_through_sss_like_direct(tmp_path: Path, shared_data: Path) -> None:
    source = shared_data / "google" / "clusterdata2011_v2_sample"
    copy = tmp_path / "g.sss.xml"
    schedlab.write(schedlab.read(source), copy)
    direct_dir, via_dir = tmp_path / "direct", tmp_path / "via"
    with schedlab.collect_losses() as direct:
        schedlab.write(schedlab.read(source), direct_dir, format="google")
    with schedlab.collect_losses() as via:
        schedlab.write(schedlab.read(copy), via_dir, format="google")
    assert sorted(p.name for p in via_dir.iterdir()) == sorted(p.name for p in direct_dir.iterdir())
    assert sorted(via.fields()) == sorted(direct.fields())
    for name in sorted(p.name for p in direct_dir.iterdir()):
        assert (via_dir / name).read_bytes() == (direct_dir / name).read_bytes(), name


def test_group_reports_values_no_json_holds(tmp_path: Path) -> None:
    job = _job(1, 4, 10.0)
    job.extras = {"kinds": {"b", "a"}}
    with schedlab.collect_losses() as losses:
        write(Workload.from_jobs([job]), tmp_path / "s.sss.xml")
    assert losses.count("extras.kinds") == 1


def test_bad_typed_extension_is_an_error(tmp_path: Path) -> None:
    job = _job(1, 4, 10.0)
    job.extras = {"pair": (1, 2)}
    out = tmp_path / "t.sss.xml"
    write(Workload.from_jobs([job]), out)
    text = out.read_text()
    assert 'type="schedlab.extras.typed" name="pair">{"t": [1, 2]}<' in text
    bad = tmp_path / "bad.sss.xml"
    bad.write_text(text.replace('{"t": [1, 2]}', '{"x": [1, 2]}'))
    with pytest.raises(schedlab.errors.FormatError, match=r"Extension\[@name='pair'\]"):
        list(read(bad))
    assert list(read(bad, lenient=True)) == []


def test_meta_extension_cannot_claim_another_reader(tmp_path: Path) -> None:
    workload = Workload.from_jobs([_job(1, 4, 10.0)])
    workload.meta["slurm_has_header"] = False
    out = tmp_path / "m.sss.xml"
    write(workload, out)
    edited = tmp_path / "e.sss.xml"
    edited.write_text(
        out.read_text().replace('{"d": [', '{"d": [["reader", "slurm"], ["skipped", 9], ', 1)
    )
    meta = schedlab.read(edited).meta
    assert (meta["reader"], meta["skipped"], meta["slurm_has_header"]) == ("sss", 0, False)
