"""Fixtures of schedlab-slurm's tests.

The real dumps are read from ``$SCHEDLAB_SLURM_DATA``, else
``$SCHEDLAB_SHARED_DATA/slurm``, else ``../../../shared/data/slurm`` relative to this
folder (the project's shared data beside the repository). Missing data fails the
run instead of skipping it: tests that silently skipped would prove nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _data_dir() -> Path:
    if os.environ.get("SCHEDLAB_SLURM_DATA"):
        return Path(os.environ["SCHEDLAB_SLURM_DATA"])
    if os.environ.get("SCHEDLAB_SHARED_DATA"):
        return Path(os.environ["SCHEDLAB_SHARED_DATA"]) / "slurm"
    return HERE / ".." / ".." / ".." / ".." / "shared" / "data" / "slurm"


@pytest.fixture(scope="session")
def slurm_dir() -> Path:
    """The folder of real ``sacct --parsable2`` dumps."""
    path = _data_dir().resolve()
    if not path.is_dir():
        pytest.fail(
            f"Slurm test data not found at {path}: set SCHEDLAB_SLURM_DATA or "
            "SCHEDLAB_SHARED_DATA",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="session")
def registry():
    """A registry with schedlab's own plugins and this one, built from the installed
    entry points, so the tests exercise the real discovery path."""
    from importlib import metadata

    from schedlab import build_registry

    wanted = {"schedlab", "schedlab-slurm"}
    eps = [
        ep
        for ep in metadata.entry_points(group="schedlab")
        if ep.dist is not None and ep.dist.metadata["Name"] in wanted
    ]
    return build_registry(entry_points=eps)
