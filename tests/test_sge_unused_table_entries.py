"""Grid Engine writers: entries of the User and Group tables that no record gives
back (no job has the number, or text after the name) are reported, as Queue
entries are (they were dropped silently)."""

from __future__ import annotations

import pytest
import schedlab

SWF = (
    "; UnixStartTime: 1000000000\n"
    "{header}"
    "1 0 5 100 2 -1 -1 2 200 -1 1 3 1 -1 1 1 -1 -1\n"
    "2 10 5 100 2 -1 -1 2 200 -1 1 3 1 -1 1 1 -1 -1\n"
)


@pytest.mark.parametrize("fmt", ["sge", "sge-jsonl"])
def test_unused_user_and_group_entries_are_reported(tmp_path, fmt):
    path = tmp_path / "in.swf"
    path.write_text(
        SWF.format(header="; User: 3 alice\n; User: 4 bob\n; Group: 1 staff\n; Group: 2 guests\n")
    )
    with schedlab.collect_losses() as losses:
        schedlab.write(schedlab.read(path), tmp_path / "out.accounting", format=fmt)
    assert losses.count("header.User") == 1  # bob: no job
    assert losses.count("header.Group") == 1  # guests: no job


@pytest.mark.parametrize("fmt", ["sge", "sge-jsonl"])
def test_used_entries_are_no_loss(tmp_path, fmt):
    path = tmp_path / "in.swf"
    path.write_text(SWF.format(header="; User: 3 alice\n; Group: 1 staff\n"))
    with schedlab.collect_losses() as losses:
        schedlab.write(schedlab.read(path), tmp_path / "out.accounting", format=fmt)
    assert not set(losses.fields()) & {"header.User", "header.Group"}
