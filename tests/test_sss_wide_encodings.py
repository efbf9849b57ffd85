"""SSS documents in UTF-16 and UTF-32: the whitespace bound holds for them as for UTF-8
(their blanks are two or four bytes wide, so a byte count alone missed them), and a
wide document reads to exactly what its UTF-8 version reads to."""

from __future__ import annotations

import codecs
import gzip
import tracemalloc
import warnings
from pathlib import Path
from typing import Any

import pytest
from schedlab.errors import FormatError
from schedlab.formats.sss import safexml
from schedlab.formats.sss.reader import read
from schedlab.testing import run_cli

DATA = Path(__file__).parent / "data" / "sss"

#: id: (Python codec, byte order mark, name in the XML declaration)
WIDE = {
    "utf-16le": ("utf-16-le", codecs.BOM_UTF16_LE, "UTF-16"),
    "utf-16be": ("utf-16-be", codecs.BOM_UTF16_BE, "UTF-16"),
    "utf-16le-no-bom": ("utf-16-le", b"", "UTF-16"),
    "utf-16be-no-bom": ("utf-16-be", b"", "UTF-16"),
    "utf-32le": ("utf-32-le", codecs.BOM_UTF32_LE, "UTF-32"),
    "utf-32be": ("utf-32-be", codecs.BOM_UTF32_BE, "UTF-32"),
    "utf-32le-no-bom": ("utf-32-le", b"", "UTF-32"),
    "utf-32be-no-bom": ("utf-32-be", b"", "UTF-32"),
}
SMALL_LIMIT = 1 << 16  # above the transcoded chunks (at most 32 KiB of ASCII)

HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<JobGroup>\n<JobGroupId>g</JobGroupId>\n'
    "<Job><JobId>1</JobId><UserId>u</UserId>"
)
TAIL = "</Job>\n<Job><JobId>2</JobId></Job>\n</JobGroup>\n"


def encode(text: str, key: str) -> bytes:
    """``text`` (a UTF-8 document) in the wide encoding ``key``, declared as such."""
    codec, bom, name = WIDE[key]
    return bom + text.replace('encoding="UTF-8"', f'encoding="{name}"', 1).encode(codec)


def blanks(count: int) -> str:
    """``count`` XML whitespace characters, a newline every eighth."""
    return ("       \n" * (count // 8 + 1))[:count]


def write_bomb(path: Path, key: str, count: int) -> Path:
    """A gzip document with ``count`` blanks after ``</UserId>`` (line 4), written
    piece by piece."""
    codec = WIDE[key][0]
    piece = (" " * 1023 + "\n").encode(codec)
    with gzip.open(path, "wb", compresslevel=1) as out:
        out.write(encode(HEAD, key))
        for _ in range(count // 1024):
            out.write(piece)
        out.write(" ".encode(codec) * (count % 1024))
        out.write(TAIL.encode(codec))
    return path


# ------------------------------------------------------------------ the whitespace bound


@pytest.mark.parametrize("key", sorted(WIDE))
def test_whitespace_run_in_a_wide_document_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    monkeypatch.setattr(safexml, "MAX_WHITESPACE_RUN", SMALL_LIMIT)
    path = tmp_path / "bomb.sss.xml"
    path.write_bytes(encode(HEAD + blanks(SMALL_LIMIT + 1) + TAIL, key))
    with pytest.raises(FormatError) as caught:
        list(read(path))
    error = caught.value
    assert error.line == 4 and error.path == "/JobGroup/Job[1]"
    assert "whitespace in a row after </UserId> is refused" in str(error)


@pytest.mark.parametrize("key", sorted(WIDE))
def test_whitespace_run_up_to_the_bound_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    monkeypatch.setattr(safexml, "MAX_WHITESPACE_RUN", SMALL_LIMIT)
    path = tmp_path / "long.sss.xml"
    path.write_bytes(encode(HEAD + blanks(SMALL_LIMIT) + TAIL, key))
    assert [job.job_number for job in read(path)] == [1, 2]


@pytest.mark.parametrize("key", ["utf-16le-no-bom", "utf-16be-no-bom", "utf-32le-no-bom"])
def test_leading_whitespace_of_a_wide_document_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    # No declaration, no byte order mark: expat still takes "blank, zero byte" for
    # UTF-16; so does the bound.
    monkeypatch.setattr(safexml, "MAX_WHITESPACE_RUN", SMALL_LIMIT)
    path = tmp_path / "prolog.sss.xml"
    path.write_bytes(encode(" " * (SMALL_LIMIT + 1) + "<Job><JobId>1</JobId></Job>", key))
    with pytest.raises(FormatError, match="whitespace in a row") as caught:
        list(read(path))
    assert caught.value.path == "(prolog)" and caught.value.line == 1


@pytest.mark.parametrize("key", ["utf-16be", "utf-32le"])
def test_real_size_wide_whitespace_bomb_is_refused_before_it_is_held(
    tmp_path: Path, key: str
) -> None:
    path = write_bomb(tmp_path / "bomb.sss.xml.gz", key, 16 << 20)
    assert path.stat().st_size < 1 << 20  # 32 or 64 MB of blanks
    tracemalloc.start()
    try:
        with pytest.raises(FormatError) as caught:
            list(read(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    error = caught.value
    assert error.line == 4 and error.path == "/JobGroup/Job[1]"
    assert "more than 1 MiB of whitespace in a row after </UserId> is refused" in str(error)
    assert peak < 8 << 20, peak  # the blanks were never held


@pytest.mark.parametrize("key", ["utf-16le", "utf-32be"])
def test_cli_refuses_a_wide_whitespace_bomb_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture, key: str
) -> None:
    path = write_bomb(tmp_path / "bomb.sss.xml.gz", key, 4 << 20)
    code, out, err = run_cli(capsys, "info", str(path))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"schedlab: error: {path}:4: /JobGroup/Job[1]: more than 1 MiB of ")
    assert "Traceback" not in err


# ------------------------------------------------------------------ same reads


def outcome(path: Path, **options: Any) -> tuple:
    """Everything a read gives (jobs, header, meta, warnings), or its error, with the
    file's name left out."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            workload = read(path, **options)
            jobs = [repr(job) for job in workload]
            result: tuple = ("read", jobs, repr(workload.header), repr(workload.meta))
        except FormatError as error:
            result = ("error", type(error).__name__, str(error).replace(str(path), "DOC"))
    said = [f"{w.category.__name__}: {w.message}".replace(str(path), "DOC") for w in caught]
    return result, said


FINDINGS = """<?xml version="1.0" encoding="UTF-8"?>
<!-- shared JobIds (a finding), an element and an attribute not understood (warnings) -->
<JobGroup awarenessPolicy="Warn">
  <JobGroupId>\u00e9t\u00e9 \U0001f680</JobGroupId>
  <Job><JobId>1</JobId><UserId>\u00e5sa</UserId><Colour>blue</Colour></Job>
  <Job><JobId>1</JobId><UserId>b\u00f6b</UserId>
    <Requested><Processors op="GE" fuzz="3">4</Processors></Requested></Job>
  <Job><JobId>7</JobId><JobName>\u6c34 \U0001d11e</JobName></Job>
</JobGroup>
"""


@pytest.mark.parametrize("key", sorted(WIDE))
@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("example-1-simple.xml", {}),
        ("example-2-moderate.xml", {}),
        ("example-2-moderate-original.xml", {}),
        ("example-3-elaborate.xml", {}),
        ("example-3-elaborate.xml", {"validate": "full"}),
        ("example-3-elaborate-original.xml", {}),
        ("invalid-several-problems.xml", {}),
        ("invalid-several-problems.xml", {"lenient": True}),
        ("security-billion-laughs.xml", {}),
        ("security-external-entity.xml", {}),
        ("security-undeclared-entity.xml", {}),
        ("findings", {}),
    ],
)
def test_wide_document_reads_as_its_utf8_version(
    tmp_path: Path, key: str, name: str, options: dict
) -> None:
    text = FINDINGS if name == "findings" else (DATA / name).read_text(encoding="utf-8")
    utf8, wide = tmp_path / "utf-8" / "doc.xml", tmp_path / key / "doc.xml"
    for path in (utf8, wide):
        path.parent.mkdir()
    utf8.write_bytes(text.encode("utf-8"))
    wide.write_bytes(encode(text, key))
    assert outcome(wide, **options) == outcome(utf8, **options)


def test_findings_document_is_read_with_its_findings(tmp_path: Path) -> None:
    # The equality above compares real content: findings, warnings, non-ASCII names.
    path = tmp_path / "doc.xml"
    path.write_bytes(encode(FINDINGS, "utf-32be"))
    (result, said) = outcome(path)
    assert result[0] == "read" and len(result[1]) == 3
    assert "duplicate-job-id" in result[3] and "\u00e9t\u00e9 \U0001f680" in result[3]
    assert "\u6c34 \U0001d11e" in result[1][2] and "b\u00f6b" in result[2]
    assert said and "not understood" in said[0]


@pytest.mark.parametrize("key", ["utf-16le", "utf-32be"])
def test_cli_converts_a_wide_document_as_its_utf8_version(
    tmp_path: Path, capsys: pytest.CaptureFixture, key: str
) -> None:
    text = (DATA / "example-3-elaborate.xml").read_text(encoding="utf-8")
    source = {"utf-8": text.encode("utf-8"), key: encode(text, key)}
    converted = {}
    for label, data in source.items():
        path = tmp_path / f"{label}.sss.xml"
        path.write_bytes(data)
        out = tmp_path / f"{label}.swf"
        code, _, err = run_cli(capsys, "convert", str(path), str(out))
        assert code == 0, err
        converted[label] = out.read_text(encoding="utf-8")
    assert converted[key] == converted["utf-8"]


# ------------------------------------------------------------------ malformed wide documents


def test_declaration_naming_another_encoding_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "doc.sss.xml"
    document = '<?xml version="1.0" encoding="UTF-8"?>\n<Job><JobId>1</JobId></Job>\n'
    path.write_bytes(codecs.BOM_UTF16_BE + document.encode("utf-16-be"))
    with pytest.raises(FormatError) as caught:
        list(read(path))
    assert caught.value.line == 1 and caught.value.field == "encoding"
    assert "names encoding 'UTF-8', but the document is UTF-16BE" in str(caught.value)


@pytest.mark.parametrize(
    ("key", "bad"),
    [
        ("utf-16le", b"\x00\xd8"),  # a lone surrogate
        ("utf-32le", b"\x00\x00\x11\x00"),  # beyond U+10FFFF
        ("utf-32be", b"\x00\x00\xdc\x00"),  # a surrogate
    ],
)
def test_undecodable_character_is_a_well_formedness_error_on_its_line(
    tmp_path: Path, key: str, bad: bytes
) -> None:
    path = tmp_path / "doc.sss.xml"
    start = '<?xml version="1.0" encoding="UTF-8"?>\n<Job>\n<JobId>1</JobId><JobName>a'
    path.write_bytes(encode(start, key) + bad + "</JobName></Job>".encode(WIDE[key][0]))
    with pytest.raises(FormatError, match="not well-formed XML: invalid token") as caught:
        list(read(path))
    assert caught.value.line == 3


def test_truncated_last_character_is_a_well_formedness_error(tmp_path: Path) -> None:
    path = tmp_path / "doc.sss.xml"
    document = '<?xml version="1.0" encoding="UTF-16"?>\n<Job><JobId>1</JobId></Job>\n'
    path.write_bytes(document.encode("utf-16") + b" ")
    with pytest.raises(FormatError, match="not well-formed XML") as caught:
        list(read(path))
    assert caught.value.line == 3
