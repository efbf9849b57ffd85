"""Platform audit, round 2: a consumable named like a request extra that is not an
amount, and `platform infer` saying which jobs cannot fit a node of unknown memory."""

from __future__ import annotations

from pathlib import Path

import pytest
from schedlab.errors import FormatError
from schedlab.platform import load_platform
from schedlab.testing import run_cli

PLATFORM = """
[node_groups.g]
count = 2
cores = 4
[node_groups.g.consumables]
{name} = 1
[partitions.p]
nodes = ["g"]
"""


@pytest.mark.parametrize("name", ["partition", "nodes", "gpus"])
def test_a_consumable_named_like_a_request_that_is_no_amount_is_refused(
    tmp_path: Path, name: str
) -> None:
    path = tmp_path / "p.toml"
    path.write_text(PLATFORM.format(name=name))
    with pytest.raises(FormatError, match=rf"node_groups\.g\.consumables\.{name}: '{name}' is"):
        load_platform(path)


def test_infer_counts_jobs_asking_more_memory_than_an_unknown_node_holds(
    capsys, tmp_path: Path
) -> None:
    trace = tmp_path / "t.swf"
    # job 1 asks 2**36 "KB" per processor (bytes written in field 10): 64 TiB a core
    trace.write_text(
        "; MaxProcs: 8\n; MaxNodes: 2\n"
        "1 0 0 10 2 -1 -1 2 20 68719476736 1 1 1 -1 1 -1 -1 -1\n"
        "2 0 0 10 2 -1 -1 2 20 1024 1 1 1 -1 1 -1 -1 -1\n"
    )
    out = tmp_path / "p.toml"
    code, stdout, err = run_cli(capsys, "platform", "infer", str(trace), "-o", str(out))
    assert code == 0, err
    text = stdout + err
    assert "1 job (job 1 first) asks more than 4398046511104 (2**42) bytes" in text
    assert "never_fits" in text
