"""Hostile input to the SSS Job Object reader (issue 15): every reproducer of the
issue as a test, the bounds of :mod:`schedlab.formats.sss.limits`, the value ranges
of :mod:`schedlab.formats.sss.values`, exact lenient skip counts, and hypothesis
fuzzing of the reader's Python API (mutated real job objects and random bytes).

The fuzzing budget comes from a hypothesis profile: ``sss-hostile-ci`` (the default,
a few seconds) or ``sss-hostile-long`` for a longer hunt, chosen with
``SCHEDLAB_FUZZ_PROFILE=hostile-long``.
"""

from __future__ import annotations

import io
import json
import os
import time
import warnings
from pathlib import Path

import pytest
import schedlab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedlab.cli import main
from schedlab.errors import FormatError, SchedlabError
from schedlab.formats.sss.limits import MAX_ATTRIBUTES, MAX_DEPTH, MAX_KEPT_PROBLEMS
from schedlab.formats.sss.reader import SSSAwarenessWarning, SSSValidationError, read
from schedlab.formats.sss.schema import rules
from schedlab.model import Job, Workload

DATA = Path(__file__).parent / "data" / "sss"

settings.register_profile(
    "sss-hostile-ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "sss-hostile-long",
    max_examples=3000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
_LONG = os.environ.get("SCHEDLAB_FUZZ_PROFILE", "").endswith("long")
FUZZ = settings.get_profile("sss-hostile-long" if _LONG else "sss-hostile-ci")

GROUP = "<JobGroup><JobGroupId>g</JobGroupId>{}</JobGroup>"


def doc(tmp_path: Path, body: str | bytes, name: str = "doc.sss.xml") -> Path:
    path = tmp_path / name
    path.write_bytes(body.encode() if isinstance(body, str) else body)
    return path


def group_of(*jobs: str) -> str:
    return GROUP.format("".join(jobs))


def strict_error(path: Path) -> FormatError:
    with pytest.raises(FormatError) as caught:
        list(read(path))
    error = caught.value
    text = str(error)
    assert "\n" not in text and len(text) < 2000, text
    assert path.name in text
    return error


def run_cli(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


# ----------------------------------------------------------------------- nesting


def _deep(levels: int) -> str:
    return "<Processors>" * levels + "1" + "</Processors>" * levels


@pytest.mark.parametrize("root", ["group", "job"])
def test_processors_nested_1000_deep_is_one_line_error(tmp_path: Path, root: str) -> None:
    job = f"<Job><JobId>1</JobId>{_deep(1000)}</Job>"
    path = doc(tmp_path, group_of(job) if root == "group" else job)
    assert path.stat().st_size > 24_000
    error = strict_error(path)
    where = "/JobGroup/Job[1]/Processors" if root == "group" else "/Job/Processors"
    assert where in str(error)
    assert f"deeper than {MAX_DEPTH} levels" in str(error)


def test_deep_job_is_skipped_by_a_lenient_read_with_a_short_reject(tmp_path: Path) -> None:
    good = "<Job><JobId>2</JobId><Processors>4</Processors></Job>"
    path = doc(tmp_path, group_of(f"<Job><JobId>1</JobId>{_deep(5000)}</Job>", good))
    workload = read(path, lenient=True)
    assert [job.job_number for job in workload] == [2]
    assert workload.meta["skipped"] == 1
    ((position, text),) = workload.meta["rejects"]
    assert position == 1
    assert "deeper than" in text and len(text) < 3000


def test_the_schema_itself_stays_within_the_bounds() -> None:
    # The bounds must never reject a valid document: the deepest element path and
    # the largest attribute set of the XSD, computed from the compiled rules.
    def depth(rule, seen: frozenset) -> int:
        if id(rule) in seen:
            raise AssertionError("the schema is recursive")
        inner = [depth(child, seen | {id(rule)}) for child in rule.children.values()]
        return 1 + max(inner, default=0)

    def widest(rule, seen: set) -> int:
        if id(rule) in seen:
            return 0
        seen.add(id(rule))
        return max([len(rule.attributes)] + [widest(c, seen) for c in rule.children.values()])

    assert depth(rules()["JobGroup"], frozenset()) == 7 <= MAX_DEPTH
    assert widest(rules()["JobGroup"], set()) == 14 <= MAX_ATTRIBUTES


# ----------------------------------------------------------------------- bookkeeping


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("header", "1.5", "field header: expected a list, got float"),
        ("header", '"x"', "field header: expected a list, got str"),
        ("header", "[1]", "field header[]: expected an object, got int"),
        ("header", '[{"label": 1, "value": ""}]', "field header[].label: expected text"),
        ("header", "[[[[", "field header: not valid JSON"),
        ("origin", "x", "field origin: not valid JSON"),
        ("origin", '"0"', "field origin: expected a number or null, got str"),
        ("origin", "NaN", "field origin: nan is not a finite number"),
        ("origin", "-5", "field origin: -5 is not an epoch time"),
    ],
)
def test_bad_bookkeeping_extension_names_file_path_and_field(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    extensions = (
        '<Extension type="schedlab" name="origin">0</Extension>' if name != "origin" else ""
    )
    body = GROUP.format(
        f'{extensions}<Extension type="schedlab" name="{name}">{text}</Extension>'
        "<Job><JobId>1</JobId></Job>"
    )
    path = doc(tmp_path, body)
    for lenient in (False, True):
        with pytest.raises(FormatError) as caught:
            list(read(path, lenient=lenient))
        message = str(caught.value)
        assert f"/JobGroup/Extension[@name='{name}']" in message
        assert expected in message
        assert message.startswith(f"{path}:1: ")


@pytest.mark.parametrize(
    ("field", "text"),
    [
        ("run_time", '"x"'),
        ("allocated_processors", "1.5"),
        ("dependencies", '[{"kind": "end"}]'),
        ("tasks", '[{"task_id": "1", "colour": 2}]'),
        ("extras", "[]"),
        ("wait_time", "Infinity"),
        ("no_such_field", "1"),
        ("name", "{"),
    ],
)
def test_bad_job_bookkeeping_is_a_bad_job(tmp_path: Path, field: str, text: str) -> None:
    job = f'<Job><JobId>1</JobId><Extension type="schedlab" name="{field}">{text}</Extension></Job>'
    path = doc(tmp_path, group_of(job, "<Job><JobId>2</JobId></Job>"))
    error = strict_error(path)
    assert f"/JobGroup/Job[1]/Extension[@name='{field}']" in str(error)
    workload = read(path, lenient=True)
    assert [job.job_number for job in workload] == [2]
    assert workload.meta["skipped"] == 1


@pytest.mark.parametrize("encoding", ["UTTF-8", "rot13", "utf-7", "UTF-32"])
def test_unusable_encoding_is_a_format_error(tmp_path: Path, encoding: str) -> None:
    body = f'<?xml version="1.0" encoding="{encoding}"?>' + group_of("<Job><JobId>1</JobId></Job>")
    error = strict_error(doc(tmp_path, body))
    assert error.field == "encoding" and error.path == "XML declaration" and error.line == 1
    assert repr(encoding) in str(error)


# ----------------------------------------------------------------------- quadratic time


@pytest.mark.parametrize("count", [20_000, 200_000])
def test_many_attributes_are_refused_quickly(tmp_path: Path, count: int) -> None:
    attributes = " ".join(f'attribute{i}="1"' for i in range(count))
    path = doc(tmp_path, group_of(f"<Job {attributes}><JobId>1</JobId></Job>"))
    if count == 200_000:
        assert path.stat().st_size > 3_400_000  # the 3.5 MB
    start = time.process_time()
    error = strict_error(path)
    elapsed = time.process_time() - start
    assert f"{count} attributes on one element (at most {MAX_ATTRIBUTES}" in str(error)
    assert "/JobGroup/Job[1]" in str(error)
    assert elapsed < 2.5, f"{elapsed:.2f} s of CPU time"


def test_many_problems_are_counted_not_all_kept(tmp_path: Path) -> None:
    jobs = [f"<Job><JobId>{i}</JobId><Processors>-{i}</Processors></Job>" for i in range(1, 3001)]
    unknown = "".join(f"<X{i}/>" for i in range(500))
    jobs.append(f"<Job><JobId>9999</JobId>{unknown}</Job>")
    path = doc(tmp_path, group_of(*jobs))
    start = time.process_time()
    with pytest.raises(SSSValidationError) as caught:
        read(path)
    elapsed = time.process_time() - start
    error = caught.value
    assert error.total == 3000 + 500
    assert len(error.problems) <= MAX_KEPT_PROBLEMS + 50
    assert str(error).startswith(f"{path}: 3500 problems: ")
    assert str(error).endswith(f"... and {3500 - 20} more")
    assert elapsed < 10


# ----------------------------------------------------------------------- value ranges


@pytest.mark.parametrize(
    ("inner", "where"),
    [
        ("<Processors>-16</Processors>", "/Processors"),
        ("<Processors>0</Processors>", "/Processors"),
        ("<Processors>99999999999</Processors>", "/Processors"),
        ("<Requested><Processors>0</Processors></Requested>", "/Requested/Processors"),
        ("<Delivered><Processors>-1</Processors></Delivered>", "/Delivered/Processors"),
        ("<NodeCount>0</NodeCount>", "/NodeCount"),
        ("<Memory>-1</Memory>", "/Memory"),
        ("<Memory>INF</Memory>", "/Memory"),
        ("<Memory>NaN</Memory>", "/Memory"),
        ('<Memory units="NB">2</Memory>', "/Memory"),
        ("<Requested><Memory>1e300</Memory></Requested>", "/Requested/Memory"),
        ("<Disk>-5</Disk>", "/Disk"),
        ("<Swap>-INF</Swap>", "/Swap"),
        (
            '<Delivered><Processors consumptionRate="-0.5">2</Processors></Delivered>',
            "/Delivered/Processors",
        ),
        ('<Processors consumptionRate="INF">2</Processors>', "/Processors"),
        ("<SubmissionTime>100</SubmissionTime><StartTime>50</StartTime>", "/StartTime"),
        ("<StartTime>100</StartTime><EndTime>50</EndTime>", "/EndTime"),
        (
            "<StartTime>100</StartTime><Delivered><EndTime>99</EndTime></Delivered>",
            "/EndTime",
        ),
        ("<SubmissionTime>100</SubmissionTime><EndTime>50</EndTime>", "/EndTime"),
        ("<ExitCode>100000000000000000000000000000</ExitCode>", "/ExitCode"),
        ("<Priority>" + "9" * 5000 + "</Priority>", "/Priority"),
        ("<StartCount>-1</StartCount>", "/StartCount"),
        ("<Charge>INF</Charge>", "/Charge"),
        ('<Dependency type="OnExit" code="' + "9" * 30 + '">1</Dependency>', "/Dependency"),
        ("<SubmissionTime>" + "9" * 5000 + "</SubmissionTime>", "/SubmissionTime"),
    ],
)
def test_out_of_range_values_are_rejected(tmp_path: Path, inner: str, where: str) -> None:
    bad = f"<Job><JobId>1</JobId>{inner}</Job>"
    path = doc(tmp_path, group_of(bad, "<Job><JobId>2</JobId><Processors>1</Processors></Job>"))
    error = strict_error(path)
    assert f"/JobGroup/Job[1]{where}" in str(error)
    workload = read(path, lenient=True)
    assert [job.job_number for job in workload] == [2]
    assert workload.meta["skipped"] == 1 and workload.meta["records"] == 2


def test_values_at_the_edges_of_their_ranges_are_read(tmp_path: Path) -> None:
    job = (
        "<Job><JobId>1</JobId><SubmissionTime>100</SubmissionTime><StartTime>100</StartTime>"
        "<EndTime>100</EndTime><Requested><Processors>1</Processors><Memory>0</Memory>"
        "</Requested><Delivered><Processors consumptionRate='0'>2147483647</Processors>"
        "</Delivered><Priority>-9007199254740991</Priority><ExitCode>-1</ExitCode></Job>"
    )
    (read_job,) = list(read(doc(tmp_path, group_of(job))))
    assert read_job.requested_processors == 1 and read_job.requested_memory == 0
    assert read_job.allocated_processors == 2**31 - 1
    assert read_job.wait_time == 0 and read_job.run_time == 0
    assert read_job.priority == -(2**53 - 1) and read_job.exit_code == -1


def test_validate_fails_on_non_numeric_processors(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = doc(tmp_path, group_of("<Job><JobId>1</JobId><Processors>abc</Processors></Job>"))
    code, out, _ = run_cli(capsys, "validate", str(path), "--json")
    report = json.loads(out)
    assert code == 1 and report["ok"] is False
    assert report["skipped"] == 1
    code, _, err = run_cli(capsys, "convert", str(path), str(tmp_path / "out.swf"))
    assert code == 2 and "/JobGroup/Job[1]/Processors" in err and "Traceback" not in err


def test_validate_fails_on_negative_processors(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = doc(tmp_path, group_of("<Job><JobId>1</JobId><Processors>-16</Processors></Job>"))
    code, out, _ = run_cli(capsys, "validate", str(path))
    assert code == 1 and "FAILED" in out
    code, _, err = run_cli(capsys, "convert", str(path), str(tmp_path / "out.swf"))
    assert code == 2 and "-16 is not a count" in err


def test_job_ids_read_as_numbers_never_collide(tmp_path: Path) -> None:
    jobs = [f"<Job><JobId>{i}</JobId></Job>" for i in ("1", "01", "\u0661", "9" * 30)]
    numbers = [job.job_number for job in read(doc(tmp_path, group_of(*jobs)))]
    assert numbers == [1, 2, 3, 4]  # not all decimal and canonical: positions


# ----------------------------------------------------------------------- written documents


def _written(tmp_path: Path, jobs: list[Job]) -> Path:
    path = tmp_path / "written.sss.xml"
    schedlab.write(Workload.from_jobs(jobs), path)
    return path


def test_writer_keeps_out_of_range_values_out_of_elements(tmp_path: Path) -> None:
    jobs = [
        Job(job_number=1, submit_time=10, wait_time=-5, run_time=-3, allocated_processors=0),
        Job(job_number=2, submit_time=20, requested_processors=-1, used_memory=-4.0),
        Job(job_number=3, submit_time=30, wait_time=1, run_time=2, allocated_processors=4),
    ]
    path = _written(tmp_path, jobs)
    text = path.read_text()
    assert "<Processors>0<" not in text and "<Processors>-1<" not in text
    back = list(read(path))  # strict: every element is in range
    for original, again in zip(jobs, back, strict=True):
        for field in ("wait_time", "run_time", "allocated_processors", "requested_processors"):
            assert getattr(again, field) == getattr(original, field)
        assert again.used_memory == original.used_memory


def _with_one_bad_job(tmp_path: Path) -> Path:
    jobs = [Job(job_number=i, submit_time=i, requested_processors=2) for i in range(1, 6)]
    path = _written(tmp_path, jobs)
    text = path.read_text()
    assert text.count("<Processors>2</Processors>") == 5
    path.write_text(text.replace("<Processors>2</Processors>", "<Processors>abc</Processors>", 1))
    return path


def test_lenient_skip_count_is_exact_however_often_the_workload_is_iterated(
    tmp_path: Path,
) -> None:
    workload = read(_with_one_bad_job(tmp_path), lenient=True)
    assert workload.meta["sss"]["single_pass"]
    assert workload.meta["skipped"] == 1  # known before iterating
    for _ in range(3):
        assert [job.job_number for job in workload] == [2, 3, 4, 5]
        assert workload.meta["skipped"] == 1
        assert len(workload.meta["rejects"]) == 1
    assert len(workload) == 4 and workload.meta["records"] == 5


def test_validate_reports_one_skipped_job_once(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = _with_one_bad_job(tmp_path)
    code, out, _ = run_cli(capsys, "validate", str(path), "--json")
    report = json.loads(out)
    assert code == 1 and report["skipped"] == 1 and report["jobs"] == 4
    with pytest.raises(FormatError, match="Job\\[1\\]/Requested/Processors"):
        list(read(path))


# ----------------------------------------------------------------------- fuzzing


def _seeds() -> list[bytes]:
    seeds = [
        p.read_bytes() for p in sorted(DATA.glob("*.xml")) if not p.name.startswith("security-")
    ]
    return seeds


@pytest.fixture(scope="module")
def seeds(swf_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """The specification's examples and a schedlab document made from a real trace
    (the first 40 jobs of Lublin's model)."""
    head = "".join((swf_dir / "lublin_256.swf").read_text().splitlines(keepends=True)[:60])
    folder = tmp_path_factory.mktemp("seeds")
    (folder / "head.swf").write_text(head)
    schedlab.write(schedlab.read(folder / "head.swf"), folder / "head.sss.xml")
    return [*_seeds(), (folder / "head.sss.xml").read_bytes()]


_TOKENS = [
    b"-1",
    b"0",
    b"-16",
    b"abc",
    b"INF",
    b"NaN",
    b"99999999999999999999",
    b"<",
    b">",
    b"&",
    b'"',
    b"</Job>",
    b"<Job>",
    b"<Processors>",
    b'<Extension type="schedlab" name="header">',
    b'<Extension type="schedlab" name="run_time">',
    b'awarenessPolicy="Ignore"',
    b'encoding="UTTF-8"',
    b"\xff\xfe",
    b"\x00",
    b"<Processors>" * 40,
    b"<!DOCTYPE x>",
]


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(data)))
        end = draw(st.integers(start, min(len(data), start + 40)))
        action = draw(st.sampled_from(["delete", "insert", "replace", "duplicate"]))
        if action == "delete":
            del data[start:end]
        elif action == "duplicate":
            data[start:start] = data[start:end]
        else:
            piece = draw(st.sampled_from(_TOKENS) | st.binary(max_size=8))
            data[start : end if action == "replace" else start] = piece
    return bytes(data)


def _strict(data: bytes, options: dict) -> SchedlabError | None:
    try:
        list(read(io.BytesIO(data), **options))
    except SchedlabError as error:
        return error
    return None


def _check_both_reads(data: bytes, **options: str) -> None:
    """Only schedlab's errors leave the reader; a strict failure is never a clean
    lenient read (which is what ``validate`` does)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SSSAwarenessWarning)
        strict = _strict(data, options)
        try:
            workload = read(io.BytesIO(data), lenient=True, **options)
            list(workload)
            list(workload)
        except SchedlabError:
            return
    if strict is not None:
        assert workload.meta["skipped"] > 0, f"strict read failed ({strict}), lenient is clean"
        assert workload.meta["skipped"] == len(workload.meta["rejects"])


def test_fuzz_mutated_job_objects(seeds: list[bytes]) -> None:
    @FUZZ
    @given(
        mutated(seeds),
        st.sampled_from(["Reject", "Warn", "Ignore"]),
        st.sampled_from(["fast", "fast", "full"]),
    )
    def check(data: bytes, awareness: str, validate: str) -> None:
        _check_both_reads(data, awareness=awareness, validate=validate)

    check()


@FUZZ
@given(st.binary(max_size=400) | st.builds(lambda b: b"<JobGroup><JobGroupId>" + b, st.binary()))
def test_fuzz_random_bytes(data: bytes) -> None:
    _check_both_reads(data)


def test_values_inherited_from_job_defaults_are_checked_too(tmp_path: Path) -> None:
    body = GROUP.format(
        "<JobDefaults><SubmissionTime>100</SubmissionTime></JobDefaults>"
        "<Job><JobId>1</JobId><StartTime>50</StartTime></Job>"
    )
    path = doc(tmp_path, body)
    for lenient in (False, True):
        with pytest.raises(FormatError, match=r"negative wait.*JobDefaults") as caught:
            list(read(path, lenient=lenient))
        assert "/JobGroup/Job[1]/StartTime" in str(caught.value)


def test_job_defaults_values_are_checked(tmp_path: Path) -> None:
    body = GROUP.format(
        "<JobDefaults><Processors>-4</Processors></JobDefaults><Job><JobId>1</JobId></Job>"
    )
    error = strict_error(doc(tmp_path, body))
    assert "/JobGroup/JobDefaults/Processors: -4 is not a count" in str(error)


@pytest.mark.parametrize("lenient", [False, True])
def test_truncated_compressed_document_names_the_file(tmp_path: Path, lenient: bool) -> None:
    import gzip

    jobs = "".join(f"<Job><JobId>{i}</JobId><Processors>2</Processors></Job>" for i in range(400))
    packed = gzip.compress(group_of(jobs).encode(), mtime=0)
    path = doc(tmp_path, packed[: len(packed) // 2], name="cut.sss.xml.gz")
    with pytest.raises(FormatError) as caught:
        list(read(path, lenient=lenient))
    assert str(path) in str(caught.value)
