"""Lossless round trips of every SWF file in ../shared/data/swf.

read -> write gives the same header lines (byte for byte) and numerically identical
records; the canonical output itself round-trips byte for byte.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import schedlab
from schedlab.io import open_binary

pytestmark = pytest.mark.realdata

SWF_FILES = [
    "HPC2N-2002_excerpt-3170jobs_alea.swf",
    "KTH-SP2-1996-2.1-cln.swf.gz",
    "LANL-CM5-1994-4.1-cln.swf.gz",
    "LCG-2005-1.swf.gz",
    "NASA-iPSC-1993-3.1-cln.swf.gz",
    "RICC-2010-2.swf.gz",
    "lublin_256.swf",
    "wagap-2013_alea-extended.swf",
]
RECORDS = {
    "HPC2N-2002_excerpt-3170jobs_alea.swf": 3170,
    "KTH-SP2-1996-2.1-cln.swf.gz": 28476,
    "LANL-CM5-1994-4.1-cln.swf.gz": 122060,
    "LCG-2005-1.swf.gz": 188041,
    "NASA-iPSC-1993-3.1-cln.swf.gz": 18239,
    "RICC-2010-2.swf.gz": 447794,
    "lublin_256.swf": 10000,
    "wagap-2013_alea-extended.swf": 17900,
}


def test_every_shared_file_is_listed(swf_dir: Path) -> None:
    """A new file in the shared folder must be added to the round-trip list."""
    on_disk = sorted(p.name for p in swf_dir.iterdir() if p.is_file())
    assert on_disk == sorted(SWF_FILES)


def _original_lines(path: Path) -> list[str]:
    with open_binary(path) as fh:
        return fh.read().decode("utf-8").split("\n")


def _matrix(workload: schedlab.Workload) -> np.ndarray:
    return workload.to_arrays().to_matrix()


@pytest.mark.parametrize("name", SWF_FILES)
def test_read_write_round_trip(name: str, swf_dir: Path, tmp_path: Path) -> None:
    lenient = name.startswith("wagap")
    source = swf_dir / name
    workload = schedlab.read(source, lenient=lenient)
    assert len(workload) == RECORDS[name]

    # Plain output (compressed round trips are tested on smaller files elsewhere).
    out = tmp_path / "first" / name.removesuffix(".gz")
    schedlab.write(workload, out)
    again = schedlab.read(out)  # the canonical output is standard SWF: strict read

    # Header: the same lines, byte for byte, at the top of the output.
    header_lines = [line for e in workload.header.entries for line in (e.lines or ())]
    assert _original_lines(source)[: len(header_lines)] == header_lines
    assert _original_lines(out)[: len(header_lines)] == header_lines
    assert [(e.label, e.value, e.continuation) for e in again.header.entries] == [
        (e.label, e.value, e.continuation) for e in workload.header.entries
    ]
    # Records: numerically identical (NaN = -1 compared as -1).
    np.testing.assert_array_equal(_matrix(again), _matrix(workload))
    # The canonical form round-trips byte for byte.
    out2 = tmp_path / "second" / out.name
    schedlab.write(again, out2)
    assert out2.read_bytes() == out.read_bytes()


def test_records_match_the_text_exactly(swf_dir: Path) -> None:
    """Every value equals Python's float() of the token (fractional CPU times too)."""
    source = swf_dir / "HPC2N-2002_excerpt-3170jobs_alea.swf"
    rows = [
        [float(t) for t in line.split()]
        for line in _original_lines(source)
        if line.strip() and not line.startswith(";")
    ]
    expected = np.array(rows)
    np.testing.assert_array_equal(_matrix(schedlab.read(source)), expected)
    assert (expected[:, 5] != np.round(expected[:, 5])).any()  # fractional CPU times


def test_wagap_extra_columns_written_back_on_request(swf_dir: Path, tmp_path: Path) -> None:
    source = swf_dir / "wagap-2013_alea-extended.swf"
    workload = schedlab.read(source, lenient=True)
    out = tmp_path / "wagap.swf"
    schedlab.write(workload, out, extra_columns=True)
    original = [line.split() for line in _original_lines(source) if line.strip()]
    written = [line.split() for line in _original_lines(out) if line.strip()]
    assert [row[18:] for row in written] == [row[18:] for row in original]
    assert [[float(t) for t in row[:18]] for row in written] == [
        [float(t) for t in row[:18]] for row in original
    ]
