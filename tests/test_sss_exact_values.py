"""Reading SSS values exactly (audit of the SSS reader): names that differ in any
character are different names, JobIds shared by several jobs give distinct job
numbers (with a finding saying so), numbers use the XSD's ASCII digits and XML
whitespace only, and a run of whitespace too long to be indentation is refused
before it is held in memory."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from pathlib import Path

import pytest
import schedlab
from schedlab.cli import main
from schedlab.errors import FormatError
from schedlab.formats.sss.limits import MAX_WHITESPACE_RUN
from schedlab.formats.sss.reader import read
from schedlab.formats.sss.safexml import CHUNK_SIZE

GROUP = "<JobGroup><JobGroupId>g</JobGroupId>{}</JobGroup>"
NAME_ELEMENTS = {
    "UserId": ("User", "user_id"),
    "GroupId": ("Group", "group_id"),
    "Executable": ("Executable", "executable_number"),
    "Queue": ("Queue", "queue_number"),
    "Partition": ("Partition", "partition_number"),
}


def doc(tmp_path: Path, *jobs: str, name: str = "doc.sss.xml") -> Path:
    path = tmp_path / name
    body = '<?xml version="1.0" encoding="UTF-8"?>\n' + GROUP.format("".join(jobs))
    path.write_text(body, encoding="utf-8")
    return path


def jobs_of(workload: schedlab.Workload) -> list:
    return [job for job in workload]


def run_cli(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


# ----------------------------------------------------------------------- names


@pytest.mark.parametrize("tag", sorted(NAME_ELEMENTS))
@pytest.mark.parametrize(
    "names",
    [("a b", "a_b"), ("u", " u "), ("x", "\tx\n"), ("", "-"), ("a  b", "a b")],
    ids=["blank-underscore", "padded", "tab-newline", "empty-dash", "two-blanks"],
)
def test_names_differing_in_any_character_are_different_names(
    tmp_path: Path, tag: str, names: tuple[str, str]
) -> None:
    label, attribute = NAME_ELEMENTS[tag]
    jobs = [f"<Job><JobId>{i}</JobId><{tag}>{n}</{tag}></Job>" for i, n in enumerate(names, 1)]
    workload = read(doc(tmp_path, *jobs))
    first, second = jobs_of(workload)
    assert getattr(first, attribute) == 1 and getattr(second, attribute) == 2
    table = workload.header.names(label)
    assert len(table) == 2
    # The exact name comes back: from extras when the table form differs from it.
    for job, name in zip((first, second), names, strict=True):
        number = getattr(job, attribute)
        assert job.extras.get(f"sss:{tag}", table[number]) == name


def test_distinct_users_stay_distinct_in_swf_and_sss_round_trips(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        "<Job><JobId>1</JobId><UserId>a b</UserId></Job>",
        "<Job><JobId>2</JobId><UserId>a_b</UserId></Job>",
        "<Job><JobId>3</JobId><UserId> a b </UserId></Job>",
    )
    workload = read(path)
    jobs = jobs_of(workload)
    assert [j.user_id for j in jobs] == [1, 2, 3]
    copy = tmp_path / "copy.sss.xml"
    schedlab.write(workload, copy)
    assert jobs_of(read(copy)) == jobs
    swf = tmp_path / "out.swf"
    schedlab.write(read(path), swf)
    users = [line.split()[11] for line in swf.read_text().splitlines() if not line.startswith(";")]
    assert users == ["1", "2", "3"]


def test_info_counts_users_differing_in_blanks(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = doc(
        tmp_path,
        "<Job><JobId>1</JobId><UserId>u</UserId></Job>",
        "<Job><JobId>2</JobId><UserId> u </UserId></Job>",
    )
    code, out, _ = run_cli(capsys, "info", str(path), "--json")
    assert code == 0
    assert json.loads(out)["users"] == 2


def test_names_inherited_from_job_defaults_keep_their_blanks(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        "<JobDefaults><Queue> batch </Queue></JobDefaults>",
        "<Job><JobId>1</JobId><Queue>batch</Queue></Job>",
        "<Job><JobId>2</JobId></Job>",
    )
    first, second = jobs_of(read(path))
    assert (first.queue_number, second.queue_number) == (1, 2)
    assert second.extras["sss:Queue"] == " batch "


def test_accounts_are_kept_exactly(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        "<Job><JobId>1</JobId><ProjectId>p q</ProjectId></Job>",
        "<Job><JobId>2</JobId><ProjectId> p_q</ProjectId></Job>",
    )
    assert [job.account for job in read(path)] == ["p q", " p_q"]


# ----------------------------------------------------------------------- JobIds


def test_shared_job_ids_are_numbered_by_position_with_a_finding(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        "<Job><JobId>1</JobId><UserId>a</UserId></Job>",
        "<Job><JobId>1</JobId><UserId>b</UserId></Job>",
        "<Job><JobId>7</JobId></Job>",
    )
    workload = read(path)
    jobs = jobs_of(workload)
    assert [job.job_number for job in jobs] == [1, 2, 3]
    assert [job.extras.get("sss:JobId") for job in jobs] == [None, "1", "7"]
    (finding,) = workload.meta["findings"]
    assert finding.severity == "warning" and finding.check == "duplicate-job-id"
    assert finding.field == "job_number" and finding.job == 2
    assert "'1' at jobs 1, 2" in finding.message


def test_distinct_job_ids_give_no_finding(tmp_path: Path) -> None:
    path = doc(tmp_path, "<Job><JobId>a</JobId></Job>", "<Job><JobId>b</JobId></Job>")
    workload = read(path)
    assert [job.job_number for job in workload] == [1, 2]
    assert workload.meta["findings"] == []


def test_dependencies_on_shared_job_ids_stay_unresolved(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        "<Job><JobId>x</JobId></Job>",
        "<Job><JobId>x</JobId></Job>",
        "<Job><JobId>y</JobId><Dependency>x</Dependency></Job>",
        "<Job><JobId>z</JobId><Dependency>y</Dependency></Job>",
    )
    jobs = jobs_of(read(path))
    assert [job.job_number for job in jobs] == [1, 2, 3, 4]
    assert [d.job for d in jobs[2].dependencies] == ["x"]  # which x is not known
    assert [d.job for d in jobs[3].dependencies] == [3]


def test_shared_job_id_makes_no_false_cycle(tmp_path: Path) -> None:
    # Job 1 (x) -> y -> x: which x is meant is not known, so no cycle can be claimed.
    path = doc(
        tmp_path,
        "<Job><JobId>x</JobId><Dependency>y</Dependency></Job>",
        "<Job><JobId>y</JobId><Dependency>x</Dependency></Job>",
        "<Job><JobId>x</JobId></Job>",
    )
    jobs = jobs_of(read(path))
    assert [d.job for d in jobs[0].dependencies] == [2]
    assert [d.job for d in jobs[1].dependencies] == ["x"]


def test_dependency_on_a_skipped_job_stays_unresolved(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        "<Job><JobId>a</JobId><Processors>abc</Processors></Job>",
        "<Job><JobId>b</JobId><Dependency>a</Dependency></Job>",
    )
    workload = read(path, lenient=True)
    (job,) = jobs_of(workload)
    assert workload.meta["skipped"] == 1
    assert job.job_number == 2 and [d.job for d in job.dependencies] == ["a"]


def test_shared_job_ids_survive_an_sss_round_trip(tmp_path: Path) -> None:
    path = doc(tmp_path, "<Job><JobId>1</JobId></Job>", "<Job><JobId>1</JobId></Job>")
    jobs = jobs_of(read(path))
    copy = tmp_path / "copy.sss.xml"
    schedlab.write(read(path), copy)
    assert jobs_of(read(copy)) == jobs


def test_convert_reports_shared_job_ids(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = doc(tmp_path, "<Job><JobId>1</JobId></Job>", "<Job><JobId>1</JobId></Job>")
    out = tmp_path / "out.swf"
    code, _, err = run_cli(capsys, "convert", str(path), str(out))
    assert code == 0 and "1 finding(s)" in err
    numbers = [line.split()[0] for line in out.read_text().splitlines() if line[:1] != ";"]
    assert numbers == ["1", "2"]
    code, out_text, _ = run_cli(capsys, "validate", str(path))
    assert code == 0 and "duplicate-job-id" in out_text


# ----------------------------------------------------------------------- numbers


@pytest.mark.parametrize("validate", ["fast", "full"])
@pytest.mark.parametrize(
    ("inner", "where"),
    [
        ("<Requested><Processors>\u0664</Processors></Requested>", "Requested/Processors"),
        ("<Requested><Processors>\uff14</Processors></Requested>", "Requested/Processors"),
        ("<Processors>\u00a04</Processors>", "Processors"),
        ("<SubmissionTime>\u0661\u0660\u0660\u0660</SubmissionTime>", "SubmissionTime"),
        (
            "<Requested><WallDuration>\u0969\u0966</WallDuration></Requested>",
            "Requested/WallDuration",
        ),
        ("<Priority>\u2003-4</Priority>", "Priority"),
        ("<Requested><Memory>\u0661.5</Memory></Requested>", "Requested/Memory"),
        (
            "<Delivered><Processors consumptionRate='\u0660.5'>2</Processors></Delivered>",
            "Delivered/Processors",
        ),
        ("<Dependency type='OnExit' code='\u0663'>x</Dependency>", "Dependency"),
        (
            "<Requested><Memory units='MB\u00a0'>1</Memory></Requested>",
            "Requested/Memory",
        ),
    ],
    ids=[
        "arabic-indic",
        "fullwidth",
        "no-break-space",
        "submission",
        "devanagari",
        "em-space",
        "memory",
        "rate",
        "code",
        "units-token",
    ],
)
def test_values_outside_the_xsd_lexical_space_are_refused(
    tmp_path: Path, inner: str, where: str, validate: str
) -> None:
    path = doc(tmp_path, f"<Job><JobId>1</JobId>{inner}</Job>")
    with pytest.raises(FormatError) as caught:
        list(read(path, validate=validate))
    text = str(caught.value)
    assert "\n" not in text and path.name in text
    assert f"/JobGroup/Job[1]/{where}" in text


def test_numbers_with_xml_whitespace_are_read(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        "<Job><JobId>1</JobId><SubmissionTime>\n 100\t</SubmissionTime>"
        "<Requested><Processors> 4 </Processors><Memory units=' KB '>\r\n2.5 </Memory>"
        "</Requested></Job>",
    )
    (job,) = jobs_of(read(path, validate="full"))
    assert job.requested_processors == 4
    assert job.requested_memory == pytest.approx(2.5 / 4)


def test_cli_refuses_non_ascii_digits_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = doc(tmp_path, "<Job><JobId>1</JobId><Processors>\u0664</Processors></Job>")
    code, _, err = run_cli(capsys, "info", str(path), "-R", "validate=full")
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("schedlab: error: ")
    assert "/JobGroup/Job[1]/Processors" in err and "Traceback" not in err


# ----------------------------------------------------------------------- whitespace


def _gzip_doc(tmp_path: Path, before: str, blanks: int, after: str) -> Path:
    path = tmp_path / "bomb.sss.xml.gz"
    with gzip.open(path, "wb") as out:
        out.write(b'<?xml version="1.0"?>\n<JobGroup><JobGroupId>g</JobGroupId>')
        out.write(before.encode())
        block = b" " * (1 << 16)
        for _ in range(blanks >> 16):
            out.write(block)
        out.write(b" " * (blanks & 0xFFFF))
        out.write(after.encode() + b"</JobGroup>\n")
    return path


def test_whitespace_bomb_is_refused_before_it_is_held(tmp_path: Path) -> None:
    path = _gzip_doc(
        tmp_path,
        "<Job><JobId>1</JobId></Job>\n<Job><JobId>2</JobId><UserId>u</UserId>",
        32 << 20,
        "</Job>",
    )
    assert path.stat().st_size < 100_000
    tracemalloc.start()
    try:
        with pytest.raises(FormatError) as caught:
            list(read(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    error = caught.value
    assert error.line == 3 and error.path == "/JobGroup/Job[2]"
    assert "whitespace in a row after </UserId> is refused" in str(error)
    assert peak < 8 << 20, peak  # 32 MiB of blanks were never held


def test_whitespace_between_jobs_up_to_the_bound_is_read(tmp_path: Path) -> None:
    path = _gzip_doc(
        tmp_path,
        "<Job><JobId>1</JobId></Job>",
        MAX_WHITESPACE_RUN,
        "<Job><JobId>2</JobId></Job>",
    )
    assert [job.job_number for job in read(path)] == [1, 2]
    longer = _gzip_doc(tmp_path, "<Job><JobId>1</JobId></Job>", MAX_WHITESPACE_RUN + 1, "<Job/>")
    with pytest.raises(FormatError, match="whitespace in a row"):
        list(read(longer))


def test_cli_refuses_whitespace_bomb_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = _gzip_doc(tmp_path, "<Job><JobId>1</JobId><UserId>", 4 << 20, "u</UserId></Job>")
    code, _, err = run_cli(capsys, "info", str(path))
    assert code == 2 and err.count("\n") == 1 and err.startswith("schedlab: error: ")
    assert "bomb.sss.xml.gz:2: /JobGroup/Job[1]/UserId: more than 1 MiB of whitespace" in err


def test_whitespace_run_starting_on_a_chunk_boundary_names_its_line(tmp_path: Path) -> None:
    head = '<?xml version="1.0"?>\n<JobGroup>\n<JobGroupId>g</JobGroupId>\n<Job><JobId>1</JobId>'
    end = "</JobName></Job>"
    first = head + "<JobName>" + "n" * (CHUNK_SIZE - len(head) - len("<JobName>") - len(end))
    first += end
    assert len(first) == CHUNK_SIZE  # the blanks start the second chunk, on line 4
    path = tmp_path / "edge.sss.xml"
    path.write_bytes(first.encode() + b" " * (MAX_WHITESPACE_RUN + 1) + b"</JobGroup>")
    with pytest.raises(FormatError) as caught:
        list(read(path))
    assert caught.value.line == 4 and caught.value.path == "/JobGroup"
    assert "whitespace in a row after </Job> is refused" in str(caught.value)


def test_whitespace_bomb_in_a_job_document_names_the_element(tmp_path: Path) -> None:
    path = tmp_path / "job.sss.xml"
    body = b"<Job>\n<JobId>1</JobId>\n<Requested><Processors>"
    path.write_bytes(body + b"\n" * (MAX_WHITESPACE_RUN + 1) + b"4</Processors></Requested></Job>")
    with pytest.raises(FormatError) as caught:
        list(read(path))
    assert caught.value.line == 3 and caught.value.path == "/Job/Requested/Processors"
