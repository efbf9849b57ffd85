"""The command line after the third audit (cli3), part A: tables on a standard
output that cannot encode every character (finding 1), a closed pipe (5), ``-`` as
an input (13), matplotlib with an unusable HOME (14) and the wording of a few
messages (15)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from schedlab.testing import run_cli

SWF = """\
; MaxProcs: 8
1 0 -1 100 2 -1 -1 2 400 -1 1 1 1 -1 1 -1 -1 -1
2 1 -1 10 4 -1 -1 4 400 -1 1 2 1 -1 1 -1 -1 -1
3 2 -1 50 2 -1 -1 2 400 -1 1 3 1 -1 1 -1 -1 -1
4 3 -1 5 1 -1 -1 1 400 -1 1 1 1 -1 1 -1 -1 -1
"""

#: SGE accounting records whose owners are ``josé`` and ``名前``.
SGE = (
    "dteam:testce.test:dteam:josé:STDIN:43:sge:19:1200093286:1200093294:1200093295:0:0:1:0:0:"
    "0.000000:0:0:0:0:46206:0:0:0.000000:0:0:0:0:337:257:NONE:defaultdepartment:NONE:1:0:"
    "0.090000:0.000213:0.000000:-U dteam -q dteam:0.000000:NONE:30171136.000000\n"
    "large:compute-4-19.local:csic:名前:s001.sh:6972834:sge:0:1318560244:1318560254:"
    "1318740255:100:138:180001:0.005999:0.012998:1448.000000:0:0:0:0:1060:0:0:0.000000:168:"
    "0:0:0:89:2:por_defecto:defaultdepartment:mpi:9:0:1026706.540000:60207.223310:0.001862:"
    "-u csfiylfl -q big_small*,large* -l h_rt=180300 -pe mpi 9:0.000000:NONE:821923840.000000"
    ":0:0\n"
)

SPEC = "lublin:jobs=20"


@pytest.fixture
def trace(tmp_path: Path) -> str:
    path = tmp_path / "t.swf"
    path.write_text(SWF)
    return str(path)


def _env(**changes: str | None) -> dict[str, str]:
    env = dict(os.environ)
    for key in ("PYTHONIOENCODING", "PYTHONUTF8", "LC_ALL", "LANG", "MPLCONFIGDIR"):
        env.pop(key, None)
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def _schedlab(
    *args: str, env: dict[str, str], cwd: Path | None = None, **kwargs: object
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "schedlab.cli", *args],
        env=env,
        cwd=cwd,
        capture_output="stdout" not in kwargs,
        timeout=120,
        check=False,
        **kwargs,  # type: ignore[call-overload]
    )


# Finding 1: rich tables on a standard output that is not UTF-8.

ENCODINGS = [
    {"PYTHONIOENCODING": "ascii"},
    {"PYTHONIOENCODING": "latin-1"},
    {"LC_ALL": "C", "PYTHONUTF8": "0"},
]


@pytest.mark.parametrize("changes", ENCODINGS, ids=["ascii", "latin-1", "C-locale"])
def test_user_table_on_a_narrow_encoding(tmp_path: Path, changes: dict[str, str]) -> None:
    source = tmp_path / "u.txt"
    source.write_text(SGE, encoding="utf-8")
    done = _schedlab("metrics", str(source), "--by", "user", env=_env(**changes))
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert b"Traceback" not in done.stderr and b"error" not in done.stderr
    out = done.stdout.decode("latin-1")
    # what the encoding holds is written as is, the rest escaped (as error lines do)
    assert "\\u540d\\u524d" in out  # 名前
    if changes.get("PYTHONIOENCODING") == "latin-1":
        assert "josé" in out
    else:
        assert "jos\\xe9" in out


def test_compare_title_on_an_ascii_stdout(tmp_path: Path) -> None:
    source = tmp_path / "kth_é.swf"
    source.write_text(SWF)
    done = _schedlab(
        "compare", str(source), "-p", "fcfs", "--no-timings", env=_env(PYTHONIOENCODING="ascii")
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert b"kth_\\xe9.swf" in done.stdout


def test_stdout_errors_restored_after_main(capsys: pytest.CaptureFixture[str], trace: str) -> None:
    # an in-process caller gets its standard output back as it gave it
    before = getattr(sys.stdout, "errors", None)
    code, _, err = run_cli(capsys, "info", trace)
    assert code == 0, err
    assert getattr(sys.stdout, "errors", None) == before


# Finding 5: a closed pipe.


def _closed_pipe_run(*args: str, cwd: Path) -> tuple[int, bytes]:
    """Run ``schedlab ARGS`` with its standard output a pipe nobody reads (its
    reading end closed first): exit code and standard error."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "schedlab.cli", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=_env(),
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    return done.returncode, done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("validate", "t.swf"),
        ("info", "t.swf"),
        ("convert", "t.swf", "-", "--to", "swf"),
        ("metrics", "t.swf", "--by", "user"),
        ("metrics", "t.swf", "--by", "user", "--json"),
        ("simulate", "t.swf", "--no-timings"),
        ("--help",),
        ("convert", "--help"),
        ("platform",),  # a group's help, written by main itself
    ],
    ids=lambda a: "-".join(a[::2]),
)
def test_closed_pipe_exits_141_quietly(tmp_path: Path, trace: str, args: tuple[str, ...]) -> None:
    code, err = _closed_pipe_run(*args, cwd=tmp_path)
    assert code == 141, err
    assert err == b"", err


def test_closed_pipe_into_head(tmp_path: Path) -> None:
    # the real thing: a long output into `head -n 1`, several times
    lines = "".join(
        f"{i} {i} -1 100 2 -1 -1 2 400 -1 1 {i % 7} 1 -1 1 -1 -1 -1\n" for i in range(1, 20001)
    )
    (tmp_path / "big.swf").write_text("; MaxProcs: 8\n" + lines)
    script = (
        f"{sys.executable} -m schedlab.cli convert big.swf - --to swf | head -n 1 >/dev/null;"
        " echo ${PIPESTATUS[0]}"
    )
    for _ in range(3):
        done = subprocess.run(
            ["bash", "-c", script], cwd=tmp_path, env=_env(), capture_output=True, check=False
        )
        assert done.stdout.strip() == b"141", done.stderr
        assert done.stderr == b""


def test_broken_pipe_not_on_stdout_is_an_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, trace: str
) -> None:
    # a helper's pipe, not standard output: not the quiet exit of a closed pipe
    import schedlab.api

    def broken(*args: object, **kwargs: object) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(schedlab.api, "read", broken)
    code, _, err = run_cli(capsys, "info", trace)
    assert code == 2 and "Broken pipe" in err, err


# Finding 13: `-` as an input.


@pytest.mark.parametrize(
    ("args", "label"),
    [
        (("info", "-"), "FILE -"),
        (("validate", "-"), "FILE -"),
        (("metrics", "-"), "FILE -"),
        (("simulate", "-", "--no-timings"), "IN -"),
        (("convert", "-", "{tmp}/o.swf"), "IN -"),
        (("simulate", "{trace}", "--platform", "-", "--no-timings"), "--platform -"),
        (("sweep", "-w", "-", "--out", "{tmp}/s"), "-w/--workload -"),
    ],
)
def test_dash_input_says_standard_input(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    trace: str,
    args: tuple[str, ...],
    label: str,
) -> None:
    monkeypatch.chdir(tmp_path)  # no file named `-` here
    code, _, err = run_cli(capsys, *(a.format(tmp=tmp_path, trace=trace) for a in args))
    assert code == 2, err
    lines = [line for line in err.splitlines() if "warning" not in line]
    assert len(lines) == 1, err
    assert "standard input" in lines[0] and "/dev/stdin" in lines[0], lines[0]
    assert "./-" in lines[0]


def test_a_file_named_dash_is_still_read(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-").write_text(SWF)
    code, out, err = run_cli(capsys, "info", "-")
    assert code == 0, err
    assert "4" in out


# Finding 14: matplotlib with a HOME it cannot use.


PYPLOT = "from schedlab.plotting import pyplot; pyplot(); print('ok')"


def _pyplot(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    for key in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "MPLCONFIGDIR"):
        env.pop(key, None)
    return subprocess.run(
        [sys.executable, "-c", PYPLOT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_matplotlib_with_a_missing_home(tmp_path: Path) -> None:
    home = tmp_path / "nonexistent"
    done = _pyplot(_env(HOME=str(home)))
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr
    assert done.stderr == ""
    assert not home.exists()  # nothing created in a HOME that is not there


def test_matplotlib_with_a_home_that_is_a_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("")
    done = _pyplot(_env(HOME=str(home)))
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr
    assert done.stderr == ""  # no "mkdir -p failed" nor "created a temporary cache"


def test_matplotlib_keeps_a_usable_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = _pyplot(_env(HOME=str(home)))
    assert done.returncode == 0, done.stderr
    assert (home / ".config" / "matplotlib").is_dir()  # the user's own, as before


# Finding 15: messages.


def _error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, _, err = run_cli(capsys, *args)
    lines = [line for line in err.splitlines() if "warning" not in line]
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize(
    "args",
    [
        ("convert", "{trace}", "{tmp}/o.swf", "--to", "SWF"),
        ("convert", "{trace}", "-", "--to", "SWF"),
        ("simulate", "{trace}", "-o", "{tmp}/o.swf", "--to", "SWF", "--no-timings"),
    ],
)
def test_unknown_writer_names_to(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, trace: str, args: tuple[str, ...]
) -> None:
    line = _error(capsys, *(a.format(tmp=tmp_path, trace=trace) for a in args))
    assert "--to 'SWF': unknown writer (available: " in line, line
    assert "swf" in line.partition("available")[2]


def test_known_writer_alias_passes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, trace: str
) -> None:
    code, _, err = run_cli(capsys, "convert", trace, str(tmp_path / "g"), "--to", "google-v3")
    assert code == 0, err


def test_from_with_a_generator_spec_is_not_a_reader_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = _error(capsys, "info", SPEC, "--from", "swf")
    assert "reader option" not in line, line
    assert line.endswith(
        f"--from swf: a reader reads trace files, not the generator spec {SPEC!r} "
        "(a generator takes its options in the spec: NAME:KEY=VALUE,...)"
    )


def test_dask_one_job_is_singular(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("dask", reason="needs the dask extra (dev installs it)")
    import schedlab
    from schedlab.formats.google import v3_reader

    one = tmp_path / "one.swf"
    one.write_text(SWF.splitlines(keepends=True)[0] + SWF.splitlines(keepends=True)[1])
    workload = schedlab.read(str(one))
    workload.meta["skipped"] = 0
    monkeypatch.setattr(v3_reader, "read_v3", lambda *a, **k: workload)
    source = tmp_path / "g"
    source.mkdir()
    code, out, err = run_cli(
        capsys, "google-dask", str(source), str(tmp_path / "g.swf"), "--workers", "1"
    )
    assert code == 0, err
    assert f"wrote 1 job to {tmp_path / 'g.swf'}" in out + err, (out, err)  # stdout or stderr
