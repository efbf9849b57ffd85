"""Fixtures of schedlab-selective's tests.

The real logs are read from ``$SCHEDLAB_SHARED_DATA/swf``, else
``../../../../shared/data/swf`` relative to this folder (the project's shared data
beside the repository). Missing data fails the run instead of skipping it: a test
that silently skipped would prove nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _swf_dir() -> Path:
    if os.environ.get("SCHEDLAB_SHARED_DATA"):
        return Path(os.environ["SCHEDLAB_SHARED_DATA"]) / "swf"
    return HERE / ".." / ".." / ".." / ".." / "shared" / "data" / "swf"


@pytest.fixture(scope="session")
def swf_dir() -> Path:
    """The folder of real SWF logs."""
    path = _swf_dir().resolve()
    if not path.is_dir():
        pytest.fail(
            f"SWF test data not found at {path}: set SCHEDLAB_SHARED_DATA", pytrace=False
        )
    return path


@pytest.fixture(scope="session")
def registry():
    """A registry with schedlab's own plugins and this one, built from the installed
    entry points (the real discovery path), and no other third-party plugin."""
    from importlib import metadata

    from schedlab import build_registry

    wanted = {"schedlab", "schedlab-selective"}
    eps = [
        ep
        for ep in metadata.entry_points(group="schedlab")
        if ep.dist is not None and ep.dist.metadata["Name"] in wanted
    ]
    return build_registry(entry_points=eps)
