"""Small inputs the sweep tests write: an SWF trace and a platform file."""

from __future__ import annotations

from pathlib import Path


def swf(path: Path, jobs: int = 12, procs: int = 8) -> Path:
    """A small SWF trace of ``jobs`` jobs of 1-4 processors."""
    lines = [f"; MaxProcs: {procs}\n"]
    for i in range(1, jobs + 1):
        fields = [i, 10 * i, -1, 100 + 7 * i, 1 + i % 4, -1, -1, 1 + i % 4, 400]
        fields += [-1, 1, 1 + i % 3, 1, -1, 1, 1, -1, -1]
        lines.append(" ".join(str(f) for f in fields) + "\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines))
    return path


def platform_file(path: Path, nodes: int) -> Path:
    """A platform of ``nodes`` two-core nodes in one partition."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'[platform]\nname = "small"\n[node_groups.thin]\ncount = {nodes}\ncores = 2\n'
        '[partitions.batch]\nnodes = ["thin"]\n'
    )
    return path
