"""A byte-order mark before a platform or sweep file (as some editors write) is
read past; it gave TOML's "Invalid statement (line 1, column 1)". An infinite
``report --window`` end is refused; ``0:1e400`` was taken."""

from __future__ import annotations

from pathlib import Path

import pytest
from schedlab.experiment.config import load_config
from schedlab.platform import load_platform
from schedlab.testing import run_cli

BOM = b"\xef\xbb\xbf"
PLATFORM = b'[node_groups.n]\ncount = 4\ncores = 2\n[partitions.all]\nnodes = ["n"]\n'


def test_a_platform_file_with_a_bom_reads_as_without(tmp_path: Path):
    plain, marked = tmp_path / "plain.toml", tmp_path / "marked.toml"
    plain.write_bytes(PLATFORM)
    marked.write_bytes(BOM + PLATFORM)
    assert load_platform(marked) == load_platform(plain)


def test_a_sweep_file_with_a_bom_reads_as_without(tmp_path: Path):
    body = b'workloads = ["lublin:jobs=20,seed=1"]\npolicies = ["fcfs", "sjf"]\nprocs = 64\n'
    plain, marked = tmp_path / "plain.toml", tmp_path / "marked.toml"
    plain.write_bytes(body)
    marked.write_bytes(BOM + body)
    assert load_config(marked).cells() == load_config(plain).cells()


@pytest.mark.parametrize("window", ["0:1e400", "-1e400:5", "0:inf", "nan:5"])
def test_report_refuses_a_window_that_is_not_finite(capsys, swf_dir, tmp_path, window):
    trace = str(swf_dir / "HPC2N-2002_excerpt-3170jobs_alea.swf")
    code, _, err = run_cli(
        capsys, "report", trace, "--simulate", "fcfs+easy", "--window", window,
        "-o", str(tmp_path / "r.html"),
    )  # fmt: skip
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "expected START:END finite seconds" in err
    assert not (tmp_path / "r.html").exists()
