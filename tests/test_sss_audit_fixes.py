"""Fixes of the SSS/Batsim/sacct audit (round 2), SSS side.

1. Requested Memory (a job total) is divided by the processor count the simulator
   uses (requested, else delivered), so a job asks its memory once, not N times; a
   Memory with no processor count at all is left unknown, kept as its element and
   reported, never passed off as a per-processor value.
2. JobIds above 2**53 - 1 (the limit of every reader) stay text with a position
   number, as ``007`` does; Priority, ExitCode and Dependency ``code`` beyond it are
   refused naming the XML path and the value as written. The Grid Engine writers
   never write a job number or priority their reader refuses.
3. The XML Schema instance attributes (``xsi:schemaLocation``,
   ``xsi:noNamespaceSchemaLocation``, ``xsi:type``) are accepted as XML Schema allows;
   ``xsi:nil`` is refused (no SSS element is nillable); attribute names in messages
   are not cut off.
4. UTF-16 and UTF-32 documents (and their gzip) are recognised by content.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import schedlab
from schedlab.api import detect_reader
from schedlab.errors import FormatError
from schedlab.formats.sss.schema import load_schema
from schedlab.losses import collect_losses
from schedlab.model import Job, Workload
from schedlab.testing import run_cli as run

XSI = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
PLATFORM = """[platform]
sharing = "exclusive"
[node_groups.n]
count = 1
cores = 8
memory = "8GiB"
[partitions.batch]
nodes = ["n"]
"""


def _group(*jobs: str, root_attrs: str = "") -> str:
    body = "".join(f"<Job>{job}</Job>\n" for job in jobs)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<JobGroup{' ' + root_attrs if root_attrs else ''}>\n"
        f"<JobGroupId>g</JobGroupId>\n{body}</JobGroup>\n"
    )


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _jobs(path: Path, **options: object) -> list[Job]:
    return list(schedlab.read(path, **options))


_TIMES = (
    "<SubmissionTime>1000</SubmissionTime><StartTime>1000</StartTime>"
    "<EndTime>1100</EndTime><JobState>Completed</JobState>"
)
MEM_JOB = (
    f"<JobId>7</JobId>{_TIMES}"
    '<Requested><Memory units="GB">4</Memory></Requested>'
    '<Delivered><Processors>4</Processors><Memory units="GB">4</Memory></Delivered>'
)


# --------------------------------------------------------------- 1. memory per processor


def test_requested_memory_divided_by_delivered_processors(tmp_path: Path) -> None:
    (job,) = _jobs(_write(tmp_path, "mem.xml", _group(MEM_JOB)))
    assert job.requested_processors is None
    assert job.allocated_processors == 4
    assert job.requested_memory == 2**20  # 4 GiB over 4 processors, in KB
    assert job.used_memory == 2**20


def test_requested_memory_job_fits_the_platform(tmp_path: Path, capsys: object) -> None:
    doc = _write(tmp_path, "mem.xml", _group(MEM_JOB))
    platform = _write(tmp_path, "plat.toml", PLATFORM)
    out = tmp_path / "s.swf"
    code, stdout, _err = run(
        capsys, "simulate", str(doc), "--platform", str(platform), "-o", str(out)
    )
    assert code == 0
    assert "never_fits" not in stdout
    rows = [line.split() for line in out.read_text().splitlines() if not line.startswith(";")]
    assert len(rows) == 1


def test_swf_field_10_is_per_processor(tmp_path: Path, capsys: object) -> None:
    doc = _write(tmp_path, "mem.xml", _group(MEM_JOB))
    out = tmp_path / "mem.swf"
    code, _out, err = run(capsys, "convert", str(doc), str(out))
    assert code == 0, err
    (row,) = [line.split() for line in out.read_text().splitlines() if not line.startswith(";")]
    assert row[9] == "1048576"  # field 10: KB per processor
    assert row[6] == "1048576"  # field 7, as before


def test_memory_without_any_processor_count_stays_unknown(tmp_path: Path) -> None:
    doc = _group(
        f"<JobId>1</JobId>{_TIMES}"
        '<Requested><Memory units="GB">4</Memory></Requested>'
        '<Delivered><Memory units="GB">2</Memory></Delivered>',
        f"<JobId>2</JobId>{_TIMES}<Requested><Memory>8</Memory></Requested>",
        f"<JobId>3</JobId>{_TIMES}"
        "<Requested><Processors>2</Processors><Memory>8</Memory></Requested>",
    )
    workload = schedlab.read(_write(tmp_path, "nocount.xml", doc))
    first, second, third = list(workload)
    assert first.requested_memory is None and first.used_memory is None
    assert second.requested_memory is None
    assert third.requested_memory == 8 * 1024 / 2
    # the elements are kept, not lost
    assert first.extras["sss:Requested"] == [
        {"tag": "Memory", "attrib": {"units": "GB"}, "text": "4"}
    ]
    assert first.extras["sss:Delivered"] == [
        {"tag": "Memory", "attrib": {"units": "GB"}, "text": "2"}
    ]
    # and reported, with the count
    found = [f for f in workload.meta["findings"] if f.check == "memory-without-processors"]
    assert len(found) == 1
    assert found[0].severity == "warning"
    assert "3 Memory amount(s) of 2 job(s)" in found[0].message
    assert found[0].job == 1
    # iterating again does not repeat the finding
    list(workload)
    assert sum(f.check == "memory-without-processors" for f in workload.meta["findings"]) == 1


def test_memory_per_processor_option_needs_no_count(tmp_path: Path) -> None:
    doc = _group(f"<JobId>1</JobId>{_TIMES}<Requested><Memory>8</Memory></Requested>")
    workload = schedlab.read(_write(tmp_path, "perproc.xml", doc), memory="processor")
    (job,) = list(workload)
    assert job.requested_memory == 8 * 1024
    assert not [f for f in workload.meta["findings"] if f.check == "memory-without-processors"]


def test_writer_multiplies_by_the_same_count(tmp_path: Path) -> None:
    jobs = [
        # requested processors unknown: the total is per allocated processor x 4
        Job(
            job_number=1,
            submit_time=0,
            wait_time=0,
            run_time=10,
            allocated_processors=4,
            requested_memory=1000.0,
            used_memory=500.0,
        ),
        # no count at all: no Memory element (a total cannot be said)
        Job(job_number=2, submit_time=0, wait_time=0, run_time=10, requested_memory=1000.0),
        # used memory with only a requested count: per requested processor
        Job(
            job_number=3,
            submit_time=0,
            wait_time=0,
            run_time=10,
            requested_processors=2,
            used_memory=300.0,
        ),
    ]
    path = tmp_path / "out.sss.xml"
    schedlab.write(Workload.from_jobs(jobs), path)
    text = path.read_text()
    job1, job2, job3 = text.split("<Job>")[1:]
    assert '<Memory units="KB">4000</Memory>' in job1
    assert '<Memory units="KB">2000</Memory>' in job1
    assert 'name="requested_memory"' not in job1 and 'name="used_memory"' not in job1
    assert "<Memory" not in job2
    assert '<Memory units="KB">600</Memory>' in job3
    back = list(schedlab.read(path))
    for before, after in zip(jobs, back, strict=True):
        assert after.requested_memory == before.requested_memory
        assert after.used_memory == before.used_memory


# --------------------------------------------------------------- 2. 2**53 - 1


def test_large_job_id_stays_text_with_a_position(tmp_path: Path) -> None:
    doc = _group(
        "<JobId>999999999999999999</JobId><UserId>u</UserId>",
        "<JobId>9007199254740991</JobId><UserId>u</UserId>",
    )
    first, second = _jobs(_write(tmp_path, "id18.xml", doc))
    assert first.job_number == 1
    assert first.extras["sss:JobId"] == "999999999999999999"
    assert second.job_number == 2
    assert second.extras["sss:JobId"] == "9007199254740991"


def test_largest_exact_job_id_is_a_number(tmp_path: Path) -> None:
    doc = _group("<JobId>9007199254740991</JobId>", "<JobId>3</JobId>")
    first, second = _jobs(_write(tmp_path, "ids.xml", doc))
    assert first.job_number == 2**53 - 1 and "sss:JobId" not in first.extras
    assert second.job_number == 3
    doc = _group("<JobId>9007199254740992</JobId>", "<JobId>3</JobId>")
    first, second = _jobs(_write(tmp_path, "ids2.xml", doc))
    assert (first.job_number, second.job_number) == (1, 2)
    assert first.extras["sss:JobId"] == "9007199254740992"


def test_large_job_id_converts_and_reads_back(tmp_path: Path, capsys: object) -> None:
    doc = _write(
        tmp_path, "id18.xml", _group("<JobId>999999999999999999</JobId><UserId>u</UserId>")
    )
    for target, fmt in (("id.swf", "swf"), ("id.acc", "sge"), ("id.jsonl", "sge-jsonl")):
        out = tmp_path / target
        code, _out, err = run(capsys, "convert", str(doc), str(out), "--to", fmt)
        assert code == 0, err
        code, _out, err = run(capsys, "info", str(out), "--from", fmt)
        assert code == 0, err


@pytest.mark.parametrize(
    ("element", "value"),
    [
        ("<Priority>{}</Priority>", "9223372036854775807"),
        ("<Priority>{}</Priority>", "9007199254740992"),
        ("<Priority>{}</Priority>", "-9007199254740992"),
        ("<ExitCode>{}</ExitCode>", "9007199254740992"),
    ],
)
def test_integers_beyond_2_53_are_refused_as_written(
    tmp_path: Path, element: str, value: str
) -> None:
    tag = element[1 : element.index(">")]
    doc = _write(tmp_path, "prio.xml", _group("<JobId>7</JobId>" + element.format(value)))
    with pytest.raises(FormatError) as info:
        _jobs(doc)
    message = str(info.value)
    assert f"/JobGroup/Job[1]/{tag}" in message
    assert value in message
    assert "2**53 - 1" in message
    assert "\n" not in message


def test_dependency_code_beyond_2_53_is_refused(tmp_path: Path) -> None:
    doc = _group(
        "<JobId>1</JobId>",
        '<JobId>2</JobId><Dependency type="OnExit" code="9007199254740992">1</Dependency>',
    )
    with pytest.raises(FormatError) as info:
        _jobs(_write(tmp_path, "code.xml", doc))
    assert "/JobGroup/Job[2]/Dependency" in str(info.value)
    assert "9007199254740992" in str(info.value)


def test_integers_at_2_53_minus_1_are_read(tmp_path: Path) -> None:
    doc = _group(
        "<JobId>7</JobId><Priority>9007199254740991</Priority>"
        "<ExitCode>-9007199254740991</ExitCode>"
    )
    (job,) = _jobs(_write(tmp_path, "ok.xml", doc))
    assert job.priority == 2**53 - 1
    assert job.exit_code == -(2**53 - 1)


def test_sss_writer_keeps_large_priority_out_of_the_element(tmp_path: Path) -> None:
    job = Job(job_number=1, submit_time=0, priority=2**60, exit_code=2**53)
    path = tmp_path / "big.sss.xml"
    schedlab.write(Workload.from_jobs([job]), path)
    assert "<Priority>" not in path.read_text()
    (back,) = list(schedlab.read(path))
    assert back.priority == 2**60 and back.exit_code == 2**53


@pytest.mark.parametrize(("fmt", "name"), [("sge", "out.acc"), ("sge-jsonl", "out.jsonl")])
def test_sge_writers_never_write_what_their_reader_refuses(
    tmp_path: Path, fmt: str, name: str
) -> None:
    jobs = [
        Job(
            job_number=2**53,
            submit_time=0,
            wait_time=0,
            run_time=5,
            allocated_processors=1,
            status=1,
            priority=2**60,
        ),
        Job(
            job_number=5,
            submit_time=1,
            wait_time=0,
            run_time=5,
            allocated_processors=1,
            status=1,
            priority=-(2**53),
        ),
        Job(
            job_number=6,
            submit_time=2,
            wait_time=0,
            run_time=5,
            allocated_processors=1,
            status=1,
            priority=2**53 - 1,
        ),
    ]
    path = tmp_path / name
    with collect_losses() as losses:
        schedlab.write(Workload.from_jobs(jobs), path, format=fmt)
    back = list(schedlab.read(path, format=fmt, job_numbers="sge"))
    assert len(back) == 3
    numbers = [j.job_number for j in back]
    assert all(0 < n <= 2**53 - 1 for n in numbers)
    assert len(set(numbers)) == 3
    text = "\n".join(str(loss) for loss in losses)
    assert "job_number" in text and "out of range" in text
    assert "priority" in text
    assert str(2**53 - 1) in path.read_text()  # the largest exact priority is kept


# --------------------------------------------------------------- 3. xsi attributes


@pytest.mark.parametrize(
    "root_attrs",
    [
        f'{XSI} xsi:noNamespaceSchemaLocation="sss-job-object.xsd"',
        f'{XSI} xsi:schemaLocation="urn:example sss-job-object.xsd"',
    ],
)
def test_schema_location_hints_are_accepted(tmp_path: Path, root_attrs: str) -> None:
    text = _group("<JobId>7</JobId><UserId>u</UserId>", root_attrs=root_attrs)
    path = _write(tmp_path, "xsi.xml", text)
    assert load_schema().is_valid(text)
    for validate in ("fast", "full"):
        (job,) = _jobs(path, validate=validate)
        assert job.job_number == 7
        assert not any("XMLSchema-instance" in key for key in str(job.extras))


def test_xsi_type_naming_the_declared_or_a_derived_type(tmp_path: Path) -> None:
    text = _group(
        f'<JobId {XSI} xsi:type="StringProperty">7</JobId>'
        f'<Processors {XSI} xsi:type="RequestedIntegerConsumable" op="GE">4</Processors>'
        f'<UserId {XSI} xsi:schemaLocation="urn:x x.xsd">u</UserId>'
    )
    assert load_schema().is_valid(text)
    path = _write(tmp_path, "type.xml", text)
    for validate in ("fast", "full"):
        (job,) = _jobs(path, validate=validate)
        assert job.job_number == 7
        assert job.requested_processors == 4
        assert job.extras["sss:attrs"] == {"requested_processors": {"op": "GE"}}
        assert "XMLSchema-instance" not in str(job.extras)


@pytest.mark.parametrize(
    ("job", "expected"),
    [
        (f'<JobId>7</JobId><UserId {XSI} xsi:nil="true"/>', "xsi:nil"),
        (f'<JobId>7</JobId><UserId {XSI} xsi:nil="false">u</UserId>', "xsi:nil"),
        (f'<JobId>7</JobId><UserId {XSI} xsi:type="Foo">u</UserId>', "xsi:type='Foo'"),
        (f'<JobId>7</JobId><UserId {XSI} xsi:type="IntegerProperty">u</UserId>', "xsi:type"),
    ],
)
def test_xsi_attributes_the_schema_refuses(tmp_path: Path, job: str, expected: str) -> None:
    text = _group(job)
    try:
        valid = load_schema().is_valid(text)
    except Exception:  # xmlschema raises on a type it cannot find
        valid = False
    assert not valid
    with pytest.raises(FormatError) as info:
        _jobs(_write(tmp_path, "bad.xml", text), awareness="Ignore")
    assert expected in str(info.value)


def test_attribute_names_are_not_cut_off(tmp_path: Path) -> None:
    text = _group(f'<JobId>7</JobId><UserId {XSI} xsi:foo="1">u</UserId>')
    with pytest.raises(FormatError) as info:
        _jobs(_write(tmp_path, "foo.xml", text))
    assert "attribute 'xsi:foo' is not understood" in str(info.value)
    long_ns = "urn:" + "n" * 80
    text = _group(f'<JobId>7</JobId><UserId xmlns:p="{long_ns}" p:attribute="1">u</UserId>')
    with pytest.raises(FormatError) as info:
        _jobs(_write(tmp_path, "ns.xml", text))
    assert f"{{{long_ns}}}attribute" in str(info.value)


def test_audit_repro_xsi_document(tmp_path: Path, capsys: object) -> None:
    text = _group(
        "<JobId>7</JobId><UserId>u</UserId>",
        root_attrs=f'{XSI} xsi:noNamespaceSchemaLocation="sss-job-object.xsd"',
    )
    code, _out, err = run(capsys, "info", str(_write(tmp_path, "xsi.xml", text)))
    assert code == 0, err


# --------------------------------------------------------------- 4. wide encodings


def _wide(text: str, codec: str, bom: bytes) -> bytes:
    return bom + text.replace('encoding="UTF-8"', f'encoding="{codec.upper()[:6]}"').encode(codec)


@pytest.mark.parametrize(
    ("codec", "bom"),
    [
        ("utf-16-le", b"\xff\xfe"),
        ("utf-16-be", b"\xfe\xff"),
        ("utf-16-le", b""),
        ("utf-32-le", b"\xff\xfe\x00\x00"),
        ("utf-32-be", b"\x00\x00\xfe\xff"),
    ],
)
def test_wide_documents_are_recognised_by_content(
    tmp_path: Path, codec: str, bom: bytes, capsys: object
) -> None:
    data = _wide(_group("<JobId>7</JobId><UserId>u</UserId>"), codec, bom)
    plain = tmp_path / "u.xml"
    plain.write_bytes(data)
    zipped = tmp_path / "u.xml.gz"
    zipped.write_bytes(gzip.compress(data))
    for path in (plain, zipped):
        assert detect_reader(str(path)).name == "sss"
        code, _out, err = run(capsys, "info", str(path))
        assert code == 0, err


def test_wide_non_sss_is_not_claimed(tmp_path: Path) -> None:
    from schedlab.formats.sss import sniff

    head = b"\xff\xfe" + '<?xml version="1.0"?><Other><JobId>1</JobId></Other>'.encode("utf-16-le")
    assert not sniff(head)
    assert sniff(b"\xff\xfe" + "<JobGroup><JobGroupId>g</JobGroupId>".encode("utf-16-le"))
    assert not sniff(b"\xff\xfe\x00")  # too short to say anything
