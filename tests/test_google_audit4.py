"""Fixes of the fourth audit of the Google Borg readers (google4): ``platform
infer`` on machines of several sizes, and ``info``'s processor seconds when run
times are unknown (and a SCHEDULE and FINISH at one time stay a run of 0 s)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import schedlab
from schedlab.platform import infer_platform
from schedlab.testing import run_cli

SUB, QUE, ENA, SCH, EVI, FAI, FIN, KIL, LOS = range(9)


def at(seconds: float) -> int:
    """Raw time of ``seconds`` after the trace start."""
    return int(600_000_000 + seconds * 1_000_000)


def write(out: Path, tables: dict[str, list[dict[str, Any]]]) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in tables.items():
        if rows:
            text = "".join(json.dumps(r) + "\n" for r in rows)
            (out / f"{name}-000000000000.json").write_text(text)
    return out


def c(t: int, kind: int, cid: int) -> dict[str, Any]:
    return {
        "time": str(t),
        "type": kind,
        "collection_id": str(cid),
        "collection_type": 0,
        "user": "uA",
        "priority": 200,
        "scheduling_class": 1,
    }


def i(
    t: int, kind: int, cid: int, machine: int | None = None, cpus: float | None = None
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "time": str(t),
        "type": kind,
        "collection_id": str(cid),
        "instance_index": 0,
        "machine_id": None if machine is None else str(machine),
        "collection_type": 0,
        "priority": 200,
        "alloc_collection_id": "0",
        "alloc_instance_index": -1,
    }
    if cpus is not None:
        row["resource_request"] = {"cpus": cpus, "memory": 0.01}
    return row


def m(mid: int, cpus: float) -> dict[str, Any]:
    return {
        "time": "0",
        "machine_id": str(mid),
        "type": 1,
        "capacity": {"cpus": cpus, "memory": cpus},
    }


# ----------------------------------------------------------------- 1. end + SCHEDULE at one time


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_schedule_and_finish_at_one_time_still_run_zero(tmp_path: Path, engine: str) -> None:
    steps = [(10, SUB, None), (20, SCH, 5), (20, FIN, 5)]
    ce = [c(at(s), k, 1) for s, k, _ in steps]
    ie = [i(at(s), k, 1, mach, 0.01 if k == SUB else None) for s, k, mach in steps]
    w = schedlab.read(
        write(tmp_path / "t", {"collection_events": ce, "instance_events": ie}), engine=engine
    )
    assert w.jobs[0].run_time == 0 and w.jobs[0].status == 1


# ----------------------------------------------------------------- 2. infer on mixed machines


def _mixed(tmp_path: Path) -> Path:
    ce = [c(at(10), SUB, 1), c(at(20), SCH, 1), c(at(110), FIN, 1)]
    ie = [i(at(10), SUB, 1, None, 0.9), i(at(20), SCH, 1, 1), i(at(110), FIN, 1, 1)]
    me = [m(1, 1.0), m(2, 0.25), m(3, 0.25)]
    return write(
        tmp_path / "t", {"collection_events": ce, "instance_events": ie, "machine_events": me}
    )


def test_infer_makes_one_node_group_per_machine_size(tmp_path: Path) -> None:
    w = schedlab.read(_mixed(tmp_path))
    assert w.meta["capacity"]["peak_by_size"] == [[0.25, 2], [1.0, 1]]
    inf = infer_platform(w)
    shapes = [(g.name, g.count, g.cores) for g in inf.platform.node_groups]
    assert shapes == [("nodes-100", 1, 100), ("nodes-25", 2, 25)]
    assert inf.platform.partitions[0].nodes == ("nodes-100", "nodes-25")
    assert any("one node group" in g or "node groups from" in g for g in inf.guesses)
    assert not any("MaxProcs/MaxNodes" in g for g in inf.guesses)
    stats = schedlab.simulate(w, platform=inf.platform, progress=False).stats
    assert stats["jobs_excluded"] == 0


def test_infer_one_machine_size_keeps_one_group(tmp_path: Path) -> None:
    ce = [c(at(10), SUB, 1)]
    ie = [i(at(10), SUB, 1, None, 0.1)]
    me = [m(1, 0.5), m(2, 0.5)]
    w = schedlab.read(
        write(
            tmp_path / "t", {"collection_events": ce, "instance_events": ie, "machine_events": me}
        )
    )
    shapes = [(g.name, g.count, g.cores) for g in infer_platform(w).platform.node_groups]
    assert shapes == [("nodes", 2, 50)]


# ----------------------------------------------------------------- 3. info processor seconds


def _info(capsys: Any, path: Path) -> tuple[str, dict[str, Any]]:
    code, text, err = run_cli(capsys, "info", str(path))
    assert code == 0, err
    code, js, err = run_cli(capsys, "info", "--json", str(path))
    assert code == 0, err
    return text, json.loads(js)


def test_info_partial_processor_seconds_says_how_many_jobs(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "ps.swf"
    path.write_text(
        "; MaxProcs: 10\n"
        "1 0 0 100 2 -1 -1 2 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n"
        "2 10 0 -1 4 -1 -1 4 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n"
    )
    text, js = _info(capsys, path)
    assert "processor_seconds: 200 (1 of 2 jobs)" in text
    assert "offered_load: 2 (1 of 2 jobs)" in text
    assert "processor_seconds_jobs" not in text
    assert js["processor_seconds"] == 200 and js["processor_seconds_jobs"] == 1


def test_info_processor_seconds_unknown_without_run_times(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "none.swf"
    path.write_text("; MaxProcs: 10\n1 0 0 -1 2 -1 -1 2 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n")
    text, js = _info(capsys, path)
    assert "processor_seconds: unknown" in text
    assert "offered_load: unknown" in text
    assert js["processor_seconds"] is None and js["processor_seconds_jobs"] == 0


def test_info_full_processor_seconds_has_no_note(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "full.swf"
    path.write_text(
        "; MaxProcs: 10\n"
        "1 0 0 100 2 -1 -1 2 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n"
        "2 10 0 50 4 -1 -1 4 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n"
    )
    text, _ = _info(capsys, path)
    assert "processor_seconds: 400\n" in text
