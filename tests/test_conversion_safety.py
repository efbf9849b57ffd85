"""Writing a folder format (``--to google``, ``--to sss -W layout=jobs``,
``schedlab.write(w, "dir", format="google")``) into an existing folder never removes
files the tool did not write (conversion audit, finding 1): a folder holding other
files, or holding the input, is refused with a one-line error (exit 2) and left as it
was; an empty folder, ``.`` included, is filled; a previous output of the same
writer is replaced."""

from __future__ import annotations

from pathlib import Path

import pytest
import schedlab
from schedlab.cli import main
from schedlab.errors import UsageError

SWF = """\
; Version: 2.2
; UnixStartTime: 1000000000
; MaxProcs: 64
1 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1
2 10 5 50 2 -1 -1 2 200 -1 1 2 1 -1 -1 -1 -1 -1
"""

FOLDER_WRITERS = [("google", ()), ("sss", ("-W", "layout=jobs"))]


def run(capsys, *args: str) -> tuple[int, str]:
    """Run ``schedlab`` in this process: (exit code, standard error)."""
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code
    return int(code or 0), capsys.readouterr().err


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes, by relative path."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def jobs_in(folder: Path, to: str) -> int:
    """How many jobs the output in ``folder`` holds (SSS ``layout=jobs``: one file
    each; the SSS reader reads single documents)."""
    if to == "sss":
        return len(list(folder.glob("job-*.xml")))
    return len(schedlab.read(folder, format=to).jobs)


@pytest.fixture()
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "trace.swf"
    path.write_text(SWF)
    return path


@pytest.mark.parametrize(("to", "options"), FOLDER_WRITERS)
def test_folder_holding_other_files_is_refused_and_kept(capsys, tmp_path, trace, to, options):
    proj = tmp_path / "proj"
    (proj / "sub").mkdir(parents=True)
    (proj / "notes.txt").write_text("n\n")
    (proj / "sub" / "keep.dat").write_text("x\n")
    before = tree(proj)
    code, err = run(capsys, "convert", str(trace), str(proj), "--to", to, *options)
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "proj" in err and "notes.txt" in err
    assert tree(proj) == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


@pytest.mark.parametrize(("to", "options"), FOLDER_WRITERS)
def test_folder_holding_the_input_is_refused(capsys, tmp_path, to, options):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "trace.swf").write_text(SWF)
    code, err = run(capsys, "convert", str(proj / "trace.swf"), str(proj), "--to", to, *options)
    assert code == 2, err
    assert "input" in err and err.count("\n") == 1
    assert tree(proj) == {"trace.swf": SWF.encode()}


def test_python_write_into_a_folder_with_other_files_is_refused(tmp_path, trace):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "trace.swf").write_text(SWF)
    with pytest.raises(UsageError, match="not written by"):
        schedlab.write(schedlab.read(trace), proj, format="google")
    assert tree(proj) == {"trace.swf": SWF.encode()}


def test_current_folder_with_a_file_is_kept(capsys, tmp_path, trace, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    (here / "keep.txt").write_text("keep\n")
    monkeypatch.chdir(here)
    code, err = run(capsys, "convert", str(trace), ".", "--to", "google")
    assert code == 2 and "keep.txt" in err and err.count("\n") == 1, err
    assert tree(here) == {"keep.txt": b"keep\n"}
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


@pytest.mark.parametrize(("to", "options"), FOLDER_WRITERS)
def test_empty_current_folder_is_filled(capsys, tmp_path, trace, monkeypatch, to, options):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    code, err = run(capsys, "convert", str(trace), ".", "--to", to, *options)
    assert code == 0, err
    assert here.is_dir() and Path.cwd() == here  # the folder itself stays
    assert jobs_in(here, to) == 2
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


@pytest.mark.parametrize(("to", "options"), FOLDER_WRITERS)
def test_previous_output_is_replaced(capsys, tmp_path, trace, to, options):
    out = tmp_path / "out"
    assert run(capsys, "convert", str(trace), str(out), "--to", to, *options)[0] == 0
    first = tree(out)
    one = tmp_path / "one.swf"
    one.write_text(SWF.splitlines(keepends=True)[0] + SWF.splitlines(keepends=True)[3])
    code, err = run(capsys, "convert", str(one), str(out), "--to", to, *options)
    assert code == 0, err
    assert jobs_in(out, to) == 1
    assert set(tree(out)) <= set(first)  # nothing of the first output is left over


def test_other_shards_of_a_previous_output_go(tmp_path, trace):
    """A previous output of the same writer may hold more shards, or tables the new
    output does not have (``WORD-NNNNNNNNNNNN.json.gz``): they are the writer's, so
    they go; other names stay."""
    out = tmp_path / "cell"
    out.mkdir()
    (out / "collection_events-000000000001.json.gz").write_bytes(b"")
    (out / "instance_usage-000000000000.json.gz").write_bytes(b"")
    schedlab.write(schedlab.read(trace), out, format="google")
    assert "collection_events-000000000001.json.gz" not in tree(out)
    assert "instance_usage-000000000000.json.gz" not in tree(out)
    assert len(schedlab.read(out).jobs) == 2
    (out / "usage-1.json.gz").write_bytes(b"")  # not a shard name
    with pytest.raises(UsageError, match=r"usage-1\.json\.gz"):
        schedlab.write(schedlab.read(trace), out, format="google")
    assert "usage-1.json.gz" in tree(out)


@pytest.mark.parametrize("rejects", [False, True])
def test_lenient_flag_does_not_override_an_explicit_false(capsys, tmp_path, trace, rejects):
    """Conversion audit finding 8: ``--lenient`` (or ``--rejects``) with ``-R
    lenient=false`` is a one-line error, as a value given twice otherwise is."""
    out = tmp_path / "o.swf"
    flag = ("--rejects", str(tmp_path / "r.txt")) if rejects else ("--lenient",)
    code, err = run(capsys, "convert", str(trace), str(out), *flag, "-R", "lenient=false")
    assert code == 2 and "lenient=false" in err and err.count("\n") == 1, err
    assert not out.exists()
    code, err = run(capsys, "convert", str(trace), str(out), *flag, "-R", "lenient=true")
    assert code == 0, err
