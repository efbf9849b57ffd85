"""Name-table entries that no record gives back are reported, not dropped silently."""

from __future__ import annotations

import schedlab


def _swf(tmp_path, header: str) -> schedlab.Workload:
    path = tmp_path / "in.swf"
    path.write_text(
        "; UnixStartTime: 1000000000\n"
        + header
        + "1 0 5 100 2 -1 -1 2 200 -1 1 3 1 -1 1 1 -1 -1\n"
        + "2 10 5 100 2 -1 -1 2 200 -1 1 3 1 -1 1 1 -1 -1\n"
    )
    return schedlab.read(path)


def test_unused_partition_and_queue_entries_are_reported(tmp_path):
    w = _swf(
        tmp_path,
        "; Partition: 1 batch\n; Partition: 2 idle\n; Queue: 1 normal\n; Queue: 7 never\n",
    )
    with schedlab.collect_losses() as losses:
        schedlab.write(w, tmp_path / "out.sacct", format="slurm")
    assert losses.count("header.Partition") == 1
    assert losses.count("header.Queue") == 1
    assert any("no job uses" in loss.action for loss in losses if loss.field == "header.Partition")


def test_used_entries_are_no_loss(tmp_path):
    w = _swf(tmp_path, "; Partition: 1 batch\n; Queue: 1 normal\n")
    with schedlab.collect_losses() as losses:
        schedlab.write(w, tmp_path / "out.sacct", format="slurm")
    assert not set(losses.fields()) & {"header.Partition", "header.Queue"}
