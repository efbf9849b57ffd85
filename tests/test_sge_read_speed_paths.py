"""The JSONL bulk path decodes a block a slice of whole lines at a time
(``bulk.SLICE_BYTES``, so that the decoded structs are read and freed while they
are still in the processor's caches). Sliced or not, a block gives exactly the
same columns, and is declined exactly when the whole-block reading declines it:
keys given twice, escaped colons, wrong types, blank lines, other record types,
in any slice. Whole files read the same at every slice size as on the careful
record-by-record path.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from read_snapshot import read_snapshot
from schedlab.formats.sge import bulk, reader

pytest.importorskip("msgspec")

SLICES = [300, 4096, 1 << 18, 1 << 30]


def _record(rng: random.Random, i: int) -> dict[str, Any]:
    """An OCS record, with the variety of a real file (keys of some records, colons
    inside the category and the command line, the older usage container)."""
    sub = 1_700_000_000_000_000 + i * 3_000_000
    start = sub + rng.randrange(4000) * 1_000_000
    slots = rng.choice([1, 1, 2, 8])
    record: dict[str, Any] = {
        "job_number": 1000 + i,
        "task_number": rng.choice([0, 0, 1]),
        "start_time": start,
        "end_time": start + rng.randrange(90000) * 1_000_000,
        "owner": f"user{rng.randrange(30)}",
        "group": f"grp{rng.randrange(5)}",
        "account": "sge",
        "qname": rng.choice(["all.q", "gpu.q", "long.q"]),
        "hostname": f"node{rng.randrange(50):03d}",
        "department": "defaultdepartment",
    }
    if slots > 1:
        record["granted_pe"] = "smp"
    h_rt = "48:00:00" if rng.random() < 0.1 else "3600"
    record |= {
        "slots": slots,
        "job_name": f"job_{i % 97}",
        "priority": 0,
        "submission_time": sub,
        "submit_cmd_line": rng.choice(["qsub job.sh", "qsub -l h_rt=1:00:00 job.sh"]),
        "category": rng.choice(["", f"-l h_rt={h_rt},h_vmem=2G -q all.q"]),
        "failed": rng.choice([0, 0, 0, 100]),
        "exit_status": rng.choice([0, 0, 1, 137]),
    }
    if rng.random() < 0.1:
        record["pe_taskid"] = rng.choice(["NONE", "1.node3"])
    if rng.random() < 0.05:
        record["deleted_by"] = "bob@login1"
    cpu = rng.random() * 1e5
    execd = {
        "wallclock": 100.5,
        "cpu": cpu,
        "mem": 1.0,
        "io": 0.0,
        "iow": 0.0,
        "maxvmem": float(rng.randrange(1 << 34)),
        "maxrss": 524288.0,
    }
    rusage = {"ru_wallclock": 100, "ru_utime": cpu * 0.9, "ru_stime": cpu * 0.1, "ru_maxrss": 7}
    record["usage"] = {"rusage": rusage, "eusage": execd}
    return record


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":"))


def _block(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def _lines(seed: int, n: int = 1500, older_usage: bool = False) -> list[str]:
    rng = random.Random(seed)
    records = [_record(rng, i) for i in range(n)]
    if older_usage:  # OCS 9.0.0-9.0.5 for some records: modes vary, values gathered per record
        for record in records[::3]:
            record["usage"] = {
                "rusage": record["usage"]["rusage"],
                "usage": record["usage"]["eusage"],
            }
    return [_line(r) for r in records]


def _whole(monkeypatch: pytest.MonkeyPatch, data: bytes, lines: int, **options: Any) -> Any:
    """json_block reading the block at once (the slices never decide)."""
    with monkeypatch.context() as patch:
        patch.setattr(bulk, "_sliced_block", lambda *args: None)
        return bulk.json_block(data, lines, False, **options)


def _comparable(columns: list[Any] | None) -> Any:
    if columns is None:
        return None
    out = []
    for column in columns:
        if isinstance(column, np.ndarray):
            out.append(("array", column.dtype.str, column.tobytes()))
        else:
            out.append(("list", [(type(v).__name__, v) for v in column]))
    return out


def _same_sliced_and_whole(
    monkeypatch: pytest.MonkeyPatch, lines: list[str], step: int, learned: bool = False
) -> Any:
    data = _block(lines)
    kept: dict[str, Any] | None = {} if learned else None
    whole_learned: dict[str, Any] | None = {} if learned else None
    whole = _whole(monkeypatch, data, len(lines), learned=whole_learned)
    monkeypatch.setattr(bulk, "SLICE_BYTES", step)
    decided: list[bool] = []
    slices = bulk._sliced_block

    def spy(*args: Any) -> Any:
        columns = slices(*args)
        decided.append(columns is not None)
        return columns

    monkeypatch.setattr(bulk, "_sliced_block", spy)
    sliced = bulk.json_block(data, len(lines), False, learned=kept)
    monkeypatch.setattr(bulk, "_sliced_block", slices)
    assert _comparable(sliced) == _comparable(whole)
    assert kept == whole_learned
    if sliced is not None:
        assert decided == [True]  # (the slices read it, not the whole block)
    return sliced


@pytest.mark.parametrize("step", SLICES)
@pytest.mark.parametrize("older_usage", [False, True])
def test_slices_give_the_whole_blocks_columns(
    monkeypatch: pytest.MonkeyPatch, step: int, older_usage: bool
) -> None:
    lines = _lines(1, older_usage=older_usage)
    assert _same_sliced_and_whole(monkeypatch, lines, step) is not None
    assert _same_sliced_and_whole(monkeypatch, lines, step, learned=True) is not None


def _bad_late(lines: list[str], change: str) -> list[str]:
    """The lines with one record near the end changed (a late slice)."""
    lines = list(lines)
    record = json.loads(lines[-5])
    if change == "twice":  # a key given twice
        lines[-5] = lines[-5][:-1] + ',"owner":"mallory"}'
    elif change == "twice-inside":
        lines[-5] = lines[-5].replace('"ru_maxrss":7', '"ru_maxrss":7,"ru_maxrss":8')
    elif change == "escaped":  # an escaped colon, and a key given twice elsewhere
        lines[-5] = lines[-5].replace('"job_name":"', '"job_name":"a\\u003ab')
        lines[3] = lines[3][:-1] + ',"owner":"mallory"}'
    elif change == "escaped-only":  # an escaped colon (fine), colons in categories
        lines[-5] = lines[-5].replace('"job_name":"', '"job_name":"a\\u003ab')
    elif change == "type":
        record["priority"] = "high"
        lines[-5] = _line(record)
    elif change == "usage":
        record["usage"]["rusage"]["ru_utime"] = "1.0"
        lines[-5] = _line(record)
    elif change == "unknown":
        record["extra"] = 1
        lines[-5] = _line(record)
    elif change == "reporting":
        record = {"time": 1, "type": "new_job", **record}
        lines[-5] = _line(record)
    elif change == "blank":
        lines[-5] = ""
    elif change == "huge":
        record["failed"] = 10**30
        lines[-5] = _line(record)
    return lines


CHANGES = [
    "twice",
    "twice-inside",
    "escaped",
    "escaped-only",
    "type",
    "usage",
    "unknown",
    "reporting",
    "blank",
    "huge",
]


@pytest.mark.parametrize("step", SLICES[:3])
@pytest.mark.parametrize("change", CHANGES)
def test_slices_decline_what_the_whole_block_declines(
    monkeypatch: pytest.MonkeyPatch, step: int, change: str
) -> None:
    lines = _bad_late(_lines(2), change)
    columns = _same_sliced_and_whole(monkeypatch, lines, step)
    if change != "escaped-only":
        assert columns is None, change


@pytest.mark.parametrize("change", ["none", "twice", "escaped", "type", "usage"])
def test_files_read_the_same_at_every_slice_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    lines = _lines(3, n=2500, older_usage=True)
    if change != "none":
        lines = _bad_late(lines, change)
    path = tmp_path / "accounting.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    assert path.stat().st_size > 1 << 20  # (blocks of several default slices)
    for options in ({}, {"lenient": True}):
        monkeypatch.setattr(reader, "BULK", False)
        careful = read_snapshot(path, **options)
        monkeypatch.setattr(reader, "BULK", True)
        for step in SLICES:
            monkeypatch.setattr(bulk, "SLICE_BYTES", step)
            assert read_snapshot(path, **options) == careful, (options, step)


def test_plain_blocks_are_read_in_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """A block of plain records takes the sliced path (the speed of a read depends
    on it), several slices of it."""
    decided: list[bool] = []
    sliced = bulk._sliced_block

    def spy(*args: Any) -> Any:
        columns = sliced(*args)
        decided.append(columns is not None)
        return columns

    monkeypatch.setattr(bulk, "_sliced_block", spy)
    data = _block(_lines(4))
    assert len(bulk._slice_cuts(data, bulk.SLICE_BYTES)) > 2
    assert bulk.json_block(data, 1500, False, learned={}) is not None
    assert decided == [True]
