"""Test helper: hypothesis strategies for small shared platforms, used by the
node-level tests (importable by name: ``tests/`` is on ``sys.path``, see
``conftest.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st
from schedlab.platform import NodeGroup, Partition, Platform

GIB = 2**30
#: The allocation policies the compiled node-level kernels cover.
COVERED = ("first-fit", "best-fit", "spread")


@st.composite
def shared_platforms(
    draw: Any, max_count: int, memories: Sequence[int], max_groups: int
) -> Platform:
    """One shared partition over 1 to ``max_groups`` node groups of 1 to
    ``max_count`` nodes, 2 to 8 cores, a memory drawn from ``memories`` and 0 or
    1 GPU each."""
    groups = tuple(
        NodeGroup(
            f"g{g}",
            count=draw(st.integers(1, max_count)),
            cores=draw(st.integers(2, 8)),
            memory=draw(st.sampled_from(list(memories))),
            gpus=draw(st.integers(0, 1)),
        )
        for g in range(draw(st.integers(1, max_groups)))
    )
    return Platform(groups, (Partition("all", tuple(g.name for g in groups), sharing="shared"),))
