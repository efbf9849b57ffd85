"""Fixes of the fuzz audit for the SSS format sniffer and Batsim's formats.

* SSS: the content sniffer's prolog regex nested a repeat inside a repeat
  (``(?:\\s+|<\\?.*?\\?>|...)*``): a file starting with ~30 blank lines, processing
  instructions or comments, followed by anything but an SSS root, took minutes to
  hours in every command that detects a format by content. Detection is now linear.
* Batsim writers: a ``MaxProcs`` header whose text is a Unicode digit (``²``, which
  ``str.isdigit`` accepts and ``int`` refuses) crashed both writers (exit 3); a
  full-width ``４`` was silently written as 4. Only ASCII digits are a size now; any
  other text is reported lost, as a non-integer was.
* Batsim reader: a lone UTF-16 surrogate (the JSON escape ``"\\ud800"``) was read and
  then crashed every writer; it is now an error naming the job or profile and the
  field (skipped and counted when lenient).
* Batsim reader: a key given twice in one JSON object (``"res": 4, "res": 8``) was
  read as its last value; it is now an error naming the key. A column named twice
  in a jobs file header is an error too.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import schedlab
from schedlab.api import detect_reader
from schedlab.errors import FormatError
from schedlab.formats import sss
from schedlab.losses import collect_losses
from schedlab.model import Header, Job, Workload
from schedlab.testing import run_cli as run

SWF_LINES = "".join(
    f"{i} {10 * i} 0 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1\n" for i in range(1, 6)
)
SSS_DOC = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<!-- a comment -->\n<JobGroup>\n'
    b"<JobGroupId>g</JobGroupId>\n</JobGroup>\n"
)


# ------------------------------------------------------------ timing guard


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Fail (instead of hanging for hours on the old code) once ``seconds`` pass;
    Python's regex engine checks for signals while it backtracks."""

    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _timed(call: Callable[[], Any], bound: float = 2.0) -> tuple[Any, float]:
    """``call()`` and the seconds it took, failing once ``bound`` is passed."""
    start = time.perf_counter()
    with _deadline(bound):
        result = call()
    return result, time.perf_counter() - start


# ------------------------------------------------------------ finding 1: SSS sniffer


@pytest.mark.parametrize(
    "head",
    [
        b"\n" * 28 + b"x",  # the old code: about 10 s, doubling per blank
        b" " * 40 + b"x",  # the old code: hours
        b"<?a?>" * 28 + b"x",  # processing instructions: the same blow-up
        b"<!--a-->" * 28 + b"x",  # comments too
        b"\n" * 65536,  # a whole sniffed head of blank lines
        b" \t\r\n" * 16384,
        b"<?a?>\n" * 10000 + b"<x>",
        b"<!---->" * 9000 + b"<Jo",
        b"<?" * 30000,  # an instruction never closed
        b"<!--" * 16000,
        b"<!DOCTYPE" * 7000,
    ],
)
def test_sss_sniffer_is_linear(head: bytes) -> None:
    result, seconds = _timed(lambda: sss.sniff(head))
    assert result is False
    assert seconds < 2.0


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (SSS_DOC, True),
        (b"\n" * 20000 + SSS_DOC, True),
        (b"\xef\xbb\xbf" + SSS_DOC, True),
        (b'<?xml version="1.0"?><!DOCTYPE JobGroup><Job><JobId>1</JobId></Job>', True),
        (b"<?pi one?>\n<?pi two?>\n<!-- c --><!-- d -->\n<Job/>\n<JobId>", True),
        (b"<?a?><?b?> junk <Job><JobId>1</JobId></Job>", False),  # text in the prolog
        (b"<!-- never closed <Job><JobId>1</JobId></Job>", False),
        (b"<Jobs><JobId>1</JobId></Jobs>", False),
        (b"<Job><Other/></Job>", False),  # no JobId
        (b"<!DOCTYPE x [<!ENTITY e 'v'>]><Job><JobId>1</JobId></Job>", False),
    ],
)
def test_sss_sniffer_still_recognises_its_documents(head: bytes, expected: bool) -> None:
    assert _timed(lambda: sss.sniff(head))[0] is expected


def test_detection_after_thousands_of_blank_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the fuzzer's case: a file whose suffix no reader claims, after 20,000 blank lines
    path = tmp_path / "blank.txt"
    path.write_text("\n" * 20000 + SWF_LINES)
    (code, out, err), seconds = _timed(lambda: run(capsys, "info", str(path), "--json"), 20.0)
    assert code == 0, err
    info = json.loads(out)
    assert (info["format"], info["jobs"]) == ("swf", 5)
    assert seconds < 10.0
    sss_path = tmp_path / "doc.xml"
    sss_path.write_bytes(b"\n" * 40 + SSS_DOC)
    assert detect_reader(sss_path).name == "sss"
    other = tmp_path / "other.txt"
    other.write_bytes(b" " * 40 + b"x\n")
    with _deadline(5.0), pytest.raises(FormatError, match="cannot tell the format"):
        detect_reader(other)


# ------------------------------------------------------------ finding 4: MaxProcs


def _swf(tmp_path: Path, max_procs: str) -> Path:
    path = tmp_path / "min.swf"
    path.write_text(f"; MaxProcs: {max_procs}\n" + SWF_LINES, encoding="utf-8")
    return path


@pytest.mark.parametrize("max_procs", ["²", "\uff14", "٣"])
def test_batsim_writers_take_only_ascii_digits_as_maxprocs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], max_procs: str
) -> None:
    src = _swf(tmp_path, max_procs)
    out = tmp_path / "min.json"
    code, _, err = run(capsys, "convert", str(src), str(out), "--lenient")
    assert code == 0, err
    assert "internal error" not in err
    assert json.loads(out.read_text())["nb_res"] == 2  # the largest res, not 4 or 2 of '²'
    assert "MaxProcs" in err  # reported as not carried
    jobs = tmp_path / "out_jobs.csv"
    code, _, err = run(capsys, "convert", str(src), str(jobs), "--lenient")
    assert code == 0, err
    assert "header: 1 label(s) (MaxProcs)" in err


def test_batsim_writers_on_a_maxprocs_too_long_to_convert(tmp_path: Path) -> None:
    for text, lost in (("9" * 5000, True), ("64", False), (" 64 ", False), ("0", True)):
        w = Workload.from_jobs(
            [Job(job_number=1, submit_time=0.0, run_time=5.0, requested_processors=2)], Header()
        )
        w.header.set("MaxProcs", text)
        with collect_losses() as losses:
            schedlab.write(w, tmp_path / "w.json")
        assert ("header.MaxProcs" in losses.fields()) is lost, text
        assert json.loads((tmp_path / "w.json").read_text())["nb_res"] == (2 if lost else 64)
        with collect_losses():
            schedlab.write(w, tmp_path / "w_jobs.csv")  # no crash


# ------------------------------------------------------------ Batsim JSON documents

BASE: dict[str, Any] = {
    "nb_res": 4,
    "jobs": [
        {"id": 1, "subtime": 0, "walltime": 100, "res": 2, "profile": "p1"},
        {"id": 2, "subtime": 10, "walltime": 50, "res": 1, "profile": "p2"},
    ],
    "profiles": {"p1": {"type": "delay", "delay": 30}, "p2": {"type": "delay", "delay": 20}},
}


def _write(tmp_path: Path, text: str, name: str = "w.json") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="ascii")  # JSON escapes only: a real file can hold it
    return path


def _base_with(old: str, new: str) -> str:
    text = json.dumps(BASE)
    assert old in text
    return text.replace(old, new, 1)


def _error(path: Path, **options: Any) -> str:
    with pytest.raises(FormatError) as info:
        schedlab.read(path, format="batsim", **options)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(path)), message
    message.encode("utf-8")  # printable: the surrogate itself is not in it
    return message


# ------------------------------------------------------------ finding 2: surrogates

LONE = "lone UTF-16 surrogate U+D800"


@pytest.mark.parametrize(
    ("old", "new", "place"),
    [
        ('"id": 1,', '"id": "a\\ud800",', "jobs[0] (id 'a\\ud800'): field id: "),
        ('"id": 2,', '"id": 2, "user": "x\\ud800",', "jobs[1] (id 2): field user: "),
        ('"id": 2,', '"id": 2, "k\\ud800": 1,', "jobs[1] (id 2): field k\\ud800: "),
        ('"id": 2,', '"id": 2, "extra": {"a": ["\\ud800"]},', "field extra.a[0]: "),
    ],
)
def test_a_lone_surrogate_in_a_job_is_an_error(
    tmp_path: Path, old: str, new: str, place: str
) -> None:
    path = _write(tmp_path, _base_with(old, new))
    message = _error(path)
    assert place + LONE in message, message
    w = schedlab.read(path, format="batsim", lenient=True)
    assert (len(w.jobs), w.meta["skipped"]) == (1, 1)
    assert LONE in w.meta["findings"][0].message
    with collect_losses():
        schedlab.write(w, tmp_path / "out.sss.xml")  # what was read can be written
        schedlab.write(w, tmp_path / "out_jobs.csv")


def test_a_lone_surrogate_in_a_profile_is_an_error(tmp_path: Path) -> None:
    inside = _write(tmp_path, _base_with('"delay": 20}', '"delay": 20, "note": "\\udfff"}'))
    assert "profiles.p2: field note: lone UTF-16 surrogate U+DFFF" in _error(inside)
    w = schedlab.read(inside, format="batsim", lenient=True)
    assert (len(w.jobs), w.meta["skipped"]) == (1, 2)  # the profile and the job using it
    named = _write(
        tmp_path, _base_with('"p2": {', '"q\\ud800": {"type": "delay", "delay": 1}, "p2": {')
    )
    message = _error(named)
    assert "profiles.q\\ud800: " + LONE in message, message
    w = schedlab.read(named, format="batsim", lenient=True)
    assert (len(w.jobs), w.meta["skipped"]) == (2, 1)
    assert w.meta["rejects"][0][0] == "profiles.q\\ud800"
    with collect_losses():
        schedlab.write(w, tmp_path / "out.json")
        schedlab.write(w, tmp_path / "out.sss.xml")


def test_a_lone_surrogate_in_the_document_is_fatal(tmp_path: Path) -> None:
    path = _write(tmp_path, _base_with('"nb_res": 4,', '"nb_res": 4, "name": "\\ud800",'))
    for lenient in (False, True):
        assert "field name: " + LONE in _error(path, lenient=lenient)


def test_a_surrogate_pair_is_one_character_and_reads(tmp_path: Path) -> None:
    path = _write(tmp_path, _base_with('"id": 1,', '"id": "w\\ud83d\\ude00!1",'))
    w = schedlab.read(path, format="batsim", order="file")
    assert w.jobs[0].extras["batsim.id"] == "w\U0001f600!1"
    with collect_losses():
        schedlab.write(w, tmp_path / "out.sss.xml")


def test_cli_names_the_job_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, _base_with('"id": 1,', '"id": "a\\ud800",'))
    code, _, err = run(capsys, "convert", str(path), str(tmp_path / "o.sss.xml"))
    assert code == 2
    assert err.strip().count("\n") == 0, err
    assert "jobs[0] (id 'a\\ud800'): field id: lone UTF-16 surrogate" in err
    code, _, err = run(capsys, "convert", str(path), str(tmp_path / "o.sss.xml"), "--lenient")
    assert code == 0, err


# ------------------------------------------------------------ finding 5: duplicate keys

TWICE = "given twice in one object (which value is meant?)"


def test_a_key_given_twice_in_a_job_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, _base_with('"res": 1,', '"res": 4, "res": 8,'))
    assert f"jobs[1] (id 2): field res: {TWICE}" in _error(path)
    w = schedlab.read(path, format="batsim", lenient=True)
    assert (len(w.jobs), w.meta["skipped"]) == (1, 1)
    assert "field res: " + TWICE in w.meta["findings"][0].message
    nested = _write(tmp_path, _base_with('"id": 2,', '"id": 2, "extra": {"k": 1, "k": 2},'))
    assert f"jobs[1] (id 2): field extra.k: {TWICE}" in _error(nested)


def test_a_key_given_twice_in_a_profile_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, _base_with('"delay": 20}', '"delay": 20, "delay": 25}'))
    assert f"profiles.p2: field delay: {TWICE}" in _error(path)
    w = schedlab.read(path, format="batsim", lenient=True)
    assert (len(w.jobs), w.meta["skipped"]) == (1, 2)


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ('"nb_res": 4,', '"nb_res": 4, "nb_res": 8,', "nb_res"),
        ('"p2": {', '"p1": {"type": "delay", "delay": 1}, "p2": {', "profiles.p1"),
    ],
)
def test_a_key_given_twice_in_the_document_is_fatal(
    tmp_path: Path, old: str, new: str, field: str
) -> None:
    path = _write(tmp_path, _base_with(old, new))
    for lenient in (False, True):
        assert f"field {field}: {TWICE}" in _error(path, lenient=lenient)


def test_a_key_given_twice_in_a_long_file(tmp_path: Path) -> None:
    # the fuzzer's bulk case: the duplicate far into the file
    doc = {
        "nb_res": 8,
        "jobs": [{"id": i, "subtime": i, "res": 1 + i % 8, "profile": "p"} for i in range(1, 301)],
        "profiles": {"p": {"type": "delay", "delay": 10}},
    }
    text = json.dumps(doc).replace('"id": 151, ', '"id": 151, "res": 2, ', 1)
    message = _error(_write(tmp_path, text))
    assert f"jobs[150] (id 151): field res: {TWICE}" in message


def test_jobs_file_with_a_column_named_twice(tmp_path: Path) -> None:
    path = tmp_path / "dup_jobs.csv"
    path.write_text("job_id,submission_time,submission_time,execution_time\n1,5,7,10\n")
    with pytest.raises(FormatError) as info:
        schedlab.read(path, format="batsim-jobs")
    assert str(info.value) == (
        f"{path}:1: field submission_time: column given twice in the header (which one is meant?)"
    )
    aliased = tmp_path / "alias_jobs.csv"
    aliased.write_text("jobID,job_id,submission_time\n1,2,5\n")
    with pytest.raises(FormatError, match="field job_id: column given twice"):
        schedlab.read(aliased, format="batsim-jobs")


def test_a_bad_value_in_another_job_field_is_skipped_when_lenient(tmp_path: Path) -> None:
    # NaN in a job's own field (kept in extras) stopped a lenient read before
    path = _write(tmp_path, _base_with('"id": 2,', '"id": 2, "extra": NaN,'))
    assert "jobs[1] (id 2): field extra: expected a finite number" in _error(path)
    w = schedlab.read(path, format="batsim", lenient=True)
    assert (len(w.jobs), w.meta["skipped"]) == (1, 1)
