"""The ``schedlab`` process's start-up (docs/simulation.md, "Whole-process
overhead"): what ``import schedlab.cli`` and a ``simulate`` load, and the one BLAS
thread the command line asks numpy's OpenBLAS for. Each check runs in a fresh
interpreter, since the test process has long loaded everything."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SWF = """\
; MaxProcs: 10
1 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1
2 0 10 5 2 -1 -1 2 10 -1 1 1 1 -1 1 -1 -1 -1
3 10 90 50 8 -1 -1 8 50 -1 1 2 1 -1 2 -1 -1 -1
"""

#: Optional or heavy packages no ``simulate`` of the pure-Python kernels needs.
NOT_FOR_SIMULATE = ("pandas", "matplotlib", "numba", "cattrs", "scipy", "bokeh", "pyarrow", "dask")

BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def python(code: str, *args: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in BLAS_VARIABLES}
    clean.update(env)
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=clean, check=True
    )
    return done.stdout.strip().splitlines()[-1]


def test_import_cli_loads_no_numpy_rich_or_plugin_machinery():
    code = (
        "import sys, schedlab.cli\n"
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    loaded = python(code).split()
    for name in ("numpy", "rich", "pluggy", "attrs", *NOT_FOR_SIMULATE):
        assert name not in loaded


def test_simulate_loads_no_optional_dependency(tmp_path: Path):
    trace = tmp_path / "three.swf"
    trace.write_text(SWF)
    code = (
        "import sys, schedlab.cli\n"
        "try:\n"
        "    schedlab.cli.main(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    args = ("simulate", str(trace), "--backfill", "conservative", "-o", str(tmp_path / "o.swf"))
    loaded = python(code, *args).split()
    assert "numpy" in loaded and "rich" in loaded  # the command ran and printed
    assert not [name for name in NOT_FOR_SIMULATE if name in loaded]


MAIN_THEN_BLAS = (
    "import os, sys, schedlab.cli\n"
    "try:\n"
    "    schedlab.cli.main(['--help'])\n"
    "except SystemExit:\n"
    "    pass\n"
    "print(os.environ.get('OPENBLAS_NUM_THREADS'))\n"
)


def test_main_asks_for_one_blas_thread():
    assert python(MAIN_THEN_BLAS) == "1"


@pytest.mark.parametrize("variable", BLAS_VARIABLES)
def test_main_keeps_the_users_blas_threads(variable):
    out = python(MAIN_THEN_BLAS, **{variable: "3"})
    assert out == ("3" if variable == "OPENBLAS_NUM_THREADS" else "None")


def test_main_leaves_blas_alone_once_numpy_is_loaded():
    assert python("import numpy\n" + MAIN_THEN_BLAS) == "None"


def test_main_freezes_the_objects_at_exit_once(tmp_path: Path):
    """One exit handler however often main runs; the process still ends with its
    output complete (written file, last printed line)."""
    trace = tmp_path / "three.swf"
    trace.write_text(SWF)
    out = tmp_path / "o.swf"
    code = (
        "import atexit, sys, schedlab.cli\n"
        "before = atexit._ncallbacks()\n"
        "for _ in range(2):\n"
        "    try:\n"
        "        schedlab.cli.main(sys.argv[1:])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print('handlers added', atexit._ncallbacks() - before)\n"
    )
    assert python(code, "simulate", str(trace), "-o", str(out)) == "handlers added 1"
    assert len(out.read_text().splitlines()) >= 3
