"""The archive logs the benchmarks run on, by short name: files of
``../shared/data/swf`` beside the project's root (``DATA``)."""

from __future__ import annotations

from pathlib import Path

#: The project's root (the folder holding ``benchmarks/``).
ROOT = Path(__file__).resolve().parent.parent
#: The shared real traces, never copied into the project.
DATA = ROOT.parent / "shared" / "data" / "swf"
#: Short name -> file name in ``DATA``.
LOGS = {
    "KTH": "KTH-SP2-1996-2.1-cln.swf.gz",
    "LANL": "LANL-CM5-1994-4.1-cln.swf.gz",
    "RICC": "RICC-2010-2.swf.gz",
}
